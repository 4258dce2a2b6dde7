"""Check of servesim's llama.cpp CPU backend against llama-bench (issue 11).

The table: mainline llama.cpp on a Ryzen 9 7950X (Zen 4, 16 cores),
Llama-3.1-8B Q4_0 / Q8_0, pp512 at 16 threads and tg128 at 4 threads, the
llama.cpp column of ikawrakow/ik_llama.cpp PR #54 (memory speed not stated),
run here on the cpu-ddr5-5600 profile. End to end: a check, fitted to
nothing (docs/backends.md). Each cell is one `servesim run` with the
llama.cpp server engine, timed as llama-bench times it
(tests/accuracy/llamacpp_apple.py explains how).

usage: llamacpp_cpu.py [SERVESIM]
Prints each cell's error; exits 0 when every simulation ran, 1 when one
failed, 2 on bad usage.
"""

import os
import sys

from simrun import ROOT, run_json

# (weights, test): measured t/s, ik_llama.cpp PR #54 (llama.cpp column).
MEASURED = {
    ("q4_0", "pp512"): 123.46,
    ("q8_0", "pp512"): 141.30,
    ("q4_0", "tg128"): 11.25,
    ("q8_0", "tg128"): 7.56,
}


def simulate(binary, wtype, test):
    """Runs one cell; returns (tokens per second, None) or (None, error)."""
    prompt, output = (512, 1) if test == "pp512" else (1, 129)
    sets = [
        "run.model=llama-3.1-8b", "run.hardware=cpu-ddr5-5600", "run.weights=" + wtype,
        "engine.kind=llamacpp", "engine.num_parallel=1",
        "workload.num_prompts=1", "workload.request_rate=inf", "workload.random_range_ratio=0",
        "workload.random_input_len=%d" % prompt, "workload.random_output_len=%d" % output,
    ]
    doc, err = run_json(binary, (), sets)
    if err:
        return None, err
    try:
        ol = doc["servesim"]["ollama"]
        ns = ol["mean_prompt_eval_duration_ns" if test == "pp512" else "mean_eval_duration_ns"]
    except KeyError as ex:
        return None, "servesim run %s: no servesim.ollama in its JSON: %s" % (" ".join(sets), ex)
    n = 512 if test == "pp512" else 128
    return (n / (ns / 1e9) if ns > 0 else None), None


def main(argv):
    if len(argv) > 1 or (argv and argv[0].startswith("-")):
        sys.stderr.write(__doc__.split("usage:", 1)[1])
        return 2
    binary = os.path.abspath(argv[0]) if argv else os.path.join(ROOT, "build", "sim", "servesim")
    if not os.access(binary, os.X_OK):
        sys.stderr.write("llamacpp_cpu.py: no servesim binary at %s\n" % binary)
        return 2
    failed = False
    print("%-5s %-6s | %9s %9s %7s" % ("type", "test", "measured", "sim", "err"))
    for (w, test), meas in MEASURED.items():
        s, err = simulate(binary, w, test)
        if err or s is None:
            sys.stderr.write((err or "no duration") + "\n")
            failed = True
            continue
        print("%-5s %-6s | %9.2f %9.2f %+6.1f%%" % (w, test, meas, s, 100.0 * (s - meas) / meas))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
