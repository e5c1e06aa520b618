#!/usr/bin/env python3
"""Unit tests of tools/compare_verdicts.py's statistics and verdict rule (standard library only).

    python3 tests/tools/test_compare_verdicts.py        # from the repository root or anywhere

They need neither attn nor any runs: every input is built here, every expected value is either a
published table value, a closed form, or worked out by hand in the test's docstring.
"""
import importlib.util
import math
import os
import random
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
spec = importlib.util.spec_from_file_location("compare_verdicts", os.path.join(ROOT, "tools", "compare_verdicts.py"))
cv = importlib.util.module_from_spec(spec)
spec.loader.exec_module(cv)
from sacrebleu_ref import corpus_bleu  # noqa: E402  importable once compare_verdicts has put tools/ on the path


class RegularizedBetaTest(unittest.TestCase):
    """I_x(a, b) against its closed forms, on both sides of the continued fraction's switch point
    (x < (a + 1)/(a + b + 2) is computed directly, above it through the symmetry)."""

    def test_closed_forms(self):
        for x in (0.01, 0.2, 0.5, 0.7, 0.99):
            for a in (0.5, 1.0, 2.5, 7.0):
                # I_x(a, 1) = x^a and I_x(1, b) = 1 − (1 − x)^b.
                self.assertAlmostEqual(cv.regularized_beta(x, a, 1.0), x ** a, places=12)
                self.assertAlmostEqual(cv.regularized_beta(x, 1.0, a), 1 - (1 - x) ** a, places=12)

    def test_symmetry_and_ends(self):
        for x, a, b in ((0.3, 2.0, 5.0), (0.8, 0.5, 0.5), (0.05, 10.0, 0.5)):
            self.assertAlmostEqual(cv.regularized_beta(x, a, b), 1 - cv.regularized_beta(1 - x, b, a), places=12)
        self.assertEqual(cv.regularized_beta(0.0, 2.0, 3.0), 0.0)
        self.assertEqual(cv.regularized_beta(1.0, 2.0, 3.0), 1.0)
        with self.assertRaises(ValueError):
            cv.regularized_beta(1.5, 2.0, 3.0)

    def test_arcsine_law(self):
        """I_x(1/2, 1/2) = (2/π) asin(√x): a case where neither parameter is 1."""
        for x in (0.1, 0.5, 0.9):
            self.assertAlmostEqual(cv.regularized_beta(x, 0.5, 0.5), 2 / math.pi * math.asin(math.sqrt(x)), places=12)


class StudentTTest(unittest.TestCase):
    """The two-sided p-value of Student's t, the seed-level test's distribution."""

    def test_table_values(self):
        """Printed t tables: the two-sided 5% points are 12.706 (1 df), 4.303 (2), 3.182 (3), 2.776 (4),
        2.228 (10); the 1% point with 2 df is 9.925. The tables round t to 3 decimals, hence 2e-4."""
        for t, df, p in ((12.706, 1, 0.05), (4.303, 2, 0.05), (3.182, 3, 0.05), (2.776, 4, 0.05),
                         (2.228, 10, 0.05), (9.925, 2, 0.01)):
            self.assertAlmostEqual(cv.t_two_sided_p(t, df), p, delta=2e-4, msg=f"t={t}, df={df}")

    def test_closed_forms(self):
        """1 df is the Cauchy law, p = 1 − (2/π) atan|t|; 2 df has p = 1 − |t| / √(t² + 2)."""
        for t in (0.0, 0.3, 1.0, 2.5, 6.0, 40.0):
            for sign in (1, -1):
                self.assertAlmostEqual(cv.t_two_sided_p(sign * t, 1), 1 - 2 / math.pi * math.atan(t), places=12)
                self.assertAlmostEqual(cv.t_two_sided_p(sign * t, 2), 1 - t / math.sqrt(t * t + 2), places=12)

    def test_many_df_is_normal(self):
        """With many degrees of freedom t tends to the standard normal: p → erfc(|t|/√2)."""
        for t in (1.0, 1.96, 3.0):
            self.assertAlmostEqual(cv.t_two_sided_p(t, 10 ** 7), math.erfc(t / math.sqrt(2)), places=5)

    def test_infinite_t_and_inverse(self):
        """Differences without spread give t = ±∞ and p = 0; t_critical inverts the p-value (the bar the
        header prints) back to the tabled 5% points."""
        self.assertEqual(cv.t_two_sided_p(math.inf, 2), 0.0)
        self.assertAlmostEqual(cv.t_critical(0.05, 2), 4.302653, places=5)
        self.assertAlmostEqual(cv.t_critical(0.05, 4), 2.776445, places=5)


class PairedTTest(unittest.TestCase):
    def test_hand_example(self):
        """Differences 1, 2, 3: mean 2, sd 1, t = 2 / (1/√3) = 2√3 with 2 df, p = 1 − 2√3/√14."""
        mean, t, df, p = cv.paired_t([1.0, 2.0, 3.0])
        self.assertEqual((mean, df), (2.0, 2))
        self.assertAlmostEqual(t, 2 * math.sqrt(3), places=12)
        self.assertAlmostEqual(p, 1 - 2 * math.sqrt(3) / math.sqrt(14), places=12)

    def test_sign_and_degenerate_cases(self):
        """The t carries the differences' sign (the verdict's direction); one seed gives no test; equal
        differences have no spread (p 0, or 1 when all are 0: identical outputs)."""
        self.assertLess(cv.paired_t([-1.0, -2.0, -3.0])[1], 0)
        self.assertIsNone(cv.paired_t([1.5]))  # one seed: no test
        self.assertEqual(cv.paired_t([0.5, 0.5, 0.5])[3], 0.0)  # no spread, nonzero mean
        self.assertEqual(cv.paired_t([0.0, 0.0])[3], 1.0)  # identical outputs


class HolmTest(unittest.TestCase):
    def test_hand_example(self):
        """p = 0.01, 0.04, 0.03, 0.005 (m = 4). Sorted: 0.005·4 = 0.02, 0.01·3 = 0.03, 0.03·2 = 0.06,
        0.04·1 = 0.04 → raised to 0.06 (an adjusted p never falls below a smaller p's)."""
        self.assertEqual([round(p, 12) for p in cv.holm([0.01, 0.04, 0.03, 0.005])], [0.03, 0.06, 0.06, 0.02])

    def test_missing_and_cap(self):
        """None is outside the family (m = 2 here), and nothing exceeds 1."""
        self.assertEqual([None if p is None else round(p, 12) for p in cv.holm([0.02, None, 0.6])],
                         [0.04, None, 0.6])
        self.assertEqual(cv.holm([0.5, 0.9, 0.7]), [1.0, 1.0, 1.0])
        self.assertEqual(cv.holm([]), [])


def test_of(diff, p_holm):
    return cv.Test("t", diff, p_holm, p_holm=p_holm)


class VerdictRuleTest(unittest.TestCase):
    """decide(): holds only when both Holm-corrected tests give the claimed direction, does not hold
    when both give the opposite one, otherwise not distinguishable."""

    def test_holds_and_does_not_hold(self):
        """Both tests significant and in the same direction: that direction decides, for either claimed sign."""
        self.assertEqual(cv.decide(+1, test_of(1.2, 0.01), test_of(1.0, 0.02))[0], "holds")
        self.assertEqual(cv.decide(-1, test_of(-1.2, 0.01), test_of(-1.0, 0.02))[0], "holds")
        self.assertEqual(cv.decide(+1, test_of(-1.2, 0.01), test_of(-1.0, 0.02))[0], "does not hold")
        self.assertEqual(cv.decide(-1, test_of(1.2, 0.01), test_of(1.0, 0.02))[0], "does not hold")

    def test_not_distinguishable(self):
        """Everything else is not distinguishable, including two significant tests that disagree, and the
        reason names which case it was."""
        cases = {
            "neither": (test_of(1.0, 0.3), test_of(1.0, 0.4)),
            "only pooled": (test_of(1.0, 0.001), test_of(1.0, 0.2)),
            "only seed-level": (test_of(1.0, 0.3), test_of(1.0, 0.01)),
            "disagreeing": (test_of(1.0, 0.001), test_of(-1.0, 0.01)),
            "no seed-level test": (test_of(1.0, 0.001), None),
        }
        for name, (pooled, seed) in cases.items():
            verdict, why = cv.decide(+1, pooled, seed)
            self.assertEqual(verdict, "not distinguishable", name)
        self.assertIn("disagree", cv.decide(+1, *cases["disagreeing"])[1])
        self.assertIn("only the pooled test", cv.decide(+1, *cases["only pooled"])[1])
        self.assertIn("no seed-level test", cv.decide(+1, *cases["no seed-level test"])[1])

    def test_uses_the_holm_p_and_a_nonzero_difference(self):
        """Raw p 0.001 but Holm 0.2 is not significant; p 0.001 on a zero difference (sacreBLEU's p for
        identical outputs) is not a direction."""
        raw_only = cv.Test("t", 1.0, 0.001, p_holm=0.2)
        self.assertEqual(cv.decide(+1, test_of(1.0, 0.001), raw_only)[0], "not distinguishable")
        self.assertEqual(cv.decide(+1, test_of(0.0, 0.001), test_of(0.0, 0.001))[0], "not distinguishable")
        self.assertEqual(cv.decide(+1, test_of(1.0, 0.05), test_of(1.0, 0.049))[0], "not distinguishable")

    def test_as_good_as(self):
        """Sign 0 ("as good as"): only both tests finding it worse refutes it."""
        self.assertEqual(cv.decide(0, test_of(-1.0, 0.01), test_of(-1.0, 0.01))[0], "does not hold")
        self.assertEqual(cv.decide(0, test_of(1.0, 0.01), test_of(1.0, 0.01))[0], "holds (better)")
        self.assertEqual(cv.decide(0, test_of(-1.0, 0.01), test_of(-1.0, 0.3))[0], "holds (not distinguishable)")

    def test_family(self):
        """apply_holm corrects each kind of p over the claims that have it: with three claims the
        smallest seed-level p 0.02 becomes 0.06 and the claim that held on raw p's no longer does."""
        claims = [cv.Claim("a", +1, pooled=cv.Test("b", 1.0, 0.001), seed=cv.Test("t", 1.0, 0.02)),
                  cv.Claim("b", +1, pooled=cv.Test("b", 1.0, 0.001), seed=cv.Test("t", 1.0, 0.5)),
                  cv.Claim("c", +1, pooled=cv.Test("b", 1.0, 0.001), seed=cv.Test("t", 1.0, 0.9)),
                  cv.Claim("d", +1, pooled=cv.Test("b", 1.0, 0.001))]
        cv.apply_holm(claims)
        self.assertAlmostEqual(claims[0].seed.p_holm, 0.06)
        self.assertAlmostEqual(claims[0].pooled.p_holm, 0.004)
        self.assertEqual(cv.decide(+1, claims[0].pooled, claims[0].seed)[0], "not distinguishable")
        line = cv.render(claims[0])
        self.assertIn("p = 0.020 (Holm 0.060)", line)
        self.assertIn("rule: only the pooled test", line)


class ReportClaimTest(unittest.TestCase):
    def test_output_claim(self):
        """A claim from attn report's JSON: per-seed differences of the common seeds (seed 3 only in one
        arch), the pooled test's direction from the pooled BLEUs, the t from the per-seed differences."""
        arch = {("test2016", "best"): {
            "delta_bleu": 1.5,
            "per_seed": [{"seed": 1, "bleu": 31.0}, {"seed": 2, "bleu": 32.0}, {"seed": 3, "bleu": 40.0}],
            "paired_bootstrap": {"p_pooled": 0.001, "pooled_bleu": 31.6, "pooled_baseline_bleu": 30.1,
                                 "seeds": [1, 2], "p_per_seed": [0.01, 0.002]}}}
        base = {("test2016", "best"): {"per_seed": [{"seed": 1, "bleu": 30.0}, {"seed": 2, "bleu": 30.0}]}}
        claim = cv.output_claim("X beats Y", {"x": arch, "y": base}, "x", "y", +1)
        self.assertAlmostEqual(claim.pooled.diff, 1.5)
        self.assertEqual(claim.seed.df, 1)
        self.assertAlmostEqual(claim.seed.diff, 1.5)  # mean of +1 and +2
        self.assertIn("per seed +1.00 (p 0.010), +2.00 (p 0.002)", claim.numbers)
        absent = cv.output_claim("X beats Z", {"x": arch}, "x", "z", +1)
        self.assertEqual(absent.absent, "no finished z runs")


class SlopeTest(unittest.TestCase):
    def test_least_squares_slope(self):
        """An exact line, and a hand-worked fit: x = 1, 2, 4, 6, 8 (mean 4.2,
        Sxx = 10.24 + 4.84 + 0.04 + 3.24 + 14.44 = 32.8), y = 10, 6, 3, 1, 0 (mean 4):
        Sxy = −3.2·6 − 2.2·2 − 0.2·(−1) + 1.8·(−3) + 3.8·(−4) = −44, slope −44/32.8."""
        ks = [1, 2, 4, 6, 8]
        self.assertAlmostEqual(cv.least_squares_slope(ks, [3 - 2 * k for k in ks]), -2.0, places=12)
        self.assertAlmostEqual(cv.least_squares_slope(ks, [10, 6, 3, 1, 0]), -44 / 32.8, places=12)
        with self.assertRaises(ValueError):
            cv.least_squares_slope([1], [2])
        with self.assertRaises(ValueError):
            cv.least_squares_slope([2, 2], [1, 3])


def toy_sets(rng, n_sentences, ks, keep):
    """Hypotheses and references for test sentences and their joined probes: each hypothesis keeps the
    first keep(k) share of its reference's words, so output shortens with k as on the real probes."""
    vocab = [f"w{i}" for i in range(40)]
    sentences = [" ".join(rng.choice(vocab) for _ in range(rng.randint(4, 12))) for _ in range(n_sentences)]
    sets = {}
    for k in ks:
        refs = [" ".join(sentences[i:i + k]) for i in range(0, n_sentences - n_sentences % k, k)]
        hyps = [" ".join(r.split()[:max(1, int(len(r.split()) * keep(k)))]) for r in refs]
        sets[k] = (hyps, refs)
    return sets


class SentenceGroupBootstrapTest(unittest.TestCase):
    """The pooled test of the slope claim: BLEU statistics per group of test sentences, resampled."""

    def test_segment_stats_sum_to_corpus_bleu(self):
        """Summed per-segment statistics give tools/sacrebleu_ref.py score's corpus BLEU (sacreBLEU's)."""
        hyps = ["A man rides a bike.", "Two dogs, playing in the snow!", "x"]
        refs = ["A man is riding a bike.", "Two dogs are playing in the snow.", "A woman reads."]
        summed = [sum(col) for col in zip(*(cv.segment_stats(h, r) for h, r in zip(hyps, refs)))]
        self.assertAlmostEqual(cv.bleu_score(summed), corpus_bleu(hyps, [refs]), places=10)

    def test_groups_hold_whole_lines(self):
        """Line i of a ×k probe joins sentences k·i … k·i+k−1: with groups of 24, ×8 lines 0–2 are group 0
        and line 3 group 1; ×1 line 23 is group 0, line 24 group 1."""
        one = cv.group_stats(["a"] * 30, ["a"] * 30, 1, 24)
        self.assertEqual(sorted(one), [0, 1])
        self.assertEqual(one[0][0], 24)  # hypothesis words in group 0
        eight = cv.group_stats(["a b"] * 4, ["a b"] * 4, 8, 24)
        self.assertEqual((eight[0][0], eight[1][0]), (6, 2))
        with self.assertRaises(ValueError):
            cv.group_stats(["a"], ["a"], 5, 24)

    def stats_by_k(self, sets):
        return {k: cv.group_stats(hyps, refs, k, 24) for k, (hyps, refs) in sets.items()}

    def test_no_difference_and_a_real_one(self):
        """The same outputs for both archs: difference 0 (no direction, whatever p says). Outputs that
        shorten much faster with k: a clearly negative slope difference at p < 0.05."""
        ks = [1, 2, 4, 8]
        gentle = self.stats_by_k(toy_sets(random.Random(1), 480, ks, lambda k: 1 - 0.04 * k))
        steep = self.stats_by_k(toy_sets(random.Random(1), 480, ks, lambda k: 1 - 0.1 * k))
        real, _ = cv.slope_bootstrap(gentle, gentle, ks, samples=200)
        self.assertEqual(real, 0.0)
        real, p = cv.slope_bootstrap(steep, gentle, ks, samples=200)
        self.assertLess(real, 0)
        self.assertLess(p, 0.05)
        self.assertAlmostEqual(real, cv.pooled_slope(steep, ks) - cv.pooled_slope(gentle, ks), places=12)

    def test_bootstrap_p(self):
        """sacreBLEU's rule on a hand example: |Δ*| = 1, 2, 3, 6 (mean 3) centred to −2, −1, 0, 3; only 3
        exceeds a real |Δ| of 2.5, so p = (1 + 1) / (4 + 1)."""
        self.assertAlmostEqual(cv.bootstrap_p(-2.5, [1.0, -2.0, 3.0, 6.0]), 0.4)


class ParametersTest(unittest.TestCase):
    def test_reads_the_model_record(self):
        """The parameter count comes from log.jsonl's "split": "model" record; the match line says whether
        transformer-wide is within 1% of MUSE."""
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "log.jsonl"), "w") as f:
                f.write('{"split":"train","update":1}\n{"arch":"transformer","parameters":8101000,"split":"model"}\n')
            self.assertEqual(cv.model_parameters(d), 8101000)
            self.assertIsNone(cv.model_parameters(os.path.join(d, "absent")))
        self.assertIn("within 1%", cv.parameter_match_line({"transformer-wide": [8101000], "muse": [8077836]}))
        self.assertIn("NOT within 1%", cv.parameter_match_line({"transformer-wide": [7578624], "muse": [8077836]}))


if __name__ == "__main__":
    unittest.main()
