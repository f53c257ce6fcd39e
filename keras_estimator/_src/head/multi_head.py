"""`MultiHead`: several named heads trained together on one model's logits.

With tf.estimator 2.15's semantics: logits are a dict by head name, or one
tensor split along its last dimension in head order; labels are a dict by
head name. The loss is the (`head_weights`-)weighted sum of the heads'
losses plus `regularization_losses`. Predictions are keyed
`(head_name, prediction_key)`. Metrics are each head's own (suffixed with its
name by the head) plus `loss/<head_name>`, and
`regularization_loss/<names joined by _>` when regularization losses are
given (an empty list counts as none). Signatures: `serving_default` is the first head's default, each head's
default again under `<head_name>` and its others under
`<head_name>/<signature>`, and `predict` merges every head's predict outputs
under `<head_name>/<key>`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import tensorflow as tf

from keras_estimator._src.base import export_outputs
from keras_estimator._src.base.estimator_spec import EstimatorSpec
from keras_estimator._src.base.mode_keys import ModeKeys
from keras_estimator._src.head import base_head, training_scope, training_summaries
from keras_estimator._src.head.base_head import DEFAULT_SERVING_KEY, PREDICT_SERVING_KEY


class MultiHead(base_head.Head):
    """Merges named heads: summed losses, name-keyed predictions and metrics.

    Args:
        heads: the heads, each with a `name`; the first is served by default.
        head_weights: one float per head, weighting its loss in the sum;
            without it every head weighs 1.

    Example:
        ```python
        head = MultiHead([MultiClassHead(3, name="kind"), BinaryClassHead(name="ok")])
        # input_fn returns labels {"kind": ..., "ok": ...}; the model returns
        # logits of width head.logits_dimension (4) or a dict by head name.
        ```
    """

    def __init__(
        self, heads: Sequence[base_head.Head], head_weights: Sequence[float] | None = None
    ) -> None:
        if not heads:
            raise ValueError(
                f"Must specify heads. Given: {heads!r}. Pass a list of named heads."
            )
        if head_weights and len(head_weights) != len(heads):
            raise ValueError(
                "heads and head_weights must have the same size. Given len(heads): "
                f"{len(heads)}. Given len(head_weights): {len(head_weights)}. Give one "
                "weight per head, or none."
            )
        names = [head.name for head in heads]
        for head in heads:
            if not head.name:
                raise ValueError(
                    f"All given heads must have name specified. Given: {head!r}. Create "
                    "each head of a MultiHead with name='...'."
                )
        if len(set(names)) != len(names):
            raise ValueError(
                f"The heads of a MultiHead need distinct names, got {names}. Rename them."
            )
        self._heads = tuple(heads)
        self._head_weights = tuple(float(w) for w in head_weights) if head_weights else ()

    @property
    def heads(self) -> tuple[base_head.Head, ...]:
        """The merged heads, in order."""
        return self._heads

    @property
    def name(self) -> str:
        """The heads' names joined by `_`."""
        return "_".join(self._names)

    @property
    def _names(self) -> list[str]:
        return [str(head.name) for head in self._heads]

    @property
    def logits_dimension(self) -> int:
        """The sum of the heads' logits dimensions."""
        return sum(head.logits_dimension for head in self._heads)

    @property
    def loss_reduction(self) -> str:
        """The heads' common loss reduction (they must agree)."""
        reductions = [head.loss_reduction for head in self._heads]
        if len(set(reductions)) > 1:
            raise ValueError(
                f"The loss_reduction must be the same for different heads. Given: {reductions} "
                f"for {self._names}. Give every head the same loss_reduction."
            )
        return reductions[0]

    def logits_by_head(self, logits: Any) -> dict[str, Any]:
        """`logits` as a dict by head name, splitting a tensor in head order."""
        if isinstance(logits, Mapping):
            missing = sorted(set(self._names) - set(logits))
            if missing:
                raise ValueError(
                    f"logits has no values for head(s) {missing}; got keys "
                    f"{sorted(logits)}. Give one entry per head name."
                )
            return {name: logits[name] for name in self._names}
        return self._split_logits(tf.convert_to_tensor(logits))

    def _split_logits(self, logits: tf.Tensor) -> dict[str, Any]:
        dimensions = [head.logits_dimension for head in self._heads]
        if logits.shape.rank is not None and logits.shape[-1] not in (None, sum(dimensions)):
            raise ValueError(
                f"Could not split logits of shape {logits.shape} among the heads {self._names} "
                f"with logits dimensions {dimensions}: the last dimension must be "
                f"{sum(dimensions)}."
            )
        pieces = tf.split(logits, dimensions, axis=-1)
        return dict(zip(self._names, pieces, strict=True))

    def _labels_by_head(self, labels: Any) -> Mapping[str, Any]:
        if not isinstance(labels, Mapping):
            raise ValueError(
                f"MultiHead labels must be a dict by head name ({self._names}), got "
                f"{type(labels).__name__}. Return labels as {{head_name: labels}} from "
                "input_fn."
            )
        missing = sorted(set(self._names) - set(labels))
        if missing:
            raise ValueError(
                f"labels has no values for head(s) {missing}; got keys {sorted(labels)}."
            )
        return labels

    def loss(
        self,
        labels: Any,
        logits: Any,
        features: Any = None,
        mode: str | None = None,
        regularization_losses: Sequence[Any] | None = None,
    ) -> tf.Tensor:
        logits_by_head = self.logits_by_head(logits)
        labels_by_head = self._labels_by_head(labels)
        losses = [
            head.loss(labels_by_head[name], logits_by_head[name], features, mode)
            for name, head in zip(self._names, self._heads, strict=True)
        ]
        if self._head_weights:
            losses = [
                loss * weight for loss, weight in zip(losses, self._head_weights, strict=True)
            ]
        loss = tf.add_n(losses)
        if regularization_losses:
            loss = loss + tf.add_n(list(regularization_losses))
        return loss

    def predictions(self, logits: Any, keys: Sequence[str] | None = None) -> dict[Any, Any]:
        """Every head's predictions, keyed `(head_name, prediction_key)`."""
        logits_by_head = self.logits_by_head(logits)
        predictions: dict[Any, Any] = {}
        for name, head in zip(self._names, self._heads, strict=True):
            for key, value in head.predictions(logits_by_head[name]).items():
                predictions[(name, key)] = value
        return predictions

    def metrics(self, regularization_losses: Sequence[Any] | None = None) -> dict[str, Any]:
        """`loss/<head_name>` means (the heads' own metrics join in `update_metrics`)."""
        metrics: dict[str, Any] = {}
        if regularization_losses:
            metrics[self._regularization_key] = base_head.mean_metric("regularization_loss")
        for name in self._names:
            metrics[f"loss/{name}"] = base_head.mean_metric(f"loss/{name}")
        return metrics

    @property
    def _regularization_key(self) -> str:
        return f"regularization_loss/{self.name}"

    def update_metrics(
        self,
        eval_metrics: dict[str, Any],
        features: Any,
        logits: Any,
        labels: Any,
        regularization_losses: Sequence[Any] | None = None,
    ) -> dict[str, Any]:
        logits_by_head = self.logits_by_head(logits)
        labels_by_head = self._labels_by_head(labels)
        if regularization_losses:
            eval_metrics[self._regularization_key].update_state(
                tf.add_n(list(regularization_losses))
            )
        for name, head in zip(self._names, self._heads, strict=True):
            head_logits, head_labels = logits_by_head[name], labels_by_head[name]
            eval_metrics[f"loss/{name}"].update_state(
                head.loss(head_labels, head_logits, features)
            )
            updated = head.update_metrics(head.metrics(), features, head_logits, head_labels)
            eval_metrics.update(updated or {})
        return eval_metrics

    def create_estimator_spec(
        self,
        features: Any,
        mode: str,
        logits: Any,
        labels: Any = None,
        optimizer: Any = None,
        trainable_variables: Sequence[Any] | None = None,
        train_op_fn: Callable[[Any], Any] | None = None,
        update_ops: Sequence[Any] | None = None,
        regularization_losses: Sequence[Any] | None = None,
    ) -> EstimatorSpec:
        """The `EstimatorSpec` of `mode`; see `Head.create_estimator_spec`."""
        predictions = self.predictions(logits)
        if mode == ModeKeys.PREDICT:
            return EstimatorSpec(
                mode,
                predictions=predictions,
                export_outputs=self._merged_export_outputs(features, logits),
            )
        loss = self.loss(labels, logits, features, mode, regularization_losses)
        if mode == ModeKeys.EVAL:
            metrics = self.update_metrics(
                self.metrics(regularization_losses),
                features,
                logits,
                labels,
                regularization_losses,
            )
            return EstimatorSpec(
                mode, predictions=predictions, loss=loss, eval_metric_ops=metrics
            )
        if mode != ModeKeys.TRAIN:
            raise ValueError(
                f"mode must be one of {[ModeKeys.TRAIN, ModeKeys.EVAL, ModeKeys.PREDICT]}, "
                f"got {mode!r}."
            )
        # In 2.15's scope: each head's create_estimator_spec took a
        # `training` name scope first (`training_scope`).
        train_op = base_head._train_op(
            loss,
            self.loss_reduction,
            optimizer,
            trainable_variables,
            train_op_fn,
            update_ops,
            scope=training_scope.multi_head_scope(len(self._heads)),
        )
        # As 2.15, each head's own loss (`loss/<name>`) and the merged one's.
        logits_by_head = self.logits_by_head(logits)
        labels_by_head = self._labels_by_head(labels)
        for name, head in zip(self._names, self._heads, strict=True):
            head_loss = head.loss(labels_by_head[name], logits_by_head[name], features, mode)
            training_summaries.scalar(f"loss/{name}", head_loss)
        base_head.loss_summaries(None, loss, regularization_losses)
        return EstimatorSpec(mode, predictions=predictions, loss=loss, train_op=train_op)

    def _merged_export_outputs(self, features: Any, logits: Any) -> dict[str, Any]:
        logits_by_head = self.logits_by_head(logits)
        merged: dict[str, Any] = {}
        predict_outputs: dict[str, Any] = {}
        for index, (name, head) in enumerate(zip(self._names, self._heads, strict=True)):
            spec = head.create_estimator_spec(features, ModeKeys.PREDICT, logits_by_head[name])
            outputs = dict(spec.export_outputs or {})
            if index == 0:
                merged[DEFAULT_SERVING_KEY] = _default_export_output(outputs, name)
            for key, output in outputs.items():
                merged[name if key == DEFAULT_SERVING_KEY else f"{name}/{key}"] = output
                if key == PREDICT_SERVING_KEY and isinstance(output, export_outputs.PredictOutput):
                    for output_key, tensor in output.outputs.items():
                        predict_outputs[f"{name}/{output_key}"] = tensor
        merged[PREDICT_SERVING_KEY] = export_outputs.PredictOutput(predict_outputs)
        return merged


def _default_export_output(outputs: Mapping[str, Any], head_name: str) -> Any:
    if len(outputs) == 1:
        return next(iter(outputs.values()))
    if DEFAULT_SERVING_KEY not in outputs:
        raise ValueError(
            f"Head {head_name!r} gives no {DEFAULT_SERVING_KEY!r} export output (got "
            f"{sorted(outputs)}). Add a {DEFAULT_SERVING_KEY!r} entry to its export_outputs."
        )
    return outputs[DEFAULT_SERVING_KEY]
