"""A long-lived watch sees the steps appended to a run in every format it reads, not a stale verdict.

W&B logs and MLflow stores are read whole at each check (they have no append offset); their new steps must
still count as news, as JSONL, CSV and trainer_state.json's do.
"""

from __future__ import annotations

import json
import math
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from assessor.integrations.watch import WatchConfig, Watcher
from tests.test_wandb import frame, history

MLFLOW = Path(__file__).resolve().parent / "fixtures" / "mlflow" / "trl_file"


def reward(step: int) -> float:
    return 0.2 + 0.5 * (1 - math.exp(-step / 40)) + 0.01 * math.sin(step)


def kl(step: int) -> float:
    return 0.01 + 0.0001 * step


def write_jsonl(root: Path, steps: int) -> None:
    lines = [json.dumps({"step": s, "reward": reward(s), "kl": kl(s)}) for s in range(1, steps + 1)]
    (root / "log.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


def write_csv(root: Path, steps: int) -> None:
    rows = ["step,reward,kl"] + [f"{s},{reward(s)},{kl(s)}" for s in range(1, steps + 1)]
    (root / "metrics.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")


def write_trainer_state(root: Path, steps: int) -> None:
    history_rows = [{"step": s, "reward": reward(s), "kl": kl(s), "loss": 0.1} for s in range(1, steps + 1)]
    state = {"global_step": steps, "max_steps": 10_000, "logging_steps": 1, "log_history": history_rows}
    (root / "trainer_state.json").write_text(json.dumps(state, indent=2), encoding="utf-8")


def write_wandb(root: Path, steps: int) -> None:
    folder = root / "wandb" / "offline-run-20240101_000000-abcd1234"
    folder.mkdir(parents=True, exist_ok=True)
    records = [history(s, {"train/reward": repr(reward(s)), "train/kl": repr(kl(s)), "train/global_step": str(s)})
               for s in range(1, steps + 1)]
    (folder / "run-abcd1234.wandb").write_bytes(frame(records))  # the same bytes first, then the new records


def write_mlflow(root: Path, steps: int) -> None:
    """The fixture store (3 logged steps), with every metric of every run logged on up to `steps`."""
    store = root / "mlruns"
    if not store.exists():
        shutil.copytree(MLFLOW / "mlruns", store)
    for metric in sorted(p for p in store.glob("*/*/metrics/**/*") if p.is_file()):
        lines = metric.read_text(encoding="utf-8").splitlines()
        timestamp, value, last = lines[-1].split()
        extra = [f"{int(timestamp) + s} {float(value) + 1e-4 * s} {s}" for s in range(int(last) + 1, steps + 1)]
        if extra:
            with metric.open("a", encoding="utf-8") as handle:
                handle.write("\n".join(extra) + "\n")


WRITERS: dict[str, Callable[[Path, int], None]] = {
    "jsonl": write_jsonl, "csv": write_csv, "trainer_state": write_trainer_state, "wandb": write_wandb,
    "mlflow": write_mlflow,
}


@pytest.mark.parametrize("kind", sorted(WRITERS))
def test_a_recheck_sees_the_steps_appended_in_every_format(tmp_path: Path, kind: str) -> None:
    run = tmp_path / "run"
    run.mkdir()
    write = WRITERS[kind]
    config = WatchConfig(run_dir=run, state_path=tmp_path / "state.json", idle_timeout=None)
    watcher = Watcher(config)
    write(run, 40)
    first = watcher.check()
    assert first.assessment is not None, first.reasons
    assert first.assessment.diagnostics.run.last_step == 40
    same = watcher.check()  # nothing written: the last verdict is kept
    assert any("nothing new" in reason for reason in same.reasons)
    write(run, 60)
    second = watcher.check()
    assert second.assessment is not None, second.reasons
    assert not any("nothing new" in reason for reason in second.reasons), second.reasons
    assert second.step == 60
    assert second.assessment.diagnostics.run.last_step == 60
