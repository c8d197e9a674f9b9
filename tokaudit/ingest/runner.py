"""Ingest: find log files, read what is new in each, and load it into the store.

Per file, one of:

* **unchanged** — same size and mtime as last time: skipped by a stat, nothing read;
* **new** — never seen: sniffed, parsed from byte 0;
* **grown** — same head bytes, larger: parsed from the stored byte offset with the
  parser state saved last time, so a live log is read once, in pieces;
* **replaced** — head changed or file shrank, or read by an older revision of its
  format's parser (``ingest.parser_revision``): its old rows are deleted and it is
  parsed again from byte 0;
* whole-document formats (a trajectory that is one JSON value, ``WHOLE_FILE``
  in the format module) cannot be resumed mid-way: a changed one is replaced.
  Their unit of line accounting is the document: one "line" per file;
* **not a log** — a ``.json`` file no format recognises (log folders hold other
  JSON too): counted in the summary, nothing stored, looked at again next run;
* **failed** — cannot be opened or its format is not recognised: recorded as a
  file-level problem (line 0), the run goes on, and the next run tries it again.

Each file's rows land in one transaction (several files may share one, so a
crash loses none of a file's rows or all of them). Re-running changes nothing;
appending lines adds exactly those.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tokaudit.config import DEFAULT_MAX_LINE_BYTES
from tokaudit.errors import UnknownFormatError
from tokaudit.ingest import REVISION_KEY, SNIFF_BYTES, get_format, parser_revision, sniff_format
from tokaudit.ingest.base import Line, ParseResult, Problem
from tokaudit.ingest.discover import Discovery, resolve_files
from tokaudit.ingest.reader import COMPRESSED_SUFFIX, CompressedLog, ReadState, iter_lines, line_separator, logical_path, open_log
from tokaudit.ingest.summary import IngestSummary
from tokaudit.redact import excerpt

# Commit after this many files or rows, whichever comes first: one transaction
# per file costs an fsync each, which dominates on folders of small files.
GROUP_FILES = 200
GROUP_ROWS = 250_000
WORKER_CHUNK_FILES = 25
WORKER_CHUNK_BYTES = 16 * 1024 * 1024
# A file with one of these suffixes that no format recognises is skipped as not a log (counted, not a
# problem): JSON documents sit beside logs everywhere. Other unrecognised files are problems.
NOT_A_LOG_SUFFIXES = (".json",)
# Token counts under OpenTelemetry's GenAI or OpenInference names: a file holding them is model usage.
_GENAI_KEYS = re.compile(rb'"(gen_ai\.usage\.[a-z_.]+|llm\.token_count\.[a-z_.]+)"')
# A whole-document log (WHOLE_FILE formats) is decoded in one piece; bigger ones are refused.
MAX_DOCUMENT_BYTES = 512 * 1024 * 1024
MAX_SUMMARY_PROBLEMS = 1000  # all problems are stored; the summary lists the first ones

if TYPE_CHECKING:
    from tokaudit.store.engine import Store


@dataclass
class FileWork:
    """What to do with one file, decided from a stat and the stored source row."""

    path: str
    kind: str  # new | grown | replaced
    size_bytes: int
    mtime_ns: int
    format: str | None = None
    source_id: int | None = None
    start_offset: int = 0
    start_line_no: int = 1
    state: dict[str, Any] | None = None

    @property
    def new_bytes(self) -> int:
        """Bytes this run has to read (from the start offset to the end of the file)."""
        return self.size_bytes - self.start_offset


@dataclass
class FileOutcome:
    """A parsed file (or the reason it could not be parsed), ready to be written."""

    work: FileWork
    format: str
    head_bytes: int = 0
    head_sha256: str = ""
    end_offset: int = 0
    next_line_no: int = 1
    pending_bytes: int = 0
    result: ParseResult = field(default_factory=ParseResult)
    failed: bool = False
    not_a_log: bool = False  # an unrecognised .json file: counted, nothing stored
    format_doubt: str | None = None  # why a forced --format looks wrong for this file
    # Row counts, kept when the rows themselves move into Arrow tables (store.load.build_batch).
    n_sessions: int = 0
    n_llm_calls: int = 0
    n_tool_calls: int = 0


# --- parsing one file (pure apart from reading the file; runs in worker processes) -----------------


def _head_hash(f, length: int) -> str:
    f.seek(0)
    return hashlib.sha256(f.read(length)).hexdigest()


def parse_file(work: FileWork, forced_format: str | None, max_line_bytes: int, final: bool = False) -> FileOutcome:
    """Read ``work.path`` from its start offset and parse the complete lines (``final``: the file is
    finished, so a last line without its newline is read too instead of being left for the next run)."""
    try:
        f = open_log(work.path)
    except OSError as exc:
        return _failed(work, "unreadable-file", f"cannot open file: {exc.strerror or exc}")
    # A compressed log is an archive: finished, so its last line is read even without a newline.
    compressed = isinstance(f, CompressedLog)
    path = logical_path(work.path)
    with f:
        try:
            head = f.read(SNIFF_BYTES)
            if compressed and f.damage is not None and not head:
                return _failed(work, "unreadable-file", f"cannot decompress: {f.damage}")
            fmt = forced_format or work.format or sniff_format(head)
            if fmt is None:
                if (encoding := _wide_encoding(head)) is not None:
                    return _failed(
                        work, "unsupported-encoding",
                        f"the file is {encoding} text; tokaudit reads UTF-8 logs "
                        f"(convert it first: iconv -f {encoding} -t UTF-8 FILE > FILE.utf8.jsonl)",
                    )
                usage_like = _GENAI_KEYS.search(head) is not None
                if path.endswith(NOT_A_LOG_SUFFIXES) and work.source_id is None and not usage_like:
                    # Log folders hold other JSON too (configs, reports, metadata): not a problem, counted.
                    return FileOutcome(work=work, format="unknown", not_a_log=True)
                if usage_like:
                    # Model usage in a shape no format reads (a Jaeger or Zipkin export of the spans, say): never silent.
                    return _failed(work, "unknown-format", "holds GenAI usage attributes but is not a trace export tokaudit reads "
                                   "(OTLP JSON with resourceSpans, or a console exporter's spans): export it over OTLP, or write "
                                   "the generic format (tokaudit schema generic)")
                return _failed(work, "unknown-format", "not a log format tokaudit knows (use --format to force one)")
            module = get_format(fmt)
            state = work.state
            if state is None and hasattr(module, "sidecar_path"):
                state = _sidecar_state(module.sidecar_path(path))
            read = ReadState()
            if getattr(module, "WHOLE_FILE", False):
                lines = _whole_document(f, work, read)
                if lines is None:
                    return _failed(work, "file-too-large", f"a {fmt} document over {MAX_DOCUMENT_BYTES} bytes is not read")
            else:
                lines = iter_lines(
                    f, start_offset=work.start_offset, start_line_no=work.start_line_no, max_line_bytes=max_line_bytes, state=read,
                    final=final or compressed, newline=line_separator(head),
                )
            result = module.parse(lines, path=path, state=state)
            head_len = min(len(head), read.end_offset)
            outcome = FileOutcome(
                work=work,
                format=fmt,
                head_bytes=head_len,
                head_sha256=hashlib.sha256(head[:head_len]).hexdigest(),
                end_offset=read.end_offset,
                next_line_no=read.next_line_no,
                pending_bytes=read.pending_bytes,
                result=result,
            )
        except OSError as exc:
            return _failed(work, "unreadable-file", f"read failed: {exc.strerror or exc}")
    if compressed and f.damage is not None:
        message = f"the compressed file ends early or is corrupt ({f.damage}): whatever followed line {read.next_line_no - 1:,} is lost"
        result.problems.append(Problem(read.next_line_no, read.end_offset, "corrupt-compressed-file", message, None))
    skip_rule = getattr(module, "oversize_skip_rule", None)
    for line_no, offset, length, first_bytes in read.oversize:
        rule = skip_rule(first_bytes) if skip_rule else None
        if rule is not None:
            # A line the parser would skip anyway (e.g. a huge file-history snapshot): not a problem.
            result.skipped[rule] += 1
            continue
        message = f"line of {length} bytes is over the {max_line_bytes}-byte limit (max_line_bytes)"
        result.problems.append(Problem(line_no, offset, "line-too-long", message, excerpt(first_bytes)))
    result.problems.sort(key=lambda p: p.line_no)
    if forced_format and result.lines_read and not result.lines_ok:
        sniffed = sniff_format(head)
        if sniffed != forced_format:
            looks = f"it looks like a {sniffed} log" if sniffed else "no format recognises its head"
            outcome.format_doubt = f"--format {forced_format} used none of its {result.lines_read:,} lines; {looks}"
    return outcome


def _wide_encoding(head: bytes) -> str | None:
    """``UTF-16`` or ``UTF-32`` when the head is text in a wide encoding (a byte-order mark, or the NUL
    bytes of wide ASCII), which no format sniffs; None otherwise."""
    if head.startswith((b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")):
        return "UTF-32"
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "UTF-16"
    sample = head[:64]
    if len(sample) >= 8 and sample.count(0) * 4 >= len(sample):
        return "UTF-32" if sample.count(0) * 4 >= len(sample) * 3 else "UTF-16"
    return None


def _whole_document(f, work: FileWork, read: ReadState) -> list[Line] | None:
    """The whole file as one line (a document format), or None when it is over the size limit."""
    f.seek(0)
    data = f.read(MAX_DOCUMENT_BYTES + 1)
    if len(data) > MAX_DOCUMENT_BYTES:
        return None
    read.end_offset, read.next_line_no = len(data), 2
    return [Line(1, 0, data)] if data.strip() else []


SIDECAR_MAX_BYTES = 64 * 1024


def _sidecar_state(path: str | None) -> dict[str, Any] | None:
    """Initial parser state from a small metadata file written beside a log (bounded; absent is fine)."""
    if path is None:
        return None
    try:
        with open(path, "rb") as f:
            data = f.read(SIDECAR_MAX_BYTES + 1)
        meta = json.loads(data) if len(data) <= SIDECAR_MAX_BYTES else None
    except (OSError, ValueError):
        return None  # a missing or unreadable sidecar only loses the label it would give
    return {"sidecar": meta} if isinstance(meta, dict) else None


def _failed(work: FileWork, kind: str, message: str) -> FileOutcome:
    outcome = FileOutcome(work=work, format=work.format or "unknown", failed=True)
    outcome.result.problems.append(Problem(0, 0, kind, message, None))
    return outcome


def _parse_chunk(works: Sequence[FileWork], forced_format: str | None, max_line_bytes: int, final: bool):
    """Worker-process entry: parse a chunk of files and hand back one Arrow batch (cheap to pickle)."""
    from tokaudit.store.load import build_batch

    return build_batch([parse_file(w, forced_format, max_line_bytes, final) for w in works])


# --- the run -----------------------------------------------------------------------------------


def _whole_file(fmt: str) -> bool:
    try:
        return getattr(get_format(fmt), "WHOLE_FILE", False)
    except UnknownFormatError:
        return False  # a format this tokaudit no longer knows: read it again from the start


def plan(store: Store, files: Sequence[str], summary: IngestSummary, final: bool = False) -> list[FileWork]:
    """Decide, per file, whether it is unchanged, new, grown or replaced."""
    known = {
        row[0]: row
        for row in store.duck.execute(
            "SELECT path, source_id, format, size_bytes, mtime_ns, head_bytes, head_sha256, byte_offset, parser_state, lines_read, "
            f"coalesce(TRY_CAST(json_extract_string(parser_state, '$.{REVISION_KEY}') AS INTEGER), 1) "
            "FROM sources"
        ).fetchall()
    }
    works = []
    for path in files:
        try:
            st = os.stat(path)
        except OSError:
            summary.missing_paths.append(path)
            continue
        row = known.get(path)
        if row is None:
            works.append(FileWork(path, "new", st.st_size, st.st_mtime_ns))
            continue
        _, source_id, fmt, size, mtime_ns, head_bytes, head_sha, offset, state, lines_read, revision = row
        # Read by an older parser of its format: read again whole, changed or not.
        reparse = fmt != "unknown" and revision != parser_revision(fmt)
        summary.files_reparsed += reparse
        # A file that failed last time (unreadable, unknown format) is tried again on every run:
        # a chmod does not change its mtime, and it must not stay silently skipped.
        compressed = path.endswith(COMPRESSED_SUFFIX)
        # A last line left without its newline, now to be read (an archive's offset counts decompressed bytes,
        # and its last line was read the first time: it is always final).
        held_back = final and not compressed and offset < size
        if fmt != "unknown" and size == st.st_size and mtime_ns == st.st_mtime_ns and not held_back and not reparse:
            summary.files_unchanged += 1
            continue
        kind = "grown"
        # A changed compressed file is read again whole: its offsets count decompressed bytes.
        if reparse or fmt == "unknown" or st.st_size < offset or _whole_file(fmt) or compressed:
            kind = "replaced"
        else:
            try:
                with open(path, "rb") as f:
                    if _head_hash(f, head_bytes) != head_sha:
                        kind = "replaced"
            except OSError:
                kind = "replaced"  # parse_file will record why it cannot be read
        if kind == "grown":
            works.append(
                FileWork(path, kind, st.st_size, st.st_mtime_ns, fmt, source_id, offset, lines_read + 1, _parser_state(state))
            )
        else:
            works.append(FileWork(path, kind, st.st_size, st.st_mtime_ns, None, source_id))
    return works


def _parser_state(saved: str) -> dict[str, Any]:
    """A grown file's parser state as its parser left it (without the revision the store keeps beside it)."""
    state = json.loads(saved)
    state.pop(REVISION_KEY, None)
    return state


def ingest_paths(
    store: Store,
    paths: Sequence[str | os.PathLike[str]] | None = None,
    *,
    forced_format: str | None = None,
    workers: int | None = None,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    final: bool = False,
    on_progress: Callable[[int, int], None] | None = None,
) -> IngestSummary:
    """Ingest log files and folders (default: the agents' own log folders) into ``store``.

    ``workers`` is the number of parsing processes; None picks one per CPU
    core (at most 4), used when there are enough files to pay for starting them.
    ``final`` says the files are finished: a last line without its newline is
    read, not left for the next run (see ``reader``).
    Returns a summary of what was read. Raises :class:`NoInputError` when
    there is nothing to read at all.
    """
    if forced_format is not None:
        get_format(forced_format)
    return ingest_files(
        store, resolve_files(paths), forced_format=forced_format, workers=workers, max_line_bytes=max_line_bytes, final=final,
        on_progress=on_progress,
    )


def ingest_files(
    store: Store,
    found: Discovery,
    *,
    forced_format: str | None = None,
    workers: int | None = None,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    final: bool = False,
    on_progress: Callable[[int, int], None] | None = None,
) -> IngestSummary:
    """Ingest the files found by ``discover.resolve_files``."""
    files = found.files
    summary = IngestSummary.of_discovery(found)
    works = plan(store, files, summary, final)
    done = summary.files_unchanged
    if on_progress:
        on_progress(done, len(files))
    if workers is None:
        workers = min(os.cpu_count() or 1, 4)
    if works:
        from tokaudit.store.load import use_malloc_for_arrow, write_batch

        arrow_pool = use_malloc_for_arrow()
        # DuckDB checkpoints (rewrites the database file) whenever its WAL passes 16 MB;
        # during a bulk load that happens dozens of times. Commits stay durable in the WAL,
        # and one checkpoint at the end folds them in. Its buffer cache is capped so the
        # main process plus the parsing workers stay within the memory budget: rows appended
        # beyond the cap go to DuckDB's temporary file until the checkpoint, which the cold
        # ingest of 1 GiB of logs did not measurably pay for (benchmarks/results-ingest.md).
        # A throw-away in-memory store keeps the larger cap: its rows have nowhere else to live.
        store.duck.execute("SET checkpoint_threshold = '1GB'")
        store.duck.execute(f"SET memory_limit = '{'256MB' if store.in_memory else '64MB'}'")
    for batch in _batches(works, forced_format, max_line_bytes, workers, final):
        if batch.outcomes:
            write_batch(store, batch)
        _count(summary, batch.outcomes + batch.not_logs)
        done += len(batch.outcomes) + len(batch.not_logs)
        if on_progress:
            on_progress(done, len(files))
    if works:
        from tokaudit.ingest.link import link_tool_calls
        from tokaudit.ingest.traces import join_split_traces

        with store.transaction():
            join_split_traces(store)
            summary.tool_calls_linked = link_tool_calls(store)
        store.duck.execute("CHECKPOINT")
        store.duck.execute("RESET checkpoint_threshold")
        store.duck.execute("RESET memory_limit")
        use_malloc_for_arrow(arrow_pool)
    return summary


def _batches(works: list[FileWork], forced_format: str | None, max_line_bytes: int, workers: int, final: bool) -> Iterator[Any]:
    """Parsed files in batches of whole files, largest first; in worker processes (in order, a few
    chunks ahead) when there are several workers and at least two chunks of files for them."""
    if not works:
        return  # nothing to parse: do not pay for importing pyarrow and SQLAlchemy
    from tokaudit.store.load import build_batch

    if workers <= 1 or len(works) < 2 * WORKER_CHUNK_FILES:
        pending: list[FileOutcome] = []
        rows = 0
        for work in _largest_first(works):
            outcome = parse_file(work, forced_format, max_line_bytes, final)
            pending.append(outcome)
            r = outcome.result
            rows += len(r.llm_calls) + len(r.tool_calls) + len(r.problems)
            if len(pending) >= GROUP_FILES or rows >= GROUP_ROWS:
                yield build_batch(pending)
                pending, rows = [], 0
        if pending:
            yield build_batch(pending)
        return
    from collections import deque
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=workers, initializer=_start_worker, initargs=(os.getpid(),)) as pool:
        # A few chunks in flight, so parsed-but-unwritten rows stay bounded in memory: twice the workers,
        # so each has a chunk to parse while this process writes. Written in order (the same source ids
        # whatever the number of workers); the largest files come first, so the others rarely wait on one.
        in_flight: deque = deque()
        for chunk in _chunks(works):
            in_flight.append(pool.submit(_parse_chunk, chunk, forced_format, max_line_bytes, final))
            if len(in_flight) >= 2 * workers:
                yield in_flight.popleft().result()
        while in_flight:
            yield in_flight.popleft().result()


def _largest_first(works: list[FileWork]) -> list[FileWork]:
    """Files by the bytes left to read, most first (ties in the order given): the order they are written in."""
    return sorted(works, key=lambda w: w.new_bytes, reverse=True)


def _chunks(works: list[FileWork]) -> list[list[FileWork]]:
    """Files grouped for the workers, largest first (so the long-tailed biggest files do not finish last),
    each chunk at most ``WORKER_CHUNK_FILES`` files or about ``WORKER_CHUNK_BYTES`` of new bytes."""
    chunks: list[list[FileWork]] = []
    chunk: list[FileWork] = []
    size = 0
    for work in _largest_first(works):
        if chunk and (len(chunk) >= WORKER_CHUNK_FILES or size + work.new_bytes > WORKER_CHUNK_BYTES):
            chunks.append(chunk)
            chunk, size = [], 0
        chunk.append(work)
        size += work.new_bytes
    if chunk:
        chunks.append(chunk)
    return chunks


def _start_worker(parent_pid: int) -> None:
    """Worker start-up: Arrow batches built with malloc (as in the parent, which a forked worker
    inherits but a spawned one does not), and an exit when the parent is gone."""
    from tokaudit.store.load import use_malloc_for_arrow

    use_malloc_for_arrow()
    _exit_with_parent(parent_pid)


def _exit_with_parent(parent_pid: int) -> None:
    """Worker start-up: exit when the ingest that started this worker is gone.

    A worker waits for its next chunk on a pipe it holds both ends of, so a parent
    killed with SIGKILL would leave it waiting forever; it checks once a second instead.
    """

    def watch() -> None:
        while os.getppid() == parent_pid:
            time.sleep(1.0)
        os._exit(1)

    threading.Thread(target=watch, name="tokaudit-parent-watch", daemon=True).start()


def _count(summary: IngestSummary, outcomes: list[FileOutcome]) -> None:
    for o in outcomes:
        s, r = summary, o.result
        if o.not_a_log:
            s.files_not_a_log += 1
            continue
        if o.failed:
            s.files_failed += 1
        else:
            setattr(s, f"files_{o.work.kind}", getattr(s, f"files_{o.work.kind}") + 1)
        s.lines_read += r.lines_read
        s.lines_ok += r.lines_ok
        s.lines_skipped += r.lines_skipped
        s.lines_problem += r.lines_problem
        s.lines_pending += 1 if o.pending_bytes else 0
        s.skipped_by_rule.update(r.skipped)
        if o.format_doubt:
            s.format_doubts.append((o.work.path, o.format_doubt))
        s.sessions += o.n_sessions
        s.llm_calls += o.n_llm_calls
        s.tool_calls += o.n_tool_calls
        room = MAX_SUMMARY_PROBLEMS - len(s.problems)
        s.problems.extend((o.work.path, p) for p in r.problems[: max(0, room)])
