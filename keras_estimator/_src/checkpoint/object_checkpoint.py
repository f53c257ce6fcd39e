"""Object-based checkpoints: `Scaffold(saver=tf.train.Checkpoint(...))`.

TensorFlow's guide for Keras layers and optimizers in a model_fn hands a
`tf.train.Checkpoint` to the Estimator as its Scaffold's saver. The
checkpoints in model_dir are then object-based (keys such as
`net/l1/kernel/.ATTRIBUTES/VARIABLE_VALUE` beside the object graph), and
`tf.train.Checkpoint.restore` reads them back outside the Estimator.

Writing: every `model.ckpt-<step>` of training goes through the Checkpoint
the TRAIN-mode model_fn returned (its own `write`, inside the crash-consistent
sequence of `checkpoints.save`). Reading goes through the Checkpoint the
model_fn gave in the reading mode, by each variable's path of attribute
names from it, as 2.15's Scaffold saver read (so a checkpoint a program wrote
with its own `tf.train.Checkpoint` of the same objects reads too); variables
no path reaches, and every variable of a mode without a Checkpoint (and of
warm starts), are read by the names the object graph records for them (as
TF1's Saver read such checkpoints). A checkpoint written by name reads as
before.

As under tf.estimator, a checkpoint holds what the Checkpoint tracks and no
more. Variables of the model_fn it misses are named in a warning, once per
Checkpoint, and keep their values on restore. A Checkpoint that does not
track the global step gets it back from the checkpoint's name
(`model.ckpt-<step>`), so training never starts over at step 0.
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import Collection, Mapping
from typing import Any

import keras
import tensorflow as tf

from keras_estimator._src.base import package_logger
from keras_estimator._src.engine.variable_store import CheckpointVariables
from keras_estimator._src.tf_internals import object_graph

logger = logging.getLogger("keras_estimator")

OBJECT_GRAPH_KEY = object_graph.OBJECT_GRAPH_KEY
# The attribute under which an object graph node stores a variable's value.
_VARIABLE_VALUE = "VARIABLE_VALUE"
_warned: weakref.WeakSet[Any] = weakref.WeakSet()


def write(variables: CheckpointVariables, prefix: str) -> None:
    """Writes `variables.checkpoint` at `prefix` (`.index` and `.data-*`)."""
    _warn_untracked(variables)
    with package_logger.root_logger_left_unconfigured():
        variables.checkpoint.write(prefix)


def stored_names(reader: Any, keys: Mapping[str, Any]) -> dict[str, str]:
    """Variable name -> key for every value in a checkpoint.

    Args:
        reader: a `tf.train.load_checkpoint` reader.
        keys: the checkpoint's keys (its variable-to-shape map).

    Returns:
        Each key under its own name; for an object-based checkpoint, also each
        variable's name at save time.
    """
    names = {key: key for key in keys}
    if OBJECT_GRAPH_KEY in keys:
        graph = object_graph.object_graph_names(reader.get_tensor(OBJECT_GRAPH_KEY))
        for name, key in graph.items():
            if key in keys:
                names.setdefault(name, key)
    names.pop(OBJECT_GRAPH_KEY, None)
    return names


def keys_by_object_path(
    reader: Any, keys: Mapping[str, Any], checkpoint: Any, names: Collection[str]
) -> dict[str, str]:
    """Variable name -> key, matching `checkpoint`'s objects to the stored ones.

    As tf.estimator 2.15 read an object-based checkpoint with the mode's
    Scaffold's `tf.train.Checkpoint` (a Saver of its objects' values), a
    variable is found by its path of attribute names from the Checkpoint
    (`model/dense/kernel`), whatever it was called when saved: a checkpoint
    a program wrote with its own `tf.train.Checkpoint` of the same objects
    reads as one the Estimator wrote.

    Args:
        reader: a `tf.train.load_checkpoint` reader.
        keys: the checkpoint's keys; without the object graph, none match.
        checkpoint: the model_fn's `tf.train.Checkpoint` (its variables carry
            the store's names).
        names: the variable names to look for.

    Returns:
        The name and key of each of `names` found on a stored path.
    """
    if OBJECT_GRAPH_KEY not in keys:
        return {}
    nodes = object_graph.object_graph_nodes(reader.get_tensor(OBJECT_GRAPH_KEY))
    found: dict[str, str] = {}
    pending = [(0, checkpoint)]
    visited: set[int] = set()
    while pending:
        node_id, obj = pending.pop()
        if node_id in visited or node_id >= len(nodes):
            continue
        visited.add(node_id)
        node = nodes[node_id]
        key = node.attributes.get(_VARIABLE_VALUE)
        if key is not None and key in keys:
            name = _variable_name(obj)
            if name is not None and name in names:
                found.setdefault(name, key)
        if not node.children:
            continue
        children = tf.train.TrackableView.children(obj)
        for local_name, child_id in node.children.items():
            child = children.get(local_name)
            if child is not None:
                pending.append((child_id, child))
    return found


def _variable_name(obj: Any) -> str | None:
    variable = obj.value if isinstance(obj, keras.Variable) else obj
    if not isinstance(variable, tf.Variable):
        return None
    name = variable.name
    return name[:-2] if name.endswith(":0") else name


def is_object_based(keys: Mapping[str, Any]) -> bool:
    return OBJECT_GRAPH_KEY in keys


def _warn_untracked(variables: CheckpointVariables) -> None:
    checkpoint = variables.checkpoint
    if checkpoint in _warned:
        return
    _warned.add(checkpoint)
    tracked = set()
    for obj in tf.train.TrackableView(checkpoint).descendants():
        tracked.add(id(obj))
        if isinstance(obj, keras.Variable):
            tracked.add(id(obj.value))
    # The global step is also kept in the checkpoint's name.
    untracked = sorted(
        name
        for name, v in variables.items()
        if id(v) not in tracked and name != "global_step"
    )
    if untracked:
        logger.warning(
            "The Scaffold's tf.train.Checkpoint does not track the variables %s "
            "that model_fn creates: checkpoints in model_dir do not hold them, and "
            "they keep their initial values when training resumes. Add the "
            "objects that own them to the Checkpoint.",
            untracked,
        )
