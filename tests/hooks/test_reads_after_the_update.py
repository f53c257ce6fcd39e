"""What a hook fetching a variable read built after `minimize` sees, as in tf.estimator 2.15.

In a TF1 session a read with no dependency on the train op (`tf.identity(w)`
built after `minimize`, as TensorFlow's logging-hook migration guide logs a
layer's weights) was unordered against the update and ran before it: the
hook saw the value the step started from, and 2.15's LoggingTensorHook
logged the initial bias at the first step. A read under
`tf.control_dependencies([train_op])` saw the value after it. Here the
traced step orders reads after writes, and hooks saw every such read after
the update; so did a hook fetching the variable object. The figures are
2.15's for this program (reference venv): gradient descent at 0.1 from
w = 1, b = 0.
"""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as estimator

BEFORE_W = [1.0, 1.3, 1.39, 1.414, 1.4173]
BEFORE_B = [0.0, 0.2, 0.27, 0.299, 0.315]
AFTER_W = [1.3, 1.39, 1.414, 1.4173, 1.41415]


class _Fetch(estimator.SessionRunHook):
    def __init__(self, tensors):
        self.tensors, self.seen = tensors, []

    def before_run(self, run_context):
        return estimator.SessionRunArgs(self.tensors)

    def after_run(self, run_context, run_values):
        self.seen.append(
            {k: float(np.ravel(v)[0]) for k, v in run_values.results.items()}
        )


def _model_fn(hooks):
    def model_fn(features, labels, mode):
        w = tf.compat.v1.get_variable(
            "w", [1, 1], initializer=tf.compat.v1.ones_initializer()
        )
        b = tf.compat.v1.get_variable(
            "b", [1], initializer=tf.compat.v1.zeros_initializer()
        )
        loss = tf.reduce_mean(tf.square(tf.matmul(features["x"], w) + b - labels))
        train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
            loss, tf.compat.v1.train.get_global_step()
        )
        w_late = tf.identity(w, name="w_late")
        b_late = tf.identity(b, name="b_late")
        with tf.control_dependencies([train_op]):
            w_after = tf.identity(w, name="w_after")
        hook = _Fetch(
            {
                "w_late": w_late,
                "b_late": b_late,
                "w_after": w_after,
                "w_var": w,
                "b_var": b,
            }
        )
        hooks.append(hook)
        return estimator.EstimatorSpec(
            mode, loss=loss, train_op=train_op, training_hooks=[hook]
        )

    return model_fn


def _input_fn():
    return tf.data.Dataset.from_tensors(
        ({"x": [[1.0], [2.0]]}, [[2.0], [3.0]])
    ).repeat()


def _column(seen, key):
    return [step[key] for step in seen]


def test_a_read_built_after_minimize_is_fetched_as_the_step_started(tmp_path):
    hooks = []
    est = estimator.Estimator(_model_fn(hooks), model_dir=str(tmp_path))
    est.train(_input_fn, steps=3)
    by_name = _Fetch({"w_late": "w_late:0", "b_late": "b_late:0"})
    est.train(_input_fn, steps=2, hooks=[by_name])
    seen = [step for hook in hooks for step in hook.seen]
    assert _column(seen, "w_late") == pytest.approx(BEFORE_W, abs=1e-6)
    assert _column(seen, "b_late") == pytest.approx(BEFORE_B, abs=1e-6)
    # The variables themselves: 2.15 fetched their reads made when they were
    # created, unordered against the update as well.
    assert _column(seen, "w_var") == pytest.approx(BEFORE_W, abs=1e-6)
    assert _column(seen, "b_var") == pytest.approx(BEFORE_B, abs=1e-6)
    # A read the program ordered after the train op sees the update.
    assert _column(seen, "w_after") == pytest.approx(AFTER_W, abs=1e-6)
    # Fetched by name, from a hook of the train() call: the same reads.
    assert _column(by_name.seen, "w_late") == pytest.approx(BEFORE_W[3:], abs=1e-6)
    assert _column(by_name.seen, "b_late") == pytest.approx(BEFORE_B[3:], abs=1e-6)
    assert est.get_variable_value("w")[0][0] == pytest.approx(AFTER_W[-1], abs=1e-6)


def test_a_fetched_assignment_still_gives_the_value_after_it(tmp_path):
    # 2.15: a hook fetching `c.assign_add(1.0)` saw 1, 2, 3, whatever read of
    # `c` the model_fn made before it.
    hooks = []

    def model_fn(features, labels, mode):
        c = tf.compat.v1.get_variable(
            "c", [], initializer=tf.compat.v1.zeros_initializer(), trainable=False
        )
        w = tf.compat.v1.get_variable(
            "w", [1, 1], initializer=tf.compat.v1.ones_initializer()
        )
        before = c + 0.0
        update = c.assign_add(1.0)
        loss = (
            tf.reduce_mean(tf.square(tf.matmul(features["x"], w) - labels))
            + 0.0 * before
        )
        train_op = tf.group(
            tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
                loss, tf.compat.v1.train.get_global_step()
            ),
            update,
        )
        hook = _Fetch({"update": update})
        hooks.append(hook)
        return estimator.EstimatorSpec(
            mode, loss=loss, train_op=train_op, training_hooks=[hook]
        )

    estimator.Estimator(model_fn, model_dir=str(tmp_path)).train(_input_fn, steps=3)
    assert _column([s for h in hooks for s in h.seen], "update") == [1.0, 2.0, 3.0]


def _computing_model_fn(hooks, after_train_op):
    def model_fn(features, labels, mode):
        w = tf.compat.v1.get_variable("w", [1, 1], initializer=tf.compat.v1.ones_initializer())
        b = tf.compat.v1.get_variable("b", [1], initializer=tf.compat.v1.zeros_initializer())
        loss = tf.reduce_mean(tf.square(tf.matmul(features["x"], w) + b - labels))
        train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
            loss, tf.compat.v1.train.get_global_step()
        )
        w_sum = tf.reduce_sum(w) * 2.0 + tf.reduce_sum(b)
        tf.identity(tf.norm(tf.concat([tf.reshape(w, [-1]), b], 0)), name="w_norm")
        with tf.control_dependencies([train_op]):
            w_sum_after = tf.reduce_sum(w) * 2.0 + tf.reduce_sum(b)
        hook = _Fetch(
            {"w_sum": w_sum, "norm": "w_norm:0"}
            if not after_train_op
            else {"w_sum_after": w_sum_after}
        )
        hooks.append(hook)
        return estimator.EstimatorSpec(mode, loss=loss, train_op=train_op, training_hooks=[hook])

    return model_fn


def _two_examples():
    return tf.data.Dataset.from_tensors(({"x": [[1.0], [2.0]]}, [[2.0], [3.0]])).repeat()


def test_a_value_computed_from_reads_after_minimize_is_the_step_s_starting_value(tmp_path):
    # 2.15 computed `tf.reduce_sum(w) * 2.0 + tf.reduce_sum(b)` and a norm
    # of the variables, built after minimize, before the update (here they
    # were one step ahead: 2.8, 3.05, ...).
    hooks = []
    estimator.Estimator(_computing_model_fn(hooks, False), str(tmp_path)).train(
        _two_examples, steps=5
    )
    seen = hooks[-1].seen
    np.testing.assert_allclose(
        [s["w_sum"] for s in seen], [2.0, 2.8, 3.05, 3.127, 3.1496], rtol=1e-5
    )
    np.testing.assert_allclose(
        [s["norm"] for s in seen], [1.0, 1.315295, 1.41598, 1.445267, 1.451883], rtol=1e-5
    )


def test_a_value_computed_under_the_train_op_is_the_value_after_it(tmp_path):
    hooks = []
    estimator.Estimator(_computing_model_fn(hooks, True), str(tmp_path)).train(
        _two_examples, steps=5
    )
    np.testing.assert_allclose(
        [s["w_sum_after"] for s in hooks[-1].seen],
        [2.8, 3.05, 3.127, 3.1496, 3.15511],
        rtol=1e-5,
    )
