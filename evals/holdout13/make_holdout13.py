"""Holdout set 13: 29 hand-labelled RL post-training runs in real on-disk formats, independent of the assessor.

Run from the worktree root:
    .venv/bin/python evals/holdout13/make_holdout13.py           # writes runs/ (gitignored) and holdout13.yaml
    .venv/bin/python evals/holdout13/make_holdout13.py --check   # also prints levels, windows, and parses every file

How a run is made. Every case is a `Story`: noise-free level curves of the step (knots, saturating rises, step
changes) and a generator that draws what the framework would have logged from them, with this set's noise model:
  * binary rewards from group rollouts: each of P prompts in a batch gets a solve rate from Beta(p*c, (1-p)*c)
    (prompts differ in difficulty), each of its G rollouts is a Bernoulli draw; the logged reward is the batch mean
    (averaged over the logging interval where the framework averages, the current batch where it does not), and
    the reward std, zero-spread fraction and NeMo-RL pct_0 / pct_1 come from the same draws;
  * reward-model / judge scores: the batch mean of per-sample normal scores;
  * held-out evals: Binomial(N, p) / N on N problems (N is the eval set, times the samples per problem where
    mean@k is logged, shrunk for the correlation between samples of one problem);
  * grad norm: a level times exp(0.3 * Student-t(3)), so one log in ~50 is 2-3x the level;
  * KL, entropy, lengths, timings: a few percent of multiplicative log-normal noise.
Resumes are written as each framework writes them: TensorBoard and NeMo-RL keep both copies of the overlapping
steps (in two event files / exp dirs), an appended console log repeats them, trainer_state.json keeps one.

Labels follow DESIGN.md ("What the three decisions mean"). For a rollback the window comes from the noise-free
headline (the held-out eval where the case says so, else the train reward): from the first logged headline step whose
level is within one sampling sd of the best level, to the newest such step not after onset_step. The sampling sd is
that of one eval for an eval headline, and that of a 50-step mean of the train reward for a train headline (what a
practitioner's smoothed curve shows; a single every-step point of a small batch is far noisier). `--check` prints the
windows with the noisy values so each reasoning text can be read against the data.
"""

from __future__ import annotations

import csv
import json
import math
import sqlite3
import sys
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import holdout_kit
from holdout_kit import (
    HEALTHY,
    Case,
    Skip,
    converged,
    dump_json,
    rollback,
    stop,
    stop_or_rollback,
    tb_file,
    trainer_state,
)

HERE = Path(__file__).resolve().parent
T0 = 1_790_600_000.0  # wall-clock origin; each case adds its own offset
Row = tuple[float, int, dict]  # (wall time, step, {name: value})


# ------------------------------------------------------------------------------------------------------ level curves

def knots(pts: dict[float, float]) -> Callable[[float], float]:
    """Piecewise-linear through {step: level}, flat outside the first and last knot."""
    xs = sorted(pts)
    ys = [pts[x] for x in xs]
    return lambda s: float(np.interp(s, xs, ys))


def flat(v: float) -> Callable[[float], float]:
    return lambda s: float(v)


def rise(a: float, b: float, tau: float, t0: float = 0.0) -> Callable[[float], float]:
    """From a toward b with time constant tau, starting at t0."""
    return lambda s: float(a + (b - a) * (1.0 - math.exp(-max(s - t0, 0.0) / tau)))


def cosine_lr(peak: float, total: int, warmup: int = 0, floor: float = 0.0) -> Callable[[float], float]:
    def lr(s: float) -> float:
        if s < warmup:
            return peak * (s + 1) / warmup
        x = min(1.0, (s - warmup) / max(1, total - warmup))
        return peak * (floor + (1 - floor) * 0.5 * (1 + math.cos(math.pi * x)))
    return lr


# ------------------------------------------------------------------------------------------------------ noise model

def bin_batch(rng: np.random.Generator, p: float, prompts: int, group: int, conc: float, batches: int = 1) -> dict:
    """Group rollouts with 0/1 rewards over `batches` batches (averaged, as TRL averages over a logging interval)."""
    p = min(max(p, 1e-4), 1 - 1e-4)
    pi = rng.beta(p * conc, (1 - p) * conc, size=(batches, prompts))
    k = rng.binomial(group, pi)
    n = prompts * group
    means = k.sum(axis=1) / n
    stds = np.sqrt(np.maximum(means * (1 - means), 0.0) * n / (n - 1))
    return {"reward": float(means.mean()), "reward_std": float(stds.mean()),
            "zero_std": float(((k == 0) | (k == group)).mean()), "pct_0": float((k == 0).mean() * 100),
            "pct_1": float((k == group).mean() * 100), "all_same": float(((k.sum(axis=1) == 0) | (k.sum(axis=1) == n)).mean()),
            "max": float((k > 0).any()), "min": 0.0 if (k < group).any() else 1.0}


def bin_sd(p: float, prompts: int, group: int, conc: float, batches: int) -> float:
    """Sampling sd of the mean reward over `batches` batches of the model above (prompt difficulty + rollouts)."""
    var = p * (1 - p) / prompts * (1 / (conc + 1) + conc / ((conc + 1) * group))
    return math.sqrt(var / batches)


def binom(rng: np.random.Generator, p: float, n: int) -> float:
    return float(rng.binomial(n, min(max(p, 0.0), 1.0)) / n)


def eval_sd(p: float, n: int) -> float:
    return math.sqrt(p * (1 - p) / n)


def mult(rng: np.random.Generator, x: float, rel: float) -> float:
    return float(x * math.exp(rel * rng.standard_normal()))


def heavy(rng: np.random.Generator, x: float, tail: float = 0.3) -> float:
    return float(x * math.exp(tail * rng.standard_t(3)))


def rollouts(rng: np.random.Generator, steps: list[int], lv: dict, prompts: int, group: int, conc: float = 2.0,
             avg: int = 1, cap: int = 4096, beta: float = 0.0) -> list[tuple[int, dict]]:
    """One logged point per step in `steps` from level curves `lv` (see the module docstring for the noise)."""
    out = []
    r = 1.0 / math.sqrt(avg)
    for s in steps:
        if "p" in lv:
            v = bin_batch(rng, lv["p"](s), prompts, group, conc, avg)
        else:  # score-type reward: batch mean of per-sample normal scores
            n = prompts * group * avg
            mu, sd = lv["score"](s), lv["score_sd"](s)
            v = {"reward": float(mu + sd / math.sqrt(n) * rng.standard_normal()),
                 "reward_std": mult(rng, sd, 0.08 * r)}
            v["max"], v["min"] = v["reward"] + 2.6 * sd, v["reward"] - 2.6 * sd
        for key, rel in (("kl", 0.06), ("entropy", 0.025), ("step_time", 0.05)):
            if key in lv:
                v[key] = mult(rng, lv[key](s), rel * r)
        if "len" in lv:
            ln = min(mult(rng, lv["len"](s), 0.04 * r), cap)
            v["len"] = ln
            v["len_max"] = float(min(cap, round(ln * (1.9 + 0.4 * rng.random()))))
            v["len_min"] = float(max(8, round(ln * (0.15 + 0.15 * rng.random()))))
        if "trunc" in lv:
            v["trunc"] = float(rng.binomial(prompts * group * avg, min(max(lv["trunc"](s), 0), 1)) / (prompts * group * avg))
        if "lr" in lv:
            v["lr"] = float(lv["lr"](s))
        if "gn" in lv:
            v["grad_norm"] = heavy(rng, lv["gn"](s))
        v["loss"] = float(beta * v.get("kl", 0.0) + 0.012 * r * rng.standard_normal())
        out.append((s, v))
    return out


def walls(rows: list[tuple[int, dict]], t0: float, sec_per_step: float, every: int = 1) -> list[Row]:
    """Attach wall times: `step_time` where logged, else a fixed pace."""
    out, t = [], t0
    for s, v in rows:
        t += every * v.get("step_time", sec_per_step)
        out.append((t, s, v))
    return out


def evals(rng: np.random.Generator, steps: list[int], curves: dict[str, tuple[Callable, int]], t_of: Callable) -> list[Row]:
    """Held-out evals: {name: (level, N)} -> Binomial(N, level)/N at each step."""
    return [(t_of(s) + 30.0, s, {k: binom(rng, f(s), n) for k, (f, n) in curves.items()}) for s in steps]


def time_of(rows: list[Row]) -> Callable[[int], float]:
    ts = {s: t for t, s, _ in rows}
    xs = sorted(ts)
    return lambda s: float(np.interp(s, xs, [ts[x] for x in xs]))


def fmt6(x: float) -> float:
    return float(f"{x:.6g}")


# ------------------------------------------------------------------------------------------------------ stories

@dataclass
class Story:
    """A case's noise-free headline (for the label) and the generator of what was logged (for the writer)."""

    gen: Callable[[np.random.Generator], dict]
    head: Callable[[float], float]  # noise-free headline level
    head_steps: list[int]  # logged steps of the headline
    head_sd: float  # its sampling sd (see the module docstring)
    what: str = "train reward"


def window(story: Story, onset: int) -> tuple[int, int]:
    lv = np.array([story.head(s) for s in story.head_steps])
    thr = lv.max() - story.head_sd
    good = [s for s, y in zip(story.head_steps, lv, strict=True) if y >= thr - 1e-12]
    return good[0], max(s for s in good if s <= onset)


def RB(story: Story, onset: int) -> dict:
    return rollback(*window(story, onset), onset)


def SRB(story: Story, onset: int) -> dict:
    return stop_or_rollback(*window(story, onset), onset)


# ------------------------------------------------------------------------------------------------------ writers

def keyed(v: dict, keymap: dict[str, str], fmt: Callable = fmt6) -> dict:
    """Internal names -> the framework's keys, in the keymap's order; missing values are left out."""
    return {key: fmt(v[name]) for name, key in keymap.items() if name in v and v[name] is not None}


def last_copy(rows: list[Row]) -> list[Row]:
    """What a reader that keeps the newest write per step sees (for the label checks)."""
    best: dict[int, Row] = {}
    for r in rows:
        best[r[1]] = r
    return [best[s] for s in sorted(best)]


# --- HF Trainer: trainer_state.json, checkpoint-N/ --------------------------------------------------------------

def w_trainer_state(data: dict, out: Path, keys: dict, eval_keys: dict | None, max_steps: int, logging_steps: int,
                    save_steps: int, keep: int | None, steps_per_epoch: float, top_level: bool = False,
                    finished: bool = False, old: bool = False, loss_round: bool = True) -> None:
    """log_history rows as transformers appends them; a checkpoint-N copy per save, `keep` newest kept."""
    hist: list[tuple[int, dict]] = []
    train = last_copy(data["train"])
    ev = {s: v for _, s, v in data.get("eval", [])}
    last = train[-1][1]
    for _, s, v in train:
        row = keyed(v, keys, float)
        if "loss" in row and loss_round:
            row["loss"] = round(row["loss"], 4)
        row.update(epoch=round(s / steps_per_epoch, 4 if not old else 2), step=s)
        hist.append((s, row))
        if s in ev and eval_keys:
            erow = keyed(ev[s], eval_keys, float)
            erow.update(eval_runtime=round(40 + 8 * math.sin(s), 4), eval_samples_per_second=round(12.1 + math.cos(s), 3),
                        eval_steps_per_second=round(0.76 + 0.05 * math.cos(s), 3),
                        epoch=round(s / steps_per_epoch, 4 if not old else 2), step=s)
            hist.append((s, erow))
    if finished:
        hist.append((last, {"epoch": round(last / steps_per_epoch, 4), "step": last, "total_flos": 0.0,
                            "train_loss": round(float(np.mean([r.get("loss", 0.0) for _, r in hist])), 6),
                            "train_runtime": round(data["train"][-1][0] - data["train"][0][0], 4),
                            "train_samples_per_second": 1.93, "train_steps_per_second": 0.031}))

    def state_at(n: int, stop_flag: bool) -> dict:
        rows = [r for s, r in hist if s <= n and ("train_runtime" not in r or stop_flag)]
        st = trainer_state(rows, n, max_steps, logging_steps, save_steps, None, round(n / steps_per_epoch, 4),
                           num_train_epochs=max(1, math.ceil(max_steps / steps_per_epoch)), training_stop=stop_flag)
        if eval_keys:
            st["eval_steps"] = data.get("eval_every", save_steps)
        if old:
            for k in ("best_global_step", "stateful_callbacks", "num_input_tokens_seen", "train_batch_size"):
                st.pop(k, None)
        return st

    saves = list(range(save_steps, last + 1, save_steps))
    if finished and last not in saves:
        saves.append(last)
    for n in saves[-keep:] if keep else saves:
        ck = out / f"checkpoint-{n}"
        dump_json(ck / "trainer_state.json", state_at(n, finished and n == last))
        (ck / "adapter_config.json").write_text(json.dumps({"peft_type": "LORA", "r": 32, "lora_alpha": 64,
                                                            "target_modules": ["q_proj", "v_proj"]}, indent=2))
    if top_level:
        dump_json(out / "trainer_state.json", state_at(last, finished))


# --- TensorBoard ---------------------------------------------------------------------------------------------------

def tb_events(rows: list[Row], keymap: dict, prefix: str = "") -> list[tuple[float, int, dict]]:
    return [(t, s, {prefix + k: v for k, v in keyed(vals, keymap).items()}) for t, s, vals in rows]


def tb_name(wall: float, host: str, pid: int) -> str:
    return f"events.out.tfevents.{int(wall)}.{host}.{pid}.0"


def tb_newstyle(path: Path, events: list[tuple[float, int, dict]], truncate: int = 0) -> None:
    """Scalars as rank-0 float tensors with the `scalars` plugin metadata on each tag's first value (TF2 style)."""
    from tensorboard.compat.proto import event_pb2, summary_pb2, tensor_pb2, tensor_shape_pb2, types_pb2
    from tensorboard.summary.writer.record_writer import RecordWriter

    path.parent.mkdir(parents=True, exist_ok=True)
    seen: set[str] = set()
    with path.open("wb") as fh:
        w = RecordWriter(fh)
        w.write(event_pb2.Event(wall_time=events[0][0], file_version="brain.Event:2").SerializeToString())
        for wall, step, vals in events:
            values = []
            for tag, x in vals.items():
                tensor = tensor_pb2.TensorProto(dtype=types_pb2.DT_FLOAT, float_val=[float(x)],
                                                tensor_shape=tensor_shape_pb2.TensorShapeProto())
                val = summary_pb2.Summary.Value(tag=tag, tensor=tensor)
                if tag not in seen:
                    seen.add(tag)
                    val.metadata.plugin_data.plugin_name = "scalars"
                    val.metadata.data_class = summary_pb2.DATA_CLASS_SCALAR
                values.append(val)
            w.write(event_pb2.Event(wall_time=wall, step=int(step),
                                    summary=summary_pb2.Summary(value=values)).SerializeToString())
        w.flush()
    if truncate:
        path.write_bytes(path.read_bytes()[:-truncate])


# --- console logs ---------------------------------------------------------------------------------------------------

def py_repr(v: dict) -> str:
    return "{" + ", ".join(f"'{k}': {x!r}" for k, x in v.items()) + "}"


def np_repr(x: float | int) -> str:
    """How pprint.pformat shows a NumPy scalar under NumPy >= 2 (verl's console logger)."""
    if isinstance(x, int):
        return f"np.int64({x})"
    if x != x:
        return "np.float64(nan)"
    return f"np.float64({float(x)!r})"


def tqdm_bar(n: int, total: int, t: float, rate: float) -> str:
    pct = int(100 * n / total)
    full = int(10 * n / total)
    bar = "█" * full + (" " * (10 - full))
    el = int(t)
    left = int((total - n) * rate)
    return (f"{pct:3d}%|{bar}| {n}/{total} [{el // 3600:d}:{el // 60 % 60:02d}:{el % 60:02d}<"
            f"{left // 3600:d}:{left // 60 % 60:02d}:{left % 60:02d}, {rate:.2f}s/it]")


# --- MLflow file store, Trackio, W&B panel CSV ------------------------------------------------------------------

def w_mlflow_files(out: Path, exp_name: str, run_name: str, run_id: str, series: dict[str, list[tuple[int, float, float]]],
                   params: dict, status: int = 1, start: float = T0) -> None:
    """mlruns/<exp>/<run>/metrics/<key> lines `<ms> <value> <step>`; a `/` in a key makes nested dirs."""
    exp = out / "mlruns" / "1"
    home = f"file:///home/rl/work/{exp_name}/mlruns"
    exp.mkdir(parents=True, exist_ok=True)
    (out / "mlruns" / "0").mkdir(exist_ok=True)
    (out / "mlruns" / "0" / "meta.yaml").write_text(
        f"artifact_location: {home}/0\ncreation_time: {int(start * 1000) - 90000}\nexperiment_id: '0'\n"
        f"last_update_time: {int(start * 1000) - 90000}\nlifecycle_stage: active\nname: Default\n")
    (exp / "meta.yaml").write_text(
        f"artifact_location: {home}/1\ncreation_time: {int(start * 1000) - 60000}\nexperiment_id: '1'\n"
        f"last_update_time: {int(start * 1000) - 60000}\nlifecycle_stage: active\nname: {exp_name}\n")
    run = exp / run_id
    end = max(t for pts in series.values() for _, t, _ in pts)
    (run / "artifacts").mkdir(parents=True, exist_ok=True)
    (run / "meta.yaml").write_text(
        f"artifact_uri: {home}/1/{run_id}/artifacts\nend_time: {int(end * 1000) if status == 3 else 'null'}\n"
        f"entry_point_name: ''\nexperiment_id: '1'\nlifecycle_stage: active\nrun_id: {run_id}\nrun_name: {run_name}\n"
        f"run_uuid: {run_id}\nsource_name: ''\nsource_type: 4\nsource_version: ''\nstart_time: {int(start * 1000)}\n"
        f"status: {status}\ntags: []\nuser_id: rl\n")
    for key, pts in series.items():
        f = run / "metrics" / key
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text("".join(f"{int(t * 1000)} {v!r} {s}\n" for s, t, v in pts))
    (run / "params").mkdir(exist_ok=True)
    for k, v in params.items():
        (run / "params" / k).write_text(str(v))
    (run / "tags").mkdir(exist_ok=True)
    for k, v in {"mlflow.runName": run_name, "mlflow.user": "rl", "mlflow.source.type": "LOCAL",
                 "mlflow.source.name": "train_grpo.py"}.items():
        (run / "tags" / k).write_text(v)


def iso(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")


def trackio_value(x: float) -> float | str:
    if x != x:
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    return x


def w_trackio(out: Path, project: str, run_name: str, rows: list[Row], config: dict, with_run_id: bool) -> None:
    """One SQLite database per project: metrics(…, step, metrics JSON); `run_id` only in the 2026 schema."""
    db_path = out / "trackio" / f"{project}.db"
    db_path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(db_path)
    rid = "cz5g0k2e" if with_run_id else None
    rcol = "run_id TEXT, " if with_run_id else ""
    db.execute(f"CREATE TABLE metrics (id INTEGER PRIMARY KEY AUTOINCREMENT, {rcol}timestamp TEXT, run_name TEXT, "
               "step INTEGER, metrics TEXT)")
    db.execute(f"CREATE TABLE configs (id INTEGER PRIMARY KEY AUTOINCREMENT, {rcol}run_name TEXT, config TEXT, "
               "created_at TEXT)")
    db.execute(f"CREATE TABLE system_metrics (id INTEGER PRIMARY KEY AUTOINCREMENT, {rcol}timestamp TEXT, "
               "run_name TEXT, metrics TEXT)")
    db.execute("CREATE INDEX idx_metrics_run_step ON metrics(run_name, step)")
    cfg = json.dumps({**config, "_Created": iso(rows[0][0] - 20)})
    if with_run_id:
        db.execute("INSERT INTO configs (run_id, run_name, config, created_at) VALUES (?,?,?,?)",
                   (rid, run_name, cfg, iso(rows[0][0] - 20)))
        db.executemany("INSERT INTO metrics (run_id, timestamp, run_name, step, metrics) VALUES (?,?,?,?,?)",
                       [(rid, iso(t), run_name, s, json.dumps({k: trackio_value(x) for k, x in v.items()}))
                        for t, s, v in rows])
    else:
        db.execute("INSERT INTO configs (run_name, config, created_at) VALUES (?,?,?)", (run_name, cfg, iso(rows[0][0] - 20)))
        db.executemany("INSERT INTO metrics (timestamp, run_name, step, metrics) VALUES (?,?,?,?)",
                       [(iso(t), run_name, s, json.dumps({k: trackio_value(x) for k, x in v.items()}))
                        for t, s, v in rows])
    db.commit()
    db.close()


def w_wandb_panel(path: Path, run: str, key: str, pts: list[tuple[int, float]], budget: int) -> None:
    """UI panel "Export -> CSV": Step, `<run> - <key>`, and the bucket's __MIN / __MAX; downsampled to `budget`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    size = max(1, math.ceil(len(pts) / budget))
    with path.open("w", newline="") as fh:
        w = csv.writer(fh, quoting=csv.QUOTE_ALL)
        w.writerow(["Step", f"{run} - {key}", f"{run} - {key}__MIN", f"{run} - {key}__MAX"])
        for i in range(0, len(pts), size):
            b = pts[i:i + size]
            ys = [y for _, y in b]
            w.writerow([b[0][0], f"{ys[0]:.6g}", f"{min(ys):.6g}", f"{max(ys):.6g}"])


# ====================================================================================================== the cases
# Each case: a story (levels + generator), a writer, and the label with its reasoning. Internal names used by the
# generators: reward, reward_std, zero_std, pct_0, pct_1, all_same, kl, entropy, len, len_max, len_min, trunc, lr,
# grad_norm, loss, step_time; eval rows carry their own names.

CASES: list[Case] = []


def case(name: str, story: Story, write: Callable, seed: int, steps, labels: dict, tags: str, why: str) -> None:
    CASES.append(Case(name, story, write, seed, steps, labels, tags, why))


def write_run(c: Case, folder: Path) -> None:
    data = c.scenario.gen(np.random.default_rng(c.seed))
    folder.mkdir(parents=True, exist_ok=True)
    c.write(data, folder)


def trl_fill(rows: list[Row], fns: dict[str, str] | None = None, tokens_per_step: float = 0.0) -> list[Row]:
    """Derived TRL GRPO/RLOO columns: per-function means, terminated lengths, cumulative tokens, on-policy clip 0."""
    total = 0.0
    out = []
    for t, s, v in rows:
        v = dict(v)
        if fns is None:
            v["comp_mean"], v["comp_std"] = v["reward"], v["reward_std"]
        if "len" in v:
            tr = v.get("trunc", 0.0)
            term = (v["len"] - tr * v["len_max"]) / (1 - tr) if tr < 0.95 else 0.0
            v["term_len"] = float(min(max(term, v["len_min"]), v["len"])) if tr < 0.95 else 0.0
            v["term_max"] = v["len_max"] if tr == 0 else float(round(v["len_max"] * 0.93))
            total += tokens_per_step * (1 + v["len"] / 400)
            v["num_tokens"] = float(round(total))
        v["clip0"] = 0.0
        out.append((t, s, v))
    return out


TRL_GRPO_KEYS = {"loss": "loss", "grad_norm": "grad_norm", "lr": "learning_rate", "num_tokens": "num_tokens",
                 "len": "completions/mean_length", "len_min": "completions/min_length",
                 "len_max": "completions/max_length", "trunc": "completions/clipped_ratio",
                 "term_len": "completions/mean_terminated_length", "term_max": "completions/max_terminated_length",
                 "comp_mean": "rewards/{fn}/mean", "comp_std": "rewards/{fn}/std", "reward": "reward",
                 "reward_std": "reward_std", "zero_std": "frac_reward_zero_std", "kl": "kl", "entropy": "entropy",
                 "clip0": "clip_ratio/region_mean", "step_time": "step_time"}


def trl_keys(fn: str, drop: tuple = (), extra: dict | None = None) -> dict:
    keys = {k: v.format(fn=fn) for k, v in TRL_GRPO_KEYS.items() if k not in drop}
    keys.update(extra or {})
    return keys


# ---------------------------------------------------------------------------------- H1: two temperatures (healthy)

def s_two_temp_ok() -> Story:
    greedy = knots({0: .55, 300: .595, 500: .61, 1100: .615})
    sampled = knots({0: .38, 300: .45, 700: .51, 1100: .555})
    lv = dict(p=rise(.30, .62, 900), kl=knots({0: .001, 1100: .08}), entropy=knots({0: .55, 1100: .38}),
              len=knots({0: 620, 1100: 540}), lr=flat(1e-6), gn=flat(.11), step_time=flat(41.0), trunc=flat(.01))
    esteps = list(range(0, 1101, 100))

    def gen(rng):
        tr = walls(rollouts(rng, list(range(1, 1101)), lv, 64, 8, 2.0, cap=2048, beta=.001), T0, 41)
        ev = evals(rng, esteps, {"greedy": (greedy, 500), "sampled": (sampled, 1200)}, time_of(tr))
        return {"train": tr, "eval": ev}
    return Story(gen, sampled, esteps, eval_sd(.555, 1200), "sampled eval")


def w_custom_jsonl_evalfile(data, out: Path) -> None:
    keys = {"reward": "reward", "reward_std": "reward_std", "zero_std": "frac_groups_no_signal", "kl": "kl_to_ref",
            "entropy": "entropy", "len": "mean_response_tokens", "trunc": "truncated_frac", "grad_norm": "grad_norm",
            "lr": "lr", "loss": "loss", "step_time": "step_seconds"}
    with (out / "train_log.jsonl").open("w") as fh:
        for t, s, v in data["train"]:
            fh.write(json.dumps({"step": s, "time": iso(t), **keyed(v, keys)}) + "\n")
    with (out / "eval_log.jsonl").open("w") as fh:
        for t, s, v in data["eval"]:
            fh.write(json.dumps({"step": s, "time": iso(t), "dataset": "math500", "n_problems": 500,
                                 "greedy_acc": v["greedy"], "sampled_acc": v["sampled"], "sampled_temperature": 1.0,
                                 "samples_per_problem": 4}) + "\n")
    (out / "config.json").write_text(json.dumps({
        "model": "Qwen2.5-Math-1.5B", "algo": "grpo", "prompts_per_step": 64, "group_size": 8, "lr": 1e-6,
        "kl_coef": 0.001, "max_new_tokens": 2048, "total_steps": 2000, "eval_every": 100,
        "eval": {"greedy": {"temperature": 0.0}, "sampled": {"temperature": 1.0, "n": 4}}}, indent=2))


case("ok-greedy-eval-flat-sampled-eval-rising-custom-jsonl-eval-file", s_two_temp_ok(), w_custom_jsonl_evalfile,
     1301, (1100, 2000), HEALTHY,
     "custom jsonl eval_file two_temperatures grpo live lookalike eval_plateau",
     """Own GRPO loop, step 1100 of 2000, eval every 100 steps in a separate eval_log.jsonl on MATH-500 at two
     temperatures. Greedy accuracy has sat at ~0.61 since step ~500 (500 problems, sd ~0.022), which on its own reads
     as an eval plateau. The sampled eval (T=1.0, 4 samples per problem) is still climbing: ~0.45 at 300, ~0.51 at
     700, ~0.55 at 1100 (sd ~0.014), +0.04 over the last 300 steps, and the train reward rises with it (~0.49 ->
     ~0.53 over the same stretch). Entropy falls slowly (0.55 -> 0.38) and KL stays small (~0.08): RL is sharpening the sampling
     distribution, which greedy decoding already had. More steps still pay at the rollout temperature: continue.""")


# ------------------------------------------------------------------ H2: operator resumed from an older checkpoint

def s_resume_superseded() -> Story:
    a = dict(p=knots({0: .35, 600: .58, 680: .585, 760: .45, 820: .30}), kl=knots({0: 0, 600: .05, 680: .06, 760: .35, 820: .9}),
             gn=knots({0: .25, 680: .3, 760: 2.5, 820: 6.0}), len=knots({0: 700, 680: 760, 760: 1500, 820: 2600}),
             trunc=knots({0: .01, 680: .02, 760: .2, 820: .55}), lr=flat(1e-6), step_time=knots({0: 95, 820: 140}))
    b = dict(p=knots({600: .58, 1150: .665}), kl=knots({600: .05, 1150: .085}), gn=flat(.28),
             len=knots({600: 740, 1150: 800}), trunc=flat(.02), lr=flat(5e-7), step_time=flat(96))
    ea = knots({0: .40, 600: .55, 700: .55, 800: .36})
    eb = knots({600: .55, 1150: .60})
    esteps = list(range(0, 1151, 50))

    def gen(rng):
        tr1 = walls(rollouts(rng, list(range(1, 821)), a, 128, 8, 2.0, cap=3072, beta=.01), T0 + 1e5, 95)
        ev1 = evals(rng, list(range(50, 801, 50)), {"pass1": (ea, 500)}, time_of(tr1))
        t2 = tr1[-1][0] + 5 * 3600
        tr2 = walls(rollouts(rng, list(range(601, 1151)), b, 128, 8, 2.0, cap=3072, beta=.01), t2, 96)
        ev2 = evals(rng, list(range(650, 1151, 50)), {"pass1": (eb, 500)}, time_of(tr2))
        return {"segs": [(tr1, ev1), (tr2, ev2)]}
    return Story(gen, eb, esteps, eval_sd(.6, 500), "eval pass1")


ORLHF_KEYS = {"loss": "policy_loss", "kl": "kl", "reward": "reward", "ret": "return", "len": "response_length",
              "total_len": "total_length", "trunc": "truncated", "lr": "actor_lr", "grad_norm": "actor_grad_norm",
              "clip": "ppo_clip_ratio", "ppo_kl": "ppo_kl", "vllm_kl": "vllm_kl", "group_std": "group_reward_std",
              "t_gen": "timing/generation", "t_exp": "timing/make_experience", "t_train": "timing/ppo_train",
              "t_bcast": "timing/broadcast", "t_total": "timing/step_total"}


def orlhf_fill(rng, rows: list[Row]) -> list[Row]:
    out = []
    for t, s, v in rows:
        v = dict(v)
        v["ret"] = v["reward"] - v.get("kl", 0) * 0.01 * v.get("len", 500) / 50
        v["total_len"] = v.get("len", 500) + 142.0
        v["clip"] = mult(rng, .004 + .02 * min(1.0, v.get("grad_norm", .3) / 5), .2)
        v["ppo_kl"] = mult(rng, 2e-4 + 1e-3 * min(1.0, v.get("grad_norm", .3) / 5), .3)
        v["vllm_kl"] = mult(rng, 6e-4, .2)
        v["group_std"] = v["reward_std"] * (1 - v["zero_std"]) ** .5
        st = v.get("step_time", 90.0)
        v.update(t_gen=st * .62, t_exp=st * .16, t_train=st * .19, t_bcast=st * .03, t_total=st)
        out.append((t, s, v))
    return out


def w_orlhf_tb_resumed(data, out: Path) -> None:
    d = out / "tensorboard" / "qwen2.5-7b-grpo-math-lr1e-6"
    for i, (tr, ev) in enumerate(data["segs"]):
        rng = np.random.default_rng(7 + i)
        evs = tb_events(orlhf_fill(rng, tr), ORLHF_KEYS, "train/")
        evs += [(t, s, {"eval/eval_math500_pass1": v["pass1"], "eval/eval_response_length_mean": 700.0 + s / 10})
                for t, s, v in ev]
        evs.sort(key=lambda e: e[0])
        tb_file(d / tb_name(evs[0][0], "dgx-a100-04", 30211 + 977 * i), evs)


case("ok-operator-resumed-older-ckpt-collapse-superseded-openrlhf-tb", s_resume_superseded(), w_orlhf_tb_resumed,
     1302, (1150, 2000), HEALTHY,
     "openrlhf tensorboard grpo resume overlap two_event_files live lookalike stale_collapse",
     """OpenRLHF GRPO, two event files in one TensorBoard dir. The first (steps 1-820) shows a good run to ~600
     (reward ~0.58, eval pass@1 ~0.55) that broke from ~700: grad norm 0.3 -> 6, KL 0.06 -> 0.9, truncation 2% ->
     55%, reward down to ~0.30 by 820. The operator then restarted from global_step600 with half the LR: the second
     file, written hours later, logs steps 601-1150 again and supersedes the first from 601 on. In it the reward
     climbs ~0.58 -> ~0.66, eval 0.55 -> ~0.60 (500 problems every 50, sd ~0.022), KL ~0.05-0.09, grad norm ~0.3,
     truncation ~2%. The collapse belongs to a discarded branch; keeping the newest write per step the live run is
     healthy and still improving with 850 of 2000 steps left: continue.""")


# --------------------------------------------------------------- H3: PPO value loss grows with the return scale

def s_value_scale() -> Story:
    score = rise(-.8, 3.2, 600)
    lv = dict(score=score, score_sd=knots({0: 1.1, 700: 1.5}), kl=knots({0: .02, 700: 5.8}),
              entropy=knots({0: 38.0, 700: 31.0}), len=knots({0: 48, 700: 52}), step_time=flat(9.2))
    steps = list(range(1, 701))

    def gen(rng):
        rows = walls(rollouts(rng, steps, lv, 64, 1), T0 + 2e5, 9.2)
        for _, s, v in rows:
            ret_var = .6 + 2.8 * (s / 700) ** 1.2
            ev = min(.64, .35 + .2 * s / 100) if s < 100 else .55 + .09 * s / 700
            v["ret_var"] = mult(rng, ret_var, .1)
            v["ev"] = ev + .03 * rng.standard_normal()
            v["vloss"] = mult(rng, .5 * (1 - ev) * ret_var, .12)
            v["ret_mean"] = v["reward"] * .92 - .1
            v["ploss"] = -.01 + .012 * rng.standard_normal()
            v["total"] = v["ploss"] + .1 * v["vloss"]
            v["kl_coef"] = .2 * (1 - .2 * s / 700) * math.exp(.01 * rng.standard_normal())
            v["approxkl"] = mult(rng, .018, .25)
            v["clipfrac"] = mult(rng, .07, .2)
            v["lr"] = 1.41e-5
            v["vclip"] = mult(rng, .12, .2)
            v["verr"] = v["vloss"] * 2
        return {"train": rows}
    return Story(gen, score, steps, .02)


def w_legacy_ppo_tb(data, out: Path) -> None:
    keys = {"reward": "env/reward_mean", "reward_std": "env/reward_std", "kl": "objective/kl",
            "kl_coef": "objective/kl_coef", "entropy": "objective/entropy", "vloss": "ppo/loss/value",
            "ploss": "ppo/loss/policy", "total": "ppo/loss/total", "ev": "ppo/val/var_explained",
            "verr": "ppo/val/error", "vclip": "ppo/val/clipfrac", "ret_mean": "ppo/returns/mean",
            "ret_var": "ppo/returns/var", "approxkl": "ppo/policy/approxkl", "clipfrac": "ppo/policy/clipfrac",
            "lr": "ppo/learning_rate", "len": "tokens/responses_len_mean", "step_time": "time/ppo/total"}
    rows = data["train"]
    for _, _, v in rows:
        v["score_copy"] = v["reward"]
    keys["score_copy"] = "ppo/mean_scores"
    tb_file(out / "logs" / "trl" / tb_name(rows[0][0], "lambda-1", 4412), tb_events(rows, keys))


case("ok-value-loss-grows-with-return-scale-ev-steady-legacy-ppo-tb", s_value_scale(), w_legacy_ppo_tb,
     1303, (700, 1500), HEALTHY,
     "trl legacy_ppo tensorboard reward_model critic live lookalike value_loss_rising",
     """Legacy TRL PPOTrainer (<=0.11 keys through accelerate's TensorBoard tracker), PPO step 700 of 1500 with a
     learned reward model. env/reward_mean climbs -0.8 -> ~2.0 and is still rising. ppo/loss/value grows ~3x (~0.2
     -> ~0.6), which looks like a diverging critic, but ppo/returns/var grows in step (~0.7 -> ~3.5) as the score scale
     widens, and ppo/val/var_explained holds ~0.57-0.63 after the first ~80 steps: the critic explains the same
     share of a larger target.
     KL rises to ~6 nats under the adaptive controller (kl_coef 0.2 -> 0.16), approxkl ~0.02 and clipfrac ~0.07 are
     steady. Healthy and improving: continue.""")


# ------------------------------------------------------------------------- H4: RLOO k=2, every step, huge noise

def s_rloo_k2_ok() -> Story:
    p = knots({0: .28, 900: .41})
    lv = dict(p=p, kl=knots({0: .0005, 900: .03}), entropy=knots({0: .62, 900: .55}), len=knots({0: 410, 900: 455}),
              trunc=flat(.01), gn=flat(.35), lr=lambda s: 1e-6 * (1 - s / 2500), step_time=flat(9.5))
    steps = list(range(1, 901))

    def gen(rng):
        rows = walls(rollouts(rng, steps, lv, 16, 2, 2.0, cap=1024, beta=.05), T0 + 3e5, 9.5)
        return {"train": trl_fill(rows, tokens_per_step=16 * 2 * 180)}
    return Story(gen, p, steps, bin_sd(.41, 16, 2, 2.0, 50))


def w_rloo_state(data, out: Path) -> None:
    w_trainer_state(data, out, trl_keys("correctness_reward"), None, 2500, 1, 100, 3, 500.0)


case("ok-rloo-k2-every-step-huge-noise-real-rise-trl022-state", s_rloo_k2_ok(), w_rloo_state, 1304, (900, 2500),
     HEALTHY, "trl rloo trainer_state checkpoints group_size_2 every_step noisy live lookalike",
     """TRL RLOOTrainer (0.22+ GRPO-style keys), num_generations=2, 16 prompts per step, logging_steps=1, step 900
     of 2500; checkpoint-700/800/900 on disk. Each logged reward is the mean of 32 binary completions, so single
     points jump by +-0.1 (sd ~0.1) and frac_reward_zero_std sits ~0.65-0.75 (two samples often agree); step to step the curve looks like noise.
     Binned it is a steady climb: ~0.29 over the first 100 steps, ~0.35 around 450, ~0.40 over the last 100 (the sd
     of a 100-step mean is ~0.01). KL (beta 0.05) creeps to ~0.03, entropy 0.62 -> 0.55, lengths stable. A real
     trend under heavy noise with budget left: continue.""")


# ------------------------------------------------------------------------------ H5: 52k steps, logged every step

def s_long_52k() -> Story:
    p = rise(.12, .50, 40000)
    ev = rise(.10, .48, 40000)
    lv = dict(p=p, entropy=knots({0: .9, 52000: .55}), len=knots({0: 180, 52000: 240}), gn=flat(.2),
              lr=flat(1e-6), step_time=flat(3.2), trunc=flat(.003))
    esteps = list(range(2000, 52001, 2000))

    def gen(rng):
        rows = walls(rollouts(rng, list(range(1, 52001)), lv, 32, 4, 3.0, cap=512), T0 + 4e5, 3.2)
        return {"train": trl_fill(rows, tokens_per_step=32 * 4 * 90),
                "eval": evals(rng, esteps, {"acc": (ev, 1000)}, time_of(rows))}
    return Story(gen, ev, esteps, eval_sd(.4, 1000), "eval reward")


def w_trackio_long(data, out: Path) -> None:
    keys = {k: "train/" + v for k, v in trl_keys("countdown_reward", drop=("kl", "step_time")).items()}
    rows = []
    ev = {s: (t, v) for t, s, v in data["eval"]}
    for t, s, v in data["train"]:
        r = keyed(v, keys, float)
        r["train/epoch"] = round(s / 4000, 4)
        rows.append((t, s, r))
        if s in ev:
            te, e = ev[s]
            rows.append((te, s, {"eval/reward": e["acc"], "eval/rewards/countdown_reward/mean": e["acc"],
                                 "eval/runtime": 61.4, "eval/samples_per_second": 16.3, "eval/epoch": round(s / 4000, 4)}))
    w_trackio(out, "countdown-grpo", "qwen0.5b-countdown-long", rows,
              {"learning_rate": 1e-6, "max_steps": 80000, "num_generations": 4, "beta": 0.0, "logging_steps": 1,
               "eval_steps": 2000, "per_device_train_batch_size": 32}, with_run_id=True)


case("ok-52k-steps-every-step-slow-climb-eval-every-2k-trackio", s_long_52k(), w_trackio_long, 1305, (52000, 80000),
     HEALTHY, "trl trackio grpo very_long every_step sparse_eval live lookalike slow_learner",
     """TRL GRPO logged to Trackio (2026 schema with run_id), Countdown task, 52,000 steps logged every step of an
     80,000-step plan. Per-step train reward (128 binary completions) has sd ~0.055, so the last 10k steps look
     flat point by point; the 2k-step means still rise (~0.36 at 40k, ~0.40 at 52k). The eval every 2000 steps on
     1000 problems (sd ~0.016) goes ~0.34 at 40k -> ~0.37 at 52k, +0.03 over 12k steps and still moving at ~0.005
     per 2k. Constant LR, entropy 0.9 -> 0.55 slowly, lengths stable, no instability. Slow but real gains with a third
     of the budget left: continue.""")


# ------------------------------------------------------------------------------------ H6: 15 points, early, noisy

def s_short_15_ok() -> Story:
    acc = knots({0: .18, 150: .31})
    fmt = rise(.35, .97, 45)
    steps = list(range(10, 151, 10))

    def gen(rng):
        rows = []
        for s in steps:
            a = bin_batch(rng, acc(s), 8, 8, 2.0, 10)
            f = bin_batch(rng, fmt(s), 8, 8, 4.0, 10)
            v = {"reward": a["reward"] + f["reward"], "reward_std": math.hypot(a["reward_std"], f["reward_std"]),
                 "zero_std": a["zero_std"] * f["zero_std"] ** .5, "acc": a["reward"], "acc_std": a["reward_std"],
                 "fmt": f["reward"], "fmt_std": f["reward_std"], "entropy": mult(rng, .48 - .0004 * s, .02),
                 "len": mult(rng, 260 + .4 * s, .03), "trunc": float(rng.binomial(640, .01) / 640),
                 "grad_norm": heavy(rng, .22), "lr": cosine_lr(5e-6, 1000, 100)(s),
                 "loss": .01 * rng.standard_normal(), "step_time": mult(rng, 14.0, .05)}
            v["len_max"], v["len_min"] = float(round(v["len"] * 2.1)), float(round(v["len"] * .3))
            rows.append((s, v))
        return {"train": trl_fill(walls(rows, T0 + 5e5, 14.0, 10), fns={}, tokens_per_step=640 * 170)}
    return Story(gen, lambda s: acc(s) + fmt(s), steps, bin_sd(.3, 8, 8, 2.0, 50))


def w_short_state(data, out: Path) -> None:
    keys = trl_keys("x", drop=("comp_mean", "comp_std", "kl"), extra={
        "acc": "rewards/accuracy_reward/mean", "acc_std": "rewards/accuracy_reward/std",
        "fmt": "rewards/format_reward/mean", "fmt_std": "rewards/format_reward/std"})
    w_trainer_state(data, out, keys, None, 1000, 10, 50, None, 250.0)


case("ok-15pts-short-noisy-rising-trl-state", s_short_15_ok(), w_short_state, 1306, (150, 1000), HEALTHY,
     "trl grpo trainer_state checkpoints very_short early live lookalike",
     """TRL GRPO, only 15 logged points (logging_steps=10, step 150 of 1000; checkpoint-50/100/150). Reward is
     accuracy + format. The format reward saturates fast (~0.5 at 10 -> ~0.9 by 100), the accuracy reward is noisy
     (8 prompts x 8 per step, sd ~0.03 per 10-step log) but moves ~0.19 -> ~0.30. Entropy, lengths and grad norm
     are unremarkable, LR is just past its 100-step warmup. Far too early and too clearly improving to stop:
     continue.""")


# ----------------------------------------------------------------- H7: last evals 1.5 sd under the max, level rising

VERL03 = {"reward": ("critic/score/mean", 0), "max": ("critic/score/max", 0), "min": ("critic/score/min", 0),
          "shaped": ("critic/rewards/mean", 0), "adv": ("critic/advantages/mean", 0),
          "adv_max": ("critic/advantages/max", 0), "adv_min": ("critic/advantages/min", 0),
          "ret": ("critic/returns/mean", 0), "len": ("response_length/mean", 0), "len_max": ("response_length/max", 0),
          "len_min": ("response_length/min", 0), "trunc": ("response_length/clip_ratio", 0),
          "plen": ("prompt_length/mean", 0), "entropy": ("actor/entropy_loss", 1), "pg_loss": ("actor/pg_loss", 1),
          "clipfrac": ("actor/pg_clipfrac", 1), "ppo_kl": ("actor/ppo_kl", 1), "kl": ("actor/kl_loss", 1),
          "kl_coef": ("actor/kl_coef", 1), "grad_norm": ("actor/grad_norm", 1), "lr": ("actor/lr", 1),
          "t_gen": ("timing_s/gen", 0), "t_old": ("timing_s/old_log_prob", 0), "t_ref": ("timing_s/ref", 0),
          "t_adv": ("timing_s/adv", 0), "t_upd": ("timing_s/update_actor", 0), "t_test": ("timing_s/testing", 0),
          "step_time": ("timing_s/step", 0)}


def verl_fill(rng, rows: list[Row], kl_coef: float = .001) -> list[Row]:
    out = []
    for t, s, v in rows:
        v = dict(v)
        v.setdefault("shaped", v["reward"])
        v["adv"] = 2e-3 * rng.standard_normal()
        v["adv_max"], v["adv_min"] = mult(rng, 1.79, .05), -mult(rng, 1.79, .05)
        v["ret"] = v["adv"]
        v["plen"] = mult(rng, 104.0, .01)
        v["pg_loss"] = -.002 + .006 * rng.standard_normal()
        v["clipfrac"] = mult(rng, .0022, .2)
        v["ppo_kl"] = 1e-4 * rng.standard_normal()
        v["kl_coef"] = kl_coef
        st = v.get("step_time", 60.0)
        v.update(t_gen=st * .58, t_old=st * .07, t_ref=st * .07, t_adv=.05 + .01 * rng.random(), t_upd=st * .24)
        out.append((t, s, v))
    return out


def verl_line(step: int, vals: dict[str, tuple[float, int]], prefix: str) -> str:
    parts = [f"{k}:{np_repr(x) if is_np else repr(round(x, 6) if isinstance(x, float) else x)}"
             for k, (x, is_np) in vals.items()]
    return f"{prefix} step:{step} - " + " - ".join(parts)


def verl_console_rows(rows: list[Row], ev: dict[int, dict], keys: dict, vkey: str, prefix: str) -> list[str]:
    lines = []
    if 0 in ev:
        lines.append(f"{prefix} Initial validation metrics: {{'{vkey}': {np_repr(ev[0]['acc'])}}}")
        lines.append(verl_line(0, {vkey: (ev[0]["acc"], 1)}, prefix))
    for _, s, v in rows:
        vals = {keys[k][0]: (v[k], keys[k][1]) for k in keys if k in v}
        if s in ev and s != 0:
            vals["timing_s/testing"] = (31.7 + (s % 7), 0)
            vals[vkey] = (ev[s]["acc"], 1)
        lines.append(verl_line(s, vals, prefix))
    return lines


def s_small_dip_ok() -> Story:
    ev = rise(.62, .84, 160)
    p = rise(.60, .86, 150)
    lv = dict(p=p, entropy=knots({0: .52, 240: .33}), kl=knots({0: 0, 240: .012}), len=knots({0: 240, 240: 205}),
              trunc=flat(.002), gn=flat(.28), lr=flat(1e-6), step_time=flat(58.0))
    esteps = list(range(0, 241, 10))

    def gen(rng):
        rows = verl_fill(rng, walls(rollouts(rng, list(range(1, 241)), lv, 256, 5, 3.0, cap=1024), T0 + 6e5, 58))
        return {"train": rows, "eval": evals(rng, esteps, {"acc": (ev, 1319)}, time_of(rows))}
    return Story(gen, ev, esteps, eval_sd(.79, 1319), "val gsm8k")


def w_verl03_console(data, out: Path) -> None:
    pre = "\x1b[36m(main_task pid=2207)\x1b[0m"
    ev = {s: v for _, s, v in data["eval"]}
    head = ["2025-04-02 09:14:51,377\tINFO worker.py:1841 -- Started a local Ray instance.",
            f"{pre} Using dataset class: RLHFDataset",
            f"{pre} Size of train dataloader: 29",
            f"{pre} Total training steps: 435",
            f"{pre} {{'algorithm': {{'adv_estimator': 'grpo', 'kl_ctrl': {{'kl_coef': 0.001, 'type': 'fixed'}}}},",
            f"{pre}  'trainer': {{'test_freq': 10, 'total_epochs': 15, 'val_before_train': True}}}}"]
    body = verl_console_rows(data["train"], ev, VERL03, "val/test_score/openai/gsm8k", pre)
    mixed = []
    for i, line in enumerate(body):
        mixed.append(line)
        if i % 37 == 5:
            mixed.append(f"\x1b[36m(WorkerDict pid=2519)\x1b[0m INFO {i:02d}-02 10:1{i % 10}:03 "
                         "[vllm] Prefix cache hit rate: GPU: 61.20%")
    (out / "verl_grpo_gsm8k_qwen2.5-3b.log").write_text("\n".join(head + mixed) + "\n")


case("ok-last-evals-dip-1.5sd-level-rising-verl03-console", s_small_dip_ok(), w_verl03_console, 1304, (240, 435),
     HEALTHY, "verl console old_keys grpo gsm8k live lookalike eval_dip_within_noise",
     """verl 0.3-era console log (val/test_score/openai/gsm8k, actor/entropy_loss, np.float64(...) values, Ray and
     vLLM lines mixed in), GRPO on GSM8K, step 240 of 435, validation every 10 steps on the 1319-problem test set
     (sd ~0.011). The level still rises (~0.62 at step 0, ~0.75 at 100, ~0.79 at 240, about +0.012 per 50 steps now)
     and the train score with it; KL loss ~0.01, entropy 0.52 -> 0.33, lengths steady. The last two evals happen to
     sit ~1.5 sd under the best single eval a few points earlier, which is the size of dip the sampling noise makes
     on its own; nothing else moved. Not a decline: continue.""")


# --------------------------------------------------------- H8: KL-shaped reward flat while the task score rises

def s_kl_shaped_ok() -> Story:
    score = rise(.25, .70, 250)
    shaped = knots({0: .25, 400: .30})
    ln = knots({0: 180, 400: 225})
    coef = knots({0: .02, 400: .028})
    ev = rise(.40, .62, 220)
    lv = dict(p=score, entropy=knots({0: .62, 400: .49}), len=ln, trunc=flat(.004), gn=flat(.4), lr=flat(1e-6),
              step_time=flat(74.0))
    esteps = list(range(0, 401, 25))

    def gen(rng):
        rows = walls(rollouts(rng, list(range(1, 401)), lv, 128, 4, 2.5, cap=1024), T0 + 7e5, 74)
        for _, s, v in rows:
            pen = max(score(s) - shaped(s), 0.0) * math.exp(.05 * rng.standard_normal())
            v["shaped"] = v["reward"] - pen
            v["kl_tok"] = pen / (coef(s) * v["len"])
            v["kl_coef"] = coef(s) * math.exp(.01 * rng.standard_normal())
            v["vf_loss"] = mult(rng, .09 - .04 * min(1, s / 300), .1)
            v["vf_ev"] = .1 + .45 * (1 - math.exp(-s / 120)) + .03 * rng.standard_normal()
            v["values"] = v["shaped"] + .02 * rng.standard_normal()
            v["adv"] = 1e-3 * rng.standard_normal()
            v["pg_loss"] = -.003 + .008 * rng.standard_normal()
            v["clipfrac"] = mult(rng, .004, .2)
            v["ppo_kl"] = 2e-4 * rng.standard_normal()
            v["cgn"] = heavy(rng, 3.2)
            v["t_gen"] = v["step_time"] * .52
        return {"train": rows, "eval": evals(rng, esteps, {"acc": (ev, 1319)}, time_of(rows))}
    return Story(gen, ev, esteps, eval_sd(.6, 1319), "val gsm8k")


def w_wandb_offline_verl(data, out: Path) -> None:
    try:
        import os

        import wandb
    except ImportError as e:  # optional: the W&B SDK writes the binary run file
        raise Skip("wandb is not installed (pip install wandb)") from e
    keys = {"reward": "critic/score/mean", "shaped": "critic/rewards/mean", "kl_tok": "actor/reward_kl_penalty",
            "kl_coef": "actor/reward_kl_penalty_coeff", "vf_loss": "critic/vf_loss", "vf_ev": "critic/vf_explained_var",
            "values": "critic/values/mean", "adv": "critic/advantages/mean", "entropy": "actor/entropy",
            "pg_loss": "actor/pg_loss", "clipfrac": "actor/pg_clipfrac", "ppo_kl": "actor/ppo_kl",
            "grad_norm": "actor/grad_norm", "lr": "actor/lr", "cgn": "critic/grad_norm", "len": "response_length/mean",
            "len_max": "response_length/max", "trunc": "response_length/clip_ratio", "step_time": "timing_s/step",
            "t_gen": "timing_s/gen"}
    os.environ.update(WANDB_MODE="offline", WANDB_SILENT="true", WANDB_DISABLE_CODE="true", WANDB_CONSOLE="off")
    ev = {s: v for _, s, v in data["eval"]}
    run = wandb.init(project="verl_ppo_gsm8k", name="qwen2.5-1.5b-ppo-klreward", id="q7k2m9xa", dir=str(out),
                     config={"algorithm": {"adv_estimator": "gae", "use_kl_in_reward": True,
                                           "kl_ctrl": {"type": "adaptive", "kl_coef": 0.02, "target_kl": 0.1}},
                             "trainer": {"total_training_steps": 1000, "test_freq": 25}},
                     settings=wandb.Settings(x_disable_stats=True, console="off", save_code=False))
    try:
        run.log({"val-core/openai/gsm8k/reward/mean@1": ev[0]["acc"]}, step=0)
        for _, s, v in data["train"]:
            row = keyed(v, keys, float)
            row.update({"training/global_step": s, "training/epoch": s // 58, "critic/lr": 1e-5})
            if s in ev:
                row["val-core/openai/gsm8k/reward/mean@1"] = ev[s]["acc"]
            run.log(row, step=s)
    finally:
        run.finish()


case("ok-kl-shaped-reward-flat-score-rising-verl-ppo-wandb-offline", s_kl_shaped_ok(), w_wandb_offline_verl, 1308,
     (400, 1000), HEALTHY, "verl wandb_offline ppo gae kl_in_reward live lookalike shaped_reward_flat",
     """verl PPO (GAE critic) with use_kl_in_reward and an adaptive KL controller, logged to an offline W&B run
     (binary .wandb file), step 400 of 1000. critic/rewards/mean, the KL-shaped reward, barely moves (~0.25 ->
     ~0.30), which reads as a run that stopped learning. But critic/score/mean, the task score, rises ~0.29 ->
     ~0.60, and the gap is the KL penalty the controller charges (coefficient 0.02 -> 0.028, per-token KL ~0.05).
     Validation on GSM8K every 25 steps (1319 problems, sd ~0.013) rises ~0.40 -> ~0.60 and is still rising; the
     critic improves (explained variance ~0.2 -> ~0.53). The policy is improving at a controlled KL: continue.""")


# ------------------------------------------------------- H9: slow learner, metrics logged at different intervals

def s_intervals_ok() -> Story:
    p = knots({0: .20, 1500: .29})
    ev = knots({0: .24, 1500: .32})
    lv = dict(p=p, kl=knots({0: .0003, 1500: .04}), entropy=knots({0: .9, 1500: .75}), len=knots({0: 520, 1500: 600}),
              gn=flat(.15), lr=lambda s: 1e-6 * min(1, (s + 1) / 50), step_time=flat(33.0))
    esteps = list(range(0, 1501, 100))

    def gen(rng):
        rows = walls(rollouts(rng, list(range(1, 1501)), lv, 32, 8, 1.5, cap=2048), T0 + 8e5, 33)
        return {"train": rows, "eval": evals(rng, esteps, {"acc": (ev, 500)}, time_of(rows))}
    return Story(gen, ev, esteps, eval_sd(.3, 500), "eval math500")


def w_mlflow_intervals(data, out: Path) -> None:
    series: dict[str, list] = {}

    def put(key, s, t, x):
        series.setdefault(key, []).append((s, t, float(f"{x:.6g}")))
    for t, s, v in data["train"]:
        put("train/reward_mean", s, t, v["reward"])
        put("train/reward_std", s, t, v["reward_std"])
        put("train/grad_norm", s, t, v["grad_norm"])
        put("train/loss", s, t, v["loss"])
        if s % 10 == 0:
            put("train/kl", s, t, v["kl"])
            put("train/entropy", s, t, v["entropy"])
            put("train/response_length", s, t, v["len"])
            put("train/lr", s, t, v["lr"])
        if s % 50 == 0:
            put("system/step_time_s", s, t, v["step_time"])
    for t, s, v in data["eval"]:
        put("eval/math500_acc", s, t, v["acc"])
    w_mlflow_files(out, "grpo-qwen3-1.7b", "slow-lr1e-6-g8", "3f1e9a7c2b4d4e0f9a8b7c6d5e4f3a21", series,
                   {"lr": "1e-06", "group_size": "8", "prompts_per_step": "32", "total_steps": "4000",
                    "kl_coef": "0.0", "eval_every": "100"}, start=data["train"][0][0] - 120)


case("ok-slow-learner-metrics-at-different-intervals-mlflow-files", s_intervals_ok(), w_mlflow_intervals, 1309,
     (1500, 4000), HEALTHY, "custom mlflow file_store grpo live slow_learner mixed_intervals lookalike",
     """Own GRPO loop logging to an MLflow file store at different intervals per metric: reward, reward std, grad
     norm and loss every step, KL / entropy / length / LR every 10, step time every 50, MATH-500 eval every 100.
     Step 1500 of 4000. The per-step reward (256 binary completions, sd ~0.05) moves only ~0.20 -> ~0.29 and over any
     300-step stretch looks flat; the eval (500 problems, sd ~0.02) rises ~0.24 -> ~0.32 across 16 points with no
     decline. KL is small (~0.04), entropy eases 0.9 -> 0.75. A slow but steady learner with most of the budget left:
     continue.""")


# =========================================================================================================== stops

# ----------------------------------------------------------------------- S1: 15 points, saturated by point 6

def s_short_saturated() -> Story:
    p = rise(.55, .965, 40)
    ev = rise(.60, .955, 45)
    steps = list(range(25, 376, 25))
    lv = dict(p=p, entropy=knots({0: .40, 150: .22, 375: .19}), len=knots({0: 160, 150: 95, 375: 92}),
              gn=knots({0: .5, 150: .12, 375: .10}), lr=lambda s: 2e-6 * (1 - s / 1000), step_time=flat(6.0),
              trunc=flat(.0))
    esteps = list(range(75, 376, 75))

    def gen(rng):
        rows = walls(rollouts(rng, steps, lv, 32, 8, 2.0, cap=512, avg=25), T0 + 9e5, 6.0, 25)
        return {"train": trl_fill(rows, tokens_per_step=256 * 120),
                "eval": evals(rng, esteps, {"acc": (ev, 200)}, time_of(rows))}
    return Story(gen, ev, esteps, eval_sd(.95, 200), "eval reward")


def w_trackio_short(data, out: Path) -> None:
    keys = {k: "train/" + v for k, v in trl_keys("extract_json_reward", drop=("kl",)).items()}
    ev = {s: (t, v) for t, s, v in data["eval"]}
    rows = []
    for t, s, v in data["train"]:
        r = keyed(v, keys, float)
        r["train/epoch"] = round(s / 500, 3)
        rows.append((t, s, r))
        if s in ev:
            te, e = ev[s]
            rows.append((te, s, {"eval/reward": e["acc"], "eval/rewards/extract_json_reward/mean": e["acc"],
                                 "eval/runtime": 22.8, "eval/epoch": round(s / 500, 3)}))
    w_trackio(out, "json-extract-grpo", "smollm2-1.7b-json", rows,
              {"learning_rate": 2e-6, "max_steps": 1000, "num_generations": 8, "logging_steps": 25, "eval_steps": 75},
              with_run_id=False)


case("stop-15pts-short-saturated-by-point-6-trackio", s_short_saturated(), w_trackio_short, 1311, (375, 1000),
     stop(150), "trl trackio grpo very_short saturated old_schema",
     """TRL GRPO to Trackio (older schema without run_id), a JSON-extraction task, 15 train logs (every 25 steps, step
     375 of 1000) and 5 evals. The reward is ~0.75 at the first log and ~0.95 by step 150; since then it holds at
     ~0.96 while frac_reward_zero_std climbs to ~0.85 (most groups all correct, no advantage), grad norm falls 0.5 ->
     ~0.1 and lengths settle at ~92 tokens. The eval (200 examples, sd ~0.015) reads ~0.93-0.95 at 150, 225, 300 and
     375. The task is saturated and the gradient signal is gone; the remaining 625 steps cannot buy anything: stop.
     Onset ~150, where it saturated.""")


# ------------------------------------------------- S2: finished on a plateau; the last evals 1.5 sd under the best

def s_finished_plateau() -> Story:
    ev = knots({0: .40, 200: .49, 400: .545, 550: .56, 1000: .562})
    p = knots({0: .42, 200: .52, 400: .575, 550: .59, 1000: .592})
    steps = list(range(10, 1001, 10))
    lv = dict(p=p, entropy=knots({0: .45, 550: .33, 1000: .31}), len=knots({0: 700, 550: 840, 1000: 850}),
              trunc=flat(.015), gn=flat(.2), lr=cosine_lr(1e-6, 1000, 30), step_time=flat(31.0))
    esteps = list(range(50, 1001, 50))

    def gen(rng):
        rows = walls(rollouts(rng, steps, lv, 32, 8, 2.0, cap=2048, avg=10), T0 + 1e6, 31, 10)
        return {"train": trl_fill(rows, tokens_per_step=256 * 250),
                "eval": evals(rng, esteps, {"acc": (ev, 500)}, time_of(rows)), "eval_every": 50}
    return Story(gen, ev, esteps, eval_sd(.56, 500), "eval acc_reward")


def w_hf_tb_finished(data, out: Path) -> None:
    keys = trl_keys("acc_reward", drop=("kl",))
    ekeys = {"acc": "eval_reward", "acc2": "eval_rewards/acc_reward/mean"}
    for _, _, v in data["eval"]:
        v["acc2"] = v["acc"]
    evs = [(t, s, {"train/" + k: x for k, x in {**keyed(v, keys), "epoch": round(s / 500, 4)}.items()})
           for t, s, v in data["train"]]
    evs += [(t, s, {"eval/reward": v["acc"], "eval/rewards/acc_reward/mean": v["acc"], "eval/runtime": 48.2,
                    "eval/epoch": round(s / 500, 4)}) for t, s, v in data["eval"]]
    t_end = data["train"][-1][0] + 5
    evs.append((t_end, 1000, {"train/train_runtime": t_end - data["train"][0][0], "train/train_loss": 0.0031,
                              "train/total_flos": 0.0, "train/train_samples_per_second": 2.07}))
    evs.sort(key=lambda e: e[0])
    tb_file(out / "runs" / "Nov21_09-14-52_gpu-node-3" / tb_name(evs[0][0], "gpu-node-3", 88123), evs)
    w_trainer_state(data, out, keys, ekeys, 1000, 10, 50, 2, 500.0, top_level=True, finished=True)


case("stop-finished-plateau-last-evals-1.5sd-below-best-hf-tb", s_finished_plateau(), w_hf_tb_finished, 1327,
     1000, stop(550), "trl hf_tensorboard trainer_state checkpoints grpo finished plateau lookalike noisy_peak",
     """TRL GRPO, finished at max_steps=1000 (cosine LR to 0), TensorBoard under runs/ plus checkpoint-950/1000 and a
     top-level trainer_state.json. The eval (500 problems every 50, sd ~0.022) climbs ~0.40 -> ~0.56 by step ~550 and
     then stays on that level to the end; train reward likewise flattens at ~0.59, entropy and lengths settle. The
     single best eval in the plateau sits ~1.5 sd above the last two, the size of gap the maximum of nine noisy
     draws produces on its own; the 50-step eval means after 550 do not decline. The final weights are as good as any
     earlier ones: stop (keep the final checkpoint). Onset ~550, where it plateaued.""")


# ------------------------------------------------------------- S3: sparse spikes from a few easy tasks, no learning

def s_sparse_never() -> Story:
    steps = list(range(1, 1201))

    def gen(rng):
        rows = []
        t = T0 + 1.1e6
        for s in steps:
            b = bin_batch(rng, .004, 32, 4, .05)
            moved = b["zero_std"] < 1.0
            st = mult(rng, 188.0, .06)
            t += st
            rows.append((t, s, {"reward": b["reward"], "reward_std": b["reward_std"], "zero_std": b["zero_std"],
                                "kl": mult(rng, 1e-4 + 3.2e-6 * s, .1), "entropy": mult(rng, 1.12, .015),
                                "turns": min(15.0, mult(rng, 14.6, .01)), "tokens": mult(rng, 3100.0, .03),
                                "grad_norm": heavy(rng, .08) if moved else 0.0, "lr": 1e-6, "step_time": st}))
        return {"train": rows}
    return Story(gen, flat(.004), steps, bin_sd(.004, 32, 4, .05, 50))


def w_custom_csv_agent(data, out: Path) -> None:
    cols = ["step", "epoch", "success_rate", "reward_mean", "reward_std", "frac_zero_adv", "kl", "entropy",
            "mean_turns", "mean_tokens", "grad_norm", "lr", "step_time_s"]
    with (out / "metrics.csv").open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(cols)
        for _, s, v in data["train"]:
            w.writerow([s, f"{s / 20:.2f}", f"{v['reward']:.4f}", f"{v['reward']:.4f}", f"{v['reward_std']:.4f}",
                        f"{v['zero_std']:.4f}", f"{v['kl']:.6f}", f"{v['entropy']:.4f}", f"{v['turns']:.2f}",
                        f"{v['tokens']:.1f}", f"{v['grad_norm']:.5f}", "1e-06", f"{v['step_time']:.1f}"])
    (out / "run_config.yaml").write_text(
        "env: webshop-nav\nmodel: Qwen2.5-7B-Instruct\nalgo: grpo\ntasks_per_step: 32\ngroup_size: 4\nmax_turns: 15\n"
        "train_tasks: 640\ntotal_steps: 3000\nlr: 1.0e-6\nreward: task_success\n")


case("stop-sparse-spikes-few-easy-tasks-never-learns-custom-csv", s_sparse_never(), w_custom_csv_agent, 1313,
     (1200, 3000), stop(200), "custom csv agentic multi_turn sparse_reward never_learns",
     """Own agentic GRPO loop (web navigation, 32 tasks x 4 episodes per step, 15-turn cap), metrics.csv, step 1200
     of 3000 (60 passes over the 640 training tasks). Success is exactly 0 on ~87% of steps; the rest show a spike, mostly
     0.031 (one of a handful of easy tasks drawn and solved in all 4 episodes), sometimes 0.06. Neither the spike
     rate nor their height trends: the 100-step means stay at ~0.004-0.005 from the first hundred steps to the last.
     frac_zero_adv is 1.0 on the zero steps (grad norm exactly 0 there), episodes run to the turn cap (~14.6 of 15),
     entropy is flat ~1.12 and KL stays ~0.004. The policy gets no learning signal from this task set: stop (fix the curriculum or the reward
     before spending more). Onset ~200, ten passes over the data with nothing learned.""")


# ----------------------------------------------- S4: small train set memorised, batch-scaled std, eval flat

def s_memorised_flat() -> Story:
    p = knots({0: .55, 100: .70, 200: .80, 300: .87, 400: .92, 450: .935})
    ev = knots({0: .46, 150: .51, 250: .53, 450: .531})
    steps = list(range(10, 451, 10))
    lv = dict(p=p, entropy=knots({0: .50, 450: .21}), len=knots({0: 420, 450: 350}), gn=knots({0: .3, 450: .18}),
              lr=lambda s: 1e-6 * (1 - s / 600), step_time=flat(21.0), trunc=flat(.004))
    esteps = list(range(50, 451, 50))

    def gen(rng):
        rows = walls(rollouts(rng, steps, lv, 32, 8, 1.5, cap=1024, avg=10), T0 + 1.2e6, 21, 10)
        for _, _, v in rows:
            v["zero_std"] = v["all_same"]  # scale_rewards="batch": the std is batch-global, so 0 or 1 per batch
        return {"train": trl_fill(rows, tokens_per_step=256 * 160),
                "eval": evals(rng, esteps, {"acc": (ev, 500)}, time_of(rows)), "eval_every": 50}
    return Story(gen, ev, esteps, eval_sd(.53, 500), "eval accuracy")


def w_trl023_state(data, out: Path) -> None:
    for _, _, v in data["eval"]:
        v["len"] = 360.0
    w_trainer_state(data, out, trl_keys("accuracy"), {"acc": "eval_reward", "len": "eval_completions/mean_length"},
                    600, 10, 50, 2, 100.0)


case("stop-small-trainset-epoch4-batch-scaled-zero-std-eval-flat-trl023-state", s_memorised_flat(), w_trl023_state,
     1314, (450, 600), stop(250), "trl grpo trainer_state checkpoints multi_epoch memorisation eval_plateau",
     """TRL 0.23 GRPO with scale_rewards="batch" on a 3,200-prompt train set (100 steps per epoch), step 450 of 600
     (4.5 of 6 epochs), checkpoint-400/450 on disk. Train reward climbs epoch after epoch (~0.55 -> ~0.93): the same
     prompts come back and get memorised. The held-out eval (500 problems every 50, sd ~0.022) rose ~0.46 -> ~0.53
     by step ~250 and has been flat since (five evals within noise, no decline). frac_reward_zero_std reads ~0 all run
     because with batch scaling it only counts batches whose 256 rewards are all equal; it hides that most groups are
     already all-correct (reward_std falls with the mean). Nothing left to gain on held-out data and nothing lost
     yet: stop. Onset ~250.""")


# ---------------------------------------------------------- S5: finished, old RLOO keys, RLHF reward best at end

def s_rloo_old_finished() -> Story:
    rlhf = rise(-.5, 1.45, 200)
    kl = lambda s: 14.0 * (1 - math.exp(-s / 300))  # noqa: E731
    steps = list(range(1, 938))

    def gen(rng):
        rows = []
        t = T0 + 1.3e6
        for s in steps:
            k = mult(rng, kl(s) + .05, .05)
            score = rlhf(s) + .05 * kl(s) + 1.6 / math.sqrt(128) * rng.standard_normal()
            st = mult(rng, 12.5, .04)
            t += st
            rows.append((t, s, {"scores": score, "kl": k, "nsr": -.05 * k, "rlhf": score - .05 * k,
                                "entropy": mult(rng, 52.0 - 10 * s / 937, .03), "approxkl": mult(rng, .021, .2),
                                "clipfrac": mult(rng, .11, .15), "ploss": -.02 + .02 * rng.standard_normal(),
                                "pent": mult(rng, 1.9 - .3 * s / 937, .02), "ratio": 1 + .004 * rng.standard_normal(),
                                "ratio_var": mult(rng, 2e-4, .3), "eos": float(rng.binomial(128, .95)),
                                "vclip": 0.0, "lr": 3e-6 * (1 - s / 937), "episode": s * 128, "eps": 128 / st}))
        return {"train": rows}
    return Story(gen, rlhf, steps, 1.6 / math.sqrt(128 * 50))


def w_rloo_old_state(data, out: Path) -> None:
    keys = {"eps": "eps", "kl": "objective/kl", "entropy": "objective/entropy", "nsr": "objective/non_score_reward",
            "rlhf": "objective/rlhf_reward", "scores": "objective/scores", "approxkl": "policy/approxkl_avg",
            "clipfrac": "policy/clipfrac_avg", "ploss": "loss/policy_avg", "pent": "policy/entropy_avg",
            "ratio": "val/ratio", "ratio_var": "val/ratio_var", "eos": "val/num_eos_tokens",
            "vclip": "val/clipfrac_avg", "lr": "lr", "episode": "episode"}
    w_trainer_state(data, out, keys, None, 937, 1, 10_000, None, 937.0, top_level=True, finished=True,
                    loss_round=False)
    (out / "config.json").write_text(json.dumps({"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2"}))


case("stop-finished-rloo-old-keys-rlhf-reward-best-at-end-trl021-state", s_rloo_old_finished(), w_rloo_old_state,
     1315, 937, stop(650), "trl rloo old_keys trainer_state reward_model finished best_at_end",
     """TRL RLOOTrainer before 0.22 (PPO-style keys: objective/scores, objective/rlhf_reward, objective/kl, val/*),
     a TL;DR reward model, finished after 937 updates (top-level trainer_state.json, final model saved). The
     KL-penalised objective/rlhf_reward rose ~0 -> ~1.4 by update ~600 and has stayed there (50-update means within
     ~0.03 of each other); objective/scores keeps creeping up only as fast as the KL penalty (KL ~12.5 -> ~14 nats over
     the last 350 updates), so the real objective is flat, not falling. val/ratio ~1, clip fraction ~0.1, EOS rate ~95%.
     The run ended at its best level: stop and keep the final weights. Onset ~650, where the objective flattened.""")


# -------------------------------------------------- S6: cosine tail, plateau, verl file logger still being written

def s_cosine_tail() -> Story:
    ev = knots({0: .42, 200: .56, 400: .627, 420: .63, 550: .634})
    p = knots({0: .45, 200: .62, 420: .705, 550: .712})
    lv = dict(p=p, entropy=knots({0: .45, 420: .27, 550: .26}), len=knots({0: 1100, 420: 1600, 550: 1620}),
              trunc=knots({0: .01, 550: .03}), gn=flat(.17), lr=cosine_lr(1e-6, 600, 20, .1), step_time=flat(240.0),
              kl=knots({0: 0, 550: .02}))
    esteps = list(range(0, 551, 20))

    def gen(rng):
        rows = verl_fill(rng, walls(rollouts(rng, list(range(1, 551)), lv, 512, 8, 2.0, cap=4096), T0 + 1.4e6, 240))
        return {"train": rows, "eval": evals(rng, esteps, {"acc": (ev, 900)}, time_of(rows))}
    return Story(gen, ev, esteps, eval_sd(.63, 900), "val math500")


VERL_NEW = {"reward": "critic/score/mean", "max": "critic/score/max", "min": "critic/score/min",
            "shaped": "critic/rewards/mean", "adv": "critic/advantages/mean", "adv_max": "critic/advantages/max",
            "adv_min": "critic/advantages/min", "ret": "critic/returns/mean", "len": "response_length/mean",
            "len_max": "response_length/max", "len_min": "response_length/min", "trunc": "response_length/clip_ratio",
            "plen": "prompt_length/mean", "entropy": "actor/entropy", "pg_loss": "actor/pg_loss",
            "clipfrac": "actor/pg_clipfrac", "ppo_kl": "actor/ppo_kl", "kl": "actor/kl_loss", "kl_coef": "actor/kl_coef",
            "grad_norm": "actor/grad_norm", "lr": "actor/lr", "t_gen": "timing_s/gen", "t_old": "timing_s/old_log_prob",
            "t_ref": "timing_s/ref", "t_adv": "timing_s/adv", "t_upd": "timing_s/update_actor", "step_time": "timing_s/step"}


def w_verl_jsonl_live(data, out: Path) -> None:
    vkey = "val-core/math500/acc/mean@4"
    ev = {s: v for _, s, v in data["eval"]}
    lines = [json.dumps({"step": 0, "data": {vkey: ev[0]["acc"], "val-aux/math500/acc/std@4": .31}}, separators=(",", ":"))]
    for _, s, v in data["train"]:
        d = keyed(v, VERL_NEW, float)
        d["training/global_step"], d["training/epoch"] = s, s // 120
        if s == 377:
            d["actor/grad_norm"] = None  # a NaN grad norm: orjson writes null
        if s in ev:
            d[vkey] = ev[s]["acc"]
            d["val-aux/math500/acc/std@4"] = .3
            d["timing_s/testing"] = 95.0
        lines.append(json.dumps({"step": s, "data": d}, separators=(",", ":")))
    text = "\n".join(lines) + "\n"
    f = out / "dapo-math" / "qwen3-8b-grpo-cosine.jsonl"
    f.parent.mkdir(parents=True)
    f.write_text(text[: len(text) - 140])  # the last line is still being written
    ck = out / "checkpoints" / "dapo-math" / "qwen3-8b-grpo-cosine"
    for n in range(100, 501, 100):
        (ck / f"global_step_{n}" / "actor").mkdir(parents=True)
        (ck / f"global_step_{n}" / "actor" / "huggingface").mkdir()
        (ck / f"global_step_{n}" / "actor" / "huggingface" / "config.json").write_text('{"model_type": "qwen3"}')
    (ck / "latest_checkpointed_iteration.txt").write_text("500")


case("conv-cosine-tail-plateau-92pct-verl-jsonl-still-writing", s_cosine_tail(), w_verl_jsonl_live, 1316, (550, 600),
     dict(converged(), onset_step=420), "verl jsonl file_logger grpo cosine_lr converged near_end truncated_tail checkpoints",
     """verl GRPO through the file logger (one {"step", "data"} JSON object per line, the last line half-written, one
     NaN grad norm written as null), step 550 of 600 with a cosine schedule now at ~12% of peak LR; checkpoints every
     100 under checkpoints/. Validation mean@4 on MATH-500 every 20 steps (sd ~0.016) rose ~0.42 -> ~0.63 by step ~420
     and has held ~0.63 since (the last seven evals within noise); train score flat at ~0.71, entropy ~0.26, lengths
     ~1600. Converged a few dozen steps before the planned end with no decline: stopping now or letting it finish are
     both fine; stop saves the compute.""")


# ----------------------------------------------------------------- S7: OpenRLHF DPO finished at its best level

def s_dpo_finished() -> Story:
    ev = knots({0: .5, 200: .64, 400: .685, 600: .70, 1000: .71, 1800: .713})
    eloss = knots({0: .693, 400: .60, 1000: .565, 1800: .562})
    tacc = lambda s: (.5 + .22 * (1 - math.exp(-s / 250))) if s <= 900 else .78 + .02 * (s - 900) / 900  # noqa: E731
    steps = list(range(1, 1801))
    esteps = list(range(200, 1801, 200))

    def gen(rng):
        rows = []
        t = T0 + 1.5e6
        hist: list[tuple[float, float]] = []
        for s in steps:
            acc = float(rng.binomial(128, tacc(s)) / 128)
            loss = max(.05, .693 - .95 * (tacc(s) - .5) + .05 * rng.standard_normal())
            hist = [*hist, (loss, acc)][-50:]
            t += mult(rng, 2.4, .05)
            rows.append((t, s, {"loss": loss, "acc": acc, "chosen": -1.1 * s / 1800 + .08 * rng.standard_normal(),
                                "rejected": -2.4 * s / 1800 - .3 * (tacc(s) - .5) + .1 * rng.standard_normal(),
                                "lr": cosine_lr(5e-7, 1800, 90)(s), "grad_norm": heavy(rng, 9.0),
                                "loss_mean": float(np.mean([x for x, _ in hist])),
                                "acc_mean": float(np.mean([a for _, a in hist]))}))
        tf = time_of(rows)
        evr = [(tf(s) + 60, s, {"acc": binom(rng, ev(s), 2000), "loss": eloss(s) + .004 * rng.standard_normal()})
               for s in esteps]
        return {"train": rows, "eval": evr}
    return Story(gen, ev, esteps, eval_sd(.71, 2000), "eval acc_mean")


def w_orlhf_dpo_tb(data, out: Path) -> None:
    keys = {"loss": "train/loss", "acc": "train/acc", "chosen": "train/chosen_reward", "rejected": "train/reject_reward",
            "lr": "train/lr", "grad_norm": "train/grad_norm", "loss_mean": "train/loss_mean", "acc_mean": "train/acc_mean"}
    evs = tb_events(data["train"], keys)
    evs += [(t, s, {"eval/eval_loss": v["loss"], "eval/acc_mean": v["acc"]}) for t, s, v in data["eval"]]
    evs.sort(key=lambda e: e[0])
    tb_file(out / "logs" / "llama3-8b-dpo-ultrafeedback" / tb_name(evs[0][0], "node-12", 61002), evs)


case("stop-finished-dpo-eval-acc-plateau-at-best-openrlhf-tb", s_dpo_finished(), w_orlhf_dpo_tb, 1322, 1800,
     stop(1000), "openrlhf dpo tensorboard finished multi_epoch best_at_end",
     """OpenRLHF DPO, 2 epochs, finished at step 1800, TensorBoard only. The held-out preference accuracy (2000 pairs
     every 200 steps, sd ~0.01) rose 0.50 -> ~0.70 by step ~600 and then to ~0.71 where it stayed to the end;
     eval_loss fell 0.693 -> ~0.565 and holds. In epoch 2 the train accuracy jumps (~0.72 -> ~0.80, seen pairs) and
     both implicit rewards drift down (chosen ~-1.1, rejected ~-2.4), but the held-out numbers do not turn. The last
     eval is as good as any: stop and keep the final weights. Onset ~1000, where the eval flattened.""")


# ======================================================================================================= rollbacks

NEMO_KEYS = {"reward": "train/reward", "loss": "train/loss", "grad_norm": "train/grad_norm", "lr": "train/lr",
             "kl": "train/kl_penalty", "entropy": "train/approx_entropy", "len": "train/mean_gen_tokens_per_sample",
             "len_max": "train/max_gen_tokens_per_sample", "trunc": "train/truncation_rate",
             "natural": "train/natural_termination_rate", "pct_0": "train/baseline_reward/pct_0",
             "pct_1": "train/baseline_reward/pct_1", "pct_mixed": "train/baseline_reward/pct_mixed",
             "tmpe": "train/token_mult_prob_error", "ratio": "train/probs_ratio", "step_time": "timing/train/total_step_time",
             "t_gen": "timing/train/generation", "t_train": "timing/train/policy_training"}


def nemo_fill(rng, rows: list[Row]) -> list[Row]:
    out = []
    for t, s, v in rows:
        v = dict(v)
        v["natural"] = 1 - v.get("trunc", 0)
        v["pct_mixed"] = 100 - v["pct_0"] - v["pct_1"]
        v["tmpe"] = 1 + mult(rng, .006, .15)
        v["ratio"] = 1 + .002 * rng.standard_normal()
        v["t_gen"], v["t_train"] = v["step_time"] * .64, v["step_time"] * .27
        out.append((t, s, v))
    return out


def nemo_tb(rows: list[Row], ev: list[Row], path: Path, host: str, pid: int) -> None:
    evs = tb_events(rows, NEMO_KEYS)
    evs += [(t, s, {"validation/accuracy": v["acc"], "validation/avg_length": v.get("vlen", 1200.0),
                    "timing/validation/total_validation_time": 212.0}) for t, s, v in ev]
    evs.sort(key=lambda e: e[0])
    tb_file(path / tb_name(evs[0][0], host, pid), evs)


# --------------------------------------------------------- R1: peak long ago, plateau 5 sd below ever since

def s_peak_long_ago() -> Story:
    p = knots({0: .35, 400: .62, 470: .62, 600: .55, 2000: .555})
    ev = knots({0: .42, 150: .56, 300: .62, 400: .64, 470: .64, 540: .60, 600: .565, 2000: .565})
    lv = dict(p=p, entropy=knots({0: .55, 470: .47, 540: .15, 2000: .13}), len=knots({0: 900, 470: 1350, 540: 800, 2000: 780}),
              trunc=knots({0: .02, 470: .06, 540: .01, 2000: .01}), kl=knots({0: 0, 470: .01, 600: .03, 2000: .05}),
              gn=flat(.12), lr=flat(3e-7), step_time=knots({0: 150, 470: 190, 540: 130, 2000: 128}))
    esteps = list(range(0, 2001, 50))

    def gen(rng):
        rows = nemo_fill(rng, walls(rollouts(rng, list(range(1, 2001)), lv, 64, 16, 2.0, cap=4096, beta=.01), T0 + 1.6e6, 150))
        return {"train": rows, "eval": evals(rng, esteps, {"acc": (ev, 1000)}, time_of(rows))}
    return Story(gen, ev, esteps, eval_sd(.64, 1000), "validation/accuracy")


def w_nemo_single(data, out: Path) -> None:
    nemo_tb(data["train"], data["eval"], out / "logs" / "exp_001" / "tensorboard", "h100-17", 51877)


R1 = s_peak_long_ago()
case("bad-peak-long-ago-plateau-5sd-below-since-nemo-tb", R1, w_nemo_single, 1321, (2000, 3000), RB(R1, 480),
     "nemo_rl tensorboard grpo entropy_collapse long_plateau_after_peak lookalike",
     """NeMo-RL GRPO, step 2000 of 3000, validation every 50 steps on 1000 held-out problems (sd ~0.015). Validation
     peaked at ~0.64 around steps 350-470; then approx_entropy collapsed 0.47 -> ~0.15 within ~70 steps (lengths
     1350 -> ~800) and validation dropped to ~0.565 by 600. For the 1400 steps since, every
     curve is flat: validation ~0.565, train reward ~0.55, entropy ~0.13. Read from the recent window alone this is
     a converged run (stop), but the model at ~450 was 0.075 (~5 sd) better and nothing since has come back. Roll
     back to the newest checkpoint at or before ~450.""")


# --------------------------------------------- R2: train peak long ago, LR bump at resume, plateau below (panels)

def s_panel_plateau() -> tuple[Story, list[int]]:
    p = knots({0: .35, 300: .60, 700: .72, 850: .74, 1040: .74, 1120: .635, 3000: .64})
    lr = lambda s: 1e-6 if s <= 1040 else 3e-6  # noqa: E731
    lv = dict(p=p, entropy=knots({0: .50, 1040: .34, 1120: .20, 3000: .19}), len=knots({0: 500, 1040: 720, 1120: 560, 3000: 540}),
              kl=knots({0: 0, 1040: .02, 1100: .09, 3000: .12}), gn=knots({0: .2, 1040: .2, 1060: .9, 1200: .45, 3000: .4}),
              lr=lr, step_time=flat(70.0), trunc=flat(.01))
    steps = list(range(1, 3001))
    exported = steps[::6]

    def gen(rng):
        return {"train": walls(rollouts(rng, steps, lv, 128, 8, 2.0, cap=2048), T0 + 1.7e6, 70)}
    return Story(gen, p, exported, bin_sd(.74, 128, 8, 2.0, 50)), exported


def w_wandb_panels(data, out: Path) -> None:
    run = "qwen2.5-7b-dapo-r2"
    pts = {k: [(s, v[name]) for _, s, v in data["train"]] for k, name in (
        ("critic/score/mean", "reward"), ("actor/entropy", "entropy"), ("actor/kl_loss", "kl"),
        ("response_length/mean", "len"), ("actor/lr", "lr"), ("actor/grad_norm", "grad_norm"))}
    for i, (key, series) in enumerate(pts.items()):
        w_wandb_panel(out / f"wandb_export_2026-11-24T10_3{i}_12.{417 + 31 * i}+01_00.csv", run, key, series, 500)


R2, _ = s_panel_plateau()
case("bad-train-peak-long-ago-lr-bump-plateau-below-wandb-panels", R2, w_wandb_panels, 1322, (3000, 5000),
     RB(R2, 1040), "verl wandb_panel_csv grpo train_only lr_change resume long_plateau_after_peak",
     """verl GRPO exported from W&B line panels (one CSV per panel, downsampled to every 6th step with bucket
     __MIN/__MAX), no held-out eval, step 3000 of 5000. critic/score/mean rose to ~0.74 by ~820-1040 (128 prompts x 8,
     a 50-step mean has sd ~0.004). At 1041 the job was resumed and actor/lr jumped 1e-6 -> 3e-6; within ~80 steps
     entropy fell 0.34 -> 0.20, KL loss 0.02 -> 0.09, grad norm spiked, and the score dropped to ~0.635. It has sat
     there for ~1900 steps. The recent stretch is a flat plateau, but the model before the LR change was ~0.10
     better (~25-30 sd of a 50-step mean). Roll back to the newest checkpoint at or before step 1040 and fix the
     LR.""")


# -------------------------------------- R3: finished, eval 4 sd below its peak, MLflow SQL store via the HF callback

def s_decline_4sd() -> Story:
    ev = knots({0: .38, 300: .51, 550: .565, 600: .57, 700: .57, 800: .555, 1200: .50})
    p = knots({0: .40, 600: .60, 1200: .63})
    lv = dict(p=p, kl=knots({0: 0, 600: .06, 1200: .21}), trunc=knots({0: .02, 700: .03, 1200: .15}),
              len=knots({0: 600, 700: 820, 1200: 1150}), entropy=knots({0: .5, 1200: .33}), gn=flat(.25),
              lr=lambda s: 1e-6 * (1 - s / 1200), step_time=flat(36.0))
    esteps = list(range(100, 1201, 100))

    def gen(rng):
        rows = walls(rollouts(rng, list(range(10, 1201, 10)), lv, 32, 8, 2.0, cap=1536, avg=10, beta=.04), T0 + 1.8e6, 36, 10)
        return {"train": trl_fill(rows, tokens_per_step=256 * 300),
                "eval": evals(rng, esteps, {"acc": (ev, 800)}, time_of(rows))}
    return Story(gen, ev, esteps, eval_sd(.57, 800), "eval correctness")


def w_mlflow_db_hf(data, out: Path) -> None:
    try:
        from mlflow.entities import Metric, Param
        from mlflow.tracking import MlflowClient
    except ImportError as e:
        raise Skip("mlflow is not installed (pip install mlflow)") from e
    import logging
    logging.getLogger("mlflow").setLevel(logging.ERROR)
    logging.getLogger("alembic").setLevel(logging.ERROR)
    client = MlflowClient(tracking_uri=f"sqlite:///{out / 'mlflow.db'}")
    exp = client.create_experiment("grpo-math-qwen2.5-3b", artifact_location="file:///home/rl/math/mlruns/1")
    run = client.create_run(exp, start_time=int(data["train"][0][0] * 1000) - 60_000, run_name="grpo-beta0.04-len1536")
    rid = run.info.run_id
    keys = trl_keys("correctness_reward", drop=("step_time",))
    metrics = []
    for t, s, v in data["train"]:
        for k, x in {**keyed(v, keys, float), "epoch": round(s / 400, 4)}.items():
            metrics.append(Metric(k, x, int(t * 1000), s))
    for t, s, v in data["eval"]:
        for k, x in {"eval_reward": v["acc"], "eval_rewards/correctness_reward/mean": v["acc"],
                     "eval_runtime": 95.2, "eval_samples_per_second": 8.4, "epoch": round(s / 400, 4)}.items():
            metrics.append(Metric(k, x, int(t * 1000), s))
    t_end = data["train"][-1][0]
    metrics += [Metric(k, x, int(t_end * 1000), 1200) for k, x in
                {"train_runtime": t_end - data["train"][0][0], "train_loss": .0052, "total_flos": 0.0}.items()]
    params = [Param(k, str(x)) for k, x in {"learning_rate": 1e-6, "beta": 0.04, "num_generations": 8,
                                              "max_completion_length": 1536, "max_steps": 1200, "logging_steps": 10,
                                              "eval_steps": 100, "save_steps": 100, "save_total_limit": 2}.items()]
    for i in range(0, len(metrics), 900):
        client.log_batch(rid, metrics=metrics[i:i + 900], params=params if i == 0 else [])
    client.set_terminated(rid, "FINISHED", end_time=int(t_end * 1000) + 4000)


R3 = s_decline_4sd()
case("bad-finished-eval-declined-4sd-from-peak-mlflow-db-hf-keys", R3, w_mlflow_db_hf, 1323, 1200, RB(R3, 700),
     "trl grpo mlflow sql_store finished peak_decline kl_drift truncation",
     """TRL GRPO (beta 0.04) logged by the HF MLflow callback into sqlite mlflow.db (raw keys: reward, kl,
     eval_reward, ...), finished at step 1200. The eval on 800 problems every 100 steps (sd ~0.0175) rose ~0.38 ->
     ~0.57 at 600-700, then fell steadily to ~0.50 by 1200, ~4 sd under the peak, over five evals. Train reward kept
     creeping up (~0.60 -> ~0.63) while KL tripled (0.06 -> 0.21), lengths grew 820 -> ~1150 and truncation rose 3% ->
     15%. The final weights are clearly worse on held-out data: roll back to ~700 (the newest eval still at the
     peak), i.e. the newest checkpoint saved at or before it.""")


# ---------------------------------------------- R4: slow KL creep, damage only on a rare eval (every 250), resumed

def s_kl_creep_rare_eval() -> Story:
    ev = knots({0: .40, 250: .44, 500: .485, 750: .505, 1000: .50, 1250: .47, 1500: .43})
    lv = dict(p=knots({0: .40, 500: .55, 1000: .63, 1500: .68}), kl=knots({0: 0, 500: .012, 1000: .045, 1500: .11}),
              entropy=knots({0: .6, 1500: .42}), len=knots({0: 700, 1500: 900}), trunc=flat(.02), gn=flat(.15),
              lr=flat(5e-7), step_time=flat(118.0))
    esteps = list(range(0, 1501, 250))

    def gen(rng):
        a = nemo_fill(rng, walls(rollouts(rng, list(range(1, 831)), lv, 32, 16, 2.0, cap=4096), T0 + 1.9e6, 118))
        ea = evals(rng, [0, 250, 500, 750], {"acc": (ev, 1000)}, time_of(a))
        b = nemo_fill(rng, walls(rollouts(rng, list(range(751, 1501)), lv, 32, 16, 2.0, cap=4096), a[-1][0] + 7200, 118))
        eb = evals(rng, [750, 1000, 1250, 1500], {"acc": (ev, 1000)}, lambda s: b[0][0] - 300 if s == 750 else time_of(b)(s))
        return {"segs": [(a, ea), (b, eb)]}
    return Story(gen, ev, esteps, eval_sd(.505, 1000), "validation/accuracy")


def w_nemo_two_exps(data, out: Path) -> None:
    for i, (tr, ev) in enumerate(data["segs"]):
        nemo_tb(tr, ev, out / "logs" / f"exp_00{i}" / "tensorboard", "h100-03", 40211 + 1000 * i)


R4 = s_kl_creep_rare_eval()
case("bad-kl-creep-eval-every-250-declines-resumed-nemo-tb", R4, w_nemo_two_exps, 1324, (1500, 2500), RB(R4, 1000),
     "nemo_rl tensorboard grpo kl_drift sparse_eval resume overlap exp_dirs reward_rises_eval_falls",
     """NeMo-RL GRPO, step 1500 of 2500, in two exp dirs (exp_000 crashed at 830, exp_001 resumed from the step-750
     checkpoint and logs 751-830 again, with a second validation at 750). Validation runs only every 250 steps (1000
     problems, sd ~0.016): ~0.43, 0.45, 0.49, 0.51 at 750, 0.49 at 1000, then 0.47 at 1250 and 0.45 at 1500. Train
     reward rises the whole time (~0.40 -> ~0.68) while train/kl_penalty creeps and accelerates (0.012 at 500, 0.045 at
     1000, 0.11 at 1500): the policy is drifting into what the train reward pays for. The held-out loss is ~0.06-0.075
     (4-5 sd) over two points and accelerating with the KL. Roll back to ~1000, the newest validation still at the peak (750 is as good).""")


# ------------------------------------------------------- R5: a length penalty gamed: total up, accuracy down

def s_length_gamed() -> Story:
    acc = knots({0: .42, 200: .53, 300: .56, 330: .56, 450: .52, 800: .44})
    ln = knots({0: 780, 300: 860, 330: 850, 450: 560, 800: 230})
    steps = list(range(5, 801, 5))

    def gen(rng):
        rows = []
        for s in steps:
            a = bin_batch(rng, acc(s), 32, 8, 2.0, 5)
            length = mult(rng, ln(s), .02)
            pen = -.0005 * length
            v = {"acc": a["reward"], "pen": pen, "reward": a["reward"] + pen,
                 "reward_std": math.hypot(a["reward_std"], .0005 * length * .35), "len": length,
                 "kl": mult(rng, .0005 + .02 * min(s, 330) / 330 + .09 * max(0, s - 330) / 470, .05),
                 "grad_norm": heavy(rng, .3), "lr": 1e-6 * min(1, s / 50) * (1 - s / 1500), "loss": 0.0}
            v["loss"] = .04 * v["kl"] + .003 * rng.standard_normal()
            rows.append((s, v))
        return {"train": walls(rows, T0 + 2e6, 27.0, 5)}
    return Story(gen, acc, steps, bin_sd(.56, 32, 8, 2.0, 50), "rewards/accuracy_reward")


def w_trl015_state(data, out: Path) -> None:
    keys = {"loss": "loss", "grad_norm": "grad_norm", "lr": "learning_rate", "len": "completion_length",
            "acc": "rewards/accuracy_reward", "pen": "rewards/length_penalty", "reward": "reward",
            "reward_std": "reward_std", "kl": "kl"}
    w_trainer_state(data, out, keys, None, 1500, 5, 100, 2, 375.0, old=True)


R5 = s_length_gamed()
case("bad-length-penalty-gamed-total-up-accuracy-down-trl015-state", R5, w_trl015_state, 1325, (800, 1500),
     RB(R5, 330), "trl grpo old_keys trainer_state checkpoints reward_hacking length_penalty length_collapse",
     """TRL 0.15 GRPO (keys completion_length, rewards/<fn> without /mean, kl always logged), two reward functions:
     accuracy (0/1) and a length penalty of -0.0005 per token. Step 800 of 1500, checkpoint-700/800 on disk. The
     logged total reward rises the whole run (~0.05 -> ~0.31), but only because the penalty shrinks: completion
     length falls ~850 -> ~250 tokens from step ~330. rewards/accuracy_reward peaked at ~0.56 around 275-330 (256
     completions per step; a 50-step mean has sd ~0.008) and has fallen to ~0.44. KL grows fast after 330. The
     model is buying reward by cutting its reasoning. Roll back to ~330 (the checkpoints on disk are both after the
     damage; restore the newest one saved at or before it) and rebalance the penalty.""")


# -------------------------------------------- R6: an async evaluator (separate file, lagging) shows the decline

def s_async_eval_decline() -> Story:
    ev = knots({0: .44, 400: .55, 800: .60, 1000: .60, 1200: .555, 1400: .51})
    lv = dict(p=knots({0: .45, 800: .62, 1650: .72}), entropy=knots({0: .5, 800: .3, 1650: .12}),
              len=knots({0: 520, 800: 560, 1650: 610}), trunc=flat(.01), gn=flat(.3),
              lr=lambda s: 1e-6 * (1 - s / 3000), step_time=flat(29.0))
    esteps = list(range(200, 1401, 200))

    def gen(rng):
        rows = walls(rollouts(rng, list(range(10, 1651, 10)), lv, 16, 8, 2.0, cap=2048, avg=10), T0 + 2.1e6, 29, 10)
        tf = time_of(rows)
        ev_rows = evals(rng, esteps, {"acc": (ev, 500)}, lambda s: tf(min(s + 250, 1650)) + 600)
        return {"train": trl_fill(rows, tokens_per_step=128 * 200), "eval": ev_rows}
    return Story(gen, ev, esteps, eval_sd(.6, 500), "async eval math500")


def trl_console(rows: list[Row], keys: dict, total: int, every: int, evals_at: dict | None = None,
                ekeys: dict | None = None, steps_per_epoch: float = 1000.0) -> str:
    """What `python train.py` prints: tqdm redraws with \\r, a dict line per log (no step key), eval dicts."""
    parts = []
    prev = 0
    t0 = rows[0][0]
    for t, s, v in rows:
        rate = (t - t0) / max(s, 1)
        for n in range(prev + 1, s + 1):
            parts.append("\r" + tqdm_bar(n, total, t0 + rate * n - t0, rate))
        prev = s
        row = keyed(v, keys, float)
        if "loss" in row:
            row["loss"] = round(row["loss"], 4)
        row["epoch"] = round(s / steps_per_epoch, 2)
        parts.append("\n" + py_repr(row) + "\n")
        if evals_at and s in evals_at:
            erow = {ekeys[k]: x for k, x in evals_at[s].items() if k in ekeys}
            erow.update(eval_runtime=83.1, eval_samples_per_second=6.0, eval_steps_per_second=.19,
                        epoch=round(s / steps_per_epoch, 2))
            parts.append(py_repr(erow) + "\n")
    return "".join(parts)


def w_trl_console_async(data, out: Path) -> None:
    keys = trl_keys("math_verify_reward", drop=("kl",))
    head = ("INFO 11-18 07:02:11 [__init__.py:239] Automatically detected platform cuda.\n"
            "[rank0]: GRPOConfig(learning_rate=1e-06, num_generations=8, logging_steps=10, save_steps=200, "
            "save_total_limit=3, max_steps=3000, beta=0.0)\n")
    (out / "train.log").write_text(head + trl_console(data["train"], keys, 3000, 10, steps_per_epoch=600.0))
    (out / "async_eval").mkdir()
    with (out / "async_eval" / "results.jsonl").open("w") as fh:
        for t, s, v in data["eval"]:
            fh.write(json.dumps({"checkpoint": f"checkpoint-{s}", "step": s, "dataset": "math500", "n": 500,
                                 "accuracy": v["acc"], "temperature": 0.6, "evaluated_at": iso(t)}) + "\n")
    w_trainer_state(data, out, keys, None, 3000, 10, 200, 3, 600.0)


R6 = s_async_eval_decline()
case("bad-async-eval-file-lags-shows-decline-train-rising-trl-console", R6, w_trl_console_async, 1311, (1650, 3000),
     RB(R6, 1000), "trl grpo console eval_file async_eval checkpoints reward_rises_eval_falls entropy_decline",
     """TRL GRPO console log (tqdm + dict lines) with checkpoint-1200/1400/1600, plus async_eval/results.jsonl from
     a separate evaluator that scores each saved checkpoint on MATH-500 (500 problems, sd ~0.022) and lags ~250
     steps behind: the newest result is checkpoint-1400 while training is at 1650. Train reward keeps climbing (~0.45
     -> ~0.70) as entropy falls 0.5 -> ~0.13. The held-out accuracy rose ~0.52 -> ~0.60-0.63 at checkpoints 800 and
     1000, then ~0.54 at 1200 and ~0.49 at 1400: ~4-5 sd down over two checkpoints and still falling, while the
     train reward hides it. Roll back to checkpoint-1000 (no longer on disk with save_total_limit=3; restore it from the
     evaluator's copy or re-run from the newest earlier save).""")


# ----------------------------------------- R7: live run collapses in its last 20 steps (TF2-style scalars, torn tail)

def s_live_collapse() -> Story:
    p = knots({0: .30, 400: .60, 600: .66, 619: .66, 624: .40, 630: .12, 641: .05})
    lv = dict(p=p, entropy=knots({0: .5, 619: .40, 622: 2.8, 641: 3.6}), gn=knots({0: .3, 618: .3, 620: 12, 641: 5}),
              len=knots({0: 300, 619: 340, 625: 1800, 641: 2040}), kl=knots({0: 0, 619: .04, 624: .8, 641: 2.5}),
              lr=flat(2e-6), step_time=knots({0: 20, 619: 21, 625: 80, 641: 85}), trunc=knots({0: .003, 619: .004, 625: .7, 641: .95}))
    steps = list(range(1, 642))
    ev = knots({0: .34, 400: .65, 600: .71})

    def gen(rng):
        rows = walls(rollouts(rng, steps, lv, 64, 8, 2.0, cap=2048), T0 + 2.2e6, 20)
        return {"train": rows, "eval": evals(rng, list(range(50, 601, 50)), {"acc": (ev, 1319)}, time_of(rows))}
    return Story(gen, p, steps, bin_sd(.66, 64, 8, 2.0, 50))


def w_tb_newstyle_live(data, out: Path) -> None:
    keys = {"reward": "reward/mean", "reward_std": "reward/std", "zero_std": "reward/frac_flat_groups",
            "entropy": "policy/entropy", "kl": "policy/kl_ref", "grad_norm": "policy/grad_norm", "len": "gen/len_mean",
            "trunc": "gen/truncated", "lr": "opt/lr", "step_time": "perf/step_s"}
    evs = tb_events(data["train"], keys)
    evs += [(t, s, {"eval/gsm8k_acc": v["acc"]}) for t, s, v in data["eval"]]
    evs.sort(key=lambda e: e[0])
    tb_newstyle(out / "tb" / tb_name(evs[0][0], "a100-node2", 7781), evs, truncate=23)


R7 = s_live_collapse()
case("bad-live-collapse-last-20-steps-tb-tensor-scalars-torn-tail", R7, w_tb_newstyle_live, 1327, (641, 1500),
     RB(R7, 620), "custom tensorboard new_style_scalars grpo sudden_collapse live truncated_tail",
     """Own GRPO loop writing TensorBoard scalars as TF2-style tensors (plugin "scalars"), the last record torn
     because the run is still writing; step 641 of 1500. Reward rose steadily to ~0.66 by 600 (512 completions per
     step; a 50-step mean has sd ~0.005) and GSM8K eval to ~0.71 at 600. At step ~620 a grad-norm spike (0.3 -> ~12)
     was followed by entropy 0.4 -> ~3.5, KL 0.04 -> ~2.5, lengths to the 2048 cap (~95% truncated) and reward down
     to ~0.05 within 20 steps. It will not recover on its own. Roll back to ~619, the last step before the spike
     (the 600 eval is the newest held-out check).""")


# ------------------------------------------------------- R8: 15 points, LR too high, collapse (OpenRLHF console)

def s_short_collapse() -> Story:
    p = knots({0: .31, 40: .42, 70: .50, 85: .52, 95: .515, 110: .40, 130: .25, 150: .20})
    ev = knots({0: .33, 50: .45, 85: .50, 100: .47, 150: .22})
    steps = list(range(10, 151, 10))
    lv = dict(p=p, kl=knots({0: 0, 80: .03, 100: .2, 150: .9}), len=knots({0: 600, 90: 640, 120: 2400, 150: 3600}),
              trunc=knots({0: .01, 90: .02, 120: .45, 150: .8}), gn=knots({0: .6, 85: .7, 100: 9, 150: 14}),
              lr=flat(5e-6), step_time=knots({0: 140, 150: 330}))

    def gen(rng):
        rows = orlhf_fill(rng, walls(rollouts(rng, steps, lv, 128, 8, 2.0, cap=4096), T0 + 2.3e6, 140, 10))
        return {"train": rows, "eval": evals(rng, [50, 100, 150], {"acc": (ev, 500)}, time_of(rows))}
    return Story(gen, p, steps, bin_sd(.52, 128, 8, 2.0, 5))


def w_orlhf_console(data, out: Path) -> None:
    keys = {k: v for k, v in ORLHF_KEYS.items() if not k.startswith("t_")}
    ev = {s: v for _, s, v in data["eval"]}
    lines = ["[2026-11-19 03:12:44,118] [INFO] [real_accelerator.py:254:get_accelerator] Setting ds_accelerator to cuda",
             "(PPORayActorGroup pid=20914) Loading checkpoint shards: 100%|██████████| 4/4",
             "Namespace(actor_learning_rate=5e-06, advantage_estimator='group_norm', n_samples_per_prompt=8, "
             "rollout_batch_size=128, logging_steps=10, eval_steps=50, num_episodes=1, max_samples=19200)"]
    for _, s, v in data["train"]:
        lines.append(f"Episode [1/1]:  {100 * s // 150:3d}%|{'█' * (s // 15)}{' ' * (10 - s // 15)}| {s}/150")
        lines.append(f"✨ Global step {s}: {py_repr(keyed(v, keys, float))}")
        if s in ev:
            lines.append(f"Evaluation completed in {41.3 + s / 50:.2f}s, global_step {s}, eval_metrics: "
                         f"{py_repr({'eval_math500_pass1': ev[s]['acc'], 'eval_math500_response_length_mean': v['len'] * .9, 'eval_truncated_rate': v['trunc'] * .9})}")
    (out / "train_grpo_7b.log").write_text("\n".join(lines) + "\n")


R8 = s_short_collapse()
case("bad-15pts-short-lr-too-high-collapse-openrlhf-console", R8, w_orlhf_console, 1328, (150, 150),
     RB(R8, 90), "openrlhf console grpo very_short lr_too_high collapse length_explosion",
     """OpenRLHF GRPO console log ('✨ Global step N: {...}' every 10 steps, current-step values), only 15 points:
     step 150, the end of a one-episode run with actor LR 5e-6. Reward climbs ~0.31 -> ~0.52 by 80-90 (1024
     completions per point, sd ~0.03), and the eval at 50 is ~0.45. From ~90 the grad norm jumps 0.7 -> ~9-14, KL 0.03
     -> ~0.9, responses blow up 640 -> ~3600 tokens with ~80% truncated, and reward falls to ~0.20; the evals at 100
     (~0.47) and 150 (~0.24) follow. A better model is behind: roll back to ~80-90, the last logs before the
     blow-up (and lower the LR).""")


# ----------------------------------- R9: resumed from an older checkpoint (console appended), then the run declines

def s_resume_then_decline() -> Story:
    ev = knots({0: .30, 300: .48, 600: .55, 900: .58, 1000: .58, 1100: .55, 1300: .48})
    lv = dict(p=knots({0: .30, 300: .50, 600: .58, 900: .62, 1000: .62, 1100: .57, 1300: .47}),
              len=knots({0: 500, 900: 700, 1000: 760, 1100: 1300, 1300: 1900}), trunc=knots({0: .005, 1000: .02, 1100: .15, 1300: .45}),
              entropy=knots({0: .6, 1000: .45, 1100: .62, 1300: .9}), kl=knots({0: 0, 1000: .03, 1300: .11}),
              gn=knots({0: .2, 1000: .25, 1300: .6}), lr=flat(1e-6), step_time=knots({0: 60, 1000: 80, 1300: 150}))
    esteps = list(range(0, 1301, 50))

    def gen(rng):
        a = verl_fill(rng, walls(rollouts(rng, list(range(1, 701)), lv, 256, 8, 2.0, cap=2048), T0 + 2.4e6, 60))
        ea = evals(rng, list(range(0, 701, 50)), {"acc": (ev, 500)}, time_of(a))
        b = verl_fill(rng, walls(rollouts(rng, list(range(601, 1301)), lv, 256, 8, 2.0, cap=2048), a[-1][0] + 3 * 3600, 70))
        eb = evals(rng, list(range(600, 1301, 50)), {"acc": (ev, 500)}, lambda s: b[0][0] - 200 if s == 600 else time_of(b)(s))
        return {"segs": [(a, ea), (b, eb)]}
    return Story(gen, ev, esteps, eval_sd(.58, 500), "val-core math500")


def w_verl_console_appended(data, out: Path) -> None:
    keys = {k: (v, int(v.startswith("actor/"))) for k, v in VERL_NEW.items()}
    vkey = "val-core/math500/acc/mean@1"
    text = []
    for i, (tr, ev) in enumerate(data["segs"]):
        pre = f"(TaskRunner pid={3310 + 4021 * i})"
        evd = {s: v for _, s, v in ev}
        text.append(f"{pre} Training from scratch" if i == 0 else
                    f"{pre} Load from checkpoint folder: checkpoints/grpo_math/qwen2.5-7b/global_step_600")
        if i == 1:
            text.append(f"{pre} Setting global step to 600")
            text.append(f"{pre} Resuming from  checkpoints/grpo_math/qwen2.5-7b/global_step_600")
        text += verl_console_rows(tr, evd if i == 0 else {0: evd[600], **evd}, keys, vkey, pre)
        if i == 0:
            text[-1] = text[-1][: len(text[-1]) // 2]  # the crash cut the last line
            text += ["(raylet) [2026-11-16 02:41:09,551 E 3310 3388] worker_pool.cc:588: Some workers of the worker "
                     "process(3871) have not registered within the timeout.",
                     "torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled system error",
                     "", "===== restarted with trainer.resume_mode=auto ====="]
    # the resumed run prints its validation at the resume step as "step:0"-style initial metrics of step 600
    fixed = [line.replace("step:0 - ", "step:600 - ") if "pid=7331" in line else line for line in text]
    (out / "train.log").write_text("\n".join(fixed) + "\n")
    ck = out / "checkpoints" / "grpo_math" / "qwen2.5-7b"
    for n in range(100, 1301, 100):
        (ck / f"global_step_{n}" / "actor" / "huggingface").mkdir(parents=True)
        (ck / f"global_step_{n}" / "actor" / "huggingface" / "config.json").write_text('{"model_type": "qwen2"}')
    (ck / "latest_checkpointed_iteration.txt").write_text("1300")


R9 = s_resume_then_decline()
case("bad-resumed-from-older-ckpt-then-declines-verl-console-appended", R9, w_verl_console_appended, 1329,
     (1300, 2000), RB(R9, 1000), "verl console grpo resume overlap appended_log length_explosion peak_decline checkpoints",
     """verl GRPO console output appended to one train.log (tee -a) across a crash: the first process logged steps
     1-700 (its last line cut by an NCCL failure), the restart resumed from global_step_600, validated again at 600
     and logged 601-1300, so 601-700 appear twice. Checkpoints every 100 are on disk. Validation on MATH-500 every 50
     (sd ~0.022) rose ~0.30 -> ~0.58 by 900-1000; from ~1000 responses grow 760 -> ~1900 tokens with truncation 2%
     -> ~45% and entropy rising, train score falls ~0.62 -> ~0.47 and validation ~0.58 -> ~0.48 (~4.5 sd). The
     duplicated steps are not the problem; the decline after 1000 is. Roll back to global_step_1000.""")


# ----------------------------- R10: entropy collapse after a config change at resume (verl TB, two event files)

def s_clip_higher_dropped() -> Story:
    ev = knots({0: .42, 300: .55, 600: .60, 760: .61, 800: .61, 950: .585, 1250: .55})
    best = knots({0: .62, 600: .75, 800: .76, 1000: .70, 1250: .66})
    a_lv = dict(p=knots({0: .40, 800: .62}), entropy=knots({0: .55, 800: .42}), len=knots({0: 900, 800: 1300}),
                trunc=flat(.02), kl=knots({0: 0, 800: .02}), gn=flat(.2), lr=flat(1e-6), step_time=flat(160.0))
    b_lv = dict(p=knots({800: .62, 1000: .645, 1250: .645}), entropy=knots({800: .42, 1000: .07, 1250: .05}),
                len=knots({800: 1300, 1000: 980, 1250: 900}), trunc=flat(.015), kl=knots({800: .02, 1250: .05}),
                gn=flat(.16), lr=flat(1e-6), step_time=flat(140.0))
    esteps = list(range(0, 1251, 20))

    def gen(rng):
        a = verl_fill(rng, walls(rollouts(rng, list(range(1, 821)), a_lv, 256, 8, 2.0, cap=3072), T0 + 2.5e6, 160))
        ea = evals(rng, list(range(0, 821, 20)), {"acc": (ev, 1100), "best": (best, 500)}, time_of(a))
        b = verl_fill(rng, walls(rollouts(rng, list(range(801, 1251)), b_lv, 256, 8, 2.0, cap=3072), a[-1][0] + 9000, 140))
        eb = evals(rng, list(range(800, 1251, 20)), {"acc": (ev, 1100), "best": (best, 500)},
                   lambda s: b[0][0] - 400 if s == 800 else time_of(b)(s))
        for rows in (a, b):
            for _, _, v in rows:
                v["clipfrac"] = mult(rng, .0030 if rows is a else .0018, .15)
        return {"segs": [(a, ea), (b, eb)]}
    return Story(gen, ev, esteps, eval_sd(.61, 1100), "val-core math500 mean@4")


def w_verl_tb_two(data, out: Path) -> None:
    d = out / "tensorboard_log" / "dapo_math" / "qwen2.5-7b-cliphigher"
    for i, (tr, ev) in enumerate(data["segs"]):
        evs = tb_events(tr, VERL_NEW)
        evs += [(t, s, {"val-core/math500/acc/mean@4": v["acc"], "val-core/math500/acc/best@4/mean": v["best"]})
                for t, s, v in ev]
        evs.sort(key=lambda e: e[0])
        tb_file(d / tb_name(evs[0][0], "gpu-pod-9f2c", 1201 + 17 * i), evs)


R10 = s_clip_higher_dropped()
case("bad-entropy-collapse-after-config-change-at-resume-verl-tb", R10, w_verl_tb_two, 1330, (1250, 2000),
     RB(R10, 800), "verl tensorboard dapo resume overlap two_event_files entropy_collapse config_change",
     """verl DAPO-style GRPO in TensorBoard, two event files: the first logs 1-820, the second resumes from
     global_step_800 (validating again at 800) and logs 801-1250. Through 800 the run is healthy: validation mean@4 on
     MATH-500 every 20 steps (sd ~0.015) rises to ~0.61 by 760-800, entropy eases 0.55 -> 0.42. From the resume on,
     actor/entropy collapses 0.42 -> ~0.06 within 200 steps and pg_clipfrac drops (the clip-higher override was lost
     in the restarted config); train score edges up ~0.62 -> ~0.645 while validation falls to ~0.55 (~4 sd) and
     best@4 falls more (~0.76 -> ~0.66): the policy sharpened and lost coverage. Roll back to global_step_800, the
     last step of the good configuration.""")


# -------------------------------------------- R11: RLOO k=2 every step: noise hides a real decline (TRL console)

def s_rloo_k2_decline() -> Story:
    p = knots({0: .30, 500: .46, 600: .46, 1300: .36})
    lv = dict(p=p, kl=knots({0: .0005, 600: .03, 1300: .6}), entropy=knots({0: .6, 600: .55, 1300: .95}),
              len=knots({0: 350, 600: 380, 1300: 520}), trunc=knots({0: .005, 600: .008, 1300: .05}), gn=knots({0: .3, 600: .35, 1300: .9}),
              lr=lambda s: 1e-6 * (1 - s / 3000), step_time=flat(8.0))
    steps = list(range(1, 1301))

    def gen(rng):
        rows = walls(rollouts(rng, steps, lv, 16, 2, 2.0, cap=1024, beta=.05), T0 + 2.6e6, 8)
        return {"train": trl_fill(rows, tokens_per_step=32 * 170)}
    return Story(gen, p, steps, bin_sd(.46, 16, 2, 2.0, 50))


def w_trl_console_rloo(data, out: Path) -> None:
    keys = trl_keys("correct")
    (out / "rloo_run.log").write_text(
        "[2026-11-12 18:20:03] RLOOConfig(num_generations=2, beta=0.05, logging_steps=1, max_steps=3000, "
        "per_device_train_batch_size=8, gradient_accumulation_steps=4)\n"
        + trl_console(data["train"], keys, 3000, 1, steps_per_epoch=500.0))


R11 = s_rloo_k2_decline()
case("bad-rloo-k2-every-step-noise-hides-real-decline-trl-console", R11, w_trl_console_rloo, 1331, (1300, 3000),
     RB(R11, 600), "trl rloo console group_size_2 every_step noisy peak_decline kl_drift entropy_rise",
     """TRL RLOO console log (num_generations=2, logging every step, 32 completions per point so single rewards
     swing +-0.1), step 1300 of 3000. Point by point it is noise; binned it is not: ~0.31 over the first 100 steps,
     ~0.46 around 450-600 (a 50-step mean has sd ~0.014), then down steadily to ~0.37 over the last 100 steps, ~6
     sd of a 50-step mean below the peak. KL (beta 0.05) grows 0.03 -> ~0.6 after 600 and entropy rises 0.55 ->
     ~0.95: the policy is drifting, not learning. Roll back to ~600, the end of the peak stretch.""")


# ========================================================================================================= ambiguous

# ---------------------------------------------------- A1: sampled eval peaked, greedy eval still creeping up

def s_two_temp_ambig() -> Story:
    greedy = knots({0: .50, 700: .645, 1000: .645, 1600: .665})
    sampled = knots({0: .40, 400: .53, 700: .57, 800: .58, 1000: .58, 1300: .565, 1600: .545})
    lv = dict(p=knots({0: .38, 800: .60, 1000: .60, 1600: .575}), entropy=knots({0: .5, 900: .48, 1600: .85}),
              kl=knots({0: 0, 1000: .04, 1600: .12}), len=knots({0: 700, 1600: 760}), gn=flat(.2), lr=flat(1e-6),
              step_time=flat(52.0))
    esteps = list(range(0, 1601, 100))

    def gen(rng):
        rows = walls(rollouts(rng, list(range(1, 1601)), lv, 64, 8, 2.0, cap=2048), T0 + 2.7e6, 52)
        return {"train": rows,
                "eval": evals(rng, esteps, {"greedy": (greedy, 500), "sampled": (sampled, 1500)}, time_of(rows))}
    return Story(gen, sampled, esteps, eval_sd(.58, 1500), "sampled eval (T=1.0)")


def w_mlflow_two_temps(data, out: Path) -> None:
    series: dict[str, list] = {}
    for t, s, v in data["train"]:
        for name, key in (("reward", "train/reward"), ("reward_std", "train/reward_std"), ("kl", "train/kl"),
                          ("entropy", "train/entropy"), ("len", "train/response_length"), ("grad_norm", "train/grad_norm")):
            series.setdefault(key, []).append((s, t, float(f"{v[name]:.6g}")))
    for t, s, v in data["eval"]:
        series.setdefault("eval/math500_greedy_acc", []).append((s, t, v["greedy"]))
        series.setdefault("eval/math500_t1.0_mean@8", []).append((s, t, v["sampled"]))
    w_mlflow_files(out, "grpo-math-two-temps", "r1-distill-1.5b-grpo", "9b7d0c3e5a1f4b2c8d6e4f2a0b9c8d7e", series,
                   {"lr": "1e-06", "group_size": "8", "rollout_temperature": "1.0", "total_steps": "3000",
                    "eval_greedy_temperature": "0.0", "eval_sampled_temperature": "1.0", "eval_sampled_n": "8"},
                   start=data["train"][0][0] - 300)


A1 = s_two_temp_ambig()
case("ambig-sampled-eval-peaked-greedy-eval-creeping-up-mlflow-files", A1, w_mlflow_two_temps, 1365, (1600, 3000),
     SRB(A1, 1000), "custom mlflow file_store grpo two_temperatures eval_disagreement entropy_rise",
     """Own GRPO loop in an MLflow file store, step 1600 of 3000, two evals every 100 steps on MATH-500: greedy
     (sd ~0.021) and mean@8 at T=1.0 (sd ~0.013). They disagree. The sampled eval peaked at ~0.58 around 800-1000 and
     has slid to ~0.545 (~2.8 sd), with the T=1.0 train reward easing ~0.60 -> ~0.575 as entropy rises 0.49 -> ~0.8:
     the tail of the sampling distribution is getting noisier. Greedy accuracy is not hurt: ~0.645 at 700-1000 and
     still creeping up (~0.665 now). Which weights are best depends on the deployment temperature: served greedy,
     the current weights are as good as any and further steps buy little, so stop; served with sampling, ~1000 was
     better, so roll back there. Both are sound.""")


# ------------------------------------------------ A2: peak long ago only ~2 sd above the plateau (rasbt CSV)

def s_rasbt_small_gap() -> Story:
    ev = knots({1: .20, 150: .40, 250: .47, 350: .47, 450: .425, 800: .425})
    p = knots({1: .18, 150: .38, 250: .45, 350: .45, 450: .41, 800: .41})
    esteps = [1, *range(50, 801, 50)]

    def gen(rng):
        rows = []
        t = T0 + 2.8e6
        for s in range(1, 801):
            b = bin_batch(rng, p(s), 1, 8, 2.0)
            flat_group = b["zero_std"] == 1.0
            st = mult(rng, 11.0, .1)
            t += st
            length = mult(rng, 380 + .1 * s, .15)
            rows.append((t, s, {"reward": b["reward"], "flat": flat_group, "len": length, "tps": length * 8 / st,
                                "entropy": mult(rng, .62 - .00015 * s, .05),
                                "kl": .02 * (s / 800) * math.exp(.4 * rng.standard_normal()) - .002,
                                "ratio": 1 + .01 * rng.standard_normal(), "pg": 40 * rng.standard_normal()}))
        evr = [(t, s, {"acc": binom(rng, ev(s), 500)}) for t, s, _ in rows if s in esteps]
        return {"train": rows, "eval": evr}
    return Story(gen, ev, esteps, eval_sd(.47, 500), "eval_acc MATH-500")


def w_rasbt_csv(data, out: Path) -> None:
    ev = {s: v["acc"] for _, s, v in data["eval"]}
    hdr = ("step,total_steps,loss,kl_loss,policy_ratio,reward_avg,tokens_per_sec,avg_response_len,adv_avg,adv_std,"
           "entropy_avg,eval_acc")
    lines = [hdr]
    for _, s, v in data["train"]:
        skip = v["flat"]
        loss = 0.0 if skip else v["pg"] + v["kl"]
        lines.append(",".join([
            str(s), "1000", f"{loss:.6f}", f"{v['kl']:.6f}", "" if skip else f"{v['ratio']:.6f}", f"{v['reward']:.6f}",
            f"{v['tps']:.2f}", f"{v['len']:.2f}", "0.000000", "0.000000" if skip else f"{.935 + .02 * math.sin(s):.6f}",
            f"{v['entropy']:.6f}", f"{100 * ev[s]:.1f}" if s in ev else ""]))
    (out / "logs").mkdir()
    (out / "logs" / "7_5_plus_kl_metrics.csv").write_bytes(("\r\n".join(lines) + "\r\n").encode())


A2 = s_rasbt_small_gap()
case("ambig-peak-long-ago-only-2sd-above-plateau-rasbt-csv", A2, w_rasbt_csv, 1342, (800, 1000), SRB(A2, 350),
     "rasbt csv grpo kl long_plateau_after_peak small_gap eval_every_50",
     """reasoning-from-scratch 7_5 script (GRPO + KL), CSV with CRLF endings, one prompt x 8 rollouts per step,
     eval_acc on MATH-500 in percent at step 1 and every 50 (sd ~2.2 points); step 800 of total_steps 1000. The eval
     climbed 20% -> ~47% by 250-350, slipped to ~42.5% by 450 and has stayed there for 350 steps; the per-step reward
     is far too noisy to add anything (8 rollouts of one prompt). The gap between the old peak and the plateau is ~4.5
     points, about 2 sd of one eval: probably real, but small and read off two or three evals. Stopping here (the
     plateau is flat, nothing more to gain) is fine; rolling back to ~350 to take the possibly better peak is also
     fine.""")


# ------------------------------------------------------------------------------------------------- checks and main

def check(cases: list[Case]) -> None:
    for c in cases:
        story: Story = c.scenario
        data = story.gen(np.random.default_rng(c.seed))
        lv = [story.head(s) for s in story.head_steps]
        ib = int(np.argmax(lv))
        lab = c.labels
        print(f"{c.name:78s} {lab['preferred']:8s} win={lab.get('rollback_window')} onset={lab.get('onset_step')} "
              f"best={story.head_steps[ib]}:{lv[ib]:.3f} last={story.head_steps[-1]}:{lv[-1]:.3f} "
              f"sd={story.head_sd:.4f} ({story.what})")
        segs = data.get("segs") or [(data["train"], data.get("eval", []))]
        train = last_copy([r for tr, _ in segs for r in tr])
        ev = last_copy([r for _, e in segs for r in e])
        for k in ev[0][2] if ev else ():
            print(f"    eval[{k}] " + " ".join(f"{s}:{v[k]:.3f}" for _, s, v in ev[:: max(1, len(ev) // 16)]) +
                  f" | last {ev[-1][1]}:{ev[-1][2][k]:.3f}")
        rk = "reward" if "reward" in train[0][2] else next(iter(train[0][2]))
        n = max(1, len(train) // 12)
        print("    train(binned) " + " ".join(f"{train[i][1]}:{np.mean([v[rk] for _, _, v in train[i:i + n]]):.3f}"
                                         for i in range(0, len(train), n)))


def verify(runs: Path) -> None:
    """Every file parses the way its framework's own readers parse it (torn tails excepted)."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    n = 0
    for p in sorted(runs.rglob("*")):
        if not p.is_file() or "wandb" in p.parts:
            continue
        if p.name.startswith("events.out.tfevents"):
            acc = EventAccumulator(str(p), size_guidance={"scalars": 0, "tensors": 0})
            acc.Reload()
            tags = acc.Tags()
            assert tags["scalars"] or tags["tensors"], p
        elif p.suffix == ".json":
            json.loads(p.read_text())
        elif p.suffix == ".jsonl":
            lines = p.read_text().splitlines()
            for i, line in enumerate(lines):
                try:
                    json.loads(line)
                except json.JSONDecodeError:
                    assert i == len(lines) - 1, (p, i)  # only a torn last line
        elif p.suffix == ".csv":
            rows = list(csv.reader(p.open(newline="")))
            assert len(rows) > 2 and len({len(r) for r in rows}) == 1, p
        elif p.suffix == ".db":
            db = sqlite3.connect(p)
            assert db.execute("select count(*) from metrics").fetchone()[0] > 0, p
        else:
            continue
        n += 1
    print(f"verified {n} files parse")


HEADER = """# Holdout set 13: hand-built runs written by make_holdout13.py, independent of the assessor, its judges and the
# generators of the other holdout sets. Labels: what a careful practitioner should do under DESIGN.md's decision
# contract, decided from the noise-free levels of each story. rollback_window is inclusive: from the first logged
# headline step whose level is within one sampling sd of the best level (one eval; or a 50-step mean of the train
# reward) to the newest such step not after onset_step.
# Run `.venv/bin/python evals/holdout13/make_holdout13.py` to write runs/ (gitignored); `--check` prints levels.
"""


def main() -> None:
    holdout_kit.main(HERE, "make_holdout13.py", "holdout13.yaml", "h13-", "holdout13", HEADER, CASES, write_run,
                     _check_and_verify)


def _check_and_verify(cases: list[Case]) -> None:
    check(cases)
    verify(HERE / "runs")


if __name__ == "__main__":
    main()
