"""Receiver keys that are no Python names (`image/encoded`) export as in 2.15.

2.15 wrote SignatureDefs with any receiver key; a TF2 signature function
names its arguments with Python names. The export now saves such an input
under a valid argument name and gives the SignatureDef its key back, so
both TF2's loader and a TF1 session serve it by the key. The expected
figure is tf.estimator 2.15's (tensorflow-cpu 2.15.1, tensorflow-estimator
2.15.0): the same program served 6.0 for 3.0 under each of these keys.
"""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

import keras_estimator

v1 = tf.compat.v1


def _model_fn(features, labels, mode):
    w = v1.get_variable("w", [], initializer=v1.constant_initializer(2.0))
    if isinstance(features, dict):
        features = sum(features.values())
    p = features * w
    return keras_estimator.EstimatorSpec(
        mode,
        predictions={"p": p},
        loss=tf.reduce_sum(p),
        train_op=v1.assign_add(v1.train.get_global_step(), 1),
    )


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    est = keras_estimator.Estimator(_model_fn, str(tmp_path_factory.mktemp("model")))
    est.train(lambda: (tf.constant([[1.0]]), None), steps=1)
    return est


def _export(est, tmp_path, receiver_tensors, features):
    def receiver_fn():
        tensors = receiver_tensors()
        return keras_estimator.export.ServingInputReceiver(features(tensors), tensors)

    path = est.export_saved_model(str(tmp_path), receiver_fn)
    return path.decode() if isinstance(path, bytes) else path


def _served_in_a_tf1_session(path, feeds):
    with tf.Graph().as_default() as graph, v1.Session(graph=graph) as session:
        signature = v1.saved_model.load(session, ["serve"], path).signature_def[
            "serving_default"
        ]
        assert sorted(signature.inputs) == sorted(feeds)
        return session.run(
            signature.outputs["p"].name,
            {signature.inputs[key].name: value for key, value in feeds.items()},
        )


@pytest.mark.parametrize("key", ["in", "input-1", "image/encoded", "x y", "0input"])
def test_the_signature_keeps_the_key_and_serves_2_15s_value(trained, tmp_path, key):
    def tensors():
        return {key: v1.placeholder(tf.float32, [None, 1])}

    path = _export(trained, tmp_path, tensors, lambda t: t[key])
    np.testing.assert_allclose(_served_in_a_tf1_session(path, {key: [[3.0]]}), [[6.0]])
    served = tf.saved_model.load(path).signatures["serving_default"]
    # TensorFlow's loader takes the key (a keyword, which no call can pass
    # by name, under the name with `_`).
    call_key = key + "_" if key == "in" else key
    out = served(**{call_key: tf.constant([[3.0]])})
    np.testing.assert_allclose(out["p"].numpy(), [[6.0]])


def test_keys_that_would_get_one_name_stay_apart(trained, tmp_path):
    def tensors():
        return {
            "input-1": v1.placeholder(tf.float32, [None, 1]),
            "input_1": v1.placeholder(tf.float32, [None, 1]),
        }

    path = _export(
        trained, tmp_path, tensors, lambda t: {"a": t["input-1"], "b": 10 * t["input_1"]}
    )
    served = _served_in_a_tf1_session(path, {"input-1": [[1.0]], "input_1": [[2.0]]})
    np.testing.assert_allclose(served, [[2.0 * (1.0 + 20.0)]])
