"""Features as a tuple or list of tensors reach model_fn as tf.estimator 2.15 passed them.

2.15 took `((x1, x2), labels)` from input_fn and handed `(x1, x2)` to the
model_fn: a multi-input Keras model through model_to_estimator takes them in
its inputs' order, and a model_fn may unpack them itself.
"""

import logging

import keras
import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as ke
from keras_estimator.compat import layers

RNG = np.random.default_rng(0)
X1 = RNG.normal(size=(24, 3)).astype("float32")
X2 = RNG.normal(size=(24, 3)).astype("float32")
Y = (X1[:, 0] - 2 * X2[:, 1] > 0).astype("float32")[:, None]


def tuple_input_fn():
    return tf.data.Dataset.from_tensor_slices(((X1, X2), Y)).batch(8)


def two_input_model():
    a = keras.Input((3,), name="a")
    b = keras.Input((3,), name="b")
    # Same shapes, different weights per input: swapped inputs change the loss.
    joined = keras.layers.Add()([keras.layers.Dense(1)(a), keras.layers.Dense(1)(b)])
    model = keras.Model([a, b], keras.layers.Activation("sigmoid")(joined))
    model.compile("sgd", "binary_crossentropy")
    return model


def test_a_multi_input_keras_model_takes_tuple_features_in_its_inputs_order(tmp_path):
    keras.utils.set_random_seed(1)
    model = two_input_model()
    expected = model.evaluate([X1, X2], Y, batch_size=8, verbose=0)
    swapped = model.evaluate([X2, X1], Y, batch_size=8, verbose=0)
    assert abs(expected - swapped) > 1e-3
    est = ke.model_to_estimator(keras_model=model, model_dir=str(tmp_path))
    result = est.evaluate(tuple_input_fn)
    np.testing.assert_allclose(result["loss"], expected, rtol=1e-5)
    est.train(tuple_input_fn, steps=3)
    assert est.get_variable_value("global_step") == 3
    predictions = list(est.predict(tuple_input_fn))
    assert len(predictions) == len(Y)


def unpacking_model_fn(features, labels, mode):
    first, second = features
    logits = layers.dense(first, 1, name="first") - layers.dense(second, 1, name="second")
    if mode == ke.ModeKeys.PREDICT:
        return ke.EstimatorSpec(mode, predictions={"logits": logits})
    loss = tf.compat.v1.losses.sigmoid_cross_entropy(labels, logits)
    train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
        loss, global_step=tf.compat.v1.train.get_global_step()
    )
    return ke.EstimatorSpec(mode, loss=loss, train_op=train_op)


def _expected_logits(est, x1, x2):
    def dense(name, x):
        kernel = est.get_variable_value(f"{name}/kernel")
        return x @ kernel + est.get_variable_value(f"{name}/bias")

    return dense("first", x1) - dense("second", x2)


def test_a_model_fn_unpacks_tuple_features_from_a_dataset(tmp_path):
    est = ke.Estimator(unpacking_model_fn, model_dir=str(tmp_path))
    est.train(tuple_input_fn, steps=3)
    logits = _expected_logits(est, X1, X2)
    predicted = np.array([p["logits"] for p in est.predict(tuple_input_fn)])
    np.testing.assert_allclose(predicted, logits, rtol=1e-4, atol=1e-5)


def test_an_input_fn_may_return_a_list_of_tensors_as_features(tmp_path):
    def list_input_fn():
        return [tf.constant(X1), tf.constant(X2)], tf.constant(Y)

    est = ke.Estimator(unpacking_model_fn, model_dir=str(tmp_path))
    est.train(list_input_fn, steps=2)
    logits = _expected_logits(est, X1, X2)
    labels = Y
    per_example = np.maximum(logits, 0) - logits * labels + np.log1p(np.exp(-np.abs(logits)))
    result = est.evaluate(list_input_fn, steps=1)
    np.testing.assert_allclose(result["loss"], per_example.mean(), rtol=1e-4)


class _Warnings(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


@pytest.fixture
def warning_lines():
    """WARNING lines, as a handler on TensorFlow's logger gets them."""
    tf_logger = logging.getLogger("tensorflow")
    saved_level = tf_logger.level
    recorder = _Warnings()
    tf_logger.addHandler(recorder)
    tf_logger.setLevel(logging.WARNING)  # conftest sets ERROR
    yield recorder.lines
    tf_logger.removeHandler(recorder)
    tf_logger.setLevel(saved_level)


def test_predict_on_tensors_warns_that_it_yields_forever_as_2_15_did(tmp_path, warning_lines):
    # tf.estimator 2.15 warned when predict's input_fn returned tensors (or
    # arrays) rather than a dataset or an iterator's elements: they repeat.
    def model_fn(features, labels, mode):
        step = tf.compat.v1.train.get_or_create_global_step()
        return ke.EstimatorSpec(
            mode,
            loss=tf.constant(0.0),
            train_op=step.assign_add(1),
            predictions=tf.constant([[10.0]]),
        )

    def tensors():
        return {"x": tf.constant([[1.0]])}, tf.constant([[1.0]])

    def dataset():
        return tf.data.Dataset.from_tensors(tensors())

    est = ke.Estimator(model_fn, str(tmp_path))
    est.train(tensors, steps=1)
    est.evaluate(tensors, steps=1)
    assert not [line for line in warning_lines if "QueueRunner" in line]
    list(est.predict(dataset))
    assert not [line for line in warning_lines if "QueueRunner" in line]
    predictions = est.predict(tensors)
    assert [next(predictions) for _ in range(3)] == [10.0] * 3
    assert warning_lines.count(
        "Input graph does not use tf.data.Dataset or contain a QueueRunner. That "
        "means predict yields forever. This is probably a mistake."
    ) == 1


def test_python_values_an_input_fn_returns_reach_model_fn_as_tensors(tmp_path):
    """tf.estimator 2.15 handed the model_fn what the input_fn returned, as
    given: a dict of Python lists stayed lists (reference venv, train,
    evaluate and predict). Here they are the tensors of those values, with
    the same contents; a model_fn that only passes them to TensorFlow ops
    computes the same."""
    seen = {}

    def input_fn():
        return {"x": [[1.0], [2.0]]}, [[1], [0]]

    def model_fn(features, labels, mode):
        seen[mode] = (features["x"], labels)
        loss = tf.reduce_sum(features["x"]) * 0.0
        step = tf.compat.v1.train.get_global_step()
        return ke.EstimatorSpec(
            mode,
            loss=loss,
            train_op=tf.compat.v1.assign_add(step, 1),
            predictions={"x": features["x"]},
        )

    est = ke.Estimator(model_fn, model_dir=str(tmp_path))
    est.train(input_fn, steps=1)
    features, labels = seen[ke.ModeKeys.TRAIN]
    assert isinstance(features, tf.Tensor) and isinstance(labels, tf.Tensor)
    assert (features.dtype, labels.dtype) == (tf.float32, tf.int32)
    prediction = next(est.predict(lambda: {"x": [[1.0], [2.0]]}))
    np.testing.assert_array_equal(prediction["x"], [1.0])


# The same values as 2.15's reference venv gave for `numpy_model_fn` below,
# trained 2 steps then evaluated on one batch (zeros initial weights).
_XN = np.arange(12, dtype="float32").reshape(4, 3) / 10
_YN = np.arange(4, dtype="float32").reshape(4, 1)


def numpy_model_fn(features, labels, mode):
    w = tf.compat.v1.get_variable("w", [3, 1], initializer=tf.compat.v1.zeros_initializer())
    parts = list(features) if isinstance(features, (tuple, list)) else [features]
    prediction = sum(tf.matmul(tf.cast(x, tf.float32), w) for x in parts)
    loss = tf.reduce_mean(tf.square(prediction - labels))
    train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
        loss, tf.compat.v1.train.get_global_step()
    )
    return ke.EstimatorSpec(mode, loss=loss, predictions=prediction, train_op=train_op)


@pytest.mark.parametrize(
    ("features", "loss_2_15"),
    [
        (_XN, 1.1198818683624268),
        ([_XN, 2 * _XN], 8.973007202148438),
        ((_XN, 2 * _XN), 8.973007202148438),
    ],
    ids=["array", "list", "tuple"],
)
def test_numpy_arrays_an_input_fn_returns_are_features_as_in_2_15(tmp_path, features, loss_2_15):
    est = ke.Estimator(numpy_model_fn, model_dir=str(tmp_path))
    est.train(lambda: (features, _YN), steps=2)
    loss = est.evaluate(lambda: (features, _YN), steps=1)["loss"]
    np.testing.assert_allclose(loss, loss_2_15, rtol=1e-6)


def test_a_multi_output_keras_model_takes_lists_of_arrays(tmp_path):
    """tf.estimator 2.15's keras_test: input_fn returning ([x1, x2], [y1, y2]) as arrays."""
    keras.utils.set_random_seed(2)
    a = keras.Input((3,), name="a")
    b = keras.Input((3,), name="b")
    joined = keras.layers.concatenate([a, b])
    value = keras.layers.Dense(1, name="value")(joined)
    kind = keras.layers.Dense(2, activation="softmax", name="kind")(joined)
    model = keras.Model([a, b], [value, kind])
    model.compile("sgd", ["mse", "sparse_categorical_crossentropy"])
    kinds = (X1[:, :1] > 0).astype("int64")

    def input_fn():
        return [X1, X2], [Y, kinds]

    expected = model.evaluate([X1, X2], [Y, kinds], batch_size=24, verbose=0)[0]
    est = ke.model_to_estimator(keras_model=model, model_dir=str(tmp_path))
    before = est.evaluate(input_fn, steps=1)["loss"]
    np.testing.assert_allclose(before, expected, rtol=1e-5)
    est.train(input_fn, steps=5)
    assert est.evaluate(input_fn, steps=1)["loss"] < before
