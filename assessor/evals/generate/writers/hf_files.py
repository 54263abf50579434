"""The files the HF Trainer leaves in a checkpoint folder.

`trainer_state.json`, `training_args.bin` (the pickled TRL config inside a `torch.save` zip) and the model's
`config.json`.
"""

from __future__ import annotations

import io
import json
import pickle
import sys
import types
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from assessor.evals.generate.model import VOCAB_SIZE, Ctx, Row, batch_shape


def trainer_state(ctx: Ctx, rows: list[Row], global_step: int, logging_steps: int) -> dict[str, Any]:
    """The `trainer_state.json` HF writes into a checkpoint (its `log_history` is `rows`)."""
    return {
        "best_global_step": None, "best_metric": None, "best_model_checkpoint": None,
        "epoch": rows[-1]["epoch"] if rows else 0.0, "eval_steps": ctx.eval_every or 500,
        "global_step": global_step, "is_hyper_param_search": False, "is_local_process_zero": True,
        "is_world_process_zero": True, "log_history": rows, "logging_steps": logging_steps,
        "max_steps": ctx.planned, "num_input_tokens_seen": 0, "num_train_epochs": 1,
        "save_steps": ctx.all_saves[0] if ctx.all_saves else 500,
        "stateful_callbacks": {"TrainerControl": {"args": {
            "should_epoch_stop": False, "should_evaluate": False, "should_log": False, "should_save": True,
            "should_training_stop": global_step >= ctx.planned}, "attributes": {}}},
        "total_flos": 0.0, "train_batch_size": 8, "trial_name": None, "trial_params": None,
    }


def training_args(ctx: Ctx, logging_steps: int) -> dict[str, Any]:
    """The TRL config fields of the run (GRPOConfig or DPOConfig)."""
    prompts, group = batch_shape(ctx)
    args: dict[str, Any] = {
        "output_dir": f"outputs/qwen2.5-1.5b-{ctx.recipe.kind}", "max_steps": ctx.planned,
        "logging_steps": logging_steps, "save_steps": ctx.all_saves[0] if ctx.all_saves else 500,
        "save_total_limit": int(ctx.opt("save_total_limit", 3 if ctx.spec.format == "trl_live" else 0)) or None,
        "learning_rate": ctx.num("learning_rate", 5e-6 if ctx.recipe.kind == "dpo" else 1e-6),
        "lr_scheduler_type": "linear",
        "warmup_ratio": 0.05, "per_device_train_batch_size": 8, "gradient_accumulation_steps": 4, "seed": 42,
        "bf16": True, "report_to": ["tensorboard"], "eval_steps": ctx.eval_every or None,
        "eval_strategy": "steps" if ctx.eval_every else "no",
    }
    if ctx.recipe.kind == "dpo":
        args.update({"beta": ctx.num("dpo_beta", 0.1), "loss_type": "sigmoid", "max_length": 1024})
    else:
        args.update({
            "beta": ctx.beta, "num_generations": group,
            "max_completion_length": int(ctx.opt("max_completion_length", 1024)),
            "max_prompt_length": 512, "loss_type": "dapo", "scale_rewards": "group",
            "num_iterations": 2 if (ctx.recipe.off_policy or int(ctx.opt("num_iterations", 1)) > 1) else 1,
            "epsilon": 0.2, "epsilon_high": 0.28, "temperature": 1.0, "use_vllm": True,
            "generation_batch_size": prompts * group,
        })
    return args


def training_args_bin(kind: str, fields: Mapping[str, Any]) -> bytes:
    """A `training_args.bin` as `torch.save` lays it out: a zip holding the pickled TRL config."""
    if kind == "dpo":
        class_name, module = "DPOConfig", "trl.trainer.dpo_config"
    else:
        class_name, module = "GRPOConfig", "trl.trainer.grpo_config"
    names = ("trl", "trl.trainer", module)
    modules = {name: types.ModuleType(name) for name in names}
    config_class = type(class_name, (), {"__module__": module})
    setattr(modules[module], class_name, config_class)
    saved = {name: sys.modules.get(name) for name in names}
    sys.modules.update(modules)
    try:
        config = config_class()
        config.__dict__.update(fields)
        payload = pickle.dumps(config, protocol=2)
    finally:
        for name, previous in saved.items():
            if previous is None:
                del sys.modules[name]
            else:
                sys.modules[name] = previous
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_STORED) as archive:
        for entry, data in (("training_args/data.pkl", payload), ("training_args/byteorder", b"little"),
                            ("training_args/version", b"3\n"), ("training_args/.data/serialization_id", b"0")):
            info = zipfile.ZipInfo(entry, date_time=(2026, 11, 20, 9, 14, 2))
            archive.writestr(info, data)
    return buffer.getvalue()


def _model_config() -> str:
    return json.dumps({
        "_name_or_path": "Qwen/Qwen2.5-1.5B-Instruct", "architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2",
        "hidden_size": 1536, "num_hidden_layers": 28, "torch_dtype": "bfloat16", "vocab_size": VOCAB_SIZE,
    }, indent=2) + "\n"


def dump_state(state: Mapping[str, Any]) -> str:
    """A trainer state as HF writes it."""
    return json.dumps(state, indent=2, sort_keys=True) + "\n"  # HF: indent=2, sort_keys=True; NaN stays NaN


def write_checkpoint(ctx: Ctx, folder: Path, rows: list[Row], step: int, logging_steps: int) -> None:
    """A TRL checkpoint folder: the state up to `step`, `training_args.bin` and the model config."""
    folder.mkdir(parents=True, exist_ok=True)
    kept = [r for r in rows if int(r["step"]) <= step]
    (folder / "trainer_state.json").write_text(dump_state(trainer_state(ctx, kept, step, logging_steps)),
                                               encoding="utf-8")
    (folder / "training_args.bin").write_bytes(training_args_bin(ctx.recipe.kind, training_args(ctx, logging_steps)))
    (folder / "config.json").write_text(_model_config(), encoding="utf-8")


def write_bare_checkpoint(folder: Path) -> None:
    """A checkpoint folder holding only the model config (the weights are left out)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(_model_config(), encoding="utf-8")
