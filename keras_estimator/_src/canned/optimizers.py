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
import re
from collections.abc import Callable, Sequence
from typing import Any

import keras
import tensorflow as tf

from keras_estimator._src.canned import optimizer_updates
from keras_estimator._src.engine import keras2_idioms
from keras_estimator._src.head import training_scope


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
        {
            "learning_rate": 0.001,
            "beta_1": 0.9,
            "beta_2": 0.999,
            "epsilon": 1e-7,
            "amsgrad": 0.0,
        },
        ("learning_rate", "decay", "beta_1", "beta_2"),
        lambda h: {"m": 0.0, "v": 0.0, **({"vhat": 0.0} if h["amsgrad"] else {})},
    ),
    "rmsprop": _Kind(
        "RMSprop",
        {
            "learning_rate": 0.001,
            "rho": 0.9,
            "momentum": 0.0,
            "epsilon": 1e-7,
            "centered": 0.0,
        },
        ("learning_rate", "decay", "rho", "momentum"),
        lambda h: {
            "rms": 0.0,
            **({"momentum": 0.0} if h["momentum"] else {}),
            **({"mg": 0.0} if h["centered"] else {}),
        },
    ),
    "sgd": _Kind(
        "SGD",
        {"learning_rate": 0.01, "momentum": 0.0, "nesterov": 0.0},
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
            "l2_shrinkage_regularization_strength": 0.0,
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
# Gradient transformations every tf.keras 2 optimizer took, in the order it applied them.
CLIPPING = ("clipvalue", "clipnorm", "global_clipnorm")


class CannedOptimizer:
    """A tf.keras 2-style optimizer for canned estimators; see the module.

    Args:
        kind: 'adagrad', 'adam', 'ftrl', 'rmsprop' or 'sgd'.
        name: the optimizer's name, its variables' scope (`training/<name>/`);
            by default tf.keras 2's ('Adagrad', 'Adam', 'Ftrl', 'RMSprop',
            'SGD').
        learning_rate: a number, or what tf.keras 2 also took: a Keras
            `LearningRateSchedule` (called with the step count), a callable
            taking no argument, or a tensor (such as
            `tf.compat.v1.train.exponential_decay`'s in a graph); only a
            number is stored as `training/<name>/learning_rate`.
        clipvalue, clipnorm, global_clipnorm: gradient clipping, applied in
            that order, as tf.keras 2 applied it.
        **settings: the optimizer's other settings (epsilon, beta_1, decay,
            amsgrad, ...).
    """

    def __init__(
        self,
        kind: str,
        *,
        name: str | None = None,
        learning_rate: Any = None,
        clipvalue: float | None = None,
        clipnorm: float | None = None,
        global_clipnorm: float | None = None,
        **settings: float,
    ) -> None:
        self._kind = _KINDS[kind]
        allowed = {*self._kind.defaults, "decay"}
        unknown = sorted(set(settings) - allowed)
        if unknown:
            raise ValueError(
                f"{self._kind.name} takes {sorted(allowed)}, got unknown settings {unknown}."
            )
        if clipnorm is not None and global_clipnorm is not None:
            raise ValueError(
                f"Give clipnorm or global_clipnorm, not both; got clipnorm={clipnorm!r} and "
                f"global_clipnorm={global_clipnorm!r}."
            )
        self._name = name or self._kind.name
        self._clipping = {
            key: float(value)
            for key, value in zip(CLIPPING, (clipvalue, clipnorm, global_clipnorm), strict=True)
            if value is not None
        }
        for key, value in self._clipping.items():
            if value < 0:
                raise ValueError(f"{key} must be >= 0, got {value!r}.")
        if learning_rate is not None and not isinstance(learning_rate, (int, float)):
            self._learning_rate: Any = learning_rate  # schedule, callable or tensor
        else:
            self._learning_rate = None
            if learning_rate is not None:
                settings = {**settings, "learning_rate": learning_rate}
        self._settings = {
            **self._kind.defaults,
            "decay": 0.0,
            **{k: float(v) for k, v in settings.items()},
        }
        # Any learning rate, as tf.keras 2 took it: 0 trains nothing (2.15's
        # own warm-start tests check warm-started values so), a negative one
        # climbs the loss, as 2.15's canned estimators did.
        if self._settings["decay"] < 0:
            raise ValueError(f"decay must be >= 0, got {self._settings['decay']!r}.")
        # The program's tf.keras.optimizers.legacy object this trains as, if any.
        self._owner: Any = None

    def reports_iterations_to(self, owner: Any) -> None:
        """Sets `owner.iterations` to the step count of each training step built.

        tf.estimator 2.15 trained with the legacy optimizer object itself, so
        after `train()` its `iterations` was the global step, or the counter of
        its own (`training/<Name>/iter`) a second optimizer kept; a program
        reads it as `est.get_variable_value(optimizer.iterations.name)`.
        """
        self._owner = owner

    @property
    def name(self) -> str:
        return self._name

    @property
    def settings(self) -> dict[str, float]:
        return {**self._settings, **self._clipping}

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
        Its variables are under `<training scope>/<scope_name>/`, by default
        `training/<name>/` (2.15's graph named a second optimizer of the
        same name `<Name>_1`, and the training scope of a MultiHead of N
        heads `training_<N>`: `head.training_scope`).
        """
        scope = f"{training_scope.current()}/{scope_name or self._name}"
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
        pairs = self._clipped(pairs)
        variables = [v for _, v in pairs]
        saved = [
            name
            for name in self._kind.saved
            if not (name == "learning_rate" and self._learning_rate is not None)
        ]

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
            settings = {name: self._setting_variable(scope, name) for name in saved}
            slots = [
                {
                    name: self._slot(scope, v, name, initial)
                    for name, initial in self._kind.slots(self._settings).items()
                }
                for v in variables
            ]
            return iterations, settings, slots

        # Made in cross-replica context, as a strategy makes its variables.
        if context is not None:
            iterations, settings, slots = context.merge_call(make_variables)
        else:
            iterations, settings, slots = make_variables()
        if self._owner is not None:
            self._owner.iterations = iterations
        values = {name: tf.convert_to_tensor(v) for name, v in settings.items()}
        step = tf.cast(iterations, tf.float32)
        learning_rate = self._learning_rate_at(values, step)
        updates = []
        for (g, v), slot in zip(pairs, slots, strict=True):
            dtype = v.dtype.base_dtype
            updates.append(
                optimizer_updates.apply(
                    self._kind.name,
                    g,
                    v,
                    slot,
                    self._coefficients(values, dtype),
                    tf.cast(learning_rate, dtype),
                    tf.cast(step + 1.0, dtype),
                )
            )
        with tf.control_dependencies(updates):
            return [iterations.assign_add(1)]

    def _clipped(self, pairs: list[tuple[Any, Any]]) -> list[tuple[Any, Any]]:
        if "clipvalue" in self._clipping:
            value = self._clipping["clipvalue"]
            pairs = [(tf.clip_by_value(g, -value, value), v) for g, v in pairs]
        if "clipnorm" in self._clipping:
            pairs = [(tf.clip_by_norm(g, self._clipping["clipnorm"]), v) for g, v in pairs]
        if "global_clipnorm" in self._clipping:
            clipped, _ = tf.clip_by_global_norm(
                [g for g, _ in pairs], self._clipping["global_clipnorm"]
            )
            pairs = list(zip(clipped, [v for _, v in pairs], strict=True))
        return pairs

    def _learning_rate_at(self, values: dict[str, tf.Tensor], step: tf.Tensor) -> tf.Tensor:
        """The step's learning rate, decayed by `decay` as tf.keras 2 did."""
        given = self._learning_rate
        if given is None:
            learning_rate = values["learning_rate"]
        elif isinstance(given, keras.optimizers.schedules.LearningRateSchedule):
            learning_rate = given(step)
        elif callable(given):
            learning_rate = given()
        else:
            learning_rate = given
        learning_rate = tf.cast(learning_rate, tf.float32)
        return learning_rate / (1.0 + values["decay"] * step)

    def _coefficients(self, values: dict[str, tf.Tensor], dtype: Any) -> dict[str, Any]:
        """The settings an update reads: stored ones as variables' values."""
        h: dict[str, Any] = {}
        for name, value in self._settings.items():
            h[name] = tf.cast(values[name] if name in values else value, dtype)
        h["amsgrad"] = bool(self._settings.get("amsgrad"))
        h["centered"] = bool(self._settings.get("centered"))
        h["nesterov"] = bool(self._settings.get("nesterov"))
        h["momentum_on"] = bool(self._settings.get("momentum"))
        h["shrinkage_on"] = self._settings.get("l2_shrinkage_regularization_strength", 0.0) > 0
        return h

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


def get_optimizer(spec: Any, learning_rate: float | None = None) -> Any:
    """An optimizer from what a canned estimator's `optimizer` argument took.

    Args:
        spec: a name ('Adagrad', 'Adam', 'Ftrl', 'RMSProp', 'SGD'), a
            `CannedOptimizer`, a Keras optimizer (its settings are carried
            over), a `tf.keras.optimizers.legacy` optimizer as `install()`
            serves them (`canned.legacy_optimizers`), or a callable returning
            one of these. As in 2.15, the callable is called where the
            training step is built (so it may read the global step, as a
            `tf.compat.v1.train.exponential_decay` learning rate does).
        learning_rate: the learning rate used with a name (the estimator's
            default for its kind).

    Returns:
        A `CannedOptimizer`; for a callable, a `DeferredOptimizer`; for a
        legacy `Optimizer` subclass of the program's own, that object (its
        `get_updates(loss, params)` makes the train op).
    """
    if callable(spec) and not _is_optimizer(spec):
        return DeferredOptimizer(spec, learning_rate)
    if isinstance(spec, CannedOptimizer):
        return spec
    if isinstance(spec, str):
        kind = spec.lower()
        if kind not in _KINDS:
            raise ValueError(
                f"Unsupported optimizer name: {spec!r}. Use one of "
                f"{sorted(_NAMES.values())}, or pass an optimizer object."
            )
        return CannedOptimizer(kind, learning_rate=learning_rate)
    if isinstance(spec, keras.optimizers.Optimizer):
        return _from_keras(spec)
    to_canned = getattr(spec, "canned_optimizer", None)
    if to_canned is not None:  # a legacy optimizer (canned.legacy_optimizers)
        return to_canned() or spec
    # 2.15's type and first words.
    raise ValueError(
        "The given object is not a tf.keras.optimizers.Optimizer instance. Given: "
        f"{type(spec).__name__}: {spec!r}. Pass a name "
        f"({sorted(_NAMES.values())}), an optimizer object or a callable returning one."
    )


def _is_optimizer(spec: Any) -> bool:
    return isinstance(spec, (CannedOptimizer, keras.optimizers.Optimizer)) or hasattr(
        spec, "canned_optimizer"
    )


class DeferredOptimizer:
    """An optimizer given as a callable, called each time a training step is built.

    tf.estimator 2.15 called it inside the model_fn, so what it returns may
    depend on the graph (a learning rate decayed from the global step).
    """

    def __init__(self, factory: Callable[[], Any], learning_rate: float | None) -> None:
        self._factory = factory
        self._learning_rate = learning_rate

    def resolve(self) -> Any:
        """What the callable returns now, as `get_optimizer` takes it."""
        made = self._factory()
        if isinstance(made, keras.optimizers.Optimizer):
            # Only its settings are used: its own variables are not saved.
            keras2_idioms.unsave(made.variables)
        if callable(made) and not _is_optimizer(made):
            raise TypeError(
                f"The optimizer callable {self._factory!r} returned another callable "
                f"({made!r}); it must return an optimizer or an optimizer name."
            )
        return get_optimizer(made, self._learning_rate)

    @property
    def name(self) -> str:
        return str(getattr(self.resolve(), "name", ""))

    def get_updates(self, loss: Any, params: Sequence[Any], **kwargs: Any) -> list[Any]:
        optimizer = self.resolve()
        if isinstance(optimizer, CannedOptimizer):
            return optimizer.get_updates(loss, params, **kwargs)
        return call_get_updates(optimizer, loss, params, own_iterations=kwargs.get("own_iterations", False))


def is_legacy_subclass(optimizer: Any) -> bool:
    """A legacy `Optimizer` subclass of the program's own (it makes its own updates)."""
    return (
        optimizer is not None
        and not isinstance(optimizer, (CannedOptimizer, DeferredOptimizer))
        and hasattr(optimizer, "canned_optimizer")
    )


def call_get_updates(optimizer: Any, loss: Any, params: Sequence[Any], own_iterations: bool) -> list[Any]:
    """`get_updates` of a legacy optimizer subclass, counting in the global step as 2.15 set it."""
    if not own_iterations:
        optimizer.iterations = tf.compat.v1.train.get_global_step()
    return list(optimizer.get_updates(loss, list(params)))


def _from_keras(optimizer: keras.optimizers.Optimizer) -> CannedOptimizer:
    kind = type(optimizer).__name__.lower()
    if kind not in _KINDS:
        raise ValueError(
            f"Canned estimators train with {sorted(_NAMES.values())}; got a Keras "
            f"{type(optimizer).__name__}. Pass one of those optimizers or names."
        )
    with tf.init_scope():  # its settings are variables, read eagerly
        config = optimizer.get_config()
    settings = {
        name: float(config[name])
        for name in _KINDS[kind].defaults
        if name != "learning_rate" and isinstance(config.get(name), (int, float))
    }
    learning_rate: Any = config["learning_rate"]
    if isinstance(learning_rate, dict):  # a serialized LearningRateSchedule
        learning_rate = keras.optimizers.schedules.deserialize(learning_rate)
    clipping = {key: config.get(key) for key in CLIPPING}
    name = config.get("name")
    # Keras 3 names its optimizers 'adam', 'adam_1', ... (tf.keras 2: 'Adam'):
    # only a name the program chose becomes the variables' scope.
    snake = re.sub("(.)([A-Z][a-z]+)", r"\1_\2", type(optimizer).__name__)
    snake = re.sub("([a-z])([A-Z])", r"\1_\2", snake).lower()  # Keras' auto name
    default = rf"({re.escape(kind)}|{re.escape(snake)})(_\d+)?"
    scope = name if name and not re.fullmatch(default, name) else None
    return CannedOptimizer(kind, name=scope, learning_rate=learning_rate, **clipping, **settings)
