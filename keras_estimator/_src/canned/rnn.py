"""`RNNClassifier` and `RNNEstimator`, as tf.estimator 2.15's `experimental` ones.

The network: the sequence columns' input (`sequence_features/<column>/...`),
with the context columns' input (`dense_features/<column>/...`) appended at
every time step; a Keras 3 recurrent layer over it, masked past each
example's sequence length (`rnn_model/<layer>/<cell>/...`); then a dense
layer to the head's logits (`rnn_model/logits/{kernel,bias}`), from the last
output, or from every step's output with `return_sequences`.

The recurrent layer, as 2.15 chose it:

* `units` an int and `cell_type` 'simple_rnn', 'lstm' or 'gru': the matching
  layer (`keras.layers.LSTM(units)`, variables `rnn_model/lstm/lstm_cell/...`);
* `units` a list (one layer per entry) and `cell_type` one of those names or
  a cell class: `keras.layers.RNN` over the cell, or over their stack
  (`rnn_model/rnn/stacked_rnn_cells/<cell>/...`);
* `rnn_cell_fn()` returning a Keras RNN cell or a list of cells: the same.

Variable names and shapes are 2.15's (Keras 3's SimpleRNN, LSTM and GRU
cells keep tf.keras 2's weight layouts), and the default optimizer is 2.15's:
Adagrad at learning rate 0.05 with each gradient clipped to norm 5, slots
under tf.keras 2's names. A model_dir written by tf.estimator 2.15 restores
here and predicts the same.

Differences from 2.15: an int `units` with the default `cell_type` builds
what `cell_type='simple_rnn'` does, and with a cell class one layer of that
cell (2.15 failed on both with a TypeError); with several replicas, the
gradient norm is clipped on each replica's gradient before they are summed
(2.15 clipped the sum); the sequence mask spans the input's time axis (2.15's
spanned the longest sequence of the batch, the same when input_fn pads no
further, as `parse_example` does not); a Keras optimizer's `clipnorm` is
applied too.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import keras
import tensorflow as tf

from keras_estimator._src.base.mode_keys import ModeKeys
from keras_estimator._src.canned import optimizers
from keras_estimator._src.canned.dnn import (
    canned_model_fn,
    check_features,
    classification_head,
)
from keras_estimator._src.estimator.estimator import Estimator
from keras_estimator._src.feature_column import sequence_features
from keras_estimator._src.head.base_head import SUM_OVER_BATCH_SIZE, Head, check_head
from keras_estimator._src.head.sequential_head import SequentialHeadWrapper

# 2.15's defaults when `optimizer` is a name.
DEFAULT_LEARNING_RATE = 0.05
DEFAULT_CLIP_NORM = 5.0

_CELLS: dict[str, type[keras.layers.Layer]] = {
    "simple_rnn": keras.layers.SimpleRNNCell,
    "lstm": keras.layers.LSTMCell,
    "gru": keras.layers.GRUCell,
}
_LAYERS: dict[str, type[keras.layers.Layer]] = {
    "simple_rnn": keras.layers.SimpleRNN,
    "lstm": keras.layers.LSTM,
    "gru": keras.layers.GRU,
}


class _UseDefault:
    """The default of `cell_type`: 'simple_rnn', unless `rnn_cell_fn` is given."""

    def __repr__(self) -> str:
        return "<default sentinel>"


USE_DEFAULT: Any = _UseDefault()

RNNLayerFactory = Callable[[bool], keras.layers.Layer]


def rnn_layer_factory(units: Any, cell_type: Any, rnn_cell_fn: Any) -> RNNLayerFactory:
    """Checks the RNN arguments; returns `make(return_sequences)` building the layer.

    The layer is built inside model_fn, so that every trace names its cells
    afresh (`gru_cell`, `gru_cell_1`, ...), as every TF1 graph did.

    Raises:
        ValueError: if both or neither of `units` and `rnn_cell_fn` are given,
            `cell_type` is given with `rnn_cell_fn`, or `units` or `cell_type`
            is not valid.
        TypeError: if `rnn_cell_fn` is not callable.
    """
    if rnn_cell_fn is not None:
        if units is not None or cell_type is not USE_DEFAULT:
            raise ValueError(
                f"units and cell_type must not be specified when using rnn_cell_fn; got "
                f"units={units!r}, cell_type={cell_type!r}. Build the cells in "
                "rnn_cell_fn, or drop rnn_cell_fn."
            )
        if not callable(rnn_cell_fn):
            raise TypeError(
                f"rnn_cell_fn must be a function returning a Keras RNN cell or a list "
                f"of cells, got {type(rnn_cell_fn).__name__}: {rnn_cell_fn!r}."
            )
        return lambda return_sequences: _rnn_over(rnn_cell_fn(), return_sequences)
    if units is None:
        raise ValueError(
            "Give units (e.g. units=[32] with cell_type='lstm') or rnn_cell_fn; got "
            "neither."
        )
    if cell_type is USE_DEFAULT:
        cell_type = "simple_rnn"
    if isinstance(cell_type, str):
        if cell_type not in _CELLS:
            raise ValueError(_cell_type_error(cell_type))
        cell_class: Any = _CELLS[cell_type]
    elif callable(cell_type):
        cell_class = cell_type
    else:
        raise ValueError(_cell_type_error(cell_type))
    if isinstance(units, int) and not isinstance(units, bool):
        _check_units([units])
        if isinstance(cell_type, str) and cell_type in _LAYERS:
            layer_class = _LAYERS[cell_type]
            return lambda return_sequences: layer_class(
                units, return_sequences=return_sequences
            )
        sizes: tuple[int, ...] = (units,)
    else:
        sizes = _check_units(units)

    def make(return_sequences: bool) -> keras.layers.Layer:
        cells = [cell_class(units=size) for size in sizes]
        return _rnn_over(cells[0] if len(cells) == 1 else cells, return_sequences)

    return make


def _cell_type_error(cell_type: Any) -> str:
    return (
        "`cell_type` should be a class producing a RNN cell, or a string specifying "
        f"the cell type. Supported strings are: {list(_CELLS)}. Got "
        f"{type(cell_type).__name__}: {cell_type!r}; use one of those names, or a "
        "Keras RNN cell class such as keras.layers.LSTMCell."
    )


def _check_units(units: Any) -> tuple[int, ...]:
    if isinstance(units, (str, bytes)) or not isinstance(units, Sequence):
        raise ValueError(
            f"units must be an int or a list of layer sizes such as [32, 16], got "
            f"{units!r}."
        )
    sizes = tuple(units)
    if not sizes or not all(
        isinstance(size, int) and not isinstance(size, bool) and size > 0
        for size in sizes
    ):
        raise ValueError(
            f"units must be a positive int or a non-empty list of positive ints, got "
            f"{list(sizes)!r}."
        )
    return sizes


def _rnn_over(cell: Any, return_sequences: bool) -> keras.layers.Layer:
    """`keras.layers.RNN` over `cell`, or over the stack of a list of cells."""
    cells = list(cell) if isinstance(cell, (list, tuple)) else [cell]
    for one in cells:
        if not (hasattr(one, "call") and hasattr(one, "state_size")):
            raise ValueError(
                "RNN cell should have a `call` and `state_size` method. Got "
                f"{type(one).__name__}: {one!r}; give a Keras RNN cell, such as "
                "keras.layers.LSTMCell(32)."
            )
    return keras.layers.RNN(
        cells if len(cells) > 1 else cells[0], return_sequences=return_sequences
    )


def rnn_logits(
    features: Any,
    sequence_columns: tuple[Any, ...],
    context_columns: tuple[Any, ...],
    make_rnn_layer: RNNLayerFactory,
    logits_dimension: int,
    return_sequences: bool,
    mode: str,
) -> tuple[tf.Tensor, tf.Tensor]:
    """The logits of the network the module describes, and the sequence mask."""
    check_features(features, (*sequence_columns, *context_columns))
    training = mode == ModeKeys.TRAIN
    with tf.name_scope("sequence_input_layer"):
        inputs, length = sequence_features.sequence_input(
            features, sequence_columns, training
        )
        tf.compat.v1.summary.histogram("sequence_length", length)
        if context_columns:
            context = sequence_features.context_input(
                features, context_columns, training
            )
            inputs = sequence_features.concatenate_context(inputs, context)
    mask = tf.sequence_mask(length, maxlen=tf.shape(inputs)[1])
    with keras.name_scope("rnn_model"), tf.variable_creator_scope(_seed_state_is_local):
        outputs = make_rnn_layer(return_sequences)(inputs, mask=mask, training=training)
        logits = keras.layers.Dense(logits_dimension, name="logits")(outputs)
    return logits, mask


def _seed_state_is_local(next_creator: Callable[..., Any], **kwargs: Any) -> Any:
    """Keeps Keras 3 cells' dropout seed variables out of checkpoints.

    Keras 3's LSTM and GRU cells make a `seed_generator_state` variable, even
    without dropout, that tf.keras 2 cells did not have: as a local variable
    (like a metric's) it is neither saved nor expected when restoring, so
    2.15's checkpoints and this module's hold the same variables.
    """
    if str(kwargs.get("name") or "").endswith("seed_generator_state"):
        kwargs["collections"] = [tf.compat.v1.GraphKeys.LOCAL_VARIABLES]
    return next_creator(**kwargs)


class _ClippedOptimizer:
    """A canned optimizer applying each gradient clipped to norm `clip_norm`.

    tf.keras 2 optimizers took `clipnorm`; `canned.optimizers` does not, so
    the clipped gradients are handed to it as the gradients of a surrogate
    loss, `sum(stop_gradient(clipped) * variable)`, whose gradient with
    respect to each variable is exactly its clipped gradient.
    """

    def __init__(self, optimizer: optimizers.CannedOptimizer, clip_norm: float) -> None:
        self._optimizer = optimizer
        self._clip_norm = clip_norm

    @property
    def name(self) -> str:
        return self._optimizer.name

    @property
    def settings(self) -> dict[str, float]:
        return {**self._optimizer.settings, "clipnorm": self._clip_norm}

    def get_updates(self, loss: Any, params: Sequence[Any]) -> list[Any]:
        params = list(params)
        gradients = tf.compat.v1.gradients(loss, params)
        terms = [
            tf.reduce_sum(
                tf.stop_gradient(
                    tf.convert_to_tensor(tf.clip_by_norm(g, self._clip_norm))
                )
                * v
            )
            for g, v in zip(gradients, params, strict=True)
            if g is not None
        ]
        surrogate = tf.add_n(terms) if terms else loss  # the optimizer reports none
        return self._optimizer.get_updates(surrogate, params)


def rnn_optimizer(optimizer: Any) -> Any:
    """2.15's RNN optimizer: a name gets learning rate 0.05 and clip norm 5."""
    if isinstance(optimizer, str):
        named = optimizers.get_optimizer(optimizer, learning_rate=DEFAULT_LEARNING_RATE)
        return _ClippedOptimizer(named, DEFAULT_CLIP_NORM)
    # An optimizer object's own clipnorm is applied by the optimizer itself.
    return optimizers.get_optimizer(optimizer)


def rnn_model_fn(
    head: Head,
    sequence_columns: tuple[Any, ...],
    context_columns: tuple[Any, ...],
    make_rnn_layer: RNNLayerFactory,
    optimizer: Any,
    return_sequences: bool,
) -> Callable[..., Any]:
    """A model_fn training the network with `head` and `optimizer`."""

    def logits_fn(features: Any, mode: str) -> tf.Tensor:
        logits, mask = rnn_logits(
            features,
            sequence_columns,
            context_columns,
            make_rnn_layer,
            head.logits_dimension,
            return_sequences,
            mode,
        )
        if return_sequences:
            key = head.input_sequence_mask_key  # type: ignore[attr-defined]
            if key not in features:
                features[key] = mask
        return logits

    model_fn = canned_model_fn(head, logits_fn, optimizer)

    def checked_model_fn(features: Any, labels: Any, mode: str) -> Any:
        # Copied: the sequence mask is added to it, and input_fn's dict stays as given.
        if isinstance(features, Mapping):
            features = dict(features)
        return model_fn(features, labels, mode)

    return checked_model_fn


class RNNEstimator(Estimator):
    """A recurrent network with a given head; see the module.

    Args:
        head: the `Head` turning logits into loss, predictions and metrics;
            with `return_sequences`, a `SequentialHeadWrapper`.
        sequence_feature_columns: sequence columns
            (`tf.feature_column.sequence_numeric_column`, or
            `embedding_column`/`indicator_column` over a
            `sequence_categorical_column_with_*`).
        context_feature_columns: non-sequence dense columns, given to the
            network at every time step.
        units: an int, or a list of layer sizes (one RNN layer per entry).
        cell_type: 'simple_rnn' (the default), 'lstm', 'gru', or a Keras RNN
            cell class.
        rnn_cell_fn: instead of `units`/`cell_type`, a function of no
            arguments returning a Keras RNN cell or a list of cells (stacked).
        return_sequences: logits at every time step instead of the last.
        model_dir: where checkpoints and summaries go.
        optimizer: a name ('Adagrad', 'Adam', 'Ftrl', 'RMSProp', 'SGD';
            learning rate 0.05, gradients clipped to norm 5), an optimizer
            object, or a callable returning one.
        config: a `RunConfig`.

    Raises:
        ValueError: if the columns or the RNN arguments are not valid, or
            `return_sequences` is set with a head that is not sequential.
        TypeError: if `head` is not a Head or `rnn_cell_fn` is not callable.
    """

    def __init__(
        self,
        head: Head,
        sequence_feature_columns: Sequence[Any],
        context_feature_columns: Sequence[Any] | None = None,
        units: int | Sequence[int] | None = None,
        cell_type: Any = USE_DEFAULT,
        rnn_cell_fn: Callable[[], Any] | None = None,
        return_sequences: bool = False,
        model_dir: str | None = None,
        optimizer: Any = "Adagrad",
        config: Any = None,
    ) -> None:
        check_head(head)
        if return_sequences and not isinstance(head, SequentialHeadWrapper):
            raise ValueError(
                "Provided head must be a `_SequentialHead` object when "
                "`return_sequences` is set to True. Got "
                f"{type(head).__name__}; wrap it: "
                "SequentialHeadWrapper(head, sequence_length_mask='sequence_mask')."
            )
        make_rnn_layer = rnn_layer_factory(units, cell_type, rnn_cell_fn)
        sequence_columns = sequence_features.check_sequence_columns(
            sequence_feature_columns
        )
        context_columns = sequence_features.check_context_columns(
            context_feature_columns
        )
        model_fn = rnn_model_fn(
            head,
            sequence_columns,
            context_columns,
            make_rnn_layer,
            rnn_optimizer(optimizer),
            bool(return_sequences),
        )
        super().__init__(model_fn=model_fn, model_dir=model_dir, config=config)


class RNNClassifier(RNNEstimator):
    """Classifies sequences into `n_classes` classes; see the module and `RNNEstimator`.

    `BinaryClassHead` for 2 classes, else `MultiClassHead`; with
    `return_sequences`, every step is classified (the head wrapped in a
    `SequentialHeadWrapper` masked by `features[sequence_mask]`, or by the
    sequence lengths when input_fn gives no such feature, and weighted by
    `weight_column`, which must then be a feature key).
    """

    def __init__(
        self,
        sequence_feature_columns: Sequence[Any],
        context_feature_columns: Sequence[Any] | None = None,
        units: int | Sequence[int] | None = None,
        cell_type: Any = USE_DEFAULT,
        rnn_cell_fn: Callable[[], Any] | None = None,
        return_sequences: bool = False,
        model_dir: str | None = None,
        n_classes: int = 2,
        weight_column: Any = None,
        label_vocabulary: Sequence[str] | None = None,
        optimizer: Any = "Adagrad",
        loss_reduction: str = SUM_OVER_BATCH_SIZE,
        sequence_mask: str = "sequence_mask",
        config: Any = None,
    ) -> None:
        head = classification_head(
            n_classes, weight_column, label_vocabulary, loss_reduction
        )
        if return_sequences:
            head = SequentialHeadWrapper(
                head, sequence_length_mask=sequence_mask, feature_columns=weight_column
            )
        super().__init__(
            head,
            sequence_feature_columns,
            context_feature_columns=context_feature_columns,
            units=units,
            cell_type=cell_type,
            rnn_cell_fn=rnn_cell_fn,
            return_sequences=return_sequences,
            model_dir=model_dir,
            optimizer=optimizer,
            config=config,
        )
