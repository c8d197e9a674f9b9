"""Time ingest's per-result features (``ingest.base.result_features``) on results of a few scripts (not a test).

Usage: python benchmarks/result_signature_speed.py [--repeat N]

Prints the mean time per result for text with spaces between words (English), and for text
without them (Chinese) short enough to be sampled whole and longer than the sample. Run it
with two checkouts on ``PYTHONPATH`` to compare them.
"""

from __future__ import annotations

import argparse
import random
import timeit

from tokaudit.ingest.base import result_features

# Common Chinese characters; a fullwidth comma now and then, as in running text.
CHINESE = "的一是不了人我在有他这为之大来以个中上们到说国和地也子时道出而要于就下得可你年生自会那后能对着事其里所去行过家十用发天如然作方成者日都三小"
ENGLISH = ("the", "report", "for", "build", "passed", "error", "line", "value", "cache", "request")


def _chinese(rng: random.Random, chars: int) -> bytes:
    return "".join(rng.choice(CHINESE) + ("，" if rng.random() < 0.05 else "") for _ in range(chars)).encode()


def _cut(data: bytes, limit: int) -> bytes:
    """``data``'s first ``limit`` bytes or fewer, ending on a whole character."""
    return data[:limit].decode("utf-8", errors="ignore").encode()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=50)
    args = ap.parse_args()
    rng = random.Random(1)
    results = {
        "English, 12 KiB": " ".join(rng.choice(ENGLISH) for _ in range(2000)).encode()[: 12 * 1024],
        "Chinese, 2 KiB (sampled whole)": _cut(_chinese(rng, 1000), 2100),
        "Chinese, 12 KiB": _cut(_chinese(rng, 5000), 12 * 1024),
    }
    print("| result | ms per result |\n|---|---:|")
    for label, data in results.items():
        seconds = timeit.timeit(lambda data=data: result_features(data), number=args.repeat) / args.repeat
        print(f"| {label} | {seconds * 1e3:.2f} |")


if __name__ == "__main__":
    main()
