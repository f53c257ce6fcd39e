"""`MultiLabelHead`: zero or more of `n_classes` labels per example.

With tf.estimator 2.15's semantics: the per-example loss is the mean over
classes of the sigmoid cross-entropy (shape [batch, 1]), weighted and reduced
like every head's. Labels are a multi-hot [batch, n_classes] tensor, a
`SparseTensor` of class ids, or, with `label_vocabulary`, a `SparseTensor`
of class names. Predictions: `logits`, `probabilities` (the sigmoid) and
`classes` (every class name, per example). Metrics: `average_loss`, `auc`,
`auc_precision_recall`, `regularization_loss` when regularization losses are
given (an empty list counts as none, as the canned estimators pass one), per
threshold `accuracy|precision|recall/positive_threshold_<t>`, and per class
of `classes_for_class_based_metrics` `probability_mean/<c>`, `auc/<c>` and
`auc_precision_recall/<c>` (`<c>` is `class<id>`, or the class name with a
vocabulary). Signatures: `serving_default` and
`classification` (scores and classes), `predict`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import keras
import tensorflow as tf

from keras_estimator._src.base import export_outputs
from keras_estimator._src.head import base_head, head_inputs
from keras_estimator._src.head.base_head import (
    CLASSIFY_SERVING_KEY,
    DEFAULT_SERVING_KEY,
    PREDICT_SERVING_KEY,
)

LOGITS = "logits"
PROBABILITIES = "probabilities"
CLASSES = "classes"
_PREDICTION_KEYS = (LOGITS, PROBABILITIES, CLASSES)


class MultiLabelHead(base_head.WeightedHead):
    """Sigmoid cross-entropy on each of `n_classes` independent labels.

    Args:
        n_classes: at least 2.
        weight_column: a feature key (or numeric column) giving example weights,
            shape [batch] or [batch, 1].
        thresholds: probability thresholds, each in (0, 1), at which accuracy,
            precision and recall are evaluated.
        label_vocabulary: the class names, in class-id order; labels are then a
            string `SparseTensor` of names (or still a multi-hot tensor).
        loss_reduction: "sum_over_batch_size" (default) or "sum".
        loss_fn: `loss_fn(labels, logits[, features])` returning unreduced
            [batch, 1] losses from multi-hot int64 labels, instead of the mean
            sigmoid cross-entropy.
        classes_for_class_based_metrics: class ids (or, with a vocabulary,
            names) that get per-class metrics.
        name: suffixes the metric keys (`<metric>/<name>`) when given.

    Example:
        ```python
        head = MultiLabelHead(n_classes=3)
        estimator = DNNEstimator(head=head, hidden_units=[8], feature_columns=...)
        ```
    """

    def __init__(
        self,
        n_classes: int,
        weight_column: Any = None,
        thresholds: Sequence[float] | None = None,
        label_vocabulary: Sequence[str] | None = None,
        loss_reduction: str = base_head.SUM_OVER_BATCH_SIZE,
        loss_fn: Callable[..., Any] | None = None,
        classes_for_class_based_metrics: Sequence[int | str] | None = None,
        name: str | None = None,
    ) -> None:
        n_classes = head_inputs.integer_n_classes(n_classes)
        if not isinstance(n_classes, int) or isinstance(n_classes, bool) or n_classes < 2:
            raise ValueError(
                "n_classes must be > 1 for multi-label classification. Given: "
                f"{n_classes}. For a single yes/no label use BinaryClassHead."
            )
        self._n_classes = n_classes
        self._weight_column = weight_column
        self._thresholds = _check_thresholds(thresholds)
        self._vocabulary = _check_vocabulary(label_vocabulary, n_classes)
        self._loss_reduction = base_head.check_loss_reduction(loss_reduction)
        self._loss_fn = head_inputs.check_loss_fn(loss_fn)
        self._class_ids = _class_ids_for_metrics(
            classes_for_class_based_metrics, self._vocabulary, n_classes
        )
        self._name = name

    @property
    def logits_dimension(self) -> int:
        return self._n_classes

    def multi_hot_labels(self, labels: Any, logits: Any) -> tf.Tensor:
        """Labels as an int64 multi-hot tensor shaped like `logits`."""
        if labels is None:
            return head_inputs.check_labels(labels, logits, self._n_classes)
        if isinstance(labels, tf.SparseTensor):
            multi_hot = self._sparse_to_multi_hot(labels)
        else:
            multi_hot = _check_multi_hot(tf.convert_to_tensor(labels))
        return head_inputs.check_labels(multi_hot, logits, self._n_classes)

    def _sparse_to_multi_hot(self, labels: tf.SparseTensor) -> tf.Tensor:
        if labels.dtype == tf.string:
            if self._vocabulary is None:
                raise ValueError(
                    "Labels are strings but no label_vocabulary was given. Pass "
                    "label_vocabulary=[...] (the class names in id order), or class ids."
                )
            ids = _vocabulary_ids(labels.values, self._vocabulary)
            labels = tf.SparseTensor(labels.indices, ids, labels.dense_shape)
        elif not labels.dtype.is_integer:
            raise ValueError(
                f"Labels dtype should be integer. Instead got {labels.dtype.name}: "
                "SparseTensor labels hold class ids; cast them in input_fn."
            )
        else:
            ids = head_inputs.check_label_range(
                tf.cast(labels.values, tf.int64),
                self._n_classes,
                "labels must be an integer SparseTensor with values in "
                f"[0, {self._n_classes})",
            )
            labels = tf.SparseTensor(labels.indices, ids, labels.dense_shape)
        return tf.cast(tf.sparse.to_indicator(labels, self._n_classes), tf.int64)

    def checked_logits(self, logits: Any) -> tf.Tensor:
        return _check_logits(logits, self._n_classes)

    def processed_labels(self, labels: Any, logits: tf.Tensor) -> tf.Tensor:
        return self.multi_hot_labels(labels, logits)

    def unweighted_loss(self, labels: tf.Tensor, logits: tf.Tensor, features: Any) -> tf.Tensor:
        if self._loss_fn is not None:
            return self.call_loss_fn(labels, logits, features)
        per_class = tf.nn.sigmoid_cross_entropy_with_logits(
            labels=tf.cast(labels, tf.float32), logits=logits
        )
        return tf.reduce_mean(per_class, axis=-1, keepdims=True)

    def predictions(self, logits: Any, keys: Sequence[str] | None = None) -> dict[str, Any]:
        if keys:
            unknown = sorted(set(keys) - set(_PREDICTION_KEYS))
            if unknown:
                raise ValueError(
                    f"Unknown prediction keys {unknown}; MultiLabelHead predicts "
                    f"{list(_PREDICTION_KEYS)}."
                )
        wanted = tuple(keys) if keys else _PREDICTION_KEYS
        logits = _check_logits(logits, self._n_classes)
        predictions: dict[str, Any] = {}
        if LOGITS in wanted:
            predictions[LOGITS] = logits
        if PROBABILITIES in wanted:
            predictions[PROBABILITIES] = tf.sigmoid(logits)
        if CLASSES in wanted:
            predictions[CLASSES] = _all_classes(logits, self._vocabulary, self._n_classes)
        return predictions

    def metrics(self, regularization_losses: Sequence[Any] | None = None) -> dict[str, Any]:
        key = self.key
        metrics: dict[str, Any] = {
            key("average_loss"): base_head.mean_metric("average_loss"),
            key("auc"): keras.metrics.AUC(num_thresholds=200, name="auc"),
            key("auc_precision_recall"): keras.metrics.AUC(
                num_thresholds=200, curve="PR", name="auc_precision_recall"
            ),
        }
        metrics.update(self.regularization_metrics(regularization_losses))
        for threshold in self._thresholds:
            metrics.update(_threshold_metrics(threshold, key))
        for class_id in self._class_ids:
            metrics.update(_class_metrics(self._class_label(class_id), key))
        return metrics

    def _class_label(self, class_id: int) -> str:
        if self._vocabulary is None:
            return f"class{class_id}"
        return self._vocabulary[class_id]

    def update_metrics(
        self,
        eval_metrics: dict[str, Any],
        features: Any,
        logits: Any,
        labels: Any,
        regularization_losses: Sequence[Any] | None = None,
    ) -> dict[str, Any]:
        key = self.key
        logits, multi_hot, unweighted, weights = self.loss_and_weights(labels, logits, features)
        flat = head_inputs.flat
        probabilities = tf.sigmoid(logits)
        eval_metrics[key("average_loss")].update_state(*flat(unweighted, weights))
        for metric in ("auc", "auc_precision_recall"):
            eval_metrics[key(metric)].update_state(*flat(multi_hot, weights, probabilities))
        self.update_regularization_metric(eval_metrics, regularization_losses)
        for threshold in self._thresholds:
            suffix = f"positive_threshold_{threshold:g}"
            for metric in ("accuracy", "precision", "recall"):
                eval_metrics[key(f"{metric}/{suffix}")].update_state(
                    *flat(multi_hot, weights, probabilities)
                )
        for class_id in self._class_ids:
            label = self._class_label(class_id)
            class_probabilities = probabilities[..., class_id : class_id + 1]
            class_labels = multi_hot[..., class_id : class_id + 1]
            eval_metrics[key(f"probability_mean/{label}")].update_state(
                *flat(class_probabilities, weights)
            )
            for metric in ("auc", "auc_precision_recall"):
                eval_metrics[key(f"{metric}/{label}")].update_state(
                    *flat(class_labels, weights, class_probabilities)
                )
        return eval_metrics

    def export_outputs(self, predictions: Mapping[str, Any]) -> dict[str, Any]:
        classification = export_outputs.ClassificationOutput(
            scores=predictions[PROBABILITIES], classes=predictions[CLASSES]
        )
        return {
            DEFAULT_SERVING_KEY: classification,
            CLASSIFY_SERVING_KEY: classification,
            PREDICT_SERVING_KEY: export_outputs.PredictOutput(dict(predictions)),
        }


def _check_thresholds(thresholds: Sequence[float] | None) -> tuple[float, ...]:
    checked = tuple(float(t) for t in (thresholds or ()))
    for threshold in checked:
        if not 0.0 < threshold < 1.0:
            raise ValueError(
                f"thresholds must be in (0, 1) range. Given: {threshold} (in "
                f"{list(thresholds or ())}). Give probabilities strictly between 0 and 1."
            )
    return checked


def _check_vocabulary(vocabulary: Sequence[str] | None, n_classes: int) -> tuple[str, ...] | None:
    if vocabulary is None:
        return None
    if not isinstance(vocabulary, (list, tuple)):
        raise ValueError(
            f"label_vocabulary must be a list or tuple. Given type: {type(vocabulary)}. "
            "Give the class names in class-id order."
        )
    if not all(isinstance(v, str) for v in vocabulary):
        raise ValueError(
            f"label_vocabulary must be a list of strings, got {vocabulary!r}. Give "
            "the class names in class-id order."
        )
    if len(vocabulary) != n_classes:
        raise ValueError(
            f"Length of label_vocabulary must be n_classes ({n_classes}). Given: "
            f"{len(vocabulary)} ({list(vocabulary)!r})."
        )
    return tuple(vocabulary)


def _class_ids_for_metrics(
    classes: Sequence[int | str] | None, vocabulary: tuple[str, ...] | None, n_classes: int
) -> tuple[int, ...]:
    if not classes:
        return ()
    ids = []
    for value in classes:
        if isinstance(value, str):
            if vocabulary is None:
                raise ValueError(
                    "label_vocabulary must be provided when classes_for_class_based_metrics "
                    f"are strings (got {value!r})."
                )
            if value not in vocabulary:
                raise ValueError(
                    f"{value!r} is not in list {list(vocabulary)}: "
                    "classes_for_class_based_metrics names a class that is not in "
                    "label_vocabulary. Give class ids, or names from label_vocabulary."
                )
            ids.append(vocabulary.index(value))
        elif not 0 <= value < n_classes:
            raise ValueError(
                f"All classes_for_class_based_metrics must be in range [0, {n_classes - 1}]. "
                f"Given: {value}."
            )
        else:
            ids.append(int(value))
    return tuple(ids)


def _check_logits(logits: Any, n_classes: int) -> tf.Tensor:
    return head_inputs.check_logits(logits, n_classes)


def _check_multi_hot(labels: tf.Tensor) -> tf.Tensor:
    if labels.dtype == tf.string:
        raise ValueError(
            "Dense string labels are not supported by MultiLabelHead; pass a "
            "SparseTensor of class names with label_vocabulary, or multi-hot 0/1 labels."
        )
    return head_inputs.check_label_range(
        tf.cast(labels, tf.int64),
        2,
        "labels must be an integer indicator Tensor with values in [0, 1]",
    )


def _vocabulary_ids(names: tf.Tensor, vocabulary: tuple[str, ...]) -> tf.Tensor:
    matches = tf.equal(names[:, tf.newaxis], tf.constant(vocabulary)[tf.newaxis])
    check = tf.debugging.assert_equal(
        tf.reduce_all(tf.reduce_any(matches, axis=-1)),
        True,
        message=f"Labels must be in label_vocabulary {list(vocabulary)}.",
    )
    with tf.control_dependencies([check]):
        return tf.argmax(tf.cast(matches, tf.int32), axis=-1, output_type=tf.int64)


def _all_classes(logits: tf.Tensor, vocabulary: tuple[str, ...] | None, n_classes: int) -> tf.Tensor:
    names = vocabulary or tuple(str(i) for i in range(n_classes))
    return tf.tile(tf.constant([names], tf.string), [tf.shape(logits)[0], 1])


def _threshold_metrics(threshold: float, key: Callable[[str], str]) -> dict[str, Any]:
    suffix = f"positive_threshold_{threshold:g}"
    return {
        key(f"accuracy/{suffix}"): keras.metrics.BinaryAccuracy(
            threshold=threshold, name=f"accuracy/{suffix}"
        ),
        key(f"precision/{suffix}"): keras.metrics.Precision(
            thresholds=threshold, name=f"precision/{suffix}"
        ),
        key(f"recall/{suffix}"): keras.metrics.Recall(
            thresholds=threshold, name=f"recall/{suffix}"
        ),
    }


def _class_metrics(label: str, key: Callable[[str], str]) -> dict[str, Any]:
    return {
        key(f"probability_mean/{label}"): base_head.mean_metric(f"probability_mean/{label}"),
        key(f"auc/{label}"): keras.metrics.AUC(num_thresholds=200, name=f"auc/{label}"),
        key(f"auc_precision_recall/{label}"): keras.metrics.AUC(
            num_thresholds=200, curve="PR", name=f"auc_precision_recall/{label}"
        ),
    }
