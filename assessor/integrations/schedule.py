"""Durations as people write them (`90s`, `15m`, `2h`, `1d`, `1h30m`), shared by `assessor watch` and the Slack bot."""

from __future__ import annotations

import re

from assessor.errors import ConfigError

_UNIT_SECONDS = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
_PART = re.compile(r"(\d+(?:\.\d+)?|\.\d+)([smhd])")


def parse_duration(text: str) -> float:
    """Seconds in a duration such as `90s`, `15m`, `2h`, `1.5h`, `1d` or `1h30m`.

    A unit is required: a bare `15` could mean seconds or minutes, and guessing wrong
    would check a run 60 times too often (or too rarely).

    Args:
        text: The duration; case and surrounding spaces are ignored.

    Returns:
        The duration in seconds, always positive.

    Raises:
        ConfigError: the text is not a positive duration with units.
    """
    compact = "".join(text.split()).lower()
    parts = _PART.findall(compact)
    if not compact or "".join(number + unit for number, unit in parts) != compact:
        raise ConfigError(f"invalid duration {text!r}: write a number with a unit, e.g. 90s, 15m, 2h, 1d or 1h30m")
    seconds = sum(float(number) * _UNIT_SECONDS[unit] for number, unit in parts)
    if seconds <= 0:
        raise ConfigError(f"invalid duration {text!r}: it must be longer than zero, e.g. 15m")
    return seconds


def format_duration(seconds: float) -> str:
    """A duration in the largest unit that keeps it whole: 7200 → `2h`, 5400 → `90m`, 45 → `45s`."""
    for unit in ("d", "h", "m"):
        size = _UNIT_SECONDS[unit]
        if seconds >= size and float(seconds / size).is_integer():
            return f"{int(seconds // size)}{unit}"
    return f"{seconds:g}s"
