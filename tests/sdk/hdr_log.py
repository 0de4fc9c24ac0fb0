"""HdrHistogram's own Python library (hdrhistogram on PyPI) reads loadgen's interval log and the
histogram a result carries.

Usage: hdr_log.py LOG ENCODED
  LOG      an interval log written by `loadgen run --hdr-log`
  ENCODED  a histogram from a result's `histograms` (base64 of compressed V2)
Prints one JSON line: the log's interval count, the total of its intervals (count, p50, p99,
max) and the decoded histogram's (count, p50, p99, max), then "hdr log: ok".
"""

import json
import sys

from hdrh.histogram import HdrHistogram
from hdrh.log import HistogramLogReader


def summary(h):
    return {
        "count": h.get_total_count(),
        "p50": h.get_value_at_percentile(50),
        "p99": h.get_value_at_percentile(99),
        "max": h.get_max_value(),
    }


def main():
    log, encoded = sys.argv[1], sys.argv[2]
    reader = HistogramLogReader(log, HdrHistogram(1, 3_600_000_000, 3))
    total = HdrHistogram(1, 3_600_000_000, 3)
    intervals = 0
    while True:
        h = reader.get_next_interval_histogram()
        if h is None:
            break
        intervals += 1
        total.add(h)
    decoded = HdrHistogram.decode(encoded)
    print(json.dumps({"intervals": intervals, "log": summary(total), "result": summary(decoded)}))
    print("hdr log: ok")


if __name__ == "__main__":
    main()
