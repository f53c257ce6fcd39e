"""Where the package's log records go: into TensorFlow's logger, as tf.estimator's did.

tf.estimator 2.15 logged every line ("loss = ..., step = ...", "Saving
checkpoints for N into ...", "Loss for final step: ...") through
`tf.compat.v1.logging`, i.e. the Python logger named "tensorflow". Programs
rely on that: `tf.compat.v1.logging.set_verbosity(INFO)` (or
`tf.get_logger().setLevel`) turns the lines on, handlers attached to
`tf.get_logger()` receive them, and `INFO:tensorflow:loss = ...` is what they
print.

Every module of the package logs through `logging.getLogger("keras_estimator")`.
That logger is made a child of the "tensorflow" logger, so:

- its level, when not set, is TensorFlow's (`set_verbosity`, `setLevel`;
  the root logger's when TensorFlow's is not set either, as for TensorFlow's
  own lines);
- its records reach the handlers of `tf.get_logger()` and, through
  TensorFlow's logger, the root logger's: each line is printed by exactly the
  handlers that print a `tf.compat.v1.logging.info` line in the same process,
  no more (the package installs no handler of its own);
- its records are named "tensorflow", as tf.estimator's were, so formats with
  `%(name)s` and filters by logger name read them as before.

Configuring `logging.getLogger("keras_estimator")` itself still works: a
level set on it wins over TensorFlow's, handlers added to it receive the
package's records, and `propagate = False` keeps them out of TensorFlow's and
the root logger's handlers.

Only Python's `logging` is used here: importing the package still imports
neither TensorFlow nor Keras (`tf.get_logger()` returns this same
"tensorflow" logger object once TensorFlow is imported).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator

PACKAGE_LOGGER_NAME = "keras_estimator"
TENSORFLOW_LOGGER_NAME = "tensorflow"


class _NamedAsTensorFlow(logging.Filter):
    """Gives the package's records TensorFlow's logger name, as 2.15's records had.

    A logger's filters see the records created by that logger, before any
    handler (its own or an ancestor's) formats them.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        record.name = TENSORFLOW_LOGGER_NAME
        return True


def route_into_tensorflow_logger() -> logging.Logger:
    """Makes the "keras_estimator" logger a child of "tensorflow"; returns it.

    Idempotent. The parent link is Python logging's own attribute: a logger
    with a dotless name gets the root logger as parent when created, and
    nothing in `logging` resets it later (only loggers created *below* it look
    their parent up by name).
    """
    package = logging.getLogger(PACKAGE_LOGGER_NAME)
    package.parent = logging.getLogger(TENSORFLOW_LOGGER_NAME)
    if not any(type(f).__name__ == _NamedAsTensorFlow.__name__ for f in package.filters):
        package.addFilter(_NamedAsTensorFlow())
    return package


@contextlib.contextmanager
def root_logger_left_unconfigured() -> Iterator[None]:
    """Keeps a TensorFlow save from giving an unconfigured root logger a handler.

    `tf.saved_model.save` and `tf.train.Checkpoint.write` log through absl
    ("Sharding callback duration"), which, while Python's root logger has
    no handler, calls `logging.basicConfig()`. From then on every line
    TensorFlow's logger prints, and the package's, was printed twice (once
    by TensorFlow's handler, once by the root's). tf.estimator 2.15's
    export added no handler. Within, an unconfigured root logger holds a
    `NullHandler`, so `basicConfig` adds nothing (a record of a logger
    without handlers is dropped meanwhile, where Python would print a
    warning of it to stderr); afterwards it has no handler again. A root
    logger that had handlers is left as it is.
    """
    root = logging.getLogger()
    if root.handlers:
        yield
        return
    placeholder = logging.NullHandler()
    root.addHandler(placeholder)
    try:
        yield
    finally:
        for handler in list(root.handlers):
            root.removeHandler(handler)
