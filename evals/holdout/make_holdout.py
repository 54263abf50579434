#!/usr/bin/env python
"""Independent hold-out set for `assessor eval`.

Writes ~40 run directories into `runs/` (next to this file) and `holdout.yaml` with one labelled case per run.
Written without looking at the assessor's own synthetic generator or its judge: shapes and numbers come from the
seed articles (`/work/shared/seeds`) and the look of real logs (`/work/shared/real-runs`); on-disk formats follow
`/work/shared/reference/metrics-and-formats.md`.

Every run is regenerated deterministically from its seed:

    .venv/bin/python evals/holdout/make_holdout.py

Layout of this file: noise helpers, a neutral `Run` (per-step metrics with framework-free names), metric-name
maps per framework, writers (one per on-disk format), shapes (one small function per run shape), and the table
`CASES` that ties a shape + writer + labels together.
"""

from __future__ import annotations

import csv
import json
import math
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import yaml

HERE = Path(__file__).resolve().parent
RUNS = HERE / "runs"
T0 = 1754000000.0  # wall-clock origin for timestamps (fixed, so output is deterministic)


# ----------------------------------------------------------------------------------------------------------------
# Noise and curve helpers
# ----------------------------------------------------------------------------------------------------------------

def ar1(rng, n, sigma, rho=0.85):
    """Autocorrelated noise with stationary std `sigma`."""
    e = rng.normal(0, sigma * math.sqrt(1 - rho ** 2), n)
    x = np.empty(n)
    x[0] = rng.normal(0, sigma)
    for i in range(1, n):
        x[i] = rho * x[i - 1] + e[i]
    return x


def heavy(rng, n, scale, df=3):
    """Heavy-tailed (Student-t) iid noise."""
    return scale * rng.standard_t(df, n)


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def rise(t, start, end, t_mid, width):
    """Logistic rise from `start` to `end` centred at t_mid."""
    return start + (end - start) * sigmoid((t - t_mid) / width)


def ramp(t, t0, t1):
    """0 before t0, 1 after t1, linear between."""
    return np.clip((t - t0) / max(t1 - t0, 1), 0, 1)


def lr_schedule(t, peak, n_total, warmup=10, kind="cosine"):
    w = np.minimum(t / max(warmup, 1), 1)
    frac = np.clip((t - warmup) / max(n_total - warmup, 1), 0, 1)
    decay = 0.5 * (1 + np.cos(np.pi * frac)) if kind == "cosine" else 1 - frac
    return peak * w * np.where(t < warmup, 1, decay)


# ----------------------------------------------------------------------------------------------------------------
# The neutral run
# ----------------------------------------------------------------------------------------------------------------

@dataclass
class Run:
    algo: str                      # grpo | rloo | dapo | ppo | dpo | reinforce++
    n: int                         # steps reached (1..n)
    max_steps: int                 # planned steps
    m: dict = field(default_factory=dict)    # neutral name -> per-step array (index 0 = step 1)
    ev: dict = field(default_factory=dict)   # neutral eval name -> {step: value}
    components: list = field(default_factory=list)  # reward function names (GRPO)

    @property
    def steps(self):
        return np.arange(1, self.n + 1)


def simulate_grpo(rng, n, p, length, entropy, kl=None, *, max_steps=None, prompts=16, group=8, cap=1024,
                  scale="binary", lr=1e-6, grad_base=0.25, difficulty_spread=4.0, on_policy=True, algo="grpo",
                  components=("accuracy_reward",)):
    """Per-step GRPO-style metrics from curves: `p` = mean success probability, `length` = mean tokens wanted,
    `entropy`, `kl` (None = beta 0, not logged). Rewards are sampled per prompt group, so reward_std and
    frac_reward_zero_std are consistent with the reward itself."""
    t = np.arange(1, n + 1)
    out = {k: np.empty(n) for k in ("reward", "reward_std", "zero_std", "len_mean", "len_min", "len_max",
                                    "term_len", "clipped")}
    for i in range(n):
        pi = float(np.clip(p[i], 1e-4, 1 - 1e-4))
        # per-prompt success probabilities around pi (some prompts easy, some hard)
        a = pi * difficulty_spread
        b = (1 - pi) * difficulty_spread
        q = rng.beta(max(a, 1e-3), max(b, 1e-3), prompts)
        r = rng.binomial(1, q[:, None], (prompts, group)).astype(float)
        if scale == "pm1":
            r = 2 * r - 1
        out["reward"][i] = r.mean()
        out["reward_std"][i] = r.std(ddof=1)
        out["zero_std"][i] = np.mean(r.std(axis=1) == 0)
        mu = max(float(length[i]), 2.0)
        lens = np.minimum(np.maximum(rng.lognormal(math.log(mu) - 0.08, 0.4, prompts * group), 1), cap)
        clipped = lens >= cap
        out["len_mean"][i] = lens.mean()
        out["len_min"][i] = lens.min()
        out["len_max"][i] = lens.max()
        out["term_len"][i] = lens[~clipped].mean() if (~clipped).any() else 0.0
        out["clipped"][i] = clipped.mean()
    out["entropy"] = np.maximum(entropy * np.exp(ar1(rng, n, 0.06)), 1e-3)
    if kl is not None:
        out["kl"] = np.maximum(kl * np.exp(ar1(rng, n, 0.15, 0.6)), 0)
    out["grad_norm"] = grad_base * np.exp(ar1(rng, n, 0.25, 0.5) + np.abs(heavy(rng, n, 0.08)))
    out["loss"] = heavy(rng, n, 0.004) + (0.04 * out["kl"] if kl is not None else 0)
    out["lr"] = lr_schedule(t, lr, max_steps or n, warmup=max(3, (max_steps or n) // 40), kind="linear")
    out["clip_region"] = np.zeros(n) if on_policy else np.abs(ar1(rng, n, 0.004)) + 0.002
    out["step_time"] = 18 + out["len_mean"] * 0.05 + np.abs(heavy(rng, n, 1.5))
    tokens = prompts * group * (out["len_mean"] + 180)
    out["num_tokens"] = np.cumsum(tokens)
    run = Run(algo, n, max_steps or n, out, components=list(components))
    if len(components) == 1:
        run.m[f"comp/{components[0]}"] = out["reward"].copy()
    return run


def add_eval(run, rng, acc_curve_fn, every, n_items=500, key="acc", start=0):
    """Eval accuracy at every `every` steps (plus `start` if 0 is logged), binomial noise over n_items."""
    steps = list(range(every, run.n + 1, every))
    if start == 0:
        steps = [0, *steps]
    run.ev[key] = {s: float(rng.binomial(n_items, float(np.clip(acc_curve_fn(s), 0, 1))) / n_items)
                   for s in steps}
    return run


# ----------------------------------------------------------------------------------------------------------------
# Metric-name maps per framework
# ----------------------------------------------------------------------------------------------------------------

TRL_GRPO = {"loss": "loss", "grad_norm": "grad_norm", "lr": "learning_rate", "num_tokens": "num_tokens",
            "len_mean": "completions/mean_length", "len_min": "completions/min_length",
            "len_max": "completions/max_length", "clipped": "completions/clipped_ratio",
            "term_len": "completions/mean_terminated_length", "reward": "reward", "reward_std": "reward_std",
            "zero_std": "frac_reward_zero_std", "kl": "kl", "entropy": "entropy",
            "clip_region": "clip_ratio/region_mean", "step_time": "step_time"}
TRL_LAST = {"grad_norm", "lr", "num_tokens"}          # last-step values; the rest are window means

TRL_DPO = {"loss": "loss", "grad_norm": "grad_norm", "lr": "learning_rate", "chosen": "rewards/chosen",
           "rejected": "rewards/rejected", "accuracies": "rewards/accuracies", "margins": "rewards/margins",
           "logps_chosen": "logps/chosen", "logps_rejected": "logps/rejected", "logits_chosen": "logits/chosen",
           "logits_rejected": "logits/rejected"}

TRL_PPO = {"scores": "objective/scores", "rlhf_reward": "objective/rlhf_reward",
           "nonscore": "objective/non_score_reward", "kl": "objective/kl", "entropy": "objective/entropy",
           "approxkl": "policy/approxkl_avg", "clipfrac": "policy/clipfrac_avg", "pg_loss": "loss/policy_avg",
           "value_loss": "loss/value_avg", "vf_clipfrac": "val/clipfrac_avg", "ratio": "val/ratio",
           "ratio_var": "val/ratio_var", "num_eos": "val/num_eos_tokens", "lr": "lr", "episode": "episode",
           "eps": "eps"}

VERL = {"reward": "critic/score/mean", "kl": "actor/kl_loss", "entropy": "actor/entropy",
        "len_mean": "response_length/mean", "len_max": "response_length/max", "len_min": "response_length/min",
        "clipped": "response_length/clip_ratio", "loss": "actor/pg_loss", "grad_norm": "actor/grad_norm",
        "lr": "actor/lr", "clip_region": "actor/pg_clipfrac", "step_time": "timing_s/step",
        "value_loss": "critic/vf_loss", "vf_explained_var": "critic/vf_explained_var",
        "values_mean": "critic/values/mean", "critic_grad_norm": "critic/grad_norm",
        "vf_clipfrac": "critic/vf_clipfrac", "ppo_kl": "actor/ppo_kl", "reward_kl": "actor/reward_kl_penalty",
        "num_gen_batches": "train/num_gen_batches"}

OPENRLHF = {"reward": "reward", "kl": "kl", "entropy": "entropy_loss", "len_mean": "response_length",
            "clipped": "truncated", "loss": "policy_loss", "grad_norm": "actor_grad_norm", "lr": "actor_lr",
            "clip_region": "ppo_clip_ratio", "group_std": "group_reward_std", "reward_std": "rollout/reward_std"}

PLAIN = {"reward": "reward_mean", "reward_std": "reward_std", "kl": "kl", "entropy": "entropy",
         "len_mean": "response_len_mean", "clipped": "truncated_frac", "loss": "loss", "grad_norm": "grad_norm",
         "lr": "lr"}


def trl_keys(run):
    """Neutral -> TRL key map for this run (algo-dependent), including reward components."""
    if run.algo == "dpo":
        return dict(TRL_DPO)
    if run.algo == "ppo":
        return dict(TRL_PPO)
    keys = dict(TRL_GRPO)
    for c in run.components:
        keys[f"comp/{c}"] = f"rewards/{c}/mean"
        keys[f"compstd/{c}"] = f"rewards/{c}/std"
    return keys


def trl_eval_keys(run):
    """Neutral eval name -> list of TRL eval keys."""
    if run.algo == "dpo":
        return {"loss": ["eval_loss"], "accuracies": ["eval_rewards/accuracies"],
                "margins": ["eval_rewards/margins"], "chosen": ["eval_rewards/chosen"],
                "rejected": ["eval_rewards/rejected"]}
    acc_fn = run.components[0] if run.components else "accuracy_reward"
    acc_keys = [f"eval_rewards/{acc_fn}/mean"] + (["eval_reward"] if len(run.components) <= 1 else [])
    return {"acc": acc_keys, "loss": ["eval_loss"]}


def finite(x):
    return x is not None and not (isinstance(x, float) and (math.isnan(x) or math.isinf(x)))


def clean(v, digits=None):
    """numpy -> python float; keeps NaN/inf (the writer decides how to encode them)."""
    v = float(v)
    if digits is not None and math.isfinite(v):
        v = round(v, digits)
    return v


# ----------------------------------------------------------------------------------------------------------------
# TRL: log rows (shared by trainer_state.json, console logs, TensorBoard and W&B writers)
# ----------------------------------------------------------------------------------------------------------------

def trl_rows(run, logging_steps=1, steps_per_epoch=500, until=None):
    """HF Trainer log_history: train rows every `logging_steps` (window means, grad_norm/lr last value),
    eval rows (eval_ prefix) as separate dicts at eval steps. NaNs in a window: dropped from the mean;
    an all-NaN window logs None (TRL behaviour)."""
    keys = trl_keys(run)
    ekeys = trl_eval_keys(run)
    until = until or run.n
    rows = []
    for s in range(logging_steps, until + 1, logging_steps):
        lo = s - logging_steps
        row = {}
        for name, key in keys.items():
            if name not in run.m:
                continue
            win = run.m[name][lo:s]
            if name in TRL_LAST or run.algo == "ppo":
                v = clean(win[-1])
            else:
                good = win[np.isfinite(win)]
                if name == "loss" and not np.all(np.isfinite(win)):
                    v = float("nan")            # a NaN loss poisons the running sum in HF Trainer
                else:
                    v = clean(good.mean()) if good.size else None
            if name == "loss" and v is not None:
                v = round(v, 4) if math.isfinite(v) else v
            row[key] = v
        row["epoch"] = round(s / steps_per_epoch, 4)
        row["step"] = s
        rows.append(row)
        evals = {k: d[s] for k, d in run.ev.items() if s in d}
        if evals:
            erow = {key: clean(v) for k, v in evals.items() for key in ekeys.get(k, [])}
            erow.update({"eval_runtime": 41.3, "eval_samples_per_second": 12.1, "eval_steps_per_second": 0.76,
                         "epoch": round(s / steps_per_epoch, 4), "step": s})
            rows.append(erow)
    return rows


def trainer_state(run, rows, global_step, logging_steps, save_steps, eval_steps):
    return {"best_global_step": None, "best_metric": None, "best_model_checkpoint": None,
            "epoch": rows[-1]["epoch"] if rows else 0.0, "eval_steps": eval_steps, "global_step": global_step,
            "is_hyper_param_search": False, "is_local_process_zero": True, "is_world_process_zero": True,
            "log_history": rows, "logging_steps": logging_steps, "max_steps": run.max_steps,
            "num_input_tokens_seen": 0, "num_train_epochs": 3, "save_steps": save_steps,
            "stateful_callbacks": {"TrainerControl": {"args": {
                "should_epoch_stop": False, "should_evaluate": False, "should_log": False, "should_save": True,
                "should_training_stop": False}, "attributes": {}}},
            "total_flos": 0.0, "train_batch_size": 8, "trial_name": None, "trial_params": None}


def dump_state(path, state):
    path.parent.mkdir(parents=True, exist_ok=True)
    # Python's json writes bare NaN / Infinity, exactly as transformers does.
    path.write_text(json.dumps(state, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def write_trl_checkpoints(run, d, rows, logging_steps, save_steps, eval_steps, keep_last=None):
    saves = list(range(save_steps, run.n + 1, save_steps))
    if keep_last:
        saves = saves[-keep_last:]
    for s in saves:
        sub = [r for r in rows if r["step"] <= s]
        ck = d / f"checkpoint-{s}"
        dump_state(ck / "trainer_state.json", trainer_state(run, sub, s, logging_steps, save_steps, eval_steps))
        (ck / "adapter_config.json").write_text(json.dumps({"peft_type": "LORA", "r": 16}) + "\n")
    return saves


def write_trl_state(run, d, logging_steps=1, save_steps=100, eval_steps=None, top_level=True, keep_last=None):
    """TRL output_dir: checkpoint-N/trainer_state.json (+ a top-level trainer_state.json from save_state())."""
    rows = trl_rows(run, logging_steps)
    write_trl_checkpoints(run, d, rows, logging_steps, save_steps, eval_steps or save_steps, keep_last)
    if top_level:
        dump_state(d / "trainer_state.json",
                   trainer_state(run, rows, run.n, logging_steps, save_steps, eval_steps or save_steps))


def py_repr(v):
    if v is None:
        return "None"
    if isinstance(v, float):
        return repr(v)
    return repr(v)


def write_trl_console(run, d, logging_steps=5, save_steps=None, eval_steps=None, name="train.log",
                      stringly=False):
    """A nohup'd TRL script: warnings, tqdm bars with \\r, one python dict per log step (as HF prints it)."""
    rows = trl_rows(run, logging_steps)
    lines = [f"=== run start {time.strftime('%Y-%m-%d %H:%M:%S', time.gmtime(T0))} UTC ===",
             "/opt/venv/lib/python3.11/site-packages/trl/trainer/grpo_config.py:612: UserWarning: "
             "The default value of `logging_steps` has changed", "  warnings.warn(",
             "Loading checkpoint shards: 100%|██████████| 4/4 [00:03<00:00,  1.21it/s]",
             "max_steps is given, it will override any value given in num_train_epochs",
             "***** Running training *****", f"  Total optimization steps = {run.max_steps}"]
    bar = []
    secs = 0.0
    by_step = {}
    for r in rows:
        by_step.setdefault(r["step"], []).append(r)
    for s in range(1, run.n + 1):
        secs += 3.1 + 0.4 * math.sin(s)
        pct = int(100 * s / run.max_steps)
        bar.append(f"\r{pct:3d}%|{'█' * (pct // 10):<10}| {s}/{run.max_steps} [{int(secs)//60:02d}:"
                   f"{int(secs)%60:02d}<??:??, {3.1:.2f}s/it]")
        for r in by_step.get(s, []):
            lines.append("".join(bar))
            bar = []
            if stringly:
                lines.append("{" + ", ".join(f"'{k}': '{v:.4g}'" if isinstance(v, float) else f"'{k}': '{v}'"
                                              for k, v in r.items() if k != "step") + "}")
            else:
                lines.append("{" + ", ".join(f"'{k}': {py_repr(v)}" for k, v in r.items() if k != "step") + "}")
        if save_steps and s % save_steps == 0:
            lines.append("".join(bar))
            bar = []
            lines.append(f"Saving model checkpoint to outputs/checkpoint-{s}")
    if bar:
        lines.append("".join(bar))
    d.mkdir(parents=True, exist_ok=True)
    (d / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    if save_steps:
        write_trl_checkpoints(run, d, rows, logging_steps, save_steps, eval_steps or save_steps)


# ----------------------------------------------------------------------------------------------------------------
# verl
# ----------------------------------------------------------------------------------------------------------------

def verl_rows(run, ds="openai/gsm8k", var="acc"):
    """One dict per step (verl logs every step), validation in the same row on test steps + a step-0 row."""
    rows = []
    vkey = f"val-core/{ds}/{var}/mean@1"
    if 0 in run.ev.get("acc", {}):
        rows.append((0, {vkey: run.ev["acc"][0]}))
    for i, s in enumerate(run.steps):
        row = {}
        for name, key in VERL.items():
            if name in run.m:
                row[key] = float(run.m[name][i])
        if "reward" in run.m:
            row["critic/score/max"] = 1.0 if run.m["reward"][i] > 0 else 0.0
            row["critic/score/min"] = -1.0 if run.algo == "dapo" else 0.0
            row["critic/rewards/mean"] = float(run.m.get("kl_shaped", run.m["reward"])[i])
            row["critic/advantages/mean"] = float(np.round(run.m["reward"][i] * 1e-3, 5))
        if "kl" in run.m and run.algo != "ppo":
            row["actor/kl_coef"] = 0.001
        row["actor/pg_clipfrac_lower"] = 0.0
        row["prompt_length/mean"] = 104.0 + (i % 7)
        row["timing_s/gen"] = float(run.m["step_time"][i] * 0.62) if "step_time" in run.m else 30.0
        row["perf/max_memory_allocated_gb"] = 61.2
        row["training/global_step"] = int(s)
        for k, d in run.ev.items():
            if s in d:
                row[vkey if k == "acc" else k] = d[s]
        rows.append((int(s), row))
    return rows


def fmt_verl(v, np_style):
    if isinstance(v, int):
        return f"np.int64({v})" if np_style else str(v)
    if np_style:
        return f"np.float64({v!r})" if math.isfinite(v) else "np.float64(nan)"
    return f"{v:.3f}" if math.isfinite(v) else "nan"


def verl_checkpoints(d, steps, nested=False):
    base = d / "checkpoints" / "verl_grpo" / "exp" if nested else d
    for s in steps:
        (base / f"global_step_{s}" / "actor").mkdir(parents=True, exist_ok=True)
        (base / f"global_step_{s}" / "actor" / "huggingface").mkdir(exist_ok=True)
        (base / f"global_step_{s}" / "data.pt").write_bytes(b"")
    if steps:
        base.mkdir(parents=True, exist_ok=True)
        (base / "latest_checkpointed_iteration.txt").write_text(str(steps[-1]))


def write_verl_console(run, d, np_style=False, ray_prefix=True, save_freq=None, nested_ckpt=False,
                       var="acc", name="train.log"):
    prefix = "\x1b[36m(TaskRunner pid=48211)\x1b[0m " if ray_prefix else ""
    lines = ["2025-08-01 10:02:11,402\tINFO worker.py:1832 -- Started a local Ray instance.",
             f"{prefix}Size of train dataloader: 7473, Size of val dataloader: 1319",
             f"{prefix}Total training steps: {run.max_steps}"]
    for s, row in verl_rows(run, var=var):
        if s and s % 37 == 0:
            lines.append("(WorkerDict pid=48790) INFO 08-01 10:41:07 [block_pool.py:321] "
                         "Successfully reset prefix cache")
        body = " - ".join(f"{k}:{fmt_verl(v, np_style)}" for k, v in row.items())
        lines.append(f"{prefix}step:{s} - {body}")
    d.mkdir(parents=True, exist_ok=True)
    (d / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    if save_freq:
        verl_checkpoints(d, list(range(save_freq, run.n + 1, save_freq)), nested_ckpt)


def write_verl_jsonl(run, d, save_freq=None, var="acc"):
    path = d / "verl_dapo" / "qwen7b_dapo.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as f:
        for s, row in verl_rows(run, ds="math_dapo", var=var):
            data = {k: (v if finite(v) else None) for k, v in row.items()}   # orjson: NaN -> null
            f.write(json.dumps({"step": s, "data": data}) + "\n")
    if save_freq:
        verl_checkpoints(d, list(range(save_freq, run.n + 1, save_freq)))


# ----------------------------------------------------------------------------------------------------------------
# TensorBoard
# ----------------------------------------------------------------------------------------------------------------

def _tb_write(logdir, events, wall0):
    """events: list of (step, {tag: value}). Legacy simple_value scalars, as torch/tensorboardX write them."""
    from tensorboard.compat.proto import event_pb2, summary_pb2
    from tensorboard.summary.writer.event_file_writer import EventFileWriter

    logdir.mkdir(parents=True, exist_ok=True)
    w = EventFileWriter(str(logdir))
    # EventFileWriter names the file by the current time: rename it after closing to a deterministic name.
    for j, (s, vals) in enumerate(events):
        summ = summary_pb2.Summary(value=[summary_pb2.Summary.Value(tag=k, simple_value=float(v))
                                          for k, v in vals.items() if v is not None])
        w.add_event(event_pb2.Event(wall_time=wall0 + 20.0 * j, step=int(s), summary=summ))
    w.close()
    return w.get_logdir()


def write_tb(run, d, style="hf", logging_steps=1, resume_at=None, resume_from=None, save_steps=None):
    """style hf: <out>/runs/<date>_<host>/ with train/ and eval/ tags (rewrite_logs). style verl: raw verl keys
    under tensorboard_log/<project>/<experiment>. style openrlhf: train/ keys + eval/ keys.
    resume_at/resume_from: the first process died at step `resume_at`; training resumed from checkpoint
    `resume_from` in a second event file, logging resume_from+1..resume_at again."""
    if style == "hf":
        logdir = d / "runs" / "Aug01_10-02-11_gpu-node-07"
        events = []
        for r in trl_rows(run, logging_steps):
            if any(k.startswith("eval_") for k in r):
                events.append((r["step"], {"eval/" + k[5:]: v for k, v in r.items() if k.startswith("eval_")}))
            else:
                events.append((r["step"], {"train/" + k: v for k, v in r.items() if k != "step"}))
    elif style == "verl":
        logdir = d / "tensorboard_log" / "verl_grpo_math" / "qwen2.5-7b-grpo"
        events = [(s, row) for s, row in verl_rows(run) if s % logging_steps == 0]
    else:
        logdir = d / "tensorboard" / "reinforce_pp_qwen3"
        events = []
        for i, s in enumerate(run.steps):
            if s % logging_steps:
                continue
            row = {"train/" + key: float(run.m[n][i]) for n, key in OPENRLHF.items() if n in run.m}
            row["train/global_step"] = int(s)
            events.append((int(s), row))
            if s in run.ev.get("acc", {}):
                events.append((int(s), {"eval/eval_gsm8k_pass1": run.ev["acc"][s]}))
    events = [(s, {k: v for k, v in vals.items() if v is not None}) for s, vals in events]
    if resume_at:
        first = [(s, v) for s, v in events if s <= resume_at]
        # the resumed process re-logs the steps after the checkpoint, with fresh samples (different values)
        second = [(s, v) for s, v in events if s > resume_from]
        p1 = _tb_write(logdir, first, T0)
        _rename_events(p1, "1754000000.gpu-node-07.48211.0")
        p2 = _tb_write(logdir, second, T0 + 20.0 * len(first) + 900)
        _rename_events(p2, "1754009000.gpu-node-07.51877.0")
    else:
        p = _tb_write(logdir, events, T0)
        _rename_events(p, "1754000000.gpu-node-07.48211.0")
    if save_steps and style == "hf":
        rows = trl_rows(run, logging_steps)
        write_trl_checkpoints(run, d, rows, logging_steps, save_steps, save_steps)
    elif save_steps:
        verl_checkpoints(d, list(range(save_steps, run.n + 1, save_steps)))


def _rename_events(logdir, tail):
    logdir = Path(logdir)
    newest = max((p for p in logdir.glob("events.out.tfevents.*") if not p.name.endswith(".fixed")),
                 key=lambda p: p.stat().st_mtime_ns)
    target = logdir / f"events.out.tfevents.{tail}"
    if newest != target:
        newest.rename(target)


# ----------------------------------------------------------------------------------------------------------------
# W&B CSV export, plain JSONL, plain CSV (rasbt-style), OpenRLHF console
# ----------------------------------------------------------------------------------------------------------------

def write_wandb_csv(run, d, logging_steps=1, resume_at=None, resume_from=None, save_steps=None):
    """A `run.history()`-style export: _step (W&B's own counter), _runtime, _timestamp, train/global_step and
    train/... keys. After a resume, _step keeps counting while train/global_step repeats."""
    rows = trl_rows(run, logging_steps)
    out = []
    for r in rows:
        if any(k.startswith("eval_") for k in r):
            rec = {"eval/" + k[5:]: v for k, v in r.items() if k.startswith("eval_")}
        else:
            rec = {"train/" + k: v for k, v in r.items() if k != "step"}
        rec["train/global_step"] = r["step"]
        out.append(rec)
    if resume_at:
        before = [r for r in out if r["train/global_step"] <= resume_at]
        after = [r for r in out if r["train/global_step"] > resume_from]
        out = before + after
    cols = ["_step", "_runtime", "_timestamp", "train/global_step"]
    for r in out:
        for k in r:
            if k not in cols:
                cols.append(k)
    d.mkdir(parents=True, exist_ok=True)
    with (d / "wandb_export_2025-08-03T14_22_51.csv").open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(cols)
        for i, r in enumerate(out):
            r = dict(r, _step=i, _runtime=round(31.5 * (i + 1), 3), _timestamp=round(T0 + 31.5 * (i + 1), 3))
            w.writerow(["" if r.get(c) is None else ("NaN" if isinstance(r[c], float) and math.isnan(r[c])
                                                      else r[c]) for c in cols])
    if save_steps:
        write_trl_checkpoints(run, d, trl_rows(run, logging_steps), logging_steps, save_steps, save_steps)


def write_plain_jsonl(run, d, every=1, ckpt_every=None):
    """A hand-written training script: one JSON object per log call in metrics.jsonl; eval in the same file
    as separate records; checkpoints as ckpt/step_N."""
    d.mkdir(parents=True, exist_ok=True)
    with (d / "metrics.jsonl").open("w", encoding="utf-8") as f:
        for i, s in enumerate(run.steps):
            if s % every:
                continue
            rec = {"step": int(s)}
            for name, key in PLAIN.items():
                if name in run.m:
                    rec[key] = round(float(run.m[name][i]), 6)
            for c in run.components:
                if f"comp/{c}" in run.m:
                    rec[f"reward/{c}"] = round(float(run.m[f'comp/{c}'][i]), 6)
            rec["time"] = round(T0 + 40.0 * s, 1)
            f.write(json.dumps(rec) + "\n")
            if s in run.ev.get("acc", {}):
                f.write(json.dumps({"step": int(s), "eval/accuracy": run.ev["acc"][s]}) + "\n")
    if ckpt_every:
        for s in range(ckpt_every, run.n + 1, ckpt_every):
            (d / "ckpt" / f"step_{s}").mkdir(parents=True, exist_ok=True)
            (d / "ckpt" / f"step_{s}" / "model.safetensors").write_bytes(b"")


def write_rasbt_csv(run, d, name="grpo_metrics.csv"):
    """reasoning-from-scratch ch07 style CSV (7_3_plus_tracking header); eval_acc in percent on eval steps."""
    cols = ["step", "total_steps", "loss", "reward_avg", "tokens_per_sec", "avg_response_len", "adv_avg",
            "adv_std", "entropy_avg", "eval_acc"]
    d.mkdir(parents=True, exist_ok=True)
    with (d / name).open("w", newline="", encoding="utf-8") as f:
        f.write(",".join(cols) + "\r\n")
        for i, s in enumerate(run.steps):
            adv_std = 0.0 if run.m["zero_std"][i] >= 1 else 0.98 * (1 - run.m["zero_std"][i]) ** 0.5
            acc = run.ev.get("acc", {}).get(int(s))
            vals = [int(s), run.max_steps, round(float(run.m["loss"][i]) * 100, 4),
                    round(float(run.m["reward"][i]), 4), round(900 + float(run.m["len_mean"][i]) * 0.1, 2),
                    round(float(run.m["len_mean"][i]), 2), 0.0, round(adv_std, 4),
                    round(float(run.m["entropy"][i]), 4), "" if acc is None else round(100 * acc, 1)]
            f.write(",".join(str(v) for v in vals) + "\r\n")


def write_openrlhf_console(run, d, save_steps=None):
    lines = ["[2025-08-02 09:14:01,101] [INFO] Launching OpenRLHF PPO (reinforce++) with Ray",
             "Episode [1/1]:   0%|          | 0/480 [00:00<?, ?it/s]"]
    for i, s in enumerate(run.steps):
        st = {key: round(float(run.m[n][i]), 6) for n, key in OPENRLHF.items() if n in run.m}
        lines.append(f"✨ Global step {s}: {st}")
        if s in run.ev.get("acc", {}):
            lines.append(f"Evaluation completed in 41.20s, global_step {s}, eval_metrics: "
                         f"{{'eval_gsm8k_pass1': {run.ev['acc'][s]}, 'eval_gsm8k_pass4': "
                         f"{min(1.0, run.ev['acc'][s] + 0.12):.4f}}}")
        if save_steps and s % save_steps == 0:
            (d / "ckpt" / f"global_step{s}").mkdir(parents=True, exist_ok=True)
            lines.append(f"Saving checkpoint: ckpt/global_step{s}")
    d.mkdir(parents=True, exist_ok=True)
    (d / "train.log").write_text("\n".join(lines) + "\n", encoding="utf-8")


# ----------------------------------------------------------------------------------------------------------------
# Shapes: each returns a Run. `t` is the step array 1..n.
# ----------------------------------------------------------------------------------------------------------------

def _t(n):
    return np.arange(1, n + 1, dtype=float)


# ---- healthy ---------------------------------------------------------------------------------------------------

def healthy_noisy_binary(rng, n=400, max_steps=1000):
    """Tiny batch (2 prompts x 4), binary reward: per-step reward jumps 0..1; the trend is a slow rise."""
    t = _t(n)
    p = rise(t, 0.28, 0.55, 260, 90) + ar1(rng, n, 0.03)
    run = simulate_grpo(rng, n, p, 310 - 0.08 * t + ar1(rng, n, 12), 0.55 - 0.0002 * t, None,
                        max_steps=max_steps, prompts=2, group=4, cap=1024)
    return add_eval(run, rng, lambda s: 0.30 + 0.2 * float(sigmoid((s - 260) / 90)), 100, 200)


def healthy_slow_learner(rng, n=600, max_steps=1500):
    t = _t(n)
    p = 0.30 + 0.12 * (t / n) ** 0.8 + ar1(rng, n, 0.02)
    run = simulate_grpo(rng, n, p, 420 + 0.05 * t + ar1(rng, n, 10), 0.62 - 0.00012 * t,
                        0.0005 + 0.004 * t / n, max_steps=max_steps, prompts=32, group=8, cap=1024)
    return add_eval(run, rng, lambda s: 0.31 + 0.1 * s / n, 50, 1319)


def healthy_kl_rising(rng, n=500, max_steps=600):
    """beta>0: KL rises steadily to ~0.12 while reward rises: the model moves and improves."""
    t = _t(n)
    p = rise(t, 0.22, 0.71, 180, 70)
    run = simulate_grpo(rng, n, p, 260 + 40 * sigmoid((t - 200) / 80), 0.5 - 0.25 * t / n,
                        0.002 + 0.12 * (t / n) ** 1.1, max_steps=max_steps, prompts=8, group=8, cap=768)
    return add_eval(run, rng, lambda s: 0.25 + 0.42 * float(sigmoid((s - 180) / 70)), 100, 500)


def healthy_spikes(rng, n=450, max_steps=800, spikes=(97, 213, 344)):
    """Isolated one-step spikes in grad_norm, KL and loss; each recovers at once."""
    run = healthy_kl_rising(rng, n, max_steps)
    for s in spikes:
        run.m["grad_norm"][s - 1] *= 60
        run.m["kl"][s - 1] *= 25
        run.m["loss"][s - 1] = 0.9
        run.m["reward"][s - 1] *= 0.7
    return run


def healthy_nan_rows(rng, n=300, max_steps=500):
    """fp16 loss scaling: a few NaN grad_norm values and a step whose entropy came back NaN on every rank."""
    run = healthy_kl_rising(rng, n, max_steps)
    for s in (3, 4, 118, 119, 240):
        run.m["grad_norm"][s - 1] = float("nan")
    run.m["entropy"][176] = float("nan")
    run.m["kl"][176] = float("nan")
    return run


def healthy_resume(rng, n=420, max_steps=600):
    t = _t(n)
    run = simulate_grpo(rng, n, rise(t, 0.35, 0.78, 150, 60) + ar1(rng, n, 0.02),
                        300 - 60 * sigmoid((t - 150) / 60), 0.45 - 0.15 * t / n, 0.001 + 0.05 * t / n,
                        max_steps=max_steps, prompts=16, group=8, cap=1024)
    return add_eval(run, rng, lambda s: 0.4 + 0.3 * float(sigmoid((s - 150) / 60)), 50, 500)


def healthy_dpo(rng, n=600, max_steps=900, beta=0.1):
    t = _t(n)
    prog = 1 - np.exp(-t / 160)
    margins = 2.6 * prog + heavy(rng, n, 0.35)
    chosen = -0.35 * prog + heavy(rng, n, 0.25)
    rejected = chosen - margins
    acc = np.clip(0.5 + 0.38 * prog + ar1(rng, n, 0.05, 0.3), 0, 1)
    acc = np.round(acc * 16) / 16
    loss = np.log1p(np.exp(-margins.clip(-5, 10) * 0.9)) * 0.75 + 0.05 * rng.random(n)
    m = {"loss": loss, "grad_norm": 6 * np.exp(ar1(rng, n, 0.35, 0.3)), "chosen": chosen, "rejected": rejected,
         "margins": margins, "accuracies": acc, "logps_chosen": -260 - 30 * prog + heavy(rng, n, 40),
         "logps_rejected": -300 - 60 * prog + heavy(rng, n, 45), "logits_chosen": -2.3 + ar1(rng, n, 0.15),
         "logits_rejected": -2.4 + ar1(rng, n, 0.15), "lr": lr_schedule(t, 5e-7, max_steps, 30, "linear")}
    run = Run("dpo", n, max_steps, m)
    es = range(100, n + 1, 100)
    run.ev = {"loss": {s: 0.693 - 0.27 * (1 - math.exp(-s / 160)) + rng.normal(0, 0.01) for s in es},
              "accuracies": {s: 0.5 + 0.3 * (1 - math.exp(-s / 160)) + rng.normal(0, 0.01) for s in es},
              "margins": {s: 2.2 * (1 - math.exp(-s / 160)) for s in es}}
    return run


def healthy_early(rng, n=40, max_steps=500):
    """A few dozen steps in: reward is noisy and has barely moved; nothing to judge yet."""
    t = _t(n)
    return simulate_grpo(rng, n, 0.41 + 0.001 * t + ar1(rng, n, 0.03), 240 + ar1(rng, n, 8), 0.7 + 0 * t,
                         0.0002 * t, max_steps=max_steps, prompts=8, group=8, cap=1024)


def healthy_early_verl(rng, n=25, max_steps=435):
    t = _t(n)
    run = simulate_grpo(rng, n, 0.05 + 0.25 * (t / n) ** 1.5, 330 - 2 * t, 0.52 - 0.004 * t, 0.0004 * t,
                        max_steps=max_steps, prompts=64, group=5, cap=512)
    run.ev["acc"] = {0: 0.062}
    return run


def converged_near_end(rng, n=960, max_steps=1000):
    t = _t(n)
    p = rise(t, 0.35, 0.82, 150, 50) + ar1(rng, n, 0.015)
    run = simulate_grpo(rng, n, p, 280 - 40 * sigmoid((t - 150) / 50), 0.42 - 0.12 * sigmoid((t - 200) / 100),
                        0.004 + 0.06 * (1 - np.exp(-t / 250)), max_steps=max_steps, prompts=16, group=8,
                        cap=1024, lr=1e-6)
    return add_eval(run, rng, lambda s: 0.43 + 0.28 * float(sigmoid((s - 150) / 50)), 80, 1319)


def healthy_ppo_verl(rng, n=420, max_steps=435):
    """verl PPO (GAE critic): value loss falls, explained variance rises, score rises, reward-KL grows slowly."""
    t = _t(n)
    p = rise(t, 0.02, 0.64, 45, 18) + 0.06 * t / n
    run = simulate_grpo(rng, n, p, 310 - 120 * sigmoid((t - 60) / 30), 0.52 - 0.2 * t / n, None,
                        max_steps=max_steps, prompts=256, group=1, cap=512, on_policy=False, algo="ppo")
    run.m["value_loss"] = 0.4 * np.exp(-t / 40) + 0.06 + np.abs(heavy(rng, n, 0.01))
    run.m["value_loss"][:3] = [14.0, 16.5, 7.8]
    run.m["vf_explained_var"] = np.clip(0.6 * (1 - np.exp(-t / 60)) + ar1(rng, n, 0.03), -1, 1)
    run.m["values_mean"] = run.m["reward"] * 0.9 + ar1(rng, n, 0.02)
    run.m["critic_grad_norm"] = 30 * np.exp(-t / 80) + 4 + np.abs(heavy(rng, n, 0.8))
    run.m["vf_clipfrac"] = 0.02 + np.abs(ar1(rng, n, 0.005))
    run.m["ppo_kl"] = ar1(rng, n, 0.0004)
    run.m["reward_kl"] = 0.02 + 0.19 * (1 - np.exp(-t / 150)) + np.abs(ar1(rng, n, 0.01))
    run.m["kl_shaped"] = run.m["reward"] - 0.001 * run.m["reward_kl"]
    return add_eval(run, rng, lambda s: 0.05 + 0.5 * float(sigmoid((s - 45) / 18)), 10, 1319)


def healthy_rloo_trl(rng, n=360, max_steps=500):
    """TRL RLOO >=0.22: GRPO-style keys with kl logged by default (beta 0.05); num_generations 2."""
    t = _t(n)
    run = simulate_grpo(rng, n, rise(t, 0.18, 0.52, 140, 60), 200 + 0.1 * t, 0.6 - 0.2 * t / n,
                        0.01 + 0.25 * (t / n), max_steps=max_steps, prompts=32, group=2, algo="rloo",
                        on_policy=False)
    return run


def healthy_dapo_long(rng, n=700, max_steps=1200):
    """DAPO (verl): lengths grow from ~600 to ~1500 tokens under a 4096 cap (reasoning gets longer) while the
    score rises; clip-higher keeps entropy from collapsing; dynamic sampling needs 1-3 generation rounds."""
    t = _t(n)
    p = rise(t, 0.12, 0.42, 320, 140)
    run = simulate_grpo(rng, n, p, 600 + 900 * (t / n) ** 0.9, 0.48 + 0.05 * np.sin(t / 90) - 0.08 * t / n,
                        None, max_steps=max_steps, prompts=32, group=16, cap=4096, scale="pm1", on_policy=False,
                        algo="dapo")
    run.m["num_gen_batches"] = np.round(1 + 2 * run.m["zero_std"] + rng.random(n))
    return add_eval(run, rng, lambda s: 0.10 + 0.2 * float(sigmoid((s - 320) / 140)), 50, 30 * 32)


def healthy_ppo_trl_rm(rng, n=300, max_steps=480):
    """TRL PPOTrainer with a reward model: scores in roughly -1..1, rising; KL grows slowly; ratio ~1."""
    t = _t(n)
    scores = -0.8 + 1.1 * (1 - np.exp(-t / 120)) + ar1(rng, n, 0.08, 0.5)
    kl = 0.5 + 7 * (t / n) ** 1.2 + np.abs(ar1(rng, n, 0.5, 0.5))
    m = {"scores": scores, "kl": kl, "nonscore": -0.05 * kl, "rlhf_reward": scores - 0.05 * kl,
         "entropy": 42 - 6 * t / n + ar1(rng, n, 1.0), "approxkl": 0.002 + np.abs(ar1(rng, n, 0.001)),
         "clipfrac": 0.03 + np.abs(ar1(rng, n, 0.01)), "pg_loss": ar1(rng, n, 0.01, 0.2),
         "value_loss": 0.2 * np.exp(-t / 80) + 0.03 + np.abs(ar1(rng, n, 0.005)),
         "vf_clipfrac": 0.01 + np.abs(ar1(rng, n, 0.005)), "ratio": 1 + ar1(rng, n, 0.004),
         "ratio_var": 1e-4 + np.abs(ar1(rng, n, 5e-5)), "num_eos": 64 - np.abs(ar1(rng, n, 1.5)),
         "lr": lr_schedule(t, 3e-6, max_steps, 1, "linear"), "episode": 64 * t, "eps": 12 + ar1(rng, n, 0.5)}
    return Run("ppo", n, max_steps, m)


def healthy_sum3(rng, n=500, max_steps=800):
    """Three reward components summed (0..3): format, correctness, concision; all improve."""
    t = _t(n)
    comps = ("format_reward", "correctness_reward", "concision_reward")
    fmt = rise(t, 0.4, 0.97, 40, 15)
    cor = rise(t, 0.25, 0.58, 220, 90)
    con = rise(t, 0.3, 0.6, 180, 90)
    run = simulate_grpo(rng, n, cor, 380 - 60 * sigmoid((t - 180) / 90), 0.6 - 0.2 * t / n, 0.002 + 0.05 * t / n,
                        max_steps=max_steps, prompts=16, group=8, components=comps)
    f = np.clip(fmt + ar1(rng, n, 0.03), 0, 1)
    c = np.clip(con + ar1(rng, n, 0.04), 0, 1)
    run.m["comp/format_reward"] = f
    run.m["comp/correctness_reward"] = run.m["reward"].copy()
    run.m["comp/concision_reward"] = c
    run.m["reward"] = f + run.m["reward"] + c
    run.m["reward_std"] = np.sqrt(run.m["reward_std"] ** 2 + 0.1)
    return add_eval(run, rng, lambda s: 0.27 + 0.3 * float(sigmoid((s - 220) / 90)), 100, 500)


def healthy_long_tb(rng, n=2000, max_steps=3000):
    """A long verl GRPO run: slow steady gains, entropy declining slowly (normal), KL grows slowly."""
    t = _t(n)
    p = 0.35 + 0.3 * (1 - np.exp(-t / 700)) + ar1(rng, n, 0.02, 0.95)
    return add_eval(simulate_grpo(rng, n, p, 500 + 150 * t / n + ar1(rng, n, 15), 0.7 - 0.3 * t / n,
                                  0.001 + 0.02 * (t / n), max_steps=max_steps, prompts=32, group=8, cap=2048),
                    rng, lambda s: 0.37 + 0.27 * (1 - math.exp(-s / 700)), 100, 1319)


def healthy_dip_recovered(rng, n=400, max_steps=600):
    """A 25-step dip around step 150 (a harder data shard) that has fully recovered."""
    t = _t(n)
    p = rise(t, 0.3, 0.72, 120, 50) - 0.14 * np.exp(-((t - 150) / 12) ** 2)
    return simulate_grpo(rng, n, p + ar1(rng, n, 0.02), 280 + ar1(rng, n, 10), 0.5 - 0.15 * t / n,
                         0.002 + 0.04 * t / n, max_steps=max_steps, prompts=16, group=8)


def healthy_openrlhf(rng, n=220, max_steps=480):
    t = _t(n)
    run = simulate_grpo(rng, n, rise(t, 0.3, 0.75, 70, 30), 240 + 30 * np.sin(t / 40), 0.8 - 0.3 * t / n,
                        0.001 + 0.03 * t / n, max_steps=max_steps, prompts=32, group=4, algo="reinforce++",
                        on_policy=False)
    run.m["group_std"] = run.m["reward_std"] * 0.8
    return add_eval(run, rng, lambda s: 0.35 + 0.4 * float(sigmoid((s - 70) / 30)), 20, 1319)


def healthy_hard_task(rng, n=350, max_steps=800):
    """A hard task: most groups are all-wrong (frac_reward_zero_std ~0.6) but the reward creeps up."""
    t = _t(n)
    return simulate_grpo(rng, n, 0.06 + 0.09 * t / n + ar1(rng, n, 0.01), 700 + 0.3 * t + ar1(rng, n, 20),
                         0.62 - 0.0002 * t, None, max_steps=max_steps, prompts=16, group=8, cap=2048,
                         difficulty_spread=1.2)


def healthy_warmup_flat(rng, n=120, max_steps=1000):
    """LR warmup over 60 steps: reward is flat at first and has started to climb by step ~90."""
    t = _t(n)
    p = 0.33 + 0.12 * ramp(t, 70, 120) + ar1(rng, n, 0.02)
    run = simulate_grpo(rng, n, p, 300 + ar1(rng, n, 8), 0.6 - 0.05 * ramp(t, 70, 120), 0.0001 * t,
                        max_steps=max_steps, prompts=16, group=8, lr=1e-6)
    run.m["lr"] = lr_schedule(t, 1e-6, max_steps, warmup=60, kind="cosine")
    return run


def healthy_pm1_plain(rng, n=260, max_steps=300):
    """A plain script, reward in -1..1 (correct +1, wrong -1), logged every 2 steps."""
    t = _t(n)
    return add_eval(simulate_grpo(rng, n, rise(t, 0.38, 0.66, 110, 40), 350 + ar1(rng, n, 10),
                                  0.55 - 0.1 * t / n, 0.003 + 0.04 * t / n, max_steps=max_steps, prompts=8,
                                  group=8, scale="pm1"),
                    rng, lambda s: 0.4 + 0.2 * float(sigmoid((s - 110) / 40)), 50, 500)


def healthy_rasbt(rng, n=240, max_steps=500):
    """reasoning-from-scratch style: one prompt x 8 rollouts per step, so reward is very noisy."""
    t = _t(n)
    run = simulate_grpo(rng, n, rise(t, 0.35, 0.7, 60, 25), 420 - 80 * sigmoid((t - 60) / 25),
                        0.45 + 0.05 * np.sin(t / 30), None, max_steps=max_steps, prompts=1, group=8, cap=1024)
    run.ev["acc"] = {1: 0.156, 50: 0.344, 100: 0.41, 150: 0.416, 200: 0.43}
    return run


def converged_verl(rng, n=300, max_steps=300):
    """The planned end: score ~0.95 since step 60, val flat, KL flat."""
    t = _t(n)
    run = simulate_grpo(rng, n, rise(t, 0.55, 0.95, 20, 8), 220 - 30 * sigmoid((t - 40) / 20), 0.35 - 0.1 * t / n,
                        0.02 * (1 - np.exp(-t / 60)), max_steps=max_steps, prompts=64, group=5, cap=1024)
    return add_eval(run, rng, lambda s: 0.85 + 0.03 * min(s, 60) / 60, 10, 1319)


# ---- failing ---------------------------------------------------------------------------------------------------

def peak_then_decline(rng, n=600, max_steps=1000, peak=300):
    """Reward climbs to ~0.74 at step ~300 then slides to ~0.45; KL keeps rising."""
    t = _t(n)
    p = rise(t, 0.3, 0.76, 120, 40) - 0.32 * ramp(t, peak + 40, n) ** 1.2
    return add_eval(simulate_grpo(rng, n, p + ar1(rng, n, 0.02), 260 + 120 * ramp(t, peak, n),
                                  0.5 + 0.25 * ramp(t, peak, n), 0.003 + 0.05 * t / peak + 0.25 * ramp(t, peak, n),
                                  max_steps=max_steps, prompts=16, group=8),
                    rng, lambda s: 0.35 + 0.35 * float(sigmoid((s - 120) / 40)) - 0.25 * min(1, max(0, s - 340) / 260),
                    100, 500)


def eval_peak_train_rises(rng, n=600, max_steps=800):
    """Train reward keeps rising to ~0.9, held-out accuracy peaks ~0.62 at step 250 and falls to ~0.47."""
    t = _t(n)
    p = rise(t, 0.3, 0.92, 220, 90)
    run = simulate_grpo(rng, n, p, 300 - 90 * ramp(t, 250, n), 0.5 - 0.35 * ramp(t, 200, n),
                        0.004 + 0.2 * (t / n) ** 1.5, max_steps=max_steps, prompts=16, group=8)

    def acc(s):
        return 0.38 + 0.24 * min(1, s / 250) - 0.15 * max(0, s - 260) / 340
    return add_eval(run, rng, acc, 50, 1319)


def kl_blowup(rng, n=420, max_steps=600, at=300):
    """KL sits near 0.02-0.05, then explodes to >5 from step ~300; reward falls shortly after."""
    t = _t(n)
    kl = 0.004 + 0.04 * t / at + 8 * ramp(t, at, at + 60) ** 2
    p = rise(t, 0.2, 0.68, 100, 35) - 0.6 * ramp(t, at + 15, at + 80)
    run = simulate_grpo(rng, n, p, 330 + 400 * ramp(t, at + 10, at + 70), 0.45 + 1.2 * ramp(t, at + 10, n), kl,
                        max_steps=max_steps, prompts=64, group=5, cap=1024)
    run.m["grad_norm"] *= 1 + 20 * ramp(t, at, at + 40)
    return add_eval(run, rng, lambda s: 0.2 + 0.45 * float(sigmoid((s - 100) / 35)) - 0.6 * min(1, max(0, s - at) / 80),
                    20, 1319, start=0)


def entropy_collapse_stall(rng, n=300, max_steps=1000):
    """Entropy drops from ~0.6 to ~0.02 by step 150; reward stalls at ~0.45; groups stop disagreeing."""
    t = _t(n)
    ent = 0.6 * np.exp(-t / 40) + 0.015
    p = 0.3 + 0.15 * (1 - np.exp(-t / 40))
    run = simulate_grpo(rng, n, p + ar1(rng, n, 0.01), 260 - 60 * (1 - np.exp(-t / 40)), ent, None,
                        max_steps=max_steps, prompts=16, group=8)
    # with near-zero entropy every group answers identically: zero-std fraction -> ~1
    zs = np.clip(0.35 + 0.65 * ramp(t, 60, 160) + ar1(rng, n, 0.02), 0, 1)
    run.m["zero_std"] = zs
    run.m["reward_std"] = run.m["reward_std"] * (1 - 0.8 * ramp(t, 60, 160))
    return run


def entropy_blowup(rng, n=320, max_steps=600, at=250):
    """Entropy jumps from ~0.4 to ~8 (near-uniform tokens: gibberish); reward collapses to 0; lengths hit cap."""
    t = _t(n)
    ent = 0.45 - 0.1 * t / at + 8 * ramp(t, at, at + 25) ** 1.5
    p = rise(t, 0.35, 0.8, 90, 30) - 0.8 * ramp(t, at + 3, at + 25)
    return add_eval(simulate_grpo(rng, n, p, 300 + 800 * ramp(t, at, at + 30), ent, None, max_steps=max_steps,
                                  prompts=16, group=8, cap=1024),
                    rng, lambda s: 0.3 + 0.4 * float(sigmoid((s - 90) / 30)) - 0.7 * (s > at), 50, 500)


def length_explosion(rng, n=500, max_steps=800, at=260):
    """DAPO/verl: response length climbs steadily from ~700 to the 2048 cap; clip_ratio -> 0.9; score falls."""
    t = _t(n)
    length = 700 + 1700 * ramp(t, at, n - 60) ** 1.3
    p = rise(t, 0.15, 0.48, 120, 50) - 0.35 * ramp(t, at + 60, n)
    run = simulate_grpo(rng, n, p, length, 0.5 + 0.3 * ramp(t, at, n), None, max_steps=max_steps, prompts=32,
                        group=16, cap=2048, scale="pm1", on_policy=False, algo="dapo")
    run.m["num_gen_batches"] = np.round(1 + 2 * run.m["zero_std"] + rng.random(n))
    def eval_curve(s: float) -> float:
        return 0.15 + 0.25 * float(sigmoid((s - 120) / 50)) - 0.25 * min(1, max(0, s - at - 60) / 180)

    return add_eval(run, rng, eval_curve, 50, 960)


def length_collapse(rng, n=260, max_steps=500, at=120):
    """Completions shrink from ~250 tokens to under 10; reward falls as the model stops reasoning."""
    t = _t(n)
    length = 250 - 242 * ramp(t, at, at + 50) ** 0.7
    p = rise(t, 0.45, 0.8, 50, 20) - 0.65 * ramp(t, at + 10, at + 60)
    return simulate_grpo(rng, n, p, length, 0.5 - 0.3 * ramp(t, at, at + 50), 0.003 + 0.02 * t / at,
                         max_steps=max_steps, prompts=8, group=8, cap=512)


def format_hacking(rng, n=500, max_steps=800, at=180):
    """Format reward saturates at 1.0 while correctness (and held-out accuracy) falls; total (0..2) stays flat."""
    t = _t(n)
    comps = ("accuracy_reward", "format_reward")
    cor = rise(t, 0.3, 0.56, 80, 30) - 0.28 * ramp(t, at, n)
    run = simulate_grpo(rng, n, cor, 420 - 200 * ramp(t, at, n), 0.55 - 0.35 * ramp(t, at, n), None,
                        max_steps=max_steps, prompts=16, group=8, components=comps)
    fmt = np.clip(rise(t, 0.35, 1.0, 120, 30) + ar1(rng, n, 0.02) * (1 - ramp(t, 200, 260)), 0, 1)
    run.m["comp/format_reward"] = fmt
    run.m["comp/accuracy_reward"] = run.m["reward"].copy()
    run.m["reward"] = run.m["reward"] + fmt
    run.m["reward_std"] = np.sqrt(run.m["reward_std"] ** 2 + (fmt * (1 - fmt)))
    def eval_curve(s: float) -> float:
        return 0.33 + 0.22 * float(sigmoid((s - 80) / 30)) - 0.3 * min(1, max(0, s - at) / 250)

    return add_eval(run, rng, eval_curve, 50, 500)


def identical_rewards(rng, n=60, max_steps=500):
    """Reward never fires: exactly 0 everywhere, zero std, zero gradients; LR follows its schedule."""
    t = _t(n)
    run = simulate_grpo(rng, n, np.full(n, 1e-6), 1400 + 0 * t, 0.9 + 0 * t, None, max_steps=max_steps,
                        prompts=8, group=8, cap=512)
    for k in ("reward", "reward_std", "loss", "grad_norm"):
        run.m[k] = np.zeros(n)
    run.m["comp/accuracy_reward"] = np.zeros(n)
    run.m["zero_std"] = np.ones(n)
    return run


def ppo_value_explosion(rng, n=360, max_steps=435, at=170):
    """verl PPO: critic vf_loss goes from ~0.07 to >1e3, explained variance turns negative, then score decays."""
    run = healthy_ppo_verl(rng, n, max_steps)
    t = _t(n)
    run.m["value_loss"] = run.m["value_loss"] * np.exp(7.5 * ramp(t, at, at + 60))
    run.m["critic_grad_norm"] = run.m["critic_grad_norm"] * np.exp(5 * ramp(t, at, at + 60))
    run.m["vf_explained_var"] = run.m["vf_explained_var"] - 2.5 * ramp(t, at, at + 50)
    run.m["values_mean"] = run.m["values_mean"] + 40 * ramp(t, at, at + 60) ** 2
    drop = 0.45 * ramp(t, at + 30, n)
    run.m["reward"] = np.clip(run.m["reward"] - drop, 0, 1)
    run.m["kl_shaped"] = run.m["reward"] - 0.001
    run.ev["acc"] = {s: (v - 0.4 * min(1, max(0, s - at - 30) / (n - at - 30))) for s, v in run.ev["acc"].items()}
    return run


def loss_nan_divergence(rng, n=240, max_steps=600, at=205):
    """grad_norm climbs, then loss and grad_norm are NaN from step ~205; rewards come back empty (None)."""
    t = _t(n)
    run = simulate_grpo(rng, n, rise(t, 0.25, 0.6, 90, 30), 300 + ar1(rng, n, 10), 0.55 - 0.1 * t / n,
                        0.003 + 0.03 * t / n, max_steps=max_steps, prompts=16, group=8)
    run.m["grad_norm"] = run.m["grad_norm"] * np.exp(3 * ramp(t, at - 25, at))
    bad = t >= at
    for k in ("loss", "grad_norm", "kl", "entropy", "reward", "reward_std", "comp/accuracy_reward"):
        run.m[k] = np.where(bad, np.nan, run.m[k])
    run.m["grad_norm"][at - 1 + 2] = float("inf")
    return add_eval(run, rng, lambda s: 0.25 + 0.3 * float(sigmoid((s - 90) / 30)), 50, 500)


def dpo_displacement(rng, n=700, max_steps=1000, at=220):
    """DPO over-optimisation: margins blow up past 20, chosen rewards fall far below 0 (the model lowers the
    likelihood of the preferred answers too), train loss -> 0 while eval loss and eval accuracy get worse."""
    t = _t(n)
    prog = 1 - np.exp(-t / 100)
    runaway = ramp(t, at, n) ** 1.2
    margins = 2.4 * prog + 24 * runaway + heavy(rng, n, 0.5)
    chosen = -0.3 * prog - 16 * runaway + heavy(rng, n, 0.3)
    rejected = chosen - margins
    acc = np.clip(0.5 + 0.42 * prog + 0.06 * runaway + ar1(rng, n, 0.03, 0.3), 0, 1)
    loss = np.log1p(np.exp(-np.clip(margins, -5, 40) * 0.9)) * 0.7 + 0.01 * rng.random(n)
    m = {"loss": loss, "grad_norm": 5 * np.exp(ar1(rng, n, 0.3, 0.3)) * (1 + 3 * runaway), "chosen": chosen,
         "rejected": rejected, "margins": margins, "accuracies": acc,
         "logps_chosen": -250 - 320 * runaway + heavy(rng, n, 20), "logps_rejected": -290 - 560 * runaway,
         "logits_chosen": -2.3 + ar1(rng, n, 0.1), "logits_rejected": -2.4 + ar1(rng, n, 0.1),
         "lr": lr_schedule(t, 5e-6, max_steps, 20, "linear")}
    run = Run("dpo", n, max_steps, m)
    es = range(50, n + 1, 50)
    run.ev = {"loss": {s: 0.693 - 0.33 * (1 - math.exp(-s / 100)) + 0.9 * max(0, s - at) / (n - at) for s in es},
              "accuracies": {s: 0.5 + 0.25 * (1 - math.exp(-s / 100)) - 0.12 * max(0, s - at) / (n - at)
                             for s in es},
              "margins": {s: 2.0 * (1 - math.exp(-s / 100)) + 6 * max(0, s - at) / (n - at) for s in es}}
    return run


def dpo_no_learning(rng, n=300, max_steps=1200):
    """DPO that does not learn: loss stays at ln2, accuracy ~0.5, margins ~0 (e.g. a frozen/unattached adapter)."""
    t = _t(n)
    tiny = 1e-4 * ar1(rng, n, 1, 0.2)
    m = {"loss": 0.6931 + np.abs(tiny) * 0.1, "grad_norm": 0.002 + np.abs(ar1(rng, n, 0.001, 0.2)),
         "chosen": tiny, "rejected": -tiny, "margins": 2 * tiny,
         "accuracies": np.round(np.clip(0.5 + rng.normal(0, 0.12, n), 0, 1) * 8) / 8,
         "logps_chosen": -270 + heavy(rng, n, 30), "logps_rejected": -300 + heavy(rng, n, 30),
         "logits_chosen": -2.3 + ar1(rng, n, 0.1), "logits_rejected": -2.4 + ar1(rng, n, 0.1),
         "lr": lr_schedule(t, 5e-7, max_steps, 50, "linear")}
    return Run("dpo", n, max_steps, m)


def dpo_converging(rng, n=500, max_steps=600, at=260):
    """DPO forgetting: margins grow to ~2, then chosen and rejected rewards converge again; accuracy falls."""
    t = _t(n)
    prog = 1 - np.exp(-t / 80)
    back = ramp(t, at, n)
    margins = (2.0 * prog) * (1 - 0.85 * back) + heavy(rng, n, 0.3)
    chosen = -0.4 * prog - 1.5 * back + heavy(rng, n, 0.2)
    acc = np.clip(0.5 + 0.35 * prog - 0.28 * back + ar1(rng, n, 0.04, 0.3), 0, 1)
    m = {"loss": np.log1p(np.exp(-margins * 0.9)) * 0.8, "grad_norm": 8 * np.exp(ar1(rng, n, 0.3, 0.3)) * (1 + back),
         "chosen": chosen, "rejected": chosen - margins, "margins": margins, "accuracies": acc,
         "logps_chosen": -260 - 90 * back + heavy(rng, n, 25), "logps_rejected": -300 - 60 * back + heavy(rng, n, 25),
         "logits_chosen": -2.3 + ar1(rng, n, 0.1), "logits_rejected": -2.4 + ar1(rng, n, 0.1),
         "lr": lr_schedule(t, 2e-5, max_steps, 20, "linear")}
    run = Run("dpo", n, max_steps, m)
    es = range(50, n + 1, 50)
    run.ev = {"loss": {s: 0.693 - 0.25 * (1 - math.exp(-s / 80)) + 0.22 * max(0, s - at) / (n - at) for s in es},
              "accuracies": {s: 0.5 + 0.3 * (1 - math.exp(-s / 80)) - 0.22 * max(0, s - at) / (n - at) for s in es}}
    return run


def saturated_zero_std(rng, n=400, max_steps=1000):
    """Reward pinned at 1.0 with reward_std 0 and frac_reward_zero_std 1 for the last ~150 steps: nothing left."""
    t = _t(n)
    p = np.minimum(rise(t, 0.5, 1.05, 120, 35), 1.0)
    run = simulate_grpo(rng, n, p, 180 - 40 * sigmoid((t - 120) / 35), 0.3 * np.exp(-t / 150) + 0.01, None,
                        max_steps=max_steps, prompts=8, group=8, difficulty_spread=60)
    done = t >= 250
    run.m["reward"][done] = 1.0
    run.m["comp/accuracy_reward"][done] = 1.0
    run.m["reward_std"][done] = 0.0
    run.m["zero_std"][done] = 1.0
    run.m["loss"][done] = 0.0
    run.m["grad_norm"][done] = 0.0
    return run


def late_degradation(rng, n=800, max_steps=800, at=690):
    """Healthy until ~step 690 (the last ~14%), then reward slides 0.72 -> ~0.45 and entropy rises."""
    t = _t(n)
    p = rise(t, 0.3, 0.72, 200, 70) - 0.3 * ramp(t, at, n) ** 0.8
    run = simulate_grpo(rng, n, p + ar1(rng, n, 0.015), 320 + 150 * ramp(t, at, n), 0.45 - 0.1 * t / n
                        + 0.6 * ramp(t, at, n), 0.002 + 0.03 * t / n + 0.2 * ramp(t, at, n), max_steps=max_steps,
                        prompts=32, group=8, cap=1024)
    def eval_curve(s: float) -> float:
        return 0.3 + 0.35 * float(sigmoid((s - 200) / 70)) - 0.2 * min(1, max(0, s - at) / 100)

    return add_eval(run, rng, eval_curve, 50, 1319, start=0)


def ppo_ratio_clip_drift(rng, n=320, max_steps=480, at=160):
    """TRL PPO: clip fraction grows 0.04 -> 0.45 and val/ratio drifts to ~2, then KL explodes and the RLHF
    reward falls (the seed's 'clip fraction growing over time precedes a KL explosion')."""
    run = healthy_ppo_trl_rm(rng, n, max_steps)
    t = _t(n)
    r = ramp(t, at, n)
    run.m["clipfrac"] = run.m["clipfrac"] + 0.42 * r
    run.m["ratio"] = run.m["ratio"] + 1.1 * r ** 1.5 + 0.1 * r * np.abs(heavy(rng, n, 1))
    run.m["approxkl"] = run.m["approxkl"] * (1 + 40 * r)
    run.m["kl"] = run.m["kl"] + 70 * ramp(t, at + 40, n) ** 1.5
    run.m["nonscore"] = -0.05 * run.m["kl"]
    run.m["scores"] = run.m["scores"] - 0.5 * ramp(t, at + 60, n)
    run.m["rlhf_reward"] = run.m["scores"] + run.m["nonscore"]
    run.m["num_eos"] = run.m["num_eos"] - 40 * ramp(t, at + 60, n)
    return run


def kl_drift_reward_flat(rng, n=700, max_steps=1500, plateau=220):
    """Reward has been flat at ~0.62 since step ~220 while KL keeps climbing 0.05 -> 0.7 (seed: 'the training has
    run its course; continuing only increases divergence')."""
    t = _t(n)
    p = rise(t, 0.3, 0.62, 110, 35) + ar1(rng, n, 0.015)
    kl = 0.003 + 0.05 * t / plateau + 0.65 * ramp(t, plateau, n) ** 1.1
    run = simulate_grpo(rng, n, p, 300 + 50 * ramp(t, plateau, n), 0.5 - 0.2 * ramp(t, plateau, n), kl,
                        max_steps=max_steps, prompts=16, group=8)
    return add_eval(run, rng, lambda s: 0.32 + 0.28 * float(sigmoid((s - 110) / 35)) - 0.03 * max(0, s - plateau) / 480,
                    100, 1319)


def grad_explosion_openrlhf(rng, n=300, max_steps=480, at=190):
    """OpenRLHF: actor grad norm climbs two orders of magnitude and ppo clip ratio rises, then reward collapses."""
    run = healthy_openrlhf(rng, n, max_steps)
    t = _t(n)
    run.m["grad_norm"] = run.m["grad_norm"] * np.exp(5 * ramp(t, at, at + 40))
    run.m["clip_region"] = run.m["clip_region"] + 0.35 * ramp(t, at, at + 40)
    run.m["reward"] = np.clip(run.m["reward"] - 0.6 * ramp(t, at + 15, at + 50), 0, 1)
    run.m["kl"] = run.m["kl"] + 2.5 * ramp(t, at + 10, at + 50)
    run.m["entropy"] = run.m["entropy"] + 3 * ramp(t, at + 10, at + 50)
    run.ev["acc"] = {s: v - 0.55 * min(1, max(0, s - at - 10) / 40) for s, v in run.ev["acc"].items()}
    return run


def peak_decline_no_ckpt(rng, n=300, max_steps=300):
    """rasbt-style CSV: the ch07 story - eval accuracy peaks at step 100 and halves by 250, train reward drops
    after ~150 as entropy climbs."""
    t = _t(n)
    p = rise(t, 0.3, 0.72, 50, 20) - 0.55 * ramp(t, 150, 220)
    run = simulate_grpo(rng, n, p, 480 + 300 * ramp(t, 150, 230), 0.45 + 3.0 * ramp(t, 150, 230), None,
                        max_steps=max_steps, prompts=1, group=8, cap=1024)
    run.ev["acc"] = {1: 0.156, 50: 0.39, 100: 0.462, 150: 0.398, 200: 0.262, 250: 0.21, 300: 0.19}
    return run


# ----------------------------------------------------------------------------------------------------------------
# The case table: name, shape, writer(+options), labels.
# ----------------------------------------------------------------------------------------------------------------

H = dict(accept=["continue"], preferred="continue", healthy=True)   # a healthy run that must keep going

CASES = [
    # -------- healthy ----------------------------------------------------------------------------------------
    dict(name="h-trl-noisy-binary-tiny-batch", shape=healthy_noisy_binary, seed=101,
         write=(write_trl_state, dict(logging_steps=1, save_steps=100)), **H,
         tags=["grpo", "trl", "noisy", "binary_reward"],
         reasoning="Batch of 2 prompts x 4 completions: per-step reward swings between 0 and 1, but 50-step "
                   "means rise from ~0.28 to ~0.5 and eval accuracy 0.30 -> 0.44. Noise is the batch size, not a "
                   "problem; 400 of 1000 steps done."),
    dict(name="h-verl-slow-learner", shape=healthy_slow_learner, seed=102,
         write=(write_verl_console, dict(save_freq=100)), **H, tags=["grpo", "verl", "slow"],
         reasoning="Score creeps from 0.30 to ~0.42 over 600 steps with validation 0.31 -> ~0.41; KL loss small and "
                   "growing slowly, entropy steady. Slow but real progress, 40% of the planned run."),
    dict(name="h-trl-console-kl-rises-with-reward", shape=healthy_kl_rising, seed=103,
         write=(write_trl_console, dict(logging_steps=10, save_steps=100)), **H,
         tags=["grpo", "trl", "kl_rising"],
         reasoning="beta>0: KL rises steadily 0.002 -> ~0.12 while reward climbs 0.22 -> 0.7 and eval follows. KL "
                   "rising with reward rising is the model changing and improving."),
    dict(name="h-tb-one-step-spikes", shape=healthy_spikes, seed=104,
         write=(write_tb, dict(style="hf", save_steps=150)), **H, tags=["grpo", "trl", "tensorboard", "spikes"],
         reasoning="Three isolated one-step spikes (grad_norm x60, KL x25, loss 0.9 at steps 97/213/344); each "
                   "recovers the next step and the reward trend is unaffected."),
    dict(name="h-trl-nan-rows", shape=healthy_nan_rows, seed=105,
         write=(write_trl_state, dict(logging_steps=1, save_steps=50)), **H, tags=["grpo", "trl", "nan"],
         reasoning="A handful of NaN grad_norm values (fp16 loss scaling skipping steps) and one row with entropy "
                   "and kl null; everything around them is normal and rising."),
    dict(name="h-tb-resume-duplicate-steps", shape=healthy_resume, seed=106,
         write=(write_tb, dict(style="hf", resume_at=230, resume_from=200, save_steps=100)), **H,
         tags=["grpo", "trl", "tensorboard", "resume"],
         reasoning="Crashed at 230, resumed from checkpoint-200: a second event file re-logs 201-230. Reward rose "
                   "0.35 -> 0.78 and holds; the overlap is a logging artefact."),
    dict(name="h-wandb-csv-resume", shape=healthy_resume, seed=107,
         write=(write_wandb_csv, dict(logging_steps=2, resume_at=300, resume_from=250)), **H,
         tags=["grpo", "wandb", "csv", "resume"],
         reasoning="W&B export: _step keeps counting after the resume while train/global_step repeats 252-300. "
                   "Underneath it is a healthy rising run at step 420 of 600."),
    dict(name="h-trl-dpo", shape=healthy_dpo, seed=108,
         write=(write_trl_state, dict(logging_steps=5, save_steps=100)), **H, tags=["dpo", "trl"],
         reasoning="DPO loss 0.69 -> ~0.35, accuracy 0.5 -> ~0.85, margins to ~2.5; chosen slightly negative "
                   "(~-0.35), rejected falling: the textbook healthy DPO picture. Eval follows train."),
    dict(name="h-trl-console-very-early", shape=healthy_early, seed=109,
         write=(write_trl_console, dict(logging_steps=1)), **H, tags=["grpo", "trl", "early"],
         reasoning="40 of 500 steps: reward ~0.4 with noise, no trend yet, all other metrics ordinary. Too early "
                   "to judge anything; let it run."),
    dict(name="h-verl-very-early", shape=healthy_early_verl, seed=110,
         write=(write_verl_console, dict(np_style=True)), **H, tags=["grpo", "verl", "early"],
         reasoning="25 steps in, score rising 0.05 -> ~0.3 from a low start, val at step 0 = 0.06; nothing wrong."),
    dict(name="c-trl-converged-near-end", shape=converged_near_end, seed=111,
         write=(write_trl_state, dict(logging_steps=10, save_steps=200, eval_steps=80)),
         accept=["continue", "stop"], preferred="continue", tags=["grpo", "trl", "converged"],
         reasoning="960/1000 steps: reward ~0.82 and eval ~0.71 flat since ~step 300, KL flattening. Converged and "
                   "fine: finishing the last 40 steps or stopping now are both right; nothing to roll back to."),
    dict(name="h-verl-ppo-critic", shape=healthy_ppo_verl, seed=112,
         write=(write_verl_console, dict(save_freq=50)), **H, tags=["ppo", "verl"],
         reasoning="PPO with GAE critic: vf_loss high for the first steps then ~0.06-0.1, explained variance up to "
                   "~0.6, score 0.02 -> ~0.68, validation follows. Healthy; 420/435 steps so stopping at the end "
                   "is also harmless but not needed."),
    dict(name="h-trl-rloo-kl-default", shape=healthy_rloo_trl, seed=113,
         write=(write_trl_state, dict(logging_steps=10, save_steps=120, top_level=False)), **H,
         tags=["rloo", "trl", "kl_rising"],
         reasoning="RLOO (beta 0.05) logs KL by default: it rises to ~0.25 while reward rises 0.18 -> 0.5. Only "
                   "checkpoint folders (last one at 360 = current step)."),
    dict(name="h-verl-dapo-length-growth", shape=healthy_dapo_long, seed=114,
         write=(write_verl_jsonl, dict(save_freq=100)), **H, tags=["dapo", "verl", "jsonl", "length_growth"],
         reasoning="DAPO reasoning run: lengths grow 600 -> ~1500 under a 4096 cap (clip ratio stays ~0-2%) while "
                   "the -1..1 score rises and AIME-style val rises. Longer reasoning is the expected effect, not a "
                   "length explosion."),
    dict(name="h-trl-ppo-reward-model", shape=healthy_ppo_trl_rm, seed=115,
         write=(write_trl_state, dict(logging_steps=1, save_steps=100)), **H, tags=["ppo", "trl", "reward_model"],
         reasoning="TRL PPOTrainer: RM score -0.8 -> ~0.3, KL 0.5 -> ~7.5 nats per sequence rising slowly, ratio ~1, "
                   "clipfrac ~0.03, value loss falling. Healthy RLHF."),
    dict(name="h-jsonl-three-components", shape=healthy_sum3, seed=116,
         write=(write_plain_jsonl, dict(every=1, ckpt_every=100)), **H, tags=["grpo", "plain", "jsonl", "components"],
         reasoning="Summed reward (0..3): format saturates early (expected), correctness 0.25 -> 0.55 and concision "
                   "0.3 -> 0.6 keep rising with eval accuracy. No component is being gamed."),
    dict(name="h-tb-verl-long-2000", shape=healthy_long_tb, seed=117,
         write=(write_tb, dict(style="verl", logging_steps=10, save_steps=250)), **H,
         tags=["grpo", "verl", "tensorboard", "long"],
         reasoning="2000 of 3000 steps, logged every 10: score 0.35 -> ~0.6 still improving, entropy declining "
                   "slowly 0.7 -> 0.4, KL tiny. A slow, healthy run."),
    dict(name="h-trl-dip-recovered", shape=healthy_dip_recovered, seed=118,
         write=(write_trl_state, dict(logging_steps=5, save_steps=100)), **H, tags=["grpo", "trl", "dip"],
         reasoning="Reward dipped ~0.14 around step 150 for ~25 steps and came back; since 200 it sits at 0.7+. "
                   "A recovered wobble is not a decline."),
    dict(name="h-openrlhf-console", shape=healthy_openrlhf, seed=119,
         write=(write_openrlhf_console, dict(save_steps=50)), **H, tags=["reinforce++", "openrlhf"],
         reasoning="OpenRLHF REINFORCE++: reward 0.3 -> 0.75, eval pass@1 follows, KL small and rising, grad norm "
                   "steady. Healthy at 220/480."),
    dict(name="h-trl-hard-task-many-zero-std", shape=healthy_hard_task, seed=120,
         write=(write_trl_console, dict(logging_steps=5, stringly=False)), **H, tags=["grpo", "trl", "hard_task"],
         reasoning="Hard task: ~half or more of the groups are all-wrong (frac_reward_zero_std high), but reward "
                   "creeps 0.06 -> 0.15 with stable entropy and lengths. Sparse but alive."),
    dict(name="h-trl-warmup-flat-start", shape=healthy_warmup_flat, seed=121,
         write=(write_trl_state, dict(logging_steps=1, save_steps=50)), **H, tags=["grpo", "trl", "early", "warmup"],
         reasoning="60-step LR warmup: reward flat at ~0.33 for 70 steps, starting to climb by 90-120. 120/1000 "
                   "steps; a flat warmup is not a stall."),
    dict(name="h-jsonl-pm1-reward", shape=healthy_pm1_plain, seed=122,
         write=(write_plain_jsonl, dict(every=2)), **H, tags=["grpo", "plain", "jsonl", "pm1"],
         reasoning="Reward on a -1..1 scale goes from about -0.25 to +0.3 (accuracy 0.38 -> 0.65); negative numbers "
                   "are the scale, not a failure."),
    dict(name="h-rasbt-csv-tiny-batch", shape=healthy_rasbt, seed=123,
         write=(write_rasbt_csv, {}), **H, tags=["grpo", "plain", "csv"],
         reasoning="One prompt x 8 rollouts per step (reasoning-from-scratch style): reward per step is 0..1 noise "
                   "around a mean rising 0.35 -> 0.7; MATH-500 15.6 -> 43.0 still improving."),
    dict(name="c-tb-verl-converged-at-end", shape=converged_verl, seed=124,
         write=(write_tb, dict(style="verl", save_steps=50)), accept=["continue", "stop"], preferred="stop",
         tags=["grpo", "verl", "tensorboard", "converged"],
         reasoning="300/300 steps (the planned end): score ~0.95 since ~60, val 0.85-0.88 flat, KL flat. Nothing is "
                   "wrong; the run is done."),

    # -------- failing ----------------------------------------------------------------------------------------
    dict(name="f-trl-peak-then-decline", shape=peak_then_decline, seed=201,
         write=(write_trl_state, dict(logging_steps=5, save_steps=100)),
         accept=["rollback", "stop"], preferred="rollback", rollback_window=[200, 350], onset_step=360,
         tags=["grpo", "trl", "peak_then_decline"],
         reasoning="Reward peaks at ~0.75 around steps 250-340 and slides to ~0.45 by 600 with KL and entropy up; "
                   "eval agrees (0.69 at 300, 0.5 at 600). Checkpoints 200 and 300 hold the best model."),
    dict(name="f-trl-eval-peaks-train-rises", shape=eval_peak_train_rises, seed=202,
         write=(write_trl_state, dict(logging_steps=10, save_steps=50, eval_steps=50)),
         accept=["rollback", "stop"], preferred="rollback", rollback_window=[200, 300], onset_step=300,
         tags=["grpo", "trl", "eval_decline", "overfit"],
         reasoning="Train reward keeps rising to ~0.9 but held-out accuracy (1319 items, +-1.3 pts) peaks ~0.62 at "
                   "250 and falls steadily to ~0.47. The policy is fitting the train prompts, not the task; go back "
                   "to the eval peak."),
    dict(name="f-verl-kl-blowup", shape=kl_blowup, seed=203,
         write=(write_verl_console, dict(save_freq=50)),
         accept=["rollback", "stop"], preferred="rollback", rollback_window=[200, 300], onset_step=305,
         tags=["grpo", "verl", "kl_blow_up"],
         reasoning="actor/kl_loss ~0.03-0.05 until 300 then climbs past 1 by ~335 and ~8 by 360 with grad norm x20; "
                   "score and validation collapse right after. Best checkpoints 200-300."),
    dict(name="f-trl-entropy-collapse-stall", shape=entropy_collapse_stall, seed=204,
         write=(write_trl_console, dict(logging_steps=5, save_steps=50)),
         accept=["stop", "rollback"], preferred="stop", rollback_window=[40, 100], onset_step=100,
         tags=["grpo", "trl", "entropy_collapse", "stall"],
         reasoning="Entropy falls 0.6 -> 0.02 by ~150 and stays; reward stalls at ~0.45 from ~100 while zero-std "
                   "groups go to ~1: no learning signal left. Stop (and rethink temperature/entropy); rolling back "
                   "to ~50-100 before the collapse is also reasonable."),
    dict(name="f-tb-entropy-blowup-gibberish", shape=entropy_blowup, seed=205,
         write=(write_tb, dict(style="hf", logging_steps=2, save_steps=50)),
         accept=["rollback", "stop"], preferred="rollback", rollback_window=[150, 250], onset_step=252,
         tags=["grpo", "trl", "tensorboard", "entropy_blow_up", "collapse"],
         reasoning="Entropy jumps from ~0.35 to ~8 within 25 steps after 250, lengths go to the 1024 cap and reward "
                   "collapses to ~0: the model emits noise. Checkpoints 150-250 (the blow-up starts at 251) "
                   "are good."),
    dict(name="f-verl-jsonl-length-explosion", shape=length_explosion, seed=206,
         write=(write_verl_jsonl, dict(save_freq=50)),
         accept=["rollback", "stop"], preferred="rollback", rollback_window=[150, 300], onset_step=300,
         tags=["dapo", "verl", "jsonl", "length_explosion", "truncation"],
         reasoning="Response length climbs from ~700 past the 2048 cap from ~260 on; clip ratio goes toward ~0.9 "
                   "and the -1..1 score and validation fall. Truncated answers are scored as wrong; go back before "
                   "~300."),
    dict(name="f-trl-length-collapse", shape=length_collapse, seed=207,
         write=(write_trl_state, dict(logging_steps=2, save_steps=40)),
         accept=["rollback", "stop"], preferred="rollback", rollback_window=[60, 125], onset_step=125,
         tags=["grpo", "trl", "length_collapse", "collapse"],
         reasoning="Mean completion length drops from ~250 to under 10 tokens over 120-170 and reward falls from "
                   "~0.8 to ~0.15: the model stopped reasoning. Checkpoints 80-120 hold the good policy."),
    dict(name="f-trl-console-format-hacking", shape=format_hacking, seed=208,
         write=(write_trl_console, dict(logging_steps=10, save_steps=100, eval_steps=50)),
         accept=["rollback", "stop"], preferred="rollback", rollback_window=[100, 200], onset_step=200,
         tags=["grpo", "trl", "reward_hacking", "component_saturation"],
         reasoning="The format reward saturates at 1.0 (its std 0) while accuracy_reward falls 0.55 -> ~0.3 and "
                   "held-out accuracy 0.55 -> ~0.3; the summed reward (0..2) looks flat so it hides it. Go back to "
                   "100-200."),
    dict(name="f-trl-console-identical-rewards", shape=identical_rewards, seed=209,
         write=(write_trl_console, dict(logging_steps=1)),
         accept=["stop"], preferred="stop", onset_step=1, tags=["grpo", "trl", "setup_failure"],
         reasoning="Reward, reward_std, loss and grad_norm are exactly 0 from step 1, frac_reward_zero_std 1, "
                   "most completions run to the 512 cap: the reward never fires, gradients are zero. Stop and fix the "
                   "reward / max length."),
    dict(name="f-verl-ppo-value-explosion", shape=ppo_value_explosion, seed=210,
         write=(write_verl_console, dict(save_freq=50, np_style=True, nested_ckpt=True)),
         accept=["rollback", "stop"], preferred="rollback", rollback_window=[100, 175], onset_step=175,
         tags=["ppo", "verl", "value_loss_explosion"],
         reasoning="critic/vf_loss goes from ~0.07 to >100 over 170-230, vf_explained_var falls below 0 and critic "
                   "grad norm explodes; score and validation then decay. The advantages are garbage from ~175; go "
                   "back to 100-150."),
    dict(name="f-trl-loss-nan", shape=loss_nan_divergence, seed=211,
         write=(write_trl_state, dict(logging_steps=1, save_steps=50)),
         accept=["stop", "rollback"], preferred="rollback", rollback_window=[100, 180], onset_step=182,
         tags=["grpo", "trl", "nan", "divergence"],
         reasoning="grad_norm climbs x20 over 180-205, then loss/grad_norm are NaN on every step from 205 and reward "
                   "metrics are null: the weights are gone. Stop; resume from checkpoint 150 (or 100) with a lower "
                   "LR."),
    dict(name="f-trl-dpo-margin-blowup", shape=dpo_displacement, seed=212,
         write=(write_trl_state, dict(logging_steps=5, save_steps=100, eval_steps=50)),
         accept=["rollback", "stop"], preferred="rollback", rollback_window=[150, 250], onset_step=250,
         tags=["dpo", "trl", "likelihood_displacement", "overfit"],
         reasoning="Margins run past 20, chosen rewards fall to ~-16 and logps/chosen -250 -> -570 (the model lowers "
                   "the preferred answers' likelihood too); train loss ~0 but eval loss rises from ~0.37 and eval "
                   "accuracy falls after ~220. Go back to ~200."),
    dict(name="f-trl-grpo-saturated-zero-std", shape=saturated_zero_std, seed=213,
         write=(write_trl_state, dict(logging_steps=1, save_steps=100)),
         accept=["stop"], preferred="stop", onset_step=250, tags=["grpo", "trl", "saturation", "zero_std"],
         reasoning="Reward exactly 1.0 with reward_std 0 and frac_reward_zero_std 1 for 150 steps, loss and grad "
                   "norm 0: every completion is right, the gradient is zero. Nothing more to learn on this data: "
                   "stop (and use harder prompts)."),
    dict(name="f-tb-verl-late-degradation", shape=late_degradation, seed=214,
         write=(write_tb, dict(style="verl", logging_steps=1, save_steps=100)),
         accept=["rollback", "stop"], preferred="rollback", rollback_window=[500, 690], onset_step=700,
         tags=["grpo", "verl", "tensorboard", "late_decline"],
         reasoning="Healthy for 690 of 800 steps (score ~0.72, val ~0.65); over the last ~110 steps the score slides "
                   "to ~0.45, entropy rises 0.38 -> ~1, KL jumps and val drops ~0.2. Checkpoints 500-600 are good."),
    dict(name="f-trl-ppo-clip-ratio-drift", shape=ppo_ratio_clip_drift, seed=215,
         write=(write_trl_state, dict(logging_steps=1, save_steps=40)),
         accept=["rollback", "stop"], preferred="rollback", rollback_window=[80, 160], onset_step=170,
         tags=["ppo", "trl", "clip_fraction", "kl_blow_up"],
         reasoning="From ~160 policy/clipfrac_avg grows 0.04 -> 0.45 and val/ratio drifts to ~2; from ~200 KL "
                   "explodes (8 -> 70+) and the RLHF reward falls while EOS counts drop. Updates are too large; go "
                   "back to <=160."),
    dict(name="f-trl-kl-drift-reward-flat", shape=kl_drift_reward_flat, seed=216,
         write=(write_trl_console, dict(logging_steps=10, save_steps=100, eval_steps=100)),
         accept=["stop", "rollback"], preferred="stop", rollback_window=[200, 300], onset_step=300,
         tags=["grpo", "trl", "kl_drift", "plateau"],
         reasoning="Reward flat at ~0.62 since ~220 while KL keeps rising 0.05 -> ~0.7 and eval slips a little: the "
                   "model drifts with nothing to show. Stop; taking the ~200-300 checkpoint is equally good."),
    dict(name="f-trl-dpo-no-learning", shape=dpo_no_learning, seed=217,
         write=(write_trl_state, dict(logging_steps=10, save_steps=100)),
         accept=["stop"], preferred="stop", onset_step=1, tags=["dpo", "trl", "setup_failure", "no_learning"],
         reasoning="300 steps: loss 0.6931 throughout, accuracy ~0.5, margins ~1e-4, grad norm ~0.002. The policy "
                   "is not moving (e.g. adapter not attached / LR effectively 0). Stop and fix the setup."),
    dict(name="f-trl-dpo-rewards-converging", shape=dpo_converging, seed=218,
         write=(write_wandb_csv, dict(logging_steps=5, save_steps=50)),
         accept=["rollback", "stop"], preferred="rollback", rollback_window=[150, 260], onset_step=280,
         tags=["dpo", "wandb", "csv", "forgetting"],
         reasoning="Margins reach ~2 by ~250, then chosen and rejected rewards converge again (margin ~0.3), train "
                   "accuracy 0.85 -> ~0.6 and eval accuracy/loss worsen. The model loses its preference; go back to "
                   "~200-250."),
    dict(name="f-openrlhf-grad-explosion", shape=grad_explosion_openrlhf, seed=219,
         write=(write_tb, dict(style="openrlhf", logging_steps=1, save_steps=None)),
         accept=["rollback", "stop"], preferred="rollback", rollback_window=[100, 190], onset_step=195,
         tags=["reinforce++", "openrlhf", "tensorboard", "grad_explosion", "collapse"],
         reasoning="Actor grad norm climbs ~150x over 190-230 and the clip ratio to ~0.35, then reward falls "
                   "0.75 -> ~0.15, KL and entropy jump. No checkpoints: roll back to a step 100-190 model if one was "
                   "kept, otherwise stop."),
    dict(name="f-wandb-csv-peak-decline-no-ckpt", shape=peak_then_decline, seed=221,
         write=(write_wandb_csv, dict(logging_steps=5)),
         accept=["rollback", "stop"], preferred="rollback", rollback_window=[200, 350], onset_step=360,
         tags=["grpo", "wandb", "csv", "peak_then_decline"],
         reasoning="W&B history export logged every 5 steps (train/global_step 5..600; _step is W&B's row counter "
                   "and also counts the eval rows). Reward peaks ~0.75 around 250-340 and slides to ~0.45 by 600, "
                   "eval 0.7 -> 0.45. No checkpoints here: a rollback names a training step in 200-350."),
    dict(name="f-rasbt-csv-peak-no-ckpt", shape=peak_decline_no_ckpt, seed=220,
         write=(write_rasbt_csv, {}),
         accept=["rollback", "stop"], preferred="rollback", rollback_window=[50, 140], onset_step=150,
         tags=["grpo", "plain", "csv", "eval_decline", "entropy_blow_up"],
         reasoning="MATH-500 15.6 -> 46.2 at step 100 then 39.8, 26.2, 21.0, 19.0; reward falls after ~150 as "
                   "entropy climbs to ~3.5 and lengths grow. Step 50-140 models were best."),
]


# ----------------------------------------------------------------------------------------------------------------
# Main
# ----------------------------------------------------------------------------------------------------------------

def main():
    if RUNS.exists():
        for p in RUNS.iterdir():
            if p.is_dir():
                shutil.rmtree(p)
    RUNS.mkdir(parents=True, exist_ok=True)
    (RUNS / ".gitignore").write_text("# generated by ../make_holdout.py; not committed\n*\n!.gitignore\n")
    cases = []
    names = set()
    for c in CASES:
        assert c["name"] not in names, c["name"]
        names.add(c["name"])
        rng = np.random.default_rng(c["seed"])
        run = c["shape"](rng)
        writer, opts = c["write"]
        writer(run, RUNS / c["name"], **opts)
        case = {"name": "holdout-" + c["name"], "path": f"runs/{c['name']}", "accept": c["accept"]}
        for k in ("preferred", "rollback_window", "onset_step"):
            if c.get(k) is not None:
                case[k] = c[k]
        if c.get("healthy"):
            case["healthy"] = True
        case["tags"] = ["holdout"] + c["tags"]
        case["reasoning"] = c["reasoning"]
        cases.append(case)
    header = ("# Independent hold-out set, generated by make_holdout.py (do not edit by hand: edit the CASES table\n"
              "# there and re-run it). Labels are ground truth from how each run was constructed.\n")
    (HERE / "holdout.yaml").write_text(header + yaml.safe_dump({"cases": cases}, sort_keys=False, width=110,
                                                               allow_unicode=True), encoding="utf-8")
    # validate against the case schema when the package is importable
    try:
        from assessor.evals.cases import load_cases
        print(f"validated {len(load_cases(HERE / 'holdout.yaml'))} cases")
    except ImportError:
        print(f"wrote {len(cases)} cases (assessor not importable; schema not checked)")


if __name__ == "__main__":
    main()
