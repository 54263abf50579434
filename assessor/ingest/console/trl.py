"""TRL / HF Trainer log dicts: telling metric dicts from other printed dicts, and finding their steps.

`{'loss': 0.0126, 'grad_norm': ...}` (values may be strings) carries no step, so each dict's step is
inferred from the trainer's tqdm bar (`assign_trl_steps`), else spaced evenly; the final summary dict
(`train_runtime`, ...) becomes facts.

A run resumed from a checkpoint and logging to the same file starts a fresh bar: HF draws it at 0 and
jumps to the checkpoint's step at the first optimizer step, so the bar's position stays the global step
and the steps simply go back once, at the restart. Without a bar, the restart is found from the trainer's
resume message (`RESUME_LINE`) or from `epoch` going back, and the resumed dicts continue from there.
Either way the overlap is logged twice, and the normalizer keeps the newest record of each step.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from assessor.ingest.base import RecordBuilder, as_int, parse_number
from assessor.ingest.console.bars import Bars, BarTrack
from assessor.ingest.console.head import HeadFacts
from assessor.ingest.facts import Fact

_TRL_KEYS = frozenset({
    "loss", "reward", "learning_rate", "grad_norm", "train_runtime", "train_loss", "kl", "entropy",
    "num_tokens", "reward_std",
})
_TRL_KEY_PREFIXES = ("eval_", "rewards/", "completions/", "objective/", "policy/", "clip_ratio/")
_CONFIG_ONLY_KEYS = frozenset({
    "output_dir", "max_steps", "num_train_epochs", "per_device_train_batch_size", "model_name_or_path",
    "logging_steps", "gradient_accumulation_steps", "seed", "save_steps",
})
_METRIC_HINTS = ("loss", "reward", "learning_rate", "grad_norm", "train_runtime")
_STEP_KEYS = ("step", "global_step")
_SUMMARY_KEY = "train_runtime"

# What the HF Trainer logs (at INFO) when it resumes: transformers 4.x prints "Continuing training from
# global step N", 5.x "Resuming training from checkpoint with epoch E and global step N".
RESUME_LINE = re.compile(
    r"(?:Continuing training from|Resuming training from checkpoint with epoch \d+ and) global step (?P<n>\d+)"
)


@dataclass
class TrlDict:
    """One printed TRL/HF log dict."""

    kind: str  # "train", "eval" or "summary"
    values: dict[str, Any]
    explicit_step: int | None
    tick: int  # bar updates seen before the dict appeared
    resumed_from: int | None = None  # a resume message ("... global step N") came between this dict and the last


def resume_step(text: str) -> int | None:
    """The global step of an HF Trainer resume message, None for any other line.

    >>> resume_step("  Continuing training from global step 100"), resume_step("global step 3 done")
    (100, None)
    """
    match = RESUME_LINE.search(text)
    return int(match["n"]) if match else None


# ---------------------------------------------------------------------- recognising the dicts
def looks_metric(text: str) -> bool:
    """Cheap check on the start of a printed dict: does it name a TRL metric key?"""
    head = text[:400]
    return "'eval_" in head or any(f"'{key}'" in head for key in _METRIC_HINTS)


def trl_dict(values: dict[str, Any], tick: int) -> TrlDict | None:
    """The printed dict as a TRL/HF log dict (train, eval or the final summary), None when it is not one."""
    if not _is_trl_metrics(values):
        return None
    step_value = next((values[k] for k in _STEP_KEYS if k in values), None)
    explicit = as_int(step_value) if step_value is not None else None
    kind = "summary" if _SUMMARY_KEY in values else "eval" if _is_eval(values) else "train"
    return TrlDict(kind, values, explicit, tick)


def _is_trl_metrics(values: Mapping[str, Any]) -> bool:
    """A TRL/HF log dict: a known metric key, mostly numeric values, and no config-only keys."""
    keys = values.keys()
    if not any(k in _TRL_KEYS or k.startswith(_TRL_KEY_PREFIXES) for k in keys):
        return False
    if any(k in _CONFIG_ONLY_KEYS for k in keys):
        return False
    numeric = sum(
        1 for v in values.values()
        if v is None or (not isinstance(v, dict | list | tuple | set) and parse_number(v) is not None)
    )
    return numeric * 10 >= len(values) * 9


def _is_eval(values: Mapping[str, Any]) -> bool:
    keys = [k for k in values if k not in ("epoch", *_STEP_KEYS)]
    return bool(keys) and all(k.startswith("eval_") for k in keys)


# ---------------------------------------------------------------------- rows
def read_trl(
    name: str, dicts: list[TrlDict], bars: Bars, head: HeadFacts, builder: RecordBuilder, facts: dict[str, Fact],
    notes: list[str],
) -> list[int]:
    """TRL/HF dicts into rows; the summary dict becomes facts. Returns the train steps."""
    steps, note, total = assign_trl_steps(dicts, bars, head)
    notes.append(note)
    train_steps: list[int] = []
    for record, step in zip(dicts, steps, strict=True):
        if record.kind == "summary":
            for key, value in record.values.items():
                number = parse_number(value)
                if key not in ("epoch", *_STEP_KEYS) and number is not None:
                    facts[key] = (number, f"{name}: final Trainer summary dict")
            continue
        # An eval dict repeats `epoch`; keep the train one so a step never holds two epoch values.
        skip = (*_STEP_KEYS, "epoch") if record.kind == "eval" else _STEP_KEYS
        builder.add_row(step, record.values, None, skip=skip)
        if record.kind == "train":
            train_steps.append(step)
    facts["framework"] = ("trl", f"{name}: TRL/HF Trainer log dicts")
    if total is not None:
        facts["planned_total_steps"] = (total, f"{name}: trainer progress bar total (n/{total})")
    elif head.hf_banner_total is not None:
        facts["planned_total_steps"] = (
            head.hf_banner_total, f"{name}: 'Total optimization steps' banner",
        )
    return train_steps


# ---------------------------------------------------------------------- step inference
def assign_trl_steps(dicts: list[TrlDict], bars: Bars, head: HeadFacts) -> tuple[list[int], str, int | None]:
    """Steps for the printed dicts, a note saying how, and the trainer bar's total.

    HF writes each log dict with `training_bar.write`, which clears the bar and redraws it at the same
    position, so every log leaves a repeated position ("log event") on the trainer bar. stdout is often
    block-buffered while the bar goes to stderr, so dicts can appear long after their step (all of them
    after training, in some logs). Each dict therefore takes the earliest unused log event that happened
    before it appeared, on the same launch of the bar; with no such event, the bar's last position before
    it. The steps must rise from dict to dict, except where the bar restarted (a resumed run). Without a
    usable bar, the steps are spaced evenly (logging_steps, or max_steps / number of dicts).
    """
    total = _trainer_total(dicts, bars)
    if total is not None:
        track = bars.tracks[total]
        restarts = _restart_ticks(track)
        steps = _steps_from_bar(dicts, track, restarts)
        if steps and _rising_between_restarts(dicts, steps, restarts):
            note = f"steps read from the trainer progress bar (n/{total}) at each logged dict"
            if len(restarts):
                note += (f"; the bar restarted {len(restarts)} time(s) (a resumed run), so steps logged before "
                         "a restart may be logged again after it")
            return steps, note, total
    return (*_steps_without_bar(dicts, bars, head, total), total)


def _trainer_total(dicts: list[TrlDict], bars: Bars) -> int | None:
    """The total of the trainer's bar among all bars in the file.

    Among the mostly unlabelled bars (vLLM and dataset bars carry a label), ranked by: has at least one log
    event per printed dict (HF writes every dict through the trainer bar), rarely restarts (eval bars restart
    every time), then by the number of updates (the brief's "most frequent total").
    """
    # HF's trainer bar carries no label; vLLM's "Processed prompts: 256/256" and a dataset's "Map: ..." do. A
    # labelled bar that finishes on every update is one batch's progress however often it repeats a position (and
    # without the trainer bar's repeated positions, when stdout and stderr were captured apart, it would win).
    candidates = [total for total, track in bars.tracks.items() if track.described * 2 < len(track.pos)]
    if not candidates:
        return None  # only labelled bars (vLLM "Processed prompts"): no trainer bar here
    n_dicts = len(dicts)

    def rank(total: int) -> tuple[bool, bool, int]:
        track = bars.tracks[total]
        return (_count_events(track) >= n_dicts, track.restarts <= 2, len(track.pos))

    return max(candidates, key=rank)


def _count_events(track: BarTrack) -> int:
    pos = track.pos
    return sum(1 for i in range(1, len(pos)) if pos[i] == pos[i - 1])


def _restart_ticks(track: BarTrack) -> np.ndarray:
    """Bar-update counters at which the bar's position went down: a new launch of the same bar."""
    pos = np.frombuffer(track.pos, dtype=np.int64) if len(track.pos) else np.empty(0, dtype=np.int64)
    tick = np.frombuffer(track.tick, dtype=np.int64) if len(track.tick) else np.empty(0, dtype=np.int64)
    return tick[1:][pos[1:] < pos[:-1]]


def _launch(restarts: np.ndarray, tick: int) -> int:
    """Which launch of the bar a dict that appeared after `tick` bar updates belongs to (0 = the first)."""
    return int(np.searchsorted(restarts, tick, side="left"))


def _rising_between_restarts(dicts: list[TrlDict], steps: list[int], restarts: np.ndarray) -> bool:
    """Whether the train dicts' steps rise strictly within each launch of the bar (a wrong bar rarely does)."""
    last: tuple[int, int] | None = None  # (launch, step) of the previous train dict
    for record, step in zip(dicts, steps, strict=True):
        if record.kind != "train" or record.explicit_step is not None:
            continue
        launch = _launch(restarts, record.tick)
        if last is not None and launch == last[0] and step <= last[1]:
            return False
        last = (launch, step)
    return True


def _steps_from_bar(dicts: list[TrlDict], track: BarTrack, restarts: np.ndarray) -> list[int]:
    pos = np.frombuffer(track.pos, dtype=np.int64) if len(track.pos) else np.empty(0, dtype=np.int64)
    tick = np.frombuffer(track.tick, dtype=np.int64) if len(track.tick) else np.empty(0, dtype=np.int64)
    repeat = np.flatnonzero(pos[1:] == pos[:-1])
    event_tick = tick[repeat]  # the event happened right after this update (clear, write, redraw)
    event_pos = pos[repeat]
    event_launch = np.searchsorted(restarts, event_tick, side="right")
    steps: list[int] = []
    cursor = 0
    previous = 0
    for record in dicts:
        # A dict printed after a restart belongs to the new launch: log events of an earlier launch whose
        # dicts never reached the file (a crash loses buffered stdout) must not shift the new launch's dicts.
        launch = _launch(restarts, record.tick)
        while cursor < len(event_tick) and event_launch[cursor] < launch:
            cursor += 1
        if cursor < len(event_tick) and event_tick[cursor] < record.tick:
            step = int(event_pos[cursor])
            cursor += 1
        else:
            seen = int(np.searchsorted(tick, record.tick, side="left"))
            step = int(pos[seen - 1]) if seen else previous
        if record.explicit_step is not None:
            step = record.explicit_step
        steps.append(step)
        previous = step
    return steps


def _steps_without_bar(
    dicts: list[TrlDict], bars: Bars, head: HeadFacts, bar_total: int | None,
) -> tuple[list[int], str]:
    """Evenly spaced steps for the train dicts; eval dicts take the step of the train dict before them.

    A resume restarts the spacing: from the step in the trainer's resume message, or else, when `epoch`
    goes back, from the step that epoch stood for before (steps per epoch measured on the earlier dicts).
    """
    n_train = sum(d.kind == "train" and d.explicit_step is None for d in dicts)
    logging_steps = as_int(head.text_flat.get("logging_steps", head.command_flat.get("logging_steps")))
    max_steps = bar_total or head.hf_banner_total or as_int(head.text_flat.get("max_steps")) or as_int(
        head.command_flat.get("max_steps"))
    lead = "no usable progress bar" if bars.tracks else "no progress bar"
    if logging_steps is not None and logging_steps > 0:
        interval, why = logging_steps, f"logging_steps={logging_steps}"
    elif max_steps is not None and max_steps > 0 and n_train and max_steps % n_train == 0:
        interval, why = max_steps // n_train, f"max_steps={max_steps}"
    else:
        interval, why = 1, "one dict per step assumed"
    steps: list[int] = []
    current = 0
    last_train = 0
    top = interval
    resumed_from: int | None = None  # from a resume message, waiting for the next train dict
    last_epoch: float | None = None
    steps_per_epoch: float | None = None
    resumes: list[str] = []
    for record in dicts:
        if record.resumed_from is not None:
            resumed_from = record.resumed_from
        epoch = parse_number(record.values.get("epoch")) if record.kind == "train" else None
        if record.explicit_step is not None:
            current = record.explicit_step
        elif record.kind == "train":
            current = last_train + interval
            if resumed_from is not None:
                # HF logs when global_step % logging_steps == 0: the first log after step N is the next multiple.
                current = (resumed_from // interval + 1) * interval
                resumes.append(f"global step {resumed_from} (resume message)")
                resumed_from = None
            elif epoch is not None and last_epoch is not None and epoch < last_epoch and steps_per_epoch:
                current = max(interval, round(epoch * steps_per_epoch / interval) * interval)
                resumes.append(f"about step {current} (epoch went back to {epoch:g})")
            last_train = current
            top = max(top, current)
            if epoch is not None and epoch > 0:
                last_epoch = epoch
                steps_per_epoch = current / epoch
        steps.append(current)
    note = f"{lead}; steps inferred as {interval}..{top}"
    if interval > 1:
        note += f" (every {interval})"
    note += f" from {n_train} logged dicts and {why}"
    if resumes:
        note += f"; the run was resumed at {', '.join(resumes)}, and the spacing starts again there"
    return steps, note
