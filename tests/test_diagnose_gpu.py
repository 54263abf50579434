"""GPU time and use: phase shares, step-time jumps and stalls, nvidia-smi phase segmentation.

Synthetic runs are written as real files (verl console logs, JSONL, nvidia-smi CSVs) and read with
`load_run`; real runs are read in place. Every number asserted on a real run was first computed
independently from the raw file (TensorBoard events, console-log regex, CSV parse), not with assessor code.
"""

from __future__ import annotations

import json
import time
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from assessor import load_run
from assessor.diagnose.context import Context
from assessor.diagnose.gpu import diagnose_gpu
from assessor.diagnose.models import GpuDiagnosis
from tests.conftest import EXAMPLES

SMI_HEADER = (
    "timestamp, index, name, utilization.gpu [%], utilization.memory [%], memory.used [MiB], memory.total [MiB], "
    "power.draw [W]"
)
START = datetime(2026, 11, 20, 9, 14, 3)
TOTAL_MIB = 81559


def diagnose(path: Path) -> GpuDiagnosis:
    result = diagnose_gpu(Context(load_run(path)))
    assert result is not None
    return result


def kinds(result: GpuDiagnosis) -> list[str]:
    return [f.kind for f in result.findings]


def ar1(rng: np.random.Generator, n: int, phi: float = 0.6) -> np.ndarray:
    out = np.zeros(n)
    noise = rng.normal(0, 1, n) * np.sqrt(1 - phi**2)
    for i in range(1, n):
        out[i] = phi * out[i - 1] + noise[i]
    return out


def write_verl_log(path: Path, rows: list[dict[str, float]]) -> None:
    """verl console lines: `step:N - key:value - ...` (with the Ray prefix and colour codes verl prints)."""
    lines = ["\x1b[36m(TaskRunner pid=2291)\x1b[0m Started training"]
    for step, row in enumerate(rows, start=1):
        body = " - ".join(f"{key}:{value:.4f}" for key, value in row.items())
        lines.append(f"\x1b[36m(TaskRunner pid=2291)\x1b[0m step:{step} - {body}")
    path.mkdir(parents=True, exist_ok=True)
    (path / "train.log").write_text("\n".join(lines) + "\n", encoding="utf-8")


def write_jsonl(path: Path, rows: list[dict[str, float]]) -> None:
    """verl's file logger: `{"step": N, "data": {...}}` per line."""
    path.mkdir(parents=True, exist_ok=True)
    with (path / "metrics.jsonl").open("w", encoding="utf-8") as handle:
        for step, row in enumerate(rows, start=1):
            handle.write(json.dumps({"step": step, "data": row}) + "\n")


PHASE_READINGS = {  # util %, power W (mean, sd) per phase
    "gen": ((70.0, 8.0), (260.0, 25.0)),
    "train": ((96.0, 2.0), (640.0, 20.0)),
    "idle": ((0.0, 0.0), (75.0, 4.0)),
}


def write_smi(
    path: Path, pattern: list[str], repeats: int, rng: np.random.Generator, devices: int = 2,
    memory: dict[str, float] | None = None, lead_idle: int = 0, transitions: float = 0.0,
) -> None:
    """One sample per second and device: `lead_idle` idle seconds, then `pattern` (phase per second) repeated.

    `transitions`: the share of generation->training boundaries sampled halfway between the two phases.
    """
    memory = memory or {"gen": 70000.0, "train": 70000.0, "idle": 70000.0}
    timeline = ["idle"] * lead_idle + pattern * repeats
    lines = [SMI_HEADER]
    for second, phase in enumerate(timeline):
        stamp = (START + timedelta(seconds=second)).strftime("%Y/%m/%d %H:%M:%S.%f")[:-3]
        boundary = second > 0 and timeline[second - 1] == "gen" and phase == "train"
        for gpu in range(devices):
            (util_mean, util_sd), (power_mean, power_sd) = PHASE_READINGS[phase]
            util, power = rng.normal(util_mean, util_sd), rng.normal(power_mean, power_sd)
            if boundary and rng.random() < transitions:
                util, power = rng.uniform(70, 96), rng.uniform(300, 600)
            used = memory[phase] + rng.normal(0, 150)
            lines.append(
                f"{stamp}, {gpu}, NVIDIA H100 80GB HBM3, {min(100, max(0, round(util)))} %, "
                f"{min(100, max(0, round(util * 0.6)))} %, {int(used)} MiB, {TOTAL_MIB} MiB, {max(power, 20.0):.2f} W"
            )
    path.mkdir(parents=True, exist_ok=True)
    (path / "nvidia-smi.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")


def timing_rows(
    rng: np.random.Generator, n: int, gen: float = 45.0, update: float = 40.0, other: float = 15.0,
    noise: float = 0.03, length: float = 300.0,
) -> list[dict[str, float]]:
    """verl timing keys with AR(1) noise; `timing_s/step` is the sum of the phases plus a little overhead."""
    g = gen * (1 + noise * ar1(rng, n))
    u = update * (1 + noise * ar1(rng, n))
    o = other * (1 + noise * ar1(rng, n))
    rows = []
    for i in range(n):
        rows.append({
            "timing_s/gen": g[i], "timing_s/update_actor": u[i], "timing_s/ref": o[i],
            "timing_s/step": g[i] + u[i] + o[i] + 0.4, "response_length/mean": length * (1 + 0.02 * rng.normal()),
        })
    return rows


# ----------------------------------------------------------------------------------------- synthetic runs


def test_no_timings_and_no_telemetry_gives_none(tmp_path: Path) -> None:
    write_jsonl(tmp_path, [{"critic/score/mean": 0.5 + 0.001 * i} for i in range(50)])
    assert diagnose_gpu(Context(load_run(tmp_path))) is None


def test_generation_bound_run(tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    write_verl_log(tmp_path, timing_rows(rng, 200, gen=70.0, update=22.0, other=8.0))
    result = diagnose(tmp_path)
    assert result.source == "phase_timings"
    assert result.generation_fraction == pytest.approx(70 / 100.4, abs=0.02)
    assert result.training_fraction == pytest.approx(22 / 100.4, abs=0.02)
    assert result.step_time_s == pytest.approx(100.4, rel=0.03)
    assert kinds(result) == ["generation_bound"]
    bound = result.findings[0]
    assert bound.severity == "info"
    assert "bottleneck" in bound.observation and "not a training-health problem" in bound.observation


def test_generation_dominant_is_watch(tmp_path: Path) -> None:
    rng = np.random.default_rng(2)
    write_verl_log(tmp_path, timing_rows(rng, 120, gen=85.0, update=10.0, other=5.0))
    result = diagnose(tmp_path)
    assert result.generation_fraction is not None and result.generation_fraction > 0.8
    assert [(f.kind, f.severity) for f in result.findings] == [("generation_bound", "watch")]


def _jump_rows(rng: np.random.Generator, longer_generations: bool) -> list[dict[str, float]]:
    rows = timing_rows(rng, 300, gen=40.0, update=45.0, other=15.0)
    for i in range(150, 300):
        if longer_generations:  # responses double, generation takes 40 s more
            rows[i]["timing_s/gen"] += 40.0
            rows[i]["response_length/mean"] *= 2
        # else: a competing process slows the step without touching the logged phases
        rows[i]["timing_s/step"] += 40.0
    return rows


@pytest.mark.parametrize("longer_generations", [True, False])
def test_step_time_jump_that_stays(tmp_path: Path, longer_generations: bool) -> None:
    write_jsonl(tmp_path, _jump_rows(np.random.default_rng(3), longer_generations))
    result = diagnose(tmp_path)
    jumps = [j for j in result.jumps if j.kind == "jump"]
    assert len(jumps) == 1
    assert abs(jumps[0].step - 151) <= 5  # row 150 is step 151
    assert jumps[0].before_s == pytest.approx(100.4, rel=0.03)
    assert jumps[0].after_s == pytest.approx(140.4, rel=0.03)
    assert result.step_time_drift == pytest.approx(0.4, abs=0.05)
    found = [f for f in result.findings if f.kind == "step_time_jump"]
    assert len(found) == 1
    # Longer responses explain the cost (the length reading judges them); an unexplained slowdown is a watch.
    assert found[0].severity == ("info" if longer_generations else "watch")
    if longer_generations:
        assert "longer generations" in found[0].observation
        assert "response length rose" in found[0].observation
    else:
        assert "competing process" in found[0].observation
        assert "not longer generations" in found[0].observation


def test_one_off_stall(tmp_path: Path) -> None:
    rows = timing_rows(np.random.default_rng(4), 200)
    rows[119]["timing_s/step"] = 300.0  # step 120: an upload blocks the loop once
    write_verl_log(tmp_path, rows)
    result = diagnose(tmp_path)
    assert [(j.step, j.kind) for j in result.jumps] == [(120, "stall")]
    assert result.jumps[0].after_s == pytest.approx(300.0)
    assert result.jumps[0].before_s == pytest.approx(100.4, rel=0.03)
    assert kinds(result) == ["step_time_stall"]
    assert result.findings[0].steps == [120] and result.findings[0].severity == "info"
    assert result.step_time_s == pytest.approx(100.4, rel=0.03)


def test_a_slow_step_with_its_own_long_responses_is_no_stall(tmp_path: Path) -> None:
    rows = timing_rows(np.random.default_rng(4), 200)
    rows[119]["timing_s/step"] = 300.0
    rows[119]["response_length/mean"] *= 5  # step 120 generated five times the usual length: that is the cost
    write_verl_log(tmp_path, rows)
    result = diagnose(tmp_path)
    assert [j for j in result.jumps if j.kind == "stall"] == []
    assert "step_time_stall" not in kinds(result)


def test_checkpoint_and_eval_steps_are_stalls_kept_out_of_the_share(tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    rows = timing_rows(rng, 200, gen=50.0, update=40.0, other=10.0)
    for step, row in enumerate(rows, start=1):
        if step % 2 == 0:  # eval every other step (verl test_freq=2), inside the step timer
            row["timing_s/testing"] = 30.0
            row["timing_s/step"] += 30.0
        if step % 50 == 0:
            row["timing_s/save_checkpoint"] = 60.0
            row["timing_s/step"] += 60.0
    write_verl_log(tmp_path, rows)
    result = diagnose(tmp_path)
    # Naively, half the steps would read 50/130.4 = 0.38 and the median would sit between the two levels.
    naive = np.median([r["timing_s/gen"] / r["timing_s/step"] for r in rows])
    assert naive < 0.47
    assert result.generation_fraction == pytest.approx(50 / 100.4, abs=0.015)
    assert result.step_time_s == pytest.approx(100.4, rel=0.03)
    found = {f.kind: f for f in result.findings}
    assert set(found) == {"checkpoint_stalls", "eval_stalls"}
    assert found["checkpoint_stalls"].steps == [50, 100, 150, 200]
    assert "every 50 steps" in found["checkpoint_stalls"].observation
    assert found["eval_stalls"].steps == list(range(2, 201, 2))
    assert [j.step for j in result.jumps if j.kind == "stall"] == [50, 100, 150, 200]
    assert not [j for j in result.jumps if j.kind == "jump"]


def test_eval_at_every_step_is_subtracted(tmp_path: Path) -> None:
    rows = timing_rows(np.random.default_rng(6), 100, gen=50.0, update=40.0, other=10.0)
    for row in rows:
        row["timing_s/testing"] = 30.0
        row["timing_s/step"] += 30.0
    write_verl_log(tmp_path, rows)
    result = diagnose(tmp_path)
    assert result.generation_fraction == pytest.approx(50 / 100.4, abs=0.015)
    assert result.step_time_s == pytest.approx(100.4, rel=0.03)


def test_step_time_is_the_phase_sum_when_no_total_is_logged(tmp_path: Path) -> None:
    rows = timing_rows(np.random.default_rng(7), 150, gen=30.0, update=50.0, other=20.0)
    old_keys = [{k.replace("timing_s/", "timing/"): v for k, v in r.items() if k != "timing_s/step"} for r in rows]
    write_verl_log(tmp_path, old_keys)
    result = diagnose(tmp_path)
    assert result.step_time_s == pytest.approx(100.0, rel=0.03)
    assert result.generation_fraction == pytest.approx(0.3, abs=0.015)
    assert result.findings == []


def test_telemetry_phases_with_known_fractions(tmp_path: Path) -> None:
    # 40 s steps: 16 s generation, 22 s training, 2 s idle; 60 s idle before the job starts is not the run.
    pattern = ["gen"] * 16 + ["train"] * 22 + ["idle"] * 2
    write_jsonl(tmp_path, [{"critic/score/mean": 0.5} for _ in range(30)])
    write_smi(tmp_path, pattern, repeats=40, rng=np.random.default_rng(8), lead_idle=60)
    result = diagnose(tmp_path)
    assert result.source == "nvidia_smi"
    phases = {p.phase: p for p in result.phases}
    assert set(phases) == {"generation", "training", "idle"}
    # The busy span ends on the last training second, so the final 2 idle seconds fall outside it.
    span = 40 * 40 - 2
    assert phases["generation"].time_fraction == pytest.approx(16 * 40 / span, abs=0.01)
    assert phases["training"].time_fraction == pytest.approx(22 * 40 / span, abs=0.01)
    assert phases["idle"].time_fraction == pytest.approx(2 * 39 / span, abs=0.01)
    assert result.idle_fraction == pytest.approx(2 * 39 / span, abs=0.01)
    assert result.generation_fraction == pytest.approx(0.4, abs=0.01)
    assert result.training_fraction == pytest.approx(0.55, abs=0.01)
    assert phases["generation"].power_w == pytest.approx(260, abs=10)
    assert phases["training"].power_w == pytest.approx(640, abs=10)
    assert phases["generation"].util_pct == pytest.approx(70, abs=3)
    assert phases["training"].util_pct == pytest.approx(96, abs=2)
    assert phases["training"].memory_headroom_mib == pytest.approx(TOTAL_MIB - 70000 - 250, abs=300)
    assert result.findings == []  # 5% idle, 40% generation, memory headroom 14%: nothing to say


def test_telemetry_split_is_data_driven_not_fixed_watts(tmp_path: Path) -> None:
    # A smaller GPU: generation at 60 W, training at 140 W. Fixed H100-like thresholds would call it all idle.
    pattern = ["gen"] * 30 + ["train"] * 10
    write_jsonl(tmp_path, [{"critic/score/mean": 0.5} for _ in range(30)])
    rng = np.random.default_rng(9)
    write_smi(tmp_path, pattern, repeats=30, rng=rng)
    csv_path = tmp_path / "nvidia-smi.csv"
    lines = csv_path.read_text(encoding="utf-8").splitlines()
    scaled = [lines[0]]
    for line in lines[1:]:
        head, power = line.rsplit(", ", 1)
        scaled.append(f"{head}, {float(power.split()[0]) * 0.22:.2f} W")
    csv_path.write_text("\n".join(scaled) + "\n", encoding="utf-8")
    result = diagnose(tmp_path)
    assert result.generation_fraction == pytest.approx(0.75, abs=0.01)
    assert [(f.kind, f.severity) for f in result.findings] == [("generation_bound", "info")]


def test_idle_bubbles(tmp_path: Path) -> None:
    # 20 s steps with a 5 s wait (e.g. a remote reward) between generation and training.
    pattern = ["gen"] * 8 + ["idle"] * 5 + ["train"] * 7
    write_jsonl(tmp_path, [{"critic/score/mean": 0.5} for _ in range(30)])
    write_smi(tmp_path, pattern, repeats=60, rng=np.random.default_rng(10))
    result = diagnose(tmp_path)
    assert result.idle_fraction == pytest.approx(0.25, abs=0.01)
    found = [f for f in result.findings if f.kind == "idle_bubbles"]
    assert len(found) == 1 and found[0].severity == "watch"
    assert "60 bubbles per GPU" in found[0].observation and "median 5 s" in found[0].observation


def test_memory_near_capacity_in_one_phase(tmp_path: Path) -> None:
    pattern = ["gen"] * 10 + ["train"] * 20
    write_jsonl(tmp_path, [{"critic/score/mean": 0.5} for _ in range(30)])
    memory = {"gen": 79000.0, "train": 62000.0, "idle": 62000.0}
    write_smi(tmp_path, pattern, repeats=40, rng=np.random.default_rng(11), memory=memory)
    result = diagnose(tmp_path)
    found = [f for f in result.findings if f.kind == "memory_near_capacity"]
    assert len(found) == 1 and found[0].severity == "watch"
    assert "during generation" in found[0].observation
    assert "in training the headroom is" in found[0].observation
    phases = {p.phase: p for p in result.phases}
    assert phases["generation"].memory_headroom_mib == pytest.approx(TOTAL_MIB - 79000 - 250, abs=300)
    assert phases["training"].memory_headroom_mib == pytest.approx(TOTAL_MIB - 62000 - 250, abs=300)


def test_single_busy_phase_is_not_split(tmp_path: Path) -> None:
    write_jsonl(tmp_path, [{"critic/score/mean": 0.5} for _ in range(30)])
    write_smi(tmp_path, ["train"], repeats=600, rng=np.random.default_rng(12))
    result = diagnose(tmp_path)
    assert [p.phase for p in result.phases] == ["training"]
    assert result.generation_fraction == 0.0 and result.findings == []


def test_both_sources_prefer_timings_for_the_fraction(tmp_path: Path) -> None:
    rng = np.random.default_rng(13)
    write_verl_log(tmp_path, timing_rows(rng, 100, gen=45.0, update=45.0, other=10.0))
    write_smi(tmp_path, ["gen"] * 12 + ["train"] * 28, repeats=30, rng=rng)  # telemetry says 0.3
    result = diagnose(tmp_path)
    assert result.source == "both"
    assert result.generation_fraction == pytest.approx(45 / 100.4, abs=0.02)
    assert {p.phase for p in result.phases} == {"generation", "training"}
    assert result.findings == []


@pytest.mark.parametrize("seed", range(6))
def test_noisy_but_stable_run_has_no_findings(tmp_path: Path, seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    write_verl_log(tmp_path, timing_rows(rng, 300, gen=45.0, update=40.0, other=15.0, noise=0.06))
    pattern = ["gen"] * 14 + ["train"] * 17 + ["idle"] * 1
    write_smi(tmp_path, pattern, repeats=50, rng=rng, devices=4, transitions=0.3)
    result = diagnose(tmp_path)
    assert result.source == "both"
    assert result.findings == [], [f.observation for f in result.findings]
    assert not result.jumps
    assert {p.phase for p in result.phases} == {"generation", "training", "idle"}


def test_hundred_thousand_steps_are_fast(tmp_path: Path) -> None:
    rng = np.random.default_rng(14)
    n = 100_000
    gen = 60 + 3 * rng.normal(size=n)
    step = gen + 40 + 3 * rng.normal(size=n) + np.where(np.arange(n) >= 60_000, 30.0, 0.0)
    lines = ["step,timing_s/gen,timing_s/step"] + [f"{i + 1},{g:.3f},{s:.3f}" for i, (g, s) in enumerate(
        zip(gen, step, strict=True))]
    (tmp_path / "log.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    ctx = Context(load_run(tmp_path))
    started = time.perf_counter()
    result = diagnose_gpu(ctx)
    elapsed = time.perf_counter() - started
    assert result is not None
    assert elapsed < 0.8
    assert [j.kind for j in result.jumps] == ["jump"]
    assert abs(result.jumps[0].step - 60_001) <= 300


# -------------------------------------------------------------------------------------------- real runs


def test_real_verl_grpo_q3b(real_runs: Path) -> None:
    result = diagnose(real_runs / "verl-grpo-gsm8k-q3b-fsdp-base")
    assert result.source == "phase_timings"
    # Independently: median timing_s/gen / timing_s/step over the last 8 of the 84 steps without eval/save.
    assert result.generation_fraction == pytest.approx(0.0514, abs=0.001)
    assert result.training_fraction == pytest.approx(0.190, abs=0.002)
    assert result.step_time_s == pytest.approx(567.3, abs=0.5)
    found = {f.kind: f for f in result.findings}
    assert set(found) == {"phase_dominates_step", "eval_stalls"}
    # The 1-40 s artificial reward delay lands in `adv` (verl awaits the async reward there): 0.675 of the step,
    # while timing_s/reward itself is 0.55 s.
    assert found["phase_dominates_step"].signal == "time_advantage_s"
    assert "0.675" in found["phase_dominates_step"].observation
    assert "0.549 s" in found["phase_dominates_step"].observation
    assert found["eval_stalls"].steps == list(range(5, 106, 5))
    assert "145 s" in found["eval_stalls"].observation  # median timing_s/testing 144.6 s
    assert not result.jumps  # 12.4 s checkpoint saves are too small to be stalls


def test_real_verl_grpo_q7b(real_runs: Path) -> None:
    result = diagnose(real_runs / "verl-grpo-gsm8k-q7b-fsdp-base")
    assert result.generation_fraction == pytest.approx(0.0514, abs=0.001)
    assert result.training_fraction == pytest.approx(0.2325, abs=0.002)
    assert result.step_time_s == pytest.approx(595.5, abs=0.5)
    assert result.step_time_drift == pytest.approx(595.5 / 623.8 - 1, abs=0.003)
    found = {f.kind: f for f in result.findings}
    assert set(found) == {"phase_dominates_step", "eval_stalls"}
    assert "0.641" in found["phase_dominates_step"].observation
    assert found["eval_stalls"].steps == list(range(5, 106, 5))


def test_real_verl_ppo_console_log(real_runs: Path) -> None:
    result = diagnose(real_runs / "verl-ppo-qwen25-05b-gsm8k")
    # No step total in this old log: the step is the sum of timing/{gen,ref,values,adv,update_critic,update_actor}.
    assert result.source == "phase_timings"
    assert result.step_time_s == pytest.approx(66.17, abs=0.05)
    assert result.step_time_drift == pytest.approx(-0.0105, abs=0.002)
    assert result.generation_fraction == pytest.approx(0.2682, abs=0.001)
    assert result.training_fraction == pytest.approx(0.5650, abs=0.001)
    # The step-time jump in these timings: every 10th step (9, 19, ..., 429) runs validation inside the loop,
    # 56.9 s on top of a 66 s step (+86%). Between them the level never moves by more than 3.4%.
    found = {f.kind: f for f in result.findings}
    assert set(found) == {"eval_stalls"}
    assert found["eval_stalls"].steps == list(range(9, 435, 10))
    assert "56.9 s" in found["eval_stalls"].observation and "every 10 steps" in found["eval_stalls"].observation
    assert not result.jumps


def test_example_trl_grpo_live_telemetry() -> None:
    result = diagnose(EXAMPLES / "trl-grpo-live")
    assert result.source == "both"  # step_time from the logs, phases from nvidia-smi
    # Independently: 908 of the 1456 samples (0.6236) draw under 400 W; none sits between 400 and 540 W.
    assert result.generation_fraction == pytest.approx(0.6236, abs=0.001)
    assert result.training_fraction == pytest.approx(0.3764, abs=0.001)
    assert result.idle_fraction == 0.0
    phases = {p.phase: p for p in result.phases}
    assert phases["generation"].power_w == pytest.approx(283.7, abs=0.5)
    assert phases["training"].power_w == pytest.approx(656.0, abs=0.5)
    assert phases["generation"].util_pct == pytest.approx(71, abs=0.5)
    assert phases["training"].util_pct == pytest.approx(97, abs=0.5)
    assert result.step_time_s == pytest.approx(14.06, abs=0.1)
    assert [(f.kind, f.severity) for f in result.findings] == [("generation_bound", "info")]


def test_example_verl_grpo_jump_with_longer_generations() -> None:
    result = diagnose(EXAMPLES / "verl-grpo-gsm8k")
    # Independently (clean steps): step time 202.8 s before step 155, 304.8 s after 195; generation 116 -> 181 s;
    # response length 280 -> 1023 tokens.
    found = {f.kind: f for f in result.findings}
    assert set(found) == {"step_time_jump", "checkpoint_stalls"}
    jump = found["step_time_jump"]
    assert jump.severity == "info"
    assert 155 <= jump.steps[0] <= 180
    assert "longer generations" in jump.observation
    assert "from 203 s to 304 s" in jump.observation
    assert found["checkpoint_stalls"].steps == [50, 100, 150, 200]
    assert "68 s" in found["checkpoint_stalls"].observation  # median timing_s/save_checkpoint 68.0 s
    assert result.step_time_s == pytest.approx(305.0, abs=0.5)
    assert result.generation_fraction == pytest.approx(0.5949, abs=0.001)


def test_real_trl_grpo_step_time_follows_length_to_the_cap(real_runs: Path) -> None:
    result = diagnose(real_runs / "trl-grpo-q7b-rho1.0-s43")
    # Independently (console dicts, every 5 steps): step_time median 3.45 s over steps 5-25, 4.53 s from step 30
    # on, while completions/mean_length goes 234 -> 512 (the cap) at step 30.
    assert result.source == "phase_timings"
    assert [(j.step, j.kind) for j in result.jumps] == [(30, "jump")]
    assert result.jumps[0].before_s == pytest.approx(3.454, abs=0.01)
    assert result.jumps[0].after_s == pytest.approx(4.533, abs=0.01)
    found = {f.kind: f for f in result.findings}
    assert set(found) == {"step_time_jump"}
    assert "longer generations" in found["step_time_jump"].observation
    assert "234 to 512 tokens" in found["step_time_jump"].observation
