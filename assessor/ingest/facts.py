"""Run facts (algorithm, beta, group size, caps, planned steps) from config files the frameworks write.

Config files are nested; we flatten them to dotted keys and match known paths at a dotted boundary
(`actor_rollout_ref.rollout.n` matches `...actor_rollout_ref.rollout.n`). Each fact keeps where it came from.
"""

from __future__ import annotations

import pickle
import zipfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import yaml

from assessor.ingest.base import as_int, parse_number
from assessor.ingest.nesting import check_depth, load_yaml, loads

Fact = tuple[Any, str]

# fact -> dotted config paths, most specific first
_PATHS: dict[str, tuple[str, ...]] = {
    "beta": (
        "beta", "init_kl_coef", "algo.kl.init_coef", "actor_rollout_ref.actor.kl_loss_coef",
        "algorithm.kl_ctrl.kl_coef",
    ),
    "num_generations": (
        "num_generations", "actor_rollout_ref.rollout.n", "n_samples_per_prompt", "rollout.n_samples_per_prompt",
        "num_generations_per_prompt", "rloo_k", "num_sample_generations_per_prompt", "group_size",
    ),
    "max_completion_length": (
        "max_completion_length", "data.max_response_length", "generate_max_len", "rollout.generate_max_len",
        "max_new_tokens", "max_response_length", "response_length",
    ),
    # then custom loops' own names: optimizer updates or iterations (`updates` only at the top level: nested,
    # it is as likely an inner count, like PPO epochs per batch)
    "planned_total_steps": ("max_steps", "trainer.total_training_steps", "total_training_steps", "max_num_steps",
                            "total_steps", "num_training_steps", "train_steps", "total_updates", "max_updates",
                            "num_updates", "n_updates", "max_gsteps", "total_gsteps", "max_global_steps",
                            "total_global_steps", "train_iters", "max_iters", "max_iterations", "total_iterations",
                            "updates"),
    "logging_interval": ("logging_steps", "logger.logging_steps", "log_every", "log_interval"),
    "learning_rate": ("learning_rate", "actor_rollout_ref.actor.optim.lr", "actor_learning_rate", "optim.lr", "lr"),
    "loss_type": ("loss_type", "actor_rollout_ref.actor.loss_agg_mode"),
    "model": ("model_name_or_path", "actor_rollout_ref.model.path", "pretrain", "policy.model_name", "_name_or_path",
              "base_model_name_or_path"),
    # verl; OpenRLHF before and after its flags moved to dotted groups (0.10.2)
    "algorithm": ("algorithm.adv_estimator", "advantage_estimator", "algo.advantage.estimator", "adv_estimator"),
    "vocab_size": ("vocab_size",),
    "save_steps": ("save_steps", "trainer.save_freq", "save_freq", "save_interval", "checkpoint.save_period",
                   "save_every", "save_every_steps", "save_every_n_steps", "checkpoint_every", "ckpt_every",
                   "checkpoint_interval"),
}
# Paths matched only as a whole top-level key, never as the tail of a nested one.
_TOP_LEVEL_ONLY = frozenset({"updates"})

_ESTIMATOR_TO_ALGORITHM = {
    "gae": "ppo", "grpo": "grpo", "rloo": "rloo", "reinforce_plus_plus": "reinforce++",
    "reinforce_plus_plus_baseline": "reinforce++", "remax": "remax", "dapo": "dapo", "drgrpo": "grpo",
    "group_norm": "grpo", "reinforce": "reinforce++", "reinforce_baseline": "reinforce++", "dr_grpo": "grpo",
    "grpo_vectorized": "grpo", "grpo_passk": "grpo", "rloo_vectorized": "rloo",
}

# Dynamic sampling switches (verl's DAPO recipe; OpenRLHF before and after 0.10.2): with a GRPO estimator, DAPO.
_DYNAMIC_SAMPLING = ("algorithm.filter_groups.enable", "dynamic_filtering", "algo.dynamic_filtering_enable")
# TRL configs name no estimator; fields only one trainer's config has tell which trainer wrote it.
# RLOOConfig before v0.22 has `rloo_k`; from v0.22 (GRPO-style) `normalize_advantages` and `reward_clip_range`,
# which GRPOConfig lacks (it has `scale_rewards`). PPOConfig (every version) configures a value head: `vf_coef`,
# `cliprange_value`.
_TRL_SIGNATURES: tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...] = (
    ("rloo", ("rloo_k",), ()),
    ("rloo", ("normalize_advantages", "reward_clip_range"), ("scale_rewards",)),
    ("ppo", ("vf_coef", "cliprange_value"), ()),
    # Preference trainers: KTOConfig weighs the two kinds of answer; CPOConfig (SimPO is its loss_type) has
    # `cpo_alpha` and `simpo_gamma`.
    ("kto", ("desirable_weight", "undesirable_weight"), ()),
    ("cpo", ("cpo_alpha", "simpo_gamma"), ()),
)

CONFIG_FILE_NAMES = (
    "training_args.json", "args.json", "config.yaml", "config.yml", "run_config.json", "grpo_config.json",
    "hparams.yaml", "experiment_config.yaml", "training_args.bin", "config.json",
)


def flatten(config: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested mappings to dotted keys; W&B's `{key: {value: x}}` wrappers are unwrapped.

    >>> flatten({"a": {"b": 1}, "lr": {"desc": None, "value": 3}})
    {'a.b': 1, 'lr': 3}
    """
    flat: dict[str, Any] = {}
    for key, value in config.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            if set(value) <= {"desc", "value"} and "value" in value:
                flat[name] = value["value"]
            else:
                flat.update(flatten(value, f"{name}."))
        else:
            flat[name] = value
    return flat


def facts_from_flat_config(flat: Mapping[str, Any], origin: str) -> dict[str, Fact]:
    """Recognised facts in a flat `{dotted.key: value}` config, each with its origin.

    >>> facts_from_flat_config({"actor_rollout_ref.rollout.n": 5}, "config.yaml")
    {'num_generations': (5, 'config.yaml: actor_rollout_ref.rollout.n')}
    """
    found: dict[str, Fact] = {}
    keys = list(flat)
    for fact, paths in _PATHS.items():
        for path in paths:
            nested = path not in _TOP_LEVEL_ONLY
            match = next((k for k in keys if k == path or (nested and k.endswith("." + path))), None)
            if match is None:
                continue
            value = _coerce(fact, flat[match])
            if value is None:
                continue
            if fact == "beta" and path.endswith("kl_loss_coef") and not _truthy(flat, "use_kl_loss"):
                value = 0.0
            if fact == "beta" and path.startswith("algorithm.kl_ctrl") and not _truthy(flat, "use_kl_in_reward"):
                continue
            found[fact] = (value, f"{origin}: {match}")
            break
    found.update(_framework_by_signature(flat, origin))
    found.update(_algorithm_by_signature(flat, found, origin))
    return found


def _find(flat: Mapping[str, Any], path: str) -> str | None:
    """The config key that is `path` or ends with it at a dotted boundary."""
    return next((k for k in flat if k == path or k.endswith("." + path)), None)


def _algorithm_by_signature(flat: Mapping[str, Any], found: Mapping[str, Fact], origin: str) -> dict[str, Fact]:
    """The algorithm when no estimator names it well: DAPO from dynamic sampling, TRL trainers from their fields.

    >>> _algorithm_by_signature({"rloo_k": 4}, {}, "args.json")["algorithm"]
    ('rloo', 'args.json: rloo_k (TRL RLOOConfig)')
    """
    algorithm = found.get("algorithm")
    if algorithm is None or algorithm[0] == "grpo":
        for path in _DYNAMIC_SAMPLING:
            key = _find(flat, path)
            if key is not None and str(flat[key]).lower() in ("true", "1"):
                why = f"{origin}: {key}" + (f" with {algorithm[1].split(': ', 1)[-1]}" if algorithm else "")
                return {"algorithm": ("dapo", why)}
    if algorithm is not None:
        return {}
    for name, needed, absent in _TRL_SIGNATURES:
        keys = [_find(flat, path) for path in needed]
        if all(keys) and not any(_find(flat, path) for path in absent):
            trainer = {"rloo": "RLOOConfig", "ppo": "PPOConfig", "kto": "KTOConfig", "cpo": "CPOConfig"}[name]
            where = f"{origin}: {', '.join(str(k) for k in keys)} (TRL {trainer})"
            loss = _find(flat, "loss_type")
            if name == "cpo" and loss is not None and str(flat[loss]).lower() == "simpo":
                name, where = "simpo", f"{where} with {loss}=simpo"
            return {"algorithm": (name, where), "framework": ("trl", where)}
    return {}


def _framework_by_signature(flat: Mapping[str, Any], origin: str) -> dict[str, Fact]:
    """The framework, when the config's own names give it away (verl's groups, OpenRLHF's estimator flag)."""
    if any(k.startswith("actor_rollout_ref.") for k in flat):
        return {"framework": ("verl", f"{origin}: verl config groups (actor_rollout_ref.*)")}
    key = _find(flat, "advantage_estimator") or _find(flat, "algo.advantage.estimator")
    if key is not None:
        return {"framework": ("openrlhf", f"{origin}: {key} (an OpenRLHF flag)")}
    return {}


def _truthy(flat: Mapping[str, Any], suffix: str) -> bool:
    return any(k.endswith(suffix) and str(v).lower() in ("true", "1") for k, v in flat.items())


def _coerce(fact: str, value: Any) -> Any:
    if value is None or isinstance(value, Mapping | list):
        return None
    if fact in ("model", "loss_type"):
        return str(value)
    if fact == "algorithm":
        return _ESTIMATOR_TO_ALGORITHM.get(str(value).lower(), str(value).lower())
    if fact in ("beta", "learning_rate"):
        number = parse_number(value)
        return None if number is None or number != number else number
    number_int = as_int(value)
    if number_int is None or number_int <= 0:
        return None  # max_steps=-1 means "unset" in HF
    return number_int


def read_config_file(path: Path, rel: str) -> dict[str, Fact]:
    """Facts from one config file (JSON, YAML, or HF `training_args.bin`); empty when unreadable."""
    try:
        if path.suffix == ".bin":
            config = _read_training_args_bin_or_nothing(path)
        elif path.suffix in (".yaml", ".yml"):
            config = load_yaml(path.read_text(encoding="utf-8", errors="replace"))
        else:
            config = loads(path.read_text(encoding="utf-8", errors="replace"))
        check_depth(config)  # `flatten` recurses: a pickled config nested thousands deep stops here
    except (OSError, ValueError, yaml.YAMLError, pickle.UnpicklingError, zipfile.BadZipFile, EOFError):
        return {}
    return _facts_from_config(config, rel, model_config=path.name == "config.json" and _describes_a_model(config))


def _describes_a_model(config: object) -> bool:
    """A `config.json` a model was saved with (HF names its architecture), not a training script's own config."""
    return isinstance(config, Mapping) and any(k in config for k in ("model_type", "architectures", "hidden_size"))


def _facts_from_config(config: object, origin: str, *, model_config: bool) -> dict[str, Fact]:
    """Facts from a parsed config; a model's config (`config.json`) gives only its vocabulary and name."""
    if not isinstance(config, Mapping):
        return {}  # yaml and json can give lists or scalars
    facts = facts_from_flat_config(flatten(config), origin)
    if model_config:
        facts = {k: v for k, v in facts.items() if k in ("vocab_size", "model")}
    return facts


# HF's TensorBoardCallback writes the TrainingArguments (a TRL trainer's config: beta, num_generations, ...) and
# the model's config as JSON text summaries when training starts. torch's and tensorboardX's `add_text` name
# the tag `<tag>/text_summary`; TensorFlow's `tf.summary.text` keeps `<tag>`.
TEXT_CONFIG_TAGS: dict[str, str] = {
    "args": "args", "args/text_summary": "args",
    "model_config": "model_config", "model_config/text_summary": "model_config",
}


def facts_from_text_summaries(texts: Iterable[Mapping[str, bytes]], label: str) -> dict[str, Fact]:
    """Facts from the config text summaries of a run's event files (`TEXT_CONFIG_TAGS`).

    Args:
        texts: per event file, in the order the files were written, the raw text of each config tag; a
            resumed run writes its arguments again, and the newest copy wins.
        label: the event file (or folder) named in each fact's provenance, e.g. `runs/x/events... (args)`.

    Returns:
        Facts as read from a `training_args.json`; the training arguments win over the model config.
    """
    newest: dict[str, bytes] = {}
    for file_texts in texts:
        for tag, raw in file_texts.items():
            if tag in TEXT_CONFIG_TAGS:
                newest[TEXT_CONFIG_TAGS[tag]] = raw
    facts: dict[str, Fact] = {}
    for name in ("model_config", "args"):
        if name not in newest:
            continue
        try:
            config = loads(newest[name].decode("utf-8", errors="replace"))
        except ValueError:
            continue  # a text summary that is not JSON (a note someone logged under that tag)
        facts.update(_facts_from_config(config, f"{label} ({name})", model_config=name == "model_config"))
    return facts


class _Opaque:
    """Stands in for any class named in a pickle, so unpickling never runs foreign code."""

    args: tuple[Any, ...] = ()
    state: Any = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.args = args
        self.state = kwargs or None

    def __setstate__(self, state: Any) -> None:
        self.state = state


_SAFE_GLOBALS: dict[tuple[str, str], Any] = {
    ("builtins", name): obj
    for name, obj in {"dict": dict, "list": list, "set": set, "tuple": tuple, "frozenset": frozenset,
                      "str": str, "int": int, "float": float, "bool": bool}.items()
} | {("collections", "OrderedDict"): dict}


class _SafeUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        return _SAFE_GLOBALS.get((module, name), _Opaque)

    def persistent_load(self, pid: Any) -> Any:
        return None  # tensor storages: never needed for the arguments we read


def _read_training_args_bin_or_nothing(path: Path) -> Mapping[str, Any]:
    """`_read_training_args_bin`, or nothing for a file that is no pickle we can read.

    Unpickling stray bytes fails in more ways than pickle's own errors: a frame header that claims exabytes is a
    MemoryError, a truncated opcode an IndexError or struct.error. A placeholder or half-copied `training_args.bin`
    must cost the run its config facts, never the whole reading.
    """
    try:
        return _read_training_args_bin(path)
    except OSError:
        raise
    except Exception:  # any failure of a stray pickle means "unreadable", handled as such
        return {}


def _read_training_args_bin(path: Path) -> Mapping[str, Any]:
    """The fields of an HF `TrainingArguments` saved with `torch.save`, read without torch or transformers."""
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as archive:
            name = next((n for n in archive.namelist() if n.endswith("data.pkl")), None)
            if name is None:
                return {}
            with archive.open(name) as handle:
                obj = _SafeUnpickler(handle).load()
    else:
        with path.open("rb") as handle:
            obj = _SafeUnpickler(handle).load()
    state = _state_of(obj)
    if not isinstance(state, Mapping):
        return {}
    return {k: _plain(v) for k, v in state.items() if isinstance(k, str)}


def _state_of(obj: Any) -> Any:
    while isinstance(obj, _Opaque):
        if obj.state is not None:
            state = obj.state
            if isinstance(state, tuple) and state and isinstance(state[0], Mapping):  # (dict, slots)
                state = state[0]
            return state
        if obj.args and isinstance(obj.args[0], _Opaque):
            obj = obj.args[0]
        else:
            return None
    return obj


def _plain(value: Any) -> Any:
    if isinstance(value, _Opaque):  # enums pickle as Enum(value): keep the value
        return value.args[0] if value.args and isinstance(value.args[0], str | int | float) else None
    return value
