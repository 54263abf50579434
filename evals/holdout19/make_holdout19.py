"""Holdout set 19: blind-labelled RL post-training runs, aimed at runs that LEARN NOTHING and their look-alikes.

Run from the worktree root:
    .venv/bin/python evals/holdout19/make_holdout19.py           # writes runs/ (gitignored) and holdout19.yaml
    .venv/bin/python evals/holdout19/make_holdout19.py --check   # also prints levels and rollback windows

Every case is a story of noise-free levels per optimiser step (piecewise linear), drawn through this set's own
noise model and written the way one framework (and version) writes its logs. The noise model:
  * task rewards are binary: each step draws P prompts whose solve rates q ~ Beta(c*p, c*(1-p)) around the level
    p (small c = a bimodal prompt set: most prompts hopeless, a few easy), then G Bernoulli(q) rollouts per prompt.
    The batch mean, batch std, the share of groups with zero spread (all-right / all-wrong), the group-normalised
    advantages and the gradient norm all come from the same draws. A step whose groups all agree carries no
    policy gradient: with no KL term its grad norm is exactly 0 and its loss 0.0;
  * other reward functions: per-rollout Bernoulli (format / tag checks) or clipped normal (length / lint bonus);
    the logged total is the weighted sum, and the groups' spread is taken on the total;
  * judge rewards on 0..10: an integer per rollout around a per-prompt base (little within-group spread);
  * evals: Binomial(N, p)/N on N problems, or the mean of N normal judge scores;
  * grad norm: level * sqrt(share of groups with signal) * exp(0.3 N(0,1)), times 1 + Pareto(1.5) on ~3 % of
    steps (heavy right tail); KL, entropy, lengths: small multiplicative log-normal noise; truncation:
    Binomial(P*G, level); learning rate exact.
  * loggers that log every n steps (TRL) log the mean of the n batches' reward statistics and the last step's
    grad norm / learning rate.

Labels come from the stories (DESIGN.md, "What the three decisions mean"), never from a tool. A rollback window
runs from the first logged headline step whose noise-free level is within one sampling sd of the best level (the
sd of one eval, or of one logged batch mean for a train headline) to the newest such step not after the onset.
"""

from __future__ import annotations

import csv
import json
import math
import os
import re
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import holdout_kit
from holdout_kit import HEALTHY, Case, converged, dump_json, rollback, stop, stop_or_rollback, tb_file
from holdout_kit import trainer_state as hf_state

HERE = Path(__file__).resolve().parent
NOW = time.time()
Level = Callable[[float], float]
TASK = "@task"  # headline = the task reward as logged per train step


def lin(*pts: tuple[float, float]) -> Level:
    xs, ys = zip(*pts, strict=True)
    return lambda s: float(np.interp(s, xs, ys))


def flat(v: float) -> Level:
    return lambda s: v


def cosine(peak: float, total: int, warm: int = 0) -> Level:
    def f(s: float) -> float:
        if s < warm:
            return peak * s / warm
        return peak * 0.5 * (1 + math.cos(math.pi * min(1.0, (s - warm) / max(1, total - warm))))
    return f


# ------------------------------------------------------------------------------------------------- the story type

@dataclass
class Story:
    task: Level  # solve rate of the task reward (binary) or mean score (judge)
    kind: str = "bin"  # bin | judge10 | all_one
    conc: float = 2.0  # prompt difficulty concentration
    P: int = 32
    G: int = 8
    spread: float = 0.3  # judge10: within-prompt sd before rounding
    task_w: float = 1.0
    parts: dict[str, tuple[Level, str, float, float]] = field(default_factory=dict)  # name -> (lvl, bern|cont, sd, w)
    evals: dict[str, tuple] = field(default_factory=dict)  # key -> (lvl, N) or (lvl, N, score_sd)
    eval_steps: list[int] = field(default_factory=list)
    eval_post: Callable[[dict], dict] | None = None  # derived eval keys
    headline: str = TASK  # TASK, an eval key, or a part name
    log_every: int = 1
    beta: bool = False  # a KL term in the loss (KL logged)
    kl: Level = field(default=lambda s: 0.0)
    entropy: Level = field(default=lambda s: 0.5)
    length: Level = field(default=lambda s: 600.0)
    trunc: Level = field(default=lambda s: 0.01)
    grad: Level = field(default=lambda s: 0.25)
    lr: Level = field(default=lambda s: 1e-6)
    clip: Level = field(default=lambda s: 0.0)  # PPO ratio clip fraction
    sps: float = 40.0  # wall seconds per optimiser step
    age_min: float = 3.0  # minutes since the newest write

    # ---------------------------------------------------------------------------------------------- draws
    def _batch(self, rng: np.random.Generator, s: int) -> dict:
        P, G, p = self.P, self.G, self.task(s)
        if self.kind == "bin":
            p = min(max(p, 1e-6), 1 - 1e-6)
            q = rng.beta(self.conc * p, self.conc * (1 - p), size=P)
            x = (rng.random((P, G)) < q[:, None]).astype(float)
        elif self.kind == "judge10":
            base = rng.normal(p, 1.3, size=P)
            x = np.clip(np.round(base[:, None] + rng.normal(0, self.spread, (P, G))), 0, 10)
        else:  # all_one: a reward function that returns 1.0 for everything
            x = np.ones((P, G))
        tot = self.task_w * x
        out = {"task": float(x.mean()), "task_std": float(x.std())}
        for name, (lvl, pk, sd, w) in self.parts.items():
            if pk == "bern":
                y = (rng.random((P, G)) < lvl(s)).astype(float)
            else:
                y = np.clip(rng.normal(lvl(s), sd, (P, G)), 0, 1)
            out[name] = float(y.mean())
            out[name + "__std"] = float(y.std())
            tot = tot + w * y
        gs = tot.std(axis=1)
        zero = gs < 1e-9
        adv = (tot - tot.mean(axis=1, keepdims=True)) / (gs[:, None] + 1e-4)
        out.update(total=float(tot.mean()), total_std=float(tot.std()), zero_frac=float(zero.mean()),
                   all_wrong=float((zero & (tot[:, 0] <= 0)).mean()), gstd=float(gs.mean()),
                   adv_max=float(adv.max()), adv_min=float(adv.min()), adv_std=float(adv.std()),
                   score_max=float(tot.max()), score_min=float(tot.min()))
        return out

    def draws(self, rng: np.random.Generator, reached: int) -> dict:
        train = []
        for s in range(self.log_every, reached + 1, self.log_every):
            bs = [self._batch(rng, s - j) for j in range(self.log_every)]
            v = {k: float(np.mean([b[k] for b in bs])) for k in bs[0]}
            for k in ("score_max",):
                v[k] = max(b[k] for b in bs)
            for k in ("score_min",):
                v[k] = min(b[k] for b in bs)
            live = 1.0 - bs[-1]["zero_frac"]
            if live <= 0 and not self.beta:
                g = 0.0
            else:
                g = self.grad(s) * math.sqrt(max(live, 0.02)) * math.exp(0.3 * rng.normal())
                if rng.random() < 0.03:
                    g *= 1 + rng.pareto(1.5)
            v["grad"] = g
            v["kl"] = self.kl(s) * math.exp(0.08 * rng.normal())
            v["entropy"] = self.entropy(s) * math.exp(0.03 * rng.normal())
            v["length"] = self.length(s) * math.exp(0.04 * rng.normal())
            n = self.P * self.G
            v["trunc"] = rng.binomial(n, min(max(self.trunc(s), 0.0), 1.0)) / n
            v["lr"] = self.lr(s)
            v["clip"] = self.clip(s) * math.exp(0.1 * rng.normal())
            v["loss"] = 0.0 if (live <= 0 and v["kl"] == 0) else (0.04 * v["kl"] if self.beta else 0.0) \
                + 0.004 * rng.normal() * math.sqrt(max(live, 0))
            train.append((s, v))
        ev = []
        for s in [e for e in self.eval_steps if e <= reached]:
            row = {}
            for k, spec in self.evals.items():
                lvl, n = spec[0], spec[1]
                if len(spec) > 2:
                    row[k] = float(rng.normal(lvl(s), spec[2], n).mean())
                else:
                    row[k] = rng.binomial(n, min(max(lvl(s), 0.0), 1.0)) / n
            if self.eval_post:
                row.update(self.eval_post(row))
            ev.append((s, row))
        return dict(train=train, eval=ev)

    # --------------------------------------------------------------------------------------------- labels
    def level(self) -> Level:
        if self.headline == TASK:
            return self.task
        if self.headline in self.parts:
            return self.parts[self.headline][0]
        return self.evals[self.headline][0]

    def steps(self, reached: int) -> list[int]:
        if self.headline in self.evals:
            return [s for s in self.eval_steps if s <= reached]
        return list(range(self.log_every, reached + 1, self.log_every))

    def sd(self, p: float) -> float:
        if self.headline in self.evals:
            spec = self.evals[self.headline]
            return spec[2] / math.sqrt(spec[1]) if len(spec) > 2 else math.sqrt(p * (1 - p) / spec[1])
        n = self.P * self.G * self.log_every
        if self.headline in self.parts:
            _, pk, sd, _ = self.parts[self.headline]
            return math.sqrt(p * (1 - p) / n) if pk == "bern" else sd / math.sqrt(n)
        c = self.conc
        var = p * (1 - p) / self.P * (1 / (c + 1) + c / ((c + 1) * self.G))
        return math.sqrt(var / self.log_every)


def window(st: Story, reached: int, onset: int) -> tuple[int, int]:
    lv, steps = st.level(), st.steps(reached)
    best = max(lv(s) for s in steps)
    good = [s for s in steps if lv(s) >= best - st.sd(best)]
    return good[0], max(s for s in good if s <= onset)


# ------------------------------------------------------------------------------------------------------ writers

def g6(x: float) -> float:
    return float(f"{x:.6g}")


def mapped(v: dict, keys: dict[str, str]) -> dict:
    return {fk: v[ck] for ck, fk in keys.items() if ck in v}


def trl_keys(task: str, parts: tuple[str, ...] = (), kl: bool = False, entropy: bool = True,
             zero_std: bool = True, old_len: bool = False) -> dict:
    k = {"total": "reward", "total_std": "reward_std", "task": f"rewards/{task}/mean",
         "task_std": f"rewards/{task}/std", "grad": "grad_norm", "lr": "learning_rate", "loss": "loss"}
    for p in parts:
        k[p] = f"rewards/{p}/mean"
        k[p + "__std"] = f"rewards/{p}/std"
    if zero_std:
        k["zero_frac"] = "frac_reward_zero_std"
    if kl:
        k["kl"] = "kl"
    if entropy:
        k["entropy"] = "entropy"
    if old_len:
        k["length"] = "completion_length"
    else:
        k.update(length="completions/mean_length", trunc="completions/clipped_ratio", clip="clip_ratio/region_mean")
    return k


def trl_rows(run: dict, keys: dict, spe: int) -> list[dict]:
    rows = []
    for s, v in run["train"]:
        row = {k: g6(x) for k, x in mapped(v, keys).items()}
        if "completions/mean_length" in row:
            row["completions/max_length"] = float(round(min(4096, row["completions/mean_length"] * 2.4)))
            row["completions/min_length"] = float(round(row["completions/mean_length"] * 0.3))
        if "clip_ratio/region_mean" in row:
            row["clip_ratio/low_mean"] = g6(row["clip_ratio/region_mean"] * 0.4)
            row["clip_ratio/high_mean"] = g6(row["clip_ratio/region_mean"] * 0.6)
        row["loss"] = round(row.get("loss", 0.0), 4)
        row.update(epoch=round(s / spe, 4), step=s)
        rows.append(row)
    for s, v in run["eval"]:
        row = {k: g6(x) for k, x in v.items()}
        row.update(eval_loss=round(0.0003 * math.sin(s), 5), eval_runtime=round(150 + 9 * math.cos(s), 2),
                   eval_samples_per_second=3.3, eval_steps_per_second=0.105, epoch=round(s / spe, 4), step=s)
        rows.append(row)
    rows.sort(key=lambda r: (r["step"], "eval_runtime" in r))
    return rows


def final_row(run: dict, spe: int) -> dict:
    s = run["reached"]
    return dict(train_runtime=round(s * run["sps"], 1), train_samples_per_second=0.41,
                train_steps_per_second=round(1 / run["sps"], 4), total_flos=0.0, train_loss=0.0031,
                epoch=round(s / spe, 4), step=s)


def w_trl_state(run: dict, folder: Path, keys: dict, save_every: int = 0, keep: int | None = None,
                top: bool = False, logging: int = 10, spe: int = 0, epochs: int = 1) -> None:
    """TRL output_dir: checkpoint-N/ with trainer_state.json (save_total_limit rotation); top-level state from
    trainer.save_state() at the end of a finished run."""
    planned, reached, fin = run["planned"], run["reached"], run["finished"]
    spe = spe or planned
    rows = trl_rows(run, keys, spe)
    ev = run["eval_every"] or None
    kept: list[int] = []
    saves = list(range(save_every, reached + 1, save_every)) if save_every else []
    if fin and save_every and reached not in saves:
        saves.append(reached)
    for n in saves:
        st = hf_state([r for r in rows if r["step"] <= n], n, planned, logging, save_every, ev, round(n / spe, 4),
                      epochs, training_stop=fin and n == reached)
        ck = folder / f"checkpoint-{n}"
        dump_json(ck / "trainer_state.json", st)
        (ck / "adapter_config.json").write_text('{"peft_type": "LORA", "r": 32, "lora_alpha": 64}\n')
        (ck / "adapter_model.safetensors").write_bytes(b"\0" * 64)
        kept.append(n)
        while keep and len(kept) > keep:
            old = kept.pop(0)
            for p in sorted((folder / f"checkpoint-{old}").iterdir()):
                p.unlink()
            (folder / f"checkpoint-{old}").rmdir()
    if top:
        hist = rows + ([final_row(run, spe)] if fin else [])
        dump_json(folder / "trainer_state.json", hf_state(hist, reached, planned, logging, save_every or 500, ev,
                                                          round(reached / spe, 4), epochs, training_stop=fin))


def pyrepr(d: dict) -> str:
    return "{" + ", ".join(f"'{k}': {v!r}" for k, v in d.items()) + "}"


def hms(sec: float) -> str:
    sec = int(sec)
    h, m, s = sec // 3600, sec % 3600 // 60, sec % 60
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m:02d}:{s:02d}"


def bar(i: int, n: int, sps: float) -> str:
    frac = i / n
    fill = int(frac * 10)
    return (f"{int(100 * frac):3d}%|{'█' * fill}{' ' * (10 - fill)}| {i}/{n} "
            f"[{hms(i * sps)}<{hms((n - i) * sps)}, {sps:.2f}s/it]")


def w_trl_console(run: dict, folder: Path, keys: dict, name: str = "train.log", spe: int = 0,
                  version: str = "0.21.0") -> None:
    """`python train_grpo.py ... > train.log 2>&1`: warnings, tqdm refreshes, the printed log dicts."""
    planned, sps = run["planned"], run["sps"]
    spe = spe or planned
    out = ["INFO 11-27 05:12:44 [__init__.py:244] Automatically detected platform cuda.",
           f"[INFO|trl] TRL version {version}",
           "wandb: Tracking run with wandb disabled (report_to=none)",
           "***** Running training *****", f"  Num examples = {planned * 16:,}", f"  Total optimization steps = {planned:,}",
           "  Number of trainable parameters = 40,370,176",
           f"  0%|          | 0/{planned} [00:00<?, ?it/s]"]
    rows = trl_rows(run, keys, spe)
    for r in rows:
        s = r.pop("step")
        if "eval_runtime" in r:
            out.append(f"\r{bar(s, planned, sps)}")
            out.append("\r100%|██████████| 32/32 [02:31<00:00,  4.71s/it]")
            out.append(pyrepr(r))
        else:
            out.append(f"\r{bar(s, planned, sps)}")
            out.append(pyrepr(r))
    if run["finished"]:
        f = final_row(run, spe)
        f.pop("step")
        out.append(pyrepr(f))
        out.append(f"\r{bar(planned, planned, sps)}")
        out.append("Saving model checkpoint to outputs/final")
    (folder / name).write_text("\n".join(out) + "\n", encoding="utf-8")


def tb_events(run: dict, keys: dict, tprefix: str, eprefix: str, t0: float, extra: Callable | None = None):
    ev = []
    for s, v in run["train"]:
        d = {tprefix + k: x for k, x in mapped(v, keys).items()}
        if extra:
            d.update(extra(s, v))
        ev.append((t0 + s * run["sps"], s, d))
    for s, v in run["eval"]:
        ev.append((t0 + s * run["sps"] + 20, s, {eprefix + k: x for k, x in v.items()}))
    ev.sort(key=lambda e: (e[1], e[0]))
    return ev


def w_tb(run: dict, folder: Path, keys: dict, sub: str, tprefix: str = "", eprefix: str = "",
         host: str = "gpu-node-3", extra: Callable | None = None) -> None:
    t0 = run["t_end"] - run["reached"] * run["sps"]
    ev = tb_events(run, keys, tprefix, eprefix, t0, extra)
    tb_file(folder / sub / f"events.out.tfevents.{int(t0)}.{host}.{40211}.0", ev)


VERL = {"total": "critic/score/mean", "score_max": "critic/score/max", "score_min": "critic/score/min",
        "adv_max": "critic/advantages/max", "adv_min": "critic/advantages/min", "entropy": "actor/entropy",
        "kl": "actor/kl_loss", "grad": "actor/grad_norm", "lr": "actor/lr", "clip": "actor/pg_clipfrac",
        "loss": "actor/pg_loss", "length": "response_length/mean", "trunc": "response_length/clip_ratio"}


def verl_rows(run: dict, keys: dict) -> dict[int, dict]:
    rows: dict[int, dict] = {}
    for s, v in run["eval"]:
        rows.setdefault(s, {}).update(v)
    for s, v in run["train"]:
        r = rows.setdefault(s, {})
        r.update(mapped(v, keys))
        r["critic/rewards/mean"] = r.get("critic/score/mean", v["total"])
        r["response_length/max"] = float(min(run.get("max_len", 4096), round(v["length"] * 2.5)))
        r["timing_s/gen"] = round(run["sps"] * 0.62 * v["length"] / 800, 3)
        r["timing_s/step"] = round(run["sps"] * (0.9 + 0.3 * v["length"] / 800), 3)
        r["training/global_step"] = s
        r["training/epoch"] = 0
    return rows


def fmt(x: float, np2: bool) -> str:
    if isinstance(x, int):
        return f"np.int64({x})" if np2 else str(x)
    return f"np.float64({x!r})" if np2 else repr(x)


def w_verl_console(run: dict, folder: Path, keys: dict, np2: bool = True, name: str = "train.log",
                   ckpt_every: int = 0, project: str = "grpo", exp: str = "run") -> None:
    out = ["2026-11-27 01:02:11,430\tINFO worker.py:1852 -- Started a local Ray instance.",
           "(TaskRunner pid=88231) Using dataset class: RLHFDataset",
           f"(TaskRunner pid=88231) Size of train dataloader: {run['planned']}, Size of val dataloader: 1",
           f"(TaskRunner pid=88231) Total training steps: {run['planned']}"]
    rows = verl_rows(run, keys)
    for s in sorted(rows):
        body = " - ".join(f"{k}:{fmt(x, np2)}" for k, x in rows[s].items())
        out.append(f"(TaskRunner pid=88231) step:{s} - {body}")
        if s > 0 and s % 20 == 0:
            out.append(f"Training Progress: {bar(s, run['planned'], run['sps'])}")
        if ckpt_every and s > 0 and s % ckpt_every == 0:
            out.append(f"(TaskRunner pid=88231) local_global_step_folder: checkpoints/{project}/{exp}/global_step_{s}")
    (folder / name).write_text("\n".join(out) + "\n", encoding="utf-8")
    if ckpt_every:
        base = folder / "checkpoints" / project / exp
        last = 0
        for s in range(ckpt_every, run["reached"] + 1, ckpt_every):
            d = base / f"global_step_{s}" / "actor"
            d.mkdir(parents=True, exist_ok=True)
            (d / "model_world_size_8_rank_0.pt").write_bytes(b"\0" * 32)
            last = s
        if last:
            (base / "latest_checkpointed_iteration.txt").write_text(str(last))


def hydra_cfg(run: dict, folder: Path, project: str, exp: str, test_freq: int, save_freq: int) -> None:
    d = folder / ".hydra"
    d.mkdir(parents=True, exist_ok=True)
    (d / "config.yaml").write_text(
        "trainer:\n"
        f"  project_name: {project}\n  experiment_name: {exp}\n  total_epochs: 30\n"
        f"  total_training_steps: {run['planned']}\n  test_freq: {test_freq}\n  save_freq: {save_freq}\n"
        "  logger:\n  - console\n  - file\n  val_before_train: true\n")


def w_verl_jsonl(run: dict, folder: Path, keys: dict, project: str = "grpo", exp: str = "run",
                 test_freq: int = 50, save_freq: int = -1) -> None:
    rows = verl_rows(run, keys)
    p = folder / project / f"{exp}.jsonl"
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text("".join(json.dumps({"step": s, "data": rows[s]}, separators=(",", ":")) + "\n"
                         for s in sorted(rows)))
    hydra_cfg(run, folder, project, exp, test_freq, save_freq)


def w_wandb_csv(run: dict, folder: Path, panels: list[tuple[str, str, str]], display: str,
                step_col: str = "train/global_step") -> None:
    """W&B 'Export panel data -> CSV': one file per panel. panels: (train|eval, source key, wandb key)."""
    for src, ck, wk in panels:
        pts = [(s, v[ck]) for s, v in run[src] if ck in v]
        col = f"{display} - {wk}"
        with (folder / f"wandb_export_{wk.replace('/', '_')}.csv").open("w", newline="") as fh:
            w = csv.writer(fh, quoting=csv.QUOTE_ALL)
            w.writerow([step_col, col, col + "__MIN", col + "__MAX"])
            for s, x in pts:
                w.writerow([s, f"{x:.6g}", f"{x:.6g}", f"{x:.6g}"])


def w_csv(run: dict, folder: Path, cols: list[tuple[str, Callable]], name: str, eval_cols: dict[str, str]) -> None:
    """A hand-written loop's CSV: one row per step; eval columns filled only on eval steps."""
    evs = dict(run["eval"])
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow([c for c, _ in cols] + list(eval_cols))
        for s, v in run["train"]:
            row = [fn(s, v) for _, fn in cols]
            row += [f"{evs[s][k]:.6f}" if s in evs else "" for k in eval_cols.values()]
            w.writerow(row)


def w_jsonl(run: dict, folder: Path, keys: dict, name: str, eval_name: str | None, config: dict,
            eval_keys: dict | None = None) -> None:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    t0 = run["t_end"] - run["reached"] * run["sps"]
    lines = []
    evs = dict(run["eval"])
    for s, v in run["train"]:
        row = {"step": s, **{k: g6(x) for k, x in mapped(v, keys).items()}, "time": round(t0 + s * run["sps"], 1)}
        lines.append(json.dumps(row))
        if eval_name is None and s in evs:
            lines.append(json.dumps({"step": s, **{eval_keys[k]: x for k, x in evs[s].items()}}))
    path.write_text("\n".join(lines) + "\n")
    if eval_name:
        (folder / eval_name).write_text("".join(
            json.dumps({"step": s, **{eval_keys[k]: x for k, x in v.items()}, "n": config.get("eval_n")}) + "\n"
            for s, v in run["eval"]))
    (folder / "config.json").write_text(json.dumps(config, indent=2) + "\n")


# --------------------------------------------------------------------------------------------- mtimes and writer

STEP_IN_NAME = re.compile(r"(?:checkpoint-|global_step_)(\d+)")


def set_times(folder: Path, run: dict) -> None:
    end, sps = run["t_end"], run["sps"]
    t0 = end - run["reached"] * sps
    paths = sorted(folder.rglob("*"), key=lambda p: len(p.parts), reverse=True)
    for p in paths:
        m = STEP_IN_NAME.search(str(p.relative_to(folder)))
        t = t0 + int(m.group(1)) * sps if m else end
        os.utime(p, (t, t))
    os.utime(folder, (end, end))


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
        return Case(self.name, lambda *a: None, self.write, self.seed, self.steps, self.labels(), self.tags,
                    self.why)


def W(fn: Callable, **kw) -> Callable:
    return lambda run, folder: fn(run, folder, **kw)


def every(step: int, upto: int, start: int = 0) -> list[int]:
    return list(range(start, upto + 1, step))


# ------------------------------------------------------------------------------------------------------ the cases

ACC = "eval_rewards/accuracy_reward/mean"

SPECS: list[Spec] = [
    # ======================================================================== healthy look-alikes (continue)
    Spec("ok-olympiad-reward-exactly-0-until-250-then-climbs-checked-at-450-of-1000-verl-console",
         Story(lin((0, .0005), (250, .0008), (450, .16)), conc=.5, P=64, G=8,
               evals={"val-core/olympiad_bench/acc/mean@1": (lin((0, .012), (250, .013), (450, .06)), 675)},
               eval_steps=every(25, 1000), headline="val-core/olympiad_bench/acc/mean@1", beta=True,
               kl=lin((0, 0), (250, .0004), (450, .006)), entropy=lin((0, .62), (250, .60), (450, .52)),
               length=lin((0, 900), (250, 880), (450, 1350)), trunc=lin((0, .02), (450, .04)), grad=flat(.3),
               sps=95, age_min=4),
         W(w_verl_console, keys=VERL, np2=True, project="olympiad_grpo", exp="qwen3-4b-base"), 1901, (450, 1000),
         "ok", "healthy verl console np2 sparse-reward late-takeoff",
         "verl GRPO on olympiad-level maths with a 4B base model. For the first 250 steps the train score is "
         "exactly 0 on most steps (a handful of lucky rollouts out of 512), so most groups are all-wrong and the "
         "grad norm is tiny. From ~250 the score lifts off and climbs to ~0.16 by step 450, responses grow "
         "880 -> 1350 tokens, and the validation accuracy follows: 0.012 -> 0.06 (N=675, sd 0.009, 5 sd). "
         "Learning is clearly under way at 45% of the planned 1000 steps: continue."),
    Spec("ok-liftoff-just-started-at-300-after-flat-zero-reward-checked-at-345-openrlhf-tb",
         Story(lin((0, .0006), (300, .0008), (345, .035)), conc=.5, P=64, G=8,
               evals={"eval_omni_math_pass1": (flat(.018), 500)}, eval_steps=every(50, 2000, 50),
               headline=TASK, beta=True, kl=lin((0, 0), (300, .0003), (345, .0011)),
               length=lin((0, 1500), (345, 1560)), trunc=flat(.05), grad=flat(.35), lr=flat(5e-7), sps=70,
               age_min=6),
         W(w_tb, keys={"total": "reward", "gstd": "group_reward_std", "kl": "kl", "length": "response_length",
                       "trunc": "truncated", "grad": "actor_grad_norm", "lr": "actor_lr", "loss": "policy_loss",
                       "clip": "ppo_clip_ratio"},
           sub="runs/tb/omni-math-grpo", tprefix="train/", eprefix="eval/"), 1902, (345, 1500), "ok",
         "healthy openrlhf tensorboard sparse-reward late-takeoff just-started",
         "OpenRLHF GRPO on Omni-MATH with a small model: train reward ~0 (mostly exactly 0, group_reward_std 0) "
         "for 300 steps, then over the last ~45 steps it lifts off to ~0.03 per batch (P=64, G=8: several "
         "successes every step, group_reward_std no longer 0, KL starts to move). Eval pass@1 (N=500, every 50) "
         "is still flat at ~0.02, as it lags. Learning has just started at 23% of a 1500-step budget: continue."),
    Spec("ok-reward-0-lr-still-warming-up-checked-at-120-of-1000-trl021-console",
         Story(flat(.006), conc=.5, P=32, G=8, log_every=5, lr=lin((0, 0), (150, 1e-6), (1000, 1e-6)),
               entropy=flat(.55), length=flat(1100), trunc=flat(.06), grad=flat(.2), sps=60, age_min=2),
         W(w_trl_console, keys=trl_keys("accuracy_reward"), spe=1000), 1903, (120, 1000), "ok",
         "healthy trl console warmup sparse-reward too-early",
         "TRL 0.21 GRPO on a hard maths set, checked at step 120 of 1000 while the linear warmup (150 steps) is "
         "still raising the learning rate (8e-7 of 1e-6). The reward is ~0.005 (0 to 0.015 per 5-step log) with "
         "frac_reward_zero_std ~0.98-0.99: on about half the logs every group is all-wrong and grad_norm is "
         "exactly 0, on the others a few groups carry signal. "
         "Entropy, lengths and truncation are stable. Nothing has broken; a sparse hard task at 12% of the "
         "budget, before peak LR, needs time (this run lifts off later). Continue."),
    Spec("ok-format-reward-saturates-by-60-accuracy-creeps-0.08-to-0.22-trl-state-save-limit-3",
         Story(lin((0, .08), (800, .22)), conc=1.5, P=16, G=8, log_every=10,
               parts={"format_reward": (lin((0, .2), (60, .97), (800, .99)), "bern", 0, 1.0)},
               evals={ACC: (lin((0, .10), (800, .20)), 500),
                      "eval_rewards/format_reward/mean": (lin((0, .22), (60, .96), (800, .99)), 500)},
               eval_post=lambda r: {"eval_reward": r[ACC] + r["eval_rewards/format_reward/mean"]},
               eval_steps=every(100, 2000), headline=ACC, entropy=lin((0, .5), (800, .42)),
               length=lin((0, 350), (60, 420), (800, 520)), sps=45, age_min=10),
         W(w_trl_state, keys=trl_keys("accuracy_reward", ("format_reward",)), save_every=100, keep=3),
         1909, (800, 2000), "ok", "healthy trl trainer-state checkpoints save-limit multi-reward format-saturates",
         "TRL GRPO with two reward functions. The format reward saturates within 60 steps (0.2 -> 0.97) and "
         "then sits at ~0.99, which alone would look like 'only the cosmetic reward moved'. But the accuracy "
         "reward keeps creeping up 0.08 -> 0.22 over 800 steps and the held-out accuracy follows it, 0.10 -> "
         "0.20 (N=500, sd 0.018, 5.5 sd; eval_on_start gives the base). At 40% of the budget and still "
         "rising: continue."),
    Spec("ok-heldout-creeps-0.31-to-0.37-over-1200-steps-train-climbs-faster-wandb-csv",
         Story(lin((0, .30), (1200, .55)), conc=2, P=16, G=8, log_every=10, beta=True,
               kl=lin((0, 0), (1200, .05)), length=lin((0, 260), (1200, 330)),
               evals={"eval/rewards/accuracy_reward/mean": (lin((0, .31), (1200, .37)), 1319)},
               eval_steps=every(100, 2500), headline="eval/rewards/accuracy_reward/mean", age_min=15),
         W(w_wandb_csv, panels=[("train", "total", "train/reward"),
                                ("eval", "eval/rewards/accuracy_reward/mean", "eval/rewards/accuracy_reward/mean"),
                                ("train", "kl", "train/kl"), ("train", "length", "train/completions/mean_length")],
           display="qwen2.5-7b-grpo-gsm8k-lr1e-6"), 1905, (1200, 2500), "ok",
         "healthy wandb-csv slow-eval-rise train-eval-gap",
         "W&B panel exports of a TRL GRPO run on GSM8K. Train reward climbs 0.30 -> 0.55 while held-out "
         "accuracy moves much more slowly, 0.31 -> 0.37 over 13 evals (N=1319, sd 0.013: 4.6 sd overall, about "
         "0.4 sd between neighbouring evals, so any two look alike). The gap looks like memorisation at a "
         "glance but the held-out level really rises, steadily. Planned 2500 steps (not in the export): "
         "continue."),
    Spec("ok-80pct-groups-all-wrong-reward-0.04-to-0.10-over-2000-of-4000-custom-jsonl",
         Story(lin((0, .04), (2000, .10)), conc=.6, P=32, G=8, beta=True, kl=lin((0, 0), (2000, .012)),
               lr=lin((0, 0), (50, 2e-6), (4000, 2e-6)), entropy=lin((0, .7), (2000, .62)),
               length=lin((0, 700), (2000, 820)), evals={"acc": (lin((0, .05), (2000, .09)), 2000)},
               eval_steps=every(200, 4000), headline="acc", sps=25, age_min=2),
         W(w_jsonl, keys={"total": "reward_mean", "total_std": "reward_std", "all_wrong": "frac_groups_all_wrong",
                          "zero_frac": "frac_groups_no_spread", "kl": "kl_ref", "entropy": "entropy",
                          "length": "resp_tokens", "lr": "lr", "grad": "grad_norm", "loss": "loss"},
           name="logs/train_metrics.jsonl", eval_name="logs/eval_metrics.jsonl",
           config={"total_steps": 4000, "group_size": 8, "prompts_per_step": 32, "eval_every": 200,
                   "eval_n": 2000}, eval_keys={"acc": "heldout_acc"}),
         1910, (2000, 4000), "ok", "healthy custom-jsonl zero-std-high slow-climb",
         "Hand-written GRPO loop on hard theorem-style problems: ~80% of the groups are all-wrong every step "
         "(frac_groups_no_spread ~0.8) and the batch reward is only 0.04 -> 0.10 after 2000 steps. That looks "
         "like a run learning nothing, but the reward doubles steadily and the held-out accuracy rises 0.05 -> "
         "0.09 (N=2000, sd 0.006, 6 sd) over 11 evals. Half the 4000-step budget left: continue."),
    Spec("ok-clip-ratios-exactly-0-on-policy-reward-rising-hf-tb-no-eval",
         Story(lin((0, .35), (600, .58)), conc=2, P=16, G=8, log_every=10, lr=cosine(1e-6, 1500, 30),
               entropy=lin((0, .45), (600, .38)), length=lin((0, 480), (600, 560)), sps=50, age_min=3),
         W(w_tb, keys={**trl_keys("accuracy_reward"), "clip": "clip_ratio/region_mean"},
           sub="runs/Nov27_06-40-12_gpu-node-3", tprefix="train/",
           extra=lambda s, v: {"train/clip_ratio/low_mean": 0.0, "train/clip_ratio/high_mean": 0.0,
                               "train/epoch": s / 1500, "train/global_step": s}),
         1907, (600, 1500), "ok", "healthy hf-tensorboard clip-ratio-zero on-policy no-eval",
         "TRL GRPO (defaults: num_iterations=1, beta=0) logged to TensorBoard. Every clip_ratio tag is exactly "
         "0 on every step, which is how on-policy GRPO looks (the ratio is 1 by construction), not a sign that "
         "no update happens: the reward climbs steadily 0.35 -> 0.58 (logged means of 10 batches, sd ~0.03), "
         "frac_reward_zero_std ~0.3, entropy eases slowly, cosine LR at 40% of 1500 steps. Continue."),
    Spec("ok-lr-5e-7-tiny-kl-slow-but-real-val-rise-verl-jsonl",
         Story(lin((0, .55), (600, .63)), conc=3, P=128, G=5, beta=True, kl=lin((0, .0001), (600, .002)),
               lr=flat(5e-7), entropy=lin((0, .35), (600, .32)), length=lin((0, 240), (600, 225)),
               evals={"val-core/openai/gsm8k/acc/mean@1": (lin((0, .52), (600, .58)), 1319)},
               eval_steps=every(50, 1500), headline="val-core/openai/gsm8k/acc/mean@1", sps=55, age_min=3),
         W(w_verl_jsonl, keys=VERL, project="gsm8k_grpo", exp="qwen2.5-3b-lr5e-7", test_freq=50),
         1908, (600, 1500), "ok", "healthy verl jsonl low-lr slow-learner",
         "verl GRPO on GSM8K with a deliberately low LR (5e-7, constant): KL to the reference stays tiny "
         "(1e-4 -> 2e-3) and the train score only moves 0.55 -> 0.63. It is slow, not stuck: val accuracy "
         "rises 0.52 -> 0.58 over 13 validations (N=1319, sd 0.0136, 4.4 sd) with no sign of flattening. "
         "40% of 1500 steps: continue."),
    Spec("ok-finished-1000-flat-zero-to-300-then-climbs-still-rising-at-end-trl-state-final",
         Story(lin((0, .0008), (300, .001), (700, .14), (1000, .24)), conc=.5, P=16, G=8, log_every=10,
               evals={"eval_rewards/correctness_reward/mean": (lin((0, .01), (300, .01), (1000, .17)), 500)},
               eval_steps=every(100, 1000, 100), headline="eval_rewards/correctness_reward/mean",
               length=lin((0, 900), (300, 880), (1000, 1300)), sps=60, age_min=40),
         W(w_trl_state, keys=trl_keys("correctness_reward"), save_every=250, keep=2, top=True),
         1913, (1000, 1000), "ok", "healthy finished trl trainer-state late-takeoff still-rising extend",
         "TRL GRPO, finished its 1000 planned steps 40 minutes ago (final train_runtime row, top-level "
         "trainer_state). The reward sat at ~0 (mostly exactly 0) for the first 300 steps, then took off and was "
         "still climbing at the end (0.14 at 700 -> 0.24 at 1000). Held-out correctness: 0.01 until 300, then "
         "0.10 at 700 -> 0.17 at 1000 (N=500, sd 0.017, ~4 sd over the last 300 steps). The best weights are "
         "the last and it was still improving: continue (extend the run), never stop."),
    Spec("ok-hand-loop-csv-adv-std-0-on-40pct-steps-g8-one-prompt-eval-every-50-rising",
         Story(lin((0, .15), (400, .32)), conc=2, P=1, G=8,
               evals={"eval_acc": (lin((0, .14), (400, .26)), 500)}, eval_steps=[1, *every(50, 1000, 50)],
               headline="eval_acc", entropy=lin((0, .9), (400, .75)), length=lin((0, 380), (400, 440)),
               sps=20, age_min=1),
         W(w_csv, name="logs/grpo_metrics.csv", eval_cols={"eval_acc": "eval_acc"},
           cols=[("step", lambda s, v: s), ("total_steps", lambda s, v: 1000),
                 ("loss", lambda s, v: f"{v['loss'] * 40:.4f}" if v["gstd"] > 0 else "0.0000"),
                 ("reward_avg", lambda s, v: f"{v['task']:.4f}"),
                 ("tokens_per_sec", lambda s, v: f"{52 + 3 * math.sin(s):.2f}"),
                 ("avg_response_len", lambda s, v: f"{v['length']:.2f}"),
                 ("adv_avg", lambda s, v: "0.0000"), ("adv_std", lambda s, v: f"{v['adv_std']:.4f}"),
                 ("entropy_avg", lambda s, v: f"{v['entropy']:.4f}")]),
         1910, (400, 1000), "ok", "healthy custom-csv tiny-batch zero-advantage-steps",
         "A from-scratch GRPO loop (one prompt, 8 rollouts per step) on MATH. About 40% of the steps have "
         "all 8 rollouts scoring alike, so adv_std and loss are exactly 0 there and the per-step reward_avg "
         "jumps between 0 and 1 in eighths. Through that noise the MATH-500 eval (every 50 steps, N=500, sd "
         "0.02) rises 0.14 -> 0.26, 6 sd. Step 400 of 1000: continue."),
    Spec("ok-pass-at-16-rises-while-mean-at-1-still-near-0-checked-at-260-of-1000-verl-jsonl",
         Story(lin((0, .001), (260, .01)), conc=.3, P=32, G=16,
               evals={"val-core/hardmath/acc/mean@16": (lin((0, .004), (260, .007)), 500),
                      "val-core/hardmath/acc/best@16/mean": (lin((0, .06), (260, .11)), 500)},
               eval_steps=every(20, 1000), headline="val-core/hardmath/acc/best@16/mean",
               length=lin((0, 1800), (260, 1900)), trunc=flat(.08), sps=120, age_min=5),
         W(w_verl_jsonl, keys=VERL, project="hardmath",
           exp="qwen3-1.7b-dapo-n16", test_freq=20),
         1911, (260, 1000), "ok", "healthy verl jsonl sparse-reward pass-at-k-rising before-takeoff",
         "verl DAPO-style run on very hard maths, 16 rollouts per prompt. Checked at step 260 of 1000: the "
         "train score is exactly 0 on many steps and the mean@16 validation is ~0.005, so by the headline "
         "pass@1 nothing has happened yet. But the problems solved at least once in 16 samples (best@16) rise "
         "0.06 -> 0.11 over 14 validations (N=500, sd 0.014, 3.5 sd) and the rare train successes become more "
         "frequent: the first sign of a take-off, a quarter into the budget. Continue."),
    # ======================================================================== learned nothing (stop)
    Spec("stop-learning-rate-0.0-on-every-log-kl-exactly-0-with-beta-0.04-trl018-console",
         Story(flat(.31), conc=2, P=16, G=8, log_every=10, beta=True, kl=flat(0.0), lr=flat(0.0),
               evals={ACC: (flat(.30), 500)}, eval_steps=every(100, 2000, 100), headline=ACC,
               length=flat(410), grad=flat(.4), sps=35, age_min=3),
         W(w_trl_console, keys=trl_keys("accuracy_reward", kl=True, entropy=False), spe=2000, version="0.18.2"),
         1912, (400, 2000), "stop", "stop trl console lr-zero misconfig nothing-moves",
         "TRL 0.18 GRPO with beta=0.04, checked at 400 of 2000. learning_rate is 0.0 on every log (the LR was "
         "passed as 0 by a launcher bug); the grad norm is normal (~0.4) but no update is ever applied: kl is "
         "exactly 0.0 on every row although beta > 0 (policy == reference), the reward sits at 0.31 and the "
         "held-out accuracy at 0.30 (N=500) on all four evals. Nothing will change if it runs on: stop and "
         "fix the config. The current weights are the base model, as good as any."),
    Spec("stop-acc-exactly-0-format-and-length-bonus-drive-total-score-up-verl-jsonl-reward-extra",
         Story(flat(.0003), conc=.4, P=64, G=8,
               parts={"format": (lin((0, .15), (300, .90), (700, .97)), "bern", 0, .2),
                      "length_bonus": (lin((0, .2), (700, .75)), "cont", .2, .1)},
               evals={"val-core/olympiad/acc/mean@1": (flat(.004), 500)}, eval_steps=every(50, 1000),
               headline="val-core/olympiad/acc/mean@1", entropy=lin((0, .55), (700, .41)),
               length=lin((0, 700), (700, 1200)), sps=80, age_min=4),
         W(w_verl_jsonl, keys={**VERL, "task": "reward_extra_info/acc/mean",
                               "format": "reward_extra_info/format/mean",
                               "length_bonus": "reward_extra_info/length_bonus/mean"},
           project="olympiad", exp="qwen2.5-0.5b-grpo", test_freq=50),
         1913, (700, 1000), "stop", "stop verl jsonl task-floor cosmetic-rewards reward-extra-info",
         "verl GRPO with a 0.5B model on olympiad maths; score = acc + 0.2*format + 0.1*length_bonus. The "
         "total critic/score/mean climbs 0.05 -> 0.27 and looks like learning, but all of it is the format "
         "check (0.15 -> 0.97) and the length bonus; the acc component is exactly 0 on nearly every step and "
         "the validation acc sits at ~0.004 (N=500) from step 0 to 700. The model is too weak for the task: "
         "there is nothing to gain by continuing, and the current weights are as good as any. Stop."),
    Spec("stop-train-reward-0.35-to-0.78-over-6-epochs-heldout-flat-0.41-custom-csv",
         Story(lin((0, .35), (250, .45), (1500, .78)), conc=2, P=32, G=8, beta=True, kl=lin((0, 0), (1500, .09)),
               entropy=lin((0, .5), (1500, .28)), length=lin((0, 380), (1500, 300)),
               evals={"heldout": (flat(.41), 500)}, eval_steps=every(100, 3000), headline="heldout",
               sps=30, age_min=5),
         W(w_csv, name="train_log.csv", eval_cols={"heldout_acc": "heldout"},
           cols=[("step", lambda s, v: s), ("epoch", lambda s, v: f"{s / 250:.3f}"),
                 ("total_steps", lambda s, v: 3000), ("reward", lambda s, v: f"{v['task']:.4f}"),
                 ("reward_std", lambda s, v: f"{v['task_std']:.4f}"), ("kl", lambda s, v: f"{v['kl']:.5f}"),
                 ("entropy", lambda s, v: f"{v['entropy']:.4f}"), ("resp_len", lambda s, v: f"{v['length']:.1f}"),
                 ("grad_norm", lambda s, v: f"{v['grad']:.4f}"), ("lr", lambda s, v: "1e-06")]),
         1921, (1500, 3000), "stop", "stop custom-csv memorisation eval-never-moves",
         "Custom GRPO loop on an 8k-prompt train set (250 steps per epoch), six epochs in. The train reward "
         "climbs 0.35 -> 0.78, entropy halves and KL grows, but the held-out accuracy (N=500, sd 0.022) never "
         "moved: ~0.41 at step 0 and on all 15 evals since. The policy is memorising its train prompts. "
         "Held-out has not declined, so no earlier point is better; nothing is to be gained from the other "
         "1500 steps: stop."),
    Spec("stop-all-wrong-groups-97pct-grad-norm-exactly-0-most-steps-at-600-of-1000-verl-console",
         Story(flat(.0015), conc=.3, P=32, G=16, grad=flat(.2),
               evals={"val-core/deepscaler_hard/acc/mean@1": (flat(.006), 400)}, eval_steps=every(50, 1000),
               headline="val-core/deepscaler_hard/acc/mean@1", length=flat(2100), trunc=flat(.12),
               entropy=flat(.58), sps=110, age_min=7),
         W(w_verl_console, keys=VERL, np2=True,
           project="deepscaler", exp="qwen2.5-1.5b-hard"),
         1915, (600, 1000), "stop", "stop verl console zero-reward no-gradient never-learns",
         "verl GRPO (no KL loss) on the hardest DeepScaleR bucket with a 1.5B model, 60% through 1000 steps at "
         "full LR. The score is exactly 0 on most steps; nearly every group is all-wrong, so the advantages are "
         "0 and actor/grad_norm is exactly 0.0 on most steps (no policy gradient at all). A success shows up "
         "on a few steps but never more often, and validation (N=400) stays at ~0.006 from step 0. Unlike a "
         "late take-off there is no trend anywhere after 600 steps: stop; nothing to keep beyond the base."),
    Spec("stop-finished-800-learnt-nothing-sparse-reward-final-eval-at-base-trl-state-no-checkpoints",
         Story(flat(.012), conc=.5, P=16, G=8, log_every=10,
               evals={"eval_rewards/math_verify/mean": (flat(.03), 500)}, eval_steps=every(200, 800),
               headline="eval_rewards/math_verify/mean", length=flat(950), sps=50, age_min=300),
         W(w_trl_state, keys=trl_keys("math_verify"), top=True), 1916, (800, 800), "stop",
         "stop finished trl trainer-state-top-level no-checkpoints never-learns",
         "TRL GRPO run finished 5 hours ago (save_strategy 'no', trainer.save_state() at the end; the final "
         "row has train_runtime). Reward ~0.01 for all 800 steps with frac_reward_zero_std ~0.98, no trend; "
         "eval (N=500) 0.03 at the start (eval_on_start) and 0.03 at the end. It learnt nothing; there is no "
         "better earlier point either. Keep what there is (= the base): stop."),
    Spec("stop-judge-0-10-scores-identical-within-groups-flat-6.1-verl-tb",
         Story(flat(6.1), kind="judge10", P=32, G=4, spread=.12, beta=True, kl=lin((0, 0), (500, .0015)),
               evals={"val-core/chat_prompts/reward/mean@1": (flat(6.05), 300, 1.5)}, eval_steps=every(25, 1200),
               headline="val-core/chat_prompts/reward/mean@1", grad=flat(.3), length=flat(450), sps=60,
               age_min=8),
         W(w_tb, keys=VERL, sub="tensorboard_log/chat_rl/qwen3-8b-judge-int"), 1933, (500, 1200), "stop",
         "stop verl tensorboard judge-score no-variance zero-advantage",
         "verl GRPO with an LLM judge returning integer scores 0-10 at temperature 0. The policy's 4 rollouts "
         "per prompt usually get the same integer, so ~75% of the groups have zero spread, most advantages "
         "are 0 and the grad norm is about half of normal. The score sits at 6.1 for 500 steps, "
         "the validation judge score at ~6.05 (N=300, sd 0.09) from step 0. No signal to learn from: stop."),
    Spec("stop-warmup-50000-steps-lr-never-warms-1.2e-8-at-600-openrlhf-tb",
         Story(flat(.42), conc=2, P=32, G=8, beta=True, kl=lin((0, 0), (600, 4e-6)), lr=lin((0, 0), (50000, 1e-6)),
               evals={"eval_math_pass1": (flat(.40), 500)}, eval_steps=every(50, 2000, 50),
               headline="eval_math_pass1", length=flat(640), grad=flat(.3), sps=45, age_min=4),
         W(w_tb, keys={"total": "reward", "gstd": "group_reward_std", "kl": "kl", "length": "response_length",
                       "trunc": "truncated", "grad": "actor_grad_norm", "lr": "actor_lr", "loss": "policy_loss"},
           sub="tb/math-grpo-7b", tprefix="train/", eprefix="eval/"), 1918, (600, 2000), "stop",
         "stop openrlhf tensorboard lr-never-warms misconfig",
         "OpenRLHF GRPO launched with a warmup of 50000 steps (a ratio typed as a count) in a run of ~2000 "
         "steps: actor_lr grows linearly from 0 and is only 1.2e-8 at step 600 (it would reach 4e-8 by the "
         "end, 1/25 of the intended 1e-6). KL stays ~1e-6, the reward is flat at 0.42 and eval pass1 at 0.40 "
         "(N=500) on all 12 evals. It looks like 'still in warmup', but at this rate nothing will ever move: "
         "stop and relaunch with a sane schedule; the weights are still the base."),
    Spec("stop-three-custom-rewards-only-think-tags-and-language-move-correct-flat-custom-jsonl",
         Story(flat(.27), conc=2, P=16, G=8, beta=True, kl=lin((0, 0), (200, .02), (900, .03)),
               parts={"think": (lin((0, .3), (150, .98), (900, .99)), "bern", 0, .5),
                      "lang": (lin((0, .85), (200, .99), (900, .995)), "bern", 0, .5)},
               evals={"em": (flat(.26), 800)}, eval_steps=every(100, 2000), headline="em", sps=30, age_min=3),
         W(w_jsonl, keys={"total": "r_total", "task": "r_correct", "think": "r_think_tags",
                          "lang": "r_lang_consistency", "gstd": "group_std_mean", "kl": "kl", "entropy": "entropy",
                          "length": "gen_len", "lr": "lr", "grad": "grad_norm"},
           name="metrics.jsonl", eval_name=None, eval_keys={"em": "heldout/exact_match"},
           config={"total_steps": 2000, "rewards": {"r_correct": 1.0, "r_think_tags": 0.5,
                                                    "r_lang_consistency": 0.5}}),
         1919, (900, 2000), "stop", "stop custom-jsonl multi-reward cosmetic-only",
         "A hand-written GRPO loop with three named rewards: r_correct (1.0), r_think_tags (0.5), "
         "r_lang_consistency (0.5). r_total rises 0.85 -> 1.25 within 200 steps, all of it from the tag and "
         "language checks saturating; r_correct is flat at 0.27 for 900 steps and the held-out exact match "
         "(N=800, sd 0.016) is 0.26 at step 0 and on every eval since. Only the cosmetic rewards moved, and "
         "they are saturated, so no signal is left: stop."),
    Spec("stop-reward-fn-returns-1.0-for-everything-std-0-grad-norm-0-trl-state",
         Story(flat(1.0), kind="all_one", P=16, G=8, log_every=10, entropy=flat(.48), length=flat(520),
               evals={"eval_rewards/accuracy_reward/mean": (flat(1.0), 200)}, eval_steps=every(100, 1500, 100),
               headline=TASK, sps=30, age_min=6),
         W(w_trl_state, keys=trl_keys("accuracy_reward"), save_every=100, keep=3), 1920, (300, 1500), "stop",
         "stop trl trainer-state zero-std no-gradient reward-bug",
         "TRL GRPO whose accuracy reward compares the parsed answer to a field that is empty for this dataset, "
         "so it returns 1.0 for every completion. reward is exactly 1.0 with reward_std 0 on every log, "
         "frac_reward_zero_std is 1.0, loss and grad_norm are exactly 0 (beta=0): no update has ever been "
         "applied. It is not 'saturated', it is blind, and 1200 more steps change nothing: stop and fix the "
         "reward. The weights are the base."),
    Spec("conv-eval-flat-since-1250-cosine-lr-near-0-at-1900-of-2000-trl-state",
         Story(lin((0, .42), (1250, .60), (1900, .605)), conc=2, P=16, G=8, log_every=10,
               lr=cosine(1e-6, 2000, 50), evals={ACC: (lin((0, .40), (1250, .55), (1900, .552)), 1000)},
               eval_steps=every(50, 2000), headline=ACC, sps=40, age_min=5),
         W(w_trl_state, keys=trl_keys("accuracy_reward"), save_every=100, keep=2), 1935, (1900, 2000), "conv",
         "converged trl trainer-state cosine-tail plateau",
         "TRL GRPO at step 1900 of 2000 with a cosine LR already down to ~1e-8. Held-out accuracy rose 0.40 -> "
         "0.55 by ~1250 and has been flat since (N=1000, sd 0.016); train reward flat too. Converged near its "
         "end: stopping now or letting the last 100 steps run are both fine."),
    # ======================================================================== a better model lies behind
    Spec("rb-val-best-at-end-of-plateau-300-920-sharp-collapse-at-935-verl-console-ckpts-every-500",
         Story(lin((0, .28), (300, .48), (930, .51), (960, .10), (1000, .04)), conc=2, P=64, G=8, beta=True,
               kl=lin((0, 0), (930, .03), (960, .9), (1000, 1.4)), entropy=lin((0, .45), (930, .36), (950, 2.6),
                                                                               (1000, 3.1)),
               length=lin((0, 600), (930, 820), (960, 3900), (1000, 4000)), trunc=lin((0, .01), (930, .02),
                                                                                      (960, .9), (1000, .97)),
               grad=lin((0, .3), (930, .3), (945, 4.0), (1000, 2.0)), clip=lin((0, .002), (930, .003),
                                                                                (960, .08)),
               evals={"val-core/math/acc/mean@1": (lin((0, .30), (300, .50), (930, .53), (960, .12),
                                                        (1000, .05)), 500)},
               eval_steps=every(20, 1500), headline="val-core/math/acc/mean@1", sps=90, age_min=3),
         W(w_verl_console, keys=VERL, np2=False, ckpt_every=500, project="math_grpo", exp="qwen3-4b"),
         1922, (1000, 1500), "rb", "rollback verl console collapse entropy-blowup sparse-checkpoints",
         "verl GRPO on MATH. Validation rose to ~0.50 by step 300 and kept creeping up to 0.53 at ~920 (a "
         "long good stretch, N=500, sd 0.022). At ~935 the run breaks: entropy 0.36 -> 2.6+, responses run to "
         "the 4096 cap (clip_ratio 0.9+), grad norm and KL jump, and validation falls to ~0.05 by 1000. The "
         "best weights are at the END of the plateau (~920), not at its start. Checkpoints every 500 "
         "(global_step_500, global_step_1000): 1000 is after the collapse, so restore global_step_500 or, if "
         "intermediate weights exist elsewhere, ~920.", onset=930),
    Spec("rb-correctness-falls-from-880-total-reward-holds-brevity-bonus-trl-state-save-limit-2",
         Story(lin((0, .35), (500, .62), (880, .64), (1250, .50)), conc=2, P=16, G=8, log_every=10,
               parts={"format_reward": (lin((0, .6), (200, .95), (1250, .98)), "bern", 0, .5),
                      "brevity_reward": (lin((0, .20), (500, .35), (880, .45), (1250, .62)), "cont", .15, 1.0)},
               evals={"eval_rewards/correctness_reward/mean": (lin((0, .33), (500, .58), (880, .60),
                                                                    (1250, .47)), 500)},
               eval_steps=every(50, 2000), headline="eval_rewards/correctness_reward/mean",
               length=lin((0, 720), (880, 600), (1250, 310)), entropy=lin((0, .5), (880, .42), (1250, .3)),
               sps=45, age_min=8),
         W(w_trl_state, keys=trl_keys("correctness_reward", ("format_reward", "brevity_reward")),
           save_every=250, keep=2),
         1923, (1250, 2000), "rb", "rollback trl trainer-state save-limit task-reward-falls total-holds",
         "TRL GRPO with correctness (1.0), format (0.5) and brevity (1.0) rewards. The total reward keeps "
         "inching up (1.45 -> 1.6) the whole run, but from ~880 the policy buys brevity with correctness: "
         "completions shrink 600 -> 310 tokens, rewards/correctness_reward/mean falls 0.64 -> 0.50 and held-out "
         "correctness falls from 0.60 (~880) to 0.47 at 1250 (N=500, sd 0.022, 6 sd). save_total_limit=2 left "
         "only checkpoint-1000 and checkpoint-1250, both after the turn; the target is the last eval before "
         "the turn (~850), restore from wherever the earlier weights were kept.", onset=880),
    Spec("rb-finished-1500-eval-best-850-end-of-plateau-slides-5sd-while-train-rises-trl-console",
         Story(lin((0, .25), (500, .45), (850, .48), (1500, .50)), conc=2, P=16, G=8, log_every=10, beta=True,
               kl=lin((0, 0), (850, .05), (1500, .14)), lr=cosine(1e-6, 1500, 30),
               evals={"eval_rewards/math_verify_reward/mean": (lin((0, .22), (500, .41), (850, .43),
                                                                    (1500, .35)), 1000)},
               eval_steps=every(100, 1500, 100), headline="eval_rewards/math_verify_reward/mean", sps=40,
               age_min=90),
         W(w_trl_console, keys=trl_keys("math_verify_reward", kl=True), spe=500, version="0.23.1"),
         1924, (1500, 1500), "rb", "rollback finished trl console multi-epoch eval-slides",
         "TRL GRPO, three epochs over a 500-step dataset, finished 90 minutes ago (100% bar, train_runtime "
         "printed). Train reward keeps rising to the end, but held-out accuracy peaked at ~0.43 around 850 and "
         "slid to 0.35 by 1500 (N=1000, sd 0.016, 5 sd) while KL tripled: epochs 2-3 overfit the train set. "
         "The finished weights are worse than those at ~800-900: roll back.", onset=850),
    Spec("rb-zero-for-300-climbs-holds-700-1100-then-repetition-slide-checked-1300-custom-jsonl-no-eval",
         Story(lin((0, .001), (300, .002), (700, .35), (1100, .36), (1300, .12)), conc=1, P=32, G=8,
               entropy=lin((0, .55), (1100, .42), (1300, 1.1)), length=lin((0, 900), (1100, 1000), (1300, 3400)),
               trunc=lin((0, .02), (1100, .03), (1300, .6)), grad=lin((0, .25), (1100, .25), (1300, .7)),
               sps=50, age_min=2),
         W(w_jsonl, keys={"total": "reward", "total_std": "reward_std", "zero_frac": "zero_std_groups",
                          "entropy": "entropy", "length": "mean_len", "trunc": "truncated_frac",
                          "grad": "grad_norm", "lr": "lr"},
           name="out/log.jsonl", eval_name=None, eval_keys={}, config={"total_steps": 2000, "group_size": 8}),
         1925, (1300, 2000), "rb", "rollback custom-jsonl late-takeoff then-decline no-eval",
         "A custom GRPO loop, no eval. The reward was exactly 0 on most steps for the first 300, took off and "
         "reached ~0.35 by 700, and held there until ~1100 (per-step sd ~0.06). Since 1100 the model falls "
         "into repetition: lengths 1000 -> 3400 with 60% truncated, entropy 0.42 -> 1.1, and the reward "
         "slides to ~0.12 at 1300. The good stretch 700-1100 is behind; its end (~1100) is the target.",
         onset=1100),
    Spec("rb-hard-split-falls-from-620-easy-split-holds-train-climbs-wandb-csv",
         Story(lin((0, .45), (620, .60), (1100, .70)), conc=2, P=16, G=8, log_every=10,
               length=lin((0, 800), (620, 700), (1100, 380)),
               evals={"eval/hard_acc": (lin((0, .18), (400, .30), (620, .31), (1100, .21)), 400),
                      "eval/easy_acc": (lin((0, .85), (400, .88), (1100, .88)), 400)},
               eval_steps=every(50, 1100), headline="eval/hard_acc", age_min=20),
         W(w_wandb_csv, panels=[("train", "total", "train/reward"), ("eval", "eval/hard_acc", "eval/hard_acc"),
                                ("eval", "eval/easy_acc", "eval/easy_acc"),
                                ("train", "length", "train/completions/mean_length")],
           display="grpo-mix-hard-v3"), 1926, (1100, 2000), "rb", "rollback wandb-csv one-eval-falls",
         "W&B panel exports of a GRPO run whose goal is the hard split. Train reward keeps climbing 0.60 -> "
         "0.70 after ~620, but the policy gets there by shortening its reasoning (700 -> 380 tokens): the easy "
         "split holds at 0.88 while the hard split, the target, falls from 0.31 (~620) to 0.21 at 1100 (N=400, "
         "sd 0.023, 4 sd). A better model for the goal lies behind at ~600: roll back.", onset=620),
    Spec("rb-live-collapse-last-50-steps-after-plateau-350-640-trl-console-no-eval",
         Story(lin((0, .20), (350, .55), (640, .57), (660, .05), (700, .02)), conc=2, P=16, G=8, log_every=5,
               entropy=lin((0, .5), (640, .44), (655, 1.9), (700, 2.4)), grad=lin((0, .3), (640, .3), (650, 6),
                                                                                   (700, 1.5)),
               length=lin((0, 500), (640, 560), (660, 1900), (700, 2000)), trunc=lin((0, .01), (640, .01),
                                                                                     (660, .7)),
               sps=35, age_min=1),
         W(w_trl_console, keys=trl_keys("accuracy_reward"), spe=1500, name="nohup.out"),
         1927, (700, 1500), "rb", "rollback trl console live collapse no-eval",
         "TRL GRPO console (logging every 5 steps), live: written a minute ago, step 700 of 1500. The reward "
         "rose to ~0.55 by 350 and held 0.55-0.57 until 640. Then a grad-norm spike (~6) at ~650 and the "
         "policy breaks: entropy 0.44 -> 2+, completions run to the cap, reward ~0.02 within 20 steps. The "
         "best weights are at the end of the plateau (~640): roll back.", onset=645),
    Spec("rb-all-tests-pass-falls-from-800-lint-bonus-keeps-total-score-flat-verl-tb-reward-extra",
         Story(lin((0, .25), (400, .46), (800, .48), (1000, .36)), conc=2, P=64, G=8,
               parts={"lint": (lin((0, .3), (800, .6), (1000, .95)), "cont", .1, .35)},
               headline=TASK, length=lin((0, 400), (800, 450), (1000, 520)), sps=70, age_min=3),
         W(w_tb, keys={**VERL, "task": "reward_extra_info/all_tests_pass/mean",
                       "lint": "reward_extra_info/lint_bonus/mean"},
           sub="tensorboard_log/code_rl/deepseek-coder-7b-grpo"),
         1928, (1000, 1600), "rb", "rollback verl tensorboard task-reward-falls total-holds reward-extra-info",
         "verl GRPO for code: score = all_tests_pass + 0.35 * lint_bonus. critic/score/mean is flat at ~0.69 "
         "from 800 to 1000, so the headline curve says 'plateau'. Underneath, the lint bonus climbs 0.6 -> "
         "0.95 while the pass rate (reward_extra_info/all_tests_pass/mean) falls from 0.48 to 0.36 (per-step "
         "sd 0.04, sustained for 200 steps). The policy trades correctness for style: the best model is at "
         "~800, roll back.", onset=800),
    Spec("sor-heldout-eases-1.6sd-over-500-steps-after-plateau-kl-creeps-openrlhf-tb",
         Story(lin((0, .42), (400, .55), (1200, .57)), conc=2, P=32, G=8, beta=True,
               kl=lin((0, 0), (700, .03), (1200, .08)),
               evals={"eval_gsm8k_pass1": (lin((0, .40), (400, .52), (700, .525), (1200, .50)), 1000)},
               eval_steps=every(50, 1200, 50), headline="eval_gsm8k_pass1", sps=40, age_min=4),
         W(w_tb, keys={"total": "reward", "gstd": "group_reward_std", "kl": "kl", "length": "response_length",
                       "trunc": "truncated", "grad": "actor_grad_norm", "lr": "actor_lr", "loss": "policy_loss"},
           sub="tb/gsm8k-rpp", tprefix="train/", eprefix="eval/"), 1929, (1200, 1600), "sor",
         "stop-or-rollback openrlhf tensorboard slow-drift",
         "OpenRLHF GRPO on GSM8K: eval pass1 rose 0.40 -> 0.52 by 400 and peaked ~0.525 at 700; since then it "
         "eases to ~0.50 at 1200 (N=1000, sd 0.016: 1.6 sd over 500 steps) while KL keeps creeping 0.03 -> "
         "0.08 and the train reward inches up. Nothing more is being gained; whether the small slide is real "
         "cannot be told from the noise. Stopping is right; going back to the plateau is as good.", onset=700),
]

CASES = [s.case() for s in SPECS]
BY_NAME = {s.name: s for s in SPECS}


def write_run(case: Case, folder: Path) -> None:
    spec = BY_NAME[case.name]
    st = spec.story
    run = st.draws(np.random.default_rng(case.seed), case.reached)
    fin = case.reached >= (case.planned or case.reached) and spec.steps[0] == spec.steps[1]
    run.update(planned=case.planned or case.reached, reached=case.reached, finished=fin, sps=st.sps,
               t_end=NOW - st.age_min * 60,
               eval_every=(st.eval_steps[2] - st.eval_steps[1]) if len(st.eval_steps) > 2 else 0)
    folder.mkdir(parents=True, exist_ok=True)
    case.write(run, folder)
    set_times(folder, run)


def check(cases: list[Case]) -> None:
    for c in cases:
        spec = BY_NAME[c.name]
        st = spec.story
        lv, steps = st.level(), st.steps(c.reached)
        best = max(steps, key=lv)
        sd = max(st.sd(lv(best)), 1e-9)
        print(f"{c.name}: {c.labels.get('preferred')} accept={c.labels.get('accept')} "
              f"window={c.labels.get('rollback_window')} onset={c.labels.get('onset_step')}")
        print(f"    headline {st.headline}: first {lv(steps[0]):.4f}@{steps[0]} best {lv(best):.4f}@{best} "
              f"last {lv(steps[-1]):.4f}@{steps[-1]} sd {sd:.4f} ((best-last)/sd {(lv(best) - lv(steps[-1])) / sd:.1f}"
              f", (last-first)/sd {(lv(steps[-1]) - lv(steps[0])) / sd:.1f})")
        run = st.draws(np.random.default_rng(c.seed), c.reached)
        if st.headline in st.evals:
            pts = [(s, v[st.headline]) for s, v in run["eval"]]
        else:
            pts = [(s, v["task"] if st.headline == TASK else v[st.headline]) for s, v in run["train"]]
        stride = max(1, len(pts) // 14)
        print("    drawn " + " ".join(f"{s}:{x:.3f}" for s, x in pts[::stride]) + f" | last {pts[-1][0]}:{pts[-1][1]:.3f}")
        tr = run["train"]
        zf = [v["zero_frac"] for _, v in tr]
        z0 = sum(v["task"] == 0 for _, v in tr) / len(tr)
        print(f"    train: task==0 on {z0:.0%} of logs, zero_std mean {np.mean(zf):.2f}, "
              f"grad==0 on {sum(v['grad'] == 0 for _, v in tr) / len(tr):.0%}")


HEADER = """# Holdout set 19: hand-built runs written by make_holdout19.py, independent of the assessor, its judges and the
# other holdout generators. Theme: runs that learn nothing (sparse zero rewards, cosmetic-only rewards, no group
# variance, zero learning rate, frozen evals) and their healthy look-alikes, plus rise-then-fall shapes with the
# best at the end of long good stretches. Labels: what a careful practitioner should do under DESIGN.md's decision
# contract, read from each story's noise-free levels. rollback_window is inclusive: from the first logged headline
# step whose level is within one sampling sd of the best level to the newest such step not after onset_step.
# Run `.venv/bin/python evals/holdout19/make_holdout19.py` to write runs/ (gitignored); `--check` prints levels.
"""


def main() -> None:
    holdout_kit.main(HERE, "make_holdout19.py", "holdout19.yaml", "h19-", "holdout19", HEADER, CASES, write_run,
                     check)


if __name__ == "__main__":
    main()
