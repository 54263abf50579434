"""`rldoctor` as a peer judge in `assessor eval`: a measurement baseline, never a runtime dependency.

rldoctor (PyPI `rldoctor`, imported as `rl_doctor`, Apache-2.0, numpy only) reads a run's scalar metrics under
its own canonical names, runs its detectors (`advantage_collapse`, `entropy_collapse`, `reward_hacking`,
`length_pathology`, `clip_saturation`, `kl_drift`, `gradient_pathology`, `reward_composition`, `plateau`) and
returns one finding per detector: a severity (skipped, ok, info, warning, critical), a summary, the evidence and
the changes it prescribes. It gives no decision, so this module turns its findings into the action a user would
take on them (`decide`):

* **rollback** where a finding of warning or worse (the level its live monitor and TRL callback alert at) names a
  step to go back to: `plateau` ("Roll back to the step-N checkpoint", N its best step) and `gradient_pathology`
  on non-finite gradient norms ("Resume from the last checkpoint before the first NaN": the last step logged
  before it). When both do, the earlier step.
* else **stop** on any critical finding (what its CI gate `--fail-on critical` and its callback's `halt_on`
  act on);
* else **continue**.

It is fed what it can read of each run (`feed`): its own reader where the run's only metrics file is in a format
it reads (a TRL `trainer_state.json` or a JSON list of log dicts, JSONL, CSV, a TensorBoard folder), its steps
agree with ours, and it finds some of its fields there, at least as many as our conversion would give it;
otherwise our canonical `Run` converted into per-step records under key names it knows (TRL's, verl's for what
TRL does not log) and read by its `run_from_records`, which is what its JSONL reader does after parsing. Either
way only the steps up to the `Run`'s last one are kept, so the truncated replays of the detection delay see no
future. A run it can check nothing on is an error whose message starts `skipped:` and says what it would need.

Imported lazily: `build_judge("rldoctor")` says how to install it when it is missing (`pip install
"assessor[eval]"`). It is not in the `assessor assess` registry: it is here to be measured against.
"""

from __future__ import annotations

import importlib
import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from assessor.errors import AssessorError, ConfigError
from assessor.judge.base import JudgeRequest, JudgeResult
from assessor.judge.models import Decision, Evidence, Usage, Verdict
from assessor.run import Run, Split

NAME = "rldoctor"
INSTALL = 'pip install "assessor[eval]"  (or: pip install rldoctor)'

Severity = Literal["skipped", "ok", "info", "warning", "critical"]
_RANK: dict[Severity, int] = {"skipped": 0, "ok": 1, "info": 2, "warning": 3, "critical": 4}
_SEVERITIES: dict[str, Severity] = {s.upper(): s for s in _RANK}  # its enum member names
ACT_AT: Severity = "warning"  # the level a user acts on (its live monitor's and TRL callback's alert level)

# What rldoctor reads, each quantity as alternatives (its key, our canonical metric): the first our run logs is
# fed, so two different quantities never share one of its series. Its keys are TRL's where TRL logs the quantity,
# else verl's; all resolve through its alias table (tests check).
TRAIN_FEED: tuple[tuple[tuple[str, str], ...], ...] = (
    (("reward", "reward_mean"), ("critic/rewards/mean", "reward_shaped_mean")),
    (("reward_std", "reward_std"),),
    (("reward_max", "reward_max"),),
    (("reward_min", "reward_min"),),
    (("frac_reward_zero_std", "reward_zero_std_frac"),),
    (("critic/advantages/mean", "advantage_mean"),),
    (("critic/advantages/std", "advantage_std"),),
    (("entropy", "entropy"),),
    (("kl", "kl"), ("actor/ppo_kl", "policy_shift_kl")),
    (("clip_ratio/region_mean", "clip_ratio_region"),),
    (("clip_ratio/low_mean", "clip_ratio_low"),),
    (("clip_ratio/high_mean", "clip_ratio_high"),),
    (("grad_norm", "grad_norm"),),
    (("learning_rate", "lr"),),
    (("policy_loss", "pg_loss"), ("loss", "loss")),
    (("completions/mean_length", "response_length_mean"),),
    (("completions/max_length", "response_length_max"),),
    (("completions/clipped_ratio", "response_length_clip_ratio"),),
    (("prompt_length/mean", "prompt_length_mean"),),
    (("critic/vf_explained_var", "value_explained_var"),),
    (("perf/throughput", "throughput_tokens_per_s_per_gpu"),),
    (("perf/time_per_step", "time_step_s"),),
)
# Its one held-out score: the task metric when the run logs one, else the held-out reward, else pass@k.
EVAL_FEED: tuple[tuple[str, str], ...] = (
    ("eval/accuracy", "accuracy"), ("eval/reward", "reward_mean"), ("eval/pass_at_k", "pass_at_k"))
_COMPONENT = "reward_component/"  # ours: reward_component/<fn>_mean -> its rewards/<fn>/mean

# Our reader formats it has a reader of its own for.
NATIVE_FORMATS = frozenset({"trl_state", "hf_log_list", "jsonl", "csv", "tensorboard"})
_NOT_METRICS = frozenset({"nvidia_smi"})  # sources that hold telemetry, not training metrics


class PeerSkipped(AssessorError):
    """rldoctor could check nothing on this run; the message starts `skipped:` and says why."""


@dataclass(frozen=True)
class PeerFinding:
    """One rldoctor finding, in our terms.

    Attributes:
        detector: its detector's name (`plateau`, `kl_drift`, ...).
        title: its detector's title.
        severity: its severity.
        summary: its one-paragraph summary.
        evidence: the numbers it fired on.
        prescription: the changes it prescribes, in its order.
        step: the step its prescription tells the user to go back to, if it names one.
    """

    detector: str
    title: str
    severity: Severity
    summary: str
    evidence: tuple[str, ...] = ()
    prescription: tuple[str, ...] = ()
    step: int | None = None

    @property
    def actionable(self) -> bool:
        """Warning or worse: what a user acts on."""
        return _RANK[self.severity] >= _RANK[ACT_AT]


@dataclass(frozen=True)
class Decided:
    """The action taken on a set of findings, and why."""

    decision: Decision
    rollback_step: int | None
    reason: str
    drivers: tuple[PeerFinding, ...] = ()


def decide(findings: Sequence[PeerFinding], last_step: int | None) -> Decided:
    """The action a user takes on rldoctor's findings (see the module docstring).

    A step at or after `last_step` is not behind the run, so it is no rollback.
    """
    acting = [f for f in findings if f.actionable]
    behind = [f for f in acting if f.step is not None and (last_step is None or f.step < last_step)]
    if behind:
        step = min(f.step for f in behind if f.step is not None)
        drivers = tuple(f for f in behind if f.step == step)
        names = ", ".join(f"{f.detector} ({f.severity})" for f in drivers)
        return Decided("rollback", step, f"{names} prescribes going back to step {step}", drivers)
    critical = tuple(f for f in acting if f.severity == "critical")
    if critical:
        names = ", ".join(f.detector for f in critical)
        return Decided("stop", None, f"critical finding{'s' if len(critical) > 1 else ''} ({names}) and no step "
                       "named to go back to", critical)
    warned = ", ".join(f.detector for f in acting)
    reason = (f"warnings ({warned}) but nothing critical and no step to go back to" if acting
              else "no finding of warning or worse")
    return Decided("continue", None, reason)


# --- the rldoctor boundary (its objects are untyped: everything read from them is converted here)


def load_module() -> Any:
    """The `rl_doctor` module.

    Raises:
        ConfigError: it is not installed (the message gives the install command).
    """
    try:
        return importlib.import_module("rl_doctor")
    except ImportError as error:
        raise ConfigError(f"--judge {NAME} needs the rldoctor package, which is not installed: {INSTALL}") from error


def available() -> bool:
    """Whether rldoctor can be imported."""
    try:
        load_module()
    except ConfigError:
        return False
    return True


def to_finding(raw: Any, peer_run: Any) -> PeerFinding:
    """One of its `Finding` objects as a `PeerFinding`, with the step its prescription names.

    Args:
        raw: an `rl_doctor.Finding`.
        peer_run: the `rl_doctor.Run` it was made from (the first non-finite gradient step is read from it).
    """
    sev = _SEVERITIES.get(str(raw.severity.name))
    if sev is None:
        raise ValueError(f"rldoctor finding {raw.detector!r} has an unknown severity {raw.severity!r}")
    metrics = dict(raw.metrics or {})
    step: int | None = None
    if sev not in ("skipped", "ok"):
        if raw.detector == "plateau" and _finite(metrics.get("best_step")):
            step = round(float(metrics["best_step"]))
        elif raw.detector == "gradient_pathology" and int(metrics.get("n_nonfinite") or 0) > 0:
            step = _last_step_before(peer_run, min(float(s) for s in peer_run.nonfinite_steps["grad_norm"]))
    return PeerFinding(
        detector=str(raw.detector), title=str(raw.title), severity=sev, summary=str(raw.summary),
        evidence=tuple(str(e) for e in raw.evidence), prescription=tuple(str(p) for p in raw.prescription), step=step)


def _finite(value: object) -> bool:
    return isinstance(value, int | float) and math.isfinite(value)


def _last_step_before(peer_run: Any, step: float) -> int | None:
    earlier = [float(s) for s in peer_run.steps if float(s) < step]
    return round(max(earlier)) if earlier else None


# --- feeding it


@dataclass
class Fed:
    """A run as rldoctor reads it.

    Attributes:
        run: the `rl_doctor.Run`.
        route: how it was made, for the verdict's rationale.
    """

    run: Any
    route: str


def records(run: Run, last: int | None = None) -> list[dict[str, float]]:
    """Our run as per-step dicts under the keys rldoctor knows (`TRAIN_FEED`, `EVAL_FEED`, reward components).

    A value a step did not log is left out, which it reads as "not logged"; a non-finite value the run logged
    (`run.nonfinite`) is passed as NaN or inf, which it counts as logged and broken. Steps after `last` are left
    out.
    """
    chosen: list[tuple[str, str, Split]] = []  # (its key, our metric, split)
    quantities: list[tuple[tuple[tuple[str, str], ...], Split]] = [(q, "train") for q in TRAIN_FEED]
    for alternatives, split in [*quantities, (EVAL_FEED, "eval")]:
        logged = [(key, m) for key, m in alternatives if run.has(m, split) or _nonfinite(run, m, split)]
        if logged:
            chosen.append((logged[0][0], logged[0][1], split))
    for metric in run.metric_names("train"):
        if metric.startswith(_COMPONENT) and metric.endswith("_mean"):
            chosen.append((f"rewards/{metric[len(_COMPONENT):-len('_mean')]}/mean", metric, "train"))
    by_step: dict[int, dict[str, float]] = {}
    for key, metric, split in chosen:
        series = run.series(metric, split)
        steps = series.index.to_numpy(dtype="int64")
        values = series.to_numpy(dtype=float)
        for step, value in zip(steps, values, strict=True):
            by_step.setdefault(int(step), {}).setdefault(key, float(value))  # duplicates: the first, as it does
        for step, kind in _nonfinite(run, metric, split):
            by_step.setdefault(step, {}).setdefault(key, {"inf": math.inf, "-inf": -math.inf}.get(kind, math.nan))
    return [{"step": float(step), **by_step[step]} for step in sorted(by_step) if last is None or step <= last]


def _nonfinite(run: Run, metric: str, split: str) -> list[tuple[int, str]]:
    bad = run.nonfinite
    if not len(bad):
        return []
    rows = bad[(bad["metric"] == metric) & (bad["split"] == split)]
    return [(int(step), str(kind)) for step, kind in zip(rows["step"], rows["kind"], strict=True)]


def config(run: Run) -> dict[str, object]:
    """Our run facts under the config keys rldoctor reads (`max_steps` tells its plateau check how far the run is)."""
    facts = run.facts
    pairs: dict[str, object | None] = {
        "algorithm": facts.algorithm, "num_generations": facts.num_generations,
        "max_completion_length": facts.max_completion_length, "beta": facts.beta,
        "learning_rate": facts.learning_rate, "model_name": facts.model, "max_steps": facts.planned_total_steps,
    }
    return {key: value for key, value in pairs.items() if value is not None}


def convert(module: Any, run: Run, last: int | None) -> Any:
    """Our run as an `rl_doctor.Run`, through its `run_from_records`.

    Raises:
        PeerSkipped: none of the run's metrics is one it reads.
    """
    rows = records(run, last)
    if not rows:
        known = ", ".join(q[0][0] for q in TRAIN_FEED[:8])
        raise PeerSkipped(f"skipped: rldoctor reads none of this run's metrics (it needs keys such as {known}, an "
                          "eval score or rewards/<fn>/mean)")
    return module.run_from_records(rows, config=config(run), name=run.name, source="assessor")


def native_source(run: Run) -> Path | None:
    """The run's only metrics file, when it is in a format rldoctor reads itself (a TensorBoard file: its folder)."""
    sources = [s for s in run.sources if s.format not in _NOT_METRICS]
    if len(sources) != 1 or sources[0].format not in NATIVE_FORMATS:
        return None
    base = run.path if run.path.is_dir() else run.path.parent
    path = base / sources[0].path
    return path.parent if sources[0].format == "tensorboard" else path


def cut(module: Any, peer_run: Any, last: int) -> Any:
    """Its run with the steps after `last` removed (a truncated replay must not see the rest of the file)."""
    keep = [i for i, s in enumerate(peer_run.steps) if float(s) <= last]

    def take(values: Any) -> list[float]:
        return [float(values[i]) for i in keep]

    return module.Run(
        steps=take(peer_run.steps), series={k: take(v) for k, v in peer_run.series.items()},
        config=peer_run.config, reward_components={k: take(v) for k, v in peer_run.reward_components.items()},
        name=peer_run.name, source=peer_run.source, unmapped_keys=list(peer_run.unmapped_keys),
        nonfinite_steps={k: [s for s in v if float(s) <= last] for k, v in peer_run.nonfinite_steps.items()})


CONVERTED = "our Run converted to per-step records under its key names"


def _fields(peer_run: Any) -> int:
    return len(peer_run.available_fields) + len(peer_run.reward_components)


@dataclass
class RldoctorJudge:
    """rldoctor's findings turned into a decision (see the module docstring); `assessor eval` only."""

    name: str = NAME
    _module: Any = field(default=None, repr=False)
    _native: dict[tuple[str, int, int], Any] = field(default_factory=dict, repr=False)  # its reads, by file state

    def __post_init__(self) -> None:
        if self._module is None:
            self._module = load_module()

    def feed(self, run: Run) -> Fed:
        """The run as rldoctor reads it: its own reader where that works, else our conversion.

        Raises:
            PeerSkipped: neither route gives it a metric it reads.
        """
        steps = run.metrics["step"]
        last = int(steps.max()) if len(steps) else None
        try:
            converted, skipped = convert(self._module, run, last), None
        except PeerSkipped as error:
            converted, skipped = None, error
        path = native_source(run)
        native, why = self._native_run(path, last, converted) if path is not None and last is not None else (None, "")
        if native is not None and path is not None:
            return Fed(native, f"its own reader on {path.name}")
        if converted is None:
            raise skipped or PeerSkipped("skipped: rldoctor reads none of this run's metrics")
        return Fed(converted, CONVERTED + (f" (not its own reader: {why})" if why else ""))

    def _native_run(self, path: Path, last: int, converted: Any) -> tuple[Any, str]:
        """Its own read of `path` cut at `last`, or None and why it is not used."""
        native = self._read_native(path)
        if isinstance(native, str):
            return None, f"it failed on {path.name}: {native}"
        if not any(float(s) == last for s in native.steps):
            return None, f"its steps in {path.name} do not include our last step {last}"
        native = cut(self._module, native, last)
        if not _fields(native):
            return None, f"it found no field it reads in {path.name}"
        if converted is not None and _fields(native) < _fields(converted):
            return None, f"it found {_fields(native)} fields in {path.name}, our conversion {_fields(converted)}"
        return native, ""

    def _read_native(self, path: Path) -> Any:
        try:
            stat = path.stat()
        except OSError as error:
            return f"{type(error).__name__}: {error}"
        key = (str(path), stat.st_mtime_ns, stat.st_size)
        if key not in self._native:
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    self._native[key] = self._module.load_run(str(path))
            except Exception as error:  # its reader failing on a file is a reason to convert, not an eval error
                self._native[key] = f"{type(error).__name__}: {error}"
        return self._native[key]

    def findings(self, fed: Fed) -> list[PeerFinding]:
        """Its findings on a run it was fed, converted (numerical warnings inside it are its own business)."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            diagnosis = self._module.diagnose(fed.run)
        return [to_finding(raw, fed.run) for raw in diagnosis.findings]

    def judge(self, request: JudgeRequest) -> JudgeResult:
        """Feed it the run, take its findings, act on them.

        Raises:
            PeerSkipped: it could check nothing on this run.
        """
        fed = self.feed(request.run)
        found = self.findings(fed)
        ran = [f for f in found if f.severity != "skipped"]
        skipped = [f for f in found if f.severity == "skipped"]
        if not ran:
            raise PeerSkipped(skip_message(skipped))
        decided = decide(found, request.run.last_step)
        return JudgeResult(verdict=verdict(decided, found, fed.route), usage=Usage())


def skip_message(skipped: Sequence[PeerFinding]) -> str:
    """Why it could check nothing: its own skip reasons, shortest first."""
    reasons = sorted({f.summary for f in skipped}, key=len)
    return f"skipped: rldoctor ran none of its {len(skipped)} checks; " + "; ".join(reasons[:3])


def verdict(decided: Decided, findings: Sequence[PeerFinding], route: str) -> Verdict:
    """A `Verdict` carrying its findings as evidence and its prescriptions as the actions."""
    shown = sorted((f for f in findings if _RANK[f.severity] >= _RANK["info"]), key=lambda f: -_RANK[f.severity])
    evidence = [Evidence(signal=f.detector, observation=f"[{f.severity}] {f.title}: {f.summary}",
                         steps=[f.step] if f.step is not None else []) for f in shown]
    ran = sum(f.severity != "skipped" for f in findings)
    if not evidence:
        evidence = [Evidence(signal=NAME, observation=f"no finding above ok in its {ran} checks")]
    worst = shown[0] if shown else None
    headline = (f"rldoctor: [{worst.severity}] {worst.title}: {worst.summary}" if worst is not None
                else f"rldoctor: no problem found in {ran} checks.")
    actions = [p for f in (decided.drivers or tuple(f for f in shown if f.actionable)) for p in f.prescription]
    return Verdict(
        decision=decided.decision, rollback_step=decided.rollback_step, confidence=0.5, headline=headline,
        rationale=f"Peer baseline, fed {route}; {ran} of its {len(findings)} checks ran. Decision: "
        f"{decided.decision}, because {decided.reason} (rollback where a finding of warning or worse names a "
        "step, stop on a critical one, else continue).",
        evidence=evidence, recommended_actions=actions,
        could_not_see=[f"{f.detector}: {f.summary}" for f in findings if f.severity == "skipped"],
    )


def make(model: str | None = None, **options: object) -> RldoctorJudge:
    """The rldoctor peer judge (`--judge rldoctor`); it takes no model or options.

    Raises:
        ConfigError: rldoctor is not installed.
    """
    return RldoctorJudge()
