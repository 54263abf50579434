"""Renderers of an assessment: terminal text, JSON contract, Markdown, self-contained HTML, report files."""

from __future__ import annotations

import base64
import io
import json
import re
from pathlib import Path

import pytest
from rich.console import Console

from assessor.assessment import Assessment
from assessor.judge import Evidence, Usage, Verdict
from assessor.judge.fake import FakeJudge
from assessor.pipeline import assess
from assessor.report.assessment_text import (
    contract_json,
    quadrant_label,
    render_assessment,
    rollback_label,
    steps_label,
    usage_label,
)
from assessor.report.html import render_html, write_reports
from assessor.report.markdown import code, md, render_markdown
from tests.conftest import EXAMPLES

ROLLBACK = Verdict(
    decision="rollback", rollback_step=130, confidence=0.85, headline="Held-out accuracy peaked at step 120.",
    rationale="Reward and eval fell together after step 160 while KL climbed.",
    evidence=[
        Evidence(signal="eval", observation="0.824 at step 120, 0.298 at step 240", steps=[120, 240]),
        Evidence(signal="kl", observation="tripled since step 160", steps=[160]),
    ],
    risks=["The drop may have started earlier than the eval points show."],
    recommended_actions=["Restore global_step_100.", "Raise beta before resuming."],
    could_not_see=["reward_std is not logged."],
)
HOSTILE = Verdict(
    decision="stop", confidence=0.6,
    headline="<script>alert('x')</script> [bold red]markup[/] | a *b* `c` \x1b[2J\x1b]0;title\x07",
    rationale="Line one.\nLine two with <b>tags</b> & ampersands.",
    evidence=[Evidence(signal="kl|<i>", observation="# not a heading\n- not an item ![x](http://evil/x.png)")],
)


@pytest.fixture(scope="module")
def with_plots(tmp_path_factory: pytest.TempPathFactory) -> tuple[Assessment, Path]:
    out = tmp_path_factory.mktemp("plots")
    return assess(EXAMPLES / "verl-grpo-gsm8k", FakeJudge([ROLLBACK]), out_dir=out), out


@pytest.fixture(scope="module")
def hostile() -> Assessment:
    return assess(EXAMPLES / "trl-grpo-live", FakeJudge([HOSTILE]), plots=False)


def text_of(assessment: Assessment, written: list[Path | str] | None = None, width: int = 120) -> str:
    buffer = io.StringIO()
    render_assessment(assessment, Console(file=buffer, width=width, color_system=None), written or [])
    return buffer.getvalue()


# --- small labels ------------------------------------------------------------------------------------------------

def test_labels():
    assert steps_label([]) == ""
    assert steps_label([120]) == "step 120"
    assert steps_label([50, 100, 150]) == "steps 50, 100, 150"
    assert steps_label(list(range(10, 130, 10))) == "steps 10, 20, 30, 40, … 120 (12)"
    assert quadrant_label("kl_up_reward_down") == "KL up, reward down"
    assert quadrant_label("kl_stable_reward_flat") == "KL stable, reward flat"
    assert usage_label(None) is None and usage_label(Usage()) is None
    assert usage_label(Usage(input_tokens=12000, output_tokens=800, requests=1, latency_s=4.2, cost_usd=0.05)) == (
        "12,000 input + 800 output tokens, 1 request, 4.2 s, $0.0500")
    assert usage_label(Usage(input_tokens=12000, cached_input_tokens=10000, output_tokens=800, requests=1,
                             cost_usd=0.0123)) == "12,000 input (10,000 cached) + 800 output tokens, 1 request, $0.0123"
    assert usage_label(Usage(input_tokens=900, output_tokens=80, requests=1)).endswith(
        "cost unknown (no price for this model: set ASSESSOR_PRICES)")


def test_rollback_label_names_the_checkpoint_or_its_absence(with_plots):
    assessment, _ = with_plots
    assert rollback_label(assessment) == "to step 130 (checkpoints/gsm8k_grpo/qwen2.5-3b-grpo/global_step_100)"
    none_on_disk = assessment.model_copy(update={"verdict": ROLLBACK.model_copy(update={"rollback_checkpoint": None})})
    # The example's config gives a save interval: the label names the checkpoint that interval wrote.
    assert rollback_label(none_on_disk) == ("to step 130 (not in the run directory: restore the one your save interval "
                                            "of 50 steps wrote at step 100)")
    best = none_on_disk.diagnostics.best_checkpoint.model_copy(update={"save_steps": None,
                                                                       "expected_checkpoint_step": None})
    no_interval = none_on_disk.model_copy(update={
        "diagnostics": none_on_disk.diagnostics.model_copy(update={"best_checkpoint": best})})
    assert rollback_label(no_interval) == ("to step 130 (not in the run directory: restore the newest checkpoint you "
                                           "saved at or before it, or re-run to it)")


# --- JSON ----------------------------------------------------------------------------------------------------------

def test_contract_json_is_strict_json(with_plots):
    assessment, _ = with_plots
    assert json.loads(contract_json(assessment)) == json.loads(json.dumps(assessment.contract()))
    signal = next(iter(assessment.diagnostics.signals.values()))
    broken = assessment.model_copy(deep=True)
    broken.diagnostics.signals[signal.metric] = signal.model_copy(update={"noise": float("nan"), "peak": float("inf")})
    text = contract_json(broken)
    assert "NaN" not in text and "Infinity" not in text
    assert json.loads(text)["diagnostics"]["signals"][signal.metric]["noise"] is None


# --- terminal ------------------------------------------------------------------------------------------------------

def test_text_has_every_part_of_the_verdict(with_plots):
    assessment, out = with_plots
    text = text_of(assessment, [out / "report.html", *assessment.plots])
    for part in ("ROLL BACK", "confidence 85%", "verl-grpo-gsm8k", "verl · grpo · step 240 of 300 (80%)",
                 "Held-out accuracy peaked at step 120.", "Roll back to step 130 (checkpoints/gsm8k_grpo/",
                 "Evidence", "eval: 0.824 at step 120, 0.298 at step 240", "(steps 120, 240)", "Risks",
                 "Recommended actions", "Raise beta before resuming.", "Could not see", "reward_std is not logged.",
                 "Judge: fake", f"Wrote: {out / 'report.html'}", str(out / "dashboard.png")):
        assert part in text, part


def test_text_prints_untrusted_markup_literally_and_wraps_with_a_hanging_indent(hostile):
    text = text_of(hostile, width=60)
    assert "[bold red]markup[/]" in text
    assert "<script>" in text  # a terminal is not a browser: shown as is, but never interpreted
    assert "\x1b" not in text and "\x07" not in text and "\ufffd[2J" in text  # nor can it drive the terminal
    lines = text.splitlines()
    assert all(len(line) <= 60 for line in lines)
    assert all(line == line.rstrip() for line in lines if line.startswith("  "))  # no table padding in lists
    bullet = next(i for i, line in enumerate(lines) if line.startswith("  • "))
    assert lines[bullet + 1].startswith("    ")


def test_text_shows_usage_of_llm_judges(with_plots):
    assessment, _ = with_plots
    priced = assessment.model_copy(update={"judge": "anthropic:claude-x", "usage": Usage(
        input_tokens=9000, output_tokens=700, requests=1, latency_s=3.0, cost_usd=0.04)})
    assert "Judge: anthropic:claude-x (9,000 input + 700 output tokens, 1 request, 3.0 s, $0.0400)" in text_of(priced)


# --- Markdown ------------------------------------------------------------------------------------------------------

def test_markdown_has_the_verdict_and_links_plots_relative_to_the_report(with_plots):
    assessment, out = with_plots
    document = render_markdown(assessment, base=out)
    assert document.startswith("# 🟠 ROLL BACK: verl-grpo-gsm8k\n")
    assert "roll back to **step 130** (`checkpoints/gsm8k_grpo/qwen2.5-3b-grpo/global_step_100`)" in document
    assert "confidence **85%**" in document and "judge `fake`" in document
    for heading in ("## Evidence", "## Recommended actions", "## Risks", "## Could not see", "## Plots",
                    "## Findings", "## Key signals", "## Run"):
        assert f"\n{heading}\n" in document, heading
    assert "![Dashboard](dashboard.png)" in document and "![Reward against KL](kl_reward.png)" in document
    assert "- **eval**: 0.824 at step 120, 0.298 at step 240 _(steps 120, 240)_" in document
    assert "| critical | `eval` |" in document
    # without a base, the links are the paths the plots were written to
    assert f"]({out / 'dashboard.png'})" in render_markdown(assessment)


def test_markdown_escapes_untrusted_text(hostile):
    document = render_markdown(hostile)
    assert "<script>" not in document and "<b>" not in document and "<i>" not in document
    assert "&lt;script&gt;alert('x')&lt;/script&gt;" in document
    assert "\\# not a heading - not an item !\\[x\\](http://evil/x.png)" in document  # one line, no image
    assert "**kl\\|&lt;i&gt;**" in document
    assert "Line one. Line two with &lt;b&gt;tags&lt;/b&gt; &amp; ampersands." in document
    assert "## Plots" not in document  # none were drawn


def test_markdown_helpers():
    assert md("a | b") == "a \\| b"
    assert md("x\n\n# y") == "x \\# y"
    assert code("a`b") == "`a'b`"
    assert code("a|b", in_table=True) == "`a\\|b`"


# --- HTML ----------------------------------------------------------------------------------------------------------

def test_html_is_self_contained_with_the_plots_embedded(with_plots):
    assessment, out = with_plots
    page = render_html(assessment)
    sources = re.findall(r"""(?:src|href)\s*=\s*["']?([^"'\s>]+)""", page, flags=re.IGNORECASE)
    assert len(sources) == 3 and all(s.startswith("data:image/png;base64,") for s in sources)
    embedded = base64.b64decode(sources[0].split(",", 1)[1])
    assert embedded == (out / "dashboard.png").read_bytes()
    assert not re.search(r"<(script|link|iframe|object|embed)\b", page, flags=re.IGNORECASE)
    assert "http://" not in page and "https://" not in page and "url(" not in page
    assert "default-src 'none'" in page  # and the browser is told to load nothing else


def test_html_shows_verdict_findings_signals_facts_and_judge(with_plots):
    assessment, _ = with_plots
    page = render_html(assessment)
    assert '<section class="card banner rollback">' in page
    assert ">ROLL BACK<" in page and "to step 130" in page and ">85%<" in page
    assert "Held-out accuracy peaked at step 120." in page
    assert "<code>checkpoints/gsm8k_grpo/qwen2.5-3b-grpo/global_step_100</code>" in page
    assert page.count('<li><span class="sig">') == 2
    assert "Raise beta before resuming." in page and "reward_std is not logged." in page
    findings = assessment.diagnostics.findings
    assert page.count('<tr class="row-') == len(findings)
    assert 'class="sev sev-critical"' in page
    assert "<details class=\"card\" open>" in page and "Key signals" in page
    assert '<td class="mono">reward_mean</td>' in page
    assert "<dt>Best point</dt>" in page and "<dt>KL / reward now</dt><dd>KL up, reward down</dd>" in page
    assert "<dt>Judge</dt><dd>fake</dd>" in page and "<dt>Tokens</dt>" not in page


def test_html_shows_usage_when_present(with_plots):
    assessment, _ = with_plots
    priced = assessment.model_copy(update={"judge": "openai:gpt-x", "usage": Usage(
        input_tokens=15000, output_tokens=900, requests=2, latency_s=6.5, cost_usd=0.0123)})
    page = render_html(priced)
    assert "<dt>Tokens</dt><dd>15,000 in · 900 out</dd>" in page
    assert "<dt>Cost</dt><dd>$0.0123</dd>" in page and "<dt>Requests</dt><dd>2</dd>" in page


def test_html_escapes_untrusted_text(hostile):
    page = render_html(hostile)
    assert "<script" not in page.lower() and "<b>" not in page and "<i>" not in page
    assert "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;" in page
    assert "kl|&lt;i&gt;" in page and "&lt;b&gt;tags&lt;/b&gt; &amp; ampersands" in page
    assert "No plots in this report" in page
    assert '<section class="card banner stop">' in page


def test_html_for_continue_without_a_rollback_target(hostile):
    calm = hostile.model_copy(update={"verdict": ROLLBACK.model_copy(update={
        "decision": "continue", "rollback_step": None, "rollback_checkpoint": None})})
    page = render_html(calm)
    assert '<section class="card banner continue">' in page and ">CONTINUE<" in page
    assert "to step" not in page and "checkpoint <code>" not in page


# --- files ---------------------------------------------------------------------------------------------------------

def test_write_reports_writes_html_markdown_and_the_contract(with_plots, tmp_path):
    assessment, _ = with_plots
    written = write_reports(assessment, tmp_path / "new")
    assert [p.name for p in written] == ["report.html", "report.md", "verdict.json"]
    assert all(p.is_file() and p.stat().st_size > 0 for p in written)
    assert json.loads(written[2].read_text(encoding="utf-8")) == json.loads(contract_json(assessment))
    assert written[0].read_text(encoding="utf-8") == render_html(assessment)
