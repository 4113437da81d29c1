"""`python -m hlo_layout` is the `hlo-layout` command."""

from hlo_layout.cli import main

main()
