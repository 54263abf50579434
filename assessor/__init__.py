"""assessor: reads RL post-training runs and says continue, stop, or roll back.

The library comes first; the `assessor` command is a thin client of these functions.
"""

from assessor.diagnose import Diagnostics, diagnose
from assessor.errors import AssessorError, NoMetricsError, RunNotFoundError, UnreadableSourceError
from assessor.ingest import load_run
from assessor.inspection import RunInspection, inspect_run
from assessor.run import Checkpoint, Run, RunFacts, SourceInfo

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
