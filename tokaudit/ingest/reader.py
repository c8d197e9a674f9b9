"""Reading a log file as bounded, numbered lines, from a byte offset.

Lines are split on ``\\n`` in fixed-size blocks, so memory stays bounded by the
block size plus ``max_line_bytes`` whatever the file holds. A line longer than
``max_line_bytes`` is not kept: it becomes a ``line-too-long`` problem and the
reader skips to the next newline. A last line without its newline is a line
still being written: it is left for the next run (``pending_bytes``), not
reported as a problem, unless the caller says the file is ``final`` (a one-shot
read of finished logs, as ``tokaudit gate`` makes), when it is read as a line.

A file whose name ends in ``.gz`` (a rotated or archived log) is read as its
decompressed bytes (:func:`open_log`); offsets then count decompressed bytes.

Lines end in ``\\n`` or ``\\r\\n``; a file written with bare ``\\r`` line ends (old Mac
style) is split on ``\\r`` instead (:func:`line_separator` tells from its head).
"""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

from tokaudit.ingest.base import BOM, Line

BLOCK_BYTES = 4 * 1024 * 1024
COMPRESSED_SUFFIX = ".gz"
# What a truncated or corrupt gzip stream raises while it is read.
_DAMAGE = (EOFError, zlib.error, gzip.BadGzipFile)


def logical_path(path: str) -> str:
    """The log's name as its writer gave it: ``path`` without a ``.gz`` suffix a compressor added.

    Examples:
        >>> logical_path("/logs/rollout-1.jsonl.gz"), logical_path("/logs/a.jsonl")
        ('/logs/rollout-1.jsonl', '/logs/a.jsonl')
    """
    return path.removesuffix(COMPRESSED_SUFFIX)


class CompressedLog:
    """A gzip file read as its decompressed bytes.

    A stream that is cut short or corrupt ends the data instead of raising, so
    the lines before the damage are kept; ``damage`` then says what was wrong
    and the caller records it as a problem.
    """

    def __init__(self, path: str) -> None:
        self._f = gzip.open(path, "rb")
        self.damage: str | None = None

    def read(self, size: int = -1) -> bytes:
        # In small steps (read1): a plain read that meets the damage raises and drops the bytes it had
        # already decompressed.
        parts: list[bytes] = []
        want = size if size >= 0 else float("inf")
        while want > 0 and self.damage is None:
            try:
                part = self._f.read1(int(min(want, 1 << 16)))
            except _DAMAGE as exc:
                self._note(exc)
                break
            if not part:
                break
            parts.append(part)
            want -= len(part)
        return b"".join(parts)

    def seek(self, offset: int) -> int:
        # Reading again from before the damage is fine: it is met again, and noted again, at the same place.
        self.damage = None
        try:
            return self._f.seek(offset)
        except _DAMAGE as exc:
            self._note(exc)
            return offset

    def _note(self, exc: BaseException) -> None:
        self.damage = str(exc) or type(exc).__name__

    def close(self) -> None:
        self._f.close()

    def __enter__(self) -> CompressedLog:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def open_log(path: str) -> BinaryIO | CompressedLog:
    """Open a log file for reading bytes; a ``.gz`` file is decompressed as it is read."""
    return CompressedLog(path) if path.endswith(COMPRESSED_SUFFIX) else open(path, "rb")


def line_separator(head: bytes) -> bytes:
    """The byte that ends lines in a file starting with ``head``: ``\\n``, or ``\\r`` when the head has
    carriage returns and no line feed (JSON text never holds a raw ``\\r`` inside a string, so a bare one
    ends a line).

    Examples:
        >>> line_separator(b'{"a": 1}\\r\\n{"a": 2}'), line_separator(b'{"a": 1}\\r{"a": 2}\\r'), line_separator(b"{}")
        (b'\\n', b'\\r', b'\\n')
    """
    return b"\r" if b"\n" not in head and b"\r" in head else b"\n"


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
    f: BinaryIO, *, start_offset: int, start_line_no: int, max_line_bytes: int, state: ReadState, final: bool = False,
    newline: bytes = b"\n",
) -> Iterator[Line]:
    """Yield complete lines of ``f`` from ``start_offset``, split at ``newline`` (see :func:`line_separator`);
    over-long lines go to ``state.oversize``."""
    strip_cr = newline == b"\n"  # a \r\n line end leaves its \r on the line
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
            cut = block.find(newline)
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
        parts = data.split(newline)
        buf = parts.pop()
        for part in parts:
            if len(part) > max_line_bytes:
                state.oversize.append((line_no, offset, len(part), part[:256]))
            else:
                yield Line(line_no, offset, part[:-1] if strip_cr and part.endswith(b"\r") else part)
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
        yield Line(line_no, offset, buf[:-1] if strip_cr and buf.endswith(b"\r") else buf)
        state.end_offset, state.next_line_no = offset + len(buf), line_no + 1
    elif skipping is not None:
        # An over-long line still being written: wait for its newline like any partial line.
        state.pending_bytes = skipped_len
    else:
        state.pending_bytes = len(buf)
