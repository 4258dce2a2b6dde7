#!/usr/bin/env python3
"""Fits the Hopper GQA decode-attention row's streaming rate (sim/perf/backend.c)
to aiconfigurator's H100 table of vLLM 0.14.0's own decode attention.

    git show HEAD:aic-core/src/aiconfigurator_core/systems/data/h100_sxm/attention/vllm/0.14.0/generation_attention_perf.parquet > gen.parquet
    node scripts/fits/aic-dump.mjs gen.parquet > gen.csv
    python3 scripts/fits/aic_decode.py gen.csv
    python3 scripts/fits/aic_decode.py gen.csv STREAM_GB_S SMS   # another GPU's table: a check

(STREAM_GB_S: the profile's stream_bandwidth_gb_s, or 0.90 of its datasheet where it has none.)

Model of one layer's call: fixed + unit * (sequences x KV heads) / SMs + KV bytes / (frac * stream),
the floor and unit cost held at the row's (PR #63, onnxruntime PR #21414). Points: bf16 KV, serving
shape (>= 255 tokens of context, >= 256 units, >= 100 MB: past twice the 50 MB L2, which holds the
table's smaller caches from one call to the next)."""
import csv, math, sys

FIXED, UNIT = 13.7e-6, 0.933e-6
STREAM = float(sys.argv[2]) * 1e9 if len(sys.argv) > 2 else 3.1e12
SMS = int(sys.argv[3]) if len(sys.argv) > 3 else 132

def points(path, mha):
    for r in csv.DictReader(open(path)):
        if r['kv_cache_dtype'] != 'bfloat16' or int(r['head_dim']) != 128:
            continue
        b, h, kv, ctx = (int(r[k]) for k in ('batch_size', 'num_heads', 'num_key_value_heads', 'step'))
        by = b * (ctx + 1) * kv * 128 * 2 * 2
        if (h == kv) == mha and b * kv >= 256 and ctx >= 255 and by >= 100e6:
            yield b * kv, by, float(r['latency']) * 1e-3, (b, h, kv, ctx)

def rms(pts, frac, unit):
    e = [math.log((FIXED + unit * u / SMS + by / (frac * STREAM)) / t) for u, by, t, _ in pts]
    return math.sqrt(sum(x * x for x in e) / len(e)), min(e), max(e)

# (the MHA row has no unit term: its fit at 16 sequences x 32 heads left none to see)
# (rows at their Hopper fractions: GQA 0.985, MHA 1.0; off Hopper the rows are 0.887 and 0.95)
for name, mha, current, unit in (('GQA', False, 0.985 if SMS == 132 else 0.887, UNIT),
                                 ('MHA', True, 1.0 if SMS == 132 else 0.95, 0 if SMS == 132 else UNIT)):
    pts = list(points(sys.argv[1], mha))
    best = min((rms(pts, f / 1000, unit), f / 1000) for f in range(700, 1100))
    print(f"{name}: {len(pts)} points; best frac {best[1]:.3f} (rms {best[0][0]:.3f}, log residuals "
          f"{best[0][1]:+.3f}..{best[0][2]:+.3f}); at {current}: rms {rms(pts, current, unit)[0]:.3f}")
