"""Our dependencies' private internals, one module per dependency (`lark.py`, `typer.py`),
each version-checked: the rest of the package uses only their public API."""
