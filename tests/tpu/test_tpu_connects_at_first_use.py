"""TPUEstimator(use_tpu=True) contacts its TPU at first use, as tf.estimator 2.15 did.

2.15 made a TPUEstimator without contacting `master` (its session reached
the address when train/evaluate/predict ran). Here TensorFlow's connect and
resolver are replaced by recorders, so no test contacts any address: the
connect raises a recognisable error, which shows when it was called.
"""

import pytest
import tensorflow as tf

from keras_estimator.compat.estimator import tpu


class StubbedConnect(Exception):
    """Raised by the stand-in for tf.config.experimental_connect_to_cluster."""


@pytest.fixture
def calls(monkeypatch):
    made = []

    class Resolver:
        def __init__(self, tpu=None, *args, **kwargs):
            made.append(("resolver", tpu))

        def master(self):
            return "grpc://127.0.0.1:8470"

    def connect(resolver, *args, **kwargs):
        made.append(("connect", resolver))
        raise StubbedConnect("stubbed: no address contacted")

    def initialize(*args, **kwargs):
        made.append(("initialize", args))

    monkeypatch.setattr(tf.distribute.cluster_resolver, "TPUClusterResolver", Resolver)
    monkeypatch.setattr(tf.config, "experimental_connect_to_cluster", connect)
    monkeypatch.setattr(tf.tpu.experimental, "initialize_tpu_system", initialize)
    return made


def model_fn(features, labels, mode, params):
    raise AssertionError("model_fn is not reached before the TPU is connected")


def input_fn(params):
    return tf.data.Dataset.from_tensors(({"x": [1.0]}, [1.0])).repeat()


def test_making_a_tpu_estimator_contacts_no_address_and_train_connects_once(
    tmp_path, calls
):
    config = tpu.RunConfig(master="grpc://127.0.0.1:8470", model_dir=str(tmp_path))
    estimator = tpu.TPUEstimator(
        model_fn=model_fn, config=config, use_tpu=True, train_batch_size=8
    )
    assert calls == []
    with pytest.raises(StubbedConnect):
        estimator.train(input_fn, steps=1)
    assert [kind for kind, _ in calls] == ["resolver", "connect"]
    assert calls[0][1] == "grpc://127.0.0.1:8470"
    # Not connected: the next call tries again, as a new 2.15 session would.
    with pytest.raises(StubbedConnect):
        estimator.evaluate(input_fn, steps=1)
    assert [kind for kind, _ in calls].count("connect") == 2


def test_predict_connects_when_its_first_prediction_is_asked_for(tmp_path, calls):
    config = tpu.RunConfig(master="grpc://127.0.0.1:8470", model_dir=str(tmp_path))
    estimator = tpu.TPUEstimator(
        model_fn=model_fn, config=config, use_tpu=True, train_batch_size=8
    )
    predictions = estimator.predict(input_fn)
    assert calls == []
    with pytest.raises(StubbedConnect):
        next(predictions)
    assert [kind for kind, _ in calls] == ["resolver", "connect"]


def test_use_tpu_false_never_connects(tmp_path, calls):
    def linear_model_fn(features, labels, mode, params):
        weight = tf.Variable(0.0)
        loss = tf.reduce_mean((weight * features["x"] - labels) ** 2)
        step = tf.compat.v1.train.get_or_create_global_step()
        train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
            loss, global_step=step
        )
        return tpu.TPUEstimatorSpec(mode, loss=loss, train_op=train_op)

    config = tpu.RunConfig(master="grpc://127.0.0.1:8470", model_dir=str(tmp_path))
    estimator = tpu.TPUEstimator(
        model_fn=linear_model_fn, config=config, use_tpu=False, train_batch_size=8
    )
    estimator.train(input_fn, steps=2)
    assert estimator.get_variable_value("global_step") == 2
    assert calls == []
