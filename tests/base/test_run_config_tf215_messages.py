"""RunConfig and TF_CONFIG errors keep tf.estimator 2.15's exception type and wording.

For each input below tf.estimator 2.15 raised; the patterns are the ones its
own tests matched the message with (`re.search`, as `assertRaisesRegexp`).
The message carries on with which value was wrong and the fix; the checks of
that part are in test_run_config.py and test_fuzzed_config.py.

Where this package knowingly differs from 2.15 (a cluster without a "chief"
job is run with worker 0 as chief; the TF2 ParameterServerStrategy is accepted
as train_distribute; an eval_distribute ParameterServerStrategy is refused
with a message that does not point to the TF1 strategy 2.15 asked for, since
that one cannot run here), see the module docstring of run_config.py.
"""

from __future__ import annotations

import json

import pytest
import tensorflow as tf

from keras_estimator import RunConfig

# (keyword arguments, 2.15's pattern), for the constructor and replace() alike.
INVALID_SETTINGS = [
    ({"model_dir": ""}, r"model_dir should be non-empty"),
    ({"save_summary_steps": -1}, r"save_summary_steps should be >= 0"),
    ({"save_checkpoints_steps": -1}, r"save_checkpoints_steps should be >= 0"),
    ({"save_checkpoints_secs": -1}, r"save_checkpoints_secs should be >= 0"),
    ({"session_config": {}}, r"session_config must be instance of ConfigProto"),
    ({"keep_checkpoint_max": -1}, r"keep_checkpoint_max should be >= 0"),
    (
        {"keep_checkpoint_every_n_hours": 0},
        r"keep_checkpoint_every_n_hours should be > 0",
    ),
    ({"log_step_count_steps": 0}, r"log_step_count_steps should be > 0"),
    (
        {"session_creation_timeout_secs": 0},
        r"session_creation_timeout_secs should be > 0",
    ),
    ({"tf_random_seed": 1.0}, r"tf_random_seed must be integer"),
    (
        {"device_fn": lambda x: "/cpu:0"},
        r'device_fn must be callable with exactly one argument "op".',
    ),
    (
        {"device_fn": lambda x, y: 0},
        r'device_fn must be callable with exactly one argument "op".',
    ),
    (
        {"experimental_max_worker_delay_secs": "5"},
        r"experimental_max_worker_delay_secs must be an integer if set.",
    ),
]
BOTH_CADENCES = (
    r"`save_checkpoints_steps` and `save_checkpoints_secs` cannot be both set."
)


@pytest.mark.parametrize(("kwargs", "pattern"), INVALID_SETTINGS)
def test_constructor_refuses_with_2_15s_message(kwargs, pattern):
    with pytest.raises(ValueError, match=pattern) as raised:
        RunConfig(**kwargs)
    # 2.15's sentence comes first, then the value received.
    assert raised.value.args[0].startswith(pattern.rstrip("."))
    assert "got" in raised.value.args[0].lower()


@pytest.mark.parametrize(("kwargs", "pattern"), INVALID_SETTINGS)
def test_replace_refuses_with_2_15s_message(kwargs, pattern):
    with pytest.raises(ValueError, match=pattern):
        RunConfig().replace(**kwargs)


def test_both_checkpoint_cadences_with_2_15s_message():
    with pytest.raises(ValueError, match=BOTH_CADENCES):
        RunConfig(save_checkpoints_steps=100, save_checkpoints_secs=200)
    with pytest.raises(ValueError, match=BOTH_CADENCES):
        RunConfig().replace(save_checkpoints_steps=100, save_checkpoints_secs=200)


@pytest.mark.parametrize("name", ["master", "some_undefined_property"])
def test_replacing_what_cannot_be_replaced_with_2_15s_message(name):
    with pytest.raises(ValueError, match=r"Replacing .*is not supported"):
        RunConfig().replace(**{name: "master_"})


# ---------------------------------------------------------------- TF_CONFIG

ONE_CHIEF = r'The "cluster" in TF_CONFIG must have only one "chief" node.'
ONE_MASTER = r'The "cluster" in TF_CONFIG must have only one "master" node.'
TASK_TYPE_UNSET = r'If "cluster" is set .* task type must be set'
MISSING_CHIEF = r'If "cluster" is set .* it must have one "chief" node'
TASK_INDEX_UNSET = r'If "cluster" is set .* task index must be set'
BAD_TASK_ID = r"is not a valid task_id"
NEGATIVE_INDEX = r"Task index must be non-negative number."
BAD_TASK_TYPE = r"is not a valid task_type"
LOCAL_TYPE = r'If "cluster" is not set in TF_CONFIG, task type must be WORKER.'
LOCAL_INDEX = r'If "cluster" is not set in TF_CONFIG, task index must be 0.'
MASTER_AND_EVALUATOR = (
    r"If `master` node exists in `cluster`, task_type `evaluator` is not supported."
)
MASTER_AND_CHIEF = (
    r"If `master` node exists in `cluster`, job `chief` is not supported."
)


def _task(task_type, index=None):
    task = {"type": task_type}
    if index is not None:
        task["index"] = index
    return task


def _cases(chief):
    """2.15's refusals for a cluster led by `chief` ("chief" or the legacy "master")."""
    one = {chief: ["host3:3"]}
    return [
        (
            {"cluster": {chief: ["host0:0", "host:6:6"], "worker": ["host3:3"]}},
            ONE_CHIEF if chief == "chief" else ONE_MASTER,
        ),
        ({"cluster": one}, TASK_TYPE_UNSET),
        ({"cluster": one, "task": _task(chief)}, TASK_INDEX_UNSET),
        ({"cluster": one, "task": _task(chief, 1)}, BAD_TASK_ID),
        ({"cluster": one, "task": _task(chief, -1)}, NEGATIVE_INDEX),
        ({"cluster": one, "task": _task("worker", 0)}, BAD_TASK_TYPE),
    ]


TF_CONFIG_REFUSALS = [
    *_cases("chief"),
    *_cases("master"),
    # 2.15 (run_config_test's test_fail_with_missing_chief_node): neither
    # a chief nor a task.
    ({"cluster": {"worker": ["host3:3", "host4:4", "host5:5"]}}, MISSING_CHIEF),
    ({"task": _task("chief", 0)}, LOCAL_TYPE),
    ({"task": _task("master", 0)}, LOCAL_TYPE),
    ({"task": _task("worker", 1)}, LOCAL_INDEX),
    (
        {"cluster": {"master": ["host3:3"]}, "task": _task("evaluator", 0)},
        MASTER_AND_EVALUATOR,
    ),
    (
        {
            "cluster": {"master": ["host3:3"], "chief": ["host4:4"]},
            "task": _task("chief", 0),
        },
        MASTER_AND_CHIEF,
    ),
    ({"model_dir": ""}, r"model_dir in TF_CONFIG should be non-empty"),
]


@pytest.mark.parametrize(("tf_config", "pattern"), TF_CONFIG_REFUSALS)
def test_tf_config_refusals_with_2_15s_message(monkeypatch, tf_config, pattern):
    monkeypatch.setenv("TF_CONFIG", json.dumps(tf_config))
    with pytest.raises(ValueError, match=pattern) as raised:
        RunConfig()
    # Then which field is wrong and how to fix it.
    assert "Invalid TF_CONFIG" in raised.value.args[0]


def test_tf_config_model_dir_differing_from_the_argument(monkeypatch):
    monkeypatch.setenv("TF_CONFIG", json.dumps({"model_dir": "/tmp/123"}))
    with pytest.raises(
        ValueError,
        match=r"`model_dir` provided in RunConfig construct, if set, must have the "
        r"same value as the model_dir in TF_CONFIG. .*'/tmp/456'.*'/tmp/123'",
    ):
        RunConfig(model_dir="/tmp/456")
    assert RunConfig(model_dir="/tmp/123").model_dir == "/tmp/123"


@pytest.mark.parametrize("service", [789, "svc", [1]])
def test_a_service_that_is_not_an_object_is_a_type_error_as_in_2_15(
    monkeypatch, service
):
    monkeypatch.setenv("TF_CONFIG", json.dumps({"service": service}))
    with pytest.raises(
        TypeError, match=r'If "service" is set in TF_CONFIG, it must be a dict. Given'
    ):
        RunConfig()
    # Still a ValueError, as every other malformed TF_CONFIG.
    with pytest.raises(ValueError, match=r'Invalid TF_CONFIG "service"'):
        RunConfig()


def test_a_service_object_is_kept(monkeypatch):
    monkeypatch.setenv(
        "TF_CONFIG", json.dumps({"service": {"my_service": {"addr": "x:1"}}})
    )
    assert RunConfig().service == {"my_service": {"addr": "x:1"}}


def test_session_config_of_the_right_type_is_kept():
    session_config = tf.compat.v1.ConfigProto(allow_soft_placement=True)
    assert RunConfig(session_config=session_config).session_config == session_config


def test_a_second_evaluator_is_refused_by_train_and_evaluate_as_in_2_15(
    monkeypatch, tmp_path
):
    import keras_estimator as ke

    tf_config = {"cluster": {"chief": ["host0:0"]}, "task": {"type": "evaluator", "index": 1}}
    monkeypatch.setenv("TF_CONFIG", json.dumps(tf_config))

    def model_fn(features, labels, mode):
        raise AssertionError("refused before any model_fn call")

    estimator = ke.Estimator(model_fn, model_dir=str(tmp_path))
    specs = ke.TrainSpec(lambda: {"x": [[1.0]]}, max_steps=1), ke.EvalSpec(
        lambda: {"x": [[1.0]]}
    )
    with pytest.raises(
        ValueError, match=r"there can only be one `evaluator` task .*with task id 0"
    ):
        ke.train_and_evaluate(estimator, *specs)
