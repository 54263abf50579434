"""`assessor prompt`: the exact text and images an LLM judge would send, as files.

The files are read back out of the provider's own request (`anthropic.request_params`, `openai.chat_params`), the
same function the real call uses, so what is exported cannot drift from what is sent:

* `system.md`: the system message (for Anthropic, its cached blocks one after the other);
* `user.md`: the user turn's text: the evidence sheet and the fenced block of run data;
* `image-1.png`, ...: the attached figures, byte for byte (the dashboard);
* `schema.json`: the verdict's JSON schema (Anthropic's tool input schema, OpenAI's response format).

A reader (a practitioner, or any chat model given these files) answers with one JSON object that fits the schema;
saved as `DIR/<run or case name>/verdict.json`, it is scored by `--judge verdicts:DIR`.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from assessor.errors import ConfigError
from assessor.judge import anthropic, openai, prompts
from assessor.judge.base import JudgeRequest

Provider = Literal["anthropic", "openai"]
PROVIDERS: tuple[Provider, ...] = ("anthropic", "openai")
FILES = ("system.md", "user.md", "schema.json")  # plus image-N.png
_EXTENSIONS = {"image/png": ".png", "image/jpeg": ".jpg", "image/webp": ".webp", "image/gif": ".gif"}


@dataclass(frozen=True)
class ExportedPrompt:
    """What one request carries: system text, user text, images (media type, bytes) and the verdict schema."""

    system: str
    user: str
    images: list[tuple[str, bytes]]
    schema: dict[str, Any]

    def write(self, out_dir: Path) -> list[Path]:
        """Write `system.md`, `user.md`, `image-N.png` and `schema.json` into `out_dir` (made if needed).

        Images left from an earlier export with more figures are removed, so the folder holds exactly one prompt.
        """
        out_dir.mkdir(parents=True, exist_ok=True)
        for stale in out_dir.glob("image-*.*"):
            stale.unlink()
        written = [out_dir / "system.md", out_dir / "user.md"]
        written[0].write_text(self.system, encoding="utf-8")
        written[1].write_text(self.user, encoding="utf-8")
        for i, (media_type, data) in enumerate(self.images, start=1):
            path = out_dir / f"image-{i}{_EXTENSIONS.get(media_type, '.bin')}"
            path.write_bytes(data)
            written.append(path)
        schema = out_dir / "schema.json"
        schema.write_text(json.dumps(self.schema, indent=2) + "\n", encoding="utf-8")
        written.append(schema)
        return written


def _decode(media_type: str, data: str) -> tuple[str, bytes]:
    return media_type, base64.b64decode(data)


def from_anthropic(params: Mapping[str, Any]) -> ExportedPrompt:
    """The prompt inside `anthropic.request_params(...)` (the kwargs of `messages.create`)."""
    system = "".join(block["text"] for block in params["system"])
    (message,) = params["messages"]
    texts = [part["text"] for part in message["content"] if part["type"] == "text"]
    images = [_decode(part["source"]["media_type"], part["source"]["data"])
              for part in message["content"] if part["type"] == "image"]
    (tool,) = params["tools"]
    return ExportedPrompt(system=system, user="".join(texts), images=images, schema=dict(tool["input_schema"]))


def from_openai_chat(params: Mapping[str, Any]) -> ExportedPrompt:
    """The prompt inside `openai.chat_params(...)` (the kwargs of `chat.completions.create`)."""
    messages = params["messages"]
    system = "".join(str(m["content"]) for m in messages if m["role"] == "system")
    parts = [part for m in messages if m["role"] == "user" for part in m["content"]]
    images = []
    for part in parts:
        if part["type"] == "image_url":
            head, _, data = part["image_url"]["url"].partition(",")
            images.append(_decode(head.removeprefix("data:").removesuffix(";base64"), data))
    texts = [part["text"] for part in parts if part["type"] == "text"]
    schema = params["response_format"]["json_schema"]["schema"]
    return ExportedPrompt(system=system, user="".join(texts), images=images, schema=dict(schema))


def export_prompt(request: JudgeRequest, provider: str = "anthropic", images: bool = True) -> ExportedPrompt:
    """What the `provider` judge would send for `request`, taken from its own request builder.

    Args:
        request: the run, its diagnostics and rendered figures.
        provider: `anthropic` or `openai` (Chat Completions, the OpenAI judge's default API).
        images: include the figures (as the judge does unless told `--no-images`).

    Raises:
        ConfigError: an unknown provider.
        JudgeError: a template, the guide or a card is missing.
    """
    prompt = prompts.build_prompt(request)
    schema = prompts.verdict_schema()
    if provider == "anthropic":
        return from_anthropic(anthropic.request_params("export", prompt, schema, images=images))
    if provider == "openai":
        return from_openai_chat(openai.chat_params("export", prompt, schema, images=images))
    raise ConfigError(f"--judge {provider!r}: prompts are exported for {' or '.join(PROVIDERS)}")
