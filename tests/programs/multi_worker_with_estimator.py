"""TensorFlow's "Multi-worker training with Estimator" tutorial, as published.

A model_fn building a Keras Sequential CNN, a v1 GradientDescentOptimizer and
a per-example Keras loss summed over the batch, trained and evaluated by
`tf.estimator.train_and_evaluate` under
`tf.distribute.experimental.MultiWorkerMirroredStrategy` (one worker: the
tutorial runs without TF_CONFIG), the input_fn sharding by its
`input_context`. Local data: the bundled 8x8 digits, zero-padded to the
tutorial's 28x28 MNIST images (1500 to train, 297 to test), instead of
`tfds.load('mnist')`.
"""

import json
import os
import tempfile

import numpy as np
import tensorflow as tf

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")


def load_digits():
    rows = np.loadtxt(os.path.join(DATA, "digits.csv.gz"), delimiter=",")
    images = (rows[:, :64].reshape(-1, 8, 8, 1) * 16.0).astype(np.uint8)
    images = np.pad(images, ((0, 0), (10, 10), (10, 10), (0, 0)))
    labels = rows[:, 64].astype(np.int64)
    train = tf.data.Dataset.from_tensor_slices((images[:1500], labels[:1500]))
    test = tf.data.Dataset.from_tensor_slices((images[1500:], labels[1500:]))
    return {"train": train, "test": test}


BUFFER_SIZE = 10000
BATCH_SIZE = 64


def input_fn(mode, input_context=None):
    datasets = load_digits()
    mnist_dataset = (
        datasets["train"] if mode == tf.estimator.ModeKeys.TRAIN else datasets["test"]
    )

    def scale(image, label):
        image = tf.cast(image, tf.float32)
        image /= 255
        return image, label

    if input_context:
        mnist_dataset = mnist_dataset.shard(
            input_context.num_input_pipelines, input_context.input_pipeline_id
        )
    return mnist_dataset.map(scale).cache().shuffle(BUFFER_SIZE).batch(BATCH_SIZE)


LEARNING_RATE = 1e-4


def model_fn(features, labels, mode):
    model = tf.keras.Sequential(
        [
            tf.keras.layers.Conv2D(32, 3, activation="relu", input_shape=(28, 28, 1)),
            tf.keras.layers.MaxPooling2D(),
            tf.keras.layers.Flatten(),
            tf.keras.layers.Dense(64, activation="relu"),
            tf.keras.layers.Dense(10),
        ]
    )
    logits = model(features, training=False)

    if mode == tf.estimator.ModeKeys.PREDICT:
        predictions = {"logits": logits}
        return tf.estimator.EstimatorSpec(labels=labels, predictions=predictions)

    optimizer = tf.compat.v1.train.GradientDescentOptimizer(learning_rate=LEARNING_RATE)
    loss = tf.keras.losses.SparseCategoricalCrossentropy(
        from_logits=True, reduction=tf.keras.losses.Reduction.NONE
    )(labels, logits)
    loss = tf.reduce_sum(loss) * (1.0 / BATCH_SIZE)
    if mode == tf.estimator.ModeKeys.EVAL:
        return tf.estimator.EstimatorSpec(mode, loss=loss)

    return tf.estimator.EstimatorSpec(
        mode=mode,
        loss=loss,
        train_op=optimizer.minimize(
            loss, tf.compat.v1.train.get_or_create_global_step()
        ),
    )


def main():
    model_dir = os.path.join(tempfile.mkdtemp(), "multiworker")
    strategy = tf.distribute.experimental.MultiWorkerMirroredStrategy()
    config = tf.estimator.RunConfig(train_distribute=strategy)

    classifier = tf.estimator.Estimator(
        model_fn=model_fn, model_dir=model_dir, config=config
    )
    tf.estimator.train_and_evaluate(
        classifier,
        train_spec=tf.estimator.TrainSpec(input_fn=input_fn),
        eval_spec=tf.estimator.EvalSpec(input_fn=input_fn),
    )
    evaluations = sorted(os.listdir(os.path.join(model_dir, "eval")))
    checkpoint = tf.train.latest_checkpoint(model_dir)
    result = {
        "global_step": int(classifier.get_variable_value("global_step")),
        "latest_checkpoint": os.path.basename(checkpoint),
        "eval_event_files": len(evaluations),
        "eval_loss": float(
            classifier.evaluate(
                lambda: input_fn(tf.estimator.ModeKeys.EVAL), name="again"
            )["loss"]
        ),
    }
    print("RESULT " + json.dumps(result, sort_keys=True))


if __name__ == "__main__":
    main()
