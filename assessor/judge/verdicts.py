"""Verdicts written beforehand (`--judge verdicts:DIR`): answers read from files and scored like any judge.

The answers live in `DIR/<case or run name>/verdict.json`, one `Verdict` as JSON each: written by a practitioner, or
by any model given the prompt `assessor prompt` exported into `DIR2/<name>/` (see `assessor.judge.export`). So the
LLM path can be measured without an API key, with an honest note of where the answers came from.

Reading is lenient about the wrapping (surrounding whitespace, a Markdown code fence) and strict about the content:
the JSON must be a valid `Verdict` (no unknown fields, a rollback with its step). A missing or invalid file is a
`JudgeError` naming the file, which `assessor eval` scores as a failure of that case alone.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from assessor.errors import ConfigError, JudgeError
from assessor.judge.base import JudgeRequest, JudgeResult, with_blind_spots
from assessor.judge.llm import describe_validation, parse_output

VERDICT_FILE = "verdict.json"


def read_verdict(path: Path) -> JudgeResult:
    """The verdict in one file.

    Raises:
        JudgeError: the file is missing, unreadable, not JSON, or not a valid verdict.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise JudgeError(f"{path}: no verdict written for this run; write one (a Verdict as JSON, answering the "
                         "prompt `assessor prompt` exports) or leave the case out") from None
    except (OSError, UnicodeDecodeError) as error:
        raise JudgeError(f"{path}: cannot be read ({error}); rewrite it as UTF-8 JSON") from None
    try:
        verdict = parse_output(text)
    except ValidationError as error:
        problems = "; ".join(describe_validation(error, limit=3))
        raise JudgeError(f"{path}: not a valid verdict ({problems}); fix it to fit schema.json") from None
    except ValueError as error:
        raise JudgeError(f"{path}: {error}") from None
    return JudgeResult(verdict=verdict, usage=None)


class VerdictsJudge:
    """Reads `DIR/<name>/verdict.json`, the name being the eval case (`bind_case`) or else the run's name.

    Args:
        directory: the folder of answers, named as given on the command line (the judge is `verdicts:<dir>`).
    """

    def __init__(self, directory: str) -> None:
        self.directory = Path(directory)
        self.name = f"verdicts:{directory}"
        self._case: str | None = None

    def bind_case(self, case: str) -> None:
        """The eval case whose answer the next `judge` call reads (called by `assessor eval`)."""
        self._case = case

    def path_for(self, request: JudgeRequest) -> Path:
        """The file holding the answer for `request`: the case's, else the run's; `DIR/verdict.json` for a lone run."""
        name = self._case or request.run.name
        path = self.directory / name / VERDICT_FILE
        lone = self.directory / VERDICT_FILE
        if self._case is None and not path.exists() and lone.exists():
            return lone
        return path

    def judge(self, request: JudgeRequest) -> JudgeResult:
        """The verdict written for this run or case."""
        return with_blind_spots(read_verdict(self.path_for(request)), request.diagnostics)


def make(model: str | None = None, **options: object) -> VerdictsJudge:
    """The verdicts judge (`--judge verdicts:DIR`); `model` is the folder.

    Raises:
        ConfigError: no folder named, or it does not exist.
    """
    if not model:
        raise ConfigError("--judge verdicts needs a folder: --judge verdicts:DIR (answers in DIR/<name>/verdict.json)")
    if not Path(model).is_dir():
        raise ConfigError(f"--judge verdicts:{model}: no such folder; it should hold <case or run name>/verdict.json")
    return VerdictsJudge(model)
