#include "vllmcfg.h"

#include <stdio.h>
#include <string.h>

#include "apiserver.h"
#include "engine.h"
#include "overhead.h"
#include "sampling.h"
#include "specdec.h"
#include "vllmver.h"

#define F(field) offsetof(struct vllm_config, field)

static const char *const policy_names[] = { "fcfs", "priority", NULL };
static const char *const genconfig_names[] = { "auto", "vllm", NULL };

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
	/* vLLM serve --generation-config (a folder path is not read). */
	{ "engine", "generation_config", INI_ENUM, F(generation_config), 0, 0, 0, "auto or vllm",
	  genconfig_names },
	/* The sampling parameters `vllm bench serve` sends (--temperature,
	 * --top-p, --top-k): they pick the sampler's path (perf/sampling.h). */
	{ "workload", "temperature", INI_DOUBLE, F(temperature), 0, 0, 1e6, "a temperature >= 0 (0 = greedy)",
	  NULL },
	{ "workload", "top_p", INI_DOUBLE, F(top_p), INI_MIN_EXCLUSIVE, 0, 1, "a probability in (0, 1]", NULL },
	{ "workload", "top_k", INI_INT, F(top_k), 0, -1, 1e9, "a token count >= 1, or 0 or -1 (off)", NULL },
	{ "workload", "min_p", INI_DOUBLE, F(min_p), 0, 0, 1, "a probability in [0, 1] (0 = off)", NULL },
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
	c->temperature = c->top_p = SAMPLING_NOT_SENT;   /* vllm bench serve sends none */
	c->top_k = SAMPLING_NOT_SENT;
	c->min_p = SAMPLING_NOT_SENT;
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

/* --speculative-config: a known method, its drafter, k, the acceptance.
 * A pool that sets none of its keys runs [engine]'s, checked there. */
static int check_speculative(const struct engine_config *c, const struct engine_keys_view *k, struct err *e)
{
	const struct vllm_config *v = &c->vllm;
	char at[INI_VALUE_MAX + 32];
	bool any = false;
	static const char *const spec_keys[] = { "speculative_model", "num_speculative_tokens",
						 "speculative_acceptance", "draft_tensor_parallel_size" };
	for (size_t i = 0; i < sizeof spec_keys / sizeof *spec_keys; i++)
		any |= k->at(k->ctx, spec_keys[i], at, sizeof at);
	bool method = k->at(k->ctx, "speculative_method", at, sizeof at);
	if (k->inherits && !any && !method)
		return 0;
	if (!v->speculative_method[0]) {
		if (any)
			return err_set(e, "%s: [%s] speculative_method: missing; expected one with the other speculative keys",
				       k->path, k->section);
		return 0;
	}
	const struct specdec_method *m = specdec_find(v->speculative_method);
	if (!m) {
		char names[128];
		specdec_list(names, sizeof names);
		return err_set(e, "%s: [%s] speculative_method: expected one of %s, got '%s'", at, k->section, names,
			       v->speculative_method);
	}
	if (c->cls->family != ENGINE_FAMILY_VLLM)
		return err_set(e, "%s: [%s] speculative_method: speculative decoding is modelled for kind vllm only",
			       at, k->section);
	if (m->needs_model && !v->speculative_model[0])
		return err_set(e, "%s: [%s] speculative_model: missing; expected the drafter's model for speculative_method %s",
			       at, k->section, m->name);
	char k_at[INI_VALUE_MAX + 32];
	if (!k->at(k->ctx, "num_speculative_tokens", k_at, sizeof k_at) && !k->inherits)
		return err_set(e, "%s: [%s] num_speculative_tokens: missing; expected a token count in [1, 16] (vLLM requires it)",
			       at, k->section);
	if (k->at(k->ctx, "draft_tensor_parallel_size", at, sizeof at) &&
	    specdec_check_draft_tp(m, c->tensor_parallel_size, v->draft_tensor_parallel_size, at, k->section, e))
		return -1;
	double p[SPECDEC_MAX_TOKENS];
	k->at(k->ctx, "speculative_acceptance", at, sizeof at);
	if (specdec_parse_acceptance(v->speculative_acceptance, (int)v->num_speculative_tokens, p))
		return err_set(e, "%s: [%s] speculative_acceptance: expected a probability in [0, 1], or at most num_speculative_tokens of them, got '%s'",
			       at, k->section, v->speculative_acceptance);
	return 0;
}

int vllmcfg_check(struct engine_config *c, const struct engine_keys_view *k, struct err *e)
{
	struct vllm_config *v = &c->vllm;
	char at[INI_VALUE_MAX + 32];
	if (k->at(k->ctx, "vllm_version", at, sizeof at) && !vllmver_find(v->vllm_version))
		return err_set(e, "%s: [%s] vllm_version: expected a vLLM version 0.MINOR[.PATCH] at or after 0.5, got '%s'",
			       at, k->section, v->vllm_version);
	/* Checked here, where each pool's own place is known: at engine
	 * creation a [decode] value was named as [engine]'s. */
	if (k->at(k->ctx, "overhead_profile", at, sizeof at) && v->overhead_profile[0] &&
	    !overhead_profile_find(v->overhead_profile)) {
		char names[256];
		overhead_profile_names(names, sizeof names);
		return err_set(e, "%s: [%s] overhead_profile: expected one of %s, got '%s'", at, k->section, names,
			       v->overhead_profile);
	}
	if (check_speculative(c, k, e))
		return -1;
	if (k->at(k->ctx, "generation_config", at, sizeof at))
		v->generation_config_given = true;
	if (k->at(k->ctx, "async_scheduling", at, sizeof at)) {
		v->async_scheduling_given = true;
		snprintf(v->async_scheduling_at, sizeof v->async_scheduling_at, "%s", at);
	}
	return 0;
}
