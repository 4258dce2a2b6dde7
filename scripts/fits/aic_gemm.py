#!/usr/bin/env python3
"""Checks the Hopper BF16 dense-GEMM row (sim/perf/backend.c) against aiconfigurator's H100 table of
vLLM 0.14.0's own GEMMs, summed over 16 models' per-layer shapes, and fits a ridge blend.

    git show HEAD:aic-core/src/aiconfigurator_core/systems/data/h100_sxm/gemm/vllm/0.14.0/gemm_perf.parquet > gemm.parquet
    node scripts/fits/aic-dump.mjs gemm.parquet > gemm.csv
    python3 scripts/fits/aic_gemm.py gemm.csv

Row: max(tc, tm) with tc = FLOPs / (peak * 0.82 * rows padded to 64), tm = kernels x 3.25 us +
weight bytes at 3136 GB/s (the profile's mat-vec curve); the blend (tc^p + tm^p)^(1/p)."""
import math, sys
from collections import defaultdict

from aic_gemm_table import GemmTable, layer_shapes

PEAK = 989.4e12 * 1755 / 1830          # BF16 dense at the sustained clock (h100-sxm.ini)
FLOOR, BW = 3.25e-6, 3136e9            # [arch] gemv_floor_us, gemv_bandwidth_gb_s
CFG = [("llama-3.2-1b", 2048, 32, 8, 64, 8192, 16, 1), ("llama-3.2-3b", 3072, 24, 8, 128, 8192, 28, 1),
       ("llama-3.1-8b", 4096, 32, 8, 128, 14336, 32, 1), ("llama-3.1-8b tp2", 4096, 32, 8, 128, 14336, 32, 2),
       ("llama-3.1-70b tp2", 8192, 64, 8, 128, 28672, 80, 2), ("llama-3.1-70b tp4", 8192, 64, 8, 128, 28672, 80, 4),
       ("llama-3.1-70b tp8", 8192, 64, 8, 128, 28672, 80, 8), ("llama-2-7b", 4096, 32, 32, 128, 11008, 32, 1),
       ("mistral-7b", 4096, 32, 8, 128, 14336, 32, 1), ("qwen2.5-7b", 3584, 28, 4, 128, 18944, 28, 1),
       ("qwen2.5-72b tp4", 8192, 64, 8, 128, 29568, 80, 4), ("qwen2.5-72b tp8", 8192, 64, 8, 128, 29568, 80, 8),
       ("gemma-2-9b", 3584, 16, 8, 256, 14336, 42, 1), ("mistral-nemo tp1", 5120, 32, 8, 128, 14336, 40, 1),
       ("mistral-nemo tp2", 5120, 32, 8, 128, 14336, 40, 2), ("yi-34b tp2", 7168, 56, 8, 128, 20480, 60, 2)]

TABLE = GemmTable(sys.argv[1])
MS, clean = TABLE.ms, TABLE.clean

pts = []
for name, d, H, KV, hd, ff, L, tp in CFG:
    shapes = layer_shapes(d, H, KV, hd, ff, tp)
    for m in MS:
        pts.append((name, m, L * sum(clean(m, n, k) for n, k in shapes), L * sum(2 * m * n * k for n, k in shapes),
                    L * sum(2 * n * k for n, k in shapes), 4 * L))

def row(m, fl, by, kern, cf, p):
    tc, tm = fl / (PEAK * cf * m / (math.ceil(m / 64) * 64)), kern * FLOOR + by / BW
    return max(tc, tm) if p is None else (tc ** p + tm ** p) ** (1 / p)

def rms(cf, p, sel=lambda m: True):
    e = [math.log(row(m, fl, by, kn, cf, p) / t) for _, m, t, fl, by, kn in pts if sel(m)]
    return math.sqrt(sum(x * x for x in e) / len(e))

print(f"{len(pts)} points; the row (0.82, max): rms log {rms(0.82, None):.3f}, M 96-1024 {rms(0.82, None, lambda m: 96 <= m <= 1024):.3f}")
for p in (2, 2.3, 2.5, 3):
    print(f"  0.82, p {p}: rms log {rms(0.82, p):.3f}, M 96-1024 {rms(0.82, p, lambda m: 96 <= m <= 1024):.3f}")
by_m = defaultdict(list)
for _, m, t, fl, by, kn in pts:
    by_m[m].append(row(m, fl, by, kn, 0.82, None) / t - 1)
print("row / table - 1 by M:", ' '.join(f"{m}:{sum(v) / len(v):+.3f}" for m, v in sorted(by_m.items())))
