"""The package's layout rules (docs/architecture.md), checked on the source.

Each folder of `keras_estimator/_src/` has a layer; a module may import its
own folder and folders of lower layers only, so dependencies run one way.
Public modules (everything outside `_src/`) are shells that re-export.
"""

import ast
import pathlib

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
