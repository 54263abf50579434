"""Holdout set 12: 27 hand-labelled RL post-training runs in real on-disk formats, independent of the assessor.

Run from the worktree root:
    .venv/bin/python evals/holdout12/make_holdout12.py           # writes runs/ (gitignored) and holdout12.yaml
    .venv/bin/python evals/holdout12/make_holdout12.py --check   # also prints levels, windows, and parses every file

How a run is made. A case is a `Plan`: noise-free level functions of the step (piecewise-linear knots, or any
callable, e.g. a step change at an epoch boundary) for the quantities a practitioner reads, plus the exact keys its
framework writes. Noise is drawn per logged point with this set's own model:
  * binary train reward: each of `prompts` prompts gets a solve rate from Beta(p*c, (1-p)*c) (prompts differ in
    difficulty, c = `spread`), each of its `group` rollouts is a Bernoulli draw; the logged value is the batch mean,
    and reward_std / the zero-spread fraction come from the same draws;
  * score-type rewards (reward models, judges): the batch mean of per-sample scores with sd `score_sd`;
  * held-out evals: Binomial(N, p)/N on N problems, or a score mean with its own sd;
  * grad norm: a level times exp(tail * Student-t(2.5)) (heavy-tailed, occasional 5-20x spikes);
  * lengths, entropy, KL, timings: a few percent multiplicative Gaussian noise.
Resumes are written as each framework writes them (TensorBoard / MLflow / NeMo exp dirs keep the overlapping
steps twice; trainer_state.json and the verl file logger keep one copy).

Labels follow DESIGN.md ("What the three decisions mean"). For rollbacks the window is computed from the noise-free
headline (held-out eval when there is one, else the train reward): from the first logged headline step within one
sampling sd of the best, to the newest such step not after the onset of the damage. `--check` prints it with the
noisy values, so the reasoning text can be read against the data.
"""

from __future__ import annotations

import csv
import json
import sqlite3
import sys
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import itertools

from holdout_kit import (
    HEALTHY,
    Case,
    build,
    converged,
    dump_json,
    rollback,
    stop,
    stop_or_rollback,
    tb_file,
    trainer_state,
)

HERE = Path(__file__).resolve().parent
T0 = 1_791_300_000.0  # wall-clock origin of every run


# ---------------------------------------------------------------------------------------------------- level curves

def K(pts: dict[int, float]) -> Callable[[float], float]:
    """Piecewise-linear level through knots {step: value}, flat outside."""
    xs = sorted(pts)
    ys = [pts[x] for x in xs]
    return lambda s: float(np.interp(s, xs, ys))


def C(v: float) -> Callable[[float], float]:
    return lambda s: float(v)


def sat(a: float, b: float, tau: float, start: float = 0.0) -> Callable[[float], float]:
    """a rising toward b with time constant tau (steps) from `start`."""
    return lambda s: float(a + (b - a) * (1 - np.exp(-max(s - start, 0.0) / tau)))


def plus(*fs: Callable) -> Callable[[float], float]:
    return lambda s: float(sum(f(s) for f in fs))


def step_fn(at: int, before: float, after: float) -> Callable[[float], float]:
    return lambda s: before if s < at else after


# ------------------------------------------------------------------------------------------------------ simulation

@dataclass
class Plan:
    reached: int
    planned: int
    reward: Callable | None = None  # pass rate, or a score level when score_sd is set
    score_sd: float | None = None
    prompts: Callable = field(default_factory=lambda: C(64))
    group: int = 8
    spread: float | Callable = 4.0  # Beta concentration of per-prompt solve rates (small = solved-or-impossible)
    length: Callable = field(default_factory=lambda: C(420))
    trunc: Callable = field(default_factory=lambda: C(0.01))
    entropy: Callable | None = field(default_factory=lambda: C(0.5))
    kl: Callable | None = None
    lr: Callable = field(default_factory=lambda: C(1e-6))
    gnorm: Callable = field(default_factory=lambda: C(0.25))
    gtail: float = 0.3
    extras: dict = field(default_factory=dict)  # exact key -> fn(step, rng, values so far) -> value or None
    evals: dict = field(default_factory=dict)  # exact key -> (level fn, N problems) or (level fn, -sd) for scores
    eval_every: int = 50
    eval_at0: bool = False
    log_every: int = 1
    first: int | None = None  # first logged step (defaults to log_every, or 1 when log_every == 1)
    resumes: list = field(default_factory=list)  # (crash step, resumed from checkpoint step)
    step_secs: float = 45.0
    headline: str | None = None  # eval key that decides windows (default: the first eval, else train reward)
    core: bool = True  # rollout keys (length, truncation, loss); False for offline preference training
    spikes: tuple | None = None  # (probability, low, high): rare multiplicative grad-norm spikes
    eval_post: Callable | None = None  # (step, rng, eval values) -> more eval keys derived from them


@dataclass
class Run:
    plan: Plan
    train: list  # (wall, step, {key: value}) in emission order (duplicates after a resume)
    evals: list  # (wall, step, {key: value})
    segments: list  # emission-order index where each process (re)start begins


def simulate(plan: Plan, seed: int) -> Run:
    rng = np.random.default_rng(seed)
    first = plan.first if plan.first is not None else plan.log_every
    segs, start = [], first
    for crash, back in plan.resumes:
        segs.append((start, crash))
        start = back + (plan.log_every if back % plan.log_every == 0 else 1)
    segs.append((start, plan.reached))
    wall, train, evals, seg_starts = T0, [], [], []
    ev_steps = list(range(0 if plan.eval_at0 else plan.eval_every, plan.reached + 1, plan.eval_every))
    for i, (lo, hi) in enumerate(segs):
        wall += 900.0  # start-up
        seg_starts.append(len(train))
        for s in range(lo, hi + 1):
            if s != first and s % plan.log_every:
                continue
            wall += plan.step_secs * plan.log_every * (1 + 0.05 * rng.normal())
            train.append((wall, s, point(plan, rng, s)))
        for s in ev_steps:
            if not (lo <= s <= hi or (i == 0 and s == 0)):
                continue
            vals = {}
            for k, (fn, n) in plan.evals.items():
                p = fn(s)
                if p is None:
                    continue
                vals[k] = float(rng.binomial(n, min(max(p, 0.0), 1.0)) / n) if n > 0 else p + rng.normal(0, -n)
            if plan.eval_post and vals:
                vals.update(plan.eval_post(s, rng, vals))
            if vals:
                evals.append((T0 + plan.step_secs * s + 20.0 + 900.0 * (i + 1), s, vals))
    return Run(plan, train, evals, seg_starts)


def point(plan: Plan, rng: np.random.Generator, s: int) -> dict:
    v: dict = {}
    if plan.reward is not None:
        p = plan.reward(s)
        n = round(plan.prompts(s))
        if plan.score_sd:
            samples = p + rng.normal(0, plan.score_sd, n * plan.group)
            v["reward"] = float(samples.mean())
            v["reward_std"] = float(samples.std())
            v["group_std"] = float(samples.reshape(n, plan.group).std(axis=1).mean())
        else:
            pc = min(max(p, 1e-3), 1 - 1e-3)
            c = plan.spread(s) if callable(plan.spread) else plan.spread
            pi = rng.beta(pc * c, (1 - pc) * c, n)
            sol = rng.binomial(plan.group, pi)
            r = sol.sum() / (n * plan.group)
            v["reward"] = float(r)
            v["reward_std"] = float(np.sqrt(r * (1 - r)))
            v["zero_std"] = float(np.mean((sol == 0) | (sol == plan.group)))
            v["pct_0"] = float(np.mean(sol == 0))
            v["pct_1"] = float(np.mean(sol == plan.group))
            frac = sol / plan.group
            v["group_std"] = float(np.sqrt(frac * (1 - frac)).mean())
    if plan.core:
        v["length"] = float(plan.length(s) * (1 + 0.025 * rng.normal()))
        tr = plan.trunc(s)
        v["trunc"] = float(np.clip(tr + rng.normal(0, 0.15 * tr + 0.002), 0, 1))
        v["loss"] = float(rng.normal(0, 0.012))
    if plan.entropy is not None:
        v["entropy"] = float(plan.entropy(s) * (1 + 0.03 * rng.normal()))
    if plan.kl is not None:
        v["kl"] = float(max(plan.kl(s) * (1 + 0.07 * rng.normal()) + abs(rng.normal(0, 2e-5)), 0.0))
    v["lr"] = float(plan.lr(s))
    v["gnorm"] = float(plan.gnorm(s) * np.exp(plan.gtail * np.clip(rng.standard_t(2.5), -4, 9)))
    if plan.spikes and rng.random() < plan.spikes[0]:
        v["gnorm"] *= float(rng.uniform(plan.spikes[1], plan.spikes[2]))
    for k, fn in plan.extras.items():
        x = fn(s, rng, v)
        if x is not None:
            v[k] = float(x)
    return v


def dedup(records: list) -> list:
    """The newest record of each step, in step order (what a file without duplicates keeps)."""
    last = {s: (w, s, v) for w, s, v in records}
    return [last[s] for s in sorted(last)]


def g6(x: float) -> float:
    return float(f"{x:.6g}")


def noisy(rel: float, level: Callable | float) -> Callable:
    """Extra key: a level with relative Gaussian noise."""
    f = level if callable(level) else C(level)
    return lambda s, rng, v: f(s) * (1 + rel * rng.normal())


def absn(sd: float, level: Callable | float) -> Callable:
    f = level if callable(level) else C(level)
    return lambda s, rng, v: f(s) + sd * rng.normal()


# --------------------------------------------------------------------------------------------------------- key maps
# canonical simulation keys -> the exact keys each framework writes (keys not in the map pass through unchanged)

TRL_GRPO = {"reward": "reward", "reward_std": "reward_std", "zero_std": "frac_reward_zero_std",
            "length": "completions/mean_length", "trunc": "completions/clipped_ratio", "entropy": "entropy",
            "kl": "kl", "gnorm": "grad_norm", "lr": "learning_rate", "loss": "loss"}
VERL = {"reward": "critic/score/mean", "length": "response_length/mean", "trunc": "response_length/clip_ratio",
        "entropy": "actor/entropy", "kl": "actor/kl_loss", "gnorm": "actor/grad_norm", "lr": "actor/lr",
        "loss": "actor/pg_loss"}
ORLHF = {"reward": "reward", "length": "response_length", "trunc": "truncated", "entropy": "entropy_loss",
         "kl": "kl", "gnorm": "actor_grad_norm", "lr": "actor_lr", "loss": "policy_loss",
         "group_std": "group_reward_std"}
NEMO = {"reward": "train/reward", "length": "train/mean_gen_tokens_per_sample", "trunc": "train/truncation_rate",
        "entropy": "train/approx_entropy", "kl": "train/kl_penalty", "gnorm": "train/grad_norm", "lr": "train/lr",
        "loss": "train/loss"}
PLAIN = {"reward": "reward", "reward_std": "reward_std", "length": "resp_len", "trunc": "truncated",
         "entropy": "entropy", "kl": "kl", "gnorm": "grad_norm", "lr": "lr", "loss": "loss"}
INTERNAL = {"reward", "reward_std", "zero_std", "pct_0", "pct_1", "group_std", "length", "trunc", "entropy", "kl",
            "lr", "gnorm", "loss", "epoch_idx"}


def named(v: dict, keymap: dict, prefix: str = "", drop: tuple = ()) -> dict:
    out = {}
    for k, x in v.items():
        if k in drop or x is None or k.startswith("_"):
            continue
        if k in keymap:
            out[prefix + keymap[k]] = x
        elif k not in INTERNAL:
            out[prefix + k] = x
    return out


# ------------------------------------------------------------------------------------- per-framework derived keys

def verl_extras(v: dict, s: int, rng: np.random.Generator, max_len: int = 2048) -> dict:
    """Keys every verl GRPO step carries besides the headline ones."""
    r = v.get("reward")
    L = v["length"]
    d = {}
    if r is not None:
        d.update({"critic/score/max": 1.0, "critic/score/min": 0.0, "critic/rewards/mean": r,
                  "critic/advantages/mean": float(rng.normal(0, 0.002)),
                  "critic/advantages/max": float(2.4 + 0.3 * rng.normal()),
                  "critic/advantages/min": float(-2.4 + 0.3 * rng.normal())})
    d.update({"response_length/max": float(min(max_len, L * (2.6 + 0.2 * rng.normal()))),
              "response_length/min": float(max(4.0, L * (0.18 + 0.03 * rng.normal()))),
              "prompt_length/mean": float(152 + 3 * rng.normal()),
              "actor/pg_clipfrac": float(abs(0.0025 + 0.0008 * rng.normal())),
              "actor/ppo_kl": float(rng.normal(0, 2e-4)), "actor/pg_clipfrac_lower": 0.0,
              "timing_s/gen": float(L / 9.0 * (1 + 0.05 * rng.normal())),
              "timing_s/update_actor": float(L / 40.0 * (1 + 0.05 * rng.normal())),
              "perf/max_memory_allocated_gb": float(61.2 + 0.3 * rng.normal())})
    d["timing_s/step"] = d["timing_s/gen"] + d["timing_s/update_actor"] + 6.0
    if v.get("kl") is not None:
        d["actor/kl_coef"] = 0.001
    return d


def trl_extras(v: dict, rng: np.random.Generator, fns: dict | None = None) -> dict:
    L = v["length"]
    d = {"completions/min_length": float(max(3.0, L * (0.3 + 0.04 * rng.normal()))),
         "completions/max_length": float(L * (2.2 + 0.2 * rng.normal())),
         "completions/mean_terminated_length": float(L * (1 - 0.5 * v["trunc"])),
         "clip_ratio/region_mean": 0.0, "clip_ratio/low_mean": 0.0, "clip_ratio/high_mean": 0.0}
    for name, val in (fns or {}).items():
        d[f"rewards/{name}/mean"] = val
        d[f"rewards/{name}/std"] = float(np.sqrt(max(val * (1 - val), 0.0))) if 0 <= val <= 1 else 0.5
    return d


def nemo_extras(v: dict, rng: np.random.Generator) -> dict:
    L = v["length"]
    d = {"train/token_mult_prob_error": float(1.0 + abs(rng.normal(0.004, 0.001))),
         "train/probs_ratio": float(1.0 + rng.normal(0, 0.002)),
         "train/natural_termination_rate": float(1 - v["trunc"]),
         "timing/train/generation": float(L / 7.0 * (1 + 0.05 * rng.normal())),
         "timing/train/policy_training": float(L / 30.0 * (1 + 0.05 * rng.normal()))}
    d["timing/train/total_step_time"] = d["timing/train/generation"] + d["timing/train/policy_training"] + 9.0
    if "pct_0" in v:
        d["train/baseline_reward/pct_0"] = 100 * v["pct_0"]
        d["train/baseline_reward/pct_1"] = 100 * v["pct_1"]
        d["train/baseline_reward/pct_mixed"] = 100 * (1 - v["pct_0"] - v["pct_1"])
    return d


def orlhf_extras(v: dict, rng: np.random.Generator) -> dict:
    L = v["length"]
    d = {"total_length": float(L + 180 + 5 * rng.normal()), "ppo_clip_ratio": float(abs(0.004 + 0.001 * rng.normal())),
         "ppo_kl": float(rng.normal(0, 1e-4)), "vllm_kl": float(abs(rng.normal(0.0012, 0.0002))),
         "timing/generation": float(L / 8.0 * (1 + 0.05 * rng.normal())),
         "timing/ppo_train": float(L / 35.0 * (1 + 0.05 * rng.normal())),
         "timing/make_experience": float(L / 60.0 * (1 + 0.05 * rng.normal()))}
    d["timing/step_total"] = d["timing/generation"] + d["timing/ppo_train"] + d["timing/make_experience"]
    if "reward" in v:
        d["return"] = v["reward"] - 0.05 * v.get("kl", 0.0)
    return d


# --------------------------------------------------------------------------------------------------------- writers

def w_trl_state(run: Run, out: Path, eval_keys: dict, save_every: int, limit: int | None = 3,
                fns: Callable | None = None, keymap: dict = TRL_GRPO, summary: bool = True, logging: int = 10,
                extra_fn: Callable | None = None, drop: tuple = ("kl",)) -> None:
    """HF TrainerState: log_history rows (train, then eval rows at the same step), checkpoint-N copies."""
    p = run.plan
    evals = {s: v for _, s, v in run.evals}
    hist, rng = [], np.random.default_rng(len(run.train))
    if 0 in evals:
        hist.append({**{eval_keys.get(k, k): g6(x) for k, x in evals[0].items()}, "eval_runtime": 61.2,
                     "eval_samples_per_second": 8.2, "eval_steps_per_second": 0.26, "epoch": 0, "step": 0})
    for _, s, v in dedup(run.train):
        row = named(v, keymap, drop=drop)
        if keymap is TRL_GRPO:
            row.update(trl_extras(v, rng, fns(v) if fns else None))
        if extra_fn:
            row.update(extra_fn(v, rng))
        row = {k: g6(x) for k, x in row.items()}
        if "loss" in row:
            row["loss"] = round(row["loss"], 4)
        row.update(epoch=round(s / p.planned, 4), step=s)
        hist.append(row)
        if s in evals and s:
            ev = {eval_keys.get(k, k): g6(x) for k, x in evals[s].items()}
            ev.update(eval_runtime=61.2, eval_samples_per_second=8.2, eval_steps_per_second=0.26,
                      epoch=round(s / p.planned, 4), step=s)
            hist.append(ev)
    finished = run.plan.reached >= p.planned
    if finished and summary:
        losses = [h["loss"] for h in hist if "loss" in h and np.isfinite(h["loss"])]
        hist.append({"epoch": 1.0, "step": p.reached, "total_flos": 0.0, "train_loss": g6(float(np.mean(losses))),
                     "train_runtime": round(p.step_secs * p.reached, 1), "train_samples_per_second": 1.9,
                     "train_steps_per_second": 0.022})
    saves = list(range(save_every, p.reached + 1, save_every))
    if limit:
        saves = saves[-limit:]
    for s in saves:
        ck = out / f"checkpoint-{s}"
        rows = [h for h in hist if h["step"] <= s and "train_loss" not in h]
        dump_json(ck / "trainer_state.json", trainer_state(rows, s, p.planned, logging, save_every, p.eval_every,
                                                           round(s / p.planned, 4)))
        (ck / "adapter_config.json").write_text('{"peft_type": "LORA", "r": 32, "lora_alpha": 64}\n')
        (ck / "adapter_model.safetensors").write_bytes(b"\0" * 128)
        (ck / "optimizer.pt").write_bytes(b"\0" * 64)
        (ck / "scheduler.pt").write_bytes(b"\0" * 16)
    dump_json(out / "trainer_state.json", trainer_state(hist, p.reached, p.planned, logging, save_every,
                                                        p.eval_every, round(p.reached / p.planned, 4),
                                                        training_stop=finished))


def w_trl_console(run: Run, out: Path, eval_keys: dict, fns: Callable | None = None, head: list | None = None,
                  drop: tuple = ()) -> None:
    p = run.plan
    evals = {s: v for _, s, v in run.evals}
    lines, rng = list(head or []), np.random.default_rng(7)
    n = p.planned
    for _, s, v in dedup(run.train):
        pct = int(100 * s / n)
        lines.append(f"{pct:3d}%|{'█' * (pct // 10):<10}| {s}/{n} [{s * 45 // 3600:02d}:{s * 45 // 60 % 60:02d}"
                     f"<{(n - s) * 45 // 3600}:{(n - s) * 45 // 60 % 60:02d}, 45.{s % 9}1s/it]")
        d = named(v, TRL_GRPO, drop=drop)
        d.update(trl_extras(v, rng, fns(v) if fns else None))
        d = {k: g6(x) for k, x in d.items()}
        d["loss"] = round(d["loss"], 4)
        d["epoch"] = round(s / n, 2)
        lines.append(repr(d))
        if s in evals:
            ev = {eval_keys.get(k, k): g6(x) for k, x in evals[s].items()}
            ev.update(eval_runtime=58.4, eval_samples_per_second=8.6, eval_steps_per_second=0.27, epoch=round(s / n, 2))
            lines.append(repr(ev))
    out.mkdir(parents=True, exist_ok=True)
    (out / "train.log").write_text("\n".join(lines) + "\n")


def w_verl_console(run: Run, out: Path, head: list | None = None, ckpt: tuple | None = None,
                   at_resume: list | None = None, max_len: int = 2048) -> None:
    """`step:N - key:np.float64(x) - ...` lines (NumPy 2 pformat) inside Ray / vLLM noise."""
    p = run.plan
    evals = {s: v for _, s, v in run.evals}
    rng = np.random.default_rng(11)
    fmt = lambda x: str(x) if isinstance(x, int) else f"np.float64({g6(x)!r})"  # noqa: E731  (python ints print bare)
    lines = ["2026-11-20 09:12:44,181\tINFO worker.py:1832 -- Started a local Ray instance.",
             "(TaskRunner pid=30412) Using LocalLogger is deprecated. The constructor API will change",
             *(head or [])]
    if 0 in evals:
        lines.append("(TaskRunner pid=30412) step:0 - " + " - ".join(f"{k}:{fmt(x)}" for k, x in evals[0].items()))
    resumed = {back for _, back in p.resumes}
    for _, s, v in dedup(run.train):
        if s - 1 in resumed and at_resume:
            lines += at_resume
        d = named(v, VERL)
        d.update(verl_extras(v, s, rng, max_len))
        d["training/global_step"] = s
        d["training/epoch"] = int(v.get("epoch_idx", 0))
        if s in evals:
            d.update(evals[s])
        lines.append("(TaskRunner pid=30412) step:" + str(s) + " - " + " - ".join(f"{k}:{fmt(x)}" for k, x in d.items()))
        if s % 97 == 0:
            lines.append("(WorkerDict pid=30977) INFO 11-20 10:41:02 [block_pool.py:321] Successfully reset prefix cache")
    out.mkdir(parents=True, exist_ok=True)
    (out / "train.log").write_text("\n".join(lines) + "\n")
    if ckpt:
        verl_ckpts(out, *ckpt)


def verl_ckpts(out: Path, project: str, exp: str, every: int, upto: int, keep: int | None = None) -> None:
    base = out / "checkpoints" / project / exp
    steps = list(range(every, upto + 1, every))
    if keep:
        steps = steps[-keep:]
    for s in steps:
        d = base / f"global_step_{s}" / "actor"
        d.mkdir(parents=True, exist_ok=True)
        (d / "model_world_size_8_rank_0.pt").write_bytes(b"\0" * 64)
        (base / f"global_step_{s}" / "data.pt").write_bytes(b"\0" * 16)
    (base / "latest_checkpointed_iteration.txt").write_text(str(steps[-1]))


def w_verl_jsonl(run: Run, out: Path, project: str, exp: str, ckpt_every: int | None = None) -> None:
    """FileLogger: {"step": N, "data": {...}}; the file is overwritten on restart, so no duplicates."""
    evals = {s: v for _, s, v in run.evals}
    rng = np.random.default_rng(13)
    lines = []
    if 0 in evals:
        lines.append({"step": 0, "data": {k: g6(x) for k, x in evals[0].items()}})
    for _, s, v in dedup(run.train):
        d = named(v, VERL)
        d.update(verl_extras(v, s, rng))
        d = {k: (g6(x) if np.isfinite(x) else None) for k, x in d.items()}
        d.update({"training/global_step": s, "training/epoch": int(v.get("epoch_idx", 0))})
        if s in evals:
            d.update({k: g6(x) for k, x in evals[s].items()})
        lines.append({"step": s, "data": d})
    f = out / project / f"{exp}.jsonl"
    f.parent.mkdir(parents=True, exist_ok=True)
    f.write_text("".join(json.dumps(x) + "\n" for x in lines))
    if ckpt_every:
        verl_ckpts(out, project, exp, ckpt_every, run.plan.reached)


def tb_segments(run: Run) -> list[list]:
    segs = []
    bounds = [*run.segments, len(run.train)]
    for a, b in itertools.pairwise(bounds):
        segs.append(run.train[a:b])
    return segs


def w_tb(run: Run, out: Path, keymap: dict, prefix: str, eval_prefix: str, extra: Callable | None = None,
         host: str = "node-07", dirs: list[str] | None = None) -> None:
    """One event file per process start; with `dirs`, each start writes into its own directory (NeMo exp_NNN)."""
    rng = np.random.default_rng(17)
    for i, seg in enumerate(tb_segments(run)):
        lo = seg[0][1]
        hi = seg[-1][1]
        events = []
        for w, s, v in seg:
            d = named(v, keymap, prefix)
            if extra:
                d.update({prefix + k: x for k, x in extra(v, rng).items()})
            events.append((w, s, d))
        for w, s, v in run.evals:
            if (i == 0 and s == 0) or lo <= s <= hi:
                events.append((max(w, seg[0][0]), s, {eval_prefix + k: x for k, x in v.items()}))
        events.sort(key=lambda e: (e[0], e[1]))
        where = out / dirs[i] if dirs else out
        tb_file(where / f"events.out.tfevents.{int(seg[0][0])}.{host}.{2200 + 131 * i}.0", events)


def w_orlhf_console(run: Run, out: Path, extra: Callable | None = None, head: list | None = None) -> None:
    evals = {s: v for _, s, v in run.evals}
    rng = np.random.default_rng(19)
    lines = ["[2026-11-21 08:00:03,112] [INFO] [real_accelerator.py:254:get_accelerator] Setting ds_accelerator to cuda "
             "(auto detect)", *(head or [])]
    for _, s, v in dedup(run.train):
        d = named(v, ORLHF)
        d.update(orlhf_extras(v, rng))
        if extra:
            d.update(extra(v, rng))
        d = {k: g6(x) for k, x in d.items()}
        lines.append(f"✨ Global step {s}: {d!r}")
        if s in evals:
            ev = {k: g6(x) for k, x in evals[s].items()}
            lines.append(f"Evaluation completed in 71.40 seconds, global_step {s}, eval_metrics: {ev!r}")
    out.mkdir(parents=True, exist_ok=True)
    (out / "train.log").write_text("\n".join(lines) + "\n")


def w_wandb_panels(run: Run, out: Path, name: str, panels: dict, xkey: str = "Step", budget: int = 100) -> None:
    """W&B UI panel exports: x column, `<run> - <key>`, `__MIN`, `__MAX`; one file per panel, bucketed."""
    rows = dedup(run.train)
    out.mkdir(parents=True, exist_ok=True)
    for fname, (src, key) in panels.items():
        pts = [(s, v[src]) for _, s, v in rows if src in v]
        per = max(1, -(-len(pts) // budget))
        with (out / fname).open("w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow([xkey, f"{name} - {key}", f"{name} - {key}__MIN", f"{name} - {key}__MAX"])
            for i in range(0, len(pts), per):
                b = pts[i:i + per]
                ys = [y for _, y in b]
                w.writerow([b[-1][0], g6(float(np.mean(ys))), g6(min(ys)), g6(max(ys))])


def w_mlflow_files(run: Run, out: Path, keymap: dict, name: str, params: dict) -> None:
    """MLflow file store: mlruns/0/<run>/metrics/<key> with `/` as nested directories, `ts value step` lines."""
    rid = uuid.uuid5(uuid.NAMESPACE_URL, "h12/" + name).hex
    exp = out / "mlruns" / "0"
    (exp / rid / "metrics").mkdir(parents=True, exist_ok=True)
    (exp / "meta.yaml").write_text("artifact_location: mlflow-artifacts:/0\ncreation_time: 1791300000000\n"
                                   "experiment_id: '0'\nlast_update_time: 1791300000000\nlifecycle_stage: active\n"
                                   "name: Default\n")
    (exp / rid / "meta.yaml").write_text(
        f"artifact_uri: mlflow-artifacts:/0/{rid}/artifacts\nend_time: null\nentry_point_name: ''\n"
        f"experiment_id: '0'\nlifecycle_stage: active\nrun_id: {rid}\nrun_name: {name}\nrun_uuid: {rid}\n"
        f"source_name: ''\nsource_type: 4\nsource_version: ''\nstart_time: {int(T0 * 1000)}\nstatus: 1\ntags: []\n"
        "user_id: rl\n")
    for d in ("params", "tags", "artifacts"):
        (exp / rid / d).mkdir(exist_ok=True)
    (exp / rid / "tags" / "mlflow.runName").write_text(name)
    for k, val in params.items():
        (exp / rid / "params" / k).write_text(str(val))
    lines: dict[str, list[str]] = {}
    rng = np.random.default_rng(23)
    for w, s, v in run.train:
        d = named(v, keymap)
        if keymap is TRL_GRPO:
            d.update(trl_extras(v, rng))
        for k, x in d.items():
            lines.setdefault(k, []).append(f"{int(w * 1000)} {x!r} {s}")
    for w, s, v in run.evals:
        for k, x in v.items():
            lines.setdefault(k, []).append(f"{int(w * 1000)} {x!r} {s}")
    for k, ls in lines.items():
        f = exp / rid / "metrics" / k
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text("\n".join(ls) + "\n")


def w_mlflow_db(run: Run, out: Path, keymap: dict, name: str, params: dict, extra: Callable | None = None) -> None:
    out.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(out / "mlflow.db")
    db.executescript("""
    CREATE TABLE alembic_version (version_num VARCHAR(32) NOT NULL PRIMARY KEY);
    CREATE TABLE experiments (experiment_id INTEGER PRIMARY KEY, name VARCHAR(256) UNIQUE, artifact_location
      VARCHAR(256), lifecycle_stage VARCHAR(32), creation_time BIGINT, last_update_time BIGINT);
    CREATE TABLE runs (run_uuid VARCHAR(32) PRIMARY KEY, name VARCHAR(250), source_type VARCHAR(20), source_name
      VARCHAR(500), entry_point_name VARCHAR(50), user_id VARCHAR(256), status VARCHAR(9), start_time BIGINT,
      end_time BIGINT, deleted_time BIGINT, source_version VARCHAR(50), lifecycle_stage VARCHAR(20), artifact_uri
      VARCHAR(200), experiment_id INTEGER);
    CREATE TABLE metrics (key VARCHAR(250), value FLOAT, timestamp BIGINT, run_uuid VARCHAR(32), step BIGINT
      DEFAULT 0, is_nan BOOLEAN DEFAULT 0, PRIMARY KEY (key, timestamp, step, run_uuid, value, is_nan));
    CREATE TABLE latest_metrics (key VARCHAR(250), value FLOAT, timestamp BIGINT, step BIGINT, is_nan BOOLEAN,
      run_uuid VARCHAR(32), PRIMARY KEY (key, run_uuid));
    CREATE TABLE params (key VARCHAR(250), value VARCHAR(8000), run_uuid VARCHAR(32), PRIMARY KEY (key, run_uuid));
    CREATE TABLE tags (key VARCHAR(250), value VARCHAR(8000), run_uuid VARCHAR(32), PRIMARY KEY (key, run_uuid));
    """)
    rid = uuid.uuid5(uuid.NAMESPACE_DNS, "h12." + name).hex
    db.execute("INSERT INTO alembic_version VALUES ('6953534de441')")
    db.execute("INSERT INTO experiments VALUES (1, 'verl_grpo', 'mlflow-artifacts:/1', 'active', ?, ?)",
               (int(T0 * 1000), int(T0 * 1000)))
    db.execute("INSERT INTO runs VALUES (?, ?, 'LOCAL', '', '', 'rl', 'RUNNING', ?, NULL, NULL, '', 'active', ?, 1)",
               (rid, name, int(T0 * 1000), f"mlflow-artifacts:/1/{rid}/artifacts"))
    db.execute("INSERT INTO tags VALUES ('mlflow.runName', ?, ?)", (name, rid))
    db.executemany("INSERT INTO params VALUES (?, ?, ?)", [(k, str(x), rid) for k, x in params.items()])
    rng = np.random.default_rng(29)
    sane = lambda k: k.replace("@", "_at_")  # noqa: E731  (verl's MLflow adapter)
    rows = []
    for w, s, v in run.train:
        d = named(v, keymap)
        if extra:
            d.update(extra(v, s, rng))
        rows += [(sane(k), x, int(w * 1000), rid, s) for k, x in d.items()]
    rows += [(sane(k), x, int(w * 1000), rid, s) for w, s, v in run.evals for k, x in v.items()]
    db.executemany("INSERT OR IGNORE INTO metrics VALUES (?, ?, ?, ?, ?, 0)", rows)
    last = {}
    for r in rows:
        last[r[0]] = r
    db.executemany("INSERT INTO latest_metrics VALUES (?, ?, ?, ?, 0, ?)",
                   [(k, x, t, s, rd) for k, x, t, rd, s in last.values()])
    db.commit()
    db.close()


def w_csv(run: Run, out: Path, cols: dict, eval_cols: dict, fname: str = "metrics.csv",
          extra_files: dict | None = None) -> None:
    """Plain CSV from a custom loop: one row per logged step, eval columns empty except on eval steps."""
    evals = {s: v for _, s, v in run.evals}
    out.mkdir(parents=True, exist_ok=True)
    with (out / fname).open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["step", *cols.values(), *eval_cols.values()])
        for _, s, v in dedup(run.train):
            w.writerow([s, *[f"{v[c]:.5g}" if c in v else "" for c in cols],
                        *[f"{evals[s][c]:.4f}" if s in evals and c in evals[s] else "" for c in eval_cols]])
    for name, text in (extra_files or {}).items():
        (out / name).write_text(text)


def w_jsonl(run: Run, out: Path, keymap: dict, fname: str = "train_log.jsonl", extra_files: dict | None = None) -> None:
    evals = {s: v for _, s, v in run.evals}
    out.mkdir(parents=True, exist_ok=True)
    with (out / fname).open("w") as fh:
        if 0 in evals:
            fh.write(json.dumps({"step": 0, "time": round(T0, 1), **{k: g6(x) for k, x in evals[0].items()}}) + "\n")
        for w, s, v in dedup(run.train):
            d = {"step": s, "time": round(w, 1), **{k: g6(x) for k, x in named(v, keymap).items()}}
            if s in evals:
                d.update({k: g6(x) for k, x in evals[s].items()})
            fh.write(json.dumps(d) + "\n")
    for name, text in (extra_files or {}).items():
        (out / name).write_text(text)


def w_trackio(run: Run, out: Path, project: str, run_name: str, config: dict) -> None:
    """Trackio local store: one SQLite DB per project; `metrics` rows hold a JSON object per log call (HF keys via
    rewrite_logs: train/..., eval/...)."""
    d = out / "trackio"
    d.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(d / f"{project}.db")
    db.executescript("""
    CREATE TABLE metrics (id INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT, timestamp TEXT, run_name TEXT,
      step INTEGER, metrics TEXT);
    CREATE TABLE configs (id INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT, run_name TEXT, config TEXT,
      created_at TEXT);
    CREATE TABLE system_metrics (id INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT, timestamp TEXT, run_name TEXT,
      metrics TEXT);
    CREATE TABLE project_metadata (key TEXT PRIMARY KEY, value TEXT);
    """)
    import datetime as dt
    ts = lambda w: dt.datetime.fromtimestamp(w, dt.UTC).isoformat()  # noqa: E731
    rid = uuid.uuid5(uuid.NAMESPACE_URL, "trackio/" + run_name).hex[:16]
    db.execute("INSERT INTO configs (run_id, run_name, config, created_at) VALUES (?, ?, ?, ?)",
               (rid, run_name, json.dumps(config), ts(T0)))
    rng = np.random.default_rng(31)
    rows = []
    for w, s, v in dedup(run.train):
        m = {"train/" + k: g6(x) for k, x in named(v, TRL_GRPO).items()}
        m.update({"train/" + k: g6(x) for k, x in trl_extras(v, rng).items()})
        m["train/epoch"] = round(s / run.plan.planned, 4)
        m["train/global_step"] = s
        rows.append((rid, ts(w), run_name, s, json.dumps(m)))
    for w, s, v in run.evals:
        m = {"eval/" + k.removeprefix("eval_"): g6(x) for k, x in v.items()}
        m.update({"eval/runtime": 88.1, "train/global_step": s})
        rows.append((rid, ts(w), run_name, s, json.dumps(m)))
    rows.sort(key=lambda r: r[1])
    db.executemany("INSERT INTO metrics (run_id, timestamp, run_name, step, metrics) VALUES (?, ?, ?, ?, ?)", rows)
    db.commit()
    db.close()

# ------------------------------------------------------------------------------------------------ labels / windows

def headline(plan: Plan) -> tuple[np.ndarray, np.ndarray, float]:
    """Noise-free headline at its logged steps and its sampling sd at the best level."""
    if plan.evals:
        key = plan.headline or next(iter(plan.evals))
        fn, n = plan.evals[key]
        xs = [s for s in range(0 if plan.eval_at0 else plan.eval_every, plan.reached + 1, plan.eval_every)
              if fn(s) is not None]
        ys = np.array([fn(s) for s in xs])
        p = ys.max()
        sd = np.sqrt(p * (1 - p) / n) if n > 0 else -n
        return np.array(xs), ys, float(sd)
    first = plan.first if plan.first is not None else plan.log_every
    xs = [s for s in range(first, plan.reached + 1) if s == first or s % plan.log_every == 0]
    ys = np.array([plan.reward(s) for s in xs])
    i = int(np.argmax(ys))
    n = plan.prompts(xs[i])
    if plan.score_sd:
        sd = plan.score_sd / np.sqrt(n * plan.group)
    else:
        c = plan.spread(xs[i]) if callable(plan.spread) else plan.spread
        p = ys[i]
        sd = np.sqrt(p * (1 - p) * (1 / (c + 1) + c / ((c + 1) * plan.group)) / n)
    return np.array(xs), ys, float(sd)


def window(plan: Plan, onset: int) -> tuple[int, int]:
    xs, ys, sd = headline(plan)
    good = [int(x) for x, y in zip(xs, ys, strict=False) if y >= ys.max() - sd]
    return good[0], max(x for x in good if x <= onset)


def RB(plan: Plan, onset: int) -> dict:
    return rollback(*window(plan, onset), onset)


def SRB(plan: Plan, onset: int) -> dict:
    return stop_or_rollback(*window(plan, onset), onset)


def case(name: str, plan: Plan, write: Callable, seed: int, labels: dict, tags: str, why: str) -> Case:
    return Case(name, plan, write, seed, (plan.reached, plan.planned), labels, tags, why)


def write_run(c: Case, folder: Path) -> None:
    c.write(simulate(c.scenario, c.seed), folder)


def W(fn: Callable, **kw) -> Callable:
    return lambda run, folder: fn(run, folder, **kw)


def seg(*parts: tuple[int, Callable]) -> Callable:
    """Level made of pieces: [(from_step, fn), ...] (each piece from its step on)."""
    def f(s):
        cur = parts[0][1]
        for a, fn in parts:
            if s >= a:
                cur = fn
        return cur(s)
    return f


# ------------------------------------------------------------------------------------------------------ the cases

CASES: list[Case] = []
add = CASES.append

# ===================================================================================== healthy (continue) look-alikes

p = Plan(reached=640, planned=2000, reward=K({0: 0.30, 300: 0.305, 420: 0.32, 640: 0.41}), group=16,
         lr=K({0: 1.7e-9, 600: 1e-6, 2000: 1e-7}), kl=K({0: 0.0, 300: 0.0004, 640: 0.006}),
         entropy=K({0: 0.52, 400: 0.51, 640: 0.47}), length=K({0: 610, 640: 660}), trunc=C(0.02), gnorm=C(0.12),
         evals={"validation/accuracy": (K({0: 0.33, 320: 0.33, 440: 0.35, 640: 0.42}), 500)}, eval_every=40,
         eval_at0=True, first=1, step_secs=95)
add(case("ok-lr-warmup-600-flat-then-lifts-nemo-tb", p,
         W(w_tb, keymap=NEMO, prefix="", eval_prefix="", extra=nemo_extras, dirs=["exp_000/tensorboard"]), 1201,
         HEALTHY, "nemo_rl tensorboard grpo lr_warmup slow_start live lookalike",
         """NeMo-RL GRPO, step 640 of 2000, linear LR warmup over 600 steps (train/lr reaches 1e-6 only at 600). For
         the first ~350 steps train/reward sits at ~0.30 and validation/accuracy (500 problems every 40, sd ~0.021)
         at ~0.33, which looks like a run that never learns; but the LR was still tiny. Since ~420 both lift
         (reward ~0.40, validation 0.33 -> ~0.41) while KL and entropy move only a little. Learning has just started
         at full LR: continue."""))

p = Plan(reached=420, planned=1000, reward=sat(0.22, 0.62, 500), prompts=C(8), group=4,
         kl=K({0: 0.0, 420: 0.012}), entropy=None, length=K({0: 380, 420: 450}), trunc=C(0.015), gnorm=C(0.35),
         gtail=0.35, lr=C(5e-7), evals={"eval_math_pass1": (sat(0.24, 0.55, 550), 500)}, eval_every=20,
         step_secs=20)
add(case("ok-tiny-batch-8-prompts-chance-low-streak-eval-rising-openrlhf-tb", p,
         W(w_tb, keymap=ORLHF, prefix="train/", eval_prefix="eval/", extra=orlhf_extras), 2778,
         HEALTHY, "openrlhf tensorboard reinforce_pp tiny_batch noise low_streak lookalike",
         """OpenRLHF REINFORCE++ TensorBoard, step 420 of 1000, rollout batch of only 8 prompts x 4 samples, so
         train/reward jumps by +-0.1 from step to step and the last stretch of batches happens to sit below the
         trend, which reads like a turn down. The held-out eval/eval_math_pass1 (500 problems every 20 steps) keeps
         rising 0.21 -> ~0.42 through the last points, KL grows slowly and nothing else moves. Sampling noise of tiny
         batches, not a decline: continue."""))


def epochs_of(steps_per_epoch: int) -> Callable:
    return lambda s, rng, v: float(s // steps_per_epoch)


p = Plan(reached=560, planned=1000, reward=plus(sat(0.38, 0.66, 350), lambda s: 0.045 * (s // 200)),
         kl=K({0: 0.0, 560: 0.012}), entropy=K({0: 0.42, 560: 0.30}), length=K({0: 260, 560: 235}), trunc=C(0.002),
         gnorm=C(0.18), evals={"val-core/openai/gsm8k/acc/mean@1": (sat(0.44, 0.72, 380), 1319)}, eval_every=40,
         eval_at0=True, extras={"epoch_idx": epochs_of(200)}, step_secs=60)
add(case("ok-epoch-boundary-train-steps-up-val-smooth-verl-jsonl", p,
         W(w_verl_jsonl, project="gsm8k_grpo", exp="qwen25_3b_5ep"), 1203,
         HEALTHY, "verl verl_jsonl grpo multi_epoch epoch_boundary lookalike",
         """verl file logger, GRPO over 5 epochs of a 12.8k-prompt set (200 steps per epoch), step 560 of 1000.
         critic/score/mean steps up by ~0.045 right at steps 200 and 400, when the prompts come round again (the
         policy has seen them), so the train curve is a staircase and the train-val gap widens. The held-out
         val-core/openai/gsm8k/acc/mean@1 (1319 problems, sd ~0.013) rises smoothly 0.44 -> ~0.65 with no step and
         is still gaining (~0.03 over the last 160 steps). Memorisation is not hurting held-out accuracy yet:
         continue."""))

MIX = ["(TaskRunner pid=30412) Resuming from checkpoints/grpo_mix/qwen7b_math_code/global_step_300",
       "(TaskRunner pid=30412) data.train_files=['math_dapo.parquet', 'codecontests_py.parquet'] "
       "data.sampling_weights=[0.6, 0.4]",
       "(TaskRunner pid=30412) dataset len: 41872"]
p = Plan(reached=640, planned=1500, resumes=[(300, 300)],
         reward=seg((0, K({0: 0.40, 300: 0.66})), (301, K({301: 0.47, 640: 0.565}))),
         length=seg((0, K({0: 520, 300: 560})), (301, K({301: 900, 640: 940}))),
         trunc=seg((0, C(0.01)), (301, C(0.035))),
         entropy=seg((0, K({0: 0.40, 300: 0.34})), (301, K({301: 0.46, 640: 0.42}))),
         kl=K({0: 0.0, 300: 0.01, 640: 0.02}), gnorm=C(0.22),
         evals={"val-core/math500/acc/mean@1": (K({0: 0.42, 300: 0.52, 640: 0.565}), 500),
                "val-core/humaneval/acc/mean@1": (K({0: 0.31, 300: 0.31, 640: 0.42}), 164)},
         eval_every=20, eval_at0=True, step_secs=70)
add(case("ok-data-mix-adds-code-score-drops-math-val-rises-verl-console", p,
         W(w_verl_console, at_resume=MIX, ckpt=("grpo_mix", "qwen7b_math_code", 100, 600)), 1208,
         HEALTHY, "verl verl_console grpo data_mix curriculum resume checkpoints multi_eval lookalike",
         """verl console, GRPO, step 640 of 1500, checkpoints every 100 on disk. At the resume from global_step_300
         the data mix changed (40% code prompts added, printed in the log): critic/score/mean drops at once from
         ~0.66 to ~0.47 and responses get longer, but there is no damage behind it: the score climbs again
         (~0.56 now), val-core/math500 (500 problems) keeps rising 0.52 -> ~0.56 across the change and
         val-core/humaneval starts rising (0.31 -> ~0.42). A harder mix, not a regression: continue."""))

p = Plan(reached=900, planned=2000, resumes=[(437, 400)], reward=sat(0.30, 0.72, 600),
         entropy=K({0: 0.48, 900: 0.36}), length=K({0: 450, 900: 610}), trunc=K({0: 0.01, 900: 0.04}),
         gnorm=C(0.15), lr=K({0: 1e-6, 900: 8.2e-7}), log_every=10, eval_every=100,
         evals={"eval_math500_reward": (lambda s: 0.34 + 0.04 * s / 100 if s <= 400 else None, 500),
                "eval_olympiadbench_reward": (lambda s: None if s <= 400 else 0.20 + 0.055 * (s - 500) / 400, 675)},
         headline="eval_olympiadbench_reward", step_secs=80)
add(case("ok-eval-set-swapped-at-resume-new-key-starts-lower-trl-state", p,
         W(w_trl_state, eval_keys={}, save_every=100, limit=3, fns=lambda v: {"accuracy_reward": v["reward"]}),
         1205, HEALTHY, "trl trl_state grpo checkpoints eval_swap resume multi_eval lookalike",
         """TRL GRPO trainer_state.json (checkpoint-700/800/900), step 900 of 2000. It resumed at 400 with a new
         eval_dataset: eval_math500_reward (500 problems) rose 0.39 -> ~0.52 up to step 400 and then stops; a new key,
         eval_olympiadbench_reward (675 harder problems), starts at ~0.20 at 500 and climbs to ~0.26. Read as one eval
         series it looks like a crash from 0.5 to 0.2, but it is a different benchmark. The train reward rises
         0.30 -> ~0.63 throughout and both evals only ever go up: continue."""))

HEAD6 = ["GRPOConfig(output_dir='out/qwen3b-countdown', learning_rate=1e-06, beta=0.04, max_grad_norm=1.0, "
         "logging_steps=5, num_generations=8, max_completion_length=768, max_steps=1200, save_steps=200)"]
p = Plan(reached=600, planned=1200, reward=sat(0.42, 0.78, 500), kl=K({0: 0.0, 600: 0.07}), entropy=None,
         length=K({0: 300, 600: 340}), trunc=C(0.004), gnorm=C(0.09), gtail=0.3, spikes=(0.08, 12, 140),
         log_every=5, step_secs=30)
add(case("ok-grad-norm-heavy-tail-spikes-clipped-trl-console", p,
         W(w_trl_console, eval_keys={}, head=HEAD6), 1206,
         HEALTHY, "trl trl_console grpo grad_norm spikes heavy_tail no_eval lookalike",
         """TRL 0.18 GRPO console log (logging_steps 5), step 600 of 1200, no held-out eval. grad_norm sits ~0.1
         but every few logs jumps to 2-13, once ~54 (single-step spikes, max_grad_norm=1.0 clips them), which looks alarming.
         Nothing follows the spikes: reward climbs steadily 0.42 -> ~0.67, kl rises smoothly to ~0.07, lengths and
         clipped_ratio are flat, loss shows no jumps. Heavy-tailed gradient norms that clipping absorbs:
         continue."""))


def filt_reward(s, rng, v):  # mean reward of the groups kept by dynamic filtering (mixed groups only)
    return 0.5 + 0.12 * (v["reward"] - 0.5) + rng.normal(0, 0.012)


p = Plan(reached=350, planned=800, reward=K({0: 0.34, 350: 0.63}), prompts=C(128), group=8, spread=1.5,
         kl=K({0: 0.0, 350: 0.018}), entropy=K({0: 0.55, 350: 0.50}), length=K({0: 700, 350: 860}),
         trunc=K({0: 0.03, 350: 0.05}), gnorm=C(0.3), lr=C(1e-6),
         extras={"_filtered": filt_reward,
                 "dynamic_filtering_pass_rate": lambda s, rng, v: 1 - v["zero_std"]},
         evals={"eval_math500_pass1": (K({0: 0.50, 350: 0.63}), 500), "eval_aime24_pass1": (K({0: 0.10, 350: 0.17}), 30)},
         eval_every=25, step_secs=140)
add(case("ok-dapo-filtered-reward-flat-rollout-reward-rises-openrlhf-console", p,
         W(w_orlhf_console, extra=lambda v, rng: {"rollout/reward_mean": v["reward"], "reward": v["_filtered"],
                                                  "rollout/reward_std": v["reward_std"]}), 1208,
         HEALTHY, "openrlhf openrlhf_console dapo dynamic_sampling filtered_reward lookalike",
         """OpenRLHF GRPO with DAPO-style dynamic filtering, console log, step 350 of 800. The logged `reward` is the
         mean over the kept (mixed-outcome) groups, so it is pinned at ~0.5 for the whole run and looks like no
         learning. rollout/reward_mean over all rollouts rises 0.34 -> ~0.63 while dynamic_filtering_pass_rate stays
         ~0.7 (the all-right and all-wrong groups are dropped), and eval_math500_pass1 (500 problems every 25) climbs 0.50 -> ~0.63
         (aime24 on 30 problems is too noisy to read). Healthy and still improving: continue."""))

p = Plan(reached=800, planned=2000, resumes=[(512, 500)], log_every=10,
         reward=seg((0, K({0: 0.28, 300: 0.40, 500: 0.44})), (501, K({501: 0.52, 800: 0.585}))),
         prompts=C(320), length=seg((0, K({0: 620, 500: 930})), (501, K({501: 1120, 800: 1230}))),
         trunc=seg((0, K({0: 0.04, 500: 0.30})), (501, K({501: 0.03, 800: 0.035}))),
         entropy=K({0: 0.5, 800: 0.42}), gnorm=C(0.2), step_secs=90)
add(case("ok-max-len-raised-at-resume-truncation-falls-wandb-panels", p,
         W(w_wandb_panels, name="qwen7b-grpo-len2k", xkey="train/global_step",
           panels={"reward.csv": ("reward", "train/reward"),
                   "completions_mean_length.csv": ("length", "train/completions/mean_length"),
                   "completions_clipped_ratio.csv": ("trunc", "train/completions/clipped_ratio"),
                   "frac_reward_zero_std.csv": ("zero_std", "train/frac_reward_zero_std")}), 1208,
         HEALTHY, "trl wandb_csv grpo max_length truncation resume no_eval lookalike",
         """W&B panel exports of a TRL GRPO run (x = train/global_step), step 800, no held-out eval. Up to 500 the
         completions ran into max_completion_length=1024: clipped_ratio rose to ~0.3 and the reward gains slowed
         (0.40 -> 0.44 over 200 steps). At the resume from checkpoint-500 the cap was raised to 2048: clipped_ratio
         falls to ~0.03, mean length jumps to ~1120 and the reward steps up to ~0.52 and keeps rising (~0.58). The
         discontinuity is a config change that helped; the trend is up: continue."""))

p = Plan(reached=800, planned=800, reward=sat(0.25, 0.75, 900), kl=K({0: 0.0, 800: 0.03}),
         entropy=K({0: 0.6, 800: 0.48}), length=K({0: 330, 800: 420}), trunc=C(0.006), gnorm=C(0.2), lr=C(1e-6),
         evals={"val_acc": (sat(0.28, 0.62, 700), 1000)}, eval_every=50, step_secs=50)
add(case("ok-finished-still-rising-at-end-extend-custom-csv", p,
         W(w_csv, cols={"reward": "reward", "reward_std": "reward_std", "kl": "kl", "entropy": "entropy",
                        "length": "resp_len", "lr": "lr", "gnorm": "grad_norm"}, eval_cols={"val_acc": "val_acc"},
           extra_files={"summary.json": json.dumps({"status": "finished", "total_steps": 800, "last_step": 800,
                                                     "lr_schedule": "constant", "lr": 1e-6}) + "\n"}), 1209,
         HEALTHY, "custom custom_csv grpo finished still_rising constant_lr",
         """Custom GRPO loop, plain CSV, finished its planned 800 steps (summary.json) at a constant LR of 1e-6.
         val_acc (1000 problems every 50, sd ~0.016) is still rising at the end: ~0.48 at 600 -> ~0.51 at 800, and
         the train reward has not flattened (0.49 -> ~0.54 over the last 200 steps); KL is small. It stopped because
         the budget ran out, not because it converged: extending it is worth it (continue)."""))


p = Plan(reached=700, planned=1600, reward=None, core=False, entropy=None, gnorm=C(4.0), gtail=0.25,
         lr=K({0: 0.0, 50: 5e-7, 1600: 5e-7}), first=1,
         extras={"train/accuracy": lambda s, r, v: K({0: 0.52, 300: 0.66, 700: 0.72})(s) + r.normal(0, 0.04),
                 "train/preference_loss": lambda s, r, v: K({0: 0.693, 300: 0.60, 700: 0.55})(s) + r.normal(0, 0.025),
                 "train/sft_loss": lambda s, r, v: K({0: 0.62, 700: 0.70})(s) + r.normal(0, 0.012),
                 "train/rewards_chosen_mean": lambda s, r, v: K({0: 0.0, 700: -0.35})(s) + r.normal(0, 0.06),
                 "train/rewards_rejected_mean": lambda s, r, v: K({0: 0.0, 700: -1.6})(s) + r.normal(0, 0.08),
                 "train/num_valid_samples": lambda s, r, v: 128.0,
                 "train/loss": lambda s, r, v: v["train/preference_loss"] + 0.1 * v["train/sft_loss"]},
         evals={"validation/accuracy": (K({0: 0.53, 300: 0.62, 700: 0.665}), 1000),
                "validation/loss": (K({0: 0.693, 300: 0.64, 700: 0.615}), -0.005)},
         eval_every=50, eval_at0=True, step_secs=12)
add(case("ok-dpo-sft-loss-creeps-val-acc-rises-nemo-tb", p,
         W(w_tb, keymap={"gnorm": "train/grad_norm", "lr": "train/lr"}, prefix="", eval_prefix="",
           dirs=["exp_002/tensorboard"]), 1211,
         HEALTHY, "nemo_rl tensorboard dpo preference likelihood_displacement lookalike",
         """NeMo-RL DPO, TensorBoard, step 700 (of 1600 planned). Both implicit rewards fall (chosen 0 -> ~-0.35,
         rejected 0 -> ~-1.6) and train/sft_loss creeps up 0.62 -> ~0.70, the likelihood-displacement pattern that
         can precede overfitting. But it is mild, the margin grows, and held out the model keeps improving:
         validation/accuracy (1000 pairs every 50) 0.53 -> ~0.66 and validation/loss 0.693 -> ~0.615, still moving
         the right way at the last points. Continue (watch sft_loss)."""))

p = Plan(reached=700, planned=1500, reward=sat(0.35, 0.75, 600), kl=K({0: 0.0, 700: 0.025}),
         entropy=K({0: 0.55, 700: 0.44}), length=K({0: 350, 700: 470}), trunc=C(0.01), gnorm=C(0.25),
         evals={"eval/math500": (sat(0.36, 0.56, 600), 500), "eval/gsm8k": (sat(0.70, 0.83, 500), 1319),
                "eval/mmlu_stem": (K({0: 0.57, 700: 0.555}), 400)},
         eval_every=50, eval_at0=True, step_secs=55)
add(case("ok-ood-benchmark-dips-within-noise-indomain-rises-custom-jsonl", p,
         W(w_jsonl, keymap=PLAIN, fname="train_log.jsonl"), 1211,
         HEALTHY, "custom custom_jsonl grpo multi_eval benchmarks_disagree ood lookalike",
         """Custom GRPO loop, JSONL, step 700 of 1500, three held-out benchmarks every 50 steps. The in-domain ones
         rise clearly: eval/math500 (500) 0.36 -> ~0.50 and eval/gsm8k (1319) 0.70 -> ~0.80. The out-of-domain
         eval/mmlu_stem (400 questions, sd ~0.025) wobbles and ends a point or two lower (0.57 -> ~0.55): that is
         within one sampling sd, not forgetting. Benchmarks disagree only within noise; the run is still improving
         where it is trained: continue."""))

# ======================================================================================================== stops

p = Plan(reached=1000, planned=2000, reward=K({0: 0.42, 350: 0.66, 1000: 0.86}), kl=K({0: 0.0, 350: 0.01, 1000: 0.045}),
         entropy=K({0: 0.45, 350: 0.33, 1000: 0.16}), length=K({0: 600, 350: 560, 1000: 520}), trunc=C(0.008),
         gnorm=C(0.2), evals={"val-core/math/acc/mean@1": (K({0: 0.40, 350: 0.515, 1000: 0.515}), 500)},
         eval_every=50, eval_at0=True, step_secs=65)
add(case("stop-train-climbs-650-steps-val-flat-since-350-verl-tb", p,
         W(w_tb, keymap=VERL, prefix="", eval_prefix="", extra=lambda v, rng: verl_extras(v, 0, rng)), 1213,
         stop(350), "verl tensorboard grpo train_eval_gap plateau memorisation",
         """verl TensorBoard, GRPO on a 2k-prompt set (30 epochs' worth), step 1000 of 2000. critic/score/mean keeps
         climbing (0.66 at 350 -> ~0.86) while val-core/math/acc/mean@1 (500 problems every 50, sd ~0.022) has been
         flat at ~0.51 for 650 steps; entropy halves and KL quadruples over the same stretch. The train gains are
         memorisation of the training prompts; held out nothing is gained and nothing lost yet. Stop: the current
         weights are as good as any."""))

p = Plan(reached=300, planned=1500, reward=K({0: 0.012, 300: 0.014}), kl=K({0: 0.0, 300: 0.0003}),
         entropy=C(0.52), length=C(480), trunc=C(0.006), gnorm=C(0.015), gtail=0.5,
         evals={"val-core/HuggingFaceH4/MATH-500/acc/mean@1": (C(0.48), 500)}, eval_every=25, eval_at0=True,
         step_secs=60)
add(case("stop-answer-extractor-bug-score-near-zero-val-normal-verl-jsonl", p,
         W(w_verl_jsonl, project="mathmix_grpo", exp="qwen7b_boxed"), 1213,
         stop(50), "verl verl_jsonl grpo reward_bug format never_learns no_signal",
         """verl file logger, GRPO, step 300 of 1500. critic/score/mean is ~0.01 from the first step and never moves,
         while the same model scores ~0.48 on val-core/HuggingFaceH4/MATH-500 (graded by the default math scorer):
         the training reward function cannot read the model's answers (a format / extractor mismatch), so almost
         every group is all-zero, advantages and grad_norm are near 0 and actor/kl_loss stays ~1e-4. The weights have
         hardly changed and will not: stop and fix the reward, the current weights are as good as any."""))

p = Plan(reached=1100, planned=2400, reward=K({0: -0.4, 400: 1.2, 1100: 1.3}), score_sd=1.2, prompts=C(128), group=1,
         kl=K({0: 0.0, 400: 0.05, 1100: 0.22}), entropy=None, length=K({0: 260, 400: 300, 1100: 330}),
         trunc=C(0.004), gnorm=C(0.6), lr=C(5e-7),
         extras={"critic_loss": lambda s, r, v: K({0: 0.9, 150: 0.2, 1100: 0.12})(s) * (1 + 0.1 * r.normal()),
                 "values": lambda s, r, v: v["reward"] * 0.92 + r.normal(0, 0.05),
                 "critic_lr": lambda s, r, v: 9e-6, "critic_grad_norm": lambda s, r, v: 1.1 * np.exp(0.3 * r.normal())},
         evals={"eval_ifeval_pass1": (K({0: 0.60, 400: 0.70, 1100: 0.685}), 541)}, eval_every=50, step_secs=70)
add(case("stop-or-rb-kl-creeps-rm-flat-eval-erodes-within-noise-openrlhf-ppo-tb", p,
         W(w_tb, keymap={k: x for k, x in ORLHF.items() if k != "group_std"}, prefix="train/", eval_prefix="eval/", extra=orlhf_extras), 1214,
         SRB(p, 400), "openrlhf tensorboard ppo reward_model kl_drift plateau",
         """OpenRLHF PPO (critic, reward model), TensorBoard, step 1100 of 2400. The RM score rose -0.4 -> ~1.2 by
         400 and has been nearly flat since (~1.3), while train/kl keeps creeping up 0.05 -> ~0.22. The held-out
         eval/eval_ifeval_pass1 (541 prompts, sd ~0.02) reached ~0.70 by 400 and has wandered between ~0.64 and ~0.74
         since, ending ~0.69: any loss is within one sd. The policy is drifting without buying anything: stop; going back to ~400 (closer to the reference,
         as good) is as defensible."""))

p = Plan(reached=1000, planned=3000, reward=K({0: 0.42, 500: 0.70, 1000: 0.71}), prompts=C(128), group=16,
         spread=lambda s: float(np.exp(np.interp(s, [0, 500, 1000], np.log([4.0, 0.06, 0.05])))), kl=K({0: 0.0, 500: 0.02, 1000: 0.03}),
         entropy=K({0: 0.5, 500: 0.3, 1000: 0.22}), length=K({0: 700, 500: 540, 1000: 530}), trunc=C(0.01),
         gnorm=C(0.1), evals={"validation/accuracy": (K({0: 0.40, 500: 0.64, 1000: 0.645}), 500)}, eval_every=50,
         eval_at0=True, first=1, step_secs=110)
add(case("stop-bimodal-solved-or-impossible-mixed-groups-vanish-nemo-tb", p,
         W(w_tb, keymap=NEMO, prefix="", eval_prefix="", extra=nemo_extras, dirs=["exp_004/tensorboard"]), 1223,
         stop(500), "nemo_rl tensorboard grpo no_signal zero_std plateau bimodal",
         """NeMo-RL GRPO, step 1000 of 3000. train/reward rose 0.42 -> ~0.70 by 500 and is flat since, at a level
         that does not look saturated. But train/baseline_reward shows why: pct_mixed fell from ~90% to a few
         percent, with ~70% of prompts solved in all 16 samples (pct_1) and ~27% never solved (pct_0), so almost no
         group carries a gradient. validation/accuracy (500 problems, sd ~0.021) has hovered at ~0.60-0.65 for 500
         steps. No learning
         signal left on this data; current weights as good as any: stop."""))

p = Plan(reached=3600, planned=8000, reward=K({0: 0.22, 800: 0.50, 1500: 0.58, 3600: 0.585}), prompts=C(1600),
         group=4, kl=K({0: 0.0, 1500: 0.05, 3600: 0.085}), entropy=K({0: 0.5, 1500: 0.35, 3600: 0.31}),
         length=K({0: 380, 1500: 330, 3600: 325}), trunc=C(0.005), gnorm=C(0.12), gtail=0.15,
         lr=K({0: 1e-6, 8000: 1e-7}), log_every=100, evals={"eval_reward": (K({0: 0.25, 1500: 0.565, 3600: 0.565}), 800)},
         eval_every=500, step_secs=40)
add(case("stop-log-every-100-long-plateau-rloo-mlflow-files", p,
         W(w_mlflow_files, keymap=TRL_GRPO, name="rloo-llama3b-mathqa",
           params={"max_steps": 8000, "logging_steps": 100, "eval_steps": 500, "num_generations": 4, "beta": 0.05,
                   "learning_rate": 1e-6}), 1216,
         stop(1500), "trl mlflow_files rloo sparse_logging plateau",
         """TRL RLOO logged to an MLflow file store (raw HF keys), logging_steps=100, so 36 points reach step 3600 of
         8000; eval_reward (800 problems) every 500. The reward rose 0.22 -> ~0.58 by 1500 and the last 21 logged
         points are flat (~0.58-0.59); eval_reward has read ~0.56-0.57 at every eval since 1500 while kl keeps rising
         slowly. A plateau twice as long as the rise, with half the budget left: nothing more to gain, weights as
         good as any: stop."""))

HEAD_S6 = ["trainable params: 40,370,176 || all params: 7,655,986,688 || trainable%: 0.5273",
           "/opt/conda/lib/python3.11/site-packages/torch/utils/checkpoint.py:87: UserWarning: None of the inputs "
           "have requires_grad=True. Gradients will be None",
           "  warnings.warn("]
p = Plan(reached=300, planned=1500, reward=C(0.36), entropy=C(0.71), length=C(520), trunc=C(0.02), gnorm=C(0.0),
         lr=K({0: 0.0, 30: 2e-6, 1500: 2e-7}), log_every=10, step_secs=50)
add(case("stop-grad-norm-zero-checkpointing-no-input-grads-trl-console", p,
         W(w_trl_console, eval_keys={}, head=HEAD_S6, fns=lambda v: {"accuracy_reward": v["reward"]}), 1217,
         stop(10), "trl trl_console grpo grad_norm_zero bug never_learns no_eval",
         """TRL GRPO console, LoRA with gradient checkpointing, step 300 of 1500. torch warned at start that no input
         requires grad ("Gradients will be None"), and grad_norm is exactly 0.0 at every one of 30 logs while the LR
         schedule runs. Reward (~0.36), entropy, lengths and zero-std fraction are flat with pure sampling noise:
         the adapter never receives a gradient, so the weights are the base weights. Stop and fix the setup (e.g.
         enable_input_require_grads)."""))

# ===================================================================================================== rollbacks

FMT = lambda s: 0.97 if s < 500 else 0.99  # noqa: E731


def r1_row(v, rng):
    fmt = float(np.clip(FMT(v["_s"]) + rng.normal(0, 0.006), 0, 1))
    return {"reward": v["reward"] + 0.1 * fmt, "rewards/format_reward/mean": fmt,
            "rewards/format_reward/std": float(np.sqrt(fmt * (1 - fmt))),
            "completions/min_length": v["_minlen"]}


p = Plan(reached=800, planned=2000, reward=K({0: 0.40, 450: 0.555, 500: 0.565, 560: 0.64, 800: 0.73}),
         length=K({0: 480, 490: 520, 800: 350}), trunc=C(0.012), entropy=K({0: 0.5, 490: 0.42, 800: 0.33}),
         gnorm=C(0.14), log_every=10,
         extras={"_s": lambda s, r, v: s,
                 "_minlen": lambda s, r, v: max(2.0, K({0: 140, 490: 150, 540: 12, 800: 6})(s) * np.exp(0.2 * r.normal()))},
         evals={"eval_rewards/accuracy_reward/mean": (K({0: 0.41, 450: 0.52, 500: 0.52, 800: 0.43}), 500)},
         eval_post=lambda s, r, e: {"eval_reward": e["eval_rewards/accuracy_reward/mean"] + 0.1 * 0.975},
         eval_every=50, step_secs=70)
add(case("bad-empty-boxed-grader-exploit-min-length-collapses-trl-state", p,
         W(w_trl_state, eval_keys={}, save_every=100, limit=3, fns=lambda v: {"accuracy_reward": v["reward"]},
           extra_fn=r1_row), 1219,
         RB(p, 500), "trl trl_state grpo checkpoints reward_hacking grader_bug second_signal",
         """TRL GRPO (accuracy_reward + 0.1 x format_reward), step 800 of 2000, checkpoint-600/700/800 on disk. After
         a healthy rise the reward accelerates from ~500 (0.65 -> ~0.83) exactly when completions/min_length
         collapses from ~150 to single-digit tokens and mean length falls 520 -> ~350: the policy found that an empty
         answer is graded correct when the gold answer fails to parse. Held out, where every answer parses,
         eval_rewards/accuracy_reward/mean (500 problems) peaked ~0.51-0.55 at 450-500 and falls to ~0.40 by 800. Roll back to
         ~500 (older than every checkpoint on disk) and fix the grader."""))

p = Plan(reached=760, planned=1200,
         reward=K({0: 0.30, 300: 0.55, 480: 0.62, 505: 0.62, 512: 0.35, 520: 0.20, 560: 0.38, 620: 0.50, 760: 0.505}),
         entropy=K({0: 0.45, 480: 0.38, 505: 0.38, 512: 1.4, 525: 1.6, 560: 0.8, 620: 0.55, 760: 0.53}),
         gnorm=K({0: 0.2, 504: 0.2, 507: 3.5, 520: 1.2, 560: 0.4, 760: 0.3}),
         length=K({0: 500, 505: 560, 515: 1400, 530: 1300, 620: 700, 760: 680}),
         trunc=K({0: 0.01, 505: 0.01, 515: 0.35, 540: 0.3, 620: 0.05, 760: 0.05}),
         kl=K({0: 0.0, 505: 0.02, 520: 0.12, 620: 0.07, 760: 0.075}),
         evals={"val-core/math500/acc/mean@1": (K({0: 0.33, 300: 0.50, 480: 0.55, 500: 0.55, 520: 0.22, 620: 0.46,
                                                   760: 0.465}), 500)},
         eval_every=20, eval_at0=True, step_secs=75)
add(case("bad-entropy-spike-collapse-partial-recovery-verl-console", p,
         W(w_verl_console, ckpt=("math_grpo", "qwen7b_lr2e6", 100, 700)), 1219,
         RB(p, 505), "verl verl_console grpo checkpoints collapse partial_recovery entropy_blowup",
         """verl console, GRPO, step 760 of 1200, checkpoints every 100 on disk. At ~506 entropy jumps 0.38 -> ~1.5,
         grad_norm spikes, responses balloon toward the 2048 cap and critic/score/mean falls 0.62 -> ~0.2. It
         recovers over the next ~100 steps, but only partly: score ~0.50 and val-core/math500 (500 problems every 20)
         ~0.45-0.50 over the last 140 steps, against ~0.55-0.58 at 400-480. The better model is behind: roll back to
         global_step_500 (the newest good point)."""))

p = Plan(reached=1200, planned=2000, reward=K({0: 0.55, 300: 0.78, 650: 0.84, 1200: 0.93}),
         entropy=K({0: 0.35, 300: 0.22, 650: 0.14, 1200: 0.06}), kl=K({0: 0.0, 300: 0.02, 650: 0.035, 1200: 0.08}),
         length=K({0: 280, 300: 240, 650: 220, 1200: 180}), trunc=C(0.002), gnorm=C(0.12),
         evals={"val-core/openai/gsm8k/acc/mean@1": (K({0: 0.62, 300: 0.78, 650: 0.78, 1200: 0.725}), 1319)},
         eval_every=50, eval_at0=True, step_secs=40)
add(case("bad-val-plateau-then-slow-erosion-train-climbs-verl-mlflow-db", p,
         W(w_mlflow_db, keymap=VERL, name="qwen25-1.5b-gsm8k-grpo",
           params={"trainer.total_training_steps": 2000, "trainer.save_freq": 100, "trainer.test_freq": 50,
                   "actor_rollout_ref.actor.optim.lr": 1e-6, "algorithm.adv_estimator": "grpo"},
           extra=lambda v, s, rng: verl_extras(v, s, rng)), 1220,
         RB(p, 650), "verl mlflow_db grpo eval_plateau slow_decline train_eval_gap",
         """verl logged to an MLflow sqlite store (`@` written as `_at_`), step 1200 of 2000. critic/score/mean
         climbs the whole way (0.78 at 300 -> ~0.93). val-core/openai/gsm8k/acc/mean_at_1 (1319 problems, sd ~0.011)
         reached ~0.78 at 300, held there until ~650, then slid steadily to ~0.72 (about 5 sd) while entropy fell to
         ~0.06. The plateau 300-650 is all equally good; the newest good point is ~650: roll back there (save_freq
         100 -> global_step_600)."""))

p = Plan(reached=980, planned=2000, score_sd=1.0, prompts=C(256), group=1,
         reward=seg((0, K({0: -0.2, 400: 0.75, 700: 0.90})), (701, K({701: 1.62, 980: 2.35}))),
         kl=K({0: 0.0, 400: 0.04, 700: 0.055, 980: 0.21}), length=K({0: 310, 700: 345, 980: 610}),
         entropy=K({0: 0.62, 700: 0.55, 980: 0.43}), trunc=K({0: 0.004, 700: 0.005, 980: 0.03}), gnorm=C(0.5),
         extras={"critic/vf_loss": lambda s, r, v: K({0: 0.9, 200: 0.25, 700: 0.2, 702: 1.6, 760: 0.4, 980: 0.3})(s)
                 * (1 + 0.1 * r.normal()),
                 "critic/vf_explained_var": lambda s, r, v: K({0: -0.2, 200: 0.55, 700: 0.62, 703: 0.1, 760: 0.5,
                                                                980: 0.52})(s) + r.normal(0, 0.03),
                 "critic/values/mean": lambda s, r, v: v["reward"] * 0.9 + r.normal(0, 0.05),
                 "actor/reward_kl_penalty_coeff": lambda s, r, v: 0.001},
         evals={"val-core/ifeval/reward/mean@1": (K({0: 0.52, 400: 0.66, 600: 0.70, 700: 0.70, 980: 0.61}), 541)},
         eval_every=20, eval_at0=True, step_secs=95)
add(case("bad-rm-endpoint-swapped-score-jumps-kl-climbs-verl-ppo-tb", p,
         W(w_tb, keymap={**VERL, "kl": "actor/reward_kl_penalty"}, prefix="", eval_prefix="",
           extra=lambda v, rng: {k: x for k, x in verl_extras(v, 0, rng).items() if not k.startswith(("critic/score/m", "actor/kl_coef"))}),
         1221, RB(p, 700), "verl tensorboard ppo reward_model reward_scale_change rm_overoptimisation",
         """verl PPO (GAE critic) with a served reward model, TensorBoard, step 980 of 2000. At step 701
         critic/score/mean jumps 0.9 -> ~1.6 in one step while response length, entropy and KL do not move, and the
         critic's vf_loss spikes and vf_explained_var drops: the RM behind the endpoint changed, not the policy. From
         there the policy exploits the new RM: KL penalty 0.055 -> ~0.21, responses 345 -> ~610 tokens, and the
         rule-checked val-core/ifeval/reward/mean@1 (541 prompts, sd ~0.02) falls from ~0.71 around 600-700 to ~0.60 by
         960-980. Roll back to
         ~700 and pin the RM version."""))


p = Plan(reached=1200, planned=1200, core=False, entropy=None, score_sd=1.6, prompts=C(640), group=2,
         reward=K({0: 0.4, 550: 2.05, 750: 2.2, 800: 2.2, 1200: 1.25}), gnorm=C(2.5), gtail=0.3,
         lr=K({0: 5e-7, 1200: 0.0}), log_every=10,
         extras={"val/contain_eos_token": lambda s, r, v: float(np.clip(K({0: 0.97, 780: 0.96, 900: 0.80,
                                                                            1200: 0.55})(s) + r.normal(0, 0.015), 0, 1)),
                 "objective/kl": lambda s, r, v: K({0: 0.0, 800: 18.0, 1200: 34.0})(s) * (1 + 0.05 * r.normal()),
                 "objective/entropy": lambda s, r, v: K({0: 110, 800: 130, 1200: 190})(s) * (1 + 0.03 * r.normal()),
                 "objective/non_score_reward": lambda s, r, v: -0.1 * v["objective/kl"],
                 "objective/rlhf_reward": lambda s, r, v: v["reward"] - 0.1 * v["objective/kl"],
                 "objective/scores_margin": lambda s, r, v: K({0: 0.8, 1200: 1.1})(s) + r.normal(0, 0.08),
                 "rewards/accuracies": lambda s, r, v: K({0: 0.55, 800: 0.68, 1200: 0.64})(s) + r.normal(0, 0.02),
                 "rewards/chosen": lambda s, r, v: K({0: 0.1, 800: 0.9, 1200: 0.6})(s) + r.normal(0, 0.08),
                 "rewards/rejected": lambda s, r, v: K({0: 0.05, 800: 0.3, 1200: 0.2})(s) + r.normal(0, 0.08),
                 "rewards/margins": lambda s, r, v: v["rewards/chosen"] - v["rewards/rejected"],
                 "logps/chosen": lambda s, r, v: K({0: -180, 800: -205, 1200: -265})(s) * (1 + 0.02 * r.normal()),
                 "logps/rejected": lambda s, r, v: K({0: -185, 800: -215, 1200: -270})(s) * (1 + 0.02 * r.normal()),
                 "beta": lambda s, r, v: 0.1,
                 "loss": lambda s, r, v: K({0: 0.69, 800: 0.6, 1200: 0.63})(s) + r.normal(0, 0.01)},
         step_secs=35)
add(case("bad-finished-online-dpo-eos-lost-scores-fall-trl-state", p,
         W(w_trl_state, eval_keys={}, save_every=200, limit=2,
           keymap={"reward": "objective/scores", "gnorm": "grad_norm", "lr": "learning_rate", "loss": "loss"}), 1222,
         RB(p, 800), "trl trl_state online_dpo preference reward_model finished checkpoints eos truncation",
         """TRL OnlineDPOTrainer with a reward model, finished (1200/1200; checkpoint-1000/1200 kept). objective/scores
         rose 0.4 -> ~2.2 by 750-800, then val/contain_eos_token falls 0.96 -> ~0.55: completions stop ending and get
         cut at max_new_tokens, the RM scores the truncated answers low and objective/scores slides to ~1.25 while
         objective/kl doubles. The final weights are clearly worse: keep the ~800 weights (older than the saved
         checkpoints, so restore from elsewhere or retrain to 800), not the final ones."""))

p = Plan(reached=1600, planned=4000, reward=K({0: 0.30, 500: 0.70, 1400: 0.705, 1425: 0.40, 1450: 0.33, 1600: 0.34}),
         prompts=C(640), entropy=K({0: 0.40, 500: 0.30, 1400: 0.29, 1420: 1.5, 1600: 1.9}),
         length=K({0: 380, 500: 420, 1400: 425, 1430: 180, 1600: 150}),
         gnorm=K({0: 0.2, 1395: 0.2, 1405: 6.0, 1450: 2.5, 1600: 2.0}), log_every=10, step_secs=60)
add(case("bad-long-plateau-then-sudden-break-wandb-panels", p,
         W(w_wandb_panels, name="grpo-mistral7b-mathmix",
           panels={"reward.csv": ("reward", "train/reward"), "entropy.csv": ("entropy", "train/entropy"),
                   "completions_mean_length.csv": ("length", "train/completions/mean_length"),
                   "grad_norm.csv": ("gnorm", "train/grad_norm")}), 1223,
         RB(p, 1400), "trl wandb_csv grpo plateau sudden_collapse entropy_blowup no_eval",
         """W&B panel exports (bucketed, min/max bands) of a TRL GRPO run, step 1600, no held-out eval. The reward
         rose 0.30 -> ~0.70 by 500 and held there for 900 steps; at ~1400 grad_norm jumps 0.2 -> ~6, entropy goes
         0.29 -> ~1.9, lengths collapse 425 -> ~150 and the reward falls to ~0.34 with no sign of recovery in 200
         steps. Everything from 500 to 1400 is equally good; the newest good point, just before the break (~1400),
         is the one to restore."""))

p = Plan(reached=1100, planned=2000, reward=K({0: 0.35, 400: 0.62, 1100: 0.665}), prompts=C(128), group=4,
         kl=K({0: 0.0, 400: 0.04, 1100: 0.26}), entropy=None, length=K({0: 420, 400: 480, 1100: 560}),
         trunc=K({0: 0.01, 400: 0.015, 1100: 0.04}), gnorm=C(0.3), lr=C(5e-7),
         evals={"eval_math500_pass1": (K({0: 0.32, 350: 0.55, 450: 0.56, 1100: 0.49}), 500)}, eval_every=50,
         step_secs=65)
add(case("bad-kl-creep-eval-erodes-beyond-noise-reinforcepp-openrlhf-console", p,
         W(w_orlhf_console), 1224,
         RB(p, 500), "openrlhf openrlhf_console reinforce_pp kl_drift slow_decline",
         """OpenRLHF REINFORCE++ (rule-based math reward), console log, step 1100 of 2000. The train reward still
         edges up (0.62 at 400 -> ~0.66) but KL creeps steadily 0.04 -> ~0.26 and responses lengthen. Held out,
         eval_math500_pass1 (500 problems every 50, sd ~0.022) peaked ~0.56 around 400-500 and has slid over 12
         evals to ~0.49, about 3 sd and steady in trend. Slow erosion, but real: roll back to ~500, the newest point
         still at the peak."""))

p = Plan(reached=700, planned=1500, resumes=[(400, 400)], prompts=C(96), group=16, first=1,
         reward=seg((0, K({0: 0.38, 360: 0.64, 400: 0.645})), (401, K({401: 0.64, 700: 0.55}))),
         kl=seg((0, K({0: 0.0, 400: 0.012})), (401, K({401: 0.09, 700: 0.05}))),
         entropy=seg((0, K({0: 0.5, 400: 0.42})), (401, K({401: 0.45, 700: 0.50}))),
         length=seg((0, K({0: 640, 400: 700})), (401, K({401: 700, 700: 620}))), trunc=C(0.015), gnorm=C(0.11),
         evals={"validation/accuracy": (K({0: 0.40, 360: 0.60, 400: 0.60, 700: 0.51}), 500)}, eval_every=20,
         eval_at0=True, step_secs=100)
add(case("bad-resume-wrong-reference-kl-jumps-val-sags-nemo-tb", p,
         W(w_tb, keymap=NEMO, prefix="", eval_prefix="", extra=nemo_extras,
           dirs=["exp_000/tensorboard", "exp_001/tensorboard"]), 1226,
         RB(p, 400), "nemo_rl tensorboard grpo resume reference_model kl_jump slow_decline exp_dirs",
         """NeMo-RL GRPO, two log dirs (exp_000: steps 1-400, exp_001: the resume from step 400), step 700 of 1500.
         At the resume train/kl_penalty jumps from ~0.012 to ~0.09 in one step although the policy weights were
         restored unchanged: the run came back with a different reference model. The KL term then pulls the policy
         toward it (kl_penalty eases to ~0.05, entropy rises) while train/reward sags 0.64 -> ~0.55 and
         validation/accuracy (500 problems every 20) falls from ~0.60 to ~0.52. Everything after 400 is worse: roll
         back to the step-400 checkpoint and resume with the right reference."""))

p = Plan(reached=1800, planned=2000, reward=sat(0.30, 0.66, 450), kl=None, entropy=K({0: 0.45, 1800: 0.33}),
         length=K({0: 410, 1800: 455}), trunc=C(0.01), gnorm=C(0.15), lr=K({0: 1e-6, 2000: 1e-7}), log_every=10,
         evals={"eval_reward": (sat(0.33, 0.585, 480), 1000)}, eval_every=100, step_secs=45)
add(case("conv-log-tail-gains-below-eval-noise-near-end-trackio", p,
         W(w_trackio, project="grpo-qwen3b-math", run_name="qwen3b-grpo-lr1e-6",
           config={"max_steps": 2000, "logging_steps": 10, "eval_steps": 100, "num_generations": 8,
                   "learning_rate": 1e-6, "lr_scheduler_type": "linear", "_name_or_path": "Qwen/Qwen2.5-3B"}), 1233,
         converged(), "trl trackio grpo plateau converged near_end",
         """TRL GRPO logged to Trackio (HF-style train/ and eval/ keys), step 1800 of 2000 with the LR decaying
         linearly toward 1e-7. eval/reward (1000 problems every 100, sd ~0.016) rose fast to ~0.55 by 900, ~0.56 by
         1200, and has added about one sd in the 600 steps since (~0.57-0.58); the train reward is flat within noise. 200 steps at a tiny LR
         remain: stopping now loses nothing (preferred), letting it finish is harmless."""))

p = Plan(reached=520, planned=1000, reward=K({0: 0.45, 300: 0.58, 325: 0.585, 400: 0.56, 520: 0.545}),
         kl=K({0: 0.0, 325: 0.02, 400: 0.09, 520: 0.14}), entropy=K({0: 0.62, 325: 0.58, 400: 0.20, 520: 0.05}),
         length=K({0: 380, 325: 400, 380: 120, 430: 25, 520: 14}), trunc=C(0.003), gnorm=C(0.2),
         evals={"val_acc": (K({0: 0.47, 300: 0.57, 325: 0.57, 400: 0.50, 520: 0.45}), 600)}, eval_every=25,
         step_secs=30)
add(case("bad-mcq-drops-reasoning-length-collapses-val-falls-custom-csv", p,
         W(w_csv, cols={"reward": "reward", "reward_std": "reward_std", "zero_std": "frac_zero_std", "kl": "kl",
                        "entropy": "entropy", "length": "resp_len", "gnorm": "grad_norm", "lr": "lr"},
           eval_cols={"val_acc": "val_acc"},
           extra_files={"config.json": json.dumps({"task": "sciq-mcq-4way", "total_steps": 1000, "group_size": 8,
                                                    "batch_prompts": 64, "eval_every": 25, "eval_n": 600}) + "\n"}),
         1225, RB(p, 325), "custom custom_csv grpo mcq length_collapse entropy_collapse second_signal",
         """Custom GRPO loop on 4-way multiple choice, CSV, step 520 of 1000. The train reward barely moves after
         its rise (~0.58 at 300, ~0.55 now, within a couple of batch sds), but from ~330 resp_len collapses 400 -> ~14
         tokens and entropy 0.58 -> ~0.05: the policy stopped reasoning and emits a letter. val_acc (600 questions
         every 25, sd ~0.02) shows the cost: ~0.57-0.59 at 250-325, ~0.47 now. Roll back to ~325."""))


# ------------------------------------------------------------------------------------------------- checks and main

def check(cases: list[Case]) -> None:
    for c in cases:
        plan = c.scenario
        run = simulate(plan, c.seed)
        xs, ys, sd = headline(plan)
        ib = int(np.argmax(ys))
        lab = c.labels
        print(f"{c.name:72s} {lab['preferred']:8s} win={lab.get('rollback_window')} onset={lab.get('onset_step')} "
              f"best={int(xs[ib])}:{ys[ib]:.3f} last={int(xs[-1])}:{ys[-1]:.3f} sd={sd:.3f}")
        if plan.evals:
            key = plan.headline or next(iter(plan.evals))
            pts = [(s, v[key]) for s, v in {s: v for _, s, v in run.evals}.items() if key in v]
        else:
            pts = [(s, v["reward"]) for _, s, v in dedup(run.train) if "reward" in v]
        k = max(1, len(pts) // 14)
        print("    " + " ".join(f"{s}:{y:.3f}" for s, y in pts[::k]) + f" | last {pts[-1][0]}:{pts[-1][1]:.3f}")
        tr = [(s, v["reward"]) for _, s, v in dedup(run.train) if "reward" in v]
        if tr and plan.evals:
            n = max(1, len(tr) // 10)
            means = [(tr[i][0], np.mean([y for _, y in tr[i:i + n]])) for i in range(0, len(tr), n)]
            print("    train(binned): " + " ".join(f"{s}:{y:.3f}" for s, y in means))


def verify(runs: Path) -> None:
    """Every file parses the way its framework's readers parse it."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    n = 0
    for p in sorted(runs.rglob("*")):
        if not p.is_file():
            continue
        if p.name.startswith("events.out.tfevents"):
            acc = EventAccumulator(str(p), size_guidance={"scalars": 0})
            acc.Reload()
            tags = acc.Tags()["scalars"]
            assert tags and all(acc.Scalars(t) for t in tags), p
        elif p.suffix == ".json":
            json.loads(p.read_text())
        elif p.suffix == ".jsonl":
            [json.loads(x) for x in p.read_text().splitlines()]
        elif p.suffix == ".csv":
            rows = list(csv.reader(p.open()))
            assert len(rows) > 2 and len({len(r) for r in rows}) == 1, p
        elif p.suffix == ".db":
            db = sqlite3.connect(p)
            assert db.execute("select count(*) from metrics").fetchone()[0] > 0, p
            if "trackio" in p.parts:
                [json.loads(m) for (m,) in db.execute("select metrics from metrics")]
        elif "metrics" in p.parts:
            assert all(len(x.split(" ")) == 3 for x in p.read_text().splitlines()), p
        elif p.name == "train.log":
            assert sum(1 for x in p.read_text().splitlines() if "step" in x.lower() or x.startswith("{'")) > 10, p
        else:
            continue
        n += 1
    print(f"verified {n} files parse")


HEADER = """# Holdout set 12: hand-built runs written by make_holdout12.py, independent of the assessor, its judges and the
# generators of the other holdout sets. Labels: what a careful practitioner should do under DESIGN.md's decision
# contract. rollback_window is inclusive: from the first logged step whose noise-free headline (held-out eval, else
# train reward) is within one sampling sd of its best to the newest such step not after onset_step.
# Run `.venv/bin/python evals/holdout12/make_holdout12.py` to write runs/ (gitignored); `--check` prints levels.
"""


def main() -> None:
    build(HERE, "make_holdout12.py", "holdout12.yaml", "h12-", "holdout12", HEADER, CASES, write_run)
    if "--check" in sys.argv:
        check(CASES)
        verify(HERE / "runs")


if __name__ == "__main__":
    main()
