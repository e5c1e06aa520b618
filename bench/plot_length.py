#!/usr/bin/env python3
"""Draw bench_length's JSON as one self-contained SVG with two panels:
training time per target token (µs, log scale) against T, and the step's and
the attention mixer's memory (MB, log scale) against T, one colour per arch;
with --ratios, also Fast-DiSA's cost as a multiple of DiSA's and of
DynamicConv's against T (the ratios its paper's claims are about).

    python3 bench/plot_length.py runs/bench/length.json -o docs/img/cost_length.svg \
        [--ratios docs/img/fastdisa_yardsticks.svg]

Standard library only. Cells that did not fit have no point; a line breaks there.
"""
import argparse
import json
import math
import sys
from xml.sax.saxutils import escape

COLOURS = ["#1f77b4", "#d62728", "#ff7f0e", "#2ca02c", "#17becf", "#9467bd", "#8c564b", "#e377c2"]
WIDTH, HEIGHT = 1080, 460
PANEL_W, PANEL_H = 340, 300           # plotting area of one panel
LEFT, TOP, GAP = 70, 80, 110          # margins; GAP between the panels
LEGEND_X = LEFT + 2 * PANEL_W + GAP + 24


def log_ticks(lo, hi):
    """1-2-5 ticks covering [lo, hi] (both > 0); 1…9 when that gives fewer than four."""
    for mantissas in ((1, 2, 5), range(1, 10)):
        ticks = [m * 10.0 ** e for e in range(math.floor(math.log10(lo)) - 1, math.ceil(math.log10(hi)) + 1)
                 for m in mantissas if lo <= m * 10.0 ** e <= hi]
        if len(ticks) >= 4:
            break
    return ticks


def label(value):
    return f"{value:g}" if value < 1e5 else f"{value:.0e}"


class Panel:
    """A log-log plotting area at (x0, y0) of PANEL_W × PANEL_H pixels."""

    def __init__(self, x0, lengths, values):
        self.x0, self.y0 = x0, TOP
        self.tmin, self.tmax = min(lengths), max(lengths)
        self.vmin, self.vmax = min(values) / 1.3, max(values) * 1.3

    def x(self, t):
        span = math.log(self.tmax / self.tmin) or 1.0
        return self.x0 + 15 + (PANEL_W - 30) * math.log(t / self.tmin) / span

    def y(self, v):
        return self.y0 + PANEL_H - PANEL_H * math.log(v / self.vmin) / math.log(self.vmax / self.vmin)

    def axes(self, out, lengths, title, y_title):
        x0, y0 = self.x0, self.y0
        out.append(f'<rect x="{x0}" y="{y0}" width="{PANEL_W}" height="{PANEL_H}" fill="none" stroke="#444"/>')
        out.append(f'<text x="{x0 + PANEL_W / 2}" y="{y0 - 12}" text-anchor="middle" font-weight="bold">'
                   f'{escape(title)}</text>')
        for t in lengths:
            x = self.x(t)
            out.append(f'<line x1="{x:.1f}" y1="{y0}" x2="{x:.1f}" y2="{y0 + PANEL_H}" stroke="#e4e4e4"/>')
            out.append(f'<text x="{x:.1f}" y="{y0 + PANEL_H + 16}" text-anchor="middle">{t}</text>')
        for v in log_ticks(self.vmin, self.vmax):
            y = self.y(v)
            out.append(f'<line x1="{x0}" y1="{y:.1f}" x2="{x0 + PANEL_W}" y2="{y:.1f}" stroke="#e4e4e4"/>')
            out.append(f'<text x="{x0 - 6}" y="{y + 4:.1f}" text-anchor="end">{label(v)}</text>')
        out.append(f'<text x="{x0 + PANEL_W / 2}" y="{y0 + PANEL_H + 36}" text-anchor="middle">'
                   'sentence length T (tokens, log scale)</text>')
        out.append(f'<text transform="translate({x0 - 52},{y0 + PANEL_H / 2}) rotate(-90)" '
                   f'text-anchor="middle">{escape(y_title)}</text>')

    def line(self, out, points, colour, dashed=False):
        """points: [(T, value or None)], sorted by T; None breaks the line."""
        dash = ' stroke-dasharray="6 4"' if dashed else ""
        run = []
        for t, v in points + [(None, None)]:
            if v is not None:
                run.append(f"{self.x(t):.1f},{self.y(v):.1f}")
                continue
            if len(run) > 1:
                out.append(f'<polyline points="{" ".join(run)}" fill="none" stroke="{colour}" '
                           f'stroke-width="2"{dash}/>')
            for p in run:
                px, py = p.split(",")
                fill = "white" if dashed else colour
                out.append(f'<circle cx="{px}" cy="{py}" r="3" fill="{fill}" stroke="{colour}" stroke-width="1.5"/>')
            run = []


def draw(doc):
    cells = doc["cells"]
    archs = list(dict.fromkeys(c["arch"] for c in cells))
    lengths = sorted({c["T"] for c in cells})

    def series(arch, key, scale=1.0):
        by_t = {c["T"]: c.get(key) for c in cells if c["arch"] == arch}
        return [(t, by_t[t] * scale if by_t.get(t) else None) for t in lengths]

    time_values = [c["train_us_per_token"] for c in cells if c.get("train_us_per_token")]
    memory_values = [c[k] for c in cells for k in ("step_mb", "attention_mb") if c.get(k)]
    if not time_values or not memory_values:
        sys.exit("plot_length: no cell of the JSON has measurements")
    time_panel = Panel(LEFT, lengths, time_values)
    memory_panel = Panel(LEFT + PANEL_W + GAP, lengths, memory_values)

    subtitle = subtitle_of(doc)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
           f'viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif" font-size="12">',
           f'<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/>',
           '<text x="20" y="22" font-size="15" font-weight="bold">Whole-model training cost against sentence length'
           '</text>',
           f'<text x="20" y="40" fill="#555">{escape(subtitle)}</text>']
    time_panel.axes(out, lengths, "training time per target token", "µs per target token (log scale)")
    memory_panel.axes(out, lengths, "memory of a training step", "MB (log scale)")
    # Drawn last to first, so the first arch (the transformer, the baseline) lies on top.
    for i, arch in reversed(list(enumerate(archs))):
        colour = COLOURS[i % len(COLOURS)]
        time_panel.line(out, series(arch, "train_us_per_token"), colour)
        memory_panel.line(out, series(arch, "step_mb"), colour)
        memory_panel.line(out, series(arch, "attention_mb"), colour, dashed=True)
    for i, arch in enumerate(archs):
        colour = COLOURS[i % len(COLOURS)]
        y = TOP + 10 + 22 * i
        out.append(f'<line x1="{LEGEND_X}" y1="{y}" x2="{LEGEND_X + 26}" y2="{y}" stroke="{colour}" '
                   'stroke-width="3"/>')
        out.append(f'<text x="{LEGEND_X + 32}" y="{y + 4}">{escape(arch)}</text>')
    y = TOP + 10 + 22 * len(archs) + 16
    for dashed, text in ((False, "whole step (arena)"), (True, "attention mixer alone")):
        dash = ' stroke-dasharray="6 4"' if dashed else ""
        out.append(f'<line x1="{LEGEND_X}" y1="{y}" x2="{LEGEND_X + 26}" y2="{y}" stroke="#444" '
                   f'stroke-width="2"{dash}/>')
        out.append(f'<text x="{LEGEND_X + 32}" y="{y + 4}">{text}</text>')
        y += 20
    out.append(f'<text x="{LEGEND_X}" y="{y + 4}" fill="#555" font-size="11">memory panel only</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


RATIO_MEASURES = [("training time", "train_us_per_token"), ("step memory", "step_mb"),
                  ("attention memory", "attention_mb"), ("decoding time", "decode_ms_per_sentence")]
YARDSTICKS = [("disa", "÷ DiSA", False), ("dynamicconv", "÷ DynamicConv", True)]


def draw_ratios(doc):
    """Fast-DiSA's cost ÷ each yardstick's at every T both ran, one colour per measure."""
    cells = doc["cells"]
    lengths = sorted({c["T"] for c in cells})
    by = {(c["arch"], c["T"]): c for c in cells}
    lines, values = [], []
    for yardstick, name, dashed in YARDSTICKS:
        for i, (measure, key) in enumerate(RATIO_MEASURES):
            points = []
            for t in lengths:
                fast, other = by.get(("fastdisa", t), {}), by.get((yardstick, t), {})
                ratio = fast[key] / other[key] if fast.get(key) and other.get(key) else None
                points.append((t, ratio))
                if ratio:
                    values.append(ratio)
            lines.append((f"{measure} {name}", COLOURS[i], dashed, points))
    if not values:
        sys.exit("plot_length: --ratios needs fastdisa and disa or dynamicconv cells with measurements")
    values += [1.0]
    panel = Panel(LEFT, lengths, values)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{PANEL_W + LEFT + 420}" height="{HEIGHT}" '
           f'viewBox="0 0 {PANEL_W + LEFT + 420} {HEIGHT}" font-family="sans-serif" font-size="12">',
           f'<rect width="{PANEL_W + LEFT + 420}" height="{HEIGHT}" fill="white"/>',
           '<text x="20" y="22" font-size="15" font-weight="bold">Fast-DiSA against its yardsticks</text>',
           f'<text x="20" y="40" fill="#555">{escape(subtitle_of(doc))}</text>']
    panel.axes(out, lengths, "Fast-DiSA's cost ÷ the yardstick's", "ratio (log scale; below 1: Fast-DiSA less)")
    y1 = panel.y(1.0)
    out.append(f'<line x1="{LEFT}" y1="{y1:.1f}" x2="{LEFT + PANEL_W}" y2="{y1:.1f}" stroke="#222" '
               'stroke-width="1.5"/>')
    for _, colour, dashed, points in lines:
        panel.line(out, points, colour, dashed)
    x, y = LEFT + PANEL_W + 30, TOP + 10
    for text, colour, dashed, _ in lines:
        dash = ' stroke-dasharray="6 4"' if dashed else ""
        out.append(f'<line x1="{x}" y1="{y}" x2="{x + 26}" y2="{y}" stroke="{colour}" stroke-width="2"{dash}/>')
        out.append(f'<text x="{x + 32}" y="{y + 4}">{escape(text)}</text>')
        y += 20
    out.append(f'<text x="{x}" y="{y + 8}" fill="#555" font-size="11">no point: the yardstick did not fit</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def subtitle_of(doc):
    cpu = doc.get("cpu", {})
    return (f'{cpu.get("model_name", "?")} (family {cpu.get("family", "?")}, model {cpu.get("model", "?")}), '
            f'{doc.get("threads", "?")} threads, {doc.get("date", "?")}; '
            f'{doc.get("tokens_per_batch", "?")} target tokens per batch, source = target = T')


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("json", help="bench_length --json output")
    parser.add_argument("-o", "--output", required=True, help="the SVG to write")
    parser.add_argument("--ratios", help="also write Fast-DiSA ÷ DiSA and ÷ DynamicConv against T to this SVG")
    args = parser.parse_args()
    try:
        with open(args.json, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f"plot_length: cannot read {args.json}: {e}")
    svg = draw(doc)
    with open(args.output, "w", encoding="utf-8") as f:
        f.write(svg)
    if args.ratios:
        with open(args.ratios, "w", encoding="utf-8") as f:
            f.write(draw_ratios(doc))


if __name__ == "__main__":
    main()
