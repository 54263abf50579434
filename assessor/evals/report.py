"""The eval report as Markdown (judges side by side) or JSON (the `EvalReport` model, every outcome included)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from assessor.evals.harness import DECISIONS, CaseOutcome, DelaySummary, EvalReport, JudgeReport, Scores

MARKDOWN_FILE = "eval.md"
JSON_FILE = "eval.json"
_DASH = "–"


def render_json(report: EvalReport) -> str:
    """The report as indented JSON."""
    return report.model_dump_json(indent=2) + "\n"


def write_reports(report: EvalReport, out_dir: Path) -> list[Path]:
    """Write `eval.md` and `eval.json` to `out_dir`; return their paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    markdown, data = out_dir / MARKDOWN_FILE, out_dir / JSON_FILE
    markdown.write_text(render_markdown(report), encoding="utf-8")
    data.write_text(render_json(report), encoding="utf-8")
    return [markdown, data]


class ProgressBar:
    """The harness's progress, drawn as a rich bar on stderr (only when stderr is a terminal)."""

    def __init__(self, progress: Progress) -> None:
        self._progress = progress
        self._task = progress.add_task("reading and generating runs", total=None)

    def start(self, total: int) -> None:
        """Set the number of judgements planned."""
        self._progress.update(self._task, total=total)

    def advance(self, label: str) -> None:
        """Count one judgement done."""
        self._progress.update(self._task, advance=1, description=label[:40])


@contextmanager
def progress_bar(console: Console | None = None) -> Iterator[ProgressBar]:
    """A progress bar on stderr for `harness.run_eval`; it leaves nothing behind once done."""
    console = console or Console(stderr=True)
    columns = (TextColumn("{task.description:<40}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=console, transient=True, disable=not console.is_terminal) as progress:
        yield ProgressBar(progress)


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> list[str]:
    lines = ["| " + " | ".join(_cell(h) for h in header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return [*lines, ""]


def _pct(value: float | None) -> str:
    return _DASH if value is None else f"{value:.0%}"


def _num(value: float | None, digits: int = 1) -> str:
    return _DASH if value is None else f"{value:.{digits}f}"


def _seconds(value: float | None) -> str:
    if value is None:
        return _DASH
    return f"{value * 1000:.0f} ms" if value < 1 else f"{value:.1f} s"


def _runs(count: int) -> str:
    return f"{count} run" if count == 1 else f"{count} runs"


def _cost(value: float | None, estimated: bool, digits: int) -> str:
    if value is None:
        return _DASH
    return f"{value:.{digits}f}" + (" (est.)" if estimated else "")


def _column(judge: JudgeReport) -> str:
    return f"{judge.judge} (baseline)" if judge.baseline else judge.judge


def _scores_rows(report: EvalReport, pick: Callable[[JudgeReport], Scores],
                 delays: Callable[[JudgeReport], DelaySummary]) -> list[list[str]]:
    judges = report.judges
    baseline = next((j for j in judges if j.baseline), None)

    def row(label: str, value: Callable[[JudgeReport], str]) -> list[str]:
        return [label, *(value(j) for j in judges)]

    def versus(j: JudgeReport) -> str:
        if baseline is None or j is baseline:
            return _DASH
        mine, theirs = pick(j).accuracy, pick(baseline).accuracy
        return _DASH if mine is None or theirs is None else f"{(mine - theirs) * 100:+.0f} points"

    def per_decision(values: dict[str, float | None]) -> str:
        return " / ".join(_pct(values.get(d)) for d in DECISIONS)

    def window(s: Scores) -> str:
        return f"{s.rollbacks_in_window}/{s.rollbacks} ({_pct(s.rollback_in_window_rate)})" if s.rollbacks else _DASH

    def delay(d: DelaySummary) -> str:
        if not d.cases:
            return (f"incomplete in {_runs(d.incomplete)} (no verdict at some points)"
                    if d.incomplete else _DASH)
        share = (f" (median {d.median_delay_share:.0%} of the run, max {d.max_delay_share:.0%})"
                 if d.median_delay_share is not None and d.max_delay_share is not None else "")
        return (f"{d.detected}/{d.cases} detected; mean {_num(d.mean_delay, 0)}, median {_num(d.median_delay, 0)}, "
                f"max {d.max_delay if d.max_delay is not None else _DASH} steps{share}")

    rows = [
        row("accuracy", lambda j: f"{_pct(pick(j).accuracy)} ({pick(j).correct}/{pick(j).cases})"),
    ]
    if baseline is not None and len(judges) > 1:
        rows.append(row("above the baseline", versus))
    rows += [
        row("false stops on healthy runs", lambda j: f"{pick(j).false_stops} of {pick(j).healthy}"),
        row("precision continue / stop / rollback", lambda j: per_decision(pick(j).precision)),
        row("recall continue / stop / rollback", lambda j: per_decision(pick(j).recall)),
        row("rollbacks inside the window", lambda j: window(pick(j))),
        row("mean distance to window / best step",
            lambda j: f"{_num(pick(j).mean_window_distance)} / {_num(pick(j).mean_best_distance)}"
            if pick(j).rollbacks else _DASH),
        row("detection delay", lambda j: delay(delays(j))),
        row("false alarms before onset",
            lambda j: f"{delays(j).false_alarms} in {_runs(delays(j).cases_with_false_alarms)}"
            if delays(j).cases else _DASH),
        row("alarms on healthy prefixes",
            lambda j: f"{delays(j).healthy_alarms} in {_runs(len(delays(j).healthy_runs_with_alarms))} of "
                      f"{delays(j).healthy_replayed}" if delays(j).healthy_replayed else _DASH),
        row("errors", lambda j: str(pick(j).errors)),
    ]
    if any(pick(j).scenarios for j in judges):
        rows.append(row("format disagreements (failures)",
                        lambda j: f"{pick(j).format_disagreements} of {pick(j).scenarios} scenarios"))
    return rows


def _outcome_cell(o: CaseOutcome) -> str:
    if o.decision is None:
        return f"✗ error: {o.error or 'no verdict'}"
    mark = "✓" if o.correct else "✗"
    text = f"{mark} {o.decision}"
    if o.decision == "rollback":
        text += f"@{o.rollback_step}"
        if o.in_window is not None:
            text += " (in window)" if o.in_window else f" ({o.window_distance} off)"
    if o.false_stop:
        text += " **false stop**"
    if o.stale_cassette:
        text += " (stale)"
    return text


def _alarm_cell(o: CaseOutcome) -> str:
    d = o.delay
    if d is None or not d.false_alarms:
        return _DASH
    steps = [p for p, decision in zip(d.points, d.decisions, strict=True) if decision in ("stop", "rollback")]
    return f"{d.false_alarms} (at {', '.join(str(s) for s in steps[:4])}{' …' if len(steps) > 4 else ''})"


def _delay_cell(o: CaseOutcome) -> str:
    d = o.delay
    if d is None:
        return _DASH
    if not d.complete:
        return "incomplete"
    text = "missed" if d.delay is None else f"+{d.delay} (@{d.detection_step})"
    if d.false_alarms:
        text += f", {d.false_alarms} false alarm{'s' if d.false_alarms > 1 else ''}"
    return text


def _confusion(scores: Scores) -> list[str]:
    rows = [[expected, *(scores.confusion.get(expected, {}).get(d, 0) for d in DECISIONS)] for expected in DECISIONS]
    return _table(["expected \\ judged", *DECISIONS], rows)


def _disagreements(judges: Sequence[JudgeReport]) -> list[str]:
    """The scenarios each judge decided differently in different formats (each one a failure)."""
    found = [(j, d) for j in judges for d in j.format_disagreements]
    if not any(j.synthetic.scenarios or j.real.scenarios for j in judges):
        return []
    out = ["## Format disagreements", "",
           "Scenarios written in several formats (the same run, so the same labels) whose decisions differ between "
           "formats; each is a failure of the judge, whatever the labels say.", ""]
    if not found:
        return [*out, "None: every judge decided each scenario alike in every format.", ""]
    formats = list(dict.fromkeys(f for _, d in found for f in d.decisions))
    rows = [[d.scenario, _column(j), *(d.decisions.get(f, _DASH) for f in formats)] for j, d in found]
    return out + _table(["scenario", "judge", *formats], rows)


def render_markdown(report: EvalReport) -> str:
    """The report as Markdown: scores side by side per judge, then per pattern, tag, case and delay."""
    judges = report.judges
    columns = [_column(j) for j in judges]
    out = [f"# Eval: {report.source} ({report.subset} subset)", ""]
    out += [f"{report.cases} cases ({report.synthetic_cases} synthetic, {report.real_cases} real); judges: "
            f"{', '.join(columns)}. Detection delay: each failing run replayed truncated at "
            f"{report.delay_points} evenly spaced steps (cheap judges only).", ""]
    sections: list[tuple[str, int, Callable[[JudgeReport], Scores], Callable[[JudgeReport], DelaySummary]]] = [
        ("Synthetic cases", report.synthetic_cases, lambda j: j.synthetic, lambda j: j.delay_synthetic),
        ("Real runs", report.real_cases, lambda j: j.real, lambda j: j.delay_real)]
    for title, count, pick, delays in sections:
        if not count:
            continue
        out += [f"## {title} ({count})", ""]
        out += _table(["", *columns], _scores_rows(report, pick, delays))

    out += ["## Cost and latency", ""]
    usage_rows = [
        ["assessments", *(str(j.usage.assessments) for j in judges)],
        ["requests", *(str(j.usage.requests) for j in judges)],
        ["tokens per assessment", *(_num(j.usage.tokens_per_assessment, 0) for j in judges)],
        ["cost per assessment (USD)", *(_cost(j.usage.cost_per_assessment_usd, j.usage.cost_estimated, 4)
                                        for j in judges)],
        ["total cost (USD)", *(_cost(j.usage.cost_usd, j.usage.cost_estimated, 2) for j in judges)],
        ["latency mean / p95 / max", *(f"{_seconds(j.usage.mean_latency_s)} / {_seconds(j.usage.p95_latency_s)} / "
                                      f"{_seconds(j.usage.max_latency_s)}" for j in judges)],
    ]
    out += _table(["", *columns], usage_rows)
    stale = [j for j in judges if j.stale_cassettes]
    if stale:
        out += ["Stale replays (the prompt sent today differs from the recorded one): "
                + ", ".join(f"{j.judge}: {j.stale_cassettes}" for j in stale) + ".", ""]

    out += ["## Confusion matrices", ""]
    for j in judges:
        for title, count, pick, _ in sections:
            if count:
                out += [f"{_column(j)}, {title.lower()}:", "", *_confusion(pick(j))]

    patterns = sorted({p for j in judges for p in j.by_pattern})
    if patterns:
        out += ["## Accuracy by pattern (synthetic)", ""]
        rows = [[p, str(judges[0].by_pattern[p].cases),
                 *(f"{j.by_pattern[p].correct}/{j.by_pattern[p].cases}" for j in judges)] for p in patterns]
        out += _table(["pattern", "cases", *columns], rows)
    tags = sorted({t for j in judges for t in j.by_tag})
    if tags:
        out += ["## Accuracy by tag", ""]
        rows = [[t, str(judges[0].by_tag[t].cases),
                 *(f"{j.by_tag[t].correct}/{j.by_tag[t].cases}" for j in judges)] for t in tags]
        out += _table(["tag", "cases", *columns], rows)

    out += _disagreements(judges)

    cases = judges[0].outcomes if judges else []
    delayed = [i for i, o in enumerate(cases) if o.onset_step is not None
               and any(j.outcomes[i].delay is not None for j in judges)]
    alarmed = [i for i, o in enumerate(cases) if o.onset_step is None and any(
        (d := j.outcomes[i].delay) is not None and d.false_alarms for j in judges)]
    if alarmed:
        out += ["## Alarms on healthy prefixes", "",
                "Healthy runs replayed truncated at the same points; any stop or rollback on a prefix is a false "
                "alarm a scheduled check would have raised.", ""]
        rows = [[cases[i].case, *(_alarm_cell(j.outcomes[i]) for j in judges)] for i in alarmed]
        out += _table(["case", *columns], rows)
    if delayed:
        out += ["## Detection delay per failing run", "",
                "Steps from the labelled onset to the first truncation point where the judge says stop or "
                "rollback; false alarms are such verdicts before the onset.", ""]
        rows = [[cases[i].case, str(cases[i].onset_step), *(_delay_cell(j.outcomes[i]) for j in judges)]
                for i in delayed]
        out += _table(["case", "onset", *columns], rows)

    out += ["## Cases", ""]
    rows = []
    for i, o in enumerate(cases):
        window = f"{o.rollback_window[0]}-{o.rollback_window[1]}" if o.rollback_window else _DASH
        accept = ", ".join(o.accept) + (" (healthy)" if o.healthy else "")
        rows.append([o.case, o.kind, accept, window, *(_outcome_cell(j.outcomes[i]) for j in judges)])
    out += _table(["case", "kind", "accept", "window", *columns], rows)

    if report.skipped:
        # Real runs not on this machine are one line (the same reason each); cases that broke are listed.
        absent = [s.case for s in report.skipped if s.not_here]
        out += ["## Skipped", ""] + [f"- {s.case}: {s.reason}" for s in report.skipped if not s.not_here]
        if absent:
            out.append(f"- {len(absent)} cases whose runs are not on this machine yet ({', '.join(absent)}): real runs "
                       "come with `assessor fetch-real-runs`, holdout runs with their set's `make_*.py`")
        out.append("")
    if report.floor is not None:
        out += ["## Floor", "", report.floor.message, ""]
    return "\n".join(out).rstrip() + "\n"
