"""`Head`: what a canned model's logits become in each mode.

A head turns the logits a model computes into the loss, the predictions,
the evaluation metrics and the export signatures, and builds the
`EstimatorSpec` a model_fn returns (`create_estimator_spec`), with the
semantics of tf.estimator 2.15's heads: the loss is reduced with
`loss_reduction` (by default the weighted sum over the batch divided by its
number of elements), example weights come from `weight_column`, and the
training loss adds `regularization_losses`.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import keras
import tensorflow as tf

from keras_estimator._src.base.estimator_spec import EstimatorSpec
from keras_estimator._src.base.mode_keys import ModeKeys
from keras_estimator._src.head import head_inputs, training_scope, training_summaries

SUM_OVER_BATCH_SIZE = "sum_over_batch_size"
SUM = "sum"
AUTO = "auto"  # 2.15 accepted it: a mean over the batch, like sum_over_batch_size.
# Only the tf.compat.v1 canned estimators' heads take these (`v1_heads`).
WEIGHTED_MEAN = "weighted_mean"
SUM_BY_NONZERO_WEIGHTS = "weighted_sum_by_nonzero_weights"
_REDUCTIONS = (SUM_OVER_BATCH_SIZE, SUM, AUTO)

# tf.estimator 2.15's signature-def keys of a head's export outputs.
CLASSIFY_SERVING_KEY = "classification"
REGRESS_SERVING_KEY = "regression"
PREDICT_SERVING_KEY = "predict"
DEFAULT_SERVING_KEY = "serving_default"


class Head(abc.ABC):
    """Interface of a head; see the module.

    Subclasses implement the abstract members and either
    `create_estimator_spec` or `_create_tpu_estimator_spec`, as in 2.15.
    """

    @property
    @abc.abstractmethod
    def name(self) -> str | None:
        """The head's name (prefixes its metric keys in a `MultiHead`)."""
        raise NotImplementedError

    @property
    @abc.abstractmethod
    def logits_dimension(self) -> int:
        """The size of the last dimension of the logits the head expects."""
        raise NotImplementedError

    @property
    @abc.abstractmethod
    def loss_reduction(self) -> str:
        """How the training loss is reduced over the batch."""
        raise NotImplementedError

    @abc.abstractmethod
    def loss(
        self,
        labels: Any,
        logits: Any,
        features: Any = None,
        mode: str | None = None,
        regularization_losses: Sequence[Any] | None = None,
    ) -> tf.Tensor:
        """The training loss: weighted, reduced, plus `regularization_losses`."""
        raise NotImplementedError

    @abc.abstractmethod
    def predictions(self, logits: Any, keys: Sequence[str] | None = None) -> dict[str, Any]:
        """The prediction dict (only `keys` if given)."""
        raise NotImplementedError

    @abc.abstractmethod
    def metrics(self, regularization_losses: Sequence[Any] | None = None) -> dict[str, Any]:
        """New Keras metric objects for one evaluation, by metric key."""
        raise NotImplementedError

    @abc.abstractmethod
    def update_metrics(
        self,
        eval_metrics: dict[str, Any],
        features: Any,
        logits: Any,
        labels: Any,
        regularization_losses: Sequence[Any] | None = None,
    ) -> dict[str, Any]:
        """Updates `eval_metrics` with one batch; returns the eval_metric_ops."""
        raise NotImplementedError

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
        """The `EstimatorSpec` of `mode` for these logits.

        In TRAIN mode exactly one of `optimizer` (with `trainable_variables`)
        or `train_op_fn(loss)` makes the train op; `update_ops` run with it.
        Here, the `EstimatorSpec` of the subclass's `_create_tpu_estimator_spec`.
        """
        try:
            tpu_spec = self._create_tpu_estimator_spec(
                features=features,
                mode=mode,
                logits=logits,
                labels=labels,
                optimizer=optimizer,
                trainable_variables=trainable_variables,
                train_op_fn=train_op_fn,
                update_ops=update_ops,
                regularization_losses=regularization_losses,
            )
        except NotImplementedError:
            raise NotImplementedError(
                "Subclasses of Head must implement `create_estimator_spec()` or "
                f"_create_tpu_estimator_spec(). {type(self).__name__} implements neither."
            ) from None
        return tpu_spec.as_estimator_spec()

    def _create_tpu_estimator_spec(
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
    ) -> Any:
        """A `TPUEstimatorSpec` of `mode`, for heads that build one."""
        raise NotImplementedError("TPUEstimatorSpec not available for this model head.")

    def export_outputs(self, predictions: Mapping[str, Any]) -> dict[str, Any]:
        """The SavedModel signatures of this head's predictions."""
        raise NotImplementedError


class WeightedHead(Head):
    """What the single heads share: a name, example weights, the reduced loss.

    Subclasses set `_name`, `_weight_column`, `_loss_reduction` and
    `_loss_fn`, and implement `processed_labels(labels, logits)` (labels
    checked against the logits, in the form the loss takes) and
    `unweighted_loss(labels, logits, features)` (one loss per position).
    Logits are `[D0, ... DN, logits_dimension]`; see `head_inputs`.
    """

    _name: str | None
    _weight_column: Any
    _loss_reduction: str
    _loss_fn: Callable[..., Any] | None = None
    # Whether example weights may also be given per logit ([D0..DN, dimension]).
    _per_logit_weights = False

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
        """The `EstimatorSpec` of `mode`; see `Head.create_estimator_spec`.

        In TRAIN mode exactly one of `optimizer` (with `trainable_variables`)
        or `train_op_fn(loss)` makes the train op; `update_ops` run with it.
        """
        predictions = self.predictions(logits)
        if mode == ModeKeys.PREDICT:
            return EstimatorSpec(
                mode,
                predictions=predictions,
                export_outputs=self.export_outputs(predictions),
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
        train_op = _train_op(
            loss, self.loss_reduction, optimizer, trainable_variables, train_op_fn, update_ops
        )
        loss_summaries(self.name, loss, regularization_losses)
        return EstimatorSpec(mode, predictions=predictions, loss=loss, train_op=train_op)

    @property
    def name(self) -> str | None:
        return self._name

    @property
    def loss_reduction(self) -> str:
        return self._loss_reduction

    def checked_logits(self, logits: Any) -> tf.Tensor:
        return head_inputs.check_logits(logits, self.logits_dimension)

    def processed_labels(self, labels: Any, logits: tf.Tensor) -> tf.Tensor:
        raise NotImplementedError

    def unweighted_loss(self, labels: tf.Tensor, logits: tf.Tensor, features: Any) -> tf.Tensor:
        raise NotImplementedError

    def weights(self, features: Any, logits: Any) -> tf.Tensor:
        """Example weights from `weight_column`, broadcastable against the loss.

        `[D0, ... DN, 1]` (or per logit where the head allows it); ones
        without a weight column.
        """
        logits = self.checked_logits(logits)
        weights = head_inputs.example_weights(
            features, self._weight_column, logits, self._per_logit_weights
        )
        if isinstance(weights, float):
            return tf.ones_like(logits[..., :1])
        return weights

    def loss_and_weights(
        self, labels: Any, logits: Any, features: Any
    ) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor, tf.Tensor]:
        """Checked logits, processed labels, unweighted loss and weights."""
        logits = self.checked_logits(logits)
        labels = self.processed_labels(labels, logits)
        unweighted = self.unweighted_loss(labels, logits, features)
        return logits, labels, unweighted, self.weights(features, logits)

    def loss(
        self,
        labels: Any,
        logits: Any,
        features: Any = None,
        mode: str | None = None,
        regularization_losses: Sequence[Any] | None = None,
    ) -> tf.Tensor:
        _, _, unweighted, weights = self.loss_and_weights(labels, logits, features)
        loss = head_inputs.weighted_loss(unweighted, weights, self._loss_reduction)
        return add_regularization(loss, regularization_losses)

    def call_loss_fn(
        self, labels: tf.Tensor, logits: tf.Tensor, features: Any, loss_dimension: int = 1
    ) -> tf.Tensor:
        assert self._loss_fn is not None
        return head_inputs.call_loss_fn(self._loss_fn, labels, logits, features, loss_dimension)

    def key(self, metric: str) -> str:
        """A metric's key: `<metric>/<name>` for a named head."""
        return f"{metric}/{self._name}" if self._name else metric

    def regularization_metrics(
        self, regularization_losses: Sequence[Any] | None
    ) -> dict[str, Any]:
        """`regularization_loss`, when regularization losses are given."""
        if not regularization_losses:
            return {}
        return {self.key("regularization_loss"): mean_metric("regularization_loss")}

    def update_regularization_metric(
        self, eval_metrics: dict[str, Any], regularization_losses: Sequence[Any] | None
    ) -> None:
        if regularization_losses:
            eval_metrics[self.key("regularization_loss")].update_state(
                tf.add_n([tf.cast(r, tf.float32) for r in regularization_losses])
            )


def loss_summaries(
    name: str | None, loss: tf.Tensor, regularization_losses: Sequence[Any] | None
) -> None:
    """2.15's training summaries of a head's loss (`head.training_summaries`).

    A named head's loss is tagged `loss/<name>` (the Estimator still writes
    the spec's loss as `loss`), an unnamed head's `loss`, and given
    regularization losses their sum is `regularization_loss[/<name>]`.
    """
    if name:
        training_summaries.scalar(f"loss/{name}", loss)
    else:
        training_summaries.loss(loss)
    if regularization_losses:
        key = f"regularization_loss/{name}" if name else "regularization_loss"
        training_summaries.scalar(
            key, tf.add_n([tf.cast(r, tf.float32) for r in regularization_losses])
        )


def check_head(head: Any) -> Head:
    """`head`, if it is a Head; a TypeError naming what was given otherwise."""
    if not isinstance(head, Head):
        raise TypeError(
            f"head must be a keras_estimator Head (MultiClassHead, ...), got "
            f"{type(head).__name__}: {head!r}."
        )
    return head


def check_loss_reduction(loss_reduction: Any) -> str:
    if loss_reduction not in _REDUCTIONS:
        raise ValueError(
            f"Invalid loss_reduction: {loss_reduction}. See `tf.losses.Reduction` for "
            f"valid options: {list(_REDUCTIONS)}."
        )
    return str(loss_reduction)


def add_regularization(loss: tf.Tensor, regularization_losses: Sequence[Any] | None) -> tf.Tensor:
    if not regularization_losses:
        return loss
    return loss + tf.add_n([tf.cast(r, loss.dtype) for r in regularization_losses])


def mean_metric(name: str) -> keras.metrics.Mean:
    return keras.metrics.Mean(name=name)


def _train_op(
    loss: tf.Tensor,
    loss_reduction: str,
    optimizer: Any,
    trainable_variables: Sequence[Any] | None,
    train_op_fn: Callable[[Any], Any] | None,
    update_ops: Sequence[Any] | None,
    scope: str = training_scope.DEFAULT,
) -> Any:
    """The train op; optimizers name their variables under `scope` (`training_scope`)."""
    with training_scope.building_train_op(scope):
        return _train_op_in_scope(
            loss, loss_reduction, optimizer, trainable_variables, train_op_fn, update_ops
        )


def _train_op_in_scope(
    loss: tf.Tensor,
    loss_reduction: str,
    optimizer: Any,
    trainable_variables: Sequence[Any] | None,
    train_op_fn: Callable[[Any], Any] | None,
    update_ops: Sequence[Any] | None,
) -> Any:
    _check_list("update_ops", update_ops)
    if optimizer is not None and train_op_fn is not None:
        raise ValueError(
            "train_op_fn and optimizer cannot both be set. create_estimator_spec in "
            f"TRAIN mode takes one of them; got optimizer={optimizer!r} and "
            f"train_op_fn={train_op_fn!r}."
        )
    if optimizer is None and train_op_fn is None:
        raise ValueError(
            "train_op_fn and optimizer cannot both be None. Pass optimizer= (a Keras "
            "optimizer, with trainable_variables=) or train_op_fn=loss -> train_op."
        )
    if optimizer is not None:
        if not (hasattr(optimizer, "get_updates") or isinstance(optimizer, keras.optimizers.Optimizer)):
            raise ValueError(
                "The given optimizer is not a tf.keras.optimizers.Optimizer instance. "
                f"Received optimizer of type {type(optimizer)}. Pass a Keras optimizer, "
                "or wrap a tf.compat.v1.train optimizer's minimize in train_op_fn."
            )
        if trainable_variables is None:
            raise ValueError(
                "trainable_variables cannot be None. Given None. Pass the variables the "
                "optimizer should train, e.g. tf.compat.v1.trainable_variables()."
            )
        _check_list("trainable_variables", trainable_variables)
        replicas = tf.distribute.get_strategy().num_replicas_in_sync
        if loss_reduction == SUM_OVER_BATCH_SIZE and replicas > 1:
            # Each replica's loss is its share of the batch's mean, as in
            # tf.estimator 2.15; the optimizer sums the replicas' gradients.
            loss = loss / replicas
        variables = list(trainable_variables)
        if hasattr(optimizer, "get_updates"):
            # tf.estimator's optimizers (`canned.optimizers`): slots under
            # tf.keras 2's names, global step as the iteration count.
            train_op = optimizer.get_updates(loss, variables)[0]
        else:
            # A Keras 3 optimizer; the Estimator advances the global step.
            gradients = tf.compat.v1.gradients(loss, variables)
            train_op = optimizer.apply_gradients(zip(gradients, variables, strict=True))
    else:
        train_op = train_op_fn(loss)  # type: ignore[misc]
    if update_ops:
        return tf.group(train_op, *update_ops)
    return train_op


def _check_list(name: str, value: Any) -> None:
    if value is not None and not isinstance(value, (list, tuple)):
        raise ValueError(
            f"{name} should be a list or a tuple. Given type: {type(value)}. Pass "
            f"{name}=list(...)."
        )
