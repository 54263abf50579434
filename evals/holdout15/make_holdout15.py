"""Holdout set 15: hand-labelled RL post-training runs in real on-disk formats, independent of the assessor.

Run from the worktree root:
    .venv/bin/python evals/holdout15/make_holdout15.py           # writes runs/ (gitignored) and holdout15.yaml
    .venv/bin/python evals/holdout15/make_holdout15.py --check   # also prints levels and rollback windows

Each case is a story told as noise-free level curves (piecewise linear in the optimiser step, `knots`) plus a few
discrete events (a resume, a curriculum switch, non-finite steps), drawn through this set's noise model and written
the way the framework writes it. Noise model:
  * verifiable 0/1 rewards: a batch of P prompts, each with its own solve rate drawn from Beta(k*p, k*(1-p)) with
    concentration k = 2.5 around the level p; each prompt's G rollouts are Bernoulli draws. The batch mean, the
    batch std and the share of prompts whose G rollouts all agree come from the same draws; frameworks that log
    every n steps log either the mean of the n batches (TRL) or the current batch (OpenRLHF);
  * continuous rewards (judge / PRM scores): per-sample normal scores, batch mean logged;
  * held-out evals: Binomial(N, p) / N for N problems (several benchmarks drawn independently);
  * grad norm: level * exp(0.25 * N(0, 1)), times 1 + |t(2)| on ~1 step in 30 (a heavy right tail);
  * KL, entropy, lengths, timings, losses: ~4% multiplicative log-normal noise.

Labels follow DESIGN.md ("What the three decisions mean") and are decided from each story's noise-free levels.
A rollback window runs from the first logged headline step whose level is within one sampling sd of the best level
(the sd of one eval for an eval headline) to the newest such step not after onset_step; `--check` prints them.
"""

from __future__ import annotations

import csv
import hashlib
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
)

HERE = Path(__file__).resolve().parent
NOW = time.time()
Level = Callable[[float], float]
TRAIN = "@train"  # headline = the batch train reward, not an eval key


def knots(*pts: tuple[float, float]) -> Level:
    """A noise-free level: straight lines between (step, value) points, flat beyond the ends."""
    xs, ys = zip(*pts, strict=True)
    return lambda s: float(np.interp(s, xs, ys))


def jump(before: Level, after: Level, at: float) -> Level:
    """A level that switches curves at a step (a curriculum stage, a new reward function)."""
    return lambda s: before(s) if s < at else after(s)


# ------------------------------------------------------------------------------------------------------ the stories

@dataclass
class Story:
    """What one run logged, before a framework's writer gives it names and files."""

    levels: dict[str, Level]  # canonical train signals: p or score, kl, entropy, length, trunc, grad_norm, lr, ...
    evals: dict[str, tuple[Level, int]]  # framework eval key -> (level, problems)
    headline: str  # the eval key (or "reward") the labels are read from
    log_every: int = 1
    eval_every: int = 50
    eval_at_zero: bool = False
    prompts: int = 64
    group: int = 8
    score_sd: float = 0.0  # > 0: continuous reward with this per-sample sd (level key "score")
    extra: dict[str, Level] = field(default_factory=dict)  # framework keys logged as they are (light noise)
    nonfinite: dict[int, str] = field(default_factory=dict)  # step -> "nan" | "inf" (loss / grad norm)
    dead_from: int | None = None  # from here on the weights are NaN: loss/grad NaN, reward 0
    step_seconds: float = 60.0
    age_hours: float = 0.05  # how long ago the last line was written
    average_of: str = ""  # log the plain mean of the eval keys under this extra eval key

    def draws(self, rng: np.random.Generator, reached: int) -> dict:
        train, ev = [], []
        wall = NOW - self.age_hours * 3600 - reached * self.step_seconds
        batches: list[dict] = []
        for s in range(1, reached + 1):
            wall += self.step_seconds * math.exp(0.05 * rng.normal())
            batches.append(self._batch(rng, s))
            if s % self.log_every == 0 or s == reached:
                row = {k: float(np.mean([b[k] for b in batches])) for k in batches[0]
                       if k not in ("grad_norm", "lr")}
                row["grad_norm"], row["lr"] = batches[-1]["grad_norm"], batches[-1]["lr"]
                if s in self.nonfinite:
                    row["loss"] = float("nan")
                    row["grad_norm"] = float("inf") if self.nonfinite[s] == "inf" else float("nan")
                train.append((s, row, wall))
                batches = []
        eval_steps = ([0] if self.eval_at_zero else []) + list(range(self.eval_every, reached + 1, self.eval_every))
        for s in eval_steps:
            row = {}
            for key, (lv, n) in self.evals.items():
                p = 0.0 if self.dead_from is not None and s >= self.dead_from else lv(s)
                row[key] = float(rng.binomial(n, min(max(p, 0.0), 1.0)) / n)
            for key, f in self.extra.items():
                if key.startswith("val-aux/"):
                    row[key] = f(s) * math.exp(0.03 * rng.normal())
            if self.average_of:
                row[self.average_of] = float(np.mean(list(row.values())))
            ev.append((s, row))
        return {"train": train, "eval": ev, "wall_end": wall, "wall_start": train[0][2] - self.step_seconds}

    def _batch(self, rng: np.random.Generator, s: int) -> dict:
        lv = {k: f(s) for k, f in self.levels.items()}
        dead = self.dead_from is not None and s >= self.dead_from
        out: dict[str, float] = {}
        if self.score_sd > 0:
            n = self.prompts * self.group
            out["reward"] = lv.get("score", lv.get("p", 0.0)) + self.score_sd / math.sqrt(n) * rng.normal()
            out["reward_std"] = self.score_sd * math.exp(0.05 * rng.normal())
            out["zero_std"] = 0.0
        else:
            p = 0.0 if dead else min(max(lv["p"], 1e-4), 1 - 1e-4)
            k = 2.5
            rates = rng.beta(k * p, k * (1 - p), self.prompts) if 0 < p < 1 else np.full(self.prompts, p)
            wins = rng.binomial(self.group, rates)
            m = float(wins.mean() / self.group)
            out["reward"] = m
            out["reward_std"] = math.sqrt(m * (1 - m))  # std over all P*G binary rewards of the batch
            out["zero_std"] = float(np.mean((wins == 0) | (wins == self.group)))
            out["pct_0"] = float(np.mean(wins == 0) * 100)
            out["pct_1"] = float(np.mean(wins == self.group) * 100)
        for key in ("kl", "entropy", "length", "clipfrac", "step_time"):
            if key in lv:
                out[key] = lv[key] * math.exp(0.04 * rng.normal())
        if "trunc" in lv:
            n = self.prompts * self.group
            out["trunc"] = float(rng.binomial(n, min(max(lv["trunc"], 0.0), 1.0)) / n)
        if "step_time" in out:
            out["gen_time"] = out["step_time"] * min(0.9, 0.62 * math.exp(0.03 * rng.normal()))
        g = lv.get("grad_norm", 0.3) * math.exp(0.25 * rng.normal())
        if rng.random() < 1 / 30:
            g *= 1 + abs(rng.standard_t(2))
        out["grad_norm"] = g
        out["lr"] = lv.get("lr", 1e-6)
        out["loss"] = 0.02 * rng.normal() + lv.get("loss", 0.0)
        for key, f in self.extra.items():
            if not key.startswith("val-aux/"):
                out["x:" + key] = f(s) * math.exp(0.03 * rng.normal())
        if dead:
            out.update(loss=float("nan"), grad_norm=float("nan"), reward_std=0.0, zero_std=1.0)
        return out

    def headline_steps(self, reached: int) -> list[int]:
        if self.headline == TRAIN:
            return list(range(self.log_every, reached + 1, self.log_every))
        return ([0] if self.eval_at_zero else []) + list(range(self.eval_every, reached + 1, self.eval_every))

    def headline_level(self) -> Level:
        if self.headline == TRAIN:
            return self.levels.get("p") or self.levels["score"]
        lv, dead = self.evals[self.headline][0], self.dead_from
        return lv if dead is None else (lambda s: 0.0 if s >= dead else lv(s))

    def headline_sd(self, p: float) -> float:
        if self.headline == TRAIN:  # a 50-step mean of the batch reward
            one = (self.score_sd / math.sqrt(self.prompts * self.group) if self.score_sd
                   else math.sqrt(p * (1 - p) * (1 / (self.prompts * self.group) + 0.28 / self.prompts)))
            return one / math.sqrt(50)
        return math.sqrt(p * (1 - p) / self.evals[self.headline][1])


def window(story: Story, reached: int, onset: int) -> tuple[int, int]:
    """From where the headline first came within one sd of its best to the newest such step before onset."""
    lv, steps = story.headline_level(), list(story.headline_steps(reached))
    before = [s for s in steps if s <= onset]
    best = max(lv(s) for s in before)
    good = [s for s in before if lv(s) >= best - story.headline_sd(best)]
    return good[0], good[-1]


# ------------------------------------------------------------------------------------------------ key vocabularies

TRL = {"reward": "reward", "reward_std": "reward_std", "zero_std": "frac_reward_zero_std", "kl": "kl",
       "entropy": "entropy", "length": "completions/mean_length", "trunc": "completions/clipped_ratio",
       "grad_norm": "grad_norm", "lr": "learning_rate", "loss": "loss", "clipfrac": "clip_ratio/region_mean",
       "step_time": "step_time"}
TRL_OLD = {"reward": "reward", "reward_std": "reward_std", "kl": "kl", "length": "completion_length",
           "grad_norm": "grad_norm", "lr": "learning_rate", "loss": "loss"}
VERL = {"reward": ["critic/score/mean", "critic/rewards/mean"], "kl": "actor/kl_loss", "entropy": "actor/entropy",
        "length": "response_length/mean", "trunc": "response_length/clip_ratio", "grad_norm": "actor/grad_norm",
        "lr": "actor/lr", "loss": "actor/pg_loss", "clipfrac": "actor/pg_clipfrac", "step_time": "timing_s/step",
        "gen_time": "timing_s/gen"}
VERL_V03 = {**VERL, "entropy": "actor/entropy_loss"}
VERL_PPO = {**VERL, "kl": "actor/reward_kl_penalty"}
OPENRLHF = {"reward": "reward", "reward_std": "group_reward_std", "kl": "kl", "entropy": "entropy_loss",
            "length": "response_length", "trunc": "truncated", "grad_norm": "actor_grad_norm", "lr": "actor_lr",
            "loss": "policy_loss", "clipfrac": "ppo_clip_ratio", "step_time": "timing/step_total",
            "gen_time": "timing/generation"}
NEMO = {"reward": "train/reward", "kl": "train/kl_penalty", "entropy": "train/approx_entropy",
        "length": "train/mean_gen_tokens_per_sample", "trunc": "train/truncation_rate",
        "grad_norm": "train/grad_norm", "lr": "train/lr", "loss": "train/loss",
        "pct_0": "train/baseline_reward/pct_0", "pct_1": "train/baseline_reward/pct_1",
        "step_time": "timing/train/total_step_time", "gen_time": "timing/train/generation"}
CUSTOM = {"reward": "reward_mean", "reward_std": "reward_std", "kl": "kl", "entropy": "entropy",
          "length": "response_len", "trunc": "truncation_rate", "grad_norm": "grad_norm", "lr": "lr",
          "loss": "loss"}


def named(row: dict, vocab: dict) -> dict:
    """Canonical draws -> the framework's keys (extras keep their own names, unmapped draws are not logged)."""
    out: dict[str, float] = {}
    for key, value in row.items():
        if key.startswith("x:"):
            out[key[2:]] = value
        elif key in vocab:
            for name in ([vocab[key]] if isinstance(vocab[key], str) else vocab[key]):
                out[name] = value
    if "pct_0" in row and "train/baseline_reward/pct_0" in out:
        out["train/baseline_reward/pct_mixed"] = 100 - row["pct_0"] - row["pct_1"]
    return out


def r(v: float, nd: int = 6) -> float:
    return v if not math.isfinite(v) else round(v, nd)


# --------------------------------------------------------------------------------------------------------- writers

def set_age(folder: Path, age_hours: float) -> None:
    """Every file's mtime at the last write (a crashed run has not been touched for hours)."""
    t = NOW - age_hours * 3600
    for p in folder.rglob("*"):
        os.utime(p, (t, t))


def w_trl_state(run: dict, folder: Path, planned: int, save_every: int, keep: int | None = None,
                vocab: dict = TRL, eval_prefix: str = "eval_", top_level: bool = False,
                logging_steps: int = 10) -> None:
    """TRL GRPO output_dir: checkpoint-N/trainer_state.json (save_total_limit keeps the newest `keep`)."""
    train, ev = run["train"], run["eval"]
    reached = train[-1][0]
    rows: list[tuple[int, int, dict]] = []
    for s, row, _ in train:
        d = {k: r(v) for k, v in named(row, vocab).items()}
        if "loss" in d and math.isfinite(d["loss"]):
            d["loss"] = round(d["loss"], 4)
        rows.append((s, 0, d))
    for s, row in ev:
        extra = {}
        if ACC in row:  # GRPOTrainer logs the total next to its single reward function
            extra = {"eval_reward": r(row[ACC], 4), "eval_reward_std": r(math.sqrt(row[ACC] * (1 - row[ACC])), 4),
                     "eval_loss": 0.0}
        rows.append((s, 1, extra | {eval_prefix + k: r(v, 4) for k, v in row.items()}
                     | {"eval_runtime": 210.4, "eval_samples_per_second": 2.1, "eval_steps_per_second": 0.07}))
    rows.sort(key=lambda t: (t[0], t[1]))
    steps_per_epoch = planned / 3

    def history(upto: int) -> list[dict]:
        return [d | {"epoch": round(s / steps_per_epoch, 4), "step": s} for s, _, d in rows if s <= upto]

    saves = list(range(save_every, reached + 1, save_every))
    for n in saves[-keep:] if keep else saves:
        st = trainer_state(history(n), n, planned, logging_steps, save_every, run["eval_every"],
                           round(n / steps_per_epoch, 4), 3)
        dump_json(folder / f"checkpoint-{n}" / "trainer_state.json", st)
        (folder / f"checkpoint-{n}" / "adapter_config.json").write_text('{"r": 64, "lora_alpha": 128}\n')
    if top_level:
        hist = history(reached)
        if reached >= planned:
            hist.append({"epoch": 3.0, "step": reached, "total_flos": 0.0, "train_loss": 0.0123,
                         "train_runtime": 91234.5, "train_samples_per_second": 0.7, "train_steps_per_second": 0.011})
        dump_json(folder / "trainer_state.json", trainer_state(hist, reached, planned, logging_steps, save_every,
                                                                run["eval_every"], 3.0, 3, reached >= planned))


def eval_wall(run: dict, s: int) -> float:
    """When an eval row was written: just after its train step (the pre-training eval at 0 before step 1)."""
    walls = run.setdefault("_walls", {st: w for st, _, w in run["train"]})
    return walls.get(s, run["wall_start"] if s < run["train"][0][0] else run["wall_end"]) + 30


def tb_events(run: dict, vocab: dict, train_prefix: str, eval_prefix: str, lo: int = 0,
              hi: int | None = None) -> list[tuple[float, int, dict]]:
    hi = hi if hi is not None else 10**9
    out = [(w, s, {train_prefix + k: v for k, v in named(row, vocab).items()})
           for s, row, w in run["train"] if lo <= s <= hi]
    for s, row in run["eval"]:
        if lo <= s <= hi:
            out.append((eval_wall(run, s), s, {eval_prefix + k: v for k, v in row.items()}))
    return sorted(out, key=lambda e: (e[1], e[0]))


def tb_name(wall: float, host: str = "gpu-node-07", pid: int = 48213) -> str:
    return f"events.out.tfevents.{int(wall)}.{host}.{pid}.0"


def w_hf_tb(run: dict, folder: Path, vocab: dict = TRL) -> None:
    """TRL with report_to=tensorboard: rewrite_logs' train/ and eval/ prefixes under runs/<date>_<host>/."""
    ev = tb_events(run, vocab, "train/", "eval/")
    d = time.strftime("%b%d_%H-%M-%S", time.gmtime(ev[0][0]))
    tb_file(folder / "runs" / f"{d}_gpu-node-07" / tb_name(ev[0][0]), ev)


def w_verl_jsonl(run: dict, folder: Path, vocab: dict = VERL, torn: bool = False, project: str = "rl",
                 experiment: str = "exp", ckpt_every: int = 0) -> None:
    """verl's file logger: {"step": N, "data": {...}} per line, NaN -> null (orjson); val keys in the same row."""
    rows: dict[int, dict] = {}
    for s, row in run["eval"]:
        rows.setdefault(s, {}).update(row)
    for s, row, _ in run["train"]:
        rows.setdefault(s, {}).update(named(row, vocab) | {"training/global_step": s, "training/epoch": s // 300})
    path = folder / project / f"{experiment}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps({"step": s, "data": {k: (None if not math.isfinite(v) else r(v)) for k, v in d.items()}},
                        separators=(",", ":")) for s, d in sorted(rows.items())]
    text = "\n".join(lines) + "\n"
    if torn:
        text = text[: -len(lines[-1]) // 2 - 1]
    path.write_text(text)
    write_verl_ckpts(folder, project, experiment, ckpt_every, run["train"][-1][0])


def write_verl_ckpts(folder: Path, project: str, experiment: str, every: int, reached: int) -> None:
    if not every:
        return
    root = folder / "checkpoints" / project / experiment
    for n in range(every, reached + 1, every):
        (root / f"global_step_{n}" / "actor").mkdir(parents=True, exist_ok=True)
        (root / f"global_step_{n}" / "actor" / "huggingface").mkdir(exist_ok=True)
    (root / "latest_checkpointed_iteration.txt").write_text(str(reached - reached % every))


def fmt_np(v: float) -> str:
    return "np.float64(nan)" if math.isnan(v) else f"np.float64({v!r})"


def w_verl_console(run: dict, folder: Path, vocab: dict = VERL, np2: bool = True,
                   segments: list[tuple[int, int]] | None = None, ckpt_every: int = 0) -> None:
    """verl's console logger (stdout captured to a file), Ray / vLLM lines mixed in. `segments`: (from, to) step
    ranges of successive sessions appended to the same log (a resumed run re-logs the steps after its checkpoint)."""
    reached, planned = run["train"][-1][0], run["planned"]
    segments = segments or [(0, reached)]
    ev = dict(run["eval"])
    tr = {s: (row, w) for s, row, w in run["train"]}
    out = []
    pid = 90211
    seen: set[int] = set()
    jitter = np.random.default_rng(reached)
    for i, (a, b) in enumerate(segments):
        pid += 1313 * i
        pre = f"\x1b[36m(TaskRunner pid={pid})\x1b[0m "
        out.append(f"{pre}INFO: Ray cluster resources: {{'GPU': 8.0, 'CPU': 96.0}}")
        if a > 0:
            out.append(f"{pre}Load from checkpoint folder: checkpoints/rl/exp/global_step_{a}")
        if a in ev:
            out.append(pre + f"step:{a} - " + " - ".join(f"{k}:{fmt_np(v) if np2 else f'{v:.3f}'}"
                                                         for k, v in ev[a].items()))
        for s in range(a + 1, b + 1):
            if s not in tr:
                continue
            row, _ = tr[s]
            d = named(row, vocab) | ev.get(s, {})
            if s in seen:  # the resumed launch re-runs this step: a fresh draw of the same level
                d = {k: v * math.exp(0.03 * jitter.normal()) if "score" in k or "val" in k else v
                     for k, v in d.items()}
            seen.add(s)
            vals = " - ".join(f"{k}:{fmt_np(v) if np2 else ('nan' if math.isnan(v) else f'{v:.3f}')}"
                              for k, v in d.items())
            out.append(f"{pre}step:{s} - {vals}")
            if s % 25 == 0:  # verl's tqdm bar (stderr, captured with 2>&1)
                pct, secs = 100 * s // planned, int(s * 50)
                out.append(f"{pre}Training Progress: {pct:3d}%|{'#' * (pct // 10):<10}| {s}/{planned} "
                           f"[{secs // 3600}:{secs // 60 % 60:02d}:{secs % 60:02d}<?, 50.00s/it]")
            if s % 97 == 0:
                out.append(f"{pre}INFO 11-26 14:02:11 [block_pool.py:321] Successfully reset prefix cache")
    if reached >= planned and reached in ev:  # verl's fit() pprints the last validation before it returns
        last = ", ".join(f"'{k}': {fmt_np(v) if np2 else repr(v)}" for k, v in ev[reached].items())
        out.append(pre + repr(f"Final validation metrics: {{{last}}}"))
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "train.log").write_text("\n".join(out) + "\n")
    write_verl_ckpts(folder, "rl", "exp", ckpt_every, reached)


def w_verl_tb(run: dict, folder: Path, vocab: dict = VERL, project: str = "rl", experiment: str = "exp") -> None:
    ev = tb_events(run, vocab, "", "")
    tb_file(folder / "tensorboard_log" / project / experiment / tb_name(ev[0][0], "worker-0", 3321), ev)


def pyrepr(d: dict) -> str:
    return "{" + ", ".join(f"'{k}': {v!r}" for k, v in d.items()) + "}"


def w_openrlhf_console(run: dict, folder: Path, ckpt_every: int = 0) -> None:
    """OpenRLHF: '✨ Global step N: {dict}' per step and an evaluation line with eval_metrics."""
    ev = dict(run["eval"])
    out = ["[2026-11-26 08:01:12,344] [INFO] [real_accelerator.py:222:get_accelerator] Setting ds_accelerator to cuda"]
    for s, row, _ in run["train"]:
        d = {k: r(v) for k, v in named(row, OPENRLHF).items()}
        out.append(f"Episode [1/1]:  {100 * s // max(1, run['planned'])}%|###  | {s}/{run['planned']}")
        out.append(f"✨ Global step {s}: {pyrepr(d | {'global_step': s})}")
        if s in ev:
            em = {f"eval_{k}": r(v, 4) for k, v in ev[s].items()}
            out.append(f"Evaluation completed in 41.27s, global_step {s}, eval_metrics: {pyrepr(em)}")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "train.log").write_text("\n".join(out) + "\n", encoding="utf-8")
    for n in range(ckpt_every, run["train"][-1][0] + 1, ckpt_every) if ckpt_every else []:
        (folder / "ckpt" / f"global_step{n}").mkdir(parents=True, exist_ok=True)


def w_openrlhf_tb(run: dict, folder: Path, name: str = "grpo_qwen") -> None:
    ev = tb_events(run, OPENRLHF, "train/", "eval/")
    ev = [(w, s, {k.replace("eval/", "eval/eval_") if k.startswith("eval/") else k: v for k, v in d.items()})
          for w, s, d in ev]
    tb_file(folder / "logs" / "tensorboard" / name / tb_name(ev[0][0], "openrlhf-head", 777), ev)


def w_nemo_tb(run: dict, folder: Path, resumes: list[int] | None = None) -> None:
    """NeMo-RL: logs/exp_NNN/tensorboard per launch; each resume starts a new exp dir and re-logs from its ckpt."""
    reached = run["train"][-1][0]
    bounds = [0, *(resumes or []), reached]
    for i in range(len(bounds) - 1):
        lo, hi = bounds[i], bounds[i + 1]
        ev = tb_events(run, NEMO, "", "validation/", lo + (1 if i else 0), hi)
        tb_file(folder / "logs" / f"exp_{i + 1:03d}" / "tensorboard" / tb_name(ev[0][0], "nemo-0", 5500 + i), ev)


def w_mlflow_files(run: dict, folder: Path, vocab: dict, eval_prefix: str = "", at_sub: bool = True,
                   slow_keys: tuple[str, ...] = (), slow_every: int = 1) -> None:
    """MLflow file store: one text file per key ('<ms> <value> <step>'), '/' nesting dirs, '@' -> '_at_'."""
    exp, rid = "314159265358979", hashlib.md5(folder.name.encode()).hexdigest()
    base = folder / "mlruns" / exp
    base.mkdir(parents=True, exist_ok=True)
    (base / "meta.yaml").write_text(f"artifact_location: mlflow-artifacts:/{exp}\ncreation_time: 1795000000000\n"
                                    f"experiment_id: '{exp}'\nlast_update_time: 1795000000000\n"
                                    "lifecycle_stage: active\nname: rl-post-training\n")
    rd = base / rid
    series: dict[str, list[str]] = {}
    for s, row, w in run["train"]:
        for k, v in named(row, vocab).items():
            if k in slow_keys and s % slow_every:
                continue
            series.setdefault(k, []).append(f"{int(w * 1000)} {v!r} {s}")
    for s, row in run["eval"]:
        for k, v in row.items():
            key = eval_prefix + (k.replace("@", "_at_") if at_sub else k)
            series.setdefault(key, []).append(f"{int(eval_wall(run, s) * 1000)} {v!r} {s}")
    for k, lines in series.items():
        p = rd / "metrics" / k
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("\n".join(lines) + "\n")
    status = "FINISHED" if run["train"][-1][0] >= run["planned"] else "RUNNING"
    (rd / "meta.yaml").write_text(f"artifact_uri: mlflow-artifacts:/{exp}/{rid}/artifacts\nend_time: null\n"
                                  f"entry_point_name: ''\nexperiment_id: '{exp}'\nlifecycle_stage: active\n"
                                  f"run_id: {rid}\nrun_name: {folder.name[:40]}\nrun_uuid: {rid}\nsource_name: ''\n"
                                  f"source_type: 4\nsource_version: ''\nstart_time: 1795000000000\nstatus: "
                                  f"{ {'FINISHED': 3, 'RUNNING': 1}[status]}\ntags: []\nuser_id: ml\n")
    (rd / "tags").mkdir(exist_ok=True)
    (rd / "tags" / "mlflow.runName").write_text(folder.name[:40])
    (rd / "params").mkdir(exist_ok=True)
    (rd / "params" / "max_steps").write_text(str(run["planned"]))
    (rd / "artifacts").mkdir(exist_ok=True)


MLFLOW_SQL = """
CREATE TABLE experiments (experiment_id INTEGER NOT NULL PRIMARY KEY, name VARCHAR(256) NOT NULL UNIQUE,
  artifact_location VARCHAR(256), lifecycle_stage VARCHAR(32), creation_time BIGINT, last_update_time BIGINT);
CREATE TABLE runs (run_uuid VARCHAR(32) NOT NULL PRIMARY KEY, name VARCHAR(250), source_type VARCHAR(20),
  source_name VARCHAR(500), entry_point_name VARCHAR(50), user_id VARCHAR(256), status VARCHAR(9),
  start_time BIGINT, end_time BIGINT, deleted_time BIGINT, source_version VARCHAR(50), lifecycle_stage VARCHAR(20),
  artifact_uri VARCHAR(200), experiment_id INTEGER);
CREATE TABLE metrics (key VARCHAR(250) NOT NULL, value FLOAT NOT NULL, timestamp BIGINT NOT NULL,
  run_uuid VARCHAR(32) NOT NULL, step BIGINT DEFAULT '0' NOT NULL, is_nan BOOLEAN DEFAULT '0' NOT NULL,
  PRIMARY KEY (key, timestamp, step, run_uuid, value, is_nan));
CREATE TABLE latest_metrics (key VARCHAR(250) NOT NULL, value FLOAT NOT NULL, timestamp BIGINT, step BIGINT NOT NULL,
  is_nan BOOLEAN NOT NULL, run_uuid VARCHAR(32) NOT NULL, PRIMARY KEY (key, run_uuid));
CREATE TABLE params (key VARCHAR(250) NOT NULL, value VARCHAR(8000) NOT NULL, run_uuid VARCHAR(32) NOT NULL,
  PRIMARY KEY (key, run_uuid));
CREATE TABLE tags (key VARCHAR(250) NOT NULL, value VARCHAR(8000), run_uuid VARCHAR(32) NOT NULL,
  PRIMARY KEY (key, run_uuid));
CREATE TABLE alembic_version (version_num VARCHAR(32) NOT NULL PRIMARY KEY);
"""


def w_mlflow_db(run: dict, folder: Path, vocab: dict = VERL) -> None:
    """MLflow SQL store (mlflow.db): verl's MLflow adapter names ('@' -> '_at_'), NaN as is_nan=1."""
    folder.mkdir(parents=True, exist_ok=True)
    con = sqlite3.connect(folder / "mlflow.db")
    con.executescript(MLFLOW_SQL)
    rid = hashlib.md5(folder.name.encode()).hexdigest()
    con.execute("INSERT INTO alembic_version VALUES ('1b5f0d9ad7c1')")
    con.execute("INSERT INTO experiments VALUES (1, 'verl-rl', 'mlflow-artifacts:/1', 'active', 1795e9, 1795e9)")
    finished = run["train"][-1][0] >= run["planned"]
    con.execute("INSERT INTO runs VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (rid, folder.name[:40], "LOCAL", "", "", "ml", "FINISHED" if finished else "RUNNING",
                 int((run["train"][0][2] - 60) * 1000), int(run["wall_end"] * 1000) if finished else None, None,
                 "", "active", f"mlflow-artifacts:/1/{rid}/artifacts", 1))
    rows, latest = [], {}
    for s, row, w in run["train"]:
        for k, v in named(row, vocab).items():
            rows.append((k, v, int(w * 1000), s))
    for s, row in run["eval"]:
        for k, v in row.items():
            rows.append((k.replace("@", "_at_"), v, int(eval_wall(run, s) * 1000), s))
    for k, v, t, s in rows:
        nan = not math.isfinite(v)
        con.execute("INSERT INTO metrics VALUES (?,?,?,?,?,?)", (k, 0.0 if nan else v, t, rid, s, int(nan)))
        latest[k] = (k, 0.0 if nan else v, t, s, int(nan), rid)
    con.executemany("INSERT INTO latest_metrics VALUES (?,?,?,?,?,?)", latest.values())
    con.execute("INSERT INTO params VALUES ('trainer.total_training_steps', ?, ?)", (str(run["planned"]), rid))
    con.execute("INSERT INTO tags VALUES ('mlflow.runName', ?, ?)", (folder.name[:40], rid))
    con.commit()
    con.close()


def w_trackio(run: dict, folder: Path, vocab: dict = TRL, project: str = "dapo-math") -> None:
    """Trackio 0.36 SQLite (one DB per project): one JSON metrics blob per log call, NaN as the string 'NaN'."""
    folder.mkdir(parents=True, exist_ok=True)
    con = sqlite3.connect(folder / f"{project}.db")
    con.executescript("""
      CREATE TABLE metrics (id INTEGER PRIMARY KEY AUTOINCREMENT, timestamp TEXT NOT NULL, run_name TEXT NOT NULL,
        step INTEGER NOT NULL, metrics TEXT NOT NULL, run_id TEXT);
      CREATE TABLE configs (id INTEGER PRIMARY KEY AUTOINCREMENT, run_name TEXT NOT NULL, config TEXT NOT NULL,
        created_at TEXT NOT NULL, run_id TEXT);
      CREATE TABLE system_metrics (id INTEGER PRIMARY KEY AUTOINCREMENT, timestamp TEXT NOT NULL,
        run_name TEXT NOT NULL, metrics TEXT NOT NULL, run_id TEXT);""")
    name, rid = "dapo-qwen3-8b-clip-higher", hashlib.md5(folder.name.encode()).hexdigest()[:12]

    def ts(w: float) -> str:
        return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(w)) + f".{int(w % 1 * 1e6):06d}"

    def enc(v: float) -> float | str:
        return v if math.isfinite(v) else ("NaN" if math.isnan(v) else ("Infinity" if v > 0 else "-Infinity"))

    con.execute("INSERT INTO configs (run_name, config, created_at, run_id) VALUES (?,?,?,?)",
                (name, json.dumps({"max_steps": run["planned"], "loss_type": "dapo", "epsilon_high": 0.28,
                                   "num_generations": 16, "beta": 0.0, "_Username": "ml"}),
                 ts(run["train"][0][2]), rid))
    for s, row, w in run["train"]:
        m = {"train/" + k: enc(r(v)) for k, v in named(row, vocab).items()} | {"train/global_step": s}
        con.execute("INSERT INTO metrics (timestamp, run_name, step, metrics, run_id) VALUES (?,?,?,?,?)",
                    (ts(w), name, s, json.dumps(m), rid))
    for s, row in run["eval"]:
        m = {"eval/" + k: enc(r(v)) for k, v in row.items()} | {"train/global_step": s}
        con.execute("INSERT INTO metrics (timestamp, run_name, step, metrics, run_id) VALUES (?,?,?,?,?)",
                    (ts(eval_wall(run, s)), name, s, json.dumps(m), rid))
    con.commit()
    con.close()


def w_wandb_panels(run: dict, folder: Path, display: str, panels: dict[str, str], step_key: str = "train/global_step",
                   bucket: int = 1) -> None:
    """W&B UI 'Export panel data' CSVs, one per panel: x-axis column, '<run> - <key>' plus __MIN / __MAX."""
    folder.mkdir(parents=True, exist_ok=True)
    series: dict[str, list[tuple[int, float]]] = {}
    for s, row, _ in run["train"]:
        for k, v in named(row, TRL).items():
            series.setdefault("train/" + k, []).append((s, v))
    for s, row in run["eval"]:
        for k, v in row.items():
            series.setdefault("eval/" + k, []).append((s, v))
    for fname, key in panels.items():
        pts = series[key]
        with (folder / fname).open("w", newline="") as fh:
            wr = csv.writer(fh)
            col = f"{display} - {key}"
            wr.writerow([step_key, col, col + "__MIN", col + "__MAX"])
            for i in range(0, len(pts), bucket):
                chunk = pts[i:i + bucket]
                vals = [v for _, v in chunk]
                wr.writerow([chunk[-1][0], r(float(np.mean(vals))), r(min(vals)), r(max(vals))])


def w_custom_csv(run: dict, folder: Path, eval_file: str | None = "eval.csv", crlf: bool = False) -> None:
    """An own training loop's CSV (one row per logged step); eval in its own file, written by a separate job."""
    folder.mkdir(parents=True, exist_ok=True)
    keys = list(named(run["train"][0][1], CUSTOM))
    nl = "\r\n" if crlf else "\n"
    with (folder / "metrics.csv").open("w", newline="") as fh:
        fh.write(",".join(["step", "wall_time", *keys]) + nl)
        for s, row, w in run["train"]:
            d = named(row, CUSTOM)
            fh.write(",".join([str(s), f"{w:.1f}", *(f"{d[k]:.6g}" for k in keys)]) + nl)
    ekeys = list(run["eval"][0][1])
    with (folder / (eval_file or "eval.csv")).open("w", newline="") as fh:
        fh.write(",".join(["step", *ekeys]) + nl)
        for s, row in run["eval"]:
            fh.write(",".join([str(s), *(f"{row[k]:.4f}" for k in ekeys)]) + nl)


def w_custom_jsonl(run: dict, folder: Path) -> None:
    """An own loop writing metrics.jsonl every step and eval_results.jsonl from its eval hook."""
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / "metrics.jsonl").open("w") as fh:
        for s, row, w in run["train"]:
            fh.write(json.dumps({"step": s, "time": round(w, 1)} | {k: r(v) for k, v in named(row, CUSTOM).items()})
                     + "\n")
    with (folder / "eval_results.jsonl").open("w") as fh:
        for s, row in run["eval"]:
            fh.write(json.dumps({"step": s} | {"eval/" + k: v for k, v in row.items()}) + "\n")


# ------------------------------------------------------------------------------------------------------- the table

@dataclass
class Spec:
    """A case before its labels: the story, how long it ran, and the label kind decided for it."""

    name: str
    story: Story
    write: Callable[[dict, Path], None]
    seed: int
    steps: tuple[int, int]
    kind: str  # ok | stop | conv | rb | sor
    onset: int | None
    tags: str
    why: str

    def case(self) -> Case:
        reached = self.steps[0]
        if self.kind == "ok":
            labels = HEALTHY
        elif self.kind == "conv":
            labels = converged()
        elif self.kind == "stop":
            labels = stop(self.onset)
        else:
            assert self.onset is not None
            lo, hi = window(self.story, reached, self.onset)
            labels = (rollback if self.kind == "rb" else stop_or_rollback)(lo, hi, self.onset)
        return Case(self.name, lambda *a: self.story, self.write, self.seed, self.steps, labels, self.tags, self.why)


def W(fn: Callable, **kw) -> Callable[[dict, Path], None]:
    return lambda run, folder: fn(run, folder, **kw)


def flat(v: float) -> Level:
    return lambda s: v


SPECS: list[Spec] = []


def add(*a, **kw) -> None:
    SPECS.append(Spec(*a, **kw))


# --- curriculum: difficulty bucket raised at 400 (train score drops by design) --------------------------------------
CURR_VAL = "val-core/deepscaler_val/acc/mean@4"
add("ok-curriculum-stage2-at-400-train-score-drops-val-core-keeps-rising-verl-jsonl",
    Story(levels={"p": jump(knots((0, .34), (150, .57), (400, .70)), knots((400, .44), (550, .51), (700, .55)), 400),
                  "length": jump(knots((0, 620), (400, 700)), knots((400, 930), (700, 980)), 400),
                  "entropy": knots((0, .62), (700, .48)), "kl": knots((0, .0), (700, .012)),
                  "trunc": jump(flat(.01), flat(.035), 400), "clipfrac": flat(.002), "grad_norm": flat(.21),
                  "lr": flat(1e-6), "step_time": flat(95)},
          evals={CURR_VAL: (knots((0, .31), (200, .40), (400, .455), (700, .51)), 500)},
          headline=CURR_VAL, eval_every=50, eval_at_zero=True, step_seconds=95,
          extra={"curriculum/difficulty_bucket": jump(flat(1), flat(2), 400)}),
    W(w_verl_jsonl, project="deepscaler", experiment="q7b-grpo-curriculum", ckpt_every=100),
    1601, (700, 1200), "ok", None, "verl verl_jsonl grpo curriculum lookalike live val_core",
    """verl 0.6 GRPO with a two-stage difficulty curriculum, file logger, step 700 of 1200. At step 400 the sampler
    moves to the harder bucket (curriculum/difficulty_bucket 1 -> 2), so critic/score/mean drops from ~0.70 to
    ~0.44 in one step and response lengths jump 700 -> 930 tokens: the training reward is now measured on harder
    prompts, not a worse model. It climbs again on stage 2 (0.44 -> ~0.55 by 700). The held-out val-core accuracy
    (500 problems, mean@4, sd ~0.022) never notices the switch: 0.31 at 0, 0.455 at 400, ~0.51 at 700, still rising.
    Entropy eases 0.62 -> 0.48, KL tiny, truncation 3.5%. A learning run with budget left: continue.""")

add("bad-curriculum-stage2-too-hard-train-and-val-core-fall-together-verl-jsonl-torn",
    Story(levels={"p": jump(knots((0, .34), (150, .57), (400, .70)), knots((400, .40), (550, .36), (700, .31)), 400),
                  "length": jump(knots((0, 620), (400, 700)), knots((400, 1000), (550, 1700), (700, 2300)), 400),
                  "entropy": jump(knots((0, .62), (400, .52)), knots((400, .55), (700, .78)), 400),
                  "kl": knots((0, .0), (400, .007), (700, .03)),
                  "trunc": jump(flat(.01), knots((400, .05), (700, .31)), 400), "clipfrac": flat(.002),
                  "grad_norm": jump(flat(.21), knots((400, .25), (700, .5)), 400), "lr": flat(1e-6),
                  "step_time": jump(flat(95), knots((400, 120), (700, 260)), 400)},
          evals={CURR_VAL: (jump(knots((0, .31), (200, .40), (400, .455)), knots((400, .455), (500, .43),
                                                                              (700, .37)), 400), 500)},
          headline=CURR_VAL, eval_every=50, eval_at_zero=True, step_seconds=110,
          extra={"curriculum/difficulty_bucket": jump(flat(1), flat(2), 400)}),
    W(w_verl_jsonl, project="deepscaler", experiment="q7b-grpo-curriculum-b", torn=True, ckpt_every=100),
    1502, (700, 1200), "rb", 400, "verl verl_jsonl grpo curriculum live torn_tail val_core",
    """The same curriculum recipe, but the stage-2 bucket is far too hard for this model. At 400 the train score
    drops 0.70 -> 0.40 (expected) but then keeps falling (~0.31 by 700) instead of recovering; lengths run from 1000
    to ~2300 tokens with 31% truncated, entropy rises 0.55 -> 0.78, grad norm doubles. Unlike a healthy switch the
    held-out val-core accuracy (500 problems, sd ~0.022) turns down with it: 0.455 at 400, ~0.43 at 500, ~0.37 at
    700, four sd below its best. The file logger is still writing (torn last line). The model before the switch is
    better: roll back to the stage-1 weights (global_step_400 is saved) and retune the stage-2 mix.""")

# --- verl PPO with an adaptive KL controller -------------------------------------------------------------------------
GSM = "val-core/openai/gsm8k/acc/mean@1"
add("ok-verl-ppo-adaptive-kl-coef-climbs-6x-kl-held-at-target-tb",
    Story(levels={"p": knots((0, .42), (300, .55), (900, .66)), "kl": knots((0, .0), (150, .019), (900, .021)),
                  "entropy": knots((0, .55), (900, .41)), "length": knots((0, 240), (900, 290)),
                  "clipfrac": flat(.008), "grad_norm": flat(.6), "lr": flat(1e-6), "step_time": flat(40)},
          evals={GSM: (knots((0, .47), (300, .56), (900, .635)), 1319)},
          headline=GSM, eval_every=50, eval_at_zero=True, prompts=256, group=1, step_seconds=40,
          extra={"actor/reward_kl_penalty_coeff": knots((0, .001), (200, .0035), (900, .006)),
                 "critic/vf_loss": knots((0, 2.2), (100, .35), (900, .12)),
                 "critic/vf_explained_var": knots((0, -.3), (150, .35), (900, .58)),
                 "critic/grad_norm": knots((0, 40), (100, 6), (900, 3))}),
    W(w_verl_tb, vocab=VERL_PPO, project="gsm8k-ppo", experiment="q3b-gae-adaptive-kl"),
    1503, (900, 1500), "ok", None, "verl tensorboard ppo gae adaptive_kl lookalike live val_core",
    """verl PPO (GAE critic) on GSM8K with use_kl_in_reward and the adaptive KL controller (target 0.02), raw verl
    keys in TensorBoard, step 900 of 1500. actor/reward_kl_penalty_coeff climbs from 0.001 to ~0.006 (6x): that is
    the controller doing its job, since the KL itself sits at its 0.02 target from step ~150 on. The critic has
    warmed up (vf_loss 2.2 -> 0.12, explained variance -0.3 -> 0.58). Train score 0.42 -> ~0.66 and the full GSM8K
    test (1319 problems, sd ~0.013) 0.47 -> 0.56 at 300 -> ~0.635 at 900, still rising. Continue.""")

# --- crashed runs (nothing written for hours, far from the planned total) -------------------------------------------
ACC = "rewards/accuracy_reward/mean"
add("ok-crashed-5h-ago-at-900-of-2000-still-rising-best-is-last-trl-state",
    Story(levels={"p": knots((0, .29), (300, .40), (900, .52)), "entropy": knots((0, .7), (900, .55)),
                  "length": knots((0, 380), (900, 450)), "trunc": flat(.01), "grad_norm": flat(.12),
                  "lr": flat(1e-6), "step_time": flat(48), "clipfrac": flat(0.0)},
          evals={ACC: (knots((0, .27), (300, .37), (900, .475)), 400)}, headline=ACC,
          log_every=10, eval_every=100, prompts=16, group=8, step_seconds=48, age_hours=5.0),
    W(w_trl_state, planned=2000, save_every=100, keep=3),
    1504, (900, 2000), "ok", None, "trl trl_state grpo crashed lookalike save_total_limit",
    """TRL 0.2x GRPO, checkpoints every 100 with save_total_limit=3 (checkpoint-700/800/900), no top-level state.
    Nothing has been written for ~5 hours and global_step is 900 of max_steps 2000: the job died (node loss), it did
    not finish. Up to the crash it was learning: train accuracy 0.29 -> ~0.52, the eval accuracy reward (400
    problems, sd ~0.025) 0.27 -> 0.37 at 300 -> ~0.475 at 900, still rising, entropy easing 0.70 -> 0.55. The best
    weights are the last ones and more steps are likely to pay: continue (resume from checkpoint-900).""")

add("bad-crashed-4h-ago-eval-peaked-at-600-shortcut-shortens-answers-trl-state",
    Story(levels={"p": knots((0, .30), (300, .45), (600, .55), (1000, .68)),
                  "length": knots((0, 410), (600, 395), (1000, 190)), "entropy": knots((0, .7), (600, .52),
                                                                                       (1000, .30)),
                  "trunc": flat(.008), "grad_norm": flat(.12), "lr": flat(1e-6), "step_time": flat(45),
                  "clipfrac": flat(0.0)},
          evals={ACC: (knots((0, .28), (300, .42), (600, .50), (650, .497), (700, .47), (1000, .41)), 500)}, headline=ACC,
          log_every=10, eval_every=50, prompts=16, group=8, step_seconds=45, age_hours=4.0),
    W(w_trl_state, planned=2000, save_every=100, keep=4),
    1505, (1000, 2000), "rb", 650, "trl trl_state grpo crashed save_total_limit length_collapse",
    """TRL GRPO, checkpoint-700..1000 kept (save_total_limit=4), last write ~4 h ago at step 1000 of 2000: crashed.
    The train accuracy reward kept rising (0.55 at 600 -> ~0.68 at 1000) while completions shrank 395 -> ~190 tokens
    and entropy fell 0.52 -> 0.30: the policy found a short-answer shortcut that the training prompts reward. The
    held-out eval (500 problems, sd ~0.022) peaked ~0.50 around 550-650, was ~0.47 by 700 and ~0.41 by 1000, four
    sd down. So
    resuming from checkpoint-1000 is wrong; a better model is behind: roll back to ~600-650 (checkpoint-600 was
    rotated away; the newest kept one, 700, is already past the turn).""")

# --- mixed-precision trouble: a few non-finite steps vs NaN for good -------------------------------------------------
M5 = "math500_pass1"
add("ok-bf16-four-nonfinite-steps-at-311-and-347-recovered-openrlhf-console",
    Story(levels={"p": knots((0, .30), (300, .44), (620, .53)), "kl": knots((0, 0), (620, .018)),
                  "entropy": knots((0, .8), (620, .64)), "length": knots((0, 520), (620, 610)),
                  "trunc": flat(.02), "clipfrac": flat(.03), "grad_norm": flat(.18), "lr": flat(5e-7),
                  "step_time": flat(70)},
          evals={M5: (knots((0, .30), (300, .40), (620, .47)), 500)}, headline=M5, eval_every=50,
          prompts=32, group=8, step_seconds=70, nonfinite={311: "inf", 312: "nan", 347: "inf", 348: "inf"}),
    W(w_openrlhf_console, ckpt_every=100),
    1506, (620, 1000), "ok", None, "openrlhf console grpo nonfinite lookalike live",
    """OpenRLHF 0.10 GRPO (REINFORCE-style group baseline) in bf16 with fp32 master weights, console log, step 620
    of 1000. Four steps (311, 312, 347, 348) log policy_loss nan and actor_grad_norm inf/nan: the overflow guard
    skipped those updates and the next step is normal again. Nothing else moves at those steps: reward keeps
    climbing 0.30 -> ~0.53, KL slow (0.018), entropy 0.80 -> 0.64, and the held-out MATH-500 pass@1 (500 problems,
    sd ~0.022) goes 0.30 -> 0.40 at 300 -> ~0.47 at 600, still rising. Four skipped steps in 620 are noise: continue.""")

add("bad-nan-for-good-from-step-541-reward-zero-openrlhf-console",
    Story(levels={"p": knots((0, .30), (300, .44), (540, .50)), "kl": knots((0, 0), (540, .016)),
                  "entropy": knots((0, .8), (540, .66)), "length": knots((0, 520), (540, 600)),
                  "trunc": flat(.02), "clipfrac": flat(.03), "grad_norm": flat(.18), "lr": flat(5e-7),
                  "step_time": flat(70)},
          evals={M5: (knots((0, .30), (300, .40), (540, .455)), 500)}, headline=M5, eval_every=50,
          prompts=32, group=8, step_seconds=70, dead_from=541, nonfinite={539: "inf"}),
    W(w_openrlhf_console, ckpt_every=100),
    1507, (700, 1000), "rb", 540, "openrlhf console grpo nonfinite nan_collapse live",
    """Same recipe and format, step 700 of 1000. After an inf grad norm at 539 the weights went NaN at 541 and never
    came back: every step since logs policy_loss nan, actor_grad_norm nan, reward 0.0 and group_reward_std 0, and
    MATH-500 pass@1 reads 0.0 at 550-700. Up to 540 it was a good run (pass@1 0.30 -> ~0.455 at 500-540, sd ~0.022).
    The process is still running and burning GPUs on a dead model. Roll back to the last good weights (global_step500
    is saved) and restart with a lower LR or loss scaling checked.""")

# --- DAPO clip-higher: entropy rises slowly (healthy) vs accelerating (gibberish) -------------------------------------
add("ok-dapo-clip-higher-entropy-creeps-up-0.32-to-0.46-eval-rising-trackio",
    Story(levels={"p": knots((0, .33), (300, .46), (800, .57)), "entropy": knots((0, .32), (800, .46)),
                  "length": knots((0, 700), (800, 1120)), "trunc": knots((0, .01), (800, .04)),
                  "clipfrac": flat(.006), "grad_norm": flat(.15), "lr": flat(1e-6), "step_time": flat(130)},
          evals={"reward": (knots((0, .35), (300, .43), (800, .50)), 500)}, headline="reward",
          log_every=5, eval_every=100, prompts=32, group=16, step_seconds=130,
          extra={"clip_ratio/high_mean": flat(.0052), "clip_ratio/low_mean": flat(.0006)}),
    W(w_trackio, project="dapo-math"),
    1508, (800, 1600), "ok", None, "trl trackio dapo clip_higher entropy_rise lookalike live",
    """TRL GRPO with loss_type=dapo, epsilon_high=0.28, beta 0, logged to a Trackio DB (train/ and eval/ keys),
    step 800 of 1600. Clip-higher lets low-probability tokens rise, so entropy creeps up 0.32 -> ~0.46 over 800 steps
    instead of decaying: that is the intended effect, slow and linear. clip_ratio/high_mean ~0.005, low ~0.0006.
    Train reward 0.33 -> ~0.57, eval reward on 500 held-out problems (sd ~0.022) 0.35 -> 0.43 at 300 -> ~0.50 at 800,
    rising; lengths grow with accuracy (700 -> 1120) and truncation stays at 4%. Continue.""")

add("bad-dapo-entropy-rise-accelerates-after-600-gibberish-eval-falls-trackio",
    Story(levels={"p": knots((0, .33), (300, .46), (600, .53), (700, .50), (900, .34)),
                  "entropy": knots((0, .32), (600, .44), (700, .62), (900, 1.55)),
                  "length": knots((0, 700), (600, 1000), (900, 2600)), "trunc": knots((0, .01), (600, .03),
                                                                                      (900, .38)),
                  "clipfrac": flat(.006), "grad_norm": knots((0, .15), (600, .16), (900, .6)), "lr": flat(1e-6),
                  "step_time": knots((0, 130), (600, 150), (900, 300))},
          evals={"reward": (knots((0, .35), (300, .43), (600, .475), (650, .47), (900, .33)), 500)},
          headline="reward", log_every=5, eval_every=100, prompts=32, group=16, step_seconds=140,
          extra={"clip_ratio/high_mean": knots((0, .0052), (600, .006), (900, .02)),
                 "clip_ratio/low_mean": flat(.0006)}),
    W(w_trackio, project="dapo-math"),
    1509, (900, 1600), "rb", 620, "trl trackio dapo clip_higher entropy_blowup live",
    """Same DAPO recipe and Trackio format, step 900 of 1600. Entropy crept up slowly (0.32 -> 0.44 by 600) like a
    healthy clip-higher run, then accelerated: 0.62 at 700, ~1.55 at 900, with lengths 1000 -> 2600 tokens, 38%
    truncated, clip_ratio/high_mean 0.006 -> 0.02 and grad norm x4 (degenerate, repetitive text). The eval reward
    (500 problems, sd ~0.022) peaked ~0.475 at 600 and is ~0.33 at 900; train reward fell with it. A better model is
    behind: roll back to ~600.""")

# --- NeMo-RL truncation creeping vs eating the score -----------------------------------------------------------------
add("ok-nemo-truncation-creeps-to-15pct-validation-rising-tb",
    Story(levels={"p": knots((0, .36), (400, .50), (1100, .60)), "kl": knots((0, 0), (1100, .004)),
                  "entropy": knots((0, .55), (1100, .47)), "length": knots((0, 1800), (1100, 3300)),
                  "trunc": knots((0, .01), (1100, .15)), "grad_norm": flat(.09), "lr": flat(1e-6),
                  "step_time": knots((0, 160), (1100, 260))},
          evals={"accuracy": (knots((0, .42), (400, .49), (1100, .555)), 500)}, headline="accuracy",
          eval_every=50, eval_at_zero=True, prompts=64, group=16, step_seconds=200,
          extra={"train/token_mult_prob_error": flat(1.012)}),
    W(w_nemo_tb),
    1510, (1100, 2000), "ok", None, "nemo_rl tensorboard grpo truncation_rise lookalike live",
    """NeMo-RL GRPO, max_new_tokens 4096, step 1100 of 2000. Mean generated tokens grow 1800 -> ~3300 as the model
    learns longer chains, so train/truncation_rate creeps from 1% to ~15%. A practitioner watches that, but nothing
    else is wrong: train reward 0.36 -> ~0.60, validation/accuracy (500 problems, sd ~0.022) 0.42 -> 0.49 at 400 ->
    ~0.555 at 1100 and still rising, entropy easing, token_mult_prob_error flat at 1.01. Continue (and plan a longer
    cap at the next restart).""")

add("bad-nemo-truncation-climbs-to-60pct-validation-falls-tb",
    Story(levels={"p": knots((0, .36), (400, .50), (550, .54), (1100, .33)), "kl": knots((0, 0), (1100, .009)),
                  "entropy": knots((0, .55), (550, .50), (1100, .58)),
                  "length": knots((0, 1800), (550, 2900), (1100, 3850)),
                  "trunc": knots((0, .01), (550, .12), (1100, .60)), "grad_norm": flat(.09), "lr": flat(1e-6),
                  "step_time": knots((0, 160), (550, 230), (1100, 310))},
          evals={"accuracy": (knots((0, .42), (400, .50), (550, .53), (600, .528), (1100, .41)), 500)},
          headline="accuracy", eval_every=50, eval_at_zero=True, prompts=64, group=16, step_seconds=220,
          extra={"train/token_mult_prob_error": flat(1.012)}),
    W(w_nemo_tb),
    1511, (1100, 2000), "rb", 560, "nemo_rl tensorboard grpo truncation_cap live",
    """NeMo-RL GRPO, 4096-token cap, step 1100 of 2000. Lengths grew with accuracy to ~550 (truncation 12%) and then
    kept growing without it: mean generated tokens ~3850, train/truncation_rate ~60%, so most answers are cut off
    before the final line and score 0. Train reward falls 0.54 -> ~0.33 and validation/accuracy (500 problems, sd
    ~0.022) from ~0.53 at 550-600 to ~0.41 at 1100, five sd down. A better model is behind: roll back to ~550-600 and
    raise the cap or add an overlong penalty.""")

# --- several benchmarks plus their average ----------------------------------------------------------------------------
B_M, B_A, B_C = "val-core/math500/acc/mean@4", "val-core/aime24/acc/mean@16", "val-core/amc23/acc/mean@8"
add("ok-three-benchmarks-aime-30-problems-wobbles-average-rising-mlflow-db",
    Story(levels={"p": knots((0, .38), (800, .58)), "kl": knots((0, 0), (800, .01)), "entropy": knots((0, .5),
                                                                                                        (800, .42)),
                  "length": knots((0, 2100), (800, 2700)), "trunc": flat(.03), "clipfrac": flat(.002),
                  "grad_norm": flat(.14), "lr": flat(1e-6), "step_time": flat(240)},
          evals={B_M: (knots((0, .52), (800, .64)), 500), B_A: (knots((0, .12), (800, .17)), 30),
                 B_C: (knots((0, .36), (800, .46)), 40)},
          headline=B_M, eval_every=50, eval_at_zero=True, step_seconds=240, average_of="val/benchmark_avg"),
    W(w_mlflow_db),
    1512, (800, 1500), "ok", None, "verl mlflow mlflow_db grpo multi_benchmark lookalike live",
    """verl GRPO logged to an MLflow SQL store (keys with '@' written as '_at_'), step 800 of 1500. Three validation
    sets plus their plain average: MATH-500 (500 problems, sd ~0.022) 0.52 -> ~0.64, steady; AMC23 (40 problems,
    sd ~0.08) 0.36 -> ~0.46; AIME24 (30 problems, sd ~0.07) wobbles between ~0.03 and ~0.30 from one eval to the next
    around a level that creeps 0.12 -> 0.17, with several evals at or below the step-0 value. Those AIME swings are
    binomial noise on 30 problems; the average and the large benchmark rise. Continue.""")

GSMV = "val-core/openai/gsm8k/acc/mean@1"
add("bad-gsm8k-benchmark-collapses-after-500-average-holds-mlflow-db",
    Story(levels={"p": knots((0, .40), (500, .56), (900, .63)), "kl": knots((0, 0), (900, .015)),
                  "entropy": knots((0, .5), (900, .40)), "length": knots((0, 900), (500, 1000), (900, 1500)),
                  "trunc": flat(.02), "clipfrac": flat(.002), "grad_norm": flat(.14), "lr": flat(1e-6),
                  "step_time": flat(200)},
          evals={B_M: (knots((0, .53), (500, .61), (900, .665)), 500),
                 GSMV: (knots((0, .78), (250, .86), (500, .865), (900, .62)), 1319),
                 B_C: (knots((0, .36), (500, .42), (900, .45)), 40)},
          headline=GSMV, eval_every=50, eval_at_zero=True, step_seconds=200, average_of="val/benchmark_avg"),
    W(w_mlflow_db),
    1513, (900, 1500), "rb", 520, "verl mlflow mlflow_db grpo multi_benchmark forgetting live",
    """verl GRPO on competition math, MLflow SQL store, step 900 of 1500, three validation sets and their average.
    MATH-500 keeps rising (0.61 at 500 -> ~0.665) and AMC23 drifts up, so the average barely moves (~0.63 -> ~0.58,
    inside the noise of its small parts). But GSM8K (1319 problems, sd ~0.009) sat at ~0.86 from 250 to 500 and has
    fallen to ~0.62 by 900: the policy dropped the short '####' answer format and now writes long boxed derivations
    that GSM8K's extractor misses. One capability is broken while the average hides it; the model around 500 is
    better. Roll back to ~500 and add GSM8K-format prompts to the mix.""")

# --- very long runs logged every step ---------------------------------------------------------------------------------
add("ok-24k-steps-every-step-slow-log-climb-eval-every-1000-in-own-file-custom-csv",
    Story(levels={"p": lambda s: .34 + .045 * math.log1p(s / 400), "entropy": knots((0, .8), (24000, .52)),
                  "kl": lambda s: .002 * math.log1p(s / 100), "length": knots((0, 300), (24000, 360)),
                  "grad_norm": flat(.35), "lr": flat(3e-7)},
          evals={"accuracy": (lambda s: .40 + .028 * math.log1p(s / 500), 1000)}, headline="accuracy",
          eval_every=1000, prompts=32, group=4, step_seconds=14),
    W(w_custom_csv, eval_file="eval.csv"),
    3214, (24000, 40000), "ok", None, "custom csv every_step long_run eval_file lookalike live",
    """Own GRPO loop on a 1.5B model, one CSV row per step (24,000 rows) with an eval job writing eval.csv every
    1000 steps, step 24k of a planned 40k. Per-step batches are small (32 prompts x 4), so the reward is noisy
    (sd ~0.06 per step) and its climb is log-shaped: 0.34 -> ~0.42 at 2k -> ~0.50 at 14k -> ~0.525 at 24k, which
    looks flat on a linear axis. The eval (1000 problems, sd ~0.016) goes 0.40 -> ~0.47 at 5k -> ~0.495 at 14k ->
    ~0.51 at 24k: about +0.007 per 5k steps, still up. KL tiny, entropy 0.80 -> 0.52 over 24k. Slow but real progress with 40% budget left:
    continue.""")

add("bad-26k-steps-every-step-eval-erodes-after-15k-entropy-drains-custom-csv",
    Story(levels={"p": lambda s: .34 + .045 * math.log1p(s / 400) + (0 if s < 15000 else -.3e-5 * (s - 15000)),
                  "entropy": knots((0, .8), (15000, .6), (26000, .11)),
                  "kl": lambda s: .002 * math.log1p(s / 100) * (1 if s < 15000 else 1 + (s - 15000) / 4000),
                  "length": knots((0, 300), (15000, 335), (26000, 240)), "grad_norm": flat(.35), "lr": flat(3e-7)},
          evals={"accuracy": (lambda s: (.40 + .028 * math.log1p(s / 500)) if s <= 15000 else
                              .40 + .028 * math.log1p(30) - .0062 * (s - 15000) / 1000, 1000)},
          headline="accuracy", eval_every=1000, prompts=32, group=4, step_seconds=14),
    W(w_custom_csv, eval_file="eval.csv", crlf=True),
    1515, (26000, 40000), "rb", 15000, "custom csv every_step long_run eval_file crlf live entropy_collapse",
    """Same own loop and layout (CRLF CSV from a Windows-side logger, eval.csv every 1000), step 26k of 40k. Up to
    15k it climbed like a healthy long run (eval ~0.496 at 15k, 1000 problems, sd ~0.016). Since then entropy
    drains 0.60 -> ~0.11, KL grows 3-4x and lengths shrink 335 -> 240, while the eval erodes ~0.006 per 1000 steps to
    ~0.43 at 26k (four sd below 15k); the per-step train reward is too noisy to show it. A better model is 11k steps
    behind: roll back to ~15k.""")

# --- reward function changed at a resume ------------------------------------------------------------------------------
PANELS = {"train_reward.csv": "train/reward", "eval_accuracy.csv": "eval/accuracy", "train_kl.csv": "train/kl",
          "train_entropy.csv": "train/entropy", "completion_length.csv": "train/completions/mean_length"}
add("ok-reward-v2-with-format-bonus-at-resume-500-scale-jumps-eval-rising-wandb-panels",
    Story(levels={"p": jump(knots((0, .30), (500, .55)), knots((500, .93), (900, 1.02)), 500),
                  "kl": knots((0, 0), (900, .03)), "entropy": knots((0, .6), (900, .5)),
                  "length": knots((0, 420), (900, 470)), "grad_norm": flat(.2), "lr": flat(1e-6)},
          evals={"accuracy": (knots((0, .33), (500, .43), (900, .50)), 500)}, headline="accuracy",
          log_every=10, eval_every=50, prompts=32, group=8, score_sd=.35, step_seconds=60),
    W(w_wandb_panels, display="grpo-q8b-rwd-v2", panels=PANELS),
    1516, (900, 1500), "ok", None, "trl wandb wandb_panel_csv grpo reward_change resume lookalike live",
    """TRL GRPO exported from W&B as one CSV per panel (x-axis train/global_step), step 900 of 1500. The run was
    resumed at 500 with reward v2 = correctness + 0.5 x format bonus, so train/reward jumps from ~0.55 to ~0.93 at
    the resume and continues up to ~1.02: a new scale, not a sudden improvement or a break. The eval accuracy
    (correctness only, 500 problems, sd ~0.022) is the same measure throughout: 0.33 -> 0.43 at 500 -> ~0.50 at 900,
    rising through the resume. KL 0.03, entropy easing. Continue.""")

add("bad-lenient-verifier-swapped-in-at-resume-500-reward-up-eval-down-wandb-panels",
    Story(levels={"p": jump(knots((0, .30), (500, .55)), knots((500, .74), (900, .90)), 500),
                  "kl": knots((0, 0), (500, .02), (900, .07)), "entropy": knots((0, .6), (500, .52), (900, .40)),
                  "length": knots((0, 420), (500, 450), (900, 280)), "grad_norm": flat(.2), "lr": flat(1e-6)},
          evals={"accuracy": (knots((0, .33), (450, .425), (500, .43), (900, .36)), 500)}, headline="accuracy",
          log_every=10, eval_every=50, prompts=32, group=8, score_sd=.4, step_seconds=60),
    W(w_wandb_panels, display="grpo-q8b-verifier-v3", panels=PANELS),
    1517, (900, 1500), "rb", 500, "trl wandb wandb_panel_csv grpo reward_change resume reward_hacking live",
    """Same format, step 900 of 1500. At the resume at 500 the verifier was swapped for a 'faster' one that accepts
    any number anywhere in the last line; train/reward jumps 0.55 -> 0.74 and keeps rising to ~0.90, KL triples and
    completions shrink 450 -> 280 tokens. The held-out accuracy (strict grader, 500 problems, sd ~0.022) was ~0.43 at
    500 and falls to ~0.36 by 900, three sd down. The policy is learning the lenient grader, not the task: roll back
    to the pre-swap weights (~400-500) and restore the strict verifier.""")

# --- verl finished runs, older v0.3 keys ------------------------------------------------------------------------------
OLDV = "val/test_score/openai/gsm8k"
add("stop-finished-1000-of-1000-val-plateau-since-650-best-at-end-verl-console-np2",
    Story(levels={"p": knots((0, .45), (400, .68), (650, .74), (1000, .75)), "kl": knots((0, 0), (1000, .02)),
                  "entropy": knots((0, .5), (650, .36), (1000, .34)), "length": knots((0, 230), (1000, 260)),
                  "clipfrac": flat(.003), "grad_norm": flat(.3), "lr": knots((0, 1e-6), (1000, 1e-6)),
                  "step_time": flat(35)},
          evals={GSM: (knots((0, .52), (400, .71), (650, .752), (1000, .755)), 1319)}, headline=GSM,
          eval_every=50, eval_at_zero=True, step_seconds=35),
    W(w_verl_console, np2=True, ckpt_every=200),
    1518, (1000, 1000), "stop", 650, "verl console np2 grpo finished plateau val_core",
    """verl 0.5 GRPO on GSM8K, console log with NumPy-2 value reprs (np.float64(...)), total_training_steps 1000,
    finished. The GSM8K test score (1319 problems, sd ~0.012) climbed 0.52 -> 0.71 by 400 and has sat at
    ~0.75-0.755 since 650; the last evals are at that level, train score flat ~0.75, entropy settled at 0.34. The
    final weights are as good as any: stop and keep global_step_1000.""")

add("bad-finished-1000-val-test-score-peaked-at-550-slides-verl-console-v03-keys",
    Story(levels={"p": knots((0, .45), (400, .66), (550, .70), (1000, .72)), "kl": knots((0, 0), (550, .02),
                                                                                         (1000, .09)),
                  "entropy": knots((0, .5), (550, .35), (1000, .16)), "length": knots((0, 230), (550, 250),
                                                                                      (1000, 150)),
                  "clipfrac": flat(.003), "grad_norm": flat(.3), "lr": flat(1e-6), "step_time": flat(35)},
          evals={OLDV: (knots((0, .50), (400, .69), (550, .715), (600, .713), (1000, .655)), 1319)},
          headline=OLDV, eval_every=50, eval_at_zero=True, step_seconds=35),
    W(w_verl_console, vocab=VERL_V03, np2=False, ckpt_every=100),
    1519, (1000, 1000), "rb", 600, "verl console v03_keys grpo finished peak_decline",
    """verl 0.3 GRPO (old keys: val/test_score/openai/gsm8k, actor/entropy_loss; plain float console values),
    finished at 1000 of 1000. The test score (1319 problems, sd ~0.0125) peaked ~0.715 around 550-600 and slid to
    ~0.655 at the end, about five sd down, while the train score crept up and entropy fell 0.35 -> 0.16 with answers
    shortening 250 -> 150 tokens and KL x4. For a finished run the question is which weights to keep: the
    global_step_600 checkpoint is better than the final one. Roll back.""")

# --- saturated pass@k reward, learning signal gone --------------------------------------------------------------------
add("stop-pass-at-8-group-reward-saturated-at-0.99-eval-flat-since-350-openrlhf-tb",
    Story(levels={"score": knots((0, .80), (250, .975), (350, .99), (800, .992)),
                  "kl": knots((0, 0), (800, .02)), "entropy": knots((0, .7), (350, .45), (800, .40)),
                  "length": flat(640), "trunc": flat(.02), "clipfrac": flat(.01), "grad_norm": flat(.05),
                  "lr": flat(5e-7), "step_time": flat(80)},
          evals={"math_pass1": (knots((0, .46), (250, .565), (350, .58), (800, .582)), 500)},
          headline="math_pass1", eval_every=50, score_sd=.09, step_seconds=80,
          extra={"group_reward_std": knots((0, .30), (350, .04), (800, .03))}),
    W(w_openrlhf_tb, name="reinforce_pass8_q7b"),
    1520, (800, 1600), "stop", 350, "openrlhf tensorboard pass_at_k saturated no_signal live",
    """OpenRLHF REINFORCE++ with a pass@8-style reward (each sample gets 1 when any of its group's 8 answers is
    right, a set-level reward from a custom reward function), TensorBoard, step 800 of 1600. That reward saturates
    fast: ~0.975 by 250 and ~0.99 since 350, with group_reward_std down from 0.30 to ~0.03, so the advantages carry
    almost nothing. The held-out pass@1 (500 problems, sd ~0.022) rose 0.46 -> 0.58 by 350 and has been flat since.
    No learning signal left and the current weights are as good as any: stop (switch to a pass@1 reward to go on).""")

# --- agent that never learns ------------------------------------------------------------------------------------------
add("stop-tool-agent-success-2pct-flat-700-steps-turns-at-cap-nemo-tb",
    Story(levels={"p": flat(.022), "kl": knots((0, 0), (700, .003)), "entropy": flat(.62),
                  "length": flat(380), "trunc": flat(.0), "grad_norm": flat(.04), "lr": flat(1e-6),
                  "step_time": flat(310)},
          evals={"accuracy": (flat(.025), 200)}, headline="accuracy", eval_every=50, eval_at_zero=True,
          prompts=32, group=8, step_seconds=310,
          extra={"train/avg_turns_per_sample": flat(7.7), "train/max_turns_per_sample": flat(8),
                 "train/mean_env_tokens_per_sample": flat(1450), "train/tool_error_rate": flat(.44)}),
    W(w_nemo_tb),
    1521, (700, 2000), "stop", 200, "nemo_rl tensorboard agent multi_turn never_learns",
    """NeMo-RL multi-turn tool-use GRPO (sandboxed shell tasks), step 700 of 2000. Success stays at ~2% from the
    first step (train/reward 0.022, validation/accuracy ~0.025 on 200 tasks, sd ~0.011); episodes run to the 8-turn
    cap (avg 7.7 turns), 44% of tool calls error, and pct_0 is ~85% (most groups all-fail, no gradient). KL and
    entropy barely move. 700 steps of nothing: the task is out of reach for this model and budget. Stop (and fix the
    tool format or warm up with SFT traces).""")

# --- entropy gone, group std gone, flat (HF keys in MLflow files) -----------------------------------------------------
add("stop-entropy-collapsed-zero-std-reward-flat-0.61-eval-flat-since-350-mlflow-files",
    Story(levels={"p": knots((0, .35), (350, .61), (800, .612)), "kl": knots((0, 0), (350, .05), (800, .07)),
                  "entropy": knots((0, .85), (300, .06), (800, .03)), "length": knots((0, 320), (800, 290)),
                  "trunc": flat(.0), "grad_norm": knots((0, .2), (350, .02), (800, .012)), "lr": flat(1e-6),
                  "clipfrac": flat(0.0), "step_time": flat(30)},
          evals={"reward": (knots((0, .33), (350, .52), (800, .52)), 600)}, headline="reward",
          log_every=10, eval_every=50, prompts=16, group=8, step_seconds=30,
          extra={"frac_reward_zero_std": knots((0, .3), (350, .93), (800, .965))}),
    W(w_mlflow_files, vocab={k: v for k, v in TRL.items() if k != "zero_std"}, eval_prefix="eval_"),
    1522, (800, 2000), "stop", 350, "trl mlflow mlflow_files grpo entropy_collapse no_signal",
    """TRL GRPO with MLflow's HF callback (raw keys, file store), step 800 of 2000. Entropy collapsed 0.85 -> ~0.05
    by 300 and frac_reward_zero_std is ~0.95: nearly every group answers identically, grad norm is ~0.01. Train
    reward has sat at ~0.61 since 350 and the eval reward (600 problems, sd ~0.02) at ~0.52 since 350; it has not
    declined. A collapsed policy with no signal left and nothing lost: stop (raise temperature or add clip-higher to
    restart exploration from these weights).""")

# --- converged near the end -------------------------------------------------------------------------------------------
M5AT = "val-core/math500/acc/mean@4"
add("conv-plateau-since-1300-at-1850-of-2000-cosine-lr-tail-mlflow-files",
    Story(levels={"p": knots((0, .40), (900, .60), (1300, .64), (1850, .645)), "kl": knots((0, 0), (1850, .02)),
                  "entropy": knots((0, .5), (1300, .37), (1850, .35)), "length": flat(900), "trunc": flat(.02),
                  "clipfrac": flat(.002), "grad_norm": flat(.12),
                  "lr": lambda s: 1e-6 * .5 * (1 + math.cos(math.pi * min(s, 2000) / 2000)), "step_time": flat(90)},
          evals={M5AT: (knots((0, .50), (900, .615), (1300, .64), (1850, .642)), 500)}, headline=M5AT,
          eval_every=50, eval_at_zero=True, step_seconds=90),
    W(w_mlflow_files, vocab=VERL, slow_keys=("actor/entropy", "actor/kl_loss", "response_length/mean"),
      slow_every=10),
    1523, (1850, 2000), "conv", None, "verl mlflow mlflow_files grpo converged cosine_lr per_key_intervals live",
    """verl GRPO to an MLflow file store (val keys with '_at_'; entropy, KL and length logged only every 10 steps by a
    slower hook, the rest every step), step 1850 of 2000 on a cosine schedule whose LR is now ~1.4% of peak.
    MATH-500 (500 problems, sd ~0.021) rose 0.50 -> 0.64 by 1300 and has stayed at ~0.64 since; train score flat at
    ~0.645. 150 steps at near-zero LR will not change much: stopping now or letting it finish are both fine.""")

# --- crashed and flat -------------------------------------------------------------------------------------------------
add("stop-crashed-3h-ago-at-950-of-2000-plateau-since-500-hf-tb",
    Story(levels={"p": knots((0, .40), (500, .66), (950, .665)), "kl": knots((0, 0), (950, .025)),
                  "entropy": knots((0, .6), (500, .42), (950, .40)), "length": flat(350), "trunc": flat(.01),
                  "clipfrac": flat(0.0), "grad_norm": flat(.1), "lr": flat(1e-6), "step_time": flat(50)},
          evals={"reward": (knots((0, .43), (500, .61), (950, .612)), 500)}, headline="reward",
          log_every=10, eval_every=50, prompts=16, group=8, step_seconds=50, age_hours=3.0),
    W(w_hf_tb),
    1524, (950, 2000), "stop", 500, "trl tensorboard hf_tb grpo crashed plateau",
    """TRL GRPO reporting to TensorBoard only (train/ and eval/ tags, one event file), last event ~3 h ago at step
    950 of 2000: the job died. It had stopped improving long before: train reward flat at ~0.66 since 500 and the
    eval reward (500 problems, sd ~0.022) at ~0.61 since 500 (0.43 at the start). The last weights are as good as
    any and 450 flat steps say the rest of the budget would not pay: stop rather than resubmit.""")

# --- GSPO: sequence-level clipping, KL drifts, flat -------------------------------------------------------------------
add("stop-gspo-seq-clip-15pct-kl-triples-reward-and-eval-flat-since-400-trl-state",
    Story(levels={"p": knots((0, .42), (400, .71), (1000, .715)), "kl": knots((0, 0), (400, .035), (1000, .11)),
                  "entropy": knots((0, .55), (400, .43), (1000, .40)), "length": flat(510), "trunc": flat(.01),
                  "clipfrac": flat(.15), "grad_norm": flat(.08), "lr": flat(1e-6), "step_time": flat(75)},
          evals={ACC: (knots((0, .40), (400, .56), (1000, .56)), 800)}, headline=ACC,
          log_every=10, eval_every=50, prompts=16, group=8, step_seconds=75),
    W(w_trl_state, planned=1500, save_every=250, top_level=True),
    1525, (1000, 1500), "stop", 400, "trl trl_state gspo kl_drift plateau live",
    """TRL GRPO with importance_sampling_level=sequence (GSPO), beta 0.02, two PPO iterations per batch, step 1000
    of 1500. clip_ratio/region_mean ~0.15 is normal for sequence-level clipping (whole sequences clip), not a sign of
    oversized updates. Reward rose 0.42 -> 0.71 by 400 and has been flat since; the eval accuracy (800 problems, sd
    ~0.018) is flat at ~0.56 since 400. KL keeps drifting (0.035 -> 0.11) without any decline in the eval: drifting,
    nothing more to gain, current weights as good as any. Stop.""")

# --- PRM reward rising while final-answer accuracy falls -------------------------------------------------------------
add("bad-prm-step-score-rises-final-answer-pass1-falls-after-420-openrlhf-tb",
    Story(levels={"score": knots((0, .55), (420, .70), (800, .81)), "kl": knots((0, 0), (420, .02), (800, .07)),
                  "entropy": knots((0, .7), (800, .55)), "length": knots((0, 500), (420, 640), (800, 1400)),
                  "trunc": knots((0, .01), (420, .02), (800, .09)), "clipfrac": flat(.02), "grad_norm": flat(.2),
                  "lr": flat(5e-7), "step_time": knots((0, 90), (800, 170))},
          evals={"math_pass1": (knots((0, .36), (300, .435), (420, .455), (450, .453), (800, .38)), 500)},
          headline="math_pass1", eval_every=50, score_sd=.18, step_seconds=110,
          extra={"group_reward_std": flat(.12), "orm_reward": knots((0, .36), (420, .47), (800, .40))}),
    W(w_openrlhf_tb, name="ppo_prm_q7b"),
    1526, (800, 1500), "rb", 450, "openrlhf tensorboard ppo process_reward reward_hacking live",
    """OpenRLHF PPO with a process reward model (reward = min step score of the PRM), TensorBoard, step 800 of 1500.
    The PRM reward keeps rising (0.55 -> 0.70 at 420 -> ~0.81), but after ~420 it rises by padding: responses grow
    640 -> 1400 tokens of short, safe, PRM-pleasing steps, truncation 2% -> 9%, KL 0.02 -> 0.07. The final-answer
    signals turn: the logged outcome reward (orm_reward) peaks ~0.47 and falls to ~0.40, and held-out pass@1 (500
    problems, sd ~0.022) goes from ~0.455 at 420-450 to ~0.38 at 800. The PRM is being gamed; roll back to ~400-450.""")

# --- NeMo refit mismatch after a resume -------------------------------------------------------------------------------
add("bad-resume-at-600-weight-refit-mismatch-token-prob-error-climbs-validation-falls-nemo-tb",
    Story(levels={"p": knots((0, .38), (600, .62), (650, .58), (950, .44)), "kl": knots((0, 0), (600, .01),
                                                                                        (950, .04)),
                  "entropy": knots((0, .55), (600, .45), (950, .52)), "length": knots((0, 900), (950, 1100)),
                  "trunc": flat(.02), "grad_norm": knots((0, .1), (600, .1), (950, .35)), "lr": flat(1e-6),
                  "step_time": flat(180)},
          evals={"accuracy": (knots((0, .41), (450, .545), (600, .55), (650, .53), (950, .43)), 500)},
          headline="accuracy", eval_every=50, eval_at_zero=True, prompts=64, group=16, step_seconds=180,
          extra={"train/token_mult_prob_error": knots((0, 1.011), (600, 1.012), (650, 1.09), (950, 1.27)),
                 "train/gen_kl_error": knots((0, .0004), (600, .0004), (650, .004), (950, .019))}),
    W(w_nemo_tb, resumes=[600]),
    1527, (950, 2000), "rb", 600, "nemo_rl tensorboard grpo train_infer_mismatch resume live",
    """NeMo-RL GRPO, two launches (logs/exp_001 steps 1-600, exp_002 resumed from the step-600 checkpoint), step 950
    of 2000. After the resume the generation engine is not receiving the refitted weights correctly:
    train/token_mult_prob_error goes 1.012 -> ~1.27 and gen_kl_error 0.0004 -> ~0.02 (the docs call >1-2% broken).
    Off-policy garbage gradients follow: train reward 0.62 -> ~0.44, grad norm x3, and validation/accuracy (500
    problems, sd ~0.022) ~0.55 at 450-600 -> ~0.43 at 950. The pre-resume model is better: roll back to step 600
    (its checkpoint is the resume point) and fix the refit before continuing.""")

# --- appended console log of a twice-resumed verl run (overlapping steps) --------------------------------------------
add("ok-two-resumes-appended-console-overlapping-steps-val-rising-verl-console",
    Story(levels={"p": knots((0, .35), (400, .55), (1000, .66)), "kl": knots((0, 0), (1000, .015)),
                  "entropy": knots((0, .6), (1000, .45)), "length": knots((0, 500), (1000, 640)),
                  "trunc": flat(.01), "clipfrac": flat(.003), "grad_norm": flat(.25), "lr": flat(1e-6),
                  "step_time": flat(50)},
          evals={GSM: (knots((0, .44), (400, .60), (1000, .685)), 1319)}, headline=GSM,
          eval_every=50, eval_at_zero=True, step_seconds=50),
    W(w_verl_console, np2=True, segments=[(0, 430), (400, 790), (700, 1000)], ckpt_every=100),
    1528, (1000, 2000), "ok", None, "verl console np2 grpo resume duplicate_steps lookalike live",
    """verl GRPO on GSM8K, one console log appended by three launches (tee -a): preempted at 430 and resumed from
    global_step_400, preempted at 790 and resumed from 700, so steps 401-430 and 701-790 appear twice and each launch
    re-runs validation at its resume step. The newest copy of each step is the one that counts, and both copies are
    draws of the same curve. GSM8K test (1319 problems, sd ~0.013) 0.44 -> 0.60 at 400 -> ~0.685 at 1000 of 2000,
    still rising; train score 0.35 -> ~0.66, KL 0.015. Continue.""")

# --- finished at a plateau with a last-eval wobble: ambiguous ---------------------------------------------------------
add("ambig-finished-1200-eval-eases-1sd-from-plateau-at-700-custom-jsonl",
    Story(levels={"p": knots((0, .40), (700, .63), (1200, .635)), "kl": knots((0, 0), (700, .03), (1200, .06)),
                  "entropy": knots((0, .6), (700, .42), (1200, .36)), "length": flat(420), "grad_norm": flat(.2),
                  "lr": flat(1e-6)},
          evals={"accuracy": (knots((0, .45), (700, .585), (800, .586), (1200, .569)), 1000)},
          headline="accuracy", eval_every=100, prompts=32, group=8, step_seconds=40),
    W(w_custom_jsonl),
    1529, (1200, 1200), "sor", 800, "custom jsonl eval_file finished drift ambiguous",
    """Own loop writing metrics.jsonl per step and eval_results.jsonl from its eval hook, finished at 1200 of 1200.
    Eval accuracy (1000 problems, sd ~0.0156) rose 0.45 -> ~0.585 by 700-800 and has eased to ~0.569 at the end,
    about one sd, while KL doubled and entropy kept slowly falling. The drift costs at most a point and a half and
    cannot be told from noise: keeping the final weights (stop) is right, and going back to ~700-800 is as good.""")


# --- multi-turn agent that plateaued and eases slightly: ambiguous ---------------------------------------------------
AGENT = "val-core/search_r1_nq_hotpot/reward/mean@1"
add("ambig-multiturn-search-agent-plateau-since-450-val-eases-1sd-turns-creep-verl-console",
    Story(levels={"p": knots((0, .22), (450, .47), (800, .47)), "kl": knots((0, 0), (450, .012), (800, .03)),
                  "entropy": knots((0, .7), (450, .52), (800, .47)), "length": knots((0, 600), (800, 760)),
                  "trunc": flat(.01), "clipfrac": flat(.004), "grad_norm": flat(.3), "lr": flat(1e-6),
                  "step_time": flat(75)},
          evals={AGENT: (knots((0, .24), (450, .445), (500, .447), (800, .432)), 1000)}, headline=AGENT,
          eval_every=50, eval_at_zero=True, step_seconds=75,
          extra={"num_turns/mean": knots((0, 2.1), (450, 3.0), (800, 3.4)),
                 "tool_call_counts/mean": knots((0, 1.1), (450, 2.0), (800, 2.4)),
                 "val-aux/num_turns/mean": knots((0, 2.0), (450, 2.9), (800, 3.3))}),
    W(w_verl_console, np2=True, ckpt_every=50),
    1530, (800, 1500), "sor", 500, "verl console np2 grpo agent multi_turn plateau drift ambiguous live",
    """verl multi-turn GRPO (search-tool agent, Search-R1 style: the policy issues search calls and answers NQ /
    HotpotQA), console log, step 800 of 1500. Exact-match reward on 1000 held-out questions (sd ~0.016) rose 0.24 ->
    ~0.445 by 450-500 and has eased to ~0.432 since, under one sd, while turns per episode creep up 3.0 -> 3.4 and
    tool calls 2.0 -> 2.4 (more searching, no better answers) and KL doubles. No more gain in 300 steps and a loss
    too small to tell from noise: stop is right, going back to ~450-500 (checkpoints every 50) is as good.""")

# ----------------------------------------------------------------------------------------------------------- build

CASES: list[Case] = [s.case() for s in SPECS]
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
        spec = STORY[c.name]
        st = spec.story
        lv, steps = st.headline_level(), st.headline_steps(c.reached)
        best_s = max(steps, key=lv)
        sd = st.headline_sd(lv(best_s))
        print(f"{c.name}: {c.labels.get('preferred')} accept={c.labels.get('accept')} "
              f"window={c.labels.get('rollback_window')} onset={c.labels.get('onset_step')}")
        print(f"    headline {st.headline}: best {lv(best_s):.3f}@{best_s} last {lv(steps[-1]):.3f}@{steps[-1]} "
              f"sd {sd:.4f} ({(lv(best_s) - lv(steps[-1])) / sd:.1f} sd below best)")
        rng = np.random.default_rng(c.seed)
        run = st.draws(rng, c.reached)
        if st.headline == TRAIN:
            tr = run["train"]
            n = max(1, len(tr) // 12)
            print("    train " + " ".join(f"{tr[i][0]}:{np.mean([t[1]['reward'] for t in tr[i:i + n]]):.3f}"
                                          for i in range(0, len(tr), n)))
        else:
            ev = run["eval"]
            print("    eval  " + " ".join(f"{s}:{v[st.headline]:.3f}" for s, v in ev[:: max(1, len(ev) // 14)])
                  + f" | last {ev[-1][0]}:{ev[-1][1][st.headline]:.3f}")


HEADER = """# Holdout set 15: hand-built runs written by make_holdout15.py, independent of the assessor, its judges and the
# generators of the other holdout sets. Labels: what a careful practitioner should do under DESIGN.md's decision
# contract, read from the noise-free levels of each story. rollback_window is inclusive: from the first logged
# headline step whose level is within one sampling sd of the best level to the newest such step not after
# onset_step. Steps are in each run's own logged units.
# Run `.venv/bin/python evals/holdout15/make_holdout15.py` to write runs/ (gitignored); `--check` prints levels.
"""


def main() -> None:
    holdout_kit.main(HERE, "make_holdout15.py", "holdout15.yaml", "h15-", "holdout15", HEADER, CASES, write_run,
                     check)


if __name__ == "__main__":
    main()
