"""The default loss summary: the TF1 event tf.estimator 2.15 wrote, without TensorBoard's import.

tf.estimator 2.15 wrote its loss summary with TF1 ops (`simple_value`, which
readers of its event files take); `tf.summary.scalar` is TensorBoard's code,
imported on its first call (50-70 ms of the first `train()` of a process).
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


def test_the_loss_event_is_what_tf1_summary_scalar_writes(tmp_path):
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

    _, value = written[0]
    assert value.WhichOneof("value") == "simple_value"
    assert value.simple_value > 0
    # What 2.15's `tf.compat.v1.summary.scalar('loss', loss)` op made in its graph.
    with tf.Graph().as_default():
        op = tf.compat.v1.summary.scalar("loss", tf.constant(value.simple_value))
        with tf.compat.v1.Session() as session:
            (expected,) = tf.compat.v1.Summary.FromString(session.run(op)).value
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
