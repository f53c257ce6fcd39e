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

The global step means what it meant in 2.8, one step per batch of a tree
layer, so `max_steps` stops the forest where 2.8 stopped it, part-way
through a tree if 2.8 did (`boosted_trees_growing.Schedule`).
"""

from __future__ import annotations

import collections
import functools
import logging
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
import tensorflow as tf

from keras_estimator._src.base.mode_keys import ModeKeys
from keras_estimator._src.base.session_run_hook import SessionStandIn
from keras_estimator._src.canned import boosted_trees_explanations as explanations
from keras_estimator._src.canned import boosted_trees_forest as forest_lib
from keras_estimator._src.canned.boosted_trees_growing import (
    Schedule,
    Task,
    TreeHParams,
    centering_steps,
    check_positive_int,
    grow_forest,
    import_ydf,
    read_training_data,
    steps_in,
)
from keras_estimator._src.canned.boosted_trees_head import Tf28BinaryClassHead
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
    label_vocabulary_of,
)
from keras_estimator._src.head.regression_heads import RegressionHead

logger = logging.getLogger("keras_estimator")
# Each example's node path, a prediction of the explanations' model_fn only.
_PATH_KEY = "_boosted_trees_node_path"

# ---- the estimator -------------------------------------------------------------
class _BoostedTrees(Estimator):
    """The estimator both canned classes are; see the module."""

    def __init__(
        self,
        head: Head,
        task: Task,
        feature_columns: Any,
        n_batches_per_layer: int,
        model_dir: str | None,
        weight_column: Any,
        hparams: TreeHParams,
        config: Any,
        train_in_memory: bool,
    ) -> None:
        import_ydf()
        check_positive_int("n_batches_per_layer", n_batches_per_layer)
        if hparams.center_bias and task.kind == "multiclass":
            raise ValueError(
                "center_bias not yet support with n_classes > 2 (tf.estimator "
                "2.8's words): got center_bias=True with "
                f"{task.logits_dimension} classes. Leave center_bias=False; the "
                "forest starts from the label prior either way."
            )
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
        return self._forest_spec(features, labels, mode, config, explain=False)

    def _forest_spec(
        self, features: Any, labels: Any, mode: str, config: Any, explain: bool
    ) -> Any:
        """The head's spec over the forest's logits; with `explain`, the
        predictions also hold each example's path through the trees."""
        check_features(features, [entry.column for entry in self._layout.entries])
        values = self._layout.dense(features)
        forest = self._tf28_forest(config.model_dir)
        if forest is None:
            arrays, depth = self._forest_variables(), self._hparams.max_depth
        else:
            arrays = {k: tf.constant(v) for k, v in forest.arrays().items()}
            depth = forest.depth
        if explain:
            path = forest_lib.forest_paths(values, arrays, depth)
            logits = forest_lib.leaf_logits(path[:, :, -1], arrays)
        else:
            logits = forest_lib.forest_logits(values, arrays, depth)
        spec = self._head.create_estimator_spec(
            features, mode, logits, labels=labels, train_op_fn=lambda loss: tf.no_op()
        )
        if explain:
            spec = spec._replace(predictions={**spec.predictions, _PATH_KEY: path})
        return spec

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

    # ---- tf.estimator 2.8's explanations --------------------------------------
    def experimental_feature_importances(
        self, normalize: bool = False
    ) -> collections.OrderedDict:
        """Gain-based feature importances, as tf.estimator 2.8 computed them.

        Each feature column's split gains summed over the latest checkpoint's
        forest (ydf's split scores for a forest grown here, 2.8's gains for
        a 2.8 model_dir), so their scale is the grower's; the order and the
        normalized values are what to compare.

        Args:
            normalize: divide by the total, so the importances sum to 1.

        Returns:
            An OrderedDict of feature column name to importance, largest first.

        Raises:
            ValueError: no checkpoint yet, one saved without gains, or
                `normalize` with no split or a negative gain.
        """
        return explanations.feature_importances(
            self._saved_forest(None),
            explanations.value_column_names(self._layout),
            bool(normalize),
        )

    def experimental_predict_with_explanations(
        self,
        input_fn: Callable[..., Any],
        predict_keys: Sequence[str] | None = None,
        hooks: Sequence[Any] | None = None,
        checkpoint_path: str | None = None,
    ) -> Iterator[dict[str, Any]]:
        """`predict()`'s predictions with directional feature contributions.

        As tf.estimator 2.8: each prediction also has `dfc`, an OrderedDict of
        feature column name to its contribution (largest magnitude first),
        and `bias`, the same for every example, with `bias + sum(dfc)` the
        probability of class 1 (classifier) or the prediction (regressor);
        see `boosted_trees_explanations`. `predict_keys` filters the other
        keys; `dfc` and `bias` are always there.

        Raises:
            ValueError: `center_bias` was not set, the head has more than one
                logit or a regression head's `inverse_link_fn`, there is no
                checkpoint, or it was saved without split values.
        """
        if not self._hparams.center_bias:
            raise ValueError(
                "center_bias must be enabled during estimator instantiation when "
                "using experimental_predict_with_explanations (tf.estimator 2.8's "
                "words): construct the estimator with center_bias=True."
            )
        if self._head.logits_dimension > 1:
            raise ValueError(
                "experimental_predict_with_explanations does not yet support "
                "multi-class classification and multi-label regression (tf.estimator "
                f"2.8's words): this head has {self._head.logits_dimension} logits."
            )
        if isinstance(self._head, RegressionHead) and (
            self._head._inverse_link_fn not in (None, tf.identity)
        ):
            raise ValueError(
                "For now only identity inverse_link_fn in regression_head is "
                "supported for experimental_predict_with_explanations (tf.estimator "
                "2.8's words). Use a RegressionHead without inverse_link_fn."
            )
        path = checkpoint_path or self.latest_checkpoint()
        forest = self._saved_forest(path)
        explanations.check_explainable(forest)
        names = explanations.value_column_names(self._layout)
        activation = (
            explanations.identity
            if self._task.kind == "regression"
            else explanations.sigmoid
        )
        explainer = Estimator(
            model_fn=functools.partial(self._forest_spec, explain=True),
            model_dir=self.model_dir,
            config=self.config,
        )
        keys = None if predict_keys is None else [*predict_keys, _PATH_KEY]
        for prediction in explainer.predict(
            input_fn, predict_keys=keys, hooks=hooks, checkpoint_path=path
        ):
            bias, dfc = explanations.contributions(
                forest, prediction.pop(_PATH_KEY), activation, names
            )
            prediction["bias"] = bias
            prediction["dfc"] = dfc
            yield prediction

    def _saved_forest(self, checkpoint_path: str | None) -> forest_lib.Forest:
        """The forest of `checkpoint_path` (None: the latest), as arrays."""
        path = checkpoint_path or self.latest_checkpoint()
        if path is None:
            raise ValueError(
                f"model_dir {self.model_dir} has no checkpoint: train the estimator "
                "before asking for its explanations."
            )
        tf28 = forest_lib.read_tf28(path, self._layout, self._task.logits_dimension)
        if tf28 is not None:
            return tf28
        return forest_lib.read_forest(path, self._hparams.max_depth)

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
        steps, max_steps = check_steps(steps, max_steps)
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
        if max_steps is not None and start >= max_steps:
            logger.info("Skipping training: global step %d reached max_steps.", start)
            return
        dataset = inputs.make_dataset(
            input_fn, ModeKeys.TRAIN, self.params, self.config
        )
        data = read_training_data(
            dataset, self._layout, self._task, self._weight_column, self._n_batches
        )
        schedule = Schedule(
            self._hparams.n_trees,
            self._hparams.max_depth,
            self._n_batches,
            centering_steps(data, self._task, self._hparams, self._n_batches),
        )
        target = schedule.last_step
        if max_steps is not None:
            target = min(target, max_steps)
        elif steps is not None:
            target = min(target, start + steps)
        if start >= target:
            logger.info(
                "Skipping training: the forest of %d trees was complete at step %d.",
                self._hparams.n_trees,
                start,
            )
            return
        if not self._train_in_memory:
            # One batch per step, after the first call's quantile sketch.
            sketched = self._n_batches if start == 0 and self._layout.has_numeric() else 0
            target = start + steps_in(dataset, sketched, target - start)
            if start >= target:
                logger.warning(
                    "input_fn's data ended before a training step, so nothing was "
                    "trained: as in tf.estimator 2.8, each step reads a batch, after "
                    "%d batches for the quantiles of numeric columns in the first "
                    "call. Repeat the dataset (dataset.repeat()) or pass "
                    "train_in_memory=True.",
                    sketched,
                )
                return
            if int(dataset.cardinality()) != int(tf.data.INFINITE_CARDINALITY):
                # A dataset that ends: 2.8's steps read its batches one by
                # one, a layer on each; the forest is grown on all they read.
                data = read_training_data(
                    dataset,
                    self._layout,
                    self._task,
                    self._weight_column,
                    sketched + target - start,
                )
        rounds, layers = schedule.forest_at(target)
        forest = grow_forest(
            data,
            self._layout,
            self._task,
            self._hparams,
            rounds,
            layers,
            self.config.tf_random_seed,
        )
        logger.info(
            "Grew %d rounds of trees%s: global step %d of %d.",
            rounds,
            f" and {layers} layers of the next" if layers else "",
            target,
            schedule.last_step,
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

    Training reads input_fn's batches into memory and grows the forest with
    ydf in one go: the data must fit in memory. A dataset that repeats
    without end gives its first `n_batches_per_layer` batches (the
    tutorials' whole-dataset batch); one that ends gives every batch 2.8's
    steps would have read, a layer on each. As in 2.8, each step reads
    a batch (after `n_batches_per_layer` batches for the quantiles of numeric
    columns in the first call), so a dataset that ends stops the forest
    there: repeat it, or pass `train_in_memory=True` (its one batch is then
    all the data, and the forest is not limited by it).

    The global step counts as 2.8's did, one step per batch: a tree layer
    takes `n_batches_per_layer` steps, a tree `max_depth` layers, and
    `center_bias=True` first takes the steps 2.8 spent centering the bias.
    `train(max_steps=S)` grows the forest 2.8 had at step S (whole rounds of
    trees, then the first layers of the next; `boosted_trees_growing.Schedule`)
    and saves one checkpoint at S; without a limit it grows all `n_trees`
    rounds, and a complete forest is not trained further. ydf cannot add
    trees to a forest, so a later call that raises the limit grows the larger
    forest anew on that call's data.

    Columns: `numeric_column` (rank 0 or 1), `bucketized_column` (split at
    its bucket boundaries, as 2.8 split on bucket ids) and `indicator_column`
    of a categorical column. Predictions, metrics and export signatures are
    those of `BinaryClassHead` (n_classes=2; its `auc_precision_recall` is
    2.8's trapezoidal one, `canned.boosted_trees_head`) or `MultiClassHead`. See the
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
        if isinstance(head, BinaryClassHead):
            # 2.8's binary classifier had an older head: its PR AUC differs.
            head = Tf28BinaryClassHead(
                weight_column=weight_column,
                label_vocabulary=label_vocabulary,
                loss_reduction=SUM_OVER_BATCH_SIZE,
            )
        task = Task(
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
        check_positive_int("label_dimension", label_dimension)
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
            Task("regression", int(label_dimension)),
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


def _task_for_head(head: Any) -> Task:
    """What ydf grows for `head`: its loss must be one ydf optimizes."""
    vocabulary = label_vocabulary_of(head)
    vocabulary = tuple(vocabulary) if vocabulary is not None else None
    if isinstance(head, BinaryClassHead):
        return Task("binary", 1, vocabulary)
    if isinstance(head, MultiClassHead):
        return Task("multiclass", head.logits_dimension, vocabulary)
    if type(head) is RegressionHead:
        return Task("regression", head.logits_dimension)
    raise ValueError(
        f"BoostedTreesEstimator grows forests for a BinaryClassHead, a "
        f"MultiClassHead or a RegressionHead; got {type(head).__name__}. Use one "
        "of those heads."
    )
