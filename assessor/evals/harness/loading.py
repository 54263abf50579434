"""Which cases an eval runs, and where their runs are.

Case files are read from a file or a folder, a subset is chosen (`all`, `fast`, `synthetic`, `real`, plus
name globs), generated runs are made (or found) in the cache and real runs are looked up beside their file.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from assessor.errors import AssessorError, ConfigError
from assessor.evals import real_runs
from assessor.evals.cases import Case, case_files, load_cases
from assessor.evals.harness.models import Kind, Skipped, case_kind
from assessor.run import Run

SUBSETS = ("all", "fast", "synthetic", "real")
FAST_TAG = "fast"


@dataclass(frozen=True)
class LoadedCase:
    """A case with its run, ready to judge."""

    case: Case
    file: Path
    run: Run

    @property
    def kind(self) -> Kind:
        """`synthetic` (generated) or `real` (a run on disk)."""
        return case_kind(self.case)


def read_cases(source: Path, skip: Sequence[Path] = ()) -> list[tuple[Path, Case]]:
    """Every case in `source` (a case file, or every `*.yaml` below a folder).

    Folders whose name starts with a dot (the `.cache` of generated runs, whose configs are YAML too), `cassettes/`,
    `runs/` and the folders in `skip` are not searched.

    Raises:
        ConfigError: a bad case file, or none found.
    """
    if not source.is_dir():
        return load_cases(source)
    skipped = [p.resolve() for p in skip]
    files = [f for f in case_files(source) if not any(f.resolve().is_relative_to(p) for p in skipped)]
    if not files:
        raise ConfigError(f"{source}: no case files (*.yaml) found; point `assessor eval` at the evals/ folder")
    return [item for file in files for item in load_cases(file)]


def select_cases(
    cases: Sequence[tuple[Path, Case]], subset: str = "all", names: Sequence[str] = (),
) -> list[tuple[Path, Case]]:
    """The cases an eval runs, in file order.

    Args:
        cases: every case, with its file (from `load_cases`).
        subset: `all`; `synthetic` or `real`; `fast`: the cases tagged `fast` plus the first synthetic case of
            each pattern (deterministic, and small enough for CI).
        names: shell-style globs, each matched against a case's name and its set (the case file's name without
            `.yaml`: `real_runs`, `holdout2`, ...), so `holdout*` is every holdout set whatever its cases are called.
            Plain globs keep what any of them matches; `!GLOB` then leaves out what it matches (from every case
            when no plain glob is given).

    Raises:
        ConfigError: an unknown subset, a glob that matches no case at all (a typo), or nothing left.
    """
    if subset not in SUBSETS:
        raise ConfigError(f"unknown subset {subset!r}; use one of {', '.join(SUBSETS)}")
    chosen: list[tuple[Path, Case]] = []
    patterns_seen: set[str] = set()
    for file, case in cases:
        if (subset == "synthetic" and case.run is None) or (subset == "real" and case.run is not None):
            continue
        if subset == "fast":
            first_of_pattern = case.run is not None and case.run.pattern not in patterns_seen
            if case.run is not None:
                patterns_seen.add(case.run.pattern)
            if not (first_of_pattern or FAST_TAG in case.tags):
                continue
        chosen.append((file, case))
    if names:
        keep = [n for n in names if not n.startswith("!")]
        drop = [n[1:] for n in names if n.startswith("!")]
        unmatched = [n for n in names if not any(_matches(f, c, n.removeprefix("!")) for f, c in cases)]
        if unmatched:
            raise ConfigError(f"--case {', '.join(unmatched)} matches no case name or set; the sets are "
                              f"{', '.join(sorted({f.stem for f, _ in cases}))}")
        chosen = [(f, c) for f, c in chosen
                  if (not keep or any(_matches(f, c, n) for n in keep)) and not any(_matches(f, c, n) for n in drop)]
        if not chosen:
            raise ConfigError(f"no case matches {', '.join(names)} in the {subset} subset")
    return chosen


def _matches(file: Path, case: Case, pattern: str) -> bool:
    return fnmatch.fnmatchcase(case.name, pattern) or fnmatch.fnmatchcase(file.stem, pattern)


def locate_runs(
    cases: Sequence[tuple[Path, Case]], cache_dir: Path,
) -> tuple[dict[str, Path], list[Skipped]]:
    """Where each case's run is: generated ones made (or found) in `cache_dir`, real ones next to their file.

    Returns:
        The run folder by case name, and the cases that cannot be run (with the reason).
    """
    where: dict[str, Path] = {}
    skipped: list[Skipped] = []
    manifests: dict[Path, real_runs.Manifest] = {}
    generated = [case for _, case in cases if case.run is not None]
    if generated:
        try:
            from assessor.evals.generate import generate_all
        except ImportError as error:
            raise ConfigError(f"synthetic cases need assessor.evals.generate, which cannot be imported ({error})") \
                from error
        where.update({name: Path(path) for name, path in generate_all(generated, cache_dir).items()})
    for file, case in cases:
        if case.path is not None:
            path = (file.parent / case.path).resolve()
            manifest = path.parent / real_runs.MANIFEST
            if path.exists() and (not manifest.is_file() or any(path.iterdir())):
                where[case.name] = path
            elif manifest.is_file():
                # A real run the repository may not hold: fetched beside it, or the team's copy read in place.
                found = real_runs.locate(path.parent, path.name)
                if manifest not in manifests:
                    manifests[manifest] = real_runs.read_manifest(manifest)
                listed = manifests[manifest].get(path.name)
                if found is not None:
                    where[case.name] = found
                elif listed is not None:
                    skipped.append(Skipped(case=case.name, reason=real_runs.missing_reason(listed), not_here=True))
                else:
                    skipped.append(Skipped(case=case.name, reason=f"{path} does not exist and {manifest} does not "
                                           "list it"))
            else:
                # A case file may come with the script that writes its runs (evals/holdout/make_holdout.py).
                makers = sorted(file.parent.glob("make_*.py"))
                hint = f"; write the runs with `python {makers[0]}`" if makers else ""
                skipped.append(Skipped(case=case.name, reason=f"{path} does not exist{hint}", not_here=bool(makers)))
        elif case.name not in where:
            skipped.append(Skipped(case=case.name, reason="the generator made no run for it"))
    return where, skipped


def load_located(
    cases: Sequence[tuple[Path, Case]], where: dict[str, Path],
) -> tuple[list[LoadedCase], list[Skipped]]:
    """The runs of the cases `locate_runs` found, read; a run that cannot be read is skipped with its error."""
    from assessor.ingest import load_run

    loaded: list[LoadedCase] = []
    failed: list[Skipped] = []
    for file, case in cases:
        if case.name not in where:
            continue
        try:
            loaded.append(LoadedCase(case, file, load_run(where[case.name])))
        except AssessorError as error:
            failed.append(Skipped(case=case.name, reason=str(error)))
    return loaded, failed
