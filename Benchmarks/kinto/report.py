#!/usr/bin/env python3
"""Prints the Anchorage/Kinto ratios and the targets of one performance.sh run, and optionally writes the
Markdown tables and the SVG chart of docs/performance.md.

    report.py RESULTS.json... [--markdown OUT.md] [--svg OUT.svg]

Each RESULTS.json is a flat object of figures: sync-load's (`sqlite.fast.100.syncs_per_s`, `postgres.upload…`,
`import.seconds`) and kinto_load.py's (`kinto-memory.…`, `kinto-postgres.…`).
"""

import argparse
import json

# Anchorage's store, and the Kinto backend it is compared with.
PAIRS = [("sqlite", "kinto-memory", "SQLite", "Kinto, memory backend"),
         ("postgres", "kinto-postgres", "PostgreSQL", "Kinto, PostgreSQL backend")]

# (key, comparison, limit, text): the targets docs/performance.md reports on.
TARGETS = [
    ("sqlite.fast.100.syncs_per_s", ">=", 6000, "100 devices on SQLite: ≥ 6,000 syncs/s"),
    ("sqlite.fast.100.p99_ms", "<=", 25, "100 devices on SQLite: p99 ≤ 25 ms"),
    ("postgres.fast.100.syncs_per_s", ">=", 2500, "100 devices on PostgreSQL: ≥ 2,500 syncs/s"),
    ("postgres.fast.100.p99_ms", "<=", 60, "100 devices on PostgreSQL: p99 ≤ 60 ms"),
    ("sqlite.upload.records_per_s", ">=", 20000, "upload on SQLite: ≥ 20,000 records/s"),
    ("postgres.upload.records_per_s", ">=", 10000, "upload on PostgreSQL: ≥ 10,000 records/s"),
    ("sqlite.pull.records_per_s", ">=", 30000, "a device pulls (SQLite server): ≥ 30,000 records/s"),
    ("postgres.pull.records_per_s", ">=", 30000, "a device pulls (PostgreSQL server): ≥ 30,000 records/s"),
    ("import.seconds", "<=", 5, "`anchorage records import` of 100,000 records: < 5 s"),
]
RSS_KEYS = ["server_rss_mb", "device_rss_mb"]


def number(value, digits=0):
    return f"{value:,.{digits}f}"


def rows(results):
    """(what, anchorage key, kinto key, unit, higher is better) for every figure both sides have."""
    out = []
    for ours, peer, ours_name, peer_name in PAIRS:
        devices = sorted({int(k.split(".")[2]) for k in results if k.startswith(ours + ".fast.")})
        for n in devices:
            base = f"{ours}.fast.{n}"
            other = f"{peer}.fast.{n}"
            out.append((f"{ours_name}: {n} devices, syncs/s", f"{base}.syncs_per_s", f"{other}.syncs_per_s", "", True))
            out.append((f"{ours_name}: {n} devices, p99 ms", f"{base}.p99_ms", f"{other}.p99_ms", "", False))
            out.append((f"{ours_name}: {n} devices, server CPU ms/sync", f"{base}.server_cpu_ms_per_sync",
                        f"{other}.server_cpu_ms_per_sync", "", False))
        for what in ("upload", "pull"):
            out.append((f"{ours_name}: {what}, records/s", f"{ours}.{what}.records_per_s", f"{peer}.{what}.records_per_s", "", True))
    return out


def ratio(results, ours, peer, higher):
    if ours not in results or peer not in results or not results[ours] or not results[peer]:
        return None
    return results[ours] / results[peer] if higher else results[peer] / results[ours]


def table(results):
    lines = ["| what | Anchorage | Kinto | Anchorage / Kinto |", "|---|---:|---:|---:|"]
    for what, ours, peer, _, higher in rows(results):
        if ours not in results:
            continue
        r = ratio(results, ours, peer, higher)
        digits = 1 if "ms" in what else 0
        lines.append(f"| {what} | {number(results[ours], digits)} | "
                     f"{number(results[peer], digits) if peer in results else '—'} | {f'{r:,.1f}×' if r else '—'} |")
    return lines


def targets(results):
    lines = ["| target | measured | holds |", "|---|---:|:---:|"]
    for key, comparison, limit, text in TARGETS:
        if key not in results:
            lines.append(f"| {text} | not run | — |")
            continue
        value = results[key]
        if key == "import.seconds" and results.get("import.records") != 100000:
            lines.append(f"| {text} | {number(value, 1)} s for {number(results.get('import.records', 0))} | — |")
            continue
        holds = value >= limit if comparison == ">=" else value <= limit
        lines.append(f"| {text} | {number(value, 1 if value < 100 else 0)} | {'yes' if holds else 'no'} |")
    # Every `anchorage` process counts: the servers, and the devices that import, upload and pull. (The
    # fast-sync devices live in the benchmark process, whose memory is the benchmark's, not a device's.)
    peak = max((v for k, v in results.items() if not k.startswith("kinto") and k.split(".")[-1] in RSS_KEYS), default=None)
    if peak is not None:
        lines.append(f"| device and server RSS < 200 MB | {number(peak)} MB at most | {'yes' if peak < 200 else 'no'} |")
    return lines


def svg(results):
    """Fast syncs per second by number of devices: one group of bars per device count, log scale."""
    import math
    series = [("sqlite", "Anchorage, SQLite", "#1f6feb"), ("postgres", "Anchorage, PostgreSQL", "#0b3d91"),
              ("kinto-memory", "Kinto, memory", "#e8a33d"), ("kinto-postgres", "Kinto, PostgreSQL", "#b5651d")]
    series = [s for s in series if any(k.startswith(s[0] + ".fast.") for k in results)]
    devices = sorted({int(k.split(".")[2]) for k in results if ".fast." in k})
    width, height, left, top, bottom = 760, 360, 70, 40, 60
    plot_w, plot_h = width - left - 20, height - top - bottom
    top_value = max([v for k, v in results.items() if k.endswith(".syncs_per_s")] + [10])
    decades = range(0, math.ceil(math.log10(top_value)) + 1)
    scale = lambda v: plot_h * math.log10(max(v, 1)) / max(decades)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
           'font-family="Helvetica, Arial, sans-serif" font-size="12">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="{left}" y="22" font-size="15" font-weight="bold">Fast syncs per second (push 1 + pull), one server, 2 cores (log scale)</text>']
    for d in decades:
        y = top + plot_h - plot_h * d / max(decades)
        out.append(f'<line x1="{left}" y1="{y:.1f}" x2="{left + plot_w}" y2="{y:.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{left - 8}" y="{y + 4:.1f}" text-anchor="end">{10 ** d:,}</text>')
    group_w = plot_w / max(1, len(devices))
    bar_w = group_w * 0.8 / max(1, len(series))
    for gi, n in enumerate(devices):
        x0 = left + gi * group_w + group_w * 0.1
        for si, (prefix, _, color) in enumerate(series):
            value = results.get(f"{prefix}.fast.{n}.syncs_per_s")
            if value is None:
                continue
            h = scale(value)
            x = x0 + si * bar_w
            out.append(f'<rect x="{x:.1f}" y="{top + plot_h - h:.1f}" width="{bar_w - 2:.1f}" height="{h:.1f}" fill="{color}"/>')
            out.append(f'<text x="{x + bar_w / 2 - 1:.1f}" y="{top + plot_h - h - 4:.1f}" text-anchor="middle" font-size="10">{value:,.0f}</text>')
        out.append(f'<text x="{x0 + group_w * 0.4:.1f}" y="{top + plot_h + 18}" text-anchor="middle">{n:,} devices</text>')
    lx = left
    for prefix, name, color in series:
        out.append(f'<rect x="{lx}" y="{height - 22}" width="12" height="12" fill="{color}"/>')
        out.append(f'<text x="{lx + 16}" y="{height - 12}">{name}</text>')
        lx += 30 + 7 * len(name)
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("results", nargs="+")
    parser.add_argument("--markdown")
    parser.add_argument("--svg")
    arguments = parser.parse_args()
    results = {}
    for path in arguments.results:
        with open(path) as f:
            results.update(json.load(f))
    lines = ["## Anchorage against Kinto, same contacts, same machine, same run", ""] + table(results)
    lines += ["", "## Targets", ""] + targets(results)
    print("\n".join(lines))
    if arguments.markdown:
        with open(arguments.markdown, "w") as f:
            f.write("\n".join(lines) + "\n")
    if arguments.svg:
        with open(arguments.svg, "w") as f:
            f.write(svg(results))


if __name__ == "__main__":
    main()
