"""`tf.compat.v1.keras.utils.DeterministicRandomTestTool`, which Keras 3 dropped.

TensorFlow's migration guides (validate_correctness, migration_debugging)
run a TF1 model_fn in a graph and session under this tool, so that its
random initial weights do not depend on how many other ops the graph holds.
Under `install()` the name is this class wherever Keras has none of its own.

What it does, as tf.keras 2.15 did: `scope()` sets the global seed to
`seed` at once, and returns a context manager inside which TensorFlow's
`random_seed.get_seed` (the function every stateful random op asks for its
seeds) ignores the op's own seed and answers `(seed, operation_seed)`:

* mode ``"constant"``: the same operation seed for every op (0 unless set),
  each call also setting the global seed to it;
* mode ``"num_random_ops"``: the count of random ops seen so far, so no two
  ops share one; reusing a seen seed (after setting `operation_seed` back)
  is a ValueError.

TensorFlow's `get_seed` is replaced through `tf_internals.graph_seeds`.
"""

from __future__ import annotations

import contextlib
from typing import Any

import tensorflow as tf

from keras_estimator._src.tf_internals import graph_seeds

_MODES = ("constant", "num_random_ops")


class DeterministicRandomTestTool:
    """Makes stateful random ops draw the same numbers in TF1 graphs and eagerly.

    Args:
        seed: the global seed every random op gets.
        mode: ``"constant"`` (every op gets operation seed
            `operation_seed`) or ``"num_random_ops"`` (each op the number of
            random ops seen before it in the scope).
    """

    def __init__(self, seed: int = 42, mode: str = "constant") -> None:
        if mode not in _MODES:
            raise ValueError(
                f"Mode arg must be 'constant' or 'num_random_ops'. Got: {mode!r}. "
                "Pass one of the two."
            )
        self._seed = seed
        self._mode = mode
        self.operation_seed = 0
        self._seen: set[int] = set()

    @property
    def operation_seed(self) -> int:
        """The operation seed the next random op gets."""
        return self._operation_seed

    @operation_seed.setter
    def operation_seed(self, value: int) -> None:
        self._operation_seed = value

    def scope(self) -> contextlib.AbstractContextManager[None]:
        """Sets the global seed now; inside the returned context, ops get seeds as above."""
        tf.random.set_seed(self._seed)
        return graph_seeds.seeds_from(self._get_seed)

    def _get_seed(self, _op_seed: Any = None) -> tuple[int, int]:
        operation_seed = self._operation_seed
        if self._mode == "constant":
            tf.random.set_seed(operation_seed)
        else:
            if operation_seed in self._seen:
                raise ValueError(
                    "This `DeterministicRandomTestTool` object is trying to re-use the "
                    f"already-used operation seed {operation_seed}: random numbers would "
                    "then repeat between ops. Set `operation_seed` to a value no op of "
                    "this scope has used, or leave it to count."
                )
            self._seen.add(operation_seed)
            self._operation_seed += 1
        return self._seed, operation_seed
