"""Small dependency-free SVG charts, so a report is one self-contained HTML file."""

from __future__ import annotations

import math
from html import escape

PALETTE = ("#4269d0", "#efb118", "#ff725c", "#6cc5b0", "#3ca951", "#ff8ab7", "#a463f2", "#97bbf5")
W, H, PAD = 640, 300, 48
TOP = 30  # room for the legend row above the plot

# One colour per run name for the whole report, so a run looks the same in every chart.
_assigned: dict[str, str] = {}


def color_of(name: str) -> str:
    if name not in _assigned:
        _assigned[name] = PALETTE[len(_assigned) % len(PALETTE)]
    return _assigned[name]


def reset_colors(names: list[str]) -> None:
    _assigned.clear()
    for name in names:
        color_of(name)


def _frame(body: str, title: str, width: int = W, height: int = H) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="{escape(title)}">'
        f'<title>{escape(title)}</title><rect width="100%" height="100%" fill="#fff"/>{body}</svg>'
    )


def _axes(y_max: float, label: str) -> str:
    parts = [
        f'<line x1="{PAD}" y1="{H - PAD}" x2="{W - 10}" y2="{H - PAD}" stroke="#333"/>',
        f'<line x1="{PAD}" y1="{TOP}" x2="{PAD}" y2="{H - PAD}" stroke="#333"/>',
    ]
    for i in range(5):
        v = y_max * i / 4
        y = H - PAD - (H - PAD - TOP) * i / 4
        parts.append(
            f'<text x="{PAD - 6}" y="{y + 4:.1f}" font-size="10" text-anchor="end">{v:.3g}</text>'
        )
        parts.append(f'<line x1="{PAD}" y1="{y:.1f}" x2="{W - 10}" y2="{y:.1f}" stroke="#eee"/>')
    parts.append(
        f'<text x="12" y="{H / 2}" font-size="11" transform="rotate(-90 12 {H / 2})" '
        f'text-anchor="middle">{escape(label)}</text>'
    )
    return "".join(parts)


def grouped_bars(
    groups: list[str], series: dict[str, list[float]], title: str, y_label: str
) -> str:
    """Bars per group (metric) and series (run)."""
    y_max = max([v for vals in series.values() for v in vals] + [1e-9]) * 1.1
    slot = (W - PAD - 20) / max(len(groups), 1)
    bar = slot * 0.8 / max(len(series), 1)
    body = [_axes(y_max, y_label)]
    for gi, group in enumerate(groups):
        x0 = PAD + gi * slot + slot * 0.1
        body.append(
            f'<text x="{x0 + slot * 0.4:.1f}" y="{H - PAD + 16}" font-size="11" '
            f'text-anchor="middle">{escape(group)}</text>'
        )
        for si, (name, vals) in enumerate(series.items()):
            v = vals[gi]
            h = (H - PAD - TOP) * v / y_max
            x = x0 + si * bar
            body.append(
                f'<rect x="{x:.1f}" y="{H - PAD - h:.1f}" width="{bar - 2:.1f}" height="{h:.1f}" '
                f'fill="{color_of(name)}"><title>{escape(name)} {escape(group)}: '
                f"{v:.4f}</title></rect>"
            )
            body.append(
                f'<text x="{x + bar / 2:.1f}" y="{H - PAD - h - 3:.1f}" font-size="9" '
                f'text-anchor="middle">{v:.3f}</text>'
            )
    return _frame("".join(body) + legend(list(series)), title)


def lines(
    xs: list[float], series: dict[str, list[float]], title: str, x_label: str, y_label: str
) -> str:
    """Line chart on a log-like (index) x axis, e.g. recall@k for k = 1, 2, 3, 5, ..."""
    y_max = max([v for vals in series.values() for v in vals] + [1e-9]) * 1.05
    step = (W - PAD - 30) / max(len(xs) - 1, 1)
    body = [_axes(y_max, y_label)]
    for i, x in enumerate(xs):
        body.append(
            f'<text x="{PAD + i * step:.1f}" y="{H - PAD + 16}" font-size="10" '
            f'text-anchor="middle">{x:g}</text>'
        )
    body.append(_x_label(x_label))
    for name, vals in series.items():
        pts = " ".join(
            f"{PAD + i * step:.1f},{H - PAD - (H - PAD - TOP) * v / y_max:.1f}"
            for i, v in enumerate(vals)
        )
        color = color_of(name)
        body.append(
            f'<polyline points="{pts}" fill="none" stroke="{color}" stroke-width="2">'
            f"<title>{escape(name)}</title></polyline>"
        )
    return _frame("".join(body) + legend(list(series)), title)


def win_loss(deltas: list[tuple[str, float]], title: str) -> str:
    """Per-query difference against the baseline, sorted: green above zero, red below."""
    deltas = sorted(deltas, key=lambda d: d[1], reverse=True)
    lim = max([abs(d) for _, d in deltas] + [1e-9])
    mid = (H - 20) / 2 + 10
    width = (W - PAD - 20) / max(len(deltas), 1)
    body = [
        f'<line x1="{PAD}" y1="{mid}" x2="{W - 10}" y2="{mid}" stroke="#333"/>',
        f'<text x="{PAD - 6}" y="16" font-size="10" text-anchor="end">+{lim:.2f}</text>',
        f'<text x="{PAD - 6}" y="{H - 14}" font-size="10" text-anchor="end">-{lim:.2f}</text>',
    ]
    for i, (qid, d) in enumerate(deltas):
        h = abs(d) / lim * (mid - 10)
        y = mid - h if d >= 0 else mid
        color = "#3ca951" if d > 0 else ("#ff725c" if d < 0 else "#999")
        body.append(
            f'<rect x="{PAD + i * width:.1f}" y="{y:.1f}" width="{max(width - 0.5, 0.5):.1f}" '
            f'height="{max(h, 0.5):.1f}" fill="{color}">'
            f"<title>{escape(qid)}: {d:+.3f}</title></rect>"
        )
    return _frame("".join(body), title)


LOG_SPAN = 100.0
"""Positive samples whose largest is at least this many times the smallest get a log x axis:
a linear one would squeeze the fast runs (BM25, SIRA: milliseconds) into its first bin beside
a CPU model's seconds."""


def histogram(
    series: dict[str, list[float]],
    title: str,
    x_label: str,
    bins: int = 20,
    *,
    log_x: bool | None = None,
) -> str:
    """Overlaid step histograms (latency, tokens).

    ``log_x=None`` picks a log axis when the positive samples span ``LOG_SPAN`` or more (its
    ticks are powers of ten, its bins equal in log space, whole decades); ``True`` forces it
    (non-positive samples cannot be placed on it and are left out, with a note), ``False``
    keeps the linear axis.
    """
    values = [v for vals in series.values() for v in vals]
    if not values:
        return _frame(
            f'<text x="{W / 2}" y="{H / 2}" text-anchor="middle">no samples</text>', title
        )
    if log_x is None:
        log_x = min(values) > 0 and max(values) >= LOG_SPAN * min(values)
    if log_x:
        return _log_histogram(series, title, x_label, bins)
    lo, hi = min(values), max(values)
    span = (hi - lo) or 1.0
    counts = {n: [0] * bins for n in series}
    for name, vals in series.items():
        for v in vals:
            counts[name][min(int((v - lo) / span * bins), bins - 1)] += 1
    ticks = [
        (PAD + i * (W - PAD - 20) / bins, f"{lo + span * i / bins:.3g}")
        for i in range(0, bins + 1, max(bins // 5, 1))
    ]
    return _step_histogram(counts, ticks, title, x_label)


def _log_histogram(series: dict[str, list[float]], title: str, x_label: str, bins: int) -> str:
    """Bins equal in log10 over whole decades, so every tick is a power of ten."""
    positive = {n: [v for v in vals if v > 0] for n, vals in series.items()}
    dropped = sum(len(vals) for vals in series.values()) - sum(len(v) for v in positive.values())
    flat = [v for vals in positive.values() for v in vals]
    if not flat:
        return _frame(
            f'<text x="{W / 2}" y="{H / 2}" text-anchor="middle">no positive samples</text>',
            title,
        )
    lo_e = math.floor(math.log10(min(flat)))
    hi_e = max(math.ceil(math.log10(max(flat))), lo_e + 1)
    decades = hi_e - lo_e
    bins = max(bins // decades, 1) * decades  # a whole number of bins per decade
    counts = {n: [0] * bins for n in positive}
    for name, vals in positive.items():
        for v in vals:
            pos = (math.log10(v) - lo_e) / decades
            counts[name][min(int(pos * bins), bins - 1)] += 1
    plot = W - PAD - 20
    ticks = [(PAD + plot * i / decades, _power_of_ten(lo_e + i)) for i in range(decades + 1)]
    note = f", {dropped} samples of 0 or less left out" if dropped else ""
    return _step_histogram(counts, ticks, title, f"{x_label} (log scale{note})")


def _power_of_ten(exponent: int) -> str:
    """``1``, ``10``, ``1000``, ``0.01``: plain numbers a reader can compare at a glance."""
    return str(10**exponent) if exponent >= 0 else f"{10.0**exponent:g}"


def _step_histogram(
    counts: dict[str, list[int]], ticks: list[tuple[float, str]], title: str, x_label: str
) -> str:
    bins = len(next(iter(counts.values()), [])) or 1
    c_max = max((max(c) for c in counts.values() if c), default=0) or 1
    bw = (W - PAD - 20) / bins
    body = [_axes(c_max, "count")]
    for x, text in ticks:
        body.append(
            f'<text x="{x:.1f}" y="{H - PAD + 16}" font-size="10" '
            f'text-anchor="middle">{escape(text)}</text>'
        )
    body.append(_x_label(x_label))
    for name, cs in counts.items():
        pts = []
        for i, c in enumerate(cs):
            y = H - PAD - (H - PAD - TOP) * c / c_max
            pts += [f"{PAD + i * bw:.1f},{y:.1f}", f"{PAD + (i + 1) * bw:.1f},{y:.1f}"]
        body.append(
            f'<polyline points="{" ".join(pts)}" fill="none" stroke="{color_of(name)}" '
            f'stroke-width="2"><title>{escape(name)}</title></polyline>'
        )
    return _frame("".join(body) + legend(list(counts)), title)


def _x_label(text: str) -> str:
    return (
        f'<text x="{W / 2}" y="{H - 8}" font-size="11" text-anchor="middle">{escape(text)}</text>'
    )


def legend(names: list[str]) -> str:
    """One row above the plot, so it never covers data."""
    items, x = [], PAD
    for name in names:
        items.append(
            f'<rect x="{x}" y="8" width="10" height="10" fill="{color_of(name)}"/>'
            f'<text x="{x + 14}" y="17" font-size="11">{escape(name)}</text>'
        )
        x += 24 + 7 * len(name)
    return "".join(items)
