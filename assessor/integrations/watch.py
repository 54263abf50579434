"""`assessor watch`: check a live run on a schedule and say so when the verdict changes.

Each check reads only what the run wrote since the last one (`assessor.ingest.cache`), assesses it, and
notifies when the decision differs from the one last notified: `first`, `changed`, or `escalated` when
the new decision is more severe (continue < stop < rollback: a rollback says the run is getting worse
right now and every further step moves it further from its best checkpoint; a stop says further steps
are wasted; the order matches the exit codes 0 < 10 < 11). With a heartbeat, a quiet run still gets an
event every so often; when the run ends, an `ended` event carries the final verdict.

**State.** A JSON file (by default `$XDG_STATE_HOME/assessor/watch/<hash of the run path>.json`, never
inside the run directory, which may be read-only) keeps the last step, decision and digest, the last LLM
verdict, and counters. It is replaced atomically after every check, so a restarted watch, or one
started by cron with `--once` every 15 minutes, neither re-sends an event nor forgets one. Each check holds
an advisory lock on it (`state_lock`) from reading it to writing it back, so overlapping checks of one run
take turns instead of both sending the same event.

**LLM calls.** With `llm_judge` set, the cheap `judge` (rules by default) runs at every check and the LLM
only when the diagnostics changed materially since its last verdict (`material_digest`); in between its
last verdict is reused and counted in `llm_calls_saved`. What each call cost (tokens in, of them read from the
prompt cache, tokens out, USD) is kept with its verdict, and the totals in `llm_usage`; the summary line says
both.

**Robustness.** A run that cannot be read right now (a file mid-rewrite, no metrics yet) gives an outcome
that says so and no event; the next check tries again. A notifier that fails is logged to stderr and the
decision is offered again at the next check; it never ends the watch.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from assessor.errors import AssessorError, ConfigError
from assessor.integrations.hold import FullCheck, Held, summarize, tree_entries, try_hold
from assessor.integrations.notify import EventKind, Notifier, WatchEvent
from assessor.integrations.state_lock import state_lock
from assessor.judge import Judge, check_judge_spec, get_judge
from assessor.judge.models import EXIT_CODES, Decision, Usage, Verdict

if TYPE_CHECKING:  # the rest is imported by the first full check: a check that holds its verdict never needs it
    from assessor.assessment import Assessment
    from assessor.diagnose.models import Diagnostics
    from assessor.ingest.cache import IngestCache
    from assessor.run import Checkpoint, Run

STATE_VERSION = 2  # 2: `full_check` and `held_checks` (a version 1 state reads as one without them)
SEVERITY: dict[Decision, int] = {"continue": 0, "stop": 1, "rollback": 2}
DEFAULT_IDLE_TIMEOUT = 6 * 3600.0
# A best checkpoint older than this share of the run counts as "an earlier checkpoint to go back to".
_EARLIER_BEST = 0.9


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class WatchConfig(_Model):
    """What to watch and how."""

    run_dir: Path | str = Field(description="The run directory (or log file), or `mlflow://HOST:PORT/RUN_ID`.")
    every: float = Field(900.0, gt=0, description="Seconds between checks.")
    judge: str = Field("rules", description="The judge used at every check.")
    llm_judge: str | None = Field(None, description="e.g. `anthropic:MODEL`: called only on material change.")
    state_path: Path | None = Field(None, description="The state file; default under $XDG_STATE_HOME.")
    heartbeat: float | None = Field(None, gt=0, description="Seconds without an event before a heartbeat.")
    idle_timeout: float | None = Field(
        DEFAULT_IDLE_TIMEOUT, gt=0, description="End the watch after this long without a new step.")
    out_dir: Path | None = Field(None, description="Write the reports and plots of each full check here.")
    full: bool = Field(False, description="Diagnose the whole run at every check; never hold the last verdict "
                       "(`assessor.integrations.hold`).")


class LlmVerdict(_Model):
    """The LLM judge's last verdict and the diagnostics digest it was given."""

    judge: str
    verdict: Verdict
    digest: str
    parts: dict[str, Any]
    step: int | None
    usage: Usage | None = Field(None, description="What the call that gave this verdict cost.")


class WatchState(_Model):
    """What a watch remembers between checks and across restarts."""

    version: int = STATE_VERSION
    run_path: str
    last_step: int | None = None
    decision: Decision | None = None
    headline: str | None = None
    judge: str | None = None
    digest: str | None = None
    llm: LlmVerdict | None = None
    notified_decision: Decision | None = None
    ended: bool = False
    checks: int = 0
    llm_calls: int = 0
    llm_calls_saved: int = 0
    llm_usage: Usage = Field(default_factory=Usage, description="Tokens and cost of every LLM call, added up.")
    notifications: int = 0
    held_checks: int = Field(0, description="Checks that held the last full check's verdict (counted in `checks`).")
    full_check: FullCheck | None = Field(
        None, description="The last full check's summary, which later checks hold its verdict against; None when "
        "the run cannot be held (see `assessor.integrations.hold`).")
    last_check_at: float | None = None
    last_new_step_at: float | None = None
    last_notified_at: float | None = None
    last_heartbeat_at: float | None = None


@dataclass(frozen=True)
class CheckOutcome:
    """What one check found and did.

    Attributes:
        step: The last step read (the previous one when the run could not be read).
        decision: The current decision, None when there is no assessment.
        assessment: The assessment, None when the run could not be read.
        notified: The kind of event sent, or None.
        judge: Whose verdict `decision` is.
        llm_called: Whether the LLM judge was called at this check.
        reasons: What happened, in words (why the LLM was or was not called, why nothing was read, ...).
        ended: Why the watch ends after this check (None: it goes on).
        held: Set when the check held the last full check's verdict (`decision`) over the steps appended since;
            `assessment` is then that full check's when this process made it, else None.
    """

    step: int | None
    decision: Decision | None
    assessment: Assessment | None
    notified: EventKind | None
    judge: str | None
    llm_called: bool
    reasons: tuple[str, ...] = ()
    ended: str | None = None
    held: Held | None = None

    @property
    def exit_code(self) -> int:
        """The `assess` exit code of the decision (0, 10, 11), or 2 when the run could not be read."""
        if self.held is not None and self.decision is not None:
            return EXIT_CODES[self.decision]
        return self.assessment.exit_code if self.assessment is not None else ConfigError.exit_code


@dataclass
class WatchSummary:
    """How a watch went (counters are totals kept in the state file, earlier sessions included)."""

    checks: int
    llm_calls: int
    llm_calls_saved: int
    notifications: int
    ended: str | None
    last: CheckOutcome | None
    state_path: Path
    llm_usage: Usage | None = None
    held_checks: int = 0

    def line(self) -> str:
        """`12 checks (8 held), 2 LLM calls ($0.0312, 24,310 input tokens of which 20,480 cached), 9 saved, ...`."""
        cost = ""
        usage = self.llm_usage
        if usage is not None and usage.requests:
            money = f"${usage.cost_usd:.4f}" if usage.cost_usd is not None else "cost unknown"
            cost = (f" ({money}, {usage.input_tokens:,} input tokens of which {usage.cached_input_tokens:,} "
                    f"cached, {usage.output_tokens:,} output)")
        held = f" ({self.held_checks} held)" if self.held_checks else ""
        text = (f"{self.checks} checks{held}, {self.llm_calls} LLM calls{cost}, {self.llm_calls_saved} saved, "
                f"{self.notifications} notifications (state: {self.state_path})")
        return text + (f"; ended: {self.ended}" if self.ended else "")


def default_state_path(run_dir: Path | str, env: Mapping[str, str] | None = None) -> Path:
    """`$XDG_STATE_HOME/assessor/watch/<sha256 of the resolved run path, 16 hex>.json` (~/.local/state)."""
    env = os.environ if env is None else env
    base = Path(env["XDG_STATE_HOME"]) if env.get("XDG_STATE_HOME") else Path.home() / ".local" / "state"
    key = hashlib.sha256(_run_key(run_dir).encode("utf-8")).hexdigest()[:16]
    return base / "assessor" / "watch" / f"{key}.json"


def material_digest(diagnostics: Diagnostics, decision: Decision) -> dict[str, Any]:
    """The parts of the diagnostics whose change is worth a new LLM verdict.

    Coarse on purpose, so that noise between two checks does not count: the cheap judge's decision; the
    set of (signal, kind, severity) of findings at warning or critical; the KL/reward quadrant now; the
    recent trend direction (rising / falling / flat, tested against noise) of reward and of KL; and the
    checkpoint a rollback would go to when the best point is well behind the run (before the last 10%),
    None while the best is recent. Levels, p-values and step numbers of the latest points are left out:
    they move at every check.
    """
    run = diagnostics.run
    best = diagnostics.best_checkpoint
    earlier = None
    if best.best_step is not None and run.last_step and best.best_step < _EARLIER_BEST * run.last_step:
        earlier = best.checkpoint_step
    kl = diagnostics.signals.get("kl")
    return {
        "decision": decision,
        "findings": sorted({f"{f.signal}/{f.kind}/{f.severity}" for f in diagnostics.findings
                            if f.severity in ("warning", "critical")}),
        "quadrant": diagnostics.kl_reward.quadrant_now,
        "reward_trend": diagnostics.reward.trend,
        "kl_trend": kl.trend if kl is not None else None,
        "rollback_checkpoint_step": earlier,
    }


def digest_of(parts: Mapping[str, Any]) -> str:
    """A short hash of `material_digest`'s parts."""
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode("utf-8")).hexdigest()[:16]


def describe_change(before: Mapping[str, Any], after: Mapping[str, Any]) -> str:
    """What changed between two digests, in words (`quadrant kl_up_reward_up -> kl_up_reward_down; ...`)."""
    changes = []
    for key, new in after.items():
        old = before.get(key)
        if old == new:
            continue
        if key == "findings":
            added = sorted(set(new) - set(old or ()))
            gone = sorted(set(old or ()) - set(new))
            changes.extend([f"new finding {f}" for f in added] + [f"finding gone {f}" for f in gone])
        else:
            changes.append(f"{key} {old} -> {new}")
    return "; ".join(changes) or "the digest changed"


HOUR_CACHE_BAND = (5 * 60.0, 60 * 60.0)  # check intervals (s) the five-minute cache misses and the hour one keeps


def llm_options(every: float) -> dict[str, object]:
    """Options for the LLM judge of a watch checking every `every` seconds.

    Anthropic's default prompt cache lives five minutes: checks further apart would rewrite the whole prefix at
    1.25x the input price every time. Between five minutes and an hour apart, the one-hour cache (writes at 2x,
    each read refreshing it) keeps every check after the first at the cached price. Other judges ignore it.
    """
    low, high = HOUR_CACHE_BAND
    return {"cache_ttl": "1h"} if low < every <= high else {}


class Watcher:
    """Checks one run on a schedule (see the module docstring).

    Args:
        config: What to watch and how.
        notifiers: Where events go.
        clock: Wall-clock seconds (persisted in the state file, so not a monotonic clock); injectable.
        sleep: Waits between checks; default waits on the `stop` event given to `run`, else `time.sleep`.
        judge_factory: Makes a judge from its name and options (default `get_judge`).
        warn: Where problems are logged (default stderr).
        lock_wait: How long a check waits for another check of the same state file to finish (default
            `LOCK_WAIT_S`).

    Raises:
        ConfigError: an unknown judge, a missing API key, or a state file of another run or not readable.
    """

    def __init__(
        self, config: WatchConfig, notifiers: Sequence[Notifier] = (), *, clock: Callable[[], float] = time.time,
        sleep: Callable[[float], object] | None = None, judge_factory: Callable[..., Judge] = get_judge,
        warn: Callable[[str], None] | None = None, lock_wait: float | None = None,
    ) -> None:
        self.config = config
        self.lock_wait = lock_wait
        self.notifiers = list(notifiers)
        self.clock = clock
        self._sleep = sleep
        self._warn = warn or _to_stderr
        # The judges are made by the first full check (a check that holds its verdict imports none of them); a
        # name or key that cannot work is refused now, as the one who typed it is still there to read why.
        self._judge_factory = judge_factory
        self._judge: Judge | None = None
        self._llm_judge: Judge | None = None
        self._llm_options: dict[str, object] = {}
        if judge_factory is get_judge:
            check_judge_spec(config.judge)
        if config.llm_judge:
            # Errors about the LLM judge name the option it came from.
            self._llm_options = {**llm_options(config.every),
                                 **({"flag": "--llm-judge"} if judge_factory is get_judge else {})}
            if judge_factory is get_judge:
                check_judge_spec(config.llm_judge, flag="--llm-judge")
        self.state_path = config.state_path or default_state_path(config.run_dir)
        self.state = load_state(self.state_path, config.run_dir)
        self._cache: IngestCache | None = None
        self.last: CheckOutcome | None = None
        self._assessment: Assessment | None = None  # the latest one, reused while nothing new arrives
        self._checkpoints: list[Checkpoint] = []  # a checkpoint of weights only changes no file the cache reads
        self._remote_seen: tuple[int, int | None] | None = None  # rows and last step of a tracking server's run

    @property
    def judge(self) -> Judge:
        """The judge of every full check (made on first use)."""
        if self._judge is None:
            self._judge = self._judge_factory(self.config.judge)
        return self._judge

    @judge.setter
    def judge(self, judge: Judge) -> None:
        self._judge = judge

    @property
    def llm_judge(self) -> Judge | None:
        """The LLM judge called on material change (made on first use), or None without one."""
        if self._llm_judge is None and self.config.llm_judge:
            self._llm_judge = self._judge_factory(self.config.llm_judge, **self._llm_options)
        return self._llm_judge

    @llm_judge.setter
    def llm_judge(self, judge: Judge | None) -> None:
        self._llm_judge = judge

    @property
    def cache(self) -> IngestCache:
        """What was read so far; kept on disk too, so a check in a new process (`watch --once`) reads only the new."""
        if self._cache is None:
            from assessor.ingest.cache import IngestCache
            from assessor.ingest.persist import DiskStore, default_cache_dir

            self._cache = IngestCache(store=DiskStore(default_cache_dir()))
        return self._cache

    def check(self) -> CheckOutcome:
        """One check: read what is new, assess if anything is, notify if the verdict moved; save the state.

        Raises:
            StateLockedError: another check of this state file did not finish within `lock_wait` seconds.
        """
        with state_lock(self.state_path, self.lock_wait):
            # Another process may have checked since we last read it: decide on what it saved.
            self.state = load_state(self.state_path, self.config.run_dir)
            return self._check()

    def _check(self) -> CheckOutcome:
        now = self.clock()
        state = self.state
        state.checks += 1
        state.last_check_at = now
        if state.last_new_step_at is None:
            state.last_new_step_at = now  # idle time counts from the first check, even with nothing to read
        reasons: list[str] = []
        held = self._hold(now, reasons)
        if held is not None:
            return self._finish(held)
        from assessor.ingest import load_run

        # Listed before reading: whatever changes while this check reads and diagnoses shows at the next one.
        root = self._root()
        tree = tree_entries(root) if root is not None else None
        try:
            run = load_run(self.config.run_dir, cache=self.cache)
        except AssessorError as error:
            reasons.append(f"could not read the run ({error}); trying again at the next check")
            return self._finish(CheckOutcome(
                step=state.last_step, decision=None, assessment=None, notified=None, judge=None, llm_called=False,
                reasons=tuple(reasons), ended=self._idle(now)))
        step = run.last_step
        if step is not None and (state.last_step is None or step != state.last_step):
            state.last_new_step_at = now
        llm_called = False
        changed = self.cache.stats.changed
        if isinstance(self.config.run_dir, str):  # a tracking server's run: read whole each time, compare its size
            seen, self._remote_seen = self._remote_seen, (len(run.metrics), step)
            changed = seen != self._remote_seen
        if self._assessment is not None and not changed and run.checkpoints == self._checkpoints:
            assessment = self._assessment
            reasons.append(f"nothing new since step {step}; kept the last verdict")
        else:
            self._assessment = None  # should assessing fail, the next check must not take this data as seen
            assessment, llm_called = self._assess(run, reasons)
            self._assessment = assessment
            self._checkpoints = list(run.checkpoints)
            state.full_check = None if tree is None else summarize(
                run, assessment.verdict.decision, assessment.diagnostics.run.state, tree, self.cache.tailed_logs(), now)
            if self.config.out_dir is not None:
                from assessor.report.html import write_reports

                write_reports(assessment, self.config.out_dir)
        ended = self._ended(run, now)
        decision = assessment.verdict.decision
        kind = self._event_kind(decision, ended, now)
        notified = None
        if kind is not None and self._send(WatchEvent(
                kind=kind, assessment=assessment, previous_decision=state.notified_decision,
                run_dir=self.config.run_dir, step=step)):
            notified = kind
            state.notifications += 1
            state.notified_decision = decision
            state.last_notified_at = now
            if kind == "heartbeat":
                state.last_heartbeat_at = now
            if kind == "ended":
                state.ended = True
        state.last_step = step
        state.decision = decision
        state.headline = assessment.verdict.headline
        state.judge = assessment.judge
        return self._finish(CheckOutcome(
            step=step, decision=decision, assessment=assessment, notified=notified, judge=assessment.judge,
            llm_called=llm_called, reasons=tuple(reasons), ended=ended))

    def _root(self) -> Path | None:
        """The run directory or file as discovery reads it; None for a tracking server's run."""
        run_dir = self.config.run_dir
        return None if isinstance(run_dir, str) else run_dir.expanduser().resolve()

    def _hold(self, now: float, reasons: list[str]) -> CheckOutcome | None:
        """A check that holds the last full check's verdict, when all that is new is immaterial; else None.

        Never when an event is owed (a first or changed verdict not yet delivered, a heartbeat due, the end of the
        run), since an event carries a whole assessment; nor without a step new since the last check, so a run
        that stops writing gets the full check that can call it stalled. See `assessor.integrations.hold`.
        """
        state, root = self.state, self._root()
        full = state.full_check
        if full is None or root is None or self.config.full or state.ended or state.decision is None or \
                full.decision != state.decision or state.notified_decision != state.decision:
            return None
        heartbeat = self.config.heartbeat
        if heartbeat is not None and now - (state.last_notified_at or now) >= heartbeat:
            return None
        found = try_hold(full, root)
        if isinstance(found, str):
            reasons.append(f"full check: {found}")
            return None
        if found is None or (state.last_step is not None and found.last_step <= state.last_step):
            return None
        state.last_new_step_at = now
        state.last_step = found.last_step
        state.held_checks += 1
        reasons.append(found.line())
        return CheckOutcome(step=found.last_step, decision=state.decision, assessment=self._assessment,
                            notified=None, judge=state.judge, llm_called=False, reasons=tuple(reasons), held=found)

    def run(self, stop: threading.Event | None = None) -> WatchSummary:
        """Check every `config.every` seconds until the run ends, goes idle, or `stop` is set."""
        self.judge  # noqa: B018  # made now: a judge that cannot be made stops the watch before its first check
        self.llm_judge  # noqa: B018
        while True:
            started = self.clock()
            try:
                outcome = self.check()
            except Exception as error:  # a bug in one check must not end a days-long watch
                self._warn(f"watch: check failed ({type(error).__name__}: {error}); trying again next time")
                outcome = None
            if outcome is not None and outcome.ended:
                break
            if stop is not None and stop.is_set():
                break
            self._wait(max(0.0, self.config.every - (self.clock() - started)), stop)
            if stop is not None and stop.is_set():
                break
        return self.summary()

    def summary(self) -> WatchSummary:
        """The counters so far."""
        state = self.state
        return WatchSummary(
            checks=state.checks, llm_calls=state.llm_calls, llm_calls_saved=state.llm_calls_saved,
            notifications=state.notifications, ended=self.last.ended if self.last else None, last=self.last,
            state_path=self.state_path, llm_usage=state.llm_usage, held_checks=state.held_checks,
        )

    def _assess(self, run: Run, reasons: list[str]) -> tuple[Assessment, bool]:
        """The cheap judge's assessment, or the LLM's (new on material change, else its last one reused)."""
        from assessor.pipeline import assess_run

        out_dir = self.config.out_dir
        # `--judge auto` chose an LLM only because a key is set: while its API is down, the rules judge decides.
        cheap = assess_run(run, self.judge, out_dir=out_dir, fall_back_to_rules=self.config.judge == "auto")
        if cheap.judge_fallback:
            reasons.append(f"judge: rules ({cheap.judge_fallback}); will ask again next check")
        parts = material_digest(cheap.diagnostics, cheap.verdict.decision)
        digest = digest_of(parts)
        self.state.digest = digest
        if self.llm_judge is None:
            return cheap, False
        previous = self.state.llm
        if previous is not None and previous.digest == digest and previous.judge == self.llm_judge.name:
            self.state.llm_calls_saved += 1
            reasons.append(f"diagnostics unchanged since step {previous.step}: reused the {previous.judge} verdict "
                           "(LLM call saved)")
            return cheap.model_copy(update={"verdict": previous.verdict, "judge": previous.judge}), False
        why = "no earlier LLM verdict" if previous is None else describe_change(previous.parts, parts)
        try:
            smart = assess_run(run, self.llm_judge, out_dir=out_dir, diagnostics=cheap.diagnostics)
        except AssessorError as error:
            reasons.append(f"LLM judge failed ({error}); used the {cheap.judge} verdict, will ask again next check")
            return cheap, False
        self.state.llm_calls += 1
        self.state.llm_usage = self.state.llm_usage.plus(smart.usage)
        self.state.llm = LlmVerdict(judge=smart.judge, verdict=smart.verdict, digest=digest, parts=parts,
                                    step=run.last_step, usage=smart.usage)
        cost = smart.usage.cost_usd if smart.usage is not None else None
        reasons.append(f"called {smart.judge}" + (f" (${cost:.4f})" if cost is not None else "") + f": {why}")
        return smart, True

    def _ended(self, run: Run, now: float) -> str | None:
        planned = run.facts.planned_total_steps
        if planned and run.last_step is not None and run.last_step >= planned:
            return f"reached the planned {planned} steps"
        if self.cache.training_ended():
            return "the trainer wrote its end-of-training summary"
        return self._idle(now)

    def _idle(self, now: float) -> str | None:
        timeout = self.config.idle_timeout
        since = self.state.last_new_step_at
        if timeout is not None and since is not None and now - since >= timeout:
            return f"no new step for {_duration(now - since)} (idle timeout {_duration(timeout)})"
        return None

    def _event_kind(self, decision: Decision, ended: str | None, now: float) -> EventKind | None:
        state = self.state
        notified = state.notified_decision
        if ended and not state.ended:
            return "ended"
        if notified is None:
            return "first"
        if decision != notified:
            return "escalated" if SEVERITY[decision] > SEVERITY[notified] else "changed"
        heartbeat = self.config.heartbeat
        if heartbeat is not None and now - (state.last_notified_at or now) >= heartbeat:
            return "heartbeat"
        return None

    def _send(self, event: WatchEvent) -> bool:
        """Deliver to every notifier; True when at least one took it (or there are none)."""
        delivered = not self.notifiers
        for notifier in self.notifiers:
            try:
                notifier.notify(event)
                delivered = True
            except Exception as error:  # a notifier must never end the watch
                self._warn(f"watch: {type(notifier).__name__} failed ({type(error).__name__}: {error})")
        return delivered

    def _finish(self, outcome: CheckOutcome) -> CheckOutcome:
        save_state(self.state, self.state_path)
        self.last = outcome
        return outcome

    def _wait(self, seconds: float, stop: threading.Event | None) -> None:
        if self._sleep is not None:
            self._sleep(seconds)
        elif stop is not None:
            stop.wait(seconds)
        else:
            time.sleep(seconds)


def make_watcher(
    run_dir: Path | str, *, every: str, notify: Sequence[str] = ("stdout",), judge: str = "rules",
    llm_judge: str | None = None, heartbeat: str | None = None, state_path: Path | None = None,
    idle_timeout: str | None = "6h", out_dir: Path | None = None, full: bool = False,
) -> Watcher:
    """A `Watcher` from the options of `assessor watch` (durations as text: `90s`, `15m`, `2h`, `1d`).

    Raises:
        ConfigError: a bad duration or `--notify` value, an unknown judge or missing key, a foreign state file.
    """
    from assessor.integrations.notify import notifiers_from
    from assessor.integrations.schedule import parse_duration

    config = WatchConfig(
        run_dir=run_dir, every=parse_duration(every), judge=judge, llm_judge=llm_judge, state_path=state_path,
        heartbeat=parse_duration(heartbeat) if heartbeat else None,
        idle_timeout=parse_duration(idle_timeout) if idle_timeout else None, out_dir=out_dir, full=full,
    )
    return Watcher(config, notifiers_from(notify))


def _run_key(run_dir: Path | str) -> str:
    """The resolved run path, or a tracking server's run address as given."""
    return run_dir if isinstance(run_dir, str) else str(run_dir.expanduser().resolve())


def load_state(path: Path, run_dir: Path | str) -> WatchState:
    """The state saved at `path`, or a fresh one when there is none.

    Raises:
        ConfigError: the file is not a watch state, is from a newer version, or belongs to another run.
    """
    run_path = _run_key(run_dir)
    if not path.exists():
        return WatchState(run_path=run_path)
    try:
        state = WatchState.model_validate_json(path.read_bytes())
    except (OSError, ValidationError) as error:
        detail = error.strerror if isinstance(error, OSError) else _invalid(error, path)
        raise ConfigError(f"{path}: not a readable watch state file ({detail}); delete it to start over, or "
                          "pass --state with another file") from None
    if state.version > STATE_VERSION:
        raise ConfigError(f"{path}: written by a newer assessor (state version {state.version}); upgrade assessor")
    if state.run_path != run_path:
        raise ConfigError(f"{path}: is the state of another run ({state.run_path}); pass --state with a file of "
                          "its own for each run")
    state.version = STATE_VERSION  # an older state reads as one without the newer fields; it is saved as this version
    return state


def _invalid(error: ValidationError, path: Path) -> str:
    if error.errors()[0]["type"] == "json_invalid":
        return "empty" if not path.read_bytes().strip() else "not valid JSON"
    return f"{error.error_count()} invalid fields"


def save_state(state: WatchState, path: Path) -> None:
    """Write the state atomically (a temporary file beside it, then `os.replace`)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(state.model_dump_json(indent=2))
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _duration(seconds: float) -> str:
    from assessor.integrations.schedule import format_duration

    return format_duration(round(seconds))


def _to_stderr(message: str) -> None:
    sys.stderr.write(message + "\n")
    sys.stderr.flush()


__all__ = [
    "SEVERITY", "CheckOutcome", "LlmVerdict", "WatchConfig", "WatchState", "WatchSummary", "Watcher",
    "default_state_path", "describe_change", "digest_of", "load_state", "make_watcher", "material_digest",
    "save_state",
]
