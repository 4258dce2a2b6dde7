#!/usr/bin/env python3
"""The byte-identical guard: every scenario in scenarios/ and
scenarios/calibration/ (the 15 runs of ../shared/calibration), run with its
own defaults (the class profiles, the current engine version), must give
the output recorded in refs/, byte for byte:

  refs/NAME.json    `run NAME --format json` (stdout), servesim.version masked
  refs/NAME.txt     `run NAME --format text`
  refs/out.sha256   SHA-256 of `run NAME --format prom` (NAME/metrics.prom)
                    and of each file `run NAME --out DIR` writes
                    (requests.csv, timeseries.csv, itl_histogram.csv,
                    openmetrics.txt): large, so hashed, not stored

A refactor (issue 20) must leave every one unchanged. A change that means to
change outputs (a step-model fit, an engine behaviour) refreshes them once,
on purpose, and says so in its commit message:

    python3 tests/golden/check.py BUILD/sim/servesim --update

Usage: check.py SERVESIM [--update]. Exit 0 when everything matches; else
each difference is named (file and first differing line).
"""
import concurrent.futures
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
REFS = os.path.join(HERE, "refs")
OUT_FILES = ("requests.csv", "timeseries.csv", "itl_histogram.csv", "openmetrics.txt")


def scenarios():
    for d in ("scenarios", os.path.join("scenarios", "calibration")):
        for f in sorted(os.listdir(os.path.join(ROOT, d))):
            if f.endswith(".ini"):
                yield os.path.join(d, f)


def servesim(binary, args):
    return subprocess.run([os.path.abspath(binary)] + args, check=True, capture_output=True,
                          text=True, cwd=ROOT, env=dict(os.environ, SERVESIM_DATA_DIR=ROOT)).stdout


def mask_version(js):
    """servesim.version says which build wrote it, not what it computed."""
    v = json.loads(js).get("servesim", {}).get("version")
    return js.replace('"version": "%s"' % v, '"version": "<version>"') if v else js


def outputs(binary, path):
    """{ref file name: content} for one scenario, and its --out hashes."""
    name = os.path.basename(path)[:-4]
    got = {}
    with tempfile.TemporaryDirectory(prefix="servesim-golden-") as tmp:
        out = os.path.join(tmp, "out")
        got[name + ".json"] = mask_version(servesim(binary, ["run", path, "--format", "json", "--out", out]))
        hashes = []
        for f in OUT_FILES:
            with open(os.path.join(out, f), "rb") as fh:
                hashes.append("%s  %s/%s\n" % (hashlib.sha256(fh.read()).hexdigest(), name, f))
    got[name + ".txt"] = servesim(binary, ["run", path, "--format", "text"])
    prom = servesim(binary, ["run", path, "--format", "prom"]).encode()
    hashes.append("%s  %s/metrics.prom\n" % (hashlib.sha256(prom).hexdigest(), name))
    return got, hashes


def first_difference(path, got, want):
    gl, wl = got.splitlines(), want.splitlines()
    i = next((i for i, (a, b) in enumerate(zip(gl, wl)) if a != b), min(len(gl), len(wl)))
    return (f"{path}: differs at line {i + 1}:\n"
            f"  want {wl[i] if i < len(wl) else '<end>'}\n"
            f"  got  {gl[i] if i < len(gl) else '<end>'}")


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: check.py SERVESIM [--update]")
    binary, update = sys.argv[1], "--update" in sys.argv[2:]
    paths = list(scenarios())
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(lambda p: outputs(binary, p), paths))
    files, hashes = {}, []
    for got, h in results:
        files.update(got)
        hashes += h
    files["out.sha256"] = "".join(hashes)
    if update:
        os.makedirs(REFS, exist_ok=True)
        for stale in set(os.listdir(REFS)) - set(files):
            os.remove(os.path.join(REFS, stale))
        for f, text in files.items():
            with open(os.path.join(REFS, f), "w") as fh:
                fh.write(text)
        print(f"refreshed {len(files)} files in {os.path.relpath(REFS, ROOT)}")
        return
    bad = 0
    for f, text in sorted(files.items()):
        ref = os.path.join(REFS, f)
        if not os.path.exists(ref):
            bad += 1
            print(f"{os.path.relpath(ref, ROOT)}: missing (new scenario? refresh with --update)")
            continue
        with open(ref) as fh:
            want = fh.read()
        if text != want:
            bad += 1
            print(first_difference(os.path.relpath(ref, ROOT), text, want))
    for stale in sorted(set(os.listdir(REFS)) - set(files)):
        bad += 1
        print(f"{os.path.relpath(os.path.join(REFS, stale), ROOT)}: no scenario gives it any more")
    print(f"{len(paths)} scenarios, {len(files)} outputs: {len(files) - bad} match, {bad} differ"
          + ("; if the change is meant, refresh: python3 tests/golden/check.py SERVESIM --update" if bad else ""))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
