"""Text any layer may show: one line with no control characters (kernel names are hostile:
templates, `|`, backticks, ESC, newlines), kernel names folded for a cell, SI numbers, launch
shapes. Scaling to k/M/G happens only here, for display; the sinks' own escaping is `render.text`'s."""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import pairwise
from os.path import commonprefix

# Unicode's controls, format characters (zero-width, soft hyphen, bidi, tags) and line/paragraph
# separators (Cc, Cf, Zl, Zp): anything that could hide, reorder or break the text around a name
_CONTROLS = (
    r"\x00-\x08\x0b-\x1f\x7f-\x9f\xad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b-\u200f"
    r"\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f"
    r"\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f"
)
_CONTROL = re.compile(f"[{_CONTROLS}]")
_UNSEEN = re.compile(f"[\\\\\t\n{_CONTROLS}]")  # and backslashes, tabs and line breaks


def one_line(text: str) -> str:
    """No control characters and no line breaks: safe for a terminal line or a log."""
    return _CONTROL.sub("?", text.replace("\r", " ").replace("\n", " ").replace("\t", " "))


def shorten(name: str, width: int = 60) -> str:
    """A kernel name for a table cell: template arguments and parameters folded, then clipped:
    `void at::native::reduce_kernel<512, 1, ...>(T3)` → `at::native::reduce_kernel<…>(…)`."""
    text = _fold(one_line(name).strip().removeprefix("void "), "<", ">", "<…>")
    text = _fold(text, "(", ")", "(…)") if len(text) > width else text
    return text if len(text) <= width else text[: width - 1].rstrip("…<(") + "…"  # never `name<……`


def distinct_names(names: Sequence[str], width: int | Sequence[int]) -> tuple[list[str], list[str]]:
    """Each name shortened (`shorten`) to `width`, or its row's (a name beside a launch shape), so that
    different names never read alike, and the lines that resolve the index some get. Names that shorten
    alike show the template arguments in which they differ (`InitializeMatrix_kernel<__half, …>(…)` and
    `<float, …>`); where that does not tell them apart within the width (a difference nested deeper, as in
    CUTLASS kernels), each gets an index, `cutlass::Kernel<…>(…) [K1]`, and a line `[K1] …` with its text
    where the names split. A name told apart reads the same in its rows (at the narrowest of those alike)."""
    widths = [width] * len(names) if isinstance(width, int) else width
    short = [shorten(n, w) for n, w in zip(names, widths, strict=True)]
    alike: dict[str, dict[str, None]] = {}  # each shortened text's distinct names, in order
    narrow: dict[str, int] = {}  # each name's narrowest row
    for name, text, w in zip(names, short, widths, strict=True):
        alike.setdefault(text, {})[name] = None
        narrow[name] = min(w, narrow.get(name, w))
    labels: dict[str, str] = {}
    keys: list[str] = []
    for group in alike.values():
        told = [n for n in group if n not in labels]  # (a name alike in rows of two widths: once)
        if len(told) < 2:
            continue
        narrowest = min(narrow[n] for n in told)
        by_args = _by_arguments(told, narrowest)
        if by_args is not None and not any(b in alike or b in labels.values() for b in by_args):
            labels.update(zip(told, by_args, strict=True))  # (none as another name reads: `f<int, …>(…)`)
            continue
        for name, line in _told_apart(told).items():
            tag = f" [K{len(keys) + 1}]"
            labels[name] = shorten(name, max(1, narrowest - len(tag))) + tag
            keys.append(f"[K{len(keys) + 1}] {line}")
    return [labels.get(n, text) for n, text in zip(names, short, strict=True)], keys


def _by_arguments(group: Sequence[str], width: int) -> list[str] | None:
    """The names with only their differing top-level template arguments shown (each folded), or
    None when that leaves two alike or one wider than `width`."""
    split = [p for n in group if (p := _template_parts(n)) is not None]
    if len(split) < len(group) or len({(head, len(args)) for head, args in split}) != 1:
        return None
    differ = [i for i in range(len(split[0][1])) if len({args[i] for _, args in split}) > 1]
    labels = []
    for head, args in split:
        shown = [_fold(a, "<", ">", "<…>") if i in differ else "…" for i, a in enumerate(args)]
        merged = [a for i, a in enumerate(shown) if a != "…" or i == 0 or shown[i - 1] != "…"]
        labels.append(f"{head}<{', '.join(merged)}>(…)")
    if len(set(labels)) < len(labels) or any(len(label) > width for label in labels):
        return None
    return labels


def _template_parts(name: str) -> tuple[str, list[str]] | None:
    """`void f<A, B<C>>(int)` → (`f`, [`A`, `B<C>`]): the name before its first template
    argument list, and that list's top-level arguments; None without one."""
    text = one_line(name).strip().removeprefix("void ")
    if (start := text.find("<")) <= 0:
        return None
    cuts, depth = [start], 0  # where the list opens, each top-level comma, where it closes
    for at, char in enumerate(text[start + 1 :], start + 1):
        depth += (char == "<") - (char == ">")
        if depth < 0 or (char == "," and depth == 0):
            cuts.append(at)
        if depth < 0:
            return text[:start], [text[a + 1 : b].strip() for a, b in pairwise(cuts)]
    return None


def _told_apart(group: Sequence[str]) -> dict[str, str]:
    """Each name's text where it differs from the others (in the group's order): where it first
    differs from the names most alike with it; where two such texts read alike, also where each
    first differs from those it reads alike with, round by round until none do."""
    places = {name: [at] for name, at in _first_differences(group).items()}
    heads = {name: shorten(name, 40) for name in group}
    texts = {name: _difference(name, places[name], heads[name]) for name in group}
    for _ in group:  # (a round that shows no name a place more is the last)
        holders: dict[str, list[str]] = {}
        for name, text in texts.items():
            holders.setdefault(text, []).append(name)
        grown = False
        for alike in (names for names in holders.values() if len(names) > 1):
            for name, at in _first_differences(alike).items():
                if at not in places[name]:
                    places[name] = sorted([*places[name], at])
                    texts[name] = _difference(name, places[name], heads[name])
                    grown = True
        if not grown:
            break
    return texts


def _first_differences(group: Sequence[str]) -> dict[str, int]:
    """Where each name first differs from the others of `group`, in the group's order: after its
    longest common prefix with any other, which is one with a neighbour in sorted order."""
    names = sorted(group)
    near = [names[i - 1 : i] + names[i + 1 : i + 2] for i in range(len(names))]
    at = {n: max(len(commonprefix([n, o])) for o in near[i]) for i, n in enumerate(names)}  # noqa: RUF071
    return {name: at[name] for name in group}


def _difference(name: str, places: list[int], head: str, context: int = 40) -> str:
    """The text of `name` around each character at `places` (ascending; windows never overlap, so a
    line is never longer than its name and its markers), control characters and backslashes escaped
    (`\\x01`, `\\\\`): names that differ in one read apart."""
    windows: list[str] = []
    stop = 0
    for at in places:
        start = max(stop, at - context // 2)
        stop = start + context
        shown = _UNSEEN.sub(lambda m: ascii(m.group())[1:-1], name[start:stop])
        windows.append(
            f"{'…' if start else ''}{shown}{'…' if stop < len(name) else ''} at character {at + 1}"
        )
    return f"{head}, whose name reads {' and '.join(windows)}"


def _fold(text: str, open_: str, close: str, placeholder: str) -> str:
    out: list[str] = []
    depth = 0
    for char in text:
        if char == open_:
            if depth == 0:
                out.append(placeholder)
            depth += 1
        elif char == close and depth > 0:
            depth -= 1
        elif depth == 0:
            out.append(char)
    return "".join(out)


# the display prefixes, 1e15 down to 1e-12 (each scale an int / int: exactly its float literal)
_PREFIXES = tuple((10**15 / 1000**i, p) for i, p in enumerate(("P", "T", "G", "M", "k", "", *"mµnp")))


def si(value: float | None, unit: str = "", digits: int = 3) -> str:
    """`1.2e11, "FLOP/s"` → `120 GFLOP/s`; None → `–`. Scaling happens only here, for display."""
    if value is None or value != value:
        return "–"
    if value == float("inf"):
        return "∞"
    if value == 0:
        return f"0 {unit}".strip()
    scale, prefix = next(((s, p) for s, p in _PREFIXES if abs(value) >= s), (1.0, ""))  # below pico: none
    return f"{value / scale:.{digits}g} {prefix}{unit}".strip()


def intensity(value: float | None, digits: int = 3) -> str:
    """An intensity in FLOP/byte, 3 significant digits, never an SI prefix: `0.0948`, `2.73`, `104`,
    `1.23e+03` (`si()`'s `94.8 m` for 0.0948 reads as millions); None or NaN → `–`, ∞ (no bytes) → `∞`."""
    if value is None or value != value:
        return "–"
    if value in (float("inf"), float("-inf")):
        return "∞" if value > 0 else "-∞"
    return f"{value:.{digits}g}"


def pct(value: float | None) -> str:
    """`29%`; `<1%` for a share above 0 that rounds to 0; `–` for none."""
    return "–" if value is None or value != value else "<1%" if 0 < value <= 0.5 else f"{value:.0f}%"


def launch_shape(grid: str | None, block: str | None) -> str:
    """`(8192, 1, 1)` × `(256, 1, 1)` → `8192×256`; 2-D and 3-D shapes keep their commas."""

    def dims(text: str | None) -> str:
        if not text:
            return "?"
        parts = [p.strip() for p in text.strip("()").split(",")]
        while len(parts) > 1 and parts[-1] == "1":
            parts.pop()
        return ",".join(parts)

    return "–" if grid is None and block is None else one_line(f"{dims(grid)}×{dims(block)}")


def plural(count: int, noun: str) -> str:
    """`1 launch`, `2 launches`, `3 kernels`."""
    if count == 1:
        return f"1 {noun}"
    return f"{count:,} {noun}{'es' if noun.endswith(('s', 'sh', 'ch', 'x')) else 's'}"
