"""The OpenAI judge (`--judge openai[:MODEL]`): Chat Completions or the Responses API, through the official SDK.

The verdict comes back as JSON constrained by the verdict's JSON schema (`response_format` in Chat Completions,
`text.format` in Responses; `strict` is off because the verdict has optional fields, which strict mode does not
allow). `chat_params` and `responses_params` build the requests, for the real call and for `assessor prompt` alike:
the static system message first (OpenAI caches the longest repeated prefix of a request by itself, at its listed
cached-input rate, reported as `cached_tokens`), then the user turn with the dashboard as a `data:` URL when images are
on and the evidence sheet with the fenced run data.

Chat Completions is the default because OpenAI-compatible servers (vLLM, llama.cpp, Ollama, gateways) speak it;
point `OPENAI_BASE_URL` at one (the SDK reads it). Choose the Responses API with the option `api="responses"` or
`ASSESSOR_OPENAI_API=responses`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

from assessor.errors import ConfigError
from assessor.judge import prompts
from assessor.judge.llm import (
    CallOutput,
    JudgeOptions,
    LLMJudge,
    OutputError,
    SDKErrors,
    Secret,
    api_key_from,
    image_data,
    require_sdk,
)
from assessor.judge.models import Usage

if TYPE_CHECKING:
    import openai as openai_sdk
    from openai.types.chat import ChatCompletion, ChatCompletionMessageParam
    from openai.types.responses import Response

DEFAULT_MODEL = "gpt-4.1"
KEY_VARIABLE = "OPENAI_API_KEY"
BASE_URL_VARIABLE = "OPENAI_BASE_URL"
API_VARIABLE = "ASSESSOR_OPENAI_API"
SCHEMA_NAME = "verdict"
Api = Literal["chat", "responses"]
APIS: tuple[Api, ...] = ("chat", "responses")


class OpenAIJudge(LLMJudge["openai_sdk.OpenAI"]):
    """A GPT model (or any OpenAI-compatible server), asked for a verdict as schema-constrained JSON."""

    provider = "openai"
    key_variable = KEY_VARIABLE
    base_url_variable = BASE_URL_VARIABLE

    def __init__(self, model: str, api_key: Secret, options: JudgeOptions, api: Api = "chat") -> None:
        sdk = require_sdk("openai", "openai")
        super().__init__(model, api_key, options, SDKErrors.from_module(sdk, "OpenAIError"))
        self.api: Api = api
        if api == "responses" and not hasattr(sdk.OpenAI, "responses"):
            raise ConfigError(f"the Responses API needs a newer openai SDK than {sdk.__version__}; run: "
                              'pip install -U "assessor[openai]" "openai>=1.66", or use api="chat"')
        # base_url=None lets the SDK read OPENAI_BASE_URL; retries (429, 5xx, timeouts) and the timeout are the SDK's.
        self._sdk = sdk
        _ = self._client  # resolves base_url now, so errors and repr name the address from the start

    def _new_client(self, base_url: str | None) -> openai_sdk.OpenAI:
        client: openai_sdk.OpenAI = self._sdk.OpenAI(
            api_key=self._api_key.reveal(), base_url=base_url, timeout=self.options.timeout,
            max_retries=self.options.max_retries,
        )
        return client

    def __repr__(self) -> str:
        return super().__repr__()[:-1] + f", api={self.api!r})"

    def _call(self, prompt: prompts.Prompt, schema: dict[str, object], feedback: str | None) -> CallOutput:
        if self.api == "responses":
            return self._call_responses(prompt, schema, feedback)
        return self._call_chat(prompt, schema, feedback)

    def _call_chat(self, prompt: prompts.Prompt, schema: dict[str, object], feedback: str | None) -> CallOutput:
        params = chat_params(self.model, prompt, schema, images=self.wants_images,
                             max_tokens=self.options.max_tokens, feedback=feedback)
        completion: ChatCompletion = self._client.chat.completions.create(**params)
        used = completion.usage
        details = used.prompt_tokens_details if used else None
        usage = Usage(input_tokens=used.prompt_tokens if used else 0,
                      cached_input_tokens=(details.cached_tokens or 0) if details else 0,
                      output_tokens=used.completion_tokens if used else 0, requests=1)
        if not completion.choices:
            raise OutputError("the reply had no choices", usage)
        choice = completion.choices[0]
        if choice.message.refusal:
            raise OutputError(f"the model declined to give a verdict: {choice.message.refusal}", usage)
        if choice.finish_reason == "length":
            raise OutputError("the reply was cut off at the token limit before the verdict was complete; write a "
                              "shorter verdict", usage)
        return CallOutput(raw=choice.message.content or "", usage=usage)

    def _call_responses(self, prompt: prompts.Prompt, schema: dict[str, object], feedback: str | None) -> CallOutput:
        params = responses_params(self.model, prompt, schema, images=self.wants_images,
                                  max_tokens=self.options.max_tokens, feedback=feedback)
        response: Response = self._client.responses.create(**params)
        used = response.usage
        details = used.input_tokens_details if used else None
        usage = Usage(input_tokens=used.input_tokens if used else 0,
                      cached_input_tokens=(details.cached_tokens or 0) if details else 0,
                      output_tokens=used.output_tokens if used else 0, requests=1)
        if response.status == "incomplete":
            reason = response.incomplete_details.reason if response.incomplete_details else None
            raise OutputError(f"the reply was incomplete ({reason or 'no reason given'}) before the verdict was "
                              "complete", usage)
        refusals = [part.refusal for item in response.output if item.type == "message"
                    for part in item.content if part.type == "refusal"]
        text = response.output_text
        if not text and refusals:
            raise OutputError(f"the model declined to give a verdict: {refusals[0]}", usage)
        return CallOutput(raw=text, usage=usage)


def _image_urls(prompt: prompts.Prompt, images: bool) -> list[str]:
    urls = []
    for path in prompt.images if images else []:
        image = image_data(path)
        if image is not None:
            urls.append(f"data:{image[0]};base64,{image[1]}")
    return urls


def chat_params(
    model: str, prompt: prompts.Prompt, schema: dict[str, object], *, images: bool = True,
    max_tokens: int | None = None, feedback: str | None = None,
) -> dict[str, Any]:
    """The keyword arguments of `chat.completions.create` for one verdict request (see the module docstring)."""
    content: list[Any] = [{"type": "image_url", "image_url": {"url": url}} for url in _image_urls(prompt, images)]
    content.append({"type": "text", "text": prompt.user})
    if feedback:
        content.append({"type": "text", "text": feedback})
    messages: list[ChatCompletionMessageParam] = [
        {"role": "system", "content": prompt.system},
        {"role": "user", "content": content},
    ]
    params: dict[str, Any] = {
        "model": model, "messages": messages,
        "response_format": {"type": "json_schema", "json_schema": {"name": SCHEMA_NAME, "schema": schema,
                                                                    "strict": False}},
    }
    if max_tokens is not None:
        params["max_completion_tokens"] = max_tokens
    return params


def responses_params(
    model: str, prompt: prompts.Prompt, schema: dict[str, object], *, images: bool = True,
    max_tokens: int | None = None, feedback: str | None = None,
) -> dict[str, Any]:
    """The keyword arguments of `responses.create` for one verdict request (see the module docstring)."""
    content: list[Any] = [{"type": "input_image", "image_url": url, "detail": "auto"}
                          for url in _image_urls(prompt, images)]
    content.append({"type": "input_text", "text": prompt.user})
    if feedback:
        content.append({"type": "input_text", "text": feedback})
    params: dict[str, Any] = {
        "model": model, "instructions": prompt.system, "input": [{"role": "user", "content": content}],
        "text": {"format": {"type": "json_schema", "name": SCHEMA_NAME, "schema": schema, "strict": False}},
        "store": False,
    }
    if max_tokens is not None:
        params["max_output_tokens"] = max_tokens
    return params


def _api(options: Mapping[str, object]) -> Api:
    value = options.get("api")
    if value is None:
        env = options.get("env")
        source: Mapping[str, str] = env if isinstance(env, Mapping) else os.environ
        value = source.get(API_VARIABLE) or "chat"
    choice = str(value).strip().lower()
    for api in APIS:
        if choice == api:
            return api
    raise ConfigError(f"openai judge: api must be 'chat' or 'responses' (option api or {API_VARIABLE}), "
                      f"not {value!r}")


def make(model: str | None = None, **options: object) -> OpenAIJudge:
    """The OpenAI judge (`--judge openai[:MODEL]`).

    Args:
        model: the model name; `DEFAULT_MODEL` if None.
        **options: `api` (`chat`, the default, or `responses`; default: `ASSESSOR_OPENAI_API`), `timeout` (seconds,
            default 120), `max_retries` (default 2), `images` (default True), `max_tokens`, `base_url` (default:
            `OPENAI_BASE_URL`, else the SDK's), `api_key` (default: `OPENAI_API_KEY`), `env` (a mapping read
            instead of the environment for the key and the API choice). Others are ignored.

    Raises:
        ConfigError: the SDK is not installed, the key is missing, or an option is wrong.
    """
    name = f"openai:{model or DEFAULT_MODEL}"
    require_sdk("openai", "openai")
    key = api_key_from(options, KEY_VARIABLE, "openai")
    return OpenAIJudge(model or DEFAULT_MODEL, key, JudgeOptions.parse(options, name), api=_api(options))
