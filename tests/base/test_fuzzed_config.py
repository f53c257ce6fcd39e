"""RunConfig and TF_CONFIG under arbitrary input: a clear error or a config, nothing else.

Hypothesis draws keyword arguments of every kind for RunConfig and arbitrary
TF_CONFIG strings (JSON of any shape, and text that is not JSON). A call
either builds a RunConfig or raises ValueError / TypeError /
NotImplementedError whose message names the argument or the value received;
never another exception type, never a hang.
"""

from __future__ import annotations

import json
import os

import pytest
from hypothesis import given
from hypothesis import strategies as st

import keras_estimator as ke

PARAMETERS = [
    "model_dir", "tf_random_seed", "save_summary_steps", "save_checkpoints_steps",
    "save_checkpoints_secs", "session_config", "keep_checkpoint_max",
    "keep_checkpoint_every_n_hours", "log_step_count_steps", "train_distribute",
    "device_fn", "protocol", "eval_distribute", "experimental_distribute",
    "experimental_max_worker_delay_secs", "session_creation_timeout_secs",
    "checkpoint_save_graph_def",
]  # fmt: skip

ANY_VALUE = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.binary(max_size=6),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=4), st.integers(), max_size=2),
    st.just(object()),
)

JSON_VALUE = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(min_value=-5, max_value=70000),
        st.text(alphabet="abchiefworkpsvalutor:0123456789.", max_size=12),
    ),
    lambda children: st.one_of(
        st.lists(children, max_size=3),
        st.dictionaries(
            st.sampled_from(["cluster", "task", "type", "index", "chief", "worker",
                             "ps", "evaluator", "master", "rpc_layer", "environment"]),
            children,
            max_size=4,
        ),
    ),
    max_leaves=12,
)  # fmt: skip


def _names_the_input(message: str, names: list[str], values: list[object]) -> bool:
    return any(name in message for name in names) or any(
        repr(value)[:12] in message or str(value)[:12] in message for value in values
    )


@given(st.dictionaries(st.sampled_from(PARAMETERS), ANY_VALUE, min_size=1, max_size=3))
def test_run_config_builds_or_raises_a_clear_error(kwargs):
    try:
        ke.RunConfig(**kwargs)
    except (ValueError, TypeError, NotImplementedError) as error:
        assert _names_the_input(str(error), list(kwargs), list(kwargs.values())), (
            kwargs,
            str(error),
        )


@pytest.fixture
def tf_config_env():
    saved = os.environ.pop("TF_CONFIG", None)
    yield
    os.environ.pop("TF_CONFIG", None)
    if saved is not None:
        os.environ["TF_CONFIG"] = saved


# An environment variable holds no NUL character and no lone surrogate.
@given(
    st.one_of(
        JSON_VALUE.map(json.dumps),
        st.text(
            st.characters(blacklist_characters="\x00", blacklist_categories=["Cs"]),
            max_size=20,
        ),
    )
)
def test_tf_config_builds_or_raises_a_clear_error(tf_config_env, text):
    os.environ["TF_CONFIG"] = text
    try:
        ke.RunConfig()
    except (ValueError, TypeError, NotImplementedError) as error:
        assert "TF_CONFIG" in str(error) or "cluster" in str(error) or "task" in str(
            error
        ), (text, str(error))
