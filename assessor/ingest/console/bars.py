"""tqdm progress bars in a console log: every update of every bar, grouped by the bar's total.

Bars are recorded for one reason: HF's Trainer writes each log dict through its own bar, so the trainer
bar's positions are where TRL's step-less dicts get their steps (see `trl.assign_trl_steps`). Which of the
bars (trainer, vLLM, dataset, eval) is the trainer's is decided there, from what is recorded here.
"""

from __future__ import annotations

import re
from array import array
from dataclasses import dataclass, field

# `  5%|▌  | 10/200 [00:37<11:56,  3.77s/it]` and vLLM's `25% Completed | 1/4 [...]`
_BAR = re.compile(r"(?P<pct>\d{1,3})%\s*(?:\|[^|]*\||Completed\s*\|)\s*(?P<n>\d+)/(?P<total>\d+)\s*\[")


@dataclass
class BarTrack:
    """Updates of every tqdm bar sharing one total, in file order."""

    tick: array[int] = field(default_factory=lambda: array("q"))  # global bar-update counter at the update
    pos: array[int] = field(default_factory=lambda: array("q"))
    described: int = 0  # updates whose bar has a label ("Processed prompts: ...")
    restarts: int = 0  # times the position went down (a new bar with the same total)


class Bars:
    """All bar updates of one log, by total, and a counter of updates that places other records among them."""

    def __init__(self) -> None:
        self.tracks: dict[int, BarTrack] = {}
        self.ticks = 0  # bar updates seen so far, across all bars
        self.training_total: int | None = None  # verl's trainer bar ("Training Progress: n/total_training_steps")

    def update(self, seg: str) -> str:
        """Record a tqdm bar update; return the text after the bar (a dict may follow on the same line)."""
        match = _BAR.search(seg)
        if match is None:
            return seg
        total = int(match["total"])
        pos = int(match["n"])
        if total > 0:
            track = self.tracks.get(total)
            if track is None:
                track = self.tracks[total] = BarTrack()
            if track.pos and pos < track.pos[-1]:
                track.restarts += 1
            track.tick.append(self.ticks)
            track.pos.append(pos)
            label = seg[: match.start()]
            if label.strip():
                track.described += 1
                if "Training Progress" in label:
                    self.training_total = total
            self.ticks += 1
        close = seg.find("]", match.end())
        return "" if close < 0 else seg[close + 1:]
