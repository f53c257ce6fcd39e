"""tpu.TPUConfig, tpu.RunConfig and TPUEstimator accept what tf.estimator 2.15 accepted
and raise its exception types with its messages' first phrases.

Every expectation here is what 2.15 (tensorflow-estimator 2.15.0 on TF 2.15.1)
returned or raised for the same call; its own tests (tpu/tpu_config_test.py,
tpu/tpu_estimator_test.py) match the same phrases.
"""

import collections
import json
import types

import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as ke
from keras_estimator.compat.estimator import tpu


def _model_fn(features, labels, mode, params):
    del labels, mode, params
    return features


@pytest.mark.parametrize(
    "kwargs, error, phrase",
    [
        # 2.15: "TPUConfig num_shards must be positive, got 0"
        (
            dict(num_shards=0),
            ValueError,
            "TPUConfig num_shards must be positive, got 0",
        ),
        # 2.15: TypeError "TPUConfig num_shards must be int, got <class 'float'>"
        (
            dict(num_shards=1.5),
            TypeError,
            "TPUConfig num_shards must be int, got <class 'float'>",
        ),
        (
            dict(initial_infeed_sleep_secs=1.5),
            TypeError,
            "TPUConfig initial_infeed_sleep_secs must be int",
        ),
        (
            dict(initial_infeed_sleep_secs=-1),
            ValueError,
            "TPUConfig initial_infeed_sleep_secs must be positive, got -1",
        ),
        (
            dict(iterations_per_loop=0),
            ValueError,
            "Invalid TPUConfig `iterations_per_loop` value. Value must be positive",
        ),
        (
            dict(iterations_per_loop="5x"),
            ValueError,
            "Invalid TPUConfig `iterations_per_loop` value",
        ),
        (
            dict(num_cores_per_replica=3),
            ValueError,
            "num_cores_per_replica must be 1, 2, 4, 8, 16, 32, 64, 128; got 3",
        ),
        (
            dict(input_partition_dims=[[1], [2], [3]]),
            ValueError,
            "input_partition_dims must be a list/tuple with one or two elements",
        ),
        (
            dict(input_partition_dims=[[1, 2]]),
            ValueError,
            "input_partition_dims is only supported in PER_HOST_V2 mode",
        ),
        (
            dict(input_partition_dims=[[1, 2]], per_host_input_for_training=3),
            ValueError,
            "input_partition_dims requires setting num_cores_per_replica",
        ),
        (
            dict(eval_training_input_configuration=3),
            ValueError,
            "eval_training_input_configuration must be PER_HOST_V1 or SLICED; got 3",
        ),
    ],
)
def test_tpu_config_raises_2_15s_types_and_phrases(kwargs, error, phrase):
    with pytest.raises(error) as raised:
        tpu.TPUConfig(**kwargs)
    assert type(raised.value) is error
    assert str(raised.value).startswith(phrase), str(raised.value)


def test_tpu_config_takes_numpy_and_bool_integers_as_2_15():
    # 2.15 checked isinstance(value, (int, np.integer)): both were accepted.
    assert tpu.TPUConfig(num_shards=np.int64(2)).num_shards == 2
    assert tpu.TPUConfig(num_shards=True).num_shards is True
    assert (
        tpu.TPUConfig(initial_infeed_sleep_secs=np.int32(3)).initial_infeed_sleep_secs
        == 3
    )
    assert tpu.TPUConfig(iterations_per_loop=np.int64(3)).iterations_per_loop == 3


def test_run_config_both_master_and_cluster_phrase():
    with pytest.raises(ValueError, match=r"^Both master and cluster are set"):
        tpu.RunConfig(master="a", cluster=object())


def test_run_config_in_a_tf_config_cluster_has_no_default_session_config(monkeypatch):
    # 2.15's tpu.RunConfig (in-graph TPU runs) kept session_config None where
    # the base RunConfig made one with device filters; a given one is kept.
    monkeypatch.setenv(
        "TF_CONFIG",
        json.dumps(
            {
                "cluster": {"chief": ["host3:3"], "worker": ["host3:4"]},
                "task": {"type": "chief", "index": 0},
            }
        ),
    )
    assert tpu.RunConfig().session_config is None
    given = tf.compat.v1.ConfigProto(allow_soft_placement=True)
    assert tpu.RunConfig(session_config=given).session_config == given


@pytest.mark.parametrize(
    "kwargs, error, phrase",
    [
        (
            dict(config=None),
            ValueError,
            "`config` must be provided with type `tpu_config.RunConfig`",
        ),
        (dict(use_tpu=True), ValueError, "`train_batch_size` cannot be `None`"),
        (
            dict(use_tpu=True, train_batch_size=1.5),
            TypeError,
            "train_batch_size must be int, got <class 'float'>",
        ),
        (
            dict(use_tpu=True, train_batch_size=0),
            ValueError,
            "train_batch_size must be positive, got 0",
        ),
        (
            dict(use_tpu=True, train_batch_size=8, eval_batch_size=0),
            ValueError,
            "eval_batch_size must be positive, got 0",
        ),
        (
            dict(use_tpu=False, params={"batch_size": 3}),
            ValueError,
            "['batch_size', 'context'] are reserved keys but existed in params",
        ),
    ],
)
def test_tpu_estimator_raises_2_15s_types_and_phrases(tmp_path, kwargs, error, phrase):
    settings = dict(model_fn=_model_fn, config=tpu.RunConfig(model_dir=str(tmp_path)))
    settings.update(kwargs)
    with pytest.raises(error) as raised:
        tpu.TPUEstimator(**settings)
    assert type(raised.value) is error
    assert str(raised.value).startswith(phrase), str(raised.value)


@pytest.mark.parametrize(
    "sizes",
    [
        dict(train_batch_size=np.int64(8)),
        dict(train_batch_size=8, eval_batch_size=0),
        dict(train_batch_size=2.5),
    ],
    ids=["numpy_int", "zero_eval_size", "float"],
)
def test_use_tpu_false_takes_batch_sizes_unchecked_as_2_15(tmp_path, sizes):
    # Off a TPU 2.15 checked no batch size: each reached input_fn as given.
    estimator = tpu.TPUEstimator(
        model_fn=_model_fn,
        config=tpu.RunConfig(model_dir=str(tmp_path)),
        use_tpu=False,
        **sizes,
    )
    seen = []

    class Seen(Exception):
        pass

    def input_fn(params):
        seen.append(params["batch_size"])
        raise Seen

    with pytest.raises(Seen):
        estimator.train(input_fn, max_steps=1)
    assert seen == [sizes["train_batch_size"]]
    assert type(seen[0]) is type(sizes["train_batch_size"])


def test_use_tpu_false_numpy_batch_size_reaches_input_fn_and_trains(tmp_path):
    seen = []

    def input_fn(params):
        seen.append(params["batch_size"])
        x = np.arange(32, dtype=np.float32).reshape(16, 2) / 16.0
        y = x.sum(axis=1, keepdims=True)
        return (
            tf.data.Dataset.from_tensor_slices((x, y))
            .repeat()
            .batch(params["batch_size"])
        )

    def model_fn(features, labels, mode, params):
        assert params["batch_size"] == 8
        weights = tf.compat.v1.get_variable(
            "w", [2, 1], initializer=tf.compat.v1.zeros_initializer()
        )
        loss = tf.compat.v1.losses.mean_squared_error(labels, features @ weights)
        train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
            loss, global_step=tf.compat.v1.train.get_global_step()
        )
        return tpu.TPUEstimatorSpec(mode, loss=loss, train_op=train_op)

    estimator = tpu.TPUEstimator(
        model_fn=model_fn,
        config=tpu.RunConfig(model_dir=str(tmp_path)),
        use_tpu=False,
        train_batch_size=np.int64(8),
    )
    estimator.train(input_fn, max_steps=2)
    assert seen and all(size == 8 for size in seen)
    assert estimator.get_variable_value("global_step") == 2


def test_model_fn_without_params_fails_when_called_as_2_15(tmp_path):
    # 2.15 built the estimator and raised when train() called model_fn.
    def model_fn(features, labels, mode):
        del features, labels, mode

    estimator = tpu.TPUEstimator(
        model_fn=model_fn,
        config=tpu.RunConfig(model_dir=str(tmp_path)),
        use_tpu=False,
        train_batch_size=16,
    )
    with pytest.raises(ValueError, match=r"^model_fn \(.*\) does not include params"):
        estimator.train(
            lambda params: tf.data.Dataset.from_tensors(([1.0], [1.0])), steps=1
        )


@pytest.mark.parametrize(
    "model_fn, phrase",
    [
        (lambda features, labels, invalid_arg: None, "has following not expected args"),
        (lambda labels, mode, params: None, "must include features argument"),
    ],
    ids=["unexpected_arg", "no_features"],
)
def test_model_fn_arguments_checked_when_built_as_2_15(tmp_path, model_fn, phrase):
    with pytest.raises(ValueError, match=rf"^model_fn \(.*\) {phrase}"):
        tpu.TPUEstimator(
            model_fn=model_fn,
            config=tpu.RunConfig(model_dir=str(tmp_path)),
            use_tpu=False,
            train_batch_size=16,
        )


class _HookOfItsOwn:
    """A hook not derived from this package's SessionRunHook (as TensorFlow's)."""

    def begin(self):
        pass

    def before_run(self, run_context):
        return None

    def after_run(self, run_context, run_values):
        pass


def test_spec_takes_hooks_of_other_session_run_hook_classes():
    # 2.15's tpu_estimator_test passes hooks derived from TensorFlow's
    # SessionRunHook as prediction_hooks and training_hooks.
    hook = _HookOfItsOwn()
    spec = tpu.TPUEstimatorSpec(
        "infer", predictions={"x": tf.constant([1.0])}, prediction_hooks=[hook]
    )
    assert spec.prediction_hooks == (hook,)


_OtherTPUConfig = collections.namedtuple("Other", tpu.TPUConfig._fields)


def _linear_model_fn(features, labels, mode, params):
    weight = tf.Variable(0.0)
    loss = tf.reduce_mean((weight * features["x"] - labels) ** 2)
    train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
        loss, global_step=tf.compat.v1.train.get_or_create_global_step()
    )
    return tpu.TPUEstimatorSpec(mode, loss=loss, train_op=train_op)


def _linear_input_fn(params):
    data = tf.data.Dataset.from_tensors(({"x": [1.0, 2.0, 3.0]}, [1.0, 1.0, 1.0]))
    return data.repeat()


@pytest.mark.parametrize(
    "tpu_config, kept",
    [(_OtherTPUConfig(*tpu.TPUConfig()), True), ({}, False)],
    ids=["its_fields_in_another_class", "empty_dict"],
)
def test_run_config_takes_any_tpu_config_and_trains_as_2_15(tmp_path, tpu_config, kept):
    # 2.15 kept any tpu_config as given (`tpu_config or TPUConfig()`), and a
    # TPUEstimator made with another class holding TPUConfig's fields
    # trained (global_step 2 after max_steps=2); an empty dict was replaced
    # by TPUConfig().
    config = tpu.RunConfig(tpu_config=tpu_config, model_dir=str(tmp_path))
    if kept:
        assert config.tpu_config is tpu_config
    else:
        assert type(config.tpu_config) is tpu.TPUConfig
    estimator = tpu.TPUEstimator(
        model_fn=_linear_model_fn, config=config, use_tpu=False, train_batch_size=4
    )
    estimator.train(_linear_input_fn, max_steps=2)
    assert estimator.get_variable_value("global_step") == 2


@pytest.mark.parametrize(
    "tpu_config, error, phrase",
    [
        # 2.15: AttributeError "'types.SimpleNamespace' object has no
        # attribute 'num_shards'" (2.15 named the class with its module).
        (
            types.SimpleNamespace(iterations_per_loop=3),
            AttributeError,
            "'SimpleNamespace' object has no attribute 'num_shards'",
        ),
        (
            "abc",
            AttributeError,
            "'str' object has no attribute 'iterations_per_loop'",
        ),
        # 2.15: ValueError "Invalid TPUConfig `iterations_per_loop` value. ..."
        (
            types.SimpleNamespace(iterations_per_loop=0),
            ValueError,
            "Invalid TPUConfig `iterations_per_loop` value",
        ),
    ],
    ids=["no_num_shards", "a_string", "bad_iterations"],
)
def test_tpu_estimator_reads_the_tpu_config_when_made_as_2_15(
    tmp_path, tpu_config, error, phrase
):
    # tpu.RunConfig took these; 2.15's TPUEstimator failed when made, reading
    # iterations_per_loop, then num_shards.
    config = tpu.RunConfig(tpu_config=tpu_config, model_dir=str(tmp_path))
    assert config.tpu_config is tpu_config
    with pytest.raises(error) as raised:
        tpu.TPUEstimator(model_fn=_model_fn, config=config, use_tpu=False)
    assert str(raised.value).startswith(phrase), str(raised.value)


_DistributeConfig = collections.namedtuple(
    "DistributeConfig", ["train_distribute", "eval_distribute", "remote_cluster"]
)
_REMOTE = {"chief": ["127.0.0.1:1"]}


@pytest.mark.parametrize("run_config", [ke.RunConfig, tpu.RunConfig], ids=["base", "tpu"])
@pytest.mark.parametrize("through", ["argument", "experimental_distribute"])
def test_remote_cluster_to_train_on_is_refused(run_config, through, monkeypatch):
    # 2.15 made such a config's cluster_spec {'chief': ['127.0.0.1:1']} and
    # trained as a standalone client of that cluster (its distribute
    # coordinator); nothing here can do that, so the config says so.
    monkeypatch.delenv("TF_CONFIG", raising=False)
    strategy = tf.distribute.OneDeviceStrategy("/cpu:0")
    if through == "argument":
        kwargs = dict(
            train_distribute=strategy,
            experimental_distribute=_DistributeConfig(None, None, _REMOTE),
        )
    else:
        kwargs = dict(experimental_distribute=_DistributeConfig(strategy, None, _REMOTE))
    with pytest.raises(ValueError, match=r"^experimental_distribute.remote_cluster="):
        run_config(**kwargs)


def test_remote_cluster_with_a_tf_config_cluster_raises_2_15s_phrase(monkeypatch):
    monkeypatch.setenv(
        "TF_CONFIG",
        json.dumps(
            {
                "cluster": {"chief": ["127.0.0.1:2"], "worker": ["127.0.0.1:3"]},
                "task": {"type": "chief", "index": 0},
            }
        ),
    )
    with pytest.raises(ValueError) as raised:
        ke.RunConfig(
            train_distribute=tf.distribute.OneDeviceStrategy("/cpu:0"),
            experimental_distribute=_DistributeConfig(None, None, _REMOTE),
        )
    # 2.15: ValueError 'Cannot set both "cluster_spec" of TF_CONFIG and
    # `experimental_distribute.remote_cluster`'
    assert str(raised.value).startswith(
        'Cannot set both "cluster_spec" of TF_CONFIG and '
        "`experimental_distribute.remote_cluster`"
    ), str(raised.value)


def test_remote_cluster_without_train_distribute_is_ignored_as_2_15(monkeypatch):
    # 2.15 used remote_cluster only with a train_distribute: cluster_spec {}.
    monkeypatch.delenv("TF_CONFIG", raising=False)
    config = ke.RunConfig(experimental_distribute=_DistributeConfig(None, None, _REMOTE))
    assert config.cluster_spec.as_dict() == {}
    assert config.train_distribute is None
