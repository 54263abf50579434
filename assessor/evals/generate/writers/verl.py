"""The verl formats: `jsonl` and `verl_console`, with their checkpoint folders.

The JSONL file logger with the hydra config of the launch, and the TaskRunner's console log (Ray prefixes,
ANSI colours, NumPy value wrappers, a crash and resume when the run was interrupted).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from assessor.evals.generate.model import Ctx, batch_shape
from assessor.evals.generate.rows import verl_rows
from assessor.evals.generate.simulate import Attempt
from assessor.evals.generate.writers.hf_files import write_bare_checkpoint


def _json_value(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def verl_names(ctx: Ctx) -> tuple[str, str]:
    """The verl (project, experiment) names for the run."""
    return "verl_grpo_gsm8k", f"qwen2.5-3b-{ctx.spec.pattern.replace('_', '-')}-s{ctx.spec.seed}"


def write_verl_checkpoints(ctx: Ctx, target: Path) -> None:
    """The verl `global_step_N` checkpoint folders and `latest_checkpointed_iteration.txt`."""
    if not ctx.checkpoints:
        return
    project, experiment = verl_names(ctx)
    root = target / "checkpoints" / project / experiment
    for step in ctx.checkpoints:
        write_bare_checkpoint(root / f"global_step_{step}" / "actor" / "huggingface")
    (root / "latest_checkpointed_iteration.txt").write_text(str(ctx.checkpoints[-1]), encoding="utf-8")


def _verl_overrides(ctx: Ctx) -> list[str]:
    prompts, group = batch_shape(ctx)
    use_kl = ctx.beta > 0
    project, experiment = verl_names(ctx)
    saves = ctx.all_saves[0] if ctx.all_saves else -1
    logger = "['console','file']" if ctx.spec.format == "jsonl" else "['console','tensorboard']"
    return [
        "algorithm.adv_estimator=grpo", f"data.train_batch_size={prompts}", "data.max_prompt_length=512",
        f"data.max_response_length={int(ctx.opt('max_completion_length', 1024))}",
        "actor_rollout_ref.model.path=Qwen/Qwen2.5-3B-Instruct", "actor_rollout_ref.actor.optim.lr=1e-6",
        f"actor_rollout_ref.actor.ppo_mini_batch_size={max(1, prompts // 4)}",
        f"actor_rollout_ref.actor.use_kl_loss={use_kl}",
        f"actor_rollout_ref.actor.kl_loss_coef={ctx.beta / 40 if use_kl else 0.001}",
        "actor_rollout_ref.actor.kl_loss_type=low_var_kl", "actor_rollout_ref.actor.entropy_coeff=0",
        f"actor_rollout_ref.rollout.n={group}", "actor_rollout_ref.rollout.name=vllm",
        f"trainer.logger={logger}",
        f"trainer.project_name={project}", f"trainer.experiment_name={experiment}", "trainer.n_gpus_per_node=8",
        f"trainer.save_freq={saves}", f"trainer.test_freq={ctx.eval_every or -1}",
        f"trainer.total_training_steps={ctx.planned}",
    ]


def write_jsonl(ctx: Ctx, target: Path, attempts: list[Attempt]) -> None:
    """`jsonl`: verl's file logger, the hydra config and the checkpoints."""
    project, experiment = verl_names(ctx)
    main = attempts[-1]  # verl's file logger opens its file with "wb": a resumed run keeps only its own steps
    lines = []
    for step, row in verl_rows(ctx, main.obs, main.evals, main.first):
        data = {k: _json_value(v) for k, v in row.items()}
        lines.append(json.dumps({"step": step, "data": data}, separators=(",", ":")))
    path = target / project / f"{experiment}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    config: dict[str, Any] = {}
    for item in _verl_overrides(ctx):
        key, value = item.split("=", 1)
        node = config
        parts = key.split(".")
        for part in parts[:-1]:
            node = node.setdefault(part, {})
        node[parts[-1]] = yaml.safe_load(value)
    hydra = target / "outputs" / "2026-11-18" / "22-01-07" / ".hydra"
    hydra.mkdir(parents=True)
    (hydra / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    (hydra / "overrides.yaml").write_text(yaml.safe_dump(list(_verl_overrides(ctx))), encoding="utf-8")
    write_verl_checkpoints(ctx, target)


def _verl_value(rng: np.random.Generator, value: Any) -> str:
    if isinstance(value, int):
        return f"np.int64({value})" if rng.random() < 0.5 else str(value)
    number = float(value)
    if rng.random() < 0.75:
        return f"np.float64({number!r})"
    return "nan" if math.isnan(number) else f"{number:.3f}"


def _verl_end(ctx: Ctx, prefix: str, attempt: Attempt) -> list[str]:
    """What verl prints when `global_steps` reaches `total_training_steps`.

    The final validation metrics (`pprint` of one string, wrapped when long) and the closed progress bar.
    """
    if attempt.evals:
        value = attempt.evals[max(attempt.evals)]
        text = [f"{prefix}('Final validation metrics: '",
                f"{prefix} \"{{'val-core/openai/gsm8k/acc/mean@1': {value!r}}}\")"]
    else:
        text = [f"{prefix}'Final validation metrics: None'"]
    seconds = float(np.sum(attempt.obs["step_time"]))
    hours, rest = divmod(int(seconds), 3600)
    per = seconds / max(1, ctx.n)
    bar = (f"Training Progress: 100%|██████████| {ctx.n}/{ctx.planned} [{hours}:{rest // 60:02d}:{rest % 60:02d}"
           f"<00:00, {per:.2f}s/it]")
    return [*text, f"{prefix}{bar}"]


def write_verl_console(ctx: Ctx, target: Path, attempts: list[Attempt]) -> None:
    """`verl_console`: the TaskRunner's console log (Ray prefixes, colours, NumPy wrappers)."""
    rng = np.random.default_rng([ctx.spec.seed, 77])
    prefix = "\x1b[36m(TaskRunner pid=2291)\x1b[0m "
    lines = ["commit:", "4f2c9e1a7d6b0c3e5f8a9b1c2d3e4f5a6b7c8d9e", "", "command:",
             "python3 -m verl.trainer.main_ppo " + " ".join(_verl_overrides(ctx)), ""]
    for number, attempt in enumerate(attempts):
        pid = 2291 + 1000 * number
        prefix = f"\x1b[36m(TaskRunner pid={pid})\x1b[0m "
        lines.append(f"2026-11-18 22:0{number}:12,441\tINFO worker.py:1841 -- Started a local Ray instance.")
        lines.append(f"{prefix}Size of train dataloader: 58, Size of val dataloader: 1")
        lines.append(f"{prefix}Total training steps: {ctx.planned}")
        if attempt.first > 1:
            folder = f"checkpoints/{'/'.join(verl_names(ctx))}/global_step_{attempt.first - 1}"
            lines.append(f"{prefix}Load from checkpoint folder: {folder}")
            lines.append(f"{prefix}Setting global step to {attempt.first - 1}")
            lines.append(f"{prefix}Resuming from {folder}")
        for step, row in verl_rows(ctx, attempt.obs, attempt.evals, attempt.first, attempt.last):
            body = " - ".join(f"{k}:{_verl_value(rng, v)}" for k, v in row.items())
            lines.append(f"{prefix}step:{step} - {body}")
            if step % 37 == 0:
                lines.append(f"\x1b[36m(WorkerDict pid={pid + 226})\x1b[0m INFO 11-18 23:12:04 [block_pool.py:321] "
                             "Successfully reset prefix cache")
            if step in ctx.all_saves and step <= attempt.last:
                folder = f"checkpoints/{'/'.join(verl_names(ctx))}/global_step_{step}"
                lines.append(f"{prefix}local_global_step_folder: {folder}")
        if number == len(attempts) - 1 and ctx.finished:
            lines += _verl_end(ctx, prefix, attempt)
        if number < len(attempts) - 1:
            lines += [
                "\x1b[36m(WorkerDict pid=2517)\x1b[0m [rank3]:[E1118 23:40:11 ProcessGroupNCCL.cpp:616] Watchdog "
                "caught collective operation timeout: WorkNCCL(SeqNum=48211, OpType=ALLREDUCE) ran for 600021 "
                "milliseconds",
                "Traceback (most recent call last):",
                '  File "/opt/verl/verl/trainer/main_ppo.py", line 42, in main',
                "ray.exceptions.RayTaskError(DistBackendError): ray::TaskRunner.run()",
                "",
            ]
    (target / "train.log").write_text("\n".join(lines) + "\n", encoding="utf-8")
    write_verl_checkpoints(ctx, target)
