"""`tf.keras.optimizers.legacy` for canned estimators: what `install()` serves under that name.

Keras 3 has no legacy optimizers: `tf.keras.optimizers.legacy.Adam(...)`
raises ImportError. tf.estimator 2.15's canned estimators trained with them
(and TensorFlow's canned-estimator migration guide passes them, as an
instance or as a callable returning one). These classes take tf.keras 2's
constructor arguments and train a canned estimator with tf.keras 2's legacy
semantics and variable names (`canned.optimizers.CannedOptimizer`:
`training/Adam/learning_rate`, `training/Adam/<variable>/m`, ...), so
model_dirs written by 2.15 train on here.

`Optimizer` is the base class: a subclass of the program's own that
implements `get_updates(loss, params)` (as tf.estimator's own canned tests'
mock optimizer does) is called by the canned estimators with the loss and
their trainable variables, with `iterations` set to the global step, as 2.15
did. These objects serve canned estimators (and heads'
`create_estimator_spec`); they are not Keras 3 optimizers and have no
`minimize` or `apply_gradients`.
"""

from __future__ import annotations

from typing import Any

import tensorflow as tf

from keras_estimator._src.canned.optimizers import CannedOptimizer
from keras_estimator._src.head import training_scope

_ALLOWED_KWARGS = ("clipnorm", "clipvalue", "lr", "decay", "global_clipnorm")


class Optimizer:
    """tf.keras 2's `tf.keras.optimizers.legacy.Optimizer`, for canned estimators.

    Args:
        name: the optimizer's name: its variables' scope, `training/<name>/`.
        gradient_aggregator, gradient_transformers: not supported (None).
        **kwargs: `clipnorm`, `clipvalue`, `global_clipnorm`, `decay` (the
            learning rate is divided by `1 + decay * step`) and `lr` (an old
            name for `learning_rate`).
    """

    _kind: str | None = None  # the built-in optimizers' CannedOptimizer kind

    def __init__(
        self,
        name: str,
        gradient_aggregator: Any = None,
        gradient_transformers: Any = None,
        **kwargs: Any,
    ) -> None:
        for key, value in kwargs.items():
            if key not in _ALLOWED_KWARGS:
                raise TypeError(
                    f"Unexpected keyword argument passed to optimizer: {key}. Allowed "
                    f"kwargs are {set(_ALLOWED_KWARGS)}."
                )
            if value is not None and isinstance(value, (int, float)) and value < 0:
                raise ValueError(f"Expected {key} >= 0, received: {value}")
        for argument, value in (
            ("gradient_aggregator", gradient_aggregator),
            ("gradient_transformers", gradient_transformers),
        ):
            if value is not None:
                raise ValueError(
                    f"{argument} is not supported by keras_estimator's legacy "
                    f"optimizers; got {value!r}. Leave it None (use clipnorm, clipvalue "
                    "or global_clipnorm to transform gradients)."
                )
        if kwargs.get("clipnorm") is not None and kwargs.get("global_clipnorm") is not None:
            raise ValueError(
                "Cannot accept both `clipnorm` and `global_clipnorm`. Received: "
                f"`clipnorm`={kwargs['clipnorm']}, `global_clipnorm`="
                f"{kwargs['global_clipnorm']}."
            )
        self._name = name
        self._hyper: dict[str, Any] = {}
        self._initial_decay = float(kwargs.pop("decay", 0.0) or 0.0)
        self._lr = kwargs.pop("lr", None)
        self.clipnorm = kwargs.get("clipnorm")
        self.clipvalue = kwargs.get("clipvalue")
        self.global_clipnorm = kwargs.get("global_clipnorm")
        self._iterations: Any = None

    @property
    def name(self) -> str:
        return self._name

    @property
    def iterations(self) -> Any:
        """The step count: the global step a canned estimator set, else its own.

        As in tf.keras 2, an optimizer given none makes its own counter
        (`training/<name>/iter`) when a step is built; None outside one.
        """
        if self._iterations is None and not tf.executing_eagerly():
            # Looked up by name in each step being built (not kept): each
            # trace has its own handle on the variable.
            with tf.compat.v1.variable_scope(
                tf.compat.v1.get_variable_scope(), reuse=tf.compat.v1.AUTO_REUSE
            ):
                return tf.compat.v1.get_variable(
                    f"{training_scope.current()}/{self._name}/iter",
                    shape=[],
                    dtype=tf.int64,
                    initializer=tf.compat.v1.zeros_initializer(),
                    trainable=False,
                )
        return self._iterations

    @iterations.setter
    def iterations(self, variable: Any) -> None:
        self._iterations = variable

    def _set_hyper(self, name: str, value: Any) -> None:
        self._hyper[name] = value

    def _get_hyper(self, name: str, dtype: Any = None) -> Any:
        value = self._hyper[name]
        return value() if callable(value) and not hasattr(value, "get_config") else value

    def get_config(self) -> dict[str, Any]:
        """The name and clipping settings, as tf.keras 2's base class gave them."""
        config: dict[str, Any] = {"name": self._name}
        for key in ("clipnorm", "clipvalue", "global_clipnorm"):
            if getattr(self, key) is not None:
                config[key] = getattr(self, key)
        return config

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> Optimizer:
        return cls(**config)

    def canned_optimizer(self) -> CannedOptimizer | None:
        """The `CannedOptimizer` training as this one; None for a program's own subclass."""
        if self._kind is None:
            return None
        settings = {k: v for k, v in self._hyper.items() if k != "learning_rate"}
        settings.update(self._flags())
        canned = CannedOptimizer(
            self._kind,
            name=self._name,
            learning_rate=self._hyper["learning_rate"],
            clipvalue=self.clipvalue,
            clipnorm=self.clipnorm,
            global_clipnorm=self.global_clipnorm,
            decay=self._initial_decay,
            **settings,
        )
        canned.reports_iterations_to(self)
        return canned

    def _flags(self) -> dict[str, float]:
        return {}

    def get_updates(self, loss: Any, params: Any) -> list[Any]:
        """The train op (in a list) minimizing `loss` over `params`.

        A subclass of the program's own overrides this (tf.keras 2's
        `_resource_apply_dense` route is not available here).
        """
        canned = self.canned_optimizer()
        if canned is None:
            raise NotImplementedError(
                f"{type(self).__name__} subclasses tf.keras.optimizers.legacy.Optimizer "
                "without overriding get_updates(loss, params); canned estimators call "
                "that method. Override it, or use one of Adagrad, Adam, Ftrl, RMSprop, SGD."
            )
        return canned.get_updates(loss, params)

    def _learning_rate(self, learning_rate: Any) -> Any:
        return learning_rate if self._lr is None else self._lr


class Adagrad(Optimizer):
    """tf.keras 2's legacy Adagrad (`training/<name>/<variable>/accumulator`)."""

    _kind = "adagrad"

    def __init__(
        self,
        learning_rate: Any = 0.001,
        initial_accumulator_value: float = 0.1,
        epsilon: float = 1e-7,
        name: str = "Adagrad",
        **kwargs: Any,
    ) -> None:
        if initial_accumulator_value < 0.0:
            raise ValueError(
                "initial_accumulator_value must be non-negative: "
                f"{initial_accumulator_value}"
            )
        super().__init__(name, **kwargs)
        self._set_hyper("learning_rate", self._learning_rate(learning_rate))
        self._set_hyper("initial_accumulator_value", initial_accumulator_value)
        self._set_hyper("epsilon", 1e-7 if epsilon is None else epsilon)


class Adam(Optimizer):
    """tf.keras 2's legacy Adam (slots `m`, `v`, and `vhat` with amsgrad)."""

    _kind = "adam"

    def __init__(
        self,
        learning_rate: Any = 0.001,
        beta_1: float = 0.9,
        beta_2: float = 0.999,
        epsilon: float = 1e-7,
        amsgrad: bool = False,
        name: str = "Adam",
        **kwargs: Any,
    ) -> None:
        super().__init__(name, **kwargs)
        self._set_hyper("learning_rate", self._learning_rate(learning_rate))
        self._set_hyper("beta_1", beta_1)
        self._set_hyper("beta_2", beta_2)
        self._set_hyper("epsilon", 1e-7 if epsilon is None else epsilon)
        self.amsgrad = bool(amsgrad)

    def _flags(self) -> dict[str, float]:
        return {"amsgrad": float(self.amsgrad)}


class Ftrl(Optimizer):
    """tf.keras 2's legacy Ftrl (slots `accumulator`, `linear`)."""

    _kind = "ftrl"

    def __init__(
        self,
        learning_rate: Any = 0.001,
        learning_rate_power: float = -0.5,
        initial_accumulator_value: float = 0.1,
        l1_regularization_strength: float = 0.0,
        l2_regularization_strength: float = 0.0,
        name: str = "Ftrl",
        l2_shrinkage_regularization_strength: float = 0.0,
        beta: float = 0.0,
        **kwargs: Any,
    ) -> None:
        for argument, value, bound in (
            ("initial_accumulator_value", initial_accumulator_value, 0.0),
            ("learning_rate_power", learning_rate_power, None),
            ("l1_regularization_strength", l1_regularization_strength, 0.0),
            ("l2_regularization_strength", l2_regularization_strength, 0.0),
            ("l2_shrinkage_regularization_strength", l2_shrinkage_regularization_strength, 0.0),
        ):
            if bound is None and value > 0.0:
                raise ValueError(f"{argument} must be less than or equal to 0: {value}")
            if bound is not None and value < bound:
                raise ValueError(f"{argument} must be non-negative: {value}")
        super().__init__(name, **kwargs)
        self._set_hyper("learning_rate", self._learning_rate(learning_rate))
        self._set_hyper("learning_rate_power", learning_rate_power)
        self._set_hyper("initial_accumulator_value", initial_accumulator_value)
        self._set_hyper("l1_regularization_strength", l1_regularization_strength)
        self._set_hyper("l2_regularization_strength", l2_regularization_strength)
        self._set_hyper("beta", beta)
        self._set_hyper(
            "l2_shrinkage_regularization_strength", l2_shrinkage_regularization_strength
        )


class RMSprop(Optimizer):
    """tf.keras 2's legacy RMSprop (slots `rms`, `momentum`, `mg`)."""

    _kind = "rmsprop"

    def __init__(
        self,
        learning_rate: Any = 0.001,
        rho: float = 0.9,
        momentum: float = 0.0,
        epsilon: float = 1e-7,
        centered: bool = False,
        name: str = "RMSprop",
        **kwargs: Any,
    ) -> None:
        super().__init__(name, **kwargs)
        self._set_hyper("learning_rate", self._learning_rate(learning_rate))
        self._set_hyper("rho", rho)
        self._set_hyper("momentum", momentum)
        self._set_hyper("epsilon", 1e-7 if epsilon is None else epsilon)
        self.centered = bool(centered)

    def _flags(self) -> dict[str, float]:
        return {"centered": float(self.centered)}


class SGD(Optimizer):
    """tf.keras 2's legacy SGD (slot `momentum` when momentum > 0)."""

    _kind = "sgd"

    def __init__(
        self,
        learning_rate: Any = 0.01,
        momentum: float = 0.0,
        nesterov: bool = False,
        name: str = "SGD",
        **kwargs: Any,
    ) -> None:
        if isinstance(momentum, (int, float)) and not 0 <= momentum <= 1:
            raise ValueError(f"`momentum` must be between [0, 1]. Received: momentum={momentum}")
        super().__init__(name, **kwargs)
        self._set_hyper("learning_rate", self._learning_rate(learning_rate))
        self._set_hyper("momentum", momentum)
        self.nesterov = bool(nesterov)

    def _flags(self) -> dict[str, float]:
        return {"nesterov": float(self.nesterov)}


LEGACY_NAMES = {
    "Optimizer": Optimizer,
    "Adagrad": Adagrad,
    "Adam": Adam,
    "Ftrl": Ftrl,
    "RMSprop": RMSprop,
    "SGD": SGD,
}
