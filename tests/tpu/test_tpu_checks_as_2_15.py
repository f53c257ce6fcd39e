"""tpu.TPUConfig, tpu.RunConfig and TPUEstimator accept what tf.estimator 2.15 accepted
and raise its exception types with its messages' first phrases.

Every expectation here is what 2.15 (tensorflow-estimator 2.15.0 on TF 2.15.1)
returned or raised for the same call; its own tests (tpu/tpu_config_test.py,
tpu/tpu_estimator_test.py) match the same phrases.
"""

import json

import numpy as np
import pytest
import tensorflow as tf

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
