"""Mutable lookup tables a model_fn makes: one table per name, kept in checkpoints.

A `tf.lookup.experimental.MutableHashTable` or `DenseHashTable` made in a
model_fn was, in tf.estimator 2.15, one table of the session's graph: every
step updated it, and its Saver wrote its contents into each checkpoint as
`<name>-keys` and `<name>-values` and restored them with the variables. A
table made inside a traced step is instead a resource of that function:
another function (a fused run of steps, evaluation, prediction) has its
own, and nothing is saved. So while a model_fn is traced, `TableRegistry`
makes each such table once, eagerly, and hands the same table to every
later trace that asks for it (by its kind, name and order in the model_fn),
as the variable store does for variables. `checkpoint_parts` gives the
tables' contents under 2.15's keys for each save; `restore` reads them back
wherever the variables are restored. A table made with `checkpoint=False`
is shared but not saved, as in 2.15.
"""

from __future__ import annotations

import contextlib
import inspect
import logging
from collections.abc import Callable, Iterator
from typing import Any

import tensorflow as tf

from keras_estimator._src.tf_internals import resource_creators

logger = logging.getLogger("keras_estimator")

_KINDS = {
    "MutableHashTable": tf.lookup.experimental.MutableHashTable,
    "DenseHashTable": tf.lookup.experimental.DenseHashTable,
}


class TablePart:
    """A table's keys (0) or values (1), read for a checkpoint as a variable is."""

    def __init__(self, table: Any, index: int) -> None:
        self._table = table
        self._index = index

    def read_value(self) -> tf.Tensor:
        return self._table.export()[self._index]


class TableRegistry:
    """The mutable lookup tables of an Estimator's model_fn; see the module."""

    def __init__(self) -> None:
        self._tables: dict[tuple[str, str, int], Any] = {}
        self._saved: dict[str, Any] = {}
        self._warned: set[str] = set()

    @contextlib.contextmanager
    def sharing(self) -> Iterator[None]:
        """Within (one model_fn call): such tables come from this registry."""
        made_here: dict[tuple[str, str], int] = {}

        def creator(kind: str) -> Callable[..., Any]:
            signature = inspect.signature(_KINDS[kind].__init__)

            def create(next_creator: Any, *args: Any, **kwargs: Any) -> Any:
                bound = signature.bind(None, *args, **kwargs)
                bound.apply_defaults()
                name = str(bound.arguments["name"])
                order = made_here.get((kind, name), 0)
                made_here[(kind, name)] = order + 1
                key = (kind, name, order)
                table = self._tables.get(key)
                if table is None:
                    with tf.init_scope():
                        table = next_creator(*args, **kwargs)
                    self._tables[key] = table
                    if bound.arguments["checkpoint"]:
                        self._saved[name if order == 0 else f"{name}_{order}"] = table
                return table

            return create

        with contextlib.ExitStack() as stack:
            for kind in _KINDS:
                stack.enter_context(resource_creators.creating([kind], creator(kind)))
            yield

    def checkpoint_parts(self) -> dict[str, TablePart]:
        """2.15's checkpoint keys of the tables, with what each reads."""
        parts: dict[str, TablePart] = {}
        for name, table in sorted(self._saved.items()):
            parts[f"{name}-keys"] = TablePart(table, 0)
            parts[f"{name}-values"] = TablePart(table, 1)
        return parts

    def restore(self, checkpoint_path: str) -> None:
        """Reads every saved table back from the checkpoint, as 2.15's Saver did.

        A checkpoint without a table's keys (saved before the model_fn made
        it, or through a Scaffold's object-based Checkpoint) leaves the
        table as it is, with a warning.
        """
        if not self._saved:
            return
        reader = tf.train.load_checkpoint(checkpoint_path)
        for name, table in sorted(self._saved.items()):
            keys, values = f"{name}-keys", f"{name}-values"
            if reader.has_tensor(keys) and reader.has_tensor(values):
                tf.raw_ops.LookupTableImportV2(
                    table_handle=table.resource_handle,
                    keys=reader.get_tensor(keys),
                    values=reader.get_tensor(values),
                )
            elif name not in self._warned:
                self._warned.add(name)
                logger.warning(
                    "Checkpoint %s holds no %s or %s: the model_fn's lookup table "
                    "%r keeps what it holds (tf.estimator 2.15 failed here with "
                    "'Key %s not found in checkpoint').",
                    checkpoint_path,
                    keys,
                    values,
                    name,
                    keys,
                )
