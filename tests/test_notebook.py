"""Notebooks: the Trainer's progress table (HTML and text) and printed metrics, from the saved output cells."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from assessor import load_run
from assessor.cli import main
from assessor.errors import NoMetricsError

COLUMNS = ["Step", "Training Loss", "reward", "reward_std", "completion_length", "kl",
           "rewards / correctness_reward_func / mean"]


def progress_html(rows: list[list[str]], done: int, total: int) -> list[str]:
    """What transformers' NotebookProgressCallback leaves in a cell: a progress bar, then the table."""
    head = "".join(f"      <th>{c}</th>\n" for c in COLUMNS)
    body = "".join("    <tr>\n" + "".join(f"      <td>{v}</td>\n" for v in row) + "    </tr>\n" for row in rows)
    html = (
        f"\n    <div>\n      \n      <progress value='{done}' max='{total}' style='width:300px; height:20px; "
        f"vertical-align: middle;'></progress>\n      [{done}/{total} 2:38:49, Epoch 0/1]\n    </div>\n"
        '    <table border="1" class="dataframe">\n  <thead>\n <tr style="text-align: left;">\n'
        f"{head}    </tr>\n  </thead>\n  <tbody>\n{body}  </tbody>\n</table><p>"
    )
    return html.splitlines(keepends=True)


def rows(steps: range, offset: float = 0.0) -> list[list[str]]:
    return [[str(s), "0.000100", f"{offset + s / 100:.6f}", "0.300000", "187.5", f"{s / 10000:.6f}",
             f"{s / 200:.6f}"] for s in steps]


def code_cell(outputs: list[dict[str, Any]], count: int) -> dict[str, Any]:
    return {"cell_type": "code", "execution_count": count, "metadata": {}, "outputs": outputs,
            "source": ["trainer.train()"]}


def html_output(lines: list[str]) -> dict[str, Any]:
    return {"output_type": "display_data", "metadata": {},
            "data": {"text/html": lines, "text/plain": ["<IPython.core.display.HTML object>"]}}


def stream(text: str) -> dict[str, Any]:
    return {"output_type": "stream", "name": "stdout", "text": text.splitlines(keepends=True)}


def notebook(path: Path, cells: list[dict[str, Any]]) -> Path:
    document = {"nbformat": 4, "nbformat_minor": 0, "metadata": {"kernelspec": {"name": "python3"}},
                "cells": [{"cell_type": "markdown", "metadata": {}, "source": ["# GRPO"]}, *cells]}
    path.write_text(json.dumps(document, indent=1), encoding="utf-8")
    return path


def test_html_progress_table(tmp_path):
    banner = stream("==((====))==  Unsloth - 2x faster free finetuning | Num GPUs used = 1\n"
                    "   \\\\   /|    Num examples = 7,473 | Num Epochs = 1 | Total steps = 100\n")
    path = notebook(tmp_path / "Phi_4-GRPO.ipynb", [
        code_cell([stream("Loading model...\n")], 1),
        code_cell([banner, html_output(progress_html(rows(range(1, 21)), 20, 100))], 7),
    ])
    run = load_run(path)
    assert [s.format for s in run.sources] == ["notebook"]
    assert run.last_step == 20
    assert run.series("reward_mean").index.tolist() == list(range(1, 21))
    for metric in ("loss", "reward_std", "response_length_mean", "kl", "reward_component/correctness_reward_func_mean"):
        assert run.has(metric), metric
    notes = run.sources[0].notes
    assert "training output of code cell 2 [7]" in notes
    assert any("HTML progress table (20 rows)" in n for n in notes)


def test_text_progress_table_in_a_cell(tmp_path):
    table = "Step\tTraining Loss\treward\treward_std\n" + "".join(f"{s}\t0.0\t0.{s}\t0.1\n" for s in range(1, 8))
    path = notebook(tmp_path / "train.ipynb", [
        code_cell([{"output_type": "execute_result", "execution_count": 3, "metadata": {},
                    "data": {"text/plain": table.splitlines(keepends=True)}}], 3),
    ])
    run = load_run(path)
    assert run.series("reward_mean").index.tolist() == list(range(1, 8))
    assert run.has("loss") and run.has("reward_std")


def test_printed_metric_dicts_and_several_training_cells_read_the_last(tmp_path):
    first = "".join(f"{{'loss': 0.1, 'reward': {s / 10}, 'kl': 0.01, 'epoch': {s / 100}}}\n" for s in range(1, 4))
    path = notebook(tmp_path / "run.ipynb", [
        code_cell([stream(first)], 4),
        code_cell([html_output(progress_html(rows(range(10, 60, 10), offset=1.0), 50, 50))], 9),
        code_cell([stream("print('done')\ndone\n")], 10),
    ])
    run = load_run(path)
    assert run.series("reward_mean").index.tolist() == [10, 20, 30, 40, 50]
    assert run.series("reward_mean")[10] == pytest.approx(1.1)
    notes = " ".join(run.sources[0].notes)
    assert "several cells (code cell 1 [4], code cell 2 [9]); read the last, code cell 2 [9]" in notes


def test_metric_dicts_printed_to_the_stream(tmp_path):
    dicts = "".join(
        f"{{'loss': 0.0, 'grad_norm': 0.5, 'learning_rate': 1e-06, 'reward': {s / 10}, 'reward_std': 0.2, "
        f"'kl': 0.001, 'epoch': {s / 10}}}\n" for s in range(1, 6)
    )
    run = load_run(notebook(tmp_path / "kaggle.ipynb", [code_cell([stream(dicts)], 1)]))
    assert run.sources[0].format == "notebook"
    assert len(run.series("reward_mean")) == 5 and run.has("grad_norm")


def test_assess_a_notebook_file_and_a_folder_holding_one(tmp_path, capsys, monkeypatch):
    for name in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    path = notebook(tmp_path / "nb.ipynb", [code_cell([html_output(progress_html(rows(range(1, 41)), 40, 100))], 2)])
    for target in (path, tmp_path):
        code = main(["assess", str(target), "--format", "json", "--no-plots"])
        out, err = capsys.readouterr()
        assert code in (0, 10, 11), err
        assert json.loads(out)["last_step"] == 40


def test_a_notebook_without_training_output_says_what_to_do(tmp_path):
    path = notebook(tmp_path / "empty.ipynb", [code_cell([], 1)])
    with pytest.raises(NoMetricsError, match=r"empty\.ipynb: no progress table or metric lines.*save the notebook"):
        load_run(path)


def test_a_broken_notebook_is_a_one_line_error(tmp_path, capsys):
    (tmp_path / "cut.ipynb").write_text('{"cells": [{"cell_type": "code", "outp', encoding="utf-8")
    assert main(["inspect", str(tmp_path / "cut.ipynb")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cut.ipynb: not valid notebook JSON" in err
