"""W&B reader, checked on runs written by the real `wandb` SDK in offline mode (tests/fixtures/wandb).

The fixtures are committed; `tests/fixtures/wandb/make_fixtures.py` regenerates them (it needs `wandb`,
which the test suite does not). Framing edge cases (records spanning blocks, damage, truncation) use a
small writer here that follows the documented format.
"""

from __future__ import annotations

import math
import shutil
import struct
import zlib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from assessor import load_run
from assessor.cli import main
from assessor.errors import NoMetricsError, UnreadableSourceError
from assessor.ingest.discover import discover
from assessor.ingest.wandb import READER, WandbReader, read_wandb_runs

FIXTURES = Path(__file__).parent / "fixtures" / "wandb"
HF = FIXTURES / "hf_grpo"
VERL = FIXTURES / "verl"
GPU = FIXTURES / "gpu_stats"


def wandb_file(root: Path, run_id: str) -> Path:
    return next(root.glob(f"wandb/*-{run_id}/run-{run_id}.wandb"))


def values(metrics: pd.DataFrame, metric: str, split: str = "train") -> dict[int, float]:
    rows = metrics[(metrics["metric"] == metric) & (metrics["split"] == split)]
    return dict(zip(rows["step"].tolist(), rows["value"].tolist(), strict=True))


# --- a writer for hand-made files (wire format + framing, as documented) -----------------------------------


def varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def field(number: int, payload: bytes) -> bytes:
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def history(step: int, items: dict[str, str]) -> bytes:
    """A `Record` holding a `HistoryRecord` (values as JSON text, keys as `nested_key`)."""
    body = b"".join(field(1, field(2, k.encode()) + field(16, v.encode())) for k, v in items.items())
    body += field(2, varint(1 << 3) + varint(step)) if step else field(2, b"")
    return varint(1 << 3) + varint(1) + field(2, body)


def frame(payloads: list[bytes]) -> bytes:
    out = bytearray(b":W&B" + struct.pack("<HB", 0xBEE1, 0))
    block = 32 * 1024
    for payload in payloads:
        rest, first = payload, True
        while True:
            left = block - len(out) % block
            if left < 7:
                out += b"\0" * left
                left = block
            piece, rest = rest[: left - 7], rest[left - 7:]
            kind = (1 if first else 4) if not rest else (2 if first else 3)
            out += struct.pack("<IHB", zlib.crc32(piece, zlib.crc32(bytes([kind]))), len(piece), kind) + piece
            first = False
            if not rest:
                break
    return bytes(out)


# --- tests ----------------------------------------------------------------------------------------------------


def test_sniff() -> None:
    reader = WandbReader()
    assert reader.name == "wandb"
    assert reader.sniff(Path("run-abc.wandb"), b"")
    assert reader.sniff(Path("copy.bin"), b":W&B\xe1\xbe\x00")
    assert not reader.sniff(Path("run-abc.wandb.synced"), b"")


def test_sdk_file_history_steps_nan_and_config() -> None:
    data = READER.read(wandb_file(HF, "grpo0001"))
    assert data.format == "wandb"
    assert data.warnings == []
    frame = data.frame
    keys = set(frame["key"].astype(str))
    assert "train/reward" in keys and "eval/reward" in keys
    assert not keys & {"_step", "_runtime", "_timestamp", "train/global_step"}
    reward = frame[frame["key"] == "train/reward"]
    assert reward["step"].tolist() == [1, 2, 3, 4, 5, 6]  # train/global_step, not W&B's _step (0-based)
    assert reward["value"].tolist() == pytest.approx([0.1, 0.2, 0.3, 0.4, 0.5, 0.6])
    assert (reward["wall_time"] > 1.6e9).all()
    loss = frame[frame["key"] == "train/loss"].set_index("step")["value"]
    assert math.isnan(loss[3])
    assert frame[frame["key"] == "eval/reward"]["step"].tolist() == [3, 6]
    assert data.facts["beta"][0] == 0.04
    assert data.facts["num_generations"][0] == 8
    assert data.facts["max_completion_length"][0] == 256
    assert data.facts["planned_total_steps"][0] == 8
    assert data.facts["learning_rate"][0] == 1e-6
    assert data.facts["framework"][0] == "trl"
    assert "W&B config" in data.facts["beta"][1]


def test_load_run_combines_a_resume_and_leaves_out_another_experiment() -> None:
    found = discover(HF)
    assert sorted(p.parent.name.rsplit("-", 1)[1] for p in found.wandb_files) == ["grpo0001", "grpo0002", "old0001"]
    assert found.files == [] and found.config_files == []  # output.log repeats the .wandb; debug logs skipped

    run = load_run(HF)
    assert [(s.format, s.path) for s in run.sources] == [("wandb", "wandb")]
    reward = values(run.metrics, "reward_mean")
    assert sorted(reward) == list(range(1, 9))
    assert reward[4] == pytest.approx(0.4)  # only the first run logged it
    assert reward[5] == pytest.approx(0.55)  # the resumed run's record wins
    assert reward[8] == pytest.approx(0.85)
    assert set(values(run.metrics, "kl")) == set(range(1, 9))
    assert values(run.metrics, "reward_mean", "eval") == {3: pytest.approx(0.33), 6: pytest.approx(0.36)}
    assert {"grad_norm", "lr", "response_length_mean", "reward_zero_std_frac", "epoch", "loss"} <= set(
        run.metrics["metric"].astype(str))
    nonfinite = run.nonfinite
    assert nonfinite[["step", "metric", "kind"]].values.tolist() == [[3, "loss", "nan"]]
    assert run.facts.beta == 0.04 and run.facts.num_generations == 8 and run.facts.framework == "trl"
    assert run.facts.model == "Qwen/Qwen2.5-0.5B-Instruct"
    notes = run.sources[0].notes
    assert any("old0001" in n and "not read" in n for n in notes)
    assert any("combined 2 W&B runs" in n for n in notes)
    assert any("resumed or restarted" in w for w in run.warnings)


def test_verl_run_uses_the_logged_step_and_nested_config() -> None:
    run = load_run(VERL)
    assert values(run.metrics, "reward_mean") == {s: pytest.approx(0.4 + 0.05 * s) for s in range(1, 5)}
    assert values(run.metrics, "reward_mean", "eval") == {0: pytest.approx(0.40), 4: pytest.approx(0.55)}
    assert set(values(run.metrics, "time_generation_s")) == {1, 2, 3, 4}
    facts = run.facts
    assert (facts.framework, facts.algorithm, facts.num_generations) == ("verl", "grpo", 5)
    assert facts.beta == 0.001 and facts.max_completion_length == 1024 and facts.planned_total_steps == 4


def test_system_stats_become_gpu_telemetry() -> None:
    run = load_run(GPU)
    assert run.gpu is not None
    assert run.gpu_devices == {0: "NVIDIA H100 80GB HBM3", 1: "NVIDIA H100 80GB HBM3"}
    fields = set(run.gpu["field"].astype(str))
    expected = {"gpu_util_pct", "power_w", "power_limit_w", "memory_used_mib", "memory_total_mib", "temperature_c"}
    assert expected <= fields
    assert not any(f.startswith(("process", "cpu")) for f in fields)
    util = run.gpu[(run.gpu["field"] == "gpu_util_pct") & (run.gpu["device"] == 0)]["value"].tolist()
    assert util == [95.0, 5.0, 95.0, 5.0, 95.0, 5.0]
    used = run.gpu[run.gpu["field"] == "memory_used_mib"]["value"]
    total = run.gpu[run.gpu["field"] == "memory_total_mib"]["value"]
    assert set(used) == {40 * 1024.0} and set(total) == {80 * 1024.0}
    assert values(run.metrics, "reward_mean") == {s: pytest.approx(0.1 * (s - 1)) for s in range(1, 7)}
    assert run.sources[0].keys == 1  # the metric keys, not the telemetry fields


def test_truncated_file_reads_what_is_complete(tmp_path: Path) -> None:
    whole = wandb_file(HF, "grpo0002").read_bytes()
    full = READER.read(wandb_file(HF, "grpo0002"))
    full_rows = len(full.frame)
    seen = []
    partial = 0
    for cut in range(7, len(whole), 97):  # mid-header, mid-chunk, on boundaries
        path = tmp_path / "run-x.wandb"
        path.write_bytes(whole[:cut])
        try:
            data = READER.read(path)
        except UnreadableSourceError as error:  # nothing logged yet at this point of the file
            assert "no history rows" in str(error)
            continue
        assert len(data.frame) <= full_rows
        seen.append(len(data.frame))
        # A cut between records looks like a complete file; a cut inside one says the run may be writing.
        assert all("the run may still be writing" in w for w in data.warnings)
        partial += bool(data.warnings)
        assert read_wandb_runs([path], tmp_path, live=True).warnings == []
    assert seen and seen == sorted(seen) and max(seen) <= full_rows and partial > 10


def test_corrupt_header_is_one_line_error(tmp_path: Path) -> None:
    path = tmp_path / "run-bad.wandb"
    path.write_bytes(b"NOTWANDB" + wandb_file(HF, "grpo0001").read_bytes()[8:])
    with pytest.raises(UnreadableSourceError) as caught:
        READER.read(path)
    message = str(caught.value)
    assert "\n" not in message and "run-bad.wandb" in message and "not a W&B transaction log" in message
    assert "move it out" in message
    with pytest.raises(NoMetricsError, match="not a W&B transaction log"):
        load_run(tmp_path)


def test_records_across_blocks_and_a_damaged_chunk(tmp_path: Path) -> None:
    long_text = '"' + "x" * 70_000 + '"'  # one record over two 32 KiB blocks: FIRST, MIDDLE, LAST
    payloads = [history(1, {"train/reward": "0.5", "train/global_step": "1"}),
                history(2, {"train/reward": "NaN", "note": long_text, "train/global_step": "2"}),
                history(3, {"train/reward": "Infinity", "media": '{"_type": "image-file", "path": "a.png"}',
                            "train/global_step": "3"})]
    payloads += [history(i, {"train/reward": str(i / 10), "train/global_step": str(i)}) for i in range(4, 200)]
    data = frame(payloads)
    path = tmp_path / "run-big.wandb"
    path.write_bytes(data)
    read = READER.read(path)
    reward = read.frame[read.frame["key"] == "train/reward"]
    assert reward["step"].tolist() == list(range(1, 200))
    assert math.isnan(reward["value"].iloc[1]) and reward["value"].iloc[2] == math.inf
    assert set(read.frame["key"].astype(str)) == {"train/reward"}  # text and media are not curves
    assert read.warnings == []

    damaged = bytearray(data)
    damaged[len(data) // 2] ^= 0xFF  # in the middle of the file: stop there, keep what came before
    path.write_bytes(bytes(damaged))
    read = READER.read(path)
    assert 0 < len(read.frame) < 199
    assert any("damaged chunk" in w for w in read.warnings)


def test_typed_history_values_and_unknown_fields(tmp_path: Path) -> None:
    # Newer HistoryItems may carry typed values (integer=5 zigzag, number=6 double) and fields we do not know.
    item_int = field(2, b"steps_done") + varint(5 << 3) + varint(2 * 21)
    item_double = field(2, b"reward") + varint(6 << 3 | 1) + struct.pack("<d", 0.75)
    unknown = varint(99 << 3) + varint(7)
    body = field(1, item_int) + field(1, item_double) + unknown + field(2, varint(1 << 3) + varint(4))
    record = varint(1 << 3) + varint(1) + field(2, body) + field(300, b"future")
    path = tmp_path / "run-typed.wandb"
    path.write_bytes(frame([record]))
    read = READER.read(path)
    rows = {str(k): (int(s), v) for k, s, v in zip(read.frame["key"], read.frame["step"], read.frame["value"],
                                                    strict=True)}
    assert rows == {"steps_done": (4, 21.0), "reward": (4, 0.75)}


def test_point_at_the_run_folder_or_the_file(tmp_path: Path) -> None:
    run_dir = next(VERL.glob("wandb/offline-run-*"))
    for target in (run_dir, wandb_file(VERL, "verl0001"), VERL / "wandb"):
        run = load_run(target)
        assert run.sources[0].format == "wandb"
        assert set(values(run.metrics, "reward_mean")) == {1, 2, 3, 4}


def test_old_layout_history_jsonl_and_output_log(tmp_path: Path) -> None:
    run_dir = tmp_path / "wandb" / "run-20200101_000000-abcd1234"
    run_dir.mkdir(parents=True)
    (run_dir / "wandb-history.jsonl").write_text(
        '{"_step": 0, "_runtime": 1, "_timestamp": 1577836800, "reward": 0.1}\n'
        '{"_step": 1, "_runtime": 2, "_timestamp": 1577836801, "reward": 0.2}\n', encoding="utf-8")
    (run_dir / "config.yaml").write_text("beta:\n  desc: null\n  value: 0.1\n", encoding="utf-8")
    (tmp_path / "wandb" / "debug.log").write_text("2020-01-01 INFO something\n", encoding="utf-8")
    run = load_run(tmp_path)
    assert values(run.metrics, "reward_mean") == {0: pytest.approx(0.1), 1: pytest.approx(0.2)}
    assert run.facts.beta == 0.1
    assert [s.format for s in run.sources] == ["jsonl"]


def test_output_log_of_a_run_is_sane_through_the_console_reader(tmp_path: Path) -> None:
    # Read when a run folder has no .wandb (copied without it); TRL's printed dicts become console rows.
    run_dir = tmp_path / "wandb" / "offline-run-20250101_000000-grpo0001"
    shutil.copytree(next(HF.glob("wandb/*-grpo0001")) / "files", run_dir / "files")
    run = load_run(tmp_path)
    assert run.sources[0].format.startswith("console")
    reward = values(run.metrics, "reward_mean")
    assert len(reward) == 6
    assert list(reward.values()) == pytest.approx([0.1, 0.2, 0.3, 0.4, 0.5, 0.6])


def test_inspect_names_the_wandb_source(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inspect", str(HF)]) == 0
    out = capsys.readouterr().out
    assert "wandb" in out and "reward_mean" in out and "train/reward" in out


def test_steps_fall_back_to_the_history_step_without_a_step_metric(tmp_path: Path) -> None:
    payloads = [history(s, {"critic/score/mean": str(s / 10)}) for s in (0, 1, 2)]
    path = tmp_path / "run-v.wandb"
    path.write_bytes(frame(payloads))
    read = READER.read(path)
    assert read.frame["step"].tolist() == [0, 1, 2]
    assert np.allclose(read.frame["value"], [0.0, 0.1, 0.2])
    assert read.facts["framework"][0] == "verl"
