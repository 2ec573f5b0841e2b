"""Statistics and argument helpers shared by the benchmark scripts
(bench_inproc.py, bench_overhead.py). No torch here: the tests import it
(python/tests/test_benchstats.py)."""
import random
import re
import statistics


def parse_cpus(spec):
    """The CPU set of a list like "4-7" or "0,2-3"."""
    cpus = set()
    for part in spec.split(","):
        m = re.fullmatch(r"(\d+)(?:-(\d+))?", part.strip(), re.ASCII)
        if not m or int(m.group(1)) > int(m.group(2) or m.group(1)):
            raise ValueError("bad CPU list %r (at %r): want CPUs and ranges such as 4-7 or 0,2-3" % (spec, part))
        cpus.update(range(int(m.group(1)), int(m.group(2) or m.group(1)) + 1))
    return cpus


def rotation(arms, r):
    """Round r's order: the base order rotated left by r."""
    k = r % len(arms)
    return tuple(arms[k:]) + tuple(arms[:k])


def whole_rotations(blocks, n_arms):
    """Rounds for --blocks timed blocks: whole rotations only, at least one,
    so that each arm takes each position equally often."""
    rounds = blocks // n_arms
    return max(n_arms, rounds - rounds % n_arms)


def iqr(xs):
    if len(xs) < 2:
        return xs[0], xs[0]
    q1, _, q3 = statistics.quantiles(xs, n=4, method="inclusive")
    return q1, q3


def percentile_ci(stat, resamples=2000, seed=0):
    """Percentile 95 % CI of stat(rng) over bootstrap resamples; a fixed
    seed makes a report reproducible from its samples."""
    rng = random.Random(seed)
    q = statistics.quantiles([stat(rng) for _ in range(resamples)], n=40, method="inclusive")  # 2.5 %, ..., 97.5 %
    return q[0], q[-1]


def bootstrap_ci(xs, resamples=2000, seed=0):
    """Percentile 95 % CI of the median of xs (resampled with replacement)."""
    return percentile_ci(lambda rng: statistics.median(rng.choices(xs, k=len(xs))), resamples, seed)


def ratio_stats(ratios):
    """JSON statistics of per-round ratios (arm block median / reference block median)."""
    med = statistics.median(ratios)
    return {
        "paired_ratio_median": round(med, 4),
        "paired_ratio_iqr": [round(x, 4) for x in iqr(ratios)],
        "paired_ratio_ci95": [round(x, 4) for x in bootstrap_ci(ratios)],
        "added_pct": round(100 * (med - 1), 2),
        "pair_ratios": [round(x, 4) for x in ratios],
    }


def median_ratio_ci(xs, ref, resamples=2000, seed=0):
    """Percentile 95 % CI of median(xs) / median(ref), each resampled on its
    own: for unpaired samples (fresh processes whose pairing adds nothing)."""
    return percentile_ci(lambda rng: statistics.median(rng.choices(xs, k=len(xs))) /
                         statistics.median(rng.choices(ref, k=len(ref))), resamples, seed)
