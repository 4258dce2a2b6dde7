#!/usr/bin/env python3
"""servesim's dense-matmul row against aiconfigurator's table of vLLM's own GEMMs on one GPU: for each of
a dozen models' per-GPU layer shapes (QKV, O, gate-up merged, down) and each of the table's M, the
table's time summed over the layers beside `servesim explain --batch prefill:M@0`'s "dense matmuls".

    node scripts/fits/aic-dump.mjs .../l40s/gemm/vllm/0.14.0/gemm_perf.parquet > l40s.csv
    python3 scripts/fits/aic_gemm_check.py l40s.csv l40s build/sim/servesim [fp8]

(fp8: the table's per-tensor FP8 rows against `--weights fp8`.)

Prints servesim / table - 1 by M, and the mean over M >= 1024 (the compute plateau) by model."""
import subprocess, sys
from collections import defaultdict

from aic_gemm_table import GemmTable, layer_shapes

path, hardware, servesim = sys.argv[1], sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else 'build/sim/servesim'
dtype = sys.argv[4] if len(sys.argv) > 4 else 'bfloat16'
# servesim model, tp, and the HF config's hidden, heads, KV heads, head dim, intermediate, layers
MODELS = [("llama-3.2-1b", 1, 2048, 32, 8, 64, 8192, 16), ("llama-3.2-3b", 1, 3072, 24, 8, 128, 8192, 28),
          ("llama-3.1-8b", 1, 4096, 32, 8, 128, 14336, 32), ("llama-3.1-8b", 2, 4096, 32, 8, 128, 14336, 32),
          ("llama-2-7b", 1, 4096, 32, 32, 128, 11008, 32), ("mistral-7b-v0.3", 1, 4096, 32, 8, 128, 14336, 32),
          ("qwen2.5-7b", 1, 3584, 28, 4, 128, 18944, 28), ("gemma-2-9b", 1, 3584, 16, 8, 256, 14336, 42),
          ("mistral-nemo-12b", 1, 5120, 32, 8, 128, 14336, 40), ("yi-34b", 2, 7168, 56, 8, 128, 20480, 60),
          ("llama-3.1-70b", 4, 8192, 64, 8, 128, 28672, 80), ("qwen2.5-72b", 4, 8192, 64, 8, 128, 29568, 80)]

TABLE = GemmTable(path, dtype)
MS, clean = TABLE.ms, TABLE.clean

def servesim_dense_s(model, tp, m):
    out = subprocess.run([servesim, 'explain', '--batch', f'prefill:{m}@0', '--model', model, '--hardware', hardware,
                          '--tp', str(tp)] + (['--weights', 'fp8'] if dtype == 'fp8' else []),
                         capture_output=True, text=True, check=True).stdout
    line = next(l for l in out.splitlines() if l.startswith('dense matmuls'))
    return float(line.split()[4]) * 1e-3

by_m, plateau = defaultdict(list), {}
for model, tp, d, H, KV, hd, ff, L in MODELS:
    shapes = layer_shapes(d, H, KV, hd, ff, tp)
    rs = []
    for m in MS:
        table = L * sum(clean(m, n, k) for n, k in shapes)
        r = servesim_dense_s(model, tp, m) / table - 1
        by_m[m].append(r)
        rs.append((m, r))
    big = [r for m, r in rs if m >= 1024]
    plateau[f"{model} tp{tp}"] = sum(big) / len(big)
print(f"{hardware} {dtype}: servesim / table - 1, mean over {len(MODELS)} models, by M")
print(' '.join(f"{m}:{sum(v) / len(v):+.3f}" for m, v in sorted(by_m.items())))
print("M >= 1024 by model:", ' '.join(f"{k} {v:+.3f}" for k, v in plateau.items()))
