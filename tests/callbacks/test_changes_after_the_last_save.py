"""Weights a Keras callback assigns in `on_train_end` are in no checkpoint.

The last checkpoint of a `train()` call is written when training ends,
before the program's own callbacks' `on_train_end` (2.15's saver ended
before the user's hooks). What such a callback assigns then is not saved;
the Estimator's next call must then read the checkpoint, as a new Estimator
on the same model_dir does, not go on with the unsaved values in memory.
"""

import keras
import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as ke
from tests.callbacks._harness import X, build_model, dataset, estimator_run


class _ZeroAtTrainEnd(keras.callbacks.Callback):
    def on_train_end(self, logs=None):
        self.model.set_weights([np.zeros_like(w) for w in self.model.get_weights()])


def _eval_input():
    return dataset().take(4)


def _predict_input():
    return tf.data.Dataset.from_tensor_slices({"x": X[:2]}).batch(2)


def test_the_next_calls_read_the_last_checkpoint(tmp_path):
    est = estimator_run(build_model(), 3, [_ZeroAtTrainEnd()], model_dir=str(tmp_path))
    fresh = ke.model_to_estimator(build_model(seed=9), model_dir=str(tmp_path))
    expected = fresh.evaluate(_eval_input)
    assert est.evaluate(_eval_input) == pytest.approx(expected)
    np.testing.assert_array_equal(
        [p["logits"] for p in est.predict(_predict_input)],
        [p["logits"] for p in fresh.predict(_predict_input)],
    )
    # The checkpoint holds the trained weights, not the zeros.
    assert np.abs(est.get_variable_value("logits/kernel")).sum() > 0


def test_without_such_a_callback_the_weights_in_memory_are_the_checkpoints(tmp_path):
    est = estimator_run(build_model(), 3, [keras.callbacks.History()], model_dir=str(tmp_path))
    fresh = ke.model_to_estimator(build_model(seed=9), model_dir=str(tmp_path))
    assert est.evaluate(_eval_input) == pytest.approx(fresh.evaluate(_eval_input))
