"""reasoning-from-scratch's per-step metrics CSV."""

from __future__ import annotations

from pathlib import Path

from assessor.evals.generate.model import Ctx
from assessor.evals.generate.rows import rfs_rows
from assessor.evals.generate.simulate import Attempt


def write_csv(ctx: Ctx, target: Path, attempts: list[Attempt]) -> None:
    """`csv`: reasoning-from-scratch's per-step metrics CSV (CRLF) and its `.pth` checkpoints."""
    lines: list[str] = []
    for attempt in attempts:
        header, rows = rfs_rows(ctx, attempt.obs, attempt.evals, attempt.first, attempt.last)
        if not lines:
            lines.append(",".join(header))
        lines += [",".join(r) for r in rows]
    (target / "rlvr_grpo_metrics.csv").write_bytes(("\r\n".join(lines) + "\r\n").encode("utf-8"))
    if ctx.checkpoints:
        folder = target / "checkpoints"
        folder.mkdir()
        for step in ctx.checkpoints:
            (folder / f"qwen3-0.6B-rlvr-grpo-step{step:05d}.pth").write_bytes(b"")
