"""`Estimator.train(progress=...)`: a progress display that changes nothing else."""

import io
import sys
import tempfile
import types

import keras
import numpy as np
import pytest
import tensorflow as tf
from hypothesis import given
from hypothesis import strategies as st

import keras_estimator as ke
from keras_estimator._src.hooks import progress as progress_lib
from tests._models import input_fn, make_data, mlp_model_fn

X, Y = make_data(num_examples=48)


class _Boundaries(keras.callbacks.Callback):
    """Records the global step at every run boundary, without bounding fusion."""

    def __init__(self):
        super().__init__()
        self.steps = []

    def steps_until_needed(self, global_step):
        return None

    def on_train_batch_end(self, batch, logs=None):
        self.steps.append(int(tf.compat.v1.train.get_global_step().numpy()))


def _estimator(model_dir, **config):
    return ke.Estimator(
        mlp_model_fn,
        model_dir=str(model_dir),
        params={"hidden": [5]},
        config=ke.RunConfig(tf_random_seed=7, **config),
    )


def _checkpoint_values(estimator):
    return {
        name: estimator.get_variable_value(name)
        for name in estimator.get_variable_names()
    }


def test_progress_shows_step_loss_rate_and_eta(tmp_path, capsys, monkeypatch):
    # Not a terminal: a line per update (every update, with no interval).
    monkeypatch.setattr(progress_lib, "STATIC_INTERVAL", 0.0)
    estimator = _estimator(tmp_path, log_step_count_steps=10)
    boundaries = _Boundaries()
    estimator.train(input_fn(X, Y), steps=30, callbacks=[boundaries], progress=True)
    lines = capsys.readouterr().out.splitlines()
    # One line per run (the logged steps and the fused runs between them),
    # then the final line.
    shown = [int(line.split()[1].split("/")[0]) for line in lines]
    assert shown == [*boundaries.steps, 30]
    assert len(shown) > 4 and shown[0] == 1
    assert all(line.split()[1].endswith("/30") for line in lines)
    assert all("loss: " in line for line in lines)
    # The first run's time includes tracing: no rate yet.
    assert "steps/s" not in lines[0] and "ETA" not in lines[0]
    for line in lines[1:-1]:
        assert " steps/s - ETA: " in line, line
    assert lines[-2].endswith("ETA: 0s")
    assert lines[-1].startswith("step 30/30 " + "━" * 20 + " - loss: ")
    assert "steps/s" in lines[-1] and lines[-1].endswith(" total")
    assert "ETA" not in lines[-1]


def test_progress_without_bound_has_no_eta(tmp_path, capsys):
    estimator = _estimator(tmp_path)
    # 48 examples, batches of 16, no repeat: three steps, then input ends.
    estimator.train(input_fn(X, Y, repeat=False), progress=True)
    lines = capsys.readouterr().out.splitlines()
    assert lines[-1].startswith("step 3 - loss: ")
    assert not any("ETA" in line or "━" in line for line in lines)


def test_progress_false_prints_nothing(tmp_path, capsys):
    estimator = _estimator(tmp_path, log_step_count_steps=10)
    estimator.train(input_fn(X, Y), steps=30, progress=False)
    out = capsys.readouterr().out
    assert "steps/s" not in out and "step " not in out


def test_progress_is_off_by_default_when_not_a_terminal(tmp_path, capsys):
    assert not sys.stdout.isatty()
    assert not progress_lib.interactive()
    estimator = _estimator(tmp_path, log_step_count_steps=10)
    estimator.train(input_fn(X, Y), steps=30)
    assert "steps/s" not in capsys.readouterr().out


def test_progress_is_on_by_default_in_a_terminal_or_notebook(monkeypatch):
    class _Terminal(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.setattr(sys, "stdout", _Terminal())
    assert progress_lib.check_progress(None) is True
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    assert progress_lib.check_progress(None) is False
    shell = types.SimpleNamespace(kernel=object())
    fake = types.ModuleType("IPython")
    fake.get_ipython = lambda: shell
    monkeypatch.setitem(sys.modules, "IPython", fake)
    assert progress_lib.check_progress(None) is True
    # A terminal IPython (no kernel) is not a notebook.
    monkeypatch.setattr(fake, "get_ipython", lambda: types.SimpleNamespace())
    assert progress_lib.check_progress(None) is False


@pytest.mark.parametrize("value", ["yes", 1, 0.0, [True]])
def test_bad_progress_value_is_refused(tmp_path, value):
    estimator = _estimator(tmp_path)
    with pytest.raises(TypeError, match=r"progress must be True, False or None"):
        estimator.train(input_fn(X, Y), steps=2, progress=value)


def test_dynamic_display_redraws_one_line(monkeypatch):
    clock = iter(np.arange(0.0, 100.0, 1.0))
    monkeypatch.setattr(progress_lib, "_clock", lambda: float(next(clock)))
    stream = io.StringIO()
    bar = progress_lib.ProgressBar(
        start=100, last_step=300, stream=stream, dynamic=True
    )
    bar.on_train_begin()
    for step in (150, 200, 250, 300):
        bar.on_train_batch_end(0, {"global_step": step, "loss": 0.5})
    bar.on_train_end()
    text = stream.getvalue()
    assert text.startswith("\rstep 150/300 ")
    assert text.count("\r") == 5 and text.count("\n") == 1 and text.endswith("\n")
    # 50 steps per second once the first run is done: 100 steps left, 2s.
    assert "50.0 steps/s - ETA: 2s" in text
    assert bar.steps_until_needed(123) is None


def test_durations_and_numbers():
    assert progress_lib._duration(7.4) == "7s"
    assert progress_lib._duration(125) == "2:05"
    assert progress_lib._duration(3725) == "1:02:05"
    assert progress_lib._number(0.25) == "0.2500"
    assert progress_lib._number(1e-6) == "1.0000e-06"


@given(
    steps=st.integers(1, 25),
    steps_per_loop=st.sampled_from([None, 1, 4]),
    log_every=st.sampled_from([3, 10]),
)
def test_progress_changes_no_weight_step_or_fusion(steps, steps_per_loop, log_every):
    """Trained weights, global step and run boundaries are the same bit for bit."""
    results = []
    for show in (False, True):
        boundaries = _Boundaries()
        with tempfile.TemporaryDirectory() as model_dir:
            estimator = _estimator(
                model_dir, steps_per_loop=steps_per_loop, log_step_count_steps=log_every
            )
            estimator.train(
                input_fn(X, Y), steps=steps, callbacks=[boundaries], progress=show
            )
            values = _checkpoint_values(estimator)
        results.append((values, boundaries.steps))
    (plain, plain_runs), (shown, shown_runs) = results
    assert plain_runs == shown_runs
    assert int(shown["global_step"]) == steps == int(plain["global_step"])
    assert sorted(plain) == sorted(shown)
    for name in plain:
        np.testing.assert_array_equal(plain[name], shown[name], err_msg=name)
        assert plain[name].tobytes() == shown[name].tobytes(), name
