"""The experimental logit-fn API of tf.estimator 2.15.

A logit_fn maps features (and optionally mode, params, config) to logits, so
a custom model_fn can reuse a premade estimator's network and pair it with
any head: `dnn_logit_fn_builder` gives the DNN estimators' network
(`dnn/...` variables), `linear_logit_fn_builder` the linear model
(`linear_model/...`), and `call_logit_fn` calls a logit_fn with the
arguments it declares.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import tensorflow as tf

from keras_estimator._src.canned.dnn import (
    check_dropout,
    check_feature_columns,
    check_hidden_units,
    dnn_logits,
)
from keras_estimator._src.canned.linear import check_sparse_combiner
from keras_estimator._src.tf_internals import deprecation_notices


def _check_units(units: Any) -> int:
    if not isinstance(units, int) or isinstance(units, bool) or units < 1:
        raise ValueError(
            f"units must be a positive int (the logits dimension), got "
            f"{type(units).__name__}: {units!r}."
        )
    return units


def dnn_logit_fn_builder(
    units: int,
    hidden_units: Sequence[int],
    feature_columns: Sequence[Any],
    activation_fn: Callable[[Any], Any],
    dropout: float | None,
    input_layer_partitioner: Any,
    batch_norm: bool,
) -> Callable[[Any, str], tf.Tensor]:
    """A `logit_fn(features, mode)` computing the DNN estimators' logits.

    `input_layer_partitioner` is accepted for compatibility; variables are
    not partitioned.
    """
    del input_layer_partitioner
    logits_dimension = _check_units(units)
    layers = check_hidden_units(hidden_units)
    columns = check_feature_columns(feature_columns)
    check_dropout(dropout)

    def dnn_logit_fn(features: Any, mode: str) -> tf.Tensor:
        return dnn_logits(
            features,
            columns,
            layers,
            logits_dimension,
            activation_fn,
            dropout,
            bool(batch_norm),
            mode,
        )

    return dnn_logit_fn


def linear_logit_fn_builder(
    units: int, feature_columns: Sequence[Any], sparse_combiner: str = "sum"
) -> Callable[[Any], tf.Tensor]:
    """A `logit_fn(features)` computing a linear model's logits."""
    logits_dimension = _check_units(units)
    columns = check_feature_columns(feature_columns)
    check_sparse_combiner(sparse_combiner)

    def linear_logit_fn(features: Any) -> tf.Tensor:
        with deprecation_notices.quiet():
            return tf.compat.v1.feature_column.linear_model(
                features,
                list(columns),
                units=logits_dimension,
                sparse_combiner=sparse_combiner,
            )

    return linear_logit_fn


def call_logit_fn(
    logit_fn: Callable[..., Any], features: Any, mode: str, params: Any, config: Any
) -> Any:
    """Calls `logit_fn` with features and whichever of mode, params, config it takes.

    Raises:
        ValueError: the logit_fn returned neither a tensor nor a dict of
            tensors keyed by strings.
    """
    if not callable(logit_fn):
        raise TypeError(f"logit_fn must be callable, got {type(logit_fn).__name__}.")
    declared = inspect.signature(logit_fn).parameters
    offered = {"mode": mode, "params": params, "config": config}
    kwargs = {name: value for name, value in offered.items() if name in declared}
    logits = logit_fn(features=features, **kwargs)
    if isinstance(logits, tf.Tensor):
        return logits
    if isinstance(logits, Mapping) and all(
        isinstance(k, str) and isinstance(v, tf.Tensor) for k, v in logits.items()
    ):
        return logits
    raise ValueError(
        "logit_fn should return a Tensor or a dictionary mapping strings to "
        f"Tensors. logit_fn returned {type(logits).__name__}: {logits!r}; return "
        "the logits, or a dict of str keys to logits Tensors."
    )
