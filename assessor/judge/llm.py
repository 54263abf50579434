"""What the LLM judges share: prompt, validation with one re-ask, usage, error messages, secrets kept out.

A provider subclass implements one method, `_call(prompt, schema, feedback)`, which sends one request through the
provider's official SDK and returns the model's raw structured output (a JSON string or an already decoded object)
with the tokens it cost. Everything else lives here:

* the prompt comes from `prompts.build_prompt`; the output is checked with `Verdict.model_validate`;
* each request's usage (input, cached input, cache writes, output) is priced with `assessor.judge.prices`;
* an invalid output is asked for once more, with the validation errors appended as feedback; a second invalid
  output raises `JudgeError` with one line naming the judge and the first problem;
* SDK exceptions (timeouts, refused connections, 401/403/404/429, other statuses) become one-line `JudgeError`s;
  retries on 429/5xx are the SDK's own (`max_retries`), the timeout is the SDK's too;
* the API key is held so that it never shows in a repr, and is scrubbed from any text taken from an SDK exception.
"""

from __future__ import annotations

import base64
import importlib
import json
import os
import re
import time
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from pydantic import ValidationError

from assessor.errors import ConfigError, JudgeError, JudgeUnavailableError
from assessor.judge import prices, prompts
from assessor.judge.base import JudgeRequest, JudgeResult, with_blind_spots
from assessor.judge.models import Usage, Verdict

DEFAULT_TIMEOUT_S = 120.0
DEFAULT_MAX_RETRIES = 2
DEFAULT_MAX_TOKENS = 4096
MAX_REASKS = 1  # one more request after an invalid output, then JudgeError
_MESSAGE_LIMIT = 300  # characters of provider text quoted in an error message
_FEEDBACK_ERRORS = 8  # validation errors listed in the re-ask
IMAGE_MEDIA_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".webp": "image/webp",
                     ".gif": "image/gif"}


def require_sdk(module: str, extra: str) -> ModuleType:
    """Import a provider SDK, or explain how to install it.

    Args:
        module: the SDK's import name (`anthropic`, `openai`).
        extra: the `assessor` extra that installs it.

    Raises:
        ConfigError: the SDK is not installed.
    """
    try:
        return importlib.import_module(module)
    except ImportError:
        raise ConfigError(
            f"the {extra} judge needs the {module} SDK, which is not installed; run: pip install \"assessor[{extra}]\""
        ) from None


class Secret:
    """A string kept out of reprs, logs and tracebacks' locals: `str()` and `repr()` show `***`."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        """The secret itself, to hand to the SDK."""
        return self._value

    def scrub(self, text: str) -> str:
        """`text` with every occurrence of the secret (and of its longer fragments) masked."""
        value = self._value
        if not value:
            return text
        text = text.replace(value, "***")
        # Providers sometimes echo a key partly masked ("sk-abc***************xyz"): hide any 8+ character run of it.
        if len(value) >= 16:
            for size in (12, 8):
                for start in range(len(value) - size + 1):
                    fragment = value[start:start + size]
                    if fragment in text:
                        text = text.replace(fragment, "***")
        return text

    def __repr__(self) -> str:
        return "'***'"

    __str__ = __repr__


@dataclass(frozen=True)
class CallOutput:
    """What one request returned: the raw structured output and its usage (tokens in and out)."""

    raw: str | dict[str, object]
    usage: Usage


class OutputError(Exception):
    """A reply that carries no usable output (refusal, cut off, no tool call): treated like an invalid output.

    Args:
        problem: what was wrong, one line, phrased for the re-ask and the final error.
        usage: what the request cost, still counted.
    """

    def __init__(self, problem: str, usage: Usage | None = None) -> None:
        super().__init__(problem)
        self.problem = problem
        self.usage = usage or Usage(requests=1)


@dataclass(frozen=True)
class SDKErrors:
    """A provider SDK's exception classes, for turning its failures into one-line `JudgeError`s."""

    base: type[BaseException]
    timeout: type[BaseException]
    connection: type[BaseException]
    status: type[BaseException]
    auth: type[BaseException]
    permission: type[BaseException]
    not_found: type[BaseException]
    rate_limit: type[BaseException]
    bad_request: type[BaseException]

    @classmethod
    def from_module(cls, sdk: ModuleType, base: str) -> SDKErrors:
        """The classes as named by both official SDKs (`anthropic`, `openai`); `base` names the root class."""
        return cls(
            base=getattr(sdk, base), timeout=sdk.APITimeoutError, connection=sdk.APIConnectionError,
            status=sdk.APIStatusError, auth=sdk.AuthenticationError, permission=sdk.PermissionDeniedError,
            not_found=sdk.NotFoundError, rate_limit=sdk.RateLimitError, bad_request=sdk.BadRequestError,
        )


CACHE_TTLS = ("5m", "1h")  # Anthropic's prompt-cache lifetimes


@dataclass(frozen=True)
class JudgeOptions:
    """The options every LLM judge takes (`get_judge(..., **options)`), checked.

    Attributes:
        timeout: seconds one request may take before it is abandoned (the SDK's timeout).
        max_retries: SDK retries on 429, 5xx, timeouts and dropped connections.
        images: send the rendered plots (the dashboard) as images.
        max_tokens: the reply's token limit.
        base_url: the API's address; None lets the SDK read its own variable (`ANTHROPIC_BASE_URL`, `OPENAI_BASE_URL`).
        price: the model's price (`assessor.judge.prices`, `ASSESSOR_PRICES` applied); None when unknown.
        cache_ttl: how long Anthropic keeps the cached prefix, `5m` (the default) or `1h` (writes cost 2x the input
            price instead of 1.25x; worth it when checks come more than five minutes apart but within the hour, as
            `watch` sets it). OpenAI caches on its own and ignores it.
    """

    timeout: float = DEFAULT_TIMEOUT_S
    max_retries: int = DEFAULT_MAX_RETRIES
    images: bool = True
    max_tokens: int | None = None
    base_url: str | None = None
    price: prices.Price | None = None
    cache_ttl: str = "5m"

    @classmethod
    def parse(cls, options: Mapping[str, object], judge: str) -> JudgeOptions:
        """Read the shared options from `options` (others are left to the provider, or ignored).

        Raises:
            ConfigError: an option of the wrong type or out of range, or a bad `ASSESSOR_PRICES` file.
        """
        timeout = _number(options.get("timeout"), "timeout", judge, DEFAULT_TIMEOUT_S)
        if timeout <= 0:
            raise ConfigError(f"{judge}: timeout must be a positive number of seconds, not {timeout:g}")
        retries = _number(options.get("max_retries"), "max_retries", judge, DEFAULT_MAX_RETRIES)
        if retries < 0 or retries != int(retries):
            raise ConfigError(f"{judge}: max_retries must be a whole number, 0 or more, not {retries:g}")
        tokens = options.get("max_tokens")
        max_tokens = None if tokens is None else int(_number(tokens, "max_tokens", judge, DEFAULT_MAX_TOKENS))
        if max_tokens is not None and max_tokens <= 0:
            raise ConfigError(f"{judge}: max_tokens must be positive, not {max_tokens}")
        base_url = options.get("base_url")
        if base_url is not None and not isinstance(base_url, str):
            raise ConfigError(f"{judge}: base_url must be a URL string")
        images = options.get("images", True)
        env = options.get("env")
        price = prices.price_for(judge, env if isinstance(env, Mapping) else None)
        cache_ttl = options.get("cache_ttl", "5m")
        if cache_ttl not in CACHE_TTLS:
            raise ConfigError(f"{judge}: cache_ttl must be one of {', '.join(CACHE_TTLS)}, not {cache_ttl!r}")
        if cache_ttl == "1h" and price is not None:
            price = prices.with_hour_cache(price)
        return cls(timeout=timeout, max_retries=int(retries), images=bool(images), max_tokens=max_tokens,
                   base_url=base_url or None, price=price, cache_ttl=str(cache_ttl))


def _number(value: object, option: str, judge: str, default: float) -> float:
    if value is None:
        return float(default)
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ConfigError(f"{judge}: option {option} must be a number, not {type(value).__name__}")
    try:
        return float(value)
    except ValueError:
        raise ConfigError(f"{judge}: option {option} must be a number, not {value!r}") from None


def api_key_from(options: Mapping[str, object], variable: str, judge: str) -> Secret:
    """The API key: the `api_key` option, else `variable` from the `env` option (a mapping) or the environment.

    Raises:
        ConfigError: no key, naming the variable to set.
    """
    key = options.get("api_key")
    if key is None:
        env = options.get("env")
        source: Mapping[str, str] = env if isinstance(env, Mapping) else os.environ
        key = source.get(variable)
    if not isinstance(key, str) or not key.strip():
        raise ConfigError(f"--judge {judge} needs {variable} in the environment; set it, or use --judge rules")
    return Secret(key.strip())


def image_data(path: Path) -> tuple[str, str] | None:
    """(media type, base64 data) of an image file, or None if it is missing or not an image type we send."""
    media_type = IMAGE_MEDIA_TYPES.get(path.suffix.lower())
    if media_type is None:
        return None
    try:
        data = path.read_bytes()
    except OSError:
        return None
    return media_type, base64.b64encode(data).decode("ascii")


def one_line(text: str, limit: int = _MESSAGE_LIMIT) -> str:
    """`text` on one line, whitespace collapsed, cut to `limit` characters."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def parse_output(raw: str | Mapping[str, object]) -> Verdict:
    """The verdict in a model's raw output (JSON text, possibly fenced, or a decoded object).

    Raises:
        ValueError: not JSON, or not a JSON object.
        ValidationError: JSON that is not a valid verdict.
    """
    if isinstance(raw, str):
        text = raw.strip()
        fenced = re.fullmatch(r"```(?:json)?\s*(.*?)\s*```", text, flags=re.DOTALL)
        if fenced:
            text = fenced.group(1)
        if not text:
            raise ValueError("the reply was empty; expected one JSON object")
        try:
            data: object = json.loads(text)
        except json.JSONDecodeError as error:
            raise ValueError(f"the reply is not valid JSON ({error.msg} at line {error.lineno} column "
                             f"{error.colno})") from None
    else:
        data = dict(raw)
    if not isinstance(data, dict):
        raise ValueError(f"the reply is JSON but not an object (got {type(data).__name__})")
    return Verdict.model_validate(data)


def describe_validation(error: ValidationError, limit: int = _FEEDBACK_ERRORS) -> list[str]:
    """Each validation error as `location: message`, at most `limit` of them."""
    lines = []
    for item in error.errors(include_url=False)[:limit]:
        location = ".".join(str(part) for part in item["loc"]) or "verdict"
        lines.append(f"{location}: {item['msg']}")
    return lines


def _validate(raw: str | Mapping[str, object]) -> tuple[Verdict | None, list[str]]:
    """The verdict, or None and what is wrong with the output (at least one line)."""
    try:
        return parse_output(raw), []
    except ValidationError as error:
        problems = describe_validation(error)
        if error.error_count() > len(problems):
            problems.append(f"(and {error.error_count() - len(problems)} more)")
        return None, problems or ["the reply is not a valid verdict"]
    except ValueError as error:
        return None, [str(error)]


def _reask_feedback(problems: list[str]) -> str:
    listed = "\n".join(f"- {problem}" for problem in problems)
    return (
        "Your previous reply could not be used as a verdict:\n"
        f"{listed}\n"
        "Reply again with the complete verdict, corrected, following the schema exactly."
    )


class _SDKClient(Protocol):
    base_url: Any

    def close(self) -> None: ...


ClientT = TypeVar("ClientT", bound=_SDKClient)


class LLMJudge(ABC, Generic[ClientT]):
    """A judge backed by a hosted or local LLM (see the module docstring for what this base class does).

    Subclasses set `provider`, `key_variable`, `base_url_variable` and `errors` (the SDK's exception classes),
    and implement `_new_client` and `_call`. The base keeps one SDK client per judgement and closes it after.
    """

    provider: ClassVar[str]
    key_variable: ClassVar[str]
    base_url_variable: ClassVar[str]

    def __init__(self, model: str, api_key: Secret, options: JudgeOptions, errors: SDKErrors) -> None:
        self.model = model
        self.name = f"{self.provider}:{model}"
        self.options = options
        self.wants_images = options.images
        self.errors = errors
        self.base_url = options.base_url or ""
        self._api_key = api_key
        self._sdk_client: ClientT | None = None
        self.total_usage = Usage()  # across every judgement this judge has made

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(model={self.model!r}, base_url={self.base_url!r}, "
                f"timeout={self.options.timeout:g}, max_retries={self.options.max_retries}, "
                f"images={self.wants_images}, api_key='***')")

    @abstractmethod
    def _new_client(self, base_url: str | None) -> ClientT:
        """A new SDK client; `base_url=None` lets the SDK read its own variable."""

    @property
    def _client(self) -> ClientT:
        if self._sdk_client is None:
            # The first client resolves the address (option, else the SDK's variable); later ones keep it.
            self._sdk_client = self._new_client(self.options.base_url or self.base_url or None)
            self.base_url = str(self._sdk_client.base_url)
        return self._sdk_client

    @abstractmethod
    def _call(self, prompt: prompts.Prompt, schema: dict[str, object], feedback: str | None) -> CallOutput:
        """Send one request; return the raw structured output and its usage.

        Args:
            prompt: system text, user text and image paths (send images only when `self.wants_images`).
            schema: the verdict's JSON schema, for the provider's structured-output mechanism.
            feedback: on the re-ask, what was wrong with the previous output; add it after the user text.

        Raises:
            OutputError: the reply had no usable output (refused, cut off, no tool call).
            Exception: the SDK's own exceptions, turned into `JudgeError` by the caller.
        """

    def judge(self, request: JudgeRequest) -> JudgeResult:
        """Ask the model for a verdict; ask once more if the output is invalid.

        Raises:
            JudgeError: the API failed (after the SDK's retries), or the output was invalid twice.
        """
        prompt = prompts.build_prompt(request)
        schema = prompts.verdict_schema()
        try:
            return with_blind_spots(self._judge(prompt, schema), request.diagnostics)
        finally:
            self.close()

    def close(self) -> None:
        """Release the SDK client's connections (a new client is made for the next judgement)."""
        if self._sdk_client is not None:
            self._sdk_client.close()
            self._sdk_client = None

    def _judge(self, prompt: prompts.Prompt, schema: dict[str, object]) -> JudgeResult:
        usage = Usage()
        feedback: str | None = None
        problem = ""
        for _attempt in range(1 + MAX_REASKS):
            started = time.monotonic()
            try:
                output = self._send(prompt, schema, feedback)
            except OutputError as error:
                usage = _add(usage, prices.priced(error.usage, self.options.price), time.monotonic() - started)
                problems = [error.problem]
            else:
                usage = _add(usage, prices.priced(output.usage, self.options.price), time.monotonic() - started)
                verdict, problems = _validate(output.raw)
                if verdict is not None:
                    self.total_usage = _add(self.total_usage, usage, 0.0)
                    return JudgeResult(verdict=verdict, usage=usage)
            problem = problems[0]
            feedback = _reask_feedback(problems)
        self.total_usage = _add(self.total_usage, usage, 0.0)
        raise JudgeError(self._scrub(
            f"{self.name} gave no valid verdict after {1 + MAX_REASKS} attempts; last problem: {one_line(problem)}"))

    def _send(self, prompt: prompts.Prompt, schema: dict[str, object], feedback: str | None) -> CallOutput:
        try:
            return self._call(prompt, schema, feedback)
        except OutputError:
            raise
        except self.errors.base as error:
            errors = self.errors
            unreachable = isinstance(error, errors.timeout | errors.connection) or (
                isinstance(error, errors.status) and int(getattr(error, "status_code", 0) or 0) >= 500)
            kind = JudgeUnavailableError if unreachable else JudgeError
            raise kind(self._scrub(self._describe(error))) from None

    def _scrub(self, text: str) -> str:
        return self._api_key.scrub(text)

    def _describe(self, error: BaseException) -> str:
        """One line saying what failed and what to do, for an SDK exception."""
        errors, retries = self.errors, self.options.max_retries
        where = self.base_url.rstrip("/") or "the default API address"
        tried = f" (after {retries} {'retry' if retries == 1 else 'retries'})" if retries else ""
        if isinstance(error, errors.timeout):
            return (f"{self.name}: no reply within the {self.options.timeout:g} s timeout{tried} from {where}; "
                    "try again, or allow longer with the judge's timeout option")
        if isinstance(error, errors.connection):
            cause = error.__cause__ or error.__context__
            reason = one_line(str(cause), 120) if cause is not None and str(cause) else "connection failed"
            return (f"{self.name}: could not connect to {where} ({reason}); check {self.base_url_variable} "
                    "and the network")
        status = getattr(error, "status_code", None)
        detail = one_line(_api_message(error), 200)
        if isinstance(error, errors.auth):
            return f"{self.key_variable} was rejected (401); check the key"
        if isinstance(error, errors.permission):
            return f"{self.key_variable} may not use {self.model} (403: {detail}); check the key's access"
        if isinstance(error, errors.not_found):
            return (f"{self.name}: not found at {where} (404: {detail}); check the model name and "
                    f"{self.base_url_variable}")
        if isinstance(error, errors.rate_limit):
            return f"{self.name}: rate limited (429){tried} ({detail}); wait a while and try again"
        if isinstance(error, errors.bad_request):
            return f"{self.name}: the API rejected the request (400: {detail})"
        if isinstance(error, errors.status):
            return f"{self.name}: the API answered {status}{tried}: {detail}"
        return f"{self.name}: {type(error).__name__}: {one_line(str(error), 200)}"


def _api_message(error: BaseException) -> str:
    """The provider's own error message from an SDK status error (its JSON body), else the exception text."""
    body = getattr(error, "body", None)
    if isinstance(body, Mapping):
        inner = body.get("error", body)
        if isinstance(inner, Mapping) and isinstance(inner.get("message"), str):
            return str(inner["message"])
        if isinstance(inner, str):
            return inner
    return str(error)


def _add(total: Usage, more: Usage, latency_s: float) -> Usage:
    return Usage(
        input_tokens=total.input_tokens + more.input_tokens,
        cached_input_tokens=total.cached_input_tokens + more.cached_input_tokens,
        cache_write_tokens=total.cache_write_tokens + more.cache_write_tokens,
        output_tokens=total.output_tokens + more.output_tokens,
        requests=total.requests + more.requests,
        latency_s=total.latency_s + more.latency_s + latency_s,
        cost_usd=None if total.cost_usd is None and more.cost_usd is None
        else (total.cost_usd or 0.0) + (more.cost_usd or 0.0),
    )

