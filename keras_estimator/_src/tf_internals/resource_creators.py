"""Intercepting the creation of a TensorFlow resource (a lookup table) in a graph.

Checked on TensorFlow 2.21 (and the same in 2.15).

A `tf.lookup.experimental.MutableHashTable` or `DenseHashTable` is a
`CapturableResource`, whose metaclass passes each construction through the
creators the current graph's resource-creator stack holds for its resource
type (`MutableHashTable`, `DenseHashTable`), as variable creators do for
variables. TensorFlow's scope for pushing one, `ops.resource_creator_scope`,
has no public name. `creating(types, creator)` pushes `creator` for the
enclosed graph only: other graphs and eager code create as TensorFlow does.

Private symbols touched: `ops.resource_creator_scope`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from typing import Any

TOUCHES = ("tensorflow.python.framework.ops:resource_creator_scope",)


@contextlib.contextmanager
def creating(
    resource_types: Sequence[str], creator: Callable[..., Any]
) -> Iterator[None]:
    """Within: `creator(next_creator, *args, **kwargs)` makes those resources.

    `next_creator(*args, **kwargs)` makes one as TensorFlow would.
    """
    from tensorflow.python.framework import ops

    with ops.resource_creator_scope(list(resource_types), creator):
        yield
