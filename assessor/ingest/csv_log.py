"""CSV metric logs: per-step logs, wide or long, and tracker exports (W&B panel CSVs).

Per-step logs (e.g. reasoning-from-scratch) are append-only: a restarted run appends a new run to the same
file, which shows as `step` going back or `total_steps` changing. An empty cell means "not logged at this
step" (eval columns are filled every N steps), never NaN. Which column is the step, a `kind`/`split` column
and long-form tables (`step,metric,value`) are worked out by `assessor.ingest.tables`.

Tracker exports have a step column plus `<run name> - <metric>` columns with `__MIN`/`__MAX` companions
(the band of a downsampled bucket), which we skip.
"""

from __future__ import annotations

import csv
import io
from collections import Counter
from pathlib import Path
from typing import Any

from assessor.errors import UnreadableSourceError
from assessor.ingest.base import RecordBuilder, SourceData, as_int
from assessor.ingest.tables import RowTable, step_rank

# W&B bookkeeping columns: never metrics.
_TRACKER_COLUMNS = frozenset({"_step", "_runtime", "_timestamp", "_wandb"})
_TRACKER_SEPARATOR = " - "
_GPU_HEADER_HINTS = ("utilization.gpu", "memory.used", "power.draw")
# A cell this long on average is prose (prompts, completions): the file is a data or samples table.
_PROSE_CHARS = 40
_BIG_TABLE_BYTES = 64 * 2**20


class CsvReader:
    """Reads CSV logs, with or without a step column."""

    name = "csv"

    def sniff(self, path: Path, head: bytes) -> bool:
        """Any `.csv`/`.tsv` but an nvidia-smi log (which goes to its own reader)."""
        if path.suffix.lower() not in (".csv", ".tsv"):
            return False
        header = head.split(b"\n", 1)[0].decode("utf-8", errors="replace")
        return not any(hint in header for hint in _GPU_HEADER_HINTS)

    def read(self, path: Path) -> SourceData:
        """Read the file (see the module docstring)."""
        dialect = csv.excel_tab if path.suffix.lower() == ".tsv" else csv.excel
        try:
            _refuse_big_tables(path, dialect)
            text = path.read_text(encoding="utf-8-sig", errors="replace")
        except OSError as error:
            raise UnreadableSourceError(f"{path}: cannot be read ({error.strerror}); check its permissions") from error
        rows, unreadable = read_rows(text, dialect)
        if not rows:
            raise UnreadableSourceError(f"{path}: empty file; wait for the run to log its first step")
        header = [c.strip() for c in rows[0]]
        body = [r for r in rows[1:] if any(cell.strip() for cell in r)]
        warnings: list[str] = []
        if unreadable:
            warnings.append(f"{path.name}: skipped {unreadable} row{'s' if unreadable != 1 else ''} the CSV parser "
                            "refused (a field over its size limit, or a stray quote)")
        if body and len(body[-1]) < len(header) and not text.endswith(("\n", "\r")):
            warnings.append(f"{path.name}: last line is incomplete (the run may still be writing); ignored it")
            body.pop()
        ranked = sorted((rank, i) for i, c in enumerate(header) if (rank := step_rank(c)) is not None)
        if any(_TRACKER_SEPARATOR in c for c in header) and ranked:
            return _read_tracker_export(path, header, body, ranked[0][1], warnings)
        return _read_step_log(path, header, body, warnings)


def read_rows(text: str, dialect: type[csv.Dialect] | str = "excel", **options: object) -> tuple[list[list[str]], int]:
    """The rows of a CSV text, and how many the parser refused (skipped one by one, never the whole file)."""
    reader = csv.reader(io.StringIO(text), dialect, **options)  # type: ignore[arg-type]
    rows: list[list[str]] = []
    refused = 0
    while True:
        try:
            rows.append(next(reader))
        except StopIteration:
            return rows, refused
        except csv.Error:
            refused += 1


def _refuse_big_tables(path: Path, dialect: type[csv.Dialect]) -> None:
    """A large CSV without a step column is a data table (a dataset, predictions): refused before it is read."""
    if path.stat().st_size <= _BIG_TABLE_BYTES:
        return
    with path.open(encoding="utf-8-sig", errors="replace") as handle:
        try:
            header = next(csv.reader(handle, dialect), [])
        except csv.Error:
            header = []
    if not any(step_rank(c) is not None for c in header) and not any(_TRACKER_SEPARATOR in c for c in header):
        raise UnreadableSourceError(
            f"{path}: over {_BIG_TABLE_BYTES // 2**20} MB and no step column: a data table, not a metric log"
        )


def _read_step_log(path: Path, header: list[str], body: list[list[str]], warnings: list[str]) -> SourceData:
    facts: dict[str, tuple[Any, str]] = {}
    total_index = header.index("total_steps") if "total_steps" in header else None
    if total_index is not None and body:
        # A change of planned total means a new run was appended: keep the newest one.
        totals = [r[total_index] if total_index < len(r) else "" for r in body]
        last_change = max((i for i in range(1, len(totals)) if totals[i] != totals[i - 1]), default=0)
        if last_change:
            warnings.append(
                f"{path.name}: a new run starts at line {last_change + 2} (total_steps {totals[last_change - 1]} -> "
                f"{totals[last_change]}); read the newest run and dropped {last_change} earlier rows"
            )
            body = body[last_change:]
        planned = as_int(totals[-1]) if totals else None
        if planned:
            facts["planned_total_steps"] = (planned, f"{path.name}: total_steps")
    if not body:
        raise UnreadableSourceError(f"{path}: header only, no logged steps yet; assess again after the first step")
    table = RowTable(path.name)
    columns = [(i, name) for i, name in enumerate(header) if i != total_index and name and name not in _TRACKER_COLUMNS]
    for row in body:
        # empty = not logged at this step
        table.add({name: row[i].strip() for i, name in columns if i < len(row) and row[i].strip()})
    built = table.build()
    if built.step_column is None and _holds_prose(header, body):
        raise UnreadableSourceError(
            f"{path}: no step column and long text in its cells: a data or samples table, not a metric log"
        )
    if built.frame.empty:
        raise UnreadableSourceError(f"{path}: no numeric columns; a metric log needs a step column and numbers")
    if "reward_avg" in header and "avg_response_len" in header:
        facts["framework"] = ("reasoning_from_scratch", f"{path.name}: column names")
        facts["algorithm"] = ("grpo", f"{path.name}: reasoning-from-scratch GRPO scripts")
    return SourceData(
        path=path, format="csv", frame=built.frame, facts=facts, warnings=warnings + built.warnings,
        notes=built.notes, steps_inferred=built.steps_inferred,
    )


def _holds_prose(header: list[str], body: list[list[str]]) -> bool:
    for i in range(len(header)):
        cells = [row[i] for row in body[:200] if i < len(row) and row[i].strip()]
        if cells and sum(len(c) for c in cells) / len(cells) > _PROSE_CHARS:
            return True
    return False


def _read_tracker_export(
    path: Path, header: list[str], body: list[list[str]], step_index: int, warnings: list[str]
) -> SourceData:
    runs: Counter[str] = Counter()
    columns: list[tuple[int, str, str]] = []
    for i, name in enumerate(header):
        if i == step_index or _TRACKER_SEPARATOR not in name or name.endswith(("__MIN", "__MAX")):
            continue
        run, metric = name.split(_TRACKER_SEPARATOR, 1)
        runs[run] += 1
        columns.append((i, run, metric))
    if not columns:
        raise UnreadableSourceError(f"{path}: no `<run> - <metric>` columns; export the panel as CSV again")
    chosen = runs.most_common(1)[0][0]
    if len(runs) > 1:
        warnings.append(
            f"{path.name}: holds {len(runs)} runs ({', '.join(sorted(runs))}); read {chosen!r}. "
            "Export one run per file to assess the others"
        )
    builder = RecordBuilder()
    for row in body:
        step = as_int(row[step_index]) if step_index < len(row) else None
        if step is None:
            continue
        for i, run, metric in columns:
            if run == chosen and i < len(row) and row[i].strip():
                builder.add(step, metric, row[i].strip())
    if not len(builder):
        raise UnreadableSourceError(f"{path}: no values in the export; export the panel as CSV again")
    notes = [f"tracker export of run {chosen!r}; panel exports may be downsampled"]
    return SourceData(path=path, format="tracker_csv", frame=builder.build(), warnings=warnings, notes=notes)


READER = CsvReader()
