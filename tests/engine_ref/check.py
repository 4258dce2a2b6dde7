#!/usr/bin/env python3
"""Every scenario in scenarios/ and scenarios/calibration/, run with the
engine's new timing off (engine.vllm_version = 0.8: synchronous scheduling,
no CUDA-graph padding, one step overhead, blocks hittable after their step),
must give the JSON servesim 1 gave, byte for byte but for "date" and
"servesim.version".

The references in refs/ were made by servesim 1's code (main before issue
18) on the pinned profiles in hw/ (their [efficiency] written out), so they
depend on the engine's behaviour, not on the class defaults. When the step
model itself changes (issue 11), refresh them once on purpose:

    python3 tests/engine_ref/check.py BUILD/sim/servesim --update

Usage: check.py SERVESIM [--update]. Exit 0 when every scenario matches.
"""
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
# What turns every issue-18 behaviour off (empty when the references are
# made by servesim 1 itself, which knows no such key).
LEGACY = os.environ.get("ENGINE_REF_LEGACY", "engine.vllm_version=0.8")


def scenarios():
    for d in ("scenarios", os.path.join("scenarios", "calibration")):
        for f in sorted(os.listdir(os.path.join(ROOT, d))):
            if f.endswith(".ini"):
                yield os.path.join(d, f)


def hardware_of(path):
    with open(os.path.join(ROOT, path)) as f:
        for line in f:
            m = re.match(r"\s*hardware\s*=\s*(\S+)", line)
            if m:
                return m.group(1)
    return "h100-sxm"  # the built-in default


def run(binary, path):
    hw = os.path.join(HERE, "hw", hardware_of(path) + ".ini")
    cmd = [os.path.abspath(binary), "run", path, "--format", "json", "--set",
           "run.hardware=" + os.path.relpath(hw, ROOT)]
    if LEGACY:
        cmd += ["--set", LEGACY]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, cwd=ROOT,
                         env=dict(os.environ, SERVESIM_DATA_DIR=ROOT)).stdout
    j = json.loads(out)
    j.pop("date", None)
    j.get("servesim", {}).pop("version", None)  # which servesim wrote it (issue 16)
    return json.dumps(j, indent=1, sort_keys=False) + "\n"


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: check.py SERVESIM [--update]")
    binary, update = sys.argv[1], "--update" in sys.argv[2:]
    bad = 0
    for path in scenarios():
        ref = os.path.join(HERE, "refs", os.path.basename(path)[:-4] + ".json")
        got = run(binary, path)
        if update:
            with open(ref, "w") as f:
                f.write(got)
            continue
        with open(ref) as f:
            want = f.read()
        if got != want:
            bad += 1
            gl, wl = got.splitlines(), want.splitlines()
            first = next((i for i, (a, b) in enumerate(zip(gl, wl)) if a != b), min(len(gl), len(wl)))
            print(f"{path}: differs from {os.path.relpath(ref, ROOT)} at line {first + 1}:\n"
                  f"  want {wl[first] if first < len(wl) else '<end>'}\n"
                  f"  got  {gl[first] if first < len(gl) else '<end>'}")
    if not update:
        print(f"{sum(1 for _ in scenarios()) - bad} scenarios match, {bad} differ")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
