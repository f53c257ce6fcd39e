"""LinearSDCA: converging to the regularized optimum, 2.15's checks and names."""

import json
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf
from hypothesis import given
from hypothesis import strategies as st

import keras_estimator as ke
from keras_estimator._src.canned import v1_estimators
from keras_estimator._src.canned.linear import (
    LinearClassifier,
    LinearEstimator,
    LinearRegressor,
)
from keras_estimator._src.canned.linear_sdca import LinearSDCA, _sparse_feature
from keras_estimator._src.head.classification_heads import MultiClassHead

N = 120
RNG = np.random.RandomState(0)
X = RNG.normal(size=(N, 3)).astype(np.float32)
C = RNG.randint(0, 4, N).astype(np.int64)
IDS = np.array([f"example-{i}".encode() for i in range(N)])
WEIGHTS = RNG.uniform(0.5, 2.0, N).astype(np.float32)
COLUMNS = [
    tf.feature_column.numeric_column("x", shape=[3]),
    tf.feature_column.categorical_column_with_identity("c", 4),
]
Y_REGRESSION = (X @ [1.0, -2.0, 0.5] + (C == 1) * 1.5 + RNG.normal(0, 0.3, N)).astype(
    np.float32
)
Y_BINARY = (X @ [1.0, -2.0, 0.5] + (C == 1) + RNG.normal(0, 0.8, N) > 0).astype(
    np.int64
)
L2 = 4.0


def design():
    """The model's inputs: x, one-hot c, and the bias's constant 1."""
    return np.concatenate([X, np.eye(4)[C], np.ones((N, 1))], axis=1)


def weights_of(est):
    get = est.get_variable_value
    return np.concatenate(
        [
            get("linear/linear_model/x/weights").ravel(),
            get("linear/linear_model/c/weights").ravel(),
            get("linear/linear_model/bias_weights").ravel(),
        ]
    )


def full_batch(labels, weights=False):
    features = {"x": X, "c": C, "id": IDS}
    if weights:
        features["w"] = WEIGHTS
    return lambda: tf.data.Dataset.from_tensors((features, labels)).repeat()


def ridge(weights):
    z = design()
    return np.linalg.solve(
        z.T @ (weights[:, None] * z) + L2 * np.eye(z.shape[1]),
        z.T @ (weights * Y_REGRESSION),
    )


def regularized_logistic(labels):
    """Newton's method on sum log(1 + exp(-s z.b)) + L2/2 |b|^2, s = +-1."""
    z = design()
    signs = 2.0 * labels - 1.0
    beta = np.zeros(z.shape[1])
    for _ in range(50):
        margins = signs * (z @ beta)
        p = 1.0 / (1.0 + np.exp(margins))  # sigmoid(-margin)
        gradient = -z.T @ (signs * p) + L2 * beta
        hessian = z.T @ (z * (p * (1 - p))[:, None]) + L2 * np.eye(z.shape[1])
        beta -= np.linalg.solve(hessian, gradient)
    return beta


def test_regression_converges_to_the_weighted_ridge_solution(tmp_path):
    est = LinearRegressor(
        COLUMNS,
        model_dir=str(tmp_path),
        weight_column="w",
        optimizer=LinearSDCA("id", symmetric_l2_regularization=L2),
    )
    est.train(full_batch(Y_REGRESSION, weights=True), steps=60)
    np.testing.assert_allclose(weights_of(est), ridge(WEIGHTS), atol=2e-3)
    # The unregularized weights equal the model's without l1.
    np.testing.assert_array_equal(
        est.get_variable_value("linear/linear_model/x/weights_unshrunk"),
        est.get_variable_value("linear/linear_model/x/weights"),
    )


def test_binary_classification_converges_to_the_regularized_logistic_optimum(tmp_path):
    est = LinearClassifier(
        COLUMNS,
        model_dir=str(tmp_path),
        optimizer=LinearSDCA("id", symmetric_l2_regularization=L2),
    )
    est.train(full_batch(Y_BINARY), steps=60)
    np.testing.assert_allclose(
        weights_of(est), regularized_logistic(Y_BINARY), atol=2e-3
    )
    assert est.get_variable_value("global_step") == 60


def test_checkpoint_names_are_2_15s(tmp_path):
    est = LinearClassifier(COLUMNS, model_dir=str(tmp_path), optimizer=LinearSDCA("id"))
    est.train(full_batch(Y_BINARY), steps=2)
    assert dict(tf.train.list_variables(str(tmp_path))) == {
        "ShardedMutableHashTable-1-of-1-keys": [131072, 2],
        "ShardedMutableHashTable-1-of-1-values": [131072, 4],
        "global_step": [],
        "linear/linear_model/bias_weights": [1],
        "linear/linear_model/bias_weights_unshrunk": [1],
        "linear/linear_model/c/weights": [4, 1],
        "linear/linear_model/c/weights_unshrunk": [4, 1],
        "linear/linear_model/x/weights": [3, 1],
        "linear/linear_model/x/weights_unshrunk": [3, 1],
    }


def test_a_new_estimator_resumes_with_the_saved_dual_state(tmp_path):
    # Were the example states lost, the restarted duals would pull the
    # weights away from the optimum.
    def regressor():
        return LinearRegressor(
            COLUMNS,
            model_dir=str(tmp_path),
            optimizer=LinearSDCA("id", symmetric_l2_regularization=L2),
        )

    regressor().train(full_batch(Y_REGRESSION), steps=3)
    est = regressor()
    est.train(full_batch(Y_REGRESSION), steps=60)
    np.testing.assert_allclose(weights_of(est), ridge(np.ones(N)), atol=2e-3)


def test_a_sharded_table_keeps_2_15s_shard_names_and_converges(tmp_path):
    sdca = LinearSDCA("id", num_table_shards=2, symmetric_l2_regularization=L2)
    est = LinearRegressor(COLUMNS, model_dir=str(tmp_path), optimizer=sdca)
    est.train(full_batch(Y_REGRESSION), steps=60)
    names = {name for name, _ in tf.train.list_variables(str(tmp_path))}
    assert {
        "ShardedMutableHashTable-1-of-2-keys",
        "ShardedMutableHashTable-2-of-2-values",
    } <= names
    np.testing.assert_allclose(weights_of(est), ridge(np.ones(N)), atol=2e-3)


def test_l1_shrinks_the_unregularized_weights(tmp_path):
    sdca = LinearSDCA(
        "id", symmetric_l1_regularization=2.0, symmetric_l2_regularization=L2
    )
    est = LinearRegressor(COLUMNS, model_dir=str(tmp_path), optimizer=sdca)
    est.train(full_batch(Y_REGRESSION), steps=20)
    unshrunk = est.get_variable_value("linear/linear_model/c/weights_unshrunk")
    shrunk = est.get_variable_value("linear/linear_model/c/weights")
    expected = np.sign(unshrunk) * np.maximum(0.0, np.abs(unshrunk) - 2.0 / L2)
    np.testing.assert_allclose(shrunk, expected, atol=1e-6)
    assert (shrunk == 0).any()


@pytest.mark.parametrize(
    "make, match",
    [
        (
            lambda d, o: LinearClassifier(COLUMNS, d, n_classes=3, optimizer=o),
            "multi-class",
        ),
        (
            lambda d, o: LinearRegressor(COLUMNS, d, label_dimension=2, optimizer=o),
            "one-dim",
        ),
        (
            lambda d, o: LinearRegressor(
                COLUMNS, d, optimizer=o, sparse_combiner="mean"
            ),
            '"sum"',
        ),
        (
            lambda d, o: LinearClassifier(
                COLUMNS, d, label_vocabulary=["a", "b"], optimizer=o
            ),
            "label_vocabulary",
        ),
        (
            lambda d, o: LinearEstimator(MultiClassHead(3), COLUMNS, d, optimizer=o),
            "Unsupported head",
        ),
    ],
)
def test_unsupported_settings_are_refused(make, match, tmp_path):
    with pytest.raises(ValueError, match=match):
        make(str(tmp_path), LinearSDCA("id"))


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        (dict(example_id_column=None), TypeError, "example_id_column"),
        (
            dict(example_id_column="id", symmetric_l2_regularization=0.0),
            ValueError,
            "l2",
        ),
        (
            dict(example_id_column="id", symmetric_l1_regularization=-1.0),
            ValueError,
            "l1",
        ),
        (dict(example_id_column="id", num_loss_partitions=0), ValueError, "partitions"),
    ],
)
def test_bad_settings_are_refused(kwargs, error, match):
    with pytest.raises(error, match=match):
        LinearSDCA(**kwargs)


def test_a_missing_or_numeric_example_id_is_explained(tmp_path):
    est = LinearClassifier(
        COLUMNS, model_dir=str(tmp_path / "a"), optimizer=LinearSDCA("key")
    )
    with pytest.raises(ValueError, match="'key' is not among the features"):
        est.train(full_batch(Y_BINARY), steps=1)

    def numeric():
        return tf.data.Dataset.from_tensors(({"x": X, "c": C, "id": C}, Y_BINARY))

    est = LinearClassifier(
        COLUMNS, model_dir=str(tmp_path / "b"), optimizer=LinearSDCA("id")
    )
    with pytest.raises(TypeError, match="string tensor"):
        est.train(numeric, steps=1)


def test_a_column_of_rank_two_is_refused(tmp_path):
    columns = [tf.feature_column.numeric_column("m", shape=[2, 2])]

    def data():
        features = {"m": np.zeros((4, 2, 2), np.float32), "id": IDS[:4]}
        return tf.data.Dataset.from_tensors((features, np.zeros(4, np.int64)))

    est = LinearClassifier(columns, model_dir=str(tmp_path), optimizer=LinearSDCA("id"))
    with pytest.raises(ValueError, match="rank 1"):
        est.train(data, steps=1)


def test_labels_other_than_0_and_1_are_refused(tmp_path):
    est = LinearClassifier(COLUMNS, model_dir=str(tmp_path), optimizer=LinearSDCA("id"))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"class ids in \[0, 2\)"):
        est.train(full_batch(Y_BINARY * 3), steps=1)


@given(
    st.lists(
        st.tuples(st.integers(0, 3), st.integers(-1, 5), st.floats(0.5, 2.0)),
        min_size=1,
        max_size=12,
    )
)
def test_sparse_ids_are_deduplicated_per_example_and_negatives_dropped(entries):
    entries = sorted(entries, key=lambda e: e[0])
    positions = {}
    indices = []
    for example, _, _ in entries:
        positions[example] = positions.get(example, -1) + 1
        indices.append([example, positions[example]])
    ids = tf.SparseTensor(indices, [e[1] for e in entries], [4, 16])
    values = tf.SparseTensor(indices, [e[2] for e in entries], [4, 16])
    pair = type("Pair", (), {"id_tensor": ids, "weight_tensor": values})()
    if all(e[1] < 0 for e in entries):
        return  # nothing valid: 2.15's op gets no ids either
    examples, features, sums = (t.numpy() for t in _sparse_feature(pair))
    expected = {}
    for example, feature, value in entries:
        if feature >= 0:
            expected[(example, feature)] = expected.get((example, feature), 0.0) + value
    got = {
        (int(e), int(f)): float(v)
        for e, f, v in zip(examples, features, sums, strict=True)
    }
    assert got.keys() == expected.keys()
    for key, value in expected.items():
        assert got[key] == pytest.approx(value, rel=1e-5)


def test_v1_classes_train_by_sdca_under_2_15s_v1_names(tmp_path):
    est = v1_estimators.LinearRegressor(
        COLUMNS,
        model_dir=str(tmp_path),
        optimizer=LinearSDCA("id", symmetric_l2_regularization=L2),
    )
    est.train(full_batch(Y_REGRESSION), steps=60)
    names = {name for name, _ in tf.train.list_variables(str(tmp_path))}
    assert {
        "linear/linear/linear_model/x/weights/part_0_unshrunk",
        "linear/linear/linear_model/c/weights/part_0_unshrunk",
        "linear/linear/linear_model/bias_weights/part_0_unshrunk",
        "ShardedMutableHashTable-1-of-1-keys",
    } <= names
    np.testing.assert_allclose(weights_of(est), ridge(np.ones(N)), atol=2e-3)
    results = est.evaluate(full_batch(Y_REGRESSION), steps=1)
    # The v1 classes' loss is summed over the batch.
    assert results["loss"] == pytest.approx(results["average_loss"] * N, rel=1e-5)
    with pytest.raises(ValueError, match="multi-class"):
        v1_estimators.LinearClassifier(
            COLUMNS, str(tmp_path / "c"), n_classes=3, optimizer=LinearSDCA("id")
        )


FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "tf215_kmeans_sdca"


@pytest.mark.parametrize(
    "name, cls, label_key",
    [
        ("classifier", LinearClassifier, "y_binary"),
        ("regressor", LinearRegressor, "y_regression"),
    ],
)
def test_the_same_run_reaches_2_15s_weights(name, cls, label_key, tmp_path):
    data = np.load(FIXTURE / "data.npz")
    expected = json.loads((FIXTURE / "expected.json").read_text())[
        f"sdca_{name}_weights"
    ]
    features = {"x": data["x"], "c": data["c"], "id": data["ids"]}
    labels = data[label_key]
    est = cls(
        COLUMNS,
        model_dir=str(tmp_path),
        optimizer=LinearSDCA("id", symmetric_l2_regularization=4.0),
    )
    est.train(
        lambda: tf.data.Dataset.from_tensors((features, labels)).repeat(), steps=30
    )
    assert sorted(expected) == sorted(
        n for n in est.get_variable_names() if n.startswith("linear/")
    )
    for variable, value in expected.items():
        # SDCA's kernel updates examples on several threads: runs differ
        # slightly, in 2.15 as here.
        np.testing.assert_allclose(
            est.get_variable_value(variable), value, atol=2e-3, err_msg=variable
        )


def test_a_multi_replica_strategy_is_refused(tmp_path):
    config = ke.RunConfig(
        train_distribute=tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    )
    est = LinearClassifier(
        COLUMNS, model_dir=str(tmp_path), optimizer=LinearSDCA("id"), config=config
    )
    with pytest.raises(ValueError, match="one replica"):
        est.train(full_batch(Y_BINARY), steps=1)


def test_a_table_past_its_first_buckets_is_still_saved_and_restored(tmp_path):
    # 2.15's table starts with 131072 buckets and grows when ~80% full; a
    # grown table must still reach the checkpoint, or resuming loses the dual
    # state of every example.
    rows, batch = 120_000, 30_000
    ids = np.array([f"row-{i}".encode() for i in range(rows)])
    x = np.random.RandomState(1).normal(size=(rows, 1)).astype(np.float32)
    y = (x[:, 0] > 0).astype(np.int64)

    def input_fn():
        data = tf.data.Dataset.from_tensor_slices(({"x": x, "id": ids}, y))
        return data.batch(batch)

    def make():
        return LinearClassifier(
            [tf.feature_column.numeric_column("x")],
            model_dir=str(tmp_path),
            optimizer=LinearSDCA("id", symmetric_l2_regularization=2.0),
        )

    make().train(input_fn, steps=rows // batch)
    keys = make().get_variable_value("ShardedMutableHashTable-1-of-1-keys")
    used = ~(np.all(keys == 0, axis=1) | np.all(keys == 1, axis=1))
    assert keys.shape[0] > 131072
    assert used.sum() == rows
