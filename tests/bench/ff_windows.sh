#!/bin/sh
# Fast-forward's lazy runs on the benchmark workload (issue 14, piece 2:
# how many passes a run covers and what ends it; docs/speed.md):
# bench_ff_windows runs tests/bench/sharegpt_1m.ini with fast-forward on
# and prints engine_stats' counts (tests/bench/ff_windows.c).
# Usage: tests/bench/ff_windows.sh [build dir] [num_prompts] [KEY=VALUE ...]
#   (defaults: build, 200000)
set -e
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../../build}
n=${2:-200000}
[ $# -gt 2 ] && shift 2 || set --
SERVESIM_DATA_DIR=${SERVESIM_DATA_DIR:-$here/../..} \
	exec "$build/tests/bench_ff_windows" "$here/sharegpt_1m.ini" "workload.num_prompts=$n" "$@"
