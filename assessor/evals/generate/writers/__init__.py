"""Writing a run directory: `write_run` simulates a spec's run and hands it to the writer of its format.

TRL averages every value since the last log (grad norm and learning rate are the last step's), verl and
reasoning-from-scratch log every step; NaN is written as each format writes it (bare `NaN` in HF JSON, `null`
in verl JSONL, `nan` / `np.float64(nan)` in consoles, float NaN in TensorBoard). The writers are grouped by
framework: `trl` (with the HF checkpoint files of `hf_files`), `verl`, `rfs`, `tensorboard` (both frameworks),
and `nvidia_smi` for the optional GPU log.

What a format cannot carry is left out, never faked, and a pattern whose label rests on it is not written
there (`Recipe.excluded` says why):

* verl (`jsonl`, `verl_console`, verl `tensorboard`): no reward std, zero-spread group share or reward parts
  (only `critic/score/*` and the advantages' range), one region clip fraction, no DPO; its TensorBoard folder
  has no config, so no planned total and no end of training.
* the book's CSV (`csv`): the total reward (and the format part), `adv_std` for the group spread, no grad norm,
  no clip fractions, no DPO; a KL column only when the run has a KL term.
* TRL (`trl_state`, `trl_live`, `trl_console`, `jsonl_flat`, TRL `tensorboard`): values averaged over the
  logging interval (grad norm and learning rate the last step's), no generation/training phase split
  (`step_time` only), and the trainer state never holds a resumed overlap twice.
* every format: held-out evals where the run evaluates; the end-of-training marker where the framework writes
  one (HF's summary row and `should_training_stop`, verl's final validation line, the CSV's `total_steps`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from assessor.errors import ConfigError
from assessor.evals.cases import Generated
from assessor.evals.generate.context import context_for, layout_of
from assessor.evals.generate.model import Ctx, Grpo
from assessor.evals.generate.simulate import Attempt, simulate_attempts
from assessor.evals.generate.writers.hf_files import write_bare_checkpoint
from assessor.evals.generate.writers.nvidia_smi import write_nvidia_smi
from assessor.evals.generate.writers.rfs import write_csv
from assessor.evals.generate.writers.tensorboard import write_trl_tensorboard, write_verl_tensorboard
from assessor.evals.generate.writers.trl import write_jsonl_flat, write_trl_console, write_trl_live, write_trl_state
from assessor.evals.generate.writers.verl import write_jsonl, write_verl_console

_WRITERS: dict[str, Callable[[Ctx, Path, list[Attempt]], None]] = {
    "trl_state": write_trl_state, "trl_live": write_trl_live, "jsonl": write_jsonl,
    "verl_console": write_verl_console, "trl_console": write_trl_console, "csv": write_csv,
    "jsonl_flat": write_jsonl_flat,
}


def write_run(spec: Generated, target: Path) -> Path:
    """Write the run directory for a spec, deterministically.

    Args:
        spec: pattern, format, seed, steps, logging interval and recipe options.
        target: the run directory to create (it must not exist or be empty).

    Returns:
        The run directory (`target`), ready for `assessor.load_run`.

    Raises:
        ConfigError: unknown pattern, a format the pattern cannot be written in, or bad options.
    """
    ctx = context_for(spec)
    if spec.format == "trl_state" and layout_of(spec) == "checkpoints" and not ctx.checkpoints:
        raise ConfigError("a trl_state run needs checkpoints, or layout: top")
    target = Path(target)
    if target.exists() and any(target.iterdir()):
        raise ConfigError(f"{target}: not empty; write_run only writes into a new directory")
    target.mkdir(parents=True, exist_ok=True)
    scenario = ctx.recipe.build(ctx)
    attempts = simulate_attempts(ctx, scenario.latent)
    if spec.format == "tensorboard":
        if ctx.framework == "verl":
            write_verl_tensorboard(ctx, target, attempts)
        else:
            write_trl_tensorboard(ctx, target, attempts)
            for step in ctx.checkpoints:
                write_bare_checkpoint(target / f"checkpoint-{step}")
    else:
        _WRITERS[spec.format](ctx, target, attempts)
    if ctx.opt("nvidia_smi", False) and isinstance(scenario.latent, Grpo):
        write_nvidia_smi(ctx, target / "nvidia-smi.csv", attempts[-1].obs)
    return target
