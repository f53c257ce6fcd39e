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
- `optimizer`: the model_fn's optimizer as `optimizer_view` finds it.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import keras
import numpy as np
import tensorflow as tf

from keras_estimator._src.engine.variable_store import GLOBAL_STEP_NAME

_FORMAT = "keras_estimator.model_fn_variables"
_SUFFIX = ".weights.h5"


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
        # Held in a tuple so Keras' attribute tracking leaves them alone.
        self._saveable: tuple[Callable[[], dict[str, tf.Variable]]] = (saveable,)
        self._view_optimizer: tuple[Any] = (optimizer,)
        self.built = True

    @property
    def optimizer(self) -> Any:  # type: ignore[override]
        return self._view_optimizer[0]

    @optimizer.setter
    def optimizer(self, value: Any) -> None:
        if "_view_optimizer" in self.__dict__:
            self._view_optimizer = (value,)

    def _named(self) -> dict[str, tf.Variable]:
        return dict(self._saveable[0]())

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


def _check_path(filepath: Any, method: str) -> str:
    path = os.fspath(filepath)
    if not path.endswith(_SUFFIX):
        raise ValueError(
            f"{method} of a model_fn's callback model takes a path ending in "
            f"{_SUFFIX!r}, as Keras' does. Received: filepath={path!r}."
        )
    return path
