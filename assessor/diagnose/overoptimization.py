"""Over-optimisation: reward bought at a price the task does not pay.

Three ways it shows, each read only when the run logs what it needs:

* the exchange rate of reward for KL collapses: late in the run each unit of distance from the reference buys a
  small fraction of the reward it bought early, while KL multiplies (the policy is finding the reward model's
  blind spots, not getting better at the task);
* a proxy reward keeps rising while a task metric logged beside it (a held-out accuracy, an exact-match rate)
  falls: the classic sign of reward hacking, and the model was better before it began;
* in preference training, the chosen completions' log-probability collapses while the preference accuracy still
  looks fine: the policy wins the comparison by making both answers unlikely, and its generations degrade.
"""

from __future__ import annotations

import math

import numpy as np

from assessor.diagnose import robust
from assessor.diagnose.context import Context, finding, num
from assessor.diagnose.evaluation import eval_noise
from assessor.diagnose.models import Finding, OveroptimizationDiagnosis
from assessor.diagnose.signals import Reading

MIN_POINTS = 20
KL_MULTIPLE = 3.0  # KL at least three times what it was when the latest stretch began
RATE_COLLAPSE = 0.1  # the latest stretch buys under a tenth of the reward per unit of KL the early run bought
DECLINE_T = 4.0
CHOSEN_COLLAPSE = 3.0  # chosen log-probs three times as negative as at the start


def diagnose_overoptimization(ctx: Context) -> OveroptimizationDiagnosis:
    """Reward-per-KL exchange rate, proxy against task, and chosen log-probs in preference runs."""
    out = OveroptimizationDiagnosis()
    reward, kl = ctx.book.get("reward_mean"), ctx.book.get("kl")
    if reward is not None and kl is not None:
        out.findings.extend(_exchange_rate(reward, kl, out))
    if reward is not None:
        out.findings.extend(_proxy_against_task(ctx, reward, out))
    out.findings.extend(_chosen_logps(ctx))
    return out


def _aligned(a: Reading, b: Reading) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    steps, ia, ib = np.intersect1d(a.series.steps, b.series.steps, return_indices=True)
    return steps, a.series.values[ia], b.series.values[ib]


def _exchange_rate(reward: Reading, kl: Reading, out: OveroptimizationDiagnosis) -> list[Finding]:
    steps, r, k = _aligned(reward, kl)
    n = len(steps)
    if n < MIN_POINTS or robust.zero_heavy(k):
        return []
    width = robust.stretch_width(n)
    third = n - n // 3
    r0, r_mid, r_now = float(np.mean(r[:width])), float(np.mean(r[third - width:third])), float(np.mean(r[-width:]))
    k0, k_mid, k_now = float(np.mean(k[:width])), float(np.mean(k[third - width:third])), float(np.mean(k[-width:]))
    floor = robust.material_floor(k)
    early_kl, late_kl = k_mid - k0, k_now - k_mid
    if early_kl <= floor or late_kl <= 0:
        return []
    early_rate, late_rate = (r_mid - r0) / early_kl, (r_now - r_mid) / late_kl
    out.reward_per_kl_early, out.reward_per_kl_recent = early_rate, late_rate
    noise = max(reward.series.noise, robust.noise_floor(reward.series.values))
    if early_rate <= 0 or k_mid <= floor or k_now < KL_MULTIPLE * k_mid or late_rate >= RATE_COLLAPSE * early_rate:
        return []
    if r_now - r_mid <= 0.5 * noise:
        return []  # reward no longer rising: the KL/reward quadrant already says "drift without benefit"
    since = int(steps[third])
    return [finding(
        "kl_reward", "reward_per_kl_collapsed", "warning",
        f"reward bought per unit of KL fell from {num(early_rate)} early in the run to {num(late_rate)} since step "
        f"{since} ({late_rate / early_rate:.0%} of the early rate) while KL went {num(k_mid)} → {num(k_now)} "
        f"({k_now / k_mid:.1f}x): the reward is increasingly bought with drift, the signature of over-optimising "
        "the reward model; read completions from after step "
        f"{since} for reward hacking", [since])]


COMPONENT = "reward_component/"
TASK_WORDS = ("exact_match", "accuracy", "acc", "correct", "pass", "solve", "success")


def _task_series(ctx: Context) -> tuple[str, np.ndarray, np.ndarray] | None:
    """A task metric logged beside the proxy reward on the training batches (an exact-match or pass rate).

    A held-out eval falling while the reward rises is read by the eval diagnosis (`train_eval_divergence`).
    """
    components = [m for m in ctx.run.metric_names() if m.startswith(COMPONENT) and m.endswith("_mean")]
    for name in ctx.run.metric_names():
        lowered = name.lower()
        # A reward function that checks the task (`reward_component/accuracy_reward_mean`) is such a metric too,
        # when the total has other parts that can rise without it (a length or format bonus).
        task_component = name in components and len(components) > 1
        if (name.startswith(("reward", "pref_")) and not task_component) or not any(w in lowered for w in TASK_WORDS):
            continue
        # Bookkeeping of the sampler, not of the task: OpenRLHF's `dynamic_filtering_pass_rate` is the share of
        # groups a filter kept (mixed outcomes), which falls as more groups come back all right.
        # Nor is a share of groups by outcome (`solve_all`, `frac_all_correct`, `frac_solved_or_failed`): it falls
        # as groups turn mixed. A rate that names failure is no success rate either way round.
        if any(w in lowered for w in ("token", "clip", "filter", "drop", "kept", "solve_all", "solve_none",
                                      "all_correct", "all_wrong", "all_or", "group", "fail", "_or_", "degenerate")):
            continue
        series = ctx.run.series(name)
        if len(series) >= MIN_POINTS:
            return name, series.index.to_numpy(), series.to_numpy()
    return None


def _proxy_against_task(
    ctx: Context, reward: Reading, out: OveroptimizationDiagnosis,
) -> list[Finding]:
    task = _task_series(ctx)
    if task is None:
        return []
    name, steps, values = task
    out.task_metric = name
    if len(values) < 4 or float(np.ptp(values)) == 0.0:
        return []
    k = max(2, min(len(values) // 4, robust.stretch_width(len(values))))
    means = robust.window_means(values, k)
    best = int(np.argmax(means[: max(1, len(means) - k)]))
    best_step, best_end = int(steps[best + k // 2]), int(steps[best + k - 1])
    spread = eval_noise(values)  # separate measurements, read as the eval diagnosis reads evaluations
    task_drop = (float(means[best]) - float(np.mean(values[-k:]))) / (spread * math.sqrt(2.0 / k))
    if task_drop < DECLINE_T or best + k > len(values) - k:
        return []
    # The proxy over the same steps: from the stretch around the task's best to the latest stretch.
    series = reward.series
    width = robust.stretch_width(series.n)
    around = robust.nearest(series.steps, best_step, width)
    latest = np.zeros(series.n, dtype=bool)
    latest[-width:] = True
    if (around & latest).any():
        return []
    proxy = robust.level_shift(series, around, latest)
    if proxy.t < 3.0:
        return []
    return [finding(
        "reward_mean", "reward_hacking", "critical",
        f"reward kept rising ({num(proxy.before)} → {num(proxy.after)}, {proxy.t:.1f} standard errors) after step "
        f"{best_step}, while {name} fell from {num(float(means[best]))} to {num(float(np.mean(values[-k:])))} "
        f"({task_drop:.1f} standard errors): the reward is being gamed, and the model was better around step "
        f"{best_step}", [_next_step(steps, best_end)])]


def _next_step(steps: np.ndarray, step: int) -> int:
    """The first logged step after `step` (the first of a broken stretch)."""
    later = steps[steps > step]
    return int(later[0]) if len(later) else step


def _chosen_logps(ctx: Context) -> list[Finding]:
    chosen = ctx.book.get("logps_chosen")
    if chosen is None or chosen.series.n < 8:
        return []
    series = chosen.series
    width = robust.stretch_width(series.n)
    first, last = np.zeros(series.n, dtype=bool), np.zeros(series.n, dtype=bool)
    first[:width], last[-width:] = True, True
    shift = robust.level_shift(series, first, last)
    if not (shift.before < 0 and shift.after < 0 and shift.t <= -DECLINE_T):
        return []
    if shift.after > CHOSEN_COLLAPSE * shift.before:
        # Falling, not (yet) collapsed: common in DPO, where both answers get less likely as the margin widens; said
        # as a watch so a reader does not meet the falling row with no word on it.
        return [finding(
            "logps_chosen", "chosen_logps_falling", "watch",
            f"the chosen completions' log-probability fell from {num(shift.before)} to {num(shift.after)} "
            f"({shift.after / shift.before:.2f}x, {-shift.t:.1f} standard errors): both answers getting less likely "
            f"is common as the margin widens; a fall to {CHOSEN_COLLAPSE:g}x or more with the accuracy holding is a "
            "collapse (the policy winning by making both unlikely)", [int(series.steps[0])])]
    accuracy = ctx.book.get("pref_accuracy") or ctx.book.get("pref_margin")
    holding = accuracy is None or accuracy.summary.trend != "falling"
    if not holding:
        return []
    # Onset: where the smoothed chosen log-prob had covered a quarter of its fall.
    smooth, red_steps = series.smooth, series.red_steps
    threshold = shift.before + 0.25 * (shift.after - shift.before)
    below = np.flatnonzero(smooth <= threshold)
    onset = int(red_steps[below[0]]) if len(below) else int(series.steps[0])
    vocab = ctx.facts.vocab_size
    uniform = (f"-ln({vocab}) = {-math.log(vocab):.1f}" if vocab
               else "about -10.4 to -11.9 (-ln of a 32k-150k vocabulary)")
    per_token = _per_token(ctx, shift.after)
    below_uniform = per_token is not None and per_token < (-math.log(vocab) if vocab else -10.4)
    token_text = (f"; per token that is {num(per_token)}, {'below' if below_uniform else 'against'} a uniform "
                  f"distribution's {uniform}") if per_token is not None else ""
    label = "preference accuracy" if ctx.book.get("pref_accuracy") is not None else "the margin"
    return [finding(
        "logps_chosen", "chosen_logps_collapse", "critical",
        f"the chosen completions' log-probability fell from {num(shift.before)} to {num(shift.after)} "
        f"({shift.after / shift.before:.1f}x, from about step {onset}){token_text} while {label} held up: the policy "
        "wins the comparison by making both answers unlikely, and what it generates degrades", [onset])]


def _per_token(ctx: Context, summed: float) -> float | None:
    """A summed log-prob per token, when the run logs completion lengths."""
    length = ctx.book.get("response_length_mean")
    if length is None or length.summary.now <= 0:
        return None
    return summed / length.summary.now
