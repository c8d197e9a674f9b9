"""The shipped JSON Schema of the generic format and the parser agree: same fields, same verdicts."""

from __future__ import annotations

import functools
import json
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import FIXTURES
from tests.ingest.helpers import lines
from tokaudit.ingest import generic

SCHEMA = json.loads(generic.schema_text())
DEFS = SCHEMA["$defs"]
TS = "2026-03-12T09:14:05.000Z"
FIXTURE_EVENTS = [json.loads(raw) for p in sorted((FIXTURES / "generic").rglob("*.jsonl")) for raw in p.read_bytes().splitlines() if raw.strip()]

# Checks JSON Schema cannot express, which the parser applies on top (documented in the schema's description).
SEMANTIC_KINDS = {"inconsistent-usage"}


def validator():
    jsonschema = pytest.importorskip("jsonschema")
    return _validator(jsonschema)


@functools.cache
def _validator(jsonschema):
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    return jsonschema.Draft202012Validator(SCHEMA)


def parser_verdict(obj: Any) -> tuple[bool, str | None]:
    """(accepted, problem kind): a used or skipped line is accepted."""
    r = generic.parse(lines(obj), path="/x.jsonl", state=None)
    return (not r.problems, r.problems[0].kind if r.problems else None)


def ev(type_, **fields):
    return {"tokaudit": 1, "type": type_, "ts": TS, "session_id": "s1", **fields}


def llm(**fields):
    return ev("llm_call", **{"call_key": "c1", "model": "gpt-5", "input_tokens": 10, "output_tokens": 5, **fields})


GOOD = [
    ev("session"),
    ev("session", agent="acme", outcome="capped", parent_session_id="p", project=None, task_label=""),
    llm(),
    llm(cache_read_tokens=None, reasoning_tokens=0, usage_source="estimated:tokenizer:o200k_base", reported_cost_usd=3),
    llm(cache_write_tokens=5, cache_write_5m_tokens=None),
    llm(input_includes_cache=True, input_tokens=10, cache_read_tokens=10),
    llm(unknown_future_field=[1, 2]),
    ev("tool_call", tool_call_id="t", tool_name="x", args="free text"),
    ev("tool_call", tool_call_id="t", tool_name="x", args=None, args_bytes=3),
    ev("tool_call", tool_call_id="t", tool_name="x", args=[1, {"a": None}], result=None, result_bytes=4),
    ev("tool_call", tool_call_id="t", tool_name="x", tool_kind="web_search", result_content_types=["text", "image"]),
    ev("tool_result", tool_call_id="t"),
    ev("tool_result", tool_call_id="t", result="", is_error=True, duration_ms=0, result_truncated=False),
    ev("event", kind="compaction", detail=None),
    {"tokaudit": 1, "type": "tool_def"},  # a type from a later 1.x: skipped, and the schema leaves it open
    {"tokaudit": 1, "type": ""},
    llm(ts="2026-03-12T09:14:05+05:30"),
    llm(ts="2026-03-12T09:14:05.123456789Z"),
]

BAD = [
    [],
    "text",
    {"type": "session", "ts": TS, "session_id": "s"},
    {"tokaudit": 2, "type": "session", "ts": TS, "session_id": "s"},
    {"tokaudit": 0, "type": "session"},
    {"tokaudit": "1", "type": "session"},
    {"tokaudit": True, "type": "session"},
    {"tokaudit": 1},
    {"tokaudit": 1, "type": None},
    {"tokaudit": 1, "type": 3},
    ev("session", session_id=""),
    ev("session", session_id=None),
    ev("session", ts=None),
    ev("session", ts="2026-03-12T09:14:05"),
    ev("session", ts="2026-03-12 09:14:05Z"),
    ev("session", ts="2026-03-12T09:14:05z"),
    ev("session", ts="2026-03-12T09:14:05.1234567890Z"),
    ev("session", outcome="done"),
    ev("session", agent=""),
    ev("session", agent="x" * 257),
    ev("session", cwd="x" * 4097),
    llm(model=None),
    llm(input_tokens=-1),
    llm(input_tokens="5"),
    llm(output_tokens=10**15 + 1),
    llm(cache_read_tokens=True),
    llm(input_includes_cache="yes"),
    llm(usage_source="estimated:"),
    llm(usage_source="guess"),
    llm(reported_cost_usd=-1),
    llm(reported_cost_usd="0.1"),
    llm(cache_write_tokens=5, cache_write_5m_tokens=1),
    llm(cache_write_tokens=0, cache_write_1h_tokens=0),
    {k: v for k, v in llm().items() if k != "call_key"},
    ev("tool_call", tool_call_id="t"),
    ev("tool_call", tool_name="x"),
    ev("tool_call", tool_call_id="t", tool_name="x", args={}, args_bytes=2),
    ev("tool_call", tool_call_id="t", tool_name="x", result="a", result_bytes=1),
    ev("tool_call", tool_call_id="t", tool_name="x", tool_kind="shell"),
    ev("tool_call", tool_call_id="t", tool_name="x", result=["a"]),
    ev("tool_call", tool_call_id="t", tool_name="x", result_content_types="text"),
    ev("tool_call", tool_call_id="t", tool_name="x", result_content_types=["Text"]),
    ev("tool_call", tool_call_id="t", tool_name="x", result_content_types=["text"] * 17),
    ev("tool_result", tool_call_id="t", result="a", result_bytes=1),
    ev("tool_result", tool_call_id="t", duration_ms=-5),
    ev("tool_result"),
    ev("event"),
    ev("event", kind="Compaction"),
    ev("event", kind="compaction", detail=7),
    ev("event", kind="compaction", detail="x" * 4097),
]

# Accepted by the schema, rejected by the parser, on purpose (see the schema's description).
STRICTER = [
    (llm(output_tokens=5, reasoning_tokens=6), "inconsistent-usage"),
    (llm(input_includes_cache=True, input_tokens=10, cache_read_tokens=11), "inconsistent-usage"),
    (llm(output_tokens=5.0), "wrong-type"),  # JSON Schema counts 5.0 as an integer; producers must write 5
    ({"tokaudit": 1.0, "type": "session", "ts": TS, "session_id": "s"}, "wrong-type"),
    (ev("session", ts="2026-02-30T09:14:05Z"), "invalid-value"),  # the pattern cannot know calendars
]


@pytest.mark.parametrize("obj", GOOD, ids=lambda o: json.dumps(o)[:60])
def test_good_examples_pass_both(obj):
    assert validator().is_valid(obj)
    assert parser_verdict(obj) == (True, None)


@pytest.mark.parametrize("obj", BAD, ids=lambda o: json.dumps(o)[:60])
def test_bad_examples_fail_both(obj):
    v = validator()
    assert not v.is_valid(obj)
    accepted, kind = parser_verdict(obj)
    assert not accepted and kind not in SEMANTIC_KINDS


@pytest.mark.parametrize(("obj", "kind"), STRICTER, ids=lambda o: json.dumps(o)[:60])
def test_documented_checks_beyond_the_schema(obj, kind):
    assert validator().is_valid(obj)
    assert parser_verdict(obj) == (False, kind)


def test_every_fixture_line_is_valid():
    v = validator()
    assert len(FIXTURE_EVENTS) == 28
    for obj in FIXTURE_EVENTS:
        errors = [e.message for e in v.iter_errors(obj)]
        assert not errors, (obj, errors)


# Values a careless producer might write into any field.
ODD_VALUES = [None, True, 0, -1, 7, 2**40, 10**16, 1.5, "", "x", "compaction", "2026-03-12T09:14:05Z", "x" * 600, [], ["text"], {}, {"a": 1}]


@st.composite
def mutated_event(draw):
    obj = dict(draw(st.sampled_from(FIXTURE_EVENTS)))
    for _ in range(draw(st.integers(1, 3))):
        keys = sorted(obj) + ["extra", "reasoning_tokens", "args_bytes", "result_bytes", "cache_write_tokens", "input_includes_cache"]
        key = draw(st.sampled_from(keys))
        if draw(st.booleans()) and key in obj:
            del obj[key]
        else:
            obj[key] = draw(st.sampled_from(ODD_VALUES))
    return obj


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated_event())
def test_parser_accepts_exactly_what_the_schema_accepts(obj):
    v = validator()
    accepted, kind = parser_verdict(obj)
    if kind in SEMANTIC_KINDS:
        assert v.is_valid(obj)
        return
    assert v.is_valid(obj) == accepted, (obj, kind, [e.message for e in v.iter_errors(obj)])


# --- the schema and the parser's structs describe the same fields ------------------------------------------


def _schema_fields(name: str) -> tuple[set[str], set[str]]:
    """Properties and required names of one event type, following its allOf references."""
    props, required = set(), set()
    todo = [DEFS[name]]
    while todo:
        node = todo.pop()
        props |= set(node.get("properties", {}))
        required |= set(node.get("required", []))
        todo += [DEFS[s["$ref"].rsplit("/", 1)[1]] for s in node.get("allOf", []) if "$ref" in s]
    return props, required


@pytest.mark.parametrize(("name", "struct"), [
    ("session", generic.SessionEvent), ("llm_call", generic.LlmCallEvent), ("tool_call", generic.ToolCallEvent),
    ("tool_result", generic.ToolResultEvent), ("event", generic.SessionEventLine),
])
def test_schema_and_structs_list_the_same_fields(name, struct):
    props, required = _schema_fields(name)
    fields = msgspec.structs.fields(struct)
    assert props == {f.name for f in fields}
    assert required == {f.name for f in fields if f.required}
    assert all(p.get("description") for p in (DEFS[name].get("properties") or {}).values()), "every field is documented"


def test_schema_constants_match_the_parser():
    assert DEFS["ts"]["pattern"] == generic.TS_PATTERN
    assert DEFS["tokens"]["maximum"] == generic.MAX_TOKENS
    assert SCHEMA["properties"]["tokaudit"]["const"] == generic.VERSION
    handled = {c["if"]["properties"]["type"]["const"] for c in SCHEMA["allOf"]}
    assert handled == set(generic._HANDLERS)


def test_the_documented_example_is_valid():
    from tests.ingest.test_generic import docs_example

    v = validator()
    for raw in docs_example():
        assert v.is_valid(json.loads(raw)), raw
