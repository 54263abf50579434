"""A re-check holds the last full check's verdict over an immaterial append, and checks in full on anything else.

The run is a verl-style JSONL log long enough to be held (`HOLD_MIN_STEPS`): a reward that rose and levelled
off, KL, entropy and a gradient norm with noise. Each test checks once in full, appends, and checks again
with a new `Watcher` (as `watch --once` from cron does, in a new process), then looks at what that check did.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from assessor.cli import main
from assessor.integrations.hold import HOLD_MIN_STEPS, HOLD_SHARE, FullCheck
from assessor.integrations.watch import WatchConfig, Watcher, WatchState, load_state
from tests.runs import ar1

N = 3_000  # steps before the append: a hold covers up to 1% of them (30)
TOTAL = N + 200


def series() -> dict[str, np.ndarray]:
    steps = np.arange(1, TOTAL + 1)
    return {
        "critic/score/mean": 0.2 + 0.5 * (1 - np.exp(-steps / 300)) + ar1(1, TOTAL, 0.3, 0.03),
        "actor/ppo_kl": 0.01 + 0.001 * (1 - np.exp(-steps / 500)) + np.abs(ar1(2, TOTAL, 0.3, 0.001)),
        "actor/entropy": 0.6 + ar1(3, TOTAL, 0.4, 0.02),
        "actor/grad_norm": 0.3 + np.abs(ar1(4, TOTAL, 0.2, 0.05)),
        "actor/lr": np.full(TOTAL, 1e-6),
    }


SERIES = series()


def line(step: int, **override: object) -> str:
    data: dict[str, object] = {key: round(float(values[step - 1]), 6) for key, values in SERIES.items()}
    data.update(override)
    return json.dumps({"step": step, "data": data}) + "\n"


def write(log: Path, first: int, last: int) -> None:
    with log.open("a", encoding="utf-8") as handle:
        handle.write("".join(line(step) for step in range(first, last + 1)))


@pytest.fixture
def run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = tmp_path / "run"
    root.mkdir()
    write(root / "metrics.jsonl", 1, N)
    return root


def watcher(tmp_path: Path, run: Path, **overrides: object) -> Watcher:
    values: dict[str, object] = {"run_dir": run, "state_path": tmp_path / "state.json", "idle_timeout": None}
    values.update(overrides)
    return Watcher(WatchConfig.model_validate(values))


def first_check(tmp_path: Path, run: Path) -> Watcher:
    first = watcher(tmp_path, run)
    outcome = first.check()
    assert outcome.held is None and outcome.decision is not None
    full = first.state.full_check
    assert full is not None and full.step == N and full.decision == outcome.decision
    return first


def test_an_immaterial_append_holds_the_verdict_and_says_so(tmp_path: Path, run: Path) -> None:
    decision = first_check(tmp_path, run).state.decision
    write(run / "metrics.jsonl", N + 1, N + 20)
    again = watcher(tmp_path, run)
    outcome = again.check()
    assert outcome.held is not None
    assert outcome.decision == decision and outcome.step == N + 20 and outcome.notified is None
    assert outcome.assessment is None  # a new process: no assessment was made, the verdict is the full check's
    assert outcome.exit_code == {"continue": 0, "stop": 10, "rollback": 11}[decision]
    assert outcome.reasons == (f"20 new steps to {N + 20:,} read; within the bands of the full check at step "
                               f"{N:,}; verdict held",)
    state = load_state(tmp_path / "state.json", run)
    assert state.held_checks == 1 and state.checks == 2 and state.last_step == N + 20
    assert state.full_check is not None and state.full_check.step == N  # still the full check's summary
    assert "(1 held)" in again.summary().line()


def test_a_held_check_imports_neither_pandas_nor_the_diagnosis(tmp_path: Path, run: Path) -> None:
    first_check(tmp_path, run)
    write(run / "metrics.jsonl", N + 1, N + 10)
    script = (
        "import sys; from pathlib import Path; from assessor.integrations.watch import WatchConfig, Watcher; "
        f"w = Watcher(WatchConfig(run_dir=Path({str(run)!r}), state_path=Path({str(tmp_path / 'state.json')!r}), "
        "idle_timeout=None)); o = w.check(); "
        "print(o.held is not None, sorted(m for m in ('pandas', 'numpy', 'assessor.diagnose', 'assessor.ingest') "
        "if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "True []"


def nan_in_grad_norm(log: Path) -> None:
    write(log, N + 1, N + 5)
    with log.open("a", encoding="utf-8") as handle:
        handle.write(line(N + 6, **{"actor/grad_norm": None}))


def reward_drop(log: Path) -> None:
    with log.open("a", encoding="utf-8") as handle:
        handle.write("".join(line(step, **{"critic/score/mean": 0.2}) for step in range(N + 1, N + 11)))


def small_steady_slide(log: Path) -> None:
    """Every point inside its band, but the new points together sit well below the recent level."""
    level = float(np.median(SERIES["critic/score/mean"][N - 150:N]))
    with log.open("a", encoding="utf-8") as handle:
        handle.write("".join(line(step, **{"critic/score/mean": level - 0.07}) for step in range(N + 1, N + 21)))


def new_checkpoint(log: Path) -> None:
    write(log, N + 1, N + 10)
    (log.parent / f"global_step_{N + 10}").mkdir()


def end_marker(log: Path) -> None:
    write(log, N + 1, N + 9)
    with log.open("a", encoding="utf-8") as handle:
        handle.write(line(N + 10, train_runtime=12345.0))


def enough_new_steps(log: Path) -> None:
    write(log, N + 1, N + int(HOLD_SHARE * N))


def new_metric(log: Path) -> None:
    with log.open("a", encoding="utf-8") as handle:
        handle.write("".join(line(step, **{"actor/pg_clipfrac": 0.1}) for step in range(N + 1, N + 6)))


def restart(log: Path) -> None:
    write(log, N - 100, N - 90)


def rewritten(log: Path) -> None:
    text = log.read_text(encoding="utf-8")
    log.write_text(text.replace('"step": 2,', '"step": 2 ,', 1) + line(N + 1), encoding="utf-8")


def a_new_file_beside(log: Path) -> None:
    write(log, N + 1, N + 10)
    (log.parent / "train.log").write_text("step 3010 loss 0.3\n", encoding="utf-8")


MATERIAL: dict[str, tuple[Callable[[Path], None], str]] = {
    "a NaN": (nan_in_grad_norm, "actor/grad_norm is None at step"),
    "a reward drop out of its band": (reward_drop, "critic/score/mean = 0.2 at step"),
    "a small slide of the level": (small_steady_slide, "the new critic/score/mean values average"),
    "a new checkpoint": (new_checkpoint, "a file or folder beside the logs changed"),
    "an end-of-training summary": (end_marker, "a new metric 'train_runtime'"),
    "enough new steps": (enough_new_steps, f"{int(HOLD_SHARE * N)} new steps since the full check at step {N:,}"),
    "a new metric": (new_metric, "a new metric 'actor/pg_clipfrac'"),
    "a restart": (restart, "the steps do not count up"),
    "a log rewritten in place": (rewritten, "metrics.jsonl was rewritten in place"),
    "a new log beside": (a_new_file_beside, "a file or folder beside the logs changed"),
}


@pytest.mark.parametrize("change", sorted(MATERIAL))
def test_a_material_append_gets_the_full_check(tmp_path: Path, run: Path, change: str) -> None:
    first_check(tmp_path, run)
    append, reason = MATERIAL[change]
    append(run / "metrics.jsonl")
    outcome = watcher(tmp_path, run).check()
    assert outcome.held is None and outcome.assessment is not None  # diagnosed again, in full
    assert any(r.startswith("full check: ") and reason in r for r in outcome.reasons), outcome.reasons
    assert load_state(tmp_path / "state.json", run).held_checks == 0


def test_full_option_diagnoses_every_check(tmp_path: Path, run: Path) -> None:
    first_check(tmp_path, run)
    write(run / "metrics.jsonl", N + 1, N + 10)
    outcome = watcher(tmp_path, run, full=True).check()
    assert outcome.held is None and outcome.assessment is not None and outcome.step == N + 10
    assert not any("full check" in r for r in outcome.reasons)  # asked for, not a finding


def test_the_cli_holds_and_exits_with_the_held_decision(tmp_path: Path, run: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    args = ["watch", str(run), "--once", "--state", str(tmp_path / "state.json"), "--idle-timeout", "30d"]
    code = main(args)
    write(run / "metrics.jsonl", N + 1, N + 10)
    capsys.readouterr()
    assert main(args) == code
    err = capsys.readouterr().err
    assert f"10 new steps to {N + 10:,} read; within the bands of the full check at step {N:,}; verdict held" in err
    assert "2 checks (1 held)" in err
    write(run / "metrics.jsonl", N + 11, N + 15)
    assert main([*args, "--full"]) == code
    assert "verdict held" not in capsys.readouterr().err


def test_a_held_watch_checks_in_full_once_the_run_stops_writing(tmp_path: Path, run: Path) -> None:
    """With no step new since the last check, the full check runs, the one that can call the run stalled."""
    first = first_check(tmp_path, run)
    write(run / "metrics.jsonl", N + 1, N + 10)
    assert first.check().held is not None
    outcome = first.check()
    assert outcome.held is None and outcome.assessment is not None


def test_no_hold_while_an_event_is_owed(tmp_path: Path, run: Path) -> None:
    first_check(tmp_path, run)
    write(run / "metrics.jsonl", N + 1, N + 10)
    heartbeat = watcher(tmp_path, run, heartbeat=1.0)
    heartbeat.clock = lambda: 4_000_000_000.0  # long after the last notification: a heartbeat is due
    outcome = heartbeat.check()
    assert outcome.held is None and outcome.notified == "heartbeat"


def test_a_short_run_is_always_checked_in_full(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = tmp_path / "short"
    root.mkdir()
    write(root / "metrics.jsonl", 1, HOLD_MIN_STEPS - 1)
    watcher(tmp_path, root).check()
    assert load_state(tmp_path / "state.json", root).full_check is None
    write(root / "metrics.jsonl", HOLD_MIN_STEPS, HOLD_MIN_STEPS + 2)
    assert watcher(tmp_path, root).check().held is None


def test_a_version_1_state_still_loads(tmp_path: Path, run: Path) -> None:
    path = tmp_path / "old.json"
    old = WatchState(run_path=str(run.resolve())).model_dump(exclude={"held_checks", "full_check"})
    path.write_text(json.dumps({**old, "version": 1}), encoding="utf-8")
    state = load_state(path, run)
    assert state.full_check is None and state.held_checks == 0 and state.version == 2
    assert FullCheck.model_fields["tree"].description  # the summary documents itself in the state file's schema
