"""Files a receiver fn or model_fn adds to ASSET_FILEPATHS are exported, as in 2.15.

2.15's SavedModel builder copied each file named by a string constant in the
graph's ASSET_FILEPATHS collection into the export's `assets/` (a second
file of the same base name as `<name>_1`), and refused any other tensor
there with a TypeError. Figures from tf.estimator 2.15 (tensorflow-cpu
2.15.1, tensorflow-estimator 2.15.0) on the same programs: the files
`colors.txt` and `colors.txt_1` with their contents, and 42, -2, -20, -22
served for blue, red, cyan, pink. 2.15's TF1 loader gave the copies' paths
to its init ops only, so its serving graph, reading the file itself, failed
once the original was gone; here the signature reads the copy's path, so
the export still serves after being moved.
"""

from __future__ import annotations

import os
import shutil

import numpy as np
import pytest
import tensorflow as tf

import keras_estimator

v1 = tf.compat.v1
COLORS = ["blue", "red", "cyan", "pink"]
SERVED = [42.0, -2.0, -20.0, -22.0]


def _model_fn(features, labels, mode):
    w = v1.get_variable("w", [], initializer=v1.constant_initializer(2.0))
    p = features["x"] * w
    return keras_estimator.EstimatorSpec(
        mode,
        predictions={"p": p},
        loss=tf.reduce_sum(p),
        train_op=v1.assign_add(v1.train.get_global_step(), 1),
    )


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    est = keras_estimator.Estimator(_model_fn, str(tmp_path_factory.mktemp("model")))
    est.train(lambda: ({"x": tf.constant([1.0])}, None), steps=1)
    return est


def _vocabulary(directory, text):
    directory.mkdir()
    path = directory / "colors.txt"
    path.write_text(text)
    return str(path)


def _position_in(path_tensor, color):
    """Where `color` is among the file's lines, or -1."""
    words = tf.strings.split([tf.strings.strip(tf.io.read_file(path_tensor))], "\n").values
    hits = tf.equal(color[:, None], words[None, :])
    position = tf.cast(tf.argmax(tf.cast(hits, tf.int64), 1), tf.float32)
    return tf.where(tf.reduce_any(hits, 1), position, -1.0)


def _export_reading_two_assets(est, tmp_path):
    first = _vocabulary(tmp_path / "a", "red\ngreen\nblue\n")
    second = _vocabulary(tmp_path / "b", "cyan\nblue\n")

    def receiver_fn():
        color = v1.placeholder(tf.string, [None], name="color")
        a = tf.constant(first, name="first_vocabulary")
        b = tf.constant(second, name="second_vocabulary")
        v1.add_to_collection(v1.GraphKeys.ASSET_FILEPATHS, a)
        v1.add_to_collection(v1.GraphKeys.ASSET_FILEPATHS, b)
        x = _position_in(a, color) * 10.0 + _position_in(b, color)
        return keras_estimator.export.ServingInputReceiver({"x": x}, {"color": color})

    path = est.export_saved_model(str(tmp_path / "export"), receiver_fn)
    return path.decode()


def _served_in_a_tf1_session(path):
    with tf.Graph().as_default() as graph, v1.Session(graph=graph) as session:
        signature = v1.saved_model.load(session, ["serve"], path).signature_def[
            "serving_default"
        ]
        return session.run(
            signature.outputs["p"].name, {signature.inputs["color"].name: COLORS}
        )


def _served_by_tf2(path):
    signature = tf.saved_model.load(path).signatures["serving_default"]
    return signature(color=tf.constant(COLORS))["p"].numpy()


def test_each_file_is_copied_into_assets_under_2_15_s_names(trained, tmp_path):
    path = _export_reading_two_assets(trained, tmp_path)

    assets = os.path.join(path, "assets")
    assert sorted(os.listdir(assets)) == ["colors.txt", "colors.txt_1"]
    with open(os.path.join(assets, "colors.txt")) as f:
        assert f.read() == "red\ngreen\nblue\n"
    with open(os.path.join(assets, "colors.txt_1")) as f:
        assert f.read() == "cyan\nblue\n"


def test_a_moved_export_serves_from_its_copies(trained, tmp_path):
    path = _export_reading_two_assets(trained, tmp_path)
    np.testing.assert_array_equal(_served_by_tf2(path), SERVED)

    moved = str(tmp_path / "moved")
    shutil.copytree(path, moved)
    shutil.rmtree(tmp_path / "a")
    shutil.rmtree(tmp_path / "b")

    np.testing.assert_array_equal(_served_by_tf2(moved), SERVED)
    np.testing.assert_array_equal(_served_in_a_tf1_session(moved), SERVED)


def test_an_asset_beside_a_parsing_receiver_as_in_2_15_s_own_test(trained, tmp_path):
    # 2.15's estimator_test.test_export_saved_model_assets: a constant added
    # to ASSET_FILEPATHS and passed as a feature the model_fn ignores.
    vocabulary = tmp_path / "my_vocab_file"
    vocabulary.write_text("apple\nbanana\n")
    parsing_fn = keras_estimator.export.build_parsing_serving_input_receiver_fn(
        {"x": tf.io.FixedLenFeature([], tf.float32)}
    )

    def receiver_fn():
        receiver = parsing_fn()
        filename = tf.constant(str(vocabulary), name="asset_filepath")
        v1.add_to_collection(v1.GraphKeys.ASSET_FILEPATHS, filename)
        receiver.features["bogus_filename"] = filename
        return receiver

    path = trained.export_saved_model(str(tmp_path / "export"), receiver_fn).decode()

    with open(os.path.join(path, "assets", "my_vocab_file")) as f:
        assert f.read() == "apple\nbanana\n"
    example = tf.train.Example(
        features=tf.train.Features(
            feature={"x": tf.train.Feature(float_list=tf.train.FloatList(value=[3.0]))}
        )
    ).SerializeToString()
    served = tf.saved_model.load(path).signatures["serving_default"](
        examples=tf.constant([example])
    )
    np.testing.assert_array_equal(served["p"].numpy(), [6.0])


def test_an_asset_tensor_that_is_no_constant_is_refused_as_in_2_15(trained, tmp_path):
    def receiver_fn():
        name = v1.placeholder(tf.string, [], name="name")
        v1.add_to_collection(v1.GraphKeys.ASSET_FILEPATHS, tf.strings.join([name, ".txt"]))
        x = v1.placeholder(tf.float32, [None], name="x")
        return keras_estimator.export.ServingInputReceiver({"x": x}, {"x": x, "name": name})

    with pytest.raises(TypeError, match=r"must be of type constant.*tf\.constant\(path\)"):
        trained.export_saved_model(str(tmp_path / "export"), receiver_fn)
