"""Holdout set 36: blind-labelled RL post-training runs checked early and mid-run, independent of the assessor.

Run from the worktree root:
    .venv/bin/python evals/holdout36/make_holdout36.py           # writes runs/ (gitignored) and holdout36.yaml
    .venv/bin/python evals/holdout36/make_holdout36.py --check   # also prints levels and rollback windows

What this set is about: the moment a scheduled check sees a live run, mostly at 8-45 % of its planned steps.
Slow starters, warm-ups still ramping, side signals moving fast in the first hundred steps, a first plateau of a
staircase, schedule changes made on plan; against failures that have only just begun (the first 20-60 steps of an
entropy blow-up, a length runaway starting, a KL jump two checkpoints ago, a reward that has fallen for five logged
points, an eval that dropped at its latest one or two evaluations) and runs that cannot learn at all.
Three runs are checked twice (a slow starter at 12 % and 30 %, a climb at 20 % that has slid by 45 %, an entropy
blow-up 20 and 60 steps in); a later check extends the earlier one's draws, and each is labelled by what to do then.

Each case is a noise-free story (piecewise-linear levels per optimizer step) drawn through this set's noise model:
  * binary reward functions: every prompt of a batch of P gets a solve rate q = sigmoid(mu + s*z), z ~ N(0, 1),
    with mu chosen so that E[q] is the level (s, the spread of prompt difficulty, is 1.3 unless said otherwise);
    its G rollouts are Bernoulli(q). Batch mean, batch std, per-group std and the share of groups whose rollouts all
    agree come from the same draws. Several reward functions are drawn independently and summed with weights;
  * probability-valued reward-model scores: sigmoid(mu + s1*z_prompt + s2*z_sample), calibrated the same way;
  * constant rewards (a reward that cannot vary) are written exactly; a reward function that returns None is NaN;
  * trainers that log every n steps (TRL/HF) log the mean of the n batches; the others log one batch;
  * held-out evals: Binomial(N, p)/N on N samples (N = problems x samples per problem for mean@k);
  * grad norm: level * exp(0.22 z), and on about one logged point in 25 times (1 + Pareto(1.5)) (heavy right tail);
  * other side signals: multiplicative log-normal noise with AR(1)-correlated innovations (rho 0.6, sd ~4 %),
    additive noise for signed ones; learning rates exactly as scheduled.

Labels follow DESIGN.md ("What the three decisions mean") and come from each story's noise-free levels, never from a
tool. The rollback window runs from the first logged headline step whose level is within one sampling sd of the
best level (the sd of one eval for an eval headline, of one logged batch mean for a train headline) to the newest such
step not after onset_step. The windows written in the table are checked against the levels when the set is built.
"""

from __future__ import annotations

import csv
import json
import math
import os
import re
import sqlite3
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import holdout_kit
from holdout_kit import HEALTHY, Case, dump_json, rollback, stop, stop_or_rollback, tb_file, trainer_state

HERE = Path(__file__).resolve().parent
NOW = time.time()
Level = Callable[[float], float]
TRAIN = "@train"


def knots(*pts: tuple[float, float]) -> Level:
    xs, ys = zip(*pts, strict=True)
    return lambda s: float(np.interp(s, xs, ys))


def const(v: float) -> Level:
    return lambda s: v


def warm_linear(peak: float, warm: int, total: int) -> Level:
    """transformers' linear schedule with warm-up: 0 -> peak over `warm`, then down to 0 at `total` (and 0 after)."""
    return lambda s: peak * s / warm if s < warm else peak * max(0.0, (total - s) / max(1, total - warm))


def warm_cosine(peak: float, warm: int, total: int, floor: float = 0.0) -> Level:
    def f(s: float) -> float:
        if s < warm:
            return peak * s / warm
        t = min(1.0, (s - warm) / max(1, total - warm))
        return floor + (peak - floor) * 0.5 * (1 + math.cos(math.pi * t))
    return f


# ------------------------------------------------------------------------------------------------ the noise model

_GH_X, _GH_W = np.polynomial.hermite_e.hermegauss(48)
_GH_W = _GH_W / _GH_W.sum()
_MU_CACHE: dict[tuple[float, float], float] = {}


def _sig(x):
    return 1.0 / (1.0 + np.exp(-x))


def calib_mu(p: float, s: float) -> float:
    """mu such that E[sigmoid(mu + s z)] = p (bisection on Gauss-Hermite nodes)."""
    key = (round(p, 5), s)
    if key not in _MU_CACHE:
        p = min(max(p, 1e-5), 1 - 1e-5)
        lo, hi = -20.0, 20.0
        for _ in range(60):
            mid = (lo + hi) / 2
            if float((_sig(mid + s * _GH_X) * _GH_W).sum()) < p:
                lo = mid
            else:
                hi = mid
        _MU_CACHE[key] = (lo + hi) / 2
    return _MU_CACHE[key]


def q_moments(p: float, s: float) -> tuple[float, float]:
    """(Var(q), E[q(1-q)]) of the prompt solve rate q at level p."""
    q = _sig(calib_mu(p, s) + s * _GH_X)
    m1, m2 = float((q * _GH_W).sum()), float((q * q * _GH_W).sum())
    return m2 - m1 * m1, m1 - m2


@dataclass
class Part:
    """One reward function: `bin` (0/1), `prob` (reward-model probability), `const` (cannot vary), `none` (returns
    None: NaN)."""

    name: str
    level: Level
    kind: str = "bin"
    weight: float = 1.0
    spread: float | Level = 1.3  # logit sd of prompt difficulty (a level when the policy polarises)
    sample_sd: float = 0.8  # prob kind: per-sample logit noise on top of the per-prompt spread

    def sp(self, s: float) -> float:
        return float(self.spread(s)) if callable(self.spread) else self.spread


@dataclass
class Eval:
    level: Level
    n: int
    kind: str = "binom"  # binom | mean (mean of n scores with sd `sd`) | nan (a metric logged as NaN / null)
    sd: float = 0.1
    exact_at: tuple[int, ...] = ()  # steps where the value is exactly the level (e.g. DPO at step 0)


@dataclass
class Story:
    parts: list[Part]
    evals: dict[str, Eval] = field(default_factory=dict)  # framework key -> eval
    eval_steps: list[int] = field(default_factory=list)
    headline: str = TRAIN
    P: int = 32
    G: int = 8
    log_every: int = 1
    side: dict[str, tuple] = field(default_factory=dict)  # key -> Level, or (Level, sd, mode) mode mul|add|exact|binom
    sec_per_step: float = 40.0
    age_min: float = 4.0  # minutes since the newest write

    # ---- draws
    def _batch(self, rng: np.random.Generator, s: int) -> dict:
        P, G = self.P, self.G
        total = np.zeros((P, G))
        out: dict[str, float] = {}
        varies = False
        for part in self.parts:
            p = part.level(s)
            if part.kind == "const":
                x = np.full((P, G), p)
            elif part.kind == "none":
                x = np.full((P, G), np.nan)
            elif part.kind == "prob":
                tot = math.hypot(part.sp(s), part.sample_sd)
                mu = calib_mu(p, tot)
                x = _sig(mu + part.sp(s) * rng.normal(size=(P, 1)) + part.sample_sd * rng.normal(size=(P, G)))
                varies = True
            else:
                q = _sig(calib_mu(p, part.sp(s)) + part.sp(s) * rng.normal(size=P))
                x = rng.binomial(1, np.repeat(q, G)).reshape(P, G).astype(float)
                varies = True
            if np.isnan(x).all():
                out[f"part/{part.name}/mean"] = math.nan
                out[f"part/{part.name}/std"] = math.nan
            else:
                out[f"part/{part.name}/mean"] = float(x.mean())
                out[f"part/{part.name}/std"] = float(x.std(ddof=1))
                total = total + part.weight * x
        gstd = total.std(axis=1)
        same = gstd < 1e-9
        top = sum(p.weight for p in self.parts if p.kind == "bin")
        out.update(reward=float(total.mean()), reward_std=float(total.std(ddof=1)) if varies else 0.0,
                   zero_std=float(same.mean()), group_std=float(gstd.mean()),
                   pct0=float(100 * (same & (total[:, 0] <= 1e-9)).mean()) if varies else 0.0,
                   pct1=float(100 * (same & (total[:, 0] >= top - 1e-9)).mean()) if varies else 0.0,
                   rmax=float(total.max()), rmin=float(total.min()))
        out["pct_mixed"] = 100.0 - out["pct0"] - out["pct1"] if varies else 0.0
        return out

    def draws(self, rng: np.random.Generator, reached: int) -> dict:
        """Train and eval draws come from separate streams, so a run checked later extends the earlier check."""
        rng, erng = rng.spawn(2)
        train = []
        ar: dict[str, float] = {}
        for s in range(self.log_every, reached + 1, self.log_every):
            v: dict[str, float] = {}
            if self.parts:
                bs = [self._batch(rng, s - j) for j in range(self.log_every)]
                for k in bs[0]:
                    vals = [b[k] for b in bs]
                    v[k] = math.nan if all(math.isnan(x) for x in vals) else float(np.nanmean(vals))
                v["rmax"] = max(b["rmax"] for b in bs)
                v["rmin"] = min(b["rmin"] for b in bs)
            for k, spec in self.side.items():
                lvl, sd, mode = spec if isinstance(spec, tuple) else (spec, None, None)
                mode = mode or ("gnorm" if k == "gnorm" else "exact" if k == "lr" else "mul")
                x = lvl(s)
                if mode == "exact":
                    v[k] = x
                elif mode == "gnorm":
                    g = x * math.exp((sd or 0.22) * rng.normal())
                    if rng.random() < 1 / 25:
                        g *= 1 + rng.pareto(1.5)
                    v[k] = g
                elif mode == "binom":
                    v[k] = rng.binomial(int(sd), min(max(x, 0.0), 1.0)) / int(sd)
                else:
                    e = 0.6 * ar.get(k, rng.normal()) + 0.8 * rng.normal()
                    ar[k] = e
                    v[k] = x * math.exp((sd or 0.04) * e) if mode == "mul" else x + (sd or 0.01) * e
            train.append((s, v))
        ev = []
        for s in [s for s in self.eval_steps if s <= reached]:
            row = {}
            for k, e in self.evals.items():
                p = e.level(s)
                if e.kind == "nan":
                    row[k] = math.nan
                elif s in e.exact_at:
                    row[k] = p
                elif e.kind == "binom":
                    row[k] = erng.binomial(e.n, min(max(p, 0.0), 1.0)) / e.n
                else:
                    row[k] = float(erng.normal(p, e.sd / math.sqrt(e.n)))
            ev.append((s, row))
        return dict(train=train, eval=ev)

    # ---- the headline and its sampling sd
    def headline_level(self) -> Level:
        if self.headline == TRAIN:
            return lambda s: sum(p.weight * p.level(s) for p in self.parts if p.kind not in ("none",))
        return self.evals[self.headline].level

    def headline_steps(self, reached: int) -> list[int]:
        if self.headline == TRAIN:
            return list(range(self.log_every, reached + 1, self.log_every))
        return [s for s in self.eval_steps if s <= reached]

    def headline_sd(self, s: int) -> float:
        if self.headline != TRAIN:
            e = self.evals[self.headline]
            p = e.level(s)
            return math.sqrt(p * (1 - p) / e.n) if e.kind == "binom" else e.sd / math.sqrt(e.n)
        var = 0.0
        for part in self.parts:
            if part.kind != "bin":
                continue
            vq, eqq = q_moments(part.level(s), part.sp(s))
            var += part.weight ** 2 * (vq / self.P + eqq / (self.P * self.G))
        return math.sqrt(var / self.log_every)


def window(story: Story, reached: int, onset: int) -> tuple[int, int]:
    lv, steps = story.headline_level(), story.headline_steps(reached)
    best_s = max(steps, key=lv)
    best = lv(best_s)
    sd = story.headline_sd(best_s)
    good = [s for s in steps if lv(s) >= best - sd - 1e-12]
    return good[0], max(s for s in good if s <= onset)


# ------------------------------------------------------------------------------------------------------ the writers

CANON = {"reward", "reward_std", "zero_std", "group_std", "pct0", "pct1", "pct_mixed", "rmax", "rmin", "kl",
         "entropy", "len", "len_min", "len_max", "term_len", "trunc", "gnorm", "lr", "clip", "clip_low", "clip_high",
         "step_time", "loss", "ppo_kl", "pg_loss", "mismatch"}

TRL = {"reward": "reward", "reward_std": "reward_std", "zero_std": "frac_reward_zero_std", "kl": "kl",
       "entropy": "entropy", "len": "completions/mean_length", "len_min": "completions/min_length",
       "len_max": "completions/max_length", "term_len": "completions/mean_terminated_length",
       "trunc": "completions/clipped_ratio", "gnorm": "grad_norm", "lr": "learning_rate",
       "clip": "clip_ratio/region_mean", "clip_low": "clip_ratio/low_mean", "clip_high": "clip_ratio/high_mean",
       "step_time": "step_time", "loss": "loss"}
VERL = {"reward": "critic/score/mean", "rmax": "critic/score/max", "rmin": "critic/score/min",
        "entropy": "actor/entropy", "kl": "actor/kl_loss", "len": "response_length/mean",
        "len_max": "response_length/max", "len_min": "response_length/min", "trunc": "response_length/clip_ratio",
        "gnorm": "actor/grad_norm", "lr": "actor/lr", "clip": "actor/pg_clipfrac", "ppo_kl": "actor/ppo_kl",
        "pg_loss": "actor/pg_loss"}
OPENRLHF = {"reward": "reward", "group_std": "group_reward_std", "kl": "kl", "len": "response_length",
            "trunc": "truncated", "gnorm": "actor_grad_norm", "lr": "actor_lr", "clip": "ppo_clip_ratio",
            "ppo_kl": "ppo_kl", "pg_loss": "policy_loss"}
NEMO = {"reward": "train/reward", "kl": "train/kl_penalty", "entropy": "train/approx_entropy",
        "len": "train/mean_gen_tokens_per_sample", "trunc": "train/truncation_rate", "gnorm": "train/grad_norm",
        "lr": "train/lr", "pct0": "train/baseline_reward/pct_0", "pct1": "train/baseline_reward/pct_1",
        "pct_mixed": "train/baseline_reward/pct_mixed", "pg_loss": "train/loss", "mismatch": "train/token_mult_prob_error"}


def named(v: dict, vocab: dict, part_fmt: str | None = "rewards/{}/{}") -> dict:
    """Canonical draws -> framework keys; reward parts as `part_fmt`; any other key passes through unchanged."""
    out = {}
    for k, x in v.items():
        if k.startswith("part/"):
            if part_fmt:
                _, fn, stat = k.split("/")
                out[part_fmt.format(fn, stat)] = x
        elif k in CANON:
            if k in vocab:
                out[vocab[k]] = x
        else:
            out[k] = x
    return out


def r6(x: float) -> float | None:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return None
    return float(f"{x:.6g}")


def clock(run: dict, s: float) -> float:
    return run["t0"] + s * run["story"].sec_per_step


def stamp(folder: Path, run: dict) -> None:
    """mtimes: files of a checkpoint folder when that step was saved; everything else at the newest write."""
    last = clock(run, run["reached"])
    pat = re.compile(r"^(?:checkpoint-|global_step_?)(\d+)$")
    for p in sorted(folder.rglob("*"), key=lambda p: -len(p.parts)):
        t = last
        for part in p.relative_to(folder).parts:
            m = pat.match(part)
            if m:
                t = clock(run, int(m.group(1))) + 40
        if p.name == "latest_checkpointed_iteration.txt":
            t = clock(run, int(p.read_text())) + 45
        elif p.name in ("config.yaml", "run_config.json") or p.parent.name in ("params", "tags"):
            t = clock(run, 0) - 90
        os.utime(p, (t, t))
    os.utime(folder, (last, last))


def _hf_rows(run: dict, vocab: dict, logging_steps: int, spe: float, eval_alias: dict | None = None,
             prompt_tokens: float = 164.0) -> list[dict]:
    rows: list[dict] = []
    lrng = np.random.default_rng(run["seed"] + 1)
    seen = 0.0
    for s, v in run["train"]:
        row = {k: r6(x) for k, x in named(v, vocab).items()}
        if "loss" not in row and "reward" in row:
            row["loss"] = round(float(lrng.normal(0.0, 0.012)), 4)
        if row.get("loss") is not None:
            row["loss"] = round(row["loss"], 4)
        first = {k: row.pop(k) for k in ("loss", "grad_norm", "learning_rate") if k in row}
        row = {**first, **row}
        if "reward" in row and "len" in v:  # TRL GRPO/RLOO: cumulative prompt + completion tokens
            st = run["story"]
            seen += logging_steps * st.P * st.G * (prompt_tokens + v["len"])
            row["num_tokens"] = float(int(seen))
        row.update(epoch=round(s / spe, 4), step=s)
        rows.append(row)
    for s, v in run["eval"]:
        row = {k: r6(x) for k, x in v.items()}
        for src, dst in (eval_alias or {}).items():
            row[dst] = row.get(src)
        row.update(eval_runtime=round(150 + 11 * math.sin(s), 3), eval_samples_per_second=round(3.3 + .1 * math.cos(s), 3),
                   eval_steps_per_second=0.103, epoch=round(s / spe, 4), step=s)
        rows.append(row)
    rows.sort(key=lambda r: (r["step"], "eval_runtime" in r))
    return rows


def w_trl_ckpts(run: dict, folder: Path, vocab: dict = TRL, save_every: int = 100, keep: int | None = None,
                logging_steps: int = 10, spe: float = 0, eval_alias: dict | None = None, tb: bool = False,
                prompt_tokens: float = 164.0, host: str = "gpu-node-07", eval_steps: int | None = None) -> None:
    """TRL/HF output_dir: checkpoint-N/ with trainer_state.json (history up to N); optionally HF TensorBoard."""
    planned, reached = run["planned"], run["reached"]
    spe = spe or planned
    rows = _hf_rows(run, vocab, logging_steps, spe, eval_alias, prompt_tokens)
    kept: list[int] = []
    for n in range(save_every, reached + 1, save_every):
        st = trainer_state([r for r in rows if r["step"] <= n], n, planned, logging_steps, save_every,
                           eval_steps, round(n / spe, 4))
        ck = folder / f"checkpoint-{n}"
        dump_json(ck / "trainer_state.json", st)
        (ck / "config.json").write_text('{"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", '
                                        '"torch_dtype": "bfloat16"}\n')
        (ck / "generation_config.json").write_text('{"do_sample": true, "eos_token_id": 151645}\n')
        (ck / "scheduler.pt").write_bytes(b"\x80\x04N.")
        kept.append(n)
        while keep and len(kept) > keep:
            old = folder / f"checkpoint-{kept.pop(0)}"
            for p in sorted(old.rglob("*"), reverse=True):
                p.unlink()
            old.rmdir()
    if tb:
        w_hf_tb(run, folder, vocab, logging_steps, spe, eval_alias, host)


def w_hf_tb(run: dict, folder: Path, vocab: dict, logging_steps: int, spe: float, eval_alias: dict | None,
            host: str) -> None:
    """The HF TensorBoard callback: rewrite_logs turns `x` into `train/x` and `eval_x` into `eval/x`."""
    rows = _hf_rows(run, vocab, logging_steps, spe, eval_alias)
    t0 = clock(run, 0)
    stamp_dir = time.strftime("%b%d_%H-%M-%S", time.localtime(t0 - 60))
    events = []
    for r in rows:
        s = r["step"]
        if "eval_runtime" in r:
            vals = {"eval/" + k.removeprefix("eval_"): x for k, x in r.items() if k not in ("step",)
                    and k != "epoch" and x is not None}
            vals["train/epoch"] = r["epoch"]
            events.append((clock(run, s) + 25, s, vals))
        else:
            vals = {"train/" + k: x for k, x in r.items() if k != "step" and x is not None}
            events.append((clock(run, s), s, vals))
    events.sort(key=lambda e: e[0])
    tb_file(folder / "runs" / f"{stamp_dir}_{host}" / f"events.out.tfevents.{int(t0 - 55)}.{host}.2231.0", events)


def _progress(n: int, total: int, sec: float) -> str:
    frac = n / total
    bar = "█" * int(frac * 10) + ("▏▎▍▌▋▊▉"[int(frac * 70) % 7] if frac < 1 else "")
    el, rem = n * sec, (total - n) * sec
    hms = lambda t: f"{int(t // 3600)}:{int(t % 3600 // 60):02d}:{int(t % 60):02d}"  # noqa: E731
    return f"{int(frac * 100):3d}%|{bar:<10}| {n}/{total} [{hms(el)}<{hms(rem)}, {sec:.2f}s/it]"


def w_trl_console(run: dict, folder: Path, vocab: dict = TRL, logging_steps: int = 10, name: str = "train.log",
                  head: list[str] | None = None, spe: float = 0) -> None:
    """`python train_grpo.py 2>&1 | tee train.log`: tqdm updates joined by carriage returns, and the Trainer's
    printed log dicts (no step in them; the bar carries it), eval dicts among them."""
    planned, sec = run["planned"], run["story"].sec_per_step
    spe = spe or planned
    rows = _hf_rows(run, vocab, logging_steps, spe)
    lines = list(head or [])
    last = 0
    for r in rows:
        s = r["step"]
        if s > last:
            lines.append("\r".join(_progress(n, planned, sec) for n in range(last + 1, s + 1, max(1, (s - last) // 3))
                                   ) + "\r" + _progress(s, planned, sec))
            last = s
        d = {k: x for k, x in r.items() if k != "step" and x is not None}
        d["epoch"] = round(d["epoch"], 2)
        lines.append(str(d))
    (folder / name).write_text("\n".join(lines) + "\r" + _progress(last, planned, sec), encoding="utf-8")


def _verl_rows(run: dict, vocab: dict = VERL) -> dict[int, dict]:
    lrng = np.random.default_rng(run["seed"] + 2)
    st = run["story"]
    rows: dict[int, dict] = {}
    ref_len = float(np.mean([v.get("len", 500.0) for _, v in run["train"]]))
    for s, v in run["eval"]:
        rows.setdefault(s, {}).update(v)
        rows[s]["timing_s/testing"] = round(95 + 10 * lrng.random(), 3)
    for s, v in run["train"]:
        d = named(v, vocab, part_fmt=None)
        if "critic/score/mean" in d:
            for stat in ("mean", "max", "min"):
                d[f"critic/rewards/{stat}"] = d[f"critic/score/{stat}"]
            adv_w = 0.0 if v.get("reward_std", 1) == 0 else 1.0
            d["critic/advantages/mean"] = float(adv_w * lrng.normal(0, .004))
            d["critic/advantages/max"] = adv_w * float(2.4 + .2 * lrng.random())
            d["critic/advantages/min"] = -adv_w * float(2.4 + .2 * lrng.random()) + 0.0
            d["critic/returns/mean"] = d["critic/advantages/mean"]
        if "actor/kl_loss" in d:
            d["actor/kl_coef"] = 0.001
        d.setdefault("actor/pg_clipfrac_lower", 0.0)
        length = v.get("len", 500.0)
        step_t = st.sec_per_step * (0.75 + 0.25 * length / ref_len) * (1 + .03 * lrng.normal())
        gen = 0.62 * step_t
        d.update({"prompt_length/mean": 188.4, "timing_s/gen": round(gen, 3), "timing_s/old_log_prob": round(.08 * step_t, 3),
                  "timing_s/ref": round(.07 * step_t, 3), "timing_s/update_actor": round(.2 * step_t, 3),
                  "timing_s/step": round(step_t, 3), "perf/total_num_tokens": int(st.P * st.G * (length + 188)),
                  "perf/time_per_step": round(step_t, 3),
                  "perf/throughput": round(st.P * st.G * (length + 188) / step_t / 8, 2),
                  "perf/max_memory_allocated_gb": 61.3, "training/global_step": s,
                  "training/epoch": int(s // run.get("steps_per_epoch", 10 ** 9))})
        rows.setdefault(s, {}).update(d)
    return rows


def _fmt_verl(x, np2: bool) -> str:
    if isinstance(x, int):
        return f"np.int64({x})" if np2 else str(x)
    if isinstance(x, float) and math.isnan(x):
        return "np.float64(nan)" if np2 else "nan"
    return f"np.float64({float(x)!r})" if np2 else repr(float(x))


VERL_CFG = ("{{'actor_rollout_ref': {{'actor': {{'optim': {{'lr': {lr}, 'lr_warmup_steps_ratio': 0.0}}, "
            "'ppo_mini_batch_size': {mini}, 'use_kl_loss': {klu}, 'kl_loss_coef': 0.001, 'entropy_coeff': 0}}, "
            "'rollout': {{'n': {G}, 'temperature': 1.0, 'name': 'vllm'}}}}, 'algorithm': {{'adv_estimator': '{adv}'}}, "
            "'data': {{'train_batch_size': {P}, 'max_prompt_length': 1024, 'max_response_length': {maxlen}}}, "
            "'trainer': {{'project_name': '{project}', 'experiment_name': '{exp}', 'total_epochs': {epochs}, "
            "'total_training_steps': {planned}, 'save_freq': {save}, 'test_freq': {test}, 'logger': {loggers}, "
            "'val_before_train': True}}}}")


def verl_cfg(run: dict, project: str, exp: str, maxlen: int, save: int, test: int, loggers: str,
             lr: float = 1e-6, adv: str = "grpo", kl: bool = True) -> str:
    st = run["story"]
    return VERL_CFG.format(lr=lr, mini=st.P // 4, klu=kl, G=st.G, adv=adv, P=st.P, maxlen=maxlen, project=project,
                           exp=exp, epochs=100, planned=run["planned"], save=save, test=test, loggers=loggers)


def w_verl_console(run: dict, folder: Path, project: str, exp: str, maxlen: int, save: int = 50, test: int = 20,
                   np2: bool = False, name: str = "train.log", relaunch: tuple[int, int] | None = None,
                   lr: float = 1e-6, adv: str = "grpo", kl: bool = True, reval: Level | None = None) -> None:
    """verl console: config dict, `Total training steps`, then `step:N - k:v - ...` lines behind Ray prefixes.
    `relaunch=(at, maxlen2)`: a planned second stage relaunched from global_step_<at> with a new response cap,
    appended to the same log."""
    rows = _verl_rows(run)
    pid = 18221
    head = [f"2026-11-27 07:58:{12 + i:02d},{311 + i}   INFO worker.py:1832 -- Started a local Ray instance."
            for i in range(1)]
    cfg = verl_cfg(run, project, exp, maxlen, save, test, "['console', 'wandb']", lr, adv, kl)
    lines = [*head, f"(TaskRunner pid={pid}) {cfg}", f"(TaskRunner pid={pid}) Size of train dataloader: 7473, " f"Size of val dataloader: 1", f"(TaskRunner pid={pid}) Total training steps: {run['planned']}"]
    for s in sorted(rows):
        if relaunch and s == relaunch[0] + 1:
            pid = 40417
            cfg2 = verl_cfg(run, project, exp, relaunch[1], save, test, "['console', 'wandb']", lr, adv, kl)
            lines += ["=" * 20 + " stage 2: max_response_length " + str(relaunch[1]) + " " + "=" * 20,
                      "2026-11-27 11:40:02,902   INFO worker.py:1832 -- Started a local Ray instance.",
                      f"(TaskRunner pid={pid}) {cfg2}", f"(TaskRunner pid={pid}) Total training steps: {run['planned']}",
                      f"(TaskRunner pid={pid}) Load from checkpoint folder: checkpoints/{project}/{exp}/"
                      f"global_step_{relaunch[0]}", f"(TaskRunner pid={pid}) Setting global step to {relaunch[0]}",
                      f"(TaskRunner pid={pid}) Resuming from checkpoints/{project}/{exp}/global_step_{relaunch[0]}"]
            if reval is not None:  # val_before_train validates the resumed weights again, under the new config
                again = {k: float(np.random.default_rng(run["seed"] + 9).binomial(e.n, reval(relaunch[0])) / e.n)
                         for k, e in run["story"].evals.items()}
                again["timing_s/testing"] = 131.207
                body = " - ".join(f"{k}:{_fmt_verl(x, np2)}" for k, x in again.items())
                lines.append(f"(TaskRunner pid={pid}) step:{relaunch[0]} - {body}")
        body = " - ".join(f"{k}:{_fmt_verl(x, np2)}" for k, x in rows[s].items())
        lines.append(f"(TaskRunner pid={pid}) step:{s} - {body}")
        if s and s % save == 0:
            lines.append(f"(WorkerDict pid={pid + 391}) [Rank 0] Saved model to "
                         f"checkpoints/{project}/{exp}/global_step_{s}/actor")
    (folder / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    _verl_ckpts(run, folder, project, exp, save)


def _verl_ckpts(run: dict, folder: Path, project: str, exp: str, save: int, keep: int = 3) -> None:
    root = folder / "checkpoints" / project / exp
    saves = list(range(save, run["reached"] + 1, save))[-keep:]
    for n in saves:
        d = root / f"global_step_{n}" / "actor" / "huggingface"
        d.mkdir(parents=True, exist_ok=True)
        (d / "config.json").write_text('{"model_type": "qwen2"}\n')
    if saves:
        (root / "latest_checkpointed_iteration.txt").write_text(str(saves[-1]))


def hydra_cfg(run: dict, folder: Path, project: str, exp: str, maxlen: int, save: int, test: int, loggers: str,
              adv: str = "grpo") -> None:
    st = run["story"]
    d = folder / "outputs" / "2026-11-27" / "07-58-10" / ".hydra"
    d.mkdir(parents=True, exist_ok=True)
    (d / "config.yaml").write_text(
        f"data:\n  train_batch_size: {st.P}\n  max_prompt_length: 1024\n  max_response_length: {maxlen}\n"
        f"actor_rollout_ref:\n  rollout:\n    n: {st.G}\n    name: vllm\n  actor:\n    optim:\n      lr: 1.0e-06\n"
        f"algorithm:\n  adv_estimator: {adv}\ntrainer:\n  project_name: {project}\n  experiment_name: {exp}\n"
        f"  total_epochs: 100\n  total_training_steps: {run['planned']}\n  save_freq: {save}\n  test_freq: {test}\n"
        f"  logger: {loggers}\n  val_before_train: true\n  default_local_dir: checkpoints/{project}/{exp}\n")


def w_verl_jsonl(run: dict, folder: Path, project: str, exp: str, maxlen: int, save: int = 50, test: int = 20,
                 adv: str = "grpo", torn: bool = False) -> None:
    """verl FileLogger: <project>/<exp>.jsonl, {"step": N, "data": {...}} per line, NaN as null; hydra config."""
    rows = _verl_rows(run)
    text = "".join(json.dumps({"step": s, "data": {k: r6(x) if isinstance(x, float) else x for k, x in rows[s].items()}},
                              separators=(",", ":")) + "\n" for s in sorted(rows))
    if torn:
        text = text[: len(text) - len(text.splitlines()[-1]) // 3]
    p = folder / project / f"{exp}.jsonl"
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)
    hydra_cfg(run, folder, project, exp, maxlen, save, test, "[console,file]", adv)
    _verl_ckpts(run, folder, project, exp, save)


def w_verl_tb(run: dict, folder: Path, project: str, exp: str, maxlen: int, save: int = 50, test: int = 25) -> None:
    """verl TensorBoard backend: raw keys under tensorboard_log/<project>/<exp>."""
    rows = _verl_rows(run)
    events = [(clock(run, s) + (0 if s else -300), s, {k: float(x) for k, x in rows[s].items()}) for s in sorted(rows)]
    host = "dgx-a03"
    tb_file(folder / "tensorboard_log" / project / exp / f"events.out.tfevents.{int(clock(run, 0)) - 320}.{host}."
            f"51217.0", events)
    hydra_cfg(run, folder, project, exp, maxlen, save, test, "[console,tensorboard]")
    _verl_ckpts(run, folder, project, exp, save)


def w_openrlhf_console(run: dict, folder: Path, save: int = 50, name: str = "train.log",
                       estimator: str = "reinforce_baseline", eval_steps: int = 25) -> None:
    """OpenRLHF: `✨ Global step N: {dict}` status lines, tqdm bars, `Evaluation completed` lines, ckpt dirs."""
    st, planned = run["story"], run["planned"]
    lrng = np.random.default_rng(run["seed"] + 3)
    lines = ["[2026-11-27 06:12:44,771] [INFO] [real_accelerator.py:254:get_accelerator] Setting ds_accelerator to cuda",
             f"Namespace(advantage_estimator='{estimator}', n_samples_per_prompt={st.G}, rollout_batch_size={st.P}, "
             f"num_episodes=1, max_samples={planned * st.P}, prompt_max_len=1024, generate_max_len=2048, "
             f"init_kl_coef=0.01, eval_steps={eval_steps}, save_steps={save}, logging_steps=1, use_tensorboard=None)"]
    evs = dict(run["eval"])
    ref_len = float(np.mean([v.get("len", 600.0) for _, v in run["train"]]))
    for s, v in run["train"]:
        d = named(v, OPENRLHF, part_fmt=None)
        d = {k: r6(x) for k, x in d.items()}
        d["return"] = r6(d.get("reward", 0) - 0.01 * d.get("kl", 0) * d.get("response_length", 0) / 100)
        d["total_length"] = r6(d.get("response_length", 0) + 211.5)
        d["timing/generation"] = round(.56 * st.sec_per_step * (.7 + .3 * v.get("len", 600) / ref_len), 2)
        d["timing/make_experience"] = round(.31 * d["timing/generation"], 2)
        d["timing/ppo_train"] = round(.42 * d["timing/generation"], 2)
        d["timing/broadcast"] = round(3.1 + lrng.random(), 2)
        d["timing/step_total"] = round(d["timing/generation"] + d["timing/make_experience"] + d["timing/ppo_train"]
                                       + d["timing/broadcast"], 2)
        lines.append("Episode [1/1]: " + _progress(s, planned, st.sec_per_step))
        lines.append(f"✨ Global step {s}: {d}")
        if s in evs:
            em = {k: r6(x) for k, x in evs[s].items()}
            lines.append(f"Evaluation completed in {170 + 20 * lrng.random():.2f}s, global_step {s}, eval_metrics: {em}")
        if s % save == 0:
            lines.append(f"Saving checkpoint global_step{s} to ./ckpt/checkpoints_ppo/global_step{s}")
    (folder / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    for n in list(range(save, run["reached"] + 1, save))[-3:]:
        d = folder / "ckpt" / "checkpoints_ppo" / f"global_step{n}"
        d.mkdir(parents=True, exist_ok=True)
        (d / "client_state.json").write_text(json.dumps({"global_step": n, "episode": 0,
                                                         "total_consumed_prompts": n * st.P}) + "\n")


def w_openrlhf_tb(run: dict, folder: Path, run_name: str, save: int = 50) -> None:
    """OpenRLHF TensorBoard: train/<status key> and eval/<eval key> at global_step, plus ckpt folders."""
    events = []
    for s, v in run["train"]:
        d = {"train/" + k: x for k, x in named(v, OPENRLHF, part_fmt=None).items() if x is not None}
        d["train/return"] = d.get("train/reward", 0.0) - 0.02 * d.get("train/kl", 0.0)
        d["train/global_step"] = s
        events.append((clock(run, s), s, d))
    for s, v in run["eval"]:
        events.append((clock(run, s) + 20, s, {"eval/" + k: x for k, x in v.items()}))
    events.sort(key=lambda e: e[0])
    tb_file(folder / "logs" / "tensorboard" / run_name / f"events.out.tfevents.{int(clock(run, 0))}.h100-12.8812.0",
            events)
    for n in list(range(save, run["reached"] + 1, save))[-3:]:
        d = folder / "ckpt" / run_name / f"global_step{n}"
        d.mkdir(parents=True, exist_ok=True)
        (d / "client_state.json").write_text(json.dumps({"global_step": n, "episode": 0}) + "\n")


def w_nemo_tb(run: dict, folder: Path, exp: str = "exp_001") -> None:
    """NeMo-RL: <log_dir>/exp_NNN/tensorboard, train/... and validation/... keys."""
    events = []
    for s, v in run["train"]:
        d = {k: x for k, x in named(v, NEMO, part_fmt=None).items() if x is not None}
        d["timing/train/total_step_time"] = run["story"].sec_per_step * (0.9 + 0.2 * (s % 7) / 7)
        d["timing/train/generation"] = 0.58 * d["timing/train/total_step_time"]
        events.append((clock(run, s), s, d))
    for s, v in run["eval"]:
        events.append((clock(run, s) + 30 if s else clock(run, 0) - 200, s, v))
    events.sort(key=lambda e: e[0])
    tb_file(folder / "logs" / exp / "tensorboard" / f"events.out.tfevents.{int(clock(run, 0)) - 260}.nemo-0.1201.0",
            events)


def w_trackio(run: dict, folder: Path, project: str, run_name: str, vocab: dict = TRL, logging_steps: int = 5) -> None:
    """Trackio: <project>.db, one JSON blob per log call, HF rewrite_logs keys (train/…, eval/…)."""
    db = sqlite3.connect(folder / f"{project}.db")
    db.executescript("""
    CREATE TABLE metrics (id INTEGER PRIMARY KEY AUTOINCREMENT, timestamp TEXT, run_id TEXT, run_name TEXT,
        step INTEGER, metrics TEXT);
    CREATE TABLE configs (id INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT, run_name TEXT, config TEXT, created_at TEXT);
    CREATE TABLE system_metrics (id INTEGER PRIMARY KEY AUTOINCREMENT, timestamp TEXT, run_id TEXT, run_name TEXT,
        metrics TEXT);
    """)
    rid = "r7f3a9c2e"
    ts = lambda t: time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t))  # noqa: E731
    db.execute("INSERT INTO configs (run_id, run_name, config, created_at) VALUES (?, ?, ?, ?)",
               (rid, run_name, json.dumps({"max_steps": run["planned"], "logging_steps": logging_steps,
                                           "learning_rate": 1e-5, "num_generations": run["story"].G}),
                ts(clock(run, 0))))
    rows = _hf_rows(run, vocab, logging_steps, run["planned"])
    for r in rows:
        s = r["step"]
        if "eval_runtime" in r:
            m = {"eval/" + k.removeprefix("eval_"): x for k, x in r.items() if k not in ("step", "epoch")}
            t = clock(run, s) + 20
        else:
            m = {"train/" + k: x for k, x in r.items() if k != "step"}
            t = clock(run, s)
        m["train/global_step"] = s
        m = {k: ("NaN" if x is None else x) for k, x in m.items()}
        db.execute("INSERT INTO metrics (timestamp, run_id, run_name, step, metrics) VALUES (?, ?, ?, ?, ?)",
                   (ts(t), rid, run_name, s, json.dumps(m)))
    db.commit()
    db.close()


def w_mlflow_files(run: dict, folder: Path, vocab: dict, params: dict, run_name: str, logging_steps: int = 10) -> None:
    """MLflow file store: mlruns/<exp>/<run>/metrics/<key> lines `<ms> <value> <step>`, nested dirs for `/`."""
    rid = "b41d07c9e2a34f7c9d3e51a8f60c2b17"
    exp = folder / "mlruns" / "702115284190"
    exp.mkdir(parents=True)
    (exp / "meta.yaml").write_text("artifact_location: mlflow-artifacts:/702115284190\ncreation_time: 1764210000000\n"
                                   "experiment_id: '702115284190'\nlast_update_time: 1764210000000\n"
                                   "lifecycle_stage: active\nname: grpo-math\n")
    rd = exp / rid
    for sub in ("params", "tags", "artifacts", "metrics"):
        (rd / sub).mkdir(parents=True)
    t0 = int(clock(run, 0) * 1000)
    (rd / "meta.yaml").write_text(f"artifact_uri: mlflow-artifacts:/702115284190/{rid}/artifacts\nend_time: null\n"
                                  f"entry_point_name: ''\nexperiment_id: '702115284190'\nlifecycle_stage: active\n"
                                  f"run_id: {rid}\nrun_name: {run_name}\nrun_uuid: {rid}\nsource_name: ''\n"
                                  f"source_type: 4\nsource_version: ''\nstart_time: {t0}\nstatus: 1\ntags: []\n"
                                  f"user_id: mlops\n")
    (rd / "tags" / "mlflow.runName").write_text(run_name)
    for k, x in params.items():
        (rd / "params" / k).write_text(str(x))
    lines: dict[str, list[str]] = {}
    for r in _hf_rows(run, vocab, logging_steps, run["planned"]):
        s, ev = r["step"], "eval_runtime" in r
        t = int(clock(run, s) * 1000) + (20000 if ev else 0)
        for k, x in r.items():
            if k == "step" or x is None:
                continue
            lines.setdefault(k, []).append(f"{t} {float(x)!r} {s}")
    for k, ls in lines.items():
        p = rd / "metrics" / k
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("\n".join(ls) + "\n")


def w_mlflow_db_verl(run: dict, folder: Path, run_name: str, params: dict) -> None:
    """MLflow SQL store written by verl's MLflow backend: raw verl keys with `@` -> `_at_`, one step per row."""
    db = sqlite3.connect(folder / "mlflow.db")
    db.executescript("""
    CREATE TABLE experiments (experiment_id INTEGER PRIMARY KEY, name VARCHAR(256), artifact_location VARCHAR(256),
        lifecycle_stage VARCHAR(32), creation_time BIGINT, last_update_time BIGINT);
    CREATE TABLE runs (run_uuid VARCHAR(32) PRIMARY KEY, name VARCHAR(250), source_type VARCHAR(20),
        source_name VARCHAR(500), entry_point_name VARCHAR(50), user_id VARCHAR(256), status VARCHAR(9),
        start_time BIGINT, end_time BIGINT, source_version VARCHAR(50), lifecycle_stage VARCHAR(20),
        artifact_uri VARCHAR(200), experiment_id INTEGER, deleted_time BIGINT);
    CREATE TABLE metrics (key VARCHAR(250), value FLOAT, timestamp BIGINT, run_uuid VARCHAR(32), step BIGINT,
        is_nan BOOLEAN, PRIMARY KEY (key, timestamp, step, run_uuid, value, is_nan));
    CREATE TABLE latest_metrics (key VARCHAR(250), value FLOAT, timestamp BIGINT, step BIGINT, is_nan BOOLEAN,
        run_uuid VARCHAR(32), PRIMARY KEY (key, run_uuid));
    CREATE TABLE params (key VARCHAR(250), value VARCHAR(8000), run_uuid VARCHAR(32), PRIMARY KEY (key, run_uuid));
    CREATE TABLE tags (key VARCHAR(250), value VARCHAR(8000), run_uuid VARCHAR(32), PRIMARY KEY (key, run_uuid));
    """)
    rid = "3e8d1f0b6a2c4d5e9f7a1b3c5d7e9f01"
    t0 = int(clock(run, 0) * 1000)
    db.execute("INSERT INTO experiments VALUES (1, 'verl-gsm8k', 'mlflow-artifacts:/1', 'active', ?, ?)", (t0, t0))
    db.execute("INSERT INTO runs VALUES (?, ?, 'UNKNOWN', '', '', 'mlops', 'RUNNING', ?, NULL, '', 'active', ?, 1, NULL)",
               (rid, run_name, t0, f"mlflow-artifacts:/1/{rid}/artifacts"))
    for k, x in params.items():
        db.execute("INSERT INTO params VALUES (?, ?, ?)", (k, str(x), rid))
    db.execute("INSERT INTO tags VALUES ('mlflow.runName', ?, ?)", (run_name, rid))
    latest = {}
    rows = _verl_rows(run)
    for s in sorted(rows):
        ts = int(clock(run, s) * 1000)
        for k, x in rows[s].items():
            k2 = k.replace("@", "_at_")
            nan = isinstance(x, float) and math.isnan(x)
            rec = (k2, 0.0 if nan else float(x), ts, rid, s, int(nan))
            db.execute("INSERT INTO metrics VALUES (?, ?, ?, ?, ?, ?)", rec)
            latest[k2] = rec
    for k, x, ts, r, s, nan in latest.values():
        db.execute("INSERT INTO latest_metrics VALUES (?, ?, ?, ?, ?, ?)", (k, x, ts, s, nan, r))
    db.commit()
    db.close()


def w_wandb_csv(run: dict, folder: Path, display: str, panels: dict[str, str], vocab: dict = TRL,
                logging_steps: int = 10, config: dict | None = None) -> None:
    """W&B panel 'Export CSV' files (x-axis train/global_step) and the run's files/config.yaml beside them."""
    rows = _hf_rows(run, vocab, logging_steps, run["planned"])
    for fname, key in panels.items():
        src = key.removeprefix("train/") if key.startswith("train/") else "eval_" + key.removeprefix("eval/")
        pts = [(r["step"], r[src]) for r in rows if r.get(src) is not None]
        col = f"{display} - {key}"
        with (folder / fname).open("w", newline="") as fh:
            w = csv.writer(fh, quoting=csv.QUOTE_ALL)
            w.writerow(["train/global_step", col, col + "__MIN", col + "__MAX"])
            for s, x in pts:
                w.writerow([s, repr(float(x)), repr(float(x)), repr(float(x))])
    cfg = folder / "files" / "config.yaml"
    cfg.parent.mkdir(parents=True, exist_ok=True)
    items = {"max_steps": run["planned"], "logging_steps": logging_steps, **(config or {})}
    cfg.write_text("_wandb:\n  value:\n    cli_version: 0.19.11\n    python_version: 3.11.10\n" +
                   "".join(f"{k}:\n  value: {v}\n" for k, v in items.items()))


def w_custom_jsonl(run: dict, folder: Path, keys: dict[str, str], config: dict) -> None:
    """A hand-written loop: logs/train_metrics.jsonl (one object per step), logs/eval_metrics.jsonl, run_config.json."""
    (folder / "logs").mkdir(parents=True, exist_ok=True)
    with (folder / "logs" / "train_metrics.jsonl").open("w") as fh:
        for s, v in run["train"]:
            d = {"step": s, "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(clock(run, s)))}
            d.update({keys[k]: r6(x) for k, x in v.items() if k in keys})
            fh.write(json.dumps(d) + "\n")
    with (folder / "logs" / "eval_metrics.jsonl").open("w") as fh:
        for s, v in run["eval"]:
            fh.write(json.dumps({"step": s, **{k: r6(x) for k, x in v.items()}}) + "\n")
    (folder / "run_config.json").write_text(json.dumps({"max_steps": run["planned"], **config}, indent=2) + "\n")


def w_custom_csv(run: dict, folder: Path, cols: dict[str, str], eval_col: str, config: dict,
                 name: str = "train_log.csv") -> None:
    """A hand-written loop's CSV: one row per step, the eval column filled only on eval steps."""
    evs = dict(run["eval"])
    with (folder / name).open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["step", *cols.values(), eval_col])
        for s, v in run["train"]:
            row = [s] + [("" if v.get(k) is None else f"{v[k]:.6g}") for k in cols]
            row.append(f"{evs[s][eval_col]:.4f}" if s in evs else "")
            w.writerow(row)
    (folder / "run_config.json").write_text(json.dumps({"max_steps": run["planned"], **config}, indent=2) + "\n")


def w_rasbt_csv(run: dict, folder: Path, script: str = "7_3_plus_tracking") -> None:
    """reasoning-from-scratch ch07 scripts: logs/<script>_metrics.csv (+ the .txt twin), eval_acc as a fraction
    on checkpoint steps only; one prompt per step, so adv_std is 0 whenever all rollouts scored the same."""
    lrng = np.random.default_rng(run["seed"] + 4)
    evs = dict(run["eval"])
    planned = run["planned"]
    d = folder / "logs"
    d.mkdir(parents=True, exist_ok=True)
    rows, txt = [], []
    for s, v in run["train"]:
        flat = v["zero_std"] >= 1.0
        loss = 0.0 if flat else float(lrng.normal(0, 40))
        adv_std = 0.0 if flat else 0.935414
        ev = f"{evs[s]['eval_acc']:.6f}" if s in evs else ""
        rows.append([s, planned, f"{loss:.4f}", f"{v['reward']:.4f}", f"{v['tps']:.2f}", f"{v['len']:.1f}",
                     f"{0.0:.4f}", f"{adv_std:.4f}", f"{v['entropy']:.4f}", ev])
        txt.append(f"[Step {s}/{planned}] loss={loss:.4f} reward_avg={v['reward']:.3f} tok/sec={v['tps']:.1f} "
                   f"avg_resp_len={v['len']:.1f} adv_std={adv_std:.3f} entropy={v['entropy']:.3f}"
                   + (f" eval_acc={evs[s]['eval_acc']:.4f}" if s in evs else ""))
    with (d / f"{script}_metrics.csv").open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["step", "total_steps", "loss", "reward_avg", "tokens_per_sec", "avg_response_len", "adv_avg",
                    "adv_std", "entropy_avg", "eval_acc"])
        w.writerows(rows)
    (d / f"{script}_metrics.txt").write_text("\n".join(txt) + "\n")


# -------------------------------------------------------------------------------------------------- shared stories

def slow_starter() -> Story:
    """Hard-math GRPO from a 1.5B base: the score sits at its floor for ~45 of 500 steps, then lifts. Signal exists
    from the start (pass@16 on val ~0.11; a few groups with one correct rollout), and the truncation share falls."""
    return Story(
        parts=[Part("acc", knots((0, .010), (45, .012), (80, .045), (150, .14), (300, .30), (500, .36)))],
        evals={"val-core/deepscaler/acc/mean@16": Eval(knots((0, .010), (45, .012), (80, .04), (150, .125),
                                                             (500, .33)), 500 * 16),
               "val-core/deepscaler/acc/best@16/mean": Eval(knots((0, .11), (45, .13), (80, .20), (150, .38),
                                                                  (500, .62)), 500)},
        eval_steps=list(range(0, 501, 20)), headline="val-core/deepscaler/acc/mean@16", P=128, G=8,
        side={"entropy": knots((0, .62), (60, .60), (150, .50), (500, .40)),
              "kl": knots((0, .00002), (60, .0008), (150, .004), (500, .012)),
              "len": knots((0, 2900), (45, 2880), (80, 2600), (150, 1900), (500, 2100)),
              "len_max": (const(4096), None, "exact"), "len_min": (const(61), .1, "mul"),
              "trunc": knots((0, .55), (45, .52), (80, .38), (150, .12), (500, .05)),
              "gnorm": knots((0, .16), (500, .12)), "lr": const(1e-6), "clip": (const(.0015), .1, "mul"),
              "ppo_kl": (const(0.0), 2e-5, "add"), "pg_loss": (const(0.0), .004, "add")},
        sec_per_step=95, age_min=3)


def peak_slide() -> Story:
    """verl GRPO at lr 3e-6 on a 7B: val climbs to a peak around step 300, then entropy creeps back up, answers
    lengthen and val slides."""
    return Story(
        parts=[Part("acc", knots((0, .30), (250, .53), (300, .55), (450, .48), (1000, .48)))],
        evals={"val-core/openr1/acc/mean@1": Eval(knots((0, .28), (250, .50), (300, .51), (450, .45), (1000, .45)),
                                                  1000)},
        eval_steps=list(range(0, 1001, 25)), headline="val-core/openr1/acc/mean@1", P=128, G=8,
        side={"entropy": knots((0, .50), (300, .38), (330, .40), (450, .62)),
              "len": knots((0, 600), (300, 700), (450, 1100)), "len_max": (const(3072), None, "exact"),
              "len_min": (const(40), .1, "mul"), "trunc": knots((0, .01), (300, .015), (450, .06)),
              "kl": knots((0, .00003), (300, .010), (450, .05)), "gnorm": knots((0, .22), (300, .2), (450, .45)),
              "lr": const(3e-6), "clip": knots((0, .002), (300, .003), (450, .009)),
              "ppo_kl": (const(0.0), 3e-5, "add"), "pg_loss": (const(0.0), .005, "add")},
        sec_per_step=70, age_min=5)


def blowup() -> Story:
    """TRL GRPO (v0.2x, beta 0, on-policy) on a 3B: healthy climb to step 215, then an entropy blow-up: entropy,
    lengths, truncation and grad norm rise together while the reward falls."""
    return Story(
        parts=[Part("accuracy_reward", knots((0, .30), (200, .52), (215, .525), (235, .47), (275, .27), (1500, .27)))],
        evals={"eval_reward": Eval(knots((0, .29), (200, .50), (215, .505), (275, .26)), 500)},
        eval_steps=list(range(100, 1501, 100)), P=32, G=8, log_every=5,
        side={"entropy": knots((0, .52), (215, .40), (235, .62), (275, 1.55)),
              "len": knots((0, 640), (215, 720), (235, 820), (275, 1450)),
              "len_max": (knots((0, 1536), (215, 1900), (230, 2048)), None, "exact"),
              "len_min": (knots((0, 88), (275, 30)), .1, "mul"),
              "term_len": knots((0, 610), (215, 680), (235, 730), (275, 980)),
              "trunc": knots((0, .02), (215, .03), (235, .06), (275, .38)),
              "gnorm": knots((0, .25), (215, .22), (235, .45), (275, 1.8)), "lr": warm_cosine(2e-6, 75, 1500),
              "clip": (const(0.0), None, "exact"), "step_time": knots((0, 48), (215, 52), (275, 95))},
        sec_per_step=52, age_min=3)


# ------------------------------------------------------------------------------------------------------- the cases

@dataclass
class Spec:
    name: str
    story: Story
    write: Callable[[dict, Path], None]
    seed: int
    reached: int
    planned: int
    labels: dict
    tags: str
    why: str
    pick: Callable[[dict], bool] | None = None  # the first seed from `seed` whose draws satisfy this
    twin: str | None = None  # the same run checked at another moment: take that case's seed (a prefix of its draws)

    def case(self) -> Case:
        return Case(self.name, lambda *a: None, self.write, self.seed, (self.reached, self.planned), self.labels,
                    self.tags, self.why)


def _last_evals(run: dict, key: str) -> list[float]:
    return [v[key] for _, v in run["eval"]]


SPECS: list[Spec] = [
    # ================================================================================================== healthy
    Spec("ok-slow-starter-score-at-floor-45-steps-pass16-0.11-lifting-at-60-of-500-verl-jsonl",
         slow_starter(), lambda r, f: w_verl_jsonl(r, f, "deepscaler", "r1-distill-1.5b-grpo-4k", 4096, 50, 20),
         3602, 60, 500, HEALTHY, "healthy verl jsonl slow-starter early-check pass-at-k truncation",
         "verl GRPO on hard competition math from a 1.5B base, 500 planned steps, checked at step 60 (12%). The "
         "train score (critic/score/mean) sat at its floor ~0.01 for the first ~45 steps and is only now lifting "
         "(level 0.026 at 60); val mean@16 (8000 samples) is 0.010 at steps 0-40 and 0.024 at 60. But the signal "
         "is there: best@16 on val is ~0.12 at step 0 and ~0.17 at 60 (N=500), so some groups hold a correct "
         "rollout, and the share of responses truncated at the 4096 cap is falling 0.54 -> 0.46 as the model "
         "learns to finish. KL (8e-4) and entropy (0.64 -> 0.59) move slowly. A slow starter with 88% of its "
         "budget left: continue. (The same run is checked again at 150.)"),
    Spec("ok-slow-starter-same-run-at-150-of-500-score-0.14-mean16-0.11-verl-jsonl",
         slow_starter(), lambda r, f: w_verl_jsonl(r, f, "deepscaler", "r1-distill-1.5b-grpo-4k", 4096, 50, 20),
         3602, 150, 500, HEALTHY, "healthy verl jsonl slow-starter mid-check pass-at-k",
         "The same run as the 60-step case, checked again at 150 of 500 (30%). After ~45 steps at the floor the "
         "score climbed 0.012 -> 0.14, val mean@16 0.010 -> 0.11 at step 140 (8000 samples, sd 0.004) and "
         "best@16 0.12 -> 0.35; truncation fell 0.54 -> 0.12, lengths 2900 -> 1950 tokens, entropy 0.60 -> 0.50 "
         "(slow). Steeply improving with 70% of the plan ahead: continue."),
    Spec("ok-dpo-lr-warmup-still-ramping-at-80-of-1000-pref-acc-0.5-to-0.6-eval-at-0-and-50-hf-tb-ckpt50",
         Story(parts=[],
               evals={"eval_loss": Eval(knots((0, .693147), (50, .6885), (100, .682), (1000, .60)), 1000, "mean",
                                        .03, exact_at=(0,)),
                      "eval_rewards/accuracies": Eval(knots((0, 0.0), (1, .50), (50, .535), (100, .56), (1000, .70)),
                                                      1000, exact_at=(0,)),
                      "eval_rewards/margins": Eval(knots((0, 0.0), (50, .011), (100, .03), (1000, .5)), 1000, "mean",
                                                   .06, exact_at=(0,)),
                      "eval_rewards/chosen": Eval(knots((0, 0.0), (50, .003), (100, .008), (1000, .15)), 1000, "mean",
                                                  .05, exact_at=(0,)),
                      "eval_rewards/rejected": Eval(knots((0, 0.0), (50, -.008), (100, -.022), (1000, -.35)), 1000,
                                                    "mean", .05, exact_at=(0,))},
               eval_steps=[0, *range(50, 1001, 50)], headline="eval_rewards/accuracies", log_every=5,
               side={"rewards/accuracies": (knots((0, .5), (30, .52), (80, .60), (1000, .78)), 160, "binom"),
                     "loss": (knots((0, .6931), (40, .6902), (80, .678), (1000, .55)), .002, "add"),
                     "rewards/chosen": (knots((0, 0), (80, .004), (1000, .2)), .002, "add"),
                     "rewards/rejected": (knots((0, 0), (80, -.012), (1000, -.45)), .002, "add"),
                     "rewards/margins": (knots((0, 0), (80, .016), (1000, .65)), .003, "add"),
                     "logps/chosen": (knots((0, -312), (1000, -318)), 6, "add"),
                     "logps/rejected": (knots((0, -341), (1000, -368)), 6, "add"),
                     "logits/chosen": (const(-1.92), .04, "add"), "logits/rejected": (const(-1.95), .04, "add"),
                     "gnorm": knots((0, 4.5), (80, 6.0), (1000, 5.0)), "lr": warm_linear(5e-7, 100, 1000)},
               sec_per_step=21, age_min=2),
         lambda r, f: w_trl_ckpts(r, f, TRL, save_every=50, logging_steps=5, tb=True, eval_steps=50,
                                  host="a100-dpo-02"),
         3603, 80, 1000, HEALTHY, "healthy trl dpo hf-tensorboard checkpoint-folder lr-warmup early-check",
         "TRL DPO, 1000 planned steps, lr warm-up to 5e-7 over the first 100 steps, checked at step 80 (8%) while "
         "the lr is still ramping (4e-7). Train rewards/accuracies drifts 0.50 -> ~0.60 on 160 pairs per log (sd "
         "0.04), margins are tiny (0.016) and the loss has barely left ln 2 (0.678). eval_on_start gives eval "
         "accuracy 0.0 at step 0 (policy == reference, every margin exactly 0, so no pair counts as won) and ~0.54 "
         "at step 50 (N=1000, sd 0.016), eval loss 0.6931 -> 0.690. Nothing is wrong: DPO has hardly started. "
         "Continue."),
    Spec("ok-nemo-grpo-entropy-0.95-to-0.50-kl-0-to-0.014-in-first-90-steps-validation-rising-at-110-of-1000-tb",
         Story(parts=[Part("r", knots((0, .28), (20, .28), (110, .41), (1000, .65)))],
               evals={"validation/accuracy": Eval(knots((0, .30), (20, .30), (110, .40), (1000, .62)), 500)},
               eval_steps=list(range(0, 1001, 20)), headline="validation/accuracy", P=64, G=8,
               side={"kl": knots((0, .00005), (20, .0006), (80, .012), (110, .014), (1000, .04)),
                     "entropy": knots((0, .95), (30, .90), (90, .52), (110, .50), (1000, .35)),
                     "gnorm": knots((0, .9), (30, 1.4), (80, .45), (1000, .3)),
                     "lr": lambda s: 3e-6 * min(1.0, .1 + .9 * s / 50),
                     "len": knots((0, 850), (90, 560), (110, 550), (1000, 640)),
                     "trunc": knots((0, .09), (90, .02), (1000, .02)), "mismatch": (const(1.006), .001, "mul"),
                     "pg_loss": (const(0.0), .01, "add")},
               sec_per_step=64, age_min=4),
         lambda r, f: w_nemo_tb(r, f), 3604, 110, 1000, HEALTHY,
         "healthy nemo-rl tensorboard early-check kl-rise entropy-drop warmup",
         "NeMo-RL GRPO from an instruct model, 1000 planned steps, checked at 110 (11%). In the first 90 steps "
         "approx_entropy falls 0.95 -> 0.52 and kl_penalty rises 0 -> 0.012, grad norm peaks ~1.4 around the end "
         "of the 50-step lr warm-up and settles to 0.45, lengths shrink 850 -> 560 as the verbose chat style is "
         "pruned, truncation 0.09 -> 0.02. That is the usual first-hundred-steps movement, and it comes with "
         "progress: train reward 0.28 -> 0.41, validation accuracy (every 20) 0.30 -> 0.39 at step 100 (N=500, sd "
         "0.022; the latest point a little under the one before it, within noise), token_mult_prob_error flat at "
         "1.006. Continue."),
    Spec("ok-planned-stage2-cap-2048-to-4096-relaunch-at-200-lengths-jump-clip-ratio-falls-verl-console-230-of-800",
         Story(parts=[Part("acc", knots((0, .30), (200, .50), (201, .50), (215, .545), (230, .555), (800, .70)))],
               evals={"val-core/math500/acc/mean@4": Eval(knots((0, .42), (200, .55), (230, .575), (800, .68)),
                                                          2000)},
               eval_steps=list(range(0, 801, 25)), headline="val-core/math500/acc/mean@4", P=64, G=8,
               side={"len": knots((0, 1200), (200, 1850), (201, 1880), (215, 2400), (230, 2600), (800, 2900)),
                     "len_max": (knots((0, 2048), (200, 2048), (201, 4096), (800, 4096)), None, "exact"),
                     "len_min": (const(95), .1, "mul"),
                     "trunc": knots((0, .04), (200, .20), (201, .19), (206, .04), (230, .03), (800, .03)),
                     "entropy": knots((0, .48), (230, .42), (800, .36)),
                     "kl": knots((0, .0001), (200, .006), (230, .007), (800, .015)), "gnorm": const(.2),
                     "lr": const(1e-6), "clip": (const(.0012), .1, "mul"), "ppo_kl": (const(0.0), 2e-5, "add"),
                     "pg_loss": (const(0.0), .005, "add")},
               sec_per_step=80, age_min=6),
         lambda r, f: w_verl_console(r, f, "math-2stage", "qwen25-7b-cap2k-4k", 2048, 50, 25,
                                     relaunch=(200, 4096), reval=knots((0, .43), (200, .565), (800, .68))),
         3605, 230, 800, HEALTHY, "healthy verl console planned-stage-change length-jump relaunch",
         "verl GRPO with a two-stage length schedule: 2048-token cap for steps 1-200, then relaunched from "
         "global_step_200 with a 4096 cap (appended to the same log). Checked at 230 of 800 (29%). By 200 the "
         "responses pressed against the 2048 cap (mean 1850, clip_ratio 0.20). After the relaunch the mean length "
         "jumps 1850 -> 2600 in 30 steps and response_length/max from 2048 to 4096, which looks like a runaway, but "
         "response_length/clip_ratio falls 0.20 -> 0.03, entropy stays ~0.42 and the score rises 0.50 -> 0.555 "
         "because answers are no longer cut off. The relaunch re-validates step 200 under the new cap (the log "
         "has two step:200 rows: ~0.55 under 2048, ~0.565 under 4096); val mean@4 on MATH-500 is 0.575 at 225 "
         "(2000 samples, sd 0.011). The stage change is on plan and paying: continue."),
    Spec("ok-first-plateau-0.44-from-180-to-330-lengths-start-growing-at-350-of-1000-wandb-csv-export",
         Story(parts=[Part("accuracy_reward", knots((0, .20), (150, .42), (180, .44), (330, .445), (350, .46),
                                                    (600, .58), (1000, .62)))],
               evals={"eval_reward": Eval(knots((0, .21), (150, .40), (180, .42), (330, .425), (350, .435),
                                                (1000, .60)), 400)},
               eval_steps=list(range(50, 1001, 50)), headline="eval_reward", P=16, G=8, log_every=10,
               side={"len": knots((0, 420), (180, 480), (310, 490), (350, 620), (600, 900)),
                     "entropy": knots((0, .55), (180, .42), (350, .41)),
                     "trunc": knots((0, .01), (310, .01), (350, .03)), "gnorm": const(.08),
                     "lr": warm_cosine(1e-6, 30, 1000), "clip": (const(0.0), None, "exact")},
               sec_per_step=30, age_min=9),
         lambda r, f: w_wandb_csv(r, f, "qwen2.5-3b-countdown-g8",
                                  {"wandb_export_reward.csv": "train/reward",
                                   "wandb_export_completion_length.csv": "train/completions/mean_length",
                                   "wandb_export_frac_zero_std.csv": "train/frac_reward_zero_std",
                                   "wandb_export_entropy.csv": "train/entropy",
                                   "wandb_export_eval_reward.csv": "eval/reward",
                                   "wandb_export_lr.csv": "train/learning_rate"},
                                  config={"num_generations": 8, "beta": 0.0, "learning_rate": 1e-6}),
         3606, 350, 1000, HEALTHY, "healthy wandb csv-export staircase plateau mid-check",
         "TRL GRPO on Countdown logged to W&B, panels exported as CSV; 1000 planned steps, checked at 350 (35%). "
         "Reward climbed 0.20 -> 0.44 by step 180 and then held ~0.44 for 150 steps (eval 0.42-0.425, N=400, sd "
         "0.025). That flat stretch is the first step of a staircase, not the end: frac_reward_zero_std stays "
         "~0.15 (most groups still carry signal), entropy holds ~0.41, lr is still 7.5e-7 of its 1e-6 peak, and "
         "in the last ~40 steps completions start growing again 490 -> 600 tokens with the reward level edging up "
         "to 0.46 (the usual precursor of the next climb on search tasks). Holding healthily with 65% of the "
         "budget left: continue.",
         pick=lambda r: (all(.405 <= v["eval_reward"] <= .455 for s, v in r["eval"] if s >= 200)
                         and all(.41 <= v["reward"] <= .47 for s, v in r["train"] if 180 <= s <= 330)
                         and np.mean([v["reward"] for _, v in r["train"][-3:]]) >= .44)),
    Spec("ok-three-evals-0.31-0.345-0.37-latest-drawn-below-previous-n200-trl-ckpts-300-of-2000",
         Story(parts=[Part("accuracy_reward", knots((0, .28), (300, .40), (2000, .62)))],
               evals={"eval_reward": Eval(knots((0, .27), (100, .31), (200, .345), (300, .37), (2000, .58)), 200)},
               eval_steps=list(range(100, 2001, 100)), headline="eval_reward", P=8, G=8, log_every=10,
               side={"entropy": knots((0, .48), (300, .44)), "len": knots((0, 610), (300, 650)),
                     "trunc": const(.02), "gnorm": const(.11), "lr": warm_cosine(1e-6, 100, 2000),
                     "clip": (const(0.0), None, "exact")},
               sec_per_step=44, age_min=5),
         lambda r, f: w_trl_ckpts(r, f, TRL, save_every=100, logging_steps=10, eval_steps=100,
                                  eval_alias={"eval_reward": "eval_rewards/accuracy_reward/mean"}),
         3607, 300, 2000, HEALTHY, "healthy trl trainer_state checkpoints noisy-evals early-check",
         "TRL GRPO, 2000 planned steps, eval every 100 on 200 problems, checked at step 300 (15%) with only three "
         "evaluations: 0.335, 0.40, 0.335. The latest came out well below the one before it, but on 200 problems "
         "one eval has sd ~0.034 and the story is a steady rise (eval levels 0.31, 0.345, 0.37); the train "
         "reward, logged every 10 steps, climbs 0.28 -> 0.40 without a break, entropy and lengths are steady, "
         "the 100-step warm-up just ended. A noisy eval is no decline: continue.",
         pick=lambda r: (lambda e: e[2] < e[1] - 0.02 and e[1] > e[0])(_last_evals(r, "eval_reward"))),
    Spec("ok-temperature-1.0-to-0.7-on-schedule-at-200-entropy-steps-down-greedy-heldout-smooth-custom-jsonl",
         Story(parts=[Part("correct", knots((0, .34), (200, .46), (201, .53), (260, .55), (1000, .66)))],
               evals={"heldout/acc_greedy": Eval(knots((0, .36), (260, .47), (1000, .60)), 600)},
               eval_steps=list(range(0, 1001, 40)), headline="heldout/acc_greedy", P=32, G=8,
               side={"temperature": (lambda s: 1.0 if s <= 200 else 0.7, None, "exact"),
                     "entropy": knots((0, .80), (200, .74), (201, .47), (260, .46), (1000, .40)),
                     "kl": knots((0, .0), (200, .012), (201, .009), (260, .011), (1000, .03)),
                     "len": knots((0, 520), (200, 560), (201, 505), (260, 510), (1000, 540)),
                     "gnorm": knots((0, .35), (200, .3), (260, .28)), "lr": warm_cosine(2e-6, 20, 1000)},
               sec_per_step=36, age_min=3),
         lambda r, f: w_custom_jsonl(r, f, {"temperature": "rollout/temperature", "reward": "reward/mean",
                                            "reward_std": "reward/std", "zero_std": "groups/frac_all_same",
                                            "entropy": "policy/entropy", "kl": "policy/kl_to_ref",
                                            "len": "rollout/resp_tokens_mean", "gnorm": "optim/grad_norm",
                                            "lr": "optim/lr"},
                                     {"algo": "grpo", "group_size": 8, "prompts_per_step": 32,
                                      "temperature_schedule": [[0, 1.0], [201, 0.7]], "eval_every": 40,
                                      "eval": "greedy, 600 held-out problems"}),
         3608, 260, 1000, HEALTHY, "healthy custom jsonl temperature-schedule entropy-step early-check",
         "A hand-written GRPO loop with a sampling-temperature schedule in its config: 1.0 for steps 1-200, 0.7 "
         "from 201. Checked at 260 of 1000 (26%). At the switch the logged entropy (measured on sampled tokens) "
         "drops 0.74 -> 0.47 in one step and the train reward jumps 0.46 -> 0.53 (cooler sampling is more "
         "accurate); KL dips slightly. It looks like a collapse but it is the schedule: the greedy held-out eval "
         "(N=600, sd 0.02, every 40 steps) keeps its steady climb (level 0.36 -> 0.46 at 240) straight through "
         "step 200. Continue."),
    Spec("ok-format-part-0.06-to-0.78-correctness-0.004-to-0.02-zero-std-falling-at-150-of-1000-trl-console-dicts",
         Story(parts=[Part("format_reward", knots((0, .06), (60, .20), (150, .78), (300, .95), (1000, .97))),
                      Part("accuracy_reward", knots((0, .004), (90, .005), (150, .02), (1000, .25)), spread=1.6)],
               evals={"eval_rewards/accuracy_reward/mean": Eval(knots((0, .004), (90, .005), (150, .018),
                                                                      (1000, .22)), 500),
                      "eval_rewards/format_reward/mean": Eval(knots((0, .06), (60, .2), (150, .75), (1000, .96)),
                                                              500)},
               eval_steps=list(range(50, 1001, 50)), headline="eval_rewards/accuracy_reward/mean", P=16, G=8,
               log_every=10,
               side={"entropy": knots((0, .62), (150, .55)), "len": knots((0, 240), (60, 300), (150, 410)),
                     "len_max": (const(1024), None, "exact"), "trunc": const(.004),
                     "gnorm": knots((0, .04), (150, .15)), "lr": lambda s: 1e-6 * (1000 - s) / 1000,
                     "clip": (const(0.0), None, "exact")},
               sec_per_step=28, age_min=2),
         lambda r, f: w_trl_console(r, f, TRL, 10, head=[
             "INFO 11-27 08:01:55 [__init__.py:244] Automatically detected platform cuda.",
             "[INFO|trainer.py:2409] ***** Running training *****", "[INFO|trainer.py:2410]   Num examples = 7,473",
             "[INFO|trainer.py:2413]   Total optimization steps = 1,000",
             "[INFO|trainer.py:2414]   Number of trainable parameters = 1,543,714,304"]),
         3609, 150, 1000, HEALTHY, "healthy trl console-dicts reward-components slow-starter format early-check",
         "TRL GRPO (two reward functions, weight 1 each) on a 1.5B base, 1000 planned steps, console dicts only, "
         "checked at 150 (15%). The accuracy part is near zero (0.004 -> 0.02; eval 0.005 -> 0.018 on N=500), "
         "so the total reward looks like it is only the format term. But there is signal: the format part is "
         "being learned fast (0.06 -> 0.78; eval format 0.16 -> 0.72), frac_reward_zero_std fell from ~0.6 to "
         "~0.1-0.25 as groups start to differ, grad norm grows from 0.05 to ~0.13, completions lengthen 250 -> 420 "
         "with the new think/answer structure, and correctness has started to move in the last ~50 steps (eval "
         "0.01, 0.006, 0.022 at 50/100/150). Too early to call, and moving: continue."),
    Spec("ok-8x4-rollouts-per-step-logged-every-step-last-4-points-drawn-low-mlflow-files-350-of-1000",
         Story(parts=[Part("accuracy_reward", knots((0, .20), (350, .48), (1000, .62)))],
               evals={"eval_reward": Eval(knots((0, .22), (350, .46), (1000, .60)), 300)},
               eval_steps=list(range(50, 1001, 50)), headline="eval_reward", P=8, G=4, log_every=1,
               side={"entropy": knots((0, .5), (350, .43)), "len": knots((0, 380), (350, 430)), "trunc": const(.01),
                     "gnorm": const(.09), "lr": const(1e-6), "clip": (const(0.0), None, "exact")},
               sec_per_step=14, age_min=2),
         lambda r, f: w_mlflow_files(r, f, TRL, {"max_steps": 1000, "logging_steps": 1, "learning_rate": 1e-06,
                                                 "num_generations": 4, "per_device_train_batch_size": 8,
                                                 "gradient_accumulation_steps": 4, "beta": 0.0},
                                     "grpo-0.5b-8x4", logging_steps=1),
         3610, 350, 1000, HEALTHY, "healthy mlflow file-store small-batch noise mid-check",
         "TRL GRPO with a tiny batch (8 prompts x 4 generations) logged every step to an MLflow file store; 1000 "
         "planned steps, checked at 350 (35%). The last four logged rewards are all low, which reads like a fall "
         "from the run's highs, but one step's mean of 32 rollouts has sd ~0.10 and the story is a steady rise "
         "(0.20 -> 0.48); the eval every 50 steps on 300 problems rises 0.24 -> 0.49 through its latest point "
         "(level 0.22 -> 0.46), entropy and lengths are steady. Noise, not a decline: continue.",
         pick=lambda r: (np.mean([v["reward"] for _, v in r["train"][-4:]]) < .48 - .13
                         and max(v["reward"] for _, v in r["train"][-4:]) < .42)),
    Spec("ok-peak-slide-story-at-200-of-1000-still-climbing-val-0.46-verl-tb",
         peak_slide(), lambda r, f: w_verl_tb(r, f, "openr1-grpo", "qwen25-7b-lr3e-6", 3072, 50, 25),
         3625, 200, 1000, HEALTHY, "healthy verl tensorboard early-check rising pair-with-later-rollback",
         "verl GRPO at lr 3e-6, 1000 planned steps, checked at 200 (20%). Score 0.30 -> 0.48, val mean@1 every 25 "
         "steps 0.28 -> 0.46 (N=1000, sd 0.016), entropy easing 0.50 -> 0.42, KL 0.007, lengths 600 -> 670: a "
         "clean climb. (The same run checked again at 450 is a rollback; at this moment nothing has gone wrong.) "
         "Continue.",
         twin="rb-peak-slide-story-at-450-of-1000-val-0.51-at-300-to-0.45-entropy-back-up-verl-tb"),
    # ===================================================================================================== stop
    Spec("stop-every-response-cut-at-512-score-minus1-for-all-pg-loss-0-grad-norm-0-verl-console-np2-60-of-500",
         Story(parts=[Part("score", const(-1.0), kind="const")],
               evals={"val-core/math/acc/mean@1": Eval(const(0.0), 500)}, eval_steps=list(range(0, 501, 20)),
               headline="val-core/math/acc/mean@1", P=64, G=8,
               side={"len": (const(512.0), None, "exact"), "len_min": (const(512.0), None, "exact"),
                     "len_max": (const(512.0), None, "exact"), "trunc": (const(1.0), None, "exact"),
                     "entropy": (const(1.05), .01, "mul"), "kl": (const(0.0), None, "exact"),
                     "gnorm": (const(0.0), None, "exact"), "pg_loss": (const(0.0), None, "exact"),
                     "clip": (const(0.0), None, "exact"), "ppo_kl": (const(0.0), None, "exact"), "lr": const(1e-6)},
               sec_per_step=24, age_min=2),
         lambda r, f: w_verl_console(r, f, "math-base", "qwen25-7b-base-r512", 512, 50, 20, np2=True),
         3612, 60, 500, stop(), "stop verl console numpy2 no-signal truncation early-check",
         "verl GRPO from a 7B base model with max_response_length 512 and a prompt that never asks for a final "
         "answer. Checked at 60 of 500 (12%). Every response runs to the cap (response_length mean = min = max = "
         "512, clip_ratio 1.0) and the reward gives -1 to an unfinished answer, so critic/score is exactly -1.0 "
         "(mean, max and min) on every step: every group is flat, advantages are 0, actor/pg_loss, pg_clipfrac, "
         "kl_loss and grad_norm are exactly 0, and val accuracy is 0.000 at steps 0, 20, 40 and 60. The weights "
         "are still the initial ones and will stay so: the 440 remaining steps cannot change anything. Stop (fix "
         "the prompt or the length cap and relaunch)."),
    Spec("stop-reward-fn-returns-none-rewards-null-reward-0-zero-std-1.0-grad-norm-0-trl-ckpts-200-of-2000",
         Story(parts=[Part("accuracy_reward", const(0.0), kind="none")],
               evals={"eval_reward": Eval(const(0.0), 300), "eval_rewards/accuracy_reward/mean": Eval(const(0.0), 1,
                                                                                                      "nan"),
                      "eval_reward_std": Eval(const(0.0), 300)},
               eval_steps=list(range(100, 2001, 100)), headline="eval_reward", P=16, G=8, log_every=10,
               side={"entropy": knots((0, .52), (200, .52)), "len": const(690.0), "trunc": const(.06),
                     "gnorm": (const(0.0), None, "exact"), "loss": (const(0.0), None, "exact"),
                     "lr": warm_cosine(1e-6, 100, 2000), "clip": (const(0.0), None, "exact")},
               sec_per_step=41, age_min=4),
         lambda r, f: w_trl_ckpts(r, f, TRL, save_every=100, logging_steps=10, eval_steps=100),
         3613, 200, 2000, stop(), "stop trl trainer_state checkpoints null-metrics no-signal reward-bug early-check",
         "TRL GRPO with a single reward function that returns None for every completion (its answer parser "
         "expects a field the dataset does not have). Checked at 200 of 2000 (10%), newest checkpoint just "
         "written. rewards/accuracy_reward/mean and /std are null on every log, the summed reward is 0.0 with "
         "reward_std 0, frac_reward_zero_std 1.0, loss 0.0 and grad_norm 0.0 on every row; eval_reward 0.0 at "
         "100 and 200. There is no gradient at all, so the policy cannot change whatever the remaining 1800 "
         "steps do. Stop and fix the reward function."),
    Spec("stop-linear-schedule-sized-for-500-of-1500-lr-0-since-500-reward-and-eval-frozen-custom-csv-640",
         Story(parts=[Part("correct", knots((0, .25), (300, .46), (450, .515), (500, .52), (1500, .52)))],
               evals={"eval_acc": Eval(knots((0, .24), (300, .45), (450, .50), (500, .505), (1500, .505)), 500)},
               eval_steps=list(range(0, 1501, 50)), headline="eval_acc", P=32, G=8,
               side={"lr": warm_linear(2e-6, 20, 500), "kl": knots((0, 0), (450, .020), (500, .021), (1500, .021)),
                     "entropy": knots((0, .55), (500, .41), (1500, .41)), "len": knots((0, 350), (500, 410),
                                                                                      (1500, 410)),
                     "gnorm": const(.25), "loss": (const(0.0), .02, "add")},
               sec_per_step=33, age_min=5),
         lambda r, f: w_custom_csv(r, f, {"lr": "lr", "loss": "loss", "reward": "reward_mean",
                                          "reward_std": "reward_std", "zero_std": "frac_zero_std", "kl": "kl",
                                          "entropy": "entropy", "len": "mean_len", "gnorm": "grad_norm"},
                                   "eval_acc", {"optimizer": "adamw", "lr": 2e-6, "scheduler": "linear",
                                                "warmup_steps": 20, "num_training_steps": 500, "group_size": 8,
                                                "prompts_per_step": 32, "eval_every": 50}),
         3614, 640, 1500, stop(500), "stop custom csv lr-schedule-bug lr-zero plateau mid-check",
         "A hand-written GRPO loop whose linear schedule was sized for 500 steps while max_steps is 1500: the lr "
         "decays to exactly 0 at step 500 and stays there. Checked at 640 (43%). Reward rose 0.25 -> 0.52 while "
         "the lr lasted and has been flat since ~480; held-out accuracy (N=500, sd 0.022) 0.24 -> 0.505 by 500 "
         "and flat since; KL and entropy are frozen at their step-500 values (0.021, 0.41) apart from sampling "
         "noise while grad norm is still ~0.25: gradients are computed, nothing is applied. The weights are the "
         "step-500 weights and will not move again in this run. Stop (relaunch with a proper schedule if more is "
         "wanted).",
         pick=lambda r: (lambda e: max(e) <= .52 and min(e) >= .49 and e[-1] < max(e[:-1]))(
             [v["eval_acc"] for s, v in r["eval"] if s >= 500])),
    Spec("stop-rm-probability-score-pinned-0.98-group-std-0.01-kl-triples-eval-flat-since-120-openrlhf-tb-300-of-1000",
         Story(parts=[Part("rm", knots((0, .62), (80, .93), (120, .978), (300, .980)), kind="prob", spread=1.0,
                           sample_sd=0.8)],
               evals={"eval_helpsteer_pass1": Eval(knots((0, .60), (80, .91), (120, .975), (300, .977)), 800,
                                                   "mean", .08)},
               eval_steps=list(range(40, 1001, 40)), headline="eval_helpsteer_pass1", P=128, G=4,
               side={"kl": knots((0, 0), (120, .03), (300, .09)), "len": knots((0, 380), (120, 450), (300, 470)),
                     "gnorm": knots((0, .6), (120, .15), (300, .08)), "lr": lambda s: 5e-7 * min(1.0, s / 20),
                     "clip": knots((0, .02), (300, .006)), "ppo_kl": (const(.0004), .1, "mul"),
                     "pg_loss": (const(0.0), .01, "add"), "trunc": const(.004)},
               sec_per_step=50, age_min=7),
         lambda r, f: w_openrlhf_tb(r, f, "llama3-8b-rpp-helpsteer"), 3615, 300, 1000, stop(120),
         "stop openrlhf tensorboard reward-model saturated kl-drift mid-check",
         "OpenRLHF REINFORCE++-baseline (4 samples per prompt) against a reward model that outputs a probability. "
         "Checked at 300 of 1000 (30%). The RM score rose 0.62 -> 0.978 by step 120 and has been pinned at "
         "~0.98 since; group_reward_std has shrunk to ~0.01, so advantages are almost pure noise. Since 120 "
         "the eval RM score (800 prompts) is flat at 0.975-0.977 while KL keeps growing 0.03 -> 0.09 and "
         "responses lengthen a little. The reward cannot go higher and the policy only drifts without a decline: "
         "nothing more to gain, the current weights are as good as any. Stop."),
    Spec("sor-gsm8k-val-plateau-0.785-at-250-eases-1sd-by-400-kl-triples-mlflow-db-verl-keys-420-of-1000",
         Story(parts=[Part("acc", knots((0, .70), (200, .86), (250, .865), (420, .87)))],
               evals={"val-core/openai/gsm8k/acc/mean@1": Eval(knots((0, .62), (200, .78), (250, .785), (420, .772)),
                                                               1319)},
               eval_steps=list(range(0, 1001, 50)), headline="val-core/openai/gsm8k/acc/mean@1", P=256, G=8,
               side={"kl": knots((0, 0), (250, .02), (420, .06)), "entropy": knots((0, .32), (250, .24), (420, .20)),
                     "len": knots((0, 280), (250, 230), (420, 215)), "len_max": (const(1024), None, "exact"),
                     "trunc": const(.002), "gnorm": const(.18), "lr": const(1e-6), "clip": (const(.0015), .1, "mul"),
                     "pg_loss": (const(0.0), .004, "add")},
               sec_per_step=58, age_min=4),
         lambda r, f: w_mlflow_db_verl(r, f, "qwen25-3b-gsm8k-grpo", {"trainer.total_training_steps": 1000,
                                                                       "trainer.test_freq": 50,
                                                                       "trainer.save_freq": 100,
                                                                       "data.train_batch_size": 256,
                                                                       "actor_rollout_ref.rollout.n": 8}),
         3616, 420, 1000, stop_or_rollback(200, 250, 250), "stop-or-rollback mlflow sqlite verl plateau kl-drift mid-check",
         "verl GRPO on GSM8K logged to an MLflow SQL store (val key val-core/openai/gsm8k/acc/mean_at_1). Checked "
         "at 420 of 1000 (42%). Val rose 0.62 -> 0.785 by step 250 (N=1319, sd 0.011) and since then has eased "
         "to ~0.775 at 400 (about 1 sd), while the train score creeps 0.865 -> 0.87 and KL triples 0.02 -> 0.06 "
         "with entropy sliding 0.24 -> 0.20. Nothing more is being gained and the cost of the drift cannot be "
         "told from noise. Stopping is right; going back to the plateau (200-250) is as good.",
         pick=lambda r: (lambda e: e[400] >= .770 and e[250] <= .795 and max(e.values()) <= .80)(
             {s: v["val-core/openai/gsm8k/acc/mean@1"] for s, v in r["eval"]})),
]

SPECS += [
    # ================================================================================================= rollback
    Spec("rb-entropy-blowup-20-steps-in-0.40-to-0.62-reward-2.4sd-down-hf-tb-ckpt200-trl-235-of-1500",
         blowup(), lambda r, f: w_trl_ckpts(r, f, TRL, save_every=100, logging_steps=5, tb=True, eval_steps=100,
                                            eval_alias={"eval_reward": "eval_rewards/accuracy_reward/mean"},
                                            host="gpu-h100-14"),
         3618, 235, 1500, rollback(185, 215, 215),
         "rollback trl hf-tensorboard checkpoints entropy-blowup just-started early-check",
         "TRL GRPO (beta 0, on-policy, logging every 5 steps), 1500 planned steps; TensorBoard plus checkpoint "
         "folders every 100. Checked at 235 (16%), 20 steps into an entropy blow-up. Up to 215 the run was healthy "
         "(reward 0.30 -> 0.525, entropy easing 0.52 -> 0.40). Since 215 entropy jumps 0.40 -> 0.62 (+55% in 20 "
         "steps), grad norm doubles 0.22 -> 0.45, completions lengthen 720 -> 820 with truncation doubling, and "
         "the reward level is down to ~0.47 (sd of one logged 5-step mean ~0.023: 2.4 sd below the peak). The "
         "evals (every 100) cannot show it yet. Blow-ups like this do not turn back by themselves: a better model lies behind. "
         "Roll back to the last step before 215 (checkpoint-200 is on disk); window 185-215 from the train-reward "
         "levels. (The same run is checked again at 275.)",
         twin="rb-entropy-blowup-60-steps-in-entropy-1.55-len-1450-trunc-0.38-reward-0.27-hf-tb-ckpts-trl-275-of-1500"),
    Spec("rb-entropy-blowup-60-steps-in-entropy-1.55-len-1450-trunc-0.38-reward-0.27-hf-tb-ckpts-trl-275-of-1500",
         blowup(), lambda r, f: w_trl_ckpts(r, f, TRL, save_every=100, logging_steps=5, tb=True, eval_steps=100,
                                            eval_alias={"eval_reward": "eval_rewards/accuracy_reward/mean"},
                                            host="gpu-h100-14"),
         3618, 275, 1500, rollback(185, 215, 215),
         "rollback trl hf-tensorboard checkpoints entropy-blowup early-check",
         "The same run as the 235-step case, checked again 60 steps into the blow-up (275 of 1500, 18%). "
         "Entropy 0.40 -> 1.55, completions 720 -> 1450 tokens with 38% truncated at 2048, grad norm 1.8, reward "
         "0.525 -> 0.27 (11 sd). Clear breakage after a good stretch: roll back to the last healthy point before "
         "215 (checkpoint-200 on disk); window 185-215."),
    Spec("rb-kl-jump-at-258-unclipped-grad-38-two-ckpts-ago-eval-0.58-to-0.48-trl-rloo-ckpts-350-of-1200",
         Story(parts=[Part("accuracy_reward", knots((0, .35), (250, .61), (258, .61), (270, .49), (350, .50),
                                                    (1200, .50)))],
               evals={"eval_reward": Eval(knots((0, .36), (50, .40), (200, .57), (250, .58), (258, .58), (270, .52),
                                                (300, .50), (350, .48)), 400)},
               eval_steps=list(range(50, 1201, 50)), headline="eval_reward", P=64, G=2, log_every=10,
               side={"kl": knots((0, 0), (250, .03), (258, .03), (262, .40), (300, .33), (350, .28)),
                     "entropy": knots((0, .45), (258, .41), (262, .70), (350, .62)),
                     "len": knots((0, 520), (258, 560), (262, 380), (350, 420)),
                     "gnorm": (knots((0, .3), (250, .3), (259, .3), (260, 38), (261, .9), (350, .7)), .22, "gnorm"),
                     "lr": lambda s: 1e-6 * min(1.0, s / 20), "clip": knots((0, .01), (258, .01), (270, .09),
                                                                           (350, .05)),
                     "trunc": const(.01)},
               sec_per_step=33, age_min=6),
         lambda r, f: w_trl_ckpts(r, f, TRL, save_every=50, logging_steps=10, eval_steps=50,
                                  eval_alias={"eval_reward": "eval_rewards/accuracy_reward/mean"}),
         3619, 350, 1200, rollback(200, 250, 258),
         "rollback trl rloo trainer_state checkpoints kl-jump grad-spike mid-check",
         "TRL RLOO (beta 0.05, so kl is logged; 2 generations per prompt), gradient clipping switched off "
         "(max_grad_norm=0). Checked at 350 of 1200 (29%), checkpoints every 50. At step ~258 one outlier batch "
         "gives an unclipped update (grad_norm 38 on the step-260 log): KL jumps 0.03 -> 0.40 and stays ~0.3, "
         "entropy 0.41 -> 0.70, completions shrink 560 -> 380, the sequence clip ratio rises 0.01 -> 0.09, and "
         "the reward drops 0.61 -> 0.50 without recovering over the 90 steps since. Eval (N=400, sd 0.025) was "
         "0.57 at 200 and 0.58 at 250, then 0.50 at 300 and 0.48 at 350 (4 sd down). The jump is two checkpoints "
         "ago (300 and 350 are both after it). Roll back to checkpoint-250 (window 200-250)."),
    Spec("rb-reward-plateau-0.625-then-5-logs-down-to-0.50-completions-520-to-190-trl-console-dicts-270-of-1000",
         Story(parts=[Part("accuracy_reward", knots((0, .35), (200, .62), (220, .625), (270, .50), (1000, .5)))],
               P=32, G=8, log_every=10,
               side={"len": knots((0, 480), (220, 520), (270, 190)), "term_len": knots((0, 455), (220, 500),
                                                                                      (270, 188)),
                     "entropy": knots((0, .5), (220, .40), (270, .18)), "trunc": knots((0, .03), (220, .03),
                                                                                     (270, .002)),
                     "gnorm": knots((0, .2), (220, .2), (270, .6)), "lr": warm_linear(5e-6, 20, 1000),
                     "clip": (const(0.0), None, "exact"), "step_time": knots((0, 35), (220, 36), (270, 20))},
               sec_per_step=35, age_min=3),
         lambda r, f: w_trl_console(r, f, TRL, 10, name="grpo_qwen3_4b.log", head=[
             "[INFO|trainer.py:2409] ***** Running training *****",
             "[INFO|trainer.py:2413]   Total optimization steps = 1,000"]),
         3620, 270, 1000, rollback(200, 220, 220),
         "rollback trl console-dicts no-eval reward-decline length-collapse early-check",
         "TRL GRPO at lr 5e-6 (hot for a 4B), console dicts only, no eval; 1000 planned steps, checked at 270 "
         "(27%). Reward climbed 0.35 -> 0.625 by step 220, then fell on each of the last five logs to ~0.50 "
         "(sd of a 10-step logged mean ~0.016: an 8-sd fall). Completions collapse 520 -> 190 tokens (the model "
         "stops reasoning), entropy 0.40 -> 0.18, grad norm triples. A reward that has fallen for only five "
         "logged points, but far outside the noise and with a clear mechanism: roll back to ~220 (window 200-220)."),
    Spec("rb-lenient-verifier-farmed-train-reward-up-math500-pass1-drops-at-last-2-evals-openrlhf-console-275",
         Story(parts=[Part("verifier", knots((0, .40), (225, .58), (275, .66), (1000, .7)))],
               evals={"eval_math500_pass1": Eval(knots((0, .38), (200, .55), (225, .56), (275, .47)), 500),
                      "eval_math500_response_length_mean": Eval(knots((0, 900), (225, 870), (275, 620)), 500, "mean",
                                                                300.0)},
               eval_steps=list(range(25, 1001, 25)), headline="eval_math500_pass1", P=128, G=4,
               side={"len": knots((0, 900), (225, 880), (275, 620)), "kl": knots((0, 0), (225, .02), (275, .035)),
                     "trunc": knots((0, .03), (225, .025), (275, .01)), "gnorm": const(.35),
                     "lr": lambda s: 5e-7 * min(1.0, s / 10), "clip": knots((0, .01), (275, .012)),
                     "ppo_kl": (const(.0003), .1, "mul"), "pg_loss": (const(0.0), .02, "add")},
               sec_per_step=80, age_min=4),
         lambda r, f: w_openrlhf_console(r, f, save=25, estimator="reinforce_baseline", eval_steps=25),
         3621, 275, 1000, rollback(200, 225, 225),
         "rollback openrlhf console reward-hacking eval-drop latest-evals early-check",
         "OpenRLHF REINFORCE++-baseline (4 samples per prompt) with a lenient verifier that accepts an answer if "
         "any \\boxed{} matches. Checked at 275 of 1000 (28%). From ~225 the policy learns to hedge with several "
         "boxed candidates: the train reward climbs faster (0.58 -> 0.66) and responses shorten 880 -> 620 tokens, "
         "but the strict MATH-500 pass@1 (every 25 steps, N=500, sd 0.022) peaked at 0.56 at 225 and dropped at "
         "the last two evaluations to ~0.515 and ~0.47 (4 sd). Roll back to the step-200/225 checkpoint (window "
         "200-225) and fix the verifier."),
    Spec("rb-dapo-no-overlong-shaping-lengths-3200-to-5600-in-50-steps-val-drops-at-300-verl-jsonl-300-of-1000",
         Story(parts=[Part("acc", knots((0, .25), (240, .47), (250, .475), (300, .44), (1000, .44)), spread=1.5)],
               evals={"val-core/math500/acc/mean@4": Eval(knots((0, .52), (225, .66), (250, .665), (275, .65),
                                                                (300, .62)), 2000)},
               eval_steps=list(range(0, 1001, 25)), headline="val-core/math500/acc/mean@4", P=96, G=16,
               side={"len": knots((0, 2400), (250, 3200), (300, 5600)),
                     "len_max": (knots((0, 7000), (250, 8192), (300, 8192)), None, "exact"),
                     "len_min": (const(180), .1, "mul"),
                     "trunc": knots((0, .005), (250, .02), (300, .14)), "entropy": knots((0, .40), (250, .35),
                                                                                      (300, .46)),
                     "gnorm": knots((0, .15), (250, .14), (300, .3)), "lr": const(1e-6),
                     "clip": knots((0, .0035), (250, .004), (300, .008)), "ppo_kl": (const(0.0), 3e-5, "add"),
                     "pg_loss": (const(0.0), .004, "add"),
                     "train/num_gen_batches": (lambda s: 1.0 if s < 150 else 2.0, None, "exact")},
               sec_per_step=210, age_min=8),
         lambda r, f: w_verl_jsonl(r, f, "dapo", "qwen3-8b-dapo-nobuffer", 8192, 50, 25, adv="grpo"),
         3622, 300, 1000, rollback(225, 250, 250),
         "rollback verl jsonl dapo length-runaway eval-drop latest-eval mid-check",
         "verl DAPO (dynamic sampling, clip-higher, no KL) with the overlong buffer penalty switched off, 8192-token "
         "cap. Checked at 300 of 1000 (30%). Lengths were stable-growing to ~3200 by step 250, then run away: "
         "3200 -> 5600 in 50 steps, response_length/clip_ratio 0.02 -> 0.14, entropy turning up 0.35 -> 0.46, "
         "grad norm doubling, and the train score slipping 0.475 -> 0.44. Val mean@4 on MATH-500 (2000 samples, "
         "sd 0.011) peaked at 0.665 at step 250 and dropped at its latest evaluations to ~0.65 (275) and ~0.62 "
         "(300, 4 sd). Roll back to ~250 (window 225-250; global_step_250 is on disk)."),
    Spec("rb-peak-slide-story-at-450-of-1000-val-0.51-at-300-to-0.45-entropy-back-up-verl-tb",
         peak_slide(), lambda r, f: w_verl_tb(r, f, "openr1-grpo", "qwen25-7b-lr3e-6", 3072, 50, 25),
         3625, 450, 1000, rollback(250, 300, 300),
         "rollback verl tensorboard peak-then-decline mid-check pair-with-earlier-healthy",
         "The same run as the 200-step case (verl GRPO at lr 3e-6), checked again at 450 of 1000 (45%). Val "
         "mean@1 peaked at 0.51 around step 300 (N=1000, sd 0.016) and has slid to 0.45 (3.8 sd) while entropy "
         "came back up 0.38 -> 0.62, responses lengthened 700 -> 1100 and KL accelerated 0.01 -> 0.05; the score "
         "fell 0.55 -> 0.48. A better model lies behind: roll back to ~300 (window 250-300; global_step_300 is "
         "not among the three kept checkpoints, so restore from wherever it was archived).",
         pick=lambda r: (lambda e: e[200] < .48 and e[400] < .485 and e[450] < .465)(
             {s: v["val-core/openr1/acc/mean@1"] for s, v in r["eval"]})),
    Spec("rb-lr-1e-5-entropy-0.62-to-0.02-in-90-steps-zero-std-0.6-eval-peaked-at-60-trackio-130-of-1000",
         Story(parts=[Part("accuracy_reward", knots((0, .40), (50, .52), (70, .53), (130, .49), (1000, .49)),
                           spread=knots((0, 1.3), (40, 1.6), (90, 4.5), (130, 5.0)))],
               evals={"eval_reward": Eval(knots((0, .41), (50, .495), (60, .50), (130, .41)), 400)},
               eval_steps=list(range(0, 1001, 20)), headline="eval_reward", P=16, G=8, log_every=5,
               side={"entropy": knots((0, .62), (40, .45), (90, .04), (130, .02)),
                     "len": knots((0, 510), (60, 470), (130, 300)), "trunc": const(.01),
                     "gnorm": knots((0, .3), (60, .5), (90, .08), (130, .05)), "lr": warm_cosine(1e-5, 10, 1000),
                     "clip": (const(0.0), None, "exact")},
               sec_per_step=30, age_min=3),
         lambda r, f: w_trackio(r, f, "grpo-math", "qwen2.5-1.5b-lr1e-5", TRL, 5), 3624, 130, 1000,
         rollback(40, 60, 60), "rollback trackio entropy-collapse zero-std early-check",
         "TRL GRPO on a 1.5B at lr 1e-5 (full fine-tune, 10x the usual), logged to Trackio, eval every 20 on 400 "
         "problems (eval_on_start). Checked at 130 of 1000 (13%). Entropy falls 0.62 -> 0.04 within 90 steps "
         "and 0.02 by 130; the rollouts of a group become identical, frac_reward_zero_std climbs from ~0.15 to "
         "~0.6 and grad norm shrinks to 0.05: learning stalls on a collapsed policy. Eval peaked at 0.50 around "
         "step 60 and is ~0.42 at 120 (sd 0.025; 3.1 sd); train reward 0.53 -> 0.49. Roll back to ~60 "
         "(window 40-60; no checkpoints in the folder, restore the one saved nearest before 60)."),
    Spec("rb-one-prompt-8-rollouts-per-step-answers-shrink-310-to-35-eval-0.27-to-0.19-rasbt-csv-160-of-500",
         Story(parts=[Part("r", knots((0, .18), (100, .30), (110, .30), (140, .16), (160, .12)))],
               evals={"eval_acc": Eval(knots((0, .15), (100, .27), (110, .272), (160, .17)), 500)},
               eval_steps=[1, 50, 100, 150, 200], headline="eval_acc", P=1, G=8,
               side={"len": knots((0, 310), (110, 290), (140, 60), (160, 35)),
                     "entropy": knots((0, .55), (110, .50), (160, .12)), "tps": (const(38.0), .05, "mul")},
               sec_per_step=21, age_min=2),
         lambda r, f: w_rasbt_csv(r, f, "7_3_plus_tracking"), 3625, 160, 500, rollback(100, 100, 110),
         "rollback rasbt csv tiny-batch length-collapse eval-drop early-check",
         "The reasoning-from-scratch 7_3 script (one prompt, 8 rollouts per step, so reward_avg is very noisy "
         "and adv_std is 0 whenever all 8 agree), eval_acc on MATH-500 at steps 1, 50, 100, 150. Checked at 160 "
         "of 500 (32%). From ~110 answers shrink 290 -> 35 tokens (the model learns to emit a bare boxed guess) "
         "and entropy 0.50 -> 0.12; eval_acc levels 0.15 -> 0.21 -> 0.27 at step 100, then 0.19 at 150 (N=500, sd "
         "0.02; 4 sd). Only step 100 is within one sd of the best: roll back to step 100 (window 100-100).",
         pick=lambda r: r["eval"][-1][1]["eval_acc"] <= .20),
    Spec("rb-single-eval-drop-0.585-to-0.54-entropy-up-45pct-clip-high-x3-since-300-mlflow-files-350-of-1000",
         Story(parts=[Part("accuracy_reward", knots((0, .35), (300, .60), (350, .57), (1000, .57)))],
               evals={"eval_reward": Eval(knots((0, .33), (50, .42), (250, .58), (300, .585), (350, .54)), 800)},
               eval_steps=list(range(50, 1001, 50)), headline="eval_reward", P=32, G=8, log_every=10,
               side={"entropy": knots((0, .45), (300, .40), (350, .58)), "len": knots((0, 600), (300, 640),
                                                                                     (350, 740)),
                     "trunc": knots((0, .02), (300, .02), (350, .05)), "clip": knots((0, .004), (300, .004),
                                                                                   (350, .012)),
                     "clip_high": knots((0, .003), (300, .003), (350, .010)), "clip_low": const(.001),
                     "gnorm": knots((0, .15), (300, .15), (350, .32)), "lr": warm_cosine(3e-6, 30, 1000)},
               sec_per_step=38, age_min=4),
         lambda r, f: w_mlflow_files(r, f, TRL, {"max_steps": 1000, "logging_steps": 10, "learning_rate": 3e-06,
                                                 "num_generations": 8, "num_iterations": 2, "epsilon_high": 0.28,
                                                 "eval_steps": 50}, "grpo-7b-mu2"),
         3626, 350, 1000, rollback(250, 300, 300),
         "rollback mlflow file-store single-eval-drop entropy-rise mid-check",
         "TRL GRPO with 2 iterations per batch (so clip ratios are non-zero) at lr 3e-6, HF MLflow callback (raw "
         "keys), eval every 50 on 800 problems. Checked at 350 of 1000 (35%). Only the latest eval shows it: "
         "0.58 (250), 0.585 (300), then 0.54 at 350 (sd 0.017; 2.6 sd). It is not a lone noisy point: since 300 "
         "entropy rose 0.40 -> 0.58, clip_ratio/high_mean tripled, grad norm doubled, completions lengthen "
         "640 -> 740 with more truncation, and the train reward (10-step means, sd ~0.016) fell 0.60 -> 0.57. "
         "Roll back to ~300 (window 250-300).",
         pick=lambda r: r["eval"][-1][1]["eval_reward"] <= .549),
    Spec("rb-val-best-at-step-0-instruct-model-degrades-from-first-update-lr-1e-5-verl-console-90-of-600",
         Story(parts=[Part("acc", knots((0, .66), (90, .64), (600, .60)))],
               evals={"val-core/openai/gsm8k/acc/mean@1": Eval(knots((0, .62), (30, .60), (60, .56), (90, .53)),
                                                               1319)},
               eval_steps=list(range(0, 601, 30)), headline="val-core/openai/gsm8k/acc/mean@1", P=128, G=8,
               side={"entropy": knots((0, .35), (90, .15)), "len": knots((0, 310), (90, 240)),
                     "len_max": (const(1024), None, "exact"), "len_min": (const(44), .1, "mul"),
                     "trunc": const(.003), "gnorm": knots((0, .9), (90, .6)),
                     "lr": const(1e-5), "clip": knots((0, .02), (90, .03)), "ppo_kl": (const(.0002), .2, "mul"),
                     "pg_loss": (const(0.0), .01, "add")},
               sec_per_step=46, age_min=3),
         lambda r, f: w_verl_console(r, f, "gsm8k", "qwen25-7b-instruct-lr1e-5-nokl", 1024, 100, 30, lr=1e-5,
                                     kl=False),
         3627, 90, 600, rollback(0, 0, 0),
         "rollback verl console base-model-best early-check lr-too-high",
         "verl GRPO from an instruct model that already scores 0.62 on GSM8K, at lr 1e-5 with no KL loss. "
         "Checked at 90 of 600 (15%). Val (val_before_train at step 0, then every 30; N=1319, sd 0.013) is "
         "0.62 -> 0.60 -> 0.56 -> 0.53: it has only got worse since the first update (7 sd by now), while the "
         "train score drifts 0.66 -> 0.64, entropy collapses 0.35 -> 0.15 and answers shorten 310 -> 240. The "
         "best model is the initial one: roll back to step 0 (the starting weights; window 0-0), and relaunch "
         "with a saner lr."),
]

CASES = [s.case() for s in SPECS]
BY_NAME = {s.name: s for s in SPECS}


def drawn_headline(st: Story, run: dict) -> list[tuple[int, float]]:
    if st.headline == TRAIN:
        return [(s, v["reward"]) for s, v in run["train"]]
    return [(s, v[st.headline]) for s, v in run["eval"]]


def resolve_seeds() -> None:
    """A seed is kept only if its draws tell the story: the case's own predicate, and for a rollback the drawn
    headline's best point inside the labelled window (so the noise does not put a better-looking point elsewhere)."""
    for spec in SPECS:
        w = spec.labels.get("rollback_window")
        if spec.pick is None and w is None:
            continue
        for seed in range(spec.seed, spec.seed + 5000):
            run = spec.story.draws(np.random.default_rng(seed), spec.reached)
            if spec.pick and not spec.pick(run):
                continue
            if w:
                pts = drawn_headline(spec.story, run)
                best = max(x for _, x in pts)
                if not all(w[0] <= s <= w[1] for s, x in pts if x >= best - 1e-12):
                    continue
            spec.seed = seed
            break
        else:
            raise RuntimeError(f"no seed satisfies {spec.name}")
    for spec in SPECS:
        if spec.twin:
            spec.seed = BY_NAME[spec.twin].seed


def write_run(case: Case, folder: Path) -> None:
    spec = BY_NAME[case.name]
    st = spec.story
    run = st.draws(np.random.default_rng(spec.seed), spec.reached)
    run.update(planned=spec.planned, reached=spec.reached, story=st, seed=spec.seed,
               t0=NOW - st.age_min * 60 - spec.reached * st.sec_per_step)
    folder.mkdir(parents=True, exist_ok=True)
    spec.write(run, folder)
    stamp(folder, run)


def verify_labels() -> None:
    for spec in SPECS:
        w = spec.labels.get("rollback_window")
        if w is None:
            continue
        got = window(spec.story, spec.reached, spec.labels["onset_step"])
        assert list(got) == list(w), f"{spec.name}: stated window {w}, levels give {list(got)}"


def check(cases: list[Case]) -> None:
    for c in cases:
        spec = BY_NAME[c.name]
        st = spec.story
        lv, steps = st.headline_level(), st.headline_steps(spec.reached)
        best_s = max(steps, key=lv)
        sd = st.headline_sd(best_s)
        print(f"{c.name}: {c.labels.get('preferred')} accept={c.labels.get('accept')} "
              f"window={c.labels.get('rollback_window')} onset={c.labels.get('onset_step')} "
              f"at {spec.reached}/{spec.planned} ({100 * spec.reached / spec.planned:.0f}%) seed={spec.seed}")
        print(f"    headline {st.headline}: best {lv(best_s):.3f}@{best_s} last {lv(steps[-1]):.3f}@{steps[-1]} "
              f"sd {sd:.4f} ({(lv(best_s) - lv(steps[-1])) / max(sd, 1e-9):.1f} sd below best)")
        run = st.draws(np.random.default_rng(spec.seed), spec.reached)
        pts = drawn_headline(st, run)
        step = max(1, len(pts) // 14)
        print("    drawn " + " ".join(f"{s}:{x:.3f}" for s, x in pts[::step]) + f" | last {pts[-1][0]}:{pts[-1][1]:.3f}")
        if st.parts and st.headline != TRAIN:
            tr = run["train"]
            k = max(1, len(tr) // 10)
            print("    train " + " ".join(f"{s}:{v['reward']:.3f}" for s, v in tr[::k])
                  + f" | zero_std {tr[0][1]['zero_std']:.2f}->{tr[-1][1]['zero_std']:.2f}")


HEADER = """# Holdout set 36: runs written by make_holdout36.py, blind to the assessor, its judges and the other sets' generators.
# Aimed at scheduled checks early and mid-run (8-45 % of the planned steps). Labels: what a careful practitioner should
# do at that moment under DESIGN.md's decision contract, read from each story's noise-free levels. rollback_window is
# inclusive: from the first logged headline step whose level is within one sampling sd of the best level to the newest
# such step not after onset_step, in the run's own logged steps.
# Run `.venv/bin/python evals/holdout36/make_holdout36.py` to write runs/ (gitignored); `--check` prints levels.
"""


def main() -> None:
    resolve_seeds()
    verify_labels()
    holdout_kit.main(HERE, "make_holdout36.py", "holdout36.yaml", "h36-", "holdout36", HEADER, CASES, write_run,
                     check)


if __name__ == "__main__":
    main()
