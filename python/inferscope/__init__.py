"""InferScope's Python side: `scope()` spans, automatic spans and the
torch.profiler or native CUPTI collector, written for the `inferscope`
binary to read (docs/raw-stream.md). Inert unless INFERSCOPE_RAW_DIR is set
(`inferscope run` sets it) or `start()` is called."""
import os as _os

from . import _boot
from ._boot import _autostart
from ._scope import scope

__all__ = ["scope", "start", "stop"]
__version__ = "0.1.0"

_COLLECTORS = ("torch", "cupti", "none")


def start(raw_dir, collector="none", cupti_lib=None, trace_size_mb=64.0, auto_spans=True):
    """Record without `inferscope run`, into raw_dir; `inferscope analyze
    raw_dir` reads it afterwards.

    collector: "torch" (torch.profiler, CPU + CUDA activities), "cupti" (the
    native collector: cupti_lib is the path of libinferscope_cupti.so,
    default $INFERSCOPE_CUPTI_LIB) or "none" (Python spans only). Either
    collector starts at the first `scope()` entry. Recording ends at exit
    or at stop(). Once per process: returns False and does nothing when
    this process is recording or has recorded (under `inferscope run` it
    already is), True when it started.
    """
    if collector not in _COLLECTORS:
        raise ValueError("collector must be one of %s, not %r" % (", ".join(_COLLECTORS), collector))
    if _boot._pid == _os.getpid():
        return False
    _boot.start(
        _os.fspath(raw_dir),
        collector=collector,
        size_mb=trace_size_mb,
        auto_spans=auto_spans,
        process_name=_boot._main_target()[0],
        cupti_lib=cupti_lib,
    )
    return True


def stop():
    """Stop the collector and end the recording (exit does it otherwise);
    scopes record nothing afterwards."""
    _boot.finish()


# Also covers a pip-installed package used without the binary's sitecustomize.
_autostart()
