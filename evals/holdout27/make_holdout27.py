"""Holdout set 27: blind-labelled RL post-training runs in real on-disk formats, independent of the assessor.

Run from the worktree root:
    .venv/bin/python evals/holdout27/make_holdout27.py           # writes runs/ (gitignored) and holdout27.yaml
    .venv/bin/python evals/holdout27/make_holdout27.py --check   # also prints levels and rollback windows

Every case is a story told in noise-free levels (piecewise linear in the run's own step) for the train reward, the
held-out evals and the side signals, drawn through this set's noise model and written the way one framework and
version writes it. The set aims at breadth: algorithm families (GRPO, DAPO, Dr. GRPO, GSPO, RLOO, REINFORCE++, PPO
with a critic, legacy PPO, DPO, IPO, SimPO, ORPO, online DPO, KTO), on-disk formats, run states (live, finished,
early-stopped, stalled, crashed) and what the decision hinges on.

Noise model (this set's own):
  * binary rewards: the batch has P prompts whose solve rates are logit-normal, q = sigmoid(mu + s*z) with the
    prompt-difficulty spread s (logits) and mu solved so that E[q] is the story's level; each prompt gets G
    Bernoulli(q) rollouts. Batch mean, population std, the share of prompts whose G rollouts agree (zero-std
    groups) and the mean per-group std all come from the same draws. TRL averages the batches since the last log;
    OpenRLHF logs the current step; verl / NeMo / hand loops log every step;
  * reward-model scores: level + prompt effect (sd psd, shared by the G rollouts) + per-sample noise (sd rsd);
  * preference accuracy (DPO family): Binomial(pairs, p) / pairs per step;
  * held-out evals: Binomial(N, p) / N, or the mean of N item scores with per-item sd (judge scores, losses);
  * side signals: AR(1) noise (rho 0.6 by default) in log space (multiplicative) or additive for signed ones;
    gradient norms: level * exp(s/2 * N(0,1)) * (1 + 0.2 |t3|), a log-normal core times a one-sided Student-t
    (3 dof) factor, so the right tail is heavy and the left one is not.

Labels come from the stories, never from a tool, under DESIGN.md's decision contract. The rollback window runs
from the first logged headline step whose noise-free level is within one sampling sd of the best level (the sd
of one eval for an eval headline, of one logged value for a train headline) to the newest such step not after
onset_step. For a lower-is-better headline "within" means at most one sd above the minimum.
"""

from __future__ import annotations

import csv
import json
import math
import os
import sqlite3
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

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
)

HERE = Path(__file__).resolve().parent
NOW = time.time()
TRAIN = "@train"
Level = Callable[[float], float]


def knots(*pts: tuple[float, float]) -> Level:
    xs, ys = zip(*pts, strict=True)
    return lambda s: float(np.interp(s, xs, ys))


def const(v: float) -> Level:
    return lambda s: v


def r6(x: float) -> float | None:
    if isinstance(x, (bool, int)):
        return x
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return x
    return float(f"{x:.6g}")


# --------------------------------------------------------------------------------------------- the noise model

_GH_X, _GH_W = np.polynomial.hermite_e.hermegauss(48)
_GH_W = _GH_W / _GH_W.sum()
_MU: dict[tuple[float, float], float] = {}


def expit(x):
    return 1.0 / (1.0 + np.exp(-x))


def solve_mu(p: float, spread: float) -> float:
    """Logit location whose logit-normal solve rates have mean p."""
    key = (round(p, 5), spread)
    if key not in _MU:
        p = min(max(p, 1e-5), 1 - 1e-5)
        lo, hi = -20.0, 20.0
        for _ in range(60):
            mid = (lo + hi) / 2
            if float((_GH_W * expit(mid + spread * _GH_X)).sum()) < p:
                lo = mid
            else:
                hi = mid
        _MU[key] = (lo + hi) / 2
    return _MU[key]


def binary_sd(p: float, P: int, G: int, spread: float) -> float:
    """sd of one batch mean under the logit-normal prompt model."""
    q = expit(solve_mu(p, spread) + spread * _GH_X)
    eq, eq2 = float((_GH_W * q).sum()), float((_GH_W * q * q).sum())
    return math.sqrt((eq2 - eq * eq) / P + (eq - eq2) / (P * G))


def bin_batch(rng: np.random.Generator, p: float, P: int, G: int, spread: float) -> dict:
    """One batch of P prompts x G Bernoulli rollouts with logit-normal prompt difficulty."""
    q = expit(solve_mu(p, spread) + spread * rng.normal(size=P))
    k = rng.binomial(G, q)
    m = float(k.sum() / (P * G))
    frac = k / G
    same = (k == 0) | (k == G)
    return dict(mean=m, std=math.sqrt(max(m * (1 - m), 0.0)), zero_std=float(same.mean()),
                group_std=float(np.sqrt(frac * (1 - frac)).mean()),
                pct0=float(100 * (k == 0).mean()), pct1=float(100 * (k == G).mean()))


@dataclass
class Side:
    level: Level
    kind: str = "m"  # m: multiplicative AR(1) | a: additive AR(1) | x: exact | g: heavy-tailed grad norm
    sd: float = 0.04
    rho: float = 0.6


def M(level: Level, sd: float = 0.04, rho: float = 0.6) -> Side:
    return Side(level, "m", sd, rho)


def A(level: Level, sd: float, rho: float = 0.3) -> Side:
    return Side(level, "a", sd, rho)


def X(level: Level) -> Side:
    return Side(level, "x", 0.0, 0.0)


def GN(level: Level, s: float = 0.3) -> Side:
    return Side(level, "g", s, 0.0)


@dataclass
class Story:
    reward: Level | None = None
    rkind: str = "bin"  # bin | score | pref | none
    P: int = 64
    G: int = 8
    spread: float = 1.2
    rsd: float = 1.0
    psd: float = 0.5
    names: dict = field(default_factory=lambda: {"reward": "reward"})  # mean/std/zero_std/group_std/pct0/pct1
    log_every: int = 1
    average: bool = True
    side: dict = field(default_factory=dict)
    derive: Callable | None = None  # (row, step, rng) -> None, for keys computed from others
    eval_derive: Callable | None = None  # (row, step) -> None, eval keys that repeat another under a second name
    evals: dict = field(default_factory=dict)  # key -> (level, N, per-item sd or None for binomial)
    eval_every: int = 0
    eval_at0: bool = True
    eval_steps: list | None = None
    headline: str = TRAIN
    lower_better: bool = False
    visible_from: int = 0
    sps: float = 60.0  # seconds per step
    age_h: float = 0.05  # hours since the newest write

    # ------------------------------------------------------------------------------------------------ draws
    def _batch(self, rng: np.random.Generator, s: int) -> dict:
        lv = self.reward(s)
        if self.rkind == "score":
            x = (lv + self.psd * np.repeat(rng.normal(size=self.P), self.G)
                 + self.rsd * rng.normal(size=self.P * self.G))
            return dict(mean=float(x.mean()), std=float(x.std()), zero_std=0.0, group_std=self.rsd)
        if self.rkind == "pref":
            return dict(mean=rng.binomial(self.P, min(max(lv, 0), 1)) / self.P)
        return bin_batch(rng, lv, self.P, self.G, self.spread)

    def draws(self, rng: np.random.Generator, reached: int) -> dict:
        ar = dict.fromkeys(self.side, 0.0)
        train = []
        for s in range(self.log_every, reached + 1, self.log_every):
            row: dict = {}
            if self.rkind != "none" and self.reward is not None:
                n = self.log_every if self.average else 1
                bs = [self._batch(rng, s - j) for j in range(n)]
                for canon, key in self.names.items():
                    if canon in bs[0]:
                        row[key] = float(np.mean([b[canon] for b in bs]))
            for k, sd in self.side.items():
                lv = sd.level(s)
                if sd.kind == "x":
                    row[k] = lv
                elif sd.kind == "g":
                    row[k] = lv * math.exp(0.5 * sd.sd * rng.normal()) * (1 + 0.2 * abs(rng.standard_t(3)))
                else:
                    ar[k] = sd.rho * ar[k] + math.sqrt(1 - sd.rho ** 2) * sd.sd * rng.normal()
                    row[k] = lv * math.exp(ar[k]) if sd.kind == "m" else lv + ar[k]
            if self.derive:
                self.derive(row, s, rng)
            train.append((s, row))
        ev = []
        for s in self.all_eval_steps(reached):
            row = {}
            for k, (lvl, n, item_sd) in self.evals.items():
                p = lvl(s)
                row[k] = (rng.binomial(n, min(max(p, 0), 1)) / n if item_sd is None
                          else float(p + item_sd * rng.normal() / math.sqrt(n)))
            if self.eval_derive:
                self.eval_derive(row, s)
            ev.append((s, row))
        return dict(train=train, eval=ev)

    def all_eval_steps(self, reached: int) -> list[int]:
        if self.eval_steps is not None:
            return [s for s in self.eval_steps if s <= reached]
        if not self.evals or not self.eval_every:
            return []
        return list(range(0 if self.eval_at0 else self.eval_every, reached + 1, self.eval_every))

    # ------------------------------------------------------------------------------------------- headline
    def level(self) -> Level:
        return self.reward if self.headline == TRAIN else self.evals[self.headline][0]

    def headline_steps(self, reached: int) -> list[int]:
        steps = (list(range(self.log_every, reached + 1, self.log_every)) if self.headline == TRAIN
                 else self.all_eval_steps(reached))
        return [s for s in steps if s >= self.visible_from]

    def sd(self, v: float) -> float:
        if self.headline != TRAIN:
            _, n, item_sd = self.evals[self.headline]
            return math.sqrt(v * (1 - v) / n) if item_sd is None else item_sd / math.sqrt(n)
        n = self.log_every if self.average else 1
        if self.rkind == "score":
            return math.sqrt(self.psd ** 2 / self.P + self.rsd ** 2 / (self.P * self.G)) / math.sqrt(n)
        if self.rkind == "pref":
            return math.sqrt(v * (1 - v) / self.P / n)
        return binary_sd(v, self.P, self.G, self.spread) / math.sqrt(n)

    def best(self, reached: int) -> tuple[int, float]:
        lv, steps = self.level(), self.headline_steps(reached)
        pick = min if self.lower_better else max
        b = pick(steps, key=lambda s: (lv(s), -s) if not self.lower_better else (lv(s), s))
        return b, lv(b)

    def window(self, reached: int, onset: int) -> tuple[int, int]:
        lv, steps = self.level(), self.headline_steps(reached)
        _, best = self.best(reached)
        sd = self.sd(best)
        good = [s for s in steps if (lv(s) <= best + sd if self.lower_better else lv(s) >= best - sd)]
        return good[0], max(s for s in good if s <= onset)


# ---------------------------------------------------------------------------------------------- file times

def timer(story: Story, reached: int) -> Callable[[float], float]:
    """Wall time at which step s was logged: the newest write is age_h hours old."""
    end = NOW - story.age_h * 3600
    return lambda s: end - (reached - s) * story.sps


def stamp(run: dict, path: Path, t: float) -> None:
    run["stamps"][Path(path)] = t


def apply_stamps(run: dict, folder: Path) -> None:
    default = run["t"](run["reached"])
    for p in sorted(folder.rglob("*"), key=lambda q: -len(q.parts)):
        t = run["stamps"].get(p)
        if t is None and p.is_dir():
            kids = [run["stamps"].get(c, default) for c in p.iterdir()]
            t = max(kids) if kids else default
            run["stamps"][p] = t
        os.utime(p, (t or default, t or default))
    top = max((run["stamps"].get(c, default) for c in folder.iterdir()), default=default)
    os.utime(folder, (top, top))


def iso(t: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(t))


# ----------------------------------------------------------------------------------------------- the writers

def trl_rows(run: dict, spe: int, eval_extra: bool = True, loss_round: bool = True) -> list[dict]:
    rows = []
    for s, v in run["train"]:
        row = {k: (round(x, 4) if (k == "loss" and loss_round) else r6(x)) for k, x in v.items()}
        row.update(epoch=round(s / spe, 4), step=s)
        rows.append(row)
    for s, v in run["eval"]:
        row = {k: r6(x) for k, x in v.items()}
        if eval_extra:
            row.update(eval_runtime=round(140 + 7 * math.sin(s), 3), eval_samples_per_second=3.57,
                       eval_steps_per_second=0.112)
        row.update(epoch=round(s / spe, 4), step=s)
        rows.append(row)
    rows.sort(key=lambda r: (r["step"], "eval_runtime" in r or any(k.startswith("eval_") for k in r)))
    return rows


def w_trl_ckpts(run: dict, folder: Path, *, save_every: int, keep: int | None = None, logging_steps: int = 10,
                spe: int | None = None, epochs: int = 1, eval_steps: int | None = None, finished: bool = False,
                top_level: bool = False, best: tuple[str, bool] | None = None,
                ckpt_extra: Callable[[int, dict], dict] | None = None, out: str = "outputs",
                weights: str = "adapter") -> None:
    """HF Trainer output_dir: checkpoint-N/ with trainer_state.json (history up to N), save_total_limit rotation
    (the best checkpoint is protected when metric_for_best_model is set), and the top-level trainer_state.json
    only when the script calls save_state() at the end."""
    planned, reached = run["planned"], run["reached"]
    spe = spe or planned
    rows = trl_rows(run, spe)
    saves = list(range(save_every, reached + 1, save_every))
    if finished and reached not in saves:
        saves.append(reached)
    kept: list[int] = []
    best_step, best_val = None, None
    for n in saves:
        if best:
            ev = [v[best[0]] for s, v in run["eval"] if s == n and best[0] in v]
            if ev and (best_val is None or (ev[0] > best_val if best[1] else ev[0] < best_val)):
                best_step, best_val = n, ev[0]
        hist = [r for r in rows if r["step"] <= n]
        st = trainer_state(hist, n, planned, logging_steps, save_every, eval_steps, round(n / spe, 4), epochs,
                           training_stop=finished and n == reached)
        if best and best_step is not None:
            st.update(best_metric=best_val, best_global_step=best_step,
                      best_model_checkpoint=f"{out}/checkpoint-{best_step}")
        ck = folder / f"checkpoint-{n}"
        dump_json(ck / "trainer_state.json", st)
        if weights == "adapter":
            (ck / "adapter_config.json").write_text('{"peft_type": "LORA", "r": 32, "lora_alpha": 64}\n')
            (ck / "adapter_model.safetensors").write_bytes(b"\0" * 64)
        else:
            (ck / "config.json").write_text('{"architectures": ["Qwen2ForCausalLM"], "torch_dtype": "bfloat16"}\n')
            (ck / "model.safetensors.index.json").write_text('{"metadata": {"total_size": 15231233024}}\n')
        (ck / "training_args.bin").write_bytes(b"\x80\x04" + b"\0" * 30)
        (ck / "scheduler.pt").write_bytes(b"PK" + b"\0" * 30)
        if ckpt_extra:
            for name, text in ckpt_extra(n, run).items():
                (ck / name).write_text(text)
        for p in ck.rglob("*"):
            stamp(run, p, run["t"](n) + 40)
        stamp(run, ck, run["t"](n) + 40)
        kept.append(n)
        if keep:
            while len([k for k in kept if k != best_step]) > keep:
                old = next(k for k in kept if k != best_step)
                kept.remove(old)
                for p in sorted((folder / f"checkpoint-{old}").rglob("*"), reverse=True):
                    p.unlink()
                (folder / f"checkpoint-{old}").rmdir()
    if top_level:
        hist = [*rows, dict(train_runtime=round(reached * run["sps"], 1), train_samples_per_second=0.9,
                            train_steps_per_second=round(1 / run["sps"], 4), total_flos=0.0,
                            train_loss=round(float(np.mean([r.get("loss", 0.0) for r in rows if "loss" in r])), 4),
                            epoch=round(reached / spe, 4), step=reached)]
        st = trainer_state(hist, reached, planned, logging_steps, save_every, eval_steps, round(reached / spe, 4),
                           epochs, training_stop=True)
        if best and best_step is not None:
            st.update(best_metric=best_val, best_global_step=best_step,
                      best_model_checkpoint=f"{out}/checkpoint-{best_step}")
        dump_json(folder / "trainer_state.json", st)
        stamp(run, folder / "trainer_state.json", run["t"](reached) + 90)


def tb_events(run: dict, tpre: str, epre: str, keymap: Callable[[str], str] | None = None,
              spe: int | None = None) -> list:
    km = keymap or (lambda k: k)
    ev = [(run["t"](s), s, {tpre + km(k): x for k, x in v.items() if x is not None}) for s, v in run["train"]]
    if spe:  # the HF TensorBoard callback also writes train/epoch
        for _, s, d in ev:
            d[tpre + "epoch"] = round(s / spe, 4)
    ev += [(run["t"](s) + 25, s, {epre + km(k): x for k, x in v.items()}) for s, v in run["eval"]]
    ev.sort(key=lambda e: (e[0], e[1]))
    return ev


def w_tb(run: dict, folder: Path, sub: str, tpre: str = "train/", epre: str = "eval/",
         keymap: Callable[[str], str] | None = None, host: str = "gpu-node07", pid: int = 30511,
         truncate: int = 0, spe: int | None = None) -> None:
    ev = tb_events(run, tpre, epre, keymap, spe)
    wall0 = ev[0][0] - 30
    path = folder / sub / f"events.out.tfevents.{int(wall0)}.{host}.{pid}.0"
    tb_file(path, ev, truncate=truncate)
    stamp(run, path, ev[-1][0])


def np2(x) -> str:
    if isinstance(x, int):
        return f"np.int64({x})"
    return f"np.float64({x!r})"


def w_verl_console(run: dict, folder: Path, name: str, *, numpy2: bool, total: int, head: list[str] | None = None,
                   tail: list[str] | None = None, ray: str = "(TaskRunner pid=48213)", save_every: int = 0,
                   exp: str = "exp") -> None:
    rows: dict[int, dict] = {}
    for s, v in run["eval"]:
        rows.setdefault(s, {}).update(v)
    for s, v in run["train"]:
        rows.setdefault(s, {}).update(v)
        rows[s]["training/global_step"] = s
        rows[s]["training/epoch"] = 0
    lines = head or [f"{iso(run['t'](0) - 400)},512 INFO worker.py:1843 -- Started a local Ray instance.",
                     f"{ray} Using dataset class: RLHFDataset",
                     f"{ray} Size of train dataloader: 40315, Size of val dataloader: 1"]
    lines += [f"{ray} Total training steps: {total}"]
    for s in sorted(rows):
        vals = rows[s]
        fmt = (lambda x: np2(x)) if numpy2 else (lambda x: str(x) if isinstance(x, int) else f"{x:.6g}")
        body = " - ".join(f"{k}:{fmt(r6(x) if isinstance(x, float) else x)}" for k, x in vals.items())
        lines.append(f"{ray} step:{s} - {body}")
        if save_every and s and s % save_every == 0:
            lines.append(f"{ray} local_global_step_folder: checkpoints/{exp}/global_step_{s}")
    lines += tail or []
    p = folder / name
    p.write_text("\n".join(lines) + "\n")
    stamp(run, p, run["t"](run["reached"]) + 5)


def verl_ckpts(run: dict, folder: Path, root: str, steps: list[int], times: dict[int, float] | None = None) -> None:
    base = folder / root
    for n in steps:
        d = base / f"global_step_{n}" / "actor"
        d.mkdir(parents=True, exist_ok=True)
        (d / "model_world_size_8_rank_0.pt").write_bytes(b"\0" * 32)
        (d / "huggingface").mkdir(exist_ok=True)
        (d / "huggingface" / "config.json").write_text('{"architectures": ["Qwen2ForCausalLM"]}\n')
        t = (times or {}).get(n, run["t"](n) + 60)
        for p in [d.parent, d, *d.rglob("*")]:
            stamp(run, p, t)
    (base / "latest_checkpointed_iteration.txt").write_text(str(max(steps)))
    stamp(run, base / "latest_checkpointed_iteration.txt", (times or {}).get(max(steps), run["t"](max(steps)) + 60))


def hydra_config(folder: Path, run: dict, total: int, test_freq: int, save_freq: int, project: str, exp: str,
                 logger: str = "['console','file']", extra: str = "") -> None:
    d = folder / ".hydra"
    d.mkdir(parents=True, exist_ok=True)
    (d / "config.yaml").write_text(
        f"data:\n  train_batch_size: 256\n  max_prompt_length: 1024\n  max_response_length: 4096\n"
        f"actor_rollout_ref:\n  actor:\n    optim:\n      lr: 1.0e-06\n    use_kl_loss: true\n    kl_loss_coef: 0.001\n"
        f"  rollout:\n    n: 8\n    temperature: 1.0\n{extra}"
        f"trainer:\n  project_name: {project}\n  experiment_name: {exp}\n  logger: {logger}\n"
        f"  total_epochs: 30\n  total_training_steps: {total}\n  test_freq: {test_freq}\n  save_freq: {save_freq}\n"
        f"  val_before_train: true\n  resume_mode: auto\n  default_local_dir: checkpoints/{project}/{exp}\n")
    stamp(run, d / "config.yaml", run["t"](0) - 300)
    stamp(run, d, run["t"](0) - 300)


def w_verl_jsonl(run: dict, folder: Path, rel: str, start: int = 0) -> None:
    rows: dict[int, dict] = {}
    for s, v in run["eval"]:
        if s >= start:
            rows.setdefault(s, {}).update(v)
    for s, v in run["train"]:
        if s > start:
            rows.setdefault(s, {}).update(v)
            rows[s]["training/global_step"] = s
    p = folder / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    with p.open("w") as fh:
        for s in sorted(rows):
            data = {k: (None if isinstance(x, float) and not math.isfinite(x) else r6(x)) for k, x in rows[s].items()}
            fh.write(json.dumps({"step": s, "data": data}, separators=(",", ":")) + "\n")
    stamp(run, p, run["t"](run["reached"]) + 3)


def pyrepr(d: dict) -> str:
    return "{" + ", ".join(f"'{k}': {r6(v) if isinstance(v, float) else v!r}" for k, v in d.items()) + "}"


def tqdm_line(s: int, total: int, sps: float, desc: str = "") -> str:
    pct = int(100 * s / total)
    bar = ("█" * (pct // 10)).ljust(10)
    el, rem = s * sps, (total - s) * sps
    hms = lambda x: f"{int(x // 3600)}:{int(x % 3600 // 60):02d}:{int(x % 60):02d}"  # noqa: E731
    return f"{desc}{pct:3d}%|{bar}| {s}/{total} [{hms(el)}<{hms(rem)}, {sps:.2f}s/it]"


def w_trl_console(run: dict, folder: Path, name: str, *, spe: int, head: list[str], tail: list[str] | None = None,
                  tail_raw: str = "") -> None:
    """HF Trainer console (nohup): tqdm progress lines and the printed log dicts (no step in them)."""
    lines = list(head)
    evs = dict(run["eval"])
    if 0 in evs:
        lines.append(pyrepr({**evs[0], "eval_runtime": 151.2, "epoch": 0.0}))
    for s, v in run["train"]:
        lines.append(tqdm_line(s, run["planned"], run["sps"]))
        d = {k: (round(x, 4) if k == "loss" else x) for k, x in v.items()}
        d["epoch"] = round(s / spe, 2)
        lines.append(pyrepr(d))
        if s in evs:
            lines.append(pyrepr({**evs[s], "eval_runtime": round(148 + 9 * math.sin(s), 2),
                                 "eval_samples_per_second": 3.4, "eval_steps_per_second": 0.107,
                                 "epoch": round(s / spe, 2)}))
    lines += tail or []
    p = folder / name
    p.write_text("\n".join(lines) + "\n" + tail_raw)
    stamp(run, p, run["t"](run["reached"]) + 2)


def w_openrlhf_console(run: dict, folder: Path, name: str, *, head: list[str], tail: list[str] | None = None,
                       episodes_total: int | None = None) -> None:
    lines = list(head)
    evs = dict(run["eval"])
    total = episodes_total or run["planned"]
    for s, v in run["train"]:
        lines.append(tqdm_line(s, total, run["sps"], "Episode [1/1]: "))
        lines.append(f"✨ Global step {s}: {pyrepr(v)}")
        if s in evs:
            lines.append(f"Evaluation completed in {180 + 11 * math.sin(s):.1f}s, global_step {s}, "
                         f"eval_metrics: {pyrepr(evs[s])}")
    lines += tail or []
    p = folder / name
    p.write_text("\n".join(lines) + "\n")
    stamp(run, p, run["t"](run["reached"]) + 2)


def w_wandb_csv(run: dict, folder: Path, panels: list[str], display: str, xaxis: str = "Step",
                budget: int = 1000) -> None:
    """W&B UI 'Export CSV' per panel: x-axis column, '<run> - <key>', '__MIN', '__MAX' (bucketed when long)."""
    for key in panels:
        pts = [(s, v[key]) for s, v in run["train"] if key in v] + [(s, v[key]) for s, v in run["eval"] if key in v]
        pts.sort()
        col = f"{display} - {key}"
        bucket = max(1, math.ceil(len(pts) / budget))
        p = folder / f"wandb_export_{key.replace('/', '_').replace('@', '_at_')}.csv"
        with p.open("w", newline="") as fh:
            w = csv.writer(fh, quoting=csv.QUOTE_ALL)
            w.writerow([xaxis, col, col + "__MIN", col + "__MAX"])
            for i in range(0, len(pts), bucket):
                ch = pts[i:i + bucket]
                vals = [x for _, x in ch]
                w.writerow([ch[0][0], repr(float(np.mean(vals))), repr(min(vals)), repr(max(vals))])
        stamp(run, p, NOW - 600 - 20 * panels.index(key))


def w_mlflow_db(run: dict, folder: Path, *, name: str, params: dict, status: str = "RUNNING") -> None:
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
    rid = "3f9a1c0e5b7d4e2a9c8b6d4f2e0a1b3c"
    ms = lambda t: int(t * 1000)  # noqa: E731
    t0 = run["t"](0) - 120
    db.execute("INSERT INTO experiments VALUES (1, 'pref-tuning', 'mlflow-artifacts:/1', 'active', ?, ?)",
               (ms(t0), ms(t0)))
    db.execute("INSERT INTO runs VALUES (?, ?, 'LOCAL', 'train_dpo.py', '', 'ml', ?, ?, NULL, '', 'active', ?, 1,"
               " NULL)", (rid, name, status, ms(t0), f"mlflow-artifacts:/1/{rid}/artifacts"))
    for k, v in params.items():
        db.execute("INSERT INTO params VALUES (?, ?, ?)", (k, str(v), rid))
    db.execute("INSERT INTO tags VALUES ('mlflow.runName', ?, ?)", (name, rid))
    latest = {}
    for part, off in (("train", 0), ("eval", 20)):
        for s, v in run[part]:
            for k, x in v.items():
                nan = not math.isfinite(x)
                rec = (k, 0.0 if nan else x, ms(run["t"](s) + off), rid, s, int(nan))
                db.execute("INSERT INTO metrics VALUES (?, ?, ?, ?, ?, ?)", rec)
                latest[k] = rec
    for k, x, ts, r, s, nan in latest.values():
        db.execute("INSERT INTO latest_metrics VALUES (?, ?, ?, ?, ?, ?)", (k, x, ts, s, nan, r))
    db.commit()
    db.close()
    stamp(run, folder / "mlflow.db", run["t"](run["reached"]) + 21)


def w_mlflow_files(run: dict, folder: Path, *, exp_id: str, rid: str, name: str, params: dict) -> None:
    exp = folder / "mlruns" / exp_id
    rd = exp / rid
    for d in ("metrics", "params", "tags", "artifacts"):
        (rd / d).mkdir(parents=True, exist_ok=True)
    t0 = int((run["t"](0) - 60) * 1000)
    (exp / "meta.yaml").write_text(f"artifact_location: file:./mlruns/{exp_id}\ncreation_time: {t0}\n"
                                   f"experiment_id: '{exp_id}'\nlast_update_time: {t0}\nlifecycle_stage: active\n"
                                   f"name: rlhf-ppo\n")
    (rd / "meta.yaml").write_text(f"artifact_uri: file:./mlruns/{exp_id}/{rid}/artifacts\nend_time: null\n"
                                  f"entry_point_name: ''\nexperiment_id: '{exp_id}'\nlifecycle_stage: active\n"
                                  f"run_id: {rid}\nrun_name: {name}\nrun_uuid: {rid}\nsource_name: ''\n"
                                  f"source_type: 4\nsource_version: ''\nstart_time: {t0}\nstatus: 1\ntags: []\n"
                                  f"user_id: rlhf\n")
    for k, v in params.items():
        (rd / "params" / k).write_text(str(v))
    (rd / "tags" / "mlflow.runName").write_text(name)
    lines: dict[str, list[str]] = {}
    for part, off in (("train", 0), ("eval", 15)):
        for s, v in run[part]:
            for k, x in v.items():
                lines.setdefault(k, []).append(f"{int((run['t'](s) + off) * 1000)} {x!r} {s}")
    for k, ls in lines.items():
        p = rd / "metrics" / k
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("\n".join(ls) + "\n")


def w_trackio(run: dict, folder: Path, *, project: str, name: str, config: dict) -> None:
    db = sqlite3.connect(folder / f"{project}.db")
    db.executescript("""
    CREATE TABLE metrics (id INTEGER PRIMARY KEY AUTOINCREMENT, timestamp TEXT NOT NULL, run_name TEXT NOT NULL,
        step INTEGER NOT NULL, metrics TEXT NOT NULL);
    CREATE TABLE configs (id INTEGER PRIMARY KEY AUTOINCREMENT, run_name TEXT NOT NULL, config TEXT NOT NULL,
        created_at TEXT NOT NULL, UNIQUE(run_name));
    CREATE TABLE system_metrics (id INTEGER PRIMARY KEY AUTOINCREMENT, timestamp TEXT NOT NULL,
        run_name TEXT NOT NULL, metrics TEXT NOT NULL);
    """)
    ts = lambda t: time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t))  # noqa: E731
    db.execute("INSERT INTO configs (run_name, config, created_at) VALUES (?, ?, ?)",
               (name, json.dumps(config), ts(run["t"](0) - 90)))
    rows = []
    for s, v in run["train"]:
        m = {"train/" + k: (x if math.isfinite(x) else "NaN") for k, x in v.items()}
        m["train/global_step"] = s
        rows.append((run["t"](s), s, m))
    for s, v in run["eval"]:
        m = {"eval/" + k.removeprefix("eval_"): x for k, x in v.items()}
        m["train/global_step"] = s
        rows.append((run["t"](s) + 30, s, m))
    for t, s, m in sorted(rows, key=lambda r: r[0]):
        db.execute("INSERT INTO metrics (timestamp, run_name, step, metrics) VALUES (?, ?, ?, ?)",
                   (ts(t), name, s, json.dumps(m)))
    db.commit()
    db.close()
    stamp(run, folder / f"{project}.db", run["t"](run["reached"]) + 31)


# ------------------------------------------------------------------------------------------ small story helpers

def derive_all(*fns: Callable) -> Callable:
    def f(row: dict, s: int, rng: np.random.Generator) -> None:
        for fn in fns:
            fn(row, s, rng)
    return f


def copy(src: str, *dsts: str) -> Callable:
    def f(row, s, rng):
        for d in dsts:
            row[d] = row[src]
    return f


def diff(dst: str, a: str, b: str) -> Callable:
    def f(row, s, rng):
        row[dst] = row[a] - row[b]
    return f


def clip01(*keys: str) -> Callable:
    def f(row, s, rng):
        for k in keys:
            row[k] = min(max(row[k], 0.0), 1.0)
    return f


def ev_copy(src: str, *dsts: str) -> Callable:
    def f(row, s):
        for d in dsts:
            row[d] = row[src]
    return f


def warm(peak: float, warmup: int, total: int | None = None, floor: float = 0.0) -> Level:
    """Linear warmup, then constant (total None) or linear decay to `floor` at `total`."""
    def f(s):
        if s < warmup:
            return peak * s / warmup
        if total is None:
            return peak
        return peak + (floor - peak) * min(1.0, (s - warmup) / (total - warmup))
    return f


def int_of(key: str) -> Callable:
    def f(row, s, rng):
        row[key] = round(row[key])
    return f


# ------------------------------------------------------------------------------------------------ the stories

TRL_R = {"mean": "reward", "std": "reward_std", "zero_std": "frac_reward_zero_std"}
EV_ACC = "eval_rewards/accuracy_reward/mean"


def s01() -> Story:
    """TRL 1.9 GRPO with adaptive entropy control (entropy_coef, policy_loss), Qwen3-4B."""
    coef = lambda s: 0.0 if s < 110 else max(0.0, 0.012 + 0.010 * math.sin((s - 110) / 65.0))  # noqa: E731

    def loss(row, s, rng):
        row["loss"] = row["policy_loss"] - row["entropy_coef"] * row["entropy"]
        row["num_tokens"] = float(int(s * 32 * 8 * (230 + row["completions/mean_length"])))
    return Story(knots((0, .28), (300, .40), (800, .47), (2000, .55)), P=32, G=8, log_every=10, names=TRL_R,
                 side={"policy_loss": A(const(0.0), .004, 0),
                       "entropy": M(knots((0, .46), (150, .31), (2000, .30)), .05, .85),
                       "entropy_coef": M(coef, .12),
                       "completions/mean_length": M(knots((0, 610), (800, 820), (2000, 900))),
                       "completions/clipped_ratio": M(knots((0, .02), (800, .035)), .15),
                       "clip_ratio/region_mean": X(const(0.0)), "clip_ratio/low_mean": X(const(0.0)),
                       "clip_ratio/high_mean": X(const(0.0)),
                       "grad_norm": GN(const(.11)), "learning_rate": X(warm(1e-6, 50)),
                       "step_time": M(const(92.0), .05)},
                 derive=derive_all(copy("reward", "rewards/accuracy_reward/mean"),
                                   copy("reward_std", "rewards/accuracy_reward/std"), loss),
                 evals={EV_ACC: (knots((0, .30), (300, .40), (800, .46), (2000, .53)), 500, None)},
                 eval_derive=ev_copy(EV_ACC, "eval_reward"),
                 eval_every=100, eval_at0=False, headline=EV_ACC, sps=95, age_h=.35)


V_MATH500 = "val-core/HuggingFaceH4/MATH-500/acc/mean@1"


def s02() -> Story:
    """verl GRPO: pg_loss turns negative as correct answers become the longer ones."""
    def more(row, s, rng):
        row["critic/rewards/mean"] = row["critic/score/mean"]
        row["critic/score/max"], row["critic/score/min"] = 1.0, 0.0
        row["timing_s/step"] = row["timing_s/gen"] + 31.0 + 4 * rng.random()
    return Story(knots((0, .22), (420, .45), (1200, .60)), P=128, G=8, names={"mean": "critic/score/mean"},
                 side={"actor/pg_loss": A(knots((0, .012), (200, .004), (260, -.006), (420, -.018), (1200, -.02)),
                                          .006, .3),
                       "actor/entropy": M(knots((0, .62), (420, .48), (1200, .42))),
                       "actor/kl_loss": M(knots((0, .0002), (420, .0041), (1200, .009))),
                       "actor/kl_coef": X(const(.001)),
                       "actor/pg_clipfrac": M(const(.0032), .1), "actor/ppo_kl": A(const(0.0), 2e-5, 0),
                       "actor/pg_clipfrac_lower": M(const(2e-5), .3),
                       "actor/grad_norm": GN(const(.19)), "actor/lr": X(const(1e-6)),
                       "critic/advantages/mean": A(const(0.0), .002, 0),
                       "response_length/mean": M(knots((0, 480), (420, 760), (1200, 900))),
                       "response_length/clip_ratio": M(knots((0, .004), (420, .011)), .15),
                       "prompt_length/mean": M(const(188.0), .02),
                       "timing_s/gen": M(knots((0, 38), (420, 55)), .05)},
                 derive=more, evals={V_MATH500: (knots((0, .25), (420, .43), (1200, .55)), 500, None)},
                 eval_every=20, eval_at0=True, headline=V_MATH500, sps=88, age_h=.03)


def s03() -> Story:
    """TRL GRPO full fine-tune of a 32B model: pre-clip grad norm 10-40 every step, clipped at 1.0."""
    def more(row, s, rng):
        row["rewards/accuracy_reward/mean"] = row["reward"]
        row["num_tokens"] = float(int(s * 16 * 8 * (260 + row["completions/mean_length"])))
    return Story(knots((0, .35), (600, .52), (2000, .62)), P=16, G=8, log_every=10, names=TRL_R,
                 side={"loss": A(const(0.0), .01, 0), "grad_norm": GN(knots((0, 22), (600, 16), (2000, 14)), .45),
                       "learning_rate": X(warm(5e-7, 100)),
                       "completions/mean_length": M(knots((0, 700), (600, 850))),
                       "completions/clipped_ratio": M(const(.03), .15),
                       "entropy": M(knots((0, .52), (600, .44))), "clip_ratio/region_mean": X(const(0.0))},
                 derive=more, evals={EV_ACC: (knots((0, .33), (600, .49), (2000, .58)), 500, None)},
                 eval_derive=ev_copy(EV_ACC, "eval_reward"),
                 eval_every=100, eval_at0=False, headline=EV_ACC, sps=80, age_h=.02)


def s04() -> Story:
    """OpenRLHF GRPO on a difficulty-sorted, unshuffled prompt set: train reward slides as prompts harden."""
    def more(row, s, rng):
        row["total_length"] = row["response_length"] + 215.0
        row["return"] = row["reward"] - 0.0 * row["kl"]
    return Story(knots((0, .78), (900, .44), (1500, .38)), P=64, G=8, average=False,
                 names={"mean": "reward", "group_std": "group_reward_std"},
                 side={"kl": M(knots((0, .0005), (900, .021))), "policy_loss": A(const(0.0), .01, 0),
                       "response_length": M(knots((0, 310), (900, 880))),
                       "truncated": M(knots((0, .002), (900, .018)), .15),
                       "actor_grad_norm": GN(const(.24)), "actor_lr": X(const(5e-7)),
                       "ppo_clip_ratio": M(const(.0015), .2), "ppo_kl": A(const(0.0), 1e-5, 0)},
                 derive=more,
                 evals={"eval_math_pass1": (knots((0, .36), (900, .50), (1500, .56)), 500, None),
                        "eval_math_pass8": (knots((0, .62), (900, .72), (1500, .75)), 500, None)},
                 eval_every=50, eval_at0=True, headline="eval_math_pass1", sps=45, age_h=.05)


def wsd(s: float) -> float:
    if s < 100:
        return 2e-6 * s / 100
    if s < 2400:
        return 2e-6
    return 2e-6 + (2e-7 - 2e-6) * min(1.0, (s - 2400) / 600)


def s05() -> Story:
    """NeMo-RL GRPO with a warmup-stable-decay schedule: the decay phase lifts reward and validation."""
    def more(row, s, rng):
        row["train/baseline_reward/pct_mixed"] = (100.0 - row["train/baseline_reward/pct_0"]
                                                  - row["train/baseline_reward/pct_1"])
        row["timing/train/total_step_time"] = row["timing/train/generation"] + 10.5 + rng.random()
    return Story(knots((0, .30), (600, .52), (1400, .59), (2400, .60), (2700, .65), (3000, .67)), P=32, G=16,
                 names={"mean": "train/reward", "pct0": "train/baseline_reward/pct_0",
                        "pct1": "train/baseline_reward/pct_1"},
                 side={"train/lr": X(wsd), "train/loss": A(const(0.0), .004, 0),
                       "train/grad_norm": GN(const(.09)),
                       "train/kl_penalty": M(knots((0, .0003), (2700, .012))),
                       "train/approx_entropy": M(knots((0, .55), (2400, .36), (2700, .33))),
                       "train/mean_gen_tokens_per_sample": M(knots((0, 650), (2700, 1150))),
                       "train/truncation_rate": M(const(.02), .15),
                       "train/token_mult_prob_error": M(const(1.004), .0005),
                       "timing/train/generation": M(knots((0, 17), (2700, 24)), .05)},
                 derive=more,
                 evals={"validation/accuracy": (knots((0, .32), (600, .50), (1400, .565), (2400, .57), (2700, .62),
                                                      (3000, .635)), 500, None)},
                 eval_every=100, eval_at0=True, headline="validation/accuracy", sps=30, age_h=.02)


def s06() -> Story:
    """Hand-written GRPO loop; a separate evaluator process scores checkpoints into its own file."""
    return Story(knots((0, .20), (1000, .48), (2500, .60)), P=32, G=8,
                 names={"mean": "reward_mean", "std": "reward_std", "zero_std": "frac_solved_or_failed"},
                 side={"kl": M(knots((0, .0005), (1000, .03))), "entropy": M(knots((0, .70), (1000, .52))),
                       "resp_len": M(knots((0, 380), (1000, 520))), "grad_norm": GN(const(.35)),
                       "lr": X(const(1e-6)), "loss": A(const(0.0), .02, 0)},
                 evals={"heldout_acc": (knots((0, .22), (600, .38), (1000, .44), (2500, .55)), 400, None)},
                 eval_steps=list(range(0, 601, 100)), headline=TRAIN, sps=28, age_h=.03)


def s07(old: bool = False) -> Story:
    """TRL GRPO; `old` is the earlier, collapsed run whose checkpoints were left in the same output_dir."""
    if old:
        return Story(knots((0, .30), (450, .47), (700, .20), (2000, .05)), P=32, G=8, log_every=10, names=TRL_R,
                     side={"loss": A(const(0.0), .01, 0), "grad_norm": GN(knots((0, .2), (600, .9), (2000, 1.4))),
                           "learning_rate": X(warm(5e-6, 50)),
                           "entropy": M(knots((0, .50), (500, .45), (800, 1.9), (2000, 2.6))),
                           "completions/mean_length": M(knots((0, 400), (500, 450), (800, 1024), (2000, 1024)))},
                     derive=copy("reward", "rewards/accuracy_reward/mean"),
                     evals={EV_ACC: (knots((0, .31), (450, .46), (700, .22), (2000, .06)), 500, None)},
                     eval_every=200, eval_at0=False, headline=EV_ACC, sps=90, age_h=70)
    return Story(knots((0, .30), (800, .50), (2000, .58)), P=32, G=8, log_every=10, names=TRL_R,
                 side={"loss": A(const(0.0), .01, 0), "grad_norm": GN(const(.18)), "learning_rate": X(warm(1e-6, 50)),
                       "entropy": M(knots((0, .50), (800, .41))),
                       "completions/mean_length": M(knots((0, 400), (800, 520)))},
                 derive=copy("reward", "rewards/accuracy_reward/mean"),
                 evals={EV_ACC: (knots((0, .31), (800, .48), (2000, .55)), 500, None)},
                 eval_every=200, eval_at0=False, headline=EV_ACC, sps=90, age_h=.3)


def s08() -> Story:
    """TRL DPO with loss_type='ipo', beta 0.1: the loss starts near 1/(2 beta)^2 = 25, not ln 2."""
    def more(row, s, rng):
        row["rewards/rejected"] = row["rewards/chosen"] - row["rewards/margins"]
        row["epoch"] = round(s / 1450, 4)
    return Story(knots((0, .50), (1300, .71), (2900, .76)), rkind="pref", P=64, log_every=10,
                 names={"mean": "rewards/accuracies"},
                 side={"loss": M(knots((0, 25.0), (1300, 14.0), (2900, 11.5)), .03),
                       "rewards/margins": M(knots((0, .002), (1300, .105), (2900, .14))),
                       "rewards/chosen": A(knots((0, 0.0), (1300, -.04)), .01),
                       "logps/chosen": A(knots((0, -285), (1300, -292)), 2.0),
                       "logps/rejected": A(knots((0, -301), (1300, -318)), 2.0),
                       "logits/chosen": A(const(-1.21), .03), "logits/rejected": A(const(-1.19), .03),
                       "grad_norm": GN(knots((0, 60), (1300, 38)), .3),
                       "learning_rate": X(warm(5e-7, 150, 2900))},
                 derive=more,
                 evals={"eval_rewards/accuracies": (knots((0, .52), (1300, .66), (2900, .70)), 1000, None),
                        "eval_loss": (knots((0, 25.0), (1300, 15.5), (2900, 13.5)), 1000, 6.0),
                        "eval_rewards/margins": (knots((0, 0.0), (1300, .09), (2900, .12)), 1000, .3)},
                 eval_every=100, eval_at0=True, headline="eval_rewards/accuracies", sps=12, age_h=.02)


def s09() -> Story:
    """OpenRLHF 0.10 REINFORCE++ (n_samples_per_prompt 4), killed by the SLURM time limit."""
    def more(row, s, rng):
        row["total_length"] = row["response_length"] + 180.0
        row["return"] = row["reward"] - 0.01 * row["kl"] * row["response_length"] / 100
    return Story(knots((0, .25), (1100, .52), (2400, .60)), P=128, G=4, average=False, names={"mean": "reward"},
                 side={"policy_loss": A(const(0.0), .02, 0), "kl": M(knots((0, .0002), (1100, .018))),
                       "response_length": M(knots((0, 520), (1100, 760))), "truncated": M(const(.012), .15),
                       "actor_lr": X(warm(5e-7, 30)), "actor_grad_norm": GN(const(.21)),
                       "ppo_clip_ratio": M(const(.004), .2), "ppo_kl": A(const(0.0), 2e-5, 0),
                       "vllm_kl": M(const(.0009), .1)},
                 derive=more,
                 evals={"eval_math500_pass1": (knots((0, .30), (1100, .47), (2400, .54)), 500, None)},
                 eval_every=100, eval_at0=False, headline="eval_math500_pass1", sps=50, age_h=.67)


SOURCES = {"gsm8k": (.4, knots((0, .75), (900, .86), (3000, .90)), 260),
           "math": (.4, knots((0, .40), (900, .55), (3000, .63)), 610),
           "olympiad": (.2, knots((0, .10), (900, .20), (3000, .27)), 1150)}
EV_W = "eval/rewards/accuracy_reward/mean"


def s10() -> Story:
    """TRL Dr. GRPO with a source-bucketed sampler: each step's batch comes from one source."""
    names = list(SOURCES)
    probs = [SOURCES[n][0] for n in names]

    def batch(row, s, rng):
        src = names[rng.choice(3, p=probs)]
        _, lvl, length = SOURCES[src]
        b = bin_batch(rng, lvl(s), 24, 8, 1.0)
        row["train/reward"], row["train/reward_std"] = b["mean"], b["std"]
        row["train/frac_reward_zero_std"] = b["zero_std"]
        row["train/rewards/accuracy_reward/mean"] = b["mean"]
        row["train/completions/mean_length"] = length * (1 + .15 * s / 900) * math.exp(.05 * rng.normal())
    mix = lambda s: sum(w * lv(s) for w, lv, _ in SOURCES.values())  # noqa: E731
    return Story(mix, rkind="none",
                 side={"train/loss": A(const(0.0), .01, 0), "train/entropy": M(knots((0, .50), (900, .42))),
                       "train/grad_norm": GN(const(.3)), "train/learning_rate": X(const(1e-6))},
                 derive=batch, evals={EV_W: (knots((0, .40), (900, .52), (3000, .60)), 600, None)},
                 eval_every=50, eval_at0=False, headline=EV_W, sps=40, age_h=.1)


def s11() -> Story:
    """TRL 1.9 GRPO on an MoE model with vLLM IS correction: router collapse from ~700."""
    return Story(knots((0, .30), (650, .55), (700, .555), (760, .52), (1000, .38)), P=64, G=8, log_every=10,
                 names=TRL_R,
                 side={"aux_loss": M(knots((0, .0110), (700, .0118), (800, .022), (1000, .051)), .05),
                       "sampling/sampling_logp_difference/mean": M(knots((0, .006), (700, .0065), (1000, .041)),
                                                                    .06),
                       "sampling/importance_sampling_ratio/mean": A(knots((0, .999), (700, .998), (1000, .962)),
                                                                     .002),
                       "entropy": M(knots((0, .42), (700, .33), (850, .45), (1000, .61))),
                       "completions/mean_length": M(knots((0, 900), (700, 1250), (1000, 1900))),
                       "completions/clipped_ratio": M(knots((0, .02), (700, .04), (1000, .19)), .12),
                       "grad_norm": GN(knots((0, .14), (700, .15), (1000, .55))),
                       "learning_rate": X(warm(1e-6, 40)), "loss": A(const(0.0), .004, 0),
                       "step_time": M(knots((0, 70), (1000, 105)), .04), "clip_ratio/region_mean": X(const(0.0))},
                 derive=copy("reward", "rewards/accuracy_reward/mean"),
                 evals={EV_ACC: (knots((0, .32), (650, .54), (700, .545), (760, .52), (1000, .40)), 800, None)},
                 eval_every=50, eval_at0=False, headline=EV_ACC, sps=75, age_h=.05)


def s12() -> Story:
    """TRL 0.29 DPO with load_best_model_at_end, metric eval_loss, EarlyStoppingCallback(patience=3)."""
    def more(row, s, rng):
        row["rewards/rejected"] = row["rewards/chosen"] - row["rewards/margins"]
        row["logps/rejected"] = row["logps/chosen"] - 10 * row["rewards/margins"] - 14
        row["num_tokens"] = float(s * 32 * 2 * 610)
    return Story(knots((0, .52), (800, .80), (1400, .90), (2000, .95)), rkind="pref", P=32, log_every=10,
                 names={"mean": "rewards/accuracies"},
                 side={"loss": M(knots((0, .693), (800, .47), (1400, .33), (2000, .25)), .04),
                       "rewards/margins": M(knots((0, .01), (800, .9), (1400, 1.6), (2000, 2.1))),
                       "rewards/chosen": A(knots((0, 0.0), (800, -.3), (1400, -.9), (2000, -1.3)), .05),
                       "logps/chosen": A(knots((0, -260), (1400, -275)), 2.0),
                       "logits/chosen": A(const(-.88), .03), "logits/rejected": A(const(-.86), .03),
                       "entropy": M(knots((0, .62), (1400, .55))), "mean_token_accuracy": A(const(.71), .01),
                       "grad_norm": GN(const(8.5), .35), "learning_rate": X(warm(5e-7, 100, 3000))},
                 derive=more,
                 evals={"eval_rewards/accuracies": (knots((0, .55), (600, .69), (800, .70), (1000, .695), (1200, .655),
                                                          (1400, .63), (2000, .58)), 1000, None),
                        "eval_loss": (knots((0, .693), (600, .585), (800, .572), (1000, .576), (1200, .615),
                                            (1400, .655), (2000, .74)), 1000, .45),
                        "eval_rewards/margins": (knots((0, 0.0), (800, .7), (1400, 1.1), (2000, 1.4)), 1000, 1.2)},
                 eval_every=200, eval_at0=False, headline="eval_rewards/accuracies", sps=14, age_h=6.0)


V_MIX = "val-core/math_mix/acc/mean@1"


def s13() -> Story:
    """verl GRPO relaunched from global_step_1000 with a new tokenizer revision: EOS lost, lengths to the cap."""
    def more(row, s, rng):
        row["response_length/clip_ratio"] = min(row["response_length/clip_ratio"], 1.0)
        row["response_length/mean"] = min(row["response_length/mean"], 4096.0)
        row["timing_s/gen"] = row["timing_s/step"] * 0.68
    return Story(knots((0, .25), (1000, .58), (1005, .40), (1020, .08), (1180, .05)), P=128, G=8,
                 names={"mean": "critic/score/mean"},
                 side={"response_length/mean": M(knots((0, 600), (1000, 720), (1004, 3000), (1020, 4010),
                                                       (1180, 4030)), .02),
                       "response_length/clip_ratio": M(knots((0, .01), (1000, .015), (1004, .5), (1020, .93),
                                                             (1180, .95)), .03),
                       "actor/entropy": M(knots((0, .50), (1000, .41), (1010, .90), (1180, 1.10))),
                       "actor/kl_loss": M(knots((0, .0003), (1000, .006), (1020, .03), (1180, .08))),
                       "actor/pg_loss": A(const(0.0), .01, 0),
                       "actor/grad_norm": GN(knots((0, .2), (1000, .2), (1010, .6), (1180, .5))),
                       "actor/lr": X(const(1e-6)), "actor/pg_clipfrac": M(const(.004)),
                       "timing_s/step": M(knots((0, 95), (1000, 100), (1010, 210), (1180, 215)), .04)},
                 derive=more,
                 evals={V_MIX: (knots((0, .28), (1000, .62), (1001, .60), (1020, .12), (1180, .08)), 800, None)},
                 eval_every=20, eval_at0=True, headline=V_MIX, visible_from=1000, sps=75, age_h=.04)


def s14() -> Story:
    """OpenRLHF DPO; the second data shard has chosen/rejected swapped; the job then hangs."""
    return Story(knots((0, .50), (800, .70), (1200, .73), (1210, .33), (1600, .44)), rkind="pref", P=128,
                 average=False, names={"mean": "acc"},
                 side={"loss": M(knots((0, .693), (1200, .52), (1210, .85), (1600, .74)), .04),
                       "chosen_reward": A(knots((0, 0.0), (1200, .35), (1210, .30), (1600, -.10)), .05),
                       "reject_reward": A(knots((0, 0.0), (1200, -.45), (1210, -.40), (1600, .05)), .05),
                       "lr": X(warm(5e-7, 100, 2400, 5e-8)),
                       "grad_norm": GN(knots((0, 4.0), (1200, 3.0), (1210, 9.0), (1600, 6.0)), .35)},
                 evals={"acc_mean": (knots((0, .50), (900, .70), (1000, .71), (1200, .712), (1300, .68), (1600, .58)),
                                     2000, None),
                        "eval_loss": (knots((0, .693), (1200, .55), (1600, .66)), 2000, .5)},
                 eval_every=100, eval_at0=False, headline="acc_mean", sps=9, age_h=3.0)


EV_STRICT = "eval/heldout_strict_acc"


def s15() -> Story:
    """Hand-written GRPO with a lenient verifier (any \\boxed{} that matches counts): multi-answer gaming."""
    return Story(knots((0, .30), (650, .55), (1100, .80)), P=32, G=8,
                 names={"mean": "reward", "std": "reward_std", "zero_std": "zero_adv_frac"},
                 side={"strict_acc": A(knots((0, .30), (650, .54), (1100, .36)), .025, 0),
                       "boxed_per_response": M(knots((0, 1.0), (650, 1.05), (1100, 3.6)), .03),
                       "resp_len": M(knots((0, 420), (650, 450), (1100, 610))),
                       "kl": M(knots((0, .0004), (650, .012), (1100, .05))),
                       "entropy": M(knots((0, .55), (1100, .47))), "grad_norm": GN(const(.3)),
                       "lr": X(const(1e-6))},
                 evals={EV_STRICT: (knots((0, .32), (600, .52), (650, .525), (1100, .38)), 600, None)},
                 eval_every=50, eval_at0=True, headline=EV_STRICT, sps=35, age_h=.05)


V_DS = "val/test_score/deepscaler_math"


def s16() -> Story:
    """verl 0.3 GRPO with max_prompt_length 512 and truncation=right: 96% of prompts lose their question."""
    def more(row, s, rng):
        row["prompt_length/max"] = 512
        row["timing_s/step"] = row["timing_s/gen"] + 22 + rng.random()
    return Story(knots((0, .035), (400, .042)), P=256, G=5, spread=1.5, names={"mean": "critic/score/mean"},
                 side={"prompt_length/mean": M(const(511.2), .001),
                       "prompt_length/clip_ratio": M(const(.962), .005),
                       "response_length/mean": M(knots((0, 340), (400, 360))),
                       "response_length/clip_ratio": M(const(.004), .2),
                       "actor/entropy_loss": M(const(.71), .03),
                       "actor/kl_loss": M(knots((0, .0001), (400, .0028))),
                       "actor/pg_loss": A(const(0.0), .005, 0), "actor/pg_clipfrac": M(const(.002), .2),
                       "actor/grad_norm": GN(const(.06)), "actor/lr": X(const(1e-6)),
                       "timing_s/gen": M(const(41.0), .05)},
                 derive=more, evals={V_DS: (knots((0, .05), (400, .052)), 500, None)},
                 eval_every=50, eval_at0=True, headline=V_DS, sps=66, age_h=5.0)


def s17() -> Story:
    """TRL RLOO (0.2x keys): a filtering bug left 64 training prompts; memorised within ~300 steps."""
    def more(row, s, rng):
        row["rewards/correctness_reward/mean"] = row["reward"]
        row["epoch"] = round(s * 8 / 64, 2)
    return Story(knots((0, .31), (200, .85), (350, .97), (700, .985)), P=8, G=4, log_every=10, names=TRL_R,
                 side={"kl": M(knots((0, .001), (700, .09))), "entropy": M(knots((0, .55), (350, .18), (700, .12))),
                       "completions/mean_length": M(knots((0, 520), (350, 300), (700, 280))),
                       "completions/clipped_ratio": M(const(.01), .2),
                       "grad_norm": GN(knots((0, .3), (350, .05), (700, .03))),
                       "learning_rate": X(const(1e-6)), "loss": A(const(0.0), .003, 0)},
                 derive=more, evals={"eval_reward": (knots((0, .34), (150, .35), (700, .345)), 500, None)},
                 eval_every=100, eval_at0=False, headline="eval_reward", sps=22, age_h=.03)


EV_GOLD = "eval/gold_rm_score"


def s18() -> Story:
    """Legacy TRL PPOTrainer (0.11): KL estimate turns negative from ~330, the KL penalty becomes a bonus."""
    def more(row, s, rng):
        row["ppo/mean_scores"] = row["env/reward_mean"]
        row["ppo/mean_non_score_reward"] = -row["objective/kl_coef"] * row["objective/kl"]
    return Story(knots((0, -.4), (300, 1.3), (330, 1.35), (450, 1.0), (700, -.9)), rkind="score", P=64, G=1,
                 rsd=1.2, psd=.6, names={"mean": "env/reward_mean", "std": "env/reward_std"},
                 side={"objective/kl": A(knots((0, .5), (250, 3.0), (300, 2.6), (330, 1.5), (380, -1.0), (500, -6.0),
                                               (700, -14.0)), .3, .5),
                       "objective/kl_coef": X(knots((0, .2), (300, .16), (700, .09))),
                       "objective/entropy": M(knots((0, 48), (330, 44), (700, 95))),
                       "tokens/responses_len_mean": M(knots((0, 52), (330, 57), (700, 118))),
                       "ppo/policy/clipfrac": M(knots((0, .05), (330, .06), (700, .21))),
                       "ppo/policy/approxkl": M(knots((0, .004), (330, .005), (700, .05))),
                       "ppo/loss/value": M(knots((0, .4), (330, .3), (700, 1.8))),
                       "ppo/val/var_explained": A(knots((0, .1), (330, .5), (700, -.4)), .05),
                       "ppo/learning_rate": X(const(1.41e-5)), "ppo/loss/policy": A(const(0.0), .01, 0)},
                 derive=more, evals={EV_GOLD: (knots((0, -.3), (300, .85), (330, .88), (700, -.75)), 400, 1.1)},
                 eval_every=25, eval_at0=True, headline=EV_GOLD, sps=48, age_h=.05)


V_M5 = "val-core/math500/acc/mean@1"


def s19() -> Story:
    """verl GSPO exported from W&B panels: first peak ~520, a lower second hump ~1000, now sliding."""
    return Story(knots((0, .35), (520, .60), (560, .595), (700, .545), (1000, .565), (1300, .50)), P=128, G=8,
                 names={"mean": "critic/score/mean"},
                 side={"actor/entropy": M(knots((0, .55), (520, .42), (600, .30), (700, .26), (850, .36), (1000, .38),
                                                (1300, .62))),
                       "actor/pg_clipfrac": M(knots((0, .13), (520, .15), (700, .19), (1000, .16), (1300, .24)), .05),
                       "response_length/mean": M(knots((0, 900), (520, 1300), (700, 1150), (1000, 1500),
                                                       (1300, 2300))),
                       "actor/grad_norm": GN(knots((0, .12), (1300, .2)))},
                 evals={V_M5: (knots((0, .40), (440, .60), (520, .62), (560, .615), (700, .555), (850, .56),
                                     (1000, .575), (1100, .565), (1300, .525)), 500, None)},
                 eval_every=40, eval_at0=True, headline=V_M5, sps=80, age_h=.1)


V_DAPO = "val-core/dapo_val/acc/mean@1"


def s20() -> Story:
    """verl DAPO recipe (+-1 reward with the soft overlong penalty from 3072 of 4096 tokens), finished."""
    pen = knots((0, 0.0), (800, .01), (1000, .06), (1500, .22))

    def more(row, s, rng):
        acc = row.pop("x_acc")
        row["critic/score/mean"] = 2 * acc - 1 - pen(s) * math.exp(.1 * rng.normal())
        row["critic/rewards/mean"] = row["critic/score/mean"]
        row["train/num_gen_batches"] = round(row["train/num_gen_batches"])
    return Story(knots((0, .30), (900, .55), (1500, .57)), P=128, G=16, names={"mean": "x_acc"},
                 side={"response_length/mean": M(knots((0, 1800), (900, 2700), (1500, 3350))),
                       "response_length/clip_ratio": M(knots((0, .01), (900, .03), (1500, .08)), .1),
                       "actor/entropy": M(knots((0, .42), (1500, .37))), "actor/pg_clipfrac": M(const(.01)),
                       "actor/grad_norm": GN(const(.16)), "actor/lr": X(const(1e-6)),
                       "actor/pg_loss": A(const(0.0), .01, 0),
                       "train/num_gen_batches": M(knots((0, 1.3), (1500, 1.8)), .1)},
                 derive=more, evals={V_DAPO: (knots((0, .28), (800, .44), (1000, .465), (1500, .47)), 500, None)},
                 eval_every=50, eval_at0=True, headline=V_DAPO, sps=140, age_h=5.0)


def s21() -> Story:
    """TRL KTO, two epochs, linear LR decay: eval loss flat since ~1300."""
    return Story(None, rkind="none", log_every=10,
                 side={"loss": M(knots((0, .50), (600, .37), (1300, .335), (2000, .325)), .04),
                       "rewards/chosen": A(knots((0, 0.0), (1300, .55), (2000, .60)), .05),
                       "rewards/rejected": A(knots((0, 0.0), (1300, -1.1), (2000, -1.2)), .08),
                       "logps/chosen": A(knots((0, -210), (2000, -205)), 2.0),
                       "logps/rejected": A(knots((0, -230), (2000, -262)), 3.0),
                       "kl": M(knots((0, .01), (2000, .9))), "grad_norm": GN(const(3.2)),
                       "learning_rate": X(warm(5e-7, 100, 2000))},
                 derive=diff("rewards/margins", "rewards/chosen", "rewards/rejected"),
                 evals={"eval_loss": (knots((0, .50), (600, .355), (1300, .331), (2000, .328)), 1000, .2),
                        "eval_rewards/chosen": (knots((0, 0.0), (1300, .5), (2000, .55)), 1000, .8),
                        "eval_rewards/margins": (knots((0, 0.0), (1300, 1.5), (2000, 1.6)), 1000, 1.5),
                        "eval_kl": (knots((0, .01), (2000, .85)), 1000, .3)},
                 eval_every=100, eval_at0=False, headline="eval_loss", lower_better=True, sps=15, age_h=.02)


def s22() -> Story:
    """TRL OnlineDPO with a reward model, judge win rate vs the SFT model on 805 prompts every 100 steps."""
    def more(row, s, rng):
        row["objective/non_score_reward"] = -row["beta"] * row["objective/kl"]
        row["objective/rlhf_reward"] = row["objective/scores"] + row["objective/non_score_reward"]
        row["rewards/margins"] = row["rewards/chosen"] - row["rewards/rejected"]
        row["val/contain_eos_token"] = min(1.0, row["val/contain_eos_token"])
    return Story(knots((0, .2), (600, 1.9), (1100, 2.25), (1500, 2.45)), rkind="score", P=16, G=2, rsd=1.5, psd=.8,
                 log_every=10, names={"mean": "objective/scores"},
                 side={"objective/kl": M(knots((0, .5), (600, 8.0), (1100, 11.0), (1500, 16.0))),
                       "objective/entropy": M(knots((0, 160), (1500, 140))),
                       "objective/scores_margin": M(knots((0, 1.1), (1500, .9))),
                       "rewards/chosen": A(knots((0, 0.0), (1500, .9)), .08),
                       "rewards/rejected": A(knots((0, 0.0), (1500, .2)), .08),
                       "rewards/accuracies": A(knots((0, .55), (1500, .64)), .03),
                       "logps/chosen": A(knots((0, -180), (1500, -250)), 4.0),
                       "logps/rejected": A(knots((0, -185), (1500, -262)), 4.0),
                       "val/contain_eos_token": A(knots((0, .98), (1100, .97), (1500, .92)), .01),
                       "loss": M(knots((0, .69), (1500, .62)), .03), "grad_norm": GN(const(6.0)),
                       "learning_rate": X(warm(5e-7, 50, 2500)), "beta": X(const(.1))},
                 derive=more,
                 evals={"eval_judge_winrate": (knots((0, .50), (600, .62), (1100, .625), (1500, .607), (2500, .58)),
                                               805, None)},
                 eval_every=100, eval_at0=True, headline="eval_judge_winrate", sps=40, age_h=.25)


def s23() -> Story:
    """OpenRLHF PPO with a critic: the critic drifts from ~900, GSM8K falls; NCCL watchdog kills the job."""
    return Story(knots((0, -.2), (880, 1.1), (1150, 1.0)), rkind="score", P=128, G=1, rsd=1.0, psd=.5,
                 average=False, names={"mean": "reward"},
                 side={"critic_loss": M(knots((0, .35), (880, .08), (950, .12), (1150, .9))),
                       "values": A(knots((0, -.1), (880, 1.0), (1150, 2.6)), .05),
                       "return": A(knots((0, -.25), (880, 1.05), (1150, .9)), .05),
                       "kl": M(knots((0, .001), (880, .05), (1150, .14))), "policy_loss": A(const(0.0), .02, 0),
                       "actor_grad_norm": GN(knots((0, .3), (900, .3), (1150, .8))),
                       "critic_grad_norm": GN(knots((0, 2.0), (880, 1.2), (1150, 9.0))),
                       "response_length": M(knots((0, 220), (880, 260), (1150, 330))),
                       "ppo_clip_ratio": M(knots((0, .02), (880, .025), (1150, .09))),
                       "actor_lr": X(const(5e-7)), "critic_lr": X(const(9e-6)), "truncated": M(const(.01), .2)},
                 evals={"eval_gsm8k_pass1": (knots((0, .55), (860, .72), (900, .722), (1150, .665)), 1319, None)},
                 eval_every=40, eval_at0=False, headline="eval_gsm8k_pass1", sps=38, age_h=3.0)


def s24() -> Story:
    """Hand-written GRPO for factual QA, reward = a small judge's supported-claim fraction."""
    return Story(knots((0, .55), (800, .72), (1300, .80)), rkind="score", P=32, G=4, rsd=.18, psd=.1,
                 names={"mean": "reward", "std": "reward_std"},
                 side={"kl": M(knots((0, .0005), (800, .02), (1300, .05))), "entropy": M(knots((0, .60), (1300, .52))),
                       "mean_len": M(knots((0, 210), (800, 260), (1300, 380))), "grad_norm": GN(const(.4)),
                       "lr": X(const(1e-6))},
                 evals={"heldout_halluc_rate": (knots((0, .24), (600, .125), (800, .122), (1300, .19)), 800, None),
                        "heldout_claims_per_answer": (knots((0, 3.1), (800, 3.6), (1300, 5.2)), 800, 1.5)},
                 eval_every=100, eval_at0=True, headline="heldout_halluc_rate", lower_better=True, sps=30, age_h=.03)


def s25() -> Story:
    """TRL GRPO with a 5000-problem eval every 500 steps that takes hours."""
    return Story(knots((0, .22), (1000, .44), (3000, .55)), P=32, G=8, log_every=10, names=TRL_R,
                 side={"loss": A(const(0.0), .008, 0), "grad_norm": GN(const(.2)), "learning_rate": X(warm(1e-6, 50)),
                       "completions/mean_length": M(knots((0, 400), (1000, 560))),
                       "entropy": M(knots((0, .60), (1000, .50))), "clip_ratio/region_mean": X(const(0.0))},
                 derive=copy("reward", "rewards/accuracy_reward/mean"),
                 evals={EV_ACC: (knots((0, .25), (500, .36), (1000, .43)), 5000, None)},
                 eval_derive=ev_copy(EV_ACC, "eval_reward"),
                 eval_steps=[0, 500], headline=EV_ACC, sps=45, age_h=2.25)


def s27() -> Story:
    """TRL CPOTrainer with loss_type='simpo' (gamma 0.5): train accuracy saturates, eval accuracy flat."""
    def more(row, s, rng):
        row["rewards/margins"] = row["rewards/chosen"] - row["rewards/rejected"]
    return Story(knots((0, .60), (700, .97), (1500, .995)), rkind="pref", P=32, log_every=10,
                 names={"mean": "rewards/accuracies"},
                 side={"loss": M(knots((0, 1.2), (700, .25), (1500, .08)), .05),
                       "rewards/chosen": A(knots((0, -1.0), (1500, -2.2)), .05),
                       "rewards/rejected": A(knots((0, -1.4), (700, -4.5), (1500, -7.8)), .1),
                       "logps/chosen": A(knots((0, -.50), (1500, -1.10)), .02),
                       "logps/rejected": A(knots((0, -.70), (1500, -3.9)), .05),
                       "logits/chosen": A(const(-1.4), .04), "logits/rejected": A(const(-1.38), .04),
                       "nll_loss": M(knots((0, .5), (1500, 1.1))), "grad_norm": GN(knots((0, 12), (1500, 30))),
                       "learning_rate": X(warm(5e-7, 150))},
                 derive=more,
                 evals={"eval_rewards/accuracies": (knots((0, .60), (500, .81), (700, .83), (1500, .832)), 1500, None),
                        "eval_loss": (knots((0, 1.2), (700, .62), (1500, .635)), 1500, 1.2)},
                 eval_every=100, eval_at0=False, headline="eval_rewards/accuracies", sps=10, age_h=.3)


def s28() -> Story:
    """TRL ORPOTrainer, 3 epochs of 600 steps: epoch 2 memorises, held-out preference accuracy turns down."""
    def more(row, s, rng):
        row["rewards/margins"] = row["rewards/chosen"] - row["rewards/rejected"]
        row["logps/chosen"] = row["rewards/chosen"] / .1
        row["logps/rejected"] = row["rewards/rejected"] / .1
    return Story(knots((0, .55), (600, .72), (620, .80), (1200, .86), (1220, .93), (1500, .95)), rkind="pref", P=16,
                 log_every=10, names={"mean": "rewards/accuracies"},
                 side={"loss": M(knots((0, 1.45), (600, 1.05), (620, .90), (1200, .78), (1220, .62), (1500, .58)),
                                 .03),
                       "nll_loss": M(knots((0, 1.3), (600, .98), (620, .85), (1200, .74), (1220, .60), (1500, .56)),
                                     .03),
                       "log_odds_ratio": A(knots((0, -.75), (600, -.45), (620, -.35), (1500, -.15)), .03),
                       "log_odds_chosen": A(knots((0, .1), (600, .9), (1500, 2.6)), .1),
                       "rewards/chosen": A(knots((0, -.12), (1500, -.06)), .01),
                       "rewards/rejected": A(knots((0, -.13), (1500, -.25)), .01),
                       "grad_norm": GN(const(5.0)), "learning_rate": X(warm(8e-6, 60, 1800))},
                 derive=more,
                 evals={"eval_rewards/accuracies": (knots((0, .58), (450, .695), (600, .705), (700, .703), (1200, .67),
                                                          (1500, .655)), 1000, None),
                        "eval_nll_loss": (knots((0, 1.3), (600, 1.0), (700, 1.01), (1500, 1.16)), 1000, .6),
                        "eval_loss": (knots((0, 1.45), (600, 1.08), (1500, 1.2)), 1000, .7)},
                 eval_every=100, eval_at0=False, headline="eval_rewards/accuracies", sps=20, age_h=.04)


def s29() -> Story:
    """verl REINFORCE++ (KL in reward), no validation set: train score plateau 900-1300, then a slow slide."""
    def more(row, s, rng):
        row["critic/rewards/mean"] = row["critic/score/mean"] - .001 * row["actor/reward_kl_penalty"]
    return Story(knots((0, .30), (900, .58), (1300, .585), (1600, .50)), P=512, G=1,
                 names={"mean": "critic/score/mean"},
                 side={"actor/reward_kl_penalty": M(knots((0, .2), (1300, 3.1), (1600, 4.0))),
                       "actor/reward_kl_penalty_coeff": X(const(.001)),
                       "actor/entropy": M(knots((0, .58), (1300, .40), (1600, .34))),
                       "response_length/mean": M(knots((0, 520), (1300, 610), (1600, 640))),
                       "response_length/clip_ratio": M(const(.01), .15),
                       "actor/pg_clipfrac": M(const(.004), .15), "actor/grad_norm": GN(const(.22)),
                       "actor/lr": X(const(5e-7)), "critic/advantages/mean": A(const(0.0), .003, 0),
                       "actor/pg_loss": A(const(0.0), .01, 0)},
                 derive=more, headline=TRAIN, sps=70, age_h=.03)


# ------------------------------------------------------------------------------------------- per-case writers

def row_at(run: dict, s: int) -> dict:
    return next(v for t, v in run["train"] if t == s)


def w01(run, folder):
    def ent(n, run):
        v = row_at(run, n)
        return {"entropy_ctrl_state.json": json.dumps({"entropy_coef": r6(v["entropy_coef"]), "target_entropy": 0.3,
                                                       "coef_lr": 0.002, "min_coef": 0.0, "max_coef": 0.05,
                                                       "global_step": n}, indent=2) + "\n"}
    w_trl_ckpts(run, folder, save_every=100, keep=3, eval_steps=100, ckpt_extra=ent, weights="full",
                out="outputs/qwen3-4b-grpo-entctl")


def w02(run, folder):
    w_verl_console(run, folder, "train_grpo_math.log", numpy2=True, total=1200, save_every=100,
                   exp="math/qwen25-7b-grpo")
    verl_ckpts(run, folder, "checkpoints/math/qwen25-7b-grpo", [100, 200, 300, 400])


def w03(run, folder):
    t0 = iso(run["t"](0) - 40)
    head = [f"[INFO|trainer.py:2414] {t0},118 >> ***** Running training *****",
            f"[INFO|trainer.py:2415] {t0},118 >>   Num examples = 12,000",
            f"[INFO|trainer.py:2417] {t0},118 >>   Instantaneous batch size per device = 2",
            f"[INFO|trainer.py:2422] {t0},118 >>   Gradient Accumulation steps = 8",
            f"[INFO|trainer.py:2423] {t0},118 >>   Total optimization steps = 2,000",
            f"[INFO|trainer.py:2424] {t0},121 >>   Number of trainable parameters = 32,763,876,352",
            "GRPOConfig(beta=0.0, num_generations=8, max_completion_length=2048, learning_rate=5e-07, "
            "max_grad_norm=1.0, logging_steps=10, eval_strategy='steps', eval_steps=100, max_steps=2000, "
            "bf16=True, use_vllm=True, vllm_mode='server')"]
    w_trl_console(run, folder, "grpo_qwen25_32b.out", spe=750, head=head)


def w04(run, folder):
    w_tb(run, folder, "tensorboard/qwen25-7b-grpo-sorted", host="node-a3", pid=88211)


def w05(run, folder):
    w_tb(run, folder, "logs/exp_004/tensorboard", tpre="", epre="", host="nemo-rl-0", pid=1207)
    p = folder / "grpo_math_1B_wsd.yaml"
    p.write_text("grpo:\n  num_prompts_per_step: 32\n  num_generations_per_prompt: 16\n  max_num_steps: 3000\n"
                 "  val_period: 100\n  val_at_start: true\npolicy:\n  model_name: Qwen/Qwen2.5-1.5B\n"
                 "  optimizer:\n    name: torch.optim.AdamW\n    kwargs:\n      lr: 2.0e-6\n"
                 "  scheduler:\n    - name: torch.optim.lr_scheduler.LinearLR   # warmup\n"
                 "      kwargs: {start_factor: 0.0, end_factor: 1.0, total_iters: 100}\n"
                 "    - name: torch.optim.lr_scheduler.ConstantLR  # stable\n"
                 "      kwargs: {factor: 1.0, total_iters: 2300}\n"
                 "    - name: torch.optim.lr_scheduler.LinearLR   # decay\n"
                 "      kwargs: {start_factor: 1.0, end_factor: 0.1, total_iters: 600}\n"
                 "    - milestones: [100, 2400]\nlogger:\n  log_dir: logs\n  tensorboard_enabled: true\n")
    stamp(run, p, run["t"](0) - 600)


def w06(run, folder):
    t = run["t"]
    with (folder / "train_log.jsonl").open("w") as fh:
        for s, v in run["train"]:
            fh.write(json.dumps({"step": s, "total_steps": 2500, **{k: r6(x) for k, x in v.items()},
                                 "time": round(t(s), 1)}) + "\n")
    stamp(run, folder / "train_log.jsonl", t(run["reached"]) + 1)
    with (folder / "eval_log.jsonl").open("w") as fh:
        for s, v in run["eval"]:
            fh.write(json.dumps({"step": s, "ckpt": f"ckpt/step_{s:06d}", "heldout_acc": v["heldout_acc"],
                                 "n": 400, "time": round(t(s) + 900, 1)}) + "\n")
    stamp(run, folder / "eval_log.jsonl", t(600) + 900)
    (folder / "evaluator.log").write_text(
        f"{iso(t(600) + 905)} INFO evaluated ckpt/step_000600: heldout_acc={run['eval'][-1][1]['heldout_acc']:.4f}\n"
        f"{iso(t(700) + 60)} INFO new checkpoint ckpt/step_000700, loading\n"
        "Traceback (most recent call last):\n  File \"eval_watch.py\", line 88, in <module>\n"
        "    llm = LLM(model=path, gpu_memory_utilization=0.45)\n"
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 7 has a total capacity of "
        "79.19 GiB of which 1.12 GiB is free.\n")
    stamp(run, folder / "evaluator.log", t(700) + 75)
    for n in range(100, run["reached"] + 1, 100):
        d = folder / "ckpt" / f"step_{n:06d}"
        d.mkdir(parents=True)
        (d / "model.safetensors").write_bytes(b"\0" * 32)
        stamp(run, d / "model.safetensors", t(n) + 30)
        stamp(run, d, t(n) + 30)


def w07(run, folder):
    old = run["old"]
    w_trl_ckpts(old, folder, save_every=500, keep=2, eval_steps=200, finished=True, out="outputs/grpo-qwen25-3b")
    run["stamps"].update(old["stamps"])
    w_trl_ckpts(run, folder, save_every=200, eval_steps=200, out="outputs/grpo-qwen25-3b")


def w08(run, folder):
    w_mlflow_db(run, folder, name="qwen25-7b-ipo-b0.1",
                params={"loss_type": "ipo", "beta": 0.1, "num_train_epochs": 2, "max_steps": -1,
                        "per_device_train_batch_size": 8, "gradient_accumulation_steps": 1, "learning_rate": 5e-7,
                        "lr_scheduler_type": "linear", "warmup_steps": 150, "logging_steps": 10, "eval_steps": 100,
                        "eval_on_start": True, "train_dataset_rows": 92800})


def w09(run, folder):
    head = ["[2026-11-26 21:03:11,402] [INFO] Namespace(pretrain='Qwen/Qwen2.5-Math-7B', advantage_estimator="
            "'reinforce', n_samples_per_prompt=4, rollout_batch_size=128, max_samples=307200, num_episodes=1, "
            "actor_learning_rate=5e-07, init_kl_coef=0.001, eval_steps=100, save_steps=100, logging_steps=1)",
            "[2026-11-26 21:05:40,877] [INFO] Total steps: 2400"]
    tail = ["srun: Job step aborted: Waiting up to 32 seconds for job step to finish.",
            f"slurmstepd: error: *** JOB 4418821 ON gpu-st-p5-17 CANCELLED AT "
            f"{time.strftime('%Y-%m-%dT%H:%M:%S', time.localtime(run['t'](run['reached']) + 30))} "
            f"DUE TO TIME LIMIT ***"]
    w_openrlhf_console(run, folder, "slurm-4418821.out", head=head, tail=tail)
    for n in range(100, run["reached"] + 1, 100):
        d = folder / "ckpt" / "_actor" / f"global_step{n}"
        d.mkdir(parents=True)
        (d / "mp_rank_00_model_states.pt").write_bytes(b"\0" * 32)
        stamp(run, d / "mp_rank_00_model_states.pt", run["t"](n) + 40)
        stamp(run, d, run["t"](n) + 40)


def w10(run, folder):
    w_wandb_csv(run, folder, ["train/reward", "train/rewards/accuracy_reward/mean", "train/completions/mean_length",
                              "train/entropy", "train/grad_norm", EV_W],
                display="drgrpo-qwen25-3b-mix-bucketed", xaxis="train/global_step")


def w11(run, folder):
    w_tb(run, folder, "runs/Nov26_09-14-55_gpu-h100-31", keymap=lambda k: k.removeprefix("eval_"),
         host="gpu-h100-31", pid=51873, spe=2500)
    w_trl_ckpts(run, folder, save_every=250, eval_steps=50, weights="full", out="outputs/qwen3-30b-a3b-grpo")


def w12(run, folder):
    w_trl_ckpts(run, folder, save_every=200, keep=2, eval_steps=200, finished=True, top_level=True, spe=1000,
                epochs=3, best=("eval_loss", False), out="outputs/llama31-8b-dpo-uf")


def early_stop(run: dict, key: str = "eval_loss", patience: int = 3) -> dict:
    best, bad = None, 0
    for s, v in run["eval"]:
        if best is None or v[key] < best:
            best, bad = v[key], 0
        else:
            bad += 1
            if bad >= patience:
                run["train"] = [(t, r) for t, r in run["train"] if t <= s]
                run["eval"] = [(t, r) for t, r in run["eval"] if t <= s]
                run["reached"] = s
                return run
    raise AssertionError("no early stop within the drawn steps")


def w13(run, folder):
    hydra_config(folder, run, 3000, 20, 100, "math_mix", "qwen25-7b-grpo", logger="['file','wandb']")
    w_verl_jsonl(run, folder, "logs/math_mix/qwen25-7b-grpo.jsonl", start=1000)
    t = run["t"]
    verl_ckpts(run, folder, "checkpoints/math_mix/qwen25-7b-grpo", [*range(100, 1001, 100), 1100],
               {n: t(n) + 60 - (5400 if n <= 1000 else 0) for n in range(100, 1101, 100)})
    (folder / "relaunch.log").write_text("\n".join([
        f"{iso(t(1000) - 900)},044 INFO worker.py:1843 -- Started a local Ray instance.",
        "(TaskRunner pid=7731) tokenizer: Qwen/Qwen2.5-7B-Instruct (revision main, refreshed from the hub)",
        "(TaskRunner pid=7731) Load from checkpoint folder: checkpoints/math_mix/qwen25-7b-grpo/global_step_1000",
        "(TaskRunner pid=7731) Setting global step to 1000",
        "(TaskRunner pid=7731) Resuming from checkpoints/math_mix/qwen25-7b-grpo/global_step_1000",
        "(TaskRunner pid=7731) Initial validation metrics: see logs/math_mix/qwen25-7b-grpo.jsonl", ""]))
    stamp(run, folder / "relaunch.log", t(1020) + 20)


def w14(run, folder):
    w_tb(run, folder, "logs/tensorboard/dpo_llama31_8b_mix", host="dgx-11", pid=4410)


def w15(run, folder):
    ev = dict(run["eval"])
    p = folder / "metrics.jsonl"
    with p.open("w") as fh:
        if 0 in ev:
            fh.write(json.dumps({"step": 0, EV_STRICT: ev[0][EV_STRICT], "eval/n": 600}) + "\n")
        for s, v in run["train"]:
            fh.write(json.dumps({"step": s, "total_steps": 2000, **{k: r6(x) for k, x in v.items()}}) + "\n")
            if s in ev:
                fh.write(json.dumps({"step": s, EV_STRICT: ev[s][EV_STRICT], "eval/n": 600}) + "\n")
    stamp(run, p, run["t"](run["reached"]) + 1)


def w16(run, folder):
    hydra_config(folder, run, 1000, 50, 100, "deepscaler", "r1-distill-7b-grpo-512",
                 extra="", logger="['console','wandb']")
    cfg = folder / ".hydra" / "config.yaml"
    cfg.write_text(cfg.read_text().replace("max_prompt_length: 1024", "max_prompt_length: 512\n  truncation: right"))
    w_verl_console(run, folder, "verl_grpo_deepscaler.log", numpy2=False, total=1000, save_every=100,
                   exp="deepscaler/r1-distill-7b-grpo-512")


def w17(run, folder):
    w_trackio(run, folder, project="rloo-math-small", name="rloo-qwen25-1.5b-k4",
              config={"max_steps": 2000, "num_generations": 4, "beta": 0.05, "per_device_train_batch_size": 8,
                      "learning_rate": 1e-6, "train_dataset_rows": 64, "eval_steps": 100, "_Username": "rl"})


def w18(run, folder):
    w_mlflow_files(run, folder, exp_id="271828182845904523", rid="a0c4e6f81b3d4c2e8f7a6b5c4d3e2f10",
                   name="ppo-gpt2-large-hh", params={"batch_size": 64, "mini_batch_size": 8, "ppo_epochs": 4,
                                                     "init_kl_coef": 0.2, "adap_kl_ctrl": True, "target": 6,
                                                     "horizon": 10000, "learning_rate": 1.41e-5, "steps": 1200,
                                                     "gen_min_new_tokens": 48, "gen_top_k": 50, "gen_top_p": 0.9})
    lines = []
    for s, v in run["train"]:
        if v["objective/kl"] < -1.0 and s % 25 == 0:
            lines.append(f"/opt/conda/lib/python3.10/site-packages/trl/trainer/ppo_trainer.py:1313: UserWarning: KL "
                         f"divergence is starting to become negative: {v['objective/kl']:.2f} - this might be a "
                         f"precursor for failed training. sometimes this happens because the generation kwargs are "
                         f"not correctly set. Please make sure that the generation kwargs are set correctly, or "
                         f"review your training hyperparameters.")
    (folder / "ppo_train.err").write_text("\n".join(lines) + "\n")


def w19(run, folder):
    w_wandb_csv(run, folder, [V_M5, "critic/score/mean", "actor/entropy", "actor/pg_clipfrac", "response_length/mean",
                              "actor/grad_norm"], display="gspo-qwen3-8b-math-lr2e-6")


def w20(run, folder):
    hydra_config(folder, run, 1500, 50, 100, "dapo", "qwen25-32b-dapo",
                 extra="reward_model:\n  overlong_buffer:\n    enable: true\n    len: 1024\n    penalty_factor: 1.0\n")
    w_verl_jsonl(run, folder, "logs/dapo/qwen25-32b-dapo.jsonl")
    verl_ckpts(run, folder, "checkpoints/dapo/qwen25-32b-dapo", [1300, 1400, 1500])


def w21(run, folder):
    head = ["***** Running training *****", "  Num examples = 32,000", "  Num Epochs = 2",
            "  Total optimization steps = 2,000", "KTOConfig(beta=0.1, desirable_weight=1.0, undesirable_weight=1.0, "
            "learning_rate=5e-07, lr_scheduler_type='linear', warmup_steps=100, logging_steps=10, eval_steps=100)"]
    w_trl_console(run, folder, "kto_mistral7b.log", spe=1000, head=head)


def w22(run, folder):
    w_trl_ckpts(run, folder, save_every=100, keep=3, eval_steps=100, out="outputs/online-dpo-qwen25-7b-rm")


def w23(run, folder):
    w_tb(run, folder, "tensorboard/ppo_llama3_8b_gsm8k", host="h100-a-07", pid=2231)
    head = ["[2026-11-26 19:40:02,310] [INFO] Namespace(pretrain='meta-llama/Meta-Llama-3-8B-Instruct', "
            "critic_pretrain='rm/llama3-8b-rm', advantage_estimator='gae', rollout_batch_size=128, "
            "max_samples=256000, eval_steps=40, save_steps=100, logging_steps=1)"]
    crash = run["t"](run["reached"]) + 1800
    tail = [f"[rank3]:[E{time.strftime('%m%d %H:%M:%S', time.localtime(crash))}.118 ProcessGroupNCCL.cpp:616] "
            "[Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1840213, OpType=ALLREDUCE, "
            "NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800095 milliseconds before timing out.",
            "Traceback (most recent call last):",
            "  File \"/openrlhf/cli/train_ppo_ray.py\", line 417, in <module>", "    train(args)",
            "ray.exceptions.RayTaskError(DistBackendError): ray::CriticModelActor.fit() (pid=30817, ip=10.1.4.7)",
            "torch.distributed.DistBackendError: NCCL communicator was aborted on rank 3."]
    w_openrlhf_console(run, folder, "train_ppo.log", head=head, tail=tail, episodes_total=2000)
    stamp(run, folder / "train_ppo.log", crash + 5)


def w24(run, folder):
    ev = dict(run["eval"])
    p = folder / "metrics.csv"
    cols = ["step", "total_steps", "reward", "reward_std", "kl", "entropy", "mean_len", "grad_norm", "lr",
            "heldout_halluc_rate", "heldout_claims_per_answer", "heldout_n"]
    with p.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(cols)
        if 0 in ev:
            w.writerow([0, 2000, *([""] * 7), f"{ev[0]['heldout_halluc_rate']:.4f}",
                        f"{ev[0]['heldout_claims_per_answer']:.3f}", 800])
        for s, v in run["train"]:
            e = ev.get(s, {})
            w.writerow([s, 2000, *(f"{v[k]:.5g}" for k in cols[2:9]),
                        f"{e['heldout_halluc_rate']:.4f}" if e else "",
                        f"{e['heldout_claims_per_answer']:.3f}" if e else "", 800 if e else ""])
    stamp(run, p, run["t"](run["reached"]) + 1)


def w25(run, folder):
    head = ["***** Running training *****", "  Num examples = 48,000", "  Total optimization steps = 3,000",
            "GRPOConfig(num_generations=8, learning_rate=1e-06, logging_steps=10, eval_steps=500, "
            "eval_on_start=True, per_device_eval_batch_size=32, max_steps=3000)"]
    bars = []
    for i in range(0, 65, 2):
        el = i * 126.0
        bars.append(f"{int(100 * i / 157):3d}%|{('█' * (int(100 * i / 157) // 10)).ljust(10)}| {i}/157 "
                    f"[{int(el // 3600)}:{int(el % 3600 // 60):02d}:{int(el % 60):02d}<?, 126.0s/it]")
    tail_raw = "***** Running Evaluation *****\n  Num examples = 5000\n  Batch size = 32\n" + "\r".join(bars)
    w_trl_console(run, folder, "grpo_run.out", spe=1500, head=head, tail_raw=tail_raw)
    stamp(run, folder / "grpo_run.out", NOW - 40)


def w27(run, folder):
    w_trl_ckpts(run, folder, save_every=250, keep=2, eval_steps=100, spe=1000, epochs=3,
                out="outputs/simpo-llama3-8b-it")


def w28(run, folder):
    w_tb(run, folder, "runs/Nov27_06-02-11_a100-node3", keymap=lambda k: k.removeprefix("eval_"),
         host="a100-node3", pid=7302, spe=600)


def w29(run, folder):
    w_verl_console(run, folder, "reinforcepp_qwen25_7b.log", numpy2=False, total=2500, save_every=250,
                   exp="gsm_math/qwen25-7b-rpp")


# --------------------------------------------------------------------------------------------------- the cases

@dataclass
class Spec:
    name: str
    story: Story
    write: Callable
    seed: int
    steps: tuple[int, int]  # (reached, planned)
    kind: str  # ok | conv | stop | rb | sor
    tags: str
    why: str
    onset: int | None = None
    draw_to: int | None = None
    post: Callable | None = None

    def run(self) -> dict:
        reached, planned = self.steps
        rng = np.random.default_rng(self.seed)
        run = self.story.draws(rng, self.draw_to or reached)
        run.update(reached=self.draw_to or reached, planned=planned)
        if self.post:
            run = self.post(run)
        run.update(t=timer(self.story, run["reached"]), sps=self.story.sps, stamps={})
        return run

    def labels(self) -> dict:
        reached = self.steps[0]
        if self.kind == "ok":
            return dict(HEALTHY)
        if self.kind == "conv":
            return {**converged(), "onset_step": self.onset}
        if self.kind == "stop":
            return stop(self.onset)
        lo, hi = self.story.window(reached, self.onset)
        return (rollback if self.kind == "rb" else stop_or_rollback)(lo, hi, self.onset)


def post07(run: dict) -> dict:
    st = s07(old=True)
    old = st.draws(np.random.default_rng(2707), 2000)
    old.update(reached=2000, planned=2000, t=timer(st, 2000), sps=st.sps, stamps={})
    run["old"] = old
    return run


SPECS: list[Spec] = [
    # ----------------------------------------------------------------------------------- healthy look-alikes
    Spec("ok-trl19-grpo-adaptive-entropy-coef-swings-0-to-0.022-entropy-pinned-0.30-eval-rising-ckpts-limit3-at-40pct",
         s01(), w01, 2854, (800, 2000), "ok",
         "healthy lookalike trl trainer_state checkpoints grpo entropy-control",
         "TRL 1.9 GRPO (Qwen3-4B, beta 0, on-policy so every clip_ratio is exactly 0) with the adaptive entropy "
         "controller: entropy fell from 0.46 to the 0.30 target by step 150 and is held there, while entropy_coef "
         "swings between 0 and ~0.022 as the controller pushes back and forth, and loss = policy_loss - coef * "
         "entropy swings with it. A judge reading the flat entropy and the oscillating coefficient as trouble is "
         "wrong: the controller is doing its job. Accuracy reward 0.28 -> 0.47, held-out accuracy (500 problems, "
         "sd 0.022) 0.40 at 300 -> 0.46 at 800 of 2000, still rising ~0.013 per 100 steps. Checkpoint folders "
         "only (save_total_limit 3), newest save 20 minutes ago: live. Continue."),
    Spec("ok-verl-console-np2-pg-loss-flips-negative-from-240-as-correct-answers-lengthen-val-rising-at-420-of-1200",
         s02(), w02, 2954, (420, 1200), "ok",
         "healthy lookalike verl console numpy2 grpo pg-loss-sign",
         "verl GRPO with token-mean loss aggregation. actor/pg_loss starts near +0.012 and crosses zero around "
         "step 240, reaching about -0.018 by 420: as the policy learns to reason longer, the correct responses "
         "(positive advantage) become the longer ones and carry more tokens, so the token-mean surrogate turns "
         "negative. The 'pg loss went negative after being positive' rule of thumb does not apply to GRPO. "
         "Score 0.22 -> 0.45, MATH-500 val (N=500, sd 0.022) 0.25 -> 0.43, still climbing; lengths 480 -> 760 "
         "with truncation near 1%; KL loss tiny. 420 of 1200 steps, written a minute ago. Continue."),
    Spec("ok-trl-console-dicts-32b-full-ft-grad-norm-preclip-10-to-40-clipped-at-1-reward-and-eval-rising-at-600-of-2000",
         s03(), w03, 2900, (600, 2000), "ok",
         "healthy lookalike trl console grad-norm-clipped full-finetune",
         "Full fine-tune GRPO of a 32B model (TRL console, printed log dicts and tqdm, max_grad_norm 1.0). The "
         "logged grad_norm is the pre-clip norm: it sits at 10-40 with a heavy tail on every log, 20-40x the "
         "clip threshold, so every update is clipped to norm 1 - normal for large full fine-tunes and constant "
         "from step 1, not a growing explosion. Reward 0.35 -> 0.52 and held-out accuracy (500, sd 0.022) "
         "0.33 -> 0.49 by step 600 of 2000, still rising; entropy and lengths drift gently. Continue."),
    Spec("ok-openrlhf-tb-difficulty-sorted-prompts-train-reward-slides-0.78-to-0.44-eval-pass1-rising-at-900-of-1500",
         s04(), w04, 2974, (900, 1500), "ok",
         "healthy lookalike tensorboard openrlhf grpo train-reward-falls eval-decides",
         "OpenRLHF GRPO over a prompt set sorted by difficulty and read without shuffling: each step draws "
         "harder prompts than the last, so train/reward slides steadily from 0.78 to 0.44 over 900 steps and "
         "responses lengthen 310 -> 880 tokens. The model is improving: eval math pass@1 (500 problems, sd "
         "0.022) 0.36 -> 0.50 and pass@8 0.62 -> 0.72, both still rising; KL small, clip ratio tiny, no "
         "spikes. The held-out series decides, not the train reward. Live; continue."),
    Spec("ok-nemo-tb-wsd-schedule-decay-phase-from-2400-reward-and-validation-step-up-live-at-2700-of-3000",
         s05(), w05, 2976, (2700, 3000), "ok",
         "healthy lookalike nemo tensorboard grpo wsd-schedule late-rise",
         "NeMo-RL GRPO with a warmup-stable-decay schedule (lr 2e-6 constant to 2400, then linear decay to "
         "2e-7 at 3000; the config sits next to the logs). Validation accuracy (500, sd 0.022) plateaued near "
         "0.57 from 1400 to 2400, then the decay phase lifted it to 0.62 by 2700 and train reward from 0.60 to "
         "0.65 - the usual annealing gain. 300 decay steps remain and the level is still rising ~0.015 per 100 "
         "steps: continue (a plateau-then-jump late in the run is the schedule, not an anomaly)."),
    Spec("ok-custom-jsonl-async-evaluator-oom-at-700-eval-file-3h-stale-train-reward-still-climbing-live-at-1000-of-2500",
         s06(), w06, 2706, (1000, 2500), "ok",
         "healthy lookalike custom jsonl separate-eval-file stale-eval train-headline",
         "Hand-written GRPO loop writing train_log.jsonl every step; a separate evaluator process scored each "
         "saved checkpoint into eval_log.jsonl but died with a CUDA OOM loading step 700 (evaluator.log), so "
         "the eval file stops at step 600 and is ~3 hours old while the training file was written a minute "
         "ago. Held-out accuracy rose 0.22 -> 0.38 (N=400) through 600; since then the only evidence is the "
         "train reward, which keeps climbing 0.37 -> 0.48 from 600 to 1000 (32x8 batches), with KL, entropy "
         "and lengths quiet. The run is live and improving at 40% of 2500; restart the evaluator, continue "
         "training."),
    Spec("ok-trl-ckpts-output-dir-reused-old-run-checkpoint-1500-2000-collapsed-3-days-ago-new-run-live-at-800-rising",
         s07(), w07, 3086, (800, 2000), "ok",
         "healthy lookalike trl trainer_state checkpoints reused-output-dir stale-checkpoints",
         "The output_dir was reused: checkpoint-1500 and checkpoint-2000 are left over from an earlier run "
         "(written 3 days ago, lr 5e-6, its history collapses from ~450 to a reward of 0.05), while the current "
         "run writes checkpoint-200..800 (newest 20 minutes ago). The highest-numbered checkpoint is not the "
         "newest. The current run is healthy: reward 0.30 -> 0.50 and held-out accuracy (500, sd 0.022) 0.35 at "
         "200 -> 0.48 at 800 of 2000, still rising, entropy and lengths normal. Judge the live run: continue."),
    Spec("ok-mlflow-db-trl-dpo-ipo-loss-starts-at-25-falls-to-15-eval-pref-acc-0.52-to-0.66-at-45pct",
         s08(), w08, 2790, (1300, 2900), "ok",
         "healthy lookalike mlflow sqlite dpo ipo loss-scale",
         "TRL DPO with loss_type='ipo', beta 0.1, logged through the HF MLflow callback into mlflow.db. The IPO "
         "loss is (h - 1/(2 beta))^2, so it starts at 25 rather than ln 2 and falls slowly to ~14 (grad norms "
         "40-60 for the same reason). Preference learning is real: eval_rewards/accuracies on 1000 pairs (sd "
         "0.015) 0.52 -> 0.66 at step 1300 of 2 epochs (2900 steps), eval_loss 25 -> 15.5, margins widening "
         "slowly, still rising. Continue."),
    Spec("ok-openrlhf-console-reinforcepp-slurm-time-limit-cancelled-at-1100-of-2400-40min-ago-still-rising",
         s09(), w09, 2847, (1100, 2400), "ok",
         "healthy lookalike openrlhf console reinforce++ crashed-slurm-time-limit resume",
         "OpenRLHF REINFORCE++ (4 samples per prompt) whose SLURM job hit its wall-clock limit 40 minutes ago at "
         "step 1100 of 2400 ('CANCELLED ... DUE TO TIME LIMIT' ends the log; checkpoints every 100 up to "
         "global_step1100). Nothing went wrong with training: reward 0.25 -> 0.52, MATH-500 pass@1 (sd 0.022) "
         "0.31 at 100 -> 0.47 at 1100, still rising ~0.013 per 100 steps, KL and vllm_kl small. More steps "
         "will pay: resubmit from the last checkpoint and continue."),
    Spec("ok-wandb-csv-trl-dr-grpo-source-bucketed-batches-reward-swings-0.1-to-0.9-step-to-step-eval-rising",
         s10(), w10, 2816, (900, 3000), "ok",
         "healthy lookalike wandb csv trl dr-grpo bucketed-sampler noisy-train-reward",
         "TRL Dr. GRPO (loss_type dr_grpo, scale_rewards none) with a sampler that fills each step from one "
         "source (GSM8K-like ~0.8, MATH ~0.5, olympiad ~0.15), exported from W&B panels. train/reward jumps "
         "between ~0.1 and ~0.9 from one step to the next and completion length swings with it; the mixture "
         "level moves only from 0.48 to 0.60. The held-out mix (600 problems, sd 0.02) rises 0.41 -> 0.52 by "
         "step 900. The swings are batch composition, not instability. Continue."),
    Spec("ok-trl-console-mid-run-5000-problem-eval-running-2h-no-train-rows-since-1000-eval-rising",
         s25(), w25, 2923, (1000, 3000), "ok",
         "healthy lookalike trl console long-eval-in-progress",
         "TRL GRPO with eval_on_start and a 5000-problem generative eval every 500 steps. The last training "
         "dict is step 1000 of 3000; since then the log shows '***** Running Evaluation *****' and a tqdm bar "
         "that has reached 64/157 batches after ~2h15m (the file is still being written). The run is not "
         "stalled: it is evaluating. Reward 0.22 -> 0.44, eval accuracy (N=5000, sd 0.007) 0.25 -> 0.36 at "
         "500, train still rising. Continue."),
    # ------------------------------------------------------------------------------------------ clear failures
    Spec("rb-hf-tb-trl19-grpo-moe-router-collapse-aux-loss-x4-from-700-logp-gap-x6-eval-0.545-to-0.40-live",
         s11(), w11, 2786, (1000, 2500), "rb",
         "rollback tensorboard trl grpo moe aux-loss train-inference-mismatch",
         "TRL 1.9 GRPO on a 30B-A3B MoE with vLLM importance-sampling correction (TensorBoard plus "
         "checkpoint-250/500/750/1000). From ~700 the router degrades: aux_loss 0.012 -> 0.05, the "
         "train-vs-vLLM logprob gap 0.0065 -> 0.04 with the IS ratio mean sagging to 0.96, entropy 0.33 -> "
         "0.61, lengths 1250 -> 1900 with 19% clipped, grad norm x4. Reward peaked ~0.555 at 700 and is 0.38; "
         "held-out accuracy (800, sd 0.018) peaked 0.545 at 700 and is 0.40 at 1000 (8 sd). Roll back to "
         "650-700 (checkpoint-750 is already past the onset; restore the newest save at or before 700).",
         onset=700),
    Spec("rb-trl029-dpo-early-stopped-patience-3-best-model-checkpoint-800-eval-pref-acc-0.70-to-0.63-finished",
         s12(), w12, 2811, (0, 3000), "rb",
         "rollback trl trainer_state dpo early-stopping finished best-model-checkpoint",
         "", onset=1000, draw_to=2000, post=early_stop),
    Spec("rb-verl-jsonl-overwritten-at-relaunch-1000-tokenizer-refresh-eos-lost-lengths-to-cap-val-0.62-to-0.08",
         s13(), w13, 2977, (1180, 3000), "rb",
         "rollback verl jsonl file-logger-overwritten relaunch eos-lost best-is-first-point",
         "verl GRPO relaunched from global_step_1000 with the tokenizer refreshed from the hub. The file "
         "logger reopened its JSONL in 'wb' mode, so the file now starts at the relaunch: a validation row at "
         "step 1000 (val acc 0.62 on 800 problems, sd 0.017) and then steps 1001-1180. From the first new step "
         "the policy stops emitting EOS: response length 720 -> 4010 of 4096, clip ratio 0.93, score 0.58 -> "
         "0.05, val 0.62 -> ~0.1. The best model on record is the very first logged point, global_step_1000 "
         "(on disk; global_step_1100 is after the break). Roll back to 1000 and fix the tokenizer.",
         onset=1000),
    Spec("rb-openrlhf-dpo-tb-second-shard-pairs-swapped-from-1200-train-acc-0.73-to-0.33-eval-acc-slides-stalled-3h",
         s14(), w14, 3083, (1600, 2400), "rb",
         "rollback tensorboard openrlhf dpo data-bug stalled",
         "OpenRLHF DPO (TensorBoard, current-step logging). The second data shard, reached at step 1200, has "
         "chosen and rejected swapped: train acc falls at once from 0.73 to 0.33 and loss jumps 0.52 -> 0.85, "
         "then the model starts learning the reversed preference (acc creeping back to 0.44). Held-out "
         "acc_mean on 2000 pairs (sd 0.010) was 0.71 from 1000 to 1200 and is 0.58 at 1600 (13 sd). The job "
         "then hung: no write for 3 hours. Roll back to 1000-1200.", onset=1200),
    Spec("rb-custom-jsonl-lenient-verifier-multiple-boxed-answers-1.0-to-3.6-per-response-strict-heldout-falls-from-650",
         s15(), w15, 3140, (1100, 2000), "rb",
         "rollback custom jsonl reward-hacking verifier-exploit",
         "Hand-written GRPO whose verifier accepts a response if any \\boxed{} answer matches. From ~650 the "
         "policy learns to box several candidate answers (boxed_per_response 1.05 -> 3.6): the lenient reward "
         "keeps climbing 0.55 -> 0.80 while the logged strict train accuracy turns down 0.54 -> 0.36. The "
         "strict held-out eval (600 problems, sd 0.020) peaked at 0.525 around 650 and is 0.38 at 1100 of 2000 "
         "(7 sd). Roll back to 600-650 and fix the verifier.", onset=650),
    Spec("stop-verl03-console-prompts-truncated-at-512-clip-ratio-0.96-score-flat-0.04-val-flat-0.05-stalled-5h",
         s16(), w16, 3129, (400, 1000), "stop",
         "stop verl console v03-keys never-learns config-bug stalled",
         "verl 0.3 GRPO launched with max_prompt_length 512 and truncation=right on a set whose prompts are "
         "longer (.hydra/config.yaml): prompt_length/clip_ratio is 0.96 on every step, so the question text is "
         "cut off for nearly every prompt. Score flat at ~0.04, val/test_score flat at 0.05 (N=500) from step "
         "0 to 400, only KL creeping; then the job hung 5 hours ago at 400 of 1000. Nothing is being learned "
         "and no earlier weights are better: stop and relaunch with a longer prompt budget."),
    Spec("stop-trackio-trl-rloo-filter-bug-left-64-prompts-memorised-reward-0.98-zero-std-heldout-flat-0.345-at-700",
         s17(), w17, 2856, (700, 2000), "stop",
         "stop trackio trl rloo memorised-tiny-trainset no-signal",
         "TRL RLOO (k=4, beta 0.05) whose dataset filter left 64 prompts (config: train_dataset_rows 64; epoch "
         "reaches ~87 by step 700). Train reward memorises them: 0.31 -> 0.97 by 350 and 0.985 now, "
         "frac_reward_zero_std ~0.95, grad norm down to 0.03, entropy 0.55 -> 0.12, KL still creeping to 0.09. "
         "Held-out eval_reward (500, sd 0.021) never moved: 0.34-0.35 from 100 to 700. Nothing more to gain "
         "and no earlier point is better: stop and fix the data filter.", onset=200),
    Spec("rb-mlflow-files-legacy-trl-ppo-kl-goes-negative-from-350-penalty-becomes-bonus-gold-rm-0.88-to-minus-0.75",
         s18(), w18, 3095, (700, 1200), "rb",
         "rollback mlflow file-store legacy-ppo negative-kl generation-kwargs",
         "Legacy TRL PPOTrainer (0.11 keys, accelerate MLflow tracker) sampling with min_new_tokens 48 and "
         "top_k 50 instead of the full distribution. From ~330 the k1 KL estimate falls and turns negative around 360 "
         "(objective/kl +3 -> -14, ppo_train.err repeats TRL's 'KL divergence is starting to become negative' warning), so "
         "the KL penalty becomes a bonus the policy farms: entropy 44 -> 95, responses 57 -> 118 tokens, "
         "clipfrac 0.06 -> 0.21, value explained variance 0.5 -> -0.4; env/reward_mean 1.35 -> -0.9. The gold "
         "RM score on 400 held-out prompts (sd 0.055) peaked 0.88 around 330 and is -0.75 at 700 of 1200. "
         "Roll back to 300-325.", onset=330),
    Spec("rb-custom-csv-factuality-grpo-heldout-hallucination-rate-lower-better-bottoms-0.122-at-800-climbs-to-0.19",
         s24(), w24, 3101, (1300, 2000), "rb",
         "rollback custom csv lower-is-better-eval judge-exploit",
         "Hand-written GRPO for factual QA rewarded by a small judge's supported-claim fraction. The train reward "
         "keeps rising 0.72 -> 0.80 from 800 to 1300 while answers grow 260 -> 380 tokens and claims per answer "
         "3.6 -> 5.2. The held-out hallucination rate from a stronger verifier (lower is better, N=800, sd "
         "0.012) fell 0.24 -> 0.125 by 600 and 0.122 at 800, then climbs to 0.19 at 1300 of 2000 (6 sd worse): "
         "the judge is being fooled by more, confident claims. Roll back to 600-800.", onset=800),
    # ------------------------------------------------------------------------------------------- subtle ones
    Spec("rb-wandb-csv-verl-gspo-double-hump-first-peak-0.62-at-520-second-hump-0.575-at-1000-now-0.525-live",
         s19(), w19, 3191, (1300, 3000), "rb",
         "rollback wandb csv verl gspo double-hump window-on-first-peak",
         "verl GSPO exported from W&B panels. MATH-500 val (N=500, sd 0.022) rose to 0.62 at ~520, fell to "
         "0.555 by 700 as entropy dipped to 0.26, recovered to a second, lower hump of 0.575 around 1000 "
         "(2 sd under the first) while entropy and clip fraction climbed again, and now slides to 0.525 at "
         "1300 with entropy 0.62 and lengths 2300. The recent hump looks like a recovery but never regained "
         "the first peak: the better model is the one at 440-560. Roll back there.", onset=560),
    Spec("stop-verl-jsonl-finished-1500-dapo-overlong-penalty-bites-score-peaks-900-slides-val-plateau-best-at-end",
         s20(), w20, 2764, (1500, 1500), "stop",
         "stop verl jsonl dapo finished overlong-penalty train-score-falls eval-decides",
         "verl DAPO recipe (+-1 reward with the soft overlong penalty from 3072 of 4096 tokens), finished at "
         "1500 of 1500 five hours ago (global_step_1500 saved). As responses lengthen 2700 -> 3350 tokens the "
         "penalty bites: critic/score/mean peaks near +0.06 around steps 900-1000 and slides to about -0.07 at the end. The "
         "acc-only validation (N=500, sd 0.022) is 0.465 at 1000 and 0.47 at 1500 - flat at its best, not "
         "declining. The final weights are as good as any: keep them (stop); the train-score slide is the "
         "penalty, not a worse model.", onset=1000),
    Spec("conv-trl-console-dicts-kto-eval-loss-flat-0.33-since-1300-at-1880-of-2000-linear-lr-near-zero",
         s21(), w21, 2960, (1880, 2000), "conv",
         "converged trl console kto lower-is-better-eval",
         "TRL KTO, two epochs, linear LR decay (3e-8 left at 1880 of 2000). Eval loss (lower is better, sd "
         "0.006) 0.50 -> 0.355 by 600, 0.331 at 1300 and 0.329 now; eval margins flat near 1.5-1.6; KL to the "
         "reference creeping. 120 steps at a near-zero LR remain: stopping now or letting it finish are "
         "both fine.", onset=1300),
    Spec("sor-trl-ckpts-online-dpo-judge-winrate-plateau-0.625-600-1100-eases-1sd-by-1500-kl-creeps-eos-dips",
         s22(), w22, 3100, (1500, 2500), "sor",
         "stop-or-rollback trl trainer_state online-dpo judge-winrate drift",
         "TRL OnlineDPO with a reward model; a judge win rate vs the SFT model on 805 prompts (sd 0.017) every "
         "100 steps. It rose 0.50 -> 0.62 by 600, held ~0.625 to 1100, and has eased to 0.607 at 1500 of 2500 "
         "(about 1 sd) while objective/scores keep rising 2.25 -> 2.45, KL 11 -> 16 and the EOS rate slips "
         "0.97 -> 0.92. The drift costs about one eval sd - not separable from noise on its own, but nothing is "
         "being gained: stop; restoring a checkpoint from the 600-1100 plateau is as good.", onset=1100),
    Spec("rb-openrlhf-ppo-tb-and-console-critic-drifts-from-900-gsm8k-0.722-to-0.67-nccl-watchdog-crash-2.5h-ago",
         s23(), w23, 2890, (1150, 2000), "rb",
         "rollback tensorboard openrlhf ppo critic-drift crashed",
         "OpenRLHF PPO with a critic (TensorBoard plus the console log). From ~900 the critic drifts: "
         "critic_loss 0.08 -> 0.9, values 1.0 -> 2.6 while returns stay ~1, critic grad norm x7, clip ratio "
         "0.025 -> 0.09; the RM reward stops rising (1.1 -> 1.0). GSM8K pass@1 (1319, sd 0.012) peaked 0.722 "
         "around 880-900 and is 0.672 at its last eval (1120; 4 sd). Then an NCCL watchdog timeout killed "
         "the job 2.5 hours ago, 30 minutes after step 1150. Do not just resume: roll back to 840-880.", onset=900),
    Spec("stop-trl-ckpts-cpo-simpo-train-acc-saturates-0.995-eval-pref-acc-flat-0.83-since-700-margins-grow",
         s27(), w27, 2832, (1500, 3000), "stop",
         "stop trl trainer_state simpo saturated drift-without-decline",
         "TRL CPOTrainer with loss_type='simpo' (3 epochs of 1000 steps, checkpoints every 250, limit 2). "
         "Train accuracy saturates at ~0.99 by epoch 1 and the margins keep widening (rejected reward -4.5 -> "
         "-7.8, nll_loss rising 0.8 -> 1.1), but held-out preference accuracy on 1500 pairs (sd 0.010) has "
         "been flat at 0.83 since ~700 and eval_loss flat. Half the plan is left, but nothing more is being "
         "gained and the current weights are as good as any: stop.", onset=700),
    Spec("rb-hf-tb-trl-orpo-epoch-2-memorises-train-acc-0.93-eval-pref-acc-0.705-to-0.655-eval-nll-up-live",
         s28(), w28, 3012, (1500, 1800), "rb",
         "rollback tensorboard trl orpo multi-epoch overfit",
         "TRL ORPO, three epochs of 600 steps, TensorBoard only. Each epoch boundary lifts train accuracy in a "
         "step (0.72 -> 0.80 at 600, 0.86 -> 0.93 at 1200) and drops the train loss: memorisation. Held-out "
         "preference accuracy on 1000 pairs (sd 0.014) reached 0.705 at 600, held 0.70 at 700, then fell to "
         "0.655 at 1500 (3.5 sd) while eval NLL rose 1.00 -> 1.16. Roll back to 500-700.", onset=700),
    Spec("rb-verl-console-reinforcepp-no-val-set-train-score-plateau-900-1300-slides-0.585-to-0.50-quiet-signals",
         s29(), w29, 2729, (1600, 2500), "rb",
         "rollback verl console reinforce++ train-headline slow-slide",
         "verl REINFORCE++ (KL folded into the reward) with no validation set, so critic/score/mean over 512 "
         "prompts per step (sd 0.022) is the only quality signal. It climbed to 0.58 by 900, held ~0.585 to "
         "1300, then slid steadily to 0.50 by 1600 of 2500 (3.9 sd) with no spike in any side signal (entropy "
         "and KL penalty drift gently). A real decline behind a long good stretch: roll back to the end of the "
         "plateau (~1300, the save at 1250).", onset=1300),
]


def _finish_specs() -> None:
    for sp in SPECS:
        if sp.post is early_stop:
            run = sp.run()
            reached = run["reached"]
            sp.steps = (reached, sp.steps[1])
            ev = dict(run["eval"])
            best = min(ev, key=lambda s: ev[s]["eval_loss"])
            sp.why = (
                "TRL 0.29 DPO (Llama-3.1-8B) with load_best_model_at_end, metric_for_best_model eval_loss and "
                f"EarlyStoppingCallback(patience 3): training stopped itself at step {reached} of max_steps 3000 "
                f"(top-level trainer_state.json, should_training_stop true) and best_model_checkpoint is "
                f"checkpoint-{best}. Planned: 3 epochs of 1000 steps. The train side looks better and better (accuracy 0.80 at "
                f"800 -> 0.90 at 1400, margins widening) as it starts to memorise the pairs; held-out preference accuracy on 1000 pairs (sd 0.0145) was "
                f"0.69-0.70 from 600 to 1000 and fell to 0.63 by 1400 (4.8 sd), eval_loss 0.572 -> 0.655. A finished run "
                f"whose best weights are behind it: roll back to 600-1000 (keep the saved best checkpoint).")
        if sp.post is None and sp.name.startswith("ok-trl-ckpts-output-dir-reused"):
            sp.post = post07


_finish_specs()
STORY = {sp.name: sp for sp in SPECS}
CASES = [Case(sp.name, lambda *_: None, sp.write, sp.seed, sp.steps, sp.labels(), sp.tags, sp.why) for sp in SPECS]


def write_run(case: Case, folder: Path) -> None:
    sp = STORY[case.name]
    run = sp.run()
    folder.mkdir(parents=True, exist_ok=True)
    sp.write(run, folder)
    apply_stamps(run, folder)


def check(cases: list[Case]) -> None:
    for c in cases:
        sp = STORY[c.name]
        st, reached = sp.story, sp.steps[0]
        lv, steps = st.level(), st.headline_steps(reached)
        b, bv = st.best(reached)
        sd = st.sd(bv)
        sign = -1 if st.lower_better else 1
        print(f"{c.name}\n    {c.labels.get('preferred')} accept={c.labels.get('accept')} "
              f"window={c.labels.get('rollback_window')} onset={c.labels.get('onset_step')} "
              f"steps={reached}/{sp.steps[1]} age={st.age_h}h")
        print(f"    headline {st.headline}{' (lower better)' if st.lower_better else ''}: best {bv:.4f}@{b} "
              f"last {lv(steps[-1]):.4f}@{steps[-1]} sd {sd:.4f} ({sign * (bv - lv(steps[-1])) / sd:.1f} sd "
              f"from best)")
        run = sp.run()
        if st.headline == TRAIN:
            key = next(iter(st.names.values()))
            ser = [(s, v[key]) for s, v in run["train"] if s >= st.visible_from]
        else:
            ser = [(s, v[st.headline]) for s, v in run["eval"] if s >= st.visible_from]
        pick = ser[:: max(1, len(ser) // 14)]
        print("    drawn " + " ".join(f"{s}:{x:.3f}" for s, x in pick) + f" | last {ser[-1][0]}:{ser[-1][1]:.3f}")


HEADER = """# Holdout set 27: hand-built runs written by make_holdout27.py, independent of the assessor, its judges and the
# generators of the other holdout sets. Labels: what a careful practitioner should do under DESIGN.md's decision
# contract, read from the noise-free levels of each story. rollback_window is inclusive: from the first logged
# headline step whose level is within one sampling sd of the best level to the newest such step not after
# onset_step (for a lower-is-better headline, at most one sd above its minimum). Steps are in each run's own units.
# Run `.venv/bin/python evals/holdout27/make_holdout27.py` to write runs/ (gitignored); `--check` prints levels.
"""


def main() -> None:
    holdout_kit.main(HERE, "make_holdout27.py", "holdout27.yaml", "h27-", "holdout27", HEADER, CASES, write_run,
                     check)


if __name__ == "__main__":
    main()
