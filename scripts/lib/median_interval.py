"""The median of a few rounds' figures and how far it can be trusted, without assuming a
distribution: the interval between two of the rounds' own order statistics that holds the true
median with a known chance (the sign test's interval; each round is as likely above the median
as below it, so the count of rounds below is binomial with p = 1/2).

Used by scripts/bench-client-cost.sh for the median of the rounds' ratios. Checked by
`python3 -m doctest scripts/lib/median_interval.py` (the repository tests run it).
"""

from math import comb
from statistics import median


def coverage(n, k):
    """The chance that the k-th smallest and the k-th largest of n rounds hold the median.

    >>> coverage(5, 1)
    0.9375
    >>> round(coverage(10, 2), 4)
    0.9785
    >>> coverage(1, 1)
    0.0
    """
    outside = sum(comb(n, i) for i in range(k))
    return 1 - 2 * outside / 2**n


def interval(values, wanted=0.95):
    """(low, high, chance): the narrowest order-statistic interval whose chance is at least
    `wanted`, or the widest there is (the smallest and the largest value) when the rounds are
    too few for it; its chance says which.

    >>> interval([1.14, 0.87, 0.99, 1.02, 0.93])
    (0.87, 1.14, 0.9375)
    >>> interval(list(range(10)))
    (1, 8, 0.978515625)
    >>> interval([0.9, 1.1])
    (0.9, 1.1, 0.5)
    >>> interval([1.0])
    (1.0, 1.0, 0.0)
    """
    v = sorted(values)
    n = len(v)
    k = 1
    while k + 1 <= n // 2 and coverage(n, k + 1) >= wanted:
        k += 1
    return v[k - 1], v[n - k], coverage(n, k)


def said(values):
    """The median and its interval as the scripts print them.

    >>> said([1.14, 0.87, 0.99, 1.02, 0.93])
    '0.99 [0.87-1.14]'
    """
    low, high, _ = interval(values)
    return f"{median(values):.2f} [{low:.2f}-{high:.2f}]"


def verdict(values, bound):
    """A target "at most `bound`" against the rounds' figures: met when the whole interval is at
    or under it, missed when the whole interval is over it, open when it lies inside; the
    interval's ends as `said` prints them, to two places.

    >>> verdict([0.81, 0.83, 0.84, 0.85, 0.86], 0.9)
    'met'
    >>> verdict([0.93, 0.95, 0.96, 0.98, 1.02], 0.9)
    'missed'
    >>> verdict([0.85, 0.88, 0.91, 0.93, 0.95], 0.9)
    'open'
    >>> verdict([0.8, 0.85, 0.88, 0.89, 0.9004], 0.9)
    'met'
    """
    low, high, _ = interval(values)
    low, high = round(low, 2), round(high, 2)
    return "met" if high <= bound else "missed" if low > bound else "open"
