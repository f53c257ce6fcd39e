"""`ExportOutput`s: what each signature of an exported SavedModel returns.

A model_fn names its servable outputs in `EstimatorSpec.export_outputs`, a
dict of signature name -> `ExportOutput`. Each `ExportOutput` turns the
receiver tensors (the signature's inputs) into a TF1 `SignatureDef`, with the
input and output keys and the method name TensorFlow Serving dispatches on:

* `PredictOutput`: any named tensors (`tensorflow/serving/predict`);
* `ClassificationOutput`: `classes` and/or `scores` (`.../classify`);
* `RegressionOutput`: one float tensor, `outputs` (`.../regress`);
* `EvalOutput`: loss, predictions and metrics (`tensorflow/supervised/eval`).

Classify and regress signatures take a single string tensor of serialized
`tf.Example`s; with any other receiver, `as_signature_def` raises ValueError
and the exporter leaves that signature out, as tf.estimator did.

This module also owns the rule that fills in `export_outputs` for PREDICT
mode (`export_outputs_for_predict`). Behaviour and error types (ValueError for
bad outputs) follow tf.estimator 2.15.
"""

from __future__ import annotations

import abc
from collections.abc import Mapping
from typing import Any

import keras
import tensorflow as tf

from keras_estimator._src.tf_internals import deprecation_notices

DEFAULT_SERVING_KEY = tf.saved_model.DEFAULT_SERVING_SIGNATURE_DEF_KEY
SUPERVISED_EVAL_METHOD_NAME = "tensorflow/supervised/eval"
_MAX_REPR = 120


def describe(value: Any) -> str:
    """A short description of `value` for error messages (no tensor values)."""
    if isinstance(value, (tf.Tensor, tf.Variable, keras.KerasTensor)):
        dtype = getattr(value.dtype, "name", value.dtype)
        return f"{type(value).__name__}(shape={value.shape}, dtype={dtype})"
    text = repr(value)
    if len(text) > _MAX_REPR:
        text = text[: _MAX_REPR - 3] + "..."
    return f"{text} (type {type(value).__name__})"


def _tensor_info(tensor: tf.Tensor) -> Any:
    if isinstance(tensor, tf.Tensor):
        # Built directly: the v1 helper logs a deprecation warning per export.
        return tf.compat.v1.TensorInfo(
            name=tensor.name,
            dtype=tensor.dtype.as_datatype_enum,
            tensor_shape=tensor.shape.as_proto(),
        )
    with deprecation_notices.quiet():
        return tf.compat.v1.saved_model.build_tensor_info(tensor)


class ExportOutput(abc.ABC):
    """One servable output of a model: the outputs of one signature.

    Subclasses decide which tensors a signature returns and which TensorFlow
    Serving method (predict, classify, regress) it is called with.
    """

    _SEPARATOR_CHAR = "/"

    @abc.abstractmethod
    def as_signature_def(self, receiver_tensors: Mapping[str, tf.Tensor]) -> Any:
        """Returns a `SignatureDef` proto from `receiver_tensors` to these outputs.

        Called while the serving graph is built (graph mode), once per
        receiver (the default one and each alternative).

        Args:
            receiver_tensors: signature input name -> tensor.

        Raises:
            ValueError: the outputs cannot be served from these inputs; the
                exporter then leaves the signature out.
        """

    def _check_output_key(self, key: Any, error_label: str) -> str:
        # Multi-head models name outputs by (head, output) tuples.
        if isinstance(key, tuple) and all(isinstance(part, str) for part in key):
            key = self._SEPARATOR_CHAR.join(key)
        if not isinstance(key, str):
            raise ValueError(
                f"{error_label} output key must be a string (or a tuple of "
                f"strings); got {describe(key)}. Name each output with a string."
            )
        return key

    def _wrap_and_check_outputs(
        self, outputs: Any, single_output_default_name: str, error_label: str
    ) -> dict[str, tf.Tensor]:
        """Returns `outputs` as a new dict of key -> tensor, checked.

        A single tensor is keyed by `single_output_default_name`.
        """
        if not isinstance(outputs, Mapping):
            outputs = {single_output_default_name: outputs}
        checked = {}
        for key, value in outputs.items():
            key = self._check_output_key(key, error_label)
            if not isinstance(value, tf.Tensor):
                raise ValueError(
                    f"{error_label} output value must be a tf.Tensor; got "
                    f"{describe(value)} for key {key!r}. Compute it with "
                    "TensorFlow ops in model_fn (tf.convert_to_tensor for a "
                    "variable)."
                )
            checked[key] = value
        return checked


def _check_single_string_input(
    receiver_tensors: Mapping[str, Any], kind: str
) -> tf.Tensor:
    """The one string tensor a classify/regress signature reads examples from."""
    tensors = list(receiver_tensors.values())
    if len(tensors) != 1 or tensors[0].dtype != tf.string:
        received = {k: describe(v) for k, v in receiver_tensors.items()}
        raise ValueError(
            f"{kind} signatures can only take a single tf.string tensor of "
            f"serialized tf.Examples as input; got {received}. Make the "
            "serving_input_receiver_fn take one string placeholder (e.g. "
            "build_parsing_serving_input_receiver_fn) and parse it with "
            "tf.io.parse_example, or use a PredictOutput."
        )
    return tensors[0]


class ClassificationOutput(ExportOutput):
    """The output of a classifier: per-class `scores` and/or `classes` labels.

    With only `classes`, they are read as top-k labels in descending order;
    with only `scores`, as one score per class id; with both, as zipped
    (score i belongs to class i).

    Args:
        scores: a float tensor of class scores, or None if `classes` is set.
        classes: a string tensor of class labels (not integer ids), or None
            if `scores` is set.

    Raises:
        ValueError: neither is given, or one has the wrong type.
    """

    def __init__(self, scores: Any = None, classes: Any = None) -> None:
        if scores is not None and not (
            isinstance(scores, tf.Tensor) and scores.dtype.is_floating
        ):
            raise ValueError(
                f"Classification scores must be a float tf.Tensor; got "
                f"{describe(scores)}. Pass e.g. tf.nn.softmax(logits)."
            )
        if classes is not None and not (
            isinstance(classes, tf.Tensor) and classes.dtype == tf.string
        ):
            raise ValueError(
                f"Classification classes must be a string tf.Tensor; got "
                f"{describe(classes)}. Convert class ids with tf.strings.as_string "
                "or a vocabulary lookup."
            )
        if scores is None and classes is None:
            raise ValueError(
                "Cannot create a ClassificationOutput with empty arguments: pass "
                "`scores`, `classes` or both."
            )
        self._scores = scores
        self._classes = classes

    @property
    def scores(self) -> tf.Tensor | None:
        return self._scores

    @property
    def classes(self) -> tf.Tensor | None:
        return self._classes

    def as_signature_def(self, receiver_tensors: Mapping[str, tf.Tensor]) -> Any:
        examples = _check_single_string_input(receiver_tensors, "Classification")
        return tf.compat.v1.saved_model.classification_signature_def(
            examples, self._classes, self._scores
        )


class RegressionOutput(ExportOutput):
    """The output of a regressor: one float tensor of predicted values.

    Args:
        value: a float tensor.

    Raises:
        ValueError: `value` is not a float tensor.
    """

    def __init__(self, value: Any) -> None:
        if not (isinstance(value, tf.Tensor) and value.dtype.is_floating):
            raise ValueError(
                f"Regression output value must be a float tf.Tensor; got "
                f"{describe(value)}. Cast it with tf.cast(value, tf.float32)."
            )
        self._value = value

    @property
    def value(self) -> tf.Tensor:
        return self._value

    def as_signature_def(self, receiver_tensors: Mapping[str, tf.Tensor]) -> Any:
        examples = _check_single_string_input(receiver_tensors, "Regression")
        return tf.compat.v1.saved_model.regression_signature_def(examples, self._value)


class PredictOutput(ExportOutput):
    """Any named prediction tensors, served by the generic predict method.

    Args:
        outputs: a tensor (keyed `output`) or a dict of name -> tensor.

    Raises:
        ValueError: a key is not a string or a value is not a tensor.
    """

    _SINGLE_OUTPUT_DEFAULT_NAME = "output"

    def __init__(self, outputs: Any) -> None:
        self._outputs = self._wrap_and_check_outputs(
            outputs, self._SINGLE_OUTPUT_DEFAULT_NAME, error_label="Prediction"
        )

    @property
    def outputs(self) -> dict[str, tf.Tensor]:
        return self._outputs

    def as_signature_def(self, receiver_tensors: Mapping[str, tf.Tensor]) -> Any:
        return tf.compat.v1.saved_model.predict_signature_def(
            dict(receiver_tensors), self._outputs
        )


class EvalOutput(ExportOutput):
    """Loss, predictions and metrics of an evaluation, as one signature.

    Output keys are prefixed with `loss`, `predictions` and `metrics`; each
    metric gives `metrics/<name>/value` and `metrics/<name>/update_op`.

    Args:
        loss: a tensor or dict of tensors.
        predictions: a tensor or dict of tensors.
        metrics: a `(value_tensor, update_op)` tuple or a dict of name -> such
            tuples (as `tf.compat.v1.metrics.*` return).

    Raises:
        ValueError: a key is not a string or a value has the wrong type.
        TypeError: a metric is a `keras.metrics.Metric`, which has no update op.
    """

    LOSS_NAME = "loss"
    PREDICTIONS_NAME = "predictions"
    METRICS_NAME = "metrics"
    METRIC_VALUE_SUFFIX = "value"
    METRIC_UPDATE_SUFFIX = "update_op"

    def __init__(self, loss: Any = None, predictions: Any = None, metrics: Any = None):
        self._loss = self._prefixed(loss, self.LOSS_NAME)
        self._predictions = self._prefixed(predictions, self.PREDICTIONS_NAME)
        self._metrics = None if metrics is None else self._check_metrics(metrics)

    def _prefixed(self, outputs: Any, name: str) -> dict[str, tf.Tensor] | None:
        if outputs is None:
            return None
        checked = self._wrap_and_check_outputs(outputs, name, error_label=name)
        return {self._prefix_key(key, name): value for key, value in checked.items()}

    def _prefix_key(self, key: str, name: str) -> str:
        return key if key.startswith(name) else f"{name}{self._SEPARATOR_CHAR}{key}"

    def _check_metrics(self, metrics: Any) -> dict[str, tf.Tensor]:
        if not isinstance(metrics, Mapping):
            metrics = {self.METRICS_NAME: metrics}
        outputs = {}
        for key, metric in metrics.items():
            key = self._prefix_key(
                self._check_output_key(key, self.METRICS_NAME), self.METRICS_NAME
            )
            if isinstance(metric, keras.metrics.Metric):
                raise TypeError(
                    f"EvalOutput metric {key!r} is a keras.metrics.Metric, which "
                    "has no update op to export. Pass a (value_tensor, update_op) "
                    "tuple such as tf.compat.v1.metrics.accuracy(labels, classes)."
                )
            if not (isinstance(metric, tuple) and len(metric) == 2):
                raise ValueError(
                    f"EvalOutput metric {key!r} must be a (value_tensor, update_op) "
                    f"tuple; got {describe(metric)}."
                )
            value, update_op = metric
            if not isinstance(value, tf.Tensor):
                raise ValueError(
                    f"{key} output value must be a tf.Tensor; got {describe(value)}."
                )
            if not isinstance(update_op, (tf.Tensor, tf.Operation, tf.Variable)):
                raise ValueError(
                    f"{key} update_op must be a tf.Tensor or tf.Operation; got "
                    f"{describe(update_op)}."
                )
            if isinstance(update_op, tf.Operation):
                # A SignatureDef lists tensors only: run the op before an
                # empty constant that stands for it.
                with tf.control_dependencies([update_op]):
                    update_op = tf.constant([], name="metric_op_wrapper")
            sep = self._SEPARATOR_CHAR
            outputs[f"{key}{sep}{self.METRIC_VALUE_SUFFIX}"] = value
            outputs[f"{key}{sep}{self.METRIC_UPDATE_SUFFIX}"] = tf.convert_to_tensor(
                update_op
            )
        return outputs

    @property
    def loss(self) -> dict[str, tf.Tensor] | None:
        return self._loss

    @property
    def predictions(self) -> dict[str, tf.Tensor] | None:
        return self._predictions

    @property
    def metrics(self) -> dict[str, tf.Tensor] | None:
        return self._metrics

    def as_signature_def(self, receiver_tensors: Mapping[str, tf.Tensor]) -> Any:
        outputs = {**(self._loss or {}), **(self._predictions or {})}
        outputs.update(self._metrics or {})
        if not receiver_tensors or not outputs:
            raise ValueError(
                "An eval signature needs inputs and at least one of loss, "
                f"predictions or metrics; got inputs {list(receiver_tensors)} and "
                f"outputs {list(outputs)}."
            )
        return tf.compat.v1.saved_model.build_signature_def(
            inputs={k: _tensor_info(v) for k, v in receiver_tensors.items()},
            outputs={k: _tensor_info(v) for k, v in outputs.items()},
            method_name=SUPERVISED_EVAL_METHOD_NAME,
        )


def export_outputs_for_predict(
    export_outputs: Mapping[str, Any] | None, predictions: Any
) -> dict[str, ExportOutput]:
    """The PREDICT-mode signatures: the spec's `export_outputs`, completed.

    With no `export_outputs`, the predictions are served as
    `serving_default`. A single output under another name is also served as
    `serving_default`; several outputs must include that key. An empty dict
    stays empty (no signatures), as tf.estimator 2.15 took it.

    Raises:
        TypeError: `export_outputs` is not a dict of name -> ExportOutput.
        ValueError: several outputs and none named `serving_default`.
    """
    if export_outputs is None:
        return {DEFAULT_SERVING_KEY: PredictOutput(predictions)}
    if not isinstance(export_outputs, Mapping):
        raise TypeError(
            "EstimatorSpec.export_outputs must be a dict of signature name -> "
            f"ExportOutput; got {describe(export_outputs)}."
        )
    outputs = dict(export_outputs)
    for key, value in outputs.items():
        if not isinstance(key, str):
            raise TypeError(
                f"EstimatorSpec.export_outputs keys must be signature-name "
                f"strings; got key {describe(key)}."
            )
        if not isinstance(value, ExportOutput):
            raise TypeError(
                f"EstimatorSpec.export_outputs[{key!r}] must be an ExportOutput "
                f"(PredictOutput, ClassificationOutput, RegressionOutput); got "
                f"{describe(value)}. Wrap tensors as e.g. "
                "keras_estimator.export.PredictOutput({'name': tensor})."
            )
    if len(outputs) == 1:
        outputs.setdefault(DEFAULT_SERVING_KEY, next(iter(outputs.values())))
    elif outputs and DEFAULT_SERVING_KEY not in outputs:
        raise ValueError(
            "Multiple `export_outputs` were provided, but none of them are "
            "specified as the default: "
            f"EstimatorSpec.export_outputs has several signatures {sorted(outputs)} "
            f"but none is named {DEFAULT_SERVING_KEY!r}, the one served by "
            "default. Name one of them "
            "tf.saved_model.DEFAULT_SERVING_SIGNATURE_DEF_KEY."
        )
    return outputs
