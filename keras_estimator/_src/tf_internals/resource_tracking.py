"""Collecting the resources (lookup tables) a block of code creates.

Checked on TensorFlow 2.21. A lookup table made while a graph is traced (a
vocabulary column's `StaticHashTable`) lives outside the graph, and a
SavedModel can only save it if a saved object tracks it. TensorFlow has no
public way to find the tables a model_fn made; its resource tracker scope,
which tf.keras 2 layers used for the same purpose, lists them.

Private symbols touched: `tensorflow.python.trackable.resource.ResourceTracker`
and `resource_tracker_scope`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

TOUCHES = (
    "tensorflow.python.trackable.resource:ResourceTracker",
    "tensorflow.python.trackable.resource:ResourceTracker().resources",
    "tensorflow.python.trackable.resource:resource_tracker_scope",
)


@contextlib.contextmanager
def tracking_resources() -> Iterator[list[Any]]:
    """Yields a list that holds, on exit, the resources created inside."""
    from tensorflow.python.trackable import resource

    created: list[Any] = []
    tracker = resource.ResourceTracker()
    with resource.resource_tracker_scope(tracker):
        yield created
    created.extend(tracker.resources)
