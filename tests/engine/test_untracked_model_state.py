"""The model_fn model's own state stays out of Keras' attribute tracking.

Keras wraps dicts set on a model in tracked wrappers and takes a layer set on
it (inside a tuple too) for a sub-layer whose variables it lists as the
model's. The building traces' structures and the callbacks' view are held
where tracking does not reach.
"""

import keras

import keras_estimator as ke
from tests._models import input_fn, make_data, mlp_model_fn


def test_the_callbacks_view_is_no_sub_layer_and_state_dicts_stay_dicts(tmp_path):
    x, y = make_data()
    seen = []

    class Seeing(keras.callbacks.Callback):
        def on_train_end(self, logs=None):
            seen.append(len(self.model.weights))

    estimator = ke.Estimator(mlp_model_fn, model_dir=str(tmp_path), params={"hidden": [4]})
    estimator.train(input_fn(x, y), steps=2, callbacks=[Seeing()])
    model = estimator._model
    # The callback saw the model_fn's variables through the view...
    assert seen and seen[0] > 0
    # ...which the model does not count as its own layer or weights.
    assert model.layers == [] and model.weights == []
    assert type(model.logs_specs) is dict and type(model.build_graphs) is dict
    view = model.callback_model()
    assert type(view.layers[0].weights) is list
