"""scope(): named, nestable spans on a per-thread stack.

A frame is a tuple (id, parent, name_json, kind, start_ns, record_function,
forced); `forced` means its begin line was written, so its span line must be
written too even past the size budget.
"""
import functools
import itertools
import threading
from time import perf_counter_ns

_rec = None  # the Recorder while recording; None keeps the package inert
_first = None  # run at the first scope entry (starts collector, auto spans)
_rf = None  # torch.profiler.record_function while the torch collector runs


class _Local(threading.local):
    # Class defaults, so a thread that never opened a span reads an empty
    # stack: catching AttributeError instead costs ~0.8 us per patched call.
    stack = ()
    tid = 0
    thread = '""'


_tls = _Local()
_ids = itertools.count(1)
_jnames = {}

ROOT_KINDS = ("scope", "process")


def jname(s):
    """JSON string for a name, cached: names repeat and quoting is not free."""
    j = _jnames.get(s)
    if j is None:
        j = quote(str(s))
        if len(_jnames) < 8192:  # dynamic names (f"req-{i}") must not grow it forever
            _jnames[s] = j
    return j


def quote(s):
    if s.isascii() and s.isprintable() and '"' not in s and "\\" not in s:
        return '"' + s + '"'
    import json  # only for unusual names: json (and re, enum) cost startup time

    return json.dumps(s)


def qualname(t):
    mod = getattr(t, "__module__", None)
    name = getattr(t, "__qualname__", None) or t.__name__
    return name if mod in (None, "builtins", "__main__") else mod + "." + name


def thread_stack():
    t = _tls
    t.tid = threading.get_native_id()
    t.thread = jname(threading.current_thread().name)
    t.stack = []
    return t.stack


def push(st, name_json, kind):
    """Open an automatic span (no begin line, no record_function)."""
    fr = (next(_ids), st[-1][0] if st else 0, name_json, kind, perf_counter_ns(), None, False)
    st.append(fr)
    return fr


def pop(st, fr, et, reason=None):
    end = perf_counter_ns()
    if st and st[-1] is fr:
        st.pop()
    else:
        try:
            st.remove(fr)
        except (ValueError, AttributeError):
            return  # already closed by a signal handler, or a fork reset the stack
    if fr[5] is not None:
        try:
            fr[5].__exit__(None, None, None)
        except Exception:
            pass
    rec = _rec
    if rec is None:
        return
    if et is None and reason is None:
        err = ""
    else:
        err = ',"error":' + jname(reason if reason is not None else qualname(et))
    t = _tls
    # Inlined write(): this is the hot path of every span.
    rec.span(
        f'{{"type":"span","id":{fr[0]},"parent":{fr[1]},"name":{fr[2]},"kind":"{fr[3]}","tid":{t.tid},'
        f'"thread":{t.thread},"start_ns":{fr[4]},"end_ns":{end}{err}}}\n',
        fr[6],
    )
    if fr[3] in ROOT_KINDS and (not st or st[-1][3] == "process"):
        rec.flush()


def write(fr, end, err=""):
    """Write a frame's span line without popping it (the process span)."""
    rec = _rec
    if rec is None:
        return
    t = _tls
    rec.span(
        f'{{"type":"span","id":{fr[0]},"parent":{fr[1]},"name":{fr[2]},"kind":"{fr[3]}","tid":{t.tid},'
        f'"thread":{t.thread},"start_ns":{fr[4]},"end_ns":{end}{err}}}\n',
        fr[6],
    )


class scope:
    """Record a named span: `with scope("llm_inference"):` or `@scope("step")`.

    Inert (one branch) unless recording was started by `inferscope run`.
    """

    __slots__ = ("name", "_fr")

    def __init__(self, name):
        self.name = name
        self._fr = None  # linked list of open frames, so one object can nest in itself

    def __enter__(self):
        rec = _rec
        if rec is None:
            return self
        if _first is not None:
            _first()
        st = _tls.stack
        if st.__class__ is tuple:  # this thread's first span
            st = thread_stack()
        rf = None
        if _rf is not None:
            try:
                rf = _rf(str(self.name))
                rf.__enter__()
            except Exception:
                rf = None
        i = next(_ids)
        jn = jname(self.name)
        start = perf_counter_ns()
        forced = rec.begin(f'{{"type":"begin","id":{i},"name":{jn},"kind":"scope","tid":{_tls.tid},"t_ns":{start}}}\n')
        fr = (i, st[-1][0] if st else 0, jn, "scope", start, rf, forced)
        st.append(fr)
        self._fr = (fr, self._fr)
        return self

    def __exit__(self, et, ev, tb):
        if self._fr is None:
            return False
        fr, self._fr = self._fr
        if ev is not None and not hasattr(ev, "_inferscope_scope"):
            # The innermost scope an exception escapes is the one its error line names.
            try:
                ev._inferscope_scope = fr[0]
            except Exception:
                pass
        pop(_tls.stack, fr, et)
        return False

    def __call__(self, fn):
        name = self.name

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            if _rec is None:
                return fn(*args, **kwargs)
            with scope(name):
                return fn(*args, **kwargs)

        return wrapper

    def __repr__(self):
        return "scope(%r)" % (self.name,)
