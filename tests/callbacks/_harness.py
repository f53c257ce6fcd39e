"""The differential harness: one Keras callback in `Model.fit` and in
`model_to_estimator(model).train`, on the same model, seed and batches.

`twin_models()` builds the same compiled model twice (same seed, so the same
initial weights); `fit_run` and `estimator_run` train one of them each for
`steps` steps on the same batches and return what the callbacks left behind
for the test to compare.
"""

import contextlib
import io
import re
import tempfile

import keras
import numpy as np
import tensorflow as tf

import keras_estimator as ke
from tests._models import make_data

X, Y = make_data(num_examples=32)
BATCH = 8


def build_model(seed=3, optimizer=None):
    keras.utils.set_random_seed(seed)
    inputs = keras.Input((4,), name="x")
    hidden = keras.layers.Dense(5, activation="relu", name="hidden")(inputs)
    outputs = keras.layers.Dense(3, name="logits")(hidden)
    model = keras.Model(inputs, outputs)
    model.compile(
        optimizer=optimizer() if optimizer else keras.optimizers.SGD(0.1),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=["accuracy"],
        jit_compile=False,
    )
    return model


def dataset():
    return tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).batch(BATCH).repeat()


def fit_run(model, steps, callbacks):
    return model.fit(
        dataset(), steps_per_epoch=steps, epochs=1, verbose=0, shuffle=False,
        callbacks=callbacks,
    )


def estimator_run(model, steps, callbacks, model_dir=None, config=None, **train_kwargs):
    estimator = ke.model_to_estimator(
        model, model_dir=model_dir or tempfile.mkdtemp(), config=config
    )
    estimator.train(dataset, steps=steps, callbacks=callbacks, **train_kwargs)
    return estimator


def assert_same_arrays(mine, theirs):
    assert len(mine) == len(theirs)
    for a, b in zip(mine, theirs, strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def estimator_weights(estimator):
    return ke.keras_model_from_estimator(estimator).get_weights()


def printed(run):
    """What `run()` prints, with the timings (which differ from run to run:
    seconds, ms or us per step) replaced by T."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        run()
    return re.sub(r"\d+(\.\d+)?[mu]?s(/step)?", "T", out.getvalue())
