"""Element types: how many bits a value holds and how many a buffer spends on it.

Mirrors primitive_util::BitWidth and ShapeUtil::ByteSizeOfPrimitiveType (layout_rules.md §4):
the storage width of a type without `E(n)` is its bit width rounded up to whole bytes, so `pred`,
`s4`, `u2`, `f4e2m1fn` cost one byte each unless the layout packs them with `E(n)`.
"""

from __future__ import annotations

from hlo_layout.layout.errors import LayoutError

#: primitive_util::BitWidth per HLO type name (token and opaque have none).
BIT_WIDTH: dict[str, int] = {
    "pred": 1,
    "s1": 1, "s2": 2, "s4": 4, "s8": 8, "s16": 16, "s32": 32, "s64": 64,
    "u1": 1, "u2": 2, "u4": 4, "u8": 8, "u16": 16, "u32": 32, "u64": 64,
    "f16": 16, "bf16": 16, "f32": 32, "f64": 64,
    "f8e5m2": 8, "f8e4m3": 8, "f8e4m3fn": 8, "f8e4m3b11fnuz": 8, "f8e3m4": 8,
    "f8e5m2fnuz": 8, "f8e4m3fnuz": 8, "f8e8m0fnu": 8,
    "f4e2m1fn": 4,
    "c64": 64, "c128": 128,
}  # fmt: skip

#: Size XLA gives an `opaque[]` value: one pointer (ShapeUtil::ByteSizeOf with pointer_size 8).
POINTER_BYTES = 8


def bit_width(element_type: str) -> int:
    """Bits of information in one element (primitive_util::BitWidth): `s4` → 4, `pred` → 1."""
    try:
        return BIT_WIDTH[element_type]
    except KeyError:
        raise LayoutError(f"unknown element type '{element_type}'") from None


def byte_width(element_type: str) -> int:
    """Bytes one element takes without `E(n)` (ShapeUtil::ByteSizeOfPrimitiveType): `s4` → 1."""
    return (bit_width(element_type) + 7) // 8


def storage_bits(element_type: str, element_size_bits: int = 0) -> int:
    """Bits a buffer spends per element (ShapeUtil::ElementSizeInBits): `E(n)` when the layout
    sets it, else whole bytes. `s4[..]{..E(4)}` → 4; `s4[..]` → 8; old TPU `pred{..E(32)}` → 32."""
    if element_size_bits:
        bit_width(element_type)  # still reject unknown types
        return element_size_bits
    return 8 * byte_width(element_type)


def logical_bits(element_type: str) -> int:
    """Bits per element in the *unpadded* size: the bit width, except `pred`, which counts as one
    byte, as TPU out-of-memory reports count it ("Unpadded size"; layout_rules.md §2.2 step 7).
    Sub-byte integers and `f4e2m1fn` count their real width, so a `s4` array stored one per byte
    shows the unused half as padding."""
    return 8 if element_type == "pred" else bit_width(element_type)
