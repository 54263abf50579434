"""Holdout set 31: blind-labelled RL post-training runs, aimed at run folders as users have them on disk.

Run from the worktree root:
    .venv/bin/python evals/holdout31/make_holdout31.py           # writes runs/ (gitignored) and holdout31.yaml
    .venv/bin/python evals/holdout31/make_holdout31.py --check   # also prints levels and rollback windows

Every case is a story told in noise-free levels (piecewise linear in the run's own step) for the train reward, the
held-out evals and the side signals, drawn through this set's noise model and written the way one framework (one
version of it) puts it on disk, inside the folder a user would point the tool at (often the parent of the logs).

Noise model (this set's own):
  * binary train rewards: P prompts per batch, each with a solve rate sigmoid(a + s*z), z ~ N(0, 1), where a is
    calibrated (Gauss-Hermite) so that the mean solve rate equals the level; G rollouts per prompt, Bernoulli.
    The batch mean, batch std, per-group std and the share of all-same groups all come from the same draws.
    Loggers that average over `log_every` steps (TRL/HF) log the mean of those batches; others log one batch;
  * reward-model scores: per-prompt offset N(0, 0.6^2) plus per-sample N(0, 1), times a scale, around the level;
  * held-out evals: Binomial(N, p) / N;
  * grad norm: level * exp(0.22 z), and on ~3% of steps times (1 + Pareto(1.3)) (heavy right tail);
  * other side signals: multiplicative log-normal AR(1) noise (phi 0.6, ~5% sd unless a case says otherwise);
    learning rate exact.

Labels come from each story's noise-free levels (never from a tool), under DESIGN.md's decision contract. The
rollback window runs from the first logged headline step whose level is within one sampling sd of the best level
(sd of one eval for an eval headline, of one logged value for a train headline) to the newest such step not after
onset_step. `--check` prints the levels, the windows and a thinned view of the drawn headline.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import re
import sqlite3
import struct
import sys
import time
import zlib
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
TRAIN = "@train"
Level = Callable[[float], float]


def lin(*pts: tuple[float, float]) -> Level:
    xs, ys = zip(*pts, strict=True)
    return lambda s: float(np.interp(s, xs, ys))


def flat(v: float) -> Level:
    return lambda s: v


# ------------------------------------------------------------------------------------------------ the noise model

_GH_X, _GH_W = np.polynomial.hermite_e.hermegauss(32)
_GH_W = _GH_W / _GH_W.sum()
_CAL: dict[tuple[float, float], float] = {}


def _sig(x):
    return 1.0 / (1.0 + np.exp(-x))


def calib(p: float, spread: float) -> float:
    """The logit offset a with E[sigmoid(a + spread * z)] = p."""
    key = (round(p, 5), spread)
    if key not in _CAL:
        lo, hi = -30.0, 30.0
        for _ in range(60):
            mid = (lo + hi) / 2
            if float((_GH_W * _sig(mid + spread * _GH_X)).sum()) < key[0]:
                lo = mid
            else:
                hi = mid
        _CAL[key] = (lo + hi) / 2
    return _CAL[key]


def binary_batch_sd(p: float, P: int, G: int, spread: float) -> float:
    p = min(max(p, 1e-4), 1 - 1e-4)
    q = _sig(calib(p, spread) + spread * _GH_X)
    eq2 = float((_GH_W * q * q).sum())
    return math.sqrt(max(eq2 - p * p, 0.0) / P + max(p - eq2, 0.0) / (P * G))


@dataclass
class Story:
    reward: Level  # train reward level: mean solve rate (binary) or mean score (score)
    evals: dict[str, tuple[Level, int]] = field(default_factory=dict)  # eval key -> (level, N; 0 = a side value)
    headline: str = TRAIN  # TRAIN or an eval key
    eval_every: int = 0
    eval_at_0: bool = False
    first_step: int = 0  # first logged train step (defaults to log_every)
    rkind: str = "binary"  # binary | score
    P: int = 64
    G: int = 8
    spread: float = 1.4
    rscale: float = 1.0
    plus: tuple[str, ...] = ()  # side signals added to the binary reward to give the logged total
    log_every: int = 1
    avg: bool = True  # the logged value averages the batches since the last log (TRL/HF), or is one batch
    side: dict[str, Level] = field(default_factory=dict)
    noise: dict[str, float] = field(default_factory=dict)  # per-signal sd (log scale; additive for SIGNED)
    nan: dict[str, tuple[int, int]] = field(default_factory=dict)  # signal -> steps [a, b] logged as NaN
    age_min: float = 5.0  # minutes since the newest write
    sps: float = 30.0  # wall seconds per step
    alias: dict[str, str] = field(default_factory=dict)  # logged copy -> source (e.g. eval_reward = the one fn)
    eval_list: list[int] | None = None  # explicit eval steps

    def train_steps(self, reached: int, start: int = 0) -> list[int]:
        first = self.first_step or self.log_every
        return [s for s in range(first, reached + 1, self.log_every) if s > start]

    def eval_steps(self, reached: int, start: int = -1) -> list[int]:
        if not self.evals:
            return []
        if self.eval_list is not None:
            return [s for s in self.eval_list if start < s <= reached]
        first = 0 if self.eval_at_0 else self.eval_every
        return [s for s in range(first, reached + 1, self.eval_every) if s > start]

    def _batch(self, rng: np.random.Generator, p: float) -> dict:
        if self.rkind == "score":
            off = rng.normal(0, 0.6, self.P)
            x = (p + self.rscale * (np.repeat(off, self.G) + rng.normal(0, 1, self.P * self.G))).reshape(self.P,
                                                                                                      self.G)
            return dict(reward=float(x.mean()), reward_std=float(x.std()), group_std=float(x.std(axis=1).mean()),
                        zero_std=0.0, pct0=0.0, pct1=0.0)
        p = min(max(p, 1e-4), 1 - 1e-4)
        q = _sig(calib(p, self.spread) + self.spread * rng.standard_normal(self.P))
        k = rng.binomial(self.G, q)
        r = k / self.G
        same0, same1 = k == 0, k == self.G
        m = float(r.mean())
        return dict(reward=m, reward_std=math.sqrt(m * (1 - m)), group_std=float(np.sqrt(r * (1 - r)).mean()),
                    zero_std=float((same0 | same1).mean()), pct0=float(100 * same0.mean()),
                    pct1=float(100 * same1.mean()))

    def draws(self, rng: np.random.Generator, reached: int, start: int = 0) -> dict:
        ar = {k: rng.normal() for k in self.side}
        train = []
        for s in self.train_steps(reached, start):
            span = range(s - self.log_every + 1, s + 1) if self.avg else [s]
            bs = [self._batch(rng, self.reward(max(j, 0))) for j in span]
            v = {k: float(np.mean([b[k] for b in bs])) for k in bs[0]}
            for k, lvl in self.side.items():
                x = lvl(s)
                if k == "lr":
                    v[k] = x
                elif k == "grad_norm":
                    g = x * math.exp(self.noise.get(k, 0.22) * rng.normal())
                    if rng.random() < 0.03:
                        g *= 1 + rng.pareto(1.3)
                    v[k] = g
                else:
                    ar[k] = 0.6 * ar[k] + 0.8 * rng.normal()
                    sd = self.noise.get(k, 0.05)
                    v[k] = x + sd * ar[k] if k in SIGNED else x * math.exp(sd * ar[k])
            if self.plus:
                v["acc"] = v["reward"]
                v["reward"] = v["reward"] + sum(v[k] for k in self.plus)
                v["reward_std"] = math.sqrt(v["reward_std"] ** 2 + 0.02)
            for k in UNIT & set(v):
                v[k] = min(max(v[k], 0.0), 1.0)
            for k, (a, b) in self.nan.items():
                if a <= s <= b:
                    v[k] = float("nan")
            train.append((s, v))
        ev = []
        for s in self.eval_steps(reached, start if start else -1):
            row = {}
            for k, (lvl, n) in self.evals.items():
                p = lvl(s)
                row[k] = rng.binomial(n, min(max(p, 0.0), 1.0)) / n if n else p * math.exp(0.03 * rng.normal())
            ev.append((s, row))
        for rows in (train, ev):
            for _, v in rows:
                v.update({a: v[b] for a, b in self.alias.items() if b in v})
        return dict(train=train, eval=ev)

    # the headline, its logged steps and its sampling sd
    def level(self) -> Level:
        return self.reward if self.headline == TRAIN else self.evals[self.headline][0]

    def hsteps(self, reached: int) -> list[int]:
        return self.train_steps(reached) if self.headline == TRAIN else self.eval_steps(reached)

    def hsd(self, p: float) -> float:
        if self.headline != TRAIN:
            return math.sqrt(p * (1 - p) / self.evals[self.headline][1])
        k = self.log_every if self.avg else 1
        if self.rkind == "score":
            return self.rscale * math.sqrt(0.36 / self.P + 1 / (self.P * self.G)) / math.sqrt(k)
        return binary_batch_sd(p, self.P, self.G, self.spread) / math.sqrt(k)


UNIT = {"fmt", "clip", "zero_std", "acc", "region", "pg_clipfrac", "clipfrac", "ppo_clip"}
SIGNED = {"pg_loss", "adv_mean", "kl_signed", "nsr", "margins", "chosen", "rejected", "logps_c", "logps_r",
          "loss_signed", "fmt"}


def window(story: Story, reached: int, onset: int) -> tuple[int, int]:
    lv, steps = story.level(), story.hsteps(reached)
    best = max(lv(s) for s in steps)
    sd = story.hsd(best)
    good = [s for s in steps if lv(s) >= best - sd]
    return good[0], max(s for s in good if s <= onset)


# ------------------------------------------------------------------------------------------- shared writing helpers

def g6(x: float) -> float | None:
    return None if x is None else float(f"{x:.6g}")


def seq_times(run: dict, segments: list[tuple[int, int]], gap_s: float = 900.0) -> list[dict[int, float]]:
    """Wall time of every step of every emitted segment (lo, hi], played one after another (a crash and a
    restart between segments cost `gap_s`), shifted so the very last step lands at t_end."""
    sps, t, out = run["sps"], 0.0, []
    for i, (lo, hi) in enumerate(segments):
        if i:
            t += gap_s
        d = {}
        for s in range(lo + 1, hi + 1):
            t += sps
            d[s] = t
        out.append(d)
    shift = run["t_end"] - t
    return [{s: w + shift for s, w in d.items()} for d in out]


def mark(run: dict, path: Path, t: float) -> None:
    run["mtimes"][path] = t


def named(v: dict, vocab: dict) -> dict:
    return {vocab[k]: x for k, x in v.items() if k in vocab}


def stale(run: dict, lo: int, hi: int) -> tuple[dict, dict]:
    """Rows of steps (lo, hi] as they were logged before a crash (replaced after the restart): fresh draws."""
    d = run["redraw"](lo, hi)
    return ({s: v for s, v in d["train"] if s <= hi}, {s: v for s, v in d["eval"] if lo < s <= hi})


def write_text(path: Path, text: str, newline: str = "\n", bom: bool = False) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = text.replace("\n", newline).encode("utf-8")
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + data)
    return path


STATIC_NAMES = {"README.md", "requirements.txt", "LICENSE", "launch.sh", "run_grpo.sh", "notes.md"}


def extras(folder: Path, *what: str) -> None:
    """Unrelated files users keep beside their logs."""
    if "readme" in what:
        write_text(folder / "README.md", "# experiment notes\n\nLaunched from `launch.sh`. See wandb for plots.\n")
    if "req" in what:
        write_text(folder / "requirements.txt", "torch==2.7.1\ntransformers==4.56.2\ntrl==0.23.0\nvllm==0.10.2\n"
                   "deepspeed==0.17.5\nmath-verify==0.8.0\n")
    if "git" in what:
        g = folder / ".git"
        write_text(g / "HEAD", "ref: refs/heads/main\n")
        write_text(g / "config", "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n")
        write_text(g / "refs" / "heads" / "main", "3f9a1c2e5b7d8f0a1b2c3d4e5f60718293a4b5c6\n")
        write_text(g / "description", "Unnamed repository; edit this file 'description' to name the repository.\n")
        (g / "objects" / "3f").mkdir(parents=True, exist_ok=True)
        (g / "objects" / "3f" / "9a1c2e5b7d8f0a1b2c3d4e5f60718293a4b5c6").write_bytes(zlib.compress(b"blob 0\0"))
    if "png" in what:
        png = (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x02\x00\x00\x00\x90wS"
               b"\xde\x00\x00\x00\x0cIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00\x05\x18\xd8N\x00\x00\x00\x00IEND\xaeB`\x82")
        (folder / "plots").mkdir(parents=True, exist_ok=True)
        (folder / "plots" / "reward_curve.png").write_bytes(png)
        (folder / "plots" / "kl_vs_step.png").write_bytes(png)
    if "launch" in what:
        write_text(folder / "launch.sh", "#!/bin/bash\nset -x\nexport VLLM_USE_V1=1\npython -m train \"$@\" "
                   "2>&1 | tee -a train.log\n")


# ------------------------------------------------------------------------------------------------- vocabularies

TRL_GRPO = dict(reward="reward", reward_std="reward_std", zero_std="frac_reward_zero_std", kl="kl",
                entropy="entropy", length="completions/mean_length", clip="completions/clipped_ratio",
                grad_norm="grad_norm", lr="learning_rate", acc="rewards/accuracy_reward/mean",
                fmt="rewards/format_reward/mean", region="clip_ratio/region_mean", step_time="step_time",
                loss_signed="loss")
TRL_015 = dict(reward="reward", reward_std="reward_std", kl="kl", length="completion_length",
               grad_norm="grad_norm", lr="learning_rate", acc="rewards/accuracy_reward",
               fmt="rewards/format_reward", loss_signed="loss")
TRL_PPO = dict(reward="objective/scores", kl="objective/kl", entropy="objective/entropy", nsr="objective/non_score_reward",
               approxkl="policy/approxkl_avg", clipfrac="policy/clipfrac_avg", pg_loss="loss/policy_avg",
               vf_loss="loss/value_avg", ratio="val/ratio", eos="val/num_eos_tokens", lr="lr", eps="eps")
TRL_DPO = dict(reward="rewards/accuracies", margins="rewards/margins", chosen="rewards/chosen",
               rejected="rewards/rejected", logps_c="logps/chosen", logps_r="logps/rejected", loss="loss",
               grad_norm="grad_norm", lr="learning_rate")
VERL = dict(reward="critic/score/mean", kl="actor/kl_loss", entropy="actor/entropy", length="response_length/mean",
            clip="response_length/clip_ratio", grad_norm="actor/grad_norm", lr="actor/lr", pg_loss="actor/pg_loss",
            pg_clipfrac="actor/pg_clipfrac", ppo_kl="actor/ppo_kl", step_time="timing_s/step",
            gen_time="timing_s/gen", ngen="train/num_gen_batches")
OPENRLHF = dict(reward="reward", group_std="group_reward_std", kl="kl", length="response_length",
                clip="truncated", grad_norm="actor_grad_norm", lr="actor_lr", pg_loss="policy_loss",
                ppo_clip="ppo_clip_ratio", ppo_kl="ppo_kl", entropy="entropy_loss")
NEMO = dict(reward="train/reward", kl="train/kl_penalty", entropy="train/approx_entropy",
            length="train/mean_gen_tokens_per_sample", clip="train/truncation_rate", grad_norm="train/grad_norm",
            lr="train/lr", pct0="train/baseline_reward/pct_0", pct1="train/baseline_reward/pct_1",
            tmpe="train/token_mult_prob_error", loss_signed="train/loss", step_time="timing/train/total_step_time")


def hf_tag(key: str) -> str:
    """transformers' rewrite_logs: eval_X -> eval/X, everything else -> train/X."""
    return "eval/" + key[5:] if key.startswith("eval_") else "train/" + key


# ------------------------------------------------------------------------------------------------------ writers

def w_trl(run: dict, folder: Path, vocab: dict = TRL_GRPO, save_every: int = 100, keep: int | None = None,
          tb: str | None = None, finished: bool = False, logging_steps: int = 10, kind: str = "grpo",
          model: str = "adapter", every_row: bool = False) -> None:
    """HF/TRL output_dir: checkpoint-N/trainer_state.json (history up to N), optionally runs/<date>_<host>/ TB
    events (the live record between saves) and, when finished, the top-level trainer_state.json of save_state()."""
    planned, reached = run["planned"], run["reached"]
    spe = run.get("steps_per_epoch") or planned
    rng = np.random.default_rng(run["seed"] + 1)
    rows: list[dict] = []
    for s, v in run["train"]:
        row = {k: g6(x) for k, x in named(v, vocab).items()}
        if kind == "grpo" and "loss" not in row:
            row["loss"] = round(float(0.004 * rng.normal() + 0.001), 4)
        if kind != "ppo":
            row["epoch"] = round(s / spe, 4)
        else:
            row.update(episode=s * 64, epoch=round(s / spe, 4))
        row["step"] = s
        rows.append(row)
    for s, v in run["eval"]:
        row = {k: g6(x) for k, x in v.items()}
        row.update(eval_runtime=round(95 + 4 * rng.random(), 4), eval_samples_per_second=round(5.2 + rng.random(), 3),
                   eval_steps_per_second=0.163, epoch=round(s / spe, 4), step=s)
        rows.append(row)
    rows.sort(key=lambda r: (r["step"], "eval_runtime" in r))
    saves = list(range(save_every, reached + 1, save_every))
    kept: list[int] = []
    for n in saves:
        st = trainer_state([r for r in rows if r["step"] <= n], n, planned, logging_steps, save_every,
                           run["eval_every"] or None, round(n / spe, 4))
        ck = folder / f"checkpoint-{n}"
        dump_json(ck / "trainer_state.json", st)
        if model == "adapter":
            write_text(ck / "adapter_config.json", '{"peft_type": "LORA", "r": 32, "lora_alpha": 64}\n')
            (ck / "adapter_model.safetensors").write_bytes(b"\x08\x00\x00\x00\x00\x00\x00\x00{}      ")
        else:
            write_text(ck / "config.json", '{"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2"}\n')
            (ck / "model.safetensors").write_bytes(b"\x08\x00\x00\x00\x00\x00\x00\x00{}      ")
        (ck / "training_args.bin").write_bytes(b"PK\x03\x04args")
        (ck / "scheduler.pt").write_bytes(b"PK\x03\x04sched")
        kept.append(n)
        if keep and len(kept) > keep:
            old = kept.pop(0)
            for p in sorted((folder / f"checkpoint-{old}").rglob("*"), reverse=True):
                p.unlink()
            (folder / f"checkpoint-{old}").rmdir()
    if finished:
        final = dict(train_runtime=round(reached * run["sps"], 2), train_samples_per_second=0.9,
                     train_steps_per_second=round(1 / run["sps"], 4), total_flos=0.0, train_loss=0.0021,
                     epoch=round(reached / spe, 4), step=reached)
        st = trainer_state([*rows, final], reached, planned, logging_steps, save_every, run["eval_every"] or None,
                           round(reached / spe, 4), training_stop=True)
        dump_json(folder / "trainer_state.json", st)
        write_text(folder / "config.json", '{"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2"}\n')
        write_text(folder / "README.md", "---\nlibrary_name: transformers\ntags:\n- generated_from_trainer\n- trl\n"
                   "- grpo\n---\n\n# Model Card\n\nThis model was trained with GRPO.\n")
    if tb:
        times = seq_times(run, [(-1, reached)])[0]
        ev = []
        for s, v in run["train"]:
            d = {hf_tag(k): x for k, x in named(v, vocab).items()}
            d["train/epoch"] = s / spe
            ev.append((times[s], s, d))
        for s, v in run["eval"]:
            ev.append((times.get(s, times[max(1, s)]) + 20, s, {hf_tag(k): x for k, x in v.items()}))
        ev.sort(key=lambda e: e[0])
        tb_file(folder / "runs" / tb / f"events.out.tfevents.{int(ev[0][0])}.{tb.split('_')[-1]}.48213.0", ev)


def w_tb(run: dict, folder: Path, vocab: dict, sub: str, prefix: str = "train/",
         eval_tag: Callable[[str], str] = lambda k: "eval/" + k, restarts: tuple[tuple[int, int], ...] = (),
         host: str = "gpu-a100-07") -> None:
    """TensorBoard scalars in `sub`; each restart (resume_from, crashed_after) opens a new event file, and the
    steps the crashed process logged after its last checkpoint appear in the old file with their old values."""
    reached = run["reached"]
    bounds = [-1] + [r for r, _ in restarts]
    tops = [c for _, c in restarts] + [reached]
    segs = list(zip(bounds, tops, strict=True))
    times = seq_times(run, segs)
    train, evals = dict(run["train"]), dict(run["eval"])
    for i, (_, hi) in enumerate(segs):
        nxt = restarts[i][0] if i < len(restarts) else hi
        old_t, old_e = stale(run, nxt, hi) if nxt < hi else ({}, {})
        ev = []
        for s, w in times[i].items():
            v = old_t.get(s) if s > nxt else train.get(s)
            if v is not None:
                ev.append((w, s, {prefix + k: x for k, x in named(v, vocab).items()}))
            e = old_e.get(s) if s > nxt else evals.get(s)
            if e is not None:
                ev.append((w + 25, s, {eval_tag(k): x for k, x in e.items()}))
        if i == 0 and 0 in evals:
            ev.insert(0, (times[0][min(times[0])] - 60, 0, {eval_tag(k): x for k, x in evals[0].items()}))
        ev.sort(key=lambda e: e[0])
        path = folder / sub / f"events.out.tfevents.{int(ev[0][0])}.{host}.{31000 + 977 * i}.0"
        tb_file(path, ev, truncate=7 if (i == len(segs) - 1 and run.get("torn")) else 0)
        mark(run, path, ev[-1][0])


ANSI_CYAN, ANSI_GREEN, ANSI_YELLOW, ANSI_RESET = "\x1b[36m", "\x1b[32m", "\x1b[33m", "\x1b[0m"


def verl_val(x: float, np2: bool) -> str:
    if isinstance(x, int):
        return str(x)  # global_step / epoch are python ints in verl's metrics dict
    if np2:
        return f"np.float64({x!r})" if not math.isnan(x) else "np.float64(nan)"
    return "nan" if math.isnan(x) else repr(float(f"{x:.6g}"))


def verl_rows(run: dict, train: dict, evals: dict, kind: str = "binary") -> dict[int, dict]:
    rows: dict[int, dict] = {}
    for s, e in evals.items():
        rows.setdefault(s, {}).update(e)
    for s, v in train.items():
        r = rows.setdefault(s, {})
        r.update({"training/global_step": s, "training/epoch": (s - 1) // max(1, run["planned"] // 10)})
        n = named(v, VERL)
        r.update(n)
        if kind == "binary":
            r["critic/score/max"], r["critic/score/min"] = 1.0, 0.0
        r["critic/rewards/mean"] = n["critic/score/mean"]
        r["critic/advantages/mean"] = 0.0004 * math.sin(s)
        if "response_length/mean" in n:
            r["response_length/max"] = float(min(run.get("max_len", 4096), n["response_length/mean"] * 2.6))
        if "timing_s/gen" in n and "timing_s/step" in n:
            r["perf/throughput"] = 1450.0 * n["timing_s/gen"] / n["timing_s/step"]
    return rows


def w_verl_console(run: dict, folder: Path, project: str, exp: str, name: str = "train.log", np2: bool = True,
                   ansi: bool = True, save_freq: int = 50, nodes: int = 1, hydra: bool = True,
                   finished: bool = False) -> None:
    """verl LocalLogger lines on stdout (tee'd to a file) mixed with Ray / vLLM output, a hydra config beside it
    and checkpoints/<project>/<exp>/global_step_N/ with latest_checkpointed_iteration.txt."""
    reached, planned = run["reached"], run["planned"]
    train, evals = dict(run["train"]), dict(run["eval"])
    rows = verl_rows(run, train, evals)
    pid = 1887211

    def pre(p: int = pid, ip: str = "") -> str:
        tag = f"(TaskRunner pid={p}{ip})"
        return f"{ANSI_CYAN}{tag}{ANSI_RESET} " if ansi else tag + " "

    def info(msg: str) -> str:
        lvl = f"{ANSI_GREEN}INFO{ANSI_RESET}" if ansi else "INFO"
        return f"{pre(1887409)}{lvl} 11-27 {msg}"

    out = ["2026-11-27 06:02:44,118\tINFO worker.py:1879 -- Started a local Ray instance. View the dashboard at "
           "127.0.0.1:8265 ",
           f"{pre()}TaskRunner hostname: h100-node-3, PID: {pid}",
           f"{pre()}Size of train dataloader: {planned // 10}, Size of val dataloader: 1",
           f"{pre()}Total training steps: {planned}",
           info("06:04:10 [llm_engine.py:222] Initializing a V1 LLM engine (v0.10.2) with config: model='Qwen/Qwen3-4B'"),
           f"{pre()}{ANSI_YELLOW if ansi else ''}WARNING{ANSI_RESET if ansi else ''} "
           "torch.distributed.checkpoint: state_dict_type FULL_STATE_DICT is deprecated"]
    for s in sorted(rows):
        body = " - ".join(f"{k}:{verl_val(x, np2)}" for k, x in rows[s].items())
        for nd in range(nodes):
            ip = f", ip=10.0.{nd}.12" if nodes > 1 else ""
            out.append(f"{pre(pid + nd * 13, ip)}step:{s} - {body}")
        if s and s % 10 == 0:
            pct = int(100 * s / planned)
            out.append(f"{pre()}Training Progress: {pct:3d}%|{'#' * (pct // 10):<10}| {s}/{planned} "
                       f"[{s * run['sps'] / 3600:.0f}:00:00<{(planned - s) * run['sps'] / 3600:.0f}:00:00, "
                       f"{run['sps']:.2f}s/it]")
        if s and s % save_freq == 0:
            out.append(f"{pre()}local_global_step_folder: checkpoints/{project}/{exp}/global_step_{s}")
    if finished:
        last = {k: x for k, x in rows[max(s for s in rows if s in evals)].items() if k.startswith("val")}
        out.append(f"{pre()}(\"Final validation metrics: {last}\")")
    write_text(folder / name, "\n".join(out) + "\n")
    ck = folder / "checkpoints" / project / exp
    saves = list(range(save_freq, reached + 1, save_freq))
    for n in saves:
        write_text(ck / f"global_step_{n}" / "actor" / "huggingface" / "config.json", '{"model_type": "qwen3"}\n')
        (ck / f"global_step_{n}" / "actor" / "model_world_size_8_rank_0.pt").write_bytes(b"PK\x03\x04")
        (ck / f"global_step_{n}" / "data.pt").write_bytes(b"PK\x03\x04")
    if saves:
        write_text(ck / "latest_checkpointed_iteration.txt", str(saves[-1]))
        mark(run, ck / "latest_checkpointed_iteration.txt", run["t_end"] - (reached - saves[-1]) * run["sps"])
    if hydra:
        write_text(folder / ".hydra" / "config.yaml",
                   f"data:\n  train_batch_size: 512\n  max_prompt_length: 1024\n  max_response_length: "
                   f"{run.get('max_len', 4096)}\nactor_rollout_ref:\n  model:\n    path: Qwen/Qwen3-4B\n  actor:\n"
                   f"    optim:\n      lr: 1.0e-06\n    use_kl_loss: true\n    kl_loss_coef: 0.001\n  rollout:\n"
                   f"    name: vllm\n    n: 8\nalgorithm:\n  adv_estimator: grpo\ntrainer:\n  project_name: {project}\n"
                   f"  experiment_name: {exp}\n  logger:\n  - console\n  - wandb\n  total_epochs: 10\n"
                   f"  total_training_steps: null\n  save_freq: {save_freq}\n  test_freq: {run['eval_every']}\n"
                   f"  val_before_train: true\n  default_local_dir: checkpoints/{project}/{exp}\n")
        write_text(folder / ".hydra" / "overrides.yaml", f"- trainer.project_name={project}\n"
                   f"- trainer.experiment_name={exp}\n- trainer.save_freq={save_freq}\n")
        write_text(folder / ".hydra" / "hydra.yaml", "hydra:\n  run:\n    dir: .\n  job:\n    name: main_ppo\n")


def w_verl_jsonl(run: dict, folder: Path, rel: str, torn: bool = False, relaunch: tuple[int, int] | None = None,
                 rel2: str = "") -> None:
    """verl FileLogger JSONL ({"step": N, "data": {...}}, NaN as null). With `relaunch` (resume_from, crashed_at),
    the first launch wrote `rel` up to the crash and the relaunch (a new VERL_FILE_LOGGER_PATH) wrote `rel2`
    from its validation-before-train row at resume_from onward."""
    train, evals = dict(run["train"]), dict(run["eval"])

    def dump(rows: dict[int, dict], path: Path, tear: bool) -> None:
        lines = [json.dumps({"step": s, "data": {k: (None if isinstance(x, float) and not math.isfinite(x) else x)
                                                 for k, x in rows[s].items()}}, separators=(",", ":"))
                 for s in sorted(rows)]
        text = "\n".join(lines) + "\n"
        if tear:
            text = text[: len(text) - len(lines[-1]) // 2 - 1]
        write_text(path, text)

    if not relaunch:
        dump(verl_rows(run, train, evals), folder / rel, torn)
        return
    r, c = relaunch
    old_t, old_e = stale(run, r, c)
    first = verl_rows(run, {s: (old_t[s] if s > r else v) for s, v in train.items() if s <= c},
                      {s: (old_e[s] if s > r else v) for s, v in evals.items() if s <= c})
    second = verl_rows(run, {s: v for s, v in train.items() if s > r}, {s: v for s, v in evals.items() if s >= r})
    dump(first, folder / rel, False)
    dump(second, folder / rel2, torn)
    t = seq_times(run, [(-1, c), (r, run["reached"])])
    mark(run, folder / rel, t[0][c])


def w_openrlhf_console(run: dict, folder: Path, name: str = "train_ppo_ray.log", eval_ds: str = "math500") -> None:
    """OpenRLHF driver output: '✨ Global step N: {dict}' status lines and 'Evaluation completed' lines."""
    train, evals = dict(run["train"]), dict(run["eval"])
    times = seq_times(run, [(-1, run["reached"])])[0]
    hm = lambda s, off=0: time.strftime("%m-%d %H:%M:%S", time.localtime(times.get(s, times[1]) + off))  # noqa
    out = ["INFO 11-27 05:40:02 [__init__.py:244] Automatically detected platform cuda.",
           f"Namespace(pretrain='Qwen/Qwen2.5-Math-7B', advantage_estimator='group_norm', n_samples_per_prompt=8, "
           f"rollout_batch_size=128, logging_steps=1, eval_steps={run['eval_every']}, save_steps=100, "
           f"num_episodes=1, max_samples={run['planned'] * 128}, init_kl_coef=0.001, actor_learning_rate=5e-07)"]
    for s in sorted(set(train) | set(evals)):
        if s in train:
            d = {k: float(f"{x:.6g}") for k, x in named(train[s], OPENRLHF).items()}
            out.append(f"(PPOTrainer pid=88213) INFO {hm(s)} [ppo_trainer.py:402] ✨ Global step "
                       f"{s}: {d!r}")
            if s % 10 == 0:
                out.append(f"(PPOTrainer pid=88213) Train step of episode 0: {100 * s // run['planned']:3d}%|"
                           f"{'█' * (10 * s // run['planned']):<10}| {s}/{run['planned']} [..., {run['sps']:.1f}s/it]")
        if s in evals:
            e = {("eval_" + k if not k.startswith("eval_") else k): float(f"{x:.6g}") for k, x in evals[s].items()}
            out.append(f"(PPOTrainer pid=88213) INFO {hm(s, 212)} [ppo_trainer.py:527] 📊 Evaluation "
                       f"completed in 212.31 seconds, global_step {s}, eval_metrics: {e!r}")
    write_text(folder / name, "\n".join(out) + "\n")


def _wb_chunks(payloads: list[bytes], torn: bool) -> bytes:
    """W&B datastore framing: 7-byte file header, then LevelDB-log chunks in 32 KiB blocks."""
    block, buf = 32768, bytearray(b":W&B" + struct.pack("<HB", 0xBEE1, 0))
    for data in payloads:
        first = True
        while True:
            room = block - len(buf) % block
            if room < 7:
                buf += b"\x00" * room
                room = block
            n = min(len(data), room - 7)
            part, data = data[:n], data[n:]
            typ = (1 if first else 4) if not data else (2 if first else 3)
            crc = zlib.crc32(part, zlib.crc32(bytes([typ]))) & 0xFFFFFFFF
            buf += struct.pack("<IHB", crc, len(part), typ) + part
            first = False
            if not data:
                break
    return bytes(buf[:-23]) if torn else bytes(buf)


def w_wandb_dir(run: dict, folder: Path, vocab: dict = TRL_GRPO, rid: str = "k3j9x2ab", project: str = "grpo",
                finished: bool = False, torn: bool = True, config: dict | None = None) -> None:
    """A W&B local run directory (as written by TRL's W&B callback): run-<id>.wandb transaction log, files/ with
    config.yaml, output.log (the console), wandb-summary.json, wandb-metadata.json, requirements.txt."""
    from wandb.proto import wandb_internal_pb2 as pb

    reached, planned = run["reached"], run["planned"]
    t0 = run["t_end"] - reached * run["sps"]
    date = time.strftime("%Y%m%d_%H%M%S", time.gmtime(t0))
    rd = folder / "wandb" / f"run-{date}-{rid}"
    cfg = dict(max_steps=planned, logging_steps=run["log_every"], eval_steps=run["eval_every"], save_steps=200,
               learning_rate=1e-6, num_generations=8, beta=0.04, output_dir="outputs/qwen-grpo", report_to=["wandb"])
    cfg.update(config or {})
    recs: list = []
    n = 0

    def rec() -> pb.Record:
        nonlocal n
        n += 1
        r = pb.Record()
        r.num = n
        recs.append(r)
        return r

    h = rec()
    h.header.SetInParent()
    r = rec()
    r.run.run_id, r.run.project, r.run.display_name = rid, project, "qwen2.5-7b-grpo-math"
    r.run.start_time.seconds = int(t0)
    for k, v in cfg.items():
        it = r.run.config.update.add()
        it.key, it.value_json = k, json.dumps(v)
    times = seq_times(run, [(-1, reached)])[0]
    step_n = 0
    summary: dict = {}
    rows = [(s, 0, {hf_tag(k): x for k, x in named(v, vocab).items()}) for s, v in run["train"]]
    rows += [(s, 1, {hf_tag(k): x for k, x in v.items()}) for s, v in run["eval"]]
    console = []
    ordered = sorted(rows, key=lambda t: (t[0], t[1]))
    for i, (s, order, d) in enumerate(ordered):
        d = dict(d)
        d["train/global_step"] = s
        d.update(_step=step_n, _runtime=times[s] - t0, _timestamp=times[s])
        r = rec()
        for k, x in d.items():
            it = r.history.item.add()
            it.key, it.value_json = k, json.dumps(x)
        r.history.step.num = step_n
        step_n += 1  # noqa: SIM113
        if not (torn and not finished and i == len(ordered) - 1):
            summary.update(d)  # the summary file is flushed after the record that is still being written
        raw = {(k[6:] if k.startswith("train/") else "eval_" + k[5:]): round(x, 4) if k.endswith("loss") else x
               for k, x in d.items() if k.startswith(("train/", "eval/")) and k != "train/global_step"}
        console.append(f"{raw!r}")
        if order == 0 and s % 50 == 0:
            console.append(f"{100 * s // planned:3d}%|{'█' * (10 * s // planned):<10}| {s}/{planned} "
                           f"[{s * run['sps'] / 3600:.0f}:{(s * run['sps'] % 3600) / 60:02.0f}:00<?, "
                           f"{run['sps']:.2f}s/it]")
    if finished:
        r = rec()
        r.exit.exit_code = 0
        r.exit.runtime = int(reached * run["sps"])
    b = _wb_chunks([x.SerializeToString() for x in recs], torn and not finished)
    (rd / "files").mkdir(parents=True, exist_ok=True)
    (rd / "logs").mkdir()
    (rd / f"run-{rid}.wandb").write_bytes(b)
    summary["_wandb"] = {"runtime": int(reached * run["sps"])}
    write_text(rd / "files" / "wandb-summary.json", json.dumps(summary))
    write_text(rd / "files" / "config.yaml", "_wandb:\n  value:\n    cli_version: 0.21.4\n    m: []\n"
               "    python_version: 3.11.13\n    t:\n      \"1\": [1, 11, 41, 49, 51, 55, 71, 84, 95, 98]\n"
               + "".join(f"{k}:\n  value: {json.dumps(v)}\n" for k, v in cfg.items()))
    write_text(rd / "files" / "output.log", "\n".join(console) + "\n")
    write_text(rd / "files" / "wandb-metadata.json", json.dumps(
        {"os": "Linux-5.15.0-119-generic-x86_64-with-glibc2.35", "python": "CPython 3.11.13", "program":
         "train_grpo.py", "startedAt": time.strftime("%Y-%m-%dT%H:%M:%S.000000Z", time.gmtime(t0)),
         "gpu": "NVIDIA H100 80GB HBM3", "gpu_count": 8}))
    write_text(rd / "files" / "requirements.txt", "trl==0.19.1\ntransformers==4.53.2\nwandb==0.21.4\n")
    write_text(rd / "logs" / "debug.log", "2026-11-27 06:00:01,004 INFO    MainThread:71 [wandb_init.py:init():871] "
               "starting backend\n")
    mark(run, rd / "files" / "config.yaml", t0)
    mark(run, rd / "files" / "wandb-metadata.json", t0)
    mark(run, rd / "files" / "requirements.txt", t0)
    mark(run, rd / "logs" / "debug.log", t0)
    os.symlink(rd.name, folder / "wandb" / "latest-run")
    os.symlink(f"{rd.name}/logs/debug.log", folder / "wandb" / "debug.log")


def w_wandb_csv(run: dict, folder: Path, panels: dict[str, str], display: str, xkey: str = "train/global_step",
                vocab: dict = TRL_GRPO) -> None:
    """W&B UI 'Export panel data' CSVs, one per panel: x column, then '<run> - <metric>' with __MIN / __MAX."""
    for i, (metric, fname) in enumerate(panels.items()):
        if metric.startswith("eval/"):
            pts = [(s, v[metric.replace("eval/", "eval_", 1)]) for s, v in run["eval"]]
        else:
            inv = {hf_tag(b): a for a, b in vocab.items()}
            pts = [(s, v[inv[metric]]) for s, v in run["train"]]
        col = f"{display} - {metric}"
        lines = [",".join(f'"{c}"' for c in (xkey, col, col + "__MIN", col + "__MAX"))]
        for s, x in pts:
            lines.append(f"{s},{x!r},{x!r},{x!r}")
        p = write_text(folder / fname, "\n".join(lines) + "\n")
        mark(run, p, run["t_end"] + 60 * i)


def w_mlflow_files(run: dict, folder: Path, keys: dict[str, tuple[str, int]], run_name: str, params: dict,
                   finished: bool = False, eval_keys: dict[str, str] | None = None) -> None:
    """MLflow file store (./mlruns): metrics/<key> text files ('<ms> <value> <step>'), '/' keys nested.
    keys: canonical -> (mlflow key, log interval)."""
    exp_id, rid = "684251379112024477", "e41c8a0fb2d94a7c9c1a65b3f0d7e2aa"
    ed = folder / "mlruns" / exp_id
    rd = ed / rid
    t0 = run["t_end"] - run["reached"] * run["sps"]
    write_text(folder / "mlruns" / "0" / "meta.yaml", "artifact_location: mlruns/0\nexperiment_id: '0'\n"
               "lifecycle_stage: active\nname: Default\n")
    write_text(ed / "meta.yaml", f"artifact_location: mlruns/{exp_id}\ncreation_time: {int(t0 * 1000) - 86400000}\n"
               f"experiment_id: '{exp_id}'\nlast_update_time: {int(t0 * 1000)}\nlifecycle_stage: active\nname: rl-math\n")
    end = f"{int(run['t_end'] * 1000)}" if finished else "null"
    write_text(rd / "meta.yaml", f"artifact_uri: mlruns/{exp_id}/{rid}/artifacts\nend_time: {end}\n"
               f"entry_point_name: ''\nexperiment_id: '{exp_id}'\nlifecycle_stage: active\nrun_id: {rid}\n"
               f"run_name: {run_name}\nrun_uuid: {rid}\nsource_name: ''\nsource_type: 4\nsource_version: ''\n"
               f"start_time: {int(t0 * 1000)}\nstatus: {3 if finished else 1}\ntags: []\nuser_id: ml\n")
    for k, v in params.items():
        write_text(rd / "params" / k, str(v))
    write_text(rd / "tags" / "mlflow.runName", run_name)
    write_text(rd / "tags" / "mlflow.user", "ml")
    write_text(rd / "tags" / "mlflow.source.name", "train_rl.py")
    (rd / "artifacts").mkdir(parents=True, exist_ok=True)
    times = seq_times(run, [(-1, run["reached"])])[0]
    lines: dict[str, list[str]] = {}
    for s, v in run["train"]:
        for canon, (key, every) in keys.items():
            if canon in v and s % every == 0:
                x = v[canon]
                lines.setdefault(key, []).append(f"{int(times[s] * 1000)} {x!r} {s}")
    for s, e in run["eval"]:
        for k, x in e.items():
            key = (eval_keys or {}).get(k, k)
            lines.setdefault(key, []).append(f"{int(times.get(s, times[1]) * 1000) + 31000} {x!r} {s}")
    for key, ls in lines.items():
        write_text(rd / "metrics" / key, "\n".join(ls) + "\n")
    for p in (ed / "meta.yaml", folder / "mlruns" / "0" / "meta.yaml"):
        mark(run, p, t0)


def w_mlflow_db(run: dict, folder: Path, vocab: dict, run_name: str, params: dict) -> None:
    """MLflow SQL store (sqlite:///mlflow.db) as the HF MLflow callback fills it: raw Trainer keys."""
    path = folder / "mlflow.db"
    db = sqlite3.connect(path)
    db.executescript("""
    CREATE TABLE experiments (experiment_id INTEGER NOT NULL PRIMARY KEY, name VARCHAR(256) NOT NULL UNIQUE,
      artifact_location VARCHAR(256), lifecycle_stage VARCHAR(32), creation_time BIGINT, last_update_time BIGINT);
    CREATE TABLE runs (run_uuid VARCHAR(32) NOT NULL PRIMARY KEY, name VARCHAR(250), source_type VARCHAR(20),
      source_name VARCHAR(500), entry_point_name VARCHAR(50), user_id VARCHAR(256), status VARCHAR(9),
      start_time BIGINT, end_time BIGINT, deleted_time BIGINT, source_version VARCHAR(50),
      lifecycle_stage VARCHAR(20), artifact_uri VARCHAR(200), experiment_id INTEGER);
    CREATE TABLE metrics (key VARCHAR(250) NOT NULL, value FLOAT NOT NULL, timestamp BIGINT NOT NULL,
      run_uuid VARCHAR(32) NOT NULL, step BIGINT DEFAULT '0' NOT NULL, is_nan BOOLEAN DEFAULT '0' NOT NULL,
      PRIMARY KEY (key, timestamp, step, run_uuid, value, is_nan));
    CREATE TABLE latest_metrics (key VARCHAR(250) NOT NULL, value FLOAT NOT NULL, timestamp BIGINT, step BIGINT
      NOT NULL, is_nan BOOLEAN NOT NULL, run_uuid VARCHAR(32) NOT NULL, PRIMARY KEY (key, run_uuid));
    CREATE TABLE params (key VARCHAR(250) NOT NULL, value VARCHAR(8000) NOT NULL, run_uuid VARCHAR(32) NOT NULL,
      PRIMARY KEY (key, run_uuid));
    CREATE TABLE tags (key VARCHAR(250) NOT NULL, value VARCHAR(8000), run_uuid VARCHAR(32) NOT NULL,
      PRIMARY KEY (key, run_uuid));
    CREATE TABLE alembic_version (version_num VARCHAR(32) NOT NULL PRIMARY KEY);
    INSERT INTO alembic_version VALUES ('1b5f0d9ad7c1');
    """)
    rid = "0d6b3a9c4e1f47a2b8c5d7e9f1a3b5c7"
    t0 = run["t_end"] - run["reached"] * run["sps"]
    db.execute("INSERT INTO experiments VALUES (1, 'dpo-helpsteer', 'mlflow-artifacts:/1', 'active', ?, ?)",
               (int(t0 * 1000), int(t0 * 1000)))
    db.execute("INSERT INTO runs VALUES (?, ?, 'UNKNOWN', '', '', 'ml', 'RUNNING', ?, NULL, NULL, '', 'active', ?, 1)",
               (rid, run_name, int(t0 * 1000), f"mlflow-artifacts:/1/{rid}/artifacts"))
    for k, v in params.items():
        db.execute("INSERT INTO params VALUES (?, ?, ?)", (k, str(v), rid))
    db.execute("INSERT INTO tags VALUES ('mlflow.runName', ?, ?)", (run_name, rid))
    times = seq_times(run, [(-1, run["reached"])])[0]
    latest: dict[str, tuple] = {}
    rows = [(s, named(v, vocab), 0) for s, v in run["train"]] + [(s, e, 30000) for s, e in run["eval"]]
    for s, d, off in rows:
        for k, x in d.items():
            nan = not math.isfinite(x)
            t = (k, 0.0 if nan else float(x), int(times[s] * 1000) + off, rid, s, int(nan))
            db.execute("INSERT INTO metrics VALUES (?, ?, ?, ?, ?, ?)", t)
            latest[k] = t
    for k, (_, x, ts, _, s, nan) in latest.items():
        db.execute("INSERT INTO latest_metrics VALUES (?, ?, ?, ?, ?, ?)", (k, x, ts, s, nan, rid))
    db.commit()
    db.close()


def w_trackio(run: dict, folder: Path, vocab: dict, project: str, run_name: str, config: dict) -> None:
    """Trackio local store: <project>.db (metrics / configs / system_metrics), non-finite values as strings."""
    path = folder / f"{project}.db"
    db = sqlite3.connect(path)
    db.executescript("""
    CREATE TABLE metrics (id INTEGER PRIMARY KEY AUTOINCREMENT, timestamp TEXT NOT NULL, run_name TEXT NOT NULL,
      step INTEGER NOT NULL, metrics TEXT NOT NULL, run_id TEXT);
    CREATE TABLE configs (id INTEGER PRIMARY KEY AUTOINCREMENT, run_name TEXT NOT NULL, config TEXT NOT NULL,
      created_at TEXT NOT NULL, run_id TEXT, UNIQUE(run_name));
    CREATE TABLE system_metrics (id INTEGER PRIMARY KEY AUTOINCREMENT, timestamp TEXT NOT NULL,
      run_name TEXT NOT NULL, metrics TEXT NOT NULL, run_id TEXT);
    CREATE TABLE project_metadata (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    """)
    rid = "run_7f3e21"
    times = seq_times(run, [(-1, run["reached"])])[0]
    iso = lambda t: time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int(t % 1 * 1e6):06d}+00:00"  # noqa
    t0 = run["t_end"] - run["reached"] * run["sps"]
    db.execute("INSERT INTO configs (run_name, config, created_at, run_id) VALUES (?, ?, ?, ?)",
               (run_name, json.dumps(config), iso(t0), rid))

    def enc(x: float) -> float | str:
        return x if math.isfinite(x) else ("NaN" if math.isnan(x) else ("Infinity" if x > 0 else "-Infinity"))

    rows = [(s, {hf_tag(k): enc(x) for k, x in named(v, vocab).items()} | {"train/global_step": s}, 0)
            for s, v in run["train"]]
    rows += [(s, {hf_tag(k): enc(x) for k, x in e.items()} | {"train/global_step": s}, 40) for s, e in run["eval"]]
    for s, d, off in sorted(rows, key=lambda r: (r[0], r[2])):
        db.execute("INSERT INTO metrics (timestamp, run_name, step, metrics, run_id) VALUES (?, ?, ?, ?, ?)",
                   (iso(times[s] + off), run_name, s, json.dumps(d), rid))
    for t in np.arange(t0, run["t_end"], 600.0):
        db.execute("INSERT INTO system_metrics (timestamp, run_name, metrics, run_id) VALUES (?, ?, ?, ?)",
                   (iso(t), run_name, json.dumps({"gpu/0/utilization": 91.0, "gpu/0/allocated_memory": 61.3,
                                                  "gpu/0/power": 512.4, "gpu/mean_utilization": 90.2}), rid))
    db.commit()
    db.close()
    (folder / "media").mkdir(exist_ok=True)


RASBT_75 = ["step", "total_steps", "loss", "kl_loss", "policy_ratio", "reward_avg", "tokens_per_sec",
            "avg_response_len", "adv_avg", "adv_std", "entropy_avg", "eval_acc"]


def w_rasbt(run: dict, folder: Path, script: str = "7_5_plus_kl", aborted: tuple[int, int] | None = None) -> None:
    """rasbt/reasoning-from-scratch CSV (CRLF, append-only; eval_acc only on checkpoint steps) and its .txt twin.
    `aborted` = (steps, total_steps) of an earlier launch still at the top of the file."""
    rng = np.random.default_rng(run["seed"] + 5)
    buf = io.StringIO()
    wr = csv.writer(buf, lineterminator="\r\n")
    wr.writerow(RASBT_75)
    txt = []
    evals = dict(run["eval"])

    def row(s: int, total: int, v: dict, e: float | None) -> None:
        skipped = v["zero_std"] >= 1.0
        loss = 0.0 if skipped else float(rng.normal(0, 30))
        kl = v.get("kl", 0.0)
        vals = [s, total, f"{loss + kl:.6f}", f"{kl:.6f}", "" if skipped else f"{v.get('ratio', 1.0):.6f}",
                f"{v['reward']:.6f}", f"{v.get('tps', 410.0):.2f}", f"{v.get('length', 300.0):.2f}",
                f"{0.0 if skipped else float(rng.normal(0, 1e-8)):.6f}", f"{0.0 if skipped else 0.935:.6f}",
                f"{v.get('entropy', 0.6):.6f}", "" if e is None else f"{e:.6f}"]
        wr.writerow(vals)
        txt.append(f"[Step {s}/{total}] loss={loss + kl:.4f} reward_avg={v['reward']:.3f} "
                   f"avg_response_len={v.get('length', 300):.1f}" + ("" if e is None else f" eval_acc={e:.4f}"))

    if aborted:
        pre = run["redraw"](0, aborted[0])
        for s, v in pre["train"][: aborted[0]]:
            row(s, aborted[1], v, None)
    for s, v in run["train"]:
        e = evals.get(s)
        row(s, run["planned"], v, None if e is None else next(iter(e.values())))
    write_text(folder / "logs" / f"{script}_metrics.csv", buf.getvalue(), newline="\n")
    write_text(folder / "logs" / f"{script}_metrics.txt", "\n".join(txt) + "\n")


def w_custom_csv(run: dict, folder: Path, cols: dict[str, str], eval_col: str, name: str = "train_metrics.csv",
                 bom: bool = True, crlf: bool = False, cfg: str = "") -> None:
    """A hand-written loop's CSV (opened with encoding='utf-8-sig' on a Windows-mounted share): one row per
    logged step, the eval column empty except on eval steps."""
    evals = dict(run["eval"])
    lines = [",".join([*cols.values(), eval_col])]
    for s, v in run["train"]:
        vals = []
        for c in cols:
            x = s if c == "step" else v[c]
            vals.append(str(x) if c == "step" else ("nan" if not math.isfinite(x) else f"{x:.6g}"))
        e = evals.get(s)
        vals.append("" if e is None else f"{next(iter(e.values())):.4f}")
        lines.append(",".join(vals))
    write_text(folder / name, "\n".join(lines) + "\n", newline="\r\n" if crlf else "\n", bom=bom)
    if cfg:
        write_text(folder / "config.yaml", cfg)
        mark(run, folder / "config.yaml", run["t_end"] - run["reached"] * run["sps"])


def w_custom_jsonl(run: dict, folder: Path, keys: dict[str, str], relaunch: tuple[int, int], names: tuple[str, str],
                   cfg: dict, torn: bool = False) -> None:
    """A hand-written loop's JSONL, one file per launch: the relaunch resumed from its checkpoint at
    relaunch[0], so steps relaunch[0]+1..relaunch[1] are in both files (older values in the first)."""
    r, c = relaunch
    old_t, old_e = stale(run, r, c)
    t = seq_times(run, [(-1, c), (r, run["reached"])])

    def lines(train: dict, evals: dict, times: dict) -> list[str]:
        out = []
        for s in sorted(set(train) | set(evals)):
            if s in train:
                d = {"step": s, **{k2: (None if not math.isfinite(train[s][k]) else round(train[s][k], 6))
                                   for k, k2 in keys.items() if k in train[s]}, "time": round(times.get(s, 0), 1)}
                out.append(json.dumps(d))
            if s in evals:
                out.append(json.dumps({"step": s, "split": "heldout", **evals[s],
                                       "n": 400}))
        return out

    train, evals = dict(run["train"]), dict(run["eval"])
    a = lines({s: (old_t[s] if s > r else v) for s, v in train.items() if s <= c},
              {s: (old_e[s] if s > r else v) for s, v in evals.items() if s <= c}, t[0])
    b = lines({s: v for s, v in train.items() if s > r}, {s: v for s, v in evals.items() if s > r}, t[1])
    p1 = write_text(folder / "logs" / names[0], "\n".join(a) + "\n")
    text = "\n".join(b) + "\n"
    if torn:
        text = text[: len(text) - len(b[-1]) // 3 - 1]
    write_text(folder / "logs" / names[1], text)
    write_text(folder / "config.json", json.dumps(cfg, indent=2) + "\n")
    mark(run, p1, t[0][c])
    mark(run, folder / "config.json", t[0][0] if 0 in t[0] else t[0][min(t[0])])


def w_trl_console(run: dict, folder: Path, vocab: dict = TRL_GRPO, relaunch: tuple[int, int] | None = None,
                  names: tuple[str, ...] = ("train.log",)) -> None:
    """stdout of a TRL script (python train.py 2>&1 | tee): the Trainer's progress-bar dicts (no step key) and
    tqdm lines. With `relaunch` (resumed_from, crashed_at): the first launch is in names[1] (the older log)."""
    planned = run["planned"]

    def block(train: dict, evals: dict, lo: int) -> list[str]:
        out = []
        for s in sorted(set(train) | set(evals)):
            if s in train:
                d = {k: (round(x, 4) if k in ("loss", "grad_norm") else float(f"{x:.6g}"))
                     for k, x in named(train[s], vocab).items()}
                d.setdefault("loss", 0.0012)
                d["epoch"] = round(s / planned, 2)
                out.append(f"{100 * s // planned:3d}%|{'█' * (10 * s // planned):<10}| {s}/{planned} "
                           f"[{int(s * run['sps'] // 3600):02d}:{int(s * run['sps'] % 3600 // 60):02d}:00<?, "
                           f"{run['sps']:.2f}s/it]")
                out.append(repr(d))
            if s in evals:
                out.append(repr({k: float(f"{x:.6g}") for k, x in evals[s].items()} | {
                    "eval_runtime": 141.2, "eval_samples_per_second": 3.54, "epoch": round(s / planned, 2)}))
        return out

    head = ["INFO 11-27 04:12:09 [__init__.py:244] Automatically detected platform cuda.",
            "`torch_dtype` is deprecated! Use `dtype` instead!",
            f"  0%|          | 0/{planned} [00:00<?, ?it/s]"]
    train, evals = dict(run["train"]), dict(run["eval"])
    if not relaunch:
        write_text(folder / names[0], "\n".join(head + block(train, evals, 0)) + "\n")
        return
    r, c = relaunch
    old_t, old_e = stale(run, r, c)
    a = head + block({s: (old_t[s] if s > r else v) for s, v in train.items() if s <= c},
                     {s: (old_e[s] if s > r else v) for s, v in evals.items() if s <= c}, 0)
    a += ["Traceback (most recent call last):", '  File "/workspace/train_grpo.py", line 118, in <module>',
          "torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:3356, unhandled system error"]
    b = head[:2] + [f"Resuming training from checkpoint outputs/checkpoint-{r}",  # noqa: RUF005
                    "***** Running training *****", f"  Total optimization steps = {planned:,}",
                    f"  Continuing training from global step {r}"] + block(
        {s: v for s, v in train.items() if s > r}, {s: v for s, v in evals.items() if s > r}, r)
    t = seq_times(run, [(-1, c), (r, run["reached"])])
    write_text(folder / names[1], "\n".join(a) + "\n")
    write_text(folder / names[0], "\n".join(b) + "\n")
    mark(run, folder / names[1], t[0][c])


def w_nemo(run: dict, folder: Path, max_steps: int, failed_exp: int = 12) -> None:
    """NeMo-RL logger.log_dir: exp_001/ (an earlier launch that died after a few steps) and exp_002/ (this run),
    each with tensorboard/ events, the run's config.yaml, and train_data_step<N>.jsonl dumps."""
    base = folder / "logs"
    cfg = (f"grpo:\n  max_num_steps: {max_steps}\n  num_prompts_per_step: 64\n  num_generations_per_prompt: 16\n"
           f"  val_period: {run['eval_every']}\n  val_at_start: {str(run['eval_at_0']).lower()}\n"
           f"loss_fn:\n  reference_policy_kl_penalty: 0.01\npolicy:\n  model_name: Qwen/Qwen2.5-1.5B\n"
           f"logger:\n  log_dir: logs\n  tensorboard_enabled: true\n  wandb_enabled: false\n")
    if failed_exp:
        e1 = base / "exp_001"
        write_text(e1 / "config.yaml", cfg)
        pre = run["redraw"](0, failed_exp)
        t_old = run["t_end"] - run["reached"] * run["sps"] - 20 * 3600
        ev = [(t_old + 40 * s, s, named(v, NEMO)) for s, v in pre["train"][:failed_exp]]
        p = tb_file(e1 / "tensorboard" / f"events.out.tfevents.{int(t_old)}.dgx-b200-02.410233.0", ev)
        for q in (p, e1 / "config.yaml"):
            mark(run, q, ev[-1][0])
    e2 = base / "exp_002"
    write_text(e2 / "config.yaml", cfg)
    mark(run, e2 / "config.yaml", run["t_end"] - run["reached"] * run["sps"])
    w_tb(run, e2, NEMO, "tensorboard", prefix="", eval_tag=lambda k: k, host="dgx-b200-02")
    for s in range(50, run["reached"] + 1, 50):
        p = write_text(e2 / f"train_data_step{s}.jsonl",
                       json.dumps({"idx": 0, "content": ["<|im_start|>user ..."], "rewards": [1.0],
                                   "input_lengths": [611]}) + "\n")
        mark(run, p, run["t_end"] - (run["reached"] - s) * run["sps"])


# ------------------------------------------------------------------------------------------------------- the table

@dataclass
class Spec:
    name: str
    story: Story
    write: Callable
    seed: int
    steps: tuple[int, int]  # (reached, planned)
    kind: str  # ok | stop | conv | rb | sor
    tags: str
    why: str  # {lo} {hi} {onset} are filled from the story's window
    onset: int | None = None
    extras: tuple[str, ...] = ()
    files: dict[str, str] = field(default_factory=dict)  # case-specific side files (path -> text), written at start
    opts: dict = field(default_factory=dict)  # run options for the writer (steps_per_epoch, max_len, torn)

    def labels(self) -> dict:
        if self.kind == "ok":
            return HEALTHY
        if self.kind == "stop":
            return stop(self.onset)
        if self.kind == "conv":
            return converged()
        lo, hi = window(self.story, self.steps[0], self.onset)
        return (rollback if self.kind == "rb" else stop_or_rollback)(lo, hi, self.onset)

    def case(self) -> Case:
        lab = self.labels()
        lo, hi = lab.get("rollback_window", (None, None))
        why = self.why.format(lo=lo, hi=hi, onset=self.onset)
        return Case(self.name, lambda *_: None, self.write, self.seed, self.steps, lab, self.tags, why)


def lr_sched(peak: float, warm: int, total: int, floor: float = 0.0) -> Level:
    return lin((0, 0.0), (warm, peak), (total, floor))


OPENRLHF_SH = ("#!/bin/bash\nray job submit --address=http://127.0.0.1:8265 -- python3 -m openrlhf.cli.train_ppo_ray "
               "\\\n  --pretrain Qwen/Qwen2.5-Math-7B --advantage_estimator {est} --n_samples_per_prompt {n} "
               "\\\n  --rollout_batch_size 128 --train_batch_size 1024 --max_samples {samples} --num_episodes 1 "
               "\\\n  --logging_steps 1 --eval_steps {ev} --save_steps 100 --use_tensorboard tensorboard \\\n"
               "  --actor_learning_rate 5e-7 --init_kl_coef 0.001\n")

SPECS = [
    # ------------------------------------------------------------------------------------------------- healthy
    Spec("ok-trl-outputs-parent-ckpts-lag-tb-in-runs-subfolder-live-730-of-2000",
         Story(lin((0, .22), (300, .41), (730, .55)),
               {"eval_rewards/accuracy_reward/mean": (lin((0, .20), (300, .38), (730, .50)), 500)},
               "eval_rewards/accuracy_reward/mean", eval_every=100, log_every=10, P=32, G=8,
               side=dict(entropy=lin((0, .62), (730, .48)), length=lin((0, 380), (730, 520)),
                         clip=lin((0, .01), (730, .03)), grad_norm=flat(.18), lr=lr_sched(1e-6, 50, 2000),
                         step_time=flat(28.0)),
               alias={"eval_reward": "eval_rewards/accuracy_reward/mean", "acc": "reward"}, age_min=4, sps=28),
         writer(w_trl)(TRL_GRPO, 200, 2, "Nov27_06-10-44_gpu-node-07"), 3101, (730, 2000), "ok",
         "healthy trl tensorboard runs-subfolder checkpoint-lag save-total-limit live",
         "TRL GRPO output_dir as the user has it: checkpoint-400 and checkpoint-600 (save_total_limit=2, their "
         "trainer_state.json says max_steps 2000) and the TensorBoard file under runs/Nov27_06-10-44_gpu-node-07/, "
         "written 4 minutes ago, which is the only record of steps 610-730. Train reward 0.22 -> 0.55 and held-out "
         "accuracy (eval every 100, N=500, sd ~0.022) 0.26 at 100 -> 0.49 at 700, still gaining ~0.03 per 100 steps; entropy "
         "eases 0.62 -> 0.48, lengths grow 380 -> 520 with truncation at 3%. At 37% of the plan and still "
         "climbing: continue."),
    Spec("ok-openrlhf-tb-three-event-files-two-preemptions-live",
         Story(lin((0, .28), (300, .45), (900, .57)),
               {"eval_math500_pass1": (lin((0, .30), (300, .44), (900, .55)), 500),
                "eval_math500_response_length_mean": (lin((0, 600), (900, 820)), 0)},
               "eval_math500_pass1", eval_every=50, P=128, G=8, avg=False,
               side=dict(kl=lin((0, 0.0005), (900, .035)), length=lin((0, 600), (900, 820)), clip=flat(.02),
                         grad_norm=flat(.35), lr=flat(5e-7), pg_loss=flat(0.0)),
               noise=dict(pg_loss=.03), age_min=6, sps=75),
         writer(w_tb)(OPENRLHF, "tensorboard/qwen2.5-math-7b-grpo", restarts=((200, 260), (600, 610))), 3102,
         (900, 2000), "ok", "healthy openrlhf tensorboard restarts duplicate-steps live",
         "OpenRLHF GRPO (group_norm) on a preemptible queue: tensorboard/qwen2.5-math-7b-grpo/ holds three event "
         "files; the job was preempted after steps 260 and 610 and resumed from the checkpoints at 200 and 600, so "
         "steps 201-260 and 601-610 are logged twice (the older copies in the older files). Reading through that, "
         "the run is steady: reward 0.28 -> 0.57, MATH-500 pass@1 (every 50, N=500, sd ~0.022) 0.32 -> 0.55 and "
         "still rising, KL to the reference 0.035, truncation 2%. The launch script plans 2000 steps (256k "
         "samples / 128); at 900 and improving: continue.",
         files={"train_grpo_ray.sh": OPENRLHF_SH.format(est="group_norm", n=8, samples=256000, ev=50)}),
    Spec("ok-verl-console-ansi-ray-hydra-git-slow-climb-live-340-of-1000",
         Story(lin((0, .58), (340, .68)), {"val-core/openai/gsm8k/acc/mean@1": (lin((0, .60), (340, .70)), 1319)},
               "val-core/openai/gsm8k/acc/mean@1", eval_every=20, eval_at_0=True, P=512, G=8,
               side=dict(kl=lin((0, .0002), (340, .004)), entropy=lin((0, .42), (340, .36)),
                         length=lin((0, 290), (340, 262)), clip=flat(.002), grad_norm=flat(.25), lr=flat(1e-6),
                         pg_loss=flat(0.0), pg_clipfrac=flat(.002), ppo_kl=flat(1e-4), step_time=flat(66.0),
                         gen_time=flat(41.0)),
               noise=dict(pg_loss=.02), age_min=3, sps=66),
         writer(w_verl_console)("gsm8k_grpo", "qwen3-4b-grpo-n8"), 3103, (340, 1000), "ok",
         "healthy verl console ansi ray-prefix numpy2 hydra git-folder slow-climb live",
         "verl GRPO launched with `| tee -a train.log` from the repo checkout: the folder holds train.log (Ray-"
         "prefixed, ANSI-coloured, np.float64(...) values, tqdm 'Training Progress' lines), .hydra/, .git/, a "
         "README and checkpoints/gsm8k_grpo/qwen3-4b-grpo-n8/global_step_50..300. 'Total training steps: 1000'. "
         "GSM8K val (every 20, N=1319, sd ~0.013) climbs slowly but steadily 0.60 -> 0.70 by 340, train score "
         "0.58 -> 0.68 with a big batch, entropy 0.42 -> 0.36, kl_loss 0.004. Slow, not flat: continue.",
         extras=("readme", "git", "launch")),
    Spec("ok-wandb-local-run-dir-binary-kl-rises-with-reward-live",
         Story(lin((0, .35), (400, .52), (1100, .62)),
               {"eval_rewards/accuracy_reward/mean": (lin((0, .33), (400, .48), (1100, .58)), 500)},
               "eval_rewards/accuracy_reward/mean", eval_every=100, log_every=10, P=16, G=8,
               side=dict(kl=lin((0, .0003), (1100, .09)), entropy=lin((0, .55), (1100, .41)),
                         length=lin((0, 450), (1100, 610)), clip=lin((0, .02), (1100, .05)), grad_norm=flat(.22),
                         lr=lr_sched(1e-6, 30, 3000)),
               alias={"eval_reward": "eval_rewards/accuracy_reward/mean", "acc": "reward"}, age_min=2, sps=34),
         writer(w_wandb_dir)(TRL_GRPO, "k3j9x2ab", "grpo-math"), 3104, (1100, 3000), "ok",
         "healthy wandb local-run-dir binary-log kl-rising-with-reward torn-tail live",
         "Only a W&B local run directory (wandb/run-<date>-k3j9x2ab/ with the binary .wandb log ending in a half-"
         "written record, files/output.log, wandb-summary.json, config.yaml with max_steps 3000). TRL GRPO with "
         "beta=0.04: KL climbs 0 -> 0.09 together with the reward (0.35 -> 0.62) and held-out accuracy (every 100, "
         "N=500, sd ~0.022: 0.37 at 100 -> 0.58, best at the newest eval). KL rising with reward rising is the policy "
         "learning. Written 2 minutes ago, 37% of the plan: continue."),
    Spec("ok-mlflow-files-custom-loop-keys-own-intervals-warmup-dip-recovered",
         Story(lin((0, .25), (150, .38), (200, .40), (260, .33), (380, .40), (900, .52)),
               {"eval/pass_at_1": (lin((0, .27), (200, .38), (300, .36), (400, .40), (900, .50)), 500)},
               "eval/pass_at_1", eval_every=100, P=64, G=8,
               side=dict(kl=lin((0, 0.0005), (200, .02), (300, .06), (900, .08)), entropy=lin((0, .6), (900, .5)),
                         length=lin((0, 350), (900, 430)), grad_norm=lin((0, .3), (200, .5), (300, .35)),
                         lr=lr_sched(3e-6, 200, 2500, 3e-7), pg_loss=flat(0.0)),
               noise=dict(pg_loss=.02), age_min=8, sps=40),
         writer(w_mlflow_files)({"reward": ("train/reward_mean", 10), "kl": ("train/kl", 10),
                                 "length": ("train/response_tokens", 10), "entropy": ("train/entropy", 50),
                                 "pg_loss": ("train/loss", 1), "grad_norm": ("train/grad_norm", 1),
                                 "lr": ("train/lr", 1)}, "grpo-llama3.1-8b-warm200",
                                {"total_steps": 2500, "lr_peak": 3e-6, "warmup_steps": 200, "group_size": 8}),
         3105, (900, 2500), "ok", "healthy mlflow-files custom-loop mixed-intervals lr-warmup dip-recovered live",
         "A hand-written GRPO loop logging to ./mlruns with mlflow.log_metric at its own intervals: loss, grad "
         "norm and lr every step, reward/KL/lengths every 10, entropy every 50, held-out pass@1 every 100 (N=500, "
         "sd ~0.022). When the LR warm-up peaked at 3e-6 (step 200) the reward dipped 0.40 -> 0.33 and eval "
         "0.38 -> 0.36 while KL jumped, but by 380 it had recovered and it keeps climbing as the LR decays: reward "
         "0.52 and eval 0.50 at 900, both the best so far. Run status RUNNING, 36% of 2500: continue."),
    Spec("ok-trackio-tiny-batch-noisy-reward-eval-rising",
         Story(lin((0, .12), (800, .30)),
               {"eval_rewards/accuracy_reward/mean": (lin((0, .14), (800, .30)), 300)},
               "eval_rewards/accuracy_reward/mean", eval_every=100, log_every=5, P=4, G=8,
               side=dict(entropy=lin((0, .7), (800, .55)), length=flat(700), clip=flat(.05), grad_norm=flat(.4),
                         lr=flat(5e-7)),
               noise=dict(grad_norm=.35), nan={"grad_norm": (415, 415)},
               alias={"eval_reward": "eval_rewards/accuracy_reward/mean", "acc": "reward"}, age_min=12, sps=22),
         writer(w_trackio)(TRL_GRPO, "grpo-smol", "smollm3-grpo-bs4",
                           {"max_steps": 2000, "num_generations": 8, "per_device_train_batch_size": 4,
                            "logging_steps": 5, "eval_steps": 100}), 3106, (800, 2000), "ok",
         "healthy trackio tiny-batch noisy-reward nan-grad-norm-string live",
         "TRL GRPO on one small GPU reporting to Trackio (grpo-smol.db): 4 prompts x 8 generations per step, so "
         "the logged train reward (mean of 5 steps) swings +-0.08 around a level that rises only 0.12 -> 0.30; one "
         "row stores grad_norm as the string 'NaN' (a skipped bf16 overflow step). The held-out eval (every 100, "
         "N=300, sd ~0.026) confirms the climb: 0.16 at 100 -> 0.30 at 800. Noisy, not flat; 40% of 2000: continue."),
    Spec("ok-custom-jsonl-two-launch-files-resume-overlap-slow-hard-task",
         Story(lin((0, .07), (2100, .19)), {"heldout_pass1": (lin((0, .06), (2100, .17)), 400)}, "heldout_pass1",
               eval_every=100, P=64, G=16,
               side=dict(kl=lin((0, .0002), (2100, .03)), entropy=lin((0, .8), (2100, .66)),
                         length=lin((0, 900), (2100, 1150)), grad_norm=flat(.15), lr=flat(1e-6)),
               age_min=15, sps=45),
         writer(w_custom_jsonl)({"reward": "reward_mean", "reward_std": "reward_std", "zero_std": "frac_no_signal",
                                 "kl": "kl_ref", "entropy": "entropy", "length": "mean_len", "grad_norm": "grad_norm",
                                 "lr": "lr"}, (1200, 1380),
                                ("metrics_20261125-2214.jsonl", "metrics_20261126-1140.jsonl"),
                                {"total_steps": 4000, "group_size": 16, "prompts_per_step": 64, "lr": 1e-6,
                                 "eval_every": 100, "ckpt_every": 200}, True), 3107, (2100, 4000), "ok",
         "healthy custom-jsonl two-files resume duplicate-steps torn-line slow-climb live",
         "A hand-written loop on a hard olympiad set, one JSONL per launch under logs/: the first launch died after "
         "step 1380 and the second resumed from the step-1200 checkpoint, so 1201-1380 appear in both files; the "
         "newest file ends in a half-written line. Progress is slow but real: reward 0.07 -> 0.19 with half the "
         "groups all-zero early, held-out pass@1 (every 100, N=400, sd ~0.019) 0.06 -> 0.165 at its last complete "
         "eval (2000; the 2100 eval line is the torn one), best at the latest evals. config.json plans 4000 steps: continue."),
    Spec("ok-nemo-log-dir-exp-001-died-early-exp-002-rising",
         Story(lin((0, .38), (450, .58)), {"validation/accuracy": (lin((0, .40), (450, .55)), 500)},
               "validation/accuracy", eval_every=25, eval_at_0=True, P=64, G=16,
               side=dict(kl=lin((0, 0.0001), (450, .006)), entropy=lin((0, .5), (450, .42)),
                         length=lin((0, 700), (450, 800)), clip=flat(.01), grad_norm=flat(.3), lr=flat(1e-6),
                         tmpe=flat(1.008), loss_signed=flat(0.0), step_time=flat(95.0)),
               noise=dict(tmpe=.002, loss_signed=.01), age_min=5, sps=95),
         writer(w_nemo)(1000), 3108, (450, 1000), "ok",
         "healthy nemo-rl tensorboard exp-dirs aborted-first-launch live",
         "NeMo-RL logger.log_dir pointed at logs/: exp_001/ is yesterday's launch that died after 12 steps (an "
         "OOM), exp_002/ is the run, written 5 minutes ago. In exp_002 train reward goes 0.38 -> 0.58 and "
         "validation accuracy (every 25 from step 0, N=500, sd ~0.022) 0.40 -> 0.55, still rising; "
         "token_mult_prob_error 1.008, KL 0.006. max_num_steps 1000: continue."),
    Spec("ok-rasbt-csv-crlf-kl-script-early-climb-160-of-500",
         Story(lin((0, .15), (160, .34)), {"eval_acc": (lin((0, .15), (160, .30)), 500)}, "eval_acc",
               eval_list=[1, 50, 100, 150], P=1, G=8,
               side=dict(kl=lin((0, 0.0), (160, .02)), entropy=lin((0, .62), (160, .55)),
                         length=lin((0, 310), (160, 360)), ratio=flat(1.0), tps=flat(410.0)),
               noise=dict(ratio=.01, kl=.3), age_min=3, sps=45),
         writer(w_rasbt)("7_5_plus_kl"), 3109, (160, 500), "ok",
         "healthy rasbt-csv crlf one-prompt-per-step skipped-updates early live",
         "reasoning-from-scratch 7_5_plus_kl.py: logs/7_5_plus_kl_metrics.csv (CRLF, total_steps 500). One prompt "
         "x 8 rollouts per step, so reward_avg jumps between 0 and 1 and about a third of the steps have adv_std 0 "
         "(update skipped). eval_acc on MATH-500 (steps 1, 50, 100, 150; N=500, sd ~0.02) goes 0.15 -> 0.29, "
         "kl_loss stays small. 160 of 500 and improving: continue."),
    Spec("ok-trl-dpo-ckpts-eval-acc-rising-logps-chosen-falls-saves-lag",
         Story(lin((0, .52), (1250, .71)),
               {"eval_rewards/accuracies": (lin((0, .55), (500, .64), (1250, .70)), 1000),
                "eval_rewards/margins": (lin((0, .01), (1250, 1.5)), 0), "eval_loss": (lin((0, .69), (1250, .48)), 0)},
               "eval_rewards/accuracies", eval_every=250, log_every=10, P=64, G=1, spread=1.5,
               side=dict(margins=lin((0, 0), (1250, 1.6)), chosen=lin((0, 0), (1250, -.9)),
                         rejected=lin((0, 0), (1250, -2.5)), logps_c=lin((0, -180), (1250, -215)),
                         logps_r=lin((0, -195), (1250, -290)), loss=lin((0, .69), (1250, .46)),
                         grad_norm=lin((0, 8), (1250, 14)), lr=lr_sched(5e-7, 100, 3000)),
               noise=dict(margins=.15, chosen=.08, rejected=.12, logps_c=3, logps_r=4, grad_norm=.3),
               age_min=25, sps=12),
         writer(w_trl)(TRL_DPO, 250, None, None, False, 10, "dpo", "full"), 3110, (1250, 3000), "ok",
         "healthy trl dpo checkpoints-only save-lag likelihood-displacement live",
         "TRL DPO with only checkpoint-250..1250 in the folder (no TensorBoard), the newest saved 25 minutes ago "
         "with saves every 250 steps (~50 minutes apart at 12 s/step), so the run is live between saves. Pair "
         "accuracy on the eval split (every 250, N=1000, sd ~0.015) 0.60 -> 0.70 and still rising, margins 0 -> 1.6; "
         "logps/chosen falls -180 -> -215, a moderate likelihood displacement that is normal in DPO as long as the "
         "eval keeps improving. max_steps 3000: continue."),
    Spec("ok-verl-jsonl-dapo-length-growth-torn-last-line-live",
         Story(lin((0, .30), (420, .52)), {"val-core/math500/acc/mean@4": (lin((0, .50), (420, .64)), 500)},
               "val-core/math500/acc/mean@4", eval_every=20, eval_at_0=True, P=512, G=16,
               side=dict(length=lin((0, 1200), (420, 3100)), clip=lin((0, .01), (420, .05)),
                         entropy=lin((0, .38), (420, .42)), grad_norm=flat(.2), lr=flat(1e-6),
                         ngen=lin((0, 1.2), (420, 1.6)), step_time=lin((0, 300), (420, 620)),
                         gen_time=lin((0, 200), (420, 470)), pg_clipfrac=flat(.004), pg_loss=flat(0.0)),
               noise=dict(pg_loss=.01), age_min=1, sps=400),
         writer(w_verl_jsonl)("dapo/qwen3-8b-dapo-math.jsonl", True), 3111, (420, 1200), "ok",
         "healthy verl-jsonl dapo length-growth clip-higher torn-line live",
         "verl DAPO recipe with the file logger (dapo/qwen3-8b-dapo-math.jsonl, the last line half-written a "
         "minute ago). Responses grow 1200 -> 3100 tokens with truncation still only 5% of 8k, entropy held up "
         "(0.38 -> 0.42) by clip-higher, 1.6 generation rounds per batch. Train score 0.30 -> 0.52 and MATH-500 "
         "mean@4 (every 20, N=500, sd ~0.021) 0.50 -> 0.64, still rising. run_dapo.sh sets 1200 steps: continue.",
         files={"run_dapo.sh": "#!/bin/bash\npython3 -m recipe.dapo.main_dapo trainer.logger=['console','file'] "
                               "trainer.total_training_steps=1200 trainer.test_freq=20 "
                               "data.max_response_length=8192 algorithm.filter_groups.enable=True\n"},
         opts=dict(max_len=8192)),
    Spec("ok-verl-console-plain-floats-train-flat-curriculum-val-rising",
         Story(lin((0, .40), (50, .45), (600, .46)), {"val-core/math500/acc/mean@1": (lin((0, .38), (600, .52)), 500)},
               "val-core/math500/acc/mean@1", eval_every=25, eval_at_0=True, P=256, G=8,
               side=dict(kl=lin((0, .0002), (600, .008)), entropy=lin((0, .5), (600, .44)),
                         length=lin((0, 800), (600, 1100)), clip=lin((0, .01), (600, .02)), grad_norm=flat(.2),
                         lr=flat(1e-6), pg_loss=flat(0.0), step_time=flat(80.0), gen_time=flat(52.0)),
               noise=dict(pg_loss=.02), age_min=4, sps=80),
         writer(w_verl_console)("curriculum_rl", "qwen2.5-7b-adaptive", "train.log", False, False, 100), 3112,
         (600, 1500), "ok", "healthy verl console plain-floats adaptive-curriculum flat-train-reward live",
         "verl GRPO (an older install printing plain floats, no colours) with an adaptive difficulty sampler "
         "(curriculum.yaml: target pass rate 0.45). The train score sits at ~0.45 by design: the "
         "sampler serves harder prompts as the model improves. The held-out MATH-500 (every 25, N=500, sd "
         "~0.022) is the progress signal and rises 0.38 -> 0.52, best at the newest evals. 600 of 1500: continue.",
         files={"curriculum.yaml": "sampler: adaptive_difficulty\ntarget_pass_rate: 0.45\nwindow: 64\n"}),
    # ------------------------------------------------------------------------------------------------- stop
    Spec("stop-trl-finished-top-level-state-saturated-zero-std-at-plateau",
         Story(lin((0, .45), (800, .91), (1500, .92)),
               {"eval_rewards/accuracy_reward/mean": (lin((0, .50), (800, .78), (1500, .78)), 500)},
               "eval_rewards/accuracy_reward/mean", eval_every=100, log_every=10, P=32, G=8,
               side=dict(entropy=lin((0, .5), (800, .2), (1500, .17)), length=lin((0, 500), (800, 340), (1500, 330)),
                         clip=flat(.005), grad_norm=lin((0, .3), (1500, .12)), lr=lin((0, 1e-6), (1500, 0))),
               alias={"eval_reward": "eval_rewards/accuracy_reward/mean", "acc": "reward"}, age_min=180, sps=30),
         writer(w_trl)(TRL_GRPO, 500, 2, None, True, 10, "grpo", "full"), 3113, (1500, 1500), "stop",
         "stop trl finished top-level-state saturated frac-zero-std",
         "Finished TRL GRPO: top-level trainer_state.json (save_state) with the train_runtime row, final model "
         "files and checkpoint-1000/1500, last written 3 hours ago. Train reward saturates at 0.91-0.92 from "
         "~800, frac_reward_zero_std climbs to ~0.65 (most groups all-correct, no gradient), entropy 0.2 -> 0.17. "
         "Held-out accuracy (every 100, N=500, sd ~0.019) reached 0.78 by 800 and held it to the end, so the "
         "final weights are as good as any: stop (keep the final model).", onset=800),
    Spec("stop-openrlhf-console-task-too-hard-never-learns-group-std-near-zero",
         Story(flat(.035), {"eval_olympiad_pass1": (flat(.05), 675)}, "eval_olympiad_pass1", eval_every=50,
               P=128, G=8, avg=False,
               side=dict(kl=lin((0, 0.0001), (500, .002)), length=lin((0, 900), (500, 1100)),
                         clip=lin((0, .05), (500, .09)), grad_norm=flat(.08), lr=flat(5e-7), pg_loss=flat(0.0)),
               noise=dict(pg_loss=.005), age_min=4, sps=60),
         writer(w_openrlhf_console)("train_ppo_ray.log"), 3114, (500, 2000), "stop",
         "stop openrlhf console never-learns no-signal live",
         "OpenRLHF GRPO console log (✨ Global step lines, Evaluation completed lines) of a 7B base model on "
         "olympiad problems far beyond it: reward 0.035 flat for all 500 steps, group_reward_std near 0 (about 80% "
         "of groups score all-zero), held-out olympiad pass@1 (every 50, N=675, sd ~0.008) flat at 0.05, KL "
         "barely moves. 25% of the plan is left unused, but there is no learning signal to use it: stop.",
         onset=None),
    Spec("stop-trl-console-two-log-files-plateau-entropy-floor-no-eval",
         Story(lin((0, .30), (600, .58), (1400, .58)), log_every=10, P=32, G=8,
               side=dict(entropy=lin((0, .5), (600, .09), (1400, .08)), length=lin((0, 520), (600, 300), (1400, 300)),
                         clip=flat(.01), grad_norm=lin((0, .3), (1400, .1)), lr=flat(1e-6)),
               alias={"acc": "reward"}, age_min=2, sps=25),
         writer(w_trl_console)(TRL_GRPO, (700, 760), ("train.log", "train.log.1")), 3115, (1400, 3000), "stop",
         "stop trl console two-files resume plateau entropy-collapse-to-floor no-eval live",
         "TRL GRPO stdout in two files: train.log.1 from the first launch (died with an NCCL error after 760) and "
         "train.log from the relaunch that resumed at checkpoint-700, so 710-760 appear twice; the dicts carry no "
         "step, the tqdm lines do. Reward rose 0.30 -> 0.58 by ~600 and has been flat for 800 steps since, "
         "entropy has sat at its floor (~0.08) as long, no eval. With exploration "
         "gone and nothing gained in 80 logged points, the rest of the 3000-step plan buys nothing and the "
         "current weights are as good as any: stop.", onset=600),
    Spec("conv-mlflow-db-dpo-eval-plateau-92pct-of-plan",
         Story(lin((0, .52), (1300, .76), (1850, .765)),
               {"eval_rewards/accuracies": (lin((0, .55), (1300, .74), (1850, .742)), 1000),
                "eval_loss": (lin((0, .69), (1300, .47), (1850, .465)), 0)},
               "eval_rewards/accuracies", eval_every=100, log_every=10, P=64, G=1, spread=1.5,
               side=dict(margins=lin((0, 0), (1300, 2.1), (1850, 2.3)), chosen=lin((0, 0), (1850, -1.2)),
                         rejected=lin((0, 0), (1850, -3.5)), loss=lin((0, .69), (1300, .45), (1850, .44)),
                         grad_norm=flat(10.0), lr=lr_sched(5e-7, 100, 2000)),
               noise=dict(margins=.15, chosen=.08, rejected=.12, grad_norm=.3), age_min=6, sps=14),
         writer(w_mlflow_db)(TRL_DPO, "dpo-mistral-7b-helpsteer3", {"max_steps": 2000, "beta": 0.1,
                                                                   "learning_rate": 5e-7}),
         3116, (1850, 2000), "conv", "converged mlflow-db dpo plateau near-end live",
         "TRL DPO reporting to MLflow's sqlite store (mlflow.db, raw Trainer keys). Eval pair accuracy (every 100, "
         "N=1000, sd ~0.014) reached 0.74 by 1300 and has been flat since; the LR is decaying to 0 at "
         "max_steps 2000 and the run is at 1850. Letting it finish or stopping now are both fine."),
    Spec("stop-custom-csv-bom-stalled-9h-plateau-since-1500",
         Story(lin((0, .30), (1500, .66), (2600, .67)), {"pass@1_heldout": (lin((0, .28), (1500, .61), (2600, .61)),
                                                                           500)},
               "pass@1_heldout", eval_every=100, log_every=10, P=32, G=8,
               side=dict(kl=lin((0, 0.0005), (1500, .05), (2600, .08)), entropy=lin((0, .6), (1500, .35), (2600, .33)),
                         length=lin((0, 400), (2600, 450)), grad_norm=flat(.3), lr=flat(1e-6)),
               age_min=540, sps=30),
         writer(w_custom_csv)({"step": "step", "reward": "avg_reward", "kl": "kl", "entropy": "entropy",
                               "length": "resp_len", "grad_norm": "grad_norm", "lr": "lr"}, "pass@1_heldout",
                              "train_metrics.csv", True, False,
                              "model: meta-llama/Llama-3.1-8B-Instruct\ntotal_iters: 5000\nlog_every: 10\n"
                              "eval_every: 100\ngroup_size: 8\n"), 3117, (2600, 5000), "stop",
         "stop custom-csv utf8-bom stalled plateau",
         "A hand-written loop's train_metrics.csv (UTF-8 BOM, a row every 10 iterations, held-out pass@1 every "
         "100); config.yaml plans 5000 iterations, but nothing has been written for 9 hours (stalled at 2600). "
         "Held-out pass@1 (N=500, sd ~0.022) climbed 0.30 -> 0.61 by 1500 and has been flat for 1100 iterations; "
         "train reward flat at 0.66-0.67 while KL creeps 0.05 -> 0.08. Nothing left to gain from restarting it, "
         "and the last weights are as good as any: stop.", onset=1500),
    Spec("stop-nemo-tb-saturated-pct1-66-validation-flat",
         Story(lin((0, .70), (300, .955), (700, .96)), {"validation/accuracy": (lin((0, .72), (300, .905),
                                                                                   (700, .905)), 500)},
               "validation/accuracy", eval_every=25, eval_at_0=True, P=64, G=16,
               side=dict(kl=lin((0, 0.0001), (300, .01), (700, .012)), entropy=lin((0, .4), (300, .15), (700, .14)),
                         length=lin((0, 380), (700, 300)), clip=flat(.003), grad_norm=lin((0, .3), (700, .1)),
                         lr=flat(1e-6), tmpe=flat(1.006), loss_signed=flat(0.0), step_time=flat(70.0)),
               noise=dict(tmpe=.002, loss_signed=.005), age_min=7, sps=70),
         writer(w_nemo)(1500, 0), 3118, (700, 1500), "stop", "stop nemo-rl tensorboard saturated pct-1 live",
         "NeMo-RL GRPO on GSM8K-level problems: train reward 0.70 -> 0.955 by 300 and flat since; "
         "baseline_reward/pct_1 is ~66% (groups all-correct, no advantage), so almost no gradient remains. "
         "Validation accuracy (every 25, N=500, sd ~0.013) 0.905 since 300. Saturated: nothing left to gain and "
         "the current weights are as good as any: stop.", onset=300),
    Spec("stop-trl-ppo-ckpts-rm-score-flat-kl-creeps-objective-keys",
         Story(lin((0, .1), (600, 1.4), (1500, 1.42)), rkind="score", rscale=1.2, P=64, G=1, avg=False,
               side=dict(kl=lin((0, .01), (600, 2.0), (1500, 4.5)), nsr=lin((0, 0), (600, -.10), (1500, -.225)),
                         entropy=lin((0, 60), (600, 48), (1500, 44)), approxkl=flat(.002), clipfrac=flat(.03),
                         pg_loss=flat(-.01), vf_loss=lin((0, .4), (1500, .1)), ratio=flat(1.0), eos=flat(60.0),
                         lr=lin((0, 3e-6), (3000, 0)), eps=flat(3.4)),
               noise=dict(nsr=.01, pg_loss=.01, ratio=.01, kl=.06), age_min=6, sps=18),
         writer(w_trl)(TRL_PPO, 100, 3, None, False, 1, "ppo", "full"), 3119, (1500, 3000), "stop",
         "stop trl ppo checkpoints reward-model-score plateau kl-creep",
         "TRL PPOTrainer (objective/*, policy/*, loss/*, val/* keys, a row every update) with checkpoint-1300/1400/"
         "1500, the newest saved 6 minutes ago. The reward-model score objective/scores rose 0.1 -> 1.4 by ~600 "
         "and has been flat since (per-update batch sd ~0.17), while objective/kl keeps creeping 2.0 -> 4.5 and the KL "
         "penalty grows; no eval. KL rising with the reward flat: the policy drifts without gaining, and the "
         "current weights score as well as any. Stop.", onset=600),
    # ------------------------------------------------------------------------------------------------- rollback
    Spec("rb-verl-console-ansi-grad-norm-nan-score-to-zero-ckpt-600-broken",
         Story(lin((0, .45), (400, .74), (570, .76), (578, .76), (590, .02), (611, 0.0)),
               {"val-core/openai/gsm8k/acc/mean@1": (lin((0, .50), (400, .70), (570, .715), (578, .715), (585, .45),
                                                          (600, .02), (611, 0.0)), 1319)},
               "val-core/openai/gsm8k/acc/mean@1", eval_every=20, eval_at_0=True, P=512, G=8,
               side=dict(grad_norm=lin((0, .25), (560, .28), (575, 3.0), (582, 30.0)),
                         entropy=lin((0, .45), (578, .32), (583, 2.5)), kl=lin((0, .0002), (578, .006), (582, .2)),
                         length=lin((0, 300), (578, 280), (595, 4096), (611, 4096)),
                         clip=lin((0, .002), (578, .003), (595, 1.0)), lr=flat(1e-6), pg_loss=flat(0.0),
                         step_time=flat(70.0), gen_time=flat(44.0)),
               noise=dict(pg_loss=.02), nan={"grad_norm": (583, 611), "entropy": (583, 611), "kl": (583, 611),
                                             "pg_loss": (583, 611)}, age_min=2, sps=70),
         writer(w_verl_console)("gsm8k_grpo", "qwen2.5-3b-lr1e-6", "train.log", True, True, 100), 3120,
         (611, 1000), "rb", "rollback verl console ansi numpy2 nan grad-norm collapse broken-checkpoint live",
         "verl GRPO console (ANSI colours, Ray prefixes, np.float64 values). From ~575 actor/grad_norm climbs "
         "0.28 -> 30 and from 583 grad norm, entropy, kl_loss and pg_loss print np.float64(nan); the score "
         "falls 0.76 -> 0 and responses run to the 4096 cap. GSM8K val (every 20, N=1319, sd ~0.012) was "
         "0.714 at 560, 0.64 at 580 and 0.02 at 600. global_step_600 was saved after the blow-up and is broken; "
         "global_step_500 is the newest usable checkpoint. Best target {hi} (window {lo}-{hi}): rollback.",
         onset=575, extras=("readme",)),
    Spec("rb-trl-keep2-ckpts-straddle-collapse-tb-in-runs-shows-it",
         Story(lin((0, .30), (600, .62), (850, .635), (900, .50), (960, .08)),
               {"eval_rewards/accuracy_reward/mean": (lin((0, .32), (600, .58), (850, .60), (900, .42), (960, .10)),
                                                      500)},
               "eval_rewards/accuracy_reward/mean", eval_every=50, log_every=10, P=32, G=8,
               side=dict(entropy=lin((0, .45), (850, .35), (900, 1.6), (960, 3.2)),
                         length=lin((0, 500), (850, 560), (900, 880), (960, 1024)),
                         clip=lin((0, .02), (850, .03), (900, .45), (960, .93)),
                         grad_norm=lin((0, .2), (850, .22), (900, 1.5), (960, 4.0)), lr=flat(1e-6)),
               alias={"eval_reward": "eval_rewards/accuracy_reward/mean", "acc": "reward"}, age_min=3, sps=30),
         writer(w_trl)(TRL_GRPO, 100, 2, "Nov26_22-41-07_h100-3"), 3121, (960, 2000), "rb",
         "rollback trl tensorboard runs-subfolder save-total-limit entropy-blowup length-to-cap live",
         "TRL GRPO output_dir with checkpoint-800 and checkpoint-900 (save_total_limit=2) and the live "
         "TensorBoard file under runs/. From ~850 entropy blows up 0.35 -> 3.2, completions run to the 1024 cap "
         "(clipped_ratio 0.03 -> 0.93) and grad norm x20; train reward 0.635 -> 0.08. Held-out accuracy (every "
         "50, N=500, sd ~0.022) peaked at 0.60 at 850 and is 0.12 at 950. checkpoint-900 is already damaged; "
         "the best target is {hi} (window {lo}-{hi}), restore checkpoint-800: rollback.", onset=850),
    Spec("rb-wandb-run-dir-format-reward-farming-total-reward-holds",
         Story(lin((0, .30), (450, .48), (820, .30)),
               {"eval_rewards/accuracy_reward/mean": (lin((0, .31), (450, .50), (820, .33)), 400),
                "eval_rewards/format_reward/mean": (lin((0, .4), (450, .8), (600, .99), (820, .99)), 0)},
               "eval_rewards/accuracy_reward/mean", eval_every=50, log_every=10, P=16, G=8, plus=("fmt",),
               side=dict(fmt=lin((0, .40), (450, .80), (600, 1.0), (820, 1.0)), length=lin((0, 620), (450, 560),
                                                                                            (820, 180)),
                         entropy=lin((0, .5), (450, .42), (820, .25)), clip=flat(.01),
                         kl=lin((0, .0003), (450, .05), (820, .21)), grad_norm=flat(.25), lr=flat(1e-6)),
               noise=dict(fmt=.015), age_min=5, sps=30),
         writer(w_wandb_dir)(TRL_GRPO, "p0w7zq1m", "grpo-format", config={"reward_weights": [1.0, 1.0]}), 3122,
         (820, 2000), "rb", "rollback wandb local-run-dir binary-log reward-hacking format-reward live",
         "W&B local run dir of TRL GRPO with two reward functions (accuracy + format, weights 1:1). Past ~450 the "
         "format reward saturates (0.8 -> 1.0) while completions shrink 560 -> 180 tokens and the train accuracy "
         "reward slides 0.48 -> 0.30; the total reward looks fine (1.28 -> 1.30). Held-out accuracy (every 50, "
         "N=400, sd ~0.025) peaked at 0.50 at 450 and is 0.33 at 800. The model learned the format and lost the "
         "answers: rollback to {hi} (window {lo}-{hi}).", onset=450),
    Spec("rb-mlflow-files-verl-at-keys-lr-10x-after-resume-kl-blowup",
         Story(lin((0, .55), (900, .80), (930, .78), (1040, .58)),
               {"val-core/openai/gsm8k/acc/mean@1": (lin((0, .57), (900, .81), (930, .79), (1040, .62)), 1319)},
               "val-core/openai/gsm8k/acc/mean@1", eval_every=25, eval_at_0=True, P=256, G=8,
               side=dict(lr=lin((0, 1e-6), (900, 1e-6), (901, 1e-5), (1040, 1e-5)),
                         kl=lin((0, .0002), (900, .012), (960, .3), (1040, .65)),
                         entropy=lin((0, .40), (900, .33), (960, .8), (1040, 1.3)),
                         grad_norm=lin((0, .3), (900, .3), (920, 1.2), (1040, 2.0)),
                         length=lin((0, 230), (900, 210), (1040, 420))),
               age_min=7, sps=50),
         writer(w_mlflow_files)({"reward": ("critic/score/mean", 1), "kl": ("actor/kl_loss", 1),
                                 "entropy": ("actor/entropy", 1), "lr": ("actor/lr", 1),
                                 "grad_norm": ("actor/grad_norm", 1), "length": ("response_length/mean", 1)},
                                "qwen2.5-7b-gsm8k-grpo", {"trainer.total_training_steps": 1500,
                                                          "actor_rollout_ref.actor.optim.lr": 1e-6},
                                eval_keys={"val-core/openai/gsm8k/acc/mean@1": "val-core/openai/gsm8k/acc/mean_at_1"}),
         3123, (1040, 1500), "rb", "rollback mlflow-files verl at-key-rewrite lr-bug kl-blowup live",
         "verl GRPO logging to an MLflow file store (keys with @ rewritten to _at_). The job was resumed at 900 "
         "with the LR scheduler state lost: actor/lr jumps 1e-6 -> 1e-5. KL to the reference then runs away "
         "0.012 -> 0.65, entropy 0.33 -> 1.3, responses double; train score 0.80 -> 0.58. GSM8K val (every 25, "
         "N=1319, sd ~0.011) peaked at 0.81 at 900 and is 0.63 at 1025. Rollback to {hi} (window {lo}-{hi}) and "
         "fix the LR.", onset=900),
    Spec("rb-trackio-entropy-collapse-train-keeps-rising-heldout-falls",
         Story(lin((0, .40), (500, .75), (1000, .90)),
               {"eval_rewards/accuracy_reward/mean": (lin((0, .38), (500, .47), (1000, .38)), 600)},
               "eval_rewards/accuracy_reward/mean", eval_every=100, log_every=10, P=32, G=8,
               side=dict(entropy=lin((0, .45), (500, .20), (700, .03), (1000, .02)),
                         length=lin((0, 520), (500, 430), (1000, 380)), grad_norm=lin((0, .25), (1000, .12)),
                         lr=flat(1e-6), clip=flat(.01)),
               alias={"eval_reward": "eval_rewards/accuracy_reward/mean", "acc": "reward"}, age_min=9, sps=26),
         writer(w_trackio)(TRL_GRPO, "grpo-countdown", "qwen2.5-3b-countdown-lr1e-6",
                           {"max_steps": 2000, "num_generations": 8, "logging_steps": 10, "eval_steps": 100}),
         3124, (1000, 2000), "rb", "rollback trackio entropy-collapse train-up heldout-down live",
         "TRL GRPO reporting to Trackio. Entropy collapses 0.45 -> 0.03 (by ~700) while the train reward keeps "
         "rising 0.75 -> 0.90 on a training set the policy has nearly memorised. The held-out split (every 100, "
         "N=600, sd ~0.02) peaked at 0.47 at 500 and is down to 0.38 at 1000 (4 sd). The train curve hides it; "
         "the better model is behind: rollback to {hi} (window {lo}-{hi}).", onset=500),
    Spec("rb-openrlhf-tb-restart-rm-score-climbs-gsm8k-pass1-falls",
         Story(lin((0, -.5), (400, .9), (900, 2.3)),
               {"eval_gsm8k_pass1": (lin((0, .70), (400, .76), (900, .63)), 1319),
                "eval_gsm8k_response_length_mean": (lin((0, 250), (400, 320), (900, 880)), 0)},
               "eval_gsm8k_pass1", eval_every=50, rkind="score", P=128, G=1, avg=False,
               side=dict(length=lin((0, 250), (400, 320), (900, 880)), clip=lin((0, .003), (400, .01), (900, .12)),
                         kl=lin((0, .0005), (400, .05), (900, .31)), grad_norm=flat(.5), lr=flat(5e-7),
                         pg_loss=flat(0.0)),
               noise=dict(pg_loss=.03), age_min=10, sps=55),
         writer(w_tb)(OPENRLHF, "tensorboard/llama3-8b-ppo-rm", restarts=((500, 540),)), 3125, (900, 2000), "rb",
         "rollback openrlhf tensorboard restart reward-model-hacking length-growth live",
         "OpenRLHF PPO against a learned reward model, TensorBoard with two event files (a restart from the "
         "step-500 checkpoint after a crash at 540). The RM score keeps climbing -0.5 -> 2.3 while responses grow "
         "320 -> 880 tokens and KL reaches 0.31. The rule-checked GSM8K pass@1 (every 50, N=1319, sd ~0.012) "
         "peaked at 0.76 at 400 and is 0.64 at 900: the policy is exploiting the RM's taste for length. Rollback "
         "to {hi} (window {lo}-{hi}).", onset=400,
         files={"train_ppo_ray.sh": OPENRLHF_SH.format(est="gae", n=1, samples=256000, ev=50)}),
    Spec("sor-verl-jsonl-two-launch-files-val-eases-1sd-kl-creeps",
         Story(lin((0, .40), (700, .62), (1100, .625)),
               {"val-core/openai/gsm8k/acc/mean@1": (lin((0, .45), (700, .655), (1100, .640)), 1319)},
               "val-core/openai/gsm8k/acc/mean@1", eval_every=20, eval_at_0=True, P=256, G=8,
               side=dict(kl=lin((0, .0002), (700, .01), (1100, .025)), entropy=lin((0, .42), (700, .30), (1100, .22)),
                         length=flat(260), grad_norm=flat(.25), lr=flat(1e-6), pg_loss=flat(0.0)),
               noise=dict(pg_loss=.02), age_min=10, sps=55),
         writer(w_verl_jsonl)("logs/metrics_20261126-0310.jsonl", False, (600, 640),
                              "logs/metrics_20261126-2342.jsonl"), 3126, (1100, 1500), "sor",
         "stop-or-rollback verl-jsonl two-files relaunch val-before-train drift live",
         "verl GRPO with the file logger and a per-launch VERL_FILE_LOGGER_PATH: the first file runs to 640, the "
         "second starts with the validation-before-train row at 600 (resumed from global_step_600) and runs to "
         "1100. GSM8K val (every 20, N=1319, sd ~0.013) rose to 0.655 by ~700; since then it eases to 0.640 "
         "(about 1 sd) while the train score is flat at 0.62, KL creeps 0.01 -> 0.025 and entropy 0.30 -> "
         "0.22. Nothing more is being gained; the slip is within noise, so stopping is right and going back to "
         "{hi} (window {lo}-{hi}) is as good.", onset=700,
         files={"run_grpo.sh": "#!/bin/bash\nexport VERL_FILE_LOGGER_PATH=logs/metrics_$(date +%Y%m%d-%H%M).jsonl\n"
                               "python3 -m verl.trainer.main_ppo trainer.logger=['console','file'] "
                               "trainer.total_training_steps=1500 trainer.test_freq=20 trainer.save_freq=100 "
                               "trainer.resume_mode=auto\n"}),
    Spec("rb-wandb-csv-panels-train-reward-rising-eval-peaked-at-700-800",
         Story(lin((0, .40), (700, .58), (1600, .70)),
               {"eval_accuracy": (lin((0, .38), (700, .52), (800, .52), (1600, .44)), 800)}, "eval_accuracy",
               eval_every=50, log_every=10, P=16, G=8,
               side=dict(kl=lin((0, .0003), (700, .04), (1600, .14))), age_min=20, sps=30),
         writer(w_wandb_csv)({"train/reward": "wandb_export_2026-11-27T09_41_12.118+01_00.csv",
                              "eval/accuracy": "wandb_export_2026-11-27T09_41_40.502+01_00.csv",
                              "train/kl": "wandb_export_2026-11-27T09_42_03.277+01_00.csv"},
                             "grpo-qwen3-8b-numina-6ep"), 3127, (1600, 3000), "rb",
         "rollback wandb-csv panel-exports train-up eval-down overfit",
         "Three W&B panel exports (x axis train/global_step; '<run> - <metric>' with __MIN/__MAX columns) of a TRL "
         "GRPO run on a small prompt set now in its 6th epoch. Train reward keeps rising 0.58 -> 0.70 and KL "
         "0.04 -> 0.14, but the eval accuracy (every 50, N=800, sd ~0.018) plateaued at 0.52 over 700-800 and "
         "has fallen to 0.44 by 1600 (4.5 sd): the policy is fitting the training prompts. The better model is "
         "behind: rollback to {hi} (window {lo}-{hi}).", onset=800),
    Spec("rb-rasbt-csv-appended-second-run-kl-entropy-creep-eval-peak-250",
         Story(lin((0, .15), (250, .42), (420, .36)), {"eval_acc": (lin((0, .16), (250, .42), (420, .36)), 500)},
               "eval_acc", eval_list=[1, 50, 100, 150, 200, 250, 300, 350, 400], P=1, G=8,
               side=dict(kl=lin((0, 0.0), (250, .05), (420, .9)), entropy=lin((0, .6), (250, .55), (420, 1.8)),
                         length=lin((0, 300), (250, 420), (420, 700)), ratio=flat(1.0), tps=flat(395.0)),
               noise=dict(ratio=.02, kl=.3), age_min=4, sps=40),
         writer(w_rasbt)("7_5_plus_kl", (6, 300)), 3128, (420, 500), "rb",
         "rollback rasbt-csv crlf appended-runs kl-drift entropy-rise subtle live",
         "logs/7_5_plus_kl_metrics.csv (CRLF) starts with 6 rows of an aborted launch (total_steps 300) and then "
         "the real run from step 1 (total_steps 500). In that run eval_acc (MATH-500, N=500, sd ~0.022) climbs "
         "0.16 -> 0.42 by 250, then kl_loss grows 0.05 -> 0.9, entropy rises 0.55 -> 1.8 and responses lengthen; "
         "eval_acc is 0.37 at 400 (2.4 sd below the peak). Early, but the drift is one-directional: rollback to "
         "{hi} (the checkpoint saved with that eval; window {lo}-{hi}).", onset=250),
    Spec("rb-trl-console-nohup-collapse-in-last-35-steps-no-eval",
         Story(lin((0, .20), (500, .61), (705, .615), (740, .33)), log_every=5, P=32, G=8,
               side=dict(entropy=lin((0, .5), (705, .38), (740, 1.4)), length=lin((0, 420), (705, 470), (740, 900)),
                         clip=lin((0, .01), (705, .02), (740, .35)),
                         grad_norm=lin((0, .2), (705, .22), (720, 1.5), (740, 3.0)), lr=flat(1e-6)),
               alias={"acc": "reward"}, age_min=1, sps=30),
         writer(w_trl_console)(TRL_GRPO, None, ("nohup.out",)), 3129, (740, 1500), "rb",
         "rollback trl console nohup recent-collapse no-eval live",
         "nohup.out of a TRL GRPO script (progress-bar dicts every 5 steps, no step key; the tqdm lines give "
         "740/1500), written a minute ago. Reward climbed to ~0.61 by 500 and held to 705; in the last 35 steps "
         "it fell to ~0.33 while entropy jumped 0.38 -> 1.4, completions nearly doubled and hit the cap (clipped "
         "ratio 0.35) and grad norm rose x14. Seven logged points, but every side signal agrees: the policy is "
         "breaking now. Rollback to {hi} (window {lo}-{hi}; per-log sd ~0.02).", onset=705),
]

CASES = [s.case() for s in SPECS]
SPEC = {s.name: s for s in SPECS}


# ------------------------------------------------------------------------------------------------- run and check

STATIC_DIRS = {".git", ".hydra", "plots"}


def stamp(folder: Path, run: dict, story: Story) -> None:
    """mtimes as the run left them: logs at their last write, checkpoints when saved, side files at launch."""
    t_end, t0 = run["t_end"], run["t_end"] - run["reached"] * run["sps"]
    when = lambda s: min(t_end, t_end - (run["reached"] - s) * run["sps"])  # noqa: E731
    for p in sorted(folder.rglob("*"), key=lambda q: -len(q.parts)):
        if p.is_symlink():
            continue
        if p.is_file():
            rel = p.relative_to(folder)
            m = next((re.fullmatch(r"(?:checkpoint-|global_step_)(\d+)", part) for part in rel.parts
                      if re.fullmatch(r"(?:checkpoint-|global_step_)(\d+)", part)), None)
            if p in run["mtimes"]:
                t = run["mtimes"][p]
            elif m:
                t = when(int(m.group(1)))
            elif STATIC_DIRS & set(rel.parts) or p.name in STATIC_NAMES or rel.as_posix() in run["static"]:
                t = t0
            else:
                t = t_end
            os.utime(p, (t, t))
    for p in sorted((q for q in folder.rglob("*") if q.is_dir() and not q.is_symlink()), key=lambda q: -len(q.parts)):
        kids = [c.stat(follow_symlinks=False).st_mtime for c in p.iterdir()]
        if kids:
            os.utime(p, (max(kids), max(kids)))


def write_run(case: Case, folder: Path) -> None:
    spec = SPEC[case.name]
    st = spec.story
    run = st.draws(np.random.default_rng(case.seed), case.reached)
    rng2 = np.random.default_rng(case.seed + 7919)
    run.update(reached=case.reached, planned=case.planned or case.reached, eval_every=st.eval_every,
               eval_at_0=st.eval_at_0, log_every=st.log_every, sps=st.sps, t_end=NOW - 60 * st.age_min,
               seed=case.seed, mtimes={}, static=set(spec.files),
               redraw=lambda lo, hi: st.draws(rng2, hi, start=lo), **spec.opts)
    folder.mkdir(parents=True, exist_ok=True)
    case.write(run, folder)
    extras(folder, *spec.extras)
    for rel, text in spec.files.items():
        write_text(folder / rel, text)
    stamp(folder, run, st)


def check(cases: list[Case]) -> None:
    for c in cases:
        spec = SPEC[c.name]
        st = spec.story
        lv, steps = st.level(), st.hsteps(c.reached)
        best_s = max(steps, key=lv)
        sd = st.hsd(lv(best_s))
        print(f"{c.name}: {c.labels.get('preferred')} accept={c.labels.get('accept')} "
              f"window={c.labels.get('rollback_window')} onset={c.labels.get('onset_step')} "
              f"steps {c.reached}/{c.planned} age {st.age_min:g} min")
        print(f"    headline {st.headline}: first {lv(steps[0]):.3f}@{steps[0]} best {lv(best_s):.3f}@{best_s} "
              f"last {lv(steps[-1]):.3f}@{steps[-1]} sd {sd:.4f} "
              f"({(lv(best_s) - lv(steps[-1])) / sd:.1f} sd below best)")
        run = st.draws(np.random.default_rng(c.seed), c.reached)
        ev = run["eval"] if st.headline != TRAIN else [(s, {TRAIN: v["reward"]}) for s, v in run["train"]]
        print("    drawn " + " ".join(f"{s}:{v[st.headline]:.3f}" for s, v in ev[:: max(1, len(ev) // 12)])
              + f" | last {ev[-1][0]}:{ev[-1][1][st.headline]:.3f}")


HEADER = """# Holdout set 31: hand-built runs written by make_holdout31.py, independent of the assessor, its judges and the
# other holdout generators. Aimed at run folders as users have them on disk (parents of the logs, restarts, split
# and torn files, BOM / CRLF / ANSI, NaN spellings, unrelated files, live vs stalled vs finished by file age).
# Labels: what a careful practitioner should do under DESIGN.md's decision contract, read from the noise-free
# levels of each story. rollback_window is inclusive: from the first logged headline step whose level is within
# one sampling sd of the best level to the newest such step not after onset_step, in the run's own step units.
# Run `.venv/bin/python evals/holdout31/make_holdout31.py` to write runs/ (gitignored); `--check` prints levels.
"""


def main() -> None:
    holdout_kit.main(HERE, "make_holdout31.py", "holdout31.yaml", "h31-", "holdout31", HEADER, CASES, write_run,
                     check)


if __name__ == "__main__":
    main()
