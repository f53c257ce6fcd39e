"""`RunConfig(session_config=ConfigProto(...))`: what TF2 can apply is applied."""

import logging
import os
import subprocess
import sys
import textwrap

import tensorflow as tf

import keras_estimator as ke
from keras_estimator._src.base import session_config as _session_config
from tests._models import mlp_model_fn


def test_settings_apply_when_the_estimator_is_made_before_tensorflow_runs(tmp_path):
    # A process of its own: thread counts are fixed once TensorFlow has run
    # an operation, which the test process did long ago.
    script = textwrap.dedent(
        f"""
        import tensorflow as tf
        import keras_estimator as ke
        from tests._models import mlp_model_fn

        tf.config.set_soft_device_placement(False)
        proto = tf.compat.v1.ConfigProto(
            intra_op_parallelism_threads=1,
            inter_op_parallelism_threads=3,
            allow_soft_placement=True,
            log_device_placement=True,
        )
        config = ke.RunConfig(session_config=proto)
        ke.Estimator(mlp_model_fn, {str(tmp_path)!r}, config)
        print(
            tf.config.threading.get_intra_op_parallelism_threads(),
            tf.config.threading.get_inter_op_parallelism_threads(),
            tf.config.get_soft_device_placement(),
            tf.debugging.get_log_device_placement(),
        )
        tf.debugging.set_log_device_placement(False)
        """
    )
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=root,
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "PYTHONPATH": root},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split() == ["1", "3", "True", "True"]


def test_settings_fixed_at_start_are_reported_not_silently_dropped(tmp_path, caplog):
    tf.constant(1.0).numpy()  # the runtime has started
    current = tf.config.threading.get_intra_op_parallelism_threads()
    proto = tf.compat.v1.ConfigProto(intra_op_parallelism_threads=current + 1)
    with caplog.at_level(logging.WARNING, logger="keras_estimator"):
        ke.Estimator(mlp_model_fn, str(tmp_path), ke.RunConfig(session_config=proto))
    assert tf.config.threading.get_intra_op_parallelism_threads() == current
    assert (
        f"session_config.intra_op_parallelism_threads={current + 1} cannot take effect"
        in caplog.text
    )


def test_settings_already_in_force_are_not_reported(tmp_path, caplog):
    current = tf.config.threading.get_intra_op_parallelism_threads()
    proto = tf.compat.v1.ConfigProto(
        intra_op_parallelism_threads=current,
        allow_soft_placement=tf.config.get_soft_device_placement(),
    )
    with caplog.at_level(logging.WARNING, logger="keras_estimator"):
        ke.Estimator(mlp_model_fn, str(tmp_path), ke.RunConfig(session_config=proto))
    assert "session_config" not in caplog.text


def test_soft_placement_is_turned_on_at_any_time(tmp_path):
    # ConfigProto is proto3: False is indistinguishable from unset, so only
    # allow_soft_placement=True says anything (TF2's default is True anyway).
    before = tf.config.get_soft_device_placement()
    tf.config.set_soft_device_placement(False)
    try:
        proto = tf.compat.v1.ConfigProto(allow_soft_placement=True)
        ke.Estimator(mlp_model_fn, str(tmp_path), ke.RunConfig(session_config=proto))
        assert tf.config.get_soft_device_placement() is True
    finally:
        tf.config.set_soft_device_placement(before)


def test_fields_without_a_tf2_equivalent_are_named_once(caplog, monkeypatch):
    monkeypatch.setattr(_session_config, "_reported", set())
    proto = tf.compat.v1.ConfigProto(operation_timeout_in_ms=5000)
    proto.gpu_options.per_process_gpu_memory_fraction = 0.5
    with caplog.at_level(logging.WARNING, logger="keras_estimator"):
        _session_config.apply_session_config(proto)
        _session_config.apply_session_config(proto)
    assert caplog.text.count("have no TensorFlow 2 equivalent") == 2  # two groups
    assert "gpu_options.per_process_gpu_memory_fraction" in caplog.text
    assert "operation_timeout_in_ms" in caplog.text
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="keras_estimator"):
        _session_config.apply_session_config(proto)
    assert caplog.text == ""


def test_an_estimator_without_a_session_config_shows_2_15s_default(tmp_path, caplog, monkeypatch):
    # 2.15's Estimator replaced a None session_config with its default; code
    # reading est.config.session_config.allow_soft_placement failed here.
    est = ke.Estimator(lambda features, labels, mode: None, model_dir=str(tmp_path / "a"))
    config = est.config.session_config
    assert config.allow_soft_placement
    assert (
        config.graph_options.rewrite_options.meta_optimizer_iterations
        == type(config.graph_options.rewrite_options).ONE
    )
    assert ke.RunConfig().session_config is None  # the RunConfig itself keeps None
    # Passed on to another Estimator, it changes nothing and reports nothing
    # (fields already reported in this process would not be again).
    monkeypatch.setattr(_session_config, "_reported", set())
    with caplog.at_level("WARNING", logger="keras_estimator"):
        ke.Estimator(lambda features, labels, mode: None, config=est.config)
    assert not [r for r in caplog.records if "session_config" in r.getMessage()]
