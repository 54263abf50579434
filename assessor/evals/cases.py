"""A labelled case: a run, and the decisions a practitioner would accept for it.

The run is generated from a recipe or is a real one on disk.

Cases live in YAML files under `evals/` and are validated with `extra="forbid"`, so a typo in a label is an
error, not a silently ignored field.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, model_validator

from assessor.errors import ConfigError
from assessor.judge.models import Decision


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Generated(_Model):
    """A synthetic run made by `assessor.evals.generate` from a named pattern."""

    pattern: str = Field(description="A recipe name in `assessor.evals.generate.PATTERNS`.")
    format: Literal[
        "trl_state", "trl_live", "tensorboard", "jsonl", "jsonl_flat", "verl_console", "trl_console", "csv",
    ] = "jsonl"
    seed: int = 0
    steps: int = Field(300, description="Optimizer steps the run has reached.")
    logging_steps: int = 1
    options: dict[str, float | int | str | bool] = Field(default_factory=dict, description="Recipe parameters.")


class Case(_Model):
    """One labelled run."""

    name: str
    run: Generated | None = None
    path: str | None = Field(None, description="A real run directory, relative to the case file.")
    accept: list[Decision] = Field(description="Every decision a careful practitioner would accept.")
    preferred: Decision | None = Field(None, description="The single best decision, when there is one.")
    rollback_window: tuple[int, int] | None = Field(
        None, description="Steps a rollback may target (inclusive); any checkpoint in it is right.")
    onset_step: int | None = Field(None, description="First step where the problem is visible; None if healthy.")
    healthy: bool = Field(False, description="A run that must not be stopped (stopping it is the costliest error).")
    tags: list[str] = Field(default_factory=list)
    reasoning: str = Field("", description="Why these labels: what the curves show.")

    scenario: str | None = Field(
        None, description="Shared by the cases that write one scenario in different formats: the same run, so a "
                          "judge's verdicts on them must agree (`assessor eval` reports a disagreement).")

    @property
    def needs_action(self) -> bool:
        """A problem with an onset that `continue` does not answer: the runs whose detection delay is measured.

        A run tagged `finished` whose only answer is stop (keep the final weights) is left out too: its stop rests
        on the budget being spent, and each of its prefixes is a live run with budget left, where holding a level
        is continue by the contract and stopping early only saves compute (as for a plateau that accepts continue).
        """
        if self.onset_step is None or "continue" in self.accept:
            return False
        return not ("finished" in self.tags and set(self.accept) == {"stop"})

    @model_validator(mode="after")
    def _consistent(self) -> Case:
        if (self.run is None) == (self.path is None):
            raise ValueError(f"case {self.name!r}: give exactly one of `run` (generated) or `path` (real run)")
        if "rollback" in self.accept and self.rollback_window is None:
            raise ValueError(f"case {self.name!r}: rollback is accepted but no rollback_window is given")
        if self.healthy and "stop" in self.accept:
            raise ValueError(f"case {self.name!r}: a healthy run cannot accept stop")
        if self.preferred is not None and self.preferred not in self.accept:
            raise ValueError(f"case {self.name!r}: preferred {self.preferred!r} is not among accept")
        return self


class CaseFile(_Model):
    """A YAML file of cases."""

    cases: list[Case]


# Folders of runs and recordings hold YAML files of their own (hydra configs, MLflow meta.yaml): not cases.
NOT_CASE_FOLDERS = frozenset({"cassettes", "runs", "real-runs"})  # real-runs: run data and its manifest


def case_files(folder: Path) -> list[Path]:
    """The case files below a folder.

    Every `*.yaml`, except in dot-folders (the generated-run cache), `cassettes/` and `runs/` (the runs a
    holdout script writes).
    """
    return sorted(f for f in folder.rglob("*.yaml") if not any(
        part.startswith(".") or part in NOT_CASE_FOLDERS for part in f.relative_to(folder).parts[:-1]))


def load_cases(path: Path) -> list[tuple[Path, Case]]:
    """Every case in a YAML file or in every case file below a directory, with the file it came from."""
    files = case_files(path) if path.is_dir() else [path]
    out: list[tuple[Path, Case]] = []
    for file in files:
        try:
            data = yaml.safe_load(file.read_text(encoding="utf-8"))
            parsed = CaseFile.model_validate(data)
        except (yaml.YAMLError, ValueError) as error:
            first = str(error).splitlines()[0:3]
            raise ConfigError(f"{file}: not a valid case file ({' '.join(first)}); see assessor/evals/cases.py") \
                from error
        out.extend((file, case) for case in parsed.cases)
    if not out:
        raise ConfigError(f"{path}: no case files (*.yaml) found; point `assessor eval` at the evals/ folder")
    return out
