"""TF1-format checkpoint writing, retention and restore."""

import re
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

from keras_estimator._src.checkpoint import checkpoints as _checkpoint


def variables():
    return {
        "dense/kernel": tf.Variable(np.arange(6, dtype="float32").reshape(2, 3)),
        "global_step": tf.Variable(0, dtype=tf.int64),
    }


def test_round_trip_by_name(tmp_path):
    source = variables()
    prefix = _checkpoint.save(source, str(tmp_path), 7, _checkpoint.RetentionPolicy())
    assert prefix.endswith("model.ckpt-7")
    assert _checkpoint.variable_names(prefix) == ["dense/kernel", "global_step"]
    target = {"dense/kernel": tf.Variable(tf.zeros([2, 3]))}
    assert _checkpoint.restore(target, prefix) == ["dense/kernel"]
    np.testing.assert_array_equal(target["dense/kernel"].numpy(), source["dense/kernel"].numpy())


def _eager_ops(run):
    """The types of the operations `run()` executes eagerly, in order."""
    from tensorflow.python.framework import op_callbacks

    executed = []

    def record(op_type, inputs, attrs, outputs, op_name=None, graph=None):
        if graph is None:
            executed.append(op_type.decode() if isinstance(op_type, bytes) else op_type)

    op_callbacks.add_op_callback(record)
    try:
        run()
    finally:
        op_callbacks.remove_op_callback(record)
    return executed


def test_a_save_reads_each_variable_with_one_operation(tmp_path):
    # read_value() would add an Identity per variable to each save (and, on
    # a cold start, the process's first Identity kernel to make).
    source = variables()
    saved = []
    executed = _eager_ops(
        lambda: saved.append(
            _checkpoint.save(source, str(tmp_path), 3, _checkpoint.RetentionPolicy())
        )
    )
    assert sorted(executed) == ["MergeV2Checkpoints", "ReadVariableOp", "ReadVariableOp", "SaveV2"]
    for name, variable in source.items():
        np.testing.assert_array_equal(
            _checkpoint.variable_value(saved[0], name), variable.numpy()
        )


def test_a_first_train_call_runs_no_eager_identity(tmp_path):
    # Its two saves and the global step reads around them read each variable
    # by one operation: a cold start makes no Identity kernel.
    import keras_estimator as ke
    from tests._models import input_fn, make_data, mlp_model_fn

    x, y = make_data(16)
    estimator = ke.Estimator(mlp_model_fn, str(tmp_path), params={"hidden": [4]})
    executed = _eager_ops(lambda: estimator.train(input_fn(x, y, batch_size=8), steps=1))
    assert "SaveV2" in executed and "ReadVariableOp" in executed
    assert "Identity" not in executed
    assert _checkpoint.step_of(estimator.latest_checkpoint()) == 1


def test_missing_variable_is_named(tmp_path):
    prefix = _checkpoint.save(variables(), str(tmp_path), 1, _checkpoint.RetentionPolicy())
    with pytest.raises(ValueError, match=r"no value for variables \['dense_1/bias'\]"):
        _checkpoint.restore({"dense_1/bias": tf.Variable(tf.zeros([3]))}, prefix)


def test_another_dtype_is_refused_naming_both(tmp_path):
    prefix = _checkpoint.save(variables(), str(tmp_path), 1, _checkpoint.RetentionPolicy())
    kernel = tf.Variable(tf.ones([2, 3], dtype=tf.float64))
    with pytest.raises(
        ValueError,
        match=r"'dense/kernel' has dtype float64 in model_fn but dtype float32 in "
        r"checkpoint .*model\.ckpt-1\. Create it as float32",
    ):
        _checkpoint.restore({"dense/kernel": kernel}, prefix)
    np.testing.assert_array_equal(kernel.numpy(), np.ones([2, 3]))


def test_damaged_data_is_named_and_changes_no_variable(tmp_path):
    prefix = _checkpoint.save(variables(), str(tmp_path), 1, _checkpoint.RetentionPolicy())
    data = tmp_path / "model.ckpt-1.data-00000-of-00001"
    data.write_bytes(data.read_bytes()[:-8])
    target = {
        "global_step": tf.Variable(5, dtype=tf.int64),
        "dense/kernel": tf.Variable(tf.zeros([2, 3])),
    }
    with pytest.raises(ValueError, match=re.escape(prefix) + r" is damaged and cannot be read"):
        _checkpoint.restore(target, prefix)
    assert int(target["global_step"].numpy()) == 5
    np.testing.assert_array_equal(target["dense/kernel"].numpy(), np.zeros([2, 3]))


def test_a_directory_named_like_a_glob_reads_its_own_files(tmp_path):
    model_dir = tmp_path / "run[1]"
    (tmp_path / "run1").mkdir()  # what the pattern `run[1]` would match
    prefix = _checkpoint.save(variables(), str(model_dir), 3, _checkpoint.RetentionPolicy())
    assert _checkpoint.latest(str(model_dir)) == prefix
    assert _checkpoint.step_of(prefix) == 0
    target = {"dense/kernel": tf.Variable(tf.zeros([2, 3]))}
    assert _checkpoint.restore(target, prefix) == ["dense/kernel"]
    np.testing.assert_array_equal(target["dense/kernel"].numpy(), np.arange(6).reshape(2, 3))


def test_keep_every_n_hours_keeps_files_off_the_list(tmp_path):
    policy = _checkpoint.RetentionPolicy(max_to_keep=2, keep_every_n_hours=0.0)
    for step in range(4):
        _checkpoint.save(variables(), str(tmp_path), step, policy)
    state = tf.train.get_checkpoint_state(str(tmp_path))
    assert [p.rsplit("-", 1)[1] for p in state.all_model_checkpoint_paths] == ["2", "3"]
    # Preserved by the hours rule: still on disk although no longer listed.
    assert sorted(p.name for p in tmp_path.glob("*.index")) == [
        f"model.ckpt-{s}.index" for s in range(4)
    ]


def test_without_hours_rule_old_files_are_deleted(tmp_path):
    policy = _checkpoint.RetentionPolicy(max_to_keep=2, keep_every_n_hours=10000)
    for step in range(4):
        _checkpoint.save(variables(), str(tmp_path), step, policy)
    assert sorted(p.name for p in tmp_path.glob("*.index")) == [
        "model.ckpt-2.index", "model.ckpt-3.index"
    ]


def test_other_keras_backend_is_refused():
    result = subprocess.run(
        [sys.executable, "-c", "import keras_estimator"],
        env={"KERAS_BACKEND": "jax", "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode != 0
    assert "KERAS_BACKEND is 'jax'" in result.stderr
    assert "KERAS_BACKEND=tensorflow" in result.stderr
