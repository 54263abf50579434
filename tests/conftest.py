from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from assessor.evals.real_runs import MANIFEST as MANIFEST_FILE
from assessor.evals.real_runs import locate, missing_reason, read_manifest

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples"
# The eval set's real runs: the Apache-2.0 ones are committed here; the others are fetched here
# (`assessor fetch-real-runs`) or read from the team's copy, ../shared/real-runs, when it sits beside the repository.
REAL_RUNS_FOLDER = REPO / "evals" / "real-runs"
MANIFEST = read_manifest(REAL_RUNS_FOLDER / MANIFEST_FILE)
REAL_RUN_NAMES = [run.name for run in MANIFEST.runs]


class RealRuns:
    """`real_runs / NAME` is the run's folder on this machine; a run not here skips its test with the fix."""

    def __truediv__(self, name: str) -> Path:
        found = locate(REAL_RUNS_FOLDER, name)
        if found is None:
            run = MANIFEST.get(name)
            pytest.skip(f"real run {name}: {missing_reason(run)}" if run else f"no real run {name} in the manifest")
        return found

    def iterdir(self) -> Iterator[Path]:
        """The runs on this machine."""
        return iter([p for p in (locate(REAL_RUNS_FOLDER, n) for n in REAL_RUN_NAMES) if p is not None])


@pytest.fixture
def real_runs() -> RealRuns:
    return RealRuns()


@pytest.fixture(autouse=True)
def private_cache_dir(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test's on-disk ingest cache (`assessor watch`) goes to a temporary folder, never ~/.cache."""
    cache = tmp_path_factory.mktemp("xdg-cache")
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    return cache
