"""The name scope a head builds its train op in, which names the optimizer's variables.

tf.estimator 2.15's heads built the train op in a top-level `training` name
scope (as Keras did), and its tf.keras 2 optimizers named their variables
after the scope they were made in: `training/Adagrad/...`. A `MultiHead` of
N heads first let each head's `create_estimator_spec` take a `training`
scope of its own, so the graph uniquified the merged train op's to
`training_<N>`, and its optimizer's variables were `training_2/Adagrad/...`
for two heads. The canned optimizers read the scope here (`current`), which
the heads set around the train op they build (`building_train_op`).

The scope is held per thread: a strategy's replicas call the model_fn in
threads of their own, each building its train op in it.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

DEFAULT = "training"

_state = threading.local()


def current() -> str:
    """The scope of the train op being built (`training` outside any head)."""
    return getattr(_state, "name", DEFAULT)


def multi_head_scope(num_heads: int) -> str:
    """The scope 2.15's graph gave the train op of a MultiHead of `num_heads` heads."""
    return f"{DEFAULT}_{num_heads}"


@contextlib.contextmanager
def building_train_op(name: str = DEFAULT) -> Iterator[None]:
    """Within: optimizers name their variables under `name/`."""
    outer = getattr(_state, "name", None)
    _state.name = name
    try:
        yield
    finally:
        if outer is None:
            del _state.name
        else:
            _state.name = outer
