"""BoostedTrees' global step means 2.8's: the forest at a step is the one 2.8 had grown.

The facts come from tf.estimator 2.8 itself
(`tests/fixtures/make_tf28_boosted_trees_schedule_fixture.py` wrote
`schedule.json`): for each set-up and `max_steps`, the step 2.8 reached, how
many trees it had finished and how many layers the next one had.
"""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
import tensorflow as tf

ydf = pytest.importorskip("ydf")

from keras_estimator._src.canned import boosted_trees_forest as forest_lib  # noqa: E402
from keras_estimator._src.canned.boosted_trees import (  # noqa: E402
    BoostedTreesClassifier,
    BoostedTreesEstimator,
    BoostedTreesRegressor,
)
from keras_estimator._src.canned.boosted_trees_growing import Schedule  # noqa: E402
from keras_estimator._src.head.classification_heads import (  # noqa: E402
    MultiClassHead,
)
from tests.fixtures import make_tf28_boosted_trees_eval_fixture as eval_fixture  # noqa: E402
from tests.fixtures import make_tf28_boosted_trees_fixture as tf28  # noqa: E402
from tests.fixtures import (  # noqa: E402
    make_tf28_boosted_trees_schedule_fixture as schedule_fixture,
)

with open(os.path.join(tf28.OUT, "schedule.json")) as handle:
    CASES = json.load(handle)
RUNS = [
    pytest.param(name, run, id=f"{name}-{run['max_steps']}")
    for name, case in CASES.items()
    for run in case["runs"]
]


def estimator(name, model_dir):
    case = CASES[name]
    kwargs = {"n_batches_per_layer": 1, "n_trees": 3, "learning_rate": 0.3}
    kwargs.update(case["kwargs"])
    if case["weighted"]:
        kwargs["weight_column"] = "w"
    cols = schedule_fixture.columns(case["kind"])
    if case["kind"] == "regressor":
        return BoostedTreesRegressor(cols, model_dir=model_dir, **kwargs)
    n_classes = 3 if case["kind"] == "multiclass" else 2
    return BoostedTreesClassifier(
        cols, model_dir=model_dir, n_classes=n_classes, **kwargs
    )


def input_fn(name):
    """2.8's input_fn for the case: the same rows, batches and repetition."""
    case = CASES[name]
    features, labels = tf28.load_data()
    target = eval_fixture.labels_for(case["kind"], features, labels)
    features = dict(features)
    if case["weighted"]:
        features["w"] = eval_fixture.weights(len(target))
    batch = case["batch_size"] or len(target)
    return schedule_fixture.input_fn(name, features, target, batch)


def tf28_forest(run):
    """(finished trees, layers of the tree being grown) in 2.8's ensemble."""
    finished = sum(run["finalized"])
    growing = [n for n, done in zip(run["layers"], run["finalized"], strict=True) if not done]
    return finished, growing[0] if growing else 0


def tree_depths(forest: forest_lib.Forest) -> list[int]:
    """Each packed tree's depth (0: a single leaf)."""
    depths = []
    for left, right in zip(forest.left_child, forest.right_child, strict=True):
        depth, frontier = 0, [0]
        while True:
            frontier = [
                child
                for node in frontier
                for child in (left[node], right[node])
                if child != node
            ]
            if not frontier:
                break
            depth += 1
        depths.append(depth)
    return depths


def packed_forest(est, depth):
    return forest_lib.Forest(
        *(est.get_variable_value(f"boosted_trees/{n}") for n in forest_lib.ARRAY_NAMES),
        depth=depth,
    )


@pytest.mark.parametrize(("name", "run"), RUNS)
def test_train_to_a_step_grows_what_tf28_had_and_saves_that_step(name, run, tmp_path):
    est = estimator(name, str(tmp_path))
    est.train(input_fn(name), max_steps=run["max_steps"])
    assert est.get_variable_value("global_step") == run["global_step"]
    finished, layers = tf28_forest(run)
    per_round = 3 if CASES[name]["kind"] == "multiclass" else 1
    depth = CASES[name]["kwargs"]["max_depth"]
    expected = [depth] * (finished * per_round) + [layers] * (
        (1 if layers else 0) * per_round
    )
    depths = tree_depths(packed_forest(est, depth))
    if schedule_fixture.once(name):
        # Grown on the first batch of 64 rows only: ydf's 5-example leaves
        # can stop a branch early.
        assert all(0 < d <= e for d, e in zip(depths, expected, strict=False))
    else:
        assert depths[: len(expected)] == expected
    assert not any(depths[len(expected) :])  # the rest are single leaves


def test_schedule_is_2_8s_count_of_steps_per_layer_and_centering():
    schedule = Schedule(n_trees=3, max_depth=2, steps_per_layer=2, centering_steps=6)
    assert schedule.last_step == 6 + 3 * 2 * 2
    assert [schedule.forest_at(step) for step in (0, 6, 7, 8, 10, 12, 17, 18, 99)] == [
        (0, 0), (0, 0), (0, 0), (0, 1), (1, 0), (1, 1), (2, 1), (3, 0), (3, 0),
    ]


def test_a_dataset_of_unknown_length_is_counted_as_2_8_read_it(tmp_path):
    """A filtered dataset has no known length: its batches are counted."""
    name = "binary_data_once"
    run = CASES[name]["runs"][0]
    once = input_fn(name)
    est = estimator(name, str(tmp_path))
    est.train(lambda: once().filter(lambda features, labels: True))
    assert est.get_variable_value("global_step") == run["global_step"]


def test_one_batch_read_once_trains_nothing_as_in_2_8_and_says_why(tmp_path, caplog):
    """2.8 gave the only batch to its quantile sketch and stopped at step 0
    (accuracy 0.37 on this data); train_in_memory=True keeps the batch."""
    features, labels = tf28.load_data()

    def one_batch():
        return tf.data.Dataset.from_tensor_slices((dict(features), labels)).batch(
            len(labels)
        )

    est = BoostedTreesClassifier(
        tf28.columns(), 1, n_trees=3, max_depth=3, model_dir=str(tmp_path / "a")
    )
    with caplog.at_level("WARNING", logger="keras_estimator"):
        est.train(one_batch)
    assert est.latest_checkpoint() is None
    assert "Repeat the dataset" in caplog.text
    in_memory = BoostedTreesClassifier(
        tf28.columns(), 1, n_trees=3, max_depth=3, model_dir=str(tmp_path / "b"),
        train_in_memory=True,
    )
    in_memory.train(one_batch)
    assert in_memory.get_variable_value("global_step") == 9


def test_a_later_call_with_a_higher_limit_grows_on_to_that_step(tmp_path):
    est = estimator("binary", str(tmp_path))
    est.train(input_fn("binary"), max_steps=4)
    est.train(input_fn("binary"), max_steps=7)
    assert est.get_variable_value("global_step") == 7
    est.train(input_fn("binary"))  # on to the complete forest
    assert est.get_variable_value("global_step") == 9
    last = est.latest_checkpoint()
    est.train(input_fn("binary"), steps=5)  # complete: nothing to do
    assert est.latest_checkpoint() == last


def test_the_partial_tree_is_the_top_of_the_tree_a_longer_run_grows(tmp_path):
    """The part-grown tree is the next tree cut after its first layers."""
    full = estimator("binary", str(tmp_path / "full"))
    full.train(input_fn("binary"), max_steps=6)  # 2 trees of 3 layers
    part = estimator("binary", str(tmp_path / "part"))
    part.train(input_fn("binary"), max_steps=4)  # 1 tree and 1 layer
    for name in ("split_feature", "threshold"):
        whole = full.get_variable_value(f"boosted_trees/{name}")
        top = part.get_variable_value(f"boosted_trees/{name}")
        np.testing.assert_array_equal(top[0], whole[0])
        assert top[1][0] == whole[1][0]  # the second tree's root split


def test_center_bias_with_more_than_two_classes_is_refused_as_tf28_did(tmp_path):
    with pytest.raises(ValueError, match="center_bias not yet support with n_classes > 2"):
        BoostedTreesClassifier(
            tf28.columns(), 1, n_classes=3, center_bias=True, model_dir=str(tmp_path)
        )
    with pytest.raises(ValueError, match="center_bias not yet support"):
        BoostedTreesEstimator(
            tf28.columns(), 1, MultiClassHead(3), center_bias=True,
            model_dir=str(tmp_path),
        )


def test_a_dataset_that_ends_is_grown_on_every_batch_its_steps_read(tmp_path):
    """2.8 grew each layer on the next batch: a finite dataset's rows all count.

    The rows are sorted by label, so the first batch has one class only: a
    forest grown on it alone predicts that class everywhere.
    """
    rng = np.random.default_rng(0)
    x = rng.normal(size=(320, 1)).astype(np.float32)
    labels = (x[:, 0] > 0).astype(np.int64)
    order = np.argsort(labels, kind="stable")
    features, labels = {"x": x[order]}, labels[order]
    columns = [tf.feature_column.numeric_column("x")]

    def once():
        return tf.data.Dataset.from_tensor_slices((features, labels)).batch(32)

    est = BoostedTreesClassifier(columns, 1, n_trees=4, max_depth=2, model_dir=str(tmp_path))
    est.train(once)
    # 10 batches, the first for the quantiles: 4 trees of 2 layers take 8.
    assert est.get_variable_value("global_step") == 8
    metrics = est.evaluate(once, steps=10)
    assert metrics["accuracy"] > 0.95
    # The first batch alone holds one class, which ydf cannot grow from.
    first_only = BoostedTreesClassifier(
        columns, 1, n_trees=4, max_depth=2, model_dir=str(tmp_path / "first")
    )
    with pytest.raises(ValueError, match=r"one class only \(label 0\)"):
        first_only.train(lambda: once().take(1).repeat())
