"""Rows of named values, however a file lays them out.

Which column is the step, which names the kind of row, and whether the table is long (one measurement per row).
CSV, JSON-lines, JSON lists and the progress tables printed in notebooks and logs all come down to rows of
`name -> value`. `RowTable` collects them and decides, once the whole file is seen:

* **the step**: the column named like a step (`STEP_NAMES`, then any `*_step`, then any `*_iteration`, case
  aside) that every row carries; when none does, each row's best one. A file with none of those may name its
  counter its own way (`update`, `gstep`, `n_updates`): such a column is the step when its values behave like
  one (whole numbers on nearly every row, never going down, no metric logged twice at one of them), with a note.
  Otherwise the row order, with a warning. So an event log keyed by `grpo_step` is never read in row order.
* **held-out columns**: a column named for a held-out set (`heldout_pref`, `val_score`, `test_acc`) and filled
  on at most half as many rows as the most-logged column is an eval metric, as an eval row's would be.
* **the kind of row**: a `type`, `kind`, `split`, `phase` or `mode` column holding a word (`rollout`, `eval`,
  `train`) turns each metric of the row into `<kind>/<metric>`; `aliases.resolve` reads the kind (held-out kinds
  are the eval split). Rows of different kinds with different keys (an event log) fall out of this too.
* **long form**: a `metric`/`name`/`key`/`tag` column with a `value` column is one measurement per row.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from assessor.ingest.aliases import HELD_OUT_KINDS, resolve
from assessor.ingest.base import RecordBuilder, SplitHint, parse_number
from assessor.ingest.guess import words

# Step columns, most trustworthy first: the trainer's own step beats a plain `step`, which beats a loop counter;
# W&B's `_step` counts `log` calls (eval rows included) and keeps counting after a resume, so it comes last.
STEP_NAMES = (
    "train/global_step", "trainer/global_step", "global_step", "step", "optimizer_step", "iteration", "iter", "it",
)
_LAST_RESORT = "_step"
# `grpo_step`, `GRPO_Iteration`; not `timing_s/step` (a phase time) or `tokens_per_step` (a rate).
_STEP_LIKE = re.compile(r"^[a-z][a-z0-9]*(?:_[a-z0-9]+)*?_(?P<what>step|iteration)$")
KIND_COLUMNS = ("type", "kind", "split", "phase", "mode")
_KIND_VALUE = re.compile(r"^[A-Za-z][\w.-]{0,39}$")
NAME_COLUMNS = ("metric", "name", "key", "tag")
VALUE_COLUMN = "value"
LOOKED_FOR = "step, global_step, optimizer_step, iteration, iter, *_step or *_iteration"
# Counters a custom loop names its own way, best first: a word for the step itself, with words that only say
# which counter it is (`n_updates`, `train/gstep`, `update_idx`). `batch` last: it is often an index in an epoch
# (which goes back, so it is never taken).
_COUNTER_WORDS: tuple[frozenset[str], ...] = (
    frozenset({"step", "steps", "gstep", "gsteps", "globalstep"}),
    frozenset({"update", "updates"}),
    frozenset({"iteration", "iterations", "iter", "iters", "it"}),
    frozenset({"batch", "batches"}),
)
_COUNTER_QUALIFIERS = frozenset({
    "n", "num", "number", "nr", "no", "total", "global", "g", "train", "training", "trainer", "opt", "optim",
    "optimizer", "policy", "actor", "learner", "ppo", "grpo", "rl", "grad", "gradient", "sgd", "cur", "current",
    "idx", "index", "count", "counter", "id", "cum", "cumulative", "done", "completed",
})
# Words that may sit beside a `*step*` word that is not one of the above (`env_steps`, `timesteps`).
_STEP_COUNT_WORDS = frozenset({"env", "environment", "agent", "sample", "samples"})
# A counter read as the step must be on this share of the rows (a last summary row may lack it).
_COUNTER_COVERAGE = 0.95
# A held-out column is filled on at most this share of the rows the most-logged column is filled on.
_SPARSE_SHARE = 0.5
_HELD_OUT_WORDS = frozenset({"heldout", "holdout", "val", "valid", "validation", "test", "eval", "evaluation"})


def step_rank(column: str) -> int | None:
    """How much a column name says "step" (lower is better), or None when it does not.

    >>> step_rank("global_step"), step_rank("GRPO_Step"), step_rank("grpo_iteration"), step_rank("time_per_step")
    (2, 8, 9, None)
    """
    name = column.strip().lower()
    if name in STEP_NAMES:
        return STEP_NAMES.index(name)
    if name == _LAST_RESORT:
        return len(STEP_NAMES) + 2
    match = _STEP_LIKE.match(name)
    if match is None or "_per_" in name:
        return None
    return len(STEP_NAMES) + (0 if match["what"] == "step" else 1)


def counter_rank(column: str) -> int | None:
    """How much a name says "a custom loop's step counter" (lower is better), or None when it does not.

    Only asked when no column is named like a step (`step_rank`); the values must then behave like steps.

    >>> counter_rank("update"), counter_rank("n_updates"), counter_rank("gstep"), counter_rank("env_steps")
    (1, 1, 0, 4)
    >>> counter_rank("steps_per_sec"), counter_rank("step_time"), counter_rank("it/s"), counter_rank("batch_size")
    (None, None, None, None)
    """
    tokens = words(column)
    core = [w for w in tokens if w not in _COUNTER_QUALIFIERS]
    if len(core) == 1:
        rank = next((i for i, group in enumerate(_COUNTER_WORDS) if core[0] in group), None)
        if rank is not None:
            return rank
    if core and any("step" in w for w in core) and all("step" in w or w in _STEP_COUNT_WORDS for w in core):
        return len(_COUNTER_WORDS)
    return None


def names_held_out(key: str) -> bool:
    """The key's first word names a held-out set (`heldout_pref`, `held_out_acc`, `val_score`, `test_reward`).

    >>> names_held_out("heldout_pref"), names_held_out("held_out/acc"), names_held_out("value_loss")
    (True, True, False)
    """
    tokens = words(key)
    return bool(tokens) and (tokens[0] in _HELD_OUT_WORDS or tokens[:2] == ["held", "out"])


def _under_kind(kind: str, key: str) -> str:
    """A row's key filed under its kind (`eval` + `acc` -> `eval/acc`), unless the key already starts with it.

    >>> _under_kind("eval", "gsm8k_acc"), _under_kind("eval", "eval/gsm8k_acc"), _under_kind("val", "Val_acc")
    ('eval/gsm8k_acc', 'eval/gsm8k_acc', 'Val_acc')
    """
    tokens = words(key)
    return key if tokens and tokens[0] == kind.lower() else f"{kind}/{key}"


def kind_split(kind: str) -> SplitHint:
    """The split a row kind stands for: "eval" for held-out kinds (`val`, `eval_gsm8k`), else None."""
    word = kind.lower()
    if word in HELD_OUT_KINDS or word.startswith(("eval", "val", "test", "heldout")):
        return "eval"
    return None


def as_step(value: Any) -> int | None:
    """An integral, non-negative step from a cell, or None (`12`, `12.0` and `"12"` are steps; `1.5` is not)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value >= 0 else None
    number = parse_number(value) if isinstance(value, float | str) else None
    if number is None or not math.isfinite(number) or number < 0 or not float(number).is_integer():
        return None
    return int(number)


@dataclass(frozen=True)
class _Layout:
    """What the columns of rows with one key tuple are (worked out once per key tuple)."""

    steps: tuple[str, ...]
    kind: str | None
    name: str | None  # long form: the column naming the metric ...
    value: str | None  # ... and the one holding its value
    skip: frozenset[str]


@dataclass
class Built:
    """A table, read: the raw frame and how its steps were found."""

    frame: pd.DataFrame
    step_column: str | None  # None when the steps are row numbers
    warnings: list[str]
    notes: list[str]
    kinds: list[str]
    counter_step: bool = False  # the step column was recognised by its values, not its name (`counter_rank`)

    @property
    def steps_inferred(self) -> str | None:
        """Why the steps are not the file's own, or None when they are."""
        return None if self.step_column is not None else "row order (no step column)"


class RowTable:
    """Rows of one file, in file order; `build` picks the step column (see the module docstring).

    Each row is stored against its row number and the numbers are mapped to steps at the end, so the step
    column can be chosen after every row has been seen, and `build` may be called again after more rows
    (`assessor.ingest.cache` feeds a live JSONL file a few lines at a time).
    """

    def __init__(self, name: str) -> None:
        self.name = name
        self.builder = RecordBuilder()
        self.rows = 0
        self._steps: dict[str, tuple[list[int], list[int]]] = {}  # column -> (row numbers, steps)
        self._not_steps: set[str] = set()  # step-like names holding other values: metrics after all
        self._valued: set[str] = set()  # columns with a value (not null) in some row
        self._all_valued: set[tuple[str, ...]] = set()  # key tuples whose every column has had a value
        self._layouts: dict[tuple[str, ...], _Layout] = {}
        self._kinds: dict[str, int] = {}
        self._columns_seen: set[str] = set()  # columns of blocks added by `add_block`

    def state(self) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """The rows read so far as arrays and plain JSON values (see `from_state`)."""
        arrays, builder = self.builder.state()
        for index, (rows, steps) in enumerate(self._steps.values()):
            arrays[f"s{index}_rows"] = np.asarray(rows, dtype=np.int64)
            arrays[f"s{index}_steps"] = np.asarray(steps, dtype=np.int64)
        meta = {
            "name": self.name, "rows": self.rows, "builder": builder, "steps": list(self._steps),
            "not_steps": sorted(self._not_steps), "valued": sorted(self._valued),
            "all_valued": [list(k) for k in self._all_valued], "kinds": self._kinds,
            "columns_seen": sorted(self._columns_seen),
            "layouts": [[list(keys), list(lay.steps), lay.kind, lay.name, lay.value, sorted(lay.skip)]
                        for keys, lay in self._layouts.items()],
        }
        return arrays, meta

    @classmethod
    def from_state(cls, arrays: Mapping[str, np.ndarray], meta: Mapping[str, Any]) -> RowTable:
        """The table `state` was taken from, ready for more rows."""
        table = cls(str(meta["name"]))
        table.builder = RecordBuilder.from_state(arrays, meta["builder"])
        table.rows = int(meta["rows"])
        for index, column in enumerate(meta["steps"]):
            table._steps[str(column)] = (arrays[f"s{index}_rows"].tolist(), arrays[f"s{index}_steps"].tolist())
        table._not_steps = {str(k) for k in meta["not_steps"]}
        table._valued = {str(k) for k in meta["valued"]}
        table._all_valued = {tuple(k) for k in meta["all_valued"]}
        table._kinds = {str(k): int(v) for k, v in meta["kinds"].items()}
        table._columns_seen = {str(k) for k in meta["columns_seen"]}
        for keys, steps, kind, name, value, skip in meta["layouts"]:
            table._layouts[tuple(keys)] = _Layout(tuple(steps), kind, name, value, frozenset(skip))
        return table

    def add_block(
        self, length: int, columns: Sequence[tuple[str, np.ndarray | list[Any], np.ndarray]],
        unvalued: Collection[str] = (),
    ) -> None:
        """Add `length` rows at once, column by column: what `add` does for each row of a plain table.

        Each column is (name, its values where the row has the key, the row offsets within the block of those
        values). Values are floats (absent: the row lacks the key; NaN: a JSON null or NaN) or raw values
        (text, bools); `unvalued` names the columns whose only values are JSON nulls (not a value: a column
        null on every row is read as not logged). The caller keeps rows that name their kind or are in long
        form for `add`.
        """
        first = self.rows
        self.rows += length
        seq = self.builder.reserve(length)
        # A column on every row of the block (the usual case) shares one array of rows and one of sequence
        # numbers with the others: 8 bytes a value kept until `build`, not 24.
        every_row = np.arange(first, first + length, dtype=np.int64)
        every_seq = every_row + (seq - first)
        for name, values, offsets in columns:
            self._columns_seen.add(name)
            if not len(offsets):
                continue
            if name not in unvalued:
                self._valued.add(name)
            dense = len(offsets) == length  # offsets are sorted and distinct: all of 0..length-1
            rows = every_row if dense else offsets + first
            lowered = name.strip().lower()
            is_flag = isinstance(values, list) and all(isinstance(v, bool) for v in values)
            if step_rank(name) is not None:
                self._add_steps(name, values, rows)
                if lowered in STEP_NAMES or lowered == _LAST_RESORT:
                    continue
            if not is_flag:  # JSON true/false: settings echoed per row, not curves
                self.builder.add_values(name, every_seq if dense else offsets + seq, rows, values)

    def _add_steps(self, name: str, values: np.ndarray | list[Any], rows: np.ndarray) -> None:
        if isinstance(values, np.ndarray):
            valid = np.isfinite(values) & (values >= 0) & (values == np.floor(values))
            steps = values[valid].astype(np.int64)
            chosen = rows[valid]
        else:
            cells = [as_step(v) for v in values]
            valid = np.array([c is not None for c in cells], dtype=bool)
            steps = np.array([c for c in cells if c is not None], dtype=np.int64)
            chosen = rows[valid]
            valid |= np.array([v is None or v == "" for v in values], dtype=bool)
        if len(chosen):
            seen = self._steps.setdefault(name, ([], []))
            seen[0].extend(chosen.tolist())
            seen[1].extend(steps.tolist())
        if not valid.all():
            self._not_steps.add(name)

    def add(self, row: Mapping[str, Any]) -> None:
        """Add one row (its values may be numbers, numeric text, None or text)."""
        keys = tuple(row)
        layout = self._layouts.get(keys)
        if layout is None:
            layout = self._layouts[keys] = _layout(keys, row)
        number = self.rows
        self.rows += 1
        if keys not in self._all_valued:
            self._valued.update(k for k in keys if row[k] is not None)
            if self._valued.issuperset(keys):
                self._all_valued.add(keys)
        for column in layout.steps:
            step = as_step(row[column])
            if step is not None:
                seen = self._steps.setdefault(column, ([], []))
                seen[0].append(number)
                seen[1].append(step)
            elif row[column] is not None and row[column] != "":
                self._not_steps.add(column)
        kind = row[layout.kind] if layout.kind is not None else None
        if not isinstance(kind, str) or not _KIND_VALUE.match(kind):
            kind = None
        if kind is not None:
            self._kinds[kind] = self._kinds.get(kind, 0) + 1
        hint = kind_split(kind) if kind is not None else None
        if layout.name is not None:
            metric = row[layout.name]
            if isinstance(metric, str) and metric.strip():
                key = _under_kind(kind, metric.strip()) if kind is not None else metric.strip()
                self.builder.add(number, key, row[layout.value] if layout.value is not None else None, hint)
            return
        if kind is None:
            self.builder.add_row(number, row, skip=layout.skip)
        else:
            self.builder.add_row(
                number, {_under_kind(kind, k): v for k, v in row.items() if k not in layout.skip}, hint,
            )

    def build(self) -> Built:
        """The raw frame with real steps; rows without a step are dropped (and said)."""
        warnings: list[str] = []
        notes: list[str] = []
        counters = {k for k in self._steps if k not in self._not_steps} - set(STEP_NAMES)
        # null on every row: a field this loop does not fill (`clip_fraction: null` without clipping), not a NaN
        never = {k for layout in self._layouts for k in layout if k not in self._valued}
        never |= self._columns_seen - self._valued
        drop = counters | never  # `grpo_step` was kept as a value until it proved to be a counter
        if never:
            notes.append(f"null on every row, so read as not logged: {', '.join(sorted(never)[:10])}")
        for name in self._not_steps:
            self._steps.pop(name, None)
        by_row, column, counter_step = self._step_of_rows(warnings, notes)
        if counter_step and column is not None:
            drop = drop | {column}  # the loop's counter is the step, not a metric
        held_out = self._held_out_columns()
        if held_out:
            notes.append(f"logged on few rows and named for a held-out set, so read as eval metrics: "
                         f"{', '.join(sorted(held_out)[:10])}")
        # The builder's steps are row numbers: it maps them to real steps as it lays out the frame.
        frame = self.builder.build(by_row, (lambda k: k in drop or k.rpartition("/")[2] in drop) if drop else None,
                                   held_out=held_out)
        if self.builder.non_numeric:
            warnings.append(f"{self.name}: non-numeric values ignored in {sorted(self.builder.non_numeric)[:8]}")
        kinds = sorted(self._kinds)
        if kinds:
            notes.append(f"rows of kinds {', '.join(kinds)}: each metric is named <kind>/<metric>")
        return Built(frame, column, warnings, notes, kinds, counter_step)

    def _counter_column(self) -> tuple[str, np.ndarray] | None:
        """A custom loop's own step counter (`update`, `gstep`) and each row's step, or None.

        Named like a counter (`counter_rank`), a whole number >= 0 on nearly every row, never going down, and
        strictly rising for every other metric (an eval row may share the step of the train row before it,
        but no metric is logged twice at one step). A column that goes down (a resume, an index within an
        epoch) is never taken: the row order is then the honest reading.
        """
        candidates = sorted(
            (rank, order, key) for order, ((key, split), count) in enumerate(self.builder.counts().items())
            if split is None and count >= _COUNTER_COVERAGE * self.rows and (rank := counter_rank(key)) is not None
        )
        if not candidates:
            return None
        series = self.builder.series()
        for _, _, key in candidates:
            rows, values = series[(key, None)]
            whole = np.isfinite(values) & (values >= 0) & (values == np.floor(values))
            rows, steps = rows[whole], values[whole].astype(np.int64)
            if len(rows) < _COUNTER_COVERAGE * self.rows or len(steps) < 2:
                continue
            if bool(np.any(np.diff(steps) < 0)) or int(steps[-1]) == int(steps[0]):
                continue
            by_row = np.full(self.rows, -1, dtype=np.int64)
            by_row[rows] = steps
            if all(_strictly_rising(by_row[other]) for (name, _), (other, _) in series.items() if name != key):
                return key, by_row
        return None

    def _held_out_columns(self) -> set[str]:
        """Columns without a row kind, named for a held-out set and logged on few rows (see the module docstring)."""
        counts = {key: n for (key, split), n in self.builder.counts().items() if split is None}
        named = {key for key in counts if names_held_out(key) and _train_by_name(key)}
        if not named:
            return set()
        most = max(counts.values())
        return {key for key in named if counts[key] <= _SPARSE_SHARE * most}

    def _step_of_rows(self, warnings: list[str], notes: list[str]) -> tuple[np.ndarray, str | None, bool]:
        """Each row's step (-1 for none), the column it came from (None: row order), and how it was found.

        The third value is True when the column was recognised by its values (`_counter_column`), not its name.
        """
        by_row = np.full(self.rows, -1, dtype=np.int64)
        ranked = sorted(self._steps, key=lambda c: (_rank(c), c))
        if not ranked:
            counted = self._counter_column() if self.rows else None
            if counted is not None:
                column, by_row = counted
                notes.append(f"no column named like a step; read `{column}` as the step (whole numbers on nearly "
                             "every row, never going down)")
                missing = int((by_row < 0).sum())
                if missing:
                    warnings.append(f"{self.name}: {missing} rows without a step ({column}) were skipped")
                return by_row, column, True
            if self.rows:
                warnings.append(
                    f"{self.name}: no step column (looked for {LOOKED_FOR}, or a counter such as update or gstep "
                    "that rises row by row); read the rows as steps 1, 2, ..."
                )
            return np.arange(1, self.rows + 1, dtype=np.int64), None, False
        full = next((c for c in ranked if len(self._steps[c][0]) == self.rows and c != _LAST_RESORT), None)
        if full is None and len(self._steps[ranked[0]][0]) == self.rows:
            full = ranked[0]
        if full is not None:
            rows, steps = self._steps[full]
            by_row[np.asarray(rows, dtype=np.int64)] = steps
            return by_row, full, False
        for column in reversed(ranked):  # the best-ranked column a row has wins for that row
            rows, steps = self._steps[column]
            by_row[np.asarray(rows, dtype=np.int64)] = steps
        missing = int((by_row < 0).sum())
        if missing:
            warnings.append(f"{self.name}: {missing} rows without a step ({', '.join(ranked)}) were skipped")
        return by_row, ranked[0], False


def _layout(keys: tuple[str, ...], row: Mapping[str, Any]) -> _Layout:
    lowered = {k: k.strip().lower() for k in keys}
    steps = tuple(k for k in keys if step_rank(k) is not None)
    kind = next(
        (k for column in KIND_COLUMNS for k in keys if lowered[k] == column and isinstance(row[k], str)), None,
    )
    name = next(
        (k for column in NAME_COLUMNS for k in keys if lowered[k] == column and isinstance(row[k], str)), None,
    )
    value = next((k for k in keys if lowered[k] == VALUE_COLUMN), None)
    if name is None or value is None:
        name = value = None
    named = {k for k in steps if lowered[k] in STEP_NAMES or lowered[k] == _LAST_RESORT}
    flags = {k for k in keys if isinstance(row[k], bool)}  # JSON true/false: settings echoed per row, not curves
    skip = frozenset(named | flags) | ({kind} if kind is not None else set())
    return _Layout(steps, kind, name, value, skip)


def _train_by_name(key: str) -> bool:
    """The alias table reads the key as a training metric (`eval_acc` or `val/score` already are eval metrics)."""
    resolved = resolve(key)
    return resolved is not None and resolved.split == "train"


def _strictly_rising(steps: np.ndarray) -> bool:
    steps = steps[steps >= 0]
    return len(steps) < 2 or bool(np.all(steps[1:] > steps[:-1]))


def _rank(column: str) -> int:
    rank = step_rank(column)
    return len(STEP_NAMES) + 3 if rank is None else rank
