"""classifier_/regressor_parse_example_spec, against tf.estimator 2.15's results.

The expected specs and error texts were read off tensorflow_estimator 2.15
(`canned/parsing_utils.py`) for the same columns.
"""

import pytest
import tensorflow as tf
from hypothesis import given
from hypothesis import strategies as st

from keras_estimator._src.feature_column import parsing_utils, v1_parsing_utils

fc = tf.feature_column
SPEC_MAKERS = [
    parsing_utils.classifier_parse_example_spec,
    parsing_utils.regressor_parse_example_spec,
    v1_parsing_utils.classifier_parse_example_spec,
    v1_parsing_utils.regressor_parse_example_spec,
]


def columns():
    bucketized = fc.bucketized_column(fc.numeric_column("c"), [1.0])
    return [
        fc.numeric_column("b", shape=(2,)),
        bucketized,
        fc.crossed_column(["a", bucketized], 5),
        fc.embedding_column(fc.categorical_column_with_vocabulary_list("v", ["x"]), 2),
    ]


FEATURES = {
    "a": tf.io.VarLenFeature(tf.string),
    "b": tf.io.FixedLenFeature((2,), tf.float32),
    "c": tf.io.FixedLenFeature((1,), tf.float32),
    "v": tf.io.VarLenFeature(tf.string),
}


@pytest.mark.parametrize("spec_fn", [
    parsing_utils.classifier_parse_example_spec,
    v1_parsing_utils.classifier_parse_example_spec,
])
def test_classifier_spec_as_tf215(spec_fn):
    spec = spec_fn(columns(), "lbl", weight_column="w")
    assert spec == {
        **FEATURES,
        "lbl": tf.io.FixedLenFeature((1,), tf.int64),
        "w": tf.io.FixedLenFeature((1,), tf.float32),
    }


@pytest.mark.parametrize("spec_fn", [
    parsing_utils.regressor_parse_example_spec,
    v1_parsing_utils.regressor_parse_example_spec,
])
def test_regressor_spec_as_tf215(spec_fn):
    spec = spec_fn(
        columns(), "y", label_dimension=3, label_default=(0.0, 0.0, 0.0),
        weight_column=fc.numeric_column("w", dtype=tf.float64),
    )
    assert spec == {
        **FEATURES,
        "y": tf.io.FixedLenFeature((3,), tf.float32, (0.0, 0.0, 0.0)),
        "w": tf.io.FixedLenFeature((1,), tf.float64),
    }


def test_defaults_label_dtypes():
    price = [fc.numeric_column("price")]
    assert parsing_utils.classifier_parse_example_spec(price, "l")["l"].dtype == tf.int64
    assert parsing_utils.regressor_parse_example_spec(price, "l")["l"].dtype == tf.float32
    spec = parsing_utils.classifier_parse_example_spec(price, "l", tf.string, "no")
    assert spec["l"] == tf.io.FixedLenFeature((1,), tf.string, "no")
    assert "price" in spec and len(spec) == 2


@pytest.mark.parametrize("spec_fn", SPEC_MAKERS)
def test_label_key_used_as_feature(spec_fn):
    with pytest.raises(ValueError, match=r"label should not be used as feature\. label_key: 'b'.*Remove"):
        spec_fn(columns(), "b")


@pytest.mark.parametrize("spec_fn", SPEC_MAKERS)
def test_weight_column_used_as_feature_or_label(spec_fn):
    with pytest.raises(ValueError, match=r"weight_column should not be used as feature\. weight_column: 'c'"):
        spec_fn(columns(), "l", weight_column="c")
    with pytest.raises(ValueError, match=r"weight_column should not be used as feature\. weight_column: 'w'"):
        spec_fn(columns(), "w", weight_column="w")


@pytest.mark.parametrize("weight", [
    fc.categorical_column_with_identity("w", 3), 3, fc.embedding_column(
        fc.categorical_column_with_identity("w", 3), 2)])
def test_weight_column_of_wrong_type(weight):
    with pytest.raises(ValueError, match=r"weight_column should be an instance of tf\.feature_column\.numeric_column.*got"):
        parsing_utils.classifier_parse_example_spec(columns(), "l", weight_column=weight)


def test_label_key_must_be_a_string():
    # tf.estimator 2.15 documented this error but returned a spec keyed None.
    with pytest.raises(ValueError, match=r"label_key must be the string key.*got None"):
        parsing_utils.regressor_parse_example_spec(columns(), None)


def test_non_column_rejected_by_spec_maker():
    with pytest.raises(ValueError, match="FeatureColumn"):
        parsing_utils.classifier_parse_example_spec(["b"], "l")


@given(
    keys=st.lists(st.from_regex(r"[a-z]{1,6}", fullmatch=True), min_size=1, max_size=5, unique=True),
    dimension=st.integers(1, 4),
)
def test_spec_is_features_plus_label_and_weight(keys, dimension):
    cols = [fc.numeric_column(key, shape=(dimension,)) for key in keys]
    spec = parsing_utils.regressor_parse_example_spec(
        cols, "LABEL", label_dimension=dimension, weight_column="WEIGHT")
    assert spec == {
        **fc.make_parse_example_spec(cols),
        "LABEL": tf.io.FixedLenFeature((dimension,), tf.float32),
        "WEIGHT": tf.io.FixedLenFeature((1,), tf.float32),
    }


def test_spec_parses_an_example():
    example = tf.train.Example(features=tf.train.Features(feature={
        "b": tf.train.Feature(float_list=tf.train.FloatList(value=[1.0, 2.0])),
        "lbl": tf.train.Feature(int64_list=tf.train.Int64List(value=[1])),
    }))
    spec = parsing_utils.classifier_parse_example_spec(
        [fc.numeric_column("b", shape=(2,))], "lbl", label_default=0)
    parsed = tf.io.parse_example([example.SerializeToString()], spec)
    assert parsed["lbl"].numpy().tolist() == [[1]]
    assert parsed["b"].numpy().tolist() == [[1.0, 2.0]]
