"""`assessor eval SOURCE --export-prompts DIR`: the LLM judge's prompt for every case, for offline readers.

Each case gets `DIR/<case>/{system.md, user.md, image-1.png, schema.json}` (see `assessor.judge.export`), built
the way `assessor prompt` builds it for one run. A reader (a practitioner, or any model) answers each into
`DIR2/<case>/verdict.json`; `assessor eval SOURCE --judge verdicts:DIR2` then scores the answers like any judge.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from assessor.errors import AssessorError
from assessor.evals.harness.loading import load_located, locate_runs, read_cases, select_cases
from assessor.evals.harness.running import clock_per_file


def export_prompts(
    source: Path, out_dir: Path, *, subset: str = "all", names: Sequence[str] = (), cache_dir: Path | None = None,
    judge: str = "anthropic", images: bool = True, warn: Callable[[str], None] | None = None,
) -> list[str]:
    """Write the prompt of every selected case into `out_dir/<case>/`.

    Args:
        source: a case file or a folder of them (`evals/`).
        out_dir: where the case folders go.
        subset: `all`, `fast`, `synthetic` or `real`.
        names: glob patterns on case names (`!GLOB` leaves cases out).
        cache_dir: where generated runs are kept (default: `.cache` beside the case files).
        judge: the provider whose request is exported (`anthropic` or `openai`).
        images: include the dashboard.
        warn: told about cases skipped (a real run not on this machine, a run that cannot be read).

    Returns:
        The names of the cases written, in case order.

    Raises:
        ConfigError: no cases, a bad case file, an unknown subset or provider.
    """
    from assessor.pipeline import write_prompt

    root = source if source.is_dir() else source.parent
    cache_dir = cache_dir or root / ".cache"
    cases = select_cases(read_cases(source, [cache_dir]), subset, names)
    where, skipped = locate_runs(cases, cache_dir)
    loaded, failed = load_located(cases, where)
    if warn is not None:
        for gone in failed:
            warn(f"skipped case {gone.case}: {gone.reason}")
    clocks = clock_per_file(loaded)
    written: list[str] = []
    for item in loaded:
        try:
            write_prompt(where[item.case.name], out_dir / item.case.name, judge=judge, images=images,
                         run=item.run, now=clocks.get(item.file))
        except AssessorError as error:
            if warn is not None:
                warn(f"skipped case {item.case.name}: {error}")
            continue
        written.append(item.case.name)
    if warn is not None:
        for gone in skipped:
            warn(f"skipped case {gone.case}: {gone.reason}")
    return written
