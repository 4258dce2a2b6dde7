#!/usr/bin/env bash
# docs/keys.md is `servesim keys --format md` (CTest test keys_doc): the key
# reference is generated from the key tables the parsers bind, and the
# committed copy must not drift from them.
# Usage: test_keys_doc.sh SERVESIM SOURCE_DIR
set -u
bin=${1:?usage: test_keys_doc.sh SERVESIM SOURCE_DIR}
src=${2:?usage: test_keys_doc.sh SERVESIM SOURCE_DIR}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$bin" keys --format md >"$tmp/keys.md" || { echo "FAIL  servesim keys --format md exits $?"; exit 1; }
[[ $(wc -l <"$tmp/keys.md") -gt 100 ]] || { echo "FAIL  servesim keys printed only $(wc -l <"$tmp/keys.md") lines"; exit 1; }
# Every key of the built-in scenario's sections is in it (the reference
# cannot lose a table).
for k in '`random_input_len`' '`max_num_batched_tokens`' '`ttft_ms`' '`replicas`' '`bandwidth_gb_s`'; do
	grep -qF "| $k |" "$tmp/keys.md" || { echo "FAIL  servesim keys lacks $k"; exit 1; }
done
if ! diff -u "$src/docs/keys.md" "$tmp/keys.md" >"$tmp/diff"; then
	head -40 "$tmp/diff"
	echo "FAIL  docs/keys.md differs from servesim keys --format md (the key tables changed)."
	echo "      Refresh it: $bin keys --format md > $src/docs/keys.md"
	exit 1
fi
echo "ok    docs/keys.md is servesim keys --format md"
