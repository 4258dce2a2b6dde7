#!/usr/bin/env bash
# The per-verb guides (CTest test docs_verbs): every verb `servesim --help`
# lists has a guide docs/verbs/VERB.md that says the question it answers
# ("**The question.**"), has an "## Example" and a "## What the output
# means", is listed in docs/verbs/README.md, and has an entry in the man
# page (docs/servesim.1, `.B VERB`); no guide is left for a verb that is
# gone; and each guide's example block (the first ```sh block after
# "## Example") runs, line by line, in an empty folder with this build's
# servesim first on PATH, each line exiting 0 and the block leaving no
# stderr line that starts "servesim" with "error".
# Usage: test_docs_verbs.sh SERVESIM SOURCE_DIR
set -u
bin=${1:?usage: test_docs_verbs.sh SERVESIM SOURCE_DIR}
src=${2:?usage: test_docs_verbs.sh SERVESIM SOURCE_DIR}
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL  $1"; fail=1; }
ok() { echo "ok    $1"; }

mkdir -p "$tmp/bin" && ln -s "$bin" "$tmp/bin/servesim"
verbs=$("$bin" --help | awk '/^  [a-z]/ { print $1 }')
[[ -n $verbs ]] || { bad "servesim --help lists no verbs"; exit 1; }
guides=$src/docs/verbs

for v in $verbs; do
	g=$guides/$v.md
	if [[ ! -f $g ]]; then
		bad "$v: no guide docs/verbs/$v.md"
		continue
	fi
	for part in '**The question.**' '## Example' '## What the output means'; do
		grep -qF -- "$part" "$g" || bad "$v: docs/verbs/$v.md has no '$part'"
	done
	grep -qF "]($v.md)" "$guides/README.md" || bad "$v: docs/verbs/README.md does not link $v.md"
	grep -qE "^\.B $v( |\$)" "$src/docs/servesim.1" || bad "$v: the man page has no '.B $v' entry"
	# The example block, one command a line (a trailing \ continues it).
	awk '/^## Example/ { want = 1; next } want && /^```sh/ { on = 1; next }
	     on && /^```/ { exit } on { print }' "$g" >"$tmp/$v.sh"
	[[ -s $tmp/$v.sh ]] || { bad "$v: docs/verbs/$v.md has no example block"; continue; }
	mkdir -p "$tmp/run-$v"
	if (cd "$tmp/run-$v" && PATH=$tmp/bin:$PATH bash -e -o pipefail "$tmp/$v.sh" >"$tmp/$v.out" 2>"$tmp/$v.err"); then
		if grep -qiE '^servesim.*error' "$tmp/$v.err"; then
			bad "$v: the example prints an error: $(grep -iE '^servesim.*error' "$tmp/$v.err" | head -1)"
		else
			ok "$v: guide, man page entry, example runs"
		fi
	else
		bad "$v: the example in docs/verbs/$v.md fails: $(tail -2 "$tmp/$v.err")"
	fi
done
for g in "$guides"/*.md; do
	v=$(basename "$g" .md)
	[[ $v == README ]] && continue
	grep -qx "$v" <<<"$verbs" || bad "docs/verbs/$v.md is the guide of no verb servesim lists"
done
exit $fail
