"""What LLM judgements cost: USD per million tokens for each model, in this one place, overridable.

`PRICES` holds the providers' list prices for the models we know. A model not listed matches the longest listed
name it starts with (`claude-sonnet-4-5-20250929` is priced as `claude-sonnet-4-5`); a model matching nothing has
no price, and its usage gets `cost_usd = None` (tokens are still counted).

Anthropic bills prompt-cache reads at 0.1x the input price and cache writes (5-minute cache) at 1.25x; OpenAI bills
cached input at a per-model listed rate and charges nothing extra for writing the cache.

**Overrides.** Set `ASSESSOR_PRICES` to a TOML or JSON file whose tables are named by judge (`provider:model`):

```toml
["anthropic:claude-sonnet-4-6"]
input = 3.0          # USD per million input tokens
output = 15.0        # USD per million output tokens
# cached_input = 0.3 # optional: Anthropic default 0.1 x input, OpenAI default = input
# cache_write = 3.75 # optional: Anthropic default 1.25 x input, OpenAI default = input

["openai:my-vllm-model"]
input = 0
output = 0
```

Entries of the file replace the built-in ones of the same name and add new ones (a local server priced at 0).
"""

from __future__ import annotations

import json
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from assessor.errors import ConfigError
from assessor.judge.models import Usage

PRICES_VARIABLE = "ASSESSOR_PRICES"
ANTHROPIC_CACHE_READ = 0.1  # x the input price
ANTHROPIC_CACHE_WRITE = 1.25  # x the input price (5-minute cache)
ANTHROPIC_CACHE_WRITE_HOUR = 2.0  # x the input price (1-hour cache)


@dataclass(frozen=True)
class Price:
    """USD per million tokens: uncached input, output, input read from the prompt cache, input written to it."""

    input: float
    output: float
    cached_input: float
    cache_write: float


def anthropic(input: float, output: float) -> Price:
    """An Anthropic price: cache reads at 0.1x input, cache writes at 1.25x."""
    return Price(input, output, input * ANTHROPIC_CACHE_READ, input * ANTHROPIC_CACHE_WRITE)


def openai(input: float, output: float, cached_input: float) -> Price:
    """An OpenAI price: cached input at its listed rate, no surcharge for writing the cache."""
    return Price(input, output, cached_input, input)


# List prices, USD per million tokens. Check the providers' pricing pages before relying on a bill; correct or
# extend them with ASSESSOR_PRICES rather than here when they change.
PRICES: dict[str, Price] = {
    "anthropic:claude-opus-4": anthropic(15.0, 75.0),
    "anthropic:claude-opus-4-1": anthropic(15.0, 75.0),
    "anthropic:claude-opus-4-5": anthropic(5.0, 25.0),
    "anthropic:claude-sonnet-4": anthropic(3.0, 15.0),
    "anthropic:claude-sonnet-4-5": anthropic(3.0, 15.0),
    "anthropic:claude-sonnet-4-6": anthropic(3.0, 15.0),  # the default model; the Sonnet line's price
    "anthropic:claude-3-7-sonnet": anthropic(3.0, 15.0),
    "anthropic:claude-haiku-4-5": anthropic(1.0, 5.0),
    "anthropic:claude-3-5-haiku": anthropic(0.8, 4.0),
    "openai:gpt-4.1": openai(2.0, 8.0, 0.5),  # the default model
    "openai:gpt-4.1-mini": openai(0.4, 1.6, 0.1),
    "openai:gpt-4.1-nano": openai(0.1, 0.4, 0.025),
    "openai:gpt-4o": openai(2.5, 10.0, 1.25),
    "openai:gpt-4o-mini": openai(0.15, 0.6, 0.075),
    "openai:gpt-5": openai(1.25, 10.0, 0.125),
    "openai:gpt-5-mini": openai(0.25, 2.0, 0.025),
    "openai:gpt-5-nano": openai(0.05, 0.4, 0.005),
    "openai:o3": openai(2.0, 8.0, 0.5),
    "openai:o4-mini": openai(1.1, 4.4, 0.275),
}


def _number(entry: Mapping[str, object], key: str, where: str) -> float | None:
    value = entry.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise ConfigError(f"{where}: {key} must be a number of USD per million tokens, 0 or more, not {value!r}")
    return float(value)


def read_prices(path: Path) -> dict[str, Price]:
    """The prices in a TOML or JSON override file (see the module docstring).

    Raises:
        ConfigError: the file cannot be read or parsed, or an entry lacks `input`/`output` or has a bad number.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise ConfigError(f"{PRICES_VARIABLE}={path}: cannot be read ({error.strerror}); fix the path or unset it") \
            from None
    try:
        data: object = json.loads(text) if path.suffix.lower() == ".json" else tomllib.loads(text)
    except (json.JSONDecodeError, tomllib.TOMLDecodeError) as error:
        raise ConfigError(f"{PRICES_VARIABLE}={path}: not valid {'JSON' if path.suffix == '.json' else 'TOML'} "
                          f"({error})") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{PRICES_VARIABLE}={path}: expected a table per judge, e.g. [\"anthropic:MODEL\"]")
    prices: dict[str, Price] = {}
    for name, entry in data.items():
        where = f"{path}: {name!r}"
        if not isinstance(entry, dict) or ":" not in name:
            raise ConfigError(f"{where}: expected a table named provider:model with input and output prices")
        input, output = _number(entry, "input", where), _number(entry, "output", where)
        if input is None or output is None:
            raise ConfigError(f"{where}: needs both input and output (USD per million tokens)")
        default = anthropic(input, output) if name.startswith("anthropic:") else Price(input, output, input, input)
        cached, write = _number(entry, "cached_input", where), _number(entry, "cache_write", where)
        prices[name] = Price(input, output, default.cached_input if cached is None else cached,
                             default.cache_write if write is None else write)
    return prices


def price_table(env: Mapping[str, str] | None = None) -> dict[str, Price]:
    """The built-in prices with the `ASSESSOR_PRICES` file's entries laid over them."""
    env = os.environ if env is None else env
    path = env.get(PRICES_VARIABLE)
    return {**PRICES, **read_prices(Path(path))} if path else dict(PRICES)


def price_for(judge: str, env: Mapping[str, str] | None = None) -> Price | None:
    """The price of a judge (`anthropic:claude-sonnet-4-6`): its own entry, else the longest listed prefix.

    >>> price_for("anthropic:claude-sonnet-4-5-20250929", {}) == PRICES["anthropic:claude-sonnet-4-5"]
    True
    >>> price_for("openai:some-local-model", {}) is None
    True
    """
    table = price_table(env)
    if judge in table:
        return table[judge]
    matches = [name for name in table if judge.startswith(name + "-")]
    return table[max(matches, key=len)] if matches else None


def with_hour_cache(price: Price) -> Price:
    """`price` with cache writes at Anthropic's one-hour rate (2x input instead of 1.25x)."""
    return Price(price.input, price.output, price.cached_input, price.input * ANTHROPIC_CACHE_WRITE_HOUR)


def cost(usage: Usage, price: Price) -> float:
    """USD for the tokens of `usage` at `price` (cache reads and writes at their own rates)."""
    plain = max(0, usage.input_tokens - usage.cached_input_tokens - usage.cache_write_tokens)
    return (plain * price.input + usage.cached_input_tokens * price.cached_input
            + usage.cache_write_tokens * price.cache_write + usage.output_tokens * price.output) / 1e6


def priced(usage: Usage, price: Price | None) -> Usage:
    """`usage` with its cost filled in (None without a price)."""
    return usage.model_copy(update={"cost_usd": None if price is None else cost(usage, price)})
