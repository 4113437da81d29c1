"""The self-contained HTML report (`hlo-layout report`): data building and page rendering.

`report_data(...)` builds the JSON the page embeds; `render_html(data)` turns it into the page
(or, with `fragment=True`, into a notebook's `_repr_html_`). Pure: no Rich.
"""

from __future__ import annotations

from hlo_layout.report.html.data import (
    DEFAULT_TOP,
    bound_memory,
    build_report,
    memory_document,
    module_overview,
    report_data,
    report_of,
    summarize_inspect,
)
from hlo_layout.report.html.page import DATA_ELEMENT_ID, embed_json, render_html

__all__ = [
    "DATA_ELEMENT_ID",
    "DEFAULT_TOP",
    "bound_memory",
    "build_report",
    "embed_json",
    "memory_document",
    "module_overview",
    "render_html",
    "report_data",
    "report_of",
    "summarize_inspect",
]
