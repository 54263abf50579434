"""A reward that changed its scale, not its model: read it from where the new scale begins.

A reward model swapped or refreshed mid-run, or reward normalisation switched on at a resume, moves the logged
reward (and any held-out score from the same reward model) to a new level between two consecutive logged steps.
The policy itself cannot change that much in one update without its own measures showing it: KL from the
reference, entropy, completion length and the gradient norm run on unbroken. So a step of the reward with every
such witness unbroken is a new ruler, and comparing levels across it (a "peak" before, a "decline" after) reads
the ruler, not the model. A collapse in one update comes with a lurch in those measures; it is not read as this.
One such lurch has a name of its own (`policy_reset`): KL to the reference dropping to a fraction of itself with the
reward, the trained weights lost at a resume.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field, replace

import numpy as np

from assessor.diagnose import robust
from assessor.diagnose.context import finding, num
from assessor.diagnose.evaluation import checked_against_answers
from assessor.diagnose.models import Finding
from assessor.run import Run

# The policy's own measures: a real change of the model in one update shows in at least one of them.
WITNESSES = ("kl", "entropy", "response_length_mean", "grad_norm", "clip_ratio_region", "policy_shift_kl")
MIN_WITNESSES = 2
DIVERGENCE_SIGNALS = ("loss", "pg_loss")  # not witnesses (a surrogate moves freely), but NaN/inf in them is
STEP_NOISE = 8.0  # the reward's step, in its own noise units: a new level, not a bad batch
ABRUPT_SHARE = 0.7  # of the step made between two neighbouring logged points
WITNESS_NOISE = 3.0  # a witness moving less than this many of its noise units across the step is unbroken
WITNESS_RATIO = 1.5  # ... and by less than half again (or a third less)
MIN_SEGMENT = 12  # logged reward points after the step needed to read the reward on its own
RESET_KL_FACTOR = 5.0  # KL to the reference dropping to under a fifth in one update: the policy is back at it


@dataclass(frozen=True)
class Rescale:
    """Where the reward took a new scale, the levels either side, and what vouched for the policy."""

    step: int
    before: float
    after: float
    witnesses: tuple[str, ...]
    evals: tuple[str, ...]  # held-out series that stepped with it (scored by the same reward model)
    train: tuple[str, ...] = ()  # other training rewards that stepped with it (the KL-shaped reward, its parts)


@dataclass(frozen=True)
class RewardSteps:
    """The training reward's one-update steps to a new level, latest first: what the tests below read."""

    steps: np.ndarray
    values: np.ndarray
    k: int  # points either side a level is read over
    found: list[int]  # indices where the new level begins
    rises: list[int] = field(default_factory=list)  # the same for steps up to a new level that holds, latest first

    def levels(self, i: int) -> tuple[float, float]:
        """The reward's median over the `k` points before index `i` and the `k` from it."""
        return float(np.median(self.values[i - self.k:i])), float(np.median(self.values[i:i + self.k]))


def reward_steps(run: Run) -> RewardSteps | None:
    """Scan the reward once for one-update steps (None when it is too short or has no noise to measure by)."""
    series = run.series("reward_mean")
    steps, values = series.index.to_numpy(), series.to_numpy()
    n = len(values)
    k = max(5, min(20, n // 20))
    if n < 2 * k + MIN_SEGMENT:
        return None
    noise = max(robust.noise_level(values)[0], robust.noise_floor(values))
    if noise <= 0:
        return None
    falls, rises = _level_steps(values, k, noise)
    return RewardSteps(steps, values, k, falls, rises)


def reward_rescale(run: Run, scan: RewardSteps | None) -> Rescale | None:
    """The latest step where the training reward changed scale with the policy unbroken, or None.

    `scan`: `reward_steps(run)`.
    """
    if scan is None:
        return None
    for i, step, witnesses in _unbroken(run, scan, scan.found):
        before, after = scan.levels(i)
        evals = _stepped_evals(run, step, after - before)
        if any(checked_against_answers(metric) for metric in evals):
            # A reward model swapped mid-run moves its own scores, on training and held-out prompts alike; it cannot
            # move a pass rate a verifier checks: the model changed there, not the ruler (a chat template changed at
            # a relaunch, in holdout39).
            continue
        return Rescale(step, before, after, tuple(witnesses), tuple(evals), tuple(_stepped_rewards(run, step, scan.k)))
    return None


def _unbroken(run: Run, scan: RewardSteps, found: list[int]) -> Iterator[tuple[int, int, list[str]]]:
    """The steps of `found` (latest first) with a new level long enough to read and the policy's measures unbroken.

    Yields the index, the step and the witnesses that ran on across it.
    """
    for i in found:
        step = int(scan.steps[i])
        if len(scan.values) - i < MIN_SEGMENT:
            continue
        witnesses, broken = _witnesses(run, step, scan.k)
        lo, hi = int(scan.steps[max(i - scan.k, 0)]), int(scan.steps[min(i + scan.k, len(scan.steps) - 1)])
        if not broken and len(witnesses) >= MIN_WITNESSES and not _diverged(run, lo, hi):
            yield i, step, witnesses


def _diverged(run: Run, lo: int, hi: int) -> bool:
    """Whether the loss, the gradient norm or another of the policy's measures went NaN/inf between `lo` and `hi`.

    A witness that stops being finite is missing from its levels, not unbroken: the weights diverged there, and a
    reward that fell with them is the broken policy scoring, not a new ruler.
    """
    return any(lo <= step <= hi for metric in (*WITNESSES, *DIVERGENCE_SIGNALS)
               for step in run.nonfinite_steps(metric))


def _level_steps(values: np.ndarray, k: int, noise: float) -> tuple[list[int], list[int]]:
    """Indices where the curve steps down, and where it steps up, to a new level in one go, each latest first.

    Steady `k` points before, a move of `STEP_NOISE` noise units or more between their median and the next `k`
    points', most of it made between two neighbouring points. A step up must also hold over the `2k` points from it:
    a burst of lucky batches (a spiky reward) is no new level.
    """
    # The windows' medians in numpy passes, not a Python loop over a long run's steps; the spread only where a step
    # was found.
    windows = np.lib.stride_tricks.sliding_window_view(values, k)  # windows[j] = values[j:j + k]
    index = np.arange(k, len(values) - k + 1)  # i: the k points before are windows[i - k], the k from i windows[i]
    medians = _window_medians(values, windows, index, STEP_NOISE * noise, -STEP_NOISE * noise)
    jump = medians[index] - medians[index - k]
    abrupt = np.abs(values[index] - medians[index - k]) >= ABRUPT_SHARE * np.abs(jump)
    falls = _steady_before(windows, index[(jump <= -STEP_NOISE * noise) & abrupt], jump, index, k)
    up = index[(jump >= STEP_NOISE * noise) & abrupt]
    held = np.array([np.median(values[i:i + 2 * k]) - medians[i - k] >= 0.5 * (medians[i] - medians[i - k])
                     for i in up], dtype=bool)
    rises = _steady_before(windows, up[held] if len(up) else up, jump, index, k)
    return falls, rises


def _window_medians(values: np.ndarray, windows: np.ndarray, index: np.ndarray, rise: float, fall: float,
                    ) -> np.ndarray:
    """The medians of `values`' `windows` that a step at `index` can need (NaN for others: no jump reaches there).

    A step at i needs the medians of windows i - k and i, and a jump between them of `rise` or more (or `fall` or
    less). Each median lies between its window's lowest and highest values, so the jump is at most the later
    window's highest less the earlier's lowest (at least the later's lowest less the earlier's highest), in
    floating point too: the medians are taken only where those bounds reach, which on a long reward is a handful of
    windows instead of every one. A curve holding a non-finite value gets every median.
    """
    if not bool(np.isfinite(values).all()):
        return robust.row_medians(windows)
    k, count = windows.shape[1], len(windows)
    lowest, highest = values[:count].copy(), values[:count].copy()
    for shift in range(1, k):  # k shifted passes: several times faster than reducing the strided windows' rows
        np.minimum(lowest, values[shift:shift + count], out=lowest)
        np.maximum(highest, values[shift:shift + count], out=highest)
    reach = (highest[index] - lowest[index - k] >= rise) | (lowest[index] - highest[index - k] <= fall)
    at = index[reach]
    needed = np.union1d(at, at - k)
    medians = np.full(len(windows), math.nan)
    if len(needed):
        medians[needed] = robust.row_medians(windows[needed])
    return medians


def _steady_before(windows: np.ndarray, found: np.ndarray, jump: np.ndarray, index: np.ndarray, k: int) -> list[int]:
    """The steps in `found` with a steady stretch before them (a step, not a slide), one index per step."""
    if not len(found):
        return []
    size = np.abs(jump[np.searchsorted(index, found)])
    low, high = np.percentile(windows[found - k], [10, 90], axis=1)
    candidates = found[high - low <= 0.5 * size]
    out: list[int] = []
    for i in candidates[::-1]:
        if not out or out[-1] - i >= k:  # else the same step seen from a neighbouring index
            out.append(int(i))
    return out


def _either_side(run: Run, metric: str, step: int, k: int) -> tuple[float, float, float] | None:
    """A training curve's median over the `k` points before `step` and the `k` from it, and its noise level."""
    series = run.series(metric)
    steps, values = series.index.to_numpy(), series.to_numpy()
    before, after = values[steps < step][-k:], values[steps >= step][:k]
    if len(before) < 3 or len(after) < 3:
        return None
    noise = max(robust.noise_level(values)[0], robust.noise_floor(values))
    return float(np.median(before)), float(np.median(after)), noise


def _witnesses(run: Run, step: int, k: int) -> tuple[list[str], list[tuple[str, float, float]]]:
    """The witnesses logged around `step` that ran on unbroken, and those that broke there (with their levels)."""
    unbroken, broken = [], []
    for metric in WITNESSES:
        around = _either_side(run, metric, step, k)
        if around is None:
            continue
        a, b, noise = around
        moved = abs(b - a) / noise if noise > 0 else (0.0 if a == b else np.inf)
        ratio = max(abs(a), abs(b)) / max(min(abs(a), abs(b)), 1e-12)
        if moved >= WITNESS_NOISE and ratio >= WITNESS_RATIO:
            broken.append((metric, a, b))
        else:
            unbroken.append(metric)
    return unbroken, broken


def _stepped_rewards(run: Run, step: int, k: int) -> list[str]:
    """The other training rewards (`reward_shaped_mean`, `reward_component/...`) that fell at `step` too."""
    out = []
    for metric in run.metric_names("train"):
        if metric == "reward_mean" or not metric.startswith("reward"):
            continue
        around = _either_side(run, metric, step, k)
        if around is not None and around[2] > 0 and around[0] - around[1] >= 0.5 * STEP_NOISE * around[2]:
            out.append(metric)
    return out


def _stepped_evals(run: Run, step: int, jump: float) -> list[str]:
    """Held-out series whose evaluations either side of `step` moved the same way by several of their own noise."""
    out = []
    for metric in run.metric_names("eval"):
        series = run.series(metric, "eval")
        steps, values = series.index.to_numpy(), series.to_numpy()
        before, after = values[steps < step], values[steps >= step]
        if len(before) < 2 or len(after) < 2:
            continue
        noise = max(float(np.median(np.abs(np.diff(values)))) * robust.MAD_TO_SD, robust.noise_floor(values))
        moved = float(after[0] - before[-1])
        if noise > 0 and np.sign(moved) == np.sign(jump) and abs(moved) >= 4.0 * noise:
            out.append(metric)
    return out


def from_rescale(run: Run, rescale: Rescale) -> Run:
    """The run with the training reward, and the held-out scores that stepped with it, read from the new scale on."""
    metrics = run.metrics
    metric, split = metrics["metric"], metrics["split"]  # categorical: compared by code, not as strings per row
    drop = (metrics["step"] < rescale.step) & (
        (metric.isin(["reward_mean", *rescale.train]) & (split == "train"))
        | (metric.isin(list(rescale.evals)) & (split == "eval")))
    return replace(run, metrics=metrics[~drop.to_numpy()].reset_index(drop=True))


def rescale_finding(rescale: Rescale) -> Finding:
    """What the diagnosis did about it, in words a reader can check against the dashboard."""
    evals = f" (and held-out {', '.join(rescale.evals)} with it)" if rescale.evals else ""
    return finding(
        "reward_mean", "reward_rescaled", "watch",
        f"reward_mean stepped from about {num(rescale.before)} to {num(rescale.after)} at step {rescale.step}{evals} "
        f"in one update while {', '.join(rescale.witnesses)} showed no jump at that update: the reward's scale "
        "changed (a reward model swapped or refreshed, normalisation switched on at a resume), not the model, so it "
        f"is read from step {rescale.step} on; check what changed there", [rescale.step])


def policy_reset(run: Run, scan: RewardSteps | None) -> Finding | None:
    """The reward falling to a new level in one update while KL to the reference drops to a fraction of itself.

    The other half of `reward_rescale`'s test: the same one-update step down (`scan`, from `reward_steps(run)`), but
    with the policy's distance from its reference collapsing at the same step (to under a `RESET_KL_FACTOR`th).
    Training only ever moves a policy away from its reference gradually; one that is suddenly back at it lost its
    weights (a resume that restored the optimizer and step count but loaded the base model). The weights from
    before the step are the ones to keep, however fast the run relearns.
    """
    if scan is None or not run.has("kl"):
        return None
    for i in scan.found:
        step = int(scan.steps[i])
        _, broken = _witnesses(run, step, scan.k)
        kl = next(((a, b) for metric, a, b in broken if metric == "kl"), None)
        if kl is None or not (kl[0] > 0 and kl[1] * RESET_KL_FACTOR <= kl[0]):
            continue
        before, after = scan.levels(i)
        return finding(
            "reward_mean", "policy_reset", "warning",
            f"reward_mean fell from about {num(before)} to {num(after)} in one update at step {step}, and KL to the "
            f"reference fell from {num(kl[0])} to {num(kl[1])} with it: the policy is suddenly back near its "
            "reference, so its trained weights were lost there (a resume that loaded the base model); the weights "
            "from before that step are the ones to keep", [step])
    return None


def reward_stepped_up(run: Run, scan: RewardSteps | None) -> Finding | None:
    """The latest one-update step up of the reward to a level that holds, with the policy's own measures unbroken.

    The mirror of `reward_rescale`: learning moves a reward gradually (even a format picked up fast takes a few
    updates, and the policy's measures move with it), so a reward that lands on a new, higher level between two
    logged steps while KL, entropy, lengths and the gradient norm run on as before was re-scored, not re-learnt (a
    reward model swapped or refreshed, a reward function changed). The levels either side are not comparable; the
    diagnosis keeps reading the whole curve (a step up loses no gain to hide), and the best point is not taken from
    after it once the run declines on held-out data (`best_checkpoint`).
    """
    if scan is None:
        return None
    for i, step, witnesses in _unbroken(run, scan, scan.rises):
        before, after = scan.levels(i)
        return finding(
            "reward_mean", "reward_stepped_up", "watch",
            f"reward_mean jumped from about {num(before)} to {num(after)} in one update at step {step} while "
            f"{', '.join(witnesses)} showed no jump at that update (what they did after is the policy training on "
            "the new reward): no policy improves that much in one update, so the reward itself changed there (a "
            "reward model swapped or refreshed, a new reward function); levels either side are not comparable, so "
            "check what changed at that step", [step])
    return None
