"""Runs `servesim run` for the accuracy scripts of this folder.

run_json(binary, args, sets) runs `BINARY run ARGS… --format json --set S…`
in the repository root and returns (the parsed JSON, None) or (None, a
one-line error naming the command): a failed start, a timeout, a non-zero
exit (with the end of stderr) or output that is not JSON.
"""
import json
import os
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run_json(binary, args=(), sets=(), timeout=120):
    cmd = [binary, "run"] + list(args) + ["--format", "json"]
    for kv in sets:
        cmd += ["--set", kv]
    try:
        p = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as ex:
        return None, "%s: %s" % (" ".join(cmd), ex)
    if p.returncode != 0:
        return None, "%s: exit %d: %s" % (" ".join(cmd), p.returncode, p.stderr.strip()[-500:])
    try:
        return json.loads(p.stdout), None
    except ValueError as ex:
        return None, "%s: bad JSON: %s" % (" ".join(cmd), ex)
