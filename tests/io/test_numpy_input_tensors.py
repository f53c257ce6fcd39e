"""numpy_input_fn and pandas_input_fn give tensors where tf.estimator 2.15's did.

2.15's input_fns returned `(features, target)` tensors read from a queue: a
program running them in its own graph and session got one batch per run
and OutOfRangeError after the last epoch (2.15's own numpy_io_test and
pandas_io_test), and an input_fn could call one and add to its tensors.
Here they returned a `tf.data.Dataset` everywhere, which a session cannot
run and `features, labels = ...` cannot unpack. 2.15's results of the same
recipes were recorded by
`tests/fixtures/make_tf215_numpy_input_tensors_fixture.py`.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as ke
from keras_estimator.compat.estimator import inputs
from tests.fixtures import make_tf215_numpy_input_tensors_fixture as recipe

EXPECTED = json.loads(recipe.OUT.read_text())

pd = pytest.importorskip("pandas")


@pytest.mark.parametrize("case", sorted(EXPECTED["session_batches"]))
def test_a_session_reads_2_15s_batches_then_out_of_range(case):
    """E.g. 5 rows in batches of 2: [0, 1], [2, 3], [4], then OutOfRangeError;
    two epochs of 5 rows in batches of 3 cross the epoch; zero epochs give
    OutOfRangeError at once (refused before: num_epochs must be positive)."""
    ours = recipe.session_batches(tf, {case: recipe.input_fns(tf, inputs)[case]})[case]
    assert ours == EXPECTED["session_batches"][case]


def test_the_tensors_of_an_input_fn_calling_numpy_input_fn_train_evaluate_and_predict(tmp_path):
    """An input_fn adding x2 = 2x to numpy_input_fn's tensors: one epoch
    trains 4 steps to 2.15's w [0.4997309, 0.8994618], evaluates to its loss
    18.757565 and mean_x2 8.0, and predicts its 3 values."""
    ours = recipe.record_estimator(tf, ke, inputs, str(tmp_path))
    expected = EXPECTED["estimator"]
    assert ours["trained"]["global_step"] == expected["trained"]["global_step"] == 4
    np.testing.assert_allclose(ours["trained"]["w"], expected["trained"]["w"], rtol=1e-6)
    assert sorted(ours["evaluation"]) == sorted(expected["evaluation"])
    for key, value in expected["evaluation"].items():
        np.testing.assert_allclose(ours["evaluation"][key], value, rtol=1e-6, err_msg=key)
    np.testing.assert_allclose(ours["predictions"], expected["predictions"], rtol=1e-6)


def test_called_by_the_estimator_or_eagerly_it_is_a_dataset():
    input_fn = inputs.numpy_input_fn({"a": np.arange(3)}, shuffle=False, batch_size=2)
    assert isinstance(input_fn(), tf.data.Dataset)
    assert isinstance(input_fn(config=ke.RunConfig()), tf.data.Dataset)

    kinds = []

    @tf.function
    def traced():
        kinds.append(type(input_fn()))
        return tf.constant(0)

    traced()
    assert issubclass(kinds[0], tf.data.Dataset)


def test_zero_epochs_train_no_step_and_predict_nothing(tmp_path):
    """2.15 took num_epochs=0: train() ran no step, predict() yielded nothing."""

    def model_fn(features, labels, mode):
        w = tf.compat.v1.get_variable("w", [], initializer=tf.compat.v1.zeros_initializer())
        predictions = w * features["a"]
        if mode == ke.ModeKeys.PREDICT:
            return ke.EstimatorSpec(mode, predictions={"y": predictions})
        loss = tf.reduce_mean(tf.square(predictions - labels))
        train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
            loss, global_step=tf.compat.v1.train.get_global_step()
        )
        return ke.EstimatorSpec(mode, loss=loss, train_op=train_op)

    x = {"a": np.arange(4, dtype=np.float32)}
    est = ke.Estimator(model_fn, str(tmp_path))
    est.train(inputs.numpy_input_fn(x, x["a"], shuffle=False, num_epochs=0), steps=5)
    assert est.get_variable_value("global_step") == 0
    assert list(est.predict(inputs.numpy_input_fn(x, shuffle=False, num_epochs=0))) == []


@pytest.mark.parametrize(
    ("arguments", "error", "first_words"),
    [
        ({"shuffle": None}, ValueError, "shuffle must be provided and explicitly set as boolean"),
        ({"x": [1.0, 2.0]}, TypeError, "x must be a dict or array"),
        ({"y": {}}, ValueError, "y cannot be empty dict"),
        ({"num_epochs": -1}, ValueError, "num_epochs must be a non-negative integer"),
    ],
)
def test_numpy_input_fn_refuses_with_2_15s_first_words(arguments, error, first_words):
    with pytest.raises(error, match=f"^{first_words}"):
        inputs.numpy_input_fn(**{"x": {"a": np.arange(3)}, "shuffle": False, **arguments})()


def test_pandas_input_fn_refuses_a_target_column_not_a_string_with_2_15s_words():
    frame = pd.DataFrame({"a": np.arange(3)})
    with pytest.raises(TypeError, match="^target_column must be a string type"):
        inputs.pandas_input_fn(frame, pd.Series(np.arange(3)), target_column=["a"], shuffle=False)
