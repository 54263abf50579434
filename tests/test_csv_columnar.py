"""The CSV reader's columnar path (polars) reads exactly what the row-by-row path (the csv module) reads."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from assessor.ingest import csv_log
from assessor.ingest.base import SourceData
from assessor.ingest.csv_log import READER


def canonical(frame: pd.DataFrame) -> pd.DataFrame:
    out = frame.assign(key=frame["key"].astype(str), split=frame["split"].astype(str))
    return out.sort_values(["key", "split", "step", "value"], kind="stable").reset_index(drop=True)


def rows(header: str, lines: list[str], end: str = "\n") -> str:
    return "\n".join([header, *lines]) + end


PLAIN = {
    "wide_with_sparse_eval_columns": rows("step,reward,kl,eval_reward", [
        f"{s},{s / 10},{math.sin(s):.6f},{s / 5 if s % 50 == 0 else ''}" for s in range(1, 400)]),
    "nan_spellings_and_numbers_float_reads_its_own_way": rows("step,loss,acc,lr", [
        f"{s},{['nan', 'NaN', 'inf', '-Infinity', 'None', 'null', '1_000', '1.', '.5', '+2e-3'][s % 10]},"
        f"{'12%' if s % 7 == 0 else s / 400},{'np.float64(0.25)' if s % 9 == 0 else 1e-5}" for s in range(1, 300)]),
    "blank_lines_and_rows_of_empty_cells_and_padding": rows("step, reward ,kl", [
        "" if s % 31 == 0 else (",," if s % 37 == 0 else f" {s} , {s / 3} ,{s}") for s in range(1, 300)]),
    "short_rows": rows("step,a,b,c", [f"{s},{s}" if s % 5 else f"{s},{s},{s},{s}" for s in range(1, 200)]),
    "appended_restart_with_total_steps": rows("step,total_steps,reward_avg,avg_response_len", [
        *(f"{s},100,{s / 100},{s}" for s in range(1, 80)), *(f"{s},300,{s / 300},{s}" for s in range(1, 150))]),
    "half_written_last_line": rows("step,reward,kl", [f"{s},{s / 10},{s}" for s in range(1, 200)] + ["200,0.5"],
                                   end=""),
    "last_line_whole_without_newline": rows("step,reward", [f"{s},{s / 10}" for s in range(1, 200)], end=""),
    "crlf": rows("step,reward", [f"{s},{s / 10}\r" for s in range(1, 200)]),
    "no_step_column": rows("reward,kl", [f"{s / 10},{s}" for s in range(1, 200)]),
    "a_step_counter_and_a_text_column_and_a_steps_going_back": rows("global_step,grpo_step,note,loss", [
        f"{s},{2 * s},run {s % 3},{s * 0.5}" for s in [*range(1, 150), *range(100, 250)]]),
    "text_in_some_cells_of_a_number_column": rows("step,reward", [
        f"{s},{'oops' if s % 13 == 0 else s / 10}" for s in range(1, 200)]),
    "number_spellings_polars_types_itself": rows("step,loss,count", [
        f"{s},{['nan', 'NaN', 'inf', '-inf', 'Infinity', '1e-3', '-0.0', '7'][s % 8]},{s * 1000}"
        for s in range(1, 300)]),
    "text_after_the_first_hundred_rows": rows("step,reward", [
        f"{s},{'diverged' if s == 250 else s / 10}" for s in range(1, 300)]),
    "wandb_bookkeeping_columns": rows("_step,_runtime,train/global_step,train/reward", [
        f"{s + 3},{s * 1.5},{s},{s / 7}" for s in range(1, 200)]),
}
# Files the csv module must read: the columnar path hands them over.
CAREFUL = {
    "quoted_fields": rows('step,"reward, mean",note', [f'{s},{s / 10},"a, b"' for s in range(1, 100)]),
    "a_row_longer_than_the_header": rows("step,reward", [f"{s},{s / 10}" + (",9" if s == 50 else "")
                                                         for s in range(1, 100)]),
    "a_kind_column": rows("step,type,reward", [f"{s},{'eval' if s % 10 == 0 else 'train'},{s}" for s in range(1, 99)]),
    "long_form": rows("step,metric,value", [f"{s},reward,{s / 10}" for s in range(1, 99)]),
    "repeated_header_names": rows("step,reward,reward", [f"{s},{s},{-s}" for s in range(1, 99)]),
    "lone_carriage_returns": "step,reward\r" + "".join(f"{s},{s / 10}\r" for s in range(1, 99)),
}


def read_both(path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[SourceData, SourceData, bool]:
    used: list[bool] = []
    columnar = csv_log._read_columns

    def spy(*args: object) -> SourceData | None:
        read = columnar(*args)  # type: ignore[arg-type]
        used.append(read is not None)
        return read

    monkeypatch.setattr(csv_log, "_read_columns", spy)
    monkeypatch.setattr(csv_log, "_COLUMNAR_BYTES", 0)
    fast = READER.read(path)
    monkeypatch.setattr(csv_log, "_COLUMNAR_BYTES", 1 << 60)
    slow = READER.read(path)
    return fast, slow, any(used)


@pytest.mark.parametrize("name", sorted(PLAIN) + sorted(CAREFUL))
def test_columnar_csv_reading_matches_the_csv_module(
    tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch,
) -> None:
    path = tmp_path / f"{name}.csv"
    path.write_bytes((PLAIN | CAREFUL)[name].encode("utf-8"))
    fast, slow, columnar = read_both(path, monkeypatch)
    assert columnar == (name in PLAIN)
    pd.testing.assert_frame_equal(canonical(fast.frame), canonical(slow.frame))
    assert fast.warnings == slow.warnings
    assert fast.notes == slow.notes
    assert fast.facts == slow.facts
    assert fast.steps_inferred == slow.steps_inferred


def test_a_tsv_and_a_byte_order_mark(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "log.tsv"
    path.write_bytes(b"\xef\xbb\xbf" + rows("step\treward", [f"{s}\t{s / 10}" for s in range(1, 99)]).encode())
    fast, slow, columnar = read_both(path, monkeypatch)
    assert columnar
    pd.testing.assert_frame_equal(canonical(fast.frame), canonical(slow.frame))
    assert fast.frame["step"].max() == 98


@pytest.mark.parametrize("text", ["step,reward\n", "step,reward\n\n , \n"])
def test_header_only_is_the_same_clear_error(tmp_path: Path, text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "log.csv"
    path.write_text(text, encoding="utf-8")
    monkeypatch.setattr(csv_log, "_COLUMNAR_BYTES", 0)
    with pytest.raises(Exception, match="header only") as fast:
        READER.read(path)
    monkeypatch.setattr(csv_log, "_COLUMNAR_BYTES", 1 << 60)
    with pytest.raises(Exception, match="header only") as slow:
        READER.read(path)
    assert str(fast.value) == str(slow.value)
