"""Regression tests for the deduplication rules, through the store and its llm_calls_dedup view."""

from __future__ import annotations

import json

from tests.ingest.helpers import claude_assistant
from tokaudit.analyze.usage import usage_report
from tokaudit.ingest.runner import ingest_paths


def write(path, *objs):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(o, separators=(",", ":")) + "\n" for o in objs))


def totals(store):
    t = usage_report(store, by="day").totals
    return t["calls"], t["output_tokens"]


def test_sidechain_replay_of_a_main_message_is_not_counted_again(store, tmp_path):
    """ccusage#913: /btw replays a message with the same message.id, a new requestId and isSidechain."""
    main = claude_assistant("msg_A", "req_1", out=300, stop="end_turn")
    replay = claude_assistant("msg_A", "req_2", out=300, stop="end_turn", isSidechain=True)
    other = claude_assistant("msg_B", "req_3", out=50, stop="end_turn", isSidechain=True)  # a genuine sidechain call
    write(tmp_path / "projects" / "p" / "s1.jsonl", main, replay, other)
    ingest_paths(store, [tmp_path])
    assert totals(store) == (2, 350)


def test_the_same_request_in_two_files_counts_once_keeping_the_max(store, tmp_path):
    """A resumed or copied session logs a request again; one file may hold only its placeholder."""
    write(tmp_path / "projects" / "p" / "s1.jsonl", claude_assistant("msg_A", "req_1", out=3))
    write(tmp_path / "projects" / "p" / "s2.jsonl", claude_assistant("msg_A", "req_1", out=480, stop="tool_use"))
    ingest_paths(store, [tmp_path])
    assert totals(store) == (1, 480)
    # Replacing one of the files does not lose the request the other file still holds.
    write(tmp_path / "projects" / "p" / "s2.jsonl", claude_assistant("msg_Z", "req_9", out=7))
    ingest_paths(store, [tmp_path])
    assert totals(store) == (2, 10)


def test_the_steps_a_request_adds_count_once_however_often_the_request_is_written(store, tmp_path):
    """An advisor's step (``usage.iterations``) is a request of its own; the lines of its request, a copy in
    another file and a /btw replay of it each carry it again, and it counts once, like the request."""
    advisor = {"type": "advisor_message", "model": "claude-opus-4-6", "input_tokens": 800, "output_tokens": 500,
               "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0}

    def line(req, out, **top):
        obj = claude_assistant("msg_A", req, out=out, stop="end_turn" if out > 3 else None, **top)
        obj["message"]["usage"]["iterations"] = [{"type": "message", "output_tokens": out}, advisor]
        return obj

    write(tmp_path / "projects" / "p" / "s1.jsonl", line("req_1", 3), line("req_1", 300), line("req_2", 300, isSidechain=True))
    write(tmp_path / "projects" / "p" / "s2.jsonl", line("req_1", 300))
    ingest_paths(store, [tmp_path])
    assert totals(store) == (2, 800)
    by_model = {r["model"]: r for r in usage_report(store, by="model").rows}
    assert (by_model["claude-opus-4-6"]["calls"], by_model["claude-opus-4-6"]["input_tokens"]) == (1, 800)
