"""INFERSCOPE_COLLECTOR=torch: one torch.profiler session for the whole run,
exported once to kineto-<pid>.json, with clock markers that let the binary
map Kineto time onto perf_counter_ns."""
import os
import threading
from time import perf_counter_ns

from . import _scope


class TorchCollector:
    name = "torch"
    needs_torch = True

    def __init__(self, rec, raw_dir):
        self.rec = rec
        self.dir = raw_dir
        self.pid = os.getpid()
        self.prof = None
        self.done = False
        self.markers = 0
        self.lock = threading.RLock()  # RLock: stop() may run in a signal handler during start()

    @property
    def running(self):
        return self.prof is not None and not self.done

    def start(self):
        with self.lock:
            if self.prof is not None or self.done or os.getpid() != self.pid:
                return
            import torch
            from torch.profiler import ProfilerActivity, profile, record_function

            cuda = torch.cuda.is_available()
            acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
            prof = profile(
                activities=acts,
                record_shapes=False,
                with_stack=False,
                profile_memory=False,
                experimental_config=_config(torch, cuda),
            )
            prof.start()
            self.prof = prof
            self.record_function = record_function
            self.markers_burst()
            _scope._rf = record_function

    def markers_burst(self, n=3):
        """Several markers: the binary fits on the tightest-bracketed ones
        (the first record_function after profiler start is the slowest)."""
        for _ in range(n):
            self.marker()

    def marker(self):
        name = "inferscope::clock#%d" % self.markers
        self.markers += 1
        rf = self.record_function(name)
        before = perf_counter_ns()
        rf.__enter__()  # the Kineto event's ts is taken in here
        after = perf_counter_ns()
        rf.__exit__(None, None, None)
        self.rec.emit('{"type":"clock","marker":"%s","before_ns":%d,"after_ns":%d}\n' % (name, before, after))

    def stop(self):
        """Stop and export; once, and only in the process that started it."""
        with self.lock:
            if self.prof is None or self.done or os.getpid() != self.pid:
                return
            self.done = True
            _scope._rf = None
            import torch

            try:
                if torch.cuda.is_initialized():
                    torch.cuda.synchronize()  # kernels still queued belong in the trace
            except Exception:
                pass
            self.markers_burst()
            self.prof.stop()
            name = "kineto-%d.json" % self.pid
            path = os.path.join(self.dir, name)
            # Rename into place: the binary never sees a half-written file.
            self.prof.export_chrome_trace(path + ".tmp")
            os.replace(path + ".tmp", path)
            self.rec.emit('{"type":"kineto","path":"%s"}\n' % name)
            self.prof = None


def _config(torch, cuda):
    """profile_all_threads: without it threads started after the profiler are
    missing. trace_only: stop() skips building Python events we never read.
    No CUDA sync events: the binary attributes sync time from the runtime
    calls it already has, and the extra callbacks cost latency."""
    try:
        from torch._C._profiler import _ExperimentalConfig
    except ImportError:
        return None
    for kw in (
        dict(profile_all_threads=True, trace_only=True),
        dict(profile_all_threads=True),
        dict(),
    ):
        try:
            return _ExperimentalConfig(**kw)
        except TypeError:  # older torch without some of these
            continue
    return None
