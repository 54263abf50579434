"""The numpy statistics match scipy's on fixtures (scipy is a dev-only dependency, for these comparisons).

The diagnosis (`robust`) and the eval generator (`evals.generate.numeric`) run without scipy; these tests pin
them to the scipy functions they replaced.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import signal as scipy_signal
from scipy import special as scipy_special
from scipy import stats as scipy_stats

from assessor.diagnose import robust
from assessor.evals.generate import numeric


def _fixtures() -> list[tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(7)
    out = []
    for n in (2, 3, 5, 8, 13, 40, 120, 401):
        x = np.sort(rng.choice(np.arange(1, 5 * n + 1), n, replace=False)).astype(np.float64)
        out.append((x, 0.01 * x + rng.normal(0, 1, n)))  # a trend in noise
        out.append((x, np.round(rng.normal(0, 1, n), 1)))  # many ties in y
        out.append((x, rng.standard_t(2, n)))  # heavy tails
    x = np.repeat(np.arange(10.0), 3)  # ties in x
    out.append((x, np.sin(x) + np.arange(30) * 0.01))
    out.append((np.arange(12.0), np.full(12, 0.125)))  # a constant curve
    return out


@pytest.mark.parametrize("alpha", [0.95, 0.90])
def test_theil_sen_matches_scipy(alpha: float) -> None:
    for x, y in _fixtures():
        ours = robust.theil_sen(y, x, alpha=alpha)
        theirs = scipy_stats.theilslopes(y, x, alpha=alpha)
        for field in ("slope", "intercept", "low_slope", "high_slope"):
            assert getattr(ours, field) == pytest.approx(float(getattr(theirs, field)), rel=1e-12, abs=1e-15), (
                field, len(x))


def test_theil_sen_thins_only_past_its_cap() -> None:
    x = np.arange(robust.THEIL_SEN_MAX_POINTS + 500, dtype=np.float64)
    y = 0.5 * x + np.random.default_rng(1).normal(0, 1, len(x))
    fit = robust.theil_sen(y, x)
    assert fit.slope == pytest.approx(0.5, abs=1e-3)
    x_small, y_small = x[: robust.THEIL_SEN_MAX_POINTS], y[: robust.THEIL_SEN_MAX_POINTS]
    assert robust.theil_sen(y_small, x_small).slope == pytest.approx(
        float(scipy_stats.theilslopes(y_small, x_small).slope), rel=1e-12)


def test_normal_sf_matches_scipy() -> None:
    for z in (0.0, 0.3, 1.0, 1.959963984540054, 2.5, 5.0, 9.0, 30.0, -1.5):
        assert robust.normal_sf(z) == pytest.approx(float(scipy_stats.norm.sf(z)), rel=1e-12, abs=1e-300)


def test_spearman_matches_scipy() -> None:
    rng = np.random.default_rng(3)
    for n in (5, 20, 300):
        x = rng.normal(0, 1, n)
        y = x + rng.normal(0, 1, n)
        assert robust.spearman(x, y) == pytest.approx(float(scipy_stats.spearmanr(x, y).statistic), rel=1e-12)
        tied_x, tied_y = np.round(x), np.round(y * 2) / 2
        assert robust.spearman(tied_x, tied_y) == pytest.approx(
            float(scipy_stats.spearmanr(tied_x, tied_y).statistic), rel=1e-12)
    assert math.isnan(robust.spearman(np.ones(5), np.arange(5.0)))


def test_average_ranks_share_ties() -> None:
    assert robust.average_ranks(np.array([3.0, 1.0, 3.0, 2.0])).tolist() == [3.5, 1.0, 3.5, 2.0]


def test_generator_functions_match_scipy() -> None:
    rng = np.random.default_rng(11)
    x = rng.normal(0, 6, 5000)
    np.testing.assert_allclose(numeric.expit(x), scipy_special.expit(x), rtol=1e-14, atol=1e-300)
    p = rng.random(5000)
    np.testing.assert_allclose(numeric.logit(p), scipy_special.logit(p), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(numeric.normal_sf(x), scipy_stats.norm.sf(x), rtol=1e-12, atol=1e-300)
    q = (np.arange(32) + 0.5) / 32
    np.testing.assert_allclose(numeric.normal_ppf(q), scipy_stats.norm.ppf(q), rtol=1e-14, atol=1e-15)
    shocks = rng.normal(size=3000)
    # The recursion is the same arithmetic as lfilter's for this filter: equal to the last bit.
    assert np.array_equal(numeric.ar1_filter(shocks, 0.85), scipy_signal.lfilter([1.0], [1.0, -0.85], shocks))
