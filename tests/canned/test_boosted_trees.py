"""BoostedTreesClassifier / BoostedTreesRegressor: ydf training, forest variables, 2.8 model_dirs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import tensorflow as tf
from hypothesis import given
from hypothesis import strategies as st

ydf = pytest.importorskip("ydf")

from keras_estimator._src.base.serving_input import (  # noqa: E402
    build_parsing_serving_input_receiver_fn,
)
from keras_estimator._src.canned import boosted_trees_forest as forest_lib  # noqa: E402
from keras_estimator._src.canned.boosted_trees import (  # noqa: E402
    BoostedTreesClassifier,
    BoostedTreesEstimator,
    BoostedTreesRegressor,
)
from keras_estimator._src.canned.dnn import DNNClassifier  # noqa: E402
from keras_estimator._src.head.classification_heads import (  # noqa: E402
    MultiClassHead,
)
from keras_estimator._src.head.regression_heads import (  # noqa: E402
    PoissonRegressionHead,
    RegressionHead,
)
from tests.fixtures import make_tf28_boosted_trees_fixture as tf28  # noqa: E402

FIXTURE = os.path.join(os.path.dirname(tf28.__file__), "tf28_boosted_trees")
fc = tf.feature_column
BOUNDARIES = [-1.0, 0.0, 0.5, 1.0]
N_ROWS = 240


def columns():
    return [
        fc.numeric_column("a", shape=(2,)),
        fc.bucketized_column(fc.numeric_column("b"), BOUNDARIES),
        fc.indicator_column(
            fc.categorical_column_with_vocabulary_list("c", ["x", "y", "z"])
        ),
    ]


def make_data(seed=0):
    rng = np.random.default_rng(seed)
    a = rng.normal(size=(N_ROWS, 2)).astype(np.float32)
    b = rng.normal(size=(N_ROWS, 1)).astype(np.float32)
    c = rng.choice(np.array(["x", "y", "z"]), size=(N_ROWS, 1))
    score = (
        a[:, 0] + a[:, 1] * b[:, 0] + (c[:, 0] == "y") + 0.3 * rng.normal(size=N_ROWS)
    )
    weight = rng.uniform(0.5, 2.0, size=(N_ROWS, 1)).astype(np.float32)
    return {"a": a, "b": b, "c": c, "w": weight}, score.astype(np.float32)


def ydf_inputs(features):
    """What the estimator gives ydf: values sorted by column name, bucket ids."""
    a, b, c = features["a"], features["b"][:, 0], features["c"][:, 0]
    data = {"v0": a[:, 0], "v1": a[:, 1]}
    data["v2"] = np.searchsorted(np.float32(BOUNDARIES), b, side="right").astype(
        np.float32
    )
    for i, name in enumerate(["x", "y", "z"]):
        data[f"v{3 + i}"] = (c == name).astype(np.float32)
    return data


def train_fn(features, labels):
    """All rows in each batch, repeated: 2.8 read one batch per step."""
    return lambda: (
        tf.data.Dataset.from_tensor_slices((features, labels)).batch(N_ROWS).repeat()
    )


def predict_fn(features):
    return lambda: tf.data.Dataset.from_tensor_slices(features).batch(50)


def ydf_model(features, labels, loss, task, n_trees, max_depth, weights=None):
    data = {**ydf_inputs(features), "label": labels}
    if weights is not None:
        data["weight"] = weights
    learner = ydf.GradientBoostedTreesLearner(
        label="label",
        task=task,
        loss=loss,
        weights="weight" if weights is not None else None,
        num_trees=n_trees,
        max_depth=max_depth + 1,
        shrinkage=0.3,
        min_examples=5,
        growing_strategy="LOCAL",
        use_hessian_gain=True,
        validation_ratio=0.0,
        early_stopping="NONE",
        features=[(f"v{i}", ydf.Semantic.NUMERICAL) for i in range(6)],
        include_all_columns=False,
    )
    return learner.train(data, verbose=0), ydf_inputs(features)


@pytest.fixture(scope="module")
def binary(tmp_path_factory):
    features, score = make_data()
    labels = (score > 0.5).astype(np.int64)
    model_dir = str(tmp_path_factory.mktemp("binary"))
    est = BoostedTreesClassifier(
        columns(), 1, model_dir=model_dir, n_trees=8, max_depth=3, learning_rate=0.3
    )
    est.train(train_fn(features, labels))
    return est, features, labels


def probabilities(est, features):
    return np.stack([p["probabilities"] for p in est.predict(predict_fn(features))])


def test_binary_predicts_as_ydf_and_has_dnn_keys(binary):
    est, features, labels = binary
    model, data = ydf_model(
        features, labels, "BINOMIAL_LOG_LIKELIHOOD", ydf.Task.CLASSIFICATION, 8, 3
    )
    ours = probabilities(est, features)[:, 1]
    np.testing.assert_allclose(ours, model.predict(data), atol=1e-5)
    prediction = next(iter(est.predict(predict_fn(features))))
    metrics = est.evaluate(train_fn(features, labels), steps=1)
    dnn = DNNClassifier([8], columns(), model_dir=est.model_dir + "_dnn")
    dnn_prediction = next(iter(dnn.predict(predict_fn(features))))
    assert sorted(prediction) == sorted(dnn_prediction)
    assert sorted(metrics) == sorted(dnn.evaluate(train_fn(features, labels), steps=1))
    # 2.8's step: 8 trees of 3 layers, one batch per layer.
    assert metrics["global_step"] == 24 and metrics["accuracy"] > 0.8


def test_multiclass_with_vocabulary_predicts_as_ydf(tmp_path):
    features, score = make_data(1)
    ids = np.digitize(score, [0.0, 1.0]).astype(np.int64)
    names = np.array(["lo", "mid", "hi"])[ids]
    est = BoostedTreesClassifier(
        columns(),
        1,
        model_dir=str(tmp_path),
        n_classes=3,
        label_vocabulary=["lo", "mid", "hi"],
        n_trees=4,
        max_depth=2,
        learning_rate=0.3,
    )
    est.train(train_fn(features, names))
    model, data = ydf_model(
        features, ids, "MULTINOMIAL_LOG_LIKELIHOOD", ydf.Task.CLASSIFICATION, 4, 2
    )
    expected = model.predict(data)
    order = [int(c) for c in model.label_classes()]
    np.testing.assert_allclose(
        probabilities(est, features)[:, order], expected, atol=1e-5
    )
    classes = {p["classes"][0] for p in est.predict(predict_fn(features))}
    assert classes <= {b"lo", b"mid", b"hi"} and len(classes) > 1


def test_weighted_regressor_predicts_as_ydf_and_restores(tmp_path):
    features, score = make_data(2)
    est = BoostedTreesRegressor(
        columns(),
        1,
        model_dir=str(tmp_path),
        weight_column="w",
        n_trees=6,
        max_depth=3,
        learning_rate=0.3,
    )
    est.train(train_fn(features, score))
    model, data = ydf_model(
        features,
        score,
        "SQUARED_ERROR",
        ydf.Task.REGRESSION,
        6,
        3,
        weights=features["w"][:, 0],
    )
    ours = np.stack([p["predictions"] for p in est.predict(predict_fn(features))])
    np.testing.assert_allclose(ours[:, 0], model.predict(data), atol=1e-5)
    again = BoostedTreesRegressor(
        columns(), 1, model_dir=str(tmp_path), n_trees=6, max_depth=3
    )
    restored = np.stack([p["predictions"] for p in again.predict(predict_fn(features))])
    np.testing.assert_array_equal(restored, ours)
    assert "average_loss" in again.evaluate(train_fn(features, score), steps=1)


def test_two_dimensional_regressor_grows_trees_per_dimension(tmp_path):
    features, score = make_data(4)
    targets = np.stack([score, -2.0 * score + features["a"][:, 1]], axis=1)
    est = BoostedTreesRegressor(
        columns(),
        1,
        model_dir=str(tmp_path),
        label_dimension=2,
        n_trees=3,
        max_depth=2,
        learning_rate=0.3,
    )
    est.train(train_fn(features, targets))
    ours = np.stack([p["predictions"] for p in est.predict(predict_fn(features))])
    for dim in range(2):
        model, data = ydf_model(
            features, targets[:, dim], "SQUARED_ERROR", ydf.Task.REGRESSION, 3, 2
        )
        np.testing.assert_allclose(ours[:, dim], model.predict(data), atol=1e-5)
    assert est.get_variable_value("boosted_trees/leaf_value").shape == (6, 7, 2)


def test_global_step_counts_layers_and_stops_when_the_forest_is_complete(tmp_path):
    """As 2.8: one step per tree layer (one batch per layer here)."""
    features, score = make_data(3)
    labels = (score > 0.5).astype(np.int64)
    est = BoostedTreesClassifier(
        columns(), 1, model_dir=str(tmp_path), n_trees=3, max_depth=2
    )
    est.train(train_fn(features, labels), max_steps=2)
    assert est.get_variable_value("global_step") == 2
    first = est.latest_checkpoint()
    est.train(train_fn(features, labels), max_steps=2)
    assert est.latest_checkpoint() == first
    est.train(train_fn(features, labels))
    assert est.get_variable_value("global_step") == 6
    assert os.path.basename(est.latest_checkpoint()) == "model.ckpt-6"
    est.train(train_fn(features, labels), steps=10)
    assert os.path.basename(est.latest_checkpoint()) == "model.ckpt-6"
    split = est.get_variable_value("boosted_trees/split_feature")
    assert split.shape == (3, 7)


def test_export_serves_in_a_fresh_tensorflow_without_ydf(binary, tmp_path):
    est, features, _ = binary
    spec = fc.make_parse_example_spec(columns())
    export_dir = est.export_saved_model(
        str(tmp_path), build_parsing_serving_input_receiver_fn(spec)
    ).decode()
    rows = 20
    examples = [_example(features, i).SerializeToString() for i in range(rows)]
    np.save(
        tmp_path / "examples.npy", np.array(examples, dtype=object), allow_pickle=True
    )
    script = textwrap.dedent(
        f"""
        import sys
        sys.modules["ydf"] = None
        sys.modules["keras_estimator"] = None
        import numpy as np, tensorflow as tf
        examples = np.load({str(tmp_path / "examples.npy")!r}, allow_pickle=True)
        loaded = tf.saved_model.load({export_dir!r})
        out = loaded.signatures["predict"](examples=tf.constant(list(examples)))
        np.save({str(tmp_path / "served.npy")!r}, out["probabilities"].numpy())
        """
    )
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}
    subprocess.run([sys.executable, "-c", script], check=True, env=env, timeout=300)
    served = np.load(tmp_path / "served.npy")
    head = {k: v[:rows] for k, v in features.items()}
    np.testing.assert_allclose(served, probabilities(est, head), atol=1e-6)


def _example(features, i):
    feature = {
        "a": tf.train.Feature(float_list=tf.train.FloatList(value=features["a"][i])),
        "b": tf.train.Feature(float_list=tf.train.FloatList(value=features["b"][i])),
        "c": tf.train.Feature(
            bytes_list=tf.train.BytesList(value=[features["c"][i, 0].encode()])
        ),
    }
    return tf.train.Example(features=tf.train.Features(feature=feature))


@pytest.mark.parametrize(
    ("name", "n_classes"), [("classifier", 2), ("multiclass", 3), ("regressor", 0)]
)
def test_tf28_model_dir_predicts_as_tf28(name, n_classes, tmp_path):
    with open(os.path.join(FIXTURE, "expected.json")) as handle:
        expected = json.load(handle)["models"][name]
    features, labels = tf28.load_data()
    cols = tf28.columns() if name == "classifier" else tf28.columns()[1:]
    model_dir = str(tmp_path / name)
    tf.io.gfile.makedirs(model_dir)
    for file in os.listdir(os.path.join(FIXTURE, name)):
        tf.io.gfile.copy(
            os.path.join(FIXTURE, name, file), os.path.join(model_dir, file)
        )
    kwargs = dict(model_dir=model_dir, n_trees=3, max_depth=2)
    if n_classes:
        est = BoostedTreesClassifier(cols, 1, n_classes=n_classes, **kwargs)
    else:
        est = BoostedTreesRegressor(cols, 1, **kwargs)
    rows = {k: v[: len(expected["values"])] for k, v in features.items()}
    ours = [p[expected["key"]] for p in est.predict(predict_fn(rows))]
    np.testing.assert_allclose(ours, expected["values"], atol=1e-5)
    if name == "classifier":
        metrics = est.evaluate(train_fn(features, labels), steps=1)
        assert metrics["global_step"] == expected["global_step"]
        assert metrics["accuracy"] > 0.85
        est.train(train_fn(features, labels))  # a 2.8 forest is not trained on
        assert est.get_variable_value("global_step") == expected["global_step"]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"n_trees": 0}, r"n_trees must be an integer > 0, got 0"),
        ({"max_depth": -1}, r"max_depth must be an integer > 0, got -1"),
        ({"learning_rate": 0.0}, r"learning_rate must be a number > 0"),
        ({"n_batches_per_layer": 0}, r"n_batches_per_layer must be an integer > 0"),
        ({"pruning_mode": "late"}, r"pruning_mode must be 'none', 'pre' or 'post'"),
        ({"l2_regularization": -1.0}, r"l2_regularization must be a number >= 0"),
    ],
)
def test_bad_hyperparameters_are_named(kwargs, message):
    arguments = {"feature_columns": columns(), "n_batches_per_layer": 1, **kwargs}
    with pytest.raises(ValueError, match=message):
        BoostedTreesClassifier(**arguments)


@pytest.mark.parametrize(
    "column",
    [
        fc.categorical_column_with_identity("k", 3),
        fc.embedding_column(fc.categorical_column_with_identity("k", 3), 2),
    ],
)
def test_unsupported_columns_are_named(column):
    with pytest.raises(ValueError, match=r"numeric_column, bucketized_column and"):
        BoostedTreesRegressor([fc.numeric_column("a"), column], 1)


def test_missing_ydf_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "ydf", None)
    with pytest.raises(ImportError, match=r"pip install keras_estimator\[trees\]"):
        BoostedTreesClassifier(columns(), 1)


def test_labels_out_of_range_are_named(tmp_path):
    features, _ = make_data()
    labels = np.full(N_ROWS, 3, np.int64)
    est = BoostedTreesClassifier(columns(), 1, model_dir=str(tmp_path), n_trees=2)
    with pytest.raises(
        ValueError, match=r"Labels must be in \[0, 2\), got values from 3"
    ):
        est.train(train_fn(features, labels))


# ---- the forest evaluation: TF gathers equal a plain tree walk ----------------
# Values and thresholds often coincide, so the side of a tie is checked too.
# TensorFlow's CPU kernels flush subnormal floats to zero, so a subnormal
# feature compared with a threshold of 0.0 is decided as 0.0 would be.
FLOATS = st.floats(-2.5, 2.5, width=32, allow_subnormal=False)
VALUES = st.one_of(FLOATS, st.sampled_from([-1.0, 0.0, 0.5]))


@st.composite
def random_forests(draw):
    n_features = draw(st.integers(1, 4))
    dim = draw(st.integers(1, 3))
    trees = []
    for _ in range(draw(st.integers(1, 4))):
        nodes = [("leaf", None)]
        frontier = [(0, 0)]
        while frontier:
            index, depth = frontier.pop()
            if depth < 4 and draw(st.booleans()):
                left, right = len(nodes), len(nodes) + 1
                nodes += [("leaf", None), ("leaf", None)]
                feature = draw(st.integers(0, n_features - 1))
                threshold = draw(VALUES)
                nodes[index] = ("split", feature, threshold, left, right)
                frontier += [(left, depth + 1), (right, depth + 1)]
            else:
                values = draw(
                    st.lists(st.floats(-3, 3, width=32), min_size=dim, max_size=dim)
                )
                nodes[index] = ("leaf", np.asarray(values, np.float32))
        trees.append(nodes)
    bias = draw(st.lists(st.floats(-1, 1, width=32), min_size=dim, max_size=dim))
    rows = draw(st.integers(1, 6))
    values = draw(
        st.lists(
            FLOATS,
            min_size=rows * n_features,
            max_size=rows * n_features,
        )
    )
    return (
        trees,
        np.asarray(bias, np.float32),
        np.reshape(np.float32(values), [rows, -1]),
    )


def walk(trees, bias, row):
    total = bias.astype(np.float64)
    for nodes in trees:
        node = nodes[0]
        while node[0] == "split":
            _, feature, threshold, left, right = node
            node = nodes[left] if row[feature] < np.float32(threshold) else nodes[right]
        total = total + node[1]
    return total


@given(random_forests())
def test_forest_logits_equal_a_tree_walk(case):
    trees, bias, values = case
    forest = forest_lib.pack(trees, bias, n_trees=len(trees) + 1)
    logits = forest_lib.forest_logits(
        tf.constant(values), forest.arrays(), forest.depth
    )
    logits = logits.numpy()
    expected = np.stack([walk(trees, bias, row) for row in values])
    np.testing.assert_allclose(logits, expected, rtol=1e-5, atol=1e-5)


def test_estimator_with_a_head_grows_what_the_canned_class_grows(tmp_path):
    features, score = make_data(5)
    ids = np.digitize(score, [0.0, 1.0]).astype(np.int64)
    settings = dict(n_trees=4, max_depth=2, learning_rate=0.3)
    canned = BoostedTreesClassifier(
        columns(), 1, model_dir=str(tmp_path / "canned"), n_classes=3, **settings
    )
    headed = BoostedTreesEstimator(
        columns(), 1, MultiClassHead(3), model_dir=str(tmp_path / "head"), **settings
    )
    for est in (canned, headed):
        est.train(train_fn(features, ids))
    np.testing.assert_array_equal(
        probabilities(headed, features), probabilities(canned, features)
    )
    regressor = BoostedTreesEstimator(
        columns(), 1, RegressionHead(), model_dir=str(tmp_path / "r"), **settings
    )
    regressor.train(train_fn(features, score))
    model, data = ydf_model(features, score, "SQUARED_ERROR", ydf.Task.REGRESSION, 4, 2)
    ours = np.stack([p["predictions"] for p in regressor.predict(predict_fn(features))])
    np.testing.assert_allclose(ours[:, 0], model.predict(data), atol=1e-5)


def test_estimator_refuses_a_head_ydf_cannot_grow_for():
    with pytest.raises(ValueError, match="got PoissonRegressionHead"):
        BoostedTreesEstimator(columns(), 1, PoissonRegressionHead())
