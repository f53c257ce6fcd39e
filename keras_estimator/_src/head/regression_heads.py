"""`RegressionHead` and its Poisson and logistic forms, with 2.15's keys.

Predictions: `predictions` (the inverse link of the logits) and, when an
inverse link is set, `logits`. Metrics: `average_loss`, `label/mean`,
`prediction/mean`. Signatures: `serving_default` and `regression` (for one
label dimension; `serving_default` is `predict` otherwise), `predict`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import tensorflow as tf

from keras_estimator._src.base import export_outputs
from keras_estimator._src.head import base_head, head_inputs
from keras_estimator._src.head.base_head import (
    DEFAULT_SERVING_KEY,
    PREDICT_SERVING_KEY,
    REGRESS_SERVING_KEY,
)

PREDICTIONS = "predictions"
LOGITS = "logits"


class RegressionHead(base_head.WeightedHead):
    """Mean squared error on `label_dimension` values per example.

    Logits and labels are `[D0, ... DN, label_dimension]` (labels may drop a
    last dimension of 1); weights `[D0, ... DN]`, `[D0, ... DN, 1]`, or one
    per label value, `[D0, ... DN, label_dimension]`.

    Args:
        label_dimension: values per label (the logits' last dimension).
        weight_column: a feature key (or numeric column) giving example weights.
        loss_reduction: "sum_over_batch_size" (default) or "sum".
        loss_fn: `loss_fn(labels, logits)` returning unreduced
            [batch, label_dimension] losses, instead of the squared error.
        inverse_link_fn: maps logits to predictions (e.g. `tf.exp`).
        name: prefixes the metric keys (`<metric>/<name>`) when given.
    """

    _per_logit_weights = True

    def __init__(
        self,
        label_dimension: int = 1,
        weight_column: Any = None,
        loss_reduction: str = base_head.SUM_OVER_BATCH_SIZE,
        loss_fn: Callable[[Any, Any], Any] | None = None,
        inverse_link_fn: Callable[[Any], Any] | None = None,
        name: str | None = None,
    ) -> None:
        if not isinstance(label_dimension, int) or isinstance(label_dimension, bool) or (
            label_dimension < 1
        ):
            raise ValueError(
                f"Invalid label_dimension {label_dimension}. label_dimension must be an "
                "integer >= 1 (the number of values per label)."
            )
        self._label_dimension = label_dimension
        self._weight_column = weight_column
        self._loss_reduction = base_head.check_loss_reduction(loss_reduction)
        self._loss_fn = head_inputs.check_loss_fn(loss_fn)
        self._inverse_link_fn = inverse_link_fn
        self._name = name

    @property
    def logits_dimension(self) -> int:
        return self._label_dimension

    def processed_labels(self, labels: Any, logits: tf.Tensor) -> tf.Tensor:
        """Float labels `[D0, ... DN, label_dimension]`."""
        labels = head_inputs.check_labels(labels, logits, self._label_dimension)
        if labels.dtype == tf.string:
            raise ValueError(
                "Regression labels must be numbers, got string labels. Convert them "
                "in input_fn (tf.strings.to_number)."
            )
        return tf.cast(labels, tf.float32)

    def unweighted_loss(self, labels: tf.Tensor, logits: tf.Tensor, features: Any) -> tf.Tensor:
        if self._loss_fn is not None:
            return self.call_loss_fn(labels, logits, features, self._label_dimension)
        return tf.math.squared_difference(logits, labels)

    def predictions(self, logits: Any, keys: Sequence[str] | None = None) -> dict[str, Any]:
        logits = self.checked_logits(logits)
        if self._inverse_link_fn is None:
            predictions = {PREDICTIONS: logits}
        else:
            predictions = {PREDICTIONS: self._inverse_link_fn(logits), LOGITS: logits}
        if not keys:
            return predictions
        unknown = sorted(set(keys) - set(predictions))
        if unknown:
            raise ValueError(
                f"Prediction key must be in PredictionKeys, given: {unknown}. This head "
                f"predicts {sorted(predictions)}."
            )
        return {k: predictions[k] for k in keys}

    def metrics(self, regularization_losses: Sequence[Any] | None = None) -> dict[str, Any]:
        metrics = {
            self.key(name): base_head.mean_metric(name)
            for name in ("average_loss", "prediction/mean", "label/mean")
        }
        metrics.update(self.regularization_metrics(regularization_losses))
        return metrics

    def update_metrics(
        self,
        eval_metrics: dict[str, Any],
        features: Any,
        logits: Any,
        labels: Any,
        regularization_losses: Sequence[Any] | None = None,
    ) -> dict[str, Any]:
        logits, labels, unweighted, weights = self.loss_and_weights(labels, logits, features)
        flat = head_inputs.flat
        eval_metrics[self.key("average_loss")].update_state(*flat(unweighted, weights))
        predictions = self.predictions(logits)[PREDICTIONS]
        eval_metrics[self.key("prediction/mean")].update_state(*flat(predictions, weights))
        eval_metrics[self.key("label/mean")].update_state(*flat(labels, weights))
        self.update_regularization_metric(eval_metrics, regularization_losses)
        return eval_metrics

    def export_outputs(self, predictions: Mapping[str, Any]) -> dict[str, Any]:
        # As in 2.15: the regression output is the predictions, [batch, dimension].
        predict = export_outputs.PredictOutput(dict(predictions))
        regression = export_outputs.RegressionOutput(value=predictions[PREDICTIONS])
        return {
            DEFAULT_SERVING_KEY: regression,
            REGRESS_SERVING_KEY: regression,
            PREDICT_SERVING_KEY: predict,
        }



class PoissonRegressionHead(RegressionHead):
    """Poisson loss on log-rate logits; predictions are `exp(logits)`.

    Args:
        compute_full_loss: add Stirling's approximation of `log(labels!)`, as
            `tf.nn.log_poisson_loss(compute_full_loss=True)` does.
    """

    def __init__(
        self,
        label_dimension: int = 1,
        weight_column: Any = None,
        loss_reduction: str = base_head.SUM_OVER_BATCH_SIZE,
        compute_full_loss: bool = True,
        name: str | None = None,
    ) -> None:
        def poisson_loss(labels: Any, logits: Any) -> Any:
            return tf.nn.log_poisson_loss(
                targets=labels, log_input=logits, compute_full_loss=compute_full_loss
            )

        super().__init__(
            label_dimension,
            weight_column,
            loss_reduction,
            loss_fn=poisson_loss,
            inverse_link_fn=tf.exp,
            name=name,
        )


class LogisticRegressionHead(RegressionHead):
    """Sigmoid cross-entropy to labels in [0, 1]; predictions are `sigmoid(logits)`."""

    def __init__(
        self,
        weight_column: Any = None,
        loss_reduction: str = base_head.SUM_OVER_BATCH_SIZE,
        name: str | None = None,
    ) -> None:
        def logistic_loss(labels: Any, logits: Any) -> Any:
            labels = head_inputs.check_label_range(
                labels, 2, message="Labels must be in range [0, 1]"
            )
            return tf.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits)

        super().__init__(
            1,
            weight_column,
            loss_reduction,
            loss_fn=logistic_loss,
            inverse_link_fn=tf.sigmoid,
            name=name,
        )
