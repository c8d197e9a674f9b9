"""The ``tokaudit`` command line: parse options, call one library function, print.

Exit codes (all commands): 0 success; 1 the command ran but found what it was
asked to fail on (``ingest --strict`` with problems); 2 usage, configuration or
database error; 3 no usable input.
"""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import date, datetime, timedelta
from typing import TYPE_CHECKING, Any

import click

from tokaudit import __version__
from tokaudit.errors import TokauditError
from tokaudit.redact import printable

if TYPE_CHECKING:
    from rich.console import Console

EXIT_FAIL = 1


class TokauditCommandError(click.ClickException):
    """A TokauditError shown as ``Error: message`` plus its hint, with the error's exit code."""

    def __init__(self, error: TokauditError) -> None:
        # Messages quote ids and paths from the logs: their control characters are shown as escapes.
        text = printable(error.message)
        if error.hint:
            text += f"\nHint: {printable(error.hint)}"
        super().__init__(text)
        self.exit_code = error.exit_code


def handle_errors(fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except TokauditError as exc:
            raise TokauditCommandError(exc) from exc

    return wrapper


def store_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """--db, --config and --wait, shared by every command that opens the store."""
    fn = click.option("--wait", "wait_s", type=float, default=0.0, metavar="SECONDS", help="Wait this long for another tokaudit process to release the database.")(fn)
    fn = click.option("--config", "config_path", type=click.Path(dir_okay=False), help="Config file (default: ./tokaudit.toml or [tool.tokaudit] in ./pyproject.toml; env TOKAUDIT_CONFIG).")(fn)
    fn = click.option("--db", help="Database file or duckdb:// URL (default ./tokaudit.duckdb; env TOKAUDIT_DB).")(fn)
    return fn


def _console() -> Console:
    """stdout console; when piped, wide enough that tables are not folded into narrow columns."""
    from rich.console import Console

    console = Console()
    return console if console.is_terminal else Console(width=200)


def upgrade_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    """--no-upgrade, for commands that open the store to read or load data."""
    return click.option("--no-upgrade", is_flag=True, help="Refuse to open a database from an older tokaudit instead of migrating it.")(fn)


def _open(db: str | None, config_path: str | None, wait_s: float, no_upgrade: bool = False):
    """The store of a command that reads what was ingested: a database file that is not there is an
    error (a mistyped --db must not quietly create an empty database and report nothing)."""
    from tokaudit.config import load_config, resolve_db
    from tokaudit.errors import NoInputError
    from tokaudit.store.engine import open_store
    from tokaudit.store.urls import missing_db_file

    config = load_config(config_path)
    target = resolve_db(db, config)
    missing = missing_db_file(target)
    if missing is not None:
        raise NoInputError(
            f"no database at {missing}", hint="run `tokaudit ingest` first, or point --db (or TOKAUDIT_DB) at the database you ingested into"
        )
    return open_store(target, wait_s=wait_s, upgrade=not no_upgrade), config


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="tokaudit")
def cli() -> None:
    """Audit where AI agents spend their tokens.

    Ingest agent logs (Claude Code, Codex CLI) into a local DuckDB database,
    then break down exact token usage and cost. Everything runs offline.

    \b
    Quick start:
      tokaudit ingest                 # your default Claude Code / Codex log folders
      tokaudit usage --by day
    """


@cli.command(name="ingest")
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--format", "forced_format", help="Force a log format instead of sniffing each file (see `tokaudit formats`).")
@click.option("--workers", type=click.IntRange(1, 64), default=None, help="Parsing processes (default: one per core, up to 4, when there are 50+ files to read).")
@click.option("--max-line-bytes", type=click.IntRange(1024), default=None, help="Lines longer than this are recorded as problems (default 10 MiB).")
@click.option("--strict", is_flag=True, help="Exit 1 if any line or file could not be used.")
@click.option("--final", is_flag=True, help="The logs are finished: read a last line that has no newline instead of leaving it for the next run.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar and no summary.")
@store_options
@upgrade_option
@handle_errors
def ingest_command(paths, forced_format, workers, max_line_bytes, strict, final, as_json, quiet, db, config_path, wait_s, no_upgrade):
    """Load new log lines from PATHS (files or folders) into the database.

    With no PATHS, reads the default locations: $CLAUDE_CONFIG_DIR or
    ~/.claude/projects and ~/.config/claude/projects, and $CODEX_HOME/sessions
    or ~/.codex/sessions. Unchanged files are skipped, grown files are read
    from where the last run stopped, rewritten files are re-read.

    \b
    Example:
      tokaudit ingest ~/.claude/projects --workers 2
    """
    from tokaudit.config import load_config, resolve_db
    from tokaudit.ingest.run import ingest_db

    config = load_config(config_path)
    options = dict(
        forced_format=forced_format,
        workers=workers,
        max_line_bytes=max_line_bytes or config.max_line_bytes,
        final=final,
        wait_s=wait_s,
        upgrade=not no_upgrade,
    )
    with _progress("ingesting", enabled=not quiet and not as_json) as on_progress:
        summary = ingest_db(resolve_db(db, config), paths, **options, on_progress=on_progress)
    if as_json:
        click.echo(json.dumps(summary.to_dict(), indent=2))
    elif not quiet:
        from tokaudit.ingest.summary import summary_lines as ingest_summary_lines

        click.echo("\n".join(ingest_summary_lines(summary)))
        if summary.problems:
            from tokaudit.report.terminal import render_ingest_problems

            render_ingest_problems(summary, _console())
    if strict and summary.incomplete:
        sys.exit(EXIT_FAIL)


def _parse_date(ctx: click.Context, param: click.Parameter, value: str | None) -> date | None:
    if value is None:
        return None
    for fmt in ("%Y-%m-%d", "%Y%m%d"):
        try:
            from datetime import datetime

            return datetime.strptime(value, fmt).date()
        except ValueError:
            continue
    raise click.BadParameter(f"{value!r} is not a date; use YYYY-MM-DD or YYYYMMDD")


@cli.command(name="record", context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.option("--server", required=True, metavar="NAME", help="Name of the server, recorded on every message.")
@click.option("--transcript", required=True, type=click.Path(dir_okay=False), help="File to append to (.jsonl; created if missing; use an absolute path).")
@click.option("--max-message-bytes", type=click.IntRange(1024), default=None, help="Record larger messages as their size and first KiB only (default 8 MiB).")
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
def record_command(server, transcript, max_message_bytes, command):
    """Run an MCP stdio server and record its JSON-RPC traffic to a transcript.

    Put this in place of the server's command in your MCP client's configuration:
    the client talks to the server through it unchanged, and every message is
    appended to TRANSCRIPT (JSON lines, format mcp-jsonrpc) with a timestamp, its
    direction and the server's name. Ingest it with `tokaudit ingest TRANSCRIPT`.
    The server's command line and stderr are not recorded. Exits with the
    server's exit code.

    \b
    Example (claude_desktop_config.json):
      "filesystem": {"command": "tokaudit", "args": ["record", "--server", "filesystem",
        "--transcript", "/Users/me/mcp-transcripts/filesystem.jsonl", "--",
        "npx", "-y", "@modelcontextprotocol/server-filesystem", "/Users/me/src"]}
    """
    # stdout is the protocol channel: nothing may be printed here, and no database is opened.
    from tokaudit.capture import MAX_MESSAGE_BYTES, record_stdio

    sys.exit(record_stdio(list(command), transcript, server, max_message_bytes=max_message_bytes or MAX_MESSAGE_BYTES))


@cli.command(name="formats")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def formats_command(as_json):
    """List the log formats tokaudit reads: name, file names picked up in folders, default locations.

    \b
    Examples:
      tokaudit formats
      tokaudit ingest logs/ --format otel      # force one when sniffing cannot tell
    """
    from tokaudit.ingest import INGESTERS

    rows = [
        {
            "format": name,
            "description": (module.__doc__ or "").strip().splitlines()[0].replace("``", ""),
            "file_patterns": list(module.FILE_PATTERNS),
            "default_locations": [str(p) for p in module.default_roots()],
        }
        for name, module in INGESTERS.items()
    ]
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    for r in rows:
        click.echo(f"{r['format']:<16} {r['description']}")
        click.echo(f"{'':<16} files: {', '.join(r['file_patterns'])}" + (f"; default: {', '.join(r['default_locations'])}" if r["default_locations"] else ""))
    click.echo("Any of these names with .gz added (an archived log) is read as the log it holds.")


@cli.command(name="usage")
@click.option("--by", type=click.Choice(["day", "week", "month", "session", "project", "model", "agent", "tool", "mcp-server"]), default="day", show_default=True, help="What each row is.")
@click.option("--since", callback=_parse_date, help="First day to include (YYYY-MM-DD, in --tz).")
@click.option("--until", callback=_parse_date, help="Last day to include (YYYY-MM-DD, in --tz).")
@click.option("--tz", default="UTC", show_default=True, help="IANA time zone that decides which day a request belongs to.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON (rows, totals, unpriced models, price source).")
@click.option("--csv", "as_csv", is_flag=True, help="Print CSV rows.")
@store_options
@upgrade_option
@handle_errors
def usage_command(by, since, until, tz, as_json, as_csv, db, config_path, wait_s, no_upgrade):
    """Exact token usage and cost, by day, week, month, session, project, model, agent, tool or MCP server.

    `--by agent` splits subagents out by type (Claude Code agentType, Codex fork/spawn);
    `--by session` rolls subagents up into the session that spawned them.

    Token counts are the logs' own (deduplicated); cost is computed per request
    from the bundled genai-prices table (or your [pricing.overrides]). Models
    without a price are listed as unpriced, never counted as $0.

    \b
    Examples:
      tokaudit usage --by day --since 2026-03-01 --tz Europe/Berlin
      tokaudit usage --by mcp-server --json
    """

    from tokaudit.analyze.usage import usage_report

    if as_json and as_csv:
        raise click.UsageError("choose one of --json and --csv")
    store, config = _open(db, config_path, wait_s, no_upgrade)
    with store:
        report = usage_report(store, by=by, since=since, until=until, tz=tz, config=config)
    if as_json:
        click.echo(json.dumps(report.to_dict(), indent=2, default=str))
    elif as_csv:
        from tokaudit.report.terminal import usage_csv

        click.echo(usage_csv(report), nl=False)
    else:
        from tokaudit.report.terminal import render_usage

        render_usage(report, _console())


@cli.command(name="problems")
@click.option("--kind", help="Only this kind (invalid-json, invalid-utf8, wrong-type, too-deep, line-too-long, unreadable-file, unknown-format, ...).")
@click.option("--limit", type=click.IntRange(1), default=None, help="Show at most this many.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@store_options
@upgrade_option
@handle_errors
def problems_command(kind, limit, as_json, db, config_path, wait_s, no_upgrade):
    """List input lines and files that could not be used, with file, line, reason and a redacted excerpt."""

    from tokaudit.report.terminal import render_problems
    from tokaudit.store.queries import list_problems

    store, _ = _open(db, config_path, wait_s, no_upgrade)
    with store:
        rows = list_problems(store, limit=limit, kind=kind)
    if as_json:
        click.echo(json.dumps(rows, indent=2))
    else:
        render_problems(rows, _console())


@cli.command(name="sources")
@click.option("--with-problems", is_flag=True, help="Only files with problem lines or that could not be read.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON (with the count of lines skipped per rule).")
@store_options
@upgrade_option
@handle_errors
def sources_command(with_problems, as_json, db, config_path, wait_s, no_upgrade):
    """List every file read and how each of its lines was accounted for: used, skipped by a rule, or a problem."""
    from tokaudit.store.queries import list_sources

    store, _ = _open(db, config_path, wait_s, no_upgrade)
    with store:
        rows = list_sources(store, with_problems_only=with_problems)
    if as_json:
        click.echo(json.dumps(rows, indent=2))
    else:
        from tokaudit.report.terminal import render_sources

        render_sources(rows, _console())


@contextmanager
def _progress(label: str, *, enabled: bool) -> Iterator[Callable[[int, int], None] | None]:
    """A progress bar on stderr when it is a terminal (and ``enabled``): yields its ``(done, total)`` callback, else None."""
    if not (enabled and sys.stderr.isatty()):
        yield None
        return
    from rich.console import Console
    from rich.progress import Progress

    with Progress(console=Console(stderr=True), transient=True) as progress:
        task = progress.add_task(label, total=None)
        yield lambda done, total: progress.update(task, completed=done, total=total)


SEVERITY_CHOICE = click.Choice(["info", "low", "medium", "high", "critical"])


def _day_start(value: date | None, days: int = 0) -> datetime | None:
    return None if value is None else datetime.combine(value, datetime.min.time()) + timedelta(days=days)


@cli.command(name="audit")
@click.option("--since", callback=_parse_date, help="Audit sessions that started on or after this day (YYYY-MM-DD, UTC).")
@click.option("--until", callback=_parse_date, help="Audit sessions that started on or before this day (YYYY-MM-DD, UTC).")
@click.option("--last", metavar="DURATION", help="Audit the last N days up to today (UTC), e.g. 1d or 7d, instead of --since/--until.")
@click.option("--fail-on", type=SEVERITY_CHOICE, default=None, help="Exit 1 if a finding at or above this severity appears.")
@click.option("--no-save", is_flag=True, help="Do not store this audit run (print only). Derived caches (steering verdicts, deduplicated requests) are still kept.")
@click.option("--json", "as_json", is_flag=True, help="Print the run and every finding as JSON.")
@click.option("--ingest", "ingest_paths", multiple=True, type=click.Path(), metavar="PATH", help="Ingest these log files or folders first (repeatable).")
@click.option("--report", "report_dir", type=click.Path(file_okay=False), metavar="DIR", help="Write a report of the same window to DIR/<date>/ and refresh DIR/index.html.")
@store_options
@upgrade_option
@handle_errors
def audit_command(since, until, last, fail_on, no_save, as_json, ingest_paths, report_dir, db, config_path, wait_s, no_upgrade):
    """Run every detector over the store: token blowups and DoS-like tool-call chains.

    Each finding says what was measured, against what threshold or cohort, on
    which turns, and the tokens and dollars it cost. The combined
    `economic_dos` finding flags sessions where a server steered the agent
    through a loop returning little, or calls cycled re-sending the same
    arguments; or where a weaker chain (near-duplicate calls, inflated
    arguments, verbose results) met a cost above the session's cohort.
    Thresholds: [detectors.NAME] tables in tokaudit.toml.

    \b
    Examples:
      tokaudit audit
      tokaudit audit --since 2026-03-01 --fail-on high
      tokaudit audit --json --no-save
      tokaudit audit --ingest ~/.claude/projects --last 7d --report reports/ --fail-on high   # cron
    """
    from tokaudit.analyze.audit import run_audit

    if report_dir and no_save:
        raise click.UsageError("--report shows the stored run's findings: drop --no-save")
    if last:
        from tokaudit.ingest.base import utc_now
        from tokaudit.report.data import resolve_window

        window = resolve_window(since, until, last, utc_now().date())
        since, until = window.since, window.until
    if ingest_paths:
        from tokaudit.config import load_config, resolve_db
        from tokaudit.ingest.run import ingest_db

        ingest_config = load_config(config_path)
        summary = ingest_db(
            resolve_db(db, ingest_config), ingest_paths, max_line_bytes=ingest_config.max_line_bytes, wait_s=wait_s, upgrade=not no_upgrade
        )
        if not as_json:
            from tokaudit.report.terminal import ingest_summary_lines

            click.echo("\n".join(ingest_summary_lines(summary)))
    store, config = _open(db, config_path, wait_s, no_upgrade)
    with store:
        with _progress("auditing (batches of sessions)", enabled=not as_json) as on_progress:
            result = run_audit(store, config=config, since=_day_start(since), until=_day_start(until, 1), save=not no_save,
                               on_progress=on_progress)
        if report_dir:
            from tokaudit.report.build import write_dated_report

            written = write_dated_report(store, report_dir, since=since, until=until, config=config, run_id=result.audit_run_id)
    if as_json:
        click.echo(json.dumps(result.to_dict(), indent=2, default=str))
    else:
        from tokaudit.report.terminal import render_audit

        render_audit(result, _console())
        if report_dir:
            from tokaudit.report.terminal import report_written_lines

            click.echo("\n".join(report_written_lines(written)))
    if fail_on:
        levels = SEVERITY_CHOICE.choices
        if any(levels.index(f.severity) >= levels.index(fail_on) for f in result.findings):
            sys.exit(EXIT_FAIL)


@cli.command(name="findings")
@click.option("--run", "run_id", type=int, default=None, help="Audit run id (default: the latest).")
@click.option("--detector", help="Only this detector (e.g. economic_dos, near_duplicates).")
@click.option("--severity", "min_severity", type=SEVERITY_CHOICE, default=None, help="Only findings at or above this severity.")
@click.option("--session", help="Only sessions whose id starts with this.")
@click.option("--limit", type=click.IntRange(1), default=None, help="Show at most this many.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON (with each finding's evidence).")
@store_options
@upgrade_option
@handle_errors
def findings_command(run_id, detector, min_severity, session, limit, as_json, db, config_path, wait_s, no_upgrade):
    """List the findings of an audit run, most severe and costly first, with their explanations.

    \b
    Examples:
      tokaudit findings --severity high
      tokaudit findings --detector economic_dos --json
    """
    from tokaudit.analyze.audit import list_findings

    store, _ = _open(db, config_path, wait_s, no_upgrade)
    with store:
        rows = list_findings(store, run_id=run_id, detector=detector, min_severity=min_severity, session=session, limit=limit)
    if as_json:
        click.echo(json.dumps(rows, indent=2, default=str))
    else:
        from tokaudit.report.terminal import render_findings

        render_findings(rows, _console())


@cli.command(name="show")
@click.argument("session")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@store_options
@upgrade_option
@handle_errors
def show_command(session, as_json, db, config_path, wait_s, no_upgrade):
    """Show one session turn by turn: tokens per kind, context size, tool calls, flagged turns.

    SESSION is a session id or the start of one (the format prefix such as
    `claude-code:` may be left out). In the tool calls, ✗ marks a failed call
    and ↻ a call whose changed arguments the previous result dictated (a
    counter going up, a cursor copied from it, a reference another tool's
    answer named).

    \b
    Examples:
      tokaudit show 0c73d459
      tokaudit show claude-code:0c73d459-03b7-49b9-a3a1-55d1a2c1f0e7 --json
    """
    from tokaudit.analyze.audit import resolve_session, session_timeline

    store, config = _open(db, config_path, wait_s, no_upgrade)
    with store:
        data = session_timeline(store, resolve_session(store, session), config=config)
    if as_json:
        click.echo(json.dumps(data, indent=2, default=str))
    else:
        from tokaudit.report.terminal import render_timeline

        render_timeline(data, _console())


@cli.command(name="calibrate")
@click.option("--dry-run", is_flag=True, help="Show the fits without saving them.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@store_options
@upgrade_option
@handle_errors
def calibrate_command(dry_run, as_json, db, config_path, wait_s, no_upgrade):
    """Fit tokens per byte of tool output from your own logs, and show how well the fits predict.

    Uses every single-tool step in the store (a request that asked for one tool, followed by the
    next request of the same session): the context growth between the two is exact, so tokens
    per byte of result and arguments are fitted per model family and content type, on 4 of 5
    steps; the 5th is held out to measure the error, shown beside that of the bytes/4 heuristic.
    Saved fits are used by `usage --by tool` and later reports for results without a count.

    \b
    Examples:
      tokaudit calibrate
      tokaudit calibrate --dry-run --json
    """
    from tokaudit.analyze.tokens import calibrate

    store, _ = _open(db, config_path, wait_s, no_upgrade)
    with store:
        fits = calibrate(store, save=not dry_run)
    if as_json:
        click.echo(json.dumps([f.to_dict() for f in fits], indent=2))
    else:
        from tokaudit.report.terminal import render_fits

        render_fits(fits, _console(), saved=not dry_run)


@cli.command(name="schema")
@click.option("--format", "fmt", type=click.Choice(["generic"]), default="generic", show_default=True, help="Event format whose schema to print.")
def schema_command(fmt):
    """Print the JSON Schema (draft 2020-12) of tokaudit's generic event format.

    Any agent can write this format (JSON Lines, one event per line, each with
    "tokaudit": 1) for `tokaudit ingest` to read; docs/generic-format.md
    describes it with an example.

    \b
    Examples:
      tokaudit schema > generic-v1.schema.json   # for your agent's tests or editor
      tokaudit ingest events.jsonl --strict      # exit 1 if any line breaks the format
    """
    from tokaudit.ingest.generic import schema_text

    click.echo(schema_text(fmt), nl=False)


def gate_input_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Where `gate` and `baseline save` read from: --budget/--config, --db, --format, --workers, --wait."""
    fn = click.option("--wait", "wait_s", type=float, default=0.0, metavar="SECONDS", help="Wait this long for another tokaudit process to release --db.")(fn)
    fn = click.option("--workers", type=click.IntRange(1, 64), default=None, help="Parsing processes for PATHS (default: one per core, up to 4, for 50+ files).")(fn)
    fn = click.option("--format", "forced_format", help="Force a log format for PATHS instead of sniffing each file.")(fn)
    fn = click.option("--db", help="Read this database (read-only) instead of PATHS (default ./tokaudit.duckdb; env TOKAUDIT_DB).")(fn)
    fn = click.option(
        "--budget", "--config", "config_path", type=click.Path(dir_okay=False),
        help="Budget file: a tokaudit.toml, or a pyproject.toml with [tool.tokaudit] (default: ./tokaudit.toml, ./pyproject.toml; env TOKAUDIT_CONFIG).",
    )(fn)
    return fn


@cli.command(name="gate")
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--baseline", "baseline_path", type=click.Path(dir_okay=False), help="Compare per-task p50/p95 with this file (from `tokaudit baseline save`) under [budgets.max_increase].")
@click.option("--fail-on-warn", is_flag=True, help="Exit 1 on warnings too.")
@click.option("--json", "as_json", is_flag=True, help="Print every verdict and finding as JSON instead of the table.")
@click.option("--junit", type=click.Path(dir_okay=False), help="Write JUnit XML here: one testcase per budget × scope member.")
@click.option("--sarif", type=click.Path(dir_okay=False), help="Write SARIF 2.1.0 here: findings and budget violations as results.")
@click.option("--verbose", "-v", is_flag=True, help="List every scope member, not only those over a level.")
@gate_input_options
@handle_errors
def gate_command(paths, baseline_path, fail_on_warn, as_json, junit, sarif, verbose, config_path, db, forced_format, workers, wait_s):
    """Fail a CI job when agent logs break their token budgets.

    Reads PATHS into a temporary in-memory database (no --db needed in CI), or
    --db when no PATHS are given, measures every budget of the budget file
    ([budgets.*] in tokaudit.toml) per session, task, model, tool, MCP server
    or the whole run, and prints each with its value, limit and verdict. On
    GitHub Actions it also writes error/warning annotations and a step summary.

    \b
    Exit codes: 0 within budget (warnings allowed), 1 a fail-level budget,
    finding or regression (or a warning with --fail-on-warn), 2 usage or
    configuration error, 3 no usable input.

    \b
    Examples:
      tokaudit gate logs/ --budget tokaudit.toml --junit gate.xml --sarif gate.sarif
      tokaudit gate logs/ --baseline baseline.json --fail-on-warn
    """
    from tokaudit.gate.run import publish, run_gate

    result = run_gate(paths, config_path=config_path, db=db, baseline_path=baseline_path, forced_format=forced_format,
                      workers=workers, wait_s=wait_s, with_findings=sarif is not None)
    # With --json, stdout is the JSON document: workflow commands go to stderr (the runner reads both).
    code = publish(result, junit=junit, sarif=sarif, fail_on_warn=fail_on_warn, echo=lambda line: click.echo(line, err=as_json))
    if as_json:
        click.echo(json.dumps(result.to_dict(fail_on_warn), indent=2, default=str))
    else:
        from tokaudit.gate.outputs import render_table

        render_table(result, _console(), verbose=verbose, fail_on_warn=fail_on_warn)
    if code:
        sys.exit(code)


@cli.group(name="baseline")
def baseline_group() -> None:
    """Save per-task token and cost baselines for `tokaudit gate --baseline`."""


@baseline_group.command(name="save")
@click.argument("file", type=click.Path(dir_okay=False))
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--json", "as_json", is_flag=True, help="Print the saved document.")
@gate_input_options
@handle_errors
def baseline_save(file, paths, as_json, config_path, db, forced_format, workers, wait_s):
    """Write FILE: per task, the p50 and p95 of session tokens and cost, from PATHS (or --db).

    Tasks are the sessions' task labels, or the [[tasks]] rules of the budget
    file. The JSON has sorted keys and no timestamps: commit it, and let
    `tokaudit gate --baseline FILE` fail a regression under [budgets.max_increase].

    \b
    Example:
      tokaudit baseline save baseline.json logs/ --budget tokaudit.toml
    """
    from tokaudit.gate.run import save_baseline_file

    document = save_baseline_file(file, paths, config_path=config_path, db=db, forced_format=forced_format, workers=workers, wait_s=wait_s)
    if as_json:
        click.echo(json.dumps(document, indent=2, sort_keys=True))
        return
    tasks = document["tasks"]
    click.echo(f"wrote {file}: {len(tasks)} tasks, {sum(t['sessions'] for t in tasks.values())} sessions")
    for task, t in tasks.items():
        cost = t["cost_usd"]
        p95 = "unpriced" if cost["p95"] is None else f"${cost['p95']:,.4f}"
        click.echo(f"  {task}: {t['sessions']} sessions, p95 {t['total_tokens']['p95']:,.0f} tokens, p95 cost {p95}")


@cli.command(name="report")
@click.option("--since", callback=_parse_date, help="First day to include (YYYY-MM-DD, in --tz).")
@click.option("--until", callback=_parse_date, help="Last day to include (YYYY-MM-DD, in --tz).")
@click.option("--last", metavar="DURATION", help="The last N days up to today, e.g. 7d or 4w, instead of --since/--until.")
@click.option("--tz", default="UTC", show_default=True, help="IANA time zone that decides which day a request belongs to.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default="report", show_default=True, help="Folder to write into (created if missing).")
@click.option("--format", "formats", default="html,md,json", show_default=True, metavar="LIST", help="Comma list of: html, md, json, csv, parquet.")
@click.option("--run", "run_id", type=int, default=None, help="Audit run whose findings to show (default: the latest).")
@click.option("--json", "as_json", is_flag=True, help="Print the files written and the headline numbers as JSON.")
@store_options
@upgrade_option
@handle_errors
def report_command(since, until, last, tz, out_dir, formats, run_id, as_json, db, config_path, wait_s, no_upgrade):
    """Write a cost-breakdown report: one self-contained HTML page, a Markdown summary, JSON, CSV/Parquet tables.

    The HTML page (plotly.js embedded; opens from disk with no network) has the
    headline figures with deltas against the previous window of the same length,
    cost over time by model, spend by project / agent / model, direct vs
    replayed-context cost per tool and MCP server, top sessions by cost and by
    excess with turn-by-turn drill-downs, the latest audit's findings with their
    evidence, and ingest problems and estimates. report.json carries the same
    numbers (schema in reports/README.md); report.md fits a PR comment.

    \b
    Examples:
      tokaudit report --last 7d --out weekly/
      tokaudit report --since 2026-03-01 --until 2026-03-31 --format html,md,json,parquet
    """
    from tokaudit.report.build import build_report

    store, config = _open(db, config_path, wait_s, no_upgrade)
    with store:
        result = build_report(store, out_dir, formats=formats, since=since, until=until, last=last, tz=tz, config=config, run_id=run_id)
    if as_json:
        click.echo(json.dumps(result.to_dict(), indent=2, default=str))
    else:
        from tokaudit.report.terminal import report_written_lines

        click.echo("\n".join(report_written_lines(result)))


@cli.group(name="db")
def db_group() -> None:
    """Inspect and upgrade the database schema (Alembic migrations shipped with tokaudit)."""


@db_group.command(name="upgrade")
@click.option("--sql", "offline", is_flag=True, help="Print the DDL instead of running it.")
@store_options
@handle_errors
def db_upgrade(offline, db, config_path, wait_s):
    """Upgrade the database to this tokaudit's schema (opening an older database does this too)."""
    if offline:
        from alembic import command

        from tokaudit.store.migrate import alembic_config

        command.upgrade(alembic_config(), "head", sql=True)
        return
    from tokaudit.config import load_config, resolve_db
    from tokaudit.store.engine import open_store
    from tokaudit.store.migrate import head_revision

    config = load_config(config_path)
    store = open_store(resolve_db(db, config), wait_s=wait_s, upgrade=False, check=False)
    with store:
        before = store.revision()
        from tokaudit.store.engine import ensure_schema

        ensure_schema(store, upgrade=True)
        click.echo(f"schema revision: {before or 'none'} -> {head_revision()}")


@db_group.command(name="current")
@store_options
@handle_errors
def db_current(db, config_path, wait_s):
    """Print the database's schema revision and this tokaudit's head revision."""
    from tokaudit.config import load_config, resolve_db
    from tokaudit.store.engine import open_store
    from tokaudit.store.migrate import head_revision

    config = load_config(config_path)
    store = open_store(resolve_db(db, config), wait_s=wait_s, check=False)
    with store:
        current = store.revision()
    head = head_revision()
    state = "up to date" if current == head else "needs `tokaudit db upgrade`" if current else "empty"
    click.echo(f"database: {current or 'none'}  head: {head}  ({state})")


@db_group.command(name="history")
def db_history():
    """List the schema revisions this tokaudit knows, oldest first."""
    from tokaudit.store.migrate import revision_docs

    for revision, doc in revision_docs():
        click.echo(f"{revision}  {doc}")


def main() -> None:  # pragma: no cover - console entry point
    cli()


if __name__ == "__main__":  # pragma: no cover - python -m tokaudit.cli
    cli()
