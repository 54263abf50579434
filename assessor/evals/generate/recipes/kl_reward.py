"""Healthy runs and the KL/reward patterns.

Still rising, seen early, the four KL/reward quadrants, converged, a one-step KL spike, a KL regime change and
a transient reward dip.
"""

from __future__ import annotations

import numpy as np

from assessor.evals.generate.model import Ctx, Scenario, Truth
from assessor.evals.generate.recipes.base import (
    base_run,
    degrading_truth,
    healthy_truth,
    peak_then_decline,
    ramp,
    ramp_visible,
    reward_words,
    rise_exp,
    stop_truth,
    with_components,
)


def build_healthy(ctx: Ctx) -> Scenario:
    """Reward still rising through realistic noise; nothing wrong."""
    lat = with_components(ctx, base_run(ctx))
    kl = "KL grows slowly" if ctx.beta > 0 else "no KL term is logged (beta = 0)"
    return Scenario(lat, healthy_truth(
        f"Reward (correctness {reward_words(lat.acc)}) is still rising through the batch noise, {kl}, entropy and "
        f"length drift gently; {ctx.n} of {ctx.planned} planned steps done, nothing has gone wrong."))


def build_early(ctx: Ctx) -> Scenario:
    """A run seen after a few percent of its planned steps: noisy, barely moved."""
    lat = with_components(ctx, base_run(ctx, n=ctx.planned)).head(ctx.n)
    share = 100 * ctx.n / ctx.planned
    return Scenario(lat, healthy_truth(
        f"Only {ctx.n} of {ctx.planned} planned steps ({share:.0f}%): the curves are mostly noise and nothing "
        "can be judged yet; a healthy start, keep training."))


def build_kl_up_reward_up(ctx: Ctx) -> Scenario:
    """KL rising with reward rising: changing and improving."""
    lat = base_run(ctx)
    t = ctx.t
    lat.kl = 0.0005 + ctx.num("kl_end", 0.09) * (t / ctx.n) ** 1.0
    return Scenario(lat, healthy_truth(
        f"KL climbs steadily (to ~{lat.kl[-1]:.2f}) and reward climbs with it ({reward_words(lat.acc)}): the policy "
        "is moving away from the reference and getting better, the healthy quadrant."))


def build_kl_stable_reward_up(ctx: Ctx) -> Scenario:
    """KL flat with reward rising: improving without drifting (strong KL penalty)."""
    lat = base_run(ctx)
    t = ctx.t
    lat.kl = 0.0003 + ctx.num("kl_level", 0.004) * (1 - np.exp(-t / (0.08 * ctx.n)))
    return Scenario(lat, healthy_truth(
        f"KL settles early at a low level (~{lat.kl[-1]:.3f}) while reward keeps rising ({reward_words(lat.acc)}): "
        "improvement without drift, the ideal quadrant."))


def build_kl_up_reward_flat(ctx: Ctx) -> Scenario:
    """KL rising while reward has been flat for a long stretch after an early rise."""
    lat = base_run(ctx)
    t, n = ctx.t, ctx.n
    plateau = ctx.step_opt("plateau", 0.35)
    a0, gain = float(lat.acc[0]), 0.3 + 0.08 * ctx.lrng.random()
    lat.acc = rise_exp(t, a0, gain, plateau / 3.0) - 0.01 * (t / n)
    lat.kl = 0.0005 + ctx.num("kl_end", 0.16) * (t / n) ** 1.3
    lat.entropy = lat.entropy * (1 - 0.25 * t / n)
    onset = min(n, plateau + int(0.1 * n))
    return Scenario(lat, stop_truth(
        onset,
        f"Reward rose until about step {plateau} and has been flat since, while KL keeps climbing (to "
        f"~{lat.kl[-1]:.2f}): the policy drifts without improving (and without a decline, so the weights now are "
        "as good as any earlier ones); the run has run its course.",
    ))


def build_kl_up_reward_down(ctx: Ctx) -> Scenario:
    """KL rising while reward falls after a peak: destructive drift."""
    lat = base_run(ctx)
    t, n = ctx.t, ctx.n
    peak = ctx.step_opt("onset", 0.5)
    width = 0.4 * n
    gain = 0.32 + 0.08 * ctx.lrng.random()
    lat.acc = peak_then_decline(t, float(lat.acc[0]), gain, peak, ctx.num("depth", 0.2), width)
    lat.kl = 0.0005 + 0.03 * (t / n) + ctx.num("kl_extra", 0.3) * ramp(t, peak, width) ** 1.5
    lat.entropy = lat.entropy * (1 + 0.6 * ramp(t, peak, width))
    onset = ramp_visible(peak, width, 0.2)
    return Scenario(lat, degrading_truth(
        ctx, lat.acc, onset,
        f"Reward peaked around step {peak} and has been falling since while KL accelerates (to ~{lat.kl[-1]:.2f}): "
        "the policy is getting worse and moving further from the reference.",
    ))


def build_kl_stable_reward_flat(ctx: Ctx) -> Scenario:
    """Converged: KL and reward both flat for most of the run."""
    lat = base_run(ctx)
    t, n = ctx.t, ctx.n
    tau = 0.08 * n
    lat.acc = rise_exp(t, float(lat.acc[0]), 0.3 + 0.1 * ctx.lrng.random(), tau)
    lat.kl = 0.0003 + 0.003 * (1 - np.exp(-t / tau))
    lat.entropy = float(lat.entropy[0]) * (1 - 0.15 * (1 - np.exp(-t / tau)))
    lat.length = float(lat.length[0]) * (1 + 0.1 * (1 - np.exp(-t / tau)))
    onset = min(n, int(3 * tau))
    return Scenario(lat, Truth(
        ("continue", "stop"), None, onset, None, False,
        f"Reward and KL have both been flat since about step {onset} (reward ~{lat.acc[-1]:.2f}): the run has "
        "converged; stopping saves compute, continuing is harmless, it depends on whether this level is enough."))


def build_kl_spike_transient(ctx: Ctx) -> Scenario:
    """A one-step KL outlier that recovers at once."""
    lat = base_run(ctx)
    at = ctx.step_opt("spike_at", 0.55)
    factor = ctx.num("factor", 25.0)
    lat.kl_events = [(at, factor)]
    lat.grad_events = [(at, 5.0)]
    return Scenario(lat, healthy_truth(
        f"KL jumps about {factor:.0f}x for a single step at step {at} (one odd batch) and is back on its trend "
        "at the next step; reward is unaffected and still rising: keep training."))


def build_kl_blowup(ctx: Ctx) -> Scenario:
    """KL jumps an order of magnitude and stays up (a regime change); reward falls."""
    lat = base_run(ctx)
    t, n = ctx.t, ctx.n
    jump = ctx.step_opt("onset", 0.6)
    up = ramp(t, jump - 2, 2.0)
    lat.kl = lat.kl * (1 + ctx.num("factor", 30.0) * up) + 0.4 * ramp(t, jump, 0.4 * n)
    lat.acc = lat.acc - 0.22 * ramp(t, jump, 0.25 * n)
    lat.entropy = lat.entropy * (1 + 0.8 * ramp(t, jump, 0.2 * n))
    lat.grad = lat.grad * (1 + 3 * up)
    return Scenario(lat, degrading_truth(
        ctx, lat.acc, jump,
        f"KL jumps more than an order of magnitude at step {jump} and never comes back (a regime change, not a "
        "spike), and reward falls from there.", before=jump - 1,
    ))


def build_transient_dip(ctx: Ctx) -> Scenario:
    """Reward dips for a short stretch and recovers fully."""
    lat = base_run(ctx)
    t, n = ctx.t, ctx.n
    at = ctx.step_opt("dip_at", 0.45)
    down, up = 0.04 * n, 0.09 * n
    bump = ramp(t, at - down, down) - ramp(t, at, up)
    lat.acc = lat.acc - ctx.num("depth", 0.2) * bump
    lat.entropy = lat.entropy * (1 + 0.2 * bump)
    lat.length = lat.length * (1 + 0.1 * bump)
    return Scenario(lat, healthy_truth(
        f"Reward dipped around step {at} and recovered fully within about {int(up)} steps, back on its rising "
        "trend; a transient, not a trend: keep training."))


def build_finished_plateau(ctx: Ctx) -> Scenario:
    """A run that reached its planned steps after a long plateau, with no decline: keep the final weights."""
    lat = base_run(ctx)
    t, n = ctx.t, ctx.n
    tau = ctx.num("tau_frac", 0.08) * n
    lat.acc = rise_exp(t, float(lat.acc[0]), 0.28 + 0.1 * ctx.lrng.random(), tau)
    lat.kl = 0.0004 + ctx.num("kl_level", 0.01) * (1 - np.exp(-t / tau))
    lat.entropy = float(lat.entropy[0]) * (1 - 0.15 * (1 - np.exp(-t / tau)))
    lat.length = float(lat.length[0]) * (1 + 0.1 * (1 - np.exp(-t / tau)))
    onset = min(n, int(3 * tau))
    return Scenario(lat, stop_truth(
        onset,
        f"The run has reached its planned {ctx.planned} steps and its reward has been flat since about step {onset} "
        f"(~{lat.acc[-1]:.2f}), without a decline: the final weights are as good as any earlier ones and more "
        "steps of the same recipe would not pay; keep the final weights (stop)."))


def build_finished_rising(ctx: Ctx) -> Scenario:
    """A healthy run that reached its planned steps still rising: extending it is worth it."""
    lat = with_components(ctx, base_run(ctx))
    t, n = ctx.t, ctx.n
    a0, gain = float(lat.acc[0]), float(lat.acc[-1] - lat.acc[0])
    tau = 2.0 * n  # nearly linear: the last quarter still adds about a fifth of the gain, visibly above the noise
    lat.acc = a0 + gain * np.log1p(t / tau) / np.log1p(n / tau)
    # Continue is the only right answer, but not `healthy` in the harness's sense: a run that has ended cannot be
    # wasted by a stop ("keep the final weights"); the miss is the extension it was worth, not the run.
    return Scenario(lat, Truth(
        ("continue",), "continue", None, None, False,
        f"The run has reached its planned {ctx.planned} steps with reward still rising ({reward_words(lat.acc)}) "
        "and nothing wrong: it ended while still improving, so extending it is worth it (continue)."))


def build_reward_hacking(ctx: Ctx) -> Scenario:
    """Over-optimisation: the reward-model score jumps while KL multiplies and the task metric falls."""
    lat = base_run(ctx)
    t, n = ctx.t, ctx.n
    hack = ctx.step_opt("onset", 0.5)
    width = ctx.num("width", 0.15) * n
    jump = ramp(t, hack, width)
    task = np.clip(0.92 * lat.acc + 0.02, 0.0, 1.0)  # what the policy can really do, before the hack
    lat.acc = np.minimum(0.97, lat.acc + ctx.num("jump", 0.35) * jump)
    factor = ctx.num("kl_factor", 10.0)
    lat.kl = lat.kl * (1 + (factor - 1) * jump)
    lat.entropy = lat.entropy * (1 - 0.35 * jump)
    lat.eval_quality = task - ctx.num("depth", 0.25) * ramp(t, hack, 0.35 * n)
    onset = ramp_visible(hack, width, 0.2)
    return Scenario(lat, degrading_truth(
        ctx, lat.eval_quality, onset,
        f"From about step {hack} the reward-model score jumps (to ~{lat.acc[-1]:.2f}) while KL multiplies "
        f"(about {factor:.0f}x, to ~{lat.kl[-1]:.2f}) and the held-out task accuracy falls: the reward bought per "
        "nat of KL has collapsed and the policy is exploiting the reward model, not solving the task. Go back "
        "to before the hacking began.", before=hack,
    ))
