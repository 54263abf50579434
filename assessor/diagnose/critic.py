"""The critic of PPO-style runs (GAE with a value model): has it learnt to predict the returns?

Explained variance is 1 - Var(returns - values) / Var(returns): 1 for a perfect critic, 0 for one that predicts
no better than a constant, negative for one that predicts worse. A healthy critic climbs above zero within its
first updates (or its warm-up); one that never does, and is not on its way there, hands the policy advantages
that are noise, so whatever the policy does afterwards is not learning from the reward. Zero is the line by
construction, not a tuned threshold.
"""

from __future__ import annotations

import numpy as np

from assessor.diagnose import robust
from assessor.diagnose.context import Context, finding, num
from assessor.diagnose.models import CriticDiagnosis, Finding
from assessor.diagnose.signals import Reading

MIN_POINTS = 20  # logged steps before a critic can be said never to have learnt
LEARNT = 0.2  # a best stretch explaining a fifth of the returns' variance: a critic that had learnt something
FALLEN = 0.5  # ... and has since lost at least half of the whole variance to explain: no slump of a good critic


def diagnose_critic(ctx: Context) -> CriticDiagnosis:
    """Read `value_explained_var` (verl `critic/vf_explained_var`, OpenRLHF and TRL PPO alike) when it is logged."""
    reading = ctx.book.get("value_explained_var")
    if reading is None:
        return CriticDiagnosis()
    values, steps = reading.series.values, reading.series.steps
    n = len(values)
    third = max(1, n // 3)
    recent = float(np.mean(values[-third:]))
    width = robust.stretch_width(n)
    best = float(np.max(robust.window_means(values, width))) if n >= width else float(np.max(values))
    out = CriticDiagnosis(explained_var_start=float(values[0]), explained_var_best=best,
                          explained_var_now=recent)
    # Climbing towards 0 is a critic learning (during a critic warm-up, say), not one that never will: over its
    # latest half it rose by at least what is left to 0, so at that pace it crosses within another half. (A critic
    # stuck near -0.2 creeps up by a fraction of that.)
    half = robust.trend(reading.series, int(steps[n // 2])) if n >= MIN_POINTS else None
    climbing = half is not None and half.direction == "rising" and half.change >= -reading.summary.now
    if n >= MIN_POINTS and best <= 0.0 and not climbing:
        out.findings.append(finding(
            "value_explained_var", "critic_not_learning", "warning",
            f"the critic has never learnt: value explained variance has stayed at or below 0 over all {n} logged "
            f"steps (best stretch {num(best)}, latest third {num(recent)}), so it predicts the returns no better "
            "than a constant and the advantages it gives the policy are noise (check the critic's learning rate, "
            "warm-up and value clipping)", [int(steps[0]), int(steps[-1])]))
    diverged = _diverged(reading, width)
    if diverged is not None:
        out.findings.append(diverged)
    return out


def _diverged(reading: Reading, width: int) -> Finding | None:
    """A critic that had learnt and now predicts the returns worse than a constant: it diverged.

    Its value estimates then hand the policy advantages that are worse than none, so the policy is taught against
    its reward from here on, whether or not the reward shows it yet: the weights from before the divergence are
    the ones to resume from (with a lower critic learning rate or tighter value clipping).
    """
    values, steps = reading.series.values, reading.series.steps
    n = len(values)
    if n < MIN_POINTS or n < 2 * width:
        return None
    means = robust.window_means(values, width)
    at_best = int(np.argmax(means))
    best, latest = float(means[at_best]), float(means[-1])
    if best < LEARNT or latest >= 0.0 or best - latest < FALLEN:
        return None
    # Dated by the centre of the first stretch whose mean fell below half the best for good (a stretch's start would
    # date it up to a stretch early; its end, as late).
    above = np.flatnonzero(means[at_best:] >= best / 2) + at_best
    onset = int(steps[min(n - 1, int(above[-1]) + 1 + width // 2)])
    return finding(
        "value_explained_var", "critic_diverged", "warning",
        f"the critic diverged: value explained variance reached {num(best)} (best stretch, around step "
        f"{int(steps[at_best + width // 2])}), began falling away at step {onset} and is below 0 now (latest "
        f"stretch {num(latest)}), so it predicts the returns worse than a constant and the policy is being taught by "
        "advantages worse than none",
        [onset, int(steps[-1])])
