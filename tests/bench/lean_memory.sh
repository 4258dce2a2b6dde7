#!/bin/sh
# Peak RSS of the kinds of run that became lean in issue 14's second part
# (docs/speed.md, "When a run keeps its requests"), each at 100k and 1M
# requests: memory should not follow the number of requests. Prints one
# line per kind with both figures, their ratio and the CPU time.
#   vllm     the speed benchmark's workload (tests/bench/sharegpt_1m.ini)
#   ollama   an Ollama open loop of four slots (scenarios/c28, short requests)
#   pd       a P/D-disaggregated pair (scenarios/c25, short requests)
#   plot     the benchmark workload with --plot (requests.csv streamed;
#            100k and 300k: gnuplot draws every request's CDF point)
#   detailed the benchmark workload with --save-detailed (its arrays streamed)
#   prom     the benchmark workload with --format prom (its sums streamed)
#   pdprom   the P/D pair with --format prom (a cluster's per-replica series
#            summed as requests are done)
#   out      the benchmark workload with --out DIR (its files streamed,
#            openmetrics.txt's scrapes saved as it goes; 160 MB in /tmp at 1M)
#   pdout    the P/D pair (c25 as it is, 2 req/s) with --out DIR at 2k and
#            20k: not lean yet (a cluster's openmetrics.txt reads every
#            request record at each scrape), so its RSS follows the requests
# Usage: tests/bench/lean_memory.sh [path/to/servesim]   (about 100 s of CPU)
set -e
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:-$here/../../build/sim/servesim}
python3 - "$bin" "$here/../.." <<'PY'
import os, shutil, subprocess, sys, tempfile
bin, root = sys.argv[1], sys.argv[2]
bench = f"{root}/tests/bench/sharegpt_1m.ini"
ollama = ["workload.users=0", "workload.turns=1", "workload.request_rate=4", "engine.num_parallel=4",
          "workload.random_output_len=16", "workload.random_input_len=64", "workload.random_prefix_len=0"]
pd = ["workload.random_output_len=16", "workload.random_input_len=256"]
kinds = [("vllm", bench, [], [], (100000, 1000000)),
         ("ollama", f"{root}/scenarios/c28-ollama-vs-vllm.ini", ollama, [], (100000, 1000000)),
         ("pd", f"{root}/scenarios/c25-disagg-small.ini", pd, [], (100000, 1000000)),
         ("plot", bench, [], ["--plot"], (100000, 300000)),
         ("detailed", bench, [], ["--save-detailed"], (100000, 1000000)),
         ("prom", bench, [], ["--format", "prom"], (100000, 1000000)),
         ("pdprom", f"{root}/scenarios/c25-disagg-small.ini", pd, ["--format", "prom"], (100000, 1000000)),
         ("out", bench, [], ["--out"], (100000, 1000000)),
         ("pdout", f"{root}/scenarios/c25-disagg-small.ini", ["workload.request_rate=2"], ["--out"], (2000, 20000))]

def measure(args):
    """Peak RSS (MiB) and CPU s of servesim, under /usr/bin/time: a child's
    ru_maxrss from here would count this Python's memory, which the child
    had before its exec. The children servesim waits for count too: with
    --plot the peak is gnuplot's (about 25 MiB) and the CPU time includes
    its drawing."""
    fd, note = tempfile.mkstemp()
    os.close(fd)
    status = subprocess.call(["/usr/bin/time", "-f", "%M %U %S", "-o", note] + args,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if status:
        sys.exit(f"{' '.join(args)}: status {status}")
    kib, user, sys_s = open(note).read().split()[-3:]
    os.unlink(note)
    return int(kib) / 1024, float(user) + float(sys_s)

for name, ini, sets, extra, sizes in kinds:
    figs = []
    for n in sizes:
        args = [bin, "run", ini, "--num-prompts", str(n), "--format", "json", "--no-progress"]
        for s in sets:
            args += ["--set", s]
        tmp = tempfile.mkdtemp() if extra in (["--plot"], ["--out"]) else None
        if tmp:
            args += [extra[0], f"{tmp}/dir"]
        elif extra:
            args += extra   # a later --format wins
        figs.append(measure(args))
        if tmp:
            shutil.rmtree(tmp)
    (r1, c1), (r2, c2) = figs
    print(f"{name:8} {sizes[0]:>9,} requests: {r1:6.1f} MiB, {c1:6.2f} s CPU; "
          f"{sizes[1]:>9,}: {r2:6.1f} MiB, {c2:6.2f} s CPU; RSS ratio {r2 / r1:.2f}")
PY
