"""``python -m tokaudit.simulate --out DIR --sessions N --seed S [--family F ...] [--attack-share 0.2] [--knob K=V ...] [--jobs J]``.

Writes a labelled corpus of simulated Claude Code sessions and MCP transcripts
(see ``tokaudit.simulate``). ``--family`` (repeatable) restricts the families;
when only attack (or only benign) families are named, every session is one of
them and ``--attack-share`` does not apply. Ingest the corpus with
``tokaudit ingest DIR/projects DIR/mcp`` (``DIR/labels.json`` is not a log).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from tokaudit.simulate.corpus import check_agent_formats, simulate
from tokaudit.simulate.families import FAMILIES
from tokaudit.simulate.writers import AGENT_FORMATS


def parse_shares(parser: argparse.ArgumentParser, items: list[str]) -> dict[str, float] | None:
    """``["codex=0.3", "otel=0.2"]`` as ``{"codex": 0.3, "otel": 0.2}`` (None when empty); bad shares are a usage error."""
    shares = {}
    for item in items:
        name, sep, value = item.partition("=")
        try:
            shares[name] = float(value)
        except ValueError:
            sep = ""
        if not sep or name == AGENT_FORMATS[0]:
            parser.error(f"--agent-format takes FORMAT=SHARE with FORMAT one of {', '.join(AGENT_FORMATS[1:])}, not {item!r}")
    try:
        check_agent_formats(shares)
    except ValueError as exc:
        parser.error(f"--agent-format FORMAT=SHARE: {exc}")
    return shares or None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tokaudit.simulate", description=__doc__.split("\n\n")[1])
    parser.add_argument("--out", required=True, type=Path, help="output folder (gets projects/, mcp/, codex/ and otel/ with --agent-format, and labels.json)")
    parser.add_argument("--sessions", type=int, default=100, help="number of main sessions (default 100)")
    parser.add_argument("--seed", type=int, default=0, help="corpus seed (default 0)")
    parser.add_argument("--family", action="append", choices=sorted(FAMILIES), help="only these families (repeatable)")
    parser.add_argument("--attack-share", type=float, default=0.2, help="share of attack sessions (default 0.2)")
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1), help="worker processes (default: up to 2; output does not depend on it)")
    parser.add_argument("--knob", action="append", default=[], metavar="KEY=VALUE",
                        help="override a knob in every family that has it, e.g. stealth=4 or chain_length=40 (value read as JSON if it parses)")
    parser.add_argument("--agent-format", action="append", default=[], metavar="FORMAT=SHARE",
                        help="share of sessions whose agent side is written as codex (codex/sessions/...) or otel (otel/*.jsonl) "
                             "instead of Claude Code transcripts, e.g. codex=0.3 (repeatable; default: all Claude Code)")
    parser.add_argument("--overwrite", action="store_true", help="write into a folder that already holds a corpus")
    args = parser.parse_args(argv)
    if not 0.0 <= args.attack_share <= 1.0:
        parser.error("--attack-share must be between 0 and 1")
    if (args.out / "labels.json").exists() and not args.overwrite:
        # A second corpus written over the first would mix their files under one labels.json.
        parser.error(f"{args.out} already holds a corpus (labels.json); pass --overwrite or choose another folder")
    overrides = {}
    for item in args.knob:
        key, sep, value = item.partition("=")
        if not sep or not key:
            parser.error(f"--knob takes KEY=VALUE, not {item!r}")
        try:
            overrides[key] = json.loads(value)
        except json.JSONDecodeError:
            overrides[key] = value  # a bare word: a string knob such as template_family=ledger
    summary = simulate(args.out, args.sessions, args.seed, families=args.family, attack_share=args.attack_share, jobs=args.jobs,
                       knob_overrides=overrides or None, agent_formats=parse_shares(parser, args.agent_format))
    print(f"{summary.sessions} sessions ({summary.attacks} attacks), {summary.bytes_written / 1e6:.1f} MB in {summary.seconds:.1f} s -> {summary.labels_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
