"""A Python value the model_fn reads, changed between calls, takes effect as in 2.15.

tf.estimator 2.15 called the model_fn on every `train()`, `evaluate()` and
`predict()` call, so a program that changed a learning rate in a global, a
flag or a closure between calls trained on with the new one. Figures from
tf.estimator 2.15 (reference venv): one gradient-descent step from w = 0 on
x = [1, 2], y = [1, 2] gives w = 0.1 * 5 = 0.5; a second call after
`LEARNING_RATE = 0.0` keeps w = 0.5 (a trace kept from the first call gave
0.75), and predictions after `SCALE = 10.0` are 10 * w * x.
"""

from __future__ import annotations

import argparse
import tempfile

import numpy as np
import tensorflow as tf
from hypothesis import given
from hypothesis import strategies as st

import keras_estimator as ke
from keras_estimator.compat.estimator import tpu

X = np.float32([1.0, 2.0])
Y = np.float32([1.0, 2.0])
LEARNING_RATE = 0.1
SCALE = 1.0
ARGS = argparse.Namespace(learning_rate=0.1)


def input_fn():
    return tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).batch(2).repeat()


def predict_input_fn():
    return tf.data.Dataset.from_tensor_slices({"x": X}).batch(2)


def linear_spec(features, labels, mode, learning_rate, scale=1.0):
    w = tf.compat.v1.get_variable("w", [], initializer=tf.compat.v1.zeros_initializer())
    prediction = features["x"] * w
    if mode == ke.ModeKeys.PREDICT:
        return ke.EstimatorSpec(mode, predictions={"y": prediction * scale})
    loss = tf.reduce_mean(tf.square(prediction - labels))
    optimizer = tf.compat.v1.train.GradientDescentOptimizer(learning_rate)
    train_op = optimizer.minimize(
        loss, global_step=tf.compat.v1.train.get_global_step()
    )
    return ke.EstimatorSpec(mode, loss=loss, train_op=train_op)


def global_model_fn(features, labels, mode):
    return linear_spec(features, labels, mode, LEARNING_RATE, SCALE)


def test_a_global_changed_between_train_calls_takes_effect(tmp_path):
    global LEARNING_RATE
    est = ke.Estimator(global_model_fn, str(tmp_path))
    try:
        est.train(input_fn, steps=1)
        assert est.get_variable_value("w") == np.float32(0.5)
        LEARNING_RATE = 0.0
        est.train(input_fn, steps=1)
        # 2.15: 0.5; the first call's trace would have given 0.75.
        assert est.get_variable_value("w") == np.float32(0.5)
        assert est.get_variable_value("global_step") == 2
    finally:
        LEARNING_RATE = 0.1


def test_a_global_changed_before_predict_takes_effect(tmp_path):
    global SCALE
    est = ke.Estimator(global_model_fn, str(tmp_path))
    try:
        est.train(input_fn, steps=1)
        first = [p["y"] for p in est.predict(predict_input_fn)]
        np.testing.assert_allclose(first, [0.5, 1.0])
        SCALE = 10.0
        second = [p["y"] for p in est.predict(predict_input_fn)]
        np.testing.assert_allclose(second, [5.0, 10.0])
    finally:
        SCALE = 1.0


def test_an_attribute_of_a_namespace_the_model_fn_names_takes_effect(tmp_path):
    def model_fn(features, labels, mode):
        return linear_spec(features, labels, mode, ARGS.learning_rate)

    est = ke.Estimator(model_fn, str(tmp_path))
    try:
        est.train(input_fn, steps=1)
        ARGS.learning_rate = 0.0
        est.train(input_fn, steps=1)
        assert est.get_variable_value("w") == np.float32(0.5)
    finally:
        ARGS.learning_rate = 0.1


def test_a_closure_dict_and_a_model_fn_objects_attribute_take_effect(tmp_path):
    settings = {"learning_rate": 0.1}

    def model_fn(features, labels, mode):
        return linear_spec(features, labels, mode, settings["learning_rate"])

    est = ke.Estimator(model_fn, str(tmp_path / "closure"))
    est.train(input_fn, steps=1)
    settings["learning_rate"] = 0.0
    est.train(input_fn, steps=1)
    assert est.get_variable_value("w") == np.float32(0.5)

    class Trainer:
        def __init__(self):
            self.learning_rate = 0.1

        def model_fn(self, features, labels, mode):
            return linear_spec(features, labels, mode, self.learning_rate)

    trainer = Trainer()
    est = ke.Estimator(trainer.model_fn, str(tmp_path / "method"))
    est.train(input_fn, steps=1)
    trainer.learning_rate = 0.0
    est.train(input_fn, steps=1)
    assert est.get_variable_value("w") == np.float32(0.5)


def test_unchanged_values_reuse_the_trace(tmp_path):
    calls = []

    def model_fn(features, labels, mode):
        calls.append(mode)
        return linear_spec(features, labels, mode, ARGS.learning_rate)

    est = ke.Estimator(model_fn, str(tmp_path))
    est.train(input_fn, steps=1)
    est.train(input_fn, steps=1)
    assert calls == ["train"]
    # 2.15's two steps at 0.1: 0.5, then 0.5 + 0.1 * 2.5.
    assert est.get_variable_value("w") == np.float32(0.75)


@given(st.lists(st.sampled_from([0.0, 0.05, 0.2]), min_size=2, max_size=2))
def test_each_call_trains_with_the_learning_rate_set_before_it(rates):
    # 2.15's rule: each train() call's steps use the rate set before the call.
    w_expected = np.float32(0.0)
    with tempfile.TemporaryDirectory() as model_dir:
        settings = {"learning_rate": 0.0}

        def model_fn(features, labels, mode):
            return linear_spec(features, labels, mode, settings["learning_rate"])

        est = ke.Estimator(model_fn, model_dir)
        for rate in rates:
            settings["learning_rate"] = rate
            est.train(input_fn, steps=1)
            gradient = np.mean(2 * X * (X * w_expected - Y), dtype=np.float32)
            w_expected = np.float32(w_expected - np.float32(rate) * gradient)
            np.testing.assert_allclose(
                est.get_variable_value("w"), w_expected, rtol=1e-6
            )


def test_a_tpu_estimators_model_fn_is_watched_too(tmp_path):
    global LEARNING_RATE

    def model_fn(features, labels, mode, params):
        return linear_spec(features, labels, mode, LEARNING_RATE)

    def tpu_input_fn(params):
        return input_fn()

    est = tpu.TPUEstimator(
        model_fn=model_fn,
        model_dir=str(tmp_path),
        config=tpu.RunConfig(),
        use_tpu=False,
        train_batch_size=2,
    )
    try:
        est.train(tpu_input_fn, steps=1)
        LEARNING_RATE = 0.0
        est.train(tpu_input_fn, steps=1)
        assert est.get_variable_value("w") == np.float32(0.5)
    finally:
        LEARNING_RATE = 0.1


class _Unreadable:
    """An object whose attributes raise when read (as some lazy proxies do)."""

    def __getattribute__(self, name):
        raise RuntimeError(f"cannot read {name}")


UNREADABLE = _Unreadable()


def test_a_value_that_cannot_be_looked_into_does_not_stop_training(tmp_path):
    def model_fn(features, labels, mode):
        assert UNREADABLE is not None
        return linear_spec(features, labels, mode, LEARNING_RATE)

    est = ke.Estimator(model_fn, str(tmp_path))
    est.train(input_fn, steps=1)
    est.train(input_fn, steps=1)
    assert est.get_variable_value("w") == np.float32(0.75)
