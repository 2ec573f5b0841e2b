"""INFERSCOPE_COLLECTOR=cupti: the native collector (libinferscope_cupti.so,
native/cupti) loaded in-process with ctypes when the first scope opens.

`inferscope run --collector cupti` also sets CUDA_INJECTION64_PATH to the
same library, so a process that initialises CUDA first has it loaded and
started by the driver; dlopen then returns that same copy and
inferscope_cupti_start is a no-op. Either way the library writes
cupti-<pid>.bin into the raw directory, and the package stops it before
writing `end`, so the recording is complete when the span stream is."""
import os
import sys

_lib = None  # the loaded library (ctypes.CDLL), in this process


def load(path):
    """Load the library (once per process); OSError/AttributeError if it is
    not there or is not the collector."""
    global _lib
    if _lib is None:
        import ctypes

        lib = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
        for fn in ("inferscope_cupti_start", "inferscope_cupti_stop", "inferscope_cupti_pause", "inferscope_cupti_resume"):
            getattr(lib, fn).restype = ctypes.c_int
        lib.inferscope_cupti_start.argtypes = [ctypes.c_char_p]
        _lib = lib
    return _lib


def _loaded(path):
    """The library if this process already has it (injected by the driver),
    without loading it."""
    try:
        import ctypes

        lib = ctypes.CDLL(path, mode=os.RTLD_NOLOAD | ctypes.RTLD_GLOBAL)
        lib.inferscope_cupti_stop.restype = ctypes.c_int
        return lib
    except (OSError, AttributeError):
        return None


def _call(name):
    if _lib is None:
        raise RuntimeError("the native collector is not loaded")
    return getattr(_lib, name)()


def pause():
    """Turn the native collector's activity kinds and callbacks off (it keeps
    its file open); 0 on success, -1 when it is not recording."""
    return _call("inferscope_cupti_pause")


def resume():
    """Undo pause(); 0 on success, -1 when it is not recording."""
    return _call("inferscope_cupti_resume")


class CuptiCollector:
    name = "cupti"
    needs_torch = False  # starts at the first scope whether or not torch is loaded

    def __init__(self, rec, raw_dir, lib=None):
        self.rec = rec
        self.dir = raw_dir
        self.pid = os.getpid()
        self.lib = lib or os.environ.get("INFERSCOPE_CUPTI_LIB") or None
        self.started = False
        self.done = False
        self.stopped = False

    @property
    def running(self):
        # A failed start counts as done: it is tried (and reported) once.
        return self.started or self.done

    def start(self):
        if self.started or self.done or os.getpid() != self.pid:
            return
        if self.lib is None:
            self.done = True
            if not os.environ.get("CUDA_INJECTION64_PATH"):
                _warn("INFERSCOPE_CUPTI_LIB is not set")
            return
        try:
            rc = load(self.lib).inferscope_cupti_start(os.fsencode(self.dir))
        except (OSError, AttributeError) as e:
            self.done = True
            _warn(str(e) or repr(e))
            return
        if rc != 0:
            self.done = True
            _warn("inferscope_cupti_start returned %d" % rc)
            return
        self.started = True

    def stop(self):
        """Stop the library (flush, END record, close) once, in the process
        that recorded, also when the driver loaded it and no scope opened."""
        if self.stopped or os.getpid() != self.pid:
            return
        self.done = self.stopped = True
        lib = _lib
        if lib is None:
            for p in (self.lib, os.environ.get("CUDA_INJECTION64_PATH")):
                lib = _loaded(p) if p else None
                if lib is not None:
                    break
        if lib is None:
            return
        torch = sys.modules.get("torch")
        try:
            if torch is not None and torch.cuda.is_initialized():
                torch.cuda.synchronize()  # kernels still queued belong in the recording
        except Exception:
            pass
        lib.inferscope_cupti_stop()


def _warn(why):
    sys.stderr.write("inferscope: native collector not loaded: %s\n" % why.replace("\n", " "))
