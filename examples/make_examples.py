"""Regenerate the bundled example runs: `python examples/make_examples.py`.

Two small run directories in the shapes the frameworks really write (see
`../shared/reference/metrics-and-formats.md`), with deterministic, realistic noise:

* `trl-grpo-live/`: a TRL GRPO run still training (step 520 of 1000). No top-level
  `trainer_state.json` yet; three `checkpoint-N/` folders kept by `save_total_limit=3`, each with its
  `trainer_state.json` and `training_args.bin`; TensorBoard events in `runs/<date>_<host>/` that run ahead
  of the newest checkpoint; an nvidia-smi log of both GPUs. Reward still climbing, KL moderate.
* `verl-grpo-gsm8k/`: a verl GRPO run read from its console log (Ray prefixes, colour codes, NumPy 2
  value wrappers) with `global_step_N` checkpoints. Reward peaks around step 130, then entropy and
  response length blow up and reward falls: a run a practitioner would roll back.
"""

from __future__ import annotations

import io
import json
import pickle
import shutil
import sys
import types
import zipfile
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np

from assessor.evals.generate import training_args_bin

HERE = Path(__file__).resolve().parent


def ar1(rng: np.random.Generator, n: int, phi: float = 0.7, scale: float = 1.0) -> np.ndarray:
    """Autocorrelated noise, as real batch-to-batch metrics have."""
    out = np.zeros(n)
    for i in range(1, n):
        out[i] = phi * out[i - 1] + rng.normal(0, scale)
    return out * np.sqrt(1 - phi**2)


# --------------------------------------------------------------------------- TRL GRPO, live
def trl_rows(rng: np.random.Generator, last_step: int, interval: int) -> list[dict[str, float | int]]:
    steps = np.arange(interval, last_step + 1, interval)
    n = len(steps)
    progress = steps / 1000
    acc = 0.18 + 0.5 * (1 - np.exp(-steps / 260)) + 0.03 * ar1(rng, n)
    fmt = np.clip(0.55 + 0.45 * (1 - np.exp(-steps / 60)) + 0.02 * ar1(rng, n), 0, 1)
    acc = np.clip(acc, 0, 1)
    reward = acc + 0.5 * fmt
    reward_std = 0.42 - 0.12 * progress + 0.02 * ar1(rng, n)
    zero_std = np.clip(0.12 + 0.25 * progress + 0.04 * ar1(rng, n), 0, 1)
    kl = 0.0008 + 0.06 * (1 - np.exp(-steps / 400)) + 0.004 * np.abs(ar1(rng, n))
    entropy = 0.62 * np.exp(-steps / 1500) + 0.02 * ar1(rng, n)
    length = 310 + 90 * (1 - np.exp(-steps / 350)) + 12 * ar1(rng, n)
    clipped = np.clip(0.01 + 0.02 * progress + 0.006 * ar1(rng, n), 0, 1)
    warmup = np.minimum(1.0, steps / 50)
    lr = 1e-6 * warmup * (1 - progress)
    rows: list[dict[str, float | int]] = []
    tokens = 0
    for i, step in enumerate(steps):
        tokens += int(interval * 8 * 16 * (length[i] + 180))
        low = abs(rng.normal(0.0008, 0.0003))
        high = abs(rng.normal(0.0012, 0.0004))
        rows.append({
            "clip_ratio/high_max": round(high * 3, 6),
            "clip_ratio/high_mean": round(high, 6),
            "clip_ratio/low_mean": round(low, 6),
            "clip_ratio/low_min": 0.0,
            "clip_ratio/region_mean": round(low + high, 6),
            "completions/clipped_ratio": round(float(clipped[i]), 4),
            "completions/max_length": 1024.0 if clipped[i] > 0 else float(round(length[i] * 2.2)),
            "completions/max_terminated_length": float(round(length[i] * 2.1)),
            "completions/mean_length": round(float(length[i]), 3),
            "completions/mean_terminated_length": round(float(length[i] * (1 - clipped[i] * 0.8)), 3),
            "completions/min_length": float(round(length[i] * 0.3)),
            "completions/min_terminated_length": float(round(length[i] * 0.3)),
            "entropy": round(float(entropy[i]), 5),
            "epoch": round(float(step / 1000 * 1.6), 4),
            "frac_reward_zero_std": round(float(zero_std[i]), 4),
            "grad_norm": round(float(abs(rng.normal(0.22, 0.05)) + (2.5 if i == 23 else 0.0)), 5),
            "kl": round(float(kl[i]), 6),
            "learning_rate": float(lr[i]),
            "loss": round(float(0.04 * kl[i] + rng.normal(0, 0.002)), 4),
            "num_tokens": float(tokens),
            "reward": round(float(reward[i]), 5),
            "reward_std": round(float(reward_std[i]), 5),
            "rewards/accuracy_reward/mean": round(float(acc[i]), 5),
            "rewards/accuracy_reward/std": round(float(np.sqrt(acc[i] * (1 - acc[i]))), 5),
            "rewards/format_reward/mean": round(float(fmt[i]), 5),
            "rewards/format_reward/std": round(float(np.sqrt(fmt[i] * (1 - fmt[i]))), 5),
            "step": int(step),
            "step_time": round(float(11.5 + length[i] / 160 + abs(rng.normal(0, 0.4))), 4),
        })
    return rows


def trainer_state(rows: list[dict[str, float | int]], global_step: int) -> dict[str, object]:
    return {
        "best_global_step": None,
        "best_metric": None,
        "best_model_checkpoint": None,
        "epoch": rows[-1]["epoch"],
        "eval_steps": 500,
        "global_step": global_step,
        "is_hyper_param_search": False,
        "is_local_process_zero": True,
        "is_world_process_zero": True,
        "log_history": rows,
        "logging_steps": 10,
        "max_steps": 1000,
        "num_input_tokens_seen": 0,
        "num_train_epochs": 2,
        "save_steps": 100,
        "stateful_callbacks": {"TrainerControl": {"args": {"should_save": True, "should_training_stop": False}}},
        "total_flos": 0.0,
        "train_batch_size": 8,
        "trial_name": None,
        "trial_params": None,
    }


def write_events(folder: Path, rows: list[dict[str, float | int]], start: datetime) -> None:
    from tensorboard.compat.proto import event_pb2, summary_pb2
    from tensorboard.summary.writer.event_file_writer import EventFileWriter

    folder.mkdir(parents=True)
    writer = EventFileWriter(str(folder))
    elapsed = 0.0
    for row in rows:
        elapsed += float(row["step_time"]) * 10
        wall = start.timestamp() + elapsed
        values = [
            summary_pb2.Summary.Value(tag=f"train/{key}", simple_value=float(value))
            for key, value in row.items() if key != "step"
        ]
        writer.add_event(event_pb2.Event(wall_time=wall, step=int(row["step"]), summary=summary_pb2.Summary(value=values)))
    writer.close()
    # Stable names: the writer stamps the real time and host into the file name.
    for produced in folder.glob("events.out.tfevents.*"):
        produced.rename(folder / f"events.out.tfevents.{int(start.timestamp())}.gpu-node-7.41822.0")


def write_nvidia_smi(path: Path, rows: list[dict[str, float | int]], start: datetime, rng: np.random.Generator) -> None:
    lines = [
        "timestamp, index, name, utilization.gpu [%], utilization.memory [%], memory.used [MiB], "
        "memory.total [MiB], power.draw [W], power.limit [W], temperature.gpu, clocks.sm [MHz]"
    ]
    step_times = np.repeat([float(r["step_time"]) for r in rows], 10)
    t = 0.0
    boundaries = np.cumsum(step_times)
    end = boundaries[-1]
    while t < end:
        i = int(np.searchsorted(boundaries, t))
        step_start = boundaries[i] - step_times[i]
        generating = (t - step_start) < 0.62 * step_times[i]
        stamp = (start + timedelta(seconds=t)).strftime("%Y/%m/%d %H:%M:%S.%f")[:-3]
        for gpu in (0, 1):
            if generating:
                util, mem_util, power = rng.normal(71, 8), rng.normal(38, 5), rng.normal(285, 25)
            else:
                util, mem_util, power = rng.normal(97, 2), rng.normal(61, 6), rng.normal(655, 20)
            lines.append(
                f"{stamp}, {gpu}, NVIDIA H100 80GB HBM3, {min(100, max(0, round(util)))} %, "
                f"{min(100, max(0, round(mem_util)))} %, {int(rng.normal(71200, 300))} MiB, 81559 MiB, "
                f"{power:.2f} W, 700.00 W, {int(rng.normal(64 if generating else 73, 1.5))}, 1980 MHz"
            )
        t += 10.0
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def make_trl(root: Path) -> None:
    rng = np.random.default_rng(7)
    rows = trl_rows(rng, last_step=520, interval=10)
    start = datetime(2026, 11, 20, 9, 14, 3)
    args = {
        "output_dir": "outputs/qwen2.5-1.5b-grpo-gsm8k", "model_init_kwargs": None, "beta": 0.04,
        "num_generations": 8, "max_completion_length": 1024, "max_prompt_length": 512, "max_steps": 1000,
        "logging_steps": 10, "save_steps": 100, "save_total_limit": 3, "learning_rate": 1e-6,
        "loss_type": "dapo", "scale_rewards": "group", "per_device_train_batch_size": 8,
        "gradient_accumulation_steps": 4, "report_to": ["tensorboard"], "seed": 42,
    }
    for step in (300, 400, 500):
        folder = root / f"checkpoint-{step}"
        folder.mkdir(parents=True)
        state = trainer_state([r for r in rows if int(r["step"]) <= step], step)
        (folder / "trainer_state.json").write_text(json.dumps(state, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        (folder / "training_args.bin").write_bytes(training_args_bin("grpo", args))
        (folder / "adapter_config.json").write_text(
            json.dumps({"base_model_name_or_path": "Qwen/Qwen2.5-1.5B-Instruct", "peft_type": "LORA", "r": 16},
                       indent=2) + "\n", encoding="utf-8")
    write_events(root / "runs" / "Nov20_09-14-03_gpu-node-7", rows, start)
    write_nvidia_smi(root / "nvidia-smi.csv", rows, start, rng)


# --------------------------------------------------------------------------- verl GRPO, console log
def make_verl(root: Path) -> None:
    rng = np.random.default_rng(11)
    last = 240
    steps = np.arange(1, last + 1)
    n = len(steps)
    collapse = 1 / (1 + np.exp(-(steps - 175) / 9))  # the run goes wrong from about step 160
    score = 0.42 + 0.4 * (1 - np.exp(-steps / 45)) - 0.62 * collapse + 0.03 * ar1(rng, n)
    entropy = 0.55 * np.exp(-steps / 90) + 0.1 + 2.6 * collapse + 0.03 * ar1(rng, n)
    length = 260 + 30 * np.tanh(steps / 80) + 740 * collapse + 15 * ar1(rng, n)
    length = np.minimum(length, 1024)
    clip = np.clip(0.002 + 0.85 * collapse ** 2 + 0.01 * np.abs(ar1(rng, n)), 0, 1)
    kl = 0.001 + 0.03 * (1 - np.exp(-steps / 60)) + 0.2 * collapse + 0.002 * np.abs(ar1(rng, n))
    grad = 0.18 * np.exp(-steps / 120) + 0.05 + 0.9 * collapse + 0.03 * np.abs(ar1(rng, n))
    gen = 88 + 0.09 * length + 4 * np.abs(ar1(rng, n))
    lines = [
        "commit:",
        "4f2c9e1a7d6b0c3e5f8a9b1c2d3e4f5a6b7c8d9e",
        "",
        "command:",
        "python3 -m verl.trainer.main_ppo algorithm.adv_estimator=grpo data.train_batch_size=512 "
        "data.max_prompt_length=512 data.max_response_length=1024 actor_rollout_ref.model.path=Qwen/Qwen2.5-3B-Instruct "
        "actor_rollout_ref.actor.optim.lr=1e-6 actor_rollout_ref.actor.use_kl_loss=True "
        "actor_rollout_ref.actor.kl_loss_coef=0.001 actor_rollout_ref.rollout.n=5 trainer.logger=['console'] "
        "trainer.total_training_steps=300 trainer.save_freq=50 trainer.test_freq=20",
        "",
        "2026-11-18 22:01:12,441\tINFO worker.py:1841 -- Started a local Ray instance.",
    ]

    def fmt(value: float) -> str:
        return f"np.float64({value!r})" if rng.random() < 0.7 else f"{value:.3f}"

    def val_score(step: int) -> float:
        s = 0.55 + 0.3 * (1 - np.exp(-step / 50)) - 0.55 / (1 + np.exp(-(step - 180) / 10))
        return round(float(s + rng.normal(0, 0.008)), 4)

    lines.append(f"\x1b[36m(TaskRunner pid=2291)\x1b[0m step:0 - val-core/openai/gsm8k/acc/mean@1:{fmt(val_score(0))}")
    for i, step in enumerate(steps):
        parts = {
            "actor/entropy": entropy[i], "actor/kl_loss": kl[i], "actor/kl_coef": 0.001,
            "actor/pg_loss": rng.normal(0, 0.02), "actor/pg_clipfrac": abs(rng.normal(0.0012, 0.0004)) + 0.01 * collapse[i],
            "actor/pg_clipfrac_lower": 0.0, "actor/ppo_kl": rng.normal(0, 1e-4), "actor/grad_norm": grad[i],
            "actor/lr": 1e-6, "critic/score/mean": score[i], "critic/score/max": 1.0, "critic/score/min": 0.0,
            "critic/rewards/mean": score[i], "critic/advantages/mean": rng.normal(0, 0.005),
            "critic/advantages/max": 1.79, "critic/advantages/min": -1.79,
            "response_length/mean": length[i], "response_length/max": min(1024.0, length[i] * 2.3),
            "response_length/min": max(12.0, length[i] * 0.2), "response_length/clip_ratio": clip[i],
            "prompt_length/mean": 104.2 + rng.normal(0, 2), "timing_s/gen": gen[i],
            "timing_s/reward": 2.1 + abs(rng.normal(0, 0.3)), "timing_s/old_log_prob": 14.2 + 0.01 * length[i],
            "timing_s/ref": 13.8 + 0.01 * length[i], "timing_s/adv": 0.06, "timing_s/update_actor": 41.5 + 0.03 * length[i],
        }
        if step % 20 == 0:
            parts["val-core/openai/gsm8k/acc/mean@1"] = val_score(int(step))
            parts["timing_s/testing"] = 38.0 + abs(rng.normal(0, 2))
        if step % 50 == 0:
            parts["timing_s/save_checkpoint"] = 64.0 + abs(rng.normal(0, 5))
        total = sum(v for k, v in parts.items() if k.startswith("timing_s/"))
        parts["timing_s/step"] = total + 0.4
        parts["perf/max_memory_allocated_gb"] = 61.2 + rng.normal(0, 0.2)
        parts["perf/throughput"] = 512 * 5 * (length[i] + 104) / parts["timing_s/step"] / 8
        body = " - ".join(f"{k}:{fmt(float(v))}" for k, v in parts.items())
        lines.append(f"\x1b[36m(TaskRunner pid=2291)\x1b[0m step:{int(step)} - {body}")
        if step % 37 == 0:
            lines.append("\x1b[36m(WorkerDict pid=2517)\x1b[0m INFO 11-18 23:12:04 [block_pool.py:321] Successfully reset prefix cache")
    (root / "train.log").parent.mkdir(parents=True, exist_ok=True)
    (root / "train.log").write_text("\n".join(lines) + "\n", encoding="utf-8")
    ckpt_root = root / "checkpoints" / "gsm8k_grpo" / "qwen2.5-3b-grpo"
    for step in (50, 100, 150, 200):
        hf = ckpt_root / f"global_step_{step}" / "actor" / "huggingface"
        hf.mkdir(parents=True)
        (hf / "config.json").write_text(
            json.dumps({"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "vocab_size": 151936}, indent=2)
            + "\n", encoding="utf-8")
    (ckpt_root / "latest_checkpointed_iteration.txt").write_text("200", encoding="utf-8")


def main() -> None:
    for name, make in (("trl-grpo-live", make_trl), ("verl-grpo-gsm8k", make_verl)):
        target = HERE / name
        if target.exists():
            shutil.rmtree(target)
        target.mkdir()
        make(target)
        print(f"wrote {target.relative_to(HERE.parent)}")


if __name__ == "__main__":
    main()
