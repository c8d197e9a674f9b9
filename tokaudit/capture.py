"""Recording an MCP stdio server's traffic, losslessly, as an ``mcp-jsonrpc`` transcript.

Claude Desktop's logs truncate large bodies and no MCP client writes a
complete transcript, so the way to audit a server exactly is to sit between
the client and the server: ``record_stdio`` starts the server command, relays
bytes both ways unchanged (the client talks to us exactly as it would to the
server), and appends every complete line it sees to a transcript, one
envelope per line (see ``tokaudit.ingest.mcp_jsonrpc``)::

    {"timestamp":"2026-03-01T09:44:53.641Z","direction":"client_to_server","server":"files","connection":"files-1a2b3c4d","message":{...}}

Only what is needed to write that is done with a line: it is parsed as JSON
to know whether it can be embedded, and embedded byte for byte (sizes stay
exact). The recorder never acts on a message. Bounds:

* a line longer than ``max_message_bytes`` is still relayed whole, but
  recorded as ``{"omitted_bytes": N, "head": "<first 1 KiB>", ...}``;
* a line that is not JSON (a server printing to stdout by mistake) is recorded
  as ``{"raw": "<first 1 KiB>", "raw_bytes": N, ...}``;
* a connection-opened and a connection-closed record (with the server's exit
  code) frame each run, so the parser knows when an unanswered request will
  never be answered. The server's command line is not recorded (it may hold
  secrets); its stderr passes through to ours unrecorded.

Several recorders (one per server) may append to the same transcript: each
record is one ``write`` on a file opened for appending.

Run it as ``python -m tokaudit.capture --server NAME --transcript PATH -- COMMAND [ARGS...]``
in place of the server's command in the client's configuration.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import threading
import uuid
from collections.abc import Sequence
from datetime import datetime, timezone
from types import FrameType

MAX_MESSAGE_BYTES = 8 * 1024 * 1024  # below ingest's default 10 MiB line limit, envelope included
HEAD_CHARS = 1024  # kept of an omitted or non-JSON line
READ_BYTES = 64 * 1024
MAX_NAME_CHARS = 200


def _now_iso() -> str:
    now = datetime.now(timezone.utc)
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"


class _Transcript:
    """Appends envelope records to the transcript file, one ``write`` each (safe across threads and processes)."""

    def __init__(self, path: str | os.PathLike[str], server: str, connection: str) -> None:
        self._fd = os.open(os.fspath(path), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        self._lock = threading.Lock()
        # The fixed part of every record, encoded once.
        self._fields = f'"server":{json.dumps(server)},"connection":{json.dumps(connection)}'.encode()

    def write(self, direction: str | None, body: bytes) -> None:
        """One record: ``body`` is the rest of the object after the common fields (starts with ``,``)."""
        head = b'{"timestamp":"' + _now_iso().encode() + b'",'
        if direction:
            head += b'"direction":"' + direction.encode() + b'",'
        record = head + self._fields + body + b"}\n"
        with self._lock:
            if self._fd >= 0:  # a client line still arriving after the server exited and the file was closed is dropped
                os.write(self._fd, record)

    def close(self) -> None:
        with self._lock:
            os.close(self._fd)
            self._fd = -1


class _LineRecorder:
    """Splits one direction's byte stream into lines and records each (bounded)."""

    def __init__(self, transcript: _Transcript, direction: str, max_message_bytes: int) -> None:
        self._transcript = transcript
        self._direction = direction
        self._max = max_message_bytes
        self._buf = bytearray()
        self._dropped = 0  # bytes of the current line past the bound (not kept)

    def feed(self, chunk: bytes) -> None:
        start = 0
        while True:
            cut = chunk.find(b"\n", start)
            if cut < 0:
                self._keep(chunk[start:])
                return
            self._keep(chunk[start:cut])
            self._flush()
            start = cut + 1

    def finish(self) -> None:
        """The stream ended: record an unterminated last line, if any."""
        if self._buf or self._dropped:
            self._flush()

    def _keep(self, data: bytes) -> None:
        # Enough to tell an over-long line (max + 1) and to keep its head, never more.
        room = max(self._max + 1, HEAD_CHARS * 4) - len(self._buf)
        if room > 0:
            self._buf += data[:room]
            self._dropped += max(0, len(data) - room)
        else:
            self._dropped += len(data)

    def _flush(self) -> None:
        line = bytes(self._buf)
        size = len(line) + self._dropped
        self._buf.clear()
        self._dropped = 0
        if line.endswith(b"\r"):
            line, size = line[:-1], size - 1
        if not line.strip():
            return
        if size > self._max:
            head = line[:HEAD_CHARS * 4].decode("utf-8", "replace")[:HEAD_CHARS]
            self._transcript.write(self._direction, b',"omitted_bytes":%d,"head":%s' % (size, json.dumps(head).encode()))
            return
        try:
            json.loads(line)
        except ValueError:  # not JSON (or not UTF-8): kept as a bounded excerpt
            head = line[:HEAD_CHARS * 4].decode("utf-8", "replace")[:HEAD_CHARS]
            self._transcript.write(self._direction, b',"raw_bytes":%d,"raw":%s' % (size, json.dumps(head).encode()))
            return
        # Valid JSON without a newline: embedded verbatim, so every size measured later is exact.
        self._transcript.write(self._direction, b',"message":' + line)


def _pump(read_fd: int, write_fd: int | None, recorder: _LineRecorder, on_eof) -> None:
    """Copy ``read_fd`` to ``write_fd`` as bytes arrive, recording lines; call ``on_eof`` at the end."""
    try:
        while True:
            try:
                chunk = os.read(read_fd, READ_BYTES)
            except OSError:
                break
            if not chunk:
                break
            # Record before forwarding: once the other side has a request it may answer at once, and
            # the transcript must show the request first.
            recorder.feed(chunk)
            if write_fd is not None:
                try:
                    _write_all(write_fd, chunk)
                except OSError:
                    write_fd = None  # the other side went away: keep recording what arrives
        recorder.finish()
    finally:
        on_eof()


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def record_stdio(
    command: Sequence[str],
    transcript_path: str | os.PathLike[str],
    server_name: str,
    *,
    max_message_bytes: int = MAX_MESSAGE_BYTES,
    stdin_fd: int | None = None,
    stdout_fd: int | None = None,
) -> int:
    """Run an MCP stdio server, relaying our stdin/stdout to it and recording every line; return its exit code.

    ``stdin_fd``/``stdout_fd`` default to this process's standard input and
    output (the client's end of the pipe).
    """
    if not command:
        raise ValueError("no server command given")
    server = server_name[:MAX_NAME_CHARS]
    connection = f"{server}-{uuid.uuid4().hex[:12]}"
    in_fd = sys.stdin.fileno() if stdin_fd is None else stdin_fd
    out_fd = sys.stdout.fileno() if stdout_fd is None else stdout_fd
    transcript = _Transcript(transcript_path, server, connection)
    transcript.write(None, b',"event":"connection-opened"')
    proc = subprocess.Popen(list(command), stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    assert proc.stdin is not None and proc.stdout is not None

    def close_server_stdin() -> None:
        try:
            proc.stdin.close()
        except OSError:
            pass  # already closed by the server's exit

    to_server = threading.Thread(
        target=_pump,
        args=(in_fd, proc.stdin.fileno(), _LineRecorder(transcript, "client_to_server", max_message_bytes), close_server_stdin),
        daemon=True,  # blocked on the client's stdin: must not keep us alive once the server is gone
    )
    to_client = threading.Thread(
        target=_pump,
        args=(proc.stdout.fileno(), out_fd, _LineRecorder(transcript, "server_to_client", max_message_bytes), lambda: None),
    )

    def stop(signum: int, _frame: FrameType | None) -> None:
        # The client is shutting us down (MCP's stdio shutdown escalates to SIGTERM): pass it on.
        if proc.poll() is None:
            proc.send_signal(signum)

    previous = {}
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGTERM, signal.SIGINT):
            previous[sig] = signal.signal(sig, stop)
    to_server.start()
    to_client.start()
    try:
        code = proc.wait()
        to_client.join()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        transcript.write(None, b',"event":"connection-closed","exit_code":%d' % (proc.returncode if proc.returncode is not None else -1))
        transcript.close()
    return code


RECORD_HELP = """Run an MCP stdio server and record its JSON-RPC traffic to a transcript.

Put this in place of the server's command in your MCP client's configuration:
the client talks to the server through it unchanged, and every message is
appended to TRANSCRIPT (JSON lines, format mcp-jsonrpc) with a timestamp,
its direction and the server's name. Ingest the transcript with
`tokaudit ingest TRANSCRIPT`. Messages over --max-message-bytes are relayed
whole but recorded as their size and first KiB. Exits with the server's code."""


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tokaudit.capture", description=RECORD_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--server", required=True, help="Name of the server, recorded on every message (e.g. filesystem).")
    parser.add_argument("--transcript", required=True, help="File to append the transcript to (.jsonl; created if missing).")
    parser.add_argument("--max-message-bytes", type=int, default=MAX_MESSAGE_BYTES, help="Record larger messages as their size and first KiB only.")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- then the server's command and arguments.")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the server's command after --")
    return record_stdio(command, args.transcript, args.server, max_message_bytes=args.max_message_bytes)


if __name__ == "__main__":
    sys.exit(main())
