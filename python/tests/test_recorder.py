"""The writer: every line exactly once even when a signal handler flushes in
the middle of a flush (simulated at the points where Python can run one)."""
import os

from inferscope import _recorder
from inferscope._recorder import Recorder


def _file_lines(rec):
    with open(rec.path) as f:
        return f.read().splitlines()


def test_handler_runs_after_the_write_returned(tmp_path, monkeypatch):
    rec = Recorder(str(tmp_path), 1 << 20)
    real, fired = os.write, []

    def write(fd, data):
        k = real(fd, data)
        if not fired:  # the handler runs as os.write returns, before the flush updates its state
            fired.append(1)
            rec.emit("handler\n")
            rec.flush()
        return k

    monkeypatch.setattr(_recorder.os, "write", write)
    for i in range(5):
        rec.emit("l%d\n" % i)
    rec.flush()
    rec.emit("after\n")
    rec.flush()
    got = _file_lines(rec)
    assert got == ["l0", "l1", "l2", "l3", "l4", "handler", "after"], "expected each line once, in order; got %s" % got


def test_handler_runs_before_the_job_is_published(tmp_path):
    rec = Recorder(str(tmp_path), 1 << 20)
    fired = []

    class Line(str):
        def startswith(self, prefix):  # called while the flush builds its chunk
            if not fired:
                fired.append(1)
                rec.emit("handler\n")
                rec.flush()
            return str.startswith(self, prefix)

    rec.emit(Line("l0\n"))
    rec.emit("l1\n")
    rec.flush()
    rec.emit("after\n")
    rec.flush()
    got = _file_lines(rec)
    assert got == ["l0", "l1", "handler", "after"], "expected each line once, in order; got %s" % got


def test_budget_and_close(tmp_path):
    rec = Recorder(str(tmp_path), 100)
    line = '{"type":"span","id":1}\n'  # 23 bytes
    kept = [rec.begin('{"type":"begin","id":1}\n') for _ in range(3)]  # 72 bytes
    for _ in range(3):
        rec.span(line, forced=False)
    rec.span(line, forced=True)
    rec.close('{"type":"end"}\n')
    rec.emit("ignored after close\n")
    rec.flush()
    got = _file_lines(rec)
    assert kept == [True, True, True], "expected 3 begins within 100 bytes, got %s" % kept
    assert (rec.recorded, rec.dropped) == (2, 2), "expected 1 kept + 1 forced span and 2 dropped, got %s" % (
        (rec.recorded, rec.dropped),)
    assert got[-1] == '{"type":"end"}' and len(got) == 6, "unexpected file %s" % got
