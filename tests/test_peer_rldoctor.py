"""The rldoctor peer judge of `assessor eval`: its findings mapped to a decision, how it is fed, the harness."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from assessor import load_run
from assessor.cli import main
from assessor.errors import ConfigError
from assessor.evals import harness
from assessor.evals.peer_rldoctor import (
    EVAL_FEED,
    TRAIN_FEED,
    PeerFinding,
    PeerSkipped,
    RldoctorJudge,
    available,
    decide,
    records,
    to_finding,
)
from assessor.judge import JudgeRequest
from assessor.pipeline import truncate
from tests.runs import ar1, make_run

REPO = Path(__file__).resolve().parents[1]
needs_rldoctor = pytest.mark.skipif(
    not available(), reason='rldoctor is not installed (pip install "assessor[eval]"); the peer cannot run')


def finding(detector: str, severity: str, step: int | None = None) -> PeerFinding:
    return PeerFinding(detector=detector, title=detector.title(), severity=severity,  # type: ignore[arg-type]
                       summary=f"{detector} says so", prescription=(f"act on {detector}",), step=step)


# --- findings -> decision (no rldoctor needed)


def test_nothing_of_warning_or_worse_continues() -> None:
    decided = decide([finding("kl_drift", "ok"), finding("plateau", "info", step=40),
                      finding("entropy_collapse", "skipped")], last_step=200)
    assert (decided.decision, decided.rollback_step) == ("continue", None)


def test_a_warning_without_a_step_continues_and_a_critical_one_stops() -> None:
    assert decide([finding("length_pathology", "warning")], 200).decision == "continue"
    decided = decide([finding("length_pathology", "warning"), finding("advantage_collapse", "critical")], 200)
    assert (decided.decision, decided.rollback_step) == ("stop", None)
    assert [f.detector for f in decided.drivers] == ["advantage_collapse"]


def test_a_named_step_rolls_back_even_beside_a_critical_finding_and_the_earliest_wins() -> None:
    decided = decide([finding("advantage_collapse", "critical"), finding("plateau", "warning", step=120),
                      finding("gradient_pathology", "critical", step=90)], last_step=200)
    assert (decided.decision, decided.rollback_step) == ("rollback", 90)
    assert [f.detector for f in decided.drivers] == ["gradient_pathology"]


def test_a_step_that_is_not_behind_the_run_is_no_rollback() -> None:
    assert decide([finding("plateau", "warning", step=200)], last_step=200).decision == "continue"
    assert decide([finding("plateau", "critical", step=250)], last_step=200).decision == "stop"
    assert decide([finding("plateau", "warning", step=199)], last_step=200).rollback_step == 199


# --- its findings and runs read through its API


@needs_rldoctor
def test_its_findings_carry_the_step_their_prescription_names() -> None:
    import rl_doctor

    peer_run = rl_doctor.run_from_records(
        [{"step": s, "grad_norm": float("nan") if s in (30, 50) else 1.0} for s in range(10, 110, 10)])
    plateau = rl_doctor.Finding(detector="plateau", title="Learning plateau", severity=rl_doctor.Severity.WARNING,
                                summary="flat", prescription=["Roll back to the step-40 checkpoint."],
                                metrics={"best_step": 40.0})
    nan = rl_doctor.Finding(detector="gradient_pathology", title="Gradient norm pathologies",
                            severity=rl_doctor.Severity.CRITICAL, summary="non-finite", metrics={"n_nonfinite": 2})
    fine = rl_doctor.Finding(detector="plateau", title="Learning plateau", severity=rl_doctor.Severity.OK,
                             summary="still learning", metrics={"best_step": 100.0})
    assert to_finding(plateau, peer_run).step == 40 and to_finding(plateau, peer_run).severity == "warning"
    assert to_finding(nan, peer_run).step == 20  # the last logged step before the first NaN (30)
    assert to_finding(fine, peer_run).step is None


@needs_rldoctor
def test_every_key_we_feed_means_the_same_to_rldoctor() -> None:
    from rl_doctor import aliases

    expected = {"reward_mean": "reward_mean", "reward_shaped_mean": "reward_mean", "policy_shift_kl": "kl",
                "pg_loss": "policy_loss", "loss": "policy_loss", "reward_zero_std_frac": "zero_var_group_frac",
                "clip_ratio_region": "pg_clipfrac", "clip_ratio_low": "pg_clipfrac_low",
                "clip_ratio_high": "pg_clipfrac_high", "response_length_mean": "response_len_mean",
                "response_length_max": "response_len_max", "response_length_clip_ratio": "response_len_clip_ratio",
                "prompt_length_mean": "prompt_len_mean", "throughput_tokens_per_s_per_gpu": "throughput",
                "time_step_s": "time_per_step", "lr": "lr"}
    for alternatives in TRAIN_FEED:
        for key, ours in alternatives:
            assert aliases.resolve(key) == expected.get(ours, ours), key
    assert {aliases.resolve(key) for key, _ in EVAL_FEED} == {"eval_score"}
    assert aliases.resolve_reward_component("rewards/format_reward/mean") == "format_reward"


def grpo_run(root: Path, n: int = 120, *, nan_at: tuple[int, ...] = ()) -> Any:
    t = np.arange(n)
    grad = 0.5 + ar1(5, n, scale=0.02)
    grad[list(nan_at)] = np.nan
    return make_run(root, eval_every=20, eval_values=np.linspace(0.3, 0.5, n // 20),
                    reward=0.2 + 0.4 * t / n + ar1(0, n, scale=0.03), reward_std=0.3 + ar1(1, n, scale=0.02),
                    kl=0.05 + ar1(2, n, scale=0.003), entropy=1.5 - 0.2 * t / n + ar1(3, n, scale=0.02),
                    completions__mean_length=200 + ar1(4, n, scale=5), grad_norm=grad,
                    rewards__format_reward__mean=0.9 + ar1(6, n, scale=0.01))


def test_records_use_its_key_names_keep_logged_nans_and_stop_at_the_cut(tmp_path: Path) -> None:
    run = grpo_run(tmp_path / "run", nan_at=(9,))
    rows = records(run)
    assert [r["step"] for r in rows] == list(range(1, 121))
    assert {"reward", "reward_std", "kl", "entropy", "completions/mean_length", "grad_norm",
            "rewards/format_reward/mean"} <= set(rows[0])
    assert "eval/reward" not in rows[0] and rows[19]["eval/reward"] == pytest.approx(0.3)  # the held-out reward
    assert np.isnan(rows[9]["grad_norm"])  # logged as NaN at step 10: passed on as NaN, not dropped
    assert "grad_norm" in rows[10] and not np.isnan(rows[10]["grad_norm"])
    assert records(run, last=50)[-1]["step"] == 50


@needs_rldoctor
def test_its_own_reader_where_the_run_is_one_file_it_reads_cut_at_our_last_step(tmp_path: Path) -> None:
    judge = RldoctorJudge()
    root = tmp_path / "state"
    root.mkdir()
    history = [{"step": s, "reward": 0.1 + s / 200, "kl": 0.01, "grad_norm": 1.0 + (s % 3) / 10,
                "completions/mean_length": 300.0, "entropy": 1.0} for s in range(5, 205, 5)]
    (root / "trainer_state.json").write_text(json.dumps({"global_step": 200, "max_steps": 400,
                                                         "log_history": history}), encoding="utf-8")
    run = load_run(root)
    fed = judge.feed(run)
    assert fed.route == "its own reader on trainer_state.json" and fed.run.n_steps == 40
    assert fed.run.config.raw["max_steps"] == 400
    early = judge.feed(truncate(run, 100))  # a truncated replay sees no step after the cut
    assert early.route == fed.route and max(early.run.steps) == 100 and early.run.n_steps == 20


@needs_rldoctor
def test_our_conversion_where_the_run_spans_files_or_its_reader_finds_no_steps(tmp_path: Path) -> None:
    judge = RldoctorJudge()
    run = grpo_run(tmp_path / "two")
    assert judge.feed(run).route == "its own reader on log.jsonl"
    (tmp_path / "two" / "eval.csv").write_text(
        "step,eval_accuracy\n" + "".join(f"{s},{0.3 + s / 1000}\n" for s in range(10, 121, 10)), encoding="utf-8")
    fed = judge.feed(load_run(tmp_path / "two"))
    assert fed.route == "our Run converted to per-step records under its key names" and fed.run.n_steps == 120
    assert fed.run.has("eval_score") and fed.run.finite("eval_score")[1][0] == pytest.approx(0.31)  # the accuracy

    lines = [json.dumps({"optimizer_step": s, "reward": s / 100, "kl": 0.01}) for s in range(1, 41)]
    (tmp_path / "nostep").mkdir()
    (tmp_path / "nostep" / "log.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    nostep = load_run(tmp_path / "nostep")
    assert nostep.last_step == 40  # we read `optimizer_step` as the step; rldoctor numbers the lines from 0
    fed = judge.feed(nostep)
    assert fed.route == ("our Run converted to per-step records under its key names (not its own reader: its steps "
                         "in log.jsonl do not include our last step 40)")
    assert list(fed.run.steps) == list(range(1, 41))


@needs_rldoctor
def test_a_run_it_can_check_nothing_on_is_skipped_with_the_reason(tmp_path: Path) -> None:
    judge = RldoctorJudge()
    unknown = make_run(tmp_path / "unknown", foo_bar_baz=np.arange(30.0))
    with pytest.raises(PeerSkipped, match=r"^skipped: rldoctor reads none of this run's metrics"):
        judge.judge(JudgeRequest(run=unknown, diagnostics=None))  # type: ignore[arg-type]  # it reads the run only
    short = make_run(tmp_path / "short", learning_rate=np.full(5, 1e-6))
    with pytest.raises(PeerSkipped, match=r"^skipped: rldoctor ran none of its \d+ checks; .*needs"):
        judge.judge(JudgeRequest(run=short, diagnostics=None))  # type: ignore[arg-type]


@needs_rldoctor
def test_verdict_carries_its_findings_prescriptions_and_skips(tmp_path: Path) -> None:
    n = 120
    t = np.arange(n)
    reward = np.where(t < 40, 0.2 + 0.01 * t, 0.6 - 0.004 * (t - 40)) + ar1(0, n, scale=0.01)
    run = make_run(tmp_path / "decline", reward=reward, grad_norm=0.5 + ar1(1, n, scale=0.02))
    verdict = RldoctorJudge().judge(JudgeRequest(run=run, diagnostics=None)).verdict  # type: ignore[arg-type]
    assert verdict.decision == "rollback" and verdict.rollback_step is not None and 30 <= verdict.rollback_step <= 50
    plateau = next(e for e in verdict.evidence if e.signal == "plateau")
    assert plateau.steps == [verdict.rollback_step] and plateau.observation.startswith("[warning]")
    assert any(f"step-{verdict.rollback_step}" in a for a in verdict.recommended_actions)
    assert any(s.startswith("entropy_collapse: needs") for s in verdict.could_not_see)
    assert verdict.rationale.startswith("Peer baseline, fed its own reader on log.jsonl")


# --- the harness


def test_missing_rldoctor_is_a_config_error_with_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "rl_doctor", None)  # import fails as if it were not installed
    with pytest.raises(ConfigError, match=r'pip install "assessor\[eval\]"'):
        harness.build_judge("rldoctor")


@needs_rldoctor
def test_it_is_a_cheap_judge_and_a_baseline_but_not_an_assess_judge() -> None:
    from assessor.judge import JUDGES

    built = harness.build_judges(["rules"], ["rldoctor"])
    assert [(j.name, j.baseline, j.cheap) for j in built] == [("rules", False, True), ("rldoctor", True, True)]
    assert "rldoctor" not in JUDGES


@needs_rldoctor
def test_eval_end_to_end_on_the_bundled_examples_and_a_run_it_cannot_read(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    make_run(tmp_path / "runs" / "unknown", foo_bar_baz=np.arange(30.0) + ar1(0, 30))
    cases = yaml.safe_load((REPO / "evals" / "examples.yaml").read_text(encoding="utf-8"))["cases"]
    for c in cases:
        c["path"] = str(REPO / "evals" / c["path"])
    cases.append({"name": "unreadable-to-it", "path": "runs/unknown", "accept": ["continue"]})
    (tmp_path / "cases.yaml").write_text(yaml.safe_dump({"cases": cases}), encoding="utf-8")

    code = main(["eval", str(tmp_path / "cases.yaml"), "--judge", "rules", "--judge", "rldoctor",
                 "--format", "json", "--delay-points", "3"])
    out = capsys.readouterr().out
    assert code == 0
    peer = next(j for j in json.loads(out)["judges"] if j["judge"] == "rldoctor")
    by_case = {o["case"]: o for o in peer["outcomes"]}
    live, verl = by_case["example-trl-grpo-live"], by_case["example-verl-grpo-gsm8k"]
    assert live["decision"] == "continue" and live["error"] is None
    assert verl["decision"] in ("stop", "rollback") and verl["correct"]
    assert verl["delay"] is not None and len(verl["delay"]["decisions"]) == 3  # replayed on the truncated run
    skipped = by_case["unreadable-to-it"]
    assert skipped["decision"] is None and skipped["error"].startswith("skipped: rldoctor reads none")
    assert peer["real"]["errors"] == 1
