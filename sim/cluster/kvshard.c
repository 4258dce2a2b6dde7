/*
 * kvshard: KV re-sharding between a prefill and a decode pool.
 */
#include "kvshard.h"

#include <stdio.h>

int kvshard_check(const struct model *m, int pre_tp, int dec_tp, char *why, size_t cap)
{
	int big = pre_tp > dec_tp ? pre_tp : dec_tp, small = pre_tp > dec_tp ? dec_tp : pre_tp;
	if (big % small) {
		snprintf(
			why, cap,
			"the larger tensor parallelism (%d) must be a multiple of the smaller (%d)",
			big, small);
		return -1;
	}
	if (!m->mla && pre_tp > dec_tp && pre_tp > m->n_kv_heads) {
		snprintf(why, cap,
			 "a prefill pool with more ranks (%d) than KV heads (%lld) replicates them "
			 "and cannot feed a decode pool with fewer ranks (%d)",
			 pre_tp, (long long)m->n_kv_heads, dec_tp);
		return -1;
	}
	return 0;
}

double kvshard_bytes_per_token(const struct model *m, double elem, int pre_tp, int dec_tp)
{
	double ingress = model_kv_bytes_per_token_per_rank(m, elem, dec_tp);
	double egress = model_kv_bytes_per_token_per_rank(m, elem, pre_tp);
	if (dec_tp > pre_tp) {
		/* dec_tp / pre_tp decode ranks read from each prefill rank, each
		 * its own shard (a replicated head, or MLA's whole latent, more
		 * than once). */
		double readers = (double)(dec_tp / pre_tp) * ingress;
		egress = readers > egress ? readers : egress;
	}
	return egress > ingress ? egress : ingress;
}
