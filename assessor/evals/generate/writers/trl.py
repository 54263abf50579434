"""TRL's formats: `trl_state`, `trl_live` and `trl_console`.

Checkpoint folders with the trainer state (or a top-level state), a live run whose TensorBoard events run
ahead of the checkpoints the save limit kept, and the console log of printed dicts between tqdm redraws.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from assessor.evals.generate.context import layout_of
from assessor.evals.generate.model import Ctx, Row, batch_shape, constant_curve
from assessor.evals.generate.rows import merge_rows, trl_columns, trl_eval_rows, trl_rows, trl_summary_row
from assessor.evals.generate.simulate import Attempt
from assessor.evals.generate.writers.hf_files import (
    dump_state,
    trainer_state,
    training_args,
    write_bare_checkpoint,
    write_checkpoint,
)
from assessor.evals.generate.writers.tensorboard import write_trl_tensorboard


def write_trl_state(ctx: Ctx, target: Path, attempts: list[Attempt]) -> None:
    """`trl_state`: checkpoint folders, or a top-level `trainer_state.json` (`layout: top`)."""
    logging_steps = ctx.spec.logging_steps
    main = attempts[-1]
    cols = trl_columns(ctx, main.obs)
    rows = merge_rows(trl_rows(ctx, cols, logging_steps), trl_eval_rows(ctx, main.evals))
    for step in ctx.checkpoints:  # the last save comes before the end-of-training summary is logged
        write_checkpoint(ctx, target / f"checkpoint-{step}", rows, step, logging_steps)
    if layout_of(ctx.spec) == "top":  # `trainer.save_state()` after `train()`: the summary is in it
        summary = trl_summary_row(ctx, main.obs)
        full = rows + ([summary] if summary is not None else [])
        (target / "trainer_state.json").write_text(dump_state(trainer_state(ctx, full, ctx.n, logging_steps)),
                                                   encoding="utf-8")
        args = training_args(ctx, logging_steps) | {"model_name_or_path": "Qwen/Qwen2.5-1.5B-Instruct"}
        (target / "training_args.json").write_text(json.dumps(args, indent=2) + "\n", encoding="utf-8")


def write_trl_live(ctx: Ctx, target: Path, attempts: list[Attempt]) -> None:
    """`trl_live`: the checkpoints the save limit kept, and TensorBoard events running ahead of them."""
    logging_steps = ctx.spec.logging_steps
    main = attempts[-1]
    rows = merge_rows(trl_rows(ctx, trl_columns(ctx, main.obs), logging_steps), trl_eval_rows(ctx, main.evals))
    for step in ctx.checkpoints:
        write_checkpoint(ctx, target / f"checkpoint-{step}", rows, step, logging_steps)
    write_trl_tensorboard(ctx, target, attempts)


_TRL_CLEAR = "\r" + " " * 80 + "\r"


def _bar(step: int, total: int, elapsed: float, per_step: float) -> str:
    fill = 10 * step / total
    full = int(fill)
    partial = " ▏▎▍▌▋▊▉"[int(8 * (fill - full))] if full < 10 else ""
    bar = ("█" * full + partial).ljust(10)
    remaining = max(0.0, (total - step) * per_step)

    def clock(seconds: float) -> str:
        minutes, sec = divmod(int(seconds), 60)
        hours, minutes = divmod(minutes, 60)
        return f"{hours:d}:{minutes:02d}:{sec:02d}" if hours else f"{minutes:02d}:{sec:02d}"

    times = f"[{clock(elapsed)}<{clock(remaining)}, {per_step:5.2f}s/it]"
    return f"\r{100 * step // total:3d}%|{bar}| {step}/{total} {times}"


def _console_dict(row: Row, strings: bool) -> str:
    shown = {k: v for k, v in row.items() if k != "step"}
    if strings:
        shown = {k: (f"{v:.4g}" if isinstance(v, float) else v) for k, v in shown.items()}
    return repr({k: (math.nan if v is None else v) for k, v in shown.items()})


def write_trl_console(ctx: Ctx, target: Path, attempts: list[Attempt]) -> None:
    """`trl_console`: the printed log dicts between tqdm redraws, plus LoRA checkpoint folders."""
    logging_steps = ctx.spec.logging_steps
    strings = bool(ctx.opt("string_values", ctx.spec.seed % 2 == 1))
    out: list[str] = []
    prompts, group = batch_shape(ctx)
    args = training_args(ctx, logging_steps)
    settings = ", ".join(f"{k}={args[k]}" for k in ("beta", "num_generations", "max_completion_length", "max_steps",
                                                       "logging_steps", "loss_type") if k in args)
    for number, attempt in enumerate(attempts):
        cols = trl_columns(ctx, attempt.obs)
        train = trl_rows(ctx, cols, logging_steps, attempt.first, attempt.last)
        by_step = {int(r["step"]): r for r in train}
        evals = {int(r["step"]): r for r in trl_eval_rows(ctx, attempt.evals, attempt.first, attempt.last)}
        out.append(f"2026-11-20 09:14:0{number} [INFO] train_{ctx.recipe.kind}: Model: Qwen/Qwen2.5-1.5B-Instruct\n")
        config_name = "DPOConfig" if ctx.recipe.kind == "dpo" else "GRPOConfig"
        out.append(f"2026-11-20 09:14:0{number} [INFO] train_{ctx.recipe.kind}: {config_name}: {settings}\n")
        out.append("\rLoading checkpoint shards:   0%|          | 0/2 [00:00<?, ?it/s]"
                   "\rLoading checkpoint shards: 100%|██████████| 2/2 [00:01<00:00,  1.62it/s]\n")
        if attempt.first > 1:
            out.append(f"Continuing training from checkpoint, will skip to saved global_step\n"
                       f"  Continuing training from global step {attempt.first - 1}\n")
        out += ["***** Running training *****\n", "  Num examples = 7,473\n", "  Num Epochs = 1\n",
                "  Instantaneous batch size per device = 8\n",
                f"  Total train batch size (w. parallel, distributed & accumulation) = {prompts * group}\n",
                "  Gradient Accumulation steps = 4\n", f"  Total optimization steps = {ctx.planned:,}\n",
                "  Number of trainable parameters = 18,464,768\n"]
        step_time = attempt.obs.get("step_time", constant_curve(ctx.n, 4.0))
        elapsed = 0.0
        out.append(_bar(0, ctx.planned, 0.0, 0.0))  # HF redraws a fresh bar at 0, then jumps to the resumed step
        for step in range(attempt.first, attempt.last + 1):
            per = float(step_time[step - 1])
            elapsed += per
            if ctx.recipe.kind == "grpo" and step % 3 == 0:
                out.append("\n\rProcessed prompts:   0%|          | 0/64 [00:00<?, ?it/s]"
                           "\rProcessed prompts: 100%|██████████| 64/64 [00:02<00:00, 28.1it/s]\n")
            out.append(_bar(step, ctx.planned, elapsed, per))
            for row in (by_step.get(step), evals.get(step)):
                if row is None:
                    continue
                out.append(_TRL_CLEAR)
                out.append(_console_dict(row, strings) + "\n")
                out.append(_bar(step, ctx.planned, elapsed, per))
        summary = trl_summary_row(ctx, attempt.obs) if number == len(attempts) - 1 else None
        if summary is not None:  # HF's progress callback prints the summary without total_flos
            shown = {k: v for k, v in summary.items() if k != "total_flos"}
            out.append(_TRL_CLEAR)
            out.append(_console_dict(shown, strings) + "\n")
            out.append(_bar(ctx.n, ctx.planned, elapsed, float(step_time[ctx.n - 1])) + "\n")
        if number < len(attempts) - 1:
            out.append("\nTraceback (most recent call last):\n  File \"train_grpo.py\", line 88, in <module>\n"
                       "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.31 GiB\n")
    out.append("\n")
    name = "nohup.out" if ctx.spec.seed % 3 == 2 else "train.log"
    (target / name).write_text("".join(out), encoding="utf-8")
    for step in ctx.checkpoints:
        write_bare_checkpoint(target / f"checkpoint-{step}")
        (target / f"checkpoint-{step}" / "adapter_config.json").write_text(
            json.dumps({"base_model_name_or_path": "Qwen/Qwen2.5-1.5B-Instruct", "peft_type": "LORA", "r": 16},
                       indent=2) + "\n", encoding="utf-8")


def write_jsonl_flat(ctx: Ctx, target: Path, attempts: list[Attempt]) -> None:
    """`jsonl_flat`: a TRL run whose own `TrainerCallback.on_log` appends every log dict to `metrics.jsonl`.

    One flat object per log call, `{"step": N, ...}` with TRL's keys: training rows, `eval_*` rows at the same
    step, and the end-of-training summary when the run finished. The callback appends, so a resumed run holds
    the overlap twice; NaN is written as `json.dumps` writes it (bare `NaN`), an all-NaN metric as `null`.
    Beside it: the `training_args.json` the script dumped, and checkpoint folders holding only the model
    config (the trainer states were not kept).
    """
    logging_steps = ctx.spec.logging_steps
    lines: list[str] = []
    for number, attempt in enumerate(attempts):
        cols = trl_columns(ctx, attempt.obs)
        rows = merge_rows(trl_rows(ctx, cols, logging_steps, attempt.first, attempt.last),
                          trl_eval_rows(ctx, attempt.evals, attempt.first, attempt.last))
        summary = trl_summary_row(ctx, attempt.obs) if number == len(attempts) - 1 else None
        if summary is not None:
            rows.append(summary)
        for row in rows:
            record = {"step": row["step"], **{k: v for k, v in row.items() if k != "step"}}
            lines.append(json.dumps(record))
    (target / "metrics.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    args = training_args(ctx, logging_steps) | {"model_name_or_path": "Qwen/Qwen2.5-1.5B-Instruct"}
    (target / "training_args.json").write_text(json.dumps(args, indent=2) + "\n", encoding="utf-8")
    for step in ctx.checkpoints:
        write_bare_checkpoint(target / f"checkpoint-{step}")
