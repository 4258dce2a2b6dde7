#include "llamacfg.h"

#include <float.h>
#include <stdio.h>
#include <string.h>

#define F(field) offsetof(struct llama_config, field)

const struct inidoc_key llamacfg_keys[] = {
	{ "engine", "num_parallel", INI_INT, F(num_parallel), 0, 1, 1e6, "a slot count >= 1", NULL },
	{ "engine", "num_ctx", INI_INT, F(num_ctx), 0, 2, 1e9, "tokens per slot, >= 2", NULL },
	{ "engine", "max_queue", INI_INT, F(max_queue), 0, 1, 1e9, "a request count >= 1", NULL },
	{ "engine", "n_batch", INI_INT, F(n_batch), 0, 1, 1e8, "a token count >= 1", NULL },
	{ "engine", "n_ubatch", INI_INT, F(n_ubatch), 0, 1, 1e8, "a token count >= 1", NULL },
	{ "engine", "keep_alive_s", INI_DOUBLE, F(keep_alive_s), INI_ALLOW_INF, 0, DBL_MAX,
	  "seconds >= 0, or inf (never unload)", NULL },
	{ "engine", "load_bandwidth_gb_s", INI_DOUBLE, F(load_bandwidth_gb_s), INI_MIN_EXCLUSIVE | INI_ALLOW_INF,
	  0, 1e6, "GB/s > 0, or inf (loaded before the run)", NULL },
	{ "engine", "num_gpu", INI_INT, F(num_gpu), 0, 0, 1e6, "a layer count >= 0", NULL },
	{ "engine", "cpu_hardware", INI_STRING, F(cpu_hardware), 0, 0, 0, "a CPU hardware id or path", NULL },
	{ "engine", "cache_prompt", INI_BOOL, F(cache_prompt), 0, 0, 0, "true or false", NULL },
	{ "engine", "truncate", INI_BOOL, F(truncate), 0, 0, 0, "true or false", NULL },
	{ NULL, NULL, INI_INT, 0, 0, 0, 0, NULL, NULL },
};

void llamacfg_default(struct llama_config *c)
{
	memset(c, 0, sizeof *c);
	c->num_parallel = -1;
	c->num_ctx = -1;
	c->max_queue = 512;                 /* OLLAMA_MAX_QUEUE (envconfig) */
	c->n_batch = -1;
	c->n_ubatch = -1;
	c->keep_alive_s = 300;              /* OLLAMA_KEEP_ALIVE 5m */
	c->load_bandwidth_gb_s = 2.0;       /* estimate: NVMe read and copy to the device */
	c->num_gpu = -1;
	snprintf(c->cpu_hardware, sizeof c->cpu_hardware, "cpu-ddr5-5600");
	c->cache_prompt = true;             /* llama-server and Ollama send cache_prompt */
	c->truncate = true;                 /* Ollama: req.Truncate == nil means true */
}

void llamacfg_locate(struct llama_config *c,
		     void (*at)(const void *ctx, const char *key, char *out, size_t cap),
		     const void *ctx)
{
	at(ctx, "num_ctx", c->num_ctx_at, sizeof c->num_ctx_at);
	at(ctx, "num_gpu", c->num_gpu_at, sizeof c->num_gpu_at);
	at(ctx, "cpu_hardware", c->cpu_hardware_at, sizeof c->cpu_hardware_at);
}
