"""Cassettes: every LLM judgement of an eval recorded to disk, so a live run can be reviewed and replayed offline.

The recording wraps the judge, not the HTTP transport: the provider judges build their SDK clients themselves,
and a verdict plus its usage is what an eval scores. For each case (and each truncation step of a delay replay)
one JSON file holds what was asked and what came back:

    <cassettes>/<judge-slug>/cassette.json               the judge's name, format version
    <cassettes>/<judge-slug>/system-<sha12>.md           each distinct system prompt, once
    <cassettes>/<judge-slug>/<case>/step-<NNNNNN>.json   one judgement

A judgement file carries `request` (the user message the judge was sent, the figures attached, the system
prompt's hash, the prompt templates' fingerprint and hashes of the whole prompt) and `response` (the verdict,
the usage: tokens, requests, latency, cost, or the error the judge raised). The prompt is rebuilt here with a
fixed fence token so the hash is stable; the live request differed only in its random fence token.

API keys never reach a cassette: nothing from the HTTP layer (headers) is recorded, and before a file is
written every value of `ANTHROPIC_API_KEY` / `OPENAI_API_KEY` and anything shaped like a provider key
(`sk-...`) is replaced by `***`.

Replaying reads the file for (case, step) and returns the recorded verdict and usage without any network or
key. When the prompt that would be sent today hashes differently from the recorded one (templates or
diagnostics changed since the recording), the replay still answers and is flagged stale.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import re
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from assessor.errors import AssessorError, ConfigError, JudgeError
from assessor.judge.base import Judge, JudgeRequest, JudgeResult
from assessor.judge.models import Usage, Verdict

FORMAT = 1
META_FILE = "cassette.json"
REPLAY_SUFFIX = " (replay)"
FIXED_FENCE_TOKEN = "cassettefence0000"  # the recorded prompt's fence token (the live one is random)
KEY_VARIABLES = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY")
_KEY_SHAPES = re.compile(r"\b(?:sk-ant-[A-Za-z0-9_\-]{8,}|sk-(?:proj-)?[A-Za-z0-9_\-]{16,})")
_SLUG = re.compile(r"[^A-Za-z0-9._-]+")


def slug(name: str) -> str:
    """A judge or case name as a folder name (`anthropic:claude-x` -> `anthropic-claude-x`)."""
    return _SLUG.sub("-", name).strip("-") or "judge"


def scrub_keys(text: str, env: Mapping[str, str] | None = None) -> str:
    """`text` with API keys (the provider variables' values and `sk-...` shaped strings) replaced by `***`."""
    env = os.environ if env is None else env
    for variable in KEY_VARIABLES:
        value = (env.get(variable) or "").strip()
        if len(value) >= 8:
            text = text.replace(value, "***")
    return _KEY_SHAPES.sub("***", text)


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def prompt_record(request: JudgeRequest) -> dict[str, Any]:
    """What an LLM judge is sent for `request`, rebuilt with a fixed fence token (`unavailable` if it cannot be).

    `prompt_sha256` hashes the prompt as sent (figures listed); `content_sha256` hashes it without figures, which
    is what a replay (that has no rendered figures) compares to decide whether the recording is stale.
    """
    try:
        from assessor.judge import prompts

        prompt = prompts.build_prompt(request, token=FIXED_FENCE_TOKEN)
        fingerprint = prompts.prompt_fingerprint()
    except (ImportError, AttributeError, AssessorError, OSError) as error:
        return {"unavailable": f"{type(error).__name__}: {error}", "content_sha256": None}
    return {
        "prompt_sha256": _sha(prompt.system + "\x00" + prompt.user),
        "content_sha256": content_hash(request),
        "prompt_fingerprint": fingerprint,
        "system_sha256": _sha(prompt.system),
        "system": prompt.system,
        "user": prompt.user,
        "images": [path.name for path in prompt.images],
    }


def content_hash(request: JudgeRequest) -> str | None:
    """A hash of the prompt `request` makes without figures (None if the prompt cannot be built)."""
    try:
        from assessor.judge import prompts

        prompt = prompts.build_prompt(replace(request, plots=[]), token=FIXED_FENCE_TOKEN)
    except (ImportError, AttributeError, AssessorError, OSError):
        return None
    return _sha(prompt.system + "\x00" + prompt.user)


class Cassette:
    """One judge's recordings in `<root>/<judge-slug>/`.

    Args:
        folder: the judge's folder (made on the first write).
        judge: the recorded judge's name (read from `cassette.json` when None).
    """

    def __init__(self, folder: Path, judge: str | None = None) -> None:
        self.folder = folder
        if judge is None:
            judge = self._read_meta().get("judge")
            if not isinstance(judge, str):
                raise ConfigError(f"{folder / META_FILE}: not a cassette (no judge name); record one with "
                                  "`assessor eval --judge PROVIDER:MODEL --cassettes DIR --record`")
        self.judge = judge

    @classmethod
    def for_judge(cls, root: Path, judge: str) -> Cassette:
        """The cassette of judge `judge` under the cassette directory `root`."""
        return cls(root / slug(judge), judge)

    @classmethod
    def open(cls, path: Path) -> Cassette:
        """A recorded cassette: `path` is the judge's folder, or a cassette directory holding exactly one.

        Raises:
            ConfigError: no cassette there, or several to choose from.
        """
        if (path / META_FILE).is_file():
            return cls(path)
        found = sorted(p.parent for p in path.glob(f"*/{META_FILE}")) if path.is_dir() else []
        if len(found) == 1:
            return cls(found[0])
        if not found:
            raise ConfigError(f"{path}: no cassette found (expected {META_FILE}); record one with "
                              "`assessor eval --judge PROVIDER:MODEL --cassettes DIR --record`")
        names = ", ".join(p.name for p in found)
        raise ConfigError(f"{path} holds several cassettes ({names}); name one, e.g. replay:{found[0]}")

    def exists(self) -> bool:
        """Whether anything was recorded here."""
        return (self.folder / META_FILE).is_file()

    def entry_path(self, case: str, step: int | None) -> Path:
        """The file of one judgement."""
        return self.folder / slug(case) / f"step-{step if step is not None else 0:06d}.json"

    def read(self, case: str, step: int | None) -> dict[str, Any] | None:
        """The recorded judgement for (case, step), or None.

        Raises:
            ConfigError: the file is there but is not valid JSON.
        """
        path = self.entry_path(case, step)
        if not path.is_file():
            return None
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as error:
            raise ConfigError(f"{path}: unreadable cassette entry ({error})") from error
        return data if isinstance(data, dict) else None

    def write(self, case: str, step: int | None, request: dict[str, Any], response: dict[str, Any]) -> Path:
        """Record one judgement (keys scrubbed); the system prompt goes to its own file, once."""
        self.folder.mkdir(parents=True, exist_ok=True)
        meta = self.folder / META_FILE
        if not meta.is_file():
            meta.write_text(json.dumps({"judge": self.judge, "format": FORMAT}, indent=2) + "\n", encoding="utf-8")
        request = dict(request)
        system = request.pop("system", None)
        if isinstance(system, str):
            system_file = self.folder / f"system-{_sha(system)[:12]}.md"
            if not system_file.is_file():
                system_file.write_text(scrub_keys(system), encoding="utf-8")
            request["system_file"] = system_file.name
        entry = {
            "judge": self.judge, "case": case, "step": step,
            "recorded_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "request": request, "response": response,
        }
        path = self.entry_path(case, step)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(scrub_keys(json.dumps(entry, indent=2, ensure_ascii=False)) + "\n", encoding="utf-8")
        return path

    def _read_meta(self) -> dict[str, Any]:
        try:
            data = json.loads((self.folder / META_FILE).read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            return {}
        return data if isinstance(data, dict) else {}


class RecordingJudge:
    """Calls the wrapped (live) judge and records every judgement to a cassette.

    The harness names the case before each call with `bind_case`; the step is the request's last step.
    """

    def __init__(self, inner: Judge, cassette: Cassette) -> None:
        self.inner = inner
        self.cassette = cassette
        self.name = inner.name
        self.wants_images = bool(getattr(inner, "wants_images", False))
        self.case = ""

    def bind_case(self, case: str) -> None:
        """Name the case the next judgements belong to."""
        self.case = case

    def judge(self, request: JudgeRequest) -> JudgeResult:
        """The wrapped judge's verdict, recorded (a judge error is recorded too, then raised again)."""
        asked = prompt_record(request)
        step = request.run.last_step
        try:
            result = self.inner.judge(request)
        except AssessorError as error:
            self.cassette.write(self.case, step, asked, {"verdict": None, "usage": None, "error": str(error)})
            raise
        self.cassette.write(self.case, step, asked, {
            "verdict": result.verdict.model_dump(mode="json"),
            "usage": result.usage.model_dump(mode="json") if result.usage else None, "error": None,
        })
        return result


class ReplayJudge:
    """Answers from a cassette: the recorded verdict and usage for (case, step), offline.

    Attributes:
        stale: cases whose recorded prompt differs from the one that would be sent now.
        last_stale: whether the latest replayed judgement was stale.
    """

    wants_images = False

    def __init__(self, cassette: Cassette) -> None:
        self.cassette = cassette
        self.name = cassette.judge + REPLAY_SUFFIX
        self.case = ""
        self.stale: set[str] = set()
        self.last_stale = False

    def bind_case(self, case: str) -> None:
        """Name the case the next judgements belong to."""
        self.case = case

    def judge(self, request: JudgeRequest) -> JudgeResult:
        """The recorded judgement.

        Raises:
            JudgeError: nothing recorded for this case and step, or the recorded call itself failed.
        """
        step = request.run.last_step
        entry = self.cassette.read(self.case, step)
        if entry is None:
            raise JudgeError(f"{self.name}: no recording for case {self.case!r} at step {step} in "
                             f"{self.cassette.folder}; record it with --record and a key")
        response = entry.get("response") or {}
        recorded = (entry.get("request") or {}).get("content_sha256")
        self.last_stale = False
        if recorded:
            now = content_hash(request)
            self.last_stale = now is not None and now != recorded
            if self.last_stale:
                self.stale.add(self.case)
        if response.get("verdict") is None:
            raise JudgeError(str(response.get("error") or f"{self.name}: the recording holds no verdict"))
        verdict = Verdict.model_validate(response["verdict"])
        usage = Usage.model_validate(response["usage"]) if response.get("usage") else None
        return JudgeResult(verdict=verdict, usage=usage)
