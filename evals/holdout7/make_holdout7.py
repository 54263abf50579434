"""Holdout set 7: 30 hand-labelled runs, written independently of the assessor and its judges.

Run:  python evals/holdout7/make_holdout7.py      (numpy, pyyaml, tensorboard; wandb and mlflow for three runs)
It rewrites evals/holdout7/runs/ (gitignored) and evals/holdout7/holdout7.yaml.

How the set is built. Every run is a handful of curves drawn through knots, (step, level) pairs read off the story
of the run, plus AR(1) noise with one fixed seed per case. A "family" (grpo, agent, pref) fills in the signals a
case leaves out with plain healthy defaults, so each row of CASES only states what makes its run what it is.
Writers put the same curves on disk the way one framework and version does it (key spellings, prefixes, eval
rows, checkpoint folders, NaN encodings, truncated tails). Labels follow the decision contract in DESIGN.md and
were checked against the noisy curves written here (see `check()` at the bottom: `--check` prints them).

Shapes are chosen to be absent from holdouts 1-6: agentic multi-turn / tool-call runs, IPO / SimPO / ORPO
preference runs, penalty (negative) rewards, 0-10 judge scales, template collapse under a learned reward,
train/inference mismatch, DAPO filtering that hides saturation, out-of-domain forgetting, cosine warm restarts
(benign and harmful), adaptive entropy control (benign and runaway), healthy vs harmful length shrinking, a
30-step smoke test at its planned end, a 30,000-step run logged every 50 steps, live files with a torn tail.
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from holdout_kit import (  # noqa: E402  (labels, YAML and TensorBoard helpers only; no assessor code)
    HEALTHY,
    Skip,
    case_entry,
    dump_json,
    fresh_runs,
    rollback,
    stop,
    stop_or_rollback,
    tb_file,
    write_case_file,
)

T0 = 1_752_000_000.0  # wall clock of step 0 for every run (fixed, so files are reproducible where the SDK allows)


# ------------------------------------------------------------------------------------------------- curve vocabulary

@dataclass
class S:
    """A signal: knots (step, level), linearly joined, plus AR(1) noise of sd `sd` (relative when `rel`)."""
    knots: list
    sd: float = 0.0
    rho: float = 0.5
    lo: float | None = None
    hi: float | None = None
    rel: bool = False

    def at(self, rng, steps):
        ks, vs = zip(*self.knots, strict=False)
        base = np.interp(steps, ks, vs)
        e = np.zeros(len(steps))
        if self.sd:
            z = rng.normal(0, 1, len(steps))
            for i in range(len(steps)):
                e[i] = z[i] if i == 0 else self.rho * e[i - 1] + np.sqrt(1 - self.rho ** 2) * z[i]
            e *= self.sd
        v = base * (1 + e) if self.rel else base + e
        return np.clip(v, self.lo if self.lo is not None else -np.inf, self.hi if self.hi is not None else np.inf)


def K(*pairs):
    return list(zip(pairs[::2], pairs[1::2], strict=False))


@dataclass
class Run:
    steps: np.ndarray                      # logged train steps
    m: dict                                # name -> array over steps (semantic names or framework keys)
    ev: dict                               # name -> (eval steps, values)
    reached: int
    planned: int
    ckpts: list = field(default_factory=list)
    facts: dict = field(default_factory=dict)


def family_defaults(fam: str, T: int) -> dict:
    """Healthy background signals a case does not state itself."""
    if fam == "pref":
        return {"grad_norm": S(K(0, 14, T, 9), 0.25, rel=True, lo=0.5), "lr": S(K(0, 5e-7, T, 5e-7))}
    d = {"entropy": S(K(0, 0.55, T, 0.44), 0.015, lo=0.01), "len": S(K(0, 360, T, 430), 12, lo=5),
         "trunc": S(K(0, 0.02, T, 0.02), 0.008, lo=0, hi=1), "grad_norm": S(K(0, 0.2, T, 0.16), 0.3, rel=True, lo=0.01),
         "loss": S(K(0, 0.0, T, 0.0), 0.012, rho=0.1), "lr": S(K(0, 1e-6, T, 1e-6)), "clip": S(K(0, 0.0, T, 0.0))}
    if fam == "agent":
        d.update({"len": S(K(0, 700, T, 900), 25, lo=5), "step_time": S(K(0, 95, T, 120), 0.06, rel=True)})
    return d


def make(seed: int, fam: str, reached: int, planned: int, every: int, sig: dict, evals: dict | None = None,
         ckpts=(), first: int | None = None, facts: dict | None = None, derive=None) -> Run:
    """Draw one run: every signal at the logged steps, every eval at its own steps; `derive` adds coupled keys."""
    rng = np.random.default_rng(seed)
    steps = np.arange(first if first is not None else every, reached + 1, every)
    spec = {**family_defaults(fam, planned), **sig}
    m = {k: s.at(rng, steps) for k, s in spec.items() if s is not None}
    ev = {}
    for k, (s, ev_every, ev_first) in (evals or {}).items():
        es = np.arange(ev_first, reached + 1, ev_every)
        ev[k] = (es, s.at(rng, es))
    run = Run(steps, m, ev, reached, planned, sorted(ckpts), dict(facts or {}))
    if fam == "grpo" or fam == "agent":
        r = m.get("reward")
        if r is not None and "reward_std" not in m and (r.max() <= 1.0 and r.min() >= 0):
            p = np.clip(r, 0.01, 0.99)
            m["reward_std"] = np.sqrt(p * (1 - p)) * (0.92 + 0.04 * rng.normal(size=len(p)))
            if "zero_std" not in m:
                m["zero_std"] = np.clip(0.12 + 1.3 * np.abs(p - 0.5) ** 1.5 + 0.04 * rng.normal(size=len(p)), 0, 1)
        if "len" in m and "len_max" not in m:
            cap = run.facts.get("max_len", 1024)
            m["len_max"] = np.minimum(cap, m["len"] * (1.9 + 0.1 * rng.normal(size=len(steps))))
            m["len_min"] = np.maximum(3, m["len"] * (0.35 + 0.05 * rng.normal(size=len(steps))))
    if derive:
        derive(run, rng)
    return run


# ------------------------------------------------------------------------------------------------------- key maps

TRL = {"reward": "reward", "reward_std": "reward_std", "zero_std": "frac_reward_zero_std", "kl": "kl",
       "entropy": "entropy", "len": "completions/mean_length", "len_max": "completions/max_length",
       "len_min": "completions/min_length", "trunc": "completions/clipped_ratio", "clip": "clip_ratio/region_mean",
       "grad_norm": "grad_norm", "lr": "learning_rate", "loss": "loss", "step_time": "step_time"}
VERL = {"reward": "critic/score/mean", "kl": "actor/kl_loss", "entropy": "actor/entropy",
        "len": "response_length/mean", "len_max": "response_length/max", "len_min": "response_length/min",
        "trunc": "response_length/clip_ratio", "clip": "actor/pg_clipfrac", "grad_norm": "actor/grad_norm",
        "lr": "actor/lr", "loss": "actor/pg_loss", "step_time": "timing_s/step", "reward_std": None,
        "zero_std": None}
ORLHF = {"reward": "reward", "kl": "kl", "len": "response_length", "trunc": "truncated", "clip": "ppo_clip_ratio",
         "grad_norm": "actor_grad_norm", "lr": "actor_lr", "loss": "policy_loss", "reward_std": "group_reward_std",
         "entropy": None, "len_max": None, "len_min": None, "zero_std": None, "step_time": "timing/step_total"}
NEMO = {"reward": "train/reward", "kl": "train/kl_penalty", "entropy": "train/approx_entropy",
        "len": "train/mean_gen_tokens_per_sample", "len_max": "train/max_gen_tokens_per_sample",
        "trunc": "train/truncation_rate", "grad_norm": "train/grad_norm", "lr": "train/lr", "loss": "train/loss",
        "step_time": "timing/train/total_step_time", "clip": None, "len_min": None, "reward_std": None,
        "zero_std": None}


def rows(run: Run, keymap: dict, drop=()) -> list[tuple[int, dict]]:
    """[(step, {framework_key: value})] for the train rows; unmapped names pass through unchanged."""
    out = []
    for i, s in enumerate(run.steps):
        d = {}
        for k, v in run.m.items():
            key = keymap.get(k, k)
            if key is None or k in drop:
                continue
            d[key] = float(v[i])
        out.append((int(s), d))
    return out


def eval_rows(run: Run) -> dict[int, dict]:
    out: dict[int, dict] = {}
    for k, (es, vs) in run.ev.items():
        for s, v in zip(es, vs, strict=False):
            out.setdefault(int(s), {})[k] = float(v)
    return dict(sorted(out.items()))


def r4(x):
    if isinstance(x, (int, np.integer)):
        return int(x)
    return None if x is None else (x if not np.isfinite(x) else float(f"{x:.6g}"))


# ---------------------------------------------------------------------------------------------------------- writers

def w_trl_state(run: Run, folder: Path, version: str, save_every: int, keep: int | None = None, steps_per_epoch=500,
                finished=False, old_layout=False, eval_prefix="eval_", extra_ckpt_file=None):
    """HF Trainer trainer_state.json: newest checkpoint-N holds the history up to N; top level only when finished."""
    hist, evs = [], eval_rows(run)
    for s, d in rows(run, TRL):
        row = {k: r4(v) for k, v in d.items()}
        if "loss" in row and row["loss"] is not None:
            row["loss"] = round(row["loss"], 4)
        row.update(step=s, epoch=round(s / steps_per_epoch, 4))
        hist.append(row)
        if s in evs:
            er = {(eval_prefix + k if not k.startswith("eval_") else k): r4(v) for k, v in evs[s].items()}
            er.update(step=s, epoch=round(s / steps_per_epoch, 4), eval_runtime=61.2, eval_samples_per_second=8.4,
                      eval_steps_per_second=0.53)
            hist.append(er)

    def state(upto: int, final: bool):
        h = [r for r in hist if r["step"] <= upto]
        if final:
            h.append({"epoch": round(upto / steps_per_epoch, 4), "step": upto, "total_flos": 0.0,
                      "train_loss": 0.0123, "train_runtime": 51234.5, "train_samples_per_second": 1.1,
                      "train_steps_per_second": 0.02})
        st = {"best_metric": None, "best_model_checkpoint": None, "epoch": round(upto / steps_per_epoch, 4),
              "eval_steps": run.facts.get("eval_steps"), "global_step": upto, "is_hyper_param_search": False,
              "is_local_process_zero": True, "is_world_process_zero": True, "log_history": h,
              "logging_steps": int(run.steps[1] - run.steps[0]), "max_steps": run.planned,
              "num_input_tokens_seen": 0, "num_train_epochs": max(1, round(run.planned / steps_per_epoch)),
              "save_steps": save_every, "total_flos": 0.0, "train_batch_size": 8, "trial_name": None,
              "trial_params": None}
        if not old_layout:
            st.update(best_global_step=None, stateful_callbacks={"TrainerControl": {"args": {
                "should_epoch_stop": False, "should_evaluate": False, "should_log": False, "should_save": True,
                "should_training_stop": final}, "attributes": {}}})
        else:
            for k in ("eval_steps", "logging_steps", "save_steps", "train_batch_size", "num_input_tokens_seen"):
                st.pop(k)
        return st

    saves = list(range(save_every, run.reached + 1, save_every))
    if finished and run.reached not in saves:
        saves.append(run.reached)
    kept = saves[-keep:] if keep else saves
    for s in kept:
        dump_json(folder / f"checkpoint-{s}" / "trainer_state.json", state(s, finished and s == run.reached))
        (folder / f"checkpoint-{s}" / "adapter_config.json").write_text(json.dumps(
            {"peft_type": "LORA", "r": 32, "lora_alpha": 64, "base_model_name_or_path": run.facts.get("model")}))
        if extra_ckpt_file:
            (folder / f"checkpoint-{s}" / extra_ckpt_file[0]).write_text(extra_ckpt_file[1])
    if finished:
        dump_json(folder / "trainer_state.json", state(run.reached, True))
    cfg = {"trl_version": version, "max_steps": run.planned, "save_steps": save_every,
           "save_total_limit": keep, **run.facts}
    (folder / "training_args.json").write_text(json.dumps(cfg, indent=2))


def py_repr(d: dict) -> str:
    return "{" + ", ".join(f"'{k}': {v!r}" for k, v in d.items()) + "}"


def w_trl_console(run: Run, folder: Path, steps_per_epoch=400):
    """What Trainer prints: one dict literal per log / eval call, between tqdm bars and warnings."""
    lines = ["/usr/lib/python3/site-packages/trl/trainer/grpo_trainer.py:612: UserWarning: The `max_prompt_length` "
             "is deprecated", "***** Running training *****", f"  Total optimization steps = {run.planned}"]
    evs = eval_rows(run)
    for s, d in rows(run, TRL):
        d = {k: r4(v) for k, v in d.items()}
        d["loss"] = round(d["loss"], 4)
        d["epoch"] = round(s / steps_per_epoch, 2)
        pct = int(100 * s / run.planned)
        lines.append(f"{pct:3d}%|{'█' * (pct // 10):<10}| {s}/{run.planned} [{s * 41 // 60:02d}:{s * 41 % 60:02d}"
                     f"<{(run.planned - s) * 41 // 60:02d}:00, 41.3s/it]")
        lines.append(py_repr(d))
        if s in evs:
            e = {("eval_" + k if not k.startswith("eval_") else k): r4(v) for k, v in evs[s].items()}
            e.update(eval_runtime=88.1, eval_samples_per_second=5.7, eval_steps_per_second=0.36,
                     epoch=round(s / steps_per_epoch, 2))
            lines.append(py_repr(e))
    (folder / "train.log").parent.mkdir(parents=True, exist_ok=True)
    (folder / "train.log").write_text("\n".join(lines) + "\n")


def w_hf_tb(run: Run, folder: Path, host="gpu-node-7", finished=False):
    """HF TensorBoardCallback: rewrite_logs -> train/<key>, eval/<key>; one event file under runs/<date>_<host>."""
    evs = eval_rows(run)
    events = []
    for s, d in rows(run, TRL):
        d = {"train/" + k: v for k, v in d.items()}
        d["train/epoch"] = s / 600
        events.append((T0 + 37.0 * s, s, d))
        if s in evs:
            events.append((T0 + 37.0 * s + 60, s, {"eval/" + k.removeprefix("eval_"): v for k, v in evs[s].items()}))
    if finished:
        events.append((T0 + 37.0 * run.reached + 90, run.reached, {"train/train_runtime": 37.0 * run.reached,
                                                                   "train/train_loss": 0.0071}))
    tb_file(folder / "runs" / f"Jul08_18-40-00_{host}" / f"events.out.tfevents.{int(T0)}.{host}.22817.0", events)
    for c in run.ckpts:
        (folder / f"checkpoint-{c}").mkdir(parents=True, exist_ok=True)
        (folder / f"checkpoint-{c}" / "model.safetensors.index.json").write_text("{}")


def verl_lines(run: Run, keymap=VERL):
    evs = eval_rows(run)
    out = []
    if 0 in evs:
        out.append((0, evs[0]))
    for s, d in rows(run, keymap):
        if "critic/score/mean" in d:
            d.setdefault("critic/rewards/mean", d["critic/score/mean"])
            d.setdefault("critic/advantages/mean", 0.0)
        if "timing_s/step" in d and "timing_s/gen" not in d:
            d["timing_s/gen"] = d["timing_s/step"] * 0.63
            d["timing_s/update_actor"] = d["timing_s/step"] * 0.21
        d["training/global_step"] = s
        d.update(evs.get(s, {}))
        out.append((s, d))
    return out


def verl_ckpts(run: Run, folder: Path, project: str, exp: str):
    base = folder / "checkpoints" / project / exp
    for c in run.ckpts:
        (base / f"global_step_{c}" / "actor").mkdir(parents=True, exist_ok=True)
        (base / f"global_step_{c}" / "actor" / "huggingface").mkdir(exist_ok=True)
    if run.ckpts:
        (base / "latest_checkpointed_iteration.txt").write_text(str(run.ckpts[-1]))


def w_verl_jsonl(run: Run, folder: Path, project: str, exp: str, torn_tail=False):
    """verl FileLogger (v0.6+): {"step": N, "data": {...}} per line, NaN written as null; optional torn last line."""
    path = folder / project / f"{exp}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "".join(json.dumps({"step": s, "data": {k: (None if not np.isfinite(v) else r4(v)) for k, v in d.items()}},
                              separators=(",", ":")) + "\n" for s, d in verl_lines(run))
    if torn_tail:  # the writer was mid-line when the file was copied
        last = text.rstrip("\n").rsplit("\n", 1)[-1]
        text = text[: len(text) - len(last) - 1] + last[: len(last) // 3]
    path.write_text(text)
    verl_ckpts(run, folder, project, exp)


def w_verl_console(run: Run, folder: Path, np_repr: bool, project: str, exp: str, prefix="(TaskRunner pid=2291) "):
    """verl LocalLogger: 'step:N - key:value - ...'; with NumPy 2 the values print as np.float64(...)."""
    out = [f"{prefix}Using LocalLogger is deprecated. The constructor API will change",
           "INFO 07-08 18:41:02 [__init__.py:239] Automatically detected platform cuda."]
    for i, (s, d) in enumerate(verl_lines(run)):
        fmt = (lambda v: f"np.int64({v})" if isinstance(v, int) else f"np.float64({r4(v)!r})") if np_repr else (lambda v: str(v) if isinstance(v, int) else f"{v:.3f}" if abs(v) >= 1e-3 or v == 0
                                                                    else f"{v:.3e}")
        out.append(prefix + f"step:{s} - " + " - ".join(f"{k}:{fmt(v)}" for k, v in d.items()))
        if i % 17 == 5:
            out.append(f"{prefix}INFO 07-08 19:{i % 60:02d}:11 [block_pool.py:321] Successfully reset prefix cache")
    (folder / "verl_train.log").parent.mkdir(parents=True, exist_ok=True)
    (folder / "verl_train.log").write_text("\n".join(out) + "\n")
    verl_ckpts(run, folder, project, exp)


def w_verl_tb(run: Run, folder: Path, project: str, exp: str):
    events = [(T0 + 70.0 * s, s, d) for s, d in verl_lines(run)]
    tb_file(folder / "tensorboard_log" / project / exp / f"events.out.tfevents.{int(T0)}.worker-0.5123.0", events)
    verl_ckpts(run, folder, project, exp)


def w_openrlhf_tb(run: Run, folder: Path, name: str):
    evs = eval_rows(run)
    events = []
    for s, d in rows(run, ORLHF):
        events.append((T0 + 55.0 * s, s, {"train/" + k: v for k, v in d.items()}))
        if s in evs:
            events.append((T0 + 55.0 * s + 30, s, {"eval/" + k: v for k, v in evs[s].items()}))
    tb_file(folder / "tensorboard" / name / f"events.out.tfevents.{int(T0)}.ray-head.881.0", events)
    for c in run.ckpts:
        (folder / "ckpt" / f"global_step{c}").mkdir(parents=True, exist_ok=True)


def w_openrlhf_console(run: Run, folder: Path):
    evs = eval_rows(run)
    out = ["[2025-07-08 18:40:01,221] [INFO] [real_accelerator.py:254:get_accelerator] Setting ds_accelerator to cuda"]
    for s, d in rows(run, ORLHF):
        d = {k: r4(v) for k, v in d.items()}
        out.append(f"✨ Global step {s}: {py_repr(d)}")
        if s in evs:
            out.append(f"Evaluation completed in 47.30 seconds, global_step {s}, eval_metrics: "
                       f"{py_repr({k: r4(v) for k, v in evs[s].items()})}")
    (folder / "train.log").parent.mkdir(parents=True, exist_ok=True)
    (folder / "train.log").write_text("\n".join(out) + "\n")
    for c in run.ckpts:
        (folder / "ckpt" / f"global_step{c}").mkdir(parents=True, exist_ok=True)


def w_nemo_tb(run: Run, folder: Path, exp="exp_002"):
    evs = eval_rows(run)
    events = []
    for s, d in rows(run, NEMO):
        d = dict(d)
        if s in evs:
            d.update(evs[s])
        events.append((T0 + 48.0 * s, s, d))
    tb_file(folder / "logs" / exp / "tensorboard" / f"events.out.tfevents.{int(T0)}.nemo-0.301.0", events)
    for c in run.ckpts:
        (folder / "results" / "grpo" / f"step_{c}" / "policy").mkdir(parents=True, exist_ok=True)


def w_wandb(run: Run, folder: Path, project: str, name: str, run_id: str, keymap: dict, config: dict,
            step_key="train/global_step"):
    """A real W&B offline run folder, written with the wandb SDK (skipped when it is missing)."""
    try:
        os.environ.update(WANDB_MODE="offline", WANDB_SILENT="true", WANDB_DISABLE_GIT="true")
        import wandb
    except Exception as exc:  # pragma: no cover
        raise Skip(f"wandb unavailable: {exc}") from exc
    folder.mkdir(parents=True, exist_ok=True)
    wr = wandb.init(project=project, name=name, id=run_id, dir=str(folder), config=config, mode="offline",
                    settings=wandb.Settings(x_disable_stats=True, console="off", save_code=False))
    wr.define_metric(step_key)
    wr.define_metric("*", step_metric=step_key, step_sync=True)
    evs = eval_rows(run)
    for s, d in rows(run, keymap):
        payload = {"train/" + k: v for k, v in d.items()}
        payload[step_key] = s
        wr.log(payload)
        if s in evs:
            ev = {"eval/" + k.removeprefix("eval_"): v for k, v in evs[s].items()}
            ev[step_key] = s
            wr.log(ev)
    wr.finish()


def w_mlflow_db(run: Run, folder: Path, exp_name: str, run_name: str, params: dict):
    """MLflow SQL store (the default since 3.7), as the HF MLflowCallback fills it: raw Trainer keys, no prefix."""
    try:
        from mlflow.entities import Metric, Param
        from mlflow.tracking import MlflowClient
    except Exception as exc:  # pragma: no cover
        raise Skip(f"mlflow unavailable: {exc}") from exc
    folder.mkdir(parents=True, exist_ok=True)
    client = MlflowClient(tracking_uri=f"sqlite:///{folder / 'mlflow.db'}")
    eid = client.create_experiment(exp_name)
    r = client.create_run(eid, start_time=int(T0 * 1000), tags={"mlflow.runName": run_name}, run_name=run_name)
    rid = r.info.run_id
    client.log_batch(rid, params=[Param(k, str(v)) for k, v in params.items()])
    batch = []
    evs = eval_rows(run)
    for s, d in rows(run, TRL):
        ts = int((T0 + 9.0 * s) * 1000)
        batch += [Metric(k, float(v), ts, s) for k, v in d.items()]
        if s in evs:
            batch += [Metric(k if k.startswith("eval_") else "eval_" + k, float(v), ts + 1, s)
                      for k, v in evs[s].items()]
        if len(batch) > 800:
            client.log_batch(rid, metrics=batch)
            batch = []
    if batch:
        client.log_batch(rid, metrics=batch)


def w_trackio(run: Run, folder: Path, project: str, run_name: str, config: dict):
    """Trackio's per-project SQLite file, as TRL report_to='trackio' fills it (train/, eval/ keys; NaN as a string)."""
    folder.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(folder / f"{project}.db")
    db.executescript("""
      CREATE TABLE metrics (id INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT, timestamp TEXT, run_name TEXT,
                            step INTEGER, metrics TEXT);
      CREATE TABLE configs (id INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT, run_name TEXT, config TEXT,
                            created_at TEXT);
      CREATE TABLE system_metrics (id INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT, timestamp TEXT,
                                   run_name TEXT, metrics TEXT);""")
    rid = "r-" + run_name[-6:]
    db.execute("INSERT INTO configs (run_id, run_name, config, created_at) VALUES (?,?,?,?)",
               (rid, run_name, json.dumps(config), "2025-07-08T18:40:00"))

    def enc(v):
        return "NaN" if np.isnan(v) else ("Infinity" if v == np.inf else v)

    evs = eval_rows(run)
    for s, d in rows(run, TRL):
        ts = f"2025-07-08T{18 + s // 900:02d}:{(s // 15) % 60:02d}:{s % 60:02d}"
        payload = {"train/" + k: enc(v) for k, v in d.items()}
        payload["train/global_step"] = s
        db.execute("INSERT INTO metrics (run_id, timestamp, run_name, step, metrics) VALUES (?,?,?,?,?)",
                   (rid, ts, run_name, s, json.dumps(payload)))
        if s in evs:
            payload = {"eval/" + k.removeprefix("eval_"): enc(v) for k, v in evs[s].items()}
            db.execute("INSERT INTO metrics (run_id, timestamp, run_name, step, metrics) VALUES (?,?,?,?,?)",
                       (rid, ts, run_name, s, json.dumps(payload)))
    db.commit()
    db.close()


def w_plain_jsonl(run: Run, folder: Path, torn_tail=True):
    """A hand-written GRPO loop: one JSON object per line, split train/val, the last line cut mid-write."""
    evs = eval_rows(run)
    names = {"reward": "mean_reward", "entropy": "token_entropy", "len": "avg_response_length", "loss": "loss",
             "grad_norm": "gradient_norm", "reward_std": "reward_std", "lr": "lr", "trunc": "truncated_fraction"}
    lines = []
    for s, d in rows(run, {}):
        obj = {"step": s, "split": "train"}
        obj.update({names[k]: r4(v) for k, v in d.items() if k in names})
        lines.append(json.dumps(obj))
        if s in evs:
            lines.append(json.dumps({"step": s, "split": "val", **{k: r4(v) for k, v in evs[s].items()}}))
    text = "\n".join(lines) + "\n"
    if torn_tail:
        text = text.rstrip("\n")
        text = text[: len(text) - len(lines[-1]) // 2]
    (folder / "metrics.jsonl").parent.mkdir(parents=True, exist_ok=True)
    (folder / "metrics.jsonl").write_text(text)
    (folder / "config.json").write_text(json.dumps({"total_steps": run.planned, "group_size": 8, **run.facts}))


# ------------------------------------------------------------------------------------------------ coupled signals

def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def d_copy(*pairs):
    def f(run, rng):
        for src, dst in zip(pairs[::2], pairs[1::2], strict=False):
            run.m[dst] = run.m[src].copy()
    return f


def d_chain(*fs):
    def f(run, rng):
        for g in fs:
            g(run, rng)
    return f


def d_round(*keys, lo=1):
    def f(run, rng):
        for k in keys:
            run.m[k] = np.maximum(lo, np.round(run.m[k]))
    return f


def d_turns(run, rng):
    """Multi-turn rollouts: turns = 1 + tool calls (+ the odd extra turn); max over the batch, min 1."""
    tc = run.m["tool_call_counts/mean"]
    run.m["num_turns/mean"] = 1 + 0.97 * tc + 0.05 * rng.normal(size=len(tc))
    run.m.setdefault("num_turns/max", np.minimum(run.facts.get("max_turns", 10), np.round(1 + 2.6 * tc + 1)))
    run.m["num_turns/min"] = np.ones(len(tc))
    run.m["tool_call_counts/max"] = np.round(run.m["num_turns/max"] - 1)


def d_components(acc: str, other: str, w: float):
    """TRL total reward = accuracy component + w * another component."""
    def f(run, rng):
        run.m["reward"] = run.m[acc] + w * run.m[other]
        run.m[acc.replace("/mean", "/std")] = np.sqrt(np.clip(run.m[acc] * (1 - run.m[acc]), 0, None))
    return f


def d_restarts(period: int, lr_max: float, bump: float, kl_bump: float, sticky_from: int | None = None):
    """Cosine schedule with warm restarts: LR, and a clip-ratio / KL bump after each restart."""
    def f(run, rng):
        t = run.steps.astype(float)
        ph = (t % period) / period
        run.m["lr"] = lr_max * (0.05 + 0.95 * 0.5 * (1 + np.cos(np.pi * ph)))
        since = t % period
        decay = np.where(t >= period, np.exp(-since / 25.0), 0.0)
        run.m["clip"] = run.m["clip"] + bump * decay
        run.m["kl"] = run.m["kl"] + kl_bump * decay
        if sticky_from is not None:
            late = t >= sticky_from
            run.m["clip"] = np.where(late, np.maximum(run.m["clip"], 0.14 + 0.01 * rng.normal(size=len(t))),
                                     run.m["clip"])
    return f


def d_ipo(beta=0.1):
    """DPO loss_type='ipo': loss = (h - 1/(2 beta))^2 averaged over pairs, h the log-ratio margin; logged rewards
    are beta * log-ratios, so they are small while the loss starts near 25."""
    tau = 1 / (2 * beta)

    def f(run, rng):
        m, c = run.m.pop("m"), run.m.pop("c")
        run.m["loss"] = (tau - m) ** 2 + (0.8 + 0.9 * m) ** 2
        run.m["rewards/chosen"] = beta * c
        run.m["rewards/rejected"] = beta * (c - m)
        run.m["rewards/margins"] = beta * m
        run.m["logps/chosen"] = -212.0 + c
        run.m["logps/rejected"] = -238.5 + c - m
        run.m["logits/chosen"] = -2.61 + 0.05 * c
        run.m["logits/rejected"] = -2.58 + 0.05 * (c - m)
        es, em = run.ev.pop("eval_m")
        run.ev["eval_loss"] = (es, (tau - em) ** 2 + (0.9 + 0.9 * em) ** 2)
        run.ev["eval_rewards/margins"] = (es, beta * em)
    return f


def d_simpo(beta=2.0, gamma=1.0):
    """CPOTrainer loss_type='simpo': length-normalised log-probs, rewards = beta * logps, nll_loss logged."""
    def f(run, rng):
        lc, lr_ = run.m["logps/chosen"], run.m["logps/rejected"]
        run.m["rewards/chosen"], run.m["rewards/rejected"] = beta * lc, beta * lr_
        run.m["rewards/margins"] = beta * (lc - lr_)
        z = beta * (lc - lr_) - gamma
        run.m["loss"] = np.log1p(np.exp(-z)) * (1.15 + 0.05 * rng.normal(size=len(z)))
        run.m["nll_loss"] = -lc * (1.02 + 0.01 * rng.normal(size=len(z)))
        run.m["logits/chosen"] = -1.9 + 0.1 * lc
        run.m["logits/rejected"] = -1.85 + 0.1 * lr_
    return f


def d_orpo(beta=0.1):
    def f(run, rng):
        lc, lr_ = run.m["logps/chosen"], run.m["logps/rejected"]
        lor = (lc - np.log1p(-np.exp(lc))) - (lr_ - np.log1p(-np.exp(lr_)))
        run.m["log_odds_ratio"] = np.log(sigmoid(lor))
        run.m["log_odds_chosen"] = lor
        run.m["rewards/chosen"], run.m["rewards/rejected"] = beta * lc, beta * lr_
        run.m["rewards/margins"] = beta * (lc - lr_)
        run.m["nll_loss"] = -lc
        run.m["loss"] = -lc - beta * np.log(sigmoid(lor))
    return f


def d_entropy_ctrl(run, rng):
    """TRL 1.9 adaptive entropy bonus: loss = policy_loss - entropy_coef * entropy."""
    run.m["loss"] = run.m["policy_loss"] - run.m["entropy_coef"] * run.m["entropy"]
    run.m["clip_ratio/low_mean"] = run.m["clip"] * 0.45
    run.m["clip_ratio/high_mean"] = run.m["clip"] * 0.55


def d_sampling(run, rng):
    d = run.m["sampling/sampling_logp_difference/mean"]
    run.m["sampling/sampling_logp_difference/max"] = d * (70 + 8 * rng.normal(size=len(d)))
    run.m["clip_ratio/low_mean"] = run.m["clip"] * 0.4
    run.m["clip_ratio/high_mean"] = run.m["clip"] * 0.6


def d_nan_from(step: int, keys: tuple):
    def f(run, rng):
        late = run.steps >= step
        for k in keys:
            run.m[k] = np.where(late, np.nan, run.m[k])
    return f


def d_verl_extremes(run, rng):
    r = run.m["reward"]
    run.m["critic/score/max"] = np.ones(len(r))
    run.m["critic/score/min"] = np.zeros(len(r))


# ------------------------------------------------------------------------------------------------------ the table

@dataclass
class Case:
    name: str
    build: object           # () -> Run
    write: object           # (run, folder) -> None
    labels: dict
    tags: str
    why: str


def every(n, first=None):
    return n, (first if first is not None else n)


def E(s: S, n: int, first: int | None = None):
    return (s, n, first if first is not None else n)


C = []


def case(name, labels, tags, why, build, write):
    C.append(Case(name, build, write, labels, tags, why))


FINISHED = dict(accept=["continue"], preferred="continue", healthy=True)

# ---------------- healthy runs that look alarming -------------------------------------------------------------------

case("ok-agentic-multiturn-turns-grow-verl-jsonl", HEALTHY,
     "verl grpo verl_jsonl file_logger verl_0.6 agentic multi_turn tool_calls num_turns length_growth step_time_growth "
     "checkpoints lookalike",
     """verl 0.6 file logger, multi-turn search agent (GRPO, sglang tool calls), step 320 of 600. Turns per rollout
     climb 2.1 -> 3.6, tool calls 1.0 -> 2.4, responses grow 620 -> ~1350 tokens and step time almost doubles:
     alarming at a glance, but truncation stays ~3%, entropy declines slowly, KL is tiny, and both the train score
     (0.18 -> 0.52) and the validation accuracy every 20 steps (0.21 -> 0.44) are still rising. The agent is learning
     to search more; continue.""",
     lambda: make(7001, "agent", 320, 600, 1, {
         "reward": S(K(0, .18, 60, .27, 160, .41, 320, .52), .03, lo=0, hi=1),
         "tool_call_counts/mean": S(K(0, 1.0, 100, 1.5, 320, 2.4), .05, lo=0),
         "len": S(K(0, 620, 320, 1350), 30), "trunc": S(K(0, .01, 320, .035), .006, lo=0),
         "entropy": S(K(0, .58, 320, .46), .015), "kl": S(K(0, 0, 40, .002, 320, .013), .0006, lo=0),
         "step_time": S(K(0, 88, 320, 170), .05, rel=True), "clip": S(K(0, .002, 320, .003), .0005, lo=0)},
         {"val-core/searchR1_nq/acc/mean@1": E(S(K(0, .21, 160, .36, 320, .44), .01), 20, 0)},
         ckpts=range(50, 301, 50), first=1, facts={"max_len": 4096, "max_turns": 8},
         derive=d_chain(d_turns, d_verl_extremes)),
     lambda r, f: w_verl_jsonl(r, f, "search_agent", "qwen3-4b-grpo-multiturn"))

case("ok-tools-failures-fall-steptime-grows-trl027-state", HEALTHY,
     "trl grpo trainer_state trl_0.27 tools tool_failure step_time checkpoints lookalike",
     """TRL 0.27 GRPO with tools, checkpoint-450 of max_steps 1000 (history up to the newest checkpoint). Tool calls
     per sample rise 0.3 -> 1.8 and step_time more than doubles (40 -> ~95 s), and 45% of tool calls fail early on;
     but the failure fraction falls steadily to ~8%, the reward climbs 0.22 -> 0.58 and eval_reward every 50 steps
     rises with it. Slower steps are the price of an agent that now uses its tools; continue.""",
     lambda: make(7002, "grpo", 450, 1000, 10, {
         "reward": S(K(0, .22, 150, .40, 450, .58), .025, lo=0, hi=1),
         "tools/call_frequency": S(K(0, .3, 200, 1.3, 450, 1.8), .05, lo=0),
         "tools/failure_frequency": S(K(0, .45, 120, .22, 450, .08), .02, lo=0, hi=1),
         "step_time": S(K(0, 40, 450, 95), .05, rel=True), "len": S(K(0, 380, 450, 720), 15),
         "entropy": S(K(0, .62, 450, .5), .012)},
         {"eval_reward": E(S(K(0, .2, 150, .37, 450, .55), .012), 50)},
         facts={"model": "Qwen/Qwen3-1.7B", "num_generations": 8, "beta": 0.0, "max_completion_length": 2048},
         derive=d_copy("reward", "rewards/tool_answer_reward/mean")),
     lambda r, f: w_trl_state(r, f, "0.27.0", save_every=50))

case("ok-ipo-loss-scale-trl-state", HEALTHY,
     "trl dpo ipo trainer_state trl_0.20 preference loss_scale eval checkpoints save_total_limit lookalike",
     """TRL DPOTrainer with loss_type='ipo' (beta 0.1), checkpoint-800 of 1500. The IPO loss is a squared error
     around 1/(2*beta)=5, so it starts near 25 and is still ~16, nothing like DPO's ln 2; the implicit rewards are
     small and both log-ratios drift down. What matters is moving the right way: train preference accuracy 0.50 ->
     ~0.79, eval accuracy every 100 steps 0.50 -> ~0.72 and eval loss falling, all still improving with half the
     budget left; continue.""",
     lambda: make(7003, "pref", 800, 1500, 10, {
         "m": S(K(0, 0, 200, 1.2, 500, 2.1, 800, 2.6), .05),
         "c": S(K(0, 0, 800, -1.2), .05),
         "rewards/accuracies": S(K(0, .5, 200, .64, 500, .74, 800, .79), .02, hi=1)},
         {"eval_rewards/accuracies": E(S(K(0, .5, 200, .6, 500, .68, 800, .72), .008), 100),
          "eval_m": E(S(K(0, 0, 200, .9, 500, 1.6, 800, 1.9), .03), 100)},
         facts={"model": "meta-llama/Llama-3.2-3B-Instruct", "loss_type": "ipo", "beta": 0.1, "eval_steps": 100},
         derive=d_ipo(0.1)),
     lambda r, f: w_trl_state(r, f, "0.20.0", save_every=100, keep=2, steps_per_epoch=500))

case("ok-penalty-reward-toward-zero-nemo-tb", HEALTHY,
     "nemo_rl grpo tensorboard negative_reward penalty_reward validation checkpoints lookalike",
     """NeMo-RL GRPO TensorBoard, step 260 of 500, with a penalty-only reward (minus one per violated constraint),
     so train/reward is negative throughout. It climbs -3.4 -> ~-0.9, i.e. toward zero, which is improvement;
     validation/accuracy (all constraints met) rises 0.12 -> ~0.41, KL is small (0.03) and entropy declines slowly.
     Negative numbers are not a failure here; continue.""",
     lambda: make(7004, "grpo", 260, 500, 1, {
         "reward": S(K(0, -3.4, 60, -2.6, 160, -1.5, 260, -0.9), .12),
         "kl": S(K(0, 0, 260, .03), .002, lo=0), "entropy": S(K(0, .92, 260, .71), .02),
         "len": S(K(0, 540, 260, 610), 15), "trunc": S(K(0, .03, 260, .03), .006, lo=0),
         "step_time": S(K(0, 62, 260, 70), .05, rel=True),
         "train/token_mult_prob_error": S(K(0, 1.004, 260, 1.005), .0005)},
         {"validation/accuracy": E(S(K(0, .12, 130, .27, 260, .41), .012), 20),
          "validation/avg_length": E(S(K(0, 530, 260, 600), 10), 20)},
         ckpts=[100, 200], first=1),
     lambda r, f: w_nemo_tb(r, f))

case("ok-cosine-restarts-dips-openrlhf-tb", HEALTHY,
     "openrlhf grpo tensorboard openrlhf_0.10 lr_schedule cosine_restarts periodic_dip logging_every_5 checkpoints "
     "lookalike",
     """OpenRLHF TensorBoard, step 1320 of 2000, cosine schedule with warm restarts every 400 steps (actor_lr jumps
     back up at 400, 800, 1200). Each restart brings a clip-ratio/KL bump and a ~0.05 reward dip, then a recovery
     within ~50 steps to a higher level than before; the restart at 1200 has already recovered (reward ~0.62 vs
     0.61 before it) and eval pass@1 every 50 steps is at its best. Expected, transient; continue.""",
     lambda: make(7005, "grpo", 1320, 2000, 5, {
         "reward": S(K(0, .30, 400, .48, 410, .44, 440, .475, 800, .56, 810, .51, 850, .555, 1200, .61, 1210, .56,
                       1260, .605, 1320, .625), .018),
         "reward_std": S(K(0, .38, 1320, .31), .01), "kl": S(K(0, 0, 1320, .05), .002, lo=0),
         "clip": S(K(0, .03, 1320, .03), .004, lo=0), "len": S(K(0, 480, 1320, 560), 10)},
         {"eval_math_pass1": E(S(K(0, .28, 400, .41, 450, .405, 800, .47, 850, .465, 1200, .52, 1250, .515,
                                   1300, .53), .006), 50)},
         ckpts=range(200, 1201, 200), derive=d_restarts(400, 1e-6, .09, .006)),
     lambda r, f: w_openrlhf_tb(r, f, "qwen2.5-7b-grpo-math-sgdr"))

case("ok-adaptive-entropy-rises-trl19-state", HEALTHY,
     "trl grpo trainer_state trl_1.9 adaptive_entropy entropy_rises entropy_coef checkpoints lookalike",
     """TRL 1.9 GRPO with the adaptive entropy bonus (entropy_coef and policy_loss logged), checkpoint-600 of 1200.
     Entropy rises 0.28 -> ~0.46, which would read as a blow-up, but it levels off at the controller's target while
     entropy_coef settles, lengths and clip ratios stay moderate, and reward (0.30 -> 0.62) and eval reward every
     100 steps keep rising. The controller is doing its job; continue.""",
     lambda: make(7006, "grpo", 600, 1200, 10, {
         "reward": S(K(0, .30, 200, .45, 600, .62), .02, lo=0, hi=1),
         "entropy": S(K(0, .28, 150, .40, 250, .45, 600, .46), .012),
         "entropy_coef": S(K(0, .001, 120, .006, 250, .004, 600, .0035), .0003, lo=0),
         "policy_loss": S(K(0, 0, 600, 0), .01), "clip": S(K(0, .012, 600, .02), .003, lo=0),
         "len": S(K(0, 420, 600, 520), 12)},
         {"eval_reward": E(S(K(0, .29, 200, .42, 600, .57), .012), 100)},
         facts={"model": "Qwen/Qwen3-4B-Base", "num_iterations": 2, "beta": 0.0, "entropy_target": 0.45,
                "eval_steps": 100}, derive=d_entropy_ctrl),
     lambda r, f: w_trl_state(r, f, "1.9.0", save_every=100, keep=3, steps_per_epoch=300,
                              extra_ckpt_file=("entropy_ctrl_state.json", '{"entropy_coef": 0.0035}')))

case("ok-overlong-penalty-phase-verl-console", HEALTHY,
     "verl dapo verl_console numpy2_repr overlong_penalty reward_drop curriculum_phase validation lookalike",
     """verl DAPO console log (NumPy 2 np.float64(...) values), step 420 of 800. At step 250 the overlong-penalty
     phase switches on: the train score drops 0.55 -> 0.42 in a few steps while responses shorten 2650 -> ~1950
     tokens and truncation falls. The drop is the new penalty, not lost skill: validation accuracy every 25 steps
     rises straight through it (0.29 -> ~0.34) and the score is rebuilding (~0.52). Continue.""",
     lambda: make(7007, "grpo", 420, 800, 1, {
         "reward": S(K(0, .10, 250, .55, 258, .42, 420, .52), .03),
         "len": S(K(0, 1800, 250, 2650, 262, 1950, 420, 1850), 50),
         "trunc": S(K(0, .05, 250, .16, 262, .03, 420, .02), .008, lo=0), "entropy": S(K(0, .62, 420, .50), .015),
         "kl": None, "clip": S(K(0, .004, 420, .004), .001, lo=0),
         "step_time": S(K(0, 160, 250, 230, 262, 175, 420, 170), .05, rel=True)},
         {"val-core/math_dapo/acc/mean@4": E(S(K(0, .18, 250, .29, 420, .345), .01), 25, 0)},
         first=1, facts={"max_len": 3072}, derive=d_verl_extremes),
     lambda r, f: w_verl_console(r, f, True, "dapo", "qwen2.5-7b-dapo-overlong"))

case("ok-long-30k-mlflow-every50-eval-pct", HEALTHY,
     "trl rloo mlflow mlflow_sql long_run logging_every_50 eval_percent kl slow_learner lookalike",
     """TRL RLOO (beta 0.05, so kl is logged) written to an MLflow SQL store by the HF callback with raw keys,
     step 30,000 of 40,000 logged every 50 steps; eval_accuracy is a percentage (22 -> ~41). The train reward is
     noisy and its slope has flattened to a slow creep, which can read as a plateau, but eval every 1000 steps still
     gains ~1.5 points per 5000 steps and KL grows slowly with it. Still paying with budget left; continue.""",
     lambda: make(7008, "grpo", 30000, 40000, 50, {
         "reward": S(K(0, .18, 3000, .27, 10000, .35, 20000, .41, 30000, .45), .03, lo=0, hi=1),
         "kl": S(K(0, 0, 5000, .04, 30000, .11), .004, lo=0), "entropy": S(K(0, .7, 30000, .52), .015),
         "len": S(K(0, 300, 30000, 380), 10), "clip": S(K(0, .01, 30000, .012), .003, lo=0),
         "lr": S(K(0, 5e-7, 30000, 5e-7))},
         {"eval_accuracy": E(S(K(0, 22.0, 10000, 32.5, 20000, 37.8, 30000, 41.2), .45), 1000)}),
     lambda r, f: w_mlflow_db(r, f, "rloo-qwen2.5-1.5b", "rloo-long-40k", {
         "beta": 0.05, "num_generations": 2, "max_steps": 40000, "logging_steps": 50, "eval_steps": 1000,
         "learning_rate": 5e-7, "max_completion_length": 512}))

case("ok-smoke-30-finished-verl-console", FINISHED,
     "verl grpo verl_console smoke_test short_30 finished still_rising checkpoints",
     """verl console log of a 30-step smoke test (total_training_steps=30) that reached its planned end and saved
     global_step_30. Too short to judge plateaus, but every sign is good and still moving: score 0.07 -> ~0.27,
     validation accuracy at steps 0/10/20/30 rising 0.10 -> 0.22, lengths and entropy steady. The final weights are
     the best, and extending the run is clearly worth it: continue.""",
     lambda: make(7009, "grpo", 30, 30, 1, {
         "reward": S(K(0, .07, 30, .27), .025, lo=0, hi=1), "kl": S(K(0, 0, 30, .0015), .0002, lo=0),
         "entropy": S(K(0, .61, 30, .55), .01), "len": S(K(0, 410, 30, 380), 12),
         "step_time": S(K(0, 45, 30, 45), .05, rel=True)},
         {"val-core/openai/gsm8k/acc/mean@1": E(S(K(0, .095, 30, .22), .006), 10, 0)},
         ckpts=[30], first=1, derive=d_verl_extremes),
     lambda r, f: w_verl_console(r, f, False, "smoke", "qwen2.5-0.5b-gsm8k-smoke"))

case("ok-judge-0-10-openrlhf-wandb-offline", HEALTHY,
     "openrlhf grpo wandb wandb_offline judge_reward reward_scale_0_10 kl eval lookalike",
     """OpenRLHF GRPO with an LLM judge scoring 0-10, written as a W&B offline run, step 700 of 1500. The reward
     (4.2 -> ~6.4) is far from the 0-1 range a naive reader expects and its per-group std is large (~1.5-1.9), but
     it rises steadily, KL grows moderately with it (0.09), lengths grow only mildly, and the held-out judge score
     (eval pass1, same scale) rises 4.0 -> ~6.1. Continue.""",
     lambda: make(7010, "grpo", 700, 1500, 1, {
         "reward": S(K(0, 4.2, 150, 5.0, 700, 6.4), .18), "reward_std": S(K(0, 1.9, 700, 1.5), .05),
         "kl": S(K(0, 0, 700, .09), .003, lo=0), "len": S(K(0, 310, 700, 420), 10),
         "clip": S(K(0, .02, 700, .025), .004, lo=0), "trunc": S(K(0, .01, 700, .012), .004, lo=0)},
         {"eval_arena_pass1": E(S(K(0, 4.0, 150, 4.8, 700, 6.1), .08), 50)}),
     lambda r, f: w_wandb(r, f, "openrlhf-judge", "qwen2.5-7b-grpo-judge", "h7judge010", ORLHF,
                          {"advantage_estimator": "group_norm", "init_kl_coef": 0.01, "n_samples_per_prompt": 8,
                           "max_steps": 1500, "reward": "llm_judge_0_10"}))

case("ok-still-writing-plain-jsonl", HEALTHY,
     "custom grpo plain_jsonl still_writing truncated_last_line small_batch noisy early validation",
     """A hand-written GRPO loop's JSONL log (train and val rows), step 180 of 500, copied while the writer was
     mid-line so the last line is cut off. The train reward is noisy (small batch, swings of +-0.05
     step to step) but its trend is up (0.04 -> ~0.29), validation accuracy every 10
     steps rises 0.05 -> ~0.24, entropy eases down slowly. A torn tail is not a crash; continue.""",
     lambda: make(7011, "grpo", 180, 500, 1, {
         "reward": S(K(0, .04, 180, .29), .045, lo=0, hi=1), "entropy": S(K(0, .95, 180, .82), .015),
         "len": S(K(0, 290, 180, 330), 12), "grad_norm": S(K(0, .4, 180, .35), .3, rel=True),
         "lr": S(K(0, 1e-6, 180, 1e-6))},
         {"accuracy": E(S(K(0, .05, 180, .24), .01), 10, 0), "format_reward": E(S(K(0, .6, 60, .85, 180, .92), .01),
                                                                                  10, 0)},
         first=1),
     lambda r, f: w_plain_jsonl(r, f))

case("ok-length-shrinks-accuracy-rises-trackio", HEALTHY,
     "trl grpo trackio length_decline efficiency_reward reward_components eval lookalike",
     """TRL GRPO logged to Trackio's SQLite file, step 500 of 1000, with an accuracy reward plus a length-efficiency
     reward. Mean completion length falls 920 -> ~360 tokens, which reads like length collapse, but truncation falls
     from 18% to ~1%, entropy is stable, the accuracy component rises 0.52 -> ~0.63 and the held-out accuracy every
     50 steps edges up (0.50 -> ~0.55). The model is learning to be concise without losing accuracy; continue.""",
     lambda: make(7012, "grpo", 500, 1000, 10, {
         "rewards/accuracy_reward/mean": S(K(0, .52, 500, .63), .02),
         "rewards/length_efficiency/mean": S(K(0, .15, 500, .62), .02),
         "len": S(K(0, 920, 250, 560, 500, 360), 15), "trunc": S(K(0, .18, 250, .03, 500, .01), .008, lo=0),
         "entropy": S(K(0, .41, 500, .39), .01), "reward_std": S(K(0, .45, 500, .38), .01),
         "zero_std": S(K(0, .3, 500, .34), .03, lo=0)},
         {"eval_rewards/accuracy_reward/mean": E(S(K(0, .50, 500, .555), .008), 50),
          "eval_completions/mean_length": E(S(K(0, 900, 250, 550, 500, 370), 10), 50)},
         facts={"max_len": 1024}, derive=d_components("rewards/accuracy_reward/mean",
                                                      "rewards/length_efficiency/mean", 0.5)),
     lambda r, f: w_trackio(r, f, "concise-math", "grpo-concise-q3-1.7b", {"max_steps": 1000, "beta": 0.0,
                                                                            "reward_weights": [1.0, 0.5]}))

case("ok-simpo-logps-both-fall-trl-state", HEALTHY,
     "trl simpo cpo trainer_state trl_0.19 preference logps_decline eval checkpoints lookalike",
     """TRL CPOTrainer with loss_type='simpo' (beta 2, gamma 1), checkpoint-500 of 936 (2 epochs). Both
     length-normalised log-probs fall (chosen -0.92 -> ~-1.35, rejected -1.0 -> ~-2.05), which looks like
     likelihood displacement, but the fall of the chosen side is modest and steady, nll_loss moves with it, and the
     margin, train accuracy (0.56 -> ~0.80) and eval accuracy every 100 steps (0.55 -> ~0.73, eval loss falling)
     all still improve. Continue.""",
     lambda: make(7013, "pref", 500, 936, 10, {
         "logps/chosen": S(K(0, -.92, 500, -1.35), .02), "logps/rejected": S(K(0, -1.01, 500, -2.05), .03),
         "rewards/accuracies": S(K(0, .56, 200, .72, 500, .80), .02, hi=1)},
         {"eval_rewards/accuracies": E(S(K(0, .55, 200, .66, 500, .735), .008), 100),
          "eval_loss": E(S(K(0, 1.45, 200, 1.05, 500, .86), .01), 100)},
         facts={"model": "mistralai/Mistral-7B-Instruct-v0.3", "loss_type": "simpo", "beta": 2.0,
                "cpo_alpha": 0.0, "simpo_gamma": 1.0, "eval_steps": 100}, derive=d_simpo()),
     lambda r, f: w_trl_state(r, f, "0.19.1", save_every=100, steps_per_epoch=468))

# ---------------- failures a practitioner must catch ----------------------------------------------------------------

case("bad-agentic-tool-abandon-verl-tb", rollback(160, 220, 230),
     "verl grpo tensorboard agentic multi_turn tool_calls tool_abandonment eval_decline checkpoints",
     """verl TensorBoard, multi-turn search agent, step 400 of 1000. Until ~220 the agent calls its search tool ~2
     times per rollout and validation accuracy climbs to ~0.36; then tool calls collapse (2.2 -> ~0.15, turns -> ~1),
     responses shorten, entropy and KL move, and the model answers from memory: the train score barely dips
     (easy train questions) but validation falls to ~0.27. The best agent is behind at ~200-220 (global_step_200 is
     on disk); roll back.""",
     lambda: make(7101, "agent", 400, 1000, 1, {
         "reward": S(K(0, .20, 180, .45, 230, .45, 300, .42, 400, .37), .03, lo=0, hi=1),
         "tool_call_counts/mean": S(K(0, 1.8, 200, 2.2, 230, 1.9, 300, .3, 400, .15), .05, lo=0),
         "len": S(K(0, 800, 200, 950, 300, 420, 400, 380), 20),
         "entropy": S(K(0, .55, 220, .48, 300, .33, 400, .29), .012),
         "kl": S(K(0, 0, 220, .012, 300, .035, 400, .05), .001, lo=0),
         "step_time": S(K(0, 110, 220, 130, 300, 60, 400, 55), .05, rel=True)},
         {"val-core/nq_hotpotqa/acc/mean@1": E(S(K(0, .18, 180, .355, 220, .36, 260, .335, 300, .30, 400, .27),
                                                .008), 20, 0)},
         ckpts=range(100, 401, 100), first=1, facts={"max_len": 4096, "max_turns": 6},
         derive=d_chain(d_turns, d_verl_extremes)),
     lambda r, f: w_verl_tb(r, f, "search_r1", "qwen2.5-3b-it-grpo-search"))

case("bad-agentic-turn-loop-cap-verl-console", rollback(130, 160, 170),
     "verl grpo verl_console verl_0.4 agentic multi_turn num_turns turn_cap truncation eval_decline",
     """verl 0.4 console log (plain floats), tool-use agent with max 10 turns, step 260 of 500. Score and
     validation rise to ~0.52 / ~0.47 by step 140; from ~150 the rollouts start looping: mean turns climb 4 -> ~9,
     the max hits the 10-turn cap every step, truncation rises 5% -> 45% and responses triple, while score and
     validation fall (~0.31 / ~0.30). The agent was best at ~130-160 (no checkpoint in the folder: restore the
     newest saved one at or before that); roll back.""",
     lambda: make(7102, "agent", 260, 500, 1, {
         "reward": S(K(0, .22, 140, .52, 170, .50, 260, .31), .03, lo=0, hi=1),
         "tool_call_counts/mean": S(K(0, 2.0, 140, 3.2, 200, 6.5, 260, 8.3), .08, lo=0),
         "num_turns/max": S(K(0, 7, 120, 9, 150, 10, 260, 10), .3, lo=1, hi=10),
         "trunc": S(K(0, .02, 150, .05, 200, .25, 260, .45), .01, lo=0, hi=1),
         "len": S(K(0, 900, 150, 1200, 260, 3600), 40), "entropy": S(K(0, .5, 150, .46, 260, .62), .012),
         "kl": S(K(0, 0, 150, .006, 260, .03), .001, lo=0),
         "step_time": S(K(0, 120, 150, 140, 260, 330), .05, rel=True)},
         {"val-core/toolbench/acc/mean@1": E(S(K(0, .20, 140, .47, 160, .46, 200, .40, 260, .30), .008), 10, 0)},
         first=1, facts={"max_len": 4096, "max_turns": 10},
         derive=d_chain(d_round("num_turns/max"), d_turns, d_verl_extremes)),
     lambda r, f: w_verl_console(r, f, False, "tool_agent", "qwen2.5-7b-toolbench-grpo"))

case("bad-tool-failures-rise-trl-wandb-offline", rollback(300, 350, 360),
     "trl grpo wandb wandb_offline trl_0.26 tools tool_failure reward_decline eval_decline",
     """TRL 0.26 GRPO with tools as a W&B offline run, step 520 of 1000. Reward and eval_reward rise to ~0.61 /
     ~0.58 by ~330-350; then the share of failing tool calls climbs from ~5% to ~55% (malformed calls) while call
     frequency keeps rising, entropy creeps up, and reward and eval fall (~0.44 / ~0.43). Nothing suggests it will
     repair itself; the best weights are at ~300-350. Roll back.""",
     lambda: make(7103, "grpo", 520, 1000, 10, {
         "reward": S(K(0, .35, 300, .60, 340, .61, 400, .55, 520, .44), .02, lo=0, hi=1),
         "tools/failure_frequency": S(K(0, .08, 330, .05, 380, .20, 520, .55), .015, lo=0, hi=1),
         "tools/call_frequency": S(K(0, 1.2, 330, 1.6, 520, 1.9), .05, lo=0),
         "entropy": S(K(0, .5, 340, .46, 520, .58), .012), "step_time": S(K(0, 60, 520, 85), .05, rel=True),
         "len": S(K(0, 520, 340, 610, 520, 700), 15)},
         {"eval_reward": E(S(K(0, .33, 300, .575, 350, .58, 400, .545, 520, .43), .008), 50)}),
     lambda r, f: w_wandb(r, f, "trl-tools", "qwen3-4b-grpo-tools", "h7tools026", TRL,
                          {"beta": 0.0, "num_generations": 8, "max_steps": 1000, "logging_steps": 10,
                           "eval_steps": 50, "trl_version": "0.26.2"}))

case("bad-simpo-likelihood-collapse-trl-state", rollback(280, 360, 400),
     "trl simpo cpo trainer_state trl_0.19 preference likelihood_displacement overfit save_total_limit "
     "best_ckpt_deleted eval_decline",
     """TRL CPOTrainer loss_type='simpo', checkpoint-700 of 936, save_total_limit 3 (only 500/600/700 kept).
     Train accuracy heads to ~0.97 and margins keep growing, but after ~300 the chosen log-prob falls ever faster
     (-1.25 -> ~-3.6, rejected to ~-6) with nll_loss rising: likelihood displacement. Eval accuracy peaks ~0.72 at
     300 (already ~0.70 at 400, where eval log-probs have started to slide) and falls to ~0.60 with eval loss rising. The better model is at ~300, before the saved
     checkpoints (restore from elsewhere or retrain to there); roll back.""",
     lambda: make(7104, "pref", 700, 936, 10, {
         "logps/chosen": S(K(0, -.92, 300, -1.25, 450, -1.9, 700, -3.6), .03),
         "logps/rejected": S(K(0, -1.0, 300, -2.0, 450, -3.3, 700, -6.0), .05),
         "rewards/accuracies": S(K(0, .56, 300, .82, 500, .93, 700, .97), .015, hi=1)},
         {"eval_rewards/accuracies": E(S(K(0, .55, 300, .71, 400, .70, 500, .66, 700, .60), .007), 100),
          "eval_loss": E(S(K(0, .85, 300, .62, 400, .63, 500, .69, 700, .86), .01), 100),
          "eval_logps/chosen": E(S(K(0, -.93, 300, -1.3, 700, -3.7), .02), 100)},
         facts={"model": "mistralai/Mistral-7B-Instruct-v0.3", "loss_type": "simpo", "beta": 2.0,
                "eval_steps": 100}, derive=d_simpo()),
     lambda r, f: w_trl_state(r, f, "0.19.1", save_every=100, keep=3, steps_per_epoch=468))

case("stop-orpo-train-saturated-eval-flat-trl-state", stop(500),
     "trl orpo trainer_state trl_0.15 old_layout preference saturated eval_flat checkpoints",
     """TRL ORPOTrainer (older trainer_state layout without logging/save fields), checkpoint-1100 of 1800. Train
     preference accuracy saturates near 0.99 by ~500 and the log-odds ratio keeps growing, but eval loss and eval
     accuracy every 100 steps have been flat (~0.985 / ~0.665) since ~400, neither improving nor declining. Nothing
     left to gain on held-out data and no better model behind; stop.""",
     lambda: make(7105, "pref", 1100, 1800, 10, {
         "logps/chosen": S(K(0, -1.1, 1100, -.75), .02), "logps/rejected": S(K(0, -1.25, 400, -1.9, 1100, -2.6), .03),
         "rewards/accuracies": S(K(0, .6, 400, .93, 600, .98, 1100, .99), .01, hi=1)},
         {"eval_loss": E(S(K(0, 1.12, 400, .98, 1100, .982), .004), 100),
          "eval_rewards/accuracies": E(S(K(0, .58, 400, .665, 1100, .665), .004), 100)},
         facts={"model": "google/gemma-2-2b-it", "beta": 0.1, "eval_steps": 100}, derive=d_orpo()),
     lambda r, f: w_trl_state(r, f, "0.15.2", save_every=100, keep=2, steps_per_epoch=600, old_layout=True))

case("bad-template-collapse-hf-tb", dict(accept=["rollback", "stop"], preferred="rollback",
                                         rollback_window=[300, 450], onset_step=400),
     "trl grpo hf_tensorboard learned_reward_model template_collapse entropy_collapse distinct_n eval_flat "
     "checkpoints",
     """TRL GRPO against a learned helpfulness RM, HF TensorBoard (train/, eval/), step 900 of 1500. The RM reward
     keeps rising (-0.4 -> ~1.05), but from ~350 entropy collapses (0.6 -> ~0.1), distinct-2 of completions falls
     0.55 -> ~0.13 and min/max lengths converge: one template. Held-out RM reward has been flat since ~300 and the
     win rate vs SFT slips (0.63 -> ~0.56). The model from ~300-450 is as good on held-out prompts and far more
     diverse, so rolling back is preferred; stopping (nothing gained, mild loss) is also defensible.""",
     lambda: make(7106, "grpo", 900, 1500, 10, {
         "reward": S(K(0, -.4, 300, .35, 600, .75, 900, 1.05), .03),
         "reward_std": S(K(0, 1.1, 300, .8, 600, .35, 900, .15), .02, lo=0),
         "zero_std": S(K(0, 0, 900, 0)), "entropy": S(K(0, .72, 300, .60, 600, .22, 900, .10), .01, lo=.01),
         "completions/distinct_2": S(K(0, .61, 300, .55, 600, .26, 900, .13), .01, lo=0),
         "len": S(K(0, 410, 300, 380, 900, 352), 4)},
         {"eval_reward": E(S(K(0, -.45, 300, .30, 450, .33, 600, .31, 900, .29), .015), 100),
          "eval_win_rate_vs_sft": E(S(K(0, .5, 300, .62, 450, .63, 600, .60, 900, .56), .008), 100)},
         ckpts=[700, 800, 900],
         derive=lambda run, rng: run.m.update({
             "completions/max_length": run.m["len"] * (1 + 0.9 * run.m["completions/distinct_2"] / .61),
             "completions/min_length": run.m["len"] * (1 - 0.6 * run.m["completions/distinct_2"] / .61),
             "rewards/helpfulness_rm/mean": run.m["reward"]}) or [run.m.pop(k) for k in ("len_max", "len_min")]),
     lambda r, f: w_hf_tb(r, f))

case("bad-train-infer-mismatch-trl023-state", rollback(400, 460, 470),
     "trl grpo trainer_state trl_0.23 vllm importance_sampling train_inference_mismatch clip_ratio_rising "
     "checkpoints eval_decline",
     """TRL 0.23 GRPO with vLLM and importance-sampling correction (num_iterations 2), checkpoint-700 of 1000. From
     ~420 the train/inference log-prob gap grows tenfold (0.005 -> ~0.065), the minimum IS ratio collapses toward
     0 and the clipped fraction climbs 0.01 -> ~0.17: the rollouts no longer come from the policy being trained.
     Reward peaks ~0.58 around 450-470 and eval every 50 steps peaks ~0.55 at 400-450, then both fall (~0.47 /
     ~0.45). Roll back to ~450-460 (checkpoint-400 is on disk) and fix the weight sync.""",
     lambda: make(7107, "grpo", 700, 1000, 10, {
         "reward": S(K(0, .30, 420, .58, 470, .585, 550, .55, 700, .47), .02, lo=0, hi=1),
         "sampling/sampling_logp_difference/mean": S(K(0, .004, 380, .005, 470, .02, 700, .065), .1, rel=True),
         "sampling/importance_sampling_ratio/min": S(K(0, .5, 380, .45, 470, .12, 700, .02), .05, lo=0.001),
         "sampling/importance_sampling_ratio/mean": S(K(0, 1.0, 380, 1.0, 700, .93), .01),
         "sampling/importance_sampling_ratio/max": S(K(0, 1.8, 380, 2.0, 700, 6.5), .08, rel=True),
         "clip": S(K(0, .01, 400, .012, 500, .05, 700, .17), .004, lo=0),
         "entropy": S(K(0, .45, 450, .41, 700, .55), .012)},
         {"eval_reward": E(S(K(0, .28, 400, .545, 450, .55, 500, .54, 600, .50, 700, .45), .007), 50)},
         facts={"model": "Qwen/Qwen2.5-7B", "num_iterations": 2, "use_vllm": True, "beta": 0.0,
                "vllm_importance_sampling_correction": True}, derive=d_sampling),
     lambda r, f: w_trl_state(r, f, "0.23.1", save_every=100, keep=4, steps_per_epoch=350))

case("stop-dapo-filter-saturated-verl-jsonl", stop(180),
     "verl dapo verl_jsonl file_logger dynamic_sampling num_gen_batches saturated eval_flat generation_cost",
     """verl DAPO with dynamic sampling, file-logger JSONL, step 330 of 600. The train score hovers ~0.5 all run,
     which looks like room to learn, but it is measured only on the groups kept by the filter: num_gen_batches
     climbs 1 -> ~8 because almost every group is now solved, step time grows ~5x, and validation (mean@8 ~0.71,
     best@8 ~0.88) has been flat since ~180. Saturated; stop.""",
     lambda: make(7108, "grpo", 330, 600, 1, {
         "reward": S(K(0, .45, 330, .52), .02), "train/num_gen_batches": S(K(0, 1, 100, 1.6, 200, 3.5, 330, 7.8),
                                                                          .08, rel=True, lo=1),
         "step_time": S(K(0, 150, 100, 190, 200, 330, 330, 720), .06, rel=True),
         "entropy": S(K(0, .52, 150, .40, 330, .34), .01), "len": S(K(0, 1500, 150, 1700, 330, 1720), 30),
         "kl": None},
         {"val-core/dapo_math/acc/mean@8": E(S(K(0, .48, 150, .70, 330, .71), .006), 15, 0),
          "val-core/dapo_math/acc/best@8/mean": E(S(K(0, .74, 150, .88, 330, .885), .005), 15, 0)},
         first=1, ckpts=range(100, 301, 100), facts={"max_len": 8192},
         derive=d_chain(d_round("train/num_gen_batches"), d_verl_extremes)),
     lambda r, f: w_verl_jsonl(r, f, "dapo", "qwen2.5-32b-dapo-math"))

case("bad-ood-forgetting-verl-tb", rollback(200, 250, 300),
     "verl grpo tensorboard two_validation_sets forgetting out_of_domain kl_rise checkpoints",
     """verl GRPO TensorBoard with two validation sets, step 500 of 1000. In-domain GSM8K keeps creeping up (0.74 at
     200 -> ~0.78), but the general-knowledge set (MMLU-Pro), flat at ~0.44 until ~250, then falls to ~0.31 while KL
     accelerates (0.02 -> 0.11) and entropy halves. Three points in-domain bought for thirteen out of domain: the
     better model is at ~200-250 (global_step_200 on disk); roll back.""",
     lambda: make(7109, "grpo", 500, 1000, 1, {
         "reward": S(K(0, .55, 200, .76, 500, .84), .02, lo=0, hi=1),
         "kl": S(K(0, 0, 250, .02, 500, .11), .002, lo=0), "entropy": S(K(0, .42, 250, .34, 500, .20), .01),
         "len": S(K(0, 260, 250, 230, 500, 190), 6)},
         {"val-core/openai/gsm8k/acc/mean@1": E(S(K(0, .62, 200, .74, 250, .755, 500, .78), .005), 25, 0),
          "val-core/mmlu_pro/acc/mean@1": E(S(K(0, .44, 250, .438, 350, .40, 500, .31), .006), 25, 0)},
         first=1, ckpts=range(100, 501, 100), derive=d_verl_extremes),
     lambda r, f: w_verl_tb(r, f, "gsm8k_forgetting", "llama3.1-8b-grpo-gsm8k"))

case("stop-finished-plateau-last-eval-dip-hf-tb", stop_or_rollback(800, 1100, 700),
     "trl grpo hf_tensorboard finished plateau eval_noise kl checkpoints save_total_limit",
     """TRL GRPO (beta 0.04) HF TensorBoard, finished at max_steps 1200 with checkpoint-1000/1100/1200 kept. Reward
     and eval reward plateaued from ~700 (~0.62 / ~0.61); the last eval reads a hair below the best one, a gap
     within the eval noise (~0.01). The final weights are as good as any: keep them (stop). Restoring the
     best-scoring plateau checkpoint (800-1100) is equally acceptable, since it costs nothing.""",
     lambda: make(7110, "grpo", 1200, 1200, 10, {
         "reward": S(K(0, .32, 500, .58, 700, .62, 1200, .625), .02, lo=0, hi=1),
         "kl": S(K(0, 0, 700, .05, 1200, .065), .002, lo=0), "entropy": S(K(0, .55, 700, .40, 1200, .37), .01)},
         {"eval_reward": E(S(K(0, .30, 500, .565, 700, .612, 1100, .616, 1200, .607), .005), 100)},
         ckpts=[1000, 1100, 1200]),
     lambda r, f: w_hf_tb(r, f, finished=True))

case("bad-penalty-reward-regresses-openrlhf-console", rollback(250, 290, 300),
     "openrlhf grpo openrlhf_console openrlhf_0.10 negative_reward penalty_reward kl_surge length_decline "
     "logging_every_2 eval_decline",
     """OpenRLHF console log (logging_steps 2), penalty-only reward, step 420 of 800. The reward improves
     -2.8 -> ~-0.9 by ~260 (toward zero is better), then regresses to ~-1.8 while KL surges (0.04 -> 0.22),
     responses shrink and the clip ratio climbs; the eval pass1 (same penalty scale) peaks ~-1.0 at ~280 and
     falls to ~-1.85. A real decline after a good stretch: roll back to ~280.""",
     lambda: make(7111, "grpo", 420, 800, 2, {
         "reward": S(K(0, -2.8, 150, -1.5, 260, -.9, 300, -.95, 420, -1.8), .08),
         "kl": S(K(0, 0, 260, .04, 320, .09, 420, .22), .003, lo=0),
         "len": S(K(0, 480, 260, 520, 330, 400, 420, 240), 10),
         "clip": S(K(0, .05, 270, .06, 420, .16), .005, lo=0), "reward_std": S(K(0, .9, 420, .7), .03),
         "grad_norm": S(K(0, .3, 280, .3, 420, .9), .25, rel=True),
         "step_time": S(K(0, 80, 420, 70), .05, rel=True)},
         {"eval_constraints_pass1": E(S(K(0, -2.9, 150, -1.6, 260, -1.0, 280, -1.0, 320, -1.15, 420, -1.85), .04),
                                      40)}),
     lambda r, f: w_openrlhf_console(r, f))

case("stop-judge-saturated-trl-console", stop(300),
     "trl grpo trl_console trl_0.21 judge_reward reward_scale_0_10 saturated zero_std eval_flat",
     """TRL 0.21 GRPO console log, LLM-judge reward on a 0-10 scale, step 600 of 1000. The judge score rises
     5.1 -> ~9.4 by ~300 and then sits at 9.4-9.5 against a ceiling of 10; reward_std falls to ~0.3 and ~80% of
     groups have zero spread, so there is almost no learning signal, and eval_reward every 50 steps has been flat
     (~9.3) for 300 steps without declining. Saturated; stop.""",
     lambda: make(7112, "grpo", 600, 1000, 10, {
         "reward": S(K(0, 5.1, 150, 8.2, 300, 9.4, 600, 9.52), .06, hi=10),
         "reward_std": S(K(0, 2.2, 150, 1.2, 300, .45, 600, .3), .03, lo=0),
         "zero_std": S(K(0, .05, 150, .35, 300, .74, 600, .82), .02, lo=0, hi=1),
         "entropy": S(K(0, .55, 300, .38, 600, .33), .01), "len": S(K(0, 350, 300, 420, 600, 430), 8)},
         {"eval_reward": E(S(K(0, 5.0, 150, 8.0, 300, 9.25, 600, 9.28), .03), 50)},
         derive=d_copy("reward", "rewards/judge_score/mean")),
     lambda r, f: w_trl_console(r, f))

case("bad-still-writing-entropy-blowup-verl-jsonl", rollback(225, 250, 255),
     "verl grpo verl_jsonl file_logger still_writing truncated_last_line entropy_blowup length_explosion "
     "grad_spike checkpoints",
     """verl file-logger JSONL copied while the run is live (step ~292 of 500, last line cut mid-write). Score and
     validation peak ~0.63 / ~0.585 around 225-250; from ~255 grad norm spikes, entropy explodes 0.44 -> ~2.8,
     responses run to the cap (truncation ~60%) and the score falls to ~0.2 within 40 steps. A breakage after a
     good stretch: roll back to global_step_250, the newest checkpoint before it.""",
     lambda: make(7113, "grpo", 292, 500, 1, {
         "reward": S(K(0, .25, 200, .62, 250, .63, 270, .50, 292, .21), .025, lo=0, hi=1),
         "entropy": S(K(0, .48, 250, .44, 265, 1.1, 292, 2.8), .02),
         "trunc": S(K(0, .03, 252, .03, 270, .25, 292, .62), .01, lo=0, hi=1),
         "len": S(K(0, 620, 252, 640, 292, 1850), 20),
         "grad_norm": S(K(0, .2, 250, .2, 262, 1.5, 292, 3.0), .25, rel=True),
         "kl": S(K(0, 0, 250, .008, 292, .09), .001, lo=0)},
         {"val-core/math_lighteval/acc/mean@1": E(S(K(0, .30, 200, .57, 250, .585, 275, .45), .006), 25, 0)},
         first=1, ckpts=range(50, 251, 50), facts={"max_len": 2048}, derive=d_verl_extremes),
     lambda r, f: w_verl_jsonl(r, f, "math_grpo", "qwen2.5-math-7b-grpo", torn_tail=True))

case("bad-lr-restart-breaks-openrlhf-tb", rollback(560, 600, 610),
     "openrlhf grpo tensorboard lr_schedule cosine_restarts restart_breaks_run clip_ratio kl_jump "
     "logging_every_5 checkpoints eval_decline",
     """OpenRLHF TensorBoard, cosine schedule with warm restarts every 300 steps, step 800 of 1500. The first
     restart (300) dips and recovers; the second (600) does not: the clip ratio jumps and stays ~0.15, KL jumps
     0.025 -> 0.13, and reward falls 0.63 -> ~0.41 with no recovery in 200 steps, eval pass1 every 50 steps from
     ~0.55 to ~0.38. The best model is just before the restart, ~560-600 (global_step600 on disk); roll back.""",
     lambda: make(7114, "grpo", 800, 1500, 5, {
         "reward": S(K(0, .28, 300, .50, 310, .46, 345, .505, 600, .63, 610, .55, 650, .47, 800, .41), .02),
         "kl": S(K(0, 0, 600, .025, 620, .09, 800, .13), .003, lo=0),
         "clip": S(K(0, .03, 800, .03), .004, lo=0), "reward_std": S(K(0, .4, 800, .33), .01),
         "len": S(K(0, 500, 600, 560, 800, 470), 10)},
         {"eval_math_pass1": E(S(K(0, .27, 300, .45, 350, .46, 600, .55, 650, .44, 800, .38), .007), 50)},
         ckpts=range(100, 801, 100), derive=d_restarts(300, 1e-6, .09, .006, sticky_from=605)),
     lambda r, f: w_openrlhf_tb(r, f, "llama3.1-8b-grpo-sgdr"))

case("bad-length-shrink-eval-falls-trackio", rollback(200, 300, 340),
     "trl grpo trackio length_decline efficiency_reward reward_components eval_decline reasoning_squeezed",
     """TRL GRPO to Trackio with an accuracy reward plus a length-efficiency reward, step 600 of 1000. Total reward
     rises throughout, carried by the efficiency term, while completions shrink 900 -> ~120 tokens. Down to ~450
     tokens (step ~250-300) accuracy held and held-out accuracy peaked (~0.58); past that the reasoning is squeezed
     out: the train accuracy component slips 0.72 -> ~0.64 and held-out accuracy falls to ~0.45. Roll back to
     ~250-300.""",
     lambda: make(7115, "grpo", 600, 1000, 10, {
         "rewards/accuracy_reward/mean": S(K(0, .70, 250, .72, 400, .70, 600, .64), .02),
         "rewards/length_efficiency/mean": S(K(0, .12, 250, .45, 600, .85), .02),
         "len": S(K(0, 900, 250, 480, 400, 260, 600, 120), 10), "entropy": S(K(0, .42, 600, .37), .01),
         "trunc": S(K(0, .15, 250, .01, 600, 0), .006, lo=0), "reward_std": S(K(0, .45, 600, .35), .01),
         "zero_std": S(K(0, .35, 600, .45), .03, lo=0)},
         {"eval_rewards/accuracy_reward/mean": E(S(K(0, .55, 250, .58, 300, .575, 400, .53, 600, .45), .007), 50),
          "eval_completions/mean_length": E(S(K(0, 880, 250, 470, 400, 250, 600, 115), 10), 50)},
         facts={"max_len": 1024}, derive=d_components("rewards/accuracy_reward/mean",
                                                      "rewards/length_efficiency/mean", 0.5)),
     lambda r, f: w_trackio(r, f, "concise-math", "grpo-concise-q2.5-1.5b", {"max_steps": 1000, "beta": 0.0,
                                                                              "reward_weights": [1.0, 0.5]}))

case("bad-adaptive-entropy-runaway-trl19-state", rollback(300, 350, 370),
     "trl grpo trainer_state trl_1.9 adaptive_entropy entropy_blowup entropy_coef runaway checkpoints eval_decline",
     """TRL 1.9 GRPO with the adaptive entropy bonus, checkpoint-600 of 1200. Until ~350 it looks like a healthy
     controlled run (entropy ~0.4-0.5, reward ~0.55), but the controller keeps raising entropy_coef (0.004 ->
     0.03) and entropy runs away to ~1.9 with truncation rising to ~35%; reward and eval reward fall to ~0.3. Best
     at ~300-350 (checkpoint-300 on disk); roll back and cap the coefficient.""",
     lambda: make(7116, "grpo", 600, 1200, 10, {
         "reward": S(K(0, .30, 330, .55, 380, .54, 600, .28), .02, lo=0, hi=1),
         "entropy": S(K(0, .30, 300, .42, 360, .55, 450, 1.2, 600, 1.9), .02),
         "entropy_coef": S(K(0, .001, 300, .004, 360, .008, 600, .03), .0004, lo=0),
         "policy_loss": S(K(0, 0, 600, 0), .01), "clip": S(K(0, .012, 380, .02, 600, .08), .003, lo=0),
         "trunc": S(K(0, .02, 380, .03, 600, .35), .008, lo=0), "len": S(K(0, 400, 380, 480, 600, 900), 12)},
         {"eval_reward": E(S(K(0, .28, 300, .52, 350, .525, 400, .50, 500, .40, 600, .30), .007), 50)},
         facts={"model": "Qwen/Qwen3-4B-Base", "num_iterations": 2, "entropy_target": 0.9, "eval_steps": 50},
         derive=d_entropy_ctrl),
     lambda r, f: w_trl_state(r, f, "1.9.0", save_every=100, steps_per_epoch=300,
                              extra_ckpt_file=("entropy_ctrl_state.json", '{"entropy_coef": 0.03}')))

case("bad-nan-takes-over-nemo-tb", rollback(400, 440, 445),
     "nemo_rl grpo tensorboard nan grad_explosion nan_persistent reward_zero validation checkpoints",
     """NeMo-RL GRPO TensorBoard, step 520 of 1000. Reward and validation accuracy reach ~0.5 / ~0.47 by ~440;
     grad norm then spikes (0.35 -> ~40) and from step 466 loss, grad norm, KL and entropy are NaN on every step
     while the reward drops to ~0 (garbage generations): the weights are gone, not a one-off NaN. Roll back to
     ~440 (step_400 is the newest checkpoint before it).""",
     lambda: make(7117, "grpo", 520, 1000, 1, {
         "reward": S(K(0, .20, 400, .50, 440, .51, 455, .45, 470, .05, 520, 0.0), .02, lo=0, hi=1),
         "grad_norm": S(K(0, .3, 400, .35, 440, 2.0, 460, 40.0), .2, rel=True),
         "kl": S(K(0, 0, 440, .03, 465, .2), .002, lo=0), "entropy": S(K(0, .6, 440, .5, 465, 1.4), .01),
         "len": S(K(0, 380, 440, 420, 470, 1024, 520, 1024), 10)},
         {"validation/accuracy": E(S(K(0, .18, 400, .46, 440, .47, 460, .30, 480, 0.0, 520, 0.0), .008, lo=0), 20)},
         first=1, ckpts=range(100, 501, 100), facts={"max_len": 1024},
         derive=d_nan_from(466, ("loss", "grad_norm", "kl", "entropy"))),
     lambda r, f: w_nemo_tb(r, f, exp="exp_001"))


# ------------------------------------------------------------------------------------------------------------ main

HEADER = """# Holdout set 7: hand-built runs written by make_holdout7.py, independent of the assessor, its judges and the
# generators of holdouts 1-6. Labels: what a careful practitioner should do with each run under DESIGN.md's
# decision contract; rollback_window is inclusive (newest good step before the damage and the good stretch
# before it); onset_step is where the problem becomes visible. Run make_holdout7.py once to write runs/.
"""


def main(argv):
    runs = HERE / "runs"
    fresh_runs(runs, "make_holdout7.py")
    entries, skipped = [], []
    for c in C:
        run = c.build()
        folder = runs / c.name
        try:
            c.write(run, folder)
        except Skip as why:
            skipped.append(f"{c.name}: {why}")
            continue
        tags = ["holdout7", *c.tags.split()]
        if run.reached >= run.planned and "finished" not in tags:
            tags.append("finished")
        entries.append(case_entry("h7-" + c.name, f"runs/{c.name}", c.labels, tags, c.why))
        if "--check" in argv:
            check(c, run)
    write_case_file(HERE / "holdout7.yaml", HEADER, entries)
    print(f"{len(entries)} cases ({sum(bool(e.get('healthy')) for e in entries)} healthy) in holdout7.yaml")
    for s in skipped:
        print("SKIPPED", s)


def check(c: Case, run: Run):
    """Print what the labels rest on: smoothed train reward and every eval at a few points, label, window."""
    r = run.m.get("reward")
    w = max(1, len(run.steps) // 25)
    lab = c.labels
    print(f"\n== {c.name}: {lab.get('preferred')} win={lab.get('rollback_window')} onset={lab.get('onset_step')} "
          f"reached={run.reached}/{run.planned}")
    if r is not None:
        sm = np.convolve(r, np.ones(w) / w, mode="valid")
        idx = np.linspace(0, len(sm) - 1, 12).astype(int)
        print("  reward~", " ".join(f"{int(run.steps[i + w - 1])}:{sm[i]:.3g}" for i in idx),
              f"| argmax {int(run.steps[int(np.argmax(sm)) + w - 1])}")
    for k, (es, vs) in run.ev.items():
        print(f"  {k}:", " ".join(f"{int(s)}:{v:.3g}" for s, v in zip(es, vs, strict=False))[:400],
              f"| argmax {int(es[int(np.argmax(vs))])}")


if __name__ == "__main__":
    main(sys.argv[1:])
