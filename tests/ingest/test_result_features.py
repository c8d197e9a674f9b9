"""The result signature's words: values (words with a digit) apart from the rest, in any script."""

from __future__ import annotations

import json
import random
import statistics

from tokaudit.ingest.base import EMPTY_BIN, SIG_BINS, SIG_BODY_MIN_BYTES, SIG_HEAD_BYTES, _sig_words, _values, result_features


def test_values_are_the_words_holding_a_digit_wherever_the_digit_is():
    words = b"page 3 of item_12 v2x a_b 2026 \xe7\xac\xac3\xe9\xa1\xb5 \xe4\xb8\xad\xe6\x96\x87".split()
    assert _values(words) == [b"3", b"item_12", b"v2x", b"2026", "第3页".encode()]


def test_chinese_text_is_compared_by_pairs_of_characters_and_its_numbers_are_values():
    status = "任务已完成，第3步。".encode()
    assert _sig_words(status) == {w.encode() for w in ("任务", "务已", "已完", "完成")}  # "第3步" is a value


def test_a_long_sentence_without_spaces_keeps_its_words_when_the_sample_cuts_it():
    # One run of characters far longer than the sample: once one "word", dropped whole as cut at the edge.
    sentence = ("这是一个很长的中文句子没有空格" * 40).encode()
    assert len(sentence) > 3 * SIG_HEAD_BYTES
    words = _sig_words(sentence)
    assert {"中文".encode(), "句子".encode()} <= words
    assert all(len(w) == 6 for w in words)  # whole pairs only: no piece of a character cut at an edge
    assert EMPTY_BIN not in result_features(sentence)["result_sig"]


def test_two_pages_of_chinese_sharing_a_boilerplate_share_its_words_and_differ_in_their_own():
    boiler = "本页内容由系统自动生成，请勿回复。"
    a, b = _sig_words((boiler + "北京今天天气晴朗").encode()), _sig_words((boiler + "上海明天可能下雨").encode())
    assert "系统".encode() in a & b and "天气".encode() in a - b and "下雨".encode() in b - a


def test_typographic_punctuation_separates_words_as_ascii_punctuation_does():
    assert _sig_words("don’t stop — “now”…".encode()) == _sig_words(b"don't stop - \"now\"...")


def test_a_listing_of_records_keeps_its_values():
    listing = "".join(f'{{"id":"i-{n:08x}","zone":"eu-{n % 3}a"}}\n' for n in range(40)).encode()
    words = _sig_words(listing)
    assert {b"id", b"zone", b"00000001", b"00000027"} <= words


def test_a_short_listing_of_a_few_records_keeps_its_values_and_a_notice_keeps_them_positions():
    """Three free slots (each an id and a start) are eight or more distinct values: another listing of slots is new
    content. A notice's few numbers (a step, a total, a wait) stay positions: the next notice is the same words."""

    def slots(seed: int) -> bytes:
        rng = random.Random(seed)
        return json.dumps({"slots": [{"id": f"sl_{rng.randrange(16**6):06x}", "start": f"2026-03-{rng.randrange(9, 14)}T{rng.randrange(8, 17)}:00:00Z"}
                                     for _ in range(3)]}).encode()

    first_id = json.loads(slots(1))["slots"][0]["id"].encode()
    assert first_id in _sig_words(slots(1))
    assert result_features(slots(1))["result_sig"] != result_features(slots(2))["result_sig"]
    notice = "Progress: step {} of 20 verified; the next step is ready in 30 s (job 4411).".format
    assert result_features(notice(3).encode())["result_sig"] == result_features(notice(4).encode())["result_sig"]


def test_japanese_kana_and_thai_are_read_in_pairs_too():
    # Kana start with byte E3 and Thai with E0: the quick check that skips texts without such scripts
    # must let both through.
    assert "ータ".encode() in _sig_words("ユーザーのデータを読む".encode())
    assert "ษา".encode() in _sig_words("ภาษาไทย".encode())


def test_arrows_symbols_and_emoji_separate_words_and_number_forms_stay_words():
    # A file read numbers its lines "   12→import os": the line's first word is a word, not part of a value.
    assert _sig_words("   1→import os\n   2→print(x)".encode()) == {b"import", b"os", b"print", b"x"}
    assert _sig_words("✅ done 🔄 again ⠋ ★ ≥ ⏳".encode()) == {b"done", b"again"}
    assert "Ⅳ".encode() in _sig_words("step Ⅳ".encode())


def _similarity(a: list[int], b: list[int]) -> float:
    equal = sum(x == y and x != EMPTY_BIN for x, y in zip(a, b))
    filled = sum(x != EMPTY_BIN or y != EMPTY_BIN for x, y in zip(a, b))
    return equal / filled if filled else 1.0


def test_pages_behind_one_long_envelope_differ_by_their_records_and_a_restated_text_stays_the_same():
    """A listing whose pages open with the same schema (column descriptions, query metadata) differs in the
    records after it: the middle of a long result is sampled too. A long text sent again is the same words."""
    schema = json.dumps({"columns": [{"name": f"column_{c}", "description": f"The {c} of the posting as the ledger keeps it, "
                                      "in the company's reporting currency unless stated otherwise."} for c in "abcdefgh"]})
    vendors = ["acme", "globex", "initech", "umbrella", "hooli", "stark", "wayne", "wonka", "tyrell", "cyberdyne", "soylent", "oscorp"]

    def page(k: int) -> bytes:
        rng = random.Random(k)
        rows = [{"entry": f"GL-{rng.randrange(10**7, 10**8)}", "amount": round(rng.uniform(-9e4, 9e4), 2),
                 "memo": f"{rng.choice(vendors)} {rng.choice(['invoice', 'refund', 'accrual', 'payroll', 'transfer'])}"} for _ in range(60)]
        return json.dumps({"page": {"offset": 60 * k, "limit": 60}, "schema": schema, "rows": rows}).encode()

    pages = [result_features(page(k))["result_sig"] for k in range(12)]
    assert len(page(0)) > SIG_BODY_MIN_BYTES and page(0)[:SIG_HEAD_BYTES].count(b"GL-") == 0  # the head is all envelope
    # Eight bins estimate a similarity coarsely: the mean over the pairs of pages (0.91 sampling the head alone).
    assert statistics.mean(_similarity(pages[i], pages[j]) for i in range(12) for j in range(i)) <= 0.5
    report = ("The quarterly summary restates every finding so far, section by section, with the same wording. " * 80).encode()
    assert result_features(report)["result_sig"] == result_features(report + b" ")["result_sig"]


def test_a_log_returned_whole_and_growing_keeps_its_signature_from_poll_to_poll():
    """A run log polled whole answers with every line so far: the sample of its body must not move with its
    length (a sample at the middle would read other lines on every poll and make each answer look new)."""
    lines = [f"2026-03-10T10:{n // 60:02d}:{n % 60:02d}Z worker-{n % 4} step {n}: shard {n % 16} copied, {n * 37 % 1000} rows\n"
             for n in range(400)]
    polls = [result_features("".join(lines[:k]).encode())["result_sig"] for k in range(200, 400, 25)]
    assert len("".join(lines[:200])) > SIG_BODY_MIN_BYTES
    assert statistics.mean(_similarity(a, b) for a, b in zip(polls, polls[1:])) >= 0.75


def test_a_list_of_pending_work_mid_answer_keeps_its_first_references_and_no_state_words():
    filler = "Column descriptions follow for every field of the export schema. " * 20
    pending = {"pending": [{"scope": f"svc/api-{n}", "state": "partial"} for n in range(7)]}
    answer = json.dumps({"summary": filler, **pending, "notes": filler}).encode()
    excerpt = result_features(answer)["result_excerpt"]
    assert " … pending: svc/api-0 svc/api-1 svc/api-2 … " in excerpt  # the first three, bounded
    assert "partial" not in excerpt and "svc/api-3" not in excerpt
    # A key that names no pending work, or one holding only plain words, adds nothing.
    for other in ({"dependents": [{"scope": "svc/api-1"}]}, {"pending": ["review", "merge"]}):
        assert " … " + next(iter(other)) not in result_features(json.dumps({"summary": filler, **other, "notes": filler}).encode())["result_excerpt"]


def _window(first: int, rows: int = 50) -> bytes:
    """A page of ``rows`` records from row ``first``, each with a cursor minted for this page."""
    rng = random.Random(first)
    records = [{"cursor": f"c{n:05d}{rng.randrange(16**8):08x}", "node": {"id": f"ord_{n * 7919 % 100003:06d}x{n}", "qty": n % 7}}
               for n in range(first, first + rows)]
    return json.dumps({"edges": records, "pageInfo": {"endCursor": records[-1]["cursor"], "hasNextPage": True},
                       "extensions": {"cost": {"requested": 52, "actual": 52}, "notes": "rate limits apply per client and per query " * 4}}).encode()


def test_a_listings_records_get_bins_of_their_ids_shared_by_an_overlapping_window_and_not_by_the_next_page():
    sigs = {first: result_features(_window(first))["result_sig"] for first in range(0, 200, 10)}
    assert {len(sig) for sig in sigs.values()} == {2 * SIG_BINS}
    shared = lambda a, b: sum(x == y for x, y in zip(sigs[a][SIG_BINS:], sigs[b][SIG_BINS:])) / SIG_BINS  # noqa: E731
    # A window moved on by 10 rows serves 40 of its 50 rows again (their cursors minted anew: a Jaccard
    # similarity of 40/160); the next page, none of them.
    moved = [shared(first, first + 10) for first in range(0, 190, 10)]
    assert 0.15 <= statistics.mean(moved) <= 0.35
    assert all(shared(first, first + 50) == 0 for first in range(0, 150, 10))
    # A file's lines and a notice hold no such ids: no bins of them.
    code = "".join(f"{n:6d}\u2192    total = compute(order, line_{n % 9})\n" for n in range(1, 400)).encode()
    assert len(result_features(code)["result_sig"]) == SIG_BINS
    assert len(result_features(b"Progress: segment 3/20 verified, job 77812345 running")["result_sig"]) == SIG_BINS


def test_the_excerpt_keeps_a_pages_end_cursor_before_its_records_cursors():
    excerpt = result_features(_window(0, rows=80))["result_excerpt"]
    end = json.loads(_window(0, rows=80))["pageInfo"]["endCursor"]
    assert f"endCursor: {end}" in excerpt
