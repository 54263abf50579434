"""Facts printed near the top of a log: banners, settings, command lines and a printed run config.

The scanner offers `HeadFacts.read` every segment before the first metric record (and within the first
100,000 segments); only cheap, reliable patterns are read: the HF "Total optimization steps" banner, verl's
"Total steps" line, `key=value` settings, a `model...=org/name`, Hydra overrides and `--flags` on a command
line. A printed config dict seen before the first record is read whole (`read_config`). `merge` ranks all
of them below what the dialect itself read.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from assessor.ingest.facts import Fact, facts_from_flat_config, flatten

_HF_BANNER_TOTAL = re.compile(r"Total optimization steps = (?P<n>[\d,]+)")
_VERL_TOTAL = re.compile(r"Total (?:training )?steps: (?P<n>\d+)")
_TEXT_SETTING = re.compile(
    r"(?<![\w.])(?P<k>max_steps|logging_steps|max_completion_length|num_generations|max_new_tokens|beta|"
    r"loss_type)\s*[=:]\s*['\"]?(?P<v>[\w.+-]+)"
)
_MODEL_TEXT = re.compile(
    r"(?<![\w.])(?:model|model_name|model_id|model_path|model_name_or_path)\s*[=:]\s*['\"]?"
    r"(?P<v>[\w.-]+/[\w.-]+)",
    re.IGNORECASE,
)
_COMMAND = re.compile(r"(?:^|\s)(?:python3?|torchrun|accelerate\s+launch|deepspeed|ray\s+job\s+submit)\s")
_HYDRA = re.compile(
    r"""(?:^|[\s"'])\+{0,2}(?P<k>[A-Za-z_][\w-]*(?:\.[\w-]+)+)=(?P<v>"[^"]*"|'[^']*'|\[[^\]]*\]|[^\s"']+)"""
)
_FLAG = re.compile(r"""(?:^|\s)--(?P<k>[A-Za-z_][\w.-]*)(?:[=\s]\s*(?P<v>"[^"]*"|'[^']*'|(?!--)[^\s\\]+))?""")


class HeadFacts:
    """Facts read off the head of one log, by source."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.config_facts: dict[str, Fact] = {}
        self.command_flat: dict[str, Any] = {}
        self.text_flat: dict[str, Any] = {}
        self.text_model: str | None = None
        self.hf_banner_total: int | None = None
        self.verl_total: int | None = None
        self.command_next = False

    def read(self, text: str) -> None:
        """Cheap, reliable facts from banners, settings and command lines at the top of the log."""
        if self.command_next or _COMMAND.search(text) or text.lstrip().startswith("command:"):
            self.command_next = text.rstrip().endswith("\\")
            if text.strip() == "command:":
                self.command_next = True
            for hydra in _HYDRA.finditer(text):
                self.command_flat.setdefault(hydra["k"], _unquote(hydra["v"]))
            for flag in _FLAG.finditer(text):
                value = flag["v"]
                self.command_flat.setdefault(flag["k"], True if value is None else _unquote(value))
            return
        if "Total " in text:
            banner = _HF_BANNER_TOTAL.search(text)
            if banner is not None and self.hf_banner_total is None:
                self.hf_banner_total = int(banner["n"].replace(",", ""))
            verl_total = _VERL_TOTAL.search(text)
            if verl_total is not None and self.verl_total is None:
                self.verl_total = int(verl_total["n"])
        if "=" in text or ":" in text:
            for setting in _TEXT_SETTING.finditer(text):
                self.text_flat.setdefault(setting["k"], setting["v"])
            if self.text_model is None and ("odel" in text or "ODEL" in text):
                model = _MODEL_TEXT.search(text)
                if model is not None:
                    self.text_model = model["v"]

    def read_config(self, values: Mapping[str, Any]) -> None:
        """Facts from a printed dict that is a run configuration (the first one only)."""
        if _is_config(values) and not self.config_facts:
            self.config_facts = facts_from_flat_config(flatten(values), f"{self.name}: printed config")

    def merge(self, dialect_facts: Mapping[str, Fact]) -> dict[str, Fact]:
        """Facts by trust, lowest first: log text, command line, printed config, then what the dialect read."""
        merged: dict[str, Fact] = {}
        merged.update(facts_from_flat_config(self.text_flat, f"{self.name}: log text"))
        if self.text_model is not None:
            merged["model"] = (self.text_model, f"{self.name}: log text")
        merged.update(facts_from_flat_config(self.command_flat, f"{self.name}: command line"))
        merged.update(self.config_facts)
        merged.update(dialect_facts)
        return merged


def _is_config(values: Mapping[str, Any]) -> bool:
    """A printed run configuration: nested sections, or many settings."""
    return any(isinstance(v, dict) for v in values.values()) or len(values) >= 8


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value
