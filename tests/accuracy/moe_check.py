#!/usr/bin/env python3
"""An out-of-sample check of the MoE step model: published vLLM serving runs.

Each row is a `vllm bench serve` (or benchmarks/benchmark_serving.py) result
printed in a vLLM pull request, for a mixture-of-experts model on H100 /
H200, with the settings the PR states. None of it set any servesim default
(the MoE rows are set from kernel tables, sim/perf/backend.c; the engine
overhead from issue 18's components): a check only, never a fitting target
(issue 11). There is no goal.

Every cell runs `servesim run` with the PR's model, GPU, tensor parallelism,
random-dataset lengths (range ratio 0: the PRs' token totals say each
prompt had the stated length), number of prompts and max concurrency
(request rate inf), and leaves every engine setting the PR did not name at
servesim's vLLM defaults, as a user would. It compares mean TTFT, mean
TPOT and output token throughput where the PR printed them.

Rows:
- vLLM PR #23151 ("Add tuned fused_moe configs for Qwen3-30B-A3B"), its
  "WO tuned configs (TP=1, EP=1, on H100)" run: Qwen/Qwen3-30B-A3B BF16,
  `vllm serve Qwen/Qwen3-30B-A3B` (VLLM_USE_DEEP_GEMM=1, which BF16 does not
  use), random 2048 in / 1024 out, max concurrency 10, 100 prompts: output
  739.79 tok/s, mean TTFT 267.22 ms, mean TPOT 13.18 ms. (The untuned
  default Triton config: servesim's BF16 row is set from PR #24700's tuned
  benchmark_moe table, so a few per cent of slack either way.)
- vLLM PR #28992 ("Improve H200 Fused MoE Config"), its "before (batch 16)"
  run: deepseek-ai/DeepSeek-V3.1 (block-FP8), 8 × H200, `-tp 8`
  (VLLM_USE_DEEP_GEMM=1, VLLM_MOE_USE_DEEP_GEMM=0: DeepGEMM for the dense
  GEMMs, Triton for the experts), random 2 in / 100 out, max concurrency
  16, 160 prompts, ignore_eos: 16,000 tokens in 23.38 s, so output
  684 tok/s (derived from the two printed figures; its TPOT line is not
  in the stored excerpt). DeepSeek-V3.1 has DeepSeek-V3's shapes
  (models/deepseek-v3.json).

usage: moe_check.py [SERVESIM] [--json]
Exits 0 when every simulation ran, 1 when one failed.
"""

import json
import os
import sys
from concurrent.futures import ThreadPoolExecutor

from simrun import ROOT, run_json


# (label, source, model, hardware, weights, tp, isl, osl, prompts, concurrency,
#  measured {metric: value})
ROWS = [
    ("Qwen3-30B-A3B BF16 H100 TP1", "vLLM PR #23151", "qwen3-30b-a3b", "h100-sxm", "bf16", 1,
     2048, 1024, 100, 10,
     {"output_tok_s": 739.79, "ttft_ms": 267.22, "tpot_ms": 13.18}),
    ("DeepSeek-V3.1 FP8 H200 TP8", "vLLM PR #28992", "deepseek-v3", "h200-sxm", "fp8", 8,
     2, 100, 160, 16,
     {"output_tok_s": 16000 / 23.38}),
]

METRICS = {"output_tok_s": "output_throughput", "ttft_ms": "mean_ttft_ms", "tpot_ms": "mean_tpot_ms"}


def run(binary, row):
    _label, _src, model, hw, weights, tp, isl, osl, n, conc, _meas = row
    sets = {"run.model": model, "run.hardware": hw, "run.weights": weights,
            "engine.tensor_parallel_size": tp, "workload.num_prompts": n,
            "workload.max_concurrency": conc, "workload.request_rate": "inf",
            "workload.random_input_len": isl, "workload.random_output_len": osl,
            "workload.random_range_ratio": 0}
    return run_json(binary, (), ["%s=%s" % kv for kv in sets.items()])


def main(argv):
    binary = os.path.abspath(argv[0]) if argv and not argv[0].startswith("-") else \
        os.path.join(ROOT, "build", "sim", "servesim")
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(lambda r: run(binary, r), ROWS))
    failures = [err for _doc, err in results if err]
    rows = []
    print("%-28s %-15s %-13s %10s %10s %8s" % ("case", "source", "metric", "measured", "simulated",
                                               "error%"))
    for r, (doc, err) in zip(ROWS, results):
        if err:
            continue
        for metric, measured in r[10].items():
            sim = doc[METRICS[metric]]
            e = 100 * (sim / measured - 1)
            rows.append({"case": r[0], "source": r[1], "metric": metric, "measured": measured,
                         "simulated": sim, "error_pct": e})
            print("%-28s %-15s %-13s %10.2f %10.2f %+8.1f" % (r[0], r[1], metric, measured, sim, e))
    print()
    for metric in METRICS:
        errs = [abs(x["error_pct"]) for x in rows if x["metric"] == metric]
        if errs:
            print("MAPE %-13s %6.1f%% over %d" % (metric, sum(errs) / len(errs), len(errs)))
    for f in failures:
        sys.stderr.write("moe_check.py: run failed: %s\n" % f)
    if "--json" in argv:
        print(json.dumps({"rows": rows}, indent=1))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
