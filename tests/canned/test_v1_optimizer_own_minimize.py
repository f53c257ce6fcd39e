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


class _NoVarList(tf.compat.v1.train.Optimizer):
    """`minimize(loss, global_step)`: the variables come from the graph's collection."""

    def __init__(self):
        super().__init__(use_locking=False, name="NoVarList")
        self._inner = tf.compat.v1.train.GradientDescentOptimizer(0.05)

    def minimize(self, loss, global_step=None):
        return self._inner.minimize(loss, global_step=global_step)


class _NoGlobalStep(tf.compat.v1.train.Optimizer):
    """`minimize(loss, var_list)`, as 2.15's wide-and-deep classes called it."""

    def __init__(self):
        super().__init__(use_locking=False, name="NoGlobalStep")
        self._inner = tf.compat.v1.train.GradientDescentOptimizer(0.05)

    def minimize(self, loss, var_list=None):
        return self._inner.minimize(loss, var_list=var_list)


_X = tf.feature_column.numeric_column("x")
_LINEAR_2_15 = {
    "linear/linear_model/x/weights": [1.426],
    "linear/linear_model/bias_weights": [0.828],
}
# 2.15 called minimize(loss, global_step=...) in the DNN, Linear and Baseline
# classes and minimize(loss, var_list=...) in the wide-and-deep ones.
_CALLED_AS_IN_2_15 = {
    "linear": (
        lambda d: ke.compat.estimator.LinearRegressor([_X], optimizer=_NoVarList(), model_dir=d),
        _LINEAR_2_15,
        0.16691592,
    ),
    "baseline": (
        lambda d: ke.compat.estimator.BaselineRegressor(optimizer=_NoVarList(), model_dir=d),
        {"baseline/bias": [1.464]},
        6.7185907,
    ),
    "wide_and_deep": (
        lambda d: ke.compat.estimator.DNNLinearCombinedRegressor(
            linear_feature_columns=[_X], linear_optimizer=_NoGlobalStep(), model_dir=d
        ),
        _LINEAR_2_15,
        0.16691592,
    ),
}


@pytest.mark.parametrize("case", sorted(_CALLED_AS_IN_2_15))
def test_minimize_is_called_with_2_15s_arguments(case, tmp_path):
    make, expected, loss = _CALLED_AS_IN_2_15[case]
    est = make(str(tmp_path))
    est.train(_input_fn, steps=3)
    for name, value in expected.items():
        np.testing.assert_allclose(est.get_variable_value(name).ravel(), value, rtol=1e-6)
    metrics = est.evaluate(_input_fn, steps=1)
    assert metrics["global_step"] == 3
    np.testing.assert_allclose(metrics["loss"], loss, rtol=1e-5)


class _Wrapper(tf.compat.v1.train.Optimizer):
    """Never runs the base class's __init__ (so has no name and no slots)."""

    def __init__(self, inner):
        self._inner = inner

    def minimize(self, loss, global_step=None, var_list=None):
        return self._inner.minimize(loss, global_step=global_step, var_list=var_list)


@pytest.mark.parametrize("wide_and_deep", [False, True])
def test_an_optimizer_not_initialised_by_its_base_class_trains_as_in_2_15(
    wide_and_deep, tmp_path
):
    optimizer = _Wrapper(tf.compat.v1.train.GradientDescentOptimizer(0.05))
    if wide_and_deep:
        est = ke.compat.estimator.DNNLinearCombinedRegressor(
            linear_feature_columns=[_X], linear_optimizer=optimizer, model_dir=str(tmp_path)
        )
    else:
        est = ke.compat.estimator.LinearRegressor([_X], optimizer=optimizer, model_dir=str(tmp_path))
    est.train(_input_fn, steps=3)
    assert sorted(est.get_variable_names()) == ["global_step", *sorted(_LINEAR_2_15)]
    for name, value in _LINEAR_2_15.items():
        np.testing.assert_allclose(est.get_variable_value(name).ravel(), value, rtol=1e-6)
    np.testing.assert_allclose(est.evaluate(_input_fn, steps=1)["loss"], 0.16691592, rtol=1e-5)
