"""The store's schema, as SQLAlchemy Core tables.

This module is the current shape of the database; the Alembic revisions in
``migrations/versions`` build it step by step, and a test checks that a blank
database upgraded to head has exactly these tables and columns.

Design notes:

* DuckDB rejects the ``SERIAL`` that SQLAlchemy emits for an integer primary
  key, so surrogate ids come from explicit sequences and fact tables use
  natural keys.
* ``ALTER TABLE`` fails on DuckDB tables that carry a ``CREATE INDEX`` index, so
  no secondary indexes are created; primary keys (which do not block ALTER)
  give the lookups ingest needs.
* Rows are keyed by ``source_id`` first: re-ingesting a file replaces exactly
  that file's rows. Duplicates *across* files (the same model request logged
  twice) are resolved at read time by the ``llm_calls_dedup`` view, never by
  deleting another file's rows.
* Column names carry their units: ``*_tokens``, ``*_bytes``, ``*_ms``, ``*_utc``.
  Timestamps are UTC, stored without a zone.
"""

from __future__ import annotations

from sqlalchemy import (
    ARRAY,
    BigInteger,
    Boolean,
    Column,
    Date,
    DateTime,
    Double,
    Integer,
    MetaData,
    Numeric,
    PrimaryKeyConstraint,
    Sequence,
    Table,
    Text,
)
from sqlalchemy.types import UserDefinedType

metadata = MetaData()


class UBigInteger(UserDefinedType):
    """DuckDB's unsigned 64-bit integer, the type of its ``hash``. (duckdb-engine names it too, but
    importing duckdb-engine loads duckdb's Python layer, which commands that never touch these
    tables should not pay for.)"""

    cache_ok = True

    def get_col_spec(self) -> str:
        return "UBIGINT"


source_id_seq = Sequence("source_id_seq", metadata=metadata)

sources = Table(
    "sources",
    metadata,
    Column("source_id", BigInteger, source_id_seq, primary_key=True, autoincrement=False),
    Column("path", Text, nullable=False, unique=True),
    Column("format", Text, nullable=False),
    Column("size_bytes", BigInteger, nullable=False),
    Column("mtime_ns", BigInteger, nullable=False),
    Column("head_bytes", BigInteger, nullable=False),  # how many leading bytes head_sha256 covers
    Column("head_sha256", Text, nullable=False),
    Column("byte_offset", BigInteger, nullable=False),  # first byte not yet consumed
    Column("lines_read", BigInteger, nullable=False),
    Column("lines_ok", BigInteger, nullable=False),
    Column("lines_skipped", BigInteger, nullable=False),
    Column("lines_problem", BigInteger, nullable=False),
    Column("skipped_by_rule", Text, nullable=False),  # JSON object rule -> count
    Column("parser_state", Text, nullable=False),  # JSON, lets a grown file resume mid-stream
    Column("ingested_at_utc", DateTime, nullable=False),
)

sessions = Table(
    "sessions",
    metadata,
    Column("source_id", BigInteger, nullable=False),
    Column("session_id", Text, nullable=False),  # namespaced by format, e.g. "claude-code:<uuid>"
    Column("agent", Text, nullable=False),
    Column("project", Text),
    Column("cwd", Text),
    Column("git_branch", Text),
    Column("parent_session_id", Text),
    Column("agent_id", Text),
    Column("task_label", Text),
    Column("outcome", Text),
    Column("agent_version", Text),
    Column("started_at_utc", DateTime),
    Column("ended_at_utc", DateTime),
    Column("subagent_type", Text),  # e.g. Claude Code agentType "general-purpose"; NULL for main sessions
    PrimaryKeyConstraint("source_id", "session_id"),
)

def _llm_call_columns() -> list[Column]:
    """Columns of a model-request row (fresh objects: a Column belongs to one table)."""
    return [
        Column("source_id", BigInteger, nullable=False),
        Column("call_key", Text, nullable=False),  # dedup key, documented per format
        Column("session_id", Text, nullable=False),
        Column("line_no", BigInteger, nullable=False),
        Column("ts_utc", DateTime),
        Column("provider", Text),
        Column("model", Text),
        Column("message_id", Text),
        Column("request_id", Text),
        Column("input_tokens", BigInteger, nullable=False),  # uncached input
        Column("cache_read_tokens", BigInteger, nullable=False),
        Column("cache_write_5m_tokens", BigInteger, nullable=False),
        Column("cache_write_1h_tokens", BigInteger, nullable=False),
        Column("output_tokens", BigInteger, nullable=False),  # includes reasoning
        Column("reasoning_tokens", BigInteger),  # subset of output; NULL = not reported
        Column("web_search_requests", BigInteger, nullable=False),
        Column("context_window_tokens", BigInteger),
        Column("usage_source", Text, nullable=False),  # reported | estimated:<method>
        Column("output_is_lower_bound", Boolean, nullable=False),
        Column("cache_ttl_known", Boolean, nullable=False),
        Column("is_sidechain", Boolean, nullable=False),
        Column("is_aggregate", Boolean, nullable=False),  # one row standing for several calls
        Column("stop_reason", Text),
        Column("service_tier", Text),
        Column("speed", Text),
        Column("aggregate_calls", BigInteger),  # calls an is_aggregate row stands for, when known
        Column("reported_cost_usd", Numeric(38, 18)),  # a cost the log itself states; shown, never used as the price
    ]


llm_calls = Table("llm_calls", metadata, *_llm_call_columns(), PrimaryKeyConstraint("source_id", "call_key"))

tool_calls = Table(
    "tool_calls",
    metadata,
    Column("source_id", BigInteger, nullable=False),
    Column("tool_call_id", Text, nullable=False),
    Column("session_id", Text, nullable=False),
    Column("call_key", Text),  # the model request that asked for the call
    Column("line_no", BigInteger),
    Column("ts_utc", DateTime),
    Column("tool_name", Text),  # as logged, e.g. "mcp__github__search_issues"
    Column("tool_kind", Text),  # function | custom | web_search | mcp | builtin
    Column("mcp_server", Text),
    Column("mcp_tool", Text),
    Column("args_bytes", BigInteger),
    Column("args_sha256", Text),
    Column("args_skeleton", Text),  # arguments with numbers, ids and long strings masked
    Column("result_line_no", BigInteger),
    Column("result_ts_utc", DateTime),
    Column("result_bytes", BigInteger),
    Column("result_sha256", Text),
    Column("result_content_types", Text),
    Column("result_truncated", Boolean),
    Column("is_error", Boolean),
    Column("duration_ms", BigInteger),
    Column("duration_method", Text),  # reported | timestamps
    # Token sizes with their method: reported | tokenizer:<encoding> | heuristic:<rule>. NULL tokens:
    # estimated when read, from result_bytes and the calibrated fits (analyze.tokens).
    Column("args_tokens", BigInteger),
    Column("args_tokens_method", Text),
    Column("result_tokens", BigInteger),
    Column("result_tokens_method", Text),
    Column("progress_count", BigInteger),  # MCP notifications/progress received for the call
    Column("cancelled", Boolean),
    Column("error_kind", Text),  # tool (a result with isError) | protocol (a JSON-RPC error) | missing-response
    Column("error_code", BigInteger),  # JSON-RPC error code of a protocol error
    Column("protocol_call_id", Text),  # the id the agent or protocol gave the call (tool_use id, JSON-RPC id)
    # Set on a second record of a call stored elsewhere (an MCP transcript's copy of an agent's
    # call): reports count the call once, filling gaps from both records.
    Column("linked_source_id", BigInteger),
    Column("linked_tool_call_id", Text),
    # Head and tail of the result, secrets redacted (ingest.base.result_features): what notice
    # detectors read and findings quote.
    Column("result_excerpt", Text),
    Column("result_sig", ARRAY(BigInteger)),  # MinHash of the result's words, 8 bins (ingest.base.result_features)
    # The arguments' string and number values, bounded and redacted (ingest.skeleton.args_values):
    # where a call's arguments came from (a counter, the previous result) is read from them.
    Column("args_values", ARRAY(Text)),
    # How many times zlib shrinks a large result (ingest.base.result_features): a sponge's repetitive text.
    Column("result_compress_ratio", Double),
    PrimaryKeyConstraint("source_id", "tool_call_id"),
)

session_events = Table(
    "session_events",
    metadata,
    Column("source_id", BigInteger, nullable=False),
    Column("line_no", BigInteger, nullable=False),
    Column("session_id", Text, nullable=False),
    Column("ts_utc", DateTime),
    Column("kind", Text, nullable=False),  # compaction | api_error | usage_limit | task_complete | ...
    Column("detail", Text),
    PrimaryKeyConstraint("source_id", "line_no", "kind"),
)

ingest_problems = Table(
    "ingest_problems",
    metadata,
    Column("source_id", BigInteger, nullable=False),
    Column("line_no", BigInteger, nullable=False),  # 0 = the file as a whole
    Column("byte_offset", BigInteger, nullable=False),
    Column("kind", Text, nullable=False),
    Column("message", Text, nullable=False),
    Column("excerpt", Text),  # truncated, secrets redacted
    PrimaryKeyConstraint("source_id", "line_no", "kind"),
)

# Tables for the analysis layer (MCP tool surfaces, audit runs, findings).
tool_defs = Table(
    "tool_defs",
    metadata,
    Column("source_id", BigInteger, nullable=False),
    Column("session_id", Text, nullable=False),
    Column("mcp_server", Text, nullable=False),
    Column("tool_name", Text, nullable=False),
    Column("schema_sha256", Text, nullable=False),
    Column("description_bytes", BigInteger),
    Column("first_seen_utc", DateTime),
    Column("last_seen_utc", DateTime),
    Column("definition_bytes", BigInteger),  # the whole tool definition: what the model is sent every turn
    PrimaryKeyConstraint("source_id", "session_id", "mcp_server", "tool_name", "schema_sha256"),
)

audit_run_id_seq = Sequence("audit_run_id_seq", metadata=metadata)

audit_runs = Table(
    "audit_runs",
    metadata,
    Column("audit_run_id", BigInteger, audit_run_id_seq, primary_key=True, autoincrement=False),
    Column("started_at_utc", DateTime, nullable=False),
    Column("window_start_utc", DateTime),
    Column("window_end_utc", DateTime),
    Column("tokaudit_version", Text, nullable=False),
    Column("thresholds", Text, nullable=False),  # JSON
    Column("summary", Text),  # JSON: sessions analysed, findings per detector and severity
)

findings = Table(
    "findings",
    metadata,
    Column("audit_run_id", BigInteger, nullable=False),
    Column("finding_no", Integer, nullable=False),
    Column("detector", Text, nullable=False),
    Column("severity", Text, nullable=False),
    Column("session_id", Text),
    Column("first_turn", Integer),
    Column("last_turn", Integer),
    Column("metric", Text),
    Column("value", Text),
    Column("threshold", Text),
    Column("excess_tokens", BigInteger),
    Column("excess_usd", Text),  # decimal as text: exact, and NULL when unpriced
    Column("explanation", Text),
    Column("tool_key", Text),  # server/tool (MCP) or tool name the finding is about
    Column("evidence", Text),  # JSON: the measurements and result excerpts behind the finding
    PrimaryKeyConstraint("audit_run_id", "finding_no"),
)

# Rates probed from genai-prices, so repeated reports need neither the package
# import nor the probing. Keyed by the price table's name and version: a new
# genai-prices release re-prices everything. A row with above_input_tokens = -2
# and NULL rates records that a model has no price. Costs are never stored.
RATE = Numeric(38, 18)

price_cache = Table(
    "price_cache",
    metadata,
    Column("price_source", Text, nullable=False),
    Column("model", Text, nullable=False),
    Column("provider", Text, nullable=False),  # "" when the log names none
    Column("price_day", Date, nullable=False),
    Column("above_input_tokens", BigInteger, nullable=False),  # tier threshold; -1 base tier
    Column("price_model_id", Text),
    Column("pricing_tier", Text),
    Column("input_usd_per_token", RATE),
    Column("cache_read_usd_per_token", RATE),
    Column("cache_write_5m_usd_per_token", RATE),
    Column("cache_write_1h_usd_per_token", RATE),
    Column("output_usd_per_token", RATE),
    Column("web_search_usd_per_request", RATE),
    PrimaryKeyConstraint("price_source", "model", "provider", "price_day", "above_input_tokens"),
)

store_state = Table(
    "store_state",
    metadata,
    # data_version: bumped by every ingest write; dedup_version; steering_version; steering_data_version
    Column("key", Text, primary_key=True),
    Column("value", BigInteger, nullable=False),
)

# Tokens per byte of tool output, fitted per model family and content type from
# logs that hold both the text's size and exact usage (tokaudit calibrate, see
# analyze.tokens): the context growth over one tool step ~ tokens_per_byte *
# result bytes + args_tokens_per_byte * argument bytes + overhead_tokens. Errors
# are measured on held-out steps, beside those of the plain bytes/4 heuristic.
token_fits = Table(
    "token_fits",
    metadata,
    Column("model_family", Text, nullable=False),
    Column("content_type", Text, nullable=False),
    Column("tokens_per_byte", Double, nullable=False),
    Column("args_tokens_per_byte", Double, nullable=False),
    Column("overhead_tokens", Double, nullable=False),
    Column("samples", BigInteger, nullable=False),
    Column("held_out", BigInteger, nullable=False),
    Column("median_rel_error", Double),
    Column("p90_rel_error", Double),
    Column("heuristic_median_rel_error", Double),
    Column("heuristic_p90_rel_error", Double),
    Column("fitted_at_utc", DateTime, nullable=False),
    PrimaryKeyConstraint("model_family", "content_type"),
)

# The rows of the llm_calls_dedup view, materialised when data_version moved
# (store.queries.dedup_relation): every report reads it, the view costs a window
# and an anti-join over all requests.
llm_calls_dedup_cache = Table("llm_calls_dedup_cache", metadata, *_llm_call_columns())

# The steering rule's verdicts per tool call (analyze.steering_cache): the rule compares each call with
# the calls before it in its session, the costliest step of a large audit, and its verdicts depend on
# the session's own tool calls alone. A session's rows hold while its fingerprint in
# steering_sessions matches its tool calls; all of them while store_state's steering_version is the
# rule's. No keys: rows are written and dropped a session at a time.
steering_cache = Table(
    "steering_cache",
    metadata,
    Column("session_id", Text, nullable=False),
    Column("tool_call_id", Text, nullable=False),
    Column("shape_hash", UBigInteger),
    Column("values_hash", UBigInteger),
    Column("unnarrated_hashes", ARRAY(UBigInteger)),
    Column("steered", Boolean),
    Column("alias_steered", Boolean),
    Column("authored", Boolean),
    Column("resent", Boolean),
    Column("relayed", Boolean),
    Column("call_idx", Integer),  # the call's place in its session's calls as the verdicts were computed
    # The wording flags read from the result's text (analyze.frames), kept with the verdicts.
    Column("has_continuation", Boolean),
    Column("has_directive", Boolean),
    Column("progress", Double),
    Column("eta", Double),
)

steering_sessions = Table(
    "steering_sessions",
    metadata,
    Column("session_id", Text, primary_key=True),
    Column("fingerprint", UBigInteger, nullable=False),  # bit_xor of a hash of every tool call's rule inputs
    Column("tool_calls", BigInteger, nullable=False),
)
