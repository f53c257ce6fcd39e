"""tf.estimator 2.15 names not provided yet fail with a message naming the fix."""

import csv
import importlib
from pathlib import Path

import pytest

import keras_estimator  # noqa: F401
from keras_estimator._src.base import missing_names

TSV = Path(__file__).resolve().parents[1] / "data" / "tf_estimator_2_15_api.tsv"
# tf.estimator namespace -> the module that stands for it, longest first.
NAMESPACES = {
    "tf.compat.v1.estimator.experimental": "keras_estimator.compat.estimator.experimental",
    "tf.compat.v1.estimator.inputs": "keras_estimator.compat.estimator.inputs",
    "tf.compat.v1.estimator": "keras_estimator.compat.estimator",
    "tf.estimator.experimental": "keras_estimator.experimental",
    "tf.estimator": "keras_estimator",
}


def _reference_names():
    with TSV.open() as handle:
        rows = list(csv.reader(handle, delimiter="\t"))[1:]
    names = set()
    for symbol, _, _ in rows:
        for namespace, module in NAMESPACES.items():
            if symbol.startswith(namespace + "."):
                names.add((module, symbol[len(namespace) + 1 :].split(".")[0]))
                break
    return sorted(names)


@pytest.mark.parametrize("module_name, name", _reference_names())
def test_every_2_15_name_is_provided_or_explained(module_name, name):
    module = importlib.import_module(module_name)
    if name in missing_names.MISSING[module_name]:
        with pytest.raises(AttributeError, match=r"of tf.estimator 2.15 is not in"):
            getattr(module, name)
        assert not hasattr(module, name)
    else:
        assert getattr(module, name) is not None


@pytest.mark.parametrize("module_name", sorted(missing_names.MISSING))
def test_listed_names_are_really_missing(module_name):
    module = importlib.import_module(module_name)
    provided = set(vars(module))
    assert not provided & set(missing_names.MISSING[module_name])


def test_other_names_keep_pythons_message():
    with pytest.raises(AttributeError, match="has no attribute 'NoSuchName'"):
        keras_estimator.NoSuchName  # noqa: B018


def test_a_missing_name_says_what_to_do_instead(monkeypatch):
    from keras_estimator.compat import estimator as v1

    table = missing_names.MISSING["keras_estimator.compat.estimator"]
    monkeypatch.setitem(table, "Gone", "use keras_estimator.Estimator instead")
    with pytest.raises(
        AttributeError,
        match=r"tf.compat.v1.estimator.Gone of tf.estimator 2.15 is not in "
        r"keras_estimator.compat.estimator: use keras_estimator.Estimator instead",
    ):
        v1.Gone  # noqa: B018
