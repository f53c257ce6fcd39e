"""What a head checks and reads from its inputs, with tf.estimator 2.15's rules.

Logits are `[D0, D1, ... DN, logits_dimension]` (N >= 0: a batch, or a batch
of sequences); labels match them, with their last dimension optional when it
is 1; example weights (from `weight_column`, a feature key or a numeric
column whose `normalizer_fn` applies) are `[D0, ... DN]`, `[D0, ... DN, 1]`
or, where a head allows it, one per logit. A shape known while the step is
built is checked then (ValueError, 2.15's first phrase); a shape known only
at run time is asserted when the step runs. A custom `loss_fn` takes
`labels` and `logits` (and optionally `features`, `loss_reduction`) and
returns one unreduced loss per `[D0, ... DN]` position.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import tensorflow as tf

from keras_estimator._src.base.fn_args import fn_args
from keras_estimator._src.tf_internals import distribute

_NUMERIC_COLUMNS = ("NumericColumn", "_NumericColumn")
_LOSS_FN_ARGS = ("labels", "logits", "features", "loss_reduction")


def integer_n_classes(n_classes: Any) -> Any:
    """`n_classes` as a Python int when it is an integer of another kind.

    tf.estimator 2.15 took any integer its checks could compare: a numpy
    integer (`np.int32(3)`, as `labels.max() + 1` gives) or a scalar integer
    tensor with a known value. Anything else is returned as given, for the
    caller's check to refuse.
    """
    if isinstance(n_classes, bool) or isinstance(n_classes, int):
        return n_classes
    if isinstance(n_classes, np.integer):
        return int(n_classes)
    if isinstance(n_classes, (np.ndarray, tf.Tensor)) and n_classes.dtype in (
        np.int32,
        np.int64,
        tf.int32,
        tf.int64,
    ):
        value = tf.get_static_value(n_classes) if isinstance(n_classes, tf.Tensor) else n_classes
        if value is not None and np.ndim(value) == 0:
            return int(value)
    return n_classes


def canned_n_classes(n_classes: Any) -> int:
    """A canned classifier's `n_classes` (`integer_n_classes`), checked to be >= 2."""
    n_classes = integer_n_classes(n_classes)
    if not isinstance(n_classes, int) or isinstance(n_classes, bool) or n_classes < 2:
        raise ValueError(f"n_classes must be an integer >= 2, got {n_classes!r}.")
    return n_classes


def check_logits(logits: Any, logits_dimension: int) -> tf.Tensor:
    """`logits` as float32, checked to be `[D0, ... DN, logits_dimension]`."""
    logits = tf.cast(logits, tf.float32)
    shape = logits.shape
    if shape.rank is not None and shape.rank < 2:
        raise ValueError(
            f"logits must have rank at least 2.  Received rank {shape.rank}, shape "
            f"{shape}. Give logits of shape [batch, {logits_dimension}] (or "
            f"[batch, time, {logits_dimension}] for sequences)."
        )
    if shape.rank is not None and shape[-1] is not None:
        if shape[-1] != logits_dimension:
            raise ValueError(
                f"logits shape must be [D0, D1, ... DN, logits_dimension], got {shape}; "
                f"this head's logits_dimension is {logits_dimension}. Make the model's "
                f"last layer {logits_dimension} units wide."
            )
        return logits
    checks = [
        tf.debugging.assert_rank_at_least(
            logits, 2, message="logits shape must be [D0, D1, ... DN, logits_dimension]"
        ),
        tf.debugging.assert_equal(
            tf.shape(logits)[-1],
            logits_dimension,
            message=(
                "logits shape must be [D0, D1, ... DN, logits_dimension], "
                f"logits_dimension={logits_dimension}"
            ),
        ),
    ]
    with tf.control_dependencies(checks):
        return tf.identity(logits)


def check_labels(labels: Any, logits: tf.Tensor, labels_dimension: int) -> tf.Tensor:
    """Dense `labels` shaped `[D0, ... DN, labels_dimension]` like `logits`.

    Labels one rank short of the logits get their last dimension added.
    """
    if labels is None:
        raise ValueError(
            "You must provide a labels Tensor. Given: None. Return (features, labels) "
            "from input_fn, and pass labels to the head in TRAIN and EVAL mode."
        )
    if isinstance(labels, (tf.SparseTensor, tf.compat.v1.SparseTensorValue)):
        raise ValueError(
            f"SparseTensor labels are not supported. Labels must be a Tensor of shape "
            f"[D0, D1, ..., DN, {labels_dimension}], e.g. [batch_size, "
            f"{labels_dimension}]; got a SparseTensor. Convert it with "
            "tf.sparse.to_dense in input_fn."
        )
    labels = tf.convert_to_tensor(labels)
    rank, logits_rank = labels.shape.rank, logits.shape.rank
    if rank is not None and logits_rank is not None and rank == logits_rank - 1:
        labels = tf.expand_dims(labels, -1)
        rank += 1
    if rank is not None and rank < 2:
        raise ValueError(
            f"labels must have rank at least 2.  Received rank {rank}, shape "
            f"{labels.shape}. Give labels of shape [batch, {labels_dimension}] or [batch]."
        )
    if rank is not None and labels.shape[-1] not in (None, labels_dimension):
        raise ValueError(
            f"Mismatched label shape. Expected labels dimension={labels_dimension}.  "
            f"Received {labels.shape[-1]} (labels shape {labels.shape}). Suggested Fix: "
            "if your classifier expects one-hot encoding label, check your n_classes "
            "argument to the estimator and/or the shape of your label."
        )
    expected = logits.shape[:-1].concatenate([labels_dimension])
    if not labels.shape.is_compatible_with(expected):
        raise ValueError(
            f"labels shape must be [D0, D1, ... DN, {labels_dimension}], "
            f"expected_labels_shape: {expected}. labels_shape: {labels.shape}. "
            "Suggested Fix: check your n_classes argument to the head and/or the "
            "shape of your label."
        )
    if labels.shape.is_fully_defined() and expected.is_fully_defined():
        return labels
    message = (
        f"labels shape must be [D0, D1, ... DN, {labels_dimension}]. Suggested Fix: "
        "check your n_classes argument to the head and/or the shape of your label."
    )
    checks = []
    if rank is None:
        # Shapes of different lengths would broadcast in the comparison
        # below ([B] against [B, 1] passes), so the rank is checked first.
        checks.append(tf.compat.v1.debugging.assert_rank_at_least(labels, 2, message=message))
    expected_dynamic = tf.concat([tf.shape(logits)[:-1], [labels_dimension]], 0)
    with tf.control_dependencies(checks):
        labels_shape = tf.shape(labels)
    # 2.15's message and data, which its graph-mode tests match when the step runs.
    check = tf.compat.v1.debugging.assert_equal(
        expected_dynamic,
        labels_shape,
        data=["expected_labels_shape: ", expected_dynamic, "labels_shape: ", labels_shape],
        message=message,
    )
    with tf.control_dependencies([check]):
        return tf.identity(labels)


def check_label_range(
    labels: tf.Tensor,
    n_classes: int,
    message: str | None = None,
    phrases: tuple[str, str] | None = None,
) -> tf.Tensor:
    """`labels`, checked to be in `[0, n_classes - 1]`.

    Eagerly a ValueError, as 2.15's heads raised; in a traced step an
    assertion that fails the step when it runs. `message` replaces the
    default messages (2.15's `check_label_range` took one too); `phrases`
    replaces their first phrases (above the range, below it), as the
    tf.compat.v1 heads worded them.
    """
    above, below = phrases or ("Labels must be <= n_classes - 1", "Labels must be >= 0")
    if tf.executing_eagerly():
        received = labels.numpy().ravel().tolist()
        if bool(tf.reduce_any(labels > tf.cast(n_classes - 1, labels.dtype))):
            raise ValueError(
                f"{message or above.replace('n_classes', str(n_classes))}, got {received}. "
                f"Give class ids in [0, {n_classes}) (0 or 1 for a binary head)."
            )
        if bool(tf.reduce_any(labels < 0)):
            raise ValueError(
                f"{message or below}, got {received}. Give class ids in "
                f"[0, {n_classes}), or labels from label_vocabulary."
            )
        return labels
    checks = [
        tf.debugging.assert_less_equal(
            labels,
            tf.cast(n_classes - 1, labels.dtype),
            message=message or f"{above}: class ids in [0, {n_classes})",
        ),
        tf.debugging.assert_non_negative(
            labels, message=message or f"{below}: class ids in [0, {n_classes})"
        ),
    ]
    with tf.control_dependencies(checks):
        return tf.identity(labels)


def example_weights(
    features: Any, weight_column: Any, logits: tf.Tensor, allow_per_logit: bool = False
) -> tf.Tensor | float:
    """Each example's weight, shaped to broadcast against `logits`; 1. without one.

    Weights `[D0, ... DN]` become `[D0, ... DN, 1]`; with `allow_per_logit`,
    `[D0, ... DN, logits_dimension]` is kept as is.
    """
    if weight_column is None:
        return 1.0
    weights = _weight_column_values(features, weight_column)
    expected = (
        "weights shape must be [D0, D1, ... DN], [D0, D1, ... DN, 1] or "
        "[D0, D1, ... DN, logits_dimension]"
        if allow_per_logit
        else "weights shape must be [D0, D1, ... DN] or [D0, D1, ... DN, 1]"
    )
    rank, logits_rank = weights.shape.rank, logits.shape.rank
    outer = logits.shape[:-1] if logits_rank is not None else tf.TensorShape(None)
    if rank is not None and logits_rank is not None and rank == logits_rank - 1:
        _static_check(weights, [outer], expected, logits)
        check = tf.debugging.assert_equal(
            tf.shape(weights), tf.shape(logits)[:-1], message=expected
        )
        with tf.control_dependencies([check]):
            return tf.expand_dims(weights, -1)
    allowed = [outer.concatenate([1])]
    if allow_per_logit:
        allowed.append(logits.shape)
    _static_check(weights, allowed, expected, logits)
    if weights.shape.is_fully_defined() and logits.shape.is_fully_defined():
        return weights
    weights_shape = tf.shape(weights)
    per_example = tf.concat([tf.shape(logits)[:-1], [1]], 0)
    ok = _same_shape(weights_shape, per_example)
    if allow_per_logit:
        ok = tf.logical_or(ok, _same_shape(weights_shape, tf.shape(logits)))
    check = tf.debugging.Assert(
        ok, [expected, "logits_shape:", tf.shape(logits), "weights_shape:", weights_shape]
    )
    with tf.control_dependencies([check]):
        return tf.identity(weights)


def _same_shape(a: tf.Tensor, b: tf.Tensor) -> tf.Tensor:
    same_rank = tf.equal(tf.size(a), tf.size(b))
    return tf.cond(
        same_rank,
        lambda: tf.reduce_all(tf.equal(a, b)),
        lambda: tf.constant(False),
    )


def _static_check(
    weights: tf.Tensor, allowed: list[tf.TensorShape], expected: str, logits: tf.Tensor
) -> None:
    if not any(weights.shape.is_compatible_with(shape) for shape in allowed):
        raise ValueError(
            f"{expected}, logits_shape: {logits.shape}. weights_shape: "
            f"{weights.shape}. Give one weight per example (or per logit where the "
            "head allows it) in the weight feature."
        )


def _weight_column_values(features: Any, weight_column: Any) -> tf.Tensor:
    """The weight feature as float32, through the numeric column's normalizer."""
    if isinstance(weight_column, str):
        key, normalizer = weight_column, None
    elif type(weight_column).__name__ in _NUMERIC_COLUMNS:
        key, normalizer = weight_column.key, weight_column.normalizer_fn
    else:
        raise TypeError(
            "Weight column must be either a string or NumericColumn. Given type: "
            f"{type(weight_column).__name__}: {weight_column!r}. Pass the weight "
            "feature's key or tf.feature_column.numeric_column(key)."
        )
    if not isinstance(features, Mapping) or key not in features:
        available = sorted(features) if isinstance(features, Mapping) else type(features).__name__
        raise ValueError(
            f"weight_column {key!r} is not among the features {available}. Add it "
            "to the features input_fn returns, or leave weight_column out."
        )
    value = features[key]
    if isinstance(value, (tf.SparseTensor, tf.compat.v1.SparseTensorValue)):
        raise ValueError(
            "The corresponding Tensor of numerical column must be a Tensor. "
            f"SparseTensor is not supported. key: {key}. Give dense weights."
        )
    weights = tf.convert_to_tensor(value)
    if not (weights.dtype.is_floating or weights.dtype.is_integer):
        raise ValueError(
            f"Weight column should be castable to float. Given dtype: "
            f"{weights.dtype.name} (weight feature {key!r})."
        )
    if weights.shape.rank == 0:
        raise ValueError(
            f"Feature (key: {key}) cannot have rank 0. Given: {weights}. Give one "
            "weight per example."
        )
    if weights.shape.rank == 1:
        # Feature columns read a [batch] feature as [batch, 1].
        weights = tf.expand_dims(weights, -1)
    if normalizer is not None:
        weights = normalizer(weights)
    return tf.cast(weights, tf.float32)


def check_loss_fn(loss_fn: Callable[..., Any] | None) -> Callable[..., Any] | None:
    """`loss_fn`, if its arguments are among 2.15's; ValueError otherwise."""
    if loss_fn is None:
        return None
    args = fn_args(loss_fn)
    for required in ("labels", "logits"):
        if required not in args:
            raise ValueError(
                f"loss_fn must contain argument: {required}. Given arguments: "
                f"{args}. Define it as loss_fn(labels, logits[, features])."
            )
    unexpected = sorted(set(args) - set(_LOSS_FN_ARGS))
    if unexpected:
        raise ValueError(
            f"loss_fn has unexpected args: {unexpected}. It may take only "
            f"{list(_LOSS_FN_ARGS)}."
        )
    return loss_fn


def call_loss_fn(
    loss_fn: Callable[..., Any],
    labels: tf.Tensor,
    logits: tf.Tensor,
    features: Any,
    loss_dimension: int = 1,
) -> tf.Tensor:
    """`loss_fn`'s unreduced loss, checked to be `[D0, ... DN, loss_dimension]`."""
    kwargs: dict[str, Any] = {"labels": labels, "logits": logits}
    if "features" in fn_args(loss_fn):
        kwargs["features"] = features
    loss = tf.convert_to_tensor(loss_fn(**kwargs))
    expected = logits.shape[:-1].concatenate([loss_dimension])
    message = f"loss_fn must return Tensor of shape [D0, D1, ... DN, {loss_dimension}]. "
    if not loss.shape.is_compatible_with(expected):
        raise ValueError(
            f"{message}logits_shape: {logits.shape} loss_shape: {loss.shape}. Return "
            "one unreduced loss per example; do not reduce over the batch."
        )
    if loss.shape.is_fully_defined() and expected.is_fully_defined():
        return loss
    expected_dynamic = tf.concat([tf.shape(logits)[:-1], [loss_dimension]], 0)
    check = tf.debugging.Assert(
        _same_shape(tf.shape(loss), expected_dynamic),
        [message, "logits_shape:", tf.shape(logits), "loss_shape:", tf.shape(loss)],
    )
    with tf.control_dependencies([check]):
        return tf.identity(loss)


def weighted_loss(unreduced: tf.Tensor, weights: Any, loss_reduction: str) -> tf.Tensor:
    """The training loss: weights broadcast over `unreduced`, then reduced.

    "sum" sums; "sum_over_batch_size" divides by the number of weighted
    elements, as tf.estimator 2.15 (tf.keras 2's compute_weighted_loss) did.
    The tf.compat.v1 reductions of the v1 canned heads: "weighted_mean"
    divides by the sum of the broadcast weights, and
    "weighted_sum_by_nonzero_weights" by the count of those that are not 0
    (0 when that is 0, as `tf.compat.v1.losses.compute_weighted_loss`).
    Like that function, it records the reduction on the graph: under a
    MirroredStrategy, a v1 optimizer then divides a mean's loss by the
    replica count and leaves a sum's whole (`tf_internals.distribute`).
    """
    distribute.record_loss_reduction(loss_reduction)
    weighted = tf.cast(unreduced, tf.float32) * weights
    total = tf.reduce_sum(weighted)
    if loss_reduction == "sum":
        return total
    if loss_reduction in ("weighted_mean", "weighted_sum_by_nonzero_weights"):
        broadcast = tf.broadcast_to(tf.cast(weights, tf.float32), tf.shape(weighted))
        if loss_reduction == "weighted_sum_by_nonzero_weights":
            broadcast = tf.cast(tf.not_equal(broadcast, 0.0), tf.float32)
        return tf.math.divide_no_nan(total, tf.reduce_sum(broadcast))
    return total / tf.cast(tf.size(weighted), tf.float32)


def flat(values: Any, weights: Any, *more: Any) -> tuple[tf.Tensor, ...]:
    """`values`, then each of `more`, then `weights` broadcast to `values`' shape.

    All flattened to one dimension and float32: Keras 3 metrics reduce
    multi-dimensional values per sample first, so metrics get flat values
    and one weight per value, the weighting tf.keras 2's metrics applied.
    """
    values = tf.cast(values, tf.float32)
    shape = tf.shape(values)
    weights = tf.broadcast_to(tf.cast(weights, tf.float32), shape)
    others = [tf.reshape(tf.cast(m, tf.float32), [-1]) for m in more]
    return (tf.reshape(values, [-1]), *others, tf.reshape(weights, [-1]))
