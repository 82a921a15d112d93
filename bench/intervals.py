"""An estimate is a value and an interval (criterion.rs, pyperf): the one
place where the harness bootstraps over rounds, and where a difference is
written "no measurable difference" when its interval, or the run's A/A noise
floor, says so.

Rounds are the unit of resampling: every app of a run is measured once per
round, in rotation (bench/rotation.py), so round i of two apps shares the
drift of the machine at that time. A resample draws round indices with
replacement, the same indices for every app of a comparison (a paired
bootstrap), and recomputes the statistic from the rounds drawn; the 95 %
interval is the 2.5th and 97.5th percentile of the resampled statistics.
One round gives no interval (None): nothing can be said of its noise."""

import random
import statistics

RESAMPLES = 2000
SEED = 32  # the same resamples for the same data: a report regenerates identically
LEVEL = 0.95
NO_DIFFERENCE = "no measurable difference"


def median(values):
    """The median of the values that are not None (the runs that measured
    one); None if none is."""
    found = [value for value in values if value is not None]
    return statistics.median(found) if found else None


def resamples(rounds, count=RESAMPLES, seed=SEED):
    """count lists of rounds indices, each drawn with replacement from range(rounds)."""
    draw = random.Random(seed)
    return [[draw.randrange(rounds) for _ in range(rounds)] for _ in range(count)]


def quantile(ordered, q):
    """The q-quantile (0..1) of sorted values, linearly interpolated."""
    position = q * (len(ordered) - 1)
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def interval(values, level=LEVEL):
    """[low, high]: the percentile interval of bootstrap values (None where
    a statistic was undefined, a division by zero, are left out)."""
    found = sorted(value for value in values if value is not None)
    if not found:
        return None
    tail = (1 - level) / 2
    return [quantile(found, tail), quantile(found, 1 - tail)]


def bootstrap(rounds, statistic, count=RESAMPLES, seed=SEED):
    """The 95 % interval of statistic(indices) over resamples of range(rounds),
    or None for fewer than two rounds."""
    if rounds < 2:
        return None
    return interval(statistic(indices) for indices in resamples(rounds, count, seed))


def bootstrap_range(rounds, statistic, count=RESAMPLES, seed=SEED):
    """The 95 % interval of a statistic known only within a range, such as a
    capacity between the highest rate that held and the lowest that broke:
    statistic(indices) -> (low, high); the 2.5th percentile of the lows to the
    97.5th of the highs, so that the interval holds the search's resolution
    as well as the rounds' noise. None for fewer than two rounds."""
    if rounds < 2:
        return None
    draws = [statistic(indices) for indices in resamples(rounds, count, seed)]
    lows = sorted(low for low, _ in draws if low is not None)
    highs = sorted(high for _, high in draws if high is not None)
    if not lows or not highs:
        return None
    tail = (1 - LEVEL) / 2
    return [quantile(lows, tail), quantile(highs, 1 - tail)]


def estimate(value, ci95, **more):
    """The results' form of an estimate: {"value", "ci95": [low, high] or None, ...}."""
    return {"value": value, "ci95": ci95, **more}


def ratio(numerator, denominator):
    """numerator / denominator, None where the denominator is not positive."""
    return numerator / denominator if denominator and denominator > 0 else None


def paired_ratio(rounds, numerator, denominator):
    """The estimate of numerator(indices) / denominator(indices), each a
    statistic of the rounds drawn (all of them for the value)."""
    everything = list(range(rounds))
    value = ratio(numerator(everything), denominator(everything))
    ci95 = bootstrap(rounds, lambda drawn: ratio(numerator(drawn), denominator(drawn)))
    return estimate(value, ci95)


def paired_range_ratio(rounds, numerator, denominator):
    """The estimate of one ranged statistic over another (each indices ->
    (low, high), value the low: what held): the ratio's range per resample
    is [low / high', high / low']."""
    everything = list(range(rounds))

    def ranged(drawn):
        (low, high), (low2, high2) = numerator(drawn), denominator(drawn)
        return ratio(low, high2), ratio(high, low2)

    value = ratio(numerator(everything)[0], denominator(everything)[0])
    return estimate(value, bootstrap_range(rounds, ranged))


def half_width(floor):
    """How far from 1 the A/A noise floor's interval reaches (0 without one)."""
    if not floor or not floor.get("ci95"):
        return 0.0
    low, high = floor["ci95"]
    return max(abs(high - 1), abs(1 - low))


def measurable(found, floor=None):
    """Whether a ratio's estimate says the two differ: an interval that
    excludes 1, and a ratio farther from 1 than the A/A floor reaches."""
    if not found or found.get("value") is None or not found.get("ci95"):
        return False
    low, high = found["ci95"]
    if low <= 1 <= high:
        return False
    return abs(found["value"] - 1) > half_width(floor)


def words(found, floor=None):
    """A ratio as a table and the prose write it: "1.32x (1.20-1.45)", or
    "no measurable difference (1.02x, 0.95-1.09)"; one round: "(1 round: no interval)"."""
    if not found or found.get("value") is None:
        return "-"
    shown = f"{found['value']:.2f}x"
    if not found.get("ci95"):
        return f"{shown} (1 round: no interval)"
    low, high = found["ci95"]
    if measurable(found, floor):
        return f"{shown} ({low:.2f}-{high:.2f})"
    return f"{NO_DIFFERENCE} ({shown}, {low:.2f}-{high:.2f})"
