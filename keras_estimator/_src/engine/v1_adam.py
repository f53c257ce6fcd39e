"""v1 `AdamOptimizer` updates of small models' CPU variables, run inline.

TensorFlow's CPU kernel for `ResourceApplyAdam` (checked on 2.21; 2.15 has
the same code) tells its thread pool that every element costs as much as
the whole variable, so each update, even of a 64-element bias, is split
across all intra-op threads. In the short step of a small model those
threads are asleep between ops, and waking them costs far more than the
arithmetic: on a 2-core machine a 4-64-64-3 MLP spends a third of its step
there (with one intra-op thread it runs 1.6x as fast). In a larger model's
step the threads are busy anyway and the kernel's single pass wins.

Inside the Estimator's traces, an `AdamOptimizer` that updates fewer than
`MAX_UPDATED_ELEMENTS` elements in all updates its dense float32 and float64
CPU variables by the same arithmetic written as elementwise ops, which the
runtime sizes by their real cost and runs inline:

    m   <- m + (g - m) * (1 - beta1)
    v   <- v + (g * g - v) * (1 - beta2)
    var <- var - (m * alpha) / (sqrt(v) + epsilon)
    alpha = lr * sqrt(1 - beta2_power) / (1 - beta1_power)

in the kernel's order of operations, so the results are the kernel's bit
for bit (tests/engine/test_v1_adam.py compares them). Larger models, other
devices and dtypes, `use_locking=True` and sparse updates keep TensorFlow's
kernels,
as does everything outside the Estimator's traces: TensorFlow's method is
replaced only while a trace runs and put back after, and never when
`KERAS_ESTIMATOR_INLINE_V1_ADAM=0` is set.
`benchmarks/bench_v1_adam.py` compares both ways by model width.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from typing import Any, NamedTuple

import tensorflow as tf

from keras_estimator._src.tf_internals import adam_kernel

# Inline pays most in the smallest models and fades with size
# (benchmarks/bench_v1_adam.py on the 2-core benchmark machine, 9 pairs:
# 1.22x at 4.7K elements, 1.16x at 17.5K, 1.02x at 68K); in a 4-512-512-3
# MLP (267K) inlining its small variables made the step 0.94x as fast.
MAX_UPDATED_ELEMENTS = 1 << 17
# Set to 0 to keep TensorFlow's kernel for every v1 Adam update.
OPT_OUT_VARIABLE = "KERAS_ESTIMATOR_INLINE_V1_ADAM"

_INLINE_DTYPES = (tf.float32, tf.float64)
_state = threading.local()


def enabled() -> bool:
    """False when the environment opts out (`KERAS_ESTIMATOR_INLINE_V1_ADAM=0`)."""
    return os.environ.get(OPT_OUT_VARIABLE, "1").strip().lower() not in ("0", "false", "no")


@contextlib.contextmanager
def inline_small_updates() -> Iterator[None]:
    """Runs v1 Adam updates of small models traced in this thread inline.

    TensorFlow's `AdamOptimizer` is routed through this module only while
    some thread is inside this context, and not at all when the environment
    opts out.
    """
    if not enabled():
        yield
        return
    outermost = not getattr(_state, "depth", 0)
    if outermost:
        _state.depth = 0
        _state.step_sizes = {}
        _state.small_models = {}
    _state.depth += 1
    try:
        with adam_kernel.v1_adam_dense_update(_dense_update):
            yield
    finally:
        _state.depth -= 1
        if outermost:
            _state.step_sizes = {}
            _state.small_models = {}


def runs_inline(update: adam_kernel.AdamDenseUpdate) -> bool:
    """Whether `update` is computed by elementwise ops (see the module)."""
    grad, var = update.grad, update.var
    if update.use_locking or grad.dtype.base_dtype not in _INLINE_DTYPES:
        return False
    device = getattr(var, "device", "") or ""
    if not device or tf.DeviceSpec.from_string(device).device_type != "CPU":
        return False
    # One decision per apply_gradients call: the size of the whole model.
    key = update.call_key()
    small = _state.small_models.get(key)
    if small is None:
        total = update.updated_elements()
        small = total is not None and total < MAX_UPDATED_ELEMENTS
        _state.small_models[key] = small
    return small


def _dense_update(update: adam_kernel.AdamDenseUpdate) -> Any:
    if not getattr(_state, "depth", 0) or not runs_inline(update):
        return update.kernel_update()
    args = update.arguments()
    dtype = update.grad.dtype.base_dtype
    # One set of scalars per apply_gradients call, dtype and device: the
    # kernel computes the same step size for every variable, from the
    # accumulators read before any of the call's updates, and the same
    # `1 - beta1`, `1 - beta2`. Made once, they keep the traced step (and
    # what its first call compiles) a few ops per variable smaller.
    key = (update.call_key(), dtype, update.var.device)
    scalars = _state.step_sizes.get(key)
    if scalars is None:
        one = tf.ones([], dtype)
        scalars = _CallScalars(
            alpha=step_size(
                tf.cast(args["learning_rate"], dtype),
                tf.cast(args["beta1_power"], dtype),
                tf.cast(args["beta2_power"], dtype),
            ),
            decay_m=tf.raw_ops.Sub(x=one, y=tf.cast(args["beta1"], dtype)),
            decay_v=tf.raw_ops.Sub(x=one, y=tf.cast(args["beta2"], dtype)),
            epsilon=tf.cast(args["epsilon"], dtype),
        )
        _state.step_sizes[key] = scalars
    return _apply_adam_ops(update.var.handle, args["m"], args["v"], update.grad, scalars)


class _CallScalars(NamedTuple):
    """The scalars every update of one apply_gradients call shares."""

    alpha: tf.Tensor
    decay_m: tf.Tensor  # 1 - beta1
    decay_v: tf.Tensor  # 1 - beta2
    epsilon: tf.Tensor


def step_size(
    learning_rate: tf.Tensor, beta1_power: tf.Tensor, beta2_power: tf.Tensor
) -> tf.Tensor:
    """The kernel's `alpha = lr * sqrt(1 - beta2_power) / (1 - beta1_power)`."""
    one = tf.ones([], learning_rate.dtype)
    return learning_rate * tf.sqrt(one - beta2_power) / (one - beta1_power)


def apply_adam(
    var: tf.Tensor,
    *,
    m: tf.Tensor,
    v: tf.Tensor,
    grad: tf.Tensor,
    alpha: tf.Tensor,
    beta1: tf.Tensor,
    beta2: tf.Tensor,
    epsilon: tf.Tensor,
) -> tf.Operation:
    """`ResourceApplyAdam` (non-Nesterov) as elementwise ops on resource handles.

    Args:
        var, m, v: resource handles of the variable and its two slots.
        grad: the gradient, of the variable's shape and dtype.
        alpha: the step size (`step_size`).
        beta1, beta2, epsilon: Adam's hyperparameters, of grad's dtype.

    Returns:
        An op that completes when `var`, `m` and `v` are all updated.
    """
    one = tf.ones([], grad.dtype)
    scalars = _CallScalars(
        alpha=alpha,
        decay_m=tf.raw_ops.Sub(x=one, y=beta1),
        decay_v=tf.raw_ops.Sub(x=one, y=beta2),
        epsilon=epsilon,
    )
    return _apply_adam_ops(var, m, v, grad, scalars)


def _apply_adam_ops(
    var: tf.Tensor, m: tf.Tensor, v: tf.Tensor, grad: tf.Tensor, scalars: _CallScalars
) -> tf.Operation:
    """The update's ops, in the kernel's order (see `apply_adam`).

    Made with `tf.raw_ops`, the same op types that the arithmetic operators
    make, without their dispatch. The op updating `var` comes last: it reads
    `m` and `v` after their updates, so when it has run all three have.
    """
    dtype = grad.dtype

    def read(handle: tf.Tensor) -> tf.Tensor:
        return tf.raw_ops.ReadVariableOp(resource=handle, dtype=dtype)

    update_m = tf.raw_ops.AssignAddVariableOp(
        resource=m,
        value=tf.raw_ops.Mul(x=tf.raw_ops.Sub(x=grad, y=read(m)), y=scalars.decay_m),
    )
    update_v = tf.raw_ops.AssignAddVariableOp(
        resource=v,
        value=tf.raw_ops.Mul(
            x=tf.raw_ops.Sub(x=tf.raw_ops.Square(x=grad), y=read(v)), y=scalars.decay_v
        ),
    )
    with tf.control_dependencies([update_m, update_v]):
        new_m, new_v = read(m), read(v)
    return tf.raw_ops.AssignSubVariableOp(
        resource=var,
        value=tf.raw_ops.RealDiv(
            x=tf.raw_ops.Mul(x=new_m, y=scalars.alpha),
            y=tf.raw_ops.AddV2(x=tf.raw_ops.Sqrt(x=new_v), y=scalars.epsilon),
        ),
    )
