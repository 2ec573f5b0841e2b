"""Whole-process behaviour through sitecustomize: process/end lines, SIGKILL,
SIGINT, SIGTERM, uncaught exceptions, fork, sitecustomize chaining."""
import os
import signal
import subprocess
import sys
import time

import pytest
from conftest import BOOT_DIR, PY_DIR, by_name, env_for, of_type, read_jsonl, run_py, spans_file


def test_process_line_root_span_and_end(tmp_path):
    raw = tmp_path / "raw"
    r = run_py("from inferscope import scope\nwith scope('work'):\n    pass\n", raw)
    assert r.returncode == 0, r.stderr
    lines = read_jsonl(spans_file(raw))
    first, last = lines[0], lines[-1]
    assert first["type"] == "process" and first["pid"] > 0 and first["argv"][0].endswith("raw-script.py"), (
        "expected a process line first, got %s" % first)
    assert first["collector"] == "none" and first["python"].count(".") == 2, "unexpected process line %s" % first
    assert last["type"] == "end" and last["dropped"] == 0, "expected end last, got %s" % last
    proc = [x for x in of_type(lines, "span") if x["kind"] == "process"]
    assert len(proc) == 1 and proc[0]["name"] == "raw-script.py", "expected one process span, got %s" % proc
    work = by_name(lines, "work")[0]
    assert work["parent"] == 0, "a workload with scopes keeps them as roots, got parent %s" % work["parent"]
    assert proc[0]["start_ns"] <= work["start_ns"] <= work["end_ns"] <= proc[0]["end_ns"], "process span must cover work"
    assert [x["id"] for x in of_type(lines, "begin")] == [proc[0]["id"], work["id"]], "expected begin lines for both"


def test_sigkill_keeps_complete_lines(tmp_path):
    raw = tmp_path / "raw"
    code = """
import sys
from inferscope import scope
with scope("long-running"):  # never exits: only the flusher writes
    i = 0
    while True:
        with scope("tick"):
            i += 1
        if i == 2000:
            print("ready", flush=True)
"""
    script = tmp_path / "kill.py"
    script.write_text(code)
    p = subprocess.Popen([sys.executable, str(script)], env=env_for(raw), stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline().strip() == "ready", "child did not start"
        time.sleep(0.5)
        killed_at = time.perf_counter_ns()  # CLOCK_MONOTONIC: comparable across processes
        p.send_signal(signal.SIGKILL)
        p.wait(10)
    finally:
        p.kill()
    lines = read_jsonl(spans_file(raw), torn_tail_ok=True)  # every line but a torn last one must parse
    assert of_type(lines, "end") == [], "a SIGKILLed process cannot have written end"
    assert [x["name"] for x in of_type(lines, "begin")][:2] == ["kill.py", "long-running"], "expected the process's and the open scope's begin lines first"
    assert not [x for x in of_type(lines, "span") if x["name"] == "long-running"], "the open scope cannot have a span"
    ticks = by_name(lines, "tick")
    lost_ms = (killed_at - ticks[-1]["end_ns"]) / 1e6
    assert len(ticks) >= 2000, "expected at least 2000 tick spans, got %d" % len(ticks)
    assert lost_ms < 400, "expected the last span within ~100 ms of the kill, got %.1f ms lost" % lost_ms


def _signal_child(tmp_path, sig):
    raw = tmp_path / "raw"
    code = """
import time
from inferscope import scope
with scope("outer"):
    with scope("waiting"):
        print("ready", flush=True)
        time.sleep(30)
"""
    script = tmp_path / "sig.py"
    script.write_text(code)
    p = subprocess.Popen([sys.executable, str(script)], env=env_for(raw), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "ready", "child did not start: %s" % p.stderr.read()
    p.send_signal(sig)
    _, err = p.communicate(timeout=20)
    return p.returncode, err, read_jsonl(spans_file(raw))


def _check_signal_lines(lines, name):
    sig = of_type(lines, "signal")
    assert len(sig) == 1 and sig[0]["signal"] == name, "expected one %s signal line, got %s" % (name, sig)
    assert lines[-1]["type"] == "end", "expected end as the last line, got %s" % lines[-1]
    for n in ("waiting", "outer"):
        s = by_name(lines, n)
        assert len(s) == 1 and s[0].get("error") == name, "expected %s closed once with error %s, got %s" % (n, name, s)
    assert by_name(lines, "waiting")[0]["end_ns"] >= sig[0]["t_ns"], "spans end at the signal, not before"


def test_sigint_writes_signal_and_end(tmp_path):
    rc, err, lines = _signal_child(tmp_path, signal.SIGINT)
    assert rc == -signal.SIGINT and "KeyboardInterrupt" in err, (
        "expected the default SIGINT behaviour (KeyboardInterrupt, killed by SIGINT), got rc=%s stderr=%s" % (rc, err))
    _check_signal_lines(lines, "SIGINT")


def test_sigterm_writes_signal_and_end_then_exits_143(tmp_path):
    rc, err, lines = _signal_child(tmp_path, signal.SIGTERM)
    assert rc == 128 + signal.SIGTERM, "expected exit status 143, got %s (stderr %s)" % (rc, err)
    _check_signal_lines(lines, "SIGTERM")


@pytest.mark.parametrize("hook", ["ours", "replaced"])
def test_uncaught_exception_writes_error(tmp_path, hook):
    raw = tmp_path / "raw"
    code = """
import sys
def mine(*a):
    sys.stderr.write("workload hook ran\\n")
    prev(*a)
prev = sys.excepthook
if HOOK == "replaced":  # the workload drops ours: the error line must come from atexit
    prev = sys.__excepthook__
sys.excepthook = mine
from inferscope import scope
with scope("outer"):
    with scope("fails"):
        raise ValueError("first line\\nsecond line")
""".replace("HOOK", repr(hook))
    r = run_py(code, raw)
    assert r.returncode == 1 and "ValueError: first line" in r.stderr and "workload hook ran" in r.stderr, (
        "expected the workload's hook and the usual traceback, got %s" % r.stderr)
    lines = read_jsonl(spans_file(raw))
    errs = of_type(lines, "error")
    fails = by_name(lines, "fails")[0]
    assert len(errs) == 1, "expected one error line, got %s" % errs
    e = errs[0]
    assert (e["exc_type"], e["message"], e["scope_id"]) == ("ValueError", "first line", fails["id"]), (
        "expected ValueError / 'first line' / scope %d, got %s" % (fails["id"], e))
    assert fails["error"] == "ValueError", "expected the span to carry the error, got %s" % fails
    assert lines.index(e) < len(lines) - 1 and lines[-1]["type"] == "end", "expected error before end"


def test_forked_child_writes_its_own_file(tmp_path):
    raw = tmp_path / "raw"
    code = """
import os, sys
from inferscope import scope
with scope("parent-scope"):
    pid = os.fork()
    if pid == 0:
        with scope("child-scope"):
            pass
        sys.exit(0)  # unwinds the inherited scope, then atexit
    _, status = os.waitpid(pid, 0)
    print(pid, status)
"""
    r = run_py(code, raw)
    assert r.returncode == 0, r.stderr
    child_pid, status = map(int, r.stdout.split())
    assert status == 0, "child failed: %s" % r.stderr
    files = sorted(os.listdir(raw))
    assert len(files) == 2, "expected a spans file per process, got %s" % files
    child = read_jsonl(spans_file(raw, child_pid))
    parent = [x for x in read_jsonl(os.path.join(raw, [f for f in files if str(child_pid) not in f][0]))]
    assert child[0]["type"] == "process" and child[0]["pid"] == child_pid, "expected the child's own process line"
    assert [x["name"] for x in of_type(child, "span")] == ["child-scope"], (
        "expected only the child's scope in its file, got %s" % of_type(child, "span"))
    assert by_name(child, "child-scope")[0]["tid"] == child_pid, "expected the child's native tid"
    assert child[-1]["type"] == "end", "expected end in the child's file"
    assert not [x for x in parent if x.get("name") == "child-scope"], "child wrote into the parent's file"
    assert len(of_type(parent, "end")) == 1 and by_name(parent, "parent-scope"), "parent file incomplete"


def test_sitecustomize_chains_to_the_next_one(tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    (other / "sitecustomize.py").write_text("import os\nos.environ['CHAINED'] = 'yes'\n")
    env = env_for(tmp_path / "raw")
    env["PYTHONPATH"] = BOOT_DIR + os.pathsep + str(other)
    r = subprocess.run([sys.executable, "-c", "import os, sys, inferscope\nprint(os.environ.get('CHAINED'), "
                        "inferscope._scope._rec is not None, inferscope.__file__)"], env=env, capture_output=True,
                       text=True, timeout=60)
    want = ["yes", "True", os.path.join(PY_DIR, "inferscope", "__init__.py")]
    assert r.stdout.split() == want, (
        "expected the other sitecustomize run, recording on, and the package beside the boot dir (not an installed "
        "copy): want %s, got %r %r" % (want, r.stdout, r.stderr))
