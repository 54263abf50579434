"""One bound on how deeply a JSON or YAML value read from a run may nest.

Metric logs and configs nest a few levels; a value nested thousands deep is corruption or an attack, and the
parsers (and every recursive walk after them) answer it with `RecursionError`. `loads` and `load_yaml` turn it
into `TooDeepError` (a `ValueError`, like a syntax error) for anything nested deeper than `MAX_DEPTH`, so a
document gets a one-line error and a record in a log is skipped and counted. A streaming reader that decodes
records itself steps over one the parser refused with `value_end`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

import yaml

MAX_DEPTH = 100

_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.DOTALL)


class TooDeepError(ValueError):
    """A value nested deeper than `MAX_DEPTH` levels."""

    def __init__(self) -> None:
        super().__init__(f"nested deeper than {MAX_DEPTH} levels")


def loads(text: str) -> Any:
    """`json.loads`, refusing values nested deeper than `MAX_DEPTH` with `TooDeepError`.

    Raises:
        json.JSONDecodeError: the text is not JSON.
        TooDeepError: it is nested too deeply.
    """
    try:
        value = json.loads(text)
    except RecursionError:
        raise TooDeepError() from None
    if _may_be_deep(text, 0, len(text)):
        check_depth(value)
    return value


def load_yaml(text: str) -> Any:
    """`yaml.safe_load`, refusing values nested deeper than `MAX_DEPTH` with `TooDeepError`."""
    try:
        value = yaml.safe_load(text)
    except RecursionError:
        raise TooDeepError() from None
    check_depth(value)
    return value


def check_depth(value: Any, limit: int = MAX_DEPTH) -> None:
    """Raise `TooDeepError` when lists and mappings in `value` nest deeper than `limit` (walked without recursion)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, Mapping):
            children: Iterable[Any] = item.values()
        elif isinstance(item, list | tuple):
            children = item
        else:
            continue
        if depth > limit:
            raise TooDeepError()
        stack.extend((child, depth + 1) for child in children if isinstance(child, Mapping | list | tuple))


def value_end(text: str, position: int) -> int | None:
    """Where the JSON value starting at `position` ends, or None if the text ends first.

    Brackets are counted and strings skipped, without decoding: how a reader steps over a value it refused.
    """
    depth = 0
    for match in _TOKEN.finditer(text, position):
        token = match.group()
        if token in "[{":
            depth += 1
        elif token in "]}":
            depth -= 1
            if depth <= 0:
                return match.end()
        elif depth == 0:
            return match.end()  # a string at the top level
    return None


def _may_be_deep(text: str, start: int, end: int) -> bool:
    # A value cannot nest deeper than its number of opening brackets: most records are checked at C speed.
    return end - start > MAX_DEPTH and text.count("[", start, end) + text.count("{", start, end) > MAX_DEPTH
