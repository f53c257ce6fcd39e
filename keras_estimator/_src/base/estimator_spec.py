"""`EstimatorSpec`: what a `model_fn` returns, checked for the mode it runs in.

A `model_fn` is usually traced inside a `tf.function`, so every check here
works on symbolic tensors (it reads `.shape` and `.dtype`, never values) and
on eager tensors alike; no graph is required.

Behaviour follows tf.estimator 2.15's `EstimatorSpec`, with these differences:

* `mode` may be None as 2.15 allowed (the Estimator then gives the spec the
  mode it called the model_fn in); another value than a `ModeKeys` one is
  taken, as in 2.15, with a warning: such a spec is checked for no mode and
  runs in the mode model_fn was called in (`check_runs_in`).
* `train_op` may also be a `tf.Variable` or a `keras.Variable` (Keras 3
  optimizers' `apply_gradients` returns their iteration variable).
* A `keras.metrics.Metric` in `eval_metric_ops` becomes, in a traced step
  (graph mode), a `(value_tensor, update_op)` tuple as in 2.15 (a
  `KerasMetricOps`, whose `metric` is the Keras metric). Keras 3 metrics keep
  no update op: the op stands for the update the step already makes (it
  reads the metric's variables after it); eagerly the metric is kept as is.
* Hooks are duck-typed: any object with `before_run` and `after_run` methods.
* As in 2.15, `scaffold` defaults to an empty `Scaffold()`, and in PREDICT
  mode `export_outputs` are completed: none gives
  `{'serving_default': PredictOutput(predictions)}`, a single output under
  another name is also served as `serving_default`, several need one named so.
* `eval_metric_ops` may use the keys `global_step` and `loss`, which
  `evaluate()` refuses (`check_metric_keys`), as 2.15 did.
* Graph membership is not checked (TF2 traces have no single default graph).
"""

from __future__ import annotations

import collections
import logging
from collections.abc import Iterable, Mapping
from typing import Any

import keras
import numpy as np
import tensorflow as tf

from keras_estimator._src.base.export_outputs import (
    ExportOutput,
    export_outputs_for_predict,
)
from keras_estimator._src.base.mode_keys import ALL_MODES, ModeKeys

logger = logging.getLogger("keras_estimator")

_VARIABLE_TYPES = (tf.Variable, keras.Variable)
# Under a distribution strategy, v1 optimizers return per-replica values.
_OP_LIKE_TYPES = (
    tf.Operation,
    tf.Tensor,
    tf.distribute.DistributedValues,
    *_VARIABLE_TYPES,
)
_MAX_REPR = 120
_GLOBAL_STEP_KEY = "global_step"
_LOSS_KEY = "loss"
_MODE_MISSPELLINGS = ("predict", "prediction", "training", "evaluate", "evaluation")


def _describe(value: Any) -> str:
    """A short description of `value` for error messages (no tensor values)."""
    if isinstance(value, (tf.Tensor, *_VARIABLE_TYPES, keras.KerasTensor)):
        dtype = getattr(value.dtype, "name", value.dtype)
        return f"{type(value).__name__}(shape={value.shape}, dtype={dtype})"
    text = repr(value)
    if len(text) > _MAX_REPR:
        text = text[: _MAX_REPR - 3] + "..."
    return f"{text} (type {type(value).__name__})"


def _validate_mode(mode: Any) -> Any:
    """`mode` as given: 2.15 took any value, and checked only the ModeKeys ones.

    A spec of a mode that is no `ModeKeys` value ('bogus', 'predict') gets no
    mode's checks, and runs in the mode its model_fn was called in (see
    `check_runs_in`), as in 2.15; exporting it fails, as it did there.
    Values that compare element-wise (arrays, tensors, lists) are refused:
    2.15 failed on them with numpy's "truth value ... is ambiguous".
    """
    if mode is None or (isinstance(mode, str) and mode in ALL_MODES):
        return mode
    if isinstance(mode, (np.ndarray, tf.Tensor, list, tuple, dict, set)):
        raise ValueError(
            "EstimatorSpec mode must be ModeKeys.TRAIN ('train'), ModeKeys.EVAL "
            f"('eval') or ModeKeys.PREDICT ('infer'), got {_describe(mode)}. Pass "
            "the `mode` argument model_fn received."
        )
    key = (type(mode).__name__, repr(mode))
    if key not in _WARNED_MODES:
        _WARNED_MODES.add(key)
        hint = ""
        if isinstance(mode, str) and mode in _MODE_MISSPELLINGS:
            hint = " Note that ModeKeys.PREDICT is 'infer'."
        logger.warning(
            "EstimatorSpec mode %r is not a ModeKeys value ('train', 'eval', "
            "'infer'): the spec is not checked for any mode, runs in the mode "
            "model_fn was called in, and cannot be exported. Pass the `mode` "
            "argument model_fn received.%s",
            mode,
            hint,
        )
    return mode


_WARNED_MODES: set[tuple[str, str]] = set()


def _check_graph(value: Any, field: str) -> None:
    """Refuses a graph tensor or op that the graph being built cannot use.

    The graph being built (or one enclosing it, whose tensors a traced
    function captures) must hold `value`, as 2.15 required of every tensor.
    """
    if tf.executing_eagerly():
        return
    try:
        owner = value.graph
    except AttributeError:  # eager tensors have no graph
        return
    building = tf.compat.v1.get_default_graph()
    graph = building
    while graph is not None:
        if graph is owner:
            return
        graph = getattr(graph, "outer_graph", None)
    raise ValueError(
        f"{field} must be from the default graph: got {_describe(value)} from "
        f"{owner}, while model_fn builds {building}. Create it inside model_fn "
        "from its arguments, not in another graph."
    )


def _to_dense_tensor(value: Any, field: str) -> tf.Tensor:
    """Returns `value` as a dense `tf.Tensor`; variables are read."""
    if isinstance(value, tf.Tensor):
        _check_graph(value, field)
        return value
    if isinstance(value, _VARIABLE_TYPES):
        return tf.convert_to_tensor(value)
    if isinstance(value, keras.KerasTensor):
        fix = (
            "It is a symbolic Keras tensor (from keras.Input), which has no value "
            "here: call your layers or model on the `features` tensors instead."
        )
    elif isinstance(value, (tf.SparseTensor, tf.RaggedTensor)):
        fix = "Convert it with tf.sparse.to_dense(...) or .to_tensor() first."
    else:
        fix = "Build it with TensorFlow or Keras ops from the model_fn inputs."
    raise TypeError(
        f"{field} must be Tensor (a dense tf.Tensor), got {_describe(value)}. {fix}"
    )


def _validate_loss(loss: Any, mode: str) -> tf.Tensor | None:
    if loss is None:
        if mode in (ModeKeys.TRAIN, ModeKeys.EVAL):
            raise ValueError(
                f"Missing loss: EstimatorSpec in mode {mode!r} requires `loss`, got None. Return "
                "loss=<scalar tensor> from model_fn when training and evaluating."
            )
        return None
    tensor = _to_dense_tensor(loss, "loss")
    _check_loss_dtype(tensor, mode)
    if tensor.shape.num_elements() not in (None, 1):
        raise ValueError(
            f"Loss must be scalar (shape () or [1]), got {_describe(tensor)}. "
            "Reduce it first, e.g. loss = tf.reduce_mean(per_example_loss)."
        )
    if tensor.shape.num_elements() is None:
        # A dimension of unknown size (a per-example loss of a batch of 1,
        # say): tf.estimator reshaped it to a scalar when the step ran, and
        # failed only when it held more than one value.
        return _scalar_at_run_time(tensor)
    if not tensor.shape.is_compatible_with([]):
        tensor = tf.reshape(tensor, [])
    return tensor


# The dtypes a scalar summary takes: 2.15's train() wrote the loss as one.
_SUMMARY_DTYPES = (
    "float32, float64, int32, uint8, int16, int8, int64, bfloat16, uint16, "
    "float16, uint32, uint64"
)


def _check_loss_dtype(loss: tf.Tensor, mode: Any) -> None:
    """Refuses a loss dtype the mode cannot run, as 2.15 eventually did.

    2.15 checked no dtype: training with a bool, string or complex loss
    failed in its loss summary, evaluating a string loss failed when the mean
    cast it to float. A bool loss evaluates (its mean as a float), and in
    PREDICT mode the loss is not used.
    """
    dtype = loss.dtype
    if mode == ModeKeys.TRAIN and dtype.name not in _SUMMARY_DTYPES.split(", "):
        raise TypeError(
            f"Value passed to parameter 'values' has DataType {dtype.name} not in "
            f"list of allowed values: {_SUMMARY_DTYPES}. A TRAIN EstimatorSpec's "
            f"loss must be a real number tensor, got {_describe(loss)}: train() "
            "logs and summarizes it. Compute the loss as a float tensor."
        )
    if mode == ModeKeys.EVAL and dtype == tf.string:
        raise tf.errors.UnimplementedError(
            None,
            None,
            "Graph execution error: Cast string to float is not supported: "
            f"evaluate() averages the EVAL EstimatorSpec's loss, got "
            f"{_describe(loss)}. Compute the loss as a float tensor.",
        )


def check_runs_in(spec: EstimatorSpec, mode: str) -> None:
    """Refuses to run `spec` in `mode` what 2.15 failed on when it ran it.

    For a spec of another mode than the one model_fn was called in (or of a
    mode that is no ModeKeys value), which 2.15 ran with the fields the
    called mode uses, unchecked. Each error starts as 2.15's did.
    """
    if spec.mode == mode:
        return
    if mode == ModeKeys.TRAIN:
        if spec.loss is None:
            raise ValueError(
                "Tried to convert 'values' to a tensor and failed. Error: None "
                f"values not supported. model_fn was called in mode 'train' and "
                f"returned an EstimatorSpec of mode {spec.mode!r} with no loss. "
                "Return loss=<scalar tensor> when training."
            )
        if spec.train_op is None:
            raise TypeError(
                'Argument `fetch` = None has invalid type "NoneType". Cannot be '
                f"None: model_fn was called in mode 'train' and returned an "
                f"EstimatorSpec of mode {spec.mode!r} with no train_op. Return "
                "the optimizer's update op as train_op when training."
            )
    elif mode == ModeKeys.EVAL and spec.loss is None:
        raise ValueError(
            f"None values not supported: model_fn was called in mode 'eval' and "
            f"returned an EstimatorSpec of mode {spec.mode!r} with no loss. "
            "Return loss=<scalar tensor> when evaluating."
        )
    elif mode == ModeKeys.PREDICT and (
        spec.predictions is None
        or (isinstance(spec.predictions, Mapping) and not spec.predictions)
    ):
        raise TypeError(
            "'NoneType' object cannot be interpreted as an integer: model_fn was "
            f"called in mode 'infer' and returned an EstimatorSpec of mode "
            f"{spec.mode!r} with no predictions. Return predictions=<tensor or "
            "dict of tensors> when predicting."
        )
    if spec.loss is not None and mode != ModeKeys.PREDICT:
        _check_loss_dtype(spec.loss, mode)


def _scalar_at_run_time(tensor: tf.Tensor) -> tf.Tensor:
    """`tensor` reshaped to a scalar; the step fails if it has other than 1 value."""
    check = tf.debugging.assert_equal(
        tf.size(tensor),
        1,
        message=(
            f"loss must be a scalar (shape () or [1]), got a tensor of shape "
            f"{tensor.shape} holding other than one value (its size follows). "
            "Reduce it first, e.g. loss = tf.reduce_mean(per_example_loss)"
        ),
    )
    # Reshaping the first value, never the whole tensor: TensorFlow infers
    # shapes from a call's actual inputs and would report the reshape of a
    # larger loss before this check could run.
    with tf.control_dependencies([check]):
        return tf.reshape(tf.reshape(tensor, [-1])[:1], [])


def _validate_predictions(predictions: Any, mode: str) -> Any:
    if predictions is None:
        if mode == ModeKeys.PREDICT:
            raise ValueError(
                "Missing predictions: EstimatorSpec in mode 'infer' requires `predictions`, got None. "
                "Return predictions=<tensor or dict of tensors> from model_fn "
                "when predicting."
            )
        return {}
    if not isinstance(predictions, Mapping):
        return _to_dense_tensor(predictions, "predictions")
    # Keys of any kind, as 2.15 took them: predict() yields them as given; a
    # key that is not a string fails only where a signature needs names
    # (serving_default made of the predictions, as in 2.15).
    return {
        key: _to_dense_tensor(value, f"predictions[{key}]")
        for key, value in predictions.items()
    }


def _validate_train_op(train_op: Any, mode: str) -> Any:
    if train_op is None:
        if mode == ModeKeys.TRAIN:
            raise ValueError(
                "Missing train_op: EstimatorSpec in mode 'train' requires `train_op`, got None. "
                "Return the result of optimizer.apply_gradients(...) (or "
                "tf.group(...) of the update ops) from model_fn. In eager mode "
                "tf.group() and tf.no_op() return None: build the spec inside a "
                "tf.function."
            )
        return None
    _check_op_like(train_op, "train_op")
    return train_op


def _check_op_like(value: Any, field: str) -> None:
    if not isinstance(value, _OP_LIKE_TYPES):
        raise TypeError(
            f"{field} must be Operation or Tensor (a tf.Operation, tf.Tensor, "
            f"tf.Variable or keras.Variable), got {_describe(value)}."
        )
    if isinstance(value, (tf.Tensor, tf.Operation)):
        _check_graph(value, field)


class KerasMetricOps(tuple):  # type: ignore[type-arg]
    """A Keras metric as the `(value_tensor, update_op)` pair 2.15 made of it.

    `metric` is the Keras metric; the update op depends on the update the
    traced step makes (Keras 3 metrics record no update op of their own).
    """

    metric: keras.metrics.Metric

    def __new__(cls, metric: keras.metrics.Metric) -> KerasMetricOps:
        value = tf.convert_to_tensor(metric.result())
        # In a plain TF1 graph, run by the program's own Session, the update
        # op runs the graph's writes to the metric's variables, as 2.15's
        # did (a traced step runs them itself).
        with tf.control_dependencies(_plain_graph_writes(metric)):
            reads = [tf.identity(tf.convert_to_tensor(v)) for v in metric.variables]
        update_op = tf.group(*reads)
        ops = super().__new__(cls, (value, update_op))
        ops.metric = metric
        return ops


# Ops that use a variable's handle without writing the variable.
_READING_OPS = frozenset({"ReadVariableOp", "VarIsInitializedOp", "VariableShape"})
# Ops that write a variable in the graph itself (not in a function they call).
_WRITING_OPS = frozenset(
    {"AssignVariableOp", "AssignAddVariableOp", "AssignSubVariableOp"}
)


def _plain_graph_writes(metric: keras.metrics.Metric) -> list[Any]:
    """The ops of a plain (not function) graph being built that write `metric`'s variables."""
    graph = tf.compat.v1.get_default_graph()
    if tf.executing_eagerly() or getattr(graph, "captures", None) is not None:
        return []
    handles, initializers = set(), set()
    for variable in metric.variables:
        handle = getattr(variable, "handle", None)
        if isinstance(handle, tf.Tensor) and getattr(handle, "graph", None) is graph:
            handles.add(handle.name)
            # The variable's own initializing assignment is not an update.
            for held in (variable, getattr(variable, "value", None)):
                initializer = getattr(held, "initializer", None)
                if isinstance(initializer, tf.Operation):
                    initializers.add(initializer.name)
    if not handles:
        return []
    return [
        op
        for op in graph.get_operations()
        if op.type in _WRITING_OPS
        and op.inputs
        and op.inputs[0].name in handles
        and op.name not in initializers
    ]


def _metric_updates(metric: keras.metrics.Metric) -> tuple[str, Any]:
    """How the graph being built updates `metric`'s variables: (kind, op).

    2.15 refused a Keras metric with no update ops (Keras 2 metrics recorded
    them), and one updated inside control flow or a function ("must be from
    the default graph"). Keras 3 metrics record none, so the graph is read: a
    write to one of the metric's variable handles (as the graph captured it,
    through enclosing function graphs) is an update. The kind is "updated",
    "nested" (only ops running functions take the handle, e.g. tf.cond; the
    op is one of them), "never", or "unknown" when that cannot be told
    (eagerly, a metric without variables, variables without an eager handle,
    a graph that captures nothing), which is accepted.
    """
    if tf.executing_eagerly() or not metric.variables:
        return "unknown", None
    handles: set[Any] = set()
    for variable in metric.variables:
        handle = getattr(variable, "handle", None)
        if not isinstance(handle, tf.Tensor) or not hasattr(handle, "numpy"):
            return "unknown", None
        handles.add(_tensor_key(handle))
    # The function graphs from the one being built outwards; the outermost
    # graph (a plain tf.Graph) captures nothing.
    graph = tf.compat.v1.get_default_graph()
    chain = []
    while graph is not None and getattr(graph, "captures", None) is not None:
        chain.append(graph)
        graph = getattr(graph, "outer_graph", None)
    if not chain:
        return "unknown", None
    for enclosing in reversed(chain):
        for external, internal in enclosing.captures:
            if _tensor_key(external) in handles:
                handles.add(_tensor_key(internal))
    nested = None
    for op in chain[0].get_operations():
        if op.type in _READING_OPS:
            continue
        if any(_tensor_key(tensor) in handles for tensor in op.inputs):
            if op.type in _WRITING_OPS or not op.type.endswith(
                ("If", "While", "Case", "PartitionedCall")
            ):
                return "updated", op
            nested = nested or op
    return ("nested", nested) if nested is not None else ("never", None)


def _tensor_key(tensor: Any) -> Any:
    """Identifies a tensor: an eager one by object, a graph one by graph and name."""
    if hasattr(tensor, "numpy") and not hasattr(tensor, "op"):
        return ("eager", id(tensor))
    try:
        return (id(tensor.graph), tensor.name)
    except AttributeError:
        return ("eager", id(tensor))


def check_metric_keys(eval_metric_ops: Mapping[str, Any]) -> None:
    """2.15's refusal, when evaluating, of metrics under the keys it reports itself.

    Raises:
        ValueError: a metric named `loss` (the mean loss) or `global_step`
            (the checkpoint's step).
    """
    for key, quoted, what in (
        (_LOSS_KEY, '"loss"', "the mean of the model_fn's loss over the batches"),
        (_GLOBAL_STEP_KEY, "`global_step`", "the step of the checkpoint evaluated"),
    ):
        if key in eval_metric_ops:
            raise ValueError(
                f"Metric with name {quoted} is not allowed, because Estimator "
                f"already defines a default metric with the same name: evaluate() "
                f"reports {what} under it. Rename eval_metric_ops[{key!r}]."
            )


def _validate_eval_metric_ops(eval_metric_ops: Any) -> dict[str, Any]:
    if eval_metric_ops is None:
        return {}
    if not isinstance(eval_metric_ops, Mapping):
        raise TypeError(
            "eval_metric_ops must be a dict of name -> (value_tensor, update_op) "
            f"or keras.metrics.Metric, got {_describe(eval_metric_ops)}."
        )
    checked = {}
    for key, value in eval_metric_ops.items():
        field = f"eval_metric_ops[{key!r}]"
        if not isinstance(key, str):
            raise TypeError(
                f"eval_metric_ops keys must be strings, got key {_describe(key)}."
            )
        if isinstance(value, keras.metrics.Metric):
            updates, op = _metric_updates(value)
            if updates == "nested":
                raise ValueError(
                    f'eval_metric_ops with "{key}: {op.name}" must be from the '
                    f"default graph: the {type(value).__name__} metric "
                    f'"{value.name}" is updated only inside {op.type} (tf.cond, '
                    "tf.while_loop or a tf.function), whose updates evaluate() "
                    "would not run. Call update_state(...) in model_fn itself."
                )
            if updates == "never":
                raise ValueError(
                    f'Please call update_state(...) on the "{value.name}" metric: '
                    f"{field} is a {type(value).__name__} that model_fn never "
                    "updated, so evaluate() would report its initial value. Call "
                    f"update_state(...) on it inside model_fn before returning "
                    "the EstimatorSpec."
                )
            checked[key] = value if tf.executing_eagerly() else KerasMetricOps(value)
            continue
        if not isinstance(value, tuple) or len(value) != 2:
            raise TypeError(
                "Values of eval_metric_ops must be (metric_value, update_op) tuples: "
                f"{field} must be a (value_tensor, update_op) tuple or a "
                f"keras.metrics.Metric, got {_describe(value)}. Return e.g. "
                "tf.compat.v1.metrics.accuracy(labels, predictions)."
            )
        metric_value, update_op = value
        for member in tf.nest.flatten(metric_value):
            _check_op_like(member, f"{field} value")
        _check_op_like(update_op, f"{field} update_op")
        checked[key] = value
    return checked


def _validate_export_outputs(
    export_outputs: Any, predictions: Any, mode: str | None
) -> dict[str, Any] | None:
    if export_outputs is None:
        if mode == ModeKeys.PREDICT:
            # 2.15's default: {'serving_default': PredictOutput(predictions)}.
            return export_outputs_for_predict(None, predictions)
        return None
    if not isinstance(export_outputs, Mapping):
        raise TypeError(
            "export_outputs must be dict of signature name -> ExportOutput, got "
            f"{_describe(export_outputs)}."
        )
    for key, value in export_outputs.items():
        if not isinstance(key, str):
            raise TypeError(
                f"export_outputs keys must be signature-name strings, got key "
                f"{_describe(key)}."
            )
        if not isinstance(value, ExportOutput):
            raise TypeError(
                "Values in export_outputs must be ExportOutput objects: "
                f"export_outputs[{key!r}] must be an ExportOutput (PredictOutput, "
                f"ClassificationOutput, RegressionOutput), got {_describe(value)}. "
                "Wrap tensors as e.g. "
                "keras_estimator.export.PredictOutput({'name': tensor})."
            )
    if mode == ModeKeys.PREDICT:
        # As 2.15: one output is also served as 'serving_default'; several
        # outputs must name one so.
        return export_outputs_for_predict(export_outputs, predictions)
    return dict(export_outputs)


def _validate_scaffold(scaffold: Any) -> Any:
    # Duck-typed like hooks: a Scaffold's defining method is `finalize`.
    if scaffold is None:
        return tf.compat.v1.train.Scaffold()  # 2.15's default.
    if isinstance(scaffold, tf.compat.v1.train.Scaffold):
        return scaffold
    if callable(getattr(scaffold, "finalize", None)):
        return scaffold
    raise TypeError(
        f"scaffold must be tf.train.Scaffold (a tf.compat.v1.train.Scaffold) or None, got "
        f"{_describe(scaffold)}. Leave it None unless model_fn builds a Scaffold."
    )


def _is_hook(value: Any) -> bool:
    return callable(getattr(value, "before_run", None)) and callable(
        getattr(value, "after_run", None)
    )


def _validate_hooks(hooks: Any, field: str) -> tuple[Any, ...]:
    if hooks is None:
        return ()
    if _is_hook(hooks):
        raise TypeError(
            f"{field} must be a list of hooks, got a single hook "
            f"{_describe(hooks)}. Wrap it in a list: {field}=[hook]."
        )
    if isinstance(hooks, (str, bytes, Mapping)) or not isinstance(hooks, Iterable):
        raise TypeError(
            f"{field} must be a list of SessionRunHook objects, got {_describe(hooks)}."
        )
    hooks = tuple(hooks)
    for hook in hooks:
        if not _is_hook(hook):
            raise TypeError(
                f"All hooks must be SessionRunHook instances (with before_run and "
                f"after_run methods), got {_describe(hook)} in {field}. Subclass "
                "tf.compat.v1.train.SessionRunHook or the project's SessionRunHook."
            )
    return hooks


class EstimatorSpec(
    collections.namedtuple(
        "EstimatorSpec",
        [
            "mode",
            "predictions",
            "loss",
            "train_op",
            "eval_metric_ops",
            "export_outputs",
            "training_chief_hooks",
            "training_hooks",
            "scaffold",
            "evaluation_hooks",
            "prediction_hooks",
        ],
    )
):
    """What a `model_fn` returns: the tensors and ops an `Estimator` runs.

    Which arguments are required depends on `mode`:

    * `ModeKeys.TRAIN`: `loss` and `train_op`.
    * `ModeKeys.EVAL`: `loss`.
    * `ModeKeys.PREDICT`: `predictions`.

    Other arguments may be given in any mode; the Estimator ignores those the
    mode does not use.

    Args:
        mode: A `ModeKeys` value: the `mode` the model_fn was called with.
        predictions: A tensor or a dict of name -> tensor.
        loss: A scalar tensor (shape `()` or `[1]`; `[1]` is reshaped to `()`).
        train_op: The op that runs one training step: a `tf.Operation`,
            `tf.Tensor`, `tf.Variable` or `keras.Variable`.
        eval_metric_ops: A dict of name -> `(value_tensor, update_op)` tuple or
            `keras.metrics.Metric`.
        export_outputs: A dict of signature name -> `ExportOutput`.
        training_chief_hooks: Hooks run on the chief only, during training.
        training_hooks: Hooks run on every worker during training.
        scaffold: A `tf.compat.v1.train.Scaffold` (or an object with its
            `finalize` method), or `None`.
        evaluation_hooks: Hooks run during evaluation.
        prediction_hooks: Hooks run during prediction.

    Raises:
        ValueError: if `mode` is unknown, a required argument is missing, or
            `loss` is not a scalar.
        TypeError: if an argument has the wrong type.

    Example:
        ```python
        def model_fn(features, labels, mode):
            logits = model(features["x"])
            if mode == ModeKeys.PREDICT:
                return EstimatorSpec(mode, predictions={"logits": logits})
            loss = tf.reduce_mean(keras.losses.mean_squared_error(labels, logits))
            train_op = optimizer.apply_gradients(...)
            return EstimatorSpec(mode, loss=loss, train_op=train_op)
        ```
    """

    __slots__ = ()

    def __new__(
        cls,
        mode,
        predictions=None,
        loss=None,
        train_op=None,
        eval_metric_ops=None,
        export_outputs=None,
        training_chief_hooks=None,
        training_hooks=None,
        scaffold=None,
        evaluation_hooks=None,
        prediction_hooks=None,
    ):
        mode = _validate_mode(mode)
        hooks = {
            "training_chief_hooks": training_chief_hooks,
            "training_hooks": training_hooks,
            "evaluation_hooks": evaluation_hooks,
            "prediction_hooks": prediction_hooks,
        }
        predictions = _validate_predictions(predictions, mode)
        return super().__new__(
            cls,
            mode=mode,
            predictions=predictions,
            loss=_validate_loss(loss, mode),
            train_op=_validate_train_op(train_op, mode),
            eval_metric_ops=_validate_eval_metric_ops(eval_metric_ops),
            export_outputs=_validate_export_outputs(export_outputs, predictions, mode),
            scaffold=_validate_scaffold(scaffold),
            **{field: _validate_hooks(value, field) for field, value in hooks.items()},
        )

    def _replace(self, **changes) -> EstimatorSpec:
        """Returns a new, re-validated spec with some fields changed.

        Raises:
            ValueError: on an unknown field name, or if `mode` would change.
        """
        unknown = sorted(set(changes) - set(self._fields))
        if unknown:
            raise ValueError(
                f"EstimatorSpec has no field(s) {unknown}; fields are "
                f"{list(self._fields)}."
            )
        if "mode" in changes and changes["mode"] != self.mode:
            raise ValueError(
                f"The mode of EstimatorSpec cannot be changed by _replace: it is "
                f"{self.mode!r}, got {changes['mode']!r}. Build a new EstimatorSpec."
            )
        fields = self._asdict()
        fields.update(changes)
        return type(self)(**fields)

    def _with_mode(self, mode: str) -> EstimatorSpec:
        """This spec, built with mode=None, validated for the mode it ran in."""
        fields = self._asdict()
        fields["mode"] = mode
        return type(self)(**fields)
