"""`Layer`: the base of the layer classes, holding TF1's variable-scope rules.

A layer object may be constructed anywhere (eagerly too) and is called while
a graph is built. Its first call opens its variable scope, named as TF1 named
it: the given `name`, or else the snake_case class name made unique per graph
(`dense`, `dense_1`, ...). `build` then creates the variables there with
`tf.compat.v1.get_variable`, so they carry TF1's names (`dense/kernel`).
Later calls in the same graph re-enter that scope with `reuse=True` and
create nothing. A call in another graph (a new trace of the model_fn) builds
again in the same scope with `AUTO_REUSE`, which hands back the variables the
surrounding variable store holds for those names.
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Sequence
from typing import Any

import keras
import tensorflow as tf

from keras_estimator._src.v1_layers import common, keras_style
from keras_estimator._src.v1_layers import input_spec as _input_spec

# Construction arguments of Keras layers that only shape a Keras functional
# model; accepted, as TF1 layers accepted them, and otherwise unused here.
_KERAS_SHAPE_ARGUMENTS = ("input_shape", "batch_input_shape", "batch_size", "input_dim")
# Keyword arguments of `add_weight` passed on to `tf.compat.v1.get_variable`.
_GET_VARIABLE_ARGUMENTS = ("caching_device", "collections", "validate_shape")


def snake_case(class_name: str) -> str:
    """`Conv2DTranspose` -> `conv2d_transpose`, as TF1 named unnamed layers.

    A private class (`_Scale`) gets a `private` prefix (`private__scale`), as
    in TF1, since a scope name cannot start with an underscore.
    """
    words = re.sub(r"(.)([A-Z][a-z0-9]+)", r"\1_\2", class_name)
    snake = re.sub(r"([a-z])([A-Z])", r"\1_\2", words).lower()
    return "private" + snake if snake.startswith("_") else snake


class Layer:
    """Base class of TF1-style layers; subclass it to write one.

    A subclass creates its variables in `build(input_shape)` with
    `add_weight` (TF1's `add_variable` also works) and computes in
    `call(inputs, ...)`. Call the layer (or its `apply`) inside a model_fn.

    Args:
        trainable: Whether the layer's variables are trainable.
        name: Name of the layer; its variable scope is this name (or, if
            None, the snake_case class name) made unique per graph at the
            first call: `dense`, `dense_1`, ...
        dtype: Dtype of the variables; None means the first input's dtype
            (float32 for non-float inputs).
        **kwargs: `activity_regularizer` (a callable whose value on the
            outputs, divided by the batch size, is added to `losses` and to
            `GraphKeys.REGULARIZATION_LOSSES`); `_scope` and `_reuse`, the
            variable scope and reuse flag of the functional forms; and Keras'
            `input_shape`-style arguments, which are ignored.

    Raises:
        TypeError: on an unknown keyword argument or a non-string `name`.
        ValueError: for `_scope` or `_reuse` under Keras-style variables.

    Example:
        >>> class Scale(Layer):  # doctest: +SKIP
        ...     def build(self, input_shape):
        ...         self.factor = self.add_weight("factor", [input_shape[-1]])
        ...     def call(self, inputs):
        ...         return inputs * self.factor
    """

    def __init__(
        self,
        trainable: bool = True,
        name: str | None = None,
        dtype: Any = None,
        **kwargs: Any,
    ) -> None:
        if name is not None and not isinstance(name, str):
            raise TypeError(f"`name` must be a string or None, received name={name!r}.")
        scope = kwargs.pop("_scope", None)
        reuse = kwargs.pop("_reuse", None)
        activity_regularizer = kwargs.pop("activity_regularizer", None)
        unknown = sorted(set(kwargs) - set(_KERAS_SHAPE_ARGUMENTS))
        if unknown:
            raise TypeError(
                f"{type(self).__name__} got unexpected keyword arguments {unknown}. "
                "Remove them; layers take their own arguments, `trainable`, "
                "`name`, `dtype` and `activity_regularizer`."
            )
        self._keras_style = keras_style.is_keras_style()
        if self._keras_style and (scope is not None or reuse is not None):
            raise ValueError(
                "Layers made under keras_style_scope() or after set_keras_style() "
                f"never share variables, received _scope={scope!r}, "
                f"_reuse={reuse!r}. Reuse the layer object instead."
            )
        self.trainable = bool(trainable)
        self._named = bool(name)
        self._base_name = name or snake_case(type(self).__name__)
        self._name = self._base_name
        self._dtype = None if dtype is None else tf.as_dtype(dtype)
        self._scope_name_arg = scope
        self._reuse = reuse
        self._activity_regularizer = activity_regularizer
        self.built = False
        self.input_spec: Any = None
        self._scope: Any = None  # the captured tf.compat.v1.VariableScope
        self._graph: Any = None  # weak reference to the graph built in
        self._trainable_weights: list[tf.Variable] = []
        self._non_trainable_weights: list[tf.Variable] = []
        self._losses: list[tf.Tensor] = []
        self._updates: list[Any] = []

    # ---- what the layer holds ------------------------------------------------
    @property
    def name(self) -> str:
        """The layer's name: its variable scope's once called."""
        return self._name

    @property
    def dtype(self) -> str | None:
        """Name of the variables' dtype (None until known)."""
        return None if self._dtype is None else self._dtype.name

    @property
    def scope_name(self) -> str:
        """Full name of the layer's variable scope; ValueError before a call."""
        if self._scope is None:
            raise ValueError(
                f"Layer {self.name} has no variable scope until it is first "
                "called. Call it on a tensor first."
            )
        return self._scope.name

    @property
    def trainable_weights(self) -> list[tf.Variable]:
        """Variables trained by the optimizer (none if not `trainable`)."""
        return list(self._trainable_weights) if self.trainable else []

    @property
    def non_trainable_weights(self) -> list[tf.Variable]:
        """Variables not trained (all of them if the layer is not `trainable`)."""
        if self.trainable:
            return list(self._non_trainable_weights)
        return self._trainable_weights + self._non_trainable_weights

    @property
    def weights(self) -> list[tf.Variable]:
        """`trainable_weights` then `non_trainable_weights`."""
        return self.trainable_weights + self.non_trainable_weights

    trainable_variables = trainable_weights
    non_trainable_variables = non_trainable_weights
    variables = weights

    @property
    def losses(self) -> list[tf.Tensor]:
        """Regularization losses of the variables and the outputs."""
        return list(self._losses)

    @property
    def updates(self) -> list[Any]:
        """Update ops, e.g. moving averages; also in `GraphKeys.UPDATE_OPS`."""
        return list(self._updates)

    # ---- what subclasses call and override -----------------------------------
    def build(self, input_shape: Any) -> None:
        """Creates the variables; runs once per graph, before the first `call`.

        Args:
            input_shape: `tf.TensorShape` of the inputs (a structure of them
                for several inputs).
        """
        del input_shape
        self.built = True

    def call(self, inputs: Any, *args: Any, **kwargs: Any) -> Any:
        """The layer's computation; the identity unless overridden."""
        del args, kwargs
        return inputs

    def add_weight(
        self,
        name: str,
        shape: Sequence[int] | None = None,
        dtype: Any = None,
        initializer: Any = None,
        regularizer: Any = None,
        trainable: bool | None = None,
        constraint: Any = None,
        use_resource: bool | None = None,
        synchronization: Any = tf.VariableSynchronization.AUTO,
        aggregation: Any = tf.VariableAggregation.NONE,
        partitioner: Any = None,
        **kwargs: Any,
    ) -> tf.Variable:
        """Gets or creates the variable `<scope>/<name>` with `get_variable`.

        Call it from `build`. `regularizer`'s loss is recorded when the
        variable is new; on-read variables (moving statistics) are not
        trainable.

        Raises:
            TypeError: on a non-string `name` or an unknown keyword.
            ValueError: for `trainable=True` with on-read synchronization.
        """
        del use_resource  # Variables are resource variables in TF2.
        if not isinstance(name, str):
            raise TypeError(f"`name` must be a string, received name={name!r}.")
        unknown = sorted(set(kwargs) - set(_GET_VARIABLE_ARGUMENTS))
        if unknown:
            raise TypeError(
                f"add_weight got unexpected keyword arguments {unknown}; it "
                f"accepts {list(_GET_VARIABLE_ARGUMENTS)} besides its own."
            )
        on_read = synchronization == tf.VariableSynchronization.ON_READ
        if on_read and trainable:
            raise ValueError(
                f"Variable {name} is synchronized on read and cannot be "
                f"trainable, received trainable={trainable!r}. Pass "
                "trainable=False."
            )
        trainable = (not on_read) if trainable is None else bool(trainable)
        dtype = tf.as_dtype(dtype or self._dtype or tf.float32)
        variable = common.add_variable(
            name,
            [] if shape is None else shape,
            dtype,
            initializer,
            regularizer,
            constraint,
            trainable and self.trainable,
            losses=self._losses,
            synchronization=synchronization,
            aggregation=aggregation,
            partitioner=partitioner,
            **kwargs,
        )
        owned = self._trainable_weights if trainable else self._non_trainable_weights
        if all(variable is not v for v in owned):
            owned.append(variable)
        return variable

    add_variable = add_weight

    def add_loss(self, losses: Any, inputs: Any = None) -> None:
        """Records loss tensors, also in `GraphKeys.REGULARIZATION_LOSSES`."""
        del inputs
        for loss in tf.nest.flatten(losses):
            self._losses.append(loss)
            tf.compat.v1.add_to_collection(
                common.GraphKeys.REGULARIZATION_LOSSES, loss
            )

    def add_update(self, updates: Any, inputs: Any = None) -> None:
        """Records update ops, also in `GraphKeys.UPDATE_OPS`."""
        del inputs
        for update in tf.nest.flatten(updates):
            self._updates.append(update)
            tf.compat.v1.add_to_collection(common.GraphKeys.UPDATE_OPS, update)

    def get_config(self) -> dict[str, Any]:
        """The construction arguments, as given (objects are not serialized)."""
        return {"name": self.name, "trainable": self.trainable, "dtype": self.dtype}

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> Layer:
        """A new, unbuilt layer from `get_config()`'s output."""
        return cls(**config)

    # ---- calling -------------------------------------------------------------
    def __call__(self, inputs: Any, *args: Any, **kwargs: Any) -> Any:
        """Builds the layer if needed, then runs `call` in its variable scope.

        A `scope` keyword (TF1's) names the variable scope at the first call.
        """
        common.require_graph(type(self).__name__)
        scope_arg = kwargs.pop("scope", None)
        graph = tf.compat.v1.get_default_graph()
        if self._scope is None:
            with self._first_scope(scope_arg) as scope:
                self._scope = scope
                if not self._named:
                    self._name = scope.name.rsplit("/", 1)[-1]
                return self._call_in_scope(graph, inputs, args, kwargs)
        same_graph = self._graph is not None and self._graph() is graph
        reuse = True if same_graph else tf.compat.v1.AUTO_REUSE
        with (
            tf.compat.v1.variable_scope(
                self._scope, reuse=reuse, auxiliary_name_scope=False
            ),
            tf.compat.v1.name_scope(self._scope.original_name_scope),
        ):
            return self._call_in_scope(graph, inputs, args, kwargs)

    apply = __call__

    def _first_scope(self, scope_arg: Any) -> Any:
        """The variable scope of the first call, as TF1 chose it.

        Without `_scope` (the functional forms pass their `name` there) or a
        `scope` call argument, the layer's name is made unique per graph, so
        two objects named alike get variables of their own.
        """
        return common.layer_scope(
            scope_arg or self._scope_name_arg, self._base_name, self._reuse
        )

    def _call_in_scope(
        self, graph: tf.Graph, inputs: Any, args: Any, kwargs: Any
    ) -> Any:
        built_here = self._graph is not None and self._graph() is graph
        if not built_here:
            if self._graph is not None:  # a new graph: its own variables
                self._trainable_weights, self._non_trainable_weights = [], []
                self._losses, self._updates = [], []
            _input_spec.check_inputs(self.input_spec, inputs, self.name)
            if self._dtype is None:
                first = tf.nest.flatten(inputs)[0]
                floating = getattr(first, "dtype", tf.float32).is_floating
                self._dtype = first.dtype.base_dtype if floating else tf.float32
            self.build(tf.nest.map_structure(lambda t: tf.TensorShape(t.shape), inputs))
            self.built = True
            self._graph = weakref.ref(graph)
        _input_spec.check_inputs(self.input_spec, inputs, self.name)
        outputs = self.call(inputs, *args, **kwargs)
        if self._activity_regularizer is not None:
            self._regularize_activity(outputs)
        return outputs

    def _regularize_activity(self, outputs: Any) -> None:
        """Adds the activity loss of each output, divided by its batch size."""
        regularizer = common.keras_object(
            keras.regularizers.get, self._activity_regularizer
        )
        with tf.name_scope("ActivityRegularizer"):
            for output in tf.nest.flatten(outputs):
                loss = tf.convert_to_tensor(regularizer(output))
                batch_size = tf.cast(tf.shape(output)[0], loss.dtype)
                self.add_loss(loss / batch_size)
