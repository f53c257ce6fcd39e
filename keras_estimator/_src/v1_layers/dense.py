"""The densely-connected layer: `Dense` and its functional form `dense`."""

from __future__ import annotations

from typing import Any

import tensorflow as tf

from keras_estimator._src.v1_layers import common
from keras_estimator._src.v1_layers.base import Layer
from keras_estimator._src.v1_layers.input_spec import InputSpec


class Dense(Layer):
    """Densely-connected layer: `activation(inputs @ kernel + bias)`.

    Creates `<scope>/kernel` of shape `[inputs.shape[-1], units]` and, with
    `use_bias`, `<scope>/bias` of shape `[units]`, where `<scope>` is `dense`,
    `dense_1`, ... or the layer's name. Inputs of rank above 2 are contracted
    on their last axis; a rank-2 `tf.SparseTensor` is multiplied sparsely.

    Args:
        units: Positive integer, dimensionality of the output space.
        activation: Activation callable (or Keras name such as "relu"); None
            keeps the linear output.
        use_bias: Whether to add a bias.
        kernel_initializer: Initializer for the kernel; None means Glorot
            uniform, as `tf.compat.v1.get_variable` does.
        bias_initializer: Initializer for the bias (zeros).
        kernel_regularizer: Callable taking the kernel and returning a scalar
            loss, added to `GraphKeys.REGULARIZATION_LOSSES` and `losses`.
        bias_regularizer: Same, for the bias.
        activity_regularizer: Callable taking the output; its value divided by
            the batch size is added to the same losses.
        kernel_constraint: Projection applied to the kernel by v1 optimizers
            after each update.
        bias_constraint: Same, for the bias.
        trainable: Whether the variables go to `GraphKeys.TRAINABLE_VARIABLES`.
        name: Name of the layer (its variable scope, made unique per graph).
        **kwargs: Further `Layer` arguments (`dtype`, ...).

    Raises:
        TypeError: if `units` is not an integer.
        ValueError: if `units` is not positive; when called, if the last
            dimension of the inputs is unknown or their rank is below 2.
    """

    def __init__(
        self,
        units: int,
        activation: Any = None,
        use_bias: bool = True,
        kernel_initializer: Any = None,
        bias_initializer: Any = common.ZEROS,
        kernel_regularizer: Any = None,
        bias_regularizer: Any = None,
        activity_regularizer: Any = None,
        kernel_constraint: Any = None,
        bias_constraint: Any = None,
        trainable: bool = True,
        name: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            trainable=trainable,
            name=name,
            activity_regularizer=activity_regularizer,
            **kwargs,
        )
        self.units = common.positive_int(units, "units")
        self.activation = activation
        self.use_bias = bool(use_bias)
        self.kernel_initializer = kernel_initializer
        self.bias_initializer = bias_initializer
        self.kernel_regularizer = kernel_regularizer
        self.bias_regularizer = bias_regularizer
        self.activity_regularizer = activity_regularizer
        self.kernel_constraint = kernel_constraint
        self.bias_constraint = bias_constraint
        self.kernel: tf.Variable | None = None
        self.bias: tf.Variable | None = None
        self.input_spec = InputSpec(min_ndim=2)

    def build(self, input_shape: Any) -> None:
        in_dim = tf.compat.dimension_value(input_shape[-1])
        if in_dim is None:
            raise ValueError(
                "The last dimension of the inputs to `Dense` should be defined, "
                f"received inputs with shape {input_shape}. Give the inputs a "
                "static last dimension (e.g. with `set_shape`)."
            )
        self.kernel = self.add_weight(
            "kernel",
            [in_dim, self.units],
            initializer=self.kernel_initializer,
            regularizer=self.kernel_regularizer,
            constraint=self.kernel_constraint,
        )
        if self.use_bias:
            self.bias = self.add_weight(
                "bias",
                [self.units],
                initializer=self.bias_initializer,
                regularizer=self.bias_regularizer,
                constraint=self.bias_constraint,
            )
        self.input_spec = InputSpec(min_ndim=2, axes={-1: in_dim})

    def call(self, inputs: Any) -> tf.Tensor:
        x = _dense_inputs(inputs)
        if isinstance(x, tf.SparseTensor):
            outputs = tf.sparse.sparse_dense_matmul(x, self.kernel)
        elif x.shape.rank == 2:
            outputs = tf.matmul(x, self.kernel)
        else:
            outputs = tf.tensordot(x, self.kernel, [[x.shape.rank - 1], [0]])
            outputs.set_shape(x.shape[:-1].concatenate([self.units]))
        if self.bias is not None:
            outputs = tf.nn.bias_add(outputs, self.bias)
        return common.activate(outputs, self.activation)

    def get_config(self) -> dict[str, Any]:
        config = super().get_config()
        config.update(
            units=self.units,
            activation=self.activation,
            use_bias=self.use_bias,
            kernel_initializer=self.kernel_initializer,
            bias_initializer=self.bias_initializer,
            kernel_regularizer=self.kernel_regularizer,
            bias_regularizer=self.bias_regularizer,
            activity_regularizer=self.activity_regularizer,
            kernel_constraint=self.kernel_constraint,
            bias_constraint=self.bias_constraint,
        )
        return config


def _dense_inputs(inputs: Any) -> Any:
    """`inputs` as a float tensor, or a float `tf.SparseTensor` if sparse."""
    if isinstance(inputs, tf.SparseTensor):
        return inputs if inputs.dtype.is_floating else tf.cast(inputs, tf.float32)
    return common.as_float_tensor(inputs)


def dense(
    inputs: Any,
    units: int,
    activation: Any = None,
    use_bias: bool = True,
    kernel_initializer: Any = None,
    bias_initializer: Any = common.ZEROS,
    kernel_regularizer: Any = None,
    bias_regularizer: Any = None,
    activity_regularizer: Any = None,
    kernel_constraint: Any = None,
    bias_constraint: Any = None,
    trainable: bool = True,
    name: str | None = None,
    reuse: Any = None,
) -> tf.Tensor:
    """Functional form of `Dense`: `activation(inputs @ kernel + bias)`.

    The variable scope is `name` as given (a second layer of that name needs
    `reuse`), or else `dense`, `dense_1`, ... made unique per graph.

    Args:
        inputs: Tensor input of rank 2 or more (float; other dtypes are cast
            to float32), or a rank-2 `tf.SparseTensor`.
        units: See `Dense`; so are the arguments up to `trainable`.
        activation: See `Dense`.
        use_bias: See `Dense`.
        kernel_initializer: See `Dense`.
        bias_initializer: See `Dense`.
        kernel_regularizer: See `Dense`.
        bias_regularizer: See `Dense`.
        activity_regularizer: See `Dense`.
        kernel_constraint: See `Dense`.
        bias_constraint: See `Dense`.
        trainable: See `Dense`.
        name: Variable scope name of the layer.
        reuse: True or `tf.compat.v1.AUTO_REUSE` to reuse the variables of a
            previous layer with the same name.

    Returns:
        Output tensor with the shape of `inputs` except the last dimension,
        which is `units`.

    Raises:
        ValueError: if the last dimension of `inputs` is unknown or `units` is
            not positive.
        RuntimeError: if called eagerly.
    """
    common.require_graph("dense")
    layer = Dense(
        units,
        activation=activation,
        use_bias=use_bias,
        kernel_initializer=kernel_initializer,
        bias_initializer=bias_initializer,
        kernel_regularizer=kernel_regularizer,
        bias_regularizer=bias_regularizer,
        activity_regularizer=activity_regularizer,
        kernel_constraint=kernel_constraint,
        bias_constraint=bias_constraint,
        trainable=trainable,
        name=name,
        _scope=name,
        _reuse=reuse,
    )
    return layer.apply(inputs)
