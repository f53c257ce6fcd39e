"""`MultiClassHead` and `BinaryClassHead`, with tf.estimator 2.15's keys.

Predictions: `logits`, `probabilities`, `class_ids` ([batch, 1] int64),
`classes` ([batch, 1] strings: the label vocabulary's, or the ids as text),
`all_class_ids` and `all_classes`; a binary head adds `logistic`. Metrics:
`accuracy` and `average_loss`; a binary head adds `accuracy_baseline`, `auc`,
`auc_precision_recall`, `label/mean`, `precision`, `prediction/mean`,
`recall`, and per threshold `accuracy|precision|recall/positive_threshold_<t>`.
Signatures: `serving_default` and `classification` (scores and classes),
`predict`; a binary head adds `regression` (the logistic).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import keras
import tensorflow as tf

from keras_estimator._src.base import export_outputs
from keras_estimator._src.head import base_head
from keras_estimator._src.head.base_head import (
    CLASSIFY_SERVING_KEY,
    DEFAULT_SERVING_KEY,
    PREDICT_SERVING_KEY,
    REGRESS_SERVING_KEY,
)

LOGITS = "logits"
PROBABILITIES = "probabilities"
LOGISTIC = "logistic"
CLASS_IDS = "class_ids"
CLASSES = "classes"
ALL_CLASS_IDS = "all_class_ids"
ALL_CLASSES = "all_classes"


class MultiClassHead(base_head.WeightedHead):
    """Softmax cross-entropy over `n_classes` classes.

    Args:
        n_classes: at least 3 (use `BinaryClassHead` for 2).
        weight_column: a feature key (or numeric column) giving example weights.
        label_vocabulary: the string labels, in class-id order; without it,
            labels are class ids in `[0, n_classes)`.
        loss_reduction: "sum_over_batch_size" (default) or "sum".
        loss_fn: `loss_fn(labels, logits)` returning unreduced [batch, 1]
            losses, instead of the softmax cross-entropy.
        name: prefixes the metric keys (`<metric>/<name>`) when given.
    """

    def __init__(
        self,
        n_classes: int,
        weight_column: Any = None,
        label_vocabulary: Sequence[str] | None = None,
        loss_reduction: str = base_head.SUM_OVER_BATCH_SIZE,
        loss_fn: Any = None,
        name: str | None = None,
    ) -> None:
        if not isinstance(n_classes, int) or isinstance(n_classes, bool) or n_classes <= 2:
            raise ValueError(
                f"MultiClassHead needs n_classes > 2, got {n_classes!r}. For two "
                "classes use BinaryClassHead."
            )
        self._n_classes = n_classes
        self._weight_column = weight_column
        self._vocabulary = _check_vocabulary(label_vocabulary, n_classes)
        self._loss_reduction = base_head.check_loss_reduction(loss_reduction)
        self._loss_fn = loss_fn
        self._name = name

    @property
    def logits_dimension(self) -> int:
        return self._n_classes

    def _label_ids(self, labels: Any) -> tf.Tensor:
        return _label_ids(labels, self._vocabulary, self._n_classes)

    def unreduced_loss(self, labels: Any, logits: Any) -> tf.Tensor:
        ids = self._label_ids(labels)
        if self._loss_fn is not None:
            return tf.reshape(tf.cast(self._loss_fn(ids, logits), tf.float32), [-1, 1])
        loss = tf.nn.sparse_softmax_cross_entropy_with_logits(
            labels=tf.reshape(ids, [-1]), logits=tf.cast(logits, tf.float32)
        )
        return tf.reshape(loss, [-1, 1])

    def predictions(self, logits: Any, keys: Sequence[str] | None = None) -> dict[str, Any]:
        logits = tf.cast(logits, tf.float32)
        class_ids = tf.argmax(logits, axis=-1)[:, tf.newaxis]
        batch = tf.shape(logits)[0]
        all_ids = tf.tile(tf.range(self._n_classes, dtype=tf.int32)[tf.newaxis], [batch, 1])
        names = _class_names(self._vocabulary, self._n_classes)
        predictions = {
            LOGITS: logits,
            PROBABILITIES: tf.nn.softmax(logits),
            CLASS_IDS: class_ids,
            CLASSES: tf.gather(names, class_ids),
            ALL_CLASS_IDS: all_ids,
            ALL_CLASSES: tf.tile(names[tf.newaxis], [batch, 1]),
        }
        return _select(predictions, keys)

    def metrics(self, regularization_losses: Sequence[Any] | None = None) -> dict[str, Any]:
        return {
            self.key("average_loss"): base_head.mean_metric("average_loss"),
            self.key("accuracy"): keras.metrics.Accuracy(name="accuracy"),
        }

    def update_metrics(
        self,
        eval_metrics: dict[str, Any],
        features: Any,
        logits: Any,
        labels: Any,
        regularization_losses: Sequence[Any] | None = None,
    ) -> dict[str, Any]:
        weights = self.weights(features, logits)
        unreduced = self.unreduced_loss(labels, logits)
        eval_metrics[self.key("average_loss")].update_state(unreduced, weights)
        class_ids = tf.argmax(tf.cast(logits, tf.float32), axis=-1)[:, tf.newaxis]
        eval_metrics[self.key("accuracy")].update_state(
            self._label_ids(labels), class_ids, weights
        )
        return eval_metrics

    def export_outputs(self, predictions: Mapping[str, Any]) -> dict[str, Any]:
        classification = export_outputs.ClassificationOutput(
            scores=predictions[PROBABILITIES], classes=predictions[ALL_CLASSES]
        )
        return {
            DEFAULT_SERVING_KEY: classification,
            CLASSIFY_SERVING_KEY: classification,
            PREDICT_SERVING_KEY: export_outputs.PredictOutput(dict(predictions)),
        }



class BinaryClassHead(base_head.WeightedHead):
    """Sigmoid cross-entropy on one logit per example.

    Args:
        weight_column: a feature key (or numeric column) giving example weights.
        thresholds: extra probability thresholds for accuracy, precision and
            recall (each in (0, 1)); 0.5 is always used.
        label_vocabulary: the two string labels, negative first; without it,
            labels are 0 or 1.
        loss_reduction: "sum_over_batch_size" (default) or "sum".
        loss_fn: `loss_fn(labels, logits)` returning unreduced [batch, 1]
            losses, instead of the sigmoid cross-entropy.
        name: prefixes the metric keys (`<metric>/<name>`) when given.
    """

    def __init__(
        self,
        weight_column: Any = None,
        thresholds: Sequence[float] | None = None,
        label_vocabulary: Sequence[str] | None = None,
        loss_reduction: str = base_head.SUM_OVER_BATCH_SIZE,
        loss_fn: Any = None,
        name: str | None = None,
    ) -> None:
        self._thresholds = tuple(float(t) for t in (thresholds or ()))
        for threshold in self._thresholds:
            if not 0.0 < threshold < 1.0:
                raise ValueError(
                    f"BinaryClassHead thresholds must be in (0, 1), got {threshold!r} "
                    f"in {list(thresholds or ())}."
                )
        self._weight_column = weight_column
        self._vocabulary = _check_vocabulary(label_vocabulary, 2)
        self._loss_reduction = base_head.check_loss_reduction(loss_reduction)
        self._loss_fn = loss_fn
        self._name = name

    @property
    def logits_dimension(self) -> int:
        return 1

    def _labels01(self, labels: Any) -> tf.Tensor:
        return tf.cast(_label_ids(labels, self._vocabulary, 2), tf.float32)

    def unreduced_loss(self, labels: Any, logits: Any) -> tf.Tensor:
        labels01 = self._labels01(labels)
        logits = tf.reshape(tf.cast(logits, tf.float32), [-1, 1])
        if self._loss_fn is not None:
            return tf.reshape(tf.cast(self._loss_fn(labels01, logits), tf.float32), [-1, 1])
        return tf.nn.sigmoid_cross_entropy_with_logits(labels=labels01, logits=logits)

    def predictions(self, logits: Any, keys: Sequence[str] | None = None) -> dict[str, Any]:
        logits = tf.reshape(tf.cast(logits, tf.float32), [-1, 1])
        logistic = tf.sigmoid(logits)
        two_logits = tf.concat([tf.zeros_like(logits), logits], axis=-1)
        class_ids = tf.argmax(two_logits, axis=-1)[:, tf.newaxis]
        batch = tf.shape(logits)[0]
        names = _class_names(self._vocabulary, 2)
        predictions = {
            LOGITS: logits,
            LOGISTIC: logistic,
            PROBABILITIES: tf.nn.softmax(two_logits),
            CLASS_IDS: class_ids,
            CLASSES: tf.gather(names, class_ids),
            ALL_CLASS_IDS: tf.tile(tf.range(2, dtype=tf.int32)[tf.newaxis], [batch, 1]),
            ALL_CLASSES: tf.tile(names[tf.newaxis], [batch, 1]),
        }
        return _select(predictions, keys)

    def metrics(self, regularization_losses: Sequence[Any] | None = None) -> dict[str, Any]:
        key = self.key
        metrics: dict[str, Any] = {
            key("average_loss"): base_head.mean_metric("average_loss"),
            key("accuracy"): keras.metrics.Accuracy(name="accuracy"),
            key("precision"): keras.metrics.Precision(name="precision"),
            key("recall"): keras.metrics.Recall(name="recall"),
            key("prediction/mean"): base_head.mean_metric("prediction/mean"),
            key("label/mean"): base_head.mean_metric("label/mean"),
            key("auc"): keras.metrics.AUC(num_thresholds=200, curve="ROC", name="auc"),
            key("auc_precision_recall"): keras.metrics.AUC(
                num_thresholds=200, curve="PR", name="auc_precision_recall"
            ),
        }
        for threshold in self._thresholds:
            suffix = f"positive_threshold_{threshold:g}"
            metrics[key(f"accuracy/{suffix}")] = keras.metrics.BinaryAccuracy(
                threshold=threshold, name=f"accuracy/{suffix}"
            )
            metrics[key(f"precision/{suffix}")] = keras.metrics.Precision(
                thresholds=threshold, name=f"precision/{suffix}"
            )
            metrics[key(f"recall/{suffix}")] = keras.metrics.Recall(
                thresholds=threshold, name=f"recall/{suffix}"
            )
        return metrics

    def update_metrics(
        self,
        eval_metrics: dict[str, Any],
        features: Any,
        logits: Any,
        labels: Any,
        regularization_losses: Sequence[Any] | None = None,
    ) -> dict[str, Any]:
        key = self.key
        weights = self.weights(features, logits)
        labels01 = self._labels01(labels)
        predictions = self.predictions(logits)
        logistic = predictions[LOGISTIC]
        class_ids = tf.cast(predictions[CLASS_IDS], tf.float32)
        eval_metrics[key("average_loss")].update_state(
            self.unreduced_loss(labels, logits), weights
        )
        eval_metrics[key("accuracy")].update_state(labels01, class_ids, weights)
        eval_metrics[key("precision")].update_state(labels01, class_ids, weights)
        eval_metrics[key("recall")].update_state(labels01, class_ids, weights)
        eval_metrics[key("prediction/mean")].update_state(logistic, weights)
        label_mean = eval_metrics[key("label/mean")]
        label_mean.update_state(labels01, weights)
        eval_metrics[key("auc")].update_state(labels01, logistic, weights)
        eval_metrics[key("auc_precision_recall")].update_state(labels01, logistic, weights)
        for threshold in self._thresholds:
            suffix = f"positive_threshold_{threshold:g}"
            for metric in ("accuracy", "precision", "recall"):
                eval_metrics[key(f"{metric}/{suffix}")].update_state(labels01, logistic, weights)
        ops = dict(eval_metrics)
        # The accuracy of always predicting the more frequent label.
        mean = label_mean.result()
        ops[key("accuracy_baseline")] = (tf.maximum(mean, 1.0 - mean), mean)
        return ops

    def export_outputs(self, predictions: Mapping[str, Any]) -> dict[str, Any]:
        classification = export_outputs.ClassificationOutput(
            scores=predictions[PROBABILITIES], classes=predictions[ALL_CLASSES]
        )
        return {
            DEFAULT_SERVING_KEY: classification,
            CLASSIFY_SERVING_KEY: classification,
            REGRESS_SERVING_KEY: export_outputs.RegressionOutput(value=predictions[LOGISTIC]),
            PREDICT_SERVING_KEY: export_outputs.PredictOutput(dict(predictions)),
        }



def _check_vocabulary(vocabulary: Sequence[str] | None, n_classes: int) -> tuple[str, ...] | None:
    if vocabulary is None:
        return None
    if isinstance(vocabulary, str) or not all(isinstance(v, str) for v in vocabulary):
        raise ValueError(
            f"label_vocabulary must be a list of strings, got {vocabulary!r}. Give "
            "the class names in class-id order."
        )
    if len(vocabulary) != n_classes or len(set(vocabulary)) != n_classes:
        raise ValueError(
            f"label_vocabulary must hold {n_classes} distinct names (n_classes), got "
            f"{list(vocabulary)!r}."
        )
    return tuple(vocabulary)


def _class_names(vocabulary: tuple[str, ...] | None, n_classes: int) -> tf.Tensor:
    names = vocabulary or tuple(str(i) for i in range(n_classes))
    return tf.constant(names, tf.string)


def _label_ids(labels: Any, vocabulary: tuple[str, ...] | None, n_classes: int) -> tf.Tensor:
    """Labels as class ids, shape [batch, 1]; ids out of range fail the step."""
    if labels is None:
        raise ValueError(
            "The head needs labels in TRAIN and EVAL mode, got None. Return "
            "(features, labels) from input_fn."
        )
    labels = tf.convert_to_tensor(labels)
    labels = tf.reshape(labels, [-1, 1])
    if vocabulary is not None:
        if labels.dtype != tf.string:
            raise ValueError(
                f"With label_vocabulary the labels must be strings, got {labels.dtype.name} "
                "labels. Pass string labels, or leave label_vocabulary out for ids."
            )
        matches = tf.equal(labels, tf.constant(vocabulary))
        check = tf.debugging.assert_equal(
            tf.reduce_any(matches, axis=-1),
            True,
            message=f"Labels must be in label_vocabulary {list(vocabulary)}.",
        )
        with tf.control_dependencies([check]):
            return tf.argmax(tf.cast(matches, tf.int32), axis=-1, output_type=tf.int64)[
                :, tf.newaxis
            ]
    if labels.dtype == tf.string:
        raise ValueError(
            "Labels are strings but no label_vocabulary was given. Pass "
            "label_vocabulary=[...] (the class names in id order), or integer ids."
        )
    if labels.dtype.is_floating and n_classes > 2:
        raise ValueError(
            f"Class labels must be integers, got {labels.dtype.name}. Cast them in "
            "input_fn."
        )
    ids = tf.cast(labels, tf.int64)
    check = tf.debugging.assert_less(
        ids,
        tf.constant(n_classes, tf.int64),
        message=f"Labels must be class ids in [0, {n_classes}) (n_classes).",
    )
    check_low = tf.debugging.assert_non_negative(
        ids, message=f"Labels must be class ids in [0, {n_classes}) (n_classes)."
    )
    with tf.control_dependencies([check, check_low]):
        return tf.identity(ids)


def _select(predictions: dict[str, Any], keys: Sequence[str] | None) -> dict[str, Any]:
    if keys is None:
        return predictions
    unknown = sorted(set(keys) - set(predictions))
    if unknown:
        raise ValueError(
            f"Unknown prediction keys {unknown}; this head predicts {sorted(predictions)}."
        )
    return {k: predictions[k] for k in keys}
