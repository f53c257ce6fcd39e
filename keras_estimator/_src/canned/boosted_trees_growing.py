"""Growing a forest with ydf for the BoostedTrees estimators.

The estimators (`boosted_trees.py`) hand this module their hyperparameters
(`TreeHParams`) and what the forest predicts (`Task`); it reads the training
batches into memory (`read_training_data`), maps the hyperparameters onto
ydf's gradient boosted trees and converts ydf's trees into the dense node
arrays of `boosted_trees_forest.Forest` (`grow_forest`). ydf is imported only
here, when a forest is grown (`import_ydf`).
"""

from __future__ import annotations

import dataclasses
import logging
import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import tensorflow as tf

from keras_estimator._src.canned import boosted_trees_forest as forest_lib
from keras_estimator._src.tf_internals import deprecation_notices

logger = logging.getLogger("keras_estimator")

INSTALL_HINT = "pip install keras_estimator[trees]"
# ydf's own default. 2.8's min_node_weight=0 allowed one-example leaves, but
# 2.8 split only at ~1/quantile_sketch_epsilon bucket boundaries; with ydf's
# exact thresholds, leaves of a few examples take Newton steps that saturate
# the logits (breast cancer, 100 trees of depth 6: held-out AUC 0.93 with 1,
# 0.99 with 5, 2.8 0.998).
MIN_EXAMPLES = 5
# ydf's threads pay off on large data only; on small data their start-up and
# synchronisation cost more than the work (455 x 30: 0.3 s on one thread,
# 2 s on two busy cores).
SINGLE_THREAD_VALUES = 1 << 20


def import_ydf() -> Any:
    """The ydf module, or an ImportError saying how to install it."""
    try:
        import ydf  # type: ignore[import-not-found]
    except ImportError as error:
        raise ImportError(
            "BoostedTreesClassifier and BoostedTreesRegressor train with ydf, which "
            f"is not installed ({error}). Install it with `{INSTALL_HINT}`."
        ) from None
    return ydf


@dataclasses.dataclass(frozen=True)
class TreeHParams:
    """2.8's tree hyperparameters, checked; see the module for their ydf mapping."""

    n_trees: int
    max_depth: int
    learning_rate: float
    l1: float
    l2: float
    tree_complexity: float
    min_node_weight: float
    center_bias: bool
    pruning_mode: str
    quantile_sketch_epsilon: float

    def __post_init__(self) -> None:
        for name in ("n_trees", "max_depth"):
            check_positive_int(name, getattr(self, name))
        if not _is_number(self.learning_rate) or self.learning_rate <= 0:
            raise ValueError(
                f"learning_rate must be a number > 0, got {self.learning_rate!r}."
            )
        for name in ("l1", "l2", "tree_complexity", "min_node_weight"):
            value = getattr(self, name)
            if not _is_number(value) or value < 0:
                label = f"{name}_regularization" if name in ("l1", "l2") else name
                raise ValueError(f"{label} must be a number >= 0, got {value!r}.")
        if self.pruning_mode not in ("none", "pre", "post"):
            raise ValueError(
                f"pruning_mode must be 'none', 'pre' or 'post', got "
                f"{self.pruning_mode!r}."
            )
        epsilon = self.quantile_sketch_epsilon
        if not _is_number(epsilon) or not 0 < epsilon < 1:
            raise ValueError(
                f"quantile_sketch_epsilon must be in (0, 1), got {epsilon!r}."
            )
        if self.tree_complexity > 0 or self.pruning_mode != "none":
            warnings.warn(
                f"tree_complexity={self.tree_complexity} and pruning_mode="
                f"{self.pruning_mode!r} have no ydf counterpart and are ignored: "
                "trees grow to max_depth.",
                stacklevel=4,
            )

    def ydf_kwargs(self, seed: int | None) -> dict[str, Any]:
        kwargs: dict[str, Any] = {
            "max_depth": self.max_depth + 1,
            "shrinkage": float(self.learning_rate),
            "l1_regularization": float(self.l1),
            "l2_regularization": float(self.l2),
            "min_examples": max(MIN_EXAMPLES, math.ceil(self.min_node_weight)),
            "growing_strategy": "LOCAL",
            "use_hessian_gain": True,
            "validation_ratio": 0.0,
            "early_stopping": "NONE",
        }
        if seed is not None:
            kwargs["random_seed"] = int(seed)
        return kwargs


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float, np.number)) and not isinstance(value, bool)


def check_positive_int(name: str, value: Any) -> None:
    if (
        not isinstance(value, (int, np.integer))
        or isinstance(value, bool)
        or value <= 0
    ):
        raise ValueError(f"{name} must be an integer > 0, got {value!r}.")


@dataclasses.dataclass(frozen=True)
class Task:
    """What the forest predicts: ydf's task and loss, and how labels read."""

    kind: str  # "binary", "multiclass" or "regression"
    logits_dimension: int
    label_vocabulary: tuple[str, ...] | None = None

    @property
    def trees_per_round(self) -> int:
        return 1 if self.kind == "binary" else self.logits_dimension


# ---- reading the training data ----------------------------------------------
def _weights(features: Any, weight_column: Any) -> np.ndarray:
    if isinstance(weight_column, str):
        if weight_column not in features:
            raise ValueError(
                f"weight_column {weight_column!r} is not among the features "
                f"{sorted(features)}. Return it from input_fn."
            )
        value = tf.cast(features[weight_column], tf.float32)
    else:
        with deprecation_notices.quiet():
            value = tf.compat.v1.feature_column.input_layer(
                dict(features), [weight_column]
            )
    return np.reshape(value.numpy(), [-1])


def _class_ids(labels: Any, task: Task) -> np.ndarray:
    raw = np.reshape(np.asarray(labels), [-1])
    if task.label_vocabulary is not None:
        index = {name: i for i, name in enumerate(task.label_vocabulary)}
        names = [v.decode() if isinstance(v, bytes) else str(v) for v in raw]
        unknown = sorted({n for n in names if n not in index})
        if unknown:
            raise ValueError(
                f"Labels {unknown[:5]} are not in label_vocabulary "
                f"{list(task.label_vocabulary)}. Add them, or fix the labels."
            )
        return np.asarray([index[n] for n in names], np.int64)
    if not np.issubdtype(raw.dtype, np.integer):
        raise ValueError(
            f"Labels must be integer class ids when label_vocabulary is None, got "
            f"dtype {raw.dtype}. Pass label_vocabulary for string labels."
        )
    n_classes = 2 if task.kind == "binary" else task.logits_dimension
    if raw.size and (raw.min() < 0 or raw.max() >= n_classes):
        raise ValueError(
            f"Labels must be in [0, {n_classes}), got values from {raw.min()} to "
            f"{raw.max()}. Fix the labels or n_classes."
        )
    return raw.astype(np.int64)


@dataclasses.dataclass(frozen=True)
class TrainingData:
    """The batches of input_fn that training reads, in memory."""

    values: np.ndarray  # float32 [examples, value columns]
    labels: np.ndarray  # class ids [examples], or float32 [examples, dimension]
    weights: np.ndarray | None  # [examples]
    batch_sizes: tuple[int, ...]


def read_training_data(
    dataset: tf.data.Dataset,
    layout: forest_lib.FeatureLayout,
    task: Task,
    weight_column: Any,
    n_batches: int,
) -> TrainingData:
    """The value matrix, labels and weights of `dataset`'s first `n_batches`."""
    values, labels, weights = [], [], []
    for element in dataset.take(n_batches):
        features, batch_labels = element
        if not isinstance(features, dict):
            raise ValueError(
                f"BoostedTrees needs input_fn's features as a dict of tensors keyed "
                f"by feature name, got {type(features).__name__}."
            )
        values.append(layout.dense(features).numpy())
        if task.kind == "regression":
            labels.append(
                np.reshape(
                    np.asarray(batch_labels, np.float32), [-1, task.logits_dimension]
                )
            )
        else:
            labels.append(_class_ids(batch_labels, task))
        if weight_column is not None:
            weights.append(_weights(features, weight_column))
    if not values:
        raise ValueError(
            "input_fn's dataset is empty: BoostedTrees has nothing to fit."
        )
    matrix = np.concatenate(values)
    if np.isnan(matrix).any():
        raise ValueError(
            "The training features hold NaN values; BoostedTrees here needs every "
            "value. Impute them in input_fn."
        )
    return TrainingData(
        matrix,
        np.concatenate(labels),
        np.concatenate(weights) if weights else None,
        tuple(len(batch) for batch in values),
    )


# ---- 2.8's global step ----------------------------------------------------------
# tf.estimator 2.8 ran one step per batch. A tree layer grew each time
# n_batches_per_layer batches had been read, so a tree of max_depth took
# max_depth * n_batches_per_layer steps; with center_bias=True the first steps
# centered the bias, n_batches_per_layer per Newton iteration, until an
# iteration moved the bias by at most 1% of it. The batches that fed its
# quantile sketch counted no step. A global step therefore says how much of
# the forest there is, and `Schedule` grows the same amount here: whole
# rounds of trees, then the first layers of the next round.
CENTERING_TOLERANCE = 0.01
MAX_CENTERING_ITERATIONS = 1000


@dataclasses.dataclass(frozen=True)
class Schedule:
    """Maps 2.8's global step onto the forest it had grown by then."""

    n_trees: int
    max_depth: int
    steps_per_layer: int
    centering_steps: int = 0

    @property
    def last_step(self) -> int:
        """The step at which 2.8 had grown all `n_trees` rounds."""
        tree_steps = self.n_trees * self.max_depth * self.steps_per_layer
        return self.centering_steps + tree_steps

    def forest_at(self, step: int) -> tuple[int, int]:
        """(complete rounds, layers of the round after them) at `step`."""
        if step >= self.last_step:
            return self.n_trees, 0
        layers = max(0, step - self.centering_steps) // self.steps_per_layer
        rounds, partial = divmod(layers, self.max_depth)
        return rounds, partial


def steps_in(dataset: tf.data.Dataset, skip: int, needed: int) -> int:
    """How many of `needed` training steps `dataset` feeds after `skip` batches.

    2.8 read one batch per step, so a dataset that ends stopped training; the
    batches its quantile sketch took first (`skip`) counted no step. Only a
    dataset of unknown length is read (up to what is needed) to count it.
    """
    cardinality = int(dataset.cardinality())
    if cardinality == int(tf.data.INFINITE_CARDINALITY):
        return needed
    if cardinality >= 0:
        return max(0, min(needed, cardinality - skip))
    counted = dataset.skip(skip).take(needed).reduce(
        np.int64(0), lambda count, *_: count + 1
    )
    return int(counted)


def _newton_step(gradient: float, hessian: float, l1: float, l2: float) -> float:
    """2.8's regularized leaf weight for summed `gradient` and `hessian`."""
    if l1 > 0:
        if abs(gradient) <= l1:
            return 0.0
        gradient -= math.copysign(l1, gradient)
    if hessian + l2 <= 1e-15:
        return 0.0
    return -gradient / (hessian + l2)


def centering_steps(
    data: TrainingData, task: Task, hparams: TreeHParams, n_batches: int
) -> int:
    """The steps 2.8's `center_bias=True` spent centering the bias on `data`.

    2.8 took Newton steps on one bias from 0 with the gradients and hessians
    of the head's loss (a weighted mean over each batch, averaged over the
    batches), and went on while a step moved the bias by more than 1% of it.
    Regression centers its first label dimension only, as 2.8's kernel did.
    """
    if not hparams.center_bias:
        return 0
    if task.kind == "regression":
        targets = data.labels[:, 0].astype(np.float64)
        outputs = task.logits_dimension
    else:
        targets = data.labels.astype(np.float64)
        outputs = 1
    weights = (
        np.ones_like(targets) if data.weights is None else data.weights.astype(np.float64)
    )
    cuts = np.cumsum(data.batch_sizes)[:-1]
    batches = list(zip(np.split(targets, cuts), np.split(weights, cuts), strict=True))
    bias = 0.0
    for iteration in range(1, MAX_CENTERING_ITERATIONS + 1):
        gradient = hessian = 0.0
        for target, weight in batches:
            # The loss's mean over the batch's elements, then a mean of
            # the per-example values: 1 / (size * elements) each.
            scale = 1.0 / (len(target) * len(target) * outputs)
            if task.kind == "regression":
                gradient += scale * float(np.sum(2.0 * weight * (bias - target)))
                hessian += scale * float(np.sum(2.0 * weight))
            else:
                p = 1.0 / (1.0 + math.exp(-bias))
                gradient += scale * float(np.sum(weight * (p - target)))
                hessian += scale * float(np.sum(weight)) * p * (1.0 - p)
        update = _newton_step(
            gradient / len(batches), hessian / len(batches), hparams.l1, hparams.l2
        )
        if iteration > 1:
            # 2.8 compared in floats: x / 0 is infinite, 0 / 0 is NaN (stops).
            ratio = update / bias if bias else (math.inf if update else math.nan)
            if not abs(ratio) > CENTERING_TOLERANCE:
                return iteration * n_batches
        bias += update
    return MAX_CENTERING_ITERATIONS * n_batches


# ---- growing the forest with ydf -----------------------------------------------
def _ydf_threshold(
    flat: int, threshold: float, buckets: dict[int, np.ndarray]
) -> float:
    """The raw-value threshold of ydf's `value >= threshold` split on column `flat`.

    Bucketized columns were given to ydf as bucket ids (the number of
    boundaries <= value); `bucket < threshold` is `value < boundaries[t]`.
    """
    if flat not in buckets:
        return float(np.float32(threshold))
    bounds = buckets[flat]
    last_left = math.ceil(threshold) - 1
    if last_left < 0:
        return -np.inf
    return float(bounds[last_left]) if last_left < len(bounds) else np.inf


def _ydf_nodes(
    tree: Any,
    column_of: dict[int, int],
    buckets: dict[int, np.ndarray],
    leaf: Callable[[float], np.ndarray],
    layers: int | None = None,
) -> list[forest_lib.Node]:
    """A ydf tree's nodes, root first; ydf's negative child is the left one.

    With `layers`, the tree stops after that many layers of splits: a node
    at that depth becomes a leaf of its own value, which ydf set as it would
    have for a leaf there (each node's split depends on its examples only).
    A split keeps that value and its gain (ydf's score) for the
    explanations.
    """
    nodes: list[forest_lib.Node] = []

    def add(node: Any, depth: int) -> int:
        index = len(nodes)
        nodes.append(("leaf", None))
        condition = getattr(node, "condition", None)
        if condition is None or depth == layers:
            nodes[index] = ("leaf", leaf(float(node.value.value)))
            return index
        if type(condition).__name__ != "NumericalHigherThanCondition":
            raise RuntimeError(f"Unexpected ydf split condition {condition!r}.")
        flat = column_of[condition.attribute]
        threshold = _ydf_threshold(flat, condition.threshold, buckets)
        left = add(node.neg_child, depth + 1)
        right = add(node.pos_child, depth + 1)
        value = leaf(float(node.value.value))
        gain = float(condition.score)
        nodes[index] = ("split", flat, threshold, left, right, value, gain)
        return index

    add(tree.root, 0)
    return nodes


def _train_ydf(
    values: np.ndarray,
    labels: np.ndarray,
    weights: np.ndarray | None,
    buckets: dict[int, np.ndarray],
    ydf_task: str,
    kwargs: dict[str, Any],
) -> tuple[Any, dict[int, int]]:
    """A ydf model of `values`, and the value column of each ydf attribute."""
    ydf = import_ydf()
    data: dict[str, np.ndarray] = {}
    for column in range(values.shape[1]):
        column_values = values[:, column]
        if column in buckets:
            column_values = np.searchsorted(
                buckets[column], column_values, side="right"
            )
        data[f"v{column}"] = column_values.astype(np.float32)
    data["label"] = labels
    if weights is not None:
        data["weight"] = weights.astype(np.float32)
    learner = ydf.GradientBoostedTreesLearner(
        label="label",
        task=ydf.Task.CLASSIFICATION
        if ydf_task != "SQUARED_ERROR"
        else ydf.Task.REGRESSION,
        loss=ydf_task,
        weights="weight" if weights is not None else None,
        features=[
            (name, ydf.Semantic.NUMERICAL) for name in data if name.startswith("v")
        ],
        include_all_columns=False,
        **kwargs,
    )
    model = learner.train(data, verbose=0)
    column_of = {f.column_idx: int(f.name[1:]) for f in model.input_features()}
    return model, column_of


def grow_forest(
    data: TrainingData,
    layout: forest_lib.FeatureLayout,
    task: Task,
    hparams: TreeHParams,
    rounds: int,
    layers: int,
    seed: int | None,
) -> forest_lib.Forest:
    """`rounds` rounds of ydf boosting and `layers` of the next, packed to the
    estimator's variable shapes (see `Schedule`)."""
    buckets = {
        column: bounds
        for start, stop, bounds in layout.bucketized_slices()
        for column in range(start, stop)
    }
    grown = rounds + (1 if layers else 0)
    # ydf grows at least one tree; with none wanted, only its prior is kept.
    kwargs = {**hparams.ydf_kwargs(seed), "num_trees": max(grown, 1)}
    if data.values.size < SINGLE_THREAD_VALUES:
        kwargs["num_threads"] = 1
    dim = task.logits_dimension
    trees: list[list[forest_lib.Node]] = []
    bias = np.zeros(dim, np.float32)
    labels = data.labels
    if task.kind != "regression" and np.unique(labels).size < 2:
        raise ValueError(
            f"The training batches hold one class only (label {labels[0]}): ydf "
            "grows no classifier from them. Give training both classes: shuffle "
            "the data, or read more batches (n_batches_per_layer)."
        )
    if task.kind == "regression":
        runs = [(labels[:, d], "SQUARED_ERROR", [d]) for d in range(dim)]
    elif task.kind == "binary":
        runs = [(labels, "BINOMIAL_LOG_LIKELIHOOD", [])]
    else:
        runs = [(labels, "MULTINOMIAL_LOG_LIKELIHOOD", [])]
    for run_labels, loss, outputs in runs:
        model, column_of = _train_ydf(
            data.values, run_labels, data.weights, buckets, loss, kwargs
        )
        if not outputs:  # classification: ydf's classes, in its own order
            classes = [int(c) for c in model.label_classes()]
            outputs = [0] if task.kind == "binary" else classes
            sign = -1.0 if task.kind == "binary" and classes[1] == 0 else 1.0
        else:
            sign = 1.0
        for i, prior in enumerate(np.reshape(model.initial_predictions(), [-1])):
            bias[outputs[i]] += sign * prior
        per_round = len(outputs)
        for i in range(min(model.num_trees(), grown * per_round)):
            output = outputs[i % per_round]

            def leaf(
                value: float, output: int = output, sign: float = sign
            ) -> np.ndarray:
                vector = np.zeros(dim, np.float32)
                vector[output] = sign * value
                return vector

            partial = layers if i // per_round == rounds else None
            trees.append(
                _ydf_nodes(model.get_tree(i), column_of, buckets, leaf, partial)
            )
    return forest_lib.pack(
        trees,
        bias,
        n_trees=hparams.n_trees * task.trees_per_round,
        max_nodes=2 ** (hparams.max_depth + 1) - 1,
    )
