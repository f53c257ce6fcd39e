"""TPUStrategy with `steps_per_loop`, on a real TPU only.

The TPU case runs where a TPU is attached: on a Cloud TPU VM (found by its
`/dev/accel*` or `/dev/vfio/<n>` devices), or on a TPU node named by the
`KERAS_ESTIMATOR_TPU` environment variable. Elsewhere it is skipped, and only
the error for a missing TPU is checked.
"""

import glob
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as ke
from tests._models import make_data, mlp_model_fn


def _attached_tpu():
    named = os.environ.get("KERAS_ESTIMATOR_TPU")
    if named:
        return named
    if glob.glob("/dev/accel[0-9]*") or glob.glob("/dev/vfio/[0-9]*"):
        return "local"
    return None


TPU = _attached_tpu()
needs_tpu = pytest.mark.skipif(
    TPU is None,
    reason="no TPU attached (set KERAS_ESTIMATOR_TPU to a TPU node's name to use one)",
)


def test_tpu_must_be_a_name_or_a_resolver():
    with pytest.raises(TypeError, match=r"tpu must be a TPU name.*got 5 of type int"):
        ke.experimental.tpu_strategy(5)


@pytest.mark.skipif(TPU is not None, reason="a TPU is attached here")
def test_no_tpu_gives_a_clear_error():
    # A process of its own: connecting to a cluster resets TensorFlow's
    # runtime, which would disturb the other tests' state.
    script = textwrap.dedent(
        """
        import keras_estimator as ke
        try:
            ke.experimental.tpu_strategy("local")
        except ValueError as error:
            print("ERROR:", error)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "ERROR: No TPU found for tpu='local'" in done.stdout
    assert "tensorflow-tpu" in done.stdout


class GlobalSteps(ke.SessionRunHook):
    def __init__(self):
        self.steps = []

    def before_run(self, run_context):
        return ke.SessionRunArgs({"step": "global_step"})

    def after_run(self, run_context, run_values):
        self.steps.append(int(run_values.results["step"]))


@needs_tpu
def test_train_evaluate_predict_export_on_tpu(tmp_path):
    strategy = ke.experimental.tpu_strategy(TPU)
    x, y = make_data(num_examples=512)

    def input_fn(input_context=None):
        batch = input_context.get_per_replica_batch_size(64) if input_context else 64
        data = tf.data.Dataset.from_tensor_slices(({"x": x}, y)).repeat()
        return data.batch(batch, drop_remainder=True)

    def eval_input_fn(input_context=None):
        batch = input_context.get_per_replica_batch_size(64) if input_context else 64
        data = tf.data.Dataset.from_tensor_slices(({"x": x}, y))
        return data.batch(batch, drop_remainder=True)

    config = ke.RunConfig(
        train_distribute=strategy, steps_per_loop=25, tf_random_seed=0
    )
    est = ke.Estimator(
        mlp_model_fn, str(tmp_path), config, {"hidden": [32], "learning_rate": 0.02}
    )
    hook = GlobalSteps()
    est.train(input_fn, steps=100, hooks=[hook])
    assert hook.steps == [24, 49, 74, 99]  # the steps the loops' last steps ran at
    results = est.evaluate(eval_input_fn)
    assert results["global_step"] == 100
    assert results["accuracy"] >= 0.9, results

    def predict_input_fn():
        return tf.data.Dataset.from_tensor_slices({"x": x[:16]}).batch(8)

    predictions = list(est.predict(predict_input_fn))
    assert len(predictions) == 16
    classes = np.array([p["classes"] for p in predictions])
    assert np.mean(classes == y[:16]) >= 0.75

    def serving_input_fn():
        features = {"x": tf.compat.v1.placeholder(tf.float32, [None, 4], name="x")}
        return ke.export.ServingInputReceiver(features, features)

    export_dir = est.export_saved_model(str(tmp_path / "export"), serving_input_fn)
    served = tf.saved_model.load(export_dir).signatures["serving_default"]
    logits = served(x=tf.constant(x[:16]))["logits"].numpy()
    np.testing.assert_allclose(
        logits, np.array([p["logits"] for p in predictions]), rtol=1e-2, atol=1e-2
    )
