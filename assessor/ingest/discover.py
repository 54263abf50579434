"""Walk a run directory: which files to read, with which reader, and which checkpoints are on disk.

An entry that cannot be looked at (a symlink loop, a dangling link into an unmounted volume, a folder without
permission) is skipped with a warning naming it; the rest of the run is still read. Under `reads_confined_to`
(the Slack bot), a file or MLflow folder whose real path is outside the allowed roots is not read either.
"""

from __future__ import annotations

import errno
import os
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path

from assessor.ingest.facts import CONFIG_FILE_NAMES
from assessor.ingest.mlflow import holds_experiments, store_of_folder
from assessor.ingest.sqlite import SQLITE_SUFFIXES
from assessor.ingest.wandb import RUN_DIR as WANDB_RUN_DIR
from assessor.run import Checkpoint

MAX_DEPTH = 6
MAX_FILES = 50_000
# Big binary payloads: never opened (a checkpoint's weights can be tens of GB).
_PAYLOAD_SUFFIXES = frozenset({
    ".safetensors", ".pt", ".pth", ".ckpt", ".bin", ".npy", ".npz", ".arrow", ".parquet", ".gguf", ".onnx",
    ".msgpack", ".h5", ".pkl", ".distcp", ".model", ".zip", ".tar", ".gz", ".png", ".jpg", ".mp4", ".so",
})
_SKIP_DIRS = frozenset({"__pycache__", "node_modules", ".git", ".ipynb_checkpoints", "site-packages"})
_CHECKPOINT_DIR = re.compile(
    r"^(?:(?:checkpoint|ckpt)(?:[-_]?(?:global[-_]?step|step|iter))?|global_step|step|iter|epoch_\d+_step)"
    r"[-_]?0*(?P<step>\d+)$", re.IGNORECASE
)
_CHECKPOINT_FILE = re.compile(
    r"(?:^|[-_.])(?:step|ckpt|checkpoint|iter|global_step)[-_]?0*(?P<step>\d+)(?:[-_.]|$)", re.IGNORECASE
)
_CHECKPOINT_FILE_SUFFIXES = frozenset({".safetensors", ".pt", ".pth", ".ckpt", ".bin"})
# A folder a custom loop saves into (`ckpt/`, `checkpoints/`, `saved_models/`, `policy_ckpts/`): in it, any
# `<word>_<number>` / `<word>-<number>` / `<word><number>` folder or weights file is a checkpoint at that step
# (`ckpt/update_00300.pt`, `ckpt/gstep_000200/`).
_CHECKPOINT_FOLDER = re.compile(
    r"^(?:.*[-_])?(?:ckpts?|checkpoints?|saved[-_]?models?|saved[-_]?checkpoints?|snapshots)$", re.IGNORECASE
)
_NUMBERED = re.compile(r"^(?P<word>[a-z][a-z0-9]*?(?:[-_][a-z][a-z0-9]*?)*)[-_]?0*(?P<step>\d+)$", re.IGNORECASE)
# Numbered things that are not steps: runs, seeds, shards, ranks, epochs (an epoch number is not a step).
_NOT_STEP_WORDS = frozenset({
    "run", "runs", "seed", "exp", "experiment", "trial", "version", "v", "fold", "rank", "worker", "shard", "part",
    "gpu", "node", "job", "epoch", "ep", "log", "logs", "eval", "sample", "samples", "rollout", "rollouts", "tmp",
})
_COUNTER_WORDS = frozenset({"step", "steps", "gstep", "iter", "it", "update", "ckpt", "checkpoint"})
# A numbered folder holding these is a folder of logs or outputs, not a checkpoint.
_LOG_SUFFIXES = frozenset({".jsonl", ".csv", ".tsv", ".log", ".out"})
# Text files frameworks write that are never metric logs.
_NOT_LOGS = frozenset({
    "latest_checkpointed_iteration.txt", "requirements.txt", "vocab.txt", "merges.txt", "special_tokens_map.json",
    "tokenizer.json", "tokenizer_config.json", "generation_config.json", "added_tokens.json", "vocab.json",
    "preprocessor_config.json", "chat_template.json", "adapter_config.json", "model.safetensors.index.json",
    "wandb-metadata.json", "wandb-summary.json", "README.md",
})
_TEXT_SUFFIXES = frozenset({".json", ".jsonl", ".csv", ".tsv", ".log", ".txt", ".out", ".err", ".ipynb"})
# Real paths of the folders reads are confined to in this thread/context; None reads wherever symlinks lead.
_ALLOWED_ROOTS: ContextVar[tuple[Path, ...] | None] = ContextVar("assessor_allowed_roots", default=None)


@contextmanager
def reads_confined_to(roots: Sequence[Path]) -> Iterator[None]:
    """Within the block, discovery hands on no file whose real path (symlinks followed) is outside `roots`.

    For a service that reads runs on behalf of others (the Slack bot): `root/run/metrics.jsonl -> /etc/...`
    is refused with a warning, not read. Set per thread (a context variable), so each worker sets its own.
    """
    token = _ALLOWED_ROOTS.set(tuple(Path(os.path.realpath(root)) for root in roots))
    try:
        yield
    finally:
        _ALLOWED_ROOTS.reset(token)


@dataclass
class Discovery:
    """What the walk found. Paths are absolute; `rel` makes them relative to the run directory."""

    root: Path
    files: list[Path] = field(default_factory=list)
    event_files: list[Path] = field(default_factory=list)
    trainer_states: list[tuple[int | None, Path]] = field(default_factory=list)  # (checkpoint step, path)
    config_files: list[tuple[int | None, Path]] = field(default_factory=list)  # (checkpoint step, path)
    checkpoints: list[Checkpoint] = field(default_factory=list)
    mlflow_stores: list[Path] = field(default_factory=list)  # MLflow store, experiment or run folders, read whole
    wandb_files: list[Path] = field(default_factory=list)  # `run-<id>.wandb` transaction logs, read together
    truncated_walk: bool = False
    warnings: list[str] = field(default_factory=list)  # entries skipped: loops, unreadable, outside the roots

    def rel(self, path: Path) -> str:
        """Path relative to the run directory, with forward slashes."""
        try:
            return path.relative_to(self.root).as_posix() or "."
        except ValueError:
            return path.as_posix()


def checkpoint_step(name: str, is_dir: bool, in_checkpoint_folder: bool = False) -> int | None:
    """The step in a checkpoint folder or file name, or None when the name is not a checkpoint.

    `in_checkpoint_folder`: the entry sits in a folder named for checkpoints (`ckpt/`), where a custom loop's
    own numbering (`update_00300.pt`, `gstep_000200`) is read too.

    >>> checkpoint_step("checkpoint-1300", True), checkpoint_step("global_step_40", True)
    (1300, 40)
    >>> checkpoint_step("ckpt_step400", True), checkpoint_step("checkpoint-step-0200", True)
    (400, 200)
    >>> checkpoint_step("model-step-000200.safetensors", False), checkpoint_step("config.json", False)
    (200, None)
    >>> checkpoint_step("update_00300.pt", False, True), checkpoint_step("gstep_000200", True, True)
    (300, 200)
    >>> checkpoint_step("update_00300.pt", False), checkpoint_step("seed_1", True, True)
    (None, None)
    """
    if is_dir:
        match = _CHECKPOINT_DIR.match(name)
        if match:
            return int(match["step"])
        return _numbered_step(name) if in_checkpoint_folder else None
    stem, suffix = os.path.splitext(name)
    if suffix.lower() not in _CHECKPOINT_FILE_SUFFIXES:
        return None
    match = _CHECKPOINT_FILE.search(stem)
    if match:
        return int(match["step"])
    return _numbered_step(stem) if in_checkpoint_folder else None


def is_checkpoint_folder(name: str) -> bool:
    """A folder named for checkpoints (`ckpt`, `ckpts`, `checkpoints`, `saved_models`, `policy_ckpt`)."""
    return _CHECKPOINT_FOLDER.match(name) is not None


def _numbered_step(name: str) -> int | None:
    """The number of a `<word>_<number>` name, unless the word says it counts something else (`seed_1`).

    Without a separator only a counter word reads as a step (`step400`, `iter400`): `search_r1` or `qwen2` is a
    name with a digit in it, not a checkpoint.
    """
    match = _NUMBERED.match(name)
    if match is None:
        return None
    last_word = re.split(r"[-_]", match["word"].lower())[-1]
    separated = name[len(match["word"]):len(match["word"]) + 1] in ("-", "_")
    if not separated and last_word not in _COUNTER_WORDS:
        return None
    return None if last_word in _NOT_STEP_WORDS else int(match["step"])


def _holds_checkpoints(path: Path) -> bool:
    """The folder holds checkpoint folders of its own (`checkpoints/search_r1/<model>/global_step_200`): a container."""
    try:
        for dirpath, dirnames, _ in os.walk(path):
            if any(_CHECKPOINT_DIR.match(d) for d in dirnames):
                return True
            if len(Path(dirpath).relative_to(path).parts) >= 2:
                dirnames.clear()
    except (OSError, ValueError):
        return False
    return False


def _holds_logs(path: Path) -> bool:
    """The folder holds metric logs or event files (a numbered run or output folder, not a checkpoint)."""
    try:
        with os.scandir(path) as entries:
            return any(os.path.splitext(e.name)[1].lower() in _LOG_SUFFIXES or "tfevents" in e.name for e in entries)
    except OSError:
        return False


def discover(root: Path) -> Discovery:
    """Walk `root` (a directory, or a single file) and sort what it holds."""
    found = Discovery(root=root if root.is_dir() else root.parent)
    if root.is_file():
        _classify_file(found, root)
    elif WANDB_RUN_DIR.match(root.name):
        _scan_wandb_run_dir(found, root)
    else:
        _walk(found, root)
    allowed = _ALLOWED_ROOTS.get()
    if allowed is not None:
        _confine(found, allowed)
    return found


def _walk(found: Discovery, root: Path) -> None:
    seen = 0
    stack: list[tuple[Path, int]] = [(root, 0)]
    while stack:
        directory, depth = stack.pop()
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError as error:
            found.warnings.append(_skipped(found, directory, error))
            continue
        # An MLflow folder is one source, read whole by its reader: its metric files are not logs of their own,
        # and its artifacts/ may hold copies of checkpoints and trainer states.
        store = store_of_folder(directory, (e.name for e in entries), is_root=depth == 0)
        if store is not None:
            if store not in found.mlflow_stores:
                found.mlflow_stores.append(store)
            continue
        in_checkpoints = is_checkpoint_folder(directory.name)
        for entry in entries:
            seen += 1
            if seen > MAX_FILES:
                found.truncated_walk = True
                return
            path = Path(entry.path)
            try:
                is_dir, is_file = entry.is_dir(follow_symlinks=False), entry.is_file()
            except OSError as error:  # ELOOP (a -> b -> a), EACCES, an unmounted target: skip it, read the rest
                found.warnings.append(_skipped(found, path, error))
                continue
            if is_dir:
                step = checkpoint_step(entry.name, is_dir=True)
                if step is None and in_checkpoints and not _holds_logs(path) and not _holds_checkpoints(path):
                    step = checkpoint_step(entry.name, is_dir=True, in_checkpoint_folder=True)
                if step is not None:
                    found.checkpoints.append(Checkpoint(step=step, path=found.rel(path)))
                    _scan_checkpoint_dir(found, path, step)
                elif WANDB_RUN_DIR.match(entry.name):
                    _scan_wandb_run_dir(found, path)
                elif entry.name == "mlruns":
                    # Without experiments it holds only the artifacts of an SQL store's runs: nothing to read.
                    if holds_experiments(path) or _is_empty(path):
                        found.mlflow_stores.append(path)
                elif depth < MAX_DEPTH and entry.name not in _SKIP_DIRS and (
                    not entry.name.startswith(".") or entry.name == ".hydra"
                ):
                    stack.append((path, depth + 1))
            elif is_file:
                _classify_file(found, path)
    found.checkpoints.sort(key=lambda c: (c.step, c.path))


def _skipped(found: Discovery, path: Path, error: OSError) -> str:
    reason = "a symlink loop" if error.errno == errno.ELOOP else (error.strerror or type(error).__name__).lower()
    return f"{found.rel(path)}: skipped, it cannot be read ({reason}); fix or remove it to have it read"


def _is_empty(path: Path) -> bool:
    try:
        with os.scandir(path) as entries:
            return next(entries, None) is None
    except OSError:
        return False


def _confine(found: Discovery, allowed: tuple[Path, ...]) -> None:
    """Drop every path (and MLflow folder holding a path) whose real path is outside `allowed`, with a warning."""

    def inside(path: Path) -> bool:
        real = Path(os.path.realpath(path))
        if path.is_dir():
            # A folder read whole: everything in it must stay inside too (a metric file linked to /etc/...).
            for folder, dirs, files in os.walk(path):
                for name in dirs + files:
                    if not _under(Path(os.path.realpath(os.path.join(folder, name))), allowed):
                        found.warnings.append(f"{found.rel(Path(folder) / name)}: not read, it leads outside the "
                                              "allowed run roots (through a symlink)")
                        return False
        if _under(real, allowed):
            return True
        found.warnings.append(f"{found.rel(path)}: not read, it leads outside the allowed run roots (through a "
                              "symlink)")
        return False

    found.files = [p for p in found.files if inside(p)]
    found.event_files = [p for p in found.event_files if inside(p)]
    found.wandb_files = [p for p in found.wandb_files if inside(p)]
    found.mlflow_stores = [p for p in found.mlflow_stores if inside(p)]
    found.trainer_states = [(step, p) for step, p in found.trainer_states if inside(p)]
    found.config_files = [(step, p) for step, p in found.config_files if inside(p)]


def _under(real: Path, allowed: tuple[Path, ...]) -> bool:
    return any(real.is_relative_to(root) for root in allowed)


def _scan_checkpoint_dir(found: Discovery, path: Path, step: int) -> None:
    # Inside a checkpoint only the trainer state and argument/config files are of interest.
    try:
        names = {e.name for e in os.scandir(path) if e.is_file()}
    except OSError:  # a loop or an unreadable entry here: the checkpoint still counts, its files are not read
        return
    if "trainer_state.json" in names:
        found.trainer_states.append((step, path / "trainer_state.json"))
    for name in ("training_args.bin", "config.json", "adapter_config.json"):
        if name in names:
            found.config_files.append((step, path / name))
    verl_model_config = path / "actor" / "huggingface" / "config.json"  # verl saves the HF config here
    if verl_model_config.is_file():
        found.config_files.append((step, verl_model_config))


def _scan_wandb_run_dir(found: Discovery, path: Path) -> None:
    """A W&B run folder: its `.wandb` log holds the whole history, config and system stats.

    `files/output.log` and `files/config.yaml` repeat what the log holds, so they are read only when there
    is no `.wandb` file (a pre-0.10 client, or a copy without it); `files/media`, `artifacts` and `logs` are
    never metric logs. Pre-0.10 clients wrote `wandb-history.jsonl`, which the JSONL reader reads.
    """
    logs = sorted(path.glob("*.wandb"))
    found.wandb_files.extend(logs)
    if logs:
        return
    for name in ("wandb-history.jsonl", "output.log", "files/output.log"):
        if (path / name).is_file():
            found.files.append(path / name)
    for name in ("config.yaml", "files/config.yaml"):
        if (path / name).is_file():
            found.config_files.append((None, path / name))


# A log rotated or kept from an earlier launch: `train.log.1` (Python's RotatingFileHandler), `metrics.jsonl.2`.
_ROTATED = re.compile(r".+\.(?:log|out|err|txt|jsonl|csv)\.\d{1,3}", re.IGNORECASE)


def _classify_file(found: Discovery, path: Path) -> None:
    name = path.name
    suffix = path.suffix.lower()
    step = checkpoint_step(name, is_dir=False, in_checkpoint_folder=is_checkpoint_folder(path.parent.name))
    if step is not None:
        found.checkpoints.append(Checkpoint(step=step, path=found.rel(path)))
        return
    if name == "trainer_state.json":
        found.trainer_states.append((None, path))
    elif suffix == ".wandb":
        found.wandb_files.append(path)
    elif path.parent.name == "wandb" and name.startswith("debug"):
        return  # W&B's own debug logs (`wandb/debug.log`, `debug-internal.log`)
    elif "tfevents" in name:
        found.event_files.append(path)
    elif name in CONFIG_FILE_NAMES:
        found.config_files.append((None, path))
    elif suffix in _PAYLOAD_SUFFIXES or name in _NOT_LOGS:
        return
    elif suffix in _TEXT_SUFFIXES or suffix in SQLITE_SUFFIXES or name.startswith("nohup") or _ROTATED.fullmatch(name):
        found.files.append(path)
