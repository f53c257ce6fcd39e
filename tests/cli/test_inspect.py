"""`keras-estimator inspect` on tf.estimator 2.15 model_dirs and on one trained here."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from keras_estimator._src.cli import inspect_dir
from keras_estimator._src.cli.main import main

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
IRIS = FIXTURES / "tf215_iris" / "model_dir"


def test_tf215_iris_model_dir(capsys):
    assert main(["inspect", str(IRIS)]) == 0
    out = capsys.readouterr().out
    assert "model.ckpt-60  (latest)" in out
    assert "variables of model.ckpt-60 (9), global_step 60:" in out
    assert "dense/kernel/Adagrad" in out and "[4, 16]" in out

    report = inspect_dir.inspect_model_dir(str(IRIS))
    assert [c["step"] for c in report["checkpoints"]] == [20, 40, 60]
    assert [c["latest"] for c in report["checkpoints"]] == [False, False, True]
    assert report["latest_checkpoint"] == "model.ckpt-60"
    assert report["global_step"] == 60
    expected = json.loads((FIXTURES / "tf215_iris" / "variables.json").read_text())
    names = {v["name"]: v for v in report["variables"]}
    assert names["global_step"] == {
        "name": "global_step",
        "shape": [],
        "dtype": "int64",
    }
    assert names["dense/kernel"]["shape"] == [4, 16]
    assert names["dense/kernel"]["dtype"] == "float32"
    assert set(names) >= {name for name in expected if not name.startswith("_")}
    assert report["evaluations"] == {} and report["exports"] == []
    assert report["problems"] == []


@pytest.mark.parametrize(
    "case", sorted(p.name for p in (FIXTURES / "tf215_premade").iterdir() if p.is_dir())
)
def test_tf215_premade_model_dirs(case):
    model_dir = FIXTURES / "tf215_premade" / case / "model_dir"
    report = inspect_dir.inspect_model_dir(str(model_dir))
    assert report["checkpoints"] and report["checkpoints"][-1]["latest"]
    assert report["global_step"] == report["checkpoints"][-1]["step"]
    assert report["variables"] and not report["problems"]


def test_state_file_with_absolute_paths_of_another_machine(tmp_path):
    model_dir = tmp_path / "copied"
    shutil.copytree(IRIS, model_dir)
    (model_dir / "checkpoint").write_text(
        'model_checkpoint_path: "/home/someone/run/model.ckpt-60"\n'
        'all_model_checkpoint_paths: "/home/someone/run/model.ckpt-40"\n'
        'all_model_checkpoint_paths: "/home/someone/run/model.ckpt-60"\n'
    )
    report = inspect_dir.inspect_model_dir(str(model_dir))
    assert report["latest_checkpoint"] == "model.ckpt-60"
    rows = {c["name"]: c for c in report["checkpoints"]}
    assert rows["model.ckpt-20"]["in_state_file"] is False
    assert rows["model.ckpt-60"]["in_state_file"] is True
    assert report["problems"] == []


@pytest.fixture(scope="module")
def trained_model_dir(tmp_path_factory):
    """A model_dir trained here: checkpoints, two evaluations, an export."""
    import tensorflow as tf

    import keras_estimator

    model_dir = str(tmp_path_factory.mktemp("trained") / "model_dir")
    x = np.random.RandomState(0).normal(size=(32, 2)).astype(np.float32)
    y = (x[:, :1] > 0).astype(np.int32)

    def input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).batch(8)

    column = tf.feature_column.numeric_column("x", shape=[2])
    estimator = keras_estimator.LinearClassifier(
        [column],
        model_dir=model_dir,
        config=keras_estimator.RunConfig(tf_random_seed=1),
    )
    estimator.train(input_fn, steps=3)
    estimator.evaluate(input_fn, steps=2)
    estimator.train(input_fn, steps=2)
    estimator.evaluate(input_fn, steps=2, name="holdout")
    serving = keras_estimator.export.build_parsing_serving_input_receiver_fn(
        tf.feature_column.make_parse_example_spec([column])
    )
    estimator.export_saved_model(os.path.join(model_dir, "export", "latest"), serving)
    return model_dir


def test_model_dir_trained_here(trained_model_dir, capsys):
    report = inspect_dir.inspect_model_dir(trained_model_dir)
    assert report["global_step"] == 5
    assert (
        report["checkpoints"][-1]["step"] == 5 and report["checkpoints"][-1]["latest"]
    )
    assert {v["name"] for v in report["variables"]} >= {
        "global_step",
        "linear/linear_model/x/weights",
        "linear/linear_model/bias_weights",
    }
    evaluations = report["evaluations"]
    assert set(evaluations) == {"eval", "eval_holdout"}
    assert list(evaluations["eval"]) == [3]
    assert list(evaluations["eval_holdout"]) == [5]
    assert {"accuracy", "loss"} <= set(evaluations["eval"][3])
    assert 0 <= evaluations["eval"][3]["accuracy"] <= 1
    (export,) = report["exports"]
    assert export["path"].startswith(os.path.join("export", "latest", ""))
    signatures = export["signatures"]
    assert {"serving_default", "classification", "predict"} <= set(signatures)
    assert signatures["serving_default"]["method_name"] == "tensorflow/serving/classify"
    assert signatures["predict"]["inputs"] == ["examples"]
    assert "probabilities" in signatures["predict"]["outputs"]

    assert main(["inspect", "--json", trained_model_dir]) == 0
    as_json = json.loads(capsys.readouterr().out)
    assert as_json["evaluations"]["eval"]["3"]["accuracy"] == pytest.approx(
        evaluations["eval"][3]["accuracy"]
    )
    assert as_json["exports"] == report["exports"]

    assert main(["inspect", trained_model_dir]) == 0
    out = capsys.readouterr().out
    assert "eval_holdout/ (1 evaluations)" in out
    assert "serving_default: tensorflow/serving/classify" in out


def test_eval_dir_only_is_a_model_dir(trained_model_dir, tmp_path):
    only_eval = tmp_path / "only_eval"
    shutil.copytree(os.path.join(trained_model_dir, "eval"), only_eval / "eval")
    report = inspect_dir.inspect_model_dir(str(only_eval))
    assert report["checkpoints"] == [] and list(report["evaluations"]["eval"]) == [3]


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda tmp: tmp / "missing", "no such directory"),
        (lambda tmp: tmp, "is not a model_dir: no checkpoint state file"),
        (
            lambda tmp: (tmp / "file.txt", (tmp / "file.txt").write_text("x"))[0],
            "not a directory",
        ),
    ],
)
def test_not_a_model_dir(tmp_path, capsys, make, message):
    path = make(tmp_path)
    assert main(["inspect", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith("keras-estimator inspect: error: ") and message in err


def test_missing_latest_checkpoint_is_a_problem_not_an_error(tmp_path, capsys):
    model_dir = tmp_path / "damaged"
    shutil.copytree(IRIS, model_dir)
    for path in model_dir.glob("model.ckpt-60.*"):
        path.unlink()
    report = inspect_dir.inspect_model_dir(str(model_dir))
    assert report["latest_checkpoint"] == "model.ckpt-40"
    assert report["global_step"] == 40
    rows = {c["name"]: c for c in report["checkpoints"]}
    assert rows["model.ckpt-60"]["present"] is False
    assert any("model.ckpt-60" in problem for problem in report["problems"])
    assert main(["inspect", str(model_dir)]) == 0
    assert "problems:" in capsys.readouterr().out
