"""Canned estimators take `hidden_units` and `feature_columns` as 2.15 took them.

Published programs pass `hidden_units` as a command line's
`"128 32 4".split(" ")` (training-data-analyst's taxifare trainer), and
`feature_columns` as a dict's `values()` (its housing notebook); 2.15
trained both (its dense layers took `int(units)`, its estimators
`tuple(feature_columns)`). The expected figures are tf.estimator 2.15's
(tensorflow-cpu 2.15.1, tensorflow-estimator 2.15.0): hidden kernels of
shapes [1, 8] and [8, 4] after 5 steps, for each of these arguments.
"""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

import keras_estimator

_X = np.linspace(0, 1, 64).astype(np.float32)


def _input_fn():
    return tf.data.Dataset.from_tensor_slices(({"x": _X}, 3 * _X + 1)).repeat().batch(16)


_MAKERS = {
    "DNNRegressor": lambda d, cols, units: keras_estimator.DNNRegressor(
        model_dir=d, feature_columns=cols, hidden_units=units
    ),
    "v1.DNNRegressor": lambda d, cols, units: keras_estimator.compat.estimator.DNNRegressor(
        model_dir=d, feature_columns=cols, hidden_units=units
    ),
    "DNNLinearCombinedRegressor": lambda d, cols, units: (
        keras_estimator.DNNLinearCombinedRegressor(
            model_dir=d,
            linear_feature_columns=cols,
            dnn_feature_columns=cols,
            dnn_hidden_units=units,
        )
    ),
}


_UNITS = {
    "strings": ["8", "4"],
    "floats": [8.0, 4.0],
    "numpy": np.array([8, 4]),
    "tuple": (8, 4),
}
# 2.15's DNNLinearCombinedRegressor refused an array (its truth value is
# ambiguous), so that pair is left out.
_CASES = [
    (kind, units)
    for kind in sorted(_MAKERS)
    for units in _UNITS
    if not (kind == "DNNLinearCombinedRegressor" and units == "numpy")
]


@pytest.mark.parametrize(("kind", "units_of"), _CASES)
def test_hidden_units_as_2_15_took_them(tmp_path, kind, units_of):
    units = _UNITS[units_of]
    est = _MAKERS[kind](str(tmp_path), [tf.feature_column.numeric_column("x")], units)
    est.train(_input_fn, steps=5)
    kernels = [
        shape
        for name, shape in sorted(tf.train.list_variables(est.model_dir))
        if "hiddenlayer" in name and name.endswith("kernel")
    ]
    assert kernels == [[1, 8], [8, 4]]
    assert int(est.get_variable_value("global_step")) == 5


@pytest.mark.parametrize(
    "make",
    [
        lambda d, cols: keras_estimator.LinearRegressor(cols, model_dir=d),
        lambda d, cols: keras_estimator.DNNRegressor([4], cols, model_dir=d),
        lambda d, cols: keras_estimator.DNNLinearCombinedRegressor(
            d, linear_feature_columns=cols, dnn_feature_columns=cols, dnn_hidden_units=[4]
        ),
        lambda d, cols: keras_estimator.compat.estimator.LinearRegressor(cols, model_dir=d),
    ],
    ids=["linear", "dnn", "combined", "v1_linear"],
)
def test_feature_columns_given_as_a_dicts_values(tmp_path, make):
    columns = {"x": tf.feature_column.numeric_column("x")}
    est = make(str(tmp_path), columns.values())
    est.train(_input_fn, steps=5)
    assert int(est.get_variable_value("global_step")) == 5
    assert np.isfinite(est.evaluate(_input_fn, steps=2)["loss"])
