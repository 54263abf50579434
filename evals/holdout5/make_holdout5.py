#!/usr/bin/env python
"""Holdout set 5: 30 hand-built RL post-training runs in the frameworks' and trackers' own on-disk layouts, with labels.

    .venv/bin/python evals/holdout5/make_holdout5.py      # writes runs/ (gitignored) and holdout5.yaml

Written apart from the assessor (nothing here imports it), its judges and holdouts 1-4. Its own curve language
(cosine-eased knots), its own noise model (per step a batch-mix shift on the logit scale that follows an AR(1), then
per-prompt logit offsets and G Bernoulli samples per prompt, so reward, reward spread and zero-std groups come from
the same simulated groups; trainers that log every k steps average those per-step values as TRL does, or print the
current step as OpenRLHF does) and its own writers. Deterministic: one fixed seed per case, fixed wall clocks, fixed
run ids.

Shapes new here: very short runs (60-80 logged points) and very long ones (5k-9k steps), logging every step / 5 / 10 /
25, runs logging only reward and loss, an eval only at the start and the end, a handful of evals, multi-task rewards
(one reward function per task, NaN-aware per-task means), an LLM-judge score that rises while responses balloon and a
held-out exact-match task falls, a slow KL drift that breaks the reward late, entropy collapse with a flat eval (stop)
versus with a falling eval (rollback), a one-step NaN loss in a noisy healthy run versus a gradient explosion that never
recovers, an LR-warmup dip, finished runs whose best point is the last one, a resume with a new data seed (a level shift
that is fine), DPO overfitting inside its second epoch, KTO, TRL PPO whose KL-shaped objective peaks while the RM score
keeps rising, Dr.GRPO (loss_type="dr_grpo") in a W&B offline run written with the real SDK, and tracker exports: a
`run.history()` CSV (`_step`), W&B panel CSVs (`<run> - <key>`, `__MIN`, `__MAX`), TensorBoard-UI CSVs
(`Wall time,Step,Value`) and an MLflow file store. Labels follow DESIGN.md's decision contract (see ../holdout_kit.py).
"""

from __future__ import annotations

import contextlib
import csv
import datetime as dt
import io
import json
import math
import os
import shutil
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
import holdout_kit as kit  # noqa: E402
from holdout_kit import HEALTHY, converged, rollback, stop, stop_or_rollback  # noqa: E402

# =========================================================================================== curves and noise


def eased(*pts):
    """Curve through (step, value) knots with cosine easing between knots (flat beyond the ends)."""
    xs = np.array([p[0] for p in pts], float)
    ys = np.array([p[1] for p in pts], float)

    def f(s):
        s = np.asarray(s, float)
        i = np.clip(np.searchsorted(xs, s, side="right") - 1, 0, len(xs) - 2)
        x0, x1, y0, y1 = xs[i], xs[i + 1], ys[i], ys[i + 1]
        t = np.clip((s - x0) / np.maximum(x1 - x0, 1e-9), 0, 1)
        w = 0.5 - 0.5 * np.cos(math.pi * t)
        return np.where(s <= xs[0], ys[0], np.where(s >= xs[-1], ys[-1], y0 + (y1 - y0) * w))
    return f


def flat(v):
    return lambda s: np.full(np.shape(np.asarray(s, float)), float(v))


def sat(a, b, tau):
    """a -> b with an exponential approach of time constant tau."""
    return lambda s: b + (a - b) * np.exp(-np.asarray(s, float) / tau)


def cosine_lr(peak, warm, total, floor=0.0):
    def f(s):
        s = np.asarray(s, float)
        prog = np.clip((s - warm) / max(total - warm, 1), 0, 1)
        return peak * np.where(s < warm, s / max(warm, 1), floor + (1 - floor) * 0.5 * (1 + np.cos(math.pi * prog)))
    return f


def linear_lr(peak, warm, total):
    def f(s):
        s = np.asarray(s, float)
        return peak * np.where(s < warm, s / max(warm, 1), np.clip((total - s) / max(total - warm, 1), 0, 1))
    return f


def ar1(rng, n, phi, sd):
    x = np.empty(n)
    x[0] = rng.normal(0, sd)
    e = rng.normal(0, sd * math.sqrt(1 - phi * phi), n)
    for i in range(1, n):
        x[i] = phi * x[i - 1] + e[i]
    return x


def logit(p):
    p = np.clip(p, 1e-4, 1 - 1e-4)
    return np.log(p / (1 - p))


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def groups(rng, p, prompts, G, tau=1.0, mix=(0.85, 0.12)):
    """Per step: the batch's prompt mix shifts the logit (AR(1)), each prompt gets its own offset, G samples each.
    Returns reward mean, batch reward std, fraction of zero-std groups, mean within-group std."""
    T = len(p)
    centre = logit(p) + ar1(rng, T, *mix)
    q = sigmoid(centre[:, None] + rng.normal(0, tau, (T, prompts)))
    k = rng.binomial(G, q)
    n = prompts * G
    r = k.sum(1) / n
    return (r, np.sqrt(np.maximum(r * (1 - r), 0) * n / (n - 1)), ((k == 0) | (k == G)).mean(1),
            np.sqrt((k / G) * (1 - k / G)).mean(1))


def jitter(rng, curve, s, sd):
    return curve(s) * np.exp(rng.normal(0, sd, len(s)))


def evals(rng, curve, steps, n):
    return {int(st): float(rng.binomial(n, float(np.clip(curve(st), 0, 1))) / n) for st in steps}


def f32(v):
    """A value as a torch float32 .item() prints it."""
    return float(np.float32(v))


def window(arr, st, k):
    """TRL: the mean of the per-step values since the previous log (steps st-k+1 .. st)."""
    lo = max(st - k, 0)
    seg = np.asarray(arr[lo:st], float)
    seg = seg[np.isfinite(seg)]
    return float(seg.mean()) if len(seg) else float("nan")


# ============================================================================================ simulated GRPO run

class Sim:
    """Per-step arrays (index i = step i+1) of one policy-gradient run with verifiable rewards."""

    def __init__(self, rng, T, p, *, prompts=32, G=8, tau=1.0, mix=(0.85, 0.12), length=None, cap=1024,
                 ent=None, kl=None, lr=None, gn=0.15, gn_sd=0.3, secs=40.0):
        length, ent, lr = length or flat(400), ent or flat(0.4), lr or flat(1e-6)
        s = np.arange(1, T + 1, dtype=float)
        self.T, self.s, self.rng, self.cap = T, s, rng, cap
        self.prompts, self.G = prompts, G
        self.p = p(s)
        self.reward, self.reward_std, self.zero_std, self.group_std = groups(rng, self.p, prompts, G, tau, mix)
        L = np.clip(jitter(rng, length, s, 0.04), 8, cap)
        self.length = L
        self.clipped = np.clip((L / cap) ** 4 * 0.9 + np.abs(rng.normal(0, 0.003, T)), 0, 1)
        self.length_max = np.minimum(cap, L * rng.uniform(2.0, 3.0, T))
        self.length_min = L * rng.uniform(0.12, 0.3, T)
        self.term_mean = L * (1 - 0.6 * self.clipped)
        self.entropy = jitter(rng, ent, s, 0.03)
        self.kl = None if kl is None else np.maximum(jitter(rng, kl, s, 0.1), 1e-7)
        self.lr = lr(s)
        self.grad_norm = rng.lognormal(math.log(gn), gn_sd, T)
        self.loss = rng.normal(0, 0.004, T) + (0 if self.kl is None else 0.0)
        self.step_time = secs * (0.6 + 0.4 * L / max(float(np.mean(L)), 1)) * np.exp(rng.normal(0, 0.05, T))
        self.tokens = np.cumsum(np.round(prompts * G * (L + 160.0)))
        self.comps = {}

    def set(self, name, arr):
        setattr(self, name, np.asarray(arr, float))


# ============================================================================================== TRL formats

def trl_grpo_row(sim, st, k, *, version="0.23", comps=None, kl=False, entropy=True, sampling=False, clip=True,
                 step_time=True):
    """One TRL GRPO log row (insertion order as TRL builds it) for the logging window ending at step st."""
    w = lambda a, st=st: window(a, st, k)  # noqa: E731
    row = {"loss": round(w(sim.loss if not kl else sim.loss + 0.04 * sim.kl), 4), "grad_norm": f32(sim.grad_norm[st - 1]),
           "learning_rate": float(sim.lr[st - 1]), "num_tokens": float(sim.tokens[st - 1])}
    row.update({"completions/mean_length": f32(w(sim.length)), "completions/min_length": f32(w(sim.length_min)),
                "completions/max_length": f32(w(sim.length_max)), "completions/clipped_ratio": f32(w(sim.clipped)),
                "completions/mean_terminated_length": f32(w(sim.term_mean)),
                "completions/min_terminated_length": f32(w(sim.length_min)),
                "completions/max_terminated_length": f32(min(w(sim.length_max), sim.cap - 1))})
    comps = comps if comps is not None else {"accuracy_reward": sim.reward}
    for name, arr in comps.items():
        m = w(arr)
        row[f"rewards/{name}/mean"] = f32(m) if math.isfinite(m) else None
        row[f"rewards/{name}/std"] = f32(math.sqrt(max(m * (1 - m), 0))) if math.isfinite(m) and 0 <= m <= 1 \
            else f32(w(np.abs(sim.reward_std)))
    row["reward"] = f32(w(sim.reward))
    row["reward_std"] = f32(w(sim.reward_std))
    row["frac_reward_zero_std"] = f32(w(sim.zero_std))
    if kl:
        row["kl"] = f32(w(sim.kl))
    if sampling:
        row.update({"sampling/sampling_logp_difference/mean": f32(0.011 + abs(sim.rng.normal(0, 0.001))),
                    "sampling/sampling_logp_difference/max": f32(0.45 + abs(sim.rng.normal(0, 0.08))),
                    "sampling/importance_sampling_ratio/min": f32(0.3 + sim.rng.normal(0, 0.03)),
                    "sampling/importance_sampling_ratio/mean": f32(0.94 + sim.rng.normal(0, 0.01)),
                    "sampling/importance_sampling_ratio/max": f32(1.7 + abs(sim.rng.normal(0, 0.2)))})
    if entropy:
        row["entropy"] = f32(w(sim.entropy))
    if clip:
        lo_, hi_ = 0.0, 0.0  # on-policy (num_iterations=1): the ratio is 1 by construction
        row.update({"clip_ratio/low_mean": lo_, "clip_ratio/low_min": lo_, "clip_ratio/high_mean": hi_,
                    "clip_ratio/high_max": hi_, "clip_ratio/region_mean": lo_ + hi_})
    if step_time:
        row["step_time"] = f32(w(sim.step_time))
    return row


def with_epoch(row, st, steps_per_epoch):
    row = dict(row)
    row["epoch"] = st / steps_per_epoch
    row["step"] = st
    return row


def trl_history(train_rows, eval_rows, final=None):
    """Merge train rows and eval rows (eval after the train row of the same step) into log_history order."""
    hist = []
    evs = dict(eval_rows)
    for st, row in train_rows:
        hist.append(row)
        if st in evs:
            hist.append(evs.pop(st))
    for st in sorted(evs):
        hist.append(evs[st])
    if final:
        hist.append(final)
    return hist


def write_trl_dir(d, hist, *, global_step, max_steps, logging_steps, save_steps, eval_steps, ckpts=(),
                  top_level=True, epochs=1, steps_per_epoch=None, finished=False, adapter=True):
    spe = steps_per_epoch or max_steps
    d.mkdir(parents=True, exist_ok=True)

    def state(upto, done):
        h = [r for r in hist if r["step"] <= upto]
        return kit.trainer_state(h, upto, max_steps, logging_steps, save_steps, eval_steps, upto / spe, epochs,
                                 training_stop=done)
    if top_level:
        kit.dump_json(d / "trainer_state.json", state(global_step, finished))
    for c in ckpts:
        cd = d / f"checkpoint-{c}"
        kit.dump_json(cd / "trainer_state.json", state(c, finished and c == global_step))
        if adapter:
            (cd / "adapter_config.json").write_text(json.dumps(
                {"base_model_name_or_path": "Qwen/Qwen2.5-7B-Instruct", "peft_type": "LORA", "r": 32, "lora_alpha": 64,
                 "target_modules": ["q_proj", "k_proj", "v_proj", "o_proj"], "task_type": "CAUSAL_LM"}, indent=2))
            (cd / "adapter_model.safetensors").write_bytes(b"\0" * 64)
        else:
            (cd / "model.safetensors").write_bytes(b"\0" * 64)
        (cd / "training_args.bin").write_bytes(b"\0" * 16)


def trl_final(st, steps_per_epoch, train_loss, runtime):
    return {"epoch": st / steps_per_epoch, "step": st, "total_flos": 0.0, "train_loss": train_loss,
            "train_runtime": runtime, "train_samples_per_second": round(st * 8 / runtime, 3),
            "train_steps_per_second": round(st / runtime, 3)}


def hms(t):
    t = int(t)
    return f"{t // 3600}:{t // 60 % 60:02d}:{t % 60:02d}" if t >= 3600 else f"{t // 60:02d}:{t % 60:02d}"


def write_trl_console(path, header, rows, eval_rows, total, secs, final=None):
    """A TRL run's stdout: tqdm progress with the Trainer's dict prints (insertion order, not sorted)."""
    out = list(header)
    evs = dict(eval_rows)
    line = ""
    last = 0
    for st, row in rows:
        for j in range(last + 1, st + 1):
            line += f"\r{100 * j // total:3d}%|{'█' * (10 * j // total):<10}| {j}/{total} [{hms(j * secs)}<" \
                    f"{hms((total - j) * secs)}, {secs:.2f}s/it]"
        last = st
        out.append(line)
        out.append(repr({kk: vv for kk, vv in row.items() if kk != "step"}))  # the printed dict has no step
        line = ""
        if st in evs:
            out.append(f"\r  0%|          | 0/32 [00:00<?, ?it/s]\r100%|██████████| 32/32 [01:{st % 50 + 10:02d}<00:00,  "
                       f"2.{st % 9}1s/it]")
            out.append(repr({kk: vv for kk, vv in evs[st].items() if kk != "step"}))
    if final:
        out.append(repr(final))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(out) + "\n", encoding="utf-8")


def hf_tb_events(rows, eval_rows, wall0, secs):
    """HF TensorBoardCallback: rewrite_logs puts train keys under train/ and eval_X under eval/X."""
    events = []
    evs = dict(eval_rows)
    for st, row in rows:
        vals = {"train/" + k: v for k, v in row.items() if k not in ("step", "epoch") and isinstance(v, (int, float))}
        vals["train/epoch"] = row.get("epoch")
        events.append((wall0 + st * secs, st, vals))
        if st in evs:
            events.append((wall0 + st * secs + 45, st, {
                ("eval/" + k[5:] if k.startswith("eval_") else "train/" + k): v
                for k, v in evs[st].items() if k != "step" and isinstance(v, (int, float))}))
    return events


# ============================================================================================== verl formats

def np_repr(v):
    if isinstance(v, np.integer):
        return f"np.int64({int(v)})"
    if isinstance(v, int):
        return str(v)
    v = float(v)
    return "np.float64(nan)" if math.isnan(v) else f"np.float64({v!r})"


def verl_row(sim, i, *, kl_loss=True, clipfrac=None, extra=None):
    """One verl GRPO step (v0.4+ names; no critic)."""
    rng = sim.rng
    L = float(sim.length[i])
    st = float(sim.step_time[i])
    row = {"training/global_step": i + 1, "training/epoch": 0,
           "actor/entropy": float(sim.entropy[i]), "actor/pg_loss": float(sim.loss[i]),
           "actor/pg_clipfrac": float(abs(rng.normal(0.0015, 0.0005)) if clipfrac is None else clipfrac[i]),
           "actor/ppo_kl": float(rng.normal(0, 1e-4)), "actor/pg_clipfrac_lower": 0.0,
           "actor/grad_norm": float(sim.grad_norm[i]), "actor/lr": float(sim.lr[i])}
    if kl_loss:
        row["actor/kl_loss"] = float(sim.kl[i])
        row["actor/kl_coef"] = 0.001
    r = float(sim.reward[i])
    row.update({"critic/score/mean": r, "critic/score/max": 1.0, "critic/score/min": 0.0,
                "critic/rewards/mean": r, "critic/rewards/max": 1.0, "critic/rewards/min": 0.0,
                "critic/advantages/mean": float(rng.normal(0, 2e-3)), "critic/advantages/max": float(2.47 + rng.normal(0, .05)),
                "critic/advantages/min": float(-2.47 + rng.normal(0, .05)), "critic/returns/mean": float(rng.normal(0, 2e-3)),
                "critic/returns/max": float(2.47 + rng.normal(0, .05)), "critic/returns/min": float(-2.47 + rng.normal(0, .05)),
                "response_length/mean": L, "response_length/max": float(sim.length_max[i]),
                "response_length/min": float(sim.length_min[i]), "response_length/clip_ratio": float(sim.clipped[i]),
                "prompt_length/mean": 112.4 + rng.normal(0, 2), "prompt_length/max": 231.0, "prompt_length/min": 61.0,
                "prompt_length/clip_ratio": 0.0})
    gen = st * 0.62
    row.update({"timing_s/gen": gen, "timing_s/reward": 0.9 + rng.random() * 0.3, "timing_s/old_log_prob": st * 0.08,
                "timing_s/ref": st * 0.07, "timing_s/adv": 0.05, "timing_s/update_actor": st * 0.2, "timing_s/step": st,
                "perf/total_num_tokens": int(sim.prompts * sim.G * (L + 112)), "perf/time_per_step": st,
                "perf/throughput": sim.prompts * sim.G * (L + 112) / st / 8, "perf/max_memory_allocated_gb": 61.2 + rng.normal(0, .2),
                "perf/max_memory_reserved_gb": 74.5, "perf/cpu_memory_used_gb": 88.1 + rng.normal(0, .5)})
    if extra:
        row.update(extra)
    return row


def write_verl_console(path, lines_pre, rows, *, pid=41877):
    out = list(lines_pre)
    for st, row in rows:
        out.append(f"\x1b[36m(TaskRunner pid={pid})\x1b[0m step:{st} - " +
                   " - ".join(f"{k}:{np_repr(v)}" for k, v in row.items()))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(out) + "\n", encoding="utf-8")


def write_verl_jsonl(path, rows):
    """verl FileLogger: {"step": N, "data": {...}} per line; orjson writes NaN/inf as null."""
    def clean(v):
        if isinstance(v, (float, np.floating)):
            v = float(v)
            return v if math.isfinite(v) else None
        return int(v) if isinstance(v, np.integer) else v
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as fh:
        for st, row in rows:
            fh.write(json.dumps({"step": st, "data": {k: clean(v) for k, v in row.items()}},
                                separators=(",", ":")) + "\n")


def verl_ckpts(d, root, steps):
    for c in steps:
        cd = d / root / f"global_step_{c}" / "actor"
        cd.mkdir(parents=True, exist_ok=True)
        (cd / "model_world_size_8_rank_0.pt").write_bytes(b"\0" * 32)
    if steps:
        (d / root / "latest_checkpointed_iteration.txt").write_text(str(max(steps)))


# ============================================================================================ OpenRLHF / NeMo-RL

def stamp(t):
    x = dt.datetime.fromtimestamp(t, dt.UTC)
    return x.strftime("%Y-%m-%d %H:%M:%S") + f",{int((t % 1) * 1000):03d}"


def openrlhf_status(sim, i):
    rng = sim.rng
    L = float(sim.length[i])
    kl = float(sim.kl[i]) if sim.kl is not None else 0.0
    st = float(sim.step_time[i])
    d = {"policy_loss": float(sim.loss[i]), "actor_lr": float(sim.lr[i]), "ppo_clip_ratio": abs(rng.normal(0.002, 8e-4)),
         "ppo_kl": float(rng.normal(0, 1e-4)), "vllm_kl": abs(rng.normal(8e-4, 2e-4)), "actor_grad_norm": float(sim.grad_norm[i]),
         "kl": kl, "logprobs_diff": -0.92 * kl, "reward": float(sim.reward[i]), "return": float(sim.reward[i]) - 0.001 * kl,
         "response_length": L, "total_length": L + 128.3, "truncated": float(sim.clipped[i]),
         "rollout/reward_mean": float(sim.reward[i]), "rollout/reward_std": float(sim.reward_std[i]),
         "rollout/response_length_mean": L, "rollout/truncated_rate": float(sim.clipped[i]),
         "rollout/num_samples": int(sim.prompts * sim.G), "timing/generation": 0.64 * st,
         "timing/make_experience": 0.14 * st, "timing/ppo_train": 0.2 * st, "timing/broadcast": 0.02 * st}
    d["timing/step_total"] = d["timing/generation"] + d["timing/make_experience"] + d["timing/ppo_train"] + d["timing/broadcast"]
    return {k: (float(f"{v:.6g}") if isinstance(v, float) else v) for k, v in d.items()}


# =================================================================================================== trackers

def wandb_offline(d, project, name, rid, config, calls, step_metric=None):
    """A W&B offline run written with the real SDK (as `WANDB_MODE=offline python train.py` leaves it)."""
    try:
        import wandb
    except Exception as err:
        raise kit.Skip(f"needs the wandb package ({err})") from err
    d.mkdir(parents=True, exist_ok=True)
    os.environ["WANDB_MODE"], os.environ["WANDB_SILENT"] = "offline", "true"
    try:
        run = wandb.init(project=project, name=name, id=rid, dir=str(d), config=config,
                         settings=wandb.Settings(x_disable_stats=True, silent=True, console="off"))
        if step_metric:
            run.define_metric(step_metric)
            run.define_metric("*", step_metric=step_metric, step_sync=True)
        for data in calls:
            run.log({k: v for k, v in data.items() if v is not None})
        run.finish()
    except Exception as err:
        raise kit.Skip(f"wandb failed: {err}") from err
    with contextlib.suppress(Exception):
        wandb.teardown()
    wdir = d / "wandb"
    found = sorted(wdir.glob("offline-run-*"))
    if found:
        fixed = wdir / f"offline-run-20260302_141205-{rid}"
        if found[-1] != fixed:
            shutil.rmtree(fixed, ignore_errors=True)
            found[-1].rename(fixed)
        for extra in found[:-1]:
            shutil.rmtree(extra, ignore_errors=True)
        for link, target in (("latest-run", fixed.name), ("debug.log", f"{fixed.name}/logs/debug.log"),
                             ("debug-internal.log", f"{fixed.name}/logs/debug-internal.log")):
            p = wdir / link
            if p.is_symlink() or p.exists():
                p.unlink()
            p.symlink_to(target)
        f, size = fixed / f"run-{rid}.wandb", -1
        for _ in range(40):  # wait until wandb-core has flushed
            if not f.exists() or size == f.stat().st_size:
                break
            size = f.stat().st_size
            time.sleep(0.25)


def write_mlflow_file_store(root, exp_id, exp_name, run_id, run_name, start_ms, metrics, params, status="RUNNING",
                            end_ms=None):
    """MLflow's file store (./mlruns) exactly as MlflowClient writes it: metrics/<key> (a '/' nests folders), one
    '<timestamp_ms> <value> <step>' line per point; params/<key>; tags/mlflow.runName; meta.yaml per experiment/run."""
    uri = f"file://{root.resolve()}"
    root.mkdir(parents=True, exist_ok=True)
    (root / ".trash").mkdir(exist_ok=True)
    for eid, ename in (("0", "Default"), (exp_id, exp_name)):
        (root / eid).mkdir(exist_ok=True)
        (root / eid / "meta.yaml").write_text(
            f"artifact_location: {uri}/{eid}\ncreation_time: {start_ms - 60000}\neffective_trace_archival_retention: null\n"
            f"experiment_id: '{eid}'\nlast_update_time: {start_ms - 60000}\nlifecycle_stage: active\nname: {ename}\n"
            f"trace_location: null\nworkspace: default\n")
    rd = root / exp_id / run_id
    for sub in ("metrics", "params", "tags", "artifacts"):
        (rd / sub).mkdir(parents=True, exist_ok=True)
    code = {"RUNNING": 1, "SCHEDULED": 2, "FINISHED": 3, "FAILED": 4, "KILLED": 5}[status]
    (rd / "meta.yaml").write_text(
        f"artifact_uri: {uri}/{exp_id}/{run_id}/artifacts\nend_time: {'null' if end_ms is None else end_ms}\n"
        f"entry_point_name: ''\nexperiment_id: '{exp_id}'\nlifecycle_stage: active\nrun_id: {run_id}\nrun_name: {run_name}\n"
        f"run_uuid: {run_id}\nsource_name: ''\nsource_type: 4\nsource_version: ''\nstart_time: {start_ms}\nstatus: {code}\n"
        f"tags: []\nuser_id: root\n")
    (rd / "tags" / "mlflow.runName").write_text(run_name)
    (rd / "tags" / "mlflow.user").write_text("root")
    for k, v in params.items():
        (rd / "params" / k).write_text(str(v))
    by_key = {}
    for key, value, ts, step in metrics:
        by_key.setdefault(key, []).append(f"{ts} {value!r} {step}" if math.isfinite(value) else f"{ts} nan {step}")
    for key, lines in by_key.items():
        p = rd / "metrics" / key
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("\n".join(lines) + "\n")


def write_csv(path, header, rows, crlf=False):
    path.parent.mkdir(parents=True, exist_ok=True)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\r\n" if crlf else "\n")
    w.writerow(header)
    for r in rows:
        w.writerow(["" if v is None else v for v in r])
    path.write_text(buf.getvalue(), encoding="utf-8")


def g(v, nd=6):
    """Compact float text as pandas/csv writers print it."""
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "" if v is None else repr(float(v))
    return repr(float(v)) if nd is None else f"{float(v):.{nd}g}"


# ================================================================================================ the cases
# Each case: fn(rng, folder) writes the run. Comments give the designed shape; the labels were checked against the
# generated numbers (see the reasoning text of each case).

CASES = []


def case(name, seed, labels, tags, why):
    def deco(fn):
        CASES.append(dict(name=name, fn=fn, seed=seed, labels=labels, tags=tags, why=why))
        return fn
    return deco


GRPO_CONSOLE_HEAD = [
    "=== grpo_gsm8k_lora  GPU=0,1  START=Mon Mar  2 09:14:02 UTC 2026 ===",
    "2026-03-02 09:14:09,101 [INFO] train_grpo: model=Qwen/Qwen2.5-3B-Instruct dataset=openai/gsm8k (7473 prompts)",
    "2026-03-02 09:14:09,102 [INFO] train_grpo: GRPOConfig(learning_rate=1e-06, beta=0.0, num_generations=8, "
    "per_device_train_batch_size=16, gradient_accumulation_steps=4, max_completion_length=768, logging_steps=5, "
    "max_steps=600, save_steps=100, use_vllm=True, vllm_mode='colocate')",
    "INFO 03-02 09:15:31 [llm.py:298] Supported_tasks: ['generate']",
]


# ----------------------------------------------------------------------------------------- continue (healthy)

@case("h5-ok-trl-console-short-60pts", 5001, HEALTHY,
      "trl grpo trl_console short_run logging_every_5 early no_eval no_kl",
      "TRL GRPO console log (dict lines after tqdm, TRL 0.23-style keys with sampling/* and step_time, beta 0 so no "
      "kl), logging every 5 steps: 60 rows, step 300 of max_steps 600. rewards/accuracy_reward/mean climbs "
      "~0.46 -> ~0.63 with the slope easing but still positive over the last 100 steps (~+0.04); reward_std stays "
      "~0.48, frac_reward_zero_std ~0.15-0.22 (signal intact), entropy eases 0.34 -> ~0.28, lengths steady ~300 with "
      "almost no truncation, grad_norm steady. Short, early, learning: continue.")
def _c1(rng, d):
    T, P, k = 300, 600, 5
    sim = Sim(rng, T, eased((0, .42), (120, .57), (300, .67)), prompts=16, G=8, tau=1.4, length=eased((0, 330), (300, 295)),
              cap=768, ent=eased((0, .34), (300, .28)), lr=flat(1e-6), gn=0.09, secs=21.0)
    rows = [(st, with_epoch(trl_grpo_row(sim, st, k, sampling=True), st, 7473 // 8)) for st in range(k, T + 1, k)]
    write_trl_console(d / "grpo_gsm8k_lora.log", GRPO_CONSOLE_HEAD, rows, [], P, 21.0)


@case("h5-ok-lr-warmup-dip-trl-ckpts", 5002, HEALTHY,
      "trl grpo trainer_state checkpoints_only lr_warmup warmup_dip lookalike_decline",
      "TRL GRPO, only checkpoint-50..350/trainer_state.json on disk (the script never calls save_state), logging "
      "every 5, warmup_ratio 0.1 of 1000 steps to a 3e-6 peak. While the LR ramps the reward dips from ~0.49 to "
      "~0.39 around steps 50-125 (lengths and entropy wobble, grad_norm larger), then recovers by ~130-150 and climbs to "
      "~0.61 by 350, well above the start; eval every 50 (500 problems): 0.47 (50), 0.45 (100), 0.50, 0.53, 0.56, "
      "0.58, 0.60 (350). The dip is the warmup transient and is over; the run is improving at 350/1000: continue.")
def _c2(rng, d):
    T, P, k = 350, 1000, 5
    p = eased((0, .50), (30, .49), (60, .36), (100, .37), (140, .49), (250, .58), (350, .64))
    sim = Sim(rng, T, p, prompts=32, G=8, tau=0.9, length=eased((0, 420), (60, 360), (120, 430), (350, 470)), cap=1024,
              ent=eased((0, .41), (70, .47), (130, .40), (350, .36)), kl=None, lr=linear_lr(3e-6, 100, 1000), gn=0.12)
    sim.grad_norm *= eased((0, 1), (50, 2.2), (100, 1.1), (140, 1))(sim.s)
    rows = [(st, with_epoch(trl_grpo_row(sim, st, k, step_time=True), st, 1868)) for st in range(k, T + 1, k)]
    ev = {50: .47, 100: .452, 150: .498, 200: .528, 250: .556, 300: .578, 350: .598}
    eval_rows = [(st, {"eval_loss": 0.0, "eval_reward": v, "eval_reward_std": f32(math.sqrt(v * (1 - v))),
                       "eval_rewards/accuracy_reward/mean": v, "eval_rewards/accuracy_reward/std": f32(math.sqrt(v * (1 - v))),
                       "eval_runtime": 188.4 + st / 50, "eval_samples_per_second": 2.65, "eval_steps_per_second": 0.17,
                       "epoch": st / 1868, "step": st}) for st, v in ev.items()]
    hist = trl_history(rows, eval_rows)
    write_trl_dir(d, hist, global_step=T, max_steps=P, logging_steps=k, save_steps=50, eval_steps=50,
                  ckpts=range(50, T + 1, 50), top_level=False)


@case("h5-ok-noisy-every-step-one-nan-trl-state", 5080, HEALTHY,
      "trl grpo trainer_state logging_every_step heavy_noise nan_one_step grad_spike transient kl",
      "TRL GRPO (beta 0.04, so kl is logged) with logging_steps=1 and a tiny batch (4 prompts x 8): reward jumps "
      "0.05-0.75 from step to step around a trend that rises ~0.32 -> ~0.51 over 700 of 1500 steps (88-step means 0.32, 0.38, 0.41, 0.44, 0.44, 0.49, 0.53, 0.51). At step 412 "
      "loss and grad_norm are NaN (one bad micro-batch, the step was skipped) and at 413 grad_norm reads ~30; "
      "from 414 everything is back in its usual band and the reward trend, KL (~0.01 -> 0.03, smooth) and entropy "
      "are unaffected. Eval every 100 (200 problems): 0.29, 0.33, 0.36, 0.40, 0.41, 0.45, 0.47 at 700. A one-step "
      "blip in a noisy but improving run: continue.")
def _c3(rng, d):
    T, P = 700, 1500
    sim = Sim(rng, T, eased((0, .30), (350, .42), (700, .51)), prompts=4, G=8, tau=1.2, mix=(0.5, 0.25),
              length=eased((0, 260), (700, 330)), cap=1024, ent=eased((0, .52), (700, .45)),
              kl=eased((0, .002), (100, .01), (700, .03)), lr=flat(1e-6), gn=0.35, gn_sd=0.45, secs=9.0)
    sim.loss = 0.04 * sim.kl + rng.normal(0, 0.02, T)
    sim.loss[411] = float("nan")
    sim.grad_norm[411] = float("nan")
    sim.grad_norm[412] = 30.7
    rows = []
    for st in range(1, T + 1):
        r = trl_grpo_row(sim, st, 1, kl=True, clip=True, step_time=False)
        if st == 412:
            r["loss"] = float("nan")
        rows.append((st, with_epoch(r, st, 1868)))
    evs = evals(rng, eased((0, .28), (700, .47)), range(100, T + 1, 100), 200)
    evs.update({100: .29, 200: .33, 300: .36, 400: .395, 500: .41, 600: .45, 700: .47})
    eval_rows = [(st, {"eval_loss": 0.0012, "eval_reward": v, "eval_rewards/accuracy_reward/mean": v,
                       "eval_rewards/accuracy_reward/std": f32(math.sqrt(v * (1 - v))), "eval_kl": f32(sim.kl[st - 1]),
                       "eval_runtime": 95.2, "eval_samples_per_second": 2.1, "eval_steps_per_second": 0.26,
                       "epoch": st / 1868, "step": st}) for st, v in sorted(evs.items())]
    hist = trl_history(rows, eval_rows)
    write_trl_dir(d, hist, global_step=T, max_steps=P, logging_steps=1, save_steps=250, eval_steps=100,
                  ckpts=(250, 500), top_level=True)


@case("h5-ok-verl-tb-resume-new-seed", 5004, HEALTHY,
      "verl grpo tensorboard resume duplicate_steps level_shift data_seed lookalike_break checkpoints",
      "verl GRPO TensorBoard, two event files. The first launch logged steps 1-437 and died; the relaunch resumed "
      "from global_step_400 with data.seed changed (the dataloader state was not restored, so the new epoch reshuffles "
      "and the first ~hundred batches repeat prompts the policy already trained on), re-validated at step 400 "
      "(val_before_train) and re-logged 401-820. critic/score/mean steps up by ~0.05 at the resume (~0.62 -> ~0.67) and then keeps "
      "its slow climb to ~0.72; the validation (every 50, 1319 problems) is continuous through it: 0.63 (300), 0.64 (350), 0.645 "
      "and 0.649 (400, both launches), 0.655, 0.667, 0.688, 0.708, ..., 0.713 (800). KL, entropy, lengths and grad norm are continuous. A data-order "
      "artefact, not a break: continue (820/1400).")
def _c4(rng, d):
    T = 820
    base = eased((0, .48), (200, .60), (400, .655), (820, .71))
    sim = Sim(rng, T, base, prompts=64, G=8, tau=1.0, length=eased((0, 240), (820, 290)), cap=1024,
              ent=eased((0, .42), (820, .30)), kl=eased((0, 0), (820, .022)), lr=flat(1e-6), gn=0.11, secs=52.0)
    # steps 401+ of the relaunch: the replayed prompts are easier (level shift that fades slowly)
    shift = eased((400, 0), (401, .055), (600, .05), (820, .035))
    p2 = np.clip(sim.p + np.where(sim.s > 400, shift(sim.s), 0), 0, 1)
    r2, rs2, _, _ = groups(rng, p2, 64, 8, 1.0)
    val = eased((0, .5), (200, .60), (400, .66), (820, .712))
    host, w0 = "gpu-a800-02", 1772100000.0
    ev1, ev2 = [], []
    v0 = {"val-core/openai/gsm8k/reward/mean@1": .503}
    ev1.append((w0, 0, v0))
    for i in range(437):
        st = i + 1
        row = verl_row(sim, i)
        if st % 50 == 0:
            row["val-core/openai/gsm8k/reward/mean@1"] = float(rng.binomial(1319, val(st)) / 1319)
        ev1.append((w0 + 60 + st * 52.0, st, row))
    kit.tb_file(d / "tensorboard_log" / "verl_grpo_gsm8k" / "qwen2.5-3b_grpo" /
                f"events.out.tfevents.{int(w0)}.{host}.20211.0", ev1)
    w1 = w0 + 60 + 437 * 52 + 3600
    ev2.append((w1, 400, {"val-core/openai/gsm8k/reward/mean@1": 0.6490}))  # same weights as the first launch's 400
    sim.reward[400:], sim.reward_std[400:] = r2[400:], rs2[400:]
    for i in range(400, T):
        st = i + 1
        row = verl_row(sim, i)
        if st % 50 == 0:
            row["val-core/openai/gsm8k/reward/mean@1"] = float(rng.binomial(1319, val(st)) / 1319)
        ev2.append((w1 + 60 + (st - 400) * 52.0, st, row))
    kit.tb_file(d / "tensorboard_log" / "verl_grpo_gsm8k" / "qwen2.5-3b_grpo" /
                f"events.out.tfevents.{int(w1)}.{host}.38544.0", ev2)
    verl_ckpts(d, "checkpoints/verl_grpo_gsm8k/qwen2.5-3b_grpo", [500, 600, 700, 800])
    (d / "run_grpo.sh").write_text(
        "# relaunch 2026-02-27: resume from global_step_400, new data seed\n"
        "python3 -m verl.trainer.main_ppo algorithm.adv_estimator=grpo data.train_files=$HOME/data/gsm8k/train.parquet \\\n"
        "  data.seed=7 trainer.resume_mode=auto trainer.save_freq=100 trainer.test_freq=50 trainer.total_training_steps=1400 \\\n"
        "  trainer.logger=['console','tensorboard'] actor_rollout_ref.actor.use_kl_loss=True actor_rollout_ref.actor.kl_loss_coef=0.001\n")


TASKS = ("math_verify", "code_unit_tests", "ifeval_strict")


def multitask(rng, T, curves, shares=(0.5, 0.25, 0.25), n=512):
    """Per-task means of a mixed batch: each reward function returns None for the other tasks' samples."""
    s = np.arange(1, T + 1, dtype=float)
    out = {}
    for name, c, sh in zip(TASKS, curves, shares, strict=True):
        m = np.maximum(rng.binomial(n, sh, T), 1)
        out[name] = rng.binomial(m, np.clip(c(s) + ar1(rng, T, 0.8, 0.02), 0, 1)) / m
        out[name + "_n"] = m
    tot = sum(out[t] * out[t + "_n"] for t in TASKS) / sum(out[t + "_n"] for t in TASKS)
    return out, tot


@case("h5-ok-multitask-components-trl-tb", 5005, HEALTHY,
      "trl grpo tensorboard multi_task reward_components plateau_component lookalike_plateau",
      "TRL GRPO TensorBoard (train/*, eval/*) on a three-task mix, one reward function per task "
      "(rewards/math_verify, rewards/code_unit_tests, rewards/ifeval_strict; each returns None off its task, so each "
      "mean is over its own samples). ifeval_strict saturates early (~0.62 -> ~0.80 by step 400, flat since), "
      "code_unit_tests climbs slowly (~0.22 -> ~0.31), math_verify climbs steadily (~0.44 -> ~0.63); the total "
      "reward rises ~0.44 -> ~0.60. Eval every 200: eval/reward 0.47, 0.51, 0.53, 0.55, 0.58, 0.59, 0.60 (1400), "
      "every task at or above its previous eval. One flat component is a solved task, not a stalled run: continue "
      "(1400/3000).")
def _c5(rng, d):
    T, k = 1400, 10  # of 3000
    curves = (eased((0, .44), (700, .56), (1400, .63)), eased((0, .22), (1400, .31)), eased((0, .62), (400, .80), (1400, .805)))
    comps, tot = multitask(rng, T, curves)
    sim = Sim(rng, T, flat(.5), prompts=64, G=8, length=eased((0, 520), (1400, 610)), cap=2048,
              ent=eased((0, .47), (1400, .38)), lr=cosine_lr(1e-6, 50, 3000), gn=0.1, secs=70)
    sim.reward = tot
    sim.reward_std = np.sqrt(tot * (1 - tot)) * 1.02
    sim.zero_std = np.clip(0.25 + 0.3 * (tot - .4) + rng.normal(0, .03, T), 0, 1)
    rows = []
    for st in range(k, T + 1, k):
        rows.append((st, with_epoch(trl_grpo_row(sim, st, k, comps={t: comps[t] for t in TASKS}), st, 4000)))
    ev_curves = (eased((0, .46), (1400, .64)), eased((0, .23), (1400, .30)), eased((0, .63), (400, .79), (1400, .80)))
    eval_rows = []
    for st in range(200, T + 1, 200):
        vals = [float(np.clip(c(st) + rng.normal(0, .008), 0, 1)) for c in ev_curves]
        tot_e = 0.5 * vals[0] + 0.25 * vals[1] + 0.25 * vals[2]
        e = {"eval_loss": 0.0, "eval_reward": tot_e, "eval_reward_std": 0.47}
        for t, v in zip(TASKS, vals, strict=True):
            e[f"eval_rewards/{t}/mean"] = v
            e[f"eval_rewards/{t}/std"] = math.sqrt(v * (1 - v))
        e.update({"eval_runtime": 612.0, "eval_samples_per_second": 1.67, "eval_steps_per_second": 0.1})
        eval_rows.append((st, e))
    kit.tb_file(d / "runs" / "Feb11_08-12-40_node-h100-14" / "events.out.tfevents.1770797560.node-h100-14.88213.0",
                hf_tb_events(rows, eval_rows, 1770797560.0, 70.0))


@case("h5-ok-reward-loss-only-csv", 5006, HEALTHY,
      "plain_script csv minimal_metrics reward_loss_only no_kl no_eval heavy_noise reward_model",
      "A hand-written RLHF loop's CSV with only three columns (step,reward,loss), one row per step, 1200 rows. The "
      "reward is a reward-model score (unbounded, batch of 16) that jumps +-0.4 between steps around a steady "
      "climb: the 100-step means go ~-0.17, -0.10, 0.04, 0.14, 0.30, ... 0.64, 0.61, 0.69, 0.72 at 1100-1200, still "
      "rising over the last 300 steps (~+0.1). The loss is a noisy policy-gradient loss around 0 and says nothing. Nothing else is logged (no KL, "
      "no eval, no length), and nothing in what is there looks wrong: continue.")
def _c6(rng, d):
    T = 1200
    s = np.arange(1, T + 1, dtype=float)
    trend = -0.32 + 1.15 * (1 - np.exp(-s / 900)) / (1 - math.exp(-1200 / 900)) * 0.95
    rew = trend + ar1(rng, T, 0.3, 0.32)
    loss = rng.normal(0, 0.05, T) - 0.01 * ar1(rng, T, 0.9, 1.0)
    write_csv(d / "logs" / "rlhf_metrics.csv", ["step", "reward", "loss"],
              [(int(st), f"{r:.4f}", f"{lv:.5f}") for st, r, lv in zip(s, rew, loss, strict=True)])


@case("h5-ok-drgrpo-wandb-offline", 5007, HEALTHY,
      "trl grpo dr_grpo loss_type wandb_sdk wandb_offline no_kl length_stable",
      "TRL GRPO with loss_type='dr_grpo' and scale_rewards='none' (Dr. GRPO: no per-sequence length normalisation, "
      "no std scaling), beta 0, W&B offline run folder (run-<id>.wandb written by the SDK; train/* keys against "
      "train/global_step; config.yaml absent as is usual offline). Logging every 10, 500 of 1200 steps: train/reward "
      "~0.31 -> ~0.52, still rising; train/completions/mean_length stays ~470-520 (the length drift plain GRPO "
      "shows is absent, as expected for Dr. GRPO), entropy 0.45 -> ~0.40, no truncation growth. eval/reward every "
      "100: 0.33, 0.39, 0.43, 0.46, 0.49. Healthy and improving: continue.")
def _c7(rng, d):
    T, k = 500, 10  # of 1200
    sim = Sim(rng, T, eased((0, .31), (250, .44), (500, .53)), prompts=32, G=8, tau=1.1,
              length=eased((0, 480), (250, 505), (500, 495)), cap=1536, ent=eased((0, .45), (500, .40)),
              lr=cosine_lr(1e-6, 20, 1200), gn=0.2, secs=48)
    calls = []
    ev = {100: .33, 200: .386, 300: .43, 400: .462, 500: .488}
    for st in range(k, T + 1, k):
        row = trl_grpo_row(sim, st, k, clip=True)
        row["epoch"] = st / 2400
        data = {"train/" + kk: v for kk, v in row.items()}
        data["train/global_step"] = st
        calls.append(data)
        if st in ev:
            calls.append({"eval/loss": 0.0, "eval/reward": ev[st], "eval/rewards/accuracy_reward/mean": ev[st],
                          "eval/runtime": 240.1, "eval/samples_per_second": 2.08, "eval/steps_per_second": 0.13,
                          "train/epoch": st / 2400, "train/global_step": st})
    cfg = {"learning_rate": 1e-6, "loss_type": "dr_grpo", "scale_rewards": "none", "beta": 0.0, "num_generations": 8,
           "max_completion_length": 1536, "logging_steps": 10, "max_steps": 1200, "eval_steps": 100,
           "model_name_or_path": "Qwen/Qwen2.5-Math-7B", "report_to": ["wandb"], "save_steps": 200}
    wandb_offline(d, "grpo-math", "qwen7b-drgrpo-lr1e-6", "q7drg5a1", cfg, calls, step_metric="train/global_step")


@case("h5-ok-long-openrlhf-tb-ui-csv", 5008, HEALTHY,
      "openrlhf reinforce_pp csv_export tensorboard_ui_csv long_run downsampled sparse_eval",
      "Four CSVs downloaded from the TensorBoard UI (one per tag: Wall time,Step,Value) for an OpenRLHF "
      "REINFORCE++ run at step 9000 of 12000, logged every step but exported as the UI's 1000-point sample, so the "
      "steps are uneven. train/reward creeps up in a log shape (~1000-step means 0.42 -> 0.54; the last 2000 steps gain ~0.02-0.03), "
      "train/kl rises slowly with it (to ~0.05), train/response_length 610 -> ~700, and eval/eval_math500_pass1 (every "
      "500 steps, 18 points, sd ~0.02) goes 0.41 -> ~0.57 with the last three at 0.55, 0.56, 0.57. Slow but still "
      "improving with a quarter of the budget left: continue.")
def _c8(rng, d):
    T = 9000
    s = np.arange(1, T + 1, dtype=float)
    p = lambda x: .36 + .19 * np.log1p(np.asarray(x, float) / 900) / np.log1p(9000 / 900)  # noqa: E731
    r, _, _, _ = groups(rng, p(s), 32, 8, 1.0, (0.97, 0.15))
    kl = np.maximum(0.05 * (s / 9000) ** 0.8 * np.exp(rng.normal(0, .08, T)), 1e-6)
    L = (610 + 90 * s / 9000) * np.exp(rng.normal(0, .04, T))
    keep = np.sort(rng.choice(np.arange(1, T - 1), 998, replace=False))
    keep = np.concatenate([[0], keep, [T - 1]])  # TB's reservoir keeps the first and the newest point
    w0 = 1771900000.0
    wall = w0 + s * 41.7 + np.cumsum(rng.normal(0, 0.6, T))
    run = "reinforce_pp_qwen7b_math"
    for tag, arr in (("train_reward", r), ("train_kl", kl), ("train_response_length", L)):
        write_csv(d / f"run-{run}-tag-{tag}.csv", ["Wall time", "Step", "Value"],
                  [(repr(float(wall[i])), int(s[i]), repr(f32(arr[i]))) for i in keep])
    ev_steps = list(range(500, T + 1, 500))
    evc = lambda x: .40 + .17 * math.log1p(x / 900) / math.log1p(9000 / 900)  # noqa: E731
    ev = {st: float(np.clip(evc(st) + rng.normal(0, .012), 0, 1)) for st in ev_steps}
    ev[8000], ev[8500], ev[9000] = .552, .561, .57
    write_csv(d / f"run-{run}-tag-eval_eval_math500_pass1.csv", ["Wall time", "Step", "Value"],
              [(repr(float(wall[st - 1] + 30)), st, repr(f32(v))) for st, v in ev.items()])


@case("h5-ok-kto-trl-state", 5009, HEALTHY,
      "trl kto preference trainer_state eval_improving checkpoints",
      "TRL KTO (beta 0.1, desirable/undesirable weights 1/1), trainer_state.json at the top level and checkpoint-200/"
      "400/600, logging every 10, 600 of 1500 steps. loss falls ~0.50 -> ~0.36, rewards/chosen rises to ~+0.9 and "
      "rewards/rejected falls to ~-1.7 (margins ~2.6), the batch KL estimate (kl) drifts 0 -> ~0.45, logps/chosen "
      "barely moves. Eval every 100: eval_loss 0.47, 0.44, 0.42, 0.40, 0.39, 0.38 and eval_rewards/margins 0.6, "
      "1.1, 1.5, 1.8, 2.0, 2.2, still improving at each eval with no train/eval gap opening. Continue.")
def _c9(rng, d):
    T, P, k = 600, 1500, 10
    s = np.arange(1, T + 1, dtype=float)
    chosen = eased((0, 0), (600, .92))(s) + rng.normal(0, .35, T)
    rejected = eased((0, 0), (600, -1.72))(s) + rng.normal(0, .45, T)
    kl = np.maximum(eased((0, 0), (600, .45))(s) + rng.normal(0, .05, T), 0)
    loss = eased((0, .50), (150, .44), (600, .36))(s) + rng.normal(0, .03, T)
    rows = []
    for st in range(k, T + 1, k):
        w = lambda a, st=st: window(a, st, k)  # noqa: E731
        rows.append((st, {"epoch": st / 1500, "grad_norm": f32(rng.lognormal(math.log(3.2), .3)),
                          "kl": f32(w(kl)), "learning_rate": 5e-7 * min(1, st / 150),
                          "logits/chosen": f32(-1.9 + rng.normal(0, .08)), "logits/rejected": f32(-1.85 + rng.normal(0, .08)),
                          "logps/chosen": f32(-245 - 3 * st / 600 + rng.normal(0, 6)),
                          "logps/rejected": f32(-262 - 18 * st / 600 + rng.normal(0, 7)),
                          "loss": round(w(loss), 4), "rewards/chosen": f32(w(chosen)), "rewards/margins": f32(w(chosen) - w(rejected)),
                          "rewards/rejected": f32(w(rejected)), "step": st}))
    eloss = {100: .47, 200: .443, 300: .418, 400: .402, 500: .389, 600: .381}
    emarg = {100: .61, 200: 1.08, 300: 1.49, 400: 1.78, 500: 2.01, 600: 2.18}
    eval_rows = [(st, {"epoch": st / 1500, "eval_kl": f32(kl[st - 1] * 0.9), "eval_logits/chosen": -1.92, "eval_logits/rejected": -1.86,
                       "eval_logps/chosen": f32(-248 - 2 * st / 600), "eval_logps/rejected": f32(-259 - 14 * st / 600),
                       "eval_loss": eloss[st], "eval_rewards/chosen": f32(emarg[st] * .36), "eval_rewards/margins": emarg[st],
                       "eval_rewards/rejected": f32(-emarg[st] * .64), "eval_runtime": 71.3, "eval_samples_per_second": 14.0,
                       "eval_steps_per_second": 0.88, "step": st}) for st in eloss]
    hist = trl_history(rows, eval_rows)
    write_trl_dir(d, hist, global_step=T, max_steps=P, logging_steps=k, save_steps=200, eval_steps=100,
                  ckpts=(200, 400, 600), top_level=True)


@case("h5-ok-openrlhf-console-every-step", 5010, HEALTHY,
      "openrlhf reinforce_pp_baseline openrlhf_console logging_every_step heavy_noise slow_learner",
      "OpenRLHF 0.10 console (Python-logging lines with '✨ Global step N: {...}', tqdm bars between them), "
      "REINFORCE++-baseline with 16 prompts x 4 samples and logging_steps 1, so each line is one noisy step: "
      "reward swings +-0.1 step to step around a slow climb (40-step means ~0.25 -> ~0.39) over 320 of 1000 steps. kl small and rising with "
      "the reward, truncated ~0, response_length 540 -> 600. eval_math500_pass1 every 40 steps (500 problems): 0.30, "
      "0.33, 0.34, 0.36, 0.37, 0.39, 0.40, 0.41. Noisy, slow, learning: continue.")
def _c10(rng, d):
    T, P = 320, 1000
    sim = Sim(rng, T, eased((0, .17), (320, .36)), prompts=16, G=4, tau=1.2, mix=(0.6, 0.2),
              length=eased((0, 540), (320, 600)), cap=4096, kl=eased((0, 0), (320, .012)), lr=flat(5e-7), gn=0.25,
              secs=64.0)
    ev = {40: .302, 80: .326, 120: .344, 160: .358, 200: .372, 240: .388, 280: .398, 320: .41}
    out = ["[2026-03-04 22:10:07,310] [INFO] [train_ppo_ray.py:188:train] args: --algo.advantage.estimator "
           "reinforce_baseline --rollout.n_samples_per_prompt 4 --rollout.batch_size 16 --train.num_episodes 1 "
           "--logger.logging_steps 1 --eval.steps 40 --ckpt.save_steps 100 --actor.learning_rate 5e-7 --algo.kl.init_coef 0.001"]
    t0 = 1772662207.0
    for i in range(T):
        st = i + 1
        status = openrlhf_status(sim, i)
        out.append(f"Episode [1/1]:  {100 * st // P:2d}%|{'█' * (10 * st // P):<10}| {st}/{P} [{hms(st * 64)}<"
                   f"{hms((P - st) * 64)}, 64.02s/it, act_loss={status['policy_loss']:.3f}, reward={status['reward']:.3f}, "
                   f"kl={status['kl']:.4f}, act_lr={status['actor_lr']:.2e}]")
        out.append(f"(PPOTrainer pid=31207) [{stamp(t0 + st * 64)}] [INFO] [ppo_trainer.py:410:fit] ✨ Global step {st}: "
                   f"{status!r}")
        if st in ev:
            e = {"eval_math500_pass1": ev[st], "eval_math500_pass4": min(1, ev[st] + .15),
                 "eval_math500_response_length_mean": float(sim.length[i] * .96), "eval_math500_truncated_rate": 0.0,
                 "eval_response_length_mean": float(sim.length[i] * .96), "eval_truncated_rate": 0.0, "eval_num_samples": 2000}
            out.append(f"(PPOTrainer pid=31207) [{stamp(t0 + st * 64 + 40)}] [INFO] [ppo_trainer.py:470:evaluate] "
                       f"📊 Evaluation completed in 38.40 seconds, global_step {st}, eval_metrics: {e!r}")
        if st % 100 == 0:
            out.append(f"(PPOTrainer pid=31207) [{stamp(t0 + st * 64 + 55)}] [INFO] [deepspeed_strategy.py:512:save_ckpt] "
                       f"Saving checkpoint to ./ckpt/checkpoints_reinforce/_actor/global_step{st}")
    d.mkdir(parents=True, exist_ok=True)
    (d / "train_reinforce_baseline.log").write_text("\n".join(out) + "\n", encoding="utf-8")


def nemo_row(sim, i, pct0, pct1):
    st = float(sim.step_time[i])
    rng = sim.rng
    return {"train/reward": float(sim.reward[i]), "train/loss": float(sim.loss[i]), "train/grad_norm": float(sim.grad_norm[i]),
            "train/lr": float(sim.lr[i]), "train/wd": 0.01, "train/kl_penalty": float(sim.kl[i]) if sim.kl is not None else 0.0,
            "train/approx_entropy": float(sim.entropy[i]), "train/probs_ratio": 1 + rng.normal(0, 2e-4),
            "train/probs_ratio_clamped": 1 + rng.normal(0, 1e-4), "train/token_mult_prob_error": 1.002 + abs(rng.normal(0, 5e-4)),
            "train/baseline_reward/pct_0": pct0, "train/baseline_reward/pct_1": pct1,
            "train/baseline_reward/pct_mixed": 100 - pct0 - pct1, "train/mean_gen_tokens_per_sample": float(sim.length[i]),
            "train/truncation_rate": float(sim.clipped[i]), "train/natural_termination_rate": 1 - float(sim.clipped[i]),
            "train/num_valid_samples": sim.prompts * sim.G, "timing/train/total_step_time": st,
            "timing/train/generation": 0.58 * st, "timing/train/policy_training": 0.25 * st,
            "timing/train/policy_and_reference_logprobs": 0.1 * st}


@case("h5-ok-nemo-tb-short-four-evals", 5011, HEALTHY,
      "nemo_rl grpo tensorboard short_run handful_of_evals early",
      "NeMo-RL GRPO TensorBoard (logs/exp_001/tensorboard), 80 of 500 steps logged every step, validation only "
      "at steps 0, 25, 50, 75 (val_period 25). train/reward rises fast then more slowly, ~0.30 -> ~0.52, the "
      "mixed-group share (pct_mixed) stays ~65-78%, approx_entropy eases, token_mult_prob_error ~1.002. "
      "validation/accuracy 0.27, 0.37, 0.44, 0.47: four points, all rising. Early and learning: continue.")
def _c11(rng, d):
    T = 80  # of 500
    sim = Sim(rng, T, sat(.25, .56, 45), prompts=64, G=16, tau=1.2, length=eased((0, 720), (80, 650)), cap=4096,
              ent=eased((0, .62), (80, .53)), kl=None, lr=flat(1e-6), gn=0.14, secs=95)
    ev = {0: .272, 25: .368, 50: .437, 75: .468}
    w0 = 1772400000.0
    events = [(w0, 0, {"validation/accuracy": ev[0], "validation/avg_length": 731.0})]
    for i in range(T):
        st = i + 1
        p = float(sim.reward[i])
        pct0 = float(np.clip(100 * (1 - p) ** 3.2 + rng.normal(0, 2), 0, 100))
        pct1 = float(np.clip(100 * p ** 3.2 + rng.normal(0, 2), 0, 100))
        events.append((w0 + st * 95, st, nemo_row(sim, i, pct0, pct1)))
        if st in ev:
            events.append((w0 + st * 95 + 40, st, {"validation/accuracy": ev[st], "validation/avg_length": float(sim.length[i]),
                                                   "validation/pass_k": min(1, ev[st] + .2)}))
    kit.tb_file(d / "logs" / "exp_001" / "tensorboard" / "events.out.tfevents.1772400000.dgx-b200-03.4411.0", events)
    (d / "logs" / "exp_001" / "config.yaml").write_text(
        "grpo:\n  max_num_steps: 500\n  num_prompts_per_step: 64\n  num_generations_per_prompt: 16\n  val_period: 25\n"
        "  val_at_start: true\nloss_fn:\n  reference_policy_kl_penalty: 0.0\ncheckpointing:\n  save_period: 100\n")


RASBT_76 = ["step", "total_steps", "loss", "kl_loss", "policy_ratio", "reward_avg", "format_reward_avg", "tokens_per_sec",
            "avg_response_len", "adv_avg", "adv_std", "entropy_avg", "eval_acc"]


@case("h5-ok-rasbt-format-reward-early", 5012, HEALTHY,
      "rasbt csv plain_script format_reward early eight_rollouts heavy_noise crlf",
      "reasoning-from-scratch 7_6 style CSV (CRLF; reward_avg is correctness + format, 0-2; one prompt x 8 rollouts "
      "per step, so it jumps between 0 and ~1.9), 140 of 500 steps. format_reward_avg climbs from ~0.35 to ~0.9 in "
      "the first 80 steps and holds; the total's 20-step means go ~0.4 -> ~1.2 with correctness rising under it; "
      "eval_acc (MATH-500, percent, at steps 1, 50, 100) 15.6, 23.8, 30.4. Entropy slowly lower, kl_loss small. "
      "Early, noisy and improving: continue.")
def _c12(rng, d):
    T, P = 140, 500
    s = np.arange(1, T + 1, dtype=float)
    fmt_p = eased((0, .35), (80, .9), (140, .92))(s)
    acc_p = eased((0, .14), (140, .33))(s)
    fmt = rng.binomial(8, fmt_p) / 8
    acc = rng.binomial(8, np.clip(acc_p + rng.normal(0, .12, T), 0.01, .99)) / 8
    rows = []
    ev = {1: "15.6", 50: "23.8", 100: "30.4"}
    for i in range(T):
        st = i + 1
        tot = acc[i] + fmt[i]
        flat_group = acc[i] in (0, 1) and fmt[i] in (0, 1)
        adv_std = 0.0 if flat_group else 0.9997 + rng.normal(0, 1e-4)
        L = 420 * math.exp(rng.normal(0, .35)) + 30
        rows.append([st, P, f"{0.0 if flat_group else rng.normal(0, .4):.6f}", f"{rng.normal(.004, .01):.6f}",
                     "" if flat_group else f"{1 + rng.normal(0, .08):.6f}", f"{tot:.6f}", f"{fmt[i]:.6f}",
                     f"{rng.normal(31, 2):.6f}", f"{L:.6f}", "0.000000", f"{adv_std:.6f}",
                     f"{0.42 - 0.1 * st / 140 + rng.normal(0, .03):.6f}", ev.get(st, "")])
    write_csv(d / "logs" / "7_6_plus_format_reward_metrics.csv", RASBT_76, rows, crlf=True)


# ------------------------------------------------------------------------------------------------------- stop

def verl_val(rng, curve, st, n=1319):
    return float(rng.binomial(n, float(np.clip(curve(st), 0, 1))) / n)


S1_VAL = {300: .702, 350: .709, 400: .698, 450: .706, 500: .701, 550: .711, 600: .699, 650: .707, 700: .703}


@case("h5-stop-entropy-collapse-plateau-verl-console", 5101, stop(360),
      "verl grpo verl_console entropy_collapse plateau no_learning_signal eval_flat checkpoints",
      "verl GRPO console (np.float64 values, Ray prefixes), 700 of 1000 steps. critic/score/mean rises ~0.37 -> "
      "~0.81 by step ~330 and has been flat at 0.80-0.82 since; actor/entropy collapsed 0.55 -> ~0.03 over steps "
      "150-360 and stays there, response lengths shrank and settled, grad_norm and pg_clipfrac near zero. "
      "Validation (every 50, 1319 problems, sd ~0.013): 0.38 (0), 0.54 (150), 0.67 (250), 0.70 (300), then 0.71, 0.70, "
      "0.71, 0.70, 0.71, 0.70, 0.71, 0.70 through 700: flat, not falling. The policy is deterministic and learning has ended; the "
      "current weights are as good as any: stop.")
def _s1(rng, d):
    T = 700
    sim = Sim(rng, T, eased((0, .35), (330, .84), (700, .845)), prompts=64, G=8, tau=0.8,
              length=eased((0, 380), (350, 250), (700, 245)), cap=1024,
              ent=eased((0, .55), (150, .45), (360, .03), (700, .028)), kl=eased((0, 0), (360, .05), (700, .07)),
              lr=flat(1e-6), gn=0.12, secs=61)
    sim.grad_norm *= eased((0, 1), (360, .25), (700, .2))(sim.s)
    clipf = np.abs(rng.normal(0.0015, 0.0005, T)) * eased((0, 1), (360, .1))(sim.s)
    val = eased((0, .38), (300, .70), (700, .705))
    rows = [(0, {"val-core/openai/gsm8k/reward/mean@1": .381})]
    for i in range(T):
        st = i + 1
        row = verl_row(sim, i, clipfrac=clipf)
        if st % 50 == 0:
            row["val-core/openai/gsm8k/reward/mean@1"] = S1_VAL.get(st) or verl_val(rng, val, st)
        rows.append((st, row))
    pre = ["2026-02-20 11:02:41,113\tINFO worker.py:1841 -- Started a local Ray instance.",
           "\x1b[36m(TaskRunner pid=41877)\x1b[0m Using dataset class: RLHFDataset",
           "\x1b[36m(TaskRunner pid=41877)\x1b[0m Total training steps: 1000"]
    write_verl_console(d / "verl_grpo_gsm8k_qwen3b.log", pre, rows)
    verl_ckpts(d, "checkpoints/verl_grpo_gsm8k/qwen2.5_3b_grpo", [100 * c for c in range(1, 8)])


@case("h5-stop-finished-best-is-last-trl-state", 5102, stop(1600),
      "trl grpo trainer_state finished best_at_end cosine_to_zero checkpoints",
      "A finished TRL GRPO run (2000/2000, summary row, should_training_stop true, cosine LR decayed to 0, "
      "checkpoint-1500 and checkpoint-2000 kept by save_total_limit 2). Reward rose ~0.43 -> ~0.64 and flattened "
      "over the last ~400 steps. Eval every 250 (2000 problems, sd ~0.011): 0.43, 0.50, 0.55, 0.58, 0.60, 0.61, "
      "0.614, 0.618 at 2000 - the last is the best and the increments have shrunk to noise. No decline anywhere, "
      "and with the LR at zero there is nothing more to get from extending. Keep the final weights: stop.")
def _s2(rng, d):
    T, k = 2000, 10
    sim = Sim(rng, T, eased((0, .40), (900, .60), (1600, .655), (2000, .665)), prompts=32, G=8, tau=1.0,
              length=eased((0, 380), (2000, 450)), cap=1024, ent=eased((0, .5), (2000, .36)),
              lr=cosine_lr(1e-6, 60, 2000), gn=0.12, secs=38)
    rows = [(st, with_epoch(trl_grpo_row(sim, st, k), st, 2000)) for st in range(k, T + 1, k)]
    ev = {250: .431, 500: .502, 750: .553, 1000: .582, 1250: .601, 1500: .609, 1750: .614, 2000: .618}
    eval_rows = [(st, {"eval_loss": 0.0, "eval_reward": v, "eval_rewards/accuracy_reward/mean": v,
                       "eval_rewards/accuracy_reward/std": f32(math.sqrt(v * (1 - v))), "eval_runtime": 402.0,
                       "eval_samples_per_second": 4.97, "eval_steps_per_second": 0.31, "epoch": st / 2000, "step": st})
                  for st, v in ev.items()]
    hist = trl_history(rows, eval_rows, final=trl_final(T, 2000, 0.0021, 77120.4))
    write_trl_dir(d, hist, global_step=T, max_steps=T, logging_steps=k, save_steps=500, eval_steps=250,
                  ckpts=(1500, 2000), top_level=True, finished=True)


@case("h5-stop-saturated-wandb-history-csv", 5103, stop(700),
      "trl grpo csv_export wandb_history_csv saturated zero_std no_learning_signal kl",
      "A CSV saved from wandb's run.history() (columns _step,_runtime,_timestamp and train/* keys; _step counts log "
      "calls, train/global_step is the trainer step, logging every 10) of TRL GRPO with beta 0.04, 1100 of 2000 "
      "steps. train/reward climbed ~0.68 -> ~0.96 by ~700 and sits at 0.96-0.97; train/frac_reward_zero_std rose "
      "to ~0.8 (most groups all-correct, no advantage left), train/reward_std fell to ~0.17, grad_norm "
      "shrank 10x, KL flat at ~0.03. The task is saturated and there is no learning signal left; the weights "
      "are as good as they get on this data: stop.")
def _s3(rng, d):
    T, k = 1100, 10
    sim = Sim(rng, T, eased((0, .72), (700, .975), (1100, .98)), prompts=16, G=8, tau=1.0, length=eased((0, 210), (1100, 180)),
              cap=512, ent=eased((0, .25), (1100, .12)), kl=eased((0, 0), (600, .03), (1100, .031)), lr=flat(5e-7), gn=0.2,
              secs=22)
    sim.grad_norm *= eased((0, 1), (700, .1))(sim.s)
    hdr = ["_step", "_runtime", "_timestamp", "train/global_step", "train/epoch", "train/loss", "train/grad_norm",
           "train/learning_rate", "train/reward", "train/reward_std", "train/frac_reward_zero_std", "train/kl",
           "train/completions/mean_length", "train/completions/clipped_ratio", "train/entropy",
           "train/rewards/correctness_reward/mean"]
    out = []
    ts0 = 1771500000.0
    for j, st in enumerate(range(k, T + 1, k)):
        r = trl_grpo_row(sim, st, k, kl=True)
        rt = st * 22.0 + rng.normal(0, 3)
        out.append([j, g(rt, 10), g(ts0 + rt, 13), st, g(st / 1869, 8), r["loss"], g(r["grad_norm"], 8),
                    g(r["learning_rate"], 6), g(r["reward"], 8), g(r["reward_std"], 8), g(r["frac_reward_zero_std"], 8),
                    g(r["kl"], 8), g(r["completions/mean_length"], 8), g(r["completions/clipped_ratio"], 6),
                    g(r["entropy"], 8), g(r["rewards/accuracy_reward/mean"], 8)])
    write_csv(d / "wandb_export_grpo-q1.5b-gsm8k-beta0.04.csv", hdr, out)


@case("h5-stop-never-learns-reward-loss-jsonl", 5104, stop(1),
      "plain_script jsonl minimal_metrics reward_loss_only no_learning flat_reward",
      "A custom GRPO loop's JSONL with only step, reward and loss per line, 900 of 2000 steps, 8 prompts x 8 "
      "samples per step. The reward sits at its starting level (~0.16) for the whole run: 100-step means 0.15, "
      "0.16, 0.15, 0.16, 0.17, 0.16, 0.17, 0.16, 0.15, no trend in any window, and the loss just jitters around 0. "
      "900 steps without any movement means the update does nothing useful (setup problem); more steps will not "
      "help: stop and debug.")
def _s4(rng, d):
    T = 900
    r, _, _, _ = groups(rng, np.full(T, .11), 8, 8, 1.2, (0.5, 0.15))
    loss = rng.normal(0, .012, T)
    d.mkdir(parents=True, exist_ok=True)
    with (d / "train_metrics.jsonl").open("w") as fh:
        for i in range(T):
            fh.write(json.dumps({"step": i + 1, "reward": round(float(r[i]), 6), "loss": round(float(loss[i]), 6)}) + "\n")


@case("h5-stop-finished-eval-only-at-end", 5105, stop(2200),
      "plain_script jsonl finished eval_only_at_end long_run logging_every_25 plateau",
      "A hand-written GRPO loop's JSONL (split: train rows every 25 steps, split: eval rows only at step 0 and at "
      "the end), finished at 5000/5000 (a 'done' row). Train reward rose ~0.33 -> ~0.60 by ~2000 and then stayed "
      "flat at ~0.60 (500-step means 0.60-0.61) for 3000 steps with KL flat-ish and entropy steady; eval accuracy 0.33 at step 0, 0.61 at "
      "5000. With no eval in between and a flat train curve there is no evidence that any earlier point was "
      "better; the final weights are as good as any: stop (keep them).")
def _s5(rng, d):
    T, k = 5000, 25
    sim = Sim(rng, T, eased((0, .30), (2000, .62), (5000, .62)), prompts=32, G=8, tau=1.0, length=eased((0, 300), (5000, 330)),
              cap=1024, ent=eased((0, .5), (2000, .38), (5000, .37)), kl=eased((0, 0), (2000, .03), (5000, .036)),
              lr=flat(1e-6), gn=0.1, secs=30)
    d.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps({"step": 0, "split": "eval", "accuracy": 0.331, "n": 1000, "avg_response_length": 301.2})]
    for st in range(k, T + 1, k):
        lines.append(json.dumps({"step": st, "split": "train", "reward": round(window(sim.reward, st, k), 5),
                                 "kl": round(window(sim.kl, st, k), 6), "entropy": round(window(sim.entropy, st, k), 5),
                                 "response_length": round(window(sim.length, st, k), 1), "lr": 1e-6,
                                 "grad_norm": round(float(sim.grad_norm[st - 1]), 5)}))
    lines.append(json.dumps({"step": 5000, "split": "eval", "accuracy": 0.612, "n": 1000, "avg_response_length": 329.8}))
    lines.append(json.dumps({"step": 5000, "split": "done", "total_steps": 5000, "wall_hours": 41.7}))
    (d / "metrics.jsonl").write_text("\n".join(lines) + "\n")
    (d / "config.json").write_text(json.dumps({"total_steps": 5000, "log_every": 25, "eval_at": "start,end",
                                               "lr": 1e-6, "group_size": 8, "prompts_per_step": 32}, indent=1))


@case("h5-stop-truncation-cap-plateau-verl-jsonl", 5106, stop(300),
      "verl grpo verl_jsonl truncation length_cap plateau eval_flat",
      "verl JSONL (file logger) GRPO with max_response_length 1024, 600 of 1200 steps. response_length/mean grows "
      "~420 -> ~990 and response_length/clip_ratio climbs from ~0.02 to ~0.6: most answers are now cut off at the "
      "cap. critic/score/mean rose to ~0.56 by ~280 and has been flat since (truncated answers score 0, so longer "
      "reasoning cannot pay); validation (every 25, MATH-500 x 10 samples, sd ~0.007) flat at ~0.56 from ~275, not falling. Nothing more to gain at this cap and the current weights are as good as any: stop (raise "
      "the cap and relaunch from here).")
def _s6(rng, d):
    T = 600
    sim = Sim(rng, T, eased((0, .36), (280, .575), (600, .575)), prompts=128, G=8, tau=1.0, mix=(0.7, 0.04),
              length=eased((0, 420), (280, 800), (600, 990)), cap=1024, ent=eased((0, .46), (600, .5)),
              kl=eased((0, 0), (600, .03)), lr=flat(1e-6), gn=0.12, secs=80)
    sim.clipped = np.clip(eased((0, .02), (280, .25), (600, .6))(sim.s) + rng.normal(0, .015, T), 0, 1)
    val = eased((0, .38), (275, .56), (600, .562))
    rows = [(0, {"val-core/lighteval/MATH/acc/mean@1": .382})]
    for i in range(T):
        st = i + 1
        row = verl_row(sim, i)
        row["response_length/max"] = 1024.0
        if st % 25 == 0:
            row["val-core/lighteval/MATH/acc/mean@1"] = {575: .566, 600: .563}.get(st) or verl_val(rng, val, st, 5000)
        rows.append((st, row))
    write_verl_jsonl(d / "verl_grpo_math" / "qwen2.5-7b-1k.jsonl", rows)


@case("h5-stop-kl-drift-no-decline-mlflow", 5107, stop_or_rollback(500, 1200, 600),
      "trl grpo mlflow_file kl_drift plateau eval_flat drifting_without_decline",
      "MLflow file store (mlruns/, HF MLflow callback, raw TRL keys: reward, kl, entropy, completions/mean_length "
      "as nested metric folders, eval_reward), TRL GRPO with beta 0.02 at 1200 of 2000 steps. reward plateaued at "
      "~0.63-0.64 from ~500 while kl keeps climbing steadily 0.02 -> ~0.19 and entropy slowly falls; eval_reward (every "
      "100, 1000 problems, sd ~0.015) is flat at 0.60-0.62 from 500 to 1200 with no decline. The policy is drifting "
      "without gaining and without (yet) losing: stop; restoring any point 500-1200 is as good (less drift).")
def _s7(rng, d):
    T, k = 1200, 10
    sim = Sim(rng, T, eased((0, .38), (500, .66), (1200, .665)), prompts=32, G=8, tau=1.0, length=eased((0, 350), (1200, 410)),
              cap=1024, ent=eased((0, .48), (500, .38), (1200, .31)), kl=eased((0, 0), (500, .02), (1200, .19)),
              lr=flat(1e-6), gn=0.13, secs=33)
    ms, t0 = [], 1771000000000
    ev = {100: .452, 200: .521, 300: .567, 400: .594, 500: .606, 600: .612, 700: .604, 800: .617, 900: .609,
          1000: .611, 1100: .603, 1200: .608}
    for st in range(k, T + 1, k):
        r = trl_grpo_row(sim, st, k, kl=True, clip=False, step_time=True)
        r["epoch"] = round(st / 3736, 4)
        ts = t0 + int(st * 33000)
        for key, v in r.items():
            if v is not None:
                ms.append((key, float(v), ts, st))
        if st in ev:
            for key, v in (("eval_loss", 0.0), ("eval_reward", ev[st]), ("eval_rewards/accuracy_reward/mean", ev[st]),
                           ("eval_kl", float(sim.kl[st - 1])), ("eval_runtime", 301.5)):
                ms.append((key, float(v), ts + 300000, st))
    params = {"learning_rate": "1e-06", "beta": "0.02", "num_generations": "8", "max_steps": "2000", "logging_steps": "10",
              "eval_steps": "100", "max_completion_length": "1024", "model_name_or_path": "meta-llama/Llama-3.1-8B-Instruct"}
    write_mlflow_file_store(d / "mlruns", "412508847113290761", "grpo-llama8b-math", "5f0c2a1e9b7d4c33a8e1f2d3c4b5a697",
                            "llama8b-grpo-beta0.02", t0, ms, params)


@case("h5-stop-dpo-finished-best-at-end-tb", 5108, stop(1000),
      "trl dpo tensorboard finished best_at_end one_epoch preference",
      "TRL DPO TensorBoard (train/*, eval/*), one epoch, finished at 1200/1200. Train loss 0.693 -> ~0.50, "
      "rewards/accuracies ~0.5 -> ~0.76, margins rising gently; eval every 200: eval/loss 0.671, 0.597, 0.561, "
      "0.543, 0.534, 0.530 and eval/rewards/accuracies 0.60, 0.68, 0.71, 0.73, 0.735, 0.74 - best at the final "
      "step, flattening, no gap opening between train and eval. The final weights are the best; another epoch on "
      "the same pairs is more likely to overfit than to help: stop.")
def _s8(rng, d):
    T, k = 1200, 10
    s = np.arange(1, T + 1, dtype=float)
    acc = np.clip(eased((0, .5), (400, .70), (1200, .765))(s) + rng.normal(0, .09, T), 0, 1)
    margin = eased((0, 0), (400, .55), (1200, .95))(s) + rng.normal(0, .3, T)
    chosen = eased((0, 0), (1200, -.35))(s) + rng.normal(0, .2, T)
    loss = eased((0, .693), (400, .57), (1200, .50))(s) + rng.normal(0, .05, T)
    rows = []
    for st in range(k, T + 1, k):
        w = lambda a, st=st: window(a, st, k)  # noqa: E731
        rows.append((st, {"loss": round(w(loss), 4), "grad_norm": f32(rng.lognormal(math.log(9), .35)),
                          "learning_rate": float(5e-7 * min(1, st / 120) * (T - st) / (T - 120) if st > 120 else 5e-7 * st / 120),
                          "rewards/chosen": f32(w(chosen)), "rewards/rejected": f32(w(chosen) - w(margin)),
                          "rewards/accuracies": f32(w(acc)), "rewards/margins": f32(w(margin)),
                          "logps/chosen": f32(-310 + rng.normal(0, 9) - 4 * st / 1200), "logps/rejected": f32(-335 + rng.normal(0, 9) - 12 * st / 1200),
                          "logits/chosen": f32(-1.41 + rng.normal(0, .05)), "logits/rejected": f32(-1.38 + rng.normal(0, .05)),
                          "epoch": st / 1200}))
    el = {200: .671, 400: .597, 600: .561, 800: .543, 1000: .534, 1200: .530}
    ea = {200: .60, 400: .68, 600: .71, 800: .73, 1000: .735, 1200: .74}
    eval_rows = [(st, {"eval_loss": el[st], "eval_rewards/accuracies": ea[st], "eval_rewards/margins": f32(0.4 + 1.6 * (.693 - el[st])),
                       "eval_rewards/chosen": f32(-0.2 * st / 1200), "eval_rewards/rejected": f32(-0.2 * st / 1200 - 0.4 - 1.6 * (.693 - el[st])),
                       "eval_runtime": 88.1, "eval_samples_per_second": 11.35, "eval_steps_per_second": 1.42})
                  for st in el]
    events = hf_tb_events(rows, eval_rows, 1770001000.0, 18.0)
    events.append((1770001000.0 + T * 18 + 90, T, {"train/train_runtime": 21750.3, "train/train_samples_per_second": 3.53,
                                                   "train/train_steps_per_second": 0.055, "train/total_flos": 0.0,
                                                   "train/train_loss": 0.5712}))
    kit.tb_file(d / "runs" / "Jan30_10-15-02_ip-10-0-3-17" / "events.out.tfevents.1770001000.ip-10-0-3-17.7719.0", events)


@case("h5-stop-rasbt-plateau-near-end", 5109, converged(),
      "rasbt csv plain_script kl plateau converged near_end crlf",
      "reasoning-from-scratch 7_5 style CSV (CRLF, kl_loss and policy_ratio columns, eval_acc in percent every 50 "
      "steps), 430 of 500 steps. reward_avg (8 rollouts of one prompt per step, very noisy) rose to a 50-step mean of "
      "~0.5 by ~180 and has been flat since; eval_acc 15.6 (1), 29.8, 37.2, 40.6 (150), then 41.0, 40.4, 41.2, 40.8, "
      "41.0 (400): converged for 250 steps, with kl_loss small and steady. 70 steps left: stopping now or letting it "
      "finish are both fine; stop preferred.")
def _s9(rng, d):
    T, P = 430, 500
    hdr = ["step", "total_steps", "loss", "kl_loss", "policy_ratio", "reward_avg", "tokens_per_sec", "avg_response_len",
           "adv_avg", "adv_std", "entropy_avg", "eval_acc"]
    p = eased((0, .14), (180, .5), (430, .5))
    ev = {1: "15.6", 50: "29.8", 100: "37.2", 150: "40.6", 200: "41.0", 250: "40.4", 300: "41.2", 350: "40.8", 400: "41.0"}
    rows = []
    for i in range(T):
        st = i + 1
        r = rng.binomial(8, float(np.clip(p(st) + rng.normal(0, .18), .01, .99))) / 8
        flat_group = r in (0.0, 1.0)
        rows.append([st, P, f"{0.0 if flat_group else rng.normal(0, .5):.6f}", f"{abs(rng.normal(.02, .01)):.6f}",
                     "" if flat_group else f"{1 + rng.normal(0, .06):.6f}", f"{r:.6f}", f"{rng.normal(29, 2):.6f}",
                     f"{380 * math.exp(rng.normal(0, .3)):.6f}", "0.000000", f"{0.0 if flat_group else .9997:.6f}",
                     f"{.35 - .05 * st / 430 + rng.normal(0, .03):.6f}", ev.get(st, "")])
    write_csv(d / "logs" / "7_5_plus_kl_metrics.csv", hdr, rows, crlf=True)


# --------------------------------------------------------------------------------------------------- rollback

@case("h5-bad-length-explosion-judge-rises-verl-jsonl", 5201, rollback(150, 250, 260),
      "verl grpo verl_jsonl llm_judge reward_hacking length_explosion truncation multi_val_sets",
      "verl JSONL, GRPO trained on an LLM-judge score (0-10 rescaled to 0-1) over a mixed chat+math set. "
      "critic/score/mean rises steadily ~0.46 -> ~0.74 through step 600, but from ~260 response_length/mean takes off "
      "(~350 -> ~1900 of a 2048 cap, clip_ratio to ~0.35) and the judge score tracks the length. Validation every "
      "50: the judged chat set (val-core/alpaca_eval/reward/mean@1) keeps rising with length, while the exact-match "
      "set (val-core/openai/gsm8k/acc/mean@1, 1319 problems, sd ~0.012) peaked at ~0.77 at 150-250 (0.765, 0.772, "
      "0.768) and falls to 0.72 (300), 0.66, 0.61, 0.57, 0.54, 0.52 (600). The judge is being won by verbosity: "
      "roll back to ~250 (window 150-250).")
def _r1(rng, d):
    T = 600
    sim = Sim(rng, T, eased((0, .45), (300, .62), (600, .79)), prompts=64, G=8, tau=0.9,
              length=eased((0, 350), (250, 360), (420, 1300), (600, 1900)), cap=2048, ent=eased((0, .6), (600, .66)),
              kl=eased((0, 0), (250, .01), (600, .09)), lr=flat(1e-6), gn=0.14, secs=95)
    sim.clipped = np.clip(eased((0, .004), (260, .006), (600, .35))(sim.s) + np.abs(rng.normal(0, .006, T)), 0, 1)
    gsm = {0: .712, 50: .738, 100: .755, 150: .765, 200: .772, 250: .768, 300: .721, 350: .663, 400: .611, 450: .574,
           500: .543, 550: .529, 600: .518}
    chat = eased((0, .46), (300, .61), (600, .77))
    rows = [(0, {"val-core/openai/gsm8k/acc/mean@1": gsm[0], "val-core/alpaca_eval/reward/mean@1": .462})]
    for i in range(T):
        st = i + 1
        row = verl_row(sim, i)
        row["critic/score/min"] = 0.1
        if st % 50 == 0:
            row["val-core/openai/gsm8k/acc/mean@1"] = gsm[st]
            row["val-core/alpaca_eval/reward/mean@1"] = float(np.clip(chat(st) + rng.normal(0, .01), 0, 1))
        rows.append((st, row))
    write_verl_jsonl(d / "judge_grpo" / "qwen2.5-7b-judge-mix.jsonl", rows)


@case("h5-bad-kl-drift-late-break-wandb-panel-csv", 5202, rollback(1600, 2000, 2010),
      "trl grpo csv_export wandb_panel_csv kl_drift late_break no_checkpoints beta_small",
      "Four panel CSVs exported from the W&B UI (x-axis column train/global_step, then '<run> - <key>' with its "
      "__MIN/__MAX band columns) for TRL GRPO with beta 0.001 at 2400 of 3000 steps, logging every 10. train/kl "
      "drifts slowly 0 -> ~0.09 by ~1900, then accelerates to ~0.6 by 2400; train/reward rose ~0.33 -> ~0.64 by "
      "~1700, held to ~2000, then falls to ~0.48; train/entropy turns up with the KL. eval/reward (every 200): "
      "0.36 ... 0.58 (1600), 0.60 (1800), 0.59 (2000), then 0.55 (2200), 0.49 (2400). The slow drift finally broke "
      "the policy: roll back to ~1800-2000 (window 1600-2000; checkpoints live elsewhere).")
def _r2(rng, d):
    T, k = 2400, 10
    sim = Sim(rng, T, eased((0, .30), (1800, .665), (1980, .665), (2400, .475)), prompts=32, G=8, tau=1.0,
              length=eased((0, 420), (1900, 520), (2400, 760)), cap=2048, ent=eased((0, .45), (1900, .36), (2400, .62)),
              kl=eased((0, 0), (1900, .09), (2150, .25), (2400, .6)), lr=flat(1e-6), gn=0.12, secs=36)
    run = "grpo-qwen7b-beta1e-3"
    ev = {200: .362, 400: .418, 600: .462, 800: .497, 1000: .523, 1200: .548, 1400: .566, 1600: .583, 1800: .597,
          2000: .591, 2200: .552, 2400: .491}
    for fname, key, arr in (("reward.csv", "train/reward", sim.reward), ("kl.csv", "train/kl", sim.kl),
                            ("entropy.csv", "train/entropy", sim.entropy)):
        rows = []
        for st in range(k, T + 1, k):
            v = window(arr, st, k)
            rows.append([st, g(v, 10), g(v, 10), g(v, 10)])
        write_csv(d / fname, ["train/global_step", f"{run} - {key}", f"{run} - {key}__MIN", f"{run} - {key}__MAX"], rows)
    write_csv(d / "eval_reward.csv", ["train/global_step", f"{run} - eval/reward", f"{run} - eval/reward__MIN",
                                      f"{run} - eval/reward__MAX"], [[st, v, v, v] for st, v in ev.items()])


@case("h5-bad-entropy-collapse-eval-declines-trl-ckpts", 5203, rollback(300, 420, 440),
      "trl grpo trainer_state checkpoints_only entropy_collapse eval_decline zero_std",
      "TRL GRPO, only checkpoint-400..800 on disk (save_total_limit 5; the newest trainer_state.json holds the whole "
      "history), logging every 10, 800 of 1500 steps. Entropy collapses 0.45 -> ~0.03 over steps ~420-560, "
      "frac_reward_zero_std climbs to ~0.85, train reward stalls around ~0.70 and then sags to ~0.65. Eval every 100 (1000 "
      "problems, sd ~0.015): 0.52, 0.58, 0.62 (300), 0.63 (400), then 0.585 (500), 0.56, 0.54, 0.52 (800). Unlike a "
      "harmless collapse at a plateau, here the held-out accuracy falls after it: roll back to checkpoint-400 "
      "(window 300-420).")
def _r3(rng, d):
    T, k = 800, 10
    sim = Sim(rng, T, eased((0, .45), (400, .74), (560, .75), (800, .70)), prompts=32, G=8, tau=1.4,
              length=eased((0, 380), (420, 400), (560, 300), (800, 280)), cap=1024,
              ent=eased((0, .45), (420, .38), (560, .03), (800, .025)), lr=flat(2e-6), gn=0.15, secs=35)
    sim.zero_std = np.clip(eased((0, .3), (420, .42), (560, .85), (800, .87))(sim.s) + rng.normal(0, .03, T), 0, 1)
    rows = [(st, with_epoch(trl_grpo_row(sim, st, k), st, 1500)) for st in range(k, T + 1, k)]
    ev = {100: .521, 200: .583, 300: .621, 400: .632, 500: .585, 600: .561, 700: .538, 800: .522}
    eval_rows = [(st, {"eval_loss": 0.0, "eval_reward": v, "eval_rewards/accuracy_reward/mean": v,
                       "eval_rewards/accuracy_reward/std": f32(math.sqrt(v * (1 - v))), "eval_entropy": f32(sim.entropy[st - 1]),
                       "eval_runtime": 233.0, "eval_samples_per_second": 4.29, "eval_steps_per_second": 0.27,
                       "epoch": st / 1500, "step": st}) for st, v in ev.items()]
    hist = trl_history(rows, eval_rows)
    write_trl_dir(d, hist, global_step=T, max_steps=1500, logging_steps=k, save_steps=100, eval_steps=100,
                  ckpts=(400, 500, 600, 700, 800), top_level=False)


@case("h5-bad-dpo-overfit-second-epoch-tb", 5204, rollback(250, 350, 360),
      "trl dpo tensorboard overfitting multi_epoch eval_decline likelihood_displacement",
      "TRL DPO TensorBoard (train/*, eval/*), 2 epochs of 450 steps at lr 5e-6 (high), now at step 700. Train "
      "rewards/margins climb without pause (0 -> ~9), rewards/accuracies -> ~0.98, and logps/chosen falls steadily "
      "(-290 -> ~-420: the chosen answers are pushed down too). Eval every 50: eval/rewards/margins peaks ~1.9 at "
      "250-350 and falls to ~0.9; eval/rewards/accuracies 0.74 at 250-350 then 0.71, 0.69, 0.66, 0.64 (700); "
      "eval/loss bottoms at ~0.54 (300) and climbs to ~0.79. Overfitting since ~350: roll back to ~300 (window "
      "250-350).")
def _r4(rng, d):
    T, k = 700, 10
    s = np.arange(1, T + 1, dtype=float)
    margin = eased((0, 0), (350, 3.2), (450, 5.0), (700, 9.0))(s) + rng.normal(0, .6, T)
    acc = np.clip(eased((0, .5), (300, .82), (450, .9), (700, .98))(s) + rng.normal(0, .05, T), 0, 1)
    chosen = eased((0, 0), (350, -.9), (700, -3.2))(s) + rng.normal(0, .25, T)
    loss = eased((0, .693), (300, .45), (450, .33), (460, .22), (700, .08))(s) + rng.normal(0, .04, T)
    logpc = eased((0, -290), (350, -320), (700, -420))(s) + rng.normal(0, 8, T)
    rows = []
    for st in range(k, T + 1, k):
        w = lambda a, st=st: window(a, st, k)  # noqa: E731
        rows.append((st, {"loss": round(w(loss), 4), "grad_norm": f32(rng.lognormal(math.log(14), .4)),
                          "learning_rate": float(5e-6 * min(1, st / 45) * max(0, (900 - st) / 855) if st > 45 else 5e-6 * st / 45),
                          "rewards/chosen": f32(w(chosen)), "rewards/rejected": f32(w(chosen) - w(margin)),
                          "rewards/accuracies": f32(w(acc)), "rewards/margins": f32(w(margin)),
                          "logps/chosen": f32(w(logpc)), "logps/rejected": f32(w(logpc) - 25 - 3 * w(margin)),
                          "logits/chosen": f32(-1.2 + rng.normal(0, .05)), "logits/rejected": f32(-1.17 + rng.normal(0, .05)),
                          "epoch": st / 450}))
    em = {50: .31, 100: .72, 150: 1.15, 200: 1.52, 250: 1.82, 300: 1.91, 350: 1.87, 400: 1.64, 450: 1.45, 500: 1.31,
          550: 1.18, 600: 1.07, 650: .98, 700: .91}
    ea = {50: .58, 100: .64, 150: .69, 200: .72, 250: .737, 300: .742, 350: .739, 400: .722, 450: .71, 500: .694,
          550: .681, 600: .663, 650: .652, 700: .641}
    el = {50: .67, 100: .628, 150: .592, 200: .566, 250: .549, 300: .541, 350: .548, 400: .585, 450: .62, 500: .662,
          550: .701, 600: .738, 650: .767, 700: .792}
    eval_rows = [(st, {"eval_loss": el[st], "eval_rewards/accuracies": ea[st], "eval_rewards/margins": em[st],
                       "eval_rewards/chosen": f32(-.3 - st / 500), "eval_rewards/rejected": f32(-.3 - st / 500 - em[st]),
                       "eval_logps/chosen": f32(-300 - st / 7), "eval_runtime": 61.2, "eval_samples_per_second": 8.2,
                       "eval_steps_per_second": 1.03}) for st in em]
    kit.tb_file(d / "runs" / "Mar03_17-40-11_gpu-l40s-2" / "events.out.tfevents.1772559611.gpu-l40s-2.5120.0",
                hf_tb_events(rows, eval_rows, 1772559611.0, 26.0))


@case("h5-bad-finished-four-evals-best-midway-trl-state", 5205, rollback(540, 660, 680),
      "trl grpo trainer_state finished handful_of_evals eval_decline truncation kl checkpoints",
      "A finished TRL GRPO run (1200/1200, summary row) with only four evals (every 300, 1000 problems, sd "
      "~0.016): 0.48 (300), 0.565 (600), 0.51 (900), 0.47 (1200). Train reward rose to ~0.64 by ~600 and keeps "
      "creeping up (to ~0.70), but from ~650 completions lengthen toward the 1024 cap (clipped_ratio 0.02 -> ~0.3) and KL "
      "accelerates (0.03 -> ~0.2): the train gain is not real. Checkpoints 300/600/900/1200 are on disk: keep "
      "checkpoint-600 (rollback; window 540-660).")
def _r5(rng, d):
    T, k = 1200, 10
    sim = Sim(rng, T, eased((0, .38), (600, .70), (1200, .74)), prompts=32, G=8, tau=1.0,
              length=eased((0, 410), (650, 470), (1200, 900)), cap=1024, ent=eased((0, .46), (650, .38), (1200, .47)),
              kl=eased((0, 0), (650, .03), (1200, .2)), lr=flat(1e-6), gn=0.13, secs=52)
    sim.clipped = np.clip(eased((0, .01), (650, .02), (1200, .3))(sim.s) + np.abs(rng.normal(0, .008, T)), 0, 1)
    rows = [(st, with_epoch(trl_grpo_row(sim, st, k, kl=True), st, 1200)) for st in range(k, T + 1, k)]
    ev = {300: .48, 600: .565, 900: .51, 1200: .47}
    eval_rows = [(st, {"eval_loss": 0.0, "eval_reward": v, "eval_rewards/accuracy_reward/mean": v,
                       "eval_completions/mean_length": f32(sim.length[st - 1]), "eval_runtime": 512.0,
                       "eval_samples_per_second": 1.95, "eval_steps_per_second": 0.12, "epoch": st / 1200, "step": st})
                  for st, v in ev.items()]
    hist = trl_history(rows, eval_rows, final=trl_final(T, 1200, 0.0089, 62555.0))
    write_trl_dir(d, hist, global_step=T, max_steps=T, logging_steps=k, save_steps=300, eval_steps=300,
                  ckpts=(300, 600, 900, 1200), top_level=True, finished=True)


@case("h5-bad-grad-explosion-no-recovery-verl-console", 5206, rollback(240, 316, 318),
      "verl grpo verl_console grad_explosion nan collapse no_recovery checkpoints",
      "verl GRPO console, 360 of 800 steps, noisy but healthy until step 317 (score ~0.61, validation every 20 at "
      "0.58-0.60 from 240 to 300). At 318 actor/grad_norm jumps from ~0.3 to ~45, at 319-321 actor/grad_norm and "
      "actor/pg_loss print nan, and afterwards the policy is broken: critic/score/mean falls to ~0.05 and stays "
      "there for 40 steps, actor/entropy jumps to ~3, responses run to the 1024 cap; validation 0.07 (320), 0.03 "
      "(340), 0.02 (360). Not a one-off: roll back to global_step_300 (window 240-316).")
def _r6(rng, d):
    T = 360
    sim = Sim(rng, T, eased((0, .38), (240, .60), (317, .615), (319, .3), (330, .05), (360, .04)), prompts=32, G=8,
              tau=1.0, mix=(0.6, 0.2), length=eased((0, 300), (317, 330), (326, 1000), (360, 1015)), cap=1024,
              ent=eased((0, .5), (317, .44), (325, 3.0), (360, 3.2)), kl=eased((0, 0), (317, .02), (325, 1.5), (360, 2.4)),
              lr=flat(1e-6), gn=0.3, gn_sd=0.35, secs=44)
    sim.grad_norm[317] = 45.3
    sim.grad_norm[318:321] = float("nan")
    sim.loss[318:321] = float("nan")
    sim.grad_norm[321:] *= 8
    val = dict(zip(range(20, 361, 20), (.41, .45, .48, .5, .52, .54, .55, .57, .56, .57, .58, .6, .59, .59, .6, .068,
                                        .031, .018), strict=True))
    rows = [(0, {"val-core/openai/gsm8k/acc/mean@1": .392})]
    for i in range(T):
        st = i + 1
        row = verl_row(sim, i)
        if st in val:
            row["val-core/openai/gsm8k/acc/mean@1"] = val[st]
        rows.append((st, row))
    write_verl_console(d / "logs" / "grpo_qwen1.5b_gsm8k.log", ["\x1b[36m(TaskRunner pid=8812)\x1b[0m Total training steps: 800"],
                       rows, pid=8812)
    verl_ckpts(d, "checkpoints/gsm8k_grpo/qwen1.5b", [50, 100, 150, 200, 250, 300, 350])


@case("h5-bad-multitask-one-task-collapses-trl-console", 5207, rollback(560, 800, 820),
      "trl grpo trl_console multi_task reward_components component_collapse eval_decline",
      "TRL GRPO console on a three-task mix (rewards/math_verify, rewards/code_unit_tests, rewards/ifeval_strict, "
      "one function per task), 1100 of 2000 steps, logging every 10. Math and code plateau after ~700 (~0.64, "
      "~0.33), but from ~820 ifeval_strict collapses ~0.78 -> ~0.22 (long reasoning leaks into instruction-following "
      "answers and breaks the format constraints; lengths grow) and the total reward falls ~0.60 -> ~0.47. Eval every "
      "200: eval_reward 0.50, 0.55, 0.58 (600), 0.59 (800), 0.50 (1000), with eval ifeval_strict 0.77 at 800 and "
      "0.41 at 1000 while eval math is flat. The model was better overall at ~600-800: roll back (window 560-800).")
def _r7(rng, d):
    T, P, k = 1100, 2000, 10
    curves = (eased((0, .45), (700, .64), (1100, .645)), eased((0, .22), (700, .33), (1100, .33)),
              eased((0, .6), (400, .78), (820, .78), (1000, .35), (1100, .22)))
    comps, tot = multitask(rng, T, curves)
    sim = Sim(rng, T, flat(.5), prompts=64, G=8, length=eased((0, 500), (820, 560), (1100, 900)), cap=2048,
              ent=eased((0, .47), (800, .39), (1100, .45)), lr=flat(1e-6), gn=0.1, secs=62)
    sim.reward = tot
    sim.reward_std = np.sqrt(tot * (1 - tot))
    sim.zero_std = np.clip(0.3 + rng.normal(0, .03, T), 0, 1)
    rows = [(st, with_epoch(trl_grpo_row(sim, st, k, comps={t: comps[t] for t in TASKS}, sampling=True), st, 3000))
            for st in range(k, T + 1, k)]
    evv = {200: (.51, .26, .73), 400: (.57, .29, .775), 600: (.61, .315, .78), 800: (.625, .325, .77),
           1000: (.63, .32, .41)}
    eval_rows = []
    for st, vals in evv.items():
        e = {"eval_loss": 0.0, "eval_reward": round(.5 * vals[0] + .25 * vals[1] + .25 * vals[2], 4)}
        for t, v in zip(TASKS, vals, strict=True):
            e[f"eval_rewards/{t}/mean"] = v
        e.update({"eval_runtime": 590.3, "eval_samples_per_second": 1.73, "eval_steps_per_second": 0.11, "epoch": st / 3000})
        eval_rows.append((st, e))
    head = ["2026-02-14 06:01:55 [INFO] mix: math 50% / code 25% / ifeval 25%; reward funcs: math_verify, "
            "code_unit_tests, ifeval_strict (each returns None off-task)",
            "2026-02-14 06:01:55 [INFO] GRPOConfig(max_steps=2000, logging_steps=10, eval_steps=200, save_steps=200, "
            "beta=0.0, num_generations=8, max_completion_length=2048)"]
    write_trl_console(d / "train_mix.out", head, rows, eval_rows, P, 62.0)


@case("h5-bad-peak-decline-openrlhf-tb", 5208, rollback(750, 1050, 1080),
      "openrlhf grpo tensorboard peak_decline entropy_rise length_growth truncation checkpoints",
      "OpenRLHF GRPO TensorBoard (tensorboard/<run_name>/, train/* and eval/* tags), 1500 of 2500 steps, logging "
      "every step. train/reward peaks ~0.68-0.69 around 850-1050 and slides to ~0.55 by 1500 while entropy_loss climbs "
      "back 0.31 -> ~0.52, response_length grows toward the 3072 cap (truncated 0.01 -> ~0.25) and kl triples. "
      "eval/eval_aime_math_pass1 every 150 (500 problems, sd ~0.022): ... 0.60 (750), 0.62 (900), 0.61 (1050), "
      "0.55 (1200), 0.51 (1350), 0.47 (1500). A real decline after a plateau: roll back to global_step1000 (window "
      "750-1050).")
def _r8(rng, d):
    T = 1500
    sim = Sim(rng, T, eased((0, .35), (900, .71), (1050, .71), (1500, .575)), prompts=32, G=8, tau=1.0, mix=(0.8, 0.12),
              length=eased((0, 900), (1050, 1150), (1500, 2500)), cap=3072, ent=eased((0, .44), (1000, .31), (1500, .52)),
              kl=eased((0, 0), (1050, .02), (1500, .065)), lr=flat(1e-6), gn=0.15, secs=88)
    sim.clipped = np.clip(eased((0, .01), (1050, .015), (1500, .25))(sim.s) + np.abs(rng.normal(0, .006, T)), 0, 1)
    ev = {150: .402, 300: .468, 450: .522, 600: .571, 750: .598, 900: .621, 1050: .612, 1200: .553, 1350: .508,
          1500: .471}
    w0 = 1771200000.0
    events = []
    for i in range(T):
        st = i + 1
        vals = {"train/" + k2: v for k2, v in openrlhf_status(sim, i).items()}
        vals["train/entropy_loss"] = float(sim.entropy[i])
        vals["train/group_reward_std"] = float(sim.group_std[i])
        vals["train/global_step"] = st
        events.append((w0 + st * 88.0, st, vals))
        if st in ev:
            events.append((w0 + st * 88.0 + 50, st, {"eval/eval_aime_math_pass1": ev[st],
                                                     "eval/eval_aime_math_pass8": min(1, ev[st] + .16),
                                                     "eval/eval_response_length_mean": float(sim.length[i] * .97),
                                                     "eval/eval_truncated_rate": float(sim.clipped[i])}))
    kit.tb_file(d / "tensorboard" / "grpo_qwen7b_math_0301" / "events.out.tfevents.1771200000.h800-node-5.61102.0", events)
    for c in range(250, T + 1, 250):
        cd = d / "ckpt" / "checkpoints_grpo" / "_actor" / f"global_step{c}"
        cd.mkdir(parents=True, exist_ok=True)
        (cd / "mp_rank_00_model_states.pt").write_bytes(b"\0" * 32)
        (cd / "client_state.json").write_text(json.dumps({"global_step": c, "episode": 0,
                                                          "total_consumed_prompts": c * 32}))
    (d / "ckpt" / "checkpoints_grpo" / "_actor" / "latest").write_text("global_step1500")


@case("h5-bad-ppo-rlhf-reward-peaks-trl-state", 5209, rollback(190, 290, 295),
      "trl ppo trainer_state reward_model over_optimisation kl_growth eos_vanishing checkpoints",
      "TRL PPOTrainer (PPOv2-style keys, one log row per update, no loss/grad_norm) trainer_state.json plus "
      "checkpoint-100..500, 500 of 1000 updates, kl_coef 0.05. objective/scores (the reward model) rises the whole "
      "way (~0.4 -> ~6.1), but objective/kl takes off after ~270 (~15 -> ~70) so objective/rlhf_reward = score - "
      "beta*KL holds its peak (~3.7-3.85) over 190-290 and then falls to ~2.7; val/num_eos_tokens drops from ~60 to ~5 of 64 "
      "(responses stop terminating) and objective/entropy falls. The RM is being over-optimised: roll back to "
      "checkpoint-200 (window 190-290).")
def _r9(rng, d):
    T = 500
    s = np.arange(1, T + 1, dtype=float)
    scores = eased((0, .4), (200, 4.2), (270, 4.6), (500, 6.1))(s) + rng.normal(0, .35, T)
    kl = np.maximum(eased((0, 0), (200, 10), (270, 15), (350, 35), (500, 70))(s) * np.exp(rng.normal(0, .08, T)), 0)
    nonscore = -0.05 * kl
    rlhf = scores + nonscore
    ent = eased((0, 40), (270, 30), (500, 14))(s) * np.exp(rng.normal(0, .04, T))
    eos = np.clip(eased((0, 61), (270, 58), (380, 20), (500, 5))(s) + rng.normal(0, 2, T), 0, 64).round()
    hist = []
    for i in range(T):
        st = i + 1
        hist.append({"eps": int(rng.integers(3, 5)), "objective/kl": f32(kl[i]), "objective/entropy": f32(ent[i]),
                     "objective/non_score_reward": f32(nonscore[i]), "objective/rlhf_reward": f32(rlhf[i]),
                     "objective/scores": f32(scores[i]), "policy/approxkl_avg": f32(abs(rng.normal(.004, .002)) * (1 + st / 200)),
                     "policy/clipfrac_avg": f32(abs(rng.normal(.02, .006)) * (1 + st / 300)),
                     "loss/policy_avg": f32(rng.normal(-.01, .01)), "loss/value_avg": f32(abs(rng.normal(.3, .1)) * (1 + st / 150)),
                     "val/clipfrac_avg": f32(abs(rng.normal(.05, .02))), "policy/entropy_avg": f32(ent[i] / 40 * 1.1),
                     "val/ratio": f32(1 + rng.normal(0, .01) * (1 + st / 200)), "val/ratio_var": f32(abs(rng.normal(3e-4, 1e-4)) * (1 + st / 100)),
                     "val/num_eos_tokens": int(eos[i]), "lr": float(3e-6 * (1 - i / 1000)), "episode": st * 64,
                     "epoch": round(st * 64 / 64000, 4), "step": st})
    write_trl_dir(d, hist, global_step=T, max_steps=1000, logging_steps=1, save_steps=100, eval_steps=None,
                  ckpts=(100, 200, 300, 400, 500), top_level=True, adapter=False)


# ==================================================================================================== build

HEADER = ("# Holdout set 5: hand-built runs written by make_holdout5.py (independent of the assessor, its judges and\n"
          "# holdouts 1-4). Labels: what a practitioner should do with each run (DESIGN.md decision contract);\n"
          "# rollback_window is inclusive.\n")


def main() -> None:
    runs = HERE / "runs"
    kit.fresh_runs(runs, "make_holdout5.py")
    entries, skipped = [], []
    for c in CASES:
        folder = runs / c["name"]
        rng = np.random.default_rng(c["seed"])
        try:
            c["fn"](rng, folder)
        except kit.Skip as why:
            shutil.rmtree(folder, ignore_errors=True)
            skipped.append(f"{c['name']}: {why}")
            continue
        entries.append(kit.case_entry(c["name"], f"runs/{c['name']}", c["labels"], ["holdout5", *c["tags"].split()],
                                      c["why"]))
    kit.write_case_file(HERE / "holdout5.yaml", HEADER, entries)
    healthy = sum(bool(e.get("healthy")) for e in entries)
    print(f"{len(entries)} cases ({healthy} healthy) in {HERE / 'holdout5.yaml'}")
    for line in skipped:
        print(f"SKIPPED {line}")


if __name__ == "__main__":
    main()
