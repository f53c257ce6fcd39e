"""What evaluate() writes to its eval event file."""

import glob
import os
import shutil

import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as ke
from keras_estimator._src.estimator import eval_summary
from tests._models import input_fn, make_data, mlp_model_fn


def _estimator(model_dir):
    return ke.Estimator(
        mlp_model_fn,
        model_dir=model_dir,
        params={"hidden": [4]},
        config=ke.RunConfig(tf_random_seed=3),
    )


def _event_files(directory):
    return sorted(glob.glob(f"{directory}/events.out.tfevents.*"))


def _events(directory):
    return [
        event
        for path in _event_files(directory)
        for event in tf.compat.v1.train.summary_iterator(path)
        if event.HasField("summary")
    ]


def _result_events(directory):
    """The evaluations' result events, without the checkpoint_path event after each."""
    return [
        event
        for event in _events(directory)
        if [v.tag for v in event.summary.value] != ["checkpoint_path"]
    ]


def test_numbers_are_written_in_one_event_as_tf1_simple_values_as_2_15_wrote_them(tmp_path):
    """2.15's eval files hold each number as a TF1 `simple_value`, no plugin metadata.

    (Checked on a DNNRegressor's evaluate() in tf.estimator 2.15: average_loss,
    label/mean, loss and prediction/mean are all `simple_value`.) Readers
    looping over `value.simple_value` found them; a tensor summary reads 0.0 there.
    """
    results = {
        "loss": 0.5,
        "accuracy": np.float32(0.75),
        "auc": np.float64(0.123456789),
        "count": np.int64(3),
        "flag": True,
        "global_step": 200,
    }
    eval_summary.write_to_directory(results, 200, str(tmp_path / "ours"))

    (event,) = _events(tmp_path / "ours")
    assert event.step == 200
    assert [v.tag for v in event.summary.value] == ["loss", "accuracy", "auc", "count", "flag"]
    assert [v.WhichOneof("value") for v in event.summary.value] == ["simple_value"] * 5
    assert not any(v.HasField("metadata") for v in event.summary.value)
    assert [v.simple_value for v in event.summary.value] == [
        0.5, 0.75, np.float32(0.123456789), 3.0, 1.0
    ]


def test_evaluate_writes_simple_values_that_summary_iterator_readers_find(tmp_path):
    x, y = make_data()
    estimator = _estimator(str(tmp_path))
    estimator.train(input_fn(x, y), steps=2)
    results = estimator.evaluate(input_fn(x, y, repeat=False))
    read = {
        v.tag: v.simple_value
        for event in _events(tmp_path / "eval")
        for v in event.summary.value
        if v.WhichOneof("value") == "simple_value"
    }
    assert read["loss"] == np.float32(results["loss"])
    assert read["loss"] > 0


def test_evaluate_writes_its_metrics_once_per_call(tmp_path):
    x, y = make_data(num_examples=32)
    est = _estimator(str(tmp_path))
    est.train(input_fn(x, y), steps=2)
    results = [est.evaluate(input_fn(x, y, repeat=False)) for _ in range(2)]
    events = _result_events(est.eval_dir())
    assert len(events) == 2 and {e.step for e in events} == {2}
    for event, result in zip(events, results, strict=True):
        values = {v.tag: v.simple_value for v in event.summary.value}
        assert "global_step" not in values
        assert values == {
            k: np.float32(v) for k, v in result.items() if k != "global_step"
        }


def test_arrays_and_serialized_summaries_are_written_beside_the_numbers(tmp_path):
    image = tf.compat.v1.Summary(
        value=[tf.compat.v1.Summary.Value(tag="x", simple_value=2.0)]
    ).SerializeToString()
    results = {"loss": 0.5, "matrix": np.eye(2), "image": image, "skip": None}
    eval_summary.write_to_directory(results, 7, str(tmp_path))
    # One event, as 2.15's one add_summary call wrote.
    (event,) = _events(tmp_path)
    assert event.step == 7
    values = {value.tag: value for value in event.summary.value}
    assert sorted(values) == ["image/0", "loss", "matrix"]
    assert values["image/0"].simple_value == 2.0
    np.testing.assert_array_equal(tf.make_ndarray(values["matrix"].tensor), np.eye(2))


def test_event_records_carry_tfrecord_checksums_tensorflow_verifies(tmp_path):
    # The CRC-32C check value of "123456789".
    assert eval_summary._crc32c(b"123456789") == 0xE3069283
    for step in (1, 2):
        eval_summary.write_to_directory({"loss": float(step)}, step, str(tmp_path))
    (path,) = _event_files(tmp_path)
    records = list(tf.data.TFRecordDataset(path).as_numpy_iterator())
    events = [tf.compat.v1.Event.FromString(record) for record in records]
    assert events[0].file_version == "brain.Event:2"
    assert [(e.step, e.summary.value[0].simple_value) for e in events[1:]] == [(1, 1.0), (2, 2.0)]
    # A flipped byte is caught by the reader's checksum.
    data = bytearray(open(path, "rb").read())
    data[-6] ^= 0xFF
    open(path, "wb").write(bytes(data))
    with pytest.raises(tf.errors.DataLossError):
        list(tf.data.TFRecordDataset(path).as_numpy_iterator())


def test_one_eval_event_file_per_directory_and_process_as_2_15s_writer_cache(tmp_path):
    # 2.15 (its own run): two evaluate() calls, a train() between, two more
    # with name='a', then a second Estimator on the same model_dir left one
    # event file in eval/ and one in eval_a/.
    x, y = make_data(num_examples=32)
    est = _estimator(str(tmp_path))
    est.train(input_fn(x, y), steps=2)
    est.evaluate(input_fn(x, y, repeat=False))
    est.evaluate(input_fn(x, y, repeat=False))
    est.train(input_fn(x, y), steps=1)
    est.evaluate(input_fn(x, y, repeat=False), name="a")
    est.evaluate(input_fn(x, y, repeat=False), name="a")
    other = _estimator(str(tmp_path) + "/")
    other.evaluate(input_fn(x, y, repeat=False))
    assert len(_event_files(est.eval_dir())) == 1
    assert len(_event_files(est.eval_dir("a"))) == 1
    assert sorted(e.step for e in _result_events(est.eval_dir())) == [2, 2, 3]
    assert sorted(e.step for e in _result_events(est.eval_dir("a"))) == [3, 3]


def test_an_eval_dir_deleted_between_calls_gets_a_new_file_not_lost_summaries(tmp_path):
    # 2.15's cached writer went on writing into the deleted file: the later
    # evaluation's summary was lost. Here a new file holds it.
    x, y = make_data(num_examples=32)
    est = _estimator(str(tmp_path))
    est.train(input_fn(x, y), steps=2)
    est.evaluate(input_fn(x, y, repeat=False))
    shutil.rmtree(est.eval_dir())
    result = est.evaluate(input_fn(x, y, repeat=False))
    (event,) = _result_events(est.eval_dir())
    assert event.step == 2
    values = {v.tag: v.simple_value for v in event.summary.value}
    assert values["loss"] == np.float32(result["loss"])
    for path in _event_files(est.eval_dir()):
        os.remove(path)
    est.evaluate(input_fn(x, y, repeat=False))
    assert len(_result_events(est.eval_dir())) == 1


def test_the_evaluated_checkpoint_path_follows_in_an_event_of_its_own(tmp_path):
    # 2.15 wrote the results, then (a second add_summary) the evaluated
    # checkpoint's path as a string tensor tagged checkpoint_path, at the
    # same step; nothing when no checkpoint was evaluated.
    x, y = make_data(num_examples=32)
    est = _estimator(str(tmp_path / "model"))
    est.evaluate(input_fn(x, y, repeat=False), steps=1)
    assert not any(
        v.tag == "checkpoint_path" for e in _events(est.eval_dir()) for v in e.summary.value
    )
    est.train(input_fn(x, y), steps=3)
    est.evaluate(input_fn(x, y, repeat=False))
    results_event, path_event = _events(est.eval_dir())[-2:]
    assert results_event.step == path_event.step == 3
    assert "loss" in {v.tag for v in results_event.summary.value}
    (value,) = path_event.summary.value
    assert value.tag == "checkpoint_path"
    assert tf.make_ndarray(value.tensor) == os.path.join(str(tmp_path / "model"), "model.ckpt-3").encode()
