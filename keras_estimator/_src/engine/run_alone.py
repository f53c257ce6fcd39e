"""A TF1 `session.run(fetches, feed_dict)` of a traced graph's ops, outside any step.

tf.estimator 2.15's sessions ran any part of the model's graph on demand: a
Scaffold's `init_fn` ran an assignment the model_fn built (a pretrained
embedding fed through a placeholder), a hook's `after_create_session` an
assignment its `begin()` built. Here the graph is a trace of the model_fn
that only the steps run; such fetches are copied out of it with what they
read, and run once on the Estimator's variables
(`ordered_traces.fetches_alone`). The trace orders its stateful ops after
one another, which a TF1 graph did not: that ordering is left out, so the
fetches run as a session ran them, alone.
"""

from __future__ import annotations

from typing import Any

import tensorflow as tf

from keras_estimator._src.tf_internals import ordered_traces, pruning


class NeedsTheBatch(ValueError):
    """The fetches read the features or labels, which no batch gives outside a step."""


def graph_part(fetch: Any, graph: Any = None) -> Any:
    """What of `fetch` a graph runs: an operation or tensor of one; else None.

    An assignment's result (`variable.assign(value)` in a trace) is a
    variable whose `op` is the assignment; a variable itself has no `op`
    when executing eagerly. A name is looked up in `graph`, when given.
    """
    if isinstance(fetch, str):
        if graph is None:
            return None
        try:
            return graph.as_graph_element(fetch)
        except (KeyError, ValueError, TypeError):
            return None
    if isinstance(fetch, tf.Operation):
        return fetch
    if isinstance(fetch, tf.Variable):
        try:
            op = fetch.op
        except AttributeError:
            return None
        return op if getattr(op, "graph", None) is not None else None
    if isinstance(fetch, tf.Tensor) and tf.is_symbolic_tensor(fetch):
        return fetch
    return None


def run_alone(fetches: Any, feed_dict: Any, value_of: Any, graph: Any = None) -> Any:
    """`session.run(fetches, feed_dict)` of a trace's ops, once, on the variables.

    Args:
        fetches: a structure of operations, tensors, assignments' results,
            variables, eager values (and names of `graph`'s tensors).
        feed_dict: placeholder (its `ref()` or name) -> value, or None.
        value_of: the value of a fetch that is not of a graph (a variable
            now, an eager tensor), in the caller's terms.
        graph: where names are looked up.

    Returns:
        `fetches`' structure: an operation's None, a tensor's or variable's
        numpy value (a variable's after the assignments ran).

    Raises:
        NeedsTheBatch: the fetches read a placeholder that is not fed (the
            model_fn's features or labels).
        ValueError: feeds with nothing of a graph fetched; fetches of
            several graphs; a feed that is not a tensor of the graph.
    """
    flat = tf.nest.flatten(fetches)
    parts = {i: part for i, f in enumerate(flat) if (part := graph_part(f, graph)) is not None}
    feeds = dict(feed_dict or {})
    if feeds and not parts:
        raise ValueError(
            f"session.run(..., feed_dict={feed_dict!r}) for {fetches!r}, which holds "
            "nothing of the model's graph to feed. Fetch the ops that read the fed "
            "placeholders, or feed data through input_fn (tf.data)."
        )
    ran = dict(zip(parts, _run(fetches, list(parts.values()), feeds), strict=True))
    results = []
    for index, fetch in enumerate(flat):
        if index not in parts or isinstance(fetch, tf.Variable):
            results.append(value_of(fetch))
        else:
            value = ran[index]
            results.append(None if value is None else value.numpy())
    return tf.nest.pack_sequence_as(fetches, results)


def _run(fetches: Any, parts: list[Any], feed_dict: dict[Any, Any]) -> list[Any]:
    if not parts:
        return []
    graph = parts[0].graph
    if any(part.graph is not graph for part in parts):
        raise ValueError(
            f"session.run({fetches!r}) fetches operations of different graphs: run "
            "them in separate session.run calls."
        )
    feeds = []
    for key in feed_dict:
        try:
            # A placeholder's `ref()`: a traced function's tensors do not hash.
            feeds.append(graph.as_graph_element(key.deref() if hasattr(key, "deref") else key))
        except (TypeError, ValueError, KeyError) as error:
            raise ValueError(
                f"session.run feeds {key!r}, which is not a tensor of the model's "
                f"graph ({error}). Feed the placeholders the model_fn or hook made."
            ) from error
    try:
        run = ordered_traces.fetches_alone(graph, parts, feeds, data_only=True)
    except pruning.PRUNE_ERRORS as error:
        raise NeedsTheBatch(
            f"session.run({fetches!r}) cannot run outside a training step: {error}. "
            "A TF1 Session ran it before or after the steps, without a batch, so it "
            "may not read the features or labels; feed the placeholders it reads "
            "in feed_dict."
        ) from error
    values = [
        tf.convert_to_tensor(value, dtype=feed.dtype)
        for feed, value in zip(feeds, feed_dict.values(), strict=True)
    ]
    return list(run(*values))
