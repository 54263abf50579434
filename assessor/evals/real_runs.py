"""The real third-party runs of the eval set: where they are on this machine, and fetching the missing ones.

`evals/real-runs/manifest.yaml` lists every run with its licence, its source and the sha256 of each file the labels
were made on. The Apache-2.0 runs are committed in `evals/real-runs/`; the others are not ours to redistribute and
are fetched into the same folder by `assessor fetch-real-runs` (from raw files at pinned commits, or from a mirror
of the team's copy), every file checked against its sha256 before the run is put in place. The team's own copy,
`../shared/real-runs` beside the repository (or the folder named by `ASSESSOR_REAL_RUNS`), is read in place when
present, so nothing needs fetching there.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from assessor.errors import AssessorError, ConfigError

MANIFEST = "manifest.yaml"
FOLDER = "real-runs"
SHARED_VARIABLE = "ASSESSOR_REAL_RUNS"
FETCH_COMMAND = "assessor fetch-real-runs"
_TIMEOUT_S = 60.0
_CHUNK = 1 << 16


class FetchError(AssessorError):
    """A file could not be fetched, or what came back is not the file the labels were made on: exit code 1."""

    exit_code = 1


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RunFile(_Model):
    """One file of a run, as the labels saw it."""

    path: str = Field(description="Relative to the run folder, `/`-separated.")
    sha256: str
    bytes: int
    url: str | None = Field(description="A raw file at a pinned commit; None: written by the team, mirror only.")


class RealRun(_Model):
    """One run of the manifest."""

    name: str
    licence: str
    in_repository: bool = Field(description="Redistributable (Apache-2.0): committed in evals/real-runs/.")
    source: str
    files: list[RunFile]


class Manifest(_Model):
    """`evals/real-runs/manifest.yaml`."""

    runs: list[RealRun]

    def get(self, name: str) -> RealRun | None:
        """The run called `name`, if the manifest lists it."""
        return next((run for run in self.runs if run.name == name), None)


def read_manifest(path: Path) -> Manifest:
    """The manifest at `path`.

    Raises:
        ConfigError: missing, not YAML, or not a manifest.
    """
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        return Manifest.model_validate(data)
    except OSError as error:
        raise ConfigError(f"{path}: cannot be read ({error.strerror}); restore it from the repository") from None
    except (yaml.YAMLError, ValidationError) as error:
        first = str(error).splitlines()[0]
        raise ConfigError(f"{path}: not a real-runs manifest ({first}); restore it from the repository") from None


def shared_folder(folder: Path, env: dict[str, str] | None = None) -> Path | None:
    """The team's copy of the runs: `$ASSESSOR_REAL_RUNS`, else `shared/real-runs` beside the repository.

    `folder` is the repository's `evals/real-runs`. An empty `ASSESSOR_REAL_RUNS` means "no team copy" (a fresh
    clone, as a newcomer has it).
    """
    env = dict(os.environ) if env is None else env
    if SHARED_VARIABLE in env:
        named = env[SHARED_VARIABLE]
        return Path(named) if named and Path(named).is_dir() else None
    beside = folder.resolve().parent.parent.parent / "shared" / FOLDER
    return beside if beside.is_dir() else None


def locate(folder: Path, name: str, env: dict[str, str] | None = None) -> Path | None:
    """Where run `name` is on this machine: `folder/name` (committed or fetched), else the team's copy; or None."""
    here = folder / name
    if here.is_dir() and any(here.iterdir()):
        return here
    shared = shared_folder(folder, env)
    if shared is not None and (shared / name).is_dir():
        return shared / name
    return None


def missing_reason(run: RealRun) -> str:
    """What to do about a run that is not on this machine."""
    if run.in_repository:
        return f"{run.name} belongs in the repository ({FOLDER}/{run.name}); restore it with `git checkout`"
    if any(item.url is None for item in run.files):  # files the collecting team wrote are published nowhere else
        return (f"not in the repository (licence: {run.licence}), and partly written by the team that collected it; "
                f"fetch it with `{FETCH_COMMAND} --mirror URL`")
    return f"not in the repository (licence: {run.licence}); fetch it with `{FETCH_COMMAND}`"


@dataclass
class FetchReport:
    """What `fetch` did, run by run."""

    fetched: list[str] = field(default_factory=list)
    present: list[str] = field(default_factory=list)
    needs_mirror: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)

    def line(self) -> str:
        """One line: counts, and what to do next."""
        parts = [f"fetched {len(self.fetched)}", f"already here {len(self.present)}"]
        if self.needs_mirror:
            parts.append(f"{len(self.needs_mirror)} need --mirror (files the team wrote, published nowhere upstream: "
                         f"{', '.join(self.needs_mirror)})")
        if self.failed:
            parts.append(f"{len(self.failed)} failed")
        return "real runs: " + ", ".join(parts)



def fetch(
    folder: Path, *, names: Sequence[str] = (), mirror: str | None = None, env: dict[str, str] | None = None,
    say: Callable[[str], None] | None = None, timeout: float = _TIMEOUT_S,
) -> FetchReport:
    """Download the runs of `folder/manifest.yaml` that are not on this machine into `folder/<run>/`.

    Each run is written into `folder/.fetch-<run>/` first and moved into place only when every file has its
    manifest sha256, so a half-fetched or altered run is never read as a labelled one.

    Args:
        folder: the repository's `evals/real-runs`.
        names: only these runs (all when empty).
        mirror: a base URL serving `<mirror>/<run>/<path>` (the team's copy); used for every file when given.
        env: the environment (for `ASSESSOR_REAL_RUNS`); default `os.environ`.
        say: told about each run as it is done.
        timeout: seconds per request.

    Raises:
        ConfigError: a bad manifest, or a name it does not list.
    """
    manifest = read_manifest(folder / MANIFEST)
    unknown = [n for n in names if manifest.get(n) is None]
    if unknown:
        raise ConfigError(f"{', '.join(unknown)}: not in {folder / MANIFEST}; see the names listed there")
    report = FetchReport()
    for run in manifest.runs:
        if names and run.name not in names:
            continue
        if locate(folder, run.name, env) is not None:
            report.present.append(run.name)
            continue
        if mirror is None and any(f.url is None for f in run.files):
            report.needs_mirror.append(run.name)
            continue
        try:
            _fetch_run(folder, run, mirror, timeout)
        except FetchError as error:
            report.failed[run.name] = str(error)
            if say is not None:
                say(f"{run.name}: {error}")
            continue
        report.fetched.append(run.name)
        if say is not None:
            say(f"{run.name}: fetched {len(run.files)} file{'s' if len(run.files) != 1 else ''}, sha256 checked")
    return report


def _fetch_run(folder: Path, run: RealRun, mirror: str | None, timeout: float) -> None:
    staging = folder / f".fetch-{run.name}"
    shutil.rmtree(staging, ignore_errors=True)
    try:
        for item in run.files:
            url = f"{mirror.rstrip('/')}/{run.name}/{item.path}" if mirror else item.url
            assert url is not None  # runs with mirror-only files were set aside by the caller
            target = staging / item.path
            target.parent.mkdir(parents=True, exist_ok=True)
            digest = _download(url, target, timeout)
            if digest != item.sha256:
                raise FetchError(
                    f"{item.path} from {url} has sha256 {digest[:16]}…, not the {item.sha256[:16]}… the labels were "
                    "made on; refused it (the file changed upstream: fetch from the team's copy with --mirror)")
        destination = folder / run.name
        if destination.exists() and not any(destination.iterdir()):
            destination.rmdir()
        staging.rename(destination)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _download(url: str, target: Path, timeout: float) -> str:
    """Write `url` to `target`; return its sha256."""
    if not url.startswith(("https://", "http://")):
        raise FetchError(f"{url}: only http(s) URLs are fetched")
    digest = hashlib.sha256()
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response, target.open("wb") as out:
            while chunk := response.read(_CHUNK):
                digest.update(chunk)
                out.write(chunk)
    except urllib.error.HTTPError as error:
        raise FetchError(f"{url}: HTTP {error.code} ({error.reason}); check the URL or use --mirror") from None
    except (urllib.error.URLError, TimeoutError, OSError) as error:
        reason = getattr(error, "reason", None) or error
        raise FetchError(f"{url}: cannot be reached ({reason}); check the network or use --mirror") from None
    return digest.hexdigest()
