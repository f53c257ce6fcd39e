"""Every example in examples/ runs as a script with few steps and prints what it should.

Each test runs `python examples/<name>.py --steps N --model-dir <tmp>` in a
fresh process (as a user would), with a timeout, and checks the exit status
and the lines that show the example did its job.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


def run_example(name: str, *args: str, timeout: float = 120) -> str:
    """Runs examples/<name>.py with args; returns its stdout, failing on rc != 0."""
    env = {k: v for k, v in os.environ.items() if k != "TF_CONFIG"}
    env.update(TF_CPP_MIN_LOG_LEVEL="2", KERAS_BACKEND="tensorflow")
    result = subprocess.run(
        [sys.executable, str(EXAMPLES / f"{name}.py"), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=str(ROOT),
        env=env,
    )
    assert result.returncode == 0, (
        f"{name} exited with {result.returncode}\n"
        f"stdout:\n{result.stdout[-3000:]}\nstderr:\n{result.stderr[-5000:]}"
    )
    return result.stdout


def test_premade_dnn_classifier(tmp_path):
    out = run_example(
        "premade_dnn_classifier", "--steps", "200", "--model-dir", str(tmp_path)
    )
    assert "trained 200 steps" in out
    accuracy = float(re.search(r"Test set accuracy: ([\d.]+)", out).group(1))
    assert accuracy >= 0.8, out
    assert len(re.findall(r'Prediction is "\w+" \([\d.]+%\), expected', out)) == 3
    assert (tmp_path / "model.ckpt-200.index").exists()


def test_custom_model_fn_resumes_from_its_checkpoint(tmp_path):
    out = run_example("custom_model_fn", "--steps", "40", "--model-dir", str(tmp_path))
    assert "first train() stopped at global step 20" in out
    assert "resumed from global step 20" in out
    assert "second train() stopped at global step 40" in out
    # save_checkpoints_steps=4, keep_checkpoint_max=3.
    assert "['model.ckpt-32', 'model.ckpt-36', 'model.ckpt-40']" in out
    assert re.search(r"Test set accuracy: [\d.]+ \(loss [\d.]+, global step 40\)", out)


def test_layers_cnn_logs_the_softmax_tensor(tmp_path):
    out = run_example(
        "layers_cnn", "--steps", "60", "--log-every", "20", "--model-dir", str(tmp_path)
    )
    # LoggingTensorHook at steps 0, 20, 40: ten probabilities each.
    logged = re.findall(r"probabilities \(first example\): \[([^\]]*)\]", out)
    assert len(logged) == 3, out
    assert all(len(line.split()) == 10 for line in logged)
    accuracy = float(re.search(r"Test set accuracy: ([\d.]+) on 297 digits", out)[1])
    assert accuracy > 0.3, out  # chance is 0.1; 60 steps reach ~0.8
    assert re.search(r"predicted: \[(\d, ){9}\d\]", out)


def test_train_and_evaluate_best_exporter_serves_in_a_fresh_process(tmp_path):
    out = run_example(
        "train_and_evaluate_best_exporter",
        "--steps", "30", "--save-every", "10", "--model-dir", str(tmp_path),
    )  # fmt: skip
    assert re.search(r"final evaluation: .* global step 30", out), out
    assert re.search(r"BestExporter kept [12] export\(s\)", out)
    assert "served probabilities shape: (5, 3)" in out
    served = re.search(r"served class_ids: (\[[\d, ]+\])", out)[1]
    predicted = re.search(r"Estimator.predict class_ids: (\[[\d, ]+\])", out)[1]
    assert served == predicted
    assert list((tmp_path / "export" / "best").glob("*/saved_model.pb"))


def test_keras_model_round_trip_agrees(tmp_path):
    out = run_example(
        "keras_model_round_trip", "--steps", "40", "--model-dir", str(tmp_path)
    )
    assert re.search(r"Estimator.evaluate: .* global step 40", out), out
    assert "predictions: Keras (30, 3), Estimator (30, 3)" in out
    assert "Keras and Estimator predictions agree: True" in out
    assert "original Keras model left untrained: True" in out
    assert "reloaded predictions equal: True" in out
    estimator_loss = re.search(r"Estimator.evaluate: .* loss ([\d.]+)", out)[1]
    keras_loss = re.search(r"Keras model.evaluate: .* loss ([\d.]+)", out)[1]
    assert estimator_loss == keras_loss


def test_model_fn_in_keras_fit_matches_estimator_train(tmp_path):
    out = run_example(
        "model_fn_in_keras_fit", "--steps", "20", "--model-dir", str(tmp_path)
    )
    assert "steps trained: Estimator.train 20, Model.fit 20" in out
    assert re.search(r"step +19 loss: Estimator.train ([\d.]+)  Model.fit \1\b", out)
    assert "Estimator.train and Model.fit losses equal: True" in out
    assert (tmp_path / "estimator" / "model.ckpt-20.index").exists()
    assert (tmp_path / "keras" / "model.ckpt-20.index").exists()


def test_model_fn_in_keras_fit_with_hook_callback(tmp_path):
    out = run_example(
        "model_fn_in_keras_fit", "--steps", "10", "--hook-callback",
        "--model-dir", str(tmp_path),
    )  # fmt: skip
    assert "HookCallback's hook recorded 10 losses" in out
    assert "Estimator.train and Model.fit losses equal: True" in out


def test_local_cluster_chief_worker_and_evaluator(tmp_path):
    out = run_example(
        "local_cluster", "--steps", "20", "--timeout", "150",
        "--model-dir", str(tmp_path), timeout=200,
    )  # fmt: skip
    assert re.search(r'"chief": \["127\.0\.0\.1:\d+"\], "worker": \["127\.0\.0\.1:\d+"\]', out)
    for task in ("chief_0", "worker_0", "evaluator_0"):
        assert re.search(rf"{task}: exit status 0; result: .*\"global_step\": 20", out), out
    assert '"evaluated_step": 20' in out
    assert "3 of 3 tasks succeeded" in out
    assert (tmp_path / "model.ckpt-20.index").exists()
    assert list((tmp_path / "export" / "latest").glob("*/saved_model.pb"))
