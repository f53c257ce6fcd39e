"""The sequence input of a recurrent model: what tf.keras 2's `SequenceFeatures` computed.

Keras 3 dropped `tf.keras.experimental.SequenceFeatures`. A canned RNN
estimator needs what it returned, for a dict of features:

* `sequence_input`: the sequence columns' dense tensors, sorted by column
  name, each reshaped to `[batch, time, width]` and concatenated on the last
  axis, with the examples' sequence lengths (which every column must agree
  on);
* `context_input`: the context columns' dense tensors, sorted by name,
  flattened to `[batch, width]` and concatenated, as `DenseFeatures` did;
* `concatenate_context`: the context repeated at every time step and
  appended to the sequence input.

These run inside a model_fn (legacy graph code): the columns' variables are
made with `tf.compat.v1.get_variable` in the variable scope the caller opens,
named `<scope>/<column>/<name>`, which is how tf.estimator 2.15's RNN
estimators named them (`sequence_features/<column>/embedding_weights`,
`dense_features/<column>/embedding_weights`), so its checkpoints restore.

TensorFlow's feature-column types come from `tf.__internal__.feature_column`
(checked on TF 2.15 and 2.21); nothing here imports `tensorflow.python`.
"""

from __future__ import annotations

import collections.abc
import functools
import inspect
from typing import Any

import tensorflow as tf

_fc = tf.__internal__.feature_column


@functools.cache
def _sequence_column_types() -> tuple[type[Any], type[Any]]:
    # TensorFlow does not export these classes: they are taken from instances,
    # made at first use so that importing the package logs no deprecation
    # warning.
    return (
        type(tf.feature_column.sequence_numeric_column("_")),
        type(tf.feature_column.sequence_categorical_column_with_identity("_", 1)),
    )


class ScopedStateManager(_fc.StateManager):  # type: ignore[misc, name-defined]
    """Gives the columns `tf.compat.v1.get_variable`s under `<scope>/<column>/`.

    Lookup tables are not kept: columns make them inline when they are
    computed, as in a TF1 graph.
    """

    def __init__(self, scope: str) -> None:
        self._scope = scope
        self._variables: dict[tuple[str, str], Any] = {}

    def create_variable(
        self,
        feature_column: Any,
        name: str,
        shape: Any,
        dtype: Any = None,
        trainable: bool = True,
        use_resource: bool = True,
        initializer: Any = None,
    ) -> Any:
        with tf.compat.v1.variable_scope(self._scope):
            variable = tf.compat.v1.get_variable(
                f"{feature_column.name}/{name}",
                shape=shape,
                dtype=dtype or tf.float32,
                initializer=initializer,
                trainable=trainable,
                use_resource=use_resource,
            )
        self._variables[(feature_column.name, name)] = variable
        return variable

    def get_variable(self, feature_column: Any, name: str) -> Any:
        key = (feature_column.name, name)
        if key not in self._variables:
            raise ValueError(
                f"Feature column {feature_column.name!r} has no variable {name!r}: "
                "its create_state must run before its tensors are computed."
            )
        return self._variables[key]

    def add_resource(
        self, feature_column: Any, resource_name: str, resource: Any
    ) -> None:
        del feature_column, resource_name, resource  # tables are made inline

    def has_resource(self, feature_column: Any, resource_name: str) -> bool:
        del feature_column, resource_name
        return False


def check_sequence_columns(columns: Any) -> tuple[Any, ...]:
    """The sequence columns sorted by name, after checking each one.

    Raises:
        ValueError: if `columns` is empty or not a list of columns, or holds a
            column that is not a sequence dense column, or two columns with
            the same name.
    """
    checked = _column_list(columns, "sequence_feature_columns")
    if not checked:
        raise ValueError(
            "sequence_feature_columns is empty: give at least one sequence column, "
            "e.g. [tf.feature_column.sequence_numeric_column('x')]."
        )
    for column in checked:
        if not (
            isinstance(column, _fc.SequenceDenseColumn) and is_sequence_column(column)
        ):
            raise ValueError(
                f"sequence_feature_columns takes sequence dense columns; got "
                f"{type(column).__name__} {getattr(column, 'name', None)!r}. Use "
                "tf.feature_column.sequence_numeric_column(...), or wrap a "
                "sequence_categorical_column_with_* column in embedding_column(...) "
                "or indicator_column(...); put non-sequence columns in "
                "context_feature_columns."
            )
    return _sorted_unique(checked)


def check_context_columns(columns: Any) -> tuple[Any, ...]:
    """The context columns sorted by name (none for None), after checking them.

    Raises:
        ValueError: if a column is not a dense column, is a sequence column,
            or shares its name with another.
    """
    if columns is None:
        return ()
    checked = _column_list(columns, "context_feature_columns")
    for column in checked:
        if is_sequence_column(column):
            raise ValueError(
                f"context_feature_columns takes non-sequence dense columns; got the "
                f"sequence column {column.name!r}. Move it to "
                "sequence_feature_columns."
            )
        if not isinstance(column, _fc.DenseColumn):
            raise ValueError(
                f"context_feature_columns takes dense columns; got "
                f"{type(column).__name__} {getattr(column, 'name', None)!r}. Wrap a "
                "categorical column in tf.feature_column.indicator_column(...) or "
                "embedding_column(...)."
            )
    return _sorted_unique(checked)


def sequence_input(
    features: Any, columns: tuple[Any, ...], training: bool = False
) -> tuple[tf.Tensor, tf.Tensor]:
    """`([batch, time, width] float input, [batch] int64 lengths)` of `columns`.

    Variables are made under `sequence_features/`; `columns` come from
    `check_sequence_columns`.
    """
    _check_mapping(features)
    state = ScopedStateManager("sequence_features")
    cache = _fc.FeatureTransformationCache(dict(features))
    outputs, lengths = [], []
    for column in columns:
        column.create_state(state)
        with tf.name_scope(_scope_name(column.name)):
            if (
                "training"
                in inspect.signature(column.get_sequence_dense_tensor).parameters
            ):
                pair = column.get_sequence_dense_tensor(cache, state, training=training)
            else:
                pair = column.get_sequence_dense_tensor(cache, state)
            dense, length = pair.dense_tensor, pair.sequence_length
            width = column.variable_shape.num_elements()
            shape = tf.shape(dense)
            outputs.append(tf.reshape(dense, [shape[0], shape[1], width]))
            lengths.append(length)
    return tf.concat(outputs, -1), _same_lengths(lengths, columns)


def context_input(
    features: Any, columns: tuple[Any, ...], training: bool = False
) -> tf.Tensor:
    """The `[batch, width]` float input of the context `columns`.

    Variables are made under `dense_features/`; `columns` come from
    `check_context_columns` and must not be empty.
    """
    _check_mapping(features)
    state = ScopedStateManager("dense_features")
    cache = _fc.FeatureTransformationCache(dict(features))
    outputs = []
    for column in columns:
        column.create_state(state)
        with tf.name_scope(_scope_name(column.name)):
            if "training" in inspect.signature(column.get_dense_tensor).parameters:
                dense = column.get_dense_tensor(cache, state, training=training)
            else:
                dense = column.get_dense_tensor(cache, state)
            width = column.variable_shape.num_elements()
            outputs.append(tf.reshape(dense, [tf.shape(dense)[0], width]))
    return tf.concat(outputs, -1)


def concatenate_context(sequence: tf.Tensor, context: tf.Tensor) -> tf.Tensor:
    """`sequence` `[batch, time, d1]` with `context` `[batch, d2]` appended at every step."""
    steps = tf.shape(sequence)[1]
    tiled = tf.tile(tf.expand_dims(tf.cast(context, sequence.dtype), 1), [1, steps, 1])
    return tf.concat([sequence, tiled], 2)


def _same_lengths(lengths: list[tf.Tensor], columns: tuple[Any, ...]) -> tf.Tensor:
    """The first column's lengths, checked (at run time) against the others'."""
    if len(lengths) == 1:
        return lengths[0]
    checks = [
        tf.debugging.assert_equal(
            lengths[0],
            other,
            message=(
                f"Sequence columns {columns[0].name!r} and {column.name!r} have "
                "different sequence lengths; every sequence feature of an example "
                "must have the same number of steps."
            ),
        )
        for other, column in zip(lengths[1:], columns[1:], strict=True)
    ]
    with tf.control_dependencies(checks):
        return tf.identity(lengths[0])


def _column_list(columns: Any, argument: str) -> list[Any]:
    if isinstance(columns, _fc.FeatureColumn):
        return [columns]
    if isinstance(columns, (str, bytes, collections.abc.Mapping)) or not isinstance(
        columns, collections.abc.Iterable
    ):
        raise ValueError(
            f"{argument} must be a list of feature columns, got "
            f"{type(columns).__name__}: {columns!r}."
        )
    return list(columns)


def _sorted_unique(columns: list[Any]) -> tuple[Any, ...]:
    names: dict[str, Any] = {}
    for column in columns:
        if column.name in names:
            raise ValueError(
                f"Two feature columns are named {column.name!r}: {names[column.name]!r} "
                f"and {column!r}. Drop one of them."
            )
        names[column.name] = column
    return tuple(sorted(columns, key=lambda column: column.name))


def is_sequence_column(column: Any) -> bool:
    """Whether `column` reads a sequence feature (directly or through the columns it wraps)."""
    while column is not None:
        if isinstance(column, _sequence_column_types()):
            return True
        column = getattr(column, "categorical_column", None)
    return False


def _check_mapping(features: Any) -> None:
    if not isinstance(features, collections.abc.Mapping):
        # 2.15's first words.
        raise ValueError(
            "inputs should be a dictionary of `Tensor`s. Given type: "
            f"{type(features).__name__}: {features!r}. A recurrent model's input_fn "
            "must give a dict of features keyed by column key."
        )


def _scope_name(column_name: str) -> str:
    return "".join(c if c.isalnum() or c in "_.-" else "_" for c in column_name)
