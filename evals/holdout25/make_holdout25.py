"""Holdout set 25: blind-labelled RL post-training runs, aimed at PPO critics, RLOO / REINFORCE++, online
preference trainers (online DPO, XPO, Nash-MD), learned-reward-model RLHF, multi-turn agents and code RL.

Run from the worktree root:
    .venv/bin/python evals/holdout25/make_holdout25.py           # writes runs/ (gitignored) and holdout25.yaml
    .venv/bin/python evals/holdout25/make_holdout25.py --check   # also prints levels and rollback windows

Every case is a story told as noise-free levels per optimiser step (the headline, the evals, the side signals),
drawn through this set's own noise model and written the way one framework and version writes it. Labels come
from the stories (DESIGN.md, "What the three decisions mean"), never from a tool.

Noise model (this set's own):
  * binary rewards: each logged batch holds P prompts whose solve rates are Beta(kappa*p, kappa*(1-p)), G rollouts
    each drawn Bernoulli; mean, std, within-group std, zero-std share and all-0 / all-1 shares come from the same
    draws. A rollout can also be zeroed by an outside failure (timeouts, a broken sandbox) with its own rate;
  * unit-test rewards: a rollout passes Binomial(n_tests, q) of its tests, q per prompt as above (partial credit);
  * learned reward-model scores: level + prompt offset N(0, sd_prompt) + sample noise N(0, sd_sample);
  * trainers that average over the logging interval (TRL, hand loops) log the mean of those batches; OpenRLHF,
    verl and NeMo-RL log the step's own batch;
  * evals: Binomial(N, p)/N (judge win rates too); mean@k evals draw a per-problem rate and k samples;
  * side signals: AR(1)-correlated noise (log-normal for positive signals, additive for signed ones), counts and
    rates as binomial fractions, grad norms log-normal with a Pareto spike on about one log in forty.

Rollback windows: from the first logged headline step whose noise-free level is within one sampling sd of the
best level (sd of one eval, or of one logged batch mean for a train headline) to the newest such step not after
the onset of the breakage. `--check` prints them with the levels.
"""

from __future__ import annotations

import csv
import json
import math
import os
import re
import shutil
import sqlite3
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import holdout_kit
from holdout_kit import HEALTHY, Case, converged, dump_json, rollback, stop, stop_or_rollback, tb_file, trainer_state

HERE = Path(__file__).resolve().parent
NOW = time.time()
Level = Callable[[float], float]


# ------------------------------------------------------------------------------------------------------ level shapes

def pw(*pts: tuple[float, float]) -> Level:
    """Piecewise linear through the given (step, value) points, flat outside them."""
    xs = [p[0] for p in pts]
    ys = [p[1] for p in pts]
    return lambda s: float(np.interp(s, xs, ys))


def flat(v: float) -> Level:
    return lambda s: float(v)


def rise(a: float, b: float, tau: float, s0: float = 0.0) -> Level:
    """Starts at a, approaches b with time constant tau from step s0 on."""
    return lambda s: float(a if s <= s0 else a + (b - a) * (1.0 - math.exp(-(s - s0) / tau)))


def split(at: float, before: Level, after: Level) -> Level:
    return lambda s: before(s) if s <= at else after(s)


def warm_linear(peak: float, warm: int, total: int, floor: float = 0.0) -> Level:
    def lr(s: float) -> float:
        if s < warm:
            return peak * s / warm
        return floor + (peak - floor) * max(0.0, 1.0 - (s - warm) / max(1, total - warm))
    return lr


def warm_cosine(peak: float, warm: int, total: int, floor: float) -> Level:
    def lr(s: float) -> float:
        if s < warm:
            return peak * s / warm
        x = min(1.0, (s - warm) / max(1, total - warm))
        return floor + (peak - floor) * 0.5 * (1 + math.cos(math.pi * x))
    return lr


# ------------------------------------------------------------------------------------------------------ noise model

@dataclass
class Rw:
    """One reward component; the logged total is the weighted sum of the components' draws."""

    level: Level
    kind: str = "bin"  # bin | tests | rm
    weight: float = 1.0
    key: str | None = None  # framework key of this component's batch mean
    std_key: str | None = None
    kappa: float = 2.0
    n_tests: int = 5
    fail: Level | None = None  # share of rollouts zeroed by something outside the model
    sd_prompt: float = 0.5
    sd_sample: float = 1.0

    def expect(self, s: float) -> float:
        p = self.level(s)
        return p if self.kind == "rm" else p * (1.0 - (self.fail(s) if self.fail else 0.0))

    def var(self, s: float, P: int, G: int) -> float:
        if self.kind == "rm":
            return self.sd_prompt ** 2 / P + self.sd_sample ** 2 / (P * G)
        p = min(max(self.expect(s), 1e-4), 1 - 1e-4)
        k = self.kappa
        per = 1.0 if self.kind == "bin" else 1.0 / self.n_tests
        return p * (1 - p) / P * (1 / (k + 1) + k / ((k + 1) * G) * per)

    def sample(self, rng: np.random.Generator, s: float, P: int, G: int) -> tuple[np.ndarray, np.ndarray]:
        if self.kind == "rm":
            x = self.level(s) + rng.normal(0, self.sd_prompt, (P, 1)) + rng.normal(0, self.sd_sample, (P, G))
            return x, np.zeros((P, G), dtype=bool)
        p = min(max(self.level(s), 1e-4), 1 - 1e-4)
        q = rng.beta(self.kappa * p, self.kappa * (1 - p), size=(P, 1))
        if self.kind == "tests":
            x = rng.binomial(self.n_tests, np.broadcast_to(q, (P, G))) / self.n_tests
        else:
            x = rng.binomial(1, np.broadcast_to(q, (P, G))).astype(float)
        failed = rng.random((P, G)) < (self.fail(s) if self.fail else 0.0)
        x = np.where(failed, 0.0, x)
        return x, failed


@dataclass
class Sig:
    """A side signal: its level and how it is noisy."""

    level: Level
    noise: str = "mul"  # mul | add | heavy | exact | frac | cum
    sd: float = 0.05
    rho: float = 0.6
    n: int = 512
    nd: int | None = None  # round to nd decimals (0: an int)
    gate: Level | None = None  # multiplies the drawn value (e.g. exactly 0 once updates stop)

    def draw(self, rng: np.random.Generator, s: float, state: dict, key: str, span: int) -> float:
        lvl = self.level(s)
        z = rng.normal()
        if self.noise in ("mul", "add"):
            e = state.get(key, rng.normal())
            e = self.rho * e + math.sqrt(1 - self.rho ** 2) * z
            state[key] = e
            v = lvl * math.exp(self.sd * e) if self.noise == "mul" else lvl + self.sd * e
        elif self.noise == "heavy":
            v = lvl * math.exp(self.sd * z)
            if rng.random() < 1 / 40:
                v *= 1.0 + min(40.0, 2.5 * rng.pareto(1.3))
        elif self.noise == "frac":
            v = rng.binomial(self.n, min(max(lvl, 0.0), 1.0)) / self.n
        elif self.noise == "cum":
            state[key] = state.get(key, 0.0) + lvl * span * math.exp(0.03 * z)
            v = state[key]
        else:
            v = lvl
        if self.gate is not None:
            v *= self.gate(s)
        if self.nd is not None:
            v = round(v) if self.nd == 0 else round(v, self.nd)
        return float(v) if not isinstance(v, int) else v


def mul(level: Level, sd: float = 0.04, rho: float = 0.6, **kw) -> Sig:
    return Sig(level, "mul", sd, rho, **kw)


def add(level: Level, sd: float, rho: float = 0.5, **kw) -> Sig:
    return Sig(level, "add", sd, rho, **kw)


def gn(level: Level, sd: float = 0.3, **kw) -> Sig:
    return Sig(level, "heavy", sd, **kw)


def ex(level: Level | float, **kw) -> Sig:
    return Sig(level if callable(level) else flat(level), "exact", **kw)


def fr(level: Level, n: int, **kw) -> Sig:
    return Sig(level, "frac", n=n, **kw)


def cum(level: Level, **kw) -> Sig:
    return Sig(level, "cum", **kw)


@dataclass
class Ev:
    level: Level
    n: int
    k: int = 1  # samples per problem (mean@k)
    kappa: float = 1.5

    def draw(self, rng: np.random.Generator, s: float) -> float:
        p = min(max(self.level(s), 1e-4), 1 - 1e-4)
        if self.k == 1:
            return rng.binomial(self.n, p) / self.n
        q = rng.beta(self.kappa * p, self.kappa * (1 - p), self.n)
        return float(rng.binomial(self.k, q).mean() / self.k)

    def sd(self, p: float) -> float:
        f = 1.0 if self.k == 1 else 1 / (self.kappa + 1) + self.kappa / ((self.kappa + 1) * self.k)
        return math.sqrt(p * (1 - p) / self.n * f)


@dataclass
class Plot:
    """One run's story: rewards, side signals, evals, and which one is the headline ('' = the train reward)."""

    rewards: list[Rw]
    stats: dict[str, str]  # batch statistic -> framework key (mean std gstd zero max min pct0 pct1 pctmix full failfrac)
    P: int
    G: int
    side: dict[str, Sig] = field(default_factory=dict)
    evals: dict[str, Ev] = field(default_factory=dict)
    eval_side: dict[str, Sig] = field(default_factory=dict)
    eval_every: int = 0
    eval_at0: bool = False
    eval_from: int = 0
    headline: str = ""
    log_every: int = 1
    avg: bool = True
    derived: list[tuple[str, Callable[[dict, int], float]]] = field(default_factory=list)
    eval_derived: list[tuple[str, Callable[[dict], float]]] = field(default_factory=list)
    absent: Callable[[int], set] | None = None

    def log_points(self, reached: int) -> list[int]:
        return list(range(self.log_every, reached + 1, self.log_every))

    def eval_points(self, reached: int) -> list[int]:
        if not self.evals:
            return []
        start = 0 if self.eval_at0 else (self.eval_from or self.eval_every)
        return list(range(start, reached + 1, self.eval_every))

    def head_level(self) -> Level:
        if self.headline:
            return self.evals[self.headline].level
        return lambda s: sum(r.weight * r.expect(s) for r in self.rewards)

    def head_steps(self, reached: int) -> list[int]:
        return self.eval_points(reached) if self.headline else self.log_points(reached)

    def head_sd(self, s: float) -> float:
        if self.headline:
            return self.evals[self.headline].sd(self.head_level()(s))
        n = self.log_every if self.avg else 1
        return math.sqrt(sum(r.weight ** 2 * r.var(s, self.P, self.G) for r in self.rewards) / n)


def batch(plot: Plot, rng: np.random.Generator, s: int) -> dict:
    out: dict[str, float] = {}
    total = np.zeros((plot.P, plot.G))
    failed = np.zeros((plot.P, plot.G), dtype=bool)
    top = sum(r.weight for r in plot.rewards)
    for r in plot.rewards:
        x, f = r.sample(rng, s, plot.P, plot.G)
        failed |= f
        if r.key:
            out[r.key] = float(x.mean())
        if r.std_key:
            out[r.std_key] = float(x.std(ddof=1))
        total += r.weight * x
    gstd = total.std(axis=1, ddof=1) if plot.G > 1 else np.zeros(plot.P)
    same = gstd < 1e-9 if plot.G > 1 else np.zeros(plot.P, dtype=bool)
    stat = dict(mean=total.mean(), std=total.std(ddof=1), gstd=gstd.mean(), zero=same.mean(),
                max=total.max(), min=total.min(),
                pct0=100 * (same & (total[:, 0] <= 0)).mean(), pct1=100 * (same & (total[:, 0] >= top)).mean(),
                full=(total >= top - 1e-9).mean(), failfrac=failed.mean())
    stat["pctmix"] = 100 - stat["pct0"] - stat["pct1"]
    for k, key in plot.stats.items():
        out[key] = float(stat[k])
    return out


def draw(plot: Plot, reached: int, rng: np.random.Generator) -> dict:
    train, state = [], {}
    for s in plot.log_points(reached):
        span = [j for j in range(s - plot.log_every + 1, s + 1) if j >= 1] if plot.avg else [s]
        bs = [batch(plot, rng, j) for j in span]
        row = {k: float(np.mean([b[k] for b in bs])) for k in bs[0]}
        for k, sig in plot.side.items():
            row[k] = sig.draw(rng, s, state, k, plot.log_every)
        for k, fn in plot.derived:
            row[k] = fn(row, s)
        if plot.absent:
            for k in plot.absent(s):
                row.pop(k, None)
        train.append((s, row))
    evals, estate = [], {}
    for s in plot.eval_points(reached):
        row = {k: ev.draw(rng, s) for k, ev in plot.evals.items()}
        for k, sig in plot.eval_side.items():
            row[k] = sig.draw(rng, s, estate, k, 1)
        for k, fn in plot.eval_derived:
            row[k] = fn(row)
        evals.append((s, row))
    return dict(train=train, evals=evals)


def window(plot: Plot, reached: int, onset: int) -> tuple[int, int]:
    lv, steps = plot.head_level(), plot.head_steps(reached)
    best_s = max(steps, key=lv)
    sd = plot.head_sd(best_s)
    good = [s for s in steps if lv(s) >= lv(best_s) - sd]
    return good[0], max(s for s in good if s <= onset)


# ------------------------------------------------------------------------------------------------------ writers

CONFIG_KEYS = {"learning_rate", "lr", "actor_lr", "critic_lr", "beta", "alpha", "mixture_coef", "epoch",
               "actor/lr", "critic/lr", "actor/kl_coef", "objective/kl_coef", "ppo/learning_rate", "train/lr",
               "train/wd", "actor/reward_kl_penalty_coeff", "episode"}


def f32(x: float, key: str = "") -> float:
    """What `.item()` of a float32 tensor gives: a double with float32 precision (config values stay as set)."""
    if not isinstance(x, float) or key in CONFIG_KEYS:
        return x
    return float(np.float32(x))


def g6(x: float) -> float:
    return float(f"{x:.6g}") if isinstance(x, float) else x


def tstamp(t: float, fmt: str = "%Y-%m-%d %H:%M:%S") -> str:
    return time.strftime(fmt, time.localtime(t))


def hms(sec: float) -> str:
    sec = int(sec)
    return f"{sec // 3600}:{sec % 3600 // 60:02d}:{sec % 60:02d}"


def bar(n: int, total: int, sps: float, desc: str = "") -> str:
    frac = n / total
    fill = int(10 * frac)
    part = "▏▎▍▌▋▊▉"[int(70 * frac) % 7] if fill < 10 and int(70 * frac) % 7 else ""
    body = ("█" * fill + part).ljust(10)
    return f"{desc}{int(100 * frac):3d}%|{body}| {n}/{total} [{hms(n * sps)}<{hms((total - n) * sps)}, {sps:.2f}s/it]"


def at(run: dict, s: float) -> float:
    """Wall time at which step s was logged (a relaunch after step g adds its downtime to everything up to g)."""
    down = sum(sec for g, sec in run.get("gaps", ()) if s <= g)
    return run["t_end"] - (run["reached"] - s) * run["sps"] - down


def merged_rows(run: dict, train_first: bool = True) -> dict[int, dict]:
    rows: dict[int, dict] = {}
    for s, v in run["train"]:
        rows.setdefault(s, {}).update(v)
    for s, v in run["evals"]:
        rows.setdefault(s, {}).update(v)
    return rows


# --- TRL / HF Trainer

def w_trl_ckpts(run: dict, folder: Path, *, save_every: int, keep: int | None = None, top: bool = False,
                logging_steps: int = 10, spe: int | None = None, eval_steps: int | None = None,
                eval_extra: dict | None = None, epochs: int = 1, model_file: str = "adapter_config.json") -> None:
    """HF output_dir: checkpoint-N/trainer_state.json (save_total_limit keeps the newest `keep`), and the
    top-level trainer_state.json only when the script calls save_state() at the end."""
    planned, reached, finished = run["planned"], run["reached"], run["finished"]
    spe = spe or planned
    rows = []
    for s, v in run["train"]:
        row = {k: (round(x, 4) if k == "loss" else f32(x, k)) for k, x in v.items()}
        row.update(epoch=s / spe, step=s)
        rows.append(row)
    for s, v in run["evals"]:
        row = {k: f32(x) for k, x in v.items()}
        row.update(eval_extra or {})
        row.update(epoch=s / spe, step=s)
        rows.append(row)
    rows.sort(key=lambda r: (r["step"], any(k.startswith("eval_") for k in r)))
    saves = list(range(save_every, reached + 1, save_every))
    if finished and reached not in saves:
        saves.append(reached)
    kept: list[int] = []
    for n in saves:
        st = trainer_state([r for r in rows if r["step"] <= n], n, planned, logging_steps, save_every, eval_steps,
                           n / spe, epochs, training_stop=finished and n == reached)
        ck = folder / f"checkpoint-{n}"
        dump_json(ck / "trainer_state.json", st)
        (ck / model_file).write_text('{"peft_type": "LORA", "r": 32, "lora_alpha": 64}\n'
                                     if model_file.startswith("adapter") else '{"model_type": "qwen2"}\n')
        (ck / "training_args.bin").write_bytes(b"\x80\x04\x95" + bytes(61))
        kept.append(n)
        if keep and len(kept) > keep:
            shutil.rmtree(folder / f"checkpoint-{kept.pop(0)}")
    if top:
        losses = [r["loss"] for r in rows if "loss" in r]
        final = dict(train_runtime=round(reached * run["sps"], 2), train_samples_per_second=0.41,
                     train_steps_per_second=round(1 / run["sps"], 3), total_flos=0.0,
                     train_loss=float(np.mean(losses)) if losses else 0.0,
                     epoch=reached / spe, step=reached)
        st = trainer_state([*rows, final], reached, planned, logging_steps, save_every, eval_steps, reached / spe,
                           epochs, training_stop=True)
        dump_json(folder / "trainer_state.json", st)


def hf_banner(run: dict, examples: int, per_device: int, total_batch: int, accum: int, params: str) -> list[str]:
    return ["***** Running training *****", f"  Num examples = {examples:,}", "  Num Epochs = 1",
            f"  Instantaneous batch size per device = {per_device}",
            f"  Total train batch size (w. parallel, distributed & accumulation) = {total_batch}",
            f"  Gradient Accumulation steps = {accum}", f"  Total optimization steps = {run['planned']:,}",
            f"  Number of trainable parameters = {params}"]


def w_trl_console(run: dict, folder: Path, *, name: str, head: list[str], spe: int, tqdm: bool,
                  first: tuple[str, ...] = ("loss", "grad_norm", "learning_rate")) -> None:
    """What a TRL script prints: the HF banner, then one dict per log (tqdm's ProgressCallback rounds epoch to 2
    places and shares the line with the bar; with disable_tqdm the PrinterCallback prints the raw dict)."""
    ev = dict(run["evals"])
    out = list(head)
    for s, v in run["train"]:
        d = {k: (round(v[k], 4) if k == "loss" else f32(v[k], k)) for k in first if k in v}
        d.update({k: f32(x, k) for k, x in v.items() if k not in d})
        d["epoch"] = round(s / spe, 2) if tqdm else s / spe
        lines = [str(d)]
        if s in ev:
            lines.append(str({**{k: f32(x) for k, x in ev[s].items()}, "epoch": d["epoch"]}))
        if tqdm:
            b = bar(s, run["planned"], run["sps"])
            lines[0] = f"{b}\r{' ' * len(b)}\r{lines[0]}"
        out.extend(lines)
    if run["finished"]:
        out.append(str({"train_runtime": round(run["reached"] * run["sps"], 1), "train_samples_per_second": 2.1,
                        "train_steps_per_second": round(1 / run["sps"], 3), "train_loss": 0.4312, "epoch": 1.0}))
    elif tqdm:
        out.append(bar(run["reached"], run["planned"], run["sps"]))
    (folder / name).write_text("\n".join(out) + "\n", encoding="utf-8")


# --- TensorBoard

def tb_events(run: dict, tp: str = "", ep: str = "", lo: int = 0, hi: int | None = None,
              eval_rename: Callable[[str], str] | None = None) -> list[tuple[float, int, dict]]:
    hi = run["reached"] if hi is None else hi
    evs = [(at(run, s), s, {tp + k: x for k, x in v.items()}) for s, v in run["train"] if lo <= s <= hi]
    for s, v in run["evals"]:
        if lo <= s <= hi:
            evs.append((at(run, s) + 20, s, {ep + (eval_rename(k) if eval_rename else k): x for k, x in v.items()}))
    evs.sort(key=lambda e: (e[0], e[1]))
    return evs


def tb_path(folder: Path, t0: float, host: str, pid: int) -> Path:
    return folder / f"events.out.tfevents.{int(t0)}.{host}.{pid}.0"


def w_tb(run: dict, folder: Path, *, sub: str, tp: str = "", ep: str = "", host: str = "gpu-node-07",
         pid: int = 51234, eval_rename: Callable[[str], str] | None = None, config: tuple[str, str] | None = None,
         torn: int = 0) -> None:
    evs = tb_events(run, tp, ep, eval_rename=eval_rename)
    tb_file(tb_path(folder / sub, evs[0][0] - 60, host, pid), evs, truncate=torn)
    if config:
        (folder / config[0]).parent.mkdir(parents=True, exist_ok=True)
        (folder / config[0]).write_text(config[1])


# --- verl

def verl_fmt(k: str, x: float | int, np2: bool) -> str:
    if isinstance(x, int):
        return str(x)
    if np2 and k not in CONFIG_KEYS and not k.startswith(("timing_s/", "perf/time")):
        return f"np.float64({x!r})"
    return repr(x)


def w_verl_console(run: dict, folder: Path, *, name: str, np2: bool, project: str, exp: str) -> None:
    """verl LocalLogger lines behind the Ray prefix, with the driver's banner and tqdm progress."""
    t0 = at(run, 0) - 300
    out = [f"{tstamp(t0)},412\tINFO worker.py:1888 -- Started a local Ray instance. View the dashboard at "
           "127.0.0.1:8265",
           f"(TaskRunner pid=38211) trainer.project_name={project} trainer.experiment_name={exp}",
           f"(TaskRunner pid=38211) Size of train dataloader: {run['planned']}, Size of val dataloader: 1",
           f"(TaskRunner pid=38211) Total training steps: {run['planned']}"]
    rows = merged_rows(run)
    for s in sorted(rows):
        vals = dict(rows[s])
        if s > 0:
            vals["training/global_step"] = s
            vals["training/epoch"] = 0
        body = " - ".join(f"{k}:{verl_fmt(k, x, np2)}" for k, x in vals.items())
        out.append(f"(TaskRunner pid=38211) step:{s} - {body}")
        if s > 0 and s % 10 == 0:
            out.append(f"Training Progress: {bar(s, run['planned'], run['sps'])}")
        if s > 0 and s % 100 == 0:
            out.append(f"(WorkerDict pid=39102) [Rank 0] Saved model to checkpoints/{project}/{exp}/"
                       f"global_step_{s}/actor")
    (folder / name).write_text("\n".join(out) + "\n", encoding="utf-8")


def w_verl_jsonl(run: dict, folder: Path, *, project: str, exp: str, torn: bool = False) -> None:
    """verl FileLogger: {"step": N, "data": {...}} per line, orjson-compact, NaN as null; a live file may end
    mid-line."""
    rows = merged_rows(run)
    lines = []
    for s in sorted(rows):
        data = {k: (None if isinstance(x, float) and not math.isfinite(x) else x) for k, x in rows[s].items()}
        if s > 0:
            data["training/global_step"] = s
        lines.append(json.dumps({"step": s, "data": data}, separators=(",", ":")))
    text = "\n".join(lines) + "\n"
    if torn:
        text = text[: len(text) - len(lines[-1]) // 3 - 1]
    p = folder / project / f"{exp}.jsonl"
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text, encoding="utf-8")


# --- OpenRLHF

def w_openrlhf_console(run: dict, folder: Path, *, name: str, args_line: str, eval_every: int,
                       restart: tuple[int, str] | None = None) -> None:
    """OpenRLHF driver log: '✨ Global step N: {...}' status dicts, 'Evaluation completed' lines, tqdm bars.
    With `restart` = (step, new args line) the job was relaunched from ckpt global_step<step> with the log
    appended."""
    ev = dict(run["evals"])
    out = [f"[{tstamp(at(run, 0) - 400)}] [INFO] {args_line}"]
    for s, v in run["train"]:
        if restart and s == restart[0] + 1:
        # the relaunch: downtime after the crash, then the new argument line and the checkpoint load
            out += [f"[{tstamp(at(run, s) - 400)}] [INFO] {restart[1]}",
                    f"[{tstamp(at(run, s) - 150)}] [INFO] Loaded the checkpoint: ckpt/checkpoints_ppo/"
                    f"global_step{restart[0]}, consumed_samples: {restart[0] * 128}"]
        d = {k: f32(x, k) for k, x in v.items()}
        out.append(f"Episode [1/1]: {bar(s, run['planned'], run['sps'])}")
        out.append(f"[{tstamp(at(run, s))}] [INFO] ✨ Global step {s}: {d}")
        if s in ev:
            out.append(f"[{tstamp(at(run, s) + 35)}] [INFO] Evaluation completed in 35.62s, global_step {s}, "
                       f"eval_metrics: { {k: f32(x) for k, x in ev[s].items()} }")
        if s % 100 == 0:
            out.append(f"[{tstamp(at(run, s) + 50)}] [INFO] Saving checkpoint ckpt/checkpoints_ppo/global_step{s}")
    (folder / name).write_text("\n".join(out) + "\n", encoding="utf-8")


# --- MLflow

def w_mlflow_files(run: dict, folder: Path, *, exp_id: str, exp_name: str, run_id: str, run_name: str,
                   params: dict) -> None:
    """MLflow file store as the HF callback fills it: raw keys, a '/' in a key makes nested folders."""
    ed = folder / "mlruns" / exp_id
    rd = ed / run_id
    for sub in ("params", "tags", "artifacts", "metrics"):
        (rd / sub).mkdir(parents=True, exist_ok=True)
    ms = lambda t: int(t * 1000)  # noqa: E731
    (ed / "meta.yaml").write_text(f"artifact_location: file:./mlruns/{exp_id}\ncreation_time: {ms(at(run, 0))}\n"
                                  f"experiment_id: '{exp_id}'\nlast_update_time: {ms(at(run, 0))}\n"
                                  f"lifecycle_stage: active\nname: {exp_name}\n")
    status = 3 if run["finished"] else 1
    end = ms(run["t_end"]) if run["finished"] else "null"
    (rd / "meta.yaml").write_text(f"artifact_uri: file:./mlruns/{exp_id}/{run_id}/artifacts\nend_time: {end}\n"
                                  f"entry_point_name: ''\nexperiment_id: '{exp_id}'\nlifecycle_stage: active\n"
                                  f"run_id: {run_id}\nrun_name: {run_name}\nrun_uuid: {run_id}\nsource_name: ''\n"
                                  f"source_type: 4\nsource_version: ''\nstart_time: {ms(at(run, 0))}\n"
                                  f"status: {status}\ntags: []\nuser_id: rl\n")
    (rd / "tags" / "mlflow.runName").write_text(run_name)
    (rd / "tags" / "mlflow.user").write_text("rl")
    for k, v in params.items():
        (rd / "params" / k).write_text(str(v))
    lines: dict[str, list[str]] = {}
    for s, v in run["train"]:
        for k, x in v.items():
            lines.setdefault(k, []).append(f"{ms(at(run, s))} {f32(x, k)!r} {s}")
    for s, v in run["evals"]:
        for k, x in v.items():
            lines.setdefault(k, []).append(f"{ms(at(run, s) + 40)} {f32(x)!r} {s}")
    for k, ls in lines.items():
        p = rd / "metrics" / k
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("\n".join(ls) + "\n")


MLFLOW_DDL = """
CREATE TABLE experiments (experiment_id INTEGER NOT NULL, name VARCHAR(256) NOT NULL, artifact_location
    VARCHAR(256), lifecycle_stage VARCHAR(32), creation_time BIGINT, last_update_time BIGINT,
    PRIMARY KEY (experiment_id), UNIQUE (name));
CREATE TABLE runs (run_uuid VARCHAR(32) NOT NULL, name VARCHAR(250), source_type VARCHAR(20), source_name
    VARCHAR(500), entry_point_name VARCHAR(50), user_id VARCHAR(256), status VARCHAR(9), start_time BIGINT,
    end_time BIGINT, deleted_time BIGINT, source_version VARCHAR(50), lifecycle_stage VARCHAR(20), artifact_uri
    VARCHAR(200), experiment_id INTEGER, PRIMARY KEY (run_uuid));
CREATE TABLE metrics (key VARCHAR(250) NOT NULL, value FLOAT NOT NULL, timestamp BIGINT NOT NULL, run_uuid
    VARCHAR(32) NOT NULL, step BIGINT DEFAULT '0' NOT NULL, is_nan BOOLEAN DEFAULT '0' NOT NULL,
    PRIMARY KEY (key, timestamp, step, run_uuid, value, is_nan));
CREATE TABLE latest_metrics (key VARCHAR(250) NOT NULL, value FLOAT NOT NULL, timestamp BIGINT, step BIGINT NOT
    NULL, is_nan BOOLEAN NOT NULL, run_uuid VARCHAR(32) NOT NULL, PRIMARY KEY (key, run_uuid));
CREATE TABLE params (key VARCHAR(250) NOT NULL, value VARCHAR(8000) NOT NULL, run_uuid VARCHAR(32) NOT NULL,
    PRIMARY KEY (key, run_uuid));
CREATE TABLE tags (key VARCHAR(250) NOT NULL, value VARCHAR(8000), run_uuid VARCHAR(32) NOT NULL,
    PRIMARY KEY (key, run_uuid));
"""


def w_mlflow_db(run: dict, folder: Path, *, exp_name: str, run_id: str, run_name: str, params: dict) -> None:
    """MLflow SQL store (sqlite:///mlflow.db, the default since 3.7), HF callback raw keys."""
    db = sqlite3.connect(folder / "mlflow.db")
    db.executescript(MLFLOW_DDL)
    ms = lambda t: int(t * 1000)  # noqa: E731
    db.execute("INSERT INTO experiments VALUES (0, 'Default', 'mlflow-artifacts:/0', 'active', ?, ?)",
               (ms(at(run, 0)) - 10 ** 8, ms(at(run, 0)) - 10 ** 8))
    db.execute("INSERT INTO experiments VALUES (3, ?, 'mlflow-artifacts:/3', 'active', ?, ?)",
               (exp_name, ms(at(run, 0)), ms(at(run, 0))))
    db.execute("INSERT INTO runs VALUES (?, ?, 'UNKNOWN', '', '', 'rl', ?, ?, ?, NULL, '', 'active', ?, 3)",
               (run_id, run_name, "FINISHED" if run["finished"] else "RUNNING", ms(at(run, 0)),
                ms(run["t_end"]) if run["finished"] else None, f"mlflow-artifacts:/3/{run_id}/artifacts"))
    for k, v in params.items():
        db.execute("INSERT INTO params VALUES (?, ?, ?)", (k, str(v), run_id))
    db.execute("INSERT INTO tags VALUES ('mlflow.runName', ?, ?)", (run_name, run_id))
    latest: dict[str, tuple] = {}
    recs = []
    for s, v in run["train"]:
        for k, x in v.items():
            recs.append((k, f32(x, k), ms(at(run, s)), run_id, s, 0))
    for s, v in run["evals"]:
        for k, x in v.items():
            recs.append((k, f32(x), ms(at(run, s) + 45), run_id, s, 0))
    db.executemany("INSERT INTO metrics VALUES (?, ?, ?, ?, ?, ?)", recs)
    for r in recs:
        latest[r[0]] = r
    for k, x, ts, rid, s, nan in latest.values():
        db.execute("INSERT INTO latest_metrics VALUES (?, ?, ?, ?, ?, ?)", (k, x, ts, s, nan, rid))
    db.commit()
    db.close()


# --- Trackio

def w_trackio(run: dict, folder: Path, *, project: str, name: str, config: dict) -> None:
    """Trackio 0.36: one SQLite file per project; one JSON blob per log call, keys after HF rewrite_logs."""
    db = sqlite3.connect(folder / f"{project}.db")
    db.executescript("""
    CREATE TABLE metrics (id INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT, timestamp TEXT NOT NULL,
        run_name TEXT NOT NULL, step INTEGER NOT NULL, metrics TEXT NOT NULL);
    CREATE TABLE configs (id INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT, run_name TEXT NOT NULL,
        config TEXT NOT NULL, created_at TEXT NOT NULL);
    CREATE TABLE system_metrics (id INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT, timestamp TEXT NOT NULL,
        run_name TEXT NOT NULL, metrics TEXT NOT NULL);
    CREATE INDEX idx_metrics_run_step ON metrics(run_name, step);
    """)
    rid = "r-7f3c2a91"
    iso = lambda t: time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int(t * 1e6) % 10 ** 6:06d}"  # noqa
    db.execute("INSERT INTO configs (run_id, run_name, config, created_at) VALUES (?, ?, ?, ?)",
               (rid, name, json.dumps(config), iso(at(run, 0))))
    rows = []
    for s, v in run["train"]:
        m = {"train/" + k: f32(x, k) for k, x in v.items()}
        m["train/global_step"] = s
        rows.append((at(run, s), s, m))
    for s, v in run["evals"]:
        m = {"eval/" + k.removeprefix("eval_"): f32(x) for k, x in v.items()}
        m["train/global_step"] = s
        rows.append((at(run, s) + 30, s, m))
    for t, s, m in sorted(rows, key=lambda r: r[0]):
        db.execute("INSERT INTO metrics (run_id, timestamp, run_name, step, metrics) VALUES (?, ?, ?, ?, ?)",
                   (rid, iso(t), name, s, json.dumps(m)))
    db.commit()
    db.close()


# --- W&B UI CSV export

def w_wandb_csv(run: dict, folder: Path, *, display: str, panels: list[str], step_shift: int = 0,
                budget: int = 500) -> None:
    """W&B panel 'Export CSV', one file per panel: Step, '<run> - <key>', '__MIN', '__MAX', bucketed to the
    panel's point budget."""
    for i, key in enumerate(panels):
        pts = [(s, v[key]) for s, v in run["train"] if key in v] + [(s, v[key]) for s, v in run["evals"] if key in v]
        pts.sort()
        b = max(1, math.ceil(len(pts) / budget))
        col = f"{display} - {key}"
        t = run["t_end"] + 600 + 37 * i
        fname = time.strftime("wandb_export_%Y-%m-%dT%H_%M_%S", time.localtime(t)) + f".{(i * 137) % 1000:03d}+01_00.csv"
        with (folder / fname).open("w", newline="") as fh:
            w = csv.writer(fh, quoting=csv.QUOTE_ALL)
            w.writerow(["Step", col, col + "__MIN", col + "__MAX"])
            for j in range(0, len(pts), b):
                chunk = pts[j:j + b]
                xs = [x for _, x in chunk]
                w.writerow([chunk[0][0] + step_shift, repr(f32(float(np.mean(xs)))), repr(f32(min(xs))),
                            repr(f32(max(xs)))])


# --- mtimes

def stamp(folder: Path, run: dict, overrides: dict[Path, float] | None = None) -> None:
    """Every file at the time it was last written: checkpoints at their step, the rest at the run's last write."""
    for p in sorted(folder.rglob("*"), key=lambda q: -len(q.parts)):
        rel = str(p.relative_to(folder))
        m = re.search(r"(?:checkpoint-|global_step_?)(\d+)", rel)
        if m:
            t = at(run, int(m.group(1))) + 30
        elif p.name in ("config.yaml", "config.json") or "/params/" in rel or "/tags/" in rel:
            t = at(run, 0) - 120  # written at launch
        else:
            t = run["t_end"]
        os.utime(p, (t, t))
    for p, t in (overrides or {}).items():
        os.utime(p, (t, t))
    os.utime(folder, (run["t_end"], run["t_end"]))


# ------------------------------------------------------------------------------------------------ shared side pieces

def step_sum(*keys: str) -> Callable[[dict, int], float]:
    return lambda r, s: float(sum(r[k] for k in keys if k in r))


def copy(key: str, scale: float = 1.0, plus: float = 0.0) -> Callable[[dict, int], float]:
    return lambda r, s: r[key] * scale + plus


ORLHF_TIMING = ("timing/generation", "timing/make_experience", "timing/ppo_train", "timing/broadcast")
VERL_TIMING = ("timing_s/gen", "timing_s/old_log_prob", "timing_s/ref", "timing_s/values", "timing_s/adv",
               "timing_s/update_critic", "timing_s/update_actor")
ZERO_CLIP = {k: ex(0.0) for k in ("clip_ratio/low_mean", "clip_ratio/low_min", "clip_ratio/high_mean",
                                  "clip_ratio/high_max", "clip_ratio/region_mean")}


def trl_lengths(mean: Level, cap: float, clipped: Level, n: int) -> dict[str, Sig]:
    return {"completions/mean_length": mul(mean, .03), "completions/min_length": add(lambda s: .12 * mean(s), 6, nd=0),
            "completions/max_length": ex(cap), "completions/clipped_ratio": fr(clipped, n)}


TRL_TERMINATED = [("completions/mean_terminated_length",
                   lambda r, s: r["completions/mean_length"] * (1 - 0.6 * r["completions/clipped_ratio"])),
                  ("completions/min_terminated_length", copy("completions/min_length")),
                  ("completions/max_terminated_length",
                   lambda r, s: r["completions/max_length"] - (1 if r["completions/clipped_ratio"] > 0 else 0))]


def online_dpo_side(kl: Level, ent: Level, margin_rm: Level, chosen: Level, margins: Level, acc: Level,
                    lp_c: Level, lp_r: Level, eos: Level, loss: Level, gnorm: Level, lr: Level, n: int) -> dict:
    return {"loss": add(loss, .012, .2), "grad_norm": gn(gnorm), "learning_rate": ex(lr),
            "objective/kl": mul(kl, .08), "objective/entropy": mul(ent, .03),
            "rewards/chosen": add(chosen, .04), "rewards/margins": mul(margins, .1),
            "rewards/accuracies": fr(acc, n), "logps/chosen": add(lp_c, 4), "logps/rejected": add(lp_r, 4),
            "val/contain_eos_token": fr(eos, 2 * n), "beta": ex(.1), "objective/scores_margin": mul(margin_rm, .06)}


ONLINE_DPO_DERIVED = [("objective/non_score_reward", lambda r, s: -.1 * r["objective/kl"]),
                      ("objective/rlhf_reward", lambda r, s: r["objective/scores"] - .1 * r["objective/kl"]),
                      ("rewards/rejected", lambda r, s: r["rewards/chosen"] - r["rewards/margins"])]
ONLINE_DPO_ORDER = ("loss", "grad_norm", "learning_rate", "objective/kl", "objective/entropy",
                    "objective/non_score_reward", "rewards/chosen", "rewards/rejected", "rewards/accuracies",
                    "rewards/margins", "logps/chosen", "logps/rejected", "val/contain_eos_token", "beta",
                    "objective/rlhf_reward", "objective/scores_margin", "objective/scores")
XPO_ORDER = ("loss", "grad_norm", "learning_rate", "loss/dpo", "loss/xpo", "objective/kl", "objective/entropy",
             "objective/model_scores", "objective/ref_scores", "objective/scores_margin", "rewards/chosen",
             "rewards/rejected", "rewards/accuracies", "rewards/margins", "logps/chosen", "logps/rejected",
             "val/model_contain_eos_token", "val/ref_contain_eos_token", "alpha", "beta")


def openrlhf_derived(prompt_len: float, kl_coef: float) -> list:
    return [("return", lambda r, s: r["reward"] - kl_coef * r["kl"] * r["response_length"]),
            ("total_length", copy("response_length", plus=prompt_len)),
            ("rollout/reward_mean", copy("reward")),
            ("rollout/response_length_mean", copy("response_length")),
            ("rollout/truncated_rate", copy("truncated")),
            ("timing/step_total", step_sum(*ORLHF_TIMING))]


# ------------------------------------------------------------------------------------------------ custom writers

def w_code_jsonl(run: dict, folder: Path) -> None:
    """A hand-written code-RL loop: logs/metrics.jsonl (train every 10 steps, eval rows marked split=eval)."""
    (folder / "logs").mkdir(parents=True, exist_ok=True)
    (folder / "config.yaml").write_text("model: Qwen/Qwen2.5-Coder-7B-Instruct\nalgo: grpo\ntotal_steps: 3000\n"
                                        "prompts_per_step: 32\nsamples_per_prompt: 8\nreward: fraction_of_tests_passed"
                                        "\nsandbox:\n  timeout_s: 6\n  workers: 64\nlog_every: 10\neval_every: 100\n")
    rows = [(s, 0, {"step": s, "total_steps": run["planned"], "time": round(at(run, s), 1),
                    **{k: g6(x) for k, x in v.items()}}) for s, v in run["train"]]
    rows += [(s, 1, {"step": s, "split": "eval", "time": round(at(run, s) + 90, 1),
                     **{k: round(x, 4) for k, x in v.items()}}) for s, v in run["evals"]]
    rows.sort(key=lambda r: (r[0], r[1]))
    (folder / "logs" / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for _, _, r in rows))


def w_agent_jsonl(run: dict, folder: Path) -> None:
    """A hand-written multi-turn agent RL loop (leave-one-out REINFORCE): one JSON object per log."""
    d = folder / "agent_rl"
    d.mkdir(parents=True, exist_ok=True)
    (d / "config.json").write_text(json.dumps({"policy": "Qwen3-8B", "estimator": "rloo", "tasks_per_iter": 64,
                                               "episodes_per_task": 4, "max_turns": 12, "total_iterations":
                                               run["planned"], "log_every": 5, "eval_every": 50,
                                               "eval_tasks": 300, "lr": 2e-6}, indent=1) + "\n")
    rows = [(s, 0, {"iter": s, "split": "train", "wall": round(at(run, s), 2),
                    **{k: g6(x) for k, x in v.items()}}) for s, v in run["train"]]
    rows += [(s, 1, {"iter": s, "split": "eval", "wall": round(at(run, s) + 60, 2),
                     **{k: round(x, 4) for k, x in v.items()}}) for s, v in run["evals"]]
    rows.sort(key=lambda r: (r[0], r[1]))
    (d / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for _, _, r in rows))


def w_ppo_csv(run: dict, folder: Path) -> None:
    """A plain PyTorch PPO loop: metrics.csv, one row per update, eval_acc filled every 50 updates."""
    ev = dict(run["evals"])
    cols = ["step", "total_steps", "reward_mean", "reward_std", "kl", "entropy", "value_loss", "explained_var",
            "adv_mean", "adv_std", "ret_mean", "approx_kl", "clipfrac", "vf_clipfrac", "grad_norm", "lr", "eval_acc"]
    with (folder / "metrics.csv").open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(cols)
        for s, v in run["train"]:
            row = [s, run["planned"]] + [f"{v[c]:.6g}" for c in cols[2:-1]]
            row.append(f"{ev[s]['eval_acc']:.4f}" if s in ev else "")
            w.writerow(row)
    (folder / "train.out").write_text(
        f"[{tstamp(at(run, 0))}] ppo: policy=Qwen2.5-1.5B-Instruct value_head=separate gae_lambda=0.95 "
        f"cliprange=0.2 cliprange_value=0.2 total_steps={run['planned']}\n"
        + "".join(f"[{tstamp(at(run, s))}] step {s}/{run['planned']} eval_acc={ev[s]['eval_acc']:.4f} "
                  f"saved ckpt/ppo_step{s}.pt\n" for s in sorted(ev) if s % 250 == 0)
        + f"[{tstamp(run['t_end'])}] training finished: {run['planned']} steps, final weights ckpt/ppo_final.pt\n")


def w_tb_relaunch(run: dict, folder: Path, *, sub: str, relaunch: int, host: str, pids: tuple[int, int]) -> dict:
    """OpenRLHF TensorBoard across a relaunch from a checkpoint: the new SummaryWriter opens a second event file
    in the same run folder and carries on from relaunch+1."""
    evs = tb_events(run, "train/", "eval/")
    first = [e for e in evs if e[1] <= relaunch]
    second = [e for e in evs if e[1] > relaunch]
    p1 = tb_file(tb_path(folder / sub, first[0][0] - 60, host, pids[0]), first)
    p2 = tb_file(tb_path(folder / sub, second[0][0] - 200, host, pids[1]), second)
    return {p1: first[-1][0] + 5, p2: run["t_end"]}


def w_hf_tb_resumed(run: dict, folder: Path, ghost: Plot, resume: int, crash: int, gap_h: float) -> dict:
    """HF TensorBoard of a job that crashed at `crash`, was relaunched from checkpoint-`resume` with a new config
    `gap_h` hours later: a second runs/<date>_<host> folder that logs resume+1.. again."""
    g = draw(ghost, crash, np.random.default_rng(run["seed"] + 1))
    relaunch = at(run, resume)
    t_first = lambda s: relaunch - gap_h * 3600 - (crash - s) * run["sps"]  # noqa: E731
    first = [(t_first(s), s, {"train/" + k: x for k, x in v.items()}) for s, v in run["train"] if s <= resume]
    first += [(t_first(s), s, {"train/" + k: x for k, x in v.items()}) for s, v in g["train"] if resume < s <= crash]
    second = [(at(run, s), s, {"train/" + k: x for k, x in v.items()}) for s, v in run["train"] if s > resume]
    d1 = folder / "runs" / time.strftime("%b%d_%H-%M-%S_gpu-a100-03", time.localtime(t_first(0)))
    d2 = folder / "runs" / time.strftime("%b%d_%H-%M-%S_gpu-a100-03", time.localtime(relaunch - 90))
    p1 = tb_file(tb_path(d1, t_first(0), "gpu-a100-03", 20331), first)
    p2 = tb_file(tb_path(d2, relaunch - 90, "gpu-a100-03", 7718), second)
    return {p1: t_first(crash), d1: t_first(crash), p2: run["t_end"]}


# ------------------------------------------------------------------------------------------------------- the cases

@dataclass
class Spec:
    name: str
    plot: Plot
    write: Callable[[dict, Path], dict | None]
    seed: int
    steps: int | tuple[int, int]
    kind: str  # ok | conv | stop | sor | rb
    tags: str
    why: str
    onset: int | None = None
    age_min: float = 5.0
    sps: float = 60.0
    finished: bool = False
    shift: int = 0  # logged step = story step + shift (a W&B _step that counts from 0)
    gaps: tuple = ()  # (step, seconds): the job was down for that long after that step

    @property
    def reached(self) -> int:
        return self.steps[0] if isinstance(self.steps, tuple) else self.steps

    def case(self) -> Case:
        if self.kind == "ok":
            labels = dict(HEALTHY)
        elif self.kind == "conv":
            labels = converged()
            labels["onset_step"] = self.onset
        elif self.kind == "stop":
            labels = stop(self.onset)
        else:
            assert self.onset is not None
            lo, hi = window(self.plot, self.reached, self.onset)
            lo, hi, on = lo + self.shift, hi + self.shift, self.onset + self.shift
            labels = rollback(lo, hi, on) if self.kind == "rb" else stop_or_rollback(lo, hi, on)
        return Case(self.name, self.plot, self.write, self.seed, self.steps, labels, self.tags, self.why)


def bind(fn: Callable, **kw) -> Callable[[dict, Path], dict | None]:
    return lambda run, folder: fn(run, folder, **kw)


SPECS: list[Spec] = []


def spec(*args, **kw) -> None:
    SPECS.append(Spec(*args, **kw))


# ======================================================================================== healthy look-alikes (10)

# H1. OpenRLHF REINFORCE++: KL folded into the reward makes `return` sink while reward and pass@1 rise.
_kl, _ln = pw((0, .001), (450, .045)), pw((0, 520), (450, 650))
spec("ok-reinforcepp-return-sinks-under-kl-shaping-reward-and-math500-rise-openrlhf010-console-live-30pct",
     Plot([Rw(rise(.34, .60, 500), kappa=1.5)], dict(mean="reward", std="rollout/reward_std"), P=128, G=4, avg=False,
          side={"policy_loss": add(flat(0.0), .02), "kl": mul(_kl, .06), "logprobs_diff": add(_kl, .003),
                "response_length": mul(_ln, .03), "truncated": fr(pw((0, .01), (450, .025)), 512),
                "actor_lr": ex(lambda s: 5e-7 * min(1.0, s / 20)), "actor_grad_norm": gn(flat(.18)),
                "ppo_clip_ratio": mul(flat(.0009), .3), "ppo_kl": add(flat(0.0), 2e-4), "vllm_kl": mul(flat(.0012), .1),
                "rollout/num_samples": ex(512, nd=0), "timing/generation": mul(pw((0, 95), (450, 118)), .05),
                "timing/make_experience": mul(flat(28), .05), "timing/ppo_train": mul(flat(41), .04),
                "timing/broadcast": mul(flat(6.5), .05)},
          derived=openrlhf_derived(183, .01),
          evals={"eval_math500_pass1": Ev(rise(.36, .70, 700), 500), "eval_math500_pass4": Ev(rise(.55, .84, 700), 500)},
          eval_side={"eval_math500_response_length_mean": mul(pw((0, 540), (450, 660)), .03),
                     "eval_math500_truncated_rate": fr(flat(.02), 500)},
          eval_every=25, headline="eval_math500_pass1"),
     bind(w_openrlhf_console, name="train_reinforce_pp.log", eval_every=25,
          args_line="Namespace(pretrain='Qwen/Qwen2.5-Math-7B', advantage_estimator='reinforce', init_kl_coef=0.01, "
                    "use_kl_loss=False, kl_estimator='k1', n_samples_per_prompt=4, rollout_batch_size=128, "
                    "train_batch_size=512, actor_learning_rate=5e-07, num_episodes=1, max_samples=192000, "
                    "generate_max_len=4096, eval_steps=25, save_steps=100, logging_steps=1)"),
     3501, (450, 1500), "ok", "healthy openrlhf console reinforce++ kl-in-reward return-falls live early",
     "OpenRLHF 0.10 REINFORCE++ on math with the KL folded into the reward (init_kl_coef 0.01, k1), 128 prompts x 4 "
     "samples per step, live at step 450 of 1500 (newest line 2 minutes old). The logged `return` sinks from ~0.33 "
     "to ~0.20 because the per-token KL (0.001 -> 0.045) times ~650 response tokens is subtracted from the reward: "
     "that is the shaping, not a decline. The raw reward rises 0.34 -> 0.49, and MATH-500 pass@1 0.36 -> 0.52 "
     "(N=500, sd 0.022) with +0.04 over the last 150 steps; pass@4 rises with it, truncation stays ~2%. Still "
     "improving with two thirds of the budget left: continue.",
     age_min=2, sps=95)

# H2. OpenRLHF PPO with the actor frozen for 50 steps: critic loss falls, then jumps when the actor starts.
spec("ok-openrlhf-ppo-actor-frozen-50-steps-critic-loss-jumps-at-51-settles-gsm8k-rising-tb-live-15pct",
     Plot([Rw(rise(.31, .62, 300, 50), kappa=2.0)], dict(mean="reward"), P=256, G=1, avg=False,
          side={"policy_loss": add(flat(0.0), .03),
                "critic_loss": mul(pw((0, .85), (50, .06), (56, .34), (120, .12), (300, .09)), .08),
                "values": add(pw((0, -.2), (50, .28), (300, .45)), .02),
                "kl": mul(lambda s: 0.0 if s <= 50 else .0004 + .02 * (s - 50) / 250, .05),
                "response_length": mul(pw((0, 260), (300, 235)), .03), "truncated": fr(flat(.004), 256),
                "actor_lr": ex(1e-6), "critic_lr": ex(lambda s: 9e-6 * min(1.0, s / 30)),
                "actor_grad_norm": gn(flat(.22)),
                "critic_grad_norm": gn(pw((0, 14), (50, 2), (56, 6), (120, 2.5), (300, 2)), .35),
                "ppo_clip_ratio": mul(flat(.012), .2), "ppo_kl": add(flat(0.0), 3e-4), "vllm_kl": mul(flat(.001), .1),
                "timing/generation": mul(flat(48), .05), "timing/make_experience": mul(flat(22), .05),
                "timing/ppo_train": mul(lambda s: 15 if s <= 50 else 31, .05),
                "timing/broadcast": mul(lambda s: .02 if s <= 50 else 5.2, .05)},
          derived=openrlhf_derived(140, .02),
          absent=lambda s: {"policy_loss", "actor_lr", "actor_grad_norm", "ppo_clip_ratio", "ppo_kl"} if s <= 50
          else set(),
          evals={"eval_gsm8k_pass1": Ev(rise(.33, .63, 280, 50), 1319)}, eval_every=20, headline="eval_gsm8k_pass1"),
     bind(w_tb, sub="tb/qwen25-3b-ppo-gae-freeze50", tp="train/", ep="eval/", host="dgx-b-12", pid=88213),
     3502, (300, 2000), "ok", "healthy openrlhf tensorboard ppo critic-warmup freezing-actor live early",
     "OpenRLHF 0.11 PPO with a critic (GAE) and --freezing_actor_steps 50: for 50 steps only the critic trains, so "
     "the actor keys are absent, KL is exactly 0 and the reward sits at 0.31 while critic_loss falls 0.85 -> 0.06. "
     "When the actor starts at step 51 the returns shift and critic_loss jumps to ~0.34 (critic grad norm 2 -> 6), "
     "then settles to ~0.09 by step 300. That jump is the warm-up ending, not a failure: the reward rises 0.31 -> "
     "0.48 and GSM8K pass@1 0.33 -> 0.51 (N=1319, sd 0.014; +0.05 over the last 100 steps). Live at 300 of 2000: "
     "continue.",
     age_min=3, sps=70)

# H3. TRL 0.12 online DPO: implicit accuracy hovers at ~0.6 (pairs are the model's own) while RM score and the
# judge win rate climb.
spec("ok-online-dpo-implicit-acc-hovers-0.6-rm-score-and-judge-winrate-climb-trl012-console-printer-live-44pct",
     Plot([Rw(rise(.8, 3.0, 900), "rm", sd_prompt=.9, sd_sample=.8)], dict(mean="objective/scores"), P=128, G=2,
          log_every=10,
          side=online_dpo_side(pw((0, .2), (1100, 11)), pw((0, 96), (1100, 78)), pw((0, 1.1), (1100, 1.3)),
                               pw((0, .01), (1100, -.35)), pw((0, .02), (200, .2), (1100, .34)),
                               pw((0, .52), (150, .60), (1100, .61)), pw((0, -182), (1100, -236)),
                               pw((0, -188), (1100, -262)), pw((0, .97), (1100, .94)), pw((0, .693), (1100, .655)),
                               pw((0, 12), (1100, 7)), warm_linear(5e-7, 250, 2500), 1280),
          derived=ONLINE_DPO_DERIVED,
          evals={"eval_win_rate": Ev(rise(.5, .80, 900), 512)}, eval_every=100, headline="eval_win_rate"),
     lambda run, folder: w_trl_console(run, folder, name="online_dpo_qwen25_1.5b.out", spe=run["planned"], tqdm=False,
                                       first=ONLINE_DPO_ORDER,
                                       head=hf_banner(run, run["planned"] * 128, 8, 128, 2, "1,543,714,304")),
     2503, (1100, 2500), "ok", "healthy trl online-dpo console printer-callback judge-winrate live middle",
     "TRL 0.12 OnlineDPOTrainer against a learned RM, printed with disable_tqdm (PrinterCallback dicts, no step "
     "key; the banner gives 2,500 optimisation steps), live at step 1100. rewards/accuracies hovers at ~0.6 and the "
     "implicit margins stay small (0.2 -> 0.34) because each pair is two samples of the current policy: that is "
     "normal for online DPO, not a stall. The RM score rises 0.8 -> 2.4, objective/kl grows to ~11 nats with "
     "rlhf_reward still rising, EOS rate steady at ~0.94, and the WinRateCallback judge win rate vs the SFT model "
     "climbs 0.50 -> 0.71 (N=512, sd 0.02; +0.07 over the last 500 steps). Continue.",
     age_min=1, sps=24)

# H4. TRL 1.x Nash-MD: P(model beats mixture) pinned near 0.5 by construction while the win rate vs SFT rises.
_ch = rise(.2, 1.9, 900)
spec("ok-nash-md-prob-vs-mixture-pinned-0.52-winrate-vs-sft-rising-trl1x-checkpoints-only-limit3-live-40pct",
     Plot([Rw(_ch, "rm", sd_prompt=1.0, sd_sample=.7)], dict(mean="rewards/chosen"), P=64, G=1, log_every=10,
          side={"loss": add(pw((0, .02), (800, -.01)), .02), "grad_norm": gn(flat(3.2)),
                "learning_rate": ex(warm_linear(5e-7, 100, 2000)),
                "loss/kl": mul(pw((0, .1), (800, 6.5)), .06), "objective/entropy": mul(pw((0, 105), (800, 92)), .03),
                "loss/score": add(pw((0, 0), (800, -.04)), .02),
                "rewards/rejected": add(lambda s: _ch(s) - pw((0, .05), (800, .12))(s), .06),
                "rewards/probabilities": add(pw((0, .51), (800, .53)), .012),
                "rewards/accuracies": fr(pw((0, .52), (800, .56)), 640),
                "logps/chosen": add(pw((0, -210), (800, -236)), 5), "logps/rejected": add(pw((0, -205), (800, -212)), 5),
                "val/model_contain_eos_token": fr(flat(.95), 640), "val/ref_contain_eos_token": fr(flat(.95), 640),
                "beta": ex(.1), "mixture_coef": ex(.5)},
          derived=[("rewards/margins", lambda r, s: r["rewards/chosen"] - r["rewards/rejected"])],
          evals={"eval_win_rate": Ev(rise(.5, .74, 700), 400)}, eval_every=100, headline="eval_win_rate"),
     bind(w_trl_ckpts, save_every=100, keep=3, eval_steps=100, model_file="config.json"),
     3504, (800, 2000), "ok", "healthy trl nash-md checkpoints-only save-limit judge-winrate live",
     "TRL 1.x NashMDTrainer (mixture_coef 0.5, beta 0.1), checkpoint folders only (save every 100, limit 3: 600, "
     "700, 800), newest checkpoint-800 of max_steps 2000 written 6 minutes ago. rewards/probabilities (RM "
     "preference of the policy over the geometric mixture) sits at 0.51-0.53 the whole time: the mixture moves "
     "with the policy, so it cannot grow much and is not a learning signal. The RM score of the policy's "
     "completions rises 0.2 -> 1.2, loss/kl grows smoothly to 6.5, EOS rate steady, and the judge win rate vs the "
     "SFT model climbs 0.50 -> 0.66 (N=400, sd 0.024; +0.08 over the last 500 steps). Continue.",
     age_min=6, sps=30)

# H5. verl multi-turn search agent: turns per episode double as the agent learns to search more; success rises.
spec("ok-verl-multiturn-search-agent-turns-3-to-6-tool-calls-rise-success-and-val-rise-console-np2-live-55pct",
     Plot([Rw(rise(.28, .52, 500), kappa=1.2)],
          dict(mean="critic/score/mean", max="critic/score/max", min="critic/score/min"), P=256, G=5, avg=False,
          side={"actor/entropy": mul(pw((0, .55), (550, .47)), .03), "actor/kl_loss": mul(pw((0, .0005), (550, .012)), .08),
                "actor/kl_coef": ex(.001), "actor/pg_loss": add(flat(0.0), .01), "actor/pg_clipfrac": mul(flat(.004), .2),
                "actor/pg_clipfrac_lower": ex(0.0), "actor/ppo_kl": add(flat(0.0), 2e-4), "actor/grad_norm": gn(flat(.25)),
                "actor/lr": ex(1e-6), "critic/advantages/mean": add(flat(0.0), .002),
                "critic/advantages/max": add(flat(1.79), .01), "critic/advantages/min": add(flat(-1.79), .01),
                "response_length/mean": mul(pw((0, 610), (550, 980)), .03), "response_length/max": ex(4096),
                "response_length/min": add(flat(48), 6, nd=0),
                "response_length/clip_ratio": fr(pw((0, .02), (300, .055), (550, .045)), 1280),
                "num_turns/mean": mul(pw((0, 3.0), (550, 5.9)), .03),
                "num_turns/max": ex(lambda s: 8 if s < 120 else 10, nd=0), "num_turns/min": ex(2, nd=0),
                "timing_s/gen": mul(pw((0, 140), (550, 230)), .05), "timing_s/old_log_prob": mul(flat(14), .04),
                "timing_s/ref": mul(flat(13), .04), "timing_s/update_actor": mul(flat(41), .04)},
          derived=[("critic/rewards/mean", copy("critic/score/mean")),
                   ("tool_call_counts/mean", copy("num_turns/mean", plus=-1.0)),
                   ("timing_s/step", lambda r, s: step_sum(*VERL_TIMING)(r, s) + 9.0)],
          evals={"val-core/hotpotqa/reward/mean@1": Ev(rise(.30, .53, 450), 1000)},
          eval_side={"val-aux/num_turns/mean": mul(pw((0, 3.1), (550, 5.7)), .02)},
          eval_every=25, eval_at0=True, headline="val-core/hotpotqa/reward/mean@1"),
     bind(w_verl_console, name="search_r1_grpo.out", np2=True, project="search_r1",
          exp="qwen25-7b-it-grpo-multiturn"),
     2505, (550, 1000), "ok", "healthy verl console numpy2 multi-turn agent tool-use turns-grow live middle",
     "verl GRPO multi-turn search agent (sglang rollouts, max 10 turns), live at step 550 of 1000. Turns per "
     "episode grow 3.0 -> 5.9 and tool calls 2 -> 4.9, num_turns/max reaches the cap of 10 and responses grow "
     "610 -> 980 tokens with ~5% clipped: it looks like the loop-until-cap failure, but every extra search pays. "
     "The exact-match score rises 0.28 -> 0.44, and held-out HotpotQA (val-core, N=1000, sd 0.016) rises 0.30 -> "
     "0.46 with +0.03 over the last 150 steps; entropy declines gently 0.55 -> 0.47. Continue.",
     age_min=4, sps=180)

# H6. Hand-written code RL loop: sandbox timeouts creep 1% -> 6% as solutions get more ambitious.
spec("ok-code-rl-timeouts-creep-1-to-6pct-tests-passed-and-mbpp-plus-rise-custom-jsonl-live-60pct",
     Plot([Rw(rise(.44, .72, 1500), "tests", n_tests=8, kappa=1.2, fail=pw((0, .01), (1800, .06)))],
          dict(mean="reward/mean", std="reward/std", full="tests/all_pass", failfrac="sandbox/timeout_rate"),
          P=32, G=8, log_every=10,
          side={"sandbox/compile_error_rate": fr(pw((0, .05), (1800, .02)), 2560),
                "gen/len_mean": mul(pw((0, 380), (1800, 520)), .03), "kl": mul(pw((0, .0005), (1800, .035)), .06),
                "lr": ex(1e-6), "grad_norm": gn(flat(.4)), "loss": add(flat(0.0), .01)},
          derived=[("tests/pass_frac", lambda r, s: r["reward/mean"] / max(1e-6, 1 - r["sandbox/timeout_rate"]))],
          evals={"eval/mbpp_plus_pass1": Ev(pw((0, .46), (600, .55), (1200, .60), (1800, .645)), 378),
                 "eval/humaneval_plus_pass1": Ev(pw((0, .55), (1800, .68)), 164)},
          eval_every=100, eval_at0=True, headline="eval/mbpp_plus_pass1"),
     w_code_jsonl, 7506, (1800, 3000), "ok", "healthy custom jsonl code-rl unit-tests partial-credit timeouts live",
     "Hand-written GRPO loop for code, reward = fraction of unit tests passed (8 per problem), a sandbox timeout "
     "scores 0. Live at step 1800 of 3000. sandbox/timeout_rate creeps 0.01 -> 0.06 (the policy tries heavier "
     "solutions on hard problems) and looks like a sandbox going bad, but compile errors fall, the pass fraction "
     "rises 0.44 -> ~0.62 and all-tests-pass rises with it; MBPP+ pass@1 (N=378, sd 0.025) rises 0.46 -> 0.645, "
     "+0.045 over the last 600 steps, HumanEval+ (N=164) drifts up too. Still improving: continue.",
     age_min=3, sps=50)

# H7. Legacy TRL PPO (0.8) with TensorBoard: RM score and a judge win rate rise together while KL reaches 9 nats.
spec("ok-legacy-ppo-rm-score-and-judge-winrate-rise-together-kl-9-nats-adaptive-coef-trl08-tb-live",
     Plot([Rw(rise(-.4, 2.6, 550), "rm", sd_prompt=.9, sd_sample=1.1)],
          dict(mean="env/reward_mean", std="env/reward_std"), P=128, G=1, avg=False,
          side={"objective/kl": mul(pw((0, .05), (700, 9.0)), .06),
                "objective/kl_coef": ex(pw((0, .2), (300, .22), (700, .34))),
                "objective/entropy": mul(pw((0, 48), (700, 36)), .03),
                "ppo/loss/policy": add(flat(-.01), .015), "ppo/loss/value": mul(pw((0, .9), (100, .35), (700, .22)), .1),
                "ppo/policy/entropy": mul(pw((0, 2.1), (700, 1.7)), .03), "ppo/policy/approxkl": mul(flat(.004), .2),
                "ppo/policy/policykl": mul(flat(.0035), .2), "ppo/policy/clipfrac": mul(flat(.06), .12),
                "ppo/policy/advantages_mean": add(flat(0.0), .02),
                "ppo/returns/mean": add(pw((0, -.4), (700, 1.3)), .08), "ppo/returns/var": mul(flat(.8), .1),
                "ppo/val/vpred": add(pw((0, -.3), (700, 1.2)), .08), "ppo/val/error": mul(pw((0, 1.5), (700, .5)), .1),
                "ppo/val/clipfrac": mul(pw((0, .3), (700, .12)), .1),
                "ppo/val/var_explained": add(pw((0, -.1), (150, .35), (700, .55)), .05),
                "ppo/learning_rate": ex(1.41e-5), "tokens/queries_len_mean": mul(flat(22), .02),
                "tokens/responses_len_mean": mul(pw((0, 32), (700, 47)), .03), "time/ppo/total": mul(flat(31), .05)},
          derived=[("ppo/mean_scores", copy("env/reward_mean")),
                   ("ppo/mean_non_score_reward", lambda r, s: -r["objective/kl_coef"] * r["objective/kl"]),
                   ("ppo/loss/total", lambda r, s: r["ppo/loss/policy"] + .1 * r["ppo/loss/value"])],
          evals={"eval/judge_winrate": Ev(pw((0, .45), (250, .55), (500, .62), (700, .67)), 300)}, eval_every=50,
          headline="eval/judge_winrate"),
     bind(w_tb, sub="logs/trl", host="a6000-box", pid=3114),
     4507, (700, 1000), "ok", "healthy tensorboard trl-legacy-ppo learned-rm judge-winrate kl-large live",
     "TRL 0.8 legacy PPOTrainer (value head, adaptive KL controller, target 6) logging to TensorBoard through "
     "accelerate, with a judge win rate logged every 50 steps by the script. objective/kl is ~9 nats per sequence "
     "and the adaptive coef has risen 0.20 -> 0.34: large in absolute terms but the controller is holding it, "
     "not runaway. The RM score rises -0.4 -> 1.8 and, unlike over-optimisation, the judge win rate vs the SFT "
     "model rises with it, 0.45 -> 0.67 (N=300, sd 0.027; +0.05 over the last 200 steps). The critic is fine "
     "(explained variance 0.55, value error falling). Live at 700 of 1000 planned PPO steps: continue.",
     age_min=5, sps=40)

# H8. TRL 0.11 XPO: chosen log-probs slide steeply (likelihood displacement) while win rate rises.
spec("ok-xpo-logps-chosen-slide-150-to-310-model-scores-and-winrate-rise-trl011-checkpoints-live-35pct",
     Plot([Rw(rise(.3, 2.2, 800), "rm", sd_prompt=1.0, sd_sample=.8)], dict(mean="objective/model_scores"), P=64,
          G=1, log_every=10,
          side={"loss/dpo": add(pw((0, .693), (700, .62)), .01), "loss/xpo": add(pw((0, -.0021), (700, -.0034)), .0001),
                "objective/kl": mul(pw((0, .1), (700, 9)), .06), "objective/entropy": mul(pw((0, 110), (700, 96)), .03),
                "objective/ref_scores": add(flat(.28), .05), "objective/scores_margin": mul(pw((0, .6), (700, 1.2)), .06),
                "rewards/chosen": add(pw((0, 0), (700, -.6)), .04), "rewards/rejected": add(pw((0, 0), (700, -1.1)), .04),
                "rewards/accuracies": fr(pw((0, .53), (700, .68)), 640),
                "logps/chosen": add(pw((0, -150), (700, -310)), 6), "logps/rejected": add(pw((0, -160), (700, -345)), 6),
                "val/model_contain_eos_token": fr(pw((0, .97), (700, .92)), 640),
                "val/ref_contain_eos_token": fr(flat(.97), 640), "alpha": ex(1e-5), "beta": ex(.1),
                "grad_norm": gn(flat(9)), "learning_rate": ex(warm_linear(5e-7, 0, 2000))},
          derived=[("rewards/margins", lambda r, s: r["rewards/chosen"] - r["rewards/rejected"]),
                   ("loss", lambda r, s: r["loss/dpo"] + r["loss/xpo"])],
          evals={"eval_win_rate": Ev(rise(.5, .72, 600), 400)}, eval_every=100, headline="eval_win_rate"),
     bind(w_trl_ckpts, save_every=100, eval_steps=100),
     3508, (700, 2000), "ok", "healthy trl xpo checkpoints likelihood-displacement judge-winrate live",
     "TRL 0.11 XPOTrainer (alpha 1e-5, beta 0.1) with LoRA, checkpoint folders only (every 100, all kept), newest "
     "checkpoint-700 of 2000 written 8 minutes ago. logps/chosen slides -150 -> -310 and logps/rejected faster, "
     "which reads like DPO likelihood displacement, and EOS rate dips 0.97 -> 0.92. But the RM score of the "
     "policy's samples rises 0.3 -> 1.4 against a flat reference score (~0.28), implicit accuracy climbs 0.53 -> "
     "0.68, and the judge win rate vs SFT rises 0.50 -> 0.65 (N=400, sd 0.024; +0.045 over the last 300 steps). "
     "Continue.",
     age_min=8, sps=35)

# H9. TRL 1.x RLOO on code, early: compile reward saturates in 30 steps, unit tests lift slowly.
spec("ok-trl1x-rloo-code-compile-reward-saturates-unit-tests-lift-0.10-to-0.165-trackio-live-15pct",
     Plot([Rw(pw((0, .78), (30, .99), (300, .995)), weight=.2, key="rewards/compiles/mean",
              std_key="rewards/compiles/std", kappa=4),
           Rw(pw((0, .10), (300, .165)), "tests", key="rewards/unit_tests/mean", std_key="rewards/unit_tests/std",
              n_tests=5, kappa=.8)],
          dict(mean="reward", std="reward_std", zero="frac_reward_zero_std"), P=32, G=4, log_every=10,
          side={"kl": mul(pw((0, .0002), (300, .004)), .1), "entropy": mul(pw((0, .62), (300, .58)), .03),
                **trl_lengths(pw((0, 410), (300, 470)), 1024.0, flat(.03), 1280), **ZERO_CLIP,
                "num_tokens": cum(flat(128 * 650)), "step_time": mul(flat(58), .05), "grad_norm": gn(flat(.09)),
                "learning_rate": ex(warm_linear(1e-6, 30, 2000)), "loss": add(flat(0.0), .003)},
          derived=[*TRL_TERMINATED, ("epoch", lambda r, s: s / 2000)]),
     bind(w_trackio, project="rloo-code", name="qwen25-coder-3b-rloo-k4",
          config={"max_steps": 2000, "num_generations": 4, "beta": 0.05, "learning_rate": 1e-6, "logging_steps": 10,
                  "reward_funcs": ["compiles", "unit_tests"], "reward_weights": [0.2, 1.0], "_Username": "rl"}),
     2509, (300, 2000), "ok", "healthy trackio trl-rloo code-rl unit-tests reward-components live early",
     "TRL 1.x RLOOTrainer (k=4, beta 0.05 so kl is logged) for code, reward = 0.2 x compiles + fraction of 5 "
     "unit tests, logged to Trackio; live at step 300 of 2000, no eval yet. The compile component saturates at "
     "~0.99 within 30 steps and over half of the groups have zero reward spread, so the total looks flat after a "
     "fast start. The component that matters, rewards/unit_tests/mean, lifts 0.10 -> ~0.165 over 300 steps "
     "(about 4 logged-batch sd), kl small (0.004), lengths and clipping steady. Early and learning: continue.",
     age_min=2, sps=60)

# H10. verl PPO whose critic is mediocre (EV ~0.35, value clipping binds 40%) while the policy improves.
spec("ok-verl-ppo-critic-mediocre-ev-0.35-vf-clipfrac-0.4-score-and-gsm8k-rise-jsonl-torn-tail-live-45pct",
     Plot([Rw(rise(.45, .78, 500), kappa=2.5)],
          dict(mean="critic/score/mean", max="critic/score/max", min="critic/score/min"), P=512, G=1, avg=False,
          side={"critic/vf_loss": mul(pw((0, .09), (450, .07)), .12), "critic/vf_clipfrac": mul(flat(.40), .08),
                "critic/vpred_mean": add(pw((0, .3), (450, .55)), .02),
                "critic/vf_explained_var": add(pw((0, .05), (60, .3), (450, .36)), .06),
                "critic/grad_norm": gn(flat(4.5), .4), "critic/lr": ex(1e-5),
                "critic/advantages/mean": add(flat(0.0), .004), "critic/advantages/max": add(flat(4.2), .3),
                "critic/advantages/min": add(flat(-4.6), .3), "actor/entropy": mul(pw((0, .52), (450, .41)), .03),
                "actor/reward_kl_penalty": mul(pw((0, .0002), (450, .006)), .08),
                "actor/reward_kl_penalty_coeff": ex(.001), "actor/pg_loss": add(flat(0.0), .01),
                "actor/pg_clipfrac": mul(flat(.012), .15), "actor/pg_clipfrac_lower": mul(flat(.0002), .3),
                "actor/ppo_kl": add(flat(0.0), 3e-4), "actor/grad_norm": gn(flat(.3)), "actor/lr": ex(1e-6),
                "response_length/mean": mul(pw((0, 280), (450, 300)), .03),
                "response_length/clip_ratio": fr(flat(.006), 512),
                "timing_s/gen": mul(flat(31), .05), "timing_s/values": mul(flat(6), .05),
                "timing_s/update_critic": mul(flat(17), .05), "timing_s/update_actor": mul(flat(19), .05)},
          derived=[("critic/values/mean", copy("critic/vpred_mean")),
                   ("critic/returns/mean", lambda r, s: r["critic/score/mean"] - .3 * r["actor/reward_kl_penalty"]),
                   ("critic/rewards/mean", lambda r, s: r["critic/score/mean"] - r["actor/reward_kl_penalty"]),
                   ("timing_s/step", lambda r, s: step_sum(*VERL_TIMING)(r, s) + 6.0)],
          evals={"val-core/openai/gsm8k/acc/mean@1": Ev(rise(.47, .80, 480), 1319)}, eval_every=25, eval_at0=True,
          headline="val-core/openai/gsm8k/acc/mean@1"),
     bind(w_verl_jsonl, project="gsm8k_ppo", exp="qwen25-1.5b-gae-critic-lr1e-5", torn=True),
     2510, (450, 1000), "ok", "healthy verl jsonl ppo critic-mediocre value-clipping torn-tail live",
     "verl 0.6 PPO with a critic (GAE, KL in reward), file logger JSONL whose last line is half written (the run "
     "is writing; 1 minute old). The critic never gets good: explained variance hovers 0.3-0.4, value clipping "
     "binds on ~40% of tokens, critic grad norm is heavy-tailed. That looks like a broken critic, but it is "
     "steady, not diverging, and the policy improves through it: score 0.45 -> 0.65, GSM8K val acc 0.47 -> 0.67 "
     "(N=1319, sd 0.013; +0.05 over the last 150 steps), KL small. At 450 of 1000: continue.",
     age_min=1, sps=75)

# C1. NeMo-RL multi-turn sliding puzzle, converged near the end of its cosine schedule.
_nemo_cfg = ("grpo:\n  num_prompts_per_step: 64\n  num_generations_per_prompt: 8\n  max_num_steps: 2000\n"
             "  val_period: 50\n  val_at_start: true\n  max_rollout_turns: 20\npolicy:\n  model_name: Qwen/Qwen2.5-1.5B-"
             "Instruct\n  optimizer:\n    kwargs:\n      lr: 1.0e-06\n  scheduler: cosine\n  min_lr: 1.0e-07\n"
             "env:\n  sliding_puzzle_game:\n    cfg:\n      game_config:\n        size: 3\n        shuffle_moves: 6\n"
             "logger:\n  log_dir: logs\n  tensorboard_enabled: true\n")
spec("conv-nemo-multiturn-sliding-puzzle-validation-flat-0.61-since-1300-at-1880-of-2000-cosine-floor-tb",
     Plot([Rw(pw((0, .18), (600, .48), (1300, .585), (1880, .59)), kappa=1.5)],
          dict(mean="train/reward", pct0="train/baseline_reward/pct_0", pct1="train/baseline_reward/pct_1",
               pctmix="train/baseline_reward/pct_mixed"), P=64, G=8, avg=False,
          side={"train/loss": add(flat(0.0), .01), "train/grad_norm": gn(pw((0, .35), (1880, .2))),
                "train/lr": ex(warm_cosine(1e-6, 50, 2000, 1e-7)), "train/wd": ex(.01),
                "train/kl_penalty": mul(pw((0, .0002), (1300, .015), (1880, .018)), .06),
                "train/approx_entropy": mul(pw((0, .7), (1300, .45), (1880, .44)), .03),
                "train/avg_turns_per_sample": mul(pw((0, 9), (1300, 6.2), (1880, 6.1)), .02),
                "train/max_turns_per_sample": ex(20, nd=0),
                "train/truncation_rate": fr(pw((0, .35), (1300, .12), (1880, .11)), 512),
                "train/mean_gen_tokens_per_sample": mul(pw((0, 610), (1300, 420), (1880, 415)), .03),
                "train/mean_env_tokens_per_sample": mul(pw((0, 380), (1300, 260), (1880, 255)), .03),
                "train/token_mult_prob_error": mul(flat(1.006), .001),
                "timing/train/total_step_time": mul(flat(95), .05), "timing/train/generation": mul(flat(61), .06)},
          derived=[("train/natural_termination_rate", lambda r, s: 1 - r["train/truncation_rate"])],
          evals={"validation/accuracy": Ev(pw((0, .22), (600, .50), (1300, .605), (1880, .61)), 500)},
          eval_side={"validation/avg_length": mul(pw((0, 640), (1300, 430), (1880, 425)), .02)},
          eval_every=50, eval_at0=True, headline="validation/accuracy"),
     bind(w_tb, sub="logs/exp_004/tensorboard", host="nemo-rl-0", pid=40211, config=("config.yaml", _nemo_cfg)),
     4511, (1880, 2000), "conv", "converged nemo-rl tensorboard multi-turn agent cosine-tail live late",
     "NeMo-RL GRPO on the multi-turn sliding-puzzle environment (max 20 turns), live at step 1880 of 2000 "
     "(config.yaml), cosine lr now near its 1e-7 floor. Solve rate rose 0.18 -> 0.585 by step 1300 while turns "
     "per episode fell 9 -> 6.2 and truncation 0.35 -> 0.12; since 1300 everything is flat: validation accuracy "
     "0.605 -> 0.61 (N=500, sd 0.022), train reward ~0.59, entropy and turns steady. Nothing left to gain in the "
     "last 120 steps, nothing lost either: stopping now or letting it finish are both fine.",
     onset=1300, age_min=4, sps=110)


# ========================================================================================== stop / stop-or-rollback

# S1. TRL PPO (0.14, PPOv2 keys) against a learned RM: KL budget blown, RM score creeps, judge flat since 450.
spec("stop-trl014-ppo-kl-6-to-24-nats-rm-score-creeps-rlhf-reward-flat-judge-winrate-flat-since-450-mlflow-files",
     Plot([Rw(pw((0, .2), (450, 2.6), (950, 3.3)), "rm", sd_prompt=.9, sd_sample=1.0)], dict(mean="objective/scores"),
          P=64, G=1, avg=False,
          side={"eps": mul(flat(2.6), .05), "objective/kl": mul(pw((0, .1), (450, 6), (950, 24)), .05),
                "objective/entropy": mul(pw((0, 60), (950, 38)), .03), "policy/approxkl_avg": mul(flat(.006), .2),
                "policy/clipfrac_avg": mul(pw((0, .05), (950, .09)), .1), "loss/policy_avg": add(flat(-.005), .01),
                "loss/value_avg": mul(pw((0, .6), (200, .18), (950, .25)), .12), "val/clipfrac_avg": mul(flat(.12), .1),
                "policy/entropy_avg": mul(pw((0, 2.0), (950, 1.4)), .03), "val/ratio": add(flat(1.0), .004),
                "val/ratio_var": mul(flat(.0004), .3), "val/num_eos_tokens": add(pw((0, 62), (950, 58)), 1.2, nd=0),
                "lr": ex(warm_linear(3e-6, 0, 2000))},
          derived=[("objective/non_score_reward", lambda r, s: -.05 * r["objective/kl"]),
                   ("objective/rlhf_reward", lambda r, s: r["objective/scores"] - .05 * r["objective/kl"]),
                   ("episode", lambda r, s: s * 64), ("epoch", lambda r, s: s * 64 / 128000)],
          evals={"eval_judge_winrate": Ev(pw((0, .42), (450, .60), (950, .60)), 400)}, eval_every=50,
          headline="eval_judge_winrate"),
     bind(w_mlflow_files, exp_id="748219063", exp_name="ppo-tldr", run_id="3f9c0d1e27b84a5f9e61c0d2a7b45e18",
          run_name="ppo-pythia-1b-tldr-kl005",
          params={"total_episodes": 128000, "num_total_batches": 2000, "per_device_train_batch_size": 8,
                  "gradient_accumulation_steps": 8, "num_ppo_epochs": 4, "kl_coef": 0.05, "learning_rate": 3e-06,
                  "max_steps": -1, "logging_steps": 1, "response_length": 53, "reward_model_path":
                  "cleanrl/EleutherAI_pythia-1b-deduped__reward__tldr"}),
     2521, (950, 2000), "stop", "stop mlflow file-store trl-ppo learned-rm kl-budget judge-flat live",
     "TRL 0.14 PPOTrainer on TL;DR with a learned RM (kl_coef 0.05), MLflow file store with the HF callback's raw "
     "keys, live at batch 950 of 2000. Up to ~450 everything moves together: RM score 0.2 -> 2.6, judge win rate "
     "vs the SFT summaries 0.42 -> 0.60. Since then the RM score only creeps to 3.3 while objective/kl runs "
     "6 -> 24 nats, so the KL-shaped rlhf_reward is flat-to-down (~2.3 -> ~2.1), and the judge win rate is flat "
     "at 0.60 for 500 steps (N=400, sd 0.025), neither rising nor falling. Every step now buys KL and nothing "
     "else, and the current weights are as good as any: stop.",
     onset=450, age_min=6, sps=45)

# S2. TRL 0.16 online DPO, finished: judge win rate plateau since 1200, final at the best level.
spec("stop-finished-online-dpo-2000-of-2000-judge-winrate-plateau-since-1200-final-at-best-trl016-state",
     Plot([Rw(pw((0, .7), (1200, 2.4), (2000, 2.55)), "rm", sd_prompt=.9, sd_sample=.8)],
          dict(mean="objective/scores"), P=128, G=2, log_every=10,
          side=online_dpo_side(pw((0, .2), (1200, 9), (2000, 12)), pw((0, 92), (2000, 74)), pw((0, 1.0), (2000, 1.15)),
                               pw((0, 0), (2000, -.4)), pw((0, .02), (300, .22), (2000, .38)),
                               pw((0, .52), (200, .6), (2000, .62)), pw((0, -175), (2000, -228)),
                               pw((0, -180), (2000, -255)), pw((0, .97), (2000, .955)), pw((0, .693), (2000, .64)),
                               pw((0, 11), (2000, 6.5)), warm_linear(5e-7, 200, 2000), 1280),
          derived=ONLINE_DPO_DERIVED,
          evals={"eval_win_rate": Ev(pw((0, .5), (600, .62), (1200, .665), (2000, .67)), 512)}, eval_every=100,
          headline="eval_win_rate"),
     bind(w_trl_ckpts, save_every=500, keep=2, top=True, eval_steps=100, model_file="config.json"),
     6522, (2000, 2000), "stop", "stop finished trl online-dpo trainer-state top-level judge-winrate plateau",
     "TRL 0.16 OnlineDPOTrainer run that finished 9 hours ago (top-level trainer_state.json with the train summary "
     "row and should_training_stop, checkpoints 1500 and 2000 kept). The judge win rate vs SFT rose 0.50 -> 0.665 "
     "by step 1200 and then held 0.665-0.67 to the end (N=512, sd 0.021); the RM score crept 2.4 -> 2.55 and KL "
     "9 -> 12 over the same stretch. The final weights are at the best level: keep them, stop.",
     onset=1200, age_min=540, sps=28, finished=True)

# S3. NeMo-RL search agent whose retrieval index is empty: the agent learns to stop calling it; flat from the start.
_nemo_search_cfg = ("grpo:\n  num_prompts_per_step: 64\n  num_generations_per_prompt: 8\n  max_num_steps: 2000\n"
                    "  val_period: 50\n  val_at_start: true\n  max_rollout_turns: 6\npolicy:\n  model_name: Qwen/"
                    "Qwen3-4B\nenv:\n  search_qa:\n    retriever: bm25\n    index_path: /data/wiki18/bm25_index\n"
                    "    topk: 3\nlogger:\n  log_dir: logs\n  tensorboard_enabled: true\n")
spec("stop-nemo-search-agent-empty-index-tool-returns-nothing-turns-2.4-to-1-success-flat-0.33-tb-live",
     Plot([Rw(pw((0, .31), (60, .33), (700, .332)), kappa=1.5)],
          dict(mean="train/reward", pct0="train/baseline_reward/pct_0", pct1="train/baseline_reward/pct_1",
               pctmix="train/baseline_reward/pct_mixed"), P=64, G=8, avg=False,
          side={"train/loss": add(flat(0.0), .01), "train/grad_norm": gn(flat(.22)),
                "train/lr": ex(lambda s: 1e-6 * min(1.0, s / 20)), "train/wd": ex(.01),
                "train/kl_penalty": mul(pw((0, .0002), (700, .01)), .08),
                "train/approx_entropy": mul(pw((0, .6), (700, .42)), .03),
                "train/avg_turns_per_sample": mul(pw((0, 2.4), (250, 1.1), (700, 1.05)), .03),
                "train/max_turns_per_sample": ex(pw((0, 6), (300, 3), (700, 2)), nd=0),
                "train/mean_env_tokens_per_sample": mul(pw((0, 14), (250, 6), (700, 5.5)), .05),
                "train/mean_gen_tokens_per_sample": mul(pw((0, 420), (700, 300)), .03),
                "train/truncation_rate": fr(flat(.01), 512), "train/token_mult_prob_error": mul(flat(1.005), .001),
                "timing/train/total_step_time": mul(pw((0, 70), (300, 52), (700, 50)), .05),
                "timing/train/generation": mul(pw((0, 44), (300, 27), (700, 26)), .06)},
          derived=[("train/natural_termination_rate", lambda r, s: 1 - r["train/truncation_rate"])],
          evals={"validation/accuracy": Ev(pw((0, .32), (60, .33), (700, .33)), 500)},
          eval_side={"validation/avg_length": mul(pw((0, 430), (700, 310)), .02)},
          eval_every=50, eval_at0=True, headline="validation/accuracy"),
     bind(w_tb, sub="logs/exp_002/tensorboard", host="nemo-rl-1", pid=22871, config=("config.yaml", _nemo_search_cfg)),
     2523, (700, 2000), "stop", "stop nemo-rl tensorboard multi-turn agent tool-use broken-tool never-learns live",
     "NeMo-RL GRPO search agent (max 6 turns), live at step 700 of 2000. The retriever index is effectively empty: "
     "every search returns a few tokens (env tokens per sample ~14 -> 5.5), so searching never helps. The policy "
     "learns that within ~250 steps (turns per episode 2.4 -> 1.05, max turns 6 -> 2) and answers from memory; "
     "the reward sits at 0.33 from step 60 on and validation accuracy is flat at 0.32-0.33 (N=500, sd 0.021) for "
     "the whole run. Nothing has been learned and nothing will be until the tool works; the weights are no worse "
     "than at the start of the plateau: stop (and fix the index).",
     onset=60, age_min=5, sps=80)

# S4. verl PPO whose critic diverges at 800 while the policy holds: stop; the step-800 weights are as good.
spec("sor-verl-ppo-critic-diverges-from-800-vf-loss-x40-ev-to-minus-1.8-policy-and-gsm8k-hold-tb-live",
     Plot([Rw(pw((0, .28), (780, .58), (950, .582)), kappa=2)],
          dict(mean="critic/score/mean", max="critic/score/max", min="critic/score/min"), P=256, G=1, avg=False,
          side={"critic/vf_loss": mul(lambda s: .08 if s <= 800 else .08 * math.exp((s - 800) / 40), .1),
                "critic/vf_explained_var": add(pw((0, -.3), (80, .4), (800, .62), (850, .1), (950, -1.8)), .05),
                "critic/grad_norm": gn(pw((0, 12), (100, 3), (800, 3), (950, 90)), .35),
                "critic/vpred_mean": add(pw((0, .2), (800, .55), (950, 4.1)), .05),
                "critic/vf_clipfrac": mul(pw((0, .1), (800, .08), (870, .6), (950, .85)), .06),
                "critic/lr": ex(1e-5), "critic/returns/mean": add(pw((0, .28), (800, .58), (950, 1.3)), .02),
                "critic/advantages/mean": add(flat(0.0), .004),
                "critic/advantages/max": add(pw((0, 3.5), (800, 3.5), (950, 9)), .2),
                "critic/advantages/min": add(pw((0, -3.8), (800, -3.8), (950, -11)), .2),
                "actor/pg_clipfrac": mul(pw((0, .02), (800, .025), (950, .05)), .1),
                "actor/entropy": mul(pw((0, .55), (800, .40), (950, .39)), .03),
                "actor/reward_kl_penalty": mul(pw((0, .0002), (800, .012), (950, .016)), .06),
                "actor/reward_kl_penalty_coeff": ex(.001), "actor/pg_loss": add(flat(0.0), .01),
                "actor/ppo_kl": add(flat(0.0), 3e-4), "actor/grad_norm": gn(pw((0, .3), (800, .3), (950, .45))),
                "actor/lr": ex(1e-6), "response_length/mean": mul(pw((0, 320), (950, 300)), .03),
                "response_length/clip_ratio": fr(flat(.008), 256), "timing_s/gen": mul(flat(40), .05),
                "timing_s/values": mul(flat(8), .05), "timing_s/update_critic": mul(flat(21), .05),
                "timing_s/update_actor": mul(flat(24), .05)},
          derived=[("critic/values/mean", copy("critic/vpred_mean")),
                   ("critic/rewards/mean", lambda r, s: r["critic/score/mean"] - r["actor/reward_kl_penalty"]),
                   ("timing_s/step", lambda r, s: step_sum(*VERL_TIMING)(r, s) + 7.0)],
          evals={"val-core/openai/gsm8k/acc/mean@1": Ev(pw((0, .30), (780, .55), (950, .55)), 1319)}, eval_every=25,
          eval_at0=True, headline="val-core/openai/gsm8k/acc/mean@1"),
     bind(w_tb, sub="tensorboard_log/gsm8k_ppo/qwen25-7b-gae", host="h100-node-3", pid=61902),
     5524, (950, 1500), "sor", "stop-or-rollback verl tensorboard ppo critic-divergence policy-holds live",
     "verl 0.4 PPO with a critic, TensorBoard, live at step 950 of 1500. Until ~780 the run learns (score 0.28 -> "
     "0.58, GSM8K val 0.30 -> 0.55). From step 800 the critic diverges: vf_loss 0.08 -> ~3.4, explained variance "
     "0.62 -> -1.8, value predictions drift to ~4 on a 0-1 reward, value clipping binds on 85% of tokens, critic "
     "grad norm x30, advantages widen to +-10. The policy has not paid for it yet (PPO clipping and advantage "
     "whitening): score flat at 0.58, val flat at 0.55 (N=1319, sd 0.014), pg_clipfrac only 0.025 -> 0.05. But "
     "every further update is driven by garbage advantages, so nothing more is to be gained: stop. The current "
     "weights are as good as the step-800 ones, so restoring ~800 is as good.",
     onset=800, age_min=3, sps=65)

# S5. TRL GRPO code RL: the sandbox pool breaks at 720, every rollout scores 0, gradients are exactly 0.
_gate = lambda s: 1.0 if s < 720 else 0.0  # noqa: E731
spec("sor-trl026-grpo-code-sandbox-pool-down-from-720-all-rewards-0-grad-norm-0-heldout-holds-mlflow-db-live",
     Plot([Rw(rise(.30, .55, 700), "tests", n_tests=6, kappa=1.2, fail=lambda s: .03 if s < 720 else 1.0,
              key="rewards/run_unit_tests/mean", std_key="rewards/run_unit_tests/std")],
          dict(mean="reward", std="reward_std", zero="frac_reward_zero_std"), P=32, G=8, log_every=10,
          side={"loss": add(flat(0.0), .004, gate=_gate), "grad_norm": gn(flat(.25), gate=_gate),
                "learning_rate": ex(lambda s: 1e-6 * min(1.0, s / 50)), "num_tokens": cum(flat(256 * 770)),
                **trl_lengths(pw((0, 380), (720, 460), (900, 462)), 2048.0, flat(.02), 2560),
                "entropy": mul(pw((0, .55), (720, .47), (900, .47)), .02), **ZERO_CLIP,
                "step_time": mul(lambda s: 70 + 10 * s / 720 if s < 720 else 34.0, .05)},
          derived=TRL_TERMINATED,
          evals={"heldout/lcb_pass1": Ev(lambda s: pw((0, .20), (720, .292))(min(s, 720)), 400)}, eval_every=100,
          headline="heldout/lcb_pass1"),
     bind(w_mlflow_db, exp_name="code-rl-grpo", run_id="b71e0c44d2a9417f8c3e55a0d6f1e902",
          run_name="qwen25-coder-7b-grpo-unit-tests",
          params={"max_steps": 2000, "logging_steps": 10, "num_generations": 8, "per_device_train_batch_size": 8,
                  "learning_rate": 1e-06, "beta": 0.0, "loss_type": "dapo", "max_completion_length": 2048,
                  "reward_funcs": "['run_unit_tests']", "save_steps": 100}),
     3525, (900, 2000), "sor", "stop-or-rollback mlflow sqlite trl-grpo code-rl sandbox-outage no-signal live",
     "TRL 0.26 GRPO for code against a remote sandbox pool, MLflow SQL store; an external job evaluates each saved "
     "checkpoint on LiveCodeBench with its own sandbox and logs heldout/lcb_pass1 into the same run. Live at step "
     "900 of 2000. Until ~710 it learns: unit-test reward 0.30 -> ~0.46, held-out 0.20 -> 0.29. At step 720 the "
     "training sandbox pool breaks: every rollout errors and scores 0, so reward, reward_std and the component are "
     "exactly 0, frac_reward_zero_std is 1.0, loss and grad_norm are exactly 0.0 and steps get twice as fast. The "
     "model is not getting worse (no gradient, entropy and lengths unchanged, held-out at 800 and 900 still ~0.29, "
     "N=400, sd 0.023), but nothing more can be gained until the sandbox is fixed: stop. The weights from before "
     "the outage are the same model, so going back there is as good.",
     onset=720, age_min=3, sps=70)

# S6. TRL 0.25 GRPO code: unit tests flat since 350; a docstring-style bonus keeps the total reward rising.
spec("stop-trl025-grpo-code-unit-tests-flat-since-350-docstring-bonus-lifts-total-eval-tests-flat-ckpts-limit3",
     Plot([Rw(pw((0, .22), (350, .41), (900, .412)), "tests", key="rewards/unit_tests/mean",
              std_key="rewards/unit_tests/std", n_tests=5, kappa=1.2),
           Rw(pw((0, .93), (200, .99), (900, .995)), weight=.2, key="rewards/compiles/mean",
              std_key="rewards/compiles/std", kappa=5),
           Rw(pw((0, .30), (900, .86)), weight=.25, key="rewards/docstring_style/mean",
              std_key="rewards/docstring_style/std", kappa=3)],
          dict(mean="reward", std="reward_std", zero="frac_reward_zero_std"), P=32, G=8, log_every=10,
          side={"loss": add(flat(0.0), .004), "grad_norm": gn(flat(.21)),
                "learning_rate": ex(lambda s: 1e-6 * min(1.0, s / 30)), "num_tokens": cum(flat(256 * 700)),
                **trl_lengths(pw((0, 420), (900, 510)), 1536.0, flat(.015), 2560),
                "entropy": mul(pw((0, .5), (900, .34)), .03), **ZERO_CLIP},
          derived=TRL_TERMINATED,
          evals={"eval_rewards/unit_tests/mean": Ev(pw((0, .20), (350, .385), (900, .385)), 400),
                 "eval_rewards/compiles/mean": Ev(pw((0, .92), (200, .985), (900, .99)), 400),
                 "eval_rewards/docstring_style/mean": Ev(pw((0, .3), (900, .85)), 400)},
          eval_derived=[("eval_reward", lambda r: r["eval_rewards/unit_tests/mean"]
                         + .2 * r["eval_rewards/compiles/mean"] + .25 * r["eval_rewards/docstring_style/mean"])],
          eval_every=100, headline="eval_rewards/unit_tests/mean"),
     bind(w_trl_ckpts, save_every=100, keep=3, eval_steps=100,
          eval_extra={"eval_loss": 0.0, "eval_runtime": 388.21, "eval_samples_per_second": 1.03,
                      "eval_steps_per_second": 0.129}),
     3526, (900, 1500), "stop", "stop trl trainer-state checkpoints code-rl reward-components headline-choice live",
     "TRL 0.25 GRPO for code with three reward functions: unit tests (fraction of 5), compiles (x0.2) and a "
     "docstring-style bonus (x0.25). Checkpoints every 100, limit 3; newest checkpoint-900 of 1500, 9 minutes old. "
     "The total reward keeps climbing (~0.73 at 350 -> ~0.83 at 900), but all of that is the style bonus (0.49 "
     "-> 0.86) and compiles already at 0.99; the unit-test reward has been flat at ~0.41 since step 350 and the "
     "held-out eval of the same reward is flat at ~0.385 for 550 steps (N=400, sd 0.024). The task has stopped "
     "improving and the current weights are as good as any: stop.",
     onset=350, age_min=9, sps=70)


# ================================================================================================== rollback (11)

# R1. TRL 0.12 XPO against a learned RM: model scores keep climbing, EOS rate falls, judge win rate peaks at 1200.
spec("rb-xpo-rm-overopt-model-scores-climb-eos-rate-0.95-to-0.71-judge-winrate-peaks-1200-trl012-console-tqdm-live",
     Plot([Rw(pw((0, .3), (1200, 2.0), (2000, 3.6)), "rm", sd_prompt=1.0, sd_sample=.8)],
          dict(mean="objective/model_scores"), P=64, G=1, log_every=10,
          side={"loss/dpo": add(pw((0, .693), (1200, .60), (2000, .52)), .01),
                "loss/xpo": add(pw((0, -.0021), (2000, -.0052)), .0001),
                "objective/kl": mul(pw((0, .1), (1200, 8), (2000, 30)), .05),
                "objective/entropy": mul(pw((0, 110), (1200, 95), (2000, 140)), .03),
                "objective/ref_scores": add(flat(.3), .05),
                "objective/scores_margin": mul(pw((0, .6), (1200, 1.4), (2000, 2.9)), .05),
                "rewards/chosen": add(pw((0, 0), (1200, -.5), (2000, -1.6)), .05),
                "rewards/rejected": add(pw((0, 0), (1200, -1.0), (2000, -3.4)), .05),
                "rewards/accuracies": fr(pw((0, .53), (1200, .70), (2000, .80)), 640),
                "logps/chosen": add(pw((0, -150), (1200, -260), (2000, -520)), 8),
                "logps/rejected": add(pw((0, -160), (1200, -300), (2000, -610)), 8),
                "val/model_contain_eos_token": fr(pw((0, .97), (1200, .95), (2000, .71)), 640),
                "val/ref_contain_eos_token": fr(flat(.97), 640), "alpha": ex(1e-5), "beta": ex(.1),
                "grad_norm": gn(pw((0, 8), (1200, 8), (2000, 14))), "learning_rate": ex(5e-7)},
          derived=[("rewards/margins", lambda r, s: r["rewards/chosen"] - r["rewards/rejected"]),
                   ("loss", lambda r, s: r["loss/dpo"] + r["loss/xpo"])],
          evals={"eval_win_rate": Ev(pw((0, .5), (1100, .64), (1200, .645), (1300, .64), (2000, .52)), 400)},
          eval_every=100, headline="eval_win_rate"),
     lambda run, folder: w_trl_console(run, folder, name="xpo_llama32_3b.log", spe=run["planned"], tqdm=True,
                                       first=XPO_ORDER,
                                       head=hf_banner(run, run["planned"] * 64, 8, 64, 1, "24,313,856")),
     3531, (2000, 3000), "rb", "rollback trl xpo console tqdm learned-rm over-optimisation judge-winrate live",
     "TRL 0.12 XPOTrainer against a learned RM with a WinRateCallback judge every 100 steps, console log with tqdm "
     "bars, live at step 2000 of 3000. The RM score of the policy's samples climbs all run (0.3 -> 2.0 at 1200 -> "
     "3.6) against a flat reference score, and implicit accuracy keeps rising: the trainer's own signals look "
     "great. From ~1200 KL accelerates 8 -> 30, the share of completions that end with EOS falls 0.95 -> 0.71 "
     "and sequence entropy rises: the policy rambles and the RM pays for length. The judge win rate vs SFT peaked "
     "at ~0.645 (1100-1300) and is ~0.52 now (N=400, sd 0.024; 5 sd). Classic over-optimisation: roll back to "
     "~1200.",
     onset=1200, age_min=4, sps=28)

# R2. Hand-written multi-turn agent loop: the policy starts repeating tool calls until the turn cap.
spec("rb-agent-loop-repeats-tool-calls-turns-4-to-11-of-12-truncated-62pct-success-falls-custom-jsonl-live",
     Plot([Rw(pw((0, .18), (900, .46), (950, .465), (1000, .455), (1300, .25)), kappa=1.2)],
          dict(mean="episode_success"), P=64, G=4, log_every=5,
          side={"mean_turns": mul(pw((0, 4.2), (950, 4.4), (1050, 7), (1300, 11.3)), .03),
                "max_turns_hit": fr(pw((0, .03), (950, .04), (1300, .62)), 1280),
                "tool_error_rate": fr(pw((0, .05), (950, .04), (1300, .10)), 4000),
                "repeat_call_rate": fr(pw((0, .02), (950, .03), (1300, .55)), 4000),
                "tokens_per_episode": mul(pw((0, 1900), (950, 2000), (1300, 4300)), .03),
                "kl_to_ref": mul(pw((0, .0002), (950, .03), (1300, .11)), .06),
                "entropy": mul(pw((0, .5), (950, .42), (1300, .28)), .03),
                "grad_norm": gn(pw((0, .4), (950, .4), (1300, .7))), "lr": ex(2e-6), "loss": add(flat(0.0), .02)},
          derived=[("tool_calls_per_episode", copy("mean_turns", plus=-.8))],
          evals={"eval_success": Ev(pw((0, .17), (900, .44), (950, .445), (1000, .44), (1300, .26)), 300)},
          eval_every=50, headline="eval_success"),
     w_agent_jsonl, 2532, (1300, 3000), "rb", "rollback custom jsonl multi-turn agent tool-loop truncation live",
     "A hand-written multi-turn agent RL loop (leave-one-out REINFORCE, 64 tasks x 4 episodes, max 12 turns), "
     "metrics.jsonl keyed by `iter`, live at iteration 1300 of 3000. Success rose 0.18 -> 0.46 by ~950. Then the "
     "policy starts issuing the same tool call again and again: repeat_call_rate 0.03 -> 0.55, turns per episode "
     "4.4 -> 11.3 against the cap of 12, 62% of trajectories truncated at the cap, tokens per episode doubled, "
     "entropy falling. Train success falls to ~0.25 and held-out success from ~0.445 (900-1000) to ~0.26 (N=300, "
     "sd 0.029; 6 sd). Roll back to ~950.",
     onset=950, age_min=2, sps=90)

# R3. verl code RL: the sandbox image loses numpy at 600; the policy learns to avoid numpy and held-out falls.
spec("rb-verl-code-sandbox-image-drops-numpy-at-600-policy-unlearns-numpy-train-recovers-heldout-falls-wandb-csv",
     Plot([Rw(split(600, pw((0, .30), (600, .52)), pw((600, .40), (1000, .465))), kappa=1.5)],
          dict(mean="critic/score/mean"), P=128, G=8, avg=False,
          side={"actor/entropy": mul(pw((0, .5), (600, .44), (1000, .40)), .03),
                "response_length/mean": mul(pw((0, 600), (600, 700), (1000, 820)), .03),
                "reward/sandbox_error_rate": fr(split(600, flat(.02), pw((600, .31), (1000, .07))), 1024),
                "reward/import_numpy_rate": fr(pw((0, .34), (600, .36), (700, .15), (1000, .03)), 1024),
                "actor/kl_loss": mul(pw((0, .0002), (600, .008), (1000, .022)), .06)},
          evals={"heldout/lcb_v5_pass1": Ev(pw((0, .22), (550, .34), (600, .342), (700, .33), (1000, .255)), 400)},
          eval_every=50, headline="heldout/lcb_v5_pass1"),
     bind(w_wandb_csv, display="coder7b-grpo-lcb-0603",
          panels=["critic/score/mean", "heldout/lcb_v5_pass1", "reward/sandbox_error_rate", "reward/import_numpy_rate",
                  "response_length/mean", "actor/entropy", "actor/kl_loss"]),
     4533, 1000, "rb", "rollback wandb csv-export verl code-rl sandbox-failure reward-outside-model",
     "W&B panel CSV exports of a verl GRPO code run (binary all-tests-pass reward, remote sandbox); a separate "
     "job evaluates checkpoints on LiveCodeBench with a correct harness and logs heldout/lcb_v5_pass1. At step "
     "600 the sandbox image was rebuilt without numpy: sandbox errors jump 0.02 -> 0.31 and the score drops 0.52 "
     "-> 0.40 for reasons outside the model. The policy then learns to avoid numpy (import rate 0.36 -> 0.03): "
     "errors fall back to ~0.07 and the train score recovers to ~0.46, which looks like a dip that healed. But the "
     "numpy-free solutions are slower and worse: held-out pass@1 peaked at ~0.34 (550-600) and is ~0.255 at 1000 "
     "(N=400, sd 0.024; 3.6 sd). The policy was damaged by the broken reward: roll back to ~600 and fix the image.",
     onset=600, age_min=30, sps=120)

# R4. TRL PPO relaunched from checkpoint-500 with 4 PPO epochs x 4 minibatches: the ratio blows up.
def r4_plot(broken: bool = True) -> Plot:
    b = broken
    return Plot([Rw(pw((0, .1), (450, 1.5), (500, 1.6), (520, 1.45), (640, .2)) if b
                    else pw((0, .1), (450, 1.5), (500, 1.6), (640, 1.7)), "rm", sd_prompt=.6, sd_sample=1.2)],
                dict(mean="objective/scores"), P=64, G=1, avg=False,
                side={"eps": mul(flat(1.9), .05),
                      "objective/kl": mul(pw((0, .1), (500, 4.2), (560, 14), (640, 31)) if b
                                          else pw((0, .1), (500, 4.2), (640, 5)), .05),
                      "objective/entropy": mul(pw((0, 55), (500, 40), (640, 70)) if b else pw((0, 55), (640, 38)), .03),
                      "policy/approxkl_avg": mul(split(500, flat(.005), pw((500, .05), (640, .22))) if b
                                                 else flat(.005), .15),
                      "policy/clipfrac_avg": mul(split(500, flat(.07), pw((500, .25), (640, .44))) if b
                                                 else flat(.07), .08),
                      "loss/policy_avg": add(flat(-.01), .01),
                      "loss/value_avg": mul(pw((0, .5), (500, .2), (640, 1.4)) if b else pw((0, .5), (640, .19)), .1),
                      "val/clipfrac_avg": mul(split(500, flat(.1), pw((500, .3), (640, .6))) if b else flat(.1), .08),
                      "policy/entropy_avg": mul(pw((0, 2.1), (500, 1.6), (640, 2.9)) if b
                                                else pw((0, 2.1), (640, 1.55)), .03),
                      "val/ratio": add(split(500, flat(1.0), pw((500, 1.15), (640, 1.7))) if b else flat(1.0), .006),
                      "val/ratio_var": mul(split(500, flat(.0005), pw((500, .3), (640, 3.2))) if b
                                           else flat(.0005), .2),
                      "val/num_eos_tokens": add(pw((0, 60), (500, 58), (640, 31)) if b else flat(59), 1.0, nd=0),
                      "lr": ex(warm_linear(3e-6, 0, 1500))},
                derived=[("objective/non_score_reward", lambda r, s: -.05 * r["objective/kl"]),
                         ("objective/rlhf_reward", lambda r, s: r["objective/scores"] - .05 * r["objective/kl"]),
                         ("episode", lambda r, s: s * 64), ("epoch", lambda r, s: s * 64 / 96000)])


spec("rb-trl019-ppo-relaunched-at-500-with-4-epochs-ratio-var-0.0005-to-3-clipfrac-0.44-scores-collapse-hf-tb-2dirs",
     r4_plot(), lambda run, folder: w_hf_tb_resumed(run, folder, r4_plot(False), 500, 530, 2.5),
     11534, (640, 1500), "rb", "rollback hf-tensorboard trl-ppo resume config-change ratio-blowup duplicate-steps live",
     "TRL 0.19 PPOTrainer with a learned RM, HF TensorBoard (train/ prefix). The first job crashed after step 530; "
     "it was relaunched 2.5 hours later from checkpoint-500 with num_ppo_epochs 1 -> 4 and num_mini_batches 1 -> 4, "
     "so runs/ holds two folders and steps 501-530 appear twice (the first copy healthy). In the relaunched job "
     "the updates are far off-policy: val/ratio 1.0 -> 1.7, ratio variance 0.0005 -> ~3, policy clipfrac 0.07 -> "
     "0.44, approxkl x40, KL to the reference 4 -> 31, entropy up, EOS count halves, and the RM score collapses "
     "from ~1.6 at step 500 to ~0.2 at 640 (one 64-sample batch has sd ~0.17). There is no eval; the score "
     "itself says the step-500 weights were better: roll back to 500 and undo the config change.",
     onset=500, age_min=5, sps=50)

# R5. OpenRLHF PPO relaunched at 600 with a 10x critic lr: the critic diverges first, the policy follows ~50 later.
spec("rb-openrlhf011-ppo-relaunch-at-600-critic-lr-9e-6-to-9e-5-critic-loss-x100-policy-fine-50-steps-then-math-falls-tb",
     Plot([Rw(pw((0, .30), (600, .56), (650, .56), (760, .38)), kappa=2)], dict(mean="reward"), P=128, G=1, avg=False,
          side={"policy_loss": add(flat(0.0), .02),
                "critic_loss": mul(split(600, pw((0, .4), (100, .08), (600, .05)), pw((600, .05), (660, 1.8), (760, 6.0))),
                                   .1),
                "values": add(split(600, pw((0, 0), (600, .42)), pw((600, .42), (760, 2.6))), .03),
                "kl": mul(pw((0, .0002), (600, .012), (650, .014), (760, .05)), .06),
                "response_length": mul(pw((0, 280), (650, 290), (760, 410)), .03),
                "truncated": fr(pw((0, .003), (650, .004), (760, .03)), 128),
                "actor_lr": ex(1e-6), "critic_lr": ex(lambda s: 9e-6 if s <= 600 else 9e-5),
                "actor_grad_norm": gn(pw((0, .25), (650, .25), (760, .6))),
                "critic_grad_norm": gn(split(600, flat(1.5), pw((600, 8), (760, 40))), .35),
                "ppo_clip_ratio": mul(pw((0, .01), (650, .012), (760, .05)), .1), "ppo_kl": add(flat(0.0), 3e-4),
                "vllm_kl": mul(flat(.001), .1), "timing/generation": mul(flat(30), .05),
                "timing/make_experience": mul(flat(14), .05), "timing/ppo_train": mul(flat(12), .05),
                "timing/broadcast": mul(flat(4), .05)},
          derived=[*openrlhf_derived(160, .01)[1:],
                   ("return", lambda r, s: .5 * r["values"] + .5 * r["reward"] - .01 * r["kl"] * r["response_length"])],
          evals={"eval_math_pass1": Ev(pw((0, .31), (560, .535), (600, .54), (650, .535), (760, .40)), 500)},
          eval_every=20, headline="eval_math_pass1"),
     bind(w_tb_relaunch, sub="tb/qwen25-7b-ppo-gae", relaunch=600, host="dgx-a-04", pids=(30117, 41822)),
     9535, (760, 2000), "rb", "rollback openrlhf tensorboard ppo critic-divergence relaunch lr-typo two-event-files live",
     "OpenRLHF 0.11 PPO with a critic (GAE), TensorBoard; the job was relaunched from global_step600 after an "
     "outage, which opened a second event file in the same folder, and train/critic_lr steps from 9e-6 to 9e-5 "
     "there (a typo in the relaunch command). From step 601 the critic diverges: critic_loss 0.05 -> 1.8 by 660 -> "
     "6 by 760, values drift 0.42 -> 2.6 on a 0/1 reward, critic grad norm x25. For ~50 steps the policy looks "
     "fine (reward 0.56, math pass@1 ~0.54) because PPO clipping absorbs the bad advantages; then it follows: "
     "responses grow, clip ratio rises, reward falls to 0.38 and math pass@1 to ~0.40 at 760 (N=500, sd 0.022; "
     "6 sd). The breakage began at the relaunch: roll back to step 600.",
     onset=600, age_min=3, sps=60, gaps=((600, 4700),))

# R6. OpenRLHF RLOO against a learned RM: RM reward triples, lengths x3, the judged held-out pass@1 peaks at 700.
spec("rb-openrlhf010-rloo-learned-rm-reward-up-lengths-x3-arenahard-judge-pass1-peaks-700-tb-live",
     Plot([Rw(pw((0, -.5), (700, 1.4), (1200, 2.9)), "rm", sd_prompt=1.0, sd_sample=.8)],
          dict(mean="reward", gstd="group_reward_std", std="rollout/reward_std"), P=128, G=4, avg=False,
          side={"policy_loss": add(flat(0.0), .02), "kl": mul(pw((0, .0002), (700, .03), (1200, .14)), .06),
                "response_length": mul(pw((0, 310), (700, 420), (1200, 890)), .03),
                "truncated": fr(pw((0, .002), (700, .01), (1200, .09)), 512), "actor_lr": ex(5e-7),
                "actor_grad_norm": gn(flat(.3)), "ppo_clip_ratio": mul(flat(.001), .3), "ppo_kl": add(flat(0.0), 2e-4),
                "vllm_kl": mul(flat(.0011), .1), "timing/generation": mul(pw((0, 40), (700, 52), (1200, 105)), .05),
                "timing/make_experience": mul(flat(25), .05), "timing/ppo_train": mul(pw((0, 30), (1200, 55)), .05),
                "timing/broadcast": mul(flat(5), .05)},
          derived=openrlhf_derived(210, .01),
          evals={"eval_arenahard_pass1": Ev(pw((0, .40), (650, .55), (700, .553), (750, .55), (1200, .44)), 500)},
          eval_side={"eval_arenahard_response_length_mean": mul(pw((0, 330), (700, 440), (1200, 930)), .02),
                     "eval_arenahard_truncated_rate": fr(pw((0, .002), (700, .012), (1200, .1)), 500)},
          eval_every=50, headline="eval_arenahard_pass1"),
     bind(w_tb, sub="tb/llama31-8b-rloo-skywork-rm", tp="train/", ep="eval/", host="gpu-pod-3", pid=7741),
     2536, (1200, 2000), "rb", "rollback openrlhf tensorboard rloo learned-rm over-optimisation length-hacking live",
     "OpenRLHF 0.10 RLOO (4 samples per prompt) against a learned reward model, TensorBoard; held-out eval on "
     "Arena-Hard prompts through a judge reward function (pass1 = judged win rate). Live at step 1200 of 2000. "
     "The RM reward rises all run, -0.5 -> 1.4 at 700 -> 2.9, and KL is small in absolute terms (0.03 -> 0.14 "
     "per token). But from ~700 responses balloon 420 -> 890 tokens (truncation 1% -> 9%) and the judged pass1 "
     "turns down from its ~0.55 peak (650-750) to ~0.44 (N=500, sd 0.022; 5 sd). The RM is being exploited "
     "through length: roll back to ~700.",
     onset=700, age_min=6, sps=85)

# R7. Legacy TRL PPO (shared-trunk value head): value loss explodes at ~390 and drags the policy down; W&B CSVs.
spec("rb-legacy-ppo-value-loss-explodes-from-385-shared-trunk-entropy-x3-rm-reward-2.3-to-minus-0.8-wandb-csv",
     Plot([Rw(pw((0, .2), (360, 2.25), (385, 2.3), (395, 2.2), (460, -.8)), "rm", sd_prompt=.8, sd_sample=1.5)],
          dict(mean="env/reward_mean", std="env/reward_std"), P=128, G=1, avg=False,
          side={"ppo/loss/value": mul(split(385, pw((0, 2.0), (100, .6), (385, .5)),
                                            lambda s: .5 * math.exp((s - 385) / 14)), .1),
                "ppo/val/var_explained": add(pw((0, -.2), (150, .45), (385, .5), (420, -3), (460, -12)), .05),
                "ppo/val/clipfrac": mul(pw((0, .2), (385, .15), (420, .7), (460, .92)), .05),
                "objective/kl": mul(pw((0, .1), (385, 5.5), (460, 38)), .06),
                "objective/entropy": mul(pw((0, 40), (385, 33), (460, 95)), .04),
                "tokens/responses_len_mean": mul(pw((0, 36), (385, 40), (460, 61)), .02),
                "ppo/policy/clipfrac": mul(pw((0, .05), (385, .06), (460, .4)), .1)}),
     bind(w_wandb_csv, display="gpt2-xl-imdb-ppo-vf1.0", step_shift=-1,
          panels=["env/reward_mean", "ppo/loss/value", "ppo/val/var_explained", "ppo/val/clipfrac", "objective/kl",
                  "objective/entropy", "tokens/responses_len_mean", "ppo/policy/clipfrac"]),
     2537, 460, "rb", "rollback wandb csv-export trl-legacy-ppo value-head-explosion train-headline no-eval",
     "TRL legacy PPOTrainer (AutoModelForCausalLMWithValueHead, vf_coef 1.0, shared trunk) on IMDB sentiment, "
     "exported as W&B panel CSVs (Step is W&B's _step, counting from 0). The RM reward climbs 0.2 -> 2.3 by "
     "~_step 384. Then the value loss explodes (0.5 -> ~100 by the end), explained variance goes 0.5 -> -12 and "
     "value clipping binds on 92%: the value gradients through the shared trunk wreck the policy. Entropy "
     "triples, KL 5.5 -> 38, responses run to the 64-token cap and the reward collapses to ~-0.8 by _step 459 (a "
     "batch mean has sd ~0.15). No eval; the reward itself shows the better model is behind: roll back to ~384.",
     onset=385, age_min=25, sps=30, shift=-1)

# R8. verl REINFORCE++ with two evals: MATH-500 mean@4 erodes from 700, GSM8K holds, train score flat.
spec("rb-verl-reinforcepp-three-evals-math500-at-4-erodes-4sd-from-700-gsm8k-saturated-aime-noisy-train-flat-jsonl",
     Plot([Rw(pw((0, .40), (650, .58), (1100, .585)), kappa=1.5)],
          dict(mean="critic/score/mean", max="critic/score/max", min="critic/score/min"), P=256, G=4, avg=False,
          side={"actor/entropy": mul(pw((0, .55), (700, .42), (1100, .25)), .03),
                "actor/kl_loss": mul(pw((0, .0003), (700, .02), (1100, .05)), .06), "actor/kl_coef": ex(.001),
                "actor/pg_loss": add(flat(0.0), .01), "actor/pg_clipfrac": mul(flat(.003), .2),
                "actor/pg_clipfrac_lower": ex(0.0), "actor/ppo_kl": add(flat(0.0), 2e-4),
                "actor/grad_norm": gn(flat(.2)), "actor/lr": ex(1e-6),
                "response_length/mean": mul(pw((0, 1500), (650, 1900), (700, 1900), (1100, 1500)), .03),
                "response_length/max": ex(4096.0),
                "response_length/clip_ratio": fr(pw((0, .03), (700, .05), (1100, .02)), 1024),
                "critic/advantages/mean": add(flat(0.0), .003), "critic/advantages/max": add(flat(3.1), .2),
                "critic/advantages/min": add(flat(-2.9), .2),
                "timing_s/gen": mul(pw((0, 120), (700, 150), (1100, 125)), .05), "timing_s/old_log_prob": mul(flat(20), .04),
                "timing_s/ref": mul(flat(19), .04), "timing_s/update_actor": mul(flat(58), .04)},
          derived=[("critic/rewards/mean", copy("critic/score/mean")),
                   ("timing_s/step", lambda r, s: step_sum(*VERL_TIMING)(r, s) + 8.0)],
          evals={"val-core/math500/acc/mean@4": Ev(pw((0, .46), (650, .62), (700, .622), (1100, .555)), 500, k=4,
                                                   kappa=1.5),
                 "val-core/gsm8k/acc/mean@1": Ev(pw((0, .84), (400, .885), (1100, .885)), 1319),
                 "val-core/aime24/acc/mean@16": Ev(pw((0, .10), (650, .15), (1100, .14)), 30, k=16, kappa=.6)},
          eval_every=25, eval_at0=True, headline="val-core/math500/acc/mean@4"),
     bind(w_verl_jsonl, project="math_rpp", exp="qwen25-7b-reinforce-pp-dapo17k"),
     5538, 1100, "rb", "rollback verl jsonl reinforce++ two-evals headline-choice slow-erosion entropy live",
     "verl REINFORCE++ (adv_estimator reinforce_plus_plus, k3 KL loss) on competition math, file-logger JSONL, "
     "being written (2 minutes old). Two validation sets: GSM8K (mean@1, N=1319) saturates at ~0.885 by step 400 "
     "and stays there; MATH-500 (mean@4), the set that matches the training data and the goal, peaked at ~0.62 "
     "(650-700) and erodes to ~0.555 at 1100 (sd of one mean@4 eval ~0.016; 4 sd). The train score is flat at "
     "~0.58 and hides it; entropy drains 0.42 -> 0.25 and responses shorten 1900 -> 1500 tokens as the policy "
     "stops reasoning on hard problems. Judged on the harder benchmark the better model is behind: roll back to "
     "~700.",
     onset=700, age_min=2, sps=130)

# R9. TRL 1.x GRPO with a Python tool: malformed tool calls climb from ~950; only past-peak checkpoints are kept.
spec("rb-trl1x-grpo-python-tool-failures-0.08-to-0.45-from-950-eval-falls-checkpoints-limit2-past-peak-stalled-5h",
     Plot([Rw(pw((0, .30), (900, .55), (950, .552), (1400, .42)), key="rewards/correct_answer/mean",
              std_key="rewards/correct_answer/std", kappa=1.5),
           Rw(pw((0, .85), (900, .95), (950, .95), (1400, .6)), weight=.1, key="rewards/tool_format/mean",
              std_key="rewards/tool_format/std", kappa=4)],
          dict(mean="reward", std="reward_std", zero="frac_reward_zero_std"), P=32, G=8, log_every=10,
          side={"loss": add(flat(0.0), .004), "grad_norm": gn(pw((0, .2), (950, .2), (1400, .5))),
                "learning_rate": ex(lambda s: 1e-6 * min(1.0, s / 50)), "num_tokens": cum(flat(256 * 1100)),
                **trl_lengths(pw((0, 700), (950, 760), (1400, 1150)), 2048.0, pw((0, .01), (950, .02), (1400, .11)),
                              2560),
                "entropy": mul(pw((0, .5), (950, .43), (1400, .7)), .03), **ZERO_CLIP,
                "step_time": mul(pw((0, 90), (950, 95), (1400, 150)), .05),
                "tools/call_frequency": mul(pw((0, 1.2), (950, 1.4), (1400, 2.8)), .04),
                "tools/failure_frequency": fr(pw((0, .06), (950, .08), (1400, .45)), 2000)},
          derived=TRL_TERMINATED,
          evals={"eval_rewards/correct_answer/mean": Ev(pw((0, .31), (850, .52), (950, .525), (1000, .52), (1400, .40)),
                                                        500),
                 "eval_rewards/tool_format/mean": Ev(pw((0, .85), (950, .95), (1400, .62)), 500)},
          eval_derived=[("eval_reward", lambda r: r["eval_rewards/correct_answer/mean"]
                         + .1 * r["eval_rewards/tool_format/mean"])],
          eval_every=100, headline="eval_rewards/correct_answer/mean"),
     bind(w_trl_ckpts, save_every=100, keep=2, eval_steps=100,
          eval_extra={"eval_loss": 0.0, "eval_runtime": 702.4, "eval_samples_per_second": 0.712,
                      "eval_steps_per_second": 0.089}),
     3539, (1400, 3000), "rb", "rollback trl trainer-state checkpoints-only save-limit tool-use stalled",
     "TRL 1.x GRPO with a Python-interpreter tool (tools/* keys), checkpoints every 100 with save_total_limit 2, "
     "so only checkpoint-1300 and -1400 are on disk; the newest was written 5 hours ago and nothing since (the job "
     "is dead or hung, 1400 of 3000). Accuracy rose to ~0.55 by 900-950. From ~950 the policy emits malformed "
     "tool calls: tools/failure_frequency 0.08 -> 0.45, calls per sample 1.4 -> 2.8 (retries), completions grow "
     "760 -> 1150 tokens, entropy 0.43 -> 0.7. Held-out accuracy peaked at ~0.525 (900-1000) and is ~0.40 at "
     "1400 (N=500, sd 0.022; 5 sd). The better model is behind the kept checkpoints: roll back to ~900 (restore "
     "it from elsewhere or retrain to it).",
     onset=950, age_min=300, sps=95)

# R10. TRL Nash-MD whose beta schedule drops 0.1 -> 0.01 at epoch 2: KL runs away, EOS lost, win rate falls.
_ch10 = pw((0, .2), (600, 1.2), (1000, 2.2))
spec("rb-nash-md-beta-schedule-drops-to-0.01-at-epoch-2-kl-3-to-40-eos-0.95-to-0.55-winrate-peaks-600-mlflow-db",
     Plot([Rw(_ch10, "rm", sd_prompt=1.0, sd_sample=.7)], dict(mean="rewards/chosen"), P=64, G=1, log_every=10,
          side={"loss": add(pw((0, .02), (600, -.02), (1000, -.06)), .02),
                "grad_norm": gn(pw((0, 3), (600, 3), (1000, 9))), "learning_rate": ex(5e-7),
                "loss/kl": mul(pw((0, .1), (600, 3), (1000, 40)), .05),
                "objective/entropy": mul(pw((0, 100), (600, 95), (1000, 170)), .03),
                "loss/score": add(pw((0, 0), (600, -.03), (1000, -.12)), .02),
                "rewards/rejected": add(lambda s: _ch10(s) - pw((0, .05), (600, .1), (1000, .9))(s), .06),
                "rewards/probabilities": add(pw((0, .51), (600, .55), (1000, .78)), .012),
                "rewards/accuracies": fr(pw((0, .52), (600, .57), (1000, .85)), 640),
                "logps/chosen": add(pw((0, -200), (600, -230), (1000, -480)), 6),
                "logps/rejected": add(pw((0, -200), (600, -215), (1000, -260)), 6),
                "val/model_contain_eos_token": fr(pw((0, .96), (600, .95), (1000, .55)), 640),
                "val/ref_contain_eos_token": fr(flat(.96), 640),
                "beta": ex(lambda s: .1 if s <= 600 else .01), "mixture_coef": ex(.5)},
          derived=[("rewards/margins", lambda r, s: r["rewards/chosen"] - r["rewards/rejected"]),
                   ("epoch", lambda r, s: s / 600)],
          evals={"eval_win_rate": Ev(pw((0, .5), (550, .64), (600, .642), (650, .635), (1000, .50)), 400)},
          eval_every=50, headline="eval_win_rate"),
     bind(w_mlflow_db, exp_name="nash-md-ultrafeedback", run_id="5d2a7c0e9b1f4e63a8d40c7b2e91f6a4",
          run_name="nashmd-qwen25-1.5b-beta-sched",
          params={"num_train_epochs": 3, "max_steps": -1, "beta": "[0.1, 0.01, 0.01]", "mixture_coef": 0.5,
                  "learning_rate": 5e-07, "logging_steps": 10, "eval_steps": 50, "per_device_train_batch_size": 4,
                  "gradient_accumulation_steps": 2}),
     2540, (1000, 1800), "rb", "rollback mlflow sqlite trl nash-md beta-schedule kl-runaway eos-loss live",
     "TRL Nash-MD (mixture_coef 0.5) with beta given as a per-epoch list [0.1, 0.01, 0.01], MLflow SQL store, "
     "live at step 1000 (epoch 1.67 of 3, 600 steps per epoch). In epoch 1 it behaves: win rate vs SFT 0.50 -> "
     "0.64. When epoch 2 starts at step 600 the logged beta drops to 0.01 and the policy is let off the leash: "
     "loss/kl 3 -> 40, share of completions with EOS 0.95 -> 0.55, logps/chosen -230 -> -480, and the RM now "
     "prefers the policy over the mixture 0.78 of the time. The judge win rate peaked at ~0.64 (550-650) and is "
     "~0.50 at 1000 (N=400, sd 0.024; 6 sd). Roll back to the end of epoch 1 (~600).",
     onset=600, age_min=4, sps=30)

# R11. Plain PyTorch PPO loop, finished: held-out accuracy peaked 550-650; value clipping binds late.
spec("rb-finished-hand-ppo-csv-1000-of-1000-eval-acc-peak-550-650-final-3sd-lower-vf-clipfrac-rises-train-still-up",
     Plot([Rw(pw((0, .25), (600, .55), (1000, .57)), kappa=2)], dict(mean="reward_mean", std="reward_std"), P=64, G=1,
          avg=False,
          side={"kl": mul(pw((0, .0002), (650, .03), (1000, .09)), .06),
                "entropy": mul(pw((0, .6), (650, .45), (1000, .3)), .03),
                "value_loss": mul(pw((0, .2), (650, .05), (1000, .09)), .1),
                "explained_var": add(pw((0, 0), (200, .5), (650, .55), (1000, .2)), .05),
                "adv_mean": add(flat(0.0), .01), "adv_std": add(flat(1.0), .001),
                "ret_mean": add(pw((0, .22), (650, .5), (1000, .5)), .02), "approx_kl": mul(flat(.004), .2),
                "clipfrac": mul(pw((0, .05), (650, .06), (1000, .11)), .1),
                "vf_clipfrac": mul(pw((0, .1), (650, .12), (1000, .5)), .06), "grad_norm": gn(flat(.5)),
                "lr": ex(warm_linear(1e-6, 20, 1000))},
          evals={"eval_acc": Ev(pw((0, .28), (550, .50), (600, .503), (650, .50), (1000, .43)), 500)},
          eval_every=50, headline="eval_acc"),
     w_ppo_csv, 5541, (1000, 1000), "rb", "rollback finished plain-csv hand-written-ppo critic value-clipping",
     "A hand-written PyTorch PPO loop (separate value network, GAE 0.95, value clipping 0.2) on GSM8K-style "
     "problems, metrics.csv with eval_acc every 50 updates; it finished 1000 of 1000 steps 14 hours ago. The train "
     "reward keeps creeping up (0.55 -> 0.57 after 600), but held-out accuracy peaked at ~0.50 (550-650) and ended "
     "at ~0.43 (N=500, sd 0.022; 3 sd below the peak). Alongside, value clipping starts binding (vf_clipfrac 0.12 "
     "-> 0.5), explained variance falls 0.55 -> 0.2, policy clipfrac doubles and entropy halves: the last 350 "
     "steps fit the training prompts at the expense of held-out skill. The better model is behind: go back to "
     "~650 (of the saves every 250 steps, ppo_step500 is the newest at or before it), not the final weights.",
     onset=650, age_min=840, sps=45, finished=True)


# ------------------------------------------------------------------------------------------------------- the set

CASES = [s.case() for s in SPECS]
BY_NAME = {s.name: s for s in SPECS}


def write_run(case: Case, folder: Path) -> None:
    sp = BY_NAME[case.name]
    rng = np.random.default_rng(sp.seed)
    run = draw(sp.plot, sp.reached, rng)
    run.update(planned=case.planned or sp.reached, reached=sp.reached, sps=sp.sps, t_end=NOW - sp.age_min * 60,
               finished=sp.finished, seed=sp.seed, gaps=sp.gaps)
    folder.mkdir(parents=True, exist_ok=True)
    over = sp.write(run, folder)
    stamp(folder, run, over)


def check(cases: list[Case]) -> None:
    for c in cases:
        sp = BY_NAME[c.name]
        pl = sp.plot
        lv, steps = pl.head_level(), pl.head_steps(sp.reached)
        best_s = max(steps, key=lv)
        sd = pl.head_sd(best_s)
        print(f"{c.name}\n    {c.labels.get('preferred')} accept={c.labels.get('accept')} "
              f"window={c.labels.get('rollback_window')} onset={c.labels.get('onset_step')} "
              f"steps={c.steps} age={sp.age_min}min")
        print(f"    headline {pl.headline or 'train reward'}: first {lv(steps[0]):.3f}@{steps[0]} "
              f"best {lv(best_s):.3f}@{best_s} last {lv(steps[-1]):.3f}@{steps[-1]} sd {sd:.4f} "
              f"({(lv(best_s) - lv(steps[-1])) / sd:+.1f} sd below best)")
        run = draw(pl, sp.reached, np.random.default_rng(sp.seed))
        key = pl.headline or next(iter(pl.stats.values()))
        pts = [(s, v[key]) for s, v in (run["evals"] if pl.headline else run["train"])]
        stride = max(1, len(pts) // 12)
        print("    drawn " + " ".join(f"{s}:{x:.3f}" for s, x in pts[::stride]) + f" | last {pts[-1][0]}:{pts[-1][1]:.3f}")


HEADER = """# Holdout set 25: blind-labelled runs written by make_holdout25.py, independent of the assessor, its judges and the
# other holdout generators. Aimed at PPO critics, RLOO / REINFORCE++, online DPO / XPO / Nash-MD, learned-RM RLHF,
# multi-turn agents and code RL. Labels: what a careful practitioner should do now under DESIGN.md's decision
# contract, read from each story's noise-free levels. rollback_window is inclusive: from the first logged headline
# step whose level is within one sampling sd of the best level to the newest such step not after onset_step, in
# the run's own logged step units. Run `.venv/bin/python evals/holdout25/make_holdout25.py` to write runs/
# (gitignored); `--check` prints levels and windows.
"""


def main() -> None:
    holdout_kit.main(HERE, "make_holdout25.py", "holdout25.yaml", "h25-", "holdout25", HEADER, CASES, write_run, check)


if __name__ == "__main__":
    main()
