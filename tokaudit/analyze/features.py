"""Per-tool-call features the chain detectors share: result novelty, same-tool runs, skeleton runs.

* ``novelty`` — 1 − the highest similarity between this result and the previous
  ``lookback`` results of the same tool in the session, similarity being the
  share of equal MinHash bins (among those either fills) of their word sets (``ingest.base.result_features``:
  words with a digit left out, so "segment 3 of 20" and "segment 4 of 20" are the same words) — or, between
  two listings, of their ids, when that is higher: a window of records moved on by a few rows re-serves them.
  A first result has novelty 1; a call without a result has none.
* ``record_overlap`` — between two listings only (results with record ids), the highest similarity of this
  result's ids and those of the previous ``lookback`` listings of the same tool: records served again. Honest
  pages of one listing share none; a window moved on by a few rows shares most of its records (less whatever
  each page stamps anew: a cursor per record, minted for each page). NULL where there is no listing before.
* ``chain_key`` — the tool a call counts under in novelty, runs and chains: its
  ``tool_key``, except that the tools of one MCP server that the steering rule
  linked (``alias_steered``: one loop spread over aliases the server rotates)
  count as one.
* runs — consecutive calls of one tool (``chain_key``) in a session, tolerating
  one interleaved call of another tool (A A B A A is one run of four A; the B
  belongs to no run): ``run_id``, ``run_len``, ``run_pos``.
* skeleton runs — within a run, consecutive calls whose arguments have the same
  skeleton (only numbers, ids or long strings changed): ``skel_run_id``,
  ``skel_run_len``.
* steered chains — calls of one tool in a session (other calls may come
  between) where the calls after the first are ``steered`` (their changed
  arguments went up or were copied from the previous result,
  ``analyze.frames``), tolerating up to two unsteered calls in a row:
  ``steer_chain_id``, ``steer_chain_len``. The server drove such a chain.
* ``billed_tokens``, ``billed_usd`` — input (all kinds) plus output of the
  request that asked for the call, and its cost, divided among the calls it asked for.

Everything is columnar: the frame is sorted once by session, tool and order, so
"the k-th previous result of the same tool" is a plain shift with a group check.
"""

from __future__ import annotations

import polars as pl

from tokaudit.ingest.base import EMPTY_BIN, SIG_BINS

LOOKBACK_CALLS = 8
SIG_COLUMNS = [f"sig{i}" for i in range(SIG_BINS)]
ID_SIG_COLUMNS = [f"idsig{i}" for i in range(SIG_BINS)]


def _novelty(tools: pl.DataFrame, lookback: int) -> pl.DataFrame:
    # Most results are no listing: where none of the frame's is, the id bins are neither sorted nor compared.
    ids = bool(tools[ID_SIG_COLUMNS[0]].is_not_null().any())
    # Only the columns read here are sorted by tool (a sort moves every column: the whole frame is forty),
    # and the results go back onto ``tools`` in its own order by row number.
    # Sorted by integers, not texts (a third of the sort's time): the session's stretch of the frame (which
    # is in session order) and the tool's number among the categories of chain keys.
    t = tools.select(
        pl.int_range(pl.len()).alias("_row"), pl.col("session_id").rle_id().alias("_session"),
        pl.col("chain_key").cast(pl.Categorical).to_physical().alias("_tool"), "call_idx", "has_result", "steered", *SIG_COLUMNS, *(ID_SIG_COLUMNS if ids else [])
    ).sort("_session", "_tool", "call_idx")
    # One integer per (session, tool) stretch of the sorted frame: "k calls back, same tool" compares ints.
    t = t.with_columns(pl.struct("_session", "_tool").rle_id().alias("_st"))
    words = pl.lit(0.0)
    overlap = pl.lit(None, pl.Float64)
    for k in range(1, lookback + 1):
        same_tool = pl.col("_st") == pl.col("_st").shift(k)
        valid = same_tool & pl.col("has_result").shift(k) & pl.col(SIG_COLUMNS[0]).shift(k).is_not_null()
        words = pl.max_horizontal(words, pl.when(valid).then(word_similarity_to(k)).otherwise(0.0))
        if ids:
            overlap = pl.max_horizontal(overlap, pl.when(valid).then(id_similarity_to(k)))
    # The highest similarity of either kind (``similarity_to``), over the results looked back at.
    best = pl.max_horizontal(words, overlap.fill_null(0.0))
    has_sig = pl.col("has_result") & pl.col(SIG_COLUMNS[0]).is_not_null()
    t = _steer_chains(t.with_columns(pl.when(has_sig).then(1.0 - best).alias("novelty"), pl.when(has_sig).then(overlap).alias("record_overlap")))
    return tools.with_columns(t.sort("_row").select("novelty", "record_overlap", "steer_chain_id", "steer_chain_len"))


def similarity_to(k: int) -> pl.Expr:
    """The estimated Jaccard similarity of each row's result words (``SIG_COLUMNS``) and those of the row ``k`` before,
    or of their ids (``ID_SIG_COLUMNS``) where both are listings and that is higher."""
    return pl.max_horizontal(word_similarity_to(k), id_similarity_to(k).fill_null(0.0))


def word_similarity_to(k: int) -> pl.Expr:
    """The estimated Jaccard similarity of each row's result words (``SIG_COLUMNS``) and those of the row ``k`` before."""
    # A bin empty in both results (a short result has few words) is no agreement: it would make any two
    # short results look alike. Two results with no words at all are alike.
    equal_bins = pl.sum_horizontal([((pl.col(c) == pl.col(c).shift(k)) & (pl.col(c) != EMPTY_BIN)).cast(pl.Int8) for c in SIG_COLUMNS])
    filled_bins = pl.sum_horizontal([((pl.col(c) != EMPTY_BIN) | (pl.col(c).shift(k) != EMPTY_BIN)).cast(pl.Int8) for c in SIG_COLUMNS])
    return pl.when(filled_bins == 0).then(1.0).otherwise(equal_bins / filled_bins)


def id_similarity_to(k: int) -> pl.Expr:
    """The estimated Jaccard similarity of each row's result ids (``ID_SIG_COLUMNS``) and those of the row ``k`` before,
    where both are listings (NULL otherwise). Two pages of an honest pagination share none: one that shares some
    re-served records."""
    # Both lists of ids have at least MIN_ID_WORDS of them: their bins are all filled, or nearly.
    equal_ids = pl.sum_horizontal([(pl.col(c) == pl.col(c).shift(k)).cast(pl.Int8) for c in ID_SIG_COLUMNS])
    return pl.when(pl.col(ID_SIG_COLUMNS[0]).is_not_null() & pl.col(ID_SIG_COLUMNS[0]).shift(k).is_not_null()).then(equal_ids / SIG_BINS)


def _steer_chains(t: pl.DataFrame) -> pl.DataFrame:
    """Number the steered chains: per session and tool, in call order (``t`` is sorted so; ``_st``
    numbers its (session, tool) stretches)."""

    def unsteered(k: int) -> pl.Expr:
        same = pl.col("_st") == pl.col("_st").shift(k)
        return pl.when(same).then(~pl.col("steered").shift(k)).otherwise(True)

    # A tool's first call, and three unsteered calls in a row, start a chain, so a running count of them
    # numbers the chains. (A first call is steered only against another tool of its server: an alias.)
    # Up to two unsteered calls inside a chain do not end it: a REPAIR resend, an off-script attempt,
    # another question to the same tool in between.
    first = (pl.col("_st") != pl.col("_st").shift(1)).fill_null(True)
    starts = first | (~pl.col("steered") & unsteered(1) & unsteered(2))
    t = t.with_columns(starts.cum_sum().alias("steer_chain_id"))
    # A chain ends at its last steered call; a tool's calls that no steered call follows are in none.
    last_steered = pl.col("call_idx").filter(pl.col("steered")).max().over("steer_chain_id")
    t = t.with_columns(pl.when(pl.col("call_idx") <= last_steered).then(pl.col("steer_chain_id")).alias("steer_chain_id"))
    return t.with_columns(pl.when(pl.col("steer_chain_id").is_not_null()).then(pl.len().over("steer_chain_id")).alias("steer_chain_len"))


def _with_chain_keys(tools: pl.DataFrame) -> pl.DataFrame:
    key = pl.col("tool_key")
    if tools["alias_steered"].any():
        # Every tool of a server that the rule linked to another of its tools, in a session, is one.
        aliased = pl.col("alias_steered").any().over("session_id", "tool_key")
        key = pl.when(aliased).then(pl.col("tool_key").str.replace(r"/.*$", "/*")).otherwise(key)
    return tools.with_columns(key.alias("chain_key"))


def tool_features(tools: pl.DataFrame, calls: pl.DataFrame, lookback: int = LOOKBACK_CALLS) -> pl.DataFrame:
    """``tools`` (in session and call order, as ``analyze.frames.load_frames`` reads them) with novelty, run and
    skeleton-run columns and billed tokens (see the module docstring), in the same order."""
    if tools.is_empty():
        return tools.with_columns(
            pl.lit(None, pl.String).alias("chain_key"),
            pl.lit(None, pl.Float64).alias("novelty"),
            pl.lit(None, pl.Float64).alias("record_overlap"),
            pl.lit(None, pl.Int64).alias("run_id"),
            pl.lit(None, pl.UInt32).alias("run_len"),
            pl.lit(None, pl.Int64).alias("run_pos"),
            pl.lit(None, pl.Int64).alias("skel_run_id"),
            pl.lit(None, pl.UInt32).alias("steer_chain_id"),
            pl.lit(None, pl.UInt32).alias("steer_chain_len"),
            pl.lit(None, pl.UInt32).alias("skel_run_len"),
            pl.lit(None, pl.Float64).alias("billed_tokens"),
            pl.lit(None, pl.Float64).alias("billed_usd"),
        )
    t = _novelty(_with_chain_keys(tools), lookback)
    same_session_prev = pl.col("session_id") == pl.col("session_id").shift(1)
    same_session_next = pl.col("session_id") == pl.col("session_id").shift(-1)
    prev_key = pl.when(same_session_prev).then(pl.col("chain_key").shift(1))
    next_key = pl.when(same_session_next).then(pl.col("chain_key").shift(-1))
    # A call between two calls of another tool is an aside in that tool's run — except an MCP call between two of
    # the agent's own: in a strict alternation (the server's tool, a shell command it asked for, the server's
    # tool again …) the server's calls are the run, not the asides.
    prev_own = pl.when(same_session_prev).then(~pl.col("is_mcp").shift(1))
    t = t.with_columns(
        ((pl.col("chain_key") != prev_key) & (pl.col("chain_key") != next_key) & (prev_key == next_key) & ~(pl.col("is_mcp") & prev_own))
        .fill_null(False).alias("_interleaved")
    )
    t = t.with_row_index("_row")
    main = t.filter(~pl.col("_interleaved")).select("_row", "session_id", "chain_key", "skel_hash")
    new_run = ~((pl.col("session_id") == pl.col("session_id").shift(1)) & (pl.col("chain_key") == pl.col("chain_key").shift(1))).fill_null(False)
    main = main.with_columns(new_run.cum_sum().alias("run_id"))
    new_skel = new_run | (pl.col("skel_hash") != pl.col("skel_hash").shift(1)).fill_null(True)
    main = main.with_columns(new_skel.cum_sum().alias("skel_run_id"))
    # Run lengths and positions by group_by and an integer join: ten times faster than windows.
    main = main.with_columns(pl.int_range(pl.len()).alias("_i"))
    runs = main.group_by("run_id").agg(pl.len().alias("run_len"), pl.col("_i").min().alias("_first"))
    skel_runs = main.group_by("skel_run_id").agg(pl.len().alias("skel_run_len"))
    main = main.join(runs, on="run_id", how="left").join(skel_runs, on="skel_run_id", how="left")
    main = main.with_columns((pl.col("_i") - pl.col("_first")).alias("run_pos"))
    # Back onto every call by row number (an integer join; interleaved calls get no run).
    t = t.join(main.select("_row", "run_id", "run_len", "run_pos", "skel_run_id", "skel_run_len"), on="_row", how="left",
               maintain_order="left").drop("_row")
    # The request behind each call (``request_hash``, analyze.frames): integer keys, not (session, turn).
    per_request = t.group_by("request_hash").agg(pl.len().alias("_n"))
    billed = calls.select(
        pl.col("call_hash").alias("request_hash"), (pl.col("input_total_tokens") + pl.col("output_tokens")).alias("_billed"),
        pl.col("cost_usd").alias("_usd"),
    ).unique("request_hash")
    t = t.join(per_request, on="request_hash", how="left", maintain_order="left").join(billed, on="request_hash", how="left", maintain_order="left")
    t = t.with_columns((pl.col("_billed") / pl.col("_n")).alias("billed_tokens"), (pl.col("_usd") / pl.col("_n")).alias("billed_usd"))
    return t.drop("_interleaved", "_n", "_billed", "_usd")
