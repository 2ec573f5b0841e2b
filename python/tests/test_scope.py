"""scope(): inert mode, nesting, decorator, errors, threads, size budget."""
import threading

from conftest import by_name, of_type, read_jsonl, run_py, spans_file

from inferscope import _boot, _scope, scope


def test_inert_without_raw_dir(tmp_path):
    code = """
import os, sys, threading
from inferscope import scope, _scope, _autospans, _hooks
@scope("deco")
def f(x):
    return x + 1
with scope("a"):
    with scope("b"):
        assert f(1) == 2
print(_scope._rec is None, threading.active_count(), _autospans.installed(), _hooks._finder in sys.meta_path,
      sorted(os.listdir(".")))
"""
    r = run_py(code, tmp_path / "raw", INFERSCOPE_RAW_DIR="")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split()[:4] == ["True", "1", "False", "False"], (
        "expected inert: no recorder, no extra thread, no patches, no import hook; got %r" % r.stdout)
    assert not (tmp_path / "raw").exists(), "expected no raw dir to be created"


def test_inert_in_process():
    assert _scope._rec is None, "the test process must start inert"
    with scope("x") as s:
        assert s._fr is None, "expected no frame while inert, got %r" % (s._fr,)
    assert not getattr(_scope._tls, "stack", []), "expected an empty stack while inert"


def test_nesting_and_decorator(recording):
    @scope("step")
    def step(n):
        with scope("inner"):
            return n * 2

    with scope("outer"):
        assert step(2) == 4
        assert step(3) == 6
    s = scope("reused")
    with s:
        with s:  # the same object nested in itself
            pass
    lines = recording()
    outer = by_name(lines, "outer")[0]
    steps = by_name(lines, "step")
    inners = by_name(lines, "inner")
    assert outer["parent"] == 0, "expected outer to be a root, got parent %r" % outer["parent"]
    assert [x["parent"] for x in steps] == [outer["id"]] * 2, "expected both steps under outer, got %s" % steps
    assert sorted(x["parent"] for x in inners) == sorted(x["id"] for x in steps), "expected each inner under a step"
    r1, r2 = sorted(by_name(lines, "reused"), key=lambda x: x["start_ns"])
    assert r2["parent"] == r1["id"], "expected the reused scope to nest in itself, got %s %s" % (r1, r2)
    for x in of_type(lines, "span"):
        assert x["start_ns"] <= x["end_ns"], "span ends before it starts: %s" % x
        assert x["kind"] == "scope" and x["thread"] == "MainThread", "unexpected span %s" % x
    begins = {x["id"] for x in of_type(lines, "begin")}
    assert begins == {x["id"] for x in of_type(lines, "span")}, "expected a begin line for every scope span"
    assert lines[-1]["type"] == "end" and lines[-1]["recorded"] == 7 and lines[-1]["dropped"] == 0, (
        "expected end with recorded=7 dropped=0, got %s" % lines[-1])


def test_exception_escaping_scope_is_recorded(recording):
    try:
        with scope("outer"):
            with scope("fails"):
                raise KeyError("k")
    except KeyError as e:
        err = e
    lines = recording()
    fails, outer = by_name(lines, "fails")[0], by_name(lines, "outer")[0]
    assert fails.get("error") == "KeyError" and outer.get("error") == "KeyError", (
        "expected both spans written with error KeyError, got %s / %s" % (fails, outer))
    assert err._inferscope_scope == fails["id"], "expected the innermost scope to be remembered for the error line"


def test_threads_have_their_own_stacks(recording):
    barrier = threading.Barrier(8)

    def work(i):
        barrier.wait()  # all 8 inside their scopes at the same time
        with scope("thread-%d" % i):
            for _ in range(20):
                with scope("op"):
                    with scope("leaf"):
                        pass

    ts = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    [t.start() for t in ts]
    [t.join() for t in ts]
    lines = recording()
    spans = {x["id"]: x for x in of_type(lines, "span")}
    assert len(spans) == 8 * 41, "expected %d spans, got %d" % (8 * 41, len(spans))
    tids = {x["tid"] for x in spans.values()}
    assert len(tids) == 8, "expected 8 distinct native tids, got %s" % tids
    for x in spans.values():
        if x["parent"]:
            p = spans[x["parent"]]
            assert p["tid"] == x["tid"], "span %s has a parent on another thread: %s" % (x, p)
    roots = [x for x in spans.values() if x["parent"] == 0]
    assert sorted(x["name"] for x in roots) == sorted("thread-%d" % i for i in range(8)), (
        "expected one root per thread, got %s" % [x["name"] for x in roots])


def test_size_budget_drops_and_counts(tmp_path):
    raw = tmp_path / "raw"
    _boot.start(str(raw), size_mb=2000 / (1 << 20), handlers=False)  # about 2000 bytes
    try:
        with scope("kept-open"):
            for i in range(200):
                with scope("s%d" % i):
                    pass
    finally:
        _boot.stop()
    lines = read_jsonl(spans_file(raw))
    end = lines[-1]
    spans = of_type(lines, "span")
    assert end["type"] == "end", "expected the last line to be end, got %s" % end
    assert 0 < end["dropped"] < 201, "expected some spans dropped, got %s" % end
    assert end["recorded"] == len(spans), "expected recorded=%d (span lines), got %s" % (len(spans), end)
    assert end["recorded"] + end["dropped"] == 201, "expected recorded+dropped=201, got %s" % end
    assert by_name(lines, "kept-open"), "a scope whose begin was written must get its span even past the budget"
    assert sum(len(x) for x in open(spans_file(raw)).read().splitlines()) < 2000 + 1200, "expected the file to stay near the budget"
