"""The labelled synthetic set, `evals/synthetic.yaml`.

`scenarios()` lists the scenarios (a pattern with its seed, steps and options); each expands into one case
per format it can be written in, grouped by the scenario id (`Case.scenario`), so `assessor eval` can check
that a judge's verdict does not depend on the file format. `case_plan()` is every case (plus a few whose
setting exists in one format only), `label` takes its labels from the recipe's ground truth (never from a
judge), and `write_cases` (`main`, `python -m assessor.evals.generate`) writes the case file.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from assessor.evals.cases import Case, Generated
from assessor.evals.generate.context import checkpoint_steps, framework_of, truth
from assessor.evals.generate.model import Format
from assessor.evals.generate.recipes import PATTERNS


@dataclass(frozen=True)
class Planned:
    """One case of the synthetic set before labelling: a spec plus extra tags, and the scenario it writes."""

    name: str
    spec: Generated
    tags: tuple[str, ...] = ()
    scenario: str | None = None


# Every format writes a scenario from the same simulated batches: the TRL batch shape unless the scenario (or its
# recipe) says otherwise, so the runs differ only in what each format keeps and how it writes it.
SHARED_BATCH = {"prompts": 8, "num_generations": 8}


def _short(fmt: Format, framework: str) -> str:
    if fmt == "tensorboard":
        return "tb-verl" if framework == "verl" else "tb"
    return fmt.replace("_", "-")


@dataclass(frozen=True)
class ScenarioPlan:
    """One scenario: a pattern with its seed, steps and options, written in every format it can be written in.

    `expand` gives one case per format, all sharing the scenario id `name`: the same run, so the same labels,
    and a judge's verdicts on them must agree (`assessor eval` reports a disagreement as a failure).

    Attributes:
        name: the scenario id (the case names add the format).
        pattern: the recipe.
        seed, steps, logging_steps: as in `Generated` (`logging_steps` is TRL's; verl and the book log every step).
        options: recipe options, shared by every format (`framework` picks the tensorboard writer's framework).
        formats: the formats to write (default: every format the pattern can be written in, `Recipe.formats`).
        tags: extra tags on every case (`fast` puts the scenario in the CI subset).
    """

    name: str
    pattern: str
    seed: int
    steps: int
    logging_steps: int = 1
    options: Mapping[str, float | int | str | bool] = field(default_factory=dict)
    formats: tuple[Format, ...] | None = None
    tags: tuple[str, ...] = ()

    def expand(self) -> list[Planned]:
        """One planned case per format."""
        recipe = PATTERNS[self.pattern]
        options = dict(self.options)
        if recipe.kind == "grpo" and recipe.batch is None:
            for key, value in SHARED_BATCH.items():
                options.setdefault(key, value)
        framework = str(options.get("framework", "trl"))
        if recipe.exclusion("tensorboard", framework) is not None:
            framework = "verl" if framework == "trl" else "trl"
        out = []
        for fmt in self.formats or recipe.formats:
            spec_options = {k: v for k, v in options.items() if k != "framework"}
            if fmt == "tensorboard":
                spec_options["framework"] = framework
            spec = Generated(pattern=self.pattern, format=fmt, seed=self.seed, steps=self.steps,
                             logging_steps=self.logging_steps, options=spec_options)
            out.append(Planned(f"{self.name}-{_short(fmt, framework)}", spec, self.tags, self.name))
        return out


def _plan(name: str, pattern: str, fmt: Format, seed: int, steps: int, logging_steps: int = 1,
          tags: Sequence[str] = (), **options: float | int | str | bool) -> Planned:
    """A case in one format only (a format-specific setting: a save limit, a GPU log beside the run)."""
    spec = Generated(pattern=pattern, format=fmt, seed=seed, steps=steps, logging_steps=logging_steps, options=options)
    return Planned(name, spec, tuple(tags))


def _each(name: str, pattern: str, seed: int, steps: int, logging_steps: int = 1, tags: Sequence[str] = (),
          **options: float | int | str | bool) -> ScenarioPlan:
    """A scenario in every format its pattern can be written in."""
    return ScenarioPlan(name, pattern, seed, steps, logging_steps, options, None, tuple(tags))


FAST = ("fast",)


def scenarios() -> list[ScenarioPlan]:
    """The scenarios of the synthetic set, each written in every format it can be."""
    e = _each
    return [
        # --- healthy, varied in noise, KL term, logging interval, components, held-out evals, checkpoints
        e("healthy-s1", "healthy", 1, 400, 10, tags=FAST),
        e("healthy-nokl-s3", "healthy", 3, 300, 5, beta=0.0, noise="high", components=True),
        e("healthy-eval-s5", "healthy", 5, 300, 1, noise="low", eval_every=20),
        e("healthy-verl-s4", "healthy", 4, 250, 5, framework="verl", eval_every=25),
        e("healthy-nockpt-s9", "healthy", 9, 360, 2, checkpoints=False, noise="low"),
        e("kl_up_reward_up-s2", "kl_up_reward_up", 2, 300, 5),
        e("kl_stable_reward_up-s1", "kl_stable_reward_up", 1, 400, 10),
        e("pg_loss_declining-s2", "pg_loss_declining", 2, 300, 5),
        e("pg_loss_oscillating-s1", "pg_loss_oscillating", 1, 300, 10),
        e("kl_spike_transient-s1", "kl_spike_transient", 1, 400, 1, save_steps=50),
        e("transient_dip-s1", "transient_dip", 1, 400, 10),
        e("early-s1", "early", 1, 33, 1, save_steps=10),
        e("early-nockpt-s4", "early", 4, 40, 2, beta=0.0, checkpoints=False),
        e("generation_bound-s1", "generation_bound", 1, 300, 5, gen_share=0.76),
        e("resumed_duplicates-s1", "resumed_duplicates", 1, 400, 10, save_steps=50),
        e("clip_asymmetry-benign-s3", "clip_asymmetry", 3, 300, 5, benign=True),
        e("dpo_healthy-s1", "dpo_healthy", 1, 150, 1, save_steps=25, tags=FAST),
        e("finished_rising-s1", "finished_rising", 1, 300, 10),
        # --- converged, run its course, finished on a plateau
        e("kl_stable_reward_flat-s1", "kl_stable_reward_flat", 1, 400, 10),
        e("kl_up_reward_flat-s3", "kl_up_reward_flat", 3, 400, 10),
        e("finished_plateau-s1", "finished_plateau", 1, 300, 10),
        # --- no learning signal (a practitioner stops and fixes the setup)
        e("reward_saturation-s1", "reward_saturation", 1, 300, 5),
        e("identical_rewards-s1", "identical_rewards", 1, 80, 2),
        e("identical_rewards-one-s3", "identical_rewards", 3, 80, 2, value=1.0),
        e("zero_reward-s1", "zero_reward", 1, 200, 5, tags=FAST),
        e("correctness_pinned-s1", "correctness_pinned", 1, 300, 5),
        e("zero_grad-s1", "zero_grad", 1, 200, 1),
        e("truncation-s1", "truncation", 1, 300, 10, max_completion_length=512),
        e("dpo_stuck-s1", "dpo_stuck", 1, 120, 1, save_steps=25),
        e("component_hacking-stalls-s3", "component_hacking", 3, 300, 5, correctness="stalls"),
        # --- held-out eval: flat while training reward rises, or peaked and fell
        e("eval_flat-s1", "eval_flat", 1, 300, 10),
        e("eval_flat-identical-s2", "eval_flat", 2, 300, 5, eval_identical=True),
        e("eval_peak-s1", "eval_peak", 1, 500, 10),
        # --- a better model lies behind: roll back (checkpoint in the run folder or not)
        e("kl_up_reward_down-s1", "kl_up_reward_down", 1, 400, 10),
        e("kl_up_reward_down-nockpt-s3", "kl_up_reward_down", 3, 400, 1, checkpoints=False, tags=FAST),
        e("resumed_duplicates-degrading-s3", "resumed_duplicates", 3, 400, 10, save_steps=50,
          underlying="kl_up_reward_down", beta=0.04),
        e("pg_loss_sign_reversal-s2", "pg_loss_sign_reversal", 2, 400, 10),
        e("pg_loss_blowup-s2", "pg_loss_blowup", 2, 400, 5),
        e("component_hacking-s1", "component_hacking", 1, 400, 10),
        e("entropy_collapse-s1", "entropy_collapse", 1, 400, 10),
        e("entropy_blowup-s1", "entropy_blowup", 1, 240, 1),
        e("length_collapse-s1", "length_collapse", 1, 300, 5),
        e("length_explosion-s2", "length_explosion", 2, 400, 10),
        e("length_bimodal-s1", "length_bimodal", 1, 400, 10),
        e("clip_asymmetry-s1", "clip_asymmetry", 1, 400, 10),
        e("kl_blowup-s1", "kl_blowup", 1, 400, 10),
        e("nan_divergence-s1", "nan_divergence", 1, 300, 5),
        e("reward_hacking-s1", "reward_hacking", 1, 300, 5),
        e("dpo_logp_collapse-s1", "dpo_logp_collapse", 1, 200, 2, save_steps=25),
    ]


def case_plan() -> list[Planned]:
    """The synthetic set: every scenario in every format it can be written in, plus format-specific cases."""
    p = _plan
    return [
        *(planned for scenario in scenarios() for planned in scenario.expand()),
        # --- settings only one format has: a save limit that deleted the good checkpoints, a GPU log
        p("generation_bound-trl-live-smi-s3", "generation_bound", "trl_live", 3, 215, 5, nvidia_smi=True,
          gen_share=0.78, tags=["nvidia_smi"]),
        p("entropy_collapse-trl-live-limit-s2", "entropy_collapse", "trl_live", 2, 415, 10, save_total_limit=2,
          tags=["save_total_limit"]),
    ]


def label(planned: Planned) -> Case:
    """A labelled case: the spec plus the labels its recipe's ground truth gives."""
    answer = truth(planned.spec)
    spec = planned.spec
    framework = framework_of(spec)
    tags = [spec.pattern, spec.format, framework, *planned.tags]
    if not checkpoint_steps(spec):
        tags.append("no_checkpoints")
    if bool(spec.options.get("finished", PATTERNS[spec.pattern].finished)):
        tags.append("finished")
    return Case(
        name=planned.name, run=spec, accept=list(answer.accept), preferred=answer.preferred,
        rollback_window=answer.rollback_window, onset_step=answer.onset_step, healthy=answer.healthy,
        tags=list(dict.fromkeys(tags)), reasoning=answer.reasoning, scenario=planned.scenario,
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
