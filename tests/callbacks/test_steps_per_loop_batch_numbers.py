"""With `RunConfig(steps_per_loop=N)`, callbacks see fit's batch numbers.

The oracle is `fit` on the same model compiled with
`steps_per_execution=N`: it numbers each run by the index of its first step
at `on_train_batch_begin` and of its last step at `on_train_batch_end`, and
`ModelCheckpoint(save_freq=...)` counts steps from those numbers.
"""

import os

import keras

import keras_estimator as ke
from tests.callbacks._harness import build_model, dataset


class _Batches(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.seen = []

    def on_train_batch_begin(self, batch, logs=None):
        self.seen.append(("begin", batch))

    def on_train_batch_end(self, batch, logs=None):
        self.seen.append(("end", batch, int(self.model.optimizer.iterations.numpy())))


def _callbacks(directory):
    return [
        _Batches(),
        keras.callbacks.ModelCheckpoint(
            os.path.join(directory, "w-{batch}.weights.h5"), save_weights_only=True, save_freq=4
        ),
    ]


def _saved_steps(directory):
    steps = {}
    for name in sorted(os.listdir(directory)):
        model = build_model()
        model.load_weights(os.path.join(directory, name))
        steps[name] = int(model.optimizer.iterations.numpy())
    return steps


def test_batch_numbers_and_checkpoints_are_fits(tmp_path):
    # A whole number of runs: fit runs a last run of N steps in full even
    # past steps_per_epoch, where train() stops at its last step.
    steps = 8
    oracle = build_model()
    oracle.compile(
        optimizer=keras.optimizers.SGD(0.1),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        steps_per_execution=2,
    )
    theirs = _callbacks(str(tmp_path / "fit"))
    oracle.fit(dataset(), steps_per_epoch=steps, epochs=1, verbose=0, callbacks=theirs)

    est = ke.model_to_estimator(
        build_model(), model_dir=str(tmp_path / "est"), config=ke.RunConfig(steps_per_loop=2)
    )
    mine = _callbacks(str(tmp_path / "ours"))
    est.train(dataset, steps=steps, callbacks=mine)

    assert mine[0].seen == theirs[0].seen
    assert _saved_steps(tmp_path / "ours") == _saved_steps(tmp_path / "fit")
