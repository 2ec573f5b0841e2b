"""INFERSCOPE_COLLECTOR=torch on CPU: one Kineto trace per process with the
scopes as user_annotations and clock markers that map onto perf_counter_ns."""
import json
import os

import pytest
from conftest import by_name, of_type, read_jsonl, run_py, spans_file

pytest.importorskip("torch")


def _kineto(raw, lines):
    k = of_type(lines, "kineto")
    assert len(k) == 1, "expected one kineto line, got %s" % k
    path = os.path.join(raw, k[0]["path"])
    assert os.path.exists(path), "kineto line names %s, which does not exist (dir: %s)" % (path, os.listdir(raw))
    with open(path) as f:
        return json.load(f)["traceEvents"]


def _offset(lines, events):
    """Kineto ts (us) -> perf_counter_ns offset from the clock markers, and its error bound."""
    ann = {e["name"]: e for e in events if e.get("cat") == "user_annotation"}
    offs = []
    for c in of_type(lines, "clock"):
        assert c["before_ns"] <= c["after_ns"], "clock line brackets nothing: %s" % c
        assert c["marker"] in ann, "marker %s missing from the Kineto trace (have %s)" % (c["marker"], sorted(ann))
        ts_ns = ann[c["marker"]]["ts"] * 1000
        offs.append((ts_ns - c["after_ns"], ts_ns - c["before_ns"]))
    return offs


def test_scoped_workload_trace(tmp_path):
    raw = tmp_path / "raw"
    code = """
import threading, torch
from inferscope import scope
x = torch.randn(64, 64)
x @ x  # before any scope: outside the profiled window
def work(name):
    with scope(name):
        for _ in range(3):
            x @ x
with scope("main-scope"):
    work("nested")
t = threading.Thread(target=work, args=("thread-scope",))
t.start(); t.join()
"""
    r = run_py(code, raw, INFERSCOPE_COLLECTOR="torch")
    assert r.returncode == 0, r.stderr
    lines = read_jsonl(spans_file(raw))
    assert lines[0]["collector"] == "torch", "expected collector torch in %s" % lines[0]
    assert lines[-1]["type"] == "end", "expected end last, got %s" % lines[-1]
    clocks = of_type(lines, "clock")
    assert [c["marker"] for c in clocks] == ["inferscope::clock#%d" % i for i in range(6)], (
        "expected a burst of 3 markers at start and 3 at stop, got %s" % clocks)
    events = _kineto(raw, lines)
    ann = {e["name"]: e for e in events if e.get("cat") == "user_annotation"}
    for name in ("main-scope", "nested", "thread-scope"):
        assert name in ann, "expected a user_annotation for scope %r, got %s" % (name, sorted(ann))
        span = by_name(lines, name)[0]
        assert ann[name]["tid"] == span["tid"], "annotation tid %s != span tid %s for %s" % (
            ann[name]["tid"], span["tid"], name)
    mm = [e for e in events if e.get("cat") == "cpu_op" and e["name"] == "aten::mm"]
    assert len(mm) == 6, "expected the 6 matmuls inside scopes (not the one before), got %d" % len(mm)
    # The markers fix the offset; every scope must then land on its span.
    offs = _offset(lines, events)
    lo, hi = max(o[0] for o in offs), min(o[1] for o in offs)
    off = (lo + hi) / 2 if lo <= hi else (offs[0][0] + offs[0][1]) / 2
    for name in ("main-scope", "nested", "thread-scope"):
        span = by_name(lines, name)[0]
        err_us = (ann[name]["ts"] * 1000 - off - span["start_ns"]) / 1000
        assert abs(err_us) < 2000, "scope %s: Kineto start is %.0f us off its span after clock sync" % (name, err_us)


def test_scopeless_workload_profiles_from_torch_import(tmp_path):
    raw = tmp_path / "raw"
    code = """
import torch
m = torch.nn.Linear(4, 4)
with torch.no_grad():
    m(torch.ones(4))
"""
    r = run_py(code, raw, INFERSCOPE_COLLECTOR="torch")
    assert r.returncode == 0, r.stderr
    lines = read_jsonl(spans_file(raw))
    proc = [x for x in of_type(lines, "span") if x["kind"] == "process"]
    fwd = [x for x in of_type(lines, "span") if x["kind"] == "forward"]
    assert len(proc) == 1 and len(fwd) == 1 and fwd[0]["parent"] == proc[0]["id"], (
        "expected the forward span under the process span, got %s / %s" % (proc, fwd))
    events = _kineto(raw, lines)
    assert any(e.get("name") == "aten::linear" for e in events), "expected aten::linear in the Kineto trace"
    assert len(_offset(lines, events)) == 6, "expected six clock markers (3 at start, 3 at stop)"


def test_collector_none_writes_no_kineto(tmp_path):
    raw = tmp_path / "raw"
    r = run_py("import torch\nfrom inferscope import scope\nwith scope('s'):\n    torch.ones(2) + 1\n", raw,
               INFERSCOPE_COLLECTOR="none")
    assert r.returncode == 0, r.stderr
    assert sorted(os.listdir(raw)) == [os.path.basename(spans_file(raw))], "expected only the spans file, got %s" % (
        os.listdir(raw))
