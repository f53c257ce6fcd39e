"""`create_estimator_spec` in TRAIN mode checks its arguments as 2.15 did.

The cases of 2.15's `test_invalid_trainable_variables`,
`test_train_with_optimizer` and `test_train_with_update_ops` (every head's
test file) and its `create_estimator_spec_train_op` checks.
"""

import keras
import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as ke

FEATURES = {"x": np.array([[42.0]], np.float32)}
LOGITS = np.array([[45.0], [41.0]], np.float32)
LABELS = np.array([[43.0], [44.0]], np.float64)


class _RecordingOptimizer(keras.optimizers.Optimizer):
    """Makes its train op from get_updates, as tf.keras 2 optimizers did."""

    def get_updates(self, loss, params):
        self.loss = loss
        return [tf.constant(0)]


def _spec(**kwargs):
    return ke.RegressionHead().create_estimator_spec(
        features=FEATURES, mode=ke.ModeKeys.TRAIN, logits=LOGITS, labels=LABELS, **kwargs
    )


def test_trainable_variables_must_be_a_list_or_tuple():
    optimizer = _RecordingOptimizer(learning_rate=0.1)
    with pytest.raises(ValueError, match="trainable_variables cannot be None"):
        _spec(optimizer=optimizer, trainable_variables=None)
    variables = {"var_list": [tf.Variable([1.0, 2.0])]}
    with pytest.raises(ValueError, match="trainable_variables should be a list or a tuple"):
        _spec(optimizer=optimizer, trainable_variables=variables)


def test_the_optimizer_gets_the_loss():
    optimizer = _RecordingOptimizer(learning_rate=0.1)
    spec = _spec(optimizer=optimizer, trainable_variables=[tf.Variable([1.0, 2.0])])
    # ((43 - 45)^2 + (44 - 41)^2) / 2
    np.testing.assert_allclose(float(optimizer.loss), 6.5, rtol=1e-6)
    np.testing.assert_allclose(float(spec.loss), 6.5, rtol=1e-6)


def test_exactly_one_of_optimizer_and_train_op_fn():
    with pytest.raises(ValueError, match="train_op_fn and optimizer cannot both be None"):
        _spec()
    with pytest.raises(ValueError, match="train_op_fn and optimizer cannot both be set"):
        _spec(
            optimizer=_RecordingOptimizer(learning_rate=0.1),
            trainable_variables=[],
            train_op_fn=lambda loss: tf.constant(0),
        )


def test_an_optimizer_that_is_not_keras_is_refused():
    with pytest.raises(ValueError, match="The given optimizer is not a tf.keras.optimizers.Optimizer"):
        _spec(optimizer="Adagrad", trainable_variables=[])


def test_update_ops_must_be_a_list_or_tuple():
    with pytest.raises(ValueError, match="update_ops should be a list or a tuple"):
        _spec(train_op_fn=lambda loss: tf.constant(0), update_ops=tf.constant(1))
