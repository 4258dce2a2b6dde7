#!/bin/sh
# Speed and memory of one big run (issue: serving simulation, "Speed"):
# 1,000,000 ShareGPT-like requests near saturation, Llama-3.1-8B on H100 SXM.
# Goal: at most 10 s wall and 1 GiB peak RSS on a 2-core machine.
# Usage: tests/bench/run_speed.sh [path/to/servesim]
set -e
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:-$here/../../build/sim/servesim}
python3 - "$bin" "$here/sharegpt_1m.ini" <<'PY'
import json, resource, subprocess, sys, time
t = time.monotonic()
out = subprocess.run([sys.argv[1], "run", sys.argv[2], "--format", "json"],
                     check=True, capture_output=True, text=True).stdout
wall = time.monotonic() - t
rss_mib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
j = json.loads(out)
print(f"requests {j['completed']} (failed {j['failed']}), simulated {j['duration']:.0f} s, "
      f"output {j['output_throughput']:.0f} tok/s, mean TTFT {j['mean_ttft_ms']:.1f} ms, "
      f"p99 ITL {j['p99_itl_ms']:.1f} ms, peak KV {j['servesim']['peak_kv_cache_usage']:.2f}")
print(f"wall {wall:.2f} s (goal <= 10), peak RSS {rss_mib:.0f} MiB (goal <= 1024)")
PY
