"""Package list only (everything else is in pyproject.toml).

`grammars/hlo.lark` sits at the top of the repository and is shipped as `hlo_layout.grammars`,
a mapping pyproject's automatic package discovery cannot express.
"""

from setuptools import find_packages, setup

setup(
    packages=[*find_packages(include=["hlo_layout", "hlo_layout.*"]), "hlo_layout.grammars"],
    package_dir={"hlo_layout.grammars": "grammars"},
)
