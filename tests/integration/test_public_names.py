"""The public modules re-export exactly the names of the one table.

`keras_estimator/_src/base/public_names.py` lists every public name with the
namespaces that hold it; the public modules import the same names explicitly.
A name added to a module and not to the table, or the other way round, fails
here.
"""

import ast
import collections
import importlib
import inspect
import pathlib

import pytest
import tensorflow as tf

from keras_estimator._src.base import public_names

# Served by a module of this package (tf.compat.v1.train is TensorFlow's own).
MODULE_NAMESPACES = [
    ns for ns in public_names.NAMESPACES if ns != public_names.V1_TRAIN
]

# Imported by a public module for its own use, not re-exported.
NOT_PUBLIC: set[tuple[str, str]] = set()


def _source_tree(module):
    path = pathlib.Path(inspect.getfile(module))
    return ast.parse(path.read_text(), str(path))


def _top_level_statements(tree):
    """Module-level statements, and those of an `if typing.TYPE_CHECKING:` block."""
    for node in tree.body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "typing.TYPE_CHECKING":
            yield from node.body
        else:
            yield node


def _imports(tree):
    """(bound name, alias or None) of each top-level `from ... import`."""
    for node in _top_level_statements(tree):
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                yield alias.asname or alias.name, alias.asname


def _all_is_literal(tree):
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id == "__all__"
            for target in node.targets
        ):
            return isinstance(node.value, (ast.List, ast.Tuple))
    raise AssertionError("no __all__")


def _public_imports(namespace):
    module = importlib.import_module(namespace)
    return sorted(
        bound
        for bound, _ in _imports(_source_tree(module))
        if not bound.startswith("_") and (namespace, bound) not in NOT_PUBLIC
    )


def test_each_name_is_once_in_each_namespace():
    pairs = collections.Counter(
        (namespace, row.name)
        for row in public_names.TABLE
        for namespace in row.namespaces
    )
    assert [pair for pair, count in pairs.items() if count > 1] == []
    assert {ns for row in public_names.TABLE for ns in row.namespaces} == set(
        public_names.NAMESPACES
    )


@pytest.mark.parametrize("namespace", MODULE_NAMESPACES)
def test_module_imports_exactly_the_table_names(namespace):
    assert _public_imports(namespace) == public_names.names_in(namespace)


@pytest.mark.parametrize("namespace", MODULE_NAMESPACES)
def test_all_is_the_table_names(namespace):
    module = importlib.import_module(namespace)
    assert list(module.__all__) == public_names.names_in(namespace)


@pytest.mark.parametrize("namespace", MODULE_NAMESPACES)
def test_names_are_the_table_objects(namespace):
    module = importlib.import_module(namespace)
    wrong = [
        f"{row.name} is not {row.target}"
        for row in public_names.entries_in(namespace)
        if getattr(module, row.name) is not row.resolve()
    ]
    assert wrong == []


@pytest.mark.parametrize("namespace", MODULE_NAMESPACES)
def test_derived_all_goes_with_explicit_re_exports(namespace):
    """Where __all__ is computed, `X as X` tells type checkers what is public."""
    tree = _source_tree(importlib.import_module(namespace))
    assert not _all_is_literal(tree), f"{namespace}: derive __all__ from the table"
    plain = [
        bound
        for bound, alias in _imports(tree)
        if not bound.startswith("_")
        and (namespace, bound) not in NOT_PUBLIC
        and alias != bound
    ]
    assert plain == [], f"write these as `from ... import X as X`: {plain}"


def test_train_names_replace_tensorflow_names():
    """install() replaces tf.compat.v1.train names; it adds none."""
    names = public_names.names_in(public_names.V1_TRAIN)
    assert names
    assert [name for name in names if not hasattr(tf.compat.v1.train, name)] == []
    assert set(names) <= set(public_names.names_in(public_names.ESTIMATOR))


def test_submodules_are_namespaces():
    assert public_names.submodules_of(public_names.ESTIMATOR) == {
        "experimental": public_names.EXPERIMENTAL,
        "export": public_names.EXPORT,
    }
    assert public_names.submodules_of(public_names.V1) == {
        "experimental": public_names.V1_EXPERIMENTAL,
        "export": public_names.EXPORT,
        "inputs": public_names.V1_INPUTS,
        "tpu": public_names.V1_TPU,
    }


def test_unknown_namespace_is_an_error():
    with pytest.raises(ValueError, match="not one of"):
        public_names.names_in("tf.estimator")
