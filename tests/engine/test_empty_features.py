"""An input_fn giving no features (`({}, None)`, `{}`) or no labels (`(features, None)`).

tf.estimator 2.15 ran a model_fn that ignores its features on these in
train, evaluate and predict; the expected numbers are 2.15's, from the same
model_fn and input_fns run in tensorflow-estimator 2.15.0: w starts at 3.0
and three SGD steps (learning rate 0.1) on (w - 1)^2 leave 2.024.
"""

import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as ke


def _model_fn(features, labels, mode):
    del features, labels
    w = tf.compat.v1.get_variable("w", initializer=3.0)
    loss = tf.square(w - 1.0)
    step = tf.compat.v1.train.get_or_create_global_step()
    train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
        loss, global_step=step
    )
    return ke.EstimatorSpec(
        mode,
        loss=loss,
        train_op=train_op,
        predictions={"w": tf.reshape(w, [1])},
        eval_metric_ops={"m": tf.compat.v1.metrics.mean(w)},
    )


@pytest.mark.parametrize(
    "input_fn",
    [
        lambda: ({}, None),
        lambda: {},
        lambda: ({"x": tf.constant([1.0])}, None),
    ],
    ids=["empty_dict_and_none", "empty_dict", "features_and_none"],
)
def test_input_fn_without_features_or_labels_runs_as_in_2_15(tmp_path, input_fn):
    estimator = ke.Estimator(_model_fn, model_dir=str(tmp_path))
    estimator.train(input_fn, steps=3)
    # 2.15: get_variable_value('w') == 2.024 (float32).
    assert estimator.get_variable_value("w") == np.float32(2.024)
    # 2.15: {'loss': 1.0485759, 'm': 2.024, 'global_step': 3}.
    metrics = estimator.evaluate(input_fn, steps=2)
    assert np.float32(metrics["loss"]) == np.float32(1.0485759)
    assert np.float32(metrics["m"]) == np.float32(2.024)
    assert metrics["global_step"] == 3
    # 2.15: the same tensors feed predict forever; [{'w': 2.024}, {'w': 2.024}].
    predictions = estimator.predict(input_fn)
    assert [next(predictions)["w"] for _ in range(2)] == [np.float32(2.024)] * 2


def test_model_fn_receives_an_empty_features_dict(tmp_path):
    seen = []

    def model_fn(features, labels, mode):
        seen.append((features, labels))
        return _model_fn(features, labels, mode)

    estimator = ke.Estimator(model_fn, model_dir=str(tmp_path))
    estimator.train(lambda: ({}, None), steps=1)
    assert seen and all(features == {} and labels is None for features, labels in seen)
