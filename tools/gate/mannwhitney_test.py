"""Tests of tools/gate/mannwhitney.py against brute-force enumeration and closed forms."""

import itertools
import math
import os
import random
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mannwhitney  # noqa: E402


def brute_force_p(x, y, alternative):
    """P-value by enumerating every assignment of the pooled values to x (the definition)."""
    pooled = list(x) + list(y)
    u_obs = mannwhitney.u_statistic(x, y)
    n_ge = n_le = total = 0
    for idx in itertools.combinations(range(len(pooled)), len(x)):
        chosen = set(idx)
        xs = [pooled[i] for i in idx]
        ys = [pooled[i] for i in range(len(pooled)) if i not in chosen]
        u = mannwhitney.u_statistic(xs, ys)
        total += 1
        n_ge += u >= u_obs
        n_le += u <= u_obs
    pg, pl = n_ge / total, n_le / total
    return {"greater": pg, "less": pl, "two-sided": min(1.0, 2 * min(pg, pl))}[alternative]


class MannWhitneyTest(unittest.TestCase):
    def test_u_statistic_counts_pairs_and_half_ties(self):
        self.assertEqual(mannwhitney.u_statistic([3, 4], [1, 2]), 4.0)
        self.assertEqual(mannwhitney.u_statistic([1, 2], [3, 4]), 0.0)
        self.assertEqual(mannwhitney.u_statistic([2, 5], [2, 3]), 2.5)  # 5>2, 5>3, 2==2

    def test_separated_samples_have_one_over_binomial(self):
        for n in range(1, 9):
            _, p = mannwhitney.mannwhitneyu(range(10, 10 + n), range(n), alternative="greater")
            self.assertAlmostEqual(p, 1.0 / math.comb(2 * n, n), places=15)
        # scipy.stats.mannwhitneyu([1, 2, 3], [4, 5, 6], alternative="less").pvalue == 0.05
        u, p = mannwhitney.mannwhitneyu([1, 2, 3], [4, 5, 6], alternative="less")
        self.assertEqual(u, 0.0)
        self.assertAlmostEqual(p, 0.05, places=15)
        _, p2 = mannwhitney.mannwhitneyu([1, 2, 3], [4, 5, 6], alternative="two-sided")
        self.assertAlmostEqual(p2, 0.1, places=15)

    def test_exact_matches_enumeration(self):
        rng = random.Random(7)
        for n_x, n_y in [(1, 1), (2, 3), (4, 4), (5, 3), (6, 6), (3, 7)]:
            for _ in range(5):
                x = [rng.random() for _ in range(n_x)]
                y = [rng.random() + 0.2 for _ in range(n_y)]
                for alt in ("greater", "less", "two-sided"):
                    _, p = mannwhitney.mannwhitneyu(x, y, alternative=alt, method="exact")
                    self.assertAlmostEqual(p, brute_force_p(x, y, alt), places=12, msg=(x, y, alt))

    def test_exact_distribution_sums_to_binomial_and_is_symmetric(self):
        for n_x, n_y in [(3, 5), (10, 10), (20, 7)]:
            counts = mannwhitney._exact_counts(n_x, n_y)
            self.assertEqual(len(counts), n_x * n_y + 1)
            self.assertEqual(sum(counts), math.comb(n_x + n_y, n_x))
            self.assertEqual(list(counts), list(reversed(counts)))

    def test_asymptotic_close_to_exact_for_moderate_samples(self):
        rng = random.Random(3)
        for _ in range(20):
            x = [rng.gauss(0.3, 1) for _ in range(20)]
            y = [rng.gauss(0.0, 1) for _ in range(20)]
            _, pe = mannwhitney.mannwhitneyu(x, y, alternative="greater", method="exact")
            _, pa = mannwhitney.mannwhitneyu(x, y, alternative="greater", method="asymptotic")
            self.assertLess(abs(pe - pa), 0.01, (pe, pa))

    def test_ties_use_corrected_normal_approximation(self):
        # All values equal: no evidence, p = 1.
        _, p = mannwhitney.mannwhitneyu([1, 1, 1], [1, 1, 1], alternative="greater")
        self.assertEqual(p, 1.0)
        # x = [2, 2, 3], y = [1, 2, 2]: each 2 in x beats 1 and ties two 2s (2 each), 3 beats
        # all three: U = 7.
        x, y = [2, 2, 3], [1, 2, 2]
        u, p = mannwhitney.mannwhitneyu(x, y, alternative="greater")
        self.assertEqual(u, 7.0)
        # n = 6, ties: value 2 four times -> 4^3 - 4 = 60; var = 9/12 * (7 - 60/30) = 3.75
        z = (7.0 - 4.5 - 0.5) / math.sqrt(3.75)
        self.assertAlmostEqual(p, 0.5 * math.erfc(z / math.sqrt(2)), places=15)
        with self.assertRaises(ValueError):
            mannwhitney.mannwhitneyu(x, y, method="exact")

    def test_bad_arguments(self):
        with self.assertRaises(ValueError):
            mannwhitney.mannwhitneyu([], [1.0])
        with self.assertRaises(ValueError):
            mannwhitney.mannwhitneyu([1.0], [2.0], alternative="bigger")
        with self.assertRaises(ValueError):
            mannwhitney.mannwhitneyu([1.0], [2.0], method="bootstrap")


if __name__ == "__main__":
    unittest.main()
