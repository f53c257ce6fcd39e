"""Input receivers: what a SavedModel's signatures take and what model_fn sees.

A `serving_input_receiver_fn` takes no arguments and returns a
`ServingInputReceiver`: the tensors a serving request feeds
(`receiver_tensors`, usually `tf.compat.v1.placeholder`s) and the `features`
computed from them for the model_fn. It is called while the serving graph is
traced, where placeholders are legal, exactly as tf.estimator called it.

This module owns the receiver types and the stock receiver-fn builders
(parsing serialized `tf.Example`s, or raw feature tensors); their validation,
keys and defaults follow tf.estimator 2.15 (bad receivers raise ValueError).
"""

from __future__ import annotations

import collections
from collections.abc import Callable, Mapping
from typing import Any

import tensorflow as tf

from keras_estimator._src.base.export_outputs import describe

SINGLE_FEATURE_DEFAULT_NAME = "feature"
SINGLE_RECEIVER_DEFAULT_NAME = "input"
SINGLE_LABEL_DEFAULT_NAME = "label"
EXAMPLES_KEY = "examples"

_DEFAULT_NAMES = {
    "feature": SINGLE_FEATURE_DEFAULT_NAME,
    "label": SINGLE_LABEL_DEFAULT_NAME,
    "receiver_tensor": SINGLE_RECEIVER_DEFAULT_NAME,
    "receiver_tensors_alternative": SINGLE_RECEIVER_DEFAULT_NAME,
}
_TENSOR_TYPES = (tf.Tensor, tf.SparseTensor, tf.RaggedTensor)
_PARSING_SPEC_TYPES = (
    tf.io.FixedLenFeature,
    tf.io.FixedLenSequenceFeature,
    tf.io.VarLenFeature,
    tf.io.SparseFeature,
    tf.io.RaggedFeature,
)


def _check_tensor(tensor: Any, name: Any, field_name: str) -> Any:
    """`tensor`, or the tensor a LabeledTensor-like value converts to.

    As 2.15: besides tensors, a value with a `.tensor` attribute that
    `tf.convert_to_tensor` accepts (a registered conversion, as
    LabeledTensor had) is taken, as that tensor.
    """
    if isinstance(tensor, _TENSOR_TYPES):
        return tensor
    if hasattr(tensor, "tensor"):
        try:
            return tf.convert_to_tensor(tensor)
        except (TypeError, ValueError):
            pass
    # 2.15's first phrase names the key unquoted ("feature x must be a ...").
    where = f" {name}" if name is not None else ""
    raise ValueError(
        f"{field_name}{where} must be a Tensor, SparseTensor, or RaggedTensor. Got "
        f"{describe(tensor)}. In a serving_input_receiver_fn, create inputs with "
        "tf.compat.v1.placeholder(...) and compute features from them with "
        "TensorFlow ops."
    )


def _check_key(name: Any, field_name: str, allow_int_keys: bool) -> None:
    if isinstance(name, str):
        return
    if allow_int_keys and isinstance(name, int) and not isinstance(name, bool):
        return
    allowed = "strings or ints" if allow_int_keys else "strings"
    raise ValueError(f"{field_name} keys must be {allowed}; got {describe(name)}.")


def wrap_and_check_input_tensors(
    tensors: Any, field_name: str, allow_int_keys: bool = False
) -> dict[Any, Any]:
    """Returns `tensors` as a new dict of key -> tensor, checked.

    A single tensor is keyed by the default name for `field_name`
    (`feature`, `label` or `input`).

    Raises:
        ValueError: `tensors` is None, a key is not a string (or int where
            allowed), or a value is not a (sparse or ragged) tensor.
    """
    if tensors is None:
        raise ValueError(
            f"{field_name}s must be defined; got None. Pass a tensor or a dict of "
            "name -> tensor."
        )
    if not isinstance(tensors, Mapping):
        tensors = {_DEFAULT_NAMES[field_name]: tensors}
    checked = {}
    for name, tensor in tensors.items():
        _check_key(name, field_name, allow_int_keys)
        checked[name] = _check_tensor(tensor, name, field_name)
    return checked


class ServingInputReceiver(
    collections.namedtuple(
        "ServingInputReceiver",
        ["features", "receiver_tensors", "receiver_tensors_alternatives"],
    )
):
    """What a serving_input_receiver_fn returns: serving inputs and features.

    Args:
        features: a tensor (sparse and ragged included) or a dict of string
            or int -> tensor, passed to model_fn as `features`. A single
            tensor is wrapped as `{'feature': tensor}`; return a
            `TensorServingInputReceiver` to pass it as is.
        receiver_tensors: a tensor or a dict of string -> tensor: the inputs a
            serving request feeds (the signature's input keys). A single
            tensor is keyed `input`. Typically one string placeholder of
            serialized `tf.Example`s.
        receiver_tensors_alternatives: optional dict of name -> receiver
            tensors (a tensor or dict), each giving extra signatures
            `<name>:<export output key>` that feed the graph at another point,
            e.g. raw features downstream of `tf.io.parse_example`.

    Raises:
        ValueError: a field is missing or holds something other than tensors.
    """

    def __new__(
        cls,
        features: Any,
        receiver_tensors: Any,
        receiver_tensors_alternatives: Any = None,
    ) -> ServingInputReceiver:
        features = wrap_and_check_input_tensors(
            features, "feature", allow_int_keys=True
        )
        receiver_tensors = wrap_and_check_input_tensors(
            receiver_tensors, "receiver_tensor"
        )
        alternatives = None
        if receiver_tensors_alternatives is not None:
            if not isinstance(receiver_tensors_alternatives, Mapping):
                raise ValueError(
                    "receiver_tensors_alternatives must be a dict of name -> "
                    f"receiver tensors; got {describe(receiver_tensors_alternatives)}."
                )
            alternatives = {
                name: wrap_and_check_input_tensors(
                    tensors, "receiver_tensors_alternative"
                )
                for name, tensors in receiver_tensors_alternatives.items()
            }
        return super().__new__(cls, features, receiver_tensors, alternatives)


class TensorServingInputReceiver(
    collections.namedtuple(
        "TensorServingInputReceiver",
        ["features", "receiver_tensors", "receiver_tensors_alternatives"],
    )
):
    """A `ServingInputReceiver` whose `features` is one tensor, passed as is.

    For model_fns that take a single tensor as `features` rather than a
    dict. Receiver tensors are keyed as in `ServingInputReceiver`.

    Args:
        features: a single tensor (sparse and ragged included).
        receiver_tensors: a tensor or a dict of string -> tensor.
        receiver_tensors_alternatives: optional dict of name -> receiver tensors.

    Raises:
        ValueError: `features` is missing or not a tensor, or another field
            is invalid.
    """

    def __new__(
        cls,
        features: Any,
        receiver_tensors: Any,
        receiver_tensors_alternatives: Any = None,
    ) -> TensorServingInputReceiver:
        if features is None:
            raise ValueError(
                "features must be defined; got None. Pass the tensor model_fn "
                "receives as `features`."
            )
        _check_tensor(features, None, "feature")
        receiver = ServingInputReceiver(
            features, receiver_tensors, receiver_tensors_alternatives
        )
        return super().__new__(
            cls,
            receiver.features[SINGLE_FEATURE_DEFAULT_NAME],
            receiver.receiver_tensors,
            receiver.receiver_tensors_alternatives,
        )


class SupervisedInputReceiver(
    collections.namedtuple(
        "SupervisedInputReceiver", ["features", "labels", "receiver_tensors"]
    )
):
    """Features and labels with the tensors that feed them (no alternatives).

    Returned by the fns `build_raw_supervised_input_receiver_fn` makes.
    `features` and `labels` are passed to model_fn as given (a tensor or a
    dict); both are checked to hold tensors.
    """

    def __new__(
        cls, features: Any, labels: Any, receiver_tensors: Any
    ) -> SupervisedInputReceiver:
        wrap_and_check_input_tensors(features, "feature", allow_int_keys=True)
        wrap_and_check_input_tensors(labels, "label", allow_int_keys=True)
        receiver_tensors = wrap_and_check_input_tensors(
            receiver_tensors, "receiver_tensor"
        )
        return super().__new__(cls, features, labels, receiver_tensors)


RECEIVER_TYPES = (
    ServingInputReceiver,
    TensorServingInputReceiver,
    SupervisedInputReceiver,
)


def build_parsing_serving_input_receiver_fn(
    feature_spec: Mapping[str, Any], default_batch_size: int | None = None
) -> Callable[[], ServingInputReceiver]:
    """Makes a serving_input_receiver_fn that parses serialized `tf.Example`s.

    The fn feeds a string placeholder of shape `[default_batch_size]` (key
    `examples`) into `tf.io.parse_example(..., feature_spec)` and returns the
    parsed tensors as features. Such a single string input also makes
    classify and regress signatures possible.

    Args:
        feature_spec: a dict of feature name -> `tf.io.FixedLenFeature`,
            `VarLenFeature`, `SparseFeature`, `FixedLenSequenceFeature` or
            `RaggedFeature` (e.g. from
            `tf.feature_column.make_parse_example_spec`).
        default_batch_size: the number of examples per request; None (the
            default, recommended) allows any.

    Returns:
        A serving_input_receiver_fn.

    Raises:
        TypeError: `feature_spec` is not such a dict.

    Example:
        >>> fn = build_parsing_serving_input_receiver_fn(  # doctest: +SKIP
        ...     {"x": tf.io.FixedLenFeature([4], tf.float32)})
    """
    _check_feature_spec(feature_spec)
    spec = dict(feature_spec)

    def serving_input_receiver_fn() -> ServingInputReceiver:
        serialized = tf.compat.v1.placeholder(
            dtype=tf.string, shape=[default_batch_size], name="input_example_tensor"
        )
        features = tf.compat.v1.io.parse_example(serialized, spec)
        return ServingInputReceiver(features, {EXAMPLES_KEY: serialized})

    return serving_input_receiver_fn


def _check_feature_spec(feature_spec: Any) -> None:
    if not isinstance(feature_spec, Mapping):
        raise TypeError(
            "feature_spec must be a dict of feature name -> tf.io.FixedLenFeature "
            f"/ VarLenFeature / ...; got {describe(feature_spec)}."
        )
    for key, value in feature_spec.items():
        if not isinstance(key, str) or not isinstance(value, _PARSING_SPEC_TYPES):
            raise TypeError(
                f"feature_spec[{key!r}] must be a tf.io.FixedLenFeature, "
                "VarLenFeature, SparseFeature, FixedLenSequenceFeature or "
                f"RaggedFeature under a string key; got {describe(value)}."
            )


def _placeholder_like(value: Any, default_batch_size: int | None) -> tf.Tensor:
    """A placeholder with `value`'s dtype and shape, batch dim replaced."""
    shape = tf.TensorShape([default_batch_size]).concatenate(value.shape[1:])
    return tf.compat.v1.placeholder(dtype=value.dtype, shape=shape)


def _check_raw_features(features: Any, argument: str) -> None:
    """Raw feature examples must be tensors or TensorSpecs (dense)."""
    values = features.values() if isinstance(features, Mapping) else [features]
    keys = list(features) if isinstance(features, Mapping) else []
    for key in keys:
        if not isinstance(key, str):
            raise TypeError(f"{argument} keys must be strings; got {describe(key)}.")
    for value in values:
        if not isinstance(value, (tf.Tensor, tf.TensorSpec)):
            raise TypeError(
                f"{argument} values must be tf.Tensor or tf.TensorSpec examples of "
                f"the inputs (their dtype and shape after the batch dimension "
                f"are used); got {describe(value)}."
            )


def build_raw_serving_input_receiver_fn(
    features: Mapping[str, Any], default_batch_size: int | None = None
) -> Callable[[], ServingInputReceiver]:
    """Makes a serving_input_receiver_fn that is fed the features directly.

    Each feature gets a placeholder with the dtype and the shape (past the
    batch dimension) of the given tensor; the placeholders are both the
    receiver tensors (keyed like `features`) and the features.

    Args:
        features: a dict of name -> `tf.Tensor` (or `tf.TensorSpec`) with a
            leading batch dimension, e.g. one batch of the training input.
        default_batch_size: the number of examples per request; None (the
            default, recommended) allows any.

    Returns:
        A serving_input_receiver_fn.

    Raises:
        TypeError: `features` is not a dict of string -> tensor.
    """
    if not isinstance(features, Mapping):
        raise TypeError(
            "features must be a dict of feature name -> tf.Tensor; got "
            f"{describe(features)}. Wrap a single tensor as {{'x': tensor}}."
        )
    _check_raw_features(features, "features")
    examples = dict(features)

    def serving_input_receiver_fn() -> ServingInputReceiver:
        placeholders = {
            name: _placeholder_like(value, default_batch_size)
            for name, value in examples.items()
        }
        return ServingInputReceiver(placeholders, placeholders)

    return serving_input_receiver_fn


def build_raw_supervised_input_receiver_fn(
    features: Any, labels: Any, default_batch_size: int | None = None
) -> Callable[[], SupervisedInputReceiver]:
    """Makes a receiver fn that is fed features and labels directly.

    Features and labels reach model_fn with the structure given: a tensor
    or a dict of tensors each. Receiver tensors are keyed like the dicts, or
    `input` / `label` for single tensors, so their keys must not overlap.

    Args:
        features: a tensor or dict of name -> tensor (or `tf.TensorSpec`).
        labels: a tensor or dict of name -> tensor (or `tf.TensorSpec`).
        default_batch_size: the number of examples per request; None (the
            default, recommended) allows any.

    Returns:
        A supervised input receiver fn.

    Raises:
        ValueError: features and labels have overlapping keys.
        TypeError: they are not tensors or dicts of tensors.
    """
    _check_raw_features(features, "features")
    _check_raw_features(labels, "labels")
    feature_keys = (
        set(features)
        if isinstance(features, Mapping)
        else {SINGLE_RECEIVER_DEFAULT_NAME}
    )
    label_keys = (
        set(labels) if isinstance(labels, Mapping) else {SINGLE_LABEL_DEFAULT_NAME}
    )
    overlap = feature_keys & label_keys
    if overlap:
        raise ValueError(
            "Features and labels must have distinct keys, since both become "
            f"receiver tensor names. Found overlapping keys: {sorted(overlap)}."
        )

    def receive(values: Any, single_name: str) -> tuple[Any, dict[str, tf.Tensor]]:
        if isinstance(values, Mapping):
            placeholders = {
                name: _placeholder_like(value, default_batch_size)
                for name, value in values.items()
            }
            return placeholders, placeholders
        placeholder = _placeholder_like(values, default_batch_size)
        return placeholder, {single_name: placeholder}

    def supervised_input_receiver_fn() -> SupervisedInputReceiver:
        feature_tensors, feature_receivers = receive(
            features, SINGLE_RECEIVER_DEFAULT_NAME
        )
        label_tensors, label_receivers = receive(labels, SINGLE_LABEL_DEFAULT_NAME)
        return SupervisedInputReceiver(
            feature_tensors, label_tensors, {**feature_receivers, **label_receivers}
        )

    return supervised_input_receiver_fn
