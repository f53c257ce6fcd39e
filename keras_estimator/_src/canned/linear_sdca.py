"""`LinearSDCA`: training a linear model by stochastic dual coordinate ascent.

This module owns tf.estimator 2.15's `tf.estimator.experimental.LinearSDCA`
(the `optimizer` of `LinearClassifier` / `LinearRegressor` /
`LinearEstimator`) and the model_fn that uses it. The linear model is the
one of `canned.linear` (`linear/linear_model/<column>/weights`,
`linear/linear_model/bias_weights`); in TRAIN mode a step runs TensorFlow's
SDCA kernel (`SdcaOptimizerV2`) over the batch:

* the objective, over every example seen: (sum_i w_i loss_i
  + l1 |beta|_1 + l2 / 2 |beta|^2) / sum_i w_i, with the logistic loss for a
  binary head and half the squared error for a one-dimensional regression
  head; the bias is a weight like the others (and is regularized);
* each example's dual state lives in a hash table keyed by the fingerprint
  of its `example_id_column` (`SdcaFprint`); the unregularized primal
  weights in slots `<weight>_unshrunk`; after each step the model's weights
  are the slots, shrunk by `l1 / l2` when `l1 > 0`.

Checkpoints hold what 2.15's held: the weights, the `_unshrunk` slots (v1
classes: `linear/linear/linear_model/<column>/weights/part_0_unshrunk`), and
the table as `ShardedMutableHashTable-<i>-of-<n>-keys` / `-values` (all its
buckets: 131072 at first, more as the example ids grow).
The table is read from the checkpoint on the first step of an Estimator
and written to the checkpoint variables after every step.

Evaluation and prediction use the linear model as any optimizer would.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import tensorflow as tf

from keras_estimator._src.base.mode_keys import ModeKeys
from keras_estimator._src.head.base_head import Head, WeightedHead
from keras_estimator._src.head.classification_heads import BinaryClassHead
from keras_estimator._src.head.head_inputs import check_label_range
from keras_estimator._src.head.regression_heads import RegressionHead
from keras_estimator._src.tf_internals.feature_column_versions import are_v2_columns

logger = logging.getLogger("keras_estimator")

_fc = tf.__internal__.feature_column
_MODEL_SCOPE = "linear/linear_model"
# 2.15's table: MutableDenseHashTable's initial bucket count, 4 floats per example.
TABLE_BUCKETS = 131072
_STATE_SIZE = 4
_EMPTY_KEY = (0, 0)
_DELETED_KEY = (1, 1)


class LinearSDCA:
    """Stochastic dual coordinate ascent for `LinearClassifier`/`LinearRegressor`.

    Pass it as `optimizer=`. It needs a binary classifier (or a regressor of
    one-dimensional labels), `sparse_combiner='sum'`, and a string feature
    `example_id_column` giving each example a stable id.

    Args:
        example_id_column: the feature key of the example ids ([batch] strings).
        num_loss_partitions: the number of workers training concurrently
            (sigma' in Ma et al. 2015); 1 on one machine.
        num_table_shards: shards of the example-state table (None: 1).
        symmetric_l1_regularization: l1 strength, >= 0.
        symmetric_l2_regularization: l2 strength, > 0 (SDCA needs it; values
            above 1, of the order of the examples' squared norm, are usual).
        adaptive: whether the kernel samples examples adaptively.

    Raises:
        ValueError: a regularization or count out of range.
        TypeError: `example_id_column` is not a string.
    """

    def __init__(
        self,
        example_id_column: str,
        num_loss_partitions: int = 1,
        num_table_shards: int | None = None,
        symmetric_l1_regularization: float = 0.0,
        symmetric_l2_regularization: float = 1.0,
        adaptive: bool = False,
    ) -> None:
        if not isinstance(example_id_column, str) or not example_id_column:
            raise TypeError(
                "example_id_column must be the (non-empty) feature key of the "
                f"example ids, got {example_id_column!r}."
            )
        _check_count("num_loss_partitions", num_loss_partitions)
        if num_table_shards is not None:
            _check_count("num_table_shards", num_table_shards)
        if not symmetric_l2_regularization > 0.0:
            raise ValueError(
                "symmetric_l2_regularization must be positive for SDCA, got "
                f"{symmetric_l2_regularization!r}."
            )
        if not symmetric_l1_regularization >= 0.0:
            raise ValueError(
                "symmetric_l1_regularization must be >= 0, got "
                f"{symmetric_l1_regularization!r}."
            )
        if symmetric_l2_regularization <= 1.0:
            logger.warning(
                "symmetric_l2_regularization for SDCA should typically be larger "
                "than for online optimization methods: of the order of the "
                "average squared L2 norm of the training examples."
            )
        self._example_id_column = example_id_column
        self._num_loss_partitions = int(num_loss_partitions)
        self._num_table_shards = num_table_shards
        self._symmetric_l1_regularization = float(symmetric_l1_regularization)
        self._symmetric_l2_regularization = float(symmetric_l2_regularization)
        self._adaptive = bool(adaptive)

    @property
    def example_id_column(self) -> str:
        return self._example_id_column

    @property
    def num_table_shards(self) -> int:
        return 1 if self._num_table_shards is None else int(self._num_table_shards)

    def kernel_options(self, loss_type: str) -> dict[str, Any]:
        """The `SdcaOptimizerV2` attributes for `loss_type`."""
        return {
            "loss_type": loss_type,
            "l1": self._symmetric_l1_regularization,
            "l2": self._symmetric_l2_regularization,
            "num_loss_partitions": self._num_loss_partitions,
            "num_inner_iterations": 1,
            "adaptive": self._adaptive,
        }

    @property
    def shrinkage(self) -> float:
        """How far l1 pulls each weight towards 0 after a step (`l1 / l2`)."""
        return self._symmetric_l1_regularization / self._symmetric_l2_regularization


def check_sdca_estimator(
    optimizer: Any,
    sparse_combiner: str,
    feature_columns: Sequence[Any],
    n_classes: int | None = None,
    label_dimension: int | None = None,
    label_vocabulary: Any = None,
) -> None:
    """2.15's constructor checks of a linear estimator given a `LinearSDCA`."""
    if not isinstance(optimizer, LinearSDCA):
        return
    if sparse_combiner != "sum":
        raise ValueError(
            f'sparse_combiner must be "sum" when optimizer is a LinearSDCA, got '
            f"{sparse_combiner!r}."
        )
    v1_columns = [c for c in feature_columns if not are_v2_columns([c])]
    if v1_columns:
        raise ValueError(
            "V2 feature columns required when optimizer is a LinearSDCA object; got "
            f"{v1_columns!r}. Use tf.feature_column columns, or another optimizer."
        )
    if isinstance(n_classes, int) and n_classes > 2:
        raise ValueError(
            f"LinearSDCA cannot be used in a multi-class setting (n_classes="
            f"{n_classes}): it trains binary classifiers. Use n_classes=2 or another "
            "optimizer."
        )
    if isinstance(label_dimension, int) and label_dimension > 1:
        raise ValueError(
            f"LinearSDCA can only be used with one-dimensional labels, got "
            f"label_dimension={label_dimension}."
        )
    if label_vocabulary is not None:
        raise ValueError(
            f"LinearSDCA reads labels as the numbers 0 and 1; label_vocabulary="
            f"{label_vocabulary!r} is not supported (2.15 failed on it too). Map "
            "the labels to 0/1 in input_fn."
        )


def v2_slot_name(weights: str) -> str:
    """The unshrunk slot's name in the V2 classes' checkpoints."""
    return f"{weights}_unshrunk"


def v1_slot_name(weights: str) -> str:
    """The unshrunk slot's name in the v1 classes' checkpoints.

    2.15's v1 linear model partitioned its variables (`<weights>/part_0`) and
    made the slot inside the `linear` scope.
    """
    return f"linear/{weights}/part_0_unshrunk"


def loss_type_of(head: Head) -> str:
    """The SDCA loss for `head`: logistic (binary) or squared (1-D regression)."""
    if isinstance(head, BinaryClassHead):
        return "logistic_loss"
    if isinstance(head, RegressionHead) and head.logits_dimension == 1:
        return "squared_loss"
    raise ValueError(
        f"Unsupported head type for LinearSDCA: {type(head).__name__} with "
        f"logits_dimension={head.logits_dimension}. It trains a BinaryClassHead "
        "or a RegressionHead of label_dimension 1."
    )


def sdca_model_fn(
    head: Head,
    feature_columns: Sequence[Any],
    optimizer: LinearSDCA,
    logits_fn: Callable[[Any], tf.Tensor],
    slot_name: Callable[[str], str],
) -> Callable[..., Any]:
    """A model_fn training the linear model of `logits_fn(features)` by SDCA.

    Args:
        head: a binary or one-dimensional regression head.
        feature_columns: the model's columns.
        optimizer: the settings.
        logits_fn: builds the linear model (its variables under
            `linear/linear_model`) and returns its logits.
        slot_name: the checkpoint name of a weight's unshrunk slot.
    """
    loss_type = loss_type_of(head)
    table = _StateTable(optimizer.num_table_shards)

    def model_fn(features: Any, labels: Any, mode: str) -> Any:
        logits = logits_fn(features)
        if mode != ModeKeys.TRAIN:
            return head.create_estimator_spec(features, mode, logits, labels=labels)
        if labels is None:
            raise ValueError(
                "LinearSDCA trains on labels: input_fn must return (features, labels)."
            )
        replicas = tf.distribute.get_strategy().num_replicas_in_sync
        if replicas > 1:
            raise ValueError(
                f"LinearSDCA trains on one replica; the distribution strategy has "
                f"{replicas}. Leave RunConfig's train_distribute unset, or use "
                "another optimizer."
            )
        if loss_type == "logistic_loss":
            # The SDCA kernel refuses labels other than 0 and 1 with its own
            # error; the head's range check runs first, so the step always
            # fails with the head's message, whatever order the ops run in.
            labels = check_label_range(labels, 2)
        # Built after the logits, so the loss is the one before this step.
        train_op = _SdcaStep(
            head, feature_columns, optimizer, loss_type, table, slot_name
        ).build(features, labels, logits)
        return head.create_estimator_spec(
            features, mode, logits, labels=labels, train_op_fn=lambda loss: train_op
        )

    return model_fn


class _StateTable:
    """The example-state hash table(s) and their loaded flag.

    Made eagerly with the model_fn, outside every trace, so every trace of
    every step uses the same table and no checkpoint holds the flag.
    """

    def __init__(self, num_shards: int) -> None:
        self.num_shards = num_shards
        self.tables = [
            tf.lookup.experimental.DenseHashTable(
                key_dtype=tf.int64,
                value_dtype=tf.float32,
                default_value=[0.0] * _STATE_SIZE,
                empty_key=list(_EMPTY_KEY),
                deleted_key=list(_DELETED_KEY),
                initial_num_buckets=TABLE_BUCKETS,
            )
            for _ in range(num_shards)
        ]
        # Whether the checkpoint's table has been read into the live one.
        self.loaded = tf.Variable(False, trainable=False, name="sdca_table_loaded")


class _SdcaStep:
    """One SDCA training step's graph; see the module."""

    def __init__(
        self,
        head: Head,
        feature_columns: Sequence[Any],
        optimizer: LinearSDCA,
        loss_type: str,
        table: _StateTable,
        slot_name: Callable[[str], str],
    ) -> None:
        self.head = head
        self.columns = sorted(feature_columns, key=lambda column: column.name)
        self.optimizer = optimizer
        self.loss_type = loss_type
        self.table = table
        self.slot_name = slot_name

    def build(self, features: Any, labels: Any, logits: tf.Tensor) -> tf.Operation:
        if not isinstance(features, Mapping):
            raise ValueError(
                f"LinearSDCA needs features as a dict (with the example id column), "
                f"got {type(features).__name__}."
            )
        weights = _model_variables()
        cache = _fc.FeatureTransformationCache(dict(features))
        batch = tf.shape(logits)[0]
        sparse, sparse_vars, dense, dense_vars = [], [], [], []
        for column in self.columns:
            variable = _weights_of(weights, column.name)
            if hasattr(column, "get_sparse_tensors"):
                sparse.append(_sparse_feature(column.get_sparse_tensors(cache, None)))
                sparse_vars.append(variable)
            elif isinstance(column, _fc.DenseColumn):
                if column.variable_shape.ndims != 1:
                    raise ValueError(
                        f"LinearSDCA needs dense columns of rank 1; column "
                        f"{column.name!r} ({type(column).__name__}) has shape "
                        f"{column.variable_shape}."
                    )
                dense.append(tf.cast(column.get_dense_tensor(cache, None), tf.float32))
                dense_vars.append(variable)
            else:
                raise ValueError(
                    f"LinearSDCA does not support column type {type(column).__name__} "
                    f"({column.name!r})."
                )
        dense.append(tf.ones([batch, 1], tf.float32))
        dense_vars.append(_weights_of(weights, "bias", "bias_weights"))
        sparse_slots = [self._slot(v) for v in sparse_vars]
        dense_slots = [self._slot(v) for v in dense_vars]
        ids = self._example_ids(features)
        with tf.control_dependencies([self._load_table()]):
            state = self._lookup(ids)
        unique = [tf.unique(f[1])[0] for f in sparse]
        delta_state, delta_sparse, delta_dense = tf.raw_ops.SdcaOptimizerV2(
            sparse_example_indices=[f[0] for f in sparse],
            sparse_feature_indices=[f[1] for f in sparse],
            sparse_feature_values=[f[2] for f in sparse],
            dense_features=dense,
            example_weights=self._example_weights(features, logits),
            example_labels=tf.reshape(tf.cast(labels, tf.float32), [-1]),
            sparse_indices=unique,
            sparse_weights=[
                tf.gather(s, u) for s, u in zip(sparse_slots, unique, strict=True)
            ],
            dense_weights=[s.read_value() for s in dense_slots],
            example_state_data=state,
            **self.optimizer.kernel_options(self.loss_type),
        )
        updates = [self._insert(ids, delta_state)]
        for slot, indices, delta in zip(
            sparse_slots, unique, delta_sparse, strict=True
        ):
            updates.append(slot.scatter_add(tf.IndexedSlices(delta, indices)))
        for slot, delta in zip(dense_slots, delta_dense, strict=True):
            updates.append(slot.assign_add(tf.reshape(delta, tf.shape(slot))))
        with tf.control_dependencies(updates):
            shrink = [
                self._shrink(v, s)
                for v, s in zip(
                    sparse_vars + dense_vars, sparse_slots + dense_slots, strict=True
                )
            ]
            saved = self._save_table()
        return tf.group(*shrink, saved)

    # ---- pieces -------------------------------------------------------------
    def _slot(self, variable: tf.Variable) -> tf.Variable:
        name = self.slot_name(variable.name.split(":")[0])
        shape = variable.shape
        return tf.Variable(
            lambda: tf.zeros(shape, tf.float32), name=name, trainable=False
        )

    def _shrink(self, variable: tf.Variable, slot: tf.Variable) -> tf.Operation:
        value = slot.read_value()
        shrinkage = self.optimizer.shrinkage
        if shrinkage > 0:
            value = tf.sign(value) * tf.maximum(0.0, tf.abs(value) - shrinkage)
        return variable.assign(value).op

    def _example_ids(self, features: Mapping[str, Any]) -> tf.Tensor:
        key = self.optimizer.example_id_column
        if key not in features:
            raise ValueError(
                f"LinearSDCA's example_id_column {key!r} is not among the features "
                f"{sorted(features)}. Return each example's id under {key!r} from "
                "input_fn."
            )
        ids = features[key]
        if isinstance(ids, tf.SparseTensor) or ids.dtype != tf.string:
            raise TypeError(
                f"LinearSDCA's example ids ({key!r}) must be a dense string tensor, "
                f"got {ids!r}. Convert them in input_fn, e.g. tf.strings.as_string."
            )
        return tf.raw_ops.SdcaFprint(input=tf.reshape(ids, [-1]))

    def _example_weights(self, features: Any, logits: tf.Tensor) -> tf.Tensor:
        if isinstance(self.head, WeightedHead):
            return tf.reshape(self.head.weights(features, logits), [-1])
        return tf.ones([tf.shape(logits)[0]], tf.float32)

    def _shard_of(self, keys: tf.Tensor) -> tf.Tensor:
        return tf.cast(
            tf.math.floormod(tf.abs(keys[:, 0]), self.table.num_shards), tf.int32
        )

    def _lookup(self, keys: tf.Tensor) -> tf.Tensor:
        tables = self.table.tables
        if len(tables) == 1:
            return tables[0].lookup(keys)
        shard = self._shard_of(keys)
        parts = tf.dynamic_partition(keys, shard, len(tables))
        positions = tf.dynamic_partition(
            tf.range(tf.shape(keys)[0]), shard, len(tables)
        )
        found = [t.lookup(p) for t, p in zip(tables, parts, strict=True)]
        return tf.dynamic_stitch(positions, found)

    def _insert(self, keys: tf.Tensor, values: tf.Tensor) -> tf.Operation:
        tables = self.table.tables
        if len(tables) == 1:
            return tables[0].insert(keys, values)
        shard = self._shard_of(keys)
        parts = tf.dynamic_partition(keys, shard, len(tables))
        value_parts = tf.dynamic_partition(values, shard, len(tables))
        return tf.group(
            *(
                t.insert(k, v)
                for t, k, v in zip(tables, parts, value_parts, strict=True)
            )
        )

    def _mirrors(self) -> list[tuple[tf.Variable, tf.Variable]]:
        """The checkpoint variables of each table shard, under 2.15's names."""
        n = self.table.num_shards
        mirrors = []
        for i in range(n):
            name = f"ShardedMutableHashTable-{i + 1}-of-{n}"
            # The bucket count grows with the table: the row count is free.
            keys = tf.Variable(
                lambda: tf.zeros([TABLE_BUCKETS, 2], tf.int64),
                name=f"{name}-keys",
                trainable=False,
                shape=tf.TensorShape([None, 2]),
            )
            values = tf.Variable(
                lambda: tf.zeros([TABLE_BUCKETS, _STATE_SIZE], tf.float32),
                name=f"{name}-values",
                trainable=False,
                shape=tf.TensorShape([None, _STATE_SIZE]),
            )
            mirrors.append((keys, values))
        return mirrors

    def _load_table(self) -> tf.Tensor:
        """On an Estimator's first step, reads the checkpoint's table into the live one."""
        tables, loaded = self.table.tables, self.table.loaded
        self._mirror_vars = self._mirrors()

        def load() -> tf.Tensor:
            inserts = []
            for t, (k, v) in zip(tables, self._mirror_vars, strict=True):
                keys, values = k.read_value(), v.read_value()
                # Rows holding the empty or deleted key are free buckets.
                used = tf.logical_not(
                    tf.reduce_all(tf.equal(keys, _EMPTY_KEY), 1)
                    | tf.reduce_all(tf.equal(keys, _DELETED_KEY), 1)
                )
                inserts.append(
                    t.insert(tf.boolean_mask(keys, used), tf.boolean_mask(values, used))
                )
            with tf.control_dependencies(inserts):
                return tf.identity(loaded.assign(True))

        return tf.cond(loaded.read_value(), lambda: tf.constant(True), load)

    def _save_table(self) -> tf.Operation:
        """Copies the live table, whatever its bucket count, into its checkpoint variables."""
        copies = []
        for table, (keys_var, values_var) in zip(
            self.table.tables, self._mirror_vars, strict=True
        ):
            keys, values = table.export()
            copies += [keys_var.assign(keys).op, values_var.assign(values).op]
        return tf.group(*copies)


def _model_variables() -> dict[str, tf.Variable]:
    """The linear model's variables in this trace, by name."""
    found = {}
    for variable in tf.compat.v1.get_collection(
        tf.compat.v1.GraphKeys.GLOBAL_VARIABLES
    ):
        name = variable.name.split(":")[0]
        if name.startswith(_MODEL_SCOPE + "/"):
            found[name] = variable
    return found


def _weights_of(
    weights: Mapping[str, tf.Variable], column: str, leaf: str = ""
) -> tf.Variable:
    name = f"{_MODEL_SCOPE}/{leaf}" if leaf else f"{_MODEL_SCOPE}/{column}/weights"
    if name not in weights:
        raise ValueError(
            f"LinearSDCA found no variable {name!r} in the linear model; it has "
            f"{sorted(weights)}."
        )
    return weights[name]


def _sparse_feature(pair: Any) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
    """(example index, feature id, value) triples, negative ids dropped, repeats summed."""
    ids = pair.id_tensor
    values = (
        tf.cast(pair.weight_tensor.values, tf.float32)
        if pair.weight_tensor is not None
        else tf.ones([tf.shape(ids.indices)[0]], tf.float32)
    )
    examples = ids.indices[:, 0]
    feature_ids = tf.cast(tf.reshape(ids.values, [-1]), tf.int64)
    # Out-of-vocabulary lookups give -1.
    valid = feature_ids >= 0
    examples = tf.boolean_mask(examples, valid)
    feature_ids = tf.boolean_mask(feature_ids, valid)
    values = tf.boolean_mask(values, valid)
    width = tf.reduce_max(feature_ids) + 1
    pairs, position = tf.unique(examples * width + feature_ids)
    count = tf.shape(pairs)[0]
    examples = tf.math.unsorted_segment_min(examples, position, count)
    feature_ids = pairs - width * examples
    values = tf.math.unsorted_segment_sum(values, position, count)
    return examples, feature_ids, values


def _check_count(name: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}.")
