#!/usr/bin/env python3
"""The llama.cpp Apple table stays within its goals (issue 11): runs
tests/accuracy/llamacpp_apple.py (llama-bench pp512 / tg128 on eight
M-series chips, discussion #4167: an end-to-end check of the Metal
backend's component rows, sim/perf/backend_metal.c, never a fit) and
fails when pp512 MAPE exceeds 20% or tg128 MAPE 10% (issue 5's goals).

Usage: backend_metal_goals.py SERVESIM. Exit 0 when both goals hold."""
import json
import os
import subprocess
import sys

GOALS = {"pp512": 20.0, "tg128": 10.0}


def main(argv):
    if len(argv) != 1:
        sys.stderr.write("usage: backend_metal_goals.py SERVESIM\n")
        return 2
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "accuracy", "llamacpp_apple.py")
    r = subprocess.run([sys.executable, script, argv[0], "--json"], capture_output=True, text=True)
    sys.stdout.write(r.stdout)
    sys.stderr.write(r.stderr)
    if r.returncode != 0:
        return 1
    mape = json.loads(r.stdout.strip().splitlines()[-1])["mape_pct"]
    bad = [t for t, goal in GOALS.items() if mape[t] is None or mape[t] > goal]
    for t in bad:
        sys.stderr.write("backend_metal_goals: %s MAPE %s%% above its goal %.0f%%\n" % (t, mape[t], GOALS[t]))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
