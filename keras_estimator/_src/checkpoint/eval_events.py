"""Scalar metrics read back from summary event files, by global step.

Early-stopping hooks read an evaluation directory's metrics, and
`BestExporter` reads them to recover the best model after a restart. Both
read TF1 summaries (`value.simple_value`) and TF2 ones (scalar tensors, as
`tf.summary.scalar` writes them); non-scalar and non-numeric tensors
(histograms, text) are left out.
"""

from __future__ import annotations

import collections
import logging
import os
from collections.abc import Iterator
from typing import Any

import numpy as np
import tensorflow as tf

logger = logging.getLogger("keras_estimator")

EVENT_FILE_PATTERN = "events.out.tfevents.*"


def read_scalars(event_file_glob: str) -> collections.OrderedDict[int, dict[str, float]]:
    """The scalar metrics in the event files matching a glob, by global step.

    Metrics of one step written in several events (TF2 writes one event per
    metric) are merged; when the same metric appears more than once for one
    step, the latest event (by wall time, then by file and position) wins. A
    file that ends in a corrupt record (still being written) gives what was
    read before it.

    Returns:
        An OrderedDict of global step -> {metric name: value}, by step.
    """
    events = []
    for order, event in enumerate(_events(event_file_glob)):
        metrics = scalar_values(event)
        if metrics:
            events.append((event.wall_time, order, int(event.step), metrics))
    by_step: dict[int, dict[str, float]] = collections.defaultdict(dict)
    for _, _, step, metrics in sorted(events, key=lambda e: (e[0], e[1])):
        by_step[step].update(metrics)
    return collections.OrderedDict(sorted(by_step.items()))


def read_directory(directory: str) -> collections.OrderedDict[int, dict[str, float]]:
    """`read_scalars` of every event file in `directory` (none if it is missing)."""
    if not tf.io.gfile.exists(directory):
        return collections.OrderedDict()
    return read_scalars(os.path.join(directory, EVENT_FILE_PATTERN))


def scalar_values(event: Any) -> dict[str, float]:
    """The numeric scalars of one Event proto, by tag."""
    if not event.HasField("summary"):
        return {}
    metrics = {}
    for value in event.summary.value:
        if value.HasField("simple_value"):
            metrics[value.tag] = float(value.simple_value)
        elif value.HasField("tensor"):
            try:
                array = tf.make_ndarray(value.tensor)
            except (TypeError, ValueError):
                continue
            if array.ndim == 0 and (
                np.issubdtype(array.dtype, np.number) or array.dtype == np.bool_
            ):
                metrics[value.tag] = float(array)
    return metrics


def _events(event_file_glob: str) -> Iterator[Any]:
    for path in sorted(tf.io.gfile.glob(event_file_glob)):
        try:
            yield from tf.compat.v1.train.summary_iterator(path)
        except tf.errors.DataLossError as error:
            # A file being written (or truncated): keep what was read.
            logger.warning(
                "Skipping the rest of event file %s, which ends in a corrupt "
                "record: %s",
                path,
                error,
            )
