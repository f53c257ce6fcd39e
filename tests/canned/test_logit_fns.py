"""The experimental logit-fn API: the premade networks inside a custom model_fn."""

import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as ke
from keras_estimator.compat.estimator import experimental as v1_experimental

COLUMNS = [tf.feature_column.numeric_column("x", shape=[4])]


def _data():
    rng = np.random.RandomState(0)
    x = rng.normal(size=(60, 4)).astype(np.float32)
    y = (x[:, 0] + x[:, 1] > 0).astype(np.int64) + (x[:, 2] > 0.5).astype(np.int64)
    return x, y


def _train_input():
    x, y = _data()
    return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).batch(20).repeat()


def _predict_input():
    x, _ = _data()
    return tf.data.Dataset.from_tensor_slices({"x": x}).batch(20)


def _logits(estimator):
    return np.stack([p["logits"] for p in estimator.predict(_predict_input)])


def _model_fn(logit_fn, scope=None):
    head = ke.MultiClassHead(3)

    def model_fn(features, labels, mode, config):
        if scope:
            with tf.compat.v1.variable_scope(scope):
                logits = ke.experimental.call_logit_fn(logit_fn, features, mode, None, config)
        else:
            logits = ke.experimental.call_logit_fn(logit_fn, features, mode, None, config)
        return head.create_estimator_spec(
            features,
            mode,
            logits,
            labels=labels,
            train_op_fn=lambda loss: tf.no_op(),
        )

    return model_fn


def test_dnn_logit_fn_reads_a_dnn_classifiers_model_dir(tmp_path):
    premade = ke.DNNClassifier(
        hidden_units=[8, 4], feature_columns=COLUMNS, n_classes=3, model_dir=str(tmp_path)
    )
    premade.train(_train_input, steps=30)
    logit_fn = v1_experimental.dnn_logit_fn_builder(
        units=3,
        hidden_units=[8, 4],
        feature_columns=COLUMNS,
        activation_fn=tf.nn.relu,
        dropout=None,
        input_layer_partitioner=None,
        batch_norm=False,
    )
    custom = ke.Estimator(_model_fn(logit_fn), model_dir=str(tmp_path))
    np.testing.assert_allclose(_logits(custom), _logits(premade), rtol=1e-6)


def test_linear_logit_fn_reads_a_linear_classifiers_model_dir(tmp_path):
    premade = ke.LinearClassifier(feature_columns=COLUMNS, n_classes=3, model_dir=str(tmp_path))
    premade.train(_train_input, steps=30)
    logit_fn = v1_experimental.linear_logit_fn_builder(units=3, feature_columns=COLUMNS)
    custom = ke.Estimator(_model_fn(logit_fn, scope="linear"), model_dir=str(tmp_path))
    np.testing.assert_allclose(_logits(custom), _logits(premade), rtol=1e-6)
    assert np.abs(_logits(premade)).max() > 0  # trained, not the zero start


def test_call_logit_fn_passes_only_the_arguments_declared():
    seen = {}

    def logit_fn(features, params):
        seen.update(features=features, params=params)
        return tf.constant([[1.0]])

    out = ke.experimental.call_logit_fn(logit_fn, {"x": 1}, "train", {"p": 2}, "config")
    assert out.numpy().tolist() == [[1.0]]
    assert seen == {"features": {"x": 1}, "params": {"p": 2}}
    logits = {"a": tf.constant([1.0])}
    assert ke.experimental.call_logit_fn(lambda features: logits, {}, "train", None, None) is logits


@pytest.mark.parametrize("result", [[1.0], {"a": [1.0]}, {1: tf.constant(1.0)}, None])
def test_call_logit_fn_refuses_what_is_not_logits(result):
    # 2.15's first phrase, which its own model_fn_test matches.
    with pytest.raises(
        ValueError,
        match="^logit_fn should return a Tensor or a dictionary mapping strings to Tensors",
    ):
        ke.experimental.call_logit_fn(lambda features: result, {}, "train", None, None)


@pytest.mark.parametrize("units", [0, -1, 2.0, True, "3"])
def test_builders_refuse_bad_units(units):
    with pytest.raises(ValueError, match="units must be a positive int"):
        v1_experimental.linear_logit_fn_builder(units, COLUMNS)
    with pytest.raises(ValueError, match="units must be a positive int"):
        v1_experimental.dnn_logit_fn_builder(units, [4], COLUMNS, tf.nn.relu, None, None, False)
