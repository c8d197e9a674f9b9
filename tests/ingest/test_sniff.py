"""Every fixture and shared sample is recognised as its own format and nothing else."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import FIXTURES
from tokaudit.ingest import INGESTERS, SNIFF_BYTES, head_objects, sniff_format
from tokaudit.ingest.discover import wanted_name

# Every log under fixtures/<format>/ (its README and the subagent sidecars are not logs).
FIXTURE_FILES = sorted(
    (p, fmt) for fmt in INGESTERS for p in (FIXTURES / fmt).rglob("*") if p.is_file() and wanted_name(p.name)
)
# Which shared-sample folders hold which format.
SAMPLE_FORMATS = {"claude-code": ("claude-code",), "codex": ("codex",), "openhands": ("openhands", "openhands-eval"), "swe-agent": ("swe-agent",)}


@pytest.mark.parametrize(("path", "fmt"), FIXTURE_FILES, ids=lambda v: v.name if isinstance(v, Path) else v)
def test_fixture_is_sniffed_as_its_format(path, fmt):
    assert sniff_format(path.read_bytes()[:SNIFF_BYTES]) == fmt


def test_every_format_has_fixtures():
    assert {fmt for _, fmt in FIXTURE_FILES} == set(INGESTERS)


@pytest.mark.parametrize(("folder", "fmts"), sorted(SAMPLE_FORMATS.items()))
def test_shared_samples_are_sniffed_as_their_format(samples, folder, fmts):
    files = sorted(p for p in (samples / folder).iterdir() if p.is_file())
    assert files
    for path in files:
        assert sniff_format(path.read_bytes()[:SNIFF_BYTES]) in fmts, path.name


def test_other_shared_samples_are_not_claimed(samples):
    # Formats tokaudit does not read (yet) must not be mistaken for one it does.
    folders = [p for p in samples.iterdir() if p.is_dir() and p.name not in SAMPLE_FORMATS and p.name != "expected-ccusage"]
    assert any(f.name == "openai-api" for f in folders)
    for folder in folders:
        for path in folder.iterdir():
            assert sniff_format(path.read_bytes()[:SNIFF_BYTES]) is None, path.name


@pytest.mark.parametrize("head", [b"", b"not json\n", b'{"a":1}\n', b"[1,2]\n", b'"x"\n', b"\xff\xfe\n"])
def test_unrecognisable_heads(head):
    assert sniff_format(head) is None


def test_first_line_longer_than_the_sniff_window(tmp_path, store):
    """A session file that starts with a multi-MB file-history-snapshot line is still Claude Code."""
    import json

    from tests.ingest.helpers import claude_assistant
    from tokaudit.ingest.runner import ingest_paths

    snapshot = {"type": "file-history-snapshot", "messageId": "m", "snapshot": {"blob": "x" * (SNIFF_BYTES * 3)}}
    path = tmp_path / "s.jsonl"
    path.write_text(json.dumps(snapshot, separators=(",", ":")) + "\n" + json.dumps(claude_assistant(), separators=(",", ":")) + "\n")
    assert sniff_format(path.read_bytes()[:SNIFF_BYTES]) == "claude-code"
    summary = ingest_paths(store, [path])
    assert summary.llm_calls == 1 and summary.skipped_by_rule["type:file-history-snapshot"] == 1


def test_codex_prefix_fallback():
    head = b'{"timestamp":"2026-03-10T10:00:00.000Z","type":"session_meta","payload":{"instructions":"' + b"x" * SNIFF_BYTES
    assert sniff_format(head) == "codex"


def test_every_shared_sample_ingests_without_problems(samples, store):
    """The real logs hold no defective lines; the JSON reports beside them are not logs (skipped, counted)."""
    from tokaudit.ingest.runner import ingest_paths

    summary = ingest_paths(store, [samples], workers=1)
    assert summary.lines_problem == 0 and summary.files_failed == 0
    assert summary.files_not_a_log == len(list((samples / "expected-ccusage").glob("*.json")))
    formats = dict(store.duck.execute("SELECT format, count(*) FROM sources GROUP BY ALL").fetchall())
    assert formats == {"claude-code": 5, "codex": 4, "openhands": 2, "openhands-eval": 1, "swe-agent": 3}


def test_registry_file_names_match_the_modules():
    from tokaudit.ingest import _FORMATS

    for name, (_, patterns, sidecars) in _FORMATS.items():
        module = INGESTERS[name]
        assert module.FORMAT == name
        assert tuple(module.FILE_PATTERNS) == patterns, name
        assert tuple(getattr(module, "SIDECAR_PATTERNS", ())) == sidecars, name


def _claims(module, head: bytes) -> bool:
    """Whether a format's own sniffers, asked on their own, would claim this head."""
    objs = head_objects(head)
    return bool((objs and module.sniff(objs)) or module.sniff_prefix(head.lstrip()[:4096]))


@pytest.mark.parametrize("fmt", sorted(INGESTERS))
def test_no_format_claims_another_formats_fixtures(fmt):
    """Strict sniffers: neither a format's sniff nor its first-bytes sniff claims another format's fixture."""
    module = INGESTERS[fmt]
    others = [path for path, owner in FIXTURE_FILES if owner != fmt]
    assert others
    for path in others:
        assert not _claims(module, path.read_bytes()[:SNIFF_BYTES]), path


@pytest.mark.parametrize("fmt", sorted(INGESTERS))
def test_no_format_claims_another_formats_shared_samples(samples, fmt):
    for folder in sorted(p for p in samples.iterdir() if p.is_dir()):
        if fmt in SAMPLE_FORMATS.get(folder.name, ()):
            continue
        for path in sorted(p for p in folder.iterdir() if p.is_file()):
            assert not _claims(INGESTERS[fmt], path.read_bytes()[:SNIFF_BYTES]), path


def test_a_json_file_holding_genai_usage_in_a_shape_no_format_reads_is_a_problem_not_skipped(store, tmp_path):
    """A Jaeger export of GenAI spans holds model usage tokaudit cannot read: it says so, where a config beside it
    is only counted as not a log."""
    import json

    from tokaudit.ingest.runner import ingest_paths

    jaeger = {"data": [{"traceID": "a1", "spans": [{"spanID": "b2", "operationName": "chat gpt-4o-mini", "tags": [
        {"key": "gen_ai.usage.input_tokens", "type": "int64", "value": 10},
        {"key": "gen_ai.usage.output_tokens", "type": "int64", "value": 14}]}]}]}
    (tmp_path / "traces.json").write_text(json.dumps(jaeger))
    (tmp_path / "package.json").write_text(json.dumps({"name": "app", "version": "1.0.0"}))
    summary = ingest_paths(store, [tmp_path])
    assert summary.files_not_a_log == 1 and summary.files_failed == 1
    (kind, message), = store.duck.execute("SELECT kind, message FROM ingest_problems").fetchall()
    assert kind == "unknown-format" and "GenAI usage" in message and "OTLP" in message
