"""Exports and object-based checkpoints leave Python's root logger unconfigured.

`tf.saved_model.save` and `tf.train.Checkpoint.write` log through absl,
which gives an unconfigured root logger a handler (`logging.basicConfig()`):
every INFO line of TensorFlow's logger, and of this package, was then
printed twice for the rest of the program. tf.estimator 2.15's export added
no handler.
"""

from __future__ import annotations

import logging

import numpy as np
import tensorflow as tf

import keras_estimator as ke
from tests.checkpoint.test_object_checkpoint import two_dense_model_fn

_X = np.linspace(-1, 1, 8).reshape(-1, 1).astype(np.float32)


def _input_fn():
    return tf.data.Dataset.from_tensor_slices(({"x": _X}, 2 * _X)).batch(4)


def _serving_input_receiver_fn():
    x = tf.compat.v1.placeholder(tf.float32, [None, 1], name="x")
    return ke.export.ServingInputReceiver({"x": x}, {"x": x})


def _model_fn(features, labels, mode):
    w = tf.compat.v1.get_variable("w", [1, 1])
    predictions = tf.matmul(features["x"], w)
    if mode == ke.ModeKeys.PREDICT:
        return ke.EstimatorSpec(mode, predictions={"y": predictions})
    loss = tf.reduce_mean(tf.square(predictions - labels))
    train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
        loss, global_step=tf.compat.v1.train.get_global_step()
    )
    return ke.EstimatorSpec(mode, loss=loss, train_op=train_op)


def _unconfigured_root(monkeypatch):
    # Inside the test: pytest's own capture handlers, which it adds to the
    # root logger for each phase, would configure it.
    root = logging.getLogger()
    monkeypatch.setattr(root, "handlers", [])
    return root


class _RootHandlersSeen(logging.Handler):
    """Notes, for each of TensorFlow's log records, the root logger's printing handlers."""

    def __init__(self):
        super().__init__()
        self.seen = []

    def emit(self, record):
        printing = [h for h in logging.getLogger().handlers if isinstance(h, logging.StreamHandler)]
        self.seen.append((record.getMessage(), printing))


def test_an_export_adds_no_root_handler(tmp_path, monkeypatch):
    unconfigured_root = _unconfigured_root(monkeypatch)
    est = ke.Estimator(_model_fn, str(tmp_path / "model"))
    est.train(_input_fn, steps=2)
    tf_logger = tf.get_logger()
    seen = _RootHandlersSeen()
    monkeypatch.setattr(tf_logger, "level", logging.INFO)
    tf_logger.addHandler(seen)
    try:
        est.export_saved_model(str(tmp_path / "export"), _serving_input_receiver_fn)
    finally:
        tf_logger.removeHandler(seen)
    assert unconfigured_root.handlers == []
    # Not even while TensorFlow writes ("Assets written to: ..."): each of
    # its lines was printed by its own handler alone.
    assert any(message.startswith("Assets written to") for message, _ in seen.seen)
    assert [message for message, printing in seen.seen if printing] == []


def test_object_based_checkpoints_add_no_root_handler(tmp_path, monkeypatch):
    unconfigured_root = _unconfigured_root(monkeypatch)
    est = ke.Estimator(two_dense_model_fn, str(tmp_path / "model"))
    est.train(_input_fn, steps=2)
    assert tf.train.latest_checkpoint(str(tmp_path / "model")) is not None
    assert unconfigured_root.handlers == []


def test_a_configured_root_keeps_its_handlers(tmp_path, monkeypatch):
    root = logging.getLogger()
    mine = logging.NullHandler()
    monkeypatch.setattr(root, "handlers", [mine])
    est = ke.Estimator(_model_fn, str(tmp_path / "model"))
    est.train(_input_fn, steps=2)
    est.export_saved_model(str(tmp_path / "export"), _serving_input_receiver_fn)
    assert root.handlers == [mine]
