"""One device, one name: the terminal header, Markdown, HTML, the notebook views and the plot title
name a device the same way, for a file that names its GPU, one whose GPU is inferred, one given
`--gpu`, and one with no GPU at all (`analysis.records.device_name`)."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
from conftest import FIXTURES, analyzed

from ncu_roof.analysis.records import device_name
from ncu_roof.api import Analysis
from ncu_roof.base.vocabulary import RoofChoice
from ncu_roof.render.html import render_html
from ncu_roof.render.markdown import render_markdown
from ncu_roof.render.plot import render_plot
from ncu_roof.render.summary import summarize
from ncu_roof.render.terminal import render_terminal

CASES = [
    ("raw_base.csv", None, "NVIDIA A100-SXM4-40GB"),
    ("details_unnamed_cc_sms.csv", None, "A100 PCIe 40GB (inferred from CC 8.0, 108 SMs)"),
    ("details_unnamed_cc_sms.csv", "a10g", "NVIDIA A10G (from --gpu)"),
    ("details_metrics_15col.csv", None, "unknown GPU"),
]


@pytest.mark.parametrize(("name", "gpu", "expected"), CASES)
def test_every_sink_names_a_device_one_way(name: str, gpu: str | None, expected: str) -> None:
    analysis = Analysis.of(analyzed(FIXTURES / name, RoofChoice(gpu_key=gpu)))
    assert device_name(analysis.devices[0]) == expected
    summary = summarize(analysis)
    terminal = render_terminal(summary, color=False, width=400)
    assert f"device 0: {expected} " in terminal
    markdown = re.sub(r"\\(.)", r"\1", render_markdown(summary))  # Markdown's escapes undone
    assert expected in markdown
    assert f"Device 0 {expected}:" in text_of(analysis._repr_html_())
    assert f"Device 0: {expected} " in text_of(render_html(summary, plot_svg=""))
    assert f"device 0 {expected}:" in repr(analysis)
    assert f"{expected} (device 0):" in html.unescape(render_plot(analysis).decode("utf-8"))


def text_of(page: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", page))


def test_a_header_of_memory_roofs_alone_lists_them(corpus: Path) -> None:
    """A details page with a shared-memory roof and no compute roof (A100 BERT attention): the
    header lists what it has, with no empty compute part (`(measured): ; shared …` before). The
    roof is the median of the launches whose percentage of peak has 3 significant digits (108 SMs x
    128 B x each one's clock); 0.01–0.77 % (to hundredths) gave none, 11.9 TB/s with them."""
    analysis = analyzed(corpus / "a100_details-kerneltime-rules_hier-roofline_bert-attn.csv")
    first = render_terminal(summarize(analysis), color=False, width=400).splitlines()[0]
    assert first == "device 0: unknown GPU (cc ?) — roofs [report] at 944 MHz (measured): shared 14.1 TB/s"
    # its source names those launches and their clock (14.1 TB/s = 108 x 128 B x 1.023 GHz), not
    # every launch's (the device's 944 MHz: 26 launches)
    assert (
        analysis.devices[0]
        .roofs.sources["shared"]
        .endswith(" at measured 1.023 GHz (median of 8 of 26 launches)")
    )
