"""Lookup tables made in a model_fn are filled before the first step, as in 2.15.

2.15's Scaffold ran `tables_initializer()` when its session started, so a
`tf.lookup.StaticHashTable` or `StaticVocabularyTable` built in the model_fn
worked in training, evaluation, prediction and export; here the steps
stopped with "Table not initialized". The expected figures are tf.estimator
2.15's (tensorflow-cpu 2.15.1, tensorflow-estimator 2.15.0) on the same
program: a word's index in a three-word vocabulary plus a variable at 10.
"""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

import keras_estimator

v1 = tf.compat.v1

_WORDS = ["emerson", "lake", "palmer"]


def _input_fn():
    return {"w": tf.constant([["lake"], ["palmer"]])}, tf.constant([[1.0], [2.0]])


def _predict_input_fn():
    return tf.data.Dataset.from_tensors({"w": tf.constant([["lake"], ["palmer"]])})


def _tables(vocabulary_file):
    def text_file():
        return tf.lookup.TextFileInitializer(
            vocabulary_file,
            tf.string,
            tf.lookup.TextFileIndex.WHOLE_LINE,
            tf.int64,
            tf.lookup.TextFileIndex.LINE_NUMBER,
        )

    return {
        "key_value": lambda: tf.lookup.StaticHashTable(
            tf.lookup.KeyValueTensorInitializer(
                tf.constant(_WORDS), tf.constant([0, 1, 2], tf.int64)
            ),
            -1,
        ),
        "text_file": lambda: tf.lookup.StaticHashTable(text_file(), -1),
        "vocabulary": lambda: tf.lookup.StaticVocabularyTable(text_file(), num_oov_buckets=1),
    }


def _model_fn_of(make_table):
    def model_fn(features, labels, mode):
        ids = tf.cast(make_table().lookup(features["w"]), tf.float32)
        v = v1.get_variable("v", initializer=10.0)
        predictions = tf.reshape(ids, [-1]) + v
        return keras_estimator.EstimatorSpec(
            mode,
            predictions={"p": predictions},
            loss=tf.reduce_mean(predictions),
            train_op=v1.assign_add(v1.train.get_global_step(), 1),
            eval_metric_ops={"m": v1.metrics.mean(predictions)},
            export_outputs={"out": keras_estimator.export.PredictOutput({"p": predictions})},
        )

    return model_fn


@pytest.fixture()
def vocabulary_file(tmp_path):
    path = tmp_path / "vocabulary.txt"
    path.write_text("\n".join(_WORDS) + "\n")
    return str(path)


@pytest.mark.parametrize("kind", ["key_value", "text_file", "vocabulary"])
def test_train_evaluate_and_predict_give_2_15s_values(tmp_path, vocabulary_file, kind):
    est = keras_estimator.Estimator(
        _model_fn_of(_tables(vocabulary_file)[kind]), str(tmp_path / "model")
    )
    est.train(_input_fn, steps=1)
    assert [float(p["p"]) for p in est.predict(_predict_input_fn)] == [11.0, 12.0]
    assert est.evaluate(_input_fn, steps=1)["m"] == pytest.approx(11.5)


def test_the_export_serves_2_15s_values(tmp_path, vocabulary_file):
    est = keras_estimator.Estimator(
        _model_fn_of(_tables(vocabulary_file)["key_value"]), str(tmp_path / "model")
    )
    est.train(_input_fn, steps=1)

    def serving_input_fn():
        words = v1.placeholder(tf.string, [None, 1], name="w")
        return keras_estimator.export.ServingInputReceiver({"w": words}, {"w": words})

    path = est.export_saved_model(str(tmp_path / "export"), serving_input_fn)
    served = tf.saved_model.load(path.decode() if isinstance(path, bytes) else path)
    out = served.signatures["serving_default"](w=tf.constant([["palmer"], ["unknown"]]))
    np.testing.assert_array_equal(out["p"].numpy(), [12.0, 9.0])
