#!/usr/bin/env python3
"""servesim's routed-expert row against aiconfigurator's table of vLLM's own fused MoE on one GPU: for each
model in MODELS and each of the table's token counts, one MoE layer's call in the table (distribution
`balanced` or another, TP as given, no EP) beside `servesim explain --batch prefill:T@0`'s "MoE experts" row
over the model's MoE layers.

    node scripts/fits/aic-dump.mjs .../h100_sxm/moe/vllm/0.14.0/moe_perf.parquet > moe.csv
    python3 scripts/fits/aic_moe_check.py moe.csv h100-sxm build/sim/servesim [DISTRIBUTION]

Prints servesim / table - 1 by token count for each model."""
import csv, subprocess, sys

path, hardware = sys.argv[1], sys.argv[2]
servesim = sys.argv[3] if len(sys.argv) > 3 else 'build/sim/servesim'
dist = sys.argv[4] if len(sys.argv) > 4 else 'balanced'
# servesim model, extra explain options, tp, table key: dtype, hidden, inter, topk, experts; MoE layers
MODELS = [("mixtral-8x7b", [], 1, ("bfloat16", 4096, 14336, 2, 8), 32),
          ("mixtral-8x7b", [], 2, ("bfloat16", 4096, 14336, 2, 8), 32),
          ("qwen3-30b-a3b", [], 1, ("bfloat16", 2048, 768, 8, 128), 48),
          ("qwen3-30b-a3b", ["--weights", "fp8"], 1, ("fp8", 2048, 768, 8, 128), 48),
          ("deepseek-v3", [], 8, ("fp8_block", 7168, 2048, 8, 256), 58)]

T = {}
for r in csv.DictReader(open(path)):
    if r['distribution'] != dist or r['moe_ep_size'] != '1':
        continue
    key = (r['moe_dtype'], int(r['hidden_size']), int(r['inter_size']), int(r['topk']), int(r['num_experts']),
           int(r['moe_tp_size']), int(r['num_tokens']))
    T[key] = float(r['latency']) * 1e-3

def experts_s(model, extra, tp, tokens):
    out = subprocess.run([servesim, 'explain', '--batch', f'prefill:{tokens}@0', '--model', model, '--hardware',
                          hardware, '--tp', str(tp)] + extra, capture_output=True, text=True)
    if out.returncode:
        return None
    line = next((l for l in out.stdout.splitlines() if l.startswith('MoE experts')), None)
    return float(line.split()[4]) * 1e-3 if line else None

for model, extra, tp, key, layers in MODELS:
    toks = sorted(t for (*k, tpp, t) in T if tuple(k) == key and tpp == tp)
    if not toks:
        print(f"{model} tp{tp} {key[0]}: no table rows")
        continue
    cells = []
    for t in toks:
        s = experts_s(model, extra, tp, t)
        if s is None:
            continue
        table = T[key + (tp, t)]
        cells.append(f"{t}:{table * 1e6:.0f}us/{s / layers / table - 1:+.2f}")
    print(f"{model} tp{tp} {key[0]} ({dist}):", ' '.join(cells))
