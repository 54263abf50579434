r"""The one scrub of control characters applied to run-supplied text on every surface that shows it.

A run folder, a metric key, a config value or a judge's sentence can carry bytes that drive a terminal or a
viewer: ESC (`ESC[2J` clears the screen, `ESC]8;;url BEL` makes a hyperlink), BEL, CR (overwrites the line),
DEL, the C1 controls (`\x9b` is a one-byte CSI on some terminals), bidi overrides (reorder what is displayed,
"Trojan Source") and lone surrogates (undecodable file-name bytes; writing them to stdout raises). The terminal
renderers, `report.md`, `report.html`, Slack messages, watch's stdout lines, CLI errors and the judge prompt all
pass such text through `printable` (or `one_line`), so there is a single list of what is removed.
"""

from __future__ import annotations

import re

REPLACEMENT = "\ufffd"

# C0 except tab and newline, DEL, C1, bidi embeddings/overrides/isolates, lone surrogates.
_UNPRINTABLE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_ANSI = re.compile(r"\x1b(?:\[[0-9;?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])")
# What JSON leaves raw but a terminal may act on: C1, bidi controls (JSON escapes C0 itself).
_RAW_IN_JSON = re.compile(r"[\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_LINE_BREAKS = re.compile(r"\r\n|[\r\n\t\v\f\x85\u2028\u2029]")


def printable(text: object, replacement: str = REPLACEMENT) -> str:
    r"""`text` with every control character replaced, one for one (tabs and newlines kept).

    Args:
        text: Any value; `str()` of it is scrubbed.
        replacement: What each removed character becomes: U+FFFD by default, so the reader sees that something
            was there (and rich's styled spans keep their offsets); "" where the text must stay compact.

    >>> printable("run\x1b[2J\x07x") == "run\ufffd[2J\ufffdx"
    True
    """
    return _UNPRINTABLE.sub(replacement, str(text))


def without_escapes(text: object) -> str:
    """`text` with whole terminal escape sequences (CSI, OSC such as hyperlinks) and control characters dropped.

    For text a reader or a model should see as it would appear on a terminal, not as a row of replacement marks
    (console logs, completion samples). Tabs and newlines are kept.
    """
    return _UNPRINTABLE.sub("", _ANSI.sub("", str(text)))


def one_line(text: object, replacement: str = REPLACEMENT) -> str:
    r"""`printable(text)` on one line: line breaks shown as `⏎`, tabs as spaces.

    So a key with a newline in it cannot forge a second line of an error or a warning.

    >>> one_line("reward\nError: fake")
    'reward⏎Error: fake'
    """
    return printable(_LINE_BREAKS.sub(lambda m: " " if m.group(0) in "\t\v\f" else "⏎", str(text)), replacement)


def json_text(text: str) -> str:
    r"""JSON text with the controls JSON leaves raw (DEL, C1, bidi) written as `\uXXXX`: the same data, inert.

    Only valid on JSON text, where such characters can occur only inside strings.
    """
    return _RAW_IN_JSON.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
