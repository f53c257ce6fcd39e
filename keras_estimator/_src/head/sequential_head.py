"""`SequentialHeadWrapper`: a head applied at every step of a sequence, as in 2.15.

tf.estimator 2.15's RNN estimators with `return_sequences=True` wrap their
per-example head in one: the loss and metrics are the wrapped head's over the
steps the sequence mask keeps, and predictions keep the time axis.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import tensorflow as tf

from keras_estimator._src.base.estimator_spec import EstimatorSpec
from keras_estimator._src.base.mode_keys import ModeKeys
from keras_estimator._src.head.base_head import Head, check_head
from keras_estimator._src.head.multi_head import MultiHead


class SequentialHeadWrapper(Head):
    """A head over every time step: `static_head` on the steps the mask keeps.

    Logits and labels `[batch, time, ...]` (and the features named in
    `feature_columns`, e.g. a weight) are flattened to the unmasked steps
    before `static_head` computes the loss and metrics. Predictions keep the
    `[batch, time, ...]` shape and add the mask under its key.

    Args:
        static_head: the per-step head (not a `MultiHead`).
        sequence_length_mask: the feature key of the `[batch, time]` boolean
            mask.
        feature_columns: a feature key, or a list of them, to flatten with
            the mask (typically the weight column).

    Raises:
        TypeError: if `sequence_length_mask` or a feature key is not a string.
        ValueError: if `static_head` is a `MultiHead`.
    """

    def __init__(
        self,
        static_head: Head,
        sequence_length_mask: str = "sequence_length_mask",
        feature_columns: str | Sequence[str] | None = None,
    ) -> None:
        if not isinstance(sequence_length_mask, str):
            raise TypeError(
                "`sequence_mask` column must be a string. Given type: "
                f"{type(sequence_length_mask)} ({sequence_length_mask!r}). Give the "
                "feature key of the [batch, time] mask."
            )
        if feature_columns is not None and not isinstance(feature_columns, (str, Iterable)):
            raise TypeError(
                "`feature_columns` must be either a string or an iterable of strings got "
                f"{type(feature_columns)} instead ({feature_columns!r})."
            )
        keys = (
            [feature_columns]
            if isinstance(feature_columns, str)
            else list(feature_columns or [])
        )
        for key in keys:
            if not isinstance(key, str):
                raise TypeError(
                    f"Column must a string. Given type: {type(key)} ({key!r}). With "
                    "return_sequences, weight_column (feature_columns) must be a feature key string."
                )
        if isinstance(static_head, MultiHead):
            raise ValueError(
                "`MultiHead` is not supported with `SequentialHeadWrapper`. Wrap each "
                "head of a sequence model on its own."
            )
        self._static_head = check_head(static_head)
        self._mask_key = sequence_length_mask
        self._feature_keys = keys

    @property
    def input_sequence_mask_key(self) -> str:
        """The feature key of the sequence mask."""
        return self._mask_key

    @property
    def static_head(self) -> Head:
        """The head applied at every step."""
        return self._static_head

    @property
    def name(self) -> str | None:
        """`<static head's name>_sequential`, as in 2.15 (None for an unnamed head)."""
        name = self._static_head.name
        return f"{name}_sequential" if name else None

    @property
    def logits_dimension(self) -> int:
        return self._static_head.logits_dimension

    @property
    def loss_reduction(self) -> str:
        return self._static_head.loss_reduction

    def _flatten(
        self, labels: Any, logits: Any, features: Any
    ) -> tuple[Any, Any, dict[str, Any]]:
        if not isinstance(features, Mapping) or self._mask_key not in features:
            found = sorted(features) if isinstance(features, Mapping) else features
            raise ValueError(
                f"The sequence mask {self._mask_key!r} is not among the features "
                f"{found}. Give it from input_fn, or let the RNN estimator add it."
            )
        mask = tf.cast(features[self._mask_key], tf.bool)
        if mask.shape.rank != 2:
            raise ValueError(
                f"The sequence mask {self._mask_key!r} must be [batch, time], got "
                f"shape {mask.shape}."
            )
        count = tf.reduce_sum(tf.cast(mask, tf.int32))
        flat_features = {}
        for key in self._feature_keys:
            if key not in features:
                raise ValueError(
                    f"Feature {key!r} is not among the features {sorted(features)}."
                )
            flat_features[key] = _flatten(features[key], mask, count)
        return (
            _flatten(labels, mask, count),
            _flatten(logits, mask, count),
            flat_features,
        )

    def loss(
        self,
        labels: Any,
        logits: Any,
        features: Any = None,
        mode: str | None = None,
        regularization_losses: Sequence[Any] | None = None,
    ) -> tf.Tensor:
        flat_labels, flat_logits, flat_features = self._flatten(
            labels, logits, features
        )
        return self._static_head.loss(
            flat_labels, flat_logits, flat_features, mode, regularization_losses
        )

    def predictions(
        self, logits: Any, keys: Sequence[str] | None = None
    ) -> dict[str, Any]:
        """The static head's predictions of `[batch, time, n]` logits, as in 2.15."""
        return self._static_head.predictions(logits, keys)

    def metrics(
        self, regularization_losses: Sequence[Any] | None = None
    ) -> dict[str, Any]:
        return self._static_head.metrics(regularization_losses)

    def update_metrics(
        self,
        eval_metrics: dict[str, Any],
        features: Any,
        logits: Any,
        labels: Any,
        regularization_losses: Sequence[Any] | None = None,
    ) -> dict[str, Any]:
        flat_labels, flat_logits, flat_features = self._flatten(
            labels, logits, features
        )
        return self._static_head.update_metrics(
            eval_metrics, flat_features, flat_logits, flat_labels, regularization_losses
        )

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
    ) -> Any:
        if mode == ModeKeys.PREDICT:
            predictions = self.predictions(logits)
            # Signatures as 2.15's: without the mask.
            outputs = self.export_outputs(predictions)
            predictions[self._mask_key] = features[self._mask_key]
            return EstimatorSpec(mode, predictions=predictions, export_outputs=outputs)
        flat_labels, flat_logits, flat_features = self._flatten(
            labels, logits, features
        )
        return self._static_head.create_estimator_spec(
            flat_features,
            mode,
            flat_logits,
            labels=flat_labels,
            optimizer=optimizer,
            trainable_variables=trainable_variables,
            train_op_fn=train_op_fn,
            update_ops=update_ops,
            regularization_losses=regularization_losses,
        )

    def export_outputs(self, predictions: Mapping[str, Any]) -> dict[str, Any]:
        return self._static_head.export_outputs(predictions)


def _flatten(tensor: Any, mask: tf.Tensor, count: tf.Tensor) -> tf.Tensor:
    """`tensor` `[batch, time, ...]` as `[steps kept by mask, ...]` (at least rank 2)."""
    if not isinstance(tensor, tf.SparseTensor):
        tensor = tf.convert_to_tensor(tensor)
    rank = tensor.shape.rank
    if rank is None or rank < 2:
        raise ValueError(
            f"A sequential head needs labels and logits of shape [batch, time, ...]; "
            f"got a tensor of shape {tensor.shape}."
        )
    if isinstance(tensor, tf.SparseTensor):
        flat = tf.sparse.reorder(tensor).values
        if rank > 2:
            flat = tf.reshape(flat, tf.concat([[-1], tf.shape(tensor)[2:]], 0))
    else:
        flat = tf.boolean_mask(tensor, mask)
    if rank == 2:
        flat = flat[:, tf.newaxis]
    check = tf.debugging.assert_equal(
        tf.shape(flat)[0],
        count,
        message="Labels or logits have a different number of steps than the sequence mask.",
    )
    with tf.control_dependencies([check]):
        return tf.identity(flat)
