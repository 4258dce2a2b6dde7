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

from llamacpp_apple import simulate
from simrun import ROOT

# (weights, test): measured t/s, ik_llama.cpp PR #54 (llama.cpp column).
MEASURED = {
    ("q4_0", "pp512"): 123.46,
    ("q8_0", "pp512"): 141.30,
    ("q4_0", "tg128"): 11.25,
    ("q8_0", "tg128"): 7.56,
}


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
        s, err = simulate(binary, "cpu-ddr5-5600", w, test, model="llama-3.1-8b")
        if err or s is None:
            sys.stderr.write((err or "no duration") + "\n")
            failed = True
            continue
        print("%-5s %-6s | %9.2f %9.2f %+6.1f%%" % (w, test, meas, s, 100.0 * (s - meas) / meas))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
