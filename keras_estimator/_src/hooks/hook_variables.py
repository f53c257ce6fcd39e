"""Variables hooks make in `begin()`, saved and restored with the model's.

tf.estimator 2.15's Saver held every global variable of the call's graph,
so a variable a hook made in `begin()` (`tf.compat.v1.get_variable`,
`tf.Variable`) was written to each checkpoint of that call and restored
from the latest checkpoint when the next call's session started. Here the
hook dispatcher hands such variables to the running loop
(`LoopContext.take_hook_variables`) after every hook's `begin()` and before
`after_create_session()`; this module keeps them for the length of the call:

* they are read from the checkpoint the call started from (the one the
  Estimator restored the model from), under their names; one the
  checkpoint does not hold keeps its value (2.15's restore raised
  NotFoundError there, and nothing ran);
* every checkpoint the call writes (`saveable()`) holds them, beside the
  model's variables; a later call without the hook writes none of them, as
  2.15's graph without it held none.

Local variables (`LOCAL_VARIABLES`, `METRIC_VARIABLES`) are left out, as
2.15's Saver left them out. A name the model's variables (or an earlier
hook variable of the call) already hold is numbered on (`name_1`, ...), as
a TF1 graph named a second variable. A model_fn whose Scaffold's saver is
a `tf.train.Checkpoint` writes what that Checkpoint tracks, hook variables
not included, as in 2.15.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

import tensorflow as tf

from keras_estimator._src.checkpoint import checkpoints as _checkpoint
from keras_estimator._src.engine.variable_store import CheckpointVariables

logger = logging.getLogger("keras_estimator")


class HookVariables:
    """One call's hook-made variables, over the model's saveable variables.

    Args:
        model_saveable: returns the model's checkpoint name -> variable.
        checkpoint_path: the checkpoint the call started from (None: none).
    """

    def __init__(
        self,
        model_saveable: Callable[[], dict[str, tf.Variable]],
        checkpoint_path: str | None,
    ) -> None:
        self._model_saveable = model_saveable
        self._checkpoint_path = checkpoint_path
        self._variables: dict[str, tf.Variable] = {}

    def saveable(self) -> dict[str, tf.Variable]:
        """What a checkpoint of the call holds: the model's variables and the hooks'."""
        variables = self._model_saveable()
        if not self._variables or isinstance(variables, CheckpointVariables):
            return variables
        return {**variables, **self._variables}

    def take(self, variables: Sequence[tf.Variable]) -> None:
        """Keeps the hooks' new variables and reads them from the call's checkpoint."""
        model = self._model_saveable()
        if isinstance(model, CheckpointVariables):
            return
        held = {id(v) for v in [*model.values(), *self._variables.values()]}
        taken: dict[str, tf.Variable] = {}
        for variable in variables:
            if id(variable) in held:
                continue
            held.add(id(variable))
            name = _unique(variable.name.split(":")[0], {**model, **self._variables, **taken})
            taken[name] = variable
        if not taken:
            return
        self._variables.update(taken)
        if self._checkpoint_path is None:
            return
        restored = _checkpoint.restore(taken, self._checkpoint_path, strict=False)
        left = sorted(set(taken) - set(restored))
        if left:
            logger.info(
                "Checkpoint %s holds no value for the hooks' variables %s: they keep "
                "their values.",
                self._checkpoint_path,
                left,
            )


def _unique(name: str, taken: dict[str, Any]) -> str:
    """`name`, or `name_1`, `name_2`, ... as a TF1 graph named repeats."""
    if name not in taken:
        return name
    count = 1
    while f"{name}_{count}" in taken:
        count += 1
    return f"{name}_{count}"
