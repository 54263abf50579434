"""Canonical names guessed from unlisted keys' words, and how the loader keeps or drops each guess."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assessor import load_run
from assessor.ingest.aliases import resolve
from assessor.ingest.base import RecordBuilder, SourceData
from assessor.ingest.guess import guess_metric, words
from assessor.ingest.normalize import merge_pieces, normalize_source


@pytest.mark.parametrize(
    ("key", "metric", "split"),
    [
        # names a plain training script logs (the independent tester's list)
        ("response_len_mean", "response_length_mean", "train"),
        ("mean_len", "response_length_mean", "train"),
        ("avg_response_length", "response_length_mean", "train"),
        ("gen_len", "response_length_mean", "train"),
        ("truncated_frac", "response_length_clip_ratio", "train"),
        ("avg_reward", "reward_mean", "train"),
        ("reward/format_reward", "reward_component/format_reward_mean", "train"),
        ("reward/accuracy/std", "reward_component/accuracy_std", "train"),
        ("kl_div", "kl", "train"),
        ("policy_entropy", "entropy", "train"),
        # the same with prefixes, camelCase and other separators
        ("train/avgReward", "reward_mean", "train"),
        ("eval/mean_len", "response_length_mean", "eval"),
        ("eval_avg_reward", "reward_mean", "eval"),
        ("completion-len.mean", "response_length_mean", "train"),
        # statistics go to their own canonical names
        ("reward/mean", "reward_mean", "train"),
        ("rewards/std", "reward_std", "train"),
        ("batch_reward_max", "reward_max", "train"),
        ("score_min", "reward_min", "train"),
        ("response_length_max_len", None, "train"),  # two length words and a max: still only length words
        ("prompt_len", "prompt_length_mean", "train"),
        # holdout18's hand-written loops: a reward model's score, an abbreviated return
        ("rm_score", "reward_mean", "train"),
        ("rm_score_std", "reward_std", "train"),
        ("train/ret", "reward_mean", "train"),
        ("ep_ret", "reward_mean", "train"),
        # holdout34/35's hand-written loops: abbreviated reward parts and lengths
        ("r_correct", "reward_component/correct_mean", "train"),
        ("rew_format", "reward_component/format_mean", "train"),
        ("resp_len_mean", "response_length_mean", "train"),
    ],
)
def test_plain_script_names_are_guessed(key, metric, split):
    resolved = resolve(key)
    assert resolved is not None
    if metric is None:
        return
    assert (resolved.metric, resolved.split, resolved.known) == (metric, split, False)
    assert resolved.own_name is not None


@pytest.mark.parametrize(
    "key",
    [
        # coefficients, losses, penalties and caps are not the metric their stem names
        "kl_coef_value", "kl_ctl", "kl_target", "approx_kl", "ent_coef", "entropy_bonus", "reward_model_loss",
        "length_penalty", "max_len", "max_reward", "min_response_length", "reward_scale", "reward_weight",
        # a bare length, counts and ambiguous words
        "eval_len", "len", "num_truncated", "clip_frac", "policy_clip_ratio", "f1_score", "avg_returns",
        "return_std", "reward/score", "kl_reward", "val_reward", "r_squared", "r_total", "resp",
        # statistics that have no canonical name of their own never fall back to the mean
        "entropy_std", "kl_max", "response_len_std", "reward_p90", "reward_median", "reward_mean_std",
    ],
)
def test_coefficient_like_and_ambiguous_names_are_not_guessed(key):
    resolved = resolve(key)
    assert resolved is not None
    assert resolved.own_name is None
    assert not resolved.known
    assert resolved.metric == key.removeprefix("eval_")


def test_std_goes_to_reward_std_not_the_mean():
    for key in ("reward_std", "reward/std", "std_reward", "rewards_stddev"):
        resolved = resolve(key)
        assert resolved is not None and resolved.metric == "reward_std", key


def test_percent_words_flag_percentages():
    guess = guess_metric("truncated_pct")
    assert guess is not None and guess.metric == "response_length_clip_ratio" and guess.percent


def test_words_split_on_separators_and_camel_case():
    assert words("train/meanResponse-Len.avg") == ["train", "mean", "response", "len", "avg"]


def source(rows: list[tuple[int, str, float]], name: str = "metrics.jsonl") -> SourceData:
    builder = RecordBuilder()
    for step, key, value in rows:
        builder.add(step, key, value)
    return SourceData(path=Path(name), format="jsonl", frame=builder.build())


def curve(key: str, steps: int = 5, scale: float = 1.0) -> list[tuple[int, str, float]]:
    return [(s, key, s * scale) for s in range(1, steps + 1)]


def table(*sources: SourceData) -> tuple[dict[str, str], list[str]]:
    """metric -> source key, and the notes."""
    metrics, notes = merge_pieces([normalize_source(s, str(s.path)) for s in sources])
    train = metrics[metrics["split"] == "train"]
    return dict(zip(train["metric"].astype(str), train["source_key"].astype(str), strict=True)), notes


def test_a_kept_guess_is_reported():
    mapping, notes = table(source(curve("mean_len") + curve("avg_reward")))
    assert mapping["response_length_mean"] == "mean_len"
    assert mapping["reward_mean"] == "avg_reward"
    assert len(notes) == 1
    assert "mapped `mean_len` to response_length_mean, `avg_reward` to reward_mean by name" in notes[0]
    assert "rename the keys or add aliases" in notes[0]


def test_a_listed_key_in_the_same_source_beats_the_guess():
    mapping, notes = table(source(curve("reward") + curve("avg_reward", steps=9)))
    assert mapping["reward_mean"] == "reward"  # even though the guessed key covers more steps
    assert mapping["avg_reward"] == "avg_reward"
    assert any("`avg_reward` looks like reward_mean, but `reward` already logs it" in n for n in notes)


def test_a_listed_key_in_another_source_beats_the_guess():
    listed = source(curve("completions/mean_length", steps=3), name="trainer_state.json")
    guessed = source(curve("gen_len", steps=9), name="extra.csv")
    mapping, notes = table(listed, guessed)
    assert mapping["response_length_mean"] == "completions/mean_length"
    assert mapping["gen_len"] == "gen_len"
    assert any("already logs it" in n for n in notes)


def test_two_keys_guessing_one_metric_keep_their_own_names():
    mapping, notes = table(source(curve("mean_len") + curve("gen_len")))
    assert "response_length_mean" not in mapping
    assert {"mean_len", "gen_len"} <= set(mapping)
    assert any("cannot tell which is meant" in n for n in notes)


def test_the_same_key_in_two_files_is_one_guess():
    mapping, notes = table(source(curve("train/avg_reward"), name="events"), source(curve("avg_reward", steps=7)))
    assert mapping["reward_mean"] == "avg_reward"
    assert len(notes) == 2  # the guess, and which file covers it furthest
    assert notes[0].startswith("events, metrics.jsonl: mapped `avg_reward` to reward_mean")


def test_guesses_are_settled_without_changing_the_cached_pieces():
    normalized = normalize_source(source(curve("reward") + curve("avg_reward")), "metrics.jsonl")
    before = [(p.metric, p.own_name) for p in normalized.pieces]
    merge_pieces([normalized])
    merge_pieces([normalized])
    assert [(p.metric, p.own_name) for p in normalized.pieces] == before


def test_a_plain_script_run_reaches_the_diagnosis(tmp_path):
    rows = [
        {"step": s, "avg_reward": 0.1 * s, "mean_len": 100 + s, "truncated_frac": 0.0, "kl_div": 0.01 * s,
         "policy_entropy": 1.0 - 0.01 * s, "reward/format": 0.5, "kl_coef": 0.05, "reward_model_loss": 0.3}
        for s in range(1, 21)
    ]
    (tmp_path / "metrics.jsonl").write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    run = load_run(tmp_path)
    names = set(run.metric_names())
    assert {"reward_mean", "response_length_mean", "response_length_clip_ratio", "kl", "entropy",
            "reward_component/format_mean", "kl_coef", "reward_model_loss"} <= names
    mapped = [w for w in run.warnings if "by name" in w]
    assert len(mapped) == 1 and "`kl_div` to kl" in mapped[0]
    unknown = [w for w in run.warnings if "not in our alias table and keep their own names" in w]
    assert unknown and "reward_model_loss" in unknown[0] and "avg_reward" not in unknown[0]


@pytest.mark.parametrize(
    ("key", "metric", "split"),
    [
        ("eval_heldout_exact_match", "accuracy", "eval"),
        ("val_acc", "accuracy", "eval"),  # `val` says held-out even without an eval prefix
        ("test_accuracy", "accuracy", "eval"),
        ("eval/pass_at_1", "pass_at_k", "eval"),
        ("eval_solve_rate", "accuracy", "eval"),
    ],
)
def test_held_out_accuracy_names_are_guessed(key, metric, split):
    resolved = resolve(key)
    assert resolved is not None and (resolved.metric, resolved.split, resolved.known) == (metric, split, False)


@pytest.mark.parametrize("key", ["reward_acc", "correct_format", "match", "acc_penalty"])
def test_accuracy_look_alikes_are_not_guessed(key):
    resolved = resolve(key)
    assert resolved is None or resolved.metric not in ("accuracy", "pass_at_k")


@pytest.mark.parametrize("key, metric", [("ent", "entropy"), ("gnorm", "grad_norm"),
                                         ("resp_len", "response_length_mean"), ("train/gnorm", "grad_norm")])
def test_common_abbreviations_of_custom_loops_are_listed(key, metric):
    resolved = resolve(key)
    assert resolved is not None and (resolved.metric, resolved.split, resolved.known) == (metric, "train", True)
