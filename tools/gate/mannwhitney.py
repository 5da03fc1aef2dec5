"""Mann-Whitney U test (Wilcoxon rank-sum), standard library only.

The regression gate needs one question answered: are the tree's timings stochastically larger
than the baseline's? This module answers it without SciPy (not installed on the build machines;
Google Benchmark's tools/compare.py imports scipy.stats.mannwhitneyu for the same test).

Definitions (Mann & Whitney 1947; the conventions of scipy.stats.mannwhitneyu):
  U_x = #{(i, j): x_i > y_j} + 0.5 * #{(i, j): x_i == y_j}, in [0, n_x * n_y].
  alternative "greater": H1 says x tends to be larger than y; p = P(U >= U_x | H0).
  alternative "less":    p = P(U <= U_x | H0).
  alternative "two-sided": p = min(1, 2 * min(p_greater, p_less)).
The exact null distribution (every split of the pooled ranks equally likely) is used when there
are no ties and n_x, n_y <= 50; otherwise the normal approximation with the tie-corrected
variance and a 0.5 continuity correction.
"""

import math
from functools import lru_cache

EXACT_MAX_N = 50


def u_statistic(x, y):
    """U of sample x against sample y (ties count one half)."""
    u = 0.0
    for a in x:
        for b in y:
            if a > b:
                u += 1.0
            elif a == b:
                u += 0.5
    return u


@lru_cache(maxsize=64)
def _exact_counts(n_x, n_y):
    """counts[u] = number of the C(n_x + n_y, n_x) rank splits with U = u (no ties).

    Recurrence on the largest pooled value: it belongs to x (adding n_y to U) or to y:
    f(m, n, u) = f(m - 1, n, u - n) + f(m, n - 1, u).
    """
    # table[n][u] for the current m, built up from m = 0.
    prev = [[1] for _ in range(n_y + 1)]  # m = 0: U is 0 for any n
    for m in range(1, n_x + 1):
        cur = [[1]]  # n = 0: U is 0
        for n in range(1, n_y + 1):
            size = m * n + 1
            row = [0] * size
            for u, c in enumerate(cur[n - 1]):  # largest value in y
                row[u] += c
            for u, c in enumerate(prev[n]):  # largest value in x: every y is below it
                row[u + n] += c
            cur.append(row)
        prev = cur
    return tuple(prev[n_y])


def _p_exact(u, n_x, n_y, alternative):
    counts = _exact_counts(n_x, n_y)
    total = math.comb(n_x + n_y, n_x)
    u_int = int(round(u))
    p_greater = sum(counts[u_int:]) / total
    p_less = sum(counts[: u_int + 1]) / total
    return _combine(p_greater, p_less, alternative)


def _p_normal(u, x, y, alternative):
    n_x, n_y = len(x), len(y)
    n = n_x + n_y
    mean = n_x * n_y / 2.0
    tie_counts = {}
    for v in list(x) + list(y):
        tie_counts[v] = tie_counts.get(v, 0) + 1
    tie_term = sum(t ** 3 - t for t in tie_counts.values())
    var = n_x * n_y / 12.0 * ((n + 1) - tie_term / (n * (n - 1)))
    if var <= 0.0:  # every value equal: no evidence either way
        return 1.0
    sd = math.sqrt(var)

    def upper_tail(z):
        return 0.5 * math.erfc(z / math.sqrt(2.0))

    p_greater = upper_tail((u - mean - 0.5) / sd)
    p_less = upper_tail((mean - u - 0.5) / sd)
    return _combine(min(1.0, p_greater), min(1.0, p_less), alternative)


def _combine(p_greater, p_less, alternative):
    if alternative == "greater":
        return p_greater
    if alternative == "less":
        return p_less
    if alternative == "two-sided":
        return min(1.0, 2.0 * min(p_greater, p_less))
    raise ValueError(f"alternative must be 'greater', 'less' or 'two-sided', got {alternative!r}")


def mannwhitneyu(x, y, alternative="two-sided", method="auto"):
    """Returns (U_x, p). method: "auto", "exact" (no ties allowed) or "asymptotic".

    Raises ValueError for an empty sample, an unknown alternative or method, or method="exact"
    with ties or a sample larger than EXACT_MAX_N.
    """
    x, y = list(x), list(y)
    if not x or not y:
        raise ValueError("mannwhitneyu: both samples need at least one value")
    u = u_statistic(x, y)
    has_ties = len(set(x + y)) < len(x) + len(y)
    small = len(x) <= EXACT_MAX_N and len(y) <= EXACT_MAX_N
    if method == "auto":
        method = "exact" if (small and not has_ties) else "asymptotic"
    if method == "exact":
        if has_ties or not small:
            raise ValueError("mannwhitneyu: exact method needs untied samples of <= 50 values")
        return u, _p_exact(u, len(x), len(y), alternative)
    if method == "asymptotic":
        return u, _p_normal(u, x, y, alternative)
    raise ValueError(f"method must be 'auto', 'exact' or 'asymptotic', got {method!r}")
