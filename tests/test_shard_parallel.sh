#!/usr/bin/env bash
# A sweep and a plan run as --shard K/N slices in parallel processes, then
# merged, print exactly what the unsharded run prints (CTest test
# shard_parallel; docs/planning.md "Beyond one machine"). The slices run
# under GNU parallel when it is installed (as the docs show), else as plain
# shell background jobs; the sweep's slices are also run the way the
# documented Slurm array job names them ($SLURM_ARRAY_TASK_ID/
# $SLURM_ARRAY_TASK_COUNT). Skipped (77) when neither way can run.
# Usage: test_shard_parallel.sh SERVESIM
set -u
bin=${1:?usage: test_shard_parallel.sh SERVESIM}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL  $1"; fail=1; }
ok() { echo "ok    $1"; }
export SERVESIM=$bin

if command -v parallel >/dev/null && parallel --version 2>/dev/null | grep -q 'GNU parallel'; then
	how="GNU parallel"
	# Runs "$1" with {} replaced by 1..N, N at once.
	slices() { parallel --will-cite -j "$2" --halt now,fail=1 "$1" ::: $(seq 1 "$2"); }
elif (true &) 2>/dev/null; then
	how="shell background jobs"
	slices() {
		local pids=() k rc=0
		for k in $(seq 1 "$2"); do
			bash -c "${1//\{\}/$k}" &
			pids+=($!)
		done
		for k in "${pids[@]}"; do wait "$k" || rc=1; done
		return $rc
	}
else
	echo "neither GNU parallel nor shell background jobs: shard test skipped"
	exit 77
fi
echo "slices run by $how"

# A sweep: 5 points × 2 replications in 3 slices (uneven: 2, 2, 1).
sweep='"$SERVESIM" sweep c13-bench-serve --set workload.num_prompts=30 --vary request_rate=1,4,8,16,32 --replications 2 --jobs 1'
bash -c "$sweep --format csv" >"$tmp/sweep.csv" 2>/dev/null || bad "the unsharded sweep fails"
slices "$sweep --shard {}/3 --format json > '$tmp/sweep-{}.json' 2>/dev/null" 3 || bad "a sweep slice fails"
"$bin" merge "$tmp"/sweep-{1,2,3}.json --format csv >"$tmp/merged.csv" || bad "merge of the sweep slices fails"
cmp -s "$tmp/sweep.csv" "$tmp/merged.csv" && ok "sweep: 3 slices merged = the unsharded sweep (csv, byte for byte)" ||
	bad "sweep: the merged slices differ from the unsharded sweep"
[[ $(wc -l <"$tmp/merged.csv") -eq 6 ]] || bad "sweep: expected a header and 5 points, got $(wc -l <"$tmp/merged.csv") lines"

# The same slices named as the Slurm array job of docs/planning.md names them.
for k in 1 2 3; do
	SLURM_ARRAY_TASK_ID=$k SLURM_ARRAY_TASK_COUNT=3 bash -c \
		"$sweep --shard \$SLURM_ARRAY_TASK_ID/\$SLURM_ARRAY_TASK_COUNT --format json" >"$tmp/slurm-$k.json" 2>/dev/null ||
		bad "slurm-style slice $k fails"
done
"$bin" merge "$tmp"/slurm-{3,1,2}.json --format csv | cmp -s - "$tmp/sweep.csv" &&
	ok "sweep: Slurm-style slices, merged in any order = the unsharded sweep" ||
	bad "sweep: Slurm-style slices merged differ"

# A plan: 2 devices × 2 tensor-parallel sizes in 2 slices.
plan='"$SERVESIM" plan c13-bench-serve --slo ttft_p99_ms=2000,itl_p99_ms=100 --hardware h100-sxm,a100-80gb-sxm --tp 1,2 --target-rate 10 --fixed --replications 2 --jobs 1'
bash -c "$plan --format json" >"$tmp/plan.json" 2>/dev/null || bad "the unsharded plan fails"
slices "$plan --shard {}/2 --format json > '$tmp/plan-{}.json' 2>/dev/null" 2 || bad "a plan slice fails"
"$bin" merge "$tmp"/plan-{1,2}.json --format json | cmp -s - "$tmp/plan.json" &&
	ok "plan: 2 slices merged = the unsharded plan (json, byte for byte)" ||
	bad "plan: the merged slices differ from the unsharded plan"
exit $fail
