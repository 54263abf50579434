"""The labelled synthetic set, `evals/synthetic.yaml`.

`case_plan()` lists every case, `label` takes its labels from the recipe's ground truth (never from a judge),
and `write_cases` (`main`, `python -m assessor.evals.generate`) writes the case file.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from assessor.evals.cases import Case, Generated
from assessor.evals.generate.context import checkpoint_steps, framework_of, truth
from assessor.evals.generate.model import Format


@dataclass(frozen=True)
class Planned:
    """One case of the synthetic set before labelling: a spec plus extra tags."""

    name: str
    spec: Generated
    tags: tuple[str, ...] = ()


def _plan(name: str, pattern: str, fmt: Format, seed: int, steps: int, logging_steps: int = 1,
          tags: Sequence[str] = (), **options: float | int | str | bool) -> Planned:
    spec = Generated(pattern=pattern, format=fmt, seed=seed, steps=steps, logging_steps=logging_steps, options=options)
    return Planned(name, spec, tuple(tags))


def case_plan() -> list[Planned]:
    """The synthetic set: every pattern in at least two formats and seeds, healthy runs in many variants."""
    p = _plan
    return [
        # --- healthy, varied in framework, format, noise, KL term, logging interval, components
        p("healthy-trl-state-s1", "healthy", "trl_state", 1, 400, 10),
        p("healthy-trl-live-s2", "healthy", "trl_live", 2, 520, 10, components=True),
        p("healthy-tb-trl-nokl-s3", "healthy", "tensorboard", 3, 300, 5, beta=0.0, noise="high"),
        p("healthy-tb-verl-s4", "healthy", "tensorboard", 4, 250, framework="verl", eval_every=25),
        p("healthy-jsonl-s5", "healthy", "jsonl", 5, 300, noise="low", eval_every=20),
        p("healthy-verl-console-nokl-s6", "healthy", "verl_console", 6, 200, beta=0.0, noise="high"),
        p("healthy-trl-console-s7", "healthy", "trl_console", 7, 200, 5, beta=0.0, components=True),
        p("healthy-csv-s8", "healthy", "csv", 8, 500, eval_every=50, noise="high"),
        p("healthy-trl-state-top-s9", "healthy", "trl_state", 9, 360, 1, layout="top", checkpoints=False, noise="low"),
        p("kl_up_reward_up-trl-state-s1", "kl_up_reward_up", "trl_state", 1, 400, 10),
        p("kl_up_reward_up-jsonl-s2", "kl_up_reward_up", "jsonl", 2, 300),
        p("kl_up_reward_up-csv-s3", "kl_up_reward_up", "csv", 3, 400, eval_every=50),
        p("kl_stable_reward_up-tb-trl-s1", "kl_stable_reward_up", "tensorboard", 1, 400, 10),
        p("kl_stable_reward_up-verl-console-s2", "kl_stable_reward_up", "verl_console", 2, 250),
        p("kl_stable_reward_up-trl-console-s3", "kl_stable_reward_up", "trl_console", 3, 300, 10),
        p("pg_loss_declining-verl-console-s1", "pg_loss_declining", "verl_console", 1, 300),
        p("pg_loss_declining-trl-state-s2", "pg_loss_declining", "trl_state", 2, 300, 5),
        p("pg_loss_oscillating-trl-console-s1", "pg_loss_oscillating", "trl_console", 1, 300, 10),
        p("pg_loss_oscillating-jsonl-s2", "pg_loss_oscillating", "jsonl", 2, 300),
        p("kl_spike_transient-trl-state-s1", "kl_spike_transient", "trl_state", 1, 400, 1, save_steps=50),
        p("kl_spike_transient-tb-verl-s2", "kl_spike_transient", "tensorboard", 2, 300, framework="verl"),
        p("kl_spike_transient-jsonl-s3", "kl_spike_transient", "jsonl", 3, 240),
        p("transient_dip-trl-live-s1", "transient_dip", "trl_live", 1, 490, 10),
        p("transient_dip-verl-console-s2", "transient_dip", "verl_console", 2, 300),
        p("transient_dip-csv-s3", "transient_dip", "csv", 3, 400),
        p("early-trl-live-s1", "early", "trl_live", 1, 33, 1, save_steps=10),
        p("early-verl-console-s2", "early", "verl_console", 2, 20, checkpoints=False),
        p("early-csv-s3", "early", "csv", 3, 25, checkpoints=False),
        p("early-trl-console-s4", "early", "trl_console", 4, 40, 2, beta=0.0, checkpoints=False),
        p("generation_bound-jsonl-s1", "generation_bound", "jsonl", 1, 300),
        p("generation_bound-verl-console-s2", "generation_bound", "verl_console", 2, 200, gen_share=0.72),
        p("generation_bound-trl-live-smi-s3", "generation_bound", "trl_live", 3, 215, 5, nvidia_smi=True,
          gen_share=0.78, tags=["nvidia_smi"]),
        p("resumed_duplicates-tb-trl-s1", "resumed_duplicates", "tensorboard", 1, 400, 10, save_steps=50),
        p("resumed_duplicates-verl-console-s2", "resumed_duplicates", "verl_console", 2, 300, save_steps=50),
        p("resumed_duplicates-csv-degrading-s3", "resumed_duplicates", "csv", 3, 400, save_steps=50,
          underlying="kl_up_reward_down", beta=0.04),
        p("clip_asymmetry-benign-trl-state-s3", "clip_asymmetry", "trl_state", 3, 300, 5, benign=True,
          tags=["benign"]),
        p("dpo_healthy-trl-state-s1", "dpo_healthy", "trl_state", 1, 150, 1, save_steps=25),
        p("dpo_healthy-tb-s2", "dpo_healthy", "tensorboard", 2, 200, 2),
        p("dpo_healthy-trl-console-s3", "dpo_healthy", "trl_console", 3, 120, 1, checkpoints=False),
        # --- converged / run its course
        p("kl_stable_reward_flat-trl-state-s1", "kl_stable_reward_flat", "trl_state", 1, 400, 10),
        p("kl_stable_reward_flat-jsonl-s2", "kl_stable_reward_flat", "jsonl", 2, 300),
        p("kl_stable_reward_flat-csv-s3", "kl_stable_reward_flat", "csv", 3, 400),
        p("kl_up_reward_flat-tb-trl-s1", "kl_up_reward_flat", "tensorboard", 1, 500, 10),
        p("kl_up_reward_flat-verl-console-s2", "kl_up_reward_flat", "verl_console", 2, 300),
        p("kl_up_reward_flat-trl-console-s3", "kl_up_reward_flat", "trl_console", 3, 400, 10, checkpoints=False),
        # --- learning signal gone / setup failures
        p("reward_saturation-trl-state-s1", "reward_saturation", "trl_state", 1, 300, 5),
        p("reward_saturation-jsonl-s2", "reward_saturation", "jsonl", 2, 250),
        p("reward_saturation-csv-s3", "reward_saturation", "csv", 3, 300),
        p("identical_rewards-trl-console-s1", "identical_rewards", "trl_console", 1, 60, 5),
        p("identical_rewards-verl-console-s2", "identical_rewards", "verl_console", 2, 40),
        p("identical_rewards-tb-trl-s3", "identical_rewards", "tensorboard", 3, 80, 2, value=1.0),
        p("truncation-trl-state-s1", "truncation", "trl_state", 1, 300, 10, max_completion_length=512),
        p("truncation-jsonl-s2", "truncation", "jsonl", 2, 250, max_completion_length=512),
        p("dpo_stuck-trl-state-s1", "dpo_stuck", "trl_state", 1, 120, 1, save_steps=25),
        p("dpo_stuck-trl-console-s2", "dpo_stuck", "trl_console", 2, 100, 1),
        # --- degrading: roll back (or stop when no good checkpoint is on disk)
        p("kl_up_reward_down-trl-state-s1", "kl_up_reward_down", "trl_state", 1, 400, 10),
        p("kl_up_reward_down-jsonl-s2", "kl_up_reward_down", "jsonl", 2, 300),
        p("kl_up_reward_down-csv-nockpt-s3", "kl_up_reward_down", "csv", 3, 400, checkpoints=False,
          tags=["no_checkpoints"]),
        p("pg_loss_sign_reversal-verl-console-s1", "pg_loss_sign_reversal", "verl_console", 1, 300),
        p("pg_loss_sign_reversal-trl-state-s2", "pg_loss_sign_reversal", "trl_state", 2, 400, 10),
        p("pg_loss_blowup-jsonl-s1", "pg_loss_blowup", "jsonl", 1, 300),
        p("pg_loss_blowup-tb-trl-s2", "pg_loss_blowup", "tensorboard", 2, 400, 5),
        p("component_hacking-trl-state-s1", "component_hacking", "trl_state", 1, 400, 10),
        p("component_hacking-csv-s2", "component_hacking", "csv", 2, 500, eval_every=50),
        p("component_hacking-stalls-trl-console-s3", "component_hacking", "trl_console", 3, 300, 5,
          correctness="stalls", tags=["stalls"]),
        p("entropy_collapse-trl-live-s1", "entropy_collapse", "trl_live", 1, 415, 10, save_total_limit=0),
        p("entropy_collapse-verl-console-s2", "entropy_collapse", "verl_console", 2, 300),
        p("entropy_blowup-jsonl-s1", "entropy_blowup", "jsonl", 1, 240),
        p("entropy_blowup-csv-s2", "entropy_blowup", "csv", 2, 300, beta=0.04),
        p("length_collapse-trl-state-s1", "length_collapse", "trl_state", 1, 300, 5),
        p("length_collapse-tb-verl-s2", "length_collapse", "tensorboard", 2, 250, framework="verl"),
        p("length_explosion-verl-console-s1", "length_explosion", "verl_console", 1, 300),
        p("length_explosion-trl-live-limit-s2", "length_explosion", "trl_live", 2, 430, 10,
          tags=["save_total_limit"]),
        p("length_bimodal-trl-console-s1", "length_bimodal", "trl_console", 1, 400, 10),
        p("length_bimodal-jsonl-s2", "length_bimodal", "jsonl", 2, 300),
        p("clip_asymmetry-trl-state-s1", "clip_asymmetry", "trl_state", 1, 400, 10),
        p("clip_asymmetry-tb-trl-s2", "clip_asymmetry", "tensorboard", 2, 300, 5),
        p("kl_blowup-trl-live-s1", "kl_blowup", "trl_live", 1, 410, 10, save_total_limit=0),
        p("kl_blowup-jsonl-s2", "kl_blowup", "jsonl", 2, 300),
        p("kl_blowup-csv-s3", "kl_blowup", "csv", 3, 400),
        p("eval_peak-trl-state-s1", "eval_peak", "trl_state", 1, 500, 10),
        p("eval_peak-verl-console-s2", "eval_peak", "verl_console", 2, 300),
        p("eval_peak-csv-s3", "eval_peak", "csv", 3, 500),
        p("nan_divergence-trl-state-s1", "nan_divergence", "trl_state", 1, 300, 5),
        p("nan_divergence-jsonl-nockpt-s2", "nan_divergence", "jsonl", 2, 250, checkpoints=False,
          tags=["no_checkpoints"]),
        p("nan_divergence-tb-verl-s3", "nan_divergence", "tensorboard", 3, 300, framework="verl"),
    ]


def label(planned: Planned) -> Case:
    """A labelled case: the spec plus the labels its recipe's ground truth gives."""
    answer = truth(planned.spec)
    spec = planned.spec
    framework = framework_of(spec)
    tags = [spec.pattern, spec.format, framework, *planned.tags]
    if not checkpoint_steps(spec):
        tags.append("no_checkpoints")
    return Case(
        name=planned.name, run=spec, accept=list(answer.accept), preferred=answer.preferred,
        rollback_window=answer.rollback_window, onset_step=answer.onset_step, healthy=answer.healthy,
        tags=list(dict.fromkeys(tags)), reasoning=answer.reasoning,
    )


def write_cases(path: Path, plan: Sequence[Planned] | None = None) -> list[Case]:
    """Write the labelled synthetic case file (labels from the recipes, never from a judge)."""
    cases = [label(item) for item in (plan if plan is not None else case_plan())]
    documents = []
    for case in cases:
        data = case.model_dump(mode="json", exclude_none=True, exclude_defaults=False)
        run = data.pop("run")
        ordered: dict[str, Any] = {"name": data.pop("name"), "run": run}
        ordered.update(data)
        documents.append(ordered)
    header = (
        "# Labelled synthetic runs. Generated by `python -m assessor.evals.generate evals/synthetic.yaml` from\n"
        "# assessor/evals/generate/case_table.py (case_plan); every label comes from the pattern's own ground truth.\n"
        "# The runs themselves are written on demand by assessor.evals.generate.generate_all.\n"
    )
    text = yaml.safe_dump({"cases": documents}, sort_keys=False, width=118, allow_unicode=True)
    Path(path).write_text(header + text, encoding="utf-8")
    return cases


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m assessor.evals.generate [CASES.yaml]`: rewrite the synthetic case file."""
    args = list(sys.argv[1:] if argv is None else argv)
    path = Path(args[0]) if args else Path("evals/synthetic.yaml")
    cases = write_cases(path)
    healthy = sum(c.healthy for c in cases)
    sys.stdout.write(f"wrote {len(cases)} cases ({healthy} healthy) to {path}\n")
    return 0
