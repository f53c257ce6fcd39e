"""Locate or build the TensorFlow 2.15 reference virtualenv.

This module owns the reference environment used to compare ``keras_estimator``
against the original ``tf.estimator`` implementation: a Python 3.11 virtualenv
holding ``tensorflow-cpu==2.15.1`` and ``tensorflow-estimator==2.15.0`` (the
last release of ``tf.estimator``). Benchmarks and fixture generators run their
reference-side scripts with the interpreter returned by
:func:`ensure_reference_python`.

Location: ``$KERAS_ESTIMATOR_REF_VENV`` if set, otherwise ``benchmarks/.ref-venv``
(gitignored). An existing venv is reused when ``import tensorflow_estimator``
works in it; otherwise it is (re)created with ``python3.11`` from ``PATH`` and
the pinned packages are installed from PyPI with pip.

``numpy<2`` is pinned explicitly: the ``tensorflow-cpu 2.15.1`` wheel already
declares ``numpy<2.0.0,>=1.23.5``, and the explicit pin keeps the resolver from
ever considering a NumPy 2 wheel (TF 2.15 extension modules are built against
the NumPy 1.x ABI).

Run as a script to print the interpreter path::

    python benchmarks/_ref_venv.py [VENV_DIR]
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ENV_VAR = "KERAS_ESTIMATOR_REF_VENV"
"""Environment variable naming an alternative reference venv directory."""

DEFAULT_VENV_DIR = Path(__file__).resolve().parent / ".ref-venv"
"""Default venv location (listed in the repository's ``.gitignore``)."""

REQUIRED_PYTHON = "python3.11"
"""Interpreter used to create the venv (TF 2.15 ships wheels for Python 3.9-3.11 only)."""

PINS = (
    "tensorflow-cpu==2.15.1",
    "tensorflow-estimator==2.15.0",
    "numpy<2",
    # The premade-estimators tutorial reads its CSV with pandas.
    "pandas>=2.2,<2.3",
)
"""Packages installed into the reference venv."""


class ReferenceEnvError(RuntimeError):
    """Raised when the reference environment cannot be found or built."""


def _log(message: str) -> None:
    print(f"[ref-venv] {message}", file=sys.stderr, flush=True)


def _quiet_env() -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    return env


def _venv_python(venv_dir: Path) -> Path:
    if os.name == "nt":
        return venv_dir / "Scripts" / "python.exe"
    return venv_dir / "bin" / "python"


def _is_usable(python: Path) -> bool:
    """Returns True if ``python`` exists and can import tensorflow_estimator."""
    if not python.exists():
        return False
    try:
        result = subprocess.run(
            [str(python), "-c", "import tensorflow_estimator"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=_quiet_env(),
            timeout=300,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return result.returncode == 0


def _find_base_python() -> str:
    """Returns a Python 3.11 interpreter from PATH.

    Raises:
        ReferenceEnvError: If no ``python3.11`` is on PATH.
    """
    found = shutil.which(REQUIRED_PYTHON)
    if found is None:
        raise ReferenceEnvError(
            f"Cannot build the tf.estimator 2.15 reference venv: '{REQUIRED_PYTHON}' "
            "was not found on PATH. TensorFlow 2.15 only ships wheels for "
            "Python 3.9-3.11; install Python 3.11 (e.g. `pyenv install 3.11`) "
            f"or point {ENV_VAR} at an existing venv with "
            + " and ".join(PINS[:2])
            + " installed."
        )
    return found


def _run(cmd: list[str], what: str) -> None:
    _log(f"{what}: {' '.join(cmd)}")
    # Let pip's progress go to our stderr so users see what is happening;
    # keep our stdout clean for callers that parse it.
    result = subprocess.run(
        cmd, stdout=sys.stderr, stderr=sys.stderr, env=_quiet_env(), check=False
    )
    if result.returncode != 0:
        raise ReferenceEnvError(
            f"{what} failed (exit status {result.returncode}): {' '.join(cmd)}"
        )


def _resolve_dir(path: str | os.PathLike[str] | None) -> Path:
    if path is not None:
        return Path(path).expanduser().resolve()
    from_env = os.environ.get(ENV_VAR)
    if from_env:
        return Path(from_env).expanduser().resolve()
    return DEFAULT_VENV_DIR


def ensure_reference_python(path: str | os.PathLike[str] | None = None) -> str:
    """Returns the python executable of a tf.estimator 2.15 reference venv.

    Reuses the venv if it already imports ``tensorflow_estimator``; otherwise
    creates it with ``python3.11`` and pip-installs :data:`PINS` from PyPI.

    Args:
        path: Venv directory. Defaults to ``$KERAS_ESTIMATOR_REF_VENV`` or
            ``benchmarks/.ref-venv``.

    Returns:
        Absolute path (str) to the venv's ``python``.

    Raises:
        ReferenceEnvError: If no Python 3.11 is available, or venv creation or
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
    else:
        _log(
            f"reference venv {venv_dir} exists but cannot import tensorflow_estimator; reinstalling"
        )
    _run(
        [str(python), "-m", "pip", "install", *PINS],
        "pip install of reference packages",
    )
    if not _is_usable(python):
        raise ReferenceEnvError(
            f"Reference venv {venv_dir} was built but `import tensorflow_estimator` still fails; "
            f"delete {venv_dir} and retry, or inspect it with `{python} -c 'import tensorflow_estimator'`."
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
