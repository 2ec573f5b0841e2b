"""End-to-end: real PyTorch CPU workloads under `inferscope run`; each test
checks facts in the JSON report."""
import glob
import json
import os
import signal
import subprocess
import sys
import time

from conftest import HERE, WORKLOADS


def check_sums(rep):
    total = sum(b["ms"] for b in rep["breakdown"])
    assert abs(total - rep["e2e_ms"]) <= 0.01 * rep["e2e_ms"], "breakdown sums to %.3f ms, e2e %.3f ms" % (total, rep["e2e_ms"])


def test_cnn_seed_scenario_on_cpu(run):
    r = run(os.path.join(WORKLOADS, "scenarios.py"), "cnn", "--device", "cpu", "--iters", "3", "--warmup", "1")
    assert r.code == 0, r.stderr[-2000:]
    rep = r.report
    assert rep["scope"]["name"] == "cnn_inference"
    assert rep["scope"]["iterations"] == 3, rep["scope"]
    assert rep["classification"] == "cpu-only", rep["classification_reason"]
    assert r.largest() == "cpu_compute", rep["breakdown"]
    assert any(o["name"].startswith("aten::") and "conv" in o["name"] for o in rep["top_cpu_ops"]), rep["top_cpu_ops"]
    assert len(rep["suggestions"]) >= 2
    check_sums(rep)
    traces = glob.glob(str(r.outdir / "trace_cnn_inference_*.json"))
    assert len(traces) == 1, "want one trace file, got %s" % traces
    json.load(open(traces[0]))  # a valid JSON (Perfetto) trace


def test_planted_cpu_preprocess(run):
    r = run(os.path.join(WORKLOADS, "planted.py"), "cpu_preprocess", "--device", "cpu", "--iters", "3")
    assert r.code == 0, r.stderr[-2000:]
    rep = r.report
    assert r.largest() == "cpu_preprocessing", rep["breakdown"]
    assert rep["diagnosis"][0]["id"] == "cpu-preprocessing", [d["id"] for d in rep["diagnosis"]]
    assert any("off the critical path" in s["text"] for s in rep["suggestions"])
    check_sums(rep)


def test_multithreaded_spans_stay_on_their_thread(run):
    r = run(os.path.join(HERE, "multithread.py"), flags=["--keep-raw"])
    assert r.code == 0, r.stderr[-2000:]
    rep = r.report
    assert rep["scope"]["name"] == "worker"
    assert rep["scope"]["iterations"] == 24, "8 threads × 3 scopes, got %s" % rep["scope"]
    check_sums(rep)
    spans = []
    for f in glob.glob(str(r.outdir / ".raw" / "*" / "spans-*.jsonl")):
        spans += [json.loads(l) for l in open(f) if '"type":"span"' in l.replace(" ", "")]
    by_id = {s["id"]: s for s in spans}
    tids = {s["tid"] for s in spans if s["name"] == "worker"}
    assert len(tids) == 8, "want worker scopes on 8 threads, got %d" % len(tids)
    for s in spans:
        p = by_id.get(s.get("parent"))
        assert p is None or p["tid"] == s["tid"], "span %s (tid %d) nested under %s (tid %d)" % (s["name"], s["tid"], p["name"], p["tid"])


def test_sigkill_still_yields_a_report_marked_incomplete(run):
    r = run(os.path.join(HERE, "killed.py"))
    assert r.code == 128 + 9, "want the workload's 137, got %d" % r.code
    inc = r.report["metadata"]["trace"].get("incomplete", "")
    assert "killed" in inc or "end record" in inc, inc
    assert r.report["scope"]["iterations"] >= 2, r.report["scope"]


def test_exception_is_reported(run):
    r = run(os.path.join(HERE, "raises.py"))
    assert r.code == 1, r.code
    errs = r.report["metadata"]["trace"].get("errors", [])
    assert any("RuntimeError" in e and "planted failure" in e for e in errs), errs


def test_sigint_interrupts_and_reports(binary, tmp_path):
    report = tmp_path / "report.json"
    p = subprocess.Popen([binary, "run", "--output-dir", str(tmp_path / "out"), "--report", str(report), "--",
                          sys.executable, os.path.join(HERE, "forever.py")],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=str(tmp_path))
    deadline = time.time() + 120
    line = ""
    while time.time() < deadline and "ready" not in line:
        line = p.stdout.readline()
        if not line and p.poll() is not None:
            break
    assert "ready" in line, "workload never got going: %s" % p.stderr.read()[-2000:]
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=120)
    assert p.returncode == 128 + 2, "want 130 (SIGINT), got %d; stderr %s" % (p.returncode, err[-2000:])
    rep = json.load(open(report))
    assert "SIGINT" in rep["metadata"]["trace"].get("incomplete", ""), rep["metadata"]["trace"]
    assert rep["scope"]["iterations"] >= 3
