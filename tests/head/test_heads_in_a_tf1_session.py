"""A head's EVAL spec run in the program's own TF1 graph and Session.

tf.estimator 2.15's head tests build `create_estimator_spec` in a
`tf.Graph()` and run the `eval_metric_ops` with a `Session`: running the
update ops updates the metrics, and the value ops then read them. The
expected numbers are 2.15's (binary_class_head_test's test_eval, and the
same regression calls run in the reference venv).
"""

import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as ke

FEATURES = {"x": np.array(((42,),), dtype=np.int32)}


def _metric_values(head, logits, labels, updates):
    with tf.Graph().as_default():
        spec = head.create_estimator_spec(
            features=FEATURES, mode=ke.ModeKeys.EVAL, logits=logits, labels=labels
        )
        values = {key: ops[0] for key, ops in spec.eval_metric_ops.items()}
        update_ops = {key: ops[1] for key, ops in spec.eval_metric_ops.items()}
        with tf.compat.v1.Session() as session:
            session.run(
                [
                    tf.compat.v1.global_variables_initializer(),
                    tf.compat.v1.local_variables_initializer(),
                ]
            )
            loss = session.run(spec.loss)
            for _ in range(updates):
                session.run(update_ops)
            return loss, {key: float(session.run(value)) for key, value in values.items()}


def test_binary_head_metrics_read_what_the_update_ops_ran():
    logits = np.array(((45,), (-41,)), dtype=np.float32)
    labels = np.array(((1,), (1,)), dtype=np.int32)
    loss, metrics = _metric_values(ke.BinaryClassHead(), logits, labels, updates=1)
    assert loss == pytest.approx(20.5)
    assert metrics == pytest.approx(
        {
            "average_loss": 20.5,
            "accuracy": 0.5,
            "precision": 1.0,
            "recall": 0.5,
            "prediction/mean": 0.5,
            "label/mean": 1.0,
            "accuracy_baseline": 1.0,
            "auc": 0.0,
            "auc_precision_recall": 1.0,
        },
        abs=1e-4,
    )


def test_regression_head_metrics_before_and_after_two_updates():
    logits = np.array(((45.0,), (41.0,)), dtype=np.float32)
    labels = np.array(((43.0,), (44.0,)), dtype=np.float32)
    head = ke.RegressionHead()
    _, before = _metric_values(head, logits, labels, updates=0)
    assert before == {"average_loss": 0.0, "prediction/mean": 0.0, "label/mean": 0.0}
    _, after = _metric_values(head, logits, labels, updates=2)
    assert after == pytest.approx(
        {"average_loss": 6.5, "prediction/mean": 43.0, "label/mean": 43.5}
    )


def test_multi_label_head_checks_labels_fed_with_unknown_shape():
    # 2.15's multi_label_head_test: labels of unknown rank, fed at run time,
    # are checked when the loss runs. Rank-1 labels [2] failed 2.15's rank
    # check; they must not broadcast against the expected shape [2, 2].
    head = ke.MultiLabelHead(n_classes=2)
    logits = np.array(((-1.0, 1.0), (-1.5, 1.5)), dtype=np.float32)
    with tf.Graph().as_default():
        labels = tf.compat.v1.placeholder(dtype=tf.int64)
        loss = head.loss(logits=logits, labels=labels, features=FEATURES, mode=ke.ModeKeys.EVAL)
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.local_variables_initializer())
            good = session.run(loss, {labels: np.array(((1, 0), (1, 1)), dtype=np.int64)})
            assert np.isfinite(good)
            with pytest.raises(
                tf.errors.InvalidArgumentError,
                match=r"\[expected_labels_shape: \] \[2 2\] \[labels_shape: \] \[2 1\]",
            ):
                session.run(loss, {labels: np.array(((1,), (1,)), dtype=np.int64)})
            with pytest.raises(
                tf.errors.InvalidArgumentError,
                match=r"labels shape must be \[D0, D1, ... DN, 2\]\..*\[Received shape: \] \[2\]",
            ):
                session.run(loss, {labels: np.array((1, 1), dtype=np.int64)})
