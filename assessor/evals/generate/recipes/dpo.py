"""DPO runs: learning the preferences, or stuck at ln 2."""

from __future__ import annotations

import numpy as np

from assessor.evals.generate.model import Ctx, Dpo, Scenario, Truth, constant_curve
from assessor.evals.generate.recipes.base import healthy_truth


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
