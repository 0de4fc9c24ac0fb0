"""What the swarm and Slurm checks (scripts/swarm/check.sh, scripts/slurm/check.sh) assert of a
runner's output: a whole run's merge is the sum of its shards' (counts, and with --histograms
every metric's histogram decoded and added with HdrHistogram's Python library), the mock counted
exactly what the shards sent, and a run with one shard killed names that shard, is invalid, and
merges the others.

    python3 shards_check.py NAME WHOLE_OUT KILLED_OUT KILLED_INDEX SHARDS [--histograms]

Imported by the swarm check for its own further checks (`Checks`, `result_of`)."""

import json
import pathlib
import sys


class Checks:
    """Prints each check as it is made; `done` fails with every failed one named."""

    def __init__(self, name):
        self.name, self.failed = name, []

    def check(self, ok, what):
        print(("ok: " if ok else "FAILED: ") + what)
        if not ok:
            self.failed.append(what)

    def done(self):
        if self.failed:
            raise SystemExit(f"{self.name} check FAILED: " + "; ".join(self.failed))
        print(f"{self.name} check passed")


def result_of(path):
    """The result line of a shard's log."""
    for line in pathlib.Path(path).read_text().splitlines():
        if line.startswith('{"schema":'):
            return json.loads(line)
    raise SystemExit(f"no result in {path}")


def whole_run(checks, whole, shards, histograms=False):
    """The merged result of `whole` against its shards' logs; returns the merged run."""
    whole = pathlib.Path(whole)
    merged = json.loads((whole / "merged.json").read_text())
    runs = [result_of(whole / f"shard-{i}.log")["runs"][0] for i in range(shards)]
    run = merged["runs"][0]
    for field in ("requests", "ok", "failed"):
        total = sum(r[field] for r in runs)
        checks.check(run[field] == total, f"merged {field} {run[field]} = the shards' sum {total}")
    if histograms:
        from hdrh.histogram import HdrHistogram

        for metric, encoded in run["histograms"].items():
            added = HdrHistogram.decode(runs[0]["histograms"][metric])
            for r in runs[1:]:
                added.add(HdrHistogram.decode(r["histograms"][metric]))
            m = HdrHistogram.decode(encoded)
            same = m.get_total_count() == added.get_total_count() and all(
                m.get_value_at_percentile(p) == added.get_value_at_percentile(p)
                for p in (50, 90, 99, 99.9, 100))
            checks.check(same, f"{metric}: merged histogram = the shards' added ({m.get_total_count()} values)")
    counted = whole / "mock-chat-requests"
    if counted.exists() and counted.read_text().split():
        seen = int(counted.read_text().split()[0])
        sent = sum(r["requests"] + r["warmup_requests"] for r in runs)
        checks.check(seen == sent, f"the mock counted {seen} chat requests; the shards sent {sent} (measured and warm-up)")
    else:
        checks.check(False, "the runner wrote the mock's count (mock-chat-requests)")
    return run


def killed_run(checks, killed, index, shards):
    """The merged result of a run whose shard `index` was killed."""
    merged = json.loads((pathlib.Path(killed) / "merged.json").read_text())
    absent = merged["shards"].get("absent", [])
    checks.check([a["index"] for a in absent] == [index], f"the killed shard is named: {absent}")
    checks.check(not merged["valid"], "a run with a killed shard is invalid")
    checks.check(len(merged["shards"]["merged"]) == shards - 1, f"the other {shards - 1} shards are merged")


if __name__ == "__main__":
    name, whole, killed, index, shards = sys.argv[1:6]
    checks = Checks(name)
    whole_run(checks, whole, int(shards), "--histograms" in sys.argv[6:])
    killed_run(checks, killed, int(index), int(shards))
    checks.done()
