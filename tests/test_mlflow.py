"""MLflow stores, read from fixtures written by the real `mlflow` package (`tests/fixtures/mlflow/make_fixtures.py`).

The suite does not need mlflow: the stores are committed (the SQLite one gzipped).
"""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest

from assessor import NoMetricsError, load_run
from assessor.cli import main
from assessor.ingest.mlflow import RUN_VARIABLE

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "mlflow"


def copy_store(name: str, tmp_path: Path) -> Path:
    """A writable copy of one fixture folder (the output dir holding `mlruns/`)."""
    target = tmp_path / name
    shutil.copytree(FIXTURES / name, target)
    return target


def run_folder(root: Path, run_name: str) -> Path:
    """The run folder whose `mlflow.runName` tag is `run_name` (run ids are random per regeneration)."""
    for tag in sorted(root.glob("mlruns/*/*/tags/mlflow.runName")):
        if tag.read_text(encoding="utf-8").strip() == run_name:
            return tag.parent.parent
    raise AssertionError(f"no run named {run_name} under {root}")


def sql_store(tmp_path: Path) -> Path:
    db = tmp_path / "out" / "mlflow.db"
    db.parent.mkdir()
    db.write_bytes(gzip.decompress((FIXTURES / "sql" / "mlflow.db.gz").read_bytes()))
    return db


def test_hf_file_store_newest_run_chosen_with_a_warning_naming_the_other(tmp_path):
    root = copy_store("trl_file", tmp_path)
    run = load_run(root)
    assert run.series("reward_mean").to_dict() == {1: 0.1, 2: 0.2, 3: 0.3, 4: 0.4, 5: 0.55, 6: 0.65}
    assert run.series("reward_mean", "eval").to_dict() == {3: pytest.approx(0.15), 6: pytest.approx(0.3)}
    assert run.series("response_length_mean").to_dict() == {s: 100.0 + s for s in range(1, 7)}
    assert run.has("reward_zero_std_frac") and run.has("reward_component/accuracy_reward_mean") and run.has("lr")
    assert run.nonfinite_steps("kl") == [4]
    assert run.nonfinite_steps("grad_norm") == [2]
    assert set(run.nonfinite.loc[run.nonfinite["metric"] == "grad_norm", "kind"]) == {"inf"}
    assert [(s.path, s.format) for s in run.sources] == [("mlruns", "mlflow")]  # one source, not one per metric file
    assert any("'grpo-new'" in n and "FINISHED" in n for n in run.sources[0].notes)
    old = run_folder(root, "grpo-old").relative_to(root).as_posix()
    [several] = [w for w in run.warnings if "MLflow runs" in w]
    assert "holds 2 MLflow runs" in several and "'grpo-new'" in several  # the deleted experiment is not counted
    assert "'grpo-old'" in several and old in several and "pass that run's folder" in several
    assert any("steps go backwards" in w for w in run.warnings)  # steps 5-6 logged again: normalize keeps the last
    # the artifact copy of a trainer_state.json (global_step 99) is not a source
    assert run.last_step == 6 and all("artifacts" not in s.path for s in run.sources)
    facts = run.facts
    assert (facts.framework, facts.algorithm, facts.beta, facts.num_generations) == ("trl", "grpo", 0.04, 8)
    assert (facts.max_completion_length, facts.planned_total_steps, facts.learning_rate) == (256, 6, 1e-06)
    assert facts.model == "Qwen/Qwen2.5-0.5B-Instruct" and facts.vocab_size == 151936
    assert facts.provenance["beta"].startswith("mlruns/") and facts.provenance["beta"].endswith("/params: beta")


def test_a_run_folder_passed_directly_is_read_alone(tmp_path):
    root = copy_store("trl_file", tmp_path)
    run = load_run(run_folder(root, "grpo-old"))
    assert run.series("reward_mean").to_dict() == {1: 0.5, 2: 1.0, 3: 1.5}
    assert run.facts.beta == 0.1
    assert not any("MLflow runs" in w for w in run.warnings)
    assert run.sources[0].notes[0].endswith("(the only run)")


def test_the_run_variable_picks_a_run_by_name_and_a_wrong_name_says_which_exist(tmp_path, monkeypatch):
    root = copy_store("trl_file", tmp_path)
    monkeypatch.setenv(RUN_VARIABLE, "grpo-old")
    run = load_run(root)
    assert run.series("reward_mean").to_dict() == {1: 0.5, 2: 1.0, 3: 1.5}
    assert any(f"chosen by {RUN_VARIABLE}" in w and "'grpo-new'" in w for w in run.warnings)
    monkeypatch.setenv(RUN_VARIABLE, "nope")
    with pytest.raises(NoMetricsError, match=rf"{RUN_VARIABLE}='nope' names no MLflow run here.*'grpo-new'"):
        load_run(root)


def test_verl_keys_and_config_params(tmp_path):
    run = load_run(copy_store("verl_file", tmp_path))
    assert run.series("reward_mean").index.tolist() == list(range(1, 11))
    assert run.series("reward_mean", "eval").to_dict() == {0: 0.2, 5: 0.45, 10: pytest.approx(0.7)}  # mean_at_1
    assert run.series("kl")[10] == pytest.approx(0.005)  # actor/kl_loss
    assert run.has("time_generation_s") and run.has("reward_max") and run.has("pg_loss")
    assert run.nonfinite_steps("grad_norm") == [7]
    assert not any("not in our alias table" in w for w in run.warnings)
    facts = run.facts
    assert (facts.framework, facts.algorithm, facts.beta, facts.num_generations) == ("verl", "grpo", 0.001, 5)
    assert (facts.max_completion_length, facts.planned_total_steps, facts.learning_rate) == (1024, 10, 1e-06)
    assert facts.provenance["beta"].endswith("params: actor_rollout_ref/actor/kl_loss_coef")


def test_a_half_written_last_line_is_left_for_later_without_a_warning(tmp_path):
    root = copy_store("trl_file", tmp_path)
    metric = run_folder(root, "grpo-new") / "metrics" / "reward"
    with metric.open("a", encoding="utf-8") as handle:
        handle.write("1795322759999 0.7")  # step not written yet: must not be read as an old 2-field line (step 0)
    run = load_run(root)
    assert run.series("reward_mean").index.tolist() == [1, 2, 3, 4, 5, 6]
    assert not any("incomplete" in w or "metric lines" in w for w in run.warnings)


def test_malformed_and_old_two_field_lines(tmp_path):
    root = copy_store("trl_file", tmp_path)
    metrics = run_folder(root, "grpo-new") / "metrics"
    (metrics / "entropy").write_text("1795322758000 0.9 1\nnot a metric line\n1795322758001 0.8 2\n", encoding="utf-8")
    (metrics / "old_style").write_text("1795322758000 0.25\n", encoding="utf-8")
    run = load_run(root)
    assert run.series("entropy").to_dict() == {1: 0.9, 2: 0.8}
    assert run.series("old_style").to_dict() == {0: 0.25}
    assert any("1 metric lines are not `<timestamp> <value> <step>`" in w and "entropy" in w for w in run.warnings)


def test_an_empty_store_is_a_one_line_error_naming_the_path_and_the_fix(tmp_path, capsys):
    root = copy_store("empty", tmp_path)
    with pytest.raises(NoMetricsError, match=r"mlruns: the MLflow store holds no runs yet; assess again once"):
        load_run(root)
    assert main(["inspect", str(root)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "mlruns: the MLflow store holds no runs yet" in err


def test_inspect_a_folder_holding_mlruns(tmp_path, capsys):
    root = copy_store("trl_file", tmp_path)
    assert main(["inspect", str(root), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["framework"], report["algorithm"], report["last_step"]) == ("trl", "grpo", 6)
    assert [s["format"] for s in report["sources"]] == ["mlflow"]
    assert report["facts"]["num_generations"] == 8


def test_sqlite_store_is_read_without_touching_the_file(tmp_path):
    db = sql_store(tmp_path)
    # An SQL store's artifacts still go to ./mlruns: an artifact-only mlruns/ is no store and is not reported.
    artifacts = db.parent / "mlruns" / "1" / "abc" / "artifacts"
    artifacts.mkdir(parents=True)
    (artifacts / "trainer_state.json").write_text('{"log_history": [{"step": 99, "reward": 42.0}]}', encoding="utf-8")
    before = (db.read_bytes(), db.stat().st_mtime_ns)
    run = load_run(db.parent)
    assert (db.read_bytes(), db.stat().st_mtime_ns) == before
    assert sorted(p.name for p in db.parent.iterdir()) == ["mlflow.db", "mlruns"]  # no journal or WAL left behind
    assert run.series("reward_mean").to_dict() == {s: pytest.approx(s / 10) for s in range(1, 7)}
    assert run.nonfinite_steps("kl") == [4]  # is_nan = 1
    assert run.nonfinite_steps("grad_norm") == [2]  # stored as float max
    assert set(run.nonfinite.loc[run.nonfinite["metric"] == "grad_norm", "kind"]) == {"inf"}
    assert [(s.path, s.format) for s in run.sources] == [("mlflow.db", "mlflow_sql")]
    assert run.facts.beta == 0.04 and run.facts.num_generations == 8
    assert run.facts.provenance["beta"] == "mlflow.db params: beta"
    [several] = [w for w in run.warnings if "MLflow runs" in w]
    assert "'sql-new'" in several and "'sql-old'" in several and RUN_VARIABLE in several
    assert not any("mlruns" in w for w in run.warnings)


def test_sqlite_store_run_variable_and_single_file(tmp_path, monkeypatch):
    db = sql_store(tmp_path)
    monkeypatch.setenv(RUN_VARIABLE, "sql-old")
    run = load_run(db)
    assert run.series("reward_mean").to_dict() == {1: pytest.approx(0.3), 2: pytest.approx(0.6)}
    assert run.facts.beta == 0.2


def write_trackio_db(path: Path, with_run_id: bool = True) -> None:
    """A Trackio project database laid out as the reference (section 3.5) describes; written by hand, as the
    `trackio` package (which pulls in gradio) is not installed for the tests."""
    import sqlite3

    run_col = "run_id TEXT, " if with_run_id else ""
    with sqlite3.connect(path) as db:
        db.execute(f"CREATE TABLE metrics (id INTEGER PRIMARY KEY, {run_col}timestamp TEXT, run_name TEXT, "
                   "step INTEGER, metrics TEXT)")
        db.execute(f"CREATE TABLE configs (id INTEGER PRIMARY KEY, {run_col}run_name TEXT, config TEXT, "
                   "created_at TEXT)")
        db.execute("CREATE TABLE system_metrics (id INTEGER PRIMARY KEY, timestamp TEXT, run_name TEXT, metrics TEXT)")
        for run, name, start, config in (
            ("r-old", "grpo-old", "2026-01-01T10:00:00", {"beta": 0.1}),
            ("r-new", "grpo-new", "2026-01-02T10:00:00", {"beta": 0.04, "num_generations": 8, "max_steps": 3}),
        ):
            ids = (run,) if with_run_id else ()
            db.execute(f"INSERT INTO configs ({'run_id, ' if with_run_id else ''}run_name, config, created_at) "
                       f"VALUES ({'?, ' if with_run_id else ''}?, ?, ?)", (*ids, name, json.dumps(config), start))
            for step in (1, 2, 3):
                record = {"train/reward": step / 10, "train/kl": "NaN" if step == 2 else 0.01,
                          "train/grad_norm": "Infinity" if step == 3 else 0.5, "train/completions/mean_length": 100}
                if name == "grpo-old":
                    record = {"train/reward": 5.0}
                db.execute(
                    f"INSERT INTO metrics ({'run_id, ' if with_run_id else ''}timestamp, run_name, step, metrics) "
                    f"VALUES ({'?, ' if with_run_id else ''}?, ?, ?, ?)",
                    (*ids, start.replace("10:00:00", f"10:0{step}:00"), name, step, json.dumps(record)),
                )
            db.execute("INSERT INTO metrics (" + ("run_id, " if with_run_id else "") + "timestamp, run_name, step, "
                       "metrics) VALUES (" + ("?, " if with_run_id else "") + "?, ?, ?, ?)",
                       (*ids, start, name, 3, json.dumps({"eval/reward": 0.3})))
    db.close()


@pytest.mark.parametrize("with_run_id", [True, False])
def test_trackio_project_database(tmp_path, with_run_id):
    db = tmp_path / "trackio" / "my-project.db"
    db.parent.mkdir()
    write_trackio_db(db, with_run_id)
    before = (db.read_bytes(), db.stat().st_mtime_ns)
    run = load_run(db.parent)
    assert (db.read_bytes(), db.stat().st_mtime_ns) == before
    assert run.series("reward_mean").to_dict() == {1: 0.1, 2: 0.2, 3: 0.3}
    assert run.series("reward_mean", "eval").to_dict() == {3: 0.3}
    assert run.nonfinite_steps("kl") == [2] and run.nonfinite_steps("grad_norm") == [3]
    assert run.has("response_length_mean")
    assert [(s.path, s.format) for s in run.sources] == [("my-project.db", "trackio")]
    assert (run.facts.beta, run.facts.num_generations, run.facts.planned_total_steps) == (0.04, 8, 3)
    assert any("holds 2 Trackio runs" in w and "'grpo-old'" in w for w in run.warnings)


def test_a_fact_read_from_an_mlflow_params_folder_names_it_by_reference(tmp_path):
    """holdout36's blind reader met `beta = 0 (mlruns/7021.../b41d.../params: beta)` on the sheet, outside the fenced
    run data: the store's folder names are the run's own choosing, and only a file name (`training_args.json: beta`)
    was being replaced by its reference."""
    from assessor.diagnose import diagnose
    from assessor.judge.base import JudgeRequest
    from assessor.judge.export import export_prompt

    root = copy_store("trl_file", tmp_path)
    folder = run_folder(root, "grpo-new")
    (folder / "params" / "beta").write_text("0.0", encoding="utf-8")  # no KL term: the sheet says where 0 is from
    for kl in (folder / "metrics").rglob("*kl*"):
        kl.unlink()
    run = load_run(root)  # the newest run of the store, `grpo-new`
    assert run.facts.beta == 0 and run.facts.provenance["beta"].startswith("mlruns/")
    user = export_prompt(JudgeRequest(run=run, diagnostics=diagnose(run), plots=[]), images=False).user
    sheet, data = user.split("```run-data", 1)
    assert "beta = 0 ([run label" in sheet and "mlruns/" not in sheet
    assert "mlruns/" in data  # listed in the fenced block, behind its reference
