"""The training summaries tf.estimator 2.15's heads and canned models added to their graph.

Each is a TF1 `Summary` proto in the graph's `GraphKeys.SUMMARIES`
collection, which the engine writes (with the loss) to model_dir at the
steps a summary is due, as 2.15's summary hook did; in other steps nothing
reads them and the traced step leaves them out. Tags are given whole, so the
name scope a model_fn is traced under does not change them:
- a network layer (`dnn/hiddenlayer_<i>`, `dnn/logits`, and the linear
  logits of a wide-and-deep model, `linear`): `<tag>/fraction_of_zero_values`
  and `<tag>/activation` (a histogram);
- a linear model: `bias` (a scalar for one logit, a histogram for several)
  and `fraction_of_zero_weights`, over its weights without the bias.
The `tf.compat.v1.estimator` classes put these under one more scope
(`dnn/dnn/...`, `linear/bias`, `linear/linear/...`), as 2.15's v1 classes did,
and add `average_loss` for a summed loss. A head adds `loss/<name>` when
named (each of a MultiHead's heads too) and `regularization_loss[/<name>]`
when given regularization losses. An unnamed head (and a MultiHead) writes
`loss` itself, as 2.15's did, so the Estimator adds none: under a
MirroredStrategy that is the first replica's loss, not the replicas'
losses reduced; the Estimator writes `loss` beside a named head's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import tensorflow as tf

# The tags this module put in a graph's SUMMARIES collection.
_TAGS_COLLECTION = "keras_estimator_canned_summary_tags"


def _first(tag: str) -> bool:
    """Whether `tag` is new in the graph being built, which then holds it.

    Under MirroredStrategy every replica builds the model into one graph;
    the first replica's summaries are kept (one value per tag, as a merged
    `Summary` must have).
    """
    if tf.executing_eagerly():
        # Nothing collects eager summaries (2.15's were no-ops there too).
        return False
    graph = tf.compat.v1.get_default_graph()
    if tag in graph.get_collection(_TAGS_COLLECTION):
        return False
    graph.add_to_collection(_TAGS_COLLECTION, tag)
    return True


def _collect(summary: tf.Tensor) -> None:
    tf.compat.v1.add_to_collection(tf.compat.v1.GraphKeys.SUMMARIES, summary)


def scalar(tag: str, value: Any) -> None:
    """A scalar summary (a TF1 `simple_value`) tagged `tag`."""
    if _first(tag):
        value = tf.cast(tf.reshape(value, []), tf.float32)
        _collect(tf.raw_ops.ScalarSummary(tags=tag, values=value))


def loss(value: Any) -> None:
    """The training loss, tagged `loss`, as 2.15's unnamed heads summarized it.

    Made as the TF1 summary op `loss` that the Estimator looks for before
    adding its own (`engine.summaries.collect_loss`); TF1's summary
    functions leave it out on replicas other than the first, as in 2.15.
    """
    if tf.executing_eagerly():
        return
    with tf.compat.v1.name_scope(""):
        tf.compat.v1.summary.scalar("loss", value)


def histogram(tag: str, values: Any) -> None:
    """A histogram summary of `values` tagged `tag`."""
    if _first(tag):
        _collect(tf.raw_ops.HistogramSummary(tag=tag, values=values))


def layer(tag: str, value: Any) -> None:
    """The share of zeros in a layer's output and its histogram."""
    scalar(f"{tag}/fraction_of_zero_values", tf.math.zero_fraction(value))
    histogram(f"{tag}/activation", value)


def linear_model(prefix: str, bias: Any, weights: Sequence[Any]) -> None:
    """A linear model's bias and the share of zeros among its other weights."""
    if bias.shape[-1] == 1:
        scalar(f"{prefix}bias", tf.reshape(bias, [-1])[0])
    else:
        histogram(f"{prefix}bias", bias)
    if not weights:
        return
    flat = [tf.reshape(tf.cast(weight, tf.float32), [-1]) for weight in weights]
    total = tf.add_n([tf.cast(tf.size(part), tf.float32) for part in flat])
    zeros = tf.add_n(
        [tf.reduce_sum(tf.cast(tf.equal(part, 0.0), tf.float32)) for part in flat]
    )
    scalar(f"{prefix}fraction_of_zero_weights", tf.math.divide_no_nan(zeros, total))
