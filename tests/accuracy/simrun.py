"""Runs `servesim run` for the accuracy scripts of this folder.

run_json(binary, args, sets) runs `BINARY run ARGS… --format json --set S…`
in the repository root and returns (the parsed JSON, None) or (None, a
one-line error naming the command): a failed start, a timeout, a non-zero
exit (with the end of stderr) or output that is not JSON.

parse_check_args(argv, doc, name, flags, values) reads the `[--json]
[BINARY]` command line the check scripts share, plus a script's own
options: flags maps an option to the key it sets True, values an option
to (key, what its argument is, whether it is a list to append to); a bad
one exits 2 with one line and the usage part of the script's doc.

counted_len(ttft, itl, e2e) is the mean output length a measured itl_mean
was derived with; derived_itl(ttft, e2e, out_len) derives an ITL that way.
"""
import json
import os
import subprocess
import sys

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


def counted_len(ttft, itl, e2e):
    """The mean output length the client counted, the one the measured
    itl_mean = (e2e - ttft) / (length - 1) was derived with (means, ms).
    It is not always what vLLM generated: inference-perf counts a streamed
    completion by re-tokenizing its text (output_len =
    tokenizer.count_tokens(output_text), inference_perf/apis/completion.py),
    while vLLM generated max_tokens under ignore_eos. For Llama-2-7B the
    count is 0.78-0.85 of max_tokens (193.7 of 247 ... 1119.8 of 1448), for
    the other models 0.99-1.0."""
    return (e2e - ttft) / itl + 1 if itl else None


def derived_itl(ttft, e2e, out_len):
    """(e2e - ttft) / (out_len - 1), the measurements' derivation; None
    where a part is missing or out_len <= 1."""
    if ttft is None or e2e is None or not out_len or out_len <= 1:
        return None
    return (e2e - ttft) / (out_len - 1)


def check_usage(doc, name, msg):
    sys.stderr.write("%s: %s\n%s" % (name, msg, doc.split("usage:", 1)[1].split("Exits")[0]))
    sys.exit(2)


def parse_check_args(argv, doc, name, flags=None, values=None):
    def usage(msg):
        check_usage(doc, name, msg)

    flags, values = flags or {}, values or {}
    opts = {"binary": None, "json": False}
    for key in flags.values():
        opts[key] = False
    for key, _, is_list in values.values():
        opts[key] = [] if is_list else None
    i = 0
    while i < len(argv):
        a = argv[i]
        i += 1
        if a == "--json":
            opts["json"] = True
        elif a in flags:
            opts[flags[a]] = True
        elif a in values:
            key, what, is_list = values[a]
            if i >= len(argv):
                usage("%s needs %s" % (a, what))
            if is_list:
                opts[key].append(argv[i])
            else:
                opts[key] = argv[i]
            i += 1
        elif a in ("-h", "--help"):
            sys.stdout.write(doc)
            sys.exit(0)
        elif a.startswith("-"):
            usage("unknown option " + a)
        elif opts["binary"] is None:
            opts["binary"] = os.path.abspath(a)
        else:
            usage("unexpected argument " + a)
    if opts["binary"] is None:
        opts["binary"] = os.path.join(ROOT, "build", "sim", "servesim")
    if not os.access(opts["binary"], os.X_OK):
        usage("no servesim binary at %s (build first, or pass its path)" % opts["binary"])
    return opts
