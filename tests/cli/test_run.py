"""`keras-estimator run`: zero-change mode, argv, __main__, sys.path, exit status."""

from __future__ import annotations

import json
import sys
import textwrap

import pytest

from keras_estimator._src.cli.main import main

PROGRAM = textwrap.dedent(
    """
    import json, sys
    import tensorflow as tf
    from tensorflow.estimator import RunConfig
    import helper  # beside the script: the script's folder leads sys.path

    print("RESULT " + json.dumps({
        "argv": sys.argv,
        "name": __name__,
        "estimator": tf.estimator.Estimator.__module__,
        "v1_inputs": tf.compat.v1.estimator.inputs.numpy_input_fn.__module__,
        "run_config": RunConfig.__module__,
        "helper": helper.VALUE,
    }))
    if len(sys.argv) > 1 and sys.argv[1] == "exit":
        sys.exit(int(sys.argv[2]))
    if len(sys.argv) > 1 and sys.argv[1] == "message":
        sys.exit("stopped: " + sys.argv[2])
    if len(sys.argv) > 1 and sys.argv[1] == "raise":
        raise RuntimeError("the program failed")
    """
)


@pytest.fixture
def program(tmp_path):
    (tmp_path / "helper.py").write_text("VALUE = 42\n")
    script = tmp_path / "program.py"
    script.write_text(PROGRAM)
    return script


def _result(out):
    lines = [line for line in out.splitlines() if line.startswith("RESULT ")]
    assert len(lines) == 1, out
    return json.loads(lines[0][len("RESULT ") :])


def test_runs_the_program_under_install(program, capsys):
    import tensorflow as tf

    argv, path = sys.argv[:], sys.path[:]
    before = getattr(tf, "estimator", None)
    assert main(["run", str(program), "--flag", "-m", "x", "--help"]) == 0
    result = _result(capsys.readouterr().out)
    assert result["argv"] == [str(program), "--flag", "-m", "x", "--help"]
    assert result["name"] == "__main__"
    assert result["estimator"].startswith("keras_estimator.")
    assert result["v1_inputs"].startswith("keras_estimator.")
    assert result["run_config"].startswith("keras_estimator.")
    assert result["helper"] == 42
    # Restored afterwards: argv, sys.path, and tf.estimator's patches.
    assert sys.argv == argv and sys.path == path
    assert getattr(tf, "estimator", None) is before


@pytest.mark.parametrize(
    ("args", "status", "stderr"),
    [
        (["exit", "3"], 3, ""),
        (["exit", "0"], 0, ""),
        (["message", "bye"], 1, "stopped: bye"),
        (["raise"], 1, "RuntimeError: the program failed"),
    ],
)
def test_exit_status_is_the_programs(program, capsys, args, status, stderr):
    assert main(["run", str(program), *args]) == status
    captured = capsys.readouterr()
    assert _result(captured.out)["argv"][1:] == args
    assert stderr in captured.err
    if args == ["raise"]:
        # The program's traceback, from its own frame on.
        assert "Traceback" in captured.err and str(program) in captured.err
        assert "runpy" not in captured.err and "cli/run.py" not in captured.err


def test_run_module(tmp_path, monkeypatch, capsys):
    package = tmp_path / "mypkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "helper.py").write_text("VALUE = 7\n")
    (package / "train.py").write_text(
        PROGRAM.replace("import helper", "from mypkg import helper")
    )
    monkeypatch.chdir(tmp_path)
    assert main(["run", "-m", "mypkg.train", "exit", "5"]) == 5
    result = _result(capsys.readouterr().out)
    assert result["argv"] == [str(package / "train.py"), "exit", "5"]
    assert result["name"] == "__main__"
    assert result["estimator"].startswith("keras_estimator.")
    assert result["helper"] == 7


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["run", "no/such/script.py"],
            "keras-estimator run: error: no such file: no/such/script.py",
        ),
        (
            ["run", "-m", "no_such_module_here"],
            "keras-estimator run: error: no module named no_such_module_here",
        ),
        (["run"], "keras-estimator run: error: run needs a SCRIPT.py or -m MODULE"),
        (["run", "-m"], "argument -m: expected one argument"),
    ],
)
def test_usage_errors_are_one_line(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err
    assert "Traceback" not in err
