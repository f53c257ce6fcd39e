"""A process that leaves a predict() generator unfinished still exits.

Left open at exit, the generator used to be closed during interpreter
finalization, where its `finally` started the input release thread: on
Python 3.11 `Thread.start()` then waits forever for a thread that cannot run.
The subprocesses below hold the generator in a global, as a script does with
`gen = est.predict(input_fn); next(gen)`.
"""

import os
import subprocess
import sys
import textwrap
import time

import keras_estimator as ke
from tests._models import input_fn, make_data, mlp_model_fn

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TIMEOUT_SECS = 120

_SETUP = """
import itertools, sys, tempfile
sys.path.insert(0, {root!r})
import keras_estimator as ke
from tests._models import input_fn, make_data, mlp_model_fn
x, y = make_data(64)
est = ke.Estimator(mlp_model_fn, model_dir={model_dir!r}, params={{"hidden": [8]}})
est.train(input_fn(x, y), steps=3)
"""


def _run_script(tmp_path, body, setup=_SETUP):
    script = tmp_path / "script.py"
    script.write_text(
        setup.format(root=ROOT, model_dir=str(tmp_path / "model"))
        + textwrap.dedent(body)
        + "\nprint('END', flush=True)\n"
    )
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    try:
        result = subprocess.run(
            [sys.executable, str(script)],
            capture_output=True,
            text=True,
            timeout=TIMEOUT_SECS,
            env=env,
            cwd=str(tmp_path),
        )
    except subprocess.TimeoutExpired as error:
        out = error.stdout or b""
        if isinstance(out, bytes):
            out = out.decode(errors="replace")
        raise AssertionError(
            f"the process did not exit within {TIMEOUT_SECS} s; stdout: {out!r}"
        ) from None
    assert result.returncode == 0, result.stderr[-3000:]
    assert "END" in result.stdout
    return result.stdout


def test_exits_after_next_on_an_unfinished_predict(tmp_path):
    out = _run_script(
        tmp_path,
        """
        gen = est.predict(input_fn(x, y, repeat=False))
        print(sorted(next(gen)))
        """,
    )
    assert "['classes', 'logits']" in out


def test_exits_after_an_exception_while_iterating_predict(tmp_path):
    out = _run_script(
        tmp_path,
        """
        gen = est.predict(input_fn(x, y, repeat=False))
        try:
            for prediction in gen:
                raise RuntimeError("consumer failed")
        except RuntimeError as error:
            print("caught", error)
        """,
    )
    assert "caught consumer failed" in out


def test_exits_after_islice_of_an_endless_predict(tmp_path):
    out = _run_script(
        tmp_path,
        """
        gen = est.predict(input_fn(x, y, repeat=True))
        print("got", len(list(itertools.islice(gen, 3))))
        """,
    )
    assert "got 3" in out


def test_exits_with_several_open_predicts_and_batches(tmp_path):
    out = _run_script(
        tmp_path,
        """
        first = est.predict(input_fn(x, y, repeat=True))
        second = est.predict(input_fn(x, y), yield_single_examples=False)
        print("got", len(list(itertools.islice(first, 40))), len(next(second)))
        never_started = est.predict(input_fn(x, y))
        """,
    )
    assert "got 40 2" in out


def test_close_after_one_prediction_is_prompt_and_predict_works_after(tmp_path):
    x, y = make_data(64)
    est = ke.Estimator(mlp_model_fn, model_dir=str(tmp_path), params={"hidden": [8]})
    est.train(input_fn(x, y), steps=3)
    expected = list(est.predict(input_fn(x, y, repeat=False)))
    gen = est.predict(input_fn(x, y, repeat=True))
    first = next(gen)
    start = time.monotonic()
    gen.close()
    assert time.monotonic() - start < 5
    again = list(est.predict(input_fn(x, y, repeat=False)))
    assert len(again) == len(expected) == 64
    assert first["classes"] == expected[0]["classes"]
    for a, b in zip(again, expected, strict=True):
        assert a["classes"] == b["classes"]


def test_a_release_during_interpreter_finalization_frees_in_the_caller(tmp_path):
    """Whatever is released after the exit handler (here: by an object freed
    with the main module) is freed at once, not handed to a thread."""
    setup = """
import sys
sys.path.insert(0, {root!r})
from keras_estimator._src.engine import input_release
"""
    _run_script(
        tmp_path,
        """
        class Freed:
            def __del__(self):
                print("freed", flush=True)

        class ReleasesAtTeardown:
            def __del__(self):
                input_release.release([Freed()])
                print("released", flush=True)

        input_release.release([object()])
        assert input_release.wait_until_released(30)
        holder = ReleasesAtTeardown()
        """,
        setup=setup,
    )
