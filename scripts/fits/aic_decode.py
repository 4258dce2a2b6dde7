#!/usr/bin/env python3
"""Fits a vLLM decode-attention row's streaming rate (sim/perf/backend.c) to one of aiconfigurator's
generation-attention tables (vLLM's own decode kernel in a CUDA graph, one layer's call).

    git show HEAD:aic-core/src/aiconfigurator_core/systems/data/h100_sxm/attention/vllm/0.14.0/generation_attention_perf.parquet > gen.parquet
    node scripts/fits/aic-dump.mjs gen.parquet > gen.csv
    python3 scripts/fits/aic_decode.py gen.csv --at 0.985 --mha-unit-us 0 --mha-at 1.0     # the Hopper rows
    python3 scripts/fits/aic_decode.py a100.csv --stream 1835 --sms 108 --at 0.792 --mha-at 0.853   # Ampere
    python3 scripts/fits/aic_decode.py b200.csv --stream 6930 --sms 148 --min-mb 260 --unit-us 0 \\
        --mha-unit-us 0 --fit-floor 1.0                                                    # sm100

--stream: the profile's stream_bandwidth_gb_s, or 0.90 of its datasheet where it has none.

Model of one call: floor + unit * (sequences x KV heads) / SMs + KV bytes / (frac * stream), the floor and
unit cost held (PR #63's 13.7 us, onnxruntime PR #21414's 0.933 us) unless --fit-floor, which fits the
floor (1 us steps) with frac fixed. Points: bf16 KV, hd 128, serving shape: >= 255 tokens of context,
>= 256 units, >= --min-mb of K and V (twice the L2: the table reads one layer's cache call after call, so
smaller caches sit in L2). Prints, for GQA and MHA points, the best frac (0.001 steps) and the rms of log
time there and at --at / --mha-at."""
import argparse, csv, math

ap = argparse.ArgumentParser()
ap.add_argument('table')
ap.add_argument('--stream', type=float, default=3100, help='GB/s (default: the H100 SXM profile)')
ap.add_argument('--sms', type=int, default=132)
ap.add_argument('--min-mb', type=float, default=100)
ap.add_argument('--floor-us', type=float, default=13.7)
ap.add_argument('--unit-us', type=float, default=0.933, help='GQA rows')
ap.add_argument('--mha-unit-us', type=float, default=0.933, help='MHA rows (the Hopper MHA row has none)')
ap.add_argument('--at', type=float, default=0.887, help="the GQA row's frac to report")
ap.add_argument('--mha-at', type=float, default=0.95, help="the MHA row's frac to report")
ap.add_argument('--fit-floor', type=float, metavar='FRAC', help='fit the floor with frac fixed at FRAC')
a = ap.parse_args()
stream = a.stream * 1e9

def points(mha):
    """(units, bytes, seconds) of the GQA (mha False), MHA (True) or all (None) points."""
    for r in csv.DictReader(open(a.table)):
        if r['kv_cache_dtype'] != 'bfloat16' or int(r['head_dim']) != 128:
            continue
        b, h, kv, ctx = (int(r[k]) for k in ('batch_size', 'num_heads', 'num_key_value_heads', 'step'))
        by = b * (ctx + 1) * kv * 128 * 2 * 2
        if (mha is None or (h == kv) == mha) and b * kv >= 256 and ctx >= 255 and by >= a.min_mb * 1e6:
            yield b * kv, by, float(r['latency']) * 1e-3

def rms(pts, floor_us, unit_us, frac):
    e = [math.log(((floor_us + unit_us * u / a.sms) * 1e-6 + by / (frac * stream)) / t) for u, by, t in pts]
    return math.sqrt(sum(x * x for x in e) / len(e))

groups = [('GQA', False, a.unit_us, a.at), ('MHA', True, a.mha_unit_us, a.mha_at)]
if a.fit_floor is not None:   # one row for both (the sm100 row): the pooled fit too
    groups.append(('all', None, a.unit_us, a.at))
for name, mha, unit, at in groups:
    pts = list(points(mha))
    if a.fit_floor is not None:
        r, fl = min((rms(pts, f, unit, a.fit_floor), f) for f in range(0, 40))
        print(f"{name}: {len(pts)} points; at {a.fit_floor} of stream the best floor is {fl} us (rms {r:.3f})")
        continue
    r, fr = min((rms(pts, a.floor_us, unit, f / 1000), f / 1000) for f in range(600, 1200))
    print(f"{name}: {len(pts)} points; best frac {fr:.3f} (rms {r:.3f}); at {at}: rms "
          f"{rms(pts, a.floor_us, unit, at):.3f}")
