"""`KMeans`: tf.compat.v1.estimator.experimental.KMeans, k-means clustering.

This module owns the clustering model_fn and the Estimator around it, with
tf.estimator 2.15's behaviour and checkpoint names:

* variables `clusters` ([num_clusters, dim] centres), `initialized` (bool);
  mini-batch training adds the per-centre point counts `Variable`, and with
  `mini_batch_steps_per_iteration > 1` the working copy `clusters_updated`
  and the countdown `update_in_steps`;
* mini-batch steps move each centre to the running mean of its points,
  `x + (sum(d_i) - m x) / (n + m)` (n points so far, m new ones; with
  `mini_batch_steps_per_iteration=1` every centre starts at n = 1);
* the loss of a batch is the sum over its points of the distance to the
  nearest centre (squared Euclidean, or `1 - cos` for the cosine distance);
  `evaluate` reports `score`, the mean of that sum over the batches;
* predictions `cluster_index` (int64) and `all_distances` ([N, k]).

One difference in how training starts: 2.15 chose the initial centres in a
session hook before the first step, from a batch it did not train on. Here
the first step chooses them from its batch and then trains on that batch,
so `train(steps=n)` reads n batches rather than n + 1. When random
initialisation needs more than one batch (batches smaller than
`num_clusters`), the steps that only choose centres report a loss of 0.
Centres not chosen yet are NaN rows of `clusters`. The initialisation is
seeded as 2.15 seeded it, by RunConfig's `tf_random_seed` (87654321 when
unset); the `seed` argument has no effect, as in 2.15.

The clustering kernels are TensorFlow's (`NearestNeighbors`,
`KmeansPlusPlusInitialization`), called through `tf.raw_ops`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np
import tensorflow as tf

from keras_estimator._src.base.estimator_spec import EstimatorSpec
from keras_estimator._src.base.export_outputs import PredictOutput
from keras_estimator._src.base.mode_keys import ModeKeys
from keras_estimator._src.base.session_run_hook import SessionRunArgs, SessionRunHook
from keras_estimator._src.estimator.estimator import Estimator
from keras_estimator._src.tf_internals import deprecation_notices

SQUARED_EUCLIDEAN_DISTANCE = "squared_euclidean"
COSINE_DISTANCE = "cosine"
RANDOM_INIT = "random"
KMEANS_PLUS_PLUS_INIT = "kmeans_plus_plus"
CLUSTERS_VAR_NAME = "clusters"
# TF1's graph-level seed when none is set (`random_seed.DEFAULT_GRAPH_SEED`).
DEFAULT_SEED = 87654321
_DISTANCES = (SQUARED_EUCLIDEAN_DISTANCE, COSINE_DISTANCE)
_INITS = (RANDOM_INIT, KMEANS_PLUS_PLUS_INIT)


class _LossRelativeChangeHook(SessionRunHook):
    """Stops training once the loss changes by less than `tolerance`, relatively."""

    def __init__(self, loss: tf.Tensor, tolerance: float) -> None:
        self._loss = loss
        self._tolerance = tolerance
        self._previous: float | None = None

    def before_run(self, run_context: Any) -> SessionRunArgs:
        return SessionRunArgs(self._loss)

    def after_run(self, run_context: Any, run_values: Any) -> None:
        loss = float(run_values.results)
        # As in 2.15, a previous loss of exactly 0 does not count.
        if self._previous:
            change = abs(loss - self._previous) / (1.0 + abs(self._previous))
            if change < self._tolerance:
                run_context.request_stop()
        self._previous = loss


def input_points(features: Any, feature_columns: Sequence[Any] | None) -> tf.Tensor:
    """The [N, dim] float32 points: columns' input layer, or features by sorted key."""
    if isinstance(features, Mapping):
        if feature_columns:
            with deprecation_notices.quiet():
                points = tf.compat.v1.feature_column.input_layer(
                    dict(features), list(feature_columns)
                )
        else:
            parts = []
            for key in sorted(features):
                value = tf.convert_to_tensor(features[key])
                if value.shape.rank == 1:
                    value = value[:, tf.newaxis]
                parts.append(tf.cast(value, tf.float32))
            points = tf.concat(parts, axis=1)
    else:
        points = tf.cast(tf.convert_to_tensor(features), tf.float32)
    if points.shape.rank != 2 or points.shape[1] is None:
        raise ValueError(
            f"KMeans needs input points of shape [batch, dim] with a known dim, got "
            f"shape {points.shape}. Return a 2-D tensor (or a dict of [batch, d] "
            "features) from input_fn, with a static last dimension."
        )
    return points


class _Clustering:
    """The k-means variables of one model and the ops on them; see the module."""

    def __init__(self, settings: _Settings, dim: int, seed: int = DEFAULT_SEED) -> None:
        self.s = settings
        self.seed = seed
        k = settings.num_clusters
        self.clusters = tf.Variable(
            lambda: tf.fill([k, dim], np.float32(np.nan)),
            name=CLUSTERS_VAR_NAME,
            trainable=False,
        )
        self.initialized = tf.Variable(False, name="initialized", trainable=False)
        self.counts = None
        self.updated = self.clusters
        self.update_in_steps = None
        if settings.use_mini_batch and settings.steps_per_iteration > 1:
            self.updated = tf.Variable(
                lambda: tf.fill([k, dim], np.float32(np.nan)),
                name="clusters_updated",
                trainable=False,
            )
            self.update_in_steps = tf.Variable(
                lambda: tf.constant(settings.steps_per_iteration, tf.int64),
                name="update_in_steps",
                trainable=False,
            )
        if settings.use_mini_batch:
            first = 0 if settings.steps_per_iteration > 1 else 1
            self.counts = tf.Variable(
                lambda: tf.fill([k], tf.constant(first, tf.int64)),
                name="Variable",
                trainable=False,
            )

    @property
    def normalized_centres(self) -> bool:
        """Whether the stored centres are kept of unit length (2.15's rule)."""
        return self.s.distance_metric == COSINE_DISTANCE and (
            not self.s.use_mini_batch or self.s.steps_per_iteration > 1
        )

    # ---- inference ----------------------------------------------------------
    def infer(self, points: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
        """(all distances [N, k], nearest distance [N], nearest index [N] int64)."""
        centres = self.clusters.read_value()
        if self.s.distance_metric == COSINE_DISTANCE:
            if not self.normalized_centres:
                centres = tf.math.l2_normalize(centres, axis=1)
            all_distances = 1.0 - tf.matmul(points, centres, transpose_b=True)
        else:
            all_distances = (
                tf.reduce_sum(tf.square(points), 1, keepdims=True)
                - 2.0 * tf.matmul(points, centres, transpose_b=True)
                + tf.transpose(tf.reduce_sum(tf.square(centres), 1, keepdims=True))
            )
        indices, nearest = tf.raw_ops.NearestNeighbors(
            points=points, centers=centres, k=tf.constant(1, tf.int64)
        )
        if self.s.distance_metric == COSINE_DISTANCE:
            # For unit vectors, |x - c|^2 / 2 = 1 - cos(x, c).
            nearest = 0.5 * nearest
        return all_distances, nearest[:, 0], indices[:, 0]

    # ---- initialisation -----------------------------------------------------
    def initialize(self, points: tf.Tensor) -> tf.Tensor:
        """Chooses centres still missing from this batch; True once all are chosen."""
        k = self.s.num_clusters
        chosen = tf.reduce_sum(
            tf.cast(
                tf.logical_not(tf.reduce_any(tf.math.is_nan(self.clusters), 1)),
                tf.int32,
            )
        )
        remaining = k - chosen
        new = self._choose(points, remaining)
        if self.s.distance_metric == COSINE_DISTANCE:
            new = tf.math.l2_normalize(new, axis=1)
        count = tf.minimum(tf.shape(new)[0], remaining)
        rows = tf.range(chosen, chosen + count)[:, tf.newaxis]
        updates = [self.clusters.scatter_nd_update(rows, new[:count])]
        if self.updated is not self.clusters:
            updates.append(self.updated.scatter_nd_update(rows, new[:count]))
        with tf.control_dependencies(updates):
            done = tf.equal(chosen + count, k)
            with tf.control_dependencies([self.initialized.assign(done)]):
                return tf.identity(done)

    def _choose(self, points: tf.Tensor, remaining: tf.Tensor) -> tf.Tensor:
        initial = self.s.initial_clusters
        num_points = tf.shape(points)[0]
        if callable(initial):
            # 2.15 handed the callable a list of input shards (here one).
            return tf.cast(
                tf.convert_to_tensor(initial([points], remaining)), tf.float32
            )
        if not isinstance(initial, str):
            return tf.constant(initial, tf.float32)
        if initial == RANDOM_INIT:

            def sample() -> tf.Tensor:
                # 2.15's draw: random_uniform seeded (graph seed, graph seed).
                indices = tf.raw_ops.RandomUniformInt(
                    shape=[remaining],
                    minval=tf.constant(0, tf.int64),
                    maxval=tf.cast(num_points, tf.int64),
                    seed=self.seed,
                    seed2=self.seed,
                )
                return tf.gather(points, indices)

            # A batch no larger than what is missing is taken whole.
            return tf.cond(num_points <= remaining, lambda: points, sample)
        check = tf.debugging.assert_greater_equal(
            num_points,
            remaining,
            message=(
                "kmeans_plus_plus initialisation chooses every centre from one batch: "
                "make the batch at least num_clusters points, or use "
                "initial_clusters='random'."
            ),
        )
        source = points
        if self.s.distance_metric == COSINE_DISTANCE:
            source = tf.math.l2_normalize(points, axis=1)
        with tf.control_dependencies([check]):
            return tf.raw_ops.KmeansPlusPlusInitialization(
                points=source,
                num_to_sample=tf.cast(remaining, tf.int64),
                seed=tf.constant(self.seed, tf.int64),
                num_retries_per_sample=tf.constant(self.s.num_retries, tf.int64),
            )

    # ---- training -----------------------------------------------------------
    def train(self, points: tf.Tensor, assignment: tf.Tensor) -> tf.Operation:
        if not self.s.use_mini_batch:
            return self._full_batch(points, assignment)
        with tf.control_dependencies([self._sync_iteration()]):
            return self._mini_batch(points, assignment)

    def _full_batch(self, points: tf.Tensor, assignment: tf.Tensor) -> tf.Operation:
        k = self.s.num_clusters
        sums = tf.math.unsorted_segment_sum(points, assignment, k)
        counts = tf.math.unsorted_segment_sum(
            tf.ones_like(points[:, :1]), assignment, k
        )
        # An empty cluster's centre becomes 0, as in 2.15.
        centres = sums / (counts + 1e-6)
        if self.normalized_centres:
            centres = tf.math.l2_normalize(centres, axis=1)
        return self.clusters.assign(centres).op

    def _sync_iteration(self) -> Any:
        """Every `steps_per_iteration` steps, publish the working copy and reset counts."""
        if self.update_in_steps is None:
            return tf.no_op()
        steps = self.update_in_steps
        counts = self.counts
        assert counts is not None

        def publish() -> tf.Tensor:
            with tf.control_dependencies(
                [steps.assign(self.s.steps_per_iteration - 1)]
            ):
                centres = self.updated.read_value()
                if self.s.distance_metric == COSINE_DISTANCE:
                    centres = tf.math.l2_normalize(centres, axis=1)
                with tf.control_dependencies([self.clusters.assign(centres)]):
                    with tf.control_dependencies(
                        [counts.assign(tf.zeros_like(counts))]
                    ):
                        return steps.read_value()

        return tf.cond(steps <= 0, publish, lambda: steps.assign_sub(1))

    def _mini_batch(self, points: tf.Tensor, assignment: tf.Tensor) -> tf.Operation:
        counts = self.counts
        assert counts is not None
        ids, position = tf.unique(assignment)
        num_ids = tf.size(ids)
        old_counts = tf.gather(counts, ids)
        old_centres = tf.gather(self.updated, ids)
        new_counts = tf.math.unsorted_segment_sum(
            tf.ones_like(position, tf.int64), position, num_ids
        )
        sums = tf.math.unsorted_segment_sum(points, position, num_ids)
        # Centre x with n points so far and m new points d_i moves by
        # (sum(d_i) - m x) / (n + m): the running mean, 2.15's documented rule.
        # 2.15's own runs raced here: TF1 mostly read the counts after
        # adding the batch's m to them, dividing by n + 2m instead.
        denominator = tf.cast(old_counts + new_counts, tf.float32)[:, tf.newaxis]
        weighted = tf.cast(new_counts, tf.float32)[:, tf.newaxis] * old_centres
        step = (sums - weighted) / denominator
        return tf.group(
            counts.scatter_add(tf.IndexedSlices(new_counts, ids)),
            self.updated.scatter_add(tf.IndexedSlices(step, ids)),
        )


class _Settings:
    def __init__(
        self,
        num_clusters: int,
        initial_clusters: Any,
        distance_metric: str,
        seed: int | None,
        use_mini_batch: bool,
        steps_per_iteration: int,
        num_retries: int,
        relative_tolerance: float | None,
        feature_columns: Sequence[Any] | None,
    ) -> None:
        self.num_clusters = num_clusters
        self.initial_clusters = initial_clusters
        self.distance_metric = distance_metric
        self.seed = seed
        self.use_mini_batch = use_mini_batch
        self.steps_per_iteration = steps_per_iteration
        self.num_retries = num_retries
        self.relative_tolerance = relative_tolerance
        self.feature_columns = feature_columns


def kmeans_model_fn(settings: _Settings) -> Callable[..., EstimatorSpec]:
    """The KMeans model_fn; see the module for what each mode returns."""

    def model_fn(features: Any, labels: Any, mode: str, config: Any) -> EstimatorSpec:
        del labels  # clustering reads only the features
        replicas = tf.distribute.get_strategy().num_replicas_in_sync
        if replicas > 1:
            raise ValueError(
                f"KMeans runs on one replica; the distribution strategy has "
                f"{replicas}. Leave RunConfig's train_distribute/eval_distribute "
                "unset for KMeans."
            )
        points = input_points(features, settings.feature_columns)
        if settings.distance_metric == COSINE_DISTANCE:
            points = tf.math.l2_normalize(points, axis=1)
        # 2.15 seeded the initialisation with the graph-level seed only
        # (`get_seed(seed)[0]`): RunConfig's tf_random_seed, else TF1's
        # default graph seed, whatever `seed` was.
        graph_seed = getattr(config, "tf_random_seed", None)
        seed = DEFAULT_SEED if graph_seed is None else int(graph_seed)
        model = _Clustering(settings, int(points.shape[1]), seed)
        hooks: list[Any] = []
        train_op = None
        if mode == ModeKeys.TRAIN:
            ready = tf.cond(
                model.initialized.read_value(),
                lambda: tf.constant(True),
                lambda: model.initialize(points),
            )
            with tf.control_dependencies([ready]):
                all_distances, nearest, assignment = model.infer(points)
            loss = tf.where(ready, tf.reduce_sum(nearest), 0.0)
            train_op = tf.cond(
                ready,
                lambda: _as_tensor(model.train(points, assignment)),
                lambda: tf.constant(False),
            )
            if settings.relative_tolerance is not None:
                hooks.append(_LossRelativeChangeHook(loss, settings.relative_tolerance))
        else:
            all_distances, nearest, assignment = model.infer(points)
            loss = tf.reduce_sum(nearest)
        tf.compat.v1.summary.scalar("loss/raw", loss)
        predictions = {
            KMeans.ALL_DISTANCES: all_distances,
            KMeans.CLUSTER_INDEX: assignment,
        }
        return EstimatorSpec(
            mode=mode,
            predictions=predictions,
            loss=loss,
            train_op=train_op,
            eval_metric_ops={KMeans.SCORE: tf.compat.v1.metrics.mean(loss)}
            if mode == ModeKeys.EVAL
            else None,
            training_hooks=hooks,
            export_outputs={
                KMeans.ALL_DISTANCES: PredictOutput(all_distances),
                KMeans.CLUSTER_INDEX: PredictOutput(assignment),
                "serving_default": PredictOutput(assignment),
            },
        )

    return model_fn


def _as_tensor(op: tf.Operation) -> tf.Tensor:
    with tf.control_dependencies([op]):
        return tf.constant(True)


class KMeans(Estimator):
    """An Estimator for k-means clustering (tf.estimator 2.15's `KMeansClustering`).

    Args:
        num_clusters: the number of centres (ignored when `initial_clusters`
            is an array, whose row count is then used).
        model_dir: where checkpoints go.
        initial_clusters: `RANDOM_INIT` (points drawn from a batch, a whole
            batch when it is no larger than the centres still missing),
            `KMEANS_PLUS_PLUS_INIT` (k-means++ on one batch of at least
            `num_clusters` points), an array of initial centres, or a
            callable `f(inputs, k)` returning up to `k` centres from
            `inputs` (a list with the batch's [N, dim] points).
        distance_metric: `SQUARED_EUCLIDEAN_DISTANCE` or `COSINE_DISTANCE`.
        seed: accepted and, as in 2.15, without effect: 2.15 seeded the
            initialisation with the graph-level seed, RunConfig's
            `tf_random_seed` (87654321 when unset), and so does this class;
            the same config picks the same initial centres as 2.15.
        use_mini_batch: True for mini-batch k-means (each step moves the
            centres of the batch's points towards them by a running mean);
            False for Lloyd's algorithm, one full iteration per step on a
            batch that should be the whole data.
        mini_batch_steps_per_iteration: steps whose updates accumulate in a
            working copy before they become the centres used for assignment.
        kmeans_plus_plus_num_retries: extra candidates per k-means++ centre
            (negative: a heuristic O(log k)).
        relative_tolerance: stop when the loss changes by less than this,
            relative to `1 + |previous loss|`.
        config: a `RunConfig`.
        feature_columns: columns for `input_layer`; without them a dict of
            features is concatenated in sorted key order.

    Raises:
        ValueError: an unknown initialisation or distance, or a bad count.

    Example:
        >>> km = KMeans(num_clusters=3, use_mini_batch=False)  # doctest: +SKIP
        >>> km.train(input_fn, steps=10)  # doctest: +SKIP
        >>> km.cluster_centers()  # doctest: +SKIP
    """

    SQUARED_EUCLIDEAN_DISTANCE = SQUARED_EUCLIDEAN_DISTANCE
    COSINE_DISTANCE = COSINE_DISTANCE
    RANDOM_INIT = RANDOM_INIT
    KMEANS_PLUS_PLUS_INIT = KMEANS_PLUS_PLUS_INIT
    SCORE = "score"
    CLUSTER_INDEX = "cluster_index"
    ALL_DISTANCES = "all_distances"
    CLUSTER_CENTERS_VAR_NAME = CLUSTERS_VAR_NAME

    def __init__(
        self,
        num_clusters: int,
        model_dir: str | None = None,
        initial_clusters: Any = RANDOM_INIT,
        distance_metric: str = SQUARED_EUCLIDEAN_DISTANCE,
        seed: int | None = None,
        use_mini_batch: bool = True,
        mini_batch_steps_per_iteration: int = 1,
        kmeans_plus_plus_num_retries: int = 2,
        relative_tolerance: float | None = None,
        config: Any = None,
        feature_columns: Sequence[Any] | None = None,
    ) -> None:
        settings = _Settings(
            _check_num_clusters(num_clusters, initial_clusters),
            _check_initial_clusters(initial_clusters),
            _check_distance(distance_metric),
            seed,
            bool(use_mini_batch),
            _check_positive_int(
                "mini_batch_steps_per_iteration", mini_batch_steps_per_iteration
            ),
            int(kmeans_plus_plus_num_retries),
            relative_tolerance,
            feature_columns,
        )
        self._distance_metric = distance_metric
        super().__init__(
            model_fn=kmeans_model_fn(settings), model_dir=model_dir, config=config
        )

    def _predict_one_key(self, input_fn: Callable[..., Any], key: str) -> Iterator[Any]:
        for result in self.predict(input_fn=input_fn, predict_keys=[key]):
            yield result[key]

    def predict_cluster_index(self, input_fn: Callable[..., Any]) -> Iterator[Any]:
        """Yields, for each input point, the index of its nearest centre."""
        yield from self._predict_one_key(input_fn, KMeans.CLUSTER_INDEX)

    def score(self, input_fn: Callable[..., Any]) -> float:
        """The sum over the first batch's points of the distance to the nearest centre.

        For the squared Euclidean distance this is the inertia (sklearn's
        `score` is its negative).
        """
        return self.evaluate(input_fn=input_fn, steps=1)[KMeans.SCORE]

    def transform(self, input_fn: Callable[..., Any]) -> Iterator[Any]:
        """Yields each point's distances to every centre.

        With the squared Euclidean metric these are Euclidean distances (the
        square roots), as 2.15 yielded; with the cosine metric, `1 - cos`.
        """
        for distances in self._predict_one_key(input_fn, KMeans.ALL_DISTANCES):
            if self._distance_metric == SQUARED_EUCLIDEAN_DISTANCE:
                yield np.sqrt(distances)
            else:
                yield distances

    def cluster_centers(self) -> np.ndarray:
        """The centres in the latest checkpoint, [num_clusters, dim]."""
        return self.get_variable_value(KMeans.CLUSTER_CENTERS_VAR_NAME)


def _check_num_clusters(num_clusters: Any, initial_clusters: Any) -> int:
    if not isinstance(initial_clusters, str) and not callable(initial_clusters):
        centres = np.asarray(initial_clusters)
        if centres.ndim != 2 or centres.shape[0] < 1:
            raise ValueError(
                f"initial_clusters as an array must be [num_clusters, dim], got shape "
                f"{centres.shape}."
            )
        return int(centres.shape[0])
    if isinstance(num_clusters, bool) or not isinstance(
        num_clusters, (int, np.integer)
    ):
        raise TypeError(
            f"num_clusters must be a positive integer, got {num_clusters!r} "
            f"({type(num_clusters).__name__})."
        )
    if num_clusters < 1:
        raise ValueError(
            f"num_clusters must be a positive integer, got {num_clusters}."
        )
    return int(num_clusters)


def _check_initial_clusters(initial_clusters: Any) -> Any:
    if isinstance(initial_clusters, str) and initial_clusters not in _INITS:
        raise ValueError(
            f"Unsupported initialization algorithm {initial_clusters!r}: use one of "
            f"{list(_INITS)}, an array of centres, or a callable f(inputs, k)."
        )
    if isinstance(initial_clusters, (tf.Tensor, tf.Variable)):
        return np.asarray(initial_clusters)
    return initial_clusters


def _check_distance(distance_metric: Any) -> str:
    if distance_metric not in _DISTANCES:
        raise ValueError(
            f"Unsupported distance metric {distance_metric!r}: use one of {list(_DISTANCES)}."
        )
    return str(distance_metric)


def _check_positive_int(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}.")
    return int(value)
