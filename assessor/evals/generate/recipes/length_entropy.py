"""Entropy, completion length and ratio clipping.

Entropy collapse and blow-up; completion length collapsing, exploding or splitting into two modes; truncation
at the cap; high-side ratio clipping as the policy sharpens onto a narrow mode.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from assessor.evals.generate.model import VOCAB_SIZE, Ctx, Scenario, constant_curve
from assessor.evals.generate.recipes.base import (
    base_run,
    decline_onset,
    degrading_truth,
    healthy_truth,
    peak_then_decline,
    ramp,
    ramp_visible,
    reward_words,
    rise_exp,
    scored,
    truncated_share,
)


def build_entropy_collapse(ctx: Ctx) -> Scenario:
    """Entropy collapses towards 0; groups become uniform and reward turns down."""
    lat = base_run(ctx)
    t, n = ctx.t, ctx.n
    start = ctx.step_opt("onset", 0.45)
    width = 0.12 * n
    collapse = ramp(t, start, width)
    lat.entropy = lat.entropy * (1 - 0.95 * collapse)
    lat.difficulty = 1.7 + 1.3 * collapse
    lat.length_sigma = 0.42 - 0.34 * collapse
    lat.acc = peak_then_decline(t, float(lat.acc[0]), 0.3, start, ctx.num("depth", 0.17), 0.3 * n)
    lat.kl = lat.kl + 0.06 * ramp(t, start, 0.3 * n)
    onset = ramp_visible(start, width, 0.25)
    return Scenario(lat, degrading_truth(
        ctx, lat.acc, onset,
        f"Entropy collapses from about step {start} (to ~{lat.entropy[-1]:.2f}), completions of a prompt become "
        "identical (zero-std groups up, length spread gone) and reward turns down: exploration has died.",
    ))


def build_entropy_blowup(ctx: Ctx) -> Scenario:
    """Entropy shoots up towards ln(vocab); output turns to noise and hits the length cap."""
    lat = base_run(ctx)
    t, n = ctx.t, ctx.n
    start = ctx.step_opt("onset", 0.55)
    width = 0.15 * n
    blow = ramp(t, start, width)
    target = ctx.num("entropy_to", 0.7 * math.log(VOCAB_SIZE))
    lat.entropy = lat.entropy + (target - lat.entropy) * blow
    lat.length = np.exp(np.log(lat.length) + (math.log(1.4 * lat.cap) - np.log(lat.length)) * blow)
    lat.acc = lat.acc * (1 - 0.93 * blow)
    lat.kl = lat.kl + 2.0 * blow
    lat.grad = lat.grad * (1 + 4 * blow)
    onset = ramp_visible(start, width, 0.15)
    return Scenario(lat, degrading_truth(
        ctx, lat.acc, onset,
        f"From about step {start} entropy climbs towards ln(vocab) = {math.log(VOCAB_SIZE):.1f} (to "
        f"~{lat.entropy[-1]:.1f}), completions run to the length cap and reward collapses: the output is noise.",
    ))


def build_length_collapse(ctx: Ctx) -> Scenario:
    """Completions shrink to a few tokens."""
    lat = base_run(ctx)
    t, n = ctx.t, ctx.n
    start = ctx.step_opt("onset", 0.5)
    width = 0.15 * n
    shrink = ramp(t, start, width)
    lat.length = np.exp(np.log(lat.length) + (math.log(ctx.num("length_to", 6.0)) - np.log(lat.length)) * shrink)
    lat.length_sigma = 0.42 - 0.2 * shrink
    lat.acc = lat.acc - (lat.acc - 0.04) * 0.9 * shrink
    lat.entropy = lat.entropy * (1 - 0.6 * shrink)
    onset = ramp_visible(start, width, 0.2)
    return Scenario(lat, degrading_truth(
        ctx, lat.acc, onset,
        f"From about step {start} completions shrink to a few tokens (mean length ~{lat.length[-1]:.0f}) and "
        "reward falls with them: the model found a short-answer shortcut instead of reasoning.",
    ))


def build_length_explosion(ctx: Ctx) -> Scenario:
    """Completions grow until they hit the cap; truncated answers score nothing."""
    lat = base_run(ctx)
    t, n = ctx.t, ctx.n
    start = ctx.step_opt("onset", 0.45)
    width = 0.3 * n
    grow = ramp(t, start, width)
    lat.length = np.exp(np.log(lat.length) + (math.log(1.5 * lat.cap) - np.log(lat.length)) * grow)
    lat.acc = lat.acc - 0.15 * grow
    lat.entropy = lat.entropy * (1 + 0.5 * grow)
    quality = scored(lat)
    onset = decline_onset(quality, int(np.argmax(quality[: max(start + 1, int(0.9 * n))])) + 1)
    return Scenario(lat, degrading_truth(
        ctx, quality, onset,
        f"From about step {start} completion length climbs to the {lat.cap}-token cap, the clipped ratio rises "
        "towards 1 and reward falls as truncated answers score nothing: length hacking.",
    ))


def build_length_bimodal(ctx: Ctx) -> Scenario:
    """Lengths split into very short and very long modes while the mean stays put."""
    lat = base_run(ctx)
    t, n = ctx.t, ctx.n
    start = ctx.step_opt("onset", 0.45)
    width = 0.2 * n
    split = ramp(t, start, width)
    share = 0.4 * split
    lat.short_frac = share
    lat.short_len = 7.0
    mean0 = lat.length * np.exp(0.42**2 / 2)
    sigma = 0.42 + 0.3 * split
    long_mean = (mean0 - lat.short_len * share) / (1 - share)
    lat.length = long_mean / np.exp(sigma**2 / 2)
    lat.length_sigma = sigma
    lat.acc = peak_then_decline(t, float(lat.acc[0]), 0.3, start, ctx.num("depth", 0.13), 0.4 * n)
    onset = ramp_visible(start, width, 0.25)
    return Scenario(lat, degrading_truth(
        ctx, lat.acc, onset,
        f"From about step {start} lengths split into very short and very long completions (min near a few tokens, "
        "max at the cap) while the mean stays flat, and reward drifts down: extremes are being rewarded.",
    ))


def build_truncation(ctx: Ctx) -> Scenario:
    """The completion cap is too small: many completions are cut off and reward stalls."""
    lat = base_run(ctx)
    t, n = ctx.t, ctx.n
    cap = lat.cap
    grow = ramp(t, 0.0, 0.3 * n)
    lat.length = cap * (0.45 + 0.45 * grow)
    lat.length_sigma = constant_curve(n, 0.45)
    lat.acc = rise_exp(t, float(lat.acc[0]), 0.12, 0.1 * n)
    clipped = truncated_share(lat)
    onset = int(np.argmax(clipped >= 0.2)) + 1 if (clipped >= 0.2).any() else 1
    truth = degrading_truth(
        ctx, scored(lat), onset,
        f"From about step {onset} a fifth and more of the completions are cut at the {cap}-token cap (clipped ratio "
        f"~{clipped[-1]:.2f}, mean length far above the mean terminated length) and the reward the run shows has "
        "sagged since, because truncated answers score nothing while correctness itself still rose: the cap is too "
        "small for the task. Stop and raise max_completion_length (the weights now answer well when they may "
        "finish); going back to before the truncation bit is right too.", also_stop=True)
    return Scenario(lat, replace(truth, preferred="stop"))


def build_clip_asymmetry(ctx: Ctx) -> Scenario:
    """High-side ratio clipping dominates (the policy sharpening onto a narrow mode)."""
    lat = base_run(ctx)
    t, n = ctx.t, ctx.n
    if ctx.opt("benign", False):
        lat.clip_low = constant_curve(n, 0.003) * (1 + 0.3 * t / n)
        lat.clip_high = 0.012 + 0.008 * t / n
        return Scenario(lat, healthy_truth(
            "High-side clipping is a few times the low side throughout (the policy is firming up preferences it "
            f"already had) but reward keeps rising ({reward_words(lat.acc)}) and entropy declines slowly: healthy."))
    start = ctx.step_opt("onset", 0.45)
    width = 0.15 * n
    grow = ramp(t, start, width)
    lat.clip_low = constant_curve(n, 0.002)
    lat.clip_high = 0.003 + ctx.num("clip_to", 0.12) * grow
    lat.entropy = lat.entropy * (1 - 0.75 * grow)
    lat.difficulty = 1.7 + 0.8 * grow
    lat.acc = peak_then_decline(t, float(lat.acc[0]), 0.3, start, ctx.num("depth", 0.16), 0.35 * n)
    onset = ramp_visible(start, width, 0.2)
    return Scenario(lat, degrading_truth(
        ctx, lat.acc, onset,
        f"From about step {start} the high-side clip fraction climbs (to ~{lat.clip_high[-1]:.2f}) far above the low "
        "side while entropy falls and reward turns down: the policy is collapsing onto a narrow mode.",
    ))
