"""tf.estimator 2.8's BoostedTrees explanations: gain importances and DFCs.

`feature_importances` is `experimental_feature_importances`: each feature
column's summed split gains over the forest, optionally divided by their
total, largest first.

`contributions` is one example's directional feature contributions
(`experimental_predict_with_explanations`'s `dfc` and `bias`). Following the
example down every tree in order, each split it passes moves the prediction
from the split node's value to its child's; the move, measured after the
activation (the probability of class 1 for a classifier, the value itself
for a regressor), is credited to the feature column split on. The path
starts from `bias`: the activation of the forest's bias plus the first
tree's root value (2.8 kept its centred bias there; ydf's is about 0 at the
label prior it starts from). Later trees count from 0, as 2.8's trees
started at 0: a ydf tree's root value goes to its first split, or to the
bias if the root is a leaf. So `bias` is the same for every example and
`bias + sum(dfc)` is the prediction.

The names are 2.8's: one per value column of the dense layout, the feature
column's name, or for an indicator column its categorical column's name.
"""

from __future__ import annotations

import collections
from collections.abc import Callable, Sequence

import numpy as np

from keras_estimator._src.canned import boosted_trees_forest as forest_lib


def value_column_names(layout: forest_lib.FeatureLayout) -> list[str]:
    """The feature column name of each value column, 2.8's names."""
    names: list[str] = []
    for entry in layout.entries:
        column = entry.column
        if entry.kind == "indicator":
            column = column.categorical_column
        names.extend([column.name] * entry.width)
    return names


def _by_name(names: Sequence[str], values: np.ndarray) -> collections.OrderedDict:
    """Values summed by name, largest magnitude first (ties: first seen first)."""
    totals: dict[str, float] = {}
    for name, value in zip(names, values, strict=True):
        totals[name] = totals.get(name, 0.0) + float(value)
    ranked = sorted(totals.items(), key=lambda item: abs(item[1]), reverse=True)
    return collections.OrderedDict(ranked)


def _splits(forest: forest_lib.Forest) -> np.ndarray:
    """Whether each node is a split (a leaf is its own left child)."""
    own = np.arange(forest.left_child.shape[1])
    return forest.left_child != own


def feature_importances(
    forest: forest_lib.Forest, names: Sequence[str], normalize: bool
) -> collections.OrderedDict:
    """Summed split gains per feature column; see the module.

    Raises:
        ValueError: the forest has no gains saved, or `normalize` is asked
            of gains that are negative or all zero (no split).
    """
    if forest.gain is None:
        raise ValueError(
            "This checkpoint holds no split gains (boosted_trees/gain): it was "
            "saved before they were. Train the estimator again in a new model_dir "
            "to get feature importances."
        )
    splits = _splits(forest)
    totals = np.bincount(
        forest.split_feature[splits],
        weights=forest.gain[splits].astype(np.float64),
        minlength=len(names),
    )
    if normalize:
        if np.any(totals < 0):
            raise ValueError(
                f"normalize=True needs non-negative importances, got {totals.min()}: "
                "pass normalize=False."
            )
        total = totals.sum()
        if total <= 0:
            raise ValueError(
                "normalize=True needs at least one split, but the trees are all "
                "empty or only a root. Train the estimator first."
            )
        totals = totals / total
    return _by_name(names, totals)


def check_explainable(forest: forest_lib.Forest) -> None:
    """Raises ValueError if the forest's splits carry no values (older saves)."""
    splits = _splits(forest)
    if splits.any() and not forest.leaf_value[splits].any():
        raise ValueError(
            "This checkpoint holds no values at the trees' split nodes: it was "
            "saved before they were. Train the estimator again in a new model_dir "
            "to get feature contributions."
        )


def sigmoid(logits: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-logits))


def identity(logits: np.ndarray) -> np.ndarray:
    return logits


def contributions(
    forest: forest_lib.Forest,
    path: np.ndarray,
    activation: Callable[[np.ndarray], np.ndarray],
    names: Sequence[str],
) -> tuple[float, collections.OrderedDict]:
    """One example's `(bias, dfc)` from its `[n_trees, depth + 1]` node path."""
    values = forest.leaf_value[..., 0].astype(np.float64)
    # Later trees' roots count from 0, as 2.8's did: a split root's value
    # goes to its first split (a leaf root's, to the bias).
    later_split_roots = _splits(forest)[:, 0] & (np.arange(len(values)) > 0)
    values[later_split_roots, 0] = 0.0
    trees = np.arange(values.shape[0])[:, None]
    here, there = path[:, :-1], path[:, 1:]
    moved = there != here  # [n_trees, depth]: a split was passed
    steps = (values[trees, there] - values[trees, here])[moved]
    features = forest.split_feature[trees, here][moved]
    start = float(forest.bias[0]) + float(values[:, 0].sum())
    logits = start + np.concatenate([[0.0], np.cumsum(steps)])
    predictions = activation(logits)
    credited = np.bincount(
        features, weights=np.diff(predictions), minlength=len(names)
    )
    return float(predictions[0]), _by_name(names, credited)
