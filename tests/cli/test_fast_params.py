"""The pydantic-free coercion of plain parameters (`cli/fast_params.py`) gives, for every
parameter of every command, the value or the error Typer's own adapter gives."""

from __future__ import annotations

import functools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hlo_layout.cli import fast_params
from hlo_layout.cli.app import COMMANDS, app
from hlo_layout.compat import typer as typer_compat

if fast_params.RuntimeParam is None:  # pragma: no cover - depends on the installed Typer
    pytest.skip("this Typer builds no pydantic adapters", allow_module_level=True)


def _params():
    import typer.main

    group = typer.main.get_command(app)
    out = []
    for name in COMMANDS:
        group._load(name)
    for name, command in sorted(group.commands.items()):
        for param in command.params:
            if typer_compat.is_typer_parameter(param) and fast_params._plain(param):
                out.append(pytest.param(param, id=f"{name}:{param.name}"))
    return out


PARAMS = _params()


def _outcome(runtime, param, value):
    try:
        return ("value", runtime._coerce_value(value, param=param, ctx=None))
    except Exception as e:  # the error Typer would report
        return ("error", type(e).__name__, str(e))


_SAMPLES = ["", "0", "1", "-1", "+1", " 2", "1_0", "01", "10", "abc", "text", "json", "TEXT"]
_SAMPLES += ["out2in", "in2out", "a/b.txt", "-", "1e3", "99999999999999999999", "true"]


def test_every_plain_parameter_is_covered():
    assert len(PARAMS) >= 20  # the commands' options; a Typer change that hides them fails here


@pytest.mark.parametrize("param", PARAMS)
def test_fast_coercion_equals_typer_adapter(param):
    fast = fast_params._FastRuntimeParam(param)
    slow = fast_params.build_runtime_param(param.type_descriptor)
    values = [*_SAMPLES, [], ["1", "x"], ("a", "b"), None, 3, True]
    default = param.default
    if default is not None and not callable(default):
        values.append(default)
    for value in values:
        if value is None:
            continue
        assert _outcome(fast, param, value) == _outcome(slow, param, value), value


@functools.cache
def _runtimes():
    return [
        (
            p.values[0],
            fast_params._FastRuntimeParam(p.values[0]),
            fast_params.build_runtime_param(p.values[0].type_descriptor),
        )
        for p in PARAMS
    ]


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet="-+_ 0123456789abcejnostx/.", max_size=8))
def test_fast_coercion_equals_typer_adapter_on_any_text(text):
    for param, fast, slow in _runtimes():
        value = [text] if fast._item is not None else text
        assert _outcome(fast, param, value) == _outcome(slow, param, value), (param.name, text)
