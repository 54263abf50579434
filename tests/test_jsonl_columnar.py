"""The JSONL reader's columnar path (polars) reads exactly what the line-by-line path (`json`) reads."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from assessor import load_run
from assessor.ingest import base, jsonl
from assessor.ingest.base import KeyedSource, SourceData
from assessor.ingest.jsonl import READER, JsonlParse
from assessor.ingest.normalize import normalize_source


def line_by_line(path: Path) -> pd.DataFrame:
    parse = JsonlParse(path)
    with path.open(encoding="utf-8", errors="replace") as handle:
        parse.feed(handle)
    return parse.result().frame


def canonical(frame: pd.DataFrame) -> pd.DataFrame:
    out = frame.assign(key=frame["key"].astype(str), split=frame["split"].astype(str))
    return out.sort_values(["key", "split", "step", "value"], kind="stable").reset_index(drop=True)


def verl_line(step: int, **extra: object) -> str:
    data = {"actor/pg_loss": 0.1 * step, "critic/score/mean": math.sin(step), "timing_s/gen": 1.5, **extra}
    return json.dumps({"step": step, "data": data})


MESSY = {
    "verl": [verl_line(s) for s in range(1, 400)],
    "verl_nan_as_null_and_bare_nan": [verl_line(s, extra=None if s % 7 == 0 else (math.nan if s % 11 == 0 else s))
                                      for s in range(1, 400)],
    "flat_with_text_bools_and_lists": [json.dumps({"step": s, "reward": s / 10, "note": "hi", "flag": True,
                                                   "hist": [1, 2], "nested": {"a": {"b": s}}})
                                       for s in range(1, 300)],
    "bad_lines_blank_lines_non_objects": [
        *(json.dumps({"step": s, "loss": 1 / s}) for s in range(1, 200)), "", "[1, 2]", "42", "not json {",
        *(json.dumps({"step": s, "loss": 1 / s}) for s in range(200, 400)), "   ",
    ],
    "resume_with_duplicate_steps": [json.dumps({"step": s, "loss": s * 0.5}) for s in [*range(1, 150),
                                                                                      *range(100, 300)]],
    "a_new_key_appears_late_and_one_goes": [
        *(json.dumps({"step": s, "a": s}) for s in range(1, 200)),
        *(json.dumps({"step": s, "b": -s}) for s in range(200, 400)),
    ],
    "strings_that_are_numbers_and_a_step_counter": [json.dumps({"global_step": s, "grpo_step": s * 2,
                                                                "lr": str(1e-5 * s)}) for s in range(1, 300)],
    "event_log_with_kinds": [json.dumps({"type": "eval" if s % 10 == 0 else "rollout", "grpo_step": s, "r": s})
                             for s in range(1, 300)],
    "mixed_number_and_object": [json.dumps({"step": 1, "x": {"y": 1}}), json.dumps({"step": 2, "x": 3}),
                                *(json.dumps({"step": s, "z": s}) for s in range(3, 200))],
    "crlf_and_infinity": [json.dumps({"step": s, "v": math.inf if s == 50 else s}) + "\r" for s in range(1, 200)],
    # A few lines polars reads differently from `json` among many it reads alike: read by `json` in place.
    "sparse_nulls_nans_and_blank_lines": [
        "" if s % 97 == 0 else verl_line(s, extra=None if s % 50 == 0 else (math.nan if s % 70 == 0 else s),
                                         only_null=None if s == 300 else 1.0)
        for s in range(1, 600)],
    "a_key_only_null_and_a_key_only_in_null_lines": [
        json.dumps({"step": s, "loss": 1 / s, "clip": None if s % 40 == 0 else 0.1, "rare": None if s % 45 else s,
                    "never": None} if s % 40 == 0 or s % 45 == 0 else {"step": s, "loss": 1 / s, "clip": 0.1})
        for s in range(1, 500)],
    "a_null_step": [json.dumps({"step": None if s == 77 else s, "loss": 1 / s}) for s in range(1, 400)],
    "a_byte_order_mark_and_a_non_object_mid_file": [
        *(json.dumps({"step": s, "loss": s}) for s in range(1, 100)), "\ufeff" + json.dumps({"step": 100, "loss": 1}),
        "null", "[]", *(json.dumps({"step": s, "loss": s}) for s in range(101, 300))],
    "text_with_colons_and_a_type_change": [
        json.dumps({"step": s, "time": f"10:{s % 60:02d}:00", "n": s if s < 250 else s + 0.5}) for s in range(1, 500)],
    "ends_with_a_null_line": [*(json.dumps({"step": s, "loss": 1 / s}) for s in range(1, 300)),
                              json.dumps({"step": 300, "loss": None})],
}
# Small reads, so that a file spans many chunks and the later ones reuse the columns polars found before.
SMALL_READS = ["sparse_nulls_nans_and_blank_lines", "a_key_only_null_and_a_key_only_in_null_lines",
               "a_new_key_appears_late_and_one_goes", "text_with_colons_and_a_type_change", "verl",
               "resume_with_duplicate_steps"]


@pytest.mark.parametrize("name", sorted(MESSY) + [f"{name}@4k" for name in SMALL_READS])
def test_columnar_reading_matches_line_by_line(tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    name, _, small = name.partition("@")
    monkeypatch.setattr(jsonl, "_FEW_BYTES", 0)  # these files are small: polars reads them all the same
    if small:
        monkeypatch.setattr(jsonl, "_READ_BYTES", 4096)
    path = tmp_path / f"{name}.jsonl"
    path.write_text("\n".join(MESSY[name]) + "\n", encoding="utf-8")
    read = READER.read(path)
    pd.testing.assert_frame_equal(canonical(read.frame), canonical(line_by_line(path)))
    parse = JsonlParse(path)
    with path.open(encoding="utf-8", errors="replace") as handle:
        parse.feed(handle)
    expected = parse.result()
    assert read.warnings == expected.warnings
    assert read.notes == expected.notes


def test_a_line_nested_100000_deep_is_one_bad_line_not_an_error(tmp_path: Path) -> None:
    deep = '{"a": ' * 100_000 + "1" + "}" * 100_000
    lines = [json.dumps({"step": s, "reward": s / 100}) for s in range(1, 100)]
    path = tmp_path / "log.jsonl"
    path.write_text("\n".join([*lines[:50], json.dumps({"step": 50.5})[:-1] + ', "x": ' + deep + "}", *lines[50:]])
                    + "\n", encoding="utf-8")
    read = READER.read(path)
    assert any("1 lines are not JSON" in w and "line 51" in w for w in read.warnings), read.warnings
    assert len(read.frame) == 99
    run = load_run(tmp_path)
    assert run.last_step == 99


def test_a_half_written_last_line_is_ignored_with_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    lines = [json.dumps({"step": s, "reward": s / 100}) for s in range(1, 300)]
    path.write_text("\n".join(lines) + "\n" + lines[0][:9], encoding="utf-8")
    read = READER.read(path)
    assert read.frame["step"].max() == 299
    assert any("last line is incomplete" in w for w in read.warnings)
    path.write_text("\n".join(lines), encoding="utf-8")  # whole, but its newline not written yet
    assert READER.read(path).warnings == []


# The whole-file path (`_read_whole`, large files) takes the usual logs and hands anything unusual back.
WHOLE_FILE = {
    **MESSY,
    "verl_with_nulls_and_a_key_from_line_300": [
        verl_line(s, grad=None if s % 9 == 0 else s / 3, **({"late": s} if s >= 300 else {})) for s in range(0, 600)],
    "flat_with_a_null_key_beside_numbers": [json.dumps({"global_step": s, "loss": None if s % 13 == 0 else 1 / s,
                                                        "null_count": s}) for s in range(1, 300)],
}
READ_WHOLE = {"verl", "verl_with_nulls_and_a_key_from_line_300", "flat_with_a_null_key_beside_numbers",
              "a_new_key_appears_late_and_one_goes"}


@pytest.mark.parametrize("name", sorted(WHOLE_FILE))
def test_whole_file_reading_matches_line_by_line_or_declines(tmp_path: Path, name: str) -> None:
    path = tmp_path / f"{name}.jsonl"
    path.write_text("\n".join(WHOLE_FILE[name]) + "\n", encoding="utf-8")
    whole = jsonl._read_whole(path)
    if name in READ_WHOLE:
        assert whole is not None
    if whole is None:
        return
    expected = JsonlParse(path)
    with path.open(encoding="utf-8", errors="replace") as handle:
        expected.feed(handle)
    read = expected.result()
    pd.testing.assert_frame_equal(canonical(whole.frame), canonical(read.frame))
    assert (whole.warnings, whole.notes, whole.facts, whole.steps_inferred) == (
        read.warnings, read.notes, read.facts, read.steps_inferred)


@pytest.mark.parametrize("name", sorted(READ_WHOLE))
def test_a_file_read_whole_normalizes_as_its_long_frame_would(tmp_path: Path, name: str) -> None:
    path = tmp_path / f"{name}.jsonl"
    path.write_text("\n".join(WHOLE_FILE[name]) + "\n", encoding="utf-8")
    whole = jsonl._read_whole(path)
    assert isinstance(whole, KeyedSource)
    direct = normalize_source(whole, "log.jsonl")
    assert whole._frame is None  # normalized from its series, no long frame laid out
    framed = normalize_source(SourceData(path=path, format="jsonl", frame=whole.frame, facts=whole.facts), "log.jsonl")
    assert (direct.warnings, direct.notes, direct.points, direct.unknown_keys) == (
        framed.warnings, framed.notes, framed.points, framed.unknown_keys)
    assert len(direct.pieces) == len(framed.pieces) > 0
    for ours, theirs in zip(direct.pieces, framed.pieces, strict=True):
        assert (ours.metric, ours.split, ours.source_key, ours.own_name) == (
            theirs.metric, theirs.split, theirs.source_key, theirs.own_name)
        for field in ("steps", "values", "wall_time"):
            np.testing.assert_array_equal(getattr(ours, field), getattr(theirs, field))
    assert len(direct.nonfinite) == len(framed.nonfinite)
    for ours_nan, theirs_nan in zip(direct.nonfinite, framed.nonfinite, strict=True):
        pd.testing.assert_frame_equal(ours_nan, theirs_nan)
    assert whole.carries_end_of_training() is False


def test_load_run_never_lays_out_a_whole_file_reading(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jsonl, "_WHOLE_FILE_BYTES", 1)
    monkeypatch.setattr(base, "_long_frame", lambda by_key: pytest.fail("laid out the long frame"))
    lines = [verl_line(s, grad=None if s % 9 == 0 else s) for s in range(1, 300)]
    lines.append(json.dumps({"step": 300, "data": {"train_runtime": 12.5}}))
    (tmp_path / "log.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert isinstance(jsonl._read_whole(tmp_path / "log.jsonl"), KeyedSource)
    run = load_run(tmp_path)
    assert run.last_step == 299  # the summary row is no curve
    assert run.facts.training_ended  # the summary key is seen in the series
    assert run.nonfinite["step"].tolist() == list(range(9, 300, 9))


def test_a_large_file_is_read_whole_and_a_resumed_one_line_by_line(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jsonl, "_WHOLE_FILE_BYTES", 1)
    path = tmp_path / "log.jsonl"
    lines = [verl_line(s, grad=None if s % 9 == 0 else s) for s in [*range(1, 300), *range(200, 400)]]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert jsonl._read_whole(path) is None  # steps go back: each row's place is kept by `JsonlParse`
    run = load_run(tmp_path)
    assert any("steps go backwards" in w for w in run.warnings)
    assert run.last_step == 399
    path.write_text("\n".join(lines[:299]) + "\n", encoding="utf-8")
    assert jsonl._read_whole(path) is not None
    assert load_run(tmp_path).nonfinite["step"].tolist() == list(range(9, 300, 9))


@pytest.mark.parametrize("size", [0, 1, 1000, jsonl._SCAN_BYTES - 1, jsonl._SCAN_BYTES, jsonl._SCAN_BYTES + 1,
                                  5 * jsonl._SCAN_BYTES // 2])
def test_the_colon_count_of_a_whole_file_is_bytes_count(size: int) -> None:
    data = np.random.default_rng(size).choice(np.frombuffer(b'{"a":1.5, "b": null}\n:', np.uint8), size).tobytes()
    assert jsonl._count_byte(data, ord(":")) == data.count(b":")


def test_nulls_are_found_on_every_line_that_holds_one_and_only_there() -> None:
    lines = [json.dumps({"step": s, "data": {"a": None if s % 7 == 0 else s, "b": None if s % 11 == 0 else 1}})
             for s in range(1, 200)]
    data = ("\n".join(lines) + "\n").encode()
    nulls = jsonl._null_rows(data, "step", np.arange(1, 200, dtype=np.float64))
    assert nulls == {"a": [s - 1 for s in range(7, 200, 7)], "b": [s - 1 for s in range(11, 200, 11)]}


# In a new process (polars not imported yet): what `_polars_and_bytes` returns for a file and for a folder.
_FIRST_READ = """
import sys
from pathlib import Path
from assessor.ingest import jsonl
assert "polars" not in sys.modules
if sys.argv[2] == "no-polars":
    sys.modules["polars"] = None  # as if it were not installed: its import fails
try:
    pl, data = jsonl._polars_and_bytes(Path(sys.argv[1]))
except OSError as error:
    print("raised", type(error).__name__)
else:
    print(getattr(pl, "__name__", None), data == Path(sys.argv[1]).read_bytes())
"""


@pytest.mark.parametrize(("target", "mode", "expected"), [
    ("log.jsonl", "", "polars True"),  # polars imported while the file was read, both handed back
    ("log.jsonl", "no-polars", "None True"),
    ("folder", "", "raised IsADirectoryError"),  # the read's error, raised as a plain read raises it
])
def test_the_first_read_imports_polars_and_reads_the_file_together(tmp_path, target, mode, expected):
    import subprocess
    import sys

    (tmp_path / "log.jsonl").write_text("".join(verl_line(step) + "\n" for step in range(1, 2000)))
    (tmp_path / "folder").mkdir()
    out = subprocess.run([sys.executable, "-c", _FIRST_READ, str(tmp_path / target), mode], capture_output=True,
                         text=True, check=True).stdout.strip()
    assert out == expected
