#!/bin/sh
# Speed and memory of one big run (issue: serving simulation, "Speed"):
# 1,000,000 ShareGPT-like requests near saturation, Llama-3.1-8B on H100 SXM.
# Goals (issue 14): at most 1 s on one core and 64 MiB peak RSS; CPU time is
# printed next to wall time for loaded machines. speed_goals.sh prints every
# goal of issue 14 (docs/speed.md).
# Usage: tests/bench/run_speed.sh [path/to/servesim]
set -e
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:-$here/../../build/sim/servesim}
python3 - "$bin" "$here/sharegpt_1m.ini" <<'PY'
import json, os, subprocess, sys, tempfile, time
# Under /usr/bin/time: a child's ru_maxrss read from here would count this
# Python's memory, which the child had before its exec.
fd, note = tempfile.mkstemp()
os.close(fd)
t = time.monotonic()
out = subprocess.run(["/usr/bin/time", "-f", "%M %U %S", "-o", note, sys.argv[1], "run", sys.argv[2],
                      "--format", "json"], check=True, capture_output=True, text=True).stdout
wall = time.monotonic() - t
kib, user, sys_s = open(note).read().split()[-3:]
os.unlink(note)
rss_mib, cpu = int(kib) / 1024, float(user) + float(sys_s)
j = json.loads(out)
print(f"requests {j['completed']} (failed {j['failed']}), simulated {j['duration']:.0f} s, "
      f"output {j['output_throughput']:.0f} tok/s, mean TTFT {j['mean_ttft_ms']:.1f} ms, "
      f"p99 ITL {j['p99_itl_ms']:.1f} ms, peak KV {j['servesim']['peak_kv_cache_usage']:.2f}")
print(f"wall {wall:.2f} s, CPU {cpu:.2f} s (goal <= 1), peak RSS {rss_mib:.1f} MiB (goal <= 64)")
PY
