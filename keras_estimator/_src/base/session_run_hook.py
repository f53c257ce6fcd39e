"""The SessionRunHook protocol: hooks that watch (and may stop) a training loop.

tf.estimator ran hooks around each `Session.run`. Here a "run" is one call of
the loop's compiled function, which covers one step when any hook asks for
values, and possibly many fused steps when none does. Hooks written for
tf.estimator (including subclasses of `tf.compat.v1.train.SessionRunHook`)
work unchanged: the loop only calls the methods below.

Call order for one `train()`: `begin`, `after_create_session`, then for each
run `before_run` / `after_run`, then `end`.
"""

from __future__ import annotations

import collections
from typing import Any


class SessionRunHook:
    """Base class for hooks; every method is a no-op to override."""

    def begin(self) -> None:
        """Called once before the loop starts, after the model is built.

        `tf.compat.v1.train.get_global_step()` returns the global step here.
        """

    def after_create_session(self, session: Any, coord: Any) -> None:
        """Called once after variables are restored, before the first step.

        `session` is a stand-in: TF2 has no session, and touching its
        attributes raises an error that says what to use instead.
        """

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs | None:
        """Called before each run; may return `SessionRunArgs` of values to fetch.

        Fetches are tensors, operations or variables (or their graph names,
        e.g. `"softmax_tensor"`), possibly nested in lists, tuples and dicts.
        """
        return None

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        """Called after each run with the fetched values as numpy values.

        Call `run_context.request_stop()` to end the loop after this run.
        """

    def end(self, session: Any) -> None:
        """Called once when the loop ends (not when it raises)."""


class SessionRunArgs(collections.namedtuple("SessionRunArgs", ["fetches", "feed_dict", "options"])):
    """What a hook wants from the next run: `fetches` (feeds are not supported)."""

    def __new__(cls, fetches: Any, feed_dict: Any = None, options: Any = None) -> SessionRunArgs:
        return super().__new__(cls, fetches, feed_dict, options)


class SessionRunValues(
    collections.namedtuple("SessionRunValues", ["results", "options", "run_metadata"])
):
    """What a run produced for one hook: `results` mirrors its fetches."""


class SessionStandIn:
    """Stands where a `tf.compat.v1.Session` was passed; explains what changed."""

    def __getattr__(self, name: str) -> Any:
        raise RuntimeError(
            f"Hooks get no tf.compat.v1.Session in TF2, so `session.{name}` is not "
            "available. To read a value, return it from before_run as "
            "SessionRunArgs(fetches) and read run_values.results in after_run; "
            "variables can be read directly with `variable.numpy()`."
        )


class SessionRunContext:
    """What a hook sees of the current run.

    Attributes:
        original_args: the loop's own `SessionRunArgs` for this run.
        global_step: the global step before this run (in `before_run`) and
            after it (in `after_run`). An addition to tf.estimator's context.
        run_steps: the steps this run makes at most, as `before_run` sees it:
            1, unless the loop fuses the steps before a hook's fetching step
            into its run and the hook said it can fetch for a run's last
            step (`fetch_at_run_end`). An addition too.
    """

    def __init__(self, original_args: SessionRunArgs, session: Any) -> None:
        # None in the Estimator's loop; a program running hooks on a
        # tf.compat.v1.Session of its own, in a graph, passes that session.
        self._session = session
        self._original_args = original_args
        self._stop_requested = False
        self.global_step = 0
        self.run_steps = 1

    @property
    def original_args(self) -> SessionRunArgs:
        return self._original_args

    @property
    def session(self) -> Any:
        """The session a program gave; in the Estimator's loop none: raises with the alternative."""
        if self._session is not None:
            return self._session
        raise RuntimeError(
            "run_context.session does not exist in TF2: there is no "
            "tf.compat.v1.Session. Fetch values with SessionRunArgs(fetches) "
            "from before_run and read run_values.results in after_run."
        )

    @property
    def stop_requested(self) -> bool:
        return self._stop_requested

    def request_stop(self) -> None:
        """Ends the loop after the current run."""
        self._stop_requested = True
