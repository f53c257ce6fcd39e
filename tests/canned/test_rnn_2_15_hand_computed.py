"""RNNClassifier evaluates tf.estimator 2.15's hand-computed checkpoints to its numbers.

tf.estimator 2.15's `rnn_test.py` (RNNClassifierEvaluationTest) wrote a
simple-RNN checkpoint by hand (kernel [[.1, -.2]], recurrent [[.2, -.3],
[.3, -.4]], bias [.2, .5]) and checked `evaluate()` against numbers worked
out by hand. Its checkpoint used the variable names of an older Keras
(`rnn_model/rnn/kernel`), which 2.15 itself no longer restored; under 2.15's
names (`rnn_model/rnn/simple_rnn_cell/...`) tf.estimator 2.15.0 returns the
test's numbers in the reference venv, and so must this package.
"""


import numpy as np
import tensorflow as tf

import keras_estimator as ke
from tests.canned._tf1_checkpoints import write_tf1_checkpoint

CELL = "rnn_model/rnn/simple_rnn_cell/"


def _checkpoint(model_dir, dense_kernel, dense_bias):
    values = {
        CELL + "kernel": [[0.1, -0.2]],
        CELL + "recurrent_kernel": [[0.2, -0.3], [0.3, -0.4]],
        CELL + "bias": [0.2, 0.5],
        "rnn_model/logits/kernel": dense_kernel,
        "rnn_model/logits/bias": dense_bias,
    }
    return write_tf1_checkpoint(model_dir, values)


def _evaluate(model_dir, input_fn, **kwargs):
    estimator = ke.experimental.RNNClassifier(
        units=[2],
        sequence_feature_columns=[tf.feature_column.sequence_numeric_column("price", shape=(1,))],
        model_dir=model_dir,
        **kwargs,
    )
    return estimator.evaluate(input_fn, steps=1)


def _assert_metrics(got, want):
    assert sorted(got) == sorted(want)
    for key, value in want.items():
        np.testing.assert_allclose(got[key], value, rtol=1e-5, atol=1e-6, err_msg=key)


def _prices(values, indices):
    return {"price": tf.SparseTensor(indices=indices, values=values, dense_shape=[2, 2])}


def test_binary_evaluation(tmp_path):
    def input_fn():
        return _prices([10.0, 5.0, 2.0], [[0, 0], [0, 1], [1, 0]]), [[0], [1]]

    metrics = _evaluate(_checkpoint(tmp_path, [[-1.0], [1.0]], [0.3]), input_fn)
    # logits [[-0.603282], [0.019719]]
    _assert_metrics(metrics, {
        "global_step": 100, "loss": 0.559831, "average_loss": 0.559831,
        "accuracy": 1.0, "prediction/mean": 0.429262, "label/mean": 0.5,
        "accuracy_baseline": 0.5, "recall": 1.0, "precision": 1.0, "auc": 1.0,
        "auc_precision_recall": 1.0,
    })


def test_binary_evaluation_of_every_step(tmp_path):
    def input_fn():
        labels = tf.SparseTensor(
            indices=[[0, 0], [0, 1], [1, 0]], values=[0, 1, 0], dense_shape=[2, 2]
        )
        return _prices([10.0, 5.0, 2.0], [[0, 0], [0, 1], [1, 0]]), labels

    metrics = _evaluate(
        _checkpoint(tmp_path, [[-1.0], [1.0]], [0.3]), input_fn, return_sequences=True
    )
    # logits [[[-1.4388], [-0.6033]], [[0.0197], [masked]]]
    _assert_metrics(metrics, {
        "global_step": 100, "loss": 0.651841, "average_loss": 0.651841,
        "accuracy": 1.0 / 3, "prediction/mean": 0.350085, "label/mean": 1.0 / 3,
        "accuracy_baseline": 2.0 / 3, "recall": 0.0, "precision": 0.0, "auc": 0.5,
        "auc_precision_recall": 0.30685282,
    })


def test_three_class_evaluation(tmp_path):
    def input_fn():
        return _prices([10.0, 5.0, 2.0, 7.0], [[0, 0], [0, 1], [1, 0], [1, 1]]), [[0], [1]]

    model_dir = _checkpoint(
        tmp_path, [[-1.0, 0.5, 0.2], [1.0, -0.3, 0.1]], [0.3, 0.4, 0.5]
    )
    metrics = _evaluate(model_dir, input_fn, n_classes=3)
    _assert_metrics(metrics, {
        "global_step": 100, "loss": 1.331465, "average_loss": 1.331466, "accuracy": 0.5,
    })
