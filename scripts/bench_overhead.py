"""Overhead of InferScope on a workload: interleaved rounds of fresh processes.

    python3 scripts/bench_overhead.py SCENARIO [--rounds 15] [--budget-s 540]
        [--arms bare,native,torch,profiler] [--every torch:3,profiler:3] [--pin 4-7]
        [--pin-main 5] [--warm-s 1] [--iters N] [--no-aslr] [--out FILE.json]

SCENARIO: llm | cnn | embedding (workloads/scenarios.py) or tiny_kernels |
gpu_bound | sync_in_loop ... (workloads/planted.py).

Arms, each a fresh process per round, order rotated every round:
  bare      the workload, no inferscope importable
  native    inferscope run --collector cupti   (native CUPTI collector + spans)
  floor     the same with CUPTI kernel records only (no callbacks, no
            memcpy/memset records): what any CUPTI kernel tracer costs
  idle      the same with CUPTI started at cuInit but recording nothing (no
            activity kinds, no callbacks): what merely having it costs
  torch     inferscope run --collector torch   (torch.profiler collector + spans)
  spans     inferscope run --collector none    (automatic Python spans only)
  profiler  plain torch.profiler CPU+CUDA around the scopes, no inferscope
Every arm runs under scripts/bench_child.py, which times each iteration's
scope from outside and records peak RSS and GPU memory in use at the end.
A process's value is the median of its iterations after the first scope
and --warm-s seconds more. --pin-main CPU gives the timed (main) thread a
CPU of its own from then on (see bench_child.py); PYTHONHASHSEED is fixed
and --no-aslr runs every process under `setarch -R`, removing two sources
of process-to-process spread that have nothing to do with the collector.

Reported per arm: median per-iteration latency over rounds (each round's
value is that process's median), min/max and quartiles over rounds, added %
vs bare, the median of the per-round paired ratios arm/bare (same round,
adjacent processes) with a bootstrap 95 % CI, the ratio of the arms'
medians with a bootstrap 95 % CI (processes resampled per arm), the
within-process spread (median over processes of each one's IQR/median)
beside the between-process one, peak RSS and GPU memory (median), and for the
inferscope arms the recorded events, drops and events/s from the report.
Where the machine has a PMU, "per_iter" has the main thread's instructions
and cycles per iteration (user, kernel) against bare, with the same CI:
the precise process-level cost on a noisy machine (--blocking-sync keeps
GPU waits out of them).
--every ARM:N runs ARM only every Nth round (the costly comparison arms,
when device time is short); its paired ratios use that round's bare.
Stops after --rounds or when the next round would pass --budget-s; partial
results are written after every round.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

from benchstats import median_ratio_ci, parse_cpus, ratio_stats

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCENARIOS = ("llm", "cnn", "embedding")
# Enough iterations for ~2 s measured after a 1 s warm-up on the H100.
ITERS = {"llm": 10, "cnn": 600, "embedding": 400, "tiny_kernels": 60, "gpu_bound": 60, "sync_in_loop": 200}
COUNTERS = ("instructions_user", "instructions_kernel", "cycles_user", "cycles_kernel")
ARM_ENV = {  # INFERSCOPE_CUPTI_KINDS=none matches no kind: CUPTI starts and records nothing
    "floor": {"INFERSCOPE_CUPTI_CALLBACKS": "0", "INFERSCOPE_CUPTI_KINDS": "kernel"},
    "idle": {"INFERSCOPE_CUPTI_CALLBACKS": "0", "INFERSCOPE_CUPTI_KINDS": "none"},
}


def workload(scenario, iters):
    if scenario in SCENARIOS:
        return [os.path.join(ROOT, "workloads", "scenarios.py"), scenario, "--iters", str(iters)]
    return [os.path.join(ROOT, "workloads", "planted.py"), scenario, "--iters", str(iters)]


def one(arm, scenario, iters, tmp, opt):
    res_path = os.path.join(tmp, "child.json")
    rep_path = os.path.join(tmp, "report.json")
    for p in (res_path, rep_path):
        if os.path.exists(p):
            os.remove(p)
    child = [sys.executable, os.path.join(ROOT, "scripts", "bench_child.py")]
    wl = workload(scenario, iters)
    if arm in ("bare", "profiler"):
        cmd = child + [arm, res_path] + wl
    else:
        coll = {"native": "cupti", "floor": "cupti", "idle": "cupti", "torch": "torch", "spans": "none"}[arm]
        cmd = [os.path.join(ROOT, "dist", "inferscope"), "run", "--collector", coll, "--output-dir", tmp,
               "--report", rep_path, "--"] + child + ["inferscope", res_path] + wl
    if opt.pin:
        cmd = ["taskset", "-c", opt.pin] + cmd
    if opt.no_aslr:
        cmd = ["setarch", "-R"] + cmd
    env = dict(os.environ, PYTHONHASHSEED="0", BENCH_WARM_S=str(opt.warm_s), **ARM_ENV.get(arm, {}))
    env.pop("PYTHONPATH", None)
    if opt.blocking_sync:
        env["BENCH_BLOCKING_SYNC"] = "1"
    if opt.pin_main is not None:
        env["BENCH_PIN_MAIN"] = str(opt.pin_main)
    t0 = time.time()
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tmp)
    wall = time.time() - t0
    if p.returncode != 0 or not os.path.exists(res_path):
        raise RuntimeError("%s %s failed (rc %d): %s" % (arm, scenario, p.returncode, p.stderr[-3000:]))
    with open(res_path) as f:
        r = json.load(f)
    lat = r["lat_ms"]
    if len(lat) < 5:
        raise RuntimeError("%s %s: %d iterations timed after the warm-up; raise --iters or lower --warm-s" % (arm, scenario, len(lat)))
    q1, med, q3 = statistics.quantiles(lat, n=4)  # med is the median
    row = {"ms": med, "within_iqr_pct": 100 * (q3 - q1) / med, "n": len(lat),
           "tenths_ms": [round(statistics.median(lat[i * len(lat) // 10:(i + 1) * len(lat) // 10]), 3) for i in range(10)],
           "rss_mb": r["rss_mb"], "gpu_used_mb": r.get("gpu_used_mb"), "wall_s": wall,
           "cpu": r.get("cpu"), "sm_clock_mhz": r.get("sm_clock_mhz")}
    for k, v in r.get("counts", {}).items():  # median per iteration, main thread (bench_child.py)
        row[k] = statistics.median(v)
    if os.path.exists(rep_path):
        with open(rep_path) as f:
            rep = json.load(f)
        tr = rep["metadata"]["trace"]
        row.update(events=rep["metadata"].get("events"), dropped=tr.get("dropped_records", 0),
                   gpu_compute_ms=next((s["ms"] for s in rep["breakdown"] if s["category"] == "gpu_compute"), 0.0),
                   kernels_per_iter=rep["metrics"].get("kernels_per_iter"))
        if row["events"]:
            row["events_per_s"] = row["events"] / wall  # whole process lifetime, set-up included
    return row


def quartiles(v):
    if len(v) < 4:
        return [min(v), max(v)]
    q = statistics.quantiles(v, n=4)
    return [q[0], q[2]]


def against(v, ref, digits):
    """v's median against ref's: added %, and its bootstrap 95 % CI when both
    have more than one process."""
    out = {"added_pct": round(100 * (statistics.median(v) / statistics.median(ref) - 1), digits)}
    if len(v) > 1 and len(ref) > 1:
        out["added_ci95_pct"] = [round(100 * (r - 1), digits) for r in median_ratio_ci(v, ref)]
    return out


def summarize(res, meta):
    """The JSON summary: per arm, latency over processes and against bare."""
    bare_ms = [x["ms"] for x in res.get("bare", [])]
    out = dict(meta, arms={})
    for arm, rows in res.items():
        if not rows:
            continue
        ms = [x["ms"] for x in rows]
        med, (q1, q3) = statistics.median(ms), quartiles(ms)
        a = {"median_ms": round(med, 3), "min_ms": round(min(ms), 3), "max_ms": round(max(ms), 3),
             "iqr_ms": [round(q1, 3), round(q3, 3)], "between_iqr_pct": round(100 * (q3 - q1) / med, 1),
             "within_iqr_pct": round(statistics.median(x["within_iqr_pct"] for x in rows), 1),
             "rss_mb": round(statistics.median(x["rss_mb"] for x in rows), 1)}
        gm = [x["gpu_used_mb"] for x in rows if x.get("gpu_used_mb") is not None]
        if gm:
            a["gpu_used_mb"] = round(statistics.median(gm), 1)
        if bare_ms and arm != "bare":
            a.update(against(ms, bare_ms, 1))
            ratios = [x["ms"] / x["bare_ms"] for x in rows if x.get("bare_ms")]
            if ratios:
                st = ratio_stats(ratios) if len(ratios) > 1 else None
                a["paired_added_pct"] = round(100 * (statistics.median(ratios) - 1), 1)
                a["paired_added_iqr_pct"] = [round(100 * (q - 1), 1) for q in quartiles(ratios)]
                if st:
                    a["paired_added_ci95_pct"] = [round(100 * (q - 1), 1) for q in st["paired_ratio_ci95"]]
        for k in COUNTERS:
            v = [x[k] for x in rows if x.get(k) is not None]
            if not v:
                continue
            vmed, (q1, q3) = statistics.median(v), quartiles(v)
            c = a.setdefault("per_iter", {})[k] = {"median": round(vmed), "between_iqr_pct": round(100 * (q3 - q1) / vmed, 2)}
            ref = [x[k] for x in res.get("bare", []) if x.get(k) is not None]
            if ref and arm != "bare":
                c.update(against(v, ref, 2))
        for k in ("events", "dropped", "events_per_s", "gpu_compute_ms", "kernels_per_iter", "sm_clock_mhz"):
            v = [x[k] for x in rows if x.get(k) is not None]
            if v:
                a[k] = round(statistics.median(v), 3)
        if any(x.get("dropped") for x in rows):
            a["dropped_max"] = max(x.get("dropped") or 0 for x in rows)
        a["samples_ms"] = [round(x, 3) for x in ms]
        a["processes"] = [{k: x.get(k) for k in ("ms", "within_iqr_pct", "tenths_ms", "cpu", "sm_clock_mhz", "n") + COUNTERS
                           if k in x} for x in rows]
        a["rounds"] = len(rows)
        out["arms"][arm] = a
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("scenario")
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--iters", type=int, default=None)
    ap.add_argument("--budget-s", type=float, default=1e9)
    ap.add_argument("--arms", default="bare,native,torch,profiler")
    ap.add_argument("--every", default="", help="ARM:N,... run ARM only every Nth round")
    ap.add_argument("--pin", default="", help="taskset CPU list for every arm, e.g. 4-7")
    ap.add_argument("--pin-main", type=int, help="after the first scope, the timed thread alone on this CPU (one of --pin's)")
    ap.add_argument("--warm-s", type=float, default=1.0, help="seconds after the first scope that are not timed")
    ap.add_argument("--no-aslr", action="store_true", help="run every process under setarch -R")
    ap.add_argument("--blocking-sync", action="store_true",
                    help="GPU waits sleep instead of spinning, so instruction counts hold CPU work only")
    ap.add_argument("--out")
    a = ap.parse_args()
    if a.pin_main is not None and a.pin and a.pin_main not in parse_cpus(a.pin):
        ap.error("--pin-main %d is not in --pin %s" % (a.pin_main, a.pin))
    iters = a.iters or ITERS.get(a.scenario, 100)
    arms = a.arms.split(",")
    every = {k: int(v) for k, v in (x.split(":") for x in a.every.split(",") if x)}
    meta = {"scenario": a.scenario, "iters_per_process": iters, "pin": a.pin, "pin_main": a.pin_main,
            "warm_s": a.warm_s, "no_aslr": a.no_aslr, "blocking_sync": a.blocking_sync}
    res = {arm: [] for arm in arms}
    t_start, worst = time.time(), 0.0
    done = 0
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(a.rounds):
            now = [x for x in arms if r % every.get(x, 1) == 0]
            walls = {x: statistics.mean(y["wall_s"] for y in res[x]) for x in now if res[x]}
            nxt = sum(walls.get(x, worst) for x in now)
            if done and time.time() - t_start + nxt > a.budget_s:
                print("budget reached after %d rounds" % done, file=sys.stderr)
                break
            t_round = time.time()
            order = now[r % len(now):] + now[: r % len(now)]
            rows = {arm: one(arm, a.scenario, iters, tmp, a) for arm in order}
            for arm in now:
                if "bare" in rows:
                    rows[arm]["bare_ms"] = rows["bare"]["ms"]
                res[arm].append(rows[arm])
            done += 1
            worst = max(worst, time.time() - t_round)
            print("round %d (%.0f s): %s" % (done, time.time() - t_round,
                                              {k: round(v["ms"], 2) for k, v in rows.items()}), file=sys.stderr, flush=True)
            if a.out:  # partial results survive a time limit
                with open(a.out, "w") as f:
                    json.dump(summarize(res, dict(meta, rounds=done)), f, indent=1)
    s = summarize(res, dict(meta, rounds=done))
    print(json.dumps({k: v for k, v in s.items() if k != "arms"} |
                     {"arms": {k: {x: y for x, y in v.items() if x not in ("samples_ms", "processes")} for k, v in s["arms"].items()}}))
    if a.out:
        with open(a.out, "w") as f:
            json.dump(s, f, indent=1)


if __name__ == "__main__":
    main()
