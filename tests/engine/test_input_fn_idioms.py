"""input_fns written with tf.compat.v1 iterators read as their graph did.

Under tf.estimator 2.15 an input_fn returning an iterator's `get_next()`
gave the next element at every step, and the end of the data ended
training or evaluation; these tests hold the Estimator to that.
"""

import math
import tempfile

import numpy as np
import pytest
import tensorflow as tf
import tensorflow.compat.v1 as tf1
from hypothesis import given
from hypothesis import strategies as st

import keras_estimator as ke
from keras_estimator._src.engine import inputs as _inputs
from tests._models import make_data, mlp_model_fn

X, Y = make_data(num_examples=50)
PARAMS = {"hidden": [8]}


def one_shot(dataset):
    return tf1.data.make_one_shot_iterator(dataset).get_next()


def v1_method(dataset):
    # A tf.compat.v1 Dataset still has the deprecated iterator methods.
    v1_dataset = tf1.data.Dataset.from_tensors(0).flat_map(lambda _: dataset)
    return v1_dataset.make_one_shot_iterator().get_next()


def initializable(dataset):
    iterator = tf1.data.make_initializable_iterator(dataset)
    tf1.add_to_collection(tf1.GraphKeys.TABLE_INITIALIZERS, iterator.initializer)
    return iterator.get_next()


IDIOMS = [one_shot, v1_method, initializable]


def iterator_input_fn(idiom, x=X, y=Y, batch_size=16, repeat=1, scale=1.0):
    def input_fn():
        dataset = tf.data.Dataset.from_tensor_slices(({"x": x}, y))
        features, labels = idiom(dataset.batch(batch_size).repeat(repeat))
        return {"x": features["x"] * scale}, labels

    return input_fn


def dataset_input_fn(x=X, y=Y, batch_size=16, repeat=1):
    def input_fn():
        dataset = tf.data.Dataset.from_tensor_slices(({"x": x}, y))
        return dataset.batch(batch_size).repeat(repeat)

    return input_fn


def summing_model_fn(features, labels, mode, params):
    """The tiny MLP, also summing every feature value it trains on."""
    spec = mlp_model_fn(features, labels, mode, params)
    if mode != ke.ModeKeys.TRAIN:
        return spec
    seen = tf1.get_variable("seen", initializer=0.0, trainable=False)
    train_op = tf.group(spec.train_op, seen.assign_add(tf.reduce_sum(features["x"])))
    return spec._replace(train_op=train_op)


def make_estimator(model_dir, model_fn=mlp_model_fn, params=PARAMS):
    config = ke.RunConfig(tf_random_seed=1)
    return ke.Estimator(
        model_fn, model_dir=str(model_dir), config=config, params=params
    )


def all_weights(estimator):
    names = [n for n in estimator.get_variable_names() if n != "global_step"]
    return {n: estimator.get_variable_value(n) for n in names}


@pytest.mark.parametrize("idiom", IDIOMS)
def test_iterator_input_ends_training_with_the_data(tmp_path, idiom):
    est = make_estimator(tmp_path)
    est.train(iterator_input_fn(idiom, batch_size=16))  # no steps, no max_steps
    assert est.get_variable_value("global_step") == math.ceil(50 / 16)
    est.train(iterator_input_fn(idiom, batch_size=16, repeat=2))
    assert est.get_variable_value("global_step") == 3 * math.ceil(50 / 16)


def test_each_step_reads_the_next_batch(tmp_path):
    est = make_estimator(tmp_path, summing_model_fn)
    est.train(iterator_input_fn(one_shot, batch_size=8))
    assert est.get_variable_value("global_step") == math.ceil(50 / 8)
    np.testing.assert_allclose(est.get_variable_value("seen"), X.sum(), rtol=1e-5)


def test_post_processing_of_get_next_is_kept(tmp_path):
    est = make_estimator(tmp_path, summing_model_fn)
    est.train(iterator_input_fn(one_shot, batch_size=10, scale=2.0))
    np.testing.assert_allclose(est.get_variable_value("seen"), 2 * X.sum(), rtol=1e-5)


def test_evaluate_reads_every_batch_once(tmp_path):
    est = make_estimator(tmp_path)
    est.train(dataset_input_fn(repeat=3))
    expected = est.evaluate(dataset_input_fn(batch_size=7))
    for idiom in IDIOMS:
        metrics = est.evaluate(iterator_input_fn(idiom, batch_size=7))
        assert metrics == pytest.approx(expected, rel=1e-6)


def test_predict_yields_one_prediction_per_example(tmp_path):
    est = make_estimator(tmp_path)
    est.train(dataset_input_fn())

    def features_only():
        features = one_shot(tf.data.Dataset.from_tensor_slices({"x": X}).batch(16))
        return {"x": features["x"]}

    predictions = list(est.predict(features_only))
    expected = list(est.predict(dataset_input_fn()))
    assert len(predictions) == len(X)
    np.testing.assert_allclose(
        [p["logits"] for p in predictions], [p["logits"] for p in expected], rtol=1e-6
    )


def test_constant_tensor_input_still_repeats(tmp_path):
    est = make_estimator(tmp_path)
    est.train(lambda: ({"x": tf.constant(X[:8])}, tf.constant(Y[:8])), steps=5)
    assert est.get_variable_value("global_step") == 5


def test_iterator_made_but_never_read_leaves_constants_repeating(tmp_path):
    def input_fn():
        tf1.data.make_one_shot_iterator(tf.data.Dataset.from_tensor_slices(X))
        return {"x": tf.constant(X[:8])}, tf.constant(Y[:8])

    est = make_estimator(tmp_path)
    est.train(input_fn, steps=3)
    assert est.get_variable_value("global_step") == 3


def test_table_initializer_runs_before_reading(tmp_path):
    # A lookup table applied to each batch; its initializer in
    # TABLE_INITIALIZERS with the iterator's, as TF1 input pipelines did.
    def input_fn():
        table = tf.lookup.StaticHashTable(
            tf.lookup.KeyValueTensorInitializer(
                tf.constant([0, 1, 2], tf.int64), tf.constant([2, 0, 1], tf.int64)
            ),
            default_value=-1,
        )
        features, labels = initializable(
            tf.data.Dataset.from_tensor_slices(({"x": X}, Y.astype("int64"))).batch(16)
        )
        return features, table.lookup(labels)

    dataset = _inputs.make_dataset(input_fn, ke.ModeKeys.TRAIN, {}, None)
    labels = np.concatenate([batch[1].numpy() for batch in dataset])
    np.testing.assert_array_equal(labels, np.array([2, 0, 1])[Y])
    assert dataset.element_spec[1].shape.as_list() == [None]


def test_two_iterators_are_read_together_until_the_shorter_ends():
    def input_fn():
        features = one_shot(tf.data.Dataset.from_tensor_slices(X).batch(10))
        labels = one_shot(tf.data.Dataset.from_tensor_slices(Y).batch(10).take(3))
        return {"x": features}, labels

    dataset = _inputs.make_dataset(input_fn, ke.ModeKeys.TRAIN, {}, None)
    batches = list(dataset)
    assert len(batches) == 3
    np.testing.assert_array_equal(batches[2][0]["x"], X[20:30])
    np.testing.assert_array_equal(batches[2][1], Y[20:30])


def test_input_context_reaches_an_iterator_input_fn():
    def input_fn(input_context):
        dataset = tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).shard(
            input_context.num_input_pipelines, input_context.input_pipeline_id
        )
        return one_shot(dataset.batch(5))

    context = tf.distribute.InputContext(num_input_pipelines=2, input_pipeline_id=1)
    dataset = _inputs.make_dataset(
        input_fn, ke.ModeKeys.TRAIN, {}, None, input_context=context
    )
    labels = np.concatenate([batch[1].numpy() for batch in dataset])
    np.testing.assert_array_equal(labels, Y[1::2])


def test_output_shapes_and_types_of_an_iterator_inside_input_fn():
    seen = []

    def input_fn():
        iterator = tf1.data.make_one_shot_iterator(
            tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).batch(4)
        )
        seen.append(
            (tf1.data.get_output_shapes(iterator), tf1.data.get_output_types(iterator))
        )
        return iterator.get_next()

    _inputs.make_dataset(input_fn, ke.ModeKeys.TRAIN, {}, None)
    shapes, types = seen[-1]
    assert shapes[0]["x"].as_list() == [None, 4]
    assert types == ({"x": tf.float32}, tf.int32)


def test_placeholder_fed_by_a_hook_is_rejected_with_the_fix():
    def input_fn():
        values = tf1.placeholder(tf.float32, [None, 4])
        return one_shot(tf.data.Dataset.from_tensor_slices({"x": values}))

    with pytest.raises(ValueError, match="placeholder.*from_tensor_slices"):
        _inputs.make_dataset(input_fn, ke.ModeKeys.TRAIN, {}, None)


def test_get_next_twice_on_one_iterator_is_rejected():
    def input_fn():
        iterator = tf1.data.make_one_shot_iterator(
            tf.data.Dataset.from_tensor_slices(X)
        )
        return {"x": iterator.get_next() + iterator.get_next()}

    with pytest.raises(ValueError, match="get_next\\(\\) more than once.*batch"):
        _inputs.make_dataset(input_fn, ke.ModeKeys.TRAIN, {}, None)


def test_string_handle_is_rejected():
    def input_fn():
        iterator = tf1.data.make_one_shot_iterator(
            tf.data.Dataset.from_tensor_slices(X)
        )
        iterator.string_handle()
        return {"x": iterator.get_next()}

    with pytest.raises(ValueError, match="string_handle.*Return the dataset"):
        _inputs.make_dataset(input_fn, ke.ModeKeys.TRAIN, {}, None)


def graph_iterator_type():
    with tf.Graph().as_default():
        tf1.set_random_seed(0)  # op determinism (conftest) wants a seed
        return type(tf1.data.make_one_shot_iterator(tf1.data.Dataset.range(2)))


def test_iterator_constructors_are_restored_after_input_fn():
    _inputs.make_dataset(iterator_input_fn(one_shot), ke.ModeKeys.TRAIN, {}, None)
    assert graph_iterator_type() is tf1.data.Iterator

    def failing_input_fn():
        one_shot(tf.data.Dataset.range(2))
        raise OSError("no such file")

    with pytest.raises(OSError, match="no such file"):
        _inputs.make_dataset(failing_input_fn, ke.ModeKeys.TRAIN, {}, None)
    assert graph_iterator_type() is tf1.data.Iterator


@given(
    num_examples=st.integers(1, 20),
    batch_size=st.integers(1, 8),
    repeat=st.integers(1, 3),
    idiom=st.sampled_from(IDIOMS),
)
def test_iterator_input_fn_trains_as_the_dataset_input_fn(
    num_examples, batch_size, repeat, idiom
):
    x, y = X[:num_examples], Y[:num_examples]
    with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
        from_iterator = make_estimator(a)
        from_iterator.train(iterator_input_fn(idiom, x, y, batch_size, repeat))
        from_dataset = make_estimator(b)
        from_dataset.train(dataset_input_fn(x, y, batch_size, repeat))
        steps = repeat * math.ceil(num_examples / batch_size)
        assert from_iterator.get_variable_value("global_step") == steps
        assert from_dataset.get_variable_value("global_step") == steps
        expected = all_weights(from_dataset)
        for name, value in all_weights(from_iterator).items():
            np.testing.assert_allclose(value, expected[name], rtol=1e-6, err_msg=name)


def test_input_fn_may_pop_the_labels_from_the_dict_get_next_returned(tmp_path):
    # cloudml-samples' census input_fn: `features = it.get_next();
    # return features, features.pop('label')`.
    x = X[:, 0]
    labels = np.arange(len(x), dtype=np.float32)

    def pop_input_fn():
        dataset = tf.data.Dataset.from_tensor_slices({"x": x, "label": labels})
        features = one_shot(dataset.batch(10))
        return features, features.pop("label")

    def model_fn(features, labels, mode):
        assert sorted(features) == ["x"]
        bias = tf1.get_variable("bias", [], initializer=tf1.zeros_initializer())
        loss = tf.reduce_mean(tf.square(labels - features["x"] - bias))
        train_op = tf1.assign_add(tf1.train.get_global_step(), 1)
        return ke.EstimatorSpec(mode, loss=loss, train_op=train_op)

    est = ke.Estimator(model_fn, model_dir=str(tmp_path))
    est.train(pop_input_fn)
    assert est.get_variable_value("global_step") == 5
    result = est.evaluate(pop_input_fn)
    batch_losses = ((labels - x) ** 2).reshape(5, 10).mean(axis=1)
    np.testing.assert_allclose(result["loss"], batch_losses.mean(), rtol=1e-5)


def _batches_seen(input_fn, model_dir, steps=4):
    """The batches of `features["x"]` a seeded train() reads, step by step."""
    seen = []

    class Batches(tf1.train.SessionRunHook):
        def before_run(self, run_context):
            return tf1.train.SessionRunArgs("batch:0")

        def after_run(self, run_context, run_values):
            seen.append(run_values.results.tolist())

    def model_fn(features, labels, mode):
        batch = tf.identity(features["x"], name="batch")
        w = tf1.get_variable("w", [], initializer=tf1.zeros_initializer())
        return ke.EstimatorSpec(
            mode,
            loss=w * tf.cast(tf.reduce_sum(batch), tf.float32),
            train_op=tf1.assign_add(tf1.train.get_or_create_global_step(), 1),
        )

    est = ke.Estimator(model_fn, str(model_dir), config=ke.RunConfig(tf_random_seed=7))
    est.train(input_fn, steps=steps, hooks=[Batches()])
    return seen


# tf.estimator 2.15's batches for both input_fns below, seed 7.
_SHUFFLED_2_15 = [[7, 3, 9, 0, 6], [1, 8, 2, 5, 4], [9, 7, 4, 8, 3], [0, 5, 6, 2, 1]]


def _shuffled():
    return tf.data.Dataset.range(10).shuffle(10).repeat().batch(5)


def test_a_one_shot_iterator_reads_2_15s_shuffled_order_from_the_first_epoch(tmp_path):
    # Before, the first element handed to input_fn's eager call came from an
    # iterator of its own, and the shuffle's seed generator gave training the
    # order of 2.15's second epoch: [1, 8, 2, 5, 4] first.
    def one_shot_input_fn():
        return {"x": tf1.data.make_one_shot_iterator(_shuffled()).get_next()}

    def dataset_input_fn():
        return _shuffled().map(lambda x: {"x": x})

    assert _batches_seen(one_shot_input_fn, tmp_path / "one_shot") == _SHUFFLED_2_15
    assert _batches_seen(dataset_input_fn, tmp_path / "dataset") == _SHUFFLED_2_15


def test_an_input_fn_that_cannot_run_on_an_empty_batch_still_reads_every_batch(tmp_path):
    # decode_csv of a fixed-size batch of empty lines fails; input_fn is then
    # called on the first element, as before.
    lines = [f"{i},{i * 10}" for i in range(10)]

    def input_fn():
        dataset = tf.data.Dataset.from_tensor_slices(lines).repeat().batch(5, drop_remainder=True)
        first, second = tf.io.decode_csv(
            tf1.data.make_one_shot_iterator(dataset).get_next(), [[0], [0]]
        )
        return {"x": first + second}

    assert _batches_seen(input_fn, tmp_path, steps=3) == [
        [0, 11, 22, 33, 44],
        [55, 66, 77, 88, 99],
        [0, 11, 22, 33, 44],
    ]


def test_a_dataset_built_from_an_iterator_s_first_element_holds_its_values(tmp_path):
    # input_fn peeks at the first element and returns another dataset made
    # from it: the values are the first element's, never a stand-in's.
    def input_fn():
        peeked = tf1.data.make_one_shot_iterator(
            tf.data.Dataset.from_tensor_slices(tf.constant([[3, 4, 5, 6, 7]]))
        ).get_next()
        return tf.data.Dataset.from_tensors({"x": peeked}).repeat()

    assert _batches_seen(input_fn, tmp_path, steps=2) == [[3, 4, 5, 6, 7]] * 2
