#!/usr/bin/env python3
"""The Grafana dashboard's panels drawn without Grafana: each panel's queries run as
range queries against a Prometheus, drawn as a line chart per panel on one HTML page,
laid out on the dashboard's grid. A machine with Prometheus but no Grafana can look at
a run as the dashboard would show it, and the tests can check every panel draws data.

    scripts/dashboard-preview.py deploy/grafana/fathom.json \\
        --prometheus http://127.0.0.1:9090 --since 10m -o dashboard.html

It draws timeseries panels (title, unit, legend from legendFormat) and the dashboard's
Prometheus annotations as marks; `$run` is every run unless --run gives one.
`$__rate_interval` is Grafana's: four scrape intervals, or a step and one scrape
interval when that is longer (--scrape-interval, 15 s as Grafana assumes, 1 s for
fathom's example configuration). A series without a value is left out, as is a NaN
(a gap). Each panel's figure carries `data-series`, the series drawn, and
`data-points`, the values drawn. Exit 1 names the
panel whose query Prometheus refused. Python's standard library only.
"""

import argparse
import html
import json
import math
import re
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

# Grafana's classic palette, so series read in the colours people know from it.
COLOURS = ["#7eb26d", "#eab839", "#6ed0e0", "#ef843c", "#e24d42", "#1f78c1", "#ba43a9", "#705da0",
           "#508642", "#cca300"]
# Grafana's grid: 24 columns, rows of 30 px, 8 px between cells.
COLUMNS, CELL, GAP, PAGE = 24, 30, 8, 1400
TITLE, LEGEND_LINE, AXIS_LEFT, AXIS_BOTTOM = 28, 17, 62, 20


def seconds(text):
    """A duration as Prometheus and Grafana write it (`15s`, `10m`, `1h`), in seconds."""
    match = re.fullmatch(r"(\d+(?:\.\d+)?)(ms|s|m|h|d)", text)
    if not match:
        raise argparse.ArgumentTypeError(f"{text!r} is not a duration like 30s, 10m or 1h")
    scale = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400}[match[2]]
    return float(match[1]) * scale


def arguments():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dashboard", help="the dashboard's JSON (deploy/grafana/fathom.json)")
    parser.add_argument("--prometheus", required=True, help="the Prometheus to query, http://HOST:PORT")
    parser.add_argument("--since", type=seconds, metavar="DURATION",
                        help="draw the last DURATION (default: the dashboard's time)")
    parser.add_argument("--scrape-interval", type=seconds, default=15.0, metavar="DURATION",
                        help="Prometheus's (default 15s)")
    parser.add_argument("--run", default=".*", help="the value of $run, a regular expression (default: all)")
    parser.add_argument("-o", "--output", default="dashboard.html", help="the page to write")
    return parser.parse_args()


def time_range(dashboard, since):
    """(start, end) in seconds: the last `since`, or the dashboard's own time."""
    end = time.time()
    if since is None:
        since = seconds(dashboard.get("time", {}).get("from", "now-15m").removeprefix("now-"))
    return end - since, end


def substitute(expr, run, step, scrape):
    """The query with Grafana's variables given values."""
    rate_interval = max(4 * scrape, step + scrape)
    for name, value in [("$__rate_interval", f"{rate_interval:g}s"), ("$__interval", f"{step:g}s"),
                        ("$run", run), ("${run}", run)]:
        expr = expr.replace(name, value)
    return expr


def query_range(prometheus, expr, start, end, step):
    """Prometheus's matrix for `expr`: a list of (labels, [(t, value)])."""
    params = urllib.parse.urlencode({"query": expr, "start": f"{start:.3f}", "end": f"{end:.3f}", "step": f"{step:g}"})
    url = f"{prometheus.rstrip('/')}/api/v1/query_range?{params}"
    try:
        with urllib.request.urlopen(url, timeout=30) as answer:
            body = json.load(answer)
    except urllib.error.HTTPError as e:
        body = json.load(e)  # Prometheus's refusal of the query says why in its body
    except OSError as e:
        raise RuntimeError(f"{prometheus} does not answer: {e}") from e
    if body.get("status") != "success":
        raise RuntimeError(f"{body.get('errorType')}: {body.get('error')}")
    return [(s["metric"], [(float(t), float(v)) for t, v in s["values"]]) for s in body["data"]["result"]]


def legend(fmt, labels):
    """The series' name from the panel's legendFormat (`{{label}}`), or its labels."""
    if fmt:
        return re.sub(r"\{\{\s*(\w+)\s*\}\}", lambda m: labels.get(m[1], ""), fmt).strip()
    name = labels.get("__name__", "")
    rest = ", ".join(f'{k}="{v}"' for k, v in sorted(labels.items()) if k != "__name__")
    return f"{name}{{{rest}}}" if rest else name or "{}"


def panels(dashboard):
    """Every panel, those a collapsed row holds included, in the dashboard's order."""
    for panel in dashboard.get("panels", []):
        yield panel
        yield from panel.get("panels", [])


# The units fathom's dashboard uses, as a reader names them ("short" is a plain number).
UNITS = {"iops": "IO/s", "Bps": "bytes/s", "s": "seconds", "percentunit": "percent"}
SI = [(1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")]


def scaled(value, prefixes, unit):
    for factor, prefix in prefixes:
        if abs(value) >= factor:
            return f"{value / factor:.3g} {prefix}{unit}".rstrip()
    return f"{value:.3g} {unit}".rstrip()


def formatted(value, unit):
    """An axis value in the panel's unit, as Grafana writes the units fathom's use."""
    if unit == "percentunit":
        return f"{value * 100:.3g}%"
    if unit == "s":
        return scaled(value, [(1, ""), (1e-3, "m"), (1e-6, "µ")], "s") if value else "0 s"
    if unit == "Bps":
        return scaled(value, SI, "B/s")
    if unit == "iops":
        return scaled(value, SI, "io/s")
    return scaled(value, [(1e9, "Bil"), (1e6, "Mil"), (1e3, "K")], "")


def ticks(high):
    """Three to five round values from 0 to at least `high`."""
    if high <= 0:
        return [0, 1]
    raw = high / 4
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)
    return [i * step for i in range(int(math.ceil(high / step - 1e-9)) + 1)]


def time_ticks(start, end):
    """Times on round seconds or minutes, at most six across, each with its label."""
    every = next(e for e in (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 21600, 86400)
                 if (end - start) / e <= 6)
    shape = "%H:%M:%S" if every < 60 else "%H:%M"
    first = math.ceil(start / every) * every
    return [(t, time.strftime(shape, time.gmtime(t))) for t in range(int(first), int(end) + 1, every)]


def drawn(series):
    """The series that have a value that is a number, with those values alone:
    histogram_quantile gives NaN for a second without IO, which Grafana leaves as a gap."""
    finite = [(name, [(t, v) for t, v in points if math.isfinite(v)]) for name, points in series]
    return [(name, points) for name, points in finite if points]


def path(points, x, y, step):
    """An SVG path through the points, lifted over gaps of more than a step and a half."""
    out, last = [], None
    for t, v in points:
        out.append(f"{'L' if last is not None and t - last <= 1.5 * step else 'M'}{x(t):.1f},{y(v):.1f}")
        last = t
    return " ".join(out)


def chart(series, unit, box, window, marks):
    """The SVG of one panel's plot: its axes, a line per series, the annotations' marks."""
    width, height = box
    start, end, step = window
    values = [v for _, points in series for _, v in points]
    top = ticks(max(values, default=0))
    low = min(0, min(values, default=0))
    plot_w, plot_h = width - AXIS_LEFT - 8, height - AXIS_BOTTOM - 6
    x = lambda t: AXIS_LEFT + (t - start) / (end - start) * plot_w  # noqa: E731
    y = lambda v: 6 + plot_h - (v - low) / ((top[-1] - low) or 1) * plot_h  # noqa: E731
    parts = [f'<svg width="{width}" height="{height}" viewBox="0 0 {width} {height}">']
    for v in top:
        parts.append(f'<line class="grid" x1="{AXIS_LEFT}" x2="{width - 8}" y1="{y(v):.1f}" y2="{y(v):.1f}"/>'
                     f'<text class="axis" x="{AXIS_LEFT - 6}" y="{y(v) + 4:.1f}" text-anchor="end">'
                     f"{html.escape(formatted(v, unit))}</text>")
    for t, label in time_ticks(start, end):
        if not AXIS_LEFT + 24 <= x(t) <= width - 32:
            continue  # a label at an edge would run into the values' axis or out of the panel
        parts.append(f'<text class="axis" x="{x(t):.1f}" y="{height - 4}" text-anchor="middle">{label}</text>')
    for t, text in marks:
        parts.append(f'<line class="mark" x1="{x(t):.1f}" x2="{x(t):.1f}" y1="6" y2="{6 + plot_h}"/>'
                     f'<text class="marktext" x="{x(t) + 3:.1f}" y="16">{html.escape(text)}</text>')
    for i, (_, points) in enumerate(series):
        parts.append(f'<path d="{path(points, x, y, step)}" stroke="{COLOURS[i % len(COLOURS)]}" '
                     f'data-points="{len(points)}"/>')
    if not values:
        parts.append(f'<text class="nodata" x="{width / 2}" y="{height / 2}" text-anchor="middle">No data</text>')
    parts.append("</svg>")
    return "".join(parts)


def legend_lines(names, width):
    """How many lines the legend wraps to, by the width of its names."""
    lines, used = 1, 0
    for name in names:
        item = 26 + 7 * len(name)
        if used and used + item > width:
            lines, used = lines + 1, 0
        used += item
    return lines


def size(grid):
    """A grid position's width and height in pixels."""
    column = (PAGE - (COLUMNS - 1) * GAP) / COLUMNS
    return int(grid["w"] * column + (grid["w"] - 1) * GAP), grid["h"] * CELL + (grid["h"] - 1) * GAP


def placed(grid):
    return f'grid-column:{grid["x"] + 1}/span {grid["w"]};grid-row:{grid["y"] + 1}/span {grid["h"]}'


def figure(panel, series, window, marks):
    """One panel's HTML: its title, its chart and its legend, where the grid puts it."""
    grid, title = panel["gridPos"], panel.get("title", "")
    if panel.get("type") == "row":
        return f'<h2 class="row" style="{placed(grid)}">{html.escape(title)}</h2>'
    unit = panel.get("fieldConfig", {}).get("defaults", {}).get("unit", "short")
    series = drawn(series)
    width, height = size(grid)
    lines = legend_lines([name for name, _ in series], width - 16) if series else 0
    box = (width - 16, height - TITLE - lines * LEGEND_LINE - 8)
    keys = "".join(f'<span><i style="background:{COLOURS[i % len(COLOURS)]}"></i>{html.escape(name)}</span>'
                   for i, (name, _) in enumerate(series))
    points = sum(len(p) for _, p in series)
    return (f'<figure class="panel" style="{placed(grid)}" data-title="{html.escape(title)}" '
            f'data-series="{len(series)}" data-points="{points}"><figcaption>{html.escape(title)}'
            f'<small>{UNITS.get(unit, "")}</small></figcaption>{chart(series, unit, box, window, marks)}'
            f'<div class="legend">{keys}</div></figure>')


def annotations(dashboard, prometheus, window, substitute_expr):
    """The marks of the dashboard's Prometheus annotations: where each series' value
    turns non-zero, labelled by its titleFormat (fathom's: where each phase begins)."""
    marks = []
    for a in dashboard.get("annotations", {}).get("list", []):
        if not a.get("enable", True) or "expr" not in a:
            continue
        for labels, points in query_range(prometheus, substitute_expr(a["expr"]), *window):
            last = None
            for t, v in points:
                if v and (last is None or t - last > 1.5 * window[2]):
                    marks.append((t, legend(a.get("titleFormat", ""), labels)))
                last = t if v else None
    return marks


def panel_series(panel, prometheus, window, substitute_expr):
    """Each of the panel's series over the window: its legend and its values."""
    series = []
    for target in panel.get("targets", []):
        try:
            result = query_range(prometheus, substitute_expr(target["expr"]), *window)
        except RuntimeError as e:
            raise RuntimeError(f"panel {panel.get('title')!r}: {target['expr']}: {e}") from e
        series += [(legend(target.get("legendFormat", ""), labels), points) for labels, points in result]
    return series


STYLE = """
body { background: #111217; color: #ccccdc; font: 13px system-ui, sans-serif; margin: 16px; }
header h1 { font-size: 18px; margin: 0 0 4px; } header p { margin: 0 0 12px; color: #8e8e9e; }
main { display: grid; grid-template-columns: repeat(24, 1fr); grid-auto-rows: 30px; gap: 8px; width: 1400px; }
.row { margin: 0; font-size: 15px; align-self: end; border-bottom: 1px solid #2c2f36; }
.panel { margin: 0; background: #181b1f; border: 1px solid #2c2f36; border-radius: 2px; padding: 0 8px;
         overflow: hidden; }
figcaption { height: 28px; line-height: 28px; font-weight: 500; }
figcaption small { color: #8e8e9e; margin-left: 8px; font-weight: normal; }
svg path { fill: none; stroke-width: 1.5; } .grid { stroke: #2c2f36; } .mark { stroke: #4e79a7; stroke-dasharray: 3 3; }
.axis { fill: #8e8e9e; font-size: 11px; } .nodata { fill: #8e8e9e; font-size: 14px; }
.marktext { fill: #6f9ccc; font-size: 10px; }
.legend span { display: inline-block; margin-right: 12px; line-height: 17px; white-space: nowrap; }
.legend i { display: inline-block; width: 14px; height: 4px; margin-right: 6px; vertical-align: middle; }
"""


def page(dashboard, figures, args, window):
    start, end, step = window
    when = lambda t: time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(t))  # noqa: E731
    return (f"<!doctype html><html><head><meta charset=\"utf-8\"><title>{html.escape(dashboard.get('title', ''))}"
            f"</title><style>{STYLE}</style></head><body><header><h1>{html.escape(dashboard.get('title', ''))} "
            f"dashboard, previewed</h1><p>{when(start)} to {when(end)} UTC, a point every {step:g} s, from "
            f"{html.escape(args.prometheus)}; run {html.escape(args.run)}. Drawn by scripts/dashboard-preview.py "
            f"from the dashboard's panels, as Grafana would.</p></header><main>{''.join(figures)}</main>"
            "</body></html>")


def main():
    args = arguments()
    with open(args.dashboard) as f:
        dashboard = json.load(f)
    start, end = time_range(dashboard, args.since)
    # about 300 points across, as Grafana asks for, never closer than one scrape apart
    step = max(args.scrape_interval, round((end - start) / 300))
    window = (start, end, step)
    expr = lambda e: substitute(e, args.run, step, args.scrape_interval)  # noqa: E731
    try:
        marks = annotations(dashboard, args.prometheus, window, expr)
        figures = [figure(panel, panel_series(panel, args.prometheus, window, expr), window, marks)
                   for panel in panels(dashboard)]
    except RuntimeError as e:
        sys.exit(f"dashboard-preview.py: {e}")
    with open(args.output, "w") as f:
        f.write(page(dashboard, figures, args, window))


if __name__ == "__main__":
    main()
