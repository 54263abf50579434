"""Jupyter notebooks (`.ipynb`): the Trainer's progress table and the metrics printed in output cells.

Many runs live in a notebook (Unsloth, Colab, Kaggle), and the numbers are in the saved outputs of the cell
that called `trainer.train()`:

* transformers' notebook callback displays the progress table as HTML (`text/html`: `<table>` with `Step`,
  `Training Loss`, `reward`, ... columns), refreshed in place, so the saved output is the last, complete one;
* a plain-text table (`text/plain`, or printed to the stream): `Step | Training Loss | ...`, TAB- or
  space-aligned;
* log lines and dicts printed to stdout/stderr (`{'loss': ..., 'reward': ...}`, `step 12: reward=0.4 ...`),
  read by the console reader.

A notebook that trained in several cells (a first attempt, then a resumed or longer run) is read from the last
cell that holds training output; the others are listed in the notes. The file is plain JSON (nbformat 4, and
the `worksheets` of nbformat 3), read with the standard library; no Jupyter is needed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from assessor.errors import UnreadableSourceError
from assessor.ingest.base import SourceData
from assessor.ingest.console import read_scan
from assessor.ingest.console.scan import Scan
from assessor.ingest.nesting import TooDeepError, loads
from assessor.ingest.tables import RowTable
from assessor.ingest.text_tables import Table, html_tables

_MAX_BYTES = 512 * 2**20


class NotebookReader:
    """Reads the training output of a Jupyter notebook."""

    name = "notebook"

    def sniff(self, path: Path, head: bytes) -> bool:
        """`.ipynb` files."""
        return path.suffix.lower() == ".ipynb"

    def read(self, path: Path) -> SourceData:
        """Read the last cell with training output; raise `UnreadableSourceError` when no cell has any."""
        cells = _code_cells(path)
        found: list[tuple[int, SourceData]] = []
        for number, cell in enumerate(cells, start=1):
            data = _cell_source(path, cell, number)
            if data is not None:
                found.append((number, data))
        if not found:
            raise UnreadableSourceError(
                f"{path}: no progress table or metric lines in any output cell; run the training cell and save the "
                "notebook with its outputs"
            )
        number, data = found[-1]
        label = _label(cells[number - 1], number)
        if len(found) > 1:
            others = ", ".join(_label(cells[n - 1], n) for n, _ in found[:-1])
            data.notes.insert(0, f"training output in several cells ({others}, {label}); read the last, {label}")
        else:
            data.notes.insert(0, f"training output of {label}")
        return data


def _code_cells(path: Path) -> list[dict[str, Any]]:
    try:
        if path.stat().st_size > _MAX_BYTES:
            raise UnreadableSourceError(f"{path}: notebook over 512 MB; clear large outputs (images) and save again")
        document = loads(path.read_text(encoding="utf-8", errors="replace"))
    except OSError as error:
        raise UnreadableSourceError(f"{path}: cannot be read ({error.strerror}); check its permissions") from error
    except json.JSONDecodeError as error:
        raise UnreadableSourceError(
            f"{path}: not valid notebook JSON ({error.msg} at line {error.lineno}); save the notebook again"
        ) from error
    except TooDeepError as error:
        raise UnreadableSourceError(f"{path}: notebook JSON {error}; save the notebook again") from error
    if not isinstance(document, dict):
        raise UnreadableSourceError(f"{path}: not a Jupyter notebook (no `cells`)")
    cells = document.get("cells")
    if cells is None:  # nbformat 3
        sheets = document.get("worksheets") or [{}]
        cells = sheets[0].get("cells") if isinstance(sheets[0], dict) else None
    if not isinstance(cells, list):
        raise UnreadableSourceError(f"{path}: not a Jupyter notebook (no `cells`)")
    return [c for c in cells if isinstance(c, dict) and c.get("cell_type") == "code"]


def _label(cell: dict[str, Any], number: int) -> str:
    count = cell.get("execution_count") or cell.get("prompt_number")
    return f"code cell {number}" + (f" [{count}]" if isinstance(count, int) else "")


def _text(value: Any) -> str:
    """Notebook text fields are a string or a list of lines."""
    if isinstance(value, list):
        return "".join(str(part) for part in value)
    return value if isinstance(value, str) else ""


def _cell_source(path: Path, cell: dict[str, Any], number: int) -> SourceData | None:
    """What one code cell's outputs hold: its progress table (HTML first), else its printed metrics."""
    html: list[Table] = []
    texts: list[str] = []
    for output in cell.get("outputs") or []:
        if not isinstance(output, dict):
            continue
        if output.get("output_type") == "stream":
            texts.append(_text(output.get("text")))
        data = output.get("data") or {}
        if isinstance(data, dict):
            if "text/html" in data:
                html.extend(html_tables(_text(data["text/html"])))
            elif "text/plain" in data:
                texts.append(_text(data["text/plain"]))
        if output.get("output_type") == "error":
            texts.append("\n".join(_text(line) for line in output.get("traceback") or []))
    name = f"{path.name} (cell {number})"
    if html:
        return _from_table(path, name, html[-1], "HTML progress table")
    scan = Scan(name)
    for text in texts:
        for line in text.splitlines():
            scan.feed(line, True)
    scan.finish()
    try:
        data = read_scan(path, scan)
    except UnreadableSourceError:
        return None
    data.notes.insert(0, f"read from the printed output ({data.format})")
    data.format = "notebook"
    return data


def _from_table(path: Path, name: str, printed: Table, what: str) -> SourceData:
    table = RowTable(name)
    for row in printed.records():
        table.add(row)
    built = table.build()
    return SourceData(path=path, format="notebook", frame=built.frame, warnings=built.warnings,
                      notes=[f"read the {what} ({len(printed.rows)} rows)", *built.notes])


READER = NotebookReader()
