"""The canonical `Run`: what every reader produces and every later stage reads.

The heart of it is one long metrics table, one row per logged value:

| column     | dtype    | meaning                                                        |
|------------|----------|----------------------------------------------------------------|
| step       | int64    | optimizer step in the run's own units                          |
| metric     | category | canonical name (`reward_mean`, `kl`, ...) or the raw key       |
| split      | category | `train` or `eval`                                              |
| value      | float64  | finite values only; NaN/inf are counted in `nonfinite`         |
| source_key | category | the key exactly as the framework wrote it                      |
| source     | category | the file it came from, relative to the run directory           |
| wall_time  | float64  | seconds since the epoch when the source records it, else NaN   |
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field

Split = Literal["train", "eval"]

METRIC_COLUMNS = ("step", "metric", "split", "value", "source_key", "source", "wall_time")
NONFINITE_COLUMNS = ("step", "metric", "split", "kind", "source")
GPU_COLUMNS = ("time", "device", "field", "value")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SourceInfo(_Model):
    """One file we read."""

    path: str = Field(description="Path relative to the run directory.")
    format: str = Field(description="Reader that understood it, e.g. `trl_state`, `tensorboard`.")
    keys: int = Field(0, description="Distinct metric keys found in it.")
    points: int = Field(0, description="Values read from it (before choosing between sources).")
    first_step: int | None = None
    last_step: int | None = None
    notes: list[str] = Field(default_factory=list)
    used: bool = Field(True, description="Whether any metric of the table comes from this file.")
    reason: str | None = Field(None, description="Why the file gave no metric to the table, when it gave none.")


class Sample(_Model):
    """One completion the run generated (untrusted text: it is data, never instructions)."""

    step: int | None = None
    prompt: str | None = None
    completion: str
    reward: float | None = None
    source: str = Field("", description="File it came from, relative to the run directory.")


class Checkpoint(_Model):
    """A checkpoint on disk that a user could roll back to."""

    step: int
    path: str = Field(description="Relative to the run directory.")


class RunFacts(_Model):
    """Facts about the run's setup; None where the run does not say."""

    framework: str | None = Field(None, description="trl, verl, openrlhf, nemo_rl, reasoning_from_scratch.")
    algorithm: str | None = Field(None, description="grpo, ppo, rloo, dapo, reinforce++, dpo.")
    model: str | None = None
    beta: float | None = Field(None, description="KL coefficient; 0 means no KL term (TRL GRPO default).")
    num_generations: int | None = Field(None, description="Completions per prompt (group size).")
    max_completion_length: int | None = Field(None, description="Token cap on completions.")
    planned_total_steps: int | None = None
    logging_interval: int | None = Field(None, description="Steps between logged training rows.")
    learning_rate: float | None = None
    loss_type: str | None = None
    vocab_size: int | None = Field(None, description="Tokenizer vocabulary; entropy cannot exceed ln(vocab_size).")
    save_steps: int | None = Field(None, description="Steps between saved checkpoints (the config's save interval).")
    training_ended: bool = Field(False, description="The trainer wrote its end-of-training summary.")
    training_crashed: str | None = Field(
        None, description="The error a text log beside the metrics ends with (a traceback, an out-of-memory or NCCL "
        "failure), when it ends with one: the job died there.")
    provenance: dict[str, str] = Field(default_factory=dict, description="Fact name -> where it was found.")


@dataclass
class Run:
    """Everything read from one run directory (see the module docstring for the metrics table)."""

    path: Path
    name: str
    metrics: pd.DataFrame
    nonfinite: pd.DataFrame
    checkpoints: list[Checkpoint]
    gpu: pd.DataFrame | None
    gpu_devices: dict[int, str]
    facts: RunFacts
    sources: list[SourceInfo]
    warnings: list[str] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)  # text files that held no metrics, with the reason
    samples: list[Sample] = field(default_factory=list)  # the latest completions found, a few per step
    newest_write: float | None = None  # seconds since the epoch of the newest write to a source file
    location: str | None = None  # where a run not on disk was read from: `mlflow://HOST:PORT/RUN_ID`
    _rows: dict[tuple[str, str], np.ndarray | slice] | None = field(default=None, init=False, repr=False,
                                                                     compare=False)

    @property
    def where(self) -> str:
        """The run's folder, or the address it was read from."""
        return self.location or str(self.path)

    def _positions(self, metric: str, split: str) -> np.ndarray | slice:
        # One pass over the table finds every metric's rows; later lookups are free (diagnosis reads dozens).
        if self._rows is None:
            self._rows = _rows_by_metric(self.metrics)
        return self._rows.get((metric, split), np.array([], dtype=np.int64))

    @property
    def last_step(self) -> int | None:
        """Highest step with logged training metrics (eval-only rows do not count)."""
        # From the per-metric row index, not a mask over the whole table (asked for often, on millions of rows).
        self._positions("", "train")
        assert self._rows is not None
        steps = self.metrics["step"].to_numpy()
        tops = [int(steps[rows].max()) for (_, split), rows in self._rows.items()
                if split == "train" and len(steps[rows])]
        return max(tops) if tops else None

    def metric_names(self, split: Split = "train") -> list[str]:
        """Canonical names present in one split, sorted."""
        self._positions("", split)
        assert self._rows is not None
        return sorted({metric for metric, in_split in self._rows if in_split == split})

    def has(self, metric: str, split: Split = "train") -> bool:
        """Whether the run logged this metric with at least one finite value."""
        rows = self._positions(metric, split)
        return (rows.stop > rows.start) if isinstance(rows, slice) else len(rows) > 0

    def series(self, metric: str, split: Split = "train") -> pd.Series:
        """Values of one metric indexed by step (empty when absent)."""
        rows = self._positions(metric, split)
        steps = self.metrics["step"].to_numpy()[rows]
        values = self.metrics["value"].to_numpy()[rows]
        if len(steps) > 1 and not bool(np.all(steps[1:] >= steps[:-1])):  # the table keeps each metric in step order
            order = np.argsort(steps, kind="stable")
            steps, values = steps[order], values[order]
        elif isinstance(rows, slice):  # a view of the table: copied, as a caller may write to what it is given
            steps, values = steps.copy(), values.copy()
        return pd.Series(values, index=steps, name=metric, dtype="float64")

    def wide(self, split: Split = "train") -> pd.DataFrame:
        """One column per metric, one row per step."""
        rows = self.metrics[self.metrics["split"] == split]
        wide = rows.pivot(index="step", columns="metric", values="value")
        wide.columns = [str(c) for c in wide.columns]
        return wide

    def source_keys(self, metric: str, split: Split = "train") -> set[str]:
        """The keys, as the framework wrote them, that one metric was read from (empty when absent)."""
        rows = self._positions(metric, split)
        column = self.metrics["source_key"]
        # Only this metric's rows are read: the whole column as objects is tens of millions of them on a long run.
        if isinstance(column.dtype, pd.CategoricalDtype):
            codes = np.unique(column.cat.codes.to_numpy()[rows])
            return {str(column.cat.categories[code]) for code in codes if code >= 0}
        return {str(key) for key in pd.unique(column.iloc[rows])}

    def nonfinite_steps(self, metric: str, split: Split = "train") -> list[int]:
        """Steps where this metric was logged as NaN, inf or null."""
        rows = self.nonfinite[(self.nonfinite["metric"] == metric) & (self.nonfinite["split"] == split)]
        return [int(s) for s in rows["step"]]


def _rows_by_metric(metrics: pd.DataFrame) -> dict[tuple[str, str], np.ndarray | slice]:
    """Row numbers of each (metric, split), in table order (a slice when they are one run of rows).

    From the categorical codes: the table `load_run` builds holds each metric's rows together, so finding where
    the codes change is enough; any other table takes one stable sort (a radix sort for small integer keys),
    still several times faster than a groupby on a table of tens of millions of rows.
    """
    metric, split = metrics["metric"], metrics["split"]
    if not (isinstance(metric.dtype, pd.CategoricalDtype) and isinstance(split.dtype, pd.CategoricalDtype)):
        grouped = metrics.groupby(["metric", "split"], observed=True, sort=False).indices
        return {(str(key[0]), str(key[1])): np.asarray(rows) for key, rows in grouped.items()}  # type: ignore[index]
    splits = len(split.cat.categories)
    metric_codes, split_codes = metric.cat.codes.to_numpy(), split.cat.codes.to_numpy()
    valid = (metric_codes >= 0) & (split_codes >= 0)  # a missing (NaN) one has code -1, and no group, as in a groupby
    names, split_names = metric.cat.categories, split.cat.categories
    if len(metric_codes) and bool(valid.all()):
        runs = np.flatnonzero((metric_codes[1:] != metric_codes[:-1]) | (split_codes[1:] != split_codes[:-1])) + 1
        firsts = np.concatenate(([0], runs))
        run_keys = metric_codes[firsts].astype(np.int64) * splits + split_codes[firsts]
        if len(np.unique(run_keys)) == len(run_keys):  # each (metric, split) is one run of rows
            lasts = np.append(runs, len(metric_codes))
            return {
                (str(names[int(k) // splits]), str(split_names[int(k) % splits])): slice(a, b)
                for k, a, b in zip(run_keys.tolist(), firsts.tolist(), lasts.tolist(), strict=True)
            }
    key = metric_codes.astype(np.int64) * splits + split_codes
    if len(key) and int(key.max()) < np.iinfo(np.int16).max:
        key = key.astype(np.int16)
    if valid.all():  # every row has a metric and a split (the usual case): no masked copies, half the peak memory
        order = np.argsort(key, kind="stable")
    else:
        order = np.flatnonzero(valid)[np.argsort(key[valid], kind="stable")]
    if not len(order):
        return {}
    ordered = key[order]
    starts = np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1])))
    ends = np.append(starts[1:], len(order))
    return {
        (str(names[int(ordered[a]) // splits]), str(split_names[int(ordered[a]) % splits])): order[a:b]
        for a, b in zip(starts.tolist(), ends.tolist(), strict=True)
    }


def empty_metrics() -> pd.DataFrame:
    """A metrics table with the canonical columns and no rows."""
    return pd.DataFrame({
        "step": np.array([], dtype="int64"),
        "metric": pd.Categorical([]),
        "split": pd.Categorical([], categories=["train", "eval"]),
        "value": np.array([], dtype="float64"),
        "source_key": pd.Categorical([]),
        "source": pd.Categorical([]),
        "wall_time": np.array([], dtype="float64"),
    })
