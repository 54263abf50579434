"""`assessor assess`: exit codes, the JSON contract on stdout, --out, formats, judge selection, errors."""

from __future__ import annotations

import json
import re
import shutil
import socket

import pytest

from assessor import judge as judges
from assessor import pipeline
from assessor.cli import main
from assessor.errors import JudgeError
from assessor.judge import Evidence, JudgeRequest, Verdict
from assessor.judge import fake as fake_module
from assessor.judge.fake import FakeJudge
from assessor.report.assessment_text import contract_json
from tests.conftest import EXAMPLES

TRL = EXAMPLES / "trl-grpo-live"
VERL = EXAMPLES / "verl-grpo-gsm8k"
VERDICTS = {
    "continue": Verdict(
        decision="continue", confidence=0.8, headline="Reward is still rising with KL in check.",
        rationale="Reward up, KL flat.", evidence=[Evidence(signal="reward_mean", observation="up 0.2", steps=[500])],
        recommended_actions=["Check again in 100 steps."],
    ),
    "stop": Verdict(
        decision="stop", confidence=0.7, headline="Reward has plateaued since step 300.", rationale="Nothing left.",
        evidence=[Evidence(signal="reward_mean", observation="flat since step 300", steps=[300])],
        risks=["A late rise would be missed."],
    ),
    "rollback": Verdict(
        decision="rollback", rollback_step=120, confidence=0.9, headline="Eval peaked at step 120 and fell since.",
        rationale="Held-out accuracy fell by half.",
        evidence=[Evidence(signal="eval", observation="0.82 at 120, 0.30 now", steps=[120, 240])],
    ),
}


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def queue(monkeypatch: pytest.MonkeyPatch):
    """`--judge fake` returns the verdicts queued here."""
    judge = FakeJudge()
    monkeypatch.setattr(fake_module, "make", lambda model=None, **options: judge)
    return judge


@pytest.fixture
def no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for variable in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(variable, raising=False)


@pytest.mark.parametrize(("decision", "exit_code"), [("continue", 0), ("stop", 10), ("rollback", 11)])
def test_exit_code_follows_the_decision(capsys, queue, decision, exit_code):
    queue.enqueue(VERDICTS[decision])
    code, out, err = run_cli(capsys, "assess", str(VERL), "--judge", "fake", "--format", "json", "--no-plots")
    assert code == exit_code, err
    report = json.loads(out)
    assert report["decision"] == decision
    if decision == "rollback":  # the judge's step, pointed at the newest checkpoint on disk at or before it
        assert report["rollback_step"] == 120
        assert report["rollback_checkpoint"] == "checkpoints/gsm8k_grpo/qwen2.5-3b-grpo/global_step_100"
    else:
        assert report["rollback_step"] is None and report["rollback_checkpoint"] is None


def test_json_is_exactly_the_contract_and_nothing_else(capsys, queue):
    queue.enqueue(VERDICTS["stop"])
    code, out, err = run_cli(capsys, "assess", str(TRL), "--judge", "fake", "--format", "json", "--no-plots")
    assert code == 10, err
    assert out.lstrip().startswith("{") and out.rstrip().endswith("}")
    printed = json.loads(out)  # the whole of stdout is one JSON object
    expected = pipeline.assess(TRL, FakeJudge([VERDICTS["stop"]]), plots=False)
    assert printed == json.loads(contract_json(expected)) == expected.contract()
    assert {"run", "path", "framework", "algorithm", "last_step", "decision", "rollback_step", "rollback_checkpoint",
            "confidence", "judge", "headline", "evidence", "gpu", "diagnostics"} <= set(printed)
    assert (printed["run"], printed["framework"], printed["algorithm"], printed["last_step"]) == (
        "trl-grpo-live", "trl", "grpo", 520)
    assert printed["judge"] == "fake"
    assert printed["evidence"] == [{"signal": "reward_mean", "observation": "flat since step 300", "steps": [300]}]
    assert err == ""  # a named judge is not announced


def test_out_writes_reports_verdict_and_plots(capsys, queue, tmp_path):
    queue.enqueue(VERDICTS["rollback"])
    out_dir = tmp_path / "report"
    code, out, err = run_cli(capsys, "assess", str(VERL), "--judge", "fake", "--format", "json", "--out", str(out_dir))
    assert code == 11, err
    names = {p.name for p in out_dir.iterdir()}
    assert {"report.html", "report.md", "verdict.json", "dashboard.png", "kl_reward.png", "gpu.png"} == names
    assert json.loads((out_dir / "verdict.json").read_text(encoding="utf-8")) == json.loads(out)
    assert json.loads(out)["plots"] == [str(out_dir / n) for n in ("dashboard.png", "kl_reward.png", "gpu.png")]
    markdown = (out_dir / "report.md").read_text(encoding="utf-8")
    assert "](dashboard.png)" in markdown and "](gpu.png)" in markdown  # linked beside the report
    html = (out_dir / "report.html").read_text(encoding="utf-8")
    assert html.count("data:image/png;base64,") == 3


def test_out_without_plots_still_writes_the_reports(capsys, queue, tmp_path):
    queue.enqueue(VERDICTS["continue"])
    code, _, err = run_cli(capsys, "assess", str(TRL), "--judge", "fake", "--out", str(tmp_path), "--no-plots")
    assert code == 0, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.html", "report.md", "verdict.json"]


def test_text_shows_decision_headline_evidence_and_where_it_wrote(capsys, queue, tmp_path):
    queue.enqueue(VERDICTS["rollback"])
    code, out, _ = run_cli(capsys, "assess", str(VERL), "--judge", "fake", "--out", str(tmp_path), "--no-plots")
    assert code == 11
    assert "ROLL BACK" in out and "confidence 90%" in out
    assert "Eval peaked at step 120 and fell since." in out
    assert "to step 120 (checkpoints/gsm8k_grpo/qwen2.5-3b-grpo/global_step_100)" in out
    assert "eval: 0.82 at 120, 0.30 now" in out and "steps 120, 240" in out
    assert "Judge: fake" in out
    assert str(tmp_path / "report.html") in out and str(tmp_path / "verdict.json") in out


def test_markdown_on_stdout(capsys, queue):
    queue.enqueue(VERDICTS["stop"])
    code, out, _ = run_cli(capsys, "assess", str(TRL), "--judge", "fake", "--format", "markdown", "--no-plots")
    assert code == 10
    assert out.startswith("# 🔴 STOP: trl-grpo-live\n")
    assert "**Reward has plateaued since step 300.**" in out
    assert "## Evidence" in out and "- **reward_mean**: flat since step 300 _(step 300)_" in out
    assert "## Risks" in out and "A late rise would be missed." in out


def test_html_on_stdout_is_one_self_contained_page(capsys, queue):
    queue.enqueue(VERDICTS["continue"])
    code, out, _ = run_cli(capsys, "assess", str(TRL), "--judge", "fake", "--format", "html")
    assert code == 0
    assert out.startswith("<!DOCTYPE html>") and out.rstrip().endswith("</html>")
    sources = re.findall(r"""(?:src|href)\s*=\s*["']?([^"'\s>]+)""", out, flags=re.IGNORECASE)
    assert sources and all(s.startswith("data:image/png;base64,") for s in sources)  # figures drawn in a scratch dir
    assert len(sources) == 3  # dashboard, KL-reward, GPU
    assert "<script" not in out.lower() and "<link" not in out.lower() and "@import" not in out
    assert "url(" not in out  # no remote fonts or backgrounds


def test_untrusted_run_name_and_judge_text_are_escaped_in_html(capsys, queue, tmp_path):
    run = tmp_path / "<script>alert(1)<img src=x onerror=alert(2)>"
    shutil.copytree(TRL, run)
    hostile = VERDICTS["continue"].model_copy(update={
        "headline": "<script>alert('headline')</script>",
        "evidence": [Evidence(signal="<b>kl</b>", observation='"><img src=x onerror=alert(3)>')],
    })
    queue.enqueue(hostile)
    code, out, _ = run_cli(capsys, "assess", str(run), "--judge", "fake", "--format", "html", "--no-plots")
    assert code == 0
    assert "<script" not in out.lower() and "<img src=x" not in out and "<b>kl</b>" not in out
    assert "&lt;script&gt;alert(1)&lt;img src=x onerror=alert(2)&gt;" in out
    assert "&lt;script&gt;alert(&#39;headline&#39;)&lt;/script&gt;" in out
    assert "&#34;&gt;&lt;img src=x onerror=alert(3)&gt;" in out


def test_missing_run_dir_is_a_one_line_error_with_exit_2(capsys, tmp_path, no_keys):
    code, out, err = run_cli(capsys, "assess", str(tmp_path / "nope"))
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("Error: ") and "no such file or directory" in err


def test_anthropic_without_key_names_the_variable(capsys, no_keys):
    code, out, err = run_cli(capsys, "assess", str(TRL), "--judge", "anthropic", "--no-plots")
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("Error: ") and "ANTHROPIC_API_KEY" in err


def test_unknown_judge_is_a_usage_error(capsys):
    code, _, err = run_cli(capsys, "assess", str(TRL), "--judge", "oracle", "--no-plots")
    assert code == 2
    assert err.startswith("Error: ") and "oracle" in err


def test_judge_error_exits_1_with_one_line(capsys, monkeypatch):
    def fail(request: JudgeRequest) -> Verdict:
        raise JudgeError("the model returned no valid verdict after 2 attempts")

    monkeypatch.setattr(fake_module, "make", lambda model=None, **options: FakeJudge(respond=fail))
    code, out, err = run_cli(capsys, "assess", str(TRL), "--judge", "fake", "--format", "json", "--no-plots")
    assert code == 1
    assert out == ""
    assert err == "Error: the model returned no valid verdict after 2 attempts\n"


def test_auto_without_keys_uses_rules_and_says_so(capsys, no_keys):
    code, out, err = run_cli(capsys, "assess", str(VERL), "--format", "json", "--no-plots")
    assert code in (0, 10, 11)
    assert json.loads(out)["judge"] == "rules"
    assert err == "judge: rules (no ANTHROPIC_API_KEY or OPENAI_API_KEY set)\n"


def test_auto_says_which_key_chose_the_judge(capsys, queue, monkeypatch, no_keys):
    # Both providers are stood in for by the fake judge: only the announcement is under test.
    monkeypatch.setitem(judges.JUDGES, "openai", "assessor.judge.fake")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    code, out, err = run_cli(capsys, "assess", str(TRL), "--format", "json", "--no-plots")
    assert code == 0
    assert err == "judge: fake (OPENAI_API_KEY is set, ANTHROPIC_API_KEY is not)\n"
    assert "sk-test" not in out + err


def test_bad_format_is_a_usage_error(capsys):
    code, _, err = run_cli(capsys, "assess", str(TRL), "--format", "pdf")
    assert code == 2
    assert "pdf" in err



@pytest.mark.parametrize("fmt", ["html", "markdown", "json"])
def test_out_with_a_page_format_says_what_it_wrote_and_prints_no_second_copy(capsys, queue, tmp_path, fmt):
    queue.enqueue(VERDICTS["continue"])
    code, out, err = run_cli(capsys, "assess", str(TRL), "--judge", "fake", "--format", fmt, "--out", str(tmp_path))
    assert code == 0, err
    wrote = [line for line in err.splitlines() if line.startswith("Wrote: ")]
    assert len(wrote) == 1 and str(tmp_path / "report.html") in wrote[0] and str(tmp_path / "dashboard.png") in wrote[0]
    if fmt == "json":  # stdout stays exactly one JSON object, as the contract says
        assert json.loads(out)["decision"] == "continue"
    else:  # the page is in the folder; stdout does not repeat it
        assert out == ""
        assert (tmp_path / ("report.html" if fmt == "html" else "report.md")).stat().st_size > 1000


def test_auto_judge_falls_back_to_rules_when_the_api_is_unreachable(capsys, monkeypatch, tmp_path):
    """The real Anthropic SDK against a closed local port: `auto` chose it for the key, so rules decide instead."""
    pytest.importorskip("anthropic")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{sock.getsockname()[1]}"
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-not-a-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", dead)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    code, out, err = run_cli(capsys, "assess", str(VERL), "--format", "json", "--no-plots")
    assert code == 11, err
    assert json.loads(out)["judge"] == "rules"
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("judge: rules (") and "could not connect" in lines[0]
    assert dead in lines[0] and "sk-ant-test" not in lines[0]
    # Named explicitly, the provider fails loudly (exit 1), and says what failed.
    code, out, err = run_cli(capsys, "assess", str(VERL), "--judge", "anthropic", "--format", "json", "--no-plots")
    assert code == 1 and out == ""
    assert "could not connect" in err and "rules" not in err.split("could not connect")[0]
