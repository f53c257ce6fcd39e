"""A Scaffold's `init_op` and `init_fn`: run once on a fresh start, as 2.15 ran them.

tf.estimator 2.15 called `init_fn(scaffold, session)` when a call found no
checkpoint in model_dir, after the variables' initializers (and a warm
start) ran. Programs use it to start fine-tuning from a pretrained
checkpoint: `saver.restore(session, path)` with a
`tf.compat.v1.train.Saver(var_list)` made in the model_fn, directly or
through tf-slim's `assign_from_checkpoint_fn`. Here it is called at the
same point, eagerly: such a Saver built no ops in the model_fn
(`tf_internals/v1_savers.py`), and its `restore` assigns the Estimator's
variables themselves. The session it gets runs what has already run
eagerly and explains the rest.

An `init_op` that does more than initialize (assigns values of its own)
ran just before, in the same case: here the part of the model_fn's graph it
needs is copied out and run once, on the variables themselves.
"""

from __future__ import annotations

from typing import Any

import tensorflow as tf

from keras_estimator._src.tf_internals import ordered_traces, pruning


class InitFnSession:
    """The `session` a Scaffold's `init_fn` gets.

    `run(fetches, feed_dict)` runs what a TF1 session ran: operations and
    tensors the model_fn built (a `variable.assign(value)`, fed
    placeholders among its inputs) run once, on the Estimator's variables,
    copied out of the model_fn's graph with what they need; variables and
    eager tensors give their values (ops an init_fn builds itself have run
    already). A fetch that needs the features or labels cannot run: no
    batch has been read before the first step.
    """

    graph = None

    def run(
        self,
        fetches: Any,
        feed_dict: Any = None,
        options: Any = None,
        run_metadata: Any = None,
    ) -> Any:
        del options, run_metadata
        flat = tf.nest.flatten(fetches)
        in_graph = {i: part for i, f in enumerate(flat) if (part := _graph_part(f)) is not None}
        if feed_dict and not in_graph:
            raise ValueError(
                f"Scaffold init_fn ran session.run(..., feed_dict={feed_dict!r}) "
                f"for {fetches!r}, which holds nothing of the model_fn's graph to "
                "feed. Assign the value directly in init_fn (variable.assign(value)), "
                "or give it as the variable's initializer in the model_fn."
            )
        ran = _run_in_graph(fetches, list(in_graph.values()), dict(feed_dict or {}))
        results = []
        for index, fetch in enumerate(flat):
            if index not in in_graph or isinstance(fetch, tf.Variable):
                # A variable (an assignment's result too, once it ran): its value now.
                results.append(_value(fetch))
            else:
                value = ran[list(in_graph).index(index)]
                results.append(None if value is None else value.numpy())
        return tf.nest.pack_sequence_as(fetches, results)

    def __getattr__(self, name: str) -> Any:
        raise AttributeError(
            f"Scaffold init_fn's session has no `{name}`: in TF2 there is no "
            "tf.compat.v1.Session. init_fn may restore a tf.compat.v1.train.Saver "
            "made in the model_fn (saver.restore(session, path)) or assign "
            "variables directly."
        )


def _graph_part(fetch: Any) -> Any:
    """What of `fetch` a graph runs: an operation or tensor of one; else None.

    An assignment's result (`variable.assign(value)` in the model_fn) is a
    variable whose `op` is the assignment, in the model_fn's graph; a
    variable itself has no `op` when executing eagerly.
    """
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


def _value(fetch: Any) -> Any:
    if fetch is None:
        return None
    if isinstance(fetch, tf.Variable) and tf.executing_eagerly():
        return fetch.numpy()
    if isinstance(fetch, tf.Tensor) and hasattr(fetch, "numpy"):
        try:
            return fetch.numpy()
        except (AttributeError, NotImplementedError, ValueError):
            pass
    raise ValueError(
        f"Scaffold init_fn ran session.run({fetch!r}), which is neither a value nor "
        "an operation of the model_fn's graph. Restore pretrained values with a "
        "tf.compat.v1.train.Saver made in the model_fn (saver.restore(session, path)), "
        "tf.compat.v1.train.init_from_checkpoint, or Estimator(warm_start_from=...)."
    )


def _run_in_graph(fetches: Any, parts: list[Any], feed_dict: dict[Any, Any]) -> list[Any]:
    """Runs `parts` (of one graph) once, fed `feed_dict`; their values (None: ops)."""
    if not parts:
        return []
    graph = parts[0].graph
    if any(part.graph is not graph for part in parts):
        raise ValueError(
            f"Scaffold init_fn ran session.run({fetches!r}), whose operations come "
            "from different graphs: run them in separate session.run calls."
        )
    feeds = []
    for key in feed_dict:
        try:
            # A placeholder's `ref()`: the model_fn's tensors do not hash.
            feeds.append(graph.as_graph_element(key.deref() if hasattr(key, "deref") else key))
        except (TypeError, ValueError, KeyError) as error:
            raise ValueError(
                f"Scaffold init_fn's session.run feeds {key!r}, which is not a "
                f"tensor of the model_fn's graph ({error}). Feed the placeholders "
                "the model_fn made."
            ) from error
    try:
        run = ordered_traces.fetches_alone(graph, parts, feeds, data_only=True)
    except pruning.PRUNE_ERRORS as error:
        raise ValueError(
            f"Scaffold init_fn ran session.run({fetches!r}), which cannot run "
            f"before the first step: {error}. A TF1 Session ran it before any "
            "batch was read, so it may not depend on the features or labels; "
            "feed the placeholders it reads in feed_dict."
        ) from error
    values = [
        tf.convert_to_tensor(value, dtype=feed.dtype)
        for feed, value in zip(feeds, feed_dict.values(), strict=True)
    ]
    return list(run(*values))


def run_init_fn(scaffold: Any) -> None:
    """Calls the init_fn given to `scaffold`, as 2.15 did on a fresh start.

    A Scaffold keeps `init_fn` bound to itself: it is called with the
    session alone and passes `(scaffold, session)` on.

    Raises:
        ValueError: init_fn made a dict keyed by a tensor of the model_fn
            (`feed_dict={placeholder: value}`), which TF2 refuses to hash.
    """
    try:
        scaffold.init_fn(InitFnSession())
    except TypeError as error:
        if "unhashable" not in str(error):
            raise
        raise ValueError(
            "Scaffold init_fn used a tensor of the model_fn as a dict key (as in "
            "session.run(op, feed_dict={placeholder: value})): the model_fn's "
            "graph is a TF2 function's, whose tensors do not hash "
            f"(TensorFlow: {error}). Key the feed by the tensor's ref() or name: "
            "feed_dict={placeholder.ref(): value} or {placeholder.name: value}."
        ) from error


def run_init_op(op: Any) -> None:
    """Runs a Scaffold's `init_op` once, as 2.15's session creation did.

    Raises:
        ValueError: the op needs the batch (the model_fn's features or
            labels), which no step has given yet.
    """
    try:
        run = ordered_traces.op_alone(op)
    except pruning.PRUNE_ERRORS as error:
        raise ValueError(
            f"EstimatorSpec(scaffold=...) sets init_op={op!r}, which cannot run "
            f"before the first step: {error}. A TF1 Session ran it once, before any "
            "batch was read, so it may not depend on the features or labels. Build "
            "it from variables and constants only, or assign the values in a "
            "Scaffold(init_fn=lambda scaffold, session: ...)."
        ) from error
    run()
