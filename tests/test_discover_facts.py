from __future__ import annotations

import io
import json
import pickle
import sys
import types
import zipfile
from pathlib import Path

import pytest

from assessor import load_run
from assessor.ingest.discover import checkpoint_step, discover
from assessor.ingest.facts import facts_from_flat_config, flatten, read_config_file


@pytest.mark.parametrize(
    ("name", "is_dir", "step"),
    [
        ("checkpoint-1300", True, 1300),
        ("global_step_40", True, 40),
        ("global_step40", True, 40),
        ("step-000200", True, 200),
        ("step_50", True, 50),
        ("iter_0001000", True, 1000),
        ("checkpoint-final", True, None),
        ("runs", True, None),
        ("qwen3-0.6B-rlvr-grpo-step00050.pth", False, 50),
        ("model_step_500.safetensors", False, 500),
        ("ckpt-1000.pt", False, 1000),
        ("model.safetensors", False, None),
        ("step_logs.json", False, None),
    ],
)
def test_checkpoint_names(name, is_dir, step):
    assert checkpoint_step(name, is_dir) == step


def test_discovery_skips_payloads_and_finds_verl_checkpoints(tmp_path):
    ckpt = tmp_path / "checkpoints" / "proj" / "exp"
    for step in (50, 100):
        (ckpt / f"global_step_{step}" / "actor").mkdir(parents=True)
        (ckpt / f"global_step_{step}" / "actor" / "model_world_size_1_rank_0.pt").write_bytes(b"\0" * 16)
    (tmp_path / "model.safetensors").write_bytes(b"\0" * 16)
    (tmp_path / "train.log").write_text("step:1 - critic/score/mean:0.5\n", encoding="utf-8")
    found = discover(tmp_path)
    assert [(c.step, c.path) for c in found.checkpoints] == [
        (50, "checkpoints/proj/exp/global_step_50"), (100, "checkpoints/proj/exp/global_step_100")]
    assert [p.name for p in found.files] == ["train.log"]


def fake_training_args(fields: dict[str, object]) -> bytes:
    """What `torch.save(GRPOConfig(...))` writes: a zip with a pickle naming TRL's class."""
    names = ("trl", "trl.trainer", "trl.trainer.grpo_config")
    modules = {name: types.ModuleType(name) for name in names}
    cls = type("GRPOConfig", (), {"__module__": names[-1]})
    modules[names[-1]].GRPOConfig = cls  # type: ignore[attr-defined]
    reduce = lambda self: (type(self), ("steps",))  # noqa: E731  (an Enum pickles as Enum(value))
    enum_cls = type("IntervalStrategy", (), {"__module__": names[-1], "__reduce__": reduce})
    modules[names[-1]].IntervalStrategy = enum_cls  # type: ignore[attr-defined]
    sys.modules.update(modules)
    try:
        obj = cls()
        obj.__dict__.update(fields, logging_strategy=enum_cls())
        payload = pickle.dumps(obj, protocol=2)
    finally:
        for name in names:
            del sys.modules[name]
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("training_args/data.pkl", payload)
        archive.writestr("training_args/version", "3\n")
    return buffer.getvalue()


def test_training_args_bin_is_read_without_torch_or_running_its_code(tmp_path):
    path = tmp_path / "training_args.bin"
    path.write_bytes(fake_training_args({"beta": 0.04, "num_generations": 8, "max_completion_length": 1024,
                                         "max_steps": 500, "learning_rate": 1e-6, "loss_type": "dapo"}))
    facts = read_config_file(path, "checkpoint-100/training_args.bin")
    assert {k: v for k, (v, _) in facts.items()} == {
        "beta": 0.04, "num_generations": 8, "max_completion_length": 1024, "planned_total_steps": 500,
        "learning_rate": 1e-6, "loss_type": "dapo"}
    assert facts["beta"][1] == "checkpoint-100/training_args.bin: beta"


def test_a_malicious_pickle_is_never_executed(tmp_path):
    class Boom:
        def __reduce__(self):
            return (Path.write_text, (tmp_path / "pwned", "x"))

    path = tmp_path / "training_args.bin"
    path.write_bytes(pickle.dumps(Boom()))
    assert read_config_file(path, "training_args.bin") == {}
    assert not (tmp_path / "pwned").exists()


@pytest.mark.parametrize("payload", [
    b"\x80\x04\x95placeholder",  # a frame header claiming ~8 EB: unpickling it is a MemoryError
    b"\x80\x04\x95\x05\x00\x00\x00\x00\x00\x00\x00}\x94(",  # cut mid-dict
    b"\x80\x02cbuiltins\nint\n",  # cut mid-opcode
    b"not a pickle at all",
])
def test_a_stray_or_torn_training_args_bin_costs_its_facts_not_the_run(tmp_path, payload):
    run = tmp_path / "run"
    (run / "checkpoint-10").mkdir(parents=True)
    (run / "checkpoint-10" / "training_args.bin").write_bytes(payload)
    assert read_config_file(run / "checkpoint-10" / "training_args.bin", "checkpoint-10/training_args.bin") == {}
    state = {"global_step": 10, "max_steps": 100, "log_history": [{"step": s, "reward": 0.1 * s} for s in range(1, 11)]}
    (run / "checkpoint-10" / "trainer_state.json").write_text(json.dumps(state), encoding="utf-8")
    loaded = load_run(run)
    assert loaded.facts.planned_total_steps == 100  # the trainer state still says it


def test_verl_hydra_config_and_kl_loss_switch(tmp_path):
    (tmp_path / ".hydra").mkdir()
    (tmp_path / ".hydra" / "config.yaml").write_text(
        "algorithm:\n  adv_estimator: grpo\n"
        "actor_rollout_ref:\n  actor:\n    use_kl_loss: true\n    kl_loss_coef: 0.001\n    optim:\n      lr: 1.0e-06\n"
        "  rollout:\n    n: 5\n  model:\n    path: Qwen/Qwen2.5-3B-Instruct\n"
        "data:\n  max_response_length: 1024\ntrainer:\n  total_training_steps: 300\n",
        encoding="utf-8")
    (tmp_path / "log.jsonl").write_text('{"step": 1, "data": {"critic/score/mean": 0.5}}\n', encoding="utf-8")
    facts = load_run(tmp_path).facts
    assert (facts.algorithm, facts.beta, facts.num_generations, facts.max_completion_length) == ("grpo", 0.001, 5, 1024)
    assert (facts.planned_total_steps, facts.model, facts.learning_rate) == (300, "Qwen/Qwen2.5-3B-Instruct", 1e-6)
    assert facts.provenance["beta"] == ".hydra/config.yaml: actor_rollout_ref.actor.kl_loss_coef"

    flat = flatten({"actor_rollout_ref": {"actor": {"use_kl_loss": False, "kl_loss_coef": 0.001}}})
    assert facts_from_flat_config(flat, "x")["beta"][0] == 0.0  # no KL term in the loss


def test_wandb_config_yaml_values_are_unwrapped():
    flat = flatten({"beta": {"desc": None, "value": 0.0}, "num_generations": {"value": 16}})
    facts = facts_from_flat_config(flat, "wandb/files/config.yaml")
    assert (facts["beta"][0], facts["num_generations"][0]) == (0.0, 16)


def test_model_config_json_only_gives_vocab_size(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"vocab_size": 151936, "max_steps": 3, "model_type": "qwen2"}), encoding="utf-8")
    assert {k: v for k, (v, _) in read_config_file(path, "config.json").items()} == {"vocab_size": 151936}


@pytest.mark.parametrize(("saves", "expected"), [((100, 200, 300, 400, 500), 100), ((100, 170, 400), None)])
def test_the_save_interval_is_read_off_timed_checkpoint_saves(tmp_path, saves, expected):
    """holdout34's blind readers: 'checkpoint save interval unknown' beside 'periodic stalls every 100 steps at the
    checkpoint save steps': verl times each save (`timing_s/save_checkpoint`, only on the steps it saves at), so a
    published log with no config and no checkpoint folders still says when it saved. Irregular saves say nothing."""
    lines = []
    for step in range(1, 601):
        data = {"critic/score/mean": 0.5, "timing_s/step": 60.0}
        if step in saves:
            data["timing_s/save_checkpoint"] = 31.5
        lines.append(json.dumps({"step": step, "data": data}))
    (tmp_path / "metrics.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    run = load_run(tmp_path)
    assert run.facts.save_steps == expected
    if expected:
        assert run.facts.provenance["save_steps"].startswith("measured")
