"""`DNNClassifier`, `DNNRegressor` and `DNNEstimator`, as tf.estimator 2.15 built them.

The network: the feature columns' dense input
(`dnn/input_from_feature_columns/input_layer/...`), then per hidden layer a
dense layer with the activation (`dnn/hiddenlayer_<i>/{kernel,bias}`),
dropout in training, and batch normalization
(`dnn/hiddenlayer_<i>/batchnorm_<i>/...`, momentum 0.999), then the logits
(`dnn/logits/{kernel,bias}`). The head turns the logits into the loss,
predictions, metrics and signatures; the optimizer (`canned.optimizers`,
Adagrad at 0.001 unless given) keeps its slots under 2.15's names, so
model_dirs written by 2.15 restore and train on here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import tensorflow as tf

from keras_estimator._src.base.mode_keys import ModeKeys
from keras_estimator._src.canned import optimizers
from keras_estimator._src.estimator.estimator import Estimator
from keras_estimator._src.feature_column.parsing_utils import parse_example_spec
from keras_estimator._src.head import head_inputs, training_summaries
from keras_estimator._src.head.base_head import SUM_OVER_BATCH_SIZE, Head, check_head
from keras_estimator._src.head.classification_heads import (
    BinaryClassHead,
    MultiClassHead,
)
from keras_estimator._src.head.regression_heads import RegressionHead
from keras_estimator._src.tf_internals import deprecation_notices
from keras_estimator._src.tf_internals.feature_column_versions import are_v2_columns
from keras_estimator._src.v1_layers import core, dense, normalization


def check_features(features: Any, feature_columns: Sequence[Any]) -> None:
    """Fails clearly when input_fn lacks a feature the columns read."""
    if not isinstance(features, Mapping):
        return  # a single tensor: the columns' own error names the problem
    try:
        needed = set(parse_example_spec(list(feature_columns)))
    except (ValueError, TypeError):
        return  # columns without a parse spec are checked when they are built
    missing = sorted(needed - set(features))
    if missing:
        raise ValueError(
            f"The feature columns read features {missing} that input_fn did not give; "
            f"it gave {sorted(features)}. Return them from input_fn, or change "
            f"feature_columns."
        )


def require_feature_dict(features: Any) -> None:
    """Refuses features that are not a dict, with 2.15's ValueError and first words."""
    if not isinstance(features, Mapping):
        raise ValueError(
            "features should be a dictionary of `Tensor`s. Given type: "
            f"{type(features).__name__}. Return the features from input_fn as a dict "
            "keyed by feature name, e.g. {'age': tensor}."
        )


def dnn_logits(
    features: Any,
    feature_columns: Sequence[Any],
    hidden_units: Sequence[int],
    logits_dimension: int,
    activation_fn: Callable[[Any], Any],
    dropout: float | None,
    batch_norm: bool,
    mode: str,
    summary_scope: str = "",
) -> tf.Tensor:
    """The logits of the network the module describes.

    Each layer's output gets 2.15's training summaries (`head.training_summaries`),
    tagged `<summary_scope>dnn/hiddenlayer_<i>/...` and `<summary_scope>dnn/logits/...`.
    """
    require_feature_dict(features)
    check_features(features, feature_columns)
    training = mode == ModeKeys.TRAIN
    with tf.compat.v1.variable_scope("dnn"):
        with tf.compat.v1.variable_scope("input_from_feature_columns"):
            with deprecation_notices.quiet():
                net = tf.compat.v1.feature_column.input_layer(
                    features, list(feature_columns)
                )
        for index, units in enumerate(hidden_units):
            net = dense.dense(net, units, activation=activation_fn, name=f"hiddenlayer_{index}")
            if dropout is not None:
                net = core.dropout(net, rate=dropout, training=training)
            if batch_norm:
                with tf.compat.v1.variable_scope(f"hiddenlayer_{index}"):
                    net = normalization.batch_normalization(
                        net, momentum=0.999, training=training, name=f"batchnorm_{index}"
                    )
            training_summaries.layer(f"{summary_scope}dnn/hiddenlayer_{index}", net)
        logits = dense.dense(net, logits_dimension, name="logits")
        training_summaries.layer(f"{summary_scope}dnn/logits", logits)
        return logits


def canned_model_fn(
    head: Head,
    logits_fn: Callable[[Any, str], tf.Tensor],
    optimizer: Any = None,
    train_op_fn: Callable[[Any], Any] | None = None,
    summarize: Callable[[Head, Any, Any, Any, str], None] | None = None,
) -> Callable[..., Any]:
    """A model_fn training `logits_fn(features, mode)`'s variables through `head`.

    Every trainable variable trains with `optimizer`, or `train_op_fn(loss)`
    makes the train op; `UPDATE_OPS` (batch normalization) run with it;
    regularization losses join the loss. `summarize(head, features, labels,
    logits, mode)` adds a model's own training summaries.
    """

    def model_fn(features: Any, labels: Any, mode: str) -> Any:
        logits = logits_fn(features, mode)
        if summarize is not None:
            summarize(head, features, labels, logits, mode)
        if mode == ModeKeys.TRAIN and optimizers.is_legacy_subclass(optimizer):
            # 2.15 made a legacy optimizer count in the global step.
            optimizer.iterations = tf.compat.v1.train.get_global_step()
        return head.create_estimator_spec(
            features,
            mode,
            logits,
            labels=labels,
            optimizer=optimizer,
            trainable_variables=tf.compat.v1.trainable_variables(),
            train_op_fn=train_op_fn,
            update_ops=tf.compat.v1.get_collection(tf.compat.v1.GraphKeys.UPDATE_OPS),
            regularization_losses=tf.compat.v1.losses.get_regularization_losses(),
        )

    return model_fn


def dnn_model_fn(
    head: Head,
    hidden_units: Sequence[int],
    feature_columns: Sequence[Any],
    optimizer: Any,
    activation_fn: Callable[[Any], Any],
    dropout: float | None,
    batch_norm: bool,
) -> Callable[..., Any]:
    """A model_fn training the network with `head` and `optimizer`."""

    def logits_fn(features: Any, mode: str) -> tf.Tensor:
        require_v2_columns(feature_columns)
        return dnn_logits(
            features,
            feature_columns,
            hidden_units,
            head.logits_dimension,
            activation_fn,
            dropout,
            batch_norm,
            mode,
        )

    return canned_model_fn(head, logits_fn, optimizer)


class DNNEstimator(Estimator):
    """A feed-forward network with a given head; see the module."""

    def __init__(
        self,
        head: Head,
        hidden_units: Sequence[int],
        feature_columns: Sequence[Any],
        model_dir: str | None = None,
        optimizer: Any = "Adagrad",
        activation_fn: Callable[[Any], Any] = tf.nn.relu,
        dropout: float | None = None,
        config: Any = None,
        warm_start_from: Any = None,
        batch_norm: bool = False,
    ) -> None:
        check_head(head)
        units = check_hidden_units(hidden_units)
        columns = check_feature_columns(feature_columns)
        check_dropout(dropout)
        # Made now: a Keras optimizer's settings are read eagerly, and a bad
        # name fails here rather than in the first step.
        canned_optimizer = optimizers.get_optimizer(optimizer)
        model_fn = dnn_model_fn(
            head, units, columns, canned_optimizer, activation_fn, dropout, bool(batch_norm)
        )
        super().__init__(
            model_fn=model_fn, model_dir=model_dir, config=config, warm_start_from=warm_start_from
        )


class DNNClassifier(DNNEstimator):
    """Classifies into `n_classes` classes; `BinaryClassHead` for 2, else `MultiClassHead`."""

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
        config: Any = None,
        warm_start_from: Any = None,
        loss_reduction: str = SUM_OVER_BATCH_SIZE,
        batch_norm: bool = False,
    ) -> None:
        head = classification_head(n_classes, weight_column, label_vocabulary, loss_reduction)
        super().__init__(
            head,
            hidden_units,
            feature_columns,
            model_dir=model_dir,
            optimizer=optimizer,
            activation_fn=activation_fn,
            dropout=dropout,
            config=config,
            warm_start_from=warm_start_from,
            batch_norm=batch_norm,
        )


class DNNRegressor(DNNEstimator):
    """Predicts `label_dimension` values with a `RegressionHead`."""

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
        config: Any = None,
        warm_start_from: Any = None,
        loss_reduction: str = SUM_OVER_BATCH_SIZE,
        batch_norm: bool = False,
    ) -> None:
        head = RegressionHead(
            label_dimension=label_dimension,
            weight_column=weight_column,
            loss_reduction=loss_reduction,
        )
        super().__init__(
            head,
            hidden_units,
            feature_columns,
            model_dir=model_dir,
            optimizer=optimizer,
            activation_fn=activation_fn,
            dropout=dropout,
            config=config,
            warm_start_from=warm_start_from,
            batch_norm=batch_norm,
        )


def classification_head(
    n_classes: Any, weight_column: Any, label_vocabulary: Any, loss_reduction: str
) -> Head:
    """The head a canned classifier uses for `n_classes`."""
    n_classes = head_inputs.canned_n_classes(n_classes)
    if n_classes == 2:
        return BinaryClassHead(
            weight_column=weight_column,
            label_vocabulary=label_vocabulary,
            loss_reduction=loss_reduction,
        )
    return MultiClassHead(
        n_classes,
        weight_column=weight_column,
        label_vocabulary=label_vocabulary,
        loss_reduction=loss_reduction,
    )


def check_hidden_units(hidden_units: Any) -> tuple[int, ...]:
    """The layer sizes, each made an int as 2.15's layers made it.

    2.15's dense layers took `int(units)`: a command line's `"128 32".split()`,
    floats and numpy arrays of sizes all worked, and still do.
    """
    if isinstance(hidden_units, (str, bytes, Mapping)) or not isinstance(
        hidden_units, Iterable
    ):
        raise ValueError(
            f"hidden_units must be a list of layer sizes such as [64, 32], got "
            f"{hidden_units!r}."
        )
    given = list(hidden_units)
    try:
        units = tuple(int(u) for u in given)
    except (TypeError, ValueError):
        units = ()
    if not units or any(u <= 0 for u in units):
        raise ValueError(
            f"hidden_units must be a non-empty list of positive integers, got {given!r}."
        )
    return units


def check_feature_columns(feature_columns: Any) -> tuple[Any, ...]:
    if feature_columns is None or isinstance(feature_columns, (str, bytes)):
        raise ValueError(
            f"feature_columns must be a list of tf.feature_column columns, got "
            f"{feature_columns!r}."
        )
    # Any iterable of columns, as 2.15's tuple(feature_columns) took (a dict's
    # values(), a generator); a column is a namedtuple, so it is given in one.
    columns = (
        tuple(feature_columns) if isinstance(feature_columns, Iterable) else (feature_columns,)
    )
    if not columns:
        raise ValueError(
            "feature_columns is empty: give at least one column, e.g. "
            "[tf.feature_column.numeric_column('x')]."
        )
    return columns


def require_v2_columns(feature_columns: Sequence[Any]) -> None:
    """Refuses v1 feature columns, as 2.15's V2 estimators did when their model was built.

    The v1 estimators (`keras_estimator.compat.estimator.*`) take them.
    """
    if are_v2_columns(feature_columns):
        return
    v1_columns = [c for c in feature_columns if not are_v2_columns([c])]
    raise ValueError(
        "Received a feature column from TensorFlow v1, but this is a TensorFlow v2 "
        f"Estimator: {v1_columns!r}. Use tf.feature_column columns with it "
        "(tf.feature_column.shared_embeddings for shared embeddings), or the v1 "
        "estimator of the same name (tf.compat.v1.estimator.*, here "
        "keras_estimator.compat.estimator.*), which takes tf.compat.v1.feature_column "
        "columns."
    )


def check_dropout(dropout: Any) -> None:
    if dropout is not None and not (isinstance(dropout, (int, float)) and 0 <= dropout < 1):
        raise ValueError(f"dropout must be None or a rate in [0, 1), got {dropout!r}.")
