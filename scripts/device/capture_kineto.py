"""Run one workload under torch.profiler (CPU + CUDA activities) and write its
Kineto trace. Used to make the real GPU test data under testdata/gpu/.

    python3 capture_kineto.py OUT.json SCRIPT [ARGS...]

A stand-in `inferscope` module is put in sys.modules whose `scope(name)` is
`torch.profiler.record_function(name)`. The profiler starts lazily at the
first scope entry and stops at exit, so model set-up and warm-up (which the
workloads run outside any scope) stay out of the trace and each scope is an
exact `user_annotation` region.
"""
import contextlib
import gzip
import runpy
import shutil
import sys
import types

import torch
from torch.profiler import ProfilerActivity, profile, record_function

out, script, args = sys.argv[1], sys.argv[2], sys.argv[3:]
state = {"prof": None}


@contextlib.contextmanager
def scope(name):
    if state["prof"] is None:
        acts = [ProfilerActivity.CPU]
        if torch.cuda.is_available():
            acts.append(ProfilerActivity.CUDA)
        state["prof"] = profile(activities=acts)
        state["prof"].__enter__()
    with record_function(name):
        yield


mod = types.ModuleType("inferscope")
mod.scope = scope
sys.modules["inferscope"] = mod
sys.argv = [script] + args
try:
    runpy.run_path(script, run_name="__main__")
finally:
    prof = state["prof"]
    if prof is not None:
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        prof.__exit__(None, None, None)
        prof.export_chrome_trace(out)
        with open(out, "rb") as f, gzip.open(out + ".gz", "wb", compresslevel=9) as g:
            shutil.copyfileobj(f, g)
