"""BoostedTrees' experimental_feature_importances and experimental_predict_with_explanations.

On a tf.estimator 2.8 model_dir they give 2.8's own numbers
(`tests/fixtures/make_tf28_boosted_trees_explanations_fixture.py` recorded
them from 2.8); on a forest grown here they keep 2.8's invariants: one bias
for every example, the label prior's probability, and bias plus the
contributions equal to the prediction.
"""

from __future__ import annotations

import collections
import json
import os
import shutil

import numpy as np
import pytest
import tensorflow as tf
from hypothesis import given, settings
from hypothesis import strategies as st

ydf = pytest.importorskip("ydf")

from keras_estimator._src.canned.boosted_trees import (  # noqa: E402
    BoostedTreesClassifier,
    BoostedTreesEstimator,
    BoostedTreesRegressor,
)
from keras_estimator._src.head.classification_heads import (  # noqa: E402
    MultiClassHead,
)
from keras_estimator._src.head.regression_heads import RegressionHead  # noqa: E402
from tests.fixtures import make_tf28_boosted_trees_explanations_fixture as fixture  # noqa: E402
from tests.fixtures import make_tf28_boosted_trees_fixture as tf28  # noqa: E402

with open(fixture.OUT) as handle:
    TF28 = json.load(handle)
COMMON = dict(n_trees=3, max_depth=2, learning_rate=0.3, center_bias=True)


def rows_fn(features, n):
    head = {k: v[:n] for k, v in features.items()}
    return lambda: tf.data.Dataset.from_tensor_slices(head).batch(5)


def tf28_estimator(case, tmp_path):
    model_dir = str(tmp_path / case)
    shutil.copytree(os.path.join(tf28.OUT, case), model_dir)
    if case == "classifier":
        return BoostedTreesClassifier(tf28.columns(), 1, model_dir=model_dir, **COMMON)
    return BoostedTreesRegressor(tf28.columns()[1:], 1, model_dir=model_dir, **COMMON)


@pytest.mark.parametrize("case", ["classifier", "regressor"])
def test_a_tf28_model_dir_is_explained_as_tf28_explained_it(case, tmp_path):
    est = tf28_estimator(case, tmp_path)
    expected = TF28[case]
    importances = est.experimental_feature_importances()
    assert isinstance(importances, collections.OrderedDict)
    assert list(importances) == [name for name, _ in expected["importances"]]
    np.testing.assert_allclose(
        list(importances.values()), [v for _, v in expected["importances"]], rtol=1e-6
    )
    normalized = est.experimental_feature_importances(normalize=True)
    np.testing.assert_allclose(
        list(normalized.values()),
        [v for _, v in expected["importances_normalized"]],
        rtol=1e-6,
    )
    features, _ = tf28.load_data()
    explained = list(
        est.experimental_predict_with_explanations(rows_fn(features, fixture.N_ROWS))
    )
    assert len(explained) == len(expected["examples"])
    key = "probabilities" if case == "classifier" else "predictions"
    for ours, theirs in zip(explained, expected["examples"], strict=True):
        assert ours["bias"] == pytest.approx(theirs["bias"], abs=1e-6)
        assert isinstance(ours["dfc"], collections.OrderedDict)
        # 2.8's order: largest magnitude first; zeros in column-name order.
        assert list(ours["dfc"]) == [name for name, _ in theirs["dfc"]]
        np.testing.assert_allclose(
            list(ours["dfc"].values()), [v for _, v in theirs["dfc"]], atol=1e-6
        )
        assert ours[key][-1] == pytest.approx(theirs["prediction"], abs=1e-6)


def make_data(seed, n=300):
    rng = np.random.default_rng(seed)
    a = rng.normal(size=(n, 2)).astype(np.float32)
    c = rng.choice(np.array(["x", "y", "z"]), size=(n, 1))
    score = a[:, 0] - a[:, 1] * (c[:, 0] == "y") + 0.5 * rng.normal(size=n)
    return {"a": a, "c": c}, score.astype(np.float32)


def columns():
    fc = tf.feature_column
    return [
        fc.numeric_column("a", shape=(2,)),
        fc.indicator_column(fc.categorical_column_with_vocabulary_list("c", ["x", "y", "z"])),
    ]


def train_fn(features, labels):
    data = tf.data.Dataset.from_tensor_slices((features, labels))
    return lambda: data.batch(len(labels)).repeat()


@settings(deadline=None)
@given(seed=st.integers(0, 2**16), depth=st.integers(1, 4), trees=st.integers(1, 6))
def test_bias_and_contributions_add_up_to_each_prediction(seed, depth, trees, tmp_path_factory):
    features, score = make_data(seed)
    labels = (score > 0).astype(np.int64)
    est = BoostedTreesClassifier(
        columns(), 1, model_dir=str(tmp_path_factory.mktemp("bt")),
        n_trees=trees, max_depth=depth, learning_rate=0.3, center_bias=True,
    )
    est.train(train_fn(features, labels))
    explained = list(est.experimental_predict_with_explanations(rows_fn(features, 40)))
    biases = {p["bias"] for p in explained}
    assert len(biases) == 1
    # The bias is the label prior's probability (ydf starts from it).
    assert biases.pop() == pytest.approx(labels.mean(), abs=1e-4)
    for p in explained:
        assert sorted(p["dfc"]) == ["a", "c"]
        total = p["bias"] + sum(p["dfc"].values())
        assert total == pytest.approx(float(p["probabilities"][1]), abs=1e-5)
        magnitudes = [abs(v) for v in p["dfc"].values()]
        assert magnitudes == sorted(magnitudes, reverse=True)


def test_a_regressor_explains_its_predictions_and_ranks_the_feature_it_splits_on(tmp_path):
    features, score = make_data(1)
    est = BoostedTreesRegressor(
        columns(), 1, model_dir=str(tmp_path), n_trees=5, max_depth=3, center_bias=True
    )
    est.train(train_fn(features, score))
    importances = est.experimental_feature_importances(normalize=True)
    assert sum(importances.values()) == pytest.approx(1.0)
    assert next(iter(importances)) == "a"  # the score is mostly a's
    for p in est.experimental_predict_with_explanations(
        rows_fn(features, 20), predict_keys=["predictions"]
    ):
        assert sorted(p) == ["bias", "dfc", "predictions"]
        assert p["bias"] == pytest.approx(float(score.mean()), abs=1e-4)
        total = p["bias"] + sum(p["dfc"].values())
        assert total == pytest.approx(float(p["predictions"][0]), abs=1e-5)


def test_what_tf28_refused_is_refused_with_its_words(tmp_path):
    features, score = make_data(2)
    labels = (score > 0).astype(np.int64)
    uncentred = BoostedTreesClassifier(columns(), 1, model_dir=str(tmp_path / "u"))
    with pytest.raises(ValueError, match="center_bias must be enabled"):
        next(uncentred.experimental_predict_with_explanations(rows_fn(features, 5)))
    with pytest.raises(ValueError, match="center_bias not yet support"):
        BoostedTreesEstimator(
            columns(), 1, MultiClassHead(3), model_dir=str(tmp_path / "m"),
            center_bias=True,
        )
    two_labels = BoostedTreesRegressor(
        columns(), 1, model_dir=str(tmp_path / "m"), label_dimension=2, center_bias=True
    )
    with pytest.raises(ValueError, match="does not yet support multi-class"):
        next(two_labels.experimental_predict_with_explanations(rows_fn(features, 5)))
    linked = BoostedTreesEstimator(
        columns(), 1, RegressionHead(inverse_link_fn=tf.exp), model_dir=str(tmp_path / "l"),
        center_bias=True,
    )
    with pytest.raises(ValueError, match="only identity inverse_link_fn"):
        next(linked.experimental_predict_with_explanations(rows_fn(features, 5)))
    untrained = BoostedTreesClassifier(
        columns(), 1, model_dir=str(tmp_path / "t"), center_bias=True
    )
    with pytest.raises(ValueError, match="has no checkpoint"):
        untrained.experimental_feature_importances()
    with pytest.raises(ValueError, match="has no checkpoint"):
        next(untrained.experimental_predict_with_explanations(rows_fn(features, 5)))
    untrained.train(train_fn(features, labels))
    assert untrained.experimental_feature_importances()


def test_a_forest_saved_without_gains_or_split_values_asks_for_training_again():
    from keras_estimator._src.canned import boosted_trees_explanations as explanations
    from keras_estimator._src.canned import boosted_trees_forest as forest_lib

    one = np.ones(1, np.float32)
    tree = [("split", 0, 0.5, 1, 2), ("leaf", -one), ("leaf", one)]
    forest = forest_lib.pack([tree], np.zeros(1, np.float32))
    forest.gain = None  # as read from a checkpoint without boosted_trees/gain
    with pytest.raises(ValueError, match="no split gains"):
        explanations.feature_importances(forest, ["x"], normalize=False)
    with pytest.raises(ValueError, match="no values at the trees' split nodes"):
        explanations.check_explainable(forest)
    valued = forest_lib.pack(
        [[("split", 0, 0.5, 1, 2, 0.25 * one, 2.0), ("leaf", -one), ("leaf", one)]],
        np.zeros(1, np.float32),
    )
    explanations.check_explainable(valued)
    assert explanations.feature_importances(valued, ["x"], normalize=True) == {"x": 1.0}
