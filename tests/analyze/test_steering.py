"""The steering rule (``analyze.steering.steering_sql``) on small sequences of calls of one tool."""

from __future__ import annotations

import json

import duckdb
import pytest

from tokaudit.analyze.steering import steering_sql
from tokaudit.ingest.base import result_features
from tokaudit.ingest.skeleton import args_skeleton, args_values


def steered(calls: list[tuple[str, str]]) -> list[bool]:
    """[(args_json, result_text)] of one MCP tool, in order -> the steered flag of each call."""
    return steered_tools([("docs/get", a, r) for a, r in calls])


def steered_tools(calls: list[tuple[str, ...]]) -> list[bool]:
    """[(tool_key, args_json, result_text[, tool_name])] of one session, in order -> the steered flag of each
    call. A ``tool_name`` is put before the values, as the store does for an MCP tool whose name has a number."""
    return rule_flags("steered", calls)


def rule_flags(column: str, calls: list[tuple[str, ...]], command: str = "false") -> list[bool]:
    """[(tool_key, args_json, result_text[, tool_name])] of one session, in order -> ``column`` of the steering
    rule's output for each call, the calls stored as the store holds them (``command``: ``steering_sql``'s)."""
    rows = [
        ("s", f"call_{i}", tool, i, [*name, *args_values(a)], args_skeleton(a), len(a.encode()), hash(a), result_features(r.encode())["result_excerpt"])
        for i, (tool, a, r, *name) in enumerate(calls)
    ]
    con = duckdb.connect()
    con.execute("CREATE TABLE t (session_id VARCHAR, tool_call_id VARCHAR, tool_key VARCHAR, call_idx INT, args_values VARCHAR[], "
                "args_skeleton VARCHAR, args_bytes BIGINT, args_hash BIGINT, result_excerpt VARCHAR)")  # fmt: skip
    con.executemany("INSERT INTO t VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
    return [r[0] for r in con.sql(f"SELECT {column} FROM ({steering_sql('t', 'call_idx', command=command)}) ORDER BY call_idx").fetchall()]


def test_a_counter_going_up_by_one_is_steered_whatever_the_wording():
    calls = [(f'{{"city":"Paris","segment_index":{i},"seq":"1,2,3"}}', f"Segment {i} acknowledged.") for i in range(1, 5)]
    assert steered(calls) == [False, True, True, True]


def test_an_offset_with_a_constant_stride_is_steered_from_its_second_step():
    # The results do not name the next offset (that is steered from the first step: see below).
    calls = [(f'{{"q":"bugs","offset":{o}}}', "a page of rows") for o in (0, 50, 100, 150)]
    assert steered(calls) == [False, False, True, True]


def test_a_countdown_with_a_constant_step_is_steered_from_its_second_step():
    calls = [(f'{{"job":"sync","remaining":{n}}}', "Batch stored.") for n in (24, 23, 22, 21)]
    assert steered(calls) == [False, False, True, True]


@pytest.mark.parametrize(("days", "expected"), [
    (["2024-02-27", "2024-02-28", "2024-02-29", "2024-03-01"], [False, True, True, True]),  # a day on, across a month
    (["2024-03-04", "2024-03-11", "2024-03-18", "2024-03-25"], [False, False, True, True]),  # a week on: the same step
    (["2024-03-09", "2024-01-15", "2024-06-02", "2024-02-20"], [False, False, False, False]),  # dates the task picked
])
def test_a_date_moving_on_like_a_counter_is_steered(days, expected):
    calls = [(f'{{"ledger":"eu-west","day":"{d}"}}', "No discrepancies recorded for this day.") for d in days]
    assert steered(calls) == expected


@pytest.mark.parametrize("word", ["verify-{:02d}", "seg{}", "step_{}"])
def test_a_numbered_word_going_up_by_one_is_steered(word):
    calls = [(f'{{"job":"audit","step":"{word.format(n)}"}}', "Step recorded.") for n in (6, 7, 8, 9)]
    assert steered(calls) == [False, True, True, True]


@pytest.mark.parametrize(
    "values",
    [["phase one", "phase two", "phase three", "phase four"], ["I", "II", "III", "IV", "V"], ["c", "d", "e", "f"],
     ["Continue with the third", "Continue with the fourth", "Continue with the fifth"]],
)
def test_a_counter_spelled_out_going_up_by_one_is_steered(values):
    calls = [(f'{{"job":"audit","part":"{v}"}}', "Part recorded.") for v in values]
    assert steered(calls) == [False] + [True] * (len(values) - 1)


def test_a_cursor_hidden_mid_page_is_still_seen_copied():
    records = ",".join('{"name":"Ada Lovelace","email":"ada@example.com","tier":"gold"}' for _ in range(8))  # past the head
    notice = "Use of this data is subject to the terms of service. " * 12

    def page(token: str) -> str:
        return f'{{"contacts":[{records}],\n        "next_page_token": "{token}",\n        "notice": "{notice}"}}'

    tokens = ["pt_9f8e7d6c", "pt_1a2b3c4d", "pt_5e6f7a8b", "pt_0c1d2e3f"]
    calls = [('{"page_token":"start"}', page(tokens[0]))] + [(f'{{"page_token":"{t}"}}', page(n)) for t, n in zip(tokens, tokens[1:])]
    assert steered(calls) == [False, True, True, True]


def test_words_in_turn_that_are_no_counter_are_not_steered():
    calls = [(f'{{"job":"audit","part":"{v}"}}', "Part recorded.") for v in ("apple", "banana", "cherry", "date")]
    assert steered(calls) == [False, False, False, False]
    own = [("Grep", f'{{"pattern":"phase {v}"}}', "no match") for v in ("one", "two", "three")]
    assert steered_tools(own) == [False, False, False]  # the agent's own tool: spelled counters are MCP-only


def test_numbered_files_in_turn_are_not_steered():
    calls = [(f'{{"path":"src/f{n}.py"}}', "def f(): pass") for n in (3, 4, 5)]
    assert steered(calls) == [False, False, False]


def test_ids_from_a_listing_in_increasing_order_are_not_steered():
    calls = [(f'{{"number":{n},"state":"closed"}}', f"Closed #{n}") for n in (101, 147, 230, 231, 400)]
    assert steered(calls) == [False, False, False, True, False]  # one accidental +1 step is not a chain


def test_a_cursor_copied_from_the_previous_result_is_steered_also_when_it_first_appears():
    calls = [('{"topic":"auth"}', "Overview. next: c_9f2kq81"), ('{"topic":"auth","cursor":"c_9f2kq81"}', "More. next: c_77ab10z"),
             ('{"topic":"auth","cursor":"c_77ab10z"}', "More. next: c_0p0p0p0")]
    assert steered(calls) == [False, True, True]


def test_text_copied_from_a_result_into_an_edit_is_not_steering():
    calls = [('{"path":"a.c","old":"return x;"}', "12  return x;\n13  return y;"), ('{"path":"a.c","old":"return y;"}', "no match")]
    assert steered(calls) == [False, False]


def test_a_repair_resend_restores_the_long_value_it_replaced():
    full = ",".join(str(i) for i in range(1, 60))
    calls = [(f'{{"step":1,"seq":"{full}"}}', "step 1 ok"), ('{"step":2,"seq":"1,2,...,59"}', "rejected: resend the full list"),
             (f'{{"step":2,"seq":"{full}"}}', "step 2 ok")]
    assert steered(calls) == [False, False, True]


@pytest.mark.parametrize("args", ['{"job_id":"j-42"}', '{"command":"pytest -q"}'])
def test_the_same_call_again_is_not_steered(args):
    assert steered([(args, "status: running"), (args, "status: running")]) == [False, False]


def test_new_arguments_while_the_results_progress_meter_rises_are_paced_by_the_server():
    scopes = [".", "lib/api", "apps/web", "services/jobs"]
    calls = [(f'{{"repo":"acme/app","scope":"{s}"}}', f"Audit at {pct}%; {9 - i} scopes left. {s}: no findings")
             for i, (s, pct) in enumerate(zip(scopes, (4, 10, 14, 17)))]
    assert steered(calls) == [False, True, True, True]


@pytest.mark.parametrize("meter", ['{{"status":"partial","coverage_pct":{pct}}}', '{{"state":"incomplete","progress": {frac}}}'])
def test_a_meter_under_a_progress_key_rising_paces_new_arguments(meter):
    scopes = [".", "lib/api", "apps/web", "services/jobs"]
    calls = [(f'{{"repo":"acme/app","scope":"{s}"}}', meter.format(pct=pct, frac=pct / 100)) for s, pct in zip(scopes, (4, 10, 14, 17))]
    assert steered(calls) == [False, True, True, True]


def test_a_percent_that_measures_a_change_is_no_meter():
    quotes = [(f'{{"symbol":"{sym}"}}', f'{{"symbol":"{sym}","price":{p},"change_pct":{c}}}') for sym, p, c in
              (("TYRL", 624.97, 0.77), ("HOOLI", 768.64, 0.85), ("TYRL", 524.99, 4.22))]
    assert steered(quotes) == [False, False, False]


def test_polling_a_job_whose_progress_rises_is_not_steered():
    calls = [('{"job_id":"j-42"}', f"status: running, progress {pct}%") for pct in (10, 40, 70, 100)]
    assert steered(calls) == [False, False, False, False]


def test_new_shell_commands_whose_output_has_percents_are_not_paced():
    calls = [(f"curl -X POST -F 'file={i}' http://host/upload", f"  % Total    % Received\n{10 * i}%  done") for i in range(1, 5)]
    assert steered(calls) == [False, False, False, False]


def test_two_tools_handing_each_other_tokens_are_steered():
    calls, token = [], "tk_start01"
    for i in range(6):
        nxt = f"tk_{i:02d}q{i * 37 % 100:02d}"
        calls.append((("a/fetch", "b/verify")[i % 2], f'{{"ticket":"{token}"}}', f"Step recorded. Pass {nxt} to the other tool."))
        token = nxt
    assert steered_tools(calls) == [False, False, True, True, True, True]


def test_acking_each_message_a_queue_handed_out_is_not_steered():
    # receive (the same arguments each time) -> a fresh message and its receipt -> ack(receipt): the model acts on
    # what the queue gave it; the receive itself was handed nothing, so this is no relay between two tools.
    calls = []
    for i in range(6):
        receipt = f"rh-{i * 7919 % 10007:05d}-{i}a"
        message = f'{{"body":{{"order":"o-{i}","sku":"A-{i * 37 % 100}","qty":{i + 1}}},"receipt_handle":"{receipt}"}}'
        calls += [("mq/receive_message", '{"queue":"orders","max":1}', message),
                  ("mq/ack_message", f'{{"queue":"orders","receipt_handle":"{receipt}"}}', "acked")]
    assert steered_tools(calls) == [False] * 12


def test_asking_the_status_of_each_job_the_task_submitted_is_not_steered():
    calls = []
    for i, name in enumerate(("etl-users", "etl-orders", "etl-items", "etl-events")):
        job = f"job_{i}{i * 4093 % 9973:04d}x"
        calls += [("ci/submit", f'{{"pipeline":"{name}"}}', f'{{"job_id":"{job}","state":"queued"}}'),
                  ("ci/status", f'{{"job_id":"{job}"}}', '{"state":"done"}')]
    assert steered_tools(calls) == [False] * 8


def test_relaying_the_token_a_server_issues_on_each_round_is_steered():
    # grant (the same call each time) answers a new token and little else; the commit that must carry it is
    # steered once the grant has repeated.
    calls = []
    for i in range(4):
        token = f"tk{i * 7919 % 10007:05d}Zq{i}"
        calls += [("vault/grant", '{"scope":"export.full"}', f'{{"token":"{token}","expires_in":10}}'),
                  ("ledger/commit", f'{{"table":"invoices","token":"{token}"}}', "committed")]
    assert steered_tools(calls) == [False, False, False, True, False, True, False, True]


def test_the_agents_own_tools_reading_the_files_a_search_listed_are_not_steered():
    listing = "src/app/main.py\nsrc/app/db.py\nsrc/app/api.py"
    calls = [("Glob", '{"pattern":"src/**/*.py"}', listing)]
    for path in ("src/app/main.py", "src/app/db.py", "src/app/api.py"):
        calls += [("Read", f'{{"file_path":"{path}"}}', "import os\n" * 20), ("Grep", '{"pattern":"def "}', listing)]
    assert steered_tools(calls) == [False] * 7


def test_re_running_an_earlier_shell_command_is_not_a_repair():
    a = "curl -X POST -F 'file=ARGV' -F 'file=@printenv.pl' http://web.chal.example:8000/cgi-bin/file.pl?/bin/ls%20-la|"
    b = "curl -X POST -F 'file=@printenv.pl' -F 'file=5' http://web.chal.example:8000/cgi-bin/file.pl"
    assert steered([(a, "x"), (b, "y"), (a, "x"), (b, "y")]) == [False, False, False, False]


NARRATION = ["Fetching the next segment as the tool asked", "Continuing with the calibration run", "One more step to finish the request",
             "Proceeding to the following part of the data"]


def test_a_narration_argument_does_not_hide_a_counter_or_a_cursor():
    # A client (or a server's schema) can have the model explain each call in an argument of its own:
    # new words every time, beside the counter or cursor the server dictated.
    counter = [(f'{{"reason":"{NARRATION[i]}","city":"Paris","segment_index":{i + 1}}}', f"Segment {i + 1} acknowledged.") for i in range(4)]
    assert steered(counter) == [False, True, True, True]
    cursors = ["c_9f2kq81", "c_77ab10z", "c_0p0p0p0", "c_5t5t5t5"]
    drip = [(f'{{"topic":"auth","cursor":"{cursors[i - 1]}","explanation":"{NARRATION[i]}"}}' if i else '{"topic":"auth","explanation":"start"}',
             f"More. next: {cursors[i]}") for i in range(4)]  # fmt: skip
    assert steered(drip) == [False, True, True, True]


def test_new_text_alone_or_beside_a_value_from_elsewhere_is_not_steering():
    questions = [(f'{{"explanation":"{NARRATION[i]}","query":"{q}"}}', "3 hits") for i, q in enumerate(("open bugs", "flaky tests", "slow builds"))]
    assert steered(questions) == [False, False, False]
    listing = [(f'{{"explanation":"{NARRATION[i]}","number":{n}}}', f"Closed #{n}") for i, n in enumerate((101, 230, 400))]
    assert steered(listing) == [False, False, False]


def test_an_offset_or_numbered_part_the_result_names_is_steered_whatever_its_step():
    # A server choosing the next offset itself (variable-sized pages): the steps are irregular and the
    # numbers short, but each is the number the previous result named.
    offsets = (0, 115, 195, 347)
    calls = [(f'{{"q":"bugs","offset":{o}}}', f"12 rows. next_offset={n}") for o, n in zip(offsets, (*offsets[1:], 400))]
    assert steered(calls) == [False, True, True, True]
    parts = [(f'{{"doc":"spec","section":"part {i}"}}', f"Part {i} stored; send part {i + 1} to go on.") for i in range(1, 4)]
    assert steered(parts) == [False, True, True]


def test_a_number_found_only_inside_a_longer_number_or_in_another_form_is_not_copied():
    inside = [('{"q":"bugs","offset":0}', "ticket 11507 and 3195"), ('{"q":"bugs","offset":115}', "x"), ('{"q":"bugs","offset":195}', "y")]
    assert steered(inside) == [False, False, False]
    # "page 2" named by the result, sent as a differently formed value, is not the counter rule's business.
    other_form = [('{"doc":"spec","section":"s1"}', "see page 2"), ('{"doc":"spec","section":"page 2 draft"}', "z")]
    assert steered(other_form) == [False, False]


def test_a_cursor_or_counter_inside_a_url_the_model_builds_is_steered():
    # The server names only the cursor; the model puts it into the URL it sends.
    cursors = ["c_9f2kq81", "c_77ab10z", "c_0p0p0p0", "c_5t5t5t5"]
    url = "https://api.example.com/v1/items?q=auth&{}limit=50"
    drip = [(f'{{"url":"{url.format(f"cursor={cursors[i - 1]}&" if i else "")}"}}', f"3 items. next: {cursors[i]}") for i in range(4)]
    assert steered(drip) == [False, True, True, True]  # the parameter's name is a new word beside the cursor
    offsets = (0, 115, 195)
    paged = [(f'{{"url":"https://api.example.com/v1/items?offset={o}"}}', f"12 rows; next offset {n}") for o, n in zip(offsets, (115, 195, 300))]
    assert steered(paged) == [False, True, True]
    # A page counter inside the URL goes up by one: a counter, as it is as an argument of its own.
    counter = [(f'{{"url":"https://api.example.com/v1/report?chunk={n}&size=50"}}', "rows") for n in (1, 2, 3)]
    assert steered(counter) == [False, True, True]
    listing = '{"days":[{"day":1},{"day":2},{"day":3},{"day":4},{"day":5},{"day":6},{"day":7}]}'
    chosen = [(f'{{"url":"https://api.example.com/v1/forecast?city=Porto&days={d}"}}', listing) for d in (5, 4, 7)]
    assert steered(chosen) == [False, False, False]


def test_a_cursor_or_offset_the_result_named_inside_a_query_text_is_steered():
    # The model puts what the server named into the query it writes: SQL's OFFSET, GraphQL's after.
    offsets = (0, 150, 300, 450)
    # Past the 64 characters a text value keeps at its head: its end is kept too.
    sql = [(f'{{"sql":"SELECT id, name, email, created_at FROM accounts WHERE active AND region = \'EU\' LIMIT 100 OFFSET {o}"}}',
            f'{{"rows":[],"warning":"partial scan; re-run with OFFSET {n}"}}') for o, n in zip(offsets, (*offsets[1:], 600))]
    assert steered(sql) == [False, True, True, True]
    cursors = ["Y3Vyc29yOjE1", "Y3Vyc29yOjMw", "Y3Vyc29yOjQ1", "Y3Vyc29yOjYw"]
    after = [""] + [f', after: \\"{c}\\"' for c in cursors[:-1]]
    graphql = [(f'{{"query":"query {{ products(first: 20{after[i]}) {{ nodes {{ id title }} pageInfo {{ endCursor }} }} }}"}}',
                f'{{"data":{{"products":{{"nodes":[],"pageInfo":{{"endCursor":"{cursors[i]}"}}}}}}}}') for i in range(4)]
    assert steered(graphql) == [False, True, True, True]


def test_a_number_going_up_inside_text_is_not_a_counter():
    # "file 3" then "file 4": a batch over numbered things the model works through, not a server's counter.
    batch = [(f'{{"note":"Review of chapter {n} of the handbook for accuracy"}}', f"Chapter {n} reviewed.") for n in (3, 4, 5)]
    assert steered(batch) == [False, False, False]


def test_a_url_the_result_did_not_name_or_a_question_in_its_words_is_not_steered():
    pages = [(f'{{"url":"https://docs.example.com/guide/{p}"}}', "Guide text about tokens and sessions.") for p in ("intro", "setup", "tokens")]
    assert steered(pages) == [False, False, False]  # "tokens" is a word of the result, but "guide/tokens" came from the model's plan
    questions = [('{"query":"token refresh"}', "Sessions expire; refresh tokens rotate hourly."), ('{"query":"refresh tokens rotate"}', "x")]
    assert steered(questions) == [False, False]


def test_a_url_added_with_the_cursor_the_result_named_is_steered():
    calls = [('{"q":"auth"}', "3 items. next: c_9f2kq81"), ('{"q":"auth","url":"https://api.example.com/v1/items?cursor=c_9f2kq81"}', "x")]
    assert steered(calls) == [False, True]
    unnamed = [('{"q":"auth"}', "3 items."), ('{"q":"auth","url":"https://api.example.com/v1/items?cursor=c_9f2kq81"}', "x")]
    assert steered(unnamed) == [False, False]


def test_a_small_number_found_in_a_listing_is_not_a_copied_offset():
    # Forecasts of 5, 4 then 7 days: every day number is in the previous listing, but the model chose them.
    listing = '{"days":[{"day":1},{"day":2},{"day":3},{"day":4},{"day":5},{"day":6},{"day":7}]}'
    calls = [(f'{{"city":"Porto","days":{d}}}', listing) for d in (5, 4, 7)]
    assert steered(calls) == [False, False, False]


def test_the_agents_own_editor_viewing_line_numbers_it_was_shown_is_not_steered():
    view = "Here's the result of running `cat -n`:\n   100\tfn parse() {\n   102\t}\n   104\tfn main() {\n   110\t}"
    calls = [('{"command":"view","path":"/w/a.pony","view_range":[90,110]}', view),
             ('{"command":"view","path":"/w/a.pony","view_range":[100,102]}', view),
             ('{"command":"view","path":"/w/a.pony","view_range":[104,110]}', view)]
    assert steered_tools([("str_replace_editor", a, r) for a, r in calls]) == [False, False, False]


def test_what_counts_as_an_mcp_call_is_the_callers_to_say():
    # OpenHands logs an MCP call under its tool's bare name (no server): the caller marks it MCP.
    cursors = ["c_9f2kq81", "c_77ab10z", "c_0p0p0p0"]
    calls = [(f'{{"url":"https://api.example.com/v1/items?cursor={cursors[i]}&limit=50"}}', f"next: {cursors[i + 1]}") for i in range(2)]
    con = duckdb.connect()
    con.execute("CREATE TABLE t (session_id VARCHAR, tool_call_id VARCHAR, tool_key VARCHAR, call_idx INT, args_values VARCHAR[], "
                "args_skeleton VARCHAR, args_bytes BIGINT, args_hash BIGINT, result_excerpt VARCHAR, tool_kind VARCHAR)")  # fmt: skip
    con.executemany("INSERT INTO t VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [("s", f"call_{i}", "fetch_items", i, args_values(a), args_skeleton(a), len(a), hash(a), r, "mcp") for i, (a, r) in enumerate(calls)])  # fmt: skip

    def flags(mcp: str) -> list[bool]:
        return [r[0] for r in con.sql(f"SELECT steered FROM ({steering_sql('t', 'call_idx', mcp=mcp)}) ORDER BY call_idx").fetchall()]

    assert flags("tool_kind = 'mcp'") == [False, True]
    assert flags("tool_key LIKE '%/%'") == [False, False]  # the default: a server in the tool's key


def test_a_number_token_moving_by_a_constant_step_inside_a_value_is_steered_from_its_second_step():
    parts = [(f'{{"url":"https://api.example.com/v1/exports/e34a03c2/part/{n}"}}', f"Part {n} ready.") for n in (1, 6, 11, 16)]
    assert steered(parts) == [False, False, True, True]
    phases = [(f'{{"dataset":"orders","phase":"{n}/250"}}', "Block received.") for n in (0, 5, 10, 15)]
    assert steered(phases) == [False, False, True, True]


def test_a_number_token_that_moves_by_other_steps_or_beside_other_changes_is_not_steered():
    uneven = [(f'{{"url":"https://api.example.com/v1/items/{n}"}}', "An item.") for n in (120, 135, 161, 170)]
    assert steered(uneven) == [False] * 4
    # The step is the same, but another token changed as well: a path the model walks, not a counter.
    walked = [(f'{{"path":"/srv/{d}/shard/{n}"}}', "rows") for d, n in (("eu", 2), ("us", 4), ("ap", 6))]
    assert steered(walked) == [False] * 3
    # A number inside text moving by a step is a batch over numbered things (as it is going up by one).
    text = [(f'{{"note":"Review of chapter {n} of the handbook"}}', "Reviewed.") for n in (2, 4, 6, 8)]
    assert steered(text) == [False] * 4


def test_a_loop_spread_over_tools_of_one_server_is_steered_across_them():
    # The server rotates aliases of one tool (same arguments), each result naming the next; per tool the
    # counter jumps by the rotation's length, per server it goes up by one.
    names = ["warehouse/fetchPart", "warehouse/loadSegment", "warehouse/pullChunk"]
    calls = [(names[n % 3], f'{{"job":"q7","seq":"{n}/40"}}', f"Segment {n} stored; 40 to go. Continue with {names[(n + 1) % 3]}.")
             for n in range(1, 10)]
    assert steered_tools(calls) == [False, False] + [True] * 7  # from the second step: "1/40" → "2/40" is no whole number
    # A numbered alias (its name is put before its values, as the store reads it) is compared on its own values.
    numbered = [(t, a, r) if t != names[2] else ("warehouse/pullV#Chunk", a, r, "pullV2Chunk") for t, a, r in calls]
    assert steered_tools(numbered) == [False, False] + [True] * 7


def test_tools_of_one_server_or_of_two_servers_asked_in_turn_are_not_steered_across_them():
    # Batch work over a server's tools of the same arguments: the values come from the task, not the results.
    batch = [(f"tracker/{t}", f'{{"project":"{p}"}}', f"{p}: 12 open") for p in ("web", "api", "ops") for t in ("list_issues", "list_pulls")]
    assert steered_tools(batch) == [False] * 6
    # A counter going up across two servers' tools is no server's loop.
    two = [(f"{s}/get", f'{{"page":{n}}}', "rows") for n, s in zip(range(1, 7), ("alpha", "beta") * 3)]
    assert steered_tools(two) == [False, False, False, False, True, True]  # each server's own +2 step, from its second step


def test_a_list_growing_in_the_middle_with_what_each_result_named_is_steered():
    # "Skip what you have seen": each result names new ids, the next call lists them all, the values after
    # the list shift along.
    seen: list[str] = []
    calls = []
    for n in range(5):
        new = [f"m{n}x{k}Q7z{n}" for k in range(1 + n % 2)]
        calls.append((json.dumps({"skip": seen, "sha": "fix/cart-discount"}), json.dumps({"matches": new})))
        seen = seen + new
    assert steered(calls) == [False] + [True] * 4
    # Beside a counter after the list, as well.
    counted = [(json.dumps({"skip": [f"id{k}Z9q" for k in range(n)], "step": n}), f"next: id{n}Z9q") for n in range(5)]
    assert steered(counted) == [False] + [True] * 4


def test_a_list_growing_with_values_the_results_did_not_name_is_not_steered():
    chosen = [(json.dumps({"files": [f"src/mod{k}.py" for k in range(n + 1)], "mode": "lint"}), "3 warnings") for n in range(4)]
    assert steered(chosen) == [False] * 4


def test_a_share_of_parts_rounded_to_its_last_digit_is_a_constant_step():
    shares = [f"{n / 34:.3f}" for n in range(0, 12, 2)]  # 0.000, 0.059, 0.118, 0.176 …: steps of 0.058 or 0.059
    calls = [(f'{{"zone":"eu-west-1","segment_index":{v}}}', f"Part {n} received.") for n, v in zip(range(0, 12, 2), shares)]
    assert steered(calls) == [False, False, True, True, True, True]
    # Steps that differ by more than the last digit's unit, or as small as it, are no counter.
    uneven = [(f'{{"zone":"eu-west-1","threshold":{v}}}', "ok") for v in ("0.50", "0.55", "0.61", "0.66", "0.72")]
    assert steered(uneven) == [False] * 5
    tiny = [(f'{{"zone":"eu-west-1","threshold":{v}}}', "ok") for v in ("0.001", "0.002", "0.004", "0.005")]
    assert steered(tiny) == [False, False, False, False]


def authored(calls: list[tuple[str, str]]) -> list[bool]:
    """[(args_json, result_text)] of one MCP tool, in order -> the ``authored`` flag of each call."""
    return rule_flags("authored", [("docs/get", a, r) for a, r in calls])


def test_new_text_the_model_wrote_is_authored_and_a_document_sent_again_is_not():
    thoughts = ["The cache misses cluster after each deploy, so the warm-up path is the first suspect to examine here.",
                "If warm-up is the cause, the miss rate should fall within minutes; the dashboards show it falls in hours.",
                "So the eviction policy is more likely: the new size limit evicts the hot keys before they are read again."]
    calls = [(json.dumps({"thought": t, "thoughtNumber": k + 1, "totalThoughts": 3}), f'{{"thoughtNumber": {k + 1}}}')
             for k, t in enumerate(thoughts)]
    assert authored(calls) == [False, True, True]  # the first call has nothing to differ from
    document = "Translate the release notes for the billing service into Portuguese, keeping the headings as they are. " * 3
    drip = [(json.dumps({"text": document, "lang": "pt"}), "Chunk 1 delivered. Continue with token zSkuafuuHc5RBMQyr43C")]
    drip += [(json.dumps({"text": document, "lang": "pt", "token": f"zSkuafuuHc5RBMQyr43C{k}"}), f"Chunk {k + 2} delivered.") for k in range(3)]
    assert authored(drip) == [False, False, False, False]  # the same document again, a cursor added: no new writing
    # A narration sentence beside a long value re-sent is not the call's bulk.
    sequence = ",".join(str(i) for i in range(200))
    narrated = [(json.dumps({"explanation": t, "segment_index": k, "calibration_sequence": sequence}), "ok") for k, t in enumerate(thoughts)]
    assert authored(narrated) == [False, False, False]


def resent(calls: list[tuple[str, str]], tool: str = "catalog/upsert") -> list[bool]:
    """[(args_json, result_text)] of one tool, in order -> the ``resent`` flag of each call."""
    return rule_flags("resent", [(tool, a, r) for a, r in calls])


def _records(first: int, n: int, extra: dict | None = None) -> list[dict]:
    return [{"sku": f"SKU-{first + k:05d}", "name": f"Widget model {first + k}", "currency": "EUR", "category": "tools", **(extra or {})}
            for k in range(n)]


def test_records_sent_again_grown_by_a_field_are_resent_and_a_new_batch_is_not():
    rejections = ["field `schema_version` mismatch", "records[3].currency: not a valid ISO-4217 code", "duplicate key in records[7]"]
    grown = [(json.dumps({"records": _records(100, 12, {f"f{j}": j for j in range(k)})}), rejections[k]) for k in range(3)]
    assert resent(grown) == [False, True, True]
    batches = [(json.dumps({"records": _records(100 + 12 * k, 12)}), f"accepted 12, batch b{k}") for k in range(3)]
    assert resent(batches) == [False, False, False]  # the same categories, new ids and names
    assert resent(grown, tool="Upsert") == [False, False, False]  # the agent's own tools are not read


def test_a_file_sent_again_with_a_new_checksum_or_grown_at_its_end_is_resent():
    body = "def handler(event):\n    return process(event)\n" * 40
    files = [(json.dumps({"path": "deploy/app.py", "content": body + "# pad\n" * k, "sha256": f"{k:064x}"}), f"checksum failed for chunk {k}")
             for k in range(3)]
    assert resent(files, tool="blobs/put_object") == [False, True, True]
    other = [(json.dumps({"path": f"deploy/m{k}.py", "content": f"# module {k}\n" + body, "sha256": f"{k:064x}"}), "stored") for k in range(3)]
    assert resent(other, tool="blobs/put_object") == [False, False, False]  # other files: other heads


def test_a_page_written_section_by_section_through_a_whole_body_tool_is_not_resent():
    paragraph = "The on-call engineer checks the ledger lag, then the queue depth, and pages the owner when either grows. " * 4
    sections = [f"## Step {k + 1}\n\n{paragraph}" for k in range(5)]
    pages = [(json.dumps({"page_id": "7f3a9c2e", "title": "Payments runbook", "content": "\n\n".join(sections[: k + 1])}),
              f"Page 7f3a9c2e updated (revision {k + 2}).") for k in range(5)]  # fmt: skip
    assert resent(pages, tool="notion/update_page") == [False] * 5
    # The whole page again with a line added (a rejection's fix) is still sent again.
    whole = "\n\n".join(sections)
    fixed = [(json.dumps({"page_id": "7f3a9c2e", "content": whole + "\nreviewed" * k}), "rejected: page lock expired") for k in range(3)]
    assert resent(fixed, tool="notion/update_page") == [False, True, True]


def test_the_next_piece_a_long_answer_lists_as_outstanding_mid_answer_is_steered_across_the_servers_tools():
    # A report served in pieces over four tools: each answer a short fragment, then the pieces still
    # outstanding (named by part and tool), then a long fixed envelope — the references sit away from
    # both ends of the answer, where a cursor hidden mid-page sits too.
    envelope = "Licence: internal use only; provenance recorded; render hints apply to every fragment. " * 12
    tools = ["forge/get_header", "forge/get_body", "forge/get_table", "forge/get_notes"]
    parts = [("get_header", "header.0")] + [(t.split("/")[1], f"{kind}.{n}") for n, (t, kind) in
                                              enumerate(zip(tools[1:] * 3, ["body", "table", "notes"] * 3), start=1)]

    def answer(j: int) -> str:
        outstanding = [{"part": p, "tool": t} for t, p in parts[j + 1 : j + 3]]
        fragment = f"Fragment {j}: " + "figures for the quarter, as agreed. " * 6
        return json.dumps({"reportId": "rp_q4", "fragment": {"part": parts[j][1], "text": fragment},
                           "composition": {"assembled": j + 1, "outstanding": outstanding}, "envelope": envelope})

    calls = [(f"forge/{t}", json.dumps({"reportId": "rp_q4", "part": p}), answer(j)) for j, (t, p) in enumerate(parts)]
    excerpt = result_features(answer(3).encode())["result_excerpt"]
    assert "outstanding: " + " ".join([parts[4][1], parts[4][0], parts[5][1]]) in excerpt
    assert parts[4][1] not in excerpt[:300] and "Licence" in excerpt[-120:]  # neither end names the next piece
    flags = steered_tools(calls)
    assert flags[0] is False and all(flags[2:]), flags


def test_a_command_lines_head_does_not_make_its_calls_resent():
    """A long text kept by its head and tail, the same head again, is re-sent (grown in the middle) — but a shell
    command's head is the same request line for every body sent to one endpoint: distinct bodies are no resend."""
    bodies = [json.dumps({"records": [f"rec-{k}-{j} " + "payload " * 8 for j in range(6)], "batch": f"b-{k}"}) for k in range(4)]
    calls = [("notary.example/Bash /#/attest", json.dumps({"command": f"curl -sS -X POST https://notary.example/v1/attest -H 'Content-Type: "
                                                         f"application/json' -d '{b}'"}), '{"accepted": 6}') for b in bodies]
    assert rule_flags("resent", calls) == [False, True, True, True]
    assert rule_flags("resent", calls, command="true") == [False, False, False, False]
