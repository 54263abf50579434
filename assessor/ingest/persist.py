"""The ingest cache kept on disk: a check in a new process (`watch --once` from cron) reads only what is new.

One file per source file under `$XDG_CACHE_HOME/assessor/ingest/` (`~/.cache/...` by default): arrays and one
JSON header in an `.npz`, loaded with `allow_pickle=False`, so a cache file is data and never code. The header
names the cache version, the reader and the source path; a file that does not match, or that cannot be read
at all (corrupt, cut short, written by another version), is ignored and rebuilt from the source. Writes go
to a temporary file renamed into place, so a reader never sees half a cache file.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from assessor.ingest.base import SourceData, categorical
from assessor.run import Sample

CACHE_VERSION = 2  # 2: integer arrays that count up by one are kept as their first value and length
_HEADER = "__header__"


def default_cache_dir(env: Mapping[str, str] | None = None) -> Path:
    """`$XDG_CACHE_HOME/assessor/ingest` (`~/.cache/assessor/ingest` when the variable is unset or empty)."""
    env = os.environ if env is None else env
    base = Path(env["XDG_CACHE_HOME"]) if env.get("XDG_CACHE_HOME") else Path.home() / ".cache"
    return base / "assessor" / "ingest"


class DiskStore:
    """Cache files of one directory, one per (reader, source file)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def _file(self, reader_name: str, path: Path) -> Path:
        key = hashlib.sha256(f"{reader_name}\0{path}".encode()).hexdigest()[:32]
        return self.root / f"{key}.npz"

    def load(self, reader_name: str, path: Path) -> tuple[dict[str, np.ndarray], dict[str, Any]] | None:
        """The arrays and header saved for this source, or None (none saved, or not usable)."""
        file = self._file(reader_name, path)
        try:
            with file.open("rb") as handle, np.load(handle, allow_pickle=False) as saved:
                header = json.loads(bytes(saved[_HEADER]).decode("utf-8"))
                if not isinstance(header, dict) or header.get("version") != CACHE_VERSION or \
                        header.get("reader") != reader_name or header.get("path") != str(path):
                    return None
                arrays = _unpacked({name: saved[name] for name in saved.files if name != _HEADER})  # while open
        except FileNotFoundError:
            return None
        except Exception:  # corrupt, cut short, foreign: any failure to read means "no cache", never an error
            return None
        body = header.get("body")
        return (arrays, body) if isinstance(body, dict) else None

    def save(self, reader_name: str, path: Path, arrays: Mapping[str, np.ndarray], body: Mapping[str, Any]) -> None:
        """Save atomically; a cache that cannot be written (read-only home, full disk) is skipped silently."""
        header = {"version": CACHE_VERSION, "reader": reader_name, "path": str(path), "body": body}
        try:
            encoded = json.dumps(header, allow_nan=True).encode("utf-8")
        except (TypeError, ValueError):  # a fact that is not plain JSON: this source is not cached on disk
            return
        temporary = None
        try:
            self.root.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd, temporary = tempfile.mkstemp(prefix=".cache.", suffix=".npz", dir=self.root)
            contents = {_HEADER: np.frombuffer(encoded, dtype=np.uint8), **_packed(arrays)}
            savez: Any = np.savez  # numpy's stub types the keyword arrays as its own flags
            with os.fdopen(fd, "wb") as handle:
                savez(handle, **contents)
            os.replace(temporary, self._file(reader_name, path))
        except OSError:
            if temporary is not None:
                Path(temporary).unlink(missing_ok=True)


_RUN = "@run"  # a name ending so holds (first, length) of an array that counts up by one (row and sequence numbers)


def _packed(arrays: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The arrays to write, each integer array that counts up by one as its first value and length."""
    out: dict[str, np.ndarray] = {}
    for name, array in arrays.items():
        if array.dtype == np.int64 and array.ndim == 1 and len(array) > 2 and \
                int(array[-1]) - int(array[0]) == len(array) - 1 and bool(np.all(np.diff(array) == 1)):
            out[name + _RUN] = np.array([array[0], len(array)], dtype=np.int64)
        else:
            out[name] = array
    return out


def _unpacked(arrays: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The arrays `_packed` was given."""
    out: dict[str, np.ndarray] = {}
    for name, array in arrays.items():
        if name.endswith(_RUN):
            first, length = (int(v) for v in array)
            out[name[:-len(_RUN)]] = np.arange(first, first + length, dtype=np.int64)
        else:
            out[name] = array
    return out


def source_state(data: SourceData) -> tuple[dict[str, np.ndarray], dict[str, Any]] | None:
    """A reading as arrays and plain JSON (None for the few readings not kept on disk: GPU telemetry)."""
    if data.gpu is not None or data.gpu_devices:
        return None
    frame = data.frame
    arrays = {
        "step": frame["step"].to_numpy(dtype=np.int64), "value": frame["value"].to_numpy(dtype=np.float64),
        "wall_time": frame["wall_time"].to_numpy(dtype=np.float64),
        "key": np.asarray(frame["key"].cat.codes.to_numpy(), dtype=np.int64),
        "split": np.asarray(frame["split"].cat.codes.to_numpy(), dtype=np.int64),
    }
    body = {
        "path": str(data.path), "format": data.format, "keys": [str(k) for k in frame["key"].cat.categories],
        "splits": [str(s) for s in frame["split"].cat.categories],
        "facts": [[name, list(fact)] for name, fact in data.facts.items()], "warnings": data.warnings,
        "notes": data.notes, "samples": [s.model_dump(mode="json") for s in data.samples],
        "steps_inferred": data.steps_inferred,
    }
    return arrays, body


def source_from_state(arrays: Mapping[str, np.ndarray], body: Mapping[str, Any]) -> SourceData:
    """The reading `source_state` was taken from."""
    frame = pd.DataFrame({
        "step": np.asarray(arrays["step"], dtype=np.int64),
        "key": categorical(np.asarray(arrays["key"]), [str(k) for k in body["keys"]]),
        "value": np.asarray(arrays["value"], dtype=np.float64),
        "split": categorical(np.asarray(arrays["split"]), [str(s) for s in body["splits"]]),
        "wall_time": np.asarray(arrays["wall_time"], dtype=np.float64),
    })
    return SourceData(
        path=Path(body["path"]), format=str(body["format"]), frame=frame,
        facts={str(name): tuple(fact) for name, fact in body["facts"]}, warnings=list(body["warnings"]),
        notes=list(body["notes"]), samples=[Sample.model_validate(s) for s in body["samples"]],
        steps_inferred=body["steps_inferred"],
    )
