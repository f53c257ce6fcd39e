"""The package's layout rules (docs/architecture.md), checked on the source.

Each folder of `keras_estimator/_src/` has a layer; a module may import its
own folder and folders of lower layers only, so dependencies run one way.
Public modules (everything outside `_src/`) are shells that re-export.

Private TensorFlow and Keras use lives in `_src/tf_internals/` only, where
each touch is a `TOUCHES` entry that `tests/tf_internals/` checks still
exists. Everywhere else `private_uses` (below) flags, on the syntax tree:

* an import of a private module, `tensorflow.python`, `tensorflow._api`,
  `keras.src` or `keras._tf_keras`, in any form (`import x.y`,
  `from x import y`, `from tensorflow import python`), and any string that
  is such a module's dotted name (`importlib.import_module("keras.src.x")`,
  `sys.modules["tensorflow._api.v2.compat.v1"]`, `startswith("keras.src.")`);
* `obj._name` read, written or deleted, and `getattr` / `setattr` /
  `hasattr` / `delattr` with a literal private name (`"_name"`, an f-string
  starting with `_`, or a loop variable running over literal names), unless
  one of these says `obj` is ours:
  1. `obj` is `self`, `cls`, `super()` or `type(...)`, in a class without a
     TensorFlow or Keras base; in a class with one (a `keras.Model`,
     `keras.callbacks.Callback`, ...) only names the module itself defines
     pass, so an inherited private member of Keras' is flagged;
  2. `obj` is a name the module imported from anything but TensorFlow or
     Keras: this package's modules and classes, or the standard library
     (`sys._getframe`); a chain from a TensorFlow or Keras import
     (`tf._x`, `ops._default_graph_stack`) is always flagged;
  3. the module defines `_name` itself (a `def`, `class`, assigned name or
     `self._name = ...`): its own private member, reached on another
     instance (`new._service` in `RunConfig.replace`);
  4. `_name` is namedtuple's public API (`_replace`, `_fields`, ...);
  5. `(module, _name)` is in `PRIVATE_ATTRIBUTE_ALLOWLIST`: a private member
     of one of this package's classes used from another module, each named
     with the class it belongs to. The list is small on purpose: each entry
     is a coupling worth removing, and a stale entry fails a test.
  Any other `obj._name` is taken for TensorFlow's or Keras': the checker
  cannot know the object's type, and that is the case it exists for.

What it cannot see, and review must: a private name computed at run time
(`getattr(obj, name)`), a TensorFlow private that shares its name with one
the module defines, a subclass assigning over its Keras base's private
state (`self._tracker = ...`) or overriding a private method, and a
subclass of one of our Keras subclasses defined in another module.
`test_private_use_checker_flags_planted_violations` runs it on planted code
so that it cannot pass by seeing nothing.
"""

import ast
import pathlib
import re

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parents[2] / "keras_estimator"
SRC = PACKAGE / "_src"

# The table of docs/architecture.md. Folders of one layer may not import
# each other.
LAYERS = {
    "tf_internals": 0,
    "base": 1,
    "io": 1,
    "v1_layers": 1,
    "distribute": 2,
    "engine": 3,
    "checkpoint": 4,
    "feature_column": 4,
    "hooks": 5,
    "export": 5,
    "head": 5,
    "estimator": 6,
    "training": 7,
    "keras_interop": 7,
    "canned": 7,
    "tpu": 7,
    "zero_change": 8,
    "cli": 9,
}


def _imports(path):
    """(line, imported module) for every keras_estimator import in `path`."""
    tree = ast.parse(path.read_text(), str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module.split(".")[0] == "keras_estimator":
                for alias in node.names:
                    yield node.lineno, f"{node.module}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "keras_estimator":
                    yield node.lineno, alias.name


def _folder(path):
    return path.relative_to(SRC).parts[0]


def _src_modules():
    return sorted(p for p in SRC.rglob("*.py") if len(p.relative_to(SRC).parts) > 1)


def test_every_src_folder_has_a_layer():
    folders = {p.name for p in SRC.iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert folders <= set(LAYERS), f"give {sorted(folders - set(LAYERS))} a layer"
    assert not [p for p in SRC.glob("*.py") if p.name != "__init__.py"]


def test_src_modules_import_only_their_folder_and_lower_layers():
    wrong = []
    for path in _src_modules():
        folder = _folder(path)
        for line, module in _imports(path):
            parts = module.split(".")
            where = f"{path.relative_to(PACKAGE)}:{line} imports {module}"
            if parts[1:2] != ["_src"]:
                # Only install() may reach the public modules it installs.
                if folder != "zero_change":
                    wrong.append(where + " (a public module)")
                continue
            target = parts[2]
            if target != folder and LAYERS[target] >= LAYERS[folder]:
                wrong.append(
                    where + f" ({folder}: layer {LAYERS[folder]}, "
                    f"{target}: layer {LAYERS[target]})"
                )
    assert not wrong, "\n".join(wrong)


_SRC_MODULE_NAME = re.compile(r"keras_estimator\._src\.(\w+)(\.\w+)*")


def _dotted(node):
    """`a.b.c` for a chain of attributes on a name, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([node.id, *reversed(parts)])


def _with_parents(tree):
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            child.parent = node
    return tree


def upward_reaches(source, where, folder):
    """`where:line: module` for every reach of `_src/<folder>` into its layer or above.

    Every form a module can reach another by: `import x`, `from x import y`
    (`from keras_estimator._src import estimator` too), relative imports
    (resolved from `folder`), a string naming the module (as
    `importlib.import_module` takes it), and an attribute chain from the
    package (`keras_estimator._src.estimator.estimator.Estimator` after
    `import keras_estimator`). `where` is the module's path under `_src/`.
    """
    tree = _with_parents(ast.parse(source, where))
    package = ["keras_estimator", "_src", *pathlib.PurePosixPath(where).parts[:-1]]
    reached = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = node.module.split(".") if node.module else []
            if node.level:
                base = package[: len(package) - node.level + 1] + base
            names = [".".join(base)]
            if base[:2] == ["keras_estimator", "_src"] and len(base) == 2:
                names = [f"keras_estimator._src.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            names = [node.value]
        elif isinstance(node, ast.Attribute) and not isinstance(
            getattr(node, "parent", None), ast.Attribute
        ):
            names = [_dotted(node) or ""]
        else:
            continue
        for name in names:
            match = _SRC_MODULE_NAME.fullmatch(name)
            target = match.group(1) if match else None
            if target in LAYERS and target != folder and LAYERS[target] >= LAYERS[folder]:
                reached.append(f"{where}:{node.lineno}: {name}")
    return reached


def test_src_modules_reach_no_folder_of_their_layer_or_above_in_any_form():
    """Above all the engine: it never reaches the Estimator, in any form."""
    wrong = []
    for path in _src_modules():
        where = str(path.relative_to(SRC))
        wrong += upward_reaches(path.read_text(), where, _folder(path))
    assert not wrong, "\n".join(wrong)


# An engine module reaching the Estimator (layer 6 over the engine's 3).
_PLANTED_UPWARD = {
    "from-import": "from keras_estimator._src.estimator.estimator import Estimator\n",
    "import": "import keras_estimator._src.estimator.estimator\n",
    "folder from the package": "from keras_estimator._src import estimator\n",
    "relative": "from ..estimator import estimator\n",
    "relative folder": "from .. import estimator\n",
    "inside a function": (
        "def f():\n    from keras_estimator._src.estimator import estimator\n"
    ),
    "type-checking only": (
        "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n"
        "    from keras_estimator._src.estimator.estimator import Estimator\n"
    ),
    "module name string": (
        "import importlib\n\n\ndef f():\n"
        '    return importlib.import_module("keras_estimator._src.estimator.estimator")\n'
    ),
    "attribute chain": (
        "import keras_estimator\n\n\ndef f():\n"
        "    return keras_estimator._src.estimator.estimator.Estimator\n"
    ),
    "same layer": "from keras_estimator._src.engine import loop\nfrom keras_estimator._src.export import saved_model\n",
}


@pytest.mark.parametrize("name", sorted(_PLANTED_UPWARD))
def test_upward_reach_checker_flags_planted_violations(name):
    source = _PLANTED_UPWARD[name]
    reached = upward_reaches(source, "engine/planted.py", "engine")
    line = len(source.rstrip("\n").split("\n"))
    assert [r.split(": ")[0] for r in reached] == [f"engine/planted.py:{line}"], (name, reached)


def test_upward_reach_checker_passes_downward_and_own_folder_reaches():
    source = (
        "from keras_estimator._src.engine import loop\n"
        "from keras_estimator._src.base import mode_keys\n"
        "from . import fetches\nfrom ..tf_internals import keras_trainer\n"
        "import keras_estimator._src.distribute.multi_worker\n"
        'NAME = "keras_estimator.model_fn_to_keras is the public name"\n'
    )
    assert upward_reaches(source, "engine/planted.py", "engine") == []


@pytest.mark.parametrize(
    "path",
    sorted(p for p in PACKAGE.rglob("*.py") if SRC not in p.parents),
    ids=lambda p: str(p.relative_to(PACKAGE)),
)
def test_public_modules_only_re_export(path):
    tree = ast.parse(path.read_text(), str(path))
    defined = [
        getattr(node, "name", type(node).__name__)
        for node in tree.body
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    ]
    assert not defined, f"{path.name} defines {defined}: move them under _src/"
    # `__main__.py` runs `python -m keras_estimator`: the command line.
    assert not path.name.startswith("_") or path.name in ("__init__.py", "__main__.py")


# ---- private TensorFlow/Keras use only in tf_internals/ --------------------

PRIVATE_MODULES = ("tensorflow.python", "tensorflow._api", "keras.src", "keras._tf_keras")
_PRIVATE_MODULE_NAME = re.compile(
    "(?:" + "|".join(re.escape(module) for module in PRIVATE_MODULES) + r")(?:\.\w+)*\.?"
)
_TF_PACKAGES = frozenset({"tensorflow", "keras", "tf_keras"})
_NAMEDTUPLE_API = frozenset({"_replace", "_fields", "_asdict", "_make", "_field_defaults"})
_ATTRIBUTE_FUNCTIONS = frozenset({"getattr", "setattr", "hasattr", "delattr"})

# (module under keras_estimator/, private attribute): a private member of
# one of this package's classes that another module uses.
PRIVATE_ATTRIBUTE_ALLOWLIST = {
    # base/estimator_spec.py: EstimatorSpec with the mode a model_fn left out.
    ("_src/engine/model_fn_trace.py", "_with_mode"),
    # hooks/checkpoint_hooks.py: CheckpointSaverHook's listeners.
    ("_src/estimator/estimator.py", "_listeners"),
    # head/regression_heads.py: RegressionHead's inverse link (2.8's
    # explanations refuse one, as 2.8 did).
    ("_src/canned/boosted_trees.py", "_inverse_link_fn"),
}


def _is_private(name):
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _is_private_module(name):
    return any(name == module or name.startswith(module + ".") for module in PRIVATE_MODULES)


def _root_name(node):
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def _literal_names(node, loop_names):
    """The attribute names a `getattr` argument spells out (none if computed)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.JoinedStr) and node.values:
        first = node.values[0]
        if isinstance(first, ast.Constant) and str(first.value).startswith("_"):
            return [str(first.value)]
    if isinstance(node, ast.Name):
        return loop_names.get(node.id, [])
    return []


class _PrivateUses(ast.NodeVisitor):
    """Collects a module's private TensorFlow/Keras uses (see the module docstring)."""

    def __init__(self, tree, where, allowlist):
        self.where, self.allowlist = where, allowlist
        self.found, self.allowed = [], set()
        self.tf_names, self.other_imports, self.defined = set(), set(), set()
        self.loop_names = {}  # loop variable -> the literal strings it runs over
        self.in_tf_class = [False]
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    top = alias.name.split(".")[0]
                    names = self.tf_names if top in _TF_PACKAGES else self.other_imports
                    names.add(alias.asname or top)
            elif isinstance(node, ast.ImportFrom):
                from_tf = node.level == 0 and (node.module or "").split(".")[0] in _TF_PACKAGES
                for alias in node.names:
                    names = self.tf_names if from_tf else self.other_imports
                    names.add(alias.asname or alias.name)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self.defined.add(node.name)
            elif (
                isinstance(node, (ast.For, ast.comprehension))
                and isinstance(node.target, ast.Name)
                and isinstance(node.iter, (ast.Tuple, ast.List, ast.Set))
            ):
                self.loop_names.setdefault(node.target.id, []).extend(
                    item.value
                    for item in node.iter.elts
                    if isinstance(item, ast.Constant) and isinstance(item.value, str)
                )
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                self.defined.add(node.id)
            elif (
                isinstance(node, ast.Attribute)
                and isinstance(node.ctx, ast.Store)
                and isinstance(node.value, ast.Name)
                and node.value.id in ("self", "cls")
            ):
                self.defined.add(node.attr)

    def _flag(self, node, what):
        self.found.append(f"{self.where}:{node.lineno}: {what}")

    def _is_ours(self, base, name):
        if (isinstance(base, ast.Name) and base.id in ("self", "cls")) or (
            isinstance(base, ast.Call)
            and isinstance(base.func, ast.Name)
            and base.func.id in ("super", "type")
        ):
            return not self.in_tf_class[-1] or name in self.defined
        if _root_name(base) in self.tf_names:
            return False
        if isinstance(base, ast.Name) and base.id in self.other_imports:
            return True
        if name in _NAMEDTUPLE_API or name in self.defined:
            return True
        if (self.where, name) in self.allowlist:
            self.allowed.add((self.where, name))
            return True
        return False

    def visit_ClassDef(self, node):
        self.in_tf_class.append(any(_root_name(base) in self.tf_names for base in node.bases))
        self.generic_visit(node)
        self.in_tf_class.pop()

    def visit_Import(self, node):
        for alias in node.names:
            if _is_private_module(alias.name):
                self._flag(node, f"import {alias.name}")

    def visit_ImportFrom(self, node):
        module = node.module or ""
        for alias in node.names:
            full = f"{module}.{alias.name}"
            if node.level == 0 and (_is_private_module(module) or _is_private_module(full)):
                self._flag(node, f"from {module} import {alias.name}")

    def visit_Constant(self, node):
        if isinstance(node.value, str) and _PRIVATE_MODULE_NAME.fullmatch(node.value):
            self._flag(node, f"names the private module {node.value!r}")

    def visit_Attribute(self, node):
        if _is_private(node.attr) and not self._is_ours(node.value, node.attr):
            self._flag(node, ast.unparse(node))
        self.generic_visit(node)

    def visit_Call(self, node):
        if (
            isinstance(node.func, ast.Name)
            and node.func.id in _ATTRIBUTE_FUNCTIONS
            and len(node.args) >= 2
        ):
            names = _literal_names(node.args[1], self.loop_names)
            if any(_is_private(n) and not self._is_ours(node.args[0], n) for n in names):
                self._flag(node, ast.unparse(node))
        self.generic_visit(node)


def private_uses(source, where, allowlist=frozenset()):
    """(findings as "where:line: code", allowlist entries used) for one module's source."""
    tree = ast.parse(source, where)
    visitor = _PrivateUses(tree, where, allowlist)
    visitor.visit(tree)
    return visitor.found, visitor.allowed


def _modules_outside_tf_internals():
    internals = SRC / "tf_internals"
    return sorted(p for p in PACKAGE.rglob("*.py") if internals not in p.parents)


def test_private_tensorflow_and_keras_use_is_only_in_tf_internals():
    found, allowed = [], set()
    for path in _modules_outside_tf_internals():
        where = path.relative_to(PACKAGE).as_posix()
        module_found, module_allowed = private_uses(
            path.read_text(), where, PRIVATE_ATTRIBUTE_ALLOWLIST
        )
        found += module_found
        allowed |= module_allowed
    assert not found, (
        "private TensorFlow/Keras use outside tf_internals/ (move it into the "
        "tf_internals module of its topic, named in its TOUCHES):\n" + "\n".join(found)
    )
    stale = sorted(PRIVATE_ATTRIBUTE_ALLOWLIST - allowed)
    assert not stale, f"remove these PRIVATE_ATTRIBUTE_ALLOWLIST entries, no longer used: {stale}"


_PLANTED = {
    "import": "import tensorflow.python.framework.ops as ops\n",
    "import keras.src": "import keras.src\n",
    "from import": "from keras.src.backend.common import global_state\n",
    "from package import module": "from tensorflow import python\n",
    "from _tf_keras": "from keras._tf_keras.keras import layers\n",
    "import_module": 'import importlib\nimportlib.import_module("tensorflow._api.v2.compat.v1")\n',
    "module prefix": 'def f(name):\n    return name.startswith("keras.src.")\n',
    "read": "def f(optimizer):\n    return optimizer._iterations\n",
    "write": "def f(optimizer, v):\n    optimizer._iterations = v\n",
    "delete": "def f(optimizer):\n    del optimizer._variables\n",
    "getattr": 'def f(scaffold):\n    return getattr(scaffold, "_saver", None)\n',
    "setattr": 'def f(graph):\n    setattr(graph, "_building_function", False)\n',
    "hasattr": 'def f(model):\n    return hasattr(model, "_symbolic_build")\n',
    "f-string name": 'def f(scaffold, name):\n    return getattr(scaffold, f"_{name}")\n',
    "loop over names": (
        'def f(optimizer):\n    for name in ("learning_rate", "_lr"):\n'
        "        return getattr(optimizer, name)\n"
    ),
    "through tf": "import tensorflow as tf\n\n\ndef f():\n    return tf.compat.v1._x\n",
    "through imported TF module": (
        "from tensorflow.python.framework import ops as o  # noqa\n\n\n"
        "def f():\n    return o._default_graph_stack\n"
    ),
    "inherited Keras private": (
        "import keras\n\n\nclass C(keras.Model):\n"
        "    def f(self):\n        return self._tracker\n"
    ),
    "package name, other object": (
        "from keras_estimator._src.engine import loop\n\n\n"
        "def f(model):\n    return model._trainer_state\n"
    ),
}


@pytest.mark.parametrize("name", sorted(_PLANTED))
def test_private_use_checker_flags_planted_violations(name):
    source = _PLANTED[name]
    found, _ = private_uses(source, "planted.py")
    line = len(source.rstrip("\n").split("\n"))
    # The import of a private module in "through imported TF module" counts too.
    assert found and found[-1].startswith(f"planted.py:{line}:"), (name, found)


_ALLOWED = {
    "own private": "class C:\n    def __init__(self):\n        self._x = 1\n\n"
    "    def same(self, other):\n        return other._x + self._x\n",
    "own class in a Keras subclass": (
        "import keras\n\n\nclass C(keras.Model):\n    def __init__(self):\n"
        "        super().__init__()\n        self._mine = 1\n\n"
        "    def f(self):\n        return self._mine\n"
    ),
    "namedtuple": "def f(spec):\n    return spec._replace(mode=None)\n",
    "stdlib": "import sys\n\n\ndef f():\n    return sys._getframe(0)\n",
    "package module": (
        "from keras_estimator._src.engine import loop\n\n\ndef f():\n    return loop._helper\n"
    ),
    "public module": "import tensorflow.compat.v1 as v1\n\nx = 'tensorflow.python is private'\n",
    "computed name (not seen)": "def f(obj, name):\n    return getattr(obj, name)\n",
}


@pytest.mark.parametrize("name", sorted(_ALLOWED))
def test_private_use_checker_passes_our_own_private_names(name):
    assert private_uses(_ALLOWED[name], "allowed.py") == ([], set())


def test_private_use_allowlist_entries_pass_only_their_module():
    source = "def f(estimator):\n    return estimator._store\n"
    allowlist = {("a.py", "_store")}
    assert private_uses(source, "a.py", allowlist) == ([], {("a.py", "_store")})
    assert private_uses(source, "b.py", allowlist)[0] == ["b.py:2: estimator._store"]
