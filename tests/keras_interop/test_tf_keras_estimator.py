"""`tf.keras.estimator.model_to_estimator`, the path of the Keras tutorials."""

import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as ke
from tests._models import make_data

X, Y = make_data()


def _sequential():
    # Built the tutorials' way: the first layer takes `input_shape`.
    tf.keras.utils.set_random_seed(3)
    model = tf.keras.models.Sequential(
        [
            tf.keras.layers.Dense(8, activation="relu", input_shape=(4,), name="hidden"),
            tf.keras.layers.Dense(3),
        ]
    )
    model.compile(
        optimizer=tf.keras.optimizers.Adam(0.05),
        loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=["accuracy"],
    )
    return model


def _input_fn(key, repeat=True):
    def input_fn():
        dataset = tf.data.Dataset.from_tensor_slices(({key: X}, Y))
        return (dataset.repeat() if repeat else dataset).batch(16)

    return input_fn


def test_install_exposes_model_to_estimator_under_tf_keras():
    assert not hasattr(tf.keras, "estimator")
    with ke.install():
        assert tf.keras.estimator.model_to_estimator is ke.model_to_estimator
        assert tf.compat.v1.keras.estimator.model_to_estimator is ke.model_to_estimator
    assert not hasattr(tf.keras, "estimator")


@pytest.mark.parametrize("key", ["hidden_input", "whatever"])
def test_sequential_takes_the_keras_2_input_name_or_a_single_key(tmp_path, key):
    with ke.install():
        est = tf.keras.estimator.model_to_estimator(
            keras_model=_sequential(), model_dir=str(tmp_path)
        )
    est.train(_input_fn(key), steps=40)
    results = est.evaluate(_input_fn(key, repeat=False))
    assert results["global_step"] == 40
    # Trained on the features given: well above the 1/3 of guessing.
    assert results["accuracy"] > 0.6
    predictions = list(est.predict(lambda: tf.data.Dataset.from_tensor_slices({key: X}).batch(8)))
    assert len(predictions) == len(X)


def test_legacy_name_is_chosen_among_other_keys(tmp_path):
    est = ke.model_to_estimator(keras_model=_sequential(), model_dir=str(tmp_path))
    noise = np.full_like(X, 1e6)

    def input_fn():
        features = {"hidden_input": X, "unused": noise}
        return tf.data.Dataset.from_tensor_slices((features, Y)).repeat().batch(16)

    est.train(input_fn, steps=40)
    assert est.evaluate(input_fn, steps=4)["accuracy"] > 0.6


def test_several_keys_none_naming_the_input_is_an_error(tmp_path):
    est = ke.model_to_estimator(keras_model=_sequential(), model_dir=str(tmp_path))

    def input_fn():
        return tf.data.Dataset.from_tensor_slices(({"a": X, "b": X}, Y)).batch(16)

    # tf.estimator 2.15's KeyError (a ValueError too), naming the keys.
    with pytest.raises(KeyError, match=r"features keys: \['a', 'b'\]\n\tMissed keys"):
        est.train(input_fn, steps=1)
