"""Variables a hook makes in begin(), and updates it fetches, as in tf.estimator 2.15.

2.15 built a new graph per train/evaluate/predict call, so a hook's
`tf.compat.v1.get_variable` in `begin()` was made again in each call, and
`session.run(v.assign_add(1.0))` ran the update and returned the value after
it. The expected values below are 2.15's, from its reference venv, with the
same model_fn, data and hooks.
"""

import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as ke

X = np.arange(12, dtype="float32").reshape(4, 3) / 10
Y = np.arange(4, dtype="float32").reshape(4, 1)


def input_fn():
    return tf.data.Dataset.from_tensors((X, Y)).repeat()


def model_fn(features, labels, mode):
    w = tf.compat.v1.get_variable("w", [3, 1], initializer=tf.compat.v1.zeros_initializer())
    prediction = tf.matmul(features, w)
    loss = tf.reduce_mean(tf.square(prediction - labels))
    train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
        loss, tf.compat.v1.train.get_global_step()
    )
    return ke.EstimatorSpec(mode, loss=loss, predictions=prediction, train_op=train_op)


class MakesAVariable(tf.compat.v1.train.SessionRunHook):
    """tf.estimator 2.15's keras_test MyHook: a variable made in begin()."""

    def begin(self):
        tf.compat.v1.get_variable("temp", [1])


class CountsItsRuns(tf.compat.v1.train.SessionRunHook):
    def begin(self):
        self.count = tf.compat.v1.get_variable(
            "runs", [], initializer=tf.compat.v1.zeros_initializer()
        )
        self.update = self.count.assign_add(1.0)
        self.seen = []

    def before_run(self, run_context):
        return tf.compat.v1.train.SessionRunArgs(self.update)

    def after_run(self, run_context, run_values):
        self.seen.append(float(run_values.results))


def test_a_hook_making_a_variable_in_begin_runs_in_every_call(tmp_path):
    est = ke.Estimator(model_fn, model_dir=str(tmp_path))
    est.train(input_fn, steps=2, hooks=[MakesAVariable()])
    # It was refused here: "Variable temp already exists, disallowed".
    est.train(input_fn, steps=2, hooks=[MakesAVariable()])
    result = est.evaluate(input_fn, steps=1, hooks=[MakesAVariable()])
    assert result["global_step"] == 4
    np.testing.assert_allclose(result["loss"], 0.3744107, rtol=1e-6)  # 2.15's


def test_two_hooks_making_one_name_in_one_call_are_refused_as_in_2_15(tmp_path):
    est = ke.Estimator(model_fn, model_dir=str(tmp_path))
    with pytest.raises(ValueError, match="temp already exists"):
        est.train(input_fn, steps=1, hooks=[MakesAVariable(), MakesAVariable()])


def test_a_fetched_update_runs_and_gives_the_value_after_it(tmp_path):
    est = ke.Estimator(model_fn, model_dir=str(tmp_path))
    first, second = CountsItsRuns(), CountsItsRuns()
    est.train(input_fn, steps=3, hooks=[first])
    est.train(input_fn, steps=3, hooks=[second])
    # 2.15: 1, 2, 3 then, the variable restored, 4, 5, 6. It read 0.0 here.
    assert first.seen == [1.0, 2.0, 3.0]
    assert second.seen == [4.0, 5.0, 6.0]


class ReadsItsVariable(tf.compat.v1.train.SessionRunHook):
    def begin(self):
        self.variable = tf.compat.v1.get_variable(
            "temp", [1], initializer=tf.compat.v1.ones_initializer()
        )

    def after_create_session(self, session, coord):
        self.read = session.run(self.variable)


@pytest.mark.parametrize("mode", ["train", "evaluate"])
def test_session_run_of_a_variable_in_after_create_session(tmp_path, mode):
    est = ke.Estimator(model_fn, model_dir=str(tmp_path))
    est.train(input_fn, steps=1)
    hook = ReadsItsVariable()
    if mode == "train":
        est.train(input_fn, steps=1, hooks=[hook])
    else:
        est.evaluate(input_fn, steps=1, hooks=[hook])
    # 2.15 read [1.]; here it raised (no batch read yet in training, no
    # session at all in evaluation).
    np.testing.assert_array_equal(hook.read, [1.0])
