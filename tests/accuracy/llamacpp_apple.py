#!/usr/bin/env python3
"""Accuracy of servesim against llama.cpp on Apple Silicon (issue 5).

The table is ../shared/reference/measured_public.md section A: llama-bench
pp512 and tg128, Llama-2-7B, F16 / Q8_0 / Q4_0, Metal, all layers on the GPU,
eight chips (llama.cpp discussion #4167). Each cell is simulated through
`servesim run` with the llama.cpp server engine, one request on one slot,
and measured as llama-bench measures it (tools/llama-bench: t/s =
n_tokens / time of the test):

  pp512  one request of 512 prompt tokens and 1 output token: the prompt is
         one llama_decode() of 512 tokens (n_batch 2048, n_ubatch 512), as
         llama-bench's test_prompt; t/s = 512 / prompt_eval_duration.
  tg128  one request of 1 prompt token and 129 output tokens: after the
         first token, 128 single-token decodes, as llama-bench's test_gen
         (n_prompt 0, n_gen 128); t/s = 128 / eval_duration (first token to
         last).

Prints the error of every cell and the mean absolute percentage error
(MAPE) of pp512 and tg128. The goal (issue 5): tg128 MAPE <= 10%, pp512
MAPE <= 20%, with the Apple class defaults of sim/hw/hwprofile.c.

usage: llamacpp_apple.py [SERVESIM] [--json]
  SERVESIM  the binary (default build/sim/servesim in the repo root)
  --json    also print the summary as JSON (last thing on stdout)
Exits 0 when every simulation ran (whatever the error), 1 when one failed,
2 on bad usage.
"""

import json
import os
import sys
from concurrent.futures import ThreadPoolExecutor

from simrun import ROOT, parse_check_args, run_json

TYPES = ["f16", "q8_0", "q4_0"]

# measured_public.md section A: chip -> (pp512 F16, Q8_0, Q4_0), (tg128 F16, Q8_0, Q4_0), t/s.
MEASURED = {
    "m1-max": ((599.53, 537.37, 530.06), (23.03, 40.20, 61.19)),
    "m1-ultra": ((1168.89, 1042.95, 1030.04), (37.01, 59.87, 83.73)),
    "m2-max": ((755.67, 677.91, 671.31), (24.65, 41.83, 65.95)),
    "m2-ultra": ((1401.85, 1248.59, 1238.48), (41.02, 66.64, 94.27)),
    "m3-max": ((779.17, 757.64, 759.70), (25.09, 42.75, 66.31)),
    "m3-ultra": ((1538.34, 1487.51, 1471.24), (39.78, 63.93, 92.14)),
    "m4-pro": ((464.48, 449.62, 439.78), (17.18, 30.69, 50.74)),
    "m4-max": ((922.83, 891.94, 885.68), (31.64, 54.05, 83.06)),
}

PP_TOKENS = 512
TG_TOKENS = 128


def parse_args(argv):
    return parse_check_args(argv, __doc__, "llamacpp_apple.py")


def simulate(binary, chip, wtype, test, model="llama-2-7b"):
    """Runs one cell; returns (tokens per second, None) or (None, error)."""
    prompt, output = (PP_TOKENS, 1) if test == "pp512" else (1, TG_TOKENS + 1)
    sets = [
        "run.model=" + model, "run.hardware=" + chip, "run.weights=" + wtype,
        "engine.kind=llamacpp", "engine.num_parallel=1",
        "workload.num_prompts=1", "workload.request_rate=inf", "workload.random_range_ratio=0",
        "workload.random_input_len=%d" % prompt, "workload.random_output_len=%d" % output,
    ]
    doc, err = run_json(binary, (), sets)
    if err:
        return None, err
    try:
        ol = doc["servesim"]["ollama"]
    except KeyError as ex:
        return None, "servesim run %s: no servesim.ollama in its JSON: %s" % (" ".join(sets), ex)
    if test == "pp512":
        ns = ol["mean_prompt_eval_duration_ns"]
        return (PP_TOKENS / (ns / 1e9) if ns > 0 else None), None
    ns = ol["mean_eval_duration_ns"]
    return (TG_TOKENS / (ns / 1e9) if ns > 0 else None), None


def main(argv):
    opts = parse_args(argv)
    cells = [(chip, i, w, test) for chip in MEASURED for i, w in enumerate(TYPES)
             for test in ("pp512", "tg128")]
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as ex:
        results = list(ex.map(lambda c: simulate(opts["binary"], c[0], c[2], c[3]), cells))
    failed = [err for _, err in results if err]
    for err in failed:
        sys.stderr.write(err + "\n")
    sim = {(c[0], c[2], c[3]): r for c, (r, _) in zip(cells, results)}

    print("%-9s %-5s | %9s %9s %7s | %8s %8s %7s" %
          ("chip", "type", "pp512", "sim", "err", "tg128", "sim", "err"))
    errs = {"pp512": [], "tg128": []}
    rows = []
    for chip, (pp, tg) in MEASURED.items():
        for i, w in enumerate(TYPES):
            row = {"chip": chip, "type": w}
            cols = []
            for test, meas in (("pp512", pp[i]), ("tg128", tg[i])):
                s = sim.get((chip, w, test))
                e = None if s is None else 100.0 * (s - meas) / meas
                if e is not None:
                    errs[test].append(abs(e))
                row[test] = {"measured": meas, "simulated": s, "error_pct": e}
                cols += [meas, s if s is not None else float("nan"),
                         e if e is not None else float("nan")]
            rows.append(row)
            print("%-9s %-5s | %9.2f %9.2f %+6.1f%% | %8.2f %8.2f %+6.1f%%" % tuple([chip, w] + cols))
    mape = {t: (sum(v) / len(v) if v else None) for t, v in errs.items()}
    worst = {t: (max(v) if v else None) for t, v in errs.items()}
    print()
    for t, goal in (("pp512", 20.0), ("tg128", 10.0)):
        if mape[t] is None:
            print("%s: no simulated cell" % t)
        else:
            print("%s: MAPE %.1f%% over %d cells (worst %.1f%%); goal <= %.0f%%: %s" %
                  (t, mape[t], len(errs[t]), worst[t], goal, "met" if mape[t] <= goal else "NOT met"))
    if opts["json"]:
        print(json.dumps({"rows": rows, "mape_pct": mape, "worst_pct": worst}))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
