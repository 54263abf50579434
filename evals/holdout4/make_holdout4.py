#!/usr/bin/env python
"""Holdout set 4: 32 hand-built RL post-training runs in the frameworks' own on-disk layouts, with labels.

    .venv/bin/python evals/holdout4/make_holdout4.py      # writes runs/ (gitignored) and holdout4.yaml

Written apart from the assessor (nothing here imports it) and apart from holdouts 1-3: its own curve language
(piecewise-linear knots), its own noise model (per-prompt difficulty drawn from a Beta around the true success
rate, then a group of G samples per prompt, so reward, reward spread, zero-std groups and pct_0/pct_1 all come from
the same simulated groups) and its own writers. Deterministic (one fixed seed per case).

New here: OpenRLHF and NeMo-RL layouts (console "✨ Global step", TensorBoard under <run_name>/ and
logs/exp_NNN/tensorboard, a resume that opens exp_002), DPO / ORPO / OpenRLHF-DPO, PPO with a critic (critic
warmup, value loss, explained variance), RLOO, DAPO dynamic sampling (the kept batch's score is pinned near 0.5
by the filter), runs of 20k+ steps with sparse evals, a resume that re-warms the learning rate, warmup + cosine
schedules, a monitor reward logged with weight 0, a length penalty that is gamed, a task reward pinned at its
floor under a saturating format reward, slow KL drift at a tiny beta, finished runs (max_steps reached, summary
row / final validation) whose best point is earlier or at the end. Labels follow DESIGN.md's decision contract
(see ../holdout_kit.py).
"""

from __future__ import annotations

import json
import math
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
import holdout_kit as kit  # noqa: E402
from holdout_kit import HEALTHY, Case, rollback, stop, stop_or_rollback  # noqa: E402

# ============================================================================================ curves and noise

def knots(*pts):
    """Piecewise-linear curve through (step, value) knots, flat beyond the ends."""
    xs, ys = zip(*pts, strict=True)
    return lambda s: np.interp(np.asarray(s, float), xs, ys)


def const(v):
    return lambda s: np.full(np.shape(np.asarray(s, float)), float(v))


def warm_cos(peak, warm, total, floor=0.0):
    """Linear warmup over `warm` steps, then cosine decay to `floor`*peak at `total`."""
    def f(s):
        s = np.asarray(s, float)
        w = np.minimum(1.0, s / max(warm, 1))
        prog = np.clip((s - warm) / max(total - warm, 1), 0, 1)
        return peak * np.where(s < warm, w, floor + (1 - floor) * 0.5 * (1 + np.cos(math.pi * prog)))
    return f


def ar1(rng, n, phi, sd):
    e = rng.normal(0, sd * math.sqrt(1 - phi * phi), n)
    x = np.empty(n)
    x[0] = rng.normal(0, sd)
    for i in range(1, n):
        x[i] = phi * x[i - 1] + e[i]
    return x


@dataclass
class Sim:
    T: int                      # steps reached
    P: int                      # steps planned
    m: dict                     # per-step arrays, index i = step i+1 (neutral names, or native keys under "native")
    ev: dict = field(default_factory=dict)   # eval step -> value (neutral accuracy) or a dict of native keys
    rng: np.random.Generator | None = None


def groups(rng, pp, prompts, G, kappa):
    """Per step: prompt difficulties q ~ Beta(kappa p, kappa (1-p)), G samples each. Returns reward mean, batch std,
    fraction of all-same groups, percent of all-0 and all-1 groups, mean within-group std."""
    T = len(pp)
    kappa = np.broadcast_to(np.asarray(kappa, float), (T,))
    a = np.maximum(kappa * pp, 1e-3)[:, None] * np.ones((1, prompts))
    b = np.maximum(kappa * (1 - pp), 1e-3)[:, None] * np.ones((1, prompts))
    q = rng.beta(a, b)
    k = rng.binomial(G, q)
    r = k.sum(1) / (prompts * G)
    zero, one = (k == 0).mean(1), (k == G).mean(1)
    gstd = np.sqrt(k / G * (1 - k / G)).mean(1)
    n = prompts * G
    return r, np.sqrt(r * (1 - r) * n / max(n - 1, 1)), zero + one, 100 * zero, 100 * one, gstd, k


ENT_045, LEN_320, LR_1E6 = const(0.45), const(320), const(1e-6)
LEN_260, ENT_048, KL_0 = const(260.0), const(0.48), const(0.0)


def grpo(p, *, prompts=64, G=8, kappa=2.5, drift=(0.9, 0.015), ent=ENT_045, kl=None, length=LEN_320,
         cap=1024, lr=LR_1E6, gn=0.12, ev=None, ev_n=500, ev_every=50, ev_from=None, mods=()):
    """A verifiable-reward policy-gradient run. p, ent, kl, length, lr: curves of the step. ev: true eval curve,
    measured on ev_n items every ev_every steps (from ev_from, default ev_every). mods edit the sampled arrays."""
    def make(rng, T, P):
        s = np.arange(1, T + 1, dtype=float)
        pp = np.clip(p(s) + ar1(rng, T, *drift), 0.0005, 0.9995)
        r, rstd, zs, pct0, pct1, gstd, k = groups(rng, pp, prompts, G, kappa(s) if callable(kappa) else kappa)
        L = np.clip(length(s) * np.exp(rng.normal(0, 0.05, T)), 4, cap)
        m = {"p": p(s), "reward": r, "reward_std": rstd, "zero_std": zs, "pct0": pct0, "pct1": pct1,
             "group_std": gstd, "entropy": ent(s) * np.exp(rng.normal(0, 0.035, T)), "length": L,
             "length_max": np.minimum(cap, L * rng.uniform(1.9, 2.8, T)), "length_min": L * rng.uniform(.15, .35, T),
             "clipped": np.clip((L / cap) ** 5 + np.abs(rng.normal(0, 0.004, T)), 0, 1), "cap": cap,
             "grad_norm": rng.lognormal(math.log(gn), 0.28, T), "lr": lr(s), "loss": rng.normal(0, 0.003, T),
             "step_time": 30 + L / 14 + rng.normal(0, 1.5, T), "batch": prompts * G, "prompts": prompts, "G": G,
             "succ": k}
        if kl is not None:
            m["kl"] = np.maximum(kl(s) * np.exp(rng.normal(0, 0.12, T)), 1e-7)
        m["gen_time"] = m["step_time"] * rng.uniform(0.55, 0.66, T)
        sim = Sim(T, P, m, rng=rng)
        if ev is not None:
            first = ev_every if ev_from is None else ev_from
            for st in range(first, T + 1, ev_every):
                sim.ev[st] = float(rng.binomial(ev_n, float(np.clip(ev(st), 0, 1))) / ev_n)
        for mod in mods:
            mod(sim, s, rng)
        return sim
    return make


# --------------------------------------------------------------------------------------------------- modifiers

def bump(key, curve, mult=False):
    """Add (or multiply by) a curve of the step on one sampled array."""
    def mod(sim, s, rng):
        sim.m[key] = sim.m[key] * curve(s) if mult else sim.m[key] + curve(s)
    return mod


def set_key(key, fn):
    """Set an array from (sim, s, rng)."""
    def mod(sim, s, rng):
        sim.m[key] = fn(sim, s, rng)
    return mod


def fixed_evals(values):
    """Eval values given outright: {step: value}."""
    def mod(sim, s, rng):
        sim.ev = {k: v for k, v in values.items() if k <= sim.T}
    return mod


def components(fmt, acc_name="accuracy_reward", fmt_name="format_reward", acc_weight=1.0, fmt_weight=1.0):
    """Two reward functions: the simulated groups are the accuracy; format follows its own curve. reward is the
    weighted sum (TRL: rewards/<fn>/mean are unweighted)."""
    def mod(sim, s, rng):
        m = sim.m
        f = rng.binomial(m["batch"], np.clip(fmt(s) + ar1(rng, sim.T, 0.7, 0.015), 0, 1)) / m["batch"]
        acc = m["reward"]
        m["comps"] = {acc_name: acc, fmt_name: f}
        m["reward"] = acc_weight * acc + fmt_weight * f
        m["reward_std"] = np.sqrt(acc_weight ** 2 * acc * (1 - acc) + fmt_weight ** 2 * f * (1 - f))
        m["zero_std"] = np.clip(m["zero_std"] * (f ** m["G"] + (1 - f) ** m["G"]), 0, 1)
    return mod


def monitor(curve, name, sd=0.02):
    """A second reward function logged with weight 0 (a gold check beside a learned reward)."""
    def mod(sim, s, rng):
        v = np.clip(curve(s) + ar1(rng, sim.T, 0.6, sd), 0, 1)
        v = rng.binomial(sim.m["batch"], v) / sim.m["batch"]
        sim.m.setdefault("comps", {})[name] = v
    return mod


def rm_evals(values, rm, gold, lo, hi):
    """TRL eval rows of a two-function run: eval_reward is the weighted sum (RM only), the gold check at weight 0."""
    def mod(sim, s, rng):
        sim.ev = {}
        for st, v in values.items():
            if st <= sim.T:
                score = lo + (hi - lo) * float(sim.m["p"][st - 1]) * 0.97 + float(rng.normal(0, 0.03))
                sim.ev[st] = {"eval_loss": 0.0, "eval_reward": score, "eval_reward_std": 1.07,
                              f"eval_rewards/{rm}/mean": score, f"eval_rewards/{rm}/std": 1.07,
                              f"eval_rewards/{gold}/mean": v, f"eval_rewards/{gold}/std": math.sqrt(v * (1 - v)),
                              "eval_runtime": 401.2, "eval_samples_per_second": 2.49, "eval_steps_per_second": 0.156}
    return mod


def rm_score(lo, hi, name, sd=0.25):
    """Replace the 0/1 reward by a reward-model score following p (lo at p=0, hi at p=1)."""
    def mod(sim, s, rng):
        m = sim.m
        score = lo + (hi - lo) * m["p"] + rng.normal(0, sd / math.sqrt(m["batch"] / 32), sim.T)
        m["reward"], m["reward_std"] = score, np.abs(rng.normal(1.1, 0.05, sim.T))
        m["comps"] = {name: score, **dict(m.get("comps", {}))}
        m["zero_std"] = np.zeros(sim.T)
    return mod


# ========================================================================================== format helpers

def rnd(v, nd=7):
    if isinstance(v, (float, np.floating)):
        v = float(v)
        return float(f"{v:.{nd}g}") if math.isfinite(v) else v
    if isinstance(v, np.integer):
        return int(v)
    return v


def window_mean(arr, end, every, last=False):
    seg = np.asarray(arr[end - every:end], float)
    if last:
        return float(seg[-1])
    ok = seg[np.isfinite(seg)]
    return float(ok.mean()) if len(ok) else float("nan")


# ----------------------------------------------------------------------------------------------- TRL (GRPO/RLOO)

def trl_step_keys(sim, algo="grpo", clip=False):
    """Per-step TRL GRPO / RLOO (>=0.22) keys before the logging window averages them."""
    m, rng, T = sim.m, sim.rng, sim.T
    L = m["length"]
    d = {"loss": m["loss"], "grad_norm": m["grad_norm"], "learning_rate": m["lr"], "num_tokens": None,
         "completions/mean_length": L, "completions/min_length": m["length_min"],
         "completions/max_length": m["length_max"], "completions/clipped_ratio": m["clipped"],
         "completions/mean_terminated_length": L * (1 - 0.6 * m["clipped"]),
         "completions/min_terminated_length": m["length_min"],
         "completions/max_terminated_length": np.minimum(m["length_max"], m["cap"] - 1)}
    comps = m.get("comps") or {"accuracy_reward": m["reward"]}
    for name, v in comps.items():
        d[f"rewards/{name}/mean"] = v
        d[f"rewards/{name}/std"] = np.sqrt(np.clip(v * (1 - v), 0, None)) if np.nanmax(v) <= 1.0 else \
            np.abs(rng.normal(1.0, 0.05, T))
    d["reward"], d["reward_std"], d["frac_reward_zero_std"] = m["reward"], m["reward_std"], m["zero_std"]
    if "kl" in m:
        d["kl"] = m["kl"]
    d["entropy"] = m["entropy"]
    cr = m.get("clipfrac", np.zeros(T)) if clip else np.zeros(T)
    d.update({"clip_ratio/low_mean": cr * 0.4, "clip_ratio/low_min": cr * 0.1, "clip_ratio/high_mean": cr * 0.6,
              "clip_ratio/high_max": cr * 1.8, "clip_ratio/region_mean": cr, "step_time": m["step_time"]})
    d["num_tokens"] = np.cumsum(np.round((L + 150) * m["batch"])).astype(float)
    return d


LAST = ("grad_norm", "learning_rate", "num_tokens")


def trl_rows(sim, every, algo="grpo", clip=False):
    per = trl_step_keys(sim, algo, clip) if "native" not in sim.m else sim.m["native"]
    rows = []
    for end in range(every, sim.T + 1, every):
        rows.append((end, {k: window_mean(v, end, every, k in LAST) for k, v in per.items()}))
    return rows


def trl_eval_row(sim, st, key="accuracy_reward"):
    e = sim.ev.get(st)
    if e is None:
        return None
    if isinstance(e, dict):
        return dict(e)
    return {"eval_loss": 0.0, "eval_reward": e, f"eval_rewards/{key}/mean": e,
            "eval_runtime": round(float(sim.rng.uniform(150, 170)), 4), "eval_samples_per_second": 3.12,
            "eval_steps_per_second": 0.39}


def trl_history(sim, every, spe, algo="grpo", clip=False, eval_key="accuracy_reward", final=None, round_loss=True):
    hist = []
    for st, row in trl_rows(sim, every, algo, clip):
        h = {k: rnd(v) for k, v in row.items()}
        if round_loss and isinstance(h.get("loss"), float) and math.isfinite(h["loss"]):
            h["loss"] = round(h["loss"], 4)
        h["epoch"], h["step"] = st / spe, st
        hist.append(h)
        if (e := trl_eval_row(sim, st, eval_key)) is not None:
            hist.append({**{k: rnd(v) for k, v in e.items()}, "epoch": st / spe, "step": st})
    if final:
        hist.append({"epoch": sim.T / spe, "step": sim.T, "total_flos": 0.0, **final})
    return hist


def write_trl_dir(sim, d, every=10, spe=1000, ckpts=(), top_level=True, save_steps=100, eval_steps=None,
                  algo="grpo", clip=False, eval_key="accuracy_reward", final=None, epochs=1, adapter=True,
                  extra_files=None):
    """An HF/TRL output dir: checkpoint-N/ (trainer_state with history up to N, weights stubs) and the top-level
    trainer_state.json written by trainer.save_state() (with the train summary row when `final`)."""
    hist = trl_history(sim, every, spe, algo, clip, eval_key, final)

    def state(step, h):
        st = kit.trainer_state(h, step, sim.P, every, save_steps, eval_steps, step / spe, epochs,
                               training_stop=step >= sim.P)
        st["train_batch_size"] = 4
        return st

    for c in ckpts:
        cd = d / f"checkpoint-{c}"
        kit.dump_json(cd / "trainer_state.json", state(c, [x for x in hist if x["step"] <= c and "train_runtime" not in x]))
        if adapter:
            (cd / "adapter_config.json").write_text(json.dumps({"peft_type": "LORA", "r": 32, "lora_alpha": 64,
                                                                "target_modules": ["q_proj", "v_proj"]}, indent=2))
            (cd / "adapter_model.safetensors").write_bytes(b"\0" * 128)
        else:
            (cd / "config.json").write_text(json.dumps({"architectures": ["Qwen2ForCausalLM"]}, indent=2))
            (cd / "model.safetensors").write_bytes(b"\0" * 128)
        for f in ("optimizer.pt", "scheduler.pt", "rng_state.pth", "training_args.bin"):
            (cd / f).write_bytes(b"\0" * 16)
    if top_level:
        kit.dump_json(d / "trainer_state.json", state(sim.T, hist))
    for name, text in (extra_files or {}).items():
        (d / name).parent.mkdir(parents=True, exist_ok=True)
        (d / name).write_text(text)


def tqdm_bar(i, T, secs, desc=""):
    pct, el, rem = int(100 * i / T), int(i * secs), int((T - i) * secs)
    full = pct // 10
    return (f"{desc}{pct:3d}%|{'█' * full}{'▍' if pct % 10 >= 5 and full < 10 else ' ' if full < 10 else ''}"
            f"{' ' * max(0, 9 - full)}| {i}/{T} [{_interval(el)}<{_interval(rem)}, {secs:.2f}s/it]")


def _interval(t):
    """tqdm's format_interval: H:MM:SS when there are hours, else MM:SS."""
    h, m, sec = t // 3600, (t // 60) % 60, t % 60
    return f"{h:d}:{m:02d}:{sec:02d}" if h else f"{m:02d}:{sec:02d}"


def py_repr(d):
    return repr({k: (float(v) if isinstance(v, (float, np.floating)) else v) for k, v in d.items()})


def write_trl_console(sim, d, name, header, every=10, spe=1000, secs=12.0, algo="grpo", eval_key="accuracy_reward",
                      footer=()):
    """A TRL script's stdout: a tqdm bar redrawn with \\r, one dict repr per log (and per eval)."""
    lines = list(header)
    for st, row in trl_rows(sim, every, algo):
        out = {k: rnd(v) for k, v in row.items()}
        if isinstance(out.get("loss"), float) and math.isfinite(out["loss"]):
            out["loss"] = round(out["loss"], 4)
        out["epoch"] = round(st / spe, 2)
        lines.append("\r".join(tqdm_bar(j, sim.P, secs) for j in range(st - every + 1, st + 1)))
        lines.append(py_repr(out))
        if (e := trl_eval_row(sim, st, eval_key)) is not None:
            lines.append(py_repr({**{k: rnd(v) for k, v in e.items()}, "epoch": round(st / spe, 2)}))
    lines += list(footer)
    d.mkdir(parents=True, exist_ok=True)
    (d / name).write_text("\n".join(lines) + "\n")


def write_trl_tb(sim, d, logdirs, every=10, spe=1000, eval_tag="eval/reward", wall0=1.77e9, secs=20.0,
                 segments=None, host="gpu-node-07"):
    """HF TensorBoardCallback: train/<key> (rewrite_logs), eval/<key>, one runs/<date>_<host> dir per launch.
    segments: [(first_step, last_step, sim)] for a resumed run (each launch its own dir and its own values)."""
    segments = segments or [(1, sim.T, sim)]
    for (lo, hi, sg), logdir in zip(segments, logdirs, strict=True):
        events = []
        w0 = wall0 + (lo - 1) * secs + (0 if lo == 1 else 7200)
        for st, row in trl_rows(sg, every):
            if not lo <= st <= hi:
                continue
            vals = {"train/" + k: v for k, v in row.items()}
            vals["train/epoch"], vals["train/global_step"] = st / spe, st
            events.append((w0 + (st - lo) * secs, st, vals))
            if st in sg.ev:
                events.append((w0 + (st - lo) * secs + 90, st, {eval_tag: sg.ev[st], "eval/runtime": 88.2,
                                                                "eval/samples_per_second": 5.7,
                                                                "eval/steps_per_second": 0.71,
                                                                "train/epoch": st / spe}))
        kit.tb_file(d / logdir / f"events.out.tfevents.{int(w0)}.{host}.{2000 + lo % 7000}.0", events)


# ----------------------------------------------------------------------------------------------------- verl

def verl_step(sim, i, *, critic=False, dapo=False, score_override=None, kl=True):
    """One verl training row (data metrics, actor, timing) from the neutral arrays."""
    m, rng = sim.m, sim.rng
    sc = float(m["reward"][i]) if score_override is None else float(score_override[i])
    L = float(m["length"][i])
    row = {}
    if "actor_on" not in m or m["actor_on"][i]:
        row.update({"actor/entropy": m["entropy"][i], "actor/pg_loss": rng.normal(0, 0.015) + m.get("pg", np.zeros(sim.T))[i],
                    "actor/pg_clipfrac": abs(rng.normal(0.0025, 0.0008)) + m.get("clipfrac", np.zeros(sim.T))[i],
                    "actor/ppo_kl": rng.normal(0, 3e-4), "actor/pg_clipfrac_lower": 0.0,
                    "actor/grad_norm": m["grad_norm"][i], "actor/lr": float(m["lr"][i])})
        if kl and "kl" in m and not critic:
            row["actor/kl_loss"], row["actor/kl_coef"] = m["kl"][i], m.get("kl_coef", 0.001)
    if critic and "kl" in m:
        row["actor/reward_kl_penalty"], row["actor/reward_kl_penalty_coeff"] = m["kl"][i], 0.001
    row.update({"training/global_step": i + 1, "training/epoch": 0})
    if critic:
        for k in ("critic/vf_loss", "critic/vf_clipfrac", "critic/vpred_mean", "critic/grad_norm", "critic/lr"):
            row[k] = m[k][i] if isinstance(m[k], np.ndarray) else m[k]
    row.update({"critic/score/mean": sc, "critic/score/max": m.get("score_max", 1.0), "critic/score/min": m.get("score_min", 0.0),
                "critic/rewards/mean": sc - (0.0 if not critic else 0.001 * float(m.get("kl", np.zeros(sim.T))[i])),
                "critic/rewards/max": m.get("score_max", 1.0), "critic/rewards/min": m.get("score_min", 0.0),
                "critic/advantages/mean": rng.normal(0, 0.002) if not critic else rng.normal(0, 0.01),
                "critic/advantages/max": 2.47 + rng.normal(0, 0.1), "critic/advantages/min": -2.47 + rng.normal(0, 0.1),
                "critic/returns/mean": sc * (0.97 if critic else 1.0), "critic/returns/max": 1.0,
                "critic/returns/min": m.get("score_min", 0.0)})
    if critic:
        row["critic/values/mean"] = m["values_mean"][i]
        row["critic/values/max"] = m["values_mean"][i] + 2.1
        row["critic/values/min"] = m["values_mean"][i] - 2.3
        row["critic/vf_explained_var"] = m["explained_var"][i]
    row.update({"response_length/mean": L, "response_length/max": float(m["length_max"][i]),
                "response_length/min": float(m["length_min"][i]), "response_length/clip_ratio": m["clipped"][i],
                "prompt_length/mean": 118.6 + rng.normal(0, 3), "prompt_length/max": 301.0,
                "prompt_length/min": 52.0, "prompt_length/clip_ratio": 0.0})
    if dapo:
        row["train/num_gen_batches"] = int(m["gen_batches"][i])
    st = float(m["step_time"][i])
    row.update({"timing_s/gen": float(m["gen_time"][i]), "timing_s/reward": 0.9 + rng.random(),
                "timing_s/old_log_prob": 0.08 * st, "timing_s/ref": 0.07 * st, "timing_s/adv": 0.05 + 0.02 * rng.random(),
                "timing_s/update_actor": 0.2 * st, "timing_s/step": st,
                "timing_per_token_ms/gen": 1000 * float(m["gen_time"][i]) / (L * m["batch"]),
                "perf/total_num_tokens": int((L + 118) * m["batch"]), "perf/time_per_step": st,
                "perf/throughput": (L + 118) * m["batch"] / st / 8, "perf/max_memory_allocated_gb": 61.3 + rng.normal(0, .4),
                "perf/max_memory_reserved_gb": 72.0, "perf/cpu_memory_used_gb": 118.2 + rng.normal(0, 1)})
    if critic:
        row["timing_s/values"], row["timing_s/update_critic"] = 0.06 * st, 0.15 * st
    return {k: (float(v) if isinstance(v, (float, np.floating)) else int(v) if isinstance(v, np.integer) else v)
            for k, v in row.items()}


OLD_VERL_DROP = ("actor/pg_clipfrac_lower", "response_length/clip_ratio", "prompt_length/clip_ratio", "training/",
                 "perf/", "timing_per_token_ms/", "timing_s/reward", "critic/vf_explained_var")


def old_verl(row):
    """verl <= 0.3 console names: actor/entropy_loss, timing/<name>, lr printed as lr(1e-4), critic/kl(_coeff)."""
    out = {}
    for k, v in row.items():
        if v is None or k.startswith(OLD_VERL_DROP):
            continue
        if k == "actor/entropy":
            k = "actor/entropy_loss"
        elif k.startswith("timing_s/"):
            k = "timing/" + k[len("timing_s/"):]
        elif k in ("actor/lr", "critic/lr"):
            k, v = k + "(1e-4)", v / 1e-4
        elif k == "actor/reward_kl_penalty":
            k = "critic/kl"
        elif k == "actor/reward_kl_penalty_coeff":
            k = "critic/kl_coeff"
        out[k] = v
    return out


def np_repr(v):
    if isinstance(v, int):
        return f"np.int64({v})"
    return "np.float64(nan)" if not math.isfinite(v) else f"np.float64({v!r})"


def plain_repr(v):
    if isinstance(v, int):
        return str(v)
    return "nan" if not math.isfinite(v) else f"{v:.3f}"


def write_verl_console(sim, d, name, val_key, *, critic=False, dapo=False, np_style=True, pid=31877,
                       ckpt_every=None, ckpt_root="checkpoints/proj/exp", header=(), final=False, score_override=None,
                       raw_noise=True):
    fmt = np_repr if np_style else plain_repr
    pre = f"(TaskRunner pid={pid}) " if np_style else f"\x1b[36m(main_task pid={pid})\x1b[0m "
    lines = ["2026-01-19 08:02:11,903\tINFO worker.py:1852 -- Started a local Ray instance. View the dashboard at "
             "127.0.0.1:8265 ", *[pre + h for h in header], f"{pre}Size of train dataloader: 467, Size of val dataloader: 1",
             f"{pre}Total training steps: {sim.P}"]

    def val(st):
        if st not in sim.ev:
            return {}
        e = sim.ev[st]
        return dict(e) if isinstance(e, dict) else {val_key: e}

    if 0 in sim.ev:
        lines.append(pre + "step:0 - " + " - ".join(f"{k}:{fmt(v)}" for k, v in val(0).items()))
    for i in range(sim.T):
        st = i + 1
        row = {**verl_step(sim, i, critic=critic, dapo=dapo, score_override=score_override), **val(st)}
        if st in sim.ev:
            row["timing_s/testing"] = 41.7 + sim.rng.normal(0, 2)
        if not np_style:
            row = old_verl(row)
        if ckpt_every and st % ckpt_every == 0:
            row["timing_s/save_checkpoint"] = 23.4 + sim.rng.normal(0, 1)
        lines.append(pre + f"step:{st} - " + " - ".join(f"{k}:{fmt(v)}" for k, v in row.items()))
        if raw_noise and st % 37 == 11:
            lines.append(f"(WorkerDict pid={pid + 411}) INFO 01-19 09:{st % 60:02d}:41 [block_pool.py:321] "
                         "Successfully reset prefix cache")
    if final:
        last = val(sim.T)
        lines.append(f"{pre}('Final validation metrics: {last!r}')")
        lines.append(f"{pre}Training Progress: 100%|██████████| {sim.P}/{sim.P} [{sim.P * 61 // 3600}:{(sim.P * 61 // 60) % 60:02d}:14<00:00, 61.02s/it]")
    d.mkdir(parents=True, exist_ok=True)
    (d / name).write_text("\n".join(lines) + "\n")
    if ckpt_every:
        base = d / ckpt_root
        for c in range(ckpt_every, sim.T + 1, ckpt_every):
            for part in ("actor", *(["critic"] if critic else [])):
                (base / f"global_step_{c}" / part).mkdir(parents=True, exist_ok=True)
                (base / f"global_step_{c}" / part / "model_world_size_8_rank_0.pt").write_bytes(b"\0" * 32)
            (base / f"global_step_{c}" / "data.pt").write_bytes(b"\0" * 8)
        (base / "latest_checkpointed_iteration.txt").write_text(str(sim.T - sim.T % ckpt_every))


def write_verl_jsonl(sim, d, rel, val_key, *, null_every=0, critic=False):
    """verl's file logger: one {"step": N, "data": {...}} per line, NaN as null (orjson)."""
    out = []
    if 0 in sim.ev:
        out.append({"step": 0, "data": {val_key: sim.ev[0]}})
    for i in range(sim.T):
        st = i + 1
        row = verl_step(sim, i, critic=critic)
        if st in sim.ev:
            row[val_key] = sim.ev[st]
            row["timing_s/testing"] = 38.0 + sim.rng.normal(0, 2)
        if null_every and st % null_every == 0:
            row["actor/grad_norm"] = None
        out.append({"step": st, "data": row})
    p = d / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text("".join(json.dumps(o, separators=(",", ":")) + "\n" for o in out))


def write_verl_tb(sim, d, logdir, val_key, wall0=1.768e9, secs=58.0, host="h100-sxm-03"):
    events = []
    if 0 in sim.ev:
        events.append((wall0, 0, {val_key: sim.ev[0]}))
    for i in range(sim.T):
        st = i + 1
        row = verl_step(sim, i)
        if st in sim.ev:
            row[val_key] = sim.ev[st]
            row["timing_s/testing"] = 40.0
        events.append((wall0 + 60 + st * secs, st, {k: v for k, v in row.items() if v is not None}))
    kit.tb_file(d / logdir / f"events.out.tfevents.{int(wall0)}.{host}.{int(wall0) % 90000}.0", events)


# ------------------------------------------------------------------------------------------------- OpenRLHF

def openrlhf_status(sim, i, *, critic=False, entropy=False):
    m, rng = sim.m, sim.rng
    L = float(m["length"][i])
    kl = float(m["kl"][i]) if "kl" in m else 0.0
    st = {"policy_loss": rng.normal(0, 0.02) + m.get("pg", np.zeros(sim.T))[i], "actor_lr": float(m["lr"][i]),
          "ppo_clip_ratio": abs(rng.normal(0.003, 0.001)) + m.get("clipfrac", np.zeros(sim.T))[i],
          "ppo_kl": rng.normal(0, 2e-4), "vllm_kl": abs(rng.normal(1e-3, 2e-4)),
          "actor_grad_norm": float(m["grad_norm"][i])}
    if entropy:
        st["entropy_loss"] = float(m["entropy"][i])
    if critic:
        st.update({"critic_loss": float(m["critic_loss"][i]), "values": float(m["values_mean"][i]),
                   "critic_lr": float(m["critic_lr"]), "critic_grad_norm": float(m["critic_gn"][i])})
    st.update({"kl": kl, "logprobs_diff": -kl * 0.9, "reward": float(m["reward"][i]),
               "return": float(m["reward"][i]) - 0.01 * kl * L / 100, "response_length": L, "total_length": L + 131.5,
               "truncated": float(m["clipped"][i])})
    if not critic:
        st["group_reward_std"] = float(m["group_std"][i])
    st.update({"rollout/reward_mean": float(m["reward"][i]), "rollout/reward_std": float(m["reward_std"][i]),
               "rollout/response_length_mean": L, "rollout/truncated_rate": float(m["clipped"][i]),
               "rollout/num_samples": int(m["batch"]),
               "timing/generation": float(m["gen_time"][i]), "timing/make_experience": 0.18 * float(m["step_time"][i]),
               "timing/ppo_train": 0.2 * float(m["step_time"][i]), "timing/broadcast": 1.9 + rng.random() * 0.3})
    st["timing/step_total"] = st["timing/generation"] + st["timing/make_experience"] + st["timing/ppo_train"] + \
        st["timing/broadcast"]
    return {k: rnd(v) if isinstance(v, (float, np.floating)) else v for k, v in st.items()}


def openrlhf_eval(sim, st, ds):
    e = sim.ev[st]
    return {f"eval_{ds}_pass1": e, f"eval_{ds}_pass4": min(1.0, e + 0.14 + sim.rng.normal(0, 0.01)),
            f"eval_{ds}_response_length_mean": float(sim.m["length"][min(st, sim.T) - 1]) * 0.95,
            f"eval_{ds}_truncated_rate": float(sim.m["clipped"][min(st, sim.T) - 1]),
            "eval_response_length_mean": float(sim.m["length"][min(st, sim.T) - 1]) * 0.95,
            "eval_truncated_rate": float(sim.m["clipped"][min(st, sim.T) - 1]), "eval_num_samples": 2000}


def write_openrlhf_tb(sim, d, run_name, ds, *, critic=False, entropy=False, wall0=1.7712e9, secs=75.0,
                      ckpt_every=None, ckpt_path="ckpt/checkpoints_ppo"):
    events = []
    for i in range(sim.T):
        st = i + 1
        vals = {"train/" + k: v for k, v in openrlhf_status(sim, i, critic=critic, entropy=entropy).items()}
        vals["train/global_step"] = st
        events.append((wall0 + st * secs, st, vals))
        if st in sim.ev:
            events.append((wall0 + st * secs + 40, st, {"eval/" + k: v for k, v in openrlhf_eval(sim, st, ds).items()}))
    kit.tb_file(d / "tensorboard" / run_name / f"events.out.tfevents.{int(wall0)}.a100-80g-2.{int(wall0) % 50000}.0",
                events)
    openrlhf_ckpts(sim, d, ckpt_every, ckpt_path)


def openrlhf_ckpts(sim, d, every, path):
    if not every:
        return
    for c in range(every, sim.T + 1, every):
        cd = d / path / "_actor" / f"global_step{c}"
        cd.mkdir(parents=True, exist_ok=True)
        (cd / "mp_rank_00_model_states.pt").write_bytes(b"\0" * 32)
        (d / path / "_actor" / f"global_step{c}" / "client_state.json").write_text(
            json.dumps({"global_step": c, "episode": 0, "total_consumed_prompts": c * sim.m["prompts"]}))
    (d / path / "_actor" / "latest").write_text(f"global_step{sim.T - sim.T % every}")


def write_openrlhf_console(sim, d, name, ds, *, entropy=False, critic=False, header=(), ckpt_every=None,
                           ckpt_path="ckpt/checkpoints_grpo", secs=52.0):
    lines = list(header)
    t0 = 1771300000
    for i in range(sim.T):
        st = i + 1
        status = openrlhf_status(sim, i, critic=critic, entropy=entropy)
        stamp = _stamp(t0 + st * secs)
        lines.append(f"Episode [1/1]:  {100 * st // sim.P:2d}%|{'█' * (10 * st // sim.P):<10}| {st}/{sim.P} "
                     f"[{int(st * secs) // 3600}:{int(st * secs) // 60 % 60:02d}:{int(st * secs) % 60:02d}<?, "
                     f"{secs:.2f}s/it, policy_loss={status['policy_loss']:.3f}, reward={status['reward']:.3f}, "
                     f"kl={status['kl']:.4f}, response_length={status['response_length']:.1f}]")
        lines.append(f"(PPOTrainer pid=48211) [{stamp}] [INFO] [ppo_trainer.py:409:fit] ✨ Global step {st}: {status!r}")
        if st in sim.ev:
            ev = {k: rnd(v) for k, v in openrlhf_eval(sim, st, ds).items()}
            lines.append(f"(PPOTrainer pid=48211) [{_stamp(t0 + st * secs + 35)}] [INFO] [ppo_trainer.py:468:evaluate] "
                         f"📊 Evaluation completed in 34.12 seconds, global_step {st}, eval_metrics: {ev!r}")
        if ckpt_every and st % ckpt_every == 0:
            lines.append(f"(PPOTrainer pid=48211) [{_stamp(t0 + st * secs + 50)}] [INFO] [deepspeed_strategy.py:512:"
                         f"save_ckpt] Saving checkpoint to {ckpt_path}/_actor/global_step{st}")
    d.mkdir(parents=True, exist_ok=True)
    (d / name).write_text("\n".join(lines) + "\n")
    openrlhf_ckpts(sim, d, ckpt_every, ckpt_path)


def _stamp(t):
    import datetime as dt
    x = dt.datetime.fromtimestamp(t, dt.UTC)
    return x.strftime("%Y-%m-%d %H:%M:%S") + f",{int((t % 1) * 1000):03d}"


# --------------------------------------------------------------------------------------------------- NeMo-RL

def nemo_row(sim, i):
    m, rng = sim.m, sim.rng
    st = float(m["step_time"][i])
    row = {"train/reward": m["reward"][i], "train/loss": rng.normal(0, 0.004), "train/grad_norm": m["grad_norm"][i],
           "train/lr": m["lr"][i], "train/wd": 0.01, "train/kl_penalty": m["kl"][i] if "kl" in m else 0.0,
           "train/approx_entropy": m["entropy"][i], "train/probs_ratio": 1.0 + rng.normal(0, 2e-4),
           "train/probs_ratio_clamped": 1.0 + rng.normal(0, 1e-4),
           "train/token_mult_prob_error": 1.003 + abs(rng.normal(0, 6e-4)),
           "train/gen_kl_error": abs(rng.normal(2e-4, 5e-5)), "train/advantages/mean": rng.normal(0, 1e-3),
           "train/advantages/max": 2.6 + rng.normal(0, .1), "train/advantages/min": -2.6 + rng.normal(0, .1),
           "train/baseline_reward/pct_0": m["pct0"][i], "train/baseline_reward/pct_1": m["pct1"][i],
           "train/baseline_reward/pct_mixed": 100 - m["pct0"][i] - m["pct1"][i],
           "train/mean_gen_tokens_per_sample": m["length"][i], "train/max_gen_tokens_per_sample": m["length_max"][i],
           "train/truncation_rate": m["clipped"][i], "train/natural_termination_rate": 1 - m["clipped"][i],
           "train/num_valid_samples": m["batch"], "train/global_valid_seqs": m["batch"],
           "timing/train/total_step_time": st, "timing/train/generation": float(m["gen_time"][i]),
           "timing/train/policy_training": 0.22 * st, "timing/train/policy_and_reference_logprobs": 0.1 * st,
           "timing/train/reward_calculation": 0.6 + rng.random() * 0.2, "timing/train/advantage_calculation": 0.02,
           "timing/train/prepare_for_generation/transfer_and_update_weights": 2.1 + rng.random() * 0.4,
           "performance/tokens_per_sec_per_gpu": (m["length"][i] + 140) * m["batch"] / st / 8}
    return {k: float(v) for k, v in row.items()}


def nemo_events(sim, lo, hi, wall0, secs, val_every_key="validation/accuracy"):
    ev = []
    if lo == 1 and 0 in sim.ev:
        ev.append((wall0, 0, {val_every_key: sim.ev[0], "validation/avg_length": float(sim.m["length"][0])}))
    for i in range(lo - 1, hi):
        st = i + 1
        ev.append((wall0 + (st - lo + 1) * secs, st, nemo_row(sim, i)))
        if st in sim.ev:
            ev.append((wall0 + (st - lo + 1) * secs + 30, st, {
                val_every_key: sim.ev[st], "validation/avg_length": float(sim.m["length"][i]) * 0.97,
                "validation/pass_k": min(1.0, sim.ev[st] + 0.17), "timing/validation/total_validation_time": 61.0}))
    return ev


def resampled(sim, lo, hi):
    """A relaunch re-runs steps lo..hi after restoring a checkpoint: same policy, new rollouts (fresh noise)."""
    rng = sim.rng
    m = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in sim.m.items()}
    idx = np.arange(lo - 1, min(hi, sim.T))
    n = m["batch"]
    m["reward"][idx] = rng.binomial(n, np.clip(m["reward"][idx], 0, 1)) / n
    for k in ("entropy", "length", "grad_norm", "step_time", "gen_time"):
        m[k][idx] = m[k][idx] * np.exp(rng.normal(0, 0.04, len(idx)))
    for k in ("pct0", "pct1"):
        m[k][idx] = np.clip(m[k][idx] + rng.normal(0, 2.0, len(idx)), 0, 100)
    return Sim(sim.T, sim.P, m, dict(sim.ev), rng)


def write_nemo_tb(sim, d, segments=None, wall0=1.7725e9, secs=44.0, ckpts=(), ckpt_dir="results/grpo",
                  host="dgx-h100-17", config=None):
    """NeMo-RL: logs/exp_NNN/tensorboard/events..., a new exp_NNN per launch (a resume opens the next one);
    checkpoints <ckpt_dir>/step_N/ with training_info.json."""
    segments = segments or [(1, sim.T)]
    prev_hi = 0
    for n, (lo, hi) in enumerate(segments, start=1):
        w0 = wall0 + (lo - 1) * secs + (n - 1) * 5400
        seg = resampled(sim, lo, prev_hi) if lo <= prev_hi else sim
        kit.tb_file(d / "logs" / f"exp_{n:03d}" / "tensorboard" / f"events.out.tfevents.{int(w0)}.{host}.{31000 + n}.0",
                    nemo_events(seg, lo, hi, w0, secs))
        prev_hi = hi
        if config:
            (d / "logs" / f"exp_{n:03d}" / "config.yaml").write_text(config)
    for c in ckpts:
        cd = d / ckpt_dir / f"step_{c}"
        (cd / "policy" / "weights").mkdir(parents=True, exist_ok=True)
        (cd / "policy" / "weights" / "model.safetensors").write_bytes(b"\0" * 32)
        (cd / "training_info.json").write_text(json.dumps({"step": c, "total_steps": c, "consumed_samples": c * 512,
                                                          "val_reward": sim.ev.get(c)}))
        (cd / "config.yaml").write_text(f"grpo:\n  max_num_steps: {sim.P:d}\n")


# ------------------------------------------------------------------------------------ plain scripts (CSV, JSONL)

def write_plain_csv(sim, d, name):
    m = sim.m
    hdr = "global_step,reward_raw,reward_ema,kl_to_ref,entropy,resp_len,lr,val_acc"
    lines = [hdr]
    ema = float(m["reward"][0])
    for i in range(sim.T):
        st = i + 1
        ema = 0.98 * ema + 0.02 * float(m["reward"][i])
        va = sim.ev.get(st)
        lines.append(f"{st},{m['reward'][i]:.4f},{ema:.4f},{m['kl'][i]:.5f},{m['entropy'][i]:.4f},"
                     f"{m['length'][i]:.1f},{m['lr'][i]:.3e},{'' if va is None else f'{va:.4f}'}")
    d.mkdir(parents=True, exist_ok=True)
    (d / name).write_text("\n".join(lines) + "\n")


# ============================================================================================ special runs
# Runs whose metrics are not policy-gradient groups: preference optimisation and critic-based PPO.

def dpo_native(rng, T, *, acc, margin, chosen, beta=0.1, lr, gn=(5.0, 0.4), batch=64, extra=None):
    """TRL DPO per-step keys from curves of the step: train accuracy, margin (implicit reward), chosen reward."""
    s = np.arange(1, T + 1, dtype=float)
    scale = np.clip(np.abs(margin(s)) / 0.3, 0.03, 1.0)          # the policy starts at the reference
    mg = margin(s) + rng.normal(0, 0.18, T) * np.sqrt(64 / batch) * scale
    ch = chosen(s) + rng.normal(0, 0.12, T) * scale
    loss = np.log1p(np.exp(-mg * 1.0)) + rng.normal(0, 0.035, T) * scale
    loss = np.maximum(loss, 0.002)
    a = np.clip(rng.binomial(batch, np.clip(acc(s), 0, 1)) / batch, 0, 1)
    lp_c = -310 + ch / beta * 0.02 + rng.normal(0, 18, T)
    lp_r = lp_c - 35 - mg / beta * 0.3 + rng.normal(0, 18, T)
    m = {"loss": loss, "grad_norm": rng.lognormal(math.log(gn[0]), gn[1], T), "learning_rate": lr(s),
         "rewards/chosen": ch, "rewards/rejected": ch - mg, "rewards/accuracies": a, "rewards/margins": mg,
         "logps/chosen": lp_c, "logps/rejected": lp_r, "logits/chosen": -1.9 + rng.normal(0, 0.15, T),
         "logits/rejected": -2.0 + rng.normal(0, 0.15, T)}
    if extra:
        m.update(extra(s, m))
    return m


def dpo_run(native, evals):
    """native(rng, T) -> TRL keys; evals(rng, T) -> {step: {eval_* keys}}."""
    def make(rng, T, P):
        return Sim(T, P, {"native": native(rng, T)}, evals(rng, T), rng)
    return make


def ppo_critic(p, *, ev_curve, ev_every, ev_n=1319, warmup=0, ev_from0=True, evar=None, vf_loss=None,
               values=None, length=LEN_260, ent=ENT_048, kl=KL_0, critic_lr=1e-5, prompts=256,
               lr=LR_1E6):
    """verl PPO with a GAE critic: one sample per prompt (n=1), so reward is a binomial mean of `prompts`."""
    def make(rng, T, P):
        s = np.arange(1, T + 1, dtype=float)
        base = grpo(p, prompts=prompts, G=1, kappa=50, drift=(0.8, 0.01), ent=ent, kl=kl, length=length, cap=512,
                    lr=lr, gn=1.6, ev=None)(rng, T, P)
        m = base.m
        m["actor_on"] = s >= warmup
        m["critic/vf_loss"] = vf_loss(s) * np.exp(rng.normal(0, 0.12, T))
        m["critic/vf_clipfrac"] = np.clip(0.35 * np.exp(-s / 30) + 0.02 + rng.normal(0, 0.005, T), 0, 1)
        m["critic/vpred_mean"] = values(s) + rng.normal(0, 0.03, T)
        m["critic/grad_norm"] = rng.lognormal(math.log(40), 0.5, T) * (1 + 15 * np.exp(-s / 10))
        m["critic/lr"] = critic_lr
        m["values_mean"] = m["critic/vpred_mean"] - 0.02
        m["explained_var"] = np.clip(evar(s) + rng.normal(0, 0.04, T), -5, 1)
        base.ev = {}
        first = 0 if ev_from0 else ev_every
        for st in range(first, T + 1, ev_every):
            base.ev[st] = float(rng.binomial(ev_n, float(np.clip(ev_curve(st), 0, 1))) / ev_n)
        return base
    return make


# ============================================================================================ writers, bound

trl_dir, trl_console, trl_tb, verl_console, verl_jsonl, verl_tb, orl_tb, orl_console, nemo_tb, plain_csv = (
    kit.writer(w) for w in (write_trl_dir, write_trl_console, write_trl_tb, write_verl_console, write_verl_jsonl,
                            write_verl_tb, write_openrlhf_tb, write_openrlhf_console, write_nemo_tb, write_plain_csv))


def custom(fn):
    """A one-off writer: fn(sim, folder)."""
    return lambda *a, **k: (lambda run, folder: fn(run, folder, *a, **k))


# ------------------------------------------------------------------------------------------ one-off writers

def write_openrlhf_dpo_tb(sim, d):
    """OpenRLHF DPO: train/{loss,acc,chosen_reward,reject_reward,loss_mean,acc_mean,lr,...}, eval/{eval_loss,acc_mean}."""
    n = sim.m["native"]
    events = []
    w0 = 1.7718e9
    for i in range(sim.T):
        st = i + 1
        if st % 5:
            continue
        events.append((w0 + st * 9.1, st, {"train/" + k: float(v[i]) for k, v in n.items()} |
                       {"train/global_step": st}))
        if st in sim.ev:
            events.append((w0 + st * 9.1 + 30, st, {"eval/" + k: v for k, v in sim.ev[st].items()}))
    kit.tb_file(d / "logs" / "tensorboard" / "llama3-8b-dpo-ultrafeedback" /
                f"events.out.tfevents.{int(w0)}.node-a100-4.{int(w0) % 40000}.0", events)
    (d / "train_dpo_llama3.sh").write_text(
        "deepspeed --module openrlhf.cli.train_dpo \\\n   --save_path ./checkpoint/llama3-8b-dpo \\\n"
        "   --save_steps -1 \\\n   --logging_steps 5 \\\n   --eval_steps 100 \\\n   --train_batch_size 128 \\\n"
        "   --micro_train_batch_size 1 \\\n   --pretrain OpenRLHF/Llama-3-8b-sft-mixture \\\n   --bf16 \\\n"
        "   --max_epochs 3 \\\n   --max_len 8192 \\\n   --zero_stage 3 \\\n   --learning_rate 5e-10 \\\n   --beta 0.1 \\\n"
        "   --dataset OpenRLHF/preference_dataset_mixture2_and_safe_pku \\\n   --apply_chat_template \\\n"
        "   --chosen_key chosen \\\n   --rejected_key rejected \\\n   --flash_attn \\\n   --gradient_checkpointing \\\n"
        "   --use_tensorboard logs/tensorboard\n")


def write_plain_jsonl_long(sim, d):
    """A home-made loop: train rows every 50 steps, eval rows every 2500, both in metrics.jsonl."""
    m, out = sim.m, []
    for st in range(50, sim.T + 1, 50):
        i = st - 1
        out.append({"step": st, "split": "train", "reward": round(float(m["reward"][i]), 4),
                    "kl": round(float(m["kl"][i]), 5), "entropy": round(float(m["entropy"][i]), 4),
                    "resp_tokens": round(float(m["length"][i]), 1), "lr": float(f"{m['lr'][i]:.4g}"),
                    "grad_norm": round(float(m["grad_norm"][i]), 4), "time": round(1.7693e9 + st * 14.2, 1)})
        if st in sim.ev:
            out.append({"step": st, "split": "eval", "pass@1": sim.ev[st], "n": 1000,
                        "time": round(1.7693e9 + st * 14.2 + 300, 1)})
    d.mkdir(parents=True, exist_ok=True)
    (d / "metrics.jsonl").write_text("".join(json.dumps(o) + "\n" for o in out))
    (d / "config.json").write_text(json.dumps({
        "algo": "grpo", "model": "Qwen2.5-Math-7B", "total_steps": sim.P, "log_every": 50, "eval_every": 2500,
        "save_every": 2500, "save_dir": "s3://team-rl/ckpts/grpo-math7b-long/", "beta": 0.001, "group_size": 8,
        "lr": 5e-7}, indent=2))


# ============================================================================== scenario helpers used below

def _with_critic_openrlhf(sim, rng):
    """Critic metrics for an OpenRLHF PPO run: value loss falls, values track the reward."""
    T, s = sim.T, np.arange(1, sim.T + 1, dtype=float)
    m = sim.m
    m["critic_loss"] = (0.05 + 0.2 * np.exp(-s / 40)) * np.exp(rng.normal(0, 0.15, T))
    m["values_mean"] = 0.9 * m["p"] - 0.05 + rng.normal(0, 0.02, T)
    m["critic_lr"] = 9e-6
    m["critic_gn"] = rng.lognormal(math.log(3.0), 0.4, T) * (1 + 4 * np.exp(-s / 30))
    m["kl"] = m.get("kl", np.zeros(T))
    return sim


def _dapo_filter(sim, rng, batch_prompts=512, max_batches=10):
    """DAPO dynamic sampling: the kept batch contains only mixed groups, so its score is the mean of mixed groups;
    num_gen_batches = rounds needed to collect batch_prompts mixed groups."""
    m = sim.m
    k, G = m["succ"], m["G"]
    mixed = (k > 0) & (k < G)
    frac = np.maximum(mixed.mean(1), 1e-3)
    score = np.array([(row[mk].mean() / G) if mk.any() else 0.5 for row, mk in zip(k, mixed, strict=True)])
    m["reward"] = score
    need = 1.0 / (3.0 * frac) * rng.uniform(0.9, 1.1, sim.T)   # gen_prompt_bsz = 3 x train_prompt_bsz
    m["gen_batches"] = np.clip(np.ceil(need), 1, max_batches).astype(int)
    m["gen_time"] = m["gen_time"] * m["gen_batches"]
    m["step_time"] = m["step_time"] + m["gen_time"] * 0.4
    m["score_min"] = 0.0
    return sim


def _dapo_collapse(rng, T, P):
    p = knots((0, .25), (200, .50), (330, .58), (420, .56), (520, .52))
    sim = grpo(p, prompts=512, G=16, kappa=2.0, kl=None,
               ent=knots((0, .52), (330, .50), (380, .12), (430, .06), (520, .05)),
               length=knots((0, 900), (330, 1350), (430, 900), (520, 820)), cap=8192,
               lr=const(1e-6), ev=knots((0, .20), (200, .40), (280, .46), (330, .455), (400, .41), (520, .36)),
               ev_n=2000, ev_every=20, ev_from=0)(rng, T, P)
    # low entropy makes groups identical: rebuild the groups with a concentration that grows as entropy collapses
    s = np.arange(1, T + 1, dtype=float)
    kap = np.interp(s, [0, 330, 430, 520], [2.0, 2.0, 0.06, 0.03])
    pp = np.clip(p(s) + ar1(rng, T, 0.9, 0.015), 0.001, 0.999)
    ks = []
    for i in range(T):
        q = rng.beta(max(kap[i] * pp[i], 1e-3), max(kap[i] * (1 - pp[i]), 1e-3), 512)
        ks.append(rng.binomial(16, q))
    sim.m["succ"] = np.array(ks)
    return sim


def _zero_grad(sim):
    """No signal: loss and grad norm are exactly 0 when every group is all-zero (TRL logs 0.0)."""
    m = sim.m
    dead = m["zero_std"] >= 0.999
    m["loss"] = np.where(dead, 0.0, m["loss"])
    m["grad_norm"] = np.where(dead, 0.0, m["grad_norm"])
    return sim


def _kl_drift(sim):
    sim.m["kl_coef"] = 0.0005
    return sim


def _length_penalty(sim, per_1000):
    """critic/score = correctness - per_1000 x tokens / 1000 (validation reports the correctness `acc`)."""
    m = sim.m
    m["reward"] = m["reward"] - per_1000 * m["length"] / 1000
    m["score_min"], m["score_max"] = -1.0, 0.99
    return sim


def _resume_rewarm(rng, T, P):
    """Two segments: launch 1 (steps 1-700, healthy), launch 2 (resumed at 600, LR re-warmed to 3e-6, decline)."""
    a = grpo(knots((0, .30), (400, .60), (700, .665)), prompts=64, G=8, kl=knots((0, 0), (700, .02)),
             ent=knots((0, .5), (700, .40)), length=const(450), cap=1536, lr=warm_cos(1e-6, 40, 2000),
             ev=knots((0, .33), (400, .47), (600, .515), (700, .52)), ev_n=1000, ev_every=100)(rng, 700, P)
    def lr2(s):
        return np.where(np.asarray(s) <= 600, warm_cos(1e-6, 40, 2000)(s),
                                 np.interp(np.asarray(s, float), [600, 640, 2000], [7.5e-7, 3e-6, 2e-6]))
    b = grpo(knots((0, .30), (400, .60), (620, .655), (700, .62), (850, .55), (1100, .50)), prompts=64, G=8,
             kl=knots((0, 0), (600, .018), (650, .05), (1100, .22)), ent=knots((0, .5), (600, .41), (700, .52), (1100, .66)),
             length=knots((0, 450), (640, 450), (1100, 640)), cap=1536, lr=lr2, gn=0.12,
             ev=knots((0, .33), (600, .515), (650, .51), (700, .49), (800, .46), (1100, .42)), ev_n=1000,
             ev_every=100, mods=[bump("grad_norm", knots((0, 1), (620, 1), (680, 3.5), (1100, 2.5)), mult=True)])(rng, T, P)
    b.m["_a"] = a
    return b


def _write_resume_rewarm(sim, d):
    a = sim.m["_a"]
    write_trl_tb(sim, d, ["runs/Mar03_10-12-44_gpu-node-12", "runs/Mar05_02-40-09_gpu-node-12"], every=10,
                 spe=2000, segments=[(1, 700, a), (601, 1100, sim)], wall0=1.7725e9, secs=36.0, host="gpu-node-12")
    # checkpoints written by the two launches: 200-600 hold launch-1 history, 800 and 1000 the restored + new one
    hist_a = trl_history(a, 10, 2000)
    hist_b = trl_history(sim, 10, 2000)
    for c in (200, 400, 600, 800, 1000):
        h = [x for x in hist_a if x["step"] <= min(c, 600)] + ([x for x in hist_b if 600 < x["step"] <= c] if c > 600 else [])
        st = kit.trainer_state(h, c, sim.P, 10, 200, 100, c / 2000, 1)
        kit.dump_json(d / f"checkpoint-{c}" / "trainer_state.json", st)
        (d / f"checkpoint-{c}" / "adapter_model.safetensors").write_bytes(b"\0" * 64)
        (d / f"checkpoint-{c}" / "scheduler.pt").write_bytes(b"\0" * 16)


# ================================================================================================ the cases

GRPO_TRL_HEAD = ["=== grpo_train.py  HOST=gpu-node-07  START=Tue Feb 10 09:14:03 UTC 2026 ===",
                 "2026-02-10 09:14:09,812 [INFO] __main__: model=Qwen/Qwen2.5-Math-1.5B num_generations=16 "
                 "per_device_train_batch_size=16 max_steps=1000 beta=0.0 logging_steps=5",
                 "2026-02-10 09:14:21,402 [INFO] __main__: reward_funcs=[accuracy_reward] dataset=olympiad-hard "
                 "(4,096 prompts)"]
DPO_HEAD = ["2026-02-21 17:40:12,119 [INFO] train_dpo: model=meta-llama/Llama-3.1-8B-Instruct beta=0.1 lr=5e-7 "
            "warmup_ratio=0.1 lr_scheduler_type=cosine max_steps=1000 logging_steps=10 eval_steps=100",
            "2026-02-21 17:40:14,551 [INFO] train_dpo: train pairs: 64,000  eval pairs: 2,000"]


def dpo_healthy_slow():
    """DPO with a long warmup and beta 0.1: loss sits at ln 2 while the LR ramps, then falls."""
    def native(rng, T):
        return dpo_native(rng, T, acc=knots((0, .5), (60, .51), (150, .62), (300, .72), (1000, .8)),
                          margin=knots((0, 0), (60, .01), (150, .16), (300, .48), (1000, 1.3)),
                          chosen=knots((0, 0), (300, -.08), (1000, -.3)), lr=warm_cos(5e-7, 100, 1000), batch=64)

    def evals(rng, T):
        out = {}
        for st, (loss, a, mg) in {100: (.6912, .52, .02), 200: (.6601, .61, .14), 300: (.6072, .68, .33)}.items():
            if st <= T:
                out[st] = {"eval_loss": round(loss + rng.normal(0, .002), 4),
                           "eval_rewards/accuracies": round(a + rng.normal(0, .006), 4),
                           "eval_rewards/margins": round(mg + rng.normal(0, .01), 4),
                           "eval_rewards/chosen": round(-0.05 * st / 300, 4),
                           "eval_rewards/rejected": round(-0.05 * st / 300 - mg, 4),
                           "eval_runtime": 212.7, "eval_samples_per_second": 9.40, "eval_steps_per_second": 0.294}
        return out
    return dpo_run(native, evals)


def dpo_multiepoch(spe=313):
    """3 epochs of DPO: a staircase in train loss at each epoch start, eval best at the end of epoch 1."""
    def native(rng, T):
        def mg_curve(s_):
            return np.interp(s_, [0, spe, spe + 1, 2 * spe, 2 * spe + 1, 3 * spe],
                                                [0, 1.0, 2.4, 3.6, 5.6, 7.4])
        def acc_curve(s_):
            return np.interp(s_, [0, spe, spe + 1, 2 * spe, 2 * spe + 1, 3 * spe],
                                                 [.5, .73, .88, .93, .98, .995])
        return dpo_native(rng, T, acc=acc_curve, margin=mg_curve,
                          chosen=lambda s_: np.interp(s_, [0, spe, 2 * spe, 3 * spe], [0, -.3, -1.4, -3.2]),
                          lr=warm_cos(5e-7, 30, 3 * spe), batch=32, gn=(9.0, 0.5),
                          extra=lambda s_, mm: {})

    def evals(rng, T):
        curve_l = knots((0, .693), (100, .62), (200, .565), (300, .548), (400, .562), (500, .589), (600, .618),
                        (700, .662), (800, .70), (900, .736), (939, .745))
        curve_a = knots((0, .5), (100, .63), (200, .685), (300, .702), (400, .699), (500, .688), (600, .679),
                        (700, .667), (800, .659), (900, .651), (939, .65))
        out = {}
        for st in [*range(100, T + 1, 100), T]:
            out[st] = {"eval_loss": round(float(curve_l(st)) + rng.normal(0, .003), 4),
                       "eval_rewards/accuracies": round(float(curve_a(st)) + rng.normal(0, .003), 4),
                       "eval_rewards/margins": round(0.4 + 0.004 * st, 4), "eval_runtime": 96.3,
                       "eval_samples_per_second": 20.77, "eval_steps_per_second": 0.649}
        return out
    return dpo_run(native, evals)


def orpo_healthy():
    """TRL ORPO (lambda 0.1): nll falls, log-odds ratio rises, eval loss keeps falling at epoch 1.2 of 3."""
    def native(rng, T):
        s = np.arange(1, T + 1, dtype=float)
        nll = knots((0, 1.42), (300, 1.28), (800, 1.20), (1200, 1.16), (3000, 1.10))(s) + rng.normal(0, 0.05, T)
        lor = knots((0, 0.05), (300, 0.42), (800, 0.78), (1200, 0.96), (3000, 1.4))(s) + rng.normal(0, 0.18, T)
        loc = -np.log1p(np.exp(-lor))
        lp_c = -nll * 0.92 + rng.normal(0, 0.03, T)
        lp_r = lp_c - 0.08 - 0.25 * lor / 1.4 + rng.normal(0, 0.03, T)
        acc = rng.binomial(32, np.clip(knots((0, .52), (300, .6), (800, .66), (1200, .69))(s), 0, 1)) / 32
        return {"loss": nll - 0.1 * loc, "grad_norm": rng.lognormal(math.log(2.4), 0.3, T),
                "learning_rate": warm_cos(8e-6, 100, 3000)(s), "rewards/chosen": 0.1 * lp_c,
                "rewards/rejected": 0.1 * lp_r, "rewards/accuracies": acc, "rewards/margins": 0.1 * (lp_c - lp_r),
                "logps/rejected": lp_r, "logps/chosen": lp_c, "logits/rejected": -0.71 + rng.normal(0, .1, T),
                "logits/chosen": -0.68 + rng.normal(0, .1, T), "nll_loss": nll, "log_odds_ratio": lor,
                "log_odds_chosen": loc}

    def evals(rng, T):
        el = knots((0, 1.46), (200, 1.36), (400, 1.30), (600, 1.27), (800, 1.25), (1000, 1.235), (1200, 1.222))
        ea = knots((0, .53), (200, .58), (400, .62), (600, .645), (800, .66), (1000, .672), (1200, .683))
        return {st: {"eval_loss": round(float(el(st)) + rng.normal(0, .002), 4),
                     "eval_rewards/accuracies": round(float(ea(st)) + rng.normal(0, .004), 4),
                     "eval_log_odds_ratio": round(0.8 * float(ea(st)) - 0.3, 4), "eval_nll_loss": round(float(el(st)) - 0.06, 4),
                     "eval_runtime": 61.9, "eval_samples_per_second": 16.15, "eval_steps_per_second": 0.517}
                for st in range(200, T + 1, 200)}
    return dpo_run(native, evals)


def openrlhf_dpo_stuck():
    def make(rng, T, P):
        s = np.arange(1, T + 1, dtype=float)
        acc = rng.binomial(128, 0.5, T) / 128
        ch = rng.normal(0, 0.0015, T)
        rj = ch + rng.normal(0, 0.0012, T)
        loss = np.log(2) + (rj - ch) * 0.5 + rng.normal(0, 0.0003, T)
        n = {"loss": loss, "acc": acc, "chosen_reward": ch, "reject_reward": rj,
             "loss_mean": np.log(2) + rng.normal(0, 0.00012, T), "acc_mean": 0.5 + rng.normal(0, 0.01, T),
             "lr": warm_cos(5e-10, 30, P)(s)}
        ev = {st: {"eval_loss": round(math.log(2) + float(rng.normal(0, 0.00008)), 6),
                   "acc_mean": round(0.5 + float(rng.normal(0, 0.004)), 4)} for st in range(100, T + 1, 100)}
        return Sim(T, P, {"native": n}, ev, rng)
    return make


def ppo_gae_rloo_kl_spike():
    """TRL RLOO (beta 0.05, num_iterations 2): a sudden KL / clip / entropy spike at 455 that never heals."""
    spike = 455

    def post(sim, s, rng):
        m = sim.m
        after = s >= spike
        hit = np.clip((s - spike + 1) / 6, 0, 1)
        m["kl"] = m["kl"] + 2.2 * hit * (0.85 + 0.15 * np.exp(-(s - spike).clip(0) / 40))
        m["entropy"] = m["entropy"] + 1.1 * hit
        m["clipfrac"] = 0.008 + 0.004 * rng.random(sim.T) + 0.17 * hit * np.exp(-(s - spike).clip(0) / 60)
        m["grad_norm"] = m["grad_norm"] * (1 + 25 * hit * np.exp(-(s - spike).clip(0) / 12)) * (1 + 1.5 * after)
        m["length"] = np.where(after, m["length"] * (1 + 0.9 * hit), m["length"])
        m["clipped"] = np.clip((m["length"] / m["cap"]) ** 4, 0, 1)
        m["comps"] = {"correctness": m["reward"]}
    return grpo(knots((0, .35), (150, .5), (400, .63), (454, .635), (462, .3), (600, .29)), prompts=32, G=4,
                kl=knots((0, 0.001), (400, 0.075), (454, 0.082)), ent=knots((0, .62), (450, .48)),
                length=knots((0, 210), (450, 260)), cap=512, lr=warm_cos(1e-6, 30, 1500), gn=0.3, mods=[post])


CASES = [
    # ================================================================================ healthy: continue
    Case("h4-ok-openrlhf-ppo-critic-tb",
         lambda rng, T, P: _with_critic_openrlhf(grpo(
             knots((0, .34), (120, .52), (320, .66), (900, .74)), prompts=128, G=1, kappa=40, drift=(0.8, 0.01),
             kl=knots((0, 0), (320, 0.035)), length=knots((0, 190), (320, 235)), cap=1024,
             lr=warm_cos(5e-7, 15, 937), ev=knots((0, .36), (120, .52), (320, .63), (937, .70)), ev_n=1319,
             ev_every=20)(rng, T, P), rng),
         orl_tb("qwen2.5-1.5b-ppo-gsm8k", "gsm8k", critic=True, ckpt_every=100), 4001, (320, 937), HEALTHY,
         "openrlhf ppo critic tensorboard value_loss",
         "OpenRLHF PPO with a GAE critic on GSM8K, TensorBoard under tensorboard/<run_name> (train/*, eval/*). "
         "Reward 0.36 -> ~0.65 and still rising at 320/937, eval_gsm8k_pass1 every 20 steps climbs 0.40 -> ~0.63 "
         "(sd ~0.013 on 1319 items), the critic's loss falls from ~0.25 to ~0.05 while its values track the rising "
         "return, KL creeps to ~0.035 with the reward. Healthy early-middle run: continue."),
    Case("h4-ok-nemo-warmup-cosine-tb",
         grpo(knots((0, .28), (50, .285), (120, .36), (260, .47), (1000, .62)), prompts=64, G=8,
              kl=knots((0, 0), (50, .0004), (260, .006)), ent=knots((0, .52), (260, .46)),
              length=knots((0, 610), (260, 690)), cap=2048, lr=warm_cos(3e-6, 50, 1000),
              ev=knots((0, .30), (50, .30), (120, .35), (260, .45)), ev_n=500, ev_every=20, ev_from=0),
         nemo_tb(), 4002, (260, 1000), HEALTHY,
         "nemo_rl grpo tensorboard lr_warmup cosine flat_start lookalike_no_learning",
         "NeMo-RL GRPO (logs/exp_001/tensorboard). The LR warms up linearly over 50 steps (train/lr 0 -> 3e-6) and the "
         "reward sits flat at ~0.26-0.28 during warmup, then rises steadily to ~0.46 by step 260; validation/accuracy "
         "(every 20 from step 0, 500 items) holds ~0.31-0.33 through warmup, then climbs to ~0.47. Entropy and lengths are stable, pct_mixed healthy. "
         "The flat start is the warmup, not a dead run: continue (260/1000)."),
    Case("h4-ok-nemo-resume-exp-dirs",
         grpo(knots((0, .41), (200, .55), (400, .62), (720, .69), (1500, .74)), prompts=64, G=16, kappa=3,
              kl=knots((0, 0), (720, .012)), ent=knots((0, .5), (720, .41)), length=knots((0, 480), (720, 560)),
              cap=4096, lr=warm_cos(1e-6, 20, 1500, floor=.1),
              ev=knots((0, .43), (200, .55), (400, .60), (720, .66)), ev_n=1000, ev_every=40, ev_from=0),
         nemo_tb(segments=[(1, 437), (401, 720)], ckpts=(200, 400, 600)), 4003, (720, 1500), HEALTHY,
         "nemo_rl grpo tensorboard resume duplicate_steps exp_dirs checkpoints",
         "NeMo-RL GRPO resumed after a crash: logs/exp_001 covers steps 0-437, the relaunch restored "
         "results/grpo/step_400 and logs into a new logs/exp_002 from step 401 to 720, so 401-437 appear twice "
         "(different samples). Across both segments reward climbs 0.39 -> ~0.70 and validation (every 40, 1000 "
         "items) 0.40 -> ~0.64 with no break at the resume. Healthy, 720/1500: continue."),
    Case("h4-ok-verl-rloo-noisy-jsonl",
         grpo(knots((0, .20), (450, .36), (1400, .5)), prompts=32, G=4, kappa=1.6, drift=(0.95, 0.03),
              kl=knots((0, 0), (450, .004)), ent=knots((0, .71), (450, .63)), length=const(380), cap=1024,
              lr=const(1e-6), ev=knots((0, .22), (450, .345)), ev_n=500, ev_every=25, ev_from=0),
         verl_jsonl("rloo_math/qwen2.5-0.5b_rloo_n4.jsonl", "val-core/lighteval/MATH/acc/mean@1"), 4004, (450, 1400),
         HEALTHY, "verl rloo verl_jsonl heavy_noise slow_learner lookalike_no_learning",
         "verl file logger (JSONL) for an RLOO run with 32 prompts x 4 samples: critic/score/mean is very noisy "
         "(step-to-step sd ~0.06 with slow autocorrelated swings) and gains only ~0.2 (0.15 -> ~0.36) in 450 steps, "
         "but the trend is real and validation (every 25, 500 MATH problems, sd ~0.02) rises ~0.25 -> ~0.35. Entropy declines "
         "slowly, KL tiny. Slow, noisy, learning: continue."),
    Case("h4-ok-long-24k-tb-sparse-eval",
         grpo(lambda s: .30 + .25 * np.log1p(np.asarray(s, float) / 3000) / np.log1p(40000 / 3000) * 1.25,
              prompts=16, G=8, kappa=2.2, drift=(0.995, 0.03), ent=knots((0, .58), (24000, .42)),
              length=knots((0, 350), (24000, 520)), cap=2048, lr=warm_cos(1e-6, 200, 40000, floor=.1),
              ev=lambda st: .32 + .23 * math.log1p(st / 3000) / math.log1p(40000 / 3000) * 1.25, ev_n=1319,
              ev_every=2000),
         trl_tb(["runs/Jan28_21-03-44_gpu-node-07"], every=10, spe=6250, secs=14.0), 4005, (24000, 40000), HEALTHY,
         "trl grpo tensorboard long_run sparse_eval autocorrelated_noise",
         "TRL GRPO TensorBoard (train/*, eval/reward) of a 40k-step run at step 24,000, logged every 10 steps with "
         "an eval only every 2000 steps. Train reward wanders in slow, wide swings (small batch, strongly "
         "autocorrelated) around a log-shaped rise ~0.30 -> ~0.55; the 12 evals (1319 items) rise monotonically "
         "within noise 0.37 -> ~0.58 and the last ones still gain. Cosine LR at about half. Long, slow, healthy: "
         "continue."),
    Case("h4-ok-curriculum-switch-trl-state",
         grpo(knots((0, .25), (300, .62), (599, .78), (600, .41), (800, .50), (1050, .56), (2000, .65)),
              prompts=32, G=8, ent=knots((0, .55), (599, .40), (600, .52), (1050, .45)),
              length=knots((0, 260), (599, 240), (600, 520), (1050, 560)), cap=2048, lr=warm_cos(1e-6, 50, 2000),
              ev=knots((0, .30), (300, .40), (600, .45), (1050, .52)), ev_n=500, ev_every=100),
         trl_dir(every=10, spe=2000, ckpts=(250, 500, 750, 1000), save_steps=250, eval_steps=100,
                 extra_files={"curriculum.yaml": "stages:\n  - {name: gsm8k, until_step: 600}\n"
                                                  "  - {name: math_level3_5, from_step: 600}\n"
                                                  "eval_set: math500_fixed  # same for all stages\n"}),
         4006, (1050, 2000), HEALTHY,
         "trl grpo trainer_state curriculum step_drop lookalike_collapse checkpoints",
         "TRL GRPO with a two-stage curriculum (curriculum.yaml: GSM8K until step 600, then MATH levels 3-5). Train "
         "reward climbs to ~0.78, drops at once to ~0.45 at step 600 when the harder prompts arrive (lengths jump "
         "240 -> 520, entropy up a little), then climbs again to ~0.56 by 1050. The fixed held-out eval (every 100, "
         "500 problems) rises straight through the switch 0.29 -> ~0.50-0.52 with no dip. A data change, not a "
         "collapse: continue (1050/2000)."),
    Case("h4-ok-dapo-verl-console-gen-batches",
         lambda rng, T, P: _dapo_filter(grpo(
             knots((0, .22), (380, .56), (1000, .68)), prompts=512, G=16, kappa=knots((0, 2.0), (200, .8), (380, .15)), kl=None,
             ent=knots((0, .55), (380, .57)), length=knots((0, 700), (380, 1080)), cap=8192,
             lr=warm_cos(1e-6, 10, 1000, floor=1.0), ev=knots((0, .24), (380, .50)), ev_n=500, ev_every=20,
             ev_from=0)(rng, T, P), rng, batch_prompts=512),
         verl_console("dapo_qwen7b.log", "val-core/lighteval/MATH/acc/mean@4", dapo=True, np_style=True,
                      ckpt_every=100, ckpt_root="checkpoints/DAPO/DAPO-Qwen2.5-7B"), 4007, (380, 1000), HEALTHY,
         "verl dapo verl_console dynamic_sampling filtered_groups lookalike_saturation checkpoints",
         "verl DAPO console (np.float64 values) with dynamic sampling: the logged critic/score/mean is the score of "
         "the kept (mixed-outcome) groups only, so it moves little (0.32 -> ~0.52) and drifts toward 0.5; "
         "train/num_gen_batches is 1 until ~340 and then 1-2 as more groups come back all-correct. The held-out "
         "MATH validation (every 20, 500 problems) rises ~0.22 -> ~0.50, entropy holds ~0.55-0.58 (clip-higher), "
         "responses lengthen 720 -> ~1080 with no truncation. Healthy: continue (380/1000)."),
    Case("h4-ok-dpo-trl-console-slow-start", dpo_healthy_slow(),
         trl_console("train_dpo.out", DPO_HEAD, every=10, spe=1000, secs=9.6), 4008, (300, 1000), HEALTHY,
         "trl dpo trl_console lr_warmup lookalike_ln2_stuck",
         "TRL DPO console (dict lines) with warmup_ratio 0.1: loss sits at ~0.693 (ln 2) and accuracies at ~0.5 for "
         "the first ~70 steps while the LR ramps, then loss falls to ~0.60, rewards/accuracies climb to ~0.72 and "
         "margins to ~0.5 by 300, with chosen and rejected rewards separating. Evals at 100/200/300: eval_loss "
         "0.691 -> 0.660 -> 0.607, eval accuracy 0.52 -> 0.68. Learning, not stuck: continue (300/1000)."),
    Case("h4-ok-verl-ppo-critic-warmup",
         ppo_critic(knots((0, .02), (20, .03), (80, .30), (240, .52), (935, .62)),
                    ev_curve=knots((0, .03), (20, .03), (80, .29), (240, .51)), ev_every=10, warmup=20,
                    evar=knots((0, -.8), (20, .1), (80, .55), (240, .62)),
                    vf_loss=knots((0, 14.0), (15, 1.2), (40, .09), (240, .05)),
                    values=knots((0, -1.7), (20, .02), (240, .45)), kl=knots((0, 0), (20, 0), (240, .006))),
         verl_console("ppo_qwen05b.log", "val-core/openai/gsm8k/reward/mean@1", critic=True, np_style=True,
                      pid=54569), 4009, (240, 935), HEALTHY,
         "verl ppo critic critic_warmup explained_variance verl_console lookalike_value_problem",
         "verl PPO (GAE) console in the old %.3f style, critic_warmup=20: for steps 1-19 only the critic trains (no "
         "actor/* keys), its vf_loss starts at ~14 and vf_explained_var at ~-0.8, then the critic settles "
         "(explained variance ~0.6, vf_loss ~0.05) and once the actor starts the score climbs 0.03 -> ~0.52 with "
         "validation (every 10 from step 0) 0.03 -> ~0.51. Early negative explained variance is the warmup, not a "
         "broken critic: continue (240/935)."),
    Case("h4-ok-recent-flattening-cosine",
         grpo(knots((0, .30), (200, .52), (340, .615), (420, .62), (1200, .68)), prompts=64, G=8,
              ent=knots((0, .50), (420, .40)), length=const(410), cap=1536, lr=warm_cos(2e-6, 30, 1200),
              ev=knots((0, .33), (200, .46), (350, .54), (420, .57)), ev_n=800, ev_every=50),
         trl_dir(every=10, spe=1200, save_steps=200, eval_steps=50, top_level=True), 4010, (420, 1200), HEALTHY,
         "trl grpo trainer_state short_plateau eval_still_rising lookalike_converged",
         "TRL GRPO trainer_state.json (top level only). Train reward rose 0.30 -> ~0.62 by step ~300 and has "
         "been flat (0.60-0.63) for the last ~120 steps, but eval (every 50, 800 items, sd ~0.017) is still "
         "climbing: 0.45 at 200, 0.50 at 300, 0.53 at 350, 0.56 at 400; entropy ~0.40 and frac_reward_zero_std moderate, so the learning signal "
         "is intact, and the cosine LR is still ~85% of peak at 420/1200. A short train plateau with eval "
         "still improving is not convergence: continue."),
    Case("h4-ok-plain-csv-ema",
         grpo(knots((0, .15), (900, .35), (3000, .5)), prompts=8, G=4, kappa=1.4, drift=(0.9, 0.02),
              kl=knots((0, 0), (900, .03)), ent=knots((0, .9), (900, .78)), length=knots((0, 300), (900, 340)),
              cap=1024, lr=const(2e-6), ev=knots((0, .16), (900, .34)), ev_n=200, ev_every=100),
         plain_csv("train_log.csv"), 4011, (900, 3000), HEALTHY,
         "plain_script csv own_names heavy_noise ema binary_reward",
         "A hand-written GRPO loop's CSV (global_step, reward_raw, reward_ema, kl_to_ref, entropy, resp_len, lr, "
         "val_acc) with 8 prompts x 4 samples per step: reward_raw jumps between 0 and ~0.6 step to step, the EMA "
         "column shows a steady climb ~0.15 -> ~0.33, and val_acc (every 100 steps, 200 problems, sd ~0.03) goes "
         "0.14 -> ~0.36. KL small and rising with the reward, entropy slowly lower. Noisy but learning: continue "
         "(900/3000)."),
    Case("h4-ok-orpo-trl-state", orpo_healthy(),
         trl_dir(every=25, spe=1000, ckpts=(400, 800, 1200), save_steps=400, eval_steps=200, epochs=3),
         4012, (1200, 3000), HEALTHY,
         "trl orpo trainer_state preference checkpoints",
         "TRL ORPO (lambda 0.1) at epoch 1.2 of 3: nll_loss falls 1.42 -> ~1.16, log_odds_ratio rises ~0.05 -> "
         "~0.95 (noisy), rewards/accuracies ~0.52 -> ~0.69; eval every 200 steps: eval_loss 1.36 -> 1.22 and "
         "eval_rewards/accuracies 0.58 -> 0.68, still improving at each eval. No sign of overfitting yet: "
         "continue."),

    # ==================================================================== converged / finished
    Case("h4-conv-long-plateau-verl-tb",
         grpo(knots((0, .36), (250, .62), (500, .71), (3000, .715)), prompts=128, G=8, kappa=2.2,
              kl=knots((0, 0), (500, .008), (1400, .0095)), ent=knots((0, .5), (500, .31), (1400, .30)),
              length=knots((0, 420), (500, 390), (1400, 395)), cap=2048, lr=const(1e-6),
              ev=knots((0, .40), (250, .61), (500, .68), (1400, .68)), ev_n=1319, ev_every=50, ev_from=0),
         verl_tb("tensorboard_log/gsm8k_grpo/qwen2.5-3b_kl1e-3", "val-core/openai/gsm8k/acc/mean@1"), 4013,
         (1400, 3000), stop(900),
         "verl grpo tensorboard converged plateau budget_left",
         "verl GRPO TensorBoard at 1400/3000. Score rose 0.36 -> ~0.71 by step 500 and has been flat since "
         "(900 steps), validation (every 50, 1319 GSM8K items) has sat at ~0.68 +- noise for the last 18 evals, "
         "KL with beta 1e-3 stays ~0.009, entropy flat ~0.30, constant LR. Nothing is moving; the remaining "
         "1600 steps are unlikely to pay, and the current weights are as good as any from the plateau. "
         "Stop (DESIGN: converged = stop; there is no decline, so nothing to roll back to)."),
    Case("h4-conv-just-plateaued-openrlhf-console",
         grpo(knots((0, .30), (300, .52), (500, .58), (700, .585), (1600, .6)), prompts=64, G=8, kappa=2.4,
              kl=knots((0, 0), (500, .02), (700, .022)), ent=knots((0, .6), (500, .47), (700, .46)),
              length=const(520), cap=2048, lr=const(1e-6),
              ev=knots((0, .33), (300, .49), (500, .53), (700, .533)), ev_n=1000, ev_every=50,
              mods=[fixed_evals({50: .352, 100: .381, 150: .409, 200: .433, 250: .462, 300: .489, 350: .502,
                                 400: .517, 450: .527, 500: .531, 550: .536, 600: .529, 650: .534, 700: .532})]),
         orl_console("train_grpo_ray.log", "math500", entropy=False, ckpt_every=100), 4014, (700, 1600),
         kit.converged(),
         "openrlhf grpo console converged recent_plateau",
         "OpenRLHF GRPO (group_norm) console lines '✨ Global step N: {...}' and '📊 Evaluation completed ... "
         "eval_metrics'. Reward rose 0.30 -> ~0.58 by step 500 and has been flat for the last ~200 steps; "
         "eval_math500_pass1 (every 50, 1000 items) has held 0.527-0.536 for the last 6 evals (450-700); KL and entropy flat. "
         "It has probably converged, so stopping is right, but at 700/1600 with no drift waiting a little longer "
         "is also defensible: accept both, prefer stop."),
    Case("h4-done-cosine-flat-end-verl",
         grpo(knots((0, .40), (300, .60), (600, .66), (800, .675), (1000, .68)), prompts=256, G=8,
              kl=knots((0, 0), (1000, .012)), ent=knots((0, .48), (1000, .35)), length=const(330), cap=1024,
              lr=warm_cos(1e-6, 20, 1000), ev=knots((0, .42), (300, .58), (600, .635), (800, .645), (1000, .648)),
              ev_n=1319, ev_every=100, ev_from=0),
         verl_console("main_ppo.log", "val/test_score/openai/gsm8k", np_style=False, final=True,
                      ckpt_every=200, ckpt_root="checkpoints/gsm8k_grpo/qwen2.5-7b_cosine"),
         4015, (1000, 1000), stop(800),
         "verl grpo verl_console finished cosine_to_zero best_at_end checkpoints",
         "A finished verl GRPO run in the old console style (actor/entropy_loss, timing/*, val/test_score/..., "
         "'Final validation metrics' and Training Progress 100%). LR followed a cosine to ~0, so the last 300 "
         "steps barely move: score ~0.67 -> ~0.68, validation (every 100, 1319 items, sd ~0.013) 0.645 (600), "
         "0.644, 0.649, 0.626, 0.676 (1000): flat within noise and the best at the end. Nothing earlier is better and extending a run whose LR has decayed to zero buys little: stop, keep "
         "the final weights (global_step_1000)."),
    Case("h4-done-still-rising-trl",
         grpo(knots((0, .22), (200, .38), (400, .50), (500, .56)), prompts=64, G=8, kl=None,
              ent=knots((0, .55), (500, .47)), length=knots((0, 300), (500, 380)), cap=1024, lr=const(1e-6),
              ev=knots((0, .25), (200, .36), (300, .42), (400, .48), (500, .54)), ev_n=1319, ev_every=50),
         trl_dir(every=10, spe=1000, ckpts=(500,), save_steps=500, eval_steps=50,
                 final={"train_loss": 0.0014, "train_runtime": 31877.2, "train_samples_per_second": 1.004,
                        "train_steps_per_second": 0.016}),
         4016, (500, 500), dict(accept=["continue", "stop"], preferred="continue"),
         "trl grpo trainer_state finished still_improving constant_lr",
         "A finished TRL GRPO run (global_step = max_steps = 500, final train_runtime row, should_training_stop). "
         "Constant LR; reward and eval were still climbing at the same pace to the very end: eval (every 50, "
         "1319 items, sd ~0.014) 0.43 (300), 0.46 (350), 0.49 (400), 0.51 (450), 0.545 (500). Extending it is clearly "
         "worth it (continue), and keeping the final weights (stop) is not wrong since they are the best so far: "
         "accept both, prefer continue."),

    # ========================================================================================== stop
    Case("h4-stop-zero-reward-trl-console",
         lambda rng, T, P: _zero_grad(grpo(const(0.004), prompts=4, G=16, kappa=0.6, drift=(0.5, 0.002),
                                           ent=const(0.61), length=knots((0, 900), (300, 930)), cap=1024,
                                           lr=warm_cos(1e-6, 20, 1000), gn=0.05)(rng, T, P)),
         trl_console("grpo_olympiad.log", GRPO_TRL_HEAD, every=5, spe=256, secs=41.0), 4017, (300, 1000), stop(1),
         "trl grpo trl_console no_learning zero_reward zero_std setup_failure",
         "TRL GRPO console on a task far too hard for the model: reward is exactly 0.0 on almost every log line "
         "(a stray 0.003-0.01 now and then), frac_reward_zero_std ~1.0, loss 0.0 and grad_norm 0.0 on most "
         "steps, entropy and lengths unchanged (and near the 1024 cap). No gradient signal in 300 steps, nothing "
         "learned, and more steps will not change that. Stop (fix the task difficulty / reward first)."),
    Case("h4-stop-format-saturates-task-floor",
         grpo(const(0.03), prompts=32, G=8, kappa=0.8, drift=(0.6, 0.004), ent=knots((0, .7), (80, .52), (500, .5)),
              length=knots((0, 520), (80, 330), (500, 320)), cap=1024, lr=const(1e-6),
              mods=[components(knots((0, .15), (40, .6), (80, .97), (500, 1.0))),
                    fixed_evals({100: .031, 200: .028, 300: .034, 400: .030, 500: .029})]),
         trl_dir(every=10, spe=1000, ckpts=(100, 200, 300, 400, 500), save_steps=100, eval_steps=100), 4018,
         (500, 1500), stop(80),
         "trl grpo trainer_state reward_components format_saturation task_floor lookalike_learning checkpoints",
         "TRL GRPO with two reward functions. The total reward rises 0.18 -> ~1.03 in the first 80 steps, which "
         "looks like learning, but it is all rewards/format_reward/mean (0.15 -> 1.0); "
         "rewards/accuracy_reward/mean is pinned at its floor ~0.03 throughout and eval accuracy (every 100) sits "
         "at ~0.03 at every eval. Format is learned and saturated; the task is not being learned at all. Nothing "
         "earlier is better (the accuracy never moved), so no rollback: stop and rethink the task reward."),
    Case("h4-stop-train-up-eval-flat-nemo",
         grpo(knots((0, .35), (200, .47), (600, .62), (2000, .7)), prompts=64, G=8,
              kl=knots((0, 0), (600, .03)), ent=knots((0, .55), (600, .38)), length=knots((0, 350), (600, 300)),
              cap=2048, lr=const(1e-6), ev=const(.34), ev_n=1000, ev_every=40, ev_from=0),
         nemo_tb(config="grpo:\n  max_num_steps: 2000\n  val_period: 40\ndata:\n  train: my_org/geo-proofs-train  "
                        "# 1,216 prompts\n  val: my_org/geo-proofs-val\npolicy:\n  model_name: Qwen/Qwen2.5-3B-Instruct\n"),
         4019, (600, 2000), stop(100),
         "nemo_rl grpo tensorboard eval_flat train_memorisation no_generalisation",
         "NeMo-RL GRPO on a small training set (config: 1,216 prompts, 64 per step, so ~30 passes by step 600). "
         "train/reward climbs 0.35 -> ~0.62, but validation/accuracy (every 40 from step 0, 1000 items, sd "
         "~0.015) never moves: ~0.34 at every one of the 16 evals. The policy is memorising the training prompts; "
         "the held-out model is no better and no worse than at the start. Continuing will not help and nothing "
         "earlier is better: stop."),
    Case("h4-stop-kl-drift-tiny-beta-verl-tb",
         lambda rng, T, P: _kl_drift(grpo(knots((0, .30), (250, .50), (500, .58), (2500, .585)), prompts=128, G=8,
                                          kl=lambda s: .00002 * np.asarray(s, float) + 0.2 * (np.asarray(s, float) / 1500) ** 2.6,
                                          ent=knots((0, .50), (500, .44), (1500, .31)),
                                          length=knots((0, 450), (500, 520), (1500, 560)), cap=2048,
                                          lr=const(1e-6), ev=knots((0, .33), (250, .49), (500, .55), (1500, .545)),
                                          ev_n=1319, ev_every=100, ev_from=0)(rng, T, P)),
         verl_tb("tensorboard_log/math_grpo/qwen2.5-7b_klcoef5e-4", "val-core/lighteval/MATH/acc/mean@1"), 4020,
         (1500, 2500), stop_or_rollback(500, 1100, 600),
         "verl grpo tensorboard kl_drift small_beta plateau",
         "verl GRPO with use_kl_loss and a tiny kl_coef (5e-4, actor/kl_coef). Score and validation rose until "
         "~500 (val 0.33 -> ~0.55) and have been flat since; meanwhile actor/kl_loss keeps growing, slowly then "
         "faster (~0.02 at 500, ~0.09 at 1000, ~0.23 at 1500) and entropy drifts 0.44 -> ~0.31. The policy is "
         "moving away from the reference without getting better and without (yet) getting measurably worse on "
         "validation (the last eval, 0.57 at 1500, is within noise of the plateau's ~0.55). Stop; restoring a "
         "mid-plateau checkpoint (500-1100, less drift, same accuracy) is as good."),
    Case("h4-stop-ppo-critic-never-learns",
         ppo_critic(knots((0, .04), (300, .05), (935, .05)), ev_curve=const(.04), ev_every=10, warmup=0,
                    evar=knots((0, -.6), (30, -.25), (300, -.2)), vf_loss=knots((0, 9.0), (30, 6.5), (300, 6.3)),
                    values=knots((0, -1.7), (300, -1.6)), kl=knots((0, 0), (300, .002)), critic_lr=1e-9),
         verl_console("ppo_critic_lr_bug.log", "val-core/openai/gsm8k/reward/mean@1", critic=True, np_style=True,
                      pid=77120), 4021, (300, 935), stop(1),
         "verl ppo critic explained_variance no_learning setup_failure verl_console",
         "verl PPO whose critic never learns (critic/lr 1e-9, a config typo): critic/vf_explained_var stays "
         "negative (~-0.2) for 300 steps, vf_loss stays ~6 instead of falling, critic/values/mean is stuck at ~-1.6 "
         "while returns are ~0.05, so the advantages are noise. The score stays at ~0.05 and validation (every 10) "
         "at ~0.04 the whole time. Nothing has been learned and nothing will be until the critic is fixed: stop."),
    Case("h4-stop-openrlhf-dpo-ln2", openrlhf_dpo_stuck(), custom(write_openrlhf_dpo_tb)(), 4022, (600, 1500),
         stop(1), "openrlhf dpo tensorboard no_learning ln2 setup_failure",
         "OpenRLHF DPO TensorBoard (train/loss, train/acc, train/chosen_reward, train/reject_reward, eval/eval_loss, "
         "eval/acc_mean). Train loss is 0.6931 (= ln 2) to four decimals for 600 steps, acc is a coin flip "
         "(~0.5 +- 0.04), chosen and rejected rewards are ~0.000; eval_loss 0.6931 and acc_mean ~0.50 at every "
         "eval. The launch script shows --learning_rate 5e-10 (a typo): the policy has not moved. Stop and fix it."),

    # ====================================================================================== rollback
    Case("h4-bad-rm-overopt-monitor-reward",
         grpo(knots((0, .0), (600, 1.0)), prompts=32, G=8, kappa=20, kl=knots((0, 0), (250, .05), (600, .32)),
              ent=knots((0, .52), (600, .44)), length=knots((0, 250), (250, 330), (600, 720)), cap=1024,
              lr=const(1e-6),
              mods=[monitor(knots((0, .42), (150, .51), (260, .55), (330, .545), (450, .48), (600, .40)),
                            "exact_match"),
                    rm_score(-0.8, 2.6, "Skywork-Reward-V2-Llama-3.1-8B"),
                    rm_evals({100: .49, 200: .543, 300: .547, 400: .509, 500: .456, 600: .412},
                             "Skywork-Reward-V2-Llama-3.1-8B", "exact_match", -0.8, 2.6)]),
         trl_dir(every=10, spe=1000, ckpts=(200, 300, 400, 500, 600), save_steps=100, eval_steps=100,
                 eval_key="exact_match"), 4023, (600, 1500), rollback(200, 340, 350),
         "trl grpo trainer_state reward_model over_optimisation monitor_reward length_growth checkpoints",
         "TRL GRPO trained on a reward model (rewards/Skywork-Reward-V2-Llama-3.1-8B/mean, weight 1) with a "
         "verifier logged beside it at weight 0 (rewards/exact_match/mean). The RM score rises steadily to the end "
         "(-0.8 -> ~2.6) together with completion length (250 -> ~720) and KL (-> ~0.3), but exact match peaks at "
         "~0.55 around steps 200-330 and falls to ~0.40; eval exact match (every 100) 0.543 (200), 0.547 (300), "
         "0.509, 0.456, 0.412. Classic reward over-optimisation: roll back to checkpoint-300 (window 200-340)."),
    Case("h4-bad-entropy-blowup-openrlhf-console",
         grpo(knots((0, .30), (150, .55), (250, .62), (262, .60), (285, .12), (310, .05)), prompts=64, G=8,
              kl=knots((0, 0), (250, .03), (265, .05), (290, 1.4), (310, 2.2)),
              ent=knots((0, .55), (200, .62), (250, .78), (262, .95), (285, 3.9), (310, 5.1)),
              length=knots((0, 420), (255, 460), (285, 2000), (310, 2048)), cap=2048, lr=const(1e-6),
              ev=knots((0, .33), (160, .56), (240, .59), (260, .57), (280, .30), (300, .06)), ev_n=500, ev_every=20),
         orl_console("grpo_entcoef.log", "aime_math", entropy=True, ckpt_every=100,
                     header=["[2026-02-17 03:00:11,442] [INFO] [train_ppo_ray.py:201:train] args: "
                             "--algo.advantage.estimator group_norm --actor.entropy_coef 0.01 --rollout.n_samples_per_prompt 8 "
                             "--train.num_episodes 1 --logger.logging_steps 1 --eval.steps 20 --ckpt.save_steps 100"]),
         4024, (310, 600), rollback(160, 255, 258),
         "openrlhf grpo console entropy_bonus entropy_blow_up collapse truncation checkpoints",
         "OpenRLHF GRPO with an entropy bonus (--actor.entropy_coef 0.01): entropy_loss creeps 0.55 -> ~0.8 by "
         "step 250 and then explodes to ~4.9 by 306; reward falls from ~0.62 to ~0.05, responses run to the 2048 cap "
         "(truncated -> 1.0), KL jumps past 2. eval_aime_math_pass1 (every 20, 500 items) was ~0.55-0.58 from "
         "160 to 260, then 0.31 (280) and 0.06 (300). Degenerate output: roll back to the last good point before ~258 "
         "(global_step200 is on disk)."),
    Case("h4-bad-length-penalty-collapse-verl-jsonl",
         lambda rng, T, P: _length_penalty(grpo(
             knots((0, .45), (220, .62), (235, .61), (300, .39), (400, .37)), prompts=256, G=8,
             kl=knots((0, 0), (220, .004), (300, .02), (400, .03)), ent=knots((0, .45), (220, .40), (300, .22), (400, .2)),
             length=knots((0, 520), (220, 430), (232, 420), (300, 42), (400, 38)), cap=1024, lr=const(1e-6),
             ev=knots((0, .46), (220, .60), (240, .585), (300, .40), (400, .37)), ev_n=1319, ev_every=20,
             ev_from=0)(rng, T, P), 1.0),
         verl_jsonl("gsm8k_lenpen/qwen2.5-3b_lenpen1e-3.jsonl", "val-core/openai/gsm8k/acc/mean@1"), 4025,
         (400, 800), rollback(180, 240, 235),
         "verl grpo verl_jsonl length_penalty length_collapse reward_hacking lookalike_improving",
         "verl JSONL, GRPO with reward = correctness - 0.001 x response tokens. Until ~230 lengths shrink gently "
         "(520 -> 430) and accuracy rises; then responses collapse to ~40 tokens in 70 steps (the model stops "
         "reasoning and just answers). critic/score/mean *rises* through the collapse (~0.19 -> ~0.33) because the "
         "penalty vanishes, but the validation accuracy (val-core .../acc, no penalty; every 20) falls from ~0.60 "
         "at 200-240 to ~0.39 by 320 and ~0.39 at 400. The penalty is being gamed: roll back to ~220-240 "
         "(no checkpoints in this folder)."),
    Case("h4-bad-gradual-decline-third-nemo-tb",
         grpo(knots((0, .30), (300, .56), (550, .64), (600, .64), (900, .55), (1500, .5)), prompts=64, G=8,
              kl=knots((0, 0), (600, .02), (900, .06)), ent=knots((0, .52), (550, .36), (900, .55)),
              length=knots((0, 600), (600, 640), (900, 900)), cap=2048, lr=const(2e-6),
              ev=knots((0, .33), (300, .54), (550, .60), (620, .60), (900, .52)), ev_n=1000, ev_every=50, ev_from=0),
         nemo_tb(ckpts=(500, 600, 700, 800, 900)), 4026, (900, 1500), rollback(450, 700, 630),
         "nemo_rl grpo tensorboard gradual_decline late_decline entropy_drift checkpoints",
         "NeMo-RL GRPO at 900/1500: reward peaked at ~0.65 around steps 550-600 and has slid for the last third "
         "of the run to ~0.57; validation/accuracy (every 50, 1000 items, sd ~0.016) sat at ~0.58-0.59 from 450 "
         "to 700 and then fell: 0.556, 0.518, 0.559, 0.493 at 750-900. Entropy climbs back 0.37 -> ~0.54, lengths "
         "grow, KL triples. A slow real decline, not noise: roll back to results/grpo/step_600 or step_700 "
         "(window 450-700)."),
    Case("h4-bad-done-decline-last-third-trl",
         grpo(knots((0, .30), (500, .60), (900, .70), (1500, .72)), prompts=64, G=8,
              kl=knots((0, 0), (900, .05), (1500, .16)), ent=knots((0, .50), (900, .36), (1500, .30)),
              length=knots((0, 380), (900, 560), (1500, 900)), cap=1024, lr=const(1e-6),
              ev=knots((0, .32), (500, .52), (900, .585), (1000, .583), (1500, .50)), ev_n=1000, ev_every=100),
         trl_dir(every=10, spe=1500, ckpts=(300, 600, 900, 1200, 1500), save_steps=300, eval_steps=100,
                 final={"train_loss": 0.0031, "train_runtime": 90311.5, "train_samples_per_second": 0.53,
                        "train_steps_per_second": 0.017}),
         4027, (1500, 1500), rollback(800, 1000, 1050),
         "trl grpo trainer_state finished eval_decline truncation checkpoints",
         "A finished TRL GRPO run (1500/1500, summary row). Train reward keeps inching up (~0.70 -> ~0.72) but the "
         "eval (every 100, 1000 items, sd ~0.016) peaked at ~0.59-0.60 at 800-900 (0.57 at 1000) and declined over "
         "the last third to 0.52-0.55, while completions grow toward the 1024 cap (clipped_ratio rising) and KL triples. The "
         "final weights are worse than those at ~800-1000: keep checkpoint-900 (rollback)."),
    Case("h4-bad-dpo-multiepoch-finished", dpo_multiepoch(),
         trl_dir(every=10, spe=313, ckpts=(313, 626, 939), save_steps=313, eval_steps=100, epochs=3,
                 final={"train_loss": 0.2291, "train_runtime": 10822.7, "train_samples_per_second": 5.55,
                        "train_steps_per_second": 0.087}),
         4028, (939, 939), rollback(250, 330, 320),
         "trl dpo trainer_state finished multi_epoch overfitting staircase eval_decline checkpoints",
         "A finished 3-epoch TRL DPO run (939 steps, checkpoints at each epoch end). Train loss drops in a "
         "staircase at each epoch start (memorising pairs seen before) and train accuracy reaches ~0.99 with "
         "margins ~7, but eval_loss is lowest at 0.551 at step 300 (end of epoch 1; 0.561 at 400) and climbs to ~0.73 "
         "by the end, and eval accuracy slips from ~0.70 to ~0.65. The best model is the epoch-1 one: keep "
         "checkpoint-313 (rollback)."),
    Case("h4-bad-resume-lr-rewarm-tb",
         lambda rng, T, P: _resume_rewarm(rng, T, P), custom(_write_resume_rewarm)(), 4029, (1100, 2000),
         rollback(550, 660, 620),
         "trl grpo tensorboard resume duplicate_steps lr_spike decline checkpoints",
         "TRL GRPO, two TensorBoard launch dirs: the first logged steps 10-700 and crashed; the relaunch resumed "
         "from checkpoint-600 and re-logged 610-1100. The resume re-created the LR schedule (train/learning_rate "
         "jumps from ~0.8e-6 back up to a 3e-6 peak by 640), after which grad norm doubles, KL climbs 0.02 -> "
         "~0.22, entropy rises and reward slides from ~0.66 to ~0.50; eval (every 100, 1000 items) was 0.49 (500), "
         "0.54 (600), 0.54 (700, first launch, never saved), then in the resumed run 0.52 (700), 0.46, 0.47, "
         "0.49, 0.43. Roll back to checkpoint-600 (newest saved "
         "good weights; window 500-650) and resume with the scheduler state."),
    Case("h4-bad-dapo-filter-masks-decline",
         lambda rng, T, P: _dapo_filter(_dapo_collapse(rng, T, P), rng, batch_prompts=512, max_batches=10),
         verl_console("dapo_run.log", "val-core/math_dapo/acc/mean@4", dapo=True, np_style=True, ckpt_every=100,
                      ckpt_root="checkpoints/DAPO/DAPO-Qwen2.5-32B-ds"), 4030, (520, 1000), rollback(240, 340, 345),
         "verl dapo verl_console dynamic_sampling entropy_collapse eval_decline lookalike_stable checkpoints",
         "verl DAPO with dynamic sampling: the logged critic/score/mean stays at ~0.5 throughout because only "
         "mixed-outcome groups are kept, so it hides what happens. From ~330 entropy collapses (0.5 -> ~0.06), "
         "train/num_gen_batches climbs from ~1-2 to 6-10 (almost every group comes back identical), responses "
         "shorten, and validation (every 20, 2000 samples, sd ~0.011) falls from its ~0.44-0.47 plateau at "
         "240-340 to ~0.37 at 520. Roll back to global_step_300 (window 240-340)."),
    Case("h4-bad-rloo-kl-spike-trl-state", ppo_gae_rloo_kl_spike(),
         trl_dir(every=10, spe=1500, ckpts=(100, 200, 300, 400, 500, 600), save_steps=100, top_level=False,
                 clip=True, eval_key="correctness"), 4031, (600, 1500), rollback(380, 450, 455),
         "trl rloo trainer_state checkpoints_only kl_spike no_recovery clip_ratio",
         "TRL RLOO (beta 0.05, num_iterations 2), only checkpoint-100..600/trainer_state.json on disk. Reward "
         "rises to ~0.63 by 400-450; at ~455 KL jumps from ~0.08 to >2, clip_ratio/region_mean spikes to ~0.17, "
         "grad norm bursts, entropy jumps 0.48 -> ~1.6 and completions lengthen; reward falls to ~0.3 and stays "
         "there for 150 steps with no sign of recovery. The newest checkpoint (600) is broken; roll back to "
         "checkpoint-400 (window 380-450)."),
    Case("h4-bad-long-sparse-eval-peak-jsonl",
         grpo(knots((0, .40), (5000, .62), (10000, .71), (22500, .75)), prompts=32, G=8, drift=(0.99, 0.02),
              kl=knots((0, 0), (10000, .04), (22500, .16)), ent=knots((0, .5), (10000, .36), (22500, .29)),
              length=knots((0, 600), (22500, 760)), cap=4096, lr=warm_cos(5e-7, 300, 30000, floor=.2),
              mods=[fixed_evals({2500: .41, 5000: .463, 7500: .491, 10000: .512, 12500: .524, 15000: .521,
                                 17500: .496, 20000: .478, 22500: .455})]),
         custom(write_plain_jsonl_long)(), 4032, (22500, 30000), rollback(10000, 15000, 16000),
         "plain_script jsonl long_run sparse_eval eval_decline no_checkpoints",
         "A home-made GRPO loop, 22,500 of 30,000 steps, train rows every 50 steps and an eval row every 2,500 "
         "(pass@1 on 1000 problems, sd ~0.016). Train reward keeps creeping up (~0.71 -> ~0.75 since 10k) and KL "
         "drifts to ~0.16, but eval peaked at 0.524 (12,500) / 0.521 (15,000) and has fallen three times in a "
         "row: 0.496, 0.478, 0.455 (4 sd below the peak). Checkpoints go to S3 every 2,500 steps (config.json), "
         "none here. Roll back to the 12,500-15,000 checkpoint (window 10,000-15,000)."),
]


# =================================================================================================== build

def write_run(case: Case, folder: Path) -> None:
    rng = np.random.default_rng(case.seed)
    sim = case.scenario(rng, case.reached, case.planned or case.reached)
    case.write(sim, folder)


HEADER = ("# Holdout set 4: hand-built runs written by make_holdout4.py (independent of the assessor, its judges and\n"
          "# holdouts 1-3). Labels: what a practitioner should do with each run (DESIGN.md decision contract);\n"
          "# rollback_window is inclusive.\n")


def main() -> None:
    kit.build(HERE, "make_holdout4.py", "holdout4.yaml", "", "holdout4", HEADER, CASES, write_run)


if __name__ == "__main__":
    main()
