import json
import os
import subprocess
import sys

import pytest

PY_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BOOT_DIR = os.path.join(PY_DIR, "inferscope_boot")
sys.path.insert(0, PY_DIR)  # test the tree, not an installed copy

from inferscope import _boot  # noqa: E402


def read_jsonl(path, torn_tail_ok=False):
    """Every line of a spans file, parsed; fails naming the line that is not JSON.

    torn_tail_ok: after SIGKILL the last write may stop mid-line (the kernel
    can cut a write at a page boundary); the contract says readers drop a
    final line that has no newline."""
    with open(path, "rb") as f:
        data = f.read()
    if torn_tail_ok and not data.endswith(b"\n"):
        data = data[: data.rfind(b"\n") + 1]
    assert data.endswith(b"\n") or not data, "%s: last line is incomplete: %r" % (path, data[-200:])
    out = []
    for n, raw in enumerate(data.splitlines(), 1):
        try:
            out.append(json.loads(raw))
        except ValueError as e:
            pytest.fail("%s line %d is not JSON (%s): %r" % (path, n, e, raw[:300]))
    return out


def spans_file(raw_dir, pid=None):
    names = sorted(n for n in os.listdir(raw_dir) if n.startswith("spans-"))
    if pid is not None:
        names = [n for n in names if n == "spans-%d.jsonl" % pid]
    assert len(names) == 1, "expected one spans file%s in %s, got %s" % (
        "" if pid is None else " for pid %d" % pid, raw_dir, names)
    return os.path.join(raw_dir, names[0])


def of_type(lines, t):
    return [x for x in lines if x.get("type") == t]


def by_name(lines, name):
    got = [x for x in lines if x.get("type") == "span" and x.get("name") == name]
    assert got, "expected a span named %r, got spans %s" % (name, [x.get("name") for x in of_type(lines, "span")])
    return got


def env_for(raw_dir, **extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith("INFERSCOPE_")}
    env["PYTHONPATH"] = BOOT_DIR
    if raw_dir is not None:
        env["INFERSCOPE_RAW_DIR"] = str(raw_dir)
    env.update({k: str(v) for k, v in extra.items()})
    return env


def run_py(code, raw_dir, timeout=120, **env):
    """Run code as a script file (so the process span is named after it)."""
    script = os.path.join(str(raw_dir) + "-script.py")
    with open(script, "w") as f:
        f.write(code)
    return subprocess.run([sys.executable, script], env=env_for(raw_dir, **env), capture_output=True,
                          text=True, timeout=timeout)


@pytest.fixture
def recording(tmp_path):
    """Record in this process into tmp_path; yields a function returning the lines so far."""
    raw = tmp_path / "raw"
    state = {}

    def lines(finish=True):
        if finish and not state.get("stopped"):
            _boot.stop()
            state["stopped"] = True
        return read_jsonl(spans_file(raw))

    _boot.start(str(raw), handlers=False)
    try:
        yield lines
    finally:
        if not state.get("stopped"):
            _boot.stop()
