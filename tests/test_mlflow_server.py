"""Runs on a running MLflow tracking server (`mlflow server`, started here on a free port with a SQLite backend),
read through MLflow's own client: `assess|inspect|watch mlflow://HOST:PORT/RUN_ID`, `--tracking-uri`, the Slack bot."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator

import numpy as np
import pytest

from assessor import load_run
from assessor.cli import main
from assessor.errors import ConfigError, RunNotFoundError, UnreadableSourceError
from assessor.ingest.mlflow_server import parse, tracking_source
from tests.fake_slack import fake_slack  # noqa: F401  (the fixture)
from tests.runs import ar1

mlflow = pytest.importorskip("mlflow", reason="mlflow is not installed (pip install -e '.[dev]' installs it)")

STEPS = np.arange(1, 241)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real `mlflow server` with a SQLite backend in a temporary folder, on a free local port."""
    root = tmp_path_factory.mktemp("mlflow-server")
    port = free_port()
    log = (root / "server.log").open("wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "mlflow", "server", "--host", "127.0.0.1", "--port", str(port), "--workers", "1",
         "--backend-store-uri", f"sqlite:///{root / 'mlflow.db'}", "--default-artifact-root", str(root / "artifacts")],
        stdout=log, stderr=subprocess.STDOUT, cwd=root)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180
        while True:
            try:
                with urllib.request.urlopen(f"{url}/health", timeout=2) as response:
                    if response.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                log.close()
                pytest.fail(f"mlflow server did not start: {(root / 'server.log').read_text()[-2000:]}")
            time.sleep(0.5)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


def log_run(server: str, name: str, reward: np.ndarray, kl: np.ndarray, steps: np.ndarray = STEPS) -> str:
    """A TRL-style GRPO run logged through the client, as `report_to="mlflow"` would (raw Trainer keys, params)."""
    from mlflow.entities import Metric, Param
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=server)
    experiment = client.get_experiment_by_name("grpo") or client.get_experiment(client.create_experiment("grpo"))
    run = client.create_run(experiment.experiment_id, run_name=name)
    start = 1_800_000_000_000
    metrics = [Metric(key, float(values[i]), start + int(step) * 60_000, int(step))
               for i, step in enumerate(steps) for key, values in (("reward", reward), ("kl", kl))]
    metrics += [Metric("reward_std", 0.3, start + int(s) * 60_000, int(s)) for s in steps]
    metrics.append(Metric("grad_norm", float("nan"), start + 5 * 60_000, 5))
    params = [Param("beta", "0.04"), Param("num_generations", "8"), Param("max_steps", "300")]
    for i in range(0, len(metrics), 500):
        client.log_batch(run.info.run_id, metrics=metrics[i:i + 500], params=params if i == 0 else [])
    return str(run.info.run_id)


@pytest.fixture(scope="module")
def collapsed(server: str) -> str:
    """Reward rises to step 150 then falls while KL blows up: the rules judge rolls back."""
    rise = 0.2 + 0.6 * (1 - np.exp(-STEPS / 50))
    peak = 0.2 + 0.6 * (1 - np.exp(-149 / 50))
    reward = np.where(STEPS < 150, rise, peak - 0.6 * np.clip((STEPS - 150) / 60, 0, 1)) + ar1(1, len(STEPS), 0.4, 0.02)
    kl = np.where(STEPS < 150, 0.01 + 0.02 * STEPS / 150, 0.03 + 0.5 * np.clip((STEPS - 150) / 60, 0, 1) ** 2)
    return log_run(server, "qwen-grpo-collapse", reward, kl + np.abs(ar1(2, len(STEPS), 0.4, 0.002)))


def test_load_run_reads_every_history_and_the_params_through_the_client(server, collapsed):
    run = load_run(f"mlflow://{server.removeprefix('http://')}/{collapsed}")
    assert run.name == "qwen-grpo-collapse"
    assert run.where == f"mlflow://{server.removeprefix('http://')}/{collapsed}"
    assert run.series("reward_mean").index.tolist() == STEPS.tolist()
    assert run.series("kl").iloc[-1] == pytest.approx(0.53, abs=0.02)
    assert run.nonfinite_steps("grad_norm") == [5]
    assert (run.facts.num_generations, run.facts.planned_total_steps) == (8, 300)
    assert [s.format for s in run.sources] == ["mlflow_server"]


def test_assess_and_inspect_by_address_or_tracking_uri(server, collapsed, capsys):
    address = f"mlflow://{server.removeprefix('http://')}/{collapsed}"
    assert main(["assess", address, "--judge", "rules", "--format", "json", "--no-plots"]) == 11
    verdict = json.loads(capsys.readouterr().out)
    assert verdict["decision"] == "rollback" and verdict["path"] == address and verdict["run"] == "qwen-grpo-collapse"
    assert main(["inspect", collapsed, "--tracking-uri", server, "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["sources"][0]["format"] == "mlflow_server"
    assert report["metrics"]["reward_mean"]["points"] == len(STEPS)


def test_watch_once_on_a_tracking_server_run(server, collapsed, tmp_path, capsys):
    address = f"mlflow://{server.removeprefix('http://')}/{collapsed}"
    args = ["watch", address, "--once", "--state", str(tmp_path / "state.json")]
    assert main(args) == 11
    out, err = capsys.readouterr()
    assert "ROLLBACK (first check)" in out and "1 checks" in err
    assert main(args) == 11
    assert capsys.readouterr().out == ""  # nothing new on the server: nothing said
    state = json.loads((tmp_path / "state.json").read_text(encoding="utf-8"))
    assert state["run_path"] == address


def test_errors_name_the_server_and_the_fix(server, capsys, monkeypatch):
    host = server.removeprefix("http://")
    assert main(["inspect", f"mlflow://{host}/0123456789abcdef0123456789abcdef"]) == 2
    assert "has no run 0123456789abcdef0123456789abcdef" in capsys.readouterr().err
    with pytest.raises(RunNotFoundError):
        load_run(f"mlflow://{host}/0123456789abcdef0123456789abcdef")
    assert main(["inspect", f"mlflow://{host}"]) == 2
    assert "expected mlflow://HOST:PORT/RUN_ID" in capsys.readouterr().err
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "0")
    with pytest.raises(UnreadableSourceError, match="check that it is running"):
        load_run(f"mlflow://127.0.0.1:{free_port()}/0123456789abcdef0123456789abcdef")


def test_addresses():
    assert parse("mlflow://mlflow.internal:5000/abc123") == ("http://mlflow.internal:5000", "abc123")
    assert parse(tracking_source("abc123", "https://mlflow.example.com/")) == ("https://mlflow.example.com", "abc123")
    with pytest.raises(ConfigError, match="http:// or https://"):
        tracking_source("abc123", "mlflow.example.com")
    with pytest.raises(ConfigError, match="run id"):
        tracking_source("runs/abc", "http://h:1")


def test_slack_bot_reads_only_the_servers_it_was_started_with(server, collapsed, tmp_path, fake_slack):  # noqa: F811
    pytest.importorskip("slack_bolt")
    from assessor.integrations.slack import slack_client
    from assessor.integrations.slack_bot import build_app
    from tests.fake_slack import TOKEN
    from tests.test_slack_bot import Bot, mention, replies

    root = tmp_path / "runs"
    root.mkdir()
    app = build_app([root], client=slack_client(TOKEN, fake_slack.base_url), judge="rules",
                    tracking_servers=[server])
    bot = Bot(app=app, server=fake_slack, watches=[], assessed_dirs=[])
    host = server.removeprefix("http://")
    mention(bot, f"assess mlflow://{host}/{collapsed}")
    mention(bot, f"assess mlflow://10.0.0.1:5000/{collapsed}", ts="1700000100.000200")
    texts = [r["text"] for r in replies(bot, 2)]
    assert any("not http://10.0.0.1:5000" in t and f"Allowed: {server}." in t for t in texts)
    assert any(f"Assessing `mlflow://{host}/{collapsed}`" in t for t in texts)
    # The verdict of the allowed run is posted once the worker has read it from the server and judged it.
    fake_slack.wait_for(lambda s: any("qwen-grpo-collapse" in json.dumps(c.args) and "ROLL BACK" in json.dumps(c.args)
                                      for c in s.calls_to("chat.postMessage")), timeout=120)
