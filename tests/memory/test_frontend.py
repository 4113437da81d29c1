"""memory/frontend.py: jax, TensorFlow and torch-xla told apart from the text alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from hlo_layout.memory.frontend import detect_frontend
from hlo_layout.syntax import parse, parse_file
from tests.memory.helpers import DATA

JAX_DUMPS = sorted(
    [
        *DATA.glob("corpus/jax-*/*after_optimizations.txt"),
        *DATA.glob("memory/*/*after_optimizations.txt"),
        *DATA.glob("memory/*/*/*/*.after_optimizations.txt"),
        *DATA.glob("corpus/libtpu-*/*/*.after_optimizations.txt"),
    ]
)
#: The TensorFlow 2.21 and torch-xla 2.9 dumps (tests/data/frontends, made by the "datagen"
#: helper's generators).
FRONTEND_DUMPS = sorted(DATA.glob("frontends/*/*/*after_optimizations.txt"))


def test_every_jax_dump_is_jax() -> None:
    assert len(JAX_DUMPS) > 200
    for dump in JAX_DUMPS:
        assert detect_frontend(parse_file(dump))[0] == "jax", dump


@pytest.mark.skipif(not FRONTEND_DUMPS, reason="tests/data/frontends is not in this checkout")
@pytest.mark.parametrize("dump", FRONTEND_DUMPS, ids=lambda p: f"{p.parts[-3]}/{p.parts[-2]}")
def test_tensorflow_and_torch_xla_dumps(dump: Path) -> None:
    want = dump.parts[-3]  # tensorflow / torch-xla
    assert detect_frontend(parse_file(dump))[0] == want


def _module(name: str, header: str = "", metadata: str = "") -> str:
    meta = f", metadata={{{metadata}}}" if metadata else ""
    return (
        f"HloModule {name}{header}\n\nENTRY main {{\n"
        f"  p = f32[4]{{0}} parameter(0)\n  ROOT n = f32[4]{{0}} negate(p){meta}\n}}\n"
    )


@pytest.mark.parametrize(
    "text,want,why",
    [
        (_module("jit_train_step"), "jax", "module name"),
        (_module("pmap_step"), "jax", "module name"),
        (
            _module("a_inference_f_12__XlaMustCompile_true_config_proto_1_executor_type_2_.3"),
            "tensorflow",
            "module name",
        ),
        (_module("cluster_0__XlaCompiledKernel_true"), "tensorflow", "module name"),
        (_module("SyncTensorsGraph.393"), "torch-xla", "module name"),
        (_module("m", ", alias_passthrough_params=true"), "tensorflow", "header attribute"),
        (
            _module("m", ", allow_spmd_sharding_propagation_to_output={true}"),
            "jax",
            "header attribute",
        ),
        (_module("m", metadata='op_name="jit(f)/neg"'), "jax", "metadata"),
        (_module("m", metadata='op_type="Neg" op_name="Neg"'), "tensorflow", "metadata"),
        (_module("m", metadata='op_type="aten__neg"'), "torch-xla", "metadata"),
        (_module("m", metadata='op_name="neg"'), None, "no sign"),
        (_module("m"), None, "no sign"),
    ],
)
def test_signs(text: str, want: str | None, why: str) -> None:
    got, reason = detect_frontend(parse(text))
    assert got == want
    assert reason.startswith(why)
