"""`Run` finds a metric's rows the same way whether the table holds them together or interleaved."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from assessor.run import Run, RunFacts, _rows_by_metric


def run_of(metrics: pd.DataFrame) -> Run:
    nonfinite = pd.DataFrame({"step": pd.Series(dtype="int64"), "metric": [], "split": [], "kind": [], "source": []})
    return Run(path=Path("."), name="r", metrics=metrics, nonfinite=nonfinite, checkpoints=[], gpu=None,
               gpu_devices={}, facts=RunFacts(), sources=[])


def table(order: np.ndarray) -> pd.DataFrame:
    n = 300
    steps = np.concatenate([np.arange(n), np.arange(n), np.arange(0, n, 50)])
    metric = ["reward"] * n + ["kl"] * n + ["reward"] * 6
    split = ["train"] * (2 * n) + ["eval"] * 6
    frame = pd.DataFrame({
        "step": steps.astype(np.int64), "metric": pd.Categorical(metric), "split": pd.Categorical(split),
        "value": np.sin(steps / 7.0) + np.arange(len(steps)) * 1e-3, "source_key": pd.Categorical(metric),
        "source": pd.Categorical(["log"] * len(steps)), "wall_time": np.full(len(steps), np.nan),
    })
    return frame.iloc[order].reset_index(drop=True)


def test_grouped_and_interleaved_tables_give_the_same_series() -> None:
    rows = 606
    grouped = run_of(table(np.arange(rows)))
    shuffled = run_of(table(np.random.default_rng(0).permutation(rows)))
    assert all(isinstance(r, slice) for r in _rows_by_metric(grouped.metrics).values())
    assert not any(isinstance(r, slice) for r in _rows_by_metric(shuffled.metrics).values())
    for metric, split in (("reward", "train"), ("kl", "train"), ("reward", "eval"), ("absent", "train")):
        pd.testing.assert_series_equal(grouped.series(metric, split), shuffled.series(metric, split))  # type: ignore[arg-type]
        assert grouped.has(metric, split) == shuffled.has(metric, split)  # type: ignore[arg-type]
    assert grouped.last_step == shuffled.last_step == 299
    assert grouped.metric_names("eval") == shuffled.metric_names("eval") == ["reward"]


def test_a_series_is_a_copy_not_a_view_of_the_table() -> None:
    run = run_of(table(np.arange(606)))
    series = run.series("kl")
    series.iloc[0] = 99.0
    assert run.metrics["value"].to_numpy()[300] != 99.0
    assert run.series("kl").iloc[0] != 99.0


def test_a_metric_in_two_runs_of_rows_is_found_whole() -> None:
    frame = table(np.arange(606))
    order = np.concatenate([np.arange(0, 150), np.arange(300, 600), np.arange(150, 300), np.arange(600, 606)])
    split_run = run_of(frame.iloc[order].reset_index(drop=True))
    assert len(split_run.series("reward")) == 300
    pd.testing.assert_series_equal(split_run.series("reward"), run_of(frame).series("reward"))


def _interval_by_masks(metrics: pd.DataFrame) -> int | None:
    """The measured interval as it was read before the row index: masks over the whole table."""
    train = (metrics["split"] == "train").to_numpy()
    metric = metrics["metric"]
    codes = metric.cat.codes.to_numpy()
    counted = np.bincount(codes[train & (codes >= 0)], minlength=len(metric.cat.categories))
    counts = pd.Series(counted, index=metric.cat.categories).sort_values(ascending=False)
    if counts.empty or counts.iloc[0] == 0:
        return None
    steps = np.unique(metrics["step"].to_numpy()[(metric == counts.index[0]).to_numpy() & train])
    return int(np.median(np.diff(steps))) if len(steps) >= 2 else None


def test_the_measured_interval_read_off_the_row_index_is_the_one_read_by_masks() -> None:
    from assessor.ingest import _measured_interval

    rng = np.random.default_rng(5)
    for case in range(40):
        names = ["reward", "kl", "entropy", "loss"][: 1 + case % 4]
        pieces = []
        for name in names:  # some metrics logged as often as others (ties), at their own intervals
            every = int(rng.choice([1, 2, 5]))
            count = int(rng.choice([0, 3, 20, 20]))
            steps = np.arange(count) * every + int(rng.integers(0, 3))
            pieces.append(pd.DataFrame({"step": steps, "metric": name, "split": rng.choice(["train", "eval"], count,
                                                                                            p=[0.8, 0.2])}))
        frame = pd.concat(pieces, ignore_index=True)
        if case % 3 == 0:
            frame = frame.sample(frac=1.0, random_state=case).reset_index(drop=True)  # interleaved rows
        metrics = pd.DataFrame({
            "step": frame["step"].to_numpy(np.int64), "metric": pd.Categorical(frame["metric"], categories=names),
            "split": pd.Categorical(frame["split"], categories=["train", "eval"]), "value": np.zeros(len(frame)),
        })
        expected = _interval_by_masks(metrics)
        assert _measured_interval(metrics) == expected, case
        assert _measured_interval(metrics, _rows_by_metric(metrics)) == expected, case


def test_load_run_hands_the_run_its_row_index(tmp_path: Path) -> None:
    from assessor.ingest import load_run

    log = tmp_path / "log.jsonl"
    log.write_text("".join(f'{{"step": {s}, "reward": {s / 10}, "kl": 0.1}}\n' for s in range(1, 40)))
    run = load_run(log)
    assert run._rows is not None and run._rows == _rows_by_metric(run.metrics)
