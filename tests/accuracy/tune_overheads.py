#!/usr/bin/env python3
"""What a fit of vLLM's overhead remainders to the 15 runs would take
(issue 18, docs/engine-vllm.md). A diagnostic, not a source of defaults.

The engine-level overhead model (sim/perf/overhead.c) sets each component
from a measurement or a stated estimate; its three remainders,
request_overhead_ms (the request path's fixed part), step_overhead_us and
step_overhead_per_seq_us (per step, never hidden), are 0 there: the 15
real H100 runs of ../shared/calibration are checks, not fitting targets.
A hardware profile's [efficiency] may set them (`calibrate runs` fits them
to a user's own runs); this script shows how much of them the 15 runs
would ask for. Everything else (the step model's efficiencies) stays at
its default. Each evaluation is vllm_h100.py through tune_h100.evaluate.

  search  a coordinate search from the given start (default: the values in
          overhead.c) minimising (TTFT/10)^2 + (ITL/4.6)^2 + (E2E/4.5)^2 of
          the whole-run MAPEs (%), with a steep penalty past ITL 4.6 or E2E
          4.5 (servesim 1's figures, which must not get worse); ~25 s.
  loo     leave-one-out over a grid of the three: for each run, the grid
          point best on the other 14, measured on it; ~2 min.

Its result is not copied into overhead.c (the data discipline: components
from component measurements, end-to-end runs as checks).
usage: tune_overheads.py [SERVESIM] [search|loo]
"""
import itertools
import json
import os
import sys

import tune_h100 as T
from simrun import ROOT

FITTED = {"request_overhead_ms": 0, "step_overhead_us": 0, "step_overhead_per_seq_us": 0}   # overhead.c's
STEPS = {"request_overhead_ms": 3, "step_overhead_us": 300, "step_overhead_per_seq_us": 4}
LIMITS = {"request_overhead_ms": (0, 30), "step_overhead_us": (0, 5000), "step_overhead_per_seq_us": (0, 100)}
METRICS = ("ttft_mean", "itl_mean", "e2e_mean")


def score(m):
    r = (m["ttft_mean"] / 10, m["itl_mean"] / 4.6, m["e2e_mean"] / 4.5)
    return sum(x * x for x in r) + 100 * sum(max(0, x - 1) ** 2 for x in r[1:])


def profile(vals):
    eff = dict(T.START)
    eff.update(vals)
    return eff


def search(binary):
    best = dict(FITTED)
    _, m = T.evaluate(binary, profile(best))
    sc = score(m)
    print("start", best, {k: round(m[k], 2) for k in METRICS}, flush=True)
    steps = dict(STEPS)
    for _ in range(3):
        for k in best:
            for sign in (1, -1):
                while True:
                    c = dict(best)
                    lo, hi = LIMITS[k]
                    c[k] = min(hi, max(lo, best[k] + sign * steps[k]))
                    if c[k] == best[k]:
                        break
                    _, mm = T.evaluate(binary, profile(c))
                    if score(mm) >= sc:
                        break
                    best, sc, m = c, score(mm), mm
                    print(k, round(c[k], 3), {x: round(m[x], 2) for x in METRICS}, flush=True)
        steps = {k: v / 2 for k, v in steps.items()}
    print(json.dumps(best), {k: round(m[k], 2) for k in METRICS})


def loo(binary):
    grid = list(itertools.product([0, 1, 2, 4], [1000, 1150, 1275, 1400], [2, 5, 8]))
    errs = {}
    for g in grid:
        _, _, j = T.evaluate(binary, profile(dict(zip(FITTED, g))), per_run=True)
        errs[g] = {(r["experiment"], r["metric"]): abs(r["error_pct"])
                   for r in j["whole_run"] if r["metric"] in METRICS}
    exps = sorted({e for (e, _) in errs[grid[0]]})

    def mape(g, keep):
        return {k: sum(errs[g][(e, k)] for e in keep) / len(keep) for k in METRICS}

    held = {k: [] for k in METRICS}
    for e in exps:
        keep = [x for x in exps if x != e]
        g = min(grid, key=lambda p: score(mape(p, keep)))
        for k in METRICS:
            held[k].append(errs[g][(e, k)])
        print(e, dict(zip(FITTED, g)), {k: round(errs[g][(e, k)], 1) for k in METRICS}, flush=True)
    print("leave-one-out MAPE", {k: round(sum(v) / len(v), 2) for k, v in held.items()})


def main(argv):
    binary = os.path.abspath(argv[0]) if argv and argv[0] not in ("search", "loo") else \
        os.path.join(ROOT, "build", "sim", "servesim")
    (loo if "loo" in argv else search)(binary)


if __name__ == "__main__":
    main(sys.argv[1:])
