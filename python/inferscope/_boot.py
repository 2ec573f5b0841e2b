"""Process-level wiring: the process line and root span, when the collector
starts, and how the run ends (atexit, SIGINT/SIGTERM, uncaught exception,
fork)."""
import atexit
import os
import signal
import sys
import threading
from time import perf_counter_ns

from . import _autospans, _hooks, _scope
from ._recorder import Recorder
from ._scope import _tls, jname, pop, qualname, quote, thread_stack

_started = False  # _autostart ran (whatever it decided)
_lock = threading.RLock()
_pid = None
_collector = None
_auto = False
_scopeless = False  # no scope expected: the process span is the main thread's root
_scope_seen = False
_process_frame = None
_finished = False
_prev_handlers = {}
_prev_excepthook = None
_fork_hook = False
_exiting_hook = False


def _autostart():
    """Start recording if `inferscope run` asked for it (INFERSCOPE_RAW_DIR);
    called from sitecustomize and on `import inferscope`; idempotent."""
    global _started
    if _started or not os.environ.get("INFERSCOPE_RAW_DIR"):
        return
    _started = True
    env = os.environ
    try:
        pid = str(os.getpid())
        # Children (dataloader workers, compile workers, subprocesses) inherit
        # this and so know they are not the workload's main process.
        root = env.setdefault("INFERSCOPE_ROOT_PID", pid) == pid
        name, source = _main_target()
        start(
            env["INFERSCOPE_RAW_DIR"],
            collector=env.get("INFERSCOPE_COLLECTOR", "none"),
            size_mb=_number(env.get("INFERSCOPE_TRACE_SIZE_MB"), 64.0),
            auto_spans=env.get("INFERSCOPE_AUTO_SPANS", "1") != "0",
            process_name=name,
            # A main script that never mentions inferscope opens no scope, so
            # the process span is its root and the profiler starts with torch.
            scopeless=root and (source is None or "inferscope" not in source),
        )
    except Exception as e:
        sys.stderr.write("inferscope: not recording: %r\n" % (e,))
        try:
            stop()
        except Exception:
            pass


def start(raw_dir, collector="none", size_mb=64.0, auto_spans=True, process_name=None, scopeless=False, handlers=True,
          cupti_lib=None):
    """Start recording into raw_dir (tests and inferscope.start call this).
    cupti_lib: the native collector's library for collector "cupti" (default
    $INFERSCOPE_CUPTI_LIB)."""
    global _pid, _collector, _auto, _scopeless, _scope_seen, _process_frame, _finished, _fork_hook
    os.makedirs(raw_dir, exist_ok=True)
    rec = Recorder(raw_dir, int(size_mb * (1 << 20)))
    _pid = os.getpid()
    _finished = False
    _scope_seen = False
    _auto = auto_spans
    _scopeless = scopeless
    if collector == "torch" and _torch_version() is not None:
        from ._collector_torch import TorchCollector

        _collector = TorchCollector(rec, raw_dir)
    elif collector == "cupti":
        from ._collector_cupti import CuptiCollector

        _collector = CuptiCollector(rec, raw_dir, cupti_lib)
    else:
        _collector = None
    rec.emit(_process_line())
    _scope._rec = rec
    _process_frame = None
    if process_name is not None:
        st = _tls.stack if _tls.stack.__class__ is list else thread_stack()
        i, jn, t = next(_scope._ids), jname(process_name), perf_counter_ns()
        forced = rec.begin('{"type":"begin","id":%d,"name":%s,"kind":"process","tid":%d,"t_ns":%d}\n' % (i, jn, _tls.tid, t))
        _process_frame = (i, 0, jn, "process", t, None, forced)
        if scopeless:
            st.append(_process_frame)
    _scope._first = _on_first_scope
    if scopeless and auto_spans:
        _autospans.install()
    if _collector is not None:
        _hooks.on_import("torch", _on_torch_import)
    if handlers:
        _install_handlers()
    if not _fork_hook and hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=_after_fork_child)
        _fork_hook = True
    rec.flush()  # the process line is on disk before the workload's first line runs


def stop():
    """finish() and undo everything start() did (for tests)."""
    global _collector
    finish()
    _scope._rec = None
    _scope._first = None
    _scope._rf = None
    _autospans.uninstall()
    _hooks.cancel(_on_torch_import)
    _collector = None
    _restore_handlers()
    if _tls.stack.__class__ is list:
        del _tls.stack[:]


def finish(reason=None):
    """Stop/export the collector, close the process span, write `end`; once."""
    global _finished
    with _lock:
        rec = _scope._rec
        if _finished or rec is None or os.getpid() != _pid:
            return
        _finished = True
    # The workload may have replaced our excepthook; Python sets
    # sys.last_value before calling whichever hook is installed.
    last = getattr(sys, "last_value", None)
    if last is not None and reason is None:
        try:
            _report_error(last)
        except Exception:
            pass
    _stop_collector()
    fr = _process_frame
    if fr is not None:
        st = _tls.stack if _tls.stack.__class__ is list else thread_stack()
        if fr in st:
            pop(st, fr, None, reason)
        else:
            _scope.write(fr, perf_counter_ns(), "" if reason is None else ',"error":' + jname(reason))
    rec.flush()  # `recorded` is counted as lines reach the file
    end = {"type": "end", "t_ns": perf_counter_ns(), "dropped": rec.dropped, "recorded": rec.recorded}
    end.update(_cuda_facts())
    rec.close(_line(end))
    _scope._rec = None
    _scope._first = None


def _on_first_scope():
    global _scope_seen
    _scope._first = None
    _scope_seen = True
    if _auto:
        _autospans.install()
    _maybe_start_collector()


def _on_torch_import(torch):
    _maybe_start_collector(imported=True)


def _maybe_start_collector(imported=False):
    """The profiler window opens at the first scope entry, or at `import
    torch` in a scopeless main process, whichever comes with torch loaded
    (the native collector does not wait for torch at a scope)."""
    global _collector, _exiting_hook
    c = _collector
    if c is None or c.running or not (_scope_seen or _scopeless):
        return
    if c.needs_torch or not _scope_seen:
        mod = sys.modules.get("torch")
        # Mid-import (a scope entered while torch imports) waits for the import hook.
        if mod is None or (not imported and _hooks._initializing(mod)):
            return
    try:
        c.start()
    except Exception as e:
        sys.stderr.write("inferscope: %s collector not started: %r\n" % (c.name, e))
        _collector = None
        return
    if not _exiting_hook:
        # Registered after torch's own atexit handlers, so it runs before them.
        atexit.register(_stop_collector)
        _exiting_hook = True


def _stop_collector():
    c = _collector
    if c is None:
        return
    try:
        c.stop()
    except Exception as e:
        sys.stderr.write("inferscope: %s collector stop failed: %r\n" % (c.name, e))


# --- signals, exceptions, fork -------------------------------------------------


def _install_handlers():
    global _prev_excepthook
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGINT, signal.SIGTERM):
            prev = signal.getsignal(sig)
            if prev is signal.SIG_IGN or prev is None:
                continue  # ignored on purpose (nohup, background job), or set from C
            _prev_handlers[sig] = prev
            signal.signal(sig, _on_signal)
    if _prev_excepthook is None:
        _prev_excepthook = sys.excepthook
        sys.excepthook = _excepthook
    atexit.register(finish)


def _restore_handlers():
    global _prev_excepthook
    if threading.current_thread() is threading.main_thread():
        for sig, prev in list(_prev_handlers.items()):
            if signal.getsignal(sig) is _on_signal:
                signal.signal(sig, prev)
            del _prev_handlers[sig]
    if _prev_excepthook is not None:
        if sys.excepthook is _excepthook:
            sys.excepthook = _prev_excepthook
        _prev_excepthook = None
    atexit.unregister(finish)


def _on_signal(signum, frame):
    name = signal.Signals(signum).name
    try:
        rec = _scope._rec
        if rec is not None and not _finished and os.getpid() == _pid:
            rec.emit('{"type":"signal","signal":"%s","t_ns":%d}\n' % (name, perf_counter_ns()))
            # Close this thread's open spans now: `end` comes next, and the
            # exception that unwinds them afterwards records nothing more.
            st = _tls.stack
            for fr in [f for f in reversed(st) if f[3] != "process"]:
                pop(st, fr, None, name)
            finish(name)
    except Exception as e:
        sys.stderr.write("inferscope: signal handling failed: %r\n" % (e,))
    prev = _prev_handlers.get(signum)
    if callable(prev):
        return prev(signum, frame)  # default_int_handler raises KeyboardInterrupt
    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    os._exit(128 + signum)  # SIGTERM's default: die now, no Python cleanup


def _excepthook(et, ev, tb):
    try:
        _report_error(ev)
    except Exception:
        pass
    (_prev_excepthook or sys.__excepthook__)(et, ev, tb)


def _report_error(ev):
    rec = _scope._rec
    if rec is None or os.getpid() != _pid or getattr(ev, "_inferscope_reported", False):
        return
    try:
        ev._inferscope_reported = True
    except Exception:
        pass
    lines = str(ev).strip().splitlines()
    rec.emit(
        _line(
            {
                "type": "error",
                "exc_type": qualname(type(ev)),
                "message": lines[0][:2000] if lines else "",
                "scope_id": getattr(ev, "_inferscope_scope", 0),
            }
        )
    )
    rec.flush()


def _after_fork_child():
    global _pid, _collector, _process_frame
    rec = _scope._rec
    if rec is None:
        return
    rec.after_fork_child()
    _pid = os.getpid()
    # The parent's profiler and root span are the parent's to finish.
    _collector = None
    _scope._rf = None
    _process_frame = None
    thread_stack()  # new native tid; the parent's open frames are not ours
    rec.emit(_process_line())


# --- facts ---------------------------------------------------------------------


def _line(obj):
    """One JSON line for a flat dict (json itself is slow to import)."""
    return "{" + ",".join('"%s":%s' % (k, _value(v)) for k, v in obj.items()) + "}\n"


def _value(v):
    if v is None:
        return "null"
    if v is True or v is False:
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, (list, tuple)):
        return "[" + ",".join(_value(x) for x in v) + "]"
    return quote(str(v))


def _process_line():
    argv = list(sys.argv) if getattr(sys, "argv", None) else []
    if argv and argv[0] == "-m":
        argv[0:1] = ["-m", _orig_arg("-m") or "?"]
    return _line(
        {
            "type": "process",
            "pid": os.getpid(),
            "argv": argv,
            "t_ns": perf_counter_ns(),
            "python": "%d.%d.%d" % sys.version_info[:3],
            "torch": _torch_version(),
            # Asking CUDA now would initialise it before the workload does;
            # the `end` line carries cuda/device once the workload has.
            "cuda": None,
            "device": None,
            "collector": _collector.name if _collector is not None else "none",
        }
    )


def _cuda_facts():
    torch = sys.modules.get("torch")
    try:
        if torch is not None and torch.cuda.is_initialized():
            return {"cuda": True, "device": torch.cuda.get_device_name()}
    except Exception:
        pass
    return {}


def _torch_version():
    """torch.__version__ without importing torch (which takes seconds)."""
    torch = sys.modules.get("torch")
    if torch is not None:
        return getattr(torch, "__version__", None)
    try:
        import importlib.machinery

        spec = importlib.machinery.PathFinder.find_spec("torch")
        if spec is None or not spec.submodule_search_locations:
            return None
        for d in spec.submodule_search_locations:
            try:
                with open(os.path.join(d, "version.py")) as f:
                    for line in f:
                        if line.startswith("__version__"):
                            return line.split("=", 1)[1].strip().strip("'\"")
            except (OSError, IndexError):
                continue
        return "unknown"
    except Exception:
        return None


def _orig_arg(flag):
    orig = getattr(sys, "orig_argv", None) or []
    try:
        return orig[orig.index(flag) + 1]
    except (ValueError, IndexError):
        return None


def _main_target():
    """(span name, source text or None) of what this interpreter will run."""
    a0 = sys.argv[0] if getattr(sys, "argv", None) else ""
    if a0 == "-c":
        return "-c", _orig_arg("-c")
    if a0 == "-m":
        mod = _orig_arg("-m")
        return mod or "-m", _module_source(mod)
    if not a0:
        return "python", None
    try:
        with open(a0, encoding="utf-8", errors="replace") as f:
            return os.path.basename(a0), f.read(1 << 22)
    except OSError:
        return os.path.basename(a0), None


def _module_source(mod):
    """Source of `python -m mod`, found without importing its packages."""
    if not mod:
        return None
    try:
        import importlib.machinery

        spec, path = None, None
        parts = mod.split(".")
        for k in range(1, len(parts) + 1):
            spec = importlib.machinery.PathFinder.find_spec(".".join(parts[:k]), path)
            if spec is None:
                return None
            path = spec.submodule_search_locations
        origin = spec.origin
        if path:  # a package runs its __main__
            origin = os.path.join(list(path)[0], "__main__.py")
        with open(origin, encoding="utf-8", errors="replace") as f:
            return f.read(1 << 22)
    except Exception:
        return None


def _number(s, default):
    try:
        v = float(s)
        return v if v > 0 else default
    except (TypeError, ValueError):
        return default
