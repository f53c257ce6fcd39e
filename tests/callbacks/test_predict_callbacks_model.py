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


class _BatchLogs(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.logs = []

    def on_predict_batch_end(self, batch, logs=None):
        self.logs.append({key: np.array(value) for key, value in logs.items()})


def _assert_same_logs(ours, keras_logs):
    assert len(ours) == len(keras_logs) > 0
    for mine, theirs in zip(ours, keras_logs, strict=True):
        assert sorted(mine) == sorted(theirs)
        for key in mine:
            np.testing.assert_allclose(mine[key], theirs[key], rtol=1e-6)


def test_batch_logs_of_a_dict_of_outputs_are_keras_predicts(tmp_path):
    # Keras flattens a dict of outputs into the logs, one key per output.
    keras.utils.set_random_seed(5)
    inputs = keras.Input((4,), name="x")
    model = keras.Model(
        inputs, {"a": keras.layers.Dense(2)(inputs), "b": keras.layers.Dense(1)(inputs)}
    )
    model.compile("sgd", "mse")
    theirs = _BatchLogs()
    model.predict(X[:6], batch_size=3, callbacks=[theirs], verbose=0)
    est = ke.model_to_estimator(model, model_dir=str(tmp_path))
    ours = _BatchLogs()
    list(
        est.predict(
            lambda: tf.data.Dataset.from_tensor_slices({"x": X[:6]}).batch(3), callbacks=[ours]
        )
    )
    _assert_same_logs(ours.logs, theirs.logs)
    assert sorted(ours.logs[0]) == ["a", "b"]


def test_batch_logs_of_one_predicted_tensor_are_under_outputs_as_in_keras(tmp_path):
    # A model_fn predicting one tensor: Keras' key `outputs`, as for a
    # single-output model in Keras' predict.
    def model_fn(features, labels, mode):
        logits = ke.compat.layers.dense(features["x"], 3, name="logits")
        return ke.EstimatorSpec(mode, predictions=logits)

    est = ke.Estimator(model_fn, model_dir=str(tmp_path))
    ours = _BatchLogs()
    predicted = list(
        est.predict(
            lambda: tf.data.Dataset.from_tensor_slices({"x": X[:6]}).batch(3),
            callbacks=[ours],
            yield_single_examples=False,
        )
    )
    assert [sorted(logs) for logs in ours.logs] == [["outputs"], ["outputs"]]
    for logs, batch in zip(ours.logs, predicted, strict=True):
        np.testing.assert_array_equal(logs["outputs"], batch)
