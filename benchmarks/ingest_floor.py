"""How fast could a Claude Code ingest be? Time each layer of the cold ingest on one core (not a test).

Usage: python benchmarks/ingest_floor.py FOLDER [--out results-ingest-floor.md]

Each stage adds one layer to the one before, over every ``*.jsonl`` under FOLDER, in one
process and warm page cache:

1. ``split``: read the files and split them into lines (``ingest.reader.iter_lines``);
2. ``decode``: plus msgspec's typed decode of every line (the Claude Code line struct);
3. ``parse``: plus everything the Claude Code parser does (``ingest.runner.parse_file``:
   dedup, sessions, tool calls with their argument skeletons, values and result traces);
4. ``arrow``: plus turning the rows into the Arrow tables the store loads (``store.load.build_batch``).

Beside them, DuckDB's own JSON reader scanning the same lines for the fields usage needs
(C++, on every core) — the speed a parser in compiled code could reach. The difference between
stages says what each layer costs per line and per tool call; the cold ingest's wall time is
about ``arrow`` divided by the cores plus the database writes.
"""

from __future__ import annotations

import argparse
import glob
import os
import time
from pathlib import Path


def _files(folder: str) -> list[str]:
    return sorted(glob.glob(os.path.join(folder, "**", "*.jsonl"), recursive=True))


def _split(files: list[str], decode) -> int:
    from tokaudit.ingest.reader import ReadState, iter_lines

    lines = 0
    for path in files:
        with open(path, "rb") as f:
            for line in iter_lines(f, start_offset=0, start_line_no=1, max_line_bytes=10 << 20, state=ReadState()):
                if decode is not None:
                    decode(line.data)
                lines += 1
    return lines


def _parse(files: list[str], arrow: bool) -> tuple[int, int]:
    from tokaudit.ingest.runner import FileWork, parse_file
    from tokaudit.store.load import build_batch

    tool_calls = lines = 0
    for i in range(0, len(files), 200):
        outcomes = [parse_file(FileWork(p, "new", os.path.getsize(p), 0), None, 10 << 20) for p in files[i : i + 200]]
        lines += sum(o.result.lines_read for o in outcomes)
        tool_calls += sum(len(o.result.tool_calls) for o in outcomes)
        if arrow:
            build_batch(outcomes)
    return lines, tool_calls


def _duckdb_scan(folder: str) -> float:
    import duckdb

    con = duckdb.connect()
    started = time.perf_counter()
    con.execute(
        """SELECT count(*), sum(m.usage.output_tokens) FROM (
              SELECT message AS m FROM read_json(?, format = 'newline_delimited', maximum_object_size = 20000000,
                columns = {type: 'VARCHAR', sessionId: 'VARCHAR', timestamp: 'VARCHAR', requestId: 'VARCHAR',
                            message: 'STRUCT(id VARCHAR, model VARCHAR, usage STRUCT(output_tokens BIGINT), content JSON)'}))""",
        [os.path.join(folder, "**", "*.jsonl")],
    ).fetchall()
    return time.perf_counter() - started


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folder")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    from tokaudit.ingest.claude_code import _decoder

    files = _files(args.folder)
    size_bytes = sum(os.path.getsize(p) for p in files)
    _split(files, None)  # warm the page cache
    rows = []
    started = time.perf_counter()
    lines = _split(files, None)
    rows.append(("split into lines", time.perf_counter() - started))
    started = time.perf_counter()
    _split(files, _decoder.decode)
    rows.append(("+ typed JSON decode (msgspec)", time.perf_counter() - started))
    started = time.perf_counter()
    _, tool_calls = _parse(files, arrow=False)
    rows.append(("+ the Claude Code parser (all its rows and features)", time.perf_counter() - started))
    started = time.perf_counter()
    _parse(files, arrow=True)
    rows.append(("+ Arrow tables for the store", time.perf_counter() - started))
    duck_s = _duckdb_scan(args.folder)
    out = [
        f"{len(files):,} files, {size_bytes:,} bytes, {lines:,} lines, {tool_calls:,} tool-call rows; one Python process, "
        f"{os.cpu_count()} cores on the machine.",
        "",
        "| stage (each adds to the one before) | wall (one core) | µs per line |",
        "|---|---:|---:|",
    ]
    out += [f"| {name} | {s:.2f} s | {s / lines * 1e6:.1f} |" for name, s in rows]
    out.append(f"| DuckDB's C++ JSON reader, same lines, usage fields (all cores) | {duck_s:.2f} s | {duck_s / lines * 1e6:.1f} |")
    text = "\n".join(out)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
