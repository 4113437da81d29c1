"""Which frontend built a dump's module: jax, TensorFlow or torch-xla, read from the text alone.

A note about jax's own figures (`compiled.memory_analysis()`) only applies to a jax program;
TensorFlow (`jit_compile=True`) and torch-xla hand XLA the same kind of module, named and
annotated their own way (tests/data/frontends/README.md has a table):

- jax: modules `jit_f` (`pmap_f`), metadata `op_name="jit(f)/..."` and `stack_frame_id=`,
  header `allow_spmd_sharding_propagation_to_*`;
- TensorFlow: `a_inference_f_12__XlaMustCompile_...` (`cluster_...`), metadata `op_type="MatMul"`
  and `op_name="XLA_Args"`, header `alias_passthrough_params=true`;
- torch-xla: `SyncTensorsGraph.N` (`IrToHlo.N`), metadata `op_type="aten__mul"`.
"""

from __future__ import annotations

import re

from hlo_layout.syntax.tree import LazyAttributes, Module

#: What detect_frontend answers.
FRONTENDS = ("jax", "tensorflow", "torch-xla")

_NAMES = (
    (re.compile(r"(?:jit|pjit|pmap|xmap)_"), "jax"),
    (re.compile(r"a_inference_|cluster_\d|.*XlaMustCompile"), "tensorflow"),
    (re.compile(r"(?:SyncTensorsGraph|IrToHlo)\.\d+$"), "torch-xla"),
)
_METADATA = (
    (re.compile(r'op_name="(?:jit|pjit|pmap|xmap)\('), "jax", 'op_name "jit(...)/..."'),
    (re.compile(r'op_type="(?:aten|xla)__'), "torch-xla", 'op_type "aten__..."'),
    (re.compile(r'op_name="XLA_(?:Args|Retvals)"|op_type="[A-Z]'), "tensorflow", "TF op types"),
)
#: Instructions whose metadata are read before giving up (the signs are on most of them).
_SCAN = 2000


def detect_frontend(module: Module) -> tuple[str | None, str]:
    """(`jax`, `tensorflow`, `torch-xla` or None, why): the module's name first (each frontend
    names modules its own way), then header attributes, then instruction metadata."""
    name = module.name or ""
    for pattern, frontend in _NAMES:
        if pattern.match(name):
            return frontend, f"module name {name}"
    keys = {a.key for a in module.attributes}
    if "alias_passthrough_params" in keys:
        return "tensorflow", "header attribute alias_passthrough_params"
    if any(k.startswith("allow_spmd_sharding_propagation") for k in keys):
        return "jax", "header attribute allow_spmd_sharding_propagation"
    seen = 0
    for c in module.computations:
        for i in c.instructions:
            attrs = i.attributes
            if not attrs:
                continue
            text = attrs._text if type(attrs) is LazyAttributes else " ".join(map(str, attrs))
            if "metadata" in text:
                for pattern, frontend, sign in _METADATA:
                    if pattern.search(text):
                        return frontend, f"metadata {sign}"
            seen += 1
            if seen >= _SCAN:
                return None, "no sign of jax, TensorFlow or torch-xla"
    if any(s.name == "StackFrames" for s in module.sections):
        return "jax", "stack frame tables"
    return None, "no sign of jax, TensorFlow or torch-xla"
