"""Per-span and per-patched-call costs of the inferscope package, in ns/call.

    python python/bench/bench_spans.py [--n 200000] [--repeat 7]

Each number is the median over --repeat runs of a loop of --n calls, minus
nothing: the loop's own cost is printed as `empty loop` for reference.
"""
import argparse
import os
import shutil
import statistics
import sys
import tempfile
from time import perf_counter_ns

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from inferscope import _autospans, _boot, _scope, scope  # noqa: E402


def timeit(fn, n, repeat):
    runs = []
    for _ in range(repeat):
        t = perf_counter_ns()
        fn(n)
        runs.append((perf_counter_ns() - t) / n)
    return statistics.median(runs)


def report(label, ns):
    print("%-58s %8.0f ns/call" % (label, ns))


def loops():
    def empty(n):
        for _ in range(n):
            pass

    def span(n):
        for _ in range(n):
            with scope("bench"):
                pass

    def nested(n):
        with scope("outer"):  # inner spans are not top-level: no flush per span
            span(n)

    def decorated(n):
        f = scope("deco")(lambda: None)
        for _ in range(n):
            f()

    return empty, span, nested, decorated


class Plain:
    def call(self):
        return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=200000)
    ap.add_argument("--repeat", type=int, default=7)
    a = ap.parse_args()
    n, rep = a.n, a.repeat
    empty, span, nested, decorated = loops()

    try:
        import torch
    except ImportError:
        torch = None
    plain = Plain()

    def call_plain(k):
        for _ in range(k):
            plain.call()

    if torch is not None:
        ident = torch.nn.Identity()
        wide = torch.nn.Sequential(*[torch.nn.Identity() for _ in range(100)])
        x = torch.zeros(4)

        def call_module(k):
            for _ in range(k):
                ident(x)

        def call_wide(k):  # 1 outer + 100 submodule calls
            for _ in range(k // 100):
                wide(x)

        def call_to(k):  # same dtype: not a copy, returns self
            for _ in range(k):
                x.to(torch.float32)

    print("python %s, torch %s" % (sys.version.split()[0], getattr(torch, "__version__", None)))
    report("empty loop", timeit(empty, n, rep))
    assert _scope._rec is None
    report("scope() inert (no INFERSCOPE_RAW_DIR)", timeit(span, n, rep))
    report("@scope decorated call, inert", timeit(decorated, n, rep))
    base = {"plain": timeit(call_plain, n, rep)}
    if torch is not None:
        base["module"] = timeit(call_module, n, rep)
        base["wide"] = timeit(call_wide, n, rep)
        base["to"] = timeit(call_to, n, rep)

    raw = tempfile.mkdtemp(prefix="inferscope-bench-")
    _boot.start(raw, handlers=False, size_mb=4096)
    with scope("install"):  # first scope entry installs the patches
        pass
    _autospans._patch(Plain, "call", _autospans._method("tokenize", "Plain.call"))
    try:
        report("scope() recording, nested (no flush)", timeit(nested, n, rep))
        report("scope() recording, top-level (flush = 1 write per span)", timeit(span, n // 10, rep))
        report("@scope decorated call, recording, top-level", timeit(decorated, n // 10, rep))
        rows = [("Python method", "plain", call_plain)]
        if torch is not None:
            rows += [("nn.Module.__call__ (Identity)", "module", call_module),
                     ("Tensor.to(same dtype), no copy", "to", call_to)]
        for label, key, fn in rows:
            report("%s: unpatched" % label, base[key])
            report("%s: patched, outside any scope" % label, timeit(fn, n, rep))
            with scope("inside"):
                report("%s: patched, inside a scope" % label, timeit(fn, n // 10, rep))
        if torch is not None:
            with scope("inside"):
                w = timeit(call_wide, n, rep)
            report("nn.Module submodule call inside a forward: added cost*", w - base["wide"])
            print("  * per call of a 100-Identity Sequential divided by 100, so it includes 1/100 of the forward span")
    finally:
        _boot.stop()
    size = sum(os.path.getsize(os.path.join(raw, f)) for f in os.listdir(raw))
    shutil.rmtree(raw)
    print("(recorded %.1f MB of spans, removed)" % (size / 1e6))


if __name__ == "__main__":
    main()
