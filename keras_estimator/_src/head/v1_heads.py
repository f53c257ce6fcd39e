"""The heads of `tf.compat.v1.estimator`'s canned classifiers and regressors.

tf.estimator 2.15's v1 DNN, Linear, Baseline and DNNLinearCombined classes
did not build the `tf.estimator` heads (`BinaryClassHead`, ...) but the older
heads of its canned/head.py. Their losses, predictions and signatures are
the same; they differ in:

- `loss_reduction`: any `tf.compat.v1.losses.Reduction` but NONE, summed
  ("weighted_sum") by default. "weighted_mean" divides the summed loss by the
  summed weights, "weighted_sum_by_nonzero_weights" by the count of non-zero
  weights (each broadcast over the label dimension), both 0 when that is 0;
- the binary head's `auc` and `auc_precision_recall`:
  `tf.compat.v1.metrics.auc`, whose ratios carry an epsilon (an evaluation
  of negative labels only has an `auc` of 1, not 0) and whose PR curve is
  summed by the trapezoidal rule, not interpolated;
- the phrases of bad labels' errors: "Labels must <= n_classes - 1" and
  "Labels must >= 0".
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import keras
import numpy as np
import tensorflow as tf

from keras_estimator._src.head import base_head, head_inputs
from keras_estimator._src.head.classification_heads import (
    BinaryClassHead,
    MultiClassHead,
)
from keras_estimator._src.head.regression_heads import RegressionHead

# tf.compat.v1.losses.Reduction's values, and the head reductions they are.
WEIGHTED_SUM = "weighted_sum"
SUM_OVER_BATCH_SIZE = "weighted_sum_over_batch_size"
WEIGHTED_MEAN = "weighted_mean"
SUM_BY_NONZERO_WEIGHTS = "weighted_sum_by_nonzero_weights"
_HEAD_REDUCTIONS = {
    WEIGHTED_SUM: base_head.SUM,
    SUM_OVER_BATCH_SIZE: base_head.SUM_OVER_BATCH_SIZE,
    WEIGHTED_MEAN: base_head.WEIGHTED_MEAN,
    SUM_BY_NONZERO_WEIGHTS: base_head.SUM_BY_NONZERO_WEIGHTS,
}
_LABEL_RANGE_PHRASES = ("Labels must <= n_classes - 1", "Labels must >= 0")

_THRESHOLD_EPSILON = 1e-7  # puts predictions of exactly 0 and 1 inside the curve
_RATIO_EPSILON = 1e-6


def head_reduction(loss_reduction: Any) -> str:
    """The head's reduction for a `tf.compat.v1.losses.Reduction` value."""
    if not isinstance(loss_reduction, str) or loss_reduction not in _HEAD_REDUCTIONS:
        raise ValueError(
            f"Invalid loss_reduction: {loss_reduction}. Give a "
            f"tf.compat.v1.losses.Reduction other than NONE: {sorted(_HEAD_REDUCTIONS)}."
        )
    return _HEAD_REDUCTIONS[loss_reduction]


class V1Auc(keras.metrics.Metric):
    """Area under the ROC or PR curve, as `tf.compat.v1.metrics.auc` computed it.

    Weighted true/false positive/negative counts at `num_thresholds`
    thresholds (`0 - 1e-7`, `i / (num_thresholds - 1)`, `1 + 1e-7`; a
    prediction above a threshold is positive; a label is positive when
    non-zero), summed with the trapezoidal rule. Recall and precision are
    `(tp + 1e-6) / (tp + fn + 1e-6)` and `(tp + 1e-6) / (tp + fp + 1e-6)`, the
    false positive rate `fp / (fp + tn + 1e-6)`.
    """

    def __init__(
        self,
        num_thresholds: int = 200,
        curve: str = "ROC",
        name: str = "auc",
        dtype: Any = None,
    ) -> None:
        super().__init__(name=name, dtype=dtype)
        if not isinstance(num_thresholds, int) or num_thresholds < 2:
            raise ValueError(f"num_thresholds must be an integer >= 2, got {num_thresholds!r}.")
        if curve not in ("ROC", "PR"):
            raise ValueError(f"curve must be 'ROC' or 'PR', got {curve!r}.")
        self._curve = curve
        inner = [(i + 1) / (num_thresholds - 1) for i in range(num_thresholds - 2)]
        self._thresholds = np.array(
            [-_THRESHOLD_EPSILON, *inner, 1.0 + _THRESHOLD_EPSILON], dtype=np.float32
        )
        self._counts = {
            name: self.add_variable(shape=(num_thresholds,), initializer="zeros", name=name)
            for name in ("true_positives", "false_positives", "true_negatives", "false_negatives")
        }

    def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> None:
        predictions = tf.reshape(tf.cast(y_pred, tf.float32), [1, -1])
        positive = tf.reshape(tf.cast(y_true, tf.bool), [1, -1])
        negative = tf.logical_not(positive)
        if sample_weight is None:
            weights = tf.ones_like(predictions)
        else:
            weights = tf.broadcast_to(
                tf.reshape(tf.cast(sample_weight, tf.float32), [1, -1]), tf.shape(predictions)
            )
        above = predictions > tf.constant(self._thresholds)[:, None]  # [thresholds, n]
        below = tf.logical_not(above)
        for name, mask in (
            ("true_positives", tf.logical_and(above, positive)),
            ("false_positives", tf.logical_and(above, negative)),
            ("true_negatives", tf.logical_and(below, negative)),
            ("false_negatives", tf.logical_and(below, positive)),
        ):
            self._counts[name].assign_add(
                tf.reduce_sum(tf.cast(mask, tf.float32) * weights, axis=1)
            )

    def result(self) -> Any:
        tp, fp, tn, fn = (
            tf.convert_to_tensor(self._counts[name])
            for name in ("true_positives", "false_positives", "true_negatives", "false_negatives")
        )
        recall = (tp + _RATIO_EPSILON) / (tp + fn + _RATIO_EPSILON)
        if self._curve == "ROC":
            x, y = fp / (fp + tn + _RATIO_EPSILON), recall
        else:
            x, y = recall, (tp + _RATIO_EPSILON) / (tp + fp + _RATIO_EPSILON)
        return tf.reduce_sum((x[:-1] - x[1:]) * (y[:-1] + y[1:]) / 2.0)

    def reset_state(self) -> None:
        for variable in self._counts.values():
            variable.assign(tf.zeros_like(variable))


class V1BinaryClassHead(BinaryClassHead):
    """2.15's v1 binary head: `BinaryClassHead` with v1's reductions, AUCs and phrases."""

    _label_range_phrases = _LABEL_RANGE_PHRASES

    def __init__(
        self,
        weight_column: Any = None,
        label_vocabulary: Sequence[str] | None = None,
        loss_reduction: str = WEIGHTED_SUM,
    ) -> None:
        super().__init__(weight_column=weight_column, label_vocabulary=label_vocabulary)
        self._loss_reduction = head_reduction(loss_reduction)

    def _roc_auc(self) -> keras.metrics.Metric:
        return V1Auc(curve="ROC", name="auc")

    def _precision_recall_auc(self) -> keras.metrics.Metric:
        return V1Auc(curve="PR", name="auc_precision_recall")


class V1MultiClassHead(MultiClassHead):
    """2.15's v1 multi-class head: `MultiClassHead` with v1's reductions and phrases."""

    _label_range_phrases = _LABEL_RANGE_PHRASES

    def __init__(
        self,
        n_classes: int,
        weight_column: Any = None,
        label_vocabulary: Sequence[str] | None = None,
        loss_reduction: str = WEIGHTED_SUM,
    ) -> None:
        super().__init__(
            n_classes, weight_column=weight_column, label_vocabulary=label_vocabulary
        )
        self._loss_reduction = head_reduction(loss_reduction)


class V1RegressionHead(RegressionHead):
    """2.15's v1 regression head: `RegressionHead` with v1's reductions."""

    def __init__(
        self,
        label_dimension: int = 1,
        weight_column: Any = None,
        loss_reduction: str = WEIGHTED_SUM,
    ) -> None:
        super().__init__(label_dimension=label_dimension, weight_column=weight_column)
        self._loss_reduction = head_reduction(loss_reduction)


def classification_head(
    n_classes: Any, weight_column: Any, label_vocabulary: Any, loss_reduction: Any
) -> base_head.Head:
    """The head a tf.compat.v1 canned classifier builds for `n_classes`."""
    n_classes = head_inputs.canned_n_classes(n_classes)
    if n_classes == 2:
        return V1BinaryClassHead(weight_column, label_vocabulary, loss_reduction)
    return V1MultiClassHead(n_classes, weight_column, label_vocabulary, loss_reduction)


def regression_head(
    label_dimension: int, weight_column: Any, loss_reduction: Any
) -> base_head.Head:
    """The head a tf.compat.v1 canned regressor builds."""
    return V1RegressionHead(label_dimension, weight_column, loss_reduction)
