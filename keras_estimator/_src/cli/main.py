"""The `keras-estimator` console command.

    keras-estimator run SCRIPT.py [ARGS...]     run a tf.estimator program unmodified
    keras-estimator run -m MODULE [ARGS...]
    keras-estimator check [--json] SCRIPT.py... what a program uses, and how it fares here
    keras-estimator inspect [--json] MODEL_DIR  checkpoints, variables, evaluations, exports

Bad usage (a missing file, a directory that is not a model_dir, ...) prints
one line on stderr and exits with status 2; `check` exits 1 when a program
uses something unsupported; `run` exits with the program's status.
`python -m keras_estimator._src.cli.main` runs the same command.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import NoReturn

from keras_estimator._src.cli.errors import CliError

PROG = "keras-estimator"


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line (and a pointer to --help)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog=PROG,
        description=(
            "Run, check and inspect tf.estimator programs and model_dirs with "
            "keras_estimator (tf.estimator on TensorFlow 2.16+ / Keras 3)."
        ),
    )
    commands = parser.add_subparsers(
        dest="command", metavar="COMMAND", parser_class=_Parser
    )

    run = commands.add_parser(
        "run",
        help="run an unmodified tf.estimator program in zero-change mode",
        description=(
            "Run a tf.estimator 2.15 program unmodified: keras_estimator.install() "
            "makes tf.estimator (and tf.compat.v1.estimator, ...) this package, "
            "then the program runs as `python SCRIPT.py ARGS...` (or `python -m "
            "MODULE ARGS...`) would run it. Everything after SCRIPT (or -m "
            "MODULE) is the program's. Exits with the program's status."
        ),
        usage=f"{PROG} run [-h] (SCRIPT.py | -m MODULE) [ARGS ...]",
    )
    run.add_argument(
        "script", nargs="?", metavar="SCRIPT.py", help="the program to run"
    )
    run.add_argument(
        "-m", dest="module", metavar="MODULE", help="run a module, as python -m does"
    )
    run.add_argument("args", nargs="*", metavar="ARGS", help="the program's arguments")

    check = commands.add_parser(
        "check",
        help="list the tf.estimator names a program uses and their status here",
        description=(
            "Read programs without running them and list each use of a "
            "tf.estimator-era name or idiom with its status here: supported, "
            "differs (with the difference) or unsupported (with the fix). "
            "Exits 1 if anything is unsupported, 0 otherwise."
        ),
    )
    check.add_argument(
        "paths", nargs="+", metavar="SCRIPT.py", help="programs, or folders of them"
    )
    check.add_argument(
        "--json", action="store_true", help="print JSON instead of a table"
    )

    inspect = commands.add_parser(
        "inspect",
        help="show a model_dir's checkpoints, variables, evaluations and exports",
        description=(
            "Show what a model_dir (tf.estimator 2.15's or this package's) holds: "
            "checkpoints and their global steps, the latest checkpoint's variables "
            "with shapes and dtypes, the evaluation history of each eval*/ "
            "directory, and the SavedModels under export/ with their signatures."
        ),
    )
    inspect.add_argument("model_dir", metavar="MODEL_DIR")
    inspect.add_argument("--json", action="store_true", help="print JSON for scripts")
    return parser


def _split_run(argv: list[str]) -> tuple[list[str], list[str]]:
    """`run`'s own arguments and the program's (which argparse must not see)."""
    rest = argv[1:]
    if rest[:1] == ["-m"] and len(rest) >= 2:
        return argv[:3], rest[2:]
    if rest and rest[0].startswith("-m") and len(rest[0]) > 2:
        return argv[:2], rest[1:]
    if rest and not rest[0].startswith("-"):
        return argv[:2], rest[1:]
    return argv, []


def _dispatch(argv: list[str]) -> int:
    parser = build_parser()
    program_args: list[str] = []
    if argv[:1] == ["run"]:
        argv, program_args = _split_run(argv)
    options = parser.parse_args(argv)
    if options.command is None:
        parser.print_help(sys.stderr)
        return 2
    if options.command == "run":
        from keras_estimator._src.cli import run

        if options.module is not None:
            if options.script is not None:
                raise CliError("give a SCRIPT.py or -m MODULE, not both")
            return run.run_module(options.module, program_args)
        if options.script is None:
            raise CliError("run needs a SCRIPT.py or -m MODULE")
        return run.run_script(options.script, program_args)
    if options.command == "check":
        from keras_estimator._src.cli import check

        return check.main(options.paths, options.json)
    from keras_estimator._src.cli import inspect_dir

    # TensorFlow's C++ start-up lines (CPU features, oneDNN) are not this
    # command's output; TF_CPP_MIN_LOG_LEVEL set by the user still wins.
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")
    return inspect_dir.main(options.model_dir, options.json)


def main(argv: Sequence[str] | None = None) -> int:
    """The console script: returns the exit status (`sys.exit(main())`)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        return _dispatch(argv)
    except SystemExit as stop:  # argparse: --help, or a usage error
        code = stop.code
        return code if isinstance(code, int) else (0 if code is None else 2)
    except CliError as error:
        command = (
            f" {argv[0]}" if argv and argv[0] in ("run", "check", "inspect") else ""
        )
        print(f"{PROG}{command}: error: {error}", file=sys.stderr)
        return error.exit_status
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
