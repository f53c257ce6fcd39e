"""One variable's update by a tf.keras 2 (legacy) optimizer, with the kernels it used.

tf.keras 2's legacy optimizers updated a variable with a dense gradient by
one `ResourceApply*` kernel, and a variable with a sparse gradient
(`IndexedSlices`, e.g. an embedding's) by a `ResourceSparseApply*` kernel or
by scatter operations, touching only the gradient's rows where the kernel
does. Momentum and shrinkage make that matter: a dense update with zeros
for the absent rows would still move them. `apply` picks what tf.keras 2
picked for each optimizer and gradient, with its coefficients.
"""

from __future__ import annotations

from typing import Any

import tensorflow as tf


def apply(
    kind: str,
    grad: Any,
    var: Any,
    slots: dict[str, Any],
    h: dict[str, Any],
    lr: tf.Tensor,
    step: tf.Tensor,
) -> Any:
    """The update op of `var` by optimizer `kind` ('Adagrad', 'Adam', ...).

    Args:
        grad: a dense tensor or an `IndexedSlices`.
        slots: the variable's slot variables by slot name.
        h: the settings, as tensors of the variable's dtype (`epsilon`,
            `beta_1`, ...) or Python values (`amsgrad`, `centered`, ...).
        lr: the learning rate of this step (decay and schedule applied).
        step: the step number counted from 1, in the variable's dtype.
    """
    if isinstance(grad, tf.IndexedSlices):
        values, indices = grad.values, grad.indices
        if not (kind == "SGD" and not h["momentum_on"]):
            # tf.keras 2 summed the values of repeated rows first.
            indices, positions = tf.unique(indices)
            values = tf.math.unsorted_segment_sum(values, positions, tf.shape(indices)[0])
        return _SPARSE[kind](values, indices, var, slots, h, lr, step)
    return _DENSE[kind](grad, var, slots, h, lr, step)


def _handle(variable: Any) -> Any:
    return variable.handle


def _read(variable: Any) -> tf.Tensor:
    return tf.raw_ops.ReadVariableOp(resource=_handle(variable), dtype=variable.dtype.base_dtype)


def _assign(variable: Any, value: Any) -> Any:
    return tf.raw_ops.AssignVariableOp(resource=_handle(variable), value=value)


def _scatter_add(variable: Any, indices: Any, values: Any) -> Any:
    return tf.raw_ops.ResourceScatterAdd(resource=_handle(variable), indices=indices, updates=values)


# ---- Adagrad -----------------------------------------------------------------
def _adagrad_dense(grad, var, slots, h, lr, step):  # type: ignore[no-untyped-def]
    return tf.raw_ops.ResourceApplyAdagradV2(
        var=_handle(var), accum=_handle(slots["accumulator"]), lr=lr, epsilon=h["epsilon"],
        grad=grad,
    )


def _adagrad_sparse(values, indices, var, slots, h, lr, step):  # type: ignore[no-untyped-def]
    return tf.raw_ops.ResourceSparseApplyAdagradV2(
        var=_handle(var), accum=_handle(slots["accumulator"]), lr=lr, epsilon=h["epsilon"],
        grad=values, indices=indices,
    )


# ---- Adam --------------------------------------------------------------------
def _adam_dense(grad, var, slots, h, lr, step):  # type: ignore[no-untyped-def]
    common = dict(
        var=_handle(var), m=_handle(slots["m"]), v=_handle(slots["v"]),
        beta1_power=tf.pow(h["beta_1"], step), beta2_power=tf.pow(h["beta_2"], step),
        lr=lr, beta1=h["beta_1"], beta2=h["beta_2"], epsilon=h["epsilon"], grad=grad,
    )
    if h["amsgrad"]:
        return tf.raw_ops.ResourceApplyAdamWithAmsgrad(vhat=_handle(slots["vhat"]), **common)
    return tf.raw_ops.ResourceApplyAdam(**common)


def _adam_sparse(values, indices, var, slots, h, lr, step):  # type: ignore[no-untyped-def]
    beta_1, beta_2 = h["beta_1"], h["beta_2"]
    lr = lr * tf.sqrt(1 - tf.pow(beta_2, step)) / (1 - tf.pow(beta_1, step))
    m, v = slots["m"], slots["v"]
    with tf.control_dependencies([_assign(m, _read(m) * beta_1)]):
        m_done = _scatter_add(m, indices, values * (1 - beta_1))
    with tf.control_dependencies([_assign(v, _read(v) * beta_2)]):
        v_done = _scatter_add(v, indices, values * values * (1 - beta_2))
    with tf.control_dependencies([m_done, v_done]):
        m_t, v_t = _read(m), _read(v)
        if h["amsgrad"]:
            vhat = slots["vhat"]
            with tf.control_dependencies([_assign(vhat, tf.maximum(_read(vhat), v_t))]):
                v_t = _read(vhat)
        return _assign(var, _read(var) - lr * m_t / (tf.sqrt(v_t) + h["epsilon"]))


# ---- RMSprop -----------------------------------------------------------------
def _rmsprop_dense(grad, var, slots, h, lr, step):  # type: ignore[no-untyped-def]
    if h["momentum_on"]:
        common = dict(
            var=_handle(var), ms=_handle(slots["rms"]), mom=_handle(slots["momentum"]), lr=lr,
            rho=h["rho"], momentum=h["momentum"], epsilon=h["epsilon"], grad=grad,
        )
        if h["centered"]:
            return tf.raw_ops.ResourceApplyCenteredRMSProp(mg=_handle(slots["mg"]), **common)
        return tf.raw_ops.ResourceApplyRMSProp(**common)
    rho = h["rho"]
    rms = slots["rms"]
    rms_t = rho * _read(rms) + (1 - rho) * tf.square(grad)
    with tf.control_dependencies([_assign(rms, rms_t)]):
        denominator = rms_t
        if h["centered"]:
            mg = slots["mg"]
            mg_t = rho * _read(mg) + (1 - rho) * grad
            with tf.control_dependencies([_assign(mg, mg_t)]):
                denominator = rms_t - tf.square(mg_t)
        return _assign(var, _read(var) - lr * grad / (tf.sqrt(denominator) + h["epsilon"]))


def _rmsprop_sparse(values, indices, var, slots, h, lr, step):  # type: ignore[no-untyped-def]
    if h["momentum_on"]:
        common = dict(
            var=_handle(var), ms=_handle(slots["rms"]), mom=_handle(slots["momentum"]), lr=lr,
            rho=h["rho"], momentum=h["momentum"], epsilon=h["epsilon"], grad=values,
            indices=indices,
        )
        if h["centered"]:
            return tf.raw_ops.ResourceSparseApplyCenteredRMSProp(mg=_handle(slots["mg"]), **common)
        return tf.raw_ops.ResourceSparseApplyRMSProp(**common)
    rho = h["rho"]
    rms = slots["rms"]
    with tf.control_dependencies([_assign(rms, _read(rms) * rho)]):
        with tf.control_dependencies([_scatter_add(rms, indices, values * values * (1 - rho))]):
            denominator = tf.gather(_read(rms), indices)
    if h["centered"]:
        mg = slots["mg"]
        with tf.control_dependencies([_assign(mg, _read(mg) * rho)]):
            with tf.control_dependencies([_scatter_add(mg, indices, values * (1 - rho))]):
                denominator = denominator - tf.square(tf.gather(_read(mg), indices))
    return _scatter_add(var, indices, -lr * values / (tf.sqrt(denominator) + h["epsilon"]))


# ---- SGD ---------------------------------------------------------------------
def _sgd_dense(grad, var, slots, h, lr, step):  # type: ignore[no-untyped-def]
    if h["momentum_on"]:
        return tf.raw_ops.ResourceApplyKerasMomentum(
            var=_handle(var), accum=_handle(slots["momentum"]), lr=lr, grad=grad,
            momentum=h["momentum"], use_nesterov=bool(h["nesterov"]),
        )
    return tf.raw_ops.ResourceApplyGradientDescent(var=_handle(var), alpha=lr, delta=grad)


def _sgd_sparse(values, indices, var, slots, h, lr, step):  # type: ignore[no-untyped-def]
    if h["momentum_on"]:
        return tf.raw_ops.ResourceSparseApplyKerasMomentum(
            var=_handle(var), accum=_handle(slots["momentum"]), lr=lr, grad=values,
            indices=indices, momentum=h["momentum"], use_nesterov=bool(h["nesterov"]),
        )
    return _scatter_add(var, indices, -values * lr)


# ---- Ftrl --------------------------------------------------------------------
def _ftrl_arguments(var, slots, h, lr):  # type: ignore[no-untyped-def]
    return dict(
        var=_handle(var), accum=_handle(slots["accumulator"]), linear=_handle(slots["linear"]),
        lr=lr, l1=h["l1_regularization_strength"],
        l2=h["l2_regularization_strength"] + h["beta"] / (2.0 * lr),
        lr_power=h["learning_rate_power"],
    )


def _ftrl_dense(grad, var, slots, h, lr, step):  # type: ignore[no-untyped-def]
    arguments = _ftrl_arguments(var, slots, h, lr)
    if h["shrinkage_on"]:
        return tf.raw_ops.ResourceApplyFtrlV2(
            grad=grad, l2_shrinkage=h["l2_shrinkage_regularization_strength"], **arguments
        )
    return tf.raw_ops.ResourceApplyFtrl(grad=grad, **arguments)


def _ftrl_sparse(values, indices, var, slots, h, lr, step):  # type: ignore[no-untyped-def]
    arguments = _ftrl_arguments(var, slots, h, lr)
    if h["shrinkage_on"]:
        return tf.raw_ops.ResourceSparseApplyFtrlV2(
            grad=values, indices=indices,
            l2_shrinkage=h["l2_shrinkage_regularization_strength"], **arguments,
        )
    return tf.raw_ops.ResourceSparseApplyFtrl(grad=values, indices=indices, **arguments)


_DENSE = {
    "Adagrad": _adagrad_dense, "Adam": _adam_dense, "RMSprop": _rmsprop_dense,
    "SGD": _sgd_dense, "Ftrl": _ftrl_dense,
}
_SPARSE = {
    "Adagrad": _adagrad_sparse, "Adam": _adam_sparse, "RMSprop": _rmsprop_sparse,
    "SGD": _sgd_sparse, "Ftrl": _ftrl_sparse,
}
