#!/bin/sh
# Issue 14's goals, each printed with what it measured (docs/speed.md):
#   1M ShareGPT-like requests (sharegpt_1m.ini): <= 1 s wall on one core,
#      <= 64 MiB peak RSS;
#   10M requests: <= 10 s, and the same peak RSS (memory independent of the
#      number of requests);
#   a sweep of 1000 points of 10k requests each: <= 10 s on 2 cores.
# Then the peak RSS of the 1M run with each per-request output (--save-
# detailed, --format prom, --out: streamed, so about the plain run's).
# Wall time is printed next to user+system CPU time: on a loaded machine
# (other jobs on the cores) the CPU time is the figure to read.
# Usage: tests/bench/speed_goals.sh [path/to/servesim] [--quick]
#   all three goals and the outputs (about 6 + 60 + 70 + 40 s of CPU);
#   --quick: the 1M run alone.
#   (--all, the old spelling of the default, is still accepted.)
set -e
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:-$here/../../build/sim/servesim}
all=--all
[ "${2:-}" = --quick ] && all=
python3 - "$bin" "$here/sharegpt_1m.ini" "$all" <<'PY'
import json, os, subprocess, sys, tempfile, time
bin, ini, all_ = sys.argv[1], sys.argv[2], sys.argv[3] == "--all"

def measure(args):
    """Runs args; returns stdout, wall s, CPU s (user+system), peak RSS MiB.
    Under /usr/bin/time where there is one: a child's ru_maxrss from here
    would count this Python's memory, which the child had before its exec."""
    timed = os.path.exists("/usr/bin/time")
    fd, note = tempfile.mkstemp()
    os.close(fd)
    pre = ["/usr/bin/time", "-f", "%M %U %S", "-o", note] if timed else []
    t = time.monotonic()
    p = subprocess.Popen(pre + args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    out = p.stdout.read()
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - t
    if status != 0:
        sys.exit(f"{args[1]} failed: status {status}")
    if timed:
        kib, user, sys_s = open(note).read().split()[-3:]
        rss, cpu = int(kib) / 1024, float(user) + float(sys_s)
    else:
        rss, cpu = ru.ru_maxrss / 1024, ru.ru_utime + ru.ru_stime
    os.unlink(note)
    return out, wall, cpu, rss

def run(n, goal_s):
    out, wall, cpu, rss = measure([bin, "run", ini, "--num-prompts", str(n), "--format", "json"])
    j = json.loads(out)
    print(f"{n:>9,} requests: wall {wall:6.2f} s, CPU {cpu:6.2f} s (goal <= {goal_s} s), "
          f"peak RSS {rss:5.1f} MiB (goal <= 64); completed {j['completed']}, "
          f"{j['total_output_tokens'] / cpu / 1e6:.1f} M output tokens per CPU second")
    return rss

rss1 = run(1000000, 1)
if all_:
    rss10 = run(10000000, 10)
    print(f"peak RSS 10M / 1M: {rss10 / rss1:.2f} (goal: 1, memory independent of the requests)")
    args = [bin, "sweep", "--set", "workload.num_prompts=10000", "--vary",
            "request_rate=1:50:1", "--vary", "seed=0:19:1", "--format", "csv", "--jobs", "2"]
    out, wall, cpu, rss = measure(args)
    rows = out.strip().splitlines()[1:]
    print(f"sweep of {len(rows)} points x 10k requests, 2 jobs: wall {wall:.2f} s (goal <= 10 s on 2 cores), "
          f"CPU {cpu:.2f} s (so >= {cpu / 2:.2f} s wall on 2 idle cores), peak RSS {rss:.1f} MiB")
    tmp = tempfile.mkdtemp()
    for what, extra in (("--save-detailed", ["--format", "json", "--save-detailed"]),
                        ("--format prom", ["--format", "prom"]),
                        ("--out DIR", ["--format", "json", "--out", f"{tmp}/out"])):
        _, wall, cpu, rss = measure([bin, "run", ini, "--no-progress"] + extra)
        print(f"1M requests with {what:16}: CPU {cpu:6.2f} s, peak RSS {rss:7.1f} MiB "
              f"(the plain run: {rss1:.1f})")
    subprocess.call(["rm", "-rf", tmp])
PY
