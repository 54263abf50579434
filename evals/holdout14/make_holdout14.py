"""Holdout set 14: hand-labelled RL post-training runs in real on-disk formats, independent of the assessor.

Run from the worktree root:
    .venv/bin/python evals/holdout14/make_holdout14.py           # writes runs/ (gitignored) and holdout14.yaml
    .venv/bin/python evals/holdout14/make_holdout14.py --check   # also prints levels and rollback windows

Every case is a `Plan`: noise-free level curves of the optimiser step and a drawing function that turns them into
what the framework would have logged. This set's noise model:
  * verifiable (0/1) rewards: every prompt of a batch gets its own solve rate, logit(p) + 1.1 * N(0, 1) (a
    logit-normal spread of difficulty whose mean is re-centred on the level p), and each of its G rollouts is a
    Bernoulli draw. The batch mean, the batch std and the share of prompts whose G rollouts all agree (zero spread)
    come from the same draws; frameworks that average over the logging interval get the mean of those batches;
  * judge / reward-model scores: per-sample normal scores around the level, batch-mean logged (0-100 or signed
    scales as the story says);
  * held-out evals: Binomial(N, p) / N for N problems;
  * grad norm: level * exp(0.2 * N(0, 1)), and one optimiser step in ~40 multiplied by 1 + Pareto(1.5);
  * KL, entropy, lengths, timings, losses: a few percent of multiplicative log-normal noise.

Labels follow DESIGN.md ("What the three decisions mean"), decided from each story's noise-free levels. A rollback
window runs from the first logged headline step whose noise-free level is within one sampling sd of the best level
(the sd of one eval for an eval headline; of a 50-step mean for a train headline) to the newest such step not after
onset_step. `--check` prints best, last, sd and the window next to binned noisy values.
"""

from __future__ import annotations

import csv
import json
import math
import sqlite3
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import holdout_kit
from holdout_kit import (
    HEALTHY,
    Case,
    converged,
    dump_json,
    rollback,
    stop,
    stop_or_rollback,
    tb_file,
    trainer_state,
)

HERE = Path(__file__).resolve().parent
EPOCH0 = 1_793_000_000.0  # wall-clock origin (late 2026); each case shifts it
Rows = list[tuple[int, dict]]
Level = Callable[[float], float]


# ---------------------------------------------------------------------------------------------------- level curves

def lin(pts: dict[float, float]) -> Level:
    """Piecewise linear through {step: level}; flat before the first and after the last knot."""
    xs, ys = sorted(pts), [pts[k] for k in sorted(pts)]
    return lambda s: float(np.interp(s, xs, ys))


def sat(a: float, b: float, tau: float, start: float = 0.0) -> Level:
    """Saturating rise from a toward b with time constant tau, from `start`."""
    return lambda s: float(a + (b - a) * (1.0 - math.exp(-max(s - start, 0.0) / tau)))


def const(v: float) -> Level:
    return lambda s: float(v)


def plus(*fs: Level) -> Level:
    return lambda s: float(sum(f(s) for f in fs))


def ramp_after(t0: float, slope: float, power: float = 1.0) -> Level:
    """0 before t0, then slope * (s - t0) ** power: a fault that sets in at t0."""
    return lambda s: float(slope * max(s - t0, 0.0) ** power)


def cos_lr(peak: float, total: int, warm: int = 0) -> Level:
    def f(s: float) -> float:
        if s < warm:
            return peak * (s + 1) / warm
        return peak * 0.5 * (1 + math.cos(math.pi * min(1.0, (s - warm) / max(1, total - warm))))
    return f


# ----------------------------------------------------------------------------------------------------- noise model

def logit(p: float) -> float:
    p = min(max(p, 1e-4), 1 - 1e-4)
    return math.log(p / (1 - p))


_GH_X, _GH_W = np.polynomial.hermite_e.hermegauss(40)
_GH_W = _GH_W / _GH_W.sum()


def _centre(p: float, spread: float) -> float:
    """The logit centre whose logit-normal prompt mix has mean solve rate p (bisection)."""
    lo, hi = -12.0, 12.0
    for _ in range(50):
        mid = (lo + hi) / 2
        m = float((_GH_W / (1 + np.exp(-(mid + spread * _GH_X)))).sum())
        lo, hi = (mid, hi) if m < p else (lo, mid)
    return (lo + hi) / 2


def verifiable_batch(rng: np.random.Generator, p: float, prompts: int, group: int, spread: float = 1.1) -> dict:
    """One batch of 0/1 rewards: batch mean, batch std, share of prompts with no spread inside their group."""
    if p <= 0.0 or p >= 1.0:
        v = float(p >= 1.0)
        return {"reward": v, "reward_std": 0.0, "zero_std": 1.0}
    c = _centre(p, spread)
    rates = 1 / (1 + np.exp(-(c + spread * rng.standard_normal(prompts))))
    hits = rng.binomial(group, rates)
    return {"reward": float(hits.sum() / (prompts * group)),
            "reward_std": float(np.sqrt((hits.sum() / (prompts * group)) * (1 - hits.sum() / (prompts * group)))),
            "zero_std": float(np.mean((hits == 0) | (hits == group)))}


def verifiable_sd(p: float, prompts: int, group: int, spread: float = 1.1, k: int = 1) -> float:
    """Sampling sd of the mean of k batch means (prompt mix + rollout noise)."""
    c = _centre(p, spread)
    r = 1 / (1 + np.exp(-(c + spread * _GH_X)))
    between = float((_GH_W * (r - p) ** 2).sum())
    within = float((_GH_W * r * (1 - r)).sum()) / group
    return math.sqrt((between + within) / prompts / k)


def scored_batch(rng: np.random.Generator, level: float, sd: float, n: int, lo: float, hi: float) -> float:
    return float(np.clip(level + sd * rng.standard_normal(n), lo, hi).mean())


def binom(rng: np.random.Generator, p: float, n: int) -> float:
    return float(rng.binomial(n, min(max(p, 0.0), 1.0)) / n)


def bsd(p: float, n: int) -> float:
    return math.sqrt(p * (1 - p) / n)


def jit(rng: np.random.Generator, x: float, rel: float = 0.04) -> float:
    return float(x * math.exp(rel * rng.standard_normal()))


def gnorm(rng: np.random.Generator, x: float) -> float:
    v = x * math.exp(0.2 * rng.standard_normal())
    if rng.random() < 1 / 40:
        v *= 1 + rng.pareto(1.5)
    return float(v)


# ------------------------------------------------------------------------------------------------------- the plans

@dataclass
class Plan:
    """Noise-free story of one run plus the draw that makes its logs."""

    what: str  # which headline the labels were read from
    head: Level  # noise-free headline level
    head_steps: list[int]  # the steps the headline is logged at
    head_sd: float  # one sampling sd of the headline (see module doc)
    draw: Callable[[np.random.Generator], dict]  # -> {"train": Rows, "eval": Rows, ...}
    lower_is_better: bool = False
    gen: Callable = field(init=False)

    def __post_init__(self) -> None:
        self.gen = self.draw


def window(plan: Plan, onset: int) -> tuple[int, int]:
    sign = -1.0 if plan.lower_is_better else 1.0
    lv = [(s, sign * plan.head(s)) for s in plan.head_steps]
    best = max(v for _, v in lv)
    good = [s for s, v in lv if v >= best - plan.head_sd]
    return good[0], max(s for s in good if s <= onset)


def RB(plan: Plan, onset: int) -> dict:
    return rollback(*window(plan, onset), onset)


def SRB(plan: Plan, onset: int) -> dict:
    return stop_or_rollback(*window(plan, onset), onset)


def every(n0: int, n1: int, k: int) -> list[int]:
    return list(range(n0, n1 + 1, k))


def draw_evals(rng: np.random.Generator, steps: list[int], curves: dict[str, tuple[Level, int]]) -> Rows:
    return [(s, {k: binom(rng, f(s), n) for k, (f, n) in curves.items()}) for s in steps]


def verifiable_rows(rng: np.random.Generator, steps: list[int], p: Level, prompts: int, group: int,
                    per_log: int = 1, extra: dict[str, tuple[Level, float | str]] | None = None) -> Rows:
    """Train rows of a 0/1-reward run: per_log batches averaged into each logged row (TRL-style intervals)."""
    rows = []
    for s in steps:
        bs = [verifiable_batch(rng, p(s), prompts, group) for _ in range(per_log)]
        v = {k: float(np.mean([b[k] for b in bs])) for k in bs[0]}
        for name, (f, noise) in (extra or {}).items():
            x = f(s)
            v[name] = gnorm(rng, x) if noise == "heavy" else (x if noise == 0 else jit(rng, x, float(noise)))
        rows.append((s, v))
    return rows


# ----------------------------------------------------------------------------------------------------- writers

def host(i: int) -> str:
    return f"gpu-node-{i:02d}"


def tb_name(wall: float, node: int, pid: int) -> str:
    return f"events.out.tfevents.{int(wall)}.{host(node)}.{pid}.0"


def walls(steps: list[int], t0: float, sec: float) -> dict[int, float]:
    return {s: t0 + sec * s for s in steps}


def rename(v: dict, keys: dict[str, str]) -> dict:
    return {keys[k]: x for k, x in v.items() if k in keys and x is not None}


def r6(x):
    return None if x is None else (x if isinstance(x, int) else float(f"{x:.6g}"))


# --- HF / TRL trainer_state.json with checkpoint-N folders

def hf_history(train: Rows, evals: Rows, tkeys: dict, ekeys: dict, steps_per_epoch: float, eval_extra=True) -> list:
    hist = []
    ev = dict(evals)
    for s, v in train:
        row = {k: r6(x) for k, x in rename(v, tkeys).items()}
        row.update(epoch=round(s / steps_per_epoch, 4), step=s)
        hist.append(row)
        if s in ev:
            e = {k: r6(x) for k, x in rename(ev[s], ekeys).items()}
            if eval_extra:
                e.update(eval_runtime=round(38.0 + 3 * math.sin(s), 3), eval_samples_per_second=13.2,
                         eval_steps_per_second=0.41)
            e.update(epoch=round(s / steps_per_epoch, 4), step=s)
            hist.append(e)
    return hist


def w_hf_checkpoints(out: Path, hist: list, saves: list[int], max_steps: int, logging: int, save_every: int,
                     eval_steps: int | None, steps_per_epoch: float, finished: bool = False, top: bool = False,
                     epochs: int = 1) -> None:
    """checkpoint-N/trainer_state.json holds the history up to N; a finished run with save_state gets a top copy."""
    for n in saves:
        part = [r for r in hist if r["step"] <= n]
        st = trainer_state(part, n, max_steps, logging, save_every, eval_steps, round(n / steps_per_epoch, 4),
                           num_train_epochs=epochs, training_stop=finished and n == saves[-1])
        ck = out / f"checkpoint-{n}"
        dump_json(ck / "trainer_state.json", st)
        (ck / "adapter_config.json").write_text(json.dumps({"peft_type": "LORA", "r": 32, "lora_alpha": 64}))
    if top:
        last = hist[-1]["step"]
        full = list(hist)
        if finished:
            full.append({"epoch": round(last / steps_per_epoch, 4), "step": last, "total_flos": 0.0,
                         "train_loss": 0.0123, "train_runtime": 51234.7, "train_samples_per_second": 1.2,
                         "train_steps_per_second": 0.02})
        dump_json(out / "trainer_state.json", trainer_state(full, last, max_steps, logging, save_every, eval_steps,
                                                            round(last / steps_per_epoch, 4), num_train_epochs=epochs,
                                                            training_stop=finished))


# --- TRL console: dict lines between tqdm bars

def tqdm(n: int, total: int, sec: float) -> str:
    pct = int(100 * n / total)
    el, left = int(n * sec), int((total - n) * sec)

    def hms(t: int) -> str:
        return f"{t // 3600}:{t % 3600 // 60:02d}:{t % 60:02d}" if t >= 3600 else f"{t // 60:02d}:{t % 60:02d}"
    return f"{pct:3d}%|{'█' * (pct // 10):10s}| {n}/{total} [{hms(el)}<{hms(left)}, {sec:5.2f}s/it]"


def w_trl_console(out: Path, name: str, train: Rows, evals: Rows, tkeys: dict, ekeys: dict, total: int,
                  steps_per_epoch: float, sec: float, banner: list[str]) -> None:
    ev = dict(evals)
    lines = list(banner)
    for s, v in train:
        lines.append("\r" + tqdm(s, total, sec))
        d = {k: r6(x) for k, x in rename(v, tkeys).items()}
        d["epoch"] = round(s / steps_per_epoch, 2)
        lines.append(repr(d))
        if s in ev:
            lines.append("\r" + tqdm(s, total, sec))
            e = {k: r6(x) for k, x in rename(ev[s], ekeys).items()}
            e.update(eval_runtime=41.7, eval_samples_per_second=12.0, eval_steps_per_second=0.38,
                     epoch=round(s / steps_per_epoch, 2))
            lines.append(repr(e))
    (out / name).write_text("\n".join(lines) + "\n")


# --- verl console (LocalLogger) and file logger

def np_fmt(x: float | int) -> str:
    if isinstance(x, int):
        return f"np.int64({x})"
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "np.float64(nan)"
    return f"np.float64({float(x)!r})"


def verl_line(step: int, v: dict, prefix: str, numpy2: bool) -> str:
    parts = [f"step:{step}"] + [f"{k}:{np_fmt(x) if numpy2 else f'{x:.3f}'}" for k, x in v.items()]
    return prefix + " - ".join(parts)


def w_verl_console(out: Path, name: str, train: Rows, evals: Rows, tkeys: dict, ekeys: dict, prefix: str,
                   numpy2: bool = True, noise_lines: list[str] | None = None, val0: dict | None = None) -> None:
    ev = dict(evals)
    lines = list(noise_lines or [])
    if val0 is not None:
        lines.append(verl_line(0, rename(val0, ekeys), prefix, numpy2))
    for s, v in train:
        row = rename(v, tkeys)
        if s in ev:
            row.update(rename(ev[s], ekeys))
        lines.append(verl_line(s, row, prefix, numpy2))
        if s % 50 == 0:
            lines.append(f"{prefix}INFO {s}: saved checkpoint to checkpoints/global_step_{s}")
    (out / name).write_text("\n".join(lines) + "\n")


def w_verl_jsonl(path: Path, train: Rows, evals: Rows, tkeys: dict, ekeys: dict, val0: dict | None = None,
                 torn: bool = False) -> None:
    ev = dict(evals)
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = []
    if val0 is not None:
        lines.append(json.dumps({"step": train[0][0] - 1 if train[0][0] > 1 else 0, "data": rename(val0, ekeys)}))
    for s, v in train:
        row = rename(v, tkeys)
        if s in ev:
            row.update(rename(ev[s], ekeys))
        lines.append(json.dumps({"step": s, "data": {k: r6(x) for k, x in row.items()}}, separators=(",", ":")))
    text = "\n".join(lines) + "\n"
    if torn:
        text = text[:-1][: -len(lines[-1]) // 2]
    path.write_text(text)


def verl_ckpts(out: Path, steps: list[int]) -> None:
    for s in steps:
        (out / f"global_step_{s}" / "actor").mkdir(parents=True, exist_ok=True)
        (out / f"global_step_{s}" / "actor" / "huggingface").mkdir(exist_ok=True)
    (out / "latest_checkpointed_iteration.txt").write_text(str(steps[-1]))


# --- OpenRLHF console

def w_openrlhf_console(out: Path, name: str, train: Rows, evals: Rows, tkeys: dict, ekeys: dict, head: list[str],
                       t0: float, sec: float) -> None:
    ev = dict(evals)
    lines = list(head)
    for s, v in train:
        t = datetime.fromtimestamp(t0 + s * sec, UTC).strftime("%Y-%m-%d %H:%M:%S")
        d = {k: r6(x) for k, x in rename(v, tkeys).items()}
        lines.append(f"[{t},{s % 1000:03d}] [INFO] [ppo_trainer.py:417:fit] ✨ Global step {s}: {d!r}")
        if s in ev:
            e = {k: r6(x) for k, x in rename(ev[s], ekeys).items()}
            lines.append(f"[{t},{(s + 7) % 1000:03d}] [INFO] [ppo_trainer.py:471:evaluate] ✨ Evaluation completed in "
                         f"52.31 seconds, global_step {s}, eval_metrics: {e!r}")
    (out / name).write_text("\n".join(lines) + "\n")


# --- MLflow file store and SQL store

def w_mlflow_files(root: Path, exp_id: str, exp_name: str, run_id: str, run_name: str,
                   series: dict[str, list[tuple[int, float, float]]], params: dict, status: str = "RUNNING") -> None:
    """series: key -> [(step, wall, value)]; keys with '/' become nested folders, as the file store writes them."""
    ex = root / "mlruns" / exp_id
    ex.mkdir(parents=True, exist_ok=True)
    (ex / "meta.yaml").write_text(f"artifact_location: file:///home/rl/mlruns/{exp_id}\ncreation_time: "
                                  f"{int(EPOCH0 * 1000)}\nexperiment_id: '{exp_id}'\nlast_update_time: "
                                  f"{int(EPOCH0 * 1000)}\nlifecycle_stage: active\nname: {exp_name}\n")
    rd = ex / run_id
    start = min(w for pts in series.values() for _, w, _ in pts)
    end = max(w for pts in series.values() for _, w, _ in pts)
    (rd / "artifacts").mkdir(parents=True, exist_ok=True)
    (rd / "meta.yaml").write_text(
        f"artifact_uri: file:///home/rl/mlruns/{exp_id}/{run_id}/artifacts\nend_time: "
        f"{int(end * 1000) if status == 'FINISHED' else 'null'}\nentry_point_name: ''\nexperiment_id: '{exp_id}'\n"
        f"lifecycle_stage: active\nrun_id: {run_id}\nrun_name: {run_name}\nrun_uuid: {run_id}\nsource_name: ''\n"
        f"source_type: 4\nsource_version: ''\nstart_time: {int(start * 1000)}\n"
        f"status: {3 if status == 'FINISHED' else 1}\ntags: []\nuser_id: rl\n")
    for k, pts in series.items():
        p = rd / "metrics" / k
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("".join(f"{int(w * 1000)} {float(x)!r} {s}\n" for s, w, x in pts))
    (rd / "params").mkdir(exist_ok=True)
    for k, x in params.items():
        (rd / "params" / k).write_text(str(x))
    (rd / "tags").mkdir(exist_ok=True)
    (rd / "tags" / "mlflow.runName").write_text(run_name)
    (rd / "tags" / "mlflow.user").write_text("rl")


MLFLOW_SQL = """
CREATE TABLE experiments (experiment_id INTEGER PRIMARY KEY, name VARCHAR(256) NOT NULL UNIQUE,
  artifact_location VARCHAR(256), lifecycle_stage VARCHAR(32), creation_time BIGINT, last_update_time BIGINT);
CREATE TABLE runs (run_uuid VARCHAR(32) PRIMARY KEY, name VARCHAR(250), source_type VARCHAR(20),
  source_name VARCHAR(500), entry_point_name VARCHAR(50), user_id VARCHAR(256), status VARCHAR(9),
  start_time BIGINT, end_time BIGINT, deleted_time BIGINT, source_version VARCHAR(50), lifecycle_stage VARCHAR(20),
  artifact_uri VARCHAR(200), experiment_id INTEGER);
CREATE TABLE metrics (key VARCHAR(250) NOT NULL, value FLOAT NOT NULL, timestamp BIGINT NOT NULL,
  run_uuid VARCHAR(32) NOT NULL, step BIGINT DEFAULT 0 NOT NULL, is_nan BOOLEAN DEFAULT 0 NOT NULL,
  PRIMARY KEY (key, timestamp, step, run_uuid, value, is_nan));
CREATE TABLE latest_metrics (key VARCHAR(250) NOT NULL, value FLOAT NOT NULL, timestamp BIGINT, step BIGINT NOT NULL,
  is_nan BOOLEAN NOT NULL, run_uuid VARCHAR(32) NOT NULL, PRIMARY KEY (key, run_uuid));
CREATE TABLE params (key VARCHAR(250) NOT NULL, value VARCHAR(8000) NOT NULL, run_uuid VARCHAR(32) NOT NULL,
  PRIMARY KEY (key, run_uuid));
CREATE TABLE tags (key VARCHAR(250) NOT NULL, value VARCHAR(8000), run_uuid VARCHAR(32) NOT NULL,
  PRIMARY KEY (key, run_uuid));
CREATE TABLE alembic_version (version_num VARCHAR(32) NOT NULL PRIMARY KEY);
"""


def w_mlflow_db(path: Path, run_id: str, run_name: str, series: dict[str, list[tuple[int, float, float]]],
                params: dict, status: str = "RUNNING") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(path)
    db.executescript(MLFLOW_SQL)
    db.execute("INSERT INTO alembic_version VALUES ('1b5f0d9ad7c1')")
    db.execute("INSERT INTO experiments VALUES (0, 'Default', 'mlflow-artifacts:/0', 'active', ?, ?)",
               (int(EPOCH0 * 1000), int(EPOCH0 * 1000)))
    start = min(w for pts in series.values() for _, w, _ in pts)
    end = max(w for pts in series.values() for _, w, _ in pts)
    db.execute("INSERT INTO runs VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
               (run_id, run_name, "LOCAL", "train.py", "", "rl", status, int(start * 1000),
                int(end * 1000) if status == "FINISHED" else None, None, "", "active",
                f"mlflow-artifacts:/0/{run_id}/artifacts", 0))
    for k, pts in series.items():
        for s, w, x in pts:
            nan = isinstance(x, float) and math.isnan(x)
            db.execute("INSERT INTO metrics VALUES (?,?,?,?,?,?)", (k, 0.0 if nan else x, int(w * 1000), run_id, s,
                                                                   int(nan)))
        s, w, x = pts[-1]
        db.execute("INSERT INTO latest_metrics VALUES (?,?,?,?,?,?)", (k, x, int(w * 1000), s, 0, run_id))
    for k, x in params.items():
        db.execute("INSERT INTO params VALUES (?,?,?)", (k, str(x), run_id))
    db.execute("INSERT INTO tags VALUES ('mlflow.runName', ?, ?)", (run_name, run_id))
    db.commit()
    db.close()


def series_of(rows: Rows, keys: dict, wall: dict[int, float]) -> dict[str, list[tuple[int, float, float]]]:
    out: dict[str, list[tuple[int, float, float]]] = {}
    for s, v in rows:
        for k, x in rename(v, keys).items():
            out.setdefault(k, []).append((s, wall[s], float(x)))
    return out


# --- Trackio (one SQLite database per project)

def w_trackio(path: Path, project: str, run: str, rows: list[tuple[int, float, dict]], config: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(path / f"{project}.db" if path.suffix != ".db" else path)
    db.executescript("""
CREATE TABLE metrics (id INTEGER PRIMARY KEY AUTOINCREMENT, timestamp TEXT NOT NULL, run_name TEXT NOT NULL,
  step INTEGER NOT NULL, metrics TEXT NOT NULL, run_id TEXT);
CREATE TABLE configs (id INTEGER PRIMARY KEY AUTOINCREMENT, run_name TEXT NOT NULL, config TEXT NOT NULL,
  created_at TEXT NOT NULL, run_id TEXT);
CREATE TABLE system_metrics (id INTEGER PRIMARY KEY AUTOINCREMENT, timestamp TEXT NOT NULL, run_name TEXT NOT NULL,
  metrics TEXT NOT NULL, run_id TEXT);
""")
    rid = "r" + format(abs(hash(run)) % 16**8, "08x")
    for s, w, m in rows:
        db.execute("INSERT INTO metrics (timestamp, run_name, step, metrics, run_id) VALUES (?,?,?,?,?)",
                   (datetime.fromtimestamp(w, UTC).isoformat(), run, s, json.dumps(m), rid))
    db.execute("INSERT INTO configs (run_name, config, created_at, run_id) VALUES (?,?,?,?)",
               (run, json.dumps(config), datetime.fromtimestamp(rows[0][1], UTC).isoformat(), rid))
    db.commit()
    db.close()


# --- W&B UI panel CSV export

def w_wandb_panel(path: Path, run: str, metric: str, pts: list[tuple[int, float]], axis: str = "Step",
                  bucket: int = 1) -> None:
    """One panel's 'Export CSV': x column, then '<run> - <metric>' and its __MIN/__MAX bucket band."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        col = f"{run} - {metric}"
        w.writerow([axis, col, col + "__MIN", col + "__MAX"])
        for i in range(0, len(pts), bucket):
            chunk = pts[i:i + bucket]
            vals = [v for _, v in chunk]
            w.writerow([chunk[-1][0], f"{np.mean(vals):.6g}", f"{min(vals):.6g}", f"{max(vals):.6g}"])


# ------------------------------------------------------------------------------------------------------- the cases

CASES: list[Case] = []


def case(name: str, plan: Plan, write: Callable, seed: int, steps, labels: dict, tags: str, why: str) -> None:
    CASES.append(Case(name, plan, write, seed, steps, labels, tags, why))


def write_run(c: Case, folder: Path) -> None:
    data = c.scenario.draw(np.random.default_rng(c.seed))
    folder.mkdir(parents=True, exist_ok=True)
    c.write(data, folder)


def judged_rows(rng: np.random.Generator, steps: list[int], level: Level, per_sample_sd: float, n: int,
                lo: float, hi: float, extra: dict[str, tuple[Level, float | str]] | None = None) -> Rows:
    rows = []
    for s in steps:
        v = {"reward": scored_batch(rng, level(s), per_sample_sd, n, lo, hi)}
        for name, (f, noise) in (extra or {}).items():
            x = f(s)
            v[name] = gnorm(rng, x) if noise == "heavy" else (x if noise == 0 else jit(rng, x, float(noise)))
        rows.append((s, v))
    return rows


# 1 ------------------------------------------------------------- PPO with whitened rewards: only the eval moves
WIN_OK = sat(0.22, 0.45, 1500)
RMS_OK = sat(-1.1, 0.9, 1500)


def d_whitened_ok(rng):
    steps = every(10, 1200, 10)
    train = [(s, {"wmean": 0.02 * rng.standard_normal(), "wstd": jit(rng, 1.0, 0.01),
                  "kl": jit(rng, 0.01 + 0.07 * s / 1200, 0.06), "ent": jit(rng, 1.9 - 0.25 * s / 1200, 0.02),
                  "len": jit(rng, 240 + 25 * s / 1200, 0.03), "gn": gnorm(rng, 0.9), "lr": 1e-6,
                  "vloss": jit(rng, 0.4 - 0.2 * min(s, 300) / 300, 0.08)}) for s in steps]
    ev = [(s, {"win": binom(rng, WIN_OK(s), 805),
               "rms": float(RMS_OK(s) + 0.05 * rng.standard_normal())}) for s in every(100, 1200, 100)]
    return {"train": train, "eval": ev}


WHITENED_KEYS = {"wmean": "reward/whitened_mean", "wstd": "reward/whitened_std", "kl": "policy/kl_ref",
                 "ent": "policy/entropy", "len": "rollout/response_len", "gn": "optim/grad_norm", "lr": "optim/lr",
                 "vloss": "value/loss"}
WHITENED_EVAL = {"win": "eval/alpacaeval_winrate", "rms": "eval/rm_score_raw"}


def w_whitened_files(data, out: Path) -> None:
    wall = walls([s for s, _ in data["train"]], EPOCH0 + 3e5, 41.0)
    series = series_of(data["train"], WHITENED_KEYS, wall) | series_of(data["eval"], WHITENED_EVAL, wall)
    for slow in ("policy/kl_ref", "policy/entropy", "value/loss"):  # logged by a callback every 50 steps only
        series[slow] = [pt for pt in series[slow] if pt[0] % 50 == 0]
    w_mlflow_files(out, "417", "ppo-hh-8b", "3c1f9a07be2d4e51a6c0d2f8b9e41a77", "ppo-whiten-rm7b-lr1e6", series,
                   {"algo": "ppo", "whiten_rewards": "True", "kl_coef": "0.02", "total_steps": "3000",
                    "eval_every": "100", "eval_prompts": "805"})


case("ok-ppo-whitened-reward-pinned-at-zero-winrate-rising-mlflow-files",
     Plan("eval winrate", WIN_OK, every(100, 1200, 100), bsd(0.35, 805), d_whitened_ok), w_whitened_files, 1421,
     (1200, 3000), HEALTHY, "custom mlflow mlflow_files ppo whitened_reward lookalike live",
     """Own PPO loop with a 7B reward model and whiten_rewards=True, logged to an MLflow file store (KL, entropy and
     value loss only every 50 steps by a callback, the rest every 10), step 1200 of a planned 3000. The only train reward logged is the whitened batch mean, which is 0 +- 0.02 by construction (its
     std is pinned at 1.0), so the reward curve is flat by definition and says nothing. Progress shows in the
     held-out eval every 100 steps: AlpacaEval win rate (805 prompts, sd ~0.017) ~0.24 at 100, ~0.29 at 500, ~0.35 at
     1200, still +0.03 over the last 400 steps, and the raw RM score on held-out prompts climbs with it (-1.0 ->
     ~0.0). KL to the reference grows slowly (0.01 -> 0.08), entropy eases 1.9 -> 1.65, lengths +10%. A learning run
     with 60% of its budget left: continue.""")


# 2 ------------------------------------------------------------- whitened rewards again, the win rate peaks
WIN_BAD = plus(sat(0.22, 0.42, 250), lambda s: -0.08 * max(s - 800, 0) / 600)


def d_whitened_bad(rng):
    steps = every(5, 1400, 5)
    kl = plus(const(0.01), lambda s: 0.05 * s / 800, ramp_after(800, 0.35 / 600 ** 1.5, 1.5))
    train = [(s, {"wmean": 0.02 * rng.standard_normal(), "wstd": jit(rng, 1.0, 0.01), "kl": jit(rng, kl(s), 0.06),
                  "ent": jit(rng, 1.7 - 0.2 * s / 1400, 0.02),
                  "len": jit(rng, 260 + 40 * s / 800 + 0.45 * max(s - 800, 0), 0.03),
                  "gn": gnorm(rng, 1.1), "lr": 1e-6}) for s in steps]
    ev = [(s, {"win": binom(rng, WIN_BAD(s), 805)}) for s in every(100, 1400, 100)]
    return {"train": train, "eval": ev}


def w_whitened_db(data, out: Path) -> None:
    wall = walls([s for s, _ in data["train"]], EPOCH0 + 9e5, 33.0)
    keys = {"wmean": "train/reward_whitened_mean", "wstd": "train/reward_whitened_std", "kl": "train/kl",
            "ent": "train/entropy", "len": "train/response_length", "gn": "train/grad_norm", "lr": "train/lr"}
    series = series_of(data["train"], keys, wall) | series_of(data["eval"], {"win": "eval/alpacaeval_lc_winrate"},
                                                              wall)
    w_mlflow_db(out / "mlflow.db", "b93e0d2c5a7f4c21a0e8d6f1c3b5a792", "ppo-whiten-rm7b-seed2", series,
                {"whiten_rewards": "True", "kl_coef": "0.01", "total_steps": "2500", "save_every": "200"})


PLAN2 = Plan("eval winrate", WIN_BAD, every(100, 1400, 100), bsd(0.41, 805), d_whitened_bad)
case("bad-ppo-whitened-reward-flat-winrate-peaks-then-falls-kl-runs-mlflow-db",
     PLAN2, w_whitened_db, 1402, (1400, 2500), RB(PLAN2, 800),
     "custom mlflow mlflow_db ppo whitened_reward rm_overoptimisation eval_decline live",
     """Own PPO loop with reward whitening, logged to MLflow's SQLite store, step 1400 of 2500. The whitened train
     reward is ~0 every step (by construction), so the only quality signal is the held-out AlpacaEval LC win rate
     every 100 steps (805 prompts, sd ~0.017): ~0.29 at 100, ~0.39 at 500, ~0.41 from 600 to 800, then a steady
     fall to ~0.37 at 1100 and ~0.33 at 1400 (about 5 sd below its best). From step 800 KL to the reference
     accelerates (0.06 -> ~0.4) and responses grow ~60%: classic reward-model over-optimisation, the policy is
     worse for people while the RM keeps paying. A better model lies behind: roll back into the plateau,
     newest good eval at 800 (window from 600, the first eval at the best level).""")


# 3 ------------------------------------------------------------- the step column counts samples, not updates
SPU = 512  # samples per optimiser update (64 prompts x 8)
EV_SAMPLES_OK = sat(0.20, 0.52, 700 * SPU)


def d_samples_ok(rng):
    ups = every(1, 560, 1)
    p = sat(0.18, 0.55, 700)
    rows = verifiable_rows(rng, ups, p, 64, 8, extra={"kl": (lambda u: 0.002 + 0.05 * u / 560, 0.07),
                                                      "ent": (lambda u: 0.62 - 0.18 * u / 560, 0.03),
                                                      "len": (lambda u: 380 + 90 * u / 560, 0.04)})
    ev = {u: binom(rng, EV_SAMPLES_OK(u * SPU), 500) for u in every(25, 560, 25)}
    return {"rows": rows, "ev": ev}


def w_samples_csv(data, out: Path) -> None:
    with (out / "metrics.csv").open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["step", "epoch", "reward_mean", "reward_std", "frac_solved_all_or_none", "kl", "entropy",
                    "response_len", "lr", "eval_acc"])
        for u, v in data["rows"]:
            w.writerow([u * SPU, f"{u * SPU / 120000:.4f}", f"{v['reward']:.4f}", f"{v['reward_std']:.4f}",
                        f"{v['zero_std']:.4f}", f"{v['kl']:.5f}", f"{v['ent']:.4f}", f"{v['len']:.1f}", "1e-06",
                        f"{data['ev'][u]:.4f}" if u in data["ev"] else ""])
    (out / "config.yaml").write_text("model: Qwen2.5-3B\nprompts_per_step: 64\ngroup_size: 8\n"
                                     "total_samples: 768000\nlog_x_axis: samples_seen\n")


case("ok-step-column-counts-samples-288k-slow-climb-custom-csv",
     Plan("eval_acc", EV_SAMPLES_OK, [u * SPU for u in every(25, 560, 25)], bsd(0.36, 500), d_samples_ok),
     w_samples_csv, 1403, (560 * SPU, 1500 * SPU), HEALTHY,
     "custom csv grpo step_is_samples slow_learner live lookalike",
     """Own GRPO loop whose CSV 'step' column is samples seen (64 prompts x 8 rollouts = 512 per update; config.yaml
     says so and plans 768,000 samples = 1500 updates). It is at 286,720 samples = update 560. Reward mean climbs
     slowly and steadily ~0.20 -> ~0.37 (batch sd ~0.04), eval_acc every 25 updates on 500 problems (sd ~0.022)
     ~0.21 -> ~0.38 and is still gaining ~0.03 per 150 updates. KL small (<0.06), entropy easing 0.62 -> 0.45,
     lengths +25%. The huge step numbers and the noisy every-update reward make it look long and flat to a quick
     reader; in updates it is barely a third through and learning: continue.""")


# 4 ------------------------------------------------------------- samples as step again: a grad blow-up collapse
SPU4 = 384  # 48 prompts x 8
P_SAMPLES_BAD = plus(sat(0.15, 0.55, 80 * SPU4), ramp_after(440 * SPU4, -0.46 / (45 * SPU4)))


def p_samples_bad(x: float) -> float:
    return max(0.04, P_SAMPLES_BAD(x))


def d_samples_bad(rng):
    ups = every(1, 520, 1)
    rows = verifiable_rows(rng, ups, lambda u: p_samples_bad(u * SPU4), 48, 8,
                           extra={"gn": (lambda u: 0.35 * (1 + 30 * max(u - 432, 0) ** 1.2 / 88 ** 1.2), "heavy"),
                                  "ent": (lambda u: 0.55 - 0.1 * u / 430 + 2.4 * min(max(u - 440, 0), 40) / 40, 0.03),
                                  "len": (lambda u: 420 + 1500 * min(max(u - 445, 0), 40) / 40, 0.04)})
    ev = {u: binom(rng, p_samples_bad(u * SPU4) * 0.92, 400) for u in every(50, 520, 50)}
    return {"rows": rows, "ev": ev}


def w_samples_jsonl(data, out: Path) -> None:
    with (out / "train_log.jsonl").open("w") as fh:
        for u, v in data["rows"]:
            row = {"step": u * SPU4, "reward": round(v["reward"], 4),
                   "reward_std": round(v["reward_std"], 4), "grad_norm": round(v["gn"], 4),
                   "entropy": round(v["ent"], 4), "mean_len": round(v["len"], 1)}
            if u in data["ev"]:
                row["heldout_acc"] = data["ev"][u]
            fh.write(json.dumps(row) + "\n")
    (out / "run.json").write_text(json.dumps({"x_axis": "samples", "samples_per_update": 384,
                                              "planned_samples": 600000, "save_every_samples": 50 * 384}))


def tr_sd_samples(p: float) -> float:
    return verifiable_sd(p, 48, 8, k=50)


PLAN4 = Plan("train reward", p_samples_bad, [u * SPU4 for u in every(1, 520, 1)], tr_sd_samples(0.55),
             d_samples_bad)
case("bad-step-column-counts-samples-grad-blowup-collapse-custom-jsonl",
     PLAN4, w_samples_jsonl, 1404, (520 * SPU4, 1172 * SPU4), RB(PLAN4, 440 * SPU4),
     "custom jsonl grpo step_is_samples grad_explosion collapse live",
     """Own GRPO loop logging JSONL with 'step' = samples seen (384 per update; run.json says so, ~1170 updates
     planned), now at 199,680 samples. The reward rises to ~0.53 by ~95k samples (update ~250) and ~0.55 by ~125k, then holds
     there (a 50-update mean has sd ~0.006). From ~169k samples (update 440) the grad norm climbs from ~0.35 to tens, entropy jumps from
     ~0.45 to ~2.8 and lengths explode to the cap; the reward falls to ~0.05 within 45 updates and stays there, and
     the held-out accuracy (every 50 updates) drops from ~0.5 to ~0.05. A clear breakage after a good stretch: roll
     back to the plateau before the blow-up, newest at 168,960 samples (update 440).""")


# 5 ------------------------------------------------------------- warm-started from an RL checkpoint: high from step 1
VAL_WARM = lin({0: 0.58, 900: 0.655})


def nemo_rows(rng, steps, p, prompts, group, kl, ent, length, gn=0.22, sec=95.0):
    rows = verifiable_rows(rng, steps, p, prompts, group)
    for (s, v) in rows:
        pct0 = float(100 * v["zero_std"] * (1 - v["reward"]))
        v.update(pct0=pct0, pct1=100 * v["zero_std"] - pct0, pctm=100 * (1 - v["zero_std"]), kl=jit(rng, kl(s), 0.08),
                 ent=jit(rng, ent(s), 0.03), len=jit(rng, length(s), 0.04), gn=gnorm(rng, gn), lr=1e-6,
                 loss=float(0.01 * rng.standard_normal()), tstep=jit(rng, sec, 0.05), tgen=jit(rng, 0.6 * sec, 0.06),
                 trunc=min(1.0, jit(rng, 0.02, 0.3)))
    return rows


NEMO_KEYS = {"reward": "train/reward", "pct0": "train/baseline_reward/pct_0", "pct1": "train/baseline_reward/pct_1",
             "pctm": "train/baseline_reward/pct_mixed", "kl": "train/kl_penalty", "ent": "train/approx_entropy",
             "len": "train/mean_gen_tokens_per_sample", "gn": "train/grad_norm", "lr": "train/lr", "loss": "train/loss",
             "tstep": "timing/train/total_step_time", "tgen": "timing/train/generation", "trunc": "train/truncation_rate"}


def w_nemo_tb(out: Path, train: Rows, evals: Rows, ekeys: dict, exp: int, t0: float, sec: float) -> None:
    wall = {s: t0 + sec * s for s, _ in train} | {s: t0 + sec * s + 30 for s, _ in evals}
    ev = [(wall[s], s, rename(v, ekeys)) for s, v in evals]
    tr = [(wall[s], s, rename(v, NEMO_KEYS)) for s, v in train]
    evs = sorted(ev + tr, key=lambda e: e[0])
    tb_file(out / "logs" / f"exp_{exp:03d}" / "tensorboard" / tb_name(evs[0][0], 3, 40211 + exp), evs)


def d_warm_ok(rng):
    steps = every(1, 900, 1)
    train = nemo_rows(rng, steps, lin({0: 0.70, 900: 0.76}), 32, 16, lambda s: 0.004 + 0.01 * s / 900,
                      lambda s: 0.41 - 0.05 * s / 900, lambda s: 610 - 40 * s / 900)
    ev = [(s, {"acc": binom(rng, VAL_WARM(s), 1000), "vlen": jit(rng, 640, 0.02)}) for s in every(0, 900, 50)]
    return {"train": train, "eval": ev}


def w_warm_ok(data, out: Path) -> None:
    w_nemo_tb(out, data["train"], data["eval"], {"acc": "validation/accuracy", "vlen": "validation/avg_length"}, 0,
              EPOCH0 + 2e6, 95.0)
    (out / "logs" / "exp_000" / "config.yaml").write_text(
        "grpo:\n  max_num_steps: 2000\n  val_period: 50\n  val_at_start: true\n  num_prompts_per_step: 32\n"
        "  num_generations_per_prompt: 16\npolicy:\n  model_name: /ckpts/stage1-rl/step_1200/hf\n")


case("ok-warm-started-from-rl-checkpoint-high-from-step-1-val-creeps-up-nemo-tb",
     Plan("validation/accuracy", VAL_WARM, every(0, 900, 50), bsd(0.62, 1000), d_warm_ok), w_warm_ok, 1405,
     (900, 2000), HEALTHY, "nemo_rl tensorboard grpo warm_start slow_learner lookalike live",
     """NeMo-RL GRPO second stage, initialised from a first-stage RL checkpoint (config: model_name .../stage1-rl/
     step_1200), step 900 of 2000. The train reward starts at ~0.70 on step 1 and only creeps to ~0.76 (batch sd
     ~0.03), so there is no learning curve to see and a naive reader calls it a plateau from the start. But it has
     not stopped: validation/accuracy (1000 problems, sd ~0.015, val_at_start) goes ~0.58 at 0, ~0.60 at 300, ~0.63
     at 600, ~0.655 at 900, a steady +0.025 per 300 steps; KL small and entropy easing slowly. Slow, real gains with
     more than half the budget left: continue.""")


# 6 ------------------------------------------------------------- warm start that only loses: best is the start
VAL_SLIDE = lin({0: 0.63, 100: 0.63, 600: 0.555})


def d_warm_bad(rng):
    steps = every(1, 600, 1)
    train = nemo_rows(rng, steps, lin({0: 0.74, 100: 0.74, 600: 0.665}), 32, 16,
                      lambda s: 0.004 + 0.06 * max(s - 100, 0) / 500, lambda s: 0.40 - 0.22 * max(s - 100, 0) / 500,
                      lambda s: 600 - 180 * max(s - 100, 0) / 500)
    ev = [(s, {"acc": binom(rng, VAL_SLIDE(s), 1000)}) for s in every(0, 600, 50)]
    return {"train": train, "eval": ev}


def w_warm_bad(data, out: Path) -> None:
    w_nemo_tb(out, data["train"], data["eval"], {"acc": "validation/accuracy"}, 1, EPOCH0 + 2.5e6, 88.0)


PLAN6 = Plan("validation/accuracy", VAL_SLIDE, every(0, 600, 50), bsd(0.63, 1000), d_warm_bad)
case("bad-warm-started-rl-checkpoint-slides-from-step-100-best-is-the-start-nemo-tb",
     PLAN6, w_warm_bad, 1406, (600, 1500), RB(PLAN6, 100),
     "nemo_rl tensorboard grpo warm_start slow_decline entropy_decline live",
     """NeMo-RL GRPO continuing from an RL checkpoint that had already converged, step 600 of 1500 (the run dir
     holds exp_001 only). Train reward starts at ~0.74 and after the LR warm-up ends (~step 100) slides to ~0.67;
     validation/accuracy (1000 problems, sd ~0.015) is ~0.63 at 0, 50 and 100, then ~0.61 at 250, ~0.59 at 400,
     ~0.555 at 600: 5 sd below the start. Entropy halves and lengths shrink 30% over the same stretch. Nothing has
     been gained since step 0 and real ground is being lost: roll back to the starting weights or the earliest
     checkpoint (window 0-100).""")


# --- TRL GRPO keys by version
def trl_grpo_keys(version: int) -> dict:
    k = {"loss": "loss", "gn": "grad_norm", "lr": "learning_rate", "reward": "reward", "reward_std": "reward_std",
         "acc": "rewards/accuracy_reward/mean", "fmt": "rewards/format_reward/mean", "len": "completions/mean_length",
         "clip": "completions/clipped_ratio", "kl": "kl"}
    if version >= 18:
        k["zero_std"] = "frac_reward_zero_std"
    if version >= 20:
        k["ent"] = "entropy"
    if version >= 26:
        k["tstep"] = "step_time"
    return k


FMT_98, LEN_420, ENT_05, TRUNC_1PCT, LR_5E7 = const(0.98), const(420.0), const(0.5), const(0.01), const(5e-7)


def trl_fill(rng, rows: Rows, fmt: Level = FMT_98, length: Level = LEN_420, ent: Level = ENT_05,
             kl: Level | None = None, gn: float = 0.15, fmt_w: float = 0.2) -> Rows:
    for s, v in rows:
        v.setdefault("acc", v["reward"])
        v.update(loss=round(float(0.002 * rng.standard_normal()), 4), gn=gnorm(rng, gn), lr=1e-6,
                 fmt=min(1.0, jit(rng, fmt(s), 0.01)), len=jit(rng, length(s), 0.04), ent=jit(rng, ent(s), 0.03),
                 clip=min(1.0, jit(rng, 0.01, 0.4)), tstep=jit(rng, 31.0, 0.05))
        if kl is not None:
            v["kl"] = jit(rng, kl(s), 0.07)
        v["reward"] = v["acc"] + v["fmt"] * fmt_w
    return rows


# 7 ------------------------------------------------------------- GRPO: most groups all-correct, held-out still rising
EV_HARD_OK = sat(0.28, 0.50, 600)


def d_spread_ok(rng):
    steps = every(10, 700, 10)
    rows = []
    for s in steps:
        bs = [verifiable_batch(rng, sat(0.55, 0.95, 200)(s), 16, 8, spread=3.2) for _ in range(4)]
        rows.append((s, {k: float(np.mean([b[k] for b in bs])) for k in bs[0]}))
    rows = trl_fill(rng, rows, length=lin({0: 380, 700: 520}), ent=lin({0: 0.52, 700: 0.38}))
    ev = [(s, {"acc": binom(rng, EV_HARD_OK(s), 600)}) for s in every(100, 700, 100)]
    return {"train": rows, "eval": ev}


def w_spread_ok(data, out: Path) -> None:
    keys = trl_grpo_keys(21)
    ekeys = {"acc": "eval_rewards/accuracy_reward/mean"}
    hist = hf_history(data["train"], data["eval"], keys, ekeys, 250.0)
    w_hf_checkpoints(out, hist, [500, 600, 700], 1200, 10, 100, 100, 250.0, epochs=5)


case("ok-grpo-groups-80pct-all-correct-train-saturated-harder-eval-rising-trl021-state",
     Plan("eval accuracy", EV_HARD_OK, every(100, 700, 100), bsd(0.42, 600), d_spread_ok), w_spread_ok, 1407,
     (700, 1200), HEALTHY, "trl trainer_state grpo zero_std saturated_train eval_rising lookalike live save_limit",
     """TRL 0.21 GRPO (8 generations, save_total_limit 3: checkpoint-500/600/700 on disk), step 700 of 1200. The
     training set is getting easy: accuracy reward ~0.93 since ~step 450 and frac_reward_zero_std has climbed to
     ~0.8 (most groups all-correct, no gradient from them), which by itself reads as saturation. The held-out
     eval is a harder split (600 problems, sd ~0.02): ~0.31 at 100, ~0.39 at 400, ~0.43 at 700, still rising
     ~0.012 per 100 steps (+0.036 over the last 300, ~1.8 sd), and the remaining mixed groups keep a gradient. Entropy eases 0.52 -> 0.38 and
     lengths grow modestly. The held-out gains say more steps pay: continue.""")


# 8 ------------------------------------------------------------- the same picture with the eval saturated: stop
EV_SAT = sat(0.60, 0.81, 110)


def d_spread_stop(rng):
    steps = every(10, 800, 10)
    rows = []
    for s in steps:
        bs = [verifiable_batch(rng, sat(0.60, 0.945, 90)(s), 16, 8, spread=3.2) for _ in range(4)]
        rows.append((s, {k: float(np.mean([b[k] for b in bs])) for k in bs[0]}))
    rows = trl_fill(rng, rows, length=lin({0: 300, 300: 250, 800: 240}), ent=lin({0: 0.45, 300: 0.28, 800: 0.24}),
                    kl=lin({0: 0.0, 300: 0.012, 800: 0.018}), fmt_w=0.0)
    ev = [(s, {"acc": binom(rng, EV_SAT(s), 1319)}) for s in every(50, 800, 50)]
    return {"train": rows, "eval": ev}


def w_spread_stop(data, out: Path) -> None:
    keys = trl_grpo_keys(18)
    keys.pop("fmt")
    w_trl_console(out, "train.log", data["train"], data["eval"], keys, {"acc": "eval_reward"}, 1000, 467.0, 28.0,
                  ["INFO 11-20 09:12:03 llm_engine.py:234] Initializing an LLM engine (v0.7.2) with config: "
                   "model='Qwen/Qwen2.5-1.5B-Instruct'", "trl==0.18.2 | num_generations=8 | beta=0.04 | "
                   "logging_steps=10 | eval_steps=50 | max_steps=1000"])


case("stop-grpo-groups-85pct-all-correct-gsm8k-eval-flat-since-350-trl018-console",
     Plan("eval_reward", EV_SAT, every(50, 800, 50), bsd(0.81, 1319), d_spread_stop), w_spread_stop, 1408,
     (800, 1000), stop(350), "trl console grpo zero_std saturated eval_plateau live",
     """TRL 0.18 GRPO on GSM8K, console log (dict lines between tqdm bars), step 800 of 1000. Train reward saturated at
     ~0.94 by step ~300 and frac_reward_zero_std sits at ~0.83-0.85: most groups are all-correct and give no
     gradient. The GSM8K test eval every 50 steps (1319 problems, sd ~0.011) rose ~0.68 -> ~0.80 by step 300 and has
     been flat at ~0.81 from 350 to 800 (nine evals within noise, no decline). KL stays tiny (~0.018), entropy has
     settled. Nothing more to gain from this data and the current weights are as good as any: stop (onset at the
     start of the eval plateau, ~350).""")


# 9 ------------------------------------------------------------- length penalty: reward rises by shortening, val holds
def d_short_ok(rng):
    steps = every(1, 400, 1)
    rows = []
    for s in steps:
        b = verifiable_batch(rng, 0.86, 64, 8)
        ln = jit(rng, 820 - 390 * (1 - math.exp(-s / 260)), 0.03)
        score = b["reward"] - 0.35 * ln / 1024
        rows.append((s, {"score": score, "len": ln, "lmax": min(1024.0, ln * 2.1), "clip": min(1.0, jit(rng, 0.01, 0.4)),
                         "ent": jit(rng, 0.48 - 0.1 * s / 400, 0.03), "klloss": jit(rng, 0.002 + 0.02 * s / 400, 0.08),
                         "gn": gnorm(rng, 0.3), "pg": float(0.003 * rng.standard_normal()),
                         "tgen": jit(rng, 40.0 * ln / 820, 0.05), "tstep": jit(rng, 40.0 * ln / 820 + 22, 0.04)}))
    ev = [(s, {"acc": binom(rng, 0.86, 1319)}) for s in every(20, 400, 20)]
    return {"train": rows, "eval": ev, "val0": {"acc": binom(rng, 0.86, 1319)}}


VERL_KEYS = {"score": "critic/score/mean", "rew": "critic/rewards/mean", "len": "response_length/mean",
             "lmax": "response_length/max", "clip": "response_length/clip_ratio", "ent": "actor/entropy",
             "klloss": "actor/kl_loss", "gn": "actor/grad_norm", "pg": "actor/pg_loss", "tgen": "timing_s/gen",
             "tstep": "timing_s/step", "clipfrac": "actor/pg_clipfrac", "vf": "critic/vf_loss",
             "klpen": "actor/reward_kl_penalty", "klcoef": "actor/reward_kl_penalty_coeff"}


def w_short_ok(data, out: Path) -> None:
    rows = [(s, dict(v, rew=v["score"])) for s, v in data["train"]]
    w_verl_jsonl(out / "gsm8k_concise" / "qwen2.5-7b-lenpen-0.35.jsonl", rows, data["eval"], VERL_KEYS,
                 {"acc": "val-core/openai/gsm8k/acc/mean@1"}, val0=data["val0"], torn=True)


case("ok-length-penalty-reward-rises-by-shortening-gsm8k-val-holds-verl-jsonl",
     Plan("critic/score/mean", lambda s: 0.86 - 0.35 * (820 - 390 * (1 - math.exp(-s / 260))) / 1024,
          every(1, 400, 1), 0.004, d_short_ok), w_short_ok, 1409, (400, 1000), HEALTHY,
     "verl jsonl file_logger grpo length_penalty length_shrinks lookalike live",
     """verl GRPO with a length penalty in the reward (score = correct - 0.35 * len/1024), file logger JSONL still
     being written (the last line is torn), step ~400 of 1000. critic/score/mean rises ~0.58 -> ~0.68 while response_length/mean falls ~820 -> ~510 tokens, a
     fast fall that looks like a length collapse. It is the point of the run: the correctness part is unchanged,
     and val-core/openai/gsm8k/acc/mean@1 (1319 problems, sd ~0.01) holds at ~0.86 at every validation from step 0
     to 400. Lengths are still falling (the score still rising ~0.01 per 100 steps), generation time drops with
     them, entropy and KL are calm. Cheaper answers at the same accuracy and still improving: continue.""")


# 10 ------------------------------------------------------------ LLM judge on a 0-100 scale, rising
JUDGE_OK = sat(38.0, 74.0, 900)
ORLHF_KEYS = {"reward": "reward", "ret": "return", "pl": "policy_loss", "kl": "kl", "len": "response_length",
              "tlen": "total_length", "trunc": "truncated", "lr": "actor_lr", "gn": "actor_grad_norm",
              "clipr": "ppo_clip_ratio", "ppokl": "ppo_kl", "vkl": "vllm_kl", "ent": "entropy_loss",
              "rmean": "rollout/reward_mean", "rstd": "rollout/reward_std", "gstd": "group_reward_std",
              "tgen": "timing/generation", "ttot": "timing/step_total"}


def orlhf_fill(rng, rows: Rows, kl: Level, length: Level, ent: Level, trunc: Level = TRUNC_1PCT,
               scale: float = 1.0) -> Rows:
    for s, v in rows:
        v.update(rmean=v["reward"] + 0.3 * scale * rng.standard_normal() / 8, rstd=jit(rng, 17.5 * scale / 100, 0.05),
                 gstd=jit(rng, 12.0 * scale / 100, 0.06), kl=jit(rng, kl(s), 0.07), len=jit(rng, length(s), 0.03),
                 ent=jit(rng, ent(s), 0.03), trunc=min(1.0, jit(rng, trunc(s), 0.15)), lr=5e-7, gn=gnorm(rng, 0.6),
                 clipr=jit(rng, 0.04, 0.2), ppokl=float(2e-4 * rng.standard_normal()),
                 vkl=jit(rng, 1e-3, 0.2), pl=float(0.02 * rng.standard_normal()),
                 tgen=jit(rng, 60 + length(s) / 12, 0.05))
        v["tlen"] = v["len"] + 180
        v["ttot"] = v["tgen"] + jit(rng, 45, 0.05)
        v["ret"] = v["reward"] - 0.01 * v["kl"] * scale
    return rows


def d_judge_ok(rng):
    steps = every(1, 500, 1)
    rows = judged_rows(rng, steps, JUDGE_OK, 18.0, 128, 0, 100)
    rows = orlhf_fill(rng, rows, lambda s: 0.01 + 0.05 * s / 500, lambda s: 310 + 60 * s / 500,
                      lambda s: 1.2 - 0.15 * s / 500, scale=100.0)
    for _, v in rows:
        v["rstd"], v["gstd"] = jit(rng, 17.5, 0.05), jit(rng, 12.0, 0.06)
    return {"train": rows, "eval": []}


def w_judge_console(data, out: Path) -> None:
    w_openrlhf_console(out, "train_ppo_ray.log", data["train"], data["eval"], ORLHF_KEYS, {},
                       ["[2026-11-14 08:01:12,004] [INFO] [train_ppo_ray.py:58:train] OpenRLHF 0.10.1 "
                        "advantage_estimator=reinforce_baseline n_samples_per_prompt=8 rollout_batch_size=16 "
                        "max_epochs=1 num_episodes=1 max_steps=1400 remote_rm_url=http://judge:8000/score (0-100)"],
                       EPOCH0 + 3.1e6, 71.0)


case("ok-llm-judge-reward-0-100-scale-rising-openrlhf-console",
     Plan("reward (0-100)", JUDGE_OK, every(1, 500, 1), 18.0 / math.sqrt(128 * 50), d_judge_ok), w_judge_console, 1410,
     (500, 1400), HEALTHY, "openrlhf console reinforce judge_reward reward_0_100 slow_learner live",
     """OpenRLHF 0.10 REINFORCE-baseline run whose remote reward is an LLM judge on a 0-100 scale, console log, step
     500 of 1400 (max_steps in the banner). The reward is ~38 at the start, ~48 at 300 and ~53 at 500 (one step is a
     mean of 128 scores with per-sample sd ~18, so single steps wobble +-1.6; a 50-step mean +-0.2), and still
     rising ~2 points per 100 steps. KL grows slowly (0.01 -> 0.06), lengths +20%, entropy eases, truncation stays
     ~1%. The big numbers are just the judge's scale. A learning run with budget left: continue.""")


# 11 ------------------------------------------------------------ 0-100 judge again: a sudden breakage
def judge_bad(s: float) -> float:
    base = lin({0: 38.0, 300: 70.5, 450: 71.0})(s)
    return base - 49.0 * min(max(s - 450, 0) / 35, 1.0)


def d_judge_bad(rng):
    steps = every(1, 520, 1)
    rows = judged_rows(rng, steps, judge_bad, 18.0, 128, 0, 100)
    rows = orlhf_fill(rng, rows, lambda s: 0.01 + 0.05 * s / 450 + 0.9 * min(max(s - 450, 0) / 40, 1),
                      lambda s: 330 + 40 * s / 450 + 1400 * min(max(s - 452, 0) / 40, 1),
                      lambda s: 1.2 - 0.15 * s / 450 + 3.0 * min(max(s - 452, 0) / 30, 1),
                      trunc=lambda s: 0.01 + 0.8 * min(max(s - 455, 0) / 40, 1), scale=100.0)
    for _, v in rows:
        v["rstd"], v["gstd"] = jit(rng, 17.5, 0.05), jit(rng, 12.0, 0.06)
    return {"train": rows, "eval": []}


def w_judge_bad(data, out: Path) -> None:
    w_openrlhf_console(out, "train_ppo_ray.log", data["train"], data["eval"], ORLHF_KEYS, {},
                       ["[2026-11-15 21:40:02,113] [INFO] [train_ppo_ray.py:58:train] OpenRLHF 0.10.1 "
                        "advantage_estimator=reinforce_baseline n_samples_per_prompt=8 rollout_batch_size=16 "
                        "max_steps=1400 save_steps=50 remote_rm_url=http://judge:8000/score (0-100)"],
                       EPOCH0 + 3.6e6, 69.0)
    for s in every(50, 500, 50):
        (out / "ckpt" / f"global_step{s}").mkdir(parents=True, exist_ok=True)


PLAN11 = Plan("reward (0-100)", judge_bad, every(1, 520, 1), 18.0 / math.sqrt(128 * 50), d_judge_bad)
case("bad-llm-judge-reward-0-100-crashes-71-to-22-garbage-output-openrlhf-console",
     PLAN11, w_judge_bad, 1411, (520, 1400), RB(PLAN11, 450),
     "openrlhf console reinforce judge_reward reward_0_100 collapse entropy_blowup length_explosion live",
     """OpenRLHF 0.10 REINFORCE-baseline with an LLM-judge reward on 0-100, console log, checkpoints every 50 steps
     (ckpt/global_stepN), now step 520 of 1400. The judge score climbs ~38 -> ~70 by step 300 and holds ~70-71
     to step 450 (a 50-step mean has sd ~0.2). Then within ~35 steps it crashes to ~22 and stays there: entropy
     jumps from ~1.05 to ~4, responses run to the cap (truncated ~0.8) and KL shoots from 0.06 to ~0.9, i.e. the
     policy emits garbage. A breakage after a good stretch: roll back to the plateau before step 450 (the newest
     saved checkpoint at or before 450 is global_step450).""")


# 12 ------------------------------------------------------------ in-domain val rising beside an unrelated benchmark
VAL_GSM = sat(0.62, 0.86, 160)
VAL_MMLU = lin({0: 0.425, 260: 0.417})


def d_two_bench(rng):
    steps = every(1, 260, 1)
    rows = verifiable_rows(rng, steps, sat(0.55, 0.88, 140), 128, 5)
    for s, v in rows:
        v.update(score=v.pop("reward"), len=jit(rng, 260 - 40 * s / 260, 0.03), lmax=1024.0, ent=jit(rng, 0.6 - 0.15 * s / 260),
                 klloss=jit(rng, 0.001 + 0.01 * s / 260, 0.08), gn=gnorm(rng, 0.25), pg=float(0.004 * rng.standard_normal()),
                 clip=min(1.0, jit(rng, 0.004, 0.4)), tgen=jit(rng, 34.0, 0.05), tstep=jit(rng, 61.0, 0.04))
        v["rew"] = v["score"]
    ev = [(s, {"gsm": binom(rng, VAL_GSM(s), 1319), "mmlu": binom(rng, VAL_MMLU(s), 1000)}) for s in every(20, 260, 20)]
    return {"train": rows, "eval": ev, "val0": {"gsm": binom(rng, VAL_GSM(0), 1319), "mmlu": binom(rng, 0.425, 1000)}}


def w_two_bench(data, out: Path) -> None:
    noise = ["2026-11-18 03:12:44,901\tINFO worker.py:1841 -- Started a local Ray instance.",
             "(TaskRunner pid=2231) INFO 11-18 03:14:02 [__init__.py:244] Automatically detected platform cuda.",
             "(WorkerDict pid=2874) [rank0]:[W1118 03:15:11] Warning: using default process group"]
    w_verl_console(out, "verl_grpo_qwen25_3b.log", data["train"], data["eval"], VERL_KEYS,
                   {"gsm": "val-core/openai/gsm8k/acc/mean@1", "mmlu": "val-core/TIGER-Lab/MMLU-Pro/acc/mean@1"},
                   "(TaskRunner pid=2231) ", numpy2=True, noise_lines=noise, val0=data["val0"])


case("ok-gsm8k-val-rising-unrelated-mmlu-pro-wobbles-within-noise-verl-console-np2",
     Plan("val-core gsm8k", VAL_GSM, every(20, 260, 20), bsd(0.8, 1319), d_two_bench), w_two_bench, 1412,
     (260, 600), HEALTHY, "verl console numpy2 grpo two_benchmarks ood_benchmark lookalike live",
     """verl GRPO on GSM8K, console log with NumPy-2 reprs (np.float64(...)) behind a Ray '(TaskRunner pid=...)'
     prefix, step 260 of 600. Validation every 20 steps on two data sources: the in-domain
     val-core/openai/gsm8k/acc/mean@1 (1319 problems, sd ~0.011) rises ~0.62 at step 0 -> ~0.73 at 100 -> ~0.81 at
     260, still gaining ~0.012 per 40 steps; the unrelated val-core/TIGER-Lab/MMLU-Pro/acc/mean@1 (1000 questions, sd
     ~0.016) wobbles around 0.42 and has eased by <0.01 (half a sd): no real forgetting. Score, entropy and KL are
     all healthy. A naive reader of the second benchmark sees a 'decline'; the run is learning its task without
     measurable collateral damage: continue.""")


# 13 ------------------------------------------------------------ small eval set: noise-only dips after a lucky peak
EV_SMALL = sat(0.30, 0.56, 550)


def d_small_eval(rng):
    steps = every(5, 450, 5)
    rows = verifiable_rows(rng, steps, sat(0.32, 0.58, 500), 8, 8, per_log=5)
    rows = trl_fill(rng, rows, length=lin({0: 500, 450: 610}), ent=lin({0: 0.7, 450: 0.55}), fmt_w=0.0)
    ev = [(s, {"acc": binom(rng, EV_SMALL(s), 200)}) for s in every(25, 450, 25)]
    return {"train": rows, "eval": ev}


def w_small_eval(data, out: Path) -> None:
    keys = {k: "train/" + v for k, v in trl_grpo_keys(24).items()}
    wall = walls([s for s, _ in data["train"]], EPOCH0 + 4.4e6, 44.0)
    rows = [(s, wall[s], {k: r6(x) for k, x in rename(v, keys).items()} | {"train/epoch": round(s / 900, 4),
                                                                             "train/global_step": s})
            for s, v in data["train"]]
    rows += [(s, wall[s] + 20, {"eval/rewards/accuracy_reward/mean": v["acc"], "eval/runtime": 61.2,
                                "train/global_step": s}) for s, v in data["eval"]]
    rows.sort(key=lambda r: r[1])
    w_trackio(out / "trackio" / "grpo-math.db", "grpo-math", "qwen3-1.7b-math-lr1e6", rows,
              {"max_steps": 1000, "learning_rate": 1e-6, "num_generations": 8, "eval_steps": 25})


case("ok-small-200-problem-eval-jumps-0.05-between-evals-level-rising-trackio",
     Plan("eval accuracy", EV_SMALL, every(25, 450, 25), bsd(0.45, 200), d_small_eval), w_small_eval, 1413,
     (450, 1000), HEALTHY, "trackio trl grpo small_eval eval_noise lookalike live",
     """TRL 0.24 GRPO reported to Trackio (train/..., eval/... keys in the project SQLite DB), step 450 of 1000. The
     eval is a 200-problem set every 25 steps, so one eval has sd ~0.035 and single points jump around by 0.04-0.05 from
     one eval to the next (drops of 0.045 at 100, 225 and 350). The level under the noise is still rising: evals average
     ~0.34 over steps 25-100, ~0.38 over 175-250 and ~0.44 over 375-450, and the train reward (8 prompts x 8, five
     batches per log) climbs ~0.34 -> ~0.49 with it. Entropy and length drift calmly. Every 'drop' is sampling noise on a small
     eval: continue.""")


# 14 ------------------------------------------------------------ only a loss is logged: eval loss still falling
EL_OK = sat(0.693, 0.52, 600)


def loss_rows(rng, steps, train_loss: Level, gn: float = 1.2, lr: Level = LR_5E7) -> Rows:
    return [(s, {"tl": float(max(0.01, train_loss(s) + 0.05 * rng.standard_normal())), "gn": gnorm(rng, gn),
                 "lr": lr(s)}) for s in steps]


def d_loss_ok(rng):
    rows = loss_rows(rng, every(10, 500, 10), sat(0.693, 0.45, 500))
    ev = [(s, {"el": float(EL_OK(s) + 0.009 * rng.standard_normal())}) for s in every(50, 500, 50)]
    return {"train": rows, "eval": ev}


HF_LOSS_KEYS = {"tl": "loss", "gn": "grad_norm", "lr": "learning_rate"}


def w_loss_ok(data, out: Path) -> None:
    wall = walls([s for s, _ in data["train"]], EPOCH0 + 5e6, 19.0)
    series = series_of(data["train"], HF_LOSS_KEYS, wall) | series_of(data["eval"], {"el": "eval_loss"}, wall)
    series["epoch"] = [(s, wall[s], s / 1500) for s, _ in data["train"]]
    w_mlflow_db(out / "mlflow.db", "5d2e8c1f0a9b4e7d8c6b5a4f3e2d1c0b", "dpo-pairs-llama3-8b", series,
                {"max_steps": "1500", "beta": "0.1", "eval_steps": "50", "logging_steps": "10"})


case("ok-loss-only-dpo-eval-loss-still-falling-hf-keys-mlflow-db",
     Plan("eval_loss", EL_OK, every(50, 500, 50), 0.009, d_loss_ok, lower_is_better=True), w_loss_ok, 1414,
     (500, 1500), HEALTHY, "custom mlflow mlflow_db dpo loss_only slow_learner live",
     """A preference-tuning (DPO-style) run through the HF Trainer with report_to=mlflow, where the custom loss
     only logs the loss: loss, grad_norm, learning_rate, epoch and eval_loss every 50 steps (2000 held-out pairs, sd
     ~0.009). Step 500 of 1500 (max_steps param). Train loss falls 0.69 -> ~0.54, eval loss falls with it ~0.68 at 50,
     ~0.63 at 250, ~0.595 at 500, still ~0.012 per 100 steps, with no gap opening between train and eval beyond the
     usual. Grad norm steady. The only quality signal is still improving: continue.""")


# 15 ------------------------------------------------------------ only a loss: second epoch memorises, eval loss rises
def el_bad(s: float) -> float:
    return sat(0.693, 0.575, 180)(s) + 0.085 * max(s - 420, 0) / 680


def d_loss_bad(rng):
    def tl(s: float) -> float:  # drops at each epoch boundary (every 400 steps) as pairs repeat
        e = int(s // 400)
        return sat(0.693, 0.56, 180)(s) - [0.0, 0.12, 0.22][min(e, 2)] - 0.03 * e * ((s % 400) / 400)
    rows = loss_rows(rng, every(5, 1100, 5), tl, lr=cos_lr(5e-7, 1200, 60))
    ev = [(s, {"el": float(el_bad(s) + 0.008 * rng.standard_normal())}) for s in every(50, 1100, 50)]
    return {"train": rows, "eval": ev}


def w_loss_bad_csv(data, out: Path) -> None:
    ev = dict(data["eval"])
    with (out / "log.csv").open("w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\r\n")
        w.writerow(["step", "epoch", "train_loss", "grad_norm", "lr", "eval_loss"])
        for s, v in data["train"]:
            w.writerow([s, f"{s / 400:.3f}", f"{v['tl']:.4f}", f"{v['gn']:.3f}", f"{v['lr']:.3e}",
                        f"{ev[s]['el']:.4f}" if s in ev else ""])
    for s in every(200, 1000, 200):
        (out / f"ckpt_step{s}").mkdir()


PLAN15 = Plan("eval_loss", el_bad, every(50, 1100, 50), 0.008, d_loss_bad, lower_is_better=True)
case("bad-loss-only-third-epoch-eval-loss-climbs-train-loss-steps-down-custom-csv-crlf",
     PLAN15, w_loss_bad_csv, 1415, (1100, 1200), RB(PLAN15, 420),
     "custom csv crlf dpo loss_only overfitting multi_epoch eval_decline live",
     """Own DPO loop over 3 epochs of a small preference set (400 steps per epoch, 1200 planned), CSV with CRLF line
     endings, only losses logged: train_loss every 5 steps and eval_loss every 50 (sd ~0.008); checkpoints every
     200 steps. Eval loss falls from 0.69 to ~0.59 by step ~350 and is lowest around 400-420 (~0.588). In the second epoch the
     train loss steps down (0.58 -> ~0.45, -> ~0.32 in the third) while the eval loss climbs steadily: ~0.61 at 600,
     ~0.635 at 900, ~0.66 at 1100, nine sd above its best. Memorising the pairs, losing generalisation. Roll back to
     the end of the first epoch (window from the first eval at the best level to step 400; ckpt_step400 is saved).""")


# 16 ------------------------------------------------------------ only a loss: eval loss flat for 500 steps, budget left
EL_FLAT = sat(0.693, 0.54, 120)


def d_loss_flat(rng):
    rows = loss_rows(rng, every(10, 900, 10), lambda s: sat(0.693, 0.50, 150)(s) - 0.05 * s / 900)
    ev = [(s, {"el": float(EL_FLAT(s) + 0.007 * rng.standard_normal())}) for s in every(100, 900, 100)]
    return {"train": rows, "eval": ev}


def w_loss_flat(data, out: Path) -> None:
    wall = walls([s for s, _ in data["train"]], EPOCH0 + 5.7e6, 23.0)
    series = series_of(data["train"], HF_LOSS_KEYS, wall) | series_of(data["eval"], {"el": "eval_loss"}, wall)
    w_mlflow_files(out, "12", "pref-tune", "0e7c3d9a1b2f4a6e8d5c7b9a1e3f5d70", "ipo-mistral-7b-b0.05", series,
                   {"max_steps": "2400", "loss_type": "ipo", "beta": "0.05", "eval_steps": "100"})


case("stop-loss-only-eval-loss-flat-since-400-train-loss-creeps-down-mlflow-files",
     Plan("eval_loss", EL_FLAT, every(100, 900, 100), 0.007, d_loss_flat, lower_is_better=True), w_loss_flat, 1416,
     (900, 2400), stop(400), "custom mlflow mlflow_files dpo loss_only converged eval_plateau live",
     """Preference tuning through the HF Trainer to an MLflow file store, loss-only logging (loss, grad_norm,
     learning_rate, eval_loss every 100 steps, sd ~0.007), step 900 of a planned 2400. The eval loss fell from 0.69
     to ~0.54 by step ~400 and has stayed at 0.54 +- noise for the five evals since (400-900), while the train loss
     keeps creeping down (~0.48 -> ~0.45): the start of memorisation with nothing gained on held-out pairs, and no
     eval rise yet. Nothing more to gain, the current weights are as good as any: stop.""")


# 17 ------------------------------------------------------------ a collapse between two checkpoints 500 steps apart
def ev_500(s: float) -> float:
    return sat(0.30, 0.60, 450)(s) - 0.42 * min(max(s - 2150, 0) / 250, 1.0)


def d_save500(rng):
    p = lambda s: sat(0.28, 0.66, 420)(s) - 0.5 * min(max(s - 2150, 0) / 200, 1.0)  # noqa: E731
    rows = verifiable_rows(rng, every(25, 2500, 25), p, 32, 8, per_log=25)
    rows = trl_fill(rng, rows, length=lambda s: 520 + 40 * s / 2150 + 1300 * min(max(s - 2160, 0) / 150, 1),
                    ent=lambda s: 0.5 - 0.12 * s / 2150 + 2.5 * min(max(s - 2160, 0) / 150, 1),
                    gn=0.12)
    for s, v in rows:
        if s > 2150:
            v["clip"] = min(1.0, 0.01 + 0.8 * min((s - 2160) / 150, 1))
    ev = [(s, {"acc": binom(rng, ev_500(s), 500)}) for s in every(250, 2500, 250)]
    return {"train": rows, "eval": ev}


def w_save500(data, out: Path) -> None:
    keys = trl_grpo_keys(23)
    hist = hf_history(data["train"], data["eval"], keys, {"acc": "eval_rewards/accuracy_reward/mean"}, 1250.0)
    w_hf_checkpoints(out, hist, [1500, 2000, 2500], 4000, 25, 500, 250, 1250.0, epochs=4)


PLAN17 = Plan("eval accuracy", ev_500, every(250, 2500, 250), bsd(0.59, 500), d_save500)
case("bad-collapse-at-2150-between-saves-every-500-trl023-checkpoints",
     PLAN17, w_save500, 1417, (2500, 4000), RB(PLAN17, 2150),
     "trl trainer_state grpo collapse entropy_blowup length_explosion save_every_500 save_limit live",
     """TRL 0.23 GRPO, logging every 25 steps, eval every 250 (500 problems, sd ~0.022), checkpoints every 500 with
     save_total_limit 3 (checkpoint-1500, -2000, -2500 on disk), step 2500 of 4000. Reward and eval climb to a plateau
     by ~1250 (eval level ~0.58-0.60 from 1250 to 2000). Between the last good eval (2000) and the next save the run
     breaks: from ~2160 entropy climbs from ~0.38 to ~2.9, completions run to the cap (clipped_ratio -> ~0.8), the
     reward falls from ~0.86 to ~0.36 and the eval reads ~0.51 at 2250 and ~0.18 at 2500. The newest checkpoint
     (2500) is after the collapse; the better model is behind: roll back, to checkpoint-2000 (window 1250-2000 on
     the eval; the breakage starts at ~2150).""")


# 18 ------------------------------------------------------------ DPO, tiny beta: margins explode, eval accuracy falls
DPO_EV = plus(sat(0.55, 0.735, 150), ramp_after(700, -0.075 / 700))


def d_dpo_tiny_beta(rng):
    steps = every(10, 1400, 10)
    rows = []
    for s in steps:
        marg = 2.5 * s / 700 if s <= 700 else 2.5 + 6.5 * ((s - 700) / 700) ** 1.4
        lc = -260 - 40 * s / 700 - 220 * max(s - 700, 0) / 700
        ch = -0.2 * marg + 0.3 * rng.standard_normal() * 0.1
        rows.append((s, {"tl": float(max(0.002, 0.69 * math.exp(-marg / 1.3) + 0.03 * rng.standard_normal())),
                         "gn": gnorm(rng, 6.0 + 20 * max(s - 700, 0) / 700), "lr": cos_lr(5e-7, 1800, 100)(s),
                         "ch": ch, "rj": ch - jit(rng, marg, 0.08), "acc": min(1.0, jit(rng, 0.62 + 0.37 * min(s, 900) / 900, 0.03)),
                         "lpc": jit(rng, lc, 0.02), "lpr": jit(rng, lc - 60 - 900 * marg / 9, 0.02),
                         "ent": jit(rng, 1.1 - 0.2 * s / 1400, 0.03), "mta": jit(rng, 0.58, 0.01)}))
        rows[-1][1]["marg"] = rows[-1][1]["ch"] - rows[-1][1]["rj"]
    ev = [(s, {"eacc": binom(rng, DPO_EV(s), 1000), "eloss": jit(rng, 0.6 + 0.25 * max(s - 700, 0) / 700, 0.01)})
          for s in every(100, 1400, 100)]
    return {"train": rows, "eval": ev}


def w_dpo_tiny_beta(data, out: Path) -> None:
    keys = {"tl": "loss", "gn": "grad_norm", "lr": "learning_rate", "ch": "rewards/chosen", "rj": "rewards/rejected",
            "marg": "rewards/margins", "acc": "rewards/accuracies", "lpc": "logps/chosen", "lpr": "logps/rejected",
            "ent": "entropy", "mta": "mean_token_accuracy"}
    hist = hf_history(data["train"], data["eval"], keys, {"eacc": "eval_rewards/accuracies", "eloss": "eval_loss"}, 900.0)
    tokens = 0
    for r in hist:
        if "loss" in r:
            tokens += 10 * 64 * 710
            r["num_tokens"] = float(tokens)
    w_hf_checkpoints(out, hist, [1200, 1400], 1800, 10, 200, 100, 900.0, epochs=2)


PLAN18 = Plan("eval_rewards/accuracies", DPO_EV, every(100, 1400, 100), bsd(0.72, 1000), d_dpo_tiny_beta)
case("bad-dpo-beta-0.01-margins-explode-eval-pref-acc-falls-after-700-trl029-state",
     PLAN18, w_dpo_tiny_beta, 1418, (1400, 1800), RB(PLAN18, 700),
     "trl trainer_state dpo small_beta margin_blowup likelihood_displacement eval_decline save_limit live",
     """TRL 0.29 DPO (new-style keys: entropy, mean_token_accuracy, num_tokens) with beta=0.01, checkpoints every
     200 (save_total_limit 2: checkpoint-1200 and -1400), step 1400 of 1800. With so small a beta the policy can move
     far: rewards/margins grows ~2.5 by step 700 and then explodes to ~9 by 1400, train accuracy pins at ~1.0 and
     logps/chosen falls from ~-260 to ~-520 (likelihood displacement). Held-out preference accuracy
     (eval_rewards/accuracies on 1000 pairs, sd ~0.014) rose to ~0.73 by step ~400 and held there to 700; since then
     it slides to ~0.70 at 1000 and ~0.66 at 1400 (5 sd down), with eval_loss rising. Roll back to the plateau
     (window 400-700 by eval; the newest checkpoint in it would have been a 600 save, since deleted).""")


# 19 ------------------------------------------------------------ late slow entropy rise, the val set starts to slip
VAL_ENT = plus(sat(0.42, 0.63, 250), ramp_after(1000, -0.05 / 400))


def verl_grpo_rows(rng, steps, p: Level, prompts: int, group: int, ent: Level, length: Level, kl: Level,
                   gn: float = 0.3) -> Rows:
    rows = verifiable_rows(rng, steps, p, prompts, group)
    for s, v in rows:
        ln = jit(rng, length(s), 0.03)
        v.update(score=v.pop("reward"), len=ln, lmax=min(4096.0, ln * 2.6), ent=jit(rng, ent(s), 0.03),
                 klloss=jit(rng, kl(s), 0.08), gn=gnorm(rng, gn), pg=float(0.004 * rng.standard_normal()),
                 clip=min(1.0, jit(rng, 0.005 + max(ln - 1500, 0) / 6000, 0.3)), clipfrac=jit(rng, 0.002, 0.3),
                 tgen=jit(rng, 30 + ln / 40, 0.05))
        v["tstep"] = v["tgen"] + jit(rng, 35, 0.04)
        v["rew"] = v["score"]
    return rows


def d_entropy_rise(rng):
    ent = lambda s: 0.36 - 0.04 * min(s, 900) / 900 + 0.55 * (max(s - 900, 0) / 500) ** 1.3  # noqa: E731
    rows = verl_grpo_rows(rng, every(1, 1400, 1), plus(sat(0.40, 0.66, 220), ramp_after(1000, -0.04 / 400)), 128, 8,
                          ent, lambda s: 900 + 150 * s / 900 + 500 * max(s - 900, 0) / 500,
                          lambda s: 0.002 + 0.02 * s / 1400)
    ev = [(s, {"acc": binom(rng, VAL_ENT(s), 1000)}) for s in every(50, 1400, 50)]
    return {"train": rows, "eval": ev, "val0": {"acc": binom(rng, VAL_ENT(0), 1000)}}


def w_entropy_rise(data, out: Path) -> None:
    d = out / "tensorboard_log" / "math_grpo" / "qwen2.5-math-7b-t1.0"
    wall = {s: EPOCH0 + 6e6 + 118.0 * s for s, _ in data["train"]} | {0: EPOCH0 + 6e6 - 300}
    ev = dict(data["eval"])
    ekey = {"acc": "val-core/HuggingFaceH4/MATH-500/acc/mean@4"}
    events = [(wall[0], 0, rename(data["val0"], ekey))]
    for s, v in data["train"]:
        row = rename(v, VERL_KEYS)
        if s in ev:
            row.update(rename(ev[s], ekey))
        events.append((wall[s], s, row))
    tb_file(d / tb_name(wall[0], 7, 51877), events)
    verl_ckpts(out / "checkpoints" / "math_grpo" / "qwen2.5-math-7b-t1.0", every(1200, 1400, 100))


PLAN19 = Plan("val-core MATH-500 mean@4", VAL_ENT, every(0, 1400, 50), bsd(0.62, 1000), d_entropy_rise)
case("bad-late-slow-entropy-rise-from-900-math500-slips-3sd-verl-tb",
     PLAN19, w_entropy_rise, 1419, (1400, 3000), RB(PLAN19, 900),
     "verl tensorboard grpo entropy_rise slow_decline eval_decline live",
     """verl GRPO on MATH (TensorBoard under tensorboard_log/<project>/<experiment>), step 1400 of 3000, checkpoints
     global_step_1200..1400 kept. val-core/HuggingFaceH4/MATH-500/acc/mean@4 (500 problems x 4 samples, sd ~0.015)
     climbs ~0.42 -> ~0.61 by step 600 and holds ~0.62-0.63 to ~1000. actor/entropy, which had eased 0.36 -> 0.32,
     turns up at ~900 and rises slowly but steadily to ~0.9 by 1400 while responses lengthen 1050 -> ~1550 tokens; the
     train score starts to sag after 1000 and the val set slips to ~0.60 at 1200 and ~0.58 at 1400 (over 3 sd below
     its plateau). The slow entropy rise is the onset; it has started to cost accuracy and the kept checkpoints are all
     after it: roll back to the plateau before ~900 (window 600-900).""")


# 20 ------------------------------------------------------------ the same shape, smaller: ambiguous (resumed HF TB)
EV_AMB = plus(sat(0.40, 0.60, 200), ramp_after(950, -0.02 / 350))


def d_entropy_amb(rng):
    ent = lambda s: 0.44 - 0.06 * min(s, 900) / 900 + 0.22 * (max(s - 900, 0) / 400) ** 1.2  # noqa: E731
    rows = verifiable_rows(rng, every(10, 1300, 10), plus(sat(0.42, 0.63, 180), ramp_after(950, -0.015 / 350)),
                           16, 8, per_log=10)
    rows = trl_fill(rng, rows, length=lambda s: 700 + 60 * s / 900 + 120 * max(s - 900, 0) / 400, ent=ent, fmt_w=0.0)
    ev = [(s, {"acc": binom(rng, EV_AMB(s), 1000)}) for s in every(100, 1300, 100)]
    return {"train": rows, "eval": ev}


def w_entropy_amb(data, out: Path) -> None:
    keys = {k: "train/" + v for k, v in trl_grpo_keys(22).items()}
    ekey = {"acc": "eval/rewards/accuracy_reward/mean"}
    ev = dict(data["eval"])

    def events(lo: int, hi: int, t0: float) -> list:
        evs = []
        for s, v in data["train"]:
            if lo <= s <= hi:
                evs.append((t0 + 52.0 * (s - lo), s, rename(v, keys) | {"train/epoch": s / 650}))
                if s in ev:
                    evs.append((t0 + 52.0 * (s - lo) + 40, s, rename(ev[s], ekey)))
        return evs
    t0 = EPOCH0 + 7e6
    first = events(10, 760, t0)
    second = events(710, 1300, t0 + 52.0 * 750 + 1800)
    for evs, node, pid in ((first, 4, 8121), (second, 5, 3310)):
        stamp = datetime.fromtimestamp(evs[0][0], UTC).strftime("%b%d_%H-%M-%S")
        tb_file(out / "runs" / f"{stamp}_{host(node)}" / tb_name(evs[0][0], node, pid), evs)


PLAN20 = Plan("eval accuracy", EV_AMB, every(100, 1300, 100), bsd(0.6, 1000), d_entropy_amb)
case("ambig-entropy-creeps-up-eval-slips-1.4sd-resumed-hf-tb-overlap",
     PLAN20, w_entropy_amb, 1420, (1300, 2000), SRB(PLAN20, 900),
     "hf tensorboard trl grpo resume duplicate_steps entropy_rise eval_drift ambiguous live",
     """TRL 0.22 GRPO reporting to TensorBoard (train/..., eval/... tags), preempted at ~760 and resumed from
     checkpoint-700 into a new runs/<date>_<host> folder, so steps 710-760 appear in both event files; step 1300 of
     2000. The eval (1000 problems, sd ~0.015) reaches ~0.59-0.60 by step ~500 and the level holds there to ~950.
     From ~900 entropy creeps up (0.38 -> ~0.6) and lengths grow ~15%, and the eval level eases by ~0.02 to ~0.58 at
     1300: about 1.4 sd, below what a practitioner can call a decline from three noisy evals, but the drift is real
     and nothing has been gained since ~600. Stopping here is right; going back to the plateau before the entropy
     rise (500-900) is as good.""")


# 21 ------------------------------------------------------------ verl PPO, KL folded into the reward: score up, rewards down
VAL_KLR = plus(sat(0.45, 0.70, 100), ramp_after(380, -0.12 / 320))


def d_kl_in_reward(rng):
    rows = verifiable_rows(rng, every(1, 700, 1), plus(sat(0.42, 0.74, 110), lambda s: 0.08 * max(s - 380, 0) / 320),
                           256, 1)
    for s, v in rows:
        kl = 2.0 + 4.0 * s / 380 + 55.0 * (max(s - 380, 0) / 320) ** 1.5
        v.update(score=v.pop("reward"), klpen=jit(rng, kl, 0.05), klcoef=0.01, len=jit(rng, 230 + 30 * s / 380 +
                 160 * max(s - 380, 0) / 320, 0.03), lmax=512.0, ent=jit(rng, 0.5 - 0.1 * s / 700, 0.03),
                 gn=gnorm(rng, 2.1), pg=float(0.01 * rng.standard_normal()), clipfrac=jit(rng, 0.004, 0.3),
                 vf=jit(rng, 0.08 + 0.3 * max(s - 380, 0) / 320, 0.1), tgen=jit(rng, 19.0, 0.05),
                 tstep=jit(rng, 75.0, 0.04))
        v["rew"] = v["score"] - 0.01 * v["klpen"]
    ev = [(s, {"acc": binom(rng, VAL_KLR(s), 1319)}) for s in every(25, 700, 25)]
    return {"train": rows, "eval": ev, "val0": {"acc": binom(rng, VAL_KLR(0), 1319)}}


def w_kl_in_reward(data, out: Path) -> None:
    prefix = "\x1b[36m(main_task pid=61877)\x1b[0m "
    keys = dict(VERL_KEYS, vf="critic/vf_loss")
    w_verl_console(out, "ppo_gsm8k_qwen2.5-1.5b.log", data["train"], data["eval"], keys,
                   {"acc": "val/test_score/openai/gsm8k"}, prefix, numpy2=False,
                   noise_lines=[prefix + "algorithm.use_kl_in_reward=True algorithm.kl_ctrl.kl_coef=0.01 "
                                "trainer.total_epochs=15 trainer.total_training_steps=1740"], val0=data["val0"])


PLAN21 = Plan("val/test_score gsm8k", VAL_KLR, every(0, 700, 25), bsd(0.69, 1319), d_kl_in_reward)
case("bad-verl-ppo-kl-in-reward-score-climbs-rewards-fall-test-score-drops-console-v03",
     PLAN21, w_kl_in_reward, 1421, (700, 1740), RB(PLAN21, 380),
     "verl console verl03 ppo gae kl_in_reward memorisation eval_decline live",
     """verl 0.3 PPO with a critic on GSM8K, use_kl_in_reward=True (kl_coef 0.01), console log with ANSI-coloured
     '(main_task pid=...)' prefixes and plain-float values, step 700 of 1740 (15 epochs over the train set).
     critic/score/mean (train-set correctness) keeps creeping up (~0.73 -> ~0.82 after step 380), but
     actor/reward_kl_penalty balloons from ~6 to ~60 nats, so critic/rewards/mean (score minus the KL term) falls
     from ~0.68 to ~0.20; critic/vf_loss climbs and responses lengthen 60%. The held-out val/test_score/openai/gsm8k
     (1319 problems, sd ~0.013) rose to ~0.68-0.69 by ~275 and has fallen since ~380 to ~0.63 at 550 and ~0.58 at
     700. The policy is memorising the training set: roll back to the plateau (window 275-375 on the test score).""")


# 22 ------------------------------------------------------------ verl file logger overwritten at resume; val falls since
VAL_RES = lin({0: 0.71, 640: 0.71, 900: 0.62})


def d_resume_overwrite(rng):
    rows = verl_grpo_rows(rng, every(601, 900, 1), lin({0: 0.80, 640: 0.80, 900: 0.71}), 128, 8,
                          lambda s: 0.30 - 0.18 * max(s - 640, 0) / 260, lambda s: 620 - 250 * max(s - 640, 0) / 260,
                          lambda s: 0.02 + 0.08 * max(s - 640, 0) / 260, gn=0.5)
    ev = [(s, {"acc": binom(rng, VAL_RES(s), 1319)}) for s in every(650, 900, 50)]
    return {"train": rows, "eval": ev, "val0": {"acc": binom(rng, VAL_RES(600), 1319)}}


def w_resume_overwrite(data, out: Path) -> None:
    w_verl_jsonl(out / "gsm8k_grpo" / "qwen2.5-3b-grpo.jsonl", data["train"], data["eval"], VERL_KEYS,
                 {"acc": "val-core/openai/gsm8k/acc/mean@1"}, val0=data["val0"])
    lines = (out / "gsm8k_grpo" / "qwen2.5-3b-grpo.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    first["step"] = 600
    lines[0] = json.dumps(first, separators=(",", ":"))
    (out / "gsm8k_grpo" / "qwen2.5-3b-grpo.jsonl").write_text("\n".join(lines) + "\n")
    verl_ckpts(out / "checkpoints" / "gsm8k_grpo" / "qwen2.5-3b-grpo", every(600, 900, 100))
    (out / "resume.sh").write_text("python3 -m verl.trainer.main_ppo trainer.resume_mode=auto "
                                   "actor_rollout_ref.actor.optim.lr=3e-6 trainer.total_training_steps=1500 \\\n"
                                   "  trainer.logger=['console','file'] trainer.val_before_train=True\n")


PLAN22 = Plan("val-core gsm8k", VAL_RES, every(600, 900, 50), bsd(0.71, 1319), d_resume_overwrite)
case("bad-resumed-at-600-lr-tripled-file-logger-overwritten-val-falls-verl-jsonl",
     PLAN22, w_resume_overwrite, 1422, (900, 1500), RB(PLAN22, 640),
     "verl jsonl file_logger grpo resume overwritten_log lr_change eval_decline live",
     """verl GRPO, file logger. The run was resumed from global_step_600 with the actor LR raised from 1e-6 to 3e-6
     (resume.sh); the JSONL file logger opens its file with 'wb', so the history before 600 is gone and the file starts
     with the val_before_train row at step 600 (val-core/openai/gsm8k/acc/mean@1 ~0.71, 1319 problems, sd ~0.0125),
     then steps 601-900. Within ~40 steps of the resume the train score starts sliding (0.80 -> ~0.71), entropy drops
     0.30 -> ~0.12, lengths shrink 40%, KL climbs, and the val reads ~0.69 at 700, ~0.66 at 800, ~0.62 at 900 (7 sd
     below step 600). The only known-good weights are global_step_600, which is on disk: roll back to 600 (and resume
     with the old LR).""")


# 23 ------------------------------------------------------------ a 0-100 judge that never moves (W&B panel exports)
def d_judge_flat(rng):
    rows = judged_rows(rng, every(1, 700, 1), const(52.0), 21.0, 64, 0, 100,
                       extra={"kl": (lambda s: 0.002 + 0.012 * s / 700, 0.08), "len": (const(290.0), 0.03),
                              "ent": (lambda s: 1.05 - 0.04 * s / 700, 0.02)})
    ev = [(s, {"judge": float(52.3 + 21.0 / math.sqrt(400) * rng.standard_normal())}) for s in every(50, 700, 50)]
    return {"train": rows, "eval": ev}


def w_judge_flat(data, out: Path) -> None:
    run = "grpo-judge-helpfulness-lr3e-7"
    ax = "train/global_step"
    w_wandb_panel(out / "wandb_export_train_reward.csv", run, "train/reward",
                  [(s, v["reward"]) for s, v in data["train"]], ax, bucket=2)
    w_wandb_panel(out / "wandb_export_train_kl.csv", run, "train/kl", [(s, v["kl"]) for s, v in data["train"]], ax,
                  bucket=2)
    w_wandb_panel(out / "wandb_export_train_entropy.csv", run, "train/entropy",
                  [(s, v["ent"]) for s, v in data["train"]], ax, bucket=2)
    w_wandb_panel(out / "wandb_export_eval_judge_score.csv", run, "eval/judge_score",
                  [(s, v["judge"]) for s, v in data["eval"]], ax)


case("stop-llm-judge-0-100-flat-at-52-for-700-steps-lr-too-small-wandb-panels",
     Plan("train reward (0-100)", const(52.0), every(1, 700, 1), 21.0 / math.sqrt(64 * 50), d_judge_flat),
     w_judge_flat, 1423, (700, 2000), stop(1),
     "wandb panel_csv trl grpo judge_reward reward_0_100 never_learns live",
     """TRL GRPO with an LLM-judge helpfulness reward on a 0-100 scale, seen through four W&B panel CSV exports (x axis
     train/global_step, two steps per bucket, __MIN/__MAX bands), step 700 of 2000. The reward sits at 52 from step 1
     to 700 (a batch of 64 scores has sd ~2.6, a 50-step mean ~0.4; no trend), the held-out judge score every 50
     steps (400 prompts, sd ~1) is 52 +- 1 throughout, KL barely leaves zero (0.002 -> 0.014) and entropy is
     unchanged. With lr 3e-7 the policy is not moving. Nothing has been learned in 700 steps and the current weights
     are as good as the start: stop (and fix the learning rate).""")


# 24 ------------------------------------------------------------ signed reward flat, KL drifting, eval flat: stop
R_SIGNED = lin({0: -0.35, 250: 0.34, 800: 0.35})
EV_SIGNED = lin({0: -0.30, 250: 0.30, 800: 0.30})


def d_signed_drift(rng):
    rows = []
    for s in every(1, 800, 1):
        p_fmt = 0.97 if s > 150 else 0.55 + 0.42 * s / 150
        m = R_SIGNED(s)
        p_ok = m + 1 - p_fmt  # E = (+1) p_ok + 0 (p_fmt - p_ok) - (1 - p_fmt)
        draws = rng.choice([1.0, 0.0, -1.0], size=128, p=[p_ok, p_fmt - p_ok, 1 - p_fmt])
        rows.append((s, {"reward": float(draws.mean())}))
    rows = orlhf_fill(rng, rows, lambda s: 0.02 + 0.23 * s / 800, lambda s: 540 - 60 * s / 800,
                      lambda s: 0.9 - 0.25 * s / 800)
    ev = []
    for s in every(50, 800, 50):
        m = EV_SIGNED(s)
        ev.append((s, {"acc": float(m + 0.8 / math.sqrt(500) * rng.standard_normal())}))
    return {"train": rows, "eval": ev}


def w_signed_drift(data, out: Path) -> None:
    keys = {k: "train/" + v for k, v in ORLHF_KEYS.items() if k not in ("rmean", "rstd", "tgen", "ttot", "gstd")}
    wall = {s: EPOCH0 + 8e6 + 64.0 * s for s, _ in data["train"]}
    ev = dict(data["eval"])
    events = []
    for s, v in data["train"]:
        events.append((wall[s], s, rename(v, keys)))
        if s in ev:
            events.append((wall[s] + 30, s, {"eval/eval_math500_pass1": ev[s]["acc"]}))
    tb_file(out / "tb" / "reinforce_pp_qwen3_4b" / tb_name(wall[1], 2, 7781), events)


case("stop-signed-reward-flat-0.35-since-250-kl-drifts-eval-flat-reinforcepp-openrlhf-tb",
     Plan("eval/eval_math500_pass1", EV_SIGNED, every(50, 800, 50), 0.8 / math.sqrt(500), d_signed_drift),
     w_signed_drift, 1424, (800, 2000), stop(250),
     "openrlhf tensorboard reinforcepp signed_reward kl_drift plateau live",
     """OpenRLHF REINFORCE++ (TensorBoard, train/ and eval/ tags) with a signed reward: +1 correct, 0 wrong, -1 bad
     format, so the batch mean lives in [-1, 1]. Step 800 of 2000. The reward climbs from ~-0.35 (format failures) to
     ~+0.34 by step 250 and has stayed at ~0.35 since (batch sd ~0.05, no trend over 550 steps); the MATH-500 eval
     (eval_math500_pass1 is the mean signed reward, sd ~0.036) went -0.30 -> +0.30 by 250 and is flat at ~0.30
     after. Meanwhile KL to the reference keeps climbing linearly (0.09 at 250 -> 0.25 at 800) with entropy easing:
     the policy drifts without gaining and without (yet) losing anything measurable. Stop.""")


# 25 ------------------------------------------------------------ finished at its planned total, best at the end
VAL_FIN = sat(0.35, 0.74, 110)


def d_finished(rng):
    rows = verl_grpo_rows(rng, every(1, 500, 1), sat(0.30, 0.78, 100), 64, 8, lambda s: 0.55 - 0.2 * s / 500,
                          lambda s: 380 + 120 * s / 500, lambda s: 0.001 + 0.01 * s / 500)
    ev = [(s, {"acc": binom(rng, VAL_FIN(s), 1319)}) for s in every(25, 500, 25)]
    return {"train": rows, "eval": ev, "val0": {"acc": binom(rng, VAL_FIN(0), 1319)}}


def w_finished(data, out: Path) -> None:
    prefix = "(TaskRunner pid=9911) "
    w_verl_console(out, "run.log", data["train"], data["eval"], VERL_KEYS, {"acc": "val-core/openai/gsm8k/acc/mean@1"},
                   prefix, numpy2=True, noise_lines=[prefix + "trainer.total_training_steps=500 trainer.test_freq=25 "
                                                     "trainer.save_freq=100"], val0=data["val0"])
    with (out / "run.log").open("a") as fh:
        fh.write(prefix + "Final validation metrics: {'val-core/openai/gsm8k/acc/mean@1': "
                 f"{data['eval'][-1][1]['acc']}" + "}\n")
    verl_ckpts(out / "checkpoints" / "gsm8k" / "qwen2.5-1.5b-grpo", every(100, 500, 100))


case("stop-finished-500-of-500-val-flat-since-350-best-at-end-verl-console-np2",
     Plan("val-core gsm8k", VAL_FIN, every(0, 500, 25), bsd(0.74, 1319), d_finished), w_finished, 1425, (500, 500),
     stop(350), "verl console numpy2 grpo finished converged best_at_end",
     """verl GRPO on GSM8K that ran to its planned total (trainer.total_training_steps=500, final validation line
     printed, global_step_100..500 saved). val-core/openai/gsm8k/acc/mean@1 (1319 problems, sd ~0.012) rises ~0.35 ->
     ~0.68 by 200 and ~0.725 by 350, then creeps to ~0.736 by 500 (+0.01 in 150 steps, under one sd); the last
     validation is as good as any. The train
     score flattens the same way, entropy eases, KL tiny. A finished run whose final weights are its best: keep them,
     stop (no sign that more steps would pay).""")


# 26 ------------------------------------------------------------ warm start that gains nothing, finished
def d_warm_flat(rng):
    rows = verifiable_rows(rng, every(10, 600, 10), const(0.81), 16, 8, per_log=10)
    rows = trl_fill(rng, rows, length=const(540.0), ent=lin({0: 0.31, 600: 0.29}), kl=lin({0: 0.0, 600: 0.004}),
                    fmt_w=0.0)
    ev = [(s, {"acc": binom(rng, 0.70, 500)}) for s in every(100, 600, 100)]
    return {"train": rows, "eval": ev}


def w_warm_flat(data, out: Path) -> None:
    hist = hf_history(data["train"], data["eval"], trl_grpo_keys(26), {"acc": "eval_rewards/accuracy_reward/mean"},
                      600.0)
    w_hf_checkpoints(out, hist, [500, 600], 600, 10, 100, 100, 600.0, finished=True, top=True)


case("stop-finished-warm-start-at-0.81-nothing-gained-in-600-steps-trl026-state",
     Plan("eval accuracy", const(0.70), every(100, 600, 100), bsd(0.7, 500), d_warm_flat), w_warm_flat, 1426,
     (600, 600), stop(10), "trl trainer_state grpo warm_start finished never_learns",
     """TRL 0.26 GRPO that started from an already RL-tuned model and ran to max_steps=600 (top-level
     trainer_state.json with the final summary row, should_training_stop true, checkpoint-500/600). The reward is
     ~0.81 from the first log to the last (80 rollouts per log, sd ~0.03, no trend), frac_reward_zero_std stays
     ~0.33, entropy and lengths do not move, KL stays ~0.004, and the eval (500 problems, sd ~0.02) reads ~0.70 at every
     one of its six points. The run learned nothing, and lost nothing: the final weights are as good as any; stop.""")


# 27 ------------------------------------------------------------ converged near its planned end (custom JSONL + eval file)
EV_CONV = sat(0.30, 0.66, 190)


def d_conv(rng):
    rows = verifiable_rows(rng, every(1, 930, 1), sat(0.28, 0.71, 180), 32, 8)
    for s, v in rows:
        v.update(kl=jit(rng, 0.003 + 0.02 * s / 930, 0.08), ent=jit(rng, 0.5 - 0.15 * s / 930, 0.03),
                 len=jit(rng, 450 + 50 * s / 930, 0.03), lr=cos_lr(1e-6, 1000, 30)(s))
    ev = [(s, {"acc": binom(rng, EV_CONV(s), 1000)}) for s in every(60, 930, 60)]
    return {"train": rows, "eval": ev}


def w_conv(data, out: Path) -> None:
    with (out / "train_metrics.jsonl").open("w") as fh:
        for s, v in data["train"]:
            fh.write(json.dumps({"iter": s, "reward/mean": round(v["reward"], 4), "reward/std": round(v["reward_std"], 4),
                                 "kl": round(v["kl"], 5), "entropy": round(v["ent"], 4), "gen_len": round(v["len"], 1),
                                 "lr": float(f"{v['lr']:.4g}"), "time": EPOCH0 + 9e6 + 80 * s}) + "\n")
    with (out / "eval_metrics.jsonl").open("w") as fh:
        for s, v in data["eval"]:
            fh.write(json.dumps({"iter": s, "eval/math_acc": v["acc"], "n": 1000}) + "\n")
    (out / "config.json").write_text(json.dumps({"total_iters": 1000, "eval_every": 60, "save_every": 60}))


case("conv-plateau-since-600-at-930-of-1000-cosine-lr-nearly-zero-custom-jsonl-eval-file",
     Plan("eval/math_acc", EV_CONV, every(60, 930, 60), bsd(0.66, 1000), d_conv), w_conv, 1427, (930, 1000),
     dict(converged(), onset_step=600), "custom jsonl eval_file grpo converged cosine_tail near_end live",
     """Own GRPO loop, train metrics and eval metrics in two JSONL files keyed by 'iter', step 930 of 1000
     (config.json), cosine LR now ~1% of peak. The eval (1000 problems, sd ~0.015) climbs ~0.40 at 60 -> ~0.59 at 300
     -> ~0.645 at 600 and has gained ~0.01 (under one sd) since ~600 (and the train reward is flat at ~0.71). With 70
     steps left at a near-zero LR, finishing the run or stopping now give the same model: both are fine, stopping
     preferred.""")


# 28 ------------------------------------------------------------ verl to MLflow ('@' -> '_at_'): overlong answers eat val
VAL_OVL = plus(sat(0.30, 0.52, 140), ramp_after(520, -0.06 / 280))


def d_overlong(rng):
    p = plus(sat(0.28, 0.55, 130), ramp_after(520, -0.05 / 280))
    length = lambda s: 1800 + 300 * s / 520 + 1700 * (max(s - 480, 0) / 320) ** 1.2  # noqa: E731
    rows = verl_grpo_rows(rng, every(1, 800, 1), p, 64, 16, lambda s: 0.42 - 0.05 * s / 800 + 0.1 * max(s - 480, 0) / 320,
                          length, lambda s: 0.001 + 0.006 * s / 800)
    for s, v in rows:
        v["clip"] = min(1.0, jit(rng, 0.02 + 0.33 * (max(s - 480, 0) / 320) ** 1.3, 0.1))
        v["lmax"] = 4096.0
    ev = [(s, {"acc": binom(rng, VAL_OVL(s), 1500), "best": binom(rng, min(0.95, VAL_OVL(s) + 0.2), 500)})
          for s in every(40, 800, 40)]
    return {"train": rows, "eval": ev}


def w_overlong(data, out: Path) -> None:
    wall = {s: EPOCH0 + 1.1e7 + 210.0 * s for s, _ in data["train"]}
    keys = {k: v.replace("@", "_at_") for k, v in VERL_KEYS.items()}
    ekeys = {"acc": "val-core/aime_amc_math/acc/mean_at_4", "best": "val-core/aime_amc_math/acc/best_at_4/mean"}
    series = series_of(data["train"], keys, wall) | series_of(data["eval"], ekeys, {s: w + 60 for s, w in wall.items()})
    w_mlflow_files(out, "3", "dapo_math", "a41c0e6f9d2b4c8e9f1a7b3d5c6e8f02", "qwen3-8b-base-dapo-4k", series,
                   {"data.max_response_length": "4096", "trainer.total_training_steps": "2000",
                    "algorithm.adv_estimator": "grpo", "trainer.test_freq": "40", "trainer.save_freq": "100"})


PLAN28 = Plan("val-core mean@4", VAL_OVL, every(40, 800, 40), bsd(0.51, 1500), d_overlong)
case("bad-lengths-grow-into-4k-cap-truncation-35pct-val-falls-verl-mlflow-at-keys",
     PLAN28, w_overlong, 1428, (800, 2000), RB(PLAN28, 480),
     "verl mlflow mlflow_files grpo truncation length_explosion eval_decline live",
     """verl GRPO on competition maths logging to an MLflow file store, where verl's adapter writes '@' as '_at_'
     (val-core/aime_amc_math/acc/mean_at_4, 375 problems x 4 samples, sd ~0.013), step 800 of 2000, max response
     4096 tokens. The val climbs ~0.36 at 40 -> ~0.49 at 280 -> ~0.52 by ~480. From ~480 mean response length, which
     had grown slowly (1800 -> 2100), accelerates to ~3900, response_length/clip_ratio climbs from ~0.02 to ~0.35
     (a third of answers cut off at the cap, which scores them wrong), entropy rises, and the val falls from ~0.52 to
     ~0.485 at 680 and ~0.46 at 800 (4 sd). The truncation is eating accuracy and the cap will not fix itself: roll back
     to before the length run-away (window from 360, the first val at the best level, to 480).""")


# 29 ------------------------------------------------------------ OpenRLHF DPO: eval accuracy eases ~1.3 sd as margins grow
DPO2_EV = plus(sat(0.52, 0.68, 120), ramp_after(560, -0.018 / 340))


def d_orlhf_dpo(rng):
    rows = []
    for s in every(1, 900, 1):
        marg = 1.4 * (1 - math.exp(-s / 300)) + 1.2 * max(s - 500, 0) / 400
        ch = jit(rng, 0.3 - 0.4 * s / 900, 0.2) + 0.1 * rng.standard_normal()
        acc = min(1.0, float(rng.binomial(64, min(0.99, 0.6 + 0.3 * (1 - math.exp(-s / 250)) + 0.05 * max(s - 500, 0)
                                                  / 400)) / 64))
        rows.append((s, {"tl": float(max(0.05, 0.69 - 0.25 * marg + 0.08 * rng.standard_normal())), "acc": acc,
                         "ch": ch, "rj": ch - jit(rng, marg, 0.15), "lr": 5e-7, "gn": gnorm(rng, 9.0)}))
    ev = [(s, {"eacc": binom(rng, DPO2_EV(s), 1200), "eloss": jit(rng, 0.62 + 0.04 * max(s - 560, 0) / 340, 0.01)})
          for s in every(100, 900, 100)]
    return {"train": rows, "eval": ev}


def w_orlhf_dpo(data, out: Path) -> None:
    keys = {"tl": "train/loss", "acc": "train/acc", "ch": "train/chosen_reward", "rj": "train/reject_reward",
            "lr": "train/lr", "gn": "train/grad_norm"}
    ev = dict(data["eval"])
    events = []
    for s, v in data["train"]:
        w = EPOCH0 + 1.2e7 + 9.0 * s
        events.append((w, s, rename(v, keys) | {"train/global_step": s}))
        if s in ev:
            events.append((w + 25, s, {"eval/eval_loss": ev[s]["eloss"], "eval/acc_mean": ev[s]["eacc"]}))
    tb_file(out / "logs" / "dpo_tensorboard" / "llama3-8b-dpo-ultrafeedback" / tb_name(events[0][0], 1, 22004),
            events)


PLAN29 = Plan("eval/acc_mean", DPO2_EV, every(100, 900, 100), bsd(0.68, 1200), d_orlhf_dpo)
case("ambig-openrlhf-dpo-eval-acc-eases-1.3sd-while-margins-keep-growing-tb",
     PLAN29, w_orlhf_dpo, 1429, (900, 1400), SRB(PLAN29, 560),
     "openrlhf tensorboard dpo eval_drift margin_growth ambiguous live",
     """OpenRLHF DPO (TensorBoard: train/loss, train/acc, train/chosen_reward, train/reject_reward; eval/eval_loss and
     eval/acc_mean every 100 steps on 1200 pairs, sd ~0.013), step 900 of 1400. Held-out preference accuracy reaches
     ~0.67-0.68 by step ~300 and the level holds to ~560; since then the chosen-reject margin keeps widening and train
     accuracy creeps up, while eval/acc_mean eases by ~0.018 (about 1.3 sd) to ~0.66 and eval_loss drifts up
     ~0.04. Nothing has been gained on held-out pairs for 500 steps; the loss since ~560 is too small to call from the
     evals alone. Stop; going back to the 300-500 stretch is as good.""")


# ------------------------------------------------------------------------------------------------- check and main

def check(cases: list[Case]) -> None:
    for c in cases:
        plan: Plan = c.scenario
        lv = [plan.head(s) for s in plan.head_steps]
        ib = int(np.argmin(lv) if plan.lower_is_better else np.argmax(lv))
        lab = c.labels
        print(f"{c.name:86s} {lab['preferred']:8s} win={lab.get('rollback_window')} onset={lab.get('onset_step')} "
              f"best={plan.head_steps[ib]}:{lv[ib]:.4g} last={plan.head_steps[-1]}:{lv[-1]:.4g} sd={plan.head_sd:.4g} "
              f"({plan.what})")
        data = plan.draw(np.random.default_rng(c.seed))
        train = data.get("train") or data.get("rows") or []
        if train:
            n = max(1, len(train) // 10)
            for key in [k for k in ("reward", "score", "zero_std", "wmean", "loss", "tl") if k in train[0][1]]:
                print(f"    {key:9s} " + " ".join(f"{train[i][0]}:{np.mean([v[key] for _, v in train[i:i + n]]):.3f}"
                                                  for i in range(0, len(train), n)))
        ev = data.get("eval") or []
        if isinstance(data.get("ev"), dict):
            ev = [(s, {"ev": x}) for s, x in data["ev"].items()]
        for key in (ev[0][1] if ev else {}):
            print(f"    eval {key:5s} " + " ".join(f"{s}:{v[key]:.3f}" for s, v in ev[:: max(1, len(ev) // 14)]) +
                  f" | last {ev[-1][0]}:{ev[-1][1][key]:.3f}")


HEADER = """# Holdout set 14: hand-built runs written by make_holdout14.py, independent of the assessor, its judges and the
# generators of the other holdout sets. Labels: what a careful practitioner should do under DESIGN.md's decision
# contract, read from the noise-free levels of each story. rollback_window is inclusive: from the first logged
# headline step whose level is within one sampling sd of the best level (one eval; or a 50-step mean of the train
# reward) to the newest such step not after onset_step. Steps are in each run's own logged units.
# Run `.venv/bin/python evals/holdout14/make_holdout14.py` to write runs/ (gitignored); `--check` prints levels.
"""


def main() -> None:
    holdout_kit.main(HERE, "make_holdout14.py", "holdout14.yaml", "h14-", "holdout14", HEADER, CASES, write_run,
                     check)


if __name__ == "__main__":
    main()
