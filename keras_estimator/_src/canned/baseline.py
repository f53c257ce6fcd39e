"""`BaselineClassifier`, `BaselineRegressor` and `BaselineEstimator`, as in tf.estimator 2.15.

The model ignores the features: its logits are one learned bias per output
(`baseline/bias`), the same for every example, so a classifier learns the
label distribution and a regressor the label mean. A name given as the
optimizer trains at 2.15's rate for baselines, 0.3 (Ftrl by default).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import tensorflow as tf

from keras_estimator._src.canned import optimizers
from keras_estimator._src.canned.dnn import canned_model_fn, classification_head
from keras_estimator._src.estimator.estimator import Estimator
from keras_estimator._src.head.base_head import SUM_OVER_BATCH_SIZE, Head, check_head
from keras_estimator._src.head.regression_heads import RegressionHead

LEARNING_RATE = 0.3


def baseline_logits(features: Any, logits_dimension: int) -> tf.Tensor:
    """The bias, repeated for each example of the batch."""
    with tf.compat.v1.variable_scope("baseline"):
        bias = tf.compat.v1.get_variable(
            "bias", shape=[logits_dimension], initializer=tf.compat.v1.zeros_initializer()
        )
    values = list(features.values()) if isinstance(features, Mapping) else [features]
    if not values:
        raise ValueError(
            "A baseline needs at least one feature to know the batch size; input_fn "
            "gave none."
        )
    first = values[0]
    if isinstance(first, tf.SparseTensor):
        batch = first.dense_shape[0]
    else:
        batch = tf.shape(first, out_type=tf.int64)[0]
    return tf.tile(bias[tf.newaxis], tf.stack([batch, tf.constant(1, tf.int64)]))


def baseline_model_fn(head: Head, optimizer: Any) -> Callable[..., Any]:
    def logits_fn(features: Any, mode: str) -> tf.Tensor:
        return baseline_logits(features, head.logits_dimension)

    return canned_model_fn(head, logits_fn, optimizer)


class BaselineEstimator(Estimator):
    """A learned constant with a given head; see the module."""

    def __init__(
        self,
        head: Head,
        model_dir: str | None = None,
        optimizer: Any = "Ftrl",
        config: Any = None,
    ) -> None:
        check_head(head)
        canned_optimizer = optimizers.get_optimizer(optimizer, learning_rate=LEARNING_RATE)
        super().__init__(
            model_fn=baseline_model_fn(head, canned_optimizer), model_dir=model_dir, config=config
        )


class BaselineClassifier(BaselineEstimator):
    """Predicts the label distribution it learned; `n_classes` classes."""

    def __init__(
        self,
        model_dir: str | None = None,
        n_classes: int = 2,
        weight_column: Any = None,
        label_vocabulary: Sequence[str] | None = None,
        optimizer: Any = "Ftrl",
        config: Any = None,
        loss_reduction: str = SUM_OVER_BATCH_SIZE,
    ) -> None:
        super().__init__(
            classification_head(n_classes, weight_column, label_vocabulary, loss_reduction),
            model_dir=model_dir,
            optimizer=optimizer,
            config=config,
        )


class BaselineRegressor(BaselineEstimator):
    """Predicts the label mean it learned; `label_dimension` values."""

    def __init__(
        self,
        model_dir: str | None = None,
        label_dimension: int = 1,
        weight_column: Any = None,
        optimizer: Any = "Ftrl",
        config: Any = None,
        loss_reduction: str = SUM_OVER_BATCH_SIZE,
    ) -> None:
        head = RegressionHead(
            label_dimension=label_dimension,
            weight_column=weight_column,
            loss_reduction=loss_reduction,
        )
        super().__init__(head, model_dir=model_dir, optimizer=optimizer, config=config)
