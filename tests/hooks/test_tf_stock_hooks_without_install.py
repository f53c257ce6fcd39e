"""TensorFlow's own stock hooks, handed to an Estimator without `install()`.

In tf.estimator 2.15 `tf.estimator.StopAtStepHook` was
`tf.compat.v1.train.StopAtStepHook`, so programs made the stock hooks under
either name. TensorFlow's classes need a TF1 session; the Estimator runs
this package's hook of the same name, made with the same arguments, in
their place. Expected values: the same program on tensorflow 2.15.1 +
tensorflow-estimator 2.15.0 with `tf.estimator` in place of
`keras_estimator` (a one-unit dense layer starting at kernel 0, gradient
descent 0.1 on x = 1, y = 1, batches of 4).
"""

from __future__ import annotations

import glob
import os

import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as ke
from keras_estimator._src.hooks import tf_stock_hooks

T = tf.compat.v1.train


def _model_fn(features, labels, mode, params):
    out = ke.compat.layers.dense(
        features["x"], 1, name="out", kernel_initializer=tf.compat.v1.zeros_initializer()
    )
    loss = tf.reduce_mean(tf.square(out - labels))
    train_op = T.GradientDescentOptimizer(0.1).minimize(loss, T.get_global_step())
    return ke.EstimatorSpec(
        mode, loss=loss, train_op=train_op, training_hooks=params.get("hooks", [])
    )


def _input_fn():
    return tf.data.Dataset.from_tensors(({"x": tf.ones([4, 1])}, tf.ones([4, 1]))).repeat()


def _estimator(tmp_path, hooks=()):
    return ke.Estimator(
        _model_fn, model_dir=str(tmp_path / "model"), params={"hooks": list(hooks)}
    )


def _events(directory):
    found = []
    for path in sorted(glob.glob(os.path.join(directory, "events.out.tfevents.*"))):
        for event in tf.compat.v1.train.summary_iterator(path):
            found.extend((event.step, value.tag) for value in event.summary.value)
    return found


def test_stop_at_step_hooks_stop_where_2_15s_stopped(tmp_path):
    estimator = _estimator(tmp_path)
    estimator.train(_input_fn, hooks=[T.StopAtStepHook(num_steps=2)])
    assert estimator.get_variable_value("global_step") == 2
    estimator.train(_input_fn, hooks=[T.StopAtStepHook(last_step=5)])
    assert estimator.get_variable_value("global_step") == 5


def test_a_stop_at_step_hook_from_the_model_fn_stops_training(tmp_path):
    estimator = _estimator(tmp_path, hooks=[T.StopAtStepHook(last_step=3)])
    estimator.train(_input_fn, steps=10)
    assert estimator.get_variable_value("global_step") == 3


def test_step_counter_hook_writes_2_15s_steps(tmp_path):
    output = str(tmp_path / "counter")
    _estimator(tmp_path).train(
        _input_fn, steps=5, hooks=[T.StepCounterHook(every_n_steps=2, output_dir=output)]
    )
    assert _events(output) == [(3, "global_step/sec"), (5, "global_step/sec")]


def test_checkpoint_saver_hook_writes_2_15s_checkpoints_under_its_basename(tmp_path):
    output = str(tmp_path / "saved")
    hook = T.CheckpointSaverHook(output, save_steps=2, checkpoint_basename="x.ckpt")
    _estimator(tmp_path).train(_input_fn, steps=5, hooks=[hook])
    written = sorted(
        os.path.basename(path)[: -len(".index")]
        for path in glob.glob(os.path.join(output, "x.ckpt-*.index"))
    )
    assert written == ["x.ckpt-0", "x.ckpt-2", "x.ckpt-4", "x.ckpt-5"]
    assert tf.train.latest_checkpoint(output) == os.path.join(output, "x.ckpt-5")
    np.testing.assert_allclose(tf.train.load_variable(output, "out/kernel"), [[0.46112]], rtol=1e-5)


def test_global_step_waiter_hook_lets_the_chief_train(tmp_path):
    estimator = _estimator(tmp_path)
    estimator.train(_input_fn, steps=3, hooks=[T.GlobalStepWaiterHook(0)])
    assert estimator.get_variable_value("global_step") == 3


def test_subclasses_of_tensorflow_hooks_are_left_as_they_are():
    class Custom(T.StopAtStepHook):
        pass

    custom = Custom(num_steps=1)
    assert tf_stock_hooks.as_package_hook(custom) is custom
    made = tf_stock_hooks.as_package_hook(T.StopAtStepHook(num_steps=1))
    assert isinstance(made, ke.StopAtStepHook)


@pytest.mark.parametrize(
    "make",
    [
        lambda d: T.SummarySaverHook(save_steps=2, output_dir=d, summary_op=tf.constant("")),
        lambda d: T.ProfilerHook(save_steps=2, output_dir=d),
    ],
    ids=["summary_saver", "profiler"],
)
def test_other_stock_hooks_are_made_with_their_arguments(tmp_path, make):
    # ProfilerHook's constructor opens a TF1 FileWriter, which needs a graph.
    with tf.Graph().as_default():
        hook = make(str(tmp_path))
    made = tf_stock_hooks.as_package_hook(hook)
    assert type(made).__name__ == type(hook).__name__
    assert type(made).__module__.startswith("keras_estimator.")
    assert made._timer._every_steps == 2


def test_hook_callback_runs_tensorflow_s_stop_at_step_hook_in_keras_fit():
    # As the package's StopAtStepHook(num_steps=3) does: 3 of the epoch's 8 steps.
    import keras

    model = keras.Sequential([keras.Input((1,)), keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    x = np.ones((64, 1), np.float32)
    model.fit(
        x, x, batch_size=8, verbose=0, callbacks=[ke.HookCallback([T.StopAtStepHook(num_steps=3)])]
    )
    assert int(model.optimizer.iterations.numpy()) == 3
