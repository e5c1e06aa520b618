#!/usr/bin/env python3
"""A statistic of the attention against input length, from `attn attn-stats` JSON files, as SVG.

    experiments/attn_stats_chart.py OUT.svg [K=]STATS.json ... [--component encoder]
                                    [--metric normalised_entropy] [--title TEXT]
    experiments/attn_stats_chart.py OUT.svg RUN_DIR ... [--set test2016] [--model best] [--component …]

Each STATS.json is one `attn attn-stats -o` output (docs/attention-stats.md). Typically the
same models measured on a test set and on it joined ×K (experiments/make_long_test.py): give each
file as K=FILE and the x axis is the length ×K; without K= it is the file's mean source length
in subwords. One line per model file and layer of the component (--component encoder, decoder
or cross): the layer's heads pooled ("all_heads"); a colour per model (labelled by its arch, and
its file when two models share an arch), lighter for lower layers. --metric chooses the y axis:
normalised_entropy (default), entropy, max_weight, distance or mass_within.

With run folders instead (the run layout of docs/report.md: RUN/stats/<set>.<model>.json, as
experiments/attn_stats_runs.sh writes them), each RUN_DIR's stats files of --set (default test2016)
and of its probes <set>.join<K> are read (×1 and ×K), runs are grouped as attn report groups them (a
folder named seed<N> belongs to its parent folder's group, e.g. OUT/muse/seed1 to muse), and each
line is one group and layer: at each ×K the mean over the group's seeds that have that file.

Python 3 only, no third-party packages. Exit status 2 with one line on bad input.
"""
import json
import math
import os
import sys

METRICS = {
    "normalised_entropy": "mean normalised entropy (entropy / log keys)",
    "entropy": "mean entropy (nats)",
    "max_weight": "mean largest weight",
    "distance": "mean distance from the diagonal (positions)",
    "mass_within": "mean mass within ±W of the diagonal",
}
COMPONENTS = ("encoder", "decoder", "cross")
PALETTE = ["#3b5bdb", "#e8590c", "#2b8a3e", "#c2255c", "#7048e8", "#1098ad", "#f08c00", "#495057"]


def fail(message):
    print(f"attn_stats_chart: {message}", file=sys.stderr)
    sys.exit(2)


def parse_args(argv):
    out, files, component, metric, title = None, [], "encoder", "normalised_entropy", None
    options = {"--set": "test2016", "--model": "best"}
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ("--set", "--model"):
            if i + 1 >= len(argv):
                fail(f"{a} needs a value")
            options[a] = argv[i + 1]
            i += 2
            continue
        if a in ("--component", "--metric", "--title"):
            if i + 1 >= len(argv):
                fail(f"{a} needs a value")
            value = argv[i + 1]
            if a == "--component":
                if value not in COMPONENTS:
                    fail(f"--component {value}: choose encoder, decoder or cross")
                component = value
            elif a == "--metric":
                if value not in METRICS:
                    fail(f"--metric {value}: choose one of {', '.join(METRICS)}")
                metric = value
            else:
                title = value
            i += 2
            continue
        if a.startswith("--"):
            fail(f"unknown option {a}")
        if out is None:
            out = a
        else:
            files.append(a)
        i += 1
    if out is None or not files:
        fail("usage: attn_stats_chart.py OUT.svg [K=]STATS.json ... (see the top of the script)")
    if not out.endswith(".svg") and out != "-":
        fail(f"{out}: the output is an SVG file; name it .svg (or - for a Markdown table)")
    return out, files, component, metric, title, options["--set"], options["--model"]


def load(path):
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except OSError as e:
        fail(f"{path}: {e.strerror}")
    except json.JSONDecodeError as e:
        fail(f"{path}: not JSON ({e.msg} at line {e.lineno})")
    if not isinstance(doc, dict) or doc.get("format") != "attn-attention-stats":
        fail(f"{path}: not an attn attn-stats file (format attn-attention-stats)")
    if doc.get("version") not in (1, 2):
        fail(f"{path}: version {doc.get('version')} of attn-attention-stats; this script reads versions 1 and 2")
    return doc


def group_of(run):
    """The group attn report puts a run in: OUT/<group>/seed<N> → <group>; any other folder its own name."""
    run = os.path.abspath(run)
    name = os.path.basename(run)
    if name.startswith("seed") and name[4:].isdigit():
        return os.path.basename(os.path.dirname(run))
    return name


def series_of_runs(runs, test_set, model, component, metric):
    """{(group, layer): [(K, mean over seeds)]}, for the runs' stats/<set>[.join<K>].<model>.json."""
    values = {}  # (group, layer, K) → [y per seed]
    found = 0
    for run in runs:
        stats = os.path.join(run, "stats")
        if not os.path.isdir(stats):
            fail(f"{run}: no stats/ folder (experiments/attn_stats_runs.sh writes it)")
        for name in sorted(os.listdir(stats)):
            if not name.endswith(f".{model}.json"):
                continue
            stem = name[: -len(f".{model}.json")]
            if stem == test_set:
                k = 1
            elif stem.startswith(test_set + ".join") and stem[len(test_set) + 5:].isdigit():
                k = int(stem[len(test_set) + 5:])
            else:
                continue
            doc = load(os.path.join(stats, name))
            found += 1
            for layer in doc["components"][component]["layers"]:
                y = layer["all_heads"][metric]
                if y is not None:
                    values.setdefault((group_of(run), layer["layer"], k), []).append(y)
    if not found:
        fail(f"no stats/{test_set}.{model}.json or stats/{test_set}.join<K>.{model}.json in the runs given")
    lines = {}
    for (group, layer, k), ys in values.items():
        lines.setdefault((group, layer), []).append((k, sum(ys) / len(ys)))
    for points in lines.values():
        points.sort()
    return lines, {group: group for group, _ in lines}, True


def read_file(arg):
    k = None
    path = arg
    if "=" in arg and not os.path.exists(arg):
        head, path = arg.split("=", 1)
        try:
            k = float(head)
        except ValueError:
            fail(f"{arg}: K in K=FILE must be a number")
    return k, path, load(path)


def series(files, component, metric):
    """{(model file, layer): [(x, y)]} and each model file's arch; x from K or the mean source length."""
    keyed = [k is not None for k, _, _ in files]
    if any(keyed) and not all(keyed):
        fail("give K= for every file or for none")
    lines, archs = {}, {}
    for k, path, doc in files:
        model = doc["model"]["file"]
        archs[model] = doc["model"]["config"].get("arch", "?")
        x = k if k is not None else doc["source_tokens"]["mean"]
        if x is None:
            fail(f"{path}: no sentence was measured")
        for layer in doc["components"][component]["layers"]:
            y = layer["all_heads"][metric]
            if y is not None:
                lines.setdefault((model, layer["layer"]), []).append((x, y))
    for points in lines.values():
        points.sort()
    return lines, archs, all(keyed)


def nice_ticks(lo, hi, count=5):
    """Round numbers from lo to hi, about `count` steps apart."""
    if hi <= lo:
        hi = lo + 1.0
    raw = (hi - lo) / count
    mag = 10 ** math.floor(math.log10(raw))
    step = next(s * mag for s in (1, 2, 2.5, 5, 10) if s * mag >= raw * (1 - 1e-9))
    ticks, t = [], math.ceil(lo / step - 1e-9) * step
    while t <= hi + step * 1e-9:
        ticks.append(round(t, 10))
        t += step
    return ticks


def esc(s):
    return str(s).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def mix(colour, f):
    """colour lightened towards white by f (0: itself)."""
    c = [int(colour[i:i + 2], 16) for i in (1, 3, 5)]
    return "#" + "".join(f"{round(v + (255 - v) * f):02x}" for v in c)


def svg(lines, archs, by_k, component, metric, title):
    W, H, left, right, top, bottom = 860, 520, 70, 250, 44, 56
    xs = [x for pts in lines.values() for x, _ in pts]
    ys = [y for pts in lines.values() for _, y in pts]
    if not xs:
        fail(f"no {metric} to draw for the {component} (no layer has measured rows)")
    x0, x1 = min(xs), max(xs)
    if x0 == x1:
        x0, x1 = x0 - 1, x1 + 1
    y0 = 0.0  # every statistic is ≥ 0
    y1 = 1.0 if metric in ("normalised_entropy", "max_weight", "mass_within") else max(ys)
    if y0 == y1:
        y1 = y0 + 1
    pw, ph = W - left - right, H - top - bottom
    px = lambda x: left + (x - x0) / (x1 - x0) * pw
    py = lambda y: top + ph - (y - y0) / (y1 - y0) * ph
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" '
           'font-family="DejaVu Sans, sans-serif" font-size="12">',
           f'<rect width="{W}" height="{H}" fill="#ffffff"/>']
    heading = title or f"{component}: {METRICS[metric]}"
    # A long heading is squeezed to the picture's width rather than cut off at its edge.
    fit = f' textLength="{W - left - 12}" lengthAdjust="spacingAndGlyphs"' if len(heading) * 7.6 > W - left - 12 else ""
    out.append(f'<text x="{left}" y="24" font-size="14" font-weight="600"{fit}>{esc(heading)}</text>')
    for t in nice_ticks(y0, y1):
        out.append(f'<line x1="{left}" x2="{left + pw}" y1="{py(t):.1f}" y2="{py(t):.1f}" stroke="#e9ecef"/>')
        out.append(f'<text x="{left - 6}" y="{py(t) + 4:.1f}" text-anchor="end" fill="#495057">{t:g}</text>')
    xticks = sorted(set(xs)) if by_k else nice_ticks(x0, x1)
    for t in xticks:
        out.append(f'<line x1="{px(t):.1f}" x2="{px(t):.1f}" y1="{top}" y2="{top + ph}" stroke="#f1f3f5"/>')
        out.append(f'<text x="{px(t):.1f}" y="{top + ph + 16}" text-anchor="middle" fill="#495057">'
                   f'{("×" + format(t, "g")) if by_k else format(t, "g")}</text>')
    out.append(f'<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="none" stroke="#adb5bd"/>')
    xlabel = "input length (test set joined ×K)" if by_k else "mean source length (subwords)"
    out.append(f'<text x="{left + pw / 2}" y="{H - 14}" text-anchor="middle">{esc(xlabel)}</text>')
    out.append(f'<text transform="translate(16,{top + ph / 2}) rotate(-90)" text-anchor="middle">'
               f'{esc(METRICS[metric])}</text>')
    models = sorted({m for m, _ in lines})
    shared = {a for a in archs.values() if sum(1 for m in models if archs[m] == a) > 1}
    layers_of = {m: sorted(l for mm, l in lines if mm == m) for m in models}
    legend_y = top
    for mi, m in enumerate(models):
        colour = PALETTE[mi % len(PALETTE)]
        name = archs[m] + (f" ({m})" if archs[m] in shared else "")
        n = len(layers_of[m])
        for li, layer in enumerate(layers_of[m]):
            c = mix(colour, 0.6 * (n - 1 - li) / max(1, n - 1))  # the top layer darkest
            pts = lines[(m, layer)]
            path = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in pts)
            label = f"{name} layer {layer}"
            out.append(f'<polyline class="series" points="{path}" fill="none" stroke="{c}" stroke-width="2">'
                       f'<title>{esc(label)}</title></polyline>')
            for x, y in pts:
                out.append(f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="3" fill="{c}"><title>{esc(label)}: '
                           f'{y:.4f}</title></circle>')
            lx = left + pw + 16
            out.append(f'<line x1="{lx}" x2="{lx + 22}" y1="{legend_y:.1f}" y2="{legend_y:.1f}" stroke="{c}" '
                       'stroke-width="2"/>')
            out.append(f'<text x="{lx + 28}" y="{legend_y + 4:.1f}">{esc(label)}</text>')
            legend_y += 16
    out.append("</svg>")
    return "\n".join(out) + "\n"


def markdown(lines, archs, metric):
    """The lines as a Markdown table: one row per (model or group, layer), one column per x."""
    xs = sorted({x for points in lines.values() for x, _ in points})
    label = lambda x: f"×{x:g}" if float(x).is_integer() else f"{x:.1f}"
    out = [f"| model | layer | {METRICS[metric]}: " + ", ".join(label(x) for x in xs) + " |", "| --- | ---: | --- |"]
    for (model, layer), points in sorted(lines.items(), key=lambda kv: (str(kv[0][0]), kv[0][1])):
        by_x = dict(points)
        cells = ", ".join(f"{by_x[x]:.3f}" if x in by_x else "—" for x in xs)
        out.append(f"| {archs.get(model, model)} | {layer} | {cells} |")
    return "\n".join(out) + "\n"


def main(argv):
    out, args, component, metric, title, test_set, model = parse_args(argv)
    dirs = [a for a in args if os.path.isdir(a)]
    if dirs and len(dirs) != len(args):
        fail("give run folders or stats files, not both")
    if dirs:
        lines, archs, by_k = series_of_runs(dirs, test_set, model, component, metric)
        title = title or f"{component}: {METRICS[metric]}, mean over seeds ({test_set} joined ×K)"
    else:
        files = [read_file(a) for a in args]
        lines, archs, by_k = series(files, component, metric)
    if out == "-":
        sys.stdout.write(markdown(lines, archs, metric))
        return
    text = svg(lines, archs, by_k, component, metric, title)
    tmp = out + ".tmp"
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, out)
    except OSError as e:
        if os.path.exists(tmp):
            os.remove(tmp)
        fail(f"{out}: {e.strerror}")
    print(f"attn_stats_chart: {len(lines)} lines written to {out}", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1:])
