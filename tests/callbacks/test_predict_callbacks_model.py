"""`predict(callbacks=...)`: the callbacks' model and params are Keras' predict's.

In Keras' `predict` a callback's `self.model` is the model predicting, and
`self.params` holds verbose, epochs and steps. On a `model_to_estimator`
Estimator that model is the Keras model holding the weights predict() uses
(those of the latest checkpoint), as train() and evaluate() callbacks see.
"""

import keras
import numpy as np
import tensorflow as tf

import keras_estimator as ke
from tests.callbacks._harness import X, build_model, dataset


class _Peek(keras.callbacks.Callback):
    def on_predict_begin(self, logs=None):
        self.model_seen = self.model
        self.weights = [np.array(w) for w in self.model.get_weights()]
        self.params_seen = self.params


def test_a_predict_callback_sees_the_keras_model_and_params(tmp_path):
    est = ke.model_to_estimator(build_model(), model_dir=str(tmp_path))
    est.train(dataset, steps=3)
    peek = _Peek()
    predictions = list(
        est.predict(lambda: tf.data.Dataset.from_tensor_slices({"x": X[:4]}).batch(2), callbacks=[peek])
    )
    assert len(predictions) == 4
    assert isinstance(peek.model_seen, keras.Model)
    trained = ke.keras_model_from_estimator(est).get_weights()
    assert len(peek.weights) == len(trained) > 0
    for mine, theirs in zip(peek.weights, trained, strict=True):
        np.testing.assert_array_equal(mine, theirs)
    assert peek.params_seen == {"verbose": "auto", "epochs": 1, "steps": None}
