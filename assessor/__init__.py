"""assessor: reads RL post-training runs and says continue, stop, or roll back.

The library comes first; the `assessor` command is a thin client of these functions.
"""

from __future__ import annotations

import sys
import types
from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from assessor.diagnose import Diagnostics as Diagnostics
    from assessor.diagnose import diagnose as diagnose
    from assessor.errors import AssessorError as AssessorError
    from assessor.errors import NoMetricsError as NoMetricsError
    from assessor.errors import RunNotFoundError as RunNotFoundError
    from assessor.errors import UnreadableSourceError as UnreadableSourceError
    from assessor.ingest import load_run as load_run
    from assessor.inspection import RunInspection as RunInspection
    from assessor.inspection import inspect_run as inspect_run
    from assessor.run import Checkpoint as Checkpoint
    from assessor.run import Run as Run
    from assessor.run import RunFacts as RunFacts
    from assessor.run import SourceInfo as SourceInfo

# Imported on first use (PEP 562), so that `assessor --version` or a command that never diagnoses does not pay
# for numpy, pandas and pydantic at start-up.
_LAZY = {
    "AssessorError": "assessor.errors",
    "Checkpoint": "assessor.run",
    "Diagnostics": "assessor.diagnose",
    "NoMetricsError": "assessor.errors",
    "Run": "assessor.run",
    "RunFacts": "assessor.run",
    "RunInspection": "assessor.inspection",
    "RunNotFoundError": "assessor.errors",
    "SourceInfo": "assessor.run",
    "UnreadableSourceError": "assessor.errors",
    "diagnose": "assessor.diagnose",
    "inspect_run": "assessor.inspection",
    "load_run": "assessor.ingest",
}

__all__ = [
    "AssessorError",
    "Checkpoint",
    "Diagnostics",
    "NoMetricsError",
    "Run",
    "RunFacts",
    "RunInspection",
    "RunNotFoundError",
    "SourceInfo",
    "UnreadableSourceError",
    "diagnose",
    "inspect_run",
    "load_run",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'assessor' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


class _Package(types.ModuleType):
    """`assessor.diagnose` is the function, as it was when this file imported it eagerly.

    Loading the subpackage `assessor.diagnose` makes the import system bind it on this package under the same
    name; that binding is skipped, so `from assessor import diagnose` gives the function whatever was loaded first.
    """

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "diagnose" and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
