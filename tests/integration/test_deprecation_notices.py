"""TensorFlow's deprecation notices speak of the program's calls, not the package's.

Canned estimators, parsing specs and export call TensorFlow APIs that it marks
deprecated; those notices are quiet. The program's own calls of deprecated
APIs still get theirs, also when the package made the same call first.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading

from keras_estimator._src.tf_internals import deprecation_notices

PROGRAM = textwrap.dedent(
    """
    import tempfile
    import numpy as np
    import tensorflow as tf
    import keras_estimator as ke

    x = np.random.RandomState(0).rand(32, 4).astype("float32")
    y = (x[:, 0] > 0.5).astype("int32")
    columns = [tf.feature_column.numeric_column("x", shape=(4,))]

    def input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).repeat().batch(8)

    for make in (ke.DNNClassifier, ke.LinearClassifier):
        kwargs = {"hidden_units": [4]} if make is ke.DNNClassifier else {}
        est = make(feature_columns=columns, model_dir=tempfile.mkdtemp(), **kwargs)
        est.train(input_fn, steps=2)
        est.evaluate(input_fn, steps=1)
        receiver = ke.export.build_parsing_serving_input_receiver_fn(
            ke.classifier_parse_example_spec(columns, label_key="y")
        )
        est.export_saved_model(tempfile.mkdtemp(), receiver)

    # The program's own call of an API the package used: its notice shows.
    with tf.Graph().as_default():
        features = {"x": tf.compat.v1.placeholder(tf.float32, [None, 4])}
        tf.compat.v1.feature_column.input_layer(features, columns)  # PROGRAM-CALL
    """
)


def test_package_calls_are_quiet_and_program_calls_are_not(tmp_path):
    script = tmp_path / "program.py"
    script.write_text(PROGRAM)
    result = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    notices = [
        line
        for line in result.stderr.splitlines()
        if "is deprecated" in line or "UserWarning" in line
    ]
    program_line = PROGRAM.splitlines().index(
        next(line for line in PROGRAM.splitlines() if "PROGRAM-CALL" in line)
    ) + 1
    own_call = [
        index
        for index, line in enumerate(notices)
        if f"{script}:{program_line}: input_layer" in line
    ]
    assert own_call, "\n".join(notices)
    # Up to the program's own input_layer call, every notice names a line of
    # the program (numeric_column); what that call reaches inside TensorFlow
    # comes after it and is the program's too.
    foreign = [line for line in notices[: own_call[0]] if str(script) not in line]
    assert foreign == [], "\n".join(foreign)


def test_quiet_restores_notices_after_the_last_block_of_any_thread():
    from tensorflow.python.util import deprecation

    assert deprecation._PRINT_DEPRECATION_WARNINGS
    inside = threading.Event()
    release = threading.Event()

    def other_thread():
        with deprecation_notices.quiet():
            inside.set()
            release.wait(timeout=60)

    thread = threading.Thread(target=other_thread)
    thread.start()
    assert inside.wait(timeout=60)
    with deprecation_notices.quiet():
        assert not deprecation._PRINT_DEPRECATION_WARNINGS
    # This thread's block ended; the other's has not.
    assert not deprecation._PRINT_DEPRECATION_WARNINGS
    release.set()
    thread.join(timeout=60)
    assert deprecation._PRINT_DEPRECATION_WARNINGS
