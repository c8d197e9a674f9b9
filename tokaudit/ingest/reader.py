"""Reading a log file as bounded, numbered lines, from a byte offset.

Lines are split on ``\\n`` in fixed-size blocks, so memory stays bounded by the
block size plus ``max_line_bytes`` whatever the file holds. A line longer than
``max_line_bytes`` is not kept: it becomes a ``line-too-long`` problem and the
reader skips to the next newline. A last line without its newline is a line
still being written: it is left for the next run (``pending_bytes``), not
reported as a problem, unless the caller says the file is ``final`` (a one-shot
read of finished logs, as ``tokaudit gate`` makes), when it is read as a line.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

from tokaudit.ingest.base import BOM, Line

BLOCK_BYTES = 4 * 1024 * 1024


@dataclass
class ReadState:
    """Where reading stopped, filled in as the iterator runs."""

    end_offset: int = 0  # first byte after the last complete line
    next_line_no: int = 1
    pending_bytes: int = 0  # bytes of an unterminated last line, left for later
    oversize: list[tuple[int, int, int, bytes]] = None  # (line_no, offset, length, head) of over-long lines

    def __post_init__(self) -> None:
        if self.oversize is None:
            self.oversize = []


def iter_lines(
    f: BinaryIO, *, start_offset: int, start_line_no: int, max_line_bytes: int, state: ReadState, final: bool = False
) -> Iterator[Line]:
    """Yield complete lines of ``f`` from ``start_offset``; over-long lines go to ``state.oversize``."""
    f.seek(start_offset)
    offset = start_offset
    line_no = start_line_no
    buf = b""
    skipping: tuple[int, int, bytes] | None = None  # (line_no, offset, head) of an over-long line
    skipped_len = 0
    state.end_offset, state.next_line_no = offset, line_no
    while True:
        block = f.read(BLOCK_BYTES)
        if not block:
            break
        if skipping is not None:
            cut = block.find(b"\n")
            if cut < 0:
                skipped_len += len(block)
                continue
            skipped_len += cut
            state.oversize.append((skipping[0], skipping[1], skipped_len, skipping[2]))
            offset = skipping[1] + skipped_len + 1
            line_no += 1
            skipping = None
            block = block[cut + 1 :]
            state.end_offset, state.next_line_no = offset, line_no
        data = buf + block if buf else block
        if offset == 0 and data.startswith(BOM):
            # A byte-order mark opens the file, not its first line: the line starts after it.
            data, offset = data[len(BOM) :], len(BOM)
        parts = data.split(b"\n")
        buf = parts.pop()
        for part in parts:
            if len(part) > max_line_bytes:
                state.oversize.append((line_no, offset, len(part), part[:256]))
            else:
                yield Line(line_no, offset, part[:-1] if part.endswith(b"\r") else part)
            offset += len(part) + 1
            line_no += 1
        state.end_offset, state.next_line_no = offset, line_no
        if len(buf) > max_line_bytes:
            skipping = (line_no, offset, buf[:256])
            skipped_len = len(buf)
            buf = b""
    if final and skipping is not None:
        state.oversize.append((skipping[0], skipping[1], skipped_len, skipping[2]))
        state.end_offset, state.next_line_no = skipping[1] + skipped_len, line_no + 1
    elif final and buf:
        yield Line(line_no, offset, buf[:-1] if buf.endswith(b"\r") else buf)
        state.end_offset, state.next_line_no = offset + len(buf), line_no + 1
    elif skipping is not None:
        # An over-long line still being written: wait for its newline like any partial line.
        state.pending_bytes = skipped_len
    else:
        state.pending_bytes = len(buf)
