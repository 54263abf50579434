"""`load_run(path, cache=IngestCache())`: the same Run as a fresh load, reading only what changed."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pandas as pd
from tensorboard.compat.proto.event_pb2 import Event
from tensorboard.compat.proto.summary_pb2 import Summary
from tensorboard.summary.writer.event_file_writer import EventFileWriter

from assessor import Run, load_run
from assessor.ingest.cache import STILL_WRITING, IngestCache


def rows(start: int, stop: int) -> list[str]:
    return [json.dumps({"step": s, "reward": 0.1 + s / 100, "kl": 0.01 * s, "reward_std": 0.3}) for s in
            range(start, stop)]


def assert_same(cached: Run, fresh: Run) -> None:
    pd.testing.assert_frame_equal(cached.metrics, fresh.metrics)
    pd.testing.assert_frame_equal(cached.nonfinite, fresh.nonfinite)
    assert cached.facts == fresh.facts
    assert cached.checkpoints == fresh.checkpoints
    assert cached.sources == fresh.sources
    assert cached.samples == fresh.samples
    assert cached.warnings == [w for w in fresh.warnings if STILL_WRITING not in w]


def append(path: Path, text: str) -> None:
    with path.open("a", encoding="utf-8") as handle:
        handle.write(text)


def test_jsonl_appended_in_chunks_with_a_half_written_line_reads_like_a_fresh_load(tmp_path):
    log = tmp_path / "log.jsonl"
    log.write_text("\n".join(rows(1, 40)) + "\n", encoding="utf-8")
    cache = IngestCache()
    assert_same(load_run(tmp_path, cache=cache), load_run(tmp_path))
    assert cache.stats.reread == 1

    half = rows(40, 41)[0]
    append(log, "\n".join(rows(41 - 1, 40)) + half[:17])  # a line cut mid-write
    run = load_run(tmp_path, cache=cache)
    fresh = load_run(tmp_path)
    assert any(STILL_WRITING in w for w in fresh.warnings)  # a fresh load warns; the watch does not
    assert_same(run, fresh)
    assert run.last_step == 39

    size_before = log.stat().st_size
    append(log, half[17:] + "\n" + "\n".join(rows(41, 80)) + "\nnot json\n" + "\n".join(rows(80, 90)) + "\n")
    run = load_run(tmp_path, cache=cache)
    # Only the bytes from the start of the half-written line on were read.
    assert cache.stats.appended == 1 and cache.stats.bytes_read == log.stat().st_size - size_before + 17
    assert_same(run, load_run(tmp_path))
    assert run.last_step == 89
    assert any("1 lines are not JSON" in w for w in run.warnings)

    # A last line written whole but still without its newline is read now, and its newline later.
    append(log, rows(90, 91)[0])
    assert_same(load_run(tmp_path, cache=cache), load_run(tmp_path))
    append(log, "\nbroken\n" + rows(91, 92)[0] + "\n")
    assert_same(load_run(tmp_path, cache=cache), load_run(tmp_path))


def test_unchanged_files_are_not_read_again(tmp_path):
    (tmp_path / "log.jsonl").write_text("\n".join(rows(1, 30)) + "\n", encoding="utf-8")
    (tmp_path / "metrics.csv").write_text("step,entropy\n" + "".join(f"{s},0.5\n" for s in range(1, 30)),
                                          encoding="utf-8")
    cache = IngestCache()
    first = load_run(tmp_path, cache=cache)
    again = load_run(tmp_path, cache=cache)
    assert cache.stats.reused == 2 and cache.stats.bytes_read == 0 and not cache.stats.changed
    assert_same(again, first)


def test_a_file_rewritten_in_place_or_shrunk_is_read_from_the_start(tmp_path):
    log = tmp_path / "log.jsonl"
    log.write_text("\n".join(rows(1, 50)) + "\n", encoding="utf-8")
    cache = IngestCache()
    load_run(tmp_path, cache=cache)
    # verl reopens its log with "w" on a restart: same inode, shorter...
    with log.open("w", encoding="utf-8") as handle:
        handle.write("\n".join(rows(1, 20)) + "\n")
    run = load_run(tmp_path, cache=cache)
    assert run.last_step == 19 and cache.stats.reread == 1
    # ...or longer than before, with different bytes where the last read ended.
    with log.open("w", encoding="utf-8") as handle:
        handle.write("\n".join(json.dumps({"step": s, "reward": 0.9, "kl": 0.5}) for s in range(1, 60)) + "\n")
    run = load_run(tmp_path, cache=cache)
    assert cache.stats.reread == 1
    assert_same(run, load_run(tmp_path))


def write_state(path: Path, steps: int, max_steps: int = 100) -> None:
    history = [{"step": s, "reward": 0.1 + s / 200, "kl": 0.001 * s, "loss": 0.01} for s in range(1, steps + 1)]
    path.write_text(json.dumps({"global_step": steps, "max_steps": max_steps, "log_history": history}),
                    encoding="utf-8")


def test_trainer_state_caught_mid_rewrite_keeps_its_previous_reading(tmp_path):
    state = tmp_path / "trainer_state.json"
    write_state(state, 30)
    cache = IngestCache()
    assert load_run(tmp_path, cache=cache).last_step == 30
    full = state.read_text(encoding="utf-8")
    write_state(state, 40)
    text = state.read_text(encoding="utf-8")
    state.write_text(text[: len(text) // 2], encoding="utf-8")  # TRL is writing it right now
    run = load_run(tmp_path, cache=cache)
    assert run.last_step == 30 and cache.stats.kept_previous == 1
    assert not any(STILL_WRITING in w for w in run.warnings)
    state.write_text("", encoding="utf-8")  # just opened with "w"
    assert load_run(tmp_path, cache=cache).last_step == 30
    state.write_text(text, encoding="utf-8")
    run = load_run(tmp_path, cache=cache)
    assert run.last_step == 40
    assert_same(run, load_run(tmp_path))
    assert full != text


def scalar(tag: str, step: int, value: float) -> Event:
    summary = Summary(value=[Summary.Value(tag=tag, simple_value=value)])
    return Event(wall_time=1000.0 + step, step=step, summary=summary)


def test_tensorboard_appended_records_and_a_partial_record(tmp_path):
    writer = EventFileWriter(str(tmp_path), max_queue_size=1000)
    for step in range(1, 40):
        writer.add_event(scalar("train/reward", step, 0.1 + step / 100))
        writer.add_event(scalar("train/kl", step, 0.001 * step))
    writer.close()
    (path,) = tmp_path.glob("events.out.tfevents.*")
    data = path.read_bytes()
    cut = len(data) * 2 // 3
    path.write_bytes(data[:cut] + data[cut:cut + 9])  # the writer is halfway through a record
    cache = IngestCache()
    run = load_run(tmp_path, cache=cache)
    fresh = load_run(tmp_path)
    assert any(STILL_WRITING in w for w in fresh.warnings)
    assert_same(run, fresh)
    path.write_bytes(data)
    run = load_run(tmp_path, cache=cache)
    assert cache.stats.appended == 1 and cache.stats.bytes_read < len(data) / 2
    assert_same(run, load_run(tmp_path))
    assert run.last_step == 39
    assert load_run(tmp_path, cache=cache) is not None and cache.stats.reused == 1


def test_new_and_vanished_files_count_as_changes(tmp_path):
    (tmp_path / "log.jsonl").write_text("\n".join(rows(1, 30)) + "\n", encoding="utf-8")
    cache = IngestCache()
    load_run(tmp_path, cache=cache)
    extra = tmp_path / "more.csv"
    extra.write_text("step,entropy\n1,0.5\n2,0.4\n", encoding="utf-8")
    run = load_run(tmp_path, cache=cache)
    assert cache.stats.changed and "entropy" in run.metric_names()
    os.remove(extra)
    run = load_run(tmp_path, cache=cache)
    assert cache.stats.changed and "entropy" not in run.metric_names()
    assert_same(run, load_run(tmp_path))


def test_large_append_crosses_read_chunks(tmp_path, monkeypatch):
    import assessor.ingest.cache as cache_module

    monkeypatch.setattr(cache_module, "_READ_CHUNK", 1000)  # many chunks, lines cut at every boundary
    log = tmp_path / "log.jsonl"
    log.write_text("\n".join(rows(1, 300)) + "\n", encoding="utf-8")
    cache = IngestCache()
    assert_same(load_run(tmp_path, cache=cache), load_run(tmp_path))
    append(log, "\n".join(rows(300, 500)) + "\n")
    run = load_run(tmp_path, cache=cache)
    assert_same(run, load_run(tmp_path))
    assert np.array_equal(run.series("reward_mean").index.to_numpy(), np.arange(1, 500))
