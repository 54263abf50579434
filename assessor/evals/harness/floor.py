"""The floor the rules judge must stay above (`assessor eval --check-floor`, `--write-floor`).

`floor_from` sets a floor a little below what was measured, `check_floor` compares a report with it, and
`read_floor` / `write_floor` keep it as JSON.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from assessor.errors import ConfigError
from assessor.evals.harness.models import FLOOR_JUDGE, EvalReport, Floor, FloorCheck, Scores

ACCURACY_MARGIN = 0.02
WINDOW_MARGIN = 0.05


def floor_from(report: EvalReport, judge: str = FLOOR_JUDGE) -> Floor:
    """A floor a little below what `judge` measured now.

    Accuracy - 0.02, window rate - 0.05; false stops and format disagreements as measured (the latter only
    checked when the subset has scenarios written in several formats).

    Raises:
        ConfigError: the judge did not run or there were no synthetic cases.
    """
    scores = _floor_scores(report, judge)
    assert scores.accuracy is not None
    rate = scores.rollback_in_window_rate
    return Floor(
        judge=judge, subset=report.subset,
        synthetic_accuracy=max(0.0, math.floor((scores.accuracy - ACCURACY_MARGIN) * 100) / 100),
        max_healthy_false_stops=scores.false_stops,
        rollback_in_window=None if rate is None else max(0.0, math.floor((rate - WINDOW_MARGIN) * 100) / 100),
        max_format_disagreements=scores.format_disagreements if scores.scenarios else None,
        measured={"synthetic_accuracy": scores.accuracy, "healthy_false_stops": scores.false_stops,
                  "rollback_in_window": rate, "format_disagreements": scores.format_disagreements,
                  "scenarios": scores.scenarios, "synthetic_cases": scores.cases},
    )


def check_floor(report: EvalReport, floor: Floor) -> FloorCheck:
    """Compare the floor judge's synthetic scores with `floor`.

    Raises:
        ConfigError: the floor's judge did not run or there were no synthetic cases.
    """
    scores = _floor_scores(report, floor.judge)
    assert scores.accuracy is not None
    problems: list[str] = []
    if scores.accuracy < floor.synthetic_accuracy:
        problems.append(f"synthetic accuracy {scores.accuracy:.3f} < floor {floor.synthetic_accuracy:.3f}")
    if scores.false_stops > floor.max_healthy_false_stops:
        problems.append(f"{scores.false_stops} false stops on healthy runs > floor {floor.max_healthy_false_stops}"
                        f" ({', '.join(scores.false_stop_cases)})")
    rate = scores.rollback_in_window_rate
    if floor.rollback_in_window is not None and rate is not None and rate < floor.rollback_in_window:
        problems.append(f"rollbacks inside the window {rate:.3f} < floor {floor.rollback_in_window:.3f}")
    if floor.max_format_disagreements is not None and scores.format_disagreements > floor.max_format_disagreements:
        problems.append(f"{scores.format_disagreements} scenarios judged differently in different formats > floor "
                        f"{floor.max_format_disagreements} ({', '.join(scores.format_disagreement_scenarios)})")
    where = f"{floor.judge} judge on {scores.cases} synthetic cases ({report.subset} subset)"
    if problems:
        message = f"floor check failed: {where}: {'; '.join(problems)}"
    else:
        shown = "n/a" if rate is None else f"{rate:.2f}"
        message = (f"floor check passed: {where}: accuracy {scores.accuracy:.2f}, {scores.false_stops} false "
                   f"stops, rollbacks in window {shown}, {scores.format_disagreements} format disagreements in "
                   f"{scores.scenarios} scenarios")
    return FloorCheck(passed=not problems, problems=problems, message=message)


def read_floor(path: Path) -> Floor:
    """The floor recorded in a JSON file.

    Raises:
        ConfigError: the file is missing or not a floor.
    """
    try:
        return Floor.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError) as error:
        first = str(error).splitlines()[0]
        raise ConfigError(f"{path}: not a readable floor file ({first}); write one with --write-floor") from error


def write_floor(floor: Floor, path: Path) -> None:
    """Record `floor` as JSON."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(floor.model_dump_json(indent=2) + "\n", encoding="utf-8")


def _floor_scores(report: EvalReport, judge: str) -> Scores:
    found = report.judge_report(judge)
    if found is None:
        raise ConfigError(f"the floor is about the {judge} judge; add --judge {judge}")
    if found.synthetic.accuracy is None:
        raise ConfigError(f"the floor is about synthetic cases and none ran ({report.subset} subset)")
    return found.synthetic
