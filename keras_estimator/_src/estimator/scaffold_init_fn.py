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

from keras_estimator._src.engine import run_alone
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
        try:
            return run_alone.run_alone(fetches, feed_dict, _value)
        except run_alone.NeedsTheBatch as error:
            raise ValueError(
                f"Scaffold init_fn ran session.run({fetches!r}), which cannot run "
                f"before the first step: {error.__cause__}. A TF1 Session ran it "
                "before any batch was read, so it may not depend on the features or "
                "labels; feed the placeholders it reads in feed_dict."
            ) from error
        except ValueError as error:
            raise ValueError(
                f"Scaffold init_fn: {error} Assign a value directly in init_fn "
                "(variable.assign(value)), or give it as the variable's initializer "
                "in the model_fn."
            ) from error

    def __getattr__(self, name: str) -> Any:
        raise AttributeError(
            f"Scaffold init_fn's session has no `{name}`: in TF2 there is no "
            "tf.compat.v1.Session. init_fn may restore a tf.compat.v1.train.Saver "
            "made in the model_fn (saver.restore(session, path)) or assign "
            "variables directly."
        )


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
