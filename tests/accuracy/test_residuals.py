#!/usr/bin/env python3
"""residuals.py on bad input (CTest residuals_input): each broken copy of
a small calibration folder (one experiment, two stages) gives exit 2 and
exactly one line on stderr naming the file, the line and the column, and
nothing on stdout; fit() on no points returns None instead of dividing by
zero, and on points of a known line gives that line.

The bad rows are checked before any simulation runs, so the test needs
the binary only to pass residuals.py's usage check.

usage: test_residuals.py SERVESIM
"""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import residuals  # noqa: E402

HEAD = ("experiment,model,hardware,tp,precision,max_num_batched_tokens,max_num_seqs,max_model_len,"
        "block_size,gpu_memory_utilization,kv_cpu_offload_gib,workload,stages,num_prefix_groups,"
        "system_prompt_len,question_len,output_len_target,measured_prompt_len,"
        "mean_output_len_per_stage,gpu_kv_blocks,cpu_kv_blocks")
ROW = {"experiment": "x1", "model": "m", "hardware": "H100-SXM-80GB", "tp": "1", "precision": "BF16",
       "max_num_batched_tokens": "2048", "max_num_seqs": "128", "max_model_len": "4096",
       "block_size": "16", "gpu_memory_utilization": "0.9", "kv_cpu_offload_gib": "0",
       "workload": "w", "stages": "2.5:600;6.0:600", "num_prefix_groups": "9",
       "system_prompt_len": "100", "question_len": "447", "output_len_target": "248",
       "measured_prompt_len": "", "mean_output_len_per_stage": "s0=246.9;s1=247.0",
       "gpu_kv_blocks": "8253", "cpu_kv_blocks": "0"}
METRICS = ("itl_mean", "ttft_mean", "e2e_mean")

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL: " + what)


def write_folder(d, row, measured):
    with open(os.path.join(d, residuals.EXPERIMENTS_CSV), "w") as f:
        f.write(HEAD + "\n" + ",".join(row[k] for k in HEAD.split(",")) + "\n")
    with open(os.path.join(d, residuals.MEASURED_CSV), "w") as f:
        f.write("experiment,stage,metric,value_ms\n")
        for line in measured:
            f.write(line + "\n")


def good_measured():
    return ["x1,%d,%s,%s" % (s, m, v) for s in (0, 1) for m, v in zip(METRICS, ("12.5", "80.0", "3200.0"))]


def expect_one_line(binary, row, measured, needles, what):
    with tempfile.TemporaryDirectory(prefix="servesim-residuals-") as d:
        write_folder(d, row, measured)
        p = subprocess.run([sys.executable, os.path.join(HERE, "residuals.py"), binary, "--calibration", d],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                           timeout=60)
        lines = p.stderr.splitlines()
        check(p.returncode == 2, "%s: exit %d, expected 2 (stderr %r)" % (what, p.returncode, p.stderr))
        check(len(lines) == 1, "%s: %d stderr lines, expected one: %r" % (what, len(lines), p.stderr))
        check(p.stdout == "", "%s: stdout not empty: %r" % (what, p.stdout[:200]))
        for n in needles:
            check(n.replace("DIR", d) in p.stderr, "%s: stderr lacks %r: %r" % (what, n, p.stderr))


def main(argv):
    if len(argv) != 1:
        sys.stderr.write(__doc__.split("usage:")[1])
        return 2
    binary = argv[0]
    exp = "DIR/" + residuals.EXPERIMENTS_CSV
    meas = "DIR/" + residuals.MEASURED_CSV
    # Line 2 is the one data row of the experiments file.
    expect_one_line(binary, dict(ROW, tp=""), good_measured(), [exp + ":2: tp: expected an integer, got ''"],
                    "empty tp")
    expect_one_line(binary, dict(ROW, question_len="many"), good_measured(),
                    [exp + ":2: question_len: expected a number, got 'many'"], "question_len not a number")
    expect_one_line(binary, dict(ROW, stages=""), good_measured(), [exp + ":2: stages: expected"],
                    "empty stages")
    expect_one_line(binary, dict(ROW, mean_output_len_per_stage="s0=246.9;s1="), good_measured(),
                    [exp + ":2: mean_output_len_per_stage: expected a number, got ''"],
                    "a stage's output length missing")
    # The measured file: line 4 is stage 0's e2e_mean (header, itl, ttft, e2e).
    m = good_measured()
    m[2] = "x1,0,e2e_mean,"
    expect_one_line(binary, ROW, m, [meas + ":4: value_ms: expected a number, got ''"], "empty value_ms")
    m = good_measured()
    del m[3]   # stage 1's itl_mean
    expect_one_line(binary, ROW, m, [meas + ": experiment x1 stage 1: no itl_mean row", exp + ":2"],
                    "a measurement missing")
    with tempfile.TemporaryDirectory(prefix="servesim-residuals-") as d:
        p = subprocess.run([sys.executable, os.path.join(HERE, "residuals.py"), binary, "--calibration", d],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=60)
        check(p.returncode == 2 and len(p.stderr.splitlines()) == 1 and residuals.EXPERIMENTS_CSV in p.stderr,
              "empty folder: exit %d, stderr %r" % (p.returncode, p.stderr))
    # fit(): no points is None (it divided by zero); y = 1 + 2x exactly is
    # a = 1, b = 2, r² = 1 (to rounding: 1e-12); a constant y has no slope.
    check(residuals.fit([], []) is None, "fit([], []) is not None")
    a, b, r2 = residuals.fit([0.0, 1.0, 2.0, 5.0], [1.0, 3.0, 5.0, 11.0])
    check(abs(a - 1) < 1e-12 and abs(b - 2) < 1e-12 and abs(r2 - 1) < 1e-12, "fit of y = 1 + 2x: %r" % ((a, b, r2),))
    check(residuals.fit([1.0, 2.0], [4.0, 4.0]) == (4.0, 0.0, 0.0), "fit of a constant")
    if failures:
        print("%d failures" % len(failures))
        return 1
    print("residuals_input: 6 bad inputs, one line each; fit() on none, a line, a constant")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
