"""Holdout set 29: blind-labelled RL post-training runs aimed at LEARNING SIGNAL and LIVE CHECKS of healthy runs.

Run from the worktree root:
    .venv/bin/python evals/holdout29/make_holdout29.py           # writes runs/ (gitignored) and holdout29.yaml
    .venv/bin/python evals/holdout29/make_holdout29.py --check   # also prints levels and rollback windows

Written without reading the assessor. Each case is a noise-free story (piecewise-linear levels per optimiser step)
drawn through this set's own noise model and written the way one framework/version writes its logs.

Noise model (this set's own):
  * binary task rewards: every step draws P prompts whose solve rates are logit-normal around the level
    (sigmoid(mu + 1.3 z), mu calibrated so the mean solve rate equals the level), G rollouts each Bernoulli.
    The batch mean, the batch std, the share of groups whose G rollouts all agree (zero advantage) and the
    batch max/min all come from the same draws. When every group agrees the loss is identically 0 and the
    logged grad norm is exactly 0.0 (GRPO-style trainers). TRL averages the batches since its last log;
    OpenRLHF logs the current step; verl logs every step;
  * reward-model scores: per-sample normal scores around the level;
  * held-out evals: Binomial(N, p) / N;
  * grad norm: level * lognormal(0.3), times (1 + Pareto(1.6)) on about one step in 25 (heavy right tail);
  * KL, entropy, lengths, clip fractions: multiplicative lognormal noise of a few percent (additive where signed).

Labels come from the stories (DESIGN.md, "What the three decisions mean"). The rollback window runs from the first
logged headline step whose noise-free level is within one sampling sd (of one logged value of the headline) of the
best level, to the newest such step not after the onset of the breakage. `--check` prints them.
"""

from __future__ import annotations

import csv
import json
import math
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
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
SIG = 1.3  # logit-scale spread of prompt difficulty
Level = Callable[[float], float]

_GX, _GW = np.polynomial.hermite_e.hermegauss(60)
_GW = _GW / _GW.sum()


def knots(*pts: tuple[float, float]) -> Level:
    xs, ys = zip(*pts, strict=True)
    return lambda s: float(np.interp(s, xs, ys))


def const(v: float) -> Level:
    return lambda s: v


def _sig(x):
    return 1.0 / (1.0 + np.exp(-x))


@lru_cache(maxsize=20000)
def mu_for(p: float) -> float:
    lo, hi = -25.0, 25.0
    for _ in range(60):
        mid = (lo + hi) / 2
        if float((_sig(mid + SIG * _GX) * _GW).sum()) < p:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def binary_sd(p: float, P: int, G: int) -> float:
    """sd of one batch mean of P prompts x G rollouts at mean solve rate p."""
    if p <= 0 or p >= 1:
        return 0.0
    q = _sig(mu_for(round(p, 5)) + SIG * _GX)
    var_q = float((q * q * _GW).sum()) - p * p
    within = float((q * (1 - q) * _GW).sum())
    return math.sqrt((var_q + within / G) / P)


# ------------------------------------------------------------------------------------------------------ the stories

@dataclass
class Story:
    reward: Level
    evals: dict[str, tuple[Level, int]] = field(default_factory=dict)  # eval key -> (level, N)
    headline: str = TRAIN
    eval_every: int = 0
    eval_at_0: bool = True
    rkind: str = "binary"  # binary | score
    rsd: float = 1.0
    P: int = 16
    G: int = 8
    log_every: int = 1
    log_mode: str = "avg"  # avg (TRL) | last (OpenRLHF with logging_steps > 1)
    side: dict[str, tuple[Level, float]] = field(default_factory=dict)  # name -> (level, noise)
    grad: Level = field(default=lambda s: 0.3)
    zero_grad: bool = True  # an all-agreeing batch gives grad norm 0.0
    post: Callable | None = None  # (s, v, rng) -> None: derived keys of this story
    sec_per_step: float = 60.0
    age_min: float = 5.0

    def batch(self, rng: np.random.Generator, p: float) -> dict:
        if self.rkind == "score":
            x = rng.normal(p, self.rsd, size=(self.P, self.G))
        elif p <= 0:
            x = np.zeros((self.P, self.G))
        elif p >= 1:
            x = np.ones((self.P, self.G))
        else:
            q = _sig(mu_for(round(p, 5)) + SIG * rng.normal(size=self.P))
            x = (rng.random((self.P, self.G)) < q[:, None]).astype(float)
        same = x.std(axis=1) == 0
        return dict(reward=float(x.mean()), reward_std=float(x.std(ddof=1)), zero_std=float(same.mean()),
                    group_std=float(x.std(axis=1, ddof=1).mean()), rmax=float(x.max()), rmin=float(x.min()),
                    all_same=bool(same.all()))

    def draws(self, rng: np.random.Generator, reached: int) -> dict:
        train = []
        for s in range(self.log_every, reached + 1, self.log_every):
            if self.log_mode == "last":
                bs = [self.batch(rng, self.reward(s))]
            else:
                bs = [self.batch(rng, self.reward(s - j)) for j in range(self.log_every - 1, -1, -1)]
            v = {k: float(np.mean([b[k] for b in bs])) for k in ("reward", "reward_std", "zero_std", "group_std")}
            v["rmax"] = max(b["rmax"] for b in bs)
            v["rmin"] = min(b["rmin"] for b in bs)
            g = self.grad(s) * math.exp(0.3 * rng.normal())
            if rng.random() < 1 / 25:
                g *= 1 + rng.pareto(1.6)
            if self.zero_grad and bs[-1]["all_same"]:
                g = 0.0
            v["grad_norm"] = g
            for k, (lvl, noise) in self.side.items():
                x = lvl(s)
                if noise > 0:
                    x *= math.exp(noise * rng.normal())
                elif noise < 0:
                    x += -noise * rng.normal()
                v[k] = x
            if self.post:
                self.post(s, v, rng)
            train.append((s, v))
        ev = []
        for s in self.eval_steps(reached):
            ev.append((s, {k: rng.binomial(n, min(max(lvl(s), 0.0), 1.0)) / n for k, (lvl, n) in self.evals.items()}))
        return dict(train=train, eval=ev)

    def eval_steps(self, reached: int) -> list[int]:
        if not self.evals:
            return []
        return list(range(0 if self.eval_at_0 else self.eval_every, reached + 1, self.eval_every))

    def headline_level(self) -> Level:
        return self.reward if self.headline == TRAIN else self.evals[self.headline][0]

    def headline_steps(self, reached: int) -> list[int]:
        if self.headline == TRAIN:
            return list(range(self.log_every, reached + 1, self.log_every))
        return self.eval_steps(reached)

    def headline_sd(self, p: float) -> float:
        if self.headline != TRAIN:
            return math.sqrt(p * (1 - p) / self.evals[self.headline][1])
        if self.rkind == "score":  # noqa: SIM108
            sd = self.rsd / math.sqrt(self.P * self.G)
        else:
            sd = binary_sd(p, self.P, self.G)
        return sd / math.sqrt(self.log_every if self.log_mode == "avg" else 1)


def window(story: Story, reached: int, onset: int) -> tuple[int, int]:
    lv, steps = story.headline_level(), story.headline_steps(reached)
    best = max(lv(s) for s in steps)
    sd = story.headline_sd(best)
    good = [s for s in steps if lv(s) >= best - sd - 1e-12]
    return good[0], max(s for s in good if s <= onset)


# ------------------------------------------------------------------------------------------------------ helpers

def g(x: float) -> float:
    """Six significant digits, as most loggers end up printing floats."""
    return float(f"{x:.6g}")


def wall(run: dict, s: float) -> float:
    return run["t_end"] - (run["reached"] - s) * run["sec"]


def named(v: dict, vocab: dict) -> dict:
    """Canonical keys -> framework keys (a vocab value may be a tuple of names); '=key' passes through literally."""
    out = {}
    for k, x in v.items():
        if k.startswith("="):
            out[k[1:]] = x
        elif k in vocab:
            names = vocab[k] if isinstance(vocab[k], tuple) else (vocab[k],)
            for n in names:
                out[n] = x
    return out


def touch(path: Path, t: float) -> None:
    os.utime(path, (t, t))


def settle_mtimes(folder: Path, t: float) -> None:
    """Everything not given its own time is last written at t (the run's newest write)."""
    for p in folder.rglob("*"):
        if p.stat().st_mtime > t:
            touch(p, t)


TRL = dict(reward="reward", reward_std="reward_std", zero_std="frac_reward_zero_std", kl="kl", entropy="entropy",
           length="completions/mean_length", length_max="completions/max_length", trunc="completions/clipped_ratio",
           clip="clip_ratio/region_mean", grad_norm="grad_norm", lr="learning_rate")
VERL = {"reward": ("critic/score/mean", "critic/rewards/mean"), "rmax": ("critic/score/max", "critic/rewards/max"),
        "rmin": ("critic/score/min", "critic/rewards/min"), "kl": "actor/kl_loss", "entropy": "actor/entropy",
        "length": "response_length/mean", "length_max": "response_length/max", "trunc": "response_length/clip_ratio",
        "clip": "actor/pg_clipfrac", "ppo_kl": "actor/ppo_kl", "grad_norm": "actor/grad_norm", "lr": "actor/lr"}
ORLHF = dict(reward=("reward", "rollout/reward_mean"), reward_std="rollout/reward_std", group_std="group_reward_std",
             kl="kl", length=("response_length", "rollout/response_length_mean"), trunc=("truncated",
             "rollout/truncated_rate"), clip="ppo_clip_ratio", ppo_kl="ppo_kl", vllm_kl="vllm_kl",
             grad_norm="actor_grad_norm", lr="actor_lr")
NEMO = dict(reward="train/reward", kl="train/kl_penalty", entropy="train/approx_entropy", grad_norm="train/grad_norm",
            lr="train/lr", length="train/mean_gen_tokens_per_sample", trunc="train/truncation_rate")


# ------------------------------------------------------------------------------------------------------ the writers

def _trl_rows(run: dict, vocab: dict, spe: int, num_tokens: bool, step_time: bool) -> list[dict]:
    rows, tokens = [], 0
    le = run["log_every"]
    for s, v in run["train"]:
        row = {k: (None if x is None else g(x)) for k, x in named(v, vocab).items()}
        if num_tokens:
            tokens += int(le * 16 * 8 * (v.get("length", 500) + 180))
            row["num_tokens"] = float(tokens)
        if step_time:
            row["step_time"] = g(run["sec"] * math.exp(0.05 * math.sin(s)))
        loss = v.get("loss", 0.0 if v["grad_norm"] == 0 and "kl" not in v  # zero advantage: the loss is exactly 0
                     else 0.0004 * math.sin(1.7 * s) + 0.0002 * math.cos(s))
        row.update(loss=None if loss is None else round(loss, 4), epoch=round(s / spe, 4), step=s)
        rows.append(row)
    for s, e in run["eval"]:
        row = {k: g(x) for k, x in e.items()}
        row.update(eval_loss=round(0.0003 * math.cos(s), 4), eval_runtime=round(141 + 4 * math.sin(s), 3),
                   eval_samples_per_second=3.55, eval_steps_per_second=0.113, epoch=round(s / spe, 4), step=s)
        rows.append(row)
    rows.sort(key=lambda r: (r["step"], "eval_runtime" in r))
    return rows


def w_trl(run: dict, folder: Path, vocab: dict = TRL, save_every: int = 100, keep: int | None = 3,
          logging_steps: int = 10, tb: bool = False, finished: bool = False, num_tokens: bool = True,
          step_time: bool = False, steps_per_epoch: int = 0, tb_upto: int | None = None,
          tb_extra: Callable | None = None) -> None:
    """TRL output_dir: checkpoint-N/trainer_state.json (save_total_limit=keep), optional runs/<date>_<host>/ TB."""
    planned, reached = run["planned"], run["reached"]
    spe = steps_per_epoch or planned
    rows = _trl_rows(run, vocab, spe, num_tokens, step_time)
    saves = list(range(save_every, reached + 1, save_every))
    if finished and reached not in saves:
        saves.append(reached)
    kept: list[int] = []
    for n in saves:
        hist = [r for r in rows if r["step"] <= n]
        st = trainer_state(hist, n, planned, logging_steps, save_every, run["eval_every"] or None,
                           round(n / spe, 4), max(1, round(planned / spe)), training_stop=finished and n == reached)
        ck = folder / f"checkpoint-{n}"
        dump_json(ck / "trainer_state.json", st)
        (ck / "adapter_config.json").write_text('{"peft_type": "LORA", "r": 32, "lora_alpha": 64}\n')
        (ck / "training_args.bin").write_bytes(b"\x80\x04\x95placeholder")
        for p in [*ck.iterdir(), ck]:
            touch(p, wall(run, n) + 40)
        kept.append(n)
        while keep and len(kept) > keep:
            old = kept.pop(0)
            for p in (folder / f"checkpoint-{old}").iterdir():
                p.unlink()
            (folder / f"checkpoint-{old}").rmdir()
    if finished:
        final = dict(train_runtime=round(reached * run["sec"], 1), train_samples_per_second=0.41,
                     train_steps_per_second=round(1 / run["sec"], 4), total_flos=0.0, train_loss=0.0003,
                     epoch=round(reached / spe, 4), step=reached)
        st = trainer_state([*rows, final], reached, planned, logging_steps, save_every, run["eval_every"] or None,
                           round(reached / spe, 4), max(1, round(planned / spe)), training_stop=True)
        dump_json(folder / "trainer_state.json", st)
        touch(folder / "trainer_state.json", wall(run, reached) + 60)
    if tb:
        t0 = wall(run, 0)
        stamp = time.strftime("%b%d_%H-%M-%S", time.localtime(t0))
        ev = []
        for r in rows:
            if tb_upto is not None and r["step"] > tb_upto:
                continue
            pre = "eval/" if "eval_runtime" in r else "train/"
            vals = {(pre + k.removeprefix("eval_")): x for k, x in r.items() if k not in ("step",)}
            ev.append((wall(run, r["step"]) + (30 if pre == "eval/" else 0), r["step"], vals))
        if tb_extra:
            tb_extra(run, ev)
        ev.sort(key=lambda e: e[0])
        path = tb_file(folder / "runs" / f"{stamp}_gpu-node-07" / f"events.out.tfevents.{int(t0)}.gpu-node-07.2231.0",
                       ev)
        touch(path, run["t_end"])


def _tqdm(n: int, total: int, sec: float, extra: str = "") -> str:
    pct = int(100 * n / total)
    fill = int(10 * n / total)
    bar = "█" * fill + " " * (10 - fill)

    def hms(x: float) -> str:
        x = int(x)
        return f"{x // 3600}:{x // 60 % 60:02d}:{x % 60:02d}" if x >= 3600 else f"{x // 60:02d}:{x % 60:02d}"

    return f"{pct:3d}%|{bar}| {n}/{total} [{hms(n * sec)}<{hms((total - n) * sec)}, {sec:.2f}s/it{extra}]"


def _pyrepr(d: dict) -> str:
    return "{" + ", ".join(f"'{k}': {x!r}" for k, x in d.items()) + "}"


def w_trl_console(run: dict, folder: Path, vocab: dict = TRL, version: str = "0.24.0", resume_at: int = 0,
                  name: str = "train.log", logging_steps: int = 10) -> None:
    """TRL/HF console: tqdm bar lines and str(logs) dicts (no 'step' key; the bar carries it)."""
    planned = run["planned"]
    head = ["INFO 11-27 06:02:11 [__init__.py:244] Automatically detected platform cuda.",
            f"trl=={version} transformers==4.57.1 accelerate==1.10.1 vllm==0.10.2",
            "***** Running training *****", "  Num examples = 7,473", "  Num Epochs = 1",
            "  Instantaneous batch size per device = 8", "  Gradient Accumulation steps = 4",
            f"  Total optimization steps = {planned:,}", "  Number of trainable parameters = 40,370,176"]
    lines = list(head)
    rows = _trl_rows(run, vocab, planned, True, version >= "0.26")
    for i, r in enumerate(rows):
        s = r.pop("step")
        if "eval_runtime" not in r:
            lines.append(_tqdm(s, planned, run["sec"]))
        lines.append(_pyrepr(r))
        if resume_at and s == resume_at and (i + 1 == len(rows) or rows[i + 1]["step"] != s):
            lines += ["Saving model checkpoint to outputs/checkpoint-%d" % s,  # noqa: UP031
                      "Traceback (most recent call last):",
                      "torch.distributed.DistNetworkError: Connection reset by peer", "",
                      "=== relaunch (resume_from_checkpoint=True) ===", *head,
                      "  Continuing training from checkpoint, will skip to saved global_step",
                      f"  Continuing training from global step {s}"]
    (folder / name).parent.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text("\n".join(lines) + "\n", encoding="utf-8")


def _np(x: float, np2: bool) -> str:
    if isinstance(x, int):
        return f"np.int64({x})" if np2 else str(x)
    return f"np.float64({x!r})" if np2 else repr(x)


def _verl_rows(run: dict, vocab: dict) -> dict[int, dict]:
    rows: dict[int, dict] = {}
    for s, e in run["eval"]:
        rows.setdefault(s, {}).update({k: g(x) for k, x in e.items()})
    for s, v in run["train"]:
        r = rows.setdefault(s, {})
        n = named(v, vocab)
        r.update({k: (g(x) if isinstance(x, float) else x) for k, x in n.items()})
        r["critic/advantages/mean"] = g(0.002 * math.sin(s))
        r["actor/pg_loss"] = g(0.01 * math.sin(2.3 * s))
        r["actor/pg_clipfrac_lower"] = 0.0
        gen = 40 + v.get("length", 800) / 25
        r["timing_s/gen"] = g(gen)
        r["timing_s/old_log_prob"] = g(gen * 0.12)
        r["timing_s/ref"] = g(gen * 0.11)
        r["timing_s/update_actor"] = g(gen * 0.35)
        r["timing_s/step"] = g(gen * 1.62)
        r["perf/total_num_tokens"] = int(512 * (v.get("length", 800) + 220))
        r["perf/throughput"] = g(r["perf/total_num_tokens"] / r["timing_s/step"] / 8)
        r["training/global_step"] = s
        r["training/epoch"] = int(s // 117)
    return rows


def w_verl_console(run: dict, folder: Path, vocab: dict = VERL, np2: bool = True, name: str = "train.log") -> None:
    """verl LocalLogger lines behind the Ray TaskRunner prefix, with the printed total and the tqdm bar."""
    planned = run["planned"]
    lines = ["2026-11-27 01:40:02,311 INFO worker.py:1879 -- Started a local Ray instance. View the dashboard at "
             "127.0.0.1:8265", "(TaskRunner pid=88101) Size of train dataloader: 117, Size of val dataloader: 1",
             f"(TaskRunner pid=88101) Total training steps: {planned}",
             "(TaskRunner pid=88101) Using LocalLogger is deprecated. The constructor API will change"]
    rows = _verl_rows(run, vocab)
    for s in sorted(rows):
        body = " - ".join(f"{k}:{_np(x, np2)}" for k, x in rows[s].items())
        lines.append(f"(TaskRunner pid=88101) step:{s} - {body}")
        if s:
            lines.append(f"Training Progress: {_tqdm(s, planned, run['sec'])}")
        if s and s % 100 == 0:
            lines.append(f"(WorkerDict pid=88744) [rank-0]: Saved model to checkpoints/verl_grpo/run/global_step_{s}/actor")
    (folder / name).write_text("\n".join(lines) + "\n", encoding="utf-8")


def w_verl_jsonl(run: dict, folder: Path, vocab: dict = VERL, project: str = "verl_dapo", exp: str = "run",
                 extra_cfg: str = "") -> None:
    """verl FileLogger ({"step": N, "data": {...}}) plus the Hydra config of the launch."""
    rows = _verl_rows(run, vocab)
    path = folder / project / f"{exp}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as fh:
        for s in sorted(rows):
            data = {k: (None if isinstance(x, float) and not math.isfinite(x) else x) for k, x in rows[s].items()}
            fh.write(json.dumps({"step": s, "data": data}, separators=(",", ":")) + "\n")
    cfg = folder / ".hydra" / "config.yaml"
    cfg.parent.mkdir(parents=True, exist_ok=True)
    cfg.write_text(f"trainer:\n  project_name: {project}\n  experiment_name: {exp}\n  logger:\n  - console\n  - file\n"
                   f"  total_epochs: 30\n  total_training_steps: {run['planned']}\n  save_freq: 100\n"
                   f"  test_freq: {run['eval_every']}\n  val_before_train: true\n{extra_cfg}")
    touch(cfg, wall(run, 0) - 120)


def w_orlhf_console(run: dict, folder: Path, vocab: dict = ORLHF, name: str = "train_grpo.log") -> None:
    """OpenRLHF (v0.10-style) console: launch args, tqdm lines, '✨ Global step N: {...}', eval summaries."""
    planned = run["planned"]
    lines = ["[2026-11-27 00:12:40,118] [INFO] [real_accelerator.py:254:get_accelerator] Setting ds_accelerator to "
             "cuda (auto detect)", "python3 -m openrlhf.cli.train_ppo_ray --advantage_estimator group_norm "
             "--n_samples_per_prompt 8 --rollout_batch_size 128 --train_batch_size 1024 --num_episodes 1 "
             "--max_samples 192000 --init_kl_coef 0.001 --use_kl_loss --eval_steps 50 --save_steps 100",
             f"(PPOTrainer pid=5120) num_update_steps_per_episodes: {planned}"]
    evals = dict(run["eval"])
    if 0 in evals:
        lines.append(f"(PPOTrainer pid=5120) Evaluation completed in 88.41 seconds, global_step 0, eval_metrics: "
                     f"{_pyrepr({k: g(x) for k, x in evals[0].items()})}")
    for s, v in run["train"]:
        d = {k: g(x) for k, x in named(v, vocab).items()}
        d["policy_loss"] = g(0.01 * math.sin(1.9 * s))
        d["return"] = g(v["reward"] - 0.001 * v.get("kl", 0))
        d["total_length"] = g(v.get("length", 800) + 164)
        gen = 60 + v.get("length", 800) / 18
        d.update({"timing/generation": g(gen), "timing/make_experience": g(gen * 0.2), "timing/ppo_train":
                  g(gen * 0.45), "timing/broadcast": g(3.1), "timing/step_total": g(gen * 1.65 + 3.1)})
        if s % 10 == 0:
            lines.append(f"Episode [1/1]: {_tqdm(s, planned, run['sec'], ', act_loss=%.3g, reward=%.3g' % (d['policy_loss'], d['reward']))}")  # noqa: UP031
        lines.append(f"(PPOTrainer pid=5120) ✨ Global step {s}: {_pyrepr(d)}")
        if s in evals:
            lines.append(f"(PPOTrainer pid=5120) Evaluation completed in 91.7 seconds, global_step {s}, eval_metrics: "
                         f"{_pyrepr({k: g(x) for k, x in evals[s].items()})}")
    (folder / name).write_text("\n".join(lines) + "\n", encoding="utf-8")


def w_tb(run: dict, folder: Path, vocab: dict, train_prefix: str = "", eval_prefix: str = "", sub: str = "",
         extra_files: dict | None = None) -> None:
    ev = []
    for s, v in run["train"]:
        ev.append((wall(run, s), s, {train_prefix + k: x for k, x in named(v, vocab).items()}))
    for s, e in run["eval"]:
        ev.append((wall(run, s) + 25, s, {eval_prefix + k: x for k, x in e.items()}))
    ev.sort(key=lambda e: e[0])
    t0 = wall(run, 0)
    path = tb_file(folder / sub / f"events.out.tfevents.{int(t0)}.dgx-a100-03.41877.0", ev)
    touch(path, run["t_end"])
    for rel, text in (extra_files or {}).items():
        p = folder / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
        touch(p, t0 - 60)


def w_wandb_history(run: dict, folder: Path, vocab: dict = TRL, cfg: dict | None = None,
                    name: str = "wandb_export_history.csv") -> None:
    """`run.history(samples=100000).to_csv()` of an HF/TRL run: train/* and eval/* keys, _step/_runtime/_timestamp."""
    t0 = wall(run, 0)
    recs = []
    for s, v in run["train"]:
        r = {"train/" + k: g(x) for k, x in named(v, vocab).items()}
        r.update({"train/global_step": s, "train/epoch": round(s / run["planned"], 4),
                  "train/loss": round(0.0004 * math.sin(s), 4)})
        recs.append((wall(run, s), 0, r))
    for s, e in run["eval"]:
        r = {"eval/" + k.removeprefix("eval_"): g(x) for k, x in e.items()}
        r.update({"train/global_step": s, "eval/runtime": 140.2, "train/epoch": round(s / run["planned"], 4)})
        recs.append((wall(run, s) + 30, 1, r))
    recs.sort(key=lambda x: (x[0], x[1]))
    cols = sorted({k for _, _, r in recs for k in r})
    with (folder / name).open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["", "_step", "_runtime", "_timestamp", *cols])
        for i, (t, _, r) in enumerate(recs):
            w.writerow([i, i, round(t - t0, 3), round(t, 3), *["" if r.get(c) is None else r[c] for c in cols]])
    if cfg:
        (folder / "config.yaml").write_text("wandb_version: 1\n\n" + "".join(
            f"{k}:\n  desc: null\n  value: {v}\n" for k, v in cfg.items()))


def w_wandb_panels(run: dict, folder: Path, panels: dict[str, str], run_name: str, every: int = 10) -> None:
    """W&B panel CSV exports (x axis train/global_step), one file per panel, downsampled, with __MIN/__MAX."""
    for fname, key in panels.items():
        is_eval = key.startswith("eval/")
        pts = [(s, e["eval_" + key.removeprefix("eval/")]) for s, e in run["eval"]] if is_eval else \
            [(s, named(v, TRL)[key.removeprefix("train/")]) for s, v in run["train"]]
        out = []
        for i in range(0, len(pts), 1 if is_eval else every):
            chunk = pts[i:i + (1 if is_eval else every)]
            vals = [x for _, x in chunk]
            out.append((chunk[-1][0], float(np.mean(vals)), min(vals), max(vals)))
        with (folder / fname).open("w", newline="") as fh:
            w = csv.writer(fh)
            col = f"{run_name} - {key}"
            w.writerow(["train/global_step", col, col + "__MIN", col + "__MAX"])
            for s, m, lo, hi in out:
                w.writerow([s, g(m), g(lo), g(hi)])


def w_custom_csv(run: dict, folder: Path, cols: dict[str, str], eval_col: str, eval_key: str,
                 name: str = "logs/metrics.csv", done_marker: bool = False) -> None:
    """A hand-written loop appending one CSV row per step; the eval column is empty between evals."""
    evals = dict(run["eval"])
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["step", "total_steps", *cols.values(), eval_col])
        for s, v in run["train"]:
            e = evals.get(s, {}).get(eval_key)
            w.writerow([s, run["planned"], *[f"{v[k]:.6g}" for k in cols], "" if e is None else f"{e:.6f}"])
    if done_marker:
        p = folder / "final_model" / "config.json"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text('{"architectures": ["Qwen2ForCausalLM"]}\n')


def w_custom_jsonl(run: dict, folder: Path, keys: dict[str, str], eval_keys: dict[str, str],
                   name: str = "metrics.jsonl", header: dict | None = None) -> None:
    """A hand-written loop: a config line, then {"step":..} train records and {"step":.., "eval/..":..} records."""
    path = folder / name
    with path.open("w") as fh:
        if header:
            fh.write(json.dumps({"event": "config", **header}) + "\n")
        evals = dict(run["eval"])
        if 0 in evals:
            fh.write(json.dumps({"step": 0, **{eval_keys[k]: x for k, x in evals[0].items()}}) + "\n")
        for s, v in run["train"]:
            fh.write(json.dumps({"step": s, "time": round(wall(run, s), 1),
                                 **{out: g(v[k]) for k, out in keys.items()}}) + "\n")
            if s in evals:
                fh.write(json.dumps({"step": s, **{eval_keys[k]: x for k, x in evals[s].items()}}) + "\n")


# ------------------------------------------------------------------------------------------------------- the cases

@dataclass
class Spec:
    name: str
    story: Story
    write: Callable
    seed: int
    steps: int | tuple[int, int]
    kind: str  # ok | conv | stop | rb | sor
    tags: str
    why: str
    onset: int | None = None

    def case(self) -> Case:
        reached = self.steps[0] if isinstance(self.steps, tuple) else self.steps
        if self.kind == "ok":
            labels = dict(HEALTHY)
        elif self.kind == "conv":
            labels = converged()
            labels["onset_step"] = self.onset
        elif self.kind == "stop":
            labels = stop(self.onset)
        else:
            lo, hi = window(self.story, reached, self.onset)
            labels = (rollback if self.kind == "rb" else stop_or_rollback)(lo, hi, self.onset)
        return Case(self.name, lambda *a: None, self.write, self.seed, self.steps, labels, self.tags, self.why)


def trl_lr(peak: float, planned: int, warm: int = 0, kind: str = "linear") -> Level:
    def f(s: float) -> float:
        if warm and s < warm:
            return peak * s / warm
        x = (s - warm) / max(1, planned - warm)
        return peak * (1 - x) if kind == "linear" else (peak * 0.5 * (1 + math.cos(math.pi * x)) if kind == "cosine"
                                                          else peak)
    return f


def p_acc_copy(fn: str) -> Callable:
    """TRL with a single reward function: rewards/<fn>/mean equals reward, /std equals reward_std."""
    def post(s, v, rng):
        v[f"=rewards/{fn}/mean"] = v["reward"]
        v[f"=rewards/{fn}/std"] = v["reward_std"]
    return post


# ---- shared healthy stories (cut live at several points of their plan)

def slow_starter() -> Story:
    """TRL 0.21 GRPO, Qwen2.5-1.5B on olympiad-level problems: nothing solved for ~220 steps, then lift-off."""
    return Story(knots((0, .0001), (220, .0002), (300, .05), (450, .16), (700, .27), (1000, .33)),
                 {"eval_reward": (knots((0, .001), (220, .002), (300, .035), (450, .12), (700, .22), (1000, .27)),
                                  400)}, "eval_reward", eval_every=50, P=16, G=8, log_every=10,
                 side=dict(entropy=(knots((0, .64), (300, .6), (1000, .5)), .03),
                           length=(knots((0, 1850), (300, 1700), (1000, 1500)), .04),
                           length_max=(const(3072), 0), trunc=(knots((0, .31), (300, .24), (1000, .12)), .08),
                           clip=(const(0.0), 0), lr=(trl_lr(1e-6, 1000, 30), 0)),
                 grad=knots((0, .12), (300, .09), (1000, .07)), post=p_acc_copy("accuracy_reward"),
                 sec_per_step=95, age_min=6)


def orlhf_story() -> Story:
    """OpenRLHF GRPO (group_norm), Qwen2.5-7B on MATH: warm-up grad/KL spikes, early dip, a mid-run pause."""
    return Story(knots((0, .32), (60, .33), (130, .29), (200, .35), (600, .47), (780, .53), (980, .535),
                       (1100, .56), (1500, .62)),
                 {"eval_math500_pass1": (knots((0, .40), (60, .40), (130, .37), (200, .42), (600, .52), (780, .57),
                                               (980, .575), (1100, .60), (1500, .65)), 500)},
                 "eval_math500_pass1", eval_every=50, P=16, G=8, log_every=1,
                 side=dict(kl=(knots((0, 0), (30, .012), (70, .004), (1500, .03)), .1),
                           length=(knots((0, 640), (150, 560), (1500, 720)), .04),
                           trunc=(const(.012), .2), clip=(knots((0, .03), (40, .006), (1500, .008)), .15),
                           ppo_kl=(const(2e-4), .3), vllm_kl=(const(1.1e-3), .1),
                           lr=(lambda s: 5e-7 * min(1.0, s / 20), 0)),
                 grad=knots((0, 2.6), (25, .6), (60, .33), (1500, .3)), zero_grad=False,
                 post=lambda s, v, rng: v.update(group_std=v["group_std"]), sec_per_step=54, age_min=3)


def trl1x_story() -> Story:
    """TRL 1.x GRPO (beta 0.02, num_iterations 2), two reward functions; entropy drop at the start that settles."""
    def post(s, v, rng):
        fmt = min(1.0, max(0.0, knots((0, .55), (80, .95), (2000, .98))(s) + 0.01 * rng.normal()))
        v["=rewards/correctness/mean"] = v["reward"]
        v["=rewards/correctness/std"] = v["reward_std"]
        v["=rewards/format_tags/mean"] = fmt
        v["=rewards/format_tags/std"] = math.sqrt(max(fmt * (1 - fmt), 0))
        v["reward"] = v["reward"] + 0.2 * fmt
        v["=clip_ratio/low_mean"] = v["clip"] * 0.45
        v["=clip_ratio/high_mean"] = v["clip"] * 0.55
    return Story(knots((0, .22), (100, .26), (300, .36), (800, .50), (1150, .555), (1350, .56), (1400, .575),
                       (2000, .64)),
                 {"eval_rewards/correctness/mean": (knots((0, .20), (300, .33), (800, .47), (1150, .52), (1350, .525),
                                                          (1400, .54), (2000, .60)), 500)},
                 "eval_rewards/correctness/mean", eval_every=100, P=32, G=8, log_every=10,
                 side=dict(entropy=(knots((0, .95), (60, .42), (150, .50), (2000, .40)), .03),
                           kl=(knots((0, 0), (25, .03), (80, .006), (2000, .05)), .08),
                           length=(knots((0, 700), (60, 520), (2000, 610)), .03), length_max=(const(2048), 0),
                           trunc=(const(.015), .2), clip=(knots((0, .02), (60, .006), (2000, .005)), .15),
                           lr=(trl_lr(1e-6, 2000, 40, "cosine"), 0)),
                 grad=knots((0, .9), (20, 1.6), (60, .25), (2000, .2)), post=post, sec_per_step=70, age_min=4)


def w_slow(run, folder):
    w_trl(run, folder, save_every=50, keep=3)


def w_trl1x(run, folder):
    w_trl(run, folder, save_every=100, keep=2, tb=True, step_time=True)


# ---- individual stories

def plateau_high() -> Story:
    def post(s, v, rng):
        v["=rewards/accuracy_reward/mean"] = v["reward"]
    return Story(knots((0, .45), (600, .76), (1000, .84), (1300, .842)),
                 {"eval_reward": (knots((0, .42), (600, .70), (1000, .78), (1300, .782)), 1000)}, "eval_reward",
                 eval_every=100, P=32, G=8, log_every=10,
                 side=dict(entropy=(knots((0, .55), (1300, .36)), .03), kl=(knots((0, 0), (1300, .018)), .08),
                           length=(knots((0, 430), (1300, 520)), .03), trunc=(const(.006), .2),
                           clip=(const(0.0), 0), lr=(trl_lr(1e-6, 2500, 50, "cosine"), 0)),
                 grad=const(.18), post=post, sec_per_step=40, age_min=7)


def penalty_rampin() -> Story:
    """Hand loop: total = correct - lambda(s) * max(0, len - 400) / 400, lambda ramps 0 -> 0.3 over 300..700."""
    lam = knots((0, 0), (300, 0), (700, .3), (2000, .3))
    ln = knots((0, 620), (300, 610), (700, 500), (1200, 450))

    def post(s, v, rng):
        v["correct"] = v["reward"]
        v["lam"] = lam(s)
        pen = lam(s) * max(0.0, v["length"] - 400) / 400
        v["pen"] = -pen
        v["total"] = v["reward"] - pen
    return Story(knots((0, .55), (1200, .74)), {"gsm8k_acc": (knots((0, .57), (1200, .73)), 1319)}, "gsm8k_acc",
                 eval_every=100, P=32, G=8, side=dict(length=(ln, .05), kl=(knots((0, 0), (1200, .012)), .1),
                                                      entropy=(knots((0, .5), (1200, .41)), .03), lr=(const(2e-6), 0)),
                 grad=const(.25), post=post, sec_per_step=30, age_min=2)


def nemo_story() -> Story:
    def post(s, v, rng):
        v["=train/baseline_reward/pct_0"] = 100 * v["zero_std"] * (1 - v["reward"])
        v["=train/baseline_reward/pct_1"] = 100 * v["zero_std"] * v["reward"]
        v["=timing/train/total_step_time"] = 48 + v["length"] / 30
    return Story(knots((0, .41), (600, .55)), {"validation/accuracy": (knots((0, .40), (600, .52)), 500)},
                 "validation/accuracy", eval_every=25, P=32, G=8,
                 side=dict(kl=(knots((0, 0.0), (10, .0002), (600, .0025)), .1), entropy=(knots((0, .48), (600, .43)), .03),
                           length=(knots((0, 380), (600, 420)), .03), trunc=(const(.004), .3), lr=(const(1e-6), 0)),
                 grad=const(.2), zero_grad=False, post=post, sec_per_step=60, age_min=5)


def dapo_story() -> Story:
    def post(s, v, rng):
        v["=train/num_gen_batches"] = int(min(10, max(1, rng.poisson(knots((0, 4.2), (600, 2.1))(s)))))
    return Story(knots((0, .38), (600, .47)), {"val-core/aime2024/acc/mean@32": (knots((0, .10), (600, .20)), 960)},
                 "val-core/aime2024/acc/mean@32", eval_every=25, P=32, G=16,
                 side=dict(entropy=(knots((0, .62), (600, .55)), .03), length=(knots((0, 3900), (600, 5200)), .03),
                           length_max=(const(20480), 0), trunc=(knots((0, .02), (600, .04)), .1),
                           clip=(const(.0016), .15), ppo_kl=(const(-3e-5), -2e-5), kl=(const(0.0), 0),
                           lr=(const(1e-6), 0)),
                 grad=const(.14), post=post, sec_per_step=420, age_min=9)


def sparse_verl() -> Story:
    return Story(knots((0, .02), (150, .03), (900, .15), (1500, .2)),
                 {"val-core/math_l5/acc/mean@4": (knots((0, .025), (150, .03), (900, .12)), 1200)},
                 "val-core/math_l5/acc/mean@4", eval_every=50, P=64, G=8,
                 side=dict(entropy=(knots((0, .55), (900, .44)), .03), kl=(knots((0, 0), (900, .004)), .1),
                           length=(knots((0, 2900), (900, 3400)), .03), length_max=(const(8192), 0),
                           trunc=(knots((0, .06), (900, .08)), .1), clip=(const(.003), .2), ppo_kl=(const(1e-4), .3),
                           lr=(const(1e-6), 0)),
                 grad=const(.15), sec_per_step=150, age_min=3)


def all_fail() -> Story:
    return Story(const(0.0), {"eval_reward": (const(0.0), 500)}, "eval_reward", eval_every=100, P=16, G=8,
                 log_every=10, side=dict(entropy=(const(.71), .02), length=(const(1900), .03),
                                         length_max=(const(2048), 0), trunc=(const(.35), .08), clip=(const(0.0), 0),
                                         lr=(trl_lr(1e-6, 1200, 0), 0)),
                 grad=const(.1), post=p_acc_copy("math_verify_reward"), sec_per_step=80, age_min=5)


def format_only() -> Story:
    def post(s, v, rng):
        fmt = min(1.0, max(0.0, knots((0, .05), (250, .55), (700, .90))(s) + 0.02 * rng.normal()))
        v["=rewards/correctness_reward/mean"] = v["reward"]
        v["=rewards/correctness_reward/std"] = v["reward_std"]
        v["=rewards/strict_format_reward/mean"] = fmt
        v["=rewards/strict_format_reward/std"] = math.sqrt(fmt * (1 - fmt))
        v["reward"] = v["reward"] + 0.5 * fmt
        v["zero_std"] = max(0.0, v["zero_std"] - 0.8 * fmt * (1 - fmt))
        v["grad_norm"] = v["grad_norm"] or 0.05 * math.exp(0.3 * rng.normal())
    return Story(const(.01), {"eval_rewards/correctness_reward/mean": (const(.012), 400)},
                 "eval_rewards/correctness_reward/mean", eval_every=100, P=16, G=8, log_every=10,
                 side=dict(entropy=(knots((0, .58), (700, .45)), .03), kl=(knots((0, 0), (700, .02)), .1),
                           length=(knots((0, 640), (700, 540)), .03), trunc=(const(.02), .2), clip=(const(0.0), 0),
                           lr=(trl_lr(1e-6, 1000, 20), 0)),
                 grad=const(.12), post=post, sec_per_step=50, age_min=4)


def eval_flat_verl() -> Story:
    return Story(knots((0, .30), (800, .58), (1200, .62)), {"val-core/gsm_hard/acc/mean@1": (const(.31), 1000)},
                 "val-core/gsm_hard/acc/mean@1", eval_every=40, P=32, G=8,
                 side=dict(entropy=(knots((0, .52), (800, .31)), .03), kl=(knots((0, 0), (800, .03)), .08),
                           length=(knots((0, 340), (800, 300)), .03), trunc=(const(.003), .3), clip=(const(.002), .2),
                           ppo_kl=(const(1e-4), .3), lr=(const(1e-6), 0)),
                 grad=const(.22), sec_per_step=45, age_min=6)


def kl_zero_rloo() -> Story:
    def post(s, v, rng):
        v["kl"] = 0.0
        v["=rewards/unit_test_pass/mean"] = v["reward"]
        v["=rewards/unit_test_pass/std"] = v["reward_std"]
    return Story(const(.46), {"eval_reward": (const(.44), 500)}, "eval_reward", eval_every=50, P=32, G=2,
                 log_every=10, side=dict(entropy=(const(.58), .015), length=(const(410), .03), trunc=(const(.01), .2),
                                         clip=(const(0.0), 0), kl=(const(0.0), 0),
                                         lr=(lambda s: 1e-6 * s / 50000, 0)),
                 grad=const(.35), post=post, sec_per_step=35, age_min=3)


def len_coef_anneal() -> Story:
    coef = knots((0, .5), (900, .05))

    def post(s, v, rng):
        over = max(0.0, v["length"] - 512) / 512
        v["correct"] = v["reward"]
        v["coef"] = coef(s)
        v["pen"] = -coef(s) * over
        v["total"] = v["reward"] - coef(s) * over
    return Story(const(.47), {"eval_acc": (const(.45), 1000)}, "eval_acc", eval_every=50, P=32, G=8,
                 side=dict(length=(const(780), .04), entropy=(const(.47), .02), kl=(knots((0, 0), (100, .004),
                                                                                          (900, .006)), .1),
                           lr=(const(1e-6), 0)),
                 grad=const(.2), post=post, sec_per_step=40, age_min=4)


def template_lost() -> Story:
    def post(s, v, rng):
        v["=rewards/accuracy_reward/mean"] = v["reward"]
        v["=rewards/accuracy_reward/std"] = v["reward_std"]
        if s > 600:
            v["length"] = 2048.0
            v["length_max"] = 2048.0
            v["trunc"] = 1.0
    return Story(knots((0, .05), (450, .37), (600, .41), (601, 0.0), (1500, 0.0)),
                 {"eval_reward": (knots((0, .06), (450, .36), (600, .40), (601, 0.0), (1500, 0.0)), 500)},
                 "eval_reward", eval_every=50, P=16, G=8, log_every=10,
                 side=dict(entropy=(knots((0, .6), (600, .48), (601, 1.9), (1500, 1.9)), .03),
                           length=(knots((0, 900), (600, 760)), .03), length_max=(const(2048), 0),
                           trunc=(knots((0, .05), (600, .02)), .1), clip=(const(0.0), 0),
                           lr=(trl_lr(1e-6, 1500, 30), 0)),
                 grad=const(.15), post=post, sec_per_step=75, age_min=5)


def orlhf_sync_break() -> Story:
    return Story(knots((0, .30), (650, .55), (700, .555), (900, .30)),
                 {"eval_math_pass1": (knots((0, .32), (650, .52), (700, .525), (900, .33)), 500)}, "eval_math_pass1",
                 eval_every=25, P=16, G=8,
                 side=dict(kl=(knots((0, 0), (700, .02), (900, .09)), .08),
                           length=(knots((0, 700), (700, 760), (900, 1350)), .04),
                           trunc=(knots((0, .01), (700, .01), (900, .12)), .15),
                           clip=(knots((0, .01), (700, .01), (760, .25), (900, .33)), .1), ppo_kl=(const(3e-4), .3),
                           vllm_kl=(knots((0, .001), (700, .001), (720, .06), (900, .08)), .1), lr=(const(5e-7), 0)),
                 grad=knots((0, .3), (700, .3), (760, 1.2), (900, 1.6)), zero_grad=False, sec_per_step=60, age_min=4)


def finished_plateau() -> Story:
    return Story(knots((0, .38), (900, .66), (1300, .71), (2000, .715)),
                 {"eval_acc": (knots((0, .36), (900, .61), (1300, .66), (2000, .662)), 500)}, "eval_acc",
                 eval_every=100, P=16, G=8,
                 side=dict(kl=(knots((0, 0), (2000, .04)), .1), entropy=(knots((0, .55), (2000, .30)), .03),
                           length=(knots((0, 480), (2000, 410)), .03), lr=(trl_lr(3e-6, 2000, 0, "cosine"), 0),
                           loss=(const(0.0), -0.02)),
                 grad=const(.2), sec_per_step=50, age_min=150)


def conv_panels() -> Story:
    return Story(knots((0, .42), (880, .70), (1600, .705)), {"eval_reward": (knots((0, .40), (880, .66),
                                                                                   (1600, .663)), 800)},
                 "eval_reward", eval_every=100, P=32, G=8, log_every=1,
                 side=dict(kl=(knots((0, 0), (1600, .03)), .1), entropy=(knots((0, .5), (1600, .33)), .03),
                           length=(knots((0, 500), (1600, 470)), .03), lr=(trl_lr(1e-6, 1600, 30, "cosine"), 0)),
                 grad=const(.2), sec_per_step=45, age_min=6)


def nan_after_save() -> Story:
    def post(s, v, rng):
        v["=rewards/accuracy_reward/mean"] = v["reward"]
        if s >= 860:
            v["grad_norm"] = float("nan")
            v["loss"] = float("nan")
            v["entropy"] = float("nan")
            v["length"] = 1024.0
            v["trunc"] = 1.0
    return Story(knots((0, .30), (700, .62), (850, .63), (860, .0), (2000, .0)), {}, TRAIN, P=16, G=8, log_every=10,
                 side=dict(entropy=(knots((0, .5), (850, .41)), .03), kl=(knots((0, 0), (850, .03)), .08),
                           length=(knots((0, 600), (850, 520)), .03), trunc=(const(.01), .2), clip=(const(0.0), 0),
                           lr=(trl_lr(1e-6, 2000, 0), 0)),
                 grad=knots((0, .2), (840, .25), (855, 8.0)), post=post, sec_per_step=60, age_min=5)


def two_evals() -> Story:
    def post(s, v, rng):
        v["=rewards/math_accuracy/mean"] = v["reward"]
    return Story(knots((0, .45), (550, .60), (1000, .63)),
                 {"eval_math_reward": (knots((0, .48), (550, .58), (1000, .59)), 500),
                  "eval_ifeval_reward": (knots((0, .74), (450, .79), (550, .795), (1000, .70)), 541)},
                 "eval_ifeval_reward", eval_every=50, P=32, G=8, log_every=10,
                 side=dict(entropy=(knots((0, .52), (1000, .30)), .03), kl=(knots((0, 0), (550, .02), (1000, .07)), .08),
                           length=(knots((0, 520), (1000, 610)), .03), trunc=(const(.01), .2), clip=(const(.004), .2),
                           lr=(trl_lr(1e-6, 2000, 50, "cosine"), 0)),
                 grad=const(.2), post=post, sec_per_step=55, age_min=5)


def saturated() -> Story:
    def post(s, v, rng):
        v["=rewards/gsm8k_exact/mean"] = v["reward"]
    return Story(knots((0, .72), (350, .96), (800, .97)), {"eval_reward": (knots((0, .70), (350, .89), (800, .895)),
                                                                           1319)},
                 "eval_reward", eval_every=50, P=32, G=8, log_every=10,
                 side=dict(entropy=(knots((0, .45), (350, .16), (800, .11)), .03),
                           kl=(knots((0, 0), (350, .03), (800, .05)), .08), length=(knots((0, 300), (800, 240)), .03),
                           trunc=(const(.002), .3), clip=(const(0.0), 0), lr=(trl_lr(1e-6, 2000, 20), 0)),
                 grad=knots((0, .25), (350, .1), (800, .06)), post=post, sec_per_step=30, age_min=3)


def never_lifts() -> Story:
    return Story(const(.004), {"eval_reward": (const(.005), 500)}, "eval_reward", eval_every=50, P=16, G=8,
                 log_every=10, side=dict(entropy=(const(.66), .02), kl=(knots((0, 0), (50, .0004), (450, .0006)), .15),
                                         length=(const(1450), .03), trunc=(const(.12), .1), clip=(const(0.0), 0),
                                         lr=(trl_lr(1e-6, 1000, 30), 0)),
                 grad=const(.08), post=p_acc_copy("accuracy_reward"), sec_per_step=90, age_min=8)


def entropy_runaway() -> Story:
    return Story(knots((0, .40), (250, .58), (350, .60), (700, .59)),
                 {"val-core/openai/gsm8k/acc/mean@1": (knots((0, .42), (300, .60), (350, .605), (700, .578)), 1319)},
                 "val-core/openai/gsm8k/acc/mean@1", eval_every=25, P=64, G=8,
                 side=dict(entropy=(knots((0, .9), (100, .35), (400, .08), (700, .04)), .04),
                           kl=(knots((0, 0), (350, .02), (700, .06)), .08), length=(knots((0, 260), (700, 205)), .03),
                           trunc=(const(.002), .3), clip=(knots((0, .004), (700, .0015)), .2),
                           ppo_kl=(const(1e-4), .3), lr=(const(1e-6), 0)),
                 grad=knots((0, .3), (700, .12)), sec_per_step=40, age_min=4)


def sparse_fade() -> Story:
    def post(s, v, rng):
        v["group_std"] = v["group_std"]
    return Story(knots((0, .02), (300, .12), (420, .125), (800, .05)),
                 {"eval_omni_pass1": (knots((0, .025), (300, .10), (420, .105), (800, .06)), 500),
                  "eval_omni_pass8": (knots((0, .09), (300, .23), (420, .24), (800, .16)), 500)},
                 "eval_omni_pass1", eval_every=20, P=32, G=8, log_every=1,
                 side=dict(kl=(knots((0, 0), (420, .01), (800, .03)), .08),
                           length=(knots((0, 2400), (420, 2600), (800, 1900)), .04), trunc=(const(.05), .1),
                           clip=(const(.01), .15), ppo_kl=(const(2e-4), .3), vllm_kl=(const(1e-3), .1),
                           lr=(const(5e-7), 0)),
                 grad=knots((0, .2), (800, .1)), zero_grad=False, sec_per_step=80, age_min=6)


NEMO_CFG = "grpo:\n  max_num_steps: 1000\n  num_prompts_per_step: 32\n  num_generations_per_prompt: 8\n" \
           "  val_period: 25\n  val_at_start: true\nloss_fn:\n  reference_policy_kl_penalty: 0.1\n"
W_SPARSE_VERL = writer(w_verl_console)(VERL, True, "main_ppo.log")
TRL_NOKL = {k: v for k, v in TRL.items() if k != "kl"}

SPECS: list[Spec] = [
    # ------------------------------------------------------------------ healthy: slow starter, cut live twice
    Spec("ok-slow-starter-reward-zero-until-220-lifting-at-300-of-1000-trl021-ckpts", slow_starter(), w_slow, 2901,
         (300, 1000), "ok", "healthy live trl trainer-state slow-starter zero-reward learning-signal",
         "TRL 0.21 GRPO (beta 0, so no kl key), Qwen2.5-1.5B on olympiad problems, 16 prompts x 8 rollouts, "
         "logging every 10 steps, max_steps 1000 in trainer_state. For the first ~220 steps almost every group "
         "fails: reward is exactly 0 on most logged rows, frac_reward_zero_std ~1 and grad_norm 0.0 whenever the "
         "last batch had no signal. From ~220 the model starts solving a few: reward level 0.0002 -> 0.05 by 300 "
         "(about 6 sds of a 10-step mean), zero-std fraction falling, eval_reward 0.002 -> 0.035 at 300 (N=400). Newest "
         "checkpoint-300 written 6 minutes ago, 70% of the plan left. A slow starter that has just lifted off: "
         "continue."),
    Spec("ok-slow-starter-reward-zero-until-220-then-0.2-at-550-of-1000-trl021-ckpts", slow_starter(), w_slow, 2902,
         (550, 1000), "ok", "healthy live trl trainer-state slow-starter zero-reward learning-signal",
         "Same slow-starting TRL 0.21 GRPO run checked at step 550 of 1000: the first 220 steps are all-fail "
         "(reward 0, zero-std ~1, grad_norm 0.0 on most logs), then the reward climbs 0.0002 -> 0.20 and "
         "eval_reward 0.002 -> 0.16 (N=400, sd 0.018), still rising, lr still at ~half its peak. Healthy: continue."),
    # ------------------------------------------------------------------ healthy: sparse but real
    Spec("ok-sparse-score-2-to-15pct-val-core-confirms-at-900-of-1500-verl-console-np2", sparse_verl(),
         W_SPARSE_VERL, 3203, (900, 1500), "ok",
         "healthy live verl console numpy2 sparse-reward learning-signal",
         "verl GRPO on MATH level-5 (64 prompts x 8, 8k cap), console with numpy-2 reprs and the printed 'Total "
         "training steps: 1500'. critic/score/mean is small but rising: 0.02 -> 0.15 over 900 steps (batch sd ~0.01 "
         "at the end), and val-core/math_l5/acc/mean@4 (1200 samples, sd 0.009) confirms it: 0.025 -> 0.12. "
         "Entropy 0.55 -> 0.44, kl_loss tiny, clip fractions small. Small absolute numbers, real trend, 40% of the "
         "plan left: continue."),
    # ------------------------------------------------------------------ healthy: OpenRLHF series at 15/40/70 %
    Spec("ok-live-15pct-225-of-1500-warmup-gradnorm-kl-spike-early-dip-openrlhf-console", orlhf_story(),
         writer(w_orlhf_console)(), 2904, (225, 1500), "ok",
         "healthy live openrlhf console early-dip warmup-spike series-a",
         "OpenRLHF 0.10 GRPO (group_norm, 16x8, use_kl_loss), console log of '✨ Global step N' dicts, "
         "num_update_steps_per_episodes 1500. Checked at 225 (15%): actor_grad_norm starts at ~2.6 and settles to "
         "0.33 by step 60, kl bumps to 0.012 at step 30 and falls back to 0.004, the reward dips 0.33 -> 0.29 "
         "around step 130 (eval_math500_pass1 0.40 -> 0.37 at 130, 1.4 sd with N=500) and is back at 0.36 by "
         "225. Warm-up transients and an early noisy dip: continue."),
    Spec("ok-live-40pct-600-of-1500-climbing-after-early-dip-openrlhf-console", orlhf_story(),
         writer(w_orlhf_console)(), 2905, (600, 1500), "ok",
         "healthy live openrlhf console early-dip series-a",
         "Same OpenRLHF GRPO run at step 600 of 1500 (40%): after the warm-up spikes and the dip around 130, "
         "reward 0.29 -> 0.47 and eval_math500_pass1 0.37 -> 0.52 (N=500, sd 0.022); kl 0.004 -> 0.013, "
         "clip ratio ~0.007, vllm_kl ~1e-3. Climbing: continue."),
    Spec("ok-live-70pct-1050-of-1500-reward-paused-780-980-climbing-again-openrlhf-console", orlhf_story(),
         writer(w_orlhf_console)(), 2906, (1050, 1500), "ok",
         "healthy live openrlhf console reward-pause series-a",
         "Same OpenRLHF GRPO run at step 1050 of 1500 (70%): the reward paused for ~200 steps (0.53 at 780, 0.535 "
         "at 980; eval 0.57 -> 0.575) and then resumed (0.547 at 1050; eval 0.59, N=500 sd 0.022). KL 0.02, "
         "clip ratio and vllm_kl unchanged, grad norm flat: nothing broke, the pause is a plateau between skills "
         "with 30% of the plan left. Continue."),
    # ------------------------------------------------------------------ healthy: TRL 1.x series at 15/40/70 %
    Spec("ok-live-15pct-300-of-2000-entropy-drop-settles-kl-warmup-bump-trl1x-tb-ckpts", trl1x_story(), w_trl1x,
         2907, (300, 2000), "ok",
         "healthy live trl trainer-state tensorboard entropy-drop warmup-spike series-b",
         "TRL 1.x GRPO (beta 0.02, num_iterations 2, correctness + 0.2 x format_tags), TB under runs/ and "
         "checkpoint-N/trainer_state.json every 100 (max_steps 2000). At 300 (15%): entropy falls 0.95 -> 0.42 in "
         "the first 60 steps while the format reward locks in (0.55 -> 0.95), then settles back to ~0.50; kl jumps "
         "to 0.03 at step 25 and returns to 0.006; grad_norm 1.6 at step 20, 0.25 from 60. Correctness reward "
         "0.22 -> 0.36 and eval correctness 0.20 -> 0.33 (N=500). Start-up transients that settled: continue."),
    Spec("ok-live-40pct-800-of-2000-steady-climb-trl1x-tb-ckpts", trl1x_story(), w_trl1x, 3008, (800, 2000), "ok",
         "healthy live trl trainer-state tensorboard series-b",
         "Same TRL 1.x GRPO at 800 of 2000 (40%): correctness 0.36 -> 0.50, eval correctness 0.33 -> 0.47 (N=500, "
         "sd 0.022), entropy steady ~0.48, kl slowly 0.006 -> 0.02, clip ratios ~0.005. Steady climb: continue."),
    Spec("ok-live-70pct-1400-of-2000-pause-1150-1350-resumes-trl1x-tb-ckpts", trl1x_story(), w_trl1x, 3209,
         (1400, 2000), "ok", "healthy live trl trainer-state tensorboard reward-pause series-b",
         "Same TRL 1.x GRPO at 1400 of 2000 (70%): correctness paused 0.555 -> 0.56 between 1150 and 1350 "
         "(eval 0.52 -> 0.525) and is climbing again (0.575 at 1400, eval 0.54 at 1400, N=500 sd 0.022). Entropy "
         "~0.44, kl 0.035, cosine lr still at ~35% of peak. A pause, not a plateau: continue."),
    # ------------------------------------------------------------------ healthy: other learning-signal twins
    Spec("ok-plateau-high-0.84-since-1000-at-1300-of-2500-budget-left-wandb-history-csv", plateau_high(),
         writer(w_wandb_history)(TRL, dict(max_steps=2500, beta=0.04, num_generations=8, learning_rate=1e-6,
                                           lr_scheduler_type="cosine", logging_steps=10)),
         2910, (1300, 2500), "ok", "healthy live wandb history-csv plateau-high budget-left",
         "TRL 0.2x GRPO exported from W&B with run.history() (_step/_runtime/_timestamp columns, train/* and "
         "eval/* keys, eval rows separate) plus config.yaml with max_steps 2500. Reward climbed 0.45 -> 0.84 by "
         "step 1000 and has held at ~0.84 for 300 steps; eval/reward 0.42 -> 0.78 and flat since 1000 (N=1000, "
         "sd 0.013). Frac zero-std ~0.4, entropy 0.36 and not collapsing, kl 0.018, cosine lr still ~75% of peak "
         "and 48% of the budget left. Holding healthily at a high level with budget left: continue (never stop)."),
    Spec("ok-length-penalty-ramps-in-total-reward-falls-accuracy-rises-custom-jsonl", penalty_rampin(),
         writer(w_custom_jsonl)({"total": "reward/total", "correct": "reward/correct", "pen": "reward/len_penalty",
                                 "lam": "len_penalty_coef", "length": "resp_len", "kl": "kl", "entropy": "entropy",
                                 "grad_norm": "grad_norm", "lr": "lr"}, {"gsm8k_acc": "eval/gsm8k_acc"},
                                "metrics.jsonl", dict(total_steps=2000, model="Qwen2.5-3B-Instruct",
                                                      algo="grpo", group_size=8, prompts_per_step=32)),
         2911, (1200, 2000), "ok", "healthy live custom jsonl length-penalty schedule",
         "Hand-written GRPO loop logging JSONL. A length penalty is phased in: its coefficient ramps 0 -> 0.3 "
         "between steps 300 and 700, so reward/total drops from ~0.62 to ~0.55 while responses shorten 610 -> "
         "500 tokens. The task reward (reward/correct) keeps rising 0.55 -> 0.74 and eval/gsm8k_acc 0.57 -> 0.73 "
         "(N=1319, sd 0.012). The fall in the total is the schedule, not the policy: continue at 1200 of 2000."),
    Spec("ok-kl-tiny-under-beta-0.1-policy-moves-validation-rises-nemo-tb", nemo_story(),
         writer(w_tb)(NEMO, "", "", "exp_003/tensorboard", {"exp_003/config.yaml": NEMO_CFG}), 2912, (600, 1000), "ok",
         "healthy live nemo-rl tensorboard kl-small learning-signal",
         "NeMo-RL GRPO with a strong reference KL penalty (0.1): train/kl_penalty is tiny but non-zero and "
         "growing, 0.0002 -> 0.0025, so the policy is leaving the reference slowly. train/reward 0.41 -> 0.55 and "
         "validation/accuracy every 25 steps 0.40 -> 0.52 (N=500, sd 0.022). max_num_steps 1000 in the config, at "
         "600: continue."),
    Spec("ok-dapo-dynamic-sampling-4-gen-batches-to-2-aime-rising-verl-jsonl", dapo_story(),
         writer(w_verl_jsonl)(VERL, "verl_dapo", "qwen3-8b-dapo-aime", "algorithm:\n  filter_groups:\n    enable: "
                              "true\n    max_num_gen_batches: 10\n"),
         3013, (600, 1200), "ok", "healthy live verl jsonl dapo dynamic-sampling learning-signal",
         "verl DAPO (dynamic sampling, no KL loss so actor/kl_loss is a constant 0.0 by config) logging to the "
         "file logger, total_training_steps 1200 in .hydra/config.yaml. Early on most groups are all-correct or "
         "all-wrong, so it needs ~4 generation rounds per batch (train/num_gen_batches), falling to ~2 as more "
         "prompts become informative; the kept-batch score rises 0.38 -> 0.47 and val-core/aime2024/acc/mean@32 "
         "0.10 -> 0.20 (960 samples, sd 0.013). Newest line 9 minutes ago (a step takes 7 minutes). Continue."),
    # ------------------------------------------------------------------ clear failures
    Spec("stop-all-fail-groups-reward-0.0-grad-norm-0.0-at-520-of-1200-trl024-console", all_fail(),
         writer(w_trl_console)(TRL_NOKL, "0.24.0"), 2914, (520, 1200), "stop",
         "stop live trl console zero-reward zero-advantage no-signal learning-signal",
         "TRL 0.24 GRPO console (tqdm bars give n/1200; dicts have no step key). The task is far beyond the model: "
         "reward 0.0 and frac_reward_zero_std 1.0 on every logged row for 520 steps, grad_norm 0.0 (zero "
         "advantage everywhere, the loss is identically 0), eval_reward 0.0 (N=500) at every eval, entropy and "
         "lengths unchanged (35% truncated at 2048). The run is busy but never updates: nothing to gain, the "
         "weights are the starting ones. Stop.", onset=10),
    Spec("stop-correctness-pinned-0.01-format-bonus-climbs-total-rises-trl-tb-ckpts", format_only(),
         writer(w_trl)(TRL, 100, 2, 10, True), 2915, (700, 1000), "stop",
         "stop live trl tensorboard trainer-state format-only task-floor learning-signal",
         "TRL GRPO with correctness_reward + 0.5 x strict_format_reward (TB under runs/, checkpoints every 100, "
         "max_steps 1000). The format reward climbs 0.05 -> 0.9 so the total reward rises 0.06 -> 0.46, but "
         "rewards/correctness_reward/mean stays at its floor ~0.01 and eval correctness is 0.012 at every eval "
         "(N=400). The only thing learned is the tag format; the task itself gets no signal. Nothing more to gain "
         "on the task and the current weights are as good as any for it: stop.", onset=10),
    Spec("stop-rloo-kl-exactly-0-bf16-updates-vanish-lr-warmup-typo-trl023-ckpts", kl_zero_rloo(),
         writer(w_trl)(TRL, 50, 3, 10), 2916, (400, 1000), "stop",
         "stop live trl trainer-state rloo kl-zero lr-tiny policy-frozen learning-signal",
         "TRL 0.23 RLOO (beta 0.05, so kl is logged, num_generations 2). warmup_steps was set to 50000 instead of "
         "50: learning_rate is 8e-9 at step 400, far too small to change bf16 weights, so the policy stays "
         "bitwise equal to the reference: kl is exactly 0.0 on every row. Grad norms look normal (~0.35), but "
         "reward stays at 0.46 +- noise, eval_reward 0.44 (N=500) flat, entropy flat. Nothing is being learned "
         "and the weights are the initial ones: stop (fix the schedule).", onset=10),
    Spec("bad-reward-exactly-0-after-resume-at-600-template-lost-truncates-trl022-console", template_lost(),
         writer(w_trl_console)(TRL_NOKL, "0.22.2", 600), 2917, (760, 1500), "rb",
         "rollback live trl console resume zero-reward truncation learning-signal",
         "TRL 0.22 GRPO console log across a relaunch. Up to step 600 it learns well: reward 0.05 -> 0.41, "
         "eval_reward 0.06 -> 0.40 (N=500, sd 0.022). The job crashed after saving checkpoint-600 and was "
         "resumed from it, but the chat template was not restored: every completion runs to the 2048 cap "
         "(clipped_ratio 1.0), reward is exactly 0.0, frac_reward_zero_std 1.0, grad_norm 0.0 and eval_reward 0.0 "
         "at 650-750. A better model lies behind: roll back to 600 (checkpoint-600) and fix the template.",
         onset=600),
    Spec("bad-vllm-kl-and-clip-ratio-jump-at-700-reward-falls-openrlhf-console", orlhf_sync_break(),
         writer(w_orlhf_console)(), 2918, (900, 1600), "rb",
         "rollback live openrlhf console weight-sync clip-ratio vllm-kl",
         "OpenRLHF GRPO console. After a vLLM engine restart at ~700 the weight broadcast is stale: vllm_kl "
         "jumps 0.001 -> 0.06-0.08, ppo_clip_ratio 0.01 -> 0.3, grad norm 0.3 -> 1.6, responses balloon to 1350 "
         "tokens with 12% truncation. Reward falls 0.555 -> 0.30 and eval_math_pass1 0.525 -> 0.33 (N=500, sd 0.022; "
         "9 sd) by 900 of 1600. The step-700 weights are the ones to keep: roll back.", onset=700),
    Spec("stop-finished-2000-of-2000-plateau-since-1300-best-at-end-custom-csv", finished_plateau(),
         writer(w_custom_csv)({"loss": "loss", "reward": "reward_avg", "kl": "kl", "entropy": "entropy_avg",
                               "length": "avg_response_len", "grad_norm": "grad_norm", "lr": "lr"},
                              "eval_acc", "eval_acc", "logs/grpo_metrics.csv", True),
         3419, (2000, 2000), "stop", "stop finished custom csv plateau",
         "Hand-written GRPO loop, CSV with step,total_steps columns; it reached step 2000 of 2000 and saved "
         "final_model/ 2.5 hours ago. Reward rose 0.38 -> 0.71 by 1300 then held 0.71-0.715 to the end; eval_acc "
         "(every 100, N=500, sd 0.021) 0.36 -> 0.66 and flat from 1300. Finished on its plateau with the final "
         "weights as good as any: stop (keep the final weights).", onset=1300),
    Spec("conv-plateau-since-880-at-1500-of-1600-cosine-tail-wandb-panel-csv", conv_panels(),
         writer(w_wandb_panels)({"reward.csv": "train/reward", "eval_reward.csv": "eval/reward",
                                 "learning_rate.csv": "train/learning_rate", "kl.csv": "train/kl"},
                                "qwen25-3b-grpo-gsm8k"),
         3020, (1500, 1600), "conv", "converged live wandb panel-csv plateau cosine-tail",
         "TRL GRPO exported as four W&B panel CSVs (x = train/global_step, downsampled with __MIN/__MAX). "
         "Reward 0.42 -> 0.70 by 880 and flat since; eval 0.40 -> 0.66 by 880, flat since (N=800, sd 0.017). "
         "The cosine lr is at 1% of its peak at 1500 of 1600: 100 steps left that cannot change anything. "
         "Converged near the end: stopping now or letting it finish are both fine.", onset=880),
    Spec("bad-nan-at-860-after-last-save-800-collapse-only-in-tb-trl-ckpts", nan_after_save(),
         writer(w_trl)(TRL, 200, 2, 10, True), 2921, (930, 2000), "rb",
         "rollback live trl tensorboard trainer-state nan collapse between-saves",
         "TRL GRPO, checkpoints every 200 (newest checkpoint-800, whose trainer_state stops at 800) and TB under "
         "runs/ written up to 930. Reward 0.30 -> 0.62 by 700, 0.63 at 850. At ~855 grad_norm spikes to 8, then "
         "loss/grad_norm/entropy are NaN from 860 and the reward is 0.0 with every completion truncated; the "
         "collapse is only visible in the TB events. Train reward is the headline (sd of a 10-step mean ~0.022, prompt difficulty dominates); "
         "restore checkpoint-800 (the window ends at 850, the newest step still at the best level).",
         onset=850),
    # ------------------------------------------------------------------ subtle failures
    Spec("stop-val-core-never-moves-0.31-while-score-climbs-memorising-verl-tb", eval_flat_verl(),
         writer(w_tb)({**VERL}, "", "", "tensorboard_log/gsm_hard/qwen25-1.5b-grpo",
                      {".hydra/config.yaml": "trainer:\n  total_training_steps: 1200\n  test_freq: 40\n"
                                             "data:\n  train_files: gsm_hard_train_2k.parquet\n"}),
         3122, (800, 1200), "stop",
         "stop live verl tensorboard eval-flat train-rises memorisation learning-signal",
         "verl GRPO on a 2k-prompt training set (7 epochs by step 800). critic/score/mean climbs 0.30 -> 0.58 "
         "but val-core/gsm_hard/acc/mean@1 (N=1000, sd 0.015) is 0.31 at every eval from step 0 to 800 - it "
         "never moves. Entropy 0.52 -> 0.31. The gains are memorisation of the train prompts; no held-out gain "
         "so far and none in prospect, and the current weights are no worse than any earlier ones: stop.",
         onset=1),
    Spec("stop-total-reward-rises-only-because-length-penalty-anneals-correct-flat-custom-jsonl",
         len_coef_anneal(),
         writer(w_custom_jsonl)({"total": "reward", "correct": "reward_correct", "pen": "reward_length_penalty",
                                 "coef": "length_penalty_coef", "length": "response_len", "kl": "kl",
                                 "entropy": "entropy", "grad_norm": "grad_norm", "lr": "lr"}, {"eval_acc": "eval_acc"},
                                "train_log.jsonl", dict(total_steps=1500, model="Llama-3.2-3B-Instruct",
                                                        reward="correct - coef * max(0, len-512)/512")),
         2923, (900, 1500), "stop", "stop live custom jsonl length-penalty schedule reward-moves-by-schedule",
         "Hand-written loop whose length-penalty coefficient anneals 0.5 -> 0.05 over 900 steps. The logged "
         "reward climbs from ~0.18 to ~0.44 only because the penalty shrinks: responses stay ~780 tokens, "
         "reward_correct is flat at 0.47 and eval_acc flat at 0.45 (N=1000, sd 0.016) throughout. The policy "
         "has learned nothing; stop.", onset=1),
    Spec("bad-two-evals-math-flat-ifeval-falls-0.795-to-0.70-after-550-trl1x-ckpts", two_evals(),
         writer(w_trl)(TRL, 50, 4, 10), 3024, (1000, 2000), "rb",
         "rollback live trl trainer-state two-evals one-regressing",
         "TRL 1.x GRPO on math with two eval datasets (eval_math_reward, eval_ifeval_reward). Math eval rose "
         "0.48 -> 0.58 by 550 and has gained only 0.01 since (N=500, within noise); instruction following rose "
         "0.74 -> 0.795 by 550 and has fallen to 0.70 at 1000 (N=541, sd 0.017; 5.4 sd) as kl climbs 0.02 -> "
         "0.07. A model as good on math and clearly better on IFEval lies behind: roll back to ~550 (window from "
         "the IFEval level).", onset=550),
    Spec("stop-easy-set-saturated-0.97-zero-std-80pct-eval-flat-since-350-trl022-ckpts", saturated(),
         writer(w_trl)(TRL, 100, 3, 10), 2925, (800, 2000), "stop",
         "stop live trl trainer-state saturated zero-std no-signal learning-signal",
         "TRL 0.22 GRPO on GSM8K-level prompts. The reward reached 0.96 by 350 and sits at 0.97; most groups are "
         "all-correct so frac_reward_zero_std climbs 0.3 -> ~0.8, grad_norm falls 0.33 -> ~0.1, entropy 0.16 -> 0.11. eval_reward "
         "(N=1319, sd 0.009) 0.89 at 350, 0.895 at 800. 60% of the plan is left but there is almost no gradient "
         "and no headroom: stop, the current weights are as good as any.", onset=350),
    Spec("stop-never-lifts-off-reward-0.004-flat-450-of-1000-kl-flat-trl-tb-ckpts", never_lifts(),
         writer(w_trl)(TRL, 50, 2, 10, True), 2926, (450, 1000), "stop",
         "stop live trl tensorboard trainer-state never-lifts-off sparse-reward learning-signal",
         "TRL GRPO (beta 0.04) on a task too hard for the model: a handful of lucky solves per 10 steps, so the "
         "logged reward wanders 0.001-0.01 around a level of 0.004 with no trend over 450 steps (45% of the "
         "plan), frac_reward_zero_std ~0.97; eval_reward 0.005 at every eval (N=500). kl stays at ~5e-4, entropy 0.66 and lengths unchanged. "
         "Unlike a slow starter nothing is lifting at 45% of the plan: stop (easier curriculum or SFT first).",
         onset=10),
    Spec("sor-entropy-drop-never-settles-0.9-to-0.04-val-slips-2sd-verl-console-np2", entropy_runaway(),
         writer(w_verl_console)(VERL, True, "train.log"), 2927, (700, 1000), "sor",
         "stop-or-rollback live verl console numpy2 entropy-collapse",
         "verl GRPO whose entropy drops 0.9 -> 0.35 in 100 steps and never settles: 0.08 by 400, 0.04 by 700. "
         "critic/score/mean plateaued at ~0.60 from 350 (0.59 at 700); val-core gsm8k acc peaked at 0.605 (350) "
         "and is 0.578 at 700 (N=1319, sd 0.013; 2 sd). Exploration is gone and nothing more will come; whether "
         "the 0.027 slip is real is not clear. Stop; going back to ~350 is as good.", onset=350),
    Spec("bad-sparse-gains-fade-0.125-back-to-0.05-pass1-and-pass8-fall-openrlhf-tb", sparse_fade(),
         writer(w_tb)(ORLHF, "train/", "eval/", "tb/qwen25-7b-omni-grpo"), 3128, (800, 1600), "rb",
         "rollback live openrlhf tensorboard sparse-reward fade",
         "OpenRLHF GRPO on Omni-MATH, TensorBoard. A sparse reward that was learned and is being lost: train "
         "reward 0.02 -> 0.125 by 420, back to 0.05 at 800; group_reward_std shrinks with it. eval_omni_pass1 "
         "(N=500) 0.025 -> 0.105 at 420 and 0.06 at 800 (sd 0.014; 3.3 sd), pass@8 0.24 -> 0.16. A better model "
         "lies behind: roll back to ~420.", onset=420),
]

CASES = [s.case() for s in SPECS]
STORY = {s.name: s for s in SPECS}


def write_run(case: Case, folder: Path) -> None:
    spec = STORY[case.name]
    st = spec.story
    rng = np.random.default_rng(case.seed)
    run = st.draws(rng, case.reached)
    t_end = NOW - st.age_min * 60
    run.update(planned=case.planned or case.reached, reached=case.reached, eval_every=st.eval_every,
               log_every=st.log_every, sec=st.sec_per_step, t_end=t_end)
    folder.mkdir(parents=True, exist_ok=True)
    case.write(run, folder)
    settle_mtimes(folder, t_end)
    for p in folder.rglob("*"):
        if p.is_file() and p.stat().st_mtime >= t_end - 1:
            touch(p, t_end)
    touch(folder, t_end)


def check(cases: list[Case]) -> None:
    for c in cases:
        st = STORY[c.name].story
        lv, steps = st.headline_level(), st.headline_steps(c.reached)
        best_s = max(steps, key=lv)
        sd = st.headline_sd(lv(best_s))
        print(f"{c.name}: {c.labels.get('preferred')} accept={c.labels.get('accept')} "
              f"window={c.labels.get('rollback_window')} onset={c.labels.get('onset_step')} "
              f"reached={c.reached}/{c.planned or c.reached} age={st.age_min}min")
        print(f"    headline {st.headline}: best {lv(best_s):.4f}@{best_s} last {lv(steps[-1]):.4f}@{steps[-1]} "
              f"sd {sd:.4f} ({(lv(best_s) - lv(steps[-1])) / max(sd, 1e-9):.1f} sd below best)")
        run = st.draws(np.random.default_rng(c.seed), c.reached)
        if st.headline == TRAIN:
            ev = [(s, v["reward"]) for s, v in run["train"]]
        else:
            ev = [(s, e[st.headline]) for s, e in run["eval"]]
        print("    drawn " + " ".join(f"{s}:{x:.3f}" for s, x in ev[:: max(1, len(ev) // 12)])
              + f" | last {ev[-1][0]}:{ev[-1][1]:.3f}")
        zs = [abs(x - lv(s)) / max(st.headline_sd(lv(s)), 1e-9) for s, x in ev] if st.headline != TRAIN else [0]
        print(f"    max |z| of headline draws {max(zs):.1f} at {ev[int(np.argmax(zs))][0] if len(zs) > 1 else '-'}")
        tr = run["train"]
        zero = sum(v["reward"] == 0 for _, v in tr) / len(tr)
        print(f"    train reward first {tr[0][1]['reward']:.3f} last {tr[-1][1]['reward']:.3f}; "
              f"rows with reward exactly 0: {zero:.0%}")


HEADER = """# Holdout set 29: hand-built runs written by make_holdout29.py, independent of the assessor and its judges.
# Aimed at learning signal (runs that learn nothing while looking busy, and their healthy twins) and at live
# checks of healthy runs cut at several points of their plan. Labels: what a careful practitioner should do under
# DESIGN.md's decision contract, read from each story's noise-free levels. rollback_window is inclusive: from the
# first logged headline step whose level is within one sampling sd of the best level to the newest such step not
# after onset_step, in the run's own logged step units.
# Run `.venv/bin/python evals/holdout29/make_holdout29.py` to write runs/ (gitignored); `--check` prints levels.
"""


def main() -> None:
    holdout_kit.main(HERE, "make_holdout29.py", "holdout29.yaml", "h29-", "holdout29", HEADER, CASES, write_run,
                     check)


if __name__ == "__main__":
    main()
