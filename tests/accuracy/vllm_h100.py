#!/usr/bin/env python3
"""Accuracy of servesim against 15 real vLLM runs on H100 (issue 4).

Simulates each experiment of ../shared/calibration/vllm_h100_experiments.csv
through its scenario scenarios/calibration/<experiment>.ini and compares with
the measurements in vllm_h100_measured.csv, per stage and for the whole run
(stage -1): mean/p90/p99 TTFT, mean/p90/p99 E2E latency and the mean ITL.

The measured itl_mean is derived, not a mean of token gaps:
(e2e_mean - ttft_mean) / (mean_output_len - 1), with the output length the
client counted. The simulated one is derived the same way from the
simulated means and that same counted length (simrun.counted_len: the
client re-tokenizes the text, so its count can differ from the tokens vLLM
generated, which the scenarios simulate): the ITL error is then the error
of the decode time E2E - TTFT, as measured.

Also checks the simulated GPU KV pool (servesim.num_gpu_blocks) against the
block count vLLM reported at start-up (within 3%).

usage: vllm_h100.py [SERVESIM] [--json] [--summary-only] [--cross-validate] [--calibration DIR] [--set S.K=V]…
                    [--run-set EXPERIMENT:S.K=V]…
  SERVESIM        the binary (default build/sim/servesim in the repo root)
  --json          also print the summary as JSON (last thing on stdout)
  --summary-only  leave out the per-stage table
  --cross-validate  leave one model family out: set the engine-level
                  parameters (step and request overheads) on the other
                  families, predict the one left out (crossval.py); prints
                  one line per fold and last `cv ttft X% itl Y% e2e Z%`
  --set S.K=V     passed to every `servesim run` (e.g. run.hardware=PROFILE.ini)
  --run-set EXPERIMENT:S.K=V  passed to that experiment's runs only, after
                  the --set ones (an A/B on one run, also in every fold)
  --calibration   the folder holding the two CSVs (default ../shared/calibration
                  next to the repo, else shared/calibration inside it)
Exits 0 unless a simulation run fails (then 1); 2 on bad usage or missing data.
"""

import csv
import json
import os
import sys
from concurrent.futures import ThreadPoolExecutor

from simrun import ROOT, check_usage, counted_len, derived_itl, parse_check_args, run_json

METRICS = ["ttft_mean", "ttft_p90", "ttft_p99", "itl_mean", "e2e_mean", "e2e_p90", "e2e_p99"]
JSON_KEY = {
    "ttft_mean": "mean_ttft_ms", "ttft_p90": "p90_ttft_ms", "ttft_p99": "p99_ttft_ms",
    "e2e_mean": "mean_e2el_ms", "e2e_p90": "p90_e2el_ms", "e2e_p99": "p99_e2el_ms",
}
KV_TOLERANCE_PCT = 3.0


def usage(msg):
    check_usage(__doc__, "vllm_h100.py", msg)


def parse_args(argv):
    opts = parse_check_args(argv, __doc__, "vllm_h100.py",
                            flags={"--summary-only": "summary_only", "--cross-validate": "cross_validate"},
                            values={"--set": ("sets", "SECTION.KEY=VALUE", True),
                                    "--run-set": ("run_set_args", "EXPERIMENT:SECTION.KEY=VALUE", True),
                                    "--calibration": ("calibration", "a folder", False)})
    if opts["calibration"] is None:
        for cand in (os.path.join(os.path.dirname(ROOT), "shared", "calibration"),
                     os.path.join(ROOT, "shared", "calibration")):
            if os.path.isfile(os.path.join(cand, "vllm_h100_experiments.csv")):
                opts["calibration"] = cand
                break
        else:
            usage("cannot find shared/calibration/vllm_h100_experiments.csv; pass --calibration DIR")
    for f in ("vllm_h100_experiments.csv", "vllm_h100_measured.csv"):
        if not os.path.isfile(os.path.join(opts["calibration"], f)):
            usage("no %s in %s" % (f, opts["calibration"]))
    opts["run_sets"] = {}
    for a in opts["run_set_args"]:
        eid, sep, kv = a.partition(":")
        if not sep or not eid or "=" not in kv:
            usage("--run-set: expected EXPERIMENT:SECTION.KEY=VALUE, got '%s'" % a)
        opts["run_sets"].setdefault(eid, []).append(kv)
    return opts


def load_csvs(cal):
    with open(os.path.join(cal, "vllm_h100_experiments.csv"), newline="") as f:
        experiments = list(csv.DictReader(f))
    measured = {}
    with open(os.path.join(cal, "vllm_h100_measured.csv"), newline="") as f:
        for row in csv.DictReader(f):
            measured[(row["experiment"], int(row["stage"]), row["metric"])] = float(row["value_ms"])
    return experiments, measured


def simulate(binary, exp_id, sets=()):
    scen = os.path.join("scenarios", "calibration", exp_id + ".ini")
    return run_json(binary, [scen, "--metric-percentiles", "90,99"], sets)


def sim_metrics(block, counted=None):
    """The compared metrics of one stage block (or the whole run); the ITL
    derived with counted, the client's output length, where given, else
    with the simulated one."""
    out = {m: block.get(k) for m, k in JSON_KEY.items()}
    done = block.get("completed") or 0
    toks = block.get("total_output_tokens") or 0
    out["output_len"] = toks / done if done else None
    out["itl_mean"] = derived_itl(out["ttft_mean"], out["e2e_mean"], counted or out["output_len"])
    out["completed"] = done
    out["failed"] = block.get("failed") or 0
    return out


def err_pct(measured, simulated):
    if measured is None or simulated is None or measured == 0:
        return None
    return 100.0 * (simulated - measured) / measured


def fmt(v, width, prec=1):
    return ("%*.*f" % (width, prec, v)) if v is not None else "%*s" % (width, "-")


def main(argv):
    opts = parse_args(argv)
    experiments, measured = load_csvs(opts["calibration"])
    unknown = sorted(set(opts["run_sets"]) - {e["experiment"] for e in experiments})
    if unknown:
        usage("--run-set: no experiment %s in vllm_h100_experiments.csv" % unknown[0])
    if opts["cross_validate"]:
        return cross_validate_main(opts, experiments, measured)

    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(lambda e: simulate(opts["binary"], e["experiment"],
                                                   opts["sets"] + opts["run_sets"].get(e["experiment"], [])),
                                experiments))

    rows = []            # one per (experiment, stage, metric)
    kv = []              # one per experiment
    failures = []
    failed_requests = []
    for exp, (doc, error) in zip(experiments, results):
        eid = exp["experiment"]
        if error:
            failures.append(error)
            continue
        stage_blocks = {-1: doc}
        for st in doc.get("stages") or []:
            stage_blocks[int(st["stage"])] = st
        stages = sorted({s for (e, s, _m) in measured if e == eid})
        for s in stages:
            block = stage_blocks.get(s)
            cnt = counted_len(*(measured.get((eid, s, m)) or 0 for m in ("ttft_mean", "itl_mean", "e2e_mean")))
            sm = sim_metrics(block, cnt) if block is not None else {}
            if sm.get("failed"):
                failed_requests.append("%s stage %d: %d failed" % (eid, s, sm["failed"]))
            for m in METRICS:
                mv = measured.get((eid, s, m))
                if mv is None:
                    continue
                simv = sm.get(m)
                rows.append({"experiment": eid, "stage": s, "metric": m, "measured": mv,
                             "simulated": simv, "error_pct": err_pct(mv, simv)})
        sv = doc.get("servesim", {})
        sim_gpu = sv.get("num_gpu_blocks")
        real_gpu = int(exp["gpu_kv_blocks"]) if exp.get("gpu_kv_blocks") else None
        real_cpu = int(exp["cpu_kv_blocks"]) if exp.get("cpu_kv_blocks") else None
        e_gpu = err_pct(real_gpu, sim_gpu)
        kv.append({"experiment": eid, "gpu_kv_blocks": real_gpu, "sim_gpu_blocks": sim_gpu,
                   "gpu_error_pct": e_gpu,
                   "gpu_within_3pct": e_gpu is not None and abs(e_gpu) <= KV_TOLERANCE_PCT,
                   "cpu_kv_blocks": real_cpu, "sim_cpu_blocks": sv.get("num_cpu_blocks"),
                   "cpu_error_pct": err_pct(real_cpu, sv.get("num_cpu_blocks")) if real_cpu else None})

    w = max([len(e["experiment"]) for e in experiments] + [10])
    if not opts["summary_only"]:
        print("%-*s %5s  %-9s %10s %10s %8s" % (w, "experiment", "stage", "metric", "measured",
                                                "simulated", "error%"))
        for r in rows:
            print("%-*s %5d  %-9s %10.1f %s %s" % (w, r["experiment"], r["stage"], r["metric"],
                                                  r["measured"], fmt(r["simulated"], 10),
                                                  fmt(r["error_pct"], 8)))
        print()

    def mape(metric, whole_run_only):
        errs = [abs(r["error_pct"]) for r in rows if r["metric"] == metric and
                (r["stage"] == -1 or not whole_run_only) and r["error_pct"] is not None]
        missing = sum(1 for r in rows if r["metric"] == metric and
                      (r["stage"] == -1 or not whole_run_only) and r["error_pct"] is None)
        return (sum(errs) / len(errs) if errs else None), len(errs), missing

    goals = {"ttft_mean": 15.0, "itl_mean": 8.0, "e2e_mean": 8.0}
    summary = {"mape_whole_run": {}, "mape_all_stages": {}, "goal_pct": goals}
    print("MAPE per metric (whole run = stage -1 of %d experiments; all = every stage row)" %
          len(experiments))
    print("%-9s %12s %4s %12s %4s %8s" % ("metric", "whole-run%", "n", "all-stages%", "n", "goal%"))
    for m in METRICS:
        v1, n1, miss1 = mape(m, True)
        v2, n2, _ = mape(m, False)
        summary["mape_whole_run"][m] = v1
        summary["mape_all_stages"][m] = v2
        print("%-9s %s %4d %s %4d %8s%s" % (m, fmt(v1, 12, 2), n1, fmt(v2, 12, 2), n2,
                                          ("%.0f" % goals[m]) if m in goals else "-",
                                          ("  (%d without a simulated value)" % miss1) if miss1 else ""))
    print()

    print("KV pool: simulated servesim.num_gpu_blocks vs vLLM's reported GPU blocks (goal within %.0f%%)" %
          KV_TOLERANCE_PCT)
    print("%-*s %9s %9s %8s %6s   %9s %9s %8s" % (w, "experiment", "vllm_gpu", "sim_gpu", "error%", "ok",
                                               "vllm_cpu", "sim_cpu", "error%"))
    for k in kv:
        print("%-*s %9s %9s %s %6s   %9s %9s %s" % (
            w, k["experiment"], k["gpu_kv_blocks"], k["sim_gpu_blocks"], fmt(k["gpu_error_pct"], 8, 2),
            "yes" if k["gpu_within_3pct"] else "NO", k["cpu_kv_blocks"], k["sim_cpu_blocks"],
            fmt(k["cpu_error_pct"], 8, 2)))
    n_ok = sum(1 for k in kv if k["gpu_within_3pct"])
    print("GPU KV blocks within %.0f%%: %d of %d" % (KV_TOLERANCE_PCT, n_ok, len(kv)))
    summary["kv_blocks"] = kv
    summary["kv_within_3pct"] = n_ok
    summary["experiments"] = len(experiments)
    summary["failed_runs"] = failures
    summary["failed_requests"] = failed_requests
    summary["whole_run"] = [r for r in rows if r["stage"] == -1]

    if failed_requests:
        print("\nsimulated requests failed: " + "; ".join(failed_requests))
    for f in failures:
        sys.stderr.write("vllm_h100.py: run failed: %s\n" % f)
    if opts["json"]:
        print()
        print(json.dumps(summary, indent=1, sort_keys=True))
    return 1 if failures else 0


def cross_validate_main(opts, experiments, measured):
    import crossval
    meas = {(e, m): v for (e, s, m), v in measured.items() if s == -1}
    defaults = crossval.shipped_defaults()
    print("engine-level parameters at the shipped defaults: " +
          ", ".join("%s %g" % kv for kv in defaults.items()))
    try:
        folds, cv, full, insample = crossval.cross_validate(opts["binary"], experiments, meas, defaults,
                                                            sets=opts["sets"], run_sets=opts["run_sets"])
    except RuntimeError as ex:
        sys.stderr.write("vllm_h100.py: run failed: %s\n" % ex)
        return 1
    print("fit on all %d runs: step %.1f us, per-seq %.2f us, request %.2f ms -> in-sample "
          "ttft %.2f%% itl %.2f%% e2e %.2f%%" % (len(experiments), full["step_overhead_us"],
                                                full["step_overhead_per_seq_us"], full["request_overhead_ms"],
                                                insample["ttft_mean"], insample["itl_mean"],
                                                insample["e2e_mean"]))
    print("cv ttft %.1f%% itl %.1f%% e2e %.1f%%" % (cv["ttft_mean"], cv["itl_mean"], cv["e2e_mean"]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
