"""`Estimator.predict`'s loop: one batch per call, yielded as it comes.

Keras' `Model.predict` gathers every batch before it returns; `predict()`
is a generator handing each batch's predictions (or each example's) to the
caller as soon as they are computed, so it has this loop of its own. Hooks
and Keras callbacks see Keras' predict order (`loop.CallbackDriver`, which
the parameter-server driver calls them through too): `on_predict_begin`,
then per batch `on_predict_batch_begin` / `on_predict_batch_end`, then
`on_predict_end`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import tensorflow as tf

from keras_estimator._src.engine.loop import CallbackDriver
from keras_estimator._src.engine.model_fn_model import ModelFnModel
from keras_estimator._src.engine.run_plan import RunState


def run_prediction(
    model: ModelFnModel,
    predict_function: Callable[[Any], Any],
    input_box: list[Any],
    callbacks: Any,
    keys: Sequence[str] | None,
    yield_single_examples: bool,
    scope: Callable[[], contextlib.AbstractContextManager[None]] = contextlib.nullcontext,
) -> Iterator[Any]:
    """Yields the predictions of each batch `input_box[0]` gives, until it ends.

    Args:
        model: the model whose `predict_function` runs; `stop_predicting`
            on it ends the loop after the batch under way.
        predict_function: one batch's predictions from the input iterator.
        input_box: a list holding the input iterator (the caller frees it).
        callbacks: a `keras.callbacks.CallbackList` of the hooks' dispatcher
            and the Keras callbacks.
        keys: the prediction keys to keep; None for all.
        yield_single_examples: yield each example's predictions instead of
            each batch's.
        scope: the context the loop's hooks, callbacks and batches run in
            (the loop context hooks see, the values the generator predicts
            with; see `held_values`), entered only while the generator
            runs, not while it waits at a yield: another generator or call
            may run in between.

    Raises:
        ValueError: `keys` are not among the predictions, or (one example
            at a time) the predictions' batch lengths differ.
    """
    model.stop_predicting = False
    driver = CallbackDriver(callbacks, "predict")
    # The state is the model's only while this generator runs, not while
    # it is suspended at a yield.
    run = RunState()
    with model.running(run), scope():
        driver.begin()
    while not model.stop_predicting:
        with model.running(run), scope():
            driver.batch_begin()
            try:
                outputs = predict_function(input_box[0])
            except StopIteration:
                break
            # Callbacks see the model_fn's keys, as predict() yields them.
            outputs = model.restore_prediction_keys(outputs)
            driver.batch_end({"outputs": outputs})
        outputs = _select_keys(outputs, keys)
        if yield_single_examples:
            yield from _split_examples(outputs)
        elif isinstance(outputs, dict):
            # Not tf.nest: it sorts the keys, and fails on ints beside strs.
            yield {k: v.numpy() for k, v in outputs.items()}
        else:
            yield tf.nest.map_structure(lambda t: t.numpy(), outputs)
    with model.running(run), scope():
        driver.end()


def _select_keys(outputs: Any, keys: Sequence[str] | None) -> Any:
    # As in tf.estimator 2.15: no keys (None or empty) selects every
    # prediction, and keys the predictions lack are passed over as long as
    # one key names a prediction.
    if not keys:
        return outputs
    if not isinstance(keys, Iterable):
        raise TypeError(
            f"predict_keys must be a str or a list of str, got {keys!r} "
            f"({type(keys).__name__}). Pass the names of predictions to return."
        )
    keys = list(keys)
    if not isinstance(outputs, dict):
        raise ValueError(
            "predict_keys argument is not valid in case of non-dict "
            f"predictions: predict_keys={keys} given but model_fn's predictions "
            "are a single tensor, not a dict. Drop predict_keys."
        )
    # In the predictions' order, not predict_keys', as 2.15 yielded them.
    selected = {k: v for k, v in outputs.items() if k in keys}
    if not selected:
        raise ValueError(
            f"Expected to run at least one output from {list(outputs)}, "
            f"provided {keys}: predict_keys {keys} name none of the predictions."
        )
    return selected


def _split_examples(outputs: Any) -> Iterator[Any]:
    if not isinstance(outputs, dict):
        yield from outputs.numpy()
        return
    arrays = {k: v.numpy() for k, v in outputs.items()}
    sizes = {k: (v.shape[0] if v.ndim else None) for k, v in arrays.items()}
    batch = set(sizes.values())
    if len(batch) != 1 or None in batch:
        raise ValueError(
            f"Batch length of predictions should be same for every key; got "
            f"{sizes}. Return predictions with a leading batch dimension, or call "
            "predict(..., yield_single_examples=False)."
        )
    for i in range(int(batch.pop() or 0)):
        yield {k: v[i] for k, v in arrays.items()}
