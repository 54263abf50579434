from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from assessor.ingest.base import RecordBuilder, SourceData, parse_number
from assessor.ingest.normalize import merge_pieces, normalize_source, superseded_mask
from assessor.ingest.trl_state import READER as TRL_STATE


def source(rows: list[tuple[int, str, object]], fmt: str = "jsonl", name: str = "log.jsonl") -> SourceData:
    builder = RecordBuilder()
    for step, key, value in rows:
        builder.add(step, key, value)
    return SourceData(path=Path(name), format=fmt, frame=builder.build())


def test_resume_keeps_the_newest_segment():
    steps = np.array([1, 2, 3, 4, 5, 3, 4, 5, 6])
    assert superseded_mask(steps).tolist() == [False, False, True, True, True, False, False, False, False]


def test_restart_from_scratch_drops_everything_before():
    assert superseded_mask(np.array([1, 2, 3, 1, 2])).tolist() == [True, True, True, False, False]


def test_two_resumes():
    steps = np.array([1, 2, 3, 4, 2, 3, 4, 5, 4, 5, 6])
    kept = steps[~superseded_mask(steps)]
    assert kept.tolist() == [1, 2, 3, 4, 5, 6]


@given(st.lists(st.integers(min_value=0, max_value=50), min_size=0, max_size=60))
def test_kept_steps_increase_and_every_step_keeps_its_newest_record(steps_list):
    steps = np.array(steps_list, dtype=np.int64)
    mask = superseded_mask(steps)
    kept_positions = np.flatnonzero(~mask)
    kept = steps[kept_positions]
    assert np.all(np.diff(kept) >= 0)
    # every distinct step still present, and the kept record is the last one logged
    assert set(kept.tolist()) <= set(steps.tolist())
    for step in set(kept.tolist()):
        assert kept_positions[kept == step][-1] == np.flatnonzero(steps == step)[-1]


def test_normalize_counts_resume_duplicates_nan_and_maps_names():
    rows = [(1, "reward", 0.1), (2, "reward", 0.2), (3, "reward", None), (2, "reward", 0.25), (3, "reward", 0.3),
            (1, "kl", float("inf")), (2, "kl", 0.01), (3, "kl", 0.02), (3, "kl", 0.03)]
    out = normalize_source(source(rows), "log.jsonl")
    pieces = {p.metric: p for p in out.pieces}
    assert pieces["reward_mean"].steps.tolist() == [1, 2, 3]
    assert pieces["reward_mean"].values.tolist() == [0.1, 0.25, 0.3]  # newest record of step 2 and 3
    assert pieces["kl"].steps.tolist() == [2, 3]
    assert pieces["kl"].values.tolist() == [0.01, 0.03]  # logged twice at step 3: last one kept
    nonfinite = {(str(r.metric), int(r.step), str(r.kind)) for f in out.nonfinite for r in f.itertuples()}
    assert nonfinite == {("kl", 1, "inf")}  # the null at step 3 was superseded by the resumed run
    assert any("resumed or restarted" in w and "dropped 2" in w for w in out.warnings)
    assert any("logged twice" in w for w in out.warnings)


def test_two_keys_with_one_meaning_keep_the_better_covered_one():
    rows = [(s, "rollout/reward_mean", 0.5) for s in range(1, 4)] + [(s, "reward", 0.4) for s in range(1, 10)]
    out = normalize_source(source(rows), "x")
    names = {(p.metric, p.source_key) for p in out.pieces}
    assert names == {("reward_mean", "reward"), ("rollout/reward_mean", "rollout/reward_mean")}


def test_merge_prefers_the_source_that_reaches_furthest():
    state = normalize_source(source([(s, "reward", 1.0) for s in range(10, 510, 10)], "trl_state", "a.json"), "a.json")
    events = normalize_source(source([(s, "train/reward", 2.0) for s in range(10, 530, 10)], "tensorboard", "b"), "b")
    metrics, notes = merge_pieces([state, events])
    assert set(metrics["source"]) == {"b"}
    assert metrics["step"].max() == 520
    assert len(notes) == 1 and "a.json (to step 500)" in notes[0]


def test_merge_tie_goes_to_the_more_precise_format():
    state = normalize_source(source([(s, "reward", 1.0) for s in range(1, 6)], "trl_state", "a.json"), "a.json")
    events = normalize_source(source([(s, "train/reward", 2.0) for s in range(1, 6)], "tensorboard", "b"), "b")
    metrics, _ = merge_pieces([events, state])
    assert set(metrics["source"]) == {"a.json"}


def test_percent_eval_is_converted_once():
    rows = [(1, "eval_acc", "15.6"), (50, "eval_acc", "46.2")]
    out = normalize_source(source(rows), "x.csv")
    (piece,) = out.pieces
    assert piece.values.tolist() == [0.156, 0.462]
    assert piece.split == "eval"
    assert any("percent" in n for n in out.notes)


def test_parse_number_handles_framework_spellings():
    assert parse_number("np.float64(0.5)") == 0.5
    assert parse_number("np.int64(3)") == 3.0
    assert parse_number("95 %") == 95.0
    assert np.isnan(parse_number("nan"))  # type: ignore[arg-type]
    assert np.isnan(parse_number(None))  # type: ignore[arg-type]
    assert parse_number("Infinity") == float("inf")
    assert parse_number("tensor(0.25, device='cuda:0')") == 0.25
    assert parse_number("text") is None


def test_text_columns_are_dropped_not_counted_as_nan():
    builder = RecordBuilder()
    for step in (1, 2):
        builder.add_row(step, {"reward": 0.5, "model": "qwen", "mixed": "x" if step == 1 else 0.3})
    frame = builder.build()
    assert set(frame["key"].astype(str)) == {"reward", "mixed"}
    assert builder.non_numeric == {"mixed": 1}


# --- repeats of a step: HF's eval rows repeat `epoch`; a resumed run's rewrite does not


def trainer_state(tmp_path: Path, log_history: list[dict[str, object]]) -> SourceData:
    path = tmp_path / "trainer_state.json"
    path.write_text(json.dumps({"global_step": 100, "max_steps": 200, "log_history": log_history}), encoding="utf-8")
    return TRL_STATE.read(path)


def test_eval_rows_repeating_epoch_and_step_are_not_a_duplicate(tmp_path):
    history: list[dict[str, object]] = []
    for step in (50, 100):
        history.append({"loss": 0.01, "reward": step / 100, "learning_rate": 1e-6, "epoch": step / 80, "step": step})
        history.append({"eval_loss": 0.2, "eval_reward": 0.4, "eval_runtime": 3.1, "epoch": step / 80, "step": step})
    out = normalize_source(trainer_state(tmp_path, history), "trainer_state.json")
    pieces = {(p.metric, p.split): p for p in out.pieces}
    assert pieces[("epoch", "train")].steps.tolist() == [50, 100]  # one epoch value per step
    assert pieces[("reward_mean", "eval")].values.tolist() == [0.4, 0.4]
    assert out.warnings == []


def test_a_step_written_twice_with_other_values_still_warns(tmp_path):
    # A resumed run wrote step 100 again (same epoch, other values): the two that differ are reported.
    history: list[dict[str, object]] = [
        {"loss": 0.01, "reward": 0.5, "epoch": 1.25, "step": 100},
        {"loss": 0.02, "reward": 0.6, "epoch": 1.25, "step": 100},
        {"eval_loss": 0.2, "epoch": 1.25, "step": 100},
    ]
    out = normalize_source(trainer_state(tmp_path, history), "trainer_state.json")
    assert out.warnings == ["trainer_state.json: 2 values logged twice for the same step; kept the last"]
    assert {p.metric: p.values.tolist() for p in out.pieces if p.split == "train"}["reward_mean"] == [0.6]


def test_identical_nan_repeats_are_not_a_duplicate():
    out = normalize_source(source([(3, "train/epoch", 0.5), (3, "train/epoch", 0.5), (4, "kl", None),
                                   (4, "kl", None)]), "x")
    assert not any("twice" in w for w in out.warnings)


def test_nemo_dpo_train_accuracy_is_the_preference_accuracy_not_a_held_out_curve():
    # NeMo-RL's DPO logs the batch's preference accuracy as `train/accuracy`, every step; its held-out accuracy is
    # `validation/accuracy`. Read as a held-out number, the per-step one would be an "evaluation" every step.
    rows = ([(s, "train/accuracy", 0.5 + s / 100) for s in range(1, 21)]
            + [(s, "train/rewards_chosen_mean", 0.1 * s) for s in range(1, 21)]
            + [(s, "validation/accuracy", 0.6) for s in (10, 20)])
    table, notes = merge_pieces([normalize_source(source(rows), "exp_001/tensorboard")])
    counts = table.groupby(["metric", "split"], observed=True).size().to_dict()
    assert counts[("pref_accuracy", "train")] == 20
    assert counts[("accuracy", "eval")] == 2
    assert ("accuracy", "train") not in counts
    assert any("preference accuracy" in note for note in notes)


def test_a_train_accuracy_without_preference_metrics_stays_a_training_curve():
    rows = [(s, "train/accuracy", 0.5) for s in range(1, 6)] + [(s, "eval/accuracy", 0.4) for s in (2, 4)]
    table, _ = merge_pieces([normalize_source(source(rows), "log.jsonl")])
    counts = table.groupby(["metric", "split"], observed=True).size().to_dict()
    assert counts[("accuracy", "train")] == 5 and counts[("accuracy", "eval")] == 2
