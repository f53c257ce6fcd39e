"""`BoostedTreesClassifier`, `BoostedTreesRegressor`, `BoostedTreesEstimator`: 2.8's, by ydf.

TensorFlow 2.15 and later keep the BoostedTrees* op definitions but register
no kernels for them, so 2.8's layer-by-layer training cannot run. Here the
forest is grown by ydf (Yggdrasil Decision Forests, `pip install
keras_estimator[trees]`) on the training data read into memory, and stored
in model_dir as plain variables (`boosted_trees_forest.Forest`:
`boosted_trees/{split_feature,threshold,left_child,right_child,leaf_value,
bias}` and `global_step`) in a normal checkpoint. Predict, evaluate and
`export_saved_model` run the model_fn, whose logits are a few gathers over
those variables, through the usual head: the SavedModel needs neither ydf
nor this package. A model_dir written by tf.estimator 2.8's BoostedTrees is
read too: its serialized ensemble is decoded into the same arrays (constants
then) and predicts as 2.8 did.

How 2.8's hyperparameters map onto ydf's gradient boosted trees: `n_trees`
-> num_trees (per class for multi-class, per label dimension for
regression), `max_depth` -> max_depth + 1 (ydf counts the root as depth 1),
`learning_rate` -> shrinkage, `l1_regularization`/`l2_regularization` ->
l1/l2_regularization, `min_node_weight` -> min_examples (ydf counts examples
where 2.8 summed hessians; at least ydf's default, `MIN_EXAMPLES`), local
(depth-first) growth with hessian gain, binomial / multinomial
log-likelihood or squared error, and `config.tf_random_seed` ->
random_seed. ydf always starts from the label prior (as 2.8's
`center_bias=True`) and finds exact thresholds, without 2.8's quantile
sketch; `tree_complexity` and pruning have no ydf counterpart and warn when
set.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import tensorflow as tf

from keras_estimator._src.base.mode_keys import ModeKeys
from keras_estimator._src.base.session_run_hook import SessionStandIn
from keras_estimator._src.canned import boosted_trees_forest as forest_lib
from keras_estimator._src.canned.dnn import (
    check_feature_columns,
    check_features,
    classification_head,
)
from keras_estimator._src.checkpoint import checkpoints as _checkpoint
from keras_estimator._src.checkpoint import model_dir_lock as _model_dir_lock
from keras_estimator._src.engine import inputs
from keras_estimator._src.estimator.estimator import (
    Estimator,
    _check_listeners,
    check_steps,
)
from keras_estimator._src.head.base_head import SUM_OVER_BATCH_SIZE, Head
from keras_estimator._src.head.classification_heads import (
    BinaryClassHead,
    MultiClassHead,
)
from keras_estimator._src.head.regression_heads import RegressionHead

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
            _check_positive_int(name, getattr(self, name))
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


def _check_positive_int(name: str, value: Any) -> None:
    if (
        not isinstance(value, (int, np.integer))
        or isinstance(value, bool)
        or value <= 0
    ):
        raise ValueError(f"{name} must be an integer > 0, got {value!r}.")


@dataclasses.dataclass(frozen=True)
class _Task:
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
        value = tf.compat.v1.feature_column.input_layer(dict(features), [weight_column])
    return np.reshape(value.numpy(), [-1])


def _class_ids(labels: Any, task: _Task) -> np.ndarray:
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


def read_training_data(
    dataset: tf.data.Dataset,
    layout: forest_lib.FeatureLayout,
    task: _Task,
    weight_column: Any,
    n_batches: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """The value matrix, labels and weights of input_fn's first `n_batches`."""
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
    return matrix, np.concatenate(labels), np.concatenate(weights) if weights else None


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
) -> list[forest_lib.Node]:
    """A ydf tree's nodes, root first; ydf's negative child is the left one."""
    nodes: list[forest_lib.Node] = []

    def add(node: Any) -> int:
        index = len(nodes)
        nodes.append(("leaf", None))
        condition = getattr(node, "condition", None)
        if condition is None:
            nodes[index] = ("leaf", leaf(float(node.value.value)))
            return index
        if type(condition).__name__ != "NumericalHigherThanCondition":
            raise RuntimeError(f"Unexpected ydf split condition {condition!r}.")
        flat = column_of[condition.attribute]
        threshold = _ydf_threshold(flat, condition.threshold, buckets)
        left = add(node.neg_child)
        right = add(node.pos_child)
        nodes[index] = ("split", flat, threshold, left, right)
        return index

    add(tree.root)
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
    values: np.ndarray,
    labels: np.ndarray,
    weights: np.ndarray | None,
    layout: forest_lib.FeatureLayout,
    task: _Task,
    hparams: TreeHParams,
    n_trees: int,
    seed: int | None,
) -> forest_lib.Forest:
    """`n_trees` rounds of ydf boosting, packed to the estimator's variable shapes."""
    buckets = {
        column: bounds
        for start, stop, bounds in layout.bucketized_slices()
        for column in range(start, stop)
    }
    kwargs = {**hparams.ydf_kwargs(seed), "num_trees": n_trees}
    if values.size < SINGLE_THREAD_VALUES:
        kwargs["num_threads"] = 1
    dim = task.logits_dimension
    trees: list[list[forest_lib.Node]] = []
    bias = np.zeros(dim, np.float32)
    if task.kind == "regression":
        runs = [(labels[:, d], "SQUARED_ERROR", [d]) for d in range(dim)]
    elif task.kind == "binary":
        runs = [(labels, "BINOMIAL_LOG_LIKELIHOOD", [])]
    else:
        runs = [(labels, "MULTINOMIAL_LOG_LIKELIHOOD", [])]
    for run_labels, loss, outputs in runs:
        model, column_of = _train_ydf(
            values, run_labels, weights, buckets, loss, kwargs
        )
        if not outputs:  # classification: ydf's classes, in its own order
            classes = [int(c) for c in model.label_classes()]
            outputs = [0] if task.kind == "binary" else classes
            sign = -1.0 if task.kind == "binary" and classes[1] == 0 else 1.0
        else:
            sign = 1.0
        for i, prior in enumerate(np.reshape(model.initial_predictions(), [-1])):
            bias[outputs[i]] += sign * prior
        for i in range(model.num_trees()):
            output = outputs[i % len(outputs)]

            def leaf(
                value: float, output: int = output, sign: float = sign
            ) -> np.ndarray:
                vector = np.zeros(dim, np.float32)
                vector[output] = sign * value
                return vector

            trees.append(_ydf_nodes(model.get_tree(i), column_of, buckets, leaf))
    return forest_lib.pack(
        trees,
        bias,
        n_trees=hparams.n_trees * task.trees_per_round,
        max_nodes=2 ** (hparams.max_depth + 1) - 1,
    )


# ---- the estimator -------------------------------------------------------------
class _BoostedTrees(Estimator):
    """The estimator both canned classes are; see the module."""

    def __init__(
        self,
        head: Head,
        task: _Task,
        feature_columns: Any,
        n_batches_per_layer: int,
        model_dir: str | None,
        weight_column: Any,
        hparams: TreeHParams,
        config: Any,
        train_in_memory: bool,
    ) -> None:
        import_ydf()
        _check_positive_int("n_batches_per_layer", n_batches_per_layer)
        self._layout = forest_lib.FeatureLayout(check_feature_columns(feature_columns))
        self._head = head
        self._task = task
        self._hparams = hparams
        self._n_batches = int(n_batches_per_layer)
        self._weight_column = weight_column
        self._train_in_memory = bool(train_in_memory)
        self._tf28: dict[str, forest_lib.Forest | None] = {}
        super().__init__(
            model_fn=self._forest_model_fn, model_dir=model_dir, config=config
        )

    # ---- the model_fn: logits from the forest ---------------------------------
    def _forest_model_fn(
        self, features: Any, labels: Any, mode: str, config: Any
    ) -> Any:
        check_features(features, [entry.column for entry in self._layout.entries])
        values = self._layout.dense(features)
        forest = self._tf28_forest(config.model_dir)
        if forest is None:
            arrays, depth = self._forest_variables(), self._hparams.max_depth
        else:
            arrays = {k: tf.constant(v) for k, v in forest.arrays().items()}
            depth = forest.depth
        logits = forest_lib.forest_logits(values, arrays, depth)
        return self._head.create_estimator_spec(
            features, mode, logits, labels=labels, train_op_fn=lambda loss: tf.no_op()
        )

    def _forest_variables(self) -> dict[str, Any]:
        return forest_lib.forest_variables(
            self._hparams.n_trees * self._task.trees_per_round,
            2 ** (self._hparams.max_depth + 1) - 1,
            self._task.logits_dimension,
        )

    def _tf28_forest(self, model_dir: str) -> forest_lib.Forest | None:
        """The forest of model_dir's latest checkpoint if tf.estimator 2.8 wrote it."""
        path = _checkpoint.latest(model_dir)
        if path is None:
            return None
        if path not in self._tf28:
            self._tf28[path] = forest_lib.read_tf28(
                path, self._layout, self._task.logits_dimension
            )
        return self._tf28[path]

    # ---- train: grow with ydf, save as a checkpoint ---------------------------
    def train(
        self,
        input_fn: Callable[..., Any],
        hooks: Sequence[Any] | None = None,
        steps: int | None = None,
        max_steps: int | None = None,
        saving_listeners: Sequence[Any] | None = None,
        *,
        callbacks: Sequence[Any] | None = None,
        progress: bool | None = None,
    ) -> Estimator:
        """Grows the forest on input_fn's data and saves it; see the class.

        Args:
            input_fn: returns a dataset of `(features, labels)`; its first
                `n_batches_per_layer` batches are the training data.
            hooks: accepted for tf.estimator's signature; training runs no TF
                steps, so they are not called (a warning says so).
            steps: trees (rounds) to add to the global step.
            max_steps: the number of rounds to stop at.
            saving_listeners: `CheckpointSaverListener`s, called around the
                one checkpoint save.
            callbacks: as `hooks`.
            progress: accepted for `Estimator.train`'s signature; growing
                shows no progress bar.

        Returns:
            self.
        """
        check_steps(steps, max_steps)
        listeners = _check_listeners(saving_listeners)
        if hooks or callbacks:
            warnings.warn(
                "BoostedTrees trains with ydf and runs no TensorFlow steps: the "
                "hooks and callbacks given to train() are not called.",
                stacklevel=2,
            )
        import_ydf()
        tf.io.gfile.makedirs(self.model_dir)
        with _model_dir_lock.held(self.model_dir):
            self._grow(input_fn, steps, max_steps, listeners)
        return self

    def _grow(
        self,
        input_fn: Callable[..., Any],
        steps: int | None,
        max_steps: int | None,
        listeners: list[Any],
    ) -> None:
        latest = self.latest_checkpoint()
        if latest is not None and self._tf28_forest(self.model_dir) is not None:
            logger.warning(
                "model_dir %s holds a tf.estimator 2.8 forest; it predicts and "
                "exports here but is not trained further. Train in a new model_dir.",
                self.model_dir,
            )
            return
        start = _checkpoint.step_of(latest) if latest is not None else 0
        limit = self._hparams.n_trees
        if max_steps is not None:
            limit = max_steps
        elif steps is not None:
            limit = start + steps
        target = min(self._hparams.n_trees, limit)
        if target < self._hparams.n_trees:
            logger.warning(
                "BoostedTrees' global step counts trees here (tf.estimator 2.8 "
                "counted one step per tree layer and batch): steps=%s, "
                "max_steps=%s stop the forest at %d of its n_trees=%d trees.",
                steps,
                max_steps,
                target,
                self._hparams.n_trees,
            )
        if start >= target:
            logger.info(
                "Skipping training: the forest already has %d of its %d rounds.",
                start,
                self._hparams.n_trees,
            )
            return
        dataset = inputs.make_dataset(
            input_fn, ModeKeys.TRAIN, self.params, self.config
        )
        values, labels, weights = read_training_data(
            dataset, self._layout, self._task, self._weight_column, self._n_batches
        )
        forest = grow_forest(
            values,
            labels,
            weights,
            self._layout,
            self._task,
            self._hparams,
            target,
            self.config.tf_random_seed,
        )
        self._save(forest, target, listeners)

    def _save(self, forest: forest_lib.Forest, step: int, listeners: list[Any]) -> None:
        variables = {
            name: tf.Variable(value)
            for name, value in forest_lib.checkpoint_values(forest).items()
        }
        variables["global_step"] = tf.Variable(np.int64(step))
        policy = _checkpoint.RetentionPolicy(
            self.config.keep_checkpoint_max,
            float(self.config.keep_checkpoint_every_n_hours),
        )
        session = SessionStandIn()
        for listener in listeners:
            listener.begin()
            listener.before_save(session, step)
        _checkpoint.save(variables, self.model_dir, step, policy)
        for listener in listeners:
            listener.after_save(session, step)
            listener.end(session, step)


class BoostedTreesClassifier(_BoostedTrees):
    """A gradient-boosted forest classifier, tf.estimator 2.8's, grown by ydf.

    Training reads input_fn's first `n_batches_per_layer` batches (or the
    whole dataset, if it ends first) into memory and grows the forest with
    ydf in one go: the data must fit in memory. `train_in_memory` is
    accepted for 2.8's signature; training is always in memory here.

    The global step counts boosting rounds: `train()` grows `n_trees` rounds
    (fewer if `steps`/`max_steps` stop it earlier) and saves one checkpoint at
    that step; once the step reaches `n_trees`, further `train()` calls do
    nothing. ydf cannot add trees to a forest, so a later call that raises the
    limit grows the larger forest anew on that call's data.

    Columns: `numeric_column` (rank 0 or 1), `bucketized_column` (split at
    its bucket boundaries, as 2.8 split on bucket ids) and `indicator_column`
    of a categorical column. Predictions, metrics and export signatures are
    those of `BinaryClassHead` (n_classes=2) or `MultiClassHead`. See the
    module for the hyperparameters' ydf counterparts.

    Raises:
        ImportError: ydf is not installed (`pip install keras_estimator[trees]`).
        ValueError: an unsupported feature column or hyperparameter value.
    """

    def __init__(
        self,
        feature_columns: Sequence[Any],
        n_batches_per_layer: int,
        model_dir: str | None = None,
        n_classes: int = 2,
        weight_column: Any = None,
        label_vocabulary: Sequence[str] | None = None,
        n_trees: int = 100,
        max_depth: int = 6,
        learning_rate: float = 0.1,
        l1_regularization: float = 0.0,
        l2_regularization: float = 0.0,
        tree_complexity: float = 0.0,
        min_node_weight: float = 0.0,
        config: Any = None,
        center_bias: bool = False,
        pruning_mode: str = "none",
        quantile_sketch_epsilon: float = 0.01,
        train_in_memory: bool = False,
    ) -> None:
        head = classification_head(
            n_classes, weight_column, label_vocabulary, SUM_OVER_BATCH_SIZE
        )
        task = _Task(
            "binary" if n_classes == 2 else "multiclass",
            head.logits_dimension,
            tuple(label_vocabulary) if label_vocabulary is not None else None,
        )
        hparams = TreeHParams(
            n_trees,
            max_depth,
            learning_rate,
            l1_regularization,
            l2_regularization,
            tree_complexity,
            min_node_weight,
            center_bias,
            pruning_mode,
            quantile_sketch_epsilon,
        )
        super().__init__(
            head,
            task,
            feature_columns,
            n_batches_per_layer,
            model_dir,
            weight_column,
            hparams,
            config,
            train_in_memory,
        )


class BoostedTreesRegressor(_BoostedTrees):
    """A gradient-boosted forest regressor, tf.estimator 2.8's, grown by ydf.

    As `BoostedTreesClassifier` (training data in memory, global step in
    boosting rounds, the same columns), with a `RegressionHead` of
    `label_dimension` outputs; each output has its own `n_trees` trees,
    fitted with squared error.

    Raises:
        ImportError: ydf is not installed (`pip install keras_estimator[trees]`).
        ValueError: an unsupported feature column or hyperparameter value.
    """

    def __init__(
        self,
        feature_columns: Sequence[Any],
        n_batches_per_layer: int,
        model_dir: str | None = None,
        label_dimension: int = 1,
        weight_column: Any = None,
        n_trees: int = 100,
        max_depth: int = 6,
        learning_rate: float = 0.1,
        l1_regularization: float = 0.0,
        l2_regularization: float = 0.0,
        tree_complexity: float = 0.0,
        min_node_weight: float = 0.0,
        config: Any = None,
        center_bias: bool = False,
        pruning_mode: str = "none",
        quantile_sketch_epsilon: float = 0.01,
        train_in_memory: bool = False,
    ) -> None:
        _check_positive_int("label_dimension", label_dimension)
        head = RegressionHead(
            label_dimension=label_dimension, weight_column=weight_column
        )
        hparams = TreeHParams(
            n_trees,
            max_depth,
            learning_rate,
            l1_regularization,
            l2_regularization,
            tree_complexity,
            min_node_weight,
            center_bias,
            pruning_mode,
            quantile_sketch_epsilon,
        )
        super().__init__(
            head,
            _Task("regression", int(label_dimension)),
            feature_columns,
            n_batches_per_layer,
            model_dir,
            weight_column,
            hparams,
            config,
            train_in_memory,
        )


class BoostedTreesEstimator(_BoostedTrees):
    """A gradient-boosted forest with a given head, tf.estimator 2.8's, grown by ydf.

    As `BoostedTreesClassifier`, with the forest's loss taken from `head`: a
    `BinaryClassHead` or `MultiClassHead` (log-likelihood; string labels
    through its `label_vocabulary`) or a plain `RegressionHead` (squared
    error). `weight_column` weighs the training examples for ydf; the head's
    own weight column weighs its loss and metrics.

    Raises:
        ImportError: ydf is not installed (`pip install keras_estimator[trees]`).
        ValueError: a head the forest cannot be grown for (Poisson, logistic
            regression, multi-label, multi-head), an unsupported feature
            column or hyperparameter value.
    """

    def __init__(
        self,
        feature_columns: Sequence[Any],
        n_batches_per_layer: int,
        head: Head,
        model_dir: str | None = None,
        weight_column: Any = None,
        n_trees: int = 100,
        max_depth: int = 6,
        learning_rate: float = 0.1,
        l1_regularization: float = 0.0,
        l2_regularization: float = 0.0,
        tree_complexity: float = 0.0,
        min_node_weight: float = 0.0,
        config: Any = None,
        center_bias: bool = False,
        pruning_mode: str = "none",
        quantile_sketch_epsilon: float = 0.01,
    ) -> None:
        hparams = TreeHParams(
            n_trees,
            max_depth,
            learning_rate,
            l1_regularization,
            l2_regularization,
            tree_complexity,
            min_node_weight,
            center_bias,
            pruning_mode,
            quantile_sketch_epsilon,
        )
        super().__init__(
            head,
            _task_for_head(head),
            feature_columns,
            n_batches_per_layer,
            model_dir,
            weight_column,
            hparams,
            config,
            train_in_memory=False,
        )


def _task_for_head(head: Any) -> _Task:
    """What ydf grows for `head`: its loss must be one ydf optimizes."""
    vocabulary = getattr(head, "_vocabulary", None)
    vocabulary = tuple(vocabulary) if vocabulary is not None else None
    if isinstance(head, BinaryClassHead):
        return _Task("binary", 1, vocabulary)
    if isinstance(head, MultiClassHead):
        return _Task("multiclass", head.logits_dimension, vocabulary)
    if type(head) is RegressionHead:
        return _Task("regression", head.logits_dimension)
    raise ValueError(
        f"BoostedTreesEstimator grows forests for a BinaryClassHead, a "
        f"MultiClassHead or a RegressionHead; got {type(head).__name__}. Use one "
        "of those heads."
    )
