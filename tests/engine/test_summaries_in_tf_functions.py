"""A `tf.function` helper the model_fn calls, writing a `tf.summary`.

tf.estimator 2.15 built a graph per call, so such a helper traced anew in
each and its summaries stayed inside it (2.15 wrote none of them). Here the
helper's trace is TensorFlow's to reuse across the Estimator's steps, so a
summary recorded inside it must not capture one step's writer or flag:
`evaluate()` after `train()` stopped with "... is out of scope".
Figures: 2.15's (w = 0.8536 after three steps of 0.01 from 1; loss 0.33592969).
"""

from __future__ import annotations

import glob

import pytest
import tensorflow as tf

import keras_estimator as estimator


def _model_fn_using(helper):
    def model_fn(features, labels, mode):
        w = tf.compat.v1.get_variable(
            "w", [1, 1], initializer=tf.compat.v1.ones_initializer()
        )
        tf.summary.scalar(
            "plain_mean_x",
            tf.reduce_mean(features["x"]),
            step=tf.compat.v1.train.get_global_step(),
        )
        predictions = tf.matmul(helper(features["x"]), w)
        if mode == estimator.ModeKeys.PREDICT:
            return estimator.EstimatorSpec(mode, predictions=predictions)
        loss = tf.reduce_mean(tf.square(predictions - labels))
        train_op = tf.compat.v1.train.GradientDescentOptimizer(0.01).minimize(
            loss, tf.compat.v1.train.get_global_step()
        )
        return estimator.EstimatorSpec(
            mode, loss=loss, train_op=train_op, predictions=predictions
        )

    return model_fn


def _input_fn():
    return tf.data.Dataset.from_tensors(
        ({"x": [[1.0], [2.0]]}, [[1.0], [3.0]])
    ).repeat()


def _helper_with_step():
    @tf.function
    def doubled(x):
        tf.summary.scalar(
            "helper_mean_x",
            tf.reduce_mean(x),
            step=tf.compat.v1.train.get_global_step(),
        )
        return x * 2.0

    return doubled


def _helper_with_default_step():
    @tf.function
    def doubled(x):
        tf.summary.scalar("helper_mean_x", tf.reduce_mean(x))
        return x * 2.0

    return doubled


def _tags(model_dir):
    tags = set()
    for path in glob.glob(f"{model_dir}/events.out.tfevents.*"):
        for event in tf.compat.v1.train.summary_iterator(path):
            tags.update(value.tag for value in event.summary.value)
    return tags


@pytest.mark.parametrize("make_helper", [_helper_with_step, _helper_with_default_step])
@pytest.mark.parametrize(
    "every_step_hook", [False, True], ids=["default-hooks", "hook"]
)
def test_a_tf_function_helper_writing_summaries_runs_in_every_mode_and_estimator(
    tmp_path, make_helper, every_step_hook
):
    helper = make_helper()  # one helper, shared by both Estimators, as a module's
    results = []
    for index in range(2):
        model_dir = str(tmp_path / str(index))
        est = estimator.Estimator(
            _model_fn_using(helper),
            model_dir=model_dir,
            config=estimator.RunConfig(save_summary_steps=1),
        )
        hooks = (
            [estimator.LoggingTensorHook({"step": "global_step"}, every_n_iter=1)]
            if every_step_hook
            else []
        )
        est.train(_input_fn, steps=3, hooks=hooks)
        w = est.get_variable_value("w")[0][0]
        loss = est.evaluate(_input_fn, steps=1)["loss"]
        prediction = next(est.predict(_input_fn))
        results.append((w, loss, prediction[0]))
        tags = _tags(model_dir)
        assert "plain_mean_x" in tags and "loss" in tags
        assert "helper_mean_x" not in tags  # as 2.15, which wrote none
    for w, loss, prediction in results:
        assert w == pytest.approx(0.8536, abs=1e-6)
        assert loss == pytest.approx(0.33592969, abs=1e-6)
        assert prediction == pytest.approx(2 * 0.8536, abs=1e-5)
