"""A `tf.compat.v1.train.Optimizer` subclass with its own `minimize` trains v1 canned estimators.

tf.estimator 2.15's v1 canned estimators called the optimizer's `minimize`;
the base class's update (`_resource_apply_dense`, which raises
NotImplementedError) ran only when the subclass kept the base `minimize` and
`apply_gradients`. Figures from 2.15 (tensorflow-estimator 2.15.0, graph
mode): a LinearRegressor on x = [1, 2], y = [2, 4], three steps of an
optimizer whose `minimize` delegates to GradientDescentOptimizer(0.05).
"""

import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as ke


class _DelegatingOptimizer(tf.compat.v1.train.Optimizer):
    """Implements no update of its own: `minimize` hands over to an SGD it holds."""

    def __init__(self):
        super().__init__(use_locking=False, name="Delegating")
        self._inner = tf.compat.v1.train.GradientDescentOptimizer(0.05)

    def minimize(self, loss, global_step=None, var_list=None, **kwargs):
        return self._inner.minimize(loss, global_step=global_step, var_list=var_list)


class _DelegatingApply(tf.compat.v1.train.Optimizer):
    """Keeps the base `minimize`; `apply_gradients` hands over to an SGD."""

    def __init__(self):
        super().__init__(use_locking=False, name="DelegatingApply")
        self._inner = tf.compat.v1.train.GradientDescentOptimizer(0.05)

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        return self._inner.apply_gradients(grads_and_vars, global_step=global_step)


def _input_fn():
    features = {"x": [[1.0], [2.0]]}
    return tf.data.Dataset.from_tensor_slices((features, [[2.0], [4.0]])).batch(2).repeat()


@pytest.mark.parametrize("optimizer", [_DelegatingOptimizer, _DelegatingApply])
def test_an_optimizer_with_its_own_minimize_trains_as_in_2_15(optimizer, tmp_path):
    est = ke.compat.estimator.LinearRegressor(
        feature_columns=[tf.feature_column.numeric_column("x")],
        optimizer=optimizer(),
        model_dir=str(tmp_path),
    )
    est.train(_input_fn, steps=3)
    np.testing.assert_allclose(
        est.get_variable_value("linear/linear_model/x/weights"), [[1.426]], rtol=1e-6
    )
    np.testing.assert_allclose(
        est.get_variable_value("linear/linear_model/bias_weights"), [0.828], rtol=1e-6
    )
    metrics = est.evaluate(_input_fn, steps=1)
    assert metrics["global_step"] == 3
    np.testing.assert_allclose(metrics["loss"], 0.16691592, rtol=1e-5)
    np.testing.assert_allclose(metrics["average_loss"], 0.08345796, rtol=1e-5)
