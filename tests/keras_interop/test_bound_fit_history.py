"""The History a model_fn model's `fit` returns is the one `fit` returns.

`model_fn_to_keras(...).fit(dataset, steps_per_epoch=N, verbose=V)` runs
`Estimator.train`; the oracle is `fit` on an equivalent Keras model: its
History's keys are the logs' keys (the loop's global step is none of
them) and its params are `{"verbose": V, "epochs": 1, "steps": N}`.
"""

import keras
import numpy as np
import tensorflow as tf

import keras_estimator as ke

_X = np.random.RandomState(0).randn(32, 4).astype(np.float32)
_Y = (np.random.RandomState(1).rand(32) * 3).astype(np.int64)


def _dataset():
    return tf.data.Dataset.from_tensor_slices(({"x": _X}, _Y)).batch(8).repeat()


def _model_fn(features, labels, mode):
    logits = keras.layers.Dense(3, use_bias=False, kernel_initializer="zeros", name="w")(
        features["x"]
    )
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
    train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
        loss, global_step=tf.compat.v1.train.get_global_step()
    )
    return ke.EstimatorSpec(mode, loss=loss, train_op=train_op)


def _twin():
    inputs = keras.Input((4,), name="x")
    outputs = keras.layers.Dense(3, use_bias=False, kernel_initializer="zeros", name="w")(inputs)
    model = keras.Model(inputs, outputs)
    model.compile(
        optimizer=keras.optimizers.SGD(0.1),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    )
    return model


def test_history_keys_values_and_params_are_fits(tmp_path):
    theirs = _twin().fit(_dataset(), steps_per_epoch=3, verbose=0)
    mine = ke.model_fn_to_keras(_model_fn, model_dir=str(tmp_path)).fit(
        _dataset(), steps_per_epoch=3, verbose=0
    )
    assert sorted(mine.history) == sorted(theirs.history) == ["loss"]
    assert mine.params == theirs.params == {"verbose": 0, "epochs": 1, "steps": 3}
