"""Keras 2 idioms of TF 2.x model_fns that Keras 3 refuses.

`optimizer.iterations = global_step`, and a v1 optimizer given Keras layers'
variables. (`tf.group` of `apply_gradients` is tested in
tests/checkpoint/test_object_checkpoint.py.)
"""

from __future__ import annotations

import keras
import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as ke
from keras_estimator._src.base.estimator_spec import EstimatorSpec
from keras_estimator._src.base.mode_keys import ModeKeys
from keras_estimator._src.base.run_config import RunConfig

X = np.linspace(-1.0, 1.0, 32, dtype=np.float32).reshape(16, 2)
Y = X @ np.float32([[1.0], [-2.0]])


def input_fn():
    return tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).repeat().batch(8)


def model_fn(features, labels, mode, params):
    """TF 2.15's idiom: a Keras optimizer counting its steps in the global step."""
    dense = keras.layers.Dense(1, name="out")
    output = dense(features["x"])
    if mode == ModeKeys.PREDICT:
        return EstimatorSpec(mode, predictions={"y": output})
    loss = tf.reduce_mean(tf.square(output - labels))
    global_step = tf.compat.v1.train.get_or_create_global_step()
    if mode == ModeKeys.EVAL:
        return EstimatorSpec(mode, loss=loss)
    variables = dense.trainable_variables
    gradients = tf.compat.v1.gradients(loss, variables)
    if params.get("v1"):
        # Advances the global step without moving the weights.
        train_op = tf.compat.v1.train.GradientDescentOptimizer(0.0).apply_gradients(
            zip(gradients, variables, strict=True), global_step=global_step
        )
        return EstimatorSpec(mode, loss=loss, train_op=train_op)
    optimizer = params["make_optimizer"]()
    optimizer.iterations = global_step
    assert optimizer.iterations is global_step
    update = optimizer.apply_gradients(zip(gradients, variables, strict=True))
    if params.get("also_assign_add"):
        update = tf.group(update, tf.compat.v1.assign_add(global_step, 1))
    return EstimatorSpec(mode, loss=loss, train_op=update)


def _estimator(model_dir, distribute=None, **params):
    params.setdefault("make_optimizer", lambda: keras.optimizers.Adam(0.05))
    config = RunConfig(train_distribute=distribute, tf_random_seed=1)
    return ke.Estimator(model_fn, str(model_dir), config, params=params)


def test_the_optimizer_counts_its_steps_in_the_global_step(tmp_path):
    est = _estimator(tmp_path)
    est.train(input_fn, steps=7)
    # Advanced by the optimizer once per step, not once more by the Estimator.
    assert est.get_variable_value("global_step") == 7
    est.train(input_fn, steps=3)
    assert est.get_variable_value("global_step") == 10
    # The optimizer's own counter is not saved: the global step is its count.
    assert not [n for n in est.get_variable_names() if n.endswith("iteration")]


def test_an_explicit_increment_as_well_counts_twice_as_in_tf_2_15(tmp_path):
    est = _estimator(tmp_path, also_assign_add=True)
    # train(steps=3) stops once the global step reaches 3: two steps of two.
    est.train(input_fn, steps=3)
    assert est.get_variable_value("global_step") == 4


def test_a_schedule_reads_the_global_step_of_a_resumed_model_dir(tmp_path):
    # Six steps that move nothing, then a schedule whose learning rate is zero
    # before global step 6: it trains only if it reads the global step (its
    # own counter would start at 0).
    _estimator(tmp_path, v1=True).train(input_fn, steps=6)
    before = _estimator(tmp_path).get_variable_value("out/kernel")

    def make_optimizer():
        schedule = keras.optimizers.schedules.PiecewiseConstantDecay([5], [0.0, 0.5])
        return keras.optimizers.SGD(schedule)

    est = _estimator(tmp_path, make_optimizer=make_optimizer)
    est.train(input_fn, steps=2)
    assert est.get_variable_value("global_step") == 8
    assert np.abs(est.get_variable_value("out/kernel") - before).max() > 1e-3


def test_resuming_trains_as_one_run(tmp_path):
    whole = _estimator(tmp_path / "whole")
    whole.train(input_fn, steps=8)
    _estimator(tmp_path / "parts").train(input_fn, steps=4)
    parts = _estimator(tmp_path / "parts")
    parts.train(input_fn, steps=4)
    for name in ("out/kernel", "out/bias"):
        np.testing.assert_allclose(
            parts.get_variable_value(name), whole.get_variable_value(name), rtol=1e-6
        )


def test_under_mirrored_strategy_the_step_advances_once_per_step(tmp_path):
    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    est = _estimator(tmp_path, distribute=strategy)
    est.train(input_fn, steps=5)
    assert est.get_variable_value("global_step") == 5


def test_setting_it_after_the_first_update_is_keras_2s_error(tmp_path):
    def late(features, labels, mode):
        dense = keras.layers.Dense(1)
        loss = tf.reduce_mean(tf.square(dense(features["x"]) - labels))
        optimizer = keras.optimizers.SGD(0.1)
        variables = dense.trainable_variables
        update = optimizer.apply_gradients(
            zip(tf.compat.v1.gradients(loss, variables), variables, strict=True)
        )
        optimizer.iterations = tf.compat.v1.train.get_or_create_global_step()
        return EstimatorSpec(mode, loss=loss, train_op=update)

    with pytest.raises(RuntimeError, match="after its first update"):
        ke.Estimator(late, str(tmp_path)).train(input_fn, steps=1)


def test_a_value_that_is_not_an_integer_variable_is_refused(tmp_path):
    def wrong(features, labels, mode):
        dense = keras.layers.Dense(1)
        loss = tf.reduce_mean(tf.square(dense(features["x"]) - labels))
        keras.optimizers.SGD(0.1).iterations = tf.constant(3, tf.int64)
        return EstimatorSpec(mode, loss=loss, train_op=tf.no_op())

    with pytest.raises(TypeError, match="must be set to an integer variable"):
        ke.Estimator(wrong, str(tmp_path)).train(input_fn, steps=1)


def test_outside_a_model_fn_it_stays_read_only(tmp_path):
    _estimator(tmp_path).train(input_fn, steps=1)
    optimizer = keras.optimizers.SGD(0.1)
    with pytest.raises(AttributeError, match="has no setter"):
        optimizer.iterations = tf.Variable(0, dtype=tf.int64)


# ----------------------------------------- v1 optimizers on Keras variables

GUIDE_X = np.float32([[1.0, 1.5], [2.0, 2.5], [3.0, 3.5]])
GUIDE_Y = np.float32([[0.3], [0.5], [0.7]])


def guide_input_fn():
    return tf.data.Dataset.from_tensor_slices((GUIDE_X, GUIDE_Y)).batch(1)


def guide_model_fn(features, labels, mode, params):
    """TensorFlow's migration guide's TF2 model_fn (a fixed initial kernel)."""
    model = keras.Sequential([keras.layers.Dense(1, kernel_initializer="ones")])
    logits = model(features, training=mode == ModeKeys.TRAIN)
    loss = keras.losses.MeanSquaredError()(labels, logits)
    optimizer = tf.compat.v1.train.AdagradOptimizer(0.05)
    global_step = tf.compat.v1.train.get_global_step()
    if params["how"] == "minimize":
        train_op = optimizer.minimize(
            loss, var_list=model.trainable_variables, global_step=global_step
        )
    else:
        variables = model.trainable_variables
        pairs = optimizer.compute_gradients(loss, var_list=variables)
        train_op = optimizer.apply_gradients(pairs, global_step=global_step)
    return EstimatorSpec(mode, loss=loss, train_op=train_op)


def adagrad_by_hand(steps):
    kernel, bias = np.ones([2, 1]), np.zeros([1])
    slots = [np.full([2, 1], 0.1), np.full([1], 0.1)]
    for x, y in list(zip(GUIDE_X, GUIDE_Y, strict=True))[:steps]:
        error = x @ kernel + bias - y
        gradients = [2 * x[:, None] * error, 2 * error]
        for index, (variable, gradient) in enumerate(
            zip((kernel, bias), gradients, strict=True)
        ):
            slots[index] += gradient**2
            variable -= 0.05 * gradient / np.sqrt(slots[index])
    return kernel, bias


@pytest.mark.parametrize("how", ["minimize", "compute_and_apply"])
def test_a_v1_optimizer_trains_keras_layers_variables(tmp_path, how):
    est = ke.Estimator(guide_model_fn, str(tmp_path), params={"how": how})
    est.train(guide_input_fn)
    assert est.get_variable_value("global_step") == 3
    kernel, bias = adagrad_by_hand(3)
    np.testing.assert_allclose(
        est.get_variable_value("sequential/dense/kernel"), kernel, rtol=1e-5
    )
    np.testing.assert_allclose(
        est.get_variable_value("sequential/dense/bias"), bias, rtol=1e-5, atol=1e-6
    )
    # Slots under TF1's names, as tf.estimator 2.15 saved them.
    assert "sequential/dense/kernel/Adagrad" in est.get_variable_names()


def test_outside_a_model_fn_v1_optimizers_are_tensorflows(tmp_path):
    original = vars(tf.compat.v1.train.Optimizer)["apply_gradients"]
    ke.Estimator(guide_model_fn, str(tmp_path), params={"how": "minimize"}).train(
        guide_input_fn
    )
    assert vars(tf.compat.v1.train.Optimizer)["apply_gradients"] is original


def test_a_v1_optimizer_on_keras_variables_under_mirrored_strategy(tmp_path):
    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    config = RunConfig(train_distribute=strategy)

    def two_per_batch():
        return guide_input_fn().unbatch().repeat(2).batch(2)

    est = ke.Estimator(guide_model_fn, str(tmp_path), config, params={"how": "minimize"})
    est.train(two_per_batch, steps=1)
    before = est.get_variable_value("sequential/dense/kernel")
    est.train(two_per_batch, steps=2)
    assert est.get_variable_value("global_step") == 3
    assert np.abs(est.get_variable_value("sequential/dense/kernel") - before).max() > 1e-4
