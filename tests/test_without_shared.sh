#!/usr/bin/env bash
# Tests that read ../shared skip, saying so, on a clone without it (issue
# 15): each BINARY here is a test built with its ../shared folder pointed
# at a path that does not exist. Each must pass (exit 0) and print
# skip_without_dir's message (tests/testutil.h).
#   test_without_shared.sh BINARY…
status=0
for bin in "$@"; do
	err=$("$bin" 2>&1 >/dev/null)
	rc=$?
	if [ "$rc" -ne 0 ]; then
		echo "FAIL: $bin exits $rc without ../shared" >&2
		status=1
	elif ! grep -q "skipped: .* is missing (../shared is not beside the source tree)" <<<"$err"; then
		echo "FAIL: $bin: no skip message without ../shared; stderr: $err" >&2
		status=1
	else
		echo "ok: $bin skips without ../shared ($(grep -c 'skipped: ' <<<"$err") test(s))"
	fi
done
exit $status
