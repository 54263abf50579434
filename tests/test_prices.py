"""Prices of LLM judgements: one table, prefix matching for dated model names, an override file."""

from __future__ import annotations

import pytest

from assessor.errors import ConfigError
from assessor.judge import prices
from assessor.judge.models import Usage


def test_anthropic_cache_reads_and_writes_are_priced_off_the_input_price():
    price = prices.PRICES["anthropic:claude-sonnet-4-6"]
    assert (price.input, price.output, price.cached_input, price.cache_write) == pytest.approx((3, 15, 0.3, 3.75))


def test_openai_cached_input_is_its_listed_rate_and_writes_cost_nothing_extra():
    price = prices.PRICES["openai:gpt-4.1"]
    assert (price.cached_input, price.cache_write) == (0.5, 2.0)


def test_the_default_models_have_prices():
    from assessor.judge import anthropic, openai

    assert prices.price_for(f"anthropic:{anthropic.DEFAULT_MODEL}", {}) is not None
    assert prices.price_for(f"openai:{openai.DEFAULT_MODEL}", {}) is not None


def test_dated_names_take_the_longest_listed_prefix():
    assert prices.price_for("openai:gpt-4.1-mini-2025-04-14", {}) == prices.PRICES["openai:gpt-4.1-mini"]
    assert prices.price_for("openai:gpt-4.1-2025-04-14", {}) == prices.PRICES["openai:gpt-4.1"]
    assert prices.price_for("anthropic:claude-opus-4-5-20251101", {}) == prices.PRICES["anthropic:claude-opus-4-5"]
    assert prices.price_for("openai:gpt-4.10", {}) is None  # a prefix must end at a dash


def test_cost_splits_plain_cached_and_written_input():
    usage = Usage(input_tokens=13_000, cached_input_tokens=10_000, cache_write_tokens=1_000, output_tokens=400)
    price = prices.Price(input=2.0, output=10.0, cached_input=0.2, cache_write=2.5)
    assert prices.cost(usage, price) == pytest.approx((2_000 * 2 + 10_000 * 0.2 + 1_000 * 2.5 + 400 * 10) / 1e6)
    assert prices.priced(usage, None).cost_usd is None


@pytest.mark.parametrize("suffix", [".toml", ".json"])
def test_an_override_file_replaces_and_adds_entries(tmp_path, suffix):
    path = tmp_path / f"prices{suffix}"
    if suffix == ".toml":
        path.write_text('["anthropic:claude-sonnet-4-6"]\ninput = 1.5\noutput = 7.5\n\n'
                        '["openai:local-llama"]\ninput = 0\noutput = 0\n', encoding="utf-8")
    else:
        path.write_text('{"anthropic:claude-sonnet-4-6": {"input": 1.5, "output": 7.5},'
                        ' "openai:local-llama": {"input": 0, "output": 0, "cached_input": 0}}', encoding="utf-8")
    env = {prices.PRICES_VARIABLE: str(path)}
    sonnet = prices.price_for("anthropic:claude-sonnet-4-6", env)
    assert sonnet is not None and (sonnet.input, sonnet.cached_input, sonnet.cache_write) == pytest.approx(
        (1.5, 0.15, 1.875))
    local = prices.price_for("openai:local-llama", env)
    assert local is not None and prices.cost(Usage(input_tokens=10**6, output_tokens=10**6), local) == 0
    assert prices.price_for("openai:gpt-4.1", env) == prices.PRICES["openai:gpt-4.1"]  # the rest stays


@pytest.mark.parametrize(("text", "message"), [
    ('["anthropic:x"]\ninput = 1\n', "needs both input and output"),
    ('["anthropic:x"]\ninput = -1\noutput = 1\n', "0 or more"),
    ('["no-provider"]\ninput = 1\noutput = 1\n', "provider:model"),
    ("input = [", "not valid TOML"),
])
def test_a_bad_override_file_is_a_config_error_naming_it(tmp_path, text, message):
    path = tmp_path / "prices.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match=message) as error:
        prices.price_for("anthropic:x", {prices.PRICES_VARIABLE: str(path)})
    assert "prices.toml" in str(error.value)
    with pytest.raises(ConfigError, match="cannot be read"):
        prices.price_for("anthropic:x", {prices.PRICES_VARIABLE: str(tmp_path / "missing.toml")})
