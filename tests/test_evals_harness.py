"""`assessor eval`: scoring maths, detection delay, the thresholds baseline, cassettes, the CLI and the floor."""

from __future__ import annotations

import json
import sys
import types
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import yaml

from assessor.cli import main
from assessor.errors import ConfigError, JudgeError
from assessor.evals import harness
from assessor.evals.baseline import ThresholdsJudge, alerts
from assessor.evals.cases import Case
from assessor.evals.cassette import Cassette, RecordingJudge, ReplayJudge
from assessor.evals.report import render_json, render_markdown
from assessor.judge import Evidence, JudgeRequest, JudgeResult, Usage, Verdict
from assessor.judge.fake import FakeJudge
from assessor.pipeline import assess_run
from assessor.run import Run
from tests.runs import ar1, make_run

N = 160
CHECKPOINTS = (40, 80, 120, 160)


def healthy_run(root: Path, seed: int = 0, n: int = N) -> Run:
    t = np.arange(n)
    return make_run(
        root, reward=0.2 + 0.4 * t / n + ar1(seed, n, scale=0.03), reward_std=0.3 + ar1(seed + 1, n, scale=0.02),
        kl=0.05 + ar1(seed + 2, n, scale=0.003), entropy=2.0 - 0.3 * t / n + ar1(seed + 3, n, scale=0.03),
        completion_length=200 + ar1(seed + 4, n, scale=5), checkpoints=CHECKPOINTS)


def collapse_run(root: Path, seed: int = 0, n: int = N, onset: int = 100) -> Run:
    t = np.arange(n)
    after = 1 - np.exp(-np.clip(t - onset, 0, None) / 10)
    reward = np.where(t < onset, 0.2 + 0.5 * (1 - np.exp(-t / 40)), 0.2 + 0.5 * (1 - np.exp(-onset / 40)) - 0.6 * after)
    return make_run(
        root, reward=np.clip(reward, 0, 1) + ar1(seed, n, scale=0.03), reward_std=0.3 + ar1(seed + 1, n, scale=0.02),
        kl=0.02 + 0.05 * t / n + 2 * after + ar1(seed + 2, n, scale=0.003),
        entropy=2.0 + 4 * after + ar1(seed + 3, n, scale=0.03),
        completion_length=200 + 600 * after + ar1(seed + 4, n, scale=5), checkpoints=CHECKPOINTS)


RECIPES: dict[str, Callable[..., Run]] = {"healthy": healthy_run, "collapse": collapse_run}


def verdict(decision: str, rollback_step: int | None = None, headline: str = "canned") -> Verdict:
    return Verdict(decision=decision, rollback_step=rollback_step, confidence=0.5, headline=headline,
                   rationale="r", evidence=[Evidence(signal="run", observation="o")])


def case(name: str = "c", **labels: object) -> Case:
    labels.setdefault("accept", ["continue"])
    return Case.model_validate({"name": name, "path": "x", **labels})


@pytest.fixture
def fake_generator(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """`assessor.evals.generate` stood in by the recipes above (the harness only needs `generate_all`)."""
    made: list[str] = []

    def generate_all(cases: list[Case], cache_dir: Path) -> dict[str, Path]:
        out = {}
        for c in cases:
            assert c.run is not None
            target = cache_dir / c.name
            if not target.exists():
                RECIPES[c.run.pattern](target, seed=c.run.seed, n=c.run.steps)
                made.append(c.name)
            out[c.name] = target
        return out

    module = types.ModuleType("assessor.evals.generate")
    module.generate_all = generate_all  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "assessor.evals.generate", module)
    return made


@pytest.fixture
def case_file(tmp_path: Path, fake_generator: list[str]) -> Path:
    collapse_run(tmp_path / "runs" / "real-collapse")
    labels = {"accept": ["rollback", "stop"], "preferred": "rollback", "rollback_window": [40, 100],
              "onset_step": 100}
    cases = [
        {"name": "healthy-a", "run": {"pattern": "healthy", "seed": 0, "steps": N}, "accept": ["continue"],
         "healthy": True, "tags": ["healthy"]},
        {"name": "healthy-b", "run": {"pattern": "healthy", "seed": 7, "steps": N}, "accept": ["continue"],
         "healthy": True, "tags": ["healthy"]},
        {"name": "collapse-a", "run": {"pattern": "collapse", "seed": 0, "steps": N}, **labels, "tags": ["collapse"]},
        {"name": "real-collapse", "path": "runs/real-collapse", **labels, "tags": ["collapse"]},
    ]
    path = tmp_path / "cases.yaml"
    path.write_text(yaml.safe_dump({"cases": cases}), encoding="utf-8")
    return path


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


# --- scoring


def test_scores_accuracy_false_stops_and_rollback_placement() -> None:
    healthy = case("healthy", accept=["continue"], healthy=True)
    failing = case("failing", accept=["rollback", "stop"], preferred="rollback", rollback_window=(40, 100))
    spent = case("spent", accept=["stop", "continue"], preferred="stop")
    outcomes = [
        harness.score_case(healthy, "continue"),
        harness.score_case(healthy, "stop"),  # the costliest error
        harness.score_case(failing, "rollback", 60),  # inside the window
        harness.score_case(failing, "rollback", 120),  # 20 past its end
        harness.score_case(failing, "continue"),  # wrong: expected its preferred rollback
        harness.score_case(spent, "continue"),  # accepted
        harness.score_case(spent, "rollback", 30),  # wrong, no window to place it in
        harness.score_case(failing, None, error="boom"),  # a failed judgement counts as wrong
    ]
    s = harness.summarize(outcomes)
    assert (s.cases, s.correct, s.errors) == (8, 4, 1)
    assert s.accuracy == pytest.approx(0.5)
    assert (s.healthy, s.false_stops, s.false_stop_cases) == (2, 1, ["healthy"])
    assert (s.rollbacks, s.rollbacks_in_window, s.rollback_in_window_rate) == (2, 1, 0.5)
    assert outcomes[3].window_distance == 20 and outcomes[3].best_distance == 20
    assert outcomes[2].window_distance == 0 and outcomes[2].best_distance == 40
    assert s.mean_window_distance == pytest.approx(10.0) and s.mean_best_distance == pytest.approx(30.0)
    # Rows: expected; columns: judged. A correct decision is its own label, a wrong one expects `preferred`.
    assert s.confusion == {
        "continue": {"continue": 2, "stop": 1, "rollback": 0},
        "stop": {"continue": 0, "stop": 0, "rollback": 1},
        "rollback": {"continue": 1, "stop": 0, "rollback": 2},
    }
    assert s.precision == {"continue": pytest.approx(2 / 3), "stop": 0.0, "rollback": pytest.approx(2 / 3)}
    assert s.recall == {"continue": pytest.approx(2 / 3), "stop": 0.0, "rollback": pytest.approx(2 / 3)}
    assert harness.summarize([]).accuracy is None


def test_tally_groups_by_tag() -> None:
    outcomes = [harness.score_case(case("a", tags=["x", "y"]), "continue"),
                harness.score_case(case("b", tags=["x"]), "stop")]
    groups = harness.tally(outcomes, lambda o: o.tags)
    assert groups["x"].cases == 2 and groups["x"].accuracy == 0.5 and groups["y"].accuracy == 1.0


def test_select_cases_fast_subset_is_first_of_each_pattern_plus_tagged(tmp_path: Path) -> None:
    def generated(name: str, pattern: str, seed: int, tags: list[str] | None = None) -> tuple[Path, Case]:
        return tmp_path, Case.model_validate({"name": name, "run": {"pattern": pattern, "seed": seed},
                                              "accept": ["continue"], "tags": tags or []})

    cases = [generated("h0", "healthy", 0), generated("h1", "healthy", 1), generated("c0", "collapse", 0),
             generated("c1", "collapse", 1, ["fast"]), (tmp_path, case("real"))]
    assert [c.name for _, c in harness.select_cases(cases, "fast")] == ["h0", "c0", "c1"]
    assert [c.name for _, c in harness.select_cases(cases, "real")] == ["real"]
    assert [c.name for _, c in harness.select_cases(cases, "all", ["c*"])] == ["c0", "c1"]
    assert [c.name for _, c in harness.select_cases(cases, "all", ["!c*"])] == ["h0", "h1", "real"]
    assert [c.name for _, c in harness.select_cases(cases, "all", ["h*", "!h1"])] == ["h0"]
    with pytest.raises(ConfigError):
        harness.select_cases(cases, "all", ["nothing*"])


# --- format disagreement


def _scenario_cases(tmp_path: Path, formats: tuple[str, ...], scenario: str = "spent-s1") -> list[harness.LoadedCase]:
    """One run written (here: copied) in several formats, as the case table expands a scenario."""
    items = []
    for fmt in formats:
        run = make_run(tmp_path / f"{scenario}-{fmt}", reward=np.full(60, 0.5))
        generated = Case.model_validate({
            "name": f"{scenario}-{fmt}", "run": {"pattern": "spent", "format": fmt, "seed": 1, "steps": 60},
            "accept": ["stop"], "onset_step": 10, "scenario": scenario})
        items.append(harness.LoadedCase(generated, tmp_path, run))
    return items


def test_a_scenario_judged_differently_in_one_format_is_a_format_disagreement(tmp_path: Path) -> None:
    def by_format(request: JudgeRequest) -> Verdict:  # a judge whose answer depends on the file format
        return verdict("continue") if request.run.path.name.endswith("-csv") else verdict("stop")

    loaded = [*_scenario_cases(tmp_path, ("trl_state", "jsonl", "csv")),
              *_scenario_cases(tmp_path, ("trl_state", "jsonl"), "alike-s2")]
    judges = [harness.EvalJudge(FakeJudge(respond=by_format), "fake")]
    outcomes = harness.evaluate(loaded, judges, delay_count=2)["fake"]
    assert [o.format for o in outcomes[:3]] == ["trl_state", "jsonl", "csv"] and outcomes[0].scenario == "spent-s1"
    found = harness.format_disagreements(outcomes)
    assert [d.scenario for d in found] == ["spent-s1"]  # alike-s2 got stop in both of its formats
    assert found[0].decisions == {"trl_state": "stop", "jsonl": "stop", "csv": "continue"}
    assert found[0].cases["csv"] == "spent-s1-csv"
    report = harness.judge_report(judges[0], outcomes)
    assert (report.synthetic.scenarios, report.synthetic.format_disagreements) == (2, 1)
    assert report.synthetic.format_disagreement_scenarios == ["spent-s1"]
    assert report.real.scenarios == 0

    full = harness.EvalReport(source="x", subset="all", cases=5, synthetic_cases=5, real_cases=0, delay_points=2,
                              judges=[report])
    markdown = render_markdown(full)
    assert "| format disagreements (failures) | 1 of 2 scenarios |" in markdown
    assert "## Format disagreements" in markdown and "| spent-s1 | fake | stop | stop | continue |" in markdown
    data = json.loads(render_json(full))
    assert data["judges"][0]["format_disagreements"][0]["decisions"]["csv"] == "continue"
    assert harness.EvalReport.model_validate(data) == full  # the JSON report round-trips

    # The same judge, answering alike in every format: no disagreement, and the report says so.
    alike = harness.evaluate(loaded, [harness.EvalJudge(FakeJudge(respond=lambda r: verdict("stop")), "fake")],
                             delay_count=2)["fake"]
    assert harness.format_disagreements(alike) == []
    quiet = full.model_copy(update={"judges": [harness.judge_report(judges[0], alike)]})
    assert "None: every judge decided each scenario alike in every format." in render_markdown(quiet)


def test_rollback_steps_may_differ_between_formats_but_a_failed_judgement_may_not() -> None:
    def outcome(fmt: str, decision: str | None, step: int | None = None) -> harness.CaseOutcome:
        generated = Case.model_validate({"name": f"s-{fmt}", "run": {"pattern": "p", "format": fmt},
                                         "accept": ["rollback"], "rollback_window": [10, 40], "scenario": "s"})
        return harness.score_case(generated, decision, step)  # type: ignore[arg-type]

    assert harness.format_disagreements([outcome("csv", "rollback", 20), outcome("jsonl", "rollback", 30)]) == []
    failed = harness.format_disagreements([outcome("csv", "rollback", 20), outcome("jsonl", None)])
    assert failed[0].decisions == {"csv": "rollback@20", "jsonl": "error"}


def test_floor_counts_format_disagreements_when_it_names_a_limit(tmp_path: Path) -> None:
    def by_format(request: JudgeRequest) -> Verdict:
        return verdict("continue") if request.run.path.name.endswith("-csv") else verdict("stop")

    loaded = _scenario_cases(tmp_path, ("trl_state", "csv"))
    rules = harness.EvalJudge(FakeJudge(respond=by_format), "rules")
    rules.judge.name = "rules"  # type: ignore[misc]
    report = harness.EvalReport(source="x", subset="fast", cases=2, synthetic_cases=2, real_cases=0, delay_points=2,
                                judges=[harness.judge_report(rules, harness.evaluate(loaded, [rules], delay_count=2)
                                                             ["rules"])])
    floor = harness.floor_from(report)
    assert floor.max_format_disagreements == 1 and floor.measured["format_disagreements"] == 1
    strict = floor.model_copy(update={"max_format_disagreements": 0, "synthetic_accuracy": 0.0})
    check = harness.check_floor(report, strict)
    assert not check.passed and "1 scenarios judged differently in different formats > floor 0 (spent-s1)" in \
        check.message
    unchecked = strict.model_copy(update={"max_format_disagreements": None})
    assert harness.check_floor(report, unchecked).passed  # an older floor file without the field


# --- detection delay


def test_delay_points_are_evenly_spaced_and_end_at_the_last_step(tmp_path: Path) -> None:
    run = make_run(tmp_path / "r", reward=np.linspace(0, 1, 120))
    assert harness.delay_points(run, 6) == [20, 40, 60, 80, 100, 120]
    assert harness.delay_points(run, 1) == [120]
    assert harness.delay_points(run, 500)[-1] == 120 and len(harness.delay_points(run, 500)) == 120


def test_detection_delay_and_false_alarms() -> None:
    d = harness.detection(50, [20, 40, 60, 80], ["stop", "continue", "continue", "rollback"])
    assert (d.detection_step, d.delay, d.false_alarms, d.complete) == (80, 30, 1, True)
    missed = harness.detection(50, [20, 40, 60], ["continue", "continue", "continue"])
    assert missed.delay is None and missed.false_alarms == 0
    assert not harness.detection(50, [20, 60], [None, "stop"]).complete


def test_delay_replays_with_a_judge_that_reads_the_truncated_last_step(tmp_path: Path) -> None:
    run = make_run(tmp_path / "r", reward=np.linspace(0, 1, 120), kl=np.linspace(0, 0.1, 120))

    def respond(request: JudgeRequest) -> Verdict:
        step = request.run.last_step or 0
        return verdict("stop") if step >= 90 or step == 40 else verdict("continue")

    judge = harness.EvalJudge(FakeJudge(respond=respond), "fake")
    item = harness.LoadedCase(case("late", accept=["stop"], onset_step=80), tmp_path, run)
    outcomes = harness.evaluate([item], [judge], delay_count=6)
    delay = outcomes["fake"][0].delay
    assert delay is not None
    assert delay.points == [20, 40, 60, 80, 100, 120]
    assert delay.decisions == ["continue", "stop", "continue", "continue", "stop", "stop"]
    assert (delay.detection_step, delay.delay, delay.false_alarms) == (100, 20, 1)
    summary = harness.summarize_delays(outcomes["fake"])
    assert (summary.cases, summary.detected, summary.mean_delay, summary.false_alarms) == (1, 1, 20.0, 1)


def test_a_problem_that_continue_also_answers_has_no_detection_delay(tmp_path: Path) -> None:
    run = make_run(tmp_path / "r", reward=np.linspace(0, 1, 120))
    judge = harness.EvalJudge(FakeJudge(respond=lambda request: verdict("continue")), "fake")
    plateau = harness.LoadedCase(case("plateau", accept=["continue", "stop"], onset_step=60), tmp_path, run)
    broken = harness.LoadedCase(case("broken", accept=["stop"], onset_step=60), tmp_path, run)
    first, second = harness.evaluate([plateau, broken], [judge], delay_count=6)["fake"]
    assert first.delay is None  # nothing to detect: continuing is right too
    assert second.delay is not None and second.delay.delay is None  # a missed problem that needed action
    assert harness.summarize_delays([first, second]).missed == ["broken"]


def test_expensive_judges_are_not_replayed_and_errors_are_scored_not_raised(tmp_path: Path) -> None:
    run = make_run(tmp_path / "r", reward=np.linspace(0, 1, 60))

    class Failing:
        name = "anthropic:test"

        def judge(self, request: JudgeRequest) -> JudgeResult:
            raise JudgeError("anthropic:test: rate limited (429)")

    item = harness.LoadedCase(case("c", accept=["stop"], onset_step=30), tmp_path, run)
    failing = harness.EvalJudge(Failing(), "anthropic:test", cheap=False)
    outcomes = harness.evaluate([item], [failing], delay_count=4)["anthropic:test"]
    assert outcomes[0].decision is None and "429" in (outcomes[0].error or "")
    assert outcomes[0].delay is None and not outcomes[0].correct


# --- thresholds baseline


def test_thresholds_baseline_alerts_on_the_callbacks_fixed_limits(tmp_path: Path) -> None:
    n = 60
    base = {"reward": np.linspace(0.2, 0.6, n), "reward_std": np.full(n, 0.3), "kl": np.full(n, 0.1),
            "entropy": np.full(n, 2.0), "clip_ratio": np.full(n, 0.1), "completion_length": np.full(n, 200.0)}
    quiet = make_run(tmp_path / "quiet", **base)
    assert alerts(quiet) == []
    assert assess_run(quiet, ThresholdsJudge(), plots=False).verdict.decision == "continue"
    cases = {
        "reward_std": {"reward_std": np.full(n, 0.01)},
        "kl": {"kl": np.linspace(0.1, 3.0, n)},
        "entropy": {"entropy": np.full(n, 0.5)},
        "clip_ratio": {"clip_ratio": np.full(n, 0.5)},
        "response_length_mean": {"completion_length": np.linspace(200, 500, n)},
    }
    for signal, override in cases.items():
        run = make_run(tmp_path / signal, **{**base, **override})
        assert [a.signal for a in alerts(run)] == [signal]
        result = assess_run(run, ThresholdsJudge(), plots=False)
        assert result.verdict.decision == "stop" and result.judge == "thresholds"
    never_clipped = make_run(tmp_path / "zero-clip", **{**base, "clip_ratio": np.zeros(n)})
    assert [a.signal for a in alerts(never_clipped)] == ["clip_ratio"]
    short = make_run(tmp_path / "short", **{**base, "completion_length": np.linspace(200, 90, n)})
    assert [a.signal for a in alerts(short)] == ["response_length_mean"]


def test_thresholds_baseline_reads_a_smoothed_recent_value(tmp_path: Path) -> None:
    kl = np.full(40, 0.1)
    kl[-1] = 3.0  # one spike: the mean of the last five values is 0.68
    assert alerts(make_run(tmp_path / "spike", reward=np.linspace(0, 1, 40), kl=kl)) == []


# --- cassettes


def test_cost_is_estimated_from_tokens_when_the_judge_reports_none(tmp_path: Path) -> None:
    run = make_run(tmp_path / "run", reward=np.linspace(0, 1, 30))

    class Tokens:
        name = "openai:test"

        def judge(self, request: JudgeRequest) -> JudgeResult:
            return JudgeResult(verdict("continue"), Usage(input_tokens=10_000, output_tokens=1_000, requests=1))

    judge = harness.EvalJudge(Tokens(), "openai:test", cheap=False, price=(2.0, 8.0))
    outcomes = harness.evaluate([harness.LoadedCase(case("c"), tmp_path, run)], [judge])["openai:test"]
    assert outcomes[0].usage is not None and outcomes[0].usage.cost_usd == pytest.approx(0.028)
    usage = harness.summarize_usage(outcomes)
    assert usage.cost_estimated and usage.tokens_per_assessment == 11_000
    assert usage.cost_per_assessment_usd == pytest.approx(0.028)


class StubLLM:
    """Stands in for a live LLM judge: a canned verdict, tokens and a key that must never be recorded."""

    name = "anthropic:test-model"
    wants_images = False

    def __init__(self, secret: str) -> None:
        self.secret = secret
        self.calls = 0

    def judge(self, request: JudgeRequest) -> JudgeResult:
        self.calls += 1
        if request.run.last_step == 30:
            raise JudgeError("anthropic:test-model: rate limited (429)")
        return JudgeResult(verdict=verdict("rollback", 20, headline=f"leaked {self.secret} here"),
                           usage=Usage(input_tokens=1000, output_tokens=200, requests=1, latency_s=2.5,
                                       cost_usd=0.01))


def test_cassette_round_trip_offline_with_keys_scrubbed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "sk-ant-api03-" + "x" * 40
    monkeypatch.setenv("ANTHROPIC_API_KEY", secret)
    run = make_run(tmp_path / "run", reward=np.linspace(0, 1, 60), checkpoints=(20,))
    cassettes = tmp_path / "cassettes"
    item = harness.LoadedCase(case("c1", accept=["rollback"], rollback_window=(10, 30), onset_step=35), tmp_path, run)
    stub = StubLLM(secret)
    recording = harness.EvalJudge(RecordingJudge(stub, Cassette.for_judge(cassettes, stub.name)), "anthropic:x",
                                  cheap=True)
    live = harness.evaluate([item], [recording], delay_count=4)[stub.name][0]
    assert stub.calls == 4 and live.decision == "rollback" and live.in_window

    folder = cassettes / "anthropic-test-model"
    files = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*.json"))
    assert files == ["c1/step-000015.json", "c1/step-000030.json", "c1/step-000045.json", "c1/step-000060.json",
                     "cassette.json"]
    written = "".join(p.read_text(encoding="utf-8") for p in folder.rglob("*") if p.is_file())
    assert secret not in written and "leaked *** here" in written
    entry = json.loads((folder / "c1" / "step-000060.json").read_text(encoding="utf-8"))
    assert entry["request"]["prompt_sha256"] and "user" in entry["request"]
    assert entry["response"]["usage"]["input_tokens"] == 1000
    failed = json.loads((folder / "c1" / "step-000030.json").read_text(encoding="utf-8"))
    assert failed["response"]["verdict"] is None and "429" in failed["response"]["error"]

    monkeypatch.delenv("ANTHROPIC_API_KEY")
    replay = harness.build_judge("anthropic:test-model", cassettes=cassettes, env={})  # no key needed
    assert isinstance(replay.judge, ReplayJudge) and replay.name == "anthropic:test-model (replay)"
    replayed = harness.evaluate([item], [replay], delay_count=4)[replay.name][0]
    assert replayed.decision == live.decision and replayed.rollback_step == live.rollback_step
    assert replayed.usage == live.usage and replayed.latency_s == 2.5 and not replayed.stale_cassette
    assert replayed.delay is not None and replayed.delay.decisions == live.delay.decisions  # type: ignore[union-attr]
    by_dir = harness.build_judges([f"replay:{cassettes}"], prices=["anthropic:test-model=3,15"])[0]
    assert by_dir.name == replay.name and by_dir.price == (3.0, 15.0)
    priced = harness.evaluate([item], [by_dir], delay_count=1)[by_dir.name][0]
    assert priced.usage is not None and priced.usage.cost_usd == 0.01 and not priced.cost_estimated  # as recorded
    with pytest.raises(ConfigError, match="JUDGE=IN,OUT"):
        harness.parse_price("anthropic:test-model=3")

    other = harness.LoadedCase(case("never-recorded"), tmp_path, run)
    missing = harness.evaluate([other], [replay])[replay.name][0]
    assert missing.decision is None and "no recording" in (missing.error or "")


def test_replay_of_a_judge_that_saw_figures_is_fresh_until_the_prompt_changes(tmp_path: Path) -> None:
    run = make_run(tmp_path / "run", reward=np.linspace(0, 1, 40))
    stub = StubLLM("unused")
    stub.wants_images = True
    cassette = Cassette.for_judge(tmp_path / "cassettes", stub.name)
    item = harness.LoadedCase(case("c1", accept=["rollback"], rollback_window=(10, 30)), tmp_path, run)
    harness.evaluate([item], [harness.EvalJudge(RecordingJudge(stub, cassette), "x", cheap=False)])
    entry_path = cassette.entry_path("c1", 40)
    entry = json.loads(entry_path.read_text(encoding="utf-8"))
    assert entry["request"]["images"] == ["dashboard.png"] and "Attached figure" in entry["request"]["user"]

    replay = harness.EvalJudge(ReplayJudge(Cassette.open(tmp_path / "cassettes")), "replay")
    assert not harness.evaluate([item], [replay])[replay.name][0].stale_cassette
    entry["request"]["content_sha256"] = "0" * 64  # as if the prompt templates had changed since
    entry_path.write_text(json.dumps(entry), encoding="utf-8")
    outcome = harness.evaluate([item], [replay])[replay.name][0]
    assert outcome.stale_cassette and outcome.decision == "rollback"


def test_live_llm_judge_without_a_key_or_cassette_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="ANTHROPIC_API_KEY"):
        harness.build_judge("anthropic:test-model", cassettes=tmp_path / "none", env={})
    with pytest.raises(ConfigError, match="no cassette"):
        harness.build_judge(f"replay:{tmp_path}")


# --- the command


def test_eval_command_end_to_end(case_file: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out_dir = tmp_path / "report"
    code, out, err = run_cli(capsys, "eval", str(case_file), "--judge", "rules", "--baseline", "thresholds",
                             "--format", "json", "--delay-points", "4", "--out", str(out_dir))
    assert code == 0, err
    report = json.loads(out)
    assert (report["cases"], report["synthetic_cases"], report["real_cases"]) == (4, 3, 1)
    rules, baseline = report["judges"]
    assert rules["judge"] == "rules" and not rules["baseline"]
    assert baseline["judge"] == "thresholds" and baseline["baseline"]
    assert rules["synthetic"]["false_stops"] == 0 and rules["synthetic"]["healthy"] == 2
    assert rules["synthetic"]["accuracy"] == 1.0 and rules["real"]["accuracy"] == 1.0
    assert rules["delay_synthetic"]["cases"] == 1 and rules["delay_real"]["cases"] == 1
    assert set(rules["by_pattern"]) == {"healthy", "collapse"}
    assert (out_dir / "eval.md").is_file() and json.loads((out_dir / "eval.json").read_text())["cases"] == 4

    code, out, _ = run_cli(capsys, "eval", str(case_file), "--judge", "rules", "--baseline", "thresholds",
                           "--delay-points", "3", "--case", "healthy-*")
    assert code == 0
    assert out.startswith("# Eval: ") and "| accuracy | 100% (2/2) |" in out and "thresholds (baseline)" in out
    assert "## Real runs" not in out


def test_generated_cases_run_through_the_real_generator(tmp_path: Path) -> None:
    pytest.importorskip("assessor.evals.generate")
    cases = [{"name": "gen-healthy", "run": {"pattern": "healthy", "format": "jsonl", "seed": 1, "steps": 120},
              "accept": ["continue"], "healthy": True},
             {"name": "gen-blowup", "run": {"pattern": "entropy_blowup", "seed": 1, "steps": 300},
              "accept": ["rollback", "stop"], "rollback_window": [1, 300], "onset_step": 150}]
    (tmp_path / "evals").mkdir()
    (tmp_path / "evals" / "cases.yaml").write_text(yaml.safe_dump({"cases": cases}), encoding="utf-8")
    judges = harness.build_judges(["rules"], ["thresholds"])
    report = harness.run_eval(tmp_path / "evals", judges, delay_count=2)
    assert report.synthetic_cases == 2 and not report.skipped
    assert all(o.decision is not None for j in report.judges for o in j.outcomes)
    assert any((tmp_path / "evals" / ".cache").iterdir())
    again = harness.run_eval(tmp_path / "evals", judges, delay_count=2)  # the cache's YAML is not read as cases
    assert again.cases == 2


def test_check_floor_passes_and_fails(case_file: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    floor = tmp_path / "floor.json"
    args = ["eval", str(case_file), "--judge", "rules", "--subset", "fast", "--delay-points", "2"]
    code, _, err = run_cli(capsys, *args, "--write-floor", str(floor))
    assert code == 0 and "floor written" in err
    recorded = json.loads(floor.read_text())
    assert recorded["subset"] == "fast" and recorded["max_healthy_false_stops"] == 0
    assert recorded["synthetic_accuracy"] == 0.98 and recorded["measured"]["synthetic_cases"] == 2

    code, out, err = run_cli(capsys, *args, "--check-floor", str(floor))
    assert code == 0 and "floor check passed" in err and "## Floor" in out

    floor.write_text(json.dumps({**recorded, "synthetic_accuracy": 1.01}))
    code, _, err = run_cli(capsys, *args, "--check-floor", str(floor))
    assert code == 1
    assert err.strip().splitlines()[-1].startswith("floor check failed: rules judge on 2 synthetic cases")

    code, _, err = run_cli(capsys, "eval", str(case_file), "--judge", "fake", "--check-floor", str(floor))
    assert code == 2 and "--judge rules" in err


def test_case_files_skip_generated_runs_and_cassettes(tmp_path: Path) -> None:
    from assessor.evals.cases import case_files

    for rel in ("a.yaml", "holdout/holdout.yaml", "holdout/runs/r1/mlruns/0/meta.yaml", "cassettes/x.yaml",
                ".cache/run/config.yaml"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("cases: []\n", encoding="utf-8")
    assert [p.relative_to(tmp_path).as_posix() for p in case_files(tmp_path)] == ["a.yaml", "holdout/holdout.yaml"]


def test_delay_as_a_share_of_the_run_and_alarms_on_healthy_prefixes():
    from assessor.evals.harness.models import CaseOutcome
    from assessor.evals.harness.scoring import detection, summarize_delays

    failing = detection(100, [50, 100, 150, 200], ["continue", "continue", "rollback", "rollback"], span=200)
    assert (failing.delay, failing.delay_share, failing.false_alarms) == (50, 0.25, 0)
    healthy = detection(None, [50, 100, 150, 200], ["continue", "stop", "continue", "continue"], span=200)
    assert healthy.false_alarms == 1 and healthy.delay is None
    outcomes = [
        CaseOutcome(case="bad", kind="synthetic", accept=["rollback"], onset_step=100, delay=failing),
        CaseOutcome(case="ok", kind="synthetic", accept=["continue"], healthy=True, delay=healthy),
    ]
    summary = summarize_delays(outcomes)
    assert (summary.cases, summary.detected, summary.median_delay_share) == (1, 1, 0.25)
    assert (summary.healthy_replayed, summary.healthy_alarms, summary.healthy_runs_with_alarms) == (1, 1, ["ok"])


def test_a_finished_run_kept_as_it_is_has_nothing_to_detect_on_its_prefixes():
    from assessor.evals.cases import Case

    def case(tags: list[str], accept: list[str]) -> Case:
        window = (10, 20) if "rollback" in accept else None
        return Case.model_validate({"name": "c", "path": "runs/c", "accept": accept, "onset_step": 50,
                                    "rollback_window": window, "tags": tags})

    assert not case(["finished"], ["stop"]).needs_action  # its stop rests on the budget being spent
    assert case([], ["stop"]).needs_action  # a live run that is spent: detect it
    assert case(["finished"], ["rollback"]).needs_action  # a better model behind: detect it, finished or not
    assert not case([], ["stop", "continue"]).needs_action
