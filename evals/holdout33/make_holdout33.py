"""Holdout set 33: blind-labelled RL post-training runs of unusual scale and shape, independent of the assessor.

Run from the worktree root:
    .venv/bin/python evals/holdout33/make_holdout33.py           # writes runs/ (gitignored) and holdout33.yaml
    .venv/bin/python evals/holdout33/make_holdout33.py --check   # also prints levels and rollback windows

What the set aims at: very long runs (15k-36k logged steps, evals every 1000-2000), very short ones (24-80 steps,
three eval points, a run killed by an OOM), multi-stage runs (curriculum switches, a second stage with a new reward
function, warmup + cosine to zero, a planned relaunch with changed config that replays steps), unusual reward scales
([-1, 1], 0-10 judge scores, negative reward-model scores re-centred on a moving baseline, summed reward functions,
sparse binary rewards) and metrics that are easy to misread (a GRPO loss that hovers at zero, grad norms logged after
clipping, a KL logged as beta x KL while beta is annealed to zero, entropy summed over the sequence, an x-axis in
samples or episodes).

Each case is a noise-free story: piecewise-linear levels per logged step for the train reward (or its components),
held-out evals and side signals. This set's noise model draws them:
  * binary rewards: each batch holds P prompts whose solve rates are logit-normal around the level (logit spread 1.4,
    shifted so the mean solve rate equals the level), each with G rollouts, so a group's correct count is
    Binomial(G, q_i). Batch mean, std, zero-std share and pct of all-wrong / all-right groups come from the same
    draws. A logged value that averages k optimizer steps (TRL) averages k such batches;
  * [-1, 1] rewards are 2x - 1 of the binary draw; 0-10 judge rewards are Binomial(10, q_i) per rollout with q_i
    logit-normal around level / 10; reward-model scores are a per-prompt normal offset plus per-rollout noise;
    shaped [0, 1] rewards (brevity) are Beta per rollout around the level;
  * held-out evals: Binomial(N, p) / N on N problems (judge-scored evals: the mean of N normal scores);
  * side signals: multiplicative AR(1) log-noise (rho 0.8), so KL / entropy / lengths wander rather than jitter;
  * grad norms: log-normal (sd 0.3) around the level, and on about 2 % of steps times 1 + Lomax(1.5) (heavy tail);
    a loop that logs the norm after clipping writes min(norm, max_norm).

Labels follow DESIGN.md ("What the three decisions mean") and come from each story's noise-free levels, never from
a tool. The rollback window runs from the first logged headline step whose level is within one sampling sd of the
best level (the sd of one eval for an eval headline, of one logged batch mean for a train headline) to the newest
such step not after the onset of the breakage; all steps are in the run's own logged x units.
"""

from __future__ import annotations

import csv
import hashlib
import json
import math
import os
import sqlite3
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import holdout_kit
from holdout_kit import HEALTHY, Case, converged, dump_json, rollback, stop, stop_or_rollback, tb_file, trainer_state

HERE = Path(__file__).resolve().parent
NOW = time.time()
Level = Callable[[float], float]

# ------------------------------------------------------------------------------------------------------- levels


def pw(*pts: tuple[float, float]) -> Level:
    """Piecewise-linear level through the knots, flat outside them."""
    xs = np.array([p[0] for p in pts], float)
    ys = np.array([p[1] for p in pts], float)
    return lambda s: float(np.interp(s, xs, ys))


def const(v: float) -> Level:
    return lambda s: v


def warm_cosine(peak: float, warm: float, total: float, floor: float = 0.0, start: float = 0.0) -> Level:
    def f(s: float) -> float:
        s = s - start
        if s < warm:
            return peak * max(s, 0) / warm
        frac = min((s - warm) / max(total - warm, 1), 1.0)
        return floor + (peak - floor) * 0.5 * (1 + math.cos(math.pi * frac))
    return f


def linear_decay(peak: float, warm: float, total: float) -> Level:
    return lambda s: peak * min(s / warm, 1.0) if s < warm else peak * max(0.0, (total - s) / (total - warm))


# ------------------------------------------------------------------------------------------------- noise model

SPREAD = 1.4  # logit sd of prompt solve rates around a batch's level
_GX, _GW = np.polynomial.hermite_e.hermegauss(48)
_GW = _GW / _GW.sum()
_M = np.linspace(-14, 14, 5601)
_MEAN = np.array([(_GW / (1 + np.exp(-(m + SPREAD * _GX)))).sum() for m in _M])


def expit(x):
    return 1.0 / (1.0 + np.exp(-x))


def shift(p):
    """Logit shift whose logit-normal solve rates average to p."""
    return np.interp(np.clip(p, 1e-6, 1 - 1e-6), _MEAN, _M)


def prompt_moments(p: float) -> tuple[float, float]:
    """Var over prompts of the solve rate q, and E[q(1-q)], for a batch at level p."""
    q = expit(shift(p) + SPREAD * _GX)
    return float((_GW * (q - p) ** 2).sum()), float((_GW * q * (1 - q)).sum())


@dataclass
class Sig:
    level: Level
    noise: float = 0.04
    mode: str = "ar"  # ar (multiplicative AR(1)) | add | exact | grad | zero (GRPO loss around 0) | frac (n = noise)
    clip: float | None = None  # grad norm logged after clipping at this max norm


@dataclass
class Story:
    steps: list[int]  # logged train x values (the final copy)
    reward: Level | None = None
    kind: str = "bin"  # bin | pm1 | judge10 | rm | frac
    P: int = 32
    G: int = 8
    avg: int = 1  # batches (optimizer steps) averaged into one logged value
    tau: float = 0.5  # rm: per-prompt sd
    s_sd: float = 1.0  # rm: per-rollout sd
    comps: dict = field(default_factory=dict)  # name -> (level, kind, weight); total reward = sum weight * mean
    evals: dict = field(default_factory=dict)  # key -> (level, N) or (level, N, per-sample sd) for score evals
    eval_steps: list[int] = field(default_factory=list)
    side: dict = field(default_factory=dict)  # canonical key -> Sig
    headline: str = "train"  # "train" or an eval key
    hl: Level | None = None  # headline level when it is derived (e.g. score - beta * KL)
    onset: int | None = None
    stale: tuple | None = None  # (train steps, eval steps, overrides): a first copy that a relaunch replays

    # ---- draws
    def _reward_draw(self, rng, levels: np.ndarray, kind: str, P: int, G: int) -> dict:
        """levels: (S, avg) -> per logged step mean, std, zero-std share, group std, pct0, pct1 (avg of batches)."""
        S, A = levels.shape
        if kind in ("bin", "pm1"):
            p = (levels + 1) / 2 if kind == "pm1" else levels
            q = expit(shift(p)[..., None] + SPREAD * rng.standard_normal((S, A, P)))
            k = rng.binomial(G, q)
            m = k.sum(-1) / (P * G)
            same0, same1 = (k == 0), (k == G)
            gstd = np.sqrt(k * (G - k) / (G * max(G - 1, 1))).mean(-1)
            std = np.sqrt(m * (1 - m))
            if kind == "pm1":
                m, std, gstd = 2 * m - 1, 2 * std, 2 * gstd
            out = dict(mean=m, std=std, zero=(same0 | same1).mean(-1), gstd=gstd,
                       pct0=100 * same0.mean(-1), pct1=100 * same1.mean(-1),
                       max=np.where(k.max(-1) > 0, 1.0, 0.0 if kind == "bin" else -1.0),
                       min=np.where(k.min(-1) < G, 0.0 if kind == "bin" else -1.0, 1.0))
        else:
            if kind == "judge10":
                q = expit(shift(levels / 10)[..., None] + SPREAD * rng.standard_normal((S, A, P)))
                x = rng.binomial(10, np.repeat(q[..., None], G, -1)).astype(float)
            elif kind == "frac":
                mu = np.clip(levels, 0.01, 0.99)[..., None, None]
                x = rng.beta(6 * mu, 6 * (1 - mu), size=(S, A, P, G))
            else:  # rm
                x = (levels[..., None, None] + self.tau * rng.standard_normal((S, A, P, 1))
                     + self.s_sd * rng.standard_normal((S, A, P, G)))
            m = x.mean((-1, -2))
            gs = x.std(-1, ddof=1) if G > 1 else np.zeros(x.shape[:-1])
            out = dict(mean=m, std=x.reshape(S, A, -1).std(-1), zero=(gs < 1e-9).mean(-1), gstd=gs.mean(-1),
                       pct0=np.zeros((S, A)), pct1=np.zeros((S, A)), max=x.max((-1, -2)), min=x.min((-1, -2)))
        return {k: v.mean(1) if k not in ("max", "min") else (v.max(1) if k == "max" else v.min(1))
                for k, v in out.items()}

    def draw(self, rng: np.random.Generator) -> dict:
        xs = np.array(self.steps, float)
        sub = xs[:, None] - np.arange(self.avg)[None, ::-1]  # the optimizer steps averaged into each log
        rows = [dict(step=int(s)) for s in self.steps]
        if self.reward is not None:
            lv = np.vectorize(self.reward)(sub)
            d = self._reward_draw(rng, lv, self.kind, self.P, self.G)
            for i, r in enumerate(rows):
                r.update(reward=float(d["mean"][i]), reward_std=float(d["std"][i]), zero_std=float(d["zero"][i]),
                         group_std=float(d["gstd"][i]), pct0=float(d["pct0"][i]), pct1=float(d["pct1"][i]),
                         rmax=float(d["max"][i]), rmin=float(d["min"][i]))
        if self.comps:
            tot = np.zeros(len(rows))
            var = np.zeros(len(rows))
            zero = np.ones(len(rows))
            for name, (lvl, kind, w) in self.comps.items():
                lv = np.vectorize(lvl)(sub)
                absent = np.isnan(lv).any(1)
                d = self._reward_draw(rng, np.nan_to_num(lv, nan=0.5), kind, self.P, self.G)
                tot += np.where(absent, 0.0, w * d["mean"])
                var += np.where(absent, 0.0, (w * d["std"]) ** 2)
                zero = np.where(absent, zero, np.minimum(zero, d["zero"]))
                for i, r in enumerate(rows):
                    if not absent[i]:
                        r[f"c/{name}"] = float(w * d["mean"][i])
                        r[f"c/{name}/std"] = float(w * d["std"][i])
            if self.reward is None:
                for i, r in enumerate(rows):
                    r.update(reward=float(tot[i]), reward_std=float(math.sqrt(var[i])), zero_std=float(zero[i]))
        for key, sig in self.side.items():
            e = 0.0
            for r in rows:
                lvl = sig.level(r["step"])
                if sig.mode == "exact":
                    v = lvl
                elif sig.mode == "add":
                    v = lvl + sig.noise * rng.standard_normal()
                elif sig.mode == "frac":  # a share of n items (e.g. preference pairs over a logging window)
                    n = int(sig.noise)
                    v = rng.binomial(n, min(max(lvl, 0.0), 1.0)) / n
                elif sig.mode == "zero":
                    v = lvl + sig.noise * rng.standard_normal()
                elif sig.mode == "grad":
                    v = lvl * math.exp(0.3 * rng.standard_normal())
                    if rng.random() < 0.02:
                        v *= 1 + rng.pareto(1.5)
                    if sig.clip is not None:
                        v = min(v, sig.clip)
                else:
                    e = 0.8 * e + 0.6 * sig.noise * rng.standard_normal()
                    v = lvl * math.exp(e)
                r[key] = float(v)
        evals = []
        for s in self.eval_steps:
            row = {}
            for key, spec in self.evals.items():
                p = spec[0](s)
                if len(spec) == 3 and isinstance(spec[2], str):  # "xK": a K-point reward's mean, K x Binomial
                    k = float(spec[2][1:])
                    row[key] = k * rng.binomial(spec[1], min(max(p / k, 0.0), 1.0)) / spec[1]
                elif len(spec) == 3:
                    row[key] = float(rng.normal(p, spec[2] / math.sqrt(spec[1])))
                else:
                    row[key] = rng.binomial(spec[1], min(max(p, 0.0), 1.0)) / spec[1]
            evals.append((s, row))
        run = dict(rows=rows, evals=evals, stale_rows=[], stale_evals=[])
        if self.stale:
            tsteps, esteps, over = self.stale
            ghost = replace(self, steps=tsteps, eval_steps=esteps, stale=None, **over)
            g = ghost.draw(np.random.default_rng(rng.integers(1 << 31)))
            run.update(stale_rows=g["rows"], stale_evals=g["evals"])
        return run

    # ---- headline and window
    def hl_level(self) -> Level:
        if self.headline == "train":
            return self.hl or self.reward
        return self.evals[self.headline][0]

    def hl_steps(self) -> list[int]:
        return self.steps if self.headline == "train" else self.eval_steps

    def hl_sd(self, p: float) -> float:
        if self.headline != "train":
            spec = self.evals[self.headline]
            if len(spec) == 3 and isinstance(spec[2], str):
                k = float(spec[2][1:])
                return k * math.sqrt((p / k) * (1 - p / k) / spec[1])
            return spec[2] / math.sqrt(spec[1]) if len(spec) == 3 else math.sqrt(p * (1 - p) / spec[1])
        k = self.kind
        if k == "rm":
            v = (self.tau ** 2 + self.s_sd ** 2 / self.G) / self.P
        elif k == "pm1":
            vq, eq = prompt_moments((p + 1) / 2)
            v = 4 * (vq + eq / self.G) / self.P
        elif k == "judge10":
            vq, eq = prompt_moments(p / 10)
            v = (100 * vq + 10 * eq / self.G) / self.P
        else:
            vq, eq = prompt_moments(p)
            v = (vq + eq / self.G) / self.P
        return math.sqrt(v / self.avg)


def window(st: Story) -> tuple[int, int, float, int, float]:
    lv, steps = st.hl_level(), st.hl_steps()
    best_s = max(steps, key=lv)
    best = lv(best_s)
    sd = st.hl_sd(best)
    good = [s for s in steps if lv(s) >= best - sd]
    hi = max(s for s in good if s <= st.onset)
    return good[0], hi, best, best_s, sd


# ------------------------------------------------------------------------------------------------- helpers


def g6(x: float) -> float:
    return float(f"{x:.6g}") if x == x and abs(x) != float("inf") else x


def stamp(path: Path, t: float) -> None:
    os.utime(path, (t, t))


def stamp_tree(folder: Path, t: float) -> None:
    for p in sorted(folder.rglob("*"), key=lambda q: -len(q.parts)):
        stamp(p, t)
    stamp(folder, t)


def clock(ctx: dict) -> Callable[[float], float]:
    """Wall time at which x was logged: linear from the start of the run to the newest write."""
    first, last, end, dur = ctx["first"], ctx["last"], ctx["end"], ctx["dur"]
    return lambda x: end - (last - x) / max(last - first, 1) * dur


def stable_id(text: str) -> str:
    return hashlib.md5(text.encode()).hexdigest()


def is_nan(x) -> bool:
    return isinstance(x, float) and x != x


# --------------------------------------------------------------------------------------------------- writers
# Each writer: (run, folder, ctx, **options). ctx: end (newest write), dur (s), first/last x, planned, spec name.

TRL_GRPO = {"loss": "loss", "grad_norm": "grad_norm", "lr": "learning_rate", "length": "completions/mean_length",
            "trunc": "completions/clipped_ratio", "reward": "reward", "reward_std": "reward_std",
            "zero_std": "frac_reward_zero_std", "kl": "kl", "entropy": "entropy", "clip": "clip_ratio/region_mean"}


def trl_row(r: dict, vocab: dict, comp_fmt: str = "rewards/{}/mean", std_fmt: str | None = "rewards/{}/std",
            epoch: float = 0.0, loss_round: bool = True) -> dict:
    out = {}
    for k, v in r.items():
        if k in vocab:
            out[vocab[k]] = v
        elif k.startswith("c/") and not k.endswith("/std"):
            out[comp_fmt.format(k[2:])] = v
        elif k.startswith("c/") and std_fmt:
            out[std_fmt.format(k[2:-4])] = v
    out = {k: (round(v, 4) if k == "loss" and loss_round and not is_nan(v) else g6(v)) for k, v in out.items()}
    out["epoch"] = round(epoch, 4)
    out["step"] = r["step"]
    return out


def w_trl_ckpts(run, folder, ctx, vocab, save_every, keep, logging_steps, eval_steps, steps_per_epoch,
                eval_extra=None, final=False, extra_rows=None, top_level=False):
    """TRL trainer_state.json in checkpoint-N folders (and at the top level when the script calls save_state)."""
    t = clock(ctx)
    hist = []
    evals = dict(run["evals"])
    max_steps = ctx["planned"]
    for r in run["rows"]:
        s = r["step"]
        row = trl_row(r, vocab, epoch=s / steps_per_epoch)
        if extra_rows:
            row.update(extra_rows(r))
        hist.append(row)
        if s in evals:
            e = {k: g6(v) for k, v in evals[s].items()}
            e.update(eval_extra(s) if eval_extra else {})
            e.update(epoch=round(s / steps_per_epoch, 4), step=s)
            hist.append(e)
    last = run["rows"][-1]["step"]
    saves = list(range(save_every, last + 1, save_every))
    if final and last not in saves:
        saves.append(last)
    for s in saves[-keep:]:
        h = [row for row in hist if row["step"] <= s]
        st = trainer_state(h, s, max_steps, logging_steps, save_every, eval_steps, round(s / steps_per_epoch, 4),
                           num_train_epochs=max(1, math.ceil(max_steps / steps_per_epoch)),
                           training_stop=final and s == last)
        seen = [row["num_input_tokens_seen"] for row in h if "num_input_tokens_seen" in row]
        if seen:
            st["num_input_tokens_seen"] = seen[-1]
        ck = folder / f"checkpoint-{s}"
        dump_json(ck / "trainer_state.json", st)
        (ck / "adapter_config.json").write_text(json.dumps({"peft_type": "LORA", "r": 64, "lora_alpha": 128}) + "\n")
        (ck / "training_args.bin").write_bytes(b"\x80\x04")
        stamp_tree(ck, t(s))
    if top_level:
        h = list(hist)
        losses = [row["loss"] for row in hist if isinstance(row.get("loss"), float) and not is_nan(row["loss"])]
        h.append(dict(epoch=round(last / steps_per_epoch, 4), step=last, total_flos=0.0,
                      train_loss=round(float(np.mean(losses)), 6) if losses else 0.0,
                      train_runtime=round(ctx["dur"], 2), train_samples_per_second=round(last * 64 / ctx["dur"], 3),
                      train_steps_per_second=round(last / ctx["dur"], 3)))
        st = trainer_state(h, last, max_steps, logging_steps, save_every, eval_steps, round(last / steps_per_epoch, 4),
                           num_train_epochs=max(1, math.ceil(max_steps / steps_per_epoch)), training_stop=True)
        dump_json(folder / "trainer_state.json", st)
        stamp(folder / "trainer_state.json", ctx["end"])
    stamp(folder, ctx["end"])


def tqdm_line(s: int, total: int, per: float) -> str:
    pct = int(100 * s / total)
    fill = int(10 * s / total)
    bar = "█" * fill + (" " * (10 - fill))
    el, rem = s * per, (total - s) * per
    def hms(x):
        return f"{int(x // 3600):d}:{int(x % 3600 // 60):02d}:{int(x % 60):02d}" if x >= 3600 else \
            f"{int(x // 60):02d}:{int(x % 60):02d}"
    return f"{pct:3d}%|{bar}| {s}/{total} [{hms(el)}<{hms(rem)}, {per:.2f}s/it]"


def w_trl_console(run, folder, ctx, vocab, steps_per_epoch, preamble, final=False, eval_extra=None,
                  name="train.log"):
    """TRL console: tqdm lines and the dicts Trainer.log prints (no step key; one dict per logging_steps)."""
    per = ctx["dur"] / ctx["last"]
    total = ctx["planned"]
    evals = dict(run["evals"])
    lines = list(preamble)
    for r in run["rows"]:
        s = r["step"]
        lines.append(tqdm_line(s, total, per))
        row = trl_row(r, vocab, epoch=s / steps_per_epoch)
        row.pop("step")
        lines.append(repr(row))
        if s in evals:
            lines.append("\n  0%|          | 0/16 [00:00<?, ?it/s]")
            e = {k: g6(v) for k, v in evals[s].items()}
            e.update(eval_extra(s) if eval_extra else {})
            e["epoch"] = round(s / steps_per_epoch, 4)
            lines.append(repr(e))
    if final:
        last = ctx["last"]
        lines.append(repr({"train_runtime": round(ctx["dur"], 4), "train_samples_per_second": round(last * 16 / ctx["dur"], 3),
                           "train_steps_per_second": round(last / ctx["dur"], 3), "train_loss": 0.0071,
                           "epoch": round(last / steps_per_epoch, 4)}))
        lines.append(tqdm_line(last, total, per))
    (folder / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    stamp_tree(folder, ctx["end"])


def tb_name(d: Path, wall: float, host: str, pid: int) -> Path:
    return d / f"events.out.tfevents.{int(wall)}.{host}.{pid}.0"


def tb_events(rows, evals, t, train_map, eval_map):
    ev = []
    evd = dict(evals)
    for r in rows:
        vals = {}
        for k, v in r.items():
            if k in train_map and v is not None:
                vals[train_map[k]] = v
        ev.append((t(r["step"]), r["step"], vals))
        if r["step"] in evd:
            ev.append((t(r["step"]) + 30, r["step"], {eval_map.get(k, k): v for k, v in evd.pop(r["step"]).items()}))
    for s, e in sorted(evd.items()):
        ev.append((t(s) + 30, s, {eval_map.get(k, k): v for k, v in e.items()}))
    ev.sort(key=lambda x: x[0])
    return ev


def w_tb(run, folder, ctx, sub, train_map, eval_map, host="gpu-node-07", pid=22817, final_tags=None):
    t = clock(ctx)
    ev = tb_events(run["rows"], run["evals"], t, train_map, eval_map)
    if final_tags:
        ev.append((ctx["end"], ctx["last"], final_tags))
    d = folder / sub
    p = tb_file(tb_name(d, ev[0][0] - 40, host, pid), ev)
    stamp_tree(folder, ctx["end"])
    return p


def np2(x) -> str:
    if isinstance(x, int):
        return f"np.int64({x})"
    return f"np.float64({x!r})" if x == x else "np.float64(nan)"


def verl_line(step, vals: dict, fmt_np2: bool, prefix: str = "") -> str:
    parts = []
    for k, v in vals.items():
        if v is None:
            continue
        if fmt_np2 and not k.startswith(("timing_s", "perf/", "training/")):
            parts.append(f"{k}:{np2(v)}")
        else:
            parts.append(f"{k}:{v!r}" if v == v else f"{k}:nan")
    return prefix + f"step:{step} - " + " - ".join(parts)


def verl_vals(r: dict, vocab: dict, epoch: int = 0) -> dict:
    out = {"training/global_step": r["step"], "training/epoch": epoch}
    for k, v in vocab.items():
        if k in r:
            out[v] = g6(r[k])
    return out


VERL = {"reward": "critic/score/mean", "rmax": "critic/score/max", "rmin": "critic/score/min",
        "kl": "actor/kl_loss", "entropy": "actor/entropy", "pg_loss": "actor/pg_loss", "clip": "actor/pg_clipfrac",
        "grad_norm": "actor/grad_norm", "lr": "actor/lr", "length": "response_length/mean",
        "trunc": "response_length/clip_ratio", "step_time": "timing_s/step", "gen_time": "timing_s/gen"}


def ray_noise(rng, n: int) -> list[str]:
    pool = ["(WorkerDict pid=40231) INFO 08-14 02:11:53 [block_pool.py:321] Successfully reset prefix cache",
            "(TaskRunner pid=39877) local_global_step_folder: checkpoints/{proj}/{exp}/global_step_{s}",
            "(WorkerDict pid=40233) [rank3]:[W814 02:12:07.119] Warning: reducer buckets have been rebuilt",
            "(raylet) [2025-08-14 02:12:31,008 E 39651 39651] (raylet) file_system_monitor.cc:116: /tmp/ray is over 95% full"]
    return [pool[int(i)] for i in rng.integers(0, len(pool), n)]


def w_verl_console(run, folder, ctx, vocab, val_key, fmt_np2, prefix="", crash=None, name="train.log",
                   proj="verl_grpo", exp="run", save_freq=0, steps_per_epoch=10 ** 9, relaunch_header=None):
    rng = np.random.default_rng(7)
    lines = []
    header = ["(TaskRunner pid=39877) TaskRunner hostname: gpu-node-12, PID: 39877",
              f"(TaskRunner pid=39877) Size of train dataloader: {steps_per_epoch}, Size of val dataloader: 1",
              f"(TaskRunner pid=39877) Total training steps: {ctx['planned']}"]

    def emit(rows, evals, first_launch):
        evd = dict(evals)
        if 0 in evd:
            lines.append(verl_line(0, {val_key: g6(evd.pop(0)[val_key])}, fmt_np2, prefix))
        for r in rows:
            s = r["step"]
            vals = verl_vals(r, vocab, epoch=(s - 1) // steps_per_epoch)
            if s in evd:
                vals = {val_key: g6(evd.pop(s)[val_key]), **vals}
            lines.append(verl_line(s, vals, fmt_np2, prefix))
            if save_freq and s % save_freq == 0:
                lines.append(f"(TaskRunner pid=39877) local_global_step_folder: checkpoints/{proj}/{exp}/global_step_{s}")
            if rng.random() < 0.04:
                lines.extend(ray_noise(rng, 1))
        return evd

    lines.extend(header)
    if run["stale_rows"]:
        resume = run["stale_rows"][0]["step"] - 1
        first = [r for r in run["rows"] if r["step"] <= resume]
        later = [r for r in run["rows"] if r["step"] > resume]
        ev_first = [(s, e) for s, e in run["evals"] if s <= resume]
        ev_later = [(s, e) for s, e in run["evals"] if s > resume]
        emit(first, ev_first, True)
        emit(run["stale_rows"], run["stale_evals"], True)
        lines.extend(relaunch_header or [])
        again = dict(run["evals"]).get(resume)
        if again is not None:  # val_before_train at the resumed step
            lines.append(verl_line(resume, {val_key: g6(again[val_key] + 1 / 1319)}, fmt_np2, prefix))
        emit(later, ev_later, False)
    else:
        emit(run["rows"], run["evals"], True)
    if crash:
        lines.extend(crash)
    lines = [ln.replace("{proj}", proj).replace("{exp}", exp).replace("{s}", "100") for ln in lines]
    (folder / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    stamp_tree(folder, ctx["end"])


def w_verl_jsonl(run, folder, ctx, vocab, val_key, proj, exp, steps_per_epoch=10 ** 9):
    path = folder / proj / f"{exp}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    evd = dict(run["evals"])
    with path.open("w", encoding="utf-8") as fh:
        if 0 in evd:
            fh.write(json.dumps({"step": 0, "data": {val_key: g6(evd.pop(0)[val_key])}}, separators=(",", ":")) + "\n")
        for r in run["rows"]:
            s = r["step"]
            data = verl_vals(r, vocab, epoch=(s - 1) // steps_per_epoch)
            if s in evd:
                data[val_key] = g6(evd.pop(s)[val_key])
            data = {k: (None if is_nan(v) else v) for k, v in data.items()}
            fh.write(json.dumps({"step": s, "data": data}, separators=(",", ":")) + "\n")
    stamp_tree(folder, ctx["end"])


def w_openrlhf_console(run, folder, ctx, vocab, ds, extra_lines=None, name="train.log"):
    """OpenRLHF: `✨ Global step N: {dict}` status lines and `Evaluation completed ... eval_metrics: {...}` lines."""
    rng = np.random.default_rng(11)
    evd = dict(run["evals"])
    extra = dict(extra_lines or {})
    lines = ["[2025-07-30 09:14:02,331] [INFO] [real_accelerator.py:203:get_accelerator] Setting ds_accelerator to cuda",
             "INFO 07-30 09:15:40 [llm_engine.py:429] init engine (profile, create kv cache, warmup model) took 38.21 seconds"]
    for r in run["rows"]:
        s = r["step"]
        if s in extra:
            lines.extend(extra[s])
        st = {vocab[k]: g6(v) for k, v in r.items() if k in vocab}
        lines.append(f"✨ Global step {s}: {st!r}")
        if s in evd:
            e = {f"eval_{ds}_{k}": g6(v) for k, v in evd.pop(s).items()}
            lines.append(f"✨ Evaluation completed in {rng.uniform(140, 190):.2f} seconds, global_step {s}, "
                         f"eval_metrics: {e!r}")
        if rng.random() < 0.03:
            lines.append("INFO 07-30 11:02:17 [block_pool.py:321] Successfully reset prefix cache")
    (folder / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    stamp_tree(folder, ctx["end"])


def mlflow_run_dirs(folder: Path, ctx, run_name: str, params: dict, status: str, exp_id="0", exp_name="Default"):
    rid = stable_id(run_name)
    exp = folder / "mlruns" / exp_id
    exp.mkdir(parents=True, exist_ok=True)
    (exp / "meta.yaml").write_text(f"artifact_location: mlflow-artifacts:/{exp_id}\ncreation_time: "
                                   f"{int((ctx['end'] - ctx['dur'] - 60) * 1000)}\nexperiment_id: '{exp_id}'\n"
                                   f"last_update_time: {int((ctx['end'] - ctx['dur'] - 60) * 1000)}\n"
                                   f"lifecycle_stage: active\nname: {exp_name}\n")
    rd = exp / rid
    for sub in ("metrics", "params", "tags", "artifacts"):
        (rd / sub).mkdir(parents=True, exist_ok=True)
    end_time = "null" if status == "RUNNING" else str(int(ctx["end"] * 1000))
    (rd / "meta.yaml").write_text(
        f"artifact_uri: mlflow-artifacts:/{exp_id}/{rid}/artifacts\nend_time: {end_time}\nentry_point_name: ''\n"
        f"experiment_id: '{exp_id}'\nlifecycle_stage: active\nrun_id: {rid}\nrun_name: {run_name}\n"
        f"run_uuid: {rid}\nsource_name: ''\nsource_type: 4\nsource_version: ''\n"
        f"start_time: {int((ctx['end'] - ctx['dur']) * 1000)}\nstatus: {1 if status == 'RUNNING' else 3}\n"
        f"tags: []\nuser_id: ubuntu\n")
    for k, v in params.items():
        (rd / "params" / k).write_text(str(v))
    (rd / "tags" / "mlflow.runName").write_text(run_name)
    (rd / "tags" / "mlflow.user").write_text("ubuntu")
    return rd


def w_mlflow_files(run, folder, ctx, vocab, eval_vocab, run_name, params, every=None, stale_resume=None):
    """MLflow file store: one file per key (nested dirs for '/'), lines `<ts_ms> <value> <step>`."""
    rd = mlflow_run_dirs(folder, ctx, run_name, params, "RUNNING")
    t = clock(ctx)
    lines: dict[str, list[str]] = {}

    def add(key, ts, v, s):
        lines.setdefault(key, []).append(f"{int(ts * 1000)} {g6(v)!r} {s}".replace("'", ""))

    def emit(rows, evals, tfun):
        evd = dict(evals)
        for r in rows:
            s = r["step"]
            for k, v in r.items():
                if k in vocab and (every is None or s % every.get(k, 1) == 0):
                    add(vocab[k], tfun(s), v, s)
            if s in evd:
                for k, v in evd.pop(s).items():
                    add(eval_vocab.get(k, k), tfun(s) + 25, v, s)
        for s, e in evd.items():
            for k, v in e.items():
                add(eval_vocab.get(k, k), tfun(s) + 25, v, s)

    if run["stale_rows"]:
        kill = run["stale_rows"][-1]["step"]
        resume = stale_resume
        gap = (kill - resume) / ctx["last"] * ctx["dur"] + 900
        emit([r for r in run["rows"] if r["step"] <= resume], [(s, e) for s, e in run["evals"] if s <= resume],
             lambda s: t(s) - gap)
        emit(run["stale_rows"], run["stale_evals"], lambda s: t(s) - gap)
        emit([r for r in run["rows"] if r["step"] > resume], [(s, e) for s, e in run["evals"] if s > resume], t)
    else:
        emit(run["rows"], run["evals"], t)
    for key, ls in lines.items():
        p = rd / "metrics" / key
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("\n".join(ls) + "\n")
    stamp_tree(folder, ctx["end"])


def w_mlflow_db(run, folder, ctx, vocab, eval_vocab, run_name, params):
    """MLflow SQL store (sqlite:///mlflow.db): metrics(key, value, timestamp, step, is_nan, run_uuid)."""
    db = folder / "mlflow.db"
    con = sqlite3.connect(db)
    c = con.cursor()
    c.executescript("""
    CREATE TABLE experiments (experiment_id INTEGER NOT NULL PRIMARY KEY, name VARCHAR(256) NOT NULL UNIQUE,
        artifact_location VARCHAR(256), lifecycle_stage VARCHAR(32), creation_time BIGINT, last_update_time BIGINT);
    CREATE TABLE runs (run_uuid VARCHAR(32) NOT NULL PRIMARY KEY, name VARCHAR(250), source_type VARCHAR(20),
        source_name VARCHAR(500), entry_point_name VARCHAR(50), user_id VARCHAR(256), status VARCHAR(9),
        start_time BIGINT, end_time BIGINT, deleted_time BIGINT, source_version VARCHAR(50),
        lifecycle_stage VARCHAR(20), artifact_uri VARCHAR(200), experiment_id INTEGER);
    CREATE TABLE metrics (key VARCHAR(250) NOT NULL, value FLOAT NOT NULL, timestamp BIGINT NOT NULL,
        run_uuid VARCHAR(32) NOT NULL, step BIGINT DEFAULT '0' NOT NULL, is_nan BOOLEAN DEFAULT '0' NOT NULL,
        PRIMARY KEY (key, timestamp, step, run_uuid, value, is_nan));
    CREATE TABLE latest_metrics (key VARCHAR(250) NOT NULL, value FLOAT NOT NULL, timestamp BIGINT, step BIGINT NOT NULL,
        is_nan BOOLEAN NOT NULL, run_uuid VARCHAR(32) NOT NULL, PRIMARY KEY (key, run_uuid));
    CREATE TABLE params (key VARCHAR(250) NOT NULL, value VARCHAR(8000) NOT NULL, run_uuid VARCHAR(32) NOT NULL,
        PRIMARY KEY (key, run_uuid));
    CREATE TABLE tags (key VARCHAR(250) NOT NULL, value VARCHAR(8000), run_uuid VARCHAR(32) NOT NULL,
        PRIMARY KEY (key, run_uuid));
    """)
    rid = stable_id(run_name + "db")
    start = int((ctx["end"] - ctx["dur"]) * 1000)
    c.execute("INSERT INTO experiments VALUES (0, 'Default', 'mlflow-artifacts:/0', 'active', ?, ?)", (start, start))
    c.execute("INSERT INTO runs VALUES (?, ?, 'UNKNOWN', '', '', 'ubuntu', 'RUNNING', ?, NULL, NULL, '', 'active', ?, 0)",
              (rid, run_name, start, f"mlflow-artifacts:/0/{rid}/artifacts"))
    for k, v in params.items():
        c.execute("INSERT INTO params VALUES (?, ?, ?)", (k, str(v), rid))
    c.execute("INSERT INTO tags VALUES ('mlflow.runName', ?, ?)", (run_name, rid))
    t = clock(ctx)
    latest = {}
    evd = dict(run["evals"])

    def put(key, v, ts, s):
        nan = is_nan(v)
        val = 0.0 if nan else float(g6(v))
        c.execute("INSERT OR IGNORE INTO metrics VALUES (?, ?, ?, ?, ?, ?)", (key, val, int(ts * 1000), rid, s, nan))
        latest[key] = (key, val, int(ts * 1000), s, nan, rid)

    for r in run["rows"]:
        s = r["step"]
        for k, v in r.items():
            if k in vocab and v is not None:
                put(vocab[k], v, t(s), s)
        if s in evd:
            for k, v in evd.pop(s).items():
                put(eval_vocab.get(k, k), v, t(s) + 20, s)
    c.executemany("INSERT INTO latest_metrics VALUES (?, ?, ?, ?, ?, ?)", list(latest.values()))
    con.commit()
    con.close()
    stamp_tree(folder, ctx["end"])


def w_trackio(run, folder, ctx, vocab, eval_vocab, project, run_name, config):
    db = folder / f"{project}.db"
    con = sqlite3.connect(db)
    c = con.cursor()
    c.executescript("""
    CREATE TABLE metrics (id INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT, timestamp TEXT, run_name TEXT,
        step INTEGER, metrics TEXT);
    CREATE TABLE configs (id INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT, run_name TEXT, config TEXT,
        created_at TEXT);
    CREATE TABLE system_metrics (id INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT, timestamp TEXT, run_name TEXT,
        metrics TEXT);
    """)
    rid = stable_id(run_name + "tk")[:16]
    def iso(x):
        return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(x)) + f".{int((x % 1) * 1e6):06d}"
    c.execute("INSERT INTO configs (run_id, run_name, config, created_at) VALUES (?, ?, ?, ?)",
              (rid, run_name, json.dumps(config), iso(ctx["end"] - ctx["dur"])))
    t = clock(ctx)
    evd = dict(run["evals"])
    for r in run["rows"]:
        s = r["step"]
        m = {vocab[k]: ("NaN" if is_nan(v) else g6(v)) for k, v in r.items() if k in vocab}
        m["train/epoch"] = round(s / config.get("steps_per_epoch", 10 ** 9), 4)
        m["train/global_step"] = s
        c.execute("INSERT INTO metrics (run_id, timestamp, run_name, step, metrics) VALUES (?, ?, ?, ?, ?)",
                  (rid, iso(t(s)), run_name, s, json.dumps(m)))
        if s in evd:
            e = {eval_vocab.get(k, k): g6(v) for k, v in evd.pop(s).items()}
            e["train/global_step"] = s
            c.execute("INSERT INTO metrics (run_id, timestamp, run_name, step, metrics) VALUES (?, ?, ?, ?, ?)",
                      (rid, iso(t(s) + 20), run_name, s, json.dumps(e)))
    con.commit()
    con.close()
    stamp_tree(folder, ctx["end"])


def w_wandb_csv(run, folder, ctx, xkey, display, panels, eval_panels, bucket=1):
    """W&B panel exports: one CSV per panel, x column, `<run> - <metric>`, __MIN and __MAX, every field quoted."""
    export_t = ctx["end"]
    for i, (canon, metric) in enumerate(list(panels.items()) + list(eval_panels.items())):
        is_eval = canon in eval_panels
        if is_eval:
            pts = [(s, e[canon]) for s, e in run["evals"] if canon in e]
            b = 1
        else:
            pts = [(r[xkey[1]] if isinstance(xkey, tuple) else r["step"], r[canon]) for r in run["rows"] if canon in r]
            b = bucket
        name = f"wandb_export_{time.strftime('%Y-%m-%dT%H_%M_%S', time.localtime(export_t - 60 * (len(panels) - i)))}.{100 + 37 * i:03d}+02_00.csv"
        col = f"{display} - {metric}"
        with (folder / name).open("w", newline="", encoding="utf-8") as fh:
            w = csv.writer(fh, quoting=csv.QUOTE_ALL)
            w.writerow([xkey[0] if isinstance(xkey, tuple) else xkey, col, col + "__MIN", col + "__MAX"])
            for j in range(0, len(pts), b):
                chunk = pts[j:j + b]
                x = chunk[-1][0]
                vs = [v for _, v in chunk]
                w.writerow([x, repr(g6(float(np.mean(vs)))), repr(g6(min(vs))), repr(g6(max(vs)))])
    stamp_tree(folder, ctx["end"])


def w_csv(run, folder, ctx, name, cols, eval_cols=None, derived=None, fmt=None):
    """A hand-written loop's CSV: one row per logged step, eval columns empty except on eval steps."""
    evd = dict(run["evals"])
    fmt = fmt or {}
    with (folder / name).open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        header = list(cols) + list(eval_cols or {})
        w.writerow(header)
        for r in run["rows"]:
            s = r["step"]
            d = dict(r)
            if derived:
                d.update(derived(r))
            row = []
            for c, src in cols.items():
                v = d.get(src, "")
                row.append(fmt[c](v) if c in fmt else (v if isinstance(v, (int, str)) else f"{v:.6g}"))
            e = evd.pop(s, None)
            for c, src in (eval_cols or {}).items():
                row.append("" if e is None else (fmt[c](e[src]) if c in fmt else f"{e[src]:.6g}"))
            w.writerow(row)
    stamp_tree(folder, ctx["end"])


def w_jsonl(run, folder, ctx, name, keys, eval_keys, derived=None, header=None, config=None):
    evd = dict(run["evals"])
    t = clock(ctx)
    with (folder / name).open("w", encoding="utf-8") as fh:
        if header:
            fh.write(json.dumps(header) + "\n")
        if 0 in evd:
            fh.write(json.dumps({"step": 0, "time": round(t(0), 1), **{eval_keys[k]: g6(v) for k, v in evd.pop(0).items()}}) + "\n")
        for r in run["rows"]:
            s = r["step"]
            d = dict(r)
            if derived:
                d.update(derived(r))
            row = {"step": s, "time": round(t(s), 1)}
            row.update({out: g6(d[src]) for out, src in keys.items() if src in d})
            fh.write(json.dumps(row) + "\n")
            if s in evd:
                fh.write(json.dumps({"step": s, "time": round(t(s) + 40, 1),
                                     **{eval_keys[k]: g6(v) for k, v in evd.pop(s).items()}}) + "\n")
    if config:
        (folder / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    stamp_tree(folder, ctx["end"])


# ------------------------------------------------------------------------------------------------------ the cases


@dataclass
class Spec:
    name: str
    story: Story
    write: Callable  # (run, folder, ctx) -> None
    seed: int
    planned: int
    label: str  # healthy | stop | conv | rb | sor
    tags: str
    why: str
    age_min: float = 3.0  # minutes since the newest write
    hours: float = 10.0  # wall duration of what is logged

    def labels(self) -> dict:
        st = self.story
        if self.label == "healthy":
            return HEALTHY
        if self.label == "conv":
            return converged()
        if self.label == "stop":
            return stop(st.onset)
        lo, hi, *_ = window(st)
        return rollback(lo, hi, st.onset) if self.label == "rb" else stop_or_rollback(lo, hi, st.onset)

    def case(self) -> Case:
        w = window(self.story) if self.label in ("rb", "sor") else None
        why = self.why.format(lo=w[0], hi=w[1], best=w[2], best_s=w[3], sd=w[4]) if w else self.why
        return Case(self.name, lambda *a: None, self.write, self.seed, (self.story.steps[-1], self.planned),
                    self.labels(), self.tags, why)


def W(fn, **kw):
    return lambda run, folder, ctx: fn(run, folder, ctx, **kw)


def every(n: int, last: int, first: int | None = None) -> list[int]:
    return list(range(first if first is not None else n, last + 1, n))


SPECS: list[Spec] = []

# ---------------------------------------------------------------------------------------------- healthy (10)

# H1: 36k-step TRL GRPO, log every 25, tokens-seen column, checkpoints every 2000 (limit 3), live.
_h1_len = pw((0, 380), (12000, 470), (36000, 610), (50000, 640))
SPECS.append(Spec(
    "ok-trl-grpo-ckpts-36k-of-50k-log-every-25-tokens-seen-column-eval-every-2000-slow-climb-live",
    Story(every(25, 36000), reward=pw((0, .18), (3000, .30), (12000, .40), (24000, .455), (36000, .49), (50000, .51)),
          P=32, G=8, avg=25,
          evals={"eval_reward": (pw((0, .17), (4000, .27), (16000, .35), (36000, .43)), 1000)},
          eval_steps=every(2000, 36000),
          side={"length": Sig(_h1_len, .03), "trunc": Sig(pw((0, .008), (36000, .03)), .15),
                "entropy": Sig(pw((0, .62), (36000, .38)), .03), "grad_norm": Sig(const(.12), mode="grad"),
                "lr": Sig(lambda s: 1e-6 * min(1, s / 500), mode="exact"), "loss": Sig(const(0.0), .004, "zero")}),
    W(w_trl_ckpts, vocab={**TRL_GRPO, "reward": "rewards/accuracy_reward/mean"}, save_every=2000, keep=3,
      logging_steps=25, eval_steps=2000, steps_per_epoch=12500,
      eval_extra=lambda s: {"eval_loss": 0.0, "eval_runtime": 611.4, "eval_samples_per_second": 1.636,
                            "eval_steps_per_second": 0.026},
      extra_rows=lambda r: {"reward": g6(r["reward"]), "reward_std": g6(r["reward_std"]),
                            "num_tokens": float(int(256 * (205 + _h1_len(r["step"] / 2)) * r["step"])),
                            "num_input_tokens_seen": int(256 * (205 + _h1_len(r["step"] / 2)) * r["step"])}),
    1111, 50000, "healthy", "long trl-state checkpoints tokens-axis live",
    "TRL GRPO (v0.2x) checkpoints every 2000 steps, save_total_limit 3, logging_steps 25, max_steps 50000; each log "
    "row also carries num_input_tokens_seen / num_tokens (cumulative, ~6.5e9 by step 36000), which is not the step axis. "
    "The accuracy reward climbs slowly over 36k steps: 0.30 at 3k, 0.40 at 12k, 0.455 at 24k, 0.49 at 36k (logged "
    "values average 25 batches, sd ~0.01, so the last 12k steps are a clear +0.035). Held-out eval_reward (N=1000, "
    "every 2000) rises 0.27 at 4k -> 0.35 at 16k -> 0.43 at 36k. Entropy drifts down slowly 0.62 -> 0.38, lengths "
    "grow 380 -> 610, truncation 3%. The newest checkpoint was written 14 minutes ago with 14k steps of budget left: "
    "still improving, continue.", age_min=14, hours=36000 * 9 / 3600))

# H2: NeMo-RL, 15k steps, sparse binary reward mostly 0 at start, lifts off around 4k; validation every 1000.
SPECS.append(Spec(
    "ok-nemo-tb-15k-steps-sparse-reward-pct0-98-lifts-off-near-4k-validation-every-1000-live",
    Story(every(1, 15000), reward=pw((0, .002), (2500, .008), (4000, .035), (6000, .09), (10000, .16), (15000, .215)),
          P=16, G=8,
          evals={"validation/accuracy": (pw((0, .004), (3000, .01), (5000, .05), (10000, .15), (15000, .205)), 500)},
          eval_steps=every(1000, 15000, 0),
          side={"kl": Sig(pw((0, 0.0), (2000, .001), (15000, .012)), .05),
                "entropy": Sig(pw((0, .71), (15000, .52)), .03),
                "length": Sig(pw((0, 1650), (4000, 1500), (15000, 1900)), .03),
                "grad_norm": Sig(pw((0, .02), (4000, .06), (15000, .09)), mode="grad"),
                "lr": Sig(lambda s: 5e-7 * min(1, s / 50), mode="exact")}),
    W(lambda run, folder, ctx: w_tb(
        {**run, "rows": [{k: v for k, v in r.items() if k in ("step", "reward", "pct0", "pct1") or r["step"] % 10 == 0}
                         for r in run["rows"]]},
        folder, ctx, "logs/exp_004/tensorboard",
        {"reward": "train/reward", "pct0": "train/baseline_reward/pct_0", "pct1": "train/baseline_reward/pct_1",
         "kl": "train/kl_penalty", "entropy": "train/approx_entropy", "length": "train/mean_gen_tokens_per_sample",
         "grad_norm": "train/grad_norm", "lr": "train/lr"}, {}, host="dgx-a17", pid=90413)),
    102, 40000, "healthy", "long nemo-tb sparse-reward live",
    "NeMo-RL GRPO on a hard proof-checking set, 16 prompts x 8 generations per step, every step logged (side "
    "signals every 10). For the first ~2500 steps most batches score exactly 0 (level 0.2-0.8%, "
    "train/baseline_reward/pct_0 ~98%); the reward lifts off around 4000 and climbs 0.035 -> 0.09 at 6k -> 0.16 at "
    "10k -> 0.215 at 15k. validation/accuracy (N=500, every 1000) follows: 0.01 at 3k, 0.05 at 5k, 0.15 at 10k, 0.205 "
    "at 15k and still rising. KL tiny, entropy easing 0.71 -> 0.52. Written 3 minutes ago: a sparse-reward run that "
    "has started to learn, continue.", age_min=3, hours=15000 * 14 / 3600))

# H3: verl console, killed by an OOM at step 24, still rising.
SPECS.append(Spec(
    "ok-verl-console-np2-ray-prefix-killed-by-oom-at-step-24-score-and-val-rising",
    Story(every(1, 24), reward=pw((0, .17), (24, .44)), P=64, G=5,
          evals={"val-core/openai/gsm8k/acc/mean@1": (pw((0, .21), (24, .40)), 1319)}, eval_steps=[0, 10, 20],
          side={"entropy": Sig(pw((0, .92), (24, .74)), .03), "kl": Sig(pw((0, .0005), (24, .004)), .1),
                "clip": Sig(const(.0015), .2), "grad_norm": Sig(pw((0, .35), (24, .22)), mode="grad"),
                "lr": Sig(const(1e-6), mode="exact"), "length": Sig(pw((0, 215), (24, 262)), .04),
                "step_time": Sig(const(41.0), .05), "gen_time": Sig(const(23.0), .06),
                "pg_loss": Sig(const(0.0), .01, "add")}),
    W(w_verl_console, vocab=VERL, val_key="val-core/openai/gsm8k/acc/mean@1", fmt_np2=True,
      prefix="(TaskRunner pid=39877) ", proj="verl_grpo_gsm8k", exp="qwen25_3b_lr1e-6", steps_per_epoch=116,
      crash=["(TaskRunner pid=39877) Traceback (most recent call last):",
             '(TaskRunner pid=39877)   File "/workspace/verl/verl/trainer/ppo/ray_trainer.py", line 1187, in fit',
             "(TaskRunner pid=39877)     actor_output = self.actor_rollout_wg.update_actor(batch)",
             "(TaskRunner pid=39877) ray.exceptions.RayTaskError(OutOfMemoryError): ray::WorkerDict.actor_rollout_update_actor() "
             "(pid=40233, ip=10.0.3.12)",
             "(TaskRunner pid=39877) torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.48 GiB. GPU 3 has a "
             "total capacity of 79.19 GiB of which 1.02 GiB is free.",
             "Error executing job with overrides: ['algorithm.adv_estimator=grpo', 'data.train_batch_size=64', "
             "'actor_rollout_ref.rollout.n=5', 'trainer.total_epochs=15', 'trainer.test_freq=10']"]),
    103, 1740, "healthy", "short verl-console np2 crashed",
    "verl GRPO on GSM8K (64 prompts x 5, NumPy-2 console, Ray prefixes). The run died with a CUDA OOM in "
    "update_actor after step 24 of a planned 1740; the log was last written 2 hours ago. Up to the crash it was "
    "learning fast: critic/score/mean 0.17 -> 0.44, val-core gsm8k acc 0.21 (step 0) -> ~0.29 (10) -> ~0.37 (20) "
    "(N=1319, sd 0.013). Nothing is wrong with the learning; the run should be resumed (with a smaller micro-batch) "
    "and more steps will pay: continue, not stop.", age_min=125, hours=24 * 41 / 3600))

# H4: rasbt CSV, 80 of 80 steps, eval_acc at 1, 40, 80, still improving at the end.
SPECS.append(Spec(
    "ok-rasbt-7-5-csv-finished-80-of-80-eval-at-1-40-80-still-climbing",
    Story(every(1, 80), reward=pw((0, .15), (80, .43)), P=1, G=8,
          evals={"eval_acc": (pw((0, .152), (40, .232), (80, .292)), 500)}, eval_steps=[1, 40, 80],
          side={"kl_loss": Sig(pw((0, 0.0), (80, .004)), .002, "add"), "ratio": Sig(const(1.0), .01, "add"),
                "tps": Sig(const(36.5), .05), "length": Sig(pw((0, 310), (80, 380)), .15),
                "entropy": Sig(pw((0, .55), (80, .47)), .08), "loss": Sig(const(0.0), 4.0, "add")}),
    W(lambda run, folder, ctx: (folder / "logs").mkdir(exist_ok=True) or w_csv(
        run, folder / "logs", ctx, "7_5_plus_kl_metrics.csv",
        {"step": "step", "total_steps": "total", "loss": "loss", "kl_loss": "kl_loss", "policy_ratio": "ratio",
         "reward_avg": "reward", "tokens_per_sec": "tps", "avg_response_len": "length", "adv_avg": "adv_avg",
         "adv_std": "adv_std", "entropy_avg": "entropy"}, {"eval_acc": "eval_acc"},
        derived=lambda r: {"total": 80, "adv_avg": 0.0, "adv_std": 0.0 if r["zero_std"] == 1 else 0.9354,
                           "loss": 0.0 if r["zero_std"] == 1 else r["loss"],
                           "ratio": "" if r["zero_std"] == 1 else r["ratio"]},
        fmt={"eval_acc": lambda v: f"{v:.6f}", "reward_avg": lambda v: f"{v:.3f}", "adv_avg": lambda v: "0.0000",
             "adv_std": lambda v: f"{v:.4f}", "policy_ratio": lambda v: v if v == "" else f"{v:.4f}"}) or stamp_tree(folder, ctx["end"])),
    1415, 80, "healthy", "short rasbt-csv finished three-evals",
    "rasbt reasoning-from-scratch 7_5 script (one prompt x 8 rollouts per step, so reward_avg jumps between 0 and 1 "
    "step to step), total_steps 80, finished at 80 an hour ago. Its only three eval points (MATH-500, fraction, "
    "N=500, sd ~0.02) are 0.152 at step 1, 0.232 at 40 and 0.292 at 80: +0.06 over the second half (~3 sd), and the "
    "running reward_avg trends 0.15 -> 0.43. The run reached its planned end while still improving; extending it is "
    "worth it: continue.", age_min=62, hours=80 * 55 / 3600))

# H5: OpenRLHF console, curriculum easy -> hard at 1500, reward drops by design and recovers, held-out rising.
def _h5_rew(s):
    return pw((0, .42), (1500, .78))(s) if s <= 1500 else pw((1500, .30), (2300, .41), (4000, .50))(s)
SPECS.append(Spec(
    "ok-openrlhf-console-curriculum-easy-to-hard-at-1500-reward-0.78-to-0.30-recovering-eval-rising-live",
    Story(every(1, 2300), reward=_h5_rew, P=64, G=8,
          evals={"pass1": (pw((0, .22), (1500, .33), (2300, .385)), 600)}, eval_steps=every(100, 2300),
          side={"group_std": Sig(lambda s: .28 if s <= 1500 else .41, .05),
                "kl": Sig(pw((0, 0), (1500, .02), (2300, .035)), .06), "policy_loss": Sig(const(0.0), .02, "add"),
                "length": Sig(lambda s: pw((0, 420), (1500, 510))(s) if s <= 1500 else pw((1500, 980), (2300, 1100))(s), .03),
                "grad_norm": Sig(const(.18), mode="grad"), "lr": Sig(const(1e-6), mode="exact"),
                "clip": Sig(const(.004), .2)}),
    W(w_openrlhf_console, vocab={"policy_loss": "policy_loss", "reward": "reward", "group_std": "group_reward_std",
                                 "kl": "kl", "length": "response_length", "clip": "ppo_clip_ratio",
                                 "lr": "actor_lr", "grad_norm": "actor_grad_norm"}, ds="mathmix",
      extra_lines={1501: ["[curriculum] stage 1 finished at global step 1500; switching prompt source "
                          "data/stage1_easy.jsonl -> data/stage2_hard.jsonl (18432 prompts)"]}),
    105, 4000, "healthy", "multistage openrlhf-console curriculum live",
    "OpenRLHF GRPO with a two-stage curriculum. Stage 1 (easy prompts) takes the train reward 0.42 -> 0.78; at step "
    "1500 the log announces the switch to the hard prompt file, and the reward falls to ~0.30 by design (harder "
    "prompts, group_reward_std rises, responses double in length), then recovers to 0.41 by 2300. The held-out "
    "eval_mathmix_pass1 (N=600, every 100) never notices the switch: 0.22 -> 0.33 at 1500 -> ~0.385 at 2300, still "
    "rising. Written minutes ago: a planned stage change, not a collapse; continue.", age_min=5,
    hours=2300 * 30 / 3600))

# H6: MLflow files from a TRL GRPO run: stage 2 relaunched from checkpoint-3000 with a brevity reward; 3010-3050 twice.
def _h6_acc(s):
    return pw((0, .35), (3000, .58), (4200, .63))(s)
SPECS.append(Spec(
    "ok-mlflow-files-trl-stage2-relaunch-from-3000-adds-brevity-reward-total-jumps-steps-3010-3050-logged-twice",
    Story(every(10, 4200), P=16, G=8, avg=10,
          comps={"accuracy_reward": (_h6_acc, "bin", 1.0),
                 "brevity_reward": (lambda s: float("nan") if s <= 3000 else pw((3000, .35), (4200, .70))(s), "frac", 1.0)},
          evals={"eval_rewards/accuracy_reward/mean": (pw((0, .33), (3000, .55), (4200, .595)), 400)},
          eval_steps=every(200, 4200), headline="eval_rewards/accuracy_reward/mean",
          side={"length": Sig(lambda s: pw((0, 640), (3000, 820))(s) if s <= 3000 else pw((3000, 800), (4200, 560))(s), .03),
                "entropy": Sig(pw((0, .48), (4200, .36)), .03), "grad_norm": Sig(const(.09), mode="grad"),
                "lr": Sig(lambda s: 2e-6 if s <= 3000 else 1e-6, mode="exact"), "loss": Sig(const(0.0), .003, "zero")},
          stale=(every(10, 3050, 3010), [], {"comps": {"accuracy_reward": (_h6_acc, "bin", 1.0)},
                                              "side": {"length": Sig(const(820), .03), "entropy": Sig(const(.39), .03),
                                                       "grad_norm": Sig(const(.09), mode="grad"),
                                                       "lr": Sig(const(2e-6), mode="exact"),
                                                       "loss": Sig(const(0.0), .003, "zero")}})),
    W(w_mlflow_files, vocab={"reward": "reward", "reward_std": "reward_std",
                             "c/accuracy_reward": "rewards/accuracy_reward/mean",
                             "c/brevity_reward": "rewards/brevity_reward/mean", "length": "completions/mean_length",
                             "entropy": "entropy", "grad_norm": "grad_norm", "lr": "learning_rate", "loss": "loss"},
      eval_vocab={}, run_name="grpo-qwen3-4b-math-stages", stale_resume=3000,
      params={"max_steps": 6000, "logging_steps": 10, "eval_steps": 200, "save_steps": 500, "beta": 0.0,
              "num_generations": 8, "reward_funcs": "['accuracy_reward', 'brevity_reward']",
              "resume_from_checkpoint": "outputs/grpo-qwen3-4b/checkpoint-3000"}),
    106, 6000, "healthy", "multistage mlflow-files new-reward-fn duplicate-steps live",
    "TRL GRPO logged through the HF MLflow callback (raw keys) into the file store. Stage 1 (accuracy reward only) "
    "ran to 3050; the operator then relaunched from checkpoint-3000 into the same MLflow run with a second reward "
    "function (rewards/brevity_reward/mean appears) and half the learning rate, so steps 3010-3050 are in the metric "
    "files twice. By design the summed `reward` jumps from ~0.58 to ~0.93 at 3000 and keeps rising (brevity 0.35 -> "
    "0.70, completions shrink 800 -> 560 tokens). The accuracy component keeps improving 0.58 -> 0.63 and "
    "eval_rewards/accuracy_reward/mean (N=400, every 200) goes 0.55 at 3000 -> ~0.595 at 4200. Live at 4200 of "
    "6000: continue.", age_min=4, hours=4200 * 22 / 3600))

# H7: verl TB, DAPO +-1 score, starts at -0.62 and rises; val acc rising.
SPECS.append(Spec(
    "ok-verl-tb-dapo-score-in-minus1-to-1-starts-at-minus-0.62-rising-to-minus-0.06-val-acc-rising-live",
    Story(every(1, 900), reward=pw((0, -.62), (300, -.36), (900, -.06)), kind="pm1", P=128, G=16,
          evals={"val-core/math_dapo/acc/mean@1": (pw((0, .17), (300, .24), (900, .335)), 500)},
          eval_steps=every(50, 900, 0),
          side={"entropy": Sig(pw((0, .68), (900, .61)), .03), "clip": Sig(const(.0021), .15),
                "grad_norm": Sig(const(.21), mode="grad"), "lr": Sig(const(1e-6), mode="exact"),
                "length": Sig(pw((0, 1900), (900, 3100)), .03), "trunc": Sig(pw((0, .02), (900, .05)), .1),
                "num_gen": Sig(pw((0, 2.6), (900, 1.6)), .08)}),
    W(w_tb, sub="tensorboard_log/DAPO/DAPO-Qwen2.5-7B-math",
      train_map={**{k: v for k, v in VERL.items() if k not in ("kl", "pg_loss", "step_time", "gen_time")},
                 "num_gen": "train/num_gen_batches"},
      eval_map={}, host="h100-pod-3", pid=7781),
    107, 3000, "healthy", "verl-tb reward-scale-pm1 live",
    "verl DAPO recipe (correct +1, incorrect -1), so critic/score/mean lives in [-1, 1] and starts well below zero: "
    "-0.62 at step 0 -> -0.36 at 300 -> -0.06 at 900 (i.e. the train solve rate 19% -> 47%). val-core math_dapo "
    "acc/mean@1 (N=500, every 50) rises 0.17 -> 0.24 -> ~0.335. Entropy steady ~0.6 (clip-higher), lengths grow "
    "1900 -> 3100 with truncation ~5%, num_gen_batches falling as fewer groups are all-wrong. A negative reward is "
    "the scale, not a failure; written 2 minutes ago: continue.", age_min=2, hours=900 * 120 / 3600))

# H8: hand-written REINFORCE loop, RM score minus a baseline re-centred every 1000 steps -> sawtooth; winrate rising.
_h8_raw = pw((0, -3.1), (4600, -1.45), (8000, -1.0))
def _h8_base(s):
    return _h8_raw(1000 * (s // 1000)) if s >= 1000 else _h8_raw(0)
SPECS.append(Spec(
    "ok-custom-jsonl-rm-score-negative-baseline-recentred-every-1000-sawtooth-judge-winrate-rising-live",
    Story(every(1, 4600), reward=lambda s: _h8_raw(s) - _h8_base(s), kind="rm", P=64, G=4, tau=.8, s_sd=1.4,
          evals={"winrate": (pw((0, .50), (4600, .64)), 400)}, eval_steps=every(250, 4600, 0),
          side={"kl": Sig(pw((0, 0), (4600, 3.2)), .05), "length": Sig(pw((0, 240), (4600, 300)), .04),
                "grad_norm": Sig(const(1.7), mode="grad"), "base": Sig(_h8_base, mode="exact"),
                "lr": Sig(const(5e-7), mode="exact")}),
    W(w_jsonl, name="metrics.jsonl",
      keys={"reward": "reward", "rm_baseline": "base", "reward_std": "reward_std", "kl_to_ref": "kl",
            "resp_len": "length", "grad_norm": "grad_norm", "lr": "lr"},
      eval_keys={"winrate": "eval/winrate_vs_sft"},
      config={"algo": "reinforce", "reward_model": "rm-7b-helpful-v3", "reward": "rm_score - rm_baseline",
              "baseline_update_every": 1000, "total_steps": 8000, "batch_prompts": 64, "samples_per_prompt": 4}),
    108, 8000, "healthy", "custom-jsonl reward-scale negative-rm shifting-baseline live",
    "Hand-written REINFORCE loop against a 7B reward model whose raw scores are negative (-3.1 at the start, about "
    "-1.45 now). The loop logs reward = rm_score - rm_baseline and re-estimates the baseline every 1000 steps "
    "(rm_baseline steps up -3.1 -> -2.74 -> ... -> -1.66), so the logged reward saws back to ~0 at every "
    "re-centring and climbs ~+0.36 within each block. That sawtooth is bookkeeping: the judge win rate against the "
    "SFT model (eval/winrate_vs_sft, N=400, every 250) rises 0.50 -> ~0.64, KL grows moderately. Live at 4600 of "
    "8000: continue.", age_min=6, hours=4600 * 15 / 3600))

# H9: custom CSV, entropy summed over the sequence (tracks length), healthy.
SPECS.append(Spec(
    "ok-custom-csv-entropy-column-summed-over-sequence-130-to-390-tracks-length-per-token-flat-pass-rate-rising",
    Story(every(1, 1400), reward=pw((0, .31), (1400, .55)), P=32, G=8,
          evals={"pass1": (pw((0, .29), (1400, .47)), 500)}, eval_steps=every(100, 1400),
          side={"length": Sig(pw((0, 310), (1400, 950)), .04), "tok_ent": Sig(pw((0, .42), (1400, .41)), .03),
                "kl": Sig(pw((0, 0), (1400, .03)), .06), "grad_norm": Sig(const(.25), mode="grad"),
                "lr": Sig(const(1e-6), mode="exact")}),
    W(w_csv, name="train_log.csv",
      cols={"step": "step", "reward": "reward", "entropy": "seq_ent", "resp_len": "length", "kl": "kl",
            "grad_norm": "grad_norm", "lr": "lr"}, eval_cols={"eval_pass1": "pass1"},
      derived=lambda r: {"seq_ent": r["tok_ent"] * r["length"]}),
    109, 3000, "healthy", "custom-csv entropy-per-sequence live",
    "Hand-written GRPO loop whose `entropy` column is the entropy summed over each completion (mean over "
    "sequences), not per token: it climbs 130 -> ~390 only because completions grow 310 -> 950 tokens; per token it "
    "is a flat ~0.41 (and 390 nats/token would be impossible, ln(vocab) ~ 11.9). Reward rises 0.31 -> 0.55 and "
    "eval_pass1 (N=500, every 100) 0.29 -> 0.47, KL small. Written a minute ago: healthy, continue.",
    age_min=1, hours=1400 * 25 / 3600))

# H10: Trackio, TRL 1.x GRPO, loss hovers at 0 and goes negative, warmup + cosine LR, live at 45%.
SPECS.append(Spec(
    "ok-trackio-trl1x-grpo-loss-hovers-at-zero-dips-negative-clip-ratio-exactly-0-warmup-cosine-live-1350-of-3000",
    Story(every(10, 1350), reward=pw((0, .40), (600, .53), (1350, .61)), P=16, G=8, avg=10,
          evals={"eval/reward": (pw((0, .38), (600, .49), (1350, .56)), 500)}, eval_steps=every(150, 1350),
          side={"loss": Sig(pw((0, 0.0), (1350, -.0004)), .0006, "zero"), "clip": Sig(const(0.0), mode="exact"),
                "lr": Sig(warm_cosine(3e-6, 100, 3000), mode="exact"), "grad_norm": Sig(const(.11), mode="grad"),
                "entropy": Sig(pw((0, .50), (1350, .41)), .03), "length": Sig(pw((0, 520), (1350, 610)), .03),
                "zero_std_x": Sig(const(0.0), mode="exact")}),
    W(w_trackio, vocab={"reward": "train/reward", "reward_std": "train/reward_std",
                        "zero_std": "train/frac_reward_zero_std", "loss": "train/loss", "clip": "train/clip_ratio/region_mean",
                        "lr": "train/learning_rate", "grad_norm": "train/grad_norm", "entropy": "train/entropy",
                        "length": "train/completions/mean_length"},
      eval_vocab={}, project="grpo-countdown", run_name="qwen3-1.7b-countdown-3",
      config={"max_steps": 3000, "learning_rate": 3e-6, "lr_scheduler_type": "cosine", "warmup_steps": 100,
              "beta": 0.0, "num_generations": 8, "logging_steps": 10, "steps_per_epoch": 2500}),
    110, 3000, "healthy", "trackio trl1x loss-near-zero cosine live",
    "TRL 1.x GRPO reported to Trackio (train/ and eval/ keys). train/loss hovers at 0 (|loss| < 0.002) and drifts "
    "slightly negative, which for GRPO says nothing about progress; train/clip_ratio/region_mean is exactly 0 "
    "because the run is fully on-policy. The learning rate warms up over 100 steps to 3e-6 and is on its cosine "
    "decay (about 2e-6 at 1350). Reward rises 0.40 -> 0.53 at 600 -> 0.61 at 1350 and eval/reward (N=500, every "
    "150) 0.38 -> 0.56. Live at 1350 of 3000: continue.", age_min=3, hours=1350 * 20 / 3600))

# ---------------------------------------------------------------------------------------- clear failures (9)

# F1: verl JSONL, 20.4k steps, entropy blow-up in the last 2.5 %.
_f1_on = 19900
SPECS.append(Spec(
    "rb-verl-jsonl-20k-steps-entropy-blowup-from-19900-last-2pct-val-every-1000-live",
    Story(every(1, 20400), reward=pw((0, .30), (2000, .45), (8000, .58), (15000, .65), (_f1_on, .68), (20050, .60),
                                     (20250, .42), (20400, .35)), P=128, G=8,
          evals={"val-core/lighteval/MATH/acc/mean@1": (pw((0, .28), (8000, .52), (15000, .57), (_f1_on, .595),
                                                        (20100, .50), (20400, .41)), 500)},
          eval_steps=every(1000, 20400, 0),
          side={"entropy": Sig(pw((0, .55), (_f1_on, .33), (20100, 1.4), (20400, 3.1)), .03),
                "kl": Sig(pw((0, 0), (_f1_on, .05), (20100, .16), (20400, .41)), .05),
                "grad_norm": Sig(pw((0, .2), (_f1_on, .18), (20100, 1.9), (20400, 4.5)), mode="grad"),
                "length": Sig(pw((0, 700), (_f1_on, 1350), (20100, 2200), (20400, 3700)), .03),
                "trunc": Sig(pw((0, .01), (_f1_on, .03), (20100, .18), (20400, .55)), .08)}),
    W(w_verl_jsonl, vocab={k: VERL[k] for k in ("reward", "entropy", "kl", "grad_norm", "length", "trunc")},
      val_key="val-core/lighteval/MATH/acc/mean@1", proj="verl_math", exp="qwen25-7b-grpo-long",
      steps_per_epoch=2300),
    201, 20400, "rb", "long verl-jsonl late-break entropy-blowup live",
    "verl GRPO file-logger JSONL, 20,400 steps logged every step. The train score climbed for ~20k steps (0.45 at 2k, "
    "0.58 at 8k, 0.65 at 15k, 0.68 at 19.9k; batch of 128 prompts x 8, sd {sd:.3f}) with val-core MATH acc/mean@1 "
    "(N=500, every 1000) at 0.59 for the last evals. In the last 2.5% of the run it breaks: from 19,900 entropy goes "
    "0.33 -> 3.1, KL 0.05 -> 0.41, grad norms x20, responses run to the cap (clip ratio 0.55) and the score falls "
    "to 0.35; the val at 20,000 already reads ~0.55 (0.59 before) and the newest steps are far worse. A better model lies just "
    "behind: roll back to the plateau, the newest good point being ~{hi} (window {lo}-{hi}).", age_min=2,
    hours=20400 * 12 / 3600))
SPECS[-1].story.onset = _f1_on

# F2: TRL console, 60 steps, 3 evals, collapse at 46.
SPECS.append(Spec(
    "rb-trl-console-dicts-60-step-run-three-evals-entropy-spike-at-46-reward-collapses-finished",
    Story(every(1, 60), reward=pw((0, .20), (38, .52), (46, .55), (52, .25), (60, .12)), P=16, G=8,
          evals={"eval_reward": (pw((0, .18), (20, .33), (40, .45), (46, .47), (60, .16)), 200)},
          eval_steps=[20, 40, 60], onset=46,
          side={"entropy": Sig(pw((0, .45), (46, .40), (50, 1.9), (60, 2.6)), .04),
                "grad_norm": Sig(pw((0, .3), (46, .3), (50, 3.5), (60, 2.2)), mode="grad"),
                "length": Sig(pw((0, 300), (46, 340), (52, 900), (60, 1024)), .03),
                "trunc": Sig(pw((0, .01), (46, .02), (52, .6), (60, .93)), .05),
                "lr": Sig(const(5e-6), mode="exact"), "loss": Sig(const(0.0), .01, "zero"),
                "clip": Sig(const(0.0), mode="exact")}),
    W(w_trl_console, vocab={k: v for k, v in TRL_GRPO.items() if k != "kl"}, steps_per_epoch=120,
      preamble=["INFO 06-11 14:02:11 [__init__.py:244] Automatically detected platform cuda.",
                "wandb: WARNING `report_to` is 'none'; metrics are printed only."], final=True,
      eval_extra=lambda s: {"eval_loss": 0.0, "eval_runtime": 95.3, "eval_samples_per_second": 2.099,
                            "eval_steps_per_second": 0.042}),
    202, 60, "rb", "short trl-console three-evals collapse finished",
    "TRL GRPO (v0.2x) console log, logging_steps 1, max_steps 60, eval every 20: only three eval points. The reward "
    "rose 0.20 -> 0.52 by step 38 and held ~0.55 to 46 (16 prompts x 8, sd {sd:.3f}); eval_reward 0.33 at 20 and "
    "0.45 at 40. From 47 entropy climbs 0.40 -> 1.9 by step 50, grad norms x10, completions run to the 1024 cap, reward falls to "
    "0.12 by 60 and the last eval (60) is ~0.16. The run finished: keep the weights from before the spike, window "
    "{lo}-{hi} (checkpoint-40, saved outside this log folder, is the natural restore).", age_min=18, hours=60 * 14 / 3600))

# F3: verl console appended: planned relaunch at 2000 with 3x LR and lower kl coef; steps 2001-2040 twice; breaks.
_f3_val = pw((0, .30), (1000, .55), (2000, .61), (2150, .618), (2600, .50))
SPECS.append(Spec(
    "rb-verl-console-plain-planned-relaunch-from-2000-lr-3x-steps-2001-2040-twice-kl-and-grad-climb-val-falls",
    Story(every(1, 2600), reward=pw((0, .35), (1000, .60), (2000, .66), (2150, .67), (2600, .52)), P=64, G=8,
          evals={"val-core/openai/gsm8k/acc/mean@1": (_f3_val, 1319)}, eval_steps=every(100, 2600, 0), onset=2150,
          headline="val-core/openai/gsm8k/acc/mean@1",
          side={"kl": Sig(pw((0, 0), (2000, .018), (2150, .05), (2600, .36)), .05),
                "entropy": Sig(pw((0, .52), (2000, .40), (2150, .42), (2600, 1.05)), .03),
                "grad_norm": Sig(pw((0, .22), (2000, .2), (2150, .5), (2600, 1.6)), mode="grad"),
                "lr": Sig(lambda s: 1e-6 if s <= 2000 else 3e-6, mode="exact"),
                "clip": Sig(pw((0, .002), (2000, .002), (2150, .012), (2600, .08)), .1),
                "length": Sig(pw((0, 240), (2000, 300), (2600, 520)), .04)},
          stale=(every(1, 2040, 2001), [], {"side": {
              "kl": Sig(const(.018), .05), "entropy": Sig(const(.40), .03), "grad_norm": Sig(const(.2), mode="grad"),
              "lr": Sig(const(1e-6), mode="exact"), "clip": Sig(const(.002), .1), "length": Sig(const(300), .04)}})),
    W(w_verl_console, vocab={k: VERL[k] for k in ("reward", "kl", "entropy", "grad_norm", "lr", "clip", "length",
                                                  "step_time")},
      val_key="val-core/openai/gsm8k/acc/mean@1", fmt_np2=False, proj="verl_gsm8k", exp="qwen25-7b-grpo",
      save_freq=200, steps_per_epoch=117,
      relaunch_header=["^C", "(TaskRunner pid=51220) TaskRunner hostname: gpu-node-12, PID: 51220",
                       "(TaskRunner pid=51220) Load from checkpoint folder: checkpoints/verl_gsm8k/qwen25-7b-grpo/global_step_2000",
                       "(TaskRunner pid=51220) Setting global step to 2000",
                       "(TaskRunner pid=51220) overrides: actor_rollout_ref.actor.optim.lr=3e-6 "
                       "actor_rollout_ref.actor.kl_loss_coef=0.0005"]),
    203, 3000, "rb", "multistage verl-console relaunch changed-config duplicate-steps hot-lr",
    "verl GRPO console log (plain floats) appended across two launches. The first launch ran to 2040; the operator "
    "stopped it and relaunched from global_step_2000 with the actor LR tripled (1e-6 -> 3e-6) and a 4x smaller KL "
    "coefficient to speed things up, so steps 2001-2040 appear twice (the later copy is the live one) and the "
    "validation at 2000 is logged again. For ~150 steps it looks fine (val 0.61 -> ~0.615), then KL climbs 0.05 -> "
    "0.36, entropy 0.42 -> 1.05, grad norms x8, pg_clipfrac 0.2% -> 8%, score 0.67 -> 0.52, and val-core gsm8k acc "
    "(N=1319, sd {sd:.3f}) slides to ~0.50 by 2600. Roll back to {lo}-{hi}, before the hot LR broke it.",
    age_min=4, hours=2600 * 35 / 3600))

# F4: W&B CSV export, TRL PPO, x-axis train/episode (samples); RM score climbs, KL runs away, rlhf_reward falls.
_f4_score = pw((0, .2), (250 * 512, 2.4), (380 * 512, 2.7), (600 * 512, 1.9))
_f4_kl = pw((0, 0), (250 * 512, 6), (380 * 512, 10), (600 * 512, 34))
SPECS.append(Spec(
    "rb-wandb-csv-trl-ppo-x-axis-train-episode-kl-runs-to-34-nats-rlhf-reward-peaks-at-episode-194560",
    Story(every(512, 600 * 512), reward=_f4_score, kind="rm", P=512, G=1, tau=.6, s_sd=1.5,
          hl=lambda e: _f4_score(e) - 0.05 * _f4_kl(e), onset=380 * 512,
          side={"kl": Sig(_f4_kl, .04), "entropy": Sig(pw((0, 2.1), (380 * 512, 1.6), (600 * 512, .35)), .04),
                "ratio": Sig(pw((0, 1.0), (380 * 512, 1.01), (600 * 512, 1.5)), .03)}),
    W(lambda run, folder, ctx: w_wandb_csv(
        {**run, "rows": [{**r, "rlhf": r["reward"] - 0.05 * r["kl"], "nsr": 0.05 * r["kl"]} for r in run["rows"]]},
        folder, ctx, "train/episode", "ppo-tldr-pythia1b-0731",
        {"reward": "train/objective/scores", "rlhf": "train/objective/rlhf_reward", "kl": "train/objective/kl",
         "nsr": "train/objective/non_score_reward", "entropy": "train/objective/entropy", "ratio": "train/val/ratio"},
        {})),
    204, 600 * 512, "rb", "wandb-csv trl-ppo x-axis-samples kl-runaway",
    "W&B panel exports of a TRL PPOTrainer run whose x-axis is train/episode (samples; 512 per update), no optimizer "
    "step column. objective/scores (reward model) climbs 0.2 -> 2.4 by episode 128k and ~2.7 by 194,560, while "
    "objective/kl keeps running 10 -> 34 nats; from ~195k the policy degenerates (objective/entropy 1.6 -> 0.35, "
    "val/ratio drifts to 1.5) and even the RM score falls to 1.9. The real objective, objective/rlhf_reward = score - "
    "0.05 KL (sd {sd:.3f} per update), peaked at ~2.2 around episode 194,560 and is ~0.2 at the end. Roll back, in "
    "episode units, to {lo}-{hi}.", age_min=20, hours=600 * 40 / 3600))

# F5: MLflow SQL store, TRL GRPO: NaN from step 2205, reward 0, live.
SPECS.append(Spec(
    "rb-mlflow-db-trl-grpo-grad-norm-nan-from-2205-reward-0-lengths-at-cap-live-2560",
    Story(every(10, 2560), reward=pw((0, .25), (1200, .46), (2200, .52), (2205, .52), (2205.5, 0.0)), P=8, G=8,
          avg=10, evals={"eval_reward": (pw((0, .25), (1200, .45), (2200, .505), (2205, .505), (2205.5, 0.0)), 500)},
          eval_steps=every(250, 2560), onset=2205,
          side={"grad_norm": Sig(pw((0, .15), (2200, .17)), mode="grad"), "lr": Sig(const(1e-6), mode="exact"),
                "loss": Sig(const(0.0), .003, "zero"), "entropy": Sig(pw((0, .5), (2200, .37)), .03),
                "length": Sig(pw((0, 410), (2200, 480), (2205, 480), (2206, 1024)), .02),
                "trunc": Sig(pw((0, .01), (2205, .02), (2206, 1.0)), .01)}),
    W(lambda run, folder, ctx: w_mlflow_db(
        {**run, "rows": [r if r["step"] <= 2200 else
                         {**r, "loss": float("nan"), "grad_norm": float("nan"), "entropy": None, "reward": 0.0,
                          "reward_std": 0.0, "zero_std": 1.0, "length": 1024.0, "trunc": 1.0}
                         if r["step"] > 2210 else {**r, "loss": float("nan"), "grad_norm": float("nan"), "entropy": None,
                                                    "length": 752.0, "trunc": .5}
                         for r in run["rows"]],
         "evals": [(s, e if s <= 2200 else {"eval_reward": 0.0}) for s, e in run["evals"]]},
        folder, ctx, vocab={"reward": "reward", "reward_std": "reward_std", "zero_std": "frac_reward_zero_std",
                            "grad_norm": "grad_norm", "lr": "learning_rate", "loss": "loss", "entropy": "entropy",
                            "length": "completions/mean_length", "trunc": "completions/clipped_ratio"},
        eval_vocab={}, run_name="grpo-llama31-8b-numina",
        params={"max_steps": 5000, "logging_steps": 10, "eval_steps": 250, "save_steps": 250, "bf16": True})),
    205, 5000, "rb", "mlflow-db trl nan-collapse live",
    "TRL GRPO logging raw keys to an MLflow SQL store (mlflow.db). Reward climbed 0.25 -> 0.46 at 1200 -> 0.52 at "
    "2200 (logged values average 10 steps of 8 prompts x 8, sd {sd:.3f}); eval_reward (N=500, every 250) ~0.50 at "
    "2000. At step 2205 the gradient norm goes NaN (is_nan rows for loss and grad_norm from the 2210 log on, entropy "
    "no longer logged), and from then every completion runs to the 1024 cap, reward 0.0, frac_reward_zero_std 1.0, "
    "eval_reward 0.0 at 2250 and 2500. Still running at 2560 and burning GPUs. Roll back to {lo}-{hi} (save_steps 250: "
    "checkpoint-2000 is the newest save before the NaN; checkpoints live outside this folder).", age_min=5, hours=2560 * 24 / 3600))

# F6: OpenRLHF TB, 0-10 judge reward saturates at ~9.6, group std gone, eval flat: stop.
SPECS.append(Spec(
    "stop-openrlhf-tb-judge-reward-0-10-pinned-at-9.6-group-std-1.1-to-0.4-eval-flat-since-900-live",
    Story(every(1, 2100), reward=pw((0, 6.1), (600, 8.9), (900, 9.5), (2100, 9.62)), kind="judge10", P=32, G=4,
          evals={"pass1": (pw((0, 5.9), (600, 8.5), (900, 9.1), (2100, 9.13)), 300, 1.2)}, eval_steps=every(50, 2100),
          onset=900,
          side={"kl": Sig(pw((0, 0), (900, .06), (2100, .11)), .05), "length": Sig(pw((0, 380), (900, 520), (2100, 540)), .03),
                "grad_norm": Sig(pw((0, .4), (900, .12), (2100, .05)), mode="grad"), "lr": Sig(const(5e-7), mode="exact"),
                "policy_loss": Sig(const(0.0), .005, "add")}),
    W(w_tb, sub="tensorboard/helpsteer-judge-grpo",
      train_map={"reward": "train/reward", "group_std": "train/group_reward_std", "kl": "train/kl",
                 "length": "train/response_length", "grad_norm": "train/actor_grad_norm", "lr": "train/actor_lr",
                 "policy_loss": "train/policy_loss"},
      eval_map={"pass1": "eval/eval_helpsteer_pass1"}, host="node-41", pid=3312),
    206, 2100, "stop", "openrlhf-tb reward-scale-0-10 saturated no-signal",
    "OpenRLHF GRPO with an LLM judge scoring 0-10. The train reward rose 6.1 -> 8.9 by 600 and has sat at 9.5-9.6 "
    "since ~900; train/group_reward_std has shrunk from 1.1 to ~0.3-0.5 on the 0-10 scale (about half the groups "
    "of 4 now get identical scores), grad norms fall to ~0.07 and the judge-scored eval (eval_helpsteer_pass1, 300 prompts, sd ~0.07) is flat at ~9.1 for "
    "1200 steps while KL keeps drifting up. The reward is at its ceiling and there is no signal left; the current "
    "weights are as good as any: stop.", age_min=3, hours=2100 * 25 / 3600))

# F7: TRL DPO, 3 epochs, finished; eval accuracy peaks at end of epoch 1, overfits after.
SPECS.append(Spec(
    "rb-trl-dpo-state-finished-3-epochs-eval-acc-peaks-end-of-epoch-1-train-acc-1.0-eval-loss-rises",
    Story(every(10, 930), reward=None,
          evals={"eval_rewards/accuracies": (pw((0, .50), (150, .66), (310, .725), (400, .722), (450, .70), (930, .655)), 1000)},
          eval_steps=every(50, 930), headline="eval_rewards/accuracies", onset=400,
          side={"acc": Sig(lambda s: pw((0, .5), (310, .74))(s) if s <= 310 else
                           (pw((310, .90), (620, .97))(s) if s <= 620 else pw((620, .99), (930, 1.0))(s)), 640, "frac"),
                "margin": Sig(lambda s: pw((0, 0.05), (310, 1.1))(s) if s <= 310 else
                              (pw((310, 2.0), (620, 4.2))(s) if s <= 620 else pw((620, 5.0), (930, 7.1))(s)), .05),
                "chosen": Sig(pw((0, .0), (310, -.4), (930, -4.8)), .2, "add"),
                "logps_c": Sig(pw((0, -210), (310, -218), (930, -265)), .02),
                "loss": Sig(lambda s: pw((0, .69), (310, .52))(s) if s <= 310 else
                            (pw((310, .25), (620, .08))(s) if s <= 620 else pw((620, .03), (930, .01))(s)), .06),
                "grad_norm": Sig(pw((0, 12), (930, 6)), mode="grad"),
                "lr": Sig(linear_decay(5e-7, 30, 930), mode="exact")}),
    W(w_trl_ckpts, vocab={"loss": "loss", "grad_norm": "grad_norm", "lr": "learning_rate", "acc": "rewards/accuracies",
                          "margin": "rewards/margins", "chosen": "rewards/chosen", "logps_c": "logps/chosen"},
      save_every=310, keep=3, logging_steps=10, eval_steps=50, steps_per_epoch=310, final=True, top_level=True,
      extra_rows=lambda r: {"rewards/rejected": g6(r["chosen"] - r["margin"]), "logps/rejected": g6(r["logps_c"] - 30 - 8 * r["margin"])},
      eval_extra=lambda s: {"eval_loss": round(pw((0, .693), (310, .55), (400, .56), (930, .78))(s), 4),
                            "eval_runtime": 41.2, "eval_samples_per_second": 24.27, "eval_steps_per_second": 0.76}),
    207, 930, "rb", "trl-state dpo finished overfit multi-epoch",
    "TRL DPO, 3 epochs (310 steps each), checkpoints at 310/620/930 and a top-level trainer_state.json from the "
    "finished run (6 hours ago). Epoch 1 learns: eval_rewards/accuracies (1000 pairs, sd {sd:.3f}) 0.50 -> ~0.725 "
    "around 310-400, eval_loss 0.693 -> 0.55. Epochs 2-3 memorise the training pairs: train rewards/accuracies jumps "
    "to 0.9 and then 1.0 at each epoch boundary, margins 1.1 -> 7, the loss falls in steps to 0.01, while eval "
    "accuracy slides to ~0.66 and eval_loss rises to 0.78. The final weights are worse; restore {lo}-{hi} "
    "(checkpoint-310 is on disk).", age_min=360, hours=930 * 9 / 3600))

# F8: custom CSV with step + samples columns; lengths run to the cap; grad norm logged after clipping; stalled 4h.
SPECS.append(Spec(
    "rb-custom-csv-step-and-samples-columns-lengths-run-to-cap-grad-norm-post-clip-pinned-1.0-stalled-4h",
    Story(every(1, 1260), reward=pw((0, .22), (700, .51), (900, .53), (1260, .30)), P=48, G=8,
          evals={"eval_acc": (pw((0, .20), (700, .47), (900, .49), (1260, .31)), 500)}, eval_steps=every(100, 1260),
          onset=900, headline="eval_acc",
          side={"length": Sig(pw((0, 520), (900, 700), (1100, 1500), (1260, 1980)), .03),
                "trunc": Sig(pw((0, .02), (900, .03), (1100, .3), (1260, .62)), .06),
                "grad_norm": Sig(pw((0, .45), (900, .6), (1050, 4.0), (1260, 9.0)), mode="grad", clip=1.0),
                "kl": Sig(pw((0, 0), (900, .03), (1260, .21)), .05), "entropy": Sig(pw((0, .48), (900, .40), (1260, .63)), .03),
                "lr": Sig(const(1e-6), mode="exact")}),
    W(w_csv, name="log.csv",
      cols={"step": "step", "samples": "samples", "reward_mean": "reward", "resp_len_mean": "length",
            "trunc_frac": "trunc", "kl": "kl", "entropy": "entropy", "grad_norm": "grad_norm", "lr": "lr"},
      eval_cols={"eval_acc": "eval_acc"}, derived=lambda r: {"samples": 384 * r["step"]}),
    208, 3000, "rb", "custom-csv samples-column grad-norm-post-clip stalled length-runaway",
    "Hand-written GRPO loop CSV with both `step` (optimizer steps) and `samples` (384 rollouts per step) columns; its "
    "grad_norm column is the norm after clip_grad_norm_(max_norm=1.0), so it reads 1.0 whenever the real norm is "
    "larger. The run learned to 0.53 train reward and eval_acc ~0.49 (N=500, every 100, sd {sd:.3f}) by 900. Then "
    "responses grow 700 -> 1980 tokens with 62% truncated, the grad_norm column sits pinned at 1.0 from ~1000 (the "
    "clipped value hides a 4-9x blow-up), entropy rises, and reward falls to 0.30, eval_acc to ~0.31 by 1200. The "
    "log stopped 4 hours ago (the job hung). Roll back, in step units, to {lo}-{hi}.", age_min=240,
    hours=1260 * 30 / 3600))

# F9: verl JSONL, 40 steps, 3 vals, easy set: score already 0.96, val flat: stop.
SPECS.append(Spec(
    "stop-verl-jsonl-40-steps-easy-set-score-0.96-from-step-1-val-0.95-at-0-20-40",
    Story(every(1, 40), reward=pw((0, .955), (40, .972)), P=64, G=8,
          evals={"val-core/openai/gsm8k/acc/mean@1": (const(.951), 1319)}, eval_steps=[0, 20, 40], onset=1,
          side={"entropy": Sig(pw((0, .21), (40, .19)), .04), "kl": Sig(pw((0, 0), (40, .001)), .1),
                "grad_norm": Sig(const(.03), mode="grad"), "clip": Sig(const(.0004), .3),
                "length": Sig(const(180), .03), "lr": Sig(const(1e-6), mode="exact")}),
    W(lambda run, folder, ctx: w_verl_jsonl(
        {**run, "rows": [{**r, "zero_adv": r["zero_std"]} for r in run["rows"]]}, folder, ctx,
        vocab={"reward": "critic/score/mean", "entropy": "actor/entropy", "kl": "actor/kl_loss",
               "grad_norm": "actor/grad_norm", "clip": "actor/pg_clipfrac", "length": "response_length/mean",
               "lr": "actor/lr"},
        val_key="val-core/openai/gsm8k/acc/mean@1", proj="gsm8k_grpo", exp="qwen25-7b-instruct-gsm8k")),
    209, 40, "stop", "short verl-jsonl three-evals saturated no-signal",
    "verl GRPO on GSM8K with an already strong instruct model: 40 steps logged, val at 0, 20 and 40 only. The train "
    "score is 0.955 at step 1 and 0.97 at 40 (64 prompts x 8: almost every group is all-correct, so advantages are "
    "zero, grad norm ~0.03, pg_clipfrac ~0), and val-core gsm8k acc/mean@1 (N=1319, sd 0.006) reads ~0.95 at all "
    "three points. The task is saturated from the start; the current weights are as good as any. Stop and move to "
    "harder data.", age_min=10, hours=40 * 50 / 3600))

# ----------------------------------------------------------------------------------------------- subtle (9)

# S1: W&B CSV, 24k steps, eval every 1000 slides slowly from 14k while train keeps creeping up.
SPECS.append(Spec(
    "rb-wandb-csv-trl-grpo-24k-steps-eval-every-1000-slides-from-14k-over-10k-steps-train-keeps-creeping",
    Story(every(10, 24000), reward=pw((0, .30), (6000, .55), (14000, .63), (24000, .67)), P=16, G=8, avg=10,
          evals={"eval_reward": (pw((0, .28), (6000, .50), (11000, .545), (14000, .555), (24000, .495)), 1000)},
          eval_steps=every(1000, 24000, 0), headline="eval_reward", onset=14000,
          side={"kl": Sig(pw((0, 0), (14000, .09), (24000, .21)), .04), "entropy": Sig(pw((0, .42), (14000, .24), (24000, .12)), .03),
                "length": Sig(pw((0, 600), (14000, 540), (24000, 470)), .03)}),
    W(w_wandb_csv, xkey="train/global_step", display="grpo-olmo2-7b-rlvr-long",
      panels={"reward": "train/reward", "kl": "train/kl", "entropy": "train/entropy",
              "length": "train/completions/mean_length"},
      eval_panels={"eval_reward": "eval/reward"}, bucket=2),
    3049, 40000, "rb", "long wandb-csv slow-decline overfit",
    "W&B panel exports (x-axis train/global_step, train panels bucketed 2 logs per point) of a 24k-step TRL GRPO "
    "run. The train reward never stops creeping up (0.55 at 6k, 0.63 at 14k, 0.67 at 24k), but the held-out "
    "eval/reward (N=1000, every 1000, sd {sd:.3f}) peaked at ~0.555 around 14k and has slid slowly ever since, to "
    "~0.495 at 24k: 0.06 over 10 evals, ~4 sd, with entropy 0.24 -> 0.12 and KL more than doubling. A slow, real "
    "decline over thousands of steps (overfitting the training set): roll back to {lo}-{hi}.", age_min=25,
    hours=24000 * 11 / 3600))

# S2: HF TB, cosine to zero, finished; eval peaked at 3400 and settled 4 sd lower as the LR went to zero.
SPECS.append(Spec(
    "rb-hf-tb-trl-grpo-warmup-cosine-to-zero-finished-6000-eval-peaked-3400-settled-4sd-lower-flat-tail",
    Story(every(10, 6000), reward=pw((0, .33), (3400, .60), (4800, .62), (6000, .625)), P=16, G=8, avg=10,
          evals={"eval_reward": (pw((0, .31), (2000, .50), (3400, .535), (4800, .47), (6000, .465)), 800)},
          eval_steps=every(200, 6000), headline="eval_reward", onset=3400,
          side={"lr": Sig(warm_cosine(2e-6, 150, 6000), mode="exact"),
                "length": Sig(pw((0, 650), (3400, 700), (4800, 430), (6000, 420)), .03),
                "entropy": Sig(pw((0, .46), (3400, .35), (4800, .22), (6000, .21)), .03),
                "grad_norm": Sig(const(.1), mode="grad"), "loss": Sig(const(0.0), .002, "zero"),
                "zero_std_x": Sig(const(0.0), mode="exact")}),
    W(w_tb, sub="runs/Aug02_11-40-07_gpu-node-3",
      train_map={"reward": "train/reward", "reward_std": "train/reward_std", "zero_std": "train/frac_reward_zero_std",
                 "lr": "train/learning_rate", "length": "train/completions/mean_length", "entropy": "train/entropy",
                 "grad_norm": "train/grad_norm", "loss": "train/loss"},
      eval_map={"eval_reward": "eval/reward"}, host="gpu-node-3", pid=18233,
      final_tags={"train/train_runtime": 6000 * 16.0, "train/train_samples_per_second": 1.0,
                  "train/train_steps_per_second": 0.0625, "train/total_flos": 0.0, "train/train_loss": 0.0008,
                  "train/epoch": 2.0}),
    3020, 6000, "rb", "hf-tb cosine-to-zero finished peak-mid-run",
    "TRL GRPO with HF TensorBoard logging, warmup 150 steps then cosine decay to exactly 0 at 6000; finished 5 hours "
    "ago (train/train_runtime written). eval/reward (N=800, every 200, sd {sd:.3f}) peaked at ~0.535 at 3400. From "
    "there the policy learns to skip its verification step (lengths 700 -> 430, entropy 0.35 -> 0.22): train reward "
    "still edges up 0.60 -> 0.625 while eval falls to ~0.47 by 4800 and, as the LR runs out, settles there (0.465 at "
    "6000, ~4 sd below the peak). The flat tail is a converged worse model, not the best one: roll back to {lo}-{hi}.",
    age_min=300, hours=6000 * 16 / 3600))

# S3: MLflow files from verl (@ -> _at_), 18k steps, val every 1500 eases 1.2 sd: stop or rollback.
SPECS.append(Spec(
    "sor-mlflow-files-verl-at-keys-18k-steps-val-every-1500-eases-1.2sd-over-last-4500-kl-creeps-live",
    Story(every(1, 18000), reward=pw((0, .55), (3000, .74), (8000, .81), (18000, .815)), P=64, G=8,
          evals={"val-core/openai/gsm8k/acc/mean@1": (pw((0, .55), (3000, .74), (7500, .79), (13500, .795), (18000, .7815)), 1319)},
          eval_steps=every(1500, 18000, 0), headline="val-core/openai/gsm8k/acc/mean@1", onset=13500,
          side={"kl": Sig(pw((0, 0), (8000, .03), (18000, .085)), .04), "entropy": Sig(pw((0, .5), (8000, .31), (18000, .26)), .03),
                "length": Sig(pw((0, 230), (18000, 260)), .03)}),
    W(w_mlflow_files, vocab={"reward": "critic/score/mean", "kl": "actor/kl_loss", "entropy": "actor/entropy",
                             "length": "response_length/mean"},
      eval_vocab={"val-core/openai/gsm8k/acc/mean@1": "val-core/openai/gsm8k/acc/mean_at_1"},
      run_name="qwen25-3b-gsm8k-long", params={"trainer.total_training_steps": 30000, "trainer.test_freq": 1500,
                                               "algorithm.adv_estimator": "grpo"}),
    3045, 30000, "sor", "long mlflow-files verl-at-keys drift ambiguous live",
    "verl GRPO logged to an MLflow file store (val-core key rewritten with _at_), 18,000 steps every step, val every "
    "1500 (N=1319, sd {sd:.3f}). Train score flat at ~0.81 since 8000 while KL keeps creeping 0.03 -> 0.085. The val "
    "plateaued ~0.79-0.795 from 7500 to 13500 and has eased to ~0.78 over the last three evals: 0.014, about 1.2 sd, "
    "not separable from noise. Nothing more is being gained, so stopping is right; going back to the plateau "
    "({lo}-{hi}) is as good.", age_min=7, hours=18000 * 8 / 3600))

# S4: TRL console, three reward functions; xml_count and format lift the total; correctness and eval flat: stop.
SPECS.append(Spec(
    "stop-trl018-console-three-reward-fns-xml-count-and-format-lift-total-correctness-and-eval-flat-since-400-live",
    Story(every(5, 1100), P=16, G=8, avg=5,
          comps={"correctness_reward": (pw((0, .18), (400, .33), (1100, .335)), "bin", 2.0),
                 "strict_format_reward": (pw((0, .05), (250, .92), (1100, .97)), "bin", 0.5),
                 "xmlcount_reward": (pw((0, .20), (400, .38), (1100, .49)), "frac", 0.5)},
          hl=lambda s: (2 * pw((0, .18), (400, .33), (1100, .335))(s) + .5 * pw((0, .05), (250, .92), (1100, .97))(s)
                        + .5 * pw((0, .20), (400, .38), (1100, .49))(s)),
          evals={"eval_rewards/correctness_reward/mean": (pw((0, .34), (400, .62), (1100, .624)), 500, "x2")},
          eval_steps=every(100, 1100), onset=400,
          side={"kl": Sig(pw((0, 0), (400, .12), (1100, .31)), .05), "length": Sig(pw((0, 260), (400, 180), (1100, 150)), .03),
                "grad_norm": Sig(const(.8), mode="grad"), "lr": Sig(const(5e-6), mode="exact"),
                "loss": Sig(pw((0, 0), (1100, .012)), .002, "zero")}),
    W(w_trl_console, vocab={"loss": "loss", "grad_norm": "grad_norm", "lr": "learning_rate",
                            "length": "completions/mean_length", "reward": "reward", "reward_std": "reward_std",
                            "zero_std": "frac_reward_zero_std", "kl": "kl"},
      steps_per_epoch=467, preamble=["INFO 05-22 10:31:04 [__init__.py:239] Automatically detected platform cuda."],
      eval_extra=lambda s: {"eval_loss": 0.0003}),
    304, 2000, "stop", "trl-console summed-reward-fns hacking-cosmetic plateau live",
    "TRL 0.18 GRPO console log (logging_steps 5, max_steps 2000, beta 0.04) with three reward functions summed into "
    "`reward`: correctness (2.0 for a right answer), strict format (0.5) and xmlcount (partial credit up to 0.5 for "
    "the tags). The summed reward keeps rising, ~1.31 at 400 -> ~1.40 at 1100, but all of that is the format and "
    "xmlcount terms saturating; rewards/correctness_reward/mean has been flat at ~0.66 (of 2) since 400 "
    "and eval_rewards/correctness_reward/mean (scaled 0-2, N=500) is flat at ~0.62 for 700 steps while KL climbs "
    "0.12 -> 0.31. The current weights are as good as any and more steps only polish formatting: stop.",
    age_min=2, hours=1100 * 14 / 3600))

# S5: custom JSONL, KL logged as beta*KL with beta annealed to 0: the penalty vanishes, the drift grows, eval falls.
_s5_beta = pw((0, .05), (1500, 0.0))
_s5_kl = pw((0, 0), (1200, .08), (1500, .14), (1800, .30), (2400, .92))
SPECS.append(Spec(
    "rb-custom-jsonl-kl-logged-as-beta-times-kl-beta-annealed-to-0-at-1500-penalty-vanishes-drift-grows-eval-falls",
    Story(every(1, 2400), reward=pw((0, .45), (1500, .58), (2400, .62)), P=32, G=8,
          evals={"acc": (pw((0, .30), (1000, .46), (1500, .48), (2400, .41)), 500)}, eval_steps=every(100, 2400),
          headline="acc", onset=1500,
          side={"beta": Sig(_s5_beta, mode="exact"), "klraw": Sig(_s5_kl, .04),
                "entropy": Sig(pw((0, .50), (1500, .41), (2400, .15)), .03),
                "length": Sig(pw((0, 420), (1500, 450), (2400, 260)), .03), "grad_norm": Sig(const(.3), mode="grad")}),
    W(w_jsonl, name="train_metrics.jsonl",
      keys={"reward": "reward", "kl_penalty": "klpen", "beta": "beta", "entropy": "entropy", "resp_len": "length",
            "grad_norm": "grad_norm"},
      eval_keys={"acc": "eval/accuracy"}, derived=lambda r: {"klpen": r["beta"] * r["klraw"]},
      config={"total_steps": 4000, "kl_beta_schedule": "linear 0.05 -> 0.0 over 1500 steps", "lr": 1e-6}),
    305, 4000, "rb", "custom-jsonl kl-penalty-weighted misread eval-decline live",
    "Hand-written GRPO loop that logs only kl_penalty = beta x KL, with beta annealed linearly from 0.05 to 0 over "
    "1500 steps. The logged penalty never exceeds ~0.0013 and is exactly 0 from 1500, which looks like 'no KL'; in "
    "fact the policy starts drifting once the brake is off: entropy 0.41 -> 0.15, responses shrink 450 -> 260 "
    "tokens, and while the train reward keeps rising 0.58 -> 0.62, eval/accuracy (N=500, every 100, sd {sd:.3f}) "
    "goes from ~0.48 at 1500 to ~0.41 at 2400 (3 sd). Roll back to {lo}-{hi}.", age_min=4, hours=2400 * 20 / 3600))

# S6: Trackio, TRL 1.x GRPO converged at 1880 of 2000, cosine LR at the floor, eval flat since 1150.
SPECS.append(Spec(
    "conv-trackio-trl1x-grpo-1880-of-2000-cosine-lr-near-0-eval-flat-0.565-since-1150",
    Story(every(10, 1880), reward=pw((0, .35), (900, .60), (1150, .625), (1880, .63)), P=16, G=8, avg=10,
          evals={"eval/reward": (pw((0, .33), (900, .55), (1150, .565), (1880, .567)), 500)}, eval_steps=every(100, 1880),
          side={"lr": Sig(warm_cosine(2e-6, 50, 2000), mode="exact"), "grad_norm": Sig(const(.1), mode="grad"),
                "entropy": Sig(pw((0, .45), (1150, .33), (1880, .32)), .03), "length": Sig(pw((0, 480), (1880, 560)), .03),
                "loss": Sig(const(0.0), .001, "zero")}),
    W(w_trackio, vocab={"reward": "train/reward", "reward_std": "train/reward_std", "zero_std": "train/frac_reward_zero_std",
                        "lr": "train/learning_rate", "grad_norm": "train/grad_norm", "entropy": "train/entropy",
                        "length": "train/completions/mean_length", "loss": "train/loss"},
      eval_vocab={}, project="grpo-knights-knaves", run_name="smollm3-3b-kk-cosine",
      config={"max_steps": 2000, "learning_rate": 2e-6, "lr_scheduler_type": "cosine", "warmup_steps": 50,
              "num_generations": 8, "logging_steps": 10, "eval_steps": 100, "steps_per_epoch": 1000}),
    306, 2000, "conv", "trackio trl1x cosine-tail converged live",
    "TRL 1.x GRPO in Trackio, max_steps 2000 with cosine decay; at 1880 the LR is ~1e-8. Train reward flat at "
    "~0.63 since ~1150 and eval/reward (N=500, every 100) flat at ~0.565 over the same 700 steps. Converged a "
    "few steps before its planned end: stopping now or letting it finish are both fine.", age_min=3,
    hours=1880 * 18 / 3600))

# S7: NeMo TB, curriculum stage 2 at 3000: validation dips with the switch and keeps falling.
SPECS.append(Spec(
    "rb-nemo-tb-curriculum-stage2-at-3000-train-drops-by-design-validation-keeps-falling-3.5sd-below-stage1-end",
    Story(every(1, 3800),
          reward=lambda s: pw((0, .30), (3000, .71))(s) if s <= 3000 else pw((3000, .28), (3800, .34))(s), P=32, G=16,
          evals={"validation/accuracy": (pw((0, .25), (2000, .49), (3000, .52), (3250, .49), (3800, .44)), 500)},
          eval_steps=every(250, 3800, 0), headline="validation/accuracy", onset=3000,
          side={"kl": Sig(pw((0, 0), (3000, .02), (3800, .09)), .05), "entropy": Sig(pw((0, .55), (3000, .42), (3800, .30)), .03),
                "length": Sig(lambda s: pw((0, 900), (3000, 1100))(s) if s <= 3000 else pw((3000, 2600), (3800, 3900))(s), .03),
                "trunc": Sig(lambda s: .01 if s <= 3000 else pw((3000, .06), (3800, .21))(s), .08),
                "lr": Sig(const(1e-6), mode="exact")}),
    W(w_tb, sub="logs/exp_002/tensorboard",
      train_map={"reward": "train/reward", "kl": "train/kl_penalty", "entropy": "train/approx_entropy",
                 "length": "train/mean_gen_tokens_per_sample", "trunc": "train/truncation_rate", "lr": "train/lr"},
      eval_map={}, host="dgx-b02", pid=61122),
    307, 6000, "rb", "multistage nemo-tb curriculum-failure",
    "NeMo-RL GRPO with a two-stage curriculum; stage 2 (long multi-step problems) starts at 3000. The train reward "
    "drop at the switch (0.71 -> 0.28) is by design and it recovers a little (0.34 by 3800). Unlike a healthy switch, "
    "the held-out validation/accuracy (N=500, every 250, sd {sd:.3f}) does not come back: 0.52 at 3000, ~0.49 at "
    "3250, ~0.46 at 3500, ~0.44 at 3750, while generations grow to 3900 tokens with 21% truncated and entropy "
    "falls. Three evals in a row below and still falling, 3.5 sd under the end of stage 1: stage 2 is hurting. Roll "
    "back to {lo}-{hi}.", age_min=6, hours=3800 * 28 / 3600))

# S9: OpenRLHF TB, KL climbs while reward and eval are flat since 1200: stop.
SPECS.append(Spec(
    "stop-openrlhf-tb-reinforcepp-kl-climbs-0.05-to-0.31-reward-and-gsm8k-flat-since-1200-live",
    Story(every(1, 2200), reward=pw((0, .48), (900, .72), (1200, .74), (2200, .742)), P=64, G=4,
          evals={"pass1": (pw((0, .55), (900, .76), (1200, .78), (2200, .781)), 1319)}, eval_steps=every(100, 2200),
          onset=1200,
          side={"kl": Sig(pw((0, 0), (1200, .05), (2200, .31)), .04), "length": Sig(pw((0, 260), (2200, 300)), .03),
                "grad_norm": Sig(const(.15), mode="grad"), "lr": Sig(const(1e-6), mode="exact"),
                "policy_loss": Sig(const(0.0), .01, "add"), "clip": Sig(pw((0, .003), (2200, .006)), .1)}),
    W(w_tb, sub="tensorboard/reinforcepp-llama32-3b-gsm8k",
      train_map={"reward": "train/reward", "kl": "train/kl", "length": "train/response_length",
                 "grad_norm": "train/actor_grad_norm", "lr": "train/actor_lr", "policy_loss": "train/policy_loss",
                 "clip": "train/ppo_clip_ratio"},
      eval_map={"pass1": "eval/eval_gsm8k_pass1"}, host="node-17", pid=40022),
    308, 4000, "stop", "openrlhf-tb drift-without-decline plateau live",
    "OpenRLHF REINFORCE++ on GSM8K. Train reward rose 0.48 -> 0.74 by 1200 and has been flat since; "
    "eval_gsm8k_pass1 (N=1319, every 100, sd 0.011) flat at ~0.78 for 1000 steps. Meanwhile train/kl climbs "
    "steadily 0.05 -> 0.31: the policy keeps moving away from the reference with nothing to show for it. No decline "
    "yet, so the current weights are as good as any, but more steps only buy drift: stop.", age_min=4,
    hours=2200 * 20 / 3600))

# S10: TRL DPO checkpoints every 50 (limit 2), at 1850 of 2000, eval accuracy flat since 1100, linear LR tail.
SPECS.append(Spec(
    "conv-trl-dpo-ckpts-every-50-limit-2-at-1850-of-2000-eval-acc-flat-0.78-since-1100-linear-lr-tail",
    Story(every(10, 1850), reward=None,
          evals={"eval_rewards/accuracies": (pw((0, .5), (600, .74), (1100, .78), (1850, .781)), 1000)},
          eval_steps=every(100, 1850), headline="eval_rewards/accuracies",
          side={"acc": Sig(pw((0, .5), (600, .76), (1100, .81), (1850, .83)), 640, "frac"),
                "margin": Sig(pw((0, .02), (1100, .9), (1850, 1.05)), .05),
                "chosen": Sig(pw((0, 0), (1850, -.6)), .1, "add"), "loss": Sig(pw((0, .693), (1100, .48), (1850, .46)), .04),
                "entropy": Sig(pw((0, 1.1), (1850, 1.0)), .02), "grad_norm": Sig(const(8.0), mode="grad"),
                "lr": Sig(linear_decay(5e-7, 100, 2000), mode="exact")}),
    W(w_trl_ckpts, vocab={"loss": "loss", "grad_norm": "grad_norm", "lr": "learning_rate", "acc": "rewards/accuracies",
                          "margin": "rewards/margins", "chosen": "rewards/chosen", "entropy": "entropy"},
      save_every=50, keep=2, logging_steps=10, eval_steps=100, steps_per_epoch=2000,
      extra_rows=lambda r: {"rewards/rejected": g6(r["chosen"] - r["margin"]), "mean_token_accuracy": 0.612},
      eval_extra=lambda s: {"eval_loss": round(pw((0, .693), (1100, .51), (1850, .509))(s), 4), "eval_runtime": 80.1,
                            "eval_samples_per_second": 12.48, "eval_steps_per_second": 0.39}),
    310, 2000, "conv", "trl-state dpo converged linear-lr-tail live",
    "TRL 1.x DPO (entropy and mean_token_accuracy logged), checkpoints every 50 with save_total_limit 2 "
    "(checkpoint-1800 and checkpoint-1850, the newest 8 minutes ago), max_steps 2000, linear LR decay now at "
    "~4e-8. eval_rewards/accuracies (1000 pairs, every 100) rose 0.50 -> 0.74 by 600 -> 0.78 by 1100 and has been "
    "flat since; eval_loss flat at 0.51. Converged 150 steps before its planned end: stopping or finishing are both "
    "fine.", age_min=8, hours=1850 * 11 / 3600))


# --------------------------------------------------------------------------------------------------- plumbing

def _fix_onsets() -> None:
    for sp in SPECS:
        assert sp.label in ("healthy", "conv") or sp.story.onset is not None, sp.name


_fix_onsets()
CASES = [sp.case() for sp in SPECS]
BY_NAME = {sp.name: sp for sp in SPECS}


def write_run(case: Case, folder: Path) -> None:
    sp = BY_NAME[case.name]
    run = sp.story.draw(np.random.default_rng(case.seed))
    folder.mkdir(parents=True, exist_ok=True)
    xs = [r["step"] for r in run["rows"]]
    ctx = dict(end=NOW - sp.age_min * 60, dur=sp.hours * 3600, first=xs[0], last=xs[-1], planned=sp.planned)
    case.write(run, folder, ctx)


def check(cases: list[Case]) -> None:
    for c in cases:
        sp = BY_NAME[c.name]
        st = sp.story
        lv, steps = st.hl_level(), st.hl_steps()
        best_s = max(steps, key=lv)
        sd = st.hl_sd(lv(best_s))
        print(f"{c.name}: {c.labels.get('preferred')} accept={c.labels.get('accept')} "
              f"window={c.labels.get('rollback_window')} onset={c.labels.get('onset_step')} age={sp.age_min}min")
        print(f"    headline {st.headline}: best {lv(best_s):.3f}@{best_s} last {lv(steps[-1]):.3f}@{steps[-1]} "
              f"sd {sd:.4f} ({(lv(best_s) - lv(steps[-1])) / sd:.1f} sd below best) points={len(steps)}")
        run = st.draw(np.random.default_rng(c.seed))
        if st.headline == "train":
            ser = [(r["step"], r["reward"]) for r in run["rows"]]
        else:
            ser = [(s, e[st.headline]) for s, e in run["evals"]]
        stride = max(1, len(ser) // 12)
        print("    drawn " + " ".join(f"{s}:{v:.3f}" for s, v in ser[::stride]) + f" | last {ser[-1][0]}:{ser[-1][1]:.3f}")
        if st.evals and st.headline == "train":
            k = next(iter(st.evals))
            ev = run["evals"]
            print(f"    eval {k}: " + " ".join(f"{s}:{e[k]:.3f}" for s, e in ev[:: max(1, len(ev) // 12)])
                  + f" | last {ev[-1][0]}:{ev[-1][1][k]:.3f}")


HEADER = """# Holdout set 33: hand-built runs of unusual scale and shape, written by make_holdout33.py, independent of the
# assessor, its judges and the other holdout generators. Labels: what a careful practitioner should do under
# DESIGN.md's decision contract, read from the noise-free levels of each story. rollback_window is inclusive: from
# the first logged headline step whose level is within one sampling sd of the best level to the newest such step not
# after onset_step, in the run's own logged x units (train/episode for the W&B PPO export).
# Run `.venv/bin/python evals/holdout33/make_holdout33.py` to write runs/ (gitignored); `--check` prints levels.
"""


def main() -> None:
    holdout_kit.main(HERE, "make_holdout33.py", "holdout33.yaml", "h33-", "holdout33", HEADER, CASES, write_run, check)


if __name__ == "__main__":
    main()
