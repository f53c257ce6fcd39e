"""`DNNLinearCombined{Classifier,Regressor,Estimator}`: wide and deep, as tf.estimator 2.15 built them.

The logits are the sum of a linear model over `linear_feature_columns` (the
"wide" part, `linear/linear_model/...`) and a feed-forward network over
`dnn_feature_columns` (the "deep" part, `dnn/...`); either part may be left
out. Each part trains its own variables with its own optimizer: the network
with Adagrad at 0.001, the linear model with Ftrl at
min(0.005, 1/sqrt(number of linear columns)) unless given. The network's
optimizer counts the global step; when both parts are present the linear
optimizer keeps a count of its own (`training/Ftrl/iter`), as 2.15 did, so
model_dirs written by 2.15 restore and train on here.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import tensorflow as tf

from keras_estimator._src.canned import optimizers
from keras_estimator._src.canned.dnn import (
    check_dropout,
    check_feature_columns,
    check_hidden_units,
    classification_head,
    dnn_logits,
)
from keras_estimator._src.canned.linear import check_sparse_combiner, linear_logits
from keras_estimator._src.estimator.estimator import Estimator
from keras_estimator._src.head.base_head import SUM_OVER_BATCH_SIZE, Head
from keras_estimator._src.head.regression_heads import RegressionHead

DNN_LEARNING_RATE = 0.001
LINEAR_LEARNING_RATE = 0.005


def linear_learning_rate(num_linear_feature_columns: int) -> float:
    """The linear part's rate when its optimizer is given by name."""
    return min(LINEAR_LEARNING_RATE, 1.0 / math.sqrt(num_linear_feature_columns))


def _trainable_since(before: set[int]) -> list[Any]:
    return [v for v in tf.compat.v1.trainable_variables() if id(v) not in before]


def dnn_linear_combined_model_fn(
    head: Head,
    linear_feature_columns: Sequence[Any],
    linear_optimizer: Any,
    dnn_feature_columns: Sequence[Any],
    dnn_optimizer: Any,
    dnn_hidden_units: Sequence[int],
    dnn_activation_fn: Callable[[Any], Any],
    dnn_dropout: float | None,
    batch_norm: bool,
    linear_sparse_combiner: str,
) -> Callable[..., Any]:
    """A model_fn training the wide and the deep part, each with its optimizer."""

    def model_fn(features: Any, labels: Any, mode: str) -> Any:
        if not isinstance(features, dict):
            raise ValueError(
                f"DNNLinearCombined estimators need features as a dict of tensors keyed "
                f"by feature name; input_fn gave {type(features).__name__}."
            )
        parts: list[tuple[Any, list[Any]]] = []  # (optimizer, variables)
        logits = []
        update_ops: list[Any] = []
        if dnn_feature_columns:
            before = {id(v) for v in tf.compat.v1.trainable_variables()}
            updates_before = len(tf.compat.v1.get_collection(tf.compat.v1.GraphKeys.UPDATE_OPS))
            logits.append(
                dnn_logits(
                    features,
                    dnn_feature_columns,
                    dnn_hidden_units,
                    head.logits_dimension,
                    dnn_activation_fn,
                    dnn_dropout,
                    batch_norm,
                    mode,
                )
            )
            parts.append((dnn_optimizer, _trainable_since(before)))
            update_ops = tf.compat.v1.get_collection(tf.compat.v1.GraphKeys.UPDATE_OPS)[
                updates_before:
            ]
        if linear_feature_columns:
            before = {id(v) for v in tf.compat.v1.trainable_variables()}
            logits.append(
                linear_logits(
                    features,
                    linear_feature_columns,
                    head.logits_dimension,
                    linear_sparse_combiner,
                )
            )
            parts.append((linear_optimizer, _trainable_since(before)))

        def train_op_fn(loss: Any) -> Any:
            replicas = tf.distribute.get_strategy().num_replicas_in_sync
            if head.loss_reduction == SUM_OVER_BATCH_SIZE and replicas > 1:
                loss = loss / replicas  # the optimizers sum the replicas' gradients
            ops = []
            for index, (optimizer, variables) in enumerate(parts):
                # The first part's optimizer counts the global step.
                ops.extend(optimizer.get_updates(loss, variables, own_iterations=index > 0))
            return tf.group(*ops, *update_ops)

        return head.create_estimator_spec(
            features,
            mode,
            tf.add_n(logits) if len(logits) > 1 else logits[0],
            labels=labels,
            train_op_fn=train_op_fn,
            regularization_losses=tf.compat.v1.losses.get_regularization_losses(),
        )

    return model_fn


def _checked_model_fn(
    head: Head,
    linear_feature_columns: Any,
    linear_optimizer: Any,
    dnn_feature_columns: Any,
    dnn_optimizer: Any,
    dnn_hidden_units: Any,
    dnn_activation_fn: Callable[[Any], Any],
    dnn_dropout: Any,
    batch_norm: bool,
    linear_sparse_combiner: str,
) -> Callable[..., Any]:
    """The model_fn for these arguments, after checking them."""
    if not isinstance(head, Head):
        raise TypeError(
            f"head must be a keras_estimator Head (MultiClassHead, ...), got "
            f"{type(head).__name__}: {head!r}."
        )
    if not linear_feature_columns and not dnn_feature_columns:
        raise ValueError(
            "Give linear_feature_columns, dnn_feature_columns or both; got "
            f"linear_feature_columns={linear_feature_columns!r} and "
            f"dnn_feature_columns={dnn_feature_columns!r}."
        )
    linear_columns: tuple[Any, ...] = ()
    canned_linear = None
    if linear_feature_columns:
        linear_columns = check_feature_columns(linear_feature_columns)
        canned_linear = optimizers.get_optimizer(
            linear_optimizer, learning_rate=linear_learning_rate(len(linear_columns))
        )
    dnn_columns: tuple[Any, ...] = ()
    units: tuple[int, ...] = ()
    canned_dnn = None
    if dnn_feature_columns:
        if not dnn_hidden_units:
            raise ValueError(
                f"dnn_hidden_units must be given with dnn_feature_columns (layer sizes "
                f"such as [64, 32]), got {dnn_hidden_units!r}."
            )
        dnn_columns = check_feature_columns(dnn_feature_columns)
        units = check_hidden_units(dnn_hidden_units)
        check_dropout(dnn_dropout)
        canned_dnn = optimizers.get_optimizer(dnn_optimizer, learning_rate=DNN_LEARNING_RATE)
    check_sparse_combiner(linear_sparse_combiner)
    return dnn_linear_combined_model_fn(
        head,
        linear_columns,
        canned_linear,
        dnn_columns,
        canned_dnn,
        units,
        dnn_activation_fn,
        dnn_dropout,
        bool(batch_norm),
        linear_sparse_combiner,
    )


class DNNLinearCombinedEstimator(Estimator):
    """Wide and deep with a given head; see the module."""

    def __init__(
        self,
        head: Head,
        model_dir: str | None = None,
        linear_feature_columns: Sequence[Any] | None = None,
        linear_optimizer: Any = "Ftrl",
        dnn_feature_columns: Sequence[Any] | None = None,
        dnn_optimizer: Any = "Adagrad",
        dnn_hidden_units: Sequence[int] | None = None,
        dnn_activation_fn: Callable[[Any], Any] = tf.nn.relu,
        dnn_dropout: float | None = None,
        config: Any = None,
        batch_norm: bool = False,
        linear_sparse_combiner: str = "sum",
    ) -> None:
        model_fn = _checked_model_fn(
            head,
            linear_feature_columns,
            linear_optimizer,
            dnn_feature_columns,
            dnn_optimizer,
            dnn_hidden_units,
            dnn_activation_fn,
            dnn_dropout,
            batch_norm,
            linear_sparse_combiner,
        )
        super().__init__(model_fn=model_fn, model_dir=model_dir, config=config)


class DNNLinearCombinedClassifier(Estimator):
    """Wide and deep into `n_classes` classes; `BinaryClassHead` for 2, else `MultiClassHead`."""

    def __init__(
        self,
        model_dir: str | None = None,
        linear_feature_columns: Sequence[Any] | None = None,
        linear_optimizer: Any = "Ftrl",
        dnn_feature_columns: Sequence[Any] | None = None,
        dnn_optimizer: Any = "Adagrad",
        dnn_hidden_units: Sequence[int] | None = None,
        dnn_activation_fn: Callable[[Any], Any] = tf.nn.relu,
        dnn_dropout: float | None = None,
        n_classes: int = 2,
        weight_column: Any = None,
        label_vocabulary: Sequence[str] | None = None,
        config: Any = None,
        warm_start_from: Any = None,
        loss_reduction: str = SUM_OVER_BATCH_SIZE,
        batch_norm: bool = False,
        linear_sparse_combiner: str = "sum",
    ) -> None:
        head = classification_head(n_classes, weight_column, label_vocabulary, loss_reduction)
        _init_combined(
            self,
            head,
            model_dir=model_dir,
            linear_feature_columns=linear_feature_columns,
            linear_optimizer=linear_optimizer,
            dnn_feature_columns=dnn_feature_columns,
            dnn_optimizer=dnn_optimizer,
            dnn_hidden_units=dnn_hidden_units,
            dnn_activation_fn=dnn_activation_fn,
            dnn_dropout=dnn_dropout,
            config=config,
            batch_norm=batch_norm,
            linear_sparse_combiner=linear_sparse_combiner,
            warm_start_from=warm_start_from,
        )


class DNNLinearCombinedRegressor(Estimator):
    """Wide and deep predicting `label_dimension` values with a `RegressionHead`."""

    def __init__(
        self,
        model_dir: str | None = None,
        linear_feature_columns: Sequence[Any] | None = None,
        linear_optimizer: Any = "Ftrl",
        dnn_feature_columns: Sequence[Any] | None = None,
        dnn_optimizer: Any = "Adagrad",
        dnn_hidden_units: Sequence[int] | None = None,
        dnn_activation_fn: Callable[[Any], Any] = tf.nn.relu,
        dnn_dropout: float | None = None,
        label_dimension: int = 1,
        weight_column: Any = None,
        config: Any = None,
        warm_start_from: Any = None,
        loss_reduction: str = SUM_OVER_BATCH_SIZE,
        batch_norm: bool = False,
        linear_sparse_combiner: str = "sum",
    ) -> None:
        head = RegressionHead(
            label_dimension=label_dimension,
            weight_column=weight_column,
            loss_reduction=loss_reduction,
        )
        _init_combined(
            self,
            head,
            model_dir=model_dir,
            linear_feature_columns=linear_feature_columns,
            linear_optimizer=linear_optimizer,
            dnn_feature_columns=dnn_feature_columns,
            dnn_optimizer=dnn_optimizer,
            dnn_hidden_units=dnn_hidden_units,
            dnn_activation_fn=dnn_activation_fn,
            dnn_dropout=dnn_dropout,
            config=config,
            batch_norm=batch_norm,
            linear_sparse_combiner=linear_sparse_combiner,
            warm_start_from=warm_start_from,
        )


def _init_combined(
    estimator: Estimator,
    head: Head,
    model_dir: str | None,
    linear_feature_columns: Any,
    linear_optimizer: Any,
    dnn_feature_columns: Any,
    dnn_optimizer: Any,
    dnn_hidden_units: Any,
    dnn_activation_fn: Callable[[Any], Any],
    dnn_dropout: Any,
    config: Any,
    batch_norm: bool,
    linear_sparse_combiner: str,
    warm_start_from: Any,
) -> None:
    model_fn = _checked_model_fn(
        head,
        linear_feature_columns,
        linear_optimizer,
        dnn_feature_columns,
        dnn_optimizer,
        dnn_hidden_units,
        dnn_activation_fn,
        dnn_dropout,
        batch_norm,
        linear_sparse_combiner,
    )
    Estimator.__init__(
        estimator,
        model_fn=model_fn,
        model_dir=model_dir,
        config=config,
        warm_start_from=warm_start_from,
    )
