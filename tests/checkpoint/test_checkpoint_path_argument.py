"""checkpoint_path arguments of evaluate, predict and export, and warm starts.

tf.estimator 2.15 took str and bytes, and raised `TypeError: Expected binary
or unicode string, got 5` for an int; here the same TypeError also names the
argument, and path objects are taken too.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
import tensorflow as tf
from hypothesis import given
from hypothesis import strategies as st

import keras_estimator as ke
from keras_estimator._src.checkpoint.checkpoints import checkpoint_path_argument
from tests import _models


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    model_dir = tmp_path_factory.mktemp("trained")
    x, y = _models.make_data()
    estimator = ke.Estimator(
        _models.mlp_model_fn, model_dir=str(model_dir), params={"hidden": [4]}
    )
    estimator.train(_models.input_fn(x, y), steps=3)
    return estimator


def _eval_input():
    x, y = _models.make_data(num_examples=8)
    return _models.input_fn(x, y, repeat=False)


def _receiver():
    x = tf.compat.v1.placeholder(tf.float32, [None, 4])
    return ke.export.ServingInputReceiver({"x": x}, {"x": x})


_CALLS = {
    "evaluate": lambda est, path: est.evaluate(_eval_input(), checkpoint_path=path),
    "predict": lambda est, path: next(est.predict(_eval_input(), checkpoint_path=path)),
    "export_saved_model": lambda est, path: est.export_saved_model(
        os.path.join(est.model_dir, "export"), _receiver, checkpoint_path=path
    ),
}


@pytest.mark.parametrize("call", sorted(_CALLS))
def test_an_int_checkpoint_path_is_a_type_error_naming_it(trained, call):
    # Was "expected str, bytes or os.PathLike object, not int" from os.path
    # (a ValueError for export).
    with pytest.raises(
        TypeError,
        match=r"^Expected binary or unicode string, got 5 \(int\) as checkpoint_path\. "
        r"Pass the checkpoint's path prefix",
    ):
        _CALLS[call](trained, 5)


@pytest.mark.parametrize("call", ["evaluate", "predict"])
def test_a_bytes_checkpoint_path_reads_that_checkpoint(trained, call):
    # tf.estimator 2.15 took bytes; they failed here with "cannot use a
    # string pattern on a bytes-like object".
    path = trained.latest_checkpoint()
    from_str = _CALLS[call](trained, path)
    from_bytes = _CALLS[call](trained, path.encode())
    for key in from_str:
        np.testing.assert_array_equal(from_bytes[key], from_str[key])


@given(
    st.one_of(
        st.integers(),
        st.floats(allow_nan=False),
        st.booleans(),
        st.lists(st.text(max_size=3), max_size=2),
        st.dictionaries(st.text(max_size=2), st.integers(), max_size=2),
    )
)
def test_any_other_type_is_refused_with_its_value(value):
    with pytest.raises(TypeError, match=r"Expected binary or unicode string, got .* as "
                       r"checkpoint_path"):
        checkpoint_path_argument(value)


@given(st.text(min_size=1, max_size=20).filter(lambda s: "\x00" not in s))
def test_str_bytes_and_paths_give_the_same_str(text):
    import pathlib

    assert checkpoint_path_argument(text) == text
    assert checkpoint_path_argument(text.encode("utf-8")) == text
    assert checkpoint_path_argument(pathlib.PurePosixPath("/d") / text) == os.fspath(
        pathlib.PurePosixPath("/d") / text
    )
    assert checkpoint_path_argument(None) is None


def test_warm_start_settings_refuse_an_int_checkpoint_naming_the_field():
    with pytest.raises(TypeError, match=r"ckpt_to_initialize_from must be a path.*int: 5"):
        ke.WarmStartSettings(5)
