"""Meaning of known attributes, decoded from their generic value on demand.

Each decoder reads one attribute kind (XLA's hlo_parser.cc `Parse*` for that attribute, in our
words). Unknown attributes need no decoder: their generic value and raw text are always there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hlo_layout.errors import HloSemanticError
from hlo_layout.limits import read_int
from hlo_layout.syntax import values as V
from hlo_layout.syntax.tree import Attribute


def computation_names(attr: Attribute) -> tuple[str, ...]:
    """`calls=%c`, `branch_computations={%a, %b}` → names without `%`."""
    raw = attr.raw
    if raw.startswith("{"):
        value = attr.value
        if isinstance(value, V.Group):
            return tuple(
                item.text.removeprefix("%") for item in value.items if isinstance(item, V.Word)
            )
        return ()
    return (raw.removeprefix("%"),)


# -- integers and integer lists ---------------------------------------------------------------


def _int(text: str, attr: Attribute) -> int:
    try:
        return read_int(text, f"attribute {attr.key}: integer", attr.span)
    except ValueError:
        raise HloSemanticError(
            f"attribute {attr.key}: expected an integer, got '{text}'", attr.span
        ) from None


def int_value(attr: Attribute) -> int:
    """`index=1`, `iota_dimension=0`, `feature_group_count=6` → the integer.

    hlo_parser.cc reads these with `ParseInt64`.
    """
    return _int(attr.raw.strip(), attr)


#: A plain list of integers, e.g. `{1,0}` or `{}` (longer numbers go to the grammar, which
#: bounds them: limits.MAX_INT_DIGITS).
_PLAIN_INT_LIST = re.compile(r"\{\s*(-?\d{1,18}(?:\s*,\s*-?\d{1,18})*)?\s*\}")


def int_list(attr: Attribute) -> tuple[int, ...]:
    """`dimensions={3,1}`, `slice_sizes={7,8,4}`, `lhs_batch_dims={}` → a tuple of ints.

    hlo_parser.cc `ParseInt64List(kLbrace, kRbrace, kComma)`; the braces may hold nothing.
    The common spelling is read by a regular expression, without loading the grammar.
    """
    plain = _PLAIN_INT_LIST.fullmatch(attr.raw)
    if plain is not None:
        return tuple(_int(x, attr) for x in plain.group(1).split(",")) if plain.group(1) else ()
    value = attr.value
    if not isinstance(value, V.Group) or value.kind != "{":
        raise HloSemanticError(
            f"attribute {attr.key}: expected a list like {{1,0}}, got '{attr.raw}'", attr.span
        )
    out: list[int] = []
    for item in value.items:
        if not isinstance(item, V.Word):
            raise HloSemanticError(
                f"attribute {attr.key}: expected integers in '{attr.raw}'", attr.span
            )
        out.append(_int(item.text, attr))
    return tuple(out)


# -- output_to_operand_aliasing={{0}: (1, {})}, input_output_alias={ {}: (0, {}, may-alias) } -----

#: One `{output index}: (number, {index}` pair of an aliasing attribute.
_ALIAS_PAIR = re.compile(r"\{([\d,\s]*)\}\s*:\s*\(\s*(\d+)\s*,\s*\{([\d,\s]*)\}")


def aliasing_pairs(attr: Attribute) -> list[tuple[tuple[int, ...], int, tuple[int, ...]]]:
    """`output_to_operand_aliasing={{0}: (1, {})}` → [((0,), 1, ())]: (output index, operand
    number, operand index); the module header's `input_output_alias={ {}: (0, {}, may-alias) }`
    the same, with parameter numbers. hlo_parser.cc `ParseAliasing`; the kind is not kept."""

    def index(text: str) -> tuple[int, ...]:
        return tuple(_int(t, attr) for t in text.replace(" ", "").split(",") if t)

    return [
        (index(m.group(1)), _int(m.group(2), attr), index(m.group(3)))
        for m in _ALIAS_PAIR.finditer(attr.raw)
    ]


# -- slice={[start:limit:stride], ...} ---------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SliceRange:
    """One dimension of a `slice` attribute; the stride defaults to 1 (`[0:3]`)."""

    start: int
    limit: int
    stride: int = 1


def slice_ranges(attr: Attribute) -> tuple[SliceRange, ...]:
    """`slice={[5:10:1], [3:20:7]}` → one SliceRange per dimension.

    hlo_parser.cc `ParseSliceRanges`: each `[start:limit]` or `[start:limit:stride]`.
    """
    value = attr.value
    if not isinstance(value, V.Group) or value.kind != "{":
        raise HloSemanticError(f"attribute {attr.key}: expected {{[a:b:c], ...}}", attr.span)
    ranges: list[SliceRange] = []
    for item in value.items:
        parts: tuple[V.Value, ...] = ()
        if isinstance(item, V.Group) and item.kind == "[" and len(item.items) == 1:
            inner = item.items[0]
            if isinstance(inner, V.Chain) and set(inner.separators) == {":"}:
                parts = inner.parts
        if len(parts) not in (2, 3) or not all(isinstance(p, V.Word) for p in parts):
            raise HloSemanticError(
                f"attribute {attr.key}: expected [start:limit] or [start:limit:stride]", attr.span
            )
        numbers = [_int(p.text, attr) for p in parts if isinstance(p, V.Word)]
        ranges.append(SliceRange(*numbers))
    return tuple(ranges)


# -- padding=lo_hi[_interior]x... --------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PaddingDim:
    """Edge padding (may be negative) and interior padding of one dimension."""

    low: int
    high: int
    interior: int = 0


_PAD_DIM = re.compile(r"(-?\d+)_(-?\d+)(?:_(-?\d+))?")


def padding_config(attr: Attribute) -> tuple[PaddingDim, ...]:
    """`padding=1_4_1x4_8_0` → ((1, 4, 1), (4, 8, 0)); `-3_-5_1` has negative edges.

    hlo_parser.cc `ParsePaddingConfig`: dimensions joined by `x`, each `low_high[_interior]`.
    A rank-0 pad prints an empty value, which gives no dimensions.
    """
    raw = attr.raw.strip()
    if not raw:
        return ()
    dims: list[PaddingDim] = []
    for part in raw.split("x"):
        match = _PAD_DIM.fullmatch(part)
        if match is None:
            raise HloSemanticError(
                f"attribute {attr.key}: expected low_high[_interior] per dimension, got '{raw}'",
                attr.span,
            )
        low, high, interior = match.groups()
        dims.append(PaddingDim(_int(low, attr), _int(high, attr), _int(interior or "0", attr)))
    return tuple(dims)


# -- window={size=3x5 stride=2x1 pad=1_1x0_1 lhs_dilate=.. rhs_dilate=.. rhs_reversal=..} -------


@dataclass(frozen=True, slots=True)
class WindowDim:
    """One window dimension, with XLA's defaults for every field the text left out."""

    size: int
    stride: int = 1
    padding_low: int = 0
    padding_high: int = 0
    window_dilation: int = 1
    base_dilation: int = 1
    window_reversal: bool = False


_WINDOW_KEYS = ("size", "stride", "pad", "lhs_dilate", "rhs_dilate", "rhs_reversal")
_WINDOW_TEXT = re.compile(r"\{\s*((?:[A-Za-z_]+=[-\w]+\s*)*)\}")


def window(attr: Attribute) -> tuple[WindowDim, ...]:
    """`window={size=3x2 stride=2x1 pad=1_1x0_1}` → one WindowDim per spatial dimension.

    hlo_parser.cc `ParseWindow`: `key=AxBxC` fields in any order; `size` fixes the rank, the others
    default to stride 1, no padding, dilation 1, no reversal. `lhs_dilate` is the base dilation and
    `rhs_dilate` the window dilation. `window={}` is a rank-0 window.
    """
    fields: dict[str, str] = {}
    simple = _WINDOW_TEXT.fullmatch(attr.raw.strip())  # the usual text: no grammar needed
    if simple is not None:
        items = [tuple(item.split("=", 1)) for item in simple.group(1).split()]
    else:
        value = attr.value
        if not isinstance(value, V.Group) or value.kind != "{":
            raise HloSemanticError(f"attribute {attr.key}: expected {{size=... ...}}", attr.span)
        items = []
        for item in value.items:
            if (
                not isinstance(item, V.Chain)
                or item.separators != ("=",)
                or not all(isinstance(p, V.Word) for p in item.parts)
            ):
                raise HloSemanticError(f"attribute {attr.key}: expected key=value items", attr.span)
            items.append(tuple(p.text for p in item.parts if isinstance(p, V.Word)))
    for key, text in items:
        if key not in _WINDOW_KEYS:
            raise HloSemanticError(f"attribute {attr.key}: unknown window field '{key}'", attr.span)
        fields[key] = text
    if not fields:
        return ()
    if "size" not in fields:
        raise HloSemanticError(f"attribute {attr.key}: a window needs size=...", attr.span)

    def numbers(key: str) -> list[int] | None:
        text = fields.get(key)
        return None if text is None else [_int(t, attr) for t in text.split("x")]

    sizes = numbers("size") or []
    rank = len(sizes)
    strides = numbers("stride") or [1] * rank
    base = numbers("lhs_dilate") or [1] * rank
    dilation = numbers("rhs_dilate") or [1] * rank
    reversal = numbers("rhs_reversal") or [0] * rank
    pads = [(0, 0)] * rank
    if "pad" in fields:
        pads = []
        for part in fields["pad"].split("x"):
            match = re.fullmatch(r"(-?\d+)_(-?\d+)", part)
            if match is None:
                raise HloSemanticError(f"attribute {attr.key}: bad pad '{part}'", attr.span)
            pads.append((_int(match.group(1), attr), _int(match.group(2), attr)))
    if any(len(x) != rank for x in (strides, base, dilation, reversal, pads)):
        raise HloSemanticError(
            f"attribute {attr.key}: window fields disagree on the rank ({rank})", attr.span
        )
    return tuple(
        WindowDim(sizes[i], strides[i], pads[i][0], pads[i][1], dilation[i], base[i],
                  bool(reversal[i]))
        for i in range(rank)
    )  # fmt: skip


# -- dim_labels=b01f_01io->b01f -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ConvDimensionNumbers:
    """Which dimension of input, kernel and output plays which role (XLA's
    ConvolutionDimensionNumbers). Spatial lists are ordered by spatial index (`0`, `1`, ...)."""

    input_batch: int
    input_feature: int
    input_spatial: tuple[int, ...]
    kernel_input_feature: int
    kernel_output_feature: int
    kernel_spatial: tuple[int, ...]
    output_batch: int
    output_feature: int
    output_spatial: tuple[int, ...]


def _labels(text: str, roles: str, attr: Attribute) -> tuple[dict[str, int], tuple[int, ...]]:
    found: dict[str, int] = {}
    spatial: dict[int, int] = {}
    for position, char in enumerate(text):
        if char in roles and char not in found:
            found[char] = position
        elif char.isdigit() and int(char) not in spatial:
            spatial[int(char)] = position
        else:
            raise HloSemanticError(
                f"attribute {attr.key}: unexpected '{char}' in '{text}'", attr.span
            )
    if set(found) != set(roles) or sorted(spatial) != list(range(len(spatial))):
        raise HloSemanticError(
            f"attribute {attr.key}: '{text}' must name {', '.join(roles)} and spatial 0..n-1",
            attr.span,
        )
    return found, tuple(spatial[i] for i in range(len(spatial)))


def conv_dimension_numbers(attr: Attribute) -> ConvDimensionNumbers:
    """`dim_labels=b01f_i01o->b01f` → ConvDimensionNumbers.

    hlo_parser.cc `ParseConvolutionDimensionNumbers`: input `b`/`f`, kernel `i`/`o` and output
    `b`/`f` name batch and feature dimensions by position; digits are the spatial dimensions, the
    digit being the spatial index. All three parts have the same rank.
    """
    match = re.fullmatch(r"([^_]+)_([^-]+)->(.+)", attr.raw.strip())
    if match is None:
        raise HloSemanticError(
            f"attribute {attr.key}: expected input_kernel->output, got '{attr.raw}'", attr.span
        )
    lhs, rhs, out = match.groups()
    if not len(lhs) == len(rhs) == len(out):
        raise HloSemanticError(f"attribute {attr.key}: parts differ in rank", attr.span)
    lhs_roles, lhs_spatial = _labels(lhs, "bf", attr)
    rhs_roles, rhs_spatial = _labels(rhs, "io", attr)
    out_roles, out_spatial = _labels(out, "bf", attr)
    if not len(lhs_spatial) == len(rhs_spatial) == len(out_spatial):
        raise HloSemanticError(f"attribute {attr.key}: spatial ranks differ", attr.span)
    return ConvDimensionNumbers(
        lhs_roles["b"], lhs_roles["f"], lhs_spatial,
        rhs_roles["i"], rhs_roles["o"], rhs_spatial,
        out_roles["b"], out_roles["f"], out_spatial,
    )  # fmt: skip
