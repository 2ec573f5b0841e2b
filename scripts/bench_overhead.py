"""Overhead of InferScope on a workload: interleaved A/B/C/D rounds.

    python3 scripts/bench_overhead.py SCENARIO [--rounds 15] [--iters 10] [--out FILE.json]

Arms, each a fresh process per round, in rotating order:
  bare      python3 workloads/scenarios.py S              (no inferscope importable)
  run       inferscope run --collector torch -- python3 workloads/scenarios.py S   (torch collector + spans)
  spans     inferscope run --collector none -- ...               (automatic spans only)
  cupti     inferscope run --collector cupti -- ...              (native CUPTI collector + spans)
  profiler  torch.profiler CPU+CUDA around each iteration, no inferscope (scripts/device/capture_kineto.py)

The statistic is each process's median per-iteration latency (the scenario's
own timer, which starts after model set-up and warm-up); the report is the
median over rounds with min/max, and the added latency vs bare.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def arm_cmd(arm, scenario, iters, tmp):
    base = ["python3", os.path.join(ROOT, "workloads", "scenarios.py"), scenario, "--iters", str(iters)]
    if arm == "bare":
        return base
    if arm == "run":
        # Explicit: the default (auto) picks cupti on a CUDA machine.
        return [os.path.join(ROOT, "dist", "inferscope"), "run", "--collector", "torch", "--output-dir", tmp, "--"] + base
    if arm == "spans":
        return [os.path.join(ROOT, "dist", "inferscope"), "run", "--collector", "none", "--output-dir", tmp, "--"] + base
    if arm == "cupti":
        return [os.path.join(ROOT, "dist", "inferscope"), "run", "--collector", "cupti", "--output-dir", tmp, "--"] + base
    if arm == "profiler":
        return ["python3", os.path.join(ROOT, "scripts", "device", "capture_kineto.py"), os.path.join(tmp, "prof.json")] + base[1:]
    raise ValueError(arm)


def one(arm, scenario, iters, tmp):
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    p = subprocess.run(arm_cmd(arm, scenario, iters, tmp), capture_output=True, text=True, env=env, cwd=tmp)
    for line in reversed(p.stdout.splitlines()):
        if line.startswith("{"):
            return json.loads(line)["median_ms"]
    raise RuntimeError("%s %s failed (rc %d): %s" % (arm, scenario, p.returncode, p.stderr[-2000:]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("scenario")
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--arms", default="bare,run,spans,profiler")
    ap.add_argument("--out")
    a = ap.parse_args()
    arms = a.arms.split(",")
    res = {arm: [] for arm in arms}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(a.rounds):
            order = arms[r % len(arms):] + arms[: r % len(arms)]
            for arm in order:
                res[arm].append(one(arm, a.scenario, a.iters, tmp))
            print("round %d: %s" % (r + 1, {k: v[-1] for k, v in res.items()}), file=sys.stderr, flush=True)
            if a.out:  # partial results survive a time limit
                with open(a.out + ".partial", "w") as f:
                    json.dump(res, f)
    bare = statistics.median(res["bare"]) if "bare" in res else None
    summary = {"scenario": a.scenario, "rounds": a.rounds, "iters": a.iters, "arms": {}}
    for arm, v in res.items():
        med = statistics.median(v)
        summary["arms"][arm] = {"median_ms": round(med, 3), "min_ms": round(min(v), 3), "max_ms": round(max(v), 3),
                                "added_pct": round(100 * (med / bare - 1), 1) if bare else None, "samples": v}
    print(json.dumps(summary))
    if a.out:
        with open(a.out, "w") as f:
            json.dump(summary, f, indent=1)


if __name__ == "__main__":
    main()
