"""Argument skeletons: what varies between calls is masked, what names the call shape is kept."""

from __future__ import annotations

import json

import pytest

from tokaudit.ingest.skeleton import MAX_ARG_TOKEN_CHARS, MAX_ARG_VALUE_CHARS, MAX_SKELETON_CHARS, args_skeleton, args_values


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ('{"page":1,"q":"bugs"}', '{"page":27,"q":"bugs"}'),
        ('{"cursor":"eyJvZmZzZXQiOjEwMH0="}', '{"cursor":"eyJvZmZzZXQiOjIwMH0="}'),
        ('{"id":"job_8f3a91"}', '{"id":"job_1c22b0"}'),
        ('{"note":"' + "a" * 40 + '"}', '{"note":"' + "b" * 50 + '"}'),
        ('{"xs":[1,2,3]}', '{"xs":[4,5,6]}'),
        ('{"x":-1.5e3}', '{"x":7}'),
    ],
)
def test_calls_that_differ_only_in_values_share_a_skeleton(a, b):
    assert args_skeleton(a) == args_skeleton(b)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ('{"q":"bugs"}', '{"q":"docs"}'),  # short literal strings are the call's meaning
        ('{"page":1}', '{"offset":1}'),  # different keys
        ('{"note":"' + "a" * 40 + '"}', '{"note":"' + "a" * 400 + '"}'),  # length buckets differ
    ],
)
def test_calls_of_different_shape_do_not(a, b):
    assert args_skeleton(a) != args_skeleton(b)


def test_secrets_and_big_payloads_do_not_survive():
    skeleton = args_skeleton('{"token":"sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123","body":"' + "x" * 100_000 + '"}')
    assert "abcdefghij" not in skeleton and len(skeleton) <= MAX_SKELETON_CHARS


def test_escaped_quotes_inside_strings():
    assert args_skeleton(r'{"cmd":"echo \"hello world, this is long enough\"","n":3}') == '{"cmd":"<s64>","n":<n>}'


def test_argument_values_keep_a_urls_query_string_and_cut_text_short():
    url = "https://api.example.com/v1/items?fields=id,title,body&sort=updated&q=auth&cursor=c_9f2kq81&limit=50"
    text = "def handler(event):\n    return process(event) " * 4
    kept_url, kept_text = args_values(json.dumps({"url": url, "code": text}))
    assert kept_url == url and len(url) > MAX_ARG_VALUE_CHARS
    # Text keeps its head and its end (a query's OFFSET), not its middle.
    assert kept_text == text[:MAX_ARG_VALUE_CHARS] + " … " + text[-32:]
    assert args_values(json.dumps({"code": text[:90]})) == [text[:90]]  # short enough to keep whole
    blob = "x" * 1000  # a value without spaces is still bounded
    assert args_values(json.dumps({"b": blob})) == ["x" * MAX_ARG_TOKEN_CHARS]


def test_a_cursor_inside_a_long_query_text_is_kept_between_its_head_and_tail():
    """The cursor written into a GraphQL query (or an id into SQL) is what changes from call to call, mid-text."""
    cursor = "eyJvIjoxMywicyI6IjBiZTc1YSJ9"
    query = ('query Rows { rows(filter: {site: "north", status: OPEN}, first: 50, after: "' + cursor
             + '") { edges { cursor node { id name updatedAt } } pageInfo { endCursor hasNextPage } } }')
    (kept,) = args_values(json.dumps({"query": query}))
    assert cursor in kept and kept.startswith(query[:40]) and kept.endswith(query[-32:])
    # Text without such a token keeps its head and tail only.
    text = "def handler(event):\n    return process(event) " * 4
    assert args_values(json.dumps({"code": text})) == [text[:MAX_ARG_VALUE_CHARS] + " … " + text[-32:]]


def test_the_audits_value_head_is_the_head_ingest_kept():
    """``analyze.steering.HEAD`` (SQL) reads the values ``args_values`` stored: a text's head without the end
    ingest kept beside it, so a draft re-sent grown at its end has the same head; tokens and short text whole."""
    import duckdb

    from tokaudit.analyze.steering import HEAD

    draft = "Dear team, the quarterly figures are attached and the summary follows below. " * 3
    values = [
        *args_values(json.dumps({"a": draft, "b": draft + "One more paragraph at the end.", "c": "x" * 1000, "d": "short text"})),
        "https://api.example.com/v1/items?fields=id,title,body&sort=updated&q=auth&cursor=c_9f2kq81&limit=50",
    ]
    heads = [duckdb.execute(f"SELECT {HEAD.format(v='v')} FROM (SELECT ?::VARCHAR AS v)", [v]).fetchone()[0] for v in values]
    assert heads[0] == heads[1] == draft[:MAX_ARG_VALUE_CHARS]
    assert heads[2:] == values[2:]
