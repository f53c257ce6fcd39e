"""`model_to_estimator` and its way back: Keras models in, Keras models out.

The Estimator trains a copy of the user's model (same architecture, compile
settings, weights and optimizer state), so the user's own model is never
changed; `keras_model_from_estimator` gives back a Keras model carrying the
weights of one of the Estimator's checkpoints.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Mapping
from typing import Any

import keras
import tensorflow as tf

from keras_estimator._src.base.run_config import RunConfig
from keras_estimator._src.estimator.estimator import Estimator
from keras_estimator._src.keras_interop.keras_model_fn import (
    KerasModelFn,
    named_variables,
    output_names,
    weight_name,
)
from keras_estimator._src.tf_internals import keras_naming

logger = logging.getLogger("keras_estimator")

_CHECKPOINT_FORMATS = ("checkpoint", "saver")


def model_to_estimator(
    keras_model: keras.Model | None = None,
    keras_model_path: str | os.PathLike[str] | None = None,
    custom_objects: dict[str, Any] | None = None,
    model_dir: str | os.PathLike[str] | None = None,
    config: RunConfig | None = None,
    checkpoint_format: str = "checkpoint",
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
        checkpoint_format: `'checkpoint'` or `'saver'`, accepted for
            compatibility; checkpoints are always written in the name-based
            format tf.estimator's Saver wrote, keyed by the variables' paths
            in the model (`dense/kernel`, `adam/dense_kernel_momentum`).
        metric_names_map: compiled metric name (as Keras logs it) -> name in
            evaluation results; must cover every compiled metric when given.
        export_outputs: output name -> ExportOutput class (e.g.
            `keras_estimator.export.RegressionOutput`), signatures exported
            besides `serving_default`.

    Returns:
        An `Estimator` whose model_fn runs a copy of the model.

    Raises:
        ValueError: both or neither model argument, an uncompiled or unbuilt
            model, an unknown `checkpoint_format`, a custom layer missing
            from `custom_objects`, or a `metric_names_map` that does not
            cover the compiled metrics.
    """
    model = _load(keras_model, keras_model_path, custom_objects)
    if checkpoint_format not in _CHECKPOINT_FORMATS:
        raise ValueError(
            f"checkpoint_format must be one of {list(_CHECKPOINT_FORMATS)}, got "
            f"{checkpoint_format!r}."
        )
    _check_compiled(model)
    _check_export_outputs(export_outputs, model)
    strategy = None
    if config is not None:
        strategy = config.train_distribute or config.eval_distribute
    # The copy's variables belong to the strategy the Estimator trains under.
    with strategy.scope() if strategy is not None else contextlib.nullcontext():
        copy = _copy_model(model, custom_objects)
    _check_metric_names(metric_names_map, copy)
    model_fn = KerasModelFn(copy, metric_names_map, export_outputs)
    return Estimator(model_fn, model_dir=model_dir, config=config)


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
    model_fn = getattr(estimator, "_model_fn", None)
    if not isinstance(model_fn, KerasModelFn):
        raise TypeError(
            f"keras_model_from_estimator needs an Estimator made by "
            f"model_to_estimator, got {type(estimator).__name__} with model_fn "
            f"{model_fn!r}. For a model_fn Estimator, read weights with "
            "get_variable_value()."
        )
    path = checkpoint_path or estimator.latest_checkpoint()
    if path is None:
        raise ValueError(
            f"Estimator has no checkpoint in {estimator.model_dir!r} to take "
            "weights from. Train it first, or pass checkpoint_path."
        )
    model = _copy_model(model_fn.model, custom_objects)
    reader = tf.train.load_checkpoint(path)
    stored = reader.get_variable_to_shape_map()
    missing = []
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
    model = estimator._get_model()
    model.bind_estimator(estimator)
    return model


# ---- loading and copying ---------------------------------------------------------
def _load(
    keras_model: Any, keras_model_path: Any, custom_objects: dict[str, Any] | None
) -> keras.Model:
    if (keras_model is None) == (keras_model_path is None):
        raise ValueError(
            "Pass exactly one of keras_model and keras_model_path (got "
            f"keras_model={keras_model!r}, keras_model_path={keras_model_path!r})."
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


def _check_compiled(model: keras.Model) -> None:
    if not getattr(model, "compiled", False) or model.optimizer is None:
        raise ValueError(
            f"The Keras model {model.name!r} is not compiled. Call "
            "model.compile(optimizer=..., loss=..., metrics=...) before "
            "model_to_estimator."
        )
    if not model.built:
        raise ValueError(
            f"The Keras model {model.name!r} is not built. Give it an Input "
            "layer, or call it once on a batch, before model_to_estimator."
        )


def _copy_model(model: keras.Model, custom_objects: dict[str, Any] | None) -> keras.Model:
    """A compiled copy with the same weights and optimizer state.

    The copy is made with Keras' auto-naming started afresh, so its variable
    paths (the checkpoint keys) are the same in every process.
    """
    with keras.saving.custom_object_scope(custom_objects or {}):
        with keras_naming.fresh_layer_names():
            copy = keras.models.clone_model(model)
            if not copy.built:
                raise ValueError(
                    f"Could not rebuild the Keras model {model.name!r} from its "
                    "config. Give subclassed models a get_config() and build()."
                )
            copy.compile_from_config(model.get_compile_config())
    copy.set_weights(model.get_weights())
    source, target = model.optimizer, copy.optimizer
    if source.built:
        target.build(copy.trainable_variables)
        # Matched by path below the optimizer's own (auto-numbered) scope: a
        # model loaded from a file may hold only part of its optimizer state.
        theirs = {_below_scope(v.path): v for v in source.variables}
        for mine in target.variables:
            value = theirs.get(_below_scope(mine.path))
            if value is not None and tuple(value.shape) == tuple(mine.shape):
                mine.assign(value)
    return copy


def _below_scope(path: str) -> str:
    return path.split("/", 1)[-1]


def _weight_names(model: keras.Model) -> set[str]:
    return {weight_name(model, weight) for weight in model.weights}


# ---- checks ------------------------------------------------------------------------
def _check_export_outputs(export_outputs: Any, model: keras.Model) -> None:
    if export_outputs is None:
        return
    if not isinstance(export_outputs, Mapping):
        raise TypeError(
            "export_outputs must be a dict of output name -> ExportOutput class, "
            f"got {type(export_outputs).__name__}."
        )
    names = output_names(model)
    unknown = sorted(set(export_outputs) - set(names))
    if unknown:
        raise ValueError(
            f"export_outputs names {unknown}, which are not outputs of the Keras "
            f"model; its outputs are {names}."
        )


def _check_metric_names(metric_names_map: Any, model: keras.Model) -> None:
    if metric_names_map is None:
        return
    if not isinstance(metric_names_map, Mapping):
        raise TypeError(
            "metric_names_map must be a dict of Keras metric name -> "
            f"Estimator metric name, got {type(metric_names_map).__name__}."
        )
    compiled = _compiled_metric_names(model)
    if compiled is None:
        return
    uncovered = [name for name in compiled if name not in metric_names_map]
    if uncovered:
        raise ValueError(
            f"metric_names_map {dict(metric_names_map)} does not cover the compiled "
            f"metrics {uncovered} (the model compiles {compiled}). Map every "
            "compiled metric name, or leave metric_names_map out."
        )


def _compiled_metric_names(model: keras.Model) -> list[str] | None:
    """The compiled metrics' names as Keras logs them, if knowable before a build."""
    config = model.get_compile_config() or {}
    metrics = config.get("metrics")
    weighted = config.get("weighted_metrics")
    if metrics is None and weighted is None:
        return []
    if not isinstance(metrics, (list, tuple)) or weighted:
        return None  # per-output metrics: names are only known once built
    names = []
    for metric in metrics:
        if isinstance(metric, str):
            names.append(metric)
        elif isinstance(metric, dict):
            names.append(metric.get("config", {}).get("name", ""))
    return [n for n in names if n] or None
