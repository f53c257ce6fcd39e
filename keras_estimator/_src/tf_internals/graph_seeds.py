"""A graph's count of the random operations it seeded from its graph seed.

Checked on TensorFlow 2.21 (and the same in 2.15). With a graph seed set and
no operation seed given, `tf.compat.v1.get_seed` gives a random operation
the pair (graph seed, n), n counting such operations in that graph from 0,
and counts one more. tf.estimator 2.15 built a model_fn's initializers in
its graph, so the n-th unseeded random initializer got n: reading and
setting the count lets the variable store give an initializer, computed in
a graph of its own, the pair it would have had in the model_fn's graph.

Private symbol touched: `random_seed._graph_to_seed_dict`, the per-graph
count `get_seed` reads and advances (a weak dict keyed by graph).
"""

from __future__ import annotations

from typing import Any

TOUCHES = ("tensorflow.python.framework.random_seed:_graph_to_seed_dict",)


def _counts() -> Any:
    from tensorflow.python.framework import random_seed

    return random_seed._graph_to_seed_dict


def op_seed_count(graph: Any) -> int:
    """How many random operations of `graph` took their seed from its count."""
    return int(_counts().get(graph, 0))


def set_op_seed_count(graph: Any, count: int) -> None:
    """Makes the next unseeded random operation of `graph` get `(seed, count)`."""
    _counts()[graph] = count
