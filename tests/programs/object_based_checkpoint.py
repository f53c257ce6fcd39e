"""Object-based checkpoints from an Estimator, from TensorFlow's checkpoint guide.

The model_fn builds a `tf.keras.Model`, a Keras optimizer and a
`tf.train.Checkpoint`, and hands the checkpoint to the Estimator as the
Scaffold's saver; afterwards the checkpoint is restored outside the
Estimator with plain TF2 objects.
"""

import json
import tempfile

import tensorflow as tf
import tensorflow.compat.v1 as tf_compat


class Net(tf.keras.Model):
    """A simple linear model."""

    def __init__(self):
        super(Net, self).__init__()  # noqa: UP008 (the guide's code)
        self.l1 = tf.keras.layers.Dense(5)

    def call(self, x):
        return self.l1(x)


def toy_dataset():
    inputs = tf.range(10.0)[:, None]
    labels = inputs * 5.0 + tf.range(5.0)[None, :]
    return (
        tf.data.Dataset.from_tensor_slices(dict(x=inputs, y=labels)).repeat().batch(2)
    )


def model_fn(features, labels, mode):
    net = Net()
    opt = tf.keras.optimizers.Adam(0.1)
    ckpt = tf.train.Checkpoint(
        step=tf_compat.train.get_global_step(), optimizer=opt, net=net
    )
    with tf.GradientTape() as tape:
        output = net(features["x"])
        loss = tf.reduce_mean(tf.abs(output - features["y"]))
    variables = net.trainable_variables
    gradients = tape.gradient(loss, variables)
    return tf.estimator.EstimatorSpec(
        mode,
        loss=loss,
        train_op=tf.group(
            opt.apply_gradients(zip(gradients, variables)),  # noqa: B905
            ckpt.step.assign_add(1),
        ),
        # Tell the Estimator to save "ckpt" in an object-based format.
        scaffold=tf_compat.train.Scaffold(saver=ckpt),
    )


def main():
    model_dir = tempfile.mkdtemp()
    tf.keras.backend.clear_session()
    est = tf.estimator.Estimator(model_fn, model_dir)
    est.train(toy_dataset, steps=10)

    opt = tf.keras.optimizers.Adam(0.1)
    net = Net()
    ckpt = tf.train.Checkpoint(
        step=tf.Variable(1, dtype=tf.int64), optimizer=opt, net=net
    )
    latest = tf.train.latest_checkpoint(model_dir)
    # Built before the restore: Keras 3 layers do not take deferred restores.
    net(tf.zeros([1, 1]))
    ckpt.restore(latest).expect_partial()
    # Keras 2 tracks the kernel as `kernel`, Keras 3 as `_kernel`.
    kernel_key = next(
        name
        for name, _ in tf.train.list_variables(latest)
        if name.startswith("net/l1/") and "kernel" in name
    )
    saved_kernel = tf.train.load_variable(latest, kernel_key)
    result = {
        "restored_step": int(ckpt.step.numpy()),
        "checkpoint_name": latest.rsplit("/", 1)[-1],
        "checkpoint_keys_object_based": all(
            name == "_CHECKPOINTABLE_OBJECT_GRAPH" or "/.ATTRIBUTES/" in name
            for name, _ in tf.train.list_variables(latest)
        ),
        "kernel_shape": list(net.l1.kernel.shape),
        "kernel_matches_checkpoint": bool(
            (abs(net.l1.kernel.numpy() - saved_kernel) < 1e-6).all()
        ),
        "kernel_sum": round(float(tf.reduce_sum(net.l1.kernel)), 3),
        "bias_sum": round(float(tf.reduce_sum(net.l1.bias)), 3),
    }
    print("RESULT " + json.dumps(result, sort_keys=True))


if __name__ == "__main__":
    main()
