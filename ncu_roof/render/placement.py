"""Greedy label placement for the roofline plot: labels off other labels, markers and roof lines.

Pure geometry in display coordinates (pixels), plus the one matplotlib call that measures a text.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from matplotlib.backend_bases import RendererBase
    from matplotlib.text import Text
    from matplotlib.transforms import Bbox


Segment = tuple[tuple[float, float], tuple[float, float]]  # display coordinates


class Placer:
    """Greedy label placement: the first candidate whose box stays inside and overlaps nothing
    (other labels, markers) and crosses no roof line."""

    PAD_PX = 2.0

    def __init__(self, area: Bbox, renderer: RendererBase) -> None:
        self.area = area
        self.renderer = renderer
        self.taken: list[Bbox] = []
        self.lines: list[Segment] = []

    def cost(
        self, box: Bbox, own_line: int | None = None, anchor: tuple[float, float] | None = None
    ) -> float:
        """Area outside the axes and over other labels and markers; a roof line through the box
        costs most, and one across the leader line from `anchor` (display coordinates) a lot."""
        crossing = sum(1 for i, seg in enumerate(self.lines) if i != own_line and crosses(box, seg))
        leader = 0
        if anchor is not None:
            centre = ((box.x0 + box.x1) / 2.0, (box.y0 + box.y1) / 2.0)
            leader = sum(1 for seg in self.lines if segments_cross((anchor, centre), seg))
        overlap = sum(_overlap_px2(box, t) for t in self.taken)
        return 10.0 * _outside_px2(box, self.area) + 5.0 * overlap + 1e6 * crossing + 1e5 * leader

    def place(
        self,
        text: Text,
        candidates: Sequence[Callable[[], None]],
        own_line: int | None = None,
        anchor: tuple[float, float] | None = None,
    ) -> None:
        """Try each candidate (a function that moves `text`): the first free one wins, else the
        one that costs least."""
        best: tuple[float, int] | None = None
        for i, move in enumerate(candidates):
            move()
            box = self.box(text)
            cost = self.cost(box, own_line, anchor)
            if cost == 0.0:
                self.taken.append(box)
                return
            if best is None or cost < best[0]:
                best = (cost, i)
        if best is not None:
            candidates[best[1]]()
            self.taken.append(self.box(text))

    def box(self, text: Text) -> Bbox:
        """The text's own box (an annotation's extent would include its leader line)."""
        from matplotlib.text import Annotation
        from matplotlib.text import Text as PlainText

        if isinstance(text, Annotation):
            text.update_positions(self.renderer)
        return PlainText.get_window_extent(text, self.renderer).padded(self.PAD_PX)


def crosses(box: Bbox, seg: Segment) -> bool:
    """Whether a line segment passes through a box (Liang–Barsky clipping)."""
    (x0, y0), (x1, y1) = seg
    dx, dy = x1 - x0, y1 - y0
    lo, hi = 0.0, 1.0
    for p, q in ((-dx, x0 - box.x0), (dx, box.x1 - x0), (-dy, y0 - box.y0), (dy, box.y1 - y0)):
        if p == 0:
            if q < 0:
                return False
            continue
        t = q / p
        if p < 0:
            lo = max(lo, t)
        else:
            hi = min(hi, t)
        if lo > hi:
            return False
    return True


def segments_cross(a: Segment, b: Segment) -> bool:
    """Whether two segments properly intersect (orientation test)."""

    def turn(p: tuple[float, float], q: tuple[float, float], r: tuple[float, float]) -> float:
        return (q[0] - p[0]) * (r[1] - p[1]) - (q[1] - p[1]) * (r[0] - p[0])

    (p1, p2), (q1, q2) = a, b
    return turn(p1, p2, q1) * turn(p1, p2, q2) < 0 and turn(q1, q2, p1) * turn(q1, q2, p2) < 0


def _overlap_px2(a: Bbox, b: Bbox) -> float:
    width = min(a.x1, b.x1) - max(a.x0, b.x0)
    height = min(a.y1, b.y1) - max(a.y0, b.y0)
    return width * height if width > 0 and height > 0 else 0.0


def _outside_px2(box: Bbox, area: Bbox) -> float:
    return box.width * box.height - _overlap_px2(box, area)
