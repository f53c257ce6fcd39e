"""Keras' trainer internals: its lazy state build and its epoch iterator.

Checked on Keras 3.15.

Private symbols touched: `Trainer._symbolic_build`,
`TensorFlowTrainer._maybe_symbolic_build` (replaced on models built
beforehand) and `EpochIterator.reset`.
"""

from __future__ import annotations

from typing import Any

TOUCHES = (
    "keras.src.trainers.trainer:Trainer._symbolic_build",
    "keras.src.backend.tensorflow.trainer:TensorFlowTrainer._maybe_symbolic_build",
    "keras.src.trainers.epoch_iterator:EpochIterator.reset",
)


def build_keras_training_state(model: Any, data_spec: Any) -> None:
    """Creates a compiled Keras model's loss, metric and optimizer variables.

    Checked on Keras 3.15. Keras builds this state lazily, inside the first
    traced train step, through the private `Trainer._symbolic_build`, which
    only needs shapes and dtypes (a `(x, y)` structure of `tf.TensorSpec`s
    serves). The Estimator needs the variables before any trace, so it calls
    the same method up front.
    """
    model._symbolic_build(data_batch=data_spec)


def skip_symbolic_build(model: Any, iterator: Any = None, data_batch: Any = None) -> None:
    """Stands in for Keras' `_maybe_symbolic_build` on models built beforehand.

    Checked on Keras 3.15. At the start of `fit` and `evaluate`, Keras' TF
    trainer calls the private `_maybe_symbolic_build(iterator=epoch_iterator)`,
    which under a strategy draws one batch from a fresh iterator and reduces
    it over the replicas to build missing state. Under
    MultiWorkerMirroredStrategy that reduce fails on dict features
    (keras-team/keras#20585) and is a cross-worker collective besides. A
    model whose state already exists (`ModelFnModel` builds each mode
    itself) has nothing to build, so it binds this under that name; the
    epoch iterator is handed to `model.keep_epoch_iterator`, so that the
    loop can free its input when the call returns (`end_epoch_iteration`).
    """
    del data_batch
    if iterator is not None:
        model.keep_epoch_iterator(iterator)


def end_epoch_iteration(epoch_iterator: Any) -> None:
    """Drops what Keras' epoch iterator holds of the input, breaking its cycle.

    Checked on Keras 3.15. The epoch iterator keeps the generator that yields
    its tf.data iterator, and the generator's frame keeps the epoch iterator:
    the tf.data iterator lives until a garbage collection finds the cycle
    (a full one costs about 0.1 s here). `EpochIterator.reset()` drops the
    generator, which frees the tf.data iterator unless another reference
    holds it.
    """
    epoch_iterator.reset()
