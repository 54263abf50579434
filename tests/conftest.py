from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples"
# CI clones the repo with the team's shared/ folder beside it; the real runs are read from there, not copied.
REAL_RUNS = REPO.parent / "shared" / "real-runs"


@pytest.fixture
def real_runs() -> Path:
    if not REAL_RUNS.is_dir():
        pytest.skip(f"{REAL_RUNS} not found (the shared real-runs folder sits beside the repository)")
    return REAL_RUNS


@pytest.fixture(autouse=True)
def private_cache_dir(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test's on-disk ingest cache (`assessor watch`) goes to a temporary folder, never ~/.cache."""
    cache = tmp_path_factory.mktemp("xdg-cache")
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    return cache
