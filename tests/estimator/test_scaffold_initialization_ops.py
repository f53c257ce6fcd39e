"""A Scaffold's `init_op`, `local_init_op`, `ready_op` and `ready_for_local_init_op`.

TF1 model_fns hand their Scaffold the ops tf.estimator's session ran to set
up, most often `global_variables_initializer()`, `local_variables_initializer()`,
`tables_initializer()` and `report_uninitialized_variables()`: what the
session would have done anyway. tf.estimator 2.15 ran them; so does this
Estimator, which initializes its variables itself. The expected figures are
2.15's (tensorflow-cpu 2.15.1, tensorflow-estimator 2.15.0) from this
module's program run there: y = 2x + 1 on x = 1..4 in batches of 2, w from
0, gradient descent (0.05), 3 steps.
"""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

import keras_estimator

v1 = tf.compat.v1

_X = np.arange(1, 5, dtype=np.float32).reshape(4, 1)
# 2.15: w after 3 steps, and evaluate()'s loss (and the mean metric) on 2 batches.
_W_3, _LOSS_3 = 2.665625, 0.99480027


def _input_fn():
    return tf.data.Dataset.from_tensor_slices(({"x": _X}, 2 * _X + 1)).batch(2).repeat()


def _scaffold(kind, w):
    if kind == "init_op":
        return v1.train.Scaffold(init_op=v1.global_variables_initializer())
    if kind == "ready_ops":
        return v1.train.Scaffold(
            ready_op=v1.report_uninitialized_variables(),
            ready_for_local_init_op=v1.report_uninitialized_variables(v1.global_variables()),
        )
    if kind == "every_initializer":
        return v1.train.Scaffold(
            init_op=tf.group(v1.global_variables_initializer(), v1.local_variables_initializer()),
            local_init_op=tf.group(v1.local_variables_initializer(), v1.tables_initializer()),
            ready_for_local_init_op=v1.report_uninitialized_variables(v1.global_variables()),
        )
    assert kind == "assigning_init_op"
    with tf.control_dependencies([v1.global_variables_initializer()]):
        return v1.train.Scaffold(init_op=tf.group(v1.assign(w, tf.ones_like(w))))


def _model_fn(features, labels, mode, params):
    w = v1.get_variable("w", [1, 1], initializer=v1.zeros_initializer())
    loss = v1.losses.mean_squared_error(labels, tf.matmul(features["x"], w))
    mean = v1.metrics.mean(loss)
    train_op = v1.train.GradientDescentOptimizer(0.05).minimize(
        loss, global_step=v1.train.get_global_step()
    )
    return keras_estimator.EstimatorSpec(
        mode,
        loss=loss,
        train_op=train_op,
        eval_metric_ops={"mean": mean},
        scaffold=_scaffold(params["kind"], w),
    )


@pytest.mark.parametrize("kind", ["init_op", "ready_ops", "every_initializer"])
def test_the_session_s_own_initialization_ops_give_2_15s_figures(tmp_path, kind):
    est = keras_estimator.Estimator(_model_fn, str(tmp_path), params={"kind": kind})
    est.train(_input_fn, steps=3)
    assert est.get_variable_value("w")[0, 0] == pytest.approx(_W_3, rel=1e-6)
    metrics = est.evaluate(_input_fn, steps=2)
    assert metrics["loss"] == pytest.approx(_LOSS_3, rel=1e-6)
    assert metrics["mean"] == pytest.approx(_LOSS_3, rel=1e-6)
    # TensorFlow's own functions are back after the calls.
    import tensorflow.compat.v1 as tf1

    for namespace in (v1, tf1, tf.compat.v2.compat.v1):
        for function in (namespace.report_uninitialized_variables, namespace.variables_initializer):
            assert function.__module__.startswith("tensorflow."), function
    with tf.Graph().as_default():
        variable = v1.get_variable("v", [1], initializer=v1.zeros_initializer())
        initializer = v1.global_variables_initializer()
        report = v1.report_uninitialized_variables()
        with v1.Session() as session:
            assert list(session.run(report)) == [b"v"]
            session.run(initializer)
            assert list(session.run(report)) == []
            assert session.run(variable)[0] == 0.0


def test_an_init_op_that_assigns_other_values_is_refused_with_the_fix(tmp_path):
    # 2.15 ran it (w started from 1 and reached 2.525 after 3 steps); here
    # it is refused, naming the field and the way to start from other values.
    est = keras_estimator.Estimator(
        _model_fn, str(tmp_path), params={"kind": "assigning_init_op"}
    )
    with pytest.raises(ValueError, match="init_op=") as raised:
        est.train(_input_fn, steps=3)
    assert "init_fn" in str(raised.value)
