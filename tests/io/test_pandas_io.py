"""pandas_input_fn: 2.15's contract over tf.data, and its errors."""

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
import tensorflow as tf
from hypothesis import given
from hypothesis import strategies as st

import keras_estimator
from keras_estimator.compat.estimator.inputs import numpy_input_fn, pandas_input_fn


def _frame(rows: int = 5) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "b": np.arange(rows, dtype=np.float32),
            "a": np.arange(rows, dtype=np.int64) * 10,
            "word": [f"w{i}" for i in range(rows)],
        },
        index=np.arange(100, 100 + rows),
    )


def _batches(input_fn, config=None):
    dataset = input_fn(config) if config is not None else input_fn()
    return [tf.nest.map_structure(lambda t: t.numpy(), batch) for batch in dataset]


def test_columns_become_features_and_a_series_the_labels():
    x = _frame()
    y = pd.Series(np.arange(5) % 2, index=x.index)
    [(features, labels)] = _batches(pandas_input_fn(x, y, batch_size=8, shuffle=False))
    assert sorted(features) == ["a", "b", "word"]
    np.testing.assert_array_equal(features["b"], x["b"].to_numpy())
    np.testing.assert_array_equal(features["a"], x["a"].to_numpy())
    assert features["word"].tolist() == [f"w{i}".encode() for i in range(5)]
    assert features["b"].dtype == np.float32 and features["a"].dtype == np.int64
    np.testing.assert_array_equal(labels, y.to_numpy())


def test_a_dataframe_y_gives_a_dict_of_labels_even_when_names_clash_with_x():
    x = _frame()
    y = pd.DataFrame({"a": np.ones(5), "other": np.zeros(5)}, index=x.index)
    [(features, labels)] = _batches(pandas_input_fn(x, y, batch_size=5, shuffle=False))
    assert sorted(labels) == ["a", "other"]
    np.testing.assert_array_equal(labels["a"], np.ones(5))
    np.testing.assert_array_equal(features["a"], x["a"].to_numpy())  # x's column kept


def test_batches_cross_epochs_and_none_repeats_with_full_batches():
    x = _frame(5)
    sizes = [
        len(b["a"])
        for b in _batches(pandas_input_fn(x, batch_size=3, num_epochs=2, shuffle=False))
    ]
    assert sizes == [3, 3, 3, 1]
    endless = pandas_input_fn(x, batch_size=3, num_epochs=None, shuffle=False)()
    firsts = [b["a"].numpy().tolist() for b in endless.take(4)]
    assert firsts == [[0, 10, 20], [30, 40, 0], [10, 20, 30], [40, 0, 10]]


@given(
    rows=st.integers(1, 12),
    batch_size=st.integers(1, 7),
    num_epochs=st.integers(1, 3),
    shuffle=st.booleans(),
    seed=st.integers(0, 2**31 - 1),
)
def test_same_batches_as_numpy_input_fn_on_the_same_columns(
    rows, batch_size, num_epochs, shuffle, seed
):
    x = _frame(rows)
    y = pd.Series(np.arange(rows) * 3, index=x.index)
    config = keras_estimator.RunConfig(tf_random_seed=seed)
    ours = pandas_input_fn(
        x, y, batch_size=batch_size, num_epochs=num_epochs, shuffle=shuffle
    )
    arrays = {c: x[c].to_numpy() for c in ("a", "b")}
    arrays["word"] = x["word"].to_numpy().astype(str)
    reference = numpy_input_fn(
        arrays,
        y.to_numpy(),
        batch_size=batch_size,
        num_epochs=num_epochs,
        shuffle=shuffle,
    )
    got, expected = _batches(ours, config), _batches(reference, config)
    assert len(got) == len(expected)
    for (features, labels), (ref_features, ref_labels) in zip(
        got, expected, strict=True
    ):
        np.testing.assert_array_equal(labels, ref_labels)
        for key in ref_features:
            np.testing.assert_array_equal(features[key], ref_features[key])


def test_an_estimator_trains_and_evaluates_from_a_dataframe(tmp_path):
    rng = np.random.default_rng(0)
    x = pd.DataFrame({"u": rng.normal(size=200).astype(np.float32)})
    y = pd.Series((x["u"] > 0).astype(np.int64))
    estimator = keras_estimator.LinearClassifier(
        [tf.feature_column.numeric_column("u")], model_dir=str(tmp_path)
    )
    estimator.train(
        pandas_input_fn(x, y, batch_size=20, num_epochs=None, shuffle=True), steps=60
    )
    metrics = estimator.evaluate(pandas_input_fn(x, y, batch_size=50, shuffle=False))
    assert metrics["global_step"] == 60
    assert metrics["accuracy"] > 0.9
    predictions = list(
        estimator.predict(pandas_input_fn(x, batch_size=64, shuffle=False))
    )
    assert len(predictions) == 200


@pytest.mark.parametrize(
    "make_args, error, pattern",
    [
        (
            lambda x: dict(x=x.to_numpy(), shuffle=False),
            TypeError,
            "x must be a pandas DataFrame; got ndarray",
        ),
        (
            lambda x: dict(x=x, shuffle=None),
            ValueError,
            "shuffle must be provided.*got None",
        ),
        (
            lambda x: dict(x=x, y=[1] * 5, shuffle=False),
            TypeError,
            "y must be a pandas Series.*got list",
        ),
        (
            lambda x: dict(x=x, y=pd.Series(range(5)), shuffle=False),
            ValueError,
            "Index for x and y are mismatched",
        ),
        (
            lambda x: dict(
                x=x,
                y=pd.Series(range(5), index=x.index),
                target_column="a",
                shuffle=False,
            ),
            ValueError,
            "Cannot use name 'a' for target column",
        ),
        (
            lambda x: dict(x=x, target_column=3, shuffle=False),
            TypeError,
            "target_column must be a string type; got 3",
        ),
        (
            lambda x: dict(x=x, batch_size=0, shuffle=False),
            ValueError,
            "batch_size must be a positive integer; got 0",
        ),
        (
            lambda x: dict(x=x, num_epochs=-1, shuffle=False),
            ValueError,
            "num_epochs must be a non-negative integer",
        ),
        (
            lambda x: dict(x=x.rename(columns={"a": 7}), shuffle=False),
            TypeError,
            r"column names of x must be strings.*\[7\]",
        ),
        (
            lambda x: dict(x=x.iloc[:0], shuffle=False),
            ValueError,
            r"at least one row.*\(0, 3\)",
        ),
        (
            lambda x: dict(x=x.assign(word=["a", None, "b", "c", "d"]), shuffle=False),
            TypeError,
            r"x\['word'\] holds Python objects.*None",
        ),
    ],
)
def test_bad_arguments_fail_clearly(make_args, error, pattern):
    with pytest.raises(error, match=pattern):
        pandas_input_fn(**make_args(_frame()))


def test_without_pandas_the_error_names_the_extra():
    code = (
        "import sys; sys.modules['pandas'] = None\n"
        "from keras_estimator.compat.estimator.inputs import pandas_input_fn\n"
        "try:\n"
        "    pandas_input_fn({'a': [1]}, shuffle=False)\n"
        "except ImportError as e:\n"
        "    print('ERR', e)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    assert "ERR pandas_input_fn needs pandas" in out
    assert "keras_estimator[pandas]" in out
