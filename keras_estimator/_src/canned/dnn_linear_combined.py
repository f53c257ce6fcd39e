"""`DNNLinearCombined{Classifier,Regressor,Estimator}`: wide and deep, as tf.estimator 2.15 built them.

The logits are the sum of a linear model over `linear_feature_columns` (the
"wide" part, `linear/linear_model/...`) and a feed-forward network over
`dnn_feature_columns` (the "deep" part, `dnn/...`); either part may be left
out. Each part trains its own variables with its own optimizer: the network
with Adagrad at 0.001, the linear model with Ftrl at
min(0.005, 1/sqrt(number of linear columns)) unless given. The network's
optimizer counts the global step; when both parts are present the linear
optimizer keeps a count of its own (`training/Ftrl/iter`), as 2.15 did, so
model_dirs written by 2.15 restore and train on here. Given the same
optimizer name for both parts, the linear optimizer's variables are
`training/<Name>_1/...`, the names 2.15's graph gave them.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import tensorflow as tf

from keras_estimator._src.canned import optimizers
from keras_estimator._src.canned.dnn import (
    check_dropout,
    check_feature_columns,
    check_hidden_units,
    classification_head,
    dnn_logits,
    require_feature_dict,
    require_v2_columns,
)
from keras_estimator._src.canned.linear import check_sparse_combiner, linear_logits
from keras_estimator._src.estimator.estimator import Estimator
from keras_estimator._src.head import training_summaries
from keras_estimator._src.head.base_head import SUM_OVER_BATCH_SIZE, Head, check_head
from keras_estimator._src.head.regression_heads import RegressionHead

DNN_LEARNING_RATE = 0.001
LINEAR_LEARNING_RATE = 0.005


def linear_learning_rate(num_linear_feature_columns: int) -> float:
    """The linear part's rate when its optimizer is given by name."""
    return min(LINEAR_LEARNING_RATE, 1.0 / math.sqrt(num_linear_feature_columns))


@dataclasses.dataclass(frozen=True)
class WideAndDeep:
    """The checked arguments of both parts, and the logits they compute.

    The v1 classes (`canned.v1_dnn_linear_combined`) build the same network;
    only their optimizers and loss reduction differ.
    """

    linear_columns: tuple[Any, ...]
    dnn_columns: tuple[Any, ...]
    hidden_units: tuple[int, ...]
    activation_fn: Callable[[Any], Any]
    dropout: float | None
    batch_norm: bool
    sparse_combiner: str
    # The v1 classes' training summaries sit under one more scope
    # (`dnn/dnn/...`, `linear/bias`, `linear/linear/...`), as in 2.15.
    v1_summary_scopes: bool = False

    @classmethod
    def checked(
        cls,
        linear_feature_columns: Any,
        dnn_feature_columns: Any,
        dnn_hidden_units: Any,
        dnn_activation_fn: Callable[[Any], Any],
        dnn_dropout: Any,
        batch_norm: bool,
        linear_sparse_combiner: str,
    ) -> WideAndDeep:
        if not linear_feature_columns and not dnn_feature_columns:
            raise ValueError(
                "Give linear_feature_columns, dnn_feature_columns or both; got "
                f"linear_feature_columns={linear_feature_columns!r} and "
                f"dnn_feature_columns={dnn_feature_columns!r}."
            )
        linear_columns: tuple[Any, ...] = ()
        if linear_feature_columns:
            linear_columns = check_feature_columns(linear_feature_columns)
        dnn_columns: tuple[Any, ...] = ()
        units: tuple[int, ...] = ()
        if dnn_feature_columns:
            if not dnn_hidden_units:
                raise ValueError(
                    f"dnn_hidden_units must be given with dnn_feature_columns (layer "
                    f"sizes such as [64, 32]), got {dnn_hidden_units!r}."
                )
            dnn_columns = check_feature_columns(dnn_feature_columns)
            units = check_hidden_units(dnn_hidden_units)
            check_dropout(dnn_dropout)
        check_sparse_combiner(linear_sparse_combiner)
        return cls(
            linear_columns,
            dnn_columns,
            units,
            dnn_activation_fn,
            dnn_dropout,
            bool(batch_norm),
            linear_sparse_combiner,
        )

    def logits(
        self, features: Any, logits_dimension: int, mode: str
    ) -> tuple[tf.Tensor, list[Any] | None, list[Any] | None]:
        """(logits, the network's trainable variables, the linear model's).

        A part left out has None for its variables; the network is built
        first, as in 2.15.
        """
        require_feature_dict(features)
        logits = []
        dnn_variables = linear_variables = None
        if self.dnn_columns:
            with _variables_made() as made:
                logits.append(
                    dnn_logits(
                        features,
                        self.dnn_columns,
                        self.hidden_units,
                        logits_dimension,
                        self.activation_fn,
                        self.dropout,
                        self.batch_norm,
                        mode,
                        "dnn/" if self.v1_summary_scopes else "",
                    )
                )
            dnn_variables = _trainable(made)
        if self.linear_columns:
            linear_scope = "linear/" if self.v1_summary_scopes else ""
            with _variables_made() as made:
                logits.append(
                    linear_logits(
                        features,
                        self.linear_columns,
                        logits_dimension,
                        self.sparse_combiner,
                        linear_scope,
                    )
                )
            training_summaries.layer(f"{linear_scope}linear", logits[-1])
            linear_variables = _trainable(made)
        summed = tf.add_n(logits) if len(logits) > 1 else logits[0]
        return summed, dnn_variables, linear_variables


def _scope_names(names: Sequence[str]) -> list[str]:
    """Each optimizer's variable scope, made unique as 2.15's graph made it.

    The network's optimizer comes first and keeps its name; a second
    optimizer of the same name (`linear_optimizer='Adagrad',
    dnn_optimizer='Adagrad'`) becomes `Adagrad_1`.
    """
    taken: set[str] = set()
    scopes = []
    for name in names:
        scope, suffix = name, 0
        while scope in taken:
            suffix += 1
            scope = f"{name}_{suffix}"
        taken.add(scope)
        scopes.append(scope)
    return scopes


@contextlib.contextmanager
def _variables_made() -> Iterator[list[Any]]:
    """Within: the variables the enclosed code asks for, in order, each once.

    A part's variables are those it asks for, not those the trainable
    collection gained meanwhile: a trace of the step under a
    MirroredStrategy finds the collection already holding every variable.
    """
    made: list[Any] = []

    def record(next_creator: Callable[..., Any], **kwargs: Any) -> Any:
        variable = next_creator(**kwargs)
        if all(variable is not seen for seen in made):
            made.append(variable)
        return variable

    with tf.variable_creator_scope(record):
        yield made


def _trainable(variables: list[Any]) -> list[Any]:
    return [v for v in variables if getattr(v, "trainable", False)]


def dnn_linear_combined_model_fn(
    head: Head, network: WideAndDeep, linear_optimizer: Any, dnn_optimizer: Any
) -> Callable[..., Any]:
    """A model_fn training the wide and the deep part, each with its optimizer."""

    def model_fn(features: Any, labels: Any, mode: str) -> Any:
        for columns in (network.dnn_columns, network.linear_columns):
            if columns:
                require_v2_columns(columns)
        updates_before = len(tf.compat.v1.get_collection(tf.compat.v1.GraphKeys.UPDATE_OPS))
        logits, dnn_variables, linear_variables = network.logits(
            features, head.logits_dimension, mode
        )
        update_ops = tf.compat.v1.get_collection(tf.compat.v1.GraphKeys.UPDATE_OPS)[
            updates_before:
        ]
        parts = [
            (optimizer, variables)
            for optimizer, variables in (
                (dnn_optimizer, dnn_variables),
                (linear_optimizer, linear_variables),
            )
            if variables is not None
        ]

        def train_op_fn(loss: Any) -> Any:
            replicas = tf.distribute.get_strategy().num_replicas_in_sync
            if head.loss_reduction == SUM_OVER_BATCH_SIZE and replicas > 1:
                loss = loss / replicas  # the optimizers sum the replicas' gradients
            ops = []
            scopes = _scope_names([optimizer.name for optimizer, _ in parts])
            for index, ((optimizer, variables), scope) in enumerate(zip(parts, scopes, strict=True)):
                # The first part's optimizer counts the global step.
                if optimizers.is_legacy_subclass(optimizer):
                    ops.extend(
                        optimizers.call_get_updates(
                            optimizer, loss, variables, own_iterations=index > 0
                        )
                    )
                    continue
                ops.extend(
                    optimizer.get_updates(
                        loss, variables, own_iterations=index > 0, scope_name=scope
                    )
                )
            return tf.group(*ops, *update_ops)

        return head.create_estimator_spec(
            features,
            mode,
            logits,
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
    check_head(head)
    network = WideAndDeep.checked(
        linear_feature_columns,
        dnn_feature_columns,
        dnn_hidden_units,
        dnn_activation_fn,
        dnn_dropout,
        batch_norm,
        linear_sparse_combiner,
    )
    canned_linear = None
    if network.linear_columns:
        canned_linear = optimizers.get_optimizer(
            linear_optimizer, learning_rate=linear_learning_rate(len(network.linear_columns))
        )
    canned_dnn = None
    if network.dnn_columns:
        canned_dnn = optimizers.get_optimizer(dnn_optimizer, learning_rate=DNN_LEARNING_RATE)
    return dnn_linear_combined_model_fn(head, network, canned_linear, canned_dnn)


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
