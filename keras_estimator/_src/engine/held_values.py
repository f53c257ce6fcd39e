"""The variable values an open `predict()` generator predicts with.

tf.estimator 2.15 ran each `predict()` generator in a session of its own,
restored once when the generator started: a `train()` call made while the
generator was open did not move its later predictions, nor did an
`evaluate()` or another `predict()` of another checkpoint. Here every call
shares the Estimator's variables. So a call about to change their values
(training, restoring another checkpoint) first has each open generator keep
a copy of the values it predicts with (`HeldValues.keep`); from then on the
generator's batches run with that copy in the variables, and the values of
the moment are put back after each batch (`HeldValues.in_place`). Until a
call changes them, a generator costs nothing.
"""

from __future__ import annotations

import contextlib
import logging
import weakref
from collections.abc import Iterator, Sequence
from typing import Any

import tensorflow as tf

logger = logging.getLogger("keras_estimator")


class HeldValues:
    """The values of `variables` as one predict() generator found them.

    Args:
        variables: the variables its predicting function reads.
    """

    def __init__(self, variables: Sequence[tf.Variable]) -> None:
        self._variables = list(variables)
        self._kept: list[tf.Tensor] | None = None

    def keep(self) -> None:
        """Copies the values now in the variables, unless a copy is kept already.

        A variable whose value cannot be read and put back from here (a
        strategy's variable that refuses assignments across replicas) leaves
        the generator on the variables' values of the moment, with a warning:
        the call changing them goes on.
        """
        if self._kept is not None:
            return
        try:
            for variable in self._variables:
                _check_assignable(variable)
            kept = _values(self._variables)
        except (tf.errors.OpError, ValueError, TypeError, NotImplementedError) as error:
            logger.warning(
                "An open predict() generator cannot keep the values it started "
                "with (%s); its next predictions use the variables' new values.",
                error,
            )
            self._variables = []
            kept = []
        self._kept = kept

    @contextlib.contextmanager
    def in_place(self) -> Iterator[None]:
        """Runs the enclosed batch with the kept values in the variables.

        The batch runs holding the Estimator (`call_lock`): no other
        thread's call runs on the variables meanwhile.
        """
        kept = self._kept
        if not kept:  # none kept, or none could be
            yield
            return
        now = _values(self._variables)
        _assign(self._variables, kept)
        try:
            yield
        finally:
            _assign(self._variables, now)


class OpenPredictions:
    """The HeldValues of an Estimator's predict() generators still open."""

    def __init__(self) -> None:
        self._open: weakref.WeakSet[HeldValues] = weakref.WeakSet()

    def open(self, variables: Sequence[tf.Variable]) -> HeldValues:
        held = HeldValues(variables)
        self._open.add(held)
        return held

    def close(self, held: HeldValues) -> None:
        self._open.discard(held)

    def before_change(self) -> None:
        """Called before the variables' values change: each open generator keeps its own.

        Training calls it once as it starts. A generator's batch in the same
        thread (a hook's) still runs with its values put in place between
        two steps; one in another thread waits for the call to end
        (`call_lock`).
        """
        for held in list(self._open):
            held.keep()


def _check_assignable(variable: Any) -> None:
    """Raises ValueError where a strategy's variable refuses assignments across replicas."""
    aggregation = getattr(variable, "aggregation", None)
    if (
        isinstance(variable, tf.distribute.DistributedValues)
        and getattr(variable, "synchronization", None) == tf.VariableSynchronization.ON_READ
        and aggregation == tf.VariableAggregation.SUM
    ):
        raise ValueError(f"{variable.name} sums its replicas' values when read")


def _values(variables: Sequence[Any]) -> list[tf.Tensor]:
    # A read is a tensor of its own: updates made after it copy the
    # variable's buffer rather than write into one a read still holds.
    return [variable.read_value() for variable in variables]


def _assign(variables: Sequence[Any], values: Sequence[tf.Tensor]) -> None:
    for variable, value in zip(variables, values, strict=True):
        variable.assign(value)
