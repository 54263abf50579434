"""prompts/ and skills/ ship inside the package, so the LLM judges work from a wheel, not only from a checkout.

They stay at the repository root (the docs point there) and are mapped into the package as `assessor._prompts`
and `assessor._skills` (pyproject.toml); the judges read them through importlib.resources only.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from importlib import resources
from pathlib import Path

from assessor.judge import prompts
from tests.conftest import REPO


def test_prompts_and_skills_are_resolved_as_package_data_not_repo_paths() -> None:
    assert resources.files("assessor._prompts") == prompts.PROMPTS_DIR
    assert resources.files("assessor._skills") == prompts.SKILLS_DIR
    assert {p.name for p in prompts.PROMPTS_DIR.iterdir()} >= {prompts.SYSTEM_TEMPLATE, prompts.USER_TEMPLATE}
    cards = resources.files("assessor._skills") / "cards"
    for algorithm in prompts.ALGORITHM_CARDS:
        for name, text in prompts.cards_for(algorithm):
            assert text == (cards / prompts.CARD_FILES[name]).read_text(encoding="utf-8")
    assert prompts.skill_guide() == (resources.files("assessor._skills") / prompts.GUIDE_FILE).read_text("utf-8")


def test_the_fingerprint_names_files_as_in_the_repository() -> None:
    # Cassettes store the fingerprint: it must not depend on where the package data is installed.
    names = sorted(name for root, folder, suffix in ((prompts.PROMPTS_DIR, "prompts", ".j2"),
                                                     (prompts.SKILLS_DIR, "skills", ".md"))
                   for name, _ in prompts._files(root, suffix, f"{folder}/"))
    on_disk = sorted(p.relative_to(REPO).as_posix() for pattern in ("prompts/*.j2", "skills/**/*.md")
                     for p in REPO.glob(pattern))
    assert names == on_disk


def test_pyproject_lists_every_package_and_maps_the_data_folders() -> None:
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    on_disk = {".".join(p.parent.relative_to(REPO).parts) for p in (REPO / "assessor").rglob("__init__.py")}
    assert set(config["packages"]) == on_disk | {"assessor._prompts", "assessor._skills"}
    assert config["package-dir"] == {"assessor._prompts": "prompts", "assessor._skills": "skills"}


def test_the_build_puts_the_prompts_and_skills_inside_the_package(tmp_path: Path) -> None:
    # setuptools' build_py lays out exactly what a wheel holds. It runs on a copy of the sources, so nothing is
    # left behind in the checkout, and offline (a full `pip wheel` needs the `wheel` package or a newer
    # setuptools from an index).
    source = tmp_path / "src"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        (source / name).write_bytes((REPO / name).read_bytes())
    for folder in ("assessor", "prompts", "skills"):
        for path in (REPO / folder).rglob("*"):
            if path.is_file() and "__pycache__" not in path.parts:
                target = source / path.relative_to(REPO)
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(path.read_bytes())
    lib = tmp_path / "lib"
    built = subprocess.run([sys.executable, "-c", "import setuptools; setuptools.setup()", "-q", "build_py", "-d",
                            str(lib)], cwd=source, capture_output=True, text=True, timeout=300, check=False)
    assert built.returncode == 0, built.stderr
    names = {p.relative_to(lib).as_posix() for p in lib.rglob("*") if p.is_file()}
    expected = {f"assessor/_prompts/{p.name}" for p in (REPO / "prompts").glob("*.j2")}
    expected |= {f"assessor/_skills/{p.relative_to(REPO / 'skills').as_posix()}"
                 for p in (REPO / "skills").rglob("*.md")}
    assert len(expected) >= 7 and expected <= names
    assert "assessor/report/templates/report.html.j2" in names and "assessor/py.typed" in names
    assert not any(n.startswith(("prompts/", "skills/")) for n in names)  # nothing outside the package

    # That layout, imported from outside the checkout, finds its templates, guide and cards inside itself.
    script = (
        "import assessor, json; from assessor.judge import prompts\n"
        "system = prompts.render(prompts.SYSTEM_TEMPLATE, {'algorithm': 'grpo', 'skill_guide': prompts.skill_guide(),"
        " 'cards': [{'name': n, 'text': t} for n, t in prompts.cards_for(None)]})\n"
        "print(json.dumps([assessor.__file__, str(prompts.PROMPTS_DIR), str(prompts.SKILLS_DIR),"
        " prompts.prompt_fingerprint(), len(system)]))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(lib)}
    ran = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=120, check=False)
    assert ran.returncode == 0, ran.stderr
    module, prompts_dir, skills_dir, fingerprint, system_chars = json.loads(ran.stdout)
    assert Path(module).is_relative_to(lib)
    assert (prompts_dir, skills_dir) == (str(lib / "assessor" / "_prompts"), str(lib / "assessor" / "_skills"))
    assert fingerprint == prompts.prompt_fingerprint()  # the same prompt as the checkout's
    assert system_chars > len(prompts.skill_guide())


def test_the_core_install_reads_event_files_without_tensorboard() -> None:
    """tensorboard (grpcio, werkzeug, a data-server binary) is a dev and eval dependency only; protobuf reads."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert not any(d.startswith("tensorboard") for d in project["dependencies"])
    assert any(d.startswith("protobuf") for d in project["dependencies"])
    example = REPO / "examples" / "trl-grpo-live"  # its curves come from a TensorBoard event file
    # The same reading, in a process where tensorboard cannot be imported at all.
    script = (
        "import sys; sys.modules['tensorboard'] = None\n"
        "import json; from assessor import load_run\n"
        f"run = load_run({str(example)!r})\n"
        "assert not any(m == 'tensorboard' or m.startswith('tensorboard.') for m in sys.modules if sys.modules[m])\n"
        "print(json.dumps({m: run.series(m).tolist() for m in ('reward_mean', 'kl', 'entropy')}))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=REPO, check=False)
    assert done.returncode == 0, done.stderr
    from assessor import load_run

    run = load_run(example)
    assert json.loads(done.stdout) == {m: run.series(m).tolist() for m in ("reward_mean", "kl", "entropy")}
    assert [(s.format, s.used) for s in run.sources if s.format == "tensorboard"] == [("tensorboard", True)]
