"""scripts/benchstats.py: per-round ratio statistics, the rotation of arms
over rounds, --pin's CPU lists, and the unpaired median-ratio CI."""
import importlib.util
import os
import statistics
import sys

import pytest

SCRIPT = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "scripts", "benchstats.py")


@pytest.fixture(scope="module")
def bench():
    had_torch = "torch" in sys.modules
    spec = importlib.util.spec_from_file_location("benchstats", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert had_torch or "torch" not in sys.modules, "importing benchstats.py imported torch"
    return mod


@pytest.mark.parametrize("ratios, median, iqr", [
    ([1.0, 1.1, 1.2], 1.1, (1.05, 1.15)),
    ([1.2, 1.0, 1.1], 1.1, (1.05, 1.15)),
    ([1.0, 1.0, 1.0, 1.0], 1.0, (1.0, 1.0)),
    ([1.0, 2.0], 1.5, (1.25, 1.75)),
    ([1.03], 1.03, (1.03, 1.03)),
    ([0.9, 1.0, 1.1, 1.2, 5.0], 1.1, (1.0, 1.2)),
])
def test_ratio_median_and_iqr(bench, ratios, median, iqr):
    got = bench.ratio_stats(ratios)
    assert got["paired_ratio_median"] == pytest.approx(median), "median of %s: expected %s, got %s" % (ratios, median, got)
    assert got["paired_ratio_iqr"] == pytest.approx(list(iqr)), "IQR of %s: expected %s, got %s" % (ratios, iqr, got)
    assert got["added_pct"] == pytest.approx(round(100 * (median - 1), 2)), "added_pct of %s: got %s" % (ratios, got)
    assert got["pair_ratios"] == pytest.approx(ratios), "pair_ratios: expected %s, got %s" % (ratios, got)


@pytest.mark.parametrize("ratios", [
    [1.0, 1.1, 1.2],
    [1.05],
    [1.0, 1.0, 1.0],
    [0.98, 1.01, 1.02, 1.04, 1.05, 1.07, 1.3],
    [1.0 + 0.01 * ((7 * i) % 13) for i in range(30)],
])
def test_bootstrap_ci(bench, ratios):
    lo, hi = bench.bootstrap_ci(ratios)
    med = statistics.median(ratios)
    assert min(ratios) <= lo <= med <= hi <= max(ratios), \
        "CI of %s: expected min %s <= lo <= median %s <= hi <= max %s, got [%s, %s]" % (ratios, min(ratios), med, max(ratios), lo, hi)
    again = bench.bootstrap_ci(ratios)
    assert again == (lo, hi), "fixed seed: expected the same CI twice, got %s then %s" % ((lo, hi), again)
    assert bench.ratio_stats(ratios)["paired_ratio_ci95"] == pytest.approx([lo, hi], abs=1e-4)


def test_bootstrap_ci_narrows_with_more_rounds(bench):
    few = [1.0, 1.02, 1.04, 1.06, 1.08]
    lo1, hi1 = bench.bootstrap_ci(few)
    lo2, hi2 = bench.bootstrap_ci(few * 8)
    assert hi2 - lo2 < hi1 - lo1, "expected a narrower CI from 40 rounds than from 5: got %s vs %s" % ((lo2, hi2), (lo1, hi1))


@pytest.mark.parametrize("arms, expected", [
    (("on", "off"), [("on", "off"), ("off", "on"), ("on", "off"), ("off", "on")]),  # ABBA
    (("bare", "torchcoll", "profiler"), [("bare", "torchcoll", "profiler"), ("torchcoll", "profiler", "bare"),
                                         ("profiler", "bare", "torchcoll"), ("bare", "torchcoll", "profiler")]),
])
def test_rotation(bench, arms, expected):
    got = [bench.rotation(arms, r) for r in range(len(expected))]
    assert got == expected, "rotation of %s over %d rounds: expected %s, got %s" % (arms, len(expected), expected, got)


@pytest.mark.parametrize("arms", [("on", "off"), ("bare", "torchcoll", "profiler"), ("a", "b", "c", "d")])
def test_rotation_balances_positions(bench, arms):
    n = len(arms)
    for start in (0, 5):  # any n consecutive rounds
        orders = [bench.rotation(arms, r) for r in range(start, start + n)]
        for pos in range(n):
            got = sorted(o[pos] for o in orders)
            assert got == sorted(arms), "position %d over rounds %d..%d: expected each of %s once, got %s" % (
                pos, start, start + n - 1, sorted(arms), got)


@pytest.mark.parametrize("blocks, n_arms, rounds", [
    (20, 2, 10), (22, 2, 10), (3, 2, 2), (40, 2, 20),
    (30, 3, 9), (36, 3, 12), (9, 3, 3), (1, 3, 3), (20, 3, 6),
])
def test_whole_rotations(bench, blocks, n_arms, rounds):
    got = bench.whole_rotations(blocks, n_arms)
    assert got == rounds, "--blocks %d with %d arms: expected %d rounds, got %d" % (blocks, n_arms, rounds, got)


@pytest.mark.parametrize("spec, cpus", [
    ("4-7", {4, 5, 6, 7}),
    ("4,5,6,7", {4, 5, 6, 7}),
    ("0,2-3", {0, 2, 3}),
    ("3", {3}),
    ("5-5", {5}),
    ("1-2,2-3", {1, 2, 3}),
    (" 0, 8-9 ", {0, 8, 9}),
])
def test_parse_cpus(bench, spec, cpus):
    got = bench.parse_cpus(spec)
    assert got == cpus, "parse_cpus(%r): expected %s, got %s" % (spec, sorted(cpus), sorted(got))


@pytest.mark.parametrize("spec", ["", "a", "4-", "-1", "7-4", "1,,2", "1-2-3", "4..7", "0x4", "²"])
def test_parse_cpus_rejects(bench, spec):
    with pytest.raises(ValueError) as e:
        got = bench.parse_cpus(spec)
        pytest.fail("parse_cpus(%r): expected ValueError, got %s" % (spec, got))
    assert repr(spec) in str(e.value) and "4-7" in str(e.value), "expected a message naming %r and an example, got %r" % (spec, str(e.value))


@pytest.mark.parametrize("xs, ref, inside", [
    ([1.1] * 9, [1.0] * 9, 1.1),
    ([1.0, 1.1, 1.2, 1.1, 1.05], [1.0, 0.95, 1.05, 1.0, 1.0], 1.1),
    ([5.0, 6.0, 7.0, 6.5, 5.5, 6.2], [5.0, 5.1, 4.9, 6.9, 5.0, 5.2], 6.1 / 5.05),
])
def test_median_ratio_ci(bench, xs, ref, inside):
    lo, hi = bench.median_ratio_ci(xs, ref)
    assert lo <= inside <= hi, "CI of median(%s)/median(%s): expected it to hold %.4f, got [%.4f, %.4f]" % (xs, ref, inside, lo, hi)
    bound_lo, bound_hi = min(xs) / max(ref), max(xs) / min(ref)
    assert bound_lo <= lo <= hi <= bound_hi, "expected the CI within [%.4f, %.4f], got [%.4f, %.4f]" % (bound_lo, bound_hi, lo, hi)
    assert bench.median_ratio_ci(xs, ref) == (lo, hi), "fixed seed: expected the same CI twice"


def test_median_ratio_ci_narrows_with_more_processes(bench):
    xs, ref = [1.0, 1.2, 1.1, 1.3, 1.05], [1.0, 0.9, 1.1, 1.0, 0.95]
    lo1, hi1 = bench.median_ratio_ci(xs, ref)
    lo2, hi2 = bench.median_ratio_ci(xs * 8, ref * 8)
    assert hi2 - lo2 < hi1 - lo1, "expected a narrower CI from 40 processes per arm than from 5: got %s vs %s" % ((lo2, hi2), (lo1, hi1))
