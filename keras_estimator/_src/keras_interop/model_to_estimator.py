"""`model_to_estimator` and its way back: Keras models in, Keras models out.

The Estimator trains a copy of the user's model (same architecture, compile
settings and weights; a new optimizer, as tf.estimator 2.15's), so the user's own model is never
changed; `keras_model_from_estimator` gives back a Keras model carrying the
weights of one of the Estimator's checkpoints.
"""

from __future__ import annotations

import contextlib
import logging
import os
from typing import Any, cast

import keras
import tensorflow as tf

from keras_estimator._src.base.run_config import RunConfig
from keras_estimator._src.checkpoint import checkpoints as _checkpoint
from keras_estimator._src.estimator.estimator import Estimator, EstimatorInternals
from keras_estimator._src.keras_interop.bound_model import BoundModel
from keras_estimator._src.keras_interop.keras_model_fn import (
    KerasModelFn,
    copy_model,
    keras_model_fn,
    named_variables,
    weight_name,
)

logger = logging.getLogger("keras_estimator")

_CHECKPOINT_FORMATS = ("checkpoint", "saver")
_FIRST_CHECKPOINT = "keras_model.ckpt"


def model_to_estimator(
    keras_model: keras.Model | None = None,
    keras_model_path: str | os.PathLike[str] | None = None,
    custom_objects: dict[str, Any] | None = None,
    model_dir: str | os.PathLike[str] | None = None,
    config: RunConfig | None = None,
    checkpoint_format: str | None = "checkpoint",
    metric_names_map: dict[str, str] | None = None,
    export_outputs: dict[str, Any] | None = None,
) -> Estimator:
    """Wraps a compiled Keras model as an Estimator.

    Training runs the model's own train step (forward pass, compiled loss,
    optimizer, compiled metrics) through the Estimator's loop, so
    `train(input_fn, steps=N)` changes the weights exactly as
    `model.fit(dataset, steps_per_epoch=N, epochs=1)` would; evaluation
    returns the compiled metrics plus `loss` and `global_step`; prediction
    returns the outputs keyed by output name.

    Args:
        keras_model: a compiled Keras model (Sequential, functional or
            subclassed, built). Exclusive with `keras_model_path`.
        keras_model_path: a `.keras` or `.h5` file saved with `model.save`.
        custom_objects: classes and functions the saved model needs to load.
        model_dir: where checkpoints go (or `config.model_dir`).
        config: a `RunConfig`.
        checkpoint_format: `'checkpoint'`, `'saver'` or None, accepted for
            compatibility; checkpoints are always written in the name-based
            format tf.estimator's Saver wrote, keyed by the variables' paths
            in the model (`dense/kernel`, `adam/dense_kernel_momentum`).
        metric_names_map: compiled metric name (as Keras logs it) -> name in
            evaluation results; must name every compiled metric and nothing
            else, which training and evaluation check (as tf.estimator 2.15
            did).
        export_outputs: output name -> ExportOutput class (e.g.
            `keras_estimator.export.RegressionOutput`), signatures exported
            besides `serving_default`.

    Returns:
        An `Estimator` whose model_fn runs a copy of the model.

    Raises:
        ValueError: both or neither model argument, an uncompiled or unbuilt
            model, an unknown `checkpoint_format`, or a custom layer missing
            from `custom_objects`.
        KeyError: `export_outputs` names an output the model does not have
            (also a ValueError).
    """
    model = _load(keras_model, keras_model_path, custom_objects)
    if checkpoint_format is not None and checkpoint_format not in _CHECKPOINT_FORMATS:
        raise ValueError(
            'Checkpoint format must be one of "checkpoint" or "saver". Got '
            f"{checkpoint_format!r}."
        )
    strategy = None
    if config is not None:
        strategy = config.train_distribute or config.eval_distribute
    # The copy's variables belong to the strategy the Estimator trains under.
    with (
        strategy.scope() if strategy is not None else contextlib.nullcontext(),
        keras.saving.custom_object_scope(custom_objects or {}),
    ):
        model_fn = keras_model_fn(model, metric_names_map, export_outputs)
    estimator = Estimator(model_fn, model_dir=model_dir, config=config)
    if not estimator.config.is_chief or not model_fn.model.built:
        return estimator
    # As tf.estimator 2.15: the model's weights are also a checkpoint in
    # <model_dir>/keras (or the one found there), which the Estimator
    # warm-starts from; an export before any training reads it.
    first = _first_checkpoint(model_fn.model, estimator.model_dir)
    return Estimator(
        model_fn, model_dir=estimator.model_dir, config=estimator.config, warm_start_from=first
    )


def keras_model_from_estimator(
    estimator: Estimator,
    checkpoint_path: str | None = None,
    custom_objects: dict[str, Any] | None = None,
) -> keras.Model:
    """A compiled Keras model with the weights of one of the Estimator's checkpoints.

    Args:
        estimator: an Estimator made by `model_to_estimator`.
        checkpoint_path: the checkpoint to read; the latest one by default.
        custom_objects: what the model's compile settings need to load.

    Returns:
        A new compiled Keras model (save it with `.save("model.keras")` or
        `.save("model.h5")`) holding the checkpoint's weights and optimizer
        state.

    Raises:
        TypeError: the Estimator was not made by `model_to_estimator`.
        ValueError: there is no checkpoint, or it lacks the model's weights.
    """
    model_fn = _unwrapped(EstimatorInternals(estimator).model_fn)
    if not isinstance(model_fn, KerasModelFn):
        raise TypeError(
            f"keras_model_from_estimator needs an Estimator made by "
            f"model_to_estimator or on keras_model_fn, got {type(estimator).__name__} with model_fn "
            f"{model_fn!r}. For a model_fn Estimator, read weights with "
            "get_variable_value()."
        )
    path = checkpoint_path or estimator.latest_checkpoint()
    if path is None:
        raise ValueError(
            f"Estimator has no checkpoint in {estimator.model_dir!r} to take "
            "weights from. Train it first, or pass checkpoint_path."
        )
    with keras.saving.custom_object_scope(custom_objects or {}):
        model = copy_model(model_fn.model)
    missing = []
    # By exact name: TensorFlow's load_checkpoint finds nothing in `run[1]`.
    with _checkpoint.open_reader(path) as reader:
        stored = reader.get_variable_to_shape_map()
        for name, (variable, is_local) in named_variables(model).items():
            if is_local:
                continue
            if name not in stored:
                missing.append(name)
                continue
            variable.assign(reader.get_tensor(name))
    weights_missing = [n for n in missing if n in _weight_names(model)]
    if weights_missing:
        raise ValueError(
            f"Checkpoint {path!r} lacks the model weights {weights_missing}; it "
            "was not written by this model's Estimator."
        )
    return model


def model_fn_to_keras(
    model_fn: Any,
    model_dir: str | os.PathLike[str] | None = None,
    config: RunConfig | None = None,
    params: dict[str, Any] | None = None,
    warm_start_from: Any = None,
) -> keras.Model:
    """A model_fn as a `keras.Model` that reads and writes an Estimator's model_dir.

    `fit(dataset, steps_per_epoch=N, callbacks=[...])` trains N steps (or
    until the dataset ends) exactly as `Estimator.train` would, default hooks
    and checkpoints per `config` included; `evaluate` and `predict` read the
    latest checkpoint. The model_dir is interchangeable with an Estimator's
    built from the same arguments, so a program can move to Keras calls one
    at a time.

    Args:
        model_fn, model_dir, config, params, warm_start_from: as for
            `Estimator`.

    Returns:
        A `keras.Model`; its `fit` returns Keras' `History`.
    """
    estimator = Estimator(
        model_fn,
        model_dir=model_dir,
        config=config,
        params=params,
        warm_start_from=warm_start_from,
    )
    model = cast(BoundModel, EstimatorInternals(estimator).model(BoundModel))
    model.bind_estimator(estimator)
    return model


# ---- loading and copying ---------------------------------------------------------
def _load(
    keras_model: Any, keras_model_path: Any, custom_objects: dict[str, Any] | None
) -> keras.Model:
    if keras_model is None and keras_model_path is None:
        raise ValueError("Either `keras_model` or `keras_model_path` needs to be provided.")
    if keras_model is not None and keras_model_path is not None:
        raise ValueError(
            "Please specify either `keras_model` or `keras_model_path`, but not "
            f"both (got keras_model={keras_model!r}, "
            f"keras_model_path={keras_model_path!r})."
        )
    if keras_model is not None:
        if not isinstance(keras_model, keras.Model):
            raise TypeError(
                f"keras_model must be a keras.Model, got {type(keras_model).__name__}."
            )
        return keras_model
    path = os.fspath(keras_model_path)
    if not os.path.exists(path):
        raise ValueError(f"keras_model_path {path!r} does not exist.")
    logger.info("Loading the Keras model from %s", path)
    try:
        return keras.models.load_model(path, custom_objects=custom_objects)
    except (TypeError, ValueError) as error:
        raise ValueError(
            f"Could not load the Keras model at {path!r}: {error} If it uses "
            "custom layers, losses or metrics, pass them as "
            "custom_objects={'MyLayer': MyLayer, ...}."
        ) from None


def _first_checkpoint(model: keras.Model, model_dir: str) -> str:
    """`<model_dir>/keras/keras_model.ckpt` with the model's weights, or the
    latest checkpoint already in `<model_dir>/keras`, as 2.15 chose."""
    keras_dir = os.path.join(model_dir, "keras")
    if tf.io.gfile.isdir(keras_dir):
        found = _checkpoint.latest(keras_dir, rewrite_state=False)
        if found is not None:
            return found
    tf.io.gfile.makedirs(keras_dir)
    prefix = os.path.join(keras_dir, _FIRST_CHECKPOINT)
    values = {
        name: variable.read_value()
        for name, (variable, is_local) in named_variables(model).items()
        if not is_local
    }
    values["global_step"] = tf.constant(0, tf.int64)
    names = sorted(values)
    tf.raw_ops.SaveV2(
        prefix=prefix,
        tensor_names=names,
        shape_and_slices=[""] * len(names),
        tensors=[values[name] for name in names],
    )
    with tf.io.gfile.GFile(os.path.join(keras_dir, "checkpoint"), "w") as state:
        state.write(
            f'model_checkpoint_path: "{_FIRST_CHECKPOINT}"\n'
            f'all_model_checkpoint_paths: "{_FIRST_CHECKPOINT}"\n'
        )
    return prefix


def _unwrapped(model_fn: Any) -> Any:
    """The KerasModelFn behind `functools.wraps` wrappers, else `model_fn`."""
    seen = 0
    while not isinstance(model_fn, KerasModelFn) and seen < 100:
        inner = getattr(model_fn, "__wrapped__", None)
        if inner is None:
            break
        model_fn, seen = inner, seen + 1
    return model_fn


def _weight_names(model: keras.Model) -> set[str]:
    return {weight_name(model, weight) for weight in model.weights}
