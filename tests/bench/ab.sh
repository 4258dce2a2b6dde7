#!/bin/sh
# Two or more servesim binaries side by side on one workload, the runs
# interleaved (A B A B ...) so that the machine's drift (20% from hour to
# hour on the project's shared machines) falls on all of them alike; prints
# each binary's least user CPU over the rounds and whether their outputs
# are the same bytes. A figure, not a test (docs/speed.md).
# Usage: tests/bench/ab.sh ROUNDS BIN_A BIN_B [BIN ...] [-- RUN ARGS...]
#   RUN ARGS default to: run tests/bench/sharegpt_1m.ini --format json
set -e
here=$(cd "$(dirname "$0")" && pwd)
[ $# -ge 3 ] || { echo "usage: $0 ROUNDS BIN_A BIN_B [BIN ...] [-- RUN ARGS...]" >&2; exit 2; }
rounds=$1
shift
bins=
while [ $# -gt 0 ] && [ "$1" != -- ]; do
	[ -x "$1" ] || { echo "$0: $1: not an executable" >&2; exit 2; }
	bins="$bins $1"
	shift
done
[ "${1:-}" = -- ] && shift
[ $# -gt 0 ] || set -- run "$here/sharegpt_1m.ini" --format json
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
i=0
while [ "$i" -lt "$rounds" ]; do
	k=0
	for b in $bins; do
		/usr/bin/time -f %U -o "$tmp/t" "$b" "$@" > "$tmp/out$k"
		cat "$tmp/t" >> "$tmp/times$k"
		k=$((k + 1))
	done
	i=$((i + 1))
done
k=0
for b in $bins; do
	best=$(sort -n "$tmp/times$k" | head -1)
	same=same
	cmp -s "$tmp/out0" "$tmp/out$k" || same="DIFFERENT output from the first"
	printf '%s: least user CPU %s s over %s rounds (%s)\n' "$b" "$best" "$rounds" "$same"
	k=$((k + 1))
done
