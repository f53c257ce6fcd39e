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
from keras_estimator._src.head import base_head, head_inputs
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

    Logits are `[D0, ... DN, n_classes]` (a batch, or a batch of sequences);
    labels `[D0, ... DN, 1]` or `[D0, ... DN]`; weights `[D0, ... DN]` or
    `[D0, ... DN, 1]`.

    Args:
        n_classes: at least 3 (use `BinaryClassHead` for 2).
        weight_column: a feature key (or numeric column) giving example weights.
        label_vocabulary: the string labels, in class-id order; without it,
            labels are integer class ids in `[0, n_classes)`.
        loss_reduction: "sum_over_batch_size" (default) or "sum".
        loss_fn: `loss_fn(labels, logits[, features])` returning unreduced
            `[D0, ... DN, 1]` losses from int64 class ids, instead of the
            softmax cross-entropy.
        name: prefixes the metric keys (`<metric>/<name>`) when given.
    """

    # The first phrases of out-of-range labels' errors (the default's when None).
    _label_range_phrases: tuple[str, str] | None = None

    def __init__(
        self,
        n_classes: int,
        weight_column: Any = None,
        label_vocabulary: Sequence[str] | None = None,
        loss_reduction: str = base_head.SUM_OVER_BATCH_SIZE,
        loss_fn: Any = None,
        name: str | None = None,
    ) -> None:
        if n_classes is None:
            raise ValueError(
                "n_classes cannot be None. Give the number of classes (at least 3)."
            )
        given, n_classes = n_classes, head_inputs.integer_n_classes(n_classes)
        if isinstance(n_classes, int) and not isinstance(given, int) and n_classes <= 2:
            # 2.15 checked a numpy or tensor n_classes with an assertion op.
            raise tf.errors.InvalidArgumentError(
                None,
                None,
                f"n_classes must be greater than 2, got {given!r}. MultiClassHead "
                "needs at least 3 classes; for two use BinaryClassHead.",
            )
        if not isinstance(n_classes, int) or isinstance(n_classes, bool) or n_classes <= 2:
            raise ValueError(
                f"n_classes must be > 2: {n_classes!r}. MultiClassHead needs at least "
                "3 classes; for two use BinaryClassHead."
            )
        self._n_classes = n_classes
        self._weight_column = weight_column
        self._vocabulary = _check_vocabulary(label_vocabulary, n_classes)
        self._loss_reduction = base_head.check_loss_reduction(loss_reduction)
        self._loss_fn = head_inputs.check_loss_fn(loss_fn)
        self._name = name

    @property
    def logits_dimension(self) -> int:
        return self._n_classes

    def processed_labels(self, labels: Any, logits: tf.Tensor) -> tf.Tensor:
        """Class ids, int64 `[D0, ... DN, 1]`, checked to be in range."""
        labels = head_inputs.check_labels(labels, logits, 1)
        if self._vocabulary is None:
            if not labels.dtype.is_integer:
                hint = (
                    " Give label_vocabulary for string labels."
                    if labels.dtype == tf.string
                    else " Cast them to integers in input_fn."
                )
                raise ValueError(
                    f"Labels dtype should be integer. Instead got {labels.dtype.name}."
                    + hint
                )
            ids = tf.cast(labels, tf.int64)
        else:
            ids = _vocabulary_ids(labels, self._vocabulary)
        return head_inputs.check_label_range(
            ids, self._n_classes, phrases=self._label_range_phrases
        )

    def unweighted_loss(self, labels: tf.Tensor, logits: tf.Tensor, features: Any) -> tf.Tensor:
        if self._loss_fn is not None:
            return self.call_loss_fn(labels, logits, features)
        loss = tf.nn.sparse_softmax_cross_entropy_with_logits(
            labels=labels[..., 0], logits=logits
        )
        return loss[..., tf.newaxis]

    def predictions(self, logits: Any, keys: Sequence[str] | None = None) -> dict[str, Any]:
        _check_keys(keys, _MULTI_CLASS_KEYS)
        logits = self.checked_logits(logits)
        class_ids = tf.argmax(logits, axis=-1)[..., tf.newaxis]
        predictions = {
            LOGITS: logits,
            PROBABILITIES: tf.nn.softmax(logits),
            CLASS_IDS: class_ids,
            CLASSES: _classes(class_ids, self._vocabulary, self._n_classes),
            ALL_CLASS_IDS: _all_class_ids(logits, self._n_classes),
            ALL_CLASSES: _all_classes(logits, self._vocabulary, self._n_classes),
        }
        return _select(predictions, keys)

    def metrics(self, regularization_losses: Sequence[Any] | None = None) -> dict[str, Any]:
        return {
            self.key("average_loss"): base_head.mean_metric("average_loss"),
            self.key("accuracy"): keras.metrics.Accuracy(name="accuracy"),
            **self.regularization_metrics(regularization_losses),
        }

    def update_metrics(
        self,
        eval_metrics: dict[str, Any],
        features: Any,
        logits: Any,
        labels: Any,
        regularization_losses: Sequence[Any] | None = None,
    ) -> dict[str, Any]:
        logits, ids, unweighted, weights = self.loss_and_weights(labels, logits, features)
        eval_metrics[self.key("average_loss")].update_state(
            *head_inputs.flat(unweighted, weights)
        )
        class_ids = tf.argmax(logits, axis=-1)[..., tf.newaxis]
        eval_metrics[self.key("accuracy")].update_state(*head_inputs.flat(ids, weights, class_ids))
        self.update_regularization_metric(eval_metrics, regularization_losses)
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

    Logits are `[D0, ... DN, 1]`; labels `[D0, ... DN, 1]` or `[D0, ... DN]`:
    0 or 1, or soft labels (any float in [0, 1], used as the sigmoid
    cross-entropy's target, as in tf.estimator 2.15), or with
    `label_vocabulary` the two class names.

    Args:
        weight_column: a feature key (or numeric column) giving example weights.
        thresholds: extra probability thresholds for accuracy, precision and
            recall (each in (0, 1)); 0.5 is always used.
        label_vocabulary: the two string labels, negative first; without it,
            labels are numbers in [0, 1].
        loss_reduction: "sum_over_batch_size" (default) or "sum".
        loss_fn: `loss_fn(labels, logits[, features])` returning unreduced
            `[D0, ... DN, 1]` losses from float labels, instead of the sigmoid
            cross-entropy.
        name: prefixes the metric keys (`<metric>/<name>`) when given.
    """

    # The first phrases of out-of-range labels' errors (the default's when None).
    _label_range_phrases: tuple[str, str] | None = None

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
                    f"thresholds not in (0, 1): {threshold!r} in "
                    f"{list(thresholds or ())}. Give probabilities strictly between 0 and 1."
                )
        self._weight_column = weight_column
        self._vocabulary = _check_vocabulary(label_vocabulary, 2)
        self._loss_reduction = base_head.check_loss_reduction(loss_reduction)
        self._loss_fn = head_inputs.check_loss_fn(loss_fn)
        self._name = name

    @property
    def logits_dimension(self) -> int:
        return 1

    def processed_labels(self, labels: Any, logits: tf.Tensor) -> tf.Tensor:
        """Float labels `[D0, ... DN, 1]` in [0, 1] (soft labels kept as they are)."""
        labels = head_inputs.check_labels(labels, logits, 1)
        if self._vocabulary is not None:
            labels = _vocabulary_ids(labels, self._vocabulary)
        elif labels.dtype == tf.string:
            raise ValueError(
                "Labels are strings but no label_vocabulary was given. Pass "
                "label_vocabulary=[negative, positive], or 0/1 labels."
            )
        labels = tf.cast(labels, tf.float32)
        return head_inputs.check_label_range(labels, 2, phrases=self._label_range_phrases)

    def unweighted_loss(self, labels: tf.Tensor, logits: tf.Tensor, features: Any) -> tf.Tensor:
        if self._loss_fn is not None:
            return self.call_loss_fn(labels, logits, features)
        return tf.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits)

    def predictions(self, logits: Any, keys: Sequence[str] | None = None) -> dict[str, Any]:
        _check_keys(keys, _BINARY_KEYS)
        logits = self.checked_logits(logits)
        two_logits = tf.concat([tf.zeros_like(logits), logits], axis=-1)
        class_ids = tf.argmax(two_logits, axis=-1)[..., tf.newaxis]
        predictions = {
            LOGITS: logits,
            LOGISTIC: tf.sigmoid(logits),
            PROBABILITIES: tf.nn.softmax(two_logits),
            CLASS_IDS: class_ids,
            CLASSES: _classes(class_ids, self._vocabulary, 2),
            ALL_CLASS_IDS: _all_class_ids(logits, 2),
            ALL_CLASSES: _all_classes(logits, self._vocabulary, 2),
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
            key("accuracy_baseline"): AccuracyBaseline(name="accuracy_baseline"),
            key("auc"): self._roc_auc(),
            key("auc_precision_recall"): self._precision_recall_auc(),
            **self.regularization_metrics(regularization_losses),
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

    def _roc_auc(self) -> keras.metrics.Metric:
        """The `auc` metric (the tf.compat.v1 classifiers' computes it as 2.15's v1 head did)."""
        return keras.metrics.AUC(num_thresholds=200, curve="ROC", name="auc")

    def _precision_recall_auc(self) -> keras.metrics.Metric:
        """The `auc_precision_recall` metric (BoostedTreesClassifier's computes it as 2.8 did)."""
        return keras.metrics.AUC(num_thresholds=200, curve="PR", name="auc_precision_recall")

    def update_metrics(
        self,
        eval_metrics: dict[str, Any],
        features: Any,
        logits: Any,
        labels: Any,
        regularization_losses: Sequence[Any] | None = None,
    ) -> dict[str, Any]:
        key = self.key
        logits, labels01, unweighted, weights = self.loss_and_weights(labels, logits, features)
        logistic = tf.sigmoid(logits)
        class_ids = tf.cast(logits > 0.0, tf.float32)
        flat = head_inputs.flat
        eval_metrics[key("average_loss")].update_state(*flat(unweighted, weights))
        for metric in ("accuracy", "precision", "recall"):
            eval_metrics[key(metric)].update_state(*flat(labels01, weights, class_ids))
        eval_metrics[key("prediction/mean")].update_state(*flat(logistic, weights))
        eval_metrics[key("label/mean")].update_state(*flat(labels01, weights))
        eval_metrics[key("accuracy_baseline")].update_state(*flat(labels01, weights))
        for metric in ("auc", "auc_precision_recall"):
            eval_metrics[key(metric)].update_state(*flat(labels01, weights, logistic))
        self.update_regularization_metric(eval_metrics, regularization_losses)
        for threshold in self._thresholds:
            suffix = f"positive_threshold_{threshold:g}"
            for metric in ("accuracy", "precision", "recall"):
                eval_metrics[key(f"{metric}/{suffix}")].update_state(
                    *flat(labels01, weights, logistic)
                )
        return eval_metrics

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


class AccuracyBaseline(keras.metrics.Metric):
    """The accuracy of always predicting the more frequent label.

    `max(mean, 1 - mean)` of the weighted label mean: updated with the same
    labels and weights as `label/mean`.
    """

    def __init__(self, name: str = "accuracy_baseline", dtype: Any = None) -> None:
        super().__init__(name=name, dtype=dtype)
        self.total = self.add_variable(shape=(), initializer="zeros", name="total")
        self.count = self.add_variable(shape=(), initializer="zeros", name="count")

    def update_state(self, labels: Any, sample_weight: Any = None) -> None:
        labels = tf.cast(labels, tf.float32)
        if sample_weight is None:
            sample_weight = tf.ones_like(labels)
        weights = tf.broadcast_to(tf.cast(sample_weight, tf.float32), tf.shape(labels))
        self.total.assign_add(tf.reduce_sum(labels * weights))
        self.count.assign_add(tf.reduce_sum(weights))

    def result(self) -> Any:
        total, count = tf.convert_to_tensor(self.total), tf.convert_to_tensor(self.count)
        return tf.math.divide_no_nan(tf.maximum(total, count - total), count)

    def reset_state(self) -> None:
        self.total.assign(0.0)
        self.count.assign(0.0)


def label_vocabulary_of(head: Any) -> tuple[str, ...] | None:
    """A classification head's `label_vocabulary` (None without one, or for another head)."""
    return getattr(head, "_vocabulary", None)


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


def _vocabulary_ids(labels: tf.Tensor, vocabulary: tuple[str, ...]) -> tf.Tensor:
    """String labels as int64 ids in `vocabulary`; -1 (refused later) if absent."""
    if labels.dtype != tf.string:
        raise ValueError(
            f"Labels dtype should be string if there is a vocabulary. Instead got "
            f"{labels.dtype.name}. Pass string labels, or leave label_vocabulary out."
        )
    matches = tf.equal(labels[..., tf.newaxis], tf.constant(vocabulary))
    ids = tf.argmax(tf.cast(matches, tf.int32), axis=-1, output_type=tf.int64)
    return tf.where(tf.reduce_any(matches, axis=-1), ids, tf.constant(-1, tf.int64))


def _classes(
    class_ids: tf.Tensor, vocabulary: tuple[str, ...] | None, n_classes: int
) -> tf.Tensor:
    if vocabulary is None:
        return tf.strings.as_string(class_ids)
    return tf.gather(tf.constant(vocabulary), class_ids)


def _all_class_ids(logits: tf.Tensor, n_classes: int) -> tf.Tensor:
    # One row per example of D0, as in 2.15 (also for sequence logits).
    return tf.tile(tf.range(n_classes)[tf.newaxis], [tf.shape(logits)[0], 1])


def _all_classes(
    logits: tf.Tensor, vocabulary: tuple[str, ...] | None, n_classes: int
) -> tf.Tensor:
    names = vocabulary or tuple(str(i) for i in range(n_classes))
    return tf.tile(tf.constant(names)[tf.newaxis], [tf.shape(logits)[0], 1])


_MULTI_CLASS_KEYS = (LOGITS, PROBABILITIES, CLASS_IDS, CLASSES, ALL_CLASS_IDS, ALL_CLASSES)
_BINARY_KEYS = (LOGITS, LOGISTIC, *_MULTI_CLASS_KEYS[1:])


def _check_keys(keys: Sequence[str] | None, valid: Sequence[str]) -> None:
    for key in keys or ():
        if key not in valid:
            raise ValueError(
                f"Prediction key must be in PredictionKeys, given: {key}. Valid "
                f"prediction keys include {list(valid)}."
            )


def _select(predictions: dict[str, Any], keys: Sequence[str] | None) -> dict[str, Any]:
    if not keys:
        return predictions
    unknown = sorted(set(keys) - set(predictions))
    if unknown:
        raise ValueError(
            f"Unknown prediction keys {unknown}; this head predicts {sorted(predictions)}."
        )
    return {k: predictions[k] for k in keys}
