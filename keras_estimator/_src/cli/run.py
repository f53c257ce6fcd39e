"""`keras-estimator run`: a tf.estimator program, unmodified, in zero-change mode.

`install()` first, then the program as Python would run it: `__name__` is
`"__main__"`, `sys.argv` is `[SCRIPT, *ARGS]` (for `-m`, the module's file,
as `python -m` sets it), and the script's directory (for `-m`, the current
directory) leads `sys.path`. The exit status is the program's: 0 when it
returns, its `SystemExit` code, or 1 after printing the traceback of an
exception it raised. `sys.argv`, `sys.path` and the patches are restored
afterwards, so the command may also be called in-process.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import runpy
import sys
import traceback
from collections.abc import Callable, Iterator, Sequence
from types import TracebackType

from keras_estimator._src.cli.errors import CliError


@contextlib.contextmanager
def _program_state(argv: list[str], path_entry: str) -> Iterator[None]:
    saved_argv, saved_path = sys.argv[:], sys.path[:]
    sys.argv = argv
    sys.path.insert(0, path_entry)
    try:
        yield
    finally:
        sys.argv = saved_argv
        sys.path[:] = saved_path


def _exit_status(code: object) -> int:
    """What the interpreter exits with for `SystemExit(code)`."""
    if code is None:
        return 0
    if isinstance(code, bool):
        return int(code)
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def _program_traceback(tb: TracebackType | None) -> TracebackType | None:
    """The traceback from the program's first frame on (runpy's and ours cut)."""
    ours = {
        os.path.abspath(__file__),
        os.path.abspath(runpy.__file__),
        "<frozen runpy>",
    }
    while tb is not None and (
        tb.tb_frame.f_code.co_filename in ours
        or os.path.abspath(tb.tb_frame.f_code.co_filename) in ours
    ):
        tb = tb.tb_next
    return tb


def _execute(body: Callable[[], object]) -> int:
    from keras_estimator._src.zero_change.install import install

    with install():
        try:
            body()
        except CliError:
            raise
        except SystemExit as stop:
            return _exit_status(stop.code)
        except KeyboardInterrupt:
            print("KeyboardInterrupt", file=sys.stderr)
            return 130
        except BaseException as error:  # noqa: BLE001  (the program's own error)
            traceback.print_exception(
                type(error), error, _program_traceback(error.__traceback__)
            )
            return 1
    return 0


def run_script(script: str, args: Sequence[str]) -> int:
    """Runs `script` with `args` under install(); returns its exit status."""
    if not os.path.exists(script):
        raise CliError(f"no such file: {script}")
    if os.path.isdir(script) and not os.path.isfile(
        os.path.join(script, "__main__.py")
    ):
        raise CliError(f"{script} is a directory without a __main__.py")
    directory = os.path.dirname(os.path.abspath(script))
    if os.path.isdir(script):
        directory = os.path.abspath(script)
    with _program_state([script, *args], directory):
        return _execute(lambda: runpy.run_path(script, run_name="__main__"))


def run_module(module: str, args: Sequence[str]) -> int:
    """Runs `module` as `python -m` would, under install(); returns its status."""

    def body() -> object:
        # Found under install(), as a package __init__ the lookup imports may
        # use tf.estimator.
        try:
            spec = importlib.util.find_spec(module)
        except (ImportError, ValueError) as error:
            raise CliError(f"cannot find module {module}: {error}") from None
        if spec is None:
            raise CliError(f"no module named {module}")
        return runpy.run_module(module, run_name="__main__", alter_sys=True)

    with _program_state([module, *args], os.getcwd()):
        return _execute(body)
