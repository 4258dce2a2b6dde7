/*
 * kvlink: the KV-transfer link rows.
 */
#include "kvlink.h"

#include "rowtab.h"

/* Latencies: no component measurement of a NIXL/UCX KV pull sets them;
 * they are the order of one RDMA (or TCP) round trip plus the connector's
 * setup, and small beside the serialisation of megabytes of KV. */
const struct kvlink kvlink_table[] = {
	{ "nvlink", KVLINK_DEVICE_IC, 0, 5,
	  "the device profile's [interconnect] bandwidth per direction (H100: 450 GB/s, NVLink4 datasheet)" },
	{ "nvswitch", KVLINK_DEVICE_IC, 0, 8,
	  "the device profile's NVLink rate: an NVSwitch fabric carries each GPU's NVLink bandwidth" },
	{ "infiniband", KVLINK_TABLE, 400, 10, "NDR InfiniBand 400 Gb/s per port (ConnectX-7 datasheet)" },
	{ "roce", KVLINK_TABLE, 400, 15, "400 GbE RoCE v2 per port (ConnectX-7 datasheet)" },
	{ "pcie", KVLINK_DEVICE_HOST, 0, 10,
	  "the device profile's host link per direction (H100 SXM: PCIe 5.0 x16, 64 GB/s)" },
	{ "tcp", KVLINK_TABLE, 100, 50,
	  "100 GbE line rate; TCP's copies and congestion control reach less (no measurement applied)" },
	{ NULL, 0, 0, 0, NULL },
};

const struct kvlink *kvlink_find(const char *name)
{
	return rowtab_find(kvlink_table, sizeof *kvlink_table, name);
}

void kvlink_list(char *buf, size_t cap)
{
	rowtab_list(kvlink_table, sizeof *kvlink_table, buf, cap);
}

double kvlink_bytes_per_s(const struct kvlink *l, const struct hw_profile *hw)
{
	switch (l->from) {
	case KVLINK_DEVICE_IC:
		return hw->ic_bandwidth_gb_s * 1e9;
	case KVLINK_DEVICE_HOST:
		return hw->host_bandwidth_gb_s * 1e9;
	default:
		return l->gbit_s * 1e9 / 8;
	}
}
