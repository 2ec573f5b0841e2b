"""INFERSCOPE_COLLECTOR=cupti: the native collector loaded with ctypes at the
first scope and stopped before `end`. A fake library (built here with gcc)
stands in for libinferscope_cupti.so and logs every call."""
import os
import shutil
import subprocess
import sys

import pytest
from conftest import env_for, of_type, read_jsonl, run_py, spans_file

FAKE_C = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
static char g_dir[4096];
static void note(const char *what, const char *arg) {
  const char *p = getenv("FAKE_CUPTI_LOG");
  FILE *f = p ? fopen(p, "a") : NULL;
  if (!f) return;
  fprintf(f, "%s%s\n", what, arg);
  fclose(f);
}
__attribute__((constructor)) static void on_load(void) { note("load", ""); }
int inferscope_cupti_start(const char *raw_dir) {
  snprintf(g_dir, sizeof g_dir, "%s", raw_dir ? raw_dir : "(null)");
  note("start ", g_dir);
  const char *rc = getenv("FAKE_CUPTI_RC");
  return rc ? atoi(rc) : 0;
}
int inferscope_cupti_stop(void) { /* was the span stream's end already written? */
  char path[4200], line[65536];
  const char *dir = g_dir[0] ? g_dir : getenv("INFERSCOPE_RAW_DIR");
  snprintf(path, sizeof path, "%s/spans-%d.jsonl", dir ? dir : ".", (int)getpid());
  int ended = 0;
  FILE *f = fopen(path, "r");
  if (f) {
    while (fgets(line, sizeof line, f)) if (strstr(line, "\"type\":\"end\"")) ended = 1;
    fclose(f);
  }
  note("stop end_written=", ended ? "1" : "0");
  return 0;
}
int inferscope_cupti_pause(void) { note("pause", ""); return 0; }
int inferscope_cupti_resume(void) { note("resume", ""); return 0; }
"""

LOGGER = """
import os
def log(s):
    with open(os.environ["FAKE_CUPTI_LOG"], "a") as f:
        f.write(s + "\\n")
"""


@pytest.fixture(scope="module")
def fake_lib(tmp_path_factory):
    gcc = shutil.which("gcc")
    if gcc is None:
        pytest.skip("gcc not found: cannot build the fake native collector")
    d = tmp_path_factory.mktemp("fakecupti")
    (d / "fake.c").write_text(FAKE_C)
    lib = d / "libfake_cupti.so"
    subprocess.run([gcc, "-shared", "-fPIC", "-o", str(lib), str(d / "fake.c")], check=True)
    return str(lib)


def _log(path):
    return path.read_text().splitlines() if path.exists() else []


def test_loaded_at_first_scope_and_stopped_before_end(tmp_path, fake_lib):
    raw, log = tmp_path / "raw", tmp_path / "calls.log"
    code = LOGGER + """
import inferscope
from inferscope import scope
log("imported")
with scope("a"):
    log("in-scope")
with scope("b"):
    pass
log("exiting")
"""
    r = run_py(code, raw, INFERSCOPE_COLLECTOR="cupti", INFERSCOPE_CUPTI_LIB=fake_lib, FAKE_CUPTI_LOG=log)
    assert r.returncode == 0, r.stderr
    assert r.stderr == "", "expected a silent run, got stderr %r" % r.stderr
    assert _log(log) == ["imported", "load", "start %s" % raw, "in-scope", "exiting", "stop end_written=0"], (
        "expected: loaded at the first scope (not at import), started with the raw dir, stopped once before end")
    lines = read_jsonl(spans_file(raw))
    assert lines[0]["type"] == "process" and lines[0]["collector"] == "cupti", "process line: %s" % lines[0]
    assert lines[-1]["type"] == "end", "expected end last, got %s" % lines[-1]


@pytest.mark.parametrize("what", ["missing", "not-elf", "not-collector", "start-fails"])
def test_unloadable_library_warns_once(tmp_path, fake_lib, what):
    raw, log = tmp_path / "raw", tmp_path / "calls.log"
    env = {"FAKE_CUPTI_LOG": log}
    if what == "missing":
        env["INFERSCOPE_CUPTI_LIB"] = tmp_path / "no-such-lib.so"
    elif what == "not-elf":
        (tmp_path / "text.so").write_text("not a shared object\n")
        env["INFERSCOPE_CUPTI_LIB"] = tmp_path / "text.so"
    elif what == "not-collector":  # loads, lacks the entry points
        d = tmp_path / "other"
        d.mkdir()
        (d / "o.c").write_text("int something_else(void) { return 0; }\n")
        subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(d / "o.so"), str(d / "o.c")], check=True)
        env["INFERSCOPE_CUPTI_LIB"] = d / "o.so"
    else:
        env.update(INFERSCOPE_CUPTI_LIB=fake_lib, FAKE_CUPTI_RC="-1")
    code = """
import sys
from inferscope import scope
for i in range(3):
    with scope("step"):
        pass
sys.exit(3)
"""
    r = run_py(code, raw, INFERSCOPE_COLLECTOR="cupti", **env)
    assert r.returncode == 3, "the workload's exit code must be kept: got %d, stderr %r" % (r.returncode, r.stderr)
    ours = [x for x in r.stderr.splitlines() if x.startswith("inferscope")]
    assert len(ours) == 1 and ours[0].startswith("inferscope: native collector not loaded: "), (
        "expected one warning line, got %r" % r.stderr)
    lines = read_jsonl(spans_file(raw))
    assert len(of_type(lines, "span")) >= 3 and lines[-1]["type"] == "end", "the span stream must still be complete"


@pytest.mark.parametrize("collector", [None, "none", "torch"])
def test_inactive_unless_cupti(tmp_path, fake_lib, collector):
    raw, log = tmp_path / "raw", tmp_path / "calls.log"
    env = {"INFERSCOPE_CUPTI_LIB": fake_lib, "FAKE_CUPTI_LOG": log}
    if collector is not None:
        env["INFERSCOPE_COLLECTOR"] = collector
    r = run_py("from inferscope import scope\nwith scope('a'):\n    pass\n", raw, **env)
    assert r.returncode == 0, r.stderr
    assert _log(log) == [], "the library must not be loaded with collector %s" % collector
    first = read_jsonl(spans_file(raw))[0]
    if collector != "torch":  # torch, where installed, reports torch
        assert first["collector"] == "none", "process line: %s" % first


def test_scopeless_without_torch_loads_nothing(tmp_path, fake_lib):
    raw, log = tmp_path / "raw", tmp_path / "calls.log"
    r = run_py("print('no scopes here')\n", raw, INFERSCOPE_COLLECTOR="cupti", INFERSCOPE_CUPTI_LIB=fake_lib,
               FAKE_CUPTI_LOG=log)
    assert r.returncode == 0, r.stderr
    assert _log(log) == [], "a scopeless process loads the library at `import torch` only"


def test_injected_library_stopped_before_end(tmp_path, fake_lib):
    """Loaded already (as CUDA_INJECTION64_PATH does at cuInit), no scope:
    the package still stops it before writing end, and loads nothing."""
    raw, log = tmp_path / "raw", tmp_path / "calls.log"
    code = LOGGER + """
import ctypes
ctypes.CDLL(os.environ["INFERSCOPE_CUPTI_LIB"])  # the driver's dlopen
log("injected")
"""
    r = run_py(code, raw, INFERSCOPE_COLLECTOR="cupti", INFERSCOPE_CUPTI_LIB=fake_lib, FAKE_CUPTI_LOG=log)
    assert r.returncode == 0, r.stderr
    assert _log(log) == ["load", "injected", "stop end_written=0"], "expected one stop, before end"


def test_pause_resume(tmp_path, fake_lib):
    raw, log = tmp_path / "raw", tmp_path / "calls.log"
    code = LOGGER + """
from inferscope import _collector_cupti as cc, scope
try:
    cc.pause()
except RuntimeError:
    log("not loaded")
with scope("a"):
    log("rc %d" % cc.pause())
    log("rc %d" % cc.resume())
"""
    r = run_py(code, raw, INFERSCOPE_COLLECTOR="cupti", INFERSCOPE_CUPTI_LIB=fake_lib, FAKE_CUPTI_LOG=log)
    assert r.returncode == 0, r.stderr
    assert _log(log) == ["not loaded", "load", "start %s" % raw, "pause", "rc 0", "resume", "rc 0",
                         "stop end_written=0"], "unexpected calls"


def test_public_start(tmp_path, fake_lib):
    """inferscope.start() without `inferscope run` (no INFERSCOPE_RAW_DIR)."""
    raw, log = tmp_path / "raw", tmp_path / "calls.log"
    script = tmp_path / "public.py"
    script.write_text(LOGGER + """
import sys, inferscope
raw, lib = sys.argv[1], sys.argv[2]
assert inferscope.start(raw, collector="cupti", cupti_lib=lib) is True
assert inferscope.start(raw, collector="cupti", cupti_lib=lib) is False
try:
    inferscope.start(raw, collector="bogus")
except ValueError:
    log("bad collector refused")
with inferscope.scope("x"):
    log("in-scope")
inferscope.stop()
log("stopped")
""")
    env = env_for(None, FAKE_CUPTI_LOG=log)
    env.pop("PYTHONPATH")
    env["PYTHONPATH"] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the package, no sitecustomize
    r = subprocess.run([sys.executable, str(script), str(raw), fake_lib], env=env, capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    assert _log(log) == ["bad collector refused", "load", "start %s" % raw, "in-scope", "stop end_written=0",
                         "stopped"], "unexpected calls"
    lines = read_jsonl(spans_file(raw))
    assert lines[0]["collector"] == "cupti" and lines[-1]["type"] == "end", "expected process (cupti) ... end"
    assert [x["name"] for x in of_type(lines, "span") if x["kind"] == "scope"] == ["x"], "expected the scope's span"
