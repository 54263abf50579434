"""The cache of generated runs: one folder per case, keyed by a hash of its spec and `GENERATOR_VERSION`."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import tempfile
from collections.abc import Iterable
from pathlib import Path

from assessor.evals.cases import Case, Generated
from assessor.evals.generate.writers import write_run

GENERATOR_VERSION = "3"


def spec_key(spec: Generated) -> str:
    """A short hash of the spec and the generator version (the cache key)."""
    payload = json.dumps({"v": GENERATOR_VERSION, "spec": spec.model_dump(mode="json")}, sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


def generate_all(cases: Iterable[Case | tuple[Path, Case]], cache_dir: Path) -> dict[str, Path]:
    """Write every generated case's run under `cache_dir`, reusing runs whose spec has not changed.

    Each run lives in `<cache_dir>/<case name>-<hash of spec and GENERATOR_VERSION>`; it is written to a
    temporary folder first and renamed, so a present folder is always complete. Older versions of a case's
    run are removed.

    Args:
        cases: cases (or the `(file, case)` pairs `load_cases` returns); real-run cases are skipped.
        cache_dir: where the runs are kept.

    Returns:
        Case name -> run directory.
    """
    cache_dir = Path(cache_dir)
    cache_dir.mkdir(parents=True, exist_ok=True)
    out: dict[str, Path] = {}
    for item in cases:
        case = item[1] if isinstance(item, tuple) else item
        if case.run is None:
            continue
        final = cache_dir / f"{case.name}-{spec_key(case.run)}"
        if not final.is_dir():
            older = re.compile(re.escape(case.name) + r"-[0-9a-f]{16}")
            for stale in cache_dir.glob(f"{case.name}-*"):
                if stale.is_dir() and older.fullmatch(stale.name):
                    shutil.rmtree(stale, ignore_errors=True)
            scratch = Path(tempfile.mkdtemp(prefix=f".{case.name}-", dir=cache_dir))
            try:
                write_run(case.run, scratch / "run")
                (scratch / "run").rename(final)
            finally:
                shutil.rmtree(scratch, ignore_errors=True)
        out[case.name] = final
    return out
