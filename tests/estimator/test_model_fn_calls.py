"""How often Estimator calls the model_fn (docs/differences.md).

tf.estimator 2.15 called it once per train/evaluate/predict call. Here it
is called once per trace: the building trace of a mode, then once per
compiled step function the loop runs; a later call with the same input
structure reuses the traces and does not call it.
"""

import tensorflow as tf

import keras_estimator as ke
from tests._models import input_fn, make_data, mlp_model_fn

X, Y = make_data()


def test_model_fn_calls_per_trace_not_per_call(tmp_path):
    calls = []

    def model_fn(features, labels, mode, params):
        calls.append(mode)
        return mlp_model_fn(features, labels, mode, params)

    est = ke.Estimator(model_fn, model_dir=str(tmp_path), params={"hidden": [8]})
    est.train(input_fn(X, Y), steps=3)
    # Building trace, the one-step function hooks fetch from, the fused loop.
    assert calls == ["train"] * 3
    calls.clear()
    est.train(input_fn(X, Y), steps=3)
    assert calls == []
    est.evaluate(input_fn(X, Y, repeat=False))
    assert 1 <= len(calls) <= 3 and set(calls) == {"eval"}
    calls.clear()
    est.evaluate(input_fn(X, Y, repeat=False))
    assert calls == []
    list(est.predict(lambda: tf.data.Dataset.from_tensor_slices({"x": X}).batch(8)))
    assert 1 <= len(calls) <= 3 and set(calls) == {"infer"}
