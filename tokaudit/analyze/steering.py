"""The server-steering rule: which tool calls a server's previous answer dictated, as DuckDB SQL.

A malicious server steers an agent by answering each call with what the next call must say: a
counter to send one higher, a cursor, an offset, a value to copy back. ``steering_sql`` compares
every tool call with the calls before it in its session — the previous call of its tool and shape,
of its tool whatever the shape, and (for an MCP call) the session's previous call when another tool of
its server made it — and marks it ``steered`` when its arguments changed only in ways the earlier call
and its result dictated (``_STEERED_RULE``, per argument value). Beside it the rule derives what the
chain detectors read of each call: ``shape_hash`` (its arguments' keys), ``values_hash``,
``unnarrated_hashes`` (a narration of the call in one sentence), ``alias_steered``, ``authored``
(``AUTHORED_SQL``) and ``resent`` (``RESENT_SQL``).

It runs inside the store's tool-call query (``analyze.frames``), and its verdicts are kept between
audits (``analyze.steering_cache``): they depend on nothing but the session's own tool calls.
``PROGRESS_SQL`` and ``METER_SQL`` read a result's progress meter, for the rule and for the stall
rule of ``same_tool_chain``.
"""

from __future__ import annotations

from tokaudit.ingest.skeleton import MAX_ARG_VALUE_CHARS, TEXT_CUT

# Free text: two words or more (a question, a draft, a narration of the call), not a token.
PROSE_PATTERN = "\\S\\s+\\S"
# A narration of a call is a sentence: four words or more (a shell command or a topic is shorter).
NARRATION_PATTERN = "\\S+\\s+\\S+\\s+\\S+\\s+\\S"
# Scripts written without spaces between words (Chinese, Japanese, Thai — the scripts the result signature
# reads in pairs of characters, ingest.base._UNSPACED_RUN): four of their characters are a phrase, eight a sentence.
_UNSPACED = "[\\p{Han}\\p{Hiragana}\\p{Katakana}\\p{Thai}]"


def _text_sql(v: str, pattern: str, unspaced_chars: int) -> str:
    """SQL: ``v`` matches ``pattern`` (words with spaces) or holds ``unspaced_chars`` characters of an unspaced
    script in a row. (The script's test runs only on values with non-ASCII characters: a Unicode class in
    the pattern itself made the tool-call query about 7 % slower.)"""
    return (f"CASE WHEN regexp_matches({v}, '{pattern}') THEN true WHEN strlen({v}) = length({v}) THEN false "
            f"ELSE regexp_matches({v}, '{_UNSPACED}{{{unspaced_chars}}}') END")


def _prose_sql(v: str) -> str:
    """SQL: ``v`` is free text (``PROSE_PATTERN``, or a phrase of an unspaced script)."""
    return _text_sql(v, PROSE_PATTERN, 4)


def _narration_sql(v: str) -> str:
    """SQL: ``v`` is a sentence (``NARRATION_PATTERN``, or eight characters of an unspaced script)."""
    return _text_sql(v, NARRATION_PATTERN, 8)


# The session's previous call (an MCP call's own values) sent an id- or path-like value that the result
# before it named: it was fed by the call before.
_LAST_FED = """coalesce(list_bool_or(list_transform(_last_values, lambda x: CASE
    WHEN length(x) < 6 OR _last2_excerpt IS NULL THEN false WHEN NOT contains(_last2_excerpt, x) THEN false
    ELSE regexp_matches(x, '[0-9/.:=+]') END)), false)"""
# A value copied as a token from the result before it: that of the same tool, or — id- or path-like,
# sent to an MCP tool — the session's last result, when the call that returned it had itself been handed
# an id by the result before it (``_LAST_FED``: two tools handing each other tokens), or was the same call
# as that tool's call before (a dispenser) answering little but the token (a grant issuing a new
# token to relay on each round). A receipt acked after a receive of the same arguments (a message came
# with it), a job's status after the submit the task asked for (new arguments each time), are the model
# acting on what it was given, not a relay. (The agent's own tools reading, one after another, the files
# a search listed is batch work, not a server steering it.)
# (A CASE, its cheap tests first: the relay tests run only for values the session's last result holds.)
_COPIED = f"""coalesce(contains({{excerpt}}, args_values[i]) OR CASE
                 WHEN length(args_values[i]) < 6 OR NOT _mcp THEN false
                 WHEN NOT contains(_last_excerpt, args_values[i]) THEN false
                 WHEN NOT regexp_matches(args_values[i], '[0-9/.:=+]') THEN false
                 ELSE {_LAST_FED}
                      -- A dispenser: the previous call repeated its tool's call two before it, answering little but the token.
                      OR (_last_tool = _last3_tool AND _last_values = _last3_values
                          AND length(_last_excerpt) <= length(args_values[i]) + 32) END, false)"""

# The words, numbers and ids of a value (a URL, a path, a query string, SQL, a GraphQL query). A value of an
# MCP call whose new tokens (one to three) include evidence (``_TOKEN_EVIDENCE``) and no other id or
# number — the rest as it was, new words aside (the parameter's name) — carries a cursor or counter the
# server chose (…/items?cursor=c_77ab10z&limit=50). Words alone are not enough: a docs page named
# after a word of the last page is the model's own choice.
_TOKENS = "list_filter(string_split_regex({v}, '[^A-Za-z0-9_-]+'), lambda x: x != '')"
# A new token is evidence when it is an id (digits, four characters or more) the result named, a number
# of three digits or more the result named, or — in a value without spaces — the number one above a
# token of the value before ("…?chunk=3" → "…?chunk=4": a page counter inside a URL; in text, "file 3"
# → "file 4" is a batch over numbered things).
_TOKEN_EVIDENCE = """((length(x) >= 4 AND regexp_matches(x, '[0-9]') AND contains({excerpt}, x))
    OR (regexp_full_match(x, '[0-9]{{1,18}}') AND ((length(x) >= 3 AND {named:x})
                                                 OR (NOT regexp_matches(args_values[i], '\\s')
                                                     AND list_contains({prev_tokens}, CAST(TRY_CAST(x AS BIGINT) - 1 AS VARCHAR))))))"""
# The tokens of three values in a row: one token alone changed, a number moving by the same step both
# times (not zero), the rest kept.
_TOKEN_STEP = """len({tokens}) = len({prev_tokens}) AND len({prev_tokens}) = len({prev2_tokens})
    AND len(list_filter(range(1, len({tokens}) + 1), lambda k: {tokens}[k] != {prev_tokens}[k])) = 1
    AND list_bool_and(list_transform(range(1, len({tokens}) + 1), lambda k: CASE
        WHEN {tokens}[k] = {prev_tokens}[k] THEN {prev_tokens}[k] = {prev2_tokens}[k]
        ELSE regexp_full_match({tokens}[k] || ' ' || {prev_tokens}[k] || ' ' || {prev2_tokens}[k], '[0-9]{{1,18}} [0-9]{{1,18}} [0-9]{{1,18}}')
             AND TRY_CAST({tokens}[k] AS BIGINT) - TRY_CAST({prev_tokens}[k] AS BIGINT)
                 = TRY_CAST({prev_tokens}[k] AS BIGINT) - TRY_CAST({prev2_tokens}[k] AS BIGINT) END))"""
# The tokens of a value that the value before did not have.
_NEW_TOKENS = "list_filter({tokens}, lambda x: NOT list_contains({prev_tokens}, x))"


def _named_whole(pattern: str) -> str:
    """SQL: the result before names ``pattern`` (a regular expression) as a whole, not inside a longer number."""
    return f"regexp_matches({{excerpt}}, '(^|[^0-9])' || {pattern} || '($|[^0-9])')"

def _fill(sql: str, *slots: tuple[str, str]) -> str:
    """``sql`` with each ``(slot, text)`` put in, in order."""
    for slot, text in slots:
        sql = sql.replace(slot, text)
    return sql


# Counters written as words: numbers and ordinals (English), Roman numerals — and, apart, single letters
# (a letter "i" or "v" is not the Roman one).
_ONES = "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty"
_ORDINALS = ("first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth thirteenth fourteenth fifteenth "
             "sixteenth seventeenth eighteenth nineteenth twentieth")
_ROMAN = "i ii iii iv v vi vii viii ix x xi xii xiii xiv xv xvi xvii xviii xix xx"
NUMBER_WORDS = {w: n for words in (_ONES, _ORDINALS, _ROMAN) for n, w in enumerate(words.split(), start=1)}
LETTERS = {chr(ord("a") + n): n + 1 for n in range(26)}


def _spelled_up_by_one(words: dict[str, int]) -> str:
    """SQL: the last word of ``args_values[i]`` is one above that of ``{prev}[i]`` in ``words``."""
    table = "MAP {{" + ", ".join(f"'{w}': {n}" for w, n in words.items()) + "}}"  # braces doubled: the rule is formatted later
    last = "lower(regexp_extract({v}, '([A-Za-z]+)$', 1))"
    return (f"coalesce(({table})[{last.format(v='args_values[i]')}] = ({table})[{last.format(v='{prev}[i]')}] + 1, false)")


# A call is *steered* when every argument value that changed since the previous call of the same
# tool and argument shape (the same keys) is evidence that the server chose it:
#   - it went up by one, or moved by the same step as before, up or down (a counter, page, offset or
#     countdown of steps "remaining"; for an MCP call, a date moving a day on, a numbered word such as "step-07", or a counter
#     spelled out — "phase two", "Part IV", section "c"; other numbers inside text are not counters —
#     "f3.py" → "f4.py" is a batch over numbered files);
#   - it was copied as a token from that call's result (a cursor, an id, a scope the result named: a digit or
#     punctuation in it, or twelve characters or more — a plain word such as a name is the model's choice);
#   - for an MCP call: a number of three digits or more, or a value whose numbers alone changed, that
#     the result named as a whole number (an offset the server chose, "next_offset=289"; "part 4") — a
#     day or count below 100 is in any listing, and an editor's view range copied from the line
#     numbers it showed is the model's own reading, so neither counts;
#   - for an MCP call: the ids or numbers that changed inside a URL, a path or a query (SQL, GraphQL:
#     ``_TOKENS``);
#   - for an MCP call, when it looks like an id or path, not a word: it was copied from the session's
#     last result, whichever tool returned it (two tools handing each other tokens; text with spaces
#     copied into an edit is editing);
#   - it restores a long JSON value (one cut at the stored length) sent the call before (a REPAIR
#     resend; re-running a shell command is not one);
# and any value added was copied from that result (cumulative restating; an added URL carrying an id
# the result named). The server, not the task, chose what the model sent next. Batch work (values
# from an earlier listing, ids in any order), polling (nothing changed) and new questions are not steered.
# Free text that changed or was added (words with spaces) is neutral beside such evidence: clients
# have the model narrate each call in an argument of its own (an "explanation" or "reason" — new
# words every time), which says nothing about who chose the counter or cursor next to it; alone,
# changed text is a new question. Each value scores 1 (evidence), 0 (unchanged, or narration) or -64
# (anything else: more than the 32 values a call keeps could make up); a call is steered when the
# sum is positive.
# Values are compared slot by slot (ingest.skeleton.args_values); CASE keeps the costlier tests to
# the values that need them. ``_CHANGED`` is the call's own test, ``_VALUE_SCORE`` value ``i``'s score,
# ``_STEERED_RULE`` the two in one expression (the scores summed by a lambda over the call's values).
_CHANGED = "{prev} IS NOT NULL AND args_values IS NOT NULL AND len(args_values) >= len({prev}) AND args_values != {prev}"
_VALUE_SCORE = _fill(
    """CASE
        WHEN i > len({prev}) THEN CASE
            WHEN length(args_values[i]) >= 4 AND {copied} THEN 1
            -- An added URL or path of an MCP call carrying an id (digits, six characters or more) the result named.
            WHEN _mcp AND NOT regexp_matches(args_values[i], '\\s')
                 AND coalesce(list_bool_or(list_transform({tokens}, lambda x: length(x) >= 6 AND regexp_matches(x, '[0-9]')
                                                                          AND contains({excerpt}, x))), false) THEN 1
            WHEN {prose} THEN 0
            ELSE -64 END
        WHEN args_values[i] = {prev}[i] THEN 0
        WHEN regexp_full_match(args_values[i], '-?[0-9]+([.][0-9]+)?')  -- parse only what can be a number
             AND coalesce(TRY_CAST(args_values[i] AS DOUBLE) - TRY_CAST({prev}[i] AS DOUBLE) = 1
                      OR (TRY_CAST(args_values[i] AS DOUBLE) != TRY_CAST({prev}[i] AS DOUBLE)
                          -- The same step; a fraction rounded to its last digit may miss it by one unit of that
                          -- digit (0.029, 0.059, 0.088: a share of parts done), when the step is ten units or more.
                          AND abs((TRY_CAST(args_values[i] AS DOUBLE) - TRY_CAST({prev}[i] AS DOUBLE))
                                  - (TRY_CAST({prev}[i] AS DOUBLE) - TRY_CAST({prev2}[i] AS DOUBLE)))
                              <= CASE WHEN contains(args_values[i], '.')
                                           AND abs(TRY_CAST({prev}[i] AS DOUBLE) - TRY_CAST({prev2}[i] AS DOUBLE))
                                               >= 10 * {last_digit}
                                      THEN 1.01 * {last_digit} ELSE 0 END),
                      false) THEN 1
        -- A date of an MCP call moving a day on, or by the same step as before (a week, a month of days): a
        -- calendar counter ("2024-03-04" → "2024-03-05").
        WHEN _mcp AND regexp_full_match(args_values[i], '[0-9]{{4}}-[0-9]{{2}}-[0-9]{{2}}')
             AND coalesce(TRY_CAST(args_values[i] AS DATE) - TRY_CAST({prev}[i] AS DATE) = 1
                          OR (TRY_CAST(args_values[i] AS DATE) != TRY_CAST({prev}[i] AS DATE)
                              AND TRY_CAST(args_values[i] AS DATE) - TRY_CAST({prev}[i] AS DATE)
                                  = TRY_CAST({prev}[i] AS DATE) - TRY_CAST({prev2}[i] AS DATE)), false) THEN 1
        -- A numbered word of an MCP call going up by one ("step-07" → "step-08", "seg7" → "seg8"); a
        -- file name ("f3.py") or a path has more than a word and its number.
        WHEN _mcp AND regexp_full_match(args_values[i], '{WORD_COUNTER}') AND regexp_full_match({prev}[i], '{WORD_COUNTER}')
             AND regexp_extract(args_values[i], '{WORD_COUNTER}', 1) = regexp_extract({prev}[i], '{WORD_COUNTER}', 1)
             AND TRY_CAST(regexp_extract(args_values[i], '{WORD_COUNTER}', 2) AS BIGINT)
                 = TRY_CAST(regexp_extract({prev}[i], '{WORD_COUNTER}', 2) AS BIGINT) + 1 THEN 1
        -- A counter spelled out in an MCP call going up by one, the rest of the value kept ("phase one" →
        -- "phase two", "third" → "fourth", "Part IV" → "Part V", section "c" → "d").
        WHEN _mcp AND regexp_replace(args_values[i], '[A-Za-z]+$', '') = regexp_replace({prev}[i], '[A-Za-z]+$', '')
             AND ({spelled:NUMBER_WORDS} OR {spelled:LETTERS}) THEN 1
        -- Copied as a token: an id, path or cursor (a digit or punctuation in it, or long). A plain word the result
        -- holds — a name, a category among a listing's — is the model's own choice (the owner of a to-do item).
        WHEN length(args_values[i]) >= 4 AND NOT regexp_matches(args_values[i], '\\s')
             AND (length(args_values[i]) >= 12 OR regexp_matches(args_values[i], '[0-9/.:=+_@#-]'))
             AND {copied} THEN 1
        WHEN _mcp AND contains({excerpt}, args_values[i])  -- cheap, and needed by the exact test below
             AND regexp_matches(args_values[i], '[0-9]') AND (length(args_values[i]) >= 3 OR regexp_matches(args_values[i], '[^0-9]'))
             AND translate(args_values[i], '0123456789', '') = translate({prev}[i], '0123456789', '')  -- cheap, then exact
             AND regexp_replace(args_values[i], '[0-9]+', '#', 'g') = regexp_replace({prev}[i], '[0-9]+', '#', 'g')
             AND coalesce({named:value}, false) THEN 1
        WHEN _mcp
             -- A few tokens changed, the rest kept (a cursor in a GraphQL query, an offset in SQL): the two
             -- values start or end alike (a cheap test first).
             -- (A CASE, not AND: DuckDB evaluates every operand of an AND inside a lambda.)
             AND CASE WHEN left(args_values[i], 8) = left({prev}[i], 8) OR right(args_values[i], 8) = right({prev}[i], 8) THEN
                 coalesce(len({tokens}) >= 2 AND len({new_tokens}) BETWEEN 1 AND 3
                          AND list_bool_or(list_transform({new_tokens}, lambda x: {token_evidence}))
                          AND list_bool_and(list_transform({new_tokens}, lambda x: NOT regexp_matches(x, '[0-9]') OR {token_evidence})), false)
                 ELSE false END
             THEN 1
        WHEN length(args_values[i]) >= {long} AND args_skeleton LIKE '{{%' AND coalesce(args_values[i] = {prev2}[i], false) THEN 1
        -- A number standing as its own token in a URL, path or label of an MCP call moving by the same step
        -- as the call before ("…/part/6" → "…/part/11", "5/250" → "10/250"), nothing else changed.
        WHEN CASE WHEN NOT _mcp OR {prev2}[i] IS NULL THEN false  -- cheap tests first, one by one
                  WHEN translate(args_values[i], '0123456789', '') != translate({prev}[i], '0123456789', '') THEN false
                  WHEN translate({prev}[i], '0123456789', '') != translate({prev2}[i], '0123456789', '') THEN false
                  WHEN regexp_matches(args_values[i], '\\s') THEN false
                  ELSE coalesce({token_step}, false) END THEN 1
        -- A window sliding on, in an MCP call: this value is one the previous call sent in another slot (its
        -- end is this call's start), or this slot's previous value moved to another slot and this one went up
        -- (the new end: a number, a date or a time). A time range or a span walked window by window is a page
        -- counter spelled as a range.
        WHEN _mcp AND regexp_matches(args_values[i], '[0-9]') AND list_contains({prev}, args_values[i]) THEN 1
        WHEN _mcp AND regexp_matches(args_values[i], '[0-9]') AND list_contains(args_values, {prev}[i])
             -- Up: a number, or a date or time of the same spelling (ids have no order).
             AND coalesce(TRY_CAST(args_values[i] AS DOUBLE) > TRY_CAST({prev}[i] AS DOUBLE),
                          regexp_matches(args_values[i], '^[0-9]{{4}}-[0-9]{{2}}-[0-9]{{2}}')
                          AND length(args_values[i]) = length({prev}[i]) AND args_values[i] > {prev}[i]) THEN 1
        WHEN {prose} THEN 0
        ELSE -64
    END""",
    # In this order: a slot's SQL may hold the slots after it.
    ("{copied}", _COPIED),
    # One unit of a decimal value's last digit (0.001 for "0.029").
    ("{last_digit}", "pow(10, -(length(args_values[i]) - strpos(args_values[i], '.')))"),
    ("{prose}", _prose_sql("args_values[i]").replace("{", "{{").replace("}", "}}")),  # the rule is formatted later
    ("{WORD_COUNTER}", "([A-Za-z][A-Za-z_]*[-_]?)([0-9]{{1,9}})"),
    ("{spelled:NUMBER_WORDS}", _spelled_up_by_one(NUMBER_WORDS)),
    ("{spelled:LETTERS}", _spelled_up_by_one(LETTERS)),
    ("{token_step}", _TOKEN_STEP),
    ("{new_tokens}", _NEW_TOKENS),
    ("{token_evidence}", _TOKEN_EVIDENCE),
    ("{named:x}", _named_whole("x")),  # a token: digits only
    ("{named:value}", _named_whole("regexp_escape(args_values[i])")),
    ("{tokens}", _TOKENS.format(v="args_values[i]")),
    ("{prev_tokens}", _TOKENS.format(v="{prev}[i]")),
    ("{prev2_tokens}", _TOKENS.format(v="{prev2}[i]")),
)
_STEERED_RULE = _CHANGED + " AND list_sum(list_transform(range(1, len(args_values) + 1), lambda i: " + _VALUE_SCORE + ")) > 0"

# The keys of a call's arguments, from its skeleton: calls of one tool asking different kinds of
# question (other keys) are compared separately.
SHAPE_SQL = """hash(regexp_extract_all(args_skeleton, '"((?:[^"\\\\]|\\\\.)*)"\\s*:', 1))"""


# A progress meter under a progress-like key: "coverage_pct": 40, "progress": 0.4, progress=0.4,
# <progress>0.4</progress>. A key that measures a change, not progress ("change_pct", "growth_percent" of a
# quote) is no meter.
PROGRESS_SQL = r"""TRY_CAST(
    list_transform([regexp_extract(result_excerpt, '(?i)([a-z_]*(?:pct|percent|progress|completion)[a-z_]*)"?\s*[:=>]\s*"?([0-9]+(?:[.][0-9]+)?)',
                                   ['k', 'v'])],
                   lambda m: CASE WHEN NOT regexp_matches(m.k, '(?i)change|delta|diff|growth|gain|loss|return|yield|rate|margin')
                                  THEN nullif(m.v, '') END)[1] AS DOUBLE)"""

# A countdown in a result: a number under a key that says how long until the job is done or how much of it is
# left ("etaSeconds": 30, "eta_s": 45, "ETA": 40, "estimated_remaining_s": 120, "time_left": 9, "readyIn": 30). A key
# must name it whole ("beta", "metadata" do not), and an interval to wait before asking again ("retry_after",
# "poll_interval") is no countdown: a server gives the same one every time. Read from any tool's result (a
# status URL the agent polls with curl is a service's answer too); a cheap test before the extraction.
ETA_SQL = r"""CASE WHEN regexp_matches(result_excerpt, '(?i)eta|remaining|time_?left|ready_?in') THEN TRY_CAST(nullif(regexp_extract(result_excerpt,
    '(?:^|[^A-Za-z0-9])((?:[a-z]+_)*(?:eta|ETA)(?:[A-Z_][A-Za-z_]*)?|[A-Za-z_]*(?:[Rr]emaining|[Tt]ime_?[Ll]eft|[Rr]eady_?[Ii]n)[A-Za-z_]*)"?\s*[:=]\s*"?([0-9]+(?:[.][0-9]+)?)',
    2), '') AS DOUBLE) END"""

# A progress meter in a result: one under a progress-like key (``PROGRESS_SQL``), else the first "NN%" or
# "N of M" / "N/M". A server that paces a chain
# (LoopTrap: "coverage 60 % — continue") shows it rising while the model keeps calling with new
# arguments of the same keys; a job being polled shows it rising too, but the poll's arguments never
# change. Free-text commands are left out: their output (curl's progress table) is full of percents.
METER_SQL = f"""coalesce({PROGRESS_SQL},
    TRY_CAST(nullif(regexp_extract(result_excerpt, '([0-9]+(?:[.][0-9]+)?) ?%', 1), '') AS DOUBLE),
    TRY_CAST(nullif(regexp_extract(result_excerpt, '([0-9]+) ?(?:/|of) ?[0-9]+', 1), '') AS DOUBLE))"""


# A value's head: text keeps its first characters and its last (ingest.skeleton._cut); a draft re-sent
# grown at its end is the same value by its first ones (a cycle re-sending a growing draft).
HEAD = f"CASE WHEN length({{v}}) <= {MAX_ARG_VALUE_CHARS} THEN {{v}} WHEN regexp_matches({{v}}, '\\s') THEN left({{v}}, {MAX_ARG_VALUE_CHARS}) ELSE {{v}} END"
HEADS = "list_transform({v}, lambda h: " + HEAD.format(v="h") + ")"

# A call re-sends its tool's previous call: the same values; every long text of that call again (a file or
# document by its head, ``HEAD``: as it was or grown by a line, beside a new checksum or attempt number); or at least
# ``RESENT_SHARE`` of its distinct values were in that call too (records sent again after a rejection, grown by the
# field the rejection named; a new batch of records shares its categories, not its ids and names). Only MCP calls
# are read. A long text that came back ``WRITTEN_ON_BYTES`` or more longer was written on — a page written section
# by section through a tool that takes the whole body — not re-sent: a rejection asks for a fix, not a new section.
RESENT_SHARE = 0.8
WRITTEN_ON_BYTES = 400
_PREV_LONG = f"list_filter(_any_values, lambda x: length(x) > {MAX_ARG_VALUE_CHARS} AND regexp_matches(x, '\\s'))"
# A narration is a sentence (tens of words); a call's only long value (cut to its head and tail at
# MAX_ARG_VALUE_CHARS) with more than this many bytes of the call to itself is a document: a file written
# whole, a draft — text the call is for.
NARRATION_MAX_BYTES = 1024
# The call has exactly one long value (cut to its head and tail).
_ONE_LONG_VALUE = f"len(list_filter(args_values, lambda x: length(x) > {MAX_ARG_VALUE_CHARS})) = 1"
_BULK_TEXT = (f"(length({{v}}) > {MAX_ARG_VALUE_CHARS} AND {_ONE_LONG_VALUE} "
              f"AND args_bytes - {MAX_ARG_VALUE_CHARS} * (len(args_values) - 1) > {NARRATION_MAX_BYTES})")
# The call's values, as stored, are its tool's previous call's, but its exact arguments are not: a long text
# changed out of sight, between the head and tail the store keeps (a whole file written again with a fix).
_EDITED_UNSEEN = "coalesce(args_values = _any_values AND args_hash != _any_args_hash, false)"
_NOT_WRITTEN_ON = f"coalesce(args_bytes < _any_args_bytes + {WRITTEN_ON_BYTES}, true)"
RESENT_SQL = f"""CASE WHEN NOT _mcp OR _any_values IS NULL OR len(args_values) = 0 THEN false
    -- The same values: the same call again, unless a long text, kept by its head and tail, grew in the middle
    -- or changed there (the exact arguments differ: a whole file written again with a line fixed is an edit).
    WHEN args_values = _any_values THEN NOT {_EDITED_UNSEEN} AND {_NOT_WRITTEN_ON}
    -- (Not a command line's: a shell command's head is the same call for every request to an endpoint, its body after.)
    WHEN len({_PREV_LONG}) > 0 AND NOT _command AND list_has_all({HEADS.format(v="args_values")}, {HEADS.format(v=_PREV_LONG)})
         THEN {_NOT_WRITTEN_ON}
    ELSE len(list_filter(list_distinct(args_values), lambda x: list_contains(_any_values, x)))
         >= {RESENT_SHARE} * len(list_distinct(args_values)) END"""

# A call carries new text the model wrote: its only long value (``ingest.skeleton._cut`` keeps a text's
# head and tail around ``TEXT_CUT``) is text that starts otherwise than the same argument of the tool's
# previous call (of that shape, else of any). A thought for a scratchpad server, a note, a new query — not a
# value re-sent or grown at its end (a REPAIR resend, cumulative restating; a document sent again with a
# cursor added), not a long list of numbers (no spaces: never cut so), and not a narration sentence beside
# such a value (the call's bulk is then the other value). A tool's first call has nothing to differ from.
# Only MCP calls are read: a chain of the agent's own tools is no verdict whatever it carried.
_CUT_AT = MAX_ARG_VALUE_CHARS + 1
AUTHORED_SQL = f"""CASE WHEN NOT _mcp OR coalesce(_prev_values, _any_values) IS NULL THEN false
    WHEN NOT {_ONE_LONG_VALUE} THEN false
    ELSE coalesce(list_bool_or(list_transform(range(1, len(args_values) + 1), lambda i: CASE
        WHEN length(args_values[i]) < {_CUT_AT + len(TEXT_CUT)} THEN false
        WHEN substr(args_values[i], {_CUT_AT}, {len(TEXT_CUT)}) != '{TEXT_CUT}' THEN false
        ELSE left(args_values[i], 32) IS DISTINCT FROM left(coalesce(_prev_values, _any_values)[i], 32) END)), false) END"""


def _steered_rule(prev: str, prev2: str | None, excerpt: str, values: str = "args_values", rule: str = _STEERED_RULE) -> str:
    """SQL: ``_STEERED_RULE`` (or a part of it, ``rule``) for the call's ``values`` (a column) against the earlier
    call's ``prev`` values, ``prev2`` (the call before that, for steps; None: no such call) and ``excerpt`` (its result)."""
    sql = rule.format(prev=prev, prev2=prev2 or "(CAST(NULL AS VARCHAR[]))", excerpt=excerpt, long=MAX_ARG_VALUE_CHARS)
    # The rule names the call's own values args_values throughout (its slots included).
    return sql.replace("args_values", values) if values != "args_values" else sql


# A relay: an MCP call sending a token the previous MCP call's result named (a reference to resolve next, a handle)
# that neither that call nor the last call of its own tool had sent (a project id every call carries is no relay).
# A token: six characters or more, no spaces, with a digit or one of /.:=+_- (an id, a path, a dotted name, a URN);
# plain words are the model's own. The previous MCP call is the session's last call, or the one before it when the
# last was the agent's own tool.
_RELAY = """list_bool_or(list_transform(_own_values, lambda x: CASE
    WHEN length(x) < 6 OR length(x) > 200 THEN false WHEN NOT contains({excerpt}, x) THEN false
    WHEN regexp_matches(x, '\\s') OR NOT regexp_matches(x, '[0-9/.:=+_-]') THEN false
    ELSE NOT list_contains(coalesce({values}, []), x) AND NOT list_contains(coalesce(_any_values, []), x) END))"""
RELAYED_SQL = f"""CASE WHEN NOT _mcp THEN false
    WHEN _last_server_shape IS NOT NULL THEN coalesce({_RELAY.format(excerpt="_last_excerpt", values="_last_values")}, false)
    WHEN _last_tool IS NOT NULL AND _last2_server_shape IS NOT NULL
         THEN coalesce({_RELAY.format(excerpt="_last2_excerpt", values="_last2_values")}, false)
    ELSE false END"""


def steering_sql(relation: str, order_by: str, mcp: str = "tool_key LIKE '%/%'", command: str = "false") -> str:
    """``relation`` (tool calls with session_id, tool_call_id (one call per pair), tool_key, args_skeleton, args_values,
    args_bytes, args_hash (of the exact arguments) and result_excerpt) plus ``shape_hash``, ``values_hash``, ``unnarrated_hashes``, ``steered``, ``alias_steered``,
    ``authored`` (``AUTHORED_SQL``), ``resent`` (``RESENT_SQL``) and ``relayed`` (``RELAYED_SQL``), calls ordered by ``order_by``.

    A call is compared with the previous call of its tool and shape, and with the previous call of
    its tool whatever the shape (a first call without a cursor, then the same call with one). An MCP
    call is also compared with the session's previous call (or, after one aside, the call before it) when
    another tool of its server made it with arguments of the same keys (``alias_steered``: a loop spread over
    tools the server rotates). A call
    with new JSON arguments of the same keys whose result's progress meter rose (``METER_SQL``) is
    steered too: the server paced it. ``mcp`` (SQL over the relation's columns) tells an MCP call —
    the calls some rules are kept to — from the agent's own tools; ``command`` a call whose arguments are a
    command line (a remote host's call through the agent's shell), whose head does not tell one request from another.
    """
    # The rule against the previous call of the same shape, the one every call meets, is scored over rows of
    # values (``scored``, ``i`` a column), not by a lambda over each call's list: that took twice the time.
    changed = _steered_rule("_prev_values", "_prev2_values", "_prev_excerpt", rule=_CHANGED)
    value_score = _steered_rule("_prev_values", "_prev2_values", "_prev_excerpt", rule=_VALUE_SCORE)
    any_shape = _steered_rule("_any_values", None, "_any_excerpt")
    alias = _steered_rule("_alias_values", "_alias2_values", "_alias_excerpt", values="_own_values")
    # A list argument that grew in the middle ("skip": [the ids so far]) shifts the values after it: the
    # call is compared again with the values the result named taken out where they went in.
    grown = _steered_rule("_prev_values", None, "_prev_excerpt", values="_grown_values")
    return f"""
        WITH s AS (
            SELECT *, {SHAPE_SQL} AS shape_hash, coalesce({mcp}, false) AS _mcp, coalesce({command}, false) AS _command,
                   -- The server of an MCP tool key ("server/tool": a remote host's tool may hold slashes, its path);
                   -- none for the agent's own tools.
                   CASE WHEN coalesce({mcp}, false) THEN nullif(regexp_extract(tool_key, '^([^/]*)/', 1), '') END AS _server,
                   -- An MCP tool's own values (for aliases), without its numbered name, which analyze.frames._tools
                   -- puts first when it masks the number in the key ("fetch_part_#").
                   CASE WHEN NOT coalesce({mcp}, false) THEN NULL WHEN contains(tool_key, '#') THEN args_values[2:]
                        ELSE args_values END AS _own_values
            FROM {relation}
        ), w AS (
            SELECT *, lag(args_values) OVER same_shape AS _prev_values, lag(args_values, 2) OVER same_shape AS _prev2_values,
                   lag(result_excerpt) OVER same_shape AS _prev_excerpt,
                   lag(args_values) OVER same_tool AS _any_values, lag(result_excerpt) OVER same_tool AS _any_excerpt,
                   lag(args_bytes) OVER same_tool AS _any_args_bytes, lag(args_hash) OVER same_tool AS _any_args_hash,
                   lag(shape_hash) OVER same_tool AS _any_shape,
                   lag(_meter) OVER same_shape AS _prev_meter, lag(result_excerpt) OVER same_session AS _last_excerpt,
                   -- The session's previous call and the one before (another tool of the same server, maybe).
                   lag(tool_key) OVER same_session AS _last_tool, lag(_server_shape) OVER same_session AS _last_server_shape,
                   lag(_own_values) OVER same_session AS _last_values,
                   lag(_server_shape, 2) OVER same_session AS _last2_server_shape, lag(_own_values, 2) OVER same_session AS _last2_values,
                   lag(tool_key, 2) OVER same_session AS _last2_tool, lag(result_excerpt, 2) OVER same_session AS _last2_excerpt,
                   lag(tool_key, 3) OVER same_session AS _last3_tool, lag(_own_values, 3) OVER same_session AS _last3_values
            FROM (SELECT *, {METER_SQL} AS _meter, CASE WHEN _server IS NOT NULL THEN hash(_server, shape_hash) END AS _server_shape
                  FROM s)
            WINDOW same_shape AS (PARTITION BY session_id, tool_key, shape_hash ORDER BY {order_by}),
                   same_tool AS (PARTITION BY session_id, tool_key ORDER BY {order_by}),
                   same_session AS (PARTITION BY session_id ORDER BY {order_by})
        ), al AS (
            -- An alias: the session's previous call, made by another tool of the same server with arguments of
            -- the same keys; for a step, the call before it too. When the previous call was an aside (another
            -- server's, or the agent's own: a file read between two calls of the loop), the call before it.
            SELECT *, CASE WHEN _alias_at = 1 THEN _last_values WHEN _alias_at = 2 THEN _last2_values END AS _alias_values,
                   CASE WHEN _alias_at = 1 THEN _last_excerpt WHEN _alias_at = 2 THEN _last2_excerpt END AS _alias_excerpt,
                   CASE WHEN _alias_at = 1 AND _last2_server_shape = _server_shape THEN _last2_values END AS _alias2_values
            FROM (SELECT *, CASE WHEN _last_server_shape = _server_shape THEN CASE WHEN _last_tool != tool_key THEN 1 END
                                 WHEN _last2_server_shape = _server_shape AND _last2_tool != tool_key THEN 2 END AS _alias_at
                  FROM w)
        ), g AS (
            -- Where values went in: the first place after which the rest can follow and the values put there
            -- are tokens of the previous result.
            SELECT *, CASE WHEN _insert_at IS NOT NULL
                           THEN list_concat(args_values[1:_insert_at - 1],
                                            args_values[_insert_at + len(args_values) - len(_prev_values):len(args_values)]) END AS _grown_values
            FROM (SELECT *, CASE WHEN len(args_values) > len(_prev_values) THEN list_filter(range(1, len(_prev_values) + 2), lambda j:
                                     args_values[1:j - 1] = _prev_values[1:j - 1]
                                     AND list_bool_and(list_transform(args_values[j:j + len(args_values) - len(_prev_values) - 1],
                                                                      lambda x: length(x) >= 4 AND contains(_prev_excerpt, x))))[1]
                            END AS _insert_at
                  FROM al)
        ), scored AS (
            -- Each changed call's values against the previous call of its tool and shape: the sum of their scores.
            SELECT session_id, tool_call_id, sum({value_score}) AS _same_shape_score
            FROM (SELECT *, unnest(range(1, len(args_values) + 1)) AS i FROM g WHERE {changed})
            GROUP BY session_id, tool_call_id
        ), v AS (
            SELECT *,
                   -- CASE evaluates each test only on the calls the ones before left undecided; after a call
                   -- of the same shape, the test against the previous call of the tool is the same test.
                   CASE WHEN coalesce({changed} AND _same_shape_score > 0, false) THEN true
                        WHEN _any_shape IS DISTINCT FROM shape_hash AND coalesce({any_shape}, false) THEN true
                        WHEN _grown_values IS NOT NULL AND (_grown_values = _prev_values OR coalesce({grown}, false)) THEN true
                        ELSE coalesce(_meter > _prev_meter AND args_values IS DISTINCT FROM _prev_values AND args_skeleton LIKE '{{%', false)
                   END AS _steered_here,
                   -- A server that spreads one loop over several tools of the same arguments (aliases it
                   -- rotates: fetchPart, loadSegment, pullChunk …): the call against the previous one (``al``).
                   -- (Only where the tool's own calls left it unsteered: the test is costly, and a loop's first
                   -- calls of each name, before the tool has a step of its own, are enough to link the names.)
                   CASE WHEN _alias_values IS NOT NULL AND NOT _steered_here
                        THEN coalesce({alias}, false) ELSE false END AS alias_steered
                   , {RELAYED_SQL} AS relayed
            FROM g LEFT JOIN scored USING (session_id, tool_call_id)
        )
        SELECT * EXCLUDE (_same_shape_score, _prev_values, _prev2_values, _prev_excerpt, _any_values, _any_excerpt, _any_args_bytes, _any_args_hash, _any_shape, _meter, _prev_meter,
                          _last_excerpt, _last3_tool, _last3_values, _mcp, _command, _server, _own_values,
                          _insert_at, _grown_values, _steered_here, _server_shape, _last_tool, _last_server_shape, _last_values,
                          _last2_server_shape, _last2_values, _last2_tool, _last2_excerpt, _alias_at, _alias_values, _alias_excerpt,
                          _alias2_values),
               -- A long text changed out of sight (its head and tail kept, the exact arguments not) is new
               -- values: a whole file written again with a line fixed in its middle.
               CASE WHEN {_EDITED_UNSEEN} THEN hash({HEADS.format(v="args_values")}, args_hash)
                    ELSE hash({HEADS.format(v="args_values")}) END AS values_hash,
               -- For each sentence beside other values of an MCP call, the hash of the values without it. A
               -- call's only long value that makes its bulk is a document, not a narration ({_BULK_TEXT}).
               CASE WHEN len(args_values) > 1 AND _mcp THEN list_transform(
                        list_filter(range(1, len(args_values) + 1),
                                    lambda j: {_narration_sql('args_values[j]')} AND NOT {_BULK_TEXT.format(v='args_values[j]')}),
                        lambda j: hash(list_transform(range(1, len(args_values) + 1),
                                                      lambda i: CASE WHEN i = j THEN '' ELSE {HEAD.format(v="args_values[i]")} END)))
                    ELSE [] END AS unnarrated_hashes,
               _steered_here OR alias_steered AS steered, {AUTHORED_SQL} AS authored, {RESENT_SQL} AS resent
        FROM v
    """
