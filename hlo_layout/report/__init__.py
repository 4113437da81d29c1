"""Report models (plain data) and their renderers (Rich for people; JSON for scripts).

`model.py` and the other `*_model` modules are pure; only the `*_view` modules import Rich.
"""
