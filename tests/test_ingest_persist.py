"""The ingest cache kept on disk: a new process re-reads only what was appended, and never a wrong answer."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from assessor import load_run
from assessor.ingest import jsonl, persist
from assessor.ingest.cache import IngestCache
from assessor.ingest.persist import DiskStore, default_cache_dir
from assessor.integrations.watch import WatchConfig, Watcher


def line(step: int) -> str:
    data = {"critic/score/mean": np.sin(step / 10), "actor/kl_loss": 0.01 * step,
            "val/reward": step / 100 if step % 10 == 0 else None}
    return json.dumps({"step": step, "data": data})


def write(path: Path, steps: range, mode: str = "a", tail: str = "") -> None:
    with path.open(mode, encoding="utf-8") as handle:
        handle.write("".join(line(s) + "\n" for s in steps) + tail)


def new_process_load(run: Path, store: Path) -> tuple[pd.DataFrame, IngestCache]:
    """What a check in a new process reads: a new cache object on the same folder."""
    cache = IngestCache(store=DiskStore(store))
    return load_run(run, cache=cache).metrics, cache


def same_as_fresh(run: Path, metrics: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(metrics, load_run(run).metrics)


def test_a_new_process_reads_only_the_appended_lines(tmp_path: Path) -> None:
    run, store = tmp_path / "run", tmp_path / "cache"
    run.mkdir()
    log = run / "metrics.jsonl"
    write(log, range(1, 301), tail=line(301)[:15])  # a half-written last line
    metrics, cache = new_process_load(run, store)
    assert cache.stats.reread == 1 and metrics["step"].max() == 300
    same_as_fresh(run, metrics)
    size = log.stat().st_size
    with log.open("a", encoding="utf-8") as handle:
        handle.write(line(301)[15:] + "\n")
    write(log, range(302, 351))
    metrics, cache = new_process_load(run, store)
    assert cache.stats.appended == 1 and cache.stats.reread == 0
    assert cache.stats.bytes_read < log.stat().st_size - size + 200  # the new bytes, not the file
    assert metrics["step"].max() == 350
    same_as_fresh(run, metrics)
    metrics, cache = new_process_load(run, store)  # nothing new: not opened at all
    assert cache.stats.reused == 1 and cache.stats.bytes_read == 0
    same_as_fresh(run, metrics)


def test_a_rewritten_truncated_or_rotated_file_is_read_from_the_start(tmp_path: Path) -> None:
    run, store = tmp_path / "run", tmp_path / "cache"
    run.mkdir()
    log = run / "metrics.jsonl"
    write(log, range(1, 201))
    new_process_load(run, store)
    write(log, range(1, 101), mode="w")  # a restart that reopens the log with "w": shorter
    metrics, cache = new_process_load(run, store)
    assert cache.stats.reread == 1 and metrics["step"].max() == 100
    same_as_fresh(run, metrics)
    rotated = run / "new.tmp"
    write(rotated, range(1000, 1301), mode="w")  # longer, another inode, other bytes
    os.replace(rotated, log)
    metrics, cache = new_process_load(run, store)
    assert cache.stats.reread == 1 and metrics["step"].min() == 1000
    same_as_fresh(run, metrics)
    text = log.read_text(encoding="utf-8")  # same size, same inode, other bytes long before the offset
    with log.open("r+", encoding="utf-8") as handle:
        handle.write(text.replace('"actor/kl_loss": 10.0,', '"actor/kl_loss": 99.0,'))
    before = metrics
    metrics, cache = new_process_load(run, store)
    assert cache.stats.reread == 1 and not metrics.equals(before)
    same_as_fresh(run, metrics)


def test_trainer_state_is_read_again_only_when_it_changed(tmp_path: Path) -> None:
    run, store = tmp_path / "run", tmp_path / "cache"
    run.mkdir()
    state = run / "trainer_state.json"

    def save(steps: int) -> None:
        history = [{"step": s, "loss": 1 / s, "reward": s / 100} for s in range(1, steps + 1)]
        state.write_text(json.dumps({"max_steps": 500, "log_history": history}, indent=2), encoding="utf-8")

    save(100)
    first, _ = new_process_load(run, store)
    again, cache = new_process_load(run, store)
    assert cache.stats.reused == 1 and cache.stats.bytes_read == 0
    pd.testing.assert_frame_equal(first, again)
    assert load_run(run, cache=IngestCache(store=DiskStore(store))).facts.planned_total_steps == 500
    save(120)
    metrics, cache = new_process_load(run, store)
    assert cache.stats.reread == 1 and metrics["step"].max() == 120
    same_as_fresh(run, metrics)


def test_a_corrupt_or_foreign_cache_file_is_ignored_and_rebuilt(tmp_path: Path) -> None:
    run, store = tmp_path / "run", tmp_path / "cache"
    run.mkdir()
    log = run / "metrics.jsonl"
    write(log, range(1, 101))
    new_process_load(run, store)
    (cached,) = store.glob("*.npz")
    good = cached.read_bytes()
    write(log, range(101, 151))
    other = tmp_path / "other"
    other.mkdir()
    write(other / "metrics.jsonl", range(1, 400))
    new_process_load(other, tmp_path / "other-cache")
    (foreign,) = (tmp_path / "other-cache").glob("*.npz")
    for damaged in (b"", b"not a zip file", good[: len(good) // 2], foreign.read_bytes()):
        cached.write_bytes(damaged)
        metrics, cache = new_process_load(run, store)
        assert cache.stats.reread == 1, damaged[:20]
        assert metrics["step"].max() == 150
        same_as_fresh(run, metrics)


def test_the_cache_lives_under_xdg_cache_home(tmp_path: Path) -> None:
    assert default_cache_dir({"XDG_CACHE_HOME": str(tmp_path)}) == tmp_path / "assessor" / "ingest"
    assert default_cache_dir({}) == Path.home() / ".cache" / "assessor" / "ingest"
    run = tmp_path / "run"
    run.mkdir()
    write(run / "metrics.jsonl", range(1, 100))
    config = WatchConfig(run_dir=run, state_path=tmp_path / "state.json", idle_timeout=None)
    Watcher(config).check()
    assert list((Path(os.environ["XDG_CACHE_HOME"]) / "assessor" / "ingest").glob("*.npz"))
    write(run / "metrics.jsonl", range(100, 120))
    watcher = Watcher(config)  # a new process, as `watch --once` from cron
    outcome = watcher.check()
    assert watcher.cache.stats.appended == 1 and outcome.step == 119


def test_counting_arrays_are_kept_as_their_first_value_and_length(tmp_path: Path) -> None:
    store = DiskStore(tmp_path)
    arrays = {
        "rows": np.arange(5, 100_005, dtype=np.int64), "gaps": np.array([1, 2, 4, 5], dtype=np.int64),
        "floats": np.arange(10, dtype=np.float64), "short": np.array([3, 4], dtype=np.int64),
        "empty": np.array([], dtype=np.int64), "down": np.arange(10, 0, -1, dtype=np.int64),
    }
    store.save("jsonl", Path("/x/metrics.jsonl"), arrays, {"kind": "test"})
    (saved,) = tmp_path.glob("*.npz")
    assert saved.stat().st_size < 10_000  # the 100,000 row numbers are two numbers on disk
    loaded = store.load("jsonl", Path("/x/metrics.jsonl"))
    assert loaded is not None
    assert sorted(loaded[0]) == sorted(arrays)
    for name, array in arrays.items():
        np.testing.assert_array_equal(loaded[0][name], array)
        assert loaded[0][name].dtype == array.dtype


def test_a_cache_of_another_version_is_read_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run, store = tmp_path / "run", tmp_path / "cache"
    run.mkdir()
    write(run / "metrics.jsonl", range(1, 101))
    monkeypatch.setattr(persist, "CACHE_VERSION", persist.CACHE_VERSION - 1)
    new_process_load(run, store)
    monkeypatch.undo()
    write(run / "metrics.jsonl", range(101, 151))
    metrics, cache = new_process_load(run, store)
    assert cache.stats.reread == 1 and cache.stats.appended == 0
    same_as_fresh(run, metrics)


@pytest.mark.parametrize("few_bytes", [0, 1 << 20])
def test_a_re_check_reads_appended_lines_as_a_fresh_load_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, few_bytes: int,
) -> None:
    # appended lines read by polars (few_bytes 0) or, a few of them, by json: the table is the same either way
    monkeypatch.setattr(jsonl, "_FEW_BYTES", few_bytes)
    monkeypatch.setattr(jsonl, "_polars_loaded", lambda: False)  # as in a new process: polars not imported yet
    run, store = tmp_path / "run", tmp_path / "cache"
    run.mkdir()
    log = run / "metrics.jsonl"
    write(log, range(1, 2001))
    new_process_load(run, store)
    with log.open("a", encoding="utf-8") as handle:
        handle.write("\n".join([line(2001), "", json.dumps({"step": 2002, "data": {"actor/kl_loss": None}}),
                                json.dumps({"step": 2003, "data": {"actor/kl_loss": float("nan")}}), line(2004)])
                     + "\n")
    write(log, range(2005, 2100))
    metrics, cache = new_process_load(run, store)
    assert cache.stats.appended == 1 and cache.stats.reread == 0
    same_as_fresh(run, metrics)
