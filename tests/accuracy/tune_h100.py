#!/usr/bin/env python3
"""How the datacenter-GPU efficiency defaults were chosen (issue 4).

A coordinate search over the [efficiency] keys of an H100 SXM profile,
minimising (MAPE_ttft/15)^2 + (MAPE_itl/8)^2 + (MAPE_e2e/8)^2 over the 15
real runs of ../shared/calibration (vllm_h100.py does each evaluation). It
prints the best set; copying it into hw_default_efficiency() is a manual,
reviewed step. One set for every experiment: no per-run tuning.

usage: tune_h100.py [SERVESIM] [--rounds N]
"""
import json, os, subprocess, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
START = {"bandwidth": 0.74, "attention_bandwidth": 0.78, "compute_max": 0.85,
         "compute_half_tokens": 36, "attention_compute": 0.47, "step_overhead_us": 1400,
         "step_overhead_per_seq_us": 4, "request_overhead_ms": 10}
STEPS = {"bandwidth": 0.04, "attention_bandwidth": 0.08, "compute_max": 0.06,
         "compute_half_tokens": 24, "attention_compute": 0.08, "step_overhead_us": 400,
         "step_overhead_per_seq_us": 4, "request_overhead_ms": 3}
LIMITS = {"bandwidth": (0.3, 1), "attention_bandwidth": (0.2, 1), "compute_max": (0.2, 1),
          "compute_half_tokens": (0, 2000), "attention_compute": (0.1, 1),
          "step_overhead_us": (0, 10000), "step_overhead_per_seq_us": (0, 200),
          "request_overhead_ms": (0, 100)}


def evaluate(binary, eff):
    base = open(os.path.join(ROOT, "hardware_profiles", "h100-sxm.ini")).read()
    lines = [l for l in base.splitlines()]
    prof = "\n".join(lines) + "\n\n[efficiency]\n" + "".join(
        "%s = %.6g\n" % (k, v) for k, v in eff.items())
    with tempfile.NamedTemporaryFile("w", suffix=".ini", delete=False) as f:
        f.write(prof)
        path = f.name
    try:
        out = subprocess.run([sys.executable, os.path.join(ROOT, "tests", "accuracy", "vllm_h100.py"),
                              binary, "--json", "--summary-only", "--set", "run.hardware=" + path],
                             stdout=subprocess.PIPE, universal_newlines=True).stdout
    finally:
        os.unlink(path)
    j = json.loads(out[out.rfind("\n{") + 1:])
    m = j["mape_whole_run"]
    score = (m["ttft_mean"] / 15) ** 2 + (m["itl_mean"] / 8) ** 2 + (m["e2e_mean"] / 8) ** 2
    return score, m


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
