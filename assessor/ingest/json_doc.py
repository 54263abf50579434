"""JSON documents of metrics that are not a trainer state: lists of row objects, column lists, rows by step.

`trl_state` reads `trainer_state.json` and HF log lists; this reads the other shapes scripts save with
`json.dump`: `[{"grpo_step": 1, ...}, ...]`, `{"history": [{...}, ...]}`, `{"step": [1, 2], "reward": [...]}`
and `{"1": {...}, "2": {...}}`. A document of single values (a run summary, a config) holds no curve and is
refused with that reason.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from assessor.errors import UnreadableSourceError
from assessor.ingest.base import SourceData
from assessor.ingest.nesting import TooDeepError, loads
from assessor.ingest.tables import RowTable, as_step

# Files this large are not metric documents a script wrote by hand; they are never loaded whole.
_MAX_BYTES = 64 * 2**20


class JsonDocReader:
    """Reads one JSON document holding per-step rows in one of the shapes above."""

    name = "json"

    def sniff(self, path: Path, head: bytes) -> bool:
        """Any `.json` file (trainer states and HF log lists were offered to `trl_state` first)."""
        return path.suffix.lower() == ".json"

    def read(self, path: Path) -> SourceData:
        """Read the document; raise `UnreadableSourceError` when it holds no per-step rows."""
        try:
            if path.stat().st_size > _MAX_BYTES:
                raise UnreadableSourceError(f"{path}: over 64 MB of JSON; not read as a metric document")
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError as error:
            raise UnreadableSourceError(f"{path}: cannot be read ({error.strerror}); check its permissions") from error
        try:
            document = loads(text)
        except json.JSONDecodeError as error:
            raise UnreadableSourceError(
                f"{path}: not valid JSON ({error.msg} at line {error.lineno}); if the run is writing it, try again"
            ) from error
        except TooDeepError as error:
            raise UnreadableSourceError(f"{path}: JSON {error}; not a metric log") from error
        rows = _rows(document)
        if rows is None:
            raise UnreadableSourceError(
                f"{path}: holds single values (a run summary or config), not per-step metrics"
            )
        table = RowTable(path.name)
        for row in rows:
            table.add(row)
        built = table.build()
        if built.frame.empty:
            raise UnreadableSourceError(f"{path}: no numeric values in its rows; nothing to read as metrics")
        return SourceData(path=path, format="json", frame=built.frame, warnings=built.warnings, notes=built.notes,
                          steps_inferred=built.steps_inferred)


def _rows(document: Any) -> list[dict[str, Any]] | None:
    """The document's per-step rows, or None when it has none."""
    if isinstance(document, list):
        rows = [r for r in document if isinstance(r, dict)]
        return rows if len(rows) >= 2 else None
    if not isinstance(document, dict):
        return None
    lists = [v for v in document.values() if isinstance(v, list) and sum(isinstance(r, dict) for r in v) >= 2]
    if lists:
        return [r for r in max(lists, key=len) if isinstance(r, dict)]
    columns = {k: v for k, v in document.items() if isinstance(v, list) and v and not isinstance(v[0], dict | list)}
    lengths = {len(v) for v in columns.values()}
    if len(columns) >= 2 and len(lengths) == 1 and lengths.pop() >= 2:
        names = list(columns)
        return [dict(zip(names, values, strict=True)) for values in zip(*columns.values(), strict=True)]
    by_step = {as_step(k): v for k, v in document.items()}
    if len(by_step) >= 2 and None not in by_step and all(isinstance(v, dict) for v in by_step.values()):
        return [{"step": step, **row} for step, row in by_step.items()]
    return None


READER = JsonDocReader()
