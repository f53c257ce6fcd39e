"""The binary head of `BoostedTreesClassifier`, with tf.estimator 2.8's `auc_precision_recall`.

2.8's BoostedTreesClassifier (n_classes=2) did not use `BinaryClassHead`
but the older head of `tf.estimator`'s canned/head.py, whose
`auc_precision_recall` was `tf.compat.v1.metrics.auc(curve='PR')`: 200
thresholds and the trapezoidal rule over (recall, precision), each ratio
with 1e-6 added above and below. `BinaryClassHead`'s Keras `AUC` interpolates
the PR curve instead (Davis & Goadrich), which gives another number on the
same predictions (0.97597 for 2.8's 0.98287 on the breast-cancer model_dir of
`tests/fixtures/tf28_boosted_trees/`). Every other metric, the loss and the
predictions of the two heads are the same.
"""

from __future__ import annotations

from typing import Any

import keras
import numpy as np
import tensorflow as tf

from keras_estimator._src.head.classification_heads import BinaryClassHead

_THRESHOLD_EPSILON = 1e-7  # puts predictions of exactly 0 and 1 inside the curve
_RATIO_EPSILON = 1e-6


class TrapezoidalPrAuc(keras.metrics.Metric):
    """Area under the precision-recall curve, as `tf.compat.v1.metrics.auc(curve='PR')`.

    Weighted true positive, false positive and false negative counts at
    `num_thresholds` thresholds (`0 - 1e-7`, `i / (num_thresholds - 1)`,
    `1 + 1e-7`; a prediction above a threshold is positive), summed with the
    trapezoidal rule. Labels are positive when non-zero.
    """

    def __init__(
        self, num_thresholds: int = 200, name: str = "auc_precision_recall", dtype: Any = None
    ) -> None:
        super().__init__(name=name, dtype=dtype)
        if not isinstance(num_thresholds, int) or num_thresholds < 2:
            raise ValueError(f"num_thresholds must be an integer >= 2, got {num_thresholds!r}.")
        inner = [(i + 1) / (num_thresholds - 1) for i in range(num_thresholds - 2)]
        self._thresholds = np.array(
            [-_THRESHOLD_EPSILON, *inner, 1.0 + _THRESHOLD_EPSILON], dtype=np.float32
        )
        shape = (num_thresholds,)
        self.true_positives = self.add_variable(
            shape=shape, initializer="zeros", name="true_positives"
        )
        self.false_positives = self.add_variable(
            shape=shape, initializer="zeros", name="false_positives"
        )
        self.false_negatives = self.add_variable(
            shape=shape, initializer="zeros", name="false_negatives"
        )

    def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> None:
        predictions = tf.reshape(tf.cast(y_pred, tf.float32), [1, -1])
        positive = tf.reshape(tf.cast(y_true, tf.bool), [1, -1])
        if sample_weight is None:
            weights = tf.ones_like(predictions)
        else:
            weights = tf.broadcast_to(
                tf.reshape(tf.cast(sample_weight, tf.float32), [1, -1]), tf.shape(predictions)
            )
        above = predictions > tf.constant(self._thresholds)[:, None]  # [thresholds, n]

        def count(mask: tf.Tensor) -> tf.Tensor:
            return tf.reduce_sum(tf.cast(mask, tf.float32) * weights, axis=1)

        self.true_positives.assign_add(count(tf.logical_and(above, positive)))
        self.false_positives.assign_add(count(tf.logical_and(above, tf.logical_not(positive))))
        self.false_negatives.assign_add(count(tf.logical_and(tf.logical_not(above), positive)))

    def result(self) -> Any:
        tp = tf.convert_to_tensor(self.true_positives)
        fp = tf.convert_to_tensor(self.false_positives)
        fn = tf.convert_to_tensor(self.false_negatives)
        recall = (tp + _RATIO_EPSILON) / (tp + fn + _RATIO_EPSILON)
        precision = (tp + _RATIO_EPSILON) / (tp + fp + _RATIO_EPSILON)
        return tf.reduce_sum((recall[:-1] - recall[1:]) * (precision[:-1] + precision[1:]) / 2.0)

    def reset_state(self) -> None:
        for variable in (self.true_positives, self.false_positives, self.false_negatives):
            variable.assign(tf.zeros_like(variable))


class Tf28BinaryClassHead(BinaryClassHead):
    """`BinaryClassHead` whose `auc_precision_recall` is 2.8's (see the module)."""

    def _precision_recall_auc(self) -> keras.metrics.Metric:
        return TrapezoidalPrAuc(name="auc_precision_recall")
