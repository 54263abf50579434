"""Progress tables as printed: the HF Trainer's notebook table (HTML), and text tables in logs and cell outputs.

A progress table has a step column (`Step`, `global_step`, ...) and a row of numbers per logged step. In text
it comes TAB-separated, as a Markdown pipe table (`| Step | Training Loss | reward |`) or aligned with spaces
(pandas' `to_string`, with or without its index column); in a notebook, transformers' `NotebookProgressCallback`
displays it as an HTML `<table>`. Cells may read `No log` (a column not logged yet): that is "not logged".
Only the standard library is used (`html.parser`), so reading a notebook needs no Jupyter.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Any

from assessor.ingest.base import parse_number
from assessor.ingest.tables import as_step, step_rank

_PIPE_RULE = re.compile(r"^\|?\s*:?-{2,}:?\s*(?:\|\s*:?-{2,}:?\s*)*\|?$")
_WIDE_GAP = re.compile(r"\s{2,}")
_NOT_LOGGED = ("No log", "No_log", "no log", "-", "—", "")
_MAX_HEADER_CELL = 60


@dataclass
class Table:
    """One printed table: its header and its rows of cell text."""

    header: list[str]
    rows: list[list[str]] = field(default_factory=list)

    def records(self) -> list[dict[str, Any]]:
        """The rows as `column -> cell`, cells that say "not logged" left out."""
        return [
            {name: cell for name, cell in zip(self.header, row, strict=True) if cell.strip() not in _NOT_LOGGED}
            for row in self.rows
        ]


def is_progress_header(cells: list[str]) -> bool:
    """A header line of a progress table: two or more short names, one of them a step column, none a number."""
    if len(cells) < 2 or any(not c or len(c) > _MAX_HEADER_CELL for c in cells):
        return False
    if any(parse_number(c) is not None for c in cells):
        return False
    return any(step_rank(c) is not None for c in cells)


def _row_fits(header: list[str], row: list[str]) -> bool:
    if len(row) != len(header):
        return False
    step_at = next(i for i, c in enumerate(header) if step_rank(c) is not None)
    if as_step(row[step_at]) is None:
        return False
    others = [c for i, c in enumerate(row) if i != step_at and c.strip() not in _NOT_LOGGED]
    return sum(parse_number(c) is not None for c in others) * 2 >= len(others)


class TableScan:
    """Finds progress tables in text fed one line at a time (`tables` holds every one seen, in order)."""

    def __init__(self) -> None:
        self.tables: list[Table] = []
        self._open: Table | None = None
        self._mode = ""

    @property
    def open(self) -> bool:
        """Whether a table is being read (its next line may be a row)."""
        return self._open is not None

    @property
    def rows(self) -> int:
        """Table rows found so far."""
        return sum(len(t.rows) for t in self.tables) + (len(self._open.rows) if self._open is not None else 0)

    def feed(self, line: str) -> bool:
        """Read one line; True when it was a header or row of a table."""
        text = line.strip()
        if self._open is not None:
            if self._mode == "pipe" and _PIPE_RULE.match(text):
                return True
            if _row_fits(self._open.header, self._row_cells(text)):
                self._open.rows.append(self._row_cells(text))
                return True
            self._close()
        # A header names columns: no `key=value` or `key: value` in it (which most log lines have).
        if not text or "=" in text or ": " in text or not any(c.isalpha() for c in text[:200]):
            return False
        mode = "tab" if "\t" in text else "pipe" if text.count("|") >= 2 else "space" if "  " in text else ""
        if not mode:
            return False  # one column at most: not a header
        cells = _cells(text, mode, header=True)
        if is_progress_header(cells):
            self._open, self._mode = Table(cells), mode
            return True
        return False

    def finish(self) -> None:
        """End of the text: keep a table still open."""
        self._close()

    def _row_cells(self, text: str) -> list[str]:
        assert self._open is not None
        cells = _cells(text, self._mode, header=False)
        if self._mode == "space" and len(cells) == len(self._open.header) + 1:
            cells = cells[1:]  # pandas prints its index before the first column
        return cells

    def _close(self) -> None:
        if self._open is not None and self._open.rows:
            self.tables.append(self._open)
        self._open = None


def _cells(text: str, mode: str, header: bool) -> list[str]:
    if mode == "tab":
        return [c.strip() for c in text.split("\t")]
    if mode == "pipe":
        return [c.strip() for c in text.strip().strip("|").split("|")]
    if header:
        return [c.strip() for c in _WIDE_GAP.split(text)]  # `Training Loss` is one name
    return text.replace("No log", "No_log").split()


class HtmlTables(HTMLParser):
    """Every `<table>` of an HTML text, as `Table`s (header from the first row, `<th>` or `<td>`)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tables: list[Table] = []
        self._rows: list[list[str]] | None = None
        self._row: list[str] | None = None
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:  # noqa: D102
        if tag == "table":
            self._rows = []
        elif tag == "tr" and self._rows is not None:
            self._row = []
        elif tag in ("td", "th") and self._row is not None:
            self._cell = []

    def handle_endtag(self, tag: str) -> None:  # noqa: D102
        if tag in ("td", "th") and self._row is not None and self._cell is not None:
            self._row.append(" ".join("".join(self._cell).split()))
            self._cell = None
        elif tag == "tr" and self._rows is not None and self._row is not None:
            self._rows.append(self._row)
            self._row = None
        elif tag == "table" and self._rows is not None:
            self._add(self._rows)
            self._rows = None

    def handle_data(self, data: str) -> None:  # noqa: D102
        if self._cell is not None:
            self._cell.append(data)

    def _add(self, rows: list[list[str]]) -> None:
        if not rows:
            return
        header, body = rows[0], rows[1:]
        if header and not header[0] and len(header) > 1:  # a pandas index column
            header, body = header[1:], [r[1:] for r in body]
        if is_progress_header(header):
            table = Table(header, [r for r in body if _row_fits(header, r)])
            if table.rows:
                self.tables.append(table)


def html_tables(html: str) -> list[Table]:
    """The progress tables in an HTML text."""
    parser = HtmlTables()
    parser.feed(html)
    parser.close()
    return parser.tables
