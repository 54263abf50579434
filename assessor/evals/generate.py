"""Synthetic RL post-training runs with a known right answer, written in the frameworks' real on-disk formats.

A *recipe* (`PATTERNS[name]`) describes one pattern a practitioner recognises (the KL/reward quadrants,
entropy collapse, length explosion, a held-out eval peaking, a resumed run with duplicate steps, ...). It
builds the run's clean latent curves and states its own ground truth (`Truth`: the decisions a careful
practitioner would accept, the onset, the steps a rollback may target). `write_run` then simulates the
run from those curves and writes it the way the framework would:

* the GRPO simulation draws every completion of every step: prompt difficulties, binary correctness
  (and a format reward when the recipe has one), completion lengths with truncation at the cap (a truncated
  completion scores 0), so reward means are multiples of 1/batch, `frac_reward_zero_std` counts groups
  whose completions all scored the same, and mean/terminated lengths and the clipped ratio agree;
* the other signals get autocorrelated AR(1) noise and occasional one-step spikes;
* TRL averages every value since the last log (grad norm and learning rate are the last step's), verl and
  reasoning-from-scratch log every step; NaN is written as each format writes it (bare `NaN` in HF JSON,
  `null` in verl JSONL, `nan` / `np.float64(nan)` in consoles, float NaN in TensorBoard).

Formats (`Generated.format`): `trl_state` (checkpoint folders with `trainer_state.json` and
`training_args.bin`, or a top-level state with `training_args.json`), `trl_live` (only the checkpoints the
save limit kept, the newest state stopping at its step, TensorBoard events under `runs/` running ahead,
optionally an nvidia-smi log), `tensorboard` (TRL `train/` tags, or verl's bare tags with
`options.framework: verl`), `jsonl` (verl's file logger plus the hydra config), `verl_console` (Ray
prefixes, ANSI colours, `np.float64(...)` wrappers), `trl_console` (printed dicts between tqdm redraws)
and `csv` (reasoning-from-scratch per-step CSV, CRLF, `eval_acc` in percent every N steps).

Everything is a pure function of (pattern, format, seed, steps, logging_steps, options), so the same
spec always writes the same bytes, and `generate_all` caches runs under a hash of the spec and
`GENERATOR_VERSION`. `python -m assessor.evals.generate evals/synthetic.yaml` rewrites the labelled case
file from `case_plan()`, taking every label from the recipes' ground truth.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import pickle
import re
import shutil
import sys
import tempfile
import types
import zipfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
import yaml
from scipy.signal import lfilter
from scipy.special import expit, logit
from scipy.stats import norm

from assessor.errors import ConfigError
from assessor.evals.cases import Case, Generated
from assessor.judge.models import Decision

GENERATOR_VERSION = "1"

Array = npt.NDArray[np.float64]
Row = dict[str, Any]
Format = Literal["trl_state", "trl_live", "tensorboard", "jsonl", "verl_console", "trl_console", "csv"]
FORMATS: tuple[Format, ...] = (
    "trl_state", "trl_live", "tensorboard", "jsonl", "verl_console", "trl_console", "csv",
)
GRPO_FORMATS: tuple[Format, ...] = FORMATS

VOCAB_SIZE = 151936  # Qwen2.5 / Qwen3 tokenizers: entropy cannot exceed ln(151936) = 11.93 nats
_START = datetime(2026, 11, 20, 9, 14, 3)  # local wall clock of the fictional runs (nvidia-smi stamps)
_START_TS = datetime(2026, 11, 20, 9, 14, 3, tzinfo=UTC).timestamp()  # epoch seconds, independent of the TZ
_HOST = "gpu-node-7"


# ====================================================================================== ground truth
@dataclass(frozen=True)
class Truth:
    """The right answer for one generated run, as the recipe knows it.

    Attributes:
        accept: every decision a careful practitioner would accept.
        preferred: the single best decision, or None when several are equally right.
        onset_step: first step where the problem is visible (None for a healthy run).
        rollback_window: inclusive steps a rollback may target; any checkpoint inside is right.
        healthy: stopping this run would be the costly mistake.
        reasoning: one or two sentences: what the curves show.
    """

    accept: tuple[Decision, ...]
    preferred: Decision | None
    onset_step: int | None
    rollback_window: tuple[int, int] | None
    healthy: bool
    reasoning: str


# ====================================================================================== latent curves
@dataclass
class Grpo:
    """Clean per-step curves of a GRPO-style run (index i is step i + 1); the simulation adds the noise."""

    acc: Array  # success probability of a median-difficulty prompt (correctness reward)
    kl: Array  # per-token KL to the reference (logged only when the run has a KL term)
    entropy: Array  # mean token entropy (nats)
    length: Array  # median completion length in tokens, before the cap
    length_sigma: Array  # log-normal spread of completion lengths
    difficulty: Array  # sd of per-prompt logit offsets: larger means more all-right / all-wrong groups
    clip_low: Array  # ratio clipped below (0 when fully on-policy)
    clip_high: Array
    pg_mean: Array  # policy-gradient loss level and scale
    pg_scale: Array
    grad: Array  # gradient-norm level
    cap: int  # max completion length
    fmt: Array | None = None  # format-compliance probability (a second reward function), if any
    short_frac: Array | None = None  # share of completions in a very short mode (bimodal lengths)
    short_len: float = 8.0
    eval_quality: Array | None = None  # held-out accuracy; derived from `acc` when None
    nan_from: int | None = None  # first step whose loss / grad norm is NaN
    kl_events: list[tuple[int, float]] = field(default_factory=list)  # one-step multiplicative outliers
    grad_events: list[tuple[int, float]] = field(default_factory=list)
    identical: float | None = None  # setup failure: every completion gets exactly this reward
    gen_share: float = 0.55  # generation share of the step time
    pg_phi: float = 0.3  # autocorrelation of the pg-loss noise (negative: oscillating)
    noise: float = 1.0

    def head(self, n: int) -> Grpo:
        """The first `n` steps of the curves (a run seen early)."""
        out = replace(self)
        for name, value in vars(self).items():
            if isinstance(value, np.ndarray):
                setattr(out, name, value[:n].copy())
        return out


@dataclass
class Dpo:
    """Clean per-step curves of a DPO run."""

    margin: Array  # mean implicit-reward margin (chosen - rejected)
    spread: Array  # sd of per-pair margins
    chosen_share: Array  # part of the margin carried by the chosen reward (the rest by the rejected one)
    grad: Array
    noise: float = 1.0


Latent = Grpo | Dpo


@dataclass
class Scenario:
    """A recipe's output: the clean curves and the right answer."""

    latent: Latent
    truth: Truth


# ====================================================================================== context
@dataclass
class Ctx:
    """Everything a recipe and a writer need to know about one spec."""

    spec: Generated
    recipe: Recipe
    n: int
    framework: str  # trl | verl | rfs
    planned: int
    checkpoints: list[int]
    all_saves: list[int]  # every save step, before the save limit deleted the old ones
    lrng: np.random.Generator  # latent parameters
    rng: np.random.Generator  # simulation noise

    @property
    def t(self) -> Array:
        """Steps 1..n as floats."""
        return np.arange(1, self.n + 1, dtype=np.float64)

    def opt(self, name: str, default: Any) -> Any:
        """An option of the spec, or the default."""
        return self.spec.options.get(name, default)

    def num(self, name: str, default: float) -> float:
        """A numeric option."""
        return float(self.spec.options.get(name, default))

    def step_opt(self, name: str, default_frac: float) -> int:
        """A step option: values up to 1.0 are fractions of the steps reached, larger ones are steps."""
        value = float(self.spec.options.get(name, default_frac))
        step = value * self.n if value <= 1.0 else value
        return int(min(max(round(step), 1), self.n))

    @property
    def beta(self) -> float:
        """KL coefficient in TRL units (verl's kl_loss_coef and the book's kl_coeff are beta / 40)."""
        return self.num("beta", self.recipe.beta)

    @property
    def noise(self) -> float:
        """Noise multiplier: low / medium / high or a number."""
        value = self.spec.options.get("noise", "medium")
        levels = {"low": 0.6, "medium": 1.0, "high": 1.7}
        return levels[value] if isinstance(value, str) and value in levels else float(value)

    @property
    def eval_every(self) -> int:
        """Steps between held-out evaluations (0: none)."""
        return int(self.spec.options.get("eval_every", self.recipe.eval_every(self)))

    def resume(self) -> tuple[int, int] | None:
        """(checkpoint resumed from, step the first attempt crashed at), or None for an uninterrupted run."""
        if "resume_at" not in self.spec.options and not self.recipe.resumes:
            return None
        saves = self.all_saves or [max(1, self.n // 2)]
        default_at = min(saves, key=lambda s: abs(s - 0.55 * self.n))
        at = int(self.spec.options.get("resume_at", default_at))
        gap = saves[1] - saves[0] if len(saves) > 1 else max(10, self.n // 10)
        crash = int(self.spec.options.get("crash_at", at + max(3, int(0.6 * gap))))
        if not 0 < at < crash < self.n:
            raise ConfigError(f"resume_at {at} and crash_at {crash} must satisfy 0 < resume_at < crash_at < steps")
        return at, crash


# ====================================================================================== small helpers
def _ar1(rng: np.random.Generator, n: int, phi: float, scale: float) -> Array:
    """AR(1) noise with stationary standard deviation `scale` (batch-to-batch drift)."""
    shocks = rng.standard_normal(n) * scale * math.sqrt(max(1e-9, 1 - phi * phi))
    out = lfilter([1.0], [1.0, -phi], shocks)
    return np.asarray(out, dtype=np.float64)


def _ramp(t: Array, start: float, width: float) -> Array:
    """0 before `start`, a smoothstep to 1 over `width` steps."""
    x = np.clip((t - start) / max(width, 1e-9), 0.0, 1.0)
    return np.asarray(x * x * (3 - 2 * x), dtype=np.float64)


def _ramp_visible(start: float, width: float, level: float = 0.2) -> int:
    """Step at which a `_ramp(start, width)` has done `level` of its change."""
    x = 0.5 - math.sin(math.asin(1 - 2 * level) / 3)  # inverse of 3x^2 - 2x^3
    return math.ceil(start + x * width)


def _nice(x: float) -> int:
    """The largest round number (1, 2, 5, 10, 20, 25, 50, ...) not above x (at least 1)."""
    choices = [1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 2500, 5000]
    return max([c for c in choices if c <= x] or [1])


def _crc(text: str) -> int:
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "little")


def _full(n: int, value: float) -> Array:
    return np.full(n, value, dtype=np.float64)


def _rise_log(t: Array, n: int, a0: float, gain: float, tau: float) -> Array:
    """Decelerating but never-flat growth: a0 at the start, a0 + gain at step n."""
    return np.asarray(a0 + gain * np.log1p(t / tau) / math.log1p(n / tau), dtype=np.float64)


def _rise_exp(t: Array, a0: float, gain: float, tau: float) -> Array:
    return np.asarray(a0 + gain * (1 - np.exp(-t / tau)), dtype=np.float64)


def _good_from(quality: Array, end: int, frac: float = 0.75) -> int:
    """First step before `end` where the clean quality reached `frac` of its gain up to `end`."""
    q = quality[: max(1, end)]
    low, high = float(q[0]), float(q.max())
    if high - low < 1e-6:
        return 1
    return int(np.argmax(q >= low + frac * (high - low))) + 1


def _fmt_steps(steps: Sequence[int]) -> str:
    return ", ".join(str(s) for s in steps[:6]) + (" ..." if len(steps) > 6 else "")


# ====================================================================================== truth helpers
def _healthy(reasoning: str) -> Truth:
    return Truth(("continue",), "continue", None, None, True, reasoning)


def _degrading(
    ctx: Ctx, quality: Array, onset: int, reasoning: str, *, until: int | None = None, also_stop: bool = False,
    frac: float = 0.75, good_from: int | None = None,
) -> Truth:
    """Rollback when a checkpoint from the good stretch is on disk, else stop (nothing worth going back to)."""
    start = good_from if good_from is not None else _good_from(quality, onset, frac)
    end = max(start, until if until is not None else onset)
    inside = [c for c in ctx.checkpoints if start <= c <= end]
    if inside:
        accept: tuple[Decision, ...] = ("rollback", "stop") if also_stop else ("rollback",)
        which = f"Checkpoints {_fmt_steps(inside)} are" if len(inside) > 1 else f"Checkpoint {inside[0]} is"
        note = f" {which} from the good stretch (steps {start}-{end})."
        return Truth(accept, "rollback", onset, (start, end), False, reasoning + note)
    if ctx.checkpoints:
        where = f"the checkpoints on disk ({_fmt_steps(ctx.checkpoints)}) are all outside steps {start}-{end}"
    else:
        where = "no checkpoints on disk"
    return Truth(("stop",), "stop", onset, None, False,
                 f"{reasoning} Stop: {where}, so there is nothing worth going back to.")


# ====================================================================================== recipes
Builder = Callable[[Ctx], Scenario]


@dataclass(frozen=True)
class Recipe:
    """One named pattern: how to build its curves and what the right answer is.

    Attributes:
        name: the pattern's name (the key in `PATTERNS`).
        summary: one line a practitioner would recognise.
        kind: "grpo" or "dpo" (which simulation and which keys).
        formats: formats the pattern can be written in (where its signals exist).
        build: curves and ground truth for one spec.
        planned_factor: planned total steps as a multiple of the steps reached (the run is live).
        beta: default KL coefficient (TRL units); 0 means no KL term is logged.
        eval_every: default held-out evaluation interval for a spec (0: none).
        resumes: the run was interrupted and resumed (the log holds the overlap twice).
        off_policy: PPO ratios are clipped (several updates per generation batch).
    """

    name: str
    summary: str
    kind: Literal["grpo", "dpo"]
    formats: tuple[Format, ...]
    build: Builder
    planned_factor: float = 2.5
    beta: float = 0.04
    eval_every: Callable[[Ctx], int] = lambda ctx: 0
    resumes: bool = False
    off_policy: bool = False


def _base(ctx: Ctx, n: int | None = None) -> Grpo:
    """A healthy run: reward still rising, KL growing slowly, entropy and length drifting gently."""
    n = n or ctx.n
    t = np.arange(1, n + 1, dtype=np.float64)
    r = ctx.lrng
    a0 = ctx.num("reward_start", 0.18 + 0.1 * r.random())
    gain = ctx.num("reward_gain", 0.34 + 0.1 * r.random())
    acc = _rise_log(t, n, a0, gain, ctx.num("tau", 0.45 + 0.35 * r.random()) * n)
    kl_end = ctx.num("kl_end", 0.035 + 0.02 * r.random())
    kl = 0.0004 + kl_end * (t / n) ** 1.1
    e0 = 0.45 + 0.2 * r.random()
    entropy = e0 * (1 - 0.3 * (1 - np.exp(-t / (0.6 * n))))
    l0 = ctx.num("length_start", 240 + 80 * r.random())
    length = l0 * (1 + 0.2 * (1 - np.exp(-t / (0.7 * n))))
    off = ctx.recipe.off_policy or ctx.framework == "verl" or int(ctx.opt("num_iterations", 1)) > 1
    clip_scale = 1.0 if off else 0.0
    framework_cap = 1024
    return Grpo(
        acc=acc, kl=kl, entropy=entropy, length=length, length_sigma=_full(n, 0.42),
        difficulty=_full(n, 1.7), clip_low=clip_scale * 0.0008 * (1 + t / n),
        clip_high=clip_scale * 0.0012 * (1 + t / n),
        pg_mean=_full(n, 0.0), pg_scale=_full(n, 0.02), grad=0.22 * (1 + 0.4 * np.exp(-t / (0.1 * n))),
        cap=int(ctx.opt("max_completion_length", framework_cap)), noise=ctx.noise,
        gen_share=ctx.num("gen_share", 0.5 + 0.08 * r.random()),
    )


def _with_components(ctx: Ctx, lat: Grpo) -> Grpo:
    """Add a format reward that is learnt early (most GRPO recipes have one)."""
    if ctx.opt("components", False):
        t = ctx.t[: len(lat.acc)]
        lat.fmt = np.minimum(0.97, 0.5 + 0.47 * (1 - np.exp(-t / (0.15 * len(t)))))
    return lat


def _reward_words(acc: Array) -> str:
    return f"{acc[0]:.2f} to {acc[-1]:.2f}"


# ---------------------------------------------------------------------------------- healthy family
def build_healthy(ctx: Ctx) -> Scenario:
    """Reward still rising through realistic noise; nothing wrong."""
    lat = _with_components(ctx, _base(ctx))
    kl = "KL grows slowly" if ctx.beta > 0 else "no KL term is logged (beta = 0)"
    return Scenario(lat, _healthy(
        f"Reward (correctness {_reward_words(lat.acc)}) is still rising through the batch noise, {kl}, entropy and "
        f"length drift gently; {ctx.n} of {ctx.planned} planned steps done, nothing has gone wrong."))


def build_early(ctx: Ctx) -> Scenario:
    """A run seen after a few percent of its planned steps: noisy, barely moved."""
    lat = _with_components(ctx, _base(ctx, n=ctx.planned)).head(ctx.n)
    share = 100 * ctx.n / ctx.planned
    return Scenario(lat, _healthy(
        f"Only {ctx.n} of {ctx.planned} planned steps ({share:.0f}%): the curves are mostly noise and nothing "
        "can be judged yet; a healthy start, keep training."))


def build_kl_up_reward_up(ctx: Ctx) -> Scenario:
    """KL rising with reward rising: changing and improving."""
    lat = _base(ctx)
    t = ctx.t
    lat.kl = 0.0005 + ctx.num("kl_end", 0.09) * (t / ctx.n) ** 1.0
    return Scenario(lat, _healthy(
        f"KL climbs steadily (to ~{lat.kl[-1]:.2f}) and reward climbs with it ({_reward_words(lat.acc)}): the policy "
        "is moving away from the reference and getting better, the healthy quadrant."))


def build_kl_stable_reward_up(ctx: Ctx) -> Scenario:
    """KL flat with reward rising: improving without drifting (strong KL penalty)."""
    lat = _base(ctx)
    t = ctx.t
    lat.kl = 0.0003 + ctx.num("kl_level", 0.004) * (1 - np.exp(-t / (0.08 * ctx.n)))
    return Scenario(lat, _healthy(
        f"KL settles early at a low level (~{lat.kl[-1]:.3f}) while reward keeps rising ({_reward_words(lat.acc)}): "
        "improvement without drift, the ideal quadrant."))


def build_kl_up_reward_flat(ctx: Ctx) -> Scenario:
    """KL rising while reward has been flat for a long stretch after an early rise."""
    lat = _base(ctx)
    t, n = ctx.t, ctx.n
    plateau = ctx.step_opt("plateau", 0.35)
    a0, gain = float(lat.acc[0]), 0.3 + 0.08 * ctx.lrng.random()
    lat.acc = _rise_exp(t, a0, gain, plateau / 3.0) - 0.01 * (t / n)
    lat.kl = 0.0005 + ctx.num("kl_end", 0.16) * (t / n) ** 1.3
    lat.entropy = lat.entropy * (1 - 0.25 * t / n)
    onset = min(n, plateau + int(0.1 * n))
    truth = _degrading(
        ctx, lat.acc, onset,
        f"Reward rose until about step {plateau} and has been flat since, while KL keeps climbing (to "
        f"~{lat.kl[-1]:.2f}): the policy drifts without improving, the run has run its course.",
        also_stop=True, frac=0.8,
    )
    if "rollback" in truth.accept:
        truth = replace(truth, preferred="stop")
    return Scenario(lat, truth)


def _peak_then_decline(t: Array, a0: float, gain: float, peak: int, depth: float, width: float) -> Array:
    rise = _rise_exp(np.minimum(t, peak), a0, gain, max(peak / 2.5, 1.0))
    return np.asarray(rise - depth * _ramp(t, peak, width), dtype=np.float64)


def build_kl_up_reward_down(ctx: Ctx) -> Scenario:
    """KL rising while reward falls after a peak: destructive drift."""
    lat = _base(ctx)
    t, n = ctx.t, ctx.n
    peak = ctx.step_opt("onset", 0.5)
    width = 0.4 * n
    gain = 0.32 + 0.08 * ctx.lrng.random()
    lat.acc = _peak_then_decline(t, float(lat.acc[0]), gain, peak, ctx.num("depth", 0.2), width)
    lat.kl = 0.0005 + 0.03 * (t / n) + ctx.num("kl_extra", 0.3) * _ramp(t, peak, width) ** 1.5
    lat.entropy = lat.entropy * (1 + 0.6 * _ramp(t, peak, width))
    onset = _ramp_visible(peak, width, 0.2)
    return Scenario(lat, _degrading(
        ctx, lat.acc, onset,
        f"Reward peaked around step {peak} and has been falling since while KL accelerates (to ~{lat.kl[-1]:.2f}): "
        "the policy is getting worse and moving further from the reference.",
    ))


def build_kl_stable_reward_flat(ctx: Ctx) -> Scenario:
    """Converged: KL and reward both flat for most of the run."""
    lat = _base(ctx)
    t, n = ctx.t, ctx.n
    tau = 0.08 * n
    lat.acc = _rise_exp(t, float(lat.acc[0]), 0.3 + 0.1 * ctx.lrng.random(), tau)
    lat.kl = 0.0003 + 0.003 * (1 - np.exp(-t / tau))
    lat.entropy = float(lat.entropy[0]) * (1 - 0.15 * (1 - np.exp(-t / tau)))
    lat.length = float(lat.length[0]) * (1 + 0.1 * (1 - np.exp(-t / tau)))
    onset = min(n, int(3 * tau))
    return Scenario(lat, Truth(
        ("continue", "stop"), None, onset, None, False,
        f"Reward and KL have both been flat since about step {onset} (reward ~{lat.acc[-1]:.2f}): the run has "
        "converged; stopping saves compute, continuing is harmless, it depends on whether this level is enough."))


def build_pg_loss_declining(ctx: Ctx) -> Scenario:
    """Policy loss stable and slowly shrinking while reward rises."""
    lat = _base(ctx)
    t, n = ctx.t, ctx.n
    lat.pg_mean = 0.05 * np.exp(-t / (0.35 * n)) + 0.004
    lat.pg_scale = 0.006 + 0.01 * np.exp(-t / (0.35 * n))
    return Scenario(lat, _healthy(
        "The policy loss is stable and slowly shrinking as updates get smaller, reward keeps rising "
        f"({_reward_words(lat.acc)}): normal convergence behaviour, keep training."))


def build_pg_loss_oscillating(ctx: Ctx) -> Scenario:
    """Policy loss oscillating around zero (GRPO's surrogate), reward rising."""
    lat = _base(ctx)
    lat.pg_scale = _full(ctx.n, ctx.num("pg_scale", 0.04))
    lat.pg_phi = -0.4
    return Scenario(lat, _healthy(
        "The GRPO loss oscillates around zero, as the group-normalised surrogate does by construction, while "
        f"reward keeps rising ({_reward_words(lat.acc)}); the loss is not a progress signal here."))


def build_pg_loss_sign_reversal(ctx: Ctx) -> Scenario:
    """Policy loss flips from positive to negative and stays; reward turns down."""
    lat = _base(ctx)
    t, n = ctx.t, ctx.n
    flip = ctx.step_opt("onset", 0.55)
    width = max(3.0, 0.05 * n)
    switch = _ramp(t, flip - width / 2, width)
    lat.pg_mean = 0.035 - 0.075 * switch
    lat.pg_scale = _full(n, 0.01)
    lat.acc = _peak_then_decline(t, float(lat.acc[0]), 0.32, flip, 0.16, 0.35 * n)
    lat.kl = lat.kl + 0.08 * _ramp(t, flip, 0.4 * n)
    return Scenario(lat, _degrading(
        ctx, lat.acc, flip,
        f"The policy loss was positive and turned negative around step {flip} and stayed there, and reward has "
        "been falling since: the update direction reversed.", also_stop=True,
    ))


def build_pg_loss_blowup(ctx: Ctx) -> Scenario:
    """A discontinuity in the policy-loss magnitude, with the run degrading after it."""
    lat = _base(ctx)
    t, n = ctx.t, ctx.n
    jump = ctx.step_opt("onset", 0.62)
    step_up = _ramp(t, jump - 1, 1.0)
    lat.pg_scale = 0.02 * (1 + ctx.num("factor", 20.0) * step_up)
    lat.pg_mean = 0.25 * step_up
    lat.grad = lat.grad * (1 + 7 * step_up)
    lat.acc = lat.acc - 0.25 * _ramp(t, jump, 0.2 * n)
    lat.entropy = lat.entropy * (1 + 1.0 * _ramp(t, jump, 0.2 * n))
    lat.kl = lat.kl + 0.15 * _ramp(t, jump, 0.25 * n)
    return Scenario(lat, _degrading(
        ctx, lat.acc, jump,
        f"At step {jump} the policy loss jumps by an order of magnitude together with the gradient norm, and reward "
        "falls from there: the optimisation broke.", until=jump - 1,
    ))


def _expected_zero_std(acc: Array, sd: Array, g: int) -> Array:
    nodes = norm.ppf((np.arange(32) + 0.5) / 32)
    q = expit(logit(np.clip(acc, 1e-6, 1 - 1e-6))[:, None] + sd[:, None] * nodes[None, :])
    return np.asarray((q**g + (1 - q) ** g).mean(axis=1), dtype=np.float64)


def build_reward_saturation(ctx: Ctx) -> Scenario:
    """Reward at the ceiling, groups all-correct, no learning signal left."""
    lat = _base(ctx)
    t, n = ctx.t, ctx.n
    sat = ctx.step_opt("saturate", 0.4)
    a0 = float(lat.acc[0]) + 0.2
    lat.acc = np.asarray(expit(logit(a0) + (5.0 - logit(a0)) * (1 - np.exp(-t / (sat / 2.5)))), dtype=np.float64)
    lat.difficulty = _full(n, 0.9)
    lat.entropy = lat.entropy * (1 - 0.4 * (1 - np.exp(-t / sat)))
    lat.kl = 0.0005 + 0.03 * (1 - np.exp(-t / sat))
    _, g = _batch(ctx)
    zero = _expected_zero_std(lat.acc, lat.difficulty, g)
    onset = int(np.argmax(zero >= 0.7)) + 1 if (zero >= 0.7).any() else n
    return Scenario(lat, Truth(
        ("stop",), "stop", onset, None, False,
        f"Reward reached the ceiling (~{lat.acc[-1]:.2f}) and since about step {onset} most groups score all "
        "alike (zero-spread groups near 1, reward spread near 0): no learning signal is left, stop."))


def build_identical_rewards(ctx: Ctx) -> Scenario:
    """Every completion gets the same reward from step 1: a setup failure."""
    lat = _base(ctx)
    n = ctx.n
    value = ctx.num("value", 0.0)
    lat.identical = value
    lat.acc = _full(n, value)
    lat.kl = _full(n, 0.0)
    lat.entropy = _full(n, float(lat.entropy[0]))
    lat.length = _full(n, float(lat.length[0]))
    lat.grad = _full(n, 0.0)
    lat.pg_scale = _full(n, 0.0)
    lat.clip_low = _full(n, 0.0)
    lat.clip_high = _full(n, 0.0)
    return Scenario(lat, Truth(
        ("stop",), "stop", 1, None, False,
        f"Every completion has scored exactly {value:g} since step 1: reward_std and the gradient norm are 0 and "
        "every group has zero spread, so nothing is learnt; the reward function or answer parsing is broken."))


def build_component_hacking(ctx: Ctx) -> Scenario:
    """The format reward saturates at 1.0 while correctness stalls or falls."""
    lat = _base(ctx)
    t, n = ctx.t, ctx.n
    lat.fmt = np.minimum(1.0, 0.35 + 0.68 * (1 - np.exp(-t / (0.07 * n))))
    stall = ctx.step_opt("onset", 0.4)
    a0 = float(lat.acc[0])
    rise = _rise_exp(np.minimum(t, stall), a0, 0.22, stall / 2.0)
    variant = str(ctx.opt("correctness", "falls"))
    lat.length = lat.length * (1 - 0.3 * _ramp(t, stall, 0.4 * n))
    if variant == "falls":
        width = 0.4 * n
        lat.acc = rise - 0.14 * _ramp(t, stall, width)
        onset = _ramp_visible(stall, width, 0.2)
        return Scenario(lat, _degrading(
            ctx, lat.acc, onset,
            f"The format reward saturated at 1.0 early while correctness peaked around step {stall} and has been "
            "falling since; the total reward hides it: the policy is learning the format, not the task.",
            also_stop=True,
        ))
    lat.acc = rise
    onset = min(n, stall + int(0.1 * n))
    truth = _degrading(
        ctx, lat.acc, onset,
        f"The format reward saturated at 1.0 while correctness has been stuck since about step {stall}: the "
        "remaining reward signal is the format, nothing more is being learnt.", also_stop=True, frac=0.8,
    )
    return Scenario(lat, replace(truth, preferred="stop"))


def build_entropy_collapse(ctx: Ctx) -> Scenario:
    """Entropy collapses towards 0; groups become uniform and reward turns down."""
    lat = _base(ctx)
    t, n = ctx.t, ctx.n
    start = ctx.step_opt("onset", 0.45)
    width = 0.12 * n
    collapse = _ramp(t, start, width)
    lat.entropy = lat.entropy * (1 - 0.95 * collapse)
    lat.difficulty = 1.7 + 1.3 * collapse
    lat.length_sigma = 0.42 - 0.34 * collapse
    lat.acc = _peak_then_decline(t, float(lat.acc[0]), 0.3, start, ctx.num("depth", 0.17), 0.3 * n)
    lat.kl = lat.kl + 0.06 * _ramp(t, start, 0.3 * n)
    onset = _ramp_visible(start, width, 0.25)
    return Scenario(lat, _degrading(
        ctx, lat.acc, onset,
        f"Entropy collapses from about step {start} (to ~{lat.entropy[-1]:.2f}), completions of a prompt become "
        "identical (zero-std groups up, length spread gone) and reward turns down: exploration has died.",
    ))


def build_entropy_blowup(ctx: Ctx) -> Scenario:
    """Entropy shoots up towards ln(vocab); output turns to noise and hits the length cap."""
    lat = _base(ctx)
    t, n = ctx.t, ctx.n
    start = ctx.step_opt("onset", 0.55)
    width = 0.15 * n
    blow = _ramp(t, start, width)
    target = ctx.num("entropy_to", 0.7 * math.log(VOCAB_SIZE))
    lat.entropy = lat.entropy + (target - lat.entropy) * blow
    lat.length = np.exp(np.log(lat.length) + (math.log(1.4 * lat.cap) - np.log(lat.length)) * blow)
    lat.acc = lat.acc * (1 - 0.93 * blow)
    lat.kl = lat.kl + 2.0 * blow
    lat.grad = lat.grad * (1 + 4 * blow)
    onset = _ramp_visible(start, width, 0.15)
    return Scenario(lat, _degrading(
        ctx, lat.acc, onset,
        f"From about step {start} entropy climbs towards ln(vocab) = {math.log(VOCAB_SIZE):.1f} (to "
        f"~{lat.entropy[-1]:.1f}), completions run to the length cap and reward collapses: the output is noise.",
    ))


def build_length_collapse(ctx: Ctx) -> Scenario:
    """Completions shrink to a few tokens."""
    lat = _base(ctx)
    t, n = ctx.t, ctx.n
    start = ctx.step_opt("onset", 0.5)
    width = 0.15 * n
    shrink = _ramp(t, start, width)
    lat.length = np.exp(np.log(lat.length) + (math.log(ctx.num("length_to", 6.0)) - np.log(lat.length)) * shrink)
    lat.length_sigma = 0.42 - 0.2 * shrink
    lat.acc = lat.acc - (lat.acc - 0.04) * 0.9 * shrink
    lat.entropy = lat.entropy * (1 - 0.6 * shrink)
    onset = _ramp_visible(start, width, 0.2)
    return Scenario(lat, _degrading(
        ctx, lat.acc, onset,
        f"From about step {start} completions shrink to a few tokens (mean length ~{lat.length[-1]:.0f}) and "
        "reward falls with them: the model found a short-answer shortcut instead of reasoning.",
    ))


def build_length_explosion(ctx: Ctx) -> Scenario:
    """Completions grow until they hit the cap; truncated answers score nothing."""
    lat = _base(ctx)
    t, n = ctx.t, ctx.n
    start = ctx.step_opt("onset", 0.45)
    width = 0.3 * n
    grow = _ramp(t, start, width)
    lat.length = np.exp(np.log(lat.length) + (math.log(1.5 * lat.cap) - np.log(lat.length)) * grow)
    lat.acc = lat.acc - 0.15 * grow
    lat.entropy = lat.entropy * (1 + 0.5 * grow)
    onset = _ramp_visible(start, width, 0.2)
    return Scenario(lat, _degrading(
        ctx, lat.acc, onset,
        f"From about step {start} completion length climbs to the {lat.cap}-token cap, the clipped ratio rises "
        "towards 1 and reward falls as truncated answers score nothing: length hacking.",
    ))


def build_length_bimodal(ctx: Ctx) -> Scenario:
    """Lengths split into very short and very long modes while the mean stays put."""
    lat = _base(ctx)
    t, n = ctx.t, ctx.n
    start = ctx.step_opt("onset", 0.45)
    width = 0.2 * n
    split = _ramp(t, start, width)
    share = 0.4 * split
    lat.short_frac = share
    lat.short_len = 7.0
    mean0 = lat.length * np.exp(0.42**2 / 2)
    sigma = 0.42 + 0.3 * split
    long_mean = (mean0 - lat.short_len * share) / (1 - share)
    lat.length = long_mean / np.exp(sigma**2 / 2)
    lat.length_sigma = sigma
    lat.acc = _peak_then_decline(t, float(lat.acc[0]), 0.3, start, ctx.num("depth", 0.13), 0.4 * n)
    onset = _ramp_visible(start, width, 0.25)
    return Scenario(lat, _degrading(
        ctx, lat.acc, onset,
        f"From about step {start} lengths split into very short and very long completions (min near a few tokens, "
        "max at the cap) while the mean stays flat, and reward drifts down: extremes are being rewarded.",
    ))


def build_truncation(ctx: Ctx) -> Scenario:
    """The completion cap is too small: many completions are cut off and reward stalls."""
    lat = _base(ctx)
    t, n = ctx.t, ctx.n
    cap = lat.cap
    grow = _ramp(t, 0.0, 0.3 * n)
    lat.length = cap * (0.45 + 0.45 * grow)
    lat.length_sigma = _full(n, 0.45)
    lat.acc = _rise_exp(t, float(lat.acc[0]), 0.12, 0.1 * n)
    clipped = 1 - norm.cdf((math.log(cap) - np.log(lat.length)) / lat.length_sigma)
    onset = int(np.argmax(clipped >= 0.2)) + 1 if (clipped >= 0.2).any() else 1
    scored = lat.acc * (1 - clipped)  # truncated completions score nothing
    truth = _degrading(
        ctx, scored, onset,
        f"From about step {onset} a fifth and more of the completions are cut at the {cap}-token cap (clipped ratio "
        f"~{clipped[-1]:.2f}, mean length far above the mean terminated length) and reward has sagged since: the cap "
        "is too small for the task; stop and raise max_completion_length (restarting from an early checkpoint is "
        "fine too).", also_stop=True,
    )
    return Scenario(lat, replace(truth, preferred="stop"))


def build_clip_asymmetry(ctx: Ctx) -> Scenario:
    """High-side ratio clipping dominates (the policy sharpening onto a narrow mode)."""
    lat = _base(ctx)
    t, n = ctx.t, ctx.n
    if ctx.opt("benign", False):
        lat.clip_low = _full(n, 0.003) * (1 + 0.3 * t / n)
        lat.clip_high = 0.012 + 0.008 * t / n
        return Scenario(lat, _healthy(
            "High-side clipping is a few times the low side throughout (the policy is firming up preferences it "
            f"already had) but reward keeps rising ({_reward_words(lat.acc)}) and entropy declines slowly: healthy."))
    start = ctx.step_opt("onset", 0.45)
    width = 0.15 * n
    grow = _ramp(t, start, width)
    lat.clip_low = _full(n, 0.002)
    lat.clip_high = 0.003 + ctx.num("clip_to", 0.12) * grow
    lat.entropy = lat.entropy * (1 - 0.75 * grow)
    lat.difficulty = 1.7 + 0.8 * grow
    lat.acc = _peak_then_decline(t, float(lat.acc[0]), 0.3, start, ctx.num("depth", 0.16), 0.35 * n)
    onset = _ramp_visible(start, width, 0.2)
    return Scenario(lat, _degrading(
        ctx, lat.acc, onset,
        f"From about step {start} the high-side clip fraction climbs (to ~{lat.clip_high[-1]:.2f}) far above the low "
        "side while entropy falls and reward turns down: the policy is collapsing onto a narrow mode.",
    ))


def build_kl_spike_transient(ctx: Ctx) -> Scenario:
    """A one-step KL outlier that recovers at once."""
    lat = _base(ctx)
    at = ctx.step_opt("spike_at", 0.55)
    factor = ctx.num("factor", 25.0)
    lat.kl_events = [(at, factor)]
    lat.grad_events = [(at, 5.0)]
    return Scenario(lat, _healthy(
        f"KL jumps about {factor:.0f}x for a single step at step {at} (one odd batch) and is back on its trend "
        "at the next step; reward is unaffected and still rising: keep training."))


def build_kl_blowup(ctx: Ctx) -> Scenario:
    """KL jumps an order of magnitude and stays up (a regime change); reward falls."""
    lat = _base(ctx)
    t, n = ctx.t, ctx.n
    jump = ctx.step_opt("onset", 0.6)
    up = _ramp(t, jump - 2, 2.0)
    lat.kl = lat.kl * (1 + ctx.num("factor", 30.0) * up) + 0.4 * _ramp(t, jump, 0.4 * n)
    lat.acc = lat.acc - 0.22 * _ramp(t, jump, 0.25 * n)
    lat.entropy = lat.entropy * (1 + 0.8 * _ramp(t, jump, 0.2 * n))
    lat.grad = lat.grad * (1 + 3 * up)
    return Scenario(lat, _degrading(
        ctx, lat.acc, jump,
        f"KL jumps more than an order of magnitude at step {jump} and never comes back (a regime change, not a "
        "spike), and reward falls from there.", until=jump - 1,
    ))


def _eval_every_default(ctx: Ctx) -> int:
    return _nice(ctx.n / 10) if ctx.n >= 40 else 0


def build_eval_peak(ctx: Ctx) -> Scenario:
    """Held-out accuracy peaks and declines while training reward keeps rising (overfitting)."""
    lat = _base(ctx)
    t, n = ctx.t, ctx.n
    peak = ctx.step_opt("onset", 0.45)
    e0 = float(lat.acc[0]) * 0.9
    rise = _rise_exp(np.minimum(t, peak), e0, 0.22, peak / 2.5)
    quality = rise - ctx.num("depth", 0.14) * _ramp(t, peak, n - peak)
    lat.eval_quality = quality
    lat.entropy = lat.entropy * (1 - 0.3 * _ramp(t, peak, n - peak))
    top = float(quality.max())
    threshold = top - 0.25 * (top - float(quality[-1]))
    good = np.flatnonzero(quality >= threshold) + 1
    start, end = int(good[0]), int(good[-1])
    onset = min(n, end + 1)
    return Scenario(lat, _degrading(
        ctx, quality, onset,
        f"Held-out accuracy peaked around step {int(np.argmax(quality)) + 1} and has fallen since, while the "
        "training reward keeps rising: the policy overfits the training prompts; go back to the eval peak.",
        good_from=start, until=end,
    ))


def build_transient_dip(ctx: Ctx) -> Scenario:
    """Reward dips for a short stretch and recovers fully."""
    lat = _base(ctx)
    t, n = ctx.t, ctx.n
    at = ctx.step_opt("dip_at", 0.45)
    down, up = 0.04 * n, 0.09 * n
    bump = _ramp(t, at - down, down) - _ramp(t, at, up)
    lat.acc = lat.acc - ctx.num("depth", 0.2) * bump
    lat.entropy = lat.entropy * (1 + 0.2 * bump)
    lat.length = lat.length * (1 + 0.1 * bump)
    return Scenario(lat, _healthy(
        f"Reward dipped around step {at} and recovered fully within about {int(up)} steps, back on its rising "
        "trend; a transient, not a trend: keep training."))


def build_generation_bound(ctx: Ctx) -> Scenario:
    """A healthy run whose steps are dominated by rollout generation."""
    lat = _base(ctx)
    lat.gen_share = ctx.num("gen_share", 0.76)
    return Scenario(lat, _healthy(
        f"Training is healthy (reward {_reward_words(lat.acc)}, still rising); generation takes about "
        f"{100 * lat.gen_share:.0f}% of each step, a throughput bottleneck worth optimising, not a reason to stop."))


def build_resumed_duplicates(ctx: Ctx) -> Scenario:
    """A resumed run whose log holds the steps between the checkpoint and the crash twice."""
    underlying = str(ctx.opt("underlying", "healthy"))
    if underlying not in PATTERNS or underlying == "resumed_duplicates":
        raise ConfigError(f"resumed_duplicates: unknown underlying pattern {underlying!r}")
    scenario = PATTERNS[underlying].build(ctx)
    resume = ctx.resume()
    assert resume is not None
    note = (f" The run crashed at step {resume[1]} and was resumed from checkpoint {resume[0]}, so steps "
            f"{resume[0] + 1}-{resume[1]} are logged twice; judge the newest record of each step.")
    return Scenario(scenario.latent, replace(scenario.truth, reasoning=scenario.truth.reasoning + note))


def build_nan_divergence(ctx: Ctx) -> Scenario:
    """Gradient norm climbs, then loss and grad norm turn NaN at the end."""
    lat = _base(ctx)
    t, n = ctx.t, ctx.n
    nan_from = ctx.step_opt("nan_at", max(0.5, 1 - max(5, int(0.05 * n)) / n))
    start = max(2, ctx.step_opt("onset", 0.8))
    start = min(start, nan_from - 3)
    width = max(2.0, nan_from - start)
    climb = _ramp(t, start, width)
    lat.grad = lat.grad * (1 + 40 * climb**2)
    lat.pg_scale = lat.pg_scale * (1 + 10 * climb)
    lat.acc = lat.acc * (1 - 0.5 * climb)
    lat.entropy = lat.entropy * (1 + 1.5 * climb)
    lat.kl = lat.kl + 0.5 * climb
    after = t >= nan_from
    lat.acc = np.where(after, 0.002, lat.acc)
    lat.length = np.where(after, 2.0 * lat.cap, lat.length)
    lat.nan_from = nan_from
    onset = _ramp_visible(start, width, 0.15)
    return Scenario(lat, _degrading(
        ctx, lat.acc, onset,
        f"The gradient norm climbs from about step {start}, reward falls, and from step {nan_from} loss and grad "
        "norm are NaN: the run has diverged.", also_stop=True,
    ))


def build_dpo_healthy(ctx: Ctx) -> Scenario:
    """DPO: margins up, accuracy up, loss down from ln 2."""
    t, n = ctx.t, ctx.n
    m_end = ctx.num("margin_to", 2.0 + 1.0 * ctx.lrng.random())
    margin = m_end * (1 - np.exp(-t / (0.35 * n)))
    margin[0] = 0.0
    lat = Dpo(margin=margin, spread=0.35 + 0.9 * margin, chosen_share=_full(n, 0.15), grad=_full(n, 9.0),
              noise=ctx.noise)
    return Scenario(lat, _healthy(
        f"The DPO loss falls from ln 2 = 0.693 as the reward margin grows (to ~{margin[-1]:.1f}) and preference "
        "accuracy climbs towards 0.8: the model is learning the preferences."))


def build_dpo_stuck(ctx: Ctx) -> Scenario:
    """DPO: loss stuck at ln 2, margins at zero, accuracy at chance."""
    n = ctx.n
    margin = _full(n, 0.0008)
    margin[0] = 0.0
    lat = Dpo(margin=margin, spread=_full(n, 0.004), chosen_share=_full(n, 0.5), grad=_full(n, 6.0), noise=ctx.noise)
    return Scenario(lat, Truth(
        ("stop",), "stop", 1, None, False,
        "The DPO loss has sat at ln 2 = 0.693 since step 1, reward margins stay at zero and preference accuracy at "
        "chance: nothing is being learnt (learning rate or beta too small, or the pairs are broken)."))


_KL_FORMATS: tuple[Format, ...] = GRPO_FORMATS
_COMPONENT_FORMATS: tuple[Format, ...] = ("trl_state", "trl_live", "trl_console", "tensorboard", "csv")
_CLIP_FORMATS: tuple[Format, ...] = ("trl_state", "trl_live", "trl_console", "tensorboard")
_DPO_FORMATS: tuple[Format, ...] = ("trl_state", "trl_console", "tensorboard")
_GPU_FORMATS: tuple[Format, ...] = ("jsonl", "verl_console", "tensorboard", "trl_live")
_RESUME_FORMATS: tuple[Format, ...] = ("tensorboard", "verl_console", "csv", "trl_live", "trl_console")

PATTERNS: dict[str, Recipe] = {r.name: r for r in (
    Recipe("healthy", "reward still rising through realistic noise", "grpo", GRPO_FORMATS, build_healthy),
    Recipe("early", "a few percent of the planned steps done", "grpo", GRPO_FORMATS, build_early, planned_factor=25),
    Recipe("kl_up_reward_up", "KL rising, reward rising (healthy)", "grpo", _KL_FORMATS, build_kl_up_reward_up),
    Recipe("kl_stable_reward_up", "KL flat, reward rising (ideal)", "grpo", _KL_FORMATS, build_kl_stable_reward_up,
           beta=0.2),
    Recipe("kl_up_reward_flat", "KL rising, reward flat after a rise (run has run its course)", "grpo", _KL_FORMATS,
           build_kl_up_reward_flat, planned_factor=1.6),
    Recipe("kl_up_reward_down", "KL rising, reward falling (destructive)", "grpo", _KL_FORMATS,
           build_kl_up_reward_down, planned_factor=1.6),
    Recipe("kl_stable_reward_flat", "KL flat, reward flat (converged)", "grpo", _KL_FORMATS,
           build_kl_stable_reward_flat, planned_factor=1.5, beta=0.1),
    Recipe("pg_loss_declining", "policy loss stable and slowly declining", "grpo", GRPO_FORMATS,
           build_pg_loss_declining, beta=0.0),
    Recipe("pg_loss_oscillating", "policy loss oscillating around zero (healthy GRPO)", "grpo", GRPO_FORMATS,
           build_pg_loss_oscillating, beta=0.0),
    Recipe("pg_loss_sign_reversal", "policy loss turns from positive to negative, run degrading", "grpo",
           GRPO_FORMATS, build_pg_loss_sign_reversal, planned_factor=1.6, beta=0.0),
    Recipe("pg_loss_blowup", "policy-loss magnitude discontinuity, run degrading", "grpo", GRPO_FORMATS,
           build_pg_loss_blowup, planned_factor=1.6, beta=0.0),
    Recipe("reward_saturation", "reward at the ceiling, zero-std groups", "grpo", GRPO_FORMATS,
           build_reward_saturation, planned_factor=1.5, beta=0.0),
    Recipe("identical_rewards", "identical rewards from the start (setup failure)", "grpo", GRPO_FORMATS,
           build_identical_rewards, beta=0.0),
    Recipe("component_hacking", "format reward saturates while correctness stalls or falls", "grpo",
           _COMPONENT_FORMATS, build_component_hacking, planned_factor=1.6, beta=0.0),
    Recipe("entropy_collapse", "entropy collapses towards zero", "grpo", GRPO_FORMATS, build_entropy_collapse,
           planned_factor=1.6),
    Recipe("entropy_blowup", "entropy blows up towards ln(vocab)", "grpo", GRPO_FORMATS, build_entropy_blowup,
           planned_factor=1.6),
    Recipe("length_collapse", "completion length collapses to a few tokens", "grpo", GRPO_FORMATS,
           build_length_collapse, planned_factor=1.6, beta=0.0),
    Recipe("length_explosion", "completion length explodes to the cap", "grpo", GRPO_FORMATS,
           build_length_explosion, planned_factor=1.6, beta=0.0),
    Recipe("length_bimodal", "bimodal lengths, mean stable", "grpo", GRPO_FORMATS, build_length_bimodal,
           planned_factor=1.6, beta=0.0),
    Recipe("truncation", "many completions truncated at the cap", "grpo", GRPO_FORMATS, build_truncation,
           planned_factor=1.6, beta=0.0),
    Recipe("clip_asymmetry", "high-side ratio clipping dominates", "grpo", _CLIP_FORMATS, build_clip_asymmetry,
           planned_factor=1.6, beta=0.0, off_policy=True),
    Recipe("kl_spike_transient", "one-step KL outlier that recovers", "grpo", _KL_FORMATS, build_kl_spike_transient),
    Recipe("kl_blowup", "KL regime change (blow-up)", "grpo", _KL_FORMATS, build_kl_blowup, planned_factor=1.6),
    Recipe("eval_peak", "held-out eval peaks while train reward rises", "grpo", GRPO_FORMATS, build_eval_peak,
           planned_factor=1.6, beta=0.0, eval_every=_eval_every_default),
    Recipe("transient_dip", "reward dips and recovers", "grpo", GRPO_FORMATS, build_transient_dip),
    Recipe("generation_bound", "healthy, generation dominates the step", "grpo", _GPU_FORMATS,
           build_generation_bound),
    Recipe("resumed_duplicates", "resumed run, the overlap logged twice", "grpo", _RESUME_FORMATS,
           build_resumed_duplicates, resumes=True),
    Recipe("nan_divergence", "loss and grad norm NaN at the end", "grpo", GRPO_FORMATS, build_nan_divergence,
           planned_factor=1.6, beta=0.0),
    Recipe("dpo_healthy", "DPO: margins up, accuracy up, loss down from ln 2", "dpo", _DPO_FORMATS,
           build_dpo_healthy, planned_factor=2.0),
    Recipe("dpo_stuck", "DPO: loss stuck at ln 2", "dpo", _DPO_FORMATS, build_dpo_stuck, planned_factor=2.0),
)}


# ====================================================================================== spec -> context
def framework_of(spec: Generated) -> str:
    """`trl`, `verl` or `rfs` (reasoning-from-scratch): whose keys and conventions the run uses."""
    if spec.format in ("trl_state", "trl_live", "trl_console"):
        return "trl"
    if spec.format in ("jsonl", "verl_console"):
        return "verl"
    if spec.format == "csv":
        return "rfs"
    framework = str(spec.options.get("framework", "trl"))
    if framework not in ("trl", "verl"):
        raise ConfigError(f"tensorboard runs are written with framework trl or verl, not {framework!r}")
    return framework


def _context(spec: Generated) -> Ctx:
    recipe = PATTERNS.get(spec.pattern)
    if recipe is None:
        raise ConfigError(f"unknown pattern {spec.pattern!r}; known: {', '.join(PATTERNS)}")
    if spec.format not in recipe.formats:
        raise ConfigError(f"pattern {spec.pattern!r} cannot be written as {spec.format!r}; use one of {recipe.formats}")
    framework = framework_of(spec)
    if recipe.kind == "dpo" and framework != "trl":
        raise ConfigError(f"pattern {spec.pattern!r} is a TRL DPO run; tensorboard needs framework trl")
    if spec.steps < 5:
        raise ConfigError("a generated run needs at least 5 steps")
    n = spec.steps
    planned = int(spec.options.get("max_steps", 0)) or max(n, int(math.ceil(n * recipe.planned_factor / 50) * 50))
    saves = _save_steps(spec, n)
    limit = int(spec.options.get("save_total_limit", 3 if spec.format == "trl_live" else 0))
    kept = saves[-limit:] if limit > 0 else list(saves)
    base = [spec.seed, _crc(spec.pattern)]
    return Ctx(spec, recipe, n, framework, planned, kept, saves, np.random.default_rng([*base, 1]),
               np.random.default_rng([*base, 2]))


def _save_steps(spec: Generated, n: int) -> list[int]:
    options = spec.options
    layout = str(options.get("layout", "checkpoints"))
    if not options.get("checkpoints", True):
        if spec.format == "trl_state" and layout == "checkpoints":
            raise ConfigError("a trl_state run without checkpoints needs layout: top")
        return []
    save = int(options.get("save_steps", _nice(n / 8)))
    steps = list(range(save, n + 1, save))
    if spec.format == "trl_state" and layout == "checkpoints" and (not steps or steps[-1] != n):
        steps.append(n)  # the state we read is the newest checkpoint's
    return steps


def truth(spec: Generated) -> Truth:
    """The right answer for a spec, straight from its recipe (no simulation, no judge).

    Args:
        spec: the generated run.

    Returns:
        The recipe's ground truth for these steps, options and checkpoints.

    Raises:
        ConfigError: unknown pattern, or a format the pattern cannot be written in.
    """
    ctx = _context(spec)
    return ctx.recipe.build(ctx).truth


def checkpoint_steps(spec: Generated) -> list[int]:
    """Steps of the checkpoints `write_run` leaves on disk for this spec."""
    return list(_context(spec).checkpoints)


# ====================================================================================== GRPO simulation
def _batch(ctx: Ctx) -> tuple[int, int]:
    """(prompts, completions per prompt) of one optimizer step."""
    defaults = {"trl": (8, 8), "verl": (64, 5), "rfs": (1, 8)}[ctx.framework]
    prompts = int(ctx.opt("prompts", defaults[0]))
    group = int(ctx.opt("num_generations", defaults[1]))
    return prompts, group


def _lr(ctx: Ctx, n: int) -> Array:
    t = np.arange(1, n + 1, dtype=np.float64)
    base = ctx.num("learning_rate", {"trl": 1e-6, "verl": 1e-6, "rfs": 1e-5}[ctx.framework])
    if ctx.framework == "verl":
        return _full(n, base)
    warm = max(1.0, 0.05 * ctx.planned)
    return np.asarray(base * np.minimum(1.0, t / warm) * np.clip(1 - (t - warm) / (ctx.planned - warm + 1), 0.0, 1.0),
                      dtype=np.float64)


def simulate_grpo(ctx: Ctx, lat: Grpo, rng: np.random.Generator) -> dict[str, Array]:
    """Per-step observations drawn completion by completion (index i is step i + 1).

    Returns:
        Arrays under internal names (`reward`, `reward_std`, `zero_std`, `acc_mean`, `len_mean`, `kl`, ...).
    """
    n = len(lat.acc)
    prompts, group = _batch(ctx)
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

    if lat.identical is not None:  # no reward spread: zero advantages, zero gradient (the policy never moves)
        for key in ("pg", "grad_norm", "clip_low", "clip_high", "clip_high_max", "kl", "ppo_kl", "adv_std"):
            obs[key] = np.zeros(n)
    if lat.nan_from is not None:
        dead = np.arange(1, n + 1) >= lat.nan_from
        for key in ("pg", "grad_norm", "kl", "entropy", "ppo_kl", "clip_low", "clip_high", "clip_high_max"):
            obs[key] = np.where(dead, np.nan, obs[key])
    return obs


def _eval_points(ctx: Ctx, lat: Latent, rng: np.random.Generator) -> dict[int, float]:
    """Held-out accuracy measured on a 500-question set at each evaluation step."""
    every = ctx.eval_every
    if every <= 0 or not isinstance(lat, Grpo):
        return {}
    quality = lat.eval_quality if lat.eval_quality is not None else np.clip(0.92 * lat.acc + 0.02, 0.0, 1.0)
    steps = list(range(every, len(quality) + 1, every))
    if ctx.framework in ("verl", "rfs"):
        steps = [0 if ctx.framework == "verl" else 1, *steps]
    size = int(ctx.opt("eval_size", 500))
    out: dict[int, float] = {}
    for step in steps:
        p = float(np.clip(quality[max(step, 1) - 1], 0.0, 1.0))
        out[step] = float(rng.binomial(size, p)) / size
    return out


# ====================================================================================== DPO simulation
def simulate_dpo(ctx: Ctx, lat: Dpo, rng: np.random.Generator) -> dict[str, Array]:
    """Per-step DPO observations from a small batch of preference pairs."""
    n = len(lat.margin)
    pairs = int(ctx.opt("pairs", 8))
    margins = lat.margin[:, None] + lat.spread[:, None] * rng.standard_normal((n, pairs))
    margins[0] = 0.0  # step 1: the policy is the reference
    wobble = 0.05 * lat.spread[:, None] * rng.standard_normal((n, pairs))
    chosen = lat.chosen_share[:, None] * margins - 0.1 * lat.margin[:, None] + wobble
    chosen[0] = 0.0
    rejected = chosen - margins
    beta = ctx.num("dpo_beta", 0.1)
    ref_chosen = -260 + 70 * rng.standard_normal((n, pairs))
    ref_rejected = -300 + 80 * rng.standard_normal((n, pairs))
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
        "tokens": np.cumsum(np.rint(pairs * 2 * (330 + 60 * rng.standard_normal(n)))),
        "grad_norm": lat.grad * np.exp(0.35 * rng.standard_normal(n)),
        "lr": _lr(ctx, n) * 5,
    }
    return obs


# ====================================================================================== framework rows
_TRL_LAST = frozenset({"grad_norm", "learning_rate", "num_tokens"})


def trl_columns(ctx: Ctx, obs: Mapping[str, Array]) -> dict[str, Array]:
    """Per-step values under TRL's GRPO (or DPO) keys, in the order TRL logs them."""
    if ctx.recipe.kind == "dpo":
        return {
            "loss": obs["loss"], "grad_norm": obs["grad_norm"], "learning_rate": obs["lr"],
            "rewards/chosen": obs["chosen"], "rewards/rejected": obs["rejected"],
            "rewards/accuracies": obs["accuracies"], "rewards/margins": obs["margins"],
            "logps/chosen": obs["logps_chosen"], "logps/rejected": obs["logps_rejected"],
            "logits/chosen": obs["logits_chosen"], "logits/rejected": obs["logits_rejected"],
            "entropy": obs["entropy"], "mean_token_accuracy": obs["token_acc"], "num_tokens": obs["tokens"],
        }
    cols: dict[str, Array] = {
        "loss": obs["pg"] + ctx.beta * obs["kl"],
        "grad_norm": obs["grad_norm"],
        "learning_rate": obs["lr"],
        "num_tokens": np.cumsum(obs["tokens"]),
        "completions/mean_length": obs["len_mean"],
        "completions/min_length": obs["len_min"],
        "completions/max_length": obs["len_max"],
        "completions/clipped_ratio": obs["clipped"],
        "completions/mean_terminated_length": obs["term_mean"],
        "completions/min_terminated_length": obs["term_min"],
        "completions/max_terminated_length": obs["term_max"],
        "rewards/accuracy_reward/mean": obs["acc_mean"],
        "rewards/accuracy_reward/std": obs["acc_std"],
    }
    if "fmt_mean" in obs:
        cols["rewards/format_reward/mean"] = obs["fmt_mean"]
        cols["rewards/format_reward/std"] = obs["fmt_std"]
    cols["reward"] = obs["reward"]
    cols["reward_std"] = obs["reward_std"]
    cols["frac_reward_zero_std"] = obs["zero_std"]
    if ctx.beta > 0:
        cols["kl"] = obs["kl"]
    cols["entropy"] = obs["entropy"]
    cols["clip_ratio/low_mean"] = obs["clip_low"]
    cols["clip_ratio/low_min"] = np.zeros(len(obs["clip_low"]))
    cols["clip_ratio/high_mean"] = obs["clip_high"]
    cols["clip_ratio/high_max"] = obs["clip_high_max"]
    cols["clip_ratio/region_mean"] = obs["clip_low"] + obs["clip_high"]
    cols["step_time"] = obs["step_time"]
    return cols


def _steps_per_epoch(ctx: Ctx) -> float:
    prompts, _ = _batch(ctx)
    return max(1.0, int(ctx.opt("dataset_size", 7473)) / max(1, prompts if ctx.recipe.kind == "grpo" else 8))


def trl_rows(
    ctx: Ctx, cols: Mapping[str, Array], logging_steps: int, first: int = 1, last: int | None = None,
) -> list[Row]:
    """HF/TRL log rows, one every `logging_steps` steps.

    Each value is averaged over the steps since the previous log (NaN-aware); grad norm, learning rate and
    the token count are the last step's; loss turns NaN when any step's loss was NaN, as HF's running sum does.
    """
    n = len(next(iter(cols.values())))
    last = n if last is None else last
    rows: list[Row] = []
    per_epoch = _steps_per_epoch(ctx)
    start = ((first - 1) // logging_steps + 1) * logging_steps
    for step in range(start, last + 1, logging_steps):
        lo, hi = step - logging_steps, step
        row: Row = {}
        for key, values in cols.items():
            window = values[lo:hi]
            if key in _TRL_LAST:
                value = float(window[-1])
            elif key == "loss":
                value = round(float(window.mean()), 4)
            else:
                finite = window[np.isfinite(window)]
                value = float(finite.mean()) if len(finite) else math.nan
            row[key] = None if (math.isnan(value) and key not in ("loss", "grad_norm")) else value
        row["epoch"] = round(step / per_epoch, 4)
        row["step"] = step
        rows.append(row)
    return rows


def trl_eval_rows(ctx: Ctx, evals: Mapping[int, float], first: int = 1, last: int | None = None) -> list[Row]:
    """`eval_*` rows at the evaluation steps (separate dicts sharing the step with a training row)."""
    rows: list[Row] = []
    per_epoch = _steps_per_epoch(ctx)
    for step, value in sorted(evals.items()):
        if step < first or (last is not None and step > last):
            continue
        rows.append({
            "eval_loss": round(0.01 + 0.002 * value, 4), "eval_reward": value,
            "eval_rewards/accuracy_reward/mean": value, "eval_runtime": round(38.0 + 4 * value, 3),
            "eval_samples_per_second": round(500 / (38.0 + 4 * value), 3), "eval_steps_per_second": 0.421,
            "epoch": round(step / per_epoch, 4), "step": step,
        })
    return rows


def _merge_rows(train: list[Row], evals: list[Row]) -> list[Row]:
    out = list(train)
    for row in evals:
        index = next((i for i, r in enumerate(out) if r["step"] > row["step"]), len(out))
        out.insert(index, row)
    return out


def verl_rows(ctx: Ctx, obs: Mapping[str, Array], evals: Mapping[int, float], first: int = 1,
              last: int | None = None) -> list[tuple[int, Row]]:
    """The per-step metric dicts verl logs (step, {key: value}), validation inside the test steps' rows."""
    n = len(obs["reward"])
    last = n if last is None else last
    prompts, group = _batch(ctx)
    use_kl = ctx.beta > 0
    saves = set(ctx.all_saves)
    rows: list[tuple[int, Row]] = []
    if first <= 1 and 0 in evals:
        rows.append((0, {"val-core/openai/gsm8k/acc/mean@1": evals[0]}))
    for i in range(first - 1, last):
        step = i + 1
        gen, rest = float(obs["time_gen"][i]), float(obs["time_rest"][i])
        row: Row = {
            "training/global_step": step, "training/epoch": int(step // _steps_per_epoch(ctx)),
            "actor/entropy": obs["entropy"][i],
        }
        if use_kl:
            row["actor/kl_loss"] = obs["kl"][i]
            row["actor/kl_coef"] = ctx.beta / 40
        row.update({
            "actor/pg_loss": obs["pg"][i], "actor/pg_clipfrac": obs["clip_low"][i] + obs["clip_high"][i],
            "actor/ppo_kl": obs["ppo_kl"][i], "actor/pg_clipfrac_lower": 0.0, "actor/grad_norm": obs["grad_norm"][i],
            "perf/mfu/actor": 0.21 + 0.01 * math.sin(step), "perf/max_memory_allocated_gb": 61.3,
            "perf/max_memory_reserved_gb": 72.4, "perf/cpu_memory_used_gb": 98.2, "actor/lr": obs["lr"][i],
            "critic/score/mean": obs["reward"][i], "critic/score/max": obs["reward_max"][i],
            "critic/score/min": obs["reward_min"][i], "critic/rewards/mean": obs["reward"][i],
            "critic/rewards/max": obs["reward_max"][i], "critic/rewards/min": obs["reward_min"][i],
            "critic/advantages/mean": 0.0, "critic/advantages/max": 1.7886 if obs["reward_std"][i] > 0 else 0.0,
            "critic/advantages/min": -1.7886 if obs["reward_std"][i] > 0 else 0.0,
            "critic/returns/mean": 0.0, "critic/returns/max": 1.7886 if obs["reward_std"][i] > 0 else 0.0,
            "critic/returns/min": -1.7886 if obs["reward_std"][i] > 0 else 0.0,
            "response_length/mean": obs["len_mean"][i], "response_length/max": obs["len_max"][i],
            "response_length/min": obs["len_min"][i], "response_length/clip_ratio": obs["clipped"][i],
            "prompt_length/mean": 104.3, "prompt_length/max": 201.0, "prompt_length/min": 66.0,
            "prompt_length/clip_ratio": 0.0,
            "timing_s/gen": gen, "timing_s/reward": 0.04 * rest, "timing_s/old_log_prob": 0.18 * rest,
            "timing_s/ref": 0.17 * rest, "timing_s/adv": 0.002 * rest, "timing_s/update_actor": 0.6 * rest,
        })
        if step in evals:
            row["val-core/openai/gsm8k/acc/mean@1"] = evals[step]
            row["timing_s/testing"] = 36.0 + 4 * math.cos(step)
        if step in saves:
            row["timing_s/save_checkpoint"] = 61.0 + 3 * math.sin(step)
        phases = sum(float(v) for k, v in row.items() if k.startswith("timing_s/"))
        row["timing_s/step"] = phases + 0.35
        tokens = float(obs["tokens"][i])
        row["timing_per_token_ms/gen"] = 1000 * gen / max(1.0, float(obs["len_mean"][i]) * prompts * group)
        row["perf/total_num_tokens"] = tokens
        row["perf/time_per_step"] = row["timing_s/step"]
        row["perf/throughput"] = tokens / row["timing_s/step"] / 8
        rows.append((step, {k: (float(v) if not isinstance(v, int) else v) for k, v in row.items()}))
    return rows


def rfs_rows(ctx: Ctx, obs: Mapping[str, Array], evals: Mapping[int, float], first: int = 1,
             last: int | None = None) -> tuple[list[str], list[list[str]]]:
    """reasoning-from-scratch CSV header and rows (`%.6f`, eval_acc in percent, empty when not evaluated)."""
    n = len(obs["reward"])
    last = n if last is None else last
    with_kl = ctx.beta > 0 or ctx.recipe.off_policy
    header = ["step", "total_steps", "loss"]
    if with_kl:
        header += ["kl_loss", "policy_ratio"]
    header.append("reward_avg")
    if "fmt_mean" in obs:
        header.append("format_reward_avg")
    header += ["tokens_per_sec", "avg_response_len", "adv_avg", "adv_std", "entropy_avg", "eval_acc"]
    rows: list[list[str]] = []
    for i in range(first - 1, last):
        step = i + 1
        spread = float(obs["adv_std"][i])
        kl_loss = ctx.beta / 40 * float(obs["kl"][i]) * float(obs["len_mean"][i])
        loss = (float(obs["pg"][i]) * 40.0 if spread > 0 else 0.0) + kl_loss
        values: dict[str, str] = {
            "step": str(step), "total_steps": str(ctx.planned), "loss": f"{loss:.6f}",
            "kl_loss": f"{kl_loss:.6f}", "policy_ratio": f"{1.0 + 0.01 * float(obs['ppo_kl'][i]):.6f}",
            "reward_avg": f"{float(obs['reward'][i]):.6f}",
            "tokens_per_sec": f"{float(obs['len_mean'][i]) * 8 / float(obs['step_time'][i]) / 10:.6f}",
            "avg_response_len": f"{float(obs['len_mean'][i]):.6f}", "adv_avg": f"{0.0:.6f}",
            "adv_std": f"{spread:.6f}", "entropy_avg": f"{float(obs['entropy'][i]):.6f}",
            "eval_acc": f"{100 * evals[step]:.1f}" if step in evals else "",
        }
        if "fmt_mean" in obs:
            values["format_reward_avg"] = f"{float(obs['fmt_mean'][i]):.6f}"
        rows.append([values[h] for h in header])
    return header, rows


# ====================================================================================== file writers
def _json_value(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def _trainer_state(ctx: Ctx, rows: list[Row], global_step: int, logging_steps: int) -> dict[str, Any]:
    return {
        "best_global_step": None, "best_metric": None, "best_model_checkpoint": None,
        "epoch": rows[-1]["epoch"] if rows else 0.0, "eval_steps": ctx.eval_every or 500,
        "global_step": global_step, "is_hyper_param_search": False, "is_local_process_zero": True,
        "is_world_process_zero": True, "log_history": rows, "logging_steps": logging_steps,
        "max_steps": ctx.planned, "num_input_tokens_seen": 0, "num_train_epochs": 1,
        "save_steps": ctx.all_saves[0] if ctx.all_saves else 500,
        "stateful_callbacks": {"TrainerControl": {"args": {
            "should_epoch_stop": False, "should_evaluate": False, "should_log": False, "should_save": True,
            "should_training_stop": False}, "attributes": {}}},
        "total_flos": 0.0, "train_batch_size": 8, "trial_name": None, "trial_params": None,
    }


def _training_args(ctx: Ctx, logging_steps: int) -> dict[str, Any]:
    prompts, group = _batch(ctx)
    args: dict[str, Any] = {
        "output_dir": f"outputs/qwen2.5-1.5b-{ctx.recipe.kind}", "max_steps": ctx.planned,
        "logging_steps": logging_steps, "save_steps": ctx.all_saves[0] if ctx.all_saves else 500,
        "save_total_limit": int(ctx.opt("save_total_limit", 3 if ctx.spec.format == "trl_live" else 0)) or None,
        "learning_rate": ctx.num("learning_rate", 5e-6 if ctx.recipe.kind == "dpo" else 1e-6),
        "lr_scheduler_type": "linear",
        "warmup_ratio": 0.05, "per_device_train_batch_size": 8, "gradient_accumulation_steps": 4, "seed": 42,
        "bf16": True, "report_to": ["tensorboard"], "eval_steps": ctx.eval_every or None,
        "eval_strategy": "steps" if ctx.eval_every else "no",
    }
    if ctx.recipe.kind == "dpo":
        args.update({"beta": ctx.num("dpo_beta", 0.1), "loss_type": "sigmoid", "max_length": 1024})
    else:
        args.update({
            "beta": ctx.beta, "num_generations": group,
            "max_completion_length": int(ctx.opt("max_completion_length", 1024)),
            "max_prompt_length": 512, "loss_type": "dapo", "scale_rewards": "group",
            "num_iterations": 2 if (ctx.recipe.off_policy or int(ctx.opt("num_iterations", 1)) > 1) else 1,
            "epsilon": 0.2, "epsilon_high": 0.28, "temperature": 1.0, "use_vllm": True,
            "generation_batch_size": prompts * group,
        })
    return args


def training_args_bin(kind: str, fields: Mapping[str, Any]) -> bytes:
    """A `training_args.bin` as `torch.save` lays it out: a zip holding the pickled TRL config."""
    if kind == "dpo":
        class_name, module = "DPOConfig", "trl.trainer.dpo_config"
    else:
        class_name, module = "GRPOConfig", "trl.trainer.grpo_config"
    names = ("trl", "trl.trainer", module)
    modules = {name: types.ModuleType(name) for name in names}
    config_class = type(class_name, (), {"__module__": module})
    setattr(modules[module], class_name, config_class)
    saved = {name: sys.modules.get(name) for name in names}
    sys.modules.update(modules)
    try:
        config = config_class()
        config.__dict__.update(fields)
        payload = pickle.dumps(config, protocol=2)
    finally:
        for name, previous in saved.items():
            if previous is None:
                del sys.modules[name]
            else:
                sys.modules[name] = previous
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_STORED) as archive:
        for entry, data in (("training_args/data.pkl", payload), ("training_args/byteorder", b"little"),
                            ("training_args/version", b"3\n"), ("training_args/.data/serialization_id", b"0")):
            info = zipfile.ZipInfo(entry, date_time=(2026, 11, 20, 9, 14, 2))
            archive.writestr(info, data)
    return buffer.getvalue()


def _model_config() -> str:
    return json.dumps({
        "_name_or_path": "Qwen/Qwen2.5-1.5B-Instruct", "architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2",
        "hidden_size": 1536, "num_hidden_layers": 28, "torch_dtype": "bfloat16", "vocab_size": VOCAB_SIZE,
    }, indent=2) + "\n"


def _dump_state(state: Mapping[str, Any]) -> str:
    return json.dumps(state, indent=2, sort_keys=True) + "\n"  # HF: indent=2, sort_keys=True; NaN stays NaN


def _write_trl_checkpoint(ctx: Ctx, folder: Path, rows: list[Row], step: int, logging_steps: int) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    kept = [r for r in rows if int(r["step"]) <= step]
    (folder / "trainer_state.json").write_text(_dump_state(_trainer_state(ctx, kept, step, logging_steps)),
                                               encoding="utf-8")
    (folder / "training_args.bin").write_bytes(training_args_bin(ctx.recipe.kind, _training_args(ctx, logging_steps)))
    (folder / "config.json").write_text(_model_config(), encoding="utf-8")


def _tiny_checkpoint(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(_model_config(), encoding="utf-8")


def _wall_times(ctx: Ctx, step_time: Array, offset_hours: float = 0.0) -> Array:
    start = _START_TS + 3600 * (ctx.spec.seed % 7) + 3600 * offset_hours
    return np.asarray(start + np.cumsum(step_time), dtype=np.float64)


def _write_events(path: Path, start: float, points: Iterable[tuple[float, int, Mapping[str, Any]]],
                  text: Mapping[str, str] | None = None) -> None:
    """Write a TensorBoard event file with TensorBoard's own record writer.

    One event per scalar, as `SummaryWriter.add_scalar` does; deterministic (fixed wall times, no writer
    thread stamping the clock), which `EventFileWriter` is not.
    """
    from tensorboard.compat.proto import event_pb2, summary_pb2, tensor_pb2, tensor_shape_pb2
    from tensorboard.summary.writer.record_writer import RecordWriter

    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as handle:
        writer = RecordWriter(handle)
        writer.write(event_pb2.Event(wall_time=start, file_version="brain.Event:2").SerializeToString())
        for tag, content in (text or {}).items():
            value = summary_pb2.Summary.Value(
                tag=f"{tag}/text_summary",
                metadata=summary_pb2.SummaryMetadata(plugin_data=summary_pb2.SummaryMetadata.PluginData(plugin_name="text")),
                tensor=tensor_pb2.TensorProto(dtype=7, string_val=[content.encode()],
                                              tensor_shape=tensor_shape_pb2.TensorShapeProto()),
            )
            event = event_pb2.Event(wall_time=start, step=0, summary=summary_pb2.Summary(value=[value]))
            writer.write(event.SerializeToString())
        make_value = summary_pb2.Summary.Value
        for wall, step, values in points:
            for tag, number in values.items():
                if number is None:
                    continue
                summary = summary_pb2.Summary(value=[make_value(tag=tag, simple_value=float(number))])
                event = event_pb2.Event(wall_time=wall, step=step, summary=summary)
                writer.write(event.SerializeToString())


def _tb_name(wall: float, pid: int) -> str:
    return f"events.out.tfevents.{int(wall)}.{_HOST}.{pid}.0"


def _trl_tb_points(rows: list[Row], walls: Array) -> list[tuple[float, int, dict[str, Any]]]:
    """HF's TensorBoard callback: `train/<key>`, `eval/<key>` (the `rewrite_logs` names)."""
    points = []
    for row in rows:
        step = int(row["step"])
        values: dict[str, Any] = {}
        for key, value in row.items():
            if key == "step":
                continue
            if key.startswith("eval_"):
                values[f"eval/{key[5:]}"] = value
            else:
                values[f"train/{key}"] = value
        values["train/global_step"] = step
        points.append((float(walls[step - 1]) + (1.0 if "eval_reward" in row else 0.0), step, values))
    return points


@dataclass
class _Attempt:
    """The rows one launch of the run logged (a resumed run has two)."""

    first: int
    last: int
    obs: dict[str, Array]
    evals: dict[int, float]
    hours: float = 0.0


def _simulate(ctx: Ctx, lat: Latent, rng: np.random.Generator) -> dict[str, Array]:
    return simulate_dpo(ctx, lat, rng) if isinstance(lat, Dpo) else simulate_grpo(ctx, lat, rng)


def _attempts(ctx: Ctx, lat: Latent) -> list[_Attempt]:
    """One launch, or two when the run crashed and was resumed (the second repeats the overlap)."""
    obs = _simulate(ctx, lat, ctx.rng)
    evals = _eval_points(ctx, lat, ctx.rng)
    resume = ctx.resume()
    if resume is None:
        return [_Attempt(1, ctx.n, obs, evals)]
    at, crash = resume
    crashed_rng = np.random.default_rng([ctx.spec.seed, _crc(ctx.spec.pattern), 3])
    before = _simulate(ctx, lat, crashed_rng)
    before_evals = _eval_points(ctx, lat, crashed_rng)
    # The first launch logged steps up to the crash; its first `at` steps are the ones the resume restored.
    for key, values in before.items():
        values[:at] = obs[key][:at]
    before_evals = {s: (evals[s] if s <= at and s in evals else v) for s, v in before_evals.items() if s <= crash}
    return [_Attempt(1, crash, before, before_evals), _Attempt(at + 1, ctx.n, obs, evals, hours=2.5)]


def _write_trl_state(ctx: Ctx, target: Path, attempts: list[_Attempt]) -> None:
    logging_steps = ctx.spec.logging_steps
    main = attempts[-1]
    cols = trl_columns(ctx, main.obs)
    rows = _merge_rows(trl_rows(ctx, cols, logging_steps), trl_eval_rows(ctx, main.evals))
    for step in ctx.checkpoints:
        _write_trl_checkpoint(ctx, target / f"checkpoint-{step}", rows, step, logging_steps)
    if str(ctx.opt("layout", "checkpoints")) == "top":
        (target / "trainer_state.json").write_text(_dump_state(_trainer_state(ctx, rows, ctx.n, logging_steps)),
                                                   encoding="utf-8")
        args = _training_args(ctx, logging_steps) | {"model_name_or_path": "Qwen/Qwen2.5-1.5B-Instruct"}
        (target / "training_args.json").write_text(json.dumps(args, indent=2) + "\n", encoding="utf-8")


def _write_trl_tensorboard(ctx: Ctx, target: Path, attempts: list[_Attempt], folder: str = "runs") -> None:
    logging_steps = ctx.spec.logging_steps
    for number, attempt in enumerate(attempts):
        cols = trl_columns(ctx, attempt.obs)
        rows = _merge_rows(trl_rows(ctx, cols, logging_steps, attempt.first, attempt.last),
                           trl_eval_rows(ctx, attempt.evals, attempt.first, attempt.last))
        step_time = attempt.obs["step_time"] if "step_time" in attempt.obs else _full(ctx.n, 4.0)
        walls = _wall_times(ctx, step_time, attempt.hours)
        start = float(walls[attempt.first - 1]) - float(step_time[attempt.first - 1]) - 30.0
        stamp = datetime.fromtimestamp(start, tz=UTC).strftime("%b%d_%H-%M-%S")
        args = json.dumps(_training_args(ctx, logging_steps), indent=2)
        _write_events(target / folder / f"{stamp}_{_HOST}" / _tb_name(start, 41822 + number), start,
                      _trl_tb_points(rows, walls), text={"args": args})


def _write_trl_live(ctx: Ctx, target: Path, attempts: list[_Attempt]) -> None:
    logging_steps = ctx.spec.logging_steps
    main = attempts[-1]
    rows = _merge_rows(trl_rows(ctx, trl_columns(ctx, main.obs), logging_steps), trl_eval_rows(ctx, main.evals))
    for step in ctx.checkpoints:
        _write_trl_checkpoint(ctx, target / f"checkpoint-{step}", rows, step, logging_steps)
    _write_trl_tensorboard(ctx, target, attempts)


def _verl_names(ctx: Ctx) -> tuple[str, str]:
    return "verl_grpo_gsm8k", f"qwen2.5-3b-{ctx.spec.pattern.replace('_', '-')}-s{ctx.spec.seed}"


def _verl_checkpoints(ctx: Ctx, target: Path) -> None:
    if not ctx.checkpoints:
        return
    project, experiment = _verl_names(ctx)
    root = target / "checkpoints" / project / experiment
    for step in ctx.checkpoints:
        _tiny_checkpoint(root / f"global_step_{step}" / "actor" / "huggingface")
    (root / "latest_checkpointed_iteration.txt").write_text(str(ctx.checkpoints[-1]), encoding="utf-8")


def _verl_overrides(ctx: Ctx) -> list[str]:
    prompts, group = _batch(ctx)
    use_kl = ctx.beta > 0
    project, experiment = _verl_names(ctx)
    saves = ctx.all_saves[0] if ctx.all_saves else -1
    logger = "['console','file']" if ctx.spec.format == "jsonl" else "['console','tensorboard']"
    return [
        "algorithm.adv_estimator=grpo", f"data.train_batch_size={prompts}", "data.max_prompt_length=512",
        f"data.max_response_length={int(ctx.opt('max_completion_length', 1024))}",
        "actor_rollout_ref.model.path=Qwen/Qwen2.5-3B-Instruct", "actor_rollout_ref.actor.optim.lr=1e-6",
        f"actor_rollout_ref.actor.ppo_mini_batch_size={max(1, prompts // 4)}",
        f"actor_rollout_ref.actor.use_kl_loss={use_kl}",
        f"actor_rollout_ref.actor.kl_loss_coef={ctx.beta / 40 if use_kl else 0.001}",
        "actor_rollout_ref.actor.kl_loss_type=low_var_kl", "actor_rollout_ref.actor.entropy_coeff=0",
        f"actor_rollout_ref.rollout.n={group}", "actor_rollout_ref.rollout.name=vllm",
        f"trainer.logger={logger}",
        f"trainer.project_name={project}", f"trainer.experiment_name={experiment}", "trainer.n_gpus_per_node=8",
        f"trainer.save_freq={saves}", f"trainer.test_freq={ctx.eval_every or -1}",
        f"trainer.total_training_steps={ctx.planned}",
    ]


def _write_jsonl(ctx: Ctx, target: Path, attempts: list[_Attempt]) -> None:
    project, experiment = _verl_names(ctx)
    main = attempts[-1]  # verl's file logger opens its file with "wb": a resumed run keeps only its own steps
    lines = []
    for step, row in verl_rows(ctx, main.obs, main.evals, main.first):
        data = {k: _json_value(v) for k, v in row.items()}
        lines.append(json.dumps({"step": step, "data": data}, separators=(",", ":")))
    path = target / project / f"{experiment}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    config: dict[str, Any] = {}
    for item in _verl_overrides(ctx):
        key, value = item.split("=", 1)
        node = config
        parts = key.split(".")
        for part in parts[:-1]:
            node = node.setdefault(part, {})
        node[parts[-1]] = yaml.safe_load(value)
    hydra = target / "outputs" / "2026-11-18" / "22-01-07" / ".hydra"
    hydra.mkdir(parents=True)
    (hydra / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    (hydra / "overrides.yaml").write_text(yaml.safe_dump(list(_verl_overrides(ctx))), encoding="utf-8")
    _verl_checkpoints(ctx, target)


def _write_verl_tensorboard(ctx: Ctx, target: Path, attempts: list[_Attempt]) -> None:
    project, experiment = _verl_names(ctx)
    for number, attempt in enumerate(attempts):
        walls = _wall_times(ctx, attempt.obs["step_time"], attempt.hours)
        points = []
        for step, row in verl_rows(ctx, attempt.obs, attempt.evals, attempt.first, attempt.last):
            wall = float(walls[max(step, 1) - 1]) - (float(attempt.obs["step_time"][0]) if step == 0 else 0.0)
            points.append((wall, step, row))
        start = points[0][0] - 20.0
        _write_events(target / "tensorboard_log" / project / experiment / _tb_name(start, 2291 + number), start, points)
    _verl_checkpoints(ctx, target)


def _verl_value(rng: np.random.Generator, value: Any) -> str:
    if isinstance(value, int):
        return f"np.int64({value})" if rng.random() < 0.5 else str(value)
    number = float(value)
    if rng.random() < 0.75:
        return f"np.float64({number!r})"
    return "nan" if math.isnan(number) else f"{number:.3f}"


def _write_verl_console(ctx: Ctx, target: Path, attempts: list[_Attempt]) -> None:
    rng = np.random.default_rng([ctx.spec.seed, 77])
    prefix = "\x1b[36m(TaskRunner pid=2291)\x1b[0m "
    lines = ["commit:", "4f2c9e1a7d6b0c3e5f8a9b1c2d3e4f5a6b7c8d9e", "", "command:",
             "python3 -m verl.trainer.main_ppo " + " ".join(_verl_overrides(ctx)), ""]
    for number, attempt in enumerate(attempts):
        pid = 2291 + 1000 * number
        prefix = f"\x1b[36m(TaskRunner pid={pid})\x1b[0m "
        lines.append(f"2026-11-18 22:0{number}:12,441\tINFO worker.py:1841 -- Started a local Ray instance.")
        lines.append(f"{prefix}Size of train dataloader: 58, Size of val dataloader: 1")
        lines.append(f"{prefix}Total training steps: {ctx.planned}")
        if attempt.first > 1:
            folder = f"checkpoints/{'/'.join(_verl_names(ctx))}/global_step_{attempt.first - 1}"
            lines.append(f"{prefix}Load from checkpoint folder: {folder}")
            lines.append(f"{prefix}Setting global step to {attempt.first - 1}")
            lines.append(f"{prefix}Resuming from {folder}")
        for step, row in verl_rows(ctx, attempt.obs, attempt.evals, attempt.first, attempt.last):
            body = " - ".join(f"{k}:{_verl_value(rng, v)}" for k, v in row.items())
            lines.append(f"{prefix}step:{step} - {body}")
            if step % 37 == 0:
                lines.append(f"\x1b[36m(WorkerDict pid={pid + 226})\x1b[0m INFO 11-18 23:12:04 [block_pool.py:321] "
                             "Successfully reset prefix cache")
            if step in ctx.all_saves and step <= attempt.last:
                folder = f"checkpoints/{'/'.join(_verl_names(ctx))}/global_step_{step}"
                lines.append(f"{prefix}local_global_step_folder: {folder}")
        if number < len(attempts) - 1:
            lines += [
                "\x1b[36m(WorkerDict pid=2517)\x1b[0m [rank3]:[E1118 23:40:11 ProcessGroupNCCL.cpp:616] Watchdog "
                "caught collective operation timeout: WorkNCCL(SeqNum=48211, OpType=ALLREDUCE) ran for 600021 "
                "milliseconds",
                "Traceback (most recent call last):",
                '  File "/opt/verl/verl/trainer/main_ppo.py", line 42, in main',
                "ray.exceptions.RayTaskError(DistBackendError): ray::TaskRunner.run()",
                "",
            ]
    (target / "train.log").write_text("\n".join(lines) + "\n", encoding="utf-8")
    _verl_checkpoints(ctx, target)


_TRL_CLEAR = "\r" + " " * 80 + "\r"


def _bar(step: int, total: int, elapsed: float, per_step: float) -> str:
    fill = 10 * step / total
    full = int(fill)
    partial = " ▏▎▍▌▋▊▉"[int(8 * (fill - full))] if full < 10 else ""
    bar = ("█" * full + partial).ljust(10)
    remaining = max(0.0, (total - step) * per_step)

    def clock(seconds: float) -> str:
        minutes, sec = divmod(int(seconds), 60)
        hours, minutes = divmod(minutes, 60)
        return f"{hours:d}:{minutes:02d}:{sec:02d}" if hours else f"{minutes:02d}:{sec:02d}"

    times = f"[{clock(elapsed)}<{clock(remaining)}, {per_step:5.2f}s/it]"
    return f"\r{100 * step // total:3d}%|{bar}| {step}/{total} {times}"


def _console_dict(row: Row, strings: bool) -> str:
    shown = {k: v for k, v in row.items() if k != "step"}
    if strings:
        shown = {k: (f"{v:.4g}" if isinstance(v, float) else v) for k, v in shown.items()}
    return repr({k: (math.nan if v is None else v) for k, v in shown.items()})


def _write_trl_console(ctx: Ctx, target: Path, attempts: list[_Attempt]) -> None:
    logging_steps = ctx.spec.logging_steps
    strings = bool(ctx.opt("string_values", ctx.spec.seed % 2 == 1))
    out: list[str] = []
    prompts, group = _batch(ctx)
    args = _training_args(ctx, logging_steps)
    settings = ", ".join(f"{k}={args[k]}" for k in ("beta", "num_generations", "max_completion_length", "max_steps",
                                                       "logging_steps", "loss_type") if k in args)
    for number, attempt in enumerate(attempts):
        cols = trl_columns(ctx, attempt.obs)
        train = trl_rows(ctx, cols, logging_steps, attempt.first, attempt.last)
        by_step = {int(r["step"]): r for r in train}
        evals = {int(r["step"]): r for r in trl_eval_rows(ctx, attempt.evals, attempt.first, attempt.last)}
        out.append(f"2026-11-20 09:14:0{number} [INFO] train_{ctx.recipe.kind}: Model: Qwen/Qwen2.5-1.5B-Instruct\n")
        config_name = "DPOConfig" if ctx.recipe.kind == "dpo" else "GRPOConfig"
        out.append(f"2026-11-20 09:14:0{number} [INFO] train_{ctx.recipe.kind}: {config_name}: {settings}\n")
        out.append("\rLoading checkpoint shards:   0%|          | 0/2 [00:00<?, ?it/s]"
                   "\rLoading checkpoint shards: 100%|██████████| 2/2 [00:01<00:00,  1.62it/s]\n")
        if attempt.first > 1:
            out.append(f"Continuing training from checkpoint, will skip to saved global_step\n"
                       f"  Continuing training from global step {attempt.first - 1}\n")
        out += ["***** Running training *****\n", "  Num examples = 7,473\n", "  Num Epochs = 1\n",
                "  Instantaneous batch size per device = 8\n",
                f"  Total train batch size (w. parallel, distributed & accumulation) = {prompts * group}\n",
                "  Gradient Accumulation steps = 4\n", f"  Total optimization steps = {ctx.planned:,}\n",
                "  Number of trainable parameters = 18,464,768\n"]
        step_time = attempt.obs.get("step_time", _full(ctx.n, 4.0))
        elapsed = 0.0
        out.append(_bar(0, ctx.planned, 0.0, 0.0))  # HF redraws a fresh bar at 0, then jumps to the resumed step
        for step in range(attempt.first, attempt.last + 1):
            per = float(step_time[step - 1])
            elapsed += per
            if ctx.recipe.kind == "grpo" and step % 3 == 0:
                out.append("\n\rProcessed prompts:   0%|          | 0/64 [00:00<?, ?it/s]"
                           "\rProcessed prompts: 100%|██████████| 64/64 [00:02<00:00, 28.1it/s]\n")
            out.append(_bar(step, ctx.planned, elapsed, per))
            for row in (by_step.get(step), evals.get(step)):
                if row is None:
                    continue
                out.append(_TRL_CLEAR)
                out.append(_console_dict(row, strings) + "\n")
                out.append(_bar(step, ctx.planned, elapsed, per))
        if number < len(attempts) - 1:
            out.append("\nTraceback (most recent call last):\n  File \"train_grpo.py\", line 88, in <module>\n"
                       "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.31 GiB\n")
    out.append("\n")
    name = "nohup.out" if ctx.spec.seed % 3 == 2 else "train.log"
    (target / name).write_text("".join(out), encoding="utf-8")
    for step in ctx.checkpoints:
        _tiny_checkpoint(target / f"checkpoint-{step}")
        (target / f"checkpoint-{step}" / "adapter_config.json").write_text(
            json.dumps({"base_model_name_or_path": "Qwen/Qwen2.5-1.5B-Instruct", "peft_type": "LORA", "r": 16},
                       indent=2) + "\n", encoding="utf-8")


def _write_csv(ctx: Ctx, target: Path, attempts: list[_Attempt]) -> None:
    lines: list[str] = []
    for attempt in attempts:
        header, rows = rfs_rows(ctx, attempt.obs, attempt.evals, attempt.first, attempt.last)
        if not lines:
            lines.append(",".join(header))
        lines += [",".join(r) for r in rows]
    (target / "rlvr_grpo_metrics.csv").write_bytes(("\r\n".join(lines) + "\r\n").encode("utf-8"))
    if ctx.checkpoints:
        folder = target / "checkpoints"
        folder.mkdir()
        for step in ctx.checkpoints:
            (folder / f"qwen3-0.6B-rlvr-grpo-step{step:05d}.pth").write_bytes(b"")


def _write_nvidia_smi(ctx: Ctx, path: Path, obs: Mapping[str, Array]) -> None:
    """An `nvidia-smi --query-gpu=... --format=csv -lms 2000` log of two GPUs: generation draws less power."""
    rng = np.random.default_rng([ctx.spec.seed, 99])
    header = ("timestamp, index, name, utilization.gpu [%], utilization.memory [%], memory.used [MiB], "
              "memory.total [MiB], power.draw [W], power.limit [W], temperature.gpu, clocks.sm [MHz]")
    step_time = obs["step_time"]
    gen = obs["time_gen"]
    interval = 2.0
    limit = min(len(step_time), int(ctx.opt("smi_steps", 400)))
    ends = np.cumsum(step_time[:limit])
    times = np.arange(0.0, float(ends[-1]), interval)
    index = np.searchsorted(ends, times, side="right")
    index = np.minimum(index, limit - 1)
    into = times - (ends[index] - step_time[index])
    generating = into < gen[index]
    lines = [header]
    start = _START + timedelta(hours=ctx.spec.seed % 7)
    for k, when in enumerate(times):
        stamp = (start + timedelta(seconds=float(when))).strftime("%Y/%m/%d %H:%M:%S.%f")[:-3]
        for gpu in (0, 1):
            if generating[k]:
                util, mem, power, temp = rng.normal(72, 7), rng.normal(36, 5), rng.normal(290, 25), rng.normal(63, 1.2)
            else:
                util, mem, power, temp = rng.normal(97, 2), rng.normal(62, 5), rng.normal(650, 22), rng.normal(72, 1.2)
            lines.append(
                f"{stamp}, {gpu}, NVIDIA H100 80GB HBM3, {min(100, max(0, round(util)))} %, "
                f"{min(100, max(0, round(mem)))} %, "
                f"{int(rng.normal(71200, 300))} MiB, 81559 MiB, {power:.2f} W, 700.00 W, {round(temp)}, 1980 MHz")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


_WRITERS: dict[str, Callable[[Ctx, Path, list[_Attempt]], None]] = {
    "trl_state": _write_trl_state, "trl_live": _write_trl_live, "jsonl": _write_jsonl,
    "verl_console": _write_verl_console, "trl_console": _write_trl_console, "csv": _write_csv,
}


def write_run(spec: Generated, target: Path) -> Path:
    """Write the run directory for a spec, deterministically.

    Args:
        spec: pattern, format, seed, steps, logging interval and recipe options.
        target: the run directory to create (it must not exist or be empty).

    Returns:
        The run directory (`target`), ready for `assessor.load_run`.

    Raises:
        ConfigError: unknown pattern, a format the pattern cannot be written in, or bad options.
    """
    ctx = _context(spec)
    if spec.format == "trl_state" and str(ctx.opt("layout", "checkpoints")) == "checkpoints" and not ctx.checkpoints:
        raise ConfigError("a trl_state run needs checkpoints, or layout: top")
    target = Path(target)
    if target.exists() and any(target.iterdir()):
        raise ConfigError(f"{target}: not empty; write_run only writes into a new directory")
    target.mkdir(parents=True, exist_ok=True)
    scenario = ctx.recipe.build(ctx)
    attempts = _attempts(ctx, scenario.latent)
    if spec.format == "tensorboard":
        if ctx.framework == "verl":
            _write_verl_tensorboard(ctx, target, attempts)
        else:
            _write_trl_tensorboard(ctx, target, attempts)
            for step in ctx.checkpoints:
                _tiny_checkpoint(target / f"checkpoint-{step}")
    else:
        _WRITERS[spec.format](ctx, target, attempts)
    if ctx.opt("nvidia_smi", False) and isinstance(scenario.latent, Grpo):
        _write_nvidia_smi(ctx, target / "nvidia-smi.csv", attempts[-1].obs)
    return target


# ====================================================================================== cache
def spec_key(spec: Generated) -> str:
    """A short hash of the spec and the generator version (the cache key)."""
    payload = json.dumps({"v": GENERATOR_VERSION, "spec": spec.model_dump(mode="json")}, sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


def generate_all(cases: Iterable[Case | tuple[Path, Case]], cache_dir: Path) -> dict[str, Path]:
    """Write every generated case's run under `cache_dir`, reusing runs whose spec has not changed.

    Each run lives in `<cache_dir>/<case name>-<hash of spec and GENERATOR_VERSION>`; it is written to a
    temporary folder first and renamed, so a present folder is always complete. Older versions of a case's
    run are removed.

    Args:
        cases: cases (or the `(file, case)` pairs `load_cases` returns); real-run cases are skipped.
        cache_dir: where the runs are kept.

    Returns:
        Case name -> run directory.
    """
    cache_dir = Path(cache_dir)
    cache_dir.mkdir(parents=True, exist_ok=True)
    out: dict[str, Path] = {}
    for item in cases:
        case = item[1] if isinstance(item, tuple) else item
        if case.run is None:
            continue
        final = cache_dir / f"{case.name}-{spec_key(case.run)}"
        if not final.is_dir():
            older = re.compile(re.escape(case.name) + r"-[0-9a-f]{16}")
            for stale in cache_dir.glob(f"{case.name}-*"):
                if stale.is_dir() and older.fullmatch(stale.name):
                    shutil.rmtree(stale, ignore_errors=True)
            scratch = Path(tempfile.mkdtemp(prefix=f".{case.name}-", dir=cache_dir))
            try:
                write_run(case.run, scratch / "run")
                (scratch / "run").rename(final)
            finally:
                shutil.rmtree(scratch, ignore_errors=True)
        out[case.name] = final
    return out


# ====================================================================================== the labelled set
@dataclass(frozen=True)
class Planned:
    """One case of the synthetic set before labelling: a spec plus extra tags."""

    name: str
    spec: Generated
    tags: tuple[str, ...] = ()


def _plan(name: str, pattern: str, fmt: Format, seed: int, steps: int, logging_steps: int = 1,
          tags: Sequence[str] = (), **options: float | int | str | bool) -> Planned:
    spec = Generated(pattern=pattern, format=fmt, seed=seed, steps=steps, logging_steps=logging_steps, options=options)
    return Planned(name, spec, tuple(tags))


def case_plan() -> list[Planned]:
    """The synthetic set: every pattern in at least two formats and seeds, healthy runs in many variants."""
    p = _plan
    return [
        # --- healthy, varied in framework, format, noise, KL term, logging interval, components
        p("healthy-trl-state-s1", "healthy", "trl_state", 1, 400, 10),
        p("healthy-trl-live-s2", "healthy", "trl_live", 2, 520, 10, components=True),
        p("healthy-tb-trl-nokl-s3", "healthy", "tensorboard", 3, 300, 5, beta=0.0, noise="high"),
        p("healthy-tb-verl-s4", "healthy", "tensorboard", 4, 250, framework="verl", eval_every=25),
        p("healthy-jsonl-s5", "healthy", "jsonl", 5, 300, noise="low", eval_every=20),
        p("healthy-verl-console-nokl-s6", "healthy", "verl_console", 6, 200, beta=0.0, noise="high"),
        p("healthy-trl-console-s7", "healthy", "trl_console", 7, 200, 5, beta=0.0, components=True),
        p("healthy-csv-s8", "healthy", "csv", 8, 500, eval_every=50, noise="high"),
        p("healthy-trl-state-top-s9", "healthy", "trl_state", 9, 360, 1, layout="top", checkpoints=False, noise="low"),
        p("kl_up_reward_up-trl-state-s1", "kl_up_reward_up", "trl_state", 1, 400, 10),
        p("kl_up_reward_up-jsonl-s2", "kl_up_reward_up", "jsonl", 2, 300),
        p("kl_up_reward_up-csv-s3", "kl_up_reward_up", "csv", 3, 400, eval_every=50),
        p("kl_stable_reward_up-tb-trl-s1", "kl_stable_reward_up", "tensorboard", 1, 400, 10),
        p("kl_stable_reward_up-verl-console-s2", "kl_stable_reward_up", "verl_console", 2, 250),
        p("kl_stable_reward_up-trl-console-s3", "kl_stable_reward_up", "trl_console", 3, 300, 10),
        p("pg_loss_declining-verl-console-s1", "pg_loss_declining", "verl_console", 1, 300),
        p("pg_loss_declining-trl-state-s2", "pg_loss_declining", "trl_state", 2, 300, 5),
        p("pg_loss_oscillating-trl-console-s1", "pg_loss_oscillating", "trl_console", 1, 300, 10),
        p("pg_loss_oscillating-jsonl-s2", "pg_loss_oscillating", "jsonl", 2, 300),
        p("kl_spike_transient-trl-state-s1", "kl_spike_transient", "trl_state", 1, 400, 1, save_steps=50),
        p("kl_spike_transient-tb-verl-s2", "kl_spike_transient", "tensorboard", 2, 300, framework="verl"),
        p("kl_spike_transient-jsonl-s3", "kl_spike_transient", "jsonl", 3, 240),
        p("transient_dip-trl-live-s1", "transient_dip", "trl_live", 1, 490, 10),
        p("transient_dip-verl-console-s2", "transient_dip", "verl_console", 2, 300),
        p("transient_dip-csv-s3", "transient_dip", "csv", 3, 400),
        p("early-trl-live-s1", "early", "trl_live", 1, 33, 1, save_steps=10),
        p("early-verl-console-s2", "early", "verl_console", 2, 20, checkpoints=False),
        p("early-csv-s3", "early", "csv", 3, 25, checkpoints=False),
        p("early-trl-console-s4", "early", "trl_console", 4, 40, 2, beta=0.0, checkpoints=False),
        p("generation_bound-jsonl-s1", "generation_bound", "jsonl", 1, 300),
        p("generation_bound-verl-console-s2", "generation_bound", "verl_console", 2, 200, gen_share=0.72),
        p("generation_bound-trl-live-smi-s3", "generation_bound", "trl_live", 3, 215, 5, nvidia_smi=True,
          gen_share=0.78, tags=["nvidia_smi"]),
        p("resumed_duplicates-tb-trl-s1", "resumed_duplicates", "tensorboard", 1, 400, 10, save_steps=50),
        p("resumed_duplicates-verl-console-s2", "resumed_duplicates", "verl_console", 2, 300, save_steps=50),
        p("resumed_duplicates-csv-degrading-s3", "resumed_duplicates", "csv", 3, 400, save_steps=50,
          underlying="kl_up_reward_down", beta=0.04),
        p("clip_asymmetry-benign-trl-state-s3", "clip_asymmetry", "trl_state", 3, 300, 5, benign=True,
          tags=["benign"]),
        p("dpo_healthy-trl-state-s1", "dpo_healthy", "trl_state", 1, 150, 1, save_steps=25),
        p("dpo_healthy-tb-s2", "dpo_healthy", "tensorboard", 2, 200, 2),
        p("dpo_healthy-trl-console-s3", "dpo_healthy", "trl_console", 3, 120, 1, checkpoints=False),
        # --- converged / run its course
        p("kl_stable_reward_flat-trl-state-s1", "kl_stable_reward_flat", "trl_state", 1, 400, 10),
        p("kl_stable_reward_flat-jsonl-s2", "kl_stable_reward_flat", "jsonl", 2, 300),
        p("kl_stable_reward_flat-csv-s3", "kl_stable_reward_flat", "csv", 3, 400),
        p("kl_up_reward_flat-tb-trl-s1", "kl_up_reward_flat", "tensorboard", 1, 500, 10),
        p("kl_up_reward_flat-verl-console-s2", "kl_up_reward_flat", "verl_console", 2, 300),
        p("kl_up_reward_flat-trl-console-s3", "kl_up_reward_flat", "trl_console", 3, 400, 10, checkpoints=False),
        # --- learning signal gone / setup failures
        p("reward_saturation-trl-state-s1", "reward_saturation", "trl_state", 1, 300, 5),
        p("reward_saturation-jsonl-s2", "reward_saturation", "jsonl", 2, 250),
        p("reward_saturation-csv-s3", "reward_saturation", "csv", 3, 300),
        p("identical_rewards-trl-console-s1", "identical_rewards", "trl_console", 1, 60, 5),
        p("identical_rewards-verl-console-s2", "identical_rewards", "verl_console", 2, 40),
        p("identical_rewards-tb-trl-s3", "identical_rewards", "tensorboard", 3, 80, 2, value=1.0),
        p("truncation-trl-state-s1", "truncation", "trl_state", 1, 300, 10, max_completion_length=512),
        p("truncation-jsonl-s2", "truncation", "jsonl", 2, 250, max_completion_length=512),
        p("dpo_stuck-trl-state-s1", "dpo_stuck", "trl_state", 1, 120, 1, save_steps=25),
        p("dpo_stuck-trl-console-s2", "dpo_stuck", "trl_console", 2, 100, 1),
        # --- degrading: roll back (or stop when no good checkpoint is on disk)
        p("kl_up_reward_down-trl-state-s1", "kl_up_reward_down", "trl_state", 1, 400, 10),
        p("kl_up_reward_down-jsonl-s2", "kl_up_reward_down", "jsonl", 2, 300),
        p("kl_up_reward_down-csv-nockpt-s3", "kl_up_reward_down", "csv", 3, 400, checkpoints=False,
          tags=["no_checkpoints"]),
        p("pg_loss_sign_reversal-verl-console-s1", "pg_loss_sign_reversal", "verl_console", 1, 300),
        p("pg_loss_sign_reversal-trl-state-s2", "pg_loss_sign_reversal", "trl_state", 2, 400, 10),
        p("pg_loss_blowup-jsonl-s1", "pg_loss_blowup", "jsonl", 1, 300),
        p("pg_loss_blowup-tb-trl-s2", "pg_loss_blowup", "tensorboard", 2, 400, 5),
        p("component_hacking-trl-state-s1", "component_hacking", "trl_state", 1, 400, 10),
        p("component_hacking-csv-s2", "component_hacking", "csv", 2, 500, eval_every=50),
        p("component_hacking-stalls-trl-console-s3", "component_hacking", "trl_console", 3, 300, 5,
          correctness="stalls", tags=["stalls"]),
        p("entropy_collapse-trl-live-s1", "entropy_collapse", "trl_live", 1, 415, 10, save_total_limit=0),
        p("entropy_collapse-verl-console-s2", "entropy_collapse", "verl_console", 2, 300),
        p("entropy_blowup-jsonl-s1", "entropy_blowup", "jsonl", 1, 240),
        p("entropy_blowup-csv-s2", "entropy_blowup", "csv", 2, 300, beta=0.04),
        p("length_collapse-trl-state-s1", "length_collapse", "trl_state", 1, 300, 5),
        p("length_collapse-tb-verl-s2", "length_collapse", "tensorboard", 2, 250, framework="verl"),
        p("length_explosion-verl-console-s1", "length_explosion", "verl_console", 1, 300),
        p("length_explosion-trl-live-limit-s2", "length_explosion", "trl_live", 2, 430, 10,
          tags=["save_total_limit"]),
        p("length_bimodal-trl-console-s1", "length_bimodal", "trl_console", 1, 400, 10),
        p("length_bimodal-jsonl-s2", "length_bimodal", "jsonl", 2, 300),
        p("clip_asymmetry-trl-state-s1", "clip_asymmetry", "trl_state", 1, 400, 10),
        p("clip_asymmetry-tb-trl-s2", "clip_asymmetry", "tensorboard", 2, 300, 5),
        p("kl_blowup-trl-live-s1", "kl_blowup", "trl_live", 1, 410, 10, save_total_limit=0),
        p("kl_blowup-jsonl-s2", "kl_blowup", "jsonl", 2, 300),
        p("kl_blowup-csv-s3", "kl_blowup", "csv", 3, 400),
        p("eval_peak-trl-state-s1", "eval_peak", "trl_state", 1, 500, 10),
        p("eval_peak-verl-console-s2", "eval_peak", "verl_console", 2, 300),
        p("eval_peak-csv-s3", "eval_peak", "csv", 3, 500),
        p("nan_divergence-trl-state-s1", "nan_divergence", "trl_state", 1, 300, 5),
        p("nan_divergence-jsonl-nockpt-s2", "nan_divergence", "jsonl", 2, 250, checkpoints=False,
          tags=["no_checkpoints"]),
        p("nan_divergence-tb-verl-s3", "nan_divergence", "tensorboard", 3, 300, framework="verl"),
    ]


def label(planned: Planned) -> Case:
    """A labelled case: the spec plus the labels its recipe's ground truth gives."""
    answer = truth(planned.spec)
    spec = planned.spec
    framework = framework_of(spec)
    tags = [spec.pattern, spec.format, framework, *planned.tags]
    if not checkpoint_steps(spec):
        tags.append("no_checkpoints")
    return Case(
        name=planned.name, run=spec, accept=list(answer.accept), preferred=answer.preferred,
        rollback_window=answer.rollback_window, onset_step=answer.onset_step, healthy=answer.healthy,
        tags=list(dict.fromkeys(tags)), reasoning=answer.reasoning,
    )


def write_cases(path: Path, plan: Sequence[Planned] | None = None) -> list[Case]:
    """Write the labelled synthetic case file (labels from the recipes, never from a judge)."""
    cases = [label(item) for item in (plan if plan is not None else case_plan())]
    documents = []
    for case in cases:
        data = case.model_dump(mode="json", exclude_none=True, exclude_defaults=False)
        run = data.pop("run")
        ordered: dict[str, Any] = {"name": data.pop("name"), "run": run}
        ordered.update(data)
        documents.append(ordered)
    header = (
        "# Labelled synthetic runs. Generated by `python -m assessor.evals.generate evals/synthetic.yaml` from\n"
        "# assessor/evals/generate.py (case_plan); every label comes from the pattern's own ground truth.\n"
        "# The runs themselves are written on demand by assessor.evals.generate.generate_all.\n"
    )
    text = yaml.safe_dump({"cases": documents}, sort_keys=False, width=118, allow_unicode=True)
    Path(path).write_text(header + text, encoding="utf-8")
    return cases


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m assessor.evals.generate [CASES.yaml]`: rewrite the synthetic case file."""
    args = list(sys.argv[1:] if argv is None else argv)
    path = Path(args[0]) if args else Path("evals/synthetic.yaml")
    cases = write_cases(path)
    healthy = sum(c.healthy for c in cases)
    sys.stdout.write(f"wrote {len(cases)} cases ({healthy} healthy) to {path}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

