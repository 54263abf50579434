"""DPO runs: learning the preferences, stuck at ln 2, or learning them while the chosen log-probs collapse."""

from __future__ import annotations

import math

import numpy as np

from assessor.evals.generate.model import VOCAB_SIZE, Ctx, Dpo, Scenario, Truth, constant_curve
from assessor.evals.generate.recipes.base import degrading_truth, healthy_truth, ramp, ramp_visible


def build_dpo_healthy(ctx: Ctx) -> Scenario:
    """DPO: margins up, accuracy up, loss down from ln 2."""
    t, n = ctx.t, ctx.n
    m_end = ctx.num("margin_to", 2.0 + 1.0 * ctx.lrng.random())
    margin = m_end * (1 - np.exp(-t / (0.35 * n)))
    margin[0] = 0.0
    lat = Dpo(margin=margin, spread=0.35 + 0.9 * margin, chosen_share=constant_curve(n, 0.15),
              grad=constant_curve(n, 9.0), noise=ctx.noise)
    return Scenario(lat, healthy_truth(
        f"The DPO loss falls from ln 2 = 0.693 as the reward margin grows (to ~{margin[-1]:.1f}) and preference "
        "accuracy climbs towards 0.8: the model is learning the preferences."))


def build_dpo_stuck(ctx: Ctx) -> Scenario:
    """DPO: loss stuck at ln 2, margins at zero, accuracy at chance."""
    n = ctx.n
    margin = constant_curve(n, 0.0008)
    margin[0] = 0.0
    lat = Dpo(margin=margin, spread=constant_curve(n, 0.004), chosen_share=constant_curve(n, 0.5),
              grad=constant_curve(n, 6.0), noise=ctx.noise)
    return Scenario(lat, Truth(
        ("stop",), "stop", 1, None, False,
        "The DPO loss has sat at ln 2 = 0.693 since step 1, reward margins stay at zero and preference accuracy at "
        "chance: nothing is being learnt (learning rate or beta too small, or the pairs are broken)."))


def build_dpo_logp_collapse(ctx: Ctx) -> Scenario:
    """DPO: preference accuracy keeps rising while the chosen log-probs collapse far below a uniform guess."""
    t, n = ctx.t, ctx.n
    m_end = ctx.num("margin_to", 2.5 + 1.0 * ctx.lrng.random())
    margin = m_end * (1 - np.exp(-t / (0.35 * n)))
    margin[0] = 0.0
    start = ctx.step_opt("onset", 0.45)
    width = 0.35 * n
    fall = ramp(t, start, width)
    tokens = ctx.num("tokens", 80.0)
    per_token_to = ctx.num("per_token_to", -20.0)  # nats per token of the chosen completion at the end
    reference = -260.0 / 330.0 * tokens
    drift = (per_token_to * tokens - reference) * fall
    uniform = math.log(VOCAB_SIZE)
    quality = margin / m_end - 0.6 * fall
    lat = Dpo(margin=margin, spread=0.35 + 0.9 * margin, chosen_share=constant_curve(n, 0.15),
              grad=9.0 * (1 + 2.0 * fall), noise=ctx.noise, drift=drift, tokens=tokens, quality=quality)
    onset = ramp_visible(start, width, 0.15)
    return Scenario(lat, degrading_truth(
        ctx, quality, onset,
        f"From about step {start} the chosen completions' log-probs fall from ~{reference:.0f} to "
        f"~{per_token_to * tokens:.0f} (about {per_token_to:.0f} nats per token over ~{tokens:.0f} tokens, far below "
        f"a uniform guess over the vocabulary, -ln {VOCAB_SIZE} = {-uniform:.1f}) while preference accuracy and "
        "the margin still rise: the model pushes both completions down, the rejected one faster (likelihood "
        "displacement); it is unlearning the answers it should prefer. Go back to before the collapse.",
        before=start,
    ))
