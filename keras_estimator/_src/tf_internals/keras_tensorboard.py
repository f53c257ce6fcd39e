"""The summary writer of a Keras `TensorBoard` callback's training run.

Checked on Keras 3.15. `keras.callbacks.TensorBoard` makes the writer of
`log_dir/train` once per `set_model`, in its private `_train_writer`
property, and writes every training summary (epoch scalars, weight
histograms, the model config) through it, into one event file. What a
model_fn Estimator writes for it besides (its graph) goes through the same
writer, so the run keeps one event file, as `fit` leaves it.

Private symbols touched: `TensorBoard._train_writer`.
"""

from __future__ import annotations

from typing import Any

TOUCHES = ("keras.src.callbacks.tensorboard:TensorBoard._train_writer",)


def train_writer(callback: Any) -> Any:
    """The `tf.summary` writer of `callback`'s `train` run (made on first use)."""
    return callback._train_writer
