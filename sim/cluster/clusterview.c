/*
 * clusterview: what a cluster reports once it has run or while it runs,
 * read-only: its size, each replica's gauges, stats, hardware, role,
 * routed requests and peak queue, the P/D KV figures, and the engine
 * stats summed over the replicas (peak KV usage the largest). The event
 * loop's hot view, cluster_waiting, stays in cluster.c.
 */
#include "cluster_int.h"

int cluster_size(const struct cluster *c)
{
	return c->n;
}

void cluster_gauges(const struct cluster *c, struct engine_gauges *out)
{
	c->rep[0].cls->gauges(c->rep[0].eng, out);
	if (c->n == 1)
		return;
	double kv = out->kv_usage;
	for (int i = 1; i < c->n; i++) {
		struct engine_gauges g;
		c->rep[i].cls->gauges(c->rep[i].eng, &g);
		out->running += g.running;
		out->waiting += g.waiting;
		kv += g.kv_usage;
		if (i == c->last_stepped)
			out->step_tokens = g.step_tokens;
	}
	out->kv_usage = kv / c->n;
}

void cluster_replica_gauges(const struct cluster *c, int i, struct engine_gauges *out)
{
	c->rep[i].cls->gauges(c->rep[i].eng, out);
}

void cluster_replica_stats(const struct cluster *c, int i, struct engine_stats *st)
{
	c->rep[i].cls->stats(c->rep[i].eng, st);
}

const char *cluster_replica_hardware(const struct cluster *c, int i, int64_t *tp)
{
	const struct engine_config *cfg = !c->n_prefill ? c->s.engine : &c->pool_cfg[i < c->n_prefill ? POOL_PREFILL : POOL_DECODE];
	*tp = cfg->tensor_parallel_size;
	return !c->n_prefill ? c->s.hw->id : c->pool_hw[i < c->n_prefill ? POOL_PREFILL : POOL_DECODE].id;
}

const char *cluster_replica_role(const struct cluster *c, int i)
{
	return !c->n_prefill ? "replica" : i < c->n_prefill ? "prefill" : "decode";
}

void cluster_kv_stats(const struct cluster *c, struct cluster_kv_stats *out)
{
	*out = c->kv;
}

int64_t cluster_replica_routed(const struct cluster *c, int i)
{
	return c->rep[i].routed;
}

int64_t cluster_replica_peak_waiting(const struct cluster *c, int i)
{
	return c->rep[i].peak_waiting;
}

void cluster_stats(const struct cluster *c, struct engine_stats *st)
{
	cluster_replica_stats(c, 0, st);
	for (int i = 1; i < c->n; i++) {
		struct engine_stats o;
		cluster_replica_stats(c, i, &o);
		if (o.peak_kv_usage > st->peak_kv_usage)
			st->peak_kv_usage = o.peak_kv_usage;
		st->preemptions += o.preemptions;
		st->prefix_queries += o.prefix_queries;
		st->prefix_hits += o.prefix_hits;
		st->prefix_cpu_hits += o.prefix_cpu_hits;
		st->steps += o.steps;
		st->busy_s += o.busy_s;
		st->graph_steps += o.graph_steps;
		st->eager_steps += o.eager_steps;
		st->padded_tokens += o.padded_tokens;
		st->ff_tokens += o.ff_tokens;
		for (int k = 0; k < FF_CUTS; k++) {
			st->ff_runs[k] += o.ff_runs[k];
			st->ff_run_passes[k] += o.ff_run_passes[k];
		}
		for (int k = 0; k < FF_LEN_BUCKETS; k++)
			st->ff_len_hist[k] += o.ff_len_hist[k];
		st->ff_syncs += o.ff_syncs;
		st->ff_sync_cut += o.ff_sync_cut;
		st->ff_sync_lost += o.ff_sync_lost;
		engine_time_add(&st->time, &o.time, 0, o.time.total);
		st->itl_weights_s += o.itl_weights_s;
		st->itl_kv_s += o.itl_kv_s;
		st->itl_overhead_s += o.itl_overhead_s;
		st->itl_pipeline_s += o.itl_pipeline_s;
		st->itl_prefill_s += o.itl_prefill_s;
		st->itl_tokens += o.itl_tokens;
		st->model_loads += o.model_loads;
		st->rejected += o.rejected;
		st->truncated_prompts += o.truncated_prompts;
		st->context_shifts += o.context_shifts;
		st->truncated_outputs += o.truncated_outputs;
		st->n_decode_total += o.n_decode_total;
		st->n_busy_slots_total += o.n_busy_slots_total;
	}
}
