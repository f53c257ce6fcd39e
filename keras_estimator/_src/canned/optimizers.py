"""The optimizers of canned estimators, checkpoint-compatible with 2.15.

tf.estimator 2.15's canned estimators trained with tf.keras 2 optimizers in a
TF1 graph: each optimizer's settings were variables
(`training/Adagrad/learning_rate`, `training/Adagrad/decay`, ...), its slots
were `training/<Optimizer>/<variable>/<slot>`, and its iteration count was the
global step. `CannedOptimizer` makes the same variables through the
Estimator's variable store and applies the same updates with the same
TensorFlow kernels, so a model_dir written by 2.15 restores here and trains
on as 2.15 would have.

`get_optimizer(spec, learning_rate)` accepts what the 2.15 estimators did:
a name ('Adagrad', 'Adam', 'Ftrl', 'RMSProp', 'SGD'), an optimizer object (a
`CannedOptimizer`, or a Keras optimizer whose configuration is carried
over), or a callable returning one.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

import keras
import tensorflow as tf


@dataclasses.dataclass(frozen=True)
class _Kind:
    """One optimizer: its checkpoint name, settings (in order) and slots."""

    name: str
    defaults: dict[str, float]
    saved: tuple[str, ...]  # settings stored as variables, as 2.15 stored them
    slots: Callable[[dict[str, float]], dict[str, float]]  # slot -> initial value


_KINDS = {
    "adagrad": _Kind(
        "Adagrad",
        {"learning_rate": 0.001, "initial_accumulator_value": 0.1, "epsilon": 1e-7},
        ("learning_rate", "decay"),
        lambda h: {"accumulator": h["initial_accumulator_value"]},
    ),
    "adam": _Kind(
        "Adam",
        {"learning_rate": 0.001, "beta_1": 0.9, "beta_2": 0.999, "epsilon": 1e-7},
        ("learning_rate", "decay", "beta_1", "beta_2"),
        lambda h: {"m": 0.0, "v": 0.0},
    ),
    "rmsprop": _Kind(
        "RMSprop",
        {"learning_rate": 0.001, "rho": 0.9, "momentum": 0.0, "epsilon": 1e-7},
        ("learning_rate", "decay", "rho", "momentum"),
        lambda h: {"rms": 0.0, **({"momentum": 0.0} if h["momentum"] else {})},
    ),
    "sgd": _Kind(
        "SGD",
        {"learning_rate": 0.01, "momentum": 0.0},
        ("learning_rate", "decay", "momentum"),
        lambda h: {"momentum": 0.0} if h["momentum"] else {},
    ),
    "ftrl": _Kind(
        "Ftrl",
        {
            "learning_rate": 0.001,
            "learning_rate_power": -0.5,
            "initial_accumulator_value": 0.1,
            "l1_regularization_strength": 0.0,
            "l2_regularization_strength": 0.0,
            "beta": 0.0,
        },
        (
            "learning_rate",
            "decay",
            "learning_rate_power",
            "l1_regularization_strength",
            "l2_regularization_strength",
            "beta",
        ),
        lambda h: {"accumulator": h["initial_accumulator_value"], "linear": 0.0},
    ),
}
_NAMES = {"adagrad": "Adagrad", "adam": "Adam", "ftrl": "Ftrl", "rmsprop": "RMSProp", "sgd": "SGD"}


class CannedOptimizer:
    """A tf.keras 2-style optimizer for canned estimators; see the module.

    Args:
        kind: 'adagrad', 'adam', 'ftrl', 'rmsprop' or 'sgd'.
        **settings: the optimizer's settings (learning_rate, epsilon, ...).
    """

    def __init__(self, kind: str, **settings: float) -> None:
        self._kind = _KINDS[kind]
        unknown = sorted(set(settings) - set(self._kind.defaults))
        if unknown:
            raise ValueError(
                f"{self._kind.name} takes {sorted(self._kind.defaults)}, got unknown "
                f"settings {unknown}."
            )
        self._settings = {**self._kind.defaults, **{k: float(v) for k, v in settings.items()}}
        if self._settings["learning_rate"] <= 0:
            raise ValueError(
                f"learning_rate must be positive, got {self._settings['learning_rate']!r}."
            )

    @property
    def name(self) -> str:
        return self._kind.name

    @property
    def settings(self) -> dict[str, float]:
        return dict(self._settings)

    def get_updates(
        self,
        loss: Any,
        params: Sequence[Any],
        own_iterations: bool = False,
        scope_name: str | None = None,
    ) -> list[Any]:
        """The train op (in a list, as tf.keras 2 returned it) minimizing `loss`.

        The optimizer counts its steps in the global step, or, with
        `own_iterations`, in a variable of its own (`training/<Name>/iter`),
        as the second optimizer of a `DNNLinearCombined*` estimator did.
        Its variables are under `training/<scope_name>/`, by default
        `training/<Name>/` (2.15's graph named a second optimizer of the
        same name `<Name>_1`).
        """
        scope = f"training/{scope_name or self._kind.name}"
        gradients = tf.compat.v1.gradients(loss, list(params))
        pairs = [(g, v) for g, v in zip(gradients, params, strict=True) if g is not None]
        if not pairs:
            raise ValueError(
                f"No gradient flows from the loss to any of the variables "
                f"{[v.name for v in params]}."
            )
        context = tf.distribute.get_replica_context()
        if context is not None and context.num_replicas_in_sync > 1:
            # The loss is already scaled per replica: the sum is the mean's gradient.
            reduced = context.all_reduce(
                tf.distribute.ReduceOp.SUM, [tf.convert_to_tensor(g) for g, _ in pairs]
            )
            pairs = list(zip(reduced, [v for _, v in pairs], strict=True))
        variables = [v for _, v in pairs]

        def make_variables(*_: Any) -> tuple[Any, dict[str, Any], list[dict[str, Any]]]:
            if own_iterations:
                iterations = tf.compat.v1.get_variable(
                    f"{scope}/iter",
                    shape=[],
                    dtype=tf.int64,
                    initializer=tf.compat.v1.zeros_initializer(),
                    trainable=False,
                    aggregation=tf.VariableAggregation.ONLY_FIRST_REPLICA,
                )
            else:
                iterations = tf.compat.v1.train.get_global_step()
            settings = {
                name: self._setting_variable(scope, name) for name in self._kind.saved
            }
            slots = [
                {name: self._slot(scope, v, name, initial) for name, initial in self._kind.slots(
                    self._settings
                ).items()}
                for v in variables
            ]
            return iterations, settings, slots

        # Made in cross-replica context, as a strategy makes its variables.
        if context is not None:
            iterations, settings, slots = context.merge_call(make_variables)
        else:
            iterations, settings, slots = make_variables()
        values = {name: tf.convert_to_tensor(v) for name, v in settings.items()}
        updates = [
            self._update(tf.convert_to_tensor(g), v, slot, values, iterations)
            for (g, v), slot in zip(pairs, slots, strict=True)
        ]
        with tf.control_dependencies(updates):
            return [iterations.assign_add(1)]

    def _setting_variable(self, scope: str, name: str) -> Any:
        value = self._settings.get(name, 0.0)
        return tf.compat.v1.get_variable(
            f"{scope}/{name}",
            shape=[],
            dtype=tf.float32,
            initializer=tf.compat.v1.constant_initializer(value),
            trainable=False,
        )

    def _slot(self, scope: str, variable: Any, slot: str, initial: float) -> Any:
        base = variable.name.split(":")[0]
        return tf.compat.v1.get_variable(
            f"{scope}/{base}/{slot}",
            shape=variable.shape,
            dtype=variable.dtype.base_dtype,
            initializer=tf.compat.v1.constant_initializer(initial),
            trainable=False,
        )

    def _update(
        self,
        grad: tf.Tensor,
        var: Any,
        slots: dict[str, Any],
        settings: dict[str, tf.Tensor],
        iterations_variable: Any,
    ) -> Any:
        kind, h = self._kind.name, self._settings
        iterations = tf.cast(iterations_variable, tf.float32)
        lr = settings["learning_rate"] / (1.0 + settings["decay"] * iterations)
        dtype = var.dtype.base_dtype
        lr = tf.cast(lr, dtype)
        if kind == "Adagrad":
            return tf.raw_ops.ResourceApplyAdagradV2(
                var=_handle(var),
                accum=_handle(slots["accumulator"]),
                lr=lr,
                epsilon=tf.constant(h["epsilon"], dtype),
                grad=grad,
            )
        if kind == "Adam":
            step = iterations + 1.0
            beta_1, beta_2 = settings["beta_1"], settings["beta_2"]
            return tf.raw_ops.ResourceApplyAdam(
                var=_handle(var),
                m=_handle(slots["m"]),
                v=_handle(slots["v"]),
                beta1_power=tf.cast(tf.pow(beta_1, step), dtype),
                beta2_power=tf.cast(tf.pow(beta_2, step), dtype),
                lr=lr,
                beta1=tf.cast(beta_1, dtype),
                beta2=tf.cast(beta_2, dtype),
                epsilon=tf.constant(h["epsilon"], dtype),
                grad=grad,
            )
        if kind == "RMSprop":
            rho = tf.cast(settings["rho"], dtype)
            epsilon = tf.constant(h["epsilon"], dtype)
            if h["momentum"]:
                return tf.raw_ops.ResourceApplyRMSProp(
                    var=_handle(var),
                    ms=_handle(slots["rms"]),
                    mom=_handle(slots["momentum"]),
                    lr=lr,
                    rho=rho,
                    momentum=tf.cast(settings["momentum"], dtype),
                    epsilon=epsilon,
                    grad=grad,
                )
            rms = _handle(slots["rms"])
            rms_t = rho * tf.raw_ops.ReadVariableOp(resource=rms, dtype=dtype) + (
                1.0 - rho
            ) * tf.square(grad)
            with tf.control_dependencies([tf.raw_ops.AssignVariableOp(resource=rms, value=rms_t)]):
                value = tf.raw_ops.ReadVariableOp(resource=_handle(var), dtype=dtype)
                return tf.raw_ops.AssignVariableOp(
                    resource=_handle(var),
                    value=value - lr * grad / (tf.sqrt(rms_t) + epsilon),
                )
        if kind == "SGD":
            if h["momentum"]:
                return tf.raw_ops.ResourceApplyKerasMomentum(
                    var=_handle(var),
                    accum=_handle(slots["momentum"]),
                    lr=lr,
                    grad=grad,
                    momentum=tf.cast(settings["momentum"], dtype),
                    use_nesterov=False,
                )
            return tf.raw_ops.ResourceApplyGradientDescent(var=_handle(var), alpha=lr, delta=grad)
        # Ftrl
        l2 = settings["l2_regularization_strength"]
        adjusted_l2 = tf.cast(l2 + settings["beta"] / (2.0 * settings["learning_rate"]), dtype)
        return tf.raw_ops.ResourceApplyFtrl(
            var=_handle(var),
            accum=_handle(slots["accumulator"]),
            linear=_handle(slots["linear"]),
            grad=grad,
            lr=lr,
            l1=tf.cast(settings["l1_regularization_strength"], dtype),
            l2=adjusted_l2,
            lr_power=tf.cast(settings["learning_rate_power"], dtype),
        )


def _handle(variable: Any) -> Any:
    """The resource handle to update (this replica's copy under a strategy)."""
    return variable.handle


def get_optimizer(spec: Any, learning_rate: float | None = None) -> CannedOptimizer:
    """An optimizer from what a canned estimator's `optimizer` argument took.

    Args:
        spec: a name ('Adagrad', 'Adam', 'Ftrl', 'RMSProp', 'SGD'), a
            `CannedOptimizer`, a Keras optimizer (its settings are carried
            over), or a callable returning one of these.
        learning_rate: the learning rate used with a name (the estimator's
            default for its kind).
    """
    if callable(spec) and not isinstance(spec, (CannedOptimizer, keras.optimizers.Optimizer)):
        spec = spec()
    if isinstance(spec, CannedOptimizer):
        return spec
    if isinstance(spec, str):
        kind = spec.lower()
        if kind not in _KINDS:
            raise ValueError(
                f"Unsupported optimizer name {spec!r}. Use one of "
                f"{sorted(_NAMES.values())}, or pass an optimizer object."
            )
        settings = {} if learning_rate is None else {"learning_rate": learning_rate}
        return CannedOptimizer(kind, **settings)
    if isinstance(spec, keras.optimizers.Optimizer):
        return _from_keras(spec)
    raise TypeError(
        f"optimizer must be a name ({sorted(_NAMES.values())}), an optimizer object "
        f"or a callable returning one, got {type(spec).__name__}: {spec!r}."
    )


def _from_keras(optimizer: keras.optimizers.Optimizer) -> CannedOptimizer:
    kind = type(optimizer).__name__.lower()
    if kind not in _KINDS:
        raise ValueError(
            f"Canned estimators train with {sorted(_NAMES.values())}; got a Keras "
            f"{type(optimizer).__name__}. Pass one of those optimizers or names."
        )
    config = optimizer.get_config()
    settings = {
        name: float(config[name])
        for name in _KINDS[kind].defaults
        if isinstance(config.get(name), (int, float))
    }
    if "rho" in _KINDS[kind].defaults and "rho" in config:
        settings["rho"] = float(config["rho"])
    return CannedOptimizer(kind, **settings)
