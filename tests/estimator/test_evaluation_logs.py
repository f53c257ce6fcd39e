"""The INFO lines train() and evaluate() log, in tf.estimator 2.15's words and numbers.

2.15's lines for the program below (its own run: tensorflow-estimator 2.15.0 on
TF 2.15.1, `tf.compat.v1.logging.set_verbosity(INFO)`): w starts at 0.5, two
SGD steps (rate 0.01) over x = 0..7 in batches of 4 against labels 1, then

    Loss for final step: 3.2732878.
    Starting evaluation at 2026-11-27T03:43:24
    Inference Time : 0.09151s
    Finished evaluation at 2026-11-27-03:43:24
    Saving dict for global step 2: global_step = 2, loss = 0.45184618, mae = 0.5863

and, for `evaluate(name='val', steps=1)`:

    Saving dict for global step 2: global_step = 2, loss = 0.42132923, mae = 0.560275

Each printed once per call; numbers are numpy's text of float32 values.
"""

from __future__ import annotations

import logging
import re

import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as ke


class Recorder(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.NOTSET)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


@pytest.fixture
def info_lines():
    """INFO lines of the package, as a handler on TensorFlow's logger gets them."""
    tf_logger = logging.getLogger("tensorflow")
    saved_level = tf_logger.level
    recorder = Recorder()
    tf_logger.addHandler(recorder)
    tf_logger.setLevel(logging.INFO)
    yield recorder.lines
    tf_logger.removeHandler(recorder)
    tf_logger.setLevel(saved_level)


def _input_fn():
    x = np.arange(8, dtype=np.float32).reshape(8, 1)
    return tf.data.Dataset.from_tensor_slices(
        ({"x": x}, np.ones((8, 1), np.float32))
    ).batch(4)


def _model_fn(features, labels, mode):
    w = tf.compat.v1.get_variable(
        "w", [1, 1], initializer=tf.compat.v1.constant_initializer(0.5)
    )
    prediction = tf.matmul(features["x"], w)
    loss = tf.reduce_mean(tf.square(prediction - labels))
    train_op = tf.compat.v1.train.GradientDescentOptimizer(0.01).minimize(
        loss, tf.compat.v1.train.get_global_step()
    )
    return ke.EstimatorSpec(
        mode,
        loss=loss,
        train_op=train_op,
        eval_metric_ops={
            "mae": tf.compat.v1.metrics.mean_absolute_error(labels, prediction)
        },
    )


def _matching(lines, pattern):
    return [line for line in lines if re.fullmatch(pattern, line)]


def test_train_and_evaluate_log_2_15s_lines_once_with_float32_text(
    tmp_path, info_lines
):
    est = ke.Estimator(_model_fn, model_dir=str(tmp_path))
    est.train(_input_fn, steps=3)
    assert _matching(info_lines, r"Loss for final step: .*") == [
        "Loss for final step: 3.2732878."
    ]
    del info_lines[:]

    est.evaluate(_input_fn)
    assert _matching(info_lines, r"Saving dict for global step .*") == [
        "Saving dict for global step 2: global_step = 2, loss = 0.45184618, "
        "mae = 0.5863"
    ]
    starting = _matching(
        info_lines, r"Starting evaluation at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d"
    )
    inference = _matching(info_lines, r"Inference Time : \d+\.\d{5}s")
    finished = _matching(
        info_lines, r"Finished evaluation at \d{4}-\d\d-\d\d-\d\d:\d\d:\d\d"
    )
    assert len(starting) == len(inference) == len(finished) == 1
    # 2.15's order: started, timed, finished, then the dict saved.
    order = [info_lines.index(line) for line in (*starting, *inference, *finished)]
    saving = info_lines.index(_matching(info_lines, r"Saving dict .*")[0])
    assert order == sorted(order) and order[-1] < saving
    del info_lines[:]

    est.evaluate(_input_fn, name="val", steps=1)
    assert _matching(info_lines, r"Saving dict for global step .*") == [
        "Saving dict for global step 2: global_step = 2, loss = 0.42132923, "
        "mae = 0.560275"
    ]


def test_evaluation_that_fails_logs_no_finished_line(tmp_path, info_lines):
    est = ke.Estimator(_model_fn, model_dir=str(tmp_path))
    est.train(_input_fn, steps=1)
    del info_lines[:]

    class Boom(ke.SessionRunHook):
        def after_run(self, run_context, run_values):
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        est.evaluate(_input_fn, hooks=[Boom()])
    assert _matching(info_lines, r"Starting evaluation at .*")
    assert not _matching(info_lines, r"Finished evaluation at .*")
    assert not _matching(info_lines, r"Saving dict .*")


def test_saved_dict_prints_numpy_text_sorted_and_leaves_bytes_out():
    from keras_estimator._src.estimator import eval_summary

    logger = logging.getLogger("keras_estimator")
    recorder = Recorder()
    logger.addHandler(recorder)
    saved = logger.level
    logger.setLevel(logging.INFO)
    try:
        eval_summary.log_saved_dict(
            {
                "z": np.float64(0.1),
                "loss": 0.45184618,  # Keras' Python float of a float32 mean
                "a": np.float32(1) / 3,
                "image": b"\x00",
                "global_step": 7,
                "m": np.array([1.5, 2.0], np.float32),
            },
            7,
        )
    finally:
        logger.removeHandler(recorder)
        logger.setLevel(saved)
    assert recorder.lines == [
        "Saving dict for global step 7: a = 0.33333334, global_step = 7, "
        "loss = 0.45184618, m = [1.5 2. ], z = 0.1"
    ]
