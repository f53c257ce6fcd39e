"""Prediction dicts whose keys `tf.nest` cannot order (ints beside strs).

A compiled function's outputs pass through `tf.nest`, which sorts a dict's
keys: `{0: p, 'a': q}` fails there with "'<' not supported between instances
of 'str' and 'int'". tf.estimator 2.15 fetched such a dict through a
session and yielded it with the model_fn's keys, in the model_fn's order.
So the predicting step hands on such a dict under positional str keys
(`as_traceable`), and the predict loop puts the model_fn's keys back
(`PredictionKeys.restore`).
"""

from __future__ import annotations

from typing import Any


def _sortable(keys: list[Any]) -> bool:
    try:
        sorted(keys)
    except TypeError:
        return False
    return True


def _position(index: int) -> str:
    # Zero-padded, so the positional keys sort in the model_fn's order too.
    return f"{index:08d}"


class PredictionKeys:
    """The model_fn's prediction keys of the latest predicting trace, if renamed."""

    def __init__(self) -> None:
        self.keys: tuple[Any, ...] | None = None

    def as_traceable(self, predictions: Any) -> Any:
        """`predictions`, with positional str keys if `tf.nest` cannot sort its own."""
        if not isinstance(predictions, dict) or _sortable(list(predictions)):
            self.keys = None
            return predictions
        self.keys = tuple(predictions)
        return {_position(i): value for i, value in enumerate(predictions.values())}

    def restore(self, outputs: Any) -> Any:
        """One batch's outputs of the traced predictions, under the model_fn's keys."""
        if self.keys is None or not isinstance(outputs, dict):
            return outputs
        return {key: outputs[_position(i)] for i, key in enumerate(self.keys)}
