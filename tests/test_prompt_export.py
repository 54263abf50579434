"""`assessor prompt` exports exactly what the judges send; `--judge verdicts:DIR` scores answers written to files.

The SDKs run against the local fake server of `tests.fake_servers`; no network, fake keys.
"""

from __future__ import annotations

import base64
import io
import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from matplotlib.image import imread

from assessor import cli, diagnose, load_run
from assessor.judge import Verdict, get_judge
from assessor.judge.export import export_prompt
from assessor.judge.verdicts import VerdictsJudge
from tests.conftest import EXAMPLES, REPO
from tests.fake_servers import FakeLLMServer, llm_server  # noqa: F401  (the fixture)
from tests.test_llm_judges import (  # noqa: F401  (fixtures)
    FLAVOURS,
    env,
    image_parts,
    judge_request,
    make_judge,
    run_and_diagnostics,
    system_text,
    user_texts,
    valid_verdict,
)

EXAMPLE = EXAMPLES / "trl-grpo-live"


def sent_images(flavour: str, body: dict[str, Any]) -> list[bytes]:
    parts = image_parts(flavour, body)
    if flavour == "anthropic":
        return [base64.b64decode(p["source"]["data"]) for p in parts]
    return [base64.b64decode(p["image_url"]["url"].partition(",")[2]) for p in parts]


def sent_schema(flavour: str, body: dict[str, Any]) -> dict[str, Any]:
    if flavour == "anthropic":
        return dict(body["tools"][0]["input_schema"])
    return dict(body["response_format"]["json_schema"]["schema"])


def pixels(png: bytes) -> np.ndarray:
    return np.asarray(imread(io.BytesIO(png)))


def assert_files_match_request(out: Path, flavour: str, body: dict[str, Any], same_render: bool = True) -> None:
    """The exported files carry what the request carried; `same_render=False` when the dashboard was drawn twice."""
    assert (out / "system.md").read_text(encoding="utf-8") == system_text(flavour, body)
    assert (out / "user.md").read_text(encoding="utf-8") == "".join(user_texts(flavour, body))
    images = [p.read_bytes() for p in sorted(out.glob("image-*.png"))]
    sent = sent_images(flavour, body)
    assert images and len(images) == len(sent)
    if same_render:
        assert images == sent
    else:  # matplotlib's Agg output may differ in a stray anti-aliased pixel from one drawing to the next
        for mine, theirs in zip(images, sent, strict=True):
            a, b = pixels(mine), pixels(theirs)
            assert a.shape == b.shape and np.mean(np.any(a != b, axis=-1)) < 1e-4
    assert json.loads((out / "schema.json").read_text(encoding="utf-8")) == sent_schema(flavour, body)


@pytest.mark.parametrize("flavour", ["anthropic", "openai-chat"])
def test_the_exported_prompt_is_what_the_sdk_sends(flavour, env, judge_request, tmp_path):  # noqa: F811
    written = export_prompt(judge_request, flavour.split("-")[0]).write(tmp_path / "out")
    assert [p.name for p in written] == ["system.md", "user.md", "image-1.png", "schema.json"]
    env.output(valid_verdict())
    make_judge(flavour).judge(judge_request)
    assert_files_match_request(tmp_path / "out", flavour, env.requests[0].body)


def test_cli_prompt_writes_what_assess_then_sends(env, tmp_path, capsys):  # noqa: F811
    out = tmp_path / "prompt"
    assert cli.main(["prompt", str(EXAMPLE), "--out", str(out)]) == 0
    listed = capsys.readouterr().out.split()
    assert [Path(p).name for p in listed] == ["system.md", "user.md", "image-1.png", "schema.json"]
    env.output(valid_verdict(decision="continue", rollback_step=None, rollback_checkpoint=None))
    assert cli.main(["assess", str(EXAMPLE), "--judge", "anthropic:claude-test", "--format", "json"]) == 0
    assert_files_match_request(out, "anthropic", env.requests[0].body, same_render=False)
    user = (out / "user.md").read_text(encoding="utf-8")
    assert "# Evidence sheet" in user and "checkpoint-300 … checkpoint-500" in user


def test_cli_prompt_for_openai_without_images_and_a_bad_provider(tmp_path, capsys):
    out = tmp_path / "prompt"
    assert cli.main(["prompt", str(EXAMPLE), "--out", str(out), "--judge", "openai:gpt-4.1", "--no-images"]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["schema.json", "system.md", "user.md"]
    assert "No figures are attached" in (out / "user.md").read_text(encoding="utf-8")
    capsys.readouterr()
    assert cli.main(["prompt", str(EXAMPLE), "--out", str(out), "--judge", "rules"]) == 2
    assert "anthropic or openai" in capsys.readouterr().err


# --- --judge verdicts:DIR


def write_verdict(root: Path, name: str, text: str) -> Path:
    path = root / name / "verdict.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_assess_scores_a_written_verdict_fenced_and_padded(tmp_path, capsys):
    answers = tmp_path / "answers"
    verdict = valid_verdict(rollback_step=400, rollback_checkpoint="checkpoint-400")
    write_verdict(answers, EXAMPLE.name, "\n\n  ```json\n" + json.dumps(verdict, indent=1) + "\n```  \n")
    code = cli.main(["assess", str(EXAMPLE), "--judge", f"verdicts:{answers}", "--format", "json"])
    contract = json.loads(capsys.readouterr().out)
    assert code == 11
    assert contract["judge"] == f"verdicts:{answers}" and contract["decision"] == "rollback"
    assert contract["rollback_step"] == 400 and contract["rollback_checkpoint"] == "checkpoint-400"
    assert contract["usage"] is None


@pytest.mark.parametrize("written", [[], ["completion samples: none logged"]])
def test_the_diagnosis_blind_spots_are_attached_and_the_judges_own_follow(tmp_path, capsys, written):
    run = EXAMPLE.parent / "verl-grpo-gsm8k"
    answers = tmp_path / "answers"
    write_verdict(answers, run.name, json.dumps({**valid_verdict(), "could_not_see": written}))
    cli.main(["assess", str(run), "--judge", f"verdicts:{answers}", "--format", "json", "--no-plots"])
    contract = json.loads(capsys.readouterr().out)
    absent = diagnose(load_run(run)).absent
    assert absent and any("reward_std" in item for item in absent)
    # The system prompt says the list is attached as it is: a judge that adds a blind spot of its own keeps the list.
    assert contract["could_not_see"] == [*absent, *written]


@pytest.mark.parametrize(("text", "message"), [
    (None, "no verdict written"),
    ("{\"decision\": \"continue\"", "not valid JSON"),
    (json.dumps({**valid_verdict(), "mood": "calm"}), "mood"),
    (json.dumps(valid_verdict(rollback_step=None)), "rollback_step"),
    ("[1, 2]", "not an object"),
])
def test_a_missing_or_invalid_verdict_is_a_one_line_error_naming_the_file(tmp_path, capsys, text, message):
    answers = tmp_path / "answers"
    answers.mkdir()
    if text is not None:
        write_verdict(answers, EXAMPLE.name, text)
    code = cli.main(["assess", str(EXAMPLE), "--judge", f"verdicts:{answers}", "--no-plots"])
    err = capsys.readouterr().err
    assert code == 1 and err.count("\n") == 1
    assert str(answers / EXAMPLE.name / "verdict.json") in err and message in err


def test_the_verdicts_judge_needs_an_existing_folder(tmp_path):
    with pytest.raises(Exception, match="no such folder"):
        get_judge(f"verdicts:{tmp_path / 'nowhere'}")
    with pytest.raises(Exception, match="needs a folder"):
        get_judge("verdicts")
    judge = get_judge(f"verdicts:{tmp_path}")
    assert isinstance(judge, VerdictsJudge) and judge.name == f"verdicts:{tmp_path}"


def test_eval_exports_every_case_and_scores_the_answers_in_their_own_column(tmp_path, capsys):
    source = tmp_path / "evals"
    source.mkdir()
    cases = yaml.safe_load((REPO / "evals" / "examples.yaml").read_text(encoding="utf-8"))["cases"]
    for case in cases:
        shutil.copytree(REPO / "evals" / case["path"], source / Path(case["path"]).name)
        case["path"] = Path(case["path"]).name
    (source / "examples.yaml").write_text(yaml.safe_dump({"cases": cases}), encoding="utf-8")

    prompts_dir = tmp_path / "prompts"
    code = cli.main(["eval", str(source), "--export-prompts", str(prompts_dir)])
    assert code == 0, capsys.readouterr().err
    names = [c["name"] for c in cases]
    assert sorted(p.name for p in prompts_dir.iterdir()) == sorted(names)
    for name in names:
        assert sorted(p.name for p in (prompts_dir / name).iterdir()) == [
            "image-1.png", "schema.json", "system.md", "user.md"]
    capsys.readouterr()

    answers = tmp_path / "answers"
    continue_ = Verdict.model_validate(valid_verdict(decision="continue", rollback_step=None,
                                                     rollback_checkpoint=None))
    write_verdict(answers, names[0], continue_.model_dump_json())
    write_verdict(answers, names[1], json.dumps(valid_verdict(rollback_step=100, rollback_checkpoint=None)))
    code = cli.main(["eval", str(source), "--judge", "rules", "--judge", f"verdicts:{answers}", "--format", "json",
                     "--delay-points", "3"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    report = json.loads(captured.out)
    columns = {j["judge"]: j for j in report["judges"]}
    assert set(columns) == {"rules", f"verdicts:{answers}"}
    outcomes = {o["case"]: o for o in columns[f"verdicts:{answers}"]["outcomes"]}
    assert outcomes[names[0]]["decision"] == "continue" and outcomes[names[0]]["correct"]
    assert outcomes[names[1]]["decision"] == "rollback" and outcomes[names[1]]["rollback_step"] == 100
    assert outcomes[names[1]]["in_window"] is True and outcomes[names[1]]["delay"] is None  # never replayed

    shutil.rmtree(answers / names[1])  # one answer missing: that case fails, the other still counts
    code = cli.main(["eval", str(source), "--judge", f"verdicts:{answers}", "--format", "json", "--delay-points", "3"])
    report = json.loads(capsys.readouterr().out)
    (column,) = report["judges"]
    outcomes = {o["case"]: o for o in column["outcomes"]}
    assert code == 0 and column["judge"] == f"verdicts:{answers}"
    assert outcomes[names[0]]["correct"] and outcomes[names[1]]["decision"] is None
    assert "no verdict written" in outcomes[names[1]]["error"]
