"""The default loss summary: tf.summary.scalar's event, without TensorBoard's import.

tf.estimator 2.15 wrote its loss summary with TF1 ops; `tf.summary.scalar` is
TensorBoard's code, imported on its first call (50-70 ms of the first
`train()` of a process). The loss is written as that function writes it, by hand.
"""

from __future__ import annotations

import glob
import os
import subprocess
import sys
import textwrap

import tensorflow as tf

import keras_estimator as ke
from tests._models import input_fn, make_data, mlp_model_fn


def _loss_values(event_dir):
    values = []
    for path in sorted(glob.glob(os.path.join(event_dir, "events.out.tfevents.*"))):
        for event in tf.compat.v1.train.summary_iterator(path):
            values += [(event.step, v) for v in event.summary.value if v.tag == "loss"]
    return values


def test_the_loss_event_is_what_tf_summary_scalar_writes(tmp_path):
    x, y = make_data()
    estimator = ke.Estimator(
        mlp_model_fn,
        model_dir=str(tmp_path / "model"),
        params={"hidden": [4]},
        config=ke.RunConfig(save_summary_steps=2),
    )
    estimator.train(input_fn(x, y), steps=3)
    written = _loss_values(tmp_path / "model")
    assert [step for step, _ in written] == [1, 3]

    step, value = written[0]
    loss = tf.make_ndarray(value.tensor)
    writer = tf.summary.create_file_writer(str(tmp_path / "scalar"))
    with writer.as_default():
        tf.summary.scalar("loss", loss, step=step)
    writer.close()
    [(_, expected)] = _loss_values(tmp_path / "scalar")
    assert value.SerializeToString() == expected.SerializeToString()


def test_training_imports_no_tensorboard(tmp_path):
    program = textwrap.dedent(
        f"""
        import sys
        import keras_estimator as ke
        from tests._models import input_fn, make_data, mlp_model_fn

        x, y = make_data()
        estimator = ke.Estimator(mlp_model_fn, model_dir={str(tmp_path)!r}, params={{}})
        estimator.train(input_fn(x, y), steps=2)
        estimator.evaluate(input_fn(x, y, repeat=False))
        print(sorted(m for m in sys.modules if m.split(".")[0] == "tensorboard"))
        """
    )
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    path = os.pathsep.join(filter(None, [os.environ.get("PYTHONPATH"), root]))
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONPATH=path)
    done = subprocess.run(
        [sys.executable, "-c", program],
        capture_output=True,
        text=True,
        env=env,
        cwd=root,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().splitlines()[-1] == "[]"
