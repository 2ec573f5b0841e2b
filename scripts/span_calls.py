"""Which Python calls the automatic spans add to one iteration of a seed
scenario: every function and C call counted (sys.setprofile) in one
iteration with the spans' patches off, then on, and the difference listed.
Counts are exact where timing on a shared machine is not; this is how the
~108 classified .to() calls per sentence-transformers batch were found.

    python3 scripts/span_calls.py llm|cnn|embedding [--top 40]

Runs on the GPU when there is one, else on the CPU (the call mix differs:
copies to "cpu" are no-ops).
"""
import argparse
import collections
import gc
import os
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def counted(step, sync):
    """Calls made by one iteration: {(file or "C", function): count}, and
    the garbage collections it triggered per generation."""
    c = collections.Counter()

    def prof(frame, event, arg):
        if event == "call":
            c[(frame.f_code.co_filename.split("site-packages/")[-1], frame.f_code.co_name)] += 1
        elif event == "c_call":
            c[("C", getattr(arg, "__qualname__", str(arg)))] += 1

    g0 = [x["collections"] for x in gc.get_stats()]
    sys.setprofile(prof)
    try:
        step()
        sync()
    finally:
        sys.setprofile(None)
    return c, [x["collections"] - y for x, y in zip(gc.get_stats(), g0)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("scenario", choices=("llm", "cnn", "embedding"))
    ap.add_argument("--top", type=int, default=40)
    a = ap.parse_args()
    sys.path[:0] = [os.path.join(ROOT, "python"), os.path.join(ROOT, "workloads")]
    import torch

    import inferscope
    import scenarios
    from inferscope import _autospans

    dev = "cuda" if torch.cuda.is_available() else "cpu"
    make, bs = scenarios.SCENARIOS[a.scenario]
    step = make(dev, bs)
    sync = torch.cuda.synchronize if dev == "cuda" else (lambda: None)
    inferscope.start(tempfile.mkdtemp(prefix="inferscope-span-calls-"), collector="none", auto_spans=False)
    res = {}
    for on in (False, True):
        _autospans.install() if on else _autospans.uninstall()

        def scoped():
            with inferscope.scope(a.scenario):
                step()

        scoped()  # first use after the toggle: imports, caches
        res[on] = counted(scoped, sync)
    inferscope.stop()
    (off, gc_off), (on, gc_on) = res[False], res[True]
    print("%s on %s: %d calls per iteration without the spans, %d with; gc collections %s -> %s" % (
        a.scenario, dev, sum(off.values()), sum(on.values()), gc_off, gc_on))
    diff = {k: on[k] - off[k] for k in set(on) | set(off) if on[k] != off[k]}
    for (where, fn), n in sorted(diff.items(), key=lambda kv: (-abs(kv[1]), kv[0]))[:a.top]:
        print("%+7d  %s %s" % (n, where, fn))


if __name__ == "__main__":
    main()
