#!/usr/bin/env python3
"""An out-of-sample check of the step model: TensorRT-LLM's static batching.

The table is ../shared/reference/measured_public.md section B
(NVIDIA/TensorRT-LLM docs/source/performance.md, v0.5-v0.6.1): output
tokens/s of a batch of `bs` requests with fixed input/output lengths, and
the time to first token of one request. None of it was used to set
servesim's defaults (those come from vLLM runs on H100, section C and
../shared/calibration), and it covers devices and precisions the vLLM runs
do not (L40S, A100, FP8 weights and KV), so it tests how far the defaults
carry. It is another engine (late-2023 TensorRT-LLM kernels, static batches
rather than vLLM's continuous batching), so expect a spread; there is no
goal.

Each throughput cell runs `servesim run` with bs requests sent at once
(request_rate inf, max_concurrency bs), fixed lengths (random_range_ratio
0), FP8 weights and FP8 KV cache where the table says FP8, and reads
"Output token throughput". Each TTFT cell runs one request and reads the
engine part of its TTFT (TTFT minus the API and tokenizer path, which a
TensorRT-LLM benchmark does not have). The 70B throughput row is "per GPU"
in the table: servesim's total is divided by the GPU count.

usage: trtllm_static.py [SERVESIM] [--json]
Exits 0 when every simulation ran, 1 when one failed.
"""

import json
import os
import sys
from concurrent.futures import ThreadPoolExecutor

from simrun import ROOT, run_json


# (label, model, hardware, weights, tp, bs, isl, osl, measured tok/s, per_gpu)
THROUGHPUT = [
    ("H100 FP8 7B", "llama-2-7b", "h100-sxm", "fp8", 1, 768, 128, 128, 19694, False),
    ("H100 FP8 7B", "llama-2-7b", "h100-sxm", "fp8", 1, 112, 128, 2048, 6818, False),
    ("H100 FP8 7B", "llama-2-7b", "h100-sxm", "fp8", 1, 80, 2048, 128, 2244, False),
    ("H100 FP8 7B", "llama-2-7b", "h100-sxm", "fp8", 1, 48, 2048, 2048, 2740, False),
    ("H100 FP8 70B TP2", "llama-2-70b", "h100-sxm", "fp8", 2, 1024, 128, 128, 2657, True),
    ("H100 FP8 70B TP2", "llama-2-70b", "h100-sxm", "fp8", 2, 96, 2048, 128, 306, True),
    ("H100 FP8 70B TP2", "llama-2-70b", "h100-sxm", "fp8", 2, 64, 2048, 2048, 547, True),
    ("L40S FP8 7B", "llama-2-7b", "l40s", "fp8", 1, 64, 128, 128, 3240, False),
    ("L40S FP8 7B", "llama-2-7b", "l40s", "fp8", 1, 64, 128, 2048, 1622, False),
    ("L40S FP8 7B", "llama-2-7b", "l40s", "fp8", 1, 32, 2048, 128, 581, False),
    ("L40S FP8 7B", "llama-2-7b", "l40s", "fp8", 1, 16, 2048, 2048, 531, False),
]

# (label, model, hardware, weights, tp, isl, measured TTFT ms)
TTFT = [
    ("H100 FP8 7B", "llama-2-7b", "h100-sxm", "fp8", 1, 128, 7),
    ("H100 FP8 7B", "llama-2-7b", "h100-sxm", "fp8", 1, 2048, 36),
    ("L40S FP8 7B", "llama-2-7b", "l40s", "fp8", 1, 128, 14),
    ("L40S FP8 7B", "llama-2-7b", "l40s", "fp8", 1, 2048, 73),
    ("A100 FP16 7B", "llama-2-7b", "a100-80gb-sxm", "fp16", 1, 128, 16),
    ("A100 FP16 7B", "llama-2-7b", "a100-80gb-sxm", "fp16", 1, 2048, 133),
    ("H100 FP8 70B TP4", "llama-2-70b", "h100-sxm", "fp8", 4, 128, 26),
    ("H100 FP8 70B TP4", "llama-2-70b", "h100-sxm", "fp8", 4, 2048, 109),
    ("A100 FP16 70B TP4", "llama-2-70b", "a100-80gb-sxm", "fp16", 4, 128, 47),
    ("A100 FP16 70B TP4", "llama-2-70b", "a100-80gb-sxm", "fp16", 4, 2048, 377),
]


def run(binary, model, hw, weights, tp, bs, isl, osl):
    sets = {"run.model": model, "run.hardware": hw, "run.weights": weights,
            "engine.tensor_parallel_size": tp, "engine.max_num_seqs": 1024,
            "engine.max_model_len": 4096, "workload.num_prompts": bs,
            "workload.max_concurrency": bs, "workload.request_rate": "inf",
            "workload.random_input_len": isl, "workload.random_output_len": osl,
            "workload.random_range_ratio": 0}
    if weights == "fp8":
        sets["engine.kv_cache_dtype"] = "fp8"
    return run_json(binary, (), ["%s=%s" % kv for kv in sets.items()])


def main(argv):
    binary = os.path.abspath(argv[0]) if argv and not argv[0].startswith("-") else \
        os.path.join(ROOT, "build", "sim", "servesim")
    jobs = [(r[1], r[2], r[3], r[4], r[5], r[6], r[7]) for r in THROUGHPUT] + \
           [(r[1], r[2], r[3], r[4], 1, r[5], 1) for r in TTFT]
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(lambda j: run(binary, *j), jobs))
    failures = [err for _doc, err in results if err]
    rows = []
    print("%-18s %-16s %10s %10s %8s" % ("device, model", "case", "measured", "simulated", "error%"))
    for r, (doc, err) in zip(THROUGHPUT, results[:len(THROUGHPUT)]):
        if err:
            continue
        sim = doc["output_throughput"] / (r[4] if r[9] else 1)
        e = 100 * (sim / r[8] - 1)
        rows.append({"case": "%s bs%d %d/%d" % (r[0], r[5], r[6], r[7]), "metric": "tok/s",
                     "measured": r[8], "simulated": sim, "error_pct": e, "device": r[0]})
        print("%-18s %-16s %10.0f %10.0f %+8.1f" % (r[0], "bs%d %d/%d tok/s" % (r[5], r[6], r[7]),
                                                   r[8], sim, e))
    for r, (doc, err) in zip(TTFT, results[len(THROUGHPUT):]):
        if err:
            continue
        ss = doc["servesim"]["mean_ttft_breakdown"]
        sim = doc["mean_ttft_ms"] - ss["api_overhead_ms"]
        e = 100 * (sim / r[6] - 1)
        rows.append({"case": "%s ISL %d" % (r[0], r[5]), "metric": "ttft_ms", "measured": r[6],
                     "simulated": sim, "error_pct": e, "device": r[0]})
        print("%-18s %-16s %10.1f %10.1f %+8.1f" % (r[0], "TTFT ISL %d ms" % r[5], r[6], sim, e))
    print()
    summary = {}
    for metric in ("tok/s", "ttft_ms"):
        for dev in sorted({x["device"] for x in rows if x["metric"] == metric}):
            errs = [abs(x["error_pct"]) for x in rows if x["metric"] == metric and x["device"] == dev]
            summary["%s %s" % (dev, metric)] = sum(errs) / len(errs)
            print("MAPE %-8s %-18s %6.1f%% over %d" % (metric, dev, sum(errs) / len(errs), len(errs)))
    for f in failures:
        sys.stderr.write("trtllm_static.py: run failed: %s\n" % f)
    if "--json" in argv:
        print(json.dumps({"rows": rows, "mape": summary}, indent=1))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
