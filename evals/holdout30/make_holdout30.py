"""Holdout set 30: blind-labelled RL post-training runs, aimed at failure shapes and run shapes off the usual GRPO story.

Run from the worktree root:
    .venv/bin/python evals/holdout30/make_holdout30.py           # writes runs/ (gitignored) and holdout30.yaml
    .venv/bin/python evals/holdout30/make_holdout30.py --check   # also prints levels and rollback windows

Written without reading the assessor. Each case is a story: noise-free levels per optimiser step for the train
reward (or its weighted components), the held-out evals and the side signals, drawn through this set's noise model
and written the way one framework (and version) writes them, with the exact metric names it uses.

Noise model (this set's own):
  * rewards are drawn per sample, as a (P prompts x G rollouts) array each optimiser step. A prompt's solve rate is
    logit-normal, sigmoid(mu + 1.1 z), with mu calibrated so that the expected batch mean equals the story's level.
    Binary rewards are Bernoulli per rollout; partial credit is Binomial(4, q)/4; reward-model / judge scores are
    level + prompt offset (sd tau) + per-sample noise (sd sigma). Components are drawn from their own arrays and
    summed with the trainer's weights, so mean, std, zero-std fraction and pct_0/pct_1 come from the same draws;
  * a trainer that averages over its logging interval (TRL/HF) logs the mean of the interval's steps (grad norm and
    learning rate: the last step); OpenRLHF logs the current step only;
  * held-out evals: Binomial(N, p)/N, or the mean of N judge scores with per-item sd;
  * grad norm: level * exp(0.3 z), and on 1 step in 25 times (1 + 2|t_3|) (heavy right tail);
  * positive side signals (KL, entropy, lengths, times): log-normal, 5 % unless the story says otherwise; signed ones
    additive; rates drawn as Binomial(n, r)/n; learning rates exact.

Labels follow DESIGN.md ("What the three decisions mean") and come from each story's noise-free levels, never from
a tool. The rollback window runs from the first logged headline step whose level is within one sampling sd of the
best level (sd of one eval for an eval headline, of one logged value for a train headline) to the newest such step
not after onset_step, in the run's own logged units (samples, tokens, iterations when that is what it logs).
"""

from __future__ import annotations

import csv
import json
import math
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import holdout_kit
from holdout_kit import HEALTHY, Case, converged, dump_json, rollback, stop, tb_file, trainer_state

HERE = Path(__file__).resolve().parent
NOW = time.time()
Level = Callable[[float], float]
TRAIN = "@train"
SPREAD = 1.1  # sd of a prompt's solve-rate logit


def K(*pts: tuple[float, float]) -> Level:
    """Piecewise-linear level through (step, value) knots, flat outside them."""
    xs, ys = zip(*pts, strict=True)
    return lambda s: float(np.interp(s, xs, ys))


def C(v: float) -> Level:
    return lambda s: v


# ---------------------------------------------------------------------------------------------------- noise model

_GH_X, _GH_W = np.polynomial.hermite_e.hermegauss(48)
_GH_W = _GH_W / _GH_W.sum()
_MU: dict[float, float] = {}


def calib_mu(p: float) -> float:
    """mu such that E[sigmoid(mu + SPREAD z)] = p (z standard normal)."""
    p = round(min(max(p, 1e-4), 1 - 1e-4), 4)
    if p not in _MU:
        lo, hi = -20.0, 20.0
        for _ in range(60):
            mid = (lo + hi) / 2
            m = float((_GH_W / (1 + np.exp(-(mid + SPREAD * _GH_X)))).sum())
            lo, hi = (mid, hi) if m < p else (lo, mid)
        _MU[p] = (lo + hi) / 2
    return _MU[p]


@dataclass
class Comp:
    """One reward component: its level, how it is drawn, its weight in the total, and its logged key(s)."""

    level: Level
    kind: str = "bin"  # bin | part | score
    weight: float = 1.0
    key: str | None = None  # logged mean key (None: only enters the total)
    std_key: str | None = None
    tau: float = 0.3  # prompt offset sd (score)
    sigma: float = 1.0  # per-sample sd (score)


def sample(rng: np.random.Generator, c: Comp, s: float, P: int, G: int) -> np.ndarray:
    lv = c.level(s)
    if c.kind == "score":
        return lv + c.tau * rng.standard_normal((P, 1)) + c.sigma * rng.standard_normal((P, G))
    q = 1 / (1 + np.exp(-(calib_mu(lv) + SPREAD * rng.standard_normal((P, 1)))))
    if c.kind == "part":
        return rng.binomial(4, np.broadcast_to(q, (P, G))) / 4.0
    return rng.binomial(1, np.broadcast_to(q, (P, G))).astype(float)


@dataclass
class Side:
    level: Level
    kind: str = "ln"  # ln | int (rounded ln) | gn | add | rate | exact | clipgn
    scale: float = 0.05  # ln/gn sd of log, add sd, rate n, clipgn clip value

    def draw(self, rng: np.random.Generator, s: float) -> float:
        lv = self.level(s)
        if self.kind == "exact":
            return lv
        if self.kind == "int":
            return float(round(lv * math.exp(self.scale * rng.standard_normal())))
        if self.kind == "add":
            return lv + self.scale * rng.standard_normal()
        if self.kind == "rate":
            n = int(self.scale)
            return rng.binomial(n, min(max(lv, 0.0), 1.0)) / n
        if self.kind in ("gn", "clipgn"):
            g = lv * math.exp(0.3 * rng.standard_normal())
            if rng.random() < 1 / 25:
                g *= 1 + 2 * abs(rng.standard_t(3))
            return min(g, self.scale) if self.kind == "clipgn" else g
        return lv * math.exp(self.scale * rng.standard_normal())


@dataclass
class Ev:
    level: Level
    n: int = 500
    kind: str = "bin"  # bin | judge | ln
    sd: float = 1.0  # judge per-item sd

    def draw(self, rng: np.random.Generator, s: float) -> float:
        lv = self.level(s)
        if self.kind == "bin":
            return rng.binomial(self.n, min(max(lv, 0.0), 1.0)) / self.n
        if self.kind == "judge":
            return lv + self.sd / math.sqrt(self.n) * rng.standard_normal()
        return lv * math.exp(0.03 * rng.standard_normal())

    def one_sd(self, p: float) -> float:
        if self.kind == "bin":
            return math.sqrt(p * (1 - p) / self.n)
        return self.sd / math.sqrt(self.n)


@dataclass
class Story:
    reward: Comp | None  # the headline train reward (None when comps make the total)
    reward_key: str
    headline: str  # an eval key, or TRAIN
    comps: list[Comp] = field(default_factory=list)
    derived: dict[str, str] = field(default_factory=dict)  # std | zero | pct0 | pct1 | gstd -> logged key
    side: dict[str, Side] = field(default_factory=dict)
    evals: dict[str, Ev] = field(default_factory=dict)
    eval_every: int = 50
    eval_at0: bool = False
    P: int = 32
    G: int = 8
    log_every: int = 1
    avg: bool = True  # average over the logging interval (TRL/HF); False: log the current step (OpenRLHF)
    last_keys: tuple[str, ...] = ("grad_norm", "learning_rate")
    xmap: Callable[[int], int] = field(default=lambda s: s)  # optimiser step -> logged x (samples, tokens...)
    age_min: float = 5.0  # minutes since the newest write
    sps: float = 60.0  # wall seconds per optimiser step
    finished: bool = False
    alt: Comp | None = None  # the reward as logged from alt_from on (e.g. a normaliser switched on at a resume)
    alt_from: int = 0
    pg: Callable[[int], tuple[int, int]] | None = None  # (prompts, rollouts) per step when the batch changes
    eval_derive: Callable[[dict], dict] | None = None  # keys computed from the drawn evals (e.g. a weighted total)

    # ------------------------------------------------------------------ draws
    def batch(self, rng: np.random.Generator, s: int, main: bool = False) -> dict:
        comps = self.comps or [self.reward]
        if self.alt is not None and s >= self.alt_from and not main:
            comps = [self.alt]
        P, G = self.pg(s) if self.pg else (self.P, self.G)
        arrays = [sample(rng, c, s, P, G) for c in comps]
        total = sum(c.weight * a for c, a in zip(comps, arrays, strict=True))
        v = {self.reward_key: float(total.mean())}
        d = self.derived
        if "std" in d:
            v[d["std"]] = float(total.std(ddof=1))
        if "gstd" in d:
            v[d["gstd"]] = float(total.std(axis=1, ddof=1).mean())
        flat = np.ptp(total, axis=1) < 1e-9
        if "zero" in d:
            v[d["zero"]] = float(flat.mean())
        if "pct0" in d:
            v[d["pct0"]] = float(100 * (flat & (total[:, 0] <= 0)).mean())
        if "pct1" in d:
            v[d["pct1"]] = float(100 * (flat & (total[:, 0] >= 1)).mean())
        for c, a in zip(comps, arrays, strict=True):
            if c.key:
                v[c.key] = float(a.mean())
            if c.std_key:
                v[c.std_key] = float(a.std(ddof=1))
        for k, sd in self.side.items():
            v[k] = sd.draw(rng, s)
        return v

    def draws(self, rng: np.random.Generator, reached: int) -> dict:
        train = []
        k = self.log_every
        for s in range(k, reached + 1, k):
            if self.avg and k > 1:
                rows = [self.batch(rng, s - j) for j in range(k - 1, -1, -1)]
                v = {key: (rows[-1][key] if key.split("/")[-1] in self.last_keys or key in self.last_keys
                           else float(np.mean([r[key] for r in rows]))) for key in rows[-1]}
            else:
                v = self.batch(rng, s)
            train.append((s, v))
        ev = [(s, {key: e.draw(rng, s) for key, e in self.evals.items()}) for s in self.eval_steps(reached)]
        if self.eval_derive:
            ev = [(s, {**e, **self.eval_derive(e)}) for s, e in ev]
        return dict(train=train, eval=ev)

    def eval_steps(self, reached: int) -> list[int]:
        if not self.evals:
            return []
        return list(range(0 if self.eval_at0 else self.eval_every, reached + 1, self.eval_every))

    # ------------------------------------------------------------------ levels for labels
    def headline_level(self) -> Level:
        if self.headline != TRAIN:
            return self.evals[self.headline].level
        comps = self.comps or [self.reward]
        return lambda s: sum(c.weight * c.level(s) for c in comps)

    def headline_steps(self, reached: int) -> list[int]:
        if self.headline == TRAIN:
            return list(range(self.log_every, reached + 1, self.log_every))
        return self.eval_steps(reached)

    def headline_sd(self, s: int) -> float:
        if self.headline != TRAIN:
            return self.evals[self.headline].one_sd(self.headline_level()(s))
        rng = np.random.default_rng(12345)
        comps = self.comps or [self.reward]
        P, G = self.pg(s) if self.pg else (self.P, self.G)
        vals = []
        for _ in range(300):
            ms = [float(sum(c.weight * sample(rng, c, s, P, G) for c in comps).mean())
                  for _ in range(self.log_every if self.avg else 1)]
            vals.append(np.mean(ms))
        return float(np.std(vals))


def window(story: Story, reached: int, onset: int) -> tuple[int, int]:
    lv, steps = story.headline_level(), story.headline_steps(reached)
    best_s = max(steps, key=lv)
    sd = story.headline_sd(best_s)
    good = [s for s in steps if lv(s) >= lv(best_s) - sd]
    lo, hi = good[0], max(s for s in good if s <= onset)
    return story.xmap(lo), story.xmap(hi)


# ------------------------------------------------------------------------------------------------------ writers

def wall(run: dict, s: float) -> float:
    return run["t0"] + s * run["sps"]


def mark(run: dict, path: Path, t: float) -> None:
    run["mtimes"][path] = t


def fmt(x: float) -> float:
    return float(f"{x:.6g}")


def trl_rows(run: dict, spe: float, prefix_eval: bool = True) -> list[tuple[int, dict]]:
    """TRL log_history rows (train and eval dicts) in order; loss kept as TRL's near-zero GRPO loss."""
    rows = []
    ev = dict(run["eval"])
    for s, v in run["train"]:
        row = {k: fmt(x) for k, x in v.items()}
        row["epoch"] = round(s / spe, 4)
        row["step"] = s
        rows.append((s, row))
        if s in ev:
            e = {k: fmt(x) for k, x in ev[s].items()}
            e.update(eval_runtime=round(38.0 + 4 * math.sin(s), 3), eval_samples_per_second=round(13.1, 3),
                     eval_steps_per_second=round(0.41, 3), epoch=round(s / spe, 4), step=s)
            rows.append((s, e))
    return rows


def w_trl_state(run: dict, folder: Path, save_every: int, spe: float, limit: int | None = None, top: bool = False,
                extra_files: tuple[str, ...] = ("adapter_config.json",)) -> None:
    """TRL (HF Trainer) output dir: checkpoint-N/trainer_state.json with history up to N; top-level state at the end."""
    rows = trl_rows(run, spe)
    reached, planned = run["reached"], run["planned"]
    saves = list(range(save_every, reached + 1, save_every))
    if limit:
        saves = saves[-limit:]
    for n in saves:
        hist = [r for s, r in rows if s <= n]
        ck = folder / f"checkpoint-{n}"
        st = trainer_state(hist, n, planned, run["log_every"], save_every, run.get("eval_every"), round(n / spe, 4))
        dump_json(ck / "trainer_state.json", st)
        for name in extra_files:
            (ck / name).write_text('{"peft_type": "LORA", "r": 64, "lora_alpha": 128}\n')
        (ck / "optimizer.pt").write_bytes(b"\x80\x02}q\x00.")
        (ck / "scheduler.pt").write_bytes(b"\x80\x02}q\x00.")
        for p in [ck, *ck.iterdir()]:
            mark(run, p, wall(run, n) + 20)
    if top:
        hist = [r for _, r in rows]
        if run["finished"]:
            hist.append({"epoch": round(reached / spe, 4), "step": reached, "total_flos": 0.0,
                         "train_loss": 0.0213, "train_runtime": round(reached * run["sps"], 2),
                         "train_samples_per_second": 2.118, "train_steps_per_second": 0.017})
        st = trainer_state(hist, reached, planned, run["log_every"], save_every, run.get("eval_every"),
                           round(reached / spe, 4), training_stop=run["finished"])
        dump_json(folder / "trainer_state.json", st)


def tqdm_bar(n: int, total: int, elapsed: float, rate: float) -> str:
    frac = n / total
    full = int(frac * 10)
    bar = "█" * full + ("" if full == 10 else "▏") + " " * (9 - full if full < 10 else 0)
    rem = (total - n) * rate

    def hms(x: float) -> str:
        x = int(x)
        return f"{x // 3600}:{x // 60 % 60:02d}:{x % 60:02d}" if x >= 3600 else f"{x // 60:02d}:{x % 60:02d}"

    return f"{int(frac * 100):3d}%|{bar}| {n}/{total} [{hms(elapsed)}<{hms(rem)}, {rate:.2f}s/it]"


def w_trl_console(run: dict, folder: Path, spe: float, name: str = "train.log", vllm_noise: bool = True) -> None:
    """stdout of a TRL script piped to a file: tqdm bars joined by carriage returns, str(dict) per log call."""
    sps, total = run["sps"], run["planned"]
    out = ["INFO 11-27 09:02:11 [__init__.py:239] Automatically detected platform cuda.",
           "[2025-11-27 09:02:19,402] [INFO] [real_accelerator.py:254:get_accelerator] Setting ds_accelerator to cuda",
           "wandb: Tracking run with wandb version 0.19.8", "wandb: W&B syncing is set to `offline` in this directory.",
           f"  0%|          | 0/{total} [00:00<?, ?it/s]"]
    ev = dict(run["eval"])
    if 0 in ev:
        e0 = {k: fmt(x) for k, x in ev[0].items()}
        e0.update(eval_runtime=40.52, eval_samples_per_second=9.87, eval_steps_per_second=0.617, epoch=0)
        out.append("\r" + "\r".join(tqdm_bar(j, 25, j * 1.6, 1.6) for j in range(1, 26)))
        out.append(str(e0))
    bar_steps = []
    last = 0
    for s, v in run["train"]:
        segs = []
        for j in range(last + 1, s + 1):
            if vllm_noise and j % 3 == 1:
                segs.append(f"Processed prompts: 100%|██████████| 256/256 [00:{20 + j % 17:02d}<00:00, 9.71it/s, "
                            "est. speed input: 1804.22 toks/s, output: 5120.37 toks/s]")
            segs.append(tqdm_bar(j, total, j * sps, sps))
        last = s
        bar_steps.append(s)
        out.append("\r" + "\r".join(segs))
        d = {k: fmt(x) for k, x in v.items()}
        d["epoch"] = round(s / spe, 2)
        out.append(str(d))
        if s in ev:
            out.append("\r" + "\r".join(tqdm_bar(j, 25, j * 1.6, 1.6).replace(f"/{25} ", "/25 ") for j in range(1, 26)))
            e = {k: fmt(x) for k, x in ev[s].items()}
            e.update(eval_runtime=41.07, eval_samples_per_second=9.739, eval_steps_per_second=0.609,
                     epoch=round(s / spe, 2))
            out.append(str(e))
    path = folder / name
    path.write_text("\n".join(out) + "\r" + tqdm_bar(last, total, last * sps, sps), encoding="utf-8")


def hf_tb_name(folder: Path, t: float, host: str) -> Path:
    stamp = time.strftime("%b%d_%H-%M-%S", time.localtime(t))
    return folder / "runs" / f"{stamp}_{host}" / f"events.out.tfevents.{int(t)}.{host}.{1000 + int(t) % 9000}.0"


def w_hf_tb(run: dict, folder: Path, host: str = "gpu-node-07", spe: float = 0.0) -> None:
    """HF Trainer TensorBoard callback: rewrite_logs names (train/<key>, eval/<key without eval_>)."""
    events = []
    ev = dict(run["eval"])
    for s, v in run["train"]:
        row = {f"train/{k}": x for k, x in v.items()}
        if spe:
            row["train/epoch"] = s / spe
        events.append((wall(run, s), s, row))
        if s in ev:
            events.append((wall(run, s) + 40, s, {"eval/" + k.removeprefix("eval_"): x for k, x in ev[s].items()}))
    tb_file(hf_tb_name(folder, run["t0"], host), events)


def np_repr(x: float, np2: bool) -> str:
    return f"np.float64({float(x)!r})" if np2 else repr(float(x))


def w_verl_console(run: dict, folder: Path, np2: bool = True, name: str = "train.log") -> None:
    ev = dict(run["eval"])
    out = ["(TaskRunner pid=20931) Size of train dataloader: 468, Size of val dataloader: 1",
           f"(TaskRunner pid=20931) Total training steps: {run['planned']}",
           "(TaskRunner pid=20931) colocated worker base class <class 'verl.single_controller.base.worker.Worker'>",
           "(WorkerDict pid=21877) INFO 11-27 08:14:02 [model_runner.py:1110] Loading model weights took 14.2 GB"]
    if 0 in ev:
        out.append("(TaskRunner pid=20931) step:0 - " + " - ".join(f"{k}:{np_repr(x, np2)}" for k, x in ev[0].items()))
    for s, v in run["train"]:
        row = dict(v)
        if s in ev:
            row.update(ev[s])
            row["timing_s/testing"] = 61.3 + (s % 7)
        row["training/global_step"] = s
        if s % 37 == 0:
            out.append("(WorkerDict pid=21877) INFO 11-27 [block_manager.py:213] Swapping out KV cache blocks")
        out.append(f"(TaskRunner pid=20931) step:{s} - " + " - ".join(f"{k}:{np_repr(x, np2)}" for k, x in row.items()))
    if run["finished"]:
        out.append("(TaskRunner pid=20931) Final validation metrics: " + str({k: fmt(x) for k, x in run["eval"][-1][1].items()}))
    (folder / name).write_text("\n".join(out) + "\n", encoding="utf-8")


def w_verl_jsonl(run: dict, folder: Path, project: str, experiment: str) -> None:
    ev = dict(run["eval"])
    lines = []
    if 0 in ev:
        lines.append(json.dumps({"step": 0, "data": ev[0]}))
    for s, v in run["train"]:
        row = dict(v)
        if s in ev:
            row.update(ev[s])
        row["training/global_step"] = s
        row["training/epoch"] = s // 117
        lines.append(json.dumps({"step": s, "data": row}))
    p = folder / project / f"{experiment}.jsonl"
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text("\n".join(lines) + "\n")


def w_tb_raw(run: dict, folder: Path, sub: str, eval_prefix: str = "", train_prefix: str = "",
             host: str = "node-3", extra_eval: dict | None = None) -> None:
    """TensorBoard with the framework's own tags (verl raw keys, OpenRLHF train/ eval/, NeMo-RL, hand loops)."""
    events = []
    ev = dict(run["eval"])
    for s, v in run["train"]:
        events.append((wall(run, s), run["x"](s), {train_prefix + k: x for k, x in v.items()}))
        if s in ev:
            events.append((wall(run, s) + 30, run["x"](s), {eval_prefix + k: x for k, x in ev[s].items()}))
    if 0 in ev:
        events.insert(0, (run["t0"], 0, {eval_prefix + k: x for k, x in ev[0].items()}))
    t = run["t0"]
    tb_file(folder / sub / f"events.out.tfevents.{int(t)}.{host}.{2000 + int(t) % 7000}.0", events)


def w_openrlhf_console(run: dict, folder: Path, ds: str) -> None:
    ev = dict(run["eval"])
    out = ["[2025-11-27 07:40:12,118] [INFO] [launch.py:256:main] process 4412 spawned with command",
           f"Total training steps: {run['planned']}"]
    if 0 in ev:
        out.append(f"Evaluation completed in 51.02 seconds, global_step 0, eval_metrics: "
                   f"{ {k: round(x, 6) for k, x in ev[0].items()} }")
    for s, v in run["train"]:
        d = {k: round(x, 6) for k, x in v.items()}
        if s % 5 == 0:
            out.append(f"Episode [1/1]: {int(100 * s / run['planned'])}%|▋| {s}/{run['planned']} "
                       f"[{int(s * run['sps'] // 60)}:{int(s * run['sps'] % 60):02d}<?, act_loss={d.get('policy_loss', 0):.3g}]")
        out.append(f"✨ Global step {s}: {d}")
        if s in ev:
            e = {k: round(x, 6) for k, x in ev[s].items()}
            out.append(f"Evaluation completed in 52.31 seconds, global_step {s}, eval_metrics: {e}")
    (folder / "train.log").write_text("\n".join(out) + "\n", encoding="utf-8")


def w_mlflow_files(run: dict, folder: Path, exp_id: str, run_id: str, name: str, params: dict,
                   rename: Callable[[str], str] = lambda k: k) -> None:
    base = folder / "mlruns" / exp_id
    rd = base / run_id
    t0 = int(run["t0"] * 1000)
    (rd / "metrics").mkdir(parents=True, exist_ok=True)
    base.joinpath("meta.yaml").write_text(
        f"artifact_location: file://{base.resolve()}\ncreation_time: {t0 - 60000}\nexperiment_id: '{exp_id}'\n"
        f"last_update_time: {t0 - 60000}\nlifecycle_stage: active\nname: {name.split('/')[0]}\n")
    status = 3 if run["finished"] else 1
    end = int(run["end"] * 1000) if run["finished"] else "null"
    rd.joinpath("meta.yaml").write_text(
        f"artifact_uri: file://{rd.resolve()}/artifacts\nend_time: {end}\nentry_point_name: ''\n"
        f"experiment_id: '{exp_id}'\nlifecycle_stage: active\nrun_id: {run_id}\nrun_name: {name}\n"
        f"run_uuid: {run_id}\nsource_name: ''\nsource_type: 4\nsource_version: ''\nstart_time: {t0}\n"
        f"status: {status}\ntags: []\nuser_id: root\n")
    for k, v in params.items():
        (rd / "params").mkdir(exist_ok=True)
        (rd / "params" / k).write_text(str(v))
    (rd / "tags").mkdir(exist_ok=True)
    (rd / "tags" / "mlflow.runName").write_text(name)
    (rd / "artifacts").mkdir(exist_ok=True)
    series: dict[str, list[str]] = {}
    ev = dict(run["eval"])
    for s, v in run["train"]:
        ts = int(wall(run, s) * 1000)
        for k, x in v.items():
            series.setdefault(rename(k), []).append(f"{ts} {float(x)!r} {s}")
        if s in ev:
            for k, x in ev[s].items():
                series.setdefault(rename(k), []).append(f"{ts + 35000} {float(x)!r} {s}")
    for k, lines in series.items():
        p = rd / "metrics" / k
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("\n".join(lines) + "\n")


def w_wandb_panels(run: dict, folder: Path, display: str, panels: list[str], xkey: str = "Step",
                   ev_prefix: str = "eval/", tr_prefix: str = "train/") -> None:
    """W&B panel 'Export CSV': one file per panel, x column, then value, __MIN, __MAX columns for the run."""
    ev = dict(run["eval"])
    for metric in panels:
        col = f"{display} - {metric}"
        rows = []
        if metric.startswith(ev_prefix) and 0 in ev and "eval_" + metric.removeprefix(ev_prefix) in ev[0]:
            rows.append((0, ev[0]["eval_" + metric.removeprefix(ev_prefix)]))
        for s, v in run["train"]:
            k = metric.removeprefix(tr_prefix)
            if metric.startswith(tr_prefix) and k in v:
                rows.append((run["x"](s), v[k]))
            if metric.startswith(ev_prefix) and s in ev:
                k2 = "eval_" + metric.removeprefix(ev_prefix)
                if k2 in ev[s]:
                    rows.append((run["x"](s), ev[s][k2]))
        p = folder / f"wandb_export_{metric.replace('/', '_')}.csv"
        with p.open("w", newline="") as fh:
            w = csv.writer(fh, quoting=csv.QUOTE_ALL)
            w.writerow([xkey, col, col + "__MIN", col + "__MAX"])
            for x, val in rows:
                w.writerow([x, repr(float(val)), repr(float(val)), repr(float(val))])


def w_custom_csv(run: dict, folder: Path, name: str, xcol: str, cols: list[str], config: dict | None = None) -> None:
    ev = dict(run["eval"])
    with (folder / name).open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow([xcol, *cols])
        if 0 in ev:
            w.writerow([0, *[("" if c not in ev[0] else f"{ev[0][c]:.6g}") for c in cols]])
        for s, v in run["train"]:
            allv = {**v, **ev.get(s, {})}
            w.writerow([run["x"](s), *[("" if c not in allv else f"{allv[c]:.6g}") for c in cols]])
    if config:
        (folder / "config.json").write_text(json.dumps(config, indent=2) + "\n")


def w_custom_jsonl(run: dict, folder: Path, name: str, xkey: str, eval_name: str | None = None,
                   config: dict | None = None, extra: Callable[[int], dict] | None = None) -> None:
    ev = dict(run["eval"])
    lines, elines = [], []
    if 0 in ev:
        (elines if eval_name else lines).append(json.dumps({xkey: 0, **{k: round(x, 6) for k, x in ev[0].items()}}))
    for s, v in run["train"]:
        d = {xkey: run["x"](s), **{k: round(x, 6) for k, x in v.items()}, "time": round(wall(run, s), 1)}
        if extra:
            d.update(extra(s))
        lines.append(json.dumps(d))
        if s in ev:
            e = {xkey: run["x"](s), **{k: round(x, 6) for k, x in ev[s].items()}}
            (elines if eval_name else lines).append(json.dumps(e))
    (folder / name).write_text("\n".join(lines) + "\n")
    if eval_name:
        (folder / eval_name).write_text("\n".join(elines) + "\n")
    if config:
        (folder / "config.json").write_text(json.dumps(config, indent=2) + "\n")


def w_wandb_history(run: dict, folder: Path, crash_at: int, resumed_from: int, name: str = "history.csv") -> None:
    """`pd.DataFrame(api.run(path).scan_history()).to_csv(index=False)` of an OpenRLHF run resumed after a crash:
    rows of the crashed attempt past the resume point stay in the history, `_step` keeps counting."""
    story, rng = run["story"], np.random.default_rng(run["seed"] + 991)
    ev = dict(run["eval"])
    rows: list[dict] = []

    lost = crash_at - resumed_from  # steps redone after the crash; the first attempt logged them un-normalised
    gap = lost * run["sps"] + 900  # the first attempt ran this much earlier than the resumed one
    base = run["t0"] - gap

    def add(s: int, vals: dict, t: float, prefix: str, stepkey: str) -> None:
        rows.append({"_step": len(rows), "_runtime": round(t - base, 3), "_timestamp": round(t, 3),
                     stepkey: s, **{prefix + k: v for k, v in vals.items()}})

    train = run["train"]
    if 0 in ev:
        add(0, ev[0], base + 5, "eval/", "eval/global_step")
    for s, v in train:
        if s > resumed_from:
            break
        add(s, v, wall(run, s) - gap, "train/", "train/global_step")
        if s in ev:
            add(s, ev[s], wall(run, s) - gap + 45, "eval/", "eval/global_step")
    for s in range(resumed_from + 1, crash_at + 1):
        add(s, story.batch(rng, s, main=True), wall(run, s) - gap, "train/", "train/global_step")
    for s, v in train:
        if s > resumed_from:
            add(s, v, wall(run, s), "train/", "train/global_step")
            if s in ev:
                add(s, ev[s], wall(run, s) + 45, "eval/", "eval/global_step")
    cols: list[str] = []
    for r in rows:
        cols += [k for k in r if k not in cols]
    with (folder / name).open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=cols)
        w.writeheader()
        for r in rows:
            w.writerow({k: r.get(k, "") for k in cols})


# -------------------------------------------------------------------------------------------------- side-signal sets

def trl_side(length: Level, entropy: Level | None, gn: Level = C(0.2), lr: Level = C(1e-6),  # noqa: B008
             clipped: Level = C(0.02),  # noqa: B008
             n: int = 128, kl: Level | None = None, region: Level | None = None, tokens: float = 0.0,
             step_time: Level | None = None) -> dict[str, Side]:
    """What TRL's GRPOTrainer (v0.20+) logs besides the rewards, in its key names."""
    d = {"loss": Side(C(0.0), "add", 0.004), "grad_norm": Side(gn, "gn"), "learning_rate": Side(lr, "exact")}
    if tokens:
        d["num_tokens"] = Side(lambda s: float(round(tokens * s * (1 + 0.0005 * s))), "exact")
    d.update({"completions/mean_length": Side(length, "ln", 0.04),
              "completions/min_length": Side(lambda s: 0.12 * length(s), "int", 0.2),
              "completions/max_length": Side(lambda s: min(4096.0, 2.6 * length(s)), "int", 0.08),
              "completions/clipped_ratio": Side(clipped, "rate", n),
              "completions/mean_terminated_length": Side(lambda s: 0.93 * length(s), "ln", 0.04)})
    if kl is not None:
        d["kl"] = Side(kl, "ln", 0.08)
    if entropy is not None:
        d["entropy"] = Side(entropy, "ln", 0.04)
    reg = region or C(0.0)
    kind = "exact" if region is None else "ln"
    d.update({"clip_ratio/low_mean": Side(lambda s: 0.4 * reg(s), kind, 0.15),
              "clip_ratio/low_min": Side(C(0.0), "exact"),
              "clip_ratio/high_mean": Side(lambda s: 0.6 * reg(s), kind, 0.15),
              "clip_ratio/high_max": Side(lambda s: 3 * reg(s), kind, 0.3),
              "clip_ratio/region_mean": Side(reg, kind, 0.1)})
    if step_time is not None:
        d["step_time"] = Side(step_time, "ln", 0.06)
    return d


def verl_side(entropy: Level, length: Level, kl: Level, clip: Level = C(0.02), gn: Level = C(0.25),  # noqa: B008
              lr: Level = C(1e-6), clipfrac: Level = C(0.003), gen: Level = C(70.0),  # noqa: B008
              step: Level = C(110.0),  # noqa: B008
              n: int = 512) -> dict[str, Side]:
    return {"actor/entropy": Side(entropy, "ln", 0.03), "actor/kl_loss": Side(kl, "ln", 0.08),
            "actor/kl_coef": Side(C(0.001), "exact"), "actor/pg_loss": Side(C(0.0), "add", 0.01),
            "actor/pg_clipfrac": Side(clipfrac, "ln", 0.15), "actor/ppo_kl": Side(C(0.0), "add", 2e-5),
            "actor/pg_clipfrac_lower": Side(C(0.0), "exact"), "actor/grad_norm": Side(gn, "gn"),
            "actor/lr": Side(lr, "exact"), "critic/advantages/mean": Side(C(0.0), "add", 0.004),
            "response_length/mean": Side(length, "ln", 0.04),
            "response_length/max": Side(lambda s: min(4096.0, 3 * length(s)), "int", 0.05),
            "response_length/clip_ratio": Side(clip, "rate", n), "timing_s/gen": Side(gen, "ln", 0.06),
            "timing_s/step": Side(step, "ln", 0.05), "perf/throughput": Side(lambda s: 1900.0, "ln", 0.05)}


def cos_lr(peak: float, total: int, warm: int = 0) -> Level:
    return lambda s: peak * s / warm if s < warm else peak * 0.5 * (1 + math.cos(math.pi * (s - warm) / (total - warm)))


def tok_axis(per_step: Callable[[int], float], upto: int) -> Callable[[int], int]:
    cum = np.concatenate([[0.0], np.cumsum([per_step(j) for j in range(1, upto + 1)])])
    return lambda s: round(float(cum[min(int(s), upto)]))


# ------------------------------------------------------------------------------------------------------- the cases

@dataclass
class Spec:
    name: str
    story: Story
    write: Callable[[dict, Path], None]
    seed: int
    steps: int | tuple[int, int]
    kind: str  # ok | conv | stop | rb
    tags: str
    why: str
    onset: int | None = None
    files: dict[str, str] = field(default_factory=dict)

    def case(self) -> Case:
        reached = self.steps[0] if isinstance(self.steps, tuple) else self.steps
        if self.kind == "ok":
            labels = HEALTHY
        elif self.kind == "conv":
            labels = {**converged(), "onset_step": self.onset}
        elif self.kind == "stop":
            labels = stop(self.onset)
        else:
            assert self.onset is not None
            labels = rollback(*window(self.story, reached, self.onset), self.onset)
        return Case(self.name, lambda *_: None, self.write, self.seed, self.steps, labels, self.tags, self.why)


ACC = "rewards/accuracy_reward/mean"
ACC_STD = "rewards/accuracy_reward/std"
TRL_DERIVED = {"std": "reward_std", "zero": "frac_reward_zero_std"}

# R6 / stop-2: fixed per-batch difficulty of a replayed shard
_SHARD = np.random.default_rng(7).uniform(-1, 1, 30)


def shard_level(env: Level, period: int, amp: float) -> Level:
    return lambda s: float(np.clip(env(s) + amp * (1 - env(s)) * _SHARD[int(s) % period], 0.01, 0.99))


def saw_level(env: Level, period: int, amp: float) -> Level:
    return lambda s: float(np.clip(env(s) + amp * (1 - env(s)) * (2 * ((int(s) - 1) % period) / (period - 1) - 1),
                                   0.01, 0.99))


H4_BATCH = lambda s: (32, 8) if s <= 600 else (64, 8)  # noqa: E731
H4_X = tok_axis(lambda j: H4_BATCH(j)[0] * H4_BATCH(j)[1], 1400)
H11_BATCH = lambda s: (16, 8) if s <= 500 else (32, 8)  # noqa: E731
H11_LEN = K((1, 400), (1000, 650), (1600, 700))
H11_X = tok_axis(lambda j: H11_BATCH(j)[0] * H11_BATCH(j)[1] * (182 + H11_LEN(j)), 1600)

SPECS: list[Spec] = [
    # ======================================================================================== healthy look-alikes
    Spec("ok-nemo-tb-three-stage-curriculum-train-reward-drops-at-300-and-650-validation-climbs-live-900-of-1400",
         Story(Comp(K((1, .35), (300, .78), (301, .40), (650, .70), (651, .30), (900, .48))), "train/reward",
               "validation/accuracy", derived={"pct0": "train/baseline_reward/pct_0",
                                               "pct1": "train/baseline_reward/pct_1"},
               side={"train/loss": Side(C(0.0), "add", 0.01), "train/grad_norm": Side(C(0.22), "gn"),
                     "train/lr": Side(K((1, 5e-8), (20, 1e-6), (2000, 1e-6)), "exact"),
                     "train/kl_penalty": Side(C(0.0), "exact"),
                     "train/approx_entropy": Side(K((1, .62), (300, .52), (301, .58), (650, .47), (651, .55),
                                                    (900, .46)), "ln", 0.03),
                     "train/mean_gen_tokens_per_sample": Side(K((1, 480), (300, 540), (301, 820), (650, 900),
                                                                (651, 1250), (900, 1320)), "ln", 0.04),
                     "train/truncation_rate": Side(K((1, .005), (300, .01), (301, .03), (650, .025), (651, .06),
                                                     (900, .05)), "rate", 512),
                     "train/token_mult_prob_error": Side(C(1.006), "ln", 0.0015),
                     "timing/train/total_step_time": Side(K((1, 70), (300, 75), (301, 95), (651, 120),
                                                            (900, 125)), "ln", 0.05),
                     "timing/train/generation": Side(K((1, 44), (300, 47), (301, 62), (651, 84), (900, 88)), "ln",
                                                     0.06)},
               evals={"validation/accuracy": Ev(K((0, .31), (300, .42), (650, .50), (900, .555)), 500),
                      "validation/avg_length": Ev(K((0, 520), (300, 560), (650, 930), (900, 1240)), kind="ln")},
               eval_every=25, eval_at0=True, P=32, G=16, sps=95, age_min=6),
         lambda run, f: w_tb_raw(run, f, "logs/exp_002/tensorboard"), 3001, (900, 1400), "ok",
         "healthy curriculum nemo-rl tensorboard kl-disabled",
         "NeMo-RL GRPO on a three-stage difficulty curriculum (stage switches at steps 300 and 650, config: "
         "max_num_steps 1400). At each switch the train reward falls (0.78 -> 0.40, 0.70 -> 0.30) because the prompts "
         "got harder, then climbs again; validation/accuracy on MATH-500 (N=500, sd ~0.022) rises without a break "
         "0.31 -> 0.42 -> 0.50 -> 0.555 and is still rising at step 900, 6 minutes ago. train/kl_penalty is exactly "
         "0 because the KL term is disabled, not because nothing moves. Still improving with 500 steps left: continue.",
         files={"logs/exp_002/config.yaml": "grpo:\n  max_num_steps: 1400\n  num_prompts_per_step: 32\n"
                "  num_generations_per_prompt: 16\n  val_period: 25\nloss_fn:\n  reference_policy_kl_penalty: 0.0\n"
                "data:\n  curriculum: [easy@0, medium@300, hard@650]\n"}),

    Spec("ok-trl-hf-tb-four-weighted-reward-components-format-saturates-length-penalty-deepens-eval-rising",
         Story(None, "reward", "eval_rewards/accuracy_reward/mean",
               comps=[Comp(K((0, .28), (400, .42), (800, .49), (1200, .535), (2000, .58)), "bin", 1.0, ACC, ACC_STD),
                      Comp(K((0, .55), (150, .99), (2000, .995)), "bin", 0.2, "rewards/format_reward/mean",
                           "rewards/format_reward/std"),
                      Comp(K((0, .70), (200, .96), (2000, .98)), "part", 0.1, "rewards/tag_count_reward/mean",
                           "rewards/tag_count_reward/std"),
                      Comp(K((0, -.04), (1200, -.16), (2000, -.18)), "score", 0.5, "rewards/length_penalty/mean",
                           "rewards/length_penalty/std", tau=0.03, sigma=0.08)],
               derived=TRL_DERIVED,
               side=trl_side(K((0, 380), (1200, 720)), K((0, .55), (1200, .40)), gn=K((0, .18), (1200, .25)),
                             lr=cos_lr(1e-6, 2000, 30), clipped=K((0, .01), (1200, .05)), tokens=128 * 700,
                             step_time=C(42.0)),
               evals={"eval_rewards/accuracy_reward/mean": Ev(K((0, .29), (400, .41), (800, .475), (1200, .515)),
                                                              400)},
               eval_derive=lambda e: {"eval_reward": e["eval_rewards/accuracy_reward/mean"] + 0.2 * 0.99 + 0.1 * 0.975
                                      - 0.5 * 0.15},
               eval_every=100, P=16, G=8, log_every=10, sps=42, age_min=4),
         lambda run, f: w_hf_tb(run, f, "gpu-node-07", spe=467.0), 3002, (1200, 2000), "ok",
         "healthy multi-component-reward trl hf-tensorboard",
         "TRL GRPO logging to TensorBoard, four reward functions with reward_weights [1.0, 0.2, 0.1, 0.5]: accuracy, "
         "format (saturates at 0.99 by step 150), tag count (partial credit, 0.96 by 200) and a negative length "
         "penalty that deepens -0.04 -> -0.16 as answers grow 380 -> 720 tokens. The total reward is dominated by "
         "the early format gains and then rises slowly; the accuracy component rises 0.28 -> 0.535 and the held-out "
         "accuracy (N=400, sd ~0.025) 0.29 -> 0.515, still gaining ~0.04 per 400 steps at 1200 of 2000. Clip ratios "
         "are 0 (on-policy), frac_reward_zero_std is 0 (the continuous length penalty breaks ties). Continue."),

    Spec("ok-wandb-history-export-openrlhf-normaliser-switched-on-at-resume-1200-reward-drops-to-zero-mean-eval-rising",
         Story(Comp(K((0, .31), (1200, .58), (2000, .66))), "reward", "eval_math_pass1",
               alt=Comp(K((1200, .06), (2000, .22)), "score", tau=0.6, sigma=0.7), alt_from=1201,
               derived={"gstd": "group_reward_std"},
               side={"policy_loss": Side(C(0.0), "add", 0.02), "kl": Side(K((0, 0), (2000, .03)), "ln", 0.08),
                     "response_length": Side(K((0, 650), (2000, 980)), "ln", 0.04),
                     "truncated": Side(K((0, .02), (2000, .04)), "rate", 512),
                     "actor_lr": Side(C(1e-6), "exact"), "actor_grad_norm": Side(C(0.3), "gn"),
                     "ppo_clip_ratio": Side(C(0.004), "ln", 0.2)},
               evals={"eval_math_pass1": Ev(K((0, .33), (1200, .43), (2000, .485)), 500)},
               eval_every=50, eval_at0=True, P=64, G=8, avg=False, sps=70, age_min=7),
         lambda run, f: w_wandb_history(run, f, crash_at=1260, resumed_from=1200), 3003, (2000, 3000), "ok",
         "healthy reward-scale-change resume wandb-history-export openrlhf",
         "OpenRLHF GRPO exported from W&B with scan_history() to CSV. The job crashed at step 1260 and was resumed "
         "from the step-1200 checkpoint with --normalize_reward switched on, so train/reward turns from a 0-1 pass "
         "rate (0.31 -> 0.58) into a running-normalised score around 0.06 that climbs to 0.22; the crashed attempt's "
         "rows 1201-1260 are still in the history (train/global_step repeats, _step keeps counting). The held-out "
         "eval/eval_math_pass1 (N=500, sd ~0.022) is unaffected by the reward scale and rises 0.33 -> 0.43 -> 0.485 "
         "by step 2000 of 3000. The drop in train/reward is a change of units, not a collapse: continue."),

    Spec("ok-custom-jsonl-x-axis-samples-resumed-new-seed-batch-256-to-512-at-sample-153600-pass-rate-rising",
         Story(Comp(K((0, .22), (300, .36), (600, .44), (1100, .555), (1400, .59))), "avg_return", "pass_rate",
               side={"policy_kl": Side(K((0, 0), (1100, .06)), "ln", 0.06), "ent": Side(K((0, .70), (1100, .52))),
                     "resp_tokens": Side(K((0, 350), (1100, 610)), "ln", 0.04), "lr": Side(C(1e-6), "exact")},
               evals={"pass_rate": Ev(K((0, .25), (300, .33), (600, .39), (1100, .465)), 400)},
               eval_every=50, eval_at0=True, pg=H4_BATCH, xmap=H4_X, sps=30, age_min=3),
         lambda run, f: w_custom_jsonl(run, f, "metrics.jsonl", "samples", config={
             "total_samples": H4_X(1400), "rollouts_per_prompt": 8, "prompts_per_batch": 64, "seed": 23,
             "resumed_from": "ckpt/samples_153600"},
             extra=lambda s: {"seed": 17 if s <= 600 else 23, "batch_size": 8 * H4_BATCH(s)[0]}),
         3004, (1100, 1400), "ok", "healthy x-axis-samples resume batch-change custom-jsonl",
         "Hand-written GRPO loop that logs by samples seen, not steps. Batch of 256 rollouts (32 prompts x 8) up to "
         "sample 153600; resumed there with a new seed (17 -> 23) and a doubled batch of 512, so each row now covers "
         "twice the samples and the avg_return noise shrinks. avg_return rises 0.22 -> 0.44 -> 0.555; the held-out "
         "pass_rate (N=400, sd ~0.025) 0.25 -> 0.39 -> 0.465 at sample 409600 of 563200, written 3 minutes ago. "
         "Nothing breaks at the resume; still improving: continue."),

    Spec("ok-trl-console-tqdm-72-step-run-logged-every-step-eval-every-12-live-at-48",
         Story(Comp(K((1, .18), (48, .41), (72, .48)), key=ACC, std_key=ACC_STD), "reward", "eval_reward",
               derived=TRL_DERIVED,
               side=trl_side(K((0, 270), (72, 330)), K((0, .52), (72, .47)), gn=C(0.12),
                             lr=K((0, 0), (5, 2e-6), (72, 0)), n=64, tokens=64 * 480),
               evals={"eval_reward": Ev(K((0, .20), (12, .245), (24, .29), (36, .33), (48, .365), (72, .41)), 200),
                      "eval_completions/mean_length": Ev(K((0, 265), (72, 320)), kind="ln")},
               eval_every=12, eval_at0=True, P=8, G=8, sps=28, age_min=2),
         lambda run, f: w_trl_console(run, f, spe=108.0), 3005, (48, 72), "ok",
         "healthy very-short trl-console tqdm",
         "A 72-step TRL GRPO run (8 prompts x 8 completions, logging_steps=1, eval_on_start and every 12 steps on 200 "
         "problems), captured from stdout with tqdm bars and vLLM progress lines mixed in; the dicts carry no step, "
         "the bars do (48/72). The train reward is noisy (64 rollouts per step) but its level rises 0.18 -> 0.41; "
         "eval_reward goes 0.20, 0.245, 0.29, 0.33, 0.365 (sd ~0.034 each, a 5 sd rise). Live 2 minutes ago with a "
         "third of the budget left: continue."),

    Spec("ok-mlflow-files-trl-raw-keys-21400-of-30000-logged-every-10-slow-climb-eval-every-500",
         Story(Comp(K((0, .12), (2000, .20), (8000, .27), (16000, .315), (21400, .34), (30000, .37)), key=ACC,
                    std_key=ACC_STD), "reward", "eval_rewards/accuracy_reward/mean", derived=TRL_DERIVED,
               side=trl_side(K((0, 300), (21400, 520)), K((0, .6), (21400, .42)), gn=C(0.15),
                             lr=K((0, 0), (100, 5e-7), (30000, 5e-7)), kl=K((0, 0), (3000, .01), (21400, .035)),
                             n=128),
               evals={"eval_rewards/accuracy_reward/mean": Ev(K((0, .15), (2000, .24), (8000, .31), (16000, .36),
                                                                (21400, .395), (30000, .43)), 1000)},
               eval_every=500, P=16, G=8, log_every=10, sps=11, age_min=9),
         lambda run, f: w_mlflow_files(run, f, "417202215093716530", "8d1f0c5be2a94b8e9a3a5e1f7c2d4b60",
                                       "grpo-smollm2-1.7b-long", {"max_steps": 30000, "logging_steps": 10,
                                                                  "eval_steps": 500, "learning_rate": 5e-07,
                                                                  "beta": 0.02}),
         3006, (21400, 30000), "ok", "healthy long-run mlflow-file-store trl",
         "Long TRL GRPO run of a small model reporting to a local MLflow file store (raw HF keys, nested metric "
         "directories for rewards/accuracy_reward/mean), logging_steps 10, eval every 500, 21400 of max_steps 30000, "
         "last write 9 minutes ago. Gains are slow and log-shaped: held-out accuracy (N=1000, sd ~0.015) 0.15 -> 0.31 "
         "(8k) -> 0.36 (16k) -> 0.395 (21.4k), still about +0.035 over the last 5400 steps (2.3 sd), KL small and "
         "creeping. Slow but real improvement with budget left: continue."),

    Spec("ok-custom-csv-grad-norm-logged-after-clipping-pinned-at-0.5-avg-return-and-pass-rate-rising",
         Story(Comp(K((0, .30), (300, .45), (900, .60), (1500, .66))), "avg_return", "pass_rate",
               side={"policy_kl": Side(K((0, 0), (900, .04)), "ln", 0.06), "grad_norm": Side(C(0.95), "clipgn", 0.5),
                     "lr": Side(C(5e-7), "exact"), "entropy": Side(K((0, .8), (900, .6))),
                     "resp_len": Side(K((0, 300), (900, 420)), "ln", 0.04)},
               evals={"pass_rate": Ev(K((0, .28), (300, .40), (900, .53)), 300)},
               eval_every=40, eval_at0=True, P=16, G=16, sps=35, age_min=5),
         lambda run, f: w_custom_csv(run, f, "train_log.csv", "step",
                                     ["avg_return", "pass_rate", "policy_kl", "grad_norm", "lr", "entropy", "resp_len"],
                                     {"max_steps": 1500, "max_grad_norm": 0.5, "optimizer": "adamw"}),
         3007, (900, 1500), "ok", "healthy grad-clip-always-active custom-csv",
         "Hand-written loop that logs the gradient norm after clip_grad_norm_(max_norm=0.5): the raw norm sits near "
         "0.95, so grad_norm reads exactly 0.5 on ~98% of steps, a flat line at the clip value. With Adam that only "
         "rescales the step; nothing else is wrong. avg_return rises 0.30 -> 0.60 and the held-out pass_rate "
         "(N=300, sd ~0.029) 0.28 -> 0.40 -> 0.53 by step 900 of 1500, KL small. Continue."),

    Spec("ok-openrlhf-console-async-one-step-off-policy-vllm-kl-and-clip-ratio-steady-reward-rising",
         Story(Comp(K((1, .40), (700, .62), (1000, .66))), "reward", "eval_math_pass1",
               derived={"gstd": "group_reward_std"},
               side={"policy_loss": Side(C(0.0), "add", 0.02), "kl": Side(K((1, 0), (700, .015)), "ln", 0.08),
                     "response_length": Side(K((1, 900), (700, 1400)), "ln", 0.04),
                     "total_length": Side(K((1, 1050), (700, 1550)), "ln", 0.04),
                     "truncated": Side(K((1, .02), (700, .04)), "rate", 1024),
                     "actor_lr": Side(C(1e-6), "exact"), "actor_grad_norm": Side(C(0.3), "gn"),
                     "ppo_clip_ratio": Side(C(0.07), "ln", 0.1), "ppo_kl": Side(C(0.0021), "add", 0.0004),
                     "vllm_kl": Side(C(0.0015), "ln", 0.1)},
               evals={"eval_math_pass1": Ev(K((0, .38), (700, .55)), 500)},
               eval_every=20, eval_at0=True, P=128, G=8, avg=False, sps=50, age_min=3),
         lambda run, f: w_openrlhf_console(run, f, "math"), 3008, (700, 1000), "ok",
         "healthy async off-policy openrlhf-console",
         "OpenRLHF GRPO with --async_train (rollouts one step behind the trainer), console log of '✨ Global step' "
         "dicts. Because of the lag ppo_clip_ratio sits at ~0.07 and vllm_kl at ~0.0015 from the first step, and "
         "both stay flat: the off-policy gap is bounded, not growing. Reward rises 0.40 -> 0.62 and "
         "eval_math_pass1 (N=500, sd ~0.022) 0.38 -> 0.55 at step 700 of 1000. Continue."),

    Spec("ok-trl-state-multilingual-language-consistency-rises-0.72-to-0.95-accuracy-rising-checkpoint-every-100",
         Story(None, "reward", "eval_rewards/accuracy_reward/mean",
               comps=[Comp(K((0, .35), (800, .55), (1500, .60)), "bin", 1.0, ACC, ACC_STD),
                      Comp(K((0, .72), (500, .95), (1500, .96)), "bin", 0.3, "rewards/language_consistency/mean",
                           "rewards/language_consistency/std")],
               derived=TRL_DERIVED,
               side=trl_side(K((0, 520), (800, 610)), K((0, .58), (800, .47)), lr=C(1e-6), n=128, tokens=128 * 800),
               evals={"eval_rewards/accuracy_reward/mean": Ev(K((0, .33), (800, .52)), 300),
                      "eval_rewards/language_consistency/mean": Ev(K((0, .72), (500, .95), (800, .955)), 300)},
               eval_derive=lambda e: {"eval_reward": e["eval_rewards/accuracy_reward/mean"]
                                      + 0.3 * e["eval_rewards/language_consistency/mean"]},
               eval_every=100, P=16, G=8, log_every=10, sps=55, age_min=6),
         lambda run, f: w_trl_state(run, f, save_every=100, spe=625.0), 3009, (800, 1500), "ok",
         "healthy multilingual language-consistency trl-trainer-state checkpoints",
         "TRL GRPO on Japanese math prompts with an accuracy reward and a language-consistency reward (weight 0.3, "
         "share of the answer in the prompt's language). The base model code-switches, so consistency starts at 0.72 "
         "and RL lifts it to 0.95 by step 500; accuracy rises 0.35 -> 0.55 on train and 0.33 -> 0.52 held-out "
         "(N=300, sd ~0.029). Only checkpoint-N/trainer_state.json folders, newest checkpoint-800 of max_steps 1500 "
         "6 minutes ago. Both components improve: continue."),

    Spec("ok-verl-console-np2-gsm8k-val-saturated-flat-math500-val-rising-live-520-of-1200",
         Story(Comp(K((1, .55), (520, .70), (1200, .76))), "critic/score/mean", "val-core/math500/acc/mean@4",
               side=verl_side(K((1, .48), (520, .40)), K((1, 640), (520, 980)), K((1, 0), (520, .004)),
                              clip=K((1, .004), (520, .012)), gen=K((1, 60), (520, 85)), step=K((1, 95), (520, 125))),
               evals={"val-core/openai/gsm8k/acc/mean@1": Ev(K((0, .88), (80, .91), (1200, .912)), 1319),
                      "val-core/math500/acc/mean@4": Ev(K((0, .46), (520, .55)), 2000)},
               eval_every=40, eval_at0=True, P=64, G=8, sps=120, age_min=4),
         lambda run, f: w_verl_console(run, f, np2=True), 3010, (520, 1200), "ok",
         "healthy saturated-benchmark-beside-rising-one verl-console numpy2",
         "verl GRPO (console log, NumPy 2 reprs) validated on two sets. GSM8K (N=1319) is saturated: 0.88 -> 0.91 by "
         "step 80 and flat since. MATH-500 with 4 samples per problem (mean@4, sd ~0.011) keeps rising 0.46 -> 0.55 "
         "at step 520 of 1200 (total training steps printed at start); train score 0.55 -> 0.70. A flat easy "
         "benchmark is not a plateau of the run: continue."),

    Spec("ok-wandb-panel-csvs-x-axis-num-tokens-batch-doubled-at-resume-500-reward-and-eval-rising",
         Story(Comp(K((1, .30), (500, .46), (1000, .57), (1600, .62)), key=ACC), "reward", "eval_reward",
               side={"entropy": Side(K((1, .5), (1000, .41))), "completions/mean_length": Side(H11_LEN, "ln", 0.04)},
               evals={"eval_reward": Ev(K((0, .31), (500, .44), (1000, .53)), 500)},
               eval_every=50, eval_at0=True, pg=H11_BATCH, log_every=10, xmap=H11_X, sps=40, age_min=12),
         lambda run, f: w_wandb_panels(run, f, "grpo-qwen3-4b-resume2", ["train/reward", "train/entropy",
                                                                           "train/completions/mean_length",
                                                                           "eval/reward"], xkey="train/num_tokens"),
         3011, (1000, 1600), "ok", "healthy x-axis-tokens resume batch-change wandb-panel-csv",
         "W&B panel CSV exports of a TRL GRPO run plotted against train/num_tokens (cumulative tokens) instead of "
         "steps. At the resume after step 500 the generation batch doubled (128 -> 256 completions), so the x-axis "
         "advances twice as fast per logged point and the reward gets less noisy. Reward 0.30 -> 0.46 -> 0.57; "
         "eval/reward (N=500, sd ~0.022) 0.31 -> 0.44 -> 0.53, still rising at the last point. Continue."),

    # ========================================================================================== converged / stop
    Spec("conv-openrlhf-dpo-tb-eval-acc-mean-flat-since-1500-at-1880-of-2000-cosine-tail",
         Story(Comp(K((1, .55), (800, .68), (1500, .73), (2000, .735))), "acc", "acc_mean",
               side={"loss": Side(K((1, .69), (800, .57), (1500, .52), (2000, .515)), "ln", 0.04),
                     "chosen_reward": Side(K((1, 0), (1500, .42)), "add", 0.05),
                     "reject_reward": Side(K((1, 0), (1500, -1.35), (2000, -1.4)), "add", 0.06),
                     "lr": Side(cos_lr(5e-7, 2000, 60), "exact"), "grad_norm": Side(C(6.0), "gn")},
               evals={"acc_mean": Ev(K((0, .56), (800, .69), (1500, .72), (2000, .721)), 1000),
                      "eval_loss": Ev(K((0, .69), (800, .58), (1500, .55), (2000, .55)), 1000, "judge", 0.3)},
               eval_every=100, P=128, G=1, log_every=10, avg=False, sps=9, age_min=5),
         lambda run, f: w_tb_raw(run, f, "tensorboard/dpo_llama3_8b_ultrafeedback", "eval/", "train/"),
         3012, (1880, 2000), "conv", "converged dpo openrlhf-tensorboard cosine-tail",
         "OpenRLHF DPO on preference pairs, TensorBoard train/ and eval/ tags, cosine LR now ~1e-9 at step 1880 of "
         "2000. Held-out preference accuracy eval/acc_mean (N=1000 pairs, sd ~0.014) rose 0.56 -> 0.69 (800) -> 0.72 "
         "(1500) and has been flat at 0.72 since; eval_loss flat at 0.55; train acc still edges up by memorising. "
         "Nothing left to gain in the last 120 steps and no decline: stopping now or letting it finish are both fine.",
         onset=1500),

    Spec("stop-wandb-panels-lr-linear-decay-hits-zero-at-500-of-1000-reward-kl-entropy-frozen-since",
         Story(Comp(K((1, .30), (420, .52), (500, .532), (1000, .532))), "reward", "eval_reward",
               side={"learning_rate": Side(K((0, 0), (10, 1e-6), (500, 0)), "exact"),
                     "kl": Side(K((0, 0), (420, .028), (500, .031)), "ln", 0.06),
                     "entropy": Side(K((0, .52), (500, .41)), "ln", 0.03), "grad_norm": Side(C(0.2), "gn"),
                     "completions/mean_length": Side(K((0, 300), (500, 360)), "ln", 0.04)},
               evals={"eval_reward": Ev(K((0, .31), (420, .465), (500, .47)), 500)},
               eval_every=50, eval_at0=True, P=16, G=8, log_every=10, sps=45, age_min=10),
         lambda run, f: w_wandb_panels(run, f, "grpo-qwen2.5-7b-lr1e-6", ["train/reward", "train/learning_rate",
                                                                           "train/kl", "train/entropy",
                                                                           "train/grad_norm",
                                                                           "train/completions/mean_length",
                                                                           "eval/reward"]),
         3013, (820, 1000), "stop", "stop lr-schedule-bug lr-zero wandb-panel-csv",
         "TRL GRPO (beta 0.04) exported as W&B panel CSVs. The linear LR schedule was built for 500 steps while "
         "max_steps is 1000: learning_rate falls 1e-6 -> 0 by step 500 and is exactly 0 from then on. Since 500 the "
         "weights are frozen: reward holds 0.53, kl 0.031 and entropy 0.41 are flat, grad_norm stays ~0.2 (gradients "
         "are computed, not applied), eval/reward (N=500) flat at 0.47 since ~450. The run is at 820 and the "
         "remaining steps cannot change the model; the current weights equal the step-500 weights, as good as any: "
         "stop (fixing the schedule means a new run).", onset=500),

    Spec("stop-verl-console-loader-replays-one-shard-every-30-steps-train-score-to-0.93-val-flat-since-260",
         Story(Comp(shard_level(K((1, .40), (260, .58), (800, .93), (2000, .95)), 30, 0.35)), "critic/score/mean",
               "val-core/lighteval/MATH/acc/mean@1",
               side=verl_side(K((1, .55), (260, .45), (800, .12)), K((1, 700), (260, 640), (800, 380)),
                              K((1, 0), (260, .002), (800, .03)), clip=C(0.01)),
               evals={"val-core/lighteval/MATH/acc/mean@1": Ev(K((0, .38), (260, .46), (800, .462)), 1000)},
               eval_every=20, eval_at0=True, P=32, G=8, sps=80, age_min=4),
         lambda run, f: w_verl_console(run, f, np2=False), 3014, (800, 2000), "stop",
         "stop data-loader-repeats-shard memorisation verl-console",
         "verl GRPO whose sampler re-seeds every 30 steps, so the same 30 batches (960 prompts) come back in the "
         "same order: critic/score/mean repeats a period-30 pattern and its envelope climbs 0.40 -> 0.93 as the "
         "shard is memorised, entropy 0.45 -> 0.12, answers 640 -> 380 tokens. Held-out MATH (N=1000, sd ~0.016) "
         "rose 0.38 -> 0.46 by step 260 and has been flat since (0.462 at 800), no decline. Nothing more to gain "
         "from this data and the current weights are as good as any: stop.", onset=260),
]

SPECS += [
    # ================================================================================================ rollbacks
    Spec("rb-custom-jsonl-repetition-hack-rep4-0.04-to-0.38-avg-return-up-pass-rate-peaks-at-550",
         Story(Comp(K((0, .41), (550, .58), (1000, .74), (2000, .8)), "part"), "avg_return", "pass_rate",
               side={"rep4": Side(K((0, .04), (550, .045), (1000, .38)), "ln", 0.08),
                     "resp_tokens": Side(K((0, 520), (550, 610), (1000, 1450)), "ln", 0.04),
                     "policy_kl": Side(K((0, 0), (550, .05), (1000, .21)), "ln", 0.06),
                     "entropy": Side(K((0, .62), (550, .55), (1000, .41))), "lr": Side(C(1e-6), "exact"),
                     "grad_norm": Side(C(0.3), "gn")},
               evals={"pass_rate": Ev(K((0, .33), (550, .45), (1000, .36)), 500)},
               eval_every=50, eval_at0=True, P=32, G=8, sps=40, age_min=4),
         lambda run, f: w_custom_jsonl(run, f, "log.jsonl", "it", config={"max_iters": 2000,
                                                                         "reward": "rubric_coverage_v2",
                                                                         "heldout": "strict_final_answer_500"}),
         3101, (1000, 2000), "rb", "rollback reward-hacking repetition custom-jsonl",
         "Hand-written loop (JSONL, x = 'it') rewarded by a rubric-coverage grader that counts solution steps "
         "mentioned. From ~550 the policy learns that repeating steps scores: the 4-gram repetition rate rep4 goes "
         "0.045 -> 0.38, responses 610 -> 1450 tokens, KL 0.05 -> 0.21, and avg_return keeps rising 0.58 -> 0.74. "
         "The strict held-out pass_rate (N=500, sd ~0.022) peaked at 0.45 at it 550 and is 0.36 at 1000 (4 sd "
         "down). Train reward up, held-out down: reward hacking. Roll back to the peak (its 450-550).", onset=560),

    Spec("rb-verl-jsonl-summariser-copies-article-rouge-val-core-rises-val-aux-judge-falls-after-400",
         Story(Comp(K((1, .24), (400, .31), (900, .38)), "score", tau=0.05, sigma=0.08), "critic/score/mean",
               "val-aux/cnn_dailymail/judge/mean@1",
               side=verl_side(K((1, .9), (400, .85), (900, .45)), K((1, 85), (400, 90), (900, 240)),
                              K((1, 0), (400, .01), (900, .09)), clip=K((1, .01), (400, .01), (900, .04)),
                              lr=C(5e-7), gn=C(0.4), gen=C(25.0), step=C(48.0), n=256),
               evals={"val-core/cnn_dailymail/reward/mean@1": Ev(K((0, .245), (400, .305), (900, .375)), 1000,
                                                                 "judge", 0.09),
                      "val-aux/cnn_dailymail/judge/mean@1": Ev(K((0, 6.1), (400, 6.9), (900, 5.6)), 1000, "judge",
                                                               1.8),
                      "val-aux/cnn_dailymail/copy_frac/mean@1": Ev(K((0, .18), (400, .22), (900, .71)), kind="ln")},
               eval_every=50, eval_at0=True, P=64, G=4, sps=50, age_min=5),
         lambda run, f: w_verl_jsonl(run, f, "summ_grpo", "qwen2.5-3b-cnndm-rougeL"), 3102, (900, 1500), "rb",
         "rollback reward-hacking copy-prompt val-aux verl-jsonl",
         "verl GRPO summariser trained on ROUGE-L (file logger JSONL). The reward function also returns a judge "
         "score and the share of the summary copied verbatim from the article, so validation reports "
         "val-core/.../reward/mean@1 (ROUGE) and val-aux/.../judge/mean@1, val-aux/.../copy_frac/mean@1. After step "
         "400 the policy starts pasting article sentences: copy_frac 0.22 -> 0.71, summaries 90 -> 240 tokens, "
         "ROUGE (train and val-core) keeps rising 0.31 -> 0.38, but the independent judge (1-10, N=1000, sd ~0.057) "
         "falls from 6.9 at step 400 to 5.6 at 900. The headline metric is being gamed; the best summariser is "
         "step 400: roll back.", onset=410),

    Spec("rb-trl-console-tqdm-japanese-math-language-mixing-consistency-0.96-to-0.58-eval-accuracy-peaks-at-450",
         Story(None, "reward", "eval_rewards/accuracy_reward/mean",
               comps=[Comp(K((0, .38), (450, .55), (900, .58), (1200, .6)), "bin", 1.0, ACC, ACC_STD),
                      Comp(K((0, .96), (420, .96), (900, .58), (1200, .5)), "bin", 0.1,
                           "rewards/language_consistency/mean", "rewards/language_consistency/std")],
               derived=TRL_DERIVED,
               side=trl_side(K((0, 610), (450, 700), (900, 980)), K((0, .50), (450, .46), (900, .62)), n=128,
                             tokens=128 * 900),
               evals={"eval_rewards/accuracy_reward/mean": Ev(K((0, .33), (450, .50), (900, .41)), 400),
                      "eval_rewards/language_consistency/mean": Ev(K((0, .95), (420, .95), (900, .55)), 400)},
               eval_derive=lambda e: {"eval_reward": e["eval_rewards/accuracy_reward/mean"]
                                      + 0.1 * e["eval_rewards/language_consistency/mean"]},
               eval_every=50, P=16, G=8, log_every=10, sps=40, age_min=3),
         lambda run, f: w_trl_console(run, f, spe=520.0), 3103, (900, 1200), "rb",
         "rollback language-mixing multilingual trl-console tqdm",
         "TRL GRPO on Japanese math word problems, console log with tqdm bars (step only in the bars, 900/1200). The "
         "language-consistency reward has weight 0.1, too small to hold the policy: from ~420 the model reasons "
         "more and more in Chinese/English, consistency falls 0.96 -> 0.58 on train and 0.95 -> 0.55 held-out, "
         "completions lengthen 700 -> 980 and entropy climbs. Train accuracy still creeps up 0.55 -> 0.58, but "
         "held-out accuracy (N=400, sd ~0.025) peaked at 0.50 at step 450 and is 0.41 at 900 (3.6 sd). A better "
         "model is behind: roll back to ~400-450.", onset=460),

    Spec("rb-openrlhf-tb-rm-score-climbs-to-2.4-independent-judge-winrate-peaks-at-350-then-falls",
         Story(Comp(K((1, -.2), (350, 1.1), (900, 2.4), (1200, 2.8)), "score", tau=0.8, sigma=1.2), "reward",
               "eval_alpaca_eval_pass1",
               side={"policy_loss": Side(C(0.0), "add", 0.03), "kl": Side(K((1, 0), (350, .9), (900, 4.5)), "ln", 0.06),
                     "response_length": Side(K((1, 240), (350, 330), (900, 690)), "ln", 0.04),
                     "total_length": Side(K((1, 420), (350, 510), (900, 870)), "ln", 0.04),
                     "truncated": Side(K((1, 0), (350, .01), (900, .12)), "rate", 128),
                     "return": Side(K((1, -.2), (350, .9), (900, 1.6)), "add", 0.08),
                     "values": Side(K((1, -.2), (350, 1.0), (900, 2.2)), "add", 0.05),
                     "critic_loss": Side(K((1, .5), (350, .2), (900, .3)), "ln", 0.08),
                     "actor_lr": Side(C(5e-7), "exact"), "critic_lr": Side(C(9e-6), "exact"),
                     "actor_grad_norm": Side(K((1, .5), (350, .5), (900, 1.4)), "gn"),
                     "critic_grad_norm": Side(C(2.0), "gn"),
                     "ppo_clip_ratio": Side(K((1, .05), (350, .05), (900, .14)), "ln", 0.1),
                     "ppo_kl": Side(C(0.003), "add", 0.0008)},
               evals={"eval_alpaca_eval_pass1": Ev(K((0, .50), (350, .63), (900, .47)), 805)},
               eval_every=25, eval_at0=True, P=128, G=1, avg=False, sps=60, age_min=6),
         lambda run, f: w_tb_raw(run, f, "tensorboard/ppo_llama3_8b_rm", "eval/", "train/"), 3104, (900, 1200), "rb",
         "rollback reward-model-exploited second-judge openrlhf-tensorboard ppo",
         "OpenRLHF PPO with a critic, TensorBoard train/ and eval/ tags. The reward model's score climbs steadily "
         "-0.2 -> 1.1 (step 350) -> 2.4 (900) while KL runs to 4.5 and responses double (330 -> 690 tokens, 12% "
         "truncated). The eval set is scored by an independent judge as a win rate against the SFT model: "
         "eval/eval_alpaca_eval_pass1 (N=805, sd ~0.017) rose 0.50 -> 0.63 at step 350 and has fallen to 0.47. The "
         "RM is being exploited; roll back to ~325-350.", onset=360),

    Spec("rb-verl-tb-fully-async-staleness-grows-after-rollout-workers-added-at-500-probs-diff-clipfrac-climb-val-falls",
         Story(Comp(K((1, .42), (520, .60), (1000, .52), (2000, .5))), "critic/score/mean",
               "val-core/math500/acc/mean@1",
               side={**verl_side(K((1, .50), (500, .45), (1000, .70)), K((1, 800), (500, 950), (1000, 1100)),
                                 K((1, 0), (500, .003), (1000, .012)),
                                 gen=K((1, 90), (499, 90), (500, 48), (1000, 48)),
                                 step=K((1, 130), (499, 130), (500, 70), (1000, 72)),
                                 clipfrac=K((1, .03), (500, .035), (1000, .25))),
                     "actor/ppo_kl": Side(K((1, .0005), (500, .0006), (1000, .006)), "add", 0.0002),
                     "training/rollout_probs_diff_mean": Side(K((1, .004), (500, .004), (1000, .05)), "ln", 0.08),
                     "training/rollout_probs_diff_max": Side(K((1, .3), (500, .3), (1000, .9)), "ln", 0.1)},
               evals={"val-core/math500/acc/mean@1": Ev(K((0, .40), (520, .52), (1000, .44)), 500)},
               eval_every=40, eval_at0=True, P=64, G=8, sps=90, age_min=4),
         lambda run, f: w_tb_raw(run, f, "tensorboard_log/async_grpo/qwen3-8b-fully-async"), 3106, (1000, 2000), "rb",
         "rollback off-policy-staleness async verl-tensorboard",
         "verl fully-async GRPO (TensorBoard, raw verl tags). At step 500 rollout workers were doubled "
         "(timing_s/gen 90 -> 48 s) without bounding staleness, so samples come from ever older policies: "
         "training/rollout_probs_diff_mean 0.004 -> 0.05, actor/pg_clipfrac 0.035 -> 0.25, actor/ppo_kl x10, entropy "
         "0.45 -> 0.70. The train score sags only slowly (0.60 -> 0.52) but val-core MATH-500 (N=500, sd ~0.022) "
         "went from its peak 0.52 at step 520 to 0.44 at 1000 (3.6 sd). Roll back to ~440-520.", onset=520),

    Spec("rb-custom-csv-loader-replays-first-shard-period-25-sawtooth-avg-return-climbs-pass-rate-peaks-at-300",
         Story(Comp(saw_level(K((1, .30), (300, .62), (800, .90), (1500, .95)), 25, 0.3)), "avg_return", "pass_rate",
               side={"policy_kl": Side(K((0, 0), (300, .04), (800, .15)), "ln", 0.06),
                     "entropy": Side(K((0, .7), (300, .5), (800, .2))),
                     "resp_len": Side(K((0, 400), (300, 380), (800, 260)), "ln", 0.04), "lr": Side(C(1e-6), "exact")},
               evals={"pass_rate": Ev(K((0, .28), (300, .41), (800, .33)), 500)},
               eval_every=25, eval_at0=True, P=16, G=8, sps=30, age_min=6),
         lambda run, f: w_custom_csv(run, f, "metrics.csv", "step",
                                     ["avg_return", "pass_rate", "policy_kl", "entropy", "resp_len", "lr"],
                                     {"total_steps": 1500, "shuffle": False, "data": "train-00000-of-00032.parquet"}),
         3114, (800, 1500), "rb", "rollback data-loader-repeats-shard sawtooth custom-csv",
         "Hand-written loop whose loader never advances past the first parquet shard (400 prompts = 25 batches, no "
         "shuffle): avg_return shows a sawtooth of period 25 (the fixed order runs from hard to easy, so it drops at "
         "each wrap) under an envelope climbing 0.30 -> 0.62 (300) -> 0.90 (800) as the shard is memorised; entropy "
         "0.7 -> 0.2. The held-out pass_rate (N=500, sd ~0.022) rose to 0.41 at step 300 and then fell to 0.33 by "
         "800 (3.6 sd). Memorisation is costing generalisation: roll back to ~250-300.", onset=310),

    Spec("rb-trl-hf-tb-cosine-with-restarts-lr-jumps-back-to-peak-at-701-entropy-spikes-reward-collapses",
         Story(Comp(K((1, .25), (600, .64), (700, .66), (720, .66), (800, .20), (900, .15), (2100, .15))), "reward",
               "eval_reward", derived=TRL_DERIVED,
               side=trl_side(K((0, 410), (700, 520), (760, 980), (800, 1000), (900, 1010)),
                             K((0, .45), (700, .34), (720, .40), (780, 1.6), (900, 1.9)),
                             gn=K((0, .2), (700, .15), (705, 2.0), (800, 1.2), (900, .9)),
                             lr=lambda s: 3e-6 * 0.5 * (1 + math.cos(math.pi * ((s - 1) % 700) / 700)),
                             clipped=K((0, .01), (700, .02), (800, .85), (900, .9)), n=128),
               evals={"eval_reward": Ev(K((0, .27), (600, .61), (700, .62), (720, .62), (800, .24), (900, .22)), 500)},
               eval_every=50, P=16, G=8, log_every=10, sps=40, age_min=5),
         lambda run, f: w_hf_tb(run, f, "a100-12", spe=700.0), 3107, (900, 2100), "rb",
         "rollback lr-schedule-bug cosine-restart collapse trl hf-tensorboard",
         "TRL GRPO logging to TensorBoard with lr_scheduler_type cosine_with_restarts and num_cycles=3 over 2100 "
         "steps: the LR decays 3e-6 -> ~0 by step 700 and jumps straight back to 3e-6 at 701. The policy, by then "
         "sharp (entropy 0.34), cannot take the jump: grad norm x10, entropy 0.34 -> 1.9, completions run to the "
         "1024 cap (clipped ratio 0.02 -> 0.9), reward 0.66 -> 0.15, eval/reward (N=500, sd ~0.022) 0.62 at 700 -> "
         "0.22. Clear collapse after a good stretch: roll back to ~600-700 (and fix the schedule).", onset=710),

    Spec("rb-mlflow-files-trl-raw-keys-warmup-never-ends-lr-still-ramping-at-1800-entropy-climbs-eval-erodes-from-900",
         Story(Comp(K((1, .30), (900, .55), (1800, .50), (4000, .45)), key=ACC, std_key=ACC_STD), "reward",
               "eval_reward", derived=TRL_DERIVED,
               side=trl_side(K((0, 450), (900, 560), (1800, 820)), K((0, .45), (900, .40), (1800, .75)),
                             gn=K((0, .25), (900, .35), (1800, 1.1)), lr=lambda s: 5e-6 * min(s / 3000, 1.0),
                             kl=K((0, 0), (900, .02), (1800, .11)), clipped=K((0, .01), (900, .02), (1800, .07))),
               evals={"eval_reward": Ev(K((0, .33), (900, .49), (1800, .42)), 600)},
               eval_every=100, P=16, G=8, log_every=10, sps=50, age_min=8),
         lambda run, f: w_mlflow_files(run, f, "598113200417352901", "c44a7be0d1e54f7fa3c0e5d21b9a6f08",
                                       "grpo-llama3.1-8b-warmup", {"learning_rate": 5e-06, "warmup_steps": 3000,
                                                                   "max_steps": 4000, "lr_scheduler_type": "cosine",
                                                                   "logging_steps": 10, "eval_steps": 100,
                                                                   "beta": 0.01}),
         3108, (1800, 4000), "rb", "rollback lr-schedule-bug warmup-never-ends mlflow-file-store trl",
         "TRL GRPO to a local MLflow file store (raw keys). warmup_steps was set to 3000 instead of 300, so at step "
         "1800 of 4000 the learning rate is still ramping linearly (3e-6 now, 5e-6 at 3000). Up to ~900 (lr ~1.5e-6) "
         "the run improves; beyond that the growing LR destabilises it slowly: entropy 0.40 -> 0.75, grad norm "
         "0.35 -> 1.1, KL 0.02 -> 0.11, train reward sags 0.55 -> 0.50 and eval_reward (N=600, sd ~0.020) falls "
         "from 0.49 at step 900 to 0.42 at 1800 (3.4 sd), and the LR will keep rising. Roll back to ~800-900.",
         onset=910),

    Spec("rb-trl-state-finished-reference-synced-every-step-kl-stuck-near-zero-lengths-double-eval-peaks-at-500",
         Story(Comp(K((0, .35), (500, .60), (1000, .66)), key=ACC, std_key=ACC_STD), "reward", "eval_reward",
               derived=TRL_DERIVED,
               side=trl_side(K((0, 420), (500, 640), (1000, 900)), K((0, .58), (500, .42), (1000, .30)),
                             lr=K((0, 0), (30, 1e-6), (1000, 0)), kl=C(0.0004),
                             region=K((0, .015), (1000, .03)), n=128, tokens=128 * 900),
               evals={"eval_reward": Ev(K((0, .34), (500, .52), (1000, .44)), 500)},
               eval_every=50, P=16, G=8, log_every=10, sps=50, age_min=180, finished=True),
         lambda run, f: w_trl_state(run, f, save_every=250, spe=1000.0, limit=2, top=True), 3110, 1000, "rb",
         "rollback reference-model-updated kl-near-zero finished trl-trainer-state",
         "Finished TRL GRPO (beta 0.04, num_iterations 2) with sync_ref_model=True, ref_model_sync_steps=1 and "
         "mixup alpha 1.0 left in the recipe (config.yaml), so the reference is the policy of one step ago: kl "
         "stays at ~0.0004 for the whole run while entropy halves (0.58 -> 0.30), completions double (420 -> 900) "
         "and clip ratios are non-zero. With no anchor the policy drifts; train reward keeps rising (0.60 -> 0.66) "
         "but eval_reward (N=500, sd ~0.022) peaked at 0.52 at step 500 and ended at 0.44 (3.6 sd). Only "
         "checkpoint-750/1000 remain on disk; the model to keep is from ~450-500: roll back.", onset=520,
         files={"config.yaml": "model_name_or_path: Qwen/Qwen2.5-7B-Instruct\nbeta: 0.04\nnum_iterations: 2\n"
                "sync_ref_model: true\nref_model_sync_steps: 1\nref_model_mixup_alpha: 1.0\nmax_steps: 1000\n"
                "save_steps: 250\nsave_total_limit: 2\neval_steps: 50\nlogging_steps: 10\n"}),

    Spec("rb-trl-state-tool-agent-failure-frequency-0.06-to-0.41-after-400-success-falls-limit-3-checkpoints",
         Story(Comp(K((0, .22), (400, .48), (700, .30), (1500, .25))), "reward", "eval_reward", derived=TRL_DERIVED,
               side={**trl_side(K((0, 600), (400, 700), (700, 1300)), K((0, .40), (400, .36), (700, .55)),
                                clipped=K((0, .02), (400, .03), (700, .20)), n=128, tokens=128 * 1500,
                                step_time=K((0, 50), (400, 60), (700, 95))),
                     "tools/call_frequency": Side(K((0, 1.8), (400, 2.4), (700, 3.9)), "ln", 0.05),
                     "tools/failure_frequency": Side(K((0, .08), (400, .06), (700, .41)), "rate", 300)},
               evals={"eval_reward": Ev(K((0, .20), (400, .45), (700, .28)), 300)},
               eval_every=50, P=16, G=8, log_every=10, sps=60, age_min=10),
         lambda run, f: w_trl_state(run, f, save_every=50, spe=2000.0, limit=3), 3110, (700, 1500), "rb",
         "rollback multi-turn-agent tool-errors trl-trainer-state save-total-limit",
         "TRL GRPO (v0.26+) training a tool-using agent; only the three newest checkpoint folders are kept "
         "(600, 650, 700; save_steps 50, save_total_limit 3). Task success rose 0.22 -> 0.48 by step 400 with tool failures at 6%; after 400 the "
         "policy starts emitting malformed tool calls in loops: tools/failure_frequency 0.06 -> 0.41, calls per "
         "sample 2.4 -> 3.9, completions 700 -> 1300 tokens, step time up. Train success falls to 0.30 and "
         "eval_reward (N=300, sd ~0.029) from 0.45 at step 400 to 0.28 at 700. Roll back to step 400 (its "
         "checkpoint is gone from this folder; restore it from wherever saves are mirrored).", onset=410),

    Spec("rb-hand-loop-tb-grad-norm-logged-post-clip-pinned-at-1.0-hides-blowup-entropy-climbs-reward-collapses",
         Story(Comp(K((1, .30), (580, .58), (700, .10), (760, .05), (1500, .05))), "reward/mean", "eval/pass_rate",
               side={"optim/grad_norm": Side(K((1, .5), (300, 1.5), (580, 3.0), (700, 40.0)), "clipgn", 1.0),
                     "optim/lr": Side(C(2e-6), "exact"),
                     "policy/entropy": Side(K((1, .5), (560, .48), (700, 2.8), (760, 3.1))),
                     "policy/kl_to_ref": Side(K((1, 0), (560, .05), (700, .9), (760, 1.2)), "ln", 0.08),
                     "rollout/len": Side(K((1, 420), (560, 450), (700, 1900), (760, 2000)), "ln", 0.04),
                     "loss/policy": Side(C(0.0), "add", 0.02)},
               evals={"eval/pass_rate": Ev(K((0, .30), (560, .55), (580, .55), (700, .15), (760, .12)), 400)},
               eval_every=40, eval_at0=True, P=16, G=8, sps=40, age_min=4),
         lambda run, f: w_tb_raw(run, f, "tb/grpo_qwen1.5b_2025-11-26"), 3112, (760, 1500), "rb",
         "rollback grad-clip-hides-blowup collapse hand-written-loop tensorboard",
         "Hand-written GRPO loop writing TensorBoard with its own tags. It logs optim/grad_norm after "
         "clip_grad_norm_(max_norm=1.0), so from ~step 300 the curve is pinned at exactly 1.0 and shows nothing of "
         "the raw norm that keeps growing. From ~580 the run blows up: policy/entropy 0.48 -> 3.1, kl_to_ref 0.05 -> "
         "1.2, rollouts 450 -> 2000 tokens, reward/mean 0.58 -> 0.05, eval/pass_rate (N=400, sd ~0.025) 0.55 at "
         "560 -> 0.12 at 760. Roll back to ~520-560.", onset=590,
         files={"args.json": json.dumps({"max_steps": 1500, "clip_grad": 1.0, "lr": 2e-6, "eval_every": 40}) + "\n"}),
]

CASES = [s.case() for s in SPECS]
SPEC = {s.name: s for s in SPECS}


def write_run(case: Case, folder: Path) -> None:
    spec = SPEC[case.name]
    st = spec.story
    rng = np.random.default_rng(case.seed)
    run = st.draws(rng, case.reached)
    end = NOW - st.age_min * 60
    t0 = end - case.reached * st.sps - 20
    run.update(reached=case.reached, planned=case.planned or case.reached, finished=st.finished,
               log_every=st.log_every, eval_every=st.eval_every if st.evals else None, sps=st.sps, t0=t0, end=end,
               x=st.xmap, mtimes={}, story=st, seed=case.seed)
    folder.mkdir(parents=True, exist_ok=True)
    case.write(run, folder)
    for rel, text in spec.files.items():
        p = folder / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
        run["mtimes"].setdefault(p, t0 - 30)
    paths = sorted(folder.rglob("*"), key=lambda p: -len(p.parts))  # files before their folders
    for p in paths:
        t = run["mtimes"].get(p, end)
        os.utime(p, (t, t))
    os.utime(folder, (end, end))


def check(cases: list[Case]) -> None:
    for c in cases:
        st = SPEC[c.name].story
        lv, steps = st.headline_level(), st.headline_steps(c.reached)
        best_s = max(steps, key=lv)
        sd = st.headline_sd(best_s)
        print(f"{c.name}: {c.labels.get('preferred')} accept={c.labels.get('accept')} "
              f"window={c.labels.get('rollback_window')} onset={c.labels.get('onset_step')}")
        print(f"    headline {st.headline}: best {lv(best_s):.3f}@{st.xmap(best_s)} last {lv(steps[-1]):.3f}"
              f"@{st.xmap(steps[-1])} sd {sd:.4f} ({(lv(best_s) - lv(steps[-1])) / sd:.1f} sd below best)")
        run = st.draws(np.random.default_rng(c.seed), c.reached)
        if st.headline == TRAIN:
            ev = [(s, v[st.reward_key]) for s, v in run["train"]]
        else:
            ev = [(s, v[st.headline]) for s, v in run["eval"]]
        print("    drawn " + " ".join(f"{st.xmap(s)}:{v:.3f}" for s, v in ev[:: max(1, len(ev) // 12)])
              + f" | last {st.xmap(ev[-1][0])}:{ev[-1][1]:.3f}")


HEADER = """# Holdout set 30: blind-labelled runs written by make_holdout30.py, independent of the assessor, its judges and
# the generators of the other holdout sets. Aimed at failure shapes (reward hacking by repetition or copying, language
# mixing, an exploited reward model, async staleness, a replayed data shard, LR-schedule bugs, a reference model
# updated by mistake, tool-call errors, grad-norm logging that hides a blow-up) and at healthy runs of unusual shape
# (curricula, normalised or multi-component rewards, sample/token x-axes, resumes with new seeds or batch sizes,
# very short and very long runs). Labels follow DESIGN.md's decision contract, read from each story's noise-free
# levels. rollback_window is inclusive: from the first logged headline step within one sampling sd of the best level
# to the newest such step not after onset_step, in the run's own logged units (samples, tokens or iterations).
# Run `.venv/bin/python evals/holdout30/make_holdout30.py` to write runs/ (gitignored); `--check` prints levels.
"""


def main() -> None:
    holdout_kit.main(HERE, "make_holdout30.py", "holdout30.yaml", "h30-", "holdout30", HEADER, CASES, write_run,
                     check)


if __name__ == "__main__":
    main()
