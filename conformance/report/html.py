"""Render results into one self-contained HTML file (no network: CSS, script, data, SVG inline).

Escaping is jinja2's autoescape for every string in the markup; the records table for the
page's script travels as JSON in a non-executed ``<script type="application/json">`` with
``<``, ``>``, ``&`` and the JavaScript line separators escaped, so no string — a case id such as
``</script><script>…`` or ``<!--`` — can end the block or start a comment. The page's one
script is allowed by its hash in a Content-Security-Policy that forbids every network load and
every other script, so an injected script would not run even if some escaping were missed.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import tempfile
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup

from conformance import __version__
from conformance.report.data import NONE, browser_payload
from conformance.report.details import build_detail
from conformance.report.merge import Results, not_offered_of
from conformance.report.summary import run_view
from conformance.report.svg import histograms
from conformance.report.values import fmt

_JS_ESCAPES = {
    "&": "\\u0026",
    "<": "\\u003c",
    ">": "\\u003e",
    "\u2028": "\\u2028",
    "\u2029": "\\u2029",
}


def script_json(value: Any) -> Markup:
    """JSON that is safe inside ``<script>``: no ``</script>``, ``<!--`` or line separators."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    for raw, escaped in _JS_ESCAPES.items():
        text = text.replace(raw, escaped)
    return Markup(text)


def inert(html: Markup) -> Markup:
    """Escaped HTML to carry in a ``<script type="text/html">`` block until it is opened.

    The browser only scans such a block for its end tag instead of building DOM, which keeps a
    page with thousands of failure details fast to open. Strings from records are escaped by
    autoescape (no ``<`` survives), so only our template could end the block early: refuse.
    """
    lowered = html.lower()
    if "</script" in lowered or "<!--" in lowered or "<script" in lowered:
        raise ValueError("a detail template produced <script or <!--; it cannot be embedded")
    return html


def asset(name: str) -> str:
    """A static file shipped beside the templates (the page's CSS and script)."""
    return (resources.files("conformance.report") / "templates" / name).read_text("utf-8")


def csp_hash(script: str) -> str:
    digest = hashlib.sha256(script.encode("utf-8")).digest()
    return "sha256-" + base64.b64encode(digest).decode("ascii")


def content_security_policy(script: str) -> str:
    return (
        f"default-src 'none'; script-src '{csp_hash(script)}'; style-src 'unsafe-inline'; "
        "img-src data:; base-uri 'none'; form-action 'none'"
    )


def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("conformance.report", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["fmt"] = fmt
    return env


def render_report(results: Results, reproducer_files: Mapping[str, str] | None = None) -> str:
    """The whole report as one HTML string; ``reproducer_files`` maps nodeid → relative href."""
    files = reproducer_files or {}
    env = environment()
    # A template's module holds its macros as attributes, which jinja2's types cannot name.
    body = env.get_template("_detail.html.j2").module.detail_body  # type: ignore[attr-defined]
    details: list[tuple[int, Markup]] = []
    detail_ids: dict[int, int] = {}
    for i, rec in enumerate(results.records):
        if rec.outcome == "passed":
            continue
        detail_ids[i] = len(details)
        detail = build_detail(len(details), rec, files.get(rec.nodeid, ""))
        details.append((detail.id, inert(body(detail))))
    payload = browser_payload(results.records, detail_ids, not_offered_of([results.run]))
    script = asset("report.js")
    ran = {rec.static.framework for rec in results.records}
    frameworks = [fw for fw in payload["frameworks"] if fw != NONE and fw in ran]
    return env.get_template("index.html.j2").render(
        run=run_view(results),
        payload=payload,
        data_json=script_json(payload),
        details=details,
        histograms=histograms(results.records, frameworks),
        style=Markup(asset("report.css")),
        script=Markup(script),
        csp=content_security_policy(script),
        version=__version__,
    )


def write_text_atomic(path: str | Path, text: str) -> None:
    """Write to a temporary file beside ``path``, then rename: a reader never sees half a file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.chmod(tmp, 0o644)  # mkstemp's 0600 would hide a report meant to be shared
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
