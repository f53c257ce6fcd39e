"""`DenseFeatures`: tf.keras 2's feature-column input layer, as a Keras 3 layer.

Keras 3 dropped `tf.keras.layers.DenseFeatures`. This layer takes a dict of
features and returns the concatenation of the dense tensors of its
`tf.feature_column` columns, sorted by column name, exactly as tf.keras 2.15's
layer and `tf.compat.v1.feature_column.input_layer` did.

TensorFlow's feature-column code computes every output; what this module adds
is `_KerasStateManager`, which gives the columns' state (embedding weights,
vocabulary tables) to the layer: weights become Keras variables of the layer,
so `model.trainable_weights`, `model.fit`, `model.save_weights` and
`tf.train.Checkpoint` see them.

TensorFlow's feature-column types come from `tf.__internal__.feature_column`,
the namespace TensorFlow exports for Keras (checked on TF 2.15 and 2.21);
nothing here imports `tensorflow.python`.
"""

from __future__ import annotations

import collections.abc
import inspect
import re
from typing import Any

import keras
import tensorflow as tf

_fc = tf.__internal__.feature_column


class _KerasStateManager(_fc.StateManager):  # type: ignore[misc, name-defined]
    """Creates the columns' variables with `layer.add_weight`; keeps their tables.

    Variables are keyed by column name (unique within a layer) and variable
    name. Keras 3 variable names may not hold `/`, so tf.keras 2's
    `dense_features/<column>/<name>` becomes the path `<layer>/<column>.<name>`.
    """

    def __init__(self, layer: keras.layers.Layer) -> None:
        self._layer = layer
        self._variables: dict[tuple[str, str], Any] = {}
        self._resources: dict[tuple[str, str], Any] = {}

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
        del use_resource  # Keras variables are always resource variables.
        key = (feature_column.name, name)
        if key in self._variables:
            raise ValueError(
                f"Feature column {feature_column.name!r} already created variable "
                f"{name!r}; a column's create_state must run once per layer."
            )
        # The layer's `trainable` flag is applied by Keras itself, so a layer
        # can be frozen and unfrozen later, unlike in tf.keras 2.
        variable = self._layer.add_weight(
            name=f"{_scope_name(feature_column.name)}.{name}",
            shape=tuple(shape),
            dtype=tf.as_dtype(dtype or tf.float32).name,
            initializer=initializer or "zeros",
            trainable=trainable,
        )
        self._variables[key] = variable
        _track(self._layer, key, variable)
        return variable

    def add_variable(self, feature_column: Any, var: Any) -> None:
        raise NotImplementedError(
            f"DenseFeatures cannot adopt variable {getattr(var, 'name', var)!r} of "
            f"column {feature_column.name!r}: columns must create their variables "
            "through create_variable."
        )

    def get_variable(self, feature_column: Any, name: str) -> Any:
        key = (feature_column.name, name)
        if key not in self._variables:
            raise ValueError(
                f"Feature column {feature_column.name!r} has no variable {name!r}: "
                "build the DenseFeatures layer (call it once) before reading it."
            )
        # The backing tf.Variable: TensorFlow's embedding ops take it as is,
        # and gradients reach the Keras variable through it.
        return self._variables[key].value

    def add_resource(self, feature_column: Any, resource_name: str, resource: Any) -> None:
        key = (feature_column.name, resource_name)
        self._resources[key] = resource
        if isinstance(resource, tf.__internal__.tracking.Trackable):
            _track(self._layer, key, resource)  # e.g. a vocabulary table

    def has_resource(self, feature_column: Any, resource_name: str) -> bool:
        return (feature_column.name, resource_name) in self._resources

    def get_resource(self, feature_column: Any, resource_name: str) -> Any:
        key = (feature_column.name, resource_name)
        if key not in self._resources:
            raise ValueError(
                f"Feature column {feature_column.name!r} has no resource "
                f"{resource_name!r}."
            )
        return self._resources[key]


@keras.saving.register_keras_serializable(package="keras_estimator")
class DenseFeatures(keras.layers.Layer):
    """A layer that produces a dense `Tensor` from `feature_columns`.

    The Keras 3 counterpart of tf.keras 2.15's `tf.keras.layers.DenseFeatures`:
    same arguments, same output (columns sorted by name, each flattened to
    `[batch, column.variable_shape.num_elements()]`, then concatenated).
    Embedding weights are variables of this layer.

    Args:
        feature_columns: An iterable of `DenseColumn`s (`numeric_column`,
            `bucketized_column`, `indicator_column`, `embedding_column`, ...).
            Wrap a categorical column in `indicator_column` or
            `embedding_column`.
        trainable: Whether the layer's variables are trained.
        name: The layer's name.
        **kwargs: Other `keras.layers.Layer` arguments.

    Raises:
        ValueError: If `feature_columns` is empty, a dict, has a column that is
            not a `DenseColumn`, or has two columns with the same name.

    Example:
        >>> price = tf.feature_column.numeric_column("price")
        >>> layer = DenseFeatures([price])
        >>> layer({"price": tf.constant([[1.0], [2.0]])}).shape
        TensorShape([2, 1])
    """

    def __init__(
        self,
        feature_columns: Any,
        trainable: bool = True,
        name: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(trainable=trainable, name=name, **kwargs)
        # Holds the columns' variables and tables as named attributes, for
        # `tf.train.Checkpoint` and SavedModel: Keras 3 layers only expose
        # what their attributes hold, and `add_weight` sets none.
        self._column_state = tf.Module(name="column_state")
        self._feature_columns = _normalize_feature_columns(feature_columns)
        self._state_manager = _KerasStateManager(self)

    @property
    def feature_columns(self) -> tuple[Any, ...]:
        """The columns, sorted by name (the order of the output)."""
        return tuple(self._feature_columns)

    def __call__(self, features: Any, *args: Any, **kwargs: Any) -> Any:
        sink = kwargs.get("cols_to_output_tensors")
        if sink is not None:
            # Keras copies dict arguments on the way to `call`; an object it
            # does not look into carries the caller's dict through.
            kwargs["cols_to_output_tensors"] = _OutputSink(sink)
        return super().__call__(features, *args, **kwargs)

    def build(self, input_shape: Any = None) -> None:
        del input_shape  # The columns know their shapes.
        for column in self._feature_columns:
            column.create_state(self._state_manager)
        self.built = True

    def call(
        self,
        features: Any,
        cols_to_output_tensors: Any = None,
        training: bool | None = None,
    ) -> Any:
        """Returns the `[batch, total_width]` float tensor of the columns.

        Args:
            features: A mapping from feature key to `Tensor` or
                `SparseTensor`, as `tf.io.parse_example` returns it.
            cols_to_output_tensors: If given, filled with a mapping from each
                column to its (flattened) output tensor.
            training: Passed to columns whose `get_dense_tensor` takes it.
        """
        if not isinstance(features, collections.abc.Mapping):
            raise ValueError(
                f"DenseFeatures expects a dict of features keyed by column key, "
                f"got {type(features).__name__}: {features!r}. Pass e.g. "
                f"{{'price': tensor}}."
            )
        cache = _fc.FeatureTransformationCache(dict(features))
        outputs = []
        for column in self._feature_columns:
            with tf.name_scope(_scope_name(column.name)):
                if "training" in inspect.signature(column.get_dense_tensor).parameters:
                    tensor = column.get_dense_tensor(
                        cache, self._state_manager, training=training
                    )
                else:
                    tensor = column.get_dense_tensor(cache, self._state_manager)
                width = column.variable_shape.num_elements()
                tensor = tf.reshape(tensor, (tf.shape(tensor)[0], width))
            if cols_to_output_tensors is not None:
                cols_to_output_tensors[column] = tensor
            outputs.append(tensor)
        _check_same_static_batch_size(outputs, self._feature_columns)
        return tf.concat(outputs, -1)

    def compute_output_shape(self, input_shape: Any) -> tuple[int | None, int]:
        batch = None
        if isinstance(input_shape, collections.abc.Mapping):
            for shape in input_shape.values():
                if shape and shape[0] is not None:
                    batch = shape[0]
                    break
        width = sum(c.variable_shape.num_elements() for c in self._feature_columns)
        return (batch, width)

    def get_config(self) -> dict[str, Any]:
        config = super().get_config()
        config["feature_columns"] = [
            _plain(_fc.serialize_feature_column(column))
            for column in self._feature_columns
        ]
        return config

    @classmethod
    def from_config(cls, config: dict[str, Any], custom_objects: Any = None) -> DenseFeatures:
        config = dict(config)
        # Shared across the columns, so a column that several others wrap
        # (e.g. one categorical column under an indicator and an embedding)
        # is deserialized once.
        columns_by_name: dict[str, Any] = {}
        config["feature_columns"] = [
            _fc.deserialize_feature_column(column, custom_objects, columns_by_name)
            for column in config["feature_columns"]
        ]
        return cls(**config)


class _OutputSink:
    """Fills the caller's `cols_to_output_tensors` dict from inside `call`."""

    def __init__(self, target: dict[Any, Any]) -> None:
        self._target = target

    def __setitem__(self, column: Any, tensor: Any) -> None:
        self._target[column] = tensor


def _track(layer: DenseFeatures, key: tuple[str, str], value: Any) -> None:
    """Names `value` `<column>/<name>` in the layer's checkpoint dependencies."""
    setattr(layer._column_state, f"{key[0]}/{key[1]}", value)


def _plain(config: Any) -> Any:
    """`config` with numpy arrays (e.g. a constant initializer's) as lists.

    Keras' own serializer would otherwise turn them into `__numpy__` dicts that
    TensorFlow's column deserializer cannot read back.
    """
    if isinstance(config, dict):
        return {key: _plain(value) for key, value in config.items()}
    if isinstance(config, (list, tuple)):
        return type(config)(_plain(value) for value in config)
    if hasattr(config, "tolist") and hasattr(config, "dtype"):
        return config.tolist()
    return config


def _scope_name(column_name: str) -> str:
    """`column_name` with the characters name scopes reject replaced by `_`."""
    return re.sub(r"[^A-Za-z0-9_.\-]", "_", column_name)


def _normalize_feature_columns(feature_columns: Any) -> list[Any]:
    """The columns as a list sorted by name, after checking each one."""
    if isinstance(feature_columns, _fc.FeatureColumn):
        feature_columns = [feature_columns]
    if isinstance(feature_columns, collections.abc.Mapping) or not isinstance(
        feature_columns, collections.abc.Iterable
    ):
        raise ValueError(
            f"feature_columns must be an iterable of feature columns, got "
            f"{type(feature_columns).__name__}: {feature_columns!r}. Pass a list, "
            "e.g. [tf.feature_column.numeric_column('price')]."
        )
    columns = list(feature_columns)
    if not columns:
        raise ValueError(
            "feature_columns is empty: give at least one column, e.g. "
            "[tf.feature_column.numeric_column('price')]."
        )
    by_name: dict[str, Any] = {}
    for column in columns:
        if not isinstance(column, _fc.DenseColumn):
            name = getattr(column, "name", None)
            raise ValueError(
                f"DenseFeatures takes only dense columns (DenseColumn); got "
                f"{type(column).__name__} {name!r}: {column!r}. Wrap a categorical "
                "column in tf.feature_column.indicator_column(...) or "
                "tf.feature_column.embedding_column(...)."
            )
        if column.name in by_name:
            raise ValueError(
                f"Two feature columns are named {column.name!r}: {by_name[column.name]!r} "
                f"and {column!r}. Drop one, or give one a different name (e.g. a "
                "different key in the features dict)."
            )
        by_name[column.name] = column
    return sorted(columns, key=lambda column: column.name)


def _check_same_static_batch_size(tensors: list[Any], columns: list[Any]) -> None:
    first: tuple[str, int] | None = None
    for tensor, column in zip(tensors, columns, strict=True):
        size = tensor.shape[0]
        if size is None:
            continue
        if first is None:
            first = (column.name, size)
        elif size != first[1]:
            raise ValueError(
                f"Features have different batch sizes (first dimension): column "
                f"{first[0]!r} has {first[1]}, column {column.name!r} has {size}. "
                "Give every feature the same batch size."
            )
