"""Hooks a model_fn makes: the one the program keeps ran, its variables are
the trained ones, and FinalOpsHook evaluates its ops at the end as 2.15 did.

The expected numbers are tf.estimator 2.15's run of this program (the same
model_fn, data and GradientDescent(0.1), 5 steps of batch 8).
"""

import numpy as np
import tensorflow as tf

import keras_estimator as ke

RNG = np.random.default_rng(0)
X = RNG.normal(size=(32, 4)).astype("float32")
Y = (X[:, 0] > 0).astype("int32")


def _input_fn(repeat=True):
    def input_fn():
        data = tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).batch(8)
        return data.repeat() if repeat else data

    return input_fn


class FetchW(ke.SessionRunHook):
    def __init__(self, w):
        self.w = w
        self.seen = []

    def before_run(self, run_context):
        return ke.SessionRunArgs(self.w)

    def after_run(self, run_context, run_values):
        self.seen.append(np.abs(run_values.results).sum())


def _estimator(tmp_path, kept):
    def model_fn(features, labels, mode):
        w = tf.compat.v1.get_variable("w", [4, 3], initializer=tf.compat.v1.zeros_initializer())
        logits = tf.matmul(features["x"], w)
        loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
        train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
            loss, global_step=tf.compat.v1.train.get_global_step()
        )
        kept["loss"] = ke.FinalOpsHook(loss)
        kept["both"] = ke.FinalOpsHook({"loss": loss, "w": w})
        kept["w"] = ke.FinalOpsHook(w)
        kept["fetch"] = FetchW(w)
        hooks = [kept["loss"], kept["both"], kept["w"], kept["fetch"]]
        return ke.EstimatorSpec(mode, loss=loss, train_op=train_op, training_hooks=hooks)

    return ke.Estimator(model_fn, model_dir=str(tmp_path))


def test_final_ops_are_evaluated_at_the_end_as_in_2_15(tmp_path):
    kept = {}
    estimator = _estimator(tmp_path, kept)
    estimator.train(_input_fn(), steps=5)
    w = estimator.get_variable_value("w")
    # 2.15: each end() ran the training graph once more on the next batch.
    np.testing.assert_allclose(kept["loss"].final_ops_values, 0.98286855, rtol=1e-6)
    both = kept["both"].final_ops_values
    np.testing.assert_allclose(both["loss"], 0.90014315, rtol=1e-6)
    np.testing.assert_array_equal(both["w"], w)
    np.testing.assert_allclose(w[0], [-0.1776893, 0.15059625, 0.02709308], rtol=1e-5)
    np.testing.assert_array_equal(kept["w"].final_ops_values, w)
    # No training happened in end(): the checkpoint is the 5th step's.
    assert estimator.get_variable_value("global_step") == 5


def test_a_fetched_variable_is_the_one_training_updates(tmp_path):
    kept = {}
    estimator = _estimator(tmp_path, kept)
    estimator.train(_input_fn(), steps=3)
    seen = kept["fetch"].seen
    # 2.15 (every run): the variable as each step started, 0 before the
    # first update (its session read the variable unordered against the
    # update, and before it); the trained variable moves on from there.
    np.testing.assert_allclose(seen, [0.0, 0.15004285, 0.25713786], rtol=1e-6)
    assert np.abs(estimator.get_variable_value("w")).sum() > seen[-1]


def test_no_batch_left_for_final_ops_keeps_none_and_the_checkpoint(tmp_path, caplog):
    kept = {}
    estimator = _estimator(tmp_path, kept)
    with caplog.at_level("WARNING", logger="keras_estimator"):
        estimator.train(_input_fn(repeat=False))
    assert kept["loss"].final_ops_values is None
    assert "no batch left" in caplog.text
    np.testing.assert_array_equal(kept["w"].final_ops_values, estimator.get_variable_value("w"))
    assert estimator.get_variable_value("global_step") == 4


def test_logging_tensor_hook_at_end_logs_2_15s_value(tmp_path, caplog):
    def model_fn(features, labels, mode):
        w = tf.compat.v1.get_variable("w", [4, 3], initializer=tf.compat.v1.zeros_initializer())
        loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, tf.matmul(features["x"], w))
        train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
            loss, global_step=tf.compat.v1.train.get_global_step()
        )
        hook = ke.LoggingTensorHook({"end_loss": loss}, at_end=True)
        return ke.EstimatorSpec(mode, loss=loss, train_op=train_op, training_hooks=[hook])

    estimator = ke.Estimator(
        model_fn, model_dir=str(tmp_path), config=ke.RunConfig(log_step_count_steps=None)
    )
    with caplog.at_level("INFO", logger="keras_estimator"):
        estimator.train(_input_fn(), steps=5)
    logged = [float(m.split("=")[1]) for m in caplog.messages if m.startswith("end_loss")]
    # 2.15 logged "end_loss = 0.98286855": the tensor evaluated again after the last step.
    assert len(logged) == 1
    np.testing.assert_allclose(logged[0], 0.98286855, rtol=1e-6)
