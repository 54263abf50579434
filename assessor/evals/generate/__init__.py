"""Synthetic RL post-training runs with a known right answer, written in the frameworks' real on-disk formats.

A *recipe* (`PATTERNS[name]`) describes one pattern a practitioner recognises (the KL/reward quadrants,
entropy collapse, length explosion, a held-out eval peaking, a resumed run with duplicate steps, ...). It
builds the run's clean latent curves and states its own ground truth (`Truth`: the decisions a careful
practitioner would accept, the onset, the steps a rollback may target). `write_run` then simulates the
run from those curves and writes it the way the framework would.

Formats (`Generated.format`): `trl_state` (checkpoint folders with `trainer_state.json` and
`training_args.bin`, or a top-level state with `training_args.json`), `trl_live` (only the checkpoints the
save limit kept, the newest state stopping at its step, TensorBoard events under `runs/` running ahead,
optionally an nvidia-smi log), `tensorboard` (TRL `train/` tags, or verl's bare tags with
`options.framework: verl`), `jsonl` (verl's file logger plus the hydra config), `verl_console` (Ray
prefixes, ANSI colours, `np.float64(...)` wrappers), `trl_console` (printed dicts between tqdm redraws)
and `csv` (reasoning-from-scratch per-step CSV, CRLF, `eval_acc` in percent every N steps).

Everything is a pure function of (pattern, format, seed, steps, logging_steps, options), so the same
spec always writes the same bytes, and `generate_all` caches runs under a hash of the spec and
`GENERATOR_VERSION`. `python -m assessor.evals.generate evals/synthetic.yaml` rewrites the labelled case
file from `case_plan()`, taking every label from the recipes' ground truth.

The stages, one module each: `model` (truth, latent curves, recipe, context), `recipes` (the patterns, by
signal), `context` (a spec's context and ground truth), `simulate` (noise and completions), `rows` (what each
framework logs per step), `writers` (the on-disk formats), `cache` (`generate_all`) and `case_table` (the
labelled set).
"""

from __future__ import annotations

from assessor.evals.generate.cache import GENERATOR_VERSION, generate_all, spec_key
from assessor.evals.generate.case_table import Planned, case_plan, label, main, write_cases
from assessor.evals.generate.context import checkpoint_steps, framework_of, truth
from assessor.evals.generate.model import (
    FORMATS,
    GRPO_FORMATS,
    VOCAB_SIZE,
    Array,
    Builder,
    Ctx,
    Dpo,
    Format,
    Grpo,
    Latent,
    Recipe,
    Row,
    Scenario,
    Truth,
)
from assessor.evals.generate.recipes import PATTERNS
from assessor.evals.generate.rows import rfs_rows, trl_columns, trl_eval_rows, trl_rows, verl_rows
from assessor.evals.generate.simulate import simulate_dpo, simulate_grpo
from assessor.evals.generate.writers import write_run
from assessor.evals.generate.writers.hf_files import training_args_bin

__all__ = [
    "FORMATS", "GENERATOR_VERSION", "GRPO_FORMATS", "PATTERNS", "VOCAB_SIZE", "Array", "Builder", "Ctx", "Dpo",
    "Format", "Grpo", "Latent", "Planned", "Recipe", "Row", "Scenario", "Truth", "case_plan", "checkpoint_steps",
    "framework_of", "generate_all", "label", "main", "rfs_rows", "simulate_dpo", "simulate_grpo", "spec_key",
    "training_args_bin", "trl_columns", "trl_eval_rows", "trl_rows", "truth", "verl_rows", "write_cases",
    "write_run",
]
