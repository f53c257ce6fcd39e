"""`tf.compat.v1.estimator.DNNLinearCombined{Classifier,Regressor,Estimator}`, as 2.15 built them.

The logits are those of the V2 classes (`canned.dnn_linear_combined`): a
network over `dnn_feature_columns` (`dnn/...`) plus a linear model over
`linear_feature_columns` (`linear/linear_model/...`), either part optional.
They differ where 2.15's v1 classes did:
- the loss is summed over the batch by default (`loss_reduction`
  'weighted_sum');
- each part trains with a `tf.compat.v1.train` optimizer (`canned.v1_optimizers`):
  by name Adagrad at 0.001 for the network and Ftrl at
  min(0.005, 1/sqrt(number of linear columns)) for the linear model, or an
  instance, or a callable called in model_fn;
- the checkpoint holds plain v1 slots, `<var>/Adagrad` and `<var>/Ftrl`,
  `<var>/Ftrl_1` (no `t_0/` or `part_0/`), and no `training/...` variables;
- both optimizers update their variables and then the global step advances
  once, so neither keeps a step count of its own.

`input_layer_partitioner` is accepted and not applied: one process holds every
variable whole.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import tensorflow as tf

from keras_estimator._src.canned import v1_optimizers
from keras_estimator._src.canned.dnn import (
    check_dropout,
    check_feature_columns,
    check_hidden_units,
    classification_head,
    dnn_logits,
)
from keras_estimator._src.canned.dnn_linear_combined import linear_learning_rate
from keras_estimator._src.canned.linear import check_sparse_combiner, linear_logits
from keras_estimator._src.canned.v1_estimators import (
    WEIGHTED_SUM,
    _check_head,
    _deferred,
    _ignore_partitioner,
    v1_loss_reduction,
)
from keras_estimator._src.estimator.estimator import Estimator
from keras_estimator._src.head.base_head import Head
from keras_estimator._src.head.regression_heads import RegressionHead

DNN_LEARNING_RATE = 0.001
# 2.15 put Adam's beta powers of a combined model beside the head.
_NON_SLOT_SCOPE = "head/"


class _Part:
    """One part's optimizer: made now from a name or an instance, or in model_fn
    from a callable, as 2.15 did."""

    def __init__(self, optimizer: Any, learning_rate: float) -> None:
        self._spec = optimizer
        self._learning_rate = learning_rate
        self._optimizer = (
            None
            if _deferred(optimizer)
            else v1_optimizers.get_v1_optimizer(optimizer, learning_rate)
        )

    def optimizer(self) -> v1_optimizers.V1Optimizer:
        return self._optimizer or v1_optimizers.get_v1_optimizer(
            self._spec, self._learning_rate
        )


def _trainable_since(before: set[int]) -> list[Any]:
    return [v for v in tf.compat.v1.trainable_variables() if id(v) not in before]


def _v1_combined_model_fn(
    head: Head,
    linear_columns: tuple[Any, ...],
    linear_part: _Part | None,
    dnn_columns: tuple[Any, ...],
    dnn_part: _Part | None,
    hidden_units: tuple[int, ...],
    activation_fn: Callable[[Any], Any],
    dropout: float | None,
    batch_norm: bool,
    sparse_combiner: str,
) -> Callable[..., Any]:
    def model_fn(features: Any, labels: Any, mode: str) -> Any:
        if not isinstance(features, dict):
            raise ValueError(
                f"DNNLinearCombined estimators need features as a dict of tensors keyed "
                f"by feature name; input_fn gave {type(features).__name__}."
            )
        # (optimizer, variables), the network first as in 2.15.
        parts: list[tuple[v1_optimizers.V1Optimizer, list[Any]]] = []
        logits = []
        if dnn_part is not None:
            optimizer = dnn_part.optimizer()
            before = {id(v) for v in tf.compat.v1.trainable_variables()}
            logits.append(
                dnn_logits(
                    features,
                    dnn_columns,
                    hidden_units,
                    head.logits_dimension,
                    activation_fn,
                    dropout,
                    batch_norm,
                    mode,
                )
            )
            parts.append((optimizer, _trainable_since(before)))
        if linear_part is not None:
            optimizer = linear_part.optimizer()
            before = {id(v) for v in tf.compat.v1.trainable_variables()}
            logits.append(
                linear_logits(
                    features, linear_columns, head.logits_dimension, sparse_combiner
                )
            )
            parts.append((optimizer, _trainable_since(before)))

        def train_op_fn(loss: tf.Tensor) -> Any:
            updates = [
                optimizer.minimize(
                    loss, variables, "", _NON_SLOT_SCOPE, increment_global_step=False
                )
                for optimizer, variables in parts
            ]
            with tf.control_dependencies(updates):
                return tf.compat.v1.train.get_global_step().assign_add(1)

        return head.create_estimator_spec(
            features,
            mode,
            tf.add_n(logits) if len(logits) > 1 else logits[0],
            labels=labels,
            train_op_fn=train_op_fn,
            update_ops=tf.compat.v1.get_collection(tf.compat.v1.GraphKeys.UPDATE_OPS),
            regularization_losses=tf.compat.v1.losses.get_regularization_losses(),
        )

    return model_fn


def _checked_model_fn(
    head: Any,
    linear_feature_columns: Any,
    linear_optimizer: Any,
    dnn_feature_columns: Any,
    dnn_optimizer: Any,
    dnn_hidden_units: Any,
    dnn_activation_fn: Callable[[Any], Any],
    dnn_dropout: Any,
    input_layer_partitioner: Any,
    batch_norm: bool,
    linear_sparse_combiner: str,
) -> Callable[..., Any]:
    head = _check_head(head)
    if not linear_feature_columns and not dnn_feature_columns:
        raise ValueError(
            "Give linear_feature_columns, dnn_feature_columns or both; got "
            f"linear_feature_columns={linear_feature_columns!r} and "
            f"dnn_feature_columns={dnn_feature_columns!r}."
        )
    _ignore_partitioner("input_layer_partitioner", input_layer_partitioner)
    check_sparse_combiner(linear_sparse_combiner)
    linear_columns: tuple[Any, ...] = ()
    linear_part = None
    if linear_feature_columns:
        linear_columns = check_feature_columns(linear_feature_columns)
        linear_part = _Part(linear_optimizer, linear_learning_rate(len(linear_columns)))
    dnn_columns: tuple[Any, ...] = ()
    units: tuple[int, ...] = ()
    dnn_part = None
    if dnn_feature_columns:
        if not dnn_hidden_units:
            raise ValueError(
                f"dnn_hidden_units must be given with dnn_feature_columns (layer sizes "
                f"such as [64, 32]), got {dnn_hidden_units!r}."
            )
        dnn_columns = check_feature_columns(dnn_feature_columns)
        units = check_hidden_units(dnn_hidden_units)
        check_dropout(dnn_dropout)
        dnn_part = _Part(dnn_optimizer, DNN_LEARNING_RATE)
    return _v1_combined_model_fn(
        head,
        linear_columns,
        linear_part,
        dnn_columns,
        dnn_part,
        units,
        dnn_activation_fn,
        dnn_dropout,
        bool(batch_norm),
        linear_sparse_combiner,
    )


class DNNLinearCombinedEstimator(Estimator):
    """`tf.compat.v1.estimator.DNNLinearCombinedEstimator`: wide and deep with a given head."""

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
        input_layer_partitioner: Any = None,
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
            input_layer_partitioner,
            batch_norm,
            linear_sparse_combiner,
        )
        super().__init__(model_fn=model_fn, model_dir=model_dir, config=config)


class DNNLinearCombinedClassifier(Estimator):
    """`tf.compat.v1.estimator.DNNLinearCombinedClassifier`: `n_classes` classes, loss summed."""

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
        input_layer_partitioner: Any = None,
        config: Any = None,
        warm_start_from: Any = None,
        loss_reduction: str = WEIGHTED_SUM,
        batch_norm: bool = False,
        linear_sparse_combiner: str = "sum",
    ) -> None:
        head = classification_head(
            n_classes,
            weight_column,
            label_vocabulary,
            v1_loss_reduction(loss_reduction, weight_column),
        )
        model_fn = _checked_model_fn(
            head,
            linear_feature_columns,
            linear_optimizer,
            dnn_feature_columns,
            dnn_optimizer,
            dnn_hidden_units,
            dnn_activation_fn,
            dnn_dropout,
            input_layer_partitioner,
            batch_norm,
            linear_sparse_combiner,
        )
        super().__init__(
            model_fn=model_fn,
            model_dir=model_dir,
            config=config,
            warm_start_from=warm_start_from,
        )


class DNNLinearCombinedRegressor(Estimator):
    """`tf.compat.v1.estimator.DNNLinearCombinedRegressor`: `label_dimension` values, loss summed."""

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
        input_layer_partitioner: Any = None,
        config: Any = None,
        warm_start_from: Any = None,
        loss_reduction: str = WEIGHTED_SUM,
        batch_norm: bool = False,
        linear_sparse_combiner: str = "sum",
    ) -> None:
        head = RegressionHead(
            label_dimension=label_dimension,
            weight_column=weight_column,
            loss_reduction=v1_loss_reduction(loss_reduction, weight_column),
        )
        model_fn = _checked_model_fn(
            head,
            linear_feature_columns,
            linear_optimizer,
            dnn_feature_columns,
            dnn_optimizer,
            dnn_hidden_units,
            dnn_activation_fn,
            dnn_dropout,
            input_layer_partitioner,
            batch_norm,
            linear_sparse_combiner,
        )
        super().__init__(
            model_fn=model_fn,
            model_dir=model_dir,
            config=config,
            warm_start_from=warm_start_from,
        )
