"""The `tf.compat.v1.train` optimizers of the v1 canned estimators, checkpoint-compatible with 2.15.

tf.estimator 2.15's `tf.compat.v1.estimator.*` premade classes trained with
`tf.compat.v1.train` optimizers: no settings variables, one slot per
optimizer state named after the optimizer (`<var>/<prefix>Adagrad`,
`<var>/<prefix>Ftrl`, `<var>/<prefix>Ftrl_1`, ...), Adam's `beta1_power` /
`beta2_power` beside the head, and the global step advanced by `minimize`.
The prefix was an artefact of how each model made its variables: `t_0/` in
a DNN, `part_0/` in a linear model, none in a baseline. `V1Optimizer` makes
the same variables through the Estimator's variable store and applies the
same TensorFlow kernels, so a model_dir written by 2.15 restores here and
trains on as 2.15 would have.

`get_v1_optimizer(spec, learning_rate)` accepts what 2.15's v1 estimators did:
a name ('Adagrad', 'Adam', 'Ftrl', 'RMSProp', 'SGD', exactly so spelled), a
`tf.compat.v1.train.Optimizer` of a kind listed in `_KINDS` (its settings are
read and carried over), a `V1Optimizer`, or a callable returning one of those.

A v1 optimizer's settings are read by `tf_internals.v1_optimizer_settings`
(`tf.compat.v1.train` has no public getter for them).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

import tensorflow as tf

from keras_estimator._src.tf_internals import distribute, v1_optimizer_settings

# Names 2.15's v1 estimators accepted, and the optimizer each made.
NAMES = {
    "Adagrad": "adagrad",
    "Adam": "adam",
    "Ftrl": "ftrl",
    "RMSProp": "rmsprop",
    "SGD": "gradient_descent",
}


@dataclasses.dataclass(frozen=True)
class _Kind:
    """One v1 optimizer: its class, default name, settings and slots."""

    v1_class: str  # the tf.compat.v1.train class it mirrors
    default_name: str
    # setting (the v1 class's constructor argument) -> default
    settings: dict[str, Any]
    # slots in creation order (which sets their `_1`, `_2` suffixes): name -> initial value
    slots: Callable[[dict[str, Any]], dict[str, float]]


_KINDS = {
    "adagrad": _Kind(
        "AdagradOptimizer",
        "Adagrad",
        {
            "learning_rate": None,
            "initial_accumulator_value": 0.1,
        },
        lambda s: {"accumulator": s["initial_accumulator_value"]},
    ),
    "adam": _Kind(
        "AdamOptimizer",
        "Adam",
        {
            "learning_rate": 0.001,
            "beta1": 0.9,
            "beta2": 0.999,
            "epsilon": 1e-8,
        },
        lambda s: {"m": 0.0, "v": 0.0},
    ),
    "ftrl": _Kind(
        "FtrlOptimizer",
        "Ftrl",
        {
            "learning_rate": None,
            "learning_rate_power": -0.5,
            "initial_accumulator_value": 0.1,
            "l1_regularization_strength": 0.0,
            "l2_regularization_strength": 0.0,
            "l2_shrinkage_regularization_strength": 0.0,
            "beta": 0.0,
        },
        lambda s: {"accum": s["initial_accumulator_value"], "linear": 0.0},
    ),
    "rmsprop": _Kind(
        "RMSPropOptimizer",
        "RMSProp",
        {
            "learning_rate": None,
            "decay": 0.9,
            "momentum": 0.0,
            "epsilon": 1e-10,
            "centered": False,
        },
        lambda s: {"rms": 1.0, **({"mg": 0.0} if s["centered"] else {}), "momentum": 0.0},
    ),
    "gradient_descent": _Kind(
        "GradientDescentOptimizer",
        "GradientDescent",
        {"learning_rate": None},
        lambda s: {},
    ),
    "momentum": _Kind(
        "MomentumOptimizer",
        "Momentum",
        {
            "learning_rate": None,
            "momentum": None,
            "use_nesterov": False,
        },
        lambda s: {"momentum": 0.0},
    ),
    "proximal_adagrad": _Kind(
        "ProximalAdagradOptimizer",
        "ProximalAdagrad",
        {
            "learning_rate": None,
            "initial_accumulator_value": 0.1,
            "l1_regularization_strength": 0.0,
            "l2_regularization_strength": 0.0,
        },
        lambda s: {"accumulator": s["initial_accumulator_value"]},
    ),
    "proximal_gradient_descent": _Kind(
        "ProximalGradientDescentOptimizer",
        "ProximalGradientDescent",
        {
            "learning_rate": None,
            "l1_regularization_strength": 0.0,
            "l2_regularization_strength": 0.0,
        },
        lambda s: {},
    ),
    "adadelta": _Kind(
        "AdadeltaOptimizer",
        "Adadelta",
        {
            "learning_rate": 0.001,
            "rho": 0.95,
            "epsilon": 1e-8,
        },
        lambda s: {"accum": 0.0, "accum_update": 0.0},
    ),
}
_BY_CLASS = {kind.v1_class: key for key, kind in _KINDS.items()}


class V1Optimizer:
    """A `tf.compat.v1.train` optimizer for the v1 canned estimators; see the module.

    Args:
        kind: a key of `_KINDS` ('adagrad', 'adam', 'ftrl', 'rmsprop',
            'gradient_descent', 'momentum', 'proximal_adagrad',
            'proximal_gradient_descent', 'adadelta').
        name: the optimizer's name, which names its slots (the v1 class's
            default name if None).
        slot_names: for a slot, the name to use instead of `name` (Ftrl's
            `accum_name` / `linear_name`).
        **settings: the optimizer's settings; `learning_rate` may be a float,
            a tensor or a callable returning one (called in each trace).
    """

    def __init__(
        self,
        kind: str,
        name: str | None = None,
        slot_names: dict[str, str] | None = None,
        **settings: Any,
    ) -> None:
        if kind not in _KINDS:
            raise ValueError(f"Unknown v1 optimizer kind {kind!r}; use one of {sorted(_KINDS)}.")
        self._kind = _KINDS[kind]
        unknown = sorted(set(settings) - set(self._kind.settings))
        if unknown:
            raise ValueError(
                f"{self._kind.v1_class} takes {sorted(self._kind.settings)}, got unknown "
                f"settings {unknown}."
            )
        values = {**self._kind.settings, **settings}
        missing = sorted(key for key, value in values.items() if value is None)
        if missing:
            raise ValueError(f"{self._kind.v1_class} needs {missing}; none was given.")
        self._settings = values
        self._name = name or self._kind.default_name
        self._slot_names = dict(slot_names or {})

    @property
    def name(self) -> str:
        return self._name

    @property
    def settings(self) -> dict[str, Any]:
        return dict(self._settings)

    def minimize(
        self,
        loss: tf.Tensor,
        variables: Sequence[Any],
        slot_prefix: str,
        scope: str,
        increment_global_step: bool = True,
    ) -> Any:
        """The train op: one update of `variables` down `loss`, then global step + 1.

        Args:
            loss: the training loss of this replica.
            variables: the variables to train.
            slot_prefix: put between a variable's name and its slot's
                (`t_0/`, `part_0/` or ''), as 2.15's checkpoints have it.
            scope: where Adam's `beta1_power` / `beta2_power` live ('dnn/head/', ...).
            increment_global_step: False leaves the global step to the caller
                (a model with several optimizers advances it once).
        """
        context = tf.distribute.get_replica_context()
        replicas = 1 if context is None else context.num_replicas_in_sync
        if replicas > 1:
            # As tf.compat.v1.train.Optimizer under tf.estimator: each replica's
            # loss of a mean is its share, and the replicas' gradients are
            # summed; a summed loss (the v1 heads' default) is not divided.
            scaled = tf.compat.v1.distribute.get_loss_reduction() == tf.distribute.ReduceOp.MEAN
            distribute.mark_loss_scaled_by_optimizer(scaled)
            if scaled:
                loss = loss / replicas
        params = list(variables)
        gradients = tf.compat.v1.gradients(loss, params)
        pairs = [(g, v) for g, v in zip(gradients, params, strict=True) if g is not None]
        if not pairs:
            raise ValueError(
                f"No gradient flows from the loss to any of the variables "
                f"{[v.name for v in params]}."
            )
        dense = [tf.convert_to_tensor(g) for g, _ in pairs]
        if replicas > 1 and context is not None:
            dense = context.all_reduce(tf.distribute.ReduceOp.SUM, dense)
        trained = [v for _, v in pairs]

        def make_variables(*_: Any) -> tuple[list[dict[str, Any]], dict[str, Any]]:
            slots = [self._make_slots(v, slot_prefix) for v in trained]
            extra = {}
            if self._kind.default_name == "Adam":
                # A second Adam in the model (the other part of a wide and deep
                # model) gets `beta1_power_1`, ..., as the graph named them in 2.15.
                extra = {
                    power: _variable(_unused_name(f"{scope}{power}"), [], self._settings[beta])
                    for power, beta in (("beta1_power", "beta1"), ("beta2_power", "beta2"))
                }
            return slots, extra

        # Made in cross-replica context, as a strategy makes its variables.
        if context is not None:
            slots, extra = context.merge_call(make_variables)
        else:
            slots, extra = make_variables()
        settings = {key: _tensor(value) for key, value in self._settings.items()}
        updates = [
            self._update(grad, var, slot, settings, extra)
            for grad, var, slot in zip(dense, trained, slots, strict=True)
        ]
        with tf.control_dependencies(updates):
            finished = [
                power.assign(power * tf.cast(settings[beta], power.dtype))
                for power, beta in (
                    (extra.get("beta1_power"), "beta1"),
                    (extra.get("beta2_power"), "beta2"),
                )
                if power is not None
            ]
            if not increment_global_step:
                return tf.group(*updates, *finished)
            with tf.control_dependencies(finished):
                return tf.compat.v1.train.get_global_step().assign_add(1)

    def _make_slots(self, variable: Any, prefix: str) -> dict[str, Any]:
        base = variable.name.split(":")[0]
        used: dict[str, int] = {}
        slots = {}
        for slot, initial in self._kind.slots(self._settings).items():
            stem = self._slot_names.get(slot, self._name)
            count = used.get(stem, 0)
            used[stem] = count + 1
            suffix = stem if count == 0 else f"{stem}_{count}"
            slots[slot] = _variable(
                f"{base}/{prefix}{suffix}", variable.shape, initial, variable.dtype.base_dtype
            )
        return slots

    def _update(
        self,
        grad: tf.Tensor,
        var: Any,
        slots: dict[str, Any],
        s: dict[str, Any],
        extra: dict[str, Any],
    ) -> Any:
        dtype = var.dtype.base_dtype

        def c(key: str) -> tf.Tensor:
            return tf.cast(s[key], dtype)

        h = {key: var.handle if key == "var" else slots[key].handle for key in ("var", *slots)}
        kind = self._kind.default_name
        if kind == "Adagrad":
            return tf.raw_ops.ResourceApplyAdagrad(
                var=h["var"], accum=h["accumulator"], lr=c("learning_rate"), grad=grad
            )
        if kind == "Adam":
            return tf.raw_ops.ResourceApplyAdam(
                var=h["var"],
                m=h["m"],
                v=h["v"],
                beta1_power=tf.cast(extra["beta1_power"], dtype),
                beta2_power=tf.cast(extra["beta2_power"], dtype),
                lr=c("learning_rate"),
                beta1=c("beta1"),
                beta2=c("beta2"),
                epsilon=c("epsilon"),
                grad=grad,
            )
        if kind == "Ftrl":
            return self._ftrl(grad, h, c)
        if kind == "RMSProp":
            common = {
                "var": h["var"],
                "ms": h["rms"],
                "mom": h["momentum"],
                "lr": c("learning_rate"),
                "rho": c("decay"),
                "momentum": c("momentum"),
                "epsilon": c("epsilon"),
                "grad": grad,
            }
            if self._settings["centered"]:
                return tf.raw_ops.ResourceApplyCenteredRMSProp(mg=h["mg"], **common)
            return tf.raw_ops.ResourceApplyRMSProp(**common)
        if kind == "GradientDescent":
            return tf.raw_ops.ResourceApplyGradientDescent(
                var=h["var"], alpha=c("learning_rate"), delta=grad
            )
        if kind == "Momentum":
            return tf.raw_ops.ResourceApplyMomentum(
                var=h["var"],
                accum=h["momentum"],
                lr=c("learning_rate"),
                grad=grad,
                momentum=c("momentum"),
                use_nesterov=bool(self._settings["use_nesterov"]),
            )
        if kind == "ProximalAdagrad":
            return tf.raw_ops.ResourceApplyProximalAdagrad(
                var=h["var"],
                accum=h["accumulator"],
                lr=c("learning_rate"),
                l1=c("l1_regularization_strength"),
                l2=c("l2_regularization_strength"),
                grad=grad,
            )
        if kind == "ProximalGradientDescent":
            return tf.raw_ops.ResourceApplyProximalGradientDescent(
                var=h["var"],
                alpha=c("learning_rate"),
                l1=c("l1_regularization_strength"),
                l2=c("l2_regularization_strength"),
                delta=grad,
            )
        return tf.raw_ops.ResourceApplyAdadelta(
            var=h["var"],
            accum=h["accum"],
            accum_update=h["accum_update"],
            lr=c("learning_rate"),
            rho=c("rho"),
            epsilon=c("epsilon"),
            grad=grad,
        )

    def _ftrl(self, grad: tf.Tensor, h: dict[str, Any], c: Callable[[str], tf.Tensor]) -> Any:
        # v1 Ftrl folds `beta` into the L2 strength.
        l2 = c("l2_regularization_strength") + c("beta") / (2.0 * c("learning_rate"))
        common = {
            "var": h["var"],
            "accum": h["accum"],
            "linear": h["linear"],
            "grad": grad,
            "lr": c("learning_rate"),
            "l1": c("l1_regularization_strength"),
            "l2": l2,
            "lr_power": c("learning_rate_power"),
        }
        if _positive(self._settings["l2_shrinkage_regularization_strength"]):
            return tf.raw_ops.ResourceApplyFtrlV2(
                l2_shrinkage=c("l2_shrinkage_regularization_strength"), **common
            )
        return tf.raw_ops.ResourceApplyFtrl(**common)


def _positive(value: Any) -> bool:
    return not isinstance(value, (int, float)) or value > 0


def _tensor(value: Any) -> Any:
    if isinstance(value, bool):
        return value
    return tf.convert_to_tensor(value() if callable(value) else value)


def _unused_name(name: str) -> str:
    """`name`, or `name_1`, `name_2`, ... if the graph holds a variable so named."""
    taken = {v.name.split(":")[0] for v in tf.compat.v1.global_variables()}
    candidate, count = name, 0
    while candidate in taken:
        count += 1
        candidate = f"{name}_{count}"
    return candidate


def _variable(name: str, shape: Any, initial: float, dtype: Any = tf.float32) -> Any:
    return tf.compat.v1.get_variable(
        name,
        shape=shape,
        dtype=dtype,
        initializer=tf.compat.v1.constant_initializer(initial),
        trainable=False,
    )


class DeferredOptimizer:
    """A v1 canned estimator's optimizer argument, resolved when 2.15 resolved it.

    2.15's v1 classes kept the argument as given and turned it into an
    optimizer in model_fn, so a bad name or object raised at the first
    `train()`, not when the estimator was made; `get` does the same. A name
    or an instance is resolved once; a callable is called at every `get`, so
    its learning rate may read the global step.
    """

    def __init__(self, spec: Any, learning_rate: float) -> None:
        self._spec = spec
        self._learning_rate = learning_rate
        self._optimizer: V1Optimizer | ProgramOptimizer | None = None

    def get(self) -> V1Optimizer | ProgramOptimizer:
        if self._optimizer is not None:
            return self._optimizer
        optimizer = get_v1_optimizer(self._spec, self._learning_rate)
        if not _is_factory(self._spec):
            self._optimizer = optimizer
        return optimizer


def _is_factory(spec: Any) -> bool:
    return callable(spec) and not isinstance(spec, (V1Optimizer, tf.compat.v1.train.Optimizer))


def get_v1_optimizer(spec: Any, learning_rate: float) -> V1Optimizer | ProgramOptimizer:
    """A `V1Optimizer` from what a v1 canned estimator's `optimizer` argument took.

    Args:
        spec: a name ('Adagrad', 'Adam', 'Ftrl', 'RMSProp', 'SGD'), a
            `tf.compat.v1.train.Optimizer` of a supported kind, a
            `V1Optimizer`, or a callable returning one of these. Call it
            inside model_fn when it is a callable: 2.15 did, so its
            learning rate may read the global step.
        learning_rate: the learning rate used with a name (the estimator's
            default for its kind).

    Raises:
        ValueError: an unknown name, an object that is no
            `tf.compat.v1.train.Optimizer`, or one of a kind not provided
            (the messages begin with 2.15's).
        NotImplementedError: a `tf.compat.v1.train.Optimizer` subclass that
            does not implement the update of a variable, as in 2.15.
    """
    if isinstance(spec, str):
        if spec not in NAMES:
            raise ValueError(
                f"Unsupported optimizer name: {spec}. Supported names are: "
                f"{tuple(sorted(NAMES))}. The names are spelled exactly so; or "
                "pass a tf.compat.v1.train.Optimizer."
            )
        return V1Optimizer(NAMES[spec], learning_rate=learning_rate)
    if _is_factory(spec):
        spec = spec()
    if isinstance(spec, V1Optimizer):
        return spec
    if isinstance(spec, tf.compat.v1.train.Optimizer):
        return _from_v1(spec)
    raise ValueError(
        f"The given object is not an Optimizer instance. Given: {spec}. The v1 "
        f"canned estimators take a name ({', '.join(sorted(NAMES))}), a "
        "tf.compat.v1.train.Optimizer or a callable returning one; got a "
        f"{type(spec).__name__}."
    )


def _from_v1(optimizer: Any) -> V1Optimizer | ProgramOptimizer:
    tf_kind = v1_optimizer_settings.tf_kind(optimizer)
    kind = _BY_CLASS.get(tf_kind) if tf_kind is not None else None
    if kind is None and v1_optimizer_settings.updates_nothing(optimizer):
        # 2.15 called the optimizer's update, which raised NotImplementedError.
        raise NotImplementedError(
            "Subclasses of tf.compat.v1.train.Optimizer must implement "
            f"_resource_apply_dense(): {type(optimizer).__name__} implements no "
            "update of a variable, so it cannot train. Pass one of the "
            f"tf.compat.v1.train optimizers {sorted(_BY_CLASS)}."
        )
    settings = v1_optimizer_settings.v1_optimizer_settings(optimizer)
    if kind is None or settings is None:
        return ProgramOptimizer(optimizer)
    slot_names = v1_optimizer_settings.ftrl_slot_names(optimizer) if kind == "ftrl" else {}
    return V1Optimizer(kind, name=optimizer.get_name(), slot_names=slot_names, **settings)


class ProgramOptimizer:
    """A program's own `tf.compat.v1.train.Optimizer` subclass, run as it is.

    2.15's v1 canned estimators called any such optimizer's `minimize`; so
    does this class, in the step's trace, with the variables to train. Its
    slots are named as 2.15 named them (`<variable>/<slot_prefix><name>`,
    `slots_named_under`), and variables of its own that are not slots
    (Adam's `beta1_power`) in `scope`, as the head's scope named them. Under
    a strategy the optimizer scales the loss and sums the replicas'
    gradients itself, as tf.compat.v1.train optimizers do.
    """

    def __init__(self, optimizer: Any) -> None:
        self._optimizer = optimizer

    @property
    def name(self) -> str:
        return self._optimizer.get_name()  # type: ignore[no-any-return]

    def minimize(
        self,
        loss: tf.Tensor,
        variables: Sequence[Any],
        slot_prefix: str,
        scope: str,
        increment_global_step: bool = True,
    ) -> Any:
        """The train op, as `V1Optimizer.minimize`.

        `minimize` is called with the arguments 2.15 gave it, so that a
        subclass replacing it with fewer parameters runs as it did there:
        `(loss, global_step=...)` when the variables are the graph's
        trainable ones (the DNN, Linear and Baseline classes' heads; the
        optimizer reads them from the collection), `(loss, var_list=...)`
        when the global step is not to be incremented (each optimizer of
        the wide-and-deep classes).
        """
        variables = list(variables)
        arguments: dict[str, Any] = {}
        if increment_global_step:
            arguments["global_step"] = tf.compat.v1.train.get_global_step()
        if not (increment_global_step and _are_trainable_variables(variables)):
            arguments["var_list"] = variables
        with (
            tf.compat.v1.name_scope(scope or None),
            v1_optimizer_settings.slots_named_under(self._optimizer, slot_prefix),
        ):
            return self._optimizer.minimize(loss, **arguments)


def _are_trainable_variables(variables: Sequence[Any]) -> bool:
    """Whether `variables` are the graph's trainable variables, in their order."""
    trainable = tf.compat.v1.trainable_variables()
    return len(trainable) == len(variables) and all(
        a is b for a, b in zip(trainable, variables, strict=True)
    )
