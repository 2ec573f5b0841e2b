"""In-process interleaved overhead measurement: one process, blocks of
iterations that alternate between arms, so drift (clocks, thermals, other
tenants) hits every arm alike.

    python3 scripts/bench_inproc.py WORKLOAD [--arms native] [--lib PATH] [--toggle cupti|spans|both|churn]
    python3 scripts/bench_inproc.py WORKLOAD --arms torch
        common: [--blocks 20] [--iters 10] [--warmup 3] [--batch-size B] [--pin 4-7]
                [--settle 0.05] [--raw-dir DIR] [--out FILE.json]

WORKLOAD: a scenario of workloads/scenarios.py (llm, cnn, embedding) or a
workload of workloads/planted.py (tiny_kernels, sync_in_loop, ...; one call
with iters=1 is one iteration). The model is built and warmed up once.

--arms native (default): arms `on` and `off` of the native CUPTI collector.
libinferscope_cupti.so (--lib, default $INFERSCOPE_CUPTI_LIB) is loaded with
ctypes and started; a block turns on or off what --toggle names: the
collector (inferscope_cupti_resume/pause), the automatic Python spans, or
both (spans/both: every iteration runs in inferscope.scope() in both arms). The
control `churn` installs and uninstalls the spans' patches before an `on`
block and times it with them off, like `off`: the cost of toggling patches
(type caches, re-specialised bytecode), which --toggle spans also carries. The
JSON has each arm's median latency, what the collector recorded
(cupti-<pid>.bin) and the statistics below for `on` against `off`.

--arms torch: arms `bare` (the workload alone), `torchcoll` (what `inferscope
run --collector torch` does in the workload: torch.profiler configured as
TorchCollector.start, each iteration in inferscope.scope() with its
record_function, the automatic spans on, spans recorded to --raw-dir) and
`profiler` (plain torch.profiler CPU+CUDA with defaults, each iteration in
record_function, like scripts/bench_child.py). The native library is not
loaded: it and Kineto are both CUPTI clients and cannot share a process. A
profiler block starts its profiler before its timed iterations and stops it,
untimed and without export, after them. The JSON has `bare_median_ms` and,
under "arms", each other arm's median latency and statistics against bare.
A planted workload opens a scope per iteration itself: in torchcoll that is
the iteration's scope, and in the other arms the package records nothing.

Order: blocks come in rounds of one block per arm; round r runs the arms in
the base order rotated left by r (native: on,off / off,on, i.e. ABBA; torch:
bare,torchcoll,profiler / torchcoll,profiler,bare / profiler,bare,torchcoll),
so over every len(arms) rounds each arm takes each position once. --blocks is
the number of timed blocks in all, rounded down to whole rotations (torch:
--blocks 30 gives 9 rounds). A rotation does not balance carry-over: within a
round the same arm always follows a given one (bare follows profiler). One
untimed block per arm comes first, for first-use costs (Kineto's start-up).

Iterations are timed like the scenarios' own timer: torch.cuda.synchronize()
and perf_counter_ns at each iteration boundary; after each toggle the script
waits --settle seconds. Statistics: per round, the ratio of an arm's block
median to the reference arm's (off, bare) block median in the same round;
the JSON reports the median of these ratios, their IQR, a bootstrap 95 % CI
of the median (rounds resampled with replacement, 2000 times, fixed seed),
added_pct = 100 * (median ratio - 1), and the arm's pooled median against
the reference's (arm_added_pct).

--pin CPUS (4-7 or 4,5,6,7): sched_setaffinity before torch is imported, so
every thread started later inherits it.

Needs a GPU and torch; run it bare (not under `inferscope run`, no
CUDA_INJECTION64_PATH: the library would start at cuInit). The statistics
helpers do not import torch (scripts/benchstats.py, python/tests/test_benchstats.py).
"""
import argparse
import json
import os
import statistics
import struct
import sys
import tempfile
import time

from benchstats import parse_cpus, ratio_stats, rotation, whole_rotations

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REC_NAMES = {1: "clock", 2: "string", 3: "kernel", 4: "memcpy", 5: "memset", 6: "sync", 7: "overhead", 8: "api", 9: "dropped", 10: "end", 11: "launch_window"}
MODES = {  # --arms: (base order, reference arm)
    "native": (("on", "off"), "off"),
    "torch": (("bare", "torchcoll", "profiler"), "bare"),
}


# --- measurement ---


def build(name, device, batch_size):
    """(step, whether step opens its own inferscope.scope per iteration)."""
    sys.path.insert(0, os.path.join(ROOT, "workloads"))
    import planted
    import scenarios

    if name in scenarios.SCENARIOS:
        make, default_bs = scenarios.SCENARIOS[name]
        return make(device, batch_size or default_bs), False
    if name in planted.WORKLOADS:
        f = planted.WORKLOADS[name]
        return (lambda: f(device, 1)), True
    sys.exit("unknown workload %r: one of %s" % (name, sorted(scenarios.SCENARIOS) + sorted(planted.WORKLOADS)))


def read_recording(path):
    """Record counts by type and the last DROPPED totals (native/cupti/FORMAT.md)."""
    with open(path, "rb") as f:
        data = f.read()
    off = struct.unpack_from("<I", data, 12)[0] if len(data) >= 32 else len(data)
    counts, dropped, clean = {}, [0, 0, 0], False
    while off + 8 <= len(data):
        typ, _flags, size = struct.unpack_from("<HHI", data, off)
        if size < 8 or off + size > len(data):
            break
        counts[REC_NAMES.get(typ, typ)] = counts.get(REC_NAMES.get(typ, typ), 0) + 1
        if typ == 9:
            dropped = list(struct.unpack_from("<QQQ", data, off + 8))
        clean = clean or typ == 10
        off += size
    return {"records": counts, "dropped": {"cupti": dropped[0], "callback": dropped[1], "buffers_refused": dropped[2]},
            "clean_end": clean, "bytes": len(data)}


def read_spans(path):
    """Span counts by kind and the recorder's drop count, from spans-<pid>.jsonl."""
    kinds, dropped = {}, None
    with open(path) as f:
        for line in f:
            d = json.loads(line)
            if d["type"] == "span":
                kinds[d["kind"]] = kinds.get(d["kind"], 0) + 1
            elif d["type"] == "end":
                dropped = d.get("dropped")
    return {"spans": kinds, "dropped": dropped}


def native_arms(a, step, sync, raw):
    """{arm: (enter, iteration, leave)} and a function that ends the recording."""
    from inferscope import _collector_cupti as cc

    lib = cc.load(a.lib)
    if lib.inferscope_cupti_start(os.fsencode(raw)) != 0:
        sys.exit("inferscope_cupti_start failed (see stderr)")
    cupti, spans = a.toggle in ("cupti", "both"), a.toggle in ("spans", "both", "churn")
    if not cupti:
        cc.pause()

    if spans:
        import inferscope
        from inferscope import _autospans

        inferscope.start(raw, collector="none", auto_spans=False)

    def it():
        if spans:
            with inferscope.scope(a.workload):
                step()
        else:
            step()
        sync()

    def enter(on):
        if cupti and (cc.resume() if on else cc.pause()) != 0:
            sys.exit("pause/resume failed: the collector is not recording")
        if a.toggle == "churn":
            if on:
                _autospans.install()
            _autospans.uninstall()
        elif spans:
            _autospans.install() if on else _autospans.uninstall()

    def done():
        lib.inferscope_cupti_stop()
        return read_recording(os.path.join(raw, "cupti-%d.bin" % os.getpid()))

    return {"on": (lambda: enter(True), it, None), "off": (lambda: enter(False), it, None)}, done


def torch_arms(a, torch, step, sync, own_scope, raw):
    """{arm: (enter, iteration, leave)} and a function that ends the recording."""
    import inferscope
    from inferscope import _autospans, _scope
    from inferscope._collector_torch import _config
    from torch.profiler import ProfilerActivity, profile, record_function

    inferscope.start(raw, collector="none", auto_spans=False)
    # Live only in torchcoll: planted workloads open scopes of their own, and
    # in the other arms the package must cost what it costs when not running.
    rec, _scope._rec = _scope._rec, None
    acts = [ProfilerActivity.CPU, ProfilerActivity.CUDA]
    prof = []

    def plain():
        step()
        sync()

    def profiled():
        with record_function(a.workload):
            step()
            sync()

    def scoped():  # sync inside, as the scenarios' own loop does
        with inferscope.scope(a.workload):
            step()
            sync()

    def profiler():
        prof.append(profile(activities=acts))
        prof[-1].start()

    def torchcoll():  # as TorchCollector.start, plus what the first scope installs
        prof.append(profile(activities=acts, record_shapes=False, with_stack=False, profile_memory=False,
                            experimental_config=_config(torch, True)))
        prof[-1].start()
        _scope._rf = record_function
        _scope._rec = rec
        _autospans.install()

    def leave():
        _autospans.uninstall()
        _scope._rf = _scope._rec = None
        while prof:
            prof.pop().stop()  # untimed, and no export

    def done():
        _scope._rec = rec
        inferscope.stop()
        return read_spans(rec.path)

    return {
        "bare": (lambda: None, plain, None),
        "torchcoll": (torchcoll, plain if own_scope else scoped, leave),
        "profiler": (profiler, profiled, leave),
    }, done


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("workload")
    ap.add_argument("--arms", default="native", choices=sorted(MODES),
                    help="native: the CUPTI collector on/off (needs --lib); torch: bare, torchcoll, profiler")
    ap.add_argument("--lib", default=os.environ.get("INFERSCOPE_CUPTI_LIB"), help="libinferscope_cupti.so (--arms native)")
    ap.add_argument("--blocks", type=int, default=20,
                    help="timed blocks in all, rounded down to whole rotations of the arms' order")
    ap.add_argument("--iters", type=int, default=10, help="iterations per block")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--batch-size", type=int)
    ap.add_argument("--settle", type=float, default=0.05, help="seconds to wait after each toggle")
    ap.add_argument("--toggle", default="cupti", choices=("cupti", "spans", "both", "churn"),
                    help="--arms native: what a block turns on: the CUPTI collector, the automatic Python spans, "
                         "or both (spans/both: every iteration runs in inferscope.scope() in both arms)")
    ap.add_argument("--pin", metavar="CPUS", help="run on these CPUs (4-7, 4,5,6,7), set before torch starts threads")
    ap.add_argument("--pre-blocks", type=int, default=0,
                    help="--arms native: blocks run before the library starts, to check that a paused "
                         "collector costs what an unstarted one does (not interleaved: drift shows too)")
    ap.add_argument("--raw-dir")
    ap.add_argument("--out")
    a = ap.parse_args()
    try:
        pin = sorted(parse_cpus(a.pin)) if a.pin else None
        if pin:
            os.sched_setaffinity(0, pin)  # before torch: the threads it starts inherit the mask
    except ValueError as e:
        ap.error("--pin: %s" % e)
    except OSError as e:
        ap.error("--pin %s: %s" % (a.pin, e.strerror))
    if a.arms == "native" and not a.lib:
        sys.exit("no library: pass --lib or set INFERSCOPE_CUPTI_LIB")
    if os.environ.get("CUDA_INJECTION64_PATH") or os.environ.get("INFERSCOPE_RAW_DIR"):
        sys.exit("run this bare: unset CUDA_INJECTION64_PATH and INFERSCOPE_RAW_DIR")
    import torch

    if not torch.cuda.is_available():
        sys.exit("needs a CUDA GPU")
    sync = torch.cuda.synchronize
    step, own_scope = build(a.workload, "cuda", a.batch_size)
    for _ in range(a.warmup):
        step()
    sync()

    sys.path.insert(0, os.path.join(ROOT, "python"))
    raw = a.raw_dir or tempfile.mkdtemp(prefix="inferscope-inproc-")
    os.makedirs(raw, exist_ok=True)
    order, ref = MODES[a.arms]

    def time_iters(it):
        lat, t = [], time.perf_counter_ns()
        for _ in range(a.iters):
            it()
            now = time.perf_counter_ns()
            lat.append(now - t)
            t = now
        return lat

    unstarted = []
    for _ in range(a.pre_blocks if a.arms == "native" else 0):
        unstarted += time_iters(lambda: (step(), sync()))
    if a.arms == "native":
        arms, done = native_arms(a, step, sync, raw)
    else:
        arms, done = torch_arms(a, torch, step, sync, own_scope, raw)

    def block(arm):
        enter, it, leave = arms[arm]
        enter()
        sync()
        time.sleep(a.settle)  # the native writer thread drains the previous block's records
        lat = time_iters(it)
        if leave:
            leave()
        return lat

    for arm in order:
        block(arm)  # untimed: first-use costs of each state
    rounds = whole_rotations(a.blocks, len(order))
    lat = {arm: [] for arm in order}
    ratios = {arm: [] for arm in order if arm != ref}
    for r in range(rounds):
        med = {}
        for arm in rotation(order, r):
            x = block(arm)
            lat[arm].extend(x)
            med[arm] = statistics.median(x)
        for arm in ratios:
            ratios[arm].append(med[arm] / med[ref])
    recording = done()

    ms = {arm: statistics.median(x) / 1e6 for arm, x in lat.items()}
    out = {"workload": a.workload, "mode": a.arms, "device": torch.cuda.get_device_name(), "pin": pin,
           "rounds": rounds, "blocks": rounds * len(order), "iters_per_block": a.iters}
    if a.arms == "native":
        kernels = recording["records"].get("kernel", 0)
        on_iters = a.iters * (rounds + 1)  # one "on" block per round, and the untimed one
        out.update({
            "toggle": a.toggle, "on_median_ms": round(ms["on"], 4), "off_median_ms": round(ms["off"], 4),
            "arm_added_pct": round(100 * (ms["on"] / ms["off"] - 1), 2), **ratio_stats(ratios["on"]),
            "kernels_recorded": kernels, "on_iterations": on_iters,
            "kernels_per_on_iteration": round(kernels / on_iters, 1), "recording": recording, "raw_dir": raw,
        })
        if unstarted:
            out["unstarted_median_ms"] = round(statistics.median(unstarted) / 1e6, 4)
    else:
        out.update({
            "torch": torch.__version__, "order": list(order), "bare_median_ms": round(ms[ref], 4),
            "arms": {arm: {"median_ms": round(ms[arm], 4), "arm_added_pct": round(100 * (ms[arm] / ms[ref] - 1), 2),
                           **ratio_stats(x)} for arm, x in ratios.items()},
            "recording": recording, "raw_dir": raw,
        })
    print(json.dumps(out))
    if a.out:
        with open(a.out, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
