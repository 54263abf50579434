"""Holdout set 35: blind-labelled RL post-training runs beyond plain GRPO, independent of the assessor.

Run from the worktree root:
    .venv/bin/python evals/holdout35/make_holdout35.py           # writes runs/ (gitignored) and holdout35.yaml
    .venv/bin/python evals/holdout35/make_holdout35.py --check   # also prints levels and rollback windows

Every case is a noise-free story (piecewise-linear levels in the optimiser step) for the train reward, the held-out
evals and the side signals (critic, KL controller, clip ratios by side, dynamic-sampling shares, preference
log-probs, agent turns and tool calls, train/rollout mismatch ...), drawn through this set's own noise model and
written the way one framework and version writes them.

Noise model (this set's own):
  * binary rewards: P prompts per batch, each with a solve rate q = sigmoid(a + s*z), z ~ N(0, 1), the offset `a`
    set so that E[q] equals the level (logit-normal prompt difficulty, s ~ 1.4-1.8); G rollouts per prompt drawn
    Bernoulli(q). Batch mean, sample std, within-group std, the share of all-same groups and the mean over the
    mixed ("kept") groups all come from the same draws. A trainer that logs every n steps logs the mean of the
    n batches (TRL);
  * reward-model / partial-credit scores: per-sample normal around the level plus a per-prompt offset;
  * held-out evals: Binomial(N, p)/N on N problems, or (for evals that sample g completions per prompt) the
    logit-normal prompt model with g Bernoulli draws each; judge win rates are Binomial(N, p)/N as well;
  * grad norms: level * exp(0.3 e) with e an AR(1) N(0,1) series, and on ~4% of steps an extra factor
    1 + 2 * Pareto(1.3) (heavy right tail);
  * other side signals: AR(1) (rho 0.6) noise, multiplicative for positive quantities, additive for signed ones,
    Binomial(n, p)/n for fractions of n samples; schedules and controller outputs are exact.

Labels follow DESIGN.md ("What the three decisions mean") and come from each story's noise-free levels, never from
a tool. The rollback window runs from the first logged headline step whose level is within one sampling sd of the
best level (the sd of one eval draw at the best level) to the newest such step not after onset_step; `--check`
prints it, with the levels.
"""

from __future__ import annotations

import csv
import hashlib
import json
import math
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import holdout_kit
from holdout_kit import (
    HEALTHY,
    Case,
    converged,
    dump_json,
    rollback,
    stop,
    stop_or_rollback,
    tb_file,
    trainer_state,
    writer,
)

HERE = Path(__file__).resolve().parent
NOW = time.time()
TRAIN = "@train"
Level = Callable[[float], float]


def K(*pts: tuple[float, float]) -> Level:
    xs, ys = zip(*pts, strict=True)
    return lambda s: float(np.interp(s, xs, ys))


def C(v: float) -> Level:
    return lambda s: float(v)


def rnd(x: float, sig: int = 7) -> float:
    if x is None or not math.isfinite(x):
        return x
    return float(f"{x:.{sig}g}")


# ------------------------------------------------------------------------------------------------- noise model

_GX, _GW = np.polynomial.hermite.hermgauss(60)
_GW = _GW / math.sqrt(math.pi)


def _sig(x):
    return 1.0 / (1.0 + np.exp(-x))


@cache
def _offset(p: float, s: float) -> float:
    lo, hi = -30.0, 30.0
    for _ in range(80):
        mid = (lo + hi) / 2
        if float(np.sum(_GW * _sig(mid + s * math.sqrt(2) * _GX))) < p:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def moments(p: float, s: float) -> tuple[float, float]:
    """(Var of the prompt solve rate, E[q(1-q)]) under the logit-normal difficulty model with mean p."""
    if p <= 1e-9 or p >= 1 - 1e-9:
        return 0.0, 0.0
    a = _offset(round(p, 6), s)
    q = _sig(a + s * math.sqrt(2) * _GX)
    eq2 = float(np.sum(_GW * q * q))
    return max(eq2 - p * p, 0.0), max(p - eq2, 0.0)


def solve_rates(rng: np.random.Generator, p: float, s: float, n: int) -> np.ndarray:
    if p <= 1e-9:
        return np.zeros(n)
    if p >= 1 - 1e-9:
        return np.ones(n)
    return _sig(_offset(round(p, 6), s) + s * rng.normal(size=n))


@dataclass
class Binary:
    """Binary rewards: P prompts x G rollouts per batch, `per_log` batches per logged row."""

    level: Level
    P: int
    G: int
    s: float = 1.5
    per_log: int = 1

    def stats(self, rng: np.random.Generator, step: int) -> dict:
        p = min(max(self.level(step), 0.0), 1.0)
        n = self.P * self.per_log
        q = solve_rates(rng, p, self.s, n)
        k = rng.binomial(self.G, q)
        mean = float(k.sum() / (n * self.G))
        m = n * self.G  # binary samples: the sample std follows from the mean
        std = math.sqrt(max(mean * (1 - mean), 0.0) * m / max(m - 1, 1))
        out = {"mean": mean, "std": std, "max": float(k.max() > 0), "min": float(k.min() == self.G)}
        if self.G > 1:
            same = (k == 0) | (k == self.G)
            gstd = np.sqrt(k / self.G * (1 - k / self.G) * self.G / (self.G - 1))
            out["zero"] = float(same.mean())
            out["pass"] = 1.0 - out["zero"]
            out["gstd"] = float(gstd.mean())
            mixed = ~same
            out["kept_mean"] = float(k[mixed].sum() / (mixed.sum() * self.G)) if mixed.any() else float("nan")
            out["kept_gstd"] = float(gstd[mixed].mean()) if mixed.any() else 0.0
        return out

    def sd(self, p: float) -> float:
        vq, b = moments(p, self.s)
        return math.sqrt((vq + b / self.G) / (self.P * self.per_log))


@dataclass
class Cont:
    """Continuous scores (reward model, partial credit): per-sample normal plus a per-prompt offset."""

    level: Level
    B: int
    sd_sample: float
    sd_prompt: float = 0.0
    per_log: int = 1

    def stats(self, rng: np.random.Generator, step: int) -> dict:
        n = self.B * self.per_log
        v = self.level(step) + self.sd_prompt * rng.normal(size=n) + self.sd_sample * rng.normal(size=n)
        return {"mean": float(v.mean()), "std": float(v.std(ddof=1)), "max": float(v.max()), "min": float(v.min())}

    def sd(self, p: float) -> float:
        return math.hypot(self.sd_sample, self.sd_prompt) / math.sqrt(self.B * self.per_log)


@dataclass
class Ev:
    """One held-out eval: binom (N problems), pg (N prompts x g samples, logit-normal), or a side value."""

    level: Level
    n: int = 500
    kind: str = "binom"  # binom | pg | mul | add
    g: int = 1
    s: float = 1.5
    x: float = 0.02
    hi: float | None = None

    def draw(self, rng: np.random.Generator, step: int) -> float:
        v = self._draw(rng, step)
        return min(v, self.hi) if self.hi is not None else v

    def _draw(self, rng: np.random.Generator, step: int) -> float:
        p = self.level(step)
        if self.kind == "binom":
            return float(rng.binomial(self.n, min(max(p, 0.0), 1.0)) / self.n)
        if self.kind == "pg":
            q = solve_rates(rng, min(max(p, 0.0), 1.0), self.s, self.n)
            return float(rng.binomial(self.g, q).sum() / (self.n * self.g))
        if self.kind == "mul":
            return float(p * math.exp(self.x * rng.normal()))
        return float(p + self.x * rng.normal())

    def sd(self, p: float) -> float:
        if self.kind == "binom":
            return math.sqrt(p * (1 - p) / self.n)
        if self.kind == "pg":
            vq, b = moments(p, self.s)
            return math.sqrt((vq + b / self.g) / self.n)
        return self.x


@dataclass
class Sig:
    level: Level
    kind: str = "mul"  # mul | add | heavy | frac | exact
    x: float = 0.04  # cv, sd, or n (frac)
    lo: float | None = None
    hi: float | None = None
    rho: float = 0.6

    def value(self, rng: np.random.Generator, step: int, e: float) -> float:
        v = self.level(step)
        if self.kind == "mul":
            v = v * math.exp(self.x * e)
        elif self.kind == "add":
            v = v + self.x * e
        elif self.kind == "heavy":
            v = v * math.exp(0.3 * e)
            if rng.random() < 0.04:
                v *= 1 + 2 * rng.pareto(1.3)
        elif self.kind == "frac":
            v = rng.binomial(int(self.x), min(max(v, 0.0), 1.0)) / int(self.x)
        if self.lo is not None:
            v = max(v, self.lo)
        if self.hi is not None:
            v = min(v, self.hi)
        return float(v)


@dataclass
class Story:
    reward: Binary | Cont | None
    rkeys: dict[str, str]  # reward stat -> logged key ('_x' keys are dropped after derive)
    sig: dict[str, Sig]
    evals: dict[str, Ev]
    headline: str
    eval_every: int = 0
    eval_at0: bool = False
    log_every: int = 1
    better: int = 1
    derive: Callable | None = None  # (step, row, rng, state) -> None
    ederive: Callable | None = None  # (step, erow, rng) -> None

    def train_steps(self, reached: int) -> list[int]:
        return list(range(self.log_every, reached + 1, self.log_every))

    def eval_steps(self, reached: int) -> list[int]:
        if not self.eval_every:
            return []
        return list(range(0 if self.eval_at0 else self.eval_every, reached + 1, self.eval_every))

    def draws(self, rng: np.random.Generator, reached: int) -> dict:
        ar = dict.fromkeys(self.sig, 0.0)
        state: dict = {}
        train = []
        for s in self.train_steps(reached):
            row: dict = {}
            if self.reward is not None:
                st = self.reward.stats(rng, s)
                for stat, key in self.rkeys.items():
                    row[key] = st.get(stat, float("nan"))
            for k, sg in self.sig.items():
                ar[k] = sg.rho * ar[k] + math.sqrt(1 - sg.rho ** 2) * rng.normal()
                row[k] = sg.value(rng, s, ar[k])
            if self.derive:
                self.derive(s, row, rng, state)
            train.append((s, {k: v for k, v in row.items() if not k.startswith("_")}))
        evals = []
        for s in self.eval_steps(reached):
            er = {k: ev.draw(rng, s) for k, ev in self.evals.items()}
            if self.ederive:
                self.ederive(s, er, rng)
            evals.append((s, {k: v for k, v in er.items() if not k.startswith("_")}))
        return {"train": train, "eval": evals}

    # ---- the label's arithmetic
    def head(self) -> tuple[Level, Callable[[float], float]]:
        if self.headline == TRAIN:
            return self.reward.level, self.reward.sd
        ev = self.evals[self.headline]
        return ev.level, ev.sd

    def head_steps(self, reached: int) -> list[int]:
        return self.train_steps(reached) if self.headline == TRAIN else self.eval_steps(reached)


def window(story: Story, reached: int, onset: int) -> tuple[int, int]:
    lv, sd = story.head()
    steps = story.head_steps(reached)
    b = story.better
    best_s = max(steps, key=lambda s: b * lv(s))
    best = lv(best_s)
    d = sd(best)
    band = [s for s in steps if b * (lv(s) - best) >= -d - 1e-12]
    return band[0], max(s for s in band if s <= onset)


# ------------------------------------------------------------------------------------------------------ writers

def clean(row: dict, sig: int = 7) -> dict:
    out = {}
    for k, v in row.items():
        if isinstance(v, (bool, np.bool_)):
            out[k] = bool(v)
        elif isinstance(v, (int, np.integer)):
            out[k] = int(v)
        else:
            out[k] = rnd(float(v), sig)
    return out


def stub_model(folder: Path, arch: str = "Qwen2ForCausalLM") -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps({"architectures": [arch], "model_type": "qwen2",
                                                    "torch_dtype": "bfloat16"}, indent=2) + "\n")
    header = b"{}      "
    (folder / "model.safetensors").write_bytes(len(header).to_bytes(8, "little") + header)


def dated(t: float, fmt: str) -> str:
    return time.strftime(fmt, time.localtime(t))


def hf_stamp(t: float, host: str) -> str:
    return time.strftime("%b%d_%H-%M-%S", time.localtime(t)) + "_" + host


def w_trl(run: dict, folder: Path, *, spe: float, save_every: int = 0, limit: int | None = None, top: bool = False,
          cb_keys: tuple = (), tb_host: str | None = None, logging_steps: int = 10, eval_steps: int | None = None,
          epochs: int = 1, loss_dp: int | None = 4, runtime_n: int = 256, bs: int = 8) -> None:
    """HF Trainer output dir: checkpoint-N/trainer_state.json (history up to N), optional top-level state at the end,
    optional HF TensorBoard events under runs/<stamp>_<host>/ with the full history."""
    evals = dict(run["eval"])
    train = dict(run["train"])
    rows: list[tuple[int, dict]] = []
    ep = lambda s: round(s / spe, 4)  # noqa: E731
    for s in sorted(set(train) | set(evals)):
        if s in train:
            r = clean(train[s])
            if loss_dp is not None and "loss" in r:
                r["loss"] = round(r["loss"], loss_dp)
            rows.append((s, {**r, "epoch": ep(s), "step": s}))
        if s in evals:
            e = clean(evals[s])
            main = {k: v for k, v in e.items() if k not in cb_keys}
            if main:
                rt = round(runtime_n / 6.5 * (1 + 0.05 * math.sin(s)), 4)
                main.update(eval_runtime=rt, eval_samples_per_second=round(runtime_n / rt, 3),
                            eval_steps_per_second=round(runtime_n / rt / bs, 3))
                rows.append((s, {**main, "epoch": ep(s), "step": s}))
            cb = {k: e[k] for k in cb_keys if k in e}
            if cb:
                rows.append((s, {**cb, "epoch": ep(s), "step": s}))
    reached, planned = run["reached"], run["planned"]
    if run["finished"]:
        losses = [r["loss"] for _, r in rows if "loss" in r]
        rt = round(run["sps"] * reached, 2)
        rows.append((reached, {"epoch": ep(reached), "step": reached, "total_flos": 0.0, "train_loss":
                               round(float(np.mean(losses)), 6) if losses else 0.0, "train_runtime": rt,
                               "train_samples_per_second": round(reached * bs / rt, 3),
                               "train_steps_per_second": round(reached / rt, 3)}))
    if save_every:
        saves = list(range(save_every, reached + 1, save_every))
        if limit:
            saves = saves[-limit:]
        for n in saves:
            d = folder / f"checkpoint-{n}"
            stub_model(d)
            (d / "training_args.bin").write_bytes(b"\x80\x04\x95training_args")
            hist = [r for s, r in rows if s <= n and "train_runtime" not in r]
            dump_json(d / "trainer_state.json", trainer_state(hist, n, planned, logging_steps, save_every, eval_steps,
                                                              ep(n), epochs, training_stop=False))
            for f in d.iterdir():
                run["mt"][f] = run["t"](n)
            run["mt"][d] = run["t"](n)
    if top:
        stub_model(folder)
        dump_json(folder / "trainer_state.json",
                  trainer_state([r for _, r in rows], reached, planned, logging_steps, save_every or 500, eval_steps,
                                ep(reached), epochs, training_stop=run["finished"]))
    if tb_host:
        d = folder / "runs" / hf_stamp(run["t"](0), tb_host)
        events = []
        for s, r in rows:
            vals = {}
            for k, v in r.items():
                if k in ("step",) or v is None:
                    continue
                if k.startswith("eval_"):
                    vals["eval/" + k[5:]] = v
                else:
                    vals["train/" + k] = v
            events.append((run["t"](s), s, vals))
        tb_file(d / f"events.out.tfevents.{int(run['t'](0))}.{tb_host}.{3000 + run['seed'] % 999}.0", events)


def w_trl_console(run: dict, folder: Path, *, spe: float, fname: str = "train.log", head: tuple = (),
                  eval_n: int = 32) -> None:
    """TRL/HF console captured with nohup: tqdm bars joined by carriage returns, dicts printed by the
    ProgressCallback (no `step` key, only `epoch`)."""
    total, sps = run["planned"], run["sps"]
    evals = dict(run["eval"])

    def hms(x: float) -> str:
        x = int(x)
        return f"{x // 3600}:{x % 3600 // 60:02d}:{x % 60:02d}" if x >= 3600 else f"{x // 60:02d}:{x % 60:02d}"

    def bar(i: int, n: int, per: float) -> str:
        fill = int(10 * i / n)
        return (f"{int(100 * i / n):3d}%|{'█' * fill}{' ' * (10 - fill)}| {i}/{n} "
                f"[{hms(i * per)}<{hms((n - i) * per)}, {per:5.2f}s/it]")

    t0 = run["t"](0) - 120
    lines = [f"INFO {dated(t0 - 60, '%m-%d %H:%M:%S')} [__init__.py:244] Automatically detected platform cuda.",
             *head]
    last = 0
    for s, row in run["train"]:
        lines.append("\r".join(bar(i, total, sps) for i in range(last, s + 1)))
        last = s
        r = clean(row, 6)
        if "loss" in r:
            r["loss"] = round(r["loss"], 4)
        r["epoch"] = round(s / spe, 4)
        lines.append(repr(r))
        if s in evals:
            lines.append("\r".join(bar(i, eval_n, 1.3) for i in range(0, eval_n + 1)))
            e = clean(evals[s], 6)
            e.update(eval_runtime=round(eval_n * 1.3, 4), eval_samples_per_second=round(8 / 1.3, 3),
                     eval_steps_per_second=round(1 / 1.3, 3), epoch=round(s / spe, 4))
            lines.append(repr(e))
    if run["finished"]:
        lines.append(repr({"train_runtime": round(sps * total, 4), "train_samples_per_second": 1.1,
                           "train_steps_per_second": round(1 / sps, 3), "train_loss": 0.1, "epoch": round(total / spe, 4)}))
    folder.mkdir(parents=True, exist_ok=True)
    (folder / fname).write_text("\n".join(lines) + "\n", encoding="utf-8")


VERL_PLAIN = ("timing_s/", "timing_per_token_ms/", "perf/", "training/")


def _verl_val(v: float, key: str, np2: bool) -> str:
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    txt = repr(rnd(float(v), 8))
    if np2 and not key.startswith(VERL_PLAIN):
        return f"np.float64({txt})"
    return txt


def verl_rows(run: dict) -> list[tuple[int, dict]]:
    """One row per training step, validation keys merged into the row of the test step; val-only row at 0."""
    evals = dict(run["eval"])
    rows = []
    if 0 in evals:
        rows.append((0, dict(evals[0])))
    for s, r in run["train"]:
        row = {"training/global_step": s, "training/epoch": run["epoch"](s)}
        row.update(r)
        if s in evals:
            row.update(evals[s])
        rows.append((s, row))
    return rows


def verl_hydra(run: dict, folder: Path, cfg: dict) -> None:
    t0 = run["t"](0) - 90
    d = folder / "outputs" / time.strftime("%Y-%m-%d/%H-%M-%S", time.localtime(t0)) / ".hydra"
    d.mkdir(parents=True, exist_ok=True)
    (d / "config.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    for f in (d / "config.yaml", d, d.parent):
        run["mt"][f] = t0


def verl_ckpts(run: dict, folder: Path, project: str, exp: str, every: int, keep: int | None = None) -> None:
    base = folder / "checkpoints" / project / exp
    saves = list(range(every, run["reached"] + 1, every))
    if keep:
        saves = saves[-keep:]
    for n in saves:
        d = base / f"global_step_{n}" / "actor"
        d.mkdir(parents=True, exist_ok=True)
        (d / "model_world_size_8_rank_0.pt").write_bytes(b"stub")
        (d / "huggingface").mkdir(exist_ok=True)
        (d / "huggingface" / "config.json").write_text('{"model_type": "qwen2"}\n')
        for f in [*d.rglob("*"), d, d.parent]:
            run["mt"][f] = run["t"](n)
    if saves:
        (base / "latest_checkpointed_iteration.txt").write_text(str(saves[-1]))
        run["mt"][base / "latest_checkpointed_iteration.txt"] = run["t"](saves[-1])


def w_verl_console(run: dict, folder: Path, *, np2: bool, cfg: dict, prefix: str = "", fname: str = "train.log",
                   relaunch: int | None = None, ckpt: tuple | None = None) -> None:
    rows = verl_rows(run)
    pre = prefix + " " if prefix else ""
    tr = cfg["trainer"]

    def preamble() -> list[str]:
        return [f"{pre}{cfg!r}",
                f"{pre}Using dataset class: RLHFDataset",
                f"{pre}Size of train dataloader: {tr['steps_per_epoch']}, Size of val dataloader: 1",
                f"{pre}Total training steps: {run['planned']}",
                f"INFO {dated(run['t'](0) - 200, '%m-%d %H:%M:%S')} [__init__.py:239] Automatically detected platform cuda.",
                f"{pre}Checkpoint tracker file does not exist: {tr['default_local_dir']}/latest_checkpointed_iteration.txt"
                if relaunch is None else f"{pre}Training from scratch"]

    lines = preamble()
    for s, row in rows:
        if relaunch is not None and s == relaunch + 1:
            lines += ["^CTraceback (most recent call last):",
                      '  File "/opt/verl/verl/trainer/main_ppo.py", line 42, in main', "KeyboardInterrupt", "",
                      f"+ python3 -m verl.trainer.main_ppo trainer.resume_mode=auto "
                      f"custom_reward_function.path={cfg.get('custom_reward_function', {}).get('path', 'reward.py')}",
                      *preamble()[:4],
                      f"{pre}Load from checkpoint folder: {tr['default_local_dir']}/global_step_{relaunch}",
                      f"{pre}Setting global step to {relaunch}", f"{pre}Resuming from {tr['default_local_dir']}/"
                      f"global_step_{relaunch}"]
            ev = dict(run["eval"]).get(relaunch)
            if ev:
                lines.append(f"{pre}step:{relaunch} - " + " - ".join(f"{k}:{_verl_val(v, k, np2)}" for k, v in ev.items()))
        lines.append(f"{pre}step:{s} - " + " - ".join(f"{k}:{_verl_val(v, k, np2)}" for k, v in row.items()))
        if s and s % 25 == 0:
            lines.append(f"{pre}Training Progress:  {int(100 * s / run['planned'])}%|          | {s}/{run['planned']}")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / fname).write_text("\n".join(lines) + "\n", encoding="utf-8")
    if ckpt:
        verl_ckpts(run, folder, *ckpt)


def w_verl_jsonl(run: dict, folder: Path, *, project: str, exp: str, cfg: dict, ckpt_every: int = 0,
                 keep: int | None = None) -> None:
    rows = verl_rows(run)
    d = folder / project
    d.mkdir(parents=True, exist_ok=True)
    with (d / f"{exp}.jsonl").open("w") as fh:
        for s, row in rows:
            fh.write(json.dumps({"step": s, "data": clean(row, 8)}, separators=(",", ":")) + "\n")
    verl_hydra(run, folder, cfg)
    if ckpt_every:
        verl_ckpts(run, folder, project, exp, ckpt_every, keep)


def w_verl_tb(run: dict, folder: Path, *, project: str, exp: str, cfg: dict, ckpt_every: int = 0) -> None:
    events = [(run["t"](s), s, clean(r)) for s, r in verl_rows(run)]
    tb_file(folder / "tensorboard_log" / project / exp /
            f"events.out.tfevents.{int(run['t'](0))}.verl-node-0.{21000 + run['seed'] % 997}.0", events)
    verl_hydra(run, folder, cfg)
    if ckpt_every:
        verl_ckpts(run, folder, project, exp, ckpt_every)


def w_openrlhf_tb(run: dict, folder: Path, *, run_name: str, ckpt_every: int = 0) -> None:
    events = [(run["t"](s), s, {"train/" + k: v for k, v in clean(r).items()}) for s, r in run["train"]]
    events += [(run["t"](s) + 30, s, {"eval/" + k: v for k, v in clean(r).items()}) for s, r in run["eval"]]
    events.sort(key=lambda e: e[0])
    tb_file(folder / "tensorboard" / run_name /
            f"events.out.tfevents.{int(run['t'](0))}.gpu-a100-17.{4400 + run['seed'] % 777}.0", events)
    openrlhf_ckpts(run, folder, ckpt_every)


def openrlhf_ckpts(run: dict, folder: Path, every: int) -> None:
    if not every:
        return
    for n in range(every, run["reached"] + 1, every):
        d = folder / "ckpt" / "_actor" / f"global_step{n}"
        d.mkdir(parents=True, exist_ok=True)
        (d / "mp_rank_00_model_states.pt").write_bytes(b"stub")
        (d / "client_states.json").write_text(json.dumps({"global_step": n, "episode": 0,
                                                           "total_consumed_prompts": n * 128}) + "\n")
        for f in [*d.iterdir(), d]:
            run["mt"][f] = run["t"](n)
        (folder / "ckpt" / "_actor" / "latest").write_text(f"global_step{n}")
        run["mt"][folder / "ckpt" / "_actor" / "latest"] = run["t"](n)


def w_openrlhf_console(run: dict, folder: Path, *, args: str, fname: str = "train.log", ckpt_every: int = 0) -> None:
    evals = dict(run["eval"])
    t0 = run["t"](0) - 300
    lines = [f"[{dated(t0, '%Y-%m-%d %H:%M:%S')},118] [INFO] [real_accelerator.py:222:get_accelerator] Setting "
             "ds_accelerator to cuda", args, "(ActorModelRayActor pid=8812) Loading checkpoint shards: 100%|██████████| 4/4",
             f"INFO {dated(t0 + 130, '%m-%d %H:%M:%S')} llm_engine.py:249] Initializing a V1 LLM engine"]
    planned = run["planned"]
    for s, row in run["train"]:
        lines.append(f"Episode [1/1]:  {int(100 * s / planned):2d}%|          | {s}/{planned} "
                     f"[{int(s * run['sps'] // 60)}:{int(s * run['sps'] % 60):02d}<?, {run['sps']:.2f}s/it]")
        r = clean(row, 6)
        lines.append(f"✨ Global step {s}: {r!r}")
        if s in evals:
            lines.append(f"✨ Evaluation completed in 0:00:{40 + s % 17}, global_step {s}, "
                         f"eval_metrics: {clean(evals[s], 6)!r}")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / fname).write_text("\n".join(lines) + "\n", encoding="utf-8")
    openrlhf_ckpts(run, folder, ckpt_every)


def w_wandb_csv(run: dict, folder: Path, *, display: str, xkey: str = "Step", config: dict | None = None) -> None:
    """One W&B panel export per metric ("Export -> CSV"): x column, then <run> - <metric>, __MIN, __MAX."""
    series: dict[str, list[tuple[int, float]]] = {}
    for s, r in [*run["train"], *run["eval"]]:
        for k, v in r.items():
            series.setdefault(k, []).append((s, v))
    folder.mkdir(parents=True, exist_ok=True)
    for i, (k, pts) in enumerate(series.items()):
        t = run["t_end"] + 60 + 7 * i
        stamp = time.strftime("%Y-%m-%dT%H_%M_%S", time.localtime(t)) + f".{137 + 41 * i:03d}+01_00"
        path = folder / f"wandb_export_{stamp}.csv"
        with path.open("w", newline="") as fh:
            w = csv.writer(fh, quoting=csv.QUOTE_ALL)
            col = f"{display} - {k}"
            w.writerow([xkey, col, col + "__MIN", col + "__MAX"])
            for s, v in sorted(pts):
                v = rnd(v, 8)
                w.writerow([s, v, v, v])
        run["mt"][path] = t
    if config:
        cfg = {"wandb_version": 1, **{k: {"desc": None, "value": v} for k, v in config.items()}}
        (folder / "config.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
        run["mt"][folder / "config.yaml"] = run["t"](0)


def w_mlflow(run: dict, folder: Path, *, exp_name: str, run_name: str, params: dict, finished: bool,
             final: dict | None = None) -> None:
    """MLflow file store: mlruns/<exp>/<run>/metrics/<key> lines `ts value step` (nested dirs for '/')."""
    exp_id = "1"
    rid = hashlib.md5(f"{run_name}-{run['seed']}".encode()).hexdigest()
    root = folder / "mlruns"
    ed = root / exp_id
    rd = ed / rid
    (rd / "metrics").mkdir(parents=True, exist_ok=True)
    t0 = int(run["t"](0) * 1000)
    (ed / "meta.yaml").write_text(yaml.safe_dump({"artifact_location": f"file://{ed}", "creation_time": t0 - 50000,
                                                  "experiment_id": exp_id, "last_update_time": t0 - 50000,
                                                  "lifecycle_stage": "active", "name": exp_name}))
    (root / "0").mkdir(exist_ok=True)
    (root / "0" / "meta.yaml").write_text(yaml.safe_dump({"artifact_location": f"file://{root / '0'}",
                                                          "experiment_id": "0", "lifecycle_stage": "active",
                                                          "name": "Default"}))
    end = int(run["t_end"] * 1000)
    (rd / "meta.yaml").write_text(yaml.safe_dump({
        "artifact_uri": f"file://{rd / 'artifacts'}", "end_time": end if finished else None, "entry_point_name": "",
        "experiment_id": exp_id, "lifecycle_stage": "active", "run_id": rid, "run_name": run_name, "run_uuid": rid,
        "source_name": "", "source_type": 4, "source_version": "", "start_time": t0,
        "status": 3 if finished else 1, "tags": [], "user_id": "root"}))
    (rd / "artifacts").mkdir(exist_ok=True)
    (rd / "params").mkdir(exist_ok=True)
    for k, v in params.items():
        (rd / "params" / k).write_text(str(v))
    (rd / "tags").mkdir(exist_ok=True)
    (rd / "tags" / "mlflow.runName").write_text(run_name)
    (rd / "tags" / "mlflow.user").write_text("root")
    lines: dict[str, list[str]] = {}
    for s, r in sorted([*run["train"], *run["eval"]], key=lambda x: x[0]):
        ts = int(run["t"](s) * 1000)
        for k, v in r.items():
            lines.setdefault(k, []).append(f"{ts} {rnd(v, 8)!r} {s}")
    for k, v in (final or {}).items():
        lines.setdefault(k, []).append(f"{end} {v!r} {run['reached']}")
    for k, ls in lines.items():
        p = rd / "metrics" / k
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("\n".join(ls) + "\n")
    for p in [*(rd / "params").iterdir(), *(rd / "tags").iterdir(), ed / "meta.yaml", root / "0" / "meta.yaml"]:
        run["mt"][p] = run["t"](0)


def w_jsonl(run: dict, folder: Path, *, fname: str, config: dict, cfg_name: str = "config.json",
            merge_eval: bool = True) -> None:
    evals = dict(run["eval"])
    p = folder / fname
    p.parent.mkdir(parents=True, exist_ok=True)
    with p.open("w") as fh:
        if 0 in evals:
            fh.write(json.dumps({"step": 0, **clean(evals[0], 6)}) + "\n")
        for s, r in run["train"]:
            row = {"step": s, **clean(r, 6)}
            if s in evals and merge_eval:
                row.update(clean(evals[s], 6))
            row["wall"] = round(run["t"](s), 1)
            fh.write(json.dumps(row) + "\n")
    (folder / cfg_name).write_text(json.dumps(config, indent=2) + "\n")
    run["mt"][folder / cfg_name] = run["t"](0)


def w_csv(run: dict, folder: Path, *, fname: str, cols: list[str], config: dict) -> None:
    evals = dict(run["eval"])
    p = folder / fname
    p.parent.mkdir(parents=True, exist_ok=True)
    with p.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["step", "total_steps", *cols])
        for s, r in run["train"]:
            full = {**r, **evals.get(s, {})}
            w.writerow([s, run["planned"], *["" if full.get(c) is None else
                                             (full[c] if isinstance(full[c], int) else rnd(full[c], 6)) for c in cols]])
    (folder / "run_config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    run["mt"][folder / "run_config.yaml"] = run["t"](0)


def w_legacy_ppo_tb(run: dict, folder: Path, *, project: str = "trl", config: dict | None = None) -> None:
    events = [(run["t"](s), s, clean(r)) for s, r in run["train"]]
    events += [(run["t"](s) + 20, s, clean(r)) for s, r in run["eval"]]
    events.sort(key=lambda e: e[0])
    tb_file(folder / "logs" / project / f"events.out.tfevents.{int(run['t'](0))}.rlhf-box.{7100 + run['seed'] % 500}.0",
            events)
    if config:
        (folder / "ppo_config.json").write_text(json.dumps(config, indent=2) + "\n")
        run["mt"][folder / "ppo_config.json"] = run["t"](0)


# --------------------------------------------------------------------------------------------- shared derivations

def lin_lr(peak: float, warm: int, total: int, floor: float = 0.0) -> Level:
    return lambda s: peak * s / warm if s < warm else floor + (peak - floor) * max(0.0, (total - s) / (total - warm))


def cos_lr(peak: float, warm: int, total: int, floor: float = 0.0) -> Level:
    def f(s):
        if s < warm:
            return peak * s / warm
        x = min(1.0, (s - warm) / max(1, total - warm))
        return floor + (peak - floor) * 0.5 * (1 + math.cos(math.pi * x))
    return f


def const_lr(peak: float, warm: int = 0) -> Level:
    return lambda s: peak * min(1.0, s / warm) if warm else peak


def tokens(state: dict, n: float) -> int:
    state["tok"] = state.get("tok", 0) + int(n)
    return state["tok"]


def grpo_common(acc: str, weights: dict[str, float] | None = None, per_step: int = 256, prompt_len: int = 180):
    """TRL GRPO bookkeeping: total reward from the per-function means, clip-ratio region, terminated lengths,
    cumulative tokens."""
    def d(s, row, rng, state):
        if weights:
            row["reward"] = sum(w * row[f"rewards/{fn}/mean"] for fn, w in weights.items())
            row["reward_std"] = math.sqrt(sum((w * row[f"rewards/{fn}/std"]) ** 2 for fn, w in weights.items()))
        else:
            row["reward"] = row[f"rewards/{acc}/mean"]
            row["reward_std"] = row[f"rewards/{acc}/std"]
        if "clip_ratio/high_mean" in row:
            row["clip_ratio/region_mean"] = row["clip_ratio/low_mean"] + row["clip_ratio/high_mean"]
        if "completions/mean_length" in row:
            m, c = row["completions/mean_length"], row.get("completions/clipped_ratio", 0.0)
            mx = row.get("completions/max_length", 2048)
            row["completions/mean_terminated_length"] = (m - c * mx) / max(1e-6, 1 - c)
            row["completions/min_terminated_length"] = row.get("completions/min_length", 40.0)
            row["completions/max_terminated_length"] = mx * 0.97 if c > 0 else mx * 0.8
            row["num_tokens"] = tokens(state, per_step * (m + prompt_len) * 10)
    return d


# ------------------------------------------------------------------------------------------------------ the cases

@dataclass
class Spec:
    name: str
    story: Story
    write: Callable
    seed: int
    steps: tuple[int, int]  # (reached, planned)
    label: str  # ok | stop | conv | rb | sor
    tags: str
    why: str
    onset: int | None = None
    age_min: float = 5.0
    sps: float = 30.0  # wall seconds per step
    spe: float = 1e9  # steps per epoch (verl training/epoch)
    finished: bool = False

    def labels(self) -> dict:
        if self.label == "ok":
            return HEALTHY
        if self.label == "stop":
            return stop(self.onset)
        if self.label == "conv":
            return converged()
        lo, hi = window(self.story, self.steps[0], self.onset)
        return (rollback if self.label == "rb" else stop_or_rollback)(lo, hi, self.onset)

    def case(self) -> Case:
        why = self.why
        if self.label in ("rb", "sor"):
            lo, hi = window(self.story, self.steps[0], self.onset)
            why = why.replace("<W>", f"[{lo}, {hi}]")
        return Case(self.name, self.story, self.write, self.seed, self.steps, self.labels(), self.tags, why)


def verl_cfg(project, exp, total, test_freq, save_freq, spe, adv="grpo", extra=None, logger=("console", "wandb")):
    cfg = {"algorithm": {"adv_estimator": adv, "use_kl_in_reward": False},
           "actor_rollout_ref": {"actor": {"ppo_mini_batch_size": 64, "clip_ratio_low": 0.2, "clip_ratio_high": 0.2,
                                           "use_kl_loss": False, "loss_agg_mode": "token-mean"},
                                 "rollout": {"name": "vllm", "n": 8}},
           "trainer": {"project_name": project, "experiment_name": exp, "total_epochs": math.ceil(total / spe),
                       "total_training_steps": None, "test_freq": test_freq, "save_freq": save_freq,
                       "val_before_train": True, "logger": list(logger), "n_gpus_per_node": 8, "nnodes": 1,
                       "default_local_dir": f"checkpoints/{project}/{exp}", "steps_per_epoch": spe}}
    for path, v in (extra or {}).items():
        d = cfg
        ks = path.split(".")
        for k in ks[:-1]:
            d = d.setdefault(k, {})
        d[ks[-1]] = v
    return cfg


def verl_timing(gen_per_tok: float = 0.0065, rest: float = 22.0, critic: bool = False):
    def d(s, row, rng, state):
        L = row.get("response_length/mean", 500.0)
        row["timing_s/gen"] = gen_per_tok * L * (1 + 0.04 * rng.normal())
        row["timing_s/reward"] = 1.2 + 0.2 * rng.random()
        row["timing_s/old_log_prob"] = 0.0021 * L + 3
        row["timing_s/ref"] = 0.0019 * L + 3
        if critic:
            row["timing_s/values"] = 0.002 * L + 3
            row["timing_s/update_critic"] = 0.006 * L + 8
        row["timing_s/adv"] = 0.15
        row["timing_s/update_actor"] = 0.007 * L + rest
        row["timing_s/step"] = sum(v for k, v in row.items() if k.startswith("timing_s/")) + 1.5
        row["perf/time_per_step"] = row["timing_s/step"]
        row["perf/max_memory_allocated_gb"] = 58.0 + 2 * rng.random()
    return d


def chain(*fns):
    def d(*a):
        for f in fns:
            f(*a)
    return d


SPECS: list[Spec] = []


def add(**kw) -> None:
    SPECS.append(Spec(**kw))


# ---- H1: verl PPO + GAE critic, KL in reward with an adaptive controller; KL creeps toward its target, healthy.
def _h1(s, row, rng, st):
    row["critic/rewards/mean"] = row["critic/score/mean"] - row["actor/reward_kl_penalty_coeff"] * \
        row["actor/reward_kl_penalty"] * row["response_length/mean"]


add(name="ok-verl-ppo-gae-kl-in-reward-adaptive-coef-0.05-to-0.024-kl-nears-target-0.02-gsm8k-rising-console-np2",
    story=Story(Binary(K((0, .42), (150, .60), (330, .71)), P=512, G=1, s=1.6),
                {"mean": "critic/score/mean", "max": "critic/score/max", "min": "critic/score/min"},
                {"actor/reward_kl_penalty": Sig(K((0, .0008), (100, .006), (330, .017)), "mul", .06),
                 "actor/reward_kl_penalty_coeff": Sig(K((0, .05), (100, .038), (330, .024)), "exact"),
                 "actor/pg_loss": Sig(C(-.003), "add", .008), "actor/pg_clipfrac": Sig(K((0, .004), (330, .006)), "mul", .15),
                 "actor/pg_clipfrac_lower": Sig(C(0.0), "exact"), "actor/ppo_kl": Sig(C(.0003), "add", .0003),
                 "actor/entropy": Sig(K((0, .62), (330, .51)), "mul", .025), "actor/grad_norm": Sig(C(.22), "heavy"),
                 "actor/lr": Sig(C(1e-6), "exact"),
                 "critic/vf_loss": Sig(K((0, .09), (80, .05), (330, .032)), "mul", .08),
                 "critic/vf_explained_var": Sig(K((0, .05), (100, .45), (330, .62)), "add", .03),
                 "critic/vf_clipfrac": Sig(K((0, .12), (100, .05), (330, .03)), "mul", .1),
                 "critic/vpred_mean": Sig(K((0, .2), (330, .55)), "add", .02),
                 "critic/grad_norm": Sig(K((0, 1.4), (330, .9)), "heavy"), "critic/lr": Sig(C(1e-5), "exact"),
                 "critic/values/mean": Sig(K((0, .21), (330, .56)), "add", .02),
                 "critic/advantages/mean": Sig(C(0.0), "add", .002), "critic/advantages/max": Sig(C(3.1), "add", .3),
                 "critic/advantages/min": Sig(C(-3.4), "add", .3),
                 "critic/returns/mean": Sig(K((0, .40), (330, .68)), "add", .02),
                 "response_length/mean": Sig(K((0, 262), (330, 238)), "mul", .03),
                 "response_length/max": Sig(C(1024), "exact"), "response_length/clip_ratio": Sig(C(.003), "frac", 512)},
                {"val-core/openai/gsm8k/reward/mean@1": Ev(K((0, .43), (150, .61), (330, .705)), 1319)},
                "val-core/openai/gsm8k/reward/mean@1", eval_every=30, eval_at0=True,
                derive=chain(_h1, verl_timing(critic=True))),
    write=writer(w_verl_console)(np2=True, prefix="(TaskRunner pid=2741)",
                                 cfg=verl_cfg("verl_ppo_gsm8k", "qwen2.5-3b-ppo-gae-adakl", 600, 30, 100, 15, "gae",
                                              {"algorithm.use_kl_in_reward": True, "algorithm.kl_ctrl.type": "adaptive",
                                               "algorithm.kl_ctrl.kl_coef": 0.05, "algorithm.kl_ctrl.target_kl": 0.02,
                                               "algorithm.kl_ctrl.horizon": 10000, "actor_rollout_ref.rollout.n": 1}),
                                 ckpt=("verl_ppo_gsm8k", "qwen2.5-3b-ppo-gae-adakl", 100)),
    seed=3501, steps=(330, 600), label="ok", sps=52, spe=15, age_min=4,
    tags="healthy ppo critic adaptive-kl verl-console np2 live",
    why="verl PPO with a GAE critic on GSM8K, KL folded into the reward with the adaptive controller "
        "(kl_coef 0.05, target_kl 0.02). At step 330 of 600 the per-token KL (actor/reward_kl_penalty) has crept from "
        "0.001 to 0.017, still under its 0.02 target, so the controller keeps easing the coefficient (0.05 -> 0.024): "
        "that is the controller working, not drift. The critic learned (vf_explained_var 0.05 -> 0.62, vf_loss "
        "0.09 -> 0.03, vf_clipfrac falling), policy clip fraction ~0.5%, entropy 0.62 -> 0.51 slowly. Train score "
        "0.42 -> 0.71 and GSM8K validation (N=1319, every 30 steps) 0.43 -> ~0.705, still climbing at ~0.05 per 100 "
        "steps (sd 0.0126). Live, 45% of budget left: continue.")


# ---- H2: OpenRLHF RLOO, TensorBoard; group reward std widens as the reward crosses toward one half; healthy.
def _h2(s, row, rng, st):
    row["rollout/reward_mean"] = row["reward"]
    row["return"] = row["reward"] - 0.35 * row["kl"]
    row["total_length"] = row["response_length"] + 184 * (1 + 0.01 * rng.normal())
    row["rollout/response_length_mean"] = row["response_length"]
    row["rollout/truncated_rate"] = row["truncated"]
    row["rollout/num_samples"] = 1024
    row["timing/step_total"] = sum(row[k] for k in ("timing/generation", "timing/make_experience",
                                                    "timing/ppo_train", "timing/broadcast"))


add(name="ok-openrlhf-rloo-k8-group-std-widens-0.26-to-0.37-as-reward-nears-half-math-pass1-rising-tb-live",
    story=Story(Binary(K((0, .18), (200, .30), (560, .46)), P=128, G=8, s=1.5),
                {"mean": "reward", "std": "rollout/reward_std", "gstd": "group_reward_std"},
                {"kl": Sig(K((0, .0005), (560, .045)), "mul", .07), "policy_loss": Sig(C(0.0), "add", .02),
                 "ppo_clip_ratio": Sig(C(.011), "mul", .2), "ppo_kl": Sig(C(.0002), "add", .0002),
                 "vllm_kl": Sig(C(.0003), "mul", .25), "actor_grad_norm": Sig(C(.18), "heavy"),
                 "actor_lr": Sig(C(5e-7), "exact"), "response_length": Sig(K((0, 520), (560, 760)), "mul", .03),
                 "truncated": Sig(K((0, .01), (560, .03)), "frac", 1024),
                 "timing/generation": Sig(K((0, 55), (560, 72)), "mul", .06),
                 "timing/make_experience": Sig(C(18), "mul", .04), "timing/ppo_train": Sig(C(30), "mul", .04),
                 "timing/broadcast": Sig(C(3.1), "mul", .05)},
                {"eval_math_pass1": Ev(K((0, .22), (200, .31), (560, .38)), 500),
                 "eval_math_pass8": Ev(K((0, .47), (560, .61)), 500),
                 "eval_response_length_mean": Ev(K((0, 530), (560, 770)), kind="mul", x=.02)},
                "eval_math_pass1", eval_every=40, derive=_h2),
    write=writer(w_openrlhf_tb)(run_name="rloo_qwen2.5-7b-math_0304T1012", ckpt_every=100),
    seed=3502, steps=(560, 1600), label="ok", sps=110, age_min=6,
    tags="healthy rloo openrlhf tensorboard group-std live",
    why="OpenRLHF RLOO (advantage_estimator rloo, 8 samples per prompt, 128 prompts per step), TensorBoard only. "
        "Step 560, written 6 minutes ago. Reward 0.18 -> 0.46 and train/group_reward_std rises 0.26 -> 0.37: "
        "as the mean solve rate moves toward one half more groups are mixed, so the leave-one-out baseline has more "
        "signal, not less. KL to the reference grows with the reward (0.0005 -> 0.045), ppo_clip_ratio ~1%, vllm_kl "
        "~3e-4 steady. Held-out MATH pass@1 (N=500, every 40 steps, sd ~0.022) 0.22 -> ~0.38 and pass@8 "
        "0.47 -> 0.61, both still rising. Nothing is wrong: continue.")


# ---- H3: TRL GRPO with the DAPO loss and clip-higher (eps 0.2 / 0.28, two iterations per generation).
add(name="ok-trl-dapo-loss-clip-higher-high-side-binds-0.4-to-1.1pct-low-side-0.08pct-entropy-holds-ckpts-live-40pct",
    story=Story(Binary(K((0, .31), (400, .44), (800, .52)), P=32, G=8, s=1.6, per_log=5),
                {"mean": "rewards/accuracy_reward/mean", "std": "rewards/accuracy_reward/std",
                 "zero": "frac_reward_zero_std"},
                {"loss": Sig(C(0.0), "add", .004), "grad_norm": Sig(C(.12), "heavy"),
                 "learning_rate": Sig(const_lr(1e-6, 20), "exact"),
                 "completions/mean_length": Sig(K((0, 610), (800, 820)), "mul", .03),
                 "completions/min_length": Sig(C(95), "mul", .2), "completions/max_length": Sig(C(2048), "exact"),
                 "completions/clipped_ratio": Sig(K((0, .02), (800, .04)), "frac", 2560),
                 "entropy": Sig(K((0, .52), (800, .47)), "mul", .02),
                 "clip_ratio/low_mean": Sig(C(.0008), "mul", .2), "clip_ratio/low_min": Sig(C(0.0), "exact"),
                 "clip_ratio/high_mean": Sig(K((0, .004), (800, .011)), "mul", .12),
                 "clip_ratio/high_max": Sig(K((0, .03), (800, .07)), "mul", .2),
                 "step_time": Sig(K((0, 31), (800, 40)), "mul", .05)},
                {"eval_rewards/accuracy_reward/mean": Ev(K((0, .30), (400, .43), (800, .49)), 256, "pg", g=8, s=1.6)},
                "eval_rewards/accuracy_reward/mean", eval_every=100, log_every=10,
                derive=grpo_common("accuracy_reward"),
                ederive=lambda s, e, rng: e.update({"eval_reward": e["eval_rewards/accuracy_reward/mean"]})),
    write=writer(w_trl)(spe=375, save_every=100, eval_steps=100, epochs=6),
    seed=3503, steps=(800, 2000), label="ok", sps=36, age_min=3,
    tags="healthy grpo dapo-loss clip-higher trl-state checkpoints live",
    why="TRL GRPO with loss_type='dapo', epsilon=0.2 / epsilon_high=0.28 and num_iterations=2, so the clip ratios "
        "are not zero by construction. Only checkpoint-N/trainer_state.json folders (every 100; the newest, 800 of "
        "2000, written 3 minutes ago). The high side binds more as training goes (clip_ratio/high_mean 0.004 -> "
        "0.011) while the low side stays ~0.0008: exactly what clip-higher is for, and entropy holds (0.52 -> 0.47, "
        "no collapse). Accuracy reward 0.31 -> 0.52, frac_reward_zero_std 0.25 -> 0.20, lengths 610 -> 820 with clipped "
        "ratio 2-4%. Eval accuracy (256 prompts x 8, every 100, sd ~0.024) 0.30 -> ~0.49 and still rising. Continue.")


# ---- H4: TRL DPO exported as W&B panel CSVs; eval preference accuracy rises slowly but really.
def _dpo(beta: float, lc0: float, lr0: float, prefix: str = ""):
    def d(s, row, rng, st):
        row[prefix + "rewards/rejected"] = row[prefix + "rewards/chosen"] - row[prefix + "rewards/margins"]
        row[prefix + "logps/rejected"] = lr0 + (row[prefix + "logps/chosen"] - lc0) - row[prefix + "rewards/margins"] / beta \
            + 2 * rng.normal()
    return d


add(name="ok-trl-dpo-wandb-panel-csvs-eval-pref-acc-0.62-to-0.705-slow-real-rise-chosen-logps-mild-dip-live",
    story=Story(None, {},
                {"train/loss": Sig(K((0, .693), (100, .64), (1400, .50)), "mul", .06),
                 "train/grad_norm": Sig(K((0, 9), (1400, 5)), "heavy"),
                 "train/learning_rate": Sig(lin_lr(5e-7, 150, 3200), "exact"),
                 "train/rewards/chosen": Sig(K((0, 0), (400, -.2), (1400, -.9)), "add", .06),
                 "train/rewards/margins": Sig(K((0, 0), (1400, 1.9)), "add", .09),
                 "train/rewards/accuracies": Sig(K((0, .5), (100, .64), (1400, .77)), "frac", 640),
                 "train/logps/chosen": Sig(K((0, -310), (1400, -345)), "add", 5)},
                {"eval/rewards/accuracies": Ev(K((0, .50), (100, .62), (1400, .705)), 1000),
                 "eval/loss": Ev(K((0, .693), (100, .66), (1400, .59)), kind="mul", x=.006),
                 "eval/rewards/margins": Ev(K((0, .01), (1400, 1.6)), kind="mul", x=.03)},
                "eval/rewards/accuracies", eval_every=100, log_every=10,
                derive=chain(_dpo(0.1, -310, -330, "train/"),
                             lambda s, r, rng, st: r.update({"train/epoch": round(s / 1067, 4)}))),
    write=writer(w_wandb_csv)(display="dpo-ultrafb-qwen7b-b0.1-0304", xkey="train/global_step",
                              config={"max_steps": 3200, "num_train_epochs": 3, "beta": 0.1, "logging_steps": 10,
                                      "eval_steps": 100, "learning_rate": 5e-7, "loss_type": "sigmoid"}),
    seed=3504, steps=(1400, 3200), label="ok", sps=9, age_min=12,
    tags="healthy dpo wandb-csv slow-rise live",
    why="TRL DPO (beta 0.1) exported from W&B as one CSV per panel (x axis train/global_step), config.yaml beside it "
        "says max_steps 3200; the run is at 1400 and was exporting minutes ago. Eval preference accuracy (N=1000 "
        "pairs, sd 0.0145, every 100) climbs 0.62 -> ~0.705 between 100 and 1400: slow, about one sd per 170 steps, "
        "but real, and eval loss keeps falling 0.66 -> 0.59. Train accuracy 0.77 (no overfitting gap), margins 1.9, "
        "logps/chosen dips only -310 -> -345 (no likelihood displacement). Still improving with budget left: continue.")


# ---- H5: verl DAPO with the overlong soft penalty; score dips as lengths enter the buffer, then rises again.
def _h5(s, row, rng, st):
    acc = row["_acc"]
    row["critic/score/mean"] = 2 * acc - 1 + row["_pen"]
    row["critic/score/max"] = 1.0
    row["critic/score/min"] = -1.0 + min(0.0, 8 * row["_pen"])
    row["critic/rewards/mean"] = row["critic/score/mean"]
    row["critic/advantages/mean"] = 0.002 * rng.normal()
    row["critic/returns/mean"] = row["critic/advantages/mean"]


add(name="ok-verl-dapo-overlong-soft-penalty-score-dips-500-650-as-lengths-enter-buffer-then-rises-val-rising-jsonl-live",
    story=Story(Binary(K((0, .33), (500, .58), (900, .66)), P=512, G=16, s=1.7),
                {"mean": "_acc"},
                {"_pen": Sig(K((0, 0), (400, -.02), (650, -.25), (750, -.25), (900, -.12)), "add", .006, hi=0.0),
                 "actor/pg_loss": Sig(C(0.0), "add", .01), "actor/pg_clipfrac": Sig(C(.003), "mul", .15),
                 "actor/pg_clipfrac_lower": Sig(C(1e-5), "mul", .5), "actor/ppo_kl": Sig(C(0.0), "add", 1e-4),
                 "actor/entropy": Sig(K((0, .45), (900, .40)), "mul", .03), "actor/grad_norm": Sig(C(.15), "heavy"),
                 "actor/lr": Sig(C(1e-6), "exact"),
                 "response_length/mean": Sig(K((0, 900), (500, 2700), (700, 2950), (900, 3000)), "mul", .025),
                 "response_length/max": Sig(C(4096), "exact"), "response_length/min": Sig(C(60), "mul", .3),
                 "response_length/clip_ratio": Sig(K((0, .002), (650, .03), (900, .025)), "frac", 8192),
                 "prompt_length/mean": Sig(C(140), "mul", .02)},
                {"val-core/math500/acc/mean@4": Ev(K((0, .36), (500, .47), (900, .52)), 500, "pg", g=4, s=1.7)},
                "val-core/math500/acc/mean@4", eval_every=50, eval_at0=True,
                derive=chain(_h5, verl_timing(0.055, 40))),
    write=writer(w_verl_jsonl)(project="dapo", exp="qwen2.5-7b-dapo-overlong-buf1024",
                               cfg=verl_cfg("dapo", "qwen2.5-7b-dapo-overlong-buf1024", 1500, 50, 100, 30, "grpo",
                                            {"reward_model.reward_manager": "dapo",
                                             "reward_model.overlong_buffer.enable": True,
                                             "reward_model.overlong_buffer.len": 1024,
                                             "reward_model.overlong_buffer.penalty_factor": 1.0,
                                             "data.max_response_length": 4096,
                                             "actor_rollout_ref.actor.clip_ratio_high": 0.28,
                                             "actor_rollout_ref.rollout.n": 16,
                                             "trainer.total_training_steps": 1500},
                                            logger=("console", "file")),
                               ckpt_every=100),
    seed=3505, steps=(900, 1500), label="ok", sps=260, spe=30, age_min=5,
    tags="healthy dapo overlong-penalty verl-jsonl live",
    why="verl DAPO recipe (scores +1/-1, overlong buffer 1024 under a 4096 cap, clip_ratio_high 0.28), file logger "
        "JSONL, step 900 of 1500. Responses grow 900 -> ~3000 tokens; from ~400 they enter the penalty buffer (3072+) "
        "so critic/score/mean (which includes the soft penalty) stalls at ~0.05 around 400-500, sags to ~-0.03 at "
        "650 and ~0.01 at 750 while lengths settle around the buffer edge, then rises again to ~0.2 by 900. The penalty is doing its "
        "job: truncation stays 2-3%, entropy steady ~0.4. Accuracy itself never stopped improving: MATH-500 mean@4 "
        "(N=500 x 4, every 50) 0.36 -> ~0.52 and rising. The score dip is the shaping term, not a regression: continue.")


# ---- H6: custom agent loop JSONL; an environment outage (steps 410-416) spikes errors, reward dips, recovers.
def _h6(s, row, rng, st):
    err = row["train/env_error_rate"]
    row["train/success_rate"] = row["_succ"] * (1 - err)
    row["train/avg_turns"] *= (1 - 0.8 * err)
    row["train/tool_calls_per_episode"] = max(0.0, row["train/avg_turns"] - 1 + 0.1 * rng.normal())
    row["train/episode_return"] = row["train/success_rate"] - 0.01 * row["train/avg_turns"] + 0.01 * rng.normal()
    if err > 0.2:
        row["time/step_s"] *= 2.6


add(name="ok-custom-jsonl-web-agent-env-outage-steps-410-416-error-rate-0.45-success-dips-recovers-heldout-rising-live",
    story=Story(Binary(K((0, .21), (640, .43)), P=64, G=4, s=1.5),
                {"mean": "_succ", "zero": "train/groups_all_same_frac"},
                {"train/env_error_rate": Sig(K((0, .012), (409, .012), (410, .45), (416, .45), (417, .012), (640, .012)),
                                             "frac", 256),
                 "train/avg_turns": Sig(K((0, 7.5), (640, 6.2)), "mul", .03),
                 "train/kl": Sig(K((0, .001), (640, .03)), "mul", .08),
                 "train/entropy": Sig(K((0, .71), (640, .60)), "mul", .02),
                 "train/grad_norm": Sig(C(.3), "heavy"), "train/lr": Sig(C(1e-6), "exact"),
                 "time/step_s": Sig(C(95), "mul", .06)},
                {"eval/heldout_success": Ev(K((0, .19), (640, .40)), 300)},
                "eval/heldout_success", eval_every=50, eval_at0=True, derive=_h6),
    write=writer(w_jsonl)(fname="logs/metrics.jsonl",
                          config={"algo": "grpo-multiturn", "env": "webshop-sim", "total_steps": 1200,
                                  "tasks_per_step": 64, "attempts_per_task": 4, "max_turns": 12, "eval_every": 50,
                                  "eval_tasks": 300, "lr": 1e-6}),
    seed=3506, steps=(640, 1200), label="ok", sps=95, age_min=3,
    tags="healthy agentic multi-turn env-errors custom-jsonl live",
    why="Hand-written multi-turn web-shop agent loop (64 tasks x 4 attempts per step, max 12 turns), own JSONL keys; "
        "config says 1200 steps, now at 640 and written 3 minutes ago. For seven steps (410-416) the browser pool "
        "was down: train/env_error_rate jumps from ~0.012 to ~0.45, errored episodes score 0, so train success "
        "drops from ~0.35 to ~0.2, turns fall and step time more than doubles; at 417 everything is back and success "
        "continues on its trend (0.21 -> 0.43 over the run). Held-out success on a separate eval pool (N=300, every "
        "50) rises 0.19 -> ~0.40 straight through the outage. A transient infrastructure blip, not a policy "
        "breakage: continue.")


# ---- H7: verl GSPO; sequence-level clipping binds on ~15% of tokens, which is normal for GSPO.
add(name="ok-verl-gspo-seq-level-clipfrac-0.13-to-0.16-normal-for-gspo-math500-rising-tb-live-30pct",
    story=Story(Binary(K((0, .38), (420, .55)), P=256, G=8, s=1.6),
                {"mean": "critic/score/mean", "max": "critic/score/max", "min": "critic/score/min"},
                {"actor/pg_loss": Sig(C(0.0), "add", .01), "actor/pg_clipfrac": Sig(K((0, .13), (420, .16)), "mul", .05),
                 "actor/pg_clipfrac_lower": Sig(C(0.0), "exact"), "actor/ppo_kl": Sig(C(.0002), "add", .0003),
                 "actor/entropy": Sig(K((0, .58), (420, .49)), "mul", .02), "actor/grad_norm": Sig(C(.09), "heavy"),
                 "actor/lr": Sig(C(1e-6), "exact"),
                 "critic/advantages/mean": Sig(C(0.0), "add", .001),
                 "response_length/mean": Sig(K((0, 1400), (420, 1900)), "mul", .025),
                 "response_length/clip_ratio": Sig(K((0, .01), (420, .02)), "frac", 2048)},
                {"val-core/math500/acc/mean@1": Ev(K((0, .58), (420, .67)), 500)},
                "val-core/math500/acc/mean@1", eval_every=20, eval_at0=True,
                derive=chain(lambda s, r, rng, st: r.update({"critic/rewards/mean": r["critic/score/mean"]}),
                             verl_timing(0.03, 30))),
    write=writer(w_verl_tb)(project="gspo", exp="qwen3-8b-gspo-seq-clip",
                            cfg=verl_cfg("gspo", "qwen3-8b-gspo-seq-clip", 1400, 20, 100, 35, "grpo",
                                         {"actor_rollout_ref.actor.policy_loss.loss_mode": "gspo",
                                          "actor_rollout_ref.actor.clip_ratio_low": 0.0003,
                                          "actor_rollout_ref.actor.clip_ratio_high": 0.0004,
                                          "actor_rollout_ref.actor.loss_agg_mode": "seq-mean-token-mean",
                                          "trainer.total_training_steps": 1400},
                                         logger=("console", "tensorboard")),
                            ckpt_every=100),
    seed=3507, steps=(420, 1400), label="ok", sps=120, spe=35, age_min=8,
    tags="healthy gspo sequence-clip verl-tensorboard live",
    why="verl with policy_loss.loss_mode=gspo (sequence-level importance ratio, clip_ratio_low/high 3e-4/4e-4), "
        "TensorBoard, step 420 of 1400 (hydra config), written 8 minutes ago. actor/pg_clipfrac sits at 0.13-0.16: "
        "for GSPO's tiny sequence-level epsilon that is the normal operating point (the GSPO paper reports ~15% of "
        "tokens clipped), not a sign of oversized updates; ppo_kl ~2e-4, grad norm steady. Score 0.38 -> 0.55, "
        "lengths 1400 -> 1900 with 1-2% truncated, entropy 0.58 -> 0.49. MATH-500 validation (N=500, every 20, sd "
        "~0.021) 0.58 -> ~0.67 and rising. Continue.")


# ---- H8: TRL GRPO with vLLM importance-sampling correction, console of dicts; IS min spikes are normal.
add(name="ok-trl-console-grpo-vllm-is-correction-logp-diff-0.008-steady-is-ratio-min-spikes-eval-rising-live",
    story=Story(Binary(K((0, .45), (520, .63)), P=16, G=8, s=1.5, per_log=10),
                {"mean": "rewards/accuracy_reward/mean", "std": "rewards/accuracy_reward/std",
                 "zero": "frac_reward_zero_std"},
                {"loss": Sig(C(0.0), "add", .003), "grad_norm": Sig(C(.1), "heavy"),
                 "learning_rate": Sig(const_lr(1e-6, 30), "exact"),
                 "completions/mean_length": Sig(K((0, 520), (520, 610)), "mul", .03),
                 "completions/min_length": Sig(C(70), "mul", .2), "completions/max_length": Sig(C(1536), "exact"),
                 "completions/clipped_ratio": Sig(C(.01), "frac", 1280),
                 "entropy": Sig(K((0, .48), (520, .41)), "mul", .02),
                 "clip_ratio/low_mean": Sig(C(0.0), "exact"), "clip_ratio/low_min": Sig(C(0.0), "exact"),
                 "clip_ratio/high_mean": Sig(C(0.0), "exact"), "clip_ratio/high_max": Sig(C(0.0), "exact"),
                 "sampling/sampling_logp_difference/mean": Sig(C(.008), "mul", .1),
                 "sampling/sampling_logp_difference/max": Sig(C(1.1), "heavy"),
                 "sampling/importance_sampling_ratio/min": Sig(C(.25), "mul", .9, lo=.004, hi=1.0, rho=.1),
                 "sampling/importance_sampling_ratio/mean": Sig(C(.9995), "add", .0004),
                 "sampling/importance_sampling_ratio/max": Sig(C(1.9), "mul", .05, hi=2.0),
                 "step_time": Sig(K((0, 21), (520, 24)), "mul", .05)},
                {"eval_rewards/accuracy_reward/mean": Ev(K((0, .44), (520, .60)), 200, "pg", g=8)},
                "eval_rewards/accuracy_reward/mean", eval_every=100, log_every=10,
                derive=grpo_common("accuracy_reward", per_step=128, prompt_len=120),
                ederive=lambda s, e, rng: e.update({"eval_reward": e["eval_rewards/accuracy_reward/mean"]})),
    write=writer(w_trl_console)(spe=467, fname="nohup.out",
                                head=("GRPOConfig(vllm_mode='colocate', vllm_importance_sampling_correction=True, "
                                      "vllm_importance_sampling_cap=2.0, max_steps=1500, logging_steps=10, "
                                      "eval_steps=100, num_generations=8, beta=0.0)",
                                      "  0%|          | 0/1500 [00:00<?, ?it/s]")),
    seed=3508, steps=(520, 1500), label="ok", sps=22, age_min=2,
    tags="healthy grpo vllm-is-correction off-policy trl-console live",
    why="TRL GRPO (vLLM colocate, importance-sampling correction on, cap 2.0), console of dicts captured in "
        "nohup.out; the bar says 520/1500 and the file was written 2 minutes ago. The train/inference mismatch is "
        "small and flat: sampling_logp_difference/mean ~0.008, IS ratio mean ~0.9995. importance_sampling_ratio/min "
        "jumps around between ~0.01 and 1 and max sits at the 2.0 cap: single outlier tokens, expected with a "
        "truncated IS correction, and not trending. Clip ratios are exactly 0 (on-policy, one iteration). Reward "
        "0.45 -> 0.63, eval accuracy (200 prompts x 8, every 100) 0.44 -> ~0.60 and rising. Continue.")


# ---- H9: hand-written PPO loop logging to MLflow; adaptive KL coefficient turns up once KL reaches target 6.
def _h9(s, row, rng, st):
    row["ppo/objective"] = row["ppo/rm_score_mean"] - row["ppo/kl_coef"] * row["ppo/kl_to_ref"]


add(name="ok-mlflow-files-custom-ppo-kl-reaches-target-6-nats-coef-turns-up-0.03-to-0.06-rm-and-gold-winrate-rising",
    story=Story(Cont(K((0, -.2), (800, 1.35)), B=256, sd_sample=1.2, sd_prompt=.5),
                {"mean": "ppo/rm_score_mean", "std": "ppo/rm_score_std"},
                {"ppo/kl_to_ref": Sig(K((0, .02), (300, 4.5), (500, 5.8), (800, 6.1)), "mul", .05),
                 "ppo/kl_coef": Sig(K((0, .05), (300, .03), (450, .03), (800, .06)), "exact"),
                 "ppo/value_loss": Sig(K((0, .9), (150, .35), (800, .28)), "mul", .1),
                 "ppo/explained_variance": Sig(K((0, .1), (150, .5), (800, .56)), "add", .03),
                 "ppo/policy_clipfrac": Sig(C(.06), "mul", .12), "ppo/approx_kl": Sig(C(.008), "mul", .2),
                 "ppo/entropy": Sig(K((0, 1.9), (800, 1.6)), "mul", .02), "ppo/grad_norm": Sig(C(.6), "heavy"),
                 "ppo/lr": Sig(C(1.5e-6), "exact"), "gen/response_len_mean": Sig(K((0, 180), (800, 240)), "mul", .03)},
                {"eval/gold_winrate": Ev(K((0, .50), (800, .64)), 500)},
                "eval/gold_winrate", eval_every=50, eval_at0=True, derive=_h9),
    write=writer(w_mlflow)(exp_name="chat-ppo", run_name="ppo-hh-7b-adaptive-kl", finished=False,
                           params={"total_steps": 2000, "kl_target": 6.0, "kl_horizon": 10000, "init_kl_coef": 0.05,
                                   "adaptive_kl": True, "batch_size": 256, "ppo_epochs": 4, "eval_every": 50}),
    seed=3509, steps=(800, 2000), label="ok", sps=75, age_min=5,
    tags="healthy ppo critic adaptive-kl custom-loop mlflow-files live",
    why="Hand-written PPO loop on a helpfulness RM, logging its own keys to an MLflow file store (run RUNNING, "
        "params total_steps 2000, kl_target 6); step 800. KL to the reference rises 0 -> 4.5 nats by 300 and then "
        "levels off just above the 6-nat target (6.1); the adaptive coefficient first decays while KL is below target "
        "(0.05 -> 0.03) and turns up once it is reached (0.03 -> 0.06): the controller holding KL, by design. Critic "
        "healthy (explained variance ~0.55, value loss 0.9 -> 0.28). RM score -0.2 -> 1.35 and, crucially, the gold "
        "judge win rate vs the SFT model (N=500, every 50, sd ~0.021) rises 0.50 -> ~0.64 and is still rising, so "
        "the RM gains are real. Continue.")


# ---- S6 (healthy, subtle): verl PPO, explained variance falls as the policy moves to harder problems.
add(name="ok-verl-ppo-critic-explained-var-0.72-to-0.38-lags-harder-returns-vf-loss-x1.5-only-math500-rising-tb",
    story=Story(Binary(K((0, .35), (900, .62)), P=512, G=1, s=1.6),
                {"mean": "critic/score/mean", "max": "critic/score/max", "min": "critic/score/min"},
                {"critic/vf_explained_var": Sig(K((0, .1), (200, .72), (500, .70), (900, .38)), "add", .03),
                 "critic/vf_loss": Sig(K((0, .08), (200, .03), (500, .031), (900, .045)), "mul", .08),
                 "critic/vf_clipfrac": Sig(K((0, .12), (200, .04), (900, .08)), "mul", .1),
                 "critic/values/mean": Sig(K((0, .3), (900, .58)), "add", .02),
                 "critic/returns/mean": Sig(K((0, .33), (900, .6)), "add", .02),
                 "critic/advantages/mean": Sig(C(0.0), "add", .002),
                 "critic/grad_norm": Sig(K((0, 1.5), (900, 1.1)), "heavy"), "critic/lr": Sig(C(1e-5), "exact"),
                 "actor/pg_loss": Sig(C(-.002), "add", .008), "actor/pg_clipfrac": Sig(C(.005), "mul", .1),
                 "actor/ppo_kl": Sig(C(.0002), "add", .0003), "actor/entropy": Sig(K((0, .6), (900, .47)), "mul", .02),
                 "actor/kl_loss": Sig(K((0, .001), (900, .04)), "mul", .06), "actor/kl_coef": Sig(C(.001), "exact"),
                 "actor/grad_norm": Sig(C(.2), "heavy"), "actor/lr": Sig(C(1e-6), "exact"),
                 "response_length/mean": Sig(K((0, 310), (900, 520)), "mul", .03),
                 "response_length/clip_ratio": Sig(K((0, .004), (900, .012)), "frac", 512)},
                {"val-core/math500/acc/mean@1": Ev(K((0, .36), (900, .60)), 500)},
                "val-core/math500/acc/mean@1", eval_every=50, eval_at0=True,
                derive=chain(lambda s, r, rng, st: r.update({"critic/rewards/mean": r["critic/score/mean"]}),
                             verl_timing(0.02, 20, critic=True))),
    write=writer(w_verl_tb)(project="ppo_math", exp="qwen2.5-7b-ppo-gae-math",
                            cfg=verl_cfg("ppo_math", "qwen2.5-7b-ppo-gae-math", 2000, 50, 100, 40, "gae",
                                         {"actor_rollout_ref.rollout.n": 1, "actor_rollout_ref.actor.use_kl_loss": True,
                                          "actor_rollout_ref.actor.kl_loss_coef": 0.001,
                                          "trainer.total_training_steps": 2000},
                                         logger=("console", "tensorboard")),
                            ckpt_every=100),
    seed=3516, steps=(900, 2000), label="ok", sps=70, spe=40, age_min=6,
    tags="healthy subtle ppo critic explained-variance verl-tensorboard live",
    why="verl PPO with a GAE critic on MATH, TensorBoard, step 900 of 2000, live. critic/vf_explained_var peaked "
        "~0.72 around 200-500 and has slid to ~0.38: looks like a critic going bad, but vf_loss rose only from 0.031 "
        "to 0.045, vf_clipfrac from 0.04 to 0.08, explained variance stays well positive, and the actor side is calm "
        "(pg_clipfrac 0.5%, ppo_kl ~2e-4, entropy 0.6 -> 0.47, kl_loss 0.04). The policy is solving harder problems "
        "with longer answers (310 -> 520 tokens), so returns spread and the critic lags. The outcome says so: score "
        "0.35 -> 0.62 and MATH-500 validation (N=500, every 50) 0.36 -> ~0.60, rising throughout. Continue.")


# ---- F1: TRL PPO (PPOv2 keys) with checkpoints; critic diverges from 620 while the RM score keeps climbing.
def _f1(s, row, rng, st):
    row["objective/non_score_reward"] = 0.05 * row["objective/kl"]
    row["objective/rlhf_reward"] = row["objective/scores"] - row["objective/non_score_reward"]
    row["episode"] = s * 64
    row["eps"] = round(12 * math.exp(0.05 * rng.normal()))
    row["val/num_eos_tokens"] = round(row["val/num_eos_tokens"])


add(name="rb-trl-ppo-ckpts-critic-diverges-from-620-value-loss-x45-vf-clipfrac-0.58-rm-score-still-climbs-gold-winrate-falls",
    story=Story(Cont(K((0, 1.2), (600, 2.2), (1000, 2.75)), B=64, sd_sample=.9, sd_prompt=.4),
                {"mean": "objective/scores"},
                {"objective/kl": Sig(K((0, .05), (600, 3.6), (700, 5.0), (1000, 13)), "mul", .06),
                 "objective/entropy": Sig(K((0, 95), (600, 82), (1000, 70)), "mul", .03),
                 "policy/approxkl_avg": Sig(K((0, .004), (620, .005), (750, .03), (1000, .05)), "mul", .15),
                 "policy/clipfrac_avg": Sig(K((0, .03), (620, .035), (750, .15), (1000, .22)), "mul", .08),
                 "loss/policy_avg": Sig(C(-.01), "add", .01),
                 "loss/value_avg": Sig(K((0, .35), (200, .08), (620, .07), (700, .6), (800, 2.1), (1000, 3.4)), "mul", .15),
                 "policy/entropy_avg": Sig(K((0, 1.9), (1000, 1.5)), "mul", .02),
                 "val/clipfrac_avg": Sig(K((0, .25), (200, .07), (620, .07), (750, .4), (1000, .58)), "mul", .06, hi=1),
                 "val/ratio": Sig(K((0, 1.0), (620, 1.0), (1000, 1.04)), "add", .004),
                 "val/ratio_var": Sig(K((0, 2e-4), (620, 3e-4), (750, 4e-3), (1000, .02)), "mul", .2),
                 "val/num_eos_tokens": Sig(K((0, 61), (1000, 54)), "add", 1.5),
                 "lr": Sig(lin_lr(3e-6, 1, 2000), "exact")},
                {"eval_gold_winrate": Ev(K((0, .40), (600, .61), (620, .61), (1000, .47)), 400)},
                "eval_gold_winrate", eval_every=50, derive=_f1),
    write=writer(w_trl)(spe=500, save_every=100, logging_steps=1, eval_steps=50, cb_keys=("eval_gold_winrate",),
                        loss_dp=None, epochs=4),
    seed=3511, steps=(1000, 2000), label="rb", onset=620, sps=40, age_min=4,
    tags="clear ppo critic value-divergence rm-overoptimisation trl-state checkpoints live",
    why="TRL PPOTrainer (objective/*, loss/*, val/* keys, one row per PPO update) on a reward model, "
        "checkpoint-N folders every 100, step 1000 of 2000, live. A callback logs eval_gold_winrate (a gold judge vs "
        "the SFT model on 400 prompts every 50 steps) into log_history; TRL's PPO trainer has no eval metric of its "
        "own. Up to ~620 all is well: value loss 0.35 -> 0.07, val/clipfrac 0.07, gold win rate 0.40 -> 0.61. Then "
        "the critic diverges: loss/value_avg 0.07 -> ~3.4 (x45), val/clipfrac_avg 0.07 -> 0.58, and with useless "
        "advantages the policy updates grow (policy/clipfrac 0.035 -> 0.22, approxkl x10, val/ratio_var 3e-4 -> "
        "0.02) and KL to the reference accelerates 3.6 -> 13. objective/scores keeps climbing 2.2 -> 2.75 because "
        "the policy is now exploiting the RM, but the gold win rate falls from 0.61 to ~0.47 by 1000 (sd 0.024, ~6 "
        "sd). A better model lies behind: roll back to <W> (onset 620; checkpoint-600 is on disk).")


# ---- F2: verl PPO console (numpy<2 floats); relaunch at 500 with a reward fn that returns 10x scores.
def _f2(s, row, rng, st):
    sc = 10.0 if s > 500 else 1.0
    acc = row["_acc"]
    row["critic/score/mean"] = sc * acc
    row["critic/score/max"] = sc
    row["critic/score/min"] = 0.0
    row["critic/rewards/mean"] = row["critic/score/mean"] - 0.001 * row["actor/kl_loss"]
    row["critic/returns/mean"] = 0.93 * row["critic/score/mean"] + 0.01 * rng.normal()
    row["critic/advantages/mean"] = 0.002 * rng.normal()


add(name="rb-verl-console-relaunch-at-500-reward-fn-returns-10x-score-jumps-critic-ev-to-minus-2.5-entropy-halves-val-falls",
    story=Story(Binary(K((0, .38), (450, .60), (500, .605), (800, .52)), P=512, G=1, s=1.6),
                {"mean": "_acc"},
                {"actor/pg_loss": Sig(C(-.002), "add", .01),
                 "actor/pg_clipfrac": Sig(K((0, .005), (500, .005), (520, .09), (800, .07)), "mul", .1),
                 "actor/ppo_kl": Sig(K((0, .0003), (500, .0003), (520, .004), (800, .003)), "mul", .3),
                 "actor/entropy": Sig(K((0, .55), (500, .48), (560, .25), (800, .21)), "mul", .03),
                 "actor/kl_loss": Sig(K((0, .001), (500, .012), (800, .06)), "mul", .06),
                 "actor/kl_coef": Sig(C(.001), "exact"),
                 "actor/grad_norm": Sig(K((0, .25), (500, .22), (505, 3.5), (600, 1.2), (800, .9)), "heavy"),
                 "actor/lr": Sig(C(1e-6), "exact"),
                 "critic/vf_loss": Sig(K((0, .09), (200, .035), (500, .03), (505, 6.0), (560, 4.0), (800, 2.4)), "mul", .12),
                 "critic/vf_explained_var": Sig(K((0, .05), (200, .62), (500, .70), (505, -2.5), (600, -.6), (800, .1)),
                                                "add", .05),
                 "critic/vf_clipfrac": Sig(K((0, .1), (500, .04), (505, .9), (800, .55)), "mul", .05, hi=1),
                 "critic/values/mean": Sig(K((0, .3), (500, .58), (520, 1.5), (600, 4.2), (800, 5.1)), "add", .1),
                 "critic/grad_norm": Sig(K((0, 2), (500, 1.1), (505, 40), (800, 9)), "heavy"),
                 "critic/lr": Sig(C(1e-5), "exact"),
                 "response_length/mean": Sig(K((0, 380), (500, 340), (800, 290)), "mul", .03),
                 "response_length/clip_ratio": Sig(C(.004), "frac", 512)},
                {"val-core/math500/acc/mean@1": Ev(K((0, .40), (450, .61), (500, .615), (800, .47)), 500)},
                "val-core/math500/acc/mean@1", eval_every=50, eval_at0=True,
                derive=chain(_f2, verl_timing(0.012, 18, critic=True))),
    write=writer(w_verl_console)(np2=False, relaunch=500, fname="ppo_math.log",
                                 cfg=verl_cfg("verl_ppo_math", "qwen2.5-7b-ppo-math500", 1000, 50, 100, 50, "gae",
                                              {"actor_rollout_ref.rollout.n": 1,
                                               "actor_rollout_ref.actor.use_kl_loss": True,
                                               "custom_reward_function.path": "rewards/math_v2.py"}),
                                 ckpt=("verl_ppo_math", "qwen2.5-7b-ppo-math500", 100)),
    seed=3512, steps=(800, 1000), label="rb", onset=500, sps=48, spe=50, age_min=7,
    tags="clear ppo critic reward-scale relaunch verl-console live",
    why="verl PPO + GAE on MATH (plain-float console, one log file, relaunched at step 500 from global_step_500 "
        "with a new reward file). After the relaunch critic/score/mean jumps from ~0.6 to ~6 and "
        "critic/score/max is 10: the new reward function returns 10 for a correct answer (the acc field used by "
        "validation is still 0/1). It looks like a leap in reward, but it is a scale change the critic was not "
        "trained for: vf_loss 0.03 -> 6 (x200), explained variance 0.70 -> -2.5, vf_clipfrac 0.04 -> 0.9, actor "
        "grad norm x15, pg_clipfrac 0.5% -> 9%, and entropy halves 0.48 -> 0.21 within 60 steps. The accuracy "
        "behind the score slides (0.605 -> 0.52 in acc units) and MATH-500 validation (N=500, every 50, sd 0.022) "
        "falls from 0.615 at 500 to ~0.47 at 800 (6.7 sd). Roll back to <W>; onset is the relaunch at 500 and "
        "global_step_500 is on disk (then fix the reward scale).")


# ---- F3: verl DAPO with overlong filtering (truncated samples masked out of the loss); truncation runs away.
def _f3(s, row, rng, st):
    a = row["_acc"]
    row["critic/score/mean"] = 2 * a - 1
    row["critic/score/max"] = 1.0
    row["critic/score/min"] = -1.0
    row["critic/rewards/mean"] = row["critic/score/mean"]
    row["critic/advantages/mean"] = 0.002 * rng.normal()


add(name="rb-verl-console-np2-dapo-overlong-filter-masks-truncations-clip-ratio-0.06-to-0.46-lengths-to-5.9k-val-falls-from-700",
    story=Story(Binary(K((0, .30), (600, .56), (700, .57), (1000, .44)), P=512, G=16, s=1.7),
                {"mean": "_acc"},
                {"actor/pg_loss": Sig(C(0.0), "add", .01),
                 "actor/pg_clipfrac": Sig(K((0, .003), (700, .004), (1000, .011)), "mul", .12),
                 "actor/pg_clipfrac_lower": Sig(C(2e-5), "mul", .5), "actor/ppo_kl": Sig(C(.0), "add", 2e-4),
                 "actor/entropy": Sig(K((0, .42), (700, .39), (1000, .55)), "mul", .03),
                 "actor/grad_norm": Sig(K((0, .14), (700, .15), (1000, .32)), "heavy"),
                 "actor/lr": Sig(C(1e-6), "exact"),
                 "response_length/mean": Sig(K((0, 1900), (700, 2900), (1000, 5900)), "mul", .02),
                 "response_length/max": Sig(C(8192), "exact"), "response_length/min": Sig(C(120), "mul", .3),
                 "response_length/clip_ratio": Sig(K((0, .01), (700, .06), (1000, .46)), "frac", 8192)},
                {"val-core/math500/acc/mean@1": Ev(K((0, .38), (600, .55), (700, .555), (1000, .43)), 500)},
                "val-core/math500/acc/mean@1", eval_every=50, eval_at0=True,
                derive=chain(_f3, verl_timing(0.04, 40))),
    write=writer(w_verl_console)(np2=True, prefix="(TaskRunner pid=90412)",
                                 cfg=verl_cfg("dapo", "qwen2.5-32b-dapo-overlong-filter", 1600, 50, 200, 40, "grpo",
                                              {"reward_model.reward_manager": "dapo",
                                               "reward_model.overlong_buffer.enable": False,
                                               "actor_rollout_ref.actor.overlong_filter": True,
                                               "data.max_response_length": 8192,
                                               "actor_rollout_ref.actor.clip_ratio_high": 0.28,
                                               "actor_rollout_ref.rollout.n": 16}),
                                 ckpt=("dapo", "qwen2.5-32b-dapo-overlong-filter", 200)),
    seed=3513, steps=(1000, 1600), label="rb", onset=700, sps=300, spe=40, age_min=5,
    tags="clear dapo overlong-filter truncation length-runaway verl-console np2 live",
    why="verl DAPO-style run (scores +1/-1, 8192-token cap, overlong buffer off, truncated samples masked out of the "
        "loss by the overlong filter), NumPy-2 console, step 1000 of 1600, live. Because truncations carry no "
        "gradient nothing pushes back on length: from ~700 the mean response grows 2.9k -> 5.9k tokens and "
        "response_length/clip_ratio climbs 0.06 -> 0.46, entropy rises 0.39 -> 0.55, grad norm doubles. The score "
        "(truncated answers score -1) turns down from ~0.14 to ~-0.12 and MATH-500 validation (N=500, every 50, sd "
        "0.022) falls from ~0.555 at 700 to ~0.43 at 1000 (5.6 sd). Roll back to <W> (onset 700; checkpoints every "
        "200 are on disk, global_step_600 is the newest before it), then cap lengths with a penalty.")


# ---- F4: TRL DPO on a small preference set, 5 epochs, finished; train accuracy 1.0 from epoch ~1.3.
add(name="rb-trl-dpo-top-level-state-finished-1216-pairs-5-epochs-train-acc-1.0-by-step-50-eval-loss-up-eval-acc-peak-80-120",
    story=Story(None, {},
                {"loss": Sig(K((0, .69), (38, .25), (76, .03), (190, .002)), "mul", .15),
                 "grad_norm": Sig(K((0, 8), (190, .3)), "heavy"),
                 "learning_rate": Sig(lin_lr(5e-7, 10, 190), "exact"),
                 "rewards/chosen": Sig(K((0, 0), (190, -2.5)), "add", .1),
                 "rewards/margins": Sig(K((0, .05), (38, 3), (190, 14)), "mul", .05),
                 "rewards/accuracies": Sig(K((0, .5), (38, .97), (50, 1.0), (190, 1.0)), "frac", 160),
                 "logps/chosen": Sig(K((0, -180), (190, -205)), "add", 3),
                 "logits/chosen": Sig(C(-1.2), "add", .05), "logits/rejected": Sig(C(-1.25), "add", .05)},
                {"eval_loss": Ev(K((0, .693), (60, .60), (100, .585), (120, .60), (190, .86)), kind="mul", x=.01),
                 "eval_rewards/chosen": Ev(K((0, 0), (190, -3.5)), kind="add", x=.05),
                 "eval_rewards/margins": Ev(K((0, .01), (190, 6.5)), kind="mul", x=.03),
                 "eval_rewards/accuracies": Ev(K((0, .55), (80, .70), (120, .70), (190, .58)), 500),
                 "eval_logps/chosen": Ev(K((0, -182), (190, -215)), kind="add", x=1)},
                "eval_rewards/accuracies", eval_every=20, log_every=5, derive=_dpo(0.1, -180, -195),
                ederive=lambda s, e, rng: e.update({"eval_rewards/rejected": e["eval_rewards/chosen"] -
                                                    e["eval_rewards/margins"]})),
    write=writer(w_trl)(spe=38, top=True, logging_steps=5, eval_steps=20, epochs=5, runtime_n=500, bs=32),
    seed=3514, steps=(190, 190), label="rb", onset=120, sps=11, age_min=180, finished=True,
    tags="clear dpo overfitting small-dataset trl-state top-level finished no-checkpoints",
    why="TRL DPO (beta 0.1) on a small preference set (1,216 pairs, 38 steps per epoch, 5 epochs = 190 steps), "
        "save_strategy 'no': only the final model and a top-level trainer_state.json with the end-of-training row, "
        "finished 3 hours ago. Train rewards/accuracies hits 0.97 at the end of epoch 1 and 1.00 from step ~50 on, "
        "loss -> 0.002 and margins 3 -> 14: it has memorised the pairs. Eval (500 held-out pairs every 20 steps, sd "
        "0.020) peaks at 0.70 around steps 80-120, then eval_loss turns up (0.585 at 100 -> 0.86 at 190) and "
        "eval_rewards/accuracies falls to ~0.60 by 180 (5 sd). The final weights are worse than the ones around "
        "step 100: roll back to <W> (onset 120). No checkpoint is in the folder, so rerun to ~step 120 (about "
        "3 epochs) or restore an external copy.")


# ---- F5: TRL GRPO with tools; the policy farms the tool-success bonus with trivial calls.
def _f5(s, row, rng, st):
    t = row["rewards/tool_use_reward/mean"]
    row["rewards/tool_use_reward/std"] = math.sqrt(max(t * (1 - t), 0.0)) * 1.1 + 0.01
    row["frac_reward_zero_std"] = row["frac_reward_zero_std"] * t ** 4


add(name="rb-trl-grpo-tools-trivial-calls-farm-tool-bonus-call-freq-1.9-to-7-failure-freq-to-0.01-correctness-falls-ckpts-limit3-tb",
    story=Story(Binary(K((0, .40), (500, .50), (560, .505), (1100, .38)), P=16, G=8, s=1.5, per_log=10),
                {"mean": "rewards/correctness_reward/mean", "std": "rewards/correctness_reward/std",
                 "zero": "frac_reward_zero_std"},
                {"rewards/tool_use_reward/mean": Sig(K((0, .35), (500, .72), (1100, .99)), "add", .012, lo=0, hi=1),
                 "tools/call_frequency": Sig(K((0, 1.2), (500, 1.9), (600, 2.6), (1100, 7.0)), "mul", .04),
                 "tools/failure_frequency": Sig(K((0, .18), (500, .08), (1100, .01)), "mul", .1),
                 "loss": Sig(C(0.0), "add", .004), "grad_norm": Sig(C(.1), "heavy"),
                 "learning_rate": Sig(const_lr(1e-6, 20), "exact"),
                 "completions/mean_length": Sig(K((0, 700), (500, 900), (1100, 1700)), "mul", .03),
                 "completions/min_length": Sig(C(120), "mul", .2), "completions/max_length": Sig(C(3072), "exact"),
                 "completions/clipped_ratio": Sig(K((0, .03), (1100, .05)), "frac", 1280),
                 "entropy": Sig(K((0, .55), (500, .48), (1100, .33)), "mul", .02),
                 "clip_ratio/low_mean": Sig(C(0.0), "exact"), "clip_ratio/high_mean": Sig(C(0.0), "exact"),
                 "step_time": Sig(K((0, 60), (500, 75), (1100, 140)), "mul", .05)},
                {"eval_rewards/correctness_reward/mean": Ev(K((0, .38), (500, .48), (560, .485), (1100, .37)), 200,
                                                            "pg", g=4),
                 "eval_rewards/tool_use_reward/mean": Ev(K((0, .34), (500, .70), (1100, .99)), kind="add", x=.01, hi=1.0),
                 "eval_tools/call_frequency": Ev(K((0, 1.2), (500, 1.9), (600, 2.6), (1100, 7.0)), kind="mul", x=.03)},
                "eval_rewards/correctness_reward/mean", eval_every=100, log_every=10,
                derive=chain(_f5, grpo_common("correctness_reward", {"correctness_reward": 1.0, "tool_use_reward": .5},
                                              per_step=128, prompt_len=300)),
                ederive=lambda s, e, rng: e.update({"eval_reward": e["eval_rewards/correctness_reward/mean"] +
                                                    .5 * e["eval_rewards/tool_use_reward/mean"]})),
    write=writer(w_trl)(spe=500, save_every=100, limit=3, eval_steps=100, epochs=5, tb_host="gpu-h100-04"),
    seed=3515, steps=(1100, 2500), label="rb", onset=560, sps=95, age_min=4,
    tags="clear grpo tool-use reward-hacking trl-state checkpoints hf-tensorboard live",
    why="TRL GRPO with a python tool (tools/* keys) and two reward functions, correctness_reward (weight 1) and "
        "tool_use_reward (weight 0.5, the share of tool calls that ran without error). checkpoint-900/1000/1100 "
        "(save_total_limit 3) plus the HF TensorBoard events with the full history; step 1100 of 2500, live. From "
        "~560 the policy learns that trivial calls always succeed: tools/call_frequency 1.9 -> 7 per completion, "
        "tools/failure_frequency 0.08 -> 0.01, tool_use_reward 0.72 -> 0.99, so the total reward keeps edging up "
        "(0.86 -> 0.88) while completions bloat (900 -> 1700 tokens, step time 75 -> 140 s). The part that matters "
        "falls: correctness_reward 0.50 -> 0.38 on train and eval correctness (200 prompts x 4, every 100, sd "
        "~0.024) from ~0.48 at 500 to ~0.37 at 1100 (4.5 sd). Reward hacking visible in the per-function parts: roll back to "
        "<W> (onset 560); the kept checkpoints are all past the peak, so restore an earlier copy or rerun.")


# ---- F6: custom JSONL, multi-turn SWE agent with partial-credit reward; learns to submit an empty patch.
def _f6(s, row, rng, st):
    row["time/rollout_s"] = 22 * row["agent/turns_mean"] + 40 + 5 * rng.normal()


add(name="rb-custom-jsonl-swe-agent-submits-without-editing-0.06-to-0.71-turns-14-to-2-partial-credit-up-resolve-rate-falls",
    story=Story(Cont(K((0, .55), (120, .60), (300, .74)), B=128, sd_sample=.3, sd_prompt=.15),
                {"mean": "reward/mean", "std": "reward/std"},
                {"resolved/train": Sig(K((0, .12), (130, .20), (300, .10)), "frac", 128),
                 "agent/turns_mean": Sig(K((0, 14), (130, 11.5), (200, 5), (300, 2.1)), "mul", .04),
                 "agent/tool_calls_mean": Sig(K((0, 12.5), (130, 10), (300, 1.2)), "mul", .05),
                 "agent/submit_without_edit_frac": Sig(K((0, .03), (130, .06), (300, .71)), "frac", 128),
                 "agent/patch_lines_mean": Sig(K((0, 18), (130, 16), (300, 3)), "mul", .08),
                 "policy/kl": Sig(K((0, .001), (130, .02), (300, .09)), "mul", .07),
                 "policy/entropy": Sig(K((0, .55), (300, .31)), "mul", .03),
                 "optim/grad_norm": Sig(C(.4), "heavy"), "optim/lr": Sig(C(1e-6), "exact"),
                 "env/error_rate": Sig(C(.015), "frac", 128)},
                {"eval/resolve_rate": Ev(K((0, .13), (125, .205), (140, .205), (300, .085)), 500),
                 "eval/submit_without_edit_frac": Ev(K((0, .03), (130, .05), (300, .68)), kind="mul", x=.04)},
                "eval/resolve_rate", eval_every=25, eval_at0=True, derive=_f6),
    write=writer(w_jsonl)(fname="metrics.jsonl",
                          config={"algo": "rloo-multiturn", "env": "swe-gym-docker", "reward": "fraction_of_tests_passing",
                                  "total_steps": 600, "tasks_per_step": 32, "samples_per_task": 4, "max_turns": 30,
                                  "eval_every": 25, "eval_set": "swe-verified-500", "save_every": 50,
                                  "checkpoint_dir": "s3://rl-ckpts/swe-rloo-14b/"}),
    seed=3517, steps=(300, 600), label="rb", onset=140, sps=600, age_min=10,
    tags="clear agentic swe reward-hacking stops-early partial-credit custom-jsonl live",
    why="Hand-written multi-turn SWE agent (RLOO, 32 tasks x 4 samples per step), reward = fraction of the repo's "
        "tests passing after the patch; metrics.jsonl with its own keys, config says 600 steps and checkpoints go to "
        "S3 every 50. The agent discovers that an untouched repo already passes most existing tests: from ~140 "
        "agent/submit_without_edit_frac climbs 0.06 -> 0.71, turns 11.5 -> 2.1, tool calls 10 -> 1.2, patch size "
        "16 -> 3 lines. The partial-credit reward keeps rising (0.60 -> 0.74) while resolved/train falls 0.20 -> "
        "0.10 and the held-out resolve rate (500 tasks, every 25, sd 0.018) drops from ~0.205 at 125-140 to ~0.085 "
        "at 300 (6.6 sd). Reward hacking by stopping early: roll back to <W> (onset 140; restore the S3 checkpoint "
        "at 100, the newest save not after it) and fix the reward.")


# ---- F7: W&B panel CSVs of a custom agent loop; sandbox errors from step 900 teach the policy to avoid the tool.
def _f7(s, row, rng, st):
    row["train/reward_mean"] = row["_succ"] * (1 - row["train/env_error_rate"])


add(name="rb-wandb-csv-agent-sandbox-errors-0.02-to-0.38-from-900-policy-abandons-tool-calls-3.1-to-0.9-eval-success-falls",
    story=Story(Binary(K((0, .30), (900, .52), (1200, .45)), P=32, G=8, s=1.5),
                {"mean": "_succ"},
                {"train/env_error_rate": Sig(K((0, .02), (899, .02), (900, .38), (1200, .36)), "frac", 256),
                 "train/tool_calls_per_episode": Sig(K((0, 2.4), (900, 3.1), (1200, .9)), "mul", .05),
                 "train/turns_mean": Sig(K((0, 4.1), (900, 4.6), (1200, 2.2)), "mul", .04),
                 "train/kl": Sig(K((0, .001), (900, .05), (1200, .09)), "mul", .07),
                 "train/entropy": Sig(K((0, .6), (1200, .5)), "mul", .02),
                 "train/grad_norm": Sig(C(.25), "heavy")},
                {"eval/success_rate": Ev(K((0, .30), (850, .50), (900, .505), (1200, .43)), 400),
                 "eval/tool_calls_per_episode": Ev(K((0, 2.4), (900, 3.1), (1200, 1.0)), kind="mul", x=.03)},
                "eval/success_rate", eval_every=50, eval_at0=True, derive=_f7),
    write=writer(w_wandb_csv)(display="agent-sandbox-grpo-r3",
                              config={"total_steps": 3000, "algo": "grpo-multiturn", "group_size": 8,
                                      "tasks_per_step": 32, "eval_every": 50, "eval_tasks": 400,
                                      "sandbox_pool": "train-pool-b", "eval_sandbox_pool": "eval-pool-a"}),
    seed=3518, steps=(1200, 3000), label="rb", onset=900, sps=70, age_min=20,
    tags="clear agentic tool-use env-errors wandb-csv live",
    why="Custom multi-turn tool agent logging to W&B; panels exported as one CSV each plus the run's config.yaml "
        "(3000 steps, eval on a separate sandbox pool), exported 20 minutes ago at step 1200. At step 900 the "
        "training sandbox pool degrades: train/env_error_rate 0.02 -> ~0.38 and stays there. Errored episodes score "
        "0, so the train reward drops 0.51 -> ~0.3, and the policy learns the environment's lesson: don't call the "
        "tool (tool calls per episode 3.1 -> 0.9, turns 4.6 -> 2.2). Eval success on the healthy pool (N=400, every "
        "50, sd 0.025) peaked ~0.505 at 900 and falls to ~0.43 by 1200 (3 sd), with eval tool use collapsing the "
        "same way. The policy is being damaged by the broken environment: roll back to <W> (onset 900) and fix the "
        "sandbox before resuming.")


# ---- F8: OpenRLHF GRPO with dynamic filtering; the task saturates, the filter pass rate collapses; stop.
def _f8(s, row, rng, st):
    pr = max(row["dynamic_filtering_pass_rate"], 0.02)
    row["timing/generation"] = min(420.0, 38 / max(pr, 0.09)) * (1 + 0.05 * rng.normal())
    row["timing/step_total"] = sum(row[k] for k in ("timing/generation", "timing/make_experience",
                                                    "timing/ppo_train", "timing/broadcast"))
    row["rollout/num_samples"] = 1024


add(name="stop-openrlhf-console-stalled-4h-dynamic-filter-pass-rate-0.69-to-0.14-rollout-reward-0.97-gsm8k-flat-since-600",
    story=Story(Binary(K((0, .55), (400, .90), (600, .95), (1000, .97)), P=128, G=8, s=2.2),
                {"kept_mean": "reward", "mean": "rollout/reward_mean", "std": "rollout/reward_std",
                 "pass": "dynamic_filtering_pass_rate", "kept_gstd": "group_reward_std"},
                {"kl": Sig(K((0, .001), (600, .03), (1000, .05)), "mul", .06), "policy_loss": Sig(C(0.0), "add", .02),
                 "ppo_clip_ratio": Sig(C(.008), "mul", .2), "ppo_kl": Sig(C(.0001), "add", .0002),
                 "vllm_kl": Sig(C(.0003), "mul", .2), "response_length": Sig(K((0, 410), (1000, 330)), "mul", .03),
                 "truncated": Sig(C(.002), "frac", 1024), "actor_grad_norm": Sig(C(.2), "heavy"),
                 "actor_lr": Sig(C(5e-7), "exact"), "timing/make_experience": Sig(C(15), "mul", .04),
                 "timing/ppo_train": Sig(C(25), "mul", .04), "timing/broadcast": Sig(C(3), "mul", .05)},
                {"eval_gsm8k_pass1": Ev(K((0, .70), (450, .80), (600, .805), (1000, .805)), 1319)},
                "eval_gsm8k_pass1", eval_every=50, derive=_f8),
    write=writer(w_openrlhf_console)(
        args="Namespace(advantage_estimator='group_norm', dynamic_filtering=True, dynamic_filtering_reward_range=[0.0, 1.0], "
             "n_samples_per_prompt=8, rollout_batch_size=128, num_episodes=1, max_samples=256000, eval_steps=50, "
             "save_steps=200, pretrain='Qwen/Qwen2.5-1.5B-Instruct', init_kl_coef=0.001, use_kl_loss=True)",
        ckpt_every=200),
    seed=3519, steps=(1000, 2000), label="stop", onset=600, sps=140, age_min=250,
    tags="clear dapo dynamic-sampling saturation openrlhf-console stalled",
    why="OpenRLHF GRPO with dynamic filtering (groups whose 8 samples all agree are dropped), console log; args "
        "imply 2000 steps, the log stops at step 1000 and has not been written for ~4 hours (stalled). GSM8K train "
        "prompts are saturating: rollout/reward_mean 0.55 -> 0.97, so dynamic_filtering_pass_rate (the share of "
        "mixed groups) falls from ~0.69 to ~0.14 and generation time per step grows ~5x (55 -> 280 s) to fill the "
        "batch; the logged reward is over the kept groups only and plateaus at ~0.77. Held-out GSM8K pass@1 "
        "(N=1319, every 50, sd 0.011) reached ~0.80 by 450-600 and has been flat since (0.805). No learning signal "
        "left, no decline, current weights as good as any: stop (onset ~600).")


# ---- F9: TRL RLOO logged to MLflow (raw HF keys), finished at 1500; plateau since 900, final at best: stop.
add(name="stop-mlflow-files-trl-rloo-finished-1500-eval-plateau-since-900-final-at-best-kl-still-rising",
    story=Story(Binary(K((0, .34), (900, .55), (1500, .56)), P=64, G=4, s=1.5, per_log=10),
                {"mean": "rewards/accuracy_reward/mean", "std": "rewards/accuracy_reward/std",
                 "zero": "frac_reward_zero_std"},
                {"loss": Sig(C(0.0), "add", .01), "grad_norm": Sig(C(.15), "heavy"),
                 "learning_rate": Sig(cos_lr(1e-6, 50, 1500), "exact"),
                 "kl": Sig(K((0, .0005), (900, .08), (1500, .13)), "mul", .05),
                 "entropy": Sig(K((0, .5), (1500, .36)), "mul", .02),
                 "clip_ratio/low_mean": Sig(C(.005), "mul", .2), "clip_ratio/high_mean": Sig(C(.007), "mul", .2),
                 "completions/mean_length": Sig(K((0, 480), (1500, 430)), "mul", .03),
                 "completions/clipped_ratio": Sig(C(.005), "frac", 2560), "completions/max_length": Sig(C(1024), "exact"),
                 "step_time": Sig(C(18), "mul", .05)},
                {"eval_reward": Ev(K((0, .33), (900, .52), (1500, .525)), 500, "pg", g=4)},
                "eval_reward", eval_every=100, log_every=10,
                derive=grpo_common("accuracy_reward", per_step=256, prompt_len=150),
                ederive=lambda s, e, rng: e.update({"eval_rewards/accuracy_reward/mean": e["eval_reward"]})),
    write=writer(w_mlflow)(exp_name="rloo-math", run_name="rloo-qwen2.5-3b-k4-cosine", finished=True,
                           params={"max_steps": 1500, "logging_steps": 10, "eval_steps": 100, "num_generations": 4,
                                   "beta": 0.05, "learning_rate": 1e-6, "lr_scheduler_type": "cosine",
                                   "save_strategy": "no", "report_to": "mlflow"},
                           final={"train_runtime": 27145.2, "train_samples_per_second": 14.1,
                                  "train_steps_per_second": 0.055, "train_loss": 0.0012, "total_flos": 0.0}),
    seed=3520, steps=(1500, 1500), label="stop", onset=900, sps=18, age_min=300, finished=True,
    tags="clear rloo plateau finished mlflow-files",
    why="TRL RLOO (v0.22+ keys, k=4, beta 0.05, cosine LR to 0) reported to an MLflow file store: raw HF keys in "
        "nested metric folders, run status FINISHED at max_steps 1500 (params), 5 hours ago. Accuracy reward 0.34 -> "
        "0.55 by 900, then 0.55 -> 0.56 over the last 600 steps while KL keeps drifting 0.08 -> 0.13. Eval reward "
        "(500 prompts x 4, every 100, sd ~0.018) 0.33 -> 0.52 by 900 and ~0.525 at 1500: flat, and the final "
        "point is as good as any. Nothing more to gain and the final weights are the ones to keep: stop.")


# ---- S1: verl PPO on an RM, JSONL; RM score climbs, rule-based GSM8K validation eases ~1.2 sd: stop or rollback.
add(name="sor-verl-jsonl-ppo-rm-score-climbs-0.8-to-2.6-kl-loss-accelerates-gsm8k-val-plateau-500-800-eases-1.2sd",
    story=Story(Cont(K((0, .8), (1000, 2.6)), B=512, sd_sample=1.0, sd_prompt=.6),
                {"mean": "critic/score/mean", "max": "critic/score/max", "min": "critic/score/min"},
                {"actor/kl_loss": Sig(K((0, .001), (600, .04), (1000, .11)), "mul", .05),
                 "actor/kl_coef": Sig(C(.001), "exact"), "actor/pg_loss": Sig(C(-.002), "add", .01),
                 "actor/pg_clipfrac": Sig(C(.006), "mul", .1), "actor/ppo_kl": Sig(C(.0003), "add", .0003),
                 "actor/entropy": Sig(K((0, .7), (1000, .52)), "mul", .02), "actor/grad_norm": Sig(C(.2), "heavy"),
                 "actor/lr": Sig(C(1e-6), "exact"),
                 "critic/vf_loss": Sig(K((0, .6), (150, .22), (1000, .25)), "mul", .08),
                 "critic/vf_explained_var": Sig(K((0, .1), (200, .55), (1000, .58)), "add", .03),
                 "critic/vf_clipfrac": Sig(C(.05), "mul", .1), "critic/grad_norm": Sig(C(1.2), "heavy"),
                 "critic/lr": Sig(C(1e-5), "exact"), "critic/advantages/mean": Sig(C(0.0), "add", .002),
                 "response_length/mean": Sig(K((0, 210), (1000, 300)), "mul", .02),
                 "response_length/clip_ratio": Sig(C(.001), "frac", 512)},
                {"val-core/openai/gsm8k/acc/mean@1": Ev(K((0, .55), (500, .70), (800, .702), (1000, .687)), 1319)},
                "val-core/openai/gsm8k/acc/mean@1", eval_every=50, eval_at0=True,
                derive=chain(lambda s, r, rng, st: r.update({"critic/rewards/mean": r["critic/score/mean"],
                                                             "critic/values/mean": .9 * r["critic/score/mean"]}),
                             verl_timing(0.012, 20, critic=True))),
    write=writer(w_verl_jsonl)(project="verl_rm_ppo", exp="llama3.1-8b-ppo-rm-gsm8k",
                               cfg=verl_cfg("verl_rm_ppo", "llama3.1-8b-ppo-rm-gsm8k", 1500, 50, 100, 15, "gae",
                                            {"reward_model.enable": True,
                                             "reward_model.model.path": "internal/rm-helpful-8b",
                                             "actor_rollout_ref.actor.use_kl_loss": True,
                                             "actor_rollout_ref.rollout.n": 1, "trainer.total_training_steps": 1500},
                                            logger=("console", "file")),
                               ckpt_every=100),
    seed=3521, steps=(1000, 1500), label="sor", onset=800, sps=55, spe=15, age_min=9,
    tags="subtle ppo critic rm-overoptimisation verl-jsonl live",
    why="verl PPO + GAE trained on a learned reward model (critic/score/mean is the RM score), validated with the "
        "rule-based GSM8K scorer (val-core .../acc/mean@1, N=1319, every 50, sd 0.0126); JSONL file logger, step "
        "1000 of 1500. RM score climbs steadily 0.8 -> 2.6 and kl_loss accelerates (0.04 at 600 -> 0.11), lengths "
        "210 -> 300: early signs of over-optimising the RM. But the gold signal has only plateaued: ~0.70 from 500 "
        "to 800, then ~0.687 at 1000, about 1.2 sd below the best: within what noise allows. Nothing more is being "
        "gained, and whether the last 200 steps cost anything cannot be told yet: stopping is right, going back to "
        "<W> is as good (onset 800).")


# ---- S2: TRL DPO with checkpoints; likelihood displacement; preference metrics improve, GSM8K generation falls.
def _s2(s, row, rng, st):
    row["rewards/chosen"] = 0.01 * (row["logps/chosen"] + 95) + 0.02 * rng.normal()
    row["rewards/rejected"] = 0.01 * (row["logps/rejected"] + 110) + 0.02 * rng.normal()
    row["rewards/margins"] = row["rewards/chosen"] - row["rewards/rejected"]


add(name="rb-trl-dpo-ckpts-limit3-likelihood-displacement-logps-chosen-minus-95-to-minus-410-pref-acc-rising-gsm8k-gen-eval-falls",
    story=Story(None, {},
                {"loss": Sig(K((0, .693), (300, .6), (900, .5)), "mul", .05),
                 "grad_norm": Sig(K((0, 6), (900, 4)), "heavy"),
                 "learning_rate": Sig(lin_lr(5e-7, 100, 1875), "exact"),
                 "logps/chosen": Sig(K((0, -95), (300, -150), (900, -410)), "add", 4),
                 "logps/rejected": Sig(K((0, -110), (300, -200), (900, -560)), "add", 5),
                 "rewards/accuracies": Sig(K((0, .5), (300, .70), (900, .80)), "frac", 640),
                 "logits/chosen": Sig(K((0, -.8), (900, -1.6)), "add", .04),
                 "logits/rejected": Sig(K((0, -.85), (900, -1.7)), "add", .04)},
                {"eval_loss": Ev(K((0, .693), (900, .56)), kind="mul", x=.008),
                 "eval_rewards/accuracies": Ev(K((0, .5), (100, .60), (900, .74)), 600),
                 "eval_rewards/margins": Ev(K((0, .005), (900, 1.3)), kind="mul", x=.03),
                 "eval_logps/chosen": Ev(K((0, -96), (900, -405)), kind="add", x=2),
                 "eval_gsm8k_accuracy": Ev(K((0, .58), (300, .61), (400, .61), (900, .55)), 1319)},
                "eval_gsm8k_accuracy", eval_every=100, log_every=10, derive=_s2),
    write=writer(w_trl)(spe=625, save_every=100, limit=3, eval_steps=100, epochs=3, cb_keys=("eval_gsm8k_accuracy",),
                        runtime_n=600),
    seed=3522, steps=(900, 1875), label="rb", onset=400, sps=14, age_min=6,
    tags="subtle dpo likelihood-displacement trl-state checkpoints live",
    why="TRL DPO (beta 0.01) on math preference pairs, checkpoint folders (save_total_limit 3: 700, 800, 900) with "
        "a callback that logs greedy GSM8K accuracy (eval_gsm8k_accuracy, N=1319, sd 0.013) next to the usual eval "
        "rows every 100 steps; step 900 of 1875, live. Every preference metric looks good: eval "
        "rewards/accuracies 0.60 -> 0.74, eval loss 0.69 -> 0.56, margins growing. But it is likelihood "
        "displacement: logps/chosen falls -95 -> -410 (rejected -110 -> -560), both implicit rewards go strongly "
        "negative, and generation quality pays: GSM8K peaked ~0.61 at 300-400 and is ~0.55 at 900 (4.5 sd). Roll "
        "back to <W> (onset 400); the kept checkpoints are all later, so restore an earlier copy or rerun with a "
        "larger beta / an NLL term.")


# ---- S3: verl JSONL; train/rollout probability mismatch creeps up with length; val eases ~1 sd: stop or rollback.
add(name="sor-verl-jsonl-rollout-probs-diff-creeps-0.006-to-0.019-pearson-0.996-to-0.975-clipfrac-doubles-val-eases-0.9sd",
    story=Story(Binary(K((0, .35), (600, .61), (1200, .61)), P=256, G=8, s=1.6),
                {"mean": "critic/score/mean", "max": "critic/score/max", "min": "critic/score/min"},
                {"training/rollout_probs_diff_mean": Sig(K((0, .004), (400, .006), (1200, .019)), "mul", .05),
                 "training/rollout_probs_diff_max": Sig(K((0, .3), (1200, .9)), "mul", .1, hi=1.0),
                 "training/rollout_probs_diff_std": Sig(K((0, .012), (1200, .045)), "mul", .05),
                 "training/rollout_actor_probs_pearson_corr": Sig(K((0, .998), (400, .996), (1200, .975)), "add", .001,
                                                                  hi=1.0),
                 "actor/pg_loss": Sig(C(0.0), "add", .01),
                 "actor/pg_clipfrac": Sig(K((0, .0035), (400, .004), (1200, .0075)), "mul", .1),
                 "actor/ppo_kl": Sig(C(.0001), "add", .0002),
                 "actor/entropy": Sig(K((0, .38), (1200, .31)), "mul", .02),
                 "actor/kl_loss": Sig(K((0, .001), (1200, .035)), "mul", .05), "actor/kl_coef": Sig(C(.001), "exact"),
                 "actor/grad_norm": Sig(C(.11), "heavy"), "actor/lr": Sig(C(1e-6), "exact"),
                 "response_length/mean": Sig(K((0, 950), (600, 1500), (1200, 1850)), "mul", .02),
                 "response_length/clip_ratio": Sig(K((0, .005), (1200, .015)), "frac", 2048)},
                {"val-core/math500/acc/mean@1": Ev(K((0, .41), (550, .56), (900, .565), (1200, .545)), 500)},
                "val-core/math500/acc/mean@1", eval_every=50, eval_at0=True,
                derive=chain(lambda s, r, rng, st: r.update({"critic/rewards/mean": r["critic/score/mean"],
                                                             "critic/advantages/mean": .001 * rng.normal()}),
                             verl_timing(0.03, 30))),
    write=writer(w_verl_jsonl)(project="grpo_math", exp="qwen2.5-7b-grpo-bf16-vllm",
                               cfg=verl_cfg("grpo_math", "qwen2.5-7b-grpo-bf16-vllm", 2000, 50, 100, 60, "grpo",
                                            {"actor_rollout_ref.actor.use_kl_loss": True,
                                             "actor_rollout_ref.actor.ppo_mini_batch_size": 64,
                                             "actor_rollout_ref.rollout.dtype": "bfloat16",
                                             "actor_rollout_ref.rollout.calculate_log_probs": True,
                                             "trainer.total_training_steps": 2000},
                                            logger=("console", "file")),
                               ckpt_every=100),
    seed=3523, steps=(1200, 2000), label="sor", onset=900, sps=150, spe=60, age_min=6,
    tags="subtle off-policy train-inference-mismatch verl-jsonl live",
    why="verl GRPO (bf16 vLLM rollouts, four mini-batches per step, rollout log-probs recorded so the "
        "training/rollout_probs_diff_* keys are logged), JSONL, step 1200 of 2000, live. As responses lengthen "
        "(950 -> 1850 tokens) the rollout-vs-training mismatch creeps up: probs_diff_mean 0.006 -> 0.019, "
        "Pearson correlation 0.996 -> 0.975, pg_clipfrac doubles 0.4% -> 0.75%. A warning, not yet a breakage. "
        "Score flat at ~0.61 since 600; MATH-500 validation (N=500, every 50, sd 0.022) ~0.56 from 550 to 900 and "
        "~0.545 at 1200 (0.9 sd below the best). Nothing is being gained and the drift's cost is within noise: stop "
        "is right, going back to <W> is as good (onset 900).")


# ---- S4: OpenRLHF REINFORCE++-baseline console; vllm_kl and clip ratio grow with lengths; eval slides 2.5 sd.
def _s4(s, row, rng, st):
    row["rollout/reward_mean"] = row["reward"]
    row["return"] = row["reward"] - 0.4 * row["kl"]
    row["total_length"] = row["response_length"] + 160
    row["timing/generation"] = 0.045 * row["response_length"] * (1 + 0.04 * rng.normal())
    row["timing/step_total"] = sum(row[k] for k in ("timing/generation", "timing/make_experience",
                                                    "timing/ppo_train", "timing/broadcast"))


add(name="rb-openrlhf-console-reinforcepp-vllm-kl-x10-clip-ratio-0.015-to-0.11-as-lengths-double-math500-slides-2.5sd-from-650",
    story=Story(Binary(K((0, .30), (600, .58), (1000, .57)), P=128, G=4, s=1.5),
                {"mean": "reward", "std": "rollout/reward_std", "gstd": "group_reward_std"},
                {"policy_loss": Sig(C(0.0), "add", .02), "kl": Sig(K((0, .0005), (1000, .06)), "mul", .05),
                 "vllm_kl": Sig(K((0, .0008), (500, .0012), (700, .004), (1000, .013)), "mul", .08),
                 "ppo_clip_ratio": Sig(K((0, .012), (500, .015), (700, .05), (1000, .11)), "mul", .07),
                 "ppo_kl": Sig(K((0, 1e-4), (700, 4e-4), (1000, .002)), "mul", .2),
                 "entropy_loss": Sig(K((0, .5), (650, .43), (1000, .62)), "mul", .02),
                 "response_length": Sig(K((0, 800), (500, 1300), (1000, 2600)), "mul", .02),
                 "truncated": Sig(K((0, .01), (600, .02), (1000, .09)), "frac", 512),
                 "actor_grad_norm": Sig(K((0, .2), (650, .2), (1000, .45)), "heavy"),
                 "actor_lr": Sig(C(1e-6), "exact"), "timing/make_experience": Sig(C(20), "mul", .04),
                 "timing/ppo_train": Sig(C(35), "mul", .04), "timing/broadcast": Sig(C(4), "mul", .05)},
                {"eval_math500_pass1": Ev(K((0, .40), (600, .54), (650, .545), (1000, .49)), 500),
                 "eval_math500_pass4": Ev(K((0, .60), (650, .72), (1000, .69)), 500),
                 "eval_response_length_mean": Ev(K((0, 820), (500, 1320), (1000, 2650)), kind="mul", x=.02)},
                "eval_math500_pass1", eval_every=50, derive=_s4),
    write=writer(w_openrlhf_console)(
        args="Namespace(advantage_estimator='reinforce_baseline', n_samples_per_prompt=4, rollout_batch_size=128, "
             "num_episodes=1, max_samples=256000, micro_train_batch_size=4, train_batch_size=128, max_epochs=1, "
             "generate_max_len=4096, eval_steps=50, save_steps=200, vllm_num_engines=4, "
             "pretrain='deepseek-ai/DeepSeek-R1-Distill-Qwen-7B', use_kl_loss=True, kl_estimator='k2')",
        ckpt_every=200),
    seed=3524, steps=(1000, 2000), label="rb", onset=650, sps=160, age_min=5,
    tags="subtle off-policy reinforce++ openrlhf-console live",
    why="OpenRLHF REINFORCE++-baseline on math, console log (✨ Global step lines and evaluation lines), args imply "
        "2000 steps, at 1000 and live; checkpoints every 200. Up to ~650 it is a good run: reward 0.30 -> 0.58, "
        "MATH-500 pass@1 (N=500, every 50, sd 0.022) 0.40 -> ~0.545. Then lengths keep doubling (1300 -> 2600 "
        "tokens, truncation 2% -> 9%) and the vLLM-vs-training mismatch grows with them: vllm_kl 0.0012 -> 0.013, "
        "ppo_clip_ratio 0.015 -> 0.11, ppo_kl x5, entropy turns up 0.43 -> 0.62, grad norm doubles. Train reward "
        "only sags (0.58 -> 0.57) but pass@1 falls to ~0.49 by 1000 (2.5 sd) and pass@4 eases too. A drift with a "
        "real cost: roll back to <W> (onset 650; global_step600 is the newest saved checkpoint before it).")


# ---- S5: verl PPO TensorBoard; validation flat since 1100, cosine LR at its floor, 1860 of 2000: converged.
add(name="conv-verl-tb-ppo-gae-1860-of-2000-math-val-flat-0.585-since-1100-cosine-lr-at-floor-critic-ev-0.86",
    story=Story(Binary(K((0, .30), (1100, .56), (1860, .57)), P=512, G=1, s=1.6),
                {"mean": "critic/score/mean"},
                {"critic/vf_explained_var": Sig(K((0, .05), (400, .8), (1860, .86)), "add", .02),
                 "critic/vf_loss": Sig(K((0, .1), (400, .03), (1860, .025)), "mul", .08),
                 "critic/vf_clipfrac": Sig(C(.03), "mul", .1),
                 "critic/advantages/mean": Sig(C(0.0), "add", .002),
                 "actor/pg_clipfrac": Sig(C(.004), "mul", .1), "actor/ppo_kl": Sig(C(.0002), "add", .0002),
                 "actor/entropy": Sig(K((0, .55), (1860, .38)), "mul", .02),
                 "actor/kl_loss": Sig(K((0, .001), (1100, .03), (1860, .035)), "mul", .05),
                 "actor/grad_norm": Sig(C(.15), "heavy"),
                 "actor/lr": Sig(cos_lr(1e-6, 50, 2000, 1e-7), "exact"),
                 "critic/lr": Sig(cos_lr(1e-5, 50, 2000, 1e-6), "exact"),
                 "response_length/mean": Sig(K((0, 350), (1860, 310)), "mul", .03)},
                {"val-core/lighteval/MATH/acc/mean@1": Ev(K((0, .31), (1100, .585), (1860, .585)), 5000)},
                "val-core/lighteval/MATH/acc/mean@1", eval_every=100, eval_at0=True,
                derive=chain(lambda s, r, rng, st: r.update({"critic/rewards/mean": r["critic/score/mean"]}),
                             verl_timing(0.015, 18, critic=True))),
    write=writer(w_verl_tb)(project="ppo_math", exp="qwen2.5-3b-ppo-cosine",
                            cfg=verl_cfg("ppo_math", "qwen2.5-3b-ppo-cosine", 2000, 100, 200, 20, "gae",
                                         {"actor_rollout_ref.rollout.n": 1,
                                          "actor_rollout_ref.actor.optim.lr_warmup_steps": 50,
                                          "actor_rollout_ref.actor.optim.warmup_style": "cosine",
                                          "actor_rollout_ref.actor.optim.min_lr_ratio": 0.1,
                                          "trainer.total_training_steps": 2000},
                                         logger=("console", "tensorboard")),
                            ckpt_every=200),
    seed=3525, steps=(1860, 2000), label="conv", sps=45, spe=20, age_min=7,
    tags="subtle ppo critic converged near-end verl-tensorboard live",
    why="verl PPO + GAE, TensorBoard, step 1860 of 2000 (hydra config), live. MATH validation (5000 problems, "
        "every 100, sd 0.007) rose 0.31 -> 0.585 by 1100 and has been flat at 0.585 for 760 steps; train score "
        "0.56 -> 0.57 over the same span, critic settled (explained variance 0.86), KL loss flat, and the cosine "
        "schedule is at its floor (actor lr ~1e-7). Converged with 140 steps left: stopping now or letting it "
        "finish are both fine.")


# ---- S7: legacy TRL PPO TensorBoard; adaptive KL controller pins KL at the target, RM score flat: stop.
def _kl_coef():
    cache = {}

    def coef(step: int, kl_level: Level) -> float:
        if not cache:
            c = 0.2
            for s in range(0, 2001):
                cache[s] = c
                err = min(max(kl_level(s) / 6.0 - 1, -0.2), 0.2)
                c *= 1 + err * 256 / 10000
        return cache[step]
    return coef


_S7_KL = K((0, .05), (250, 6.2), (350, 6.9), (900, 7.0))
_S7_COEF = _kl_coef()


def _s7(s, row, rng, st):
    c = _S7_COEF(s, _S7_KL)
    row["objective/kl_coef"] = c
    row["ppo/mean_scores"] = row["env/reward_mean"]
    row["ppo/std_scores"] = row["env/reward_std"]
    row["ppo/mean_non_score_reward"] = -c * row["objective/kl"] / row["tokens/responses_len_mean"] * 10
    row["objective/logprobs"] = -row["objective/entropy"] * 1.02
    row["objective/ref_logprobs"] = row["objective/logprobs"] - row["objective/kl"]
    row["ppo/returns/mean"] = row["env/reward_mean"] * .6 + row["ppo/mean_non_score_reward"]
    row["ppo/loss/total"] = row["ppo/loss/policy"] + 0.1 * row["ppo/loss/value"]


add(name="stop-legacy-trl-ppo-tb-adaptive-kl-pins-kl-at-target-6-coef-climbs-from-0.07-to-0.7-rm-score-and-gold-flat-since-350",
    story=Story(Cont(K((0, .1), (250, 1.6), (350, 1.75), (900, 1.78)), B=256, sd_sample=1.1, sd_prompt=.5),
                {"mean": "env/reward_mean", "std": "env/reward_std"},
                {"objective/kl": Sig(_S7_KL, "mul", .05), "objective/entropy": Sig(K((0, 60), (900, 41)), "mul", .02),
                 "ppo/loss/policy": Sig(C(-.01), "add", .01),
                 "ppo/loss/value": Sig(K((0, .8), (200, .15), (900, .12)), "mul", .1),
                 "ppo/policy/approxkl": Sig(C(.01), "mul", .2), "ppo/policy/policykl": Sig(C(.009), "mul", .2),
                 "ppo/policy/clipfrac": Sig(C(.07), "mul", .1),
                 "ppo/policy/entropy": Sig(K((0, 2.1), (900, 1.6)), "mul", .02),
                 "ppo/val/var_explained": Sig(K((0, .1), (200, .6), (900, .62)), "add", .03),
                 "ppo/val/clipfrac": Sig(C(.1), "mul", .1), "ppo/learning_rate": Sig(C(1.41e-5), "exact"),
                 "tokens/queries_len_mean": Sig(C(38), "mul", .02),
                 "tokens/responses_len_mean": Sig(K((0, 60), (350, 78), (900, 80)), "mul", .03),
                 "time/ppo/total": Sig(C(9.5), "mul", .05)},
                {"eval/gold_winrate": Ev(K((0, .50), (300, .60), (350, .605), (900, .60)), 400)},
                "eval/gold_winrate", eval_every=50, eval_at0=True, derive=_s7),
    write=writer(w_legacy_ppo_tb)(config={"model_name": "EleutherAI/pythia-1.4b-sft", "learning_rate": 1.41e-5,
                                          "batch_size": 256, "mini_batch_size": 32, "ppo_epochs": 4,
                                          "adap_kl_ctrl": True, "init_kl_coef": 0.2, "target": 6, "horizon": 10000,
                                          "log_with": "tensorboard", "steps": 2000}),
    seed=3527, steps=(900, 2000), label="stop", onset=350, sps=12, age_min=8,
    tags="subtle ppo adaptive-kl kl-bound plateau legacy-trl-tensorboard live",
    why="Legacy TRL PPOTrainer (v0.11-era keys through the accelerate TensorBoard tracker; adap_kl_ctrl, init 0.2, "
        "target 6 nats), plus a custom eval/gold_winrate logged by the script (400 prompts, every 50). The RM score "
        "rose 0.1 -> 1.6 by 250 while KL climbed to the target; since 350 the policy sits against the constraint: "
        "objective/kl held at ~7 (above 6) and the controller answers by raising objective/kl_coef about tenfold "
        "from its low (~0.07 -> ~0.7). env/reward_mean is flat 1.75 -> 1.78 and the gold win rate flat at ~0.60 "
        "(sd 0.024) for 550 steps. The KL budget is spent and nothing more is being gained; current weights are as "
        "good as any: stop (onset ~350).")


# ---- S8: hand-written DAPO loop CSV; clip-higher lets entropy run up, clip_frac_high grows, eval slides 2.3 sd.
def _s8(s, row, rng, st):
    row["reward_mean"] = 2 * row["acc_mean"] - 1
    f = row["frac_groups_filtered"]
    row["gen_batches"] = math.ceil(1 / max(1e-3, 1 - f) * (0.85 + 0.3 * rng.random()))


add(name="rb-custom-csv-dapo-loop-clip-high-frac-0.007-to-0.04-entropy-0.45-to-1.1-lengths-up-eval-acc-slides-2.2sd-from-520",
    story=Story(Binary(K((0, .33), (500, .60), (900, .56)), P=128, G=8, s=1.6),
                {"mean": "acc_mean", "zero": "frac_groups_filtered"},
                {"clip_frac_low": Sig(C(.001), "mul", .2),
                 "clip_frac_high": Sig(K((0, .005), (500, .007), (900, .04)), "mul", .1),
                 "entropy": Sig(K((0, .47), (500, .45), (900, 1.1)), "mul", .02),
                 "resp_len_mean": Sig(K((0, 1100), (500, 1500), (900, 2300)), "mul", .02),
                 "trunc_frac": Sig(K((0, .01), (500, .02), (900, .08)), "frac", 1024),
                 "grad_norm": Sig(K((0, .12), (500, .13), (900, .3)), "heavy"), "lr": Sig(C(1e-6), "exact")},
                {"eval_acc": Ev(K((0, .35), (480, .52), (520, .522), (900, .47)), 500)},
                "eval_acc", eval_every=40, derive=_s8),
    write=writer(w_csv)(fname="logs/dapo_train_metrics.csv",
                        cols=["reward_mean", "acc_mean", "frac_groups_filtered", "gen_batches", "clip_frac_low",
                              "clip_frac_high", "entropy", "resp_len_mean", "trunc_frac", "grad_norm", "lr", "eval_acc"],
                        config={"algo": "dapo", "eps_low": 0.2, "eps_high": 0.28, "group_size": 8,
                                "prompts_per_step": 128, "dynamic_sampling": True, "total_steps": 1600,
                                "eval_every": 40, "eval_set": "math500", "max_new_tokens": 4096}),
    seed=3528, steps=(900, 1600), label="rb", onset=520, sps=180, age_min=4,
    tags="subtle dapo clip-higher entropy-rise custom-csv live",
    why="Hand-written DAPO-style loop (eps_low 0.2 / eps_high 0.28, dynamic sampling), one CSV row per step with "
        "eval_acc (MATH-500, N=500, sd 0.022) every 40 steps; 900 of 1600, live. Until ~500 a good run: acc 0.33 -> "
        "0.60, entropy ~0.45, clip_frac_high ~0.006. Then the upper clip, which lets low-probability tokens grow, "
        "binds more and more (clip_frac_high 0.007 -> 0.04 while clip_frac_low stays 0.001) and entropy runs up "
        "0.45 -> 1.1, lengths 1500 -> 2300, truncation 2% -> 8%, grad norm x2.3. Train accuracy only eases (0.60 -> "
        "0.56) with the filtered share steady near 0.23, but eval accuracy slides from ~0.52 (480-520) to ~0.47 at "
        "880 (2.2 sd), in step with the entropy. Roll back to <W> (onset 520) and lower "
        "eps_high or add an entropy check.")


# ---- S9: HF TensorBoard only; the policy shortens answers to always pass the format check; answer reward falls.
def _s9(s, row, rng, st):
    f = row["rewards/format_reward/mean"]
    row["rewards/format_reward/std"] = math.sqrt(max(f * (1 - f), 0.0)) + 0.002


add(name="rb-hf-tb-grpo-format-check-farmed-by-short-answers-format-0.82-to-1.0-lengths-1100-to-450-answer-reward-and-eval-fall",
    story=Story(Binary(K((0, .40), (450, .50), (500, .502), (900, .43)), P=16, G=8, s=1.5, per_log=10),
                {"mean": "rewards/answer_reward/mean", "std": "rewards/answer_reward/std", "zero": "frac_reward_zero_std"},
                {"rewards/format_reward/mean": Sig(K((0, .82), (300, .98), (450, .995), (900, 1.0)), "add", .008, hi=1.0),
                 "loss": Sig(C(0.0), "add", .004), "grad_norm": Sig(C(.09), "heavy"),
                 "learning_rate": Sig(const_lr(1e-6, 20), "exact"),
                 "completions/mean_length": Sig(K((0, 1100), (450, 700), (900, 450)), "mul", .03),
                 "completions/min_length": Sig(C(60), "mul", .2),
                 "completions/max_length": Sig(K((0, 2048), (450, 2048), (900, 1300)), "mul", .05, hi=2048),
                 "completions/clipped_ratio": Sig(K((0, .12), (450, .02), (900, 0.0)), "frac", 1280),
                 "entropy": Sig(K((0, .50), (900, .36)), "mul", .02),
                 "clip_ratio/low_mean": Sig(C(0.0), "exact"), "clip_ratio/high_mean": Sig(C(0.0), "exact"),
                 "step_time": Sig(K((0, 55), (900, 28)), "mul", .05)},
                {"eval_rewards/answer_reward/mean": Ev(K((0, .38), (450, .478), (500, .48), (900, .41)), 256, "pg", g=4),
                 "eval_rewards/format_reward/mean": Ev(K((0, .80), (300, .97), (900, 1.0)), kind="add", x=.005),
                 "eval_completions/mean_length": Ev(K((0, 1080), (450, 690), (900, 440)), kind="mul", x=.02)},
                "eval_rewards/answer_reward/mean", eval_every=100, log_every=10,
                derive=chain(_s9, grpo_common("answer_reward", {"format_reward": 1.0, "answer_reward": 1.0},
                                              per_step=128, prompt_len=200)),
                ederive=lambda s, e, rng: e.update({"eval_reward": e["eval_rewards/answer_reward/mean"] +
                                                    min(1.0, e["eval_rewards/format_reward/mean"])})),
    write=writer(w_trl)(spe=400, tb_host="a100-node-7", eval_steps=100, epochs=3),
    seed=3529, steps=(900, 2400), label="rb", onset=500, sps=40, age_min=3,
    tags="subtle grpo reward-hacking format-reward length-collapse hf-tensorboard live",
    why="TRL GRPO with two reward functions of equal weight, format_reward (regex: <think>...</think><answer>..."
        "</answer>, 0 when truncated before the closing tag) and answer_reward (exact match); report_to tensorboard "
        "only (runs/<stamp>_<host>), no checkpoints in the folder, step 900, live. Truncated long answers lose the "
        "format point, so the policy learns to answer short: completions 1100 -> 450 tokens, clipped_ratio 0.12 -> "
        "0, format_reward 0.82 -> 1.00. The total reward rises to ~1.5 by 500 and then only eases (1.43 at 900), "
        "hiding what the per-function parts show: answer_reward peaks ~0.50 around 450-500 and falls to ~0.43, and "
        "eval answer reward (256 prompts x 4, every 100, sd ~0.021) falls from ~0.48 at 500 to ~0.41 at 900 "
        "(3.3 sd). The format check is being farmed at the cost of reasoning: roll back to <W> (onset 500).")


# ---- S10: TRL DPO console of dicts; eval preference accuracy flat since 500 at epoch 1.3 of 3: stop.
add(name="stop-trl-console-dpo-eval-pref-acc-flat-0.735-since-500-train-acc-0.9-margins-growing-epoch-1.3-of-3-live",
    story=Story(None, {},
                {"loss": Sig(K((0, .693), (500, .42), (1300, .28)), "mul", .06),
                 "grad_norm": Sig(K((0, 10), (1300, 6)), "heavy"),
                 "learning_rate": Sig(lin_lr(5e-7, 100, 3000), "exact"),
                 "rewards/chosen": Sig(K((0, 0), (1300, -1.8)), "add", .08),
                 "rewards/margins": Sig(K((0, .02), (500, 2.1), (1300, 4.5)), "mul", .05),
                 "rewards/accuracies": Sig(K((0, .5), (500, .82), (1300, .90)), "frac", 640),
                 "logps/chosen": Sig(K((0, -260), (1300, -300)), "add", 4),
                 "logits/chosen": Sig(C(-1.05), "add", .04), "logits/rejected": Sig(C(-1.1), "add", .04)},
                {"eval_loss": Ev(K((0, .693), (500, .54), (1300, .535)), kind="mul", x=.006),
                 "eval_rewards/chosen": Ev(K((0, 0), (1300, -1.9)), kind="add", x=.04),
                 "eval_rewards/margins": Ev(K((0, .01), (500, 2.4), (1300, 3.1)), kind="mul", x=.02),
                 "eval_rewards/accuracies": Ev(K((0, .5), (100, .66), (500, .735), (1300, .737)), 1000)},
                "eval_rewards/accuracies", eval_every=100, log_every=10, derive=_dpo(0.1, -260, -275),
                ederive=lambda s, e, rng: e.update({"eval_rewards/rejected": e["eval_rewards/chosen"] -
                                                    e["eval_rewards/margins"]})),
    write=writer(w_trl_console)(spe=1000, fname="dpo_train.log", eval_n=125,
                                head=("DPOConfig(beta=0.1, loss_type='sigmoid', num_train_epochs=3, logging_steps=10, "
                                      "eval_steps=100, per_device_train_batch_size=8, gradient_accumulation_steps=1)",
                                      "***** Running training *****", "  Num examples = 64,000", "  Num Epochs = 3",
                                      "  Total optimization steps = 3,000")),
    seed=3530, steps=(1300, 3000), label="stop", onset=500, sps=6, age_min=5,
    tags="subtle dpo plateau trl-console live",
    why="TRL DPO (beta 0.1, 3 epochs = 3000 steps), console of dicts (epoch only, steps from the progress bar), at "
        "1300 and live. Eval preference accuracy (1000 pairs, every 100, sd 0.014) climbed 0.50 -> 0.735 by step 500 "
        "and has been flat since (0.737 at 1300, eight evals), eval loss flat at ~0.54. Meanwhile train accuracy "
        "keeps rising 0.82 -> 0.90 and margins 2.1 -> 4.5: the model is fitting the training pairs, not generalising "
        "further, and epochs 2-3 usually only widen that gap. No decline yet, so nothing to roll back to; nothing "
        "more to gain: stop (onset ~500).")


CASES = [s.case() for s in SPECS]
SPEC = {s.name: s for s in SPECS}


# --------------------------------------------------------------------------------------------------- run / check

def set_times(folder: Path, run: dict) -> None:
    paths = sorted(folder.rglob("*"), key=lambda p: len(p.parts), reverse=True)
    for p in [*paths, folder]:
        t = run["mt"].get(p, run["t_end"])
        os.utime(p, (t, t), follow_symlinks=False)


def write_run(case: Case, folder: Path) -> None:
    spec = SPEC[case.name]
    rng = np.random.default_rng(case.seed)
    run = spec.story.draws(rng, case.reached)
    t_end = NOW - spec.age_min * 60
    reached = case.reached
    run.update(reached=reached, planned=case.planned or reached, finished=spec.finished, sps=spec.sps, seed=case.seed,
               t_end=t_end, t=lambda s: t_end - (reached - s) * spec.sps, mt={},
               epoch=lambda s: int((s - 1) // spec.spe) if spec.spe < 1e8 else 0)
    folder.mkdir(parents=True, exist_ok=True)
    case.write(run, folder)
    set_times(folder, run)


def check(cases: list[Case]) -> None:
    for c in cases:
        spec = SPEC[c.name]
        st = spec.story
        lv, sdf = st.head()
        steps = st.head_steps(c.reached)
        b = st.better
        best_s = max(steps, key=lambda s: b * lv(s))
        sd = sdf(lv(best_s))
        print(f"{c.name}: {c.labels.get('preferred')} accept={c.labels.get('accept')} "
              f"window={c.labels.get('rollback_window')} onset={c.labels.get('onset_step')} "
              f"steps={c.reached}/{c.planned} age={spec.age_min}min")
        print(f"    headline {st.headline}: best {lv(best_s):.3f}@{best_s} last {lv(steps[-1]):.3f}@{steps[-1]} "
              f"sd {sd:.4f} ({b * (lv(best_s) - lv(steps[-1])) / sd:.1f} sd below best)")
        run = st.draws(np.random.default_rng(c.seed), c.reached)
        if st.headline == TRAIN:
            ev = [(s, r[st.reward and next(iter(st.rkeys.values()))]) for s, r in run["train"]]
        else:
            ev = [(s, r[st.headline]) for s, r in run["eval"]]
        stride = max(1, len(ev) // 12)
        print("    drawn " + " ".join(f"{s}:{v:.3f}" for s, v in ev[::stride]) + f" | last {ev[-1][0]}:{ev[-1][1]:.3f}")


HEADER = """# Holdout set 35: hand-built runs written by make_holdout35.py, independent of the assessor, its judges and the
# generators of the other holdout sets; aimed at algorithms and signals beyond plain GRPO (PPO critics and KL
# controllers, DAPO clip-higher / overlong / dynamic sampling, GSPO, RLOO, REINFORCE++, DPO, multi-turn agents and
# tools, train/inference mismatch). Labels: what a careful practitioner should do under DESIGN.md's decision
# contract, read from the noise-free levels of each story. rollback_window is inclusive: from the first logged
# headline step whose level is within one sampling sd of the best level to the newest such step not after
# onset_step, in the run's own logged steps. Run `.venv/bin/python evals/holdout35/make_holdout35.py` to write
# runs/ (gitignored); `--check` prints levels and windows.
"""


def main() -> None:
    holdout_kit.main(HERE, "make_holdout35.py", "holdout35.yaml", "h35-", "holdout35", HEADER, CASES, write_run, check)


if __name__ == "__main__":
    main()
