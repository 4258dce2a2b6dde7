#!/usr/bin/env python3
"""Fast-forward decode (sim/engine/vllmff.c) against the reference
(--no-fast-forward): every scenario in scenarios/ and scenarios/calibration/,
and the two shared traces (Azure code, Mooncake), must give the same JSON
(with --save-detailed's per-request arrays) and the same text report, byte
for byte, both ways; so must the Prometheus text (the time lines) of
colocated replicas, load stages and P/D, and runs with sliding windows.
The golden test pins the outputs themselves; this one says the fast path
is the reference's, scenario by scenario.

Usage: check.py SERVESIM. Exit 0 when every scenario matches.
"""
import concurrent.futures
import os
import random
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
SHARED = os.path.normpath(os.path.join(ROOT, "..", "shared", "traces"))


def cases():
    for d in ("scenarios", os.path.join("scenarios", "calibration")):
        for f in sorted(os.listdir(os.path.join(ROOT, d))):
            if f.endswith(".ini"):
                yield os.path.join(d, f), []
    for trace in ("azure_llm_2023_code.csv", "mooncake_synthetic.jsonl"):
        path = os.path.join(SHARED, trace)
        if os.path.exists(path):
            yield "scenarios/c13-bench-serve.ini", ["--set", "workload.trace=" + path,
                                                    "--set", "workload.num_prompts=300"]
    # Runs that read every token by replica, stage or time (the time line).
    for extra in (["--set", "cluster.replicas=3", "--set", "workload.num_prompts=400"],
                  ["--set", "workload.stages=20:4,50:4,10:4"],
                  ["--set", "workload.stages=30:3,60:3", "--set", "cluster.replicas=2"]):
        yield "scenarios/c13-bench-serve.ini", extra
    # A pool short enough to preempt, with a lazy request's private blocks
    # hashed late (hashing at allocation) and not (hashing at a step's end,
    # async), and with a CPU tier.
    bench = "tests/bench/sharegpt_1m.ini"
    pressure = ["--num-prompts", "20000", "--set", "engine.num_gpu_blocks_override=2000"]
    yield bench, pressure
    yield bench, pressure + ["--set", "engine.vllm_version=0.6", "--set", "engine.async_scheduling=true"]
    yield bench, ["--num-prompts", "10000", "--set", "engine.num_gpu_blocks_override=1500",
                  "--set", "engine.kv_offload_gib=1"]
    # Sliding windows: gpt-oss's 128 tokens (a whole number of blocks),
    # which most of the benchmark's requests cross while decoding, and
    # Phi-3 mini's 2047 (not: a lazy run is cut inside a block).
    yield bench, ["--num-prompts", "3000", "--set", "run.model=gpt-oss-20b"]
    yield "scenarios/c13-bench-serve.ini", ["--set", "run.model=phi-3-mini-4k-instruct",
                                            "--set", "workload.random_input_len=1980"]
    for path in ("scenarios/c13-bench-serve.ini", "scenarios/c25-disagg-small.ini"):
        yield path, ["--format", "prom"]
    yield from mixed_configurations(24)


def mixed_configurations(n):
    """n runs of small scenarios with settings drawn together from a fixed
    seed (Python's random: the same draws everywhere): tight pools, other
    block sizes (a lazy run's new blocks, sim/engine/vllmffcross.c, come at
    other passes), priority, older versions (hashing at a step's end),
    async on and off, a CPU tier, prefix caching off, few sequences, long
    and short outputs, two replicas."""
    rng = random.Random(20261203)
    for _ in range(n):
        sc = rng.choice(["c13-bench-serve", "c14-system-prompt", "c17-kv-pressure",
                         "c21-chunked-prefill", "c19-batching"])
        sets = ["workload.num_prompts=%d" % rng.choice([60, 120, 200]),
                "workload.request_rate=%s" % rng.choice(["2", "8", "20", "inf"]),
                "run.seed=%d" % rng.randrange(1000)]
        for p, kv in ((0.5, "engine.num_gpu_blocks_override=%d" % rng.choice([120, 200, 400, 800])),
                      (0.3, "engine.block_size=%d" % rng.choice([1, 8, 32, 64])),
                      (0.3, "engine.scheduling_policy=priority"),
                      (0.3, "engine.vllm_version=%s" % rng.choice(["0.6", "0.8", "0.10", "0.11", "0.13"])),
                      (0.3, "engine.async_scheduling=%s" % rng.choice(["true", "false"])),
                      (0.2, "engine.kv_offload_gib=2"),
                      (0.2, "engine.enable_prefix_caching=false"),
                      (0.3, "engine.max_num_seqs=%d" % rng.choice([4, 16, 64])),
                      (0.3, "workload.random_output_len=%d" % rng.choice([16, 300, 700])),
                      (0.2, "cluster.replicas=2")):
            if rng.random() < p:
                sets.append(kv)
        yield "scenarios/%s.ini" % sc, [a for s in sets for a in ("--set", s)]


def servesim(binary, args):
    return subprocess.run([os.path.abspath(binary)] + args, check=True, capture_output=True,
                          text=True, cwd=ROOT, env=dict(os.environ, SERVESIM_DATA_DIR=ROOT)).stdout


def compare(binary, case):
    path, extra = case
    bad = []
    formats = [[]] if "--format" in extra else [["--format", "json", "--save-detailed"],
                                                 ["--format", "text"], ["--format", "prom"]]
    for fmt in formats:
        fast = servesim(binary, ["run", path] + extra + fmt)
        ref = servesim(binary, ["run", path] + extra + fmt + ["--no-fast-forward"])
        if fast != ref:
            fl, rl = fast.splitlines(), ref.splitlines()
            i = next((i for i, (a, b) in enumerate(zip(fl, rl)) if a != b), min(len(fl), len(rl)))
            bad.append(f"{path} {' '.join(extra)} {fmt[1]}: differs at line {i + 1}:\n"
                       f"  reference    {rl[i] if i < len(rl) else '<end>'}\n"
                       f"  fast-forward {fl[i] if i < len(fl) else '<end>'}")
    return bad


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: check.py SERVESIM")
    todo = list(cases())
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(lambda c: compare(sys.argv[1], c), todo))
    bad = [b for r in results for b in r]
    for b in bad:
        print(b)
    print(f"{len(todo)} scenarios, both ways: {len(todo) - sum(1 for r in results if r)} equal, "
          f"{sum(1 for r in results if r)} differ")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
