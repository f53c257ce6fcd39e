"""BoostedTrees evaluation gives tf.estimator 2.8's metrics on 2.8's own model_dirs.

`tests/fixtures/tf28_boosted_trees/eval.json` holds what 2.8's `evaluate()`
returned on the fixture's model_dirs (all 569 breast-cancer rows, batches of
100; see `make_tf28_boosted_trees_eval_fixture.py`). 2.8's binary
BoostedTreesClassifier computed `auc_precision_recall` with
`tf.compat.v1.metrics.auc`'s trapezoidal rule, which the v1 heads' `V1Auc`
reproduces (for both curves, below); `BinaryClassHead`'s interpolated PR AUC gave 0.97597 where 2.8
gave 0.98287.
"""

from __future__ import annotations

import json
import os
import shutil

import numpy as np
import pytest
import tensorflow as tf
from hypothesis import given
from hypothesis import strategies as st

from keras_estimator._src.head.v1_heads import V1Auc
from tests.fixtures import make_tf28_boosted_trees_eval_fixture as tf28_eval
from tests.fixtures import make_tf28_boosted_trees_fixture as tf28

FIXTURE = os.path.join(os.path.dirname(tf28.__file__), "tf28_boosted_trees")


def _estimator(case, model_dir):
    pytest.importorskip("ydf")
    from keras_estimator._src.canned.boosted_trees import (
        BoostedTreesClassifier,
        BoostedTreesRegressor,
    )

    columns = tf28.columns()
    kwargs = dict(model_dir=model_dir, n_trees=3, max_depth=2)
    if case == "classifier":
        return BoostedTreesClassifier(columns, 1, **kwargs)
    if case == "classifier_weighted":
        return BoostedTreesClassifier(columns, 1, weight_column="w", **kwargs)
    if case == "multiclass":
        return BoostedTreesClassifier(columns[1:], 1, n_classes=3, **kwargs)
    return BoostedTreesRegressor(columns[1:], 1, **kwargs)


@pytest.mark.parametrize(
    "case", ["classifier", "classifier_weighted", "multiclass", "regressor"]
)
def test_tf28_model_dirs_evaluate_to_tf28s_metrics(case, tmp_path):
    with open(os.path.join(FIXTURE, "eval.json")) as handle:
        recorded = json.load(handle)
    expected = recorded["cases"][case]
    assert recorded["eval_batch"] == tf28_eval.EVAL_BATCH
    source = "classifier" if case == "classifier_weighted" else case
    model_dir = str(tmp_path / source)
    shutil.copytree(os.path.join(FIXTURE, source), model_dir)
    features, labels = tf28.load_data()
    features = dict(features, w=tf28_eval.weights(len(labels)))
    est = _estimator(case, model_dir)
    metrics = est.evaluate(
        tf28_eval.eval_input_fn(features, tf28_eval.labels_for(case, features, labels))
    )
    assert sorted(metrics) == sorted(expected)
    for key, value in expected.items():
        np.testing.assert_allclose(
            metrics[key], value, rtol=1e-6, atol=1e-7, err_msg=key
        )


def _v1_auc(batches, curve):
    """tf.compat.v1.metrics.auc (trapezoidal, 200 thresholds) over the batches."""
    with tf.Graph().as_default():
        labels = tf.compat.v1.placeholder(tf.float32, [None])
        predictions = tf.compat.v1.placeholder(tf.float32, [None])
        weights = tf.compat.v1.placeholder(tf.float32, [None])
        value, update = tf.compat.v1.metrics.auc(
            labels,
            predictions,
            weights=weights,
            curve=curve,
            summation_method="trapezoidal",
        )
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.local_variables_initializer())
            for batch_labels, batch_predictions, batch_weights in batches:
                session.run(
                    update,
                    {
                        labels: batch_labels,
                        predictions: batch_predictions,
                        weights: batch_weights,
                    },
                )
            return session.run(value)


_row = st.tuples(
    st.integers(0, 1),
    st.one_of(
        st.sampled_from([0.0, 1.0, 0.5, 1 / 199, 100 / 199]),
        st.floats(0.0, 1.0, width=32),
    ),
    st.floats(0.0, 3.0, width=32),
)
_batches = st.lists(st.lists(_row, min_size=1, max_size=12), min_size=1, max_size=3)


@pytest.mark.parametrize("curve", ["PR", "ROC"])
@given(batches=_batches)
def test_v1_auc_is_tf_v1_metrics_auc(curve, batches):
    arrays = [
        tuple(
            np.asarray(column, dtype=np.float32) for column in zip(*rows, strict=True)
        )
        for rows in batches
    ]
    metric = V1Auc(curve=curve)
    for labels, predictions, weights in arrays:
        metric.update_state(labels, predictions, weights)
    np.testing.assert_allclose(
        float(metric.result()), _v1_auc(arrays, curve), rtol=1e-6, atol=1e-6
    )
    metric.reset_state()
    metric.update_state(arrays[0][0], arrays[0][1])
    np.testing.assert_allclose(
        float(metric.result()),
        _v1_auc([(arrays[0][0], arrays[0][1], np.ones_like(arrays[0][0]))], curve),
        rtol=1e-6,
        atol=1e-6,
    )
