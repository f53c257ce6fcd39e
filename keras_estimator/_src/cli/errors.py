"""The error a command raises for bad usage: one line on stderr, exit status 2."""

from __future__ import annotations


class CliError(Exception):
    """Bad usage (a missing file, not a model_dir, ...); the message is one line."""

    exit_status = 2
