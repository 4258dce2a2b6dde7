/*
 * kvlink: the links a disaggregated cluster ships KV caches over, one row
 * each in a const table looked up by name ([cluster] kv_transfer).
 *
 * NVLink, NVSwitch and PCIe take their bandwidth (per direction) from the
 * prefill device's hardware profile; the network links carry their line
 * rate here, each with its source. [cluster] kv_transfer_gbit_s and
 * kv_transfer_latency_us override a row.
 *
 * A transfer is store-and-forward over two ports: the prefill replica's
 * egress and the decode replica's ingress, each busy for bytes / bandwidth,
 * one transfer after another (contention), and the data lands one latency
 * later. Each tensor-parallel rank sends its own shard over its own port
 * (one NIC per GPU, as on HGX nodes), so bytes are per rank.
 */
#ifndef SERVESIM_KVLINK_H
#define SERVESIM_KVLINK_H

#include <stddef.h>

#include "hwprofile.h"

enum kvlink_from { KVLINK_TABLE, KVLINK_DEVICE_IC, KVLINK_DEVICE_HOST };

struct kvlink {
	const char *name;
	int from;                 /* enum kvlink_from: where the bandwidth comes from */
	double gbit_s;            /* line rate per port and direction (KVLINK_TABLE) */
	double latency_us;        /* one transfer's fixed cost: setup and flight */
	const char *source;
};

extern const struct kvlink kvlink_table[];   /* NULL-name terminated */

/* The row called name, or NULL. */
const struct kvlink *kvlink_find(const char *name);

/* "nvlink, nvswitch, …" into buf. */
void kvlink_list(char *buf, size_t cap);

/* The row's bandwidth in bytes per second on device hw. */
double kvlink_bytes_per_s(const struct kvlink *l, const struct hw_profile *hw);

#endif
