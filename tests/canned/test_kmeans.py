"""KMeans: recovering blob centres, 2.15's update rules, predictions and errors."""

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import keras_estimator as ke
from keras_estimator._src.canned.kmeans import (
    KMeans,
    _Clustering,
    _Settings,
    input_points,
)

CENTRES = np.array([[0.0, 0.0], [6.0, 6.0], [-6.0, 6.0]], np.float32)
# Directions far apart, for the cosine distance.
DIRECTIONS = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, -1.0]], np.float32) * 5


def blobs(centres, n=240, noise=0.3, seed=0):
    rng = np.random.RandomState(seed)
    labels = np.arange(n) % len(centres)
    return (centres[labels] + rng.normal(0, noise, (n, 2))).astype(np.float32)


def full_input(points):
    return lambda: tf.data.Dataset.from_tensors({"x": points}).repeat()


def batched_input(points, batch):
    return lambda: (
        tf.data.Dataset.from_tensor_slices({"x": points}).batch(batch).repeat()
    )


def settings(k=3, **kwargs):
    values = dict(
        num_clusters=k,
        initial_clusters="random",
        distance_metric="squared_euclidean",
        seed=1,
        use_mini_batch=True,
        steps_per_iteration=1,
        num_retries=2,
        relative_tolerance=None,
        feature_columns=None,
    )
    values.update(kwargs)
    return _Settings(**values)


def nearest_match(found, expected):
    """The largest distance from an expected centre to the nearest found one."""
    distances = np.linalg.norm(expected[:, None] - found[None], axis=-1)
    return distances.min(axis=1).max()


@pytest.mark.parametrize(
    "init, distance, mini_batch, steps_per_iteration",
    [
        ("kmeans_plus_plus", "squared_euclidean", False, 1),
        ("random", "squared_euclidean", True, 1),
        ("kmeans_plus_plus", "cosine", True, 4),
        ("random", "cosine", False, 1),
    ],
)
def test_blob_centres_are_recovered(
    init, distance, mini_batch, steps_per_iteration, tmp_path
):
    cosine = distance == "cosine"
    truth = DIRECTIONS if cosine else CENTRES
    points = blobs(truth)
    km = KMeans(
        3,
        model_dir=str(tmp_path),
        initial_clusters=init,
        distance_metric=distance,
        # The initialisation is seeded by tf_random_seed, as in 2.15: this one
        # draws one point per blob (a random draw may, as in 2.15, take two
        # from one blob).
        config=ke.RunConfig(tf_random_seed=1),
        use_mini_batch=mini_batch,
        mini_batch_steps_per_iteration=steps_per_iteration,
    )
    km.train(batched_input(points, 60) if mini_batch else full_input(points), steps=60)
    centres = km.cluster_centers()
    assert centres.shape == (3, 2)
    if cosine:
        unit = truth / np.linalg.norm(truth, axis=1, keepdims=True)
        found = centres / np.linalg.norm(centres, axis=1, keepdims=True)
        assert nearest_match(found, unit) < 0.05
    else:
        # Mini-batch centres average every point seen, from the first
        # (unconverged) assignments on; blobs are 6 apart.
        assert nearest_match(centres, truth) < (0.3 if mini_batch else 0.1)


def test_predictions_score_and_transform_agree_with_the_centres(tmp_path):
    points = blobs(CENTRES)
    km = KMeans(
        3,
        model_dir=str(tmp_path),
        initial_clusters="kmeans_plus_plus",
        seed=2,
        use_mini_batch=False,
    )
    km.train(full_input(points), steps=5)
    centres = km.cluster_centers()
    squared = ((points[:, None] - centres[None]) ** 2).sum(-1)
    first = lambda: tf.data.Dataset.from_tensors({"x": points})  # noqa: E731
    predicted = list(km.predict(first))
    assert sorted(predicted[0]) == ["all_distances", "cluster_index"]
    indices = np.array(list(km.predict_cluster_index(first)))
    np.testing.assert_array_equal(indices, squared.argmin(1))
    assert km.score(first) == pytest.approx(squared.min(1).sum(), rel=1e-4)
    assert km.evaluate(first, steps=1)["score"] == pytest.approx(
        squared.min(1).sum(), rel=1e-4
    )
    transformed = np.array(list(km.transform(first)))
    # 2.15 yields Euclidean (not squared) distances.
    np.testing.assert_allclose(transformed, np.sqrt(squared), rtol=1e-3, atol=1e-3)
    assert sorted(km.get_variable_names()) == ["clusters", "global_step", "initialized"]


def test_checkpoint_names_follow_2_15(tmp_path):
    points = blobs(CENTRES)
    km = KMeans(3, model_dir=str(tmp_path), mini_batch_steps_per_iteration=2, seed=1)
    km.train(full_input(points), steps=2)
    shapes = dict(tf.train.list_variables(str(tmp_path)))
    assert shapes == {
        "Variable": [3],
        "clusters": [3, 2],
        "clusters_updated": [3, 2],
        "global_step": [],
        "initialized": [],
        "update_in_steps": [],
    }


def test_relative_tolerance_stops_training(tmp_path):
    points = blobs(CENTRES)
    km = KMeans(
        3,
        model_dir=str(tmp_path),
        initial_clusters="kmeans_plus_plus",
        use_mini_batch=False,
        relative_tolerance=1e-3,
        seed=1,
        feature_columns=[tf.feature_column.numeric_column("x", shape=[2])],
    )
    km.train(full_input(points), steps=50)
    assert km.get_variable_value("global_step") < 10


def test_random_init_fills_centres_over_small_batches(tmp_path):
    points = blobs(CENTRES, n=12)
    km = KMeans(5, model_dir=str(tmp_path), seed=1)
    km.train(batched_input(points, 2), steps=4)
    centres = km.cluster_centers()
    assert not np.isnan(centres).any()
    assert bool(km.get_variable_value("initialized"))


def test_export_serves_cluster_indices(tmp_path):
    points = blobs(CENTRES)
    km = KMeans(
        3, model_dir=str(tmp_path / "m"), initial_clusters=CENTRES, use_mini_batch=False
    )
    km.train(full_input(points), steps=2)
    receiver = ke.export.build_raw_serving_input_receiver_fn(
        {"x": tf.constant(CENTRES[:1])}, default_batch_size=None
    )
    loaded = tf.saved_model.load(
        km.export_saved_model(str(tmp_path / "export"), receiver)
    )
    assert sorted(loaded.signatures) == [
        "all_distances",
        "cluster_index",
        "serving_default",
    ]
    served = loaded.signatures["serving_default"](x=tf.constant(CENTRES[[2, 0]]))
    np.testing.assert_array_equal(served["output"].numpy(), [2, 0])


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        (dict(num_clusters=3, initial_clusters="kmc2"), ValueError, "initialization"),
        (
            dict(num_clusters=3, distance_metric="manhattan"),
            ValueError,
            "distance metric",
        ),
        (dict(num_clusters=0), ValueError, "num_clusters"),
        (dict(num_clusters="3"), TypeError, "num_clusters"),
        (
            dict(num_clusters=3, mini_batch_steps_per_iteration=0),
            ValueError,
            "steps_per",
        ),
        (
            dict(num_clusters=3, initial_clusters=np.zeros(3)),
            ValueError,
            "initial_clusters",
        ),
    ],
)
def test_bad_arguments_are_refused_naming_them(kwargs, error, match, tmp_path):
    with pytest.raises(error, match=match):
        KMeans(model_dir=str(tmp_path), **kwargs)


def test_kmeans_plus_plus_needs_a_batch_of_num_clusters(tmp_path):
    km = KMeans(5, model_dir=str(tmp_path), initial_clusters="kmeans_plus_plus")
    with pytest.raises(tf.errors.InvalidArgumentError, match="at least num_clusters"):
        km.train(batched_input(blobs(CENTRES, n=8), 3), steps=1)


def test_points_without_a_static_dimension_are_refused():
    with pytest.raises(ValueError, match=r"\[batch, dim\]"):
        input_points(tf.zeros([3]), None)


@given(
    hnp.arrays(np.float32, (7, 3), elements=st.floats(-5, 5, width=32)),
    hnp.arrays(np.float32, (2, 3), elements=st.floats(-5, 5, width=32)),
)
def test_a_full_batch_step_is_lloyds(points, centres):
    model = _Clustering(settings(2, use_mini_batch=False), 3)
    model.clusters.assign(centres)
    _, _, assignment = model.infer(tf.constant(points))
    model.train(tf.constant(points), assignment)
    expected = centres.copy() * 0
    for k in range(2):
        members = points[assignment.numpy() == k]
        expected[k] = members.sum(0) / (len(members) + 1e-6)
    np.testing.assert_allclose(model.clusters.numpy(), expected, rtol=1e-4, atol=1e-4)
    distances = ((points[:, None] - centres[None]) ** 2).sum(-1)
    np.testing.assert_allclose(
        np.take_along_axis(distances, assignment.numpy()[:, None], 1)[:, 0],
        distances.min(1),
        rtol=1e-4,
        atol=1e-3,
    )


@given(hnp.arrays(np.float32, (6, 2), elements=st.floats(-5, 5, width=32)))
def test_a_mini_batch_step_is_a_running_mean_from_count_one(points):
    # With mini_batch_steps_per_iteration=1 each centre starts with count 1
    # (2.15's rule), so it moves to the mean of itself and its new points.
    centres = np.array([[-1.0, 0.0], [1.0, 0.0]], np.float32)
    model = _Clustering(settings(2), 2)
    model.clusters.assign(centres)
    _, _, assignment = model.infer(tf.constant(points))
    model.train(tf.constant(points), assignment)
    expected = centres.copy()
    for k in range(2):
        members = points[assignment.numpy() == k]
        expected[k] = (centres[k] + members.sum(0)) / (1 + len(members))
    np.testing.assert_allclose(model.clusters.numpy(), expected, rtol=1e-4, atol=1e-4)
    np.testing.assert_array_equal(
        model.counts.numpy(), 1 + np.bincount(assignment, minlength=2)
    )


@given(st.dictionaries(st.sampled_from("abcd"), st.integers(1, 3), min_size=1))
def test_features_are_concatenated_in_sorted_key_order(widths):
    rng = np.random.RandomState(0)
    features = {
        k: rng.normal(size=(4, w)).astype(np.float32) for k, w in widths.items()
    }
    expected = np.concatenate([features[k] for k in sorted(features)], axis=1)
    np.testing.assert_array_equal(input_points(features, None).numpy(), expected)


FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "tf215_kmeans_sdca"
KMEANS_INIT = np.array([[1.0, 1.0], [4.0, 4.0], [-4.0, 3.0]], np.float32)


def test_2_15s_model_dir_restores_and_training_matches_2_15(tmp_path):
    expected = json.loads((FIXTURE / "expected.json").read_text())
    points = np.load(FIXTURE / "data.npz")["points"]
    model_dir = tmp_path / "from_2_15"
    shutil.copytree(FIXTURE / "kmeans_model_dir", model_dir)
    restored = KMeans(3, model_dir=str(model_dir), use_mini_batch=False)
    np.testing.assert_allclose(
        restored.cluster_centers(), expected["kmeans_full_batch_centres"], rtol=1e-6
    )
    once = lambda: tf.data.Dataset.from_tensors({"x": points})  # noqa: E731
    assert restored.score(once) == pytest.approx(
        expected["kmeans_full_batch_score"], rel=1e-5
    )
    # The same runs here, from the same initial centres.
    for mini_batch, steps, key in [(False, 3, "full"), (True, 5, "mini")]:
        km = KMeans(
            3,
            model_dir=str(tmp_path / key),
            initial_clusters=KMEANS_INIT,
            use_mini_batch=mini_batch,
            mini_batch_steps_per_iteration=2,
        )
        km.train(full_input(points), steps=steps)
        np.testing.assert_allclose(
            km.cluster_centers(),
            expected[f"kmeans_{key}_batch_centres"],
            rtol=1e-5,
            atol=1e-5,
        )


def test_a_multi_replica_strategy_is_refused(tmp_path):
    config = ke.RunConfig(
        train_distribute=tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    )
    km = KMeans(3, model_dir=str(tmp_path), config=config)
    with pytest.raises(ValueError, match="one replica"):
        km.train(full_input(blobs(CENTRES)), steps=1)


@pytest.mark.parametrize(
    "init, tf_random_seed", [("kmeans_plus_plus", None), ("random", 3)]
)
def test_the_same_config_picks_2_15s_initial_centres(init, tf_random_seed, tmp_path):
    expected = json.loads((FIXTURE / "expected.json").read_text())
    points = np.load(FIXTURE / "data.npz")["points"]
    km = KMeans(
        3,
        model_dir=str(tmp_path),
        initial_clusters=init,
        use_mini_batch=False,
        seed=1,
        config=ke.RunConfig(tf_random_seed=tf_random_seed),
    )
    km.train(full_input(points), steps=1)
    np.testing.assert_allclose(
        km.cluster_centers(), expected[f"kmeans_{init}_one_step_centres"], rtol=1e-5
    )


def test_random_init_over_batches_smaller_than_num_clusters_takes_a_step_a_batch(tmp_path):
    # tf.estimator 2.15's own test (kmeans_test.py test_random): five
    # points, batches of one, train(steps=1) gave all five points as centres,
    # 2.15 reading every batch initialisation needed before its first step.
    # Here each step reads one batch: after one step one centre is chosen
    # and the others are NaN; five steps give 2.15's centres.
    points = np.array([[1, 2], [3, 4], [5, 6], [7, 8], [9, 0]], np.float32)

    def centres_after(steps):
        km = KMeans(
            5,
            model_dir=str(tmp_path / str(steps)),
            initial_clusters=KMeans.RANDOM_INIT,
            use_mini_batch=True,
            mini_batch_steps_per_iteration=100,
            relative_tolerance=None,
        )
        km.train(batched_input(points, 1), steps=steps)
        return km.cluster_centers()

    after_one = centres_after(1)
    np.testing.assert_array_equal(after_one[0], points[0])
    assert np.isnan(after_one[1:]).all()
    np.testing.assert_array_equal(centres_after(5), points)
