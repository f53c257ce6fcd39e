"""RunConfig's tables of fields agree with what is written out beside them.

`_SETTINGS` (name, default, validation, docstring) and `_CLUSTER_PROPERTIES`
drive storing, `replace` and repr; the constructor's signature and the
property definitions are spelled out, so they are checked here.
"""

import dataclasses
import inspect

from keras_estimator._src.base import run_config
from keras_estimator._src.base.run_config import RunConfig
from keras_estimator._src.base.tf_config import _ClusterInfo


def test_signature_is_the_settings_table():
    parameters = list(inspect.signature(RunConfig.__init__).parameters.values())[1:]
    assert [p.name for p in parameters] == [s.name for s in run_config._SETTINGS]
    wrong_defaults = [
        p.name
        for p, setting in zip(parameters, run_config._SETTINGS, strict=True)
        if p.default is not setting.default and p.default != setting.default
    ]
    assert wrong_defaults == []
    keyword_only = [p.name for p in parameters if p.kind is p.KEYWORD_ONLY]
    assert keyword_only == ["steps_per_loop"]  # The extension, after 2.15's.


def _properties():
    return {
        name: value
        for name, value in vars(RunConfig).items()
        if isinstance(value, property)
    }


def test_properties_are_the_tables_rows():
    expected = {s.name: s.doc for s in run_config._SETTINGS if s.doc is not None}
    expected.update(run_config._CLUSTER_PROPERTIES)
    assert {name: prop.__doc__ for name, prop in _properties().items()} == expected


def test_replace_takes_every_setting():
    assert run_config._REPLACEABLE == tuple(s.name for s in run_config._SETTINGS)


def test_cluster_properties_are_cluster_info_fields():
    fields = {field.name for field in dataclasses.fields(_ClusterInfo)}
    assert set(run_config._CLUSTER_PROPERTIES) <= fields


def test_repr_shows_every_property():
    text = repr(RunConfig())
    assert [name for name in _properties() if f"{name}=" not in text] == []
    assert "experimental_distribute" not in text
