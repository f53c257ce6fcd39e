"""A compiled Keras model run as a model_fn: what `model_to_estimator` builds on.

`keras_model_fn(model)` (public) checks and copies the model and returns a
`KerasModelFn`, a model_fn whose TRAIN step is the Keras trainer's own
train step, written with Keras' public pieces (forward pass, `compute_loss`,
the optimizer's `apply_gradients`, `compute_metrics`) in the same order, so
an Estimator made from a model trains it exactly as `Model.fit` does. EVAL
reports the compiled metrics as `eval_metric_ops`; PREDICT returns the
model's outputs keyed by output name.

The model's variables exist before any trace (a Keras model is built once
and keeps its layers), so the function hands them to the Estimator's
variable store by name instead of creating them inside a trace: see
`variables_before_trace`, `step_logs`, `reset_metrics`,
`finalize_variable_values` and `callback_model` (what Keras callbacks
see), which
`ModelFnModel` looks for on any model_fn. They are kept in the instance's
`__dict__` (live: bound methods and a dict updated in place), so a wrapper
made with `functools.wraps(base_fn)`, which copies that `__dict__`, carries
them to the Estimator too.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import keras
import tensorflow as tf

from keras_estimator._src.base.estimator_spec import EstimatorSpec
from keras_estimator._src.base.export_outputs import PredictOutput
from keras_estimator._src.base.mode_keys import ModeKeys
from keras_estimator._src.engine import inputs as _inputs
from keras_estimator._src.engine.variable_store import as_tf_variable
from keras_estimator._src.tf_internals import keras_naming, keras_trainer

METRICS_SCOPE = "keras_metrics"


def keras_model_fn(
    model: keras.Model,
    metric_names_map: Mapping[str, str] | None = None,
    export_outputs: Mapping[str, Any] | None = None,
) -> KerasModelFn:
    """The model_fn of a compiled Keras model: what `model_to_estimator` runs.

    The returned model_fn trains a copy of `model` (same architecture,
    compile settings and weights, a new optimizer as tf.estimator 2.15 had;
    `model` itself is never changed) with the Keras trainer's own train step, so
    `Estimator(keras_model_fn(model))` trains exactly as
    `model_to_estimator(model)` does. EVAL reports the compiled metrics,
    PREDICT the outputs keyed by output name.

    Wrap it to add what `model_to_estimator` cannot: hooks, extra summaries
    or evaluation metrics, a changed EstimatorSpec. Decorate the wrapper with
    `functools.wraps(base_fn)`: the Estimator finds the Keras model's
    variables through it (an undecorated wrapper is refused when it
    trains). The wrapper is then called as `(features, labels, mode)`.

    Under a distribution strategy, call it inside the `strategy.scope()` of
    the strategy the Estimator's `RunConfig` trains under: the copy's
    variables belong to the strategy of the scope it is made in.

    Args:
        model: a compiled, built Keras model (Sequential, functional, or
            subclassed with `get_config`).
        metric_names_map: compiled metric name (as Keras logs it) -> name in
            evaluation results; must name every compiled metric and nothing
            else.
        export_outputs: output name -> ExportOutput class (e.g.
            `keras_estimator.export.RegressionOutput`), exported as
            signatures besides `serving_default`.

    Returns:
        A model_fn `(features, labels, mode) -> EstimatorSpec`.

    Raises:
        TypeError: `model` is not a `keras.Model`, or a bad
            `metric_names_map` / `export_outputs` type.
        ValueError: `model` is not compiled or not built, or
            `export_outputs` names an unknown output (a KeyError too, as in
            tf.estimator 2.15). A `metric_names_map` that is not one name per
            compiled metric raises ValueError when training or evaluation
            builds the metrics.

    Example:
        >>> base_fn = keras_estimator.keras_model_fn(model)  # doctest: +SKIP
        >>> @functools.wraps(base_fn)  # doctest: +SKIP
        ... def model_fn(features, labels, mode):
        ...     spec = base_fn(features, labels, mode)
        ...     if mode != keras_estimator.ModeKeys.TRAIN:
        ...         return spec
        ...     hook = keras_estimator.LoggingTensorHook(
        ...         {"loss": spec.loss}, every_n_iter=10)
        ...     return spec._replace(training_hooks=[hook])
        >>> est = keras_estimator.Estimator(model_fn, model_dir="/tmp/m")  # doctest: +SKIP
        >>> est.train(input_fn, steps=100)  # doctest: +SKIP
    """
    if not isinstance(model, keras.Model):
        raise TypeError(
            f"keras_model_fn needs a compiled keras.Model, got "
            f"{type(model).__name__}. Build a Keras model and call "
            "model.compile(optimizer=..., loss=...) before keras_model_fn."
        )
    check_compiled(model)
    check_export_outputs(export_outputs, model)
    # tf.estimator 2.15 warm-started the Estimator from the model's weights
    # and trained with a new optimizer counting from global step 0: a model
    # fitted before brings its weights, not its optimizer's slots or steps.
    copy = copy_model(model, optimizer_state=False)
    check_metric_names_type(metric_names_map)
    return KerasModelFn(copy, metric_names_map, export_outputs)


class KerasModelFn:
    """Runs a compiled Keras model as `model_fn(features, labels, mode)`.

    Args:
        model: a compiled, built Keras model, owned by this function (pass a
            clone: training changes its weights).
        metric_names_map: optional renaming of the compiled metrics' names
            (as Keras logs them) to the names evaluation reports.
        export_outputs: optional output name -> ExportOutput class, added to
            the default `serving_default` PredictOutput.
    """

    def __init__(
        self,
        model: keras.Model,
        metric_names_map: Mapping[str, str] | None = None,
        export_outputs: Mapping[str, Any] | None = None,
    ) -> None:
        self.model = model
        self._metric_names_map = dict(metric_names_map or {})
        self._export_outputs = dict(export_outputs or {})
        self._loss_takes_training = (
            "training" in inspect.signature(model.compute_loss).parameters
        )
        # What ModelFnModel looks for, in the instance's __dict__ so that a
        # functools.wraps wrapper copies them (see the module's docstring).
        # step_logs is only ever updated in place.
        self.step_logs: dict[str, tf.Tensor] = {}
        self.variables_before_trace: Callable[
            [str, Any], dict[str, tuple[tf.Variable, bool]]
        ] = self._variables_before_trace
        self.reset_metrics: Callable[[], None] = self._reset_metrics
        # The model Keras callbacks in Estimator.train see: its variables
        # are the ones the Estimator trains.
        self.callback_model: keras.Model = model
        self.finalize_variable_values: Callable[[], None] = self._finalize_variable_values
        self._adopted_modes: set[str] = set()

    # ---- the model_fn ------------------------------------------------------------
    def __call__(self, features: Any, labels: Any, mode: str) -> EstimatorSpec:
        self.step_logs.clear()
        features, weights = _split_sample_weights(features)
        inputs = self._inputs(features)
        if mode not in self._adopted_modes:
            _raise_hidden()
        if mode == ModeKeys.PREDICT:
            return self._predict(inputs)
        targets = self._targets(labels)
        weights = self._sample_weights(weights, targets)
        if mode == ModeKeys.TRAIN:
            return self._train(inputs, targets, weights)
        return self._evaluate(inputs, targets, weights)

    def _train(self, x: Any, y: Any, sample_weight: Any = None) -> EstimatorSpec:
        model = self.model
        with tf.GradientTape() as tape:
            y_pred = model(x, training=True)
            loss = self._compute_loss(x, y, y_pred, sample_weight, training=True)
            self._loss_tracker().update_state(
                _unscale_for_replicas(loss), sample_weight=_batch_size(x)
            )
            scaled_loss = model.optimizer.scale_loss(loss)
        weights = model.trainable_weights
        gradients = tape.gradient(scaled_loss, weights)
        model.optimizer.apply_gradients(zip(gradients, weights, strict=True))
        logs = model.compute_metrics(x, y, y_pred, sample_weight=sample_weight)
        self._check_metric_names_map()
        # Keras callbacks see what they see in `fit`: the running means.
        self.step_logs.update({name: _flat_scalar(value) for name, value in logs.items()})
        iterations = as_tf_variable(model.optimizer.iterations)
        assert iterations is not None
        return EstimatorSpec(
            ModeKeys.TRAIN,
            loss=tf.identity(_unscale_for_replicas(loss), name="loss"),
            train_op=iterations.read_value(),
        )

    def _evaluate(self, x: Any, y: Any, sample_weight: Any = None) -> EstimatorSpec:
        model = self.model
        y_pred = model(x, training=False)
        loss = self._compute_loss(x, y, y_pred, sample_weight, training=False)
        compiled = _compile_metrics(model)
        if compiled is not None:
            compiled.update_state(y, y_pred, sample_weight)
        update_op = tf.no_op()
        # Values are read after the update, so a step's logs include it; the
        # Estimator reads the final values after all steps. As in tf.estimator
        # 2.15, the results hold the compiled metrics only: not the loss
        # trackers (the Estimator reports the mean batch loss; 2.15 had no
        # per-output `<output>_loss` entries).
        metric_ops: dict[str, Any] = {}
        results = compiled.result() if compiled is not None else {}
        self._check_metric_names_map()
        for name, value in results.items():
            metric_ops[self._metric_name(name)] = (_flat_scalar(value), update_op)
        return EstimatorSpec(
            ModeKeys.EVAL,
            loss=tf.identity(_unscale_for_replicas(loss), name="loss"),
            eval_metric_ops=metric_ops,
        )

    def _predict(self, x: Any) -> EstimatorSpec:
        outputs = self.model(x, training=False)
        predictions = self._named_outputs(outputs)
        export_outputs = self._make_export_outputs(predictions)
        return EstimatorSpec(
            ModeKeys.PREDICT, predictions=predictions, export_outputs=export_outputs
        )

    def _compute_loss(
        self, x: Any, y: Any, y_pred: Any, sample_weight: Any, training: bool
    ) -> tf.Tensor:
        if self._loss_takes_training:
            return self.model.compute_loss(
                x=x, y=y, y_pred=y_pred, sample_weight=sample_weight, training=training
            )
        return self.model.compute_loss(x=x, y=y, y_pred=y_pred, sample_weight=sample_weight)

    def _sample_weights(self, weights: Any, targets: Any) -> Any:
        """`sample_weights` in the structure of the targets, as compute_loss takes them.

        As tf.estimator 2.15: one output takes a tensor, a one-item list or a
        dict holding its name; several outputs take a list with one entry per
        output or a dict keyed by output name (missing names are unweighted).
        """
        if weights is None:
            return None
        names = output_names(self.model)
        if len(names) <= 1 and not isinstance(targets, (list, tuple, Mapping)):
            if isinstance(weights, (list, tuple)) and len(weights) == 1:
                return weights[0]
            if isinstance(weights, Mapping) and names and names[0] in weights:
                return weights[names[0]]
            return weights
        count = len(targets) if isinstance(targets, (list, tuple, Mapping)) else len(names)
        if isinstance(weights, (list, tuple)):
            if len(weights) != count:
                raise ValueError(
                    f"Provided `sample_weights` was a list of {len(weights)} elements, "
                    f"but the model has {count} outputs. Give one weight tensor per "
                    f"output {names}."
                )
            ordered = list(weights)
        elif isinstance(weights, Mapping):
            unknown = sorted(set(weights) - set(names))
            if unknown:
                raise ValueError(
                    f"Unknown entries in sample_weights dictionary: {unknown}. Only "
                    f"expected following keys: {names}."
                )
            ordered = [weights.get(name) for name in names]
        else:
            raise TypeError(
                "The model has multiple outputs, so `sample_weights` should be "
                f"either a list or a dict. Got {type(weights).__name__}; give one "
                f"weight tensor per output {names}."
            )
        if isinstance(targets, Mapping):
            return dict(zip(names, ordered, strict=True))
        return ordered

    # ---- what ModelFnModel asks of a model_fn owning state ----------------------
    def _variables_before_trace(
        self, mode: str, element_spec: Any
    ) -> dict[str, tuple[tf.Variable, bool]]:
        """Builds every variable the model needs in `mode`; returns them by name.

        The names are the checkpoint keys: weights by their path inside the
        model, optimizer slots under the optimizer's class name, metric state (never
        checkpointed; the flag says so) under `keras_metrics/`.
        """
        if mode != ModeKeys.PREDICT:
            features, labels = _inputs.split_element(element_spec)
            features, _ = _split_sample_weights(features)
            data_spec = (self._inputs(features), self._targets(labels))
            keras_trainer.build_keras_training_state(self.model, data_spec)
        elif not self.model.built:
            # A model given unbuilt (a subclassed one never called) is built
            # on the first input it sees, as tf.estimator 2.15 built it.
            features, _ = _split_sample_weights(_inputs.split_element(element_spec)[0])
            self.model(
                tf.nest.map_structure(
                    lambda spec: keras.KerasTensor(spec.shape, spec.dtype.name),
                    self._inputs(features),
                )
            )
        self._adopted_modes.add(mode)
        return named_variables(self.model)

    def _finalize_variable_values(self) -> None:
        """What `fit` does after its last epoch (an EMA optimizer's averages in)."""
        self.model.optimizer.finalize_variable_values(self.model.trainable_weights)

    def _reset_metrics(self) -> None:
        """Starts running means afresh, as Keras does at each fit/evaluate."""
        self.model.reset_metrics()

    # ---- features, labels and outputs ---------------------------------------------
    def _inputs(self, features: Any) -> Any:
        names = input_names(self.model)
        if isinstance(features, Mapping) and len(names) <= 1:
            single = _single_input(features, names, self.model)
            if single is not None:
                return single
        return _select(features, names, "features", "inputs")

    def _targets(self, labels: Any) -> Any:
        if labels is None:
            raise ValueError(
                "model_to_estimator's Estimator needs labels to train or "
                "evaluate, but input_fn gave features only. Make input_fn "
                "return (features, labels)."
            )
        return _select(labels, output_names(self.model), "labels", "outputs")

    def _named_outputs(self, outputs: Any) -> dict[str, tf.Tensor]:
        if isinstance(outputs, Mapping):
            return dict(outputs)
        names = output_names(self.model)
        flat = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
        if len(names) != len(flat):
            names = [f"output_{index + 1}" for index in range(len(flat))]
        return dict(zip(names, flat, strict=True))

    def _make_export_outputs(self, predictions: dict[str, Any]) -> dict[str, Any]:
        outputs: dict[str, Any] = {"serving_default": PredictOutput(predictions)}
        for key, output_class in self._export_outputs.items():
            outputs[key] = output_class(predictions[key])
        return outputs

    def _metric_name(self, name: str) -> str:
        return self._metric_names_map.get(name, name)

    def _check_metric_names_map(self) -> None:
        """Refuses a `metric_names_map` that is not one name per compiled metric.

        Checked where tf.estimator 2.15 checked it: when training or
        evaluation builds the metrics (their names, `dense_2_accuracy` for an
        output's metric, are only known then), with 2.15's messages.
        """
        compiled = _compile_metrics(self.model)
        if not self._metric_names_map or compiled is None:
            return
        expected = list(compiled.result())
        if not expected:
            return
        unknown = [name for name in expected if name not in self._metric_names_map]
        if unknown:
            raise ValueError(
                "Invalid `metric_names_map`. The following keras model metric "
                f'names:"{unknown}" do not exist in the `metric_names_map` '
                f"dictionary. Map each of the compiled metrics {expected}, or "
                "leave metric_names_map out."
            )
        extra = [name for name in self._metric_names_map if name not in expected]
        if extra:
            raise ValueError(
                "Invalid `metric_names_map`. There are unexpected keys in the "
                f"`metric_names_map` dictionary. Expected keys: {expected}, "
                f"Received: {extra}."
            )

    def _loss_tracker(self) -> keras.metrics.Metric:
        # Keras lists its loss tracker first among a compiled model's metrics.
        tracker = self.model.metrics[0] if self.model.metrics else None
        if tracker is None or tracker.name != "loss":
            raise ValueError(
                "The Keras model has no loss tracker; compile it with a loss "
                "before keras_model_fn / model_to_estimator."
            )
        return tracker


def named_variables(model: keras.Model) -> dict[str, tuple[tf.Variable, bool]]:
    """A built, compiled model's variables by checkpoint name, with a local flag."""
    named: dict[str, tuple[tf.Variable, bool]] = {}

    def add(name: str, variable: Any, is_local: bool) -> None:
        tf_variable = as_tf_variable(variable)
        if tf_variable is None:
            return
        if name in named and named[name][0] is not tf_variable:
            raise ValueError(
                f"Two variables of the Keras model share the name {name!r}. "
                "Give its layers distinct names."
            )
        named[name] = (tf_variable, is_local)

    for weight in model.weights:
        add(weight_name(model, weight), weight, False)
    optimizer = model.optimizer
    if optimizer is not None and optimizer.built:
        # Keras scopes slots under the optimizer's auto-numbered name
        # (`adam_3/...`); the class name keeps the keys stable across runs.
        scope = type(optimizer).__name__.lower()
        for variable in optimizer.variables:
            add(f"{scope}/{variable.path.split('/', 1)[-1]}", variable, False)
    for metric in model.metrics:
        for variable in metric.variables:
            # Metrics of different outputs may share a path (two outputs'
            # `categorical_accuracy/total`); these are never checkpointed, so
            # a counter only has to tell them apart.
            name, count = f"{METRICS_SCOPE}/{variable.path}", 0
            while name in named and named[name][0] is not as_tf_variable(variable):
                count += 1
                name = f"{METRICS_SCOPE}/{variable.path}_{count}"
            add(name, variable, True)
    return named


def weight_name(model: keras.Model, weight: Any) -> str:
    """A weight's checkpoint name: its path inside the model (`dense/kernel`)."""
    prefix = f"{model.name}/"
    path: str = weight.path
    return path[len(prefix) :] if path.startswith(prefix) else path


def input_names(model: keras.Model) -> list[str]:
    inputs = getattr(model, "inputs", None) or []
    try:
        return [tensor.name for tensor in inputs]
    except AttributeError:
        return []


def output_names(model: keras.Model) -> list[str]:
    names = getattr(model, "output_names", None)
    if names:
        return list(names)
    layers = getattr(model, "layers", None)
    if isinstance(model, keras.Sequential) and layers:
        return [layers[-1].name]
    return []


def _single_input(features: Mapping[str, Any], names: Sequence[str], model: Any) -> Any:
    """The one input of a single-input model, from features keyed as Keras 2 did.

    tf.keras 2 named the input of a Sequential built with `input_shape`
    `<first layer>_input`; Keras 3 names it otherwise. A single-input model
    takes its own input name, that legacy name, or a one-key dict's value.
    """
    if names and names[0] in features:
        return features[names[0]]
    layers = getattr(model, "layers", None) or []
    if layers and f"{layers[0].name}_input" in features:
        return features[f"{layers[0].name}_input"]
    if len(features) == 1:
        return next(iter(features.values()))
    return None


def _select(value: Any, names: Sequence[str], what: str, role: str) -> Any:
    """Matches a features or labels dict to the model's inputs or outputs.

    Extra keys are ignored, as tf.estimator ignored them; a model whose
    input names are unknown (a subclassed one) takes a one-key dict's value.
    """
    if not isinstance(value, Mapping):
        return value
    if names and all(name in value for name in names):
        if len(names) == 1:
            return value[names[0]]
        return {name: value[name] for name in names}
    if not names and len(value) == 1:
        return next(iter(value.values()))
    if not names and role == "inputs":
        return value  # a subclassed model takes the dict as is, as in 2.15
    return _raise_keys(value, names, what, role)


class FormattedKeyError(KeyError, ValueError):
    """A KeyError (as tf.estimator 2.15 raised) whose message prints as written.

    Also a ValueError, which this package raised for the same mistakes before.
    """

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


def _raise_keys(value: Mapping[str, Any], names: Sequence[str], what: str, role: str) -> Any:
    missed = sorted(set(names) - set(value))
    raise FormattedKeyError(
        f"The dictionary passed into {what} does not cover requested {role} keys "
        f"defined in the keras model.\n\tExpected keys: {sorted(names)}\n\t{what} "
        f"keys: {sorted(value)}\n\tMissed keys: {missed}\nKey the {what} by the "
        f"model's {role} names (the `name=` of each keras.Input for inputs, of "
        "the output layers for outputs)."
    )


def _split_sample_weights(features: Any) -> tuple[Any, Any]:
    """(features, sample weights) of `{'features': ..., 'sample_weights': ...}`.

    tf.estimator 2.15's convention for weighting examples: features given as
    a dict of exactly these two keys; any other features carry no weights.
    """
    if isinstance(features, Mapping) and set(features) == {"features", "sample_weights"}:
        return features["features"], features["sample_weights"]
    return features, None


def _compile_metrics(model: keras.Model) -> Any:
    for metric in model.metrics:
        if metric.name == "compile_metrics":
            return metric
    return None


def _flat_scalar(value: Any) -> tf.Tensor:
    return tf.reshape(tf.convert_to_tensor(value), [])


def _batch_size(x: Any) -> tf.Tensor:
    first = next(t for t in tf.nest.flatten(x) if t is not None)
    return tf.shape(first)[0]


def _unscale_for_replicas(loss: tf.Tensor) -> tf.Tensor:
    # Keras divides the loss by the replica count for gradients; its loss
    # tracker records the per-replica loss undivided.
    replicas = tf.distribute.get_strategy().num_replicas_in_sync
    if replicas > 1:
        return loss * tf.cast(replicas, loss.dtype)
    return loss


# ---- checking and copying the model ---------------------------------------------
def check_compiled(model: keras.Model) -> None:
    if not getattr(model, "compiled", False) or model.optimizer is None:
        raise ValueError(
            f"The given keras model has not been compiled yet ({model.name!r}). "
            "Call model.compile(optimizer=..., loss=..., metrics=...) before "
            "keras_model_fn / model_to_estimator."
        )


def copy_model(model: keras.Model, optimizer_state: bool = True) -> keras.Model:
    """A compiled copy with the same weights and (unless told not to) optimizer state.

    With `optimizer_state=False` the copy's optimizer is new: no slots, step
    count 0, as the one tf.estimator 2.15 built for the Estimator. The copy
    is made with Keras' auto-naming started afresh, so its variable paths
    (the checkpoint keys) are the same in every process. Custom objects come
    from the `keras.saving.custom_object_scope` around the call. A `Lambda`
    layer's copy calls the same function (a TensorFlow op such as
    `tf.strings.to_number`, or a Python lambda), which Keras 3's config
    round trip cannot restore and tf.keras 2's clone kept.
    """
    with keras_naming.fresh_layer_names():
        # Keras takes a clone_function for Sequential and functional models
        # only; a subclassed model is rebuilt from its own config.
        graph = isinstance(model, keras.Sequential) or _is_functional(model)
        copy = keras.models.clone_model(
            model, clone_function=_clone_layer if graph else None
        )
        if model.built and not copy.built:
            raise ValueError(
                f"Could not rebuild the Keras model {model.name!r} from its "
                "config. Give subclassed models a get_config() and build()."
            )
        copy.compile_from_config(model.get_compile_config())
    if not model.built:
        # Built, as tf.estimator 2.15 built it, on the Estimator's first input.
        return copy
    copy.set_weights(model.get_weights())
    source, target = model.optimizer, copy.optimizer
    if source.built and optimizer_state:
        target.build(copy.trainable_variables)
        # Matched by path below the optimizer's own (auto-numbered) scope: a
        # model loaded from a file may hold only part of its optimizer state.
        theirs = {_below_scope(v.path): v for v in source.variables}
        for mine in target.variables:
            value = theirs.get(_below_scope(mine.path))
            if value is not None and tuple(value.shape) == tuple(mine.shape):
                mine.assign(value)
    return copy


_FUNCTION_KEY = "keras_estimator_lambda_function"


def _is_functional(model: keras.Model) -> bool:
    # Keras 3's Functional class is not public; a functional model is a
    # keras.Model built from Input tensors, whose class is Functional itself.
    return type(model).__name__ == "Functional"


def _clone_layer(layer: keras.layers.Layer) -> keras.layers.Layer:
    """Keras' own clone of a layer (from its config); a Lambda keeps its function."""
    config = layer.get_config()
    if not isinstance(layer, keras.layers.Lambda):
        return layer.__class__.from_config(config)
    config["function"] = _FUNCTION_KEY
    return keras.layers.Lambda.from_config(
        config, custom_objects={_FUNCTION_KEY: layer.function}
    )


def _below_scope(path: str) -> str:
    return path.split("/", 1)[-1]


def check_export_outputs(export_outputs: Any, model: keras.Model) -> None:
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
        raise FormattedKeyError(
            "The list passed into export_outputs does not cover requested keys "
            f"defined in the keras model.\n\tExpected keys: {sorted(export_outputs)}"
            f"\n\tkeras model outputs: {names}\n\tMissed keys: {unknown}\n"
            f"export_outputs names {unknown}, which are not outputs of the Keras "
            f"model; its outputs are {names}."
        )


def check_metric_names_type(metric_names_map: Any) -> None:
    if metric_names_map is not None and not isinstance(metric_names_map, Mapping):
        raise TypeError(
            "metric_names_map must be a dict of Keras metric name -> "
            f"Estimator metric name, got {type(metric_names_map).__name__}."
        )


def _raise_hidden() -> None:
    raise ValueError(
        "keras_model_fn's model_fn was called by an Estimator that has not "
        "taken in the Keras model's variables: a wrapper hides it. Decorate "
        "the wrapper with @functools.wraps(base_fn), where base_fn is what "
        "keras_model_fn returned."
    )
