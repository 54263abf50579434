"""The judges of an eval: built from their names, with their baseline, replay and price settings.

Cheap judges (rules, thresholds, the rldoctor peer, fake, cassette replays) are also replayed on truncated runs for
the detection delay; live LLM judges only when asked. LLM judges record to and replay from cassettes. `thresholds`
and `rldoctor` are eval-only judges (baselines to measure against), not in the `assessor assess` registry.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assessor.errors import ConfigError
from assessor.judge import JUDGES, KEY_VARIABLES, Judge, get_judge, resolve_judge_name

CHEAP_JUDGES: frozenset[str] = frozenset({"rules", "fake", "thresholds"})


@dataclass
class EvalJudge:
    """A judge as the harness runs it.

    Attributes:
        judge: the judge itself.
        spec: the name it was asked for on the command line.
        baseline: shown as the baseline column.
        cheap: replayed on truncated runs for the detection delay.
        price: USD per million input and output tokens, to estimate the cost of judgements whose usage has
            tokens but no cost.
    """

    judge: Judge
    spec: str
    baseline: bool = False
    cheap: bool = True
    price: tuple[float, float] | None = None

    @property
    def name(self) -> str:
        """The judge's reported name."""
        return self.judge.name


def build_judge(
    spec: str, *, baseline: bool = False, cassettes: Path | None = None, record: bool = False,
    replay_llm: bool = False, env: Mapping[str, str] | None = None, **options: object,
) -> EvalJudge:
    """Make the judge named `spec` for an eval.

    Args:
        spec: `rules`, `fake`, `thresholds`, `rldoctor`, `replay:<cassette dir>`, `anthropic[:MODEL]`,
            `openai[:MODEL]`, `auto`.
        baseline: mark it as the baseline column.
        cassettes: the cassette directory LLM judges record to and replay from.
        record: call LLM judges live even where a cassette exists (and overwrite it).
        replay_llm: also replay live LLM judges on truncated runs (one call per truncation point).
        env: the environment to read API keys from (default: `os.environ`).
        **options: passed to `get_judge` (e.g. `images=False`).

    Raises:
        ConfigError: an unknown judge, a missing key for a live LLM judge, a missing cassette, or `rldoctor`
            without the rldoctor package (the message gives the install command).
    """
    from assessor.evals.cassette import Cassette, RecordingJudge, ReplayJudge

    if spec == "thresholds":
        from assessor.evals.baseline import ThresholdsJudge

        return EvalJudge(ThresholdsJudge(), spec, baseline)
    if spec == "rldoctor":
        from assessor.evals.peer_rldoctor import RldoctorJudge

        return EvalJudge(RldoctorJudge(), spec, baseline)
    if spec.startswith("replay:"):
        return EvalJudge(ReplayJudge(Cassette.open(Path(spec.removeprefix("replay:")))), spec, baseline)
    name = resolve_judge_name(spec, env)
    provider, _, model = name.partition(":")
    if provider not in KEY_VARIABLES:
        return EvalJudge(get_judge(name, env, **options), spec, baseline, cheap=provider in CHEAP_JUDGES)
    if cassettes is None:
        return EvalJudge(get_judge(name, env, **options), spec, baseline, cheap=replay_llm)
    if not model and provider in JUDGES:
        import importlib

        model = str(getattr(importlib.import_module(JUDGES[provider]), "DEFAULT_MODEL", ""))
    full = f"{provider}:{model}" if model else provider
    cassette = Cassette.for_judge(cassettes, full)
    if cassette.exists() and not record:
        return EvalJudge(ReplayJudge(cassette), spec, baseline)
    return EvalJudge(RecordingJudge(get_judge(full, env, **options), cassette), spec, baseline, cheap=replay_llm)


def build_judges(
    judges: Sequence[str], baselines: Sequence[str] = (), prices: Sequence[str] = (), **options: Any,
) -> list[EvalJudge]:
    """The judges of an eval, in column order: `judges`, then `baselines` (marked as such).

    Args:
        judges: judge names (see `build_judge`).
        baselines: judge names shown as baselines (usually `thresholds`).
        prices: `JUDGE=IN,OUT` (USD per million input and output tokens) for judges that report tokens but no
            cost; JUDGE is the judge's full name (`anthropic:claude-sonnet-4-6`), a replay counting as its judge.
        **options: passed to `build_judge` (cassettes, record, replay_llm, env, images).

    Raises:
        ConfigError: a bad judge name or price.
    """
    built = [*(build_judge(spec, **options) for spec in judges),
             *(build_judge(spec, baseline=True, **options) for spec in baselines)]
    for text in prices:
        name, price = parse_price(text)
        matched = [j for j in built if name in (j.spec, j.name, j.name.removesuffix(" (replay)"))]
        if not matched:
            raise ConfigError(f"--price {text}: no judge named {name!r} (judges: {', '.join(j.name for j in built)})")
        for j in matched:
            j.price = price
    return built


def parse_price(text: str) -> tuple[str, tuple[float, float]]:
    """`JUDGE=IN,OUT` as (judge, (USD per million input tokens, USD per million output tokens)).

    Raises:
        ConfigError: not in that form, or a negative price.
    """
    name, _, numbers = text.rpartition("=")
    parts = numbers.split(",")
    try:
        values = tuple(float(v) for v in parts)
    except ValueError:
        values = ()
    if not name or len(values) != 2 or min(values) < 0:
        raise ConfigError(f"--price {text!r}: use JUDGE=IN,OUT in USD per million tokens, e.g. "
                          "anthropic:claude-sonnet-4-6=3,15")
    return name, (values[0], values[1])
