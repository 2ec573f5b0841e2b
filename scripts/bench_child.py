"""One benchmark process: runs a workload script and writes what the
benchmark needs to OUT.json at the end.

    python3 bench_child.py ARM OUT.json SCRIPT [ARGS...]

ARM is bare (a stand-in `inferscope` whose scope() only times), inferscope
(the real package, active under `inferscope run`), or profiler (plain
torch.profiler CPU+CUDA started at the first scope, like
scripts/device/capture_kineto.py, stopped at exit without exporting: the
export happens after the timed iterations and only costs wall time).

Per-iteration latency is the wall time of each top-level scope on the main
thread, measured outside the scope (so the scope's own cost is in it);
every workload in workloads/ wraps one iteration, synchronised, in a scope.
The first scope (it starts the collectors) is not timed, nor are the scopes
that start within BENCH_WARM_S seconds after it ends (clock ramp, caches).

BENCH_PIN_MAIN=CPU: when the first scope ends (every collector thread exists
by then), the main thread moves to CPU alone and every other thread of the
process to the rest of the process's CPUs, so the timed thread never
shares its CPU with the collector's writer or torch's workers.

OUT.json also carries the SM clock and the main thread's CPU at the end
(nvidia-ml-py, when importable) for explaining process-to-process spread,
and, where the machine has a PMU (scripts/perfcount.py), the main thread's
instructions and cycles per timed iteration, user and kernel: a cost
measure that noisy neighbours do not move.

BENCH_BLOCKING_SYNC=1: the primary context is made with
CU_CTX_SCHED_BLOCKING_SYNC (set before anything creates it), so a thread
waiting for the GPU sleeps instead of spinning and the instruction counts
hold the CPU's work only, not time spent polling.
"""
import contextlib
import json
import os
import resource
import runpy
import sys
import threading
import time
import types

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import perfcount  # noqa: E402

arm, out, script, args = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
lat_ns = []
depth = threading.local()
state = {"prof": None, "first_end": None, "counters": None}
counts = []  # per timed iteration: counter deltas
WARM_NS = int(float(os.environ.get("BENCH_WARM_S", "0")) * 1e9)
PIN_MAIN = os.environ.get("BENCH_PIN_MAIN")


def pin_main(cpu):
    """Main thread to cpu; the process's other threads to the remaining CPUs."""
    cpus = os.sched_getaffinity(0)
    rest = (cpus - {cpu}) or cpus
    me = threading.get_native_id()
    for tid in os.listdir("/proc/self/task"):
        try:
            os.sched_setaffinity(int(tid), {cpu} if int(tid) == me else rest)
        except OSError:
            pass  # a thread that ended meanwhile


def timed(inner):
    @contextlib.contextmanager
    def scope(name, *a, **kw):
        top = threading.current_thread() is threading.main_thread() and not getattr(depth, "n", 0)
        depth.n = getattr(depth, "n", 0) + 1
        c0 = state["counters"].read() if top and state["counters"] else None
        t0 = time.perf_counter_ns()
        try:
            with inner(name, *a, **kw):
                yield
        finally:
            t1 = time.perf_counter_ns()
            c1 = state["counters"].read() if c0 else None
            if top and state["first_end"] is None:
                state["first_end"] = t1
                if PIN_MAIN:
                    pin_main(int(PIN_MAIN))
                state["counters"] = perfcount.open_counters()
            elif top and t0 >= state["first_end"] + WARM_NS:
                lat_ns.append(t1 - t0)
                if c0:
                    counts.append({k: c1[k] - c0[k] for k in c1})
            depth.n -= 1
    return scope


def profiled(name):
    import torch
    from torch.profiler import ProfilerActivity, profile, record_function
    if state["prof"] is None:
        acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if torch.cuda.is_available() else [])
        state["prof"] = profile(activities=acts)
        state["prof"].__enter__()
    return record_function(name)


if os.environ.get("BENCH_BLOCKING_SYNC") == "1":
    import ctypes

    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError as e:
        sys.exit("BENCH_BLOCKING_SYNC needs the CUDA driver: %s" % e)
    if cuda.cuInit(0) != 0 or cuda.cuDevicePrimaryCtxSetFlags(0, 0x04) != 0:  # CU_CTX_SCHED_BLOCKING_SYNC
        sys.exit("BENCH_BLOCKING_SYNC: could not set the primary context's flags")

if arm == "inferscope":
    import inferscope
    inferscope.scope = timed(inferscope.scope)
else:
    mod = types.ModuleType("inferscope")
    mod.scope = timed(profiled if arm == "profiler" else (lambda name: contextlib.nullcontext()))
    sys.modules["inferscope"] = mod

sys.argv = [script] + args
try:
    runpy.run_path(script, run_name="__main__")
finally:
    res = {"arm": arm, "lat_ms": [x / 1e6 for x in lat_ns],
           "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
           "cpu": int(open("/proc/thread-self/stat").read().rsplit(")", 1)[1].split()[36])}  # field 39: last CPU
    try:
        import pynvml

        pynvml.nvmlInit()
        res["sm_clock_mhz"] = pynvml.nvmlDeviceGetClockInfo(pynvml.nvmlDeviceGetHandleByIndex(0), pynvml.NVML_CLOCK_SM)
    except Exception:
        pass
    if counts:
        res["counts"] = {k: [c[k] for c in counts] for k in counts[0]}
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available() and torch.cuda.is_initialized():
        torch.cuda.synchronize()
        free, total = torch.cuda.mem_get_info()
        res["gpu_used_mb"] = (total - free) / 2**20
        res["torch_max_alloc_mb"] = torch.cuda.max_memory_allocated() / 2**20
    if state["prof"] is not None:
        state["prof"].__exit__(None, None, None)
    with open(out, "w") as f:
        json.dump(res, f)
