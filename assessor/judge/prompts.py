"""The LLM judge's prompt: standing instructions, the skill guide, the algorithm cards, the evidence sheet, run data.

Every sentence of the prompt lives in the repository's top-level `prompts/*.j2` (jinja2, rendered here with
`StrictUndefined`, so a missing variable is an error): `system.j2` and its sections (role, rules for run data, what
the three decisions mean, the output contract, the guide), `system_cards.j2`, `user.j2`, the evidence sheet
`summary.j2` with one template per section, and the fenced data block `user_data.j2`. The practitioner's guide and
the algorithm cards live in `skills/`. Both folders ship inside the package as `assessor._prompts` and
`assessor._skills` (see `package-dir` in pyproject.toml) and are always read through `importlib.resources`, so an
installed wheel and an editable checkout load the same files the same way.

This module only computes what the templates fill in (`assessor.judge.evidence` computes the evidence sheet's
values, `assessor.judge.untrusted` keeps run-supplied text in the fenced block) and puts the parts together:

* **Cacheable system parts.** The system message is two parts that depend on nothing but the detected
  algorithm: the instructions with the guide (the same for every run), then the algorithm cards. Providers cache
  them (Anthropic: one system block each, with `cache_control`; OpenAI: the stable start of every request).
* **Run data last.** Everything about the run is in the user turn: the evidence sheet, then the fenced block of
  untrusted text (run name, every checkpoint path, completion samples), whose fence token is an HMAC of the
  request's text under a key drawn at random when the process starts: the same request gives the same prompt
  within a process, and nobody outside it can predict the token. Nothing here reads environment variables.
"""

from __future__ import annotations

import hashlib
import hmac
import math
import re
import secrets
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

import jinja2

from assessor.diagnose import UNSEEN_WITHOUT
from assessor.diagnose.context import num
from assessor.diagnose.robust import MAX_SPIKES
from assessor.errors import JudgeError
from assessor.judge import evidence
from assessor.judge.base import JudgeRequest
from assessor.judge.evidence import MAX_SAMPLE_CHARS, MAX_SAMPLES
from assessor.judge.models import Verdict
from assessor.judge.untrusted import FENCE, fence_lines, label

PROMPTS_PACKAGE = "assessor._prompts"  # the repository's prompts/ folder, as package data
SKILLS_PACKAGE = "assessor._skills"  # the repository's skills/ folder, as package data

__all__ = [
    "FENCE", "MAX_SAMPLES", "MAX_SAMPLE_CHARS", "Prompt", "approx_tokens", "build_prompt", "cards_for",
    "fence_lines", "label", "prompt_fingerprint", "render", "skill_guide", "summarize", "system_parts",
    "verdict_schema",
]


def _package_files(package: str) -> Traversable:
    """The files of a data package; a path that does not exist (and names the package) if it is not installed.

    Resolved once at import, but a missing package must not break the import: the rules judge needs no prompt.
    """
    try:
        return resources.files(package)
    except ModuleNotFoundError:
        return Path(__file__).resolve().parents[1] / package.rpartition(".")[2]


PROMPTS_DIR: Traversable = _package_files(PROMPTS_PACKAGE)
SKILLS_DIR: Traversable = _package_files(SKILLS_PACKAGE)

SYSTEM_TEMPLATE = "system.j2"  # instructions + guide: the first cached system part
CARDS_TEMPLATE = "system_cards.j2"  # the algorithm cards: the second cached system part
USER_TEMPLATE = "user.j2"
SUMMARY_TEMPLATE = "summary.j2"
GUIDE_FILE = "practitioner.md"
FIGURES_SENT: tuple[str, ...] = ("dashboard",)  # the other figures' content is on the evidence sheet as numbers

# card name -> file under skills/cards/
CARD_FILES: dict[str, str] = {
    "grpo": "grpo.md", "ppo": "ppo.md", "rloo_dapo": "rloo_dapo.md", "dpo": "dpo.md", "orpo": "orpo.md",
    "kto": "kto.md", "simpo_cpo": "simpo_cpo.md", "online_dpo": "online_dpo.md", "neutral": "neutral.md",
}
# detected algorithm -> the cards its judge reads; anything else gets DEFAULT_CARDS
ALGORITHM_CARDS: dict[str, tuple[str, ...]] = {
    "grpo": ("grpo",),
    "ppo": ("ppo",),
    "rloo": ("rloo_dapo",),
    "dapo": ("rloo_dapo",),
    "reinforce++": ("rloo_dapo",),
    "remax": ("rloo_dapo",),
    "dpo": ("dpo",),
    "ipo": ("dpo",),
    "online_dpo": ("online_dpo",),
    "orpo": ("orpo",),
    "kto": ("kto",),
    "simpo": ("simpo_cpo",),
    "cpo": ("simpo_cpo",),
}
# An undetected or unknown algorithm gets expectations that hold for every method, never another one's.
DEFAULT_CARDS: tuple[str, ...] = ("neutral",)
CHARS_PER_TOKEN = 4

_TOKEN = re.compile(r"[A-Za-z0-9]{8,64}")
_BLANK_RUNS = re.compile(r"\n{3,}")
_PROCESS_KEY = secrets.token_bytes(32)


@dataclass(frozen=True)
class Prompt:
    """A rendered prompt for an LLM judge.

    Attributes:
        system_parts: the system message in its cacheable parts (instructions and guide, then the algorithm
            cards); joined they are `system`. They depend on nothing but the detected algorithm.
        user: the evidence sheet followed by the fenced block of untrusted run data.
        images: PNG figures to attach (the dashboard).
    """

    system_parts: tuple[str, ...]
    user: str
    images: list[Path]

    @property
    def system(self) -> str:
        """The whole system message, exactly as the parts are sent one after the other."""
        return "".join(self.system_parts)


# --- files


def _require_dir(path: Traversable, what: str) -> Traversable:
    if not path.is_dir():
        raise JudgeError(
            f"{what} directory not found at {str(path)!r}; it ships inside the assessor package (reinstall with "
            f"`pip install .`, or `pip install -e .` from the repository root), or use --judge rules")
    return path


def _read(path: Traversable) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise JudgeError(f"cannot read {str(path)!r} ({exc.strerror or exc}); restore it from the repository") from exc


def _template_source(name: str) -> str | None:
    """A template's text from `PROMPTS_DIR` (None when missing): works on any `Traversable`, not only a folder."""
    path = PROMPTS_DIR / name
    return path.read_text(encoding="utf-8") if path.is_file() else None


def _known(value: object) -> str:
    """A fact as the sheet prints it: `unknown` for None, numbers as a practitioner says them."""
    if value is None:
        return "unknown"
    if isinstance(value, float):
        return num(value)
    return str(value)


def _pct(value: float | None) -> str:
    return "n/a" if value is None or not math.isfinite(value) else f"{value:.0%}"


def _signed(value: float | None) -> str:
    return "n/a" if value is None or not math.isfinite(value) else f"{value:+.3g}"


@lru_cache(maxsize=1)
def _environment() -> jinja2.Environment:
    """The one jinja2 environment: StrictUndefined, no autoescaping, templates from `PROMPTS_DIR`.

    Filters for the templates: `num` (three significant digits), `pct`, `signed`, `known` (`unknown` for None);
    globals: `max_spikes` (spikes kept per curve), `unseen_without` (what a missing instrument hides).
    """
    _require_dir(PROMPTS_DIR, "prompts")
    env = jinja2.Environment(
        loader=jinja2.FunctionLoader(_template_source),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(num=num, pct=_pct, signed=_signed, known=_known)
    env.globals["max_spikes"] = MAX_SPIKES  # a constant of the analysis the sheet's legend states
    env.globals["unseen_without"] = UNSEEN_WITHOUT  # what each missing instrument hides, in the legend
    return env


def render(template: str, context: Mapping[str, object]) -> str:
    """Render one template from `prompts/`.

    Args:
        template: file name under `prompts/`, e.g. `system.j2`.
        context: the template's variables; every variable it (or a template it includes) uses must be given.

    Returns:
        The rendered text.

    Raises:
        JudgeError: the template is missing, or a variable it uses is not in `context`.
    """
    env = _environment()
    try:
        return env.get_template(template).render(**context)
    except jinja2.TemplateNotFound as exc:
        missing = exc.name if isinstance(exc.name, str) else template
        raise JudgeError(f"prompt template {str(PROMPTS_DIR / missing)!r} not found; restore it from the "
                         f"repository") from exc
    except jinja2.UndefinedError as exc:
        raise JudgeError(f"prompt template {template!r} needs a variable the caller did not give: {exc}") from exc


def skill_guide() -> str:
    """The practitioner's guide (`skills/practitioner.md`) that every LLM judge reads.

    Raises:
        JudgeError: `skills/` or the guide is missing.
    """
    return _read(_require_dir(SKILLS_DIR, "skills") / GUIDE_FILE)


def cards_for(algorithm: str | None) -> list[tuple[str, str]]:
    """The algorithm cards for a detected algorithm, as (name, text) pairs.

    GRPO gets the GRPO card, PPO the PPO card, RLOO, DAPO, REINFORCE++ and ReMax the RLOO/DAPO card, DPO (and
    IPO) the DPO card, ORPO, KTO and SimPO/CPO their own; an unknown or undetected algorithm gets a neutral card.

    >>> [name for name, _ in cards_for("reinforce++")]
    ['rloo_dapo']
    >>> [name for name, _ in cards_for(None)]
    ['neutral']

    Raises:
        JudgeError: `skills/cards/` or a card file is missing.
    """
    names = ALGORITHM_CARDS.get((algorithm or "").strip().lower(), DEFAULT_CARDS)
    cards_dir = _require_dir(SKILLS_DIR, "skills") / "cards"
    return [(name, _read(cards_dir / CARD_FILES[name])) for name in names]


def _files(root: Traversable, suffix: str, prefix: str) -> Iterator[tuple[str, Traversable]]:
    """Every file under `root` whose name ends in `suffix`, as (`prefix` + relative path, file)."""
    for child in root.iterdir():
        if child.is_dir():
            yield from _files(child, suffix, f"{prefix}{child.name}/")
        elif child.name.endswith(suffix):
            yield f"{prefix}{child.name}", child


def prompt_fingerprint() -> str:
    """A short hash of every template, the guide and the cards: which prompt produced a verdict.

    Files are named as in the repository (`prompts/system.j2`, `skills/cards/grpo.md`), whatever the install,
    so a wheel and a checkout of the same prompt give the same fingerprint.
    """
    digest = hashlib.sha256()
    for directory, folder, suffix in ((PROMPTS_DIR, "prompts", ".j2"), (SKILLS_DIR, "skills", ".md")):
        found = _files(_require_dir(directory, folder), suffix, f"{folder}/")
        for name, path in sorted(found, key=lambda item: item[0].split("/")):
            digest.update(name.encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


def verdict_schema() -> dict[str, Any]:
    """The JSON schema of `Verdict`, for the provider's structured-output mechanism."""
    return Verdict.model_json_schema()


def approx_tokens(text: str) -> int:
    """A rough token count: one token per four characters, rounded up.

    No tokenizer is installed offline. English prose and Markdown tables run at about four characters per
    token on current BPE tokenizers (numbers and symbols somewhat fewer), so this is a budget estimate, good to
    a few tens of percent, not a bill.

    >>> approx_tokens(""), approx_tokens("abcd"), approx_tokens("abcde")
    (0, 1, 2)
    """
    return math.ceil(len(text) / CHARS_PER_TOKEN)


# --- the parts


def _demote(markdown: str) -> str:
    """Markdown headings one level down, so a guide nests under the system message's own headings."""
    return re.sub(r"(?m)^#", "##", markdown)


def _tidy(text: str) -> str:
    """Rendered text with the blank lines left by empty sections collapsed, ending in one newline."""
    return _BLANK_RUNS.sub("\n\n", text).strip("\n") + "\n"


def system_parts(algorithm: str | None) -> tuple[str, str]:
    """The system message's two cacheable parts: instructions with the guide, then the algorithm cards.

    The first part ends with a blank line, so the parts joined are the message as read.

    Raises:
        JudgeError: a template, the guide or a card is missing.
    """
    instructions = render(SYSTEM_TEMPLATE, {"skill_guide": _demote(skill_guide().strip())})
    cards = render(CARDS_TEMPLATE, {
        # The system message carries nothing from the run: an algorithm we hold no card for is not named.
        "algorithm": ("not detected" if not algorithm else algorithm.strip().lower()
                      if algorithm.strip().lower() in ALGORITHM_CARDS else "not recognised"),
        "cards": [{"name": name, "text": _demote(text.strip())} for name, text in cards_for(algorithm)],
    })
    return _tidy(instructions) + "\n", _tidy(cards)


def summarize(request: JudgeRequest) -> str:
    """The evidence sheet: run and setup, findings, signals, the diagnoses, best point, checkpoints, blind spots.

    Its size does not grow with the run's length (see `assessor.judge.evidence`). Run-supplied free text (run
    name, paths, samples) is left out: it belongs in the fenced data block.
    """
    return _tidy(render(SUMMARY_TEMPLATE, evidence.summary_values(request)))


def _token(request: JudgeRequest, summary: str) -> str:
    """An unguessable fence token, stable for one request within this process."""
    mac = hmac.new(_PROCESS_KEY, digestmod=hashlib.sha256)
    for part in (summary, *evidence.data_parts(request)):
        mac.update(len(part).to_bytes(8, "big"))
        mac.update(part.encode("utf-8", "surrogatepass"))
    return mac.hexdigest()[:24]


def _images(plots: Sequence[Path]) -> list[Path]:
    """The figures sent (`FIGURES_SENT`, in that order) among the rendered plots that exist."""
    pngs = {p.stem: p for p in plots if p.suffix.lower() == ".png" and p.is_file()}
    return [pngs[name] for name in FIGURES_SENT if name in pngs]


def build_prompt(request: JudgeRequest, *, token: str | None = None) -> Prompt:
    """The system parts, the user message and the figures for an LLM judge.

    Args:
        request: the run, its diagnostics, the rendered figures and any extra text samples.
        token: the fence token (8 to 64 letters or digits); by default an HMAC of the request's text under a
            per-process random key, unguessable from outside and the same for the same request.

    Returns:
        The prompt. The system parts carry the role, the rules for run data, what the three decisions mean, the
        output contract, the skill guide and the algorithm cards for the detected algorithm; they depend on
        nothing else, so providers cache them. The user message carries the evidence sheet, the fence token, and
        then the fenced data block.

    Raises:
        JudgeError: a template, the guide or a card is missing.
        ValueError: `token` is given but is not 8 to 64 letters or digits.
    """
    summary = summarize(request).strip()
    token = token or _token(request, summary)
    if not _TOKEN.fullmatch(token):
        raise ValueError(f"fence token must be 8-64 letters or digits, got {token!r}")
    fence_open, fence_close = fence_lines(token)
    images = _images(request.plots)
    data = evidence.data_values(request, token)
    # Only the labels the sheet refers to are listed: a reference nobody uses is one more thing to look up.
    data["labels"] = [(ref, text) for ref, text in data["labels"] if ref in summary]
    user = render(USER_TEMPLATE, {
        "summary": summary, "figures": [p.stem for p in images], "token": token, "fence_open": fence_open,
        "fence_close": fence_close, "data": {**data, "per_point": evidence.SAMPLES_PER_POINT},
    })
    algorithm = request.diagnostics.run.algorithm or request.run.facts.algorithm
    return Prompt(system_parts=system_parts(algorithm), user=_tidy(user), images=images)
