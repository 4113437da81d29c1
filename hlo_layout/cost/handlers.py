"""The cost rules, one per XLA `Handle*` of HloCostAnalysis (xla/service/hlo_cost_analysis.cc).

Each rule's docstring names the handler it mirrors. A rule reads `v.properties` as Preprocess left
them and changes them in place, or replaces them (`v.properties = ...`) where XLA assigns
`current_properties_`. Where XLA writes a figure nobody sums (`hlo_properties_` of a fused
instruction after the fact), we leave it out. The fusion rules live in `fusion.py`.
"""

from __future__ import annotations

import math

from hlo_layout.cost.properties import (
    BYTES_ACCESSED,
    FLOPS,
    OPTIMAL_SECONDS,
    OUTPUT_BYTES,
    TRANSCENDENTALS,
    Properties,
    is_subcomputation_key,
    operand_bytes_key,
    operand_utilization_key,
    output_bytes_key,
)
from hlo_layout.cost.registry import (
    CostError,
    Visit,
    elements,
    elements_recursive,
    register,
)
from hlo_layout.syntax.attrs import conv_dimension_numbers, int_list, int_value, window
from hlo_layout.syntax.opcodes import (
    ADD_DEPENDENCY,
    AFTER_ALL,
    ALL_REDUCE,
    ALL_REDUCE_START,
    ASYNC_START,
    BITCAST,
    CALL,
    CHOLESKY,
    CONDITIONAL,
    CONSTANT,
    CONVOLUTION,
    COPY,
    CUSTOM_CALL,
    DOMAIN,
    DOT,
    DYNAMIC_SLICE,
    DYNAMIC_UPDATE_SLICE,
    ELEMENTWISE,
    FFT,
    GATHER,
    GET_TUPLE_ELEMENT,
    INFEED,
    MAP,
    OUTFEED,
    PARAMETER,
    RAGGED_DOT,
    REDUCE,
    REDUCE_WINDOW,
    RNG,
    RNG_BIT_GENERATOR,
    SCALED_DOT,
    SCAN,
    SCATTER,
    SELECT_AND_SCATTER,
    SLICE,
    SORT,
    TRANSCENDENTAL,
    TRANSPOSE,
    TRIANGULAR_SOLVE,
    TUPLE,
    WHILE,
)
from hlo_layout.syntax.shape import ArrayShape, BufferShape, Shape, TupleShape

#: HloCostAnalysis::kFmaFlops: a fused multiply-add counts as two flops.
FMA_FLOPS = 2


def _dims(shape: Shape) -> tuple[int, ...]:
    """An array's dimensions (a `b(...)` buffer's array's); none for any other shape."""
    if isinstance(shape, BufferShape):
        shape = shape.element
    return shape.dims if isinstance(shape, ArrayShape) else ()


def _dim(dims: tuple[int, ...], d: int) -> int:
    """Dimension `d`, or 1 when the shape has none there (a tuple-shaped sparse kernel)."""
    return dims[d] if 0 <= d < len(dims) else 1


def _scaled(v: Visit, sub: Properties, count: int | float, *, add: bool = False) -> None:
    """Copy a subcomputation's non-byte properties, times `count` (KeyToCopyFromSubcomputation)."""
    props = v.properties
    for key, value in sub.items():
        if is_subcomputation_key(key):
            props[key] = props.get(key, 0) + value * count if add else value * count


def _no_traffic(v: Visit) -> None:
    """No bytes at all (XLA's handlers for forwarding and ordering instructions)."""
    props = v.properties
    props[BYTES_ACCESSED] = 0
    props[OUTPUT_BYTES] = 0
    for k in range(len(v.node.operands)):
        props[operand_bytes_key(k)] = 0
    props[OPTIMAL_SECONDS] = 0


# -- elementwise --------------------------------------------------------------------------------


@register(*(ELEMENTWISE - {COPY, MAP}))
def elementwise(v: Visit) -> None:
    """HandleElementwiseOp (and HandleElementwiseUnary/Binary, HandleCompare, HandleClamp,
    HandleSelect, HandleConvert, HandleReducePrecision): one flop per output element, or one
    transcendental for the opcodes in opcodes.TRANSCENDENTAL."""
    count = elements(v.shape)
    v.properties[TRANSCENDENTALS if v.node.opcode in TRANSCENDENTAL else FLOPS] = count


# -- no computation, no bytes -------------------------------------------------------------------


@register(PARAMETER, CONSTANT)
def parameter(v: Visit) -> None:
    """HandleParameter, HandleConstant: nothing read, nothing written."""
    props = v.properties
    props[BYTES_ACCESSED] = 0
    props[OUTPUT_BYTES] = 0
    props[OPTIMAL_SECONDS] = 0


@register(GET_TUPLE_ELEMENT, BITCAST)
def get_tuple_element(v: Visit) -> None:
    """HandleGetTupleElement, HandleBitcast: a pointer is forwarded, no element is touched."""
    props = v.properties
    props[BYTES_ACCESSED] = 0
    props[OUTPUT_BYTES] = 0
    props[operand_bytes_key(0)] = 0
    props[OPTIMAL_SECONDS] = 0


@register(DOMAIN, AFTER_ALL, ADD_DEPENDENCY)
def domain(v: Visit) -> None:
    """HandleDomain, HandleAfterAll, HandleAddDependency: ordering only, no code."""
    _no_traffic(v)


@register(TRANSPOSE)
def transpose(v: Visit) -> None:
    """HandleTranspose: HandleBitcast when the transpose is a bitcast of its layouts
    (HloInstruction::IsEffectiveBitcast → ShapeUtil::TransposeIsBitcast: the permutation composed
    with the output's minor-to-major order is the operand's)."""
    operand, out = v.operand_shape(0), v.shape
    attr = v.attr("dimensions")
    if not isinstance(operand, ArrayShape) or not isinstance(out, ArrayShape) or attr is None:
        return
    if operand.element_type != out.element_type:
        return
    permutation = int_list(attr)
    try:
        composed = tuple(permutation[m] for m in out.minor_to_major)
    except IndexError:
        return
    if composed == operand.minor_to_major:
        get_tuple_element(v)


# -- data movement with its own bytes -----------------------------------------------------------


@register(SLICE)
def slice_(v: Visit) -> None:
    """HandleSlice: reads only what it writes."""
    out = v.size(v.shape)
    props = v.properties
    props[BYTES_ACCESSED] = 2 * out
    props[OUTPUT_BYTES] = out
    props[operand_bytes_key(0)] = out
    props[operand_utilization_key(0)] = _ratio(elements(v.shape), elements(v.operand_shape(0)))


def _ratio(a: int, b: int) -> float:
    """`1.0 * a / b` as C++ computes it (inf or nan for b = 0)."""
    if b:
        return a / b
    return math.nan if a == 0 else math.inf


@register(DYNAMIC_SLICE)
def dynamic_slice(v: Visit) -> None:
    """HandleDynamicSlice: the slice read and written, and the first start index."""
    out = v.size(v.shape)
    start = v.size(v.operand_shape(1)) if len(v.node.operands) > 1 else 0
    props = v.properties
    props[BYTES_ACCESSED] = 2 * out + start
    props[OUTPUT_BYTES] = out
    props[operand_bytes_key(0)] = out
    props[operand_bytes_key(1)] = start
    props[operand_utilization_key(0)] = _ratio(elements(v.shape), elements(v.operand_shape(0)))


@register(DYNAMIC_UPDATE_SLICE)
def dynamic_update_slice(v: Visit) -> None:
    """HandleDynamicUpdateSlice: the update read and written in place (operand 0 aliases the
    output, 0 bytes), and the first start index."""
    update = v.size(v.operand_shape(1))
    start = v.size(v.operand_shape(2)) if len(v.node.operands) > 2 else 0
    props = v.properties
    props[BYTES_ACCESSED] = 2 * update + start
    props[OUTPUT_BYTES] = update
    props[operand_bytes_key(0)] = 0
    props[operand_bytes_key(1)] = update
    props[operand_bytes_key(2)] = start
    total = elements(v.shape)
    props[operand_utilization_key(0)] = _ratio(total - elements(v.operand_shape(1)), total)


@register(TUPLE)
def tuple_(v: Visit) -> None:
    """HandleTuple: only the output's pointer table is written."""
    props = v.properties
    out = v.size(v.shape)
    props[BYTES_ACCESSED] = out
    props[OUTPUT_BYTES] = out
    for k in range(len(v.node.operands)):
        props[operand_bytes_key(k)] = 0


@register(GATHER)
def gather(v: Visit) -> None:
    """HandleGather: a copy the size of the output, and the indices."""
    out = v.size(v.shape)
    indices = v.size(v.operand_shape(1))
    props = v.properties
    props[BYTES_ACCESSED] = 2 * out + indices
    props[operand_bytes_key(0)] = out
    props[operand_bytes_key(1)] = indices
    props[operand_utilization_key(0)] = _ratio(elements(v.shape), elements(v.operand_shape(0)))
    props[OUTPUT_BYTES] = out


@register(SCATTER)
def scatter(v: Visit) -> None:
    """HandleScatter: three update-sized transfers per operand (read, updates, write) and the
    indices; the update computation once per update element."""
    n = (len(v.node.operands) - 1) // 2
    props = v.properties
    total = 0
    for i in range(n):
        update = v.size(v.operand_shape(n + 1 + i))
        props[operand_bytes_key(i)] = update
        props[operand_bytes_key(n + 1 + i)] = update
        total += update
    indices = v.size(v.operand_shape(n))
    props[operand_bytes_key(n)] = indices
    props[BYTES_ACCESSED] = 3 * total + indices
    props[OUTPUT_BYTES] = total
    count = elements(v.operand_shape(n + 1))
    _scaled(v, v.subcomputation(v.callee("to_apply")), count)


@register(INFEED)
def infeed(v: Visit) -> None:
    """HandleInfeed: every leaf of the output written."""
    props = v.properties
    size = 0
    for index, leaf in _leaves(v.shape):
        leaf_size = v.size(leaf)
        size += leaf_size
        props[output_bytes_key(index)] = leaf_size
    props[OUTPUT_BYTES] = size
    props[BYTES_ACCESSED] = size


@register(OUTFEED)
def outfeed(v: Visit) -> None:
    """HandleOutfeed: every leaf of every operand read."""
    props = v.properties
    props[BYTES_ACCESSED] = 0
    for i in range(len(v.node.operands)):
        size = 0
        for index, leaf in _leaves(v.operand_shape(i)):
            leaf_size = v.size(leaf)
            size += leaf_size
            props[operand_bytes_key(i, index)] = leaf_size
        props[operand_bytes_key(i)] = size
        props[BYTES_ACCESSED] += size


def _leaves(shape: Shape) -> list[tuple[tuple[int, ...], Shape]]:
    """ShapeUtil::ForEachLeafShape: every non-tuple subshape (tokens too) with its index."""
    if isinstance(shape, TupleShape):
        out: list[tuple[tuple[int, ...], Shape]] = []
        for i, element in enumerate(shape.elements):
            out.extend(((i, *index), leaf) for index, leaf in _leaves(element))
        return out
    return [((), shape)]


# -- arithmetic ---------------------------------------------------------------------------------


def dot_flops(lhs: Shape, result: Shape, contracting: tuple[int, ...]) -> int:
    """HloCostAnalysis::GetDotFlops: 2 × output elements × the contracted size."""
    width = 1
    dims = lhs.dims if isinstance(lhs, ArrayShape) else ()
    for d in contracting:
        if 0 <= d < len(dims):
            width *= dims[d]
    return FMA_FLOPS * elements(result) * width


def _contracting(v: Visit) -> tuple[int, ...]:
    attr = v.attr("lhs_contracting_dims")
    return int_list(attr) if attr is not None else ()


@register(DOT, SCALED_DOT)
def dot(v: Visit) -> None:
    """HandleDot, HandleScaledDot: GetDotFlops of operand 0 and the result."""
    v.properties[FLOPS] = dot_flops(v.operand_shape(0), v.shape, _contracting(v))


@register(RAGGED_DOT)
def ragged_dot(v: Visit) -> None:
    """HandleRaggedDot: GetDotFlops with the result's group dimensions deleted (dimension i for
    the i-th group dimension, as XLA deletes them)."""
    result = v.shape
    groups = v.attr("rhs_group_dims")
    if isinstance(result, ArrayShape) and groups is not None:
        dims = list(result.dims)
        for i in range(len(int_list(groups))):
            if i < len(dims):
                del dims[i]
        result = ArrayShape(result.element_type, tuple(dims))
    v.properties[FLOPS] = dot_flops(v.operand_shape(0), result, _contracting(v))


@register(CONVOLUTION)
def convolution(v: Visit) -> None:
    """HandleConvolution: GetConvolutionFlops."""
    v.properties[FLOPS] = convolution_flops(v)


def convolution_flops(v: Visit) -> int:
    """HloCostAnalysis::GetConvolutionFlops: 2 × (input features / feature groups) × output
    features × (batch / batch groups) × the product over spatial dimensions of the (kernel,
    output) position pairs that read a real input element (padding and base dilation holes
    excluded). XLA counts the pairs in a loop; we count each kernel position's outputs in
    closed form."""
    lhs, rhs, out = (_dims(s) for s in (v.operand_shape(0), v.operand_shape(1), v.shape))
    labels = v.attr("dim_labels")
    if labels is None:
        raise CostError(f"convolution '{v.node.name}' has no dim_labels=", v.node.span)
    dn = conv_dimension_numbers(labels)
    win_attr = v.attr("window")
    dims = window(win_attr) if win_attr is not None else ()
    input_feature = _dim(lhs, dn.input_feature)
    output_feature = _dim(out, dn.output_feature)
    batch = _dim(lhs, dn.input_batch)
    if dims:
        kernel = [_dim(rhs, d) for d in dn.kernel_spatial]
        output = [_dim(out, d) for d in dn.output_spatial]
        inputs = [_dim(lhs, d) for d in dn.input_spatial]
    else:  # window_util::MakeWindow({1})
        from hlo_layout.syntax.attrs import WindowDim

        dims, kernel, output, inputs = (WindowDim(1),), [1], [1], [1]
    product = 1
    for s, w in enumerate(dims):
        product *= _valid_positions(w, kernel[s], output[s], inputs[s])
    feature_groups = _int_attr(v, "feature_group_count", 1)
    batch_groups = _int_attr(v, "batch_group_count", 1)
    fma = (
        _cdiv(input_feature, feature_groups) * output_feature * _cdiv(batch, batch_groups) * product
    )
    return fma * FMA_FLOPS


def _cdiv(a: int, b: int) -> int:
    """C++ integer division (truncates toward zero)."""
    if b == 0:
        return 0
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _int_attr(v: Visit, key: str, default: int) -> int:
    attr = v.attr(key)
    return int_value(attr) if attr is not None else default


def _valid_positions(w: object, kernel: int, output: int, inputs: int) -> int:
    """The (kernel, output) position pairs of one spatial dimension that read an input element."""
    from hlo_layout.syntax.attrs import WindowDim

    assert isinstance(w, WindowDim)
    if (
        inputs == output
        and kernel == output
        and inputs == w.base_dilation
        and w.window_dilation == 1
        and max(1, inputs - 1) == w.stride
        and w.padding_low == 0
        and w.padding_high == 0
    ):
        return inputs
    if (
        inputs == 1
        and kernel == output
        and w.window_dilation == 1
        and w.base_dilation == 1
        and w.stride == 1
        and w.padding_high == output - 1
        and w.padding_low == output - 1
    ):
        return output
    count = 0
    for k in range(kernel):
        if w.stride == 1 and w.base_dilation == 1:
            base = w.padding_low - k * w.window_dilation
            count += max(min(inputs + base, output) - max(base, 0), 0)
            continue
        count += _strided_hits(w, k, output, inputs)
    return count


def _strided_hits(w: object, k: int, output: int, inputs: int) -> int:
    """#{o in [0, output): u = o·stride − pad_low + k·window_dilation is a multiple of the base
    dilation b and 0 ≤ u/b < inputs} (XLA's inner loop over output positions, in closed form)."""
    from hlo_layout.syntax.attrs import WindowDim

    assert isinstance(w, WindowDim)
    s, b = w.stride, w.base_dilation
    c = k * w.window_dilation - w.padding_low
    if s <= 0 or b <= 0 or output <= 0 or inputs <= 0:
        # Degenerate windows: count as XLA's loop does, one output position at a time.
        hits = 0
        for o in range(output):
            u = o * s + c
            q = _cdiv(u, b) if b > 1 else u
            if u == q * (b if b > 1 else 1) and 0 <= q < inputs:
                hits += 1
        return hits
    # o·s + c ∈ [0, b·(inputs − 1)]  →  o ∈ [lo, hi]
    lo = max(0, _ceil_div(-c, s))
    hi = min(output - 1, (b * (inputs - 1) - c) // s)
    if hi < lo:
        return 0
    if b == 1:
        return hi - lo + 1
    # o·s ≡ −c (mod b): solvable iff g | c; then o ≡ o0 (mod b/g).
    g = math.gcd(s, b)
    if c % g:
        return 0
    m = b // g
    o0 = ((-c // g) * pow(s // g, -1, m)) % m if m > 1 else 0
    first = lo + ((o0 - lo) % m)
    return 0 if first > hi else (hi - first) // m + 1


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


@register(FFT)
def fft(v: Visit) -> None:
    """HandleFft: 2 × 4 FMAs per complex multiply × the product of log2(length) × elements."""
    lengths = v.attr("fft_length")
    log_factors = 1
    for n in int_list(lengths) if lengths is not None else ():
        log_factors *= n.bit_length() - 1 if n > 0 else -1  # Log2Floor
    operand = v.operand_shape(0)
    real = operand.elements[0] if isinstance(operand, TupleShape) and operand.elements else operand
    v.properties[FLOPS] = FMA_FLOPS * 4 * log_factors * elements(real)


@register(TRIANGULAR_SOLVE)
def triangular_solve(v: Visit) -> None:
    """HandleTriangularSolve: half of operand 0 read; batch × m × n² / 2 FMAs. XLA writes the
    second operand's bytes under operand 0's key (a slip we keep: the figures must be XLA's)."""
    props = v.properties
    out = v.size(v.shape)
    a, b = v.operand_shape(0), v.operand_shape(1)
    half = v.size(a) / 2.0
    props[OUTPUT_BYTES] = out
    props[operand_bytes_key(0)] = v.size(b)
    props[BYTES_ACCESSED] = out + half + v.size(b)
    last = _dims(a)[-1] if _dims(a) else 1
    props[FLOPS] = FMA_FLOPS * last * elements(b)


@register(CHOLESKY)
def cholesky(v: Visit) -> None:
    """HandleCholesky: half of operand 0 read and half written; batch × n³ / 3 flops."""
    props = v.properties
    a = v.operand_shape(0)
    half = v.size(a) / 2.0
    props[OUTPUT_BYTES] = half
    props[operand_bytes_key(0)] = half
    props[BYTES_ACCESSED] = half + half
    last = _dims(a)[-1] if _dims(a) else 1
    props[FLOPS] = last * elements(a) // 3


@register(RNG)
def rng(v: Visit) -> None:
    """HandleRng: one transcendental per output element."""
    v.properties[TRANSCENDENTALS] = elements(v.shape)


@register(RNG_BIT_GENERATOR)
def rng_bit_generator(v: Visit) -> None:
    """HandleRngBitGenerator: one transcendental per element of every output leaf."""
    v.properties[TRANSCENDENTALS] = elements_recursive(v.shape)


@register(SORT)
def sort(v: Visit) -> None:
    """HandleSort: n × ⌈log2 n⌉ comparisons of operand 0's n elements (the comparator is not
    costed)."""
    n = elements(v.operand_shape(0))
    v.properties[FLOPS] = n * ((n - 1).bit_length() if n > 0 else -1)  # Log2Ceiling


@register(ALL_REDUCE, ALL_REDUCE_START)
def all_reduce(v: Visit) -> None:
    """HandleAllReduce, HandleAllReduceStart: one flop per output element (two replicas
    assumed), every output array written and every operand read."""
    flops = 0
    out = 0
    for _, leaf in _array_subshapes(v.shape):
        flops += elements(leaf)
        out += v.size(leaf)
    total = out + sum(v.size(v.operand_shape(k)) for k in range(len(v.node.operands)))
    props = v.properties
    props[FLOPS] = flops
    props[OUTPUT_BYTES] = out
    props[BYTES_ACCESSED] = total


def _array_subshapes(shape: Shape) -> list[tuple[tuple[int, ...], ArrayShape]]:
    if isinstance(shape, ArrayShape):
        return [((), shape)]
    if isinstance(shape, TupleShape):
        return list(shape.leaves())
    return []


# -- computations applied per element -----------------------------------------------------------


@register(MAP)
def map_(v: Visit) -> None:
    """HandleMap: the mapped computation once per output element."""
    _scaled(v, v.subcomputation(v.callee("to_apply")), elements(v.shape))


@register(REDUCE)
def reduce(v: Visit) -> None:
    """HandleReduce: the reducer once per input element beyond the output's (for a variadic
    reduce, counted on operand 0 and output 0)."""
    shape = v.shape
    output = shape.elements[0] if isinstance(shape, TupleShape) and shape.elements else shape
    count = elements(v.operand_shape(0)) - elements(output)
    _scaled(v, v.subcomputation(v.callee("to_apply")), count)


@register(REDUCE_WINDOW)
def reduce_window(v: Visit) -> None:
    """HandleReduceWindow: the reducer (window size − 1) times per output element; a window that
    is a reduce of one dimension broadcast back over it (padded by size − 1 on both sides) counts
    as that reduce and broadcast."""
    sub = v.subcomputation(v.callee("to_apply"))
    attr = v.attr("window")
    dims = window(attr) if attr is not None else ()
    window_elements = math.prod(d.size for d in dims)
    shape = v.shape
    output_shape = shape.elements[0] if isinstance(shape, TupleShape) and shape.elements else shape
    output_elements = elements(output_shape)
    count = (window_elements - 1) * output_elements
    reduced = [d for d in dims if d.size != 1]
    padded = [d for d in dims if d.padding_low != 0 or d.padding_high != 0]
    if len(reduced) == 1 and len(padded) == 1 and isinstance(shape, ArrayShape):
        for i, d in enumerate(dims):
            if (
                d.size != 1
                and d.padding_low != 0
                and d.padding_high != 0
                and d.padding_low == d.padding_high
                and d.size == 2 * d.padding_low + 1
            ):
                if i < shape.rank and d.padding_low == shape.dims[i] - 1:
                    span = shape.dims[i]
                    count = _cdiv(output_elements, span) + (span - 1)
                break
    _scaled(v, sub, count)


@register(SELECT_AND_SCATTER)
def select_and_scatter(v: Visit) -> None:
    """HandleSelectAndScatter: per source element, the select computation (window size − 1)
    times and the scatter computation once."""
    select = v.subcomputation(v.callee("select"))
    scatter_ = v.subcomputation(v.callee("scatter"))
    source = elements(v.operand_shape(1))
    attr = v.attr("window")
    window_elements = math.prod(d.size for d in window(attr)) if attr is not None else 1
    _scaled(v, select, source * (window_elements - 1), add=True)
    _scaled(v, scatter_, source, add=True)


@register(SCAN)
def scan(v: Visit) -> None:
    """HandleScan (jaxlib 0.10.2's; not in the sources we read, so measured): the scanned
    computation's flops and transcendentals times the element count of operand 1 — whatever the
    scan's length, and whether operand 1 is an input or the first carry (scans of 1 and 2 inputs,
    1 and 2 carries, extra outputs); bytes as Preprocess leaves them."""
    count = elements(v.operand_shape(1)) if len(v.node.operands) > 1 else 1
    _scaled(v, v.subcomputation(v.callee("to_apply")), count, add=True)


# -- control flow and calls ---------------------------------------------------------------------


@register(CALL)
def call(v: Visit) -> None:
    """HandleCall: the called computation's properties."""
    v.properties = dict(v.subcomputation(v.callee("to_apply")))


@register(ASYNC_START)
def async_start(v: Visit) -> None:
    """HandleAsyncStart: the wrapped computation's properties."""
    v.properties = dict(v.subcomputation(v.callee("calls")))


def async_sugar(v: Visit) -> None:
    """HandleAsyncStart of the async-start XLA's parser makes of `<op>-start` sugar
    (`fusion-start`, `call-start`, `custom-call-start`, ...): the wrapped computation holds
    parameters for the operands and one `<op>` of the start's shape element {1}, so its
    properties are that `<op>`'s, costed on parameters."""
    v.properties = dict(v.analysis.async_wrapped_properties(v.view, v.node))


@register(WHILE)
def while_(v: Visit) -> None:
    """HandleWhile: one iteration — the body's and the condition's properties added (loops.py
    multiplies by the trip count)."""
    props: dict[str, int | float] = {}
    for sub in (v.subcomputation(v.callee("body")), v.subcomputation(v.callee("condition"))):
        for key, value in sub.items():
            props[key] = props.get(key, 0) + value
    v.properties = props


@register(CONDITIONAL)
def conditional(v: Visit) -> None:
    """HandleConditional: branch 0's properties, each raised to any later branch's larger value
    (key by key, so the maximum may mix branches)."""
    branches = conditional_branches(v)
    props = dict(v.subcomputation(branches[0]))
    for name in branches[1:]:
        for key, value in v.subcomputation(name).items():
            props[key] = max(props.get(key, 0), value)
    v.properties = props


def conditional_branches(v: Visit) -> list[str]:
    """A conditional's branches in order: `branch_computations`, or true then false."""
    from hlo_layout.syntax.attrs import computation_names

    found = v.attr("branch_computations")
    if found is not None:
        names = list(computation_names(found))
    else:
        names = [v.callee("true_computation"), v.callee("false_computation")]
    if not names:
        raise CostError(f"conditional '{v.node.name}' has no branches", v.node.span)
    return names


@register(CUSTOM_CALL)
def custom_call(v: Visit) -> None:
    """HandleCustomCall: unknown, marked -1 (flops, bytes accessed, every operand's and the
    output's bytes, optimal seconds) — XLA's way of saying it does not know."""
    props = v.properties
    props[OPTIMAL_SECONDS] = -1
    props[BYTES_ACCESSED] = -1
    props[OUTPUT_BYTES] = -1
    for k in range(len(v.node.operands)):
        props[operand_bytes_key(k)] = -1
    props[FLOPS] = -1


# Handlers that only `return OkStatus()` (the Preprocess defaults stand): iota, reverse,
# concatenate, copy, pad, reshape, broadcast (count_multiple_input_accesses is off), the batch
# norms, collectives other than all-reduce, async updates and dones, send/recv, partition and
# replica ids, dimension sizes, topk, optimization-barrier. They need no entry.
