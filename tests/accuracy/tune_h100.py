#!/usr/bin/env python3
"""How the datacenter-GPU efficiency defaults were chosen (issue 4).

Since issue 11 these are the device-class fallback row ("roofline, no
kernel data"): a profile with [arch] facts takes its kernel efficiencies
from the backend tables (sim/perf/backend.c); vLLM's engine-level
overheads are sim/perf/overhead.c's remainders, set by
`vllm_h100.py --cross-validate` (docs/accuracy.md). Writing every key
below into [efficiency], as this search does, overrides the backend rows,
so it tunes the scalar model.

A coordinate search over the [efficiency] keys of an H100 SXM profile
(and its interconnect.latency_us, a public estimate the TP runs pin down),
minimising the sum of squares of MAPE_ttft/15, MAPE_itl/8 and
MAPE_e2e/8 (each metric against its goal in issue 4), plus a steep
penalty on any ratio above 1 (a set that misses a goal loses to a set that
meets them all), over the 15 real runs of ../shared/calibration (vllm_h100.py does each evaluation). It
prints the best set; copying it into hw_default_efficiency() is a manual,
reviewed step. One set for every experiment: no per-run tuning.
low_precision_compute is not searched: only Llama-4-Scout is FP8 in these
runs; its default comes from TensorRT-LLM's FP8 table (trtllm_static.py).

usage: tune_h100.py [SERVESIM] [--rounds N]
"""
import json, os, re, subprocess, sys, tempfile

from simrun import ROOT

START = {"bandwidth": 0.87, "attention_bandwidth": 0.92, "attention_half_seqs": 16,
         "compute_max": 0.79, "compute_half_tokens": 24, "attention_compute": 0.49,
         "moe_efficiency": 0.84, "step_overhead_us": 1200, "step_overhead_per_seq_us": 8,
         "request_overhead_ms": 10, "latency_us": 3}
STEPS = {"bandwidth": 0.04, "attention_bandwidth": 0.08, "attention_half_seqs": 8,
         "compute_max": 0.06, "compute_half_tokens": 24, "attention_compute": 0.08,
         "moe_efficiency": 0.08, "step_overhead_us": 400, "step_overhead_per_seq_us": 4,
         "request_overhead_ms": 3, "latency_us": 2}
# Streaming kernels reach about 90% of HBM peak at best: the bandwidth
# fractions stop at 0.92 so the fit cannot buy accuracy with the impossible.
LIMITS = {"bandwidth": (0.3, 0.92), "attention_bandwidth": (0.2, 0.92), "attention_half_seqs": (0, 500),
          "compute_max": (0.2, 1), "compute_half_tokens": (0, 2000), "attention_compute": (0.1, 1),
          "moe_efficiency": (0.1, 1), "step_overhead_us": (0, 10000),
          "step_overhead_per_seq_us": (0, 200), "request_overhead_ms": (0, 100),
          "latency_us": (0, 50)}
PROFILE_KEYS = {"latency_us"}   # [interconnect], not [efficiency]


def evaluate(binary, eff, per_run=False):
    """The score and whole-run MAPEs of one parameter set (and, with
    per_run, vllm_h100.py's whole JSON summary as a third value)."""
    base = open(os.path.join(ROOT, "hardware_profiles", "h100-sxm.ini")).read()
    for k in PROFILE_KEYS & set(eff):
        base = re.sub(r"(?m)^%s = \S+" % k, "%s = %.6g" % (k, eff[k]), base)
    prof = base + "\n\n[efficiency]\n" + "".join(
        "%s = %.6g\n" % (k, v) for k, v in eff.items() if k not in PROFILE_KEYS)
    with tempfile.NamedTemporaryFile("w", suffix=".ini", delete=False) as f:
        f.write(prof)
        path = f.name
    try:
        p = subprocess.run([sys.executable, os.path.join(ROOT, "tests", "accuracy", "vllm_h100.py"),
                            binary, "--json", "--summary-only", "--set", "run.hardware=" + path],
                           stdout=subprocess.PIPE, universal_newlines=True)
    finally:
        os.unlink(path)
    if p.returncode != 0:
        sys.exit("tune_h100.py: vllm_h100.py failed (exit %d) for %s" % (p.returncode, eff))
    out = p.stdout
    j = json.loads(out[out.rfind("\n{") + 1:])
    m = j["mape_whole_run"]
    ratios = (m["ttft_mean"] / 15, m["itl_mean"] / 8, m["e2e_mean"] / 8)
    score = sum(r * r for r in ratios) + 100 * sum(max(0, r - 1) ** 2 for r in ratios)
    return (score, m, j) if per_run else (score, m)


def main(argv):
    binary = os.path.abspath(argv[0]) if argv and not argv[0].startswith("-") else \
        os.path.join(ROOT, "build", "sim", "servesim")
    rounds = int(argv[argv.index("--rounds") + 1]) if "--rounds" in argv else 3
    best = dict(START)
    score, m = evaluate(binary, best)
    print("start", round(score, 3), {k: round(v, 2) for k, v in m.items() if k in ("ttft_mean", "itl_mean", "e2e_mean")}, flush=True)
    steps = dict(STEPS)
    for r in range(rounds):
        for k in best:
            for sign in (+1, -1):
                while True:
                    cand = dict(best)
                    lo, hi = LIMITS[k]
                    cand[k] = min(hi, max(lo, best[k] + sign * steps[k]))
                    if cand[k] == best[k]:
                        break
                    s, mm = evaluate(binary, cand)
                    if s < score:
                        best, score, m = cand, s, mm
                        print("round", r, k, round(best[k], 4), "score", round(score, 3),
                              {x: round(v, 2) for x, v in m.items() if x in ("ttft_mean", "itl_mean", "e2e_mean")}, flush=True)
                    else:
                        break
        steps = {k: v / 2 for k, v in steps.items()}
    print(json.dumps(best))


if __name__ == "__main__":
    main(sys.argv[1:])
