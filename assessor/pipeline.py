"""`assess`: ingest → diagnose → plots → judge, in one call."""

from __future__ import annotations

import tempfile
import time
from dataclasses import replace
from pathlib import Path

from assessor.assessment import Assessment
from assessor.diagnose import diagnose
from assessor.diagnose.models import Diagnostics
from assessor.errors import JudgeUnavailableError
from assessor.ingest import load_run
from assessor.judge import Judge, JudgeRequest, Verdict, get_judge
from assessor.run import Run


def assess(
    path: str | Path, judge: str | Judge = "auto", out_dir: Path | None = None, plots: bool = True,
    images: bool = True, fork_plots: bool = False,
) -> Assessment:
    """Assess one run directory.

    Args:
        path: the run directory (or one log file).
        judge: a judge name (`auto`, `rules`, `anthropic[:MODEL]`, `openai[:MODEL]`, `fake`) or a `Judge`.
        out_dir: where to write the plots; without it, plots are only made (in a temporary folder) for judges
            that look at images.
        plots: False skips the plots altogether.
        images: False keeps LLM judges from being sent the dashboard image.
        fork_plots: when a core is free, draw some figures in a forked child (`render_plots`' `fork`); for a
            one-shot command, not a host program.
    """
    run = load_run(path)
    # Read off the disk now: a run that has stopped writing is called stalled (evals and replays leave this out).
    return assess_run(run, judge, out_dir=out_dir, plots=plots, images=images,
                      diagnostics=diagnose(run, now=time.time()), fork_plots=fork_plots)


def assess_run(
    run: Run, judge: str | Judge = "auto", out_dir: Path | None = None, plots: bool = True, images: bool = True,
    diagnostics: Diagnostics | None = None, fall_back_to_rules: bool | None = None, fork_plots: bool = False,
) -> Assessment:
    """Assess a run already in memory (e.g. one truncated at an earlier step, to replay a check).

    `diagnostics` may be passed when they were already computed for this very run (a second judge on the same
    check), so the diagnosis is not done twice. When the judge's API cannot be reached (`JudgeUnavailableError`)
    and `fall_back_to_rules` is true (the default for `judge="auto"`, which chose an LLM only because a key was
    set), the rules judge decides instead and `Assessment.judge_fallback` says why; a judge named explicitly fails.
    `fork_plots` is `assess`'s.
    """
    diagnostics = diagnose(run) if diagnostics is None else diagnostics
    if fall_back_to_rules is None:
        fall_back_to_rules = judge == "auto"
    chosen = get_judge(judge, images=images) if isinstance(judge, str) else judge
    wants_images = bool(getattr(chosen, "wants_images", False))
    written: list[Path] = []
    with tempfile.TemporaryDirectory(prefix="assessor-") as scratch:
        target = out_dir if out_dir is not None else (Path(scratch) if wants_images else None)
        if plots and target is not None and wants_images:  # the judge looks at the figures: drawn before it decides
            from assessor.plots import render_plots

            target.mkdir(parents=True, exist_ok=True)
            written = render_plots(run, diagnostics, target, fork=fork_plots)
        request = JudgeRequest(run=run, diagnostics=diagnostics, plots=written)
        fallback: str | None = None
        try:
            result = chosen.judge(request)
        except JudgeUnavailableError as error:
            if not fall_back_to_rules or chosen.name == "rules":
                raise
            fallback = f"{error}; the rules judge decided instead"
            chosen = get_judge("rules")
            result = chosen.judge(request)
    verdict = resolve_rollback(result.verdict, run)
    target_step = _rollback_target(run, verdict)
    if plots and out_dir is not None and not wants_images:
        from assessor.plots import render_plots

        # Drawn once the verdict is known, so the dashboard carries its rollback target from the start.
        out_dir.mkdir(parents=True, exist_ok=True)
        written = render_plots(run, diagnostics, out_dir, fork=fork_plots, rollback_step=target_step)
    elif target_step is not None and plots and out_dir is not None and written:
        _mark_rollback(run, diagnostics, target_step, out_dir)
    return Assessment(
        run=run.name, path=run.where, framework=run.facts.framework, algorithm=run.facts.algorithm,
        last_step=run.last_step, judge=chosen.name, verdict=verdict, diagnostics=diagnostics,
        plots=[str(p) for p in written] if out_dir is not None else [], usage=result.usage, judge_fallback=fallback,
    )


def _rollback_target(run: Run, verdict: Verdict) -> int | None:
    """The step a rollback goes back to: its checkpoint's on disk, else the verdict's step; None for no rollback."""
    if verdict.rollback_step is None:
        return None
    return next((c.step for c in run.checkpoints if c.path == verdict.rollback_checkpoint), verdict.rollback_step)


def _mark_rollback(run: Run, diagnostics: Diagnostics, step: int, out_dir: Path) -> None:
    """Redraw the dashboard written for the report with the rollback target on it (the judge saw it unmarked)."""
    from assessor.plots import dashboard_figure, save_figure

    save_figure(dashboard_figure(run, diagnostics, rollback_step=step), out_dir / "dashboard.png")


def write_prompt(
    path: str | Path, out_dir: Path, judge: str = "anthropic", images: bool = True, run: Run | None = None,
    now: float | None = None,
) -> list[Path]:
    """Write what an LLM judge would send for a run: `system.md`, `user.md`, `image-N.png`, `schema.json`.

    Args:
        path: the run directory (or log file); not read when `run` is given.
        out_dir: where the files go (made if needed).
        judge: `anthropic` or `openai` (a `:MODEL` suffix is ignored: the prompt does not depend on it).
        images: render and include the dashboard, as the judge does unless told `--no-images`.
        run: the run already in memory (e.g. an eval case).
        now: the moment the run is judged at, for its staleness (default: the wall clock when the run is read
            here, none for a run handed in; `assessor eval` passes the moment its case file was written).

    Returns:
        The files written.

    Raises:
        ConfigError: an unknown provider.
        AssessorError: the run cannot be read.
    """
    from assessor.judge.export import export_prompt

    # Read off the disk now, as `assess` reads it (so a stalled run is called stalled in both); a run handed in
    # (an eval case) is read as it is.
    if run is None:
        run = load_run(path)
        now = time.time() if now is None else now
    diagnostics = diagnose(run, now=now)
    with tempfile.TemporaryDirectory(prefix="assessor-prompt-") as scratch:
        plots: list[Path] = []
        if images:
            from assessor.plots import render_plots

            plots = render_plots(run, diagnostics, Path(scratch))
        exported = export_prompt(JudgeRequest(run=run, diagnostics=diagnostics, plots=plots),
                                 judge.partition(":")[0], images=images)
    return exported.write(out_dir)


def truncate(run: Run, last_step: int) -> Run:
    """The run as it looked at `last_step`: later metrics, NaN records, telemetry and checkpoints removed."""
    keep = run.metrics["step"].to_numpy() <= last_step
    nonfinite = run.nonfinite[run.nonfinite["step"] <= last_step] if len(run.nonfinite) else run.nonfinite
    gpu = run.gpu
    if gpu is not None and len(run.metrics) and run.metrics["wall_time"].notna().any():
        cutoff = run.metrics.loc[keep, "wall_time"].max()
        gpu = gpu[gpu["time"] <= cutoff] if cutoff == cutoff else gpu
    return replace(
        run, metrics=run.metrics[keep].reset_index(drop=True), nonfinite=nonfinite.reset_index(drop=True),
        checkpoints=[c for c in run.checkpoints if c.step <= last_step], gpu=gpu,
        samples=[s for s in run.samples if s.step is None or s.step <= last_step],
        # At an earlier step the run was still going: no end summary yet, and it was being written to then.
        facts=run.facts.model_copy(update={"training_ended": False, "training_crashed": None})
        if last_step < (run.last_step or 0) else run.facts,
        newest_write=None,
    )


def resolve_rollback(verdict: Verdict, run: Run) -> Verdict:
    """Point a rollback at a checkpoint that is really on disk: the newest at or before its step."""
    if verdict.decision != "rollback" or verdict.rollback_step is None:
        return verdict
    on_disk = {c.path for c in run.checkpoints}
    if verdict.rollback_checkpoint in on_disk:
        return verdict
    candidates = [c for c in run.checkpoints if c.step <= verdict.rollback_step]
    checkpoint = candidates[-1].path if candidates else None
    return verdict.model_copy(update={"rollback_checkpoint": checkpoint})
