"""Holdout set 11: 24 hand-labelled RL post-training runs in real on-disk formats, independent of the assessor.

Run from the worktree root:
    .venv/bin/python evals/holdout11/make_holdout11.py           # writes runs/ (gitignored) and holdout11.yaml
    .venv/bin/python evals/holdout11/make_holdout11.py --check   # also prints levels, best/last points, windows

How a run is made. Each case gives noise-free curves as knots (step -> level, linear in between) for a small
vocabulary of quantities: the train reward (a pass rate, or a score), the held-out eval, length, truncation,
entropy, KL, learning rate, plus exact framework keys of its own. Noise is then drawn per logged point:
  * train reward: a batch mean over `prompts` groups, sd = sqrt(p(1-p)/prompts) (rollouts of a group are correlated,
    so the group, not the sample, is the unit); `prompts` may change mid-run (batch or group size changed);
  * eval: Binomial(N, p)/N on N problems; score-type evals get sd/sqrt(N);
  * grad norm: log-normal with Student-t(3) shocks (heavy tails); lengths and the rest: a few percent Gaussian.
Resumes are written as the framework writes them: TensorBoard gets one event file per segment with the steps
between the last checkpoint and the crash logged twice; trainer_state.json and the verl file logger have no
duplicates.

How labels and windows are made (DESIGN.md, "What the three decisions mean"). The headline is the noise-free eval
(else the train reward). For rollback cases the window is [first logged headline step within one sampling sd of
the best, newest such step not after the onset of the damage]; `--check` prints it next to the noisy values.
"""

from __future__ import annotations

import csv
import json
import sqlite3
import sys
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from holdout_kit import HEALTHY, Case, build, converged, dump_json, rollback, stop, tb_file, trainer_state, writer

HERE = Path(__file__).resolve().parent
T0 = 1_780_000_000.0


# ------------------------------------------------------------------------------------------------------ scenarios

def knots(pts: dict[int, float], steps: np.ndarray) -> np.ndarray:
    xs = sorted(pts)
    return np.interp(steps, xs, [pts[x] for x in xs])


@dataclass
class Spec:
    """Noise-free knots of one run and how it is logged."""

    reward: dict | None = None  # pass rate (binary) or a score when `score_sd` is set
    evl: dict | None = None  # held-out eval level
    eval_n: int = 500
    eval_every: int = 50
    eval_at0: bool = False
    prompts: dict = field(default_factory=lambda: {0: 64})  # groups per batch (reward noise)
    score_sd: float | None = None  # per-prompt sd of a non-binary score
    length: dict = field(default_factory=lambda: {0: 400})
    clip: dict = field(default_factory=lambda: {0: 0.01})  # truncated fraction
    entropy: dict | None = field(default_factory=lambda: {0: 0.6})
    kl: dict | None = None
    lr: dict = field(default_factory=lambda: {0: 1e-6})
    gnorm: dict = field(default_factory=lambda: {0: 0.3})
    zero_std: dict | None = None  # fraction of groups with zero reward spread (else from p and group size)
    group: int = 8
    extra: dict = field(default_factory=dict)  # exact key -> (knots, relative sd)
    eval_extra: dict = field(default_factory=dict)  # exact eval key -> (knots, abs sd)
    log_every: int = 1
    first: int = 1
    resumes: list = field(default_factory=list)  # (crash_step, resumed_from)
    reward_every: int | None = None  # the reward only on these multiples


@dataclass
class Run:
    train: list  # (wall, step, {generic or exact key: value}) in emission order
    evals: list  # (wall, step, {key: value})
    clean: tuple  # (steps, headline values, sd)
    spec: Spec
    reached: int
    planned: int


def simulate(spec: Spec, seed: int, reached: int, planned: int) -> Run:
    rng = np.random.default_rng(seed)
    segs, start = [], spec.first
    for crash, back in spec.resumes:
        segs.append((start, crash))
        start = back + spec.log_every
    segs.append((start, reached))
    wall, train = T0, []
    for lo, hi in segs:
        wall += 600.0
        for s in range(lo, hi + 1):
            if s % spec.log_every and s != spec.first:
                continue
            wall += 30.0 * spec.log_every
            train.append((wall, s, point(spec, rng, s)))
    evals, ev_steps = [], list(range(0 if spec.eval_at0 else spec.eval_every, reached + 1, spec.eval_every))
    if spec.evl or spec.eval_extra:
        for s in ev_steps:
            vals = {}
            if spec.evl:
                p = float(knots(spec.evl, np.array([s]))[0])
                vals["eval"] = rng.binomial(spec.eval_n, p) / spec.eval_n
            for k, (kn, sd) in spec.eval_extra.items():
                vals[k] = float(knots(kn, np.array([s]))[0] + rng.normal(0, sd))
            evals.append((T0 + 30.0 * s + 15, s, vals))
    if spec.evl:
        xs = np.array(ev_steps)
        ys = knots(spec.evl, xs)
        sd = np.sqrt(np.clip(ys.max() * (1 - ys.max()), 1e-4, None) / spec.eval_n)
    else:
        xs = np.array(sorted({s for _, s, _ in train}))
        ys = knots(spec.reward, xs) if spec.reward else knots(next(iter(spec.extra.values()))[0], xs)
        p = ys.max()
        n = knots(spec.prompts, xs[-1:])[0]
        sd = (spec.score_sd or np.sqrt(max(p * (1 - p), 1e-4))) / np.sqrt(n)
    return Run(train, evals, (xs, ys, float(sd)), spec, reached, planned)


def point(spec: Spec, rng: np.random.Generator, s: int) -> dict:
    at = np.array([s])
    v: dict = {}
    if spec.reward and (spec.reward_every is None or s % spec.reward_every == 0):
        p = float(knots(spec.reward, at)[0])
        n = float(knots(spec.prompts, at)[0])
        if spec.score_sd:
            v["reward"] = p + rng.normal(0, spec.score_sd / np.sqrt(n))
            v["reward_std"] = spec.score_sd * (1 + 0.05 * rng.normal())
        else:
            pi = np.clip(rng.beta(max(p, 1e-3) * 6, max(1 - p, 1e-3) * 6, int(n)), 0, 1)  # per-prompt solve rates
            sol = rng.binomial(spec.group, pi)
            v["reward"] = float(sol.sum() / (n * spec.group))
            v["reward_std"] = float(np.sqrt(v["reward"] * (1 - v["reward"])))
            zs = float(np.mean((sol == 0) | (sol == spec.group)))
            v["zero_std"] = zs if spec.zero_std is None else float(np.clip(knots(spec.zero_std, at)[0]
                                                                             + rng.normal(0, 0.03), 0, 1))
    v["length"] = float(knots(spec.length, at)[0] * (1 + 0.03 * rng.normal()))
    v["clip"] = float(np.clip(knots(spec.clip, at)[0] + rng.normal(0, 0.006), 0, 1))
    if spec.entropy:
        v["entropy"] = float(knots(spec.entropy, at)[0] * (1 + 0.03 * rng.normal()))
    if spec.kl:
        v["kl"] = float(max(knots(spec.kl, at)[0] * (1 + 0.08 * rng.normal()), 0.0))
    v["lr"] = float(knots(spec.lr, at)[0])
    v["gnorm"] = float(knots(spec.gnorm, at)[0] * np.exp(0.25 * rng.standard_t(3)))
    v["loss"] = float(rng.normal(0, 0.02))
    for k, (kn, rel) in spec.extra.items():
        base = float(knots(kn, at)[0])
        v[k] = base + rel * abs(base) * rng.normal() if rel >= 0 else base + (-rel) * rng.normal()
    return v


# ----------------------------------------------------------------------------------------------------- key maps

TRL_GRPO = {"reward": "reward", "reward_std": "reward_std", "zero_std": "frac_reward_zero_std",
            "length": "completions/mean_length", "clip": "completions/clipped_ratio", "entropy": "entropy",
            "kl": "kl", "gnorm": "grad_norm", "lr": "learning_rate", "loss": "loss"}
TRL_OWN = {"gnorm": "grad_norm", "lr": "learning_rate", "loss": "loss"}  # DPO / CPO / PPO: their keys come as extras
VERL = {"reward": "critic/score/mean", "length": "response_length/mean", "clip": "response_length/clip_ratio",
        "entropy": "actor/entropy", "kl": "actor/kl_loss", "gnorm": "actor/grad_norm", "lr": "actor/lr",
        "loss": "actor/pg_loss"}
ORLHF = {"reward": "reward", "reward_std": "group_reward_std", "length": "response_length", "clip": "truncated",
         "entropy": "entropy_loss", "kl": "kl", "gnorm": "actor_grad_norm", "lr": "actor_lr", "loss": "policy_loss"}
NEMO = {"reward": "train/reward", "length": "train/mean_gen_tokens_per_sample", "clip": "train/truncation_rate",
        "entropy": "train/approx_entropy", "kl": "train/kl_penalty", "gnorm": "train/grad_norm", "lr": "train/lr",
        "loss": "train/loss"}
PLAIN = {"reward": "reward", "reward_std": "reward_std", "length": "response_len", "clip": "truncated_frac",
         "entropy": "entropy", "kl": "kl", "gnorm": "grad_norm", "lr": "lr", "loss": "loss"}


def named(vals: dict, keymap: dict, prefix: str = "") -> dict:
    out = {}
    for k, v in vals.items():
        if k in keymap:
            out[prefix + keymap[k]] = v
        elif k not in TRL_GRPO and k != "eval":  # exact framework keys pass through
            out[prefix + k] = v
    return out


def dedup(records: list) -> list:
    """What a file with no duplicates keeps after a resume: the newest record of each step."""
    last = {s: (w, s, v) for w, s, v in records}
    return [last[s] for s in sorted(last)]


def r4(v: float) -> float:
    return float(f"{v:.6g}")


# ------------------------------------------------------------------------------------------------------ writers

def w_trl_state(run: Run, out: Path, keymap: dict, eval_key: str, save_every: int, limit: int = 3,
                version_keys: dict | None = None, summary: bool = False) -> None:
    hist, spec = [], run.spec
    evals = {s: v for _, s, v in run.evals}
    for _, s, v in dedup(run.train):
        row = {k: r4(x) for k, x in named(v, {**keymap, **(version_keys or {})}).items()}
        if "loss" in row:
            row["loss"] = round(row["loss"], 4)
        row.update(epoch=round(s / run.planned, 4), step=s)
        hist.append(row)
        if s in evals:
            ev = {("eval_" + k if not k.startswith("eval") else k): r4(x) for k, x in evals[s].items()}
            ev[eval_key] = ev.pop("eval", None) if "eval" in ev else ev.get(eval_key)
            ev = {k: x for k, x in ev.items() if x is not None}
            ev.update(eval_runtime=41.3, eval_samples_per_second=12.1, eval_steps_per_second=0.4,
                      epoch=round(s / run.planned, 4), step=s)
            hist.append(ev)
    finished = run.reached >= run.planned
    if finished and summary:
        hist.append({"epoch": 1.0, "step": run.reached, "total_flos": 0.0, "train_loss": 0.01,
                     "train_runtime": 30.0 * run.reached, "train_samples_per_second": 2.1,
                     "train_steps_per_second": 0.03})
    saves = list(range(save_every, run.reached + 1, save_every))[-limit:]
    for s in saves:
        ck = out / f"checkpoint-{s}"
        dump_json(ck / "trainer_state.json", trainer_state([h for h in hist if h["step"] <= s and "train_loss" not in h],
                                                           s, run.planned, spec.log_every, save_every, spec.eval_every,
                                                           round(s / run.planned, 4)))
        (ck / "adapter_config.json").write_text('{"peft_type": "LORA", "r": 16}\n')
        (ck / "adapter_model.safetensors").write_bytes(b"\0" * 64)
    dump_json(out / "trainer_state.json", trainer_state(hist, run.reached, run.planned, spec.log_every, save_every,
                                                        spec.eval_every, round(run.reached / run.planned, 4),
                                                        training_stop=finished))


def w_tb(run: Run, out: Path, keymap: dict, prefix: str, eval_key: str, sub: str = "", host: str = "gpu-node-3") -> None:
    """One event file per segment (a resume opens a new file; the overlapping steps are logged twice)."""
    segs, cur, last = [], [], -1
    for rec in run.train:
        if rec[1] <= last:
            segs.append(cur)
            cur = []
        cur.append(rec)
        last = rec[1]
    segs.append(cur)
    for i, seg in enumerate(segs):
        hi = seg[-1][1] if i < len(segs) - 1 else run.reached + 1
        lo = seg[0][1]
        evs = [(w, s, {eval_key if k == "eval" else k: x for k, x in v.items()})
               for w, s, v in run.evals if lo <= s <= hi or (i == 0 and s == 0)]
        events = sorted([(w, s, named(v, keymap, prefix)) for w, s, v in seg]
                        + [(max(w, seg[0][0]), s, v) for w, s, v in evs], key=lambda e: (e[0], e[1]))
        wall = seg[0][0]
        tb_file(out / sub / f"events.out.tfevents.{int(wall)}.{host}.{4100 + 37 * i}.0", events)


def w_verl_jsonl(run: Run, out: Path, eval_key: str, name: str = "exp.jsonl") -> None:
    evals = {s: v for _, s, v in run.evals}
    lines = []
    if 0 in evals:
        lines.append({"step": 0, "data": {eval_key: evals[0]["eval"]}})
    for _, s, v in dedup(run.train):
        d = {k: (None if not np.isfinite(x) else r4(x)) for k, x in named(v, VERL).items()}
        d["critic/rewards/mean"] = d.get("critic/score/mean")
        d.update({"training/global_step": s, "timing_s/step": round(28 + 4 * np.sin(s), 2)})
        if s in evals:
            d.update({eval_key if k == "eval" else k: r4(x) for k, x in evals[s].items()})
        lines.append({"step": s, "data": d})
    out.mkdir(parents=True, exist_ok=True)
    (out / name).write_text("".join(json.dumps(x) + "\n" for x in lines))


def w_verl_console(run: Run, out: Path, eval_key: str) -> None:
    evals = {s: v for _, s, v in run.evals}
    fmt = lambda x: f"np.float64({r4(x)})"  # noqa: E731  (NumPy 2 pformat)
    lines = ["(TaskRunner pid=21877) Using LocalLogger is deprecated.", "INFO 11-20 vLLM engine initialised"]
    if 0 in evals:
        lines.append(f"(TaskRunner pid=21877) step:0 - {eval_key}:{fmt(evals[0]['eval'])}")
    for _, s, v in dedup(run.train):
        d = named(v, VERL)
        if s in evals:
            d.update({eval_key if k == "eval" else k: x for k, x in evals[s].items()})
        lines.append(f"(TaskRunner pid=21877) step:{s} - " + " - ".join(f"{k}:{fmt(x)}" for k, x in d.items()))
    out.mkdir(parents=True, exist_ok=True)
    (out / "train.log").write_text("\n".join(lines) + "\n")


def w_orlhf_console(run: Run, out: Path, eval_key: str) -> None:
    evals = {s: v for _, s, v in run.evals}
    lines = ["[2026-11-20 10:02:11,004] [INFO] [real_accelerator.py:203:get_accelerator] Setting ds_accelerator to cuda"]
    for _, s, v in dedup(run.train):
        d = {k: r4(x) for k, x in named(v, ORLHF).items()}
        lines.append(f"✨ Global step {s}: {d!r}")
        if s in evals:
            ev = {eval_key if k == "eval" else k: r4(x) for k, x in evals[s].items()}
            lines.append(f"Evaluation completed in 48.21 seconds, global_step {s}, eval_metrics: {ev!r}")
    out.mkdir(parents=True, exist_ok=True)
    (out / "train.log").write_text("\n".join(lines) + "\n")


def w_trl_console(run: Run, out: Path, keymap: dict, eval_key: str) -> None:
    evals = {s: v for _, s, v in run.evals}
    lines, n = [], run.planned
    if 0 in evals:  # eval_on_start=True
        lines += [f"  0%|          | 0/{n} [00:00<?, ?it/s]",
                  repr({eval_key: r4(evals[0]["eval"]), "eval_runtime": 52.7, "epoch": 0})]
    for _, s, v in dedup(run.train):
        pct = int(100 * s / n)
        lines.append(f"{pct:3d}%|{'█' * (pct // 10):<10}| {s}/{n} [{s // 2:02d}:{s % 60:02d}<{(n - s) // 2}:00, "
                     f"{31.2:.2f}s/it]")
        d = {k: r4(x) for k, x in named(v, keymap).items()}
        if "loss" in d:
            d["loss"] = round(d["loss"], 4)
        d["epoch"] = round(s / n, 2)
        lines.append(repr(d))
        if s in evals:
            ev = {(eval_key if k == "eval" else ("eval_" + k if not k.startswith("eval") else k)): r4(x)
                  for k, x in evals[s].items()}
            ev.update(eval_runtime=52.7, eval_samples_per_second=9.5, eval_steps_per_second=0.3, epoch=round(s / n, 2))
            lines.append(repr(ev))
    out.mkdir(parents=True, exist_ok=True)
    (out / "train.log").write_text("\n".join(lines) + "\n")


def w_wandb_csv(run: Run, out: Path, name: str, panels: dict, budget: int = 120) -> None:
    """UI panel exports: `Step`, `<run> - <key>`, `__MIN`, `__MAX`, one file per panel, downsampled to the budget."""
    rows = dedup(run.train)
    evals = {s: v for _, s, v in run.evals}
    out.mkdir(parents=True, exist_ok=True)
    for fname, (src, key) in panels.items():
        pts = [(s, v[src]) for _, s, v in rows if src in v] if src != "eval" else [(s, v["eval"]) for s, v in
                                                                                   evals.items()]
        per = max(1, -(-len(pts) // budget))
        with (out / fname).open("w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(["Step", f"{name} - {key}", f"{name} - {key}__MIN", f"{name} - {key}__MAX"])
            for i in range(0, len(pts), per):
                b = pts[i:i + per]
                ys = [y for _, y in b]
                w.writerow([b[-1][0], r4(float(np.mean(ys))), r4(min(ys)), r4(max(ys))])


def w_mlflow_files(run: Run, out: Path, keymap: dict, eval_key: str, name: str) -> None:
    rid = uuid.uuid5(uuid.NAMESPACE_URL, name).hex
    exp = out / "mlruns" / "0"
    (exp / rid / "metrics").mkdir(parents=True, exist_ok=True)
    (exp / "meta.yaml").write_text(f"artifact_location: file://{exp}\nexperiment_id: '0'\nlifecycle_stage: active\n"
                                   "name: Default\n")
    (exp / rid / "meta.yaml").write_text(
        f"artifact_uri: file://{exp / rid / 'artifacts'}\nend_time: null\nentry_point_name: ''\nexperiment_id: '0'\n"
        f"lifecycle_stage: active\nrun_id: {rid}\nrun_name: {name}\nrun_uuid: {rid}\nsource_name: ''\nsource_type: 4\n"
        f"source_version: ''\nstart_time: {int(T0 * 1000)}\nstatus: 1\ntags: []\nuser_id: trainer\n")
    for d in ("params", "tags", "artifacts"):
        (exp / rid / d).mkdir(exist_ok=True)
    (exp / rid / "tags" / "mlflow.runName").write_text(name)
    (exp / rid / "params" / "max_steps").write_text(str(run.planned))
    lines: dict[str, list[str]] = {}
    for w, s, v in run.train:
        for k, x in named(v, keymap).items():
            lines.setdefault(k, []).append(f"{int(w * 1000)} {x!r} {s}")
    for w, s, v in run.evals:
        for k, x in v.items():
            lines.setdefault(eval_key if k == "eval" else k, []).append(f"{int(w * 1000)} {x!r} {s}")
    for k, ls in lines.items():
        p = exp / rid / "metrics" / k
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("\n".join(ls) + "\n")


def w_mlflow_db(run: Run, out: Path, keymap: dict, eval_key: str, name: str) -> None:
    out.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(out / "mlflow.db")
    db.executescript("""
    CREATE TABLE alembic_version (version_num VARCHAR(32) NOT NULL PRIMARY KEY);
    CREATE TABLE experiments (experiment_id INTEGER PRIMARY KEY, name VARCHAR(256) UNIQUE, artifact_location
      VARCHAR(256), lifecycle_stage VARCHAR(32), creation_time BIGINT, last_update_time BIGINT);
    CREATE TABLE runs (run_uuid VARCHAR(32) PRIMARY KEY, name VARCHAR(250), source_type VARCHAR(20), source_name
      VARCHAR(500), entry_point_name VARCHAR(50), user_id VARCHAR(256), status VARCHAR(9), start_time BIGINT,
      end_time BIGINT, deleted_time BIGINT, source_version VARCHAR(50), lifecycle_stage VARCHAR(20), artifact_uri
      VARCHAR(200), experiment_id INTEGER);
    CREATE TABLE metrics (key VARCHAR(250), value FLOAT, timestamp BIGINT, run_uuid VARCHAR(32), step BIGINT
      DEFAULT 0, is_nan BOOLEAN DEFAULT 0, PRIMARY KEY (key, timestamp, step, run_uuid, value, is_nan));
    CREATE TABLE latest_metrics (key VARCHAR(250), value FLOAT, timestamp BIGINT, step BIGINT, is_nan BOOLEAN,
      run_uuid VARCHAR(32), PRIMARY KEY (key, run_uuid));
    CREATE TABLE params (key VARCHAR(250), value VARCHAR(8000), run_uuid VARCHAR(32), PRIMARY KEY (key, run_uuid));
    CREATE TABLE tags (key VARCHAR(250), value VARCHAR(8000), run_uuid VARCHAR(32), PRIMARY KEY (key, run_uuid));
    """)
    rid = uuid.uuid5(uuid.NAMESPACE_DNS, name).hex
    db.execute("INSERT INTO alembic_version VALUES ('1b5f0d9ad7c1')")
    db.execute("INSERT INTO experiments VALUES (0, 'Default', 'mlflow-artifacts:/0', 'active', ?, ?)",
               (int(T0 * 1000), int(T0 * 1000)))
    db.execute("INSERT INTO runs VALUES (?, ?, 'LOCAL', '', '', 'trainer', 'RUNNING', ?, NULL, NULL, '', 'active', ?, 0)",
               (rid, name, int(T0 * 1000), f"mlflow-artifacts:/0/{rid}/artifacts"))
    db.execute("INSERT INTO tags VALUES ('mlflow.runName', ?, ?)", (name, rid))
    db.execute("INSERT INTO params VALUES ('max_steps', ?, ?)", (str(run.planned), rid))
    rows = [(k, x, int(w * 1000), rid, s) for w, s, v in run.train for k, x in named(v, keymap).items()]
    rows += [(eval_key if k == "eval" else k, x, int(w * 1000), rid, s) for w, s, v in run.evals for k, x in v.items()]
    db.executemany("INSERT OR IGNORE INTO metrics VALUES (?, ?, ?, ?, ?, 0)", rows)
    last = {}
    for r in rows:
        last[r[0]] = r
    db.executemany("INSERT INTO latest_metrics VALUES (?, ?, ?, ?, 0, ?)", [(k, x, t, s, rd) for k, x, t, rd, s
                                                                         in last.values()])
    db.commit()
    db.close()


def w_custom_csv(run: Run, out: Path, cols: list[str], eval_col: str, fname: str = "metrics.csv") -> None:
    evals = {s: v["eval"] for _, s, v in run.evals}
    out.mkdir(parents=True, exist_ok=True)
    with (out / fname).open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["step", *cols, eval_col])
        for _, s, v in dedup(run.train):
            d = named(v, PLAIN)
            w.writerow([s, *[f"{d[c]:.5g}" if c in d else "" for c in cols],
                        f"{evals[s]:.4f}" if s in evals else ""])


def w_custom_jsonl(run: Run, out: Path, keymap: dict, eval_key: str, fname: str = "log.jsonl") -> None:
    evals = {s: v for _, s, v in run.evals}
    out.mkdir(parents=True, exist_ok=True)
    with (out / fname).open("w") as fh:
        for w, s, v in dedup(run.train):
            d = {"step": s, "time": round(w, 1), **{k: r4(x) for k, x in named(v, keymap).items()}}
            if s in evals:
                d.update({eval_key if k == "eval" else k: r4(x) for k, x in evals[s].items()})
            fh.write(json.dumps(d) + "\n")


def write_run(case: Case, folder: Path) -> None:
    planned = case.planned or case.reached
    case.write(simulate(case.scenario, case.seed, case.reached, planned), folder)


# ---------------------------------------------------------------------------------------------------- the cases

W = writer
H = {"acc": "val-core/math500/acc/mean@1"}


def labels_rb(spec: Spec, seed: int, reached: int, planned: int, onset: int) -> dict:
    lo, hi = window(simulate(spec, seed, reached, planned), onset)
    return rollback(lo, hi, onset)


def window(run: Run, onset: int) -> tuple[int, int]:
    xs, ys, sd = run.clean
    best = ys.max()
    good = [int(x) for x, y in zip(xs, ys, strict=True) if y >= best - sd]
    return good[0], max(x for x in good if x <= onset)


def C(name, spec, wr, seed, steps, labels, tags, why):
    if callable(labels):
        reached, planned = steps if isinstance(steps, tuple) else (steps, steps)
        labels = labels(spec, seed, reached, planned)
    return Case(name, spec, wr, seed, steps, labels, tags, why)


def rb(onset: int):
    return lambda spec, seed, reached, planned: labels_rb(spec, seed, reached, planned, onset)


DPO_KEYS = lambda acc, marg, chosen: {  # noqa: E731
    "rewards/accuracies": (acc, -0.03), "rewards/margins": (marg, 0.12), "rewards/chosen": (chosen, -0.08),
    "rewards/rejected": ({k: v - marg.get(k, list(marg.values())[-1]) for k, v in chosen.items()}, -0.08),
    "logps/chosen": ({0: -210, 10_000: -230}, 0.02), "logps/rejected": ({0: -215, 10_000: -260}, 0.02)}

CASES = [
    # ------------------------------------------------------------------------------------------ healthy lookalikes
    C("ok-std-shrinks-easy-mastered-eval-rises-trl020-state",
      Spec(reward={0: 0.35, 300: 0.72, 600: 0.83}, evl={0: 0.31, 300: 0.44, 600: 0.52}, eval_n=1000, eval_every=50,
           zero_std={0: 0.2, 300: 0.45, 600: 0.58}, length={0: 380, 600: 520}, entropy={0: 0.55, 600: 0.38},
           log_every=10, gnorm={0: 0.12}),
      W(w_trl_state)(TRL_GRPO, "eval_reward", 100), 1101, (600, 1500), HEALTHY,
      "trl trl_state checkpoints grpo reward_std zero_std lookalike",
      """TRL 0.20 GRPOTrainer, trainer_state.json with checkpoint-400/500/600, step 600 of 1500. reward_std shrinks
      from 0.48 to ~0.37 and frac_reward_zero_std climbs 0.2 -> ~0.58: the policy solves the easy prompts in every
      rollout, so those groups carry no gradient. But the train reward still climbs (0.35 -> ~0.83) and eval_reward on
      1000 held-out problems (sd ~0.016) rises 0.31 -> ~0.52 without flattening. Signal is thinning, not gone:
      continue."""),
    C("ok-batch-doubled-at-resume-noise-halves-verl-jsonl",
      Spec(reward={0: 0.22, 300: 0.45, 700: 0.58}, evl={0: 0.25, 300: 0.38, 700: 0.47}, eval_at0=True, eval_every=25,
           prompts={0: 32, 299: 32, 300: 128}, kl={0: 0.0, 700: 0.012}, length={0: 600, 700: 820},
           entropy={0: 0.45, 700: 0.36}, resumes=[(312, 300)]),
      W(w_verl_jsonl)(H["acc"]), 1102, (700, 1200), HEALTHY,
      "verl verl_jsonl grpo batch_size resume noise lookalike",
      """verl file logger (overwritten on restart, so no duplicates), GRPO, step 700 of 1200. The job crashed at 312
      and resumed from global_step_300 with data.train_batch_size raised 32 -> 128 prompts: from 300 on the batch-mean
      score is about half as noisy, so the curve looks like it suddenly 'settled'. The level is continuous across the
      change and keeps rising (0.22 -> ~0.58); val-core/math500/acc/mean@1 (500 problems every 25) 0.25 -> ~0.47, still
      rising. Continue."""),
    C("ok-reward-logged-every-50-custom-mlflow-files",
      Spec(reward={0: 0.18, 800: 0.51, 1400: 0.6}, log_every=50, first=50, prompts={0: 256}, length={0: 300},
           kl={0: 0.0, 1400: 0.03}, entropy=None),
      W(w_mlflow_files)(PLAIN, "eval_acc", "grpo-custom-loop"), 1103, (1400, 3000), HEALTHY,
      "custom mlflow_files sparse_logging lookalike",
      """Custom GRPO loop logging to an MLflow file store only every 50 steps (28 points over 1400 of 3000 steps, no
      held-out eval). Each point is a 256-prompt batch mean (sd ~0.03). The reward rises 0.18 -> ~0.6 and the last
      600 steps still gain ~0.09; the sparse points look jumpy but the trend is clear. Continue."""),
    C("ok-preempted-six-short-resumes-overlap-hf-tb",
      Spec(reward={0: 0.3, 900: 0.62}, evl={0: 0.33, 900: 0.5}, eval_n=800, eval_every=100, log_every=5,
           resumes=[(140, 100), (265, 250), (330, 300), (430, 400), (520, 500), (690, 650)],
           length={0: 450, 900: 560}, entropy={0: 0.5, 900: 0.42}),
      W(w_tb)(TRL_GRPO, "train/", "eval/reward", "runs/Nov20_09-14-02_gpu-node-3"), 1104, (900, 2000), HEALTHY,
      "trl tensorboard grpo resume duplicates preemption lookalike",
      """TRL GRPO on a preemptible queue, HF TensorBoard folder with seven event files: six preemptions, each resumed
      from the last checkpoint (save_steps 50), so 15-40 steps are logged twice with fresh rollouts. Read by the newest
      wall time the reward rises 0.3 -> ~0.62 and eval/reward (800 problems every 100, sd ~0.018) 0.33 -> ~0.5,
      no step of damage at any resume. Step 900 of 2000: continue."""),
    C("ok-kl-estimator-k1-to-k3-at-resume-openrlhf-tb",
      Spec(reward={0: 0.26, 800: 0.55}, evl={0: 0.3, 800: 0.46}, eval_every=40, eval_n=600,
           kl={0: 0.0, 399: 0.045, 400: 0.012, 800: 0.022}, length={0: 700, 800: 900}, entropy={0: 0.7, 800: 0.55}),
      W(w_tb)(ORLHF, "train/", "eval/eval_math_pass1", "grpo_qwen7b_math"), 1105, (800, 1600), HEALTHY,
      "openrlhf tensorboard grpo kl_estimator lookalike",
      """OpenRLHF GRPO, TensorBoard, step 800 of 1600. At 400 the run was restarted with --kl_estimator k3 instead
      of k1: train/kl falls from ~0.045 to ~0.012 in one step and then grows more slowly. Only the estimator changed
      (k3 is the low-variance non-negative estimator and reads lower); reward (0.26 -> ~0.55), eval_math_pass1 (600
      problems every 40) 0.30 -> ~0.46, length and entropy run on without a break. Continue."""),
    C("ok-ppo-value-head-warmup-huge-early-vloss-trl-state",
      Spec(reward=None, gnorm={0: 0.8}, entropy=None, length={0: 180},
           extra={"objective/rlhf_reward": ({0: -0.4, 100: -0.3, 700: 1.4}, -0.09),
                  "objective/scores": ({0: -0.3, 100: -0.2, 700: 1.75}, -0.1),
                  "objective/kl": ({0: 0.0, 700: 5.8}, 0.08), "objective/non_score_reward": ({0: 0, 700: -0.29}, 0.08),
                  "objective/entropy": ({0: 62, 700: 55}, 0.03), "loss/value_avg": ({0: 48.0, 60: 4.0, 150: 0.6,
                                                                                      700: 0.25}, 0.15),
                  "loss/policy_avg": ({0: -0.01}, -0.004), "policy/approxkl_avg": ({0: 0.004}, 0.3),
                  "policy/clipfrac_avg": ({0: 0.03}, 0.2), "val/ratio": ({0: 1.0}, -0.004), "eps": ({0: 7}, 0.05),
                  "lr": ({0: 3e-6, 700: 2.2e-6}, 0.0)}),
      W(w_trl_state)({"lr": "lr"}, "eval_objective/scores", 100), 1106, (700, 2000), HEALTHY,
      "trl trl_state ppo value_head warmup lookalike",
      """TRL PPOTrainer (v0.12+, trainer_state.json, logs every update), step 700 of 2000. A freshly initialised
      value head gives loss/value_avg ~48 at the start; it falls to ~0.6 by step 150 and ~0.25 now, with no other
      damage: objective/rlhf_reward climbs -0.4 -> ~1.4, objective/scores -0.3 -> ~1.75, objective/kl grows smoothly
      to ~6, approxkl and clipfrac stay small, val/ratio ~1. Critic warm-up, not divergence: continue."""),
    C("ok-dpo-label-noise-acc-near-06-eval-loss-falls-trl-console",
      Spec(reward=None, log_every=10, eval_every=100, entropy=None, gnorm={0: 6.0}, lr={0: 5e-7},
           extra={"loss": ({0: 0.693, 300: 0.655, 900: 0.64}, -0.012),
                  **DPO_KEYS({0: 0.5, 200: 0.59, 900: 0.62}, {0: 0.0, 300: 0.28, 900: 0.42}, {0: 0.0, 900: -0.35})},
           eval_extra={"eval_loss": ({0: 0.693, 300: 0.662, 900: 0.641}, 0.002),
                       "eval_rewards/accuracies": ({0: 0.5, 300: 0.6, 900: 0.625}, 0.008),
                       "eval_rewards/margins": ({0: 0.0, 900: 0.41}, 0.01)}),
      W(w_trl_console)(TRL_OWN, "eval_loss"), 1107, (900, 1950), HEALTHY,
      "trl trl_console dpo label_noise lookalike",
      """TRL DPOTrainer console log (tqdm lines and logged dicts), step 900 of 1950 (one epoch). The preference data
      is crowd-labelled with ~35% disagreement, so rewards/accuracies levels near 0.6 and the loss stays near 0.64
      instead of falling toward 0.3. That is the data's ceiling, not a stall: eval_loss still falls (0.662 at 300,
      ~0.641 now), eval margins keep widening, chosen rewards drift only mildly negative. Continue."""),
    C("ok-straggler-node-step-time-doubles-nemo-tb",
      Spec(reward={0: 0.31, 450: 0.6}, evl={0: 0.36, 450: 0.55}, eval_every=25, eval_at0=True, eval_n=500,
           kl={0: 0.0, 450: 0.004}, length={0: 520, 450: 640},
           extra={"timing/train/total_step_time": ({0: 41, 220: 42, 230: 83, 450: 86}, 0.04),
                  "timing/train/generation": ({0: 25, 220: 26, 230: 67, 450: 69}, 0.05),
                  "ray/node.1.gpu.0.util": ({0: 0.93, 220: 0.92, 230: 0.41, 450: 0.4}, 0.05),
                  "ray/node.0.gpu.0.util": ({0: 0.94, 450: 0.93}, 0.02),
                  "train/token_mult_prob_error": ({0: 1.004, 450: 1.005}, 0.001)}),
      W(w_tb)(NEMO, "", "validation/accuracy", "exp_003/tensorboard"), 1108, (450, 1000), HEALTHY,
      "nemo_rl tensorboard grpo multinode straggler gpu lookalike",
      """NeMo-RL GRPO on two nodes, TensorBoard, step 450 of 1000. From step 230 node 1's GPUs drop to ~40% and
      timing/train/total_step_time doubles (41 -> ~85 s, all in generation): a straggler node (thermal throttling or
      a slow NIC) makes the run slower, not worse. train/reward 0.31 -> ~0.6, validation/accuracy (500 problems every
      25) 0.36 -> ~0.55, token_mult_prob_error ~1.005. Continue (and fix the node), not stop."""),
    C("ok-eval-only-dataset-key-aime-noisy-verl-console",
      Spec(reward={0: 0.12, 500: 0.36}, evl={0: 0.1, 500: 0.2}, eval_n=480, eval_every=20, eval_at0=True,
           length={0: 2600, 500: 4100}, clip={0: 0.02, 500: 0.05}, entropy={0: 0.42, 500: 0.36},
           kl={0: 0.0, 500: 0.006}),
      W(w_verl_console)("val-core/aime24/acc/mean@16"), 1109, (500, 1000), HEALTHY,
      "verl verl_console dapo eval_named_by_dataset aime lookalike",
      """verl console (Ray-prefixed, NumPy-2 np.float64 values), DAPO-style run, step 500 of 1000. The only held-out
      metric is val-core/aime24/acc/mean@16 (30 problems x 16 samples, sd ~0.015 at this level, but the items are few
      so it jumps): 0.10 -> ~0.20. critic/score/mean 0.12 -> ~0.36, lengths grow 2600 -> ~4100 with clip_ratio still
      ~0.05, entropy declines slowly. Continue."""),
    C("ok-group-size-8-to-16-noise-drops-wandb-csv",
      Spec(reward={0: 0.4, 600: 0.66}, evl={0: 0.42, 600: 0.58}, eval_every=50, eval_n=1319, log_every=2,
           prompts={0: 16, 349: 16, 350: 32}, length={0: 230, 600: 260}),
      W(w_wandb_csv)("qwen2.5-1.5b-gsm8k-g16", {"train_reward.csv": ("reward", "train/reward"),
                                                  "eval_reward.csv": ("eval", "eval/reward"),
                                                  "completion_length.csv": ("length",
                                                                            "train/completions/mean_length")}),
      1210, (600, 1000), HEALTHY, "trl wandb_csv grpo group_size noise lookalike",
      """W&B panel CSV exports (Step, '<run> - train/reward', __MIN/__MAX) of a TRL GRPO run on GSM8K, step 600 of
      1000. At 350 num_generations went 8 -> 16 with the same prompts per batch, so more rollouts per batch and the
      band narrows visibly. The level is unchanged at the switch and keeps rising (0.4 -> ~0.66); eval/reward on the
      1319 test problems (sd ~0.014) 0.42 -> ~0.58. Continue."""),
    # ------------------------------------------------------------------------------------------- rollbacks
    C("bad-slow-train-decline-eval-flat-then-drops-hf-tb",
      Spec(reward={0: 0.3, 400: 0.61, 1000: 0.52}, evl={0: 0.35, 380: 0.52, 700: 0.52, 1000: 0.43}, eval_n=1000,
           eval_every=50, log_every=10, length={0: 420, 400: 500, 1000: 380}, entropy={0: 0.5, 400: 0.4, 1000: 0.22}),
      W(w_tb)(TRL_GRPO, "train/", "eval/reward", "runs/Nov18_22-40-11_node-a"), 1111, (1000, 1500), rb(700),
      "trl tensorboard grpo slow_decline eval_lag",
      """TRL GRPO, TensorBoard, step 1000 of 1500. train/reward peaks ~0.61 at 400 and slides slowly to ~0.52 as
      entropy falls 0.4 -> 0.22; for 300 steps eval/reward (1000 problems, sd ~0.016) holds its best ~0.52, which is
      why nobody stopped it; from 700 it falls to ~0.43. The held-out score is the one to keep: restore a checkpoint
      between where eval first reached ~0.52 and 700, the newest still at the best before it broke."""),
    C("bad-eos-lost-lengths-to-cap-late-verl-console",
      Spec(reward={0: 0.3, 450: 0.62, 520: 0.62, 640: 0.41}, evl={0: 0.32, 450: 0.55, 520: 0.55, 640: 0.38},
           eval_at0=True, eval_every=20, length={0: 900, 500: 1300, 560: 2800, 640: 4000},
           clip={0: 0.01, 510: 0.02, 560: 0.45, 640: 0.9}, entropy={0: 0.5, 510: 0.44, 640: 0.58}),
      W(w_verl_console)(H["acc"]), 1112, (640, 1000), rb(520),
      "verl verl_console grpo truncation eos length_explosion",
      """verl console log, step 640 of 1000. Healthy until ~510 (score 0.62, MATH-500 val ~0.55, lengths ~1300).
      Then the policy stops emitting EOS: response_length/mean runs to the 4096 cap, response_length/clip_ratio 0.02
      -> ~0.9, entropy rises, and the truncated answers score zero, so score and val fall to ~0.4. Restore the newest
      checkpoint at or before ~520 (window from where val first reached its best)."""),
    C("bad-lr-100x-oscillates-from-start-trl-console",
      Spec(reward={0: 0.34, 20: 0.3, 60: 0.18, 150: 0.1}, evl={0: 0.38, 20: 0.34, 60: 0.2, 150: 0.12}, eval_at0=True,
           eval_every=25, eval_n=500, log_every=5, first=5, lr={0: 1e-4, 150: 9.8e-5}, gnorm={0: 3.0, 150: 9.0},
           length={0: 300, 60: 140, 150: 90}, entropy={0: 0.6, 40: 1.3, 150: 2.4},
           extra={"loss": ({0: 0.0}, -0.35)}),
      W(w_trl_console)(TRL_GRPO, "eval_reward"), 1213, (150, 1000), dict(accept=["rollback"], preferred="rollback",
                                                                          rollback_window=[0, 0], onset_step=5),
      "trl trl_console grpo learning_rate oscillation instability",
      """TRL GRPO console, step 150 of 1000, learning_rate 1e-4 (meant 1e-6). From the first logged steps the loss
      swings +-0.5, grad_norm 3-30, entropy climbs 0.6 -> 2.4, lengths shrink; reward falls 0.34 -> ~0.1 in wide
      oscillations and eval_reward (500 problems) from 0.38 at step 0 to ~0.12. Nothing after step 0 was as good as
      the starting model: go back to the base weights (step 0) and fix the LR."""),
    C("bad-simpo-margin-blowup-eval-falls-trl-cpo-state",
      Spec(reward=None, log_every=10, eval_every=100, entropy=None, gnorm={0: 8.0, 500: 25.0}, lr={0: 8e-7},
           extra={"loss": ({0: 1.1, 300: 0.55, 900: 0.08}, -0.02),
                  "rewards/accuracies": ({0: 0.55, 300: 0.78, 900: 0.97}, -0.015),
                  "rewards/margins": ({0: 0.1, 300: 1.4, 900: 6.5}, 0.06),
                  "rewards/chosen": ({0: -1.6, 300: -1.9, 900: -4.8}, 0.05),
                  "rewards/rejected": ({0: -1.7, 300: -3.3, 900: -11.3}, 0.05),
                  "logps/chosen": ({0: -0.8, 300: -0.95, 900: -2.4}, 0.04),
                  "logps/rejected": ({0: -0.85, 300: -1.65, 900: -5.6}, 0.04), "nll_loss": ({0: 0.8, 900: 2.3}, 0.03)},
           eval_extra={"eval_rewards/accuracies": ({0: 0.55, 300: 0.72, 400: 0.73, 900: 0.62}, 0.01),
                       "eval_loss": ({0: 1.1, 300: 0.7, 400: 0.69, 900: 1.45}, 0.01)}),
      W(w_trl_state)(TRL_OWN, "eval_rewards/accuracies", 100, 2, summary=True), 1114, (900, 900),
      dict(accept=["rollback"], preferred="rollback", rollback_window=[300, 400], onset_step=400),
      "trl trl_state simpo cpo preference overfit finished checkpoints",
      """TRL CPOTrainer with loss_type=simpo, finished (900/900, checkpoint-800/900 kept). Train margins blow up
      0.1 -> 6.5 and accuracies reach 0.97 while logps/chosen falls -0.8 -> -2.4 (likelihood of the preferred answers
      collapses too) and nll_loss triples. Held out, eval_rewards/accuracies peaks ~0.73 at 300-400 and eval_loss is
      lowest there; both are worse by 900 (0.62, 1.45). Keep the weights from 300-400, not the final ones (the saved
      checkpoints no longer cover it: restore from elsewhere or retrain to 400)."""),
    C("bad-resume-lost-optimizer-state-collapse-mlflow-db",
      Spec(reward={0: 0.28, 600: 0.57, 610: 0.3, 700: 0.33}, evl={0: 0.3, 600: 0.5, 610: 0.31, 700: 0.34},
           eval_every=50, eval_n=500, log_every=5, gnorm={0: 0.2, 600: 0.2, 605: 4.0, 640: 0.6, 700: 0.5},
           resumes=[(620, 600)], length={0: 350, 600: 420, 610: 900, 700: 700}, entropy={0: 0.5, 600: 0.43,
                                                                                      610: 1.1, 700: 0.9}),
      W(w_mlflow_db)(TRL_GRPO, "eval_reward", "grpo-qwen3b-gsm8k"), 1115, (700, 2000), rb(600),
      "trl mlflow_db grpo resume optimizer collapse",
      """TRL GRPO logged to an MLflow sqlite store (raw HF keys), step 700 of 2000. Resumed at 600 after a crash,
      but the optimizer and scheduler state files were missing: Adam restarted with empty moments at full LR, the
      first updates jumped (grad_norm ~4, entropy 0.43 -> 1.1, lengths doubled) and reward fell 0.57 -> ~0.3 with
      eval_reward 0.5 -> ~0.31. A hundred steps later it recovers only to ~0.34. Roll back to the checkpoint at 600
      (the newest step at the best) and resume with the optimizer state."""),
    C("bad-finished-eval-peaks-midway-reward-every-50-custom-jsonl",
      Spec(reward={0: 0.2, 600: 0.55, 1000: 0.6}, evl={0: 0.24, 550: 0.47, 650: 0.47, 1000: 0.4}, eval_every=100,
           eval_n=1000, log_every=50, first=50, prompts={0: 128}, length={0: 500, 1000: 800}, entropy=None),
      W(w_custom_jsonl)(PLAIN, "eval/math_acc"), 1216, (1000, 1000), rb(700),
      "custom custom_jsonl grpo finished sparse_logging eval_peak",
      """Custom loop JSONL, logs every 50 steps and evaluates every 100 on 1000 problems (sd ~0.016); finished at
      its planned 1000. The train reward keeps creeping up (0.55 -> ~0.6 after 600) but eval/math_acc peaks ~0.47 at
      600 and ends ~0.40. The run is done: keep the step-600 weights, not the final ones."""),
    C("bad-rm-clipped-reward-pinned-at-1-eval-falls-openrlhf-console",
      Spec(reward={0: 0.1, 300: 0.78, 420: 0.97, 600: 0.99}, score_sd=0.5, prompts={0: 128},
           evl={0: 0.41, 300: 0.55, 360: 0.55, 600: 0.42}, eval_every=30, eval_n=800,
           extra={"return": ({0: 0.08, 600: 0.9}, 0.05), "group_reward_std": ({0: 0.6, 300: 0.3, 450: 0.04, 600: 0.01},
                                                                             0.1)},
           kl={0: 0.0, 300: 0.05, 600: 0.24}, length={0: 300, 300: 360, 600: 610}, entropy={0: 0.7, 600: 0.45}),
      W(w_orlhf_console)("eval_helpful_pass1"), 1117, (600, 1200), rb(360),
      "openrlhf openrlhf_console reinforce reward_model reward_clip reward_hacking",
      """OpenRLHF REINFORCE++ with a reward model whose score is clipped to [-1, 1], console log, step 600 of 1200.
      The RM reward runs into the clip: 0.78 at 300, ~0.99 by 450, and group_reward_std falls to ~0.01, so the
      policy is pinned at the ceiling while KL keeps climbing (0.05 -> 0.24) and responses grow 360 -> 610 tokens.
      The held-out eval_helpful_pass1 (judge-scored, 800 prompts) peaked ~0.55 at 300-360 and falls to ~0.42. The RM
      is being over-optimised: roll back to ~360."""),
    C("bad-batch-halved-at-resume-noise-masks-decline-verl-tb",
      Spec(reward={0: 0.3, 350: 0.6, 800: 0.48}, evl={0: 0.33, 350: 0.53, 800: 0.41}, eval_every=50, eval_at0=True,
           prompts={0: 128, 299: 128, 300: 24}, resumes=[(316, 300)], length={0: 700, 800: 620},
           kl={0: 0.0, 350: 0.01, 800: 0.06}, entropy={0: 0.5, 350: 0.42, 800: 0.2}),
      W(w_tb)(VERL, "", H["acc"], "tensorboard_log/math/qwen7b_grpo"), 1118, (800, 1500), rb(400),
      "verl tensorboard grpo batch_size resume slow_decline",
      """verl TensorBoard, step 800 of 1500. Resumed at 300 on half the nodes with train_batch_size 128 -> 24 prompts,
      so critic/score/mean becomes ~2.3x noisier and its slow decline after ~350 (0.6 -> ~0.48) hides in the spread.
      KL climbs 0.01 -> 0.06 and entropy halves. val-core/math500/acc/mean@1 (500 problems every 50) says it
      plainly: best ~0.53 at 350, ~0.41 now. Roll back to ~350."""),
    # ------------------------------------------------------------------------------------------------ stops
    C("stop-clipped-reward-saturated-at-1-spread-gone-wandb-csv",
      Spec(reward={0: 0.2, 250: 0.9, 400: 0.99, 900: 0.995}, score_sd=0.05, prompts={0: 64},
           evl={0: 0.5, 300: 0.8, 400: 0.82, 900: 0.82}, eval_every=50, eval_n=1000, log_every=5, first=5,
           extra={"reward_std": ({0: 0.7, 250: 0.25, 400: 0.03, 900: 0.01}, 0.2)}),
      W(w_wandb_csv)("llama3-8b-rm-clip1", {"reward.csv": ("reward", "train/reward"),
                                            "reward_std.csv": ("reward_std", "train/reward_std"),
                                            "eval.csv": ("eval", "eval/reward")}),
      1119, (900, 2000), stop(400), "trl wandb_csv grpo reward_clip saturated zero_std",
      """W&B panel CSVs of a TRL GRPO run whose reward function is clipped to [-1, 1], step 900 of 2000. The reward
      reaches the ceiling by ~400 (0.99) and train/reward_std collapses 0.7 -> ~0.01: every completion scores 1, so
      advantages are zero. eval/reward (1000 prompts) has been flat at ~0.82 since 400. Saturated, no learning
      signal, weights as good as any: stop."""),
    C("stop-finished-lr-decays-to-zero-best-at-end-nemo-tb",
      Spec(reward={0: 0.35, 300: 0.6, 500: 0.64}, evl={0: 0.38, 300: 0.56, 460: 0.595, 500: 0.6}, eval_every=20,
           eval_at0=True, eval_n=500, lr={0: 2e-6, 10: 2e-6, 500: 0.0}, kl={0: 0, 500: 0.008}),
      W(w_tb)(NEMO, "", "validation/accuracy", "exp_001/tensorboard"), 1120, (500, 500), stop(),
      "nemo_rl tensorboard grpo finished lr_schedule best_at_end",
      """NeMo-RL GRPO, finished 500/500 with linear LR decay to exactly 0. Gains slow as the LR shrinks: the last
      100 steps add ~0.01 on validation/accuracy (500 problems), which ends at its best ~0.6. The last weights are the
      best; extending with a re-warmed LR is a new run, not more of this one: stop and keep the final weights."""),
    C("stop-lr-zero-after-resume-weights-frozen-verl-jsonl",
      Spec(reward={0: 0.25, 400: 0.52, 900: 0.52}, evl={0: 0.29, 400: 0.47, 900: 0.47}, eval_every=50, eval_at0=True,
           lr={0: 1e-6, 399: 1e-6, 400: 0.0, 900: 0.0}, kl={0: 0.0, 400: 0.02, 900: 0.02}, length={0: 500, 400: 640},
           entropy={0: 0.5, 400: 0.41}, resumes=[(410, 400)],
           extra={"actor/ppo_kl": ({0: 2e-4, 399: 2e-4, 400: 0.0}, 0.0), "actor/pg_clipfrac": ({0: 0.002, 399: 0.002,
                                                                                                400: 0.0}, 0.0)}),
      W(w_verl_jsonl)(H["acc"]), 1121, (900, 2000), stop(400),
      "verl verl_jsonl grpo resume lr_schedule frozen",
      """verl file logger, step 900 of 2000. Resumed at 400 with a scheduler that restored as finished: actor/lr is
      exactly 0 from 400 on, actor/ppo_kl and pg_clipfrac are 0, KL to the reference stops moving. The weights have
      not changed for 500 steps; score (~0.52) and val (~0.47) are flat at their best. Nothing more will come from
      this job: stop (and relaunch with a fixed schedule), the current weights are as good as any."""),
    C("stop-rloo-k2-no-signal-never-learns-trl024-state",
      Spec(reward={0: 0.04, 400: 0.045}, group=2, evl={0: 0.06, 400: 0.06}, eval_every=50, eval_n=500, log_every=10,
           zero_std={0: 0.93, 400: 0.93}, kl={0: 0, 400: 0.002}, length={0: 900}, clip={0: 0.2}),
      W(w_trl_state)(TRL_GRPO, "eval_reward", 100), 1222, (400, 1000), stop(100),
      "trl trl_state rloo no_signal hard_task zero_std",
      """TRL 0.24 RLOOTrainer (GRPO-style keys, num_generations=2), step 400 of 1000. The task is far too hard for
      the base model: reward ~0.04, frac_reward_zero_std ~0.93 (with 2 samples per prompt nearly every pair is 0/0),
      kl barely leaves 0, eval_reward on 500 problems stays ~0.06. 400 steps and no movement: there is no learning
      signal; stop (easier data or more samples per prompt)."""),
    C("conv-plateau-budget-left-custom-csv",
      Spec(reward={0: 0.33, 400: 0.7, 560: 0.72, 700: 0.72}, evl={0: 0.36, 400: 0.61, 560: 0.625, 700: 0.625},
           eval_every=20, eval_n=500, length={0: 300, 700: 340}, kl={0: 0, 700: 0.015}),
      W(w_custom_csv)(["reward", "reward_std", "response_len", "kl", "grad_norm", "lr"], "eval_acc"), 1123,
      (700, 800), converged(), "custom custom_csv grpo plateau converged",
      """Plain CSV from a custom GRPO loop (step, reward, ..., eval_acc every 20), step 700 of 800. Reward and
      eval_acc (500 problems, sd ~0.022) have been flat since ~550 (0.72 / ~0.625) after a steady rise; KL and
      lengths barely move. 100 steps remain: stopping now loses nothing (preferred), letting it finish is harmless."""),
    C("stop-eval-saturated-long-plateau-custom-jsonl",
      Spec(reward={0: 0.55, 350: 0.9, 1100: 0.91}, evl={0: 0.62, 380: 0.925, 1100: 0.925}, eval_every=50,
           eval_n=1319, log_every=5, first=5, length={0: 210, 400: 180, 1100: 175}, kl={0: 0, 400: 0.01, 1100: 0.013},
           entropy={0: 0.35, 400: 0.2, 1100: 0.18}),
      W(w_custom_jsonl)(PLAIN, "eval/gsm8k_test_acc"), 1124, (1100, 3000), stop(400),
      "custom custom_jsonl grpo saturated plateau",
      """Custom GRPO loop, flat JSONL, step 1100 of 3000. eval/gsm8k_test_acc (1319 problems, sd ~0.007) reached
      ~0.925 by 380 and has not moved for 700 steps; train reward ~0.91, entropy and KL flat. The budget left is
      large but the plateau is much longer than the rise: nothing more to gain, weights as good as any: stop."""),
]


def check(cases: list[Case]) -> None:
    for c in cases:
        planned = c.planned or c.reached
        run = simulate(c.scenario, c.seed, c.reached, planned)
        xs, ys, sd = run.clean
        ib = int(np.argmax(ys))
        src = run.evals if run.evals and "eval" in run.evals[0][2] else None
        key = "reward" if c.scenario.reward else next(iter(c.scenario.extra))
        noisy = [(s, v["eval"]) for _, s, v in src] if src else [(s, v[key]) for _, s, v in dedup(run.train)
                                                               if key in v]
        k = max(1, len(noisy) // 8)
        lv = " ".join(f"{s}:{y:.3f}" for s, y in noisy[::k])
        print(f"{c.name:62s} {c.labels['preferred']:8s} win={c.labels.get('rollback_window')} "
              f"best={int(xs[ib])}:{ys[ib]:.3f} last={int(xs[-1])}:{ys[-1]:.3f} sd={sd:.3f}")
        print(f"    noisy {'eval' if src else 'train'}: {lv}  | last noisy {noisy[-1][0]}:{noisy[-1][1]:.3f}")


def verify(runs: Path) -> None:
    """Every file parses in its own format."""
    from tensorboard.backend.event_processing.event_file_loader import LegacyEventFileLoader
    n = 0
    for p in runs.rglob("*"):
        if p.name.startswith("events.out.tfevents"):
            assert sum(1 for _ in LegacyEventFileLoader(str(p)).Load()) > 1, p
        elif p.suffix == ".json":
            json.loads(p.read_text())
        elif p.suffix == ".jsonl":
            [json.loads(x) for x in p.read_text().splitlines()]
        elif p.suffix == ".csv":
            rows = list(csv.reader(p.open()))
            assert len({len(r) for r in rows}) == 1, p
        elif p.suffix == ".db":
            assert sqlite3.connect(p).execute("select count(*) from metrics").fetchone()[0] > 0, p
        elif "metrics" in p.parts and p.is_file():
            assert all(len(x.split(" ")) == 3 for x in p.read_text().splitlines()), p
        else:
            continue
        n += 1
    print(f"verified {n} files parse")


HEADER = """# Holdout set 11: hand-built runs written by make_holdout11.py, independent of the assessor, its judges and the
# generators of holdouts 1-10. Labels: what a careful practitioner should do under DESIGN.md's decision contract.
# rollback_window is inclusive: from the first logged step whose noise-free headline (held-out eval, else train
# reward) is within one sampling sd of its best to the newest such step not after onset_step (where damage begins).
# Run `.venv/bin/python evals/holdout11/make_holdout11.py` once to write runs/ (gitignored); `--check` prints levels.
"""


def main() -> None:
    build(HERE, "make_holdout11.py", "holdout11.yaml", "h11-", "holdout11", HEADER, CASES, write_run)
    if "--check" in sys.argv:
        check(CASES)
        verify(HERE / "runs")


if __name__ == "__main__":
    main()
