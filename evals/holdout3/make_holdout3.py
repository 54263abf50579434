#!/work/venv/bin/python
"""Holdout set 3: ~30 hand-built RL post-training runs in varied on-disk formats, with labels.

Writes runs/<case>/ and holdout3.yaml next to this file. Deterministic (fixed seeds).
Labels come from how each run is constructed (the "true" curves), judged as a practitioner would.
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import numpy as np
import yaml

ROOT = Path(__file__).resolve().parent
RUNS = ROOT / "runs"
CASES: list[dict] = []


# ----------------------------------------------------------------------------- curve helpers
def sig(t, t0, w):
    return 1.0 / (1.0 + np.exp(-(np.asarray(t, float) - t0) / w))


def sat(t, lo, hi, tau):
    return lo + (hi - lo) * (1 - np.exp(-np.asarray(t, float) / tau))


def ar1(rng, n, phi, sd):
    e = rng.normal(0, sd * math.sqrt(1 - phi * phi), n)
    x = np.zeros(n)
    x[0] = rng.normal(0, sd)
    for i in range(1, n):
        x[i] = phi * x[i - 1] + e[i]
    return x


def bmean(rng, p, n):
    p = np.clip(np.asarray(p, float), 0, 1)
    return rng.binomial(n, p) / n


def grpo_steps(
    rng, T, p, *, n=128, G=8, ent=None, kl=None, length=None, cap=1024, gn_sd=0.25, lr=1e-6, ar_sd=0.03, fmt=None
):
    """Per-step TRL-GRPO-like metrics (arrays of length T) from true curves p (reward prob), ent, kl, length."""
    s = np.arange(1, T + 1)
    pp = np.clip(p + ar1(rng, T, 0.9, ar_sd), 0.001, 0.999)
    r = bmean(rng, pp, n)
    # per-prompt difficulty spread: zero-std fraction of groups
    zs = np.clip(pp**G + (1 - pp) ** G + 0.25 * (1 - np.abs(2 * pp - 1)) ** 0.5 * 0.3 + rng.normal(0, 0.04, T), 0, 1)
    length = np.asarray(length if length is not None else np.full(T, 300.0), float)
    L = np.clip(length * np.exp(rng.normal(0, 0.06, T)), 5, cap)
    clipped = np.clip((L / cap) ** 4 + rng.normal(0, 0.005, T), 0, 1)
    d = {
        "reward": r,
        "reward_std": np.sqrt(r * (1 - r)) + rng.normal(0, 0.01, T),
        "frac_reward_zero_std": zs,
        "completions/mean_length": L,
        "completions/min_length": L * rng.uniform(0.2, 0.4, T),
        "completions/max_length": np.minimum(cap, L * rng.uniform(2.0, 3.2, T)),
        "completions/clipped_ratio": clipped,
        "completions/mean_terminated_length": L * (1 - 0.5 * clipped),
        "grad_norm": np.abs(rng.lognormal(math.log(0.2), gn_sd, T)),
        "learning_rate": lr * np.minimum(1, s / 20) * np.ones(T),
        "loss": rng.normal(0, 0.004, T) + (kl * 0.04 if kl is not None else 0),
        "clip_ratio/region_mean": np.zeros(T),
        "clip_ratio/low_mean": np.zeros(T),
        "clip_ratio/high_mean": np.zeros(T),
        "step_time": 40 + L / 20 + rng.normal(0, 2, T),
    }
    if ent is not None:
        d["entropy"] = np.asarray(ent, float) * np.exp(rng.normal(0, 0.05, T))
    if kl is not None:
        d["kl"] = np.maximum(np.asarray(kl, float) * np.exp(rng.normal(0, 0.15, T)), 1e-6)
    if fmt is None:
        d["rewards/accuracy_reward/mean"] = r
        d["rewards/accuracy_reward/std"] = d["reward_std"]
    d["num_tokens"] = np.cumsum((L + 180) * n)
    return d


def aggregate(per_step: dict, every: int, T: int, last_keys=("grad_norm", "learning_rate", "num_tokens")):
    """TRL-style logging: mean of the values since the previous log (last value for some keys)."""
    rows = []
    for end in range(every, T + 1, every):
        row = {"step": end}
        for k, v in per_step.items():
            seg = np.asarray(v[end - every : end], float)
            if k in last_keys:
                row[k] = float(seg[-1])
            else:
                ok = seg[np.isfinite(seg)]
                row[k] = float(ok.mean()) if len(ok) else float("nan")
        rows.append(row)
    return rows


def evals(rng, steps, acc, n):
    return [(int(s), float(rng.binomial(n, min(max(a, 0), 1)) / n)) for s, a in zip(steps, acc, strict=False)]


# ----------------------------------------------------------------------------- writers
def rnd(v, nd=6):
    if v is None:
        return None
    if isinstance(v, float):
        if not math.isfinite(v):
            return v
        return float(f"{v:.{nd}g}")
    return v


def trl_history(rows, eval_rows, *, steps_per_epoch, loss_round=True, eval_key_map=None, final=None):
    hist = []
    evd = dict(eval_rows)
    for row in rows:
        h = {k: rnd(v) for k, v in row.items() if k != "step"}
        if loss_round and "loss" in h and h["loss"] is not None and math.isfinite(h["loss"]):
            h["loss"] = round(h["loss"], 4)
        h["epoch"] = round(row["step"] / steps_per_epoch, 4)
        h["step"] = row["step"]
        hist.append(h)
        if row["step"] in evd:
            e = dict(evd[row["step"]])
            e["epoch"] = h["epoch"]
            e["step"] = row["step"]
            hist.append(e)
    if final:
        hist.append(final)
    return hist


def trainer_state(hist, global_step, max_steps, logging_steps, eval_steps, save_steps, steps_per_epoch):
    return {
        "best_global_step": None,
        "best_metric": None,
        "best_model_checkpoint": None,
        "epoch": round(global_step / steps_per_epoch, 4),
        "eval_steps": eval_steps,
        "global_step": global_step,
        "is_hyper_param_search": False,
        "is_local_process_zero": True,
        "is_world_process_zero": True,
        "log_history": hist,
        "logging_steps": logging_steps,
        "max_steps": max_steps,
        "num_input_tokens_seen": 0,
        "num_train_epochs": math.ceil(max_steps / steps_per_epoch),
        "save_steps": save_steps,
        "stateful_callbacks": {
            "TrainerControl": {
                "args": {
                    "should_epoch_stop": False,
                    "should_evaluate": False,
                    "should_log": False,
                    "should_save": True,
                    "should_training_stop": global_step >= max_steps,
                },
                "attributes": {},
            }
        },
        "total_flos": 0.0,
        "train_batch_size": 8,
        "trial_name": None,
        "trial_params": None,
    }


def write_trl_dir(
    d: Path,
    hist,
    *,
    global_step,
    max_steps,
    logging_steps,
    eval_steps,
    save_steps,
    steps_per_epoch,
    ckpts,
    top_level=True,
):
    d.mkdir(parents=True, exist_ok=True)
    for c in ckpts:
        cd = d / f"checkpoint-{c}"
        cd.mkdir()
        h = [x for x in hist if x.get("step", 0) <= c and "train_runtime" not in x]
        st = trainer_state(h, c, max_steps, logging_steps, eval_steps, save_steps, steps_per_epoch)
        (cd / "trainer_state.json").write_text(json.dumps(st, indent=2, sort_keys=True))
        (cd / "adapter_config.json").write_text(json.dumps({"peft_type": "LORA", "r": 16, "lora_alpha": 32}))
        (cd / "adapter_model.safetensors").write_bytes(b"\0" * 64)
        (cd / "training_args.bin").write_bytes(b"\0" * 16)
    if top_level:
        st = trainer_state(hist, global_step, max_steps, logging_steps, eval_steps, save_steps, steps_per_epoch)
        (d / "trainer_state.json").write_text(json.dumps(st, indent=2, sort_keys=True))


def fmt_np(v):
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "np.float64(nan)"
    if isinstance(v, (int, np.integer)):
        return f"np.int64({int(v)})"
    return f"np.float64({float(v)!r})"


def verl_line(step, metrics, style="np", prefix="(TaskRunner pid=2713457) "):
    parts = [f"step:{step}"]
    for k, v in metrics.items():
        if style == "np":
            parts.append(f"{k}:{fmt_np(v)}")
        else:
            parts.append(f"{k}:{'nan' if v is None or not math.isfinite(v) else f'{v:.3f}'}")
    return prefix + " - ".join(parts)


def tb_write(path: Path, scalars: list[tuple[int, str, float]], start_wall: float, step_secs: float, host="node-7"):
    """scalars: (step, tag, value). Written as legacy simple_value events via TensorBoard's own writer."""
    from tensorboard.compat.proto import event_pb2, summary_pb2
    from tensorboard.summary.writer.event_file_writer import EventFileWriter

    path.mkdir(parents=True, exist_ok=True)
    w = EventFileWriter(str(path), filename_suffix="")
    # The writer names the file with the current time; rename it afterwards to keep order deterministic-ish.
    by_step: dict[int, list] = {}
    for s, tag, v in scalars:
        by_step.setdefault(s, []).append((tag, v))
    for s in sorted(by_step):
        vals = [summary_pb2.Summary.Value(tag=t, simple_value=float(v)) for t, v in by_step[s]]
        ev = event_pb2.Event(wall_time=start_wall + s * step_secs, step=s, summary=summary_pb2.Summary(value=vals))
        w.add_event(ev)
    w.close()
    files = sorted(path.glob("events.out.tfevents.*"))
    newest = max(files, key=lambda p: p.stat().st_mtime)
    target = path / f"events.out.tfevents.{int(start_wall)}.{host}.{1000 + int(start_wall) % 9000}.0"
    newest.rename(target)
    return target


def write_csv(p: Path, header, rows, crlf=False):
    nl = "\r\n" if crlf else "\n"
    with open(p, "w", newline="") as f:
        f.write(",".join(header) + nl)
        for r in rows:
            f.write(
                ",".join(
                    "" if r.get(h) is None else (f"{r[h]:.6f}" if isinstance(r[h], float) else str(r[h]))
                    for h in header
                )
                + nl
            )


def add_case(name, **kw):
    c = {"name": name, "path": f"runs/{name}"}
    c.update(kw)
    CASES.append(c)


def rundir(name):
    d = RUNS / name
    d.mkdir(parents=True, exist_ok=True)
    return d


# ----------------------------------------------------------------------------- TRL GRPO helpers
def trl_eval_row(acc, L=None, rng=None):
    e = {
        "eval_reward": acc,
        "eval_rewards/accuracy_reward/mean": acc,
        "eval_runtime": round(float(rng.uniform(180, 240)), 2) if rng is not None else 200.0,
        "eval_samples_per_second": 2.4,
        "eval_steps_per_second": 0.3,
    }
    if L is not None:
        e["eval_completions/mean_length"] = L
    return e


def trl_console_dict(row, epoch):
    out = {}
    for k, v in row.items():
        if k == "step":
            continue
        out[k] = rnd(v) if not (isinstance(v, float) and math.isnan(v)) else float("nan")
    if "loss" in out and math.isfinite(out["loss"]):
        out["loss"] = round(out["loss"], 4)
    out["epoch"] = round(epoch, 2)
    return repr(out)


def tqdm_bar(i, T, secs):
    pct = int(100 * i / T)
    el = int(i * secs)
    rem = int((T - i) * secs)
    return (
        f"{pct:3d}%|{'█' * (pct // 10)}{' ' * (10 - pct // 10)}| {i}/{T} [{el // 60:02d}:{el % 60:02d}<"
        f"{rem // 3600}:{(rem // 60) % 60:02d}:{rem % 60:02d}, {secs:.2f}s/it]"
    )


# ============================================================================= cases
def h_trl_state_ckpt_only():
    name = "h3-ok-trl-ckpt-only"
    rng = np.random.default_rng(101)
    T = 860
    s = np.arange(1, T + 1)
    p = sat(s, 0.22, 0.66, 380)
    d = grpo_steps(rng, T, p, ent=sat(s, 0.62, 0.41, 500), length=sat(s, 420, 310, 300), lr=1e-6)
    rows = aggregate(d, 10, T)
    ev = evals(rng, range(100, T + 1, 100), sat(np.arange(100, T + 1, 100), 0.30, 0.58, 420), 500)
    ev = [(st, trl_eval_row(a, rng=rng)) for st, a in ev]
    hist = trl_history(rows, ev, steps_per_epoch=467)
    write_trl_dir(
        rundir(name),
        hist,
        global_step=T,
        max_steps=2000,
        logging_steps=10,
        eval_steps=100,
        save_steps=200,
        steps_per_epoch=467,
        ckpts=[200, 400, 600, 800],
        top_level=False,
    )
    add_case(
        name,
        accept=["continue"],
        preferred="continue",
        healthy=True,
        tags=["trl", "grpo", "trainer_state", "checkpoints_only", "healthy"],
        reasoning="TRL GRPO output dir with only checkpoint-200..800 (no top-level trainer_state). Reward climbs "
        "0.22 -> ~0.6 and is still rising, eval accuracy 0.31 -> ~0.55 every 100 steps, entropy "
        "declines gently, lengths stable. 800/2000 steps: keep going.",
    )


def h_slow_learner_tb():
    name = "h3-ok-slow-learner-tb"
    rng = np.random.default_rng(102)
    T = 3000
    s = np.arange(1, T + 1)
    p = 0.17 + 0.13 * (s / T) ** 0.8
    pp = np.clip(p + ar1(rng, T, 0.95, 0.035), 0, 1)
    score = bmean(rng, pp, 64)
    ent = 0.95 - 0.12 * s / T + rng.normal(0, 0.02, T)
    kl = 0.0005 + 0.012 * s / T
    sc = []
    for i in range(T):
        st = i + 1
        sc += [
            (st, "critic/score/mean", score[i]),
            (st, "critic/rewards/mean", score[i]),
            (st, "critic/score/max", 1.0),
            (st, "critic/score/min", 0.0),
            (st, "actor/entropy", ent[i]),
            (st, "actor/kl_loss", kl[i] * rng.lognormal(0, 0.2)),
            (st, "actor/pg_loss", rng.normal(0, 0.01)),
            (st, "actor/grad_norm", rng.lognormal(math.log(0.08), 0.3)),
            (st, "actor/pg_clipfrac", abs(rng.normal(0.002, 0.001))),
            (st, "actor/ppo_kl", rng.normal(0, 2e-4)),
            (st, "actor/lr", 5e-7),
            (st, "response_length/mean", 380 + 40 * st / T + rng.normal(0, 15)),
            (st, "response_length/clip_ratio", abs(rng.normal(0.004, 0.003))),
            (st, "timing_s/step", 55 + rng.normal(0, 3)),
            (st, "timing_s/gen", 33 + rng.normal(0, 2)),
        ]
    vs = np.arange(0, T + 1, 100)
    for st, a in evals(rng, vs, 0.185 + 0.105 * (vs / T) ** 0.8, 1319):
        sc.append((int(st), "val-core/openai/gsm8k/reward/mean@1", a))
    tb_write(rundir(name) / "tensorboard_log" / "gsm8k_grpo" / "qwen05b_lr5e-7", sc, 1751000000, 55)
    add_case(
        name,
        accept=["continue"],
        preferred="continue",
        healthy=True,
        tags=["verl", "grpo", "tensorboard", "slow_learner", "lookalike_never_learns", "heavy_noise"],
        reasoning="A small model with a small LR: per-step score is very noisy (batch of 64, sd ~0.06) and "
        "gains only ~0.12 over 3000 steps, but the trend is steady and the validation accuracy on "
        "1319 GSM8K problems climbs monotonically 0.19 -> ~0.29 (well beyond its ~0.012 noise). "
        "Slow but real learning; stopping would waste the progress.",
    )


def h_dip_recovers_verl_console():
    name = "h3-ok-dip-recovers-verl"
    rng = np.random.default_rng(103)
    T = 700
    s = np.arange(1, T + 1)
    p = sat(s, 0.25, 0.74, 160)
    dip = np.exp(-(((s - 428) / 9.0) ** 2))
    p = p - 0.33 * dip
    ent = sat(s, 0.55, 0.38, 250) + 0.55 * dip
    L = sat(s, 280, 240, 200) + 150 * dip
    gn = rng.lognormal(math.log(0.12), 0.3, T) * (1 + 6 * dip)
    d = rundir(name)
    lines = [
        "2025-06-11 09:12:03,118 INFO worker.py:1843 -- Started a local Ray instance.",
        "(TaskRunner pid=2713457) Using dataset class: RLHFDataset",
        "(TaskRunner pid=2713457) Size of train dataloader: 233, Size of val dataloader: 1",
        "(TaskRunner pid=2713457) Total training steps: 1000",
    ]
    lines.append(verl_line(0, {"val-core/openai/gsm8k/reward/mean@1": 0.262}))
    pp = np.clip(p + ar1(rng, T, 0.8, 0.02), 0, 1)
    score = bmean(rng, pp, 256 * 5)
    for i in range(T):
        st = i + 1
        m = {
            "actor/entropy": ent[i] * rng.lognormal(0, 0.03),
            "actor/kl_loss": 0.001 + 0.02 * st / T + 0.02 * dip[i],
            "actor/kl_coef": 0.001,
            "actor/pg_loss": rng.normal(0, 0.02),
            "actor/pg_clipfrac": 0.002 + 0.01 * dip[i],
            "actor/ppo_kl": rng.normal(0, 1e-4),
            "actor/pg_clipfrac_lower": 0.0,
            "actor/grad_norm": gn[i],
            "perf/mfu/actor": 0.21,
            "actor/lr": 1e-6,
            "training/global_step": st,
            "training/epoch": st // 233,
            "critic/score/mean": score[i],
            "critic/score/max": 1.0,
            "critic/score/min": 0.0,
            "critic/rewards/mean": score[i],
            "critic/advantages/mean": rng.normal(0, 0.003),
            "critic/advantages/max": 2.47,
            "critic/advantages/min": -2.47,
            "response_length/mean": L[i] * rng.lognormal(0, 0.03),
            "response_length/max": 1024.0,
            "response_length/min": 48.0,
            "response_length/clip_ratio": 0.004 + 0.05 * dip[i],
            "prompt_length/mean": 104.3,
            "timing_s/gen": 21 + rng.normal(0, 1),
            "timing_s/step": 48 + rng.normal(0, 2),
            "perf/throughput": 2300 + rng.normal(0, 80),
        }
        if st % 25 == 0:
            m["val-core/openai/gsm8k/reward/mean@1"] = float(rng.binomial(1319, np.clip(p[i] * 0.95, 0, 1)) / 1319)
        lines.append(verl_line(st, m))
        if st % 233 == 0:
            lines.append(f"(TaskRunner pid=2713457) Training Progress:  {st // 10}%|██        | {st}/1000 [..]")
    (d / "train.log").write_text("\n".join(lines) + "\n")
    add_case(
        name,
        accept=["continue"],
        preferred="continue",
        healthy=True,
        tags=["verl", "grpo", "verl_console", "dip_recovers", "lookalike_collapse"],
        reasoning="Score reaches ~0.7 by step 300, then around step 415-445 it dips to ~0.4 with an entropy "
        "spike, longer answers and a grad-norm burst, and fully recovers by ~460 and keeps edging up "
        "to ~0.74 at 700/1000. Validation (every 25) follows the same dip and recovery. A transient "
        "instability that healed itself: continue.",
    )


def h_kl_with_reward_trl_console():
    name = "h3-ok-kl-rises-with-reward"
    rng = np.random.default_rng(104)
    T = 400
    s = np.arange(1, T + 1)
    p = sat(s, 0.30, 0.70, 180)
    kl = 0.25 * (s / T) ** 1.1 + 0.002
    d = grpo_steps(rng, T, p, n=64, ent=sat(s, 0.8, 0.55, 300), kl=kl, length=sat(s, 190, 260, 200), lr=1e-6, fmt=True)
    d["rewards/correctness/mean"] = d["reward"]
    d["rewards/correctness/std"] = d["reward_std"]
    rows = aggregate(d, 5, T)
    lines = [
        "=== rloo_run  START=Tue Mar  3 11:02:44 UTC 2026 ===",
        "[INFO] Training with RLOO (beta=0.05, num_generations=4) on Qwen2.5-1.5B-Instruct",
    ]
    for r in rows:
        st = r["step"]
        lines.append("\r".join(tqdm_bar(j, 934, 7.3) for j in range(st - 4, st + 1)))
        lines.append(trl_console_dict(r, st / 934))
    (rundir(name) / "rloo_train.log").write_text("\n".join(lines) + "\n")
    add_case(
        name,
        accept=["continue"],
        preferred="continue",
        healthy=True,
        tags=["trl", "rloo", "trl_console", "kl_with_reward", "lookalike_kl_drift"],
        reasoning="RLOO with beta 0.05: KL to the reference climbs steadily 0 -> ~0.25 over 400 steps, but reward "
        "rises in step with it (0.30 -> ~0.67) and entropy declines gently. The policy is moving "
        "because it is improving; the KL level is moderate. Continue (the run is at 400 of ~934 steps).",
    )


def h_eval_wobble():
    name = "h3-ok-eval-wobble"
    rng = np.random.default_rng(105)
    T = 600
    s = np.arange(1, T + 1)
    p = sat(s, 0.38, 0.62, 260)
    d = grpo_steps(rng, T, p, ent=sat(s, 0.7, 0.5, 300), length=np.full(T, 350.0))
    rows = aggregate(d, 10, T)
    acc = [0.405, 0.43, 0.455, 0.44, 0.475, 0.46, 0.49, 0.465, 0.485, 0.50, 0.47, 0.48]
    ev = [(50 * (i + 1), trl_eval_row(a, rng=rng)) for i, a in enumerate(acc)]
    hist = trl_history(rows, ev, steps_per_epoch=1000)
    write_trl_dir(
        rundir(name),
        hist,
        global_step=T,
        max_steps=1000,
        logging_steps=10,
        eval_steps=50,
        save_steps=200,
        steps_per_epoch=1000,
        ckpts=[200, 400, 600],
        top_level=True,
    )
    add_case(
        name,
        accept=["continue"],
        preferred="continue",
        healthy=True,
        tags=["trl", "grpo", "trainer_state", "eval_wobble", "lookalike_eval_hacking"],
        reasoning="Eval on 200 held-out problems (sd ~3.5 points) wobbles 40.5 -> 50.0 with several 1.5-3 point "
        "drops (last: 50.0 -> 47.0 -> 48.0). The drops are within noise and the trend is up, while "
        "train reward rises smoothly 0.38 -> ~0.6. 600/1000 steps: continue.",
    )


def h_verl_console_resume():
    name = "h3-ok-verl-resume-dups"
    rng = np.random.default_rng(106)
    T = 520
    s = np.arange(1, T + 1)
    p = sat(s, 0.12, 0.58, 200)
    pp = np.clip(p + ar1(rng, T, 0.85, 0.03), 0, 1)
    d = rundir(name)

    def block(rng, lo, hi, pid):
        out = [
            verl_line(
                lo - 1 if lo > 1 else 0,
                {"val-core/openai/gsm8k/acc/mean@1": float(rng.binomial(1319, p[max(lo - 2, 0)] * 0.92) / 1319)},
                style="plain",
                prefix=f"(TaskRunner pid={pid}) ",
            )
        ]
        for st in range(lo, hi + 1):
            i = st - 1
            sc = float(rng.binomial(512, pp[i]) / 512)
            m = {
                "actor/pg_loss": rng.normal(0, 0.01),
                "actor/entropy": 0.7 - 0.25 * st / T + rng.normal(0, 0.02),
                "actor/kl_loss": 0.001 + 0.03 * st / T * rng.lognormal(0, 0.2),
                "actor/pg_clipfrac": 0.003,
                "actor/ppo_kl": 0.0,
                "actor/grad_norm": rng.lognormal(math.log(0.15), 0.3),
                "actor/lr": 1e-6,
                "critic/score/mean": sc,
                "critic/score/max": 1.0,
                "critic/score/min": 0.0,
                "critic/rewards/mean": sc,
                "critic/advantages/mean": 0.0,
                "response_length/mean": 210 + rng.normal(0, 8),
                "response_length/clip_ratio": 0.002,
                "timing_s/step": 61 + rng.normal(0, 3),
                "timing_s/gen": 40 + rng.normal(0, 2),
            }
            if st % 20 == 0:
                m["val-core/openai/gsm8k/acc/mean@1"] = float(rng.binomial(1319, p[i] * 0.92) / 1319)
                m["timing_s/testing"] = 35.2
            if st % 100 == 0:
                m["timing_s/save_checkpoint"] = 18.4
            out.append(verl_line(st, m, style="plain", prefix=f"(TaskRunner pid={pid}) "))
        return out

    lines = ["+ python3 -m verl.trainer.main_ppo algorithm.adv_estimator=grpo trainer.total_training_steps=1200 ..."]
    lines += block(rng, 1, 347, 51234)
    lines += [
        "(raylet) [2025-07-02 03:14:55] node 10.0.0.4 died: OOM killer",
        "Traceback (most recent call last):",
        "  ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task.",
        "+ python3 -m verl.trainer.main_ppo ... trainer.resume_mode=auto",
        "(TaskRunner pid=80111) Load from checkpoint folder: checkpoints/gsm8k/q15b/global_step_300",
        "(TaskRunner pid=80111) Setting global step to 300",
    ]
    lines += block(rng, 301, T, 80111)
    (d / "run.log").write_text("\n".join(lines) + "\n")
    for c in range(100, T + 1, 100):
        cd = d / "checkpoints" / "gsm8k" / "q15b" / f"global_step_{c}" / "actor"
        cd.mkdir(parents=True)
        (cd / "model_world_size_8_rank_0.pt").write_bytes(b"\0" * 32)
    (d / "checkpoints" / "gsm8k" / "q15b" / "latest_checkpointed_iteration.txt").write_text("500")
    add_case(
        name,
        accept=["continue"],
        preferred="continue",
        healthy=True,
        tags=["verl", "grpo", "verl_console", "resume", "duplicate_steps", "checkpoints"],
        reasoning="verl console appended across an OOM crash: steps 1-347, then a resume from global_step_300 "
        "re-logs 301-347. Both segments show the same healthy trend: score 0.12 -> ~0.55, val acc "
        "rising every 20 steps, entropy slowly down, tiny KL. Continue (520 of 1200 steps).",
    )


def h_verl_jsonl():
    name = "h3-ok-verl-jsonl-short"
    rng = np.random.default_rng(107)
    T = 150
    s = np.arange(1, T + 1)
    p = sat(s, 0.35, 0.62, 70)
    pp = np.clip(p + ar1(rng, T, 0.7, 0.03), 0, 1)
    d = rundir(name) / "gsm8k_dapo"
    d.mkdir()
    out = [
        json.dumps(
            {
                "step": 0,
                "data": {
                    "val-core/openai/gsm8k/reward/mean@4": 0.361,
                    "val-core/openai/gsm8k/reward/best@4/mean": 0.55,
                },
            }
        )
    ]
    for st in s:
        i = st - 1
        sc = float(rng.binomial(1024, pp[i]) / 1024)
        m = {
            "training/global_step": int(st),
            "training/epoch": 0,
            "critic/score/mean": sc,
            "critic/score/max": 1.0,
            "critic/score/min": -1.0,
            "critic/rewards/mean": sc,
            "actor/entropy": 0.52 - 0.1 * st / T + rng.normal(0, 0.01),
            "actor/pg_loss": rng.normal(0, 0.02),
            "actor/pg_clipfrac": 0.0011 + abs(rng.normal(0, 3e-4)),
            "actor/pg_clipfrac_lower": 0.0,
            "actor/ppo_kl": rng.normal(0, 3e-5),
            "actor/grad_norm": float(rng.lognormal(math.log(0.2), 0.35)),
            "actor/lr": 1e-6,
            "response_length/mean": 610 + 80 * st / T + rng.normal(0, 20),
            "response_length/max": 2048,
            "response_length/clip_ratio": 0.01 + abs(rng.normal(0, 0.004)),
            "train/num_gen_batches": int(rng.integers(1, 3)),
            "timing_s/gen": 95 + rng.normal(0, 5),
            "timing_s/step": 160 + rng.normal(0, 6),
            "perf/throughput": 1450 + rng.normal(0, 60),
        }
        if st in (37, 38, 112):
            m["actor/grad_norm"] = None  # orjson writes NaN as null
        if st % 10 == 0:
            m["val-core/openai/gsm8k/reward/mean@4"] = float(rng.binomial(1319 * 4, p[i] * 0.95) / (1319 * 4))
            m["val-core/openai/gsm8k/reward/best@4/mean"] = min(1.0, m["val-core/openai/gsm8k/reward/mean@4"] + 0.2)
        out.append(json.dumps({"step": int(st), "data": m}))
    (d / "dapo_q7b_bs1024.jsonl").write_text("\n".join(out) + "\n")
    add_case(
        name,
        accept=["continue"],
        preferred="continue",
        healthy=True,
        tags=["verl", "dapo", "verl_jsonl", "nulls", "short"],
        reasoning="verl file-logger JSONL, DAPO, 150 steps: score 0.35 -> ~0.6, val mean@4 rising every 10 steps, "
        "tiny clip fractions, lengths growing slowly and far below the cap. Three null grad norms "
        "(NaN via orjson) are isolated. Healthy and early: continue.",
    )


def h_short_tb_openrlhf():
    name = "h3-ok-short-40-openrlhf-tb"
    rng = np.random.default_rng(108)
    T = 40
    s = np.arange(1, T + 1)
    p = sat(s, 0.10, 0.30, 40)
    r = bmean(rng, p, 128)
    sc = []
    for i in range(T):
        st = i + 1
        sc += [
            (st, "train/reward", r[i]),
            (st, "train/return", r[i] - 0.002 * st / T),
            (st, "train/policy_loss", rng.normal(0, 0.05)),
            (st, "train/kl", 0.0004 * st * rng.lognormal(0, 0.2)),
            (st, "train/response_length", 520 + rng.normal(0, 25)),
            (st, "train/total_length", 700 + rng.normal(0, 25)),
            (st, "train/actor_lr", 5e-7 * min(1, st / 5)),
            (st, "train/actor_grad_norm", rng.lognormal(math.log(0.3), 0.3)),
            (st, "train/ppo_clip_ratio", abs(rng.normal(0.01, 0.004))),
            (st, "train/group_reward_std", 0.22 + rng.normal(0, 0.02)),
            (st, "train/global_step", st),
        ]
    tb_write(rundir(name) / "logs" / "reinforce_pp_qwen7b", sc, 1752100000, 70)
    add_case(
        name,
        accept=["continue"],
        preferred="continue",
        healthy=True,
        tags=["openrlhf", "reinforce++", "tensorboard", "short", "early"],
        reasoning="Only 40 steps of an OpenRLHF REINFORCE++ run: noisy reward drifting 0.1 -> ~0.25, tiny KL, "
        "stable grad norm and lengths. Far too early for anything but continue.",
    )


def h_long_5000_tb():
    name = "h3-ok-long-5000-tb"
    rng = np.random.default_rng(109)
    T = 5000
    s = np.arange(1, T + 1)
    p = sat(s, 0.30, 0.79, 1400)
    d = grpo_steps(
        rng,
        T,
        p,
        n=96,
        ent=sat(s, 0.75, 0.42, 2000),
        kl=0.002 + 0.09 * (s / T),
        length=sat(s, 300, 420, 2500),
        ar_sd=0.05,
    )
    rows = aggregate(d, 10, T)
    sc = []
    for r in rows:
        for k, v in r.items():
            if k != "step":
                sc.append((r["step"], "train/" + k, v))
        sc.append((r["step"], "train/epoch", r["step"] / 2500))
        sc.append((r["step"], "train/global_step", r["step"]))
    for st, a in evals(rng, range(250, T + 1, 250), sat(np.arange(250, T + 1, 250), 0.32, 0.70, 1500), 1000):
        sc.append((st, "eval/reward", a))
        sc.append((st, "eval/runtime", 410.0))
    tb_write(rundir(name) / "runs" / "Jan14_02-11-47_gpu-node-3", sc, 1736820707, 62)
    add_case(
        name,
        accept=["continue"],
        preferred="continue",
        healthy=True,
        tags=["trl", "grpo", "tensorboard", "long", "autocorrelated_noise"],
        reasoning="5000 steps of TRL GRPO seen through TensorBoard (train/ and eval/ tags), logging every 10. "
        "Autocorrelated noise, but reward climbs 0.3 -> ~0.77 and eval 0.33 -> ~0.68 with the last "
        "evals still inching up; KL grows linearly to ~0.09, entropy eases down. Planned 6000 "
        "(epoch 2.4): continue.",
    )


def h_spikes_nan():
    name = "h3-ok-spikes-nan"
    rng = np.random.default_rng(110)
    T = 1000
    s = np.arange(1, T + 1)
    p = sat(s, 0.40, 0.72, 350)
    d = grpo_steps(rng, T, p, ent=sat(s, 0.5, 0.33, 400), length=np.full(T, 520.0), gn_sd=0.5)
    for i in rng.choice(np.arange(50, T), 14, replace=False):
        d["grad_norm"][i] *= rng.uniform(10, 40)
    d["grad_norm"][[284, 689]] = np.nan
    rows = aggregate(d, 5, T)
    for r in rows:
        if r["step"] in (455, 870):
            for k in ("reward", "reward_std", "rewards/accuracy_reward/mean", "rewards/accuracy_reward/std"):
                r[k] = None
    ev = [
        (st, trl_eval_row(a, rng=rng))
        for st, a in evals(rng, range(250, T + 1, 250), sat(np.arange(250, T + 1, 250), 0.45, 0.66, 350), 800)
    ]
    hist = trl_history(rows, ev, steps_per_epoch=1250)
    write_trl_dir(
        rundir(name),
        hist,
        global_step=T,
        max_steps=2500,
        logging_steps=5,
        eval_steps=250,
        save_steps=250,
        steps_per_epoch=1250,
        ckpts=[250, 500, 750, 1000],
        top_level=False,
    )
    add_case(
        name,
        accept=["continue"],
        preferred="continue",
        healthy=True,
        tags=["trl", "grpo", "trainer_state", "grad_spikes", "nan", "null"],
        reasoning="Reward rises 0.40 -> ~0.7 and eval 0.47 -> ~0.65, entropy slowly down. Grad norm has 14 "
        "isolated spikes of 10-40x and two NaN values, and two log rows have null reward (all-NaN "
        "metrics); none is followed by any change in reward, entropy or length. Logging noise and "
        "harmless spikes: continue (1000 of 2500).",
    )


def h_trl_console_grpo():
    name = "h3-ok-trl-console-grpo"
    rng = np.random.default_rng(111)
    T = 200
    s = np.arange(1, T + 1)
    p = sat(s, 0.55, 0.82, 120)
    d = grpo_steps(
        rng, T, p, n=16, G=8, ent=sat(s, 0.35, 0.22, 150), length=sat(s, 260, 215, 100), lr=2e-5, fmt=True, ar_sd=0.02
    )
    d["rewards/reward_fn/mean"] = d["reward"]
    d["rewards/reward_fn/std"] = d["reward_std"]
    d["sampling/sampling_logp_difference/mean"] = 0.01 + rng.normal(0, 0.001, T)
    d["sampling/importance_sampling_ratio/mean"] = 0.93 + rng.normal(0, 0.01, T)
    rows = aggregate(d, 5, T)
    lines = [
        "=== grpo_lora  GPU=0  START=Sat Apr 11 02:14:09 PM UTC 2026 ===",
        "2026-04-11 14:14:15,002 [INFO] train: Model: Qwen/Qwen2.5-7B-Instruct, max_steps=500",
    ]
    buf = ""
    for r in rows:
        st = r["step"]
        for j in range(st - 4, st + 1):
            buf += "  " + tqdm_bar(j, 500, 3.4)
        lines.append(buf)
        buf = ""
        lines.append(trl_console_dict(r, st / 934))
    (rundir(name) / "train_seed7.log").write_text("\n".join(lines) + "\n")
    add_case(
        name,
        accept=["continue"],
        preferred="continue",
        healthy=True,
        tags=["trl", "grpo", "trl_console", "lora"],
        reasoning="TRL console (dict lines every 5 steps among tqdm bars), 200 of 500 steps of LoRA GRPO on "
        "GSM8K: reward 0.55 -> ~0.8, still rising, zero-std fraction grows as the task gets easier "
        "but is not yet saturated. Healthy: continue.",
    )


def h_dpo():
    name = "h3-ok-dpo"
    rng = np.random.default_rng(112)
    T = 600
    s = np.arange(1, T + 1)
    acc = sat(s, 0.5, 0.76, 180)
    margin = sat(s, 0.0, 1.6, 250)
    chosen = -0.2 * s / T
    per = {
        "loss": np.log1p(np.exp(-margin)) + rng.normal(0, 0.05, T) + (0.693 - math.log(2)),
        "grad_norm": rng.lognormal(math.log(6), 0.4, T),
        "learning_rate": 5e-7 * np.minimum(1, s / 30),
        "rewards/chosen": chosen + margin / 2 + rng.normal(0, 0.2, T),
        "rewards/rejected": chosen - margin / 2 + rng.normal(0, 0.2, T),
        "rewards/accuracies": np.clip(acc + rng.normal(0, 0.08, T), 0, 1),
        "logps/chosen": -260 - 15 * s / T + rng.normal(0, 25, T),
        "logps/rejected": -290 - 40 * s / T + rng.normal(0, 25, T),
        "logits/chosen": -2.4 + rng.normal(0, 0.2, T),
        "logits/rejected": -2.5 + rng.normal(0, 0.2, T),
    }
    per["rewards/margins"] = per["rewards/chosen"] - per["rewards/rejected"]
    rows = aggregate(per, 10, T)
    ev = []
    for st in range(100, T + 1, 100):
        m = 1.6 * (1 - math.exp(-st / 250))
        ev.append(
            (
                st,
                {
                    "eval_loss": round(math.log1p(math.exp(-m * 0.85)) + rng.normal(0, 0.006), 4),
                    "eval_rewards/accuracies": round(0.5 + 0.22 * (1 - math.exp(-st / 200)) + rng.normal(0, 0.01), 4),
                    "eval_rewards/margins": m * 0.85,
                    "eval_runtime": 88.1,
                },
            )
        )
    hist = trl_history(rows, ev, steps_per_epoch=900)
    write_trl_dir(
        rundir(name),
        hist,
        global_step=T,
        max_steps=900,
        logging_steps=10,
        eval_steps=100,
        save_steps=200,
        steps_per_epoch=900,
        ckpts=[200, 400, 600],
        top_level=False,
    )
    add_case(
        name,
        accept=["continue"],
        preferred="continue",
        healthy=True,
        tags=["trl", "dpo", "trainer_state", "checkpoints"],
        reasoning="DPO, one epoch of 900 steps, now at 600: train loss 0.69 -> ~0.3, accuracies 0.5 -> ~0.75, "
        "margins growing; eval loss falls 0.62 -> ~0.43 and eval accuracy rises at every eval. "
        "logps/chosen drifts down only slightly. Healthy: continue.",
    )


def h_csv_rasbt():
    name = "h3-ok-csv-rasbt"
    rng = np.random.default_rng(113)
    T = 350
    s = np.arange(1, T + 1)
    p = sat(s, 0.15, 0.55, 120)
    pp = np.clip(p + ar1(rng, T, 0.6, 0.05), 0, 1)
    r = bmean(rng, pp, 8)
    rows = []
    accs = {1: 15.6}
    for st in range(50, T + 1, 50):
        accs[st] = round(100 * rng.binomial(500, min(0.16 + 0.30 * (1 - math.exp(-st / 110)), 1)) / 500, 1)
    for i in range(T):
        st = i + 1
        adv_std = 0.0 if r[i] in (0.0, 1.0) else 0.9997
        L = max(20, 420 + 250 * st / T + rng.normal(0, 120))
        rows.append(
            {
                "step": st,
                "total_steps": 500,
                "loss": 0.0 if adv_std == 0 else float(rng.normal(0, 0.8)),
                "kl_loss": float(0.02 * st / T + rng.normal(0, 0.02)),
                "policy_ratio": None if adv_std == 0 else float(rng.lognormal(0, 0.15)),
                "reward_avg": float(r[i]),
                "tokens_per_sec": float(24 + rng.normal(0, 2)),
                "avg_response_len": float(L),
                "adv_avg": 0.0,
                "adv_std": adv_std,
                "entropy_avg": float(0.45 - 0.1 * st / T + rng.normal(0, 0.05)),
                "eval_acc": accs.get(st),
            }
        )
    hdr = [
        "step",
        "total_steps",
        "loss",
        "kl_loss",
        "policy_ratio",
        "reward_avg",
        "tokens_per_sec",
        "avg_response_len",
        "adv_avg",
        "adv_std",
        "entropy_avg",
        "eval_acc",
    ]
    write_csv(rundir(name) / "7_5_plus_kl_metrics.csv", hdr, rows, crlf=True)
    add_case(
        name,
        accept=["continue"],
        preferred="continue",
        healthy=True,
        tags=["rasbt", "grpo", "csv", "crlf", "heavy_noise"],
        reasoning="Book-style CSV (8 rollouts/step, so reward_avg jumps in steps of 0.125), 350/500 steps: "
        "reward trend 0.15 -> ~0.5, MATH-500 eval_acc 15.6 -> ~44 over the 50-step checkpoints, "
        "entropy eases down, lengths grow moderately, KL small. Noisy but clearly healthy: continue.",
    )


def h_plain_jsonl_adhoc():
    name = "h3-ok-plain-jsonl-adhoc"
    rng = np.random.default_rng(114)
    T = 1200
    s = np.arange(1, T + 1)
    p = sat(s, 0.05, 0.41, 500)
    pp = np.clip(p + ar1(rng, T, 0.9, 0.025), 0, 1)
    out = []
    for it in range(10, T + 1, 10):
        i = it - 1
        rec = {
            "it": it,
            "avg_reward": round(float(rng.binomial(256, pp[i]) / 256), 4),
            "kl_div": round(0.0005 + 0.04 * (it / T) * float(rng.lognormal(0, 0.25)), 5),
            "ent": round(1.1 - 0.3 * it / T + float(rng.normal(0, 0.03)), 4),
            "resp_len": round(700 + float(rng.normal(0, 40))),
            "lr": 3e-7,
            "gnorm": round(float(rng.lognormal(-1, 0.3)), 4),
            "wall": round(1_700_000_000 + it * 31.4, 1),
        }
        if it % 100 == 0:
            rec["heldout_pass@1"] = round(float(rng.binomial(400, min(1, pp[i] * 0.9 + 0.02)) / 400), 4)
        out.append(json.dumps(rec))
    d = rundir(name)
    (d / "metrics.jsonl").write_text("\n".join(out) + "\n")
    (d / "notes.txt").write_text(
        "reinforce++ baseline, Llama-3.1-8B-Instruct, code tasks, custom loop; lr 3e-7; planned 3000 iterations\n"
    )
    add_case(
        name,
        accept=["continue"],
        preferred="continue",
        healthy=True,
        tags=["plain_jsonl", "adhoc_names", "reinforce++"],
        reasoning="Home-made loop with ad-hoc keys (it, avg_reward, kl_div, ent, heldout_pass@1). Reward rises "
        "from 0.05 to ~0.4 and held-out pass@1 every 100 iterations climbs with it; KL small and "
        "growing slowly, entropy easing. 1200 of 3000 planned: continue.",
    )


def h_length_growth():
    name = "h3-ok-length-growth-dapo"
    rng = np.random.default_rng(115)
    T = 420
    s = np.arange(1, T + 1)
    p = sat(s, 0.18, 0.46, 220)
    pp = np.clip(p + ar1(rng, T, 0.85, 0.02), 0, 1)
    L = 600 + 2000 * (s / T) ** 1.2
    lines = ["(TaskRunner pid=91) Total training steps: 1000", verl_line(0, {"val-core/math_dapo/acc/mean@32": 0.172})]
    for st in s:
        i = st - 1
        sc = float(rng.binomial(512 * 16, pp[i]) / (512 * 16))
        m = {
            "critic/score/mean": 2 * sc - 1,
            "critic/score/max": 1.0,
            "critic/score/min": -1.0,
            "critic/rewards/mean": 2 * sc - 1,
            "actor/entropy": 0.42 + 0.03 * math.sin(st / 30) + rng.normal(0, 0.01),
            "actor/pg_loss": rng.normal(0, 0.01),
            "actor/pg_clipfrac": 0.0015,
            "actor/ppo_kl": rng.normal(0, 1e-5),
            "actor/grad_norm": rng.lognormal(math.log(0.15), 0.25),
            "actor/lr": 1e-6,
            "response_length/mean": L[i] * rng.lognormal(0, 0.03),
            "response_length/max": 8192.0,
            "response_length/clip_ratio": 0.002 + 0.02 * (L[i] / 2600) ** 3 + abs(rng.normal(0, 0.002)),
            "train/num_gen_batches": int(rng.integers(1, 4)),
            "timing_s/gen": 200 + L[i] / 10,
            "timing_s/step": 320 + L[i] / 8,
        }
        if st % 20 == 0:
            m["val-core/math_dapo/acc/mean@32"] = float(rng.binomial(30 * 32, p[i] * 0.95) / (30 * 32))
        lines.append(verl_line(int(st), m))
    (rundir(name) / "dapo_qwen2.5_32b.log").write_text("\n".join(lines) + "\n")
    add_case(
        name,
        accept=["continue"],
        preferred="continue",
        healthy=True,
        tags=["verl", "dapo", "verl_console", "length_growth", "lookalike_length_explosion"],
        reasoning="DAPO on math with an 8192 cap: mean response length grows 600 -> ~2600 (the familiar "
        "reasoning-length growth), but only ~2% of responses are truncated, entropy is steady, and "
        "score (-1/1 scale) and AIME-style val acc@32 both rise. Length growth alongside rising "
        "accuracy is healthy: continue.",
    )


def h_entropy_decline():
    name = "h3-ok-entropy-decline"
    rng = np.random.default_rng(116)
    T = 700
    s = np.arange(1, T + 1)
    p = sat(s, 0.32, 0.70, 260)
    ent = 0.25 + 0.65 * np.exp(-s / 300)
    d = grpo_steps(rng, T, p, ent=ent, length=sat(s, 480, 390, 300), kl=0.001 + 0.05 * s / T)
    rows = aggregate(d, 10, T)
    ev = [
        (st, trl_eval_row(a, rng=rng))
        for st, a in evals(rng, range(100, T + 1, 100), sat(np.arange(100, T + 1, 100), 0.35, 0.64, 280), 500)
    ]
    hist = trl_history(rows, ev, steps_per_epoch=700)
    write_trl_dir(
        rundir(name),
        hist,
        global_step=T,
        max_steps=1400,
        logging_steps=10,
        eval_steps=100,
        save_steps=100,
        steps_per_epoch=700,
        ckpts=[500, 600, 700],
        top_level=True,
    )
    add_case(
        name,
        accept=["continue"],
        preferred="continue",
        healthy=True,
        tags=["trl", "grpo", "trainer_state", "entropy_decline", "lookalike_entropy_collapse"],
        reasoning="Entropy falls smoothly 0.9 -> ~0.35 (a 60% drop) but never near zero, while reward 0.32 -> "
        "~0.68 and eval 0.37 -> ~0.62 keep rising and the zero-std fraction stays moderate. Normal "
        "sharpening of a learning policy: continue (700/1400).",
    )


def h_mlflow():
    name = "h3-ok-mlflow"
    rng = np.random.default_rng(117)
    T = 800
    s = np.arange(1, T + 1)
    p = sat(s, 0.28, 0.60, 300)
    d = grpo_steps(rng, T, p, ent=sat(s, 0.66, 0.49, 300), length=np.full(T, 400.0), kl=0.001 + 0.04 * s / T)
    rows = aggregate(d, 10, T)
    root = rundir(name) / "mlruns"
    exp = root / "412683905531"
    run = exp / "7f3c2a9be61e4b0d9d1c8e2a51f0aa93"
    (exp).mkdir(parents=True)
    (exp / "meta.yaml").write_text(
        "artifact_location: mlflow-artifacts:/412683905531\ncreation_time: 1740000000000\n"
        "experiment_id: '412683905531'\nlast_update_time: 1740000000000\n"
        "lifecycle_stage: active\nname: grpo-math\n"
    )
    (run / "metrics").mkdir(parents=True)
    (run / "params").mkdir()
    (run / "tags").mkdir()
    (run / "artifacts").mkdir()
    (run / "meta.yaml").write_text(
        "artifact_uri: mlflow-artifacts:/412683905531/7f3c2a9be61e4b0d9d1c8e2a51f0aa93/artifacts\nend_time: null\n"
        "entry_point_name: ''\nexperiment_id: '412683905531'\nlifecycle_stage: active\nrun_id: "
        "7f3c2a9be61e4b0d9d1c8e2a51f0aa93\nrun_name: grpo-qwen3-4b-lr1e-6\nsource_name: ''\nsource_type: 4\n"
        "source_version: ''\nstart_time: 1740000123000\nstatus: 1\ntags: []\nuser_id: ml\n"
    )
    (run / "tags" / "mlflow.runName").write_text("grpo-qwen3-4b-lr1e-6")
    (run / "params" / "max_steps").write_text("2000")
    (run / "params" / "learning_rate").write_text("1e-06")
    files: dict[str, list[str]] = {}
    t0 = 1740000123000
    for r in rows:
        for k, v in r.items():
            if k == "step":
                continue
            files.setdefault(k, []).append(f"{t0 + r['step'] * 45000} {v!r} {r['step']}")
        files.setdefault("epoch", []).append(f"{t0 + r['step'] * 45000} {r['step'] / 1000!r} {r['step']}")
    for st, a in evals(rng, range(200, T + 1, 200), sat(np.arange(200, T + 1, 200), 0.30, 0.57, 300), 500):
        files.setdefault("eval_reward", []).append(f"{t0 + st * 45000 + 9000} {a!r} {st}")
    for k, lines in files.items():
        f = run / "metrics" / k
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text("\n".join(lines) + "\n")
    add_case(
        name,
        accept=["continue"],
        preferred="continue",
        healthy=True,
        tags=["trl", "grpo", "mlflow", "file_store"],
        reasoning="MLflow file store (HF callback raw keys, nested dirs for completions/ and rewards/): reward "
        "0.28 -> ~0.58 still rising, eval 0.32 -> ~0.55, small KL, stable lengths. 800/2000: continue.",
    )


def h_hard_task_nemo():
    name = "h3-ok-hard-task-nemo-tb"
    rng = np.random.default_rng(118)
    T = 600
    s = np.arange(1, T + 1)
    p = 0.035 + 0.13 * (s / T) ** 1.3
    pp = np.clip(p + ar1(rng, T, 0.9, 0.01), 0, 1)
    r = bmean(rng, pp, 512)
    pct0 = np.clip(100 * (1 - pp) ** 16 * 1.9 + rng.normal(0, 2, T), 0, 100)
    sc = []
    for i in range(T):
        st = i + 2  # NeMo-RL logs at total_steps + 1
        sc += [
            (st, "train/reward", r[i]),
            (st, "train/loss", rng.normal(0, 0.01)),
            (st, "train/grad_norm", rng.lognormal(math.log(0.05), 0.4)),
            (st, "train/lr", 5e-7),
            (st, "train/kl_penalty", 0.0004 + 0.006 * i / T),
            (st, "train/approx_entropy", 0.55 + rng.normal(0, 0.02)),
            (st, "train/baseline_reward/pct_0", min(pct0[i], 100)),
            (st, "train/baseline_reward/pct_1", 0.4),
            (st, "train/baseline_reward/pct_mixed", 100 - min(pct0[i], 100) - 0.4),
            (st, "train/mean_gen_tokens_per_sample", 1900 + rng.normal(0, 60)),
            (st, "train/truncation_rate", 0.03 + abs(rng.normal(0, 0.01))),
            (st, "train/token_mult_prob_error", 1.004 + abs(rng.normal(0, 0.001))),
            (st, "timing/train/total_step_time", 210 + rng.normal(0, 8)),
            (st, "timing/train/generation", 150 + rng.normal(0, 6)),
        ]
        if st % 50 == 1:
            sc.append((st, "validation/accuracy", float(rng.binomial(960, p[i]) / 960)))
    tb_write(rundir(name) / "logs" / "exp_003" / "tensorboard", sc, 1753900000, 210)
    add_case(
        name,
        accept=["continue"],
        preferred="continue",
        healthy=True,
        tags=["nemo_rl", "grpo", "tensorboard", "hard_task", "high_zero_std", "slow_learner"],
        reasoning="NeMo-RL GRPO on a hard task: reward only 0.03 -> ~0.16 and 60-90% of prompts have all-zero "
        "groups (pct_0), so the signal is sparse, but it rises, pct_0 falls, and validation accuracy "
        "every 50 steps climbs accordingly. Low-signal but learning: continue.",
    )


def h_tb_resume():
    name = "h3-ok-tb-resume-overlap"
    rng = np.random.default_rng(119)
    T = 1200
    s = np.arange(1, T + 1)
    p = sat(s, 0.2, 0.64, 400)
    pp = np.clip(p + ar1(rng, T, 0.9, 0.03), 0, 1)

    def scal(lo, hi, rng):
        out = []
        for st in range(lo, hi + 1):
            i = st - 1
            rv = float(rng.binomial(256, pp[i]) / 256)
            out += [
                (st, "train/reward", rv),
                (st, "train/kl", 0.001 + 0.06 * st / T * rng.lognormal(0, 0.2)),
                (st, "train/response_length", 330 + rng.normal(0, 12)),
                (st, "train/policy_loss", rng.normal(0, 0.03)),
                (st, "train/actor_grad_norm", rng.lognormal(math.log(0.2), 0.3)),
                (st, "train/actor_lr", 1e-6),
                (st, "train/entropy_loss", 0.6 - 0.15 * st / T + rng.normal(0, 0.01)),
                (st, "train/ppo_clip_ratio", abs(rng.normal(0.004, 0.001))),
            ]
            if st % 100 == 0:
                out.append((st, "eval/eval_math_pass1", float(rng.binomial(500, p[i] * 0.9) / 500)))
        return out

    d = rundir(name) / "tb" / "grpo_llama8b"
    tb_write(d, scal(1, 731, rng), 1754000000, 40, host="h100-a")
    tb_write(d, scal(601, T, rng), 1754000000 + 731 * 40 + 900 - 600 * 40, 40, host="h100-a")
    ck = rundir(name) / "ckpt"
    for c in (200, 400, 600, 800, 1000, 1200):
        (ck / f"global_step{c}").mkdir(parents=True)
        (ck / f"global_step{c}" / "client_state.json").write_text(json.dumps({"global_step": c, "episode": c * 256}))
    add_case(
        name,
        accept=["continue"],
        preferred="continue",
        healthy=True,
        tags=["openrlhf", "grpo", "tensorboard", "resume", "duplicate_steps", "checkpoints"],
        reasoning="OpenRLHF TensorBoard with two event files: the first run died at step 731, the resume from "
        "global_step600 re-logs 601-731. Both agree: reward 0.2 -> ~0.62, eval pass1 rising every "
        "100, small KL, steady entropy. Healthy: continue.",
    )


# ----------------------------------------------------------------------------- failing / non-healthy
def f_slow_late_degradation():
    name = "h3-bad-slow-late-degradation"
    rng = np.random.default_rng(201)
    T = 1500
    s = np.arange(1, T + 1)
    p = sat(s, 0.25, 0.69, 180) - 0.16 * np.clip((s - 850) / 650, 0, 1) ** 1.2
    ent = 0.36 + 0.22 * np.clip((s - 850) / 650, 0, 1) ** 1.2 + 0.08 * np.exp(-s / 150)
    L = 330 + 220 * np.clip((s - 850) / 650, 0, 1) ** 1.3
    d = grpo_steps(rng, T, p, ent=ent, length=L, ar_sd=0.035)
    rows = aggregate(d, 10, T)
    es = np.arange(100, T + 1, 100)
    eacc = sat(es, 0.28, 0.53, 180) - 0.12 * np.clip((es - 850) / 650, 0, 1) ** 1.2
    ev = [(st, trl_eval_row(a, rng=rng)) for st, a in evals(rng, es, eacc, 500)]
    hist = trl_history(rows, ev, steps_per_epoch=1000)
    write_trl_dir(
        rundir(name),
        hist,
        global_step=T,
        max_steps=3000,
        logging_steps=10,
        eval_steps=100,
        save_steps=100,
        steps_per_epoch=1000,
        ckpts=list(range(100, T + 1, 100)),
        top_level=False,
    )
    add_case(
        name,
        accept=["rollback", "stop"],
        preferred="rollback",
        rollback_window=[400, 1000],
        onset_step=1000,
        tags=["trl", "grpo", "trainer_state", "slow_degradation", "late", "checkpoints"],
        reasoning="Reward peaks at ~0.68 by step 500 and holds to ~850, then slides slowly to ~0.53 by 1500 "
        "while entropy creeps up 0.36 -> ~0.58 and answers lengthen 330 -> ~550. Eval (500 problems, "
        "sd ~0.022) peaks ~0.52 at 500-900 and falls to ~0.41 at 1500: a real decline of ~5 sd. The "
        "decline becomes distinguishable from noise around 950-1000. Best model is checkpoint 500-900.",
    )


def f_sudden_collapse_verl():
    name = "h3-bad-sudden-collapse-verl"
    rng = np.random.default_rng(202)
    T = 470
    C = 437
    s = np.arange(1, T + 1)
    p = sat(s, 0.3, 0.78, 90)
    post = s >= C
    p = np.where(post, 0.78 * np.exp(-(s - C) / 2.0), p)
    p = np.maximum(p, 0.02)
    pp = np.clip(p + ar1(rng, T, 0.8, 0.02), 0, 1)
    d = rundir(name)
    lines = [
        "(TaskRunner pid=553) Total training steps: 935",
        verl_line(0, {"val-core/openai/gsm8k/reward/mean@1": 0.305}),
    ]
    for st in s:
        i = st - 1
        k = max(0, st - C + 1)
        col = 1 - math.exp(-k / 2.5) if k else 0.0
        sc = float(rng.binomial(1024, pp[i]) / 1024)
        m = {
            "actor/entropy": 0.38 * (1 - col) + 7.5 * col + rng.normal(0, 0.01),
            "actor/kl_loss": 0.004 + 0.01 * st / T + 2.4 * col * rng.lognormal(0, 0.2),
            "actor/kl_coef": 0.001,
            "actor/pg_loss": rng.normal(0, 0.02) + 0.4 * col,
            "actor/pg_clipfrac": 0.002 + 0.3 * col,
            "actor/ppo_kl": 0.0 + 0.05 * col,
            "actor/pg_clipfrac_lower": 0.0 + 0.02 * col,
            "actor/grad_norm": float(rng.lognormal(math.log(0.1), 0.3)) * (1 + 60 * col * math.exp(-k / 10)),
            "actor/lr": 1e-6,
            "critic/score/mean": sc,
            "critic/score/max": 1.0,
            "critic/score/min": 0.0,
            "critic/rewards/mean": sc,
            "critic/advantages/mean": 0.0,
            "response_length/mean": (230 + rng.normal(0, 8)) * (1 - col) + 1010 * col,
            "response_length/max": 1024.0,
            "response_length/clip_ratio": 0.001 + 0.95 * col,
            "timing_s/gen": 22 + 50 * col,
            "timing_s/step": 45 + 60 * col,
        }
        if st % 25 == 0:
            m["val-core/openai/gsm8k/reward/mean@1"] = float(rng.binomial(1319, p[i] * 0.97) / 1319)
            m["timing_s/testing"] = 30.0
        lines.append(verl_line(int(st), m))
    (d / "main_ppo.log").write_text("\n".join(lines) + "\n")
    for c in range(50, T + 1, 50):
        (d / "checkpoints" / "gsm8k" / "grpo_q3b" / f"global_step_{c}" / "actor").mkdir(parents=True)
    (d / "checkpoints" / "gsm8k" / "grpo_q3b" / "latest_checkpointed_iteration.txt").write_text("450")
    add_case(
        name,
        accept=["rollback", "stop"],
        preferred="rollback",
        rollback_window=[250, 435],
        onset_step=437,
        tags=["verl", "grpo", "verl_console", "collapse", "entropy_blow_up", "checkpoints"],
        reasoning="Score ~0.77 and val ~0.75 from step 200 to 436, then at step 437 everything breaks within a "
        "few steps: score -> ~0.02, entropy 0.38 -> 7.5 (degenerate text), responses pinned at the "
        "1024 cap, clip fractions and KL jump, grad-norm burst; val at 450 ~0.01. 33 steps of "
        "collapse, no recovery. Roll back to global_step_250..400 (and change something).",
    )


def f_hack_eval_only():
    name = "h3-bad-hack-eval-only"
    rng = np.random.default_rng(203)
    T = 800
    s = np.arange(1, T + 1)
    p = sat(s, 0.30, 0.88, 320)
    d = grpo_steps(rng, T, p, ent=sat(s, 0.6, 0.42, 300), length=sat(s, 350, 330, 300), fmt=True)
    d["rewards/judge_rm/mean"] = d["reward"]
    d["rewards/judge_rm/std"] = d["reward_std"]
    rows = aggregate(d, 10, T)
    es = np.arange(50, T + 1, 50)
    eacc = np.where(es <= 300, sat(es, 0.34, 0.50, 100), 0.49 - 0.19 * ((es - 300) / 500) ** 0.9)
    ev = []
    for st, a in evals(rng, es, eacc, 600):
        ev.append(
            (
                st,
                {
                    "eval_reward": round(float(sat(st, 0.32, 0.86, 330) + rng.normal(0, 0.01)), 4),
                    "eval_rewards/judge_rm/mean": round(float(sat(st, 0.32, 0.86, 330) + rng.normal(0, 0.01)), 4),
                    "eval_heldout_exact_match": a,
                    "eval_runtime": 312.5,
                },
            )
        )
    hist = trl_history(rows, ev, steps_per_epoch=1000)
    write_trl_dir(
        rundir(name),
        hist,
        global_step=T,
        max_steps=2000,
        logging_steps=10,
        eval_steps=50,
        save_steps=100,
        steps_per_epoch=1000,
        ckpts=list(range(100, T + 1, 100)),
        top_level=True,
    )
    add_case(
        name,
        accept=["rollback", "stop"],
        preferred="rollback",
        rollback_window=[200, 350],
        onset_step=400,
        tags=["trl", "grpo", "trainer_state", "reward_hacking", "eval_decline", "checkpoints"],
        reasoning="Learned-judge reward (train and eval_reward alike) climbs smoothly 0.30 -> ~0.87 with normal "
        "entropy, length and grad norm. But the held-out exact-match metric (600 problems, sd ~0.02) "
        "rises to ~0.49 at 250-300 and then falls steadily to ~0.30 by 800. The policy is exploiting "
        "the judge. Onset visible by ~400 (two evals clearly below the peak). Best checkpoint 200-300.",
    )


def f_never_learns():
    name = "h3-bad-never-learns-tb"
    rng = np.random.default_rng(204)
    T = 800
    np.arange(1, T + 1)
    pp = np.clip(0.31 + ar1(rng, T, 0.9, 0.03), 0, 1)
    score = bmean(rng, pp, 256)
    sc = []
    for i in range(T):
        st = i + 1
        sc += [
            (st, "critic/score/mean", score[i]),
            (st, "critic/rewards/mean", score[i]),
            (st, "critic/score/max", 1.0),
            (st, "critic/score/min", 0.0),
            (st, "actor/entropy", 0.81 + rng.normal(0, 0.015)),
            (st, "actor/kl_loss", 2e-5 + 1e-5 * rng.random()),
            (st, "actor/pg_loss", rng.normal(0, 0.01)),
            (st, "actor/grad_norm", rng.lognormal(math.log(0.3), 0.3)),
            (st, "actor/pg_clipfrac", 0.0),
            (st, "actor/ppo_kl", rng.normal(0, 1e-7)),
            (st, "actor/lr", 1e-9),
            (st, "response_length/mean", 290 + rng.normal(0, 10)),
            (st, "response_length/clip_ratio", 0.003 + abs(rng.normal(0, 0.002))),
            (st, "timing_s/step", 50 + rng.normal(0, 3)),
        ]
    for st in range(0, T + 1, 50):
        sc.append((st, "val-core/openai/gsm8k/acc/mean@1", float(rng.binomial(1319, 0.305) / 1319)))
    tb_write(rundir(name) / "tensorboard_log" / "gsm8k" / "grpo_q15b_lr1e-9", sc, 1752500000, 50)
    add_case(
        name,
        accept=["stop"],
        preferred="stop",
        onset_step=200,
        tags=["verl", "grpo", "tensorboard", "no_learning", "flat"],
        reasoning="800 of 2000 steps: batch score fluctuates 0.2-0.4 (there is within-group variance, so the "
        "advantages are non-zero) but has no trend at all; validation accuracy every 50 steps is "
        "flat at ~0.30 within its noise, entropy and KL are frozen (KL ~2e-5), and the logged lr is "
        "1e-9. Nothing has been learned in 800 steps; continuing burns GPU. Stop and fix the config. "
        "No checkpoint is better than the base model, so rollback is pointless.",
    )


def f_kl_drift_flat():
    name = "h3-bad-kl-drift-flat-reward"
    rng = np.random.default_rng(205)
    T = 1000
    s = np.arange(1, T + 1)
    p = sat(s, 0.40, 0.62, 80)
    pp = np.clip(p + ar1(rng, T, 0.9, 0.025), 0, 1)
    kl = 0.01 + 0.08 * s / 300 + np.where(s > 350, 0.08 * (np.exp((s - 350) / 210) - 1), 0)
    sc = []
    for i in range(T):
        st = i + 1
        rv = float(rng.binomial(256, pp[i]) / 256)
        sc += [
            (st, "train/reward", rv),
            (st, "train/return", rv - 0.05 * kl[i]),
            (st, "train/kl", kl[i] * rng.lognormal(0, 0.1)),
            (st, "train/policy_loss", rng.normal(0, 0.03)),
            (st, "train/response_length", 280 + 0.05 * st + rng.normal(0, 10)),
            (st, "train/entropy_loss", 0.55 - 0.2 * st / T + rng.normal(0, 0.01)),
            (st, "train/actor_grad_norm", rng.lognormal(math.log(0.25 + 0.3 * st / T), 0.3)),
            (st, "train/ppo_clip_ratio", abs(rng.normal(0.01 + 0.02 * st / T, 0.003))),
            (st, "train/actor_lr", 1e-6),
        ]
        if st % 100 == 0:
            sc.append((st, "eval/eval_gsm8k_pass1", float(rng.binomial(1319, 0.58 + 0.0 * st) / 1319)))
    tb_write(rundir(name) / "tensorboard" / "ppo_llama3_8b", sc, 1754300000, 35)
    add_case(
        name,
        accept=["rollback", "stop"],
        preferred="rollback",
        rollback_window=[200, 450],
        onset_step=500,
        tags=["openrlhf", "ppo", "tensorboard", "kl_drift", "flat_reward"],
        reasoning="Reward plateaus at ~0.62 by step 200 and stays flat (eval pass1 flat ~0.58 at every 100). "
        "Meanwhile KL to the reference keeps climbing and accelerates after ~350: 0.1 at 300, ~0.4 at "
        "500, ~1.7 at 1000, with entropy sliding and grad norm and clip ratio growing. The policy is "
        "drifting away from the reference with nothing to show for it. Roll back to the plateau "
        "before the drift (200-450) or stop.",
    )


def f_nan_blowup():
    name = "h3-bad-nan-blowup"
    rng = np.random.default_rng(206)
    T = 350
    s = np.arange(1, T + 1)
    p = sat(s, 0.3, 0.6, 120)
    d = grpo_steps(rng, T, p, ent=sat(s, 0.6, 0.45, 150), length=np.full(T, 300.0), kl=0.002 + 0.03 * s / T)
    bad = s >= 312
    d["grad_norm"][(s >= 300) & (s < 312)] *= np.linspace(3, 80, 12)
    for k in ("loss", "grad_norm", "kl", "entropy"):
        d[k][bad] = np.nan
    for k in ("reward", "rewards/accuracy_reward/mean"):
        d[k][bad] = 0.0
    d["reward_std"][bad] = 0.0
    d["frac_reward_zero_std"][bad] = 1.0
    d["completions/mean_length"][bad] = 1024.0
    d["completions/clipped_ratio"][bad] = 1.0
    rows = aggregate(d, 5, T)
    hist = trl_history(rows, [], steps_per_epoch=800)
    write_trl_dir(
        rundir(name),
        hist,
        global_step=T,
        max_steps=1600,
        logging_steps=5,
        eval_steps=None,
        save_steps=50,
        steps_per_epoch=800,
        ckpts=list(range(50, T + 1, 50)),
        top_level=False,
    )
    add_case(
        name,
        accept=["rollback", "stop"],
        preferred="rollback",
        rollback_window=[200, 300],
        onset_step=300,
        tags=["trl", "grpo", "trainer_state", "nan", "divergence", "checkpoints"],
        reasoning="Healthy to ~300 (reward 0.3 -> ~0.58). Grad norm then escalates 3x -> 80x over 300-311 and "
        "from 312 loss, grad_norm, kl and entropy are NaN, reward 0, every completion hits the cap. "
        "Weights are corrupted. Checkpoint-300 was saved during the grad-norm run-up, so 200-300 "
        "(250 safest) is the place to resume from; stop is also fine.",
    )


def f_length_explosion_csv():
    name = "h3-bad-length-explosion-csv"
    rng = np.random.default_rng(207)
    T = 400
    s = np.arange(1, T + 1)
    rise = sat(s, 0.1, 0.6, 60)
    blow = np.clip((s - 235) / 60, 0, 1)
    p = rise * (1 - 0.78 * blow)
    pp = np.clip(p + ar1(rng, T, 0.6, 0.05), 0, 1)
    r = bmean(rng, pp, 8)
    L = 300 + 724 * blow**1.5
    accs = {1: 15.6, 50: 33.4, 100: 41.8, 150: 42.6, 200: 43.2, 250: 36.0, 300: 18.4, 350: 12.2, 400: 11.0}
    rows = []
    for i in range(T):
        st = i + 1
        adv_std = 0.0 if r[i] in (0.0, 1.0) else 0.9997
        rows.append(
            {
                "step": st,
                "total_steps": 500,
                "loss": 0.0 if adv_std == 0 else float(rng.normal(0, 0.6) - 40 * blow[i] * rng.random()),
                "reward_avg": float(r[i]),
                "tokens_per_sec": float(24 - 6 * blow[i] + rng.normal(0, 1.5)),
                "avg_response_len": float(min(1024, max(30, L[i] + rng.normal(0, 90 * (1 - blow[i]) + 5)))),
                "adv_avg": 0.0,
                "adv_std": adv_std,
                "entropy_avg": float(0.4 + 1.6 * blow[i] ** 2 + rng.normal(0, 0.05)),
                "eval_acc": accs.get(st),
            }
        )
    hdr = [
        "step",
        "total_steps",
        "loss",
        "reward_avg",
        "tokens_per_sec",
        "avg_response_len",
        "adv_avg",
        "adv_std",
        "entropy_avg",
        "eval_acc",
    ]
    write_csv(rundir(name) / "7_3_plus_tracking_metrics.csv", hdr, rows, crlf=True)
    add_case(
        name,
        accept=["rollback", "stop"],
        preferred="rollback",
        rollback_window=[100, 230],
        onset_step=250,
        tags=["rasbt", "grpo", "csv", "length_explosion", "eval_decline"],
        reasoning="Book-style CSV, 400/500 steps. Reward ~0.55 and MATH-500 eval 42-43 from 100 to 200. After "
        "~235 responses grow to the 1024 cap (by ~300), entropy rises, reward falls to ~0.13 and "
        "eval drops to 36 (250), 18 (300), 11 (400). The model was best at 100-200 (checkpoint steps "
        "every 50).",
    )


def f_dpo_overfit():
    name = "h3-bad-dpo-overfit"
    rng = np.random.default_rng(208)
    T = 900
    s = np.arange(1, T + 1)
    ep = s / 300
    margin = 0.6 + 10 * (ep / 3) ** 1.5
    per = {
        "loss": np.log1p(np.exp(-margin)) + np.abs(rng.normal(0, 0.02, T)),
        "grad_norm": rng.lognormal(math.log(4), 0.4, T) * (1.3 - 0.3 * s / T),
        "learning_rate": 5e-6 * np.maximum(0, 1 - s / T),
        "rewards/accuracies": np.clip(0.62 + 0.38 * (1 - np.exp(-s / 200)) + rng.normal(0, 0.03, T), 0, 1),
        "rewards/chosen": -1.5 * (s / T) ** 1.3 + rng.normal(0, 0.3, T),
    }
    per["rewards/rejected"] = per["rewards/chosen"] - margin + rng.normal(0, 0.3, T)
    per["rewards/margins"] = per["rewards/chosen"] - per["rewards/rejected"]
    per["logps/chosen"] = -180 - 230 * (s / T) ** 1.3 + rng.normal(0, 15, T)
    per["logps/rejected"] = -210 - 520 * (s / T) ** 1.3 + rng.normal(0, 15, T)
    rows = aggregate(per, 10, T)
    ev = []
    for st in range(50, T + 1, 50):
        el = 0.69 - 0.17 * (1 - math.exp(-st / 120)) + 0.00000085 * max(0, st - 300) ** 2 + rng.normal(0, 0.006)
        ea = 0.5 + 0.22 * (1 - math.exp(-st / 120)) - 0.08 * (max(0, st - 300) / 600) ** 1.2 + rng.normal(0, 0.008)
        ev.append(
            (
                st,
                {
                    "eval_loss": round(el, 4),
                    "eval_rewards/accuracies": round(ea, 4),
                    "eval_rewards/margins": round(0.9 + 1.5 * st / T, 3),
                    "eval_runtime": 41.7,
                },
            )
        )
    hist = trl_history(rows, ev, steps_per_epoch=300)
    write_trl_dir(
        rundir(name),
        hist,
        global_step=T,
        max_steps=1200,
        logging_steps=10,
        eval_steps=50,
        save_steps=100,
        steps_per_epoch=300,
        ckpts=list(range(100, T + 1, 100)),
        top_level=False,
    )
    add_case(
        name,
        accept=["rollback", "stop"],
        preferred="rollback",
        rollback_window=[200, 400],
        onset_step=450,
        tags=["trl", "dpo", "trainer_state", "overfitting", "likelihood_displacement", "checkpoints"],
        reasoning="DPO for 4 planned epochs (300 steps each), at 900. Train loss -> ~0, train accuracy -> 1, "
        "margins keep growing, while eval loss bottoms at ~0.52 around 300-350 and climbs to ~0.80 "
        "by 900 and eval accuracy slips from ~0.72 to ~0.65. logps/chosen falls -180 -> -410 "
        "(likelihood displacement). Classic overfitting from epoch 2: go back to checkpoint 200-400.",
    )


def f_component_hack_console():
    name = "h3-bad-format-hack-console"
    rng = np.random.default_rng(209)
    T = 300
    s = np.arange(1, T + 1)
    pf = sat(s, 0.2, 0.99, 30)
    pa = np.where(s < 130, sat(s, 0.12, 0.46, 50), 0.45 - 0.22 * np.clip((s - 130) / 170, 0, 1))
    d = grpo_steps(
        rng, T, pa, n=64, ent=sat(s, 0.7, 0.5, 80), length=np.where(s < 130, 380, 380 - 1.6 * (s - 130)), fmt=True
    )
    fr = bmean(rng, np.clip(pf + ar1(rng, T, 0.8, 0.02), 0, 1), 64)
    acc = d["reward"]
    d["rewards/format_reward/mean"] = fr
    d["rewards/format_reward/std"] = np.sqrt(fr * (1 - fr))
    d["rewards/accuracy_reward/mean"] = acc
    d["rewards/accuracy_reward/std"] = np.sqrt(acc * (1 - acc))
    d["reward"] = fr + acc
    d["reward_std"] = np.sqrt(d["rewards/format_reward/std"] ** 2 + d["rewards/accuracy_reward/std"] ** 2)
    rows = aggregate(d, 10, T)
    lines = ["INFO:__main__:reward_funcs=[format_reward, accuracy_reward] weights=[1.0, 1.0] max_steps=1000"]
    for r in rows:
        lines.append("\r".join(tqdm_bar(j, 1000, 11.9) for j in range(r["step"] - 9, r["step"] + 1)))
        lines.append(trl_console_dict(r, r["step"] / 1000))
    (rundir(name) / "stdout.txt").write_text("\n".join(lines) + "\n")
    add_case(
        name,
        accept=["rollback", "stop"],
        preferred="rollback",
        rollback_window=[80, 140],
        onset_step=170,
        tags=["trl", "grpo", "trl_console", "component_saturation", "reward_hacking"],
        reasoning="Two reward functions: format_reward saturates at ~1.0 by step 100; accuracy_reward rises to "
        "~0.45 at 100-130, then slides to ~0.23 by 300 while answers get shorter. The total reward "
        "looks flat (~1.4), hiding that the task reward is falling. Go back to the 80-140 region "
        "(console only, so a rollback names a step) or stop.",
    )


def f_entropy_collapse_tb():
    name = "h3-bad-entropy-collapse-tb"
    rng = np.random.default_rng(210)
    T = 420
    s = np.arange(1, T + 1)
    ent = np.where(s < 250, sat(s, 0.7, 0.5, 150), 0.5 * np.exp(-(s - 250) / 25) + 0.015)
    p = sat(s, 0.3, 0.6, 90) - np.where(s > 270, 0.12 * np.clip((s - 270) / 150, 0, 1), 0)
    d = grpo_steps(
        rng,
        T,
        p,
        ent=ent,
        length=np.where(s < 250, 420, 420 - 250 * np.clip((s - 250) / 80, 0, 1)),
        kl=0.004 + 0.02 * s / T + np.where(s > 250, 0.5 * np.clip((s - 250) / 100, 0, 1), 0),
    )
    d["frac_reward_zero_std"] = np.clip(
        np.where(s < 250, d["frac_reward_zero_std"], d["frac_reward_zero_std"] + 0.6 * np.clip((s - 250) / 80, 0, 1)),
        0,
        0.99,
    )
    rows = aggregate(d, 5, T)
    sc = []
    for r in rows:
        for k, v in r.items():
            if k != "step":
                sc.append((r["step"], "train/" + k, v))
    for st, a in evals(
        rng,
        range(50, T + 1, 50),
        [sat(x, 0.32, 0.55, 100) - (0.1 * min(1, (x - 260) / 150) if x > 260 else 0) for x in range(50, T + 1, 50)],
        800,
    ):
        sc.append((st, "eval/reward", a))
    tb_write(rundir(name) / "runs" / "Feb02_17-40-03_a100-12", sc, 1738518003, 80)
    ck = rundir(name)
    for c in range(100, T + 1, 100):
        (ck / f"checkpoint-{c}").mkdir()
        (ck / f"checkpoint-{c}" / "config.json").write_text("{}")
    add_case(
        name,
        accept=["rollback", "stop"],
        preferred="rollback",
        rollback_window=[150, 250],
        onset_step=265,
        tags=["trl", "grpo", "tensorboard", "entropy_collapse", "checkpoints"],
        reasoning="Entropy declines normally to ~0.5 by 250, then collapses exponentially to ~0.02 by 350; the "
        "zero-std fraction jumps toward 1 (groups all identical, no gradient), outputs get short, KL "
        "jumps, and reward and eval fall back by ~0.1. Exploration is gone. Roll back to checkpoint "
        "200 (150-250) and raise temperature/entropy bonus, or stop.",
    )


def f_converged_done():
    name = "h3-done-converged"
    rng = np.random.default_rng(211)
    T = 500
    s = np.arange(1, T + 1)
    p = sat(s, 0.4, 0.71, 70)
    d = grpo_steps(rng, T, p, ent=sat(s, 0.5, 0.4, 100), length=np.full(T, 280.0))
    rows = aggregate(d, 10, T)
    ev = [
        (st, trl_eval_row(a, rng=rng))
        for st, a in evals(rng, range(100, T + 1, 100), [0.62, 0.65, 0.64, 0.655, 0.645], 400)
    ]
    final = {
        "epoch": 1.0,
        "step": T,
        "total_flos": 0.0,
        "train_loss": 0.0021,
        "train_runtime": 41233.9,
        "train_samples_per_second": 0.776,
        "train_steps_per_second": 0.012,
    }
    hist = trl_history(rows, ev, steps_per_epoch=500, final=final)
    write_trl_dir(
        rundir(name),
        hist,
        global_step=T,
        max_steps=500,
        logging_steps=10,
        eval_steps=100,
        save_steps=250,
        steps_per_epoch=500,
        ckpts=[250, 500],
        top_level=True,
    )
    add_case(
        name,
        accept=["continue", "stop"],
        preferred="stop",
        tags=["trl", "grpo", "trainer_state", "converged", "finished"],
        reasoning="Run finished (global_step = max_steps = 500, final train_runtime row). Reward plateaued at "
        "~0.7 from step ~250, eval flat at 0.64-0.66 within noise. Nothing wrong; nothing more to "
        "gain. Stop (it is done) or let it end; no rollback needed.",
    )


# ----------------------------------------------------------------------------- main
def main():
    if RUNS.exists():
        shutil.rmtree(RUNS)
    RUNS.mkdir(parents=True)
    (RUNS / ".gitignore").write_text("# generated by ../make_holdout3.py; not committed\n*\n!.gitignore\n")
    builders = [
        h_trl_state_ckpt_only,
        h_slow_learner_tb,
        h_dip_recovers_verl_console,
        h_kl_with_reward_trl_console,
        h_eval_wobble,
        h_verl_console_resume,
        h_verl_jsonl,
        h_short_tb_openrlhf,
        h_long_5000_tb,
        h_spikes_nan,
        h_trl_console_grpo,
        h_dpo,
        h_csv_rasbt,
        h_plain_jsonl_adhoc,
        h_length_growth,
        h_entropy_decline,
        h_mlflow,
        h_hard_task_nemo,
        h_tb_resume,
        f_slow_late_degradation,
        f_sudden_collapse_verl,
        f_hack_eval_only,
        f_never_learns,
        f_kl_drift_flat,
        f_nan_blowup,
        f_length_explosion_csv,
        f_dpo_overfit,
        f_component_hack_console,
        f_entropy_collapse_tb,
        f_converged_done,
    ]
    for b in builders:
        b()
    header = (
        "# Holdout set 3: hand-built runs written by make.py (independent of assessor's generator).\n"
        "# Labels follow from how each run was constructed. rollback_window is inclusive.\n"
    )
    with open(ROOT / "holdout3.yaml", "w") as f:
        f.write(header)
        yaml.safe_dump({"cases": CASES}, f, sort_keys=False, width=110, allow_unicode=True)
    print(f"{len(CASES)} cases, {sum(bool(c.get('healthy')) for c in CASES)} healthy")


if __name__ == "__main__":
    main()
