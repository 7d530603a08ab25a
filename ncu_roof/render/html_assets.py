"""The HTML report's assets, files in ncu_roof/data: the page (report.html, a `string.Template`),
its style sheet (report.css, the verdict colours of `render.summary` written in where its comments
mark them), its one script (report.js: lays out, sorts, filters and pages the table from the
page's JSON data with `textContent` only; the Content-Security-Policy allows it by hash).
"""

from __future__ import annotations

from string import Template

from ncu_roof.base.tomlfile import package_text
from ncu_roof.base.vocabulary import Bound
from ncu_roof.render.summary import VERDICT_COLOURS

CSS = (
    package_text("report.css")
    .replace("/*verdict colours*/", "".join(f"--{b.value}:{VERDICT_COLOURS[b]};" for b in Bound))
    .replace("/*verdict backgrounds*/", "".join(f".{b.value}{{background:var(--{b.value})}}" for b in Bound))
)
SCRIPT = package_text("report.js")
PAGE = Template(package_text("report.html"))
