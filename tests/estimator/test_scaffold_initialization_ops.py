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
from tests._models import write_forced_summary

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


# 2.15's figures for the assigning init_op (w set to 1 after the initializers):
# w after 3 steps, evaluate()'s loss on 2 batches, the predictions, and w
# after 3 more steps of a train() that resumes from the checkpoint (the
# init_op runs only on a fresh start); and evaluate() and predict() of a
# model_dir with no checkpoint, which ran it too.
_ASSIGNED_W_3, _ASSIGNED_LOSS_3, _ASSIGNED_W_6 = 2.525, 0.4421878, 2.3105469
_ASSIGNED_PREDICTIONS_3 = [2.525, 5.05, 7.575, 10.1]
_FRESH_LOSS, _FRESH_PREDICTIONS = 13.5, [1.0, 2.0, 3.0, 4.0]


def _predict_input_fn():
    return tf.data.Dataset.from_tensor_slices({"x": _X}).batch(2)


def _assigning_model_fn(features, labels, mode, params=None):
    params = params or {}
    w = v1.get_variable("w", [1, 1], initializer=v1.zeros_initializer())
    predictions = tf.matmul(features["x"], w)
    if params.get("initializer", True):
        scaffold = _scaffold("assigning_init_op", w)
    else:
        scaffold = v1.train.Scaffold(init_op=v1.assign(w, tf.ones_like(w)))
    if mode == keras_estimator.ModeKeys.PREDICT:
        return keras_estimator.EstimatorSpec(
            mode, predictions={"p": predictions}, scaffold=scaffold
        )
    loss = v1.losses.mean_squared_error(labels, predictions)
    train_op = v1.train.GradientDescentOptimizer(0.05).minimize(
        loss, global_step=v1.train.get_global_step()
    )
    if params.get("forced_summary") and mode == keras_estimator.ModeKeys.TRAIN:
        write_forced_summary(loss)
    return keras_estimator.EstimatorSpec(mode, loss=loss, train_op=train_op, scaffold=scaffold)


def _predicted(est):
    return [float(p["p"][0]) for p in est.predict(_predict_input_fn)]


def test_an_init_op_that_assigns_other_values_runs_once_on_a_fresh_start(tmp_path):
    est = keras_estimator.Estimator(_assigning_model_fn, str(tmp_path))
    est.train(_input_fn, steps=3)
    assert est.get_variable_value("w")[0, 0] == pytest.approx(_ASSIGNED_W_3, rel=1e-6)
    assert est.evaluate(_input_fn, steps=2)["loss"] == pytest.approx(_ASSIGNED_LOSS_3, rel=1e-6)
    assert _predicted(est) == pytest.approx(_ASSIGNED_PREDICTIONS_3, rel=1e-6)
    # Resumed from the checkpoint: the init_op does not run again, nor in
    # a new Estimator on the same model_dir.
    est.train(_input_fn, steps=3)
    assert est.get_variable_value("w")[0, 0] == pytest.approx(_ASSIGNED_W_6, rel=1e-6)
    again = keras_estimator.Estimator(_assigning_model_fn, str(tmp_path))
    assert _predicted(again) == pytest.approx(
        [float(est.get_variable_value("w")[0, 0]) * x for x in (1, 2, 3, 4)], rel=1e-6
    )


def test_evaluate_and_predict_without_a_checkpoint_run_the_init_op(tmp_path):
    est = keras_estimator.Estimator(_assigning_model_fn, str(tmp_path))
    assert est.evaluate(_input_fn, steps=2)["loss"] == pytest.approx(_FRESH_LOSS, rel=1e-6)
    assert _predicted(est) == pytest.approx(_FRESH_PREDICTIONS, rel=1e-6)
    est.train(_input_fn, steps=3)
    assert est.get_variable_value("w")[0, 0] == pytest.approx(_ASSIGNED_W_3, rel=1e-6)


def test_an_init_op_reading_the_batch_is_refused_with_the_fix(tmp_path):
    def model_fn(features, labels, mode):
        w = v1.get_variable("w", [1, 1], initializer=v1.zeros_initializer())
        loss = v1.losses.mean_squared_error(labels, tf.matmul(features["x"], w))
        train_op = v1.train.GradientDescentOptimizer(0.05).minimize(
            loss, global_step=v1.train.get_global_step()
        )
        first = tf.reshape(features["x"][0], [1, 1])
        scaffold = v1.train.Scaffold(init_op=tf.group(v1.assign(w, first)))
        return keras_estimator.EstimatorSpec(
            mode, loss=loss, train_op=train_op, scaffold=scaffold
        )

    est = keras_estimator.Estimator(model_fn, str(tmp_path))
    with pytest.raises(ValueError, match="init_op=") as raised:
        est.train(_input_fn, steps=3)
    assert "features or labels" in str(raised.value)


def test_an_assigning_init_op_under_a_mirrored_strategy_is_refused_with_the_fix(tmp_path):
    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    est = keras_estimator.Estimator(
        _assigning_model_fn,
        str(tmp_path),
        params={"initializer": False},
        config=keras_estimator.RunConfig(train_distribute=strategy),
    )
    with pytest.raises(ValueError, match="init_op=") as raised:
        est.train(_input_fn, steps=3)
    assert "MirroredStrategy" in str(raised.value)
    assert "init_fn" in str(raised.value)


def test_where_every_op_runs_an_assigning_init_op_is_refused_with_the_fix(tmp_path):
    # A summary the step cannot hold back makes it run every op the
    # model_fn built: the init_op's assignment would run at every step.
    est = keras_estimator.Estimator(
        _assigning_model_fn, str(tmp_path), params={"forced_summary": True}
    )
    with pytest.raises(ValueError, match="init_op=") as raised:
        est.train(_input_fn, steps=3)
    assert "runs every op" in str(raised.value)
    assert "init_fn" in str(raised.value)


def _evaluated_losses(eval_dir):
    losses = {}
    for path in sorted(tf.io.gfile.glob(f"{eval_dir}/events.*")):
        for event in v1.train.summary_iterator(path):
            for value in event.summary.value:
                if value.tag == "loss":
                    losses[event.step] = value.simple_value
    return losses


def test_in_memory_evaluation_uses_the_trained_weights_not_the_init_op(tmp_path):
    # No checkpoint is ever written, so each evaluation finds none; 2.15 ran
    # the init_op there too, then fed the training weights over it:
    # losses 13.5 at step 0 (w = 1), 0.375 at step 2, 0.4421878 at step 3.
    from keras_estimator.experimental import InMemoryEvaluatorHook

    config = keras_estimator.RunConfig(save_checkpoints_steps=None, save_checkpoints_secs=None)
    est = keras_estimator.Estimator(_assigning_model_fn, str(tmp_path), config=config)
    hook = InMemoryEvaluatorHook(est, _input_fn, steps=2, every_n_iter=2)
    est.train(_input_fn, steps=3, hooks=[hook])
    losses = _evaluated_losses(tmp_path / "eval")
    assert losses == pytest.approx({0: _FRESH_LOSS, 2: 0.375, 3: _ASSIGNED_LOSS_3}, rel=1e-6)
