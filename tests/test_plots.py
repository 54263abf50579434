from __future__ import annotations

import contextlib
import json
import math
import os
import struct
import sys
from pathlib import Path

import numpy as np
import pytest
from matplotlib.figure import Figure
from matplotlib.transforms import Bbox
from pydantic import BaseModel, ValidationError

from assessor import load_run, plots
from assessor.diagnose import diagnose
from assessor.diagnose import models as m
from assessor.plots import _forked, dashboard_figure, gpu_figure, kl_reward_figure, render_plots, save_figure
from assessor.plots._common import mark_spikes
from assessor.plots.dashboard import sheet_levels
from assessor.plots.style import (
    COLORS,
    DASHBOARD_PX,
    GPU_NO_TELEMETRY_PX,
    GPU_PX,
    KL_REWARD_PX,
    MAX_DRAWN,
    fmt_num,
    make_curve,
    minmax_decimate,
)
from assessor.run import Run
from tests.conftest import EXAMPLES

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def png_size(path: Path) -> tuple[int, int]:
    """Width and height from the IHDR chunk (and a check that it is a PNG at all)."""
    head = path.read_bytes()[:24]
    assert head[:8] == PNG_SIGNATURE, f"{path} is not a PNG"
    assert head[12:16] == b"IHDR"
    width, height = struct.unpack(">II", head[16:24])
    return width, height


def render(run_dir: Path, out: Path) -> dict[str, Path]:
    run = load_run(run_dir)
    written = render_plots(run, diagnose(run), out)
    assert all(p.parent == out for p in written)
    return {p.name: p for p in written}


def write_state(folder: Path, history: list[dict[str, object]]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    state = {"global_step": history[-1]["step"], "logging_steps": 1, "max_steps": 100, "log_history": history}
    (folder / "trainer_state.json").write_text(json.dumps(state), encoding="utf-8")
    return folder


def empty_diagnostics(run: Run) -> m.Diagnostics:
    """The run's diagnosis with every area emptied: plots must not depend on any area being filled in."""
    full = diagnose(run)
    update: dict[str, object] = {
        "signals": {}, "gpu": None, "findings": [], "absent": [],
        "kl_reward": m.KlRewardDiagnosis(kl_measured=False), "entropy": m.EntropyDiagnosis(pattern="absent"),
        "best_checkpoint": m.BestCheckpoint(basis="none", reason="nothing to go on"),
    }
    for name, value in full:
        if isinstance(value, BaseModel) and name not in update and name != "run":
            with contextlib.suppress(ValidationError):
                update[name] = type(value)()
    return full.model_copy(update=update)


# --------------------------------------------------------------------------- bundled examples
def test_trl_live_example_writes_all_three_figures(tmp_path):
    files = render(EXAMPLES / "trl-grpo-live", tmp_path)
    assert list(files) == ["dashboard.png", "kl_reward.png", "gpu.png"]  # KL logged, nvidia-smi log present
    assert png_size(files["dashboard.png"]) == DASHBOARD_PX
    assert png_size(files["kl_reward.png"]) == KL_REWARD_PX
    assert png_size(files["gpu.png"]) == GPU_PX


def test_verl_example_writes_all_three_figures(tmp_path):
    files = render(EXAMPLES / "verl-grpo-gsm8k", tmp_path)
    assert list(files) == ["dashboard.png", "kl_reward.png", "gpu.png"]  # phase timings from the console log
    assert png_size(files["dashboard.png"]) == DASHBOARD_PX
    assert png_size(files["gpu.png"]) == GPU_PX  # framework-reported memory fills the second row


# --------------------------------------------------------------------------- real runs
def test_dpo_run_has_no_kl_figure(real_runs, tmp_path):
    files = render(real_runs / "trl-dpo-qwen25-05b-orca-pairs", tmp_path)
    assert list(files) == ["dashboard.png"]  # no KL, no timings
    assert png_size(files["dashboard.png"]) == DASHBOARD_PX


def test_rfs_kl_run(real_runs, tmp_path):
    files = render(real_runs / "rfs-ch07-grpo-kl-500", tmp_path)
    assert list(files) == ["dashboard.png", "kl_reward.png"]
    assert png_size(files["kl_reward.png"]) == KL_REWARD_PX


def test_verl_tensorboard_run(real_runs, tmp_path):
    files = render(real_runs / "verl-grpo-gsm8k-q3b-fsdp-base", tmp_path)
    assert list(files) == ["dashboard.png", "kl_reward.png", "gpu.png"]
    assert all(png_size(p) in (DASHBOARD_PX, KL_REWARD_PX, GPU_PX) for p in files.values())


def test_trl_console_run_with_step_time_only(real_runs, tmp_path):
    files = render(real_runs / "trl-grpo-q7b-rho1.0-s43", tmp_path)
    assert list(files) == ["dashboard.png", "gpu.png"]  # beta = 0: no KL logged
    assert png_size(files["gpu.png"]) == GPU_NO_TELEMETRY_PX


# --------------------------------------------------------------------------- sparse and odd runs
def test_run_with_one_metric_renders(tmp_path):
    run_dir = write_state(tmp_path / "run", [{"step": s, "loss": 1.0 / s} for s in range(1, 30)])
    files = render(run_dir, tmp_path / "out")
    assert list(files) == ["dashboard.png"]
    assert png_size(files["dashboard.png"]) == DASHBOARD_PX


def test_run_with_a_single_point_renders(tmp_path):
    run_dir = write_state(tmp_path / "run", [{"step": 5, "reward": 0.3, "kl": 0.01}])
    files = render(run_dir, tmp_path / "out")
    assert list(files) == ["dashboard.png", "kl_reward.png"]  # a one-point path is a placeholder, not a crash


def test_empty_diagnostics_are_handled(tmp_path):
    run = load_run(EXAMPLES / "verl-grpo-gsm8k")
    written = render_plots(run, empty_diagnostics(run), tmp_path)
    assert [p.name for p in written] == ["dashboard.png", "kl_reward.png", "gpu.png"]


def test_constant_and_nonfinite_series(tmp_path):
    history: list[dict[str, object]] = [
        {"step": s, "reward": 0.0, "reward_std": 0.0, "kl": 0.0, "grad_norm": math.nan if s % 7 == 0 else 1e-3 * s,
         "loss": 0.0} for s in range(1, 60)
    ]
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    state = {"global_step": 59, "logging_steps": 1, "max_steps": 59, "log_history": history}
    (run_dir / "trainer_state.json").write_text(json.dumps(state), encoding="utf-8")  # json writes bare NaN
    files = render(run_dir, tmp_path / "out")
    assert "dashboard.png" in files


# --------------------------------------------------------------------------- layout
def odd_labels_run(folder: Path) -> Path:
    """Tick labels of every awkward kind: a multiplier (1e-7), an offset (+1e6), long decimals, a twin axis."""
    rng = np.random.default_rng(0)
    history: list[dict[str, object]] = [
        {"step": s, "loss": 1e-7 * (1 + rng.normal()), "reward": 0.5 + 0.001 * s + 0.05 * rng.normal(),
         "reward_std": 0.3 + 0.01 * rng.normal(), "frac_reward_zero_std": 0.1 + 0.001 * s, "kl": 1e6 + rng.normal(),
         "grad_norm": -123456.789 + 0.5 * rng.normal(), "completions/mean_length": 300 + s,
         "completions/clipped_ratio": 0.01, "entropy": 0.00012345 + 1e-6 * rng.normal(),
         "rewards/accuracy_reward/mean": 0.3 + 0.001 * s, "rewards/format_reward/mean": 0.9 - 0.0005 * s}
        for s in range(1, 301)
    ]
    return write_state(folder, history)


def drawn_panels(fig: Figure) -> list[Bbox]:
    """Each panel's drawn extent after a save (ticks, labels, title, legend; a twin's too), in pixels."""
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    panels: dict[tuple[float, ...], list[Bbox]] = {}
    for ax in fig.axes:
        panels.setdefault(tuple(np.round(ax.get_position().bounds, 6)), []).append(ax.get_tightbbox(renderer))
    return [Bbox.union(boxes) for boxes in panels.values()]


@pytest.mark.parametrize("source", ["trl-grpo-live", "verl-grpo-gsm8k", "odd labels"])
def test_panels_keep_their_labels_apart_without_a_layout_engine(source, tmp_path):
    run_dir = odd_labels_run(tmp_path / "run") if source == "odd labels" else EXAMPLES / source
    run = load_run(run_dir)
    diagnostics = diagnose(run)
    for name, make in (("dashboard", dashboard_figure), ("gpu", gpu_figure)):
        if name == "gpu" and source == "odd labels":
            continue
        fig = make(run, diagnostics)
        assert fig.get_layout_engine() is None  # placed once from the labels: no constrained layout at save time
        save_figure(fig, tmp_path / f"{name}.png")
        boxes = drawn_panels(fig)
        assert len(boxes) >= 3
        header = [text.get_window_extent() for text in fig.texts]  # the title, subtitle and key above the panels
        for i, box in enumerate(boxes):
            assert box.x0 >= -1 and box.y0 >= -1 and box.x1 <= fig.bbox.width + 1, (name, box)
            for other in boxes[i + 1:] + header:
                overlap = Bbox.intersection(box, other)
                assert overlap is None or overlap.width < 1 or overlap.height < 1, (name, box, other)


# --------------------------------------------------------------------------- figures drawn in a forked child
@pytest.fixture
def example() -> tuple[Run, m.Diagnostics]:
    run = load_run(EXAMPLES / "trl-grpo-live")
    return run, diagnose(run)


def assert_no_child_left() -> None:
    with pytest.raises(ChildProcessError):  # every child was waited for: no zombie, none still drawing
        os.waitpid(-1, os.WNOHANG)


def test_a_forked_child_draws_the_same_files(example, tmp_path, monkeypatch):
    run, diagnostics = example
    monkeypatch.setattr(_forked, "spare_core", lambda: True)
    forks: list[int] = []
    fork = os.fork
    monkeypatch.setattr(os, "fork", lambda: forks.append(os.getpid()) or fork())
    here = render_plots(run, diagnostics, tmp_path / "here")
    forked = render_plots(run, diagnostics, tmp_path / "forked", fork=True)
    assert forks == [os.getpid()]  # one child, and only when asked
    assert [p.name for p in forked] == [p.name for p in here] == ["dashboard.png", "kl_reward.png", "gpu.png"]
    assert [p.read_bytes() for p in forked] == [p.read_bytes() for p in here]
    assert_no_child_left()


@pytest.mark.parametrize("how", ["raises", "dies"])
def test_figures_a_child_could_not_draw_are_drawn_here(example, tmp_path, monkeypatch, how):
    run, diagnostics = example
    monkeypatch.setattr(_forked, "spare_core", lambda: True)
    parent, drawn_here = os.getpid(), []

    def gpu_here_only(run: Run, diagnostics: m.Diagnostics) -> Figure:
        if os.getpid() != parent:
            if how == "dies":
                os._exit(3)
            raise RuntimeError("the child could not draw")
        drawn_here.append("gpu")
        return gpu_figure(run, diagnostics)

    monkeypatch.setattr(plots, "gpu_figure", gpu_here_only)
    written = render_plots(run, diagnostics, tmp_path, fork=True)
    assert [p.name for p in written] == ["dashboard.png", "kl_reward.png", "gpu.png"]
    assert drawn_here == ["gpu"] and all(png_size(p) for p in written)
    assert_no_child_left()


def test_a_failure_here_still_waits_for_the_child(example, tmp_path, monkeypatch):
    run, diagnostics = example
    monkeypatch.setattr(_forked, "spare_core", lambda: True)

    def broken(run: Run, diagnostics: m.Diagnostics, rollback_step: int | None = None) -> Figure:
        raise RuntimeError("the dashboard could not be drawn")

    monkeypatch.setattr(plots, "dashboard_figure", broken)
    with pytest.raises(RuntimeError, match="dashboard could not be drawn"):
        render_plots(run, diagnostics, tmp_path, fork=True)
    assert_no_child_left()
    assert (tmp_path / "gpu.png").is_file()  # the child finished its figures before it was reaped


def test_no_child_without_a_spare_core(example, tmp_path, monkeypatch):
    run, diagnostics = example
    monkeypatch.setattr(_forked, "spare_core", lambda: False)
    monkeypatch.setattr(os, "fork", lambda: pytest.fail("forked without a spare core"))
    assert len(render_plots(run, diagnostics, tmp_path, fork=True)) == 3


@pytest.mark.parametrize(("cores", "load", "spare"),
                         [(1, 0.0, False), (2, 0.3, True), (2, 1.2, True), (2, 2.5, False), (8, 7.5, True)])
def test_a_core_is_spare_while_the_load_average_is_below_the_cores(monkeypatch, cores, load, spare):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(cores)), raising=False)
    monkeypatch.setattr(os, "getloadavg", lambda: (load, load, load))
    assert _forked.spare_core() is spare


def test_only_the_command_line_assess_forks(tmp_path, monkeypatch):
    from assessor import pipeline
    from assessor.cli import main

    asked: list[bool] = []

    def record(run: Run, diagnostics: m.Diagnostics, out_dir: Path, fork: bool = False,
               rollback_step: int | None = None) -> list[Path]:
        asked.append(fork)
        return []

    monkeypatch.setattr(plots, "render_plots", record)
    assert main(["assess", str(EXAMPLES / "trl-grpo-live"), "--judge", "rules", "--out", str(tmp_path / "cli"),
                 "--format", "json"]) in (0, 10, 11)
    pipeline.assess(EXAMPLES / "trl-grpo-live", "rules", tmp_path / "library")
    assert asked == [True, False]


# --------------------------------------------------------------------------- no global state
def test_pyplot_state_untouched(tmp_path):
    import matplotlib
    import matplotlib.pyplot as plt

    backend = matplotlib.get_backend()
    run = load_run(EXAMPLES / "trl-grpo-live")
    diagnostics = diagnose(run)
    figures = [dashboard_figure(run, diagnostics), kl_reward_figure(run, diagnostics), gpu_figure(run, diagnostics)]
    assert all(isinstance(f, Figure) for f in figures)
    render_plots(run, diagnostics, tmp_path)
    assert plt.get_fignums() == []
    assert matplotlib.get_backend() == backend


def test_plots_do_not_import_pyplot():
    import subprocess

    code = ("import sys; from pathlib import Path; from assessor import load_run; from assessor.diagnose import "
            "diagnose; from assessor.plots import render_plots; import tempfile; "
            f"run = load_run({str(EXAMPLES / 'trl-grpo-live')!r}); "
            "render_plots(run, diagnose(run), Path(tempfile.mkdtemp())); "
            "print('matplotlib.pyplot' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    assert out.stdout.strip().splitlines()[-1] == "False"


# --------------------------------------------------------------------------- large runs
def test_minmax_decimation_keeps_spikes_and_the_last_point():
    x = np.arange(100_000, dtype=float)
    y = np.sin(x / 5000)
    y[12_345] = 50.0
    y[77_777] = -50.0
    dx, dy = minmax_decimate(x, y, MAX_DRAWN)
    assert len(dx) <= MAX_DRAWN + 4
    assert 50.0 in dy and -50.0 in dy
    assert dx[-1] == x[-1]
    assert np.all(np.diff(dx) > 0)


def test_minmax_decimation_draws_the_same_envelope():
    """Both ends, and every bin's lowest and highest raw point, survive: the drawn envelope is the full line's."""
    rng = np.random.default_rng(5)
    for n in (2_001, 99_999, 300_007):
        x = np.arange(n, dtype=float) * 10
        y = np.cumsum(rng.normal(size=n))
        y[rng.integers(0, n, 20)] += rng.normal(0, 100, 20)  # spikes anywhere, the tail included
        y[0], y[-1] = 1e3, -1e3  # the ends are extremes too
        dx, dy = minmax_decimate(x, y, MAX_DRAWN)
        assert len(dx) <= MAX_DRAWN + 2
        assert (dx[0], dy[0], dx[-1], dy[-1]) == (x[0], y[0], x[-1], y[-1])
        assert dy.max() == y.max() and dy.min() == y.min()
        size = int(np.ceil(n / ((MAX_DRAWN - 2) // 2)))
        for start in range(0, n, size):  # each bin (the short last one included) keeps its extremes
            inside = (dx >= x[start]) & (dx <= x[min(n, start + size) - 1])
            assert dy[inside].max() == y[start:start + size].max()
            assert dy[inside].min() == y[start:start + size].min()
        pairs = dict(zip(x.tolist(), y.tolist(), strict=True))
        assert all(pairs[a] == b for a, b in zip(dx.tolist(), dy.tolist(), strict=True))  # points, not new values


def test_long_curve_is_reduced_for_drawing():
    x = np.arange(1, 100_001)
    curve = make_curve(x, np.random.default_rng(0).normal(size=len(x)))
    assert len(curve.draw_values) <= MAX_DRAWN + 4
    assert len(curve.smooth_values) <= 401
    assert curve.smooth_steps[-1] >= 99_000


# --- what the dashboard shows an LLM judge


def figure_texts(fig: Figure) -> list[str]:
    texts = [t.get_text() for t in fig.texts]
    for ax in fig.axes:
        texts += [ax.get_title(loc="left"), *(t.get_text() for t in ax.texts)]
        legend = ax.get_legend()
        if legend is not None:
            texts += [t.get_text() for t in legend.get_texts()]
    return [t.strip() for t in texts]


def panel_titles(fig: Figure) -> list[str]:
    return [ax.get_title(loc="left") for ax in fig.axes if ax.get_title(loc="left")]


def test_no_placeholder_and_no_all_zero_panels(tmp_path):
    n = 60
    history = [{"step": i, "reward": 0.2 + 0.01 * i, "clip_ratio/region_mean": 0.0, "entropy": 0.5 - 0.001 * i,
                "completions/mean_length": 200.0 + i} for i in range(1, n + 1)]
    run = load_run(write_state(tmp_path / "run", history))
    fig = dashboard_figure(run, diagnose(run))
    titles = panel_titles(fig)
    assert titles[0].startswith("Reward") and any(t.startswith("Token entropy") for t in titles)
    assert not any(t.startswith(("Ratio clipping", "KL", "Learning signal")) for t in titles), titles
    assert not any("not logged" in t for t in figure_texts(fig))


def test_a_run_with_nothing_drawable_says_so_once(tmp_path):
    history = [{"step": i, "reward": 0.0, "kl": 0.0} for i in range(1, 30)]
    run = load_run(write_state(tmp_path / "run", history))
    fig = dashboard_figure(run, diagnose(run))
    assert fig.axes == [] and any("No training curves" in t for t in figure_texts(fig))


def test_no_chosen_marker_unless_a_rollback_is_proposed():
    run = load_run(EXAMPLES / "verl-grpo-gsm8k")
    diagnostics = diagnose(run)
    assert diagnostics.best_checkpoint.checkpoint_step == 100
    plain = figure_texts(dashboard_figure(run, diagnostics))
    assert not any("chosen" in t or "ckpt" in t or "rollback" in t for t in plain), plain
    marked = figure_texts(dashboard_figure(run, diagnostics, rollback_step=100))
    assert "rollback: ckpt 100" in marked and "ckpt 100" in marked
    assert any("verdict: roll back to ckpt 100" in t for t in marked)
    elsewhere = figure_texts(dashboard_figure(run, diagnostics, rollback_step=130))
    assert "rollback: step 130 (no ckpt on disk)" in elsewhere


def test_the_report_dashboard_is_marked_only_after_a_rollback_verdict(tmp_path):
    from assessor.judge import Verdict
    from assessor.judge.fake import FakeJudge
    from assessor.pipeline import assess

    def verdict(decision: str, step: int | None) -> Verdict:
        return Verdict(decision=decision, rollback_step=step, confidence=0.7, headline="h", rationale="r",
                       evidence=[])

    judge = FakeJudge([verdict("rollback", 100), verdict("continue", None)])
    judge.wants_images = True  # type: ignore[attr-defined]
    rolled = assess(EXAMPLES / "verl-grpo-gsm8k", judge, out_dir=tmp_path / "rollback")
    kept = assess(EXAMPLES / "verl-grpo-gsm8k", judge, out_dir=tmp_path / "continue")
    assert rolled.verdict.rollback_checkpoint is not None and kept.verdict.decision == "continue"
    seen = judge.requests[0].plots[0]
    assert seen.name == "dashboard.png" and seen.parent == tmp_path / "rollback"
    marked, plain = (tmp_path / "rollback" / "dashboard.png"), (tmp_path / "continue" / "dashboard.png")
    assert png_size(marked) == png_size(plain) == DASHBOARD_PX
    assert marked.read_bytes() != plain.read_bytes()


def test_a_judge_that_reads_no_image_has_the_dashboard_drawn_once_with_its_rollback(tmp_path, monkeypatch):
    from assessor.judge import Verdict
    from assessor.judge.fake import FakeJudge
    from assessor.pipeline import assess

    run = load_run(EXAMPLES / "verl-grpo-gsm8k")
    expected = tmp_path / "expected.png"
    save_figure(dashboard_figure(run, diagnose(run), rollback_step=100), expected)
    drawn: list[int | None] = []

    def counted(run: Run, diagnostics: m.Diagnostics, rollback_step: int | None = None) -> Figure:
        drawn.append(rollback_step)
        return dashboard_figure(run, diagnostics, rollback_step=rollback_step)

    monkeypatch.setattr(plots, "dashboard_figure", counted)
    judge = FakeJudge([Verdict(decision="rollback", rollback_step=100, confidence=0.7, headline="h", rationale="r",
                               evidence=[])])
    assessment = assess(EXAMPLES / "verl-grpo-gsm8k", judge, out_dir=tmp_path / "out")
    assert assessment.verdict.rollback_step == 100 and judge.requests[0].plots == []
    assert drawn == [100]  # once, marked: not drawn plain and then redrawn
    assert (tmp_path / "out" / "dashboard.png").read_bytes() == expected.read_bytes()
    assert [Path(p).name for p in assessment.plots] == ["dashboard.png", "kl_reward.png", "gpu.png"]


def test_a_decline_draws_the_stretches_the_sheet_names_and_its_one_peak():
    run = load_run(EXAMPLES / "verl-grpo-gsm8k")
    diagnostics = diagnose(run)
    peak, latest = diagnostics.reward.peak_stretch, diagnostics.reward.latest_stretch
    assert peak is not None and latest is not None
    texts = figure_texts(dashboard_figure(run, diagnostics))
    assert f"decline test: best steps {peak.first_step}–{peak.last_step}" in texts
    assert f"vs latest steps {latest.first_step}–{latest.last_step}" in texts
    # the stretches' means are not written as a second peak: the star is the table's peak
    summary = diagnostics.signals["reward_mean"]
    assert f"train peak {fmt_num(summary.peak)} @ {summary.peak_step}" in texts
    assert not any(fmt_num(peak.mean) in t for t in texts if "peak" in t and peak.mean != summary.peak)
    # the sheet's decline finding names the same stretch and quotes the same peak
    finding = next(f for f in diagnostics.reward.findings if f.kind == "reward_peaked_then_declined")
    assert f"steps {peak.first_step}–{peak.last_step}, averaged" in finding.observation
    # one step for the peak: the finding is placed where the table and the text put it, not at the stretch's centre
    assert finding.steps == [summary.peak_step]
    assert f"peaked at {fmt_num(summary.peak)} around step {summary.peak_step}" in finding.observation


def test_the_reward_line_is_the_sheets_stretch_means():
    run = load_run(EXAMPLES / "verl-grpo-gsm8k")
    summary = diagnose(run).signals["reward_mean"]
    line = sheet_levels(make_curve(*(np.asarray(a) for a in (run.series("reward_mean").index,
                                                               run.series("reward_mean").to_numpy()))))
    assert line.smooth_values[0] == pytest.approx(summary.start) and line.smooth_values[-1] == pytest.approx(
        summary.now)
    assert float(line.smooth_values.max()) == pytest.approx(summary.peak)
    assert int(line.smooth_steps[int(np.argmax(line.smooth_values))]) == summary.peak_step


def test_a_rising_run_draws_no_stretch_means():
    run = load_run(EXAMPLES / "trl-grpo-live")
    diagnostics = diagnose(run)
    assert diagnostics.reward.peak_stretch is None
    assert not any("decline test" in t for t in figure_texts(dashboard_figure(run, diagnostics)))


def figure_title(fig: Figure) -> str:
    return fig.texts[0].get_text().split("  ·  ")[-1]


def test_gpu_figure_is_titled_by_what_it_holds(tmp_path):
    # A console-style log with only a step time: the figure shows step time, not "GPU telemetry".
    rows = [{"step": s, "loss": 1.0 / s, "step_time": 30.0 + s % 3} for s in range(1, 60)]
    run = load_run(write_state(tmp_path / "steps", rows))
    assert figure_title(gpu_figure(run, diagnose(run))) == "Step time"
    verl = load_run(EXAMPLES / "verl-grpo-gsm8k")  # phase timings and the framework's memory readings
    assert figure_title(gpu_figure(verl, diagnose(verl))) == "Time per phase, step time and GPU memory"
    trl = load_run(EXAMPLES / "trl-grpo-live")  # phase timings and an nvidia-smi log
    assert figure_title(gpu_figure(trl, diagnose(trl))) == "Time per phase, step time and GPU telemetry"


def test_a_spike_beyond_the_scale_is_a_red_triangle_at_the_edge_not_a_grey_one():
    ax = Figure().subplots()
    ax.plot(range(100), [0.3] * 100)
    ax.set_ylim(0.0, 1.0)  # as robust_ylim sets it: the largest spike is off this scale
    mark_spikes(ax, [m.Spike(step=40, value=6.0, level=0.3, size_noise=50.0, kind="outlier"),
                     m.Spike(step=70, value=0.9, level=0.3, size_noise=9.0, kind="outlier")])
    drawn = {line.get_marker(): (list(line.get_xdata()), line.get_color()) for line in ax.lines[1:]}
    assert drawn["x"] == ([70], COLORS["spike"])
    assert drawn["^"] == ([40], COLORS["spike"])


def test_the_dashboard_draws_the_eval_the_best_point_is_read_on(real_runs):
    """Two held-out curves: the one the best point was chosen on is drawn and starred, not the other."""
    run = load_run(real_runs / "grpo-lr2e5-olmo2-1b-gsm8k-taogerxu")
    diagnostics = diagnose(run)
    best = diagnostics.best_checkpoint
    assert best.basis == "eval" and best.metric is not None
    assert best.metric.removeprefix("eval/") != (diagnostics.eval.metric or "").removeprefix("eval/")
    curve = next(c for c in diagnostics.eval.curves if c.metric == best.metric)
    texts = figure_texts(dashboard_figure(run, diagnostics))
    assert f"held-out {best.metric.removeprefix('eval/').replace('_', ' ')}" in texts
    assert f"eval peak {fmt_num(curve.peak)} @ {curve.peak_step}" in texts


def test_the_smoothed_level_of_a_long_curve_is_that_of_numpys_bin_medians():
    from assessor.diagnose.robust import smooth
    from assessor.plots.style import MAX_SMOOTH_BINS, smoothed

    rng = np.random.default_rng(3)
    for n in (50_001, 60_000, 60_799):
        steps = np.arange(n, dtype=np.float64) * 2
        values = np.round(rng.normal(size=n), 2)  # ties, as a logged metric has
        size = -(-n // MAX_SMOOTH_BINS)
        usable = n // size * size
        red_steps = np.median(steps[:usable].reshape(-1, size), axis=1)
        red_values = np.median(values[:usable].reshape(-1, size), axis=1)
        if usable < n:
            red_steps = np.append(red_steps, np.median(steps[usable:]))
            red_values = np.append(red_values, np.median(values[usable:]))
        got_steps, got_values = smoothed(steps, values)
        assert got_steps.tobytes() == red_steps.tobytes()
        assert got_values.tobytes() == smooth(red_values).tobytes()
