"""Start-up stays light: `assessor --version` / `--help` import no numeric or plotting library (issue 13)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "trl-grpo-live"

HEAVY = ("numpy", "pandas", "matplotlib", "pydantic", "scipy", "rich", "jinja2", "yaml")


def _loaded_after(code: str) -> set[str]:
    probe = f"import sys; {code}; print(' '.join(sorted(m for m in {HEAVY!r} if m in sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True, text=True)
    return set(out.stdout.split())


def test_version_and_help_import_nothing_heavy() -> None:
    for args in (["--version"], ["--help"], ["assess", "--help"]):
        code = ("import contextlib, io; from assessor.cli import main; "
                f"contextlib.redirect_stdout(io.StringIO()).__enter__(); main({args!r})")
        assert _loaded_after(code) == set(), args


def test_the_package_loads_its_parts_on_first_use() -> None:
    assert _loaded_after("import assessor") == set()
    assert {"numpy", "pandas", "pydantic"} <= _loaded_after("from assessor import load_run")


def test_diagnose_is_the_function_whatever_was_imported_first() -> None:
    code = ("import assessor.diagnose.robust; from assessor import diagnose; import assessor; "
            "assert callable(diagnose) and not isinstance(diagnose, type(assessor)), diagnose; "
            "assert assessor.diagnose is diagnose; from assessor.diagnose import Diagnostics, robust")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_diagnosis_does_not_need_scipy() -> None:
    """The robust statistics are numpy: a run is diagnosed with scipy blocked from importing."""
    code = ("import sys; sys.modules['scipy'] = None; from assessor import diagnose, load_run; "
            f"d = diagnose(load_run({str(EXAMPLE)!r})); print(len(d.signals))")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    assert int(out.stdout.strip()) > 0


def test_the_eval_generator_does_not_need_scipy() -> None:
    code = ("import sys; sys.modules['scipy'] = None; import assessor.evals.generate as g; "
            "import assessor.evals.generate.simulate, assessor.evals.generate.recipes.learning_signal; "
            "print(len(g.PATTERNS))")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    assert int(out.stdout.strip()) > 10


# A one-shot command run as the program ends the process itself: Python's teardown of pandas, matplotlib and the
# diagnosis (about 0.3 s) is skipped, what an exit must do is not.
_AS_PROGRAM = """
import atexit, sys
class Teardown:
    def __del__(self):
        sys.stderr.write("torn down\\n")
KEPT = Teardown()  # a module global: only the interpreter's teardown deletes it
atexit.register(lambda: sys.stderr.write("atexit ran\\n"))
from assessor.cli import main
sys.argv = ["assessor", *sys.argv[1:]]
code = main()
sys.stderr.write("main returned\\n")
raise SystemExit(code)
"""


def test_a_one_shot_command_skips_the_teardown_but_not_the_exit(tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, "-c", _AS_PROGRAM, "assess", str(EXAMPLE), "--judge", "rules", "--format",
                          "json", "--out", str(tmp_path)], capture_output=True, text=True)
    assert out.returncode in (0, 10, 11)  # the verdict's exit code
    assert json.loads(out.stdout)["decision"] in ("continue", "stop", "rollback")  # stdout flushed, whole
    assert "atexit ran" in out.stderr
    assert "torn down" not in out.stderr and "main returned" not in out.stderr
    assert (tmp_path / "verdict.json").is_file() and (tmp_path / "dashboard.png").stat().st_size > 0


def test_other_commands_and_calls_with_arguments_return() -> None:
    out = subprocess.run([sys.executable, "-c", _AS_PROGRAM, "--version"], capture_output=True, text=True)
    assert out.returncode == 0 and "main returned" in out.stderr and "torn down" in out.stderr
    code = ("import sys; from assessor.cli import main; "
            f"code = main(['inspect', {str(EXAMPLE)!r}, '--format', 'json']); print('returned', code)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip().splitlines()[-1] == "returned 0"
