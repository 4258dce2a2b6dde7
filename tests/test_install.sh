#!/usr/bin/env bash
# What `cmake --install` and `cpack -G DEB` deliver (CTest tests install
# and package): the binary finding its installed data with no
# SERVESIM_DATA_DIR, the man page with an entry for every verb of
# `servesim --help`, bash completion offering the same verbs and the
# installed models and hardware, and the .deb holding all of them.
# Usage: test_install.sh BUILD_DIR [package]
set -u
build=${1:?usage: test_install.sh BUILD_DIR [package]}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL  $1"; fail=1; }
ok() { echo "ok    $1"; }

if [[ ${2:-} == package ]]; then
	command -v dpkg-deb >/dev/null || { echo "dpkg-deb not found: package test skipped"; exit 77; }
	(cd "$build" && cpack -G DEB -B "$tmp/pkg" >"$tmp/cpack.log" 2>&1) || { cat "$tmp/cpack.log"; exit 1; }
	deb=$(ls "$tmp"/pkg/servesim_*.deb 2>/dev/null | head -1)
	[[ -n $deb ]] || { bad "cpack made no .deb"; exit 1; }
	dpkg-deb -c "$deb" >"$tmp/list"
	for f in ./usr/bin/servesim ./usr/share/man/man1/servesim.1 ./usr/share/bash-completion/completions/servesim \
		./usr/share/servesim/models/llama-3.1-8b.json ./usr/share/servesim/hardware_profiles/h100-sxm.ini \
		./usr/share/servesim/scenarios/c13-bench-serve.ini ./usr/share/servesim/plots/cdf.gp; do
		grep -q " $f\$" "$tmp/list" && ok "deb holds $f" || bad "deb lacks $f"
	done
	dpkg-deb -f "$deb" Depends | grep -q libgsl && ok "deb depends on GSL" || bad "deb Depends: $(dpkg-deb -f "$deb" Depends)"
	exit $fail
fi

cmake --install "$build" --prefix "$tmp/usr" >"$tmp/install.log" 2>&1 || { cat "$tmp/install.log"; exit 1; }
bin=$tmp/usr/bin/servesim
[[ -x $bin ]] && ok "bin/servesim installed" || bad "bin/servesim missing"
# The installed data, found beside the binary, not the source tree's.
out=$(env -u SERVESIM_DATA_DIR "$bin" list 2>&1)
grep -qF "models ($tmp/usr/bin/../share/servesim/models)" <<<"$out" && ok "installed binary finds share/servesim" ||
	bad "installed binary's data: $(head -1 <<<"$out")"
env -u SERVESIM_DATA_DIR "$bin" run --set workload.num_prompts=5 --format json >/dev/null &&
	ok "installed binary runs the default scenario" || bad "installed binary cannot run"

man=$tmp/usr/share/man/man1/servesim.1
[[ -f $man ]] && ok "man page installed" || bad "man page missing"
verbs=$("$bin" --help | awk '/^  [a-z]/ { print $1 }')
for v in $verbs; do
	grep -q "^\.B $v\b" "$man" || bad "man page has no entry for verb $v"
done
grep -q "@PROJECT_VERSION@" "$man" && bad "man page version not substituted"
if command -v groff >/dev/null; then
	warn=$(groff -man -Tutf8 -ww "$man" 2>&1 >/dev/null)
	[[ -z $warn ]] && ok "man page renders without warnings" || bad "groff: $warn"
fi

comp=$tmp/usr/share/bash-completion/completions/servesim
[[ -f $comp ]] && ok "bash completion installed" || bad "bash completion missing"
complete_words() {   # the words completion offers for the command line "$@"
	bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 )); _servesim
		printf "%s\n" "${COMPREPLY[@]}"' _ "$comp" "$@" 2>/dev/null
}
got=$(complete_words "$bin" "" | grep -v -- --help | sort | tr '\n' ' ')
want=$(sort <<<"$verbs" | tr '\n' ' ')
[[ $got == "$want" ]] && ok "completion offers every verb" || bad "completion verbs: '$got', want '$want'"
complete_words "$bin" run --ha | grep -qx -- --hardware && ok "completion offers run's flags" || bad "no --hardware for run"
complete_words "$bin" run --hardware h100 | grep -qx h100-sxm && ok "completion offers hardware ids" || bad "no h100-sxm"
complete_words "$bin" plan --hardware h100-sxm,l4 | grep -qx h100-sxm,l40s && ok "completion extends comma lists" ||
	bad "no h100-sxm,l40s"
complete_words "$bin" run --model llama-3.1-8 | grep -qx llama-3.1-8b && ok "completion offers model ids" || bad "no llama-3.1-8b"
exit $fail
