"""A graph's count of the random operations it seeded from its graph seed.

Checked on TensorFlow 2.21 (and the same in 2.15). With a graph seed set and
no operation seed given, `tf.compat.v1.get_seed` gives a random operation
the pair (graph seed, n), n counting such operations in that graph from 0,
and counts one more. tf.estimator 2.15 built a model_fn's initializers in
its graph, so the n-th unseeded random initializer got n: reading and
setting the count lets the variable store give an initializer, computed in
a graph of its own, the pair it would have had in the model_fn's graph.

The same holds for what an input_fn builds: tf.estimator 2.15 called it in a
fresh graph seeded with `RunConfig.tf_random_seed`, so `shuffle(seed=2)` got
(seed, 2) and the n-th unseeded random op of the input_fn got (seed, n).
Eagerly, `get_seed` takes the global seed and asks the eager context for an
operation seed; `input_fn_seeds` makes those 2.15's for the input_fn's call
and puts the context's own back after it.

Private symbols touched: `random_seed._graph_to_seed_dict`, the per-graph
count `get_seed` reads and advances (a weak dict keyed by graph), and the
eager context's `_seed` and `_rng` (the global seed, and the generator its
`_internal_operation_seed` draws from, which a context never seeded lacks).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

TOUCHES = (
    "tensorflow.python.framework.random_seed:_graph_to_seed_dict",
    "tensorflow.python.eager.context:Context()._seed",
    "tensorflow.python.eager.context:Context._internal_operation_seed",
)


def _counts() -> Any:
    from tensorflow.python.framework import random_seed

    return random_seed._graph_to_seed_dict


def op_seed_count(graph: Any) -> int:
    """How many random operations of `graph` took their seed from its count."""
    return int(_counts().get(graph, 0))


def set_op_seed_count(graph: Any, count: int) -> None:
    """Makes the next unseeded random operation of `graph` get `(seed, count)`."""
    _counts()[graph] = count


class _Counting:
    """Hands out 0, 1, 2, ... where the eager context draws an operation seed."""

    def __init__(self) -> None:
        self._next = 0

    def randint(self, low: int, high: int) -> int:
        del low, high
        value, self._next = self._next, self._next + 1
        return value


@contextlib.contextmanager
def input_fn_seeds(seed: int | None) -> Iterator[None]:
    """Random ops made inside get the seeds a 2.15 graph seeded `seed` gave.

    With `seed` None nothing changes (an unseeded 2.15 graph drew fresh
    seeds, as the eager context does).
    """
    if seed is None:
        yield
        return
    from tensorflow.python.eager import context

    ctx = context.context()
    saved_seed, saved_rng = ctx._seed, getattr(ctx, "_rng", None)
    # Set directly: `set_global_seed` also clears the eager kernel cache,
    # which made every later eager op rebuild its kernel (a one-example
    # predict() took 19 ms instead of 7). The input_fn's dataset ops take
    # their seeds as inputs, so no cached kernel holds a stale seed.
    ctx._seed = int(seed)
    ctx._rng = _Counting()
    try:
        yield
    finally:
        ctx._seed = saved_seed
        if saved_rng is None:
            del ctx._rng
        else:
            ctx._rng = saved_rng
