"""Build small runs on disk, in real formats, for diagnosis tests."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from assessor import Run, load_run


def ar1(seed: int, n: int, phi: float = 0.5, scale: float = 1.0) -> np.ndarray:
    """Autocorrelated noise with standard deviation `scale`."""
    rng = np.random.default_rng(seed)
    out = np.zeros(n)
    shocks = rng.normal(0, scale, n)
    for i in range(1, n):
        out[i] = phi * out[i - 1] + shocks[i]
    return out * np.sqrt(1 - phi**2)


def make_run(
    root: Path, *, interval: int = 1, eval_every: int = 0, eval_values: np.ndarray | None = None,
    checkpoints: tuple[int, ...] = (), config: dict[str, object] | None = None, **series: np.ndarray,
) -> Run:
    """A TRL-style JSONL log (framework keys such as `reward`, `kl`, `reward_std`) plus optional extras."""
    root.mkdir(parents=True, exist_ok=True)
    n = len(next(iter(series.values())))
    lines = []
    for i in range(n):
        step = (i + 1) * interval
        row: dict[str, object] = {"step": step}
        for key, values in series.items():
            value = float(values[i])
            row[key.replace("__", "/")] = None if np.isnan(value) else value
        lines.append(json.dumps(row))
        if eval_every and eval_values is not None and step % eval_every == 0:
            k = step // eval_every - 1
            if k < len(eval_values):
                lines.append(json.dumps({"step": step, "eval_reward": float(eval_values[k])}))
    (root / "log.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    for step in checkpoints:
        (root / f"checkpoint-{step}").mkdir()
        (root / f"checkpoint-{step}" / "adapter_model.safetensors").write_bytes(b"")
    if config:
        (root / "training_args.json").write_text(json.dumps(config), encoding="utf-8")
    return load_run(root)
