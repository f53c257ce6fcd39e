"""A boosted-trees forest as dense arrays: its features, its TF evaluation, 2.8's format.

What this module owns:

* `FeatureLayout`: the feature columns BoostedTrees accepts (numeric,
  bucketized, indicator) and the dense float matrix the trees read, one
  column per value: the columns sorted by name, as tf.estimator 2.8 ordered
  them; a numeric column gives its values, a bucketized column its source's
  values (its splits are stored as thresholds on the source value, at bucket
  boundaries), an indicator column its counts per category.
* `Forest`: every tree as dense node arrays, `[n_trees, max_nodes]` of
  split feature, threshold, left and right child, `[n_trees, max_nodes,
  logits_dimension]` of leaf values, and a bias. A node sends an example
  left when `value < threshold`; a leaf is its own left and right child, so
  `depth` rounds of gathers bring every example to its leaf, whatever the
  tree's shape (`forest_logits`). NaN goes right. A split node's entry of
  the values array holds the value it had as a leaf (ydf's, or 2.8's
  `original_leaf`), and `gain` its split's gain, saved beside the variables
  (`boosted_trees/gain`) for the explanations (`boosted_trees_explanations`).
* `decode_tf28`: tf.estimator 2.8's `boosted_trees:0_serialized` checkpoint
  value (a `TreeEnsemble` protocol buffer, read here with a small wire-format
  reader, as TF 2.21 ships no `boosted_trees_pb2`) and its quantile bucket
  boundaries, turned into a `Forest` on the same feature layout. 2.8 split
  on bucket ids (`bucket <= threshold` goes left); each split becomes the
  equivalent threshold on the raw value, so predictions are equal.
"""

from __future__ import annotations

import dataclasses
import struct
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np
import tensorflow as tf

from keras_estimator._src.tf_internals import deprecation_notices

VARIABLE_SCOPE = "boosted_trees"
ARRAY_NAMES = (
    "split_feature",
    "threshold",
    "left_child",
    "right_child",
    "leaf_value",
    "bias",
)
GAIN_KEY = f"{VARIABLE_SCOPE}/gain"
TF28_ENSEMBLE_KEY = "boosted_trees:0_serialized"
TF28_BOUNDARIES_KEY = "boosted_trees/QuantileAccumulator:0_bucket_boundaries_{}"

_NUMERIC = ("NumericColumn", "_NumericColumn")
_BUCKETIZED = ("BucketizedColumn", "_BucketizedColumn")
_INDICATOR = ("IndicatorColumn", "_IndicatorColumn")


def _kind(column: Any) -> str:
    name = type(column).__name__
    for kind, names in (
        ("numeric", _NUMERIC),
        ("bucketized", _BUCKETIZED),
        ("indicator", _INDICATOR),
    ):
        if name in names:
            return kind
    raise ValueError(
        f"BoostedTrees supports numeric_column, bucketized_column and "
        f"indicator_column feature columns, got {column!r}. Wrap a categorical "
        "column in tf.feature_column.indicator_column, or bucketize/convert the "
        "feature to a numeric column."
    )


def _width(shape: Sequence[int], column: Any) -> int:
    if len(shape) > 1:
        raise ValueError(
            f"BoostedTrees reads numeric columns of rank 0 or 1, as tf.estimator "
            f"2.8 did; {column!r} has shape {tuple(shape)}. Reshape the feature "
            "to a vector."
        )
    return int(np.prod(shape)) if shape else 1


@dataclasses.dataclass(frozen=True)
class _Entry:
    """One feature column's slice of the dense matrix."""

    column: Any
    kind: str
    start: int
    width: int
    boundaries: tuple[float, ...] = ()


class FeatureLayout:
    """The dense value matrix the trees read; see the module."""

    def __init__(self, feature_columns: Sequence[Any]) -> None:
        names = [getattr(c, "name", None) for c in feature_columns]
        if len(set(names)) != len(names):
            raise ValueError(
                f"feature_columns has duplicate names {names}; give each column once."
            )
        entries, start = [], 0
        for column in sorted(feature_columns, key=lambda c: c.name):
            kind = _kind(column)
            bounds: tuple[float, ...] = ()
            if kind == "numeric":
                width = _width(column.shape, column)
            elif kind == "bucketized":
                width = _width(column.source_column.shape, column)
                bounds = tuple(float(b) for b in column.boundaries)
            else:
                width = int(column.categorical_column.num_buckets)
            entries.append(_Entry(column, kind, start, width, bounds))
            start += width
        self.entries: tuple[_Entry, ...] = tuple(entries)
        self.width = start

    def dense(self, features: Mapping[str, Any]) -> tf.Tensor:
        """The `[batch, width]` float32 matrix of `features`' values."""
        parts = []
        for entry in self.entries:
            column = entry.column
            source = column.source_column if entry.kind == "bucketized" else column
            with deprecation_notices.quiet():
                part = tf.compat.v1.feature_column.input_layer(dict(features), [source])
            parts.append(tf.cast(part, tf.float32))
        return tf.concat(parts, axis=1)

    def has_numeric(self) -> bool:
        """Whether a plain numeric column is used (2.8 sketched its quantiles)."""
        return any(entry.kind == "numeric" for entry in self.entries)

    def bucketized_slices(self) -> Iterator[tuple[int, int, np.ndarray]]:
        """`(start, stop, boundaries)` of each bucketized column's values."""
        for entry in self.entries:
            if entry.kind == "bucketized":
                bounds = np.asarray(entry.boundaries, np.float32)
                yield entry.start, entry.start + entry.width, bounds


@dataclasses.dataclass
class Forest:
    """Dense node arrays of a forest; see the module."""

    split_feature: np.ndarray  # int32 [n_trees, max_nodes]
    threshold: np.ndarray  # float32 [n_trees, max_nodes]
    left_child: np.ndarray  # int32 [n_trees, max_nodes]
    right_child: np.ndarray  # int32 [n_trees, max_nodes]
    leaf_value: np.ndarray  # float32 [n_trees, max_nodes, logits_dimension]
    bias: np.ndarray  # float32 [logits_dimension]
    depth: int
    gain: np.ndarray | None = None  # float32 [n_trees, max_nodes]; 0 at leaves

    def arrays(self) -> dict[str, np.ndarray]:
        """The arrays `forest_logits` reads, by name."""
        return {name: getattr(self, name) for name in ARRAY_NAMES}


# A tree before packing: nodes indexed from the root (0); a split is
# ("split", feature, threshold, left, right) or, with the value it had as a
# leaf and its gain, ("split", feature, threshold, left, right, values, gain);
# a leaf is ("leaf", values).
Node = tuple[Any, ...]


def _tree_depth(nodes: Sequence[Node]) -> int:
    depth, frontier = 0, [0]
    while True:
        children = [
            child
            for index in frontier
            if nodes[index][0] == "split"
            for child in nodes[index][3:5]
        ]
        if not children:
            return depth
        depth, frontier = depth + 1, children


def pack(
    trees: Sequence[Sequence[Node]],
    bias: Sequence[float] | np.ndarray,
    n_trees: int | None = None,
    max_nodes: int | None = None,
) -> Forest:
    """Packs trees into a `Forest`, padded to `n_trees` x `max_nodes` if given."""
    bias_array = np.asarray(bias, np.float32).reshape(-1)
    dim = bias_array.size
    count = max(n_trees or 0, len(trees), 1)
    width = max([max_nodes or 0, 1, *(len(t) for t in trees)])
    if (
        n_trees is not None
        and len(trees) > n_trees
        or (max_nodes is not None and width > max_nodes)
    ):
        raise ValueError(
            f"A forest of {len(trees)} trees of up to {width} nodes does not fit "
            f"{n_trees} x {max_nodes}."
        )
    own = np.tile(np.arange(width, dtype=np.int32), (count, 1))
    forest = Forest(
        np.zeros((count, width), np.int32),
        np.zeros((count, width), np.float32),
        own.copy(),
        own.copy(),
        np.zeros((count, width, dim), np.float32),
        bias_array,
        max([0, *(_tree_depth(t) for t in trees if t)]),
    )
    gain = np.zeros((count, width), np.float32)
    for t, nodes in enumerate(trees):
        for n, node in enumerate(nodes):
            if node[0] == "split":
                _, feature, threshold, left, right = node[:5]
                forest.split_feature[t, n] = feature
                forest.threshold[t, n] = threshold
                forest.left_child[t, n] = left
                forest.right_child[t, n] = right
                if len(node) == 7:
                    forest.leaf_value[t, n] = np.asarray(node[5], np.float32)
                    gain[t, n] = node[6]
            else:
                forest.leaf_value[t, n] = np.asarray(node[1], np.float32)
    forest.gain = gain
    return forest


def _descend(values: tf.Tensor, arrays: Mapping[str, Any], depth: int) -> list[tf.Tensor]:
    """The `[batch, n_trees]` node each example is at, root level first.

    `arrays` holds the `Forest` fields named in `ARRAY_NAMES` (arrays,
    constants or variables). Each of `depth` rounds moves every example one
    level down in every tree; a leaf points at itself, so an example that
    reached one stays there.
    """
    split_feature = tf.convert_to_tensor(arrays["split_feature"])
    n_trees = tf.shape(split_feature)[0]
    offsets = tf.range(n_trees) * tf.shape(split_feature)[1]  # [n_trees]
    flat = {
        name: tf.reshape(arrays[name], [-1])
        for name in ("split_feature", "threshold", "left_child", "right_child")
    }
    node = tf.zeros(tf.stack([tf.shape(values)[0], n_trees]), tf.int32)
    levels = [node]
    for _ in range(depth):
        index = node + offsets
        feature = tf.gather(flat["split_feature"], index)
        go_left = tf.gather(values, feature, batch_dims=1) < tf.gather(
            flat["threshold"], index
        )
        node = tf.where(
            go_left,
            tf.gather(flat["left_child"], index),
            tf.gather(flat["right_child"], index),
        )
        levels.append(node)
    return levels


def forest_paths(
    values: tf.Tensor, arrays: Mapping[str, Any], depth: int
) -> tf.Tensor:
    """The `[batch, n_trees, depth + 1]` node each example is at after each level."""
    return tf.stack(_descend(values, arrays, depth), axis=2)


def forest_logits(
    values: tf.Tensor, arrays: Mapping[str, Any], depth: int
) -> tf.Tensor:
    """The `[batch, logits_dimension]` sum of each tree's leaf plus the bias."""
    return leaf_logits(_descend(values, arrays, depth)[-1], arrays)


def leaf_logits(leaf: tf.Tensor, arrays: Mapping[str, Any]) -> tf.Tensor:
    """The bias plus the values of the `[batch, n_trees]` leaves examples reached."""
    leaf_value = tf.convert_to_tensor(arrays["leaf_value"])
    offsets = tf.range(tf.shape(leaf_value)[0]) * tf.shape(leaf_value)[1]
    leaves = tf.reshape(leaf_value, tf.stack([-1, tf.shape(leaf_value)[2]]))
    per_tree = tf.gather(leaves, leaf + offsets)  # [batch, n_trees, dim]
    return tf.reduce_sum(per_tree, axis=1) + arrays["bias"]


def read_forest(checkpoint_path: str, depth: int) -> Forest:
    """The forest this package saved in a checkpoint, as NumPy arrays."""
    reader = tf.train.load_checkpoint(checkpoint_path)
    arrays = {
        name: reader.get_tensor(f"{VARIABLE_SCOPE}/{name}") for name in ARRAY_NAMES
    }
    has_gain = reader.has_tensor(GAIN_KEY)
    return Forest(
        **arrays, depth=depth, gain=reader.get_tensor(GAIN_KEY) if has_gain else None
    )


# ---- the forest as variables ----------------------------------------------------
def variable_specs(n_trees: int, max_nodes: int, dim: int) -> dict[str, Any]:
    """`name -> (shape, dtype)` of the forest variables, for `n_trees` trees."""
    shape = [n_trees, max_nodes]
    return {
        "split_feature": (shape, tf.int32),
        "threshold": (shape, tf.float32),
        "left_child": (shape, tf.int32),
        "right_child": (shape, tf.int32),
        "leaf_value": ([*shape, dim], tf.float32),
        "bias": ([dim], tf.float32),
    }


def forest_variables(n_trees: int, max_nodes: int, dim: int) -> dict[str, Any]:
    """The model_fn's forest variables, `boosted_trees/<name>`, zero until trained.

    A zero forest is one root leaf of value 0 per tree: logits 0.
    """
    with tf.compat.v1.variable_scope(VARIABLE_SCOPE):
        return {
            name: tf.compat.v1.get_variable(
                name,
                shape=shape,
                dtype=dtype,
                initializer=tf.compat.v1.zeros_initializer(),
                trainable=False,
            )
            for name, (shape, dtype) in variable_specs(n_trees, max_nodes, dim).items()
        }


def checkpoint_values(forest: Forest) -> dict[str, np.ndarray]:
    """The forest's arrays under their checkpoint names (`forest_variables`'),
    and its gains (`GAIN_KEY`, saved only: the model_fn does not read them)."""
    values = {f"{VARIABLE_SCOPE}/{name}": getattr(forest, name) for name in ARRAY_NAMES}
    if forest.gain is not None:
        values[GAIN_KEY] = forest.gain
    return values


# ---- tf.estimator 2.8's TreeEnsemble ------------------------------------------
def _varint(buffer: bytes, position: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        byte = buffer[position]
        position += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, position
        shift += 7


def _fields(buffer: bytes) -> Iterator[tuple[int, int, Any]]:
    """`(field number, wire type, value)` of a serialized message's fields."""
    position = 0
    while position < len(buffer):
        key, position = _varint(buffer, position)
        number, wire = key >> 3, key & 7
        value: Any
        if wire == 0:
            value, position = _varint(buffer, position)
            if value >= 1 << 63:
                value -= 1 << 64
        elif wire == 1:
            value, position = buffer[position : position + 8], position + 8
        elif wire == 2:
            size, position = _varint(buffer, position)
            value, position = buffer[position : position + size], position + size
        elif wire == 5:
            value, position = buffer[position : position + 4], position + 4
        else:
            raise ValueError(
                f"Unsupported protobuf wire type {wire} in field {number}."
            )
        yield number, wire, value


def _floats(wire: int, value: Any) -> list[float]:
    """A repeated float field's values, packed (wire 2) or not (wire 5)."""
    return list(struct.unpack(f"<{len(value) // 4}f", value))


def _ints(message: bytes) -> dict[int, int]:
    return {number: value for number, wire, value in _fields(message) if wire == 0}


def _leaf(message: bytes, dim: int) -> np.ndarray:
    values = np.zeros(dim, np.float32)
    for number, wire, value in _fields(message):
        if number == 1:  # Vector
            dense = [f for n, w, v in _fields(value) if n == 1 for f in _floats(w, v)]
            values[: len(dense)] = dense
        elif number == 2:  # SparseVector
            index = [
                i for n, w, v in _fields(value) if n == 1 for i in _packed_ints(w, v)
            ]
            data = [f for n, w, v in _fields(value) if n == 2 for f in _floats(w, v)]
            values[np.asarray(index, np.int64)] = data
        elif number == 3:  # scalar
            values[0] = _floats(wire, value)[0]
    return values


def _packed_ints(wire: int, value: Any) -> list[int]:
    if wire == 0:
        return [value]
    out, position = [], 0
    while position < len(value):
        item, position = _varint(value, position)
        out.append(item)
    return out


def _tf28_tree(
    message: bytes, weight: float, dim: int, split_threshold: Any
) -> list[Node]:
    nodes: list[Node] = []
    for number, _, node in _fields(message):
        if number != 1:
            continue
        kind = {n: (w, v) for n, w, v in _fields(node)}
        if 2 in kind:
            split = _ints(kind[2][1])
            flat, threshold = split_threshold(
                split.get(1, 0), split.get(5, 0), split.get(2, 0)
            )
            gain, value = 0.0, np.zeros(dim, np.float32)
            for number, wire, field in _fields(kind.get(777, (2, b""))[1]):
                if number == 1:  # NodeMetadata.gain
                    gain = _floats(wire, field)[0] * weight
                elif number == 2:  # NodeMetadata.original_leaf
                    value = (_leaf(field, dim) * weight).astype(np.float32)
            nodes.append(
                ("split", flat, threshold, split.get(3, 0), split.get(4, 0), value, gain)
            )
        elif 1 in kind:
            nodes.append(("leaf", _leaf(kind[1][1], dim) * weight))
        elif set(kind) - {777}:
            raise ValueError(
                "The tf.estimator 2.8 forest has a categorical or dense split, "
                "which only categorical (not indicator) columns made; BoostedTrees "
                "here reads numeric, bucketized and indicator columns."
            )
        else:
            nodes.append(("leaf", np.zeros(dim, np.float32)))
    return nodes or [("leaf", np.zeros(dim, np.float32))]


def _tf28_features(
    layout: FeatureLayout, boundaries: Sequence[np.ndarray]
) -> list[tuple[str, int, np.ndarray]]:
    """2.8's feature list: `(kind, first value column, boundaries)` per feature id.

    A numeric column gave one feature per value, bucketized by its own
    quantile boundaries (a stream each, in column order); a bucketized column
    one feature of all its values; an indicator column one per category.
    """
    features, stream = [], 0
    for entry in layout.entries:
        if entry.kind == "bucketized":
            bounds = np.asarray(entry.boundaries, np.float32)
            features.append(("bucketized", entry.start, bounds))
        elif entry.kind == "indicator":
            for index in range(entry.width):
                features.append(
                    ("indicator", entry.start + index, np.zeros(0, np.float32))
                )
        else:
            for index in range(entry.width):
                if stream >= len(boundaries):
                    raise ValueError(
                        "The tf.estimator 2.8 checkpoint has bucket boundaries for "
                        f"{len(boundaries)} numeric values but feature_columns "
                        "have more. Construct the estimator with the feature "
                        "columns that trained this model_dir."
                    )
                features.append(("quantile", entry.start + index, boundaries[stream]))
                stream += 1
    return features


def _raw_threshold(kind: str, bucket: int, bounds: np.ndarray) -> float:
    """The raw-value threshold equal to 2.8's `bucket(value) <= bucket` test."""
    if kind == "indicator":
        return bucket + 0.5
    if kind == "bucketized":
        # Bucketize gives the number of boundaries <= value.
        return float(bounds[bucket]) if bucket < len(bounds) else np.inf
    # BoostedTreesBucketize gives the number of boundaries < value, at most
    # len - 1; value <= bounds[bucket] is value < the next float32 above it.
    if bucket >= len(bounds) - 1:
        return np.inf
    return float(np.nextafter(np.float32(bounds[bucket]), np.float32(np.inf)))


def decode_tf28(
    serialized: bytes,
    boundaries: Sequence[np.ndarray],
    layout: FeatureLayout,
    logits_dimension: int,
) -> Forest:
    """The `Forest` of 2.8's serialized `TreeEnsemble`; see the module."""
    features = _tf28_features(layout, boundaries)

    def split_threshold(
        feature_id: int, dimension: int, bucket: int
    ) -> tuple[int, float]:
        if not 0 <= feature_id < len(features):
            raise ValueError(
                f"The tf.estimator 2.8 forest splits on feature {feature_id} but "
                f"feature_columns give {len(features)} features. Construct the "
                "estimator with the feature columns that trained this model_dir."
            )
        kind, start, bounds = features[feature_id]
        return start + dimension, _raw_threshold(kind, bucket, bounds)

    trees, weights = [], []
    for number, wire, value in _fields(serialized):
        if number == 1:
            trees.append(value)
        elif number == 2:
            weights.extend(_floats(wire, value))
    weights += [1.0] * (len(trees) - len(weights))
    packed = [
        _tf28_tree(tree, weight, logits_dimension, split_threshold)
        for tree, weight in zip(trees, weights, strict=True)
    ]
    return pack(packed, np.zeros(logits_dimension, np.float32))


def read_tf28(
    checkpoint_path: str, layout: FeatureLayout, logits_dimension: int
) -> Forest | None:
    """The forest of a tf.estimator 2.8 checkpoint, or None if it is not one."""
    reader = tf.train.load_checkpoint(checkpoint_path)
    keys = reader.get_variable_to_shape_map()
    if TF28_ENSEMBLE_KEY not in keys:
        return None
    boundaries: list[np.ndarray] = []
    while TF28_BOUNDARIES_KEY.format(len(boundaries)) in keys:
        key = TF28_BOUNDARIES_KEY.format(len(boundaries))
        boundaries.append(np.asarray(reader.get_tensor(key), np.float32))
    serialized = reader.get_tensor(TF28_ENSEMBLE_KEY)
    return decode_tf28(serialized, boundaries, layout, logits_dimension)
