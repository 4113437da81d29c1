"""Dot dimension numbers that do not fit the operands are refused by the verifier, for every
command (ShapeInference::ValidateDotDimensionNumbers, which HloVerifier runs): every analysis
indexes the operands' dims by them (an IndexError in `indexing` before)."""

from __future__ import annotations

import pytest

from hlo_layout.errors import HloSemanticError
from hlo_layout.syntax import parse
from hlo_layout.syntax.shape_inference import dot_dimensions_problem


def _dot(attributes: str, *, shape: str = "f32[4,16] ") -> str:
    return (
        "HloModule m\nENTRY e {\n  a = f32[4,8] parameter(0)\n  b = f32[8,16] parameter(1)\n"
        f"  ROOT d = {shape}dot(a, b), {attributes}\n}}\n"
    )


@pytest.mark.parametrize(
    ("attributes", "says"),
    [
        ("lhs_contracting_dims={5}, rhs_contracting_dims={0}", "lhs dimension number 5 is out"),
        ("lhs_contracting_dims={1}, rhs_contracting_dims={2}", "rhs dimension number 2 is out"),
        ("lhs_contracting_dims={1}, rhs_contracting_dims={-1}", "rhs dimension number -1"),
        ("lhs_batch_dims={3}, lhs_contracting_dims={1}, rhs_batch_dims={0}, "
         "rhs_contracting_dims={0}", "lhs dimension number 3"),
        ("lhs_contracting_dims={1,1}, rhs_contracting_dims={0,1}", "repeated"),
        ("lhs_batch_dims={0}, lhs_contracting_dims={1}, rhs_contracting_dims={0}", "batch"),
        ("lhs_contracting_dims={0,1}, rhs_contracting_dims={0}", "contracting"),
        ("lhs_contracting_dims={x}, rhs_contracting_dims={0}", "integer"),
    ],
)  # fmt: skip
@pytest.mark.parametrize("shape", ["f32[4,16] ", ""], ids=["written", "inferred"])
def test_refused_at_the_dot(attributes: str, says: str, shape: str) -> None:
    with pytest.raises(HloSemanticError) as caught:
        parse(_dot(attributes, shape=shape), "d.hlo")
    assert says in caught.value.message
    assert caught.value.span is not None and caught.value.span.line == 5


def test_a_dot_that_fits_is_read() -> None:
    module = parse(_dot("lhs_contracting_dims={1}, rhs_contracting_dims={0}", shape=""))
    assert module.entry is not None and module.entry.root is not None
    assert module.entry.root.shape.dims == (4, 16)  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("numbers", "ranks", "fits"),
    [
        (((0,), (2,), (0,), (1,)), (3, 2), True),
        (((), (), (), ()), (0, 0), True),
        (((0,), (2,), (0,), (2,)), (3, 2), False),
        (((0,), (0,), (0,), (1,)), (3, 2), False),
    ],
)
def test_the_rule(numbers, ranks, fits: bool) -> None:  # type: ignore[no-untyped-def]
    assert (dot_dimensions_problem(numbers, *ranks) is None) == fits
