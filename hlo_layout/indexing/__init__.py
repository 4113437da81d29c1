"""XLA indexing maps in pure Python: expressions, intervals, maps, the simplifier and the text form.

>>> from hlo_layout.indexing import parse_indexing_map, simplify
>>> m = parse_indexing_map("(d0) -> (d0 mod 42), domain: d0 in [53, 71]")
>>> str(simplify(m))
'(d0) -> (d0 - 42), domain: d0 in [53, 71]'
"""

from hlo_layout.indexing.errors import IndexingError, IndexingParseError
from hlo_layout.indexing.expr import (
    AffineExpr,
    ExprKind,
    VarSpace,
    canonicalize,
    const,
    dim,
    rt,
    sym,
)
from hlo_layout.indexing.interval import Interval
from hlo_layout.indexing.map import (
    IndexingMap,
    MapState,
    Variable,
    compose,
    constraints_satisfied,
    contains_point,
    domain_points,
    evaluate_domain,
    evaluate_map,
)
from hlo_layout.indexing.range_eval import expr_range
from hlo_layout.indexing.simplify import (
    convert_range_variables_to_dimensions,
    convert_symbols_to_dimensions,
    remove_unused_symbols,
    remove_unused_vars,
    rescale_symbols,
    simplify,
)
from hlo_layout.indexing.text import (
    format_expr,
    format_indexing_map,
    parse_expr,
    parse_indexing_map,
    same_text,
    to_json,
)

__all__ = [
    "AffineExpr",
    "ExprKind",
    "IndexingError",
    "IndexingMap",
    "IndexingParseError",
    "Interval",
    "MapState",
    "VarSpace",
    "Variable",
    "canonicalize",
    "compose",
    "const",
    "constraints_satisfied",
    "contains_point",
    "convert_range_variables_to_dimensions",
    "convert_symbols_to_dimensions",
    "dim",
    "domain_points",
    "evaluate_domain",
    "evaluate_map",
    "expr_range",
    "format_expr",
    "format_indexing_map",
    "parse_expr",
    "parse_indexing_map",
    "remove_unused_symbols",
    "remove_unused_vars",
    "rescale_symbols",
    "rt",
    "same_text",
    "simplify",
    "sym",
    "to_json",
]
