"""What the CLI calls: ``run_gate`` (``tokaudit gate``) and ``save_baseline_file`` (``tokaudit baseline save``).

Both read either log paths — ingested into a throw-away in-memory store, so a
CI job needs no database — or an existing database (``--db``), opened read-only
so the gate never changes it. No usable input is a :class:`NoInputError`
(exit 3): no log files, or files none of whose lines could be used, or a
database without sessions.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tokaudit.errors import ConfigError, NoInputError

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from tokaudit.config import Config
    from tokaudit.gate.evaluate import GateResult
    from tokaudit.store.engine import Store

EXAMPLE_BUDGET = """[budgets.session]
cost_usd = { warn = 2.0, fail = 5.0 }
same_tool_chain = { fail = 25 }"""


@contextmanager
def _input_store(
    paths: Sequence[str | os.PathLike[str]],
    config: Config,
    *,
    db: str | None,
    forced_format: str | None,
    workers: int | None,
    wait_s: float,
) -> Iterator[tuple[Store, dict[str, Any] | None]]:
    """The store to evaluate: the paths ingested in memory, or the ``--db`` database read-only."""
    from tokaudit.config import resolve_db
    from tokaudit.store.engine import open_store

    if paths and db:
        raise ConfigError("give log PATHS or --db, not both", hint="PATHS are read into a temporary database; --db reads an existing one")
    if paths:
        from tokaudit.ingest.runner import ingest_paths

        store = open_store(":memory:")
        try:
            # A one-shot read of finished logs: a last line without its newline is part of the run.
            summary = ingest_paths(
                store, list(paths), forced_format=forced_format, workers=workers, max_line_bytes=config.max_line_bytes, final=True
            )
            if summary.lines_ok == 0:
                problems = f"; {summary.lines_problem} line(s) and {summary.files_failed} file(s) could not be used" if summary.lines_problem or summary.files_failed else ""
                raise NoInputError(
                    f"no usable log lines in {', '.join(map(str, paths))}{problems}",
                    hint="check the paths; `tokaudit ingest PATH` lists every problem with its reason",
                )
            yield store, summary.to_dict()
        finally:
            store.close()
        return
    target = resolve_db(db, config)
    from tokaudit.store.urls import missing_db_file

    missing = missing_db_file(target)
    if missing is not None:
        raise NoInputError(f"no log paths given and no database at {missing}", hint="pass log paths to gate, or --db with an ingested database")
    store = open_store(target, read_only=True, wait_s=wait_s)
    try:
        yield store, None
    finally:
        store.close()


def _require_sessions(store: Store, where: str) -> None:
    count = store.duck.execute("SELECT (SELECT count(*) FROM llm_calls) + (SELECT count(*) FROM tool_calls)").fetchall()[0][0]
    if not count:
        raise NoInputError(f"{where} hold no model requests or tool calls to budget", hint="ingest agent logs first, or pass log paths")


def run_gate(
    paths: Sequence[str | os.PathLike[str]] = (),
    *,
    config_path: str | os.PathLike[str] | None = None,
    db: str | None = None,
    baseline_path: str | os.PathLike[str] | None = None,
    forced_format: str | None = None,
    workers: int | None = None,
    wait_s: float = 0.0,
    with_findings: bool = False,
) -> GateResult:
    """Evaluate the budgets of the config in effect over ``paths`` (or ``db``) and return every verdict.

    ``with_findings`` runs the detectors even when no budget counts findings
    (for SARIF output). Raises ConfigError (exit 2) for a bad or missing budget
    file or baseline, NoInputError (exit 3) when there is nothing to evaluate.
    """
    from tokaudit.config import find_config_file, load_config
    from tokaudit.gate.baseline import load_baseline
    from tokaudit.gate.evaluate import evaluate

    config = load_config(config_path)
    if not config.budgets:
        raise ConfigError(
            f"no budgets in {config.source}",
            hint=f"add a [budgets] section to tokaudit.toml (or [tool.tokaudit.budgets] in pyproject.toml), e.g.\n{EXAMPLE_BUDGET}",
        )
    baseline = None
    if baseline_path is not None:
        baseline = load_baseline(baseline_path)
        if not config.budgets.regressions:
            raise ConfigError(
                f"--baseline given but {config.source} has no [budgets.max_increase] rules",
                hint='add e.g. [budgets.max_increase] p95_cost_usd = { fail = "20%" }',
            )
    with _input_store(paths, config, db=db, forced_format=forced_format, workers=workers, wait_s=wait_s) as (store, ingest):
        _require_sessions(store, "the logs given" if paths else "the database")
        result = evaluate(store, config, baseline=baseline, baseline_source=None if baseline_path is None else str(baseline_path),
                          with_findings=with_findings)
    result.ingest = ingest
    found = find_config_file(config_path)
    result.config_file = str(found[0]) if found else None
    if ingest and ingest["missing_paths"]:
        result.notes.append(f"not found: {', '.join(ingest['missing_paths'])}")
    if ingest and ingest["format_doubts"]:
        result.notes.append(f"--format used nothing of {len(ingest['format_doubts'])} file(s): drop it to sniff each file")
    if ingest and ingest["unreadable_paths"]:
        result.notes.append("not read: " + ", ".join(f"{u['path']} ({u['reason']})" for u in ingest["unreadable_paths"]))
    if ingest and ingest["lines"]["problem"]:
        result.notes.append(f"{ingest['lines']['problem']} log line(s) could not be used (see `tokaudit ingest PATH` for each reason)")
    return result


def save_baseline_file(
    file: str | os.PathLike[str],
    paths: Sequence[str | os.PathLike[str]] = (),
    *,
    config_path: str | os.PathLike[str] | None = None,
    db: str | None = None,
    forced_format: str | None = None,
    workers: int | None = None,
    wait_s: float = 0.0,
) -> dict[str, Any]:
    """Write the per-task baseline of ``paths`` (or ``db``) to ``file`` and return the document."""
    from tokaudit.config import load_config
    from tokaudit.gate.baseline import baseline_document, dump_baseline, task_stats
    from tokaudit.gate.evaluate import build_measures, session_totals

    config = load_config(config_path)
    with _input_store(paths, config, db=db, forced_format=forced_format, workers=workers, wait_s=wait_s) as (store, _):
        _require_sessions(store, "the logs given" if paths else "the database")
        document = baseline_document(task_stats(session_totals(build_measures(store, config, with_findings=False))))
    target = Path(file)
    try:
        # Written whole, then renamed: a committed baseline is never left half-written.
        tmp = target.with_name(target.name + ".tmp")
        tmp.write_text(dump_baseline(document), encoding="utf-8")
        tmp.replace(target)
    except OSError as exc:
        raise ConfigError(f"cannot write baseline file {target}: {exc.strerror or exc}") from exc
    return document


def publish(
    result: GateResult,
    *,
    junit: str | os.PathLike[str] | None = None,
    sarif: str | os.PathLike[str] | None = None,
    fail_on_warn: bool = False,
    github: bool | None = None,
    echo: Callable[[str], None] = print,
) -> int:
    """Write the requested reports and, on GitHub Actions, the annotations and step summary; return the exit code.

    ``github`` defaults to ``$GITHUB_ACTIONS == "true"``; annotations go through
    ``echo`` (stdout: the runner reads workflow commands there), the summary is
    appended to ``$GITHUB_STEP_SUMMARY`` when that is set.
    """
    import json

    from tokaudit.gate import outputs

    targets: list[tuple[str | os.PathLike[str], str]] = []
    if junit is not None:
        targets.append((junit, outputs.junit_xml(result, fail_on_warn=fail_on_warn)))
    if sarif is not None:
        log = outputs.sarif_log(result, fail_on_warn=fail_on_warn, config_file=result.config_file)
        targets.append((sarif, json.dumps(log, indent=2, ensure_ascii=False) + "\n"))
    for path, text in targets:
        _write(path, text)
    if github is None:
        github = os.environ.get("GITHUB_ACTIONS") == "true"
    if github:
        for line in outputs.github_annotations(result, fail_on_warn=fail_on_warn, base=os.environ.get("GITHUB_WORKSPACE")):
            echo(line)
        summary = os.environ.get("GITHUB_STEP_SUMMARY")
        if summary:
            _write(summary, outputs.step_summary_markdown(result, fail_on_warn=fail_on_warn), append=True)
    return result.exit_code(fail_on_warn)


def _write(path: str | os.PathLike[str], text: str, *, append: bool = False) -> None:
    try:
        with open(path, "a" if append else "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as exc:
        raise ConfigError(f"cannot write {path}: {exc.strerror or exc}", hint="check the output path and its folder") from exc
