#!/usr/bin/env python3
"""One Markdown table of `loadgen profile --memory` results: per gateway (and logging setting),
allocations and bytes per request with their 95% intervals, memory at rest before the first
trial and after the last, the peak under load, the probes' cost at p50, loadgen's own
allocations per request, and the source with what it counts. Figures from different sources
are not comparable with each other; the table is in the order given, never ranked.

Usage: memory_table.py RESULT.json...
"""
import json
import sys


def interval(i, digits):
    if not i:
        return "-"
    if i.get("confidence", 0) == 0:
        return f"{i['estimate']:.{digits}f} (1 trial)"
    return f"{i['estimate']:.{digits}f} [{i['low']:.{digits}f}, {i['high']:.{digits}f}]"


def mib(b):
    return "-" if b is None else f"{b / 1048576:.1f}"


def p50_cost(result):
    for d in result.get("profiler_cost", []):
        if d.get("percentile") == "p50" and d.get("added_us"):
            return f"{d['added_us']['estimate']:+.0f} µs"
    return "-"


def row(path):
    r = json.load(open(path))
    m = r.get("memory") or {}
    name = r["profile"]["gateway"] + (" (logging on)" if "logging" in path else "")
    trials = m.get("trials", [])
    before = trials[0]["rest_before"]["median_rss_bytes"] if trials and trials[0].get("rest_before") else None
    after = trials[-1]["rest_after"]["median_rss_bytes"] if trials and trials[-1].get("rest_after") else None
    peak = max((x.get("load_rss_peak_bytes", 0) for x in r.get("resources", [])), default=None)
    growth = m.get("growth") or {}
    flag = "grew" if growth.get("flagged") else "held" if growth else "-"
    source = m.get("source") or "none: " + "; ".join(m.get("unavailable", []))[:80]
    return [name, interval(m.get("allocs_per_request"), 1), interval(m.get("bytes_per_request"), 0),
            mib(before), mib(after), mib(peak), flag, p50_cost(r),
            interval(m.get("loadgen_allocs_per_request"), 1), source]


header = ["gateway", "allocs/request", "bytes/request", "RSS at rest before (MiB)",
          "RSS at rest after (MiB)", "RSS peak (MiB)", "rest trial to trial", "probes' cost p50",
          "loadgen's workers' allocs/request", "source (counts differ: see below)"]
print("| " + " | ".join(header) + " |")
print("|" + "---|" * len(header))
sources = {}
for path in sys.argv[1:]:
    try:
        cells = row(path)
    except (OSError, KeyError, ValueError) as e:
        print(f"memory_table: {path}: {e}", file=sys.stderr)
        continue
    print("| " + " | ".join(cells) + " |")
    m = json.load(open(path)).get("memory") or {}
    if m.get("source"):
        sources[m["source"]] = m.get("counts", "")
print()
for source, counts in sources.items():
    print(f"- `{source}`: {counts}")
