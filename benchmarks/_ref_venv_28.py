"""Locate or build the TensorFlow 2.8 reference virtualenv (BoostedTrees' reference).

TensorFlow 2.15 and later register no kernels for the BoostedTrees* ops, so the
last tf.estimator whose BoostedTreesClassifier/Regressor runs is older: this
module owns a Python 3.10 virtualenv holding ``tensorflow-cpu==2.8.4`` and
``tensorflow-estimator==2.8.0``. `bench_boosted_trees.py` and
`tests/fixtures/make_tf28_boosted_trees_fixture.py` run their reference-side
code with the interpreter returned by :func:`ensure_reference_python`.

Location: ``$KERAS_ESTIMATOR_REF_VENV_28`` if set, otherwise
``benchmarks/.ref-venv-28`` (gitignored). An existing venv is reused when
``import tensorflow_estimator`` works in it; otherwise it is (re)created with
``python3.10`` (from ``$KERAS_ESTIMATOR_PYTHON_310``, ``PATH`` or pyenv) and the
pinned packages are installed from PyPI with pip. The pins beyond the two
TensorFlow packages keep the resolver from newer releases TF 2.8 fails to
import with: NumPy 1.24 removed aliases TF 2.8 uses, and protobuf 3.20+ breaks
its generated ``_pb2`` modules.

Run as a script to print the interpreter path::

    python benchmarks/_ref_venv_28.py [VENV_DIR]
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _ref_venv import (  # noqa: E402  (the 2.15 builder's helpers)
    ReferenceEnvError,
    _is_usable,
    _log,
    _run,
    _venv_python,
)

ENV_VAR = "KERAS_ESTIMATOR_REF_VENV_28"
"""Environment variable naming an alternative reference venv directory."""

PYTHON_ENV_VAR = "KERAS_ESTIMATOR_PYTHON_310"
"""Environment variable naming the Python 3.10 interpreter to build with."""

DEFAULT_VENV_DIR = Path(__file__).resolve().parent / ".ref-venv-28"
"""Default venv location (listed in the repository's ``.gitignore``)."""

PINS = (
    "tensorflow-cpu==2.8.4",
    "tensorflow-estimator==2.8.0",
    "numpy<1.24",
    "protobuf<3.20",
)
"""Packages installed into the reference venv."""


def _find_base_python() -> str:
    """A Python 3.10 interpreter (TF 2.8 ships wheels for Python 3.7-3.10)."""
    candidates = [
        os.environ.get(PYTHON_ENV_VAR),
        shutil.which("python3.10"),
        *sorted(
            str(path)
            for path in Path("~/.pyenv/versions").expanduser().glob("3.10.*/bin/python")
        ),
    ]
    for candidate in candidates:
        if candidate and Path(candidate).exists():
            return candidate
    raise ReferenceEnvError(
        "Cannot build the tf.estimator 2.8 reference venv: no Python 3.10 was found "
        f"(${PYTHON_ENV_VAR}, python3.10 on PATH, ~/.pyenv/versions/3.10.*). "
        "TensorFlow 2.8 only ships wheels for Python 3.7-3.10; install 3.10 "
        f"(e.g. `pyenv install 3.10`) or point {ENV_VAR} at a venv with "
        + " and ".join(PINS[:2])
        + " installed."
    )


def _resolve_dir(path: str | os.PathLike[str] | None) -> Path:
    if path is not None:
        return Path(path).expanduser().resolve()
    from_env = os.environ.get(ENV_VAR)
    if from_env:
        return Path(from_env).expanduser().resolve()
    return DEFAULT_VENV_DIR


def ensure_reference_python(path: str | os.PathLike[str] | None = None) -> str:
    """Returns the python executable of a tf.estimator 2.8 reference venv.

    Args:
        path: Venv directory. Defaults to ``$KERAS_ESTIMATOR_REF_VENV_28`` or
            ``benchmarks/.ref-venv-28``.

    Returns:
        Absolute path (str) to the venv's ``python``.

    Raises:
        ReferenceEnvError: If no Python 3.10 is available, or venv creation or
            the pip install fails, or the result still cannot import
            ``tensorflow_estimator``.
    """
    venv_dir = _resolve_dir(path)
    python = _venv_python(venv_dir)
    if _is_usable(python):
        _log(f"reusing reference venv {venv_dir}")
        return str(python)
    base = _find_base_python()
    if not python.exists():
        _log(f"creating reference venv {venv_dir} with {base}")
        venv_dir.parent.mkdir(parents=True, exist_ok=True)
        _run([base, "-m", "venv", str(venv_dir)], "venv creation")
    _run([str(python), "-m", "pip", "install", *PINS], "pip install of TF 2.8")
    if not _is_usable(python):
        raise ReferenceEnvError(
            f"Reference venv {venv_dir} was built but `import tensorflow_estimator` "
            f"still fails; delete {venv_dir} and retry."
        )
    _log(f"reference venv ready: {python}")
    return str(python)


def main(argv: list[str] | None = None) -> int:
    """CLI entry point: prints the reference interpreter path to stdout."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) > 1 or (args and args[0] in ("-h", "--help")):
        print(f"usage: {Path(sys.argv[0]).name} [VENV_DIR]", file=sys.stderr)
        return 2
    try:
        print(ensure_reference_python(args[0] if args else None))
    except ReferenceEnvError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
