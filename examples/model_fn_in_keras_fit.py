"""One model_fn trained by Estimator.train and by Keras Model.fit.

Run: python examples/model_fn_in_keras_fit.py [--steps N] [--model-dir DIR]
     [--hook-callback]

`keras_estimator.model_fn_to_keras` wraps a tf.estimator model_fn as a
`keras.Model` that reads and writes an Estimator model_dir, so a program can
move from `Estimator.train` to `Model.fit` one call at a time. The same
model_fn, initial weights and data are trained both ways, in two model_dirs:
the Estimator run records each step's loss with a SessionRunHook, the Keras
run with a Keras callback (both see every step), and the two runs' losses
and evaluations are printed side by side. They are equal.

`--hook-callback` also passes the SessionRunHook to `fit` through
`keras_estimator.HookCallback`, which sees every step as it does in
`Estimator.train`.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from importlib import resources

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

import keras_estimator  # noqa: E402
from keras_estimator.compat import layers  # noqa: E402


def load_iris() -> tuple[np.ndarray, np.ndarray]:
    text = resources.files("keras_estimator").joinpath("data/iris.csv").read_text()
    rows = np.loadtxt(text.splitlines()[1:], delimiter=",", dtype="float32")
    return rows[:, :4], rows[:, 4].astype("int32")


def model_fn(features, labels, mode, params):
    # Seeded initializers: both runs start from the same weights.
    hidden = layers.dense(features["x"], 16, activation=tf.nn.relu,
                          kernel_initializer=keras.initializers.GlorotUniform(seed=1))
    logits = layers.dense(hidden, 3,
                          kernel_initializer=keras.initializers.GlorotUniform(seed=2))
    class_ids = tf.argmax(logits, axis=1)
    if mode == keras_estimator.ModeKeys.PREDICT:
        return keras_estimator.EstimatorSpec(mode, predictions={"class_ids": class_ids})
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
    loss = tf.identity(loss, name="step_loss")  # named, so a hook can fetch it
    if mode == keras_estimator.ModeKeys.EVAL:
        accuracy = tf.compat.v1.metrics.accuracy(labels, class_ids)
        return keras_estimator.EstimatorSpec(
            mode, loss=loss, eval_metric_ops={"accuracy": accuracy}
        )
    train_op = tf.compat.v1.train.AdagradOptimizer(params["learning_rate"]).minimize(
        loss, global_step=tf.compat.v1.train.get_global_step()
    )
    return keras_estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


class RecordLoss(keras_estimator.SessionRunHook):
    """Fetches the named loss tensor every step and keeps its values."""

    def __init__(self):
        self.losses: list[float] = []

    def before_run(self, run_context):
        return keras_estimator.SessionRunArgs("step_loss")

    def after_run(self, run_context, run_values):
        self.losses.append(float(run_values.results))


class KerasLossRecorder(keras.callbacks.Callback):
    """A Keras callback keeping the loss in each training batch's logs.

    A callback that overrides `on_train_batch_end` sees every step. (One that
    does not, such as `keras.callbacks.LambdaCallback`, is called only where
    the loop ends a run of fused steps; see docs/hooks.md#step-fusion.)
    """

    def __init__(self):
        super().__init__()
        self.losses: list[float] = []

    def on_train_batch_end(self, batch, logs=None):
        self.losses.append(float(logs["loss"]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300, help="training steps")
    parser.add_argument("--model-dir", default=None,
                        help="parent of the two model_dirs (default: a new temp dir)")
    parser.add_argument("--hook-callback", action="store_true",
                        help="also record the losses with a SessionRunHook in "
                        "HookCallback")
    args = parser.parse_args(argv)
    base_dir = args.model_dir or tempfile.mkdtemp(prefix="model_fn_in_fit_")
    params = {"learning_rate": 0.1}
    config = keras_estimator.RunConfig(tf_random_seed=42)

    x, y = load_iris()
    order = np.random.default_rng(0).permutation(len(y))
    train, test = order[:120], order[120:]

    def train_dataset():
        # Already in random order (`train` is a permutation); no shuffle(), whose
        # order would depend on the graph seed the dataset is made under.
        data = tf.data.Dataset.from_tensor_slices(({"x": x[train]}, y[train]))
        return data.repeat().batch(32)

    def eval_dataset():
        return tf.data.Dataset.from_tensor_slices(({"x": x[test]}, y[test])).batch(30)

    # 1. The Estimator way.
    estimator = keras_estimator.Estimator(
        model_fn, os.path.join(base_dir, "estimator"), config, params
    )
    estimator_record = RecordLoss()
    estimator.train(train_dataset, steps=args.steps, hooks=[estimator_record])
    estimator_metrics = estimator.evaluate(eval_dataset)

    # 2. The Keras way: the same model_fn as a keras.Model on its own model_dir,
    # trained by fit(). Keras callbacks get each step's loss in their logs.
    model = keras_estimator.model_fn_to_keras(
        model_fn, os.path.join(base_dir, "keras"), config, params
    )
    keras_record = KerasLossRecorder()
    callbacks: list[keras.callbacks.Callback] = [keras_record]
    if args.hook_callback:
        # SessionRunHooks in fit: the same RecordLoss hook, through HookCallback.
        hook_record = RecordLoss()
        callbacks.append(keras_estimator.HookCallback([hook_record]))
    history = model.fit(
        train_dataset(), steps_per_epoch=args.steps, callbacks=callbacks, verbose=0
    )
    if args.hook_callback:
        print(f"HookCallback's hook recorded {len(hook_record.losses)} losses")
    keras_losses = keras_record.losses
    keras_metrics = model.evaluate(eval_dataset(), return_dict=True, verbose=0)

    keras_steps = int(keras_metrics["global_step"])
    print(f"steps trained: Estimator.train {int(estimator_metrics['global_step'])}, "
          f"Model.fit {keras_steps}")
    for step in sorted({0, args.steps // 2, args.steps - 1}):
        loss = keras_losses[step]
        print(f"step {step:4d} loss: Estimator.train {estimator_record.losses[step]:.6f}"
              f"  Model.fit {loss:.6f}")
    print(f"Model.fit History loss: {history.history['loss'][-1]:.6f}")
    print(f"evaluation loss: Estimator {estimator_metrics['loss']:.6f}, "
          f"Keras {keras_metrics['loss']:.6f}")
    print(f"evaluation accuracy: Estimator {estimator_metrics['accuracy']:.3f}, "
          f"Keras {keras_metrics['accuracy']:.3f}")
    same = keras_steps == args.steps and np.allclose(
        estimator_record.losses, keras_losses, rtol=1e-5
    ) and np.isclose(estimator_metrics["loss"], keras_metrics["loss"], rtol=1e-5)
    if args.hook_callback:
        same = same and np.allclose(estimator_record.losses, hook_record.losses)
    print(f"Estimator.train and Model.fit losses equal: {same}")
    return 0 if same else 1

if __name__ == "__main__":
    sys.exit(main())
