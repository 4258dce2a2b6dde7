/*
 * ollama: what Ollama adds to the llama.cpp server it runs (llamaserver.c):
 * its defaults (num_ctx by VRAM, one slot, 512-token batches), prompt
 * truncation, context shift, and its scheduler: cold loads and the bounded
 * pending queue.
 *
 * Cold loads (Ollama): the model is loaded by the first request and again
 * after it sat idle keep_alive seconds (server/sched.go; OLLAMA_KEEP_ALIVE
 * 5m), at load_bandwidth_gb_s; the waiting requests see it as
 * load_duration and in TTFT.
 *
 * Ollama's bounded queue: GetRunner() puts a request into the scheduler's
 * pendingReqCh, buffered to OLLAMA_MAX_QUEUE (512), and answers HTTP 503
 * "server busy, please try again.  maximum pending requests exceeded" when it
 * is full. A loaded model takes requests out at once: they then wait on the
 * runner's num_parallel semaphore, which has no bound (ollama/ollama#7758,
 * maintainer's comment of 2024-11-21, reproduced on main in 2026). The
 * channel therefore fills only while the scheduler waits on a load; here up
 * to max_queue requests wait for a load besides the one that started it,
 * and the next ones fail with the 503.
 */
#include <math.h>
#include <stddef.h>

#include "llamacpp_int.h"

/* Ollama: api/types.go DefaultOptions (NumBatch 512, NumKeep 4), passed as
 * -b and -ub; OLLAMA_NUM_PARALLEL 1 since v0.10.0 (#11330). */
const struct flavor ollama_flavor = { "ollama", true, true, true, 512, 512, 1, false };

/* Ollama's default num_ctx: 2048 up to v0.5, OLLAMA_CONTEXT_LENGTH 4096
 * from v0.6 to v0.15.x, and since v0.15.5 by VRAM (>= 47 GiB: 262144,
 * >= 23 GiB: 32768, else 4096); always capped at the training context. */
int64_t ollama_default_ctx(const struct hw_profile *hw, double gpu_bytes, int64_t train)
{
	double gib = gpu_bytes / GIB;
	int64_t c = hw->hw_class == HW_CPU ? 4096 : gib >= 47 ? 262144 : gib >= 23 ? 32768 : 4096;
	return train > 0 ? min64(c, train) : c;
}

int ollama_truncate(struct engine *g, size_t idx, int64_t now, int64_t *n)
{
	/* ollama llm/llama_server.go completionPromptForRequest: keep
	 * num_keep tokens and the end, leaving about half the context for
	 * the answer; with truncate = false the prompt goes as is and
	 * llama-server refuses it. The older Go runners
	 * (runner/ollamarunner NewSequence) cut to exactly num_ctx. */
	if (!g->truncate) {
		engine_fail(&g->setup, idx, now, "the input length exceeds the context length (truncate = false)");
		return -1;
	}
	*n = g->n_ctx - max64((g->n_ctx - g->n_keep) / 2, 1);
	g->st.truncated_prompts++;
	return 0;
}

int ollama_schedule(struct engine *g, size_t idx, int64_t now)
{
	struct request *r = req(g, idx);
	if (g->model == MODEL_LOADED && llama_busy_slots(g) == 0 && llama_queue_waiting(g) == 0 &&
	    now - g->idle_since_ns >= g->keep_alive_ns) {
		g->model = MODEL_UNLOADED;          /* keep_alive expired while idle */
		for (int64_t i = 0; i < g->n_parallel; i++)
			g->slots[i].has_cache = false;
	}
	if (g->model == MODEL_UNLOADED) {
		g->model = MODEL_LOADING;
		g->load_end_ns = now + g->load_ns;
		g->st.model_loads++;
	} else if (g->model == MODEL_LOADING) {
		if (g->n_pending >= g->max_queue) {
			g->st.rejected++;
			engine_fail(&g->setup, idx, now, "server busy, please try again.  maximum pending requests exceeded");
			return -1;
		}
		g->n_pending++;
	}
	if (g->model == MODEL_LOADING)
		r->load_ns = g->load_end_ns - now;
	return 0;
}

static struct engine *ollama_create(const struct engine_setup *setup, struct err *e)
{
	return llama_create(setup, &ollama_flavor, e);
}

static int ollama_step_model(const struct engine_setup *setup, struct step_model *sm, struct err *e)
{
	return llama_step_model(setup, &ollama_flavor, sm, e);
}

const struct engine_class ollama_engine_class = {
	.name = "ollama",
	.backend = "ollama",
	.title = "Ollama",
	.loads_on_demand = true,
	.default_weights = "q4_k_m",   /* Ollama's library tags */
	.create = ollama_create,
	.step_model = ollama_step_model,
	LLAMA_CLASS_COMMON,
};

