#!/bin/sh
# Speed of a sweep (issue: capacity planning, "Speed"): 50 points of
# 10,000-request runs, Llama-3.1-8B on H100 SXM (the built-in default
# workload: 1,024 prompt and 128 output tokens, Poisson arrivals), request
# rate 1 to 50 req/s, on every processor. Goal: at most 30 s wall on a
# 2-core machine. Prints the wall time and checks --jobs 1 gives the same
# bytes (pass --quick to skip that second, serial run).
# Usage: tests/bench/sweep_speed.sh [path/to/servesim] [--quick]
set -e
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:-$here/../../build/sim/servesim}
quick=${2:-}
python3 - "$bin" "$quick" <<'PY'
import os, subprocess, sys, time
bin, quick = sys.argv[1], sys.argv[2] == "--quick"
args = [bin, "sweep", "--set", "workload.num_prompts=10000", "--vary", "request_rate=1:50:1",
        "--format", "csv"]
t = time.monotonic()
out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
wall = time.monotonic() - t
rows = out.strip().splitlines()[1:]
done = sum(float(r.split(",")[23]) for r in rows)   # the completed column
print(f"points {len(rows)}, requests simulated {done:.0f}, jobs {os.cpu_count()}")
print(f"wall {wall:.2f} s (goal <= 30 s on 2 cores)")
if not quick:
    t = time.monotonic()
    one = subprocess.run(args + ["--jobs", "1"], check=True, capture_output=True, text=True).stdout
    print(f"--jobs 1: wall {time.monotonic() - t:.2f} s, same bytes as --jobs {os.cpu_count()}: {one == out}")
    sys.exit(0 if one == out else 1)
PY
