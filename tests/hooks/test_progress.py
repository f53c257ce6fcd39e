"""`Estimator.train(progress=...)`: a progress display that changes nothing else."""

import io
import re
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


class _Terminal(io.StringIO):
    def isatty(self):
        return True


# Keras' bold and colour codes.
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


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


_FINAL_LINE = re.compile(
    r"(\d+)/(\d+) - \d+s - \d+(?:s|ms|us)/step - loss: (\d+\.\d{4})"
)


def test_progress_off_a_terminal_prints_keras_final_line(tmp_path, capsys, caplog):
    """Not a terminal: Keras' verbose=2 line, with the target and the final step."""
    caplog.set_level("INFO", logger="keras_estimator")
    estimator = _estimator(tmp_path, log_step_count_steps=10)
    estimator.train(input_fn(X, Y), steps=30, progress=True)
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1, lines
    match = _FINAL_LINE.fullmatch(lines[0])
    assert match, lines[0]
    assert match.group(1, 2) == ("30", "30")
    # The loss shown is the final step's, the one train() logs.
    logged = re.search(r"Loss for final step: ([0-9.e-]+)\.", caplog.text)
    assert float(match.group(3)) == pytest.approx(float(logged.group(1)), abs=1e-4)
    # A resumed run counts its own steps, as fit counts an epoch's.
    estimator.train(input_fn(X, Y), max_steps=40, progress=True)
    (line,) = capsys.readouterr().out.splitlines()
    assert _FINAL_LINE.fullmatch(line).group(1, 2) == ("10", "10")


def test_progress_without_bound_ends_with_the_steps_run(tmp_path, capsys):
    estimator = _estimator(tmp_path)
    # 48 examples, batches of 16, no repeat: three steps, then input ends.
    estimator.train(input_fn(X, Y, repeat=False), progress=True)
    (line,) = capsys.readouterr().out.splitlines()
    assert _FINAL_LINE.fullmatch(line).group(1, 2) == ("3", "3")


def test_progress_in_a_terminal_redraws_in_place_with_eta(tmp_path, monkeypatch):
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stdout", terminal)
    estimator = _estimator(tmp_path, log_step_count_steps=10)
    # progress=None: on, since stdout is a terminal.
    estimator.train(input_fn(X, Y), steps=30)
    text = _ANSI.sub("", terminal.getvalue())
    frames = [frame.rstrip("\b \n") for frame in text.split("\r") if frame.strip("\b ")]
    assert len(frames) >= 2 and text.endswith("\n") and text.count("\n") == 1
    # Before the end, a frame has a bar out of the target and an ETA.
    first = re.fullmatch(
        r" ?(\d+)/30 ━{20} (\d+)s \d+(?:s|ms|us)/step - loss: \S+", frames[0]
    )
    assert first and int(first.group(1)) < 30, frames[0]
    assert re.fullmatch(
        r"30/30 ━{20} \d+s \d+(?:s|ms|us)/step - loss: \d\.\d{4}", frames[-1]
    )


def test_progress_reads_the_step_state_not_the_logs(capsys):
    """Callbacks' logs carry no global step: the bar reads the loop's state."""
    state = types.SimpleNamespace(value=100, last_loss=None)
    bar = progress_lib.ProgressBar(state, last_step=300, dynamic=False)
    bar.on_train_begin()
    for step, loss in ((150, 0.75), (300, 0.25)):
        state.value, state.last_loss = step, loss
        bar.on_train_batch_end(0, {"loss": 9.0})
    bar.on_train_end()
    (line,) = capsys.readouterr().out.splitlines()
    assert _FINAL_LINE.fullmatch(line).groups() == ("200", "200", "0.2500")
    assert bar.steps_until_needed(123) is None


def test_progress_with_no_step_run_prints_nothing(capsys):
    state = types.SimpleNamespace(value=5, last_loss=None)
    bar = progress_lib.ProgressBar(state, last_step=5, dynamic=False)
    bar.on_train_begin()
    bar.on_train_batch_end(0, {})
    bar.on_train_end()
    assert capsys.readouterr().out == ""


def test_progress_false_prints_nothing(tmp_path, capsys):
    estimator = _estimator(tmp_path, log_step_count_steps=10)
    estimator.train(input_fn(X, Y), steps=30, progress=False)
    assert "/30" not in capsys.readouterr().out


def test_progress_is_off_by_default_when_not_a_terminal(tmp_path, capsys):
    assert not sys.stdout.isatty()
    assert not progress_lib.interactive()
    estimator = _estimator(tmp_path, log_step_count_steps=10)
    estimator.train(input_fn(X, Y), steps=30)
    assert "/30" not in capsys.readouterr().out


def test_progress_is_on_by_default_in_a_terminal_or_notebook(monkeypatch):
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


def test_progress_without_bound_in_a_terminal_counts_up_to_unknown(capsys):
    state = types.SimpleNamespace(value=0, last_loss=None)
    bar = progress_lib.ProgressBar(state, last_step=None, dynamic=True)
    bar.on_train_begin()
    state.value, state.last_loss = 1, 0.5
    bar.on_train_batch_end(0, {})
    state.value = 3
    bar.on_train_end()
    frames = [
        frame.strip("\b \n")
        for frame in _ANSI.sub("", capsys.readouterr().out).split("\r")
        if frame.strip("\b ")
    ]
    assert frames[0].startswith("1/Unknown "), frames
    assert frames[-1].startswith("3/3 ━━━━━━━━━━━━━━━━━━━━ "), frames
