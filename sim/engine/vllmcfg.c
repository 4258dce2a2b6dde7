#include "vllmcfg.h"

#include <stdio.h>
#include <string.h>

#include "apiserver.h"
#include "specdec.h"

#define F(field) offsetof(struct vllm_config, field)

static const char *const policy_names[] = { "fcfs", "priority", NULL };

const struct inidoc_key vllmcfg_keys[] = {
	{ "engine", "kv_offload_gib", INI_DOUBLE, F(kv_offload_gib), 0, 0, 1e6, "GiB of host memory >= 0", NULL },
	/* vLLM's timing (issue 18): the version picks the defaults (vllmver.c). */
	{ "engine", "vllm_version", INI_STRING, F(vllm_version), 0, 0, 0, "a vLLM version 0.MINOR[.PATCH], >= 0.5",
	  NULL },
	{ "engine", "async_scheduling", INI_BOOL, F(async_scheduling), 0, 0, 0, "true or false", NULL },
	{ "engine", "overhead_profile", INI_STRING, F(overhead_profile), 0, 0, 0,
	  "an overhead profile name (sim/perf/overhead.c)", NULL },
	{ "engine", "enforce_eager", INI_BOOL, F(enforce_eager), 0, 0, 0, "true or false", NULL },
	{ "engine", "max_num_partial_prefills", INI_INT, F(max_num_partial_prefills), 0, 1, 1e6,
	  "an integer >= 1", NULL },
	{ "engine", "scheduling_policy", INI_ENUM, F(scheduling_policy), 0, 0, 0, "fcfs or priority",
	  policy_names },
	{ "engine", "stream_interval", INI_INT, F(stream_interval), 0, 1, 1e6, "a token count >= 1", NULL },
	{ "engine", "api_server_count", INI_INT, F(api_server_count), 0, 1, APISERVER_MAX,
	  "a process count in [1, 64]", NULL },
	/* vLLM's --speculative-config; checked against engine/specdec.c's table. */
	{ "engine", "speculative_method", INI_STRING, F(speculative_method), 0, 0, 0, "a method name", NULL },
	{ "engine", "speculative_model", INI_STRING, F(speculative_model), 0, 0, 0,
	  "a model id, Hugging Face id or path", NULL },
	{ "engine", "num_speculative_tokens", INI_INT, F(num_speculative_tokens), 0, 1, SPECDEC_MAX_TOKENS,
	  "a token count in [1, 16]", NULL },
	{ "engine", "speculative_acceptance", INI_STRING, F(speculative_acceptance), 0, 0, 0,
	  "a probability, or one per position", NULL },
	/* Checked against the target's tensor parallelism by specdec_init. */
	{ "engine", "draft_tensor_parallel_size", INI_INT, F(draft_tensor_parallel_size), 0, 1, 1024,
	  "a GPU count >= 1", NULL },
	{ NULL, NULL, INI_INT, 0, 0, 0, 0, NULL, NULL },
};

void vllmcfg_default(struct vllm_config *c)
{
	memset(c, 0, sizeof *c);
	c->max_num_partial_prefills = 1;    /* vllm serve --max-num-partial-prefills */
	c->stream_interval = 1;             /* --stream-interval */
	c->api_server_count = 1;            /* --api-server-count */
	/* No component measurement sets a default acceptance: it depends on
	 * the drafter and the text. 0.7 per token is a stated assumption. */
	snprintf(c->speculative_acceptance, sizeof c->speculative_acceptance, "0.7");
}

void vllmcfg_locate(struct vllm_config *c,
		    void (*at)(const void *ctx, const char *key, char *out, size_t cap),
		    const void *ctx)
{
	at(ctx, "overhead_profile", c->overhead_profile_at, sizeof c->overhead_profile_at);
	at(ctx, "async_scheduling", c->async_scheduling_at, sizeof c->async_scheduling_at);
}
