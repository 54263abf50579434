"""TensorBoard reader, checked on files written by TensorBoard's own writer and on two real verl runs."""

from __future__ import annotations

import json
import re
import struct
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
from tensorboard.compat.proto.event_pb2 import Event
from tensorboard.compat.proto.summary_pb2 import HistogramProto, Summary, SummaryMetadata
from tensorboard.compat.proto.tensor_pb2 import TensorProto
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
from tensorboard.plugins.text.plugin_data_pb2 import TextPluginData
from tensorboard.summary.writer.event_file_writer import EventFileWriter

from assessor import load_run
from assessor.errors import UnreadableSourceError
from assessor.ingest.base import SourceData
from assessor.ingest.tensorboard import READER, TensorBoardReader, read_event_files

VERL_RUNS = ["verl-grpo-gsm8k-q3b-fsdp-base", "verl-grpo-gsm8k-q7b-fsdp-base"]
SCALARS = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="scalars"))
DT_FLOAT, DT_DOUBLE, DT_STRING = 1, 2, 7


def scalar(tag: str, step: int, value: float, wall_time: float) -> Event:
    summary = Summary(value=[Summary.Value(tag=tag, simple_value=value)])
    return Event(wall_time=wall_time, step=step, summary=summary)


def tensor_scalar(
    tag: str, step: int, tensor: TensorProto, wall_time: float, metadata: SummaryMetadata | None = None
) -> Event:
    value = Summary.Value(tag=tag, tensor=tensor)
    if metadata is not None:
        value.metadata.CopyFrom(metadata)
    return Event(wall_time=wall_time, step=step, summary=Summary(value=[value]))


def write_events(logdir: Path, events: Iterable[Event], suffix: str = "") -> Path:
    """One event file written by TensorBoard's EventFileWriter (it adds the file_version record first)."""
    writer = EventFileWriter(str(logdir), max_queue_size=1000, filename_suffix=suffix)
    for event in events:
        writer.add_event(event)
    writer.close()
    files = sorted(logdir.glob(f"events.out.tfevents.*{suffix}"), key=lambda p: p.stat().st_mtime_ns)
    return files[-1]


def series(data: SourceData, tag: str) -> pd.DataFrame:
    return data.frame[data.frame["key"] == tag].reset_index(drop=True)


def test_sniff_by_name() -> None:
    reader = TensorBoardReader()
    assert reader.name == "tensorboard"
    assert reader.sniff(Path("events.out.tfevents.1753500620.host.1.0"), b"\x00")
    assert reader.sniff(Path("x.tfevents.v2"), b"")
    assert not reader.sniff(Path("trainer_state.json"), b"{")


def test_simple_values_round_trip_at_float32(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    values = rng.normal(size=300) * 1e3
    values[7] = 0.0  # zero takes the slow branch of the fast path
    path = write_events(
        tmp_path,
        [scalar("train/reward", step, float(v), 1000.0 + step) for step, v in enumerate(values)]
        + [scalar("train/loss", step, 0.5, 2000.0 + step) for step in range(0, 300, 10)],
    )
    data = READER.read(path)
    assert data.format == "tensorboard"
    assert data.path == path
    assert data.warnings == []
    reward = series(data, "train/reward")  # the raw tag, `train/` kept
    assert reward["step"].tolist() == list(range(300))
    np.testing.assert_array_equal(reward["value"].to_numpy(), values.astype(np.float32).astype(np.float64))
    np.testing.assert_array_equal(reward["wall_time"].to_numpy(), 1000.0 + np.arange(300))
    assert reward["split"].isna().all()
    assert series(data, "train/loss")["step"].tolist() == list(range(0, 300, 10))
    assert set(data.frame["key"].unique()) == {"train/reward", "train/loss"}


def test_more_than_ten_thousand_points_are_all_kept(tmp_path: Path) -> None:
    n = 25_000
    path = write_events(tmp_path, (scalar("critic/score/mean", s, s * 0.5, 1e9 + s) for s in range(n)))
    reward = series(READER.read(path), "critic/score/mean")
    assert len(reward) == n
    assert reward["step"].tolist() == list(range(n))
    assert reward["value"].iloc[-1] == pytest.approx((n - 1) * 0.5)


def test_tensor_scalars_with_metadata_on_first_value_only(tmp_path: Path) -> None:
    events = [
        tensor_scalar("eval/acc", 0, TensorProto(dtype=DT_FLOAT, float_val=[0.25]), 10.0, SCALARS),
        tensor_scalar("eval/acc", 1, TensorProto(dtype=DT_FLOAT, float_val=[0.5]), 11.0),
        tensor_scalar("eval/acc", 2, TensorProto(dtype=DT_FLOAT, tensor_content=struct.pack("<f", 0.75)), 12),
        tensor_scalar("eval/acc", 3, TensorProto(dtype=DT_FLOAT, float_val=[0.0]), 13.0),
        tensor_scalar("lr", 0, TensorProto(dtype=DT_DOUBLE, double_val=[1e-6]), 10.0, SCALARS),
        tensor_scalar("lr", 1, TensorProto(dtype=DT_DOUBLE, tensor_content=struct.pack("<d", 2e-6)), 11.0),
        # Tensors of other plugins, histograms and images are not scalars.
        tensor_scalar(
            "notes", 0, TensorProto(dtype=7, string_val=[b"hello"]), 10.0,
            SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="text")),
        ),
        tensor_scalar("notes", 1, TensorProto(dtype=DT_FLOAT, float_val=[9.0]), 11.0),
        Event(wall_time=10.0, summary=Summary(value=[Summary.Value(tag="h", histo=HistogramProto(num=3))])),
        Event(wall_time=10.0, step=0, summary=Summary(value=[
            Summary.Value(tag="img", image=Summary.Image(height=1, width=1, encoded_image_string=b"x")),
        ])),
        # A vector in a scalars tag is not one value: skipped, with a note.
        tensor_scalar("eval/acc", 4, TensorProto(dtype=DT_FLOAT, float_val=[1.0, 2.0]), 14.0),
    ]
    data = READER.read(write_events(tmp_path, events))
    acc = series(data, "eval/acc")
    assert acc["step"].tolist() == [0, 1, 2, 3]
    assert acc["value"].tolist() == [0.25, 0.5, 0.75, 0.0]
    lr = series(data, "lr")
    assert lr["value"].tolist() == [1e-6, 2e-6]  # doubles stay doubles
    assert set(data.frame["key"].unique()) == {"eval/acc", "lr"}
    assert any("skipped 1 scalar-plugin tensor" in note for note in data.notes)


def test_several_values_in_one_summary(tmp_path: Path) -> None:
    event = Event(wall_time=5.0, step=3, summary=Summary(value=[
        Summary.Value(tag="a", simple_value=1.0),
        Summary.Value(tag="b", simple_value=0.0),
        Summary.Value(tag="c", tensor=TensorProto(dtype=DT_FLOAT, float_val=[2.0]), metadata=SCALARS),
    ]))
    frame = READER.read(write_events(tmp_path, [event])).frame
    assert dict(zip(frame["key"], frame["value"], strict=True)) == {"a": 1.0, "b": 0.0, "c": 2.0}
    assert frame["step"].tolist() == [3, 3, 3]


@pytest.mark.parametrize("chop", [1, 4, 9, 13])
def test_truncated_tail_reads_what_is_complete(tmp_path: Path, chop: int) -> None:
    path = write_events(tmp_path, [scalar("loss", s, float(s), 100.0 + s) for s in range(50)])
    path.write_bytes(path.read_bytes()[:-chop])  # the last record is 12+data+4 bytes, longer than 13
    data = READER.read(path)
    assert series(data, "loss")["step"].tolist() == list(range(49))
    assert data.warnings == [
        f"{path.name}: last record is incomplete (the run may still be writing); read 50 events before it"
    ]


def test_partial_header_is_an_incomplete_record(tmp_path: Path) -> None:
    path = write_events(tmp_path, [scalar("loss", s, float(s), 100.0 + s) for s in range(5)])
    path.write_bytes(path.read_bytes() + b"\x20\x00\x00")
    data = READER.read(path)
    assert len(data.frame) == 5
    assert "last record is incomplete" in data.warnings[0]


def test_corrupt_record_stops_with_a_warning(tmp_path: Path) -> None:
    path = write_events(tmp_path, [scalar("loss", s, float(s), 100.0 + s) for s in range(20)])
    raw = bytearray(path.read_bytes())
    # Walk the framing to record 11 (the file_version record is record 1) and garble its data.
    pos = 0
    for _ in range(10):
        pos += 12 + struct.unpack_from("<Q", raw, pos)[0] + 4
    length = struct.unpack_from("<Q", raw, pos)[0]
    raw[pos + 12:pos + 12 + length] = b"\xff" * length
    path.write_bytes(bytes(raw))
    data = READER.read(path)
    assert series(data, "loss")["step"].tolist() == list(range(9))
    assert data.warnings == [
        f"{path.name}: record 11 is not a valid event (corrupt file?); read 10 events before it"
    ]


def test_corrupt_length_is_not_called_a_partial_write(tmp_path: Path) -> None:
    path = write_events(tmp_path, [scalar("loss", s, float(s), 100.0 + s) for s in range(20)])
    raw = bytearray(path.read_bytes())
    pos = 0
    for _ in range(10):
        pos += 12 + struct.unpack_from("<Q", raw, pos)[0] + 4
    struct.pack_into("<Q", raw, pos, 1 << 40)  # record 11 now claims a terabyte; its length CRC disagrees
    path.write_bytes(bytes(raw))
    data = READER.read(path)
    assert len(data.frame) == 9
    assert data.warnings == [f"{path.name}: record 11 has a corrupt length field; read 10 events before it"]


def test_resume_across_two_files_keeps_the_newest_values(tmp_path: Path) -> None:
    # First attempt logs steps 0..9, crashes; the resumed run starts again from a checkpoint at step 5.
    first = write_events(tmp_path, [scalar("train/reward", s, float(s), 1000.0 + s) for s in range(10)], ".a")
    second = write_events(
        tmp_path, [scalar("train/reward", s, 100.0 + s, 5000.0 + s) for s in range(5, 15)], ".b"
    )
    # Handed over in the wrong order on purpose: wall time decides.
    data = read_event_files([second, first], tmp_path)
    reward = series(data, "train/reward")
    assert reward["step"].tolist() == list(range(10)) + list(range(5, 15))
    assert bool(np.all(np.diff(reward["wall_time"].to_numpy()) >= 0))
    # The normalizer keeps the last record of a step in this order: the resumed run's.
    newest = reward.drop_duplicates("step", keep="last").set_index("step")["value"]
    assert newest.loc[0:4].tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    assert newest.loc[5:14].tolist() == [100.0 + s for s in range(5, 15)]
    assert data.path == tmp_path
    assert any("combined 2 event files" in note for note in data.notes)


def test_equal_wall_times_keep_file_order(tmp_path: Path) -> None:
    events = [scalar("x", 1, 1.0, 7.0), scalar("x", 1, 2.0, 7.0), scalar("x", 0, 3.0, 6.0)]
    path = write_events(tmp_path, events)
    assert series(READER.read(path), "x")["value"].tolist() == [3.0, 1.0, 2.0]


def test_empty_file_raises(tmp_path: Path) -> None:
    path = tmp_path / "events.out.tfevents.1700000000.host.1.0"
    path.write_bytes(b"")
    with pytest.raises(UnreadableSourceError, match=rf"^{re.escape(path.name)}: is empty;"):
        READER.read(path)


def test_file_without_scalars_raises(tmp_path: Path) -> None:
    only_images = Event(wall_time=1.0, step=0, summary=Summary(value=[
        Summary.Value(tag="img", image=Summary.Image(height=1, width=1, encoded_image_string=b"x")),
    ]))
    path = write_events(tmp_path, [only_images])
    with pytest.raises(UnreadableSourceError, match="holds no scalar summaries; point assessor at the"):
        READER.read(path)


def test_framework_facts_from_tag_names(tmp_path: Path) -> None:
    trl = write_events(
        tmp_path / "trl", [scalar(t, 1, 1.0, 1.0) for t in ("train/reward", "train/epoch", "train/kl")]
    )
    assert READER.read(trl).facts == {"framework": ("trl", f"{trl.name}: tag names")}
    verl = write_events(tmp_path / "verl", [scalar("timing_s/gen", 1, 1.0, 1.0)])
    assert READER.read(verl).facts["framework"][0] == "verl"
    other = write_events(tmp_path / "other", [scalar("train/reward", 1, 1.0, 1.0)])
    assert READER.read(other).facts == {}


def add_text(tag: str, text: str, wall_time: float, step: int = 0, suffix: str = "/text_summary") -> Event:
    """A text summary as `torch.utils.tensorboard.SummaryWriter.add_text` writes it (tensorboardX too): tag
    `<tag>/text_summary`, the `text` plugin, a DT_STRING tensor of shape [1]; TF's `tf.summary.text` keeps `<tag>`."""
    metadata = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(
        plugin_name="text", content=TextPluginData(version=0).SerializeToString()))
    tensor = TensorProto(dtype=DT_STRING, string_val=[text.encode("utf-8")],
                         tensor_shape=TensorShapeProto(dim=[TensorShapeProto.Dim(size=1)]))
    value = Summary.Value(tag=tag + suffix, metadata=metadata, tensor=tensor)
    return Event(wall_time=wall_time, step=step, summary=Summary(value=[value]))


def grpo_args(**changes: object) -> str:
    """`GRPOConfig.to_json_string()`, abridged: what HF's TensorBoardCallback logs as `args` at train start."""
    args = {"output_dir": "out", "max_steps": 500, "logging_steps": 10, "learning_rate": 1e-06, "beta": 0.04,
            "num_generations": 8, "max_completion_length": 1024, "loss_type": "dapo", "num_train_epochs": 3.0,
            "report_to": ["tensorboard"], "lr_scheduler_kwargs": {}}
    return json.dumps({**args, **changes}, indent=2)


MODEL_CONFIG = json.dumps({"_name_or_path": "Qwen/Qwen2.5-1.5B-Instruct", "vocab_size": 151936,
                           "architectures": ["Qwen2ForCausalLM"]}, indent=2)


@pytest.mark.parametrize("suffix", ["/text_summary", ""])
def test_tensorboard_only_run_reads_its_facts_from_the_args_text_summary(tmp_path: Path, suffix: str) -> None:
    logdir = tmp_path / "run" / "runs" / "Nov20_09-14-00_host"
    events = [add_text("args", grpo_args(), 100.0, suffix=suffix),
              add_text("model_config", MODEL_CONFIG, 100.0, suffix=suffix),
              add_text("train/completions", "a string logged at step 10", 101.0, step=10, suffix=suffix)]
    events += [scalar(tag, s, 0.1 * s, 100.0 + s) for s in range(10, 101, 10) for tag in ("train/reward", "train/kl")]
    write_events(logdir, events)
    run = load_run(tmp_path / "run")
    facts = run.facts
    assert (facts.beta, facts.num_generations, facts.max_completion_length) == (0.04, 8, 1024)
    assert (facts.learning_rate, facts.planned_total_steps, facts.loss_type) == (1e-06, 500, "dapo")
    assert (facts.model, facts.vocab_size) == ("Qwen/Qwen2.5-1.5B-Instruct", 151936)
    name = next(logdir.glob("events.out.tfevents.*")).name
    assert facts.provenance["beta"] == f"runs/Nov20_09-14-00_host/{name} (args): beta"
    assert facts.provenance["vocab_size"].endswith("(model_config): vocab_size")
    assert run.warnings == []
    assert set(run.metrics["metric"].astype(str)) == {"reward_mean", "kl"}  # the text is no curve


def test_a_resumed_run_takes_the_newest_args(tmp_path: Path) -> None:
    first = write_events(tmp_path, [add_text("args", grpo_args(max_steps=300), 10.0), scalar("kl", 1, 0.1, 11.)], ".a")
    second = write_events(tmp_path, [add_text("args", grpo_args(max_steps=600), 90.0), scalar("kl", 2, 0.1, 91.)], ".b")
    data = read_event_files([first, second], tmp_path)
    assert data.facts["planned_total_steps"] == (600, f"{tmp_path.name} (args): max_steps")


def test_text_that_is_not_a_config_gives_no_facts(tmp_path: Path) -> None:
    path = write_events(tmp_path, [add_text("args", "--beta 0.1 (not JSON)", 1.0),
                                   add_text("notes", json.dumps({"beta": 0.3}), 1.0), scalar("train/kl", 1, 0.1, 2.0)])
    assert READER.read(path).facts == {}


@pytest.mark.parametrize("run", VERL_RUNS)
def test_real_verl_runs(run: str, real_runs: Path) -> None:
    (path,) = (real_runs / run).glob("events.out.tfevents.*")
    data = READER.read(path)
    assert data.warnings == []
    assert data.facts["framework"][0] == "verl"
    assert data.frame["key"].nunique() == 63
    score = series(data, "critic/score/mean")
    assert score["step"].tolist() == list(range(1, 106))
    val = series(data, "val-core/openai/gsm8k/reward/mean@1")
    assert val["step"].tolist() == list(range(0, 106, 5))
    assert len(val) == 22


@pytest.mark.parametrize("run", VERL_RUNS)
def test_real_verl_runs_match_event_accumulator(run: str, real_runs: Path) -> None:
    (path,) = (real_runs / run).glob("events.out.tfevents.*")
    frame = READER.read(path).frame
    accumulator = EventAccumulator(str(path), size_guidance={"scalars": 0})
    accumulator.Reload()
    tags = accumulator.Tags()["scalars"]
    assert set(frame["key"].unique()) == set(tags)
    for tag in tags:
        expected = accumulator.Scalars(tag)
        got = frame[frame["key"] == tag]
        assert got["step"].tolist() == [e.step for e in expected]
        assert got["value"].tolist() == [e.value for e in expected]
        assert got["wall_time"].tolist() == [e.wall_time for e in expected]
