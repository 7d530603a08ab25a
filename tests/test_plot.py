"""The roofline plot: deterministic SVG, a real PNG, every drawable kernel as a marker."""

from __future__ import annotations

import re
import struct
from pathlib import Path

import pytest
from conftest import FIXTURES, analyzed
from matplotlib.figure import Figure
from test_diff import BASE, HEAD, HOSTILE, write
from test_layout import CUTLASS

from ncu_roof.analysis.core import Analysis, analyze
from ncu_roof.analysis.groups import KernelGroup
from ncu_roof.analysis.records import Kernel
from ncu_roof.ingest import read_input
from ncu_roof.render.formats import Caption, RenderOptions
from ncu_roof.render.plot import render_plot
from ncu_roof.render.plot_panel import MAX_MARKERS, KernelPoint, group_points, panel

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "ncu-corpus"
REPORTS = [
    "rtx4090_rep_2023.1.0_reduce.ncu-rep",
    "a10g_rep_2023.1.1_roofline-set.ncu-rep",
    "h100pcie_rep_2025.1_full_silu.ncu-rep",
]


def collections(svg: bytes) -> list[tuple[str, str, str]]:
    """(tier, verdict, basis) of each marker collection: one per tier, verdict and basis, never
    one per kernel."""
    found: list[tuple[str, str, str]] = re.findall(r'id="points-(\w+)-(\w+)-(\w+)"', svg.decode("utf-8"))
    return found


def drawn_ids(analysis: Analysis) -> set[int]:
    return {g.kernels[j].id for d in analysis.devices for g in panel(analysis, d).groups for j in g.rows}


@pytest.fixture
def small() -> Analysis:
    """The analysis of test_diff's BASE rows, once per session (shared: read only)."""
    return analyzed(Path(write("base.csv", BASE)))


@pytest.fixture(scope="module")
def small_svg() -> bytes:
    """`render_plot(small)`, once for the tests of this module that read the default SVG."""
    return render_plot(analyzed(Path(write("base.csv", BASE))))


def test_svg_is_byte_identical_and_draws_each_drawable_kernel(small: Analysis, small_svg: bytes) -> None:
    first = small_svg
    assert first == render_plot(small)
    expected = {k.id for k in small.kernels if kernel_points(k)}
    assert drawn_ids(small) == expected == {0, 1}  # kernel 2 has zero FLOPs: not on log axes
    tiers = {t for k in small.kernels for t, v in k.intensity_flop_per_byte.items() if v and k.id in expected}
    assert {t for t, _, _ in collections(first)} == tiers
    assert len(collections(first)) == len(set(collections(first)))
    assert "1 of 3 launches not drawn" in first.decode("utf-8")
    assert "<a|b" not in first.decode("utf-8")  # names are shortened and XML-escaped


def test_hostile_dollar_names_do_not_trigger_mathtext(small_svg: bytes) -> None:
    svg = small_svg.decode("utf-8")
    assert "k&lt;…&gt;(…)" in svg or "k&lt;…&gt;" in svg
    assert HOSTILE not in svg


def test_png_signature_and_size(small: Analysis) -> None:
    png = render_plot(small, fmt="png")
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width, _height = struct.unpack(">II", png[16:24])
    assert width == 2000  # 10 in at 200 dpi
    sized = render_plot(small, fmt="png", options=RenderOptions(width_in=6.0, height_in=4.0, dpi=100))
    assert struct.unpack(">II", sized[16:24]) == (600, 400)


def test_pdf_is_a_deterministic_pdf(small: Analysis) -> None:
    pdf = render_plot(small, fmt="pdf")
    assert pdf.startswith(b"%PDF-") and pdf == render_plot(small, fmt="pdf")


def test_formulas_only_with_the_full_caption(small: Analysis, small_svg: bytes) -> None:
    short = small_svg.decode("utf-8")
    full = render_plot(small, options=RenderOptions(caption=Caption.FULL)).decode("utf-8")
    source = next(iter(small.devices[0].roofs.sources.values()))
    assert source not in short and source.split(" ")[0] in full


def test_labels_say_time_share_and_axes_carry_si_units(small_svg: bytes) -> None:
    svg = small_svg.decode("utf-8")
    assert "% of time" in svg
    assert re.search(r">\d+ [kMGTP]FLOP/s<", svg)  # tick labels such as `10 TFLOP/s`


def test_arrows_draw_base_markers() -> None:
    base = analyzed(Path(write("base.csv", BASE)))
    head = analyzed(Path(write("head.csv", HEAD)))
    svg = render_plot(head, options=RenderOptions(arrows=((base.kernels[0], head.kernels[0]),))).decode(
        "utf-8"
    )
    assert 'id="base-0"' in svg


def test_no_roofs_and_nothing_drawable_do_not_crash() -> None:
    rows = [("zero", "(1, 1, 1)", 500.0, 0.0, 0.0), ("nan", "(1, 1, 1)", float("nan"), 1.0, 1.0)]
    analysis = analyze([read_input(write("z.csv", rows, device="Mystery GPU"))])
    svg = render_plot(analysis).decode("utf-8")
    assert collections(svg.encode()) == []
    assert "No roofs for this device" in svg
    assert "2 of 2 launches not drawn" in svg


def test_unknown_format_is_a_usage_error(small: Analysis) -> None:
    from ncu_roof.errors import UsageError

    with pytest.raises(UsageError):
        render_plot(small, fmt="gif")


@pytest.mark.corpus
@pytest.mark.skipif(not CORPUS.is_dir(), reason="needs ../shared/ncu-corpus")
@pytest.mark.parametrize("report", REPORTS)
def test_corpus_reports_plot_every_kernel(report: str) -> None:
    analysis = analyzed(CORPUS / report)
    svg = render_plot(analysis)
    assert svg == render_plot(analysis)
    assert drawn_ids(analysis) == {k.id for k in analysis.kernels if kernel_points(k)}
    assert len(drawn_ids(analysis)) == len(analysis.kernels)


def test_control_characters_from_the_data_give_well_formed_svg_without_warnings(
    small: Analysis,
) -> None:
    # the bug: a device name (or roofs name, source, key) with control characters made the SVG
    # ill-formed XML, and matplotlib warned about the missing glyphs
    import warnings
    import xml.etree.ElementTree as ET
    from dataclasses import replace

    device = small.devices[0]
    roofs = replace(
        device.roofs,
        name="roofs\x01",
        source="user\x02",
        sources={**{k: f"{v}\x03" for k, v in device.roofs.sources.items()}, "fp\x0432": "x\x05"},
        compute_flop_per_s={**device.roofs.compute_flop_per_s, "fp\x0432": 1e13},
        bandwidth_byte_per_s={**device.roofs.bandwidth_byte_per_s, "hbm\x06": 3e11},
    )
    hostile = replace(small, devices=(replace(device, name="GPU\x00\x1b[31m\x07\tX", roofs=roofs),))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        svg = render_plot(hostile)
        render_plot(replace(hostile, devices=(replace(hostile.devices[0], name=None),)), fmt="png")
    ET.fromstring(svg)  # well-formed
    text = svg.decode("utf-8")
    assert "GPU??[31m? X (device 0): 3 launches" in text
    assert "Roofs from the roofs file (user?)" in text


def test_several_devices_get_one_panel_each_and_their_own_titles(small: Analysis) -> None:
    from dataclasses import replace

    twin = replace(small.devices[0], index=1, name="Other GPU")
    moved = tuple(replace(k, device=1) if k.id == 1 else k for k in small.kernels)
    two = replace(small, devices=(small.devices[0], twin), kernels=moved)
    svg = render_plot(two).decode("utf-8")
    assert "(device 0): 2 launches" in svg and "Other GPU (device 1): 1 launch," in svg
    only = render_plot(two, options=RenderOptions(device=1)).decode("utf-8")
    assert "Other GPU (device 1)" in only and "(device 0)" not in only


def test_many_launches_of_one_kernel_are_one_marker() -> None:
    rows = [("same", "(8, 1, 1)", 1000.0 + i, 1e6, 1e5) for i in range(50)]
    analysis = analyze([read_input(write("many.csv", rows))])
    (group,) = panel(analysis, analysis.devices[0]).groups
    assert group.count == 50 and MAX_MARKERS >= 1


def test_kernels_whose_names_shorten_alike_are_labelled_apart_and_the_caption_says_which() -> None:
    """Two CUTLASS kernels that differ in a tile size both read `cutlass::Kernel<…>(T1::Params)`
    in 30 characters: `[K1]` and `[K2]` on the picture, their lines under it."""
    from matplotlib.text import Annotation

    from ncu_roof.render.plot import plot_figure

    rows = [(CUTLASS.format(n), "(8, 1, 1)", 1000.0 * (i + 1), 1e6, 1e5) for i, n in enumerate((64, 128))]
    figure = plot_figure(analyze([read_input(write("alike-plot.csv", rows))]))
    labels = [t.get_text() for ax in figure.axes for t in ax.texts if isinstance(t, Annotation)]
    assert sorted(label.split(" ×")[0].split(" ·")[0] for label in labels) == [
        "cutlass::Kernel<…>(…) [K1]",
        "cutlass::Kernel<…>(…) [K2]",
    ]
    caption = " ".join(t.get_text() for t in figure.texts)
    assert re.search(r"\[K1\] cutlass::Kernel<…>\(T1::Params\), whose name reads .*\(int\)128>", caption)
    assert re.search(r"\[K2\] cutlass::Kernel<…>\(T1::Params\), whose name reads .*\(int\)64,", caption)


def test_one_kernel_at_two_launch_shapes_is_labelled_with_each_shape() -> None:
    """Two groups of one name read alike on the picture but for their launch shapes."""
    from matplotlib.text import Annotation

    from ncu_roof.render.plot import plot_figure

    rows = [("saxpy", grid, 1000.0 * (i + 1), 1e6, 1e5) for i, grid in enumerate(("(8, 1, 1)", "(64, 1, 1)"))]
    figure = plot_figure(analyze([read_input(write("two-shapes-plot.csv", rows))]))
    labels = [t.get_text() for ax in figure.axes for t in ax.texts if isinstance(t, Annotation)]
    assert sorted(label.split(" ·")[0] for label in labels) == ["saxpy 64×256", "saxpy 8×256"]


def test_the_instruction_roofline_says_which_kernel_each_index_is(tmp_path: Path) -> None:
    """Its own caption has the `[K1] …` lines too, each with its device where there are several."""
    from matplotlib.text import Annotation

    from ncu_roof.pipeline import example_path
    from ncu_roof.render.plot import _instruction_figure

    text = (
        Path(example_path()).read_text(encoding="utf-8").split('"silu_kernel_vector(float *, float *, int)"')
    )
    alike = tmp_path / "alike.csv"
    alike.write_text(
        "".join(f'{t}"{CUTLASS.format(n)}"' for t, n in zip(text, (64, 96, 128), strict=False)) + text[-1]
    )
    figure = _instruction_figure(analyze([read_input(str(alike))]), RenderOptions())
    labels = [t.get_text() for ax in figure.axes for t in ax.texts if isinstance(t, Annotation)]
    assert {label.split(" ·")[0] for label in labels} == {f"cutlass::Kernel<…>(…) [K{i}]" for i in (1, 2, 3)}
    caption = " ".join(t.get_text() for t in figure.texts)
    assert (
        len(re.findall(r"Device 0: \[K\d\] cutlass::Kernel<…>\(T1::Params\), whose name reads", caption)) == 3
    )


def test_no_label_crosses_a_roof_in_the_example() -> None:
    from matplotlib import rc_context
    from matplotlib.path import Path as Line
    from matplotlib.text import Annotation, Text

    from ncu_roof.pipeline import example_path
    from ncu_roof.render.plot import RC, _figure

    analysis = analyzed(Path(example_path()))
    with rc_context(RC):  # type: ignore[arg-type]
        figure = _figure(analysis, RenderOptions())
        renderer = figure.canvas.get_renderer()  # type: ignore[attr-defined]
        checked = 0
        for ax in figure.axes:
            roofs = [line for line in ax.lines if len(line.get_xdata()) == 2]  # type: ignore[arg-type]
            segments = []
            for line in roofs:
                xs, ys = line.get_xdata(), line.get_ydata()
                segments.append(Line(ax.transData.transform([(xs[0], ys[0]), (xs[1], ys[1])])))  # type: ignore[index,arg-type]
            for text in ax.texts:
                if isinstance(text, Annotation) and text.get_text():
                    text.update_positions(renderer)
                    box = Text.get_window_extent(text, renderer)
                    assert not any(seg.intersects_bbox(box, False) for seg in segments), text.get_text()
                    checked += 1
        assert checked == 5  # one label per kernel group of the example


def test_diff_arrows_join_groups_not_launches() -> None:
    from ncu_roof.cli.report import diff_arrows
    from ncu_roof.compare.comparison import diff
    from ncu_roof.render.plot_panel import arrow_points

    base = analyzed(Path(write("base.csv", BASE)))
    head = analyzed(Path(write("head.csv", HEAD)))
    drawn = panel(head, head.devices[0])
    pairs = arrow_points(diff_arrows(diff(base, head), base, head), drawn.groups)
    assert len(pairs) == 1  # the two launches of one kernel: one arrow
    before, after = pairs[0]
    assert before.group.count == after.group.count == 2
    # summed FLOPs over summed time: base 2 × 2e6 FLOP in 3 µs, head in 2.1 µs
    assert after.flop_per_s / before.flop_per_s == pytest.approx(3.0 / 2.1)


def test_int8_tensor_and_xu_ceilings_are_drawn_in_ops_per_s() -> None:
    # INT8: the report's sm__ops_path_tensor_src_int8 peak, 1.048576e15 ops/s
    svg = render_plot(analyzed(FIXTURES / "verdict_int8_gemm.csv")).decode("utf-8")
    assert "Tensor INT8 1.05 POP/s" in svg and "Tensor INT8: operations per second, not FLOPs" in svg
    # XU: 16 results/clk/SM (CUDA C++ Programming Guide) x 114 SMs (H100 PCIe) x 1.00 GHz = 1.82 T/s
    svg = render_plot(analyzed(FIXTURES / "verdict_xu_transcendental.csv")).decode("utf-8")
    assert "XU (special functions) 1.82 TOP/s" in svg
    assert "Tensor INT8" not in svg  # no kernel of this device used the INT8 path
    # the example's silu kernel: XU is its busiest pipe, but it is memory-bound: no XU line
    from ncu_roof.pipeline import example_path

    example = render_plot(analyzed(Path(example_path()))).decode("utf-8")
    assert "XU (special functions)" not in example


def kernel_points(kernel: Kernel) -> list[KernelPoint]:
    """The drawable points of one launch, as a group of one."""
    return group_points(KernelGroup.of((kernel.name, kernel.grid, kernel.block, kernel.device), (kernel,)))


# ------------------------------------------------------------- every kind, every device, one style


def example() -> Analysis:
    from ncu_roof.pipeline import example_path

    return analyzed(Path(example_path()))


def test_the_instruction_roofline_draws_every_device_of_the_example() -> None:
    """The example's H100 launches have warp-instruction counts, its A10G ones not: both devices
    get a panel (titled as the FLOP roofline's), the A10G's saying what to collect; asked for the
    A10G alone, it refuses, naming the device."""
    from ncu_roof.errors import UsageError

    svg = render_plot(example(), kind="instruction", fmt="svg").decode("utf-8")
    assert "NVIDIA H100 PCIe (device 0): 3 launches, 854 µs" in svg
    assert "NVIDIA A10G (device 1): 4 launches, 1.21 ms" in svg
    assert "no warp-instruction counts in this device's launches" in svg
    assert "Issue 502 Ginst/s" in svg and "DRAM 2.04 TB/s" in svg  # the FLOP roofline's DRAM roof
    assert "Gtrans" not in svg and "10^{12}" not in svg
    assert collections(svg.encode()) == [
        ("dram", "memory", "roofline"),
        ("l1", "memory", "roofline"),
        ("l2", "memory", "roofline"),
    ]
    assert "memory-bound · roofline" in svg  # the legend: every verdict with its basis
    with pytest.raises(UsageError, match="device 1 has warp-instruction counts"):
        render_plot(example(), kind="instruction", fmt="svg", options=RenderOptions(device=1))


def test_the_cli_draws_the_instruction_roofline_of_the_example(tmp_path: Path) -> None:
    from conftest import run_cli

    done = run_cli(
        "plot",
        "--kind",
        "instruction",
        str(FIXTURES.parent / "ncu_roof" / "data" / "example.csv"),
        "-o",
        str(tmp_path / "i.svg"),
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "i.svg").read_text(encoding="utf-8").count("(device ") == 2


def test_diff_arrows_have_legend_entries_unlike_any_tier() -> None:
    base = analyzed(Path(write("base.csv", BASE)))
    head = analyzed(Path(write("head.csv", HEAD)))
    svg = render_plot(head, options=RenderOptions(arrows=((base.kernels[0], head.kernels[0]),))).decode(
        "utf-8"
    )
    for label in ("before (diff base)", "faster (before → after)", "slower (before → after)"):
        assert label in svg


def test_verdict_colours_are_distinct_okabe_ito_colours() -> None:
    from ncu_roof.base.vocabulary import Bound
    from ncu_roof.render.summary import VERDICT_COLOURS

    okabe_ito = {"#e69f00", "#56b4e9", "#009e73", "#f0e442", "#0072b2", "#d55e00", "#cc79a7", "#7f7f7f"}
    colours = [VERDICT_COLOURS[b] for b in Bound]
    assert len(set(colours)) == len(colours) and set(colours) <= okabe_ito
    # compute- and latency-bound were two oranges: now vermillion and bluish green
    assert (VERDICT_COLOURS[Bound.COMPUTE], VERDICT_COLOURS[Bound.LATENCY]) == ("#d55e00", "#009e73")


def test_every_verdict_in_a_picture_shows_its_basis() -> None:
    """Speed of Light's verdicts are rings of their colour, the roofline's filled markers, and the
    legend says each one's basis, as the text sinks do (`memory-bound · SOL`)."""
    sol = render_plot(analyzed(FIXTURES / "details_rules_20col.csv")).decode("utf-8")
    assert collections(sol.encode()) == [("dram", "memory", "sol")]
    assert "memory-bound · SOL" in sol and "memory-bound · roofline" not in sol
    assert "ring: SOL or none" in sol
    none = render_plot(analyzed(FIXTURES / "details_metrics_15col.csv")).decode("utf-8")
    assert {(verdict, basis) for _, verdict, basis in collections(none.encode())} == {("unknown", "none")}
    assert "unknown · none" in none
    roofline = render_plot(analyzed(FIXTURES / "ceiling_pipes.csv")).decode("utf-8")
    assert "compute-bound · roofline" in roofline and "memory-bound · roofline" in roofline


def test_marker_fill_tells_the_basis() -> None:
    from ncu_roof.base.vocabulary import Bound, VerdictBasis
    from ncu_roof.render.plot_marks import marker_fill, verdict_label
    from ncu_roof.render.summary import VERDICT_COLOURS

    blue = VERDICT_COLOURS[Bound.MEMORY]
    assert marker_fill((Bound.MEMORY, VerdictBasis.ROOFLINE)).face == blue
    assert marker_fill((Bound.MEMORY, VerdictBasis.SOL)) == ("white", blue, 1.8)
    assert verdict_label((Bound.LATENCY, VerdictBasis.SOL)) == "latency-bound · SOL"


def test_the_legend_fits_the_figure_in_as_few_rows_as_it_can() -> None:
    """Two verdicts, four tiers and a diff's three marks are wider than a 10 in figure in one row:
    the legend takes two (the H200 kernels drawn with arrows, as `diff --plot` draws them)."""
    from matplotlib import rc_context

    from ncu_roof.render.plot import RC, _figure, plot_figure

    analysis = analyzed(FIXTURES / "h200" / "h200_full_raw.csv")
    with rc_context(RC):  # type: ignore[arg-type]
        figure = _figure(analysis, RenderOptions(arrows=tuple((k, k) for k in analysis.kernels[:3])))
    legend = figure.legends[0]
    renderer = figure.canvas.get_renderer()  # type: ignore[attr-defined]
    assert legend.get_window_extent(renderer).width <= figure.bbox.width
    assert len(legend.get_texts()) == 2 + 4 + 3 and legend_rows(figure) == 2
    assert legend_rows(plot_figure(analyzed(FIXTURES / "raw_base.csv"))) == 1  # one row where one fits


def legend_rows(figure: Figure) -> int:
    figure.canvas.draw()  # the legend's texts are placed when drawn
    renderer = figure.canvas.get_renderer()  # type: ignore[attr-defined]
    texts = figure.legends[0].get_texts()
    return len({round(t.get_window_extent(renderer).y0) for t in texts})


def test_a_plot_with_no_kernel_placed_leaves_no_room_for_a_legend() -> None:
    """No launch of the summary page has FLOPs: the panel's title sits at the top, not under
    1.05 in of empty legend room: 0.6 in less than a plot with a legend and the same panel, less
    its caption's one more line (`… not drawn`)."""
    from ncu_roof.render.plot import CAPTION_LINE_IN, TITLE_ROOM_IN, TOP_IN, plot_figure

    bare = plot_figure(analyzed(FIXTURES / "summary_per_kernel.csv"))
    drawn = plot_figure(analyzed(FIXTURES / "raw_base.csv"))
    assert bare.legends == [] and len(drawn.legends) == 1
    assert (TOP_IN, TITLE_ROOM_IN, CAPTION_LINE_IN) == (1.05, 0.45, 0.16)
    assert drawn.get_figheight() - bare.get_figheight() == pytest.approx(0.6 - 0.16)
