#!/usr/bin/env python3
"""Residual anatomy of servesim's vLLM timing on the 15 H100 runs (issue 11,
issue 18): per run and load stage, the measured against the simulated mean
ITL and TTFT, set beside the load the stage put on the engine, and which of
those quantities the ITL residual follows. Nothing is fitted here: it reads
what the step model leaves.

For each stage of each experiment (../shared/calibration) it runs
  servesim run SCENARIO            the whole run: the stage's simulated ITL
                                   and TTFT, compared with the measured ones;
  servesim explain SCENARIO --set workload.stages=RATE:SECONDS
                                   the stage alone: where its mean ITL and
                                   TTFT went (weights, KV reads, prefill
                                   chunks sharing a step, step overhead;
                                   queue, batch queue, own prefill);
  servesim run (the same stage alone): engine steps and requests, whence the
                                   share of steps that carry a prefill chunk,
                                   taken as requests ÷ steps: exact when each
                                   prompt is one chunk (a ~600-token prompt
                                   at these budgets) and no two share a step;
                                   a lower bound for multi-chunk prompts,
                                   whose chunks go into several steps; and
                                   the chunk's size (the prompt tokens the
                                   prefix cache did not hold, per request);
  servesim explain --batch         for each dense stage, one decode step
                                   of its running requests with and without
                                   such a chunk: what the chunk adds, and
                                   what it would add were its dense GEMMs at
                                   the best BF16 rate measured on an H100 SXM
                                   (BEST_BF16_TFLOPS), the floor no GEMM row
                                   fitted to kernel data can go below.
and derives the stage's load from the measurements: running requests
(Little's law: rate × measured mean E2E), the mean context a decode step
reads (prompt + half the output), the output length.

Then, over the dense TP1 stages and over every dense stage (the MoE runs
are listed, not regressed: their rows are issue 11's MoE work), a least
squares line of the ITL residual (measured − simulated, in % of measured)
on one quantity at a time, with its r².

usage: residuals.py [SERVESIM] [--json] [--calibration DIR]
  --calibration   the folder holding the two CSVs (default ../shared/calibration
                  next to the repo, else shared/calibration inside it)
Exits 0, 1 if a simulation fails, 2 on bad usage or missing data: a value
the rows need that is missing or not a number is one line naming the
file, its line and the column.
"""
import csv
import json
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

from simrun import ROOT, counted_len, parse_check_args, run_json
from vllm_h100 import load_csvs, sim_metrics

CAL = next((c for c in (os.path.join(os.path.dirname(ROOT), "shared", "calibration"),
                        os.path.join(ROOT, "shared", "calibration"))
            if os.path.isfile(os.path.join(c, "vllm_h100_experiments.csv"))), None)
EXPERIMENTS_CSV, MEASURED_CSV = "vllm_h100_experiments.csv", "vllm_h100_measured.csv"
MEASURED_METRICS = ("itl_mean", "ttft_mean", "e2e_mean")


class BadInput(Exception):
    """One line: PATH:LINE: COLUMN: expected WHAT, got 'VALUE'."""


def _number(path, line, key, text, optional=False, integer=False):
    if optional and (text is None or text.strip() == ""):
        return 0.0
    try:
        v = int(text) if integer else float(text)
    except (TypeError, ValueError):
        v = None
    if v is None or v != v or v in (float("inf"), float("-inf")):
        raise BadInput("%s:%d: %s: expected %s, got '%s'" % (
            path, line, key, "an integer" if integer else "a number", "" if text is None else text))
    return v


def _pairs(path, line, key, text, sep, check_key):
    """'A<sep>B;A<sep>B…' with each B a number (and each A too where
    check_key)."""
    out = []
    for part in (text or "").split(";"):
        k, found, v = part.partition(sep)
        if not found or not k.strip():
            raise BadInput("%s:%d: %s: expected 'X%sNUMBER;…', got '%s'" % (path, line, key, sep, text or ""))
        if check_key:
            _number(path, line, key, k)
        _number(path, line, key, v)
        out.append((k.strip(), v))
    return out


def check_inputs(cal):
    """Reads the two CSVs of cal as stage_rows will use them. Returns
    (experiments, measured) as vllm_h100.load_csvs does; raises BadInput
    at the first missing or malformed value the rows need, and for a
    stage without its itl_mean, ttft_mean or e2e_mean row."""
    got = {}
    path = os.path.join(cal, MEASURED_CSV)
    with open(path, newline="") as f:
        rd = csv.DictReader(f)
        for row in rd:
            key = (row.get("experiment"), _number(path, rd.line_num, "stage", row.get("stage"), integer=True),
                   row.get("metric"))
            _number(path, rd.line_num, "value_ms", row.get("value_ms"))
            got[key] = True
    path = os.path.join(cal, EXPERIMENTS_CSV)
    with open(path, newline="") as f:
        rd = csv.DictReader(f)
        for row in rd:
            ln = rd.line_num
            if not (row.get("experiment") or "").strip():
                raise BadInput("%s:%d: experiment: expected a name, got ''" % (path, ln))
            _number(path, ln, "tp", row.get("tp"), integer=True)
            for k in ("system_prompt_len", "question_len", "output_len_target"):
                _number(path, ln, k, row.get(k))
            for k in ("measured_prompt_len", "kv_cpu_offload_gib"):
                _number(path, ln, k, row.get(k), optional=True)
            stages = _pairs(path, ln, "stages", row.get("stages"), ":", True)
            _pairs(path, ln, "mean_output_len_per_stage", row.get("mean_output_len_per_stage"), "=", False)
            for s in range(len(stages)):
                for m in MEASURED_METRICS:
                    if (row["experiment"], s, m) not in got:
                        raise BadInput("%s: experiment %s stage %d: no %s row (%s:%d names the stage)" % (
                            os.path.join(cal, MEASURED_CSV), row["experiment"], s, m, path, ln))
    return load_csvs(cal)


# torch.matmul BF16 on an H100 SXM at 8192^3 (zzc0721/torch-performance-test-data
# #79; 788.7 at 4096^3): the best dense BF16 rate measured on the part, a
# ceiling for a chunk's GEMMs at M = 500-650 (vLLM PR #49363's H100 table
# runs below the roofline at M <= 256; sim/perf/backend.c).
BEST_BF16_TFLOPS = 797.5


def scenario_prompt(eid):
    """(shared prefix, whole prompt) in tokens, as the calibration scenario
    simulates them (vLLM's re-tokenized count, docs/accuracy.md)."""
    text = open(os.path.join(ROOT, "scenarios", "calibration", eid + ".ini")).read()
    pre = int(re.search(r"^random_prefix_len = (\d+)", text, re.M).group(1))
    inp = int(re.search(r"^random_input_len = (\d+)", text, re.M).group(1))
    return pre, pre + inp


def batch_ms(binary, model, tp, batch):
    """(step time, {operator: row}) of `explain --batch` on the H100 SXM at
    tensor parallel tp, and None; or None and a one-line error naming the
    command."""
    cmd = [binary, "explain", "--batch", batch, "--model", model, "--hardware", "h100-sxm", "--tp", str(tp),
           "--format", "json"]
    p = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, timeout=60)
    if p.returncode != 0:
        return None, "%s: exit %d: %s" % (" ".join(cmd), p.returncode, p.stderr.strip()[-300:])
    d = json.loads(p.stdout)
    return (sum(o["time_ms"] for o in d["operators"]), {o["operator"]: o for o in d["operators"]}), None


def chunk_cost(binary, r, model):
    """What one prefill chunk of r's size adds to a decode step of r's
    running requests (simulated), and what it would add at the best
    measured GEMM rate (the dense GEMMs at BEST_BF16_TFLOPS, never below
    the decode step's own weight reads; every other operator as
    simulated), and the part of it that is the all-reduces (TP > 1). Sets
    r's chunk_* fields; returns None or an error line."""
    dec = "decode:%dx%d" % (max(1, round(r["running"])), round(r["context"]))
    a, err = batch_ms(binary, model, r["tp"], dec)
    if err:
        return err
    b, err = batch_ms(binary, model, r["tp"], "prefill:%d@%d,%s" % (round(r["chunk"]), r["cached"], dec))
    if err:
        return err
    (t0, o0), (t1, o1) = a, b
    d0, d1 = o0["dense matmuls"], o1["dense matmuls"]
    floor = max(d1["flops"] / (BEST_BF16_TFLOPS * 1e12) * 1e3, d0["time_ms"])
    r["chunk_adds_ms"] = t1 - t0
    r["chunk_gemm_tflops"] = d1["flops"] / d1["time_ms"] / 1e9
    r["chunk_adds_floor_ms"] = (t1 - t0) - (d1["time_ms"] - floor)
    ar0, ar1 = o0.get("all-reduce"), o1.get("all-reduce")
    r["chunk_allreduce_ms"] = (ar1["time_ms"] - ar0["time_ms"]) if ar0 and ar1 else 0.0
    return None


def explain_json(binary, scen, stage_spec):
    cmd = [binary, "explain", scen, "--set", "workload.stages=" + stage_spec, "--format", "json"]
    p = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, timeout=120)
    if p.returncode != 0:
        return None, "%s: exit %d: %s" % (" ".join(cmd), p.returncode, p.stderr.strip()[-300:])
    return json.loads(p.stdout), None


def stage_rows(binary, exp, measured):
    eid = exp["experiment"]
    scen = os.path.join("scenarios", "calibration", eid + ".ini")
    whole, err = run_json(binary, [scen])
    if err:
        return None, err
    blocks = {int(s["stage"]): s for s in whole.get("stages") or []}
    specs = exp["stages"].split(";")
    outs = dict(kv.split("=") for kv in exp["mean_output_len_per_stage"].split(";"))
    prefix, prompt = scenario_prompt(eid)
    rows = []
    for s, spec in enumerate(specs):
        rate = float(spec.split(":")[0])
        ex, err = explain_json(binary, scen, spec)
        if err:
            return None, err
        alone, err = run_json(binary, [scen], ["workload.stages=" + spec])
        if err:
            return None, err
        sm = sim_metrics(blocks[s])
        m = {k: measured[(eid, s, k)] for k in MEASURED_METRICS}   # check_inputs: present
        if sm["itl_mean"] is None or sm["ttft_mean"] is None:
            return None, "%s stage %d: the simulation gave no mean ITL or TTFT" % (eid, s)
        # Per generated token, as the step parts are: the measured ITL was
        # derived with the client's count (simrun.counted_len), the
        # simulated one with the tokens the scenario generates.
        cnt = counted_len(m["ttft_mean"], m["itl_mean"], m["e2e_mean"])
        if cnt and sm["output_len"] and sm["output_len"] > 1:
            m["itl_mean"] *= (cnt - 1) / (sm["output_len"] - 1)
        out = sm["output_len"] or float(outs.get("s%d" % s, exp["output_len_target"]))   # generated
        sv = alone["servesim"]
        steps = sv["engine_steps"] or 1
        done = alone["completed"] or 1
        ip, tp = ex["mean_itl_breakdown"], ex["mean_ttft_breakdown"]
        rows.append({
            "experiment": eid, "stage": s, "tp": int(exp["tp"]), "rate": rate,
            "moe": "scout" in eid, "offload": float(exp["kv_cpu_offload_gib"] or 0) > 0,
            "running": rate * m["e2e_mean"] / 1000.0, "context": prompt + out / 2, "output": out,
            "mixed_share": min(1.0, alone["completed"] / steps),
            # prompt tokens computed per request: the chunk (one a request)
            "chunk": (sv["prefix_cache_queries"] - sv["prefix_cache_hits"]) / done,
            "cached": sv["prefix_cache_hits"] // done // 16 * 16,
            "model": exp["model"],
            "itl_meas": m["itl_mean"], "itl_sim": sm["itl_mean"],
            "ttft_meas": m["ttft_mean"], "ttft_sim": sm["ttft_mean"],
            "weights_ms": ip["weights_ms"], "kv_ms": ip["kv_cache_ms"],
            "sharing_ms": ip["prefill_sharing_ms"], "overhead_ms": ip["overhead_ms"],
            "prefill_ms": tp["own_prefill_ms"], "batch_queue_ms": tp["batch_queue_ms"],
            "queue_ms": tp["queue_ms"], "api_ms": tp["api_overhead_ms"],
            "output_path_ms": tp["output_path_ms"], "shared_ms": tp["shared_steps_ms"],
        })
    for r in rows:
        r["itl_res_ms"] = r["itl_meas"] - r["itl_sim"]
        r["itl_res_pct"] = 100.0 * r["itl_res_ms"] / r["itl_meas"]
        r["ttft_res_ms"] = r["ttft_meas"] - r["ttft_sim"]
        r["ttft_res_pct"] = 100.0 * r["ttft_res_ms"] / r["ttft_meas"]
        # The request's own prefill step as the measurements imply it:
        # under async scheduling a request waits the rest of the step it
        # arrived in (half a step on average) and one whole step (the batch
        # queue), so TTFT = request path + 1.5 steps + its own step + output
        # path; a step taken as the measured ITL (an upper bound: mixed steps
        # are in it), the two paths as simulated.
        r["prefill_implied_ms"] = (r["ttft_meas"] - r["api_ms"] - r["output_path_ms"] -
                                   1.5 * r["itl_meas"])
        r["prefill_sim_ms"] = r["prefill_ms"] + r["shared_ms"]
        # The engine-core CPU a running request could cost before async
        # scheduling stopped hiding it: the simulated GPU step (weights, KV,
        # prefill sharing) less the fixed 250 us, over the running requests.
        r["cpu_hidden_up_to_us"] = 1000.0 * (r["weights_ms"] + r["kv_ms"] + r["sharing_ms"] -
                                             0.25) / max(1.0, r["running"])
    return rows, None


def fit(xs, ys):
    """Least squares y = a + b x; returns (a, b, r²), or None for no points
    (b and r² are 0 where x or y does not vary)."""
    n = len(xs)
    if n == 0:
        return None
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    syy = sum((y - my) ** 2 for y in ys)
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
    if sxx == 0 or syy == 0:
        return my, 0.0, 0.0
    b = sxy / sxx
    return my - b * mx, b, sxy * sxy / (sxx * syy)


FACTORS = [("running", "running requests"), ("context", "decode context, tokens"),
           ("output", "output length"), ("mixed_share", "share of steps with prefill"),
           ("sharing_ms", "simulated prefill sharing, ms"), ("weights_ms", "simulated weights, ms"),
           ("kv_ms", "simulated KV reads, ms"), ("overhead_ms", "simulated overhead, ms")]


def main(argv):
    opts = parse_check_args(argv, __doc__, "residuals.py",
                            values={"--calibration": ("calibration", "a folder", False)})
    cal = opts["calibration"] or CAL
    if cal is None:
        sys.stderr.write("residuals.py: cannot find shared/calibration/%s; pass --calibration DIR\n"
                         % EXPERIMENTS_CSV)
        return 2
    for name in (EXPERIMENTS_CSV, MEASURED_CSV):
        if not os.path.isfile(os.path.join(cal, name)):
            sys.stderr.write("residuals.py: no %s in %s\n" % (name, cal))
            return 2
    try:
        experiments, measured = check_inputs(cal)
    except BadInput as ex:
        sys.stderr.write("residuals.py: %s\n" % ex)
        return 2
    except (OSError, csv.Error) as ex:
        sys.stderr.write("residuals.py: %s: %s\n" % (cal, ex))
        return 2
    with ThreadPoolExecutor(max_workers=2) as pool:
        got = list(pool.map(lambda e: stage_rows(opts["binary"], e, measured), experiments))
    rows = []
    for r, err in got:
        if err:
            sys.stderr.write("residuals.py: run failed: %s\n" % err)
            return 1
        rows += r
    print("%-46s %2s %2s %5s %5s %5s %5s | %6s %6s %6s | %5s %5s %5s %5s | %6s %6s %6s" % (
        "experiment", "st", "tp", "rate", "run", "ctx", "mix%", "ITLmea", "ITLsim", "res%",
        "wts", "kv", "share", "ovh", "TTFTme", "TTFTsi", "res%"))
    for r in rows:
        print("%-46s %2d %2d %5.1f %5.1f %5.0f %5.1f | %6.2f %6.2f %+6.1f | %5.2f %5.2f %5.2f %5.2f "
              "| %6.1f %6.1f %+6.1f" % (
                  r["experiment"][:46], r["stage"], r["tp"], r["rate"], r["running"], r["context"],
                  100 * r["mixed_share"], r["itl_meas"], r["itl_sim"], r["itl_res_pct"], r["weights_ms"],
                  r["kv_ms"], r["sharing_ms"], r["overhead_ms"], r["ttft_meas"], r["ttft_sim"],
                  r["ttft_res_pct"]))
    print("\n(res% = (measured - simulated) / measured: positive, servesim is fast)")
    print("\nTTFT: the own prefill step the measurements imply (TTFT - request and output paths -"
          " 1.5 x measured ITL)\nagainst the simulated one, and the CPU a running request could"
          " cost before async scheduling shows it:")
    print("%-46s %2s %8s %8s %8s %9s" % ("experiment", "st", "implied", "sim", "sim-imp", "cpu/req"))
    for r in rows:
        print("%-46s %2d %8.1f %8.1f %+8.1f %7.0fus" % (
            r["experiment"][:46], r["stage"], r["prefill_implied_ms"], r["prefill_sim_ms"],
            r["prefill_sim_ms"] - r["prefill_implied_ms"], r["cpu_hidden_up_to_us"]))
    summary = {"rows": rows, "fits": {}}
    for label, sel in (("dense TP1", lambda r: not r["moe"] and r["tp"] == 1),
                       ("every dense", lambda r: not r["moe"])):
        pick = [r for r in rows if sel(r)]
        print("\nITL residual %% against one quantity at a time, %s stages (n = %d):" % (label, len(pick)))
        print("  %-32s %9s %11s %6s" % ("quantity", "intercept", "slope", "r2"))
        summary["fits"][label] = {}
        for key, name in FACTORS:
            got = fit([r[key] for r in pick], [r["itl_res_pct"] for r in pick])
            if got is None:
                summary["fits"][label][key] = None
                print("  %-32s (no stages: nothing to fit)" % name)
                continue
            a, b, r2 = got
            summary["fits"][label][key] = {"intercept": a, "slope": b, "r2": r2}
            print("  %-32s %+8.2f%% %+11.4f %6.2f" % (name, a, b, r2))
    print("\nThe mixed steps of the dense stages: a chunk of the stage's size (prompt tokens the prefix"
          "\ncache did not hold) in a decode step of its running requests; what it adds simulated, the"
          "\nGEMM rate it runs at, and what it would add were its GEMMs at %.1f TFLOP/s (the best BF16"
          "\nGEMM measured on an H100 SXM); the ITL the stage over-charges against the most a GEMM row"
          "\ncould give back (prefill sharing x (adds - floor) / adds); ar: the all-reduces' part of adds:"
          % BEST_BF16_TFLOPS)
    print("%-46s %2s %2s %6s %5s %7s %7s %7s %7s | %7s %7s" % ("experiment", "st", "tp", "chunk", "mix/s", "adds",
                                                              "TFLOP/s", "floor", "ar", "over", "gemm"))
    summary["chunks"] = []
    for r in rows:
        if r["moe"]:
            continue
        err = chunk_cost(opts["binary"], r, r["model"])
        if err:
            sys.stderr.write("residuals.py: run failed: %s\n" % err)
            return 1
        back = r["sharing_ms"] * (r["chunk_adds_ms"] - r["chunk_adds_floor_ms"]) / r["chunk_adds_ms"]
        summary["chunks"].append({k: r[k] for k in ("experiment", "stage", "chunk", "chunk_adds_ms",
                                                    "chunk_gemm_tflops", "chunk_adds_floor_ms",
                                                    "chunk_allreduce_ms")})
        print("%-46s %2d %2d %6.0f %5.1f %5.2fms %7.0f %5.2fms %5.2fms | %5.2fms %5.2fms" % (
            r["experiment"][:46], r["stage"], r["tp"], r["chunk"], r["rate"], r["chunk_adds_ms"],
            r["chunk_gemm_tflops"], r["chunk_adds_floor_ms"], r["chunk_allreduce_ms"],
            max(0.0, -r["itl_res_ms"]), back))
    print("\nWithin a two-stage run (the model and GPU fixed), the second stage against the first:")
    print("%-46s %9s %12s %10s" % ("experiment", "d res%", "d sharing", "d running"))
    pairs = []
    for r0 in rows:
        r1 = next((r for r in rows if r["experiment"] == r0["experiment"] and r["stage"] == 1), None)
        if r0["stage"] != 0 or r1 is None:
            continue
        d = {"experiment": r0["experiment"], "d_res_pct": r1["itl_res_pct"] - r0["itl_res_pct"],
             "d_sharing_ms": r1["sharing_ms"] - r0["sharing_ms"], "d_running": r1["running"] - r0["running"]}
        pairs.append(d)
        print("%-46s %+8.1f%% %+9.2f ms %+10.1f" % (d["experiment"][:46], d["d_res_pct"], d["d_sharing_ms"],
                                                 d["d_running"]))
    summary["pairs"] = pairs
    if opts["json"]:
        print()
        print(json.dumps(summary, indent=1, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
