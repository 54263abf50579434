"""Run folders as people leave them: several files, some unreadable, some copies of others."""

from __future__ import annotations

import json

import pytest

from assessor import load_run
from assessor.cli import main
from assessor.errors import NoMetricsError
from assessor.ingest.aliases import resolve


def test_an_unreadable_log_beside_a_good_csv(tmp_path, capsys):
    (tmp_path / "train.log").write_text(
        "Loading model...\nhistogram:  {'correct': 17, 'wrong': 239}\nPercentage of correct examples:  0.066\n",
        encoding="utf-8",
    )
    (tmp_path / "metrics.csv").write_text("step,reward,kl\n1,0.1,0.0\n2,0.2,0.01\n3,0.3,0.02\n", encoding="utf-8")
    assert main(["inspect", str(tmp_path), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["last_step"] == 3
    assert [(s["path"], s["used"]) for s in report["sources"]] == [("metrics.csv", True)]
    assert report["warnings"][0].startswith("read 1 of 2 files: used metrics.csv; not used: train.log (no training")
    assert any(i.startswith("train.log: no training metrics found") for i in report["ignored"])
    assert main(["inspect", str(tmp_path)]) == 0
    text = capsys.readouterr().out
    assert "Skipped (no metrics read from them):" in text and "train.log: no training metrics found" in text


def test_when_no_file_yields_metrics_the_error_lists_every_file_tried(tmp_path, capsys):
    (tmp_path / "train.log").write_text("Loading model...\nDone.\n", encoding="utf-8")
    (tmp_path / "notes.csv").write_text("question,answer\n\"" + "x" * 80 + "\",y\n", encoding="utf-8")
    (tmp_path / "summary.json").write_text(json.dumps({"best": 0.5}, indent=2), encoding="utf-8")
    with pytest.raises(NoMetricsError) as error:
        load_run(tmp_path)
    message = str(error.value)
    assert "no metrics in any of the 3 files tried" in message
    for name in ("train.log: no training metrics", "notes.csv: no step column", "summary.json: holds single values"):
        assert name in message
    assert main(["inspect", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("Error: ") and err.count("\n") == 1


def test_a_csv_retyped_from_the_log_is_not_counted_twice(tmp_path):
    lines = [f"step:{s} | policy_loss=0.00{s} | mean_reward=0.{s}{s} | kl_divergence=0.0{s}" for s in range(1, 8)]
    (tmp_path / "training.log").write_text("\n".join(lines) + "\n", encoding="utf-8")
    csv = ["step,policy_loss,mean_reward,kl_divergence,step_time_seconds"]
    csv += [f"{s},0.00{s},0.{s}{s},0.0{s},{50 + s}" for s in range(1, 8)]
    (tmp_path / "metrics.csv").write_text("\n".join(csv) + "\n", encoding="utf-8")
    run = load_run(tmp_path)
    reward = run.metrics[run.metrics["metric"] == "reward_mean"]
    assert reward["step"].tolist() == list(range(1, 8))  # one value per step, from one file
    assert run.has("time_step_s")  # the metric only the CSV has is merged in
    assert all(s.used for s in run.sources) or any(not s.used and s.reason for s in run.sources)


def test_a_copy_at_other_steps_is_set_aside_for_the_file_with_real_steps(tmp_path):
    # The log states its steps; the CSV beside it was re-typed without them (steps are its row numbers).
    lines = [f"step {s * 10}: loss={s / 100}, reward={s / 10}, entropy=0.{9 - s}" for s in range(1, 8)]
    (tmp_path / "train.log").write_text("\n".join(lines) + "\n", encoding="utf-8")
    csv = ["loss,reward,entropy,length"] + [f"{s / 100},{s / 10},0.{9 - s},{100 + s}" for s in range(1, 8)]
    (tmp_path / "retyped.csv").write_text("\n".join(csv) + "\n", encoding="utf-8")
    run = load_run(tmp_path)
    assert run.series("reward_mean").index.tolist() == list(range(10, 80, 10))
    assert not run.has("length")  # on the CSV's own (wrong) axis: not mixed in
    (unused,) = [s for s in run.sources if not s.used]
    assert unused.path == "retyped.csv" and "same values as train.log but at other steps" in (unused.reason or "")


@pytest.mark.parametrize(
    ("key", "metric"),
    [
        ("Training Loss", "loss"), ("Validation Loss", "loss"), ("rewards / margins", "pref_margin"),
        ("Rewards / Accuracies", "pref_accuracy"), ("Rewards / Chosen", "pref_reward_chosen"),
        ("Rewards / Rejected", "pref_reward_rejected"), ("Logps / Chosen", "logps_chosen"),
        ("Logps / Rejected", "logps_rejected"), ("Avg Len", "response_length_mean"), ("KL_ref", "kl"),
        ("Actor Loss", "pg_loss"), ("Adv Std", "advantage_std"), ("Avg Response Len", "response_length_mean"),
        ("Reward Std", "reward_std"), ("Grad Norm", "grad_norm"), ("Learning Rate", "lr"),
    ],
)
def test_names_as_tables_and_loggers_print_them(key, metric):
    resolved = resolve(key)
    assert resolved is not None and resolved.metric == metric


def test_a_notebook_dpo_table_reaches_the_dpo_names(tmp_path):
    lines = ["Step\tTraining Loss\tValidation Loss\tRewards / chosen\tRewards / rejected\tRewards / accuracies\t"
             "Rewards / margins\tLogps / rejected\tLogps / chosen"]
    lines += [
        f"{s * 10}\t0.6{s}\tNo log\t0.0{s}\t-0.0{s}\t0.{5 + s}\t0.0{2 * s}\t-120.{s}\t-80.{s}" for s in range(1, 5)
    ]
    (tmp_path / "dpo_output.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    run = load_run(tmp_path)
    assert run.facts.algorithm == "dpo"
    for metric in ("loss", "pref_margin", "pref_accuracy", "pref_reward_chosen", "logps_chosen", "logps_rejected"):
        assert run.series(metric).index.tolist() == [10, 20, 30, 40], metric
    assert not run.has("loss", "eval")  # "No log" on every row


def test_a_rotated_log_from_an_earlier_launch_is_read_with_the_current_one(tmp_path):
    """holdout31: a TRL run relaunched from checkpoint-700 wrote `train.log`; its first launch is `train.log.1`
    (Python's RotatingFileHandler naming). Only `train.log` was found, so the run seemed to start at step 710."""
    from assessor import load_run

    def dicts(first: int, last: int) -> str:  # HF's console: the step only in the trainer's tqdm bar
        out = []
        for step in range(first - 9, last + 1):
            out.append(f"\r {step * 100 // 3000}%|#         | {step}/3000 [00:10<01:00,  1.00it/s]")
            if step % 10 == 0:
                out.append(f"\n{{'loss': 0.01, 'reward': {0.3 + step / 5000:.4f}, 'epoch': {step / 1000}}}\n")
        return "".join(out)

    (tmp_path / "train.log.1").write_text(dicts(10, 760), encoding="utf-8")
    (tmp_path / "train.log").write_text(dicts(710, 1400), encoding="utf-8")
    run = load_run(tmp_path)
    steps = run.series("reward_mean").index
    assert steps[0] == 10 and steps[-1] == 1400
    assert {s.path for s in run.sources} == {"train.log", "train.log.1"}
