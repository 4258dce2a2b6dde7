"""Leave-one-family-out cross-validation of servesim's engine-level
parameters on the 15 real vLLM runs on H100 (issue 11).

The kernel-level efficiencies come from the backend tables and the device
facts (sim/perf/backend.c, sim/perf/elementwise.c,
hardware_profiles/h100-sxm.ini) and are never fitted here. Only the
engine-level remainder the vllm-v1 overhead profile ships is
(sim/perf/overhead.c): FIT, the per-step step_overhead_us (the data leave
the per-sequence term at 0 and the request path's remainder at 0, so
neither is shipped nor refitted; the other engine-level keys stay at their
shipped values). For each model family it is set on the other families'
runs and the family left out is predicted with it; "fit on all 15 runs" is
the procedure that set the shipped value.

The fit minimises the squared relative errors of mean TTFT, mean ITL and
mean E2E, each divided by its goal (15, 7, 7 %), over a grid of the
remainder (0 to 1.5 ms, every run simulated at each point; the best point
refined by a parabola): the objective is flat and, through queueing,
not linear in the remainder, so a Gauss-Newton step from the shipped
value (the former procedure) landed 100-320 us apart by where it
started. The remainder stays >= 0.

Used by vllm_h100.py --cross-validate; see docs/accuracy.md.
"""
import os
import re
import tempfile
from concurrent.futures import ThreadPoolExecutor

from simrun import ROOT, counted_len, derived_itl, run_json

PARAMS = ["step_overhead_us", "step_overhead_per_seq_us", "request_overhead_ms"]
# The engine-level terms the vllm-v1 profile ships and each fold refits.
FIT = ["step_overhead_us"]
GOALS = {"ttft_mean": 15.0, "itl_mean": 7.0, "e2e_mean": 7.0}
METRICS = ["ttft_mean", "itl_mean", "e2e_mean"]



def shipped_defaults():
    """The remainders of the vllm-v1 overhead profile (sim/perf/overhead.c,
    issue 18's engine-level model): the point the Jacobian is taken at."""
    src = open(os.path.join(ROOT, "sim", "perf", "overhead.c")).read()
    row = src[src.index('.name = "vllm-v1"'):]
    row = row[:row.index(".source")]
    return {p: float(re.search(r"\.%s = ([0-9.]+)" % p, row).group(1)) for p in PARAMS}


def family(model):
    """The model family of an experiment's model id: its name without the
    organisation and size suffixes (Llama-2-7b-hf and Llama-2-7b are one)."""
    name = model.split("/")[-1].lower()
    for fam in ("llama-4-scout", "llama-3.1-70b", "mistral-nemo", "qwen2.5-7b", "yi-34b", "llama-2-7b"):
        if name.startswith(fam):
            return fam
    return name


def profile_with(params):
    """A temporary copy of h100-sxm.ini with an [efficiency] section giving
    params (engine-level keys only); returns its path."""
    base = open(os.path.join(ROOT, "hardware_profiles", "h100-sxm.ini")).read()
    text = base + "\n[efficiency]\n" + "".join("%s = %.6f\n" % (k, max(0.0, v)) for k, v in params.items())
    text += "source = crossval.py candidate\n"
    f = tempfile.NamedTemporaryFile("w", suffix=".ini", delete=False)
    f.write(text)
    f.close()
    return f.name


def whole_run(doc, counted):
    """The whole run's means, the ITL derived with counted, the output
    length the client counted (vllm_h100.py's rule)."""
    ttft, e2e = doc.get("mean_ttft_ms"), doc.get("mean_e2el_ms")
    return {"ttft_mean": ttft, "itl_mean": derived_itl(ttft, e2e, counted), "e2e_mean": e2e}


def simulate_all(binary, exps, params, sets=(), meas=None, run_sets=None):
    """{experiment: whole-run metrics} at params; raises on a failed run.
    meas ({(experiment, metric): whole-run value}) gives the counted output
    lengths the ITL is derived with; without it, the simulated ones.
    sets go to every run, then run_sets ({experiment: [S.K=V, ...]}) to
    the named runs only (after sets and the candidate profile, so they win
    over both)."""
    path = profile_with(params)
    try:
        def one(e):
            scen = os.path.join("scenarios", "calibration", e["experiment"] + ".ini")
            extra = (run_sets or {}).get(e["experiment"], [])
            doc, err = run_json(binary, [scen], list(sets) + ["run.hardware=" + path] + list(extra))
            if err:
                raise RuntimeError(err)
            i = e["experiment"]
            done = doc.get("completed") or 0
            cnt = (counted_len(*(meas[(i, m)] for m in METRICS)) if meas else
                   (doc.get("total_output_tokens") or 0) / done if done else 0)
            return i, whole_run(doc, cnt)
        with ThreadPoolExecutor(max_workers=2) as pool:
            return dict(pool.map(one, exps))
    finally:
        os.unlink(path)


def residuals(sim, meas, ids):
    """Relative error over goal, per (run, metric), in a fixed order."""
    return [(sim[i][m] / meas[(i, m)] - 1) * 100 / GOALS[m] for i in ids for m in METRICS]


def mape(sim, meas, ids):
    return {m: sum(abs(sim[i][m] / meas[(i, m)] - 1) for i in ids) * 100 / len(ids) for m in METRICS}


GRID_US = [50.0 * k for k in range(0, 31)]   # step_overhead_us scanned, 0 to 1.5 ms


def objective(sim, meas, ids):
    """Sum of squared residuals (relative error over goal) of runs ids."""
    return sum(r * r for r in residuals(sim, meas, ids))


def best_on_grid(grid, sims, meas, ids):
    """The remainder that minimises the objective of runs ids: the best
    grid point refined by the parabola through it and its neighbours."""
    obj = [objective(s, meas, ids) for s in sims]
    k = min(range(len(grid)), key=lambda j: obj[j])
    if 0 < k < len(grid) - 1:
        y0, y1, y2 = obj[k - 1], obj[k], obj[k + 1]
        den = y0 - 2 * y1 + y2
        if den > 0:
            return grid[k] + 0.5 * (grid[1] - grid[0]) * (y0 - y2) / den
    return grid[k]


def cross_validate(binary, exps, meas, defaults, sets=(), log=print, run_sets=None):
    """Per-fold and overall held-out errors; returns (folds, cv, in-sample
    params, in-sample errors). FIT is one term, step_overhead_us: every
    run is simulated once at each point of GRID_US, each fold takes the
    value that fits its training runs best on that grid (refined by a
    parabola) and its held-out runs are simulated at that value. The same
    procedure on all 15 runs is "fit on all 15 runs": no linearization,
    no dependence on the starting point. sets and run_sets (per run)
    are simulate_all's."""
    assert FIT == ["step_overhead_us"]
    allids = [e["experiment"] for e in exps]
    sims = []
    for v in GRID_US:
        params = dict(defaults)
        params["step_overhead_us"] = v
        sims.append(simulate_all(binary, exps, params, sets, meas, run_sets))
    fams = {}
    for e in exps:
        fams.setdefault(family(e["model"]), []).append(e["experiment"])
    held = {}
    folds = []
    for fam, out in sorted(fams.items()):
        train = [i for i in allids if i not in out]
        params = dict(defaults)
        params["step_overhead_us"] = best_on_grid(GRID_US, sims, meas, train)
        pred = simulate_all(binary, [e for e in exps if e["experiment"] in out], params, sets, meas,
                            run_sets)
        held.update(pred)
        err = mape(pred, meas, out)
        folds.append((fam, len(out), params, err))
        log("fold %-14s (%d runs) step %7.1f us  per-seq %5.2f us  request %5.2f ms  ->  "
            "ttft %5.1f%%  itl %5.1f%%  e2e %5.1f%%" % (fam, len(out), params["step_overhead_us"],
                                                     params["step_overhead_per_seq_us"],
                                                     params["request_overhead_ms"], err["ttft_mean"],
                                                     err["itl_mean"], err["e2e_mean"]))
    cv = mape(held, meas, allids)
    full = dict(defaults)
    full["step_overhead_us"] = best_on_grid(GRID_US, sims, meas, allids)
    fullsim = simulate_all(binary, exps, full, sets, meas, run_sets)
    return folds, cv, full, mape(fullsim, meas, allids)
