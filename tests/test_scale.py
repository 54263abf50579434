"""The linear-time paths of issue 13 give the answers of the simple ones they replaced."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from assessor.diagnose import evaluation, robust
from assessor.run import _rows_by_metric


def _table(rng: np.random.Generator, n: int) -> pd.DataFrame:
    names = ["reward_mean", "kl", "entropy", "accuracy", "never_used"]
    metric = pd.Categorical(rng.choice(names[:4], n), categories=names)
    split = pd.Categorical(rng.choice(["train", "eval"], n, p=[0.9, 0.1]), categories=["train", "eval"])
    if n:
        metric[rng.integers(0, n, 5)] = np.nan  # a row without a metric or a split belongs to no group
        split[rng.integers(0, n, 5)] = np.nan
    return pd.DataFrame({"step": rng.integers(0, 1000, n), "metric": metric, "split": split, "value": rng.random(n)})


def test_rows_by_metric_are_the_groupby_rows() -> None:
    rng = np.random.default_rng(4)
    for n in (0, 1, 17, 5000):
        table = _table(rng, n)
        expected = {(str(m), str(s)): np.asarray(rows) for (m, s), rows in
                    table.groupby(["metric", "split"], observed=True, sort=False).indices.items()}
        got = _rows_by_metric(table)
        assert set(got) == set(expected)
        assert all(np.array_equal(got[key], expected[key]) for key in expected)
        plain = table.astype({"metric": object, "split": object})  # not categorical: the groupby fallback
        fallback = _rows_by_metric(plain)
        assert all(np.array_equal(fallback[key], expected[key]) for key in expected)


def test_window_means_are_the_moving_average() -> None:
    values = np.random.default_rng(2).normal(size=3000)
    for width in (1, 5, 500, 3000):
        np.testing.assert_allclose(robust.window_means(values, width),
                                   np.convolve(values, np.ones(width) / width, mode="valid"), rtol=0, atol=1e-12)


def test_set_size_is_read_off_many_evaluations() -> None:
    """Pass rates on 500 problems, evaluated at every step of a long run: the set size still shows (in blocks)."""
    rng = np.random.default_rng(3)
    scores = rng.integers(100, 400, 200_000) / 500
    error = evaluation.sampling_error("accuracy", scores)
    level = float(scores.max())
    assert error == math.sqrt(level * (1 - level) / 500)
    assert evaluation.sampling_error("accuracy", rng.random(200_000)) is None  # not a pass rate: stops at once


def test_eval_plateau_scan_is_exact_up_to_its_cap_and_bounded_past_it() -> None:
    steps = np.arange(1, 301) * 10
    score = np.minimum(steps / 1000, 1.0) + np.random.default_rng(6).normal(0, 0.01, len(steps))
    bend = evaluation._levelled_off(steps, score, 0.01)
    assert bend is not None and 900 <= bend.step <= 1100
    long_steps = np.arange(1, 20_001) * 10
    long_score = np.minimum(long_steps / 50_000, 1.0) + np.random.default_rng(6).normal(0, 0.01, len(long_steps))
    long_bend = evaluation._levelled_off(long_steps, long_score, 0.01)
    assert long_bend is not None and abs(long_bend.step - 50_000) <= 500


def test_windowed_medians_are_pandas_rolling_medians() -> None:
    rng = np.random.default_rng(1)
    for n in (0, 2, 5, 7, 8, 13, 1000, 70_001):
        for values in (rng.normal(size=n), np.round(rng.normal(size=n), 1)):  # ties too
            for window in (3, 4, 7, 10):
                expected = pd.Series(values).rolling(window).median().to_numpy()
                assert np.array_equal(robust.trailing_median(values, window), expected, equal_nan=True)
            for window, min_periods in ((7, 3), (7, 1), (9, 3)):
                expected = pd.Series(values).rolling(window, center=True, min_periods=min_periods).median().to_numpy()
                assert np.array_equal(robust.centred_median(values, window, min_periods), expected, equal_nan=True)
