"""Leave-one-family-out cross-validation of servesim's engine-level
parameters on the 15 real vLLM runs on H100 (issue 11).

The kernel-level efficiencies come from the backend tables and the device
facts (sim/perf/backend.c, hardware_profiles/h100-sxm.ini) and are never
fitted here. Only the three engine-level parameters are: step_overhead_us,
step_overhead_per_seq_us (the vLLM step's CPU work) and request_overhead_ms
(the API path, which lands in TTFT). For each model family, they are set on
the other families' runs and the family left out is predicted with them.

The fit is Gauss-Newton on the relative errors of mean TTFT, mean ITL and
mean E2E, each divided by its goal (15, 7, 7 %): the Jacobian comes from
finite differences of the two step overheads at the shipped defaults
(request_overhead_ms shifts TTFT and E2E by itself, exactly: it delays a
request before the engine sees it) and is reused for every fold; each fold
takes `iterations` steps, re-simulating its training runs after each. The
parameters stay >= 0.

Used by vllm_h100.py --cross-validate; see docs/accuracy.md.
"""
import os
import re
import tempfile
from concurrent.futures import ThreadPoolExecutor

from simrun import ROOT, run_json

PARAMS = ["step_overhead_us", "step_overhead_per_seq_us", "request_overhead_ms"]
STEPS = {"step_overhead_us": 200.0, "step_overhead_per_seq_us": 4.0}
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


def whole_run(doc):
    done = doc.get("completed") or 0
    toks = doc.get("total_output_tokens") or 0
    ttft, e2e = doc.get("mean_ttft_ms"), doc.get("mean_e2el_ms")
    out = toks / done if done else 0
    itl = (e2e - ttft) / (out - 1) if out > 1 else None
    return {"ttft_mean": ttft, "itl_mean": itl, "e2e_mean": e2e}


def simulate_all(binary, exps, params, sets=()):
    """{experiment: whole-run metrics} at params; raises on a failed run."""
    path = profile_with(params)
    try:
        def one(e):
            scen = os.path.join("scenarios", "calibration", e["experiment"] + ".ini")
            doc, err = run_json(binary, [scen], list(sets) + ["run.hardware=" + path])
            if err:
                raise RuntimeError(err)
            return e["experiment"], whole_run(doc)
        with ThreadPoolExecutor(max_workers=2) as pool:
            return dict(pool.map(one, exps))
    finally:
        os.unlink(path)


def residuals(sim, meas, ids):
    """Relative error over goal, per (run, metric), in a fixed order."""
    return [(sim[i][m] / meas[(i, m)] - 1) * 100 / GOALS[m] for i in ids for m in METRICS]


def jac_rows(jac, sim, meas, ids):
    """d residual / d parameter, per (run, metric), for the three params."""
    rows = []
    for i in ids:
        for m in METRICS:
            row = [jac[p][i][m] for p in PARAMS[:2]]
            row.append(1.0 if m != "itl_mean" else 0.0)   # request_overhead_ms: ms in ms
            rows.append([v * 100 / GOALS[m] / meas[(i, m)] for v in row])
    return rows


def solve_lsq(rows, res):
    """argmin |rows · d + res|² for 3 unknowns (normal equations, a tiny
    ridge so an unidentified direction stays put)."""
    n = 3
    a = [[sum(r[i] * r[j] for r in rows) + (1e-9 if i == j else 0) for j in range(n)] for i in range(n)]
    b = [-sum(r[i] * e for r, e in zip(rows, res)) for i in range(n)]
    for c in range(n):                     # Gauss-Jordan with partial pivoting
        piv = max(range(c, n), key=lambda k: abs(a[k][c]))
        a[c], a[piv] = a[piv], a[c]
        b[c], b[piv] = b[piv], b[c]
        for k in range(n):
            if k != c and a[c][c] != 0:
                f = a[k][c] / a[c][c]
                a[k] = [x - f * y for x, y in zip(a[k], a[c])]
                b[k] -= f * b[c]
    return [b[i] / a[i][i] if a[i][i] != 0 else 0.0 for i in range(n)]


def mape(sim, meas, ids):
    return {m: sum(abs(sim[i][m] / meas[(i, m)] - 1) for i in ids) * 100 / len(ids) for m in METRICS}


def fit(binary, exps, meas, ids, start, jac, base, iterations, sets=()):
    """The engine-level parameters that fit runs ids, from start."""
    params = dict(start)
    sim = {i: base[i] for i in ids}
    for _ in range(iterations):
        d = solve_lsq(jac_rows(jac, sim, meas, ids), residuals(sim, meas, ids))
        params = {p: max(0.0, params[p] + dp) for p, dp in zip(PARAMS, d)}
        sim = simulate_all(binary, [e for e in exps if e["experiment"] in ids], params, sets)
    return params, sim


def cross_validate(binary, exps, meas, defaults, iterations=2, sets=(), log=print):
    """Per-fold and overall held-out errors; returns (folds, cv, in-sample params)."""
    allids = [e["experiment"] for e in exps]
    base = simulate_all(binary, exps, defaults, sets)
    jac = {}
    for p in PARAMS[:2]:
        bumped = dict(defaults)
        bumped[p] += STEPS[p]
        s = simulate_all(binary, exps, bumped, sets)
        jac[p] = {i: {m: (s[i][m] - base[i][m]) / STEPS[p] for m in METRICS} for i in allids}
    fams = {}
    for e in exps:
        fams.setdefault(family(e["model"]), []).append(e["experiment"])
    held = {}
    folds = []
    for fam, out in sorted(fams.items()):
        train = [i for i in allids if i not in out]
        params, _ = fit(binary, exps, meas, train, defaults, jac, base, iterations, sets)
        pred = simulate_all(binary, [e for e in exps if e["experiment"] in out], params, sets)
        held.update(pred)
        err = mape(pred, meas, out)
        folds.append((fam, len(out), params, err))
        log("fold %-14s (%d runs) step %7.1f us  per-seq %5.2f us  request %5.2f ms  ->  "
            "ttft %5.1f%%  itl %5.1f%%  e2e %5.1f%%" % (fam, len(out), params["step_overhead_us"],
                                                     params["step_overhead_per_seq_us"],
                                                     params["request_overhead_ms"], err["ttft_mean"],
                                                     err["itl_mean"], err["e2e_mean"]))
    cv = mape(held, meas, allids)
    full, fullsim = fit(binary, exps, meas, allids, defaults, jac, base, iterations, sets)
    return folds, cv, full, mape(fullsim, meas, allids)
