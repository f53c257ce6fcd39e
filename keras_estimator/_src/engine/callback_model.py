"""The Keras model a model_fn Estimator's callbacks see: its variables, by TF1 name.

A model_fn has no Keras model, yet Keras callbacks read and write one
(`ModelCheckpoint` and `BackupAndRestore` save and load its weights, the
schedulers set its optimizer's learning rate). `ModelFnView` is a
`keras.Model` whose weights are the model_fn's variables, the ones training
updates, in the order the model_fn created them:

- `weights` / `get_weights` / `set_weights`: every variable a checkpoint
  holds except `global_step` (optimizer slots of a v1 optimizer included:
  in a model_fn they are variables like any other);
- `save_weights(path)` writes them, and `global_step`, to a `.weights.h5`
  file keyed by their TF1 names (the checkpoint keys, `dense/kernel`);
  `load_weights(path)` reads such a file back, global step included;
- `layers`: the model's variables (not the optimizer's, not `global_step`)
  grouped into one `ModelFnLayer` per checkpoint-name prefix
  (`dense/kernel` and `dense/bias` make the layer `dense`), each weight a
  `NamedVariable` whose `path` is its checkpoint name: what Keras code that
  walks `model.layers` (TensorBoard's weight histograms) reads;
- `optimizer`: an `OptimizerView` of the optimizer the model_fn's training
  step uses (None when it uses none, or several);
- `save()`: refused with the fix (a model_fn is no Keras model to save).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from typing import Any

import keras
import numpy as np
import tensorflow as tf

from keras_estimator._src.engine.variable_store import GLOBAL_STEP_NAME, as_tf_variable
from keras_estimator._src.tf_internals import optimizer_state

_FORMAT = "keras_estimator.model_fn_variables"
_SUFFIX = ".weights.h5"


@dataclasses.dataclass
class _ViewHeld:
    """What a view holds, in a plain object Keras' attribute tracking leaves alone.

    Held in the view directly, the optimizer would be tracked as the view's own.
    """

    saveable: Callable[[], dict[str, tf.Variable]]
    optimizer: Any


class ModelFnView(keras.Model):
    """A model_fn's variables as a Keras model (see the module docstring).

    Args:
        saveable: returns checkpoint name -> variable (the variable store's).
        optimizer: what `model.optimizer` is (None when unknown).
    """

    def __init__(
        self, saveable: Callable[[], dict[str, tf.Variable]], optimizer: Any = None
    ) -> None:
        super().__init__(name="model_fn")
        self._held = _ViewHeld(saveable, optimizer)
        self.built = True

    @property
    def optimizer(self) -> Any:  # type: ignore[override]
        return self._held.optimizer

    @optimizer.setter
    def optimizer(self, value: Any) -> None:
        # keras.Model.__init__ sets it (to None) before `_held` exists.
        if "_held" in self.__dict__:
            self._held.optimizer = value

    def _named(self) -> dict[str, tf.Variable]:
        return dict(self._held.saveable())

    # ---- weights -------------------------------------------------------------------
    @property
    def weights(self) -> list[tf.Variable]:  # type: ignore[override]
        return [v for name, v in self._named().items() if name != GLOBAL_STEP_NAME]

    @property
    def trainable_weights(self) -> list[tf.Variable]:  # type: ignore[override]
        return [v for v in self.weights if v.trainable]

    @property
    def non_trainable_weights(self) -> list[tf.Variable]:  # type: ignore[override]
        return [v for v in self.weights if not v.trainable]

    variables = weights
    trainable_variables = trainable_weights
    non_trainable_variables = non_trainable_weights

    @property
    def layers(self) -> list[keras.layers.Layer]:  # type: ignore[override]
        """The model's variables, one `ModelFnLayer` per checkpoint-name prefix.

        The optimizer's own variables (v1 slots and `beta1_power`, a Keras
        optimizer's state, the learning-rate variable it reads) are left
        out, as they are not a Keras model's layer weights.
        """
        optimizer = self.optimizer
        owned = (
            {id(v) for v in optimizer.own_variables()} if isinstance(optimizer, OptimizerView) else set()
        )
        groups: dict[str, list[NamedVariable]] = {}
        for name, variable in self._named().items():
            if name == GLOBAL_STEP_NAME or id(variable) in owned:
                continue
            prefix = name.rsplit("/", 1)[0]
            groups.setdefault(prefix, []).append(NamedVariable(name, variable))
        return [ModelFnLayer(prefix, weights) for prefix, weights in groups.items()]

    def get_weights(self) -> list[np.ndarray]:
        return [np.asarray(v.numpy()) for v in self.weights]

    def set_weights(self, weights: Any) -> None:
        variables = self.weights
        weights = list(weights)
        if len(weights) != len(variables):
            raise ValueError(
                f"set_weights got {len(weights)} arrays; the model_fn has "
                f"{len(variables)} variables ({[v.name for v in variables]}). Pass "
                "one array per variable, in the order get_weights() returns them."
            )
        for variable, value in zip(variables, weights, strict=True):
            if tuple(np.shape(value)) != tuple(variable.shape):
                raise ValueError(
                    f"set_weights: variable {variable.name!r} has shape "
                    f"{tuple(variable.shape)}, got an array of shape {np.shape(value)}."
                )
        for variable, value in zip(variables, weights, strict=True):
            variable.assign(value)

    # ---- files -------------------------------------------------------------------------
    def save(self, filepath: Any, *args: Any, **kwargs: Any) -> None:
        raise ValueError(
            f"A model_fn Estimator has no Keras model to save to {os.fspath(filepath)!r}: "
            "its callbacks see the model_fn's variables only. Save weights "
            "instead (ModelCheckpoint(..., save_weights_only=True) with a "
            "'.weights.h5' path), or export a SavedModel with "
            "Estimator.export_saved_model."
        )

    def save_weights(self, filepath: Any, overwrite: bool = True, **kwargs: Any) -> None:
        """Writes every checkpointed variable (global step too) to a `.weights.h5` file."""
        import h5py

        path = _check_path(filepath, "save_weights")
        if not overwrite and os.path.exists(path):
            return
        tmp = f"{path}.tmp"
        with h5py.File(tmp, "w") as file:
            file.attrs["format"] = _FORMAT
            group = file.create_group("variables")
            for name, variable in self._named().items():
                group.create_dataset(name, data=np.asarray(variable.numpy()))
        os.replace(tmp, path)

    def load_weights(self, filepath: Any, skip_mismatch: bool = False, **kwargs: Any) -> None:
        """Reads a file `save_weights` wrote into the model_fn's variables."""
        import h5py

        path = _check_path(filepath, "load_weights")
        named = self._named()
        values: dict[str, np.ndarray] = {}
        with h5py.File(path, "r") as file:
            if file.attrs.get("format") != _FORMAT:
                raise ValueError(
                    f"{path!r} was not written by a model_fn Estimator's "
                    "callback model (save_weights of ModelCheckpoint / "
                    "BackupAndRestore in Estimator.train). Restore a model_fn's "
                    "variables from its own weights files or checkpoints."
                )
            group = file["variables"]

            def read(name: str, item: Any) -> None:
                if isinstance(item, h5py.Dataset):
                    values[name] = item[()]

            group.visititems(read)
        missing = sorted(set(named) - set(values))
        unknown = sorted(set(values) - set(named))
        if (missing or unknown) and not skip_mismatch:
            raise ValueError(
                f"{path!r} does not hold the model_fn's variables: missing "
                f"{missing}, unknown {unknown}. Load a file saved by the same "
                "model_fn, or pass skip_mismatch=True."
            )
        for name, value in values.items():
            variable = named.get(name)
            if variable is not None and tuple(np.shape(value)) == tuple(variable.shape):
                variable.assign(value)


class NamedVariable:
    """A model_fn variable under its checkpoint name, as Keras code reads a weight.

    `path` is the checkpoint name (`dense/kernel`: the path Keras gives the
    kernel of a Dense layer named `dense`), `name` its last part; it reads
    and assigns the variable training updates, and converts to its value.

    Args:
        path: the checkpoint name.
        variable: the variable.
    """

    def __init__(self, path: str, variable: tf.Variable) -> None:
        self.path = path
        self.name = path.rsplit("/", 1)[-1]
        self.value = variable

    @property
    def shape(self) -> tuple[int | None, ...]:
        return tuple(self.value.shape)

    @property
    def dtype(self) -> str:
        return self.value.dtype.name

    @property
    def trainable(self) -> bool:
        return bool(self.value.trainable)

    def numpy(self) -> np.ndarray:
        return np.asarray(self.value.numpy())

    def assign(self, value: Any) -> None:
        self.value.assign(value)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return np.asarray(self.numpy(), dtype=dtype)

    def __tf_tensor__(self, dtype: Any = None, name: Any = None) -> tf.Tensor:
        return tf.convert_to_tensor(self.value, dtype=dtype, name=name)

    def __repr__(self) -> str:
        return f"<NamedVariable path={self.path!r} shape={self.shape} dtype={self.dtype}>"


@dataclasses.dataclass
class _LayerHeld:
    """A layer's weights, out of Keras' tracking (a list would become a tracked one)."""

    weights: list[Any]


class ModelFnLayer(keras.layers.Layer):
    """The model_fn variables sharing a checkpoint-name prefix, as a Keras layer.

    Its weights are `NamedVariable`s; it has no call (a model_fn is not
    made of callable layers).

    Args:
        name: the prefix (`dense` for `dense/kernel`).
        weights: its variables.
    """

    def __init__(self, name: str, weights: list[NamedVariable]) -> None:
        super().__init__(name=name.replace("/", "_") or "variables")
        self.path_prefix = name
        self._held = _LayerHeld(weights)
        self.built = True

    @property
    def weights(self) -> list[NamedVariable]:  # type: ignore[override]
        return list(self._held.weights)

    @property
    def trainable_weights(self) -> list[NamedVariable]:  # type: ignore[override]
        return [w for w in self.weights if w.trainable]

    @property
    def non_trainable_weights(self) -> list[NamedVariable]:  # type: ignore[override]
        return [w for w in self.weights if not w.trainable]

    variables = weights
    trainable_variables = trainable_weights
    non_trainable_variables = non_trainable_weights

    def get_weights(self) -> list[np.ndarray]:
        return [w.numpy() for w in self.weights]

    def set_weights(self, weights: Any) -> None:
        mine = self.weights
        weights = list(weights)
        if len(weights) != len(mine) or any(
            tuple(np.shape(value)) != w.shape for w, value in zip(mine, weights, strict=False)
        ):
            raise ValueError(
                f"set_weights of layer {self.path_prefix!r} takes arrays of shapes "
                f"{[w.shape for w in mine]}; received shapes {[np.shape(v) for v in weights]}."
            )
        for w, value in zip(mine, weights, strict=True):
            w.assign(value)

    def call(self, *args: Any, **kwargs: Any) -> Any:
        raise ValueError(
            f"Layer {self.path_prefix!r} holds a model_fn's variables and cannot be "
            "called: run the Estimator's train/evaluate/predict instead."
        )


def _check_path(filepath: Any, method: str) -> str:
    path = os.fspath(filepath)
    if not path.endswith(_SUFFIX):
        raise ValueError(
            f"{method} of a model_fn's callback model takes a path ending in "
            f"{_SUFFIX!r}, as Keras' does. Received: filepath={path!r}."
        )
    return path


class OptimizerView:
    """A model_fn's optimizer as Keras callbacks see it: learning rate and step.

    `learning_rate` reads, and assigns, the variable the optimizer's steps
    read (the store's; the optimizer object a building trace made holds a
    stand-in). A learning rate given as a Python number is a constant of the
    traced step: reading gives it, setting raises with the fix. `iterations`
    is a Keras optimizer's own counter, or the global step for a v1
    optimizer (what its `minimize(..., global_step=...)` advances).

    Args:
        optimizer: the optimizer object the building trace used.
        live: name -> the store's variable of that name (None if unknown).
        global_step: the global step variable.
    """

    def __init__(
        self,
        optimizer: Any,
        live: Callable[[str], tf.Variable | None],
        global_step: tf.Variable,
    ) -> None:
        self._optimizer = optimizer
        self._live = live
        self._global_step = global_step
        self.name = type(optimizer).__name__
        self.use_ema = bool(getattr(optimizer, "use_ema", False))
        # Its variables exist once the model_fn ran (what Keras callbacks
        # that restore an optimizer, BackupAndRestore, check first).
        self.built = True

    def build(self, variables: Any) -> None:
        """Nothing to build: the model_fn's optimizer made its variables."""

    def _rate(self) -> Any:
        return optimizer_state.learning_rate(self._optimizer)

    def _live_variable(self, value: Any) -> tf.Variable | None:
        variable = as_tf_variable(value)
        if variable is None:
            return None
        live = self._live(variable.name.split(":")[0])
        return live if live is not None else variable

    def rate_problem(self) -> str | None:
        """Why `learning_rate` cannot be set, or None when it can."""
        rate = self._rate()
        if self._live_variable(rate) is not None:
            return None
        if isinstance(rate, (int, float)):
            return (
                f"The model_fn's {self.name} was created with learning_rate="
                f"{rate!r}, a Python number fixed in the traced training step, "
                "so a callback cannot change it. Create the rate as a variable "
                "in model_fn and pass that to the optimizer, e.g. "
                "rate = tf.compat.v1.get_variable('learning_rate', "
                f"initializer={float(rate)!r}, trainable=False)."
            )
        return (
            f"The model_fn's {self.name} computes its learning rate "
            f"({rate!r}) in the traced step (a schedule or a tensor), so a "
            "callback cannot set it. Pass the optimizer a variable instead, "
            "or leave the schedule to the optimizer."
        )

    def own_variables(self) -> list[tf.Variable]:
        """The store's variables this optimizer made or reads its rate from.

        A v1 optimizer's slots and other variables (`beta1_power`), a Keras
        optimizer's `variables`, and the learning-rate variable.
        """
        made = optimizer_state.v1_state_variables(self._optimizer)
        if isinstance(self._optimizer, keras.optimizers.Optimizer):
            made = list(self._optimizer.variables)
        made.append(self._rate())
        live = (self._live_variable(v) for v in made)
        return [v for v in live if v is not None]

    def current_rate(self) -> float | None:
        """The learning rate the next step uses, as a number; None if the step computes it.

        A variable or a Python number is read; a Keras schedule is evaluated
        at the optimizer's `iterations`, as a Keras optimizer's
        `learning_rate` does. A rate computed in the traced step (a tensor,
        a v1 decay) has no value outside it.
        """
        rate = self._rate()
        variable = self._live_variable(rate)
        if variable is not None:
            return float(variable.numpy())
        if isinstance(rate, (int, float)):
            return float(rate)
        if isinstance(rate, keras.optimizers.schedules.LearningRateSchedule):
            return float(keras.ops.convert_to_numpy(rate(self.iterations)))
        return None

    @property
    def learning_rate(self) -> Any:
        rate = self._rate()
        variable = self._live_variable(rate)
        if variable is not None:
            return variable
        if isinstance(rate, (int, float)):
            return float(rate)
        raise AttributeError(self.rate_problem())

    @learning_rate.setter
    def learning_rate(self, value: Any) -> None:
        variable = self._live_variable(self._rate())
        if variable is None:
            raise ValueError(self.rate_problem())
        variable.assign(tf.cast(value, variable.dtype))

    @property
    def iterations(self) -> tf.Variable:
        own = self._live_variable(optimizer_state.step_counter(self._optimizer))
        return own if own is not None else self._global_step
