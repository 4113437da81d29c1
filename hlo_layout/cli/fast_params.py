"""Parameter coercion without pydantic for the plain types our commands take.

Typer (0.2x and later) converts every command-line value through a pydantic `TypeAdapter` built
per parameter on first use: importing pydantic and building the adapters costs 0.15-0.3 s, up to
a third of a command's whole run on a 5 MB dump, to turn strings into the str, int, Path, Enum
and lists of them that we declare. `install` gives each such parameter a coercion that converts
the values it is sure of (a str, a decimal integer within the declared bounds, an exact Enum
value) exactly as the adapter would, and hands anything else to Typer's own adapter, so every
error message and every unusual spelling (`+1`, `1_0`, a case-folded choice) stays Typer's.
`tests/cli/test_fast_params.py` checks both give the same value for every parameter of every
command. Typer's coercion machinery is private: `hlo_layout/compat/typer.py` reaches it, and on
a Typer outside the versions it was tested with, `install` does nothing.
"""

from __future__ import annotations

import enum
import re
from pathlib import Path
from typing import Any, get_args, get_origin

from hlo_layout.compat import typer as compat

_COERCION: tuple[Any, Any] = compat.coercion_classes() or (None, None)
#: Typer's coercion class and its builder (None: a Typer whose coercion we leave alone).
RuntimeParam, build_runtime_param = _COERCION

__all__ = ["install"]

#: The integer spelling we convert ourselves; any other (`+1`, ` 2`, `1_0`) goes to the adapter.
_DECIMAL = re.compile(r"-?(?:0|[1-9][0-9]{0,17})")
#: Leaf types the fast path converts.
_LEAVES = (str, int, bool, Path)


class _Delegate(Exception):
    """The fast path is not sure of this value: Typer's adapter decides."""


def _leaf(annotation: Any) -> bool:
    return annotation in _LEAVES or (
        isinstance(annotation, type) and issubclass(annotation, enum.Enum)
    )


def _convert(annotation: Any, value: Any, info: Any) -> Any:
    """`value` as the adapter would return it, or `_Delegate`."""
    if annotation is str:
        if type(value) is str:
            return value
    elif annotation is bool:
        if type(value) is bool:
            return value
    elif annotation is int:
        if type(value) is int:
            number = value
        elif type(value) is str and _DECIMAL.fullmatch(value):
            number = int(value)
        else:
            raise _Delegate
        if (info.min is None or number >= info.min) and (info.max is None or number <= info.max):
            return number
    elif annotation is Path:
        if type(value) is str:
            return Path(value)
        if isinstance(value, Path):
            return value
    elif isinstance(value, annotation):
        return value
    elif type(value) is str and info.case_sensitive:
        for member in annotation:
            if member.value == value:
                return member
    raise _Delegate


if RuntimeParam is not None:

    class _FastRuntimeParam(RuntimeParam):  # type: ignore[misc,valid-type]
        """Converts the values it is sure of; the rest goes to Typer's adapter."""

        _descriptor: Any
        _item: Any
        _slow: Any

        def __init__(self, param: Any) -> None:
            descriptor = param.type_descriptor
            super().__init__(
                parameter_info=descriptor.parameter_info, annotation=descriptor.annotation
            )
            origin = get_origin(descriptor.annotation)
            object.__setattr__(self, "_descriptor", descriptor)
            object.__setattr__(
                self, "_item", get_args(descriptor.annotation)[0] if origin is list else None
            )
            object.__setattr__(self, "_slow", None)

        def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
            info = self.parameter_info
            try:
                if self._item is None:
                    return _convert(self.annotation, value, info)
                if isinstance(value, (list, tuple)):
                    return [_convert(self._item, v, info) for v in value]
            except _Delegate:
                pass
            if self._slow is None:
                object.__setattr__(self, "_slow", build_runtime_param(self._descriptor))
            return self._slow._coerce_value(value, param=param, ctx=ctx)


def _plain(param: Any) -> bool:
    """Whether `param` declares a type the fast path converts, with no file/path/parser rule."""
    descriptor = param.type_descriptor
    info = descriptor.parameter_info
    if descriptor.file_annotation is not None or info.parser is not None:
        return False
    if getattr(info, "click_type", None) is not None:
        return False
    if info.exists or info.resolve_path or not info.file_okay or not info.dir_okay:
        return False
    if info.path_type is not None or getattr(info, "clamp", False):
        return False
    annotation = descriptor.annotation
    if get_origin(annotation) is list:
        (annotation,) = get_args(annotation) or (None,)
    return _leaf(annotation)


def install() -> None:
    """Make every Typer parameter of plain type use the fast coercion (idempotent).

    Typer builds a parameter's coercion lazily, the first time it is asked for, including for
    the options it adds itself (`--help`, `--install-completion`): the hook covers them all."""
    if RuntimeParam is not None:
        compat.wrap_runtime_param(lambda param: _FastRuntimeParam(param) if _plain(param) else None)
