#!/usr/bin/env python3
"""Fits a profile's mat-vec curve ([arch] gemv_floor_us, gemv_bandwidth_gb_s: a floor a kernel + weight bytes at
a slope) to aiconfigurator's table of vLLM's own BF16 GEMMs at M = 1 (cuBLAS, timed in a CUDA graph over six
copies of the weights, so every read is cold past the L2).

    node scripts/fits/aic-dump.mjs .../a100_sxm/gemm/vllm/0.14.0/gemm_perf.parquet > a100.csv
    python3 scripts/fits/aic_gemv.py a100.csv MIN_MB

MIN_MB: the smallest weight matrix taken, so that six copies are well past the L2 (A100 40 MB: 32; L40S 96 MB: 64;
H100 50 MB: 32). Least squares on time; prints the residuals' worst share and the points."""
import csv, sys

path, min_mb = sys.argv[1], float(sys.argv[2])
pts = []
for r in csv.DictReader(open(path)):
    if r['gemm_dtype'] == 'bfloat16' and int(r['m']) == 1:
        n, k = int(r['n']), int(r['k'])
        by = 2.0 * n * k
        if by >= min_mb * 1e6 and n >= 1024 and k >= 1024:
            pts.append((by, float(r['latency']) * 1e-3, n, k))
n = len(pts)
sx = sum(b for b, *_ in pts); sy = sum(t for _, t, *_ in pts)
sxx = sum(b * b for b, *_ in pts); sxy = sum(b * t for b, t, *_ in pts)
slope = (n * sxy - sx * sy) / (n * sxx - sx * sx)
floor = (sy - slope * sx) / n
res = [(floor + slope * b) / t - 1 for b, t, *_ in pts]
print(f"{n} points >= {min_mb:.0f} MB: {floor * 1e6:.2f} us + bytes at {1 / slope / 1e9:.0f} GB/s; "
      f"residuals {min(res):+.3f}..{max(res):+.3f}, rms {(sum(x * x for x in res) / n) ** 0.5:.3f}")
