#!/usr/bin/env python3
"""The arrows between sim/'s folders run one way (docs/internals.md): a
folder includes only folders below it in LAYERS. Reads every #include "…"
of sim/*/*.[ch] and names each include that points up.

Usage: check.py [SIM_DIR]. Exit 0 when every arrow points down.
"""
import os
import re
import sys

# Top to bottom; a folder may include any folder after it.
LAYERS = ["cli", "calib", "report", "plan", "run", "workload", "cluster", "engine",
          "perf", "metrics", "hw", "model", "base"]


def main():
    sim = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..", "sim")
    home = {}
    for d in LAYERS:
        for f in os.listdir(os.path.join(sim, d)):
            if f.endswith(".h"):
                home[f] = d
    folders = sorted(d for d in os.listdir(sim) if os.path.isdir(os.path.join(sim, d)) and d != "probe")
    unknown = [d for d in folders if d not in LAYERS]
    bad = [f"sim/{d}: a folder docs/internals.md's layers do not place" for d in unknown]
    for d in LAYERS:
        for f in sorted(os.listdir(os.path.join(sim, d))):
            if not f.endswith((".c", ".h")):
                continue
            with open(os.path.join(sim, d, f)) as fh:
                for n, line in enumerate(fh, 1):
                    m = re.match(r'\s*#include "([^"]+)"', line)
                    t = m and home.get(m.group(1))
                    if t and t != d and LAYERS.index(t) < LAYERS.index(d):
                        bad.append(f"sim/{d}/{f}:{n}: includes {m.group(1)} of sim/{t}, a layer above")
    for b in bad:
        print(b)
    print(f"{len(bad)} arrows point up")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
