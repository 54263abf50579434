"""The synthetic-run generator: every pattern writes a run our readers understand, deterministically, and the
labelled case file agrees with the recipes' own ground truth.

What any judge decides on these runs is measured by `assessor eval`, never asserted here.
"""

from __future__ import annotations

import ast
import json
import math
import re
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from assessor import load_run
from assessor.errors import ConfigError
from assessor.evals.cases import Generated, load_cases
from assessor.evals.generate import (
    FORMATS,
    PATTERNS,
    case_plan,
    checkpoint_steps,
    generate_all,
    label,
    spec_key,
    truth,
    write_cases,
    write_run,
)

REPO = Path(__file__).resolve().parent.parent
SYNTHETIC = REPO / "evals" / "synthetic.yaml"

# One small spec per pattern, in a format where its signals exist (the case file covers the others).
PATTERN_SPECS: dict[str, tuple[str, int, int, dict[str, object]]] = {
    "healthy": ("trl_state", 120, 5, {}),
    "early": ("verl_console", 20, 1, {}),
    "kl_up_reward_up": ("jsonl", 120, 1, {}),
    "kl_stable_reward_up": ("tensorboard", 120, 5, {}),
    "kl_up_reward_flat": ("trl_console", 150, 5, {}),
    "kl_up_reward_down": ("csv", 150, 1, {}),
    "kl_stable_reward_flat": ("trl_live", 137, 5, {}),
    "pg_loss_declining": ("verl_console", 120, 1, {}),
    "pg_loss_oscillating": ("trl_console", 120, 4, {}),
    "pg_loss_sign_reversal": ("jsonl", 150, 1, {}),
    "pg_loss_blowup": ("tensorboard", 150, 1, {"framework": "verl"}),
    "reward_saturation": ("trl_state", 150, 5, {}),
    "identical_rewards": ("trl_console", 40, 2, {}),
    "component_hacking": ("csv", 200, 1, {}),
    "entropy_collapse": ("trl_live", 163, 5, {"save_total_limit": 0}),
    "entropy_blowup": ("jsonl", 150, 1, {}),
    "length_collapse": ("trl_state", 150, 5, {}),
    "length_explosion": ("verl_console", 150, 1, {}),
    "length_bimodal": ("tensorboard", 150, 5, {}),
    "truncation": ("jsonl", 120, 1, {"max_completion_length": 512}),
    "clip_asymmetry": ("trl_state", 150, 5, {}),
    "kl_spike_transient": ("trl_state", 120, 1, {}),
    "kl_blowup": ("csv", 150, 1, {}),
    "eval_peak": ("verl_console", 200, 1, {}),
    "transient_dip": ("trl_console", 200, 5, {}),
    "generation_bound": ("jsonl", 120, 1, {}),
    "resumed_duplicates": ("tensorboard", 200, 5, {"save_steps": 25}),
    "nan_divergence": ("trl_state", 150, 5, {}),
    "dpo_healthy": ("trl_state", 80, 1, {}),
    "dpo_stuck": ("tensorboard", 80, 2, {}),
    "dpo_logp_collapse": ("jsonl_flat", 120, 2, {}),
    "zero_reward": ("trl_console", 100, 5, {}),
    "correctness_pinned": ("csv", 150, 1, {}),
    "zero_grad": ("verl_console", 100, 1, {}),
    "finished_plateau": ("jsonl", 150, 1, {}),
    "finished_rising": ("trl_live", 150, 5, {}),
    "eval_flat": ("trl_state", 200, 5, {}),
    "reward_hacking": ("tensorboard", 200, 5, {}),
}

# Warnings a generated run may carry, by why they are expected.
ALWAYS_OK = (
    re.compile(r"metrics \(.*\) are also in "),  # a checkpoint's trainer_state and the TensorBoard events overlap
)
EXPECTED = {
    "resumed_duplicates": re.compile(r"steps go backwards \(the run was resumed or restarted\)"),
    "nan_divergence": re.compile(r"nan values at steps"),
}
# A flat JSONL appended to by a callback holds the resumed overlap twice; its reader says so in its own words.
EXPECTED_FLAT = re.compile(r"values logged twice for the same step; kept the last")

# A signal each pattern is about, which the run must expose (canonical names).
KEY_SIGNAL = {
    "kl_up_reward_up": "kl", "kl_stable_reward_up": "kl", "kl_up_reward_flat": "kl", "kl_up_reward_down": "kl",
    "kl_stable_reward_flat": "kl", "kl_spike_transient": "kl", "kl_blowup": "kl",
    "pg_loss_declining": "pg_loss", "pg_loss_oscillating": "loss", "pg_loss_sign_reversal": "pg_loss",
    "pg_loss_blowup": "pg_loss", "reward_saturation": "reward_zero_std_frac", "identical_rewards": "reward_std",
    "component_hacking": "reward_component/format_mean", "entropy_collapse": "entropy", "entropy_blowup": "entropy",
    "length_collapse": "response_length_mean", "length_explosion": "response_length_clip_ratio",
    "length_bimodal": "response_length_min", "truncation": "response_length_clip_ratio",
    "clip_asymmetry": "clip_ratio_high", "generation_bound": "time_generation_s", "nan_divergence": "grad_norm",
    "dpo_healthy": "pref_margin", "dpo_stuck": "pref_accuracy", "transient_dip": "reward_mean",
    "healthy": "reward_std", "early": "entropy", "eval_peak": "entropy", "resumed_duplicates": "reward_std",
    "dpo_logp_collapse": "logps_chosen", "zero_reward": "reward_zero_std_frac", "zero_grad": "grad_norm",
    "correctness_pinned": "reward_component/format_mean", "finished_plateau": "kl", "finished_rising": "kl",
    "eval_flat": "reward_mean", "reward_hacking": "kl",
}

FRAMEWORK = {"trl_state": "trl", "trl_live": "trl", "trl_console": "trl", "jsonl_flat": "trl", "jsonl": "verl",
             "verl_console": "verl", "csv": "reasoning_from_scratch"}


def spec_for(pattern: str, seed: int = 1) -> Generated:
    fmt, steps, logging_steps, options = PATTERN_SPECS[pattern]
    return Generated(pattern=pattern, format=fmt, seed=seed, steps=steps, logging_steps=logging_steps,
                     options=options)


def unexpected(warnings: list[str], pattern: str, fmt: str = "") -> list[str]:
    # No allowance for "logged twice" (but a resumed flat JSONL): HF's eval rows repeat the train row's `epoch`,
    # which must not warn.
    allowed = [*ALWAYS_OK, *([EXPECTED[pattern]] if pattern in EXPECTED else [])]
    if pattern == "resumed_duplicates" and fmt == "jsonl_flat":
        allowed.append(EXPECTED_FLAT)
    return [w for w in warnings if not any(p.search(w) for p in allowed)]


def files_of(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


# ------------------------------------------------------------------------------------------- every pattern
def test_every_pattern_has_a_spec_here() -> None:
    assert set(PATTERN_SPECS) == set(PATTERNS)
    for name, (fmt, *_rest) in PATTERN_SPECS.items():
        assert fmt in PATTERNS[name].formats


@pytest.mark.parametrize("pattern", sorted(PATTERNS))
def test_each_pattern_writes_a_run_the_readers_understand(tmp_path: Path, pattern: str) -> None:
    spec = spec_for(pattern)
    run = load_run(write_run(spec, tmp_path / "run"))
    assert unexpected(run.warnings, pattern, spec.format) == []
    framework = FRAMEWORK.get(spec.format) or str(spec.options.get("framework", "trl"))
    assert run.facts.framework == framework
    assert run.facts.algorithm == ("dpo" if PATTERNS[pattern].kind == "dpo" else "grpo")
    headline = "pref_margin" if PATTERNS[pattern].kind == "dpo" else "reward_mean"
    assert run.has(headline)
    signal = KEY_SIGNAL[pattern]
    assert run.has(signal) or run.nonfinite_steps(signal), f"{pattern}: {signal} missing"
    assert run.last_step is not None and run.last_step <= spec.steps
    assert [c.step for c in run.checkpoints] == checkpoint_steps(spec)
    if spec.format != "tensorboard":  # event files only hold the arguments as a text summary, not read for facts
        assert run.facts.planned_total_steps is not None and run.facts.planned_total_steps >= spec.steps


@pytest.mark.parametrize("pattern", sorted(PATTERNS))
def test_each_pattern_knows_its_right_answer(pattern: str) -> None:
    spec = spec_for(pattern)
    answer = truth(spec)
    assert answer.accept and answer.reasoning
    assert answer.preferred is None or answer.preferred in answer.accept
    finished = PATTERNS[pattern].finished
    assert answer.healthy == (answer.accept == ("continue",) and not finished)  # a finished run cannot be wasted
    assert (answer.onset_step is None) == (answer.accept == ("continue",))
    if "rollback" in answer.accept:
        assert answer.rollback_window is not None and answer.onset_step is not None
        low, high = answer.rollback_window
        assert 1 <= low <= high < answer.onset_step <= spec.steps
        assert high - low + 1 >= spec.logging_steps  # a logged step lies in it

    # The label does not depend on what the run folder kept: rollback with or without a checkpoint on disk.
    bare = spec.model_copy(update={"format": "csv" if "csv" in PATTERNS[pattern].formats else "trl_console",
                                   "options": {**spec.options, "checkpoints": False}})
    assert not checkpoint_steps(bare)
    assert truth(bare).accept == answer.accept and truth(bare).rollback_window == answer.rollback_window


@pytest.mark.parametrize("fmt", [f for f in FORMATS if f != "tensorboard"] + ["tensorboard-trl", "tensorboard-verl"])
def test_healthy_run_in_every_format_states_its_facts(tmp_path: Path, fmt: str) -> None:
    options: dict[str, object] = {"beta": 0.04, "eval_every": 20}
    if fmt.startswith("tensorboard"):
        options["framework"] = fmt.split("-")[1]
        fmt = "tensorboard"
    spec = Generated(pattern="healthy", format=fmt, seed=4, steps=140, logging_steps=10 if fmt != "csv" else 1,
                     options=options)
    run = load_run(write_run(spec, tmp_path / "run"))
    assert unexpected(run.warnings, "healthy") == []
    assert run.has("reward_mean") and run.has("kl") and run.has("entropy") and run.has("response_length_mean")
    assert run.has("accuracy", "eval") or run.has("reward_mean", "eval")
    facts = run.facts
    if fmt in ("trl_state", "trl_live", "trl_console"):
        assert facts.beta == pytest.approx(0.04)
        assert facts.num_generations == 8
        assert facts.max_completion_length == 1024
    if fmt in ("jsonl", "verl_console"):
        assert facts.beta == pytest.approx(0.001)  # verl's kl_loss_coef with use_kl_loss=True
        assert facts.num_generations == 5
        assert facts.max_completion_length == 1024
    if fmt in ("trl_state", "trl_live", "jsonl", "verl_console", "tensorboard"):
        assert facts.vocab_size == 151936  # from the checkpoints' model config
    if fmt != "tensorboard":  # event files alone do not state the planned steps
        assert facts.planned_total_steps == 350


def test_trl_logs_average_since_the_last_log_and_quantise_binary_rewards(tmp_path: Path) -> None:
    every_step = load_run(write_run(Generated(pattern="healthy", format="trl_state", seed=2, steps=60,
                                              logging_steps=1), tmp_path / "a"))
    rewards = every_step.series("reward_component/accuracy_reward_mean").to_numpy()
    assert np.allclose(rewards * 64, np.round(rewards * 64))  # 8 prompts x 8 completions: multiples of 1/64
    zero = every_step.series("reward_zero_std_frac").to_numpy()
    assert np.allclose(zero * 8, np.round(zero * 8))  # a fraction of 8 groups
    every_ten = load_run(write_run(Generated(pattern="healthy", format="trl_state", seed=2, steps=60,
                                             logging_steps=10), tmp_path / "b"))
    assert every_ten.series("reward_mean").index.tolist() == [10, 20, 30, 40, 50, 60]
    assert every_ten.series("reward_mean")[10] == pytest.approx(every_step.series("reward_mean").loc[1:10].mean())
    assert every_ten.series("grad_norm")[10] == pytest.approx(every_step.series("grad_norm")[10])  # the last step's


def test_book_csv_is_crlf_with_percent_eval_every_n_steps(tmp_path: Path) -> None:
    spec = Generated(pattern="healthy", format="csv", seed=3, steps=120, options={"eval_every": 50})
    root = write_run(spec, tmp_path / "run")
    raw = (root / "rlvr_grpo_metrics.csv").read_bytes()
    assert raw.count(b"\r\n") == 121 and raw.startswith(b"step,total_steps,loss,")
    run = load_run(root)
    assert run.series("accuracy", "eval").index.tolist() == [1, 50, 100]
    assert 0 < run.series("accuracy", "eval").max() <= 1  # percent in the file, a fraction once read
    rewards = run.series("reward_mean").to_numpy()
    assert np.allclose(rewards * 8, np.round(rewards * 8))  # one prompt x 8 rollouts
    assert run.facts.framework == "reasoning_from_scratch"


def test_nan_is_written_as_each_format_writes_it(tmp_path: Path) -> None:
    for fmt, steps in (("trl_state", 100), ("jsonl", 100)):
        root = write_run(Generated(pattern="nan_divergence", format=fmt, seed=1, steps=steps, logging_steps=5),
                         tmp_path / fmt)
        if fmt == "trl_state":
            text = (root / "checkpoint-100" / "trainer_state.json").read_text()
            assert '"loss": NaN' in text and '"grad_norm": NaN' in text
        else:
            line = next(root.rglob("*.jsonl")).read_text().splitlines()[-1]
            assert json.loads(line)["data"]["actor/grad_norm"] is None  # orjson writes NaN as null
        run = load_run(root)
        assert run.nonfinite_steps("grad_norm")[-1] == 100


def test_resumed_run_holds_the_overlap_twice_and_reads_as_the_newest(tmp_path: Path) -> None:
    spec = Generated(pattern="resumed_duplicates", format="verl_console", seed=2, steps=120,
                     options={"save_steps": 20, "resume_at": 60, "crash_at": 75})
    root = write_run(spec, tmp_path / "run")
    steps = [int(m) for m in re.findall(r" step:(\d+) - ", (root / "train.log").read_text())]
    assert Counter(steps)[70] == 2 and Counter(steps)[59] == 1 and steps[-1] == 120
    run = load_run(root)
    assert any("steps go backwards" in w for w in run.warnings)
    assert run.series("reward_mean").index.tolist() == list(range(1, 121))
    assert "steps 61-75 are logged twice" in truth(spec).reasoning


def test_resumed_trl_console_log_reads_at_the_right_steps(tmp_path: Path) -> None:
    spec = Generated(pattern="resumed_duplicates", format="trl_console", seed=1, steps=200, logging_steps=10,
                     options={"save_steps": 50})
    root = write_run(spec, tmp_path / "run")
    text = next(root.glob("*.log")).read_text(encoding="utf-8")
    assert "Continuing training from global step 100" in text and text.count("'loss'") == 23  # 110-130 twice
    run = load_run(root)
    assert run.series("reward_mean").index.tolist() == list(range(10, 201, 10))
    assert any("steps go backwards" in w for w in run.warnings)
    # steps 10..130, then the resumed launch's 110..200: step 120 keeps the resumed launch's record (the 15th)
    dicts = [ast.literal_eval(line) for line in text.splitlines() if line.startswith("{'loss'")]
    first_120, resumed_120 = float(dicts[11]["reward"]), float(dicts[14]["reward"])
    assert first_120 != resumed_120
    assert run.series("reward_mean")[120] == pytest.approx(resumed_120)


def test_live_trl_run_keeps_three_checkpoints_and_events_run_ahead(tmp_path: Path) -> None:
    spec = Generated(pattern="generation_bound", format="trl_live", seed=3, steps=215, logging_steps=5,
                     options={"nvidia_smi": True})
    root = write_run(spec, tmp_path / "run")
    assert sorted(p.name for p in root.glob("checkpoint-*")) == ["checkpoint-150", "checkpoint-175", "checkpoint-200"]
    assert not (root / "trainer_state.json").exists()
    state = json.loads((root / "checkpoint-200" / "trainer_state.json").read_text())
    assert state["global_step"] == 200 and state["log_history"][-1]["step"] == 200
    run = load_run(root)
    assert run.series("reward_mean").index.max() == 215  # the TensorBoard events run ahead of the newest state
    assert run.gpu is not None and set(run.gpu_devices) == {0, 1}


def test_identical_rewards_have_no_spread_and_no_gradient(tmp_path: Path) -> None:
    run = load_run(write_run(Generated(pattern="identical_rewards", format="trl_state", seed=1, steps=40,
                                       logging_steps=2), tmp_path / "run"))
    assert set(run.series("reward_mean")) == {0.0}
    assert set(run.series("reward_std")) == {0.0}
    assert set(run.series("reward_zero_std_frac")) == {1.0}
    assert set(run.series("grad_norm")) == {0.0}


# ------------------------------------------------------------------------------------------- determinism
@pytest.mark.parametrize(("pattern", "fmt", "options"), [
    ("healthy", "trl_state", {}), ("healthy", "trl_live", {"nvidia_smi": True}), ("healthy", "tensorboard", {}),
    ("healthy", "tensorboard", {"framework": "verl"}), ("healthy", "jsonl", {}), ("healthy", "verl_console", {}),
    ("healthy", "trl_console", {}), ("healthy", "csv", {}), ("dpo_healthy", "trl_state", {}),
    ("resumed_duplicates", "tensorboard", {}),
])
def test_same_spec_same_bytes(tmp_path: Path, pattern: str, fmt: str, options: dict[str, object]) -> None:
    spec = Generated(pattern=pattern, format=fmt, seed=5, steps=90, logging_steps=3, options=options)
    first = files_of(write_run(spec, tmp_path / "a"))
    second = files_of(write_run(spec, tmp_path / "b"))
    assert first and first == second


def test_different_seeds_give_different_noise(tmp_path: Path) -> None:
    series = []
    for seed in (1, 2, 3):
        spec = Generated(pattern="healthy", format="jsonl", seed=seed, steps=100)
        series.append(load_run(write_run(spec, tmp_path / f"s{seed}")).series("reward_mean").to_numpy())
    for a, b in ((0, 1), (0, 2), (1, 2)):
        assert not np.allclose(series[a], series[b])
        # ... but the same kind of run: the rise over the run is there in every seed
    assert all(s[-20:].mean() > s[:20].mean() for s in series)


def test_bad_specs_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="unknown pattern"):
        write_run(Generated(pattern="nope", format="csv"), tmp_path / "a")
    with pytest.raises(ConfigError, match="cannot be written as"):
        write_run(Generated(pattern="dpo_stuck", format="jsonl"), tmp_path / "b")
    with pytest.raises(ConfigError, match="layout: top"):
        write_run(Generated(pattern="healthy", format="trl_state", options={"checkpoints": False,
                                                                           "layout": "checkpoints"}), tmp_path / "c")
    # Without checkpoints a trl_state run is the top-level state the script saved at the end.
    top = write_run(Generated(pattern="healthy", format="trl_state", options={"checkpoints": False}), tmp_path / "t")
    assert (top / "trainer_state.json").is_file() and not list(top.glob("checkpoint-*"))
    with pytest.raises(ConfigError, match="finished run has reached its planned steps"):
        write_run(Generated(pattern="finished_plateau", format="csv", options={"max_steps": 900}), tmp_path / "f")
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "x").write_text("x")
    with pytest.raises(ConfigError, match="not empty"):
        write_run(Generated(pattern="healthy", format="csv"), tmp_path / "d")


# ------------------------------------------------------------------------------------------- the case file
@pytest.fixture(scope="module")
def cases() -> list:
    return [case for _, case in load_cases(SYNTHETIC)]


def test_case_file_validates_and_matches_the_recipes(cases: list, tmp_path: Path) -> None:
    # The labels are the recipes' ground truth: regenerating the file from the plan gives the same cases.
    regenerated = write_cases(tmp_path / "synthetic.yaml")
    assert [c.model_dump() for c in cases] == [c.model_dump() for c in regenerated]
    assert [c.model_dump() for c in cases] == [label(p).model_dump() for p in case_plan()]


def test_case_file_covers_every_pattern_in_every_format_it_can_be_written_in(cases: list) -> None:
    assert 300 <= len(cases) <= 420
    assert len({c.name for c in cases}) == len(cases)
    pairs = {(c.run.pattern, c.run.format) for c in cases}
    for name, recipe in PATTERNS.items():
        assert {(name, f) for f in recipe.formats} <= pairs, name  # every pattern x format it can be written in
    by_pattern: dict[str, set[int]] = {}
    for case in cases:
        by_pattern.setdefault(case.run.pattern, set()).add(case.run.seed)
    assert len({s for seeds in by_pattern.values() for s in seeds}) >= 4
    assert {c.run.format for c in cases} == set(FORMATS)
    assert {c.run.options.get("framework") for c in cases if c.run.format == "tensorboard"} == {"trl", "verl"}


def test_every_scenario_is_written_in_every_format_its_pattern_allows_with_one_set_of_labels(cases: list) -> None:
    by_scenario: dict[str, list] = {}
    for case in cases:
        if case.scenario is not None:
            by_scenario.setdefault(case.scenario, []).append(case)
    assert len(by_scenario) >= 40
    for name, group in by_scenario.items():
        recipe = PATTERNS[group[0].run.pattern]
        assert [c.run.format for c in group] == list(recipe.formats), name
        labels = {(tuple(c.accept), c.preferred, c.rollback_window, c.onset_step, c.healthy) for c in group}
        assert len(labels) == 1, f"{name}: labels differ between formats: {labels}"
        specs = {(c.run.pattern, c.run.seed, c.run.steps, c.run.logging_steps,
                  tuple(sorted((k, v) for k, v in c.run.options.items() if k != "framework"))) for c in group}
        assert len(specs) == 1, name  # the same run: only the format differs
        assert all(c.name.startswith(name + "-") for c in group)


def test_excluded_formats_say_why_and_cannot_be_written(tmp_path: Path) -> None:
    for name, recipe in PATTERNS.items():
        for key, reason in recipe.excluded.items():
            assert len(reason) > 30, (name, key)  # a reason a reader can check against the format reference
        for fmt in set(FORMATS) - set(recipe.formats):
            with pytest.raises(ConfigError, match="cannot be written as"):
                write_run(Generated(pattern=name, format=fmt, steps=40), tmp_path / f"{name}-{fmt}")
    assert PATTERNS["dpo_healthy"].formats == ("trl_state", "trl_live", "tensorboard", "jsonl_flat", "trl_console")
    assert "jsonl" not in PATTERNS["component_hacking"].formats  # verl logs no reward parts in training metrics
    with pytest.raises(ConfigError, match="no config and no end-of-training record"):
        write_run(Generated(pattern="finished_plateau", format="tensorboard", steps=40,
                            options={"framework": "verl"}), tmp_path / "tb-verl")


def test_case_file_has_many_varied_healthy_runs(cases: list) -> None:
    healthy = [c for c in cases if c.healthy]
    assert len(healthy) >= 100
    assert all(c.accept == ["continue"] for c in healthy)
    assert len({c.run.format for c in healthy}) == len(FORMATS)
    assert len({c.run.pattern for c in healthy}) >= 12
    noise = {str(c.run.options.get("noise", "medium")) for c in healthy}
    assert {"low", "medium", "high"} <= noise


def test_case_file_decisions_follow_the_design_contract(cases: list) -> None:
    decisions = Counter(d for c in cases for d in c.accept)
    assert decisions["rollback"] >= 100 and decisions["stop"] >= 80
    for case in cases:
        if "rollback" in case.accept:
            low, high = case.rollback_window
            assert 1 <= low <= high < case.onset_step, case.name
            assert high - low + 1 >= case.run.logging_steps, case.name
        if case.accept != ["continue"]:
            assert case.onset_step is not None and 1 <= case.onset_step <= case.run.steps
    # A better model behind now means rollback, checkpoint in the run folder or not (DESIGN.md).
    bare = [c for c in cases if "no_checkpoints" in c.tags and c.onset_step and c.onset_step > 1
            and c.rollback_window is not None]
    assert bare and all(c.accept == ["rollback"] for c in bare)
    # No-signal, finished-plateau and flat-eval runs: stop, in several formats each.
    for pattern in ("zero_reward", "correctness_pinned", "zero_grad", "identical_rewards", "finished_plateau",
                    "eval_flat"):
        chosen = [c for c in cases if c.run.pattern == pattern]
        assert len({c.run.format for c in chosen}) >= 5 and all(c.accept == ["stop"] for c in chosen), pattern
    for pattern in ("reward_hacking", "dpo_logp_collapse", "eval_peak"):
        assert all(c.accept == ["rollback"] for c in cases if c.run.pattern == pattern), pattern
    assert all(c.accept == ["continue"] and not c.healthy for c in cases if c.run.pattern == "finished_rising")


def test_fast_subset_holds_a_few_scenarios_in_every_format(cases: list) -> None:
    fast = [c for c in cases if "fast" in c.tags]
    scenarios = {c.scenario for c in fast}
    assert 3 <= len(scenarios) <= 6
    assert {c.run.format for c in fast} == set(FORMATS)
    assert any(c.healthy for c in fast) and any(c.accept == ["rollback"] for c in fast)
    assert any(c.accept == ["stop"] for c in fast)


def test_generate_all_writes_each_case_once_and_reuses_the_cache(tmp_path: Path, cases: list) -> None:
    subset = [c for c in cases if c.run.steps <= 60]
    assert subset
    first = generate_all(subset, tmp_path)
    assert set(first) == {c.name for c in subset}
    marker = {name: path.stat().st_mtime_ns for name, path in first.items()}
    again = generate_all([(SYNTHETIC, c) for c in subset], tmp_path)
    assert again == first
    assert {name: path.stat().st_mtime_ns for name, path in again.items()} == marker
    changed = subset[0].model_copy(update={"run": subset[0].run.model_copy(update={"seed": 99})})
    moved = generate_all([changed], tmp_path)
    assert moved[changed.name] != first[changed.name] and not first[changed.name].exists()
    assert moved[changed.name].name.endswith(spec_key(changed.run))
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no scratch folders left behind


def test_every_case_generates_and_reads(tmp_path: Path, cases: list) -> None:
    paths = generate_all(cases, tmp_path)
    for case in cases:
        run = load_run(paths[case.name])
        assert unexpected(run.warnings, case.run.pattern, case.run.format) == [], case.name
        assert run.has("reward_mean") or run.has("pref_margin"), case.name
        assert math.isfinite(float(run.last_step or 0))


# ------------------------------------------------------------------------------------------- runs that learn nothing
def _read(tmp_path: Path, pattern: str, fmt: str, steps: int, logging_steps: int, **options: object):
    batch = {} if pattern == "zero_grad" or PATTERNS[pattern].kind == "dpo" else {"prompts": 8, "num_generations": 8}
    spec = Generated(pattern=pattern, format=fmt, seed=2, steps=steps, logging_steps=logging_steps,
                     options={**batch, **options})
    run = load_run(write_run(spec, tmp_path / f"{pattern}-{fmt}"))
    assert unexpected(run.warnings, pattern, fmt) == []
    return run


def _values(run, metric: str, split: str = "train") -> np.ndarray:
    return run.series(metric, split).to_numpy(dtype=float)


@pytest.mark.parametrize("fmt", PATTERNS["zero_reward"].formats)
def test_zero_reward_is_exactly_zero_on_most_logged_steps_in_every_format(tmp_path: Path, fmt: str) -> None:
    run = _read(tmp_path, "zero_reward", fmt, 160, 5)
    reward = _values(run, "reward_mean")
    assert np.mean(reward == 0.0) > 0.8 and reward.max() < 0.02  # occasional tiny blips at most
    if run.has("reward_zero_std_frac"):
        assert np.mean(_values(run, "reward_zero_std_frac") == 1.0) > 0.8
    for metric in ("grad_norm", "pg_loss", "loss", "advantage_std"):
        if run.has(metric):
            assert np.mean(_values(run, metric) == 0.0) > 0.8, metric
    assert truth(Generated(pattern="zero_reward", format=fmt, steps=160, logging_steps=5)).accept == ("stop",)


@pytest.mark.parametrize("fmt", PATTERNS["correctness_pinned"].formats)
def test_correctness_pinned_at_its_floor_while_the_format_reward_rises(tmp_path: Path, fmt: str) -> None:
    run = _read(tmp_path, "correctness_pinned", fmt, 200, 5)
    if fmt == "csv":  # the book's CSV logs the total and the format part: correctness is their difference
        fmt_part = _values(run, "reward_component/format_mean")
        assert np.allclose(_values(run, "reward_mean"), fmt_part, atol=1e-6)
    else:
        assert set(_values(run, "reward_component/accuracy_reward_mean")) == {0.0}
        fmt_part = _values(run, "reward_component/format_reward_mean")
    assert fmt_part[-5:].mean() > fmt_part[:5].mean() + 0.3
    assert _values(run, "reward_mean")[-5:].mean() > 0.8  # the total rises: format only


@pytest.mark.parametrize("fmt", PATTERNS["zero_grad"].formats)
def test_group_of_two_leaves_loss_and_grad_norm_exactly_zero_on_most_steps(tmp_path: Path, fmt: str) -> None:
    run = _read(tmp_path, "zero_grad", fmt, 150, 1)
    shown = [m for m in ("grad_norm", "pg_loss", "loss") if run.has(m)]
    assert shown
    for metric in shown:
        assert np.mean(_values(run, metric) == 0.0) > 0.6, metric
    if fmt in ("trl_state", "jsonl", "verl_console"):
        assert run.facts.num_generations == 2


@pytest.mark.parametrize("fmt", PATTERNS["identical_rewards"].formats)
def test_identical_rewards_at_a_constant_with_no_spread_in_every_format(tmp_path: Path, fmt: str) -> None:
    run = _read(tmp_path, "identical_rewards", fmt, 60, 2, value=1.0)
    assert set(_values(run, "reward_mean")) == {1.0}
    for metric, value in (("reward_std", 0.0), ("reward_zero_std_frac", 1.0), ("advantage_std", 0.0),
                          ("grad_norm", 0.0)):
        if run.has(metric):
            assert set(_values(run, metric)) == {value}, metric


@pytest.mark.parametrize("fmt", PATTERNS["eval_flat"].formats)
def test_eval_flat_or_identical_while_training_reward_rises(tmp_path: Path, fmt: str) -> None:
    for identical in (False, True):
        run = _read(tmp_path / str(identical), "eval_flat", fmt, 200, 5, eval_identical=identical)
        held_out = _values(run, "accuracy" if run.has("accuracy", "eval") else "reward_mean", "eval")
        assert len(held_out) >= 8
        if identical:
            assert len(set(held_out)) == 1
        else:
            assert held_out.max() - held_out.min() < 0.1  # binomial noise of a 500-question eval, no trend
        reward = _values(run, "reward_mean")
        assert reward[-len(reward) // 5:].mean() > reward[: len(reward) // 5].mean() + 0.1


@pytest.mark.parametrize("fmt", PATTERNS["reward_hacking"].formats)
def test_reward_hacking_shows_reward_jump_kl_multiplying_and_task_falling(tmp_path: Path, fmt: str) -> None:
    run = _read(tmp_path, "reward_hacking", fmt, 200, 5)
    kl = run.series("kl")
    assert kl.loc[160:].mean() > 4 * kl.loc[60:100].mean()
    reward = run.series("reward_mean")
    assert reward.loc[160:].mean() > reward.loc[60:100].mean() + 0.2
    held_out = run.series("accuracy" if run.has("accuracy", "eval") else "reward_mean", "eval")
    assert held_out.loc[170:].mean() < held_out.loc[80:110].max() - 0.08
    answer = truth(Generated(pattern="reward_hacking", format=fmt, steps=200, logging_steps=5))
    assert answer.accept == ("rollback",) and answer.rollback_window is not None
    assert answer.rollback_window[1] <= 100  # before the hacking began (step 100 of 200)


@pytest.mark.parametrize("fmt", PATTERNS["dpo_logp_collapse"].formats)
def test_dpo_chosen_logps_fall_below_a_uniform_guess_while_accuracy_rises(tmp_path: Path, fmt: str) -> None:
    run = _read(tmp_path, "dpo_logp_collapse", fmt, 120, 2)
    tokens = 80  # the recipe's completion length
    per_token = run.series("logps_chosen") / tokens
    assert per_token.iloc[:5].mean() > -2.0 and per_token.iloc[-5:].mean() < -math.log(151936)
    accuracy = run.series("pref_accuracy")
    assert accuracy.iloc[-10:].mean() > accuracy.iloc[:10].mean() + 0.1


@pytest.mark.parametrize("pattern", ["finished_plateau", "finished_rising"])
@pytest.mark.parametrize("fmt", PATTERNS["finished_plateau"].formats)
def test_finished_runs_reached_their_planned_steps_and_say_so(tmp_path: Path, pattern: str, fmt: str) -> None:
    run = _read(tmp_path, pattern, fmt, 150, 10)
    root = tmp_path / f"{pattern}-{fmt}"
    assert run.last_step == 150
    if fmt != "tensorboard":
        assert run.facts.planned_total_steps == 150
    text = "\n".join(p.read_text(errors="replace") for p in root.rglob("*") if p.is_file() and p.suffix in (
        ".json", ".jsonl", ".log", ".out", ".csv"))
    if fmt in ("trl_console", "jsonl_flat"):
        assert "train_runtime" in text
    if fmt in ("trl_state", "trl_live"):
        state = json.loads((root / "checkpoint-150" / "trainer_state.json").read_text())
        assert state["global_step"] == state["max_steps"] == 150
        assert state["stateful_callbacks"]["TrainerControl"]["args"]["should_training_stop"] is True
    if fmt == "verl_console":
        assert "Final validation metrics" in text and "Training Progress: 100%" in text
    if fmt in ("tensorboard", "trl_live"):  # HF's TensorBoard callback logs the summary as train/... scalars
        from tensorboard.backend.event_processing.event_file_loader import EventFileLoader

        events = next(root.rglob("events.out.tfevents.*"))
        tags = {(v.tag, e.step) for e in EventFileLoader(str(events)).Load() for v in e.summary.value}
        assert ("train/train_runtime", 150) in tags and ("train/train_loss", 150) in tags
    answer = truth(Generated(pattern=pattern, format=fmt, steps=150, logging_steps=10))
    assert answer.accept == (("stop",) if pattern == "finished_plateau" else ("continue",))


def test_live_runs_are_not_marked_finished(tmp_path: Path) -> None:
    root = write_run(Generated(pattern="healthy", format="trl_state", seed=1, steps=100, logging_steps=10),
                     tmp_path / "run")
    state = json.loads((root / "checkpoint-100" / "trainer_state.json").read_text())
    assert state["max_steps"] > 100 and not state["stateful_callbacks"]["TrainerControl"]["args"][
        "should_training_stop"]
    assert "train_runtime" not in (root / "checkpoint-100" / "trainer_state.json").read_text()


def test_flat_jsonl_holds_one_flat_object_per_log_call(tmp_path: Path) -> None:
    spec = Generated(pattern="healthy", format="jsonl_flat", seed=1, steps=60, logging_steps=10,
                     options={"eval_every": 20, "finished": True})
    root = write_run(spec, tmp_path / "run")
    records = [json.loads(line) for line in (root / "metrics.jsonl").read_text().splitlines()]
    assert all(isinstance(r["step"], int) and not any(isinstance(v, dict) for v in r.values()) for r in records)
    train = [r for r in records if "reward" in r]
    assert [r["step"] for r in train] == [10, 20, 30, 40, 50, 60]
    assert [r["step"] for r in records if "eval_reward" in r] == [20, 40, 60]
    assert "train_runtime" in records[-1] and records[-1]["step"] == 60
    run = load_run(root)
    assert run.facts.framework == "trl" and run.facts.beta == pytest.approx(0.04)
    assert run.series("reward_mean", "eval").index.tolist() == [20, 40, 60]
    nested = write_run(spec.model_copy(update={"format": "jsonl"}), tmp_path / "nested")
    first = json.loads(next(nested.rglob("*.jsonl")).read_text().splitlines()[1])
    assert set(first) == {"step", "data"}  # verl's file logger nests the metrics


def test_good_window_ends_at_the_newest_step_still_as_good_as_the_best() -> None:
    from assessor.evals.generate.recipes.base import good_window

    # Rise to 0.6 by step 100, hold it to step 151, then fall to 0.3: "as good" is within 0.05 (a quarter of the
    # 0.3 drop, capped at 0.05).
    quality = np.concatenate([np.linspace(0.2, 0.6, 100), np.full(50, 0.6), np.linspace(0.6, 0.3, 50)])
    assert good_window(quality, 150) == (88, 150)  # the newest step of the plateau, not its first
    assert good_window(quality, 200) == (88, 159)  # never a step already below the band
    assert good_window(quality, 120) == (88, 120)
