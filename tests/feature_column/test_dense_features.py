"""DenseFeatures on Keras 3: tf.keras 2.15's outputs, input_layer's values,
training, checkpoints, config round trips, Estimator model_fns and install().

The 2.15 numbers come from tests/fixtures/make_tf215_dense_features_fixture.py,
whose column and feature recipe is imported here.
"""

import json
import pathlib

import keras
import numpy as np
import pytest
import tensorflow as tf
from hypothesis import given
from hypothesis import strategies as st

import keras_estimator as ke
from keras_estimator._src.feature_column.dense_features import DenseFeatures
from tests.fixtures import make_tf215_dense_features_fixture as recipe

fc = tf.feature_column
FIXTURE = json.loads(recipe.OUT.read_text())


def fixture_features():
    return recipe.as_tensors(tf, recipe.features())


def input_layer_output(columns, arrays, weights=None, dense=False):
    """tf.compat.v1.feature_column.input_layer in a graph, with `weights` assigned.

    `arrays` become tensors as the fixture recipe makes them, or all dense.
    """
    with tf.Graph().as_default():
        tf.compat.v1.set_random_seed(0)  # op determinism wants seeded initializers
        if dense:
            features = {key: tf.constant(value) for key, value in arrays.items()}
        else:
            features = recipe.as_tensors(tf, arrays)
        output = tf.compat.v1.feature_column.input_layer(features, columns)
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.global_variables_initializer())
            session.run(tf.compat.v1.tables_initializer())
            for name, value in (weights or {}).items():
                [variable] = [v for v in tf.compat.v1.global_variables() if name in v.name]
                variable.load(value, session)
            return session.run(output)


# ---------------------------------------------------------------- outputs


def test_matches_tf215_dense_features_output_and_order():
    layer = DenseFeatures(recipe.columns(tf))
    output = layer(fixture_features())
    assert [c.name for c in layer.feature_columns] == FIXTURE["column_order"]
    np.testing.assert_allclose(output.numpy(), FIXTURE["output"], rtol=1e-6, atol=1e-6)
    # tf.keras 2's `dense_features/<column>/<name>:0` is `<column>.<name>` here.
    assert sorted(f"dense_features/{w.name.replace('.', '/')}:0"
                  for w in layer.weights) == FIXTURE["weight_names"]


def test_equals_input_layer_for_the_fixture_columns():
    output = DenseFeatures(recipe.columns(tf))(fixture_features())
    expected = input_layer_output(recipe.columns(tf), recipe.features())
    np.testing.assert_allclose(output.numpy(), expected, rtol=1e-6, atol=1e-6)


@given(
    shapes=st.lists(
        st.lists(st.integers(1, 3), min_size=1, max_size=3), min_size=1, max_size=4),
    batch=st.integers(1, 4),
    seed=st.integers(0, 2**16),
)
def test_equals_input_layer_over_random_numeric_columns(shapes, batch, seed):
    rng = np.random.default_rng(seed)
    # Keys in an order unlike the sorted one, so the sort is exercised.
    keys = [f"{'zyxw'[i]}{i}" for i in range(len(shapes))]
    columns = [fc.numeric_column(key, shape=tuple(shape)) for key, shape in zip(keys, shapes, strict=True)]
    arrays = {key: rng.normal(size=(batch, *shape)).astype(np.float32)
              for key, shape in zip(keys, shapes, strict=True)}
    output = DenseFeatures(columns)({k: tf.constant(v) for k, v in arrays.items()})
    expected = np.concatenate(
        [arrays[k].reshape(batch, -1) for k in sorted(keys)], axis=1)
    np.testing.assert_allclose(output.numpy(), expected, rtol=1e-6)
    np.testing.assert_allclose(output.numpy(), input_layer_output(columns, arrays, dense=True), rtol=1e-6)


@given(seed=st.integers(0, 2**16), dimension=st.integers(1, 4),
       combiner=st.sampled_from(["mean", "sum", "sqrtn"]))
def test_embedding_equals_input_layer_with_the_same_weights(seed, dimension, combiner):
    rng = np.random.default_rng(seed)
    weights = rng.normal(size=(5, dimension)).astype(np.float32)
    column = fc.embedding_column(
        fc.categorical_column_with_hash_bucket("word", 5), dimension, combiner=combiner)
    arrays = {"word": rng.choice(["a", "b", "c", "d", ""], size=(3, 2))}
    arrays["word"][:, 0] = "a"  # every row has at least one id
    layer = DenseFeatures([column])
    layer.build(None)
    layer.weights[0].assign(weights)
    output = layer(recipe.as_tensors(tf, arrays))
    expected = input_layer_output([column], arrays, {"embedding_weights": weights})
    np.testing.assert_allclose(output.numpy(), expected, rtol=1e-5, atol=1e-6)


def test_tf_function_and_eager_agree_and_fill_cols_to_output_tensors():
    layer = DenseFeatures(recipe.columns(tf))
    eager = layer(fixture_features())

    @tf.function
    def traced(features):
        return layer(features)

    np.testing.assert_allclose(traced(fixture_features()).numpy(), eager.numpy())
    outputs = {}
    layer(fixture_features(), cols_to_output_tensors=outputs)
    assert [c.name for c in outputs] == FIXTURE["column_order"]
    assert sum(t.shape[1] for t in outputs.values()) == eager.shape[1] == 28


def test_output_shape_and_static_batch():
    layer = DenseFeatures([fc.numeric_column("a", shape=(2, 3))])
    assert layer.compute_output_shape({"a": (None, 2, 3)}) == (None, 6)
    assert layer({"a": tf.ones((4, 2, 3))}).shape == (4, 6)


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize("column, name", [
    (fc.categorical_column_with_identity("slot", 3), "slot"),
    (fc.categorical_column_with_hash_bucket("word", 3), "word"),
])
def test_categorical_column_rejected_with_the_fix(column, name):
    with pytest.raises(ValueError, match=rf"only dense columns.*'{name}'.*indicator_column.*embedding_column"):
        DenseFeatures([fc.numeric_column("a"), column])


@pytest.mark.parametrize("columns, pattern", [
    ([], "feature_columns is empty"),
    ({"a": fc.numeric_column("a")}, "iterable of feature columns, got dict"),
    (3, "iterable of feature columns, got int"),
    (["a"], "only dense columns.*got str"),
    ([fc.numeric_column("a"), fc.numeric_column("a", shape=2)], "Two feature columns are named 'a'"),
])
def test_bad_feature_columns(columns, pattern):
    with pytest.raises(ValueError, match=pattern):
        DenseFeatures(columns)


def test_single_column_is_accepted():
    layer = DenseFeatures(fc.numeric_column("a"))
    assert layer({"a": tf.ones((2, 1))}).shape == (2, 1)


def test_features_must_be_a_dict():
    layer = DenseFeatures([fc.numeric_column("a")])
    with pytest.raises(ValueError, match="expects a dict of features.*got EagerTensor"):
        layer(tf.ones((2, 1)))


def test_different_batch_sizes_rejected():
    layer = DenseFeatures([fc.numeric_column("a"), fc.numeric_column("b")])
    with pytest.raises(ValueError, match="column 'a' has 2, column 'b' has 3"):
        layer({"a": tf.ones((2, 1)), "b": tf.ones((3, 1))})


# ---------------------------------------------------------------- variables


def embedding_layer(trainable=True):
    word = fc.categorical_column_with_hash_bucket("word", 5)
    return DenseFeatures([fc.embedding_column(word, 3), fc.numeric_column("x")],
                         trainable=trainable, name="dense_features")


WORDS = {"word": tf.constant([["a"], ["b"]]), "x": tf.constant([[1.0], [2.0]])}


def test_embedding_weights_are_trainable_layer_weights_with_gradients():
    layer = embedding_layer()
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(layer(WORDS) ** 2)
    [variable] = layer.trainable_weights
    assert variable.path == "dense_features/word_embedding.embedding_weights"
    assert tuple(variable.shape) == (5, 3)
    [gradient] = tape.gradient(loss, layer.trainable_weights)
    assert gradient is not None and np.abs(tf.convert_to_tensor(gradient)).sum() > 0


def test_untrainable_layer_has_no_trainable_weights():
    layer = embedding_layer(trainable=False)
    layer(WORDS)
    assert layer.trainable_weights == [] and len(layer.non_trainable_weights) == 1


def dataset(batch=4):
    features = {
        "word": tf.constant([["a"], ["b"], ["c"], ["d"]] * 4),
        "x": tf.constant([[1.0], [2.0], [3.0], [4.0]] * 4),
    }
    labels = tf.constant([[1.0], [0.0], [1.0], [0.0]] * 4)
    return tf.data.Dataset.from_tensor_slices((features, labels)).batch(batch)


def functional_model():
    inputs = {"word": keras.Input((1,), dtype="string", name="word"),
              "x": keras.Input((1,), name="x")}
    hidden = embedding_layer()(inputs)
    return keras.Model(inputs, keras.layers.Dense(1)(hidden))


class Subclassed(keras.Model):
    def __init__(self):
        super().__init__()
        self.features = embedding_layer()
        self.out = keras.layers.Dense(1)

    def call(self, inputs):
        return self.out(self.features(inputs))


@pytest.mark.parametrize("make_model", [functional_model, Subclassed])
def test_model_fit_trains_the_embedding(make_model):
    model = make_model()
    model.compile(keras.optimizers.SGD(0.05), "mse")
    model(next(iter(dataset()))[0])
    embedding = [w for w in model.trainable_weights if "embedding" in w.path]
    assert len(embedding) == 1 and len(model.trainable_weights) == 3
    before = embedding[0].numpy().copy()
    history = model.fit(dataset(), epochs=3, verbose=0)
    assert not np.allclose(before, embedding[0].numpy())
    assert history.history["loss"][-1] < history.history["loss"][0]


def test_checkpoint_and_save_weights_restore_the_embedding(tmp_path):
    layer = embedding_layer()
    expected = layer(WORDS).numpy()
    path = tf.train.Checkpoint(layer=layer).save(str(tmp_path / "ckpt"))
    assert any("word_embedding" in name for name, _ in tf.train.list_variables(path))
    model = keras.Sequential([layer])
    model(WORDS)
    model.save_weights(str(tmp_path / "w.weights.h5"))

    restored = embedding_layer()
    restored(WORDS)
    assert not np.allclose(restored(WORDS).numpy(), expected)
    tf.train.Checkpoint(layer=restored).restore(path).assert_existing_objects_matched()
    np.testing.assert_allclose(restored(WORDS).numpy(), expected)

    again = embedding_layer()
    again(WORDS)
    model = keras.Sequential([again])
    model(WORDS)
    model.load_weights(str(tmp_path / "w.weights.h5"))
    np.testing.assert_allclose(again(WORDS).numpy(), expected)


# ---------------------------------------------------------------- config


def test_config_round_trip_keeps_columns_and_outputs():
    layer = DenseFeatures(recipe.columns(tf), name="inputs")
    config = layer.get_config()
    assert config["name"] == "inputs" and len(config["feature_columns"]) == 9
    copy = DenseFeatures.from_config(json.loads(json.dumps(config)))
    assert [c.name for c in copy.feature_columns] == FIXTURE["column_order"]
    # Constant initializers survive, so the copy computes the same values.
    np.testing.assert_allclose(copy(fixture_features()).numpy(),
                               layer(fixture_features()).numpy(), rtol=1e-6)


def test_keras_file_save_and_load(tmp_path):
    model = functional_model()
    model.compile("sgd", "mse")
    features = next(iter(dataset()))[0]
    path = str(tmp_path / "model.keras")
    model.save(path)
    loaded = keras.models.load_model(path)
    np.testing.assert_allclose(loaded(features).numpy(), model(features).numpy(), rtol=1e-6)


# ---------------------------------------------------------------- Estimator


def test_in_an_estimator_model_fn(tmp_path):
    columns = [fc.embedding_column(fc.categorical_column_with_hash_bucket("word", 5), 3),
               fc.numeric_column("x")]

    def model_fn(features, labels, mode):
        net = DenseFeatures(columns)(features)
        logits = keras.layers.Dense(1)(net)
        if mode == ke.ModeKeys.PREDICT:
            return ke.EstimatorSpec(mode, predictions=logits)
        loss = tf.compat.v1.losses.mean_squared_error(labels, logits)
        train_op = tf.compat.v1.train.GradientDescentOptimizer(0.05).minimize(
            loss, global_step=tf.compat.v1.train.get_or_create_global_step())
        return ke.EstimatorSpec(mode, loss=loss, train_op=train_op)

    estimator = ke.Estimator(model_fn, model_dir=str(tmp_path),
                             config=ke.RunConfig(tf_random_seed=1))
    estimator.train(lambda: dataset().repeat(), steps=1)
    [name] = [n for n in estimator.get_variable_names() if "embedding" in n]
    before = estimator.get_variable_value(name)
    assert before.shape == (5, 3)
    first = estimator.evaluate(dataset)["loss"]
    estimator.train(lambda: dataset().repeat(), steps=30)
    assert not np.allclose(estimator.get_variable_value(name), before)
    assert estimator.evaluate(dataset)["loss"] < first
    predictions = list(estimator.predict(lambda: dataset().map(lambda f, _: f)))
    assert len(predictions) == 16


# ---------------------------------------------------------------- install()


def test_install_adds_dense_features_to_tf_keras_and_uninstall_removes_it():
    assert not hasattr(tf.keras.layers, "DenseFeatures")
    with ke.install() as installation:
        assert tf.keras.layers.DenseFeatures is DenseFeatures
        assert tf.compat.v1.keras.layers.DenseFeatures is DenseFeatures
        assert any(label.endswith(".DenseFeatures") for label in installation.patched)
    assert not hasattr(tf.keras.layers, "DenseFeatures")
    assert not hasattr(tf.compat.v1.keras.layers, "DenseFeatures")


def test_install_keeps_a_dense_features_keras_already_has():
    own = type("OwnDenseFeatures", (), {})
    tf.keras.layers.DenseFeatures = own
    try:
        with ke.install():
            assert tf.keras.layers.DenseFeatures is own
        assert tf.keras.layers.DenseFeatures is own
    finally:
        del tf.keras.layers.DenseFeatures


def test_fixture_provenance():
    assert FIXTURE["versions"]["tensorflow"].startswith("2.15")
    assert pathlib.Path(recipe.__file__).name == "make_tf215_dense_features_fixture.py"


def test_vocabulary_file_table_is_saved_with_the_layer(tmp_path):
    vocabulary = tmp_path / "vocabulary.txt"
    vocabulary.write_text("a\nb\nc\n")
    column = fc.indicator_column(fc.categorical_column_with_vocabulary_file(
        "w", str(vocabulary)))
    module = tf.Module()
    module.layer = DenseFeatures([column])
    module.serve = tf.function(
        lambda w: module.layer({"w": w}),
        input_signature=[tf.TensorSpec([None, 1], tf.string)])
    np.testing.assert_array_equal(
        module.serve(tf.constant([["b"], ["z"]])).numpy(), [[0, 1, 0], [0, 0, 0]])
    tf.saved_model.save(module, str(tmp_path / "saved"))
    vocabulary.unlink()  # the SavedModel carries its own copy
    loaded = tf.saved_model.load(str(tmp_path / "saved"))
    np.testing.assert_array_equal(loaded.serve(tf.constant([["c"]])).numpy(), [[0, 0, 1]])
