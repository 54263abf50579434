"""The simulation: per-step observations drawn from a recipe's clean curves, and the launches of a run.

The GRPO simulation draws every completion of every step: prompt difficulties, binary correctness (and a
format reward when the recipe has one), completion lengths with truncation at the cap (a truncated completion
scores 0), so reward means are multiples of 1/batch, `frac_reward_zero_std` counts groups whose completions all
scored the same, and mean/terminated lengths and the clipped ratio agree. The other signals get autocorrelated
AR(1) noise and occasional one-step spikes. A resumed run is two launches (`Attempt`), the second repeating the
steps between the checkpoint and the crash.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from assessor.evals.generate.model import Array, Ctx, Dpo, Grpo, Latent, batch_shape, constant_curve, seeded_rng
from assessor.evals.generate.numeric import ar1_filter, expit, logit


def _ar1(rng: np.random.Generator, n: int, phi: float, scale: float) -> Array:
    """AR(1) noise with stationary standard deviation `scale` (batch-to-batch drift)."""
    shocks = rng.standard_normal(n) * scale * math.sqrt(max(1e-9, 1 - phi * phi))
    return ar1_filter(shocks, phi)


def _lr(ctx: Ctx, n: int) -> Array:
    t = np.arange(1, n + 1, dtype=np.float64)
    base = ctx.num("learning_rate", {"trl": 1e-6, "verl": 1e-6, "rfs": 1e-5}[ctx.framework])
    if ctx.framework == "verl":
        return constant_curve(n, base)
    warm = max(1.0, 0.05 * ctx.planned)
    return np.asarray(base * np.minimum(1.0, t / warm) * np.clip(1 - (t - warm) / (ctx.planned - warm + 1), 0.0, 1.0),
                      dtype=np.float64)


def simulate_grpo(ctx: Ctx, lat: Grpo, rng: np.random.Generator) -> dict[str, Array]:
    """Per-step observations drawn completion by completion (index i is step i + 1).

    Returns:
        Arrays under internal names (`reward`, `reward_std`, `zero_std`, `acc_mean`, `len_mean`, `kl`, ...).
    """
    n = len(lat.acc)
    prompts, group = batch_shape(ctx)
    noise = lat.noise
    drift = _ar1(rng, n, 0.85, 0.12 * noise)
    base_logit = logit(np.clip(lat.acc, 1e-5, 1 - 1e-5)) + drift
    offsets = rng.standard_normal((n, prompts)) * lat.difficulty[:, None]
    q = expit(base_logit[:, None] + offsets)
    correct = rng.random((n, prompts, group)) < q[:, :, None]
    median = lat.length * np.exp(_ar1(rng, n, 0.8, 0.05 * noise))
    lengths = median[:, None, None] * np.exp(lat.length_sigma[:, None, None] * rng.standard_normal((n, prompts, group)))
    if lat.short_frac is not None:
        short = rng.random((n, prompts, group)) < lat.short_frac[:, None, None]
        lengths = np.where(short, lat.short_len * np.exp(0.35 * rng.standard_normal((n, prompts, group))), lengths)
    lengths = np.clip(np.rint(lengths), 1, lat.cap)
    truncated = lengths >= lat.cap
    correct &= ~truncated
    correct &= (lat.acc > 0)[:, None, None]  # a reward pinned at its floor: not one completion scores
    acc_reward = correct.astype(np.float64)
    total = acc_reward
    fmt_reward: npt.NDArray[np.float64] | None = None
    if lat.fmt is not None:
        wobble = _ar1(rng, n, 0.8, 0.1 * noise)
        pf = np.where(lat.fmt >= 1.0, 1.0, expit(logit(np.clip(lat.fmt, 1e-5, 1 - 1e-5)) + wobble))
        fmt_ok = (rng.random((n, prompts, group)) < pf[:, None, None]) & ~truncated
        fmt_reward = fmt_ok.astype(np.float64)
        total = acc_reward + fmt_reward
    if lat.identical is not None:
        acc_reward = np.full_like(acc_reward, lat.identical)
        total = acc_reward
        fmt_reward = None
    flat = total.reshape(n, -1)
    obs: dict[str, Array] = {
        "reward": flat.mean(axis=1),
        "reward_std": flat.std(axis=1, ddof=1),
        "reward_max": flat.max(axis=1),
        "reward_min": flat.min(axis=1),
        "zero_std": (total.max(axis=2) == total.min(axis=2)).mean(axis=1).astype(np.float64),
        "acc_mean": acc_reward.reshape(n, -1).mean(axis=1),
        "acc_std": acc_reward.reshape(n, -1).std(axis=1, ddof=1),
    }
    if fmt_reward is not None:
        obs["fmt_mean"] = fmt_reward.reshape(n, -1).mean(axis=1)
        obs["fmt_std"] = fmt_reward.reshape(n, -1).std(axis=1, ddof=1)
    group_std = total.std(axis=2)
    obs["adv_std"] = (group_std / (group_std + 1e-4)).mean(axis=1)
    flat_len = lengths.reshape(n, -1)
    flat_trunc = truncated.reshape(n, -1)
    done = ~flat_trunc
    obs["len_mean"] = flat_len.mean(axis=1)
    obs["len_min"] = flat_len.min(axis=1)
    obs["len_max"] = flat_len.max(axis=1)
    obs["clipped"] = flat_trunc.mean(axis=1)
    any_done = done.any(axis=1)
    obs["term_mean"] = np.where(any_done, (flat_len * done).sum(axis=1) / np.maximum(done.sum(axis=1), 1), 0.0)
    obs["term_min"] = np.where(any_done, np.where(done, flat_len, np.inf).min(axis=1), 0.0)
    obs["term_max"] = np.where(any_done, np.where(done, flat_len, -np.inf).max(axis=1), 0.0)
    obs["tokens"] = flat_len.sum(axis=1) + prompts * group * ctx.num("prompt_length", 180.0)

    kl = lat.kl * np.exp(_ar1(rng, n, 0.7, 0.15 * noise)) * (1 + 0.03 * rng.standard_normal(n))
    kl_spikes = rng.random(n) < 0.006
    kl = np.where(kl_spikes, kl * rng.uniform(1.8, 3.0, n), kl)
    for step, factor in lat.kl_events:
        kl[step - 1] *= factor
    obs["kl"] = np.maximum(kl, 0.0)
    obs["entropy"] = lat.entropy * np.exp(_ar1(rng, n, 0.7, 0.05 * noise))
    # Zero-spread groups carry no advantage: the gradient shrinks with the share of them.
    jitter = np.exp(0.22 * rng.standard_normal(n) + _ar1(rng, n, 0.6, 0.12 * noise))
    grad = lat.grad * (0.25 + 0.75 * (1 - obs["zero_std"])) * jitter
    grad_spikes = rng.random(n) < 0.01
    grad = np.where(grad_spikes, grad * rng.uniform(2.5, 6.0, n), grad)
    for step, factor in lat.grad_events:
        grad[step - 1] *= factor
    obs["grad_norm"] = grad
    obs["clip_low"] = lat.clip_low * np.exp(0.3 * rng.standard_normal(n))
    obs["clip_high"] = lat.clip_high * np.exp(0.3 * rng.standard_normal(n))
    obs["clip_high_max"] = obs["clip_high"] * rng.uniform(2.0, 4.0, n)
    pg_noise = _ar1(rng, n, lat.pg_phi, 1.0)
    obs["pg"] = lat.pg_mean + lat.pg_scale * pg_noise
    obs["lr"] = _lr(ctx, n)
    obs["ppo_kl"] = (obs["clip_low"] + obs["clip_high"]) * 0.05 * rng.standard_normal(n)

    # Step time grows with the tokens generated; generation takes `gen_share` of it.
    scale = {"trl": 0.012, "verl": 0.05, "rfs": 0.02}[ctx.framework]
    base_time = {"trl": 6.0, "verl": 30.0, "rfs": 3.0}[ctx.framework]
    core = (base_time + scale * obs["len_mean"] * group * max(1, prompts) ** 0.5 / 4)
    core = core * np.exp(0.05 * rng.standard_normal(n))
    gen = lat.gen_share * core * np.exp(0.03 * rng.standard_normal(n))
    obs["time_gen"] = gen
    obs["time_rest"] = core * (1 - lat.gen_share)
    obs["step_time"] = gen + obs["time_rest"]

    # A step whose groups all scored alike has zero advantages: the policy-gradient loss is exactly 0 and nothing
    # is clipped; without a KL term there is no gradient at all (TRL logs loss 0.0 and grad_norm 0.0).
    dead = obs["zero_std"] >= 1.0
    for key in ("pg", "clip_low", "clip_high", "clip_high_max", "ppo_kl"):
        obs[key] = np.where(dead, 0.0, obs[key])
    if ctx.beta <= 0:
        obs["grad_norm"] = np.where(dead, 0.0, obs["grad_norm"])
    if lat.identical is not None:  # no reward spread: zero advantages, zero gradient (the policy never moves)
        for key in ("pg", "grad_norm", "clip_low", "clip_high", "clip_high_max", "kl", "ppo_kl", "adv_std"):
            obs[key] = np.zeros(n)
    if lat.nan_from is not None:
        dead = np.arange(1, n + 1) >= lat.nan_from
        for key in ("pg", "grad_norm", "kl", "entropy", "ppo_kl", "clip_low", "clip_high", "clip_high_max"):
            obs[key] = np.where(dead, np.nan, obs[key])
    return obs


def _eval_points(ctx: Ctx, lat: Latent, rng: np.random.Generator) -> dict[int, float]:
    """Held-out accuracy measured on a 500-question set at each evaluation step.

    One draw per step of the run (step 0 included), whichever steps a framework evaluates at: the same step
    scores the same in every format (verl adds a step-0 evaluation, the book one at step 1).
    """
    every = ctx.eval_every
    if every <= 0 or not isinstance(lat, Grpo):
        return {}
    quality = lat.eval_quality if lat.eval_quality is not None else np.clip(0.92 * lat.acc + 0.02, 0.0, 1.0)
    steps = list(range(every, len(quality) + 1, every))
    if ctx.framework in ("verl", "rfs"):
        steps = [0 if ctx.framework == "verl" else 1, *steps]
    size = int(ctx.opt("eval_size", 500))
    p_all = np.clip(np.concatenate([quality[:1], quality]), 0.0, 1.0)  # index = step
    scores = rng.binomial(size, p_all)
    out: dict[int, float] = {step: float(scores[step]) / size for step in steps}
    if lat.eval_identical and out:  # a broken eval (cached generations, a constant scorer): one number every time
        out = dict.fromkeys(out, round(float(np.clip(quality[0], 0.0, 1.0)) * size) / size)
    return out


def simulate_dpo(ctx: Ctx, lat: Dpo, rng: np.random.Generator) -> dict[str, Array]:
    """Per-step DPO observations from a small batch of preference pairs."""
    n = len(lat.margin)
    pairs = int(ctx.opt("pairs", 8))
    margins = lat.margin[:, None] + lat.spread[:, None] * rng.standard_normal((n, pairs))
    margins[0] = 0.0  # step 1: the policy is the reference
    wobble = 0.05 * lat.spread[:, None] * rng.standard_normal((n, pairs))
    beta = ctx.num("dpo_beta", 0.1)
    chosen = lat.chosen_share[:, None] * margins - 0.1 * lat.margin[:, None] + wobble
    if lat.drift is not None:  # both log-probs fall together; the margin (and the accuracy) is unaffected
        chosen = chosen + beta * lat.drift[:, None] * np.exp(0.05 * rng.standard_normal((n, pairs)))
    chosen[0] = 0.0
    rejected = chosen - margins
    scale = lat.tokens / 330.0
    ref_chosen = scale * (-260 + 70 * rng.standard_normal((n, pairs)))
    ref_rejected = scale * (-300 + 80 * rng.standard_normal((n, pairs)))
    obs: dict[str, Array] = {
        "loss": np.log1p(np.exp(-margins)).mean(axis=1),
        "margins": margins.mean(axis=1),
        "accuracies": (margins > 0).mean(axis=1).astype(np.float64),
        "chosen": chosen.mean(axis=1),
        "rejected": rejected.mean(axis=1),
        "logps_chosen": (ref_chosen + chosen / beta).mean(axis=1),
        "logps_rejected": (ref_rejected + rejected / beta).mean(axis=1),
        "logits_chosen": -2.3 + 0.25 * rng.standard_normal(n),
        "logits_rejected": -2.45 + 0.25 * rng.standard_normal(n),
        "entropy": 1.25 - 0.05 * lat.margin / max(1.0, float(lat.margin.max())) + 0.06 * rng.standard_normal(n),
        "token_acc": 0.64 + 0.02 * rng.standard_normal(n),
        "tokens": np.cumsum(np.rint(pairs * 2 * lat.tokens * (1 + 0.18 * rng.standard_normal(n)))),
        "grad_norm": lat.grad * np.exp(0.35 * rng.standard_normal(n)),
        "lr": _lr(ctx, n) * 5,
    }
    return obs


@dataclass
class Attempt:
    """The rows one launch of the run logged (a resumed run has two)."""

    first: int
    last: int
    obs: dict[str, Array]
    evals: dict[int, float]
    hours: float = 0.0


def _simulate(ctx: Ctx, lat: Latent, rng: np.random.Generator) -> dict[str, Array]:
    return simulate_dpo(ctx, lat, rng) if isinstance(lat, Dpo) else simulate_grpo(ctx, lat, rng)


def simulate_attempts(ctx: Ctx, lat: Latent) -> list[Attempt]:
    """One launch, or two when the run crashed and was resumed (the second repeats the overlap)."""
    obs = _simulate(ctx, lat, ctx.rng)
    evals = _eval_points(ctx, lat, seeded_rng(ctx.spec, 4))
    resume = ctx.resume()
    if resume is None:
        return [Attempt(1, ctx.n, obs, evals)]
    at, crash = resume
    crashed_rng = seeded_rng(ctx.spec, 3)
    before = _simulate(ctx, lat, crashed_rng)
    before_evals = _eval_points(ctx, lat, seeded_rng(ctx.spec, 5))
    # The first launch logged steps up to the crash; its first `at` steps are the ones the resume restored.
    for key, values in before.items():
        values[:at] = obs[key][:at]
    before_evals = {s: (evals[s] if s <= at and s in evals else v) for s, v in before_evals.items() if s <= crash}
    return [Attempt(1, crash, before, before_evals), Attempt(at + 1, ctx.n, obs, evals, hours=2.5)]
