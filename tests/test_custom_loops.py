"""Logs of hand-written training loops: their own step counter, checkpoint names, metric names and config keys."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assessor import load_run
from assessor.ingest.aliases import resolve
from assessor.ingest.discover import discover
from assessor.ingest.facts import facts_from_flat_config


def write_csv(path: Path, header: str, rows: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join([header, *rows]) + "\n", encoding="utf-8")


def write_jsonl(path: Path, rows: list[dict[str, object]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")


def source_keys(run: object) -> set[str]:
    return set(run.metrics["source_key"].astype(str))  # type: ignore[attr-defined]


# ------------------------------------------------------------------------------------------- the step counter
@pytest.mark.parametrize(
    "column", ["update", "updates", "gstep", "n_updates", "num_updates", "global_steps", "steps", "batch", "env_steps"],
)
def test_a_counter_named_its_own_way_is_the_step(tmp_path, column):
    rows = [f"{s},{s / 100},{1 - s / 1000}" for s in (10, 20, 30)]
    write_csv(tmp_path / "metrics.csv", f"{column},reward,loss", rows)
    run = load_run(tmp_path)
    assert run.series("reward_mean").index.tolist() == [10, 20, 30]
    assert column not in source_keys(run)  # the counter is the axis, not a curve
    assert not any("no step column" in w for w in run.warnings)
    notes = [n for s in run.sources for n in s.notes]
    assert any(f"read `{column}` as the step" in n for n in notes)


def test_a_jsonl_counter_with_eval_rows_sharing_its_steps(tmp_path):
    rows: list[dict[str, object]] = []
    for step in range(10, 110, 10):
        rows.append({"gstep": step, "rew/total": step / 100, "stats/kl": step / 1e4})
        if step % 50 == 0:
            rows.append({"gstep": step, "eval/aime_acc": step / 200})
    write_jsonl(tmp_path / "out" / "log.jsonl", rows)
    run = load_run(tmp_path)
    assert run.series("kl").index.tolist() == list(range(10, 110, 10))
    assert run.series("aime_acc", "eval").index.tolist() == [50, 100]
    assert "gstep" not in source_keys(run)


@pytest.mark.parametrize(
    ("column", "values"),
    [
        ("update", [10, 20, 30, 20, 30, 40]),  # a resume: it goes back
        ("batch", [0, 1, 2, 0, 1, 2]),  # an index within each epoch
        ("batch", [64, 64, 64, 64, 64, 64]),  # a batch size
        ("update", [1, 1, 2, 2, 3, 3]),  # one metric logged twice at each of its values
        ("update", [1.5, 2.5, 3.5, 4.5, 5.5, 6.5]),  # not whole numbers
    ],
)
def test_a_counter_that_does_not_behave_like_a_step_is_never_taken(tmp_path, column, values):
    write_csv(tmp_path / "metrics.csv", f"{column},reward", [f"{v},{i / 10}" for i, v in enumerate(values)])
    run = load_run(tmp_path)
    assert run.series("reward_mean").index.tolist() == [1, 2, 3, 4, 5, 6]  # row order, said
    assert any("metrics.csv: no step column" in w for w in run.warnings)
    assert column in source_keys(run)


def test_a_step_column_named_like_one_beats_a_counter(tmp_path):
    write_csv(tmp_path / "metrics.csv", "update,step,reward", [f"{u},{s},0.{s}" for u, s in ((7, 1), (8, 2), (9, 3))])
    run = load_run(tmp_path)
    assert run.series("reward_mean").index.tolist() == [1, 2, 3]
    assert run.series("update").tolist() == [7, 8, 9]


def test_a_row_without_the_counter_is_skipped_and_said(tmp_path):
    rows = [{"update": s, "reward": s / 100} for s in range(10, 410, 10)] + [{"reward": 0.9}]  # a summary row
    write_jsonl(tmp_path / "log.jsonl", rows)
    run = load_run(tmp_path)
    assert run.series("reward_mean").index.tolist() == list(range(10, 410, 10))
    assert any("1 rows without a step (update) were skipped" in w for w in run.warnings)


def test_a_large_csv_read_by_columns_finds_the_counter_too(tmp_path):
    rows = [f"{s},{s % 7 / 10:.6f},{s % 11 / 100:.6f},{s % 13:.6f}" for s in range(1, 40_001)]
    write_csv(tmp_path / "metrics.csv", "update,avg_reward,kl_div,len_tok", rows)
    assert (tmp_path / "metrics.csv").stat().st_size > 1 << 20  # the polars path
    run = load_run(tmp_path)
    assert run.series("reward_mean").index[-1] == 40_000
    assert "update" not in source_keys(run)


def test_a_data_table_with_a_batch_column_is_still_not_metrics(tmp_path):
    question = "Natalia sold clips to 48 of her friends in April, and then she sold half as many in May."
    write_csv(tmp_path / "samples.csv", "batch,question,score", [f'{i},"{question}",1' for i in range(1, 4)])
    write_csv(tmp_path / "log.csv", "step,reward", ["1,0.5", "2,0.6"])
    run = load_run(tmp_path)
    assert {s.path for s in run.sources} == {"log.csv"}
    assert any(i.startswith("samples.csv: no step column and long text") for i in run.ignored)


def test_counter_names():
    from assessor.ingest.tables import counter_rank

    assert [counter_rank(n) for n in ("gstep", "update", "n_updates", "train/iters", "batch_idx", "timesteps")] == \
        [0, 1, 1, 2, 3, 4]
    for name in ("steps_per_sec", "step_time", "it/s", "batch_size", "len_tok", "epoch", "tokens", "update_ratio"):
        assert counter_rank(name) is None, name


# ------------------------------------------------------------------------------------------------ checkpoints
def test_numbered_checkpoints_in_a_checkpoint_folder(tmp_path):
    for step in (300, 600):
        (tmp_path / "ckpt").mkdir(exist_ok=True)
        (tmp_path / "ckpt" / f"update_{step:05d}.pt").write_bytes(b"\0" * 8)
        (tmp_path / "checkpoints" / f"gstep_{step:06d}").mkdir(parents=True)
    (tmp_path / "saved_models").mkdir()
    (tmp_path / "saved_models" / "policy-900.safetensors").write_bytes(b"\0" * 8)
    (tmp_path / "ckpts").mkdir()
    (tmp_path / "ckpts" / "step1200").mkdir()
    found = discover(tmp_path)
    assert [(c.step, c.path) for c in found.checkpoints] == [
        (300, "checkpoints/gstep_000300"), (300, "ckpt/update_00300.pt"), (600, "checkpoints/gstep_000600"),
        (600, "ckpt/update_00600.pt"), (900, "saved_models/policy-900.safetensors"), (1200, "ckpts/step1200"),
    ]


def test_numbered_things_that_are_not_checkpoints(tmp_path):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "update_00300.pt").write_bytes(b"\0" * 8)  # not in a checkpoint folder
    ckpt = tmp_path / "ckpt"
    for name in ("seed_1", "rank_0", "epoch_3", "run-2"):
        (ckpt / name).mkdir(parents=True)
    (ckpt / "epoch_4.pt").write_bytes(b"\0" * 8)  # an epoch number is not a step
    (ckpt / "metrics_0100.jsonl").write_text('{"step": 1, "reward": 0.5}\n', encoding="utf-8")  # a log, not weights
    (ckpt / "stage_2").mkdir()
    (ckpt / "stage_2" / "metrics.csv").write_text("step,reward\n1,0.5\n", encoding="utf-8")  # a folder of logs
    (ckpt / "model-00001-of-00002.safetensors").write_bytes(b"\0" * 8)  # a shard
    found = discover(tmp_path)
    assert found.checkpoints == []
    assert sorted(found.rel(p) for p in found.files) == ["ckpt/metrics_0100.jsonl", "ckpt/stage_2/metrics.csv"]


# ------------------------------------------------------------------------------------------------------ names
@pytest.mark.parametrize(
    ("key", "metric"),
    [
        ("avg_return", "reward_mean"), ("mean_return", "reward_mean"), ("return_mean", "reward_mean"),
        ("episode_return", "reward_mean"), ("rew/total", "reward_mean"), ("reward/total", "reward_mean"),
        ("total_reward", "reward_mean"), ("rew/correct", "reward_component/correct_mean"),
        ("rew/format", "reward_component/format_mean"), ("kl_init", "kl"), ("kl_to_init", "kl"), ("kl_ref", "kl"),
        ("kl_from_sft", "kl"),
    ],
)
def test_custom_loop_names_are_guessed(key, metric):
    resolved = resolve(key)
    assert resolved is not None and (resolved.metric, resolved.split, resolved.own_name) == (metric, "train", key)


@pytest.mark.parametrize("key", ["returns_mean", "avg_returns", "return_std", "kl_init_coef", "init_kl_coef"])
def test_value_targets_and_coefficients_stay_themselves(key):
    resolved = resolve(key)
    assert resolved is not None and resolved.metric not in ("reward_mean", "kl")


def test_a_return_is_the_reward_only_when_nothing_surer_logs_it(tmp_path):
    write_csv(tmp_path / "a" / "metrics.csv", "step,avg_return,kl_init", ["1,0.1,0.0", "2,0.2,0.1"])
    write_csv(tmp_path / "b" / "metrics.csv", "step,avg_return,avg_reward", ["1,5.0,0.1", "2,6.0,0.2"])
    write_csv(tmp_path / "c" / "metrics.csv", "step,total_reward,reward", ["1,5.0,0.1", "2,6.0,0.2"])
    alone, beside_a_guess, beside_a_listed_key = (load_run(tmp_path / n) for n in "abc")
    assert alone.series("reward_mean").tolist() == [0.1, 0.2]
    assert alone.series("kl").tolist() == [0.0, 0.1]
    assert any("`avg_return` to reward_mean" in w for w in alone.warnings)
    assert beside_a_guess.series("reward_mean").tolist() == [0.1, 0.2]  # `avg_reward` is the surer name
    assert beside_a_guess.series("avg_return").tolist() == [5.0, 6.0]
    assert beside_a_listed_key.series("reward_mean").tolist() == [0.1, 0.2]
    assert beside_a_listed_key.series("total_reward").tolist() == [5.0, 6.0]


# ------------------------------------------------------------------------------------------- held-out columns
def test_sparse_columns_named_held_out_are_eval_metrics(tmp_path):
    rows = [f"{s},0.{s},0.9,{'0.5' if s % 5 == 0 else ''},{'0.7' if s % 5 == 0 else ''}" for s in range(1, 21)]
    write_csv(tmp_path / "metrics.csv", "step,reward,valid_frac,heldout_pref,val_score", rows)
    run = load_run(tmp_path)
    assert run.series("heldout_pref", "eval").index.tolist() == [5, 10, 15, 20]
    assert run.series("val_score", "eval").index.tolist() == [5, 10, 15, 20]
    assert run.series("heldout_pref").empty  # not a training curve
    assert len(run.series("valid_frac")) == 20  # dense: a training metric, whatever its name


def test_a_dense_held_out_name_and_a_sparse_training_name_keep_the_train_split(tmp_path):
    rows = [f"{s},0.{s},0.{s},{'3' if s % 5 == 0 else ''}" for s in range(1, 21)]
    write_csv(tmp_path / "metrics.csv", "step,reward,test_coverage,grad_spikes", rows)
    run = load_run(tmp_path)
    assert len(run.series("test_coverage")) == 20
    assert run.series("grad_spikes").index.tolist() == [5, 10, 15, 20]


# --------------------------------------------------------------------------------------------- planned steps
def test_planned_steps_and_save_interval_from_a_custom_loops_config(tmp_path):
    write_csv(tmp_path / "a" / "metrics.csv", "update,reward", ["10,0.1", "20,0.2"])
    (tmp_path / "a" / "run.json").write_text(json.dumps({"updates": 2500, "save_every": 300, "algo": "x"}))
    write_jsonl(tmp_path / "b" / "out" / "log.jsonl", [{"gstep": 10, "reward": 0.1}, {"gstep": 20, "reward": 0.2}])
    (tmp_path / "b" / "run_config.json").write_text(json.dumps({"max_gsteps": 3000, "save_every": 200}))
    a, b = load_run(tmp_path / "a"), load_run(tmp_path / "b")
    assert (a.facts.planned_total_steps, a.facts.save_steps) == (2500, 300)
    assert a.facts.provenance["planned_total_steps"] == "run.json: updates"
    assert (b.facts.planned_total_steps, b.facts.save_steps) == (3000, 200)


@pytest.mark.parametrize(
    ("config", "planned"),
    [
        ({"total_updates": 900}, 900), ({"max_iters": 5000}, 5000), ({"num_training_steps": 70}, 70),
        ({"ppo": {"updates": 4}}, None),  # nested: an inner count, not the run's length
        ({"max_steps": 100, "updates": 4}, 100),  # a standard name first
    ],
)
def test_planned_steps_config_keys(config, planned):
    from assessor.ingest.facts import flatten

    found = facts_from_flat_config(flatten(config), "cfg.json")
    assert found.get("planned_total_steps", (None, ""))[0] == planned


def test_a_folder_holding_framework_checkpoints_under_a_checkpoint_folder_is_a_container_not_a_checkpoint(tmp_path):
    # verl: checkpoints/<project>/<experiment>/global_step_N; the project folder `search_r1` is no step-1 checkpoint.
    from assessor.ingest.discover import discover

    for step in (100, 200):
        (tmp_path / "checkpoints" / "search_r1" / "qwen2.5-3b" / f"global_step_{step}" / "actor").mkdir(parents=True)
    (tmp_path / "ckpt" / "qwen2").mkdir(parents=True)  # a name with a digit, no separator: not a step either
    steps = sorted(c.step for c in discover(tmp_path).checkpoints)
    assert steps == [100, 200]


# --- holdout18's hand-written loops and launchers


def test_a_quality_column_logged_on_few_rows_of_a_training_csv_is_a_held_out_evaluation(tmp_path):
    """A custom PPO loop writes its judged win rate into the training CSV every 100 steps (blank elsewhere)."""
    rows = [f"{s},{0.6 + 0.2 * s / 600:.4f},{0.01 * s:.4f},{'%.3f' % (0.5 + s / 6000) if s % 100 == 0 else ''}"
            for s in range(1, 601)]
    write_csv(tmp_path / "ppo_log.csv", "step,rm_score,kl_ref,win_rate_vs_ref", rows)
    run = load_run(tmp_path)
    assert "win_rate_vs_ref" in run.metric_names("eval") and "win_rate_vs_ref" not in run.metric_names("train")
    assert "reward_mean" in run.metric_names("train")  # rm_score: the reward model's score is the reward
    assert any("read as a held-out evaluation" in note for source in run.sources for note in source.notes)


def test_a_dense_quality_column_stays_a_training_curve(tmp_path):
    rows = [f"{s},{0.6 + 0.2 * s / 600:.4f},{0.5 + s / 6000:.4f}" for s in range(1, 601)]
    write_csv(tmp_path / "log.csv", "step,reward,train_acc", rows)
    run = load_run(tmp_path)
    assert "train_acc" not in run.metric_names("eval")


def test_a_launcher_log_that_ends_with_training_finished_marks_the_run_finished(tmp_path):
    """OpenRLHF metrics in a JSONL beside a console log with no metric lines that ends 'Training finished.'"""
    write_jsonl(tmp_path / "metrics.jsonl",
                [{"global_step": s, "train/reward": 0.4 + s / 1000} for s in range(5, 505, 5)])
    (tmp_path / "train.log").write_text(
        "Total training steps: 500\nsaving checkpoint\nTraining finished. Total time: 3:07:45\n")
    assert load_run(tmp_path).facts.training_ended
    # an end line followed by more training is an earlier run's, far from the log's end
    (tmp_path / "train.log").write_text("Training finished.\n" + "".join(f"step {s} running\n" for s in range(80)))
    assert not load_run(tmp_path).facts.training_ended


def test_a_held_out_key_that_loses_its_canonical_name_keeps_its_own_without_a_second_split_prefix(tmp_path):
    """OpenRLHF's eval/eval_<dataset>_pass1 for two datasets: one is the held-out pass rate, the other its own."""
    rows: list[dict[str, object]] = [{"global_step": s, "train/reward": 0.4 + s / 1000} for s in range(5, 505, 5)]
    rows += [{"global_step": s, "eval/eval_humaneval_pass1": 0.5, "eval/eval_mbpp_pass1": 0.55}
             for s in range(100, 501, 100)]
    write_jsonl(tmp_path / "metrics.jsonl", rows)
    names = load_run(tmp_path).metric_names("eval")
    assert "mbpp_pass1" in names or "humaneval_pass1" in names
    assert not any(n.startswith(("eval/", "eval_")) for n in names), names


def test_a_total_and_its_terms_under_one_short_prefix_are_the_reward_and_its_components(tmp_path):
    """holdout19: a hand-written loop logged r_total, r_correct, r_think_tags and r_lang_consistency; no reward was
    read at all, so a total carried by its format terms while the task term stayed flat was told to continue."""
    rows = [{"step": s, "r_total": 0.8 + 0.004 * s, "r_correct": 0.27, "r_think_tags": 0.3 + 0.006 * s,
             "r_squared": 0.5} for s in range(1, 101)]
    write_jsonl(tmp_path / "family" / "metrics.jsonl", rows)
    names = set(load_run(tmp_path / "family").metric_names())
    assert {"reward_mean", "reward_component/correct_mean", "reward_component/think_tags_mean"} <= names
    assert "reward_component/squared_mean" in names  # a term of the family too: one prefix, one loop
    alone = [{"step": s, "r_total": 0.5 + 0.001 * s} for s in range(1, 101)]
    write_jsonl(tmp_path / "alone" / "metrics.jsonl", alone)
    assert "reward_mean" not in set(load_run(tmp_path / "alone").metric_names())  # one letter alone says nothing


@pytest.mark.parametrize("key", ["success_rate", "train/success", "solve_rate"])
def test_a_training_success_rate_is_the_reward_when_no_reward_is_logged(tmp_path, key):
    rows = [{"step": s, key: min(1.0, 0.1 + 0.005 * s), "kl": 0.001 * s} for s in range(1, 101)]
    write_jsonl(tmp_path / "metrics.jsonl", rows)
    run = load_run(tmp_path)
    assert "reward_mean" in set(run.metric_names())
    assert any("as reward_mean" in w for w in run.warnings)


def test_a_training_success_rate_beside_a_reward_stays_what_it_is(tmp_path):
    rows = [{"step": s, "reward": 0.2 + 0.003 * s, "success_rate": 0.1 + 0.005 * s} for s in range(1, 101)]
    write_jsonl(tmp_path / "metrics.jsonl", rows)
    run = load_run(tmp_path)
    assert run.series("reward_mean").iloc[0] == pytest.approx(0.203)


@pytest.mark.parametrize(("key", "metric"), [("reward_correctness", "reward_component/correctness_mean"),
                                             ("rewards_format", "reward_component/format_mean"),
                                             ("reward_scale", "reward_scale"), ("reward_chosen", "reward_chosen"),
                                             ("reward_extra_info/all_tests_pass/mean",
                                              "reward_component/all_tests_pass_mean"),
                                             ("reward_breakdown/format", "reward_component/format_mean"),
                                             # holdout22: a custom DPO loop's `rejected_reward` was read as a reward
                                             # function named "rejected" ("it is the total", said the sheet)
                                             ("rejected_reward", "pref_reward_rejected"),
                                             ("train/pref_acc", "pref_accuracy"), ("chosen_logp", "logps_chosen"),
                                             ("mean_rejected_reward", "mean_rejected_reward")])
def test_a_reward_function_named_after_the_word_reward(key, metric):
    assert resolve(key).metric == metric


@pytest.mark.parametrize("categorical", [True, False])
def test_a_metrics_source_keys_are_read_from_its_own_rows_whatever_the_column_type(tmp_path, categorical):
    """`Run.source_keys` reads only the metric's rows (the whole column as objects cost 0.9 s and 800 MB on a
    300,000-step run: benchmarks/bench_assess.py); a table built elsewhere with plain string columns works too."""
    from dataclasses import replace

    write_jsonl(tmp_path / "log.jsonl", [{"step": s, "objective/kl": 0.1 * s, "reward": s / 10} for s in (1, 2, 3)])
    run = load_run(tmp_path)
    if not categorical:
        run = replace(run, metrics=run.metrics.astype({"source_key": str, "metric": str, "split": str}))
    assert run.source_keys("kl") == {"objective/kl"}
    assert run.source_keys("reward_mean") == {"reward"}
    assert run.source_keys("absent") == set()
