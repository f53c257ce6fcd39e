"""ModelCheckpoint in Estimator.train: the files `Model.fit` writes."""


import h5py
import keras
import numpy as np

import keras_estimator as ke
from tests._models import input_fn, make_data, mlp_model_fn
from tests.callbacks import _harness as h


def _datasets(path):
    names = []
    with h5py.File(path, "r") as file:
        file.visititems(lambda name, item: names.append(name) if isinstance(item, h5py.Dataset) else None)
    return sorted(names)


def test_weights_files_equal_fit_and_reload(tmp_path):
    saved = {}
    for run, kind in ((h.fit_run, "fit"), (h.estimator_run, "estimator")):
        model = h.build_model()
        path = tmp_path / f"{kind}.weights.h5"
        callback = keras.callbacks.ModelCheckpoint(str(path), save_weights_only=True, save_freq=3)
        run(model, 6, [callback])
        saved[kind] = path
    assert _datasets(saved["estimator"]) == _datasets(saved["fit"])
    assert len(_datasets(saved["fit"])) > 4
    reloaded = {}
    for kind, path in saved.items():
        fresh = h.build_model(seed=99)
        fresh.optimizer.build(fresh.trainable_variables)
        fresh.load_weights(str(path))
        reloaded[kind] = (fresh.get_weights(), [v.numpy() for v in fresh.optimizer.variables])
    h.assert_same_arrays(reloaded["estimator"][0], reloaded["fit"][0])
    h.assert_same_arrays(reloaded["estimator"][1], reloaded["fit"][1])


def test_callback_model_is_the_compiled_model_holding_the_estimators_variables(tmp_path):
    seen = []

    class Look(keras.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            seen.append((self.model.optimizer is not None, [w.numpy() for w in self.model.weights]))

    model = h.build_model()
    estimator = h.estimator_run(model, 2, [Look()], model_dir=str(tmp_path))
    assert len(seen) == 2 and all(has_optimizer for has_optimizer, _ in seen)
    # What the callback saw after the last step is what the checkpoint holds.
    h.assert_same_arrays(seen[-1][1], h.estimator_weights(estimator))


def test_model_fn_weights_file_holds_its_variables_by_name(tmp_path):
    x, y = make_data()
    params = {"hidden": [4], "optimizer": "sgd"}
    path = tmp_path / "mf.weights.h5"
    estimator = ke.Estimator(mlp_model_fn, model_dir=str(tmp_path / "m"), params=params)
    callback = keras.callbacks.ModelCheckpoint(str(path), save_weights_only=True, save_freq=5)
    estimator.train(input_fn(x, y), steps=5, callbacks=[callback])
    names = _datasets(path)
    assert names == sorted(f"variables/{n}" for n in estimator.get_variable_names())
    with h5py.File(path, "r") as file:
        for name in estimator.get_variable_names():
            np.testing.assert_array_equal(
                file["variables"][name][()], estimator.get_variable_value(name)
            )


def test_model_fn_callback_model_weights_round_trip(tmp_path):
    x, y = make_data()
    params = {"hidden": [4], "optimizer": "sgd"}
    got = {}

    class RoundTrip(keras.callbacks.Callback):
        def on_train_end(self, logs=None):
            model = self.model
            got["names"] = [w.name for w in model.weights]
            before = model.get_weights()
            model.save_weights(str(tmp_path / "a.weights.h5"))
            model.set_weights([np.zeros_like(w) for w in before])
            got["zeroed"] = model.get_weights()
            model.load_weights(str(tmp_path / "a.weights.h5"))
            got["before"], got["after"] = before, model.get_weights()
            got["trainable"] = len(model.trainable_weights)

    estimator = ke.Estimator(mlp_model_fn, model_dir=str(tmp_path / "m"), params=params)
    estimator.train(input_fn(x, y), steps=3, callbacks=[RoundTrip()])
    assert got["trainable"] == 4
    assert all(not w.any() for w in got["zeroed"])
    h.assert_same_arrays(got["after"], got["before"])
    assert [n for n in got["names"] if n.startswith("dense/")] == ["dense/kernel:0", "dense/bias:0"]


def test_model_fn_save_weights_needs_the_keras_suffix(tmp_path):
    x, y = make_data()
    errors = []

    class Save(keras.callbacks.Callback):
        def on_train_end(self, logs=None):
            try:
                self.model.save_weights(str(tmp_path / "w.h5"))
            except ValueError as error:
                errors.append(str(error))

    estimator = ke.Estimator(mlp_model_fn, model_dir=str(tmp_path / "m"), params={})
    estimator.train(input_fn(x, y), steps=1, callbacks=[Save()])
    assert errors and "'.weights.h5'" in errors[0] and "w.h5" in errors[0]


def test_logs_are_fits_and_the_global_step_is_found_as_in_hooks(tmp_path):
    import tensorflow as tf

    def recorder():
        seen = {"logs": [], "steps": []}

        class Record(keras.callbacks.Callback):
            def on_train_batch_end(self, batch, logs=None):
                seen["logs"].append(dict(logs))
                step = tf.compat.v1.train.get_global_step()
                seen["steps"].append(None if step is None else int(step.numpy()))

            def on_epoch_end(self, epoch, logs=None):
                seen["epoch"] = sorted(logs)

        return seen, Record()

    fit_seen, fit_callback = recorder()
    h.fit_run(h.build_model(), 3, [fit_callback])
    ours, callback = recorder()
    h.estimator_run(h.build_model(), 3, [callback], model_dir=str(tmp_path))
    assert ours["logs"] == fit_seen["logs"]
    assert ours["epoch"] == fit_seen["epoch"] == ["accuracy", "loss"]
    assert ours["steps"] == [1, 2, 3]
