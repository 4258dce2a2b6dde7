#!/usr/bin/env python3
"""llama.cpp on NVIDIA GPUs: servesim against llama-bench tables (issue 11).

The tables are JohannesGaessler's llama-bench runs in ggml-org/llama.cpp's
CUDA pull requests: one GPU, Llama-3-8B (servesim's llama-3.1-8b, the same
shapes), all layers on the GPU, a stated microbatch (-ub). Each cell is
simulated through `servesim run` with the llama.cpp server engine, one
request on one slot, prompt P tokens in n_ubatch U pieces, 1 output token,
and measured as llama-bench measures ppP: t/s = P / prompt_eval_duration.

Every cell says whether it set a number (fit: the backend row named in
sim/perf/backend_llamacpp_cuda.c was chosen so the step model meets it) or
only checks (check: nothing was fitted to it). Types the precision table
lacks map to the nearest one of the same MMQ class: Q5_0 -> q4_0 (both
32-weight blocks; PR #8062: 1.01 apart on an RTX 4090), Q4_K_S / Q5_K_S
-> q4_k_m / q5_k_m (K-quants).

Prints each cell's error, the MAPE of the fit cells and of the check cells.
No goal is asserted (the checks are few and each PR is its own build).

usage: llamacpp_cuda.py [SERVESIM] [--json]
Exits 0 when every simulation ran, 1 when one failed, 2 on bad usage.
"""

import json
import os
import sys
from concurrent.futures import ThreadPoolExecutor

from simrun import ROOT, parse_check_args, run_json

# (gpu, servesim type, measured type, prompt, ubatch, t/s, role, source)
CELLS = [
    ("rtx-4090", "q4_0", "Q4_0", 512, 512, 10358.75, "fit", "PR #7676"),
    ("rtx-4090", "q4_k_m", "Q4_K_S", 2048, 512, 9278.55, "fit", "PR #7860"),
    ("rtx-3090", "q4_0", "Q5_0", 512, 512, 3654.78, "fit", "PR #7676"),
    ("rtx-3090", "q5_k_m", "Q5_K_S", 2048, 512, 3532.41, "fit", "PR #8062"),
    ("rtx-3090", "q6_k", "Q6_K", 2048, 512, 3596.13, "fit", "PR #8062"),
] + [
    # MMVQ: microbatch 1-8, the table its fraction was set from (at 8).
    ("rtx-3090", "q4_0", "Q4_0", 512, ub, ts, "fit", "PR #15802")
    for ub, ts in zip(range(1, 9), (156.56, 279.89, 390.96, 470.48, 509.70, 541.57, 559.30, 583.77))
] + [
    # MMQ's stream at small microbatches (FlashAttention off), set at 16.
    ("rtx-4090", "q4_0", "Q4_0", 512, ub, ts, "fit", "PR #15131")
    for ub, ts in zip(range(10, 17), (1216.63, 1340.94, 1460.17, 1564.21, 1684.51, 1785.59, 1930.50))
] + [
    # Another PR's build than the fit cells': MMQ at pp2048 (attention
    # over 1k keys a query on average).
    ("rtx-4090", "q4_0", "Q5_0", 2048, 512, 10491.78, "check", "PR #8062"),
] + [
    # MMQ between the stream-bound microbatches (<= 16) and the
    # compute-bound 512 the rows were set at: the tiles' waves and padding
    # (M in steps of 8, waves over the SMs) carry the shape, nothing was
    # set from these. PR #7676's PR column (the same build as the ub-512
    # fit cell), RTX 4090 Q4_0 pp512.
    ("rtx-4090", "q4_0", "Q4_0", 512, ub, ts, "check", "PR #7676")
    for ub, ts in zip((32, 64, 128, 256), (3427.61, 5420.06, 7443.66, 9601.53))
] + [
    # RTX 4090 Q4_K_S pp2048 (PR #7860's PR column, the build of its
    # ub-512 fit cell): the K-quant factor held across microbatches.
    ("rtx-4090", "q4_k_m", "Q4_K_S", 2048, ub, ts, "check", "PR #7860")
    for ub, ts in zip((32, 64, 128, 256), (3358.03, 5349.26, 6901.00, 8555.10))
] + [
    # RTX 3090 (Ampere) pp512, PR #7676's PR column: Q5_0 at ub 256, and
    # Q8_0 at ub 16-64 (its own bytes: 8.5 bits a weight).
    ("rtx-3090", "q4_0", "Q5_0", 512, 256, 3518.48, "check", "PR #7676"),
] + [
    ("rtx-3090", "q8_0", "Q8_0", 512, ub, ts, "check", "PR #7676")
    for ub, ts in zip((16, 32, 64), (825.82, 1437.37, 2242.88))
]


def parse_args(argv):
    return parse_check_args(argv, __doc__, "llamacpp_cuda.py")


def simulate(binary, gpu, wtype, prompt, ubatch):
    """One cell: (t/s, None) or (None, error)."""
    sets = [
        "run.model=llama-3.1-8b", "run.hardware=" + gpu, "run.weights=" + wtype,
        "engine.kind=llamacpp", "engine.num_parallel=1", "engine.n_ubatch=%d" % ubatch,
        "workload.num_prompts=1", "workload.request_rate=inf", "workload.random_range_ratio=0",
        "workload.random_input_len=%d" % prompt, "workload.random_output_len=1",
    ]
    doc, err = run_json(binary, (), sets)
    if err:
        return None, err
    try:
        ns = doc["servesim"]["ollama"]["mean_prompt_eval_duration_ns"]
    except KeyError as ex:
        return None, "servesim run %s: no servesim.ollama in its JSON: %s" % (" ".join(sets), ex)
    return (prompt / (ns / 1e9) if ns > 0 else None), None


def main(argv):
    opts = parse_args(argv)
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as ex:
        results = list(ex.map(lambda c: simulate(opts["binary"], c[0], c[1], c[3], c[4]), CELLS))
    failed = [err for _, err in results if err]
    for err in failed:
        sys.stderr.write(err + "\n")
    print("%-9s %-7s %-7s %6s %4s | %9s %9s %7s | %-5s %s" %
          ("gpu", "type", "as", "test", "ub", "t/s", "sim", "err", "role", "source"))
    errs = {"fit": [], "check": []}
    rows = []
    for c, (s, _) in zip(CELLS, results):
        gpu, w, mtype, prompt, ub, meas, role, src = c
        e = None if s is None else 100.0 * (s - meas) / meas
        if e is not None:
            errs[role].append(abs(e))
        rows.append({"gpu": gpu, "type": mtype, "servesim_type": w, "test": "pp%d" % prompt, "ubatch": ub,
                     "measured": meas, "simulated": s, "error_pct": e, "role": role, "source": src})
        print("%-9s %-7s %-7s %6s %4d | %9.2f %9.2f %+6.1f%% | %-5s %s" %
              (gpu, mtype, w, "pp%d" % prompt, ub, meas, s if s is not None else float("nan"),
               e if e is not None else float("nan"), role, src))
    mape = {r: (sum(v) / len(v) if v else None) for r, v in errs.items()}
    print()
    for r in ("fit", "check"):
        if mape[r] is not None:
            print("%s cells: MAPE %.1f%% over %d (worst %.1f%%)" % (r, mape[r], len(errs[r]), max(errs[r])))
    if opts["json"]:
        print(json.dumps({"rows": rows, "mape_pct": mape}))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
