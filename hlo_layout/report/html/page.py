"""`render_html(data) -> str`: one self-contained HTML page (or a notebook fragment) that draws
the report from the JSON it embeds.

The data is embedded once, as `<script type="application/json" id="hlo-layout-data">`; the
drawing is plain JavaScript and CSS shipped in `assets/` (no library, no network: the page's
Content-Security-Policy is `default-src 'none'` with the inline script and style allowed by
hash). Everything the page shows is built with `textContent`, never parsed as HTML, so names in
a dump cannot inject markup.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
from functools import cache
from importlib import resources
from typing import Any

DATA_ELEMENT_ID = "hlo-layout-data"


@cache
def _asset(name: str) -> str:
    return resources.files("hlo_layout.report.html").joinpath("assets", name).read_text("utf-8")


def embed_json(data: Any) -> str:
    """JSON that can sit inside a `<script>` element: `<`, `>` and `&` are written as `\\u003c`
    etc. (only possible inside strings, where JSON.parse reads them back), so no `</script>` or
    `<!--` can end or change the element."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return (
        text.replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("&", "\\u0026")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


def _sha256(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def content_security_policy() -> str:
    """`default-src 'none'`: the page may load nothing; only our own inline script and style
    (by hash) run, and images only from `data:`."""
    return (
        f"default-src 'none'; script-src {_sha256(_asset('report.js'))}; "
        f"style-src {_sha256(_asset('report.css'))}; img-src data:; base-uri 'none'; "
        "form-action 'none'"
    )


def render_html(data: dict[str, Any], *, fragment: bool = False) -> str:
    """The report page for `data` (see `report_data`): a whole HTML document, or with
    `fragment=True` a `<div>` for a notebook's `_repr_html_` (no CSP there: the notebook's
    own policy applies; element ids are then not unique across outputs, so the script finds its
    data relative to itself)."""
    css, js = _asset("report.css"), _asset("report.js")
    # A whole page owns its URL (`#module=N` links); a notebook fragment does not.
    page = "" if fragment else ' data-page="full"'
    body = (
        f'<div class="hlo-report"{page}>'
        "<noscript>This report draws itself with JavaScript from the JSON embedded in it "
        f"(the <code>script#{DATA_ELEMENT_ID}</code> element).</noscript>"
        '<div class="hlo-app"></div>'
        f'<script type="application/json" id="{DATA_ELEMENT_ID}">{embed_json(data)}</script>'
        f"<script>{js}</script>"
        "</div>"
    )
    if fragment:
        return f"<style>{css}</style>{body}"
    title = html.escape(str(data.get("title") or "report"))
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{content_security_policy()}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<meta name="generator" content="hlo-layout">\n'
        f"<title>{title} · hlo-layout report</title>\n"
        f"<style>{css}</style>\n</head>\n<body>\n{body}\n</body>\n</html>\n"
    )


__all__ = ["DATA_ELEMENT_ID", "content_security_policy", "embed_json", "render_html"]
