"""In-process paired A/B overhead of the native CUPTI collector.

    python3 scripts/bench_inproc.py WORKLOAD [--lib PATH] [--blocks 20] [--iters 10]
                                   [--warmup 3] [--batch-size B] [--raw-dir DIR] [--out FILE.json]

WORKLOAD: a scenario of workloads/scenarios.py (llm, cnn, embedding) or a
workload of workloads/planted.py (tiny_kernels, sync_in_loop, ...; one call
with iters=1 is one iteration). The model is built and warmed up once, then
libinferscope_cupti.so (--lib, default $INFERSCOPE_CUPTI_LIB) is loaded with
ctypes and started, and blocks of --iters iterations alternate between the
collector on (inferscope_cupti_resume) and off (inferscope_cupti_pause) in
ABBA order: on,off, off,on, on,off, ... Iterations are timed like the
scenario's own timer: torch.cuda.synchronize() and perf_counter_ns at each
iteration boundary. Each adjacent on/off pair of blocks gives one ratio of
block medians; the JSON reports the median ratio and its IQR, the added %,
each arm's median latency and what the collector recorded (cupti-<pid>.bin).
Needs a GPU and torch; run it bare (not under `inferscope run`, no
CUDA_INJECTION64_PATH: the library would start at cuInit).
"""
import argparse
import json
import os
import statistics
import struct
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REC_NAMES = {1: "clock", 2: "string", 3: "kernel", 4: "memcpy", 5: "memset", 6: "sync", 7: "overhead", 8: "api", 9: "dropped", 10: "end"}


def build(name, device, batch_size):
    sys.path.insert(0, os.path.join(ROOT, "workloads"))
    import planted
    import scenarios

    if name in scenarios.SCENARIOS:
        make, default_bs = scenarios.SCENARIOS[name]
        return make(device, batch_size or default_bs)
    if name in planted.WORKLOADS:
        f = planted.WORKLOADS[name]
        return lambda: f(device, 1)
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("workload")
    ap.add_argument("--lib", default=os.environ.get("INFERSCOPE_CUPTI_LIB"))
    ap.add_argument("--blocks", type=int, default=20, help="timed blocks, a multiple of 4 (ABBA)")
    ap.add_argument("--iters", type=int, default=10, help="iterations per block")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--batch-size", type=int)
    ap.add_argument("--settle", type=float, default=0.05, help="seconds to wait after each toggle")
    ap.add_argument("--toggle", default="cupti", choices=("cupti", "spans", "both"),
                    help="what a block turns on: the CUPTI collector, the automatic Python spans, or both "
                         "(spans/both: every iteration runs in inferscope.scope() in both arms)")
    ap.add_argument("--raw-dir")
    ap.add_argument("--out")
    a = ap.parse_args()
    if not a.lib:
        sys.exit("no library: pass --lib or set INFERSCOPE_CUPTI_LIB")
    if os.environ.get("CUDA_INJECTION64_PATH") or os.environ.get("INFERSCOPE_RAW_DIR"):
        sys.exit("run this bare: unset CUDA_INJECTION64_PATH and INFERSCOPE_RAW_DIR")
    a.blocks = max(4, a.blocks - a.blocks % 4)
    import torch

    if not torch.cuda.is_available():
        sys.exit("needs a CUDA GPU")
    sync = torch.cuda.synchronize
    step = build(a.workload, "cuda", a.batch_size)
    for _ in range(a.warmup):
        step()
    sync()

    sys.path.insert(0, os.path.join(ROOT, "python"))
    from inferscope import _collector_cupti as cc

    raw = a.raw_dir or tempfile.mkdtemp(prefix="inferscope-inproc-")
    os.makedirs(raw, exist_ok=True)
    lib = cc.load(a.lib)
    if lib.inferscope_cupti_start(os.fsencode(raw)) != 0:
        sys.exit("inferscope_cupti_start failed (see stderr)")
    cupti, spans = a.toggle in ("cupti", "both"), a.toggle in ("spans", "both")
    if not cupti:
        cc.pause()
    if spans:
        import inferscope
        from inferscope import _autospans

        inferscope.start(raw, collector="none", auto_spans=False)
        inner = step

        def step():
            with inferscope.scope(a.workload):
                inner()

    def block(on):
        if cupti and (cc.resume() if on else cc.pause()) != 0:
            sys.exit("pause/resume failed: the collector is not recording")
        if spans:
            _autospans.install() if on else _autospans.uninstall()
        sync()
        time.sleep(a.settle)  # the writer thread drains the previous block's records
        lat, t = [], time.perf_counter_ns()
        for _ in range(a.iters):
            step()
            sync()
            now = time.perf_counter_ns()
            lat.append(now - t)
            t = now
        return lat

    block(True)  # untimed: first-use costs of each state
    block(False)
    on_iters = a.iters
    arms, ratios = {True: [], False: []}, []
    for p in range(a.blocks // 2):
        order = (True, False) if p % 2 == 0 else (False, True)  # ABBA
        med = {}
        for on in order:
            lat = block(on)
            arms[on].extend(lat)
            med[on] = statistics.median(lat)
            on_iters += a.iters if on else 0
        ratios.append(med[True] / med[False])
    lib.inferscope_cupti_stop()

    rec = read_recording(os.path.join(raw, "cupti-%d.bin" % os.getpid()))
    r_med = statistics.median(ratios)
    q1, _, q3 = statistics.quantiles(ratios, n=4, method="inclusive")  # >= 2 pairs
    on_ms, off_ms = statistics.median(arms[True]) / 1e6, statistics.median(arms[False]) / 1e6
    kernels = rec["records"].get("kernel", 0)
    out = {
        "workload": a.workload, "toggle": a.toggle, "device": torch.cuda.get_device_name(), "blocks": a.blocks, "iters_per_block": a.iters,
        "on_median_ms": round(on_ms, 4), "off_median_ms": round(off_ms, 4),
        "arm_added_pct": round(100 * (on_ms / off_ms - 1), 2),
        "paired_ratio_median": round(r_med, 4), "paired_ratio_iqr": [round(q1, 4), round(q3, 4)],
        "added_pct": round(100 * (r_med - 1), 2), "pair_ratios": [round(x, 4) for x in ratios],
        "kernels_recorded": kernels, "on_iterations": on_iters,
        "kernels_per_on_iteration": round(kernels / on_iters, 1), "recording": rec, "raw_dir": raw,
    }
    print(json.dumps(out))
    if a.out:
        with open(a.out, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
