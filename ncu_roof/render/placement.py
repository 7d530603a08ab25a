"""Greedy label placement for the roofline plot, in display coordinates (pixels): labels off other
labels, markers and roof lines."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from matplotlib.path import Path

if TYPE_CHECKING:
    from matplotlib.backend_bases import RendererBase
    from matplotlib.text import Text
    from matplotlib.transforms import Bbox


class Placer:
    """Greedy label placement: the first candidate whose box stays inside and overlaps nothing
    (other labels, markers) and crosses no roof line."""

    PAD_PX = 2.0

    def __init__(self, area: Bbox, renderer: RendererBase) -> None:
        self.area = area
        self.renderer = renderer
        self.taken: list[Bbox] = []
        self.lines: list[Path] = []  # the roof lines, in display coordinates

    def cost(self, box: Bbox, own_line: int | None, anchor: tuple[float, float] | None) -> float:
        """Area outside the axes and over other labels and markers; a roof line through the box
        costs most, and one across the leader line from `anchor` (display coordinates) a lot."""
        crossing = sum(
            1 for i, line in enumerate(self.lines) if i != own_line and line.intersects_bbox(box, False)
        )
        leader = 0
        if anchor is not None:
            to_box = Path([anchor, ((box.x0 + box.x1) / 2.0, (box.y0 + box.y1) / 2.0)])
            leader = sum(1 for line in self.lines if line.intersects_path(to_box, False))
        overlap = sum(_overlap_px2(box, t) for t in self.taken)
        return 10.0 * _outside_px2(box, self.area) + 5.0 * overlap + 1e6 * crossing + 1e5 * leader

    def place(
        self,
        text: Text,
        candidates: Sequence[Mapping[str, Any]],
        own_line: int | None = None,
        anchor: tuple[float, float] | None = None,
    ) -> None:
        """Try each candidate (`text`'s properties there: position, alignment; an annotation's
        position in offset points): the first free one wins, else the one that costs least."""
        best: tuple[float, int] | None = None
        for i, move in enumerate(candidates):
            text.set(**move)
            box = self.box(text)
            cost = self.cost(box, own_line, anchor)
            if cost == 0.0:
                self.taken.append(box)
                return
            if best is None or cost < best[0]:
                best = (cost, i)
        if best is not None:
            text.set(**candidates[best[1]])
            self.taken.append(self.box(text))

    def box(self, text: Text) -> Bbox:
        """The text's own box (an annotation's extent would include its leader line)."""
        from matplotlib.text import Annotation
        from matplotlib.text import Text as PlainText

        if isinstance(text, Annotation):
            text.update_positions(self.renderer)
        return PlainText.get_window_extent(text, self.renderer).padded(self.PAD_PX)


def _overlap_px2(a: Bbox, b: Bbox) -> float:
    width = min(a.x1, b.x1) - max(a.x0, b.x0)
    height = min(a.y1, b.y1) - max(a.y0, b.y0)
    return width * height if width > 0 and height > 0 else 0.0


def _outside_px2(box: Bbox, area: Bbox) -> float:
    return box.width * box.height - _overlap_px2(box, area)
