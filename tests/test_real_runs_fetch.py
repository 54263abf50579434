"""The eval set's real runs in a fresh clone: committed where the licence allows, fetched (sha256-checked) otherwise."""

from __future__ import annotations

import hashlib
import shutil
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import ClassVar

import pytest
import yaml

from assessor.cli import main
from assessor.evals import real_runs
from assessor.evals.harness.loading import read_cases, select_cases
from tests.conftest import REAL_RUNS_FOLDER, REPO
from tests.local_http import LocalServer

MANIFEST = real_runs.read_manifest(REAL_RUNS_FOLDER / real_runs.MANIFEST)


def test_every_committed_run_is_apache_licensed_with_its_source_and_the_files_the_labels_saw():
    committed = sorted(p.name for p in REAL_RUNS_FOLDER.iterdir() if p.is_dir())
    assert committed == sorted(r.name for r in MANIFEST.runs if r.in_repository)
    assert len(committed) == 8  # the six reasoning-from-scratch runs and the two verl GRPO runs
    for name in committed:
        run = MANIFEST.get(name)
        assert run is not None and run.licence == "Apache-2.0"
        source = (REAL_RUNS_FOLDER / name / "SOURCE.md").read_text(encoding="utf-8")
        assert "Licence: Apache-2.0" in source
        for item in run.files:
            data = (REAL_RUNS_FOLDER / name / item.path).read_bytes()
            assert hashlib.sha256(data).hexdigest() == item.sha256 and len(data) == item.bytes


def test_every_other_run_has_a_pinned_source_and_the_labels_all_have_a_run():
    for run in MANIFEST.runs:
        assert run.source.startswith("https://github.com/") and "/tree/" in run.source
        commit = run.source.rsplit("/", 1)[-1]
        assert len(commit) == 40
        for item in run.files:
            raw = "https://raw.githubusercontent.com/"
            assert item.url is None or (item.url.startswith(raw) and commit in item.url)
    labelled = {c.name for _, c in read_cases(REPO / "evals" / "real_runs.yaml")}
    assert labelled == {r.name for r in MANIFEST.runs}


def test_every_run_on_this_machine_is_byte_for_byte_the_one_the_labels_saw():
    """Committed, fetched or the team's copy: whatever `locate` finds must have the manifest's sha256s."""
    checked = 0
    for run in MANIFEST.runs:
        folder = real_runs.locate(REAL_RUNS_FOLDER, run.name)
        if folder is None:
            continue
        for item in run.files:
            assert hashlib.sha256((folder / item.path).read_bytes()).hexdigest() == item.sha256, (run.name, item.path)
            checked += 1
    assert checked >= 10  # at least the committed runs' files


class Mirror(BaseHTTPRequestHandler):
    """Serves files from `root` as <run>/<path>; `tamper` lists paths served with one byte changed."""

    root: ClassVar[Path]
    tamper: ClassVar[set[str]] = set()
    requests: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        self.requests.append(self.path)
        target = self.root / self.path.lstrip("/")
        if not target.is_file():
            self.send_error(404)
            return
        data = target.read_bytes()
        if self.path.lstrip("/") in self.tamper:
            data = data[:-1] + bytes([data[-1] ^ 1])
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def clone(tmp_path: Path) -> Path:
    """A fresh clone's evals/real-runs: the manifest and the committed runs only, and no team copy beside it."""
    folder = tmp_path / "repo" / "evals" / "real-runs"
    shutil.copytree(REAL_RUNS_FOLDER, folder, ignore=lambda d, names: [n for n in names if n.startswith(".fetch")])
    for p in folder.iterdir():
        if p.is_dir() and not MANIFEST.get(p.name).in_repository:  # type: ignore[union-attr]
            shutil.rmtree(p)
    return folder


@pytest.fixture
def mirror(tmp_path: Path):
    """A local HTTP server holding two runs (copied from the committed ones under new names)."""
    root = tmp_path / "served"
    Mirror.root, Mirror.tamper, Mirror.requests = root, set(), []
    for name in ("rfs-ch07-grpo-kl-500", "verl-grpo-gsm8k-q3b-fsdp-base"):
        shutil.copytree(REAL_RUNS_FOLDER / name, root / "upstream" / name)
    server = LocalServer(Mirror).start()
    yield server
    server.stop()


def manifest_with_fetchable_runs(clone: Path, server_url: str) -> list[str]:
    """Two runs that are not in the clone, with URLs on the local server (what upstream raw URLs are for real)."""
    data = yaml.safe_load((clone / real_runs.MANIFEST).read_text(encoding="utf-8"))
    added = []
    for name in ("rfs-ch07-grpo-kl-500", "verl-grpo-gsm8k-q3b-fsdp-base"):
        entry = dict(next(r for r in data["runs"] if r["name"] == name))
        entry.update(name=f"fetched-{name}", in_repository=False, licence="none stated")
        entry["files"] = [{**f, "url": f"{server_url}/upstream/{name}/{f['path']}"} for f in entry["files"]]
        data["runs"].append(entry)
        added.append(entry["name"])
    (clone / real_runs.MANIFEST).write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return added


def test_fetch_checks_every_sha256_and_refuses_a_changed_file(clone, mirror):
    env = {real_runs.SHARED_VARIABLE: ""}
    names = manifest_with_fetchable_runs(clone, mirror.url)
    Mirror.tamper = {f"upstream/verl-grpo-gsm8k-q3b-fsdp-base/{f.path}"
                     for f in MANIFEST.get("verl-grpo-gsm8k-q3b-fsdp-base").files}  # type: ignore[union-attr]
    said: list[str] = []
    report = real_runs.fetch(clone, names=names, env=env, say=said.append)
    assert report.fetched == [names[0]]
    assert list(report.failed) == [names[1]]
    assert "has sha256" in report.failed[names[1]] and "refused it" in report.failed[names[1]]
    # The good run is in place, byte for byte; the refused one left nothing behind, not even its staging folder.
    for item in MANIFEST.get("rfs-ch07-grpo-kl-500").files:  # type: ignore[union-attr]
        assert (clone / names[0] / item.path).read_bytes() == (REAL_RUNS_FOLDER / "rfs-ch07-grpo-kl-500" /
                                                               item.path).read_bytes()
    assert not (clone / names[1]).exists() and not list(clone.glob(".fetch-*"))
    assert real_runs.locate(clone, names[0], env) == clone / names[0]
    # A second fetch finds the run here and asks the server for nothing.
    Mirror.requests.clear()
    Mirror.tamper = set()
    again = real_runs.fetch(clone, names=[names[0]], env=env)
    assert again.present == [names[0]] and Mirror.requests == []


def test_fetch_command_with_a_mirror_and_runs_only_a_mirror_has(clone, mirror, monkeypatch, capsys):
    monkeypatch.setenv(real_runs.SHARED_VARIABLE, "")
    evals = clone.parent
    # Without a mirror, runs holding files the team wrote (no upstream URL) are named, not half-fetched.
    assert main(["fetch-real-runs", str(evals), "--run", "nb-grpo-phi4-14b-gsm8k-unsloth"]) == 0
    err = capsys.readouterr().err
    assert "1 need --mirror" in err and "nb-grpo-phi4-14b-gsm8k-unsloth" in err
    assert not (clone / "nb-grpo-phi4-14b-gsm8k-unsloth").exists()
    # A mirror that lacks the run: one line per run, exit 1, nothing left behind.
    assert main(["fetch-real-runs", str(evals), "--run", "nb-grpo-phi4-14b-gsm8k-unsloth",
                 "--mirror", mirror.url]) == 1
    err = capsys.readouterr().err
    assert "HTTP 404" in err and "1 failed" in err and "Traceback" not in err
    assert not list(clone.glob(".fetch-*"))
    assert main(["fetch-real-runs", str(evals), "--run", "no-such-run"]) == 2
    assert "no-such-run: not in" in capsys.readouterr().err


def test_fresh_clone_eval_says_in_one_line_what_it_left_out(monkeypatch, capsys):
    monkeypatch.setenv(real_runs.SHARED_VARIABLE, "")
    code = main(["eval", str(REPO / "evals"), "--case", "real_runs", "--case", "!verl-*", "--case", "!rfs-ch07-*",
                 "--judge", "rules", "--delay-points", "2"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "1 cases (0 synthetic, 1 real)" in out  # rfs-ch06, the only committed run the globs keep
    lines = [line for line in err.splitlines() if "left out" in line or "skipped case" in line]
    assert len(lines) == 1 and "left out 21 cases" in lines[0] and "`assessor fetch-real-runs`" in lines[0]


def test_case_globs_match_names_and_sets_and_a_typo_is_an_error():
    cases = read_cases(REPO / "evals", [REPO / "evals" / ".cache"])
    sets = lambda chosen: {f.stem for f, _ in chosen}  # noqa: E731
    everything = {f.stem for f, _ in cases}
    # `holdout*` is every holdout set, whatever its case names start with (holdout-, holdout2-, h3-, h4-, ...).
    holdouts = {name for name in everything if name.startswith("holdout")}
    assert {"holdout", "holdout2", "holdout3"} <= holdouts
    assert sets(select_cases(cases, "all", ["!holdout*"])) == everything - holdouts
    assert sets(select_cases(cases, "all", ["holdout3"])) == {"holdout3"}
    chosen = select_cases(cases, "all", ["real_runs", "example-*", "!rfs-*"])
    assert sets(chosen) == {"real_runs", "examples"}
    assert not any(c.name.startswith("rfs-") for _, c in chosen)
    with pytest.raises(Exception, match="--case !holdot\\* matches no case name or set"):
        select_cases(cases, "all", ["!holdot*"])
