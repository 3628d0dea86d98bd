"""What the Python sides of the keiri-xlsx benchmarks share: resident memory from /proc and
the one JSON line each run prints."""

import json


def rss_kb(field):
    """A /proc/self/status field in KiB (VmRSS, VmHWM)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def report(seconds, baseline_kb, **extra):
    """Prints the sample line the Rust side reads: seconds, peak and baseline RSS."""
    print(json.dumps({"seconds": seconds, "peak_kb": rss_kb("VmHWM"), "baseline_kb": baseline_kb,
                      **extra}))
