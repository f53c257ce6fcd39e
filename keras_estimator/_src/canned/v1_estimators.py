"""The `tf.compat.v1.estimator` premade classes: DNN, Linear and Baseline, as 2.15 built them.

They compute the same logits as the V2 classes (`canned.dnn`, `canned.linear`,
`canned.baseline`) under the same variable names, and differ where 2.15's v1
classes did:
- the loss is summed over the batch by default (`loss_reduction`
  'weighted_sum', i.e. `tf.compat.v1.losses.Reduction.SUM`), and their
  heads are 2.15's v1 heads (`head.v1_heads`);
- they train with `tf.compat.v1.train` optimizers (`canned.v1_optimizers`):
  by name Adagrad at 0.05 for a DNN, Ftrl at 0.2 for a linear model and 0.3
  for a baseline, or an optimizer instance, or a callable called in model_fn;
- their checkpoints hold the v1 slots (`<var>/t_0/Adagrad` in a DNN,
  `<var>/part_0/Ftrl` and `.../Ftrl_1` in a linear model, `<var>/Ftrl` in a
  baseline) and no `training/...` settings variables;
- the constructors take 2.15's v1 signatures, with `input_layer_partitioner`
  (DNN) and `partitioner` (Linear).

Partitioners are accepted and not applied: they place slices of a variable
on parameter servers, and one process holds every variable whole. A model_dir
that 2.15 wrote with several partitions does not restore here.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

import tensorflow as tf

from keras_estimator._src.base.mode_keys import ModeKeys
from keras_estimator._src.canned import v1_optimizers
from keras_estimator._src.canned.baseline import baseline_logits
from keras_estimator._src.canned.dnn import (
    canned_model_fn,
    check_dropout,
    check_feature_columns,
    check_hidden_units,
    dnn_logits,
)
from keras_estimator._src.canned.linear import (
    check_sparse_combiner,
    linear_logits,
    linear_sdca_model_fn,
)
from keras_estimator._src.canned.linear_sdca import (
    LinearSDCA,
    check_sdca_estimator,
    v1_slot_name,
)
from keras_estimator._src.estimator.estimator import Estimator
from keras_estimator._src.head import training_summaries, v1_heads
from keras_estimator._src.head.base_head import SUM, Head, check_head
from keras_estimator._src.head.v1_heads import WEIGHTED_SUM

logger = logging.getLogger("keras_estimator")

DNN_LEARNING_RATE = 0.05
LINEAR_LEARNING_RATE = 0.2
BASELINE_LEARNING_RATE = 0.3


class _V1Training:
    """How a v1 model trains: its optimizer and where 2.15 put the optimizer's
    variables."""

    def __init__(
        self, optimizer: Any, learning_rate: float, slot_prefix: str, scope: str
    ) -> None:
        self._optimizer = v1_optimizers.DeferredOptimizer(optimizer, learning_rate)
        self._slot_prefix = slot_prefix
        self._scope = scope

    def train_op_fn(self, loss: tf.Tensor) -> Any:
        return self._optimizer.get().minimize(
            loss, tf.compat.v1.trainable_variables(), self._slot_prefix, self._scope
        )


def average_loss_summary(head: Any, features: Any, labels: Any, logits: Any, mode: str) -> None:
    """2.15's v1 heads' `average_loss` training summary, for a summed loss.

    The summed loss over the summed example weights (without regularization),
    tagged `average_loss` (`average_loss/<name>` for a named head); with
    another reduction 2.15 wrote none.
    """
    if mode != ModeKeys.TRAIN or labels is None:
        return
    if getattr(head, "loss_reduction", None) != SUM or not hasattr(head, "loss_and_weights"):
        return
    _, _, unweighted, weights = head.loss_and_weights(labels, logits, features)
    weights = tf.cast(weights, unweighted.dtype)
    total = tf.reduce_sum(unweighted * weights)
    weight_sum = tf.reduce_sum(weights * tf.ones_like(unweighted))
    training_summaries.scalar(head.key("average_loss"), total / weight_sum)


def ignore_partitioner(argument: str, partitioner: Any) -> None:
    if partitioner is not None:
        logger.warning(
            "%s=%r is ignored: variables are kept whole in one process, as with "
            "one partition.",
            argument,
            partitioner,
        )


class DNNEstimator(Estimator):
    """`tf.compat.v1.estimator.DNNEstimator`: a feed-forward network with a given head."""

    def __init__(
        self,
        head: Head,
        hidden_units: Sequence[int],
        feature_columns: Sequence[Any],
        model_dir: str | None = None,
        optimizer: Any = "Adagrad",
        activation_fn: Callable[[Any], Any] = tf.nn.relu,
        dropout: float | None = None,
        input_layer_partitioner: Any = None,
        config: Any = None,
        warm_start_from: Any = None,
        batch_norm: bool = False,
    ) -> None:
        head = check_head(head)
        units = check_hidden_units(hidden_units)
        columns = check_feature_columns(feature_columns)
        check_dropout(dropout)
        ignore_partitioner("input_layer_partitioner", input_layer_partitioner)
        training = _V1Training(optimizer, DNN_LEARNING_RATE, "t_0/", "dnn/head/")

        def logits_fn(features: Any, mode: str) -> tf.Tensor:
            return dnn_logits(
                features,
                columns,
                units,
                head.logits_dimension,
                activation_fn,
                dropout,
                bool(batch_norm),
                mode,
                "dnn/",
            )

        super().__init__(
            model_fn=canned_model_fn(
                head, logits_fn, train_op_fn=training.train_op_fn, summarize=average_loss_summary
            ),
            model_dir=model_dir,
            config=config,
            warm_start_from=warm_start_from,
        )


class DNNClassifier(DNNEstimator):
    """`tf.compat.v1.estimator.DNNClassifier`: `n_classes` classes, loss summed."""

    def __init__(
        self,
        hidden_units: Sequence[int],
        feature_columns: Sequence[Any],
        model_dir: str | None = None,
        n_classes: int = 2,
        weight_column: Any = None,
        label_vocabulary: Sequence[str] | None = None,
        optimizer: Any = "Adagrad",
        activation_fn: Callable[[Any], Any] = tf.nn.relu,
        dropout: float | None = None,
        input_layer_partitioner: Any = None,
        config: Any = None,
        warm_start_from: Any = None,
        loss_reduction: str = WEIGHTED_SUM,
        batch_norm: bool = False,
    ) -> None:
        head = v1_heads.classification_head(
            n_classes, weight_column, label_vocabulary, loss_reduction
        )
        super().__init__(
            head,
            hidden_units,
            feature_columns,
            model_dir=model_dir,
            optimizer=optimizer,
            activation_fn=activation_fn,
            dropout=dropout,
            input_layer_partitioner=input_layer_partitioner,
            config=config,
            warm_start_from=warm_start_from,
            batch_norm=batch_norm,
        )


class DNNRegressor(DNNEstimator):
    """`tf.compat.v1.estimator.DNNRegressor`: `label_dimension` values, loss summed."""

    def __init__(
        self,
        hidden_units: Sequence[int],
        feature_columns: Sequence[Any],
        model_dir: str | None = None,
        label_dimension: int = 1,
        weight_column: Any = None,
        optimizer: Any = "Adagrad",
        activation_fn: Callable[[Any], Any] = tf.nn.relu,
        dropout: float | None = None,
        input_layer_partitioner: Any = None,
        config: Any = None,
        warm_start_from: Any = None,
        loss_reduction: str = WEIGHTED_SUM,
        batch_norm: bool = False,
    ) -> None:
        head = v1_heads.regression_head(label_dimension, weight_column, loss_reduction)
        super().__init__(
            head,
            hidden_units,
            feature_columns,
            model_dir=model_dir,
            optimizer=optimizer,
            activation_fn=activation_fn,
            dropout=dropout,
            input_layer_partitioner=input_layer_partitioner,
            config=config,
            warm_start_from=warm_start_from,
            batch_norm=batch_norm,
        )


class LinearEstimator(Estimator):
    """`tf.compat.v1.estimator.LinearEstimator`: a linear model with a given head."""

    def __init__(
        self,
        head: Head,
        feature_columns: Sequence[Any],
        model_dir: str | None = None,
        optimizer: Any = "Ftrl",
        config: Any = None,
        partitioner: Any = None,
        sparse_combiner: str = "sum",
        warm_start_from: Any = None,
    ) -> None:
        head = check_head(head)
        check_sparse_combiner(sparse_combiner)
        columns = check_feature_columns(feature_columns)
        ignore_partitioner("partitioner", partitioner)
        if isinstance(optimizer, LinearSDCA):
            check_sdca_estimator(optimizer, sparse_combiner, columns)
            model_fn = linear_sdca_model_fn(head, columns, optimizer, v1_slot_name)
        else:
            # 2.15 gave a name the flat 0.2, whatever the number of columns.
            training = _V1Training(
                optimizer, LINEAR_LEARNING_RATE, "part_0/", "linear/head/"
            )

            def logits_fn(features: Any, mode: str) -> tf.Tensor:
                return linear_logits(
                    features, columns, head.logits_dimension, sparse_combiner, "linear/"
                )

            model_fn = canned_model_fn(
                head,
                logits_fn,
                train_op_fn=training.train_op_fn,
                summarize=average_loss_summary,
            )
        super().__init__(
            model_fn=model_fn,
            model_dir=model_dir,
            config=config,
            warm_start_from=warm_start_from,
        )


class LinearClassifier(LinearEstimator):
    """`tf.compat.v1.estimator.LinearClassifier`: `n_classes` classes, loss summed."""

    def __init__(
        self,
        feature_columns: Sequence[Any],
        model_dir: str | None = None,
        n_classes: int = 2,
        weight_column: Any = None,
        label_vocabulary: Sequence[str] | None = None,
        optimizer: Any = "Ftrl",
        config: Any = None,
        partitioner: Any = None,
        warm_start_from: Any = None,
        loss_reduction: str = WEIGHTED_SUM,
        sparse_combiner: str = "sum",
    ) -> None:
        check_sdca_estimator(
            optimizer,
            sparse_combiner,
            check_feature_columns(feature_columns),
            n_classes=n_classes,
            label_vocabulary=label_vocabulary,
        )
        head = v1_heads.classification_head(
            n_classes, weight_column, label_vocabulary, loss_reduction
        )
        super().__init__(
            head,
            feature_columns,
            model_dir=model_dir,
            optimizer=optimizer,
            config=config,
            partitioner=partitioner,
            sparse_combiner=sparse_combiner,
            warm_start_from=warm_start_from,
        )


class LinearRegressor(LinearEstimator):
    """`tf.compat.v1.estimator.LinearRegressor`: `label_dimension` values, loss summed."""

    def __init__(
        self,
        feature_columns: Sequence[Any],
        model_dir: str | None = None,
        label_dimension: int = 1,
        weight_column: Any = None,
        optimizer: Any = "Ftrl",
        config: Any = None,
        partitioner: Any = None,
        warm_start_from: Any = None,
        loss_reduction: str = WEIGHTED_SUM,
        sparse_combiner: str = "sum",
    ) -> None:
        check_sdca_estimator(
            optimizer,
            sparse_combiner,
            check_feature_columns(feature_columns),
            label_dimension=label_dimension,
        )
        head = v1_heads.regression_head(label_dimension, weight_column, loss_reduction)
        super().__init__(
            head,
            feature_columns,
            model_dir=model_dir,
            optimizer=optimizer,
            config=config,
            partitioner=partitioner,
            sparse_combiner=sparse_combiner,
            warm_start_from=warm_start_from,
        )


class BaselineEstimator(Estimator):
    """`tf.compat.v1.estimator.BaselineEstimator`: a learned constant with a given head."""

    def __init__(
        self,
        head: Head,
        model_dir: str | None = None,
        optimizer: Any = "Ftrl",
        config: Any = None,
    ) -> None:
        head = check_head(head)
        training = _V1Training(optimizer, BASELINE_LEARNING_RATE, "", "head/")

        def logits_fn(features: Any, mode: str) -> tf.Tensor:
            return baseline_logits(features, head.logits_dimension)

        super().__init__(
            model_fn=canned_model_fn(
                head, logits_fn, train_op_fn=training.train_op_fn, summarize=average_loss_summary
            ),
            model_dir=model_dir,
            config=config,
        )


class BaselineClassifier(BaselineEstimator):
    """`tf.compat.v1.estimator.BaselineClassifier`: the label distribution, loss summed."""

    def __init__(
        self,
        model_dir: str | None = None,
        n_classes: int = 2,
        weight_column: Any = None,
        label_vocabulary: Sequence[str] | None = None,
        optimizer: Any = "Ftrl",
        config: Any = None,
        loss_reduction: str = WEIGHTED_SUM,
    ) -> None:
        head = v1_heads.classification_head(
            n_classes, weight_column, label_vocabulary, loss_reduction
        )
        super().__init__(head, model_dir=model_dir, optimizer=optimizer, config=config)


class BaselineRegressor(BaselineEstimator):
    """`tf.compat.v1.estimator.BaselineRegressor`: the label mean, loss summed."""

    def __init__(
        self,
        model_dir: str | None = None,
        label_dimension: int = 1,
        weight_column: Any = None,
        optimizer: Any = "Ftrl",
        config: Any = None,
        loss_reduction: str = WEIGHTED_SUM,
    ) -> None:
        head = v1_heads.regression_head(label_dimension, weight_column, loss_reduction)
        super().__init__(head, model_dir=model_dir, optimizer=optimizer, config=config)
