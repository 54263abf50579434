"""Holdout set 16: hand-labelled RL post-training runs in real on-disk formats, independent of the assessor.

Run from the worktree root:
    .venv/bin/python evals/holdout16/make_holdout16.py           # writes runs/ (gitignored) and holdout16.yaml
    .venv/bin/python evals/holdout16/make_holdout16.py --check   # also prints levels and rollback windows

Each case is a story: noise-free level curves (piecewise linear in the optimiser step) for the train reward, the
held-out evals and the side signals, drawn through this set's noise model and written the way one framework (and
one version of it) writes them. Noise model:
  * binary rewards: a batch of P prompts whose solve rates are Beta(c*p, c*(1-p)) around the level p (c = 3),
    G rollouts each drawn Bernoulli; batch mean, sample std, and the share of prompts whose G rollouts agree
    all come from the same draws. Trainers that log every n steps log the mean of the n batches (TRL, HF);
  * partial-credit rewards: each rollout scores Binomial(4, q)/4 (four rubric items) with q drawn per prompt;
  * reward-model scores: per-sample normal scores around the level, batch mean logged;
  * held-out evals: Binomial(N, p)/N on N problems, or a mean of N normal judge scores;
  * grad norm: level * exp(0.25 * N(0, 1)), times 1 + |t(2)| on about one step in 30 (heavy right tail);
  * KL, entropy, lengths, rates, losses: about 4 % multiplicative log-normal noise (additive for signed ones).

Labels follow DESIGN.md ("What the three decisions mean") and are decided from each story's noise-free levels,
never from a tool. The rollback window runs from the first logged headline step whose level is within one
sampling sd of the best level (the sd of one eval for an eval headline, of one logged batch mean for a train
headline) to the newest such step not after onset_step; `--check` prints them.
"""

from __future__ import annotations

import csv
import json
import math
import os
import sqlite3
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
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
    writer,
)

HERE = Path(__file__).resolve().parent
NOW = time.time()
Level = Callable[[float], float]
TRAIN = "@train"
CONC = 3.0


def knots(*pts: tuple[float, float]) -> Level:
    xs, ys = zip(*pts, strict=True)
    return lambda s: float(np.interp(s, xs, ys))


def const(v: float) -> Level:
    return lambda s: v


# ------------------------------------------------------------------------------------------------------ the stories

@dataclass
class Story:
    reward: Level
    evals: dict[str, tuple[Level, int]]  # framework eval key -> (level, N problems)
    headline: str
    eval_every: int = 0
    eval_at_0: bool = True
    eval_steps: list[int] | None = None  # explicit eval steps instead of eval_every
    rkind: str = "binary"  # binary | partial | score
    rsd: float = 1.0  # per-sample sd of a score reward (and of a judge-score eval)
    eval_score: bool = False  # evals are mean judge scores, not accuracies
    P: int = 32
    G: int = 8
    log_every: int = 1
    kl: Level = field(default=lambda s: 0.002)
    entropy: Level = field(default=lambda s: 0.45)
    length: Level = field(default=lambda s: 420.0)
    trunc: Level = field(default=lambda s: 0.01)
    grad_norm: Level = field(default=lambda s: 0.3)
    lr: Level = field(default=lambda s: 1e-6)
    extra: dict[str, tuple[Level, float, bool]] = field(default_factory=dict)  # key -> (level, sd, multiplicative)
    age_hours: float = 0.0

    def _batch(self, rng: np.random.Generator, p: float) -> dict:
        if self.rkind == "score":
            x = rng.normal(p, self.rsd, size=self.P * self.G)
            return dict(reward=float(x.mean()), reward_std=float(x.std()), group_std=float(x.std()), zero_std=0.0,
                        pct0=0.0, pct1=0.0)
        p = min(max(p, 1e-4), 1 - 1e-4)
        q = rng.beta(CONC * p, CONC * (1 - p), size=self.P)
        if self.rkind == "partial":
            x = rng.binomial(4, np.repeat(q, self.G)).reshape(self.P, self.G) / 4.0
        else:
            x = rng.binomial(1, np.repeat(q, self.G)).reshape(self.P, self.G).astype(float)
        same = x.std(axis=1) == 0
        return dict(reward=float(x.mean()), reward_std=float(x.std()), group_std=float(x.std(axis=1).mean()),
                    zero_std=float(same.mean()),
                    pct0=float(100 * (same & (x[:, 0] == 0)).mean()),
                    pct1=float(100 * (same & (x[:, 0] == 1)).mean()))

    def draws(self, rng: np.random.Generator, reached: int) -> dict:
        train = []
        for s in range(self.log_every, reached + 1, self.log_every):
            bs = [self._batch(rng, self.reward(s - j)) for j in range(self.log_every)]
            v = {k: float(np.mean([b[k] for b in bs])) for k in bs[0]}
            for k in ("kl", "entropy", "length", "trunc", "lr"):
                lvl = getattr(self, k)(s)
                v[k] = lvl if k == "lr" else lvl * math.exp(0.04 * rng.normal())
            g = self.grad_norm(s) * math.exp(0.25 * rng.normal())
            if rng.random() < 1 / 30:
                g *= 1 + abs(rng.standard_t(2))
            v["grad_norm"] = g
            for k, (lvl, sd, mult) in self.extra.items():
                v[k] = lvl(s) * math.exp(sd * rng.normal()) if mult else lvl(s) + sd * rng.normal()
            train.append((s, v))
        ev = []
        for s in self.headline_eval_steps(reached):
            row = {}
            for k, (lvl, n) in self.evals.items():
                p = lvl(s)
                row[k] = float(rng.normal(p, self.rsd, n).mean()) if self.eval_score else rng.binomial(n, p) / n
            ev.append((s, row))
        return dict(train=train, eval=ev)

    def headline_eval_steps(self, reached: int) -> list[int]:
        if self.eval_steps is not None:
            return [s for s in self.eval_steps if s <= reached]
        if not self.evals:
            return []
        return list(range(0 if self.eval_at_0 else self.eval_every, reached + 1, self.eval_every))

    def headline_level(self) -> Level:
        return self.reward if self.headline == TRAIN else self.evals[self.headline][0]

    def headline_steps(self, reached: int) -> list[int]:
        if self.headline == TRAIN:
            return list(range(self.log_every, reached + 1, self.log_every))
        return self.headline_eval_steps(reached)

    def headline_sd(self, p: float) -> float:
        if self.headline != TRAIN:
            n = self.evals[self.headline][1]
            return self.rsd / math.sqrt(n) if self.eval_score else math.sqrt(p * (1 - p) / n)
        if self.rkind == "score":
            return self.rsd / math.sqrt(self.P * self.G * self.log_every)
        scale = 1.0 if self.rkind == "binary" else 0.45  # partial credit spreads less per rollout
        var = p * (1 - p) / self.P * (1 / (CONC + 1) + CONC / ((CONC + 1) * self.G)) * scale
        return math.sqrt(var / self.log_every)


def window(story: Story, reached: int, onset: int) -> tuple[int, int]:
    lv, steps = story.headline_level(), story.headline_steps(reached)
    best = max(lv(s) for s in steps)
    sd = story.headline_sd(best)
    good = [s for s in steps if lv(s) >= best - sd]
    return good[0], max(s for s in good if s <= onset)


# ------------------------------------------------------------------------------------------------------ the writers

TRL = dict(reward="reward", reward_std="reward_std", zero_std="frac_reward_zero_std", kl="kl", entropy="entropy",
           length="completions/mean_length", trunc="completions/clipped_ratio", grad_norm="grad_norm",
           lr="learning_rate")
TRL015 = dict(reward="reward", reward_std="reward_std", kl="kl", length="completion_length",
              grad_norm="grad_norm", lr="learning_rate")
VERL = {"reward": "critic/score/mean", "kl": "actor/kl_loss", "entropy": "actor/entropy",
        "length": "response_length/mean", "trunc": "response_length/clip_ratio", "grad_norm": "actor/grad_norm",
        "lr": "actor/lr"}
OPENRLHF = dict(reward="train/reward", group_std="train/group_reward_std", kl="train/kl",
                length="train/response_length", trunc="train/truncated", grad_norm="train/actor_grad_norm",
                lr="train/actor_lr")
NEMO = dict(reward="train/reward", kl="train/kl_penalty", entropy="train/approx_entropy",
            length="train/mean_gen_tokens_per_sample", trunc="train/truncation_rate", grad_norm="train/grad_norm",
            lr="train/lr", pct0="train/baseline_reward/pct_0", pct1="train/baseline_reward/pct_1")


def named(v: dict, vocab: dict, extras: bool = True) -> dict:
    out = {vocab[k]: x for k, x in v.items() if k in vocab}
    if extras:
        out.update({k: x for k, x in v.items() if "/" in k or k.startswith("x_")})
    return {k.removeprefix("x_"): x for k, x in out.items()}


def r4(x: float) -> float:
    return float(f"{x:.6g}")


def w_trl_state(run: dict, folder: Path, save_every: int, keep: int | None = None, vocab: dict = TRL,
                logging_steps: int = 10, steps_per_epoch: int = 0, epochs: int = 1, extra_rows: Callable | None = None,
                best_key: str | None = None, finished: bool = False) -> None:
    """TRL output_dir: checkpoint-N/trainer_state.json; save_total_limit keeps `keep` (and the best, if tracked)."""
    planned = run["planned"]
    spe = steps_per_epoch or planned
    rows: list[dict] = []
    for s, v in run["train"]:
        row = {k: r4(x) for k, x in named(v, vocab).items()}
        row.update(loss=round(0.02 * np.sin(s) + 0.01, 4), epoch=round(s / spe, 4), step=s)
        rows.append(row)
    for s, v in run["eval"]:
        row = {k: r4(x) for k, x in v.items()}
        row.update(eval_runtime=round(180 + 5 * np.cos(s), 3), eval_samples_per_second=2.7,
                   eval_steps_per_second=0.09, epoch=round(s / spe, 4), step=s)
        rows.append(row)
    rows.sort(key=lambda r: (r["step"], "eval_runtime" in r))
    reached = run["train"][-1][0]
    saves = list(range(save_every, reached + 1, save_every))
    if finished and reached not in saves:
        saves.append(reached)
    best_step, best_val = None, -1e9
    kept: list[int] = []
    for n in saves:
        evs = [v[best_key] for s, v in run["eval"] if s == n] if best_key else []
        if evs and evs[0] > best_val:
            best_step, best_val = n, evs[0]
        hist = [r for r in rows if r["step"] <= n]
        st = trainer_state(hist, n, planned, logging_steps, save_every, run["eval_every"] or None,
                           round(n / spe, 4), epochs, training_stop=finished and n == reached)
        if best_key and best_step is not None:
            st.update(best_metric=best_val, best_global_step=best_step,
                      best_model_checkpoint=f"outputs/checkpoint-{best_step}")
        ck = folder / f"checkpoint-{n}"
        dump_json(ck / "trainer_state.json", st)
        (ck / "adapter_config.json").write_text('{"peft_type": "LORA", "r": 16}\n')
        kept.append(n)
        if keep:
            protected = {best_step} if best_key else set()
            while len([k for k in kept if k not in protected]) > keep:
                old = next(k for k in kept if k not in protected)
                kept.remove(old)
                for p in sorted((folder / f"checkpoint-{old}").rglob("*"), reverse=True):
                    p.unlink()
                (folder / f"checkpoint-{old}").rmdir()
    if finished:
        hist = [*rows, dict(train_runtime=48000.0, train_samples_per_second=1.1, train_steps_per_second=0.02,
                            total_flos=0.0, train_loss=0.012, epoch=round(reached / spe, 4), step=reached)]
        st = trainer_state(hist, reached, planned, logging_steps, save_every, run["eval_every"] or None,
                           round(reached / spe, 4), epochs, training_stop=True)
        dump_json(folder / "trainer_state.json", st)


def tb_name(folder: Path, wall: float, host: str = "node0", pid: int = 4711) -> Path:
    return folder / f"events.out.tfevents.{int(wall)}.{host}.{pid}.0"


def w_tb(run: dict, folder: Path, vocab: dict, train_prefix: str = "", eval_prefix: str = "",
         resume_at: int = 0, overlap: int = 0, sub: str = "", sec_per_step: float = 60.0) -> None:
    """TensorBoard scalars; a resume at `resume_at` opens a second file that rewrites `overlap` steps."""
    t0 = NOW - run["train"][-1][0] * sec_per_step
    ev: list[tuple[float, int, dict]] = []
    for s, v in run["train"]:
        ev.append((t0 + s * sec_per_step, s, {train_prefix + k: x for k, x in named(v, vocab).items()}))
    for s, v in run["eval"]:
        ev.append((t0 + s * sec_per_step + 30, s, {eval_prefix + k: x for k, x in v.items()}))
    ev.sort(key=lambda e: (e[1], e[0]))
    if not resume_at:
        tb_file(tb_name(folder / sub, t0), ev)
        return
    first = [e for e in ev if e[1] <= resume_at + overlap]
    # the replayed steps after the resume come with new draws of the same levels: shift slightly, later wall time
    second = [(w + (overlap + 25) * sec_per_step, s, d) for w, s, d in ev if s > resume_at]
    tb_file(tb_name(folder / sub, t0, pid=4711), first)
    tb_file(tb_name(folder / sub, t0 + (resume_at + overlap + 25) * sec_per_step, pid=9182), second)


def fmt_verl(x: float, np2: bool) -> str:
    return f"np.float64({x!r})" if np2 else f"{x:.3f}"


def w_verl_console(run: dict, folder: Path, ranks: int = 1, np2: bool = False, name: str = "train.log",
                   resume_at: int = 0, replay_to: int = 0) -> None:
    """verl LocalLogger lines behind Ray prefixes; with `ranks` > 1 every node's driver copy prints the line.

    With `resume_at`, the job died after `replay_to` and was restarted from global_step_`resume_at` with the log
    appended (`>>`): steps resume_at+1..replay_to appear twice, the second time with fresh sampling noise.
    """
    lines = ["2026-11-25 09:12:01,118 INFO worker.py:1841 -- Started a local Ray instance.",
             "(TaskRunner pid=20817) Using dataset class: RLHFDataset"]
    rows: dict[int, dict] = {}
    for s, v in run["eval"]:
        rows.setdefault(s, {}).update(v)
    for s, v in run["train"]:
        rows.setdefault(s, {}).update(named(v, VERL))
        rows[s]["training/global_step"] = s
        rows[s]["timing_s/step"] = 70 + v["length"] / 20
    jitter = np.random.default_rng(7)
    order = sorted(rows)
    if resume_at:
        order = [s for s in order if s <= replay_to] + [-1] + [s for s in order if s > resume_at]
    restarted = False
    for s in order:
        if s == -1:
            restarted = True
            lines += ["Traceback (most recent call last):", "ray.exceptions.ActorDiedError: The actor died "
                      "unexpectedly before finishing this task.", "2026-11-26 02:40:13,551 INFO worker.py:1841 -- "
                      "Started a local Ray instance.", f"(TaskRunner pid=31552) Load from checkpoint folder: "
                      f"checkpoints/gsm8k/run/global_step_{resume_at}"]
            continue
        vals = rows[s]
        if restarted and s <= replay_to:
            vals = {k: x * math.exp(0.03 * jitter.normal()) for k, x in vals.items()}
            vals["training/global_step"] = s
        body = " - ".join(f"{k}:{fmt_verl(x, np2)}" for k, x in vals.items())
        for r in range(ranks):
            ip = f", ip=10.20.3.{11 + r}" if ranks > 1 else ""
            pid = 31552 if restarted else 20817 + 97 * r
            lines.append(f"(TaskRunner pid={pid}{ip}) step:{s} - {body}")
        if s % 50 == 0:
            lines.append(f"(WorkerDict pid=21004) INFO: saved checkpoint global_step_{s}")
    (folder / name).write_text("\n".join(lines) + "\n")


def w_verl_jsonl(run: dict, folder: Path, truncate_last: bool = False, project: str = "dapo",
                 exp: str = "qwen3-8b-dapo") -> None:
    """verl FileLogger: {"step": N, "data": {...}} per line; NaN as null; a live run may end mid-line."""
    rows: dict[int, dict] = {}
    for s, v in run["eval"]:
        rows.setdefault(s, {}).update(v)
    for s, v in run["train"]:
        rows.setdefault(s, {}).update(named(v, VERL))
        rows[s]["training/global_step"] = s
    path = folder / project / f"{exp}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "".join(json.dumps({"step": s, "data": rows[s]}, separators=(",", ":")) + "\n" for s in sorted(rows))
    if truncate_last:
        text = text[: -len(text.splitlines()[-1]) // 2 - 1]
    path.write_text(text)


def w_mlflow_files(run: dict, folder: Path, every: dict[str, int], vocab: dict = TRL) -> None:
    """MLflow file store as the HF callback fills it: raw keys, each key at its own interval."""
    rid = "5c1f0a9e7d3b4f6a8e2c1b0d9f8a7e6d"
    exp = folder / "mlruns" / "417203958"
    (exp).mkdir(parents=True)
    (exp / "meta.yaml").write_text("artifact_location: mlflow-artifacts:/417203958\ncreation_time: 1764000000000\n"
                                   "experiment_id: '417203958'\nlifecycle_stage: active\nname: grpo-lora\n")
    rd = exp / rid
    t0 = int((NOW - run["train"][-1][0] * 20) * 1000)
    (rd / "params").mkdir(parents=True)
    (rd / "tags").mkdir()
    (rd / "artifacts").mkdir()
    (rd / "tags" / "mlflow.runName").write_text("grpo-qwen2.5-7b-lora")
    (rd / "params" / "max_steps").write_text(str(run["planned"]))
    (rd / "params" / "logging_steps").write_text("10")
    (rd / "meta.yaml").write_text(f"artifact_uri: mlflow-artifacts:/417203958/{rid}/artifacts\nend_time: null\n"
                                  f"entry_point_name: ''\nexperiment_id: '417203958'\nlifecycle_stage: active\n"
                                  f"run_id: {rid}\nrun_name: grpo-qwen2.5-7b-lora\nrun_uuid: {rid}\n"
                                  f"source_name: ''\nsource_type: 4\nsource_version: ''\nstart_time: {t0}\n"
                                  f"status: 1\ntags: []\nuser_id: trainer\n")
    lines: dict[str, list[str]] = {}
    for s, v in run["train"]:
        for k, x in named(v, vocab).items():
            if s % every.get(k, every.get("*", 10)) == 0:
                lines.setdefault(k, []).append(f"{t0 + s * 20000} {x!r} {s}")
    for s, v in run["eval"]:
        for k, x in v.items():
            lines.setdefault(k, []).append(f"{t0 + s * 20000 + 9000} {x!r} {s}")
    for k, ls in lines.items():
        p = rd / "metrics" / k
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("\n".join(ls) + "\n")


def w_mlflow_db(run: dict, folder: Path, vocab: dict = TRL) -> None:
    """MLflow SQL store (sqlite:///mlflow.db), the default since MLflow 3.7."""
    db = sqlite3.connect(folder / "mlflow.db")
    db.executescript("""
    CREATE TABLE experiments (experiment_id INTEGER PRIMARY KEY, name VARCHAR(256), artifact_location VARCHAR(256),
        lifecycle_stage VARCHAR(32), creation_time BIGINT, last_update_time BIGINT);
    CREATE TABLE runs (run_uuid VARCHAR(32) PRIMARY KEY, name VARCHAR(250), source_type VARCHAR(20),
        source_name VARCHAR(500), entry_point_name VARCHAR(50), user_id VARCHAR(256), status VARCHAR(9),
        start_time BIGINT, end_time BIGINT, source_version VARCHAR(50), lifecycle_stage VARCHAR(20),
        artifact_uri VARCHAR(200), experiment_id INTEGER, deleted_time BIGINT);
    CREATE TABLE metrics (key VARCHAR(250), value FLOAT, timestamp BIGINT, run_uuid VARCHAR(32), step BIGINT,
        is_nan BOOLEAN, PRIMARY KEY (key, timestamp, step, run_uuid, value, is_nan));
    CREATE TABLE latest_metrics (key VARCHAR(250), value FLOAT, timestamp BIGINT, step BIGINT, is_nan BOOLEAN,
        run_uuid VARCHAR(32), PRIMARY KEY (key, run_uuid));
    CREATE TABLE params (key VARCHAR(250), value VARCHAR(8000), run_uuid VARCHAR(32), PRIMARY KEY (key, run_uuid));
    CREATE TABLE tags (key VARCHAR(250), value VARCHAR(8000), run_uuid VARCHAR(32), PRIMARY KEY (key, run_uuid));
    """)
    rid = "9e0c7b1a2d3f4e5a6b7c8d9e0f1a2b3c"
    t0 = int((NOW - run["train"][-1][0] * 30) * 1000)
    db.execute("INSERT INTO experiments VALUES (1, 'rl-posttrain', 'mlflow-artifacts:/1', 'active', ?, ?)", (t0, t0))
    db.execute("INSERT INTO runs VALUES (?, 'grpo-lora-r64', 'UNKNOWN', '', '', 'trainer', 'RUNNING', ?, NULL, '',"
               " 'active', ?, 1, NULL)", (rid, t0, f"mlflow-artifacts:/1/{rid}/artifacts"))
    db.execute("INSERT INTO params VALUES ('max_steps', ?, ?)", (str(run["planned"]), rid))
    db.execute("INSERT INTO tags VALUES ('mlflow.runName', 'grpo-lora-r64', ?)", (rid,))
    latest: dict[str, tuple] = {}
    for s, v in run["train"]:
        for k, x in named(v, vocab).items():
            rec = (k, x, t0 + s * 30000, rid, s, 0)
            db.execute("INSERT INTO metrics VALUES (?, ?, ?, ?, ?, ?)", rec)
            latest[k] = rec
    for s, v in run["eval"]:
        for k, x in v.items():
            rec = (k, x, t0 + s * 30000 + 7000, rid, s, 0)
            db.execute("INSERT INTO metrics VALUES (?, ?, ?, ?, ?, ?)", rec)
            latest[k] = rec
    for k, x, ts, r, s, nan in latest.values():
        db.execute("INSERT INTO latest_metrics VALUES (?, ?, ?, ?, ?, ?)", (k, x, ts, s, nan, r))
    db.commit()
    db.close()


def w_trackio(run: dict, folder: Path, vocab: dict = TRL, project: str = "grpo-partial",
              name: str = "qwen3-4b-partial-credit") -> None:
    """Trackio: one SQLite DB per project, one JSON metrics blob per log call, keys after HF rewrite_logs."""
    db = sqlite3.connect(folder / f"{project}.db")
    db.executescript("""
    CREATE TABLE metrics (id INTEGER PRIMARY KEY AUTOINCREMENT, timestamp TEXT NOT NULL, run_name TEXT NOT NULL,
        step INTEGER NOT NULL, metrics TEXT NOT NULL);
    CREATE TABLE configs (id INTEGER PRIMARY KEY AUTOINCREMENT, run_name TEXT NOT NULL, config TEXT NOT NULL,
        created_at TEXT NOT NULL, UNIQUE(run_name));
    CREATE TABLE system_metrics (id INTEGER PRIMARY KEY AUTOINCREMENT, timestamp TEXT NOT NULL,
        run_name TEXT NOT NULL, metrics TEXT NOT NULL);
    """)
    t0 = NOW - run["train"][-1][0] * 40
    ts = lambda s: time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t0 + s * 40))  # noqa: E731
    db.execute("INSERT INTO configs (run_name, config, created_at) VALUES (?, ?, ?)",
               (name, json.dumps({"max_steps": run["planned"], "logging_steps": 5, "_Username": "trainer"}), ts(0)))
    rows = []
    for s, v in run["train"]:
        m = {"train/" + k: x for k, x in named(v, vocab).items()}
        m["train/global_step"] = s
        rows.append((s, 0, m))
    for s, v in run["eval"]:
        m = {"eval/" + k.removeprefix("eval_"): x for k, x in v.items()}
        m["train/global_step"] = s
        rows.append((s, 1, m))
    for s, _, m in sorted(rows, key=lambda r: (r[0], r[1])):
        db.execute("INSERT INTO metrics (timestamp, run_name, step, metrics) VALUES (?, ?, ?, ?)",
                   (ts(s), name, s, json.dumps(m)))
    db.commit()
    db.close()


def w_wandb_csv(run: dict, folder: Path, panels: dict[str, str], display: str = "grpo-rm-ens-0812") -> None:
    """W&B UI 'Export CSV', one file per panel: Step, '<run> - <key>', '__MIN', '__MAX' (bucketed)."""
    series: dict[str, list[tuple[int, float]]] = {}
    for s, v in run["train"]:
        for ck, key in panels.items():
            if ck in v:
                series.setdefault(key, []).append((s, v[ck]))
    for s, v in run["eval"]:
        for ck, key in panels.items():
            if ck in v:
                series.setdefault(key, []).append((s, v[ck]))
    for key, pts in series.items():
        col = f"{display} - {key}"
        bucket = max(1, len(pts) // 300)
        with (folder / f"wandb_export_{key.replace('/', '_')}.csv").open("w", newline="") as fh:
            w = csv.writer(fh, quoting=csv.QUOTE_ALL)
            w.writerow(["Step", col, col + "__MIN", col + "__MAX"])
            for i in range(0, len(pts), bucket):
                chunk = pts[i:i + bucket]
                vals = [x for _, x in chunk]
                w.writerow([chunk[-1][0], repr(float(np.mean(vals))), repr(min(vals)), repr(max(vals))])


def w_epoch_csv(run: dict, folder: Path, steps_per_epoch: int) -> None:
    """A hand-written loop: train.csv and eval.csv whose only x-axis is the fractional epoch."""
    with (folder / "train.csv").open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["epoch", "reward", "reward_std", "kl", "entropy", "grad_norm", "lr"])
        for s, v in run["train"]:
            w.writerow([f"{s / steps_per_epoch:.4f}", f"{v['reward']:.4f}", f"{v['reward_std']:.4f}",
                        f"{v['kl']:.5f}", f"{v['entropy']:.4f}", f"{v['grad_norm']:.4f}", f"{v['lr']:.2e}"])
    with (folder / "eval.csv").open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["epoch", "heldout_acc"])
        for s, v in run["eval"]:
            w.writerow([f"{s / steps_per_epoch:.4f}", f"{v['heldout_acc']:.4f}"])


def set_age(folder: Path, hours: float) -> None:
    t = NOW - hours * 3600
    for p in folder.rglob("*"):
        os.utime(p, (t, t))


# ------------------------------------------------------------------------------------------------------- the cases

@dataclass
class Spec:
    name: str
    story: Story
    write: Callable
    seed: int
    steps: int | tuple[int, int]
    kind: str  # ok | conv | stop | rb | sor | amb (continue or rollback)
    tags: str
    why: str
    onset: int | None = None

    def case(self) -> Case:
        reached = self.steps[0] if isinstance(self.steps, tuple) else self.steps
        if self.kind == "ok":
            labels = HEALTHY
        elif self.kind == "conv":
            labels = converged()
            labels["onset_step"] = self.onset
        elif self.kind == "stop":
            labels = stop(self.onset)
        else:
            assert self.onset is not None
            lo, hi = window(self.story, reached, self.onset)
            if self.kind == "amb":  # a fault in how the eval is run, not necessarily in the model
                labels = dict(accept=["continue", "rollback"], preferred="continue", rollback_window=[lo, hi],
                              onset_step=self.onset)
            else:
                labels = (rollback if self.kind == "rb" else stop_or_rollback)(lo, hi, self.onset)
        return Case(self.name, lambda *_: None, self.write, self.seed, self.steps, labels, self.tags, self.why)


EV = "val-core/openai/gsm8k/acc/mean@1"
EVM = "val-core/math_dapo/acc/mean@16"

SPECS: list[Spec] = [
    # ------------------------------------------------------------------------------------------------ healthy
    Spec("ok-multinode-rank-duplicated-lines-verl-console",
         Story(knots((0, .30), (150, .50), (320, .60), (600, .66)),
               {EV: (knots((0, .36), (150, .54), (320, .63), (600, .68)), 1319)}, EV, eval_every=20,
               kl=knots((0, 0), (320, .004)), entropy=knots((0, .55), (320, .42)), length=knots((0, 240), (320, 205)),
               grad_norm=const(.25), lr=const(1e-6)),
         writer(w_verl_console)(4), 1601, (320, 600), "ok",
         "healthy lookalike verl console multinode duplicated-lines",
         "A 4-node verl GRPO job whose every node's driver copy prints the same step line (4 copies per step, "
         "different Ray pid/ip prefixes). Underneath: batch reward 0.30 -> 0.60 by step 320 of 600, GSM8K "
         "val acc 0.36 -> 0.63 (N=1319, sd 0.013) still rising about 0.03 per 100 steps. Duplicates are the "
         "same numbers, not a resume; nothing is wrong. Continue."),
    Spec("ok-lora-tiny-grad-norm-small-kl-trl020-state",
         Story(knots((0, .35), (450, .52), (1200, .60)),
               {"eval_reward": (knots((0, .33), (450, .50), (1200, .58)), 500)}, "eval_reward", eval_every=50,
               eval_at_0=False, log_every=10, kl=knots((0, 2e-5), (450, 4e-4)), entropy=knots((0, .62), (450, .57)),
               length=knots((0, 310), (450, 330)), grad_norm=const(.012), lr=const(2e-5)),
         writer(w_trl_state)(50, 3), 1602, (450, 1200), "ok",
         "healthy lookalike trl trainer_state lora tiny-grad-norm",
         "LoRA r=16 GRPO (TRL 0.20 keys, logging every 10, eval every 50 on 500 problems). grad_norm sits near "
         "0.012 and KL at 1e-4..4e-4 because only the adapters move; a judge keyed on full-finetune magnitudes "
         "would call it dead. But eval_reward climbs 0.34 -> 0.50 by step 450 of 1200 (sd 0.022, +7 sd) and "
         "the train reward 0.35 -> 0.52. Still learning: continue."),
    Spec("ok-epoch-float-only-axis-eval-separate-custom-csv",
         Story(knots((0, .22), (400, .45), (940, .55)),
               {"heldout_acc": (knots((0, .20), (400, .42), (940, .52)), 400)}, "heldout_acc", eval_every=29,
               eval_at_0=True, P=16, G=8, kl=knots((0, 0), (400, .01)), entropy=knots((0, .8), (400, .6)),
               grad_norm=const(.6), lr=const(5e-7)),
         writer(w_epoch_csv)(116), 1603, (400, 940), "ok",
         "healthy custom csv epoch-axis separate-eval-file",
         "A hand-written loop that logs only the fractional epoch (116 steps per epoch; 3.4 of 8 epochs done) "
         "with train metrics in train.csv and held-out accuracy in a separate eval.csv every quarter epoch. "
         "Held-out acc 0.20 -> 0.42 (N=400, sd 0.025) and still rising ~0.02 per epoch; reward 0.22 -> 0.45 "
         "(16x8 batch, noisy). Continue."),
    Spec("ok-vllm-upgrade-at-resume-is-ratio-shift-trl-tb",
         Story(knots((0, .40), (400, .55), (700, .62), (1500, .70)),
               {"reward": (knots((0, .38), (400, .53), (700, .60), (1500, .68)), 600)}, "reward", eval_every=100,
               eval_at_0=False, log_every=10, kl=knots((0, 0), (700, .03)), entropy=knots((0, .5), (700, .41)),
               length=knots((0, 600), (700, 720)), grad_norm=const(.2), lr=const(1e-6),
               extra={"sampling/importance_sampling_ratio/mean":
                      (lambda s: .998 if s <= 400 else .982, .002, False),
                      "sampling/sampling_logp_difference/mean":
                      (lambda s: .004 if s <= 400 else .011, .05, True)}),
         writer(w_tb)(TRL, "train/", "eval/", 400, 20, "runs/Nov24_08-11-02_gpu-a17"), 1604, (700, 1500), "ok",
         "healthy lookalike tensorboard trl resume overlap engine-upgrade",
         "TRL GRPO with vLLM importance-sampling correction, resumed from checkpoint-400 after a vLLM upgrade "
         "(two event files, steps 401-420 logged twice). From the resume the train-inference logprob gap steps "
         "0.004 -> 0.011 and the IS ratio mean 0.998 -> 0.982, a level shift that then stays flat (kernel "
         "numerics changed, not a growing mismatch). Reward keeps rising 0.55 -> 0.62 and eval/reward 0.53 -> "
         "0.60 (N=600, sd 0.02) by step 700 of 1500. Continue."),
    Spec("ok-stale-reward-server-stretch-recovers-openrlhf-tb",
         Story(lambda s: (.28 + .27 * min(s, 480) / 480) if not 200 <= s <= 260 else .37,
               {"eval_math_pass1": (knots((0, .30), (200, .42), (260, .43), (480, .52), (1000, .58)), 500)},
               "eval_math_pass1", eval_every=40, kl=knots((0, 0), (480, .02)), length=const(900),
               grad_norm=const(.4), lr=const(5e-7)),
         writer(w_tb)(OPENRLHF, "", "eval/", sub="tb/qwen25-7b-rpp"), 1605, (480, 1000), "ok",
         "healthy lookalike tensorboard openrlhf reward-dip recovered",
         "OpenRLHF REINFORCE++ whose remote reward server served cached (stale) scores for steps 200-260: "
         "train/reward dropped from ~0.39 to ~0.37 and stalled, then came back to trend (0.55 at step 480 of "
         "1000). Held-out pass@1 only paused (0.42 -> 0.43 across the stretch) and is now 0.52 (N=500, sd "
         "0.022), a new high. The dip is over; continue."),
    Spec("ok-eval-every-1000-of-3000-per-key-intervals-mlflow-files",
         Story(knots((0, .30), (1000, .40), (3000, .50), (6000, .56)),
               {"eval_accuracy": (knots((0, .28), (1000, .39), (3000, .49), (6000, .55)), 1000)}, "eval_accuracy",
               eval_steps=[1000, 2000, 3000], log_every=10, P=16, G=4, kl=knots((0, 0), (3000, .02)),
               entropy=knots((0, .5), (3000, .38)), grad_norm=const(.3), lr=const(1e-6)),
         writer(w_mlflow_files)({"*": 10, "entropy": 50, "completions/mean_length": 50, "kl": 20}), 1606,
         (3000, 6000), "ok", "healthy lookalike mlflow file-store sparse-eval per-key-intervals",
         "HF MLflow callback file store; reward/grad_norm every 10 steps, kl every 20, entropy and length every "
         "50, and eval_accuracy only at steps 1000, 2000, 3000 (N=1000, sd 0.016): 0.39, 0.44, 0.49. The "
         "16x4 batch reward is noisy (sd ~0.05 per point) but rises 0.30 -> 0.50 over 3000 of 6000 steps. Three "
         "eval points, each up ~3 sd: continue."),
    Spec("ok-lr-warm-restarts-shallow-dips-nemo-tb",
         Story(lambda s: .35 + .30 * min(s, 1200) / 1200 - .03 * max(0.0, 1 - ((s % 250) / 40)) * (s >= 250),
               {"validation/accuracy": (knots((0, .33), (800, .56), (1200, .62)), 500)}, "validation/accuracy",
               eval_every=25, kl=knots((0, 0), (800, .012)), entropy=knots((0, .5), (800, .4)), length=const(500),
               grad_norm=const(.3), lr=lambda s: 1e-7 + .5 * (1e-6 - 1e-7) * (1 + math.cos(math.pi * (s % 250) / 250)),
               extra={}),
         writer(w_tb)(NEMO, "", "", sub="logs/exp_003/tensorboard"), 1607, (800, 1200), "ok",
         "healthy lookalike tensorboard nemo-rl lr-restarts",
         "NeMo-RL GRPO with cosine warm restarts every 250 steps (lr back to 1e-6). After each restart the "
         "train reward dips ~0.03 for ~40 steps and then recovers above where it was; the sawtooth is the "
         "schedule, not instability. validation/accuracy (N=500, every 25) rises 0.33 -> 0.56 by step 800 of "
         "1200 with no lasting dip. Continue."),
    Spec("ok-ppo-critic-warmup-flat-start-verl-console-np2",
         Story(knots((0, .15), (40, .15), (260, .45), (700, .58)),
               {EV: (knots((0, .18), (40, .18), (260, .46), (700, .60)), 1319)}, EV, eval_every=20,
               kl=knots((0, 0), (40, 0), (260, .01)), entropy=knots((0, .7), (40, .7), (260, .55)),
               length=const(260), grad_norm=const(.5), lr=lambda s: 0.0 if s <= 40 else 1e-6,
               extra={"critic/vf_loss": (knots((0, 40), (40, 1.5), (260, .4)), .08, True),
                      "critic/vf_explained_var": (knots((0, -.8), (40, .3), (260, .6)), .05, False),
                      "critic/grad_norm": (knots((0, 900), (40, 30), (260, 8)), .2, True)}),
         writer(w_verl_console)(1, True), 1608, (260, 700), "ok",
         "healthy lookalike verl console numpy2 ppo critic-warmup",
         "verl PPO (GAE) with critic_warmup=40: for the first 40 steps only the critic trains (actor lr 0), so "
         "the score is flat at 0.15, vf_loss falls 40 -> 1.5 and explained variance goes -0.8 -> 0.3. Joint "
         "training then lifts the score to 0.45 and GSM8K val acc 0.18 -> 0.46 (N=1319) by step 260 of 700, "
         "still rising. Values printed as np.float64(...). Continue."),
    Spec("ok-dapo-overlong-soft-penalty-live-truncated-verl-jsonl",
         Story(knots((0, .18), (380, .40), (1000, .50)),
               {EVM: (knots((0, .14), (380, .33), (1000, .42)), 30 * 16)}, EVM, eval_every=20,
               P=64, G=16, kl=const(0.0), entropy=knots((0, .6), (380, .52)), length=knots((0, 2400), (380, 6800)),
               trunc=knots((0, .01), (380, .06)), grad_norm=const(.15), lr=const(1e-6),
               extra={"train/num_gen_batches": (knots((0, 2.1), (380, 1.4)), .08, True)}),
         writer(w_verl_jsonl)(True), 1609, (380, 1000), "ok",
         "healthy lookalike verl jsonl dapo length-growth live truncated-line",
         "verl DAPO with a soft overlong penalty (cap 8192, penalty from 4096): responses grow 2400 -> 6800 "
         "tokens and 6% hit the cap, which costs a little score, yet the AIME-style val acc mean@16 rises "
         "0.14 -> 0.33 (480 samples) by step 380 of 1000, and dynamic sampling needs fewer generation rounds. "
         "The file is being written (last line cut). Continue."),
    # ------------------------------------------------------------------------------------------------ stop
    Spec("conv-two-reward-models-both-plateau-trl-state",
         Story(knots((0, 2.0), (700, 3.1), (1100, 3.3), (2000, 3.32)),
               {"eval_reward": (knots((0, 1.9), (700, 3.0), (1100, 3.2), (2000, 3.21)), 400)}, "eval_reward",
               eval_every=100, eval_at_0=False, rkind="score", rsd=1.2, eval_score=True, log_every=10, kl=knots((0, 0), (2000, .05)),
               grad_norm=const(.4), lr=knots((0, 1e-6), (2000, 1e-7)),
               extra={"rewards/rm_helpful/mean": (knots((0, 2.3), (700, 3.4), (1100, 3.6), (2000, 3.62)), .01,
                                                  False),
                      "rewards/rm_harmless/mean": (knots((0, 1.7), (700, 2.8), (1100, 3.0), (2000, 3.02)), .01,
                                                   False)}),
         writer(w_trl_state)(100, 2), 1610, (1800, 2000), "conv",
         "converged trl trainer_state reward-model-ensemble plateau",
         "TRL GRPO against an ensemble of two reward models logged separately (rewards/rm_helpful/mean, "
         "rewards/rm_harmless/mean); both agree and both flattened after step 1100 (+0.02 over 700 steps). "
         "Held-out mean RM score 3.20 at 1100, 3.21 now at 1800 of 2000 (sd 0.06). Nothing left to gain and the "
         "current weights are as good as any; finishing the last 200 steps is also fine.", onset=1100),
    Spec("stop-partial-credit-saturated-old-trl015-keys-state",
         Story(knots((0, .55), (300, .92), (400, .94), (2000, .945)),
               {"eval_reward": (knots((0, .50), (300, .86), (400, .875), (2000, .876)), 800)}, "eval_reward",
               eval_every=50, eval_at_0=False, rkind="partial", log_every=10, kl=knots((0, 0), (900, .08)),
               grad_norm=knots((0, .3), (400, .05)), lr=const(1e-6)),
         writer(w_trl_state)(100, 2, TRL015), 1611, (900, 2000), "stop",
         "stop trl trainer_state old-keys partial-credit saturated",
         "TRL 0.15 (completion_length, kl always logged) GRPO with a 4-item partial-credit rubric. The train "
         "reward saturated at ~0.94 by step 400 and reward_std shrank to ~0.1; held-out partial-credit score "
         "is 0.875 since step 400 and 0.876 at 900 of 2000 (N=800, sd 0.012). Five hundred steps without a "
         "gain while KL keeps creeping: stop.", onset=400),
    Spec("stop-never-learns-flat-low-openrlhf-tb",
         Story(const(.08),
               {"eval_gsm8k_pass1": (const(.10), 500)}, "eval_gsm8k_pass1", eval_every=50, P=32, G=4,
               kl=knots((0, 0), (600, .004)), length=const(380), grad_norm=const(.05), lr=const(5e-7)),
         writer(w_tb)(OPENRLHF, "", "eval/", sub="tb/qwen25-05b-grpo"), 1612, (600, 2000), "stop",
         "stop tensorboard openrlhf never-learns",
         "OpenRLHF GRPO on a 0.5B model with 4 samples per prompt: reward 0.08 flat for 600 steps (most groups "
         "all-zero, mean group_reward_std ~0.1), eval pass@1 0.10 flat (N=500, sd 0.013) from step 0 to 600 of 2000. "
         "No learning signal reaches the policy; more steps will not help. Stop.", onset=200),
    Spec("stop-finished-best-at-end-trackio",
         Story(knots((0, .30), (600, .52), (1000, .58)),
               {"eval_accuracy": (knots((0, .28), (600, .50), (1000, .56)), 500)}, "eval_accuracy", eval_every=50,
               rkind="binary", log_every=5, kl=knots((0, 0), (1000, .03)), grad_norm=const(.3),
               lr=knots((0, 1e-6), (1000, 0)), age_hours=9),
         writer(w_trackio)(TRL, "grpo-finished", "qwen3-1.7b-gsm8k-lr-decay"), 1613, (1000, 1000), "stop",
         "stop trackio finished best-at-end",
         "Trackio project DB of a TRL GRPO run that finished its 1000 planned steps 9 hours ago, lr decayed to "
         "0. Eval accuracy 0.28 -> 0.56 (N=500, sd 0.022), highest at the end (0.50 at 600, 0.56 at 1000). A "
         "finished run ending at its best: keep the final weights (stop).", onset=1000),
    Spec("stop-signal-gone-pct1-climbs-nemo-tb",
         Story(knots((0, .70), (550, .96), (900, .97), (2000, .975)),
               {"validation/accuracy": (knots((0, .62), (550, .78), (900, .78)), 500)}, "validation/accuracy",
               eval_every=25, kl=knots((0, 0), (900, .05)), entropy=knots((0, .4), (550, .12), (900, .08)),
               length=const(300), grad_norm=knots((0, .3), (550, .04)), lr=const(1e-6)),
         writer(w_tb)(NEMO, "", "", sub="logs/exp_001/tensorboard"), 1614, (900, 2000), "stop",
         "stop tensorboard nemo-rl saturated zero-signal",
         "NeMo-RL GRPO on a too-easy prompt set: train/reward 0.96-0.97 and baseline_reward/pct_1 climbs to "
         "~85-90% (groups all correct, advantage 0), entropy 0.12 -> 0.08. validation/accuracy has been 0.78 "
         "(N=500, sd 0.019) since step 550; now 900 of 2000. No learning signal left and no decline: stop.",
         onset=550),
    Spec("stop-kl-drifts-reward-flat-wandb-csv-export",
         Story(knots((0, .42), (300, .55), (800, .55)),
               {"eval/accuracy": (knots((0, .40), (300, .52), (800, .52)), 600)}, "eval/accuracy", eval_every=50,
               eval_at_0=False, P=32, G=8, kl=knots((0, 0), (300, .02), (800, .12)), grad_norm=const(.3),
               lr=const(1e-6)),
         writer(w_wandb_csv)({"reward": "train/reward", "kl": "train/kl", "entropy": "train/entropy",
                              "eval/accuracy": "eval/accuracy", "grad_norm": "train/grad_norm"}, "grpo-beta004"),
         1615, (800, 1500), "stop", "stop wandb csv-export kl-drift plateau",
         "W&B panel CSV exports (one file per panel, __MIN/__MAX columns). Reward and eval accuracy plateaued at "
         "step 300 (0.55 / 0.52, eval N=600 sd 0.02) while KL keeps climbing 0.02 -> 0.12 through step 800 of "
         "1500. The policy drifts from the reference without any gain and without a measurable loss yet: "
         "stop.", onset=350),
    Spec("sor-save-best-only-slow-drift-trl-state",
         Story(knots((0, .40), (600, .56), (1100, .548), (1500, .54)),
               {"eval_accuracy": (knots((0, .40), (600, .56), (1100, .548), (1500, .54)), 300)}, "eval_accuracy",
               eval_every=100, eval_at_0=False, log_every=10, kl=knots((0, 0), (1100, .05)),
               grad_norm=const(.3), lr=const(1e-6)),
         writer(w_trl_state)(100, 1, TRL, 10, 0, 1, None, "eval_accuracy"), 1616, (1100, 1500), "sor",
         "ambiguous trl trainer_state save-best-only slow-drift",
         "save_total_limit=1 with metric_for_best_model=eval_accuracy: only the best checkpoint and the newest "
         "exist (the best dir moves as the eval wanders). The eval level peaked at 0.560 at step 600 and has "
         "drifted to 0.548 by 1100 of 1500: 0.4 sd of one eval (N=300, sd 0.029), not separable from noise. "
         "Stop is right; restoring the peak region is as good.", onset=700),
    # ------------------------------------------------------------------------------------------------ rollback
    Spec("bad-epoch2-memorises-heldout-falls-trl-state",
         Story(lambda s: .30 + .25 * min(s, 250) / 250 + (.25 * min(s - 250, 200) / 200 if s > 250 else 0),
               {"eval_accuracy": (knots((0, .30), (250, .46), (320, .465), (560, .38)), 500)}, "eval_accuracy",
               eval_every=20, eval_at_0=False, log_every=10, kl=knots((0, 0), (250, .01), (560, .06)),
               entropy=knots((0, .5), (250, .42), (560, .2)), grad_norm=const(.3), lr=const(1e-6)),
         writer(w_trl_state)(40, 3, TRL, 10, 250, 3), 1617, (560, 750), "rb",
         "rollback trl trainer_state epochs memorisation",
         "Only 2000 prompts: epoch 1 ends at step 250. In epoch 2 the policy sees the same prompts again and "
         "the train reward jumps 0.55 -> 0.78 while entropy falls 0.42 -> 0.2, but held-out accuracy peaks at "
         "0.465 around step 320 and falls to 0.38 by 560 (N=500, sd 0.022; 3.8 sd). It memorises. Roll back to "
         "the end of epoch 1 / the peak.", onset=320),
    Spec("bad-rm-ensemble-disagree-gold-falls-wandb-csv",
         Story(knots((0, 1.0), (400, 1.8), (800, 2.6)),
               {"eval/gold_winrate": (knots((0, .40), (400, .58), (450, .58), (800, .47)), 400)},
               "eval/gold_winrate", eval_every=50, eval_at_0=False, rkind="score", rsd=1.0, P=16, G=8,
               kl=knots((0, 0), (400, .04), (800, .20)), grad_norm=const(.5), lr=const(1e-6),
               extra={"rewards/rm_a/mean": (knots((0, 1.2), (400, 2.1), (800, 3.2)), .02, False),
                      "rewards/rm_b/mean": (knots((0, .8), (400, 1.5), (450, 1.52), (800, 1.1)), .02, False)}),
         writer(w_wandb_csv)({"reward": "train/reward", "rewards/rm_a/mean": "train/rewards/rm_a/mean",
                              "rewards/rm_b/mean": "train/rewards/rm_b/mean", "kl": "train/kl",
                              "eval/gold_winrate": "eval/gold_winrate"}), 1618, (800, 1200), "rb",
         "rollback wandb csv-export reward-model-ensemble reward-hacking",
         "Two reward models summed into the reward. From step 450 RM A keeps climbing (2.1 -> 3.2) while RM B "
         "turns down (1.52 -> 1.1) and KL accelerates 0.04 -> 0.20: the policy exploits A. The held-out gold "
         "win rate peaked at 0.58 (steps 400-450) and is 0.47 at 800 of 1200 (N=400, sd 0.025; 4.5 sd). Roll "
         "back to the peak.", onset=450),
    Spec("bad-vllm-upgrade-broken-weight-sync-nemo-tb",
         Story(knots((0, .35), (500, .62), (640, .40)),
               {"validation/accuracy": (knots((0, .33), (500, .55), (640, .41)), 500)}, "validation/accuracy",
               eval_every=20, kl=knots((0, 0), (500, .015), (640, .09)), entropy=knots((0, .5), (500, .4), (640, .7)),
               length=const(450), grad_norm=knots((0, .3), (500, .3), (640, 1.2)), lr=const(1e-6),
               extra={"train/token_mult_prob_error": (knots((0, 1.003), (500, 1.004), (520, 1.03), (640, 1.09)),
                                                      .002, True)}),
         writer(w_tb)(NEMO, "", "", 500, 0, "logs/exp_002/tensorboard"), 1619, (640, 1500), "rb",
         "rollback tensorboard nemo-rl resume engine-upgrade weight-sync",
         "NeMo-RL GRPO resumed at step 500 on a new vLLM build. From the resume token_mult_prob_error climbs "
         "1.004 -> 1.09 (docs: > ~1.02 means broken refit), entropy rises 0.4 -> 0.7, reward falls 0.62 -> "
         "0.40 and validation accuracy 0.55 -> 0.41 by step 640 (N=500, sd 0.022). The step-500 weights are the "
         "good ones: roll back there (and fix the sync).", onset=500),
    Spec("bad-stale-rewards-never-recover-openrlhf-tb",
         Story(knots((0, .30), (300, .52), (450, .47)),
               {"eval_math_pass1": (knots((0, .30), (300, .52), (450, .42)), 500)}, "eval_math_pass1",
               eval_every=30, kl=knots((0, 0), (300, .02), (450, .06)), length=const(800), grad_norm=const(.4),
               lr=const(5e-7)),
         writer(w_tb)(OPENRLHF, "", "eval/", sub="tb/qwen25-7b-rpp-b"), 1620, (450, 1000), "rb",
         "rollback tensorboard openrlhf reward-server stale-rewards",
         "OpenRLHF REINFORCE++; from step 300 the reward server returns scores of the previous batch (a cache "
         "key bug), so advantages are uncorrelated with the samples. The logged reward only sags 0.52 -> 0.47, "
         "but held-out pass@1 falls 0.52 -> 0.42 by step 450 of 1000 (N=500, sd 0.022; 4.5 sd). Roll back to "
         "the step-300 weights.", onset=300),
    Spec("bad-lr-restart-too-hot-collapse-verl-console",
         Story(knots((0, .35), (400, .58), (430, .50), (520, .35)),
               {EV: (knots((0, .38), (400, .60), (430, .53), (520, .38)), 1319)}, EV, eval_every=20,
               kl=knots((0, 0), (400, .01), (520, .15)), entropy=knots((0, .5), (400, .42), (450, .9), (520, 1.3)),
               length=knots((0, 240), (400, 220), (520, 520)), grad_norm=knots((0, .3), (400, .3), (420, 3), (520, 2)),
               lr=lambda s: 1e-6 if s <= 400 else 1e-5),
         writer(w_verl_console)(1, False, "driver.out"), 1621, (520, 1000), "rb",
         "rollback verl console lr-restart instability",
         "verl GRPO whose schedule restarts at step 400 with a peak lr of 1e-5 (a typo: 10x the first cycle). "
         "Grad norm jumps 0.3 -> 3, entropy 0.42 -> 1.3, responses balloon to 520 tokens; score falls 0.58 -> "
         "0.35 and GSM8K val acc 0.60 -> 0.38 (N=1319, sd 0.013) by step 520. Roll back to step 400.", onset=400),
    Spec("bad-dapo-overlong-filter-off-length-cap-verl-jsonl",
         Story(knots((0, .20), (300, .42), (340, .43), (500, .32)),
               {EVM: (knots((0, .15), (300, .34), (340, .345), (500, .25)), 30 * 16)}, EVM, eval_every=20,
               P=64, G=16, kl=const(0.0), entropy=knots((0, .6), (340, .5), (500, .75)),
               length=knots((0, 2500), (320, 5200), (500, 7900)), trunc=knots((0, .01), (320, .05), (500, .55)),
               grad_norm=const(.2), lr=const(1e-6)),
         writer(w_verl_jsonl)(False, "dapo", "qwen3-8b-dapo-nofilter"), 1622, (500, 1000), "rb",
         "rollback verl jsonl dapo length-explosion truncation",
         "verl DAPO with overlong filtering switched off: responses keep growing into the 8192 cap, "
         "response_length/clip_ratio 0.05 -> 0.55, and truncated answers score 0. Val acc mean@16 peaked at "
         "0.345 around step 340 and is 0.25 at 500 (480 samples, sd 0.022; 4.5 sd). Roll back to the peak.",
         onset=340),
    Spec("bad-lora-slow-decline-after-peak-mlflow-db",
         Story(knots((0, .40), (700, .60), (800, .605), (1200, .60)),
               {"eval_accuracy": (knots((0, .40), (700, .61), (800, .612), (1200, .53)), 800)}, "eval_accuracy",
               eval_every=100, eval_at_0=False, log_every=10, kl=knots((0, 0), (1200, .003)), grad_norm=const(.015),
               lr=const(2e-5)),
         writer(w_mlflow_db)(TRL), 1623, (1200, 2000), "rb",
         "rollback mlflow sqlite lora eval-decline train-flat",
         "LoRA GRPO in an MLflow SQL store. Train reward flat at ~0.60 after step 700, but held-out accuracy "
         "peaked at 0.612 (step 800) and slid to 0.53 by 1200 of 2000 (N=800, sd 0.017; 4.8 sd): the adapter "
         "overfits the training distribution. Roll back to ~800.", onset=800),
    Spec("bad-ppo-critic-collapse-after-warmup-verl-jsonl",
         Story(knots((0, .20), (40, .20), (350, .52), (380, .53), (520, .36)),
               {EV: (knots((0, .22), (40, .22), (350, .55), (380, .555), (520, .40)), 1319)}, EV, eval_every=20,
               kl=knots((0, 0), (380, .012), (520, .05)), entropy=knots((0, .6), (380, .48), (520, .75)),
               length=knots((0, 260), (380, 240), (520, 330)), grad_norm=knots((0, .4), (380, .4), (520, 1.1)),
               lr=lambda s: 0.0 if s <= 40 else 1e-6,
               extra={"critic/vf_loss": (knots((0, 35), (40, 1.4), (380, .35), (420, 2.5), (520, 9)), .08, True),
                      "critic/vf_explained_var": (knots((0, -.7), (40, .3), (380, .62), (430, .1), (520, -.4)),
                                                  .04, False),
                      "critic/grad_norm": (knots((0, 900), (40, 25), (380, 6), (520, 60)), .2, True)}),
         writer(w_verl_jsonl)(False, "gsm8k-ppo", "qwen25-3b-gae"), 1625, (520, 1000), "rb",
         "rollback verl jsonl ppo critic-collapse",
         "verl PPO with critic warm-up (40 steps, actor lr 0), then joint training that works until ~380: score "
         "0.20 -> 0.53, val acc 0.22 -> 0.555. After 380 the critic breaks: vf_loss 0.35 -> 9, explained "
         "variance 0.62 -> -0.4, critic grad norm x10, and the policy follows: val acc 0.40 at 520 (N=1319, sd "
         "0.014; 11 sd). Roll back to ~380.", onset=380),
    Spec("bad-resumed-log-appended-replays-steps-then-decline-verl-console",
         Story(knots((0, .32), (380, .60), (420, .605), (600, .50)),
               {EV: (knots((0, .35), (380, .63), (420, .635), (600, .53)), 1319)}, EV, eval_every=20,
               kl=knots((0, 0), (420, .015), (600, .07)), entropy=knots((0, .5), (420, .35), (600, .12)),
               length=knots((0, 250), (420, 210), (600, 140)), grad_norm=const(.3), lr=const(1e-6)),
         writer(w_verl_console)(1, True, "nohup.out", 200, 243), 1626, (600, 1000), "rb",
         "rollback verl console numpy2 resume replayed-steps entropy-collapse",
         "verl GRPO console log appended across a crash: the job died after step 243 and restarted from "
         "global_step_200, so steps 201-243 appear twice (second copy with fresh noise). That part is benign. "
         "Later, from ~420, entropy collapses 0.35 -> 0.12 and responses shrink 210 -> 140 tokens; GSM8K val acc "
         "peaked at 0.635 (~420) and is 0.53 at 600 (N=1319, sd 0.013; 8 sd). Roll back to ~420.", onset=420),
    Spec("amb-eval-shorter-max-len-truncates-eval-only-openrlhf-tb",
         Story(knots((0, .30), (300, .48), (600, .58), (1200, .64)),
               {"eval_math_pass1": (knots((0, .30), (300, .46), (340, .465), (600, .40)), 500),
                "eval_math_truncated_rate": (knots((0, .01), (300, .03), (600, .30)), 500)}, "eval_math_pass1",
               eval_every=30, kl=knots((0, 0), (600, .03)), length=knots((0, 900), (300, 1800), (600, 2900)),
               trunc=knots((0, .005), (600, .02)), grad_norm=const(.35), lr=const(5e-7)),
         writer(w_tb)(OPENRLHF, "", "eval/", sub="tb/qwen25-math-7b-rpp"), 1627, (600, 1200), "amb",
         "ambiguous tensorboard openrlhf eval-truncation length-growth",
         "OpenRLHF REINFORCE++ trained with 4096 generation tokens but evaluated with 2048. Responses grow "
         "900 -> 2900 tokens; train truncation stays ~1% and train reward keeps rising 0.48 -> 0.58. The eval "
         "truncates instead (eval truncated_rate 0.03 -> 0.30), so eval pass@1 peaks at 0.465 (~340) and falls "
         "to 0.40 by 600 (N=500, sd 0.022; 3 sd). If the 2048 budget is the deployment budget the older model "
         "is better (rollback); if not, the policy is still improving and the eval config is wrong (continue). "
         "Both are defensible; continue is preferred since the model is better at its training budget.",
         onset=340),
    Spec("bad-partial-credit-format-farming-trackio",
         Story(knots((0, .30), (350, .50), (650, .60)),
               {"eval_accuracy": (knots((0, .30), (350, .44), (380, .445), (650, .36)), 500)}, "eval_accuracy",
               eval_every=30, eval_at_0=True, rkind="partial", log_every=5, kl=knots((0, 0), (650, .06)),
               length=knots((0, 500), (380, 480), (650, 230)), grad_norm=const(.3), lr=const(1e-6),
               extra={"rewards/format_partial/mean": (knots((0, .5), (380, .8), (650, .99)), .01, False),
                      "rewards/answer_correct/mean": (knots((0, .25), (380, .40), (650, .33)), .02, False)}),
         writer(w_trackio)(TRL, "grpo-partial"), 1624, (650, 1000), "rb",
         "rollback trackio partial-credit format-hacking",
         "Partial-credit rubric (format items worth half). From step 380 the format items saturate (0.8 -> "
         "0.99) and completions shrink 480 -> 230 tokens while answer correctness turns down; the total reward "
         "still rises 0.50 -> 0.60. Held-out accuracy peaked at 0.445 (~380) and is 0.365 at its last eval, 630 (N=500, sd "
         "0.022; 3.4 sd). Roll back to the peak.", onset=390),
]

CASES = [s.case() for s in SPECS]
STORY = {s.name: s for s in SPECS}


def write_run(case: Case, folder: Path) -> None:
    spec = STORY[case.name]
    rng = np.random.default_rng(case.seed)
    run = spec.story.draws(rng, case.reached)
    run.update(planned=case.planned or case.reached, eval_every=spec.story.eval_every)
    folder.mkdir(parents=True, exist_ok=True)
    case.write(run, folder)
    set_age(folder, spec.story.age_hours)


def check(cases: list[Case]) -> None:
    for c in cases:
        st = STORY[c.name].story
        lv, steps = st.headline_level(), st.headline_steps(c.reached)
        best_s = max(steps, key=lv)
        sd = st.headline_sd(lv(best_s))
        print(f"{c.name}: {c.labels.get('preferred')} accept={c.labels.get('accept')} "
              f"window={c.labels.get('rollback_window')} onset={c.labels.get('onset_step')}")
        print(f"    headline {st.headline}: best {lv(best_s):.3f}@{best_s} last {lv(steps[-1]):.3f}@{steps[-1]} "
              f"sd {sd:.4f} ({(lv(best_s) - lv(steps[-1])) / sd:.1f} sd below best)")
        run = st.draws(np.random.default_rng(c.seed), c.reached)
        ev = run["eval"] if st.headline != TRAIN else [(s, {TRAIN: v["reward"]}) for s, v in run["train"]]
        print("    drawn " + " ".join(f"{s}:{v[st.headline]:.3f}" for s, v in ev[:: max(1, len(ev) // 12)])
              + f" | last {ev[-1][0]}:{ev[-1][1][st.headline]:.3f}")


HEADER = """# Holdout set 16: hand-built runs written by make_holdout16.py, independent of the assessor, its judges and the
# generators of the other holdout sets. Labels: what a careful practitioner should do under DESIGN.md's decision
# contract, read from the noise-free levels of each story. rollback_window is inclusive: from the first logged
# headline step whose level is within one sampling sd of the best level to the newest such step not after
# onset_step. Steps are in each run's own logged units (the epoch-axis run is healthy and has no steps to name).
# Run `.venv/bin/python evals/holdout16/make_holdout16.py` to write runs/ (gitignored); `--check` prints levels.
"""


def main() -> None:
    holdout_kit.main(HERE, "make_holdout16.py", "holdout16.yaml", "h16-", "holdout16", HEADER, CASES, write_run,
                     check)


if __name__ == "__main__":
    main()
