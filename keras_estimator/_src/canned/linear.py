"""`LinearClassifier`, `LinearRegressor` and `LinearEstimator`, as tf.estimator 2.15 built them.

The model is the feature columns' linear model, one weight vector per column
and a bias (`linear/linear_model/<column>/weights`,
`linear/linear_model/bias_weights`), summed into the logits; categorical
columns' weights are combined by `sparse_combiner`. A name given as the
optimizer trains at 2.15's rate for linear models, 0.2 (Ftrl by default),
with tf.keras 2's slots (`canned.optimizers`). A `LinearSDCA` given as the
optimizer trains the same model by dual coordinate ascent
(`canned.linear_sdca`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import tensorflow as tf

from keras_estimator._src.canned import optimizers
from keras_estimator._src.canned.dnn import (
    canned_model_fn,
    check_feature_columns,
    check_features,
    classification_head,
    require_v2_columns,
)
from keras_estimator._src.canned.linear_sdca import (
    LinearSDCA,
    check_sdca_estimator,
    sdca_model_fn,
    v2_slot_name,
)
from keras_estimator._src.estimator.estimator import Estimator
from keras_estimator._src.head import training_summaries
from keras_estimator._src.head.base_head import SUM_OVER_BATCH_SIZE, Head, check_head
from keras_estimator._src.head.regression_heads import RegressionHead
from keras_estimator._src.tf_internals import deprecation_notices

LEARNING_RATE = 0.2
_COMBINERS = ("sum", "mean", "sqrtn")


def check_sparse_combiner(sparse_combiner: Any) -> None:
    if sparse_combiner not in _COMBINERS:
        raise ValueError(
            f"sparse_combiner must be one of {list(_COMBINERS)}, got {sparse_combiner!r}."
        )


def linear_logits(
    features: Any,
    feature_columns: Sequence[Any],
    logits_dimension: int,
    sparse_combiner: str,
    summary_scope: str = "",
) -> tf.Tensor:
    """The linear model's logits under 2.15's variable names.

    With 2.15's training summaries of its bias and weights
    (`head.training_summaries`), tagged `<summary_scope>bias` and
    `<summary_scope>fraction_of_zero_weights`.
    """
    check_features(features, feature_columns)
    before = {id(v) for v in tf.compat.v1.trainable_variables()}
    with tf.compat.v1.variable_scope("linear"), deprecation_notices.quiet():
        logits = tf.compat.v1.feature_column.linear_model(
            features,
            list(feature_columns),
            units=logits_dimension,
            sparse_combiner=sparse_combiner,
        )
    created = [v for v in tf.compat.v1.trainable_variables() if id(v) not in before]
    biases = [v for v in created if v.name.startswith("linear/linear_model/bias_weights")]
    if biases:
        weights = [v for v in created if v is not biases[0]]
        training_summaries.linear_model(summary_scope, biases[0], weights)
    return logits


def linear_model_fn(
    head: Head, feature_columns: Sequence[Any], optimizer: Any, sparse_combiner: str
) -> Callable[..., Any]:
    def logits_fn(features: Any, mode: str) -> tf.Tensor:
        require_v2_columns(feature_columns)
        return linear_logits(
            features, feature_columns, head.logits_dimension, sparse_combiner
        )

    return canned_model_fn(head, logits_fn, optimizer)


def linear_sdca_model_fn(
    head: Head,
    feature_columns: Sequence[Any],
    optimizer: LinearSDCA,
    slot_name: Callable[[str], str] = v2_slot_name,
) -> Callable[..., Any]:
    """The linear model trained by SDCA (`canned.linear_sdca`)."""

    def logits_fn(features: Any) -> tf.Tensor:
        return linear_logits(features, feature_columns, head.logits_dimension, "sum")

    return sdca_model_fn(head, feature_columns, optimizer, logits_fn, slot_name)


class LinearEstimator(Estimator):
    """A linear model with a given head; see the module."""

    def __init__(
        self,
        head: Head,
        feature_columns: Sequence[Any],
        model_dir: str | None = None,
        optimizer: Any = "Ftrl",
        config: Any = None,
        sparse_combiner: str = "sum",
        warm_start_from: Any = None,
    ) -> None:
        check_head(head)
        check_sparse_combiner(sparse_combiner)
        columns = check_feature_columns(feature_columns)
        if isinstance(optimizer, LinearSDCA):
            check_sdca_estimator(optimizer, sparse_combiner, columns)
            model_fn = linear_sdca_model_fn(head, columns, optimizer)
        else:
            canned_optimizer = optimizers.get_optimizer(
                optimizer, learning_rate=LEARNING_RATE
            )
            model_fn = linear_model_fn(head, columns, canned_optimizer, sparse_combiner)
        super().__init__(
            model_fn=model_fn,
            model_dir=model_dir,
            config=config,
            warm_start_from=warm_start_from,
        )


class LinearClassifier(LinearEstimator):
    """Classifies into `n_classes` classes; `BinaryClassHead` for 2, else `MultiClassHead`."""

    def __init__(
        self,
        feature_columns: Sequence[Any],
        model_dir: str | None = None,
        n_classes: int = 2,
        weight_column: Any = None,
        label_vocabulary: Sequence[str] | None = None,
        optimizer: Any = "Ftrl",
        config: Any = None,
        warm_start_from: Any = None,
        loss_reduction: str = SUM_OVER_BATCH_SIZE,
        sparse_combiner: str = "sum",
    ) -> None:
        check_sdca_estimator(
            optimizer,
            sparse_combiner,
            check_feature_columns(feature_columns),
            n_classes=n_classes,
            label_vocabulary=label_vocabulary,
        )
        super().__init__(
            classification_head(
                n_classes, weight_column, label_vocabulary, loss_reduction
            ),
            feature_columns,
            model_dir=model_dir,
            optimizer=optimizer,
            config=config,
            sparse_combiner=sparse_combiner,
            warm_start_from=warm_start_from,
        )


class LinearRegressor(LinearEstimator):
    """Predicts `label_dimension` values with a `RegressionHead`."""

    def __init__(
        self,
        feature_columns: Sequence[Any],
        model_dir: str | None = None,
        label_dimension: int = 1,
        weight_column: Any = None,
        optimizer: Any = "Ftrl",
        config: Any = None,
        warm_start_from: Any = None,
        loss_reduction: str = SUM_OVER_BATCH_SIZE,
        sparse_combiner: str = "sum",
    ) -> None:
        check_sdca_estimator(
            optimizer,
            sparse_combiner,
            check_feature_columns(feature_columns),
            label_dimension=label_dimension,
        )
        head = RegressionHead(
            label_dimension=label_dimension,
            weight_column=weight_column,
            loss_reduction=loss_reduction,
        )
        super().__init__(
            head,
            feature_columns,
            model_dir=model_dir,
            optimizer=optimizer,
            config=config,
            sparse_combiner=sparse_combiner,
            warm_start_from=warm_start_from,
        )
