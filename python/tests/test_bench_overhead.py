"""scripts/bench_overhead.py's summary of fresh-process rounds and
scripts/perfcount.py's counter set-up (no GPU, no torch)."""
import importlib.util
import os
import struct
import sys

import pytest

SCRIPTS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "scripts")


def _load(name):
    sys.path.insert(0, SCRIPTS)
    try:
        spec = importlib.util.spec_from_file_location(name, os.path.join(SCRIPTS, name + ".py"))
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod
    finally:
        sys.path.remove(SCRIPTS)


def _row(ms, instr, bare_ms=None):
    return {"ms": ms, "within_iqr_pct": 5.0, "tenths_ms": [ms] * 10, "rss_mb": 100.0, "gpu_used_mb": 10.0,
            "wall_s": 1.0, "cpu": 5, "sm_clock_mhz": 1980, "n": 100, "instructions_user": instr, "bare_ms": bare_ms}


def test_summary_against_bare():
    bo = _load("bench_overhead")
    bare = [_row(5.0, 1000), _row(6.0, 1010), _row(5.5, 1005)]
    native = [_row(5.2, 1050, 5.0), _row(6.6, 1061, 6.0), _row(5.5, 1055, 5.5)]
    s = bo.summarize({"bare": bare, "native": native}, {"scenario": "t", "rounds": 3})
    a = s["arms"]["native"]
    assert s["scenario"] == "t" and s["rounds"] == 3, "expected the meta fields kept, got %s" % {k: s[k] for k in s if k != "arms"}
    assert a["median_ms"] == 5.5 and a["added_pct"] == 0.0, "median of 5.2/6.6/5.5 vs bare 5.5: got %s, %s" % (a["median_ms"], a["added_pct"])
    assert a["paired_added_pct"] == 4.0, "paired ratios 1.04/1.10/1.00: expected median +4.0 %%, got %s" % a["paired_added_pct"]
    lo, hi = a["paired_added_ci95_pct"]
    assert 0.0 <= lo <= 4.0 <= hi <= 10.0, "expected a CI around +4 %% within the ratios' range, got %s" % [lo, hi]
    c = a["per_iter"]["instructions_user"]
    assert c["median"] == 1055 and c["added_pct"] == 4.98, "instructions 1055 vs 1005: expected +4.98 %%, got %s" % c
    assert len(a["processes"]) == 3 and a["processes"][0]["tenths_ms"] == [5.2] * 10, "expected per-process detail, got %s" % a["processes"][0]
    assert "added_pct" not in s["arms"]["bare"], "bare compared with itself: %s" % s["arms"]["bare"]


def test_perf_event_attr_layout():
    pc = _load("perfcount")
    raw = pc.attr(pc.HW["instructions"], pc.EXCLUDE_KERNEL)
    assert len(raw) == pc.ATTR_SIZE == 64, "expected a 64-byte PERF_ATTR_SIZE_VER0 attr, got %d bytes" % len(raw)
    typ, size, config = struct.unpack_from("IIQ", raw)
    flags = struct.unpack_from("Q", raw, 40)[0]  # after type, size, config, sample_period, sample_type, read_format
    assert (typ, size, config, flags) == (0, 64, 1, 1 << 5), "expected hardware/64/instructions/exclude_kernel, got %s" % ((typ, size, config, flags),)


def test_open_counters_works_or_says_none():
    pc = _load("perfcount")
    c = pc.open_counters()  # None on machines without a PMU (most VMs, CI)
    if c is None:
        pytest.skip("no PMU here")
    a = c.read()
    sum(range(100000))
    b = c.read()
    c.close()
    assert b["instructions_user"] > a["instructions_user"], "expected instructions to count up, got %s then %s" % (a, b)
