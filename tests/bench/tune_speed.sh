#!/bin/sh
# Speed of tuning (issue 12: "keep the default search to seconds for the
# seed scenarios"): compare c13-bench-serve on an A100 and an H100 under
# ttft_p99_ms=2000, itl_p99_ms=50, tuned with the default axes and 3
# replications, on every processor; then without the confirmation on fresh
# seeds (--confirm 0), and with --fixed. Prints the
# wall times, the simulations tuning took and each device's rate.
# Usage: tests/bench/tune_speed.sh [path/to/servesim]
set -e
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:-$here/../../build/sim/servesim}
python3 - "$bin" <<'PY'
import json, subprocess, sys, time
bin = sys.argv[1]
args = [bin, "compare", "c13-bench-serve", "--hardware", "a100-80gb-sxm,h100-sxm",
        "--slo", "ttft_p99_ms=2000,itl_p99_ms=50", "--format", "json"]
for extra in ([], ["--confirm", "0"], ["--fixed"]):
    t = time.monotonic()
    doc = json.loads(subprocess.run(args + extra, check=True, capture_output=True, text=True).stdout)
    wall = time.monotonic() - t
    sims = sum(r.get("tuning", {}).get("simulations", 0) for r in doc["rows"])
    rates = ", ".join(f"{r['hardware']} {r['max_rate']} req/s ({r.get('set') or 'own settings'})"
                      for r in doc["rows"])
    print(f"{' '.join(extra) or 'tuned'}: wall {wall:.2f} s, tuning simulations {sims}; {rates}")
PY
