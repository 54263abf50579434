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
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from assessor.errors import UnreadableSourceError
from assessor.ingest.base import RecordBuilder, SourceData, as_int
from assessor.ingest.tables import KIND_COLUMNS, NAME_COLUMNS, Built, RowTable, counter_rank, step_rank

# W&B bookkeeping columns: never metrics.
_TRACKER_COLUMNS = frozenset({"_step", "_runtime", "_timestamp", "_wandb"})
_TRACKER_SEPARATOR = " - "
_GPU_HEADER_HINTS = ("utilization.gpu", "memory.used", "power.draw")
# A cell this long on average is prose (prompts, completions): the file is a data or samples table.
_PROSE_CHARS = 40
_BIG_TABLE_BYTES = 64 * 2**20
# From this size a plain step log is read into columns by polars (below it, the csv module is done first).
_COLUMNAR_BYTES = 1 << 20
# A cell polars and `float` read alike: plain decimal notation.
_PLAIN_NUMBER = r"^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$"


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
            data = path.read_bytes()
        except OSError as error:
            raise UnreadableSourceError(f"{path}: cannot be read ({error.strerror}); check its permissions") from error
        if len(data) >= _COLUMNAR_BYTES:
            read = _read_columns(path, data, dialect.delimiter)
            if read is not None:
                return read
        # As `read_text` decodes: newlines made "\n" (the csv module reads the text the same either way).
        text = data.decode("utf-8-sig", errors="replace").replace("\r\n", "\n").replace("\r", "\n")
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
    if not any(step_rank(c) is not None or counter_rank(c) is not None for c in header) and \
            not any(_TRACKER_SEPARATOR in c for c in header):
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
    return _step_log_source(path, header, table.build(), facts, warnings, lambda: body)


def _read_columns(path: Path, data: bytes, delimiter: str) -> SourceData | None:
    """A plain step log read into columns by polars; None when it needs the csv module's exact rules.

    Plain: no quote (quoted fields are where CSV parsers differ), no NUL, no bare carriage return, no line longer
    than the csv module's field limit, no row longer than the header, a header without repeated names, kind or
    long-form columns or tracker-export columns. What is read is what `_read_step_log` reads row by row: blank
    rows skipped, a half-written last line dropped, the newest run after a `total_steps` change, empty cells not
    logged, numbers as `float` reads them and anything else through `parse_number` (see `RecordBuilder`).
    """
    try:
        import polars as pl
    except ImportError:
        return None
    if b'"' in data or b"\0" in data or data.count(b"\r") != data.count(b"\r\n"):
        return None
    ends = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == ord("\n"))
    if len(ends) and int(np.max(np.diff(ends, prepend=-1))) > csv.field_size_limit():
        return None
    if len(data) - (int(ends[-1]) + 1 if len(ends) else 0) > csv.field_size_limit():
        return None
    first = data[:int(ends[0])] if len(ends) else data
    header = [c.strip() for c in first.removeprefix(b"\xef\xbb\xbf").decode("utf-8", errors="replace")
              .rstrip("\r").split(delimiter)]
    named = [c for c in header if c]
    if len(set(named)) != len(named) or {c.lower() for c in named} & {*KIND_COLUMNS, *NAME_COLUMNS} or \
            any(_TRACKER_SEPARATOR in c for c in named):
        return None
    total_index = header.index("total_steps") if "total_steps" in header else None
    options: dict[str, Any] = {"has_header": False, "skip_rows": 1, "quote_char": None, "separator": delimiter,
                               "encoding": "utf8-lossy", "new_columns": [f"c{i}" for i in range(len(header))]}
    try:  # numbers parsed natively; a column polars cannot type from its first rows is read again as text
        frame = pl.read_csv(io.BytesIO(data), **options, schema_overrides={f"c{total_index}": pl.String}
                            if total_index is not None else None)
    except Exception:
        try:
            frame = pl.read_csv(io.BytesIO(data), **options, infer_schema=False)
        except Exception:  # a row longer than the header, or anything else polars refuses: the csv module reads it
            return None
    if frame.width != len(header):
        return None
    present: list[pl.Expr] = []
    for name, dtype in frame.schema.items():
        if dtype == pl.String:
            present.append(pl.col(name).str.strip_chars().fill_null("") != "")
        elif dtype.is_numeric() or dtype == pl.Null:
            present.append(pl.col(name).is_not_null())
        else:
            return None  # booleans, dates: the csv module's reading of them is the one to keep
    filled = frame.select(pl.any_horizontal(present) if present else pl.lit(False)).to_series().to_numpy()
    body_rows = np.flatnonzero(filled)  # rows with something in them, as `read` keeps them
    warnings: list[str] = []
    if len(body_rows) and not data.endswith((b"\n", b"\r")):
        last = _last_cells(data, delimiter)
        if last is None:
            return None
        if last < len(header):
            warnings.append(f"{path.name}: last line is incomplete (the run may still be writing); ignored it")
            body_rows = body_rows[:-1]
    facts: dict[str, tuple[Any, str]] = {}
    if total_index is not None and len(body_rows):
        totals = frame.to_series(total_index).fill_null("").to_numpy()[body_rows]
        changes = np.flatnonzero(totals[1:] != totals[:-1]) + 1
        last_change = int(changes[-1]) if len(changes) else 0
        if last_change:
            warnings.append(
                f"{path.name}: a new run starts at line {last_change + 2} (total_steps {totals[last_change - 1]} -> "
                f"{totals[last_change]}); read the newest run and dropped {last_change} earlier rows"
            )
            body_rows = body_rows[last_change:]
        planned = as_int(str(totals[-1]))
        if planned:
            facts["planned_total_steps"] = (planned, f"{path.name}: total_steps")
    if not len(body_rows):
        raise UnreadableSourceError(f"{path}: header only, no logged steps yet; assess again after the first step")
    table = RowTable(path.name)
    columns: list[tuple[str, np.ndarray | list[Any], np.ndarray]] = []
    body = frame if len(body_rows) == frame.height else frame[body_rows.tolist()]
    for index, name in enumerate(header):
        if index == total_index or not name or name in _TRACKER_COLUMNS:
            continue
        column = body.to_series(index)
        if column.dtype == pl.String:
            column = column.str.strip_chars()
            offsets = np.flatnonzero((column.fill_null("") != "").to_numpy())
            cells = column.gather(offsets)
            # Plain decimal numbers are read by polars; a column with anything else goes through `float` and
            # `parse_number` cell by cell (`RecordBuilder.add_values`), as a row would.
            plain = bool(cells.str.contains(_PLAIN_NUMBER).all())
            numbers = cells.cast(pl.Float64, strict=False) if plain else None
            if numbers is not None and not numbers.null_count():
                columns.append((name, numbers.to_numpy(), offsets))
            else:
                columns.append((name, cells.to_list(), offsets))
        elif column.dtype != pl.Null:
            offsets = np.flatnonzero(column.is_not_null().to_numpy()) if column.null_count() else \
                np.arange(len(column), dtype=np.int64)
            columns.append((name, column.cast(pl.Float64).to_numpy()[offsets], offsets))
    table.add_block(len(body_rows), columns)
    return _step_log_source(path, header, table.build(), facts, warnings,
                            lambda: body.head(200).select(pl.all().cast(pl.String).fill_null("")).rows())


def _step_log_source(
    path: Path, header: list[str], built: Built, facts: dict[str, tuple[Any, str]], warnings: list[str],
    rows: Callable[[], Sequence[Sequence[str]]],
) -> SourceData:
    """A wide step log's table, checked and labelled the same way whichever reader built it.

    `rows` gives cells for the prose test, only when there is no step column, or one recognised by its values
    rather than its name (a data table's `batch` column); the columnar path renders them.
    """
    if (built.step_column is None or built.counter_step) and _holds_prose(header, rows()):
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


def _last_cells(data: bytes, delimiter: str) -> int | None:
    """How many cells the last line with something in it holds (the file has no quotes); None: not near the end."""
    separator = delimiter.encode()
    tail = data[-(1 << 16):].split(b"\n")
    for line in reversed(tail if len(data) <= 1 << 16 else tail[1:]):  # (the first may be part of a line)
        if line.replace(separator, b"").strip():
            return line.count(separator) + 1
    return None


def _holds_prose(header: list[str], body: Sequence[Sequence[str]]) -> bool:
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
