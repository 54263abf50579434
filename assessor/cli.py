"""The `assessor` command. Commands parse options, call one library function and render; no logic here."""

from __future__ import annotations

import atexit
import contextlib
import os
import re
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import click

from assessor.errors import AssessorError
from assessor.printable import json_text, one_line

if TYPE_CHECKING:
    from rich.console import Console

EXIT_BAD_INPUT = 2
EXIT_INTERNAL = 1
EXIT_INTERRUPTED = 130  # the shell's code for a process ended by SIGINT


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="assessor")
def cli() -> None:
    """Read RL post-training runs and say: continue, stop, or roll back."""


_RUN_HELP = "A run directory or log file, or mlflow://HOST:PORT/RUN_ID (a run on an MLflow tracking server)."
_TRACKING = click.option("--tracking-uri", metavar="URL", help="Read RUN_DIR as a run id on this MLflow tracking "
                         "server (http(s)://HOST:PORT); needs the mlflow extra.")


def _run_source(run_dir: str, tracking_uri: str | None) -> str | Path:
    """A tracking server's run (`mlflow://...`, kept as text) or a path on disk."""
    if tracking_uri is None and not run_dir.startswith("mlflow:"):
        return Path(run_dir)  # a path: no need to import the readers (a `watch --once` that holds uses none)
    from assessor.ingest.mlflow_server import is_tracking_uri, tracking_source

    source = tracking_source(run_dir, tracking_uri)
    return source if is_tracking_uri(source) else Path(source)


@cli.command()
@click.argument("run_dir")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@_TRACKING
def inspect(run_dir: str, fmt: str, tracking_uri: str | None) -> None:
    """Show what was read from RUN_DIR: sources, metrics, checkpoints, GPU telemetry, facts, warnings.

    RUN_DIR may also be mlflow://HOST:PORT/RUN_ID, a run on an MLflow tracking server.
    """
    from assessor import inspect_run, load_run
    from assessor.report.inspect_text import render_inspection

    report = inspect_run(load_run(_run_source(run_dir, tracking_uri)))
    if fmt == "json":
        click.echo(json_text(report.model_dump_json(indent=2)))
    else:
        render_inspection(report, _console())


@cli.command()
@click.argument("run_dir", type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--out", "out_dir", type=click.Path(path_type=Path, file_okay=False),
              help="Also write diagnostics.json and the plots (dashboard.png, ...) here.")
@click.option("--no-plots", is_flag=True, help="Do not render plots (with --out).")
def diagnose(run_dir: Path, fmt: str, out_dir: Path | None, no_plots: bool) -> None:
    """The numeric reading of RUN_DIR: trends, KL/reward quadrants, learning signal, eval, GPU, best checkpoint."""
    from assessor.numpy_env import import_numpy_for_one_shot

    import_numpy_for_one_shot()  # before anything loads numpy: one BLAS thread, no huge-page advice
    from assessor import diagnose as run_diagnosis
    from assessor import load_run
    from assessor.report.diagnose_text import render_diagnostics

    run = load_run(run_dir)
    diagnostics = run_diagnosis(run)
    if out_dir is not None:
        from assessor.plots import render_plots

        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / "diagnostics.json").write_text(diagnostics.model_dump_json(indent=2), encoding="utf-8")
        if not no_plots:
            render_plots(run, diagnostics, out_dir)
    if fmt == "json":
        click.echo(json_text(diagnostics.model_dump_json(indent=2)))
    else:
        render_diagnostics(diagnostics, _console())


@cli.command()
@click.argument("run_dir")
@click.option("--judge", "judge_spec", default="auto", show_default=True, metavar="auto|rules|anthropic[:MODEL]|"
              "openai[:MODEL]|fake|verdicts:DIR", help="Who decides; auto: Anthropic, else OpenAI if its key is set, "
              "else rules; verdicts:DIR reads DIR/<run name>/verdict.json.")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "markdown", "html"]), default="text",
              show_default=True, help="What to print on stdout (json: the verdict contract, nothing else).")
@click.option("--out", "out_dir", type=click.Path(path_type=Path, file_okay=False),
              help="Also write report.html, report.md, verdict.json and the plots here.")
@click.option("--no-plots", is_flag=True, help="Do not render plots.")
@click.option("--no-images", is_flag=True, help="Do not send the dashboard image to an LLM judge.")
@_TRACKING
@click.pass_context
def assess(ctx: click.Context, run_dir: str, judge_spec: str, fmt: str, out_dir: Path | None, no_plots: bool,
           no_images: bool, tracking_uri: str | None) -> None:
    """Decide whether RUN_DIR should continue, stop or roll back. Exit code 0 continue, 10 stop, 11 rollback.

    RUN_DIR may also be mlflow://HOST:PORT/RUN_ID, a run on an MLflow tracking server.
    """
    from assessor.numpy_env import import_numpy_for_one_shot

    import_numpy_for_one_shot()  # before anything loads numpy: one BLAS thread, no huge-page advice
    from assessor.allocator import keep_freed_memory
    from assessor.pipeline import assess as assess_run
    from assessor.report.assessment_text import contract_json, render_assessment
    from assessor.report.html import render_html, write_reports
    from assessor.report.markdown import render_markdown

    keep_freed_memory()  # one run, then exit: reuse freed columns' pages rather than fault in fresh ones
    with tempfile.TemporaryDirectory(prefix="assessor-") as scratch:
        # A page printed to stdout still embeds its figures: draw them in a scratch folder.
        plot_dir = out_dir or (Path(scratch) if fmt == "html" and not no_plots else None)
        # One run, then exit: figures may be drawn in a forked child on a free core.
        assessment = assess_run(_run_source(run_dir, tracking_uri), judge_spec, plot_dir, plots=not no_plots,
                                images=not no_images, fork_plots=True)
        if assessment.judge_fallback:
            click.echo(f"judge: rules ({assessment.judge_fallback})", err=True)
        elif judge_spec == "auto":
            click.echo(f"judge: {assessment.judge} ({_auto_judge_reason()})", err=True)
        written: list[Path | str] = [*write_reports(assessment, out_dir), *assessment.plots] if out_dir else []
        # With --out the files are the output: stdout keeps only what a pipe needs (the JSON contract; no second
        # copy of a page already in DIR), and "Wrote: ..." goes to stderr (the text report ends with it instead).
        if fmt == "json":
            click.echo(contract_json(assessment))
        elif fmt == "markdown" and out_dir is None:
            click.echo(render_markdown(assessment), nl=False)
        elif fmt == "html" and out_dir is None:
            click.echo(render_html(assessment), nl=False)
        elif fmt == "text":
            render_assessment(assessment, _console(), written)
        if fmt != "text" and written:
            click.echo(f"Wrote: {', '.join(str(p) for p in written)}", err=True)
    ctx.exit(assessment.exit_code)


@cli.command()
@click.argument("run_dir", type=click.Path(path_type=Path))
@click.option("--out", "out_dir", required=True, type=click.Path(path_type=Path, file_okay=False),
              help="Where system.md, user.md, image-N.png and schema.json go.")
@click.option("--judge", "judge_spec", default="anthropic", show_default=True, metavar="anthropic|openai",
              help="Whose request to export (the text is the same; the request format differs).")
@click.option("--no-images", is_flag=True, help="Leave the dashboard out, as `assess --no-images` does.")
def prompt(run_dir: Path, out_dir: Path, judge_spec: str, no_images: bool) -> None:
    """Write exactly what an LLM judge would send for RUN_DIR, to read, paste into any chat model, or answer offline.

    Save an answer as DIR/<run name>/verdict.json and score it with `assessor assess RUN_DIR --judge verdicts:DIR`.
    """
    from assessor.numpy_env import import_numpy_for_one_shot

    import_numpy_for_one_shot()  # before anything loads numpy: one BLAS thread, no huge-page advice
    from assessor.pipeline import write_prompt

    for path in write_prompt(run_dir, out_dir, judge=judge_spec, images=not no_images):
        click.echo(str(path))


@cli.command("eval")
@click.argument("source", default="evals", type=click.Path(path_type=Path))
@click.option("--judge", "judge_specs", multiple=True, default=("rules",), show_default=True,
              metavar="rules|anthropic[:MODEL]|openai[:MODEL]|fake|replay:DIR|verdicts:DIR",
              help="A judge to score; repeat to compare judges side by side. verdicts:DIR scores answers written "
              "as DIR/<case>/verdict.json.")
@click.option("--baseline", "baselines", multiple=True, metavar="thresholds",
              help="A judge shown as the baseline column (thresholds: the fixed callback alerts).")
@click.option("--subset", type=click.Choice(["all", "fast", "synthetic", "real"]), default="all", show_default=True,
              help="fast: cases tagged fast plus one synthetic case per pattern.")
@click.option("--case", "names", multiple=True, metavar="GLOB",
              help="Only cases whose name or set (case file: real_runs, holdout2, ...) matches; `!GLOB` leaves "
              "them out; repeatable.")
@click.option("--verbose", is_flag=True, help="List every case left out, with the reason.")
@click.option("--format", "fmt", type=click.Choice(["markdown", "json"]), default="markdown", show_default=True)
@click.option("--out", "out_dir", type=click.Path(path_type=Path, file_okay=False),
              help="Also write eval.md and eval.json here.")
@click.option("--cassettes", type=click.Path(path_type=Path, file_okay=False),
              help="Where LLM judgements are recorded and replayed from [default: SOURCE/cassettes].")
@click.option("--record", is_flag=True, help="Call LLM judges live even where a cassette exists, and re-record.")
@click.option("--replay-llm", is_flag=True, help="Also replay live LLM judges on truncated runs (detection delay).")
@click.option("--delay-points", type=click.IntRange(min=1), default=12, show_default=True,
              help="Truncation points per failing run for the detection delay.")
@click.option("--cache", "cache_dir", type=click.Path(path_type=Path, file_okay=False),
              help="Where generated runs are kept [default: SOURCE/.cache].")
@click.option("--no-images", is_flag=True, help="Do not send the dashboard image to LLM judges.")
@click.option("--price", "prices", multiple=True, metavar="JUDGE=IN,OUT",
              help="USD per million input,output tokens, to estimate costs a judge does not report.")
@click.option("--check-floor", type=click.Path(path_type=Path, dir_okay=False),
              help="Exit 1 if the rules judge is below the floor recorded in this JSON file.")
@click.option("--write-floor", type=click.Path(path_type=Path, dir_okay=False),
              help="Record the rules judge's current scores (minus a small margin) as the floor.")
@click.option("--export-prompts", "export_dir", type=click.Path(path_type=Path, file_okay=False),
              help="Judge nothing: write each case's LLM prompt into DIR/<case>/ (as `assessor prompt` does).")
@click.pass_context
def eval_(ctx: click.Context, source: Path, judge_specs: tuple[str, ...], baselines: tuple[str, ...], subset: str,
          names: tuple[str, ...], fmt: str, out_dir: Path | None, cassettes: Path | None, record: bool,
          replay_llm: bool, delay_points: int, cache_dir: Path | None, no_images: bool, prices: tuple[str, ...],
          check_floor: Path | None, write_floor: Path | None, export_dir: Path | None, verbose: bool) -> None:
    """Score judges on the labelled cases in SOURCE (a folder of case files, or one file) [default: evals]."""
    from assessor.evals import harness
    from assessor.evals.report import progress_bar, render_json, render_markdown, write_reports

    left_out = _LeftOut(verbose)
    if export_dir is not None:
        from assessor.evals.harness.export import export_prompts

        written = export_prompts(source, export_dir, subset=subset, names=names, cache_dir=cache_dir,
                                 images=not no_images, warn=left_out)
        left_out.summarise()
        click.echo(f"wrote the prompts of {len(written)} cases to {export_dir}/<case>/", err=True)
        return

    floor = harness.read_floor(check_floor) if check_floor is not None else None
    root = source if source.is_dir() else source.parent
    judges = harness.build_judges(judge_specs, baselines, prices, cassettes=cassettes or root / "cassettes",
                                  record=record, replay_llm=replay_llm, images=not no_images)
    with progress_bar() as bar:
        report = harness.run_eval(source, judges, subset=subset, names=names, cache_dir=cache_dir,
                                  delay_count=delay_points, progress=bar, warn=left_out)
    left_out.summarise()
    if floor is not None:
        report.floor = harness.check_floor(report, floor)
    if write_floor is not None:
        harness.write_floor(harness.floor_from(report), write_floor)
        click.echo(f"floor written to {write_floor}", err=True)
    if out_dir is not None:
        write_reports(report, out_dir)
    click.echo(render_json(report) if fmt == "json" else render_markdown(report), nl=False)
    if report.floor is not None:
        click.echo(report.floor.message, err=True)
        ctx.exit(0 if report.floor.passed else 1)


class _LeftOut:
    """What `eval` leaves out: runs not on this machine yet are one line per command that brings them; the rest listed.

    Real runs kept out of the repository by their licence say `fetch it with ...`; holdout runs, which their set's
    script writes, say `write the runs with ...` (see `assessor.evals.harness.loading.locate_runs`).
    """

    _FIX = re.compile(r"(?:fetch it|write the runs) with `([^`]+)`$")

    def __init__(self, verbose: bool) -> None:
        self.verbose = verbose
        self.by_fix: dict[str, int] = {}

    def __call__(self, message: str) -> None:
        fix = self._FIX.search(message)
        if fix is None or self.verbose:
            click.echo(message, err=True)
        else:
            self.by_fix[fix.group(1)] = self.by_fix.get(fix.group(1), 0) + 1

    def summarise(self) -> None:
        if self.by_fix:
            fixes = "; ".join(f"{count} by `{command}`" for command, count in self.by_fix.items())
            total = sum(self.by_fix.values())
            click.echo(f"left out {total} cases whose runs are not on this machine yet (brought here {fixes}); "
                       "--verbose lists them", err=True)


@cli.command("fetch-real-runs")
@click.argument("source", default="evals", type=click.Path(path_type=Path, file_okay=False))
@click.option("--run", "names", multiple=True, metavar="NAME", help="Only this run; repeatable [default: all].")
@click.option("--mirror", metavar="URL", help="A copy of the team's real-runs folder served as URL/<run>/<file>; "
              "needed for files the team wrote (transcriptions), which are published nowhere upstream.")
@click.pass_context
def fetch_real_runs(ctx: click.Context, source: Path, names: tuple[str, ...], mirror: str | None) -> None:
    """Fetch the real runs of the eval set that the repository may not hold into SOURCE/real-runs/.

    Every file is checked against the sha256 in SOURCE/real-runs/manifest.yaml; a run with any file that differs
    is refused. Runs already here (committed, fetched before, or in ../shared/real-runs) are left alone.
    """
    from assessor.evals.real_runs import FOLDER, fetch

    report = fetch(source / FOLDER, names=names, mirror=mirror, say=lambda m: click.echo(m, err=True))
    click.echo(report.line(), err=True)
    ctx.exit(1 if report.failed else 0)


@cli.group()
def slack() -> None:
    """Post verdicts to Slack, or run the Slack bot (needs SLACK_BOT_TOKEN; pip install "assessor[slack]")."""


@slack.command("post")
@click.argument("run_dir", type=click.Path(path_type=Path))
@click.option("--channel", required=True, metavar="CHANNEL_ID", help="The channel ID (C…) the bot is a member of.")
@click.option("--judge", "judge_spec", default="auto", show_default=True, metavar="auto|rules|anthropic[:MODEL]|"
              "openai[:MODEL]|fake", help="Who decides, as for `assessor assess`.")
@click.option("--out", "out_dir", type=click.Path(path_type=Path, file_okay=False),
              help="Also write report.html, report.md, verdict.json and the plots here.")
@click.option("--report-url", help="Where readers find the full report (shown under the verdict).")
@click.option("--no-images", is_flag=True, help="Do not send the dashboard image to an LLM judge.")
@click.pass_context
def slack_post(ctx: click.Context, run_dir: Path, channel: str, judge_spec: str, out_dir: Path | None,
               report_url: str | None, no_images: bool) -> None:
    """Assess RUN_DIR and post the verdict with its dashboard to a Slack channel. Exit codes as for `assess`."""
    from assessor.integrations.slack import post_run

    assessment, posted = post_run(run_dir, channel, judge=judge_spec, out_dir=out_dir, report_url=report_url,
                                  images=not no_images)
    click.echo(f"posted {assessment.verdict.decision} for {one_line(assessment.run)} to {posted.channel} "
               f"(ts {posted.ts}{', with the dashboard' if posted.file_id else ''})")
    ctx.exit(assessment.exit_code)


@slack.command("bot")
@click.option("--root", "roots", multiple=True, required=True, type=click.Path(path_type=Path, file_okay=False),
              help="A folder of runs; runs are named relative to it. Repeatable.")
@click.option("--judge", "judge_spec", default="auto", show_default=True, metavar="auto|rules|anthropic[:MODEL]|"
              "openai[:MODEL]|fake", help="Who decides, as for `assessor assess`.")
@click.option("--mlflow-server", "tracking_servers", multiple=True, metavar="URL",
              help="An MLflow tracking server (http://HOST:PORT) whose runs may be named as mlflow://HOST:PORT/RUN_ID; "
              "repeatable; none by default.")
def slack_bot(roots: tuple[Path, ...], judge_spec: str, tracking_servers: tuple[str, ...]) -> None:
    """Answer `assess <run>`, `status`, `watch <run> every 2h`, `unwatch <run>` in Slack (Socket Mode).

    Needs SLACK_BOT_TOKEN (xoxb-…) and SLACK_APP_TOKEN (xapp-…).
    """
    from assessor.integrations.slack_bot import serve

    serve(list(roots), judge=judge_spec, on_ready=lambda line: click.echo(line, err=True),
          tracking_servers=tracking_servers)


@cli.command()
@click.argument("run_dir")
@click.option("--every", default="15m", show_default=True, metavar="DURATION",
              help="Time between checks: 90s, 15m, 2h, 1d.")
@click.option("--notify", "notify", multiple=True, metavar="stdout|slack:CHANNEL|webhook:URL",
              help="Where events go; repeatable [default: stdout].")
@click.option("--judge", "judge_spec", default="rules", show_default=True, help="The judge used at every check.")
@click.option("--llm-judge", metavar="anthropic:MODEL|openai:MODEL",
              help="Called only when the diagnostics changed materially since its last verdict.")
@click.option("--heartbeat", metavar="DURATION", help="Send the current verdict after this long without an event.")
@click.option("--state", "state_path", type=click.Path(path_type=Path, dir_okay=False),
              help="The state file [default: $XDG_STATE_HOME/assessor/watch/<run hash>.json].")
@click.option("--once", is_flag=True, help="One check, then exit with the assess exit code (for cron, timers).")
@click.option("--idle-timeout", default="6h", show_default=True, metavar="DURATION",
              help="End the watch after this long without a new step.")
@click.option("--out", "out_dir", type=click.Path(path_type=Path, file_okay=False),
              help="Write the reports and plots of each full check here.")
@click.option("--full", is_flag=True, help="Diagnose the whole run at every check; never hold the last verdict over "
              "a few immaterial new steps.")
@_TRACKING
@click.pass_context
def watch(ctx: click.Context, run_dir: str, every: str, notify: tuple[str, ...], judge_spec: str,
          llm_judge: str | None, heartbeat: str | None, state_path: Path | None, once: bool, idle_timeout: str,
          out_dir: Path | None, full: bool, tracking_uri: str | None) -> None:
    """Check RUN_DIR every so often; notify when the verdict changes; end when the run ends.

    A check that finds only a few new steps (under 1% of the run), all within the noise bands of the last full
    check, with no new checkpoint, NaN, metric or end of training, holds that check's verdict and says so.

    RUN_DIR may also be mlflow://HOST:PORT/RUN_ID, a run on an MLflow tracking server.
    """
    from assessor.integrations.watch import make_watcher

    watcher = make_watcher(_run_source(run_dir, tracking_uri), every=every, notify=notify or ("stdout",),
                           judge=judge_spec, llm_judge=llm_judge, heartbeat=heartbeat, state_path=state_path,
                           idle_timeout=idle_timeout, out_dir=out_dir, full=full)
    if once:
        outcome = watcher.check()
        for reason in outcome.reasons:
            click.echo(f"watch: {one_line(reason)}", err=True)
    interrupted = False
    try:
        summary = watcher.summary() if once else watcher.run()
    except KeyboardInterrupt:  # Ctrl-C ends a looping watch; its counters are what the user asked for
        summary, interrupted = watcher.summary(), True
    click.echo(f"watch: {one_line(summary.line())}" + ("; interrupted (Ctrl-C)" if interrupted else ""), err=True)
    if interrupted:
        ctx.exit(EXIT_INTERRUPTED)
    ctx.exit(summary.last.exit_code if once and summary.last else 0)

def _auto_judge_reason() -> str:
    from assessor.judge import KEY_VARIABLES

    variables = list(KEY_VARIABLES.values())  # in the order `auto` tries them
    for i, variable in enumerate(variables):
        if os.environ.get(variable):
            return f"{variable} is set" + (f", {' or '.join(variables[:i])} is not" if i else "")
    return f"no {' or '.join(variables)} set"


def _console() -> Console:
    from rich.console import Console  # here, not at the top: `--version` and `--help` never draw

    # Piped output (a cron mail, a CI log) is not 80 columns wide: do not truncate metric names there.
    return Console(highlight=False, width=None if sys.stdout.isatty() else 160)


# Commands that read a run, write their output and end the process: nothing of theirs is left for the interpreter's
# teardown to finish once they return (no threads, every file closed).
_ONE_SHOT = frozenset({"inspect", "diagnose", "assess", "prompt"})


def main(argv: list[str] | None = None) -> int:
    """Entry point: runs the CLI and maps errors to exit codes (2 bad input, 1 internal error).

    Run as the `assessor` program (no `argv`), a one-shot command ends the process itself once done: see
    `_exit_now`. Called with `argv` (a test, a host program), it returns the exit code.
    """
    code = _run(argv)
    if argv is None and next((a for a in sys.argv[1:] if not a.startswith("-")), None) in _ONE_SHOT:
        _exit_now(code)
    return code


def _exit_now(code: int) -> NoReturn:
    """End the process without the interpreter's teardown, after what an exit must still do.

    Python's teardown of the modules a run needs (pandas, matplotlib, pydantic models, the diagnosis) takes about
    0.3 s, and a process about to end gains nothing from it. The `atexit` handlers still run (a coverage tool, a
    logging handler) and the output streams are flushed; the command has closed every file it wrote.
    """
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a reader that went away (`| head`): nothing more to say
            stream.flush()
    os._exit(code)


def _run(argv: list[str] | None) -> int:
    try:
        code = cli.main(args=argv, prog_name="assessor", standalone_mode=False)
    except AssessorError as error:
        click.echo(f"Error: {one_line(error)}", err=True)
        return error.exit_code
    except click.exceptions.Exit as exit_:
        return exit_.exit_code
    except click.ClickException as error:
        error.show()
        return EXIT_BAD_INPUT
    except click.exceptions.Abort:
        click.echo("Aborted.", err=True)
        return EXIT_INTERNAL
    except Exception as error:  # the last line of defence: never a bare traceback for users
        if os.environ.get("ASSESSOR_DEBUG"):
            raise
        click.echo(
            f"Error: internal error ({type(error).__name__}: {one_line(error)}). Set ASSESSOR_DEBUG=1 for the "
            "traceback and report it with the command you ran.",
            err=True,
        )
        return EXIT_INTERNAL
    return code if isinstance(code, int) else 0  # `ctx.exit(n)` comes back here (assess: 10 stop, 11 rollback)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
