"""`evaluate()`'s loss is the mean of the batches' losses, as in 2.15.

tf.estimator 2.15's `loss` metric averaged each batch's loss whatever the
batch's size (a model_to_estimator model, 20 examples in batches of 8, 8, 4:
2.15 gave 1.1754549, the batches' mean, where Keras' `evaluate` weights by
size). Callbacks' logs in evaluate() hold the same value.
"""

import keras
import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as ke
from tests.callbacks._harness import build_model

_X = np.random.RandomState(0).randn(20, 4).astype(np.float32)
_Y = (np.random.RandomState(1).rand(20) * 3).astype(np.int64)


class _EndLoss(keras.callbacks.Callback):
    def on_test_end(self, logs=None):
        self.loss = float(logs["loss"])


def test_the_loss_is_the_unweighted_mean_of_the_batches(tmp_path):
    model = build_model()
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    batches = [slice(0, 8), slice(8, 16), slice(16, 20)]
    losses = [float(loss_fn(_Y[s], model(_X[s]))) for s in batches]
    weighted = (8 * losses[0] + 8 * losses[1] + 4 * losses[2]) / 20
    assert abs(np.mean(losses) - weighted) > 1e-3  # the two differ here

    est = ke.model_to_estimator(model, model_dir=str(tmp_path))
    end = _EndLoss()
    results = est.evaluate(
        lambda: tf.data.Dataset.from_tensor_slices(({"x": _X}, _Y)).batch(8), callbacks=[end]
    )
    assert float(results["loss"]) == pytest.approx(np.mean(losses), rel=1e-5)
    assert end.loss == pytest.approx(np.mean(losses), rel=1e-5)
