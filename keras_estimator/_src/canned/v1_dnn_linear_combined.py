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

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

import tensorflow as tf

from keras_estimator._src.canned import v1_optimizers
from keras_estimator._src.canned.dnn_linear_combined import (
    WideAndDeep,
    linear_learning_rate,
)
from keras_estimator._src.canned.v1_estimators import (
    average_loss_summary,
    ignore_partitioner,
)
from keras_estimator._src.estimator.estimator import Estimator
from keras_estimator._src.head import v1_heads
from keras_estimator._src.head.base_head import Head, check_head
from keras_estimator._src.head.v1_heads import WEIGHTED_SUM

DNN_LEARNING_RATE = 0.001
# 2.15 put Adam's beta powers of a combined model beside the head.
_NON_SLOT_SCOPE = "head/"


def _v1_combined_model_fn(
    head: Head,
    network: WideAndDeep,
    linear_optimizer: v1_optimizers.DeferredOptimizer | None,
    dnn_optimizer: v1_optimizers.DeferredOptimizer | None,
) -> Callable[..., Any]:
    def model_fn(features: Any, labels: Any, mode: str) -> Any:
        logits, dnn_variables, linear_variables = network.logits(
            features, head.logits_dimension, mode
        )
        average_loss_summary(head, features, labels, logits, mode)
        # (optimizer, variables), the network first as in 2.15.
        parts = [
            (optimizer.get(), variables)
            for optimizer, variables in (
                (dnn_optimizer, dnn_variables),
                (linear_optimizer, linear_variables),
            )
            if optimizer is not None and variables is not None
        ]

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
            logits,
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
    head = check_head(head)
    network = WideAndDeep.checked(
        linear_feature_columns,
        dnn_feature_columns,
        dnn_hidden_units,
        dnn_activation_fn,
        dnn_dropout,
        batch_norm,
        linear_sparse_combiner,
    )
    network = dataclasses.replace(network, v1_summary_scopes=True)
    ignore_partitioner("input_layer_partitioner", input_layer_partitioner)
    linear = None
    if network.linear_columns:
        linear = v1_optimizers.DeferredOptimizer(
            linear_optimizer, linear_learning_rate(len(network.linear_columns))
        )
    dnn = None
    if network.dnn_columns:
        dnn = v1_optimizers.DeferredOptimizer(dnn_optimizer, DNN_LEARNING_RATE)
    return _v1_combined_model_fn(head, network, linear, dnn)


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
        head = v1_heads.classification_head(
            n_classes, weight_column, label_vocabulary, loss_reduction
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
        head = v1_heads.regression_head(label_dimension, weight_column, loss_reduction)
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
