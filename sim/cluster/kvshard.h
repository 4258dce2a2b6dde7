/*
 * kvshard: how a prompt's KV is re-sharded when the prefill pool and the
 * decode pool run different tensor parallelisms (vLLM's NixlConnector,
 * heterogeneous TP: kv_connector/utils.py TpKVTopology).
 *
 * Each decode rank reads what its own shard needs: with D ranks >= P
 * ranks, tp_ratio = D / P decode ranks read from one prefill rank, each
 * its slice of that rank's KV heads (get_target_remote_ranks: d // ratio);
 * with P > D, a decode rank reads from P / D prefill ranks. The larger
 * parallelism must be a multiple of the smaller (TpKVTopology.tp_ratio
 * asserts it), and a prefill side with more ranks than KV heads (each
 * rank a replica of one head) cannot feed a smaller decode side
 * (_validate_remote_agent_handshake: "KV replication with P_TP > D_TP
 * unsupported"). MLA's latent cannot be split: every rank holds all of
 * it, and each decode rank reads all of it from one prefill rank.
 *
 * Cost: a transfer keeps both ports of a rank pair busy for the bytes of
 * the busier one (kvlink.h): a prefill rank's egress carries what every
 * decode rank reading from it takes (more than its shard when those
 * ranks replicate heads, or read MLA's whole latent), a decode rank's
 * ingress its own shard. Not modelled: the more, smaller RDMA reads of a
 * split (tp_ratio descriptors per block), and the on-device permute of a
 * block-size mismatch.
 */
#ifndef SERVESIM_KVSHARD_H
#define SERVESIM_KVSHARD_H

#include <stddef.h>

#include "model.h"

/* Whether a prefill pool at pre_tp can ship its KV to a decode pool at
 * dec_tp. Returns 0, or -1 with why (a phrase) in why[cap]. */
int kvshard_check(const struct model *m, int pre_tp, int dec_tp, char *why, size_t cap);

/* The bytes per prompt token the busier port of a prefill/decode rank
 * pair carries (KV elements of elem bytes). Cannot fail (after
 * kvshard_check). */
double kvshard_bytes_per_token(const struct model *m, double elem, int pre_tp, int dec_tp);

#endif
