"""From raw reader frames to the canonical metrics table.

Done once for every format, so each reader stays a plain parser:
1. map raw keys to canonical names and splits (`aliases.resolve`), with unit fixes;
2. drop rows a resumed run logged again (keep the newest segment) and repeats of a step (keep the last; only
   repeats with a different value are reported: HF writes `epoch` in both the train and the eval row of a
   step, which loses nothing);
3. move NaN/inf/null values out of the table into a count (`Run.nonfinite`);
4. settle collisions (two keys of one file meaning the same thing);
5. across files (`merge_sources`): set aside a file that repeats another's values on other steps (a CSV
   re-typed from a log, with steps counted differently), then pick for each metric the source that covers it
   furthest, so files that log different metrics of the same steps are merged and none is counted twice;
6. keep or drop the canonical names guessed from unlisted keys' words (`settle_guesses`): a listed key always
   wins, and every guess kept is reported;
7. when no total reward is logged but one task component is (`answer_reward` beside `format_reward`), read
   that component as the reward too, and say so.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from assessor.ingest.aliases import SUMMARY_WHEN_ONCE, normal_form, resolve
from assessor.ingest.base import KeyedSource, SourceData, categorical, code_type
from assessor.run import empty_metrics

# When two files log the same metric to the same last step with the same precision, prefer the file the trainer
# wrote: its own records first, then its console, then tables (a CSV beside a log is usually re-typed from it).
FORMAT_PRIORITY = {
    "trl_state": 0, "hf_log_list": 1, "jsonl": 2, "json": 2, "tensorboard": 3, "wandb": 3, "mlflow": 3,
    "mlflow_sql": 3, "mlflow_server": 3, "trackio": 3, "console_trl": 4, "console_verl": 4, "console_openrlhf": 4,
    "console_steps": 5, "console_lines": 5, "console_table": 5, "notebook": 5, "csv": 6, "tracker_csv": 7,
}
_MAX_DECIMALS = 12
# Words of a reward component that is the task itself (correctness), not its form; as the diagnosis reads them.
TASK_WORDS = ("answer", "correct", "accura", "solve", "pass", "exact", "verif", "math", "code")
# Two series are one copied from the other when most of their values agree to printing precision.
_COPY_MIN_POINTS = 5
_COPY_SHARE = 0.9


# Where a file logs two keys for one canonical name, the one to read under that name. TRL's PPO trainers log
# `objective/entropy` (summed over the completion, so it grows with length) beside a per-token entropy
# (`policy/entropy_avg` in the PPOv2 style, `ppo/policy/entropy` in the legacy one), the scale every entropy test
# is written in.
PREFERRED_KEYS: dict[str, tuple[str, ...]] = {"entropy": ("policy/entropy_avg", "ppo/policy/entropy")}


@dataclass
class Piece:
    """All finite values of one metric/split from one source, sorted by step, one value per step.

    `own_name` is set when `metric` was guessed from the key's words (`aliases.Resolved.own_name`).
    """

    metric: str
    split: str
    source_key: str
    source: str
    format: str
    steps: np.ndarray
    values: np.ndarray
    wall_time: np.ndarray
    own_name: str | None = None
    steps_inferred: bool = False  # the file does not state its steps (row order, one printed dict per step)
    weak_guess: bool = False  # `own_name` was guessed loosely (`aliases.Resolved.weak`): yields to any other guess

    @property
    def last_step(self) -> int:
        """Highest step of the piece (-1 when empty)."""
        return int(self.steps[-1]) if len(self.steps) else -1


@dataclass
class NormalizedSource:
    """One source after normalization."""

    source: str
    format: str
    pieces: list[Piece]
    nonfinite: list[pd.DataFrame]
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    unknown_keys: list[str] = field(default_factory=list)
    points: int = 0


def superseded_mask(steps: np.ndarray) -> np.ndarray:
    """True for rows that a later segment of the file logged again (a resume or restart).

    A segment starts wherever the step goes down. A row is superseded when any later segment reaches
    back to its step or below it, so what survives is the newest record of every step.

    >>> superseded_mask(np.array([1, 2, 3, 4, 3, 4, 5])).tolist()
    [False, False, True, True, False, False, False]
    """
    n = len(steps)
    if n < 2:
        return np.zeros(n, dtype=bool)
    breaks = np.flatnonzero(steps[1:] < steps[:-1]) + 1
    if not len(breaks):
        return np.zeros(n, dtype=bool)
    starts = np.concatenate(([0], breaks))
    segment = np.repeat(np.arange(len(starts)), np.diff(np.concatenate((starts, [n]))))
    seg_min = np.minimum.reduceat(steps, starts)
    # min step over all *later* segments, for each segment
    later_min = np.full(len(starts), np.iinfo(np.int64).max, dtype=np.int64)
    later_min[:-1] = np.minimum.accumulate(seg_min[::-1])[::-1][1:]
    return np.asarray(steps >= later_min[segment])


def normalize_source(data: SourceData, rel_path: str) -> NormalizedSource:
    """Canonical pieces of one source (see the module docstring)."""
    out = NormalizedSource(source=rel_path, format=data.format, pieces=[], nonfinite=[],
                           warnings=list(data.warnings), notes=list(data.notes))
    superseded_total = 0
    repeated_total = 0
    by_target: dict[tuple[str, str], list[Piece]] = {}
    guessed: list[Piece] = []
    unknown: list[str] = []
    series = list(_raw_series(data))
    longest = max((len(steps) for _, _, steps, _, _ in series), default=0)
    for key, hint, steps, values, times in series:
        resolved = resolve(key)
        if resolved is None:
            continue
        if _wall_clock(key, values):
            out.notes.append(f"{key} holds Unix timestamps (wall-clock times): not read as a metric")
            continue
        if _sparse_quality_column(key, hint, resolved.known, len(steps), longest):
            # A custom loop that writes its periodic evaluation into the training log's own rows: a quality
            # measure (a win rate, an accuracy) logged on a small share of the rows is that evaluation.
            resolved = replace(resolved, split="eval")
            out.notes.append(f"{key} is logged on {len(steps)} of {longest} rows and names a quality measure: read "
                             "as a held-out evaluation")
        if len(steps) <= 3 and normal_form(key) in SUMMARY_WHEN_ONCE:
            out.notes.append(f"{key} logged {len(steps)} time{'s' if len(steps) != 1 else ''}: read as the trainer's "
                             "end-of-run summary, not a curve (a loop logging it every step shows it from the fourth)")
            continue
        split: str = resolved.split if hint < 0 else ("train", "eval")[hint]
        values = values * resolved.scale if resolved.scale != 1.0 else values
        out.points += len(steps)

        drop = superseded_mask(steps)
        superseded_total += int(drop.sum())
        if drop.any():
            keep = ~drop
            steps, values, times = steps[keep], values[keep], times[keep]
        if len(steps) > 1:
            if not bool(np.all(steps[1:] >= steps[:-1])):  # unordered source: sort, stable
                order = np.argsort(steps, kind="stable")
                steps, values, times = steps[order], values[order], times[order]
            last_of_run = np.concatenate((steps[1:] != steps[:-1], [True]))
            if not last_of_run.all():
                repeated_total += _conflicting_repeats(values, last_of_run)
                steps, values, times = steps[last_of_run], values[last_of_run], times[last_of_run]

        finite = np.isfinite(values)
        if not finite.all():
            bad = ~finite
            kinds = np.where(np.isnan(values[bad]), "nan", np.where(values[bad] > 0, "inf", "-inf"))
            out.nonfinite.append(pd.DataFrame({
                "step": steps[bad], "metric": resolved.metric, "split": split, "kind": kinds, "source": rel_path,
            }))
            steps, values, times = steps[finite], values[finite], times[finite]
        if resolved.percent and len(values) and float(np.max(np.abs(values))) > 1.0:
            values = values / 100.0
            out.notes.append(f"{key} is logged in percent; divided by 100 to give a fraction")
        piece = Piece(resolved.metric, split, key, rel_path, data.format, steps, values, times, resolved.own_name,
                      steps_inferred=data.steps_inferred is not None, weak_guess=resolved.weak)
        if resolved.own_name is not None:
            guessed.append(piece)  # settled against every source's listed keys in `merge_pieces`
            continue
        if not resolved.known:
            unknown.append(key)
        by_target.setdefault((resolved.metric, split), []).append(piece)

    for (metric, split), pieces in by_target.items():
        if len(pieces) == 1:
            out.pieces.append(pieces[0])
            continue
        if split == "eval" and len({_benchmark_part(p.source_key) for p in pieces}) == len(pieces):
            # Held-out scores of different benchmarks (`val-core/aime24/acc/mean@16`, `val-core/math500/acc/mean@4`)
            # are different measures: each keeps its own name, so neither speaks as "the" accuracy under another's.
            for piece in pieces:
                piece.metric = _own_name(piece.source_key, split)
                out.pieces.append(piece)
            out.notes.append(f"{', '.join(repr(p.source_key) for p in pieces)} are held-out scores of different "
                             "benchmarks: each keeps its own name")
            continue
        # Two keys of one file mean the same thing: the better-covered one keeps the canonical name, unless one
        # of them is the one the diagnosis reads best (a per-token entropy beside a sum over the sequence).
        preferred = PREFERRED_KEYS.get(metric, ())
        pieces.sort(key=lambda p: (normal_form(p.source_key) not in preferred, -len(p.steps), p.source_key))
        winner, losers = pieces[0], pieces[1:]
        out.pieces.append(winner)
        for loser in losers:
            loser.metric = _own_name(loser.source_key, split)
            out.pieces.append(loser)
        out.notes.append(
            f"{', '.join(repr(p.source_key) for p in pieces)} all map to {metric!r} ({split}); "
            f"{winner.source_key!r} is used, the others keep their own names"
        )
    out.pieces.extend(guessed)
    if superseded_total:
        out.warnings.append(
            f"{rel_path}: steps go backwards (the run was resumed or restarted); kept the newest record of "
            f"each step and dropped {superseded_total} earlier values"
        )
    if repeated_total:
        out.warnings.append(f"{rel_path}: {repeated_total} values logged twice for the same step; kept the last")
    out.unknown_keys = sorted(set(unknown))
    return out


# Words that name a quality measure (how good the answers are), not a training statistic.
_QUALITY_WORDS = frozenset({"win", "winrate", "acc", "accuracy", "pass", "pass1", "solve", "solved", "em", "exact",
                            "correct", "bleu", "chrf", "rouge", "f1", "elo"})
_TRAINING_WORDS = frozenset({"loss", "kl", "entropy", "ent", "grad", "lr", "len", "length", "time", "std", "clip",
                             "reward", "rew", "score", "ret", "return", "tokens", "tok"})
SPARSE_EVAL_SHARE = 0.2  # a column on at most this share of a log's rows (and at least three) is periodic


UNIX_TIME_RANGE = (1.0e9, 4.0e9)  # seconds since 1970: 2001 to 2096


def _wall_clock(key: str, values: np.ndarray) -> bool:
    """A `time`-named key whose values are all Unix timestamps: when a row was written, not a measurement."""
    if not {"time", "timestamp", "walltime", "wall"} & _key_words(key):
        return False
    finite = values[np.isfinite(values)]
    return bool(len(finite)) and bool(np.all((finite > UNIX_TIME_RANGE[0]) & (finite < UNIX_TIME_RANGE[1])))


def _sparse_quality_column(key: str, hint: int, known: bool, points: int, longest: int) -> bool:
    """An unlisted key with no split of its own, naming a quality measure and logged on few rows of its source."""
    if hint >= 0 or known or points < 3 or points > SPARSE_EVAL_SHARE * longest:
        return False
    words = _key_words(key)
    return bool(words & _QUALITY_WORDS) and not words & _TRAINING_WORDS


def _key_words(key: str) -> set[str]:
    """A key's lower-case words, split at anything but letters and digits."""
    return set(re.split(r"[^a-z0-9]+", key.lower()))


def _own_name(key: str, split: str) -> str:
    """A held-out key that lost its canonical name keeps its own, without a split prefix of its own.

    The metric is shown as `eval/<name>` already: `eval/eval_mbpp_pass1` becomes `eval/mbpp_pass1`, not
    `eval/eval/eval_mbpp_pass1`.
    """
    if split != "eval":
        return key
    name = key
    for prefix in ("eval/", "val/", "eval_", "val_"):
        if name.startswith(prefix) and len(name) > len(prefix):
            name = name[len(prefix):]
    return name


def _raw_series(data: SourceData) -> Iterator[tuple[str, int, np.ndarray, np.ndarray, np.ndarray]]:
    """Each raw key's rows of one split hint (-1 none, 0 train, 1 eval): key, hint, steps, values, wall times.

    Views of the reading's arrays; a `KeyedSource` gives its series without laying out its long frame.
    """
    if isinstance(data, KeyedSource):
        longest = max((len(s.steps) for s in data.by_key), default=0)
        no_times = np.full(longest, np.nan)
        no_times.flags.writeable = False  # one array seen by every piece: never written to
        for series in data.by_key:
            yield series.key, -1, series.steps, series.values, no_times[:len(series.steps)]
        return
    frame = data.frame
    if frame.empty:
        return
    key_codes = frame["key"].cat.codes.to_numpy()
    categories = list(frame["key"].cat.categories)
    split_codes = frame["split"].cat.codes.to_numpy()  # -1 no hint, 0 train, 1 eval
    # Rows come grouped by (key, split hint) in file order; find the group boundaries once (on the narrow codes:
    # a wide group number would cost 8 bytes a row).
    bounds = np.flatnonzero((key_codes[1:] != key_codes[:-1]) | (split_codes[1:] != split_codes[:-1])) + 1
    starts = np.concatenate(([0], bounds))
    ends = np.concatenate((bounds, [len(frame)]))
    steps_all = frame["step"].to_numpy()
    values_all = frame["value"].to_numpy()
    times_all = frame["wall_time"].to_numpy()
    for start, end in zip(starts, ends, strict=True):
        yield (categories[key_codes[start]], int(split_codes[start]), steps_all[start:end], values_all[start:end],
               times_all[start:end])


def _conflicting_repeats(values: np.ndarray, last_of_run: np.ndarray) -> int:
    """How many of the dropped repeats of a step differ from the value kept for it (NaN equals NaN).

    Steps are sorted and `last_of_run` marks the kept (last) row of each step. An identical repeat loses
    nothing: HF writes the same `epoch` (`train/epoch` in TensorBoard) in a step's train and eval rows.

    >>> _conflicting_repeats(np.array([1.0, 1.0, 2.0, 3.0, 4.0]), np.array([False, True, False, True, True]))
    1
    """
    kept = np.flatnonzero(last_of_run)
    dropped = np.flatnonzero(~last_of_run)
    replaced_by = values[kept[np.searchsorted(kept, dropped)]]  # the kept row closes each run of a step
    old = values[dropped]
    same = (old == replaced_by) | (np.isnan(old) & np.isnan(replaced_by))
    return int((~same).sum())


@dataclass
class Merged:
    """The canonical metrics table, the notes to show, and why each source that gave nothing was left out."""

    metrics: pd.DataFrame
    notes: list[str]
    unused: dict[str, str]


def merge_sources(sources: list[NormalizedSource]) -> Merged:
    """Choose between the files of a run and merge what they hold into one table (steps 5 to 7 above)."""
    copies = _copies_on_other_steps(sources)
    kept = [s for s in sources if s.source not in copies]
    metrics, notes = merge_pieces(kept)
    unused = dict(copies)
    notes = [f"{name}: not used; {reason}" for name, reason in copies.items()] + notes
    used = {str(c) for c in metrics["source"].cat.categories}  # every category is some chosen piece's source
    for source in kept:
        if source.source in used or not source.pieces:
            continue
        unused[source.source] = "every metric it holds is also in a file that reaches further or is more precise"
    return Merged(metrics, notes, unused)


def _copies_on_other_steps(sources: list[NormalizedSource]) -> dict[str, str]:
    """Files that repeat another file's values at other steps, with the reason each is left out.

    A CSV re-typed from a console log, or a log read with assumed steps, holds the same numbers as the other
    file but counts its steps differently. Mixing the two would put some metrics on one axis and some on the
    other, so the whole file with the weaker claim to its steps is set aside: steps the file does not state
    lose to stated ones, then the file with fewer values loses.
    """
    ranked = sorted(sources, key=lambda s: (_inferred(s), -s.points, _format_rank(s), s.source))
    left_out: dict[str, str] = {}
    for i, weaker in enumerate(ranked):
        for stronger in ranked[:i]:
            if stronger.source in left_out:
                continue
            verdict = _same_values(stronger, weaker)
            if verdict is not None and not verdict:
                how = f" ({weaker.notes[0]})" if _inferred(weaker) and weaker.notes else ""
                left_out[weaker.source] = (
                    f"it holds the same values as {stronger.source} but at other steps{how}; used {stronger.source}"
                )
                break
    return left_out


def _same_values(a: NormalizedSource, b: NormalizedSource) -> bool | None:
    """None when `b` does not copy `a`'s values; else whether it puts them at the same steps."""
    by_target = {(p.metric, p.split): p for p in a.pieces}
    matches: list[bool] = []
    for piece in b.pieces:
        other = by_target.get((piece.metric, piece.split))
        if other is None:
            continue
        n = min(len(piece.values), len(other.values))
        if n < _COPY_MIN_POINTS or np.std(other.values[:n]) == 0:
            continue
        x, y = piece.values[:n], other.values[:n]
        close = np.abs(x - y) <= np.maximum(1e-3 * np.maximum(np.abs(x), np.abs(y)), 5e-5)
        if close.mean() < _COPY_SHARE:
            return None  # one differing series: different runs or different metrics, not a copy
        matches.append(bool(np.array_equal(piece.steps[:n], other.steps[:n])))
    if not matches:
        return None
    return all(matches)


def _inferred(source: NormalizedSource) -> bool:
    return any(p.steps_inferred for p in source.pieces)


def _format_rank(source: NormalizedSource) -> int:
    return FORMAT_PRIORITY.get(source.format, 9)


def merge_pieces(sources: list[NormalizedSource]) -> tuple[pd.DataFrame, list[str]]:
    """The canonical metrics table: for each metric/split, the source that covers it furthest.

    Returns the table and the notes to show the user: one per metric that several sources logged, and one
    per canonical name guessed from a key's words (see `settle_guesses`).
    """
    pieces, guess_notes = settle_guesses([piece for source in sources for piece in source.pieces])
    chosen: dict[tuple[str, str], Piece] = {}
    others: dict[tuple[str, str], list[Piece]] = {}
    for piece in pieces:
        if not len(piece.steps):
            continue
        target = (piece.metric, piece.split)
        current = chosen.get(target)
        if current is None or _rank(piece) < _rank(current):
            if current is not None:
                others.setdefault(target, []).append(current)
            chosen[target] = piece
        else:
            others.setdefault(target, []).append(piece)
    # One note per (chosen source, other sources) pair rather than one per metric.
    grouped: dict[tuple[str, tuple[str, ...]], list[str]] = {}
    reach: dict[str, int] = {}
    for target, losers in sorted(others.items()):
        winner = chosen[target]
        loser_names = tuple(sorted({p.source for p in losers}))
        grouped.setdefault((winner.source, loser_names), []).append(target[0])
        reach[winner.source] = max(reach.get(winner.source, -1), winner.last_step)
        for loser in losers:
            reach[loser.source] = max(reach.get(loser.source, -1), loser.last_step)
    notes = []
    for (winner_source, loser_names), metrics in grouped.items():
        shown = ", ".join(metrics[:4]) + (f" and {len(metrics) - 4} more" if len(metrics) > 4 else "")
        behind = ", ".join(f"{name} (to step {reach[name]})" for name in loser_names)
        notes.append(
            f"{len(metrics)} metrics ({shown}) are also in {behind}; used {winner_source} "
            f"(to step {reach[winner_source]}), which reaches furthest"
        )
    notes.extend(_preference_accuracy(chosen))
    notes.extend(_short_reward_family(chosen))
    notes.extend(_reward_stand_ins(chosen))
    notes.extend(_rate_stand_in(chosen))
    notes.extend(_zero_spread_from_group_shares(chosen))
    earlier, stitched = _earlier_history(chosen, others)
    notes.extend(stitched)
    return _assemble(earlier + list(chosen.values())), guess_notes + notes


def _earlier_history(
    chosen: dict[tuple[str, str], Piece], others: dict[tuple[str, str], list[Piece]],
) -> tuple[list[Piece], list[str]]:
    """The steps before the chosen file begins, from the file that logged them: a run resumed into a new log.

    A resumed launch often writes a new file (`train_resume.log`, a second event file) that starts where the
    checkpoint was; the file that reaches furthest then holds only the later steps, and the run's history before
    the resume is in the first file. Those earlier steps are read from there (where both logged a step, the newer
    file's value stands, as for a resume within one file). Files with worked-out steps are not stitched in.
    """
    out: list[Piece] = []
    joined: dict[tuple[str, str], list[str]] = {}
    for target, winner in chosen.items():
        start = int(winner.steps[0]) if len(winner.steps) else None
        if start is None or winner.steps_inferred:
            continue
        before = [(p, p.steps < start) for p in others.get(target, [])
                  if not p.steps_inferred and p.source != winner.source]
        before = [(p, mask) for p, mask in before if mask.any()]
        if not before:
            continue
        piece, mask = max(before, key=lambda item: int(item[1].sum()))
        out.append(replace(piece, steps=piece.steps[mask], values=piece.values[mask], wall_time=piece.wall_time[mask]))
        joined.setdefault((piece.source, winner.source), []).append(target[0])
    notes = [f"{len(metrics)} metrics ({', '.join(metrics[:4])}{' and more' if len(metrics) > 4 else ''}): steps "
             f"before {winner_source} begins are read from {source} (a resumed run's earlier log)"
             for (source, winner_source), metrics in joined.items()]
    return out, notes


GROUP_SHARES = ("baseline_reward/pct_0", "baseline_reward/pct_1")


def _zero_spread_from_group_shares(chosen: dict[tuple[str, str], Piece]) -> list[str]:
    """NeMo-RL's shares of prompts whose group scored all 0 or all 1, summed, as the zero-spread fraction.

    NeMo-RL logs `baseline_reward/pct_0` and `pct_1` (percent of prompts whose group-mean reward is 0 or 1) instead
    of a zero-std fraction. A group whose mean is 0 or 1 on a 0..1 reward has no spread, so their sum is the share
    of groups that teach nothing (all of them, with a binary reward). Added to `chosen`, with a note.
    """
    if ("reward_zero_std_frac", "train") in chosen:
        return []
    parts = [chosen.get((name, "train")) for name in GROUP_SHARES]
    if parts[0] is None or parts[1] is None:
        return []
    zero, one = parts[0], parts[1]
    steps, at_zero, at_one = np.intersect1d(zero.steps, one.steps, assume_unique=True, return_indices=True)
    if not len(steps):
        return []
    total = zero.values[at_zero] + one.values[at_one]
    if float(np.nanmax(total)) > 1.0 + 1e-9:
        total = total / 100.0  # logged in percent
    chosen[("reward_zero_std_frac", "train")] = replace(
        zero, metric="reward_zero_std_frac", source_key=f"{zero.source_key} + {one.source_key}", steps=steps,
        values=total, wall_time=zero.wall_time[at_zero], own_name=None)
    return [f"{zero.source}: read `{zero.source_key}` + `{one.source_key}` (prompts whose group scored all 0 or all "
            "1) as reward_zero_std_frac"]


PREFERENCE_MARKS = ("pref_reward_chosen", "pref_reward_rejected", "pref_margin", "preference_loss")


def _preference_accuracy(chosen: dict[tuple[str, str], Piece]) -> list[str]:
    """A training-split accuracy beside chosen/rejected rewards is the share of pairs ranked right (NeMo-RL DPO).

    NeMo-RL's DPO logs `train/accuracy` (the batch's preference accuracy) next to `train/rewards_chosen_mean`; read
    as a task accuracy it would look like a held-out curve measured every step. Renamed in `chosen`, with a note.
    """
    piece = chosen.get(("accuracy", "train"))
    if piece is None or ("pref_accuracy", "train") in chosen or not any(
            (mark, "train") in chosen for mark in PREFERENCE_MARKS):
        return []
    del chosen[("accuracy", "train")]
    chosen[("pref_accuracy", "train")] = replace(piece, metric="pref_accuracy")
    return [f"{piece.source}: read `{piece.source_key}` as the preference accuracy (pref_accuracy): it is logged "
            "beside the chosen and rejected rewards, so it is the share of pairs ranked right"]


def _reward_stand_ins(chosen: dict[tuple[str, str], Piece]) -> list[str]:
    """With no total reward in a split, its one task component (`answer_reward`) is read as the reward too.

    A loop that logs `answer_reward` and `format_reward` but no sum leaves the reward readings blind; the
    task component is what a practitioner reads as the run's reward then. Added to `chosen`, with a note.
    """
    notes = []
    for split in ("train", "eval"):
        if ("reward_mean", split) in chosen or (split == "eval" and ("accuracy", "eval") in chosen):
            continue
        task = [
            p for (metric, where), p in chosen.items()
            if where == split and metric.startswith("reward_component/") and metric.endswith("_mean")
            and any(word in metric.lower() for word in TASK_WORDS)
        ]
        if len(task) != 1:
            continue
        (piece,) = task
        chosen[("reward_mean", split)] = replace(piece, metric="reward_mean")
        where = "" if split == "train" else f" ({split})"
        notes.append(
            f"{piece.source}: no total reward is logged{where}; read `{piece.source_key}` (the task's own reward "
            "component) as reward_mean"
        )
    return notes


# `r_total`, `rw.sum` beside `r_correct`, `r_format`: a hand-written loop's reward terms under a short prefix.
_SHORT_REWARD = re.compile(r"^(?P<prefix>r|rw|rwd)[_./](?P<name>[A-Za-z][A-Za-z0-9_]*)$")
_SHORT_TOTAL = frozenset({"total", "sum"})


def _short_reward_family(chosen: dict[tuple[str, str], Piece]) -> list[str]:
    """A total and its terms under one short prefix (`r_total`, `r_correct`, `r_format`) are the reward and its parts.

    One letter alone says nothing (`r2`, `r_squared`), so only a family counts: a total or sum beside at least one
    other term under the same prefix, in the same source, in a run that logs no reward by name. The terms become
    reward components, so a total that climbs on its format terms alone is read as such. Renamed in `chosen`.
    """
    if ("reward_mean", "train") in chosen:
        return []
    families: dict[tuple[str, str], dict[str, Piece]] = {}
    for (metric, split), piece in chosen.items():
        match = _SHORT_REWARD.match(metric)
        if split == "train" and match and metric == piece.source_key:
            families.setdefault((piece.source, match["prefix"]), {})[match["name"]] = piece
    for (source, _prefix), members in sorted(families.items()):
        totals = sorted(set(members) & _SHORT_TOTAL)
        terms = sorted(set(members) - _SHORT_TOTAL)
        if len(totals) != 1 or not terms:
            continue
        total = members[totals[0]]
        del chosen[(total.metric, "train")]
        chosen[("reward_mean", "train")] = replace(total, metric="reward_mean")
        for name in terms:
            piece = members[name]
            del chosen[(piece.metric, "train")]
            chosen[(f"reward_component/{name}_mean", "train")] = replace(piece, metric=f"reward_component/{name}_mean")
        shown = ", ".join(f"`{members[name].source_key}`" for name in terms)
        return [f"{source}: read `{total.source_key}` as reward_mean and {shown} as its reward components (one "
                "prefix, a total beside its terms); rename the keys if that is wrong"]
    return []


# Training-split success measures a loop may log instead of a reward (agent, tool-use and code loops most of all):
# these names, and any name ending in a success or a share solved, passed or correct (`episode_success`,
# `env/success`, `task_success_rate`, `tests_passed_frac`, `correct_frac`). Not any `..._accuracy`: a preference
# run's `pref_accuracy` is its pair accuracy, not a reward.
_RATE_STAND_INS = ("accuracy", "pass_at_k", "success_rate", "success", "solve_rate")
_RATE_WORDS = frozenset({"success", "solve", "solved", "pass", "passed", "correct"})
_SHARE_WORDS = frozenset({"rate", "frac", "fraction", "share"})


def _names_a_rate(metric: str) -> bool:
    words = re.split(r"[/_.]", metric.lower())
    return metric in _RATE_STAND_INS or words[-1] == "success" or (
        len(words) >= 2 and words[-1] in _SHARE_WORDS and words[-2] in _RATE_WORDS)


def _rate_stand_in(chosen: dict[tuple[str, str], Piece]) -> list[str]:
    """With no reward in the training split at all, its one success rate (`success_rate`, `train/acc`) is read as it.

    An agent loop that logs the share of episodes solved per step, and no reward, is trained on exactly that
    share; without it the reward readings (trend, peak, decline, plateau) are blind. Only one such rate, with its
    values inside 0..1 (or percent), and only when no reward component stands in either. Renamed in `chosen`.
    """
    if ("reward_mean", "train") in chosen or any(
            split == "train" and metric.startswith("reward_component/") for metric, split in chosen):
        return []
    found = [(metric, piece) for (metric, split), piece in chosen.items()
             if split == "train" and _names_a_rate(metric) and len(piece.values)
             and float(np.min(piece.values)) >= 0.0 and float(np.max(piece.values)) <= 100.0]
    if len(found) != 1:
        return []
    ((_metric, piece),) = found
    chosen[("reward_mean", "train")] = replace(piece, metric="reward_mean")
    return [f"{piece.source}: no reward is logged for training; read `{piece.source_key}` (a success rate per step) "
            "as reward_mean"]


def settle_guesses(pieces: list[Piece]) -> tuple[list[Piece], list[str]]:
    """Keep or drop each canonical name guessed from an unlisted key's words; say what was done.

    A guess is dropped (the key keeps its own name) when a listed key in any source already supplies that
    metric, since explicit always wins, or when two different keys guess the same metric, since we cannot
    tell which is meant. A loose guess (`avg_return`, `total_reward`: `Piece.weak_guess`) is dropped when any
    other guess supplies the metric. Every guess kept is reported, so a wrong one can be seen and fixed. The
    pieces are never changed in place (`IngestCache` keeps them between checks of a live run).

    Args:
        pieces: every source's pieces; guessed ones carry `own_name`.

    Returns:
        The pieces with every guess settled (no `own_name` left), and one note per guessed metric.
    """
    listed: dict[tuple[str, str], str] = {}
    guesses: dict[tuple[str, str], list[Piece]] = {}
    for piece in pieces:
        target = (piece.metric, piece.split)
        if piece.own_name is not None:
            guesses.setdefault(target, []).append(piece)
        elif len(piece.steps):
            listed.setdefault(target, piece.source_key)
    notes: list[str] = []
    kept: dict[str, list[str]] = {}
    dropped: set[int] = set()
    for (metric, split), group in sorted(guesses.items()):
        firm = [p for p in group if not p.weak_guess and len(p.steps)]
        if firm:  # a loose name yields to a surer one (`avg_return` to `avg_reward`), silently: it keeps its name
            dropped.update(id(p) for p in group if p.weak_guess)
            group = [p for p in group if not p.weak_guess]
        names = sorted({p.own_name for p in group if p.own_name is not None})
        keys = ", ".join(f"`{name}`" for name in names)
        where = ", ".join(sorted({p.source for p in group}))
        label = metric if split == "train" else f"{metric} ({split})"
        if not any(len(p.steps) for p in group):
            continue  # nothing but NaN: nothing lands in the table under either name
        if (metric, split) in listed:
            dropped.update(id(p) for p in group)
            notes.append(
                f"{where}: {keys} looks like {label}, but `{listed[(metric, split)]}` already logs it; "
                f"kept {keys} under its own name"
            )
        elif len(names) > 1:
            dropped.update(id(p) for p in group)
            notes.append(
                f"{where}: {keys} all look like {label}; cannot tell which is meant, so each keeps its own name"
            )
        else:
            kept.setdefault(where, []).append(f"{keys} to {label}")
    notes.extend(  # one line per source: a plain script's log often has several guessed keys
        f"{where}: mapped {', '.join(mapped)} by name (not in our alias table); rename the keys or add aliases if "
        "any is wrong"
        for where, mapped in kept.items()
    )
    settled = [
        replace(p, metric=p.own_name, own_name=None) if id(p) in dropped and p.own_name is not None
        else replace(p, own_name=None) if p.own_name is not None else p
        for p in pieces
    ]
    return settled, notes


def _rank(piece: Piece) -> tuple[bool, int, int, int, int]:
    # Steps a file states beat steps worked out (row order, one dict per step), however far the latter reach.
    return (piece.steps_inferred, -piece.last_step, -len(piece.steps), -decimals(piece.values),
            FORMAT_PRIORITY.get(piece.format, 9))


def decimals(values: np.ndarray, sample: int = 200) -> int:
    """How many decimals the values are written with (a console rounding to 4 places says 4).

    >>> decimals(np.array([0.125, 0.5])), decimals(np.array([0.1234567891])), decimals(np.array([0.1], np.float32))
    (3, 7, 1)
    """
    most = 0
    for value in values[:: max(1, len(values) // sample)]:
        for places in range(most, _MAX_DECIMALS + 1):
            # float32 resolution: TensorBoard's 0.1 is 0.10000000149, one decimal, not twelve
            if abs(round(float(value), places) - value) <= 1e-7 * max(1.0, abs(float(value))):
                most = places
                break
        else:
            return _MAX_DECIMALS
    return most


def _assemble(pieces: list[Piece]) -> pd.DataFrame:
    if not pieces:
        return empty_metrics()
    pieces.sort(key=lambda p: (p.split != "train", p.metric))
    counts = np.array([len(p.steps) for p in pieces], dtype=np.int64)

    def labels(values: list[str]) -> pd.Categorical[str]:
        unique = list(dict.fromkeys(values))
        lookup = {label: i for i, label in enumerate(unique)}
        # Codes repeated in the narrowest type: a wide one would cost 8 bytes a row on the way.
        codes = np.array([lookup[x] for x in values], dtype=code_type(len(unique)))
        return categorical(np.repeat(codes, counts), unique)

    return pd.DataFrame({
        "step": np.concatenate([p.steps for p in pieces]).astype(np.int64, copy=False),
        "metric": labels([p.metric for p in pieces]),
        "split": categorical(np.repeat(np.array([0 if p.split == "train" else 1 for p in pieces], dtype=np.int8),
                                       counts), ["train", "eval"]),
        "value": np.concatenate([p.values for p in pieces]).astype(np.float64, copy=False),
        "source_key": labels([p.source_key for p in pieces]),
        "source": labels([p.source for p in pieces]),
        "wall_time": np.concatenate([p.wall_time for p in pieces]).astype(np.float64, copy=False),
    }, copy=False)  # the arrays are fresh: let pandas keep them rather than copy them into blocks


def _benchmark_part(key: str) -> str:
    """What names the data a held-out key was measured on: its key without the measure's own words.

    `val-core/aime24/acc/mean@16` -> `aime24`; `val/test_score/openai/gsm8k` -> `openai/gsm8k`; `eval_loss` -> ``.
    Two keys of one meaning (`eval_loss`, `eval/loss`) leave the same part; two benchmarks leave different ones.
    """
    words = [w for w in re.split(r"[/_\-.@]+", key.lower()) if w]
    return "/".join(w for w in words if w not in _MEASURE_WORDS and not w.isdigit())


_MEASURE_WORDS = frozenset({"val", "eval", "test", "core", "aux", "acc", "accuracy", "mean", "score", "reward",
                            "pass", "pass1", "loss", "std", "best", "worst", "maj", "avg", "rate", "metrics"})
