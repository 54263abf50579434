"""The robust core: noise alone must not produce trends or change points; real shapes must."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assessor.diagnose import robust
from tests.runs import ar1


def prepared(values: np.ndarray) -> robust.Series:
    return robust.prepare(np.arange(1, len(values) + 1), values)


@settings(max_examples=40, deadline=None, derandomize=True)
@given(seed=st.integers(0, 10_000), n=st.integers(40, 1500), phi=st.sampled_from([0.0, 0.5, 0.8]),
       shift=st.floats(-1e3, 1e3), scale=st.floats(1e-3, 1e3), slope=st.floats(-3, 3))
def test_shifting_or_scaling_never_flips_a_trend(seed, n, phi, shift, scale, slope):
    base = ar1(seed, n, phi) + slope * np.linspace(0, 1, n)
    reference = robust.trend(prepared(base)).direction
    moved = robust.trend(prepared(base * scale + shift)).direction
    assert moved == reference


@settings(max_examples=40, deadline=None, derandomize=True)
@given(seed=st.integers(0, 10_000), n=st.integers(30, 3000), phi=st.sampled_from([0.0, 0.3, 0.6, 0.8]),
       level=st.floats(-100, 100), scale=st.floats(1e-3, 100))
def test_noise_alone_gives_no_change_points(seed, n, phi, level, scale):
    values = level + ar1(seed, n, phi, scale)
    assert robust.change_points(prepared(values)) == []


def test_noise_estimate_is_right_for_white_and_autocorrelated_noise():
    for phi in (0.0, 0.5, 0.8):
        noise, rho = robust.noise_level(ar1(1, 20_000, phi, 2.0))
        assert noise == pytest.approx(2.0, rel=0.1)
        assert rho == pytest.approx(phi, abs=0.1)


def test_noise_estimate_ignores_trends_and_level_shifts():
    values = ar1(2, 2000, 0.0) + np.linspace(0, 50, 2000) + np.where(np.arange(2000) > 1000, 30.0, 0.0)
    noise, _ = robust.noise_level(values)
    assert noise == pytest.approx(1.0, rel=0.15)


def test_a_real_trend_is_found_and_a_level_shift_is_located():
    n = 300
    rising = ar1(3, n, 0.3) + np.linspace(0, 8, n)
    result = robust.trend(prepared(rising))
    assert result.direction == "rising" and result.change > 0
    shifted = ar1(4, n, 0.3) + np.where(np.arange(n) >= 200, -3.0, 0.0)
    found = robust.change_points(prepared(shifted))
    assert len(found) == 1
    index, before, after = found[0]
    assert abs(index - 200) <= 5 and before > after


def test_one_step_spike_is_an_outlier_not_a_change_point():
    values = ar1(5, 300, 0.2)
    values[150] = 15.0
    series = prepared(values)
    assert robust.change_points(series) == []
    spikes = robust.spikes(series.steps, series.values, series.noise)
    assert [(s[0], s[4]) for s in spikes] == [(151, "outlier")]


def test_transient_dip_that_recovers_leaves_no_lasting_shift():
    values = ar1(6, 400, 0.3) + 5.0
    values[200:206] -= 4.0  # six bad steps, then back
    series = prepared(values)
    assert robust.change_points(series) == []
    assert robust.trend(series).direction == "flat"


def test_doubling_is_a_discontinuity_and_noise_is_not():
    rng = np.random.default_rng(7)
    steps = np.arange(1, 301)
    doubled = np.where(steps < 150, 1.0, 2.1) * (1 + rng.normal(0, 0.05, 300))
    found = robust.discontinuities(steps, doubled)
    assert len(found) == 1 and abs(found[0][0] - 150) <= 3 and found[0][3] == pytest.approx(2.1, rel=0.1)
    assert robust.discontinuities(steps, rng.normal(0, 1, 300)) == []


def test_slowing_rise_is_recognised():
    steps = np.arange(1, 301)
    values = 1 - np.exp(-steps / 40) + np.random.default_rng(8).normal(0, 0.05, 300)
    series = robust.prepare(steps, values)
    assert robust.slowing(series) is True


def test_long_runs_are_reduced_to_a_few_hundred_points():
    values = ar1(9, 100_000, 0.5)
    series = prepared(values)
    assert len(series.red_values) <= robust.MAX_POINTS + 1
    assert series.red_steps[-1] >= 99_700  # the latest steps are never dropped


def test_level_off_tells_a_stopped_climb_from_a_slowing_one():
    steps = np.arange(1, 401)
    stopped = np.where(steps < 120, 0.2 + 0.4 * steps / 120, 0.6) + ar1(31, 400, 0.3, 0.05)
    bend = robust.level_off(prepared(stopped))
    assert bend is not None and 90 <= bend.step <= 150
    assert bend.stopped() and bend.flat_steps > bend.climb_steps

    slowing = 0.2 + 0.4 * np.log1p(steps / 40) / np.log1p(10) + ar1(32, 400, 0.3, 0.05)
    bend = robust.level_off(prepared(slowing))
    assert bend is not None and not bend.stopped()


def test_level_off_needs_a_climb():
    flat = 0.5 + ar1(33, 300, 0.3, 0.05)
    falling = 0.8 - 0.001 * np.arange(300) + ar1(34, 300, 0.3, 0.02)
    assert robust.level_off(prepared(flat)) is None or not robust.level_off(prepared(flat)).stopped()
    assert robust.level_off(prepared(falling)) is None


def test_a_few_flat_points_after_a_bend_are_not_a_plateau():
    steps = np.arange(1, 31)  # a 30-step run: 18 points after the bend cannot tell a plateau from a slow climb
    short = np.where(steps < 12, 0.2 + 0.3 * steps / 12, 0.5) + ar1(35, 30, 0.3, 0.02)
    bend = robust.level_off(prepared(short))
    assert bend is None or not bend.stopped()


def test_consecutive_level_shifts_chain():
    # Up from 0 to 4 at 100, down to 1 at 200, up to 6 at 300: each shift's level before is the level after the
    # one before it (a reader can follow the curve through them), close to the true plateaus.
    n = 400
    steps = np.arange(n)
    levels = np.select([steps < 100, steps < 200, steps < 300], [0.0, 4.0, 1.0], 6.0)
    series = prepared(levels + ar1(5, n, 0.3))
    found = robust.change_points(series)
    assert len(found) == 3
    chained = robust.segment_levels(series, [k for k, _, _ in found])
    for (_, after), (before, _) in itertools.pairwise(chained):
        assert after == before
    assert [round(level) for level in (chained[0][0], chained[0][1], chained[1][1], chained[2][1])] == [0, 4, 1, 6]


def _same_numbers(a, b) -> bool:
    """Equal bit for bit, the sign of a zero and NaN included."""
    a, b = np.atleast_1d(np.asarray(a, dtype=np.float64)), np.atleast_1d(np.asarray(b, dtype=np.float64))
    return a.shape == b.shape and a.tobytes() == b.tobytes()


def _awkward_curves():
    rng = np.random.default_rng(7)
    for n in (1, 2, 63, 64, 65, 1000, 1001, 30_000):
        yield rng.normal(size=n)
        yield np.round(rng.normal(size=n), 1)  # many ties
        yield np.where(rng.random(n) < 0.7, 0.0, rng.normal(size=n))  # a median of zero
        yield np.where(rng.random(n) < 0.5, -0.0, 0.0) + np.where(rng.random(n) < 0.1, 1.0, 0.0)  # signed zeros
        with_nan = rng.normal(size=n)
        with_nan[rng.integers(0, n)] = np.nan
        yield with_nan
        many_nan = np.round(rng.normal(size=n), 1)
        many_nan[rng.random(n) < 0.2] = np.nan
        yield many_nan
        yield np.full(n, np.inf)
    yield np.arange(100, dtype=np.int64)  # not floating point: np.median's own answer


def test_median_is_numpys_median_bit_for_bit():
    for values in _awkward_curves():
        assert _same_numbers(robust.median(values), np.median(values)), values[:8]


@pytest.mark.parametrize("width", [2, 3, 7, 20, 750, 751])
def test_row_medians_are_numpys_row_medians_bit_for_bit(width):
    for values in _awkward_curves():
        usable = len(values) // width * width
        if not usable:
            continue
        rows = values[:usable].reshape(-1, width)
        assert _same_numbers(robust.row_medians(rows), np.median(rows, axis=1)), (width, values[:8])
        windows = np.lib.stride_tricks.sliding_window_view(values, width)  # a strided view, as `rescale` passes
        assert _same_numbers(robust.row_medians(windows), np.median(windows, axis=1))


def test_average_ranks_are_those_of_a_stable_sort():
    def reference(values):
        order = np.argsort(values, kind="stable")
        ordered = values[order]
        starts = np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1])))
        ends = np.append(starts[1:], len(values))
        ranks = np.empty(len(values))
        ranks[order] = np.repeat((starts + 1 + ends) / 2.0, ends - starts)
        return ranks

    for values in _awkward_curves():
        assert _same_numbers(robust.average_ranks(values), reference(values)), values[:8]


def _spikes_from_every_level(steps, values, noise, threshold=6.0, limit=robust.MAX_SPIKES):
    """`spikes` as it read before the levels were bounded: the centred median at every point."""
    level = robust.centred_median(values, 7, min_periods=3)
    z = (values - level) / noise
    candidates = np.flatnonzero(np.abs(z) >= threshold)
    candidates = candidates[np.argsort(-np.abs(z[candidates]))][:limit]
    return [(int(steps[i]), float(values[i]), float(level[i]), float(z[i])) for i in sorted(int(c) for c in candidates)]


def test_spikes_found_by_the_bound_are_those_of_every_level():
    rng = np.random.default_rng(11)
    curves = list(_awkward_curves())
    for n in (64, 500, 20_000):
        base = ar1(int(rng.integers(0, 1000)), n, 0.5)
        for count in (0, 3, 40):  # none, a few, more than the limit
            spiky = base.copy()
            spiky[rng.integers(0, n, count)] += rng.choice([-1, 1], count) * rng.uniform(3, 30, count)
            curves.append(spiky)
        stepped = np.round(base, 1)
        stepped[n // 2:] += 5  # a regime change
        curves.append(stepped)
    for values in curves:
        values = np.asarray(values, dtype=np.float64)
        if np.isinf(values).any():  # the diagnosis hands `spikes` finite values (and NaN only in a test)
            continue
        steps = np.arange(len(values)) * 3
        for noise, threshold in ((0.3, 6.0), (1.0, 6.0), (0.05, 4.0)):
            got = [s[:4] for s in robust.spikes(steps, values, noise, threshold)]
            expected = _spikes_from_every_level(steps, values, noise, threshold) if len(values) >= 7 else []
            assert _same_numbers([x for s in got for x in s], [x for s in expected for x in s]), (len(values), noise)


def test_the_reward_step_scan_reads_the_same_steps_from_the_medians_it_needs(monkeypatch):
    from assessor.diagnose import rescale

    rng = np.random.default_rng(13)
    curves = []
    for n in (60, 400, 5_000):
        base = 0.5 + 0.02 * ar1(int(rng.integers(0, 1000)), n, 0.3)
        for jumps in (0, 1, 3):
            curve = base.copy()
            for at in rng.integers(n // 4, n - n // 4, jumps):
                curve[at:] += rng.choice([-1, 1]) * rng.uniform(0.1, 0.4)  # a new level, in one go
            curves.append(curve)
        spiky = base.copy()
        spiky[rng.integers(0, n, n // 20)] += 0.5  # lucky batches: no new level
        curves.append(spiky)
        curves.append(np.round(base * 8) / 8)  # a reward of few values (many ties, zero-width windows)
    curves.append(np.where(np.arange(300) < 150, 0.0, 1.0))
    with_nan = curves[0].copy()
    with_nan[30] = np.nan
    curves.append(with_nan)
    found = []
    for values in curves:
        for k in (5, 20):
            noise = max(robust.noise_level(values)[0], 1e-12)
            found.append(rescale._level_steps(values, k, noise))
    monkeypatch.setattr(rescale, "_window_medians", lambda values, windows, index, rise, fall: robust.row_medians(
        windows))
    every = [rescale._level_steps(values, k, max(robust.noise_level(values)[0], 1e-12))
             for values in curves for k in (5, 20)]
    assert found == every
    assert any(falls or rises for falls, rises in every)  # the curves do hold steps to find


def test_discontinuities_read_from_the_medians_a_doubling_needs_are_those_of_every_median(monkeypatch):
    rng = np.random.default_rng(17)
    curves = [c for c in _awkward_curves() if np.isfinite(c).all() or np.isnan(c).any()]
    for n in (64, 500, 30_000):
        level = np.exp(0.1 * ar1(int(rng.integers(0, 1000)), n, 0.5))
        curves.append(level)  # smooth in log terms: no doubling anywhere
        stepped = level.copy()
        for at in rng.integers(n // 5, n - n // 5, 3):
            stepped[at:] *= rng.choice([0.3, 2.5, 4.0])  # halvings and doublings held on both sides
        curves.append(stepped)
        spiky = level.copy()
        spiky[rng.integers(0, n, n // 50)] *= 20  # gradient-norm spikes
        curves.append(spiky)
        curves.append(0.01 * ar1(int(rng.integers(0, 1000)), n, 0.2))  # around zero (a policy loss)
    steps_of = [np.arange(len(c)) * 2 for c in curves]
    found = [robust.discontinuities(steps, values) for steps, values in zip(steps_of, curves, strict=True)]
    monkeypatch.setattr(robust, "_trailing_medians_for_jumps", lambda values, k, least: robust.trailing_median(
        values, k))
    every = [robust.discontinuities(steps, values) for steps, values in zip(steps_of, curves, strict=True)]
    assert found == every
    assert sum(len(f) for f in every) >= 6  # the curves do hold jumps to find
