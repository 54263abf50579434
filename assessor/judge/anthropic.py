"""The Anthropic judge (`--judge anthropic[:MODEL]`): the Messages API through the official `anthropic` SDK.

The verdict comes back as the input of one tool, `report_verdict`, whose input schema is the verdict's JSON schema;
`tool_choice` forces the model to call it. `request_params` builds the request, for the real call and for
`assessor prompt` alike:

* the static prefix is cached: the tool (with the schema) comes first in Anthropic's cache order, then the system
  message as one text block per part (instructions with the guide, then the algorithm cards), each marked
  `cache_control: ephemeral`, so a second check within five minutes (within the hour with `cache_ttl="1h"`, which
  `watch` sets when its checks are minutes to an hour apart) reads ~all of it from the cache at 0.1x the input price;
* the run's data come last, in the user turn: the dashboard as a base64 PNG when images are on, then the evidence
  sheet with the fenced data block (and, on a re-ask, the validation feedback after it).

`ANTHROPIC_BASE_URL` (a proxy or gateway) is read by the SDK itself; the `base_url` option overrides it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from assessor.judge import prompts
from assessor.judge.llm import (
    DEFAULT_MAX_TOKENS,
    CallOutput,
    JudgeOptions,
    LLMJudge,
    OutputError,
    SDKErrors,
    Secret,
    api_key_from,
    image_data,
    one_line,
    require_sdk,
)
from assessor.judge.models import Usage

if TYPE_CHECKING:
    import anthropic as anthropic_sdk
    from anthropic.types import CacheControlEphemeralParam, Message, MessageParam, TextBlockParam, ToolParam

DEFAULT_MODEL = "claude-sonnet-4-6"
KEY_VARIABLE = "ANTHROPIC_API_KEY"
BASE_URL_VARIABLE = "ANTHROPIC_BASE_URL"
TOOL_NAME = "report_verdict"
TOOL_DESCRIPTION = (
    "Report your verdict on the training run: decide continue, stop or rollback, with the evidence it rests on. "
    "Call this exactly once, with the complete verdict."
)


class AnthropicJudge(LLMJudge["anthropic_sdk.Anthropic"]):
    """Claude, asked for a verdict through a forced tool call."""

    provider = "anthropic"
    key_variable = KEY_VARIABLE
    base_url_variable = BASE_URL_VARIABLE

    def __init__(self, model: str, api_key: Secret, options: JudgeOptions) -> None:
        sdk = require_sdk("anthropic", "anthropic")
        super().__init__(model, api_key, options, SDKErrors.from_module(sdk, "AnthropicError"))
        # An explicit api_key keeps the SDK from consulting other credential sources; base_url=None lets it read
        # ANTHROPIC_BASE_URL. Retries (429, 5xx, timeouts) and the timeout itself are the SDK's.
        self._sdk = sdk
        _ = self._client  # resolves base_url now, so errors and repr name the address from the start

    def _new_client(self, base_url: str | None) -> anthropic_sdk.Anthropic:
        client: anthropic_sdk.Anthropic = self._sdk.Anthropic(
            api_key=self._api_key.reveal(), base_url=base_url, timeout=self.options.timeout,
            max_retries=self.options.max_retries,
        )
        return client

    def _call(self, prompt: prompts.Prompt, schema: dict[str, object], feedback: str | None) -> CallOutput:
        max_tokens = self.options.max_tokens or DEFAULT_MAX_TOKENS
        params = request_params(self.model, prompt, schema, images=self.wants_images, max_tokens=max_tokens,
                                feedback=feedback, cache_ttl=self.options.cache_ttl)
        message: Message = self._client.messages.create(**params)
        usage = _usage(message)
        if message.stop_reason == "max_tokens":
            raise OutputError(f"the reply was cut off at max_tokens={max_tokens} before the verdict was complete; "
                              "write a shorter verdict", usage)
        for block in message.content:
            if block.type == "tool_use" and block.name == TOOL_NAME:
                return CallOutput(raw=dict(block.input), usage=usage)
        if message.stop_reason == "refusal":
            raise OutputError("the model declined to give a verdict", usage)
        said = " ".join(block.text for block in message.content if block.type == "text")
        raise OutputError(f"the reply did not call the {TOOL_NAME} tool"
                          + (f" (it said: {one_line(said, 120)})" if said else ""), usage)


def request_params(
    model: str, prompt: prompts.Prompt, schema: dict[str, object], *, images: bool = True,
    max_tokens: int = DEFAULT_MAX_TOKENS, feedback: str | None = None, cache_ttl: str = "5m",
) -> dict[str, Any]:
    """The keyword arguments of `messages.create` for one verdict request (see the module docstring).

    Args:
        model: the model name.
        prompt: the rendered prompt; its system parts become cached system blocks.
        schema: the verdict's JSON schema (the tool's input schema).
        images: attach the prompt's figures.
        max_tokens: the reply's token limit.
        feedback: on a re-ask, what was wrong with the previous output; sent after the user text.
        cache_ttl: the cached prefix's lifetime, `5m` (Anthropic's default, sent without a ttl) or `1h`.
    """
    cache: CacheControlEphemeralParam = {"type": "ephemeral"} if cache_ttl == "5m" else {"type": "ephemeral",
                                                                                          "ttl": "1h"}
    system: list[TextBlockParam] = [{"type": "text", "text": part, "cache_control": cache}
                                    for part in prompt.system_parts]
    content: list[Any] = []
    for path in prompt.images if images else []:
        image = image_data(path)
        if image is not None:
            media_type, data = image
            content.append({"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}})
    content.append({"type": "text", "text": prompt.user})
    if feedback:
        content.append({"type": "text", "text": feedback})
    messages: list[MessageParam] = [{"role": "user", "content": content}]
    tool: ToolParam = {"name": TOOL_NAME, "description": TOOL_DESCRIPTION, "input_schema": schema}
    return {
        "model": model, "max_tokens": max_tokens, "system": system, "messages": messages, "tools": [tool],
        "tool_choice": {"type": "tool", "name": TOOL_NAME, "disable_parallel_tool_use": True},
    }


def _usage(message: Message) -> Usage:
    """Anthropic's usage: `input_tokens` counts only the uncached input after the last cache breakpoint."""
    used = message.usage
    read = getattr(used, "cache_read_input_tokens", None) or 0  # getattr: older SDKs lack the fields
    written = getattr(used, "cache_creation_input_tokens", None) or 0
    return Usage(input_tokens=used.input_tokens + read + written, cached_input_tokens=read,
                 cache_write_tokens=written, output_tokens=used.output_tokens, requests=1)


def make(model: str | None = None, **options: object) -> AnthropicJudge:
    """The Anthropic judge (`--judge anthropic[:MODEL]`).

    Args:
        model: the model name; `DEFAULT_MODEL` if None.
        **options: `timeout` (seconds, default 120), `max_retries` (default 2), `images` (default True),
            `max_tokens`, `base_url` (default: `ANTHROPIC_BASE_URL`, else the SDK's), `api_key` (default:
            `ANTHROPIC_API_KEY`), `env` (a mapping read instead of the environment for the key). Others are ignored.

    Raises:
        ConfigError: the SDK is not installed, the key is missing, or an option is wrong.
    """
    name = f"anthropic:{model or DEFAULT_MODEL}"
    require_sdk("anthropic", "anthropic")
    key = api_key_from(options, KEY_VARIABLE, "anthropic")
    return AnthropicJudge(model or DEFAULT_MODEL, key, JudgeOptions.parse(options, name))
