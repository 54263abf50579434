"""Judges, looked up by name: `rules` (offline), `anthropic[:MODEL]`, `openai[:MODEL]`, `fake`, `verdicts:DIR`.

`verdicts:DIR` reads answers already written as `DIR/<case or run name>/verdict.json` (see `judge.verdicts`).

`auto` uses Anthropic when `ANTHROPIC_API_KEY` is set, else OpenAI when `OPENAI_API_KEY` is set, else the
rules judge. Provider modules are imported only when named, so their SDKs stay optional.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Mapping

from assessor.errors import ConfigError
from assessor.judge.base import Judge, JudgeRequest, JudgeResult
from assessor.judge.models import Decision, Evidence, Usage, Verdict

# name -> module exposing `make(model: str | None, **options) -> Judge`
JUDGES: dict[str, str] = {
    "rules": "assessor.judge.rules",
    "fake": "assessor.judge.fake",
    "anthropic": "assessor.judge.anthropic",
    "openai": "assessor.judge.openai",
    "verdicts": "assessor.judge.verdicts",
}
KEY_VARIABLES = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}

__all__ = [
    "JUDGES", "Decision", "Evidence", "Judge", "JudgeRequest", "JudgeResult", "Usage", "Verdict", "check_judge_spec",
    "get_judge",
    "resolve_judge_name",
]


def resolve_judge_name(spec: str, env: Mapping[str, str] | None = None) -> str:
    """`auto` made concrete from the environment; other names are returned unchanged."""
    env = os.environ if env is None else env
    if spec != "auto":
        return spec
    for provider, variable in KEY_VARIABLES.items():
        if env.get(variable):
            return provider
    return "rules"


def check_judge_spec(spec: str, env: Mapping[str, str] | None = None, flag: str = "--judge") -> tuple[str, str]:
    """The judge name and model `spec` stands for, checked without importing the judge (see `get_judge`).

    Raises:
        ConfigError: unknown name, or a provider whose API key variable is not set.
    """
    env = os.environ if env is None else env
    name, _, model = resolve_judge_name(spec, env).partition(":")
    if name not in JUDGES:
        raise ConfigError(f"unknown judge {spec!r}; use one of auto, {', '.join(JUDGES)} (e.g. anthropic:MODEL)")
    variable = KEY_VARIABLES.get(name)
    if variable and not env.get(variable):
        fix = "use --judge rules" if flag == "--judge" else f"leave out {flag}"
        raise ConfigError(f"{flag} {spec} needs {variable} in the environment; set it, or {fix}")
    return name, model


def get_judge(spec: str = "auto", env: Mapping[str, str] | None = None, **options: object) -> Judge:
    """The judge named by `spec` (`rules`, `fake`, `anthropic[:MODEL]`, `openai[:MODEL]`, `verdicts:DIR`, `auto`).

    `options` go to the provider's `make` (e.g. `images=False` for LLM judges); judges ignore what they
    do not use; `flag` (default `--judge`) is the option the user named the judge with, for the error messages.

    Raises:
        ConfigError: unknown name, or a provider whose API key variable is not set.
    """
    env = os.environ if env is None else env
    flag = str(options.pop("flag", "--judge"))
    name, model = check_judge_spec(spec, env, flag)
    module = importlib.import_module(JUDGES[name])
    judge: Judge = module.make(model or None, env=env, **options)
    return judge
