"""Warm starting: WarmStartSettings, VocabInfo and Estimator(warm_start_from=...).

Checked against checkpoints written by tf.estimator 2.15: the iris model_dir
of tests/fixtures/tf215_iris (renamed variables, selection forms, optimizer
slots) and tests/fixtures/tf215_vocab, where tf.estimator itself warm-started
a model over a changed vocabulary and recorded the result.
"""

import inspect
import json
import logging
import re
import tempfile
from importlib import resources
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf
from hypothesis import given
from hypothesis import strategies as st

import keras_estimator as ke
from keras_estimator._src.checkpoint.warm_start import as_settings, warm_start
from keras_estimator.compat import layers

FIXTURES = Path(__file__).parents[1] / "fixtures"
IRIS = FIXTURES / "tf215_iris"
VOCAB = FIXTURES / "tf215_vocab"
IRIS_WEIGHTS = ("dense/kernel", "dense/bias", "dense_1/kernel", "dense_1/bias")
RENAMES = {
    "hidden/kernel": "dense/kernel",
    "hidden/bias": "dense/bias",
    "output/kernel": "dense_1/kernel",
    "output/bias": "dense_1/bias",
}


# ---- helpers ------------------------------------------------------------------
def write_checkpoint(prefix, values):
    """A TF1 name-based checkpoint holding `values` (name -> array)."""
    names = sorted(values)
    tf.raw_ops.SaveV2(
        prefix=str(prefix),
        tensor_names=names,
        shape_and_slices=[""] * len(names),
        tensors=[tf.constant(values[n]) for n in names],
    )
    return str(prefix)


def make_variables(specs):
    """name -> (initial value, trainable) as eager variables, in order."""
    return {
        name: tf.Variable(value, name=name, trainable=trainable)
        for name, (value, trainable) in specs.items()
    }


def load_iris():
    text = resources.files("keras_estimator").joinpath("data/iris.csv").read_text()
    rows = np.loadtxt(text.splitlines()[1:], delimiter=",")
    return rows[:, :4].astype("float32"), rows[:, 4].astype("int32")


def iris_model_fn(features, labels, mode, params):
    """The fixture's MLP; layer names and learning rate from params."""
    h = layers.dense(features["x"], 16, activation=tf.nn.relu, name=params["hidden"])
    logits = layers.dense(h, 3, name=params["output"])
    if mode == ke.ModeKeys.PREDICT:
        return ke.EstimatorSpec(mode, predictions={"logits": logits})
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
    if mode == ke.ModeKeys.EVAL:
        return ke.EstimatorSpec(mode, loss=loss)
    optimizer = (
        tf.compat.v1.train.GradientDescentOptimizer
        if params.get("sgd")
        else tf.compat.v1.train.AdagradOptimizer
    )(params["learning_rate"])
    train_op = optimizer.minimize(
        loss, global_step=tf.compat.v1.train.get_global_step()
    )
    return ke.EstimatorSpec(mode, loss=loss, train_op=train_op)


def train_iris(model_dir, warm_start_from, names=("hidden", "output")):
    """One step at learning rate 0: weights stay what warm start made them."""
    x, y = load_iris()
    est = ke.Estimator(
        iris_model_fn,
        model_dir=str(model_dir),
        config=ke.RunConfig(tf_random_seed=5),
        params={"hidden": names[0], "output": names[1], "learning_rate": 0.0},
        warm_start_from=warm_start_from,
    )
    est.train(
        lambda: tf.data.Dataset.from_tensor_slices(({"x": x}, y)).batch(32), steps=1
    )
    return est


def fixture_value(name):
    return tf.train.load_checkpoint(str(IRIS / "model_dir")).get_tensor(name)


# ---- the settings -------------------------------------------------------------
def signature_of(cls):
    return [(p.name, p.default) for p in inspect.signature(cls).parameters.values()]


def test_settings_have_the_tf_estimator_fields_and_defaults():
    assert ke.WarmStartSettings._fields == (
        "ckpt_to_initialize_from",
        "vars_to_warm_start",
        "var_name_to_vocab_info",
        "var_name_to_prev_var_name",
    )
    assert tuple(ke.WarmStartSettings("/ckpt")) == ("/ckpt", ".*", {}, {})
    # tf.estimator 2.15's parameters and defaults (its namedtuples' __new__).
    assert signature_of(ke.WarmStartSettings) == [
        ("ckpt_to_initialize_from", inspect.Parameter.empty),
        ("vars_to_warm_start", ".*"),
        ("var_name_to_vocab_info", None),
        ("var_name_to_prev_var_name", None),
    ]
    assert signature_of(ke.VocabInfo) == [
        ("new_vocab", inspect.Parameter.empty),
        ("new_vocab_size", inspect.Parameter.empty),
        ("num_oov_buckets", inspect.Parameter.empty),
        ("old_vocab", inspect.Parameter.empty),
        ("old_vocab_size", -1),
        ("backup_initializer", None),
        ("axis", 0),
    ]
    info = ke.VocabInfo(Path("new.txt"), 5, 1, "old.txt")
    assert tuple(info) == ("new.txt", 5, 1, "old.txt", -1, None, 0)
    assert isinstance(info, tuple) and info.old_vocab == "old.txt"


def test_settings_take_tf_compat_vocab_info():
    theirs = tf.compat.v1.train.VocabInfo("new.txt", 5, 1, "old.txt", axis=1)
    settings = ke.WarmStartSettings("/ckpt", var_name_to_vocab_info={"v": theirs})
    assert isinstance(settings.var_name_to_vocab_info["v"], ke.VocabInfo)
    assert tuple(settings.var_name_to_vocab_info["v"]) == tuple(theirs)


@pytest.mark.parametrize(
    ("make", "error", "message"),
    [
        (lambda: ke.WarmStartSettings(""), ValueError, r"ckpt_to_initialize_from must be set"),
        (lambda: ke.WarmStartSettings(7), TypeError, r"ckpt_to_initialize_from must be a path.*int"),
        (lambda: ke.WarmStartSettings("/c", 3), TypeError, r"vars_to_warm_start must be a regex.*got 3"),
        (lambda: ke.WarmStartSettings("/c", ["a", 1]), TypeError, r"vars_to_warm_start.*\['a', 1\]"),
        (lambda: ke.WarmStartSettings("/c", "dense(/"), ValueError, r"invalid regex 'dense\(/'"),
        (lambda: ke.WarmStartSettings("/c", var_name_to_vocab_info=["v"]), TypeError, r"var_name_to_vocab_info must be a dict"),
        (lambda: ke.WarmStartSettings("/c", var_name_to_vocab_info={"v": ("a", 1)}), TypeError, r"var_name_to_vocab_info\['v'\] must be a keras_estimator.VocabInfo, got tuple"),
        (lambda: ke.WarmStartSettings("/c", var_name_to_prev_var_name={"v": 1}), TypeError, r"'v' maps to 1"),
        (lambda: ke.WarmStartSettings("/c", var_name_to_prev_var_name={1: "v"}), TypeError, r"keyed by variable name"),
        (lambda: ke.VocabInfo(None, 5, 0, "old"), TypeError, r"new_vocab must be a path.*NoneType"),
        (lambda: ke.VocabInfo("new", "5", 0, "old"), TypeError, r"new_vocab_size must be an int, got str: '5'"),
        (lambda: ke.VocabInfo("new", 0, 0, "old"), ValueError, r"new_vocab_size must be >= 1, got 0"),
        (lambda: ke.VocabInfo("new", 5, -1, "old"), ValueError, r"num_oov_buckets must be >= 0, got -1"),
        (lambda: ke.VocabInfo("new", 5, True, "old"), TypeError, r"num_oov_buckets must be an int, got bool"),
        (lambda: ke.VocabInfo("new", 5, 0, "old", old_vocab_size=0), ValueError, r"old_vocab_size=0"),
        (lambda: ke.VocabInfo("new", 5, 0, "old", backup_initializer=0.5), TypeError, r"backup_initializer must be None or a callable.*0.5"),
        (lambda: ke.VocabInfo("new", 5, 0, "old", axis=2), ValueError, r"axis must be 0 .* or 1 .*got 2"),
    ],
)  # fmt: skip
def test_bad_settings_are_rejected_on_construction(make, error, message):
    with pytest.raises(error, match=message):
        make()


@pytest.mark.parametrize("error", [ValueError, TypeError])
def test_estimator_rejects_other_warm_start_from_types(error):
    # 2.15: ValueError "warm_start_from must be a string or a WarmStartSettings,
    # instead got <class 'int'>"; this package raised TypeError before.
    with pytest.raises(
        error,
        match=r"warm_start_from must be a string or a WarmStartSettings, instead got "
        r"<class 'int'>: 3\. Pass a checkpoint path",
    ):
        ke.Estimator(iris_model_fn, warm_start_from=3)


def test_a_path_warm_starts_trainables_and_a_saved_model_its_variables(tmp_path):
    assert as_settings(None) is None
    assert as_settings(tmp_path) == ke.WarmStartSettings(str(tmp_path), ".*")
    (tmp_path / "variables").mkdir()
    write_checkpoint(tmp_path / "variables" / "variables", {"v": np.zeros(2)})
    assert as_settings(str(tmp_path)).ckpt_to_initialize_from == str(
        tmp_path / "variables" / "variables"
    )


# ---- selection and errors on plain variables ----------------------------------
SELECTION_SPECS = {
    "global_step": (np.int64(0), False),
    "v1": (np.zeros(2, np.float32), True),
    "v1/Momentum": (np.zeros(2, np.float32), False),
    "v2": (np.zeros(2, np.float32), True),
    "v2/Momentum": (np.zeros(2, np.float32), False),
    "v10": (np.zeros(2, np.float32), True),
}


@pytest.mark.parametrize(
    ("selection", "expected"),
    [
        (".*", {"v1", "v2", "v10"}),  # one regex: trainable variables only
        ("v1", {"v1", "v10"}),  # matched from the start, like a scope
        ([".*"], set(SELECTION_SPECS)),  # a list: slots and global_step too
        (["v1", "v2[^/]"], {"v1", "v1/Momentum", "v10", "v2"}),  # 2.15's example
        (None, set()),  # only variables with a VocabInfo
        ("", set()),
    ],
)
def test_selection_forms_pick_what_tf_estimator_picked(tmp_path, selection, expected):
    stored = {
        name: (np.int64(42) if name == "global_step" else np.full(2, i, np.float32))
        for i, name in enumerate(SELECTION_SPECS, start=1)
    }
    path = write_checkpoint(tmp_path / "ckpt", stored)
    variables = make_variables(SELECTION_SPECS)
    done = warm_start(variables, ke.WarmStartSettings(path, selection))
    assert set(done) == expected
    for name, variable in variables.items():
        want = stored[name] if name in expected else SELECTION_SPECS[name][0]
        np.testing.assert_array_equal(variable.numpy(), want)


def test_a_variable_list_selects_those_variables(tmp_path):
    path = write_checkpoint(tmp_path / "ckpt", {"a": np.ones(2), "b": np.ones(2)})
    variables = make_variables({"a": (np.zeros(2), True), "b": (np.zeros(2), False)})
    done = warm_start(variables, ke.WarmStartSettings(path, [variables["b"]]))
    assert done == ["b"] and variables["a"].numpy().tolist() == [0, 0]


def test_warm_start_logs_what_it_did(tmp_path, caplog):
    path = write_checkpoint(tmp_path / "ckpt", {"old": np.ones(2), "b": np.ones(2)})
    variables = make_variables({"a": (np.zeros(2), True), "b": (np.zeros(2), True)})
    settings = ke.WarmStartSettings(path, var_name_to_prev_var_name={"a": "old"})
    with caplog.at_level(logging.INFO, logger="keras_estimator"):
        warm_start(variables, settings)
    assert re.search(
        r"Warm-started 2 variables from .*ckpt: a <- old, b\.", caplog.text
    )


def test_regex_matching_nothing_warns_with_the_available_names(tmp_path, caplog):
    path = write_checkpoint(tmp_path / "ckpt", {"v2": np.ones(2, np.float32)})
    variables = make_variables(SELECTION_SPECS)
    with caplog.at_level(logging.WARNING, logger="keras_estimator"):
        assert warm_start(variables, ke.WarmStartSettings(path, "dense/")) == []
        assert warm_start(variables, ke.WarmStartSettings(path, "global")) == []
        settings = ke.WarmStartSettings(path, ["v2[^/]", "dense"])
        assert warm_start(variables, settings) == ["v2"]
    messages = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert re.search(
        r"vars_to_warm_start='dense/' matches no trainable variable.*"
        r"Trainable variables: \['v1', 'v2', 'v10'\]",
        messages[0],
    )
    assert re.search(
        r"matches the non-trainable \['global_step'\].*pass a list", messages[1]
    )
    assert re.search(
        r"entry 'dense' matches no variable\. Variables: \['global_step', 'v1'",
        messages[2],
    )
    assert len(messages) == 3


def test_shape_mismatch_names_the_variable_and_both_shapes_and_changes_nothing(
    tmp_path,
):
    path = write_checkpoint(
        tmp_path / "ckpt", {"a": np.ones(2, np.float32), "b": np.ones(3, np.float32)}
    )
    variables = make_variables(
        {"a": (np.zeros(2, np.float32), True), "b": (np.zeros(4, np.float32), True)}
    )
    with pytest.raises(
        ValueError,
        match=r"variable 'b': it has shape \(4,\) but 'b' in checkpoint .* has shape \(3,\)",
    ):
        warm_start(variables, ke.WarmStartSettings(path))
    assert variables["a"].numpy().tolist() == [0, 0]  # checked before assigning


def test_dtype_mismatch_is_reported(tmp_path):
    path = write_checkpoint(tmp_path / "ckpt", {"a": np.ones(2, np.float64)})
    variables = make_variables({"a": (np.zeros(2, np.float32), True)})
    with pytest.raises(
        ValueError, match=r"'a' \(float32\) from 'a', stored as float64"
    ):
        warm_start(variables, ke.WarmStartSettings(path))


def test_prev_name_missing_from_checkpoint_is_named_with_close_candidates(tmp_path):
    stored = {
        name: np.ones(2, np.float32)
        for name in ("dense/kernel", "dense_1/kernel", "step")
    }
    path = write_checkpoint(tmp_path / "ckpt", stored)
    variables = make_variables({"hidden/kernel": (np.zeros(2, np.float32), True)})
    settings = ke.WarmStartSettings(
        path, var_name_to_prev_var_name={"hidden/kernel": "dense/kernal"}
    )
    with pytest.raises(
        ValueError,
        match=r"maps 'hidden/kernel' to 'dense/kernal', but checkpoint .* has no "
        r"'dense/kernal'\. Close names in the checkpoint: \['dense/kernel', 'dense_1/kernel'\]",
    ):
        warm_start(variables, settings)


def test_selected_variable_missing_from_checkpoint_is_an_error(tmp_path):
    path = write_checkpoint(tmp_path / "ckpt", {"dense/kernel": np.ones(2, np.float32)})
    variables = make_variables({"hidden/kernel": (np.zeros(2, np.float32), True)})
    with pytest.raises(
        ValueError,
        match=r"variable 'hidden/kernel' is selected by vars_to_warm_start='\.\*', but .* "
        r"has no 'hidden/kernel'.*\['dense/kernel'\].*var_name_to_prev_var_name",
    ):
        warm_start(variables, ke.WarmStartSettings(path))


@pytest.mark.parametrize(
    "field", ["var_name_to_prev_var_name", "var_name_to_vocab_info"]
)
def test_settings_for_variables_not_warm_started_are_errors(tmp_path, field):
    path = write_checkpoint(tmp_path / "ckpt", {"v1": np.ones(2, np.float32)})
    info = ke.VocabInfo("new.txt", 2, 0, "old.txt")
    value = {"v1/Momentum": "v1" if field == "var_name_to_prev_var_name" else info}
    settings = ke.WarmStartSettings(path, "v1", **{field: value})
    with pytest.raises(
        ValueError,
        match=rf"{field} names variables that are not warm-started: \['v1/Momentum'\].*"
        r"closest selected names: \{'v1/Momentum': \['v1', 'v10'\]\}.*single regex covers trainable",
    ):
        warm_start(make_variables(SELECTION_SPECS), settings)


def test_a_directory_without_checkpoint_is_an_error(tmp_path):
    with pytest.raises(ValueError, match=r"directory .* holds no checkpoint"):
        warm_start({}, ke.WarmStartSettings(str(tmp_path)))
    with pytest.raises(ValueError, match=r"no checkpoint at .*model\.ckpt-5"):
        warm_start({}, ke.WarmStartSettings(str(tmp_path / "model.ckpt-5")))


# ---- vocabularies ---------------------------------------------------------------
def write_vocab(path, tokens):
    path.write_text("".join(t + "\n" for t in tokens), encoding="utf-8")
    return str(path)


def vocab_setup(tmp_path, old_tokens, new_tokens, old_value):
    path = write_checkpoint(tmp_path / "ckpt", {"emb": old_value})
    return (
        path,
        write_vocab(tmp_path / "old.txt", old_tokens),
        write_vocab(tmp_path / "new.txt", new_tokens),
    )


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"new_vocab": "missing.txt"}, r"VocabInfo\.new_vocab of variable 'emb': vocabulary file '.*missing\.txt' does not exist"),
        ({"old_vocab": "missing.txt"}, r"VocabInfo\.old_vocab of variable 'emb': vocabulary file '.*missing\.txt' does not exist"),
        ({"new_vocab_size": 4, "num_oov_buckets": 0}, r"new\.txt' has 3 tokens, fewer than the 4"),
        ({"old_vocab_size": 5}, r"old\.txt' has 3 tokens, fewer than the 5"),
        ({"num_oov_buckets": 0}, r"more rows than new_vocab_size 3 \+ num_oov_buckets 0"),
        ({"axis": 1}, r"axis=1 it needs new_vocab_size 3 \+ num_oov_buckets 1 columns"),
    ],
)  # fmt: skip
def test_bad_vocabularies_are_reported(tmp_path, change, message):
    path, old, new = vocab_setup(
        tmp_path, ["a", "b", "c"], ["c", "a", "d"], np.ones((3, 2), np.float32)
    )
    fields = {
        "new_vocab": new,
        "new_vocab_size": 3,
        "num_oov_buckets": 1,
        "old_vocab": old,
    }
    for key, value in change.items():
        fields[key] = str(tmp_path / value) if key.endswith("vocab") else value
    settings = ke.WarmStartSettings(
        path, var_name_to_vocab_info={"emb": ke.VocabInfo(**fields)}
    )
    variables = make_variables({"emb": (np.zeros((4, 2), np.float32), True)})
    with pytest.raises(ValueError, match=message):
        warm_start(variables, settings)


def test_repeated_old_tokens_and_other_shapes_are_reported(tmp_path):
    path, old, new = vocab_setup(
        tmp_path, ["a", "b", "a"], ["a"], np.ones((3, 2), np.float32)
    )
    settings = ke.WarmStartSettings(
        path, var_name_to_vocab_info={"emb": ke.VocabInfo(new, 1, 0, old)}
    )
    variables = make_variables({"emb": (np.zeros((1, 2), np.float32), True)})
    with pytest.raises(ValueError, match=r"lists 'a' twice \(lines 1 and 3\)"):
        warm_start(variables, settings)
    variables = make_variables({"emb": (np.zeros((1, 5), np.float32), True)})
    with pytest.raises(
        ValueError,
        match=r"'emb' of shape \(1, 5\) \('emb' has shape \(3, 2\).*only the vocabulary axis may differ",
    ):
        warm_start(variables, settings)


TOKENS = [f"t{i}" for i in range(12)]


@given(
    old_tokens=st.lists(st.sampled_from(TOKENS), min_size=1, max_size=8, unique=True),
    new_tokens=st.lists(st.sampled_from(TOKENS), min_size=1, max_size=8, unique=True),
    num_oov_buckets=st.integers(0, 2),
    width=st.integers(1, 3),
    axis=st.sampled_from([0, 1]),
    backup=st.one_of(st.none(), st.floats(-4, 4, width=32)),
    old_vocab_size=st.integers(-1, 8),
    seed=st.integers(0, 2**16),
)
def test_every_shared_token_keeps_its_old_row_and_others_get_the_backup(
    old_tokens, new_tokens, num_oov_buckets, width, axis, backup, old_vocab_size, seed
):
    if axis == 1 or old_vocab_size == 0 or old_vocab_size > len(old_tokens):
        old_vocab_size = -1  # axis=1 always reads the whole old vocabulary
    rng = np.random.default_rng(seed)
    old_value = rng.normal(size=(len(old_tokens), width)).astype(np.float32)
    new_shape = (len(new_tokens) + num_oov_buckets, width)
    if axis == 1:
        old_value, new_shape = old_value.T, new_shape[::-1]
    with tempfile.TemporaryDirectory() as tmp:
        path, old, new = vocab_setup(Path(tmp), old_tokens, new_tokens, old_value)
        initializer = (
            None if backup is None else tf.compat.v1.constant_initializer(backup)
        )
        info = ke.VocabInfo(
            new,
            len(new_tokens),
            num_oov_buckets,
            old,
            old_vocab_size,
            initializer,
            axis,
        )
        variables = make_variables({"emb": (np.full(new_shape, 9.0, np.float32), True)})
        warm_start(variables, ke.WarmStartSettings(path, None, {"emb": info}))
        value = variables["emb"].numpy()
    if axis == 1:
        old_value, value = old_value.T, value.T
    considered = old_tokens if old_vocab_size == -1 else old_tokens[:old_vocab_size]
    fill = np.float32(0.0 if backup is None else backup)
    for row, token in enumerate(new_tokens + [None] * num_oov_buckets):
        if token in considered:
            np.testing.assert_array_equal(
                value[row], old_value[old_tokens.index(token)]
            )
        else:
            np.testing.assert_array_equal(value[row], np.full(width, fill))


class CountingInitializer:
    """The fixture's backup initializer: 1, 2, 3, ... offset by 100 per call."""

    def __init__(self):
        self.calls = 0

    def __call__(self, shape, dtype=tf.float32, partition_info=None):
        start = 100.0 * self.calls
        self.calls += 1
        count = int(np.prod(shape))
        return np.arange(start + 1, start + count + 1, dtype=np.float32).reshape(shape)


def new_vocab_model_fn(features, labels, mode):
    """make_tf215_vocab_fixture.new_model_fn, on keras_estimator."""
    ids = features["ids"]
    constant = tf.compat.v1.constant_initializer
    with tf.compat.v1.variable_scope("word"):
        embedding = tf.compat.v1.get_variable(
            "embedding", [9, 4], initializer=constant(-1.0)
        )
    with tf.compat.v1.variable_scope("tags"):
        tags = tf.compat.v1.get_variable("weights", [8, 2], initializer=constant(-2.0))
    with tf.compat.v1.variable_scope("output"):
        kernel = tf.compat.v1.get_variable("kernel", [4, 5], initializer=constant(-3.0))
        bias = tf.compat.v1.get_variable("bias", [5], initializer=constant(0.25))
    hidden = tf.nn.embedding_lookup(embedding, ids) + tf.reduce_sum(
        tf.nn.embedding_lookup(tags, tf.minimum(ids, 7)), axis=1, keepdims=True
    )
    logits = tf.matmul(hidden, kernel) + bias
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
    train_op = tf.compat.v1.assign_add(tf.compat.v1.train.get_global_step(), 1)
    return ke.EstimatorSpec(mode, loss=loss, train_op=train_op)


def test_vocabulary_remapping_matches_tf_estimator(tmp_path):
    tags_backup, output_backup = CountingInitializer(), CountingInitializer()
    settings = ke.WarmStartSettings(
        ckpt_to_initialize_from=str(VOCAB / "model_dir"),
        vars_to_warm_start="word/|tags/|output/kernel",
        var_name_to_vocab_info={
            "word/embedding": ke.VocabInfo(
                str(VOCAB / "new_vocab.txt"), 7, 2, str(VOCAB / "old_vocab.txt")
            ),
            "tags/weights": ke.VocabInfo(
                str(VOCAB / "new_vocab.txt"), 7, 1, str(VOCAB / "old_vocab.txt"),
                old_vocab_size=5, backup_initializer=tags_backup,
            ),
            "output/kernel": ke.VocabInfo(
                str(VOCAB / "new_classes.txt"), 4, 1, str(VOCAB / "old_classes.txt"),
                backup_initializer=output_backup, axis=1,
            ),
        },
        var_name_to_prev_var_name={
            "word/embedding": "embedding/weights",
            "output/kernel": "logits/kernel",
        },
    )  # fmt: skip
    est = ke.Estimator(
        new_vocab_model_fn, model_dir=str(tmp_path), warm_start_from=settings
    )
    ids = np.arange(16, dtype=np.int64) % 9
    labels = (np.arange(16) % 4).astype(np.int32)
    est.train(
        lambda: tf.data.Dataset.from_tensor_slices(({"ids": ids}, labels)).batch(8),
        steps=1,
    )
    expected = json.loads((VOCAB / "warm_started.json").read_text())
    assert (tags_backup.calls, output_backup.calls) == (2, 2)
    for name, record in expected.items():
        want = np.asarray(record["values"], np.float32).reshape(record["shape"])
        np.testing.assert_array_equal(est.get_variable_value(name), want, err_msg=name)


# ---- Estimator(warm_start_from=...) on the tf.estimator 2.15 iris fixture -----
def test_renamed_variables_get_the_fixture_weights_and_lists_warm_slots(tmp_path):
    trainables = train_iris(
        tmp_path / "a",
        ke.WarmStartSettings(IRIS / "model_dir", var_name_to_prev_var_name=RENAMES),
    )
    slots = {f"{new}/Adagrad": f"{old}/Adagrad" for new, old in RENAMES.items()}
    everything = train_iris(
        tmp_path / "b",
        ke.WarmStartSettings(
            str(IRIS / "model_dir"),
            [".*"],
            var_name_to_prev_var_name={**RENAMES, **slots},
        ),
    )
    for new, old in RENAMES.items():
        np.testing.assert_array_equal(
            trainables.get_variable_value(new), fixture_value(old)
        )
        np.testing.assert_array_equal(
            everything.get_variable_value(new), fixture_value(old)
        )
    # Same weights, same batch, same gradient g: a warm slot holds fixture + g**2,
    # a fresh one Adagrad's initial 0.1 + g**2.
    for new, old in slots.items():
        np.testing.assert_allclose(
            everything.get_variable_value(new) - trainables.get_variable_value(new),
            fixture_value(old) - 0.1,
            rtol=1e-5,
            atol=1e-5,
        )
    # A list warm-starts global_step too, as in tf.estimator 2.15.
    assert trainables.get_variable_value("global_step") == 1
    assert everything.get_variable_value("global_step") == 61
    x, _ = load_iris()
    logits = np.stack(
        [
            p["logits"]
            for p in trainables.predict(
                lambda: tf.data.Dataset.from_tensor_slices({"x": x}).batch(50)
            )
        ]
    )
    expected = np.load(IRIS / "predictions.npz")["logits"]
    np.testing.assert_allclose(logits, expected, rtol=1e-5, atol=1e-5)


def test_regex_and_list_select_exactly_their_variables(tmp_path):
    output_renames = {k: v for k, v in RENAMES.items() if k.startswith("output/")}
    slot_renames = {f"{k}/Adagrad": f"{v}/Adagrad" for k, v in output_renames.items()}
    fresh = train_iris(tmp_path / "fresh", None)
    by_regex = train_iris(
        tmp_path / "regex",
        ke.WarmStartSettings(
            IRIS / "model_dir", "output/", var_name_to_prev_var_name=output_renames
        ),
    )
    by_list = train_iris(
        tmp_path / "list",
        ke.WarmStartSettings(
            IRIS / "model_dir",
            ["output/"],
            var_name_to_prev_var_name={**output_renames, **slot_renames},
        ),
    )
    for new, old in RENAMES.items():
        for est in (by_regex, by_list):
            want = fixture_value(old) if new.startswith("output/") else None
            got = est.get_variable_value(new)
            if want is None:  # not selected: its seeded initial value
                np.testing.assert_array_equal(got, fresh.get_variable_value(new))
                assert not np.array_equal(got, fixture_value(old))
            else:
                np.testing.assert_array_equal(got, want)
    # Both runs have the same weights, so the same gradient g: the list's warm
    # slots hold fixture + g**2, the regex's fresh ones Adagrad's 0.1 + g**2.
    for new, old in slot_renames.items():
        np.testing.assert_allclose(
            by_list.get_variable_value(new) - by_regex.get_variable_value(new),
            fixture_value(old) - 0.1,
            rtol=1e-5,
            atol=1e-5,
        )
    for name in ("hidden/kernel/Adagrad", "hidden/bias/Adagrad"):
        np.testing.assert_array_equal(
            by_list.get_variable_value(name), by_regex.get_variable_value(name)
        )


def test_a_path_warm_starts_only_a_model_dir_without_checkpoint(tmp_path):
    est = train_iris(tmp_path / "m", str(IRIS / "model_dir"), names=(None, None))
    for name in IRIS_WEIGHTS:
        np.testing.assert_array_equal(est.get_variable_value(name), fixture_value(name))
    # With a checkpoint in model_dir, warm_start_from is not read at all (this
    # one would fail: it holds no checkpoint).
    empty = tmp_path / "empty"
    empty.mkdir()
    again = train_iris(
        tmp_path / "m", ke.WarmStartSettings(str(empty)), names=(None, None)
    )
    assert again.get_variable_value("global_step") == 2
    np.testing.assert_array_equal(
        again.get_variable_value("dense/kernel"), fixture_value("dense/kernel")
    )


def test_warm_start_after_an_evaluation_without_checkpoint(tmp_path):
    x, y = load_iris()
    est = ke.Estimator(
        iris_model_fn,
        model_dir=str(tmp_path),
        params={"hidden": None, "output": None, "learning_rate": 0.0, "sgd": True},
        warm_start_from=str(IRIS / "model_dir"),
    )
    data = lambda: tf.data.Dataset.from_tensor_slices(({"x": x}, y)).batch(32)  # noqa: E731
    est.evaluate(data, steps=1)  # creates the weights, before any warm start
    est.train(data, steps=1)
    np.testing.assert_array_equal(
        est.get_variable_value("dense/kernel"), fixture_value("dense/kernel")
    )
