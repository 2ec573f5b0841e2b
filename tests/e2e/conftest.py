import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
WORKLOADS = os.path.join(ROOT, "workloads")
HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "workloads")


@pytest.fixture(scope="session")
def binary():
    b = os.environ.get("INFERSCOPE_BIN", os.path.join(ROOT, "dist", "inferscope"))
    if not os.path.exists(b):
        subprocess.run(["go", "build", "-o", b, "./cmd/inferscope"], cwd=ROOT, check=True)
    return b


class Run:
    def __init__(self, proc, report_path, outdir):
        self.proc = proc
        self.code = proc.returncode
        self.stderr = proc.stderr
        self.report = json.load(open(report_path)) if os.path.exists(report_path) else None
        self.outdir = outdir

    def cat(self, name):
        for b in self.report["breakdown"]:
            if b["category"] == name:
                return b["ms"]
        return 0.0

    def largest(self):
        return max(self.report["breakdown"], key=lambda b: b["ms"])["category"]


@pytest.fixture
def run(binary, tmp_path):
    """run(args..., flags=[...]) → Run: `inferscope run --format json` on a
    workload with this venv's python, report in tmp_path."""

    def go(*args, flags=(), timeout=300):
        report = str(tmp_path / "report.json")
        cmd = [binary, "run", "--output-dir", str(tmp_path / "out"), "--report", report, *flags, "--", sys.executable, *args]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=str(tmp_path))
        r = Run(p, report, tmp_path / "out")
        assert r.report is not None, "no report written; exit %d; stderr tail:\n%s" % (p.returncode, p.stderr[-3000:])
        return r

    return go
