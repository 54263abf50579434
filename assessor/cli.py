"""The `assessor` command. Commands parse options, call one library function and render; no logic here."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click
from rich.console import Console

from assessor.errors import AssessorError

EXIT_BAD_INPUT = 2
EXIT_INTERNAL = 1


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="assessor")
def cli() -> None:
    """Read RL post-training runs and say: continue, stop, or roll back."""


@cli.command()
@click.argument("run_dir", type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def inspect(run_dir: Path, fmt: str) -> None:
    """Show what was read from RUN_DIR: sources, metrics, checkpoints, GPU telemetry, facts, warnings."""
    from assessor import inspect_run, load_run
    from assessor.report.inspect_text import render_inspection

    report = inspect_run(load_run(run_dir))
    if fmt == "json":
        click.echo(report.model_dump_json(indent=2))
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
        click.echo(diagnostics.model_dump_json(indent=2))
    else:
        render_diagnostics(diagnostics, _console())


def _console() -> Console:
    # Piped output (a cron mail, a CI log) is not 80 columns wide: do not truncate metric names there.
    return Console(highlight=False, width=None if sys.stdout.isatty() else 160)


def main(argv: list[str] | None = None) -> int:
    """Entry point: runs the CLI and maps errors to exit codes (2 bad input, 1 internal error)."""
    try:
        cli.main(args=argv, prog_name="assessor", standalone_mode=False)
    except AssessorError as error:
        click.echo(f"Error: {error}", err=True)
        return EXIT_BAD_INPUT
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
            f"Error: internal error ({type(error).__name__}: {error}). Set ASSESSOR_DEBUG=1 for the traceback "
            "and report it with the command you ran.",
            err=True,
        )
        return EXIT_INTERNAL
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
