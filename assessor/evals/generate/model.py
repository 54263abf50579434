"""What a generated run is made of: its ground truth, its latent curves, the recipe and the per-spec context.

`Truth` is the right answer a recipe states for a run; `Grpo` and `Dpo` are the clean per-step curves the
simulation adds noise to; a `Recipe` builds both (a `Scenario`) from a `Ctx`, which carries the spec, the
steps reached and planned, the checkpoints and the random streams. The formats, the fictional run's clock and
host, and a few helpers every stage uses live here too.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from assessor.errors import ConfigError
from assessor.evals.cases import Generated
from assessor.judge.models import Decision

Array = npt.NDArray[np.float64]
Row = dict[str, Any]
Format = Literal["trl_state", "trl_live", "tensorboard", "jsonl", "jsonl_flat", "verl_console", "trl_console", "csv"]
FORMATS: tuple[Format, ...] = (
    "trl_state", "trl_live", "tensorboard", "jsonl", "jsonl_flat", "verl_console", "trl_console", "csv",
)
GRPO_FORMATS: tuple[Format, ...] = FORMATS
# The framework whose keys and conventions a format carries (`tensorboard` is written for trl or verl).
FORMAT_FRAMEWORK: dict[Format, str] = {
    "trl_state": "trl", "trl_live": "trl", "trl_console": "trl", "jsonl_flat": "trl", "jsonl": "verl",
    "verl_console": "verl", "csv": "rfs",
}

VOCAB_SIZE = 151936  # Qwen2.5 / Qwen3 tokenizers: entropy cannot exceed ln(151936) = 11.93 nats
RUN_START = datetime(2026, 11, 20, 9, 14, 3)  # local wall clock of the fictional runs (nvidia-smi stamps)
RUN_START_TS = datetime(2026, 11, 20, 9, 14, 3, tzinfo=UTC).timestamp()  # epoch seconds, independent of the TZ
HOST = "gpu-node-7"


@dataclass(frozen=True)
class Truth:
    """The right answer for one generated run, as the recipe knows it.

    Attributes:
        accept: every decision a careful practitioner would accept.
        preferred: the single best decision, or None when several are equally right.
        onset_step: first step where the problem is visible (None when there is none).
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
    eval_identical: bool = False  # the held-out eval returns the very same number every time (a broken eval)
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
    drift: Array | None = None  # log-prob change of both completions beyond the margin (likelihood displacement)
    tokens: float = 330.0  # mean tokens of a completion (the reference log-probs scale with it)
    quality: Array | None = None  # what the model is worth (for the truth only): a DPO run has no held-out curve


Latent = Grpo | Dpo


@dataclass
class Scenario:
    """A recipe's output: the clean curves and the right answer."""

    latent: Latent
    truth: Truth


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
    def finished(self) -> bool:
        """The run has reached its planned total steps (and its log says so)."""
        return bool(self.spec.options.get("finished", self.recipe.finished))

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


Builder = Callable[[Ctx], Scenario]


@dataclass(frozen=True)
class Recipe:
    """One named pattern: how to build its curves and what the right answer is.

    Attributes:
        name: the pattern's name (the key in `PATTERNS`).
        summary: one line a practitioner would recognise.
        kind: "grpo" or "dpo" (which simulation and which keys).
        excluded: formats (`jsonl`, ...), frameworks (`trl`, `verl`, `rfs`) or a format with its framework
            (`tensorboard:verl`) the pattern cannot be written in, each with the reason: the signal that
            decides its label does not exist there. Every other format writes it (`formats`).
        build: curves and ground truth for one spec.
        planned_factor: planned total steps as a multiple of the steps reached (the run is live).
        finished: the run has reached its planned total steps (planned = steps reached) and says so the way its
            framework does; the option `finished` overrides it.
        beta: default KL coefficient (TRL units); 0 means no KL term is logged.
        eval_every: default held-out evaluation interval for a spec (0: none).
        resumes: the run was interrupted and resumed (the log holds the overlap twice).
        off_policy: PPO ratios are clipped (several updates per generation batch).
        batch: (prompts, completions per prompt) of a step when the spec does not say (else the framework's).
    """

    name: str
    summary: str
    kind: Literal["grpo", "dpo"]
    excluded: Mapping[str, str]
    build: Builder
    planned_factor: float = 2.5
    finished: bool = False
    beta: float = 0.04
    eval_every: Callable[[Ctx], int] = lambda ctx: 0
    resumes: bool = False
    off_policy: bool = False
    batch: tuple[int, int] | None = None

    def exclusion(self, fmt: Format, framework: str | None = None) -> str | None:
        """Why the pattern cannot be written in `fmt` (with `framework`, for tensorboard), or None when it can."""
        framework = framework or FORMAT_FRAMEWORK.get(fmt)
        if framework is None:
            return self.excluded.get(fmt)
        return self.excluded.get(fmt) or self.excluded.get(f"{fmt}:{framework}") or self.excluded.get(framework)

    @property
    def formats(self) -> tuple[Format, ...]:
        """The formats the pattern can be written in (tensorboard when either of its frameworks can)."""
        return tuple(f for f in FORMATS if self._writable(f))

    def _writable(self, fmt: Format) -> bool:
        if fmt == "tensorboard":
            return any(self.exclusion(fmt, framework) is None for framework in ("trl", "verl"))
        return self.exclusion(fmt) is None


def batch_shape(ctx: Ctx) -> tuple[int, int]:
    """(prompts, completions per prompt) of one optimizer step."""
    defaults = ctx.recipe.batch or {"trl": (8, 8), "verl": (64, 5), "rfs": (1, 8)}[ctx.framework]
    prompts = int(ctx.opt("prompts", defaults[0]))
    group = int(ctx.opt("num_generations", defaults[1]))
    return prompts, group


def constant_curve(n: int, value: float) -> Array:
    """The same value at every one of `n` steps."""
    return np.full(n, value, dtype=np.float64)


def nice_interval(x: float) -> int:
    """The largest round number (1, 2, 5, 10, 20, 25, 50, ...) not above x (at least 1)."""
    choices = [1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 2500, 5000]
    return max([c for c in choices if c <= x] or [1])


def seeded_rng(spec: Generated, stream: int) -> np.random.Generator:
    """A random stream of the spec: its seed and pattern name, and `stream` (1 latent curves, 2 noise, ...)."""
    pattern = int.from_bytes(hashlib.sha256(spec.pattern.encode()).digest()[:4], "little")
    return np.random.default_rng([spec.seed, pattern, stream])
