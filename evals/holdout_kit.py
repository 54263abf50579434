"""What the three holdout generators share: the labels, the case file, TrainerState JSON and TensorBoard files.

Each holdout set keeps its own scenario vocabulary, noise model and writers (they were written by different
authors and should stay different); only these mechanical parts are common. Nothing here imports the assessor:
the holdout sets must stay independent of its generator and its judges.

Labels follow the decision contract in DESIGN.md ("What the three decisions mean"):
  continue  still improving, or holding healthily with budget left;
  stop      nothing more to gain and the current weights are as good as any (converged, saturated, no learning
            signal, never learned, drifting without a decline); a finished run that ends at its best;
  rollback  a better model lies behind now, whether or not a checkpoint is in the run folder. The window runs from
            where the run first reached the level of its best to the newest step still that good before the
            breakage (its upper end is the best target: every step given up is compute thrown away).
"""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import yaml

# ---------------------------------------------------------------------------------------------------------- labels

HEALTHY = dict(accept=["continue"], preferred="continue", healthy=True)  # must not be stopped


def converged() -> dict:
    """Converged a few steps before its planned end: stopping now or letting it finish are both fine."""
    return dict(accept=["continue", "stop"], preferred="stop")


def stop(onset: int | None = None) -> dict:
    """The current weights are as good as any and nothing more is to be gained."""
    return dict(accept=["stop"], preferred="stop", onset_step=onset)


def rollback(lo: int, hi: int, onset: int) -> dict:
    """A better model lies behind: restore a step in [lo, hi] (hi is the newest still as good as the best)."""
    return dict(accept=["rollback"], preferred="rollback", rollback_window=[lo, hi], onset_step=onset)


def stop_or_rollback(lo: int, hi: int, onset: int) -> dict:
    """Drift whose cost cannot be told from noise: stopping is right, going back to [lo, hi] is as good."""
    return dict(accept=["stop", "rollback"], preferred="stop", rollback_window=[lo, hi], onset_step=onset)


def case_entry(name: str, path: str, labels: dict, tags: list[str], reasoning: str) -> dict:
    """One case of the YAML file (schema: assessor/evals/cases.py), keys in the usual order."""
    case = {"name": name, "path": path}
    case.update({k: (list(v) if isinstance(v, list) else v) for k, v in labels.items()
                 if v is not None and k != "healthy"})
    if labels.get("healthy"):
        case["healthy"] = True
    case["tags"] = tags
    case["reasoning"] = " ".join(reasoning.split())
    return case


@dataclass
class Case:
    """One row of a set's table: the run to write and what a practitioner should do with it."""

    name: str
    scenario: Callable  # the set's own: rng (or seed), steps, planned steps -> curves or metrics
    write: Callable  # the set's own writer, options bound: (run, folder) -> None
    seed: int
    steps: int | tuple[int, int]  # steps reached, or (reached, planned)
    labels: dict
    tags: str  # space-separated
    why: str

    @property
    def reached(self) -> int:
        return self.steps[0] if isinstance(self.steps, tuple) else self.steps

    @property
    def planned(self) -> int | None:
        return self.steps[1] if isinstance(self.steps, tuple) else None


def writer(fn: Callable) -> Callable:
    """Bind a writer's options in the table, the run and its folder later: writer(fn)(*opts)(run, folder)."""
    return lambda *args, **kwargs: lambda run, folder: fn(run, folder, *args, **kwargs)


class Skip(Exception):
    """A run that cannot be written in this interpreter (an optional SDK is missing or broken)."""


def build(here: Path, maker: str, yaml_name: str, prefix: str, set_tag: str, header: str, cases: list[Case],
          write_run: Callable[[Case, Path], None]) -> list[dict]:
    """Write every run into `here/runs/<name>` and the case file beside it; skipped runs are left out."""
    runs = here / "runs"
    fresh_runs(runs, maker)
    entries, skipped = [], []
    for case in cases:
        try:
            write_run(case, runs / case.name)
        except Skip as why:
            shutil.rmtree(runs / case.name, ignore_errors=True)
            skipped.append(f"{case.name}: {why}")
            continue
        entries.append(case_entry(prefix + case.name, f"runs/{case.name}", case.labels,
                                  [set_tag, *case.tags.split()], case.why))
    write_case_file(here / yaml_name, header, entries)
    healthy = sum(bool(e.get("healthy")) for e in entries)
    print(f"{len(entries)} cases ({healthy} healthy) in {here / yaml_name}")
    for line in skipped:
        print(f"SKIPPED {line}")
    return entries


def main(here: Path, maker: str, yaml_name: str, prefix: str, set_tag: str, header: str, cases: list[Case],
         write_run: Callable[[Case, Path], None], check: Callable[[list[Case]], None],
         argv: list[str] | None = None) -> None:
    """A generator's command line: every run and the case file; names given rewrite just those runs in place
    (the case file kept); `--check` then prints the levels (`check` is the set's own)."""
    args = sys.argv[1:] if argv is None else argv
    only = [a for a in args if not a.startswith("--")]
    chosen = [c for c in cases if not only or any(o in c.name for o in only)]
    if only:
        for case in chosen:
            shutil.rmtree(here / "runs" / case.name, ignore_errors=True)
            write_run(case, here / "runs" / case.name)
    else:
        build(here, maker, yaml_name, prefix, set_tag, header, chosen, write_run)
    if "--check" in args:
        check(chosen)


def fresh_runs(runs: Path, maker: str) -> None:
    """Empty `runs/` (gitignored) before writing every run again."""
    if runs.exists():
        shutil.rmtree(runs)
    runs.mkdir(parents=True)
    (runs / ".gitignore").write_text(f"# written by ../{maker}; not committed\n*\n!.gitignore\n")


def write_case_file(path: Path, header: str, cases: list[dict]) -> None:
    names = [c["name"] for c in cases]
    assert len(names) == len(set(names)), "duplicate case names"
    text = yaml.safe_dump({"cases": cases}, sort_keys=False, width=110, allow_unicode=True)
    path.write_text(header + text, encoding="utf-8")


# ------------------------------------------------------------------------------------- HF Trainer's trainer_state.json

def trainer_state(history: list[dict], global_step: int, max_steps: int, logging_steps: int, save_steps: int,
                  eval_steps: int | None, epoch: float, num_train_epochs: int = 1, training_stop: bool = False) -> dict:
    return {"best_global_step": None, "best_metric": None, "best_model_checkpoint": None, "epoch": epoch,
            "eval_steps": eval_steps, "global_step": global_step, "is_hyper_param_search": False,
            "is_local_process_zero": True, "is_world_process_zero": True, "log_history": history,
            "logging_steps": logging_steps, "max_steps": max_steps, "num_input_tokens_seen": 0,
            "num_train_epochs": num_train_epochs, "save_steps": save_steps,
            "stateful_callbacks": {"TrainerControl": {"args": {
                "should_epoch_stop": False, "should_evaluate": False, "should_log": False, "should_save": True,
                "should_training_stop": training_stop}, "attributes": {}}},
            "total_flos": 0.0, "train_batch_size": 8, "trial_name": None, "trial_params": None}


def dump_json(path: Path, obj: dict) -> None:
    """Python's json writes bare NaN / Infinity tokens, exactly as transformers does."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj, indent=2, sort_keys=True) + "\n", encoding="utf-8")


# ------------------------------------------------------------------------------------------------ TensorBoard files

def tb_file(path: Path, events: list[tuple[float, int, dict]], truncate: int = 0) -> Path:
    """One event file of legacy simple_value scalars (as torch / tensorboardX write them), with a fixed name.

    events: (wall_time, step, {tag: value}); None values are left out. `truncate` cuts that many bytes off the
    end, as a reader sees a file that is still being written.
    """
    from tensorboard.compat.proto import event_pb2, summary_pb2
    from tensorboard.summary.writer.record_writer import RecordWriter

    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as fh:
        writer = RecordWriter(fh)
        wall0 = events[0][0] if events else 0.0
        writer.write(event_pb2.Event(wall_time=wall0, file_version="brain.Event:2").SerializeToString())
        for wall, step, values in events:
            summary = summary_pb2.Summary(value=[summary_pb2.Summary.Value(tag=k, simple_value=float(v))
                                                 for k, v in values.items() if v is not None])
            writer.write(event_pb2.Event(wall_time=wall, step=int(step), summary=summary).SerializeToString())
        writer.flush()
    if truncate:
        path.write_bytes(path.read_bytes()[:-truncate])
    return path
