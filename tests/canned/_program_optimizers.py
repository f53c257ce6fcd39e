"""Programs' own tf.compat.v1.train optimizers given to the v1 canned estimators.

Shared by `test_program_optimizers.py` and the fixture generator
`tests/fixtures/make_tf215_program_optimizers_fixture.py`, which runs the
same cases under tf.estimator 2.15: `run_cases(estimator_module)` takes the
module holding the v1 canned classes (`tf.compat.v1.estimator` there,
`keras_estimator.compat.estimator` here).
"""

from __future__ import annotations

import tempfile

import numpy as np
import tensorflow as tf


class HalfStepSGD(tf.compat.v1.train.Optimizer):
    """Gradient descent at half the learning rate, with a slot counting updates."""

    def __init__(self, learning_rate, name="HalfStepSGD"):
        super().__init__(use_locking=False, name=name)
        self._step_size = learning_rate

    def _create_slots(self, var_list):
        for variable in var_list:
            self._zeros_slot(variable, "count", self._name)

    def _resource_apply_dense(self, grad, var):
        count = self.get_slot(var, "count")
        return tf.group(
            var.assign_sub(0.5 * self._step_size * grad),
            count.assign_add(tf.ones_like(count)),
        )

    def _apply_dense(self, grad, var):
        return self._resource_apply_dense(grad, var)


class NamedAdam(tf.compat.v1.train.AdamOptimizer):
    """Adam under another class name: its update is TensorFlow's."""


class DecayedAdam(tf.compat.v1.train.AdamOptimizer):
    """Adam, then each variable shrunk by a tenth: an update of its own."""

    def _resource_apply_dense(self, grad, var):
        update = super()._resource_apply_dense(grad, var)
        with tf.control_dependencies([update]):
            return var.assign(0.9 * var)


X = np.array([[1.0], [2.0], [3.0], [4.0]], np.float32)
Y = np.array([[2.0], [4.1], [5.9], [8.2]], np.float32)


def _input_fn():
    return tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).repeat().batch(4)


def _cases(estimator_module):
    columns = [tf.feature_column.numeric_column("x")]
    config = estimator_module.RunConfig(tf_random_seed=1)
    return {
        "linear_half_step_sgd": lambda d: estimator_module.LinearRegressor(
            columns, optimizer=HalfStepSGD(0.05), model_dir=d
        ),
        "dnn_named_adam": lambda d: estimator_module.DNNRegressor(
            [3], columns, optimizer=NamedAdam(0.1), model_dir=d, config=config
        ),
        "dnn_decayed_adam": lambda d: estimator_module.DNNRegressor(
            [3], columns, optimizer=DecayedAdam(0.1), model_dir=d, config=config
        ),
    }


def run_cases(estimator_module):
    """Each case's variables after 3 steps and its evaluation loss."""
    results = {}
    for name, make in _cases(estimator_module).items():
        estimator = make(tempfile.mkdtemp())
        estimator.train(_input_fn, steps=3)
        results[name] = {
            "loss": float(estimator.evaluate(_input_fn, steps=1)["loss"]),
            "variables": {
                variable: np.asarray(estimator.get_variable_value(variable))
                .ravel()
                .tolist()
                for variable in estimator.get_variable_names()
            },
        }
    return results
