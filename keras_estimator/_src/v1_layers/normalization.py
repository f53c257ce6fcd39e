"""Batch normalization: the `BatchNormalization` layer and `batch_normalization`.

The computation (layout, statistics, moving-average updates) is in
`batch_statistics`.
"""

from __future__ import annotations

import numbers
from typing import Any

import tensorflow as tf

from keras_estimator._src.v1_layers import batch_statistics as stats
from keras_estimator._src.v1_layers import common
from keras_estimator._src.v1_layers.base import Layer
from keras_estimator._src.v1_layers.input_spec import InputSpec


class BatchNormalization(Layer):
    """Batch normalization layer (Ioffe and Szegedy, 2015), TF1 style.

    Creates, in `<scope>` (`batch_normalization`, `batch_normalization_1`,
    ... or the layer's name), the trainable `gamma` (if `scale`) and `beta`
    (if `center`) and the non-trainable `moving_mean` and `moving_variance`.
    Call it as `layer(inputs, training=...)`.

    In training the inputs are normalized with the batch mean and variance,
    and two ops that move the moving statistics toward them
    (`moving -= (moving - batch) * (1 - momentum)`) are added to the layer's
    `updates` and to `tf.compat.v1.GraphKeys.UPDATE_OPS`; run them with the
    train op, e.g.::

        update_ops = tf.compat.v1.get_collection(tf.compat.v1.GraphKeys.UPDATE_OPS)
        with tf.control_dependencies(update_ops):
            train_op = optimizer.minimize(loss)

    Otherwise the moving statistics are used and nothing is added. As in TF1,
    4D (and 5D) inputs normalized over axis 1 or the last axis (where TF1 used
    its fused kernel) update `moving_variance` with the unbiased batch
    variance, and their `epsilon` is at least 1.001e-5.

    Args:
        axis: Int or list of ints, the feature axis or axes (usually the
            channels: -1 for channels-last, 1 for channels-first).
        momentum: Momentum of the moving averages.
        epsilon: Small float added to the variance.
        center: Whether to add the learned offset `beta`.
        scale: Whether to multiply by the learned `gamma`.
        beta_initializer: Initializer for `beta`.
        gamma_initializer: Initializer for `gamma`.
        moving_mean_initializer: Initializer for `moving_mean`.
        moving_variance_initializer: Initializer for `moving_variance`.
        beta_regularizer: Regularizer callable for `beta`.
        gamma_regularizer: Regularizer callable for `gamma`.
        beta_constraint: Projection applied to `beta` after updates.
        gamma_constraint: Projection applied to `gamma` after updates.
        renorm: Batch renormalization; not supported, must be False.
        renorm_clipping: Only used with `renorm`.
        renorm_momentum: Only used with `renorm`.
        fused: False selects TF1's non-fused kernel, whose moving variance
            update uses the biased batch variance; None or True use the fused
            behaviour where TF1 could.
        trainable: Whether `gamma` and `beta` are trainable.
        virtual_batch_size: Ghost batch normalization; not supported, must be
            None.
        adjustment: Training-time adjustment; not supported, must be None.
        name: Name of the layer (its variable scope, made unique per graph).
        **kwargs: Further `Layer` arguments.

    Raises:
        TypeError: if `axis` is not an int or a list of ints.
        NotImplementedError: for `renorm`, `virtual_batch_size` or
            `adjustment`.
        ValueError: when called, if the rank or the normalized dimensions of
            the inputs are unknown, or `axis` does not fit their rank.
    """

    def __init__(
        self,
        axis: Any = -1,
        momentum: Any = 0.99,
        epsilon: float = 1e-3,
        center: bool = True,
        scale: bool = True,
        beta_initializer: Any = common.ZEROS,
        gamma_initializer: Any = common.ONES,
        moving_mean_initializer: Any = common.ZEROS,
        moving_variance_initializer: Any = common.ONES,
        beta_regularizer: Any = None,
        gamma_regularizer: Any = None,
        beta_constraint: Any = None,
        gamma_constraint: Any = None,
        renorm: bool = False,
        renorm_clipping: Any = None,
        renorm_momentum: float = 0.99,
        fused: bool | None = None,
        trainable: bool = True,
        virtual_batch_size: int | None = None,
        adjustment: Any = None,
        name: str | None = None,
        **kwargs: Any,
    ) -> None:
        del renorm_clipping, renorm_momentum  # Only meaningful with renorm.
        super().__init__(trainable=trainable, name=name, **kwargs)
        if renorm or virtual_batch_size is not None or adjustment is not None:
            raise NotImplementedError(
                "keras_estimator.compat.layers batch normalization does not "
                "support `renorm`, `virtual_batch_size` or `adjustment`, "
                f"received renorm={renorm!r}, virtual_batch_size="
                f"{virtual_batch_size!r}, adjustment={adjustment!r}."
            )
        axes = [axis] if isinstance(axis, numbers.Integral) else axis
        if not isinstance(axes, (list, tuple)) or not all(
            isinstance(a, numbers.Integral) for a in axes
        ):
            raise TypeError(
                f"`axis` must be an int or a list of ints, received axis={axis!r}."
            )
        self.axis = axis
        self.momentum = momentum
        self.epsilon = epsilon
        self.center = bool(center)
        self.scale = bool(scale)
        self.beta_initializer = beta_initializer
        self.gamma_initializer = gamma_initializer
        self.moving_mean_initializer = moving_mean_initializer
        self.moving_variance_initializer = moving_variance_initializer
        self.beta_regularizer = beta_regularizer
        self.gamma_regularizer = gamma_regularizer
        self.beta_constraint = beta_constraint
        self.gamma_constraint = gamma_constraint
        self.fused = fused
        self.gamma: tf.Variable | None = None
        self.beta: tf.Variable | None = None
        self.moving_mean: Any = None
        self.moving_variance: Any = None

    def build(self, input_shape: Any) -> None:
        layout = stats.layout_of(tf.TensorShape(input_shape), self.axis)
        self._layout = layout
        self._param_dtype = stats.parameter_dtype(self._dtype or tf.float32)
        self._fused_like = stats.is_fused_like(self.fused, layout, self._param_dtype)
        shape, dtype = layout.param_shape, self._param_dtype
        if self.scale:
            self.gamma = self.add_weight(
                "gamma",
                shape,
                dtype,
                self.gamma_initializer,
                self.gamma_regularizer,
                constraint=self.gamma_constraint,
            )
        if self.center:
            self.beta = self.add_weight(
                "beta",
                shape,
                dtype,
                self.beta_initializer,
                self.beta_regularizer,
                constraint=self.beta_constraint,
            )
        # Averaged across replicas when read, as TF1's moving statistics were.
        on_read = {
            "trainable": False,
            "synchronization": tf.VariableSynchronization.ON_READ,
            "aggregation": tf.VariableAggregation.MEAN,
        }
        self.moving_mean = self.add_weight(
            "moving_mean", shape, dtype, self.moving_mean_initializer, **on_read
        )
        self.moving_variance = self.add_weight(
            "moving_variance", shape, dtype, self.moving_variance_initializer, **on_read
        )
        axes = {a: layout.broadcast_shape[a] for a in layout.axes}
        self.input_spec = InputSpec(ndim=layout.ndims, axes=axes)

    def call(self, inputs: Any, training: Any = False) -> tf.Tensor:
        """Normalizes `inputs`; `training` is a bool or a scalar bool tensor."""
        x = common.as_float_tensor(inputs)
        layout = self._layout
        epsilon = self.epsilon
        if self._fused_like:
            epsilon = max(epsilon, stats.FUSED_MIN_EPSILON)
        compute_x = tf.cast(x, self._param_dtype)
        mean, variance, updates = stats.statistics(
            compute_x,
            training,
            self.momentum,
            layout,
            self._fused_like,
            self.moving_mean,
            self.moving_variance,
        )
        if updates:
            self.add_update(updates)
        outputs = tf.nn.batch_normalization(
            compute_x,
            stats.broadcast(mean, layout),
            stats.broadcast(variance, layout),
            offset=stats.broadcast(self.beta, layout),
            scale=stats.broadcast(self.gamma, layout),
            variance_epsilon=epsilon,
        )
        return tf.cast(outputs, x.dtype)

    def get_config(self) -> dict[str, Any]:
        config = super().get_config()
        config.update(
            axis=self.axis,
            momentum=self.momentum,
            epsilon=self.epsilon,
            center=self.center,
            scale=self.scale,
            beta_initializer=self.beta_initializer,
            gamma_initializer=self.gamma_initializer,
            moving_mean_initializer=self.moving_mean_initializer,
            moving_variance_initializer=self.moving_variance_initializer,
            beta_regularizer=self.beta_regularizer,
            gamma_regularizer=self.gamma_regularizer,
            beta_constraint=self.beta_constraint,
            gamma_constraint=self.gamma_constraint,
            fused=self.fused,
        )
        return config


def batch_normalization(
    inputs: Any,
    axis: Any = -1,
    momentum: Any = 0.99,
    epsilon: float = 1e-3,
    center: bool = True,
    scale: bool = True,
    beta_initializer: Any = common.ZEROS,
    gamma_initializer: Any = common.ONES,
    moving_mean_initializer: Any = common.ZEROS,
    moving_variance_initializer: Any = common.ONES,
    beta_regularizer: Any = None,
    gamma_regularizer: Any = None,
    beta_constraint: Any = None,
    gamma_constraint: Any = None,
    training: Any = False,
    trainable: bool = True,
    name: str | None = None,
    reuse: Any = None,
    renorm: bool = False,
    renorm_clipping: Any = None,
    renorm_momentum: float = 0.99,
    fused: bool | None = None,
    virtual_batch_size: int | None = None,
    adjustment: Any = None,
) -> tf.Tensor:
    """Functional form of `BatchNormalization` (see it for the behaviour).

    The variable scope is `name` as given, or else `batch_normalization`,
    `batch_normalization_1`, ...; in training the moving-average updates go
    to `tf.compat.v1.GraphKeys.UPDATE_OPS`.

    Args:
        inputs: Input tensor of known rank.
        axis: Int or list of ints, the feature axis or axes (usually the
            channels: -1 for channels-last, 1 for channels-first).
        momentum: Momentum of the moving averages.
        epsilon: Small float added to the variance.
        center: Whether to add the learned offset `beta`.
        scale: Whether to multiply by the learned `gamma`.
        beta_initializer: Initializer for `beta`.
        gamma_initializer: Initializer for `gamma`.
        moving_mean_initializer: Initializer for `moving_mean`.
        moving_variance_initializer: Initializer for `moving_variance`.
        beta_regularizer: Regularizer callable for `beta`.
        gamma_regularizer: Regularizer callable for `gamma`.
        beta_constraint: Projection applied to `beta` after updates.
        gamma_constraint: Projection applied to `gamma` after updates.
        training: Python bool or scalar bool tensor: whether to use the batch
            statistics and update the moving ones (a tensor selects at run
            time; the update ops then leave the moving statistics unchanged
            when it is false).
        trainable: Whether `gamma` and `beta` are trainable.
        name: Variable scope name of the layer.
        reuse: True or `tf.compat.v1.AUTO_REUSE` to reuse a named layer.
        renorm: Batch renormalization; not supported, must be False.
        renorm_clipping: Only used with `renorm`.
        renorm_momentum: Only used with `renorm`.
        fused: False selects TF1's non-fused kernel, whose moving variance
            update uses the biased batch variance; None or True use the fused
            behaviour where TF1 could.
        virtual_batch_size: Ghost batch normalization; not supported, must be
            None.
        adjustment: Training-time adjustment; not supported, must be None.

    Returns:
        Tensor with the shape and dtype of `inputs`.

    Raises:
        ValueError: if the rank or the normalized dimensions of `inputs` are
            unknown, or `axis` is invalid.
        NotImplementedError: for `renorm`, `virtual_batch_size` or
            `adjustment`.
        RuntimeError: if called eagerly.
    """
    common.require_graph("batch_normalization")
    layer = BatchNormalization(
        axis, momentum, epsilon, center, scale, beta_initializer,
        gamma_initializer, moving_mean_initializer, moving_variance_initializer,
        beta_regularizer, gamma_regularizer, beta_constraint, gamma_constraint,
        renorm, renorm_clipping, renorm_momentum, fused, trainable,
        virtual_batch_size, adjustment, name=name, _scope=name, _reuse=reuse,
    )  # fmt: skip
    return layer.apply(inputs, training=training)
