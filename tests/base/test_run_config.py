"""Unit tests for keras_estimator._src.base.run_config (RunConfig and TF_CONFIG parsing)."""

from __future__ import annotations

import collections
import copy
import inspect
import json
import os
import pathlib
from unittest import mock

import numpy as np
import pytest
import tensorflow as tf
from hypothesis import given, settings
from hypothesis import strategies as st

from keras_estimator._src.base.run_config import RunConfig
from keras_estimator._src.base.tf_config import _parse_tf_config

CHIEF, WORKER, PS, EVALUATOR = "chief", "worker", "ps", "evaluator"

# The cluster used in tf.estimator's RunConfig documentation.
DOC_CLUSTER = {
    "chief": ["host0:2222"],
    "ps": ["host1:2222", "host2:2222"],
    "worker": ["host3:2222", "host4:2222", "host5:2222"],
}


@pytest.fixture(autouse=True)
def _no_tf_config(monkeypatch):
    monkeypatch.delenv("TF_CONFIG", raising=False)


def _set_tf_config(monkeypatch, tf_config) -> None:
    text = tf_config if isinstance(tf_config, str) else json.dumps(tf_config)
    monkeypatch.setenv("TF_CONFIG", text)


def _config_for(monkeypatch, cluster, task_type, index, **extra) -> RunConfig:
    _set_tf_config(
        monkeypatch,
        {"cluster": cluster, "task": {"type": task_type, "index": index}, **extra},
    )
    return RunConfig()


# ---------------------------------------------------------------- signature


def test_constructor_signature_matches_tf_estimator_2_15():
    expected = [
        ("model_dir", "None"),
        ("tf_random_seed", "None"),
        ("save_summary_steps", "100"),
        ("save_checkpoints_steps", "<default sentinel>"),
        ("save_checkpoints_secs", "<default sentinel>"),
        ("session_config", "None"),
        ("keep_checkpoint_max", "5"),
        ("keep_checkpoint_every_n_hours", "10000"),
        ("log_step_count_steps", "100"),
        ("train_distribute", "None"),
        ("device_fn", "None"),
        ("protocol", "None"),
        ("eval_distribute", "None"),
        ("experimental_distribute", "None"),
        ("experimental_max_worker_delay_secs", "None"),
        ("session_creation_timeout_secs", "7200"),
        ("checkpoint_save_graph_def", "True"),
    ]
    parameters = list(inspect.signature(RunConfig).parameters.values())
    assert [(p.name, repr(p.default)) for p in parameters[:-1]] == expected
    # One extension, keyword-only so that every 2.15 call still binds the same.
    extension = parameters[-1]
    assert (extension.name, extension.default) == ("steps_per_loop", None)
    assert extension.kind is inspect.Parameter.KEYWORD_ONLY


def test_replace_takes_only_keyword_arguments():
    parameters = list(inspect.signature(RunConfig.replace).parameters.values())
    assert [p.kind for p in parameters[1:]] == [inspect.Parameter.VAR_KEYWORD]


# ---------------------------------------------------------------- defaults


def test_defaults():
    config = RunConfig()
    assert config.model_dir is None
    assert config.tf_random_seed is None
    assert config.save_summary_steps == 100
    assert config.save_checkpoints_steps is None
    assert config.save_checkpoints_secs == 600
    assert config.session_config is None
    assert config.keep_checkpoint_max == 5
    assert config.keep_checkpoint_every_n_hours == 10000
    assert config.log_step_count_steps == 100
    assert config.train_distribute is None
    assert config.eval_distribute is None
    assert config.device_fn is None
    assert config.protocol is None
    assert config.experimental_max_worker_delay_secs is None
    assert config.session_creation_timeout_secs == 7200
    assert config.checkpoint_save_graph_def is True
    assert config.steps_per_loop is None


def test_local_cluster_properties_without_tf_config():
    config = RunConfig()
    assert config.cluster_spec.as_dict() == {}
    assert config.task_type == WORKER
    assert config.task_id == 0
    assert config.master == ""
    assert config.evaluation_master == ""
    assert config.is_chief is True
    assert config.num_ps_replicas == 0
    assert config.num_worker_replicas == 1
    assert config.global_id_in_cluster == 0
    assert config.service is None


@pytest.mark.parametrize(
    "name",
    [
        "model_dir",
        "tf_random_seed",
        "save_summary_steps",
        "save_checkpoints_steps",
        "save_checkpoints_secs",
        "session_config",
        "keep_checkpoint_max",
        "keep_checkpoint_every_n_hours",
        "log_step_count_steps",
        "train_distribute",
        "eval_distribute",
        "device_fn",
        "protocol",
        "experimental_max_worker_delay_secs",
        "session_creation_timeout_secs",
        "checkpoint_save_graph_def",
        "cluster_spec",
        "task_type",
        "task_id",
        "master",
        "evaluation_master",
        "is_chief",
        "num_ps_replicas",
        "num_worker_replicas",
        "global_id_in_cluster",
        "service",
    ],
)
def test_properties_are_read_only(name):
    assert isinstance(inspect.getattr_static(RunConfig, name), property)
    with pytest.raises(AttributeError):
        setattr(RunConfig(), name, 1)


def test_settings_are_stored():
    def device_fn(op):
        return "/cpu:0"

    session_config = tf.compat.v1.ConfigProto(log_device_placement=True)
    config = RunConfig(
        model_dir="/tmp/model",
        tf_random_seed=7,
        save_summary_steps=0,
        save_checkpoints_steps=50,
        session_config=session_config,
        keep_checkpoint_max=0,
        keep_checkpoint_every_n_hours=0.5,
        log_step_count_steps=10,
        device_fn=device_fn,
        protocol="grpc+verbs",
        experimental_max_worker_delay_secs=3,
        session_creation_timeout_secs=1.5,
        checkpoint_save_graph_def=False,
    )
    assert config.model_dir == "/tmp/model"
    assert config.tf_random_seed == 7
    assert config.save_summary_steps == 0
    assert config.save_checkpoints_steps == 50
    assert config.save_checkpoints_secs is None
    assert config.session_config is session_config
    assert config.keep_checkpoint_max == 0
    assert config.keep_checkpoint_every_n_hours == 0.5
    assert config.log_step_count_steps == 10
    assert config.device_fn is device_fn
    assert config.protocol == "grpc+verbs"
    assert config.experimental_max_worker_delay_secs == 3
    assert config.session_creation_timeout_secs == 1.5
    assert config.checkpoint_save_graph_def is False


def test_model_dir_path_like_becomes_str(tmp_path):
    assert RunConfig(model_dir=tmp_path).model_dir == str(tmp_path)
    assert RunConfig(model_dir=pathlib.PurePosixPath("a/b")).model_dir == "a/b"


def test_numpy_integers_are_accepted():
    config = RunConfig(tf_random_seed=np.int64(3), save_summary_steps=np.int32(5))
    assert config.tf_random_seed == 3
    assert config.save_summary_steps == 5


def test_none_disables_optional_cadences():
    config = RunConfig(save_summary_steps=None, log_step_count_steps=None)
    assert config.save_summary_steps is None
    assert config.log_step_count_steps is None


# ---------------------------------------------------------------- checkpoints


def test_checkpoint_steps_only_clears_secs():
    config = RunConfig(save_checkpoints_steps=10)
    assert (config.save_checkpoints_steps, config.save_checkpoints_secs) == (10, None)


def test_checkpoint_secs_only_clears_steps():
    config = RunConfig(save_checkpoints_secs=30)
    assert (config.save_checkpoints_steps, config.save_checkpoints_secs) == (None, 30)


def test_checkpoints_disabled_with_none():
    config = RunConfig(save_checkpoints_steps=None, save_checkpoints_secs=None)
    assert (config.save_checkpoints_steps, config.save_checkpoints_secs) == (None, None)
    config = RunConfig(save_checkpoints_steps=None)
    assert (config.save_checkpoints_steps, config.save_checkpoints_secs) == (None, None)


def test_checkpoint_steps_and_secs_are_exclusive():
    with pytest.raises(
        ValueError,
        match=r"`save_checkpoints_steps` and `save_checkpoints_secs` cannot be both set\. Got .*"
        r"save_checkpoints_steps=10 and save_checkpoints_secs=20",
    ):
        RunConfig(save_checkpoints_steps=10, save_checkpoints_secs=20)


def test_one_checkpoint_cadence_with_other_none_is_allowed():
    config = RunConfig(save_checkpoints_steps=10, save_checkpoints_secs=None)
    assert (config.save_checkpoints_steps, config.save_checkpoints_secs) == (10, None)


# ---------------------------------------------------------------- validation


@pytest.mark.parametrize(
    "kwargs, pattern",
    [
        ({"save_summary_steps": -1}, r"save_summary_steps should be >= 0, got -1"),
        (
            {"save_checkpoints_steps": -5},
            r"save_checkpoints_steps should be >= 0, got -5",
        ),
        ({"save_checkpoints_secs": -1}, r"save_checkpoints_secs should be >= 0, got -1"),
        ({"keep_checkpoint_max": -1}, r"keep_checkpoint_max should be >= 0, got -1"),
        (
            {"keep_checkpoint_every_n_hours": 0},
            r"keep_checkpoint_every_n_hours should be > 0, got 0",
        ),
        ({"log_step_count_steps": 0}, r"log_step_count_steps should be > 0, got 0"),
        (
            {"session_creation_timeout_secs": 0},
            r"session_creation_timeout_secs should be > 0, got 0",
        ),
        ({"model_dir": ""}, r"model_dir should be non-empty: got ''"),
        (
            {"protocol": "http"},
            r"protocol must be None, 'grpc' or 'grpc\+verbs', got 'http'",
        ),
    ],
)
def test_out_of_range_values_raise_value_error(kwargs, pattern):
    with pytest.raises(ValueError, match=pattern):
        RunConfig(**kwargs)


@pytest.mark.parametrize(
    "kwargs, pattern",
    [
        ({"save_summary_steps": "10"}, r"save_summary_steps must be an integer .*'10'"),
        ({"save_summary_steps": 1.5}, r"save_summary_steps must be an integer .*1\.5"),
        (
            {"save_checkpoints_steps": True},
            r"save_checkpoints_steps must be an integer",
        ),
        ({"save_checkpoints_secs": "60"}, r"save_checkpoints_secs must be a number"),
        ({"tf_random_seed": 1.5}, r"tf_random_seed must be integer\. Got 1\.5 of type float"),
        ({"tf_random_seed": "42"}, r"tf_random_seed must be integer\. Got '42'"),
        ({"keep_checkpoint_max": 2.0}, r"keep_checkpoint_max must be an integer"),
        ({"log_step_count_steps": "x"}, r"log_step_count_steps must be an integer"),
        (
            {"experimental_max_worker_delay_secs": 1.5},
            r"experimental_max_worker_delay_secs must be an integer",
        ),
        ({"model_dir": 123}, r"model_dir must be a path .*123.*int"),
        ({"session_config": {}}, r"session_config must be instance of ConfigProto \(tf.compat.v1.ConfigProto\)"),
        ({"train_distribute": "mirrored"}, r"train_distribute must be a tf.distribute"),
        ({"eval_distribute": object()}, r"eval_distribute must be a tf.distribute"),
        ({"device_fn": "/cpu:0"}, r"device_fn must be callable with exactly one argument \"op\"\. Got"),
        ({"device_fn": lambda x: x}, r"device_fn must be callable with exactly one argument \"op\""),
        ({"device_fn": lambda op, other: op}, r"device_fn must be callable"),
        (
            {"checkpoint_save_graph_def": "yes"},
            r"checkpoint_save_graph_def must be True or False, got 'yes'",
        ),
        ({"experimental_distribute": 3}, r"experimental_distribute must be None or"),
    ],
)
def test_wrong_types_raise_type_error_that_is_also_value_error(kwargs, pattern):
    with pytest.raises(TypeError, match=pattern) as raised:
        RunConfig(**kwargs)
    assert isinstance(raised.value, ValueError)  # tf.estimator raised ValueError.


def test_device_fn_accepts_callables_with_op_argument():
    class Placer:
        def __call__(self, op):
            return "/cpu:0"

    placer = Placer()
    assert RunConfig(device_fn=placer).device_fn is placer
    assert RunConfig(device_fn=lambda op, *args: "").device_fn is not None


def test_distribution_strategies_are_accepted():
    strategy = tf.distribute.OneDeviceStrategy("/cpu:0")
    config = RunConfig(train_distribute=strategy, eval_distribute=strategy)
    assert config.train_distribute is strategy
    assert config.eval_distribute is strategy


def test_tf1_parameter_server_strategy_is_rejected_for_the_tf2_one():
    # The TF2 strategy is accepted (tests/integration/test_parameter_server.py trains with it).
    strategy = tf.compat.v1.distribute.experimental.ParameterServerStrategy()
    with pytest.raises(ValueError, match=r"Use the TF2 tf\.distribute\.experimental"):
        RunConfig(train_distribute=strategy)


DistributeConfig = collections.namedtuple(
    "DistributeConfig", ["train_distribute", "eval_distribute", "remote_cluster"]
)


def test_experimental_distribute_provides_strategies():
    strategy = tf.distribute.OneDeviceStrategy("/cpu:0")
    config = RunConfig(experimental_distribute=DistributeConfig(strategy, None, None))
    assert config.train_distribute is strategy
    assert config.eval_distribute is None


def test_experimental_distribute_conflict():
    strategy = tf.distribute.OneDeviceStrategy("/cpu:0")
    with pytest.raises(ValueError, match=r"train_distribute is given both"):
        RunConfig(
            train_distribute=strategy,
            experimental_distribute=DistributeConfig(strategy, None, None),
        )


# ---------------------------------------------------------------- replace


def test_replace_returns_new_config_and_leaves_original():
    config = RunConfig(save_summary_steps=10)
    new = config.replace(save_summary_steps=20, tf_random_seed=3)
    assert isinstance(new, RunConfig)
    assert new is not config
    assert (new.save_summary_steps, new.tf_random_seed) == (20, 3)
    assert (config.save_summary_steps, config.tf_random_seed) == (10, None)


@pytest.mark.parametrize(
    "name", ["cluster_spec", "is_chief", "task_type", "master", "unknown_thing"]
)
def test_replace_rejects_non_replaceable_names(name):
    with pytest.raises(
        ValueError,
        match=rf"^Replacing {name} is not supported\. RunConfig.replace\(\) can replace: model_dir, ",
    ):
        RunConfig().replace(**{name: 1})


def test_replace_each_replaceable_setting():
    replacements = {
        "model_dir": "/tmp/other",
        "tf_random_seed": 1,
        "save_summary_steps": 3,
        "session_config": tf.compat.v1.ConfigProto(),
        "keep_checkpoint_max": 2,
        "keep_checkpoint_every_n_hours": 4,
        "log_step_count_steps": 5,
        "protocol": "grpc",
        "experimental_max_worker_delay_secs": 6,
        "session_creation_timeout_secs": 7,
        "checkpoint_save_graph_def": False,
    }
    config = RunConfig().replace(**replacements)
    for name, value in replacements.items():
        assert getattr(config, name) == value, name


def test_replace_steps_clears_secs_and_back():
    config = RunConfig().replace(save_checkpoints_steps=100)
    assert (config.save_checkpoints_steps, config.save_checkpoints_secs) == (100, None)
    config = config.replace(save_checkpoints_secs=30)
    assert (config.save_checkpoints_steps, config.save_checkpoints_secs) == (None, 30)


def test_replace_both_cadences():
    with pytest.raises(ValueError, match=r"cannot be both set"):
        RunConfig().replace(save_checkpoints_steps=1, save_checkpoints_secs=2)
    config = RunConfig().replace(
        save_checkpoints_steps=None, save_checkpoints_secs=None
    )
    assert (config.save_checkpoints_steps, config.save_checkpoints_secs) == (None, None)


def test_replace_validates_values():
    with pytest.raises(ValueError, match=r"log_step_count_steps should be > 0, got 0"):
        RunConfig().replace(log_step_count_steps=0)
    with pytest.raises(TypeError, match=r"tf_random_seed must be integer\."):
        RunConfig().replace(tf_random_seed="x")


def test_replace_copies_session_config():
    config = RunConfig(session_config=tf.compat.v1.ConfigProto())
    new = config.replace(tf_random_seed=1)
    new.session_config.allow_soft_placement = True
    assert not config.session_config.allow_soft_placement


def test_replace_keeps_cluster_properties(monkeypatch):
    config = _config_for(monkeypatch, DOC_CLUSTER, WORKER, 2)
    monkeypatch.delenv("TF_CONFIG")
    new = config.replace(model_dir="/tmp/x")
    assert (new.task_type, new.task_id, new.global_id_in_cluster) == (WORKER, 2, 3)
    assert new.cluster_spec == config.cluster_spec


def test_deepcopy():
    config = RunConfig(model_dir="/tmp/m", session_config=tf.compat.v1.ConfigProto())
    copied = copy.deepcopy(config)
    assert copied.model_dir == "/tmp/m"
    assert copied.save_checkpoints_secs == 600


# ---------------------------------------------------------------- str / repr


def test_str_and_repr_are_readable(monkeypatch):
    config = _config_for(monkeypatch, DOC_CLUSTER, WORKER, 1)
    text = str(config)
    assert text.startswith("RunConfig(\n")
    assert "  save_checkpoints_secs=600,\n" in text
    assert "  master='grpc://host4:2222',\n" in text
    assert "cluster_spec=ClusterSpec({" in text
    assert 'device_filters: "/job:ps"' in text
    one_line = repr(config)
    assert "\n" not in one_line
    assert one_line.startswith("RunConfig(model_dir=None, ")


# ---------------------------------------------------------------- TF_CONFIG


def test_empty_tf_config_is_local(monkeypatch):
    for text in ("", "  ", "{}"):
        _set_tf_config(monkeypatch, text)
        config = RunConfig()
        assert (config.task_type, config.is_chief, config.master) == (WORKER, True, "")


def test_worker_in_documented_cluster(monkeypatch):
    config = _config_for(monkeypatch, DOC_CLUSTER, WORKER, 1)
    assert config.master == "grpc://host4:2222"
    assert config.task_type == WORKER
    assert config.task_id == 1
    assert config.num_ps_replicas == 2
    assert config.num_worker_replicas == 4
    assert config.cluster_spec == tf.train.ClusterSpec(DOC_CLUSTER)
    assert not config.is_chief
    assert config.global_id_in_cluster == 2
    assert config.evaluation_master == ""


def test_chief_in_documented_cluster(monkeypatch):
    config = _config_for(monkeypatch, DOC_CLUSTER, CHIEF, 0)
    assert config.master == "grpc://host0:2222"
    assert config.is_chief
    assert config.global_id_in_cluster == 0
    assert config.num_worker_replicas == 4


@pytest.mark.parametrize("index, global_id", [(0, 4), (1, 5)])
def test_ps_in_documented_cluster(monkeypatch, index, global_id):
    config = _config_for(monkeypatch, DOC_CLUSTER, PS, index)
    assert config.master == f"grpc://{DOC_CLUSTER['ps'][index]}"
    assert not config.is_chief
    assert config.global_id_in_cluster == global_id


def test_evaluator_is_outside_the_training_cluster(monkeypatch):
    config = _config_for(monkeypatch, DOC_CLUSTER, EVALUATOR, 3)
    assert config.task_type == EVALUATOR
    assert config.task_id == 3  # No upper bound for evaluators.
    assert config.master == ""
    assert config.evaluation_master == ""
    assert config.num_ps_replicas == 0
    assert config.num_worker_replicas == 0
    assert config.cluster_spec.as_dict() == {}
    assert not config.is_chief
    assert config.global_id_in_cluster is None
    assert config.session_config is None


def test_evaluator_session_master(monkeypatch):
    config = _config_for(
        monkeypatch, DOC_CLUSTER, EVALUATOR, 0, eval_session_master="grpc://e:1"
    )
    assert config.evaluation_master == "grpc://e:1"


def test_worker_only_cluster_makes_worker_zero_chief(monkeypatch):
    cluster = {"worker": ["w0:1", "w1:1", "w2:1"]}
    for index in range(3):
        config = _config_for(monkeypatch, cluster, WORKER, index)
        assert config.is_chief == (index == 0)
        assert config.global_id_in_cluster == index
        assert config.num_worker_replicas == 3
        assert config.master == f"grpc://w{index}:1"


def test_worker_and_ps_cluster_without_chief(monkeypatch):
    cluster = {"worker": ["w0:1", "w1:1"], "ps": ["p0:1"]}
    assert _config_for(monkeypatch, cluster, PS, 0).global_id_in_cluster == 2
    assert _config_for(monkeypatch, cluster, WORKER, 1).global_id_in_cluster == 1


def test_single_task_cluster_runs_locally(monkeypatch):
    config = _config_for(monkeypatch, {"chief": ["host0:1"]}, CHIEF, 0)
    assert config.master == ""
    assert config.is_chief
    assert config.num_worker_replicas == 1


def test_session_master_overrides(monkeypatch):
    config = _config_for(
        monkeypatch, DOC_CLUSTER, WORKER, 0, session_master="grpc://custom:9"
    )
    assert config.master == "grpc://custom:9"
    _set_tf_config(monkeypatch, {"session_master": "grpc://local:9"})
    assert RunConfig().master == "grpc://local:9"


def test_rpc_layer_sets_master_scheme(monkeypatch):
    config = _config_for(monkeypatch, DOC_CLUSTER, WORKER, 0, rpc_layer="grpc+loas")
    assert config.master == "grpc+loas://host3:2222"


def test_service_and_environment(monkeypatch):
    service = {"name": "svc", "port": 1}
    config = _config_for(
        monkeypatch, DOC_CLUSTER, WORKER, 0, service=service, environment="cloud"
    )
    assert config.service == service
    _set_tf_config(monkeypatch, {"environment": "google"})
    RunConfig()


def test_legacy_master_job(monkeypatch):
    cluster = {"master": ["m:1"], "worker": ["w0:1", "w1:1"], "ps": ["p:1"]}
    master = _config_for(monkeypatch, cluster, "master", 0)
    assert master.is_chief
    assert master.global_id_in_cluster == 0
    assert master.num_worker_replicas == 3
    worker = _config_for(monkeypatch, cluster, WORKER, 0)
    assert not worker.is_chief
    assert worker.global_id_in_cluster == 1
    assert _config_for(monkeypatch, cluster, PS, 0).global_id_in_cluster == 3


def test_task_without_cluster_must_be_worker_zero(monkeypatch):
    _set_tf_config(monkeypatch, {"task": {"type": "worker", "index": 0}})
    assert RunConfig().is_chief
    _set_tf_config(monkeypatch, {"task": {"type": "ps", "index": 0}})
    with pytest.raises(
        ValueError, match=r'without a "cluster", the task must be worker 0'
    ):
        RunConfig()
    _set_tf_config(monkeypatch, {"task": {"type": "worker", "index": 1}})
    with pytest.raises(ValueError, match=r"got type 'worker' index 1"):
        RunConfig()


def test_task_index_may_be_a_digit_string(monkeypatch):
    assert _config_for(monkeypatch, DOC_CLUSTER, WORKER, "2").task_id == 2


def test_empty_jobs_are_ignored(monkeypatch):
    config = _config_for(monkeypatch, {"worker": ["w:1", "v:1"], "ps": []}, WORKER, 1)
    assert config.num_ps_replicas == 0
    assert config.cluster_spec.jobs == ["worker"]


def test_default_session_config_in_cluster(monkeypatch):
    worker = _config_for(monkeypatch, DOC_CLUSTER, WORKER, 1)
    assert list(worker.session_config.device_filters) == [
        "/job:ps",
        "/job:worker/task:1",
    ]
    assert worker.session_config.allow_soft_placement
    chief = _config_for(monkeypatch, DOC_CLUSTER, CHIEF, 0)
    assert list(chief.session_config.device_filters) == ["/job:ps", "/job:chief"]
    given = tf.compat.v1.ConfigProto(log_device_placement=True)
    _set_tf_config(
        monkeypatch, {"cluster": DOC_CLUSTER, "task": {"type": "worker", "index": 0}}
    )
    assert RunConfig(session_config=given).session_config is given


def test_model_dir_from_tf_config(monkeypatch):
    _set_tf_config(monkeypatch, {"model_dir": "/tmp/from_env"})
    assert RunConfig().model_dir == "/tmp/from_env"
    assert RunConfig(model_dir="/tmp/from_env").model_dir == "/tmp/from_env"
    with pytest.raises(
        ValueError, match=r"model_dir '/tmp/mine' differs from .*TF_CONFIG"
    ):
        RunConfig(model_dir="/tmp/mine")
    _set_tf_config(monkeypatch, {"model_dir": ""})
    with pytest.raises(
        ValueError, match=r'TF_CONFIG "model_dir": it is the empty string'
    ):
        RunConfig()


def test_tf_config_read_at_construction_time(monkeypatch):
    config = RunConfig()
    _set_tf_config(
        monkeypatch, {"cluster": DOC_CLUSTER, "task": {"type": "ps", "index": 0}}
    )
    assert config.task_type == WORKER
    assert RunConfig().task_type == PS


def test_invalid_json_is_a_clear_value_error(monkeypatch):
    _set_tf_config(monkeypatch, "{cluster: oops")
    with pytest.raises(
        ValueError, match=r"Invalid TF_CONFIG value: not valid JSON .*line 1 column 2"
    ) as raised:
        RunConfig()
    assert not isinstance(raised.value, json.JSONDecodeError)
    assert raised.value.__cause__ is None


MALFORMED = [
    pytest.param(
        [1, 2], r"TF_CONFIG value: expected a JSON object, got list", id="list"
    ),
    pytest.param(
        {"cluster": DOC_CLUSTER},
        r'TF_CONFIG "task": it is missing\. Add "task"',
        id="no-task",
    ),
    pytest.param(
        {"cluster": DOC_CLUSTER, "task": "worker"},
        r'TF_CONFIG "task": expected an object, got \'worker\'',
        id="task-not-object",
    ),
    pytest.param(
        {"cluster": DOC_CLUSTER, "task": {"index": 0}},
        r'TF_CONFIG "task"\["type"\]: it is missing\. Set "type" to one of',
        id="no-type",
    ),
    pytest.param(
        {"cluster": DOC_CLUSTER, "task": {"type": 3, "index": 0}},
        r'"task"\["type"\]: expected a string, got 3',
        id="type-not-str",
    ),
    pytest.param(
        {"cluster": DOC_CLUSTER, "task": {"type": "worker"}},
        r'TF_CONFIG "task"\["index"\]: it is missing',
        id="no-index",
    ),
    pytest.param(
        {"cluster": DOC_CLUSTER, "task": {"type": "worker", "index": -1}},
        r'"task"\["index"\]: it is negative \(-1\)',
        id="negative-index",
    ),
    pytest.param(
        {"cluster": DOC_CLUSTER, "task": {"type": "worker", "index": "one"}},
        r'"task"\["index"\]: expected a non-negative integer, got \'one\'',
        id="index-not-int",
    ),
    pytest.param(
        {"cluster": DOC_CLUSTER, "task": {"type": "worker", "index": 1.5}},
        r'"task"\["index"\]: expected a non-negative integer, got 1\.5',
        id="index-float",
    ),
    pytest.param(
        {"cluster": DOC_CLUSTER, "task": {"type": "worker", "index": True}},
        r'"task"\["index"\]: expected a non-negative integer, got True',
        id="index-bool",
    ),
    pytest.param(
        {"cluster": DOC_CLUSTER, "task": {"type": "worker", "index": 3}},
        r'"task"\["index"\]: 3 is out of range: job \'worker\' has 3 task\(s\), '
        r"so valid indices are 0\.\.2",
        id="index-out-of-range",
    ),
    pytest.param(
        {"cluster": DOC_CLUSTER, "task": {"type": "chief", "index": 1}},
        r"1 is out of range: job 'chief' has 1 task",
        id="chief-index-out-of-range",
    ),
    pytest.param(
        {"cluster": DOC_CLUSTER, "task": {"type": "gpu_worker", "index": 0}},
        r"\"task\"\[\"type\"\]: gpu_worker is not a valid task_type in the "
        r"cluster_spec \['chief', 'ps', 'worker'\]",
        id="unknown-task-type",
    ),
    pytest.param(
        {"cluster": {"ps": ["p:1"]}, "task": {"type": "ps", "index": 0}},
        r"\"cluster\": it has \['ps'\] but no \"chief\" or \"worker\" job",
        id="ps-only",
    ),
    pytest.param(
        {"cluster": {"chief": ["a:1", "b:1"]}, "task": {"type": "chief", "index": 0}},
        r'"cluster"\["chief"\]: it lists 2 addresses, but a cluster has one chief',
        id="two-chiefs",
    ),
    pytest.param(
        {
            "cluster": {"chief": ["a:1"], "master": ["b:1"]},
            "task": {"type": "chief", "index": 0},
        },
        r'both a "chief" and a "master" job',
        id="chief-and-master",
    ),
    pytest.param(
        {
            "cluster": {"master": ["a:1"], "worker": ["b:1"]},
            "task": {"type": "evaluator", "index": 0},
        },
        r'"evaluator" task cannot be used with a legacy "master" cluster',
        id="evaluator-with-master",
    ),
    pytest.param(
        {"cluster": ["a:1"], "task": {"type": "worker", "index": 0}},
        r'"cluster": expected an object of task type -> list of addresses',
        id="cluster-list",
    ),
    pytest.param(
        {"cluster": {"worker": "a:1"}, "task": {"type": "worker", "index": 0}},
        r"\"cluster\"\[\"worker\"\]: expected a list of 'host:port' strings, got 'a:1'",
        id="addresses-str",
    ),
    pytest.param(
        {"cluster": {"worker": ["a:1", ""]}, "task": {"type": "worker", "index": 0}},
        r'"cluster"\["worker"\]: expected a list',
        id="empty-address",
    ),
    pytest.param(
        {
            "cluster": {"chief": ["a:1"], "worker": ["b:1"]},
            "task": {"type": "ps", "index": 0},
        },
        r"ps is not a valid task_type in the cluster_spec \['chief', 'worker'\]",
        id="task-type-not-in-cluster",
    ),
    pytest.param(
        {"service": ["x"]},
        r'TF_CONFIG "service": expected a JSON object',
        id="service-not-object",
    ),
    pytest.param(
        {"environment": "aws"},
        r"TF_CONFIG \"environment\": expected one of \['cloud', 'google'\], got 'aws'",
        id="bad-environment",
    ),
    pytest.param(
        {"rpc_layer": ""},
        r'TF_CONFIG "rpc_layer": expected a non-empty string',
        id="empty-rpc-layer",
    ),
    pytest.param(
        {"session_master": 5},
        r'TF_CONFIG "session_master": expected a string, got 5',
        id="session-master-not-str",
    ),
]


@pytest.mark.parametrize("tf_config, pattern", MALFORMED)
def test_malformed_tf_config(monkeypatch, tf_config, pattern):
    _set_tf_config(monkeypatch, tf_config)
    with pytest.raises(ValueError, match=pattern):
        RunConfig()
    # The parser alone gives the same answer.
    with pytest.raises(ValueError, match=pattern):
        _parse_tf_config(os.environ["TF_CONFIG"])


def test_parse_tf_config_unset_is_local():
    info = _parse_tf_config(None)
    assert (info.task_type, info.task_id, info.is_chief) == (WORKER, 0, True)
    assert info.cluster_spec.as_dict() == {}


# ---------------------------------------------------------------- properties


@st.composite
def clusters_and_task(draw):
    has_chief = draw(st.booleans())
    num_workers = draw(st.integers(min_value=1, max_value=4))
    num_ps = draw(st.integers(min_value=0, max_value=3))
    cluster = {"worker": [f"worker{i}:2222" for i in range(num_workers)]}
    if has_chief:
        cluster["chief"] = ["chief0:2222"]
    if num_ps:
        cluster["ps"] = [f"ps{i}:2222" for i in range(num_ps)]
    tasks = [
        (job, index)
        for job, addresses in cluster.items()
        for index in range(len(addresses))
    ]
    task = draw(st.sampled_from(tasks))
    return cluster, task


def _expected_global_id(cluster, job, index):
    num_chief = len(cluster.get("chief", []))
    offsets = {
        "chief": 0,
        "worker": num_chief,
        "ps": num_chief + len(cluster["worker"]),
    }
    return offsets[job] + index


@settings(max_examples=25, deadline=None)
@given(clusters_and_task())
def test_cluster_roles_follow_the_rules(cluster_and_task):
    cluster, (job, index) = cluster_and_task
    tf_config = json.dumps({"cluster": cluster, "task": {"type": job, "index": index}})
    with mock.patch.dict(os.environ, {"TF_CONFIG": tf_config}):
        config = RunConfig()
    has_chief = "chief" in cluster
    assert config.is_chief == (
        job == "chief" or (not has_chief and job == "worker" and index == 0)
    )
    assert config.num_worker_replicas == len(cluster["worker"]) + int(has_chief)
    assert config.num_ps_replicas == len(cluster.get("ps", []))
    assert config.global_id_in_cluster == _expected_global_id(cluster, job, index)
    num_tasks = sum(len(addresses) for addresses in cluster.values())
    expected_master = "" if num_tasks == 1 else f"grpc://{cluster[job][index]}"
    assert config.master == expected_master
    assert (config.task_type, config.task_id) == (job, index)


@settings(max_examples=25, deadline=None)
@given(clusters_and_task())
def test_global_ids_are_a_bijection(cluster_and_task):
    cluster, _ = cluster_and_task
    ids = []
    chiefs = []
    for job, addresses in cluster.items():
        for index in range(len(addresses)):
            tf_config = json.dumps(
                {"cluster": cluster, "task": {"type": job, "index": index}}
            )
            info = _parse_tf_config(tf_config)
            ids.append(info.global_id_in_cluster)
            chiefs.append(info.is_chief)
    assert sorted(ids) == list(range(len(ids)))
    assert chiefs.count(True) == 1
    evaluator = _parse_tf_config(
        json.dumps({"cluster": cluster, "task": {"type": "evaluator", "index": 0}})
    )
    assert evaluator.global_id_in_cluster is None
    assert not evaluator.is_chief


# ---------------------------------------------------------------- tf.estimator 2.15's clusters


def test_port_zero_addresses_are_accepted_as_in_2_15(monkeypatch):
    # run_config_test.py of 2.15 builds its clusters on 'host0:0'.
    cluster = {
        CHIEF: ["host0:0"],
        WORKER: ["host3:3", "host4:4", "host5:5"],
        PS: ["host1:1", "host2:2"],
    }
    config = _config_for(monkeypatch, cluster, CHIEF, 0)
    assert config.cluster_spec.as_dict() == cluster
    assert config.master == "grpc://host0:0"
    assert config.is_chief
    assert (config.num_worker_replicas, config.num_ps_replicas) == (4, 2)
    assert config.global_id_in_cluster == 0
    master = _config_for(
        monkeypatch, {"master": ["host0:0"], WORKER: ["host3:3"]}, "master", 0
    )
    assert master.master == "grpc://host0:0"


@pytest.mark.parametrize("address", ["host0:65536", "host0:-1", "host0:", ":0"])
def test_ports_outside_0_to_65535_are_refused_only_where_the_cluster_is_reached(
    monkeypatch, address
):
    # 2.15's RunConfig took them (a one-task cluster runs in process); the
    # strategy helper, which connects, refuses them.
    _set_tf_config(
        monkeypatch,
        {"cluster": {CHIEF: [address]}, "task": {"type": CHIEF, "index": 0}},
    )
    assert RunConfig().cluster_spec.as_dict() == {CHIEF: [address]}
    with pytest.raises(ValueError, match="is not a 'host:port' address"):
        _parse_tf_config(os.environ["TF_CONFIG"], check_addresses=True)


def test_jobs_of_other_names_are_part_of_the_cluster_as_in_2_15(monkeypatch):
    # 2.15 (run_config_test.test_global_id_in_cluster_for_multipe_worker_types):
    # the chief first, then the other jobs in alphabetical order, the ps last.
    cluster = {
        CHIEF: ["host0:0"],
        WORKER: ["host3:3", "host4:4", "host5:5"],
        "other_type": ["host3:1", "host4:2"],
        PS: ["host6:3", "host7:4", "host8:5"],
    }
    config = _config_for(monkeypatch, cluster, "other_type", 1)
    assert config.task_type == "other_type"
    assert config.task_id == 1
    assert config.global_id_in_cluster == 2
    assert not config.is_chief
    assert config.master == "grpc://host4:2"
    assert config.cluster_spec.as_dict() == cluster
    assert (config.num_worker_replicas, config.num_ps_replicas) == (4, 3)
    worker = _config_for(monkeypatch, cluster, WORKER, 0)
    assert worker.global_id_in_cluster == 3
    ps = _config_for(monkeypatch, cluster, PS, 1)
    assert ps.global_id_in_cluster == 7


def test_task_outside_the_cluster_keeps_2_15s_phrase(monkeypatch):
    _set_tf_config(
        monkeypatch,
        {
            "cluster": {CHIEF: ["host0:0"], "local": ["h:1"]},
            "task": {"type": "alloc", "index": 0},
        },
    )
    with pytest.raises(
        ValueError, match="alloc is not a valid task_type in the cluster_spec"
    ):
        RunConfig()


@pytest.mark.parametrize(
    "task, pattern",
    [
        ("local", r"`task.type` in TF_CONFIG cannot be `local`"),
        (
            "alloc",
            r"Task type alloc is not supported\. Supported task types are "
            r"\['chief', 'worker', 'ps', 'evaluator'\]",
        ),
    ],
)
def test_train_and_evaluate_refuses_a_task_of_another_job_with_2_15s_message(
    monkeypatch, task, pattern
):
    from keras_estimator._src.training.cluster import run_task

    config = _config_for(monkeypatch, {CHIEF: ["host0:0"], task: ["hos1:1"]}, task, 0)
    estimator = mock.Mock(config=config)
    with pytest.raises(ValueError, match=pattern):
        run_task(estimator, mock.Mock(), mock.Mock(), None)
    estimator.train.assert_not_called()
