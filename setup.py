"""Package list and the optional compiled accelerators (everything else is in pyproject.toml).

`grammars/hlo.lark` sits at the top of the repository and is shipped as `hlo_layout.grammars`,
a mapping pyproject's automatic package discovery cannot express.

Each extension in `accel/` speeds up one hot loop whose pure-Python twin stays in the package
(`hlo_layout/accel.py`). They are `optional`: without a C compiler or Python's headers,
`pip install .` warns and installs the pure-Python package, which passes the same tests.
"""

from setuptools import Extension, find_packages, setup

#: (module name, C sources). Add one line per accelerator.
ACCELERATORS: list[tuple[str, list[str]]] = [
    ("_hlo_layout_scan", ["accel/scan.c"]),  # syntax/scan.py, the line loop
    ("_hlo_layout_heap", ["accel/heap.c"]),  # memory/heap_simulator.py _Packer
    ("_hlo_layout_json", ["accel/jsonattrs.c"]),  # report/model.py computation_pieces, add
]

setup(
    # `assets` holds the HTML report's CSS and JS (no __init__.py): listed, or setuptools warns.
    packages=[
        *find_packages(include=["hlo_layout", "hlo_layout.*"]),
        "hlo_layout.grammars",
        "hlo_layout.report.html.assets",
    ],
    package_dir={"hlo_layout.grammars": "grammars"},
    ext_modules=[
        # accel/lexicon.h is generated from hlo_layout/syntax/lexicon.py (the token classes).
        Extension(
            name, sources, depends=["accel/lexicon.h"], optional=True, extra_compile_args=["-O2"]
        )
        for name, sources in ACCELERATORS
    ],
)
