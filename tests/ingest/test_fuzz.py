"""Fuzzing the parsers with mutated real lines and random bytes: no crash, every line accounted for."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import FIXTURES, SAMPLES
from tokaudit.ingest import INGESTERS, SNIFF_BYTES, sniff_format
from tokaudit.ingest.base import Line
from tokaudit.ingest.discover import wanted_name


def _corpus(fmt: str) -> list[bytes]:
    """Lines to mutate: the project's fixtures, plus the real agent logs in ../shared/samples when present.

    For a whole-document format the "lines" are whole files (its unit of accounting)."""
    roots = [FIXTURES / fmt] + ([SAMPLES / fmt] if (SAMPLES / fmt).is_dir() else [])
    files = [p for root in roots for p in sorted(root.rglob("*")) if p.is_file() and wanted_name(p.name)]
    files = [p for p in files if sniff_format(p.read_bytes()[:SNIFF_BYTES]) == fmt]
    if getattr(INGESTERS[fmt], "WHOLE_FILE", False):
        return [p.read_bytes() for p in files]
    return [line for p in files for line in p.read_bytes().splitlines()]


REAL_LINES = {fmt: _corpus(fmt) for fmt in INGESTERS}


@st.composite
def mutated_line(draw, fmt: str) -> bytes:
    line = bytearray(draw(st.sampled_from(REAL_LINES[fmt])))
    for _ in range(draw(st.integers(0, 4))):
        op = draw(st.sampled_from(["flip", "cut", "insert", "swap_number"]))
        pos = draw(st.integers(0, max(0, len(line) - 1)))
        if op == "flip" and line:
            line[pos] = draw(st.integers(0, 255))
        elif op == "cut":
            del line[pos : pos + draw(st.integers(1, 40))]
        elif op == "insert":
            line[pos:pos] = draw(st.sampled_from([b'"', b"{", b"}", b"null", b"-1", b'"12"', b"\xff", b"[]", b"1e400", b"\\u0000"]))
        elif op == "swap_number":
            line = bytearray(bytes(line).replace(b":1", b':"1"', 1))
    return bytes(line).replace(b"\n", b" ")


def lines_strategy(fmt: str):
    junk = st.binary(max_size=200).map(lambda b: b.replace(b"\n", b""))
    if getattr(INGESTERS[fmt], "WHOLE_FILE", False):
        return st.lists(st.one_of(mutated_line(fmt), junk), min_size=1, max_size=1)  # one document per file
    return st.lists(st.one_of(mutated_line(fmt), junk), min_size=1, max_size=20)


def _check(fmt: str, raw_lines: list[bytes]) -> None:
    lines = [Line(i, i * 10, data) for i, data in enumerate(raw_lines, start=1)]
    result = INGESTERS[fmt].parse(lines, path="/fuzz/projects/p/s.jsonl", state=None)
    assert result.lines_read == len(lines)
    assert result.lines_ok + result.lines_skipped + result.lines_problem == len(lines)
    for call in result.llm_calls.values():
        for col in ("input_tokens", "cache_read_tokens", "cache_write_5m_tokens", "cache_write_1h_tokens", "output_tokens"):
            assert isinstance(call[col], int) and call[col] >= 0


@pytest.mark.parametrize("fmt", sorted(INGESTERS))
def test_parser_survives_mutations(fmt):
    assert REAL_LINES[fmt], f"no fixture lines for {fmt}"

    @settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(lines_strategy(fmt))
    def run(raw_lines):
        _check(fmt, raw_lines)

    run()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.lists(st.one_of(st.sampled_from(REAL_LINES["claude-code"]), st.binary(max_size=300)), max_size=30))
def test_whole_file_ingest_accounts_for_every_line(tmp_path_factory, chunks):
    from tokaudit.ingest.runner import ingest_paths
    from tokaudit.store import open_store

    root = tmp_path_factory.mktemp("fuzz")
    path = root / "f.jsonl"
    # A known-good first line keeps the file recognisable; the rest is hostile.
    data = REAL_LINES["claude-code"][0] + b"\n" + b"\n".join(chunks) + b"\n"
    path.write_bytes(data)
    with open_store(str(root / "f.duckdb")) as store:
        summary = ingest_paths(store, [path], forced_format="claude-code")
        read, ok, skipped, problem = store.duck.execute("SELECT lines_read, lines_ok, lines_skipped, lines_problem FROM sources").fetchall()[0]
    assert read == ok + skipped + problem == data.count(b"\n")
    assert summary.lines_read == read


DEEP_ARRAY = b"[" * 100_000 + b"]" * 100_000
DEEP_OBJECT = b'{"a":' * 5_000 + b"1" + b"}" * 5_000
# Deep nesting under the keys a format reads first: its typed envelope has to go down into it.
DEEP_INSIDE = b'{"type":"assistant","tokaudit":1,"resourceSpans":' + DEEP_ARRAY + b',"payload":' + DEEP_OBJECT + b"}"


@pytest.mark.parametrize("fmt", sorted(INGESTERS))
@pytest.mark.parametrize("deep", [DEEP_ARRAY, DEEP_OBJECT, DEEP_INSIDE], ids=["array", "object", "inside"])
def test_json_nested_deeper_than_a_decoder_recurses_is_one_line_not_a_crash(fmt, deep):
    lines = [Line(1, 0, deep), Line(2, len(deep) + 1, b"{}")]
    result = INGESTERS[fmt].parse(lines, path="/logs/f.jsonl", state=None)
    assert result.lines_read == 2 == result.lines_ok + result.lines_skipped + result.lines_problem
