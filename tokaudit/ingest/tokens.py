"""Counting tokens in text that a log holds without a token count (MCP results, tool arguments).

Reported counts always win; this is for the gaps. The count comes from the
offline ``o200k_base`` tokenizer (the ``quicktok-v1`` package ships its ranks,
so nothing is downloaded) and is labelled ``tokenizer:o200k_base``. o200k is
OpenAI's encoding: for Claude models it is an approximation (no accurate
Claude tokenizer exists offline), which the calibrated fits of ``tokaudit
calibrate`` can correct at report time. When the tokenizer is unavailable the
count falls back to ``heuristic:bytes/4``.

Texts are bounded before counting (``MAX_TOKENIZE_BYTES``): past that, the
rest is extrapolated from the counted prefix's tokens per byte, and the label
says so (``tokenizer:o200k_base+extrapolated``).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

ENCODING = "o200k_base"
TOKENIZER_METHOD = f"tokenizer:{ENCODING}"
HEURISTIC_METHOD = "heuristic:bytes/4"
MAX_TOKENIZE_BYTES = 1024 * 1024


@lru_cache(maxsize=1)
def _encoding() -> Any:
    """The tokenizer, loaded once per process (about 2 s), or None when the package is missing."""
    try:
        import quicktok
    except ImportError:
        return None
    return quicktok.get_encoding(ENCODING)


def heuristic_tokens(n_bytes: int) -> int:
    """The fallback estimate: four bytes per token, rounded up.

    Examples:
        >>> heuristic_tokens(0), heuristic_tokens(1), heuristic_tokens(4000)
        (0, 1, 1000)
    """
    return -(-n_bytes // 4)


def count_tokens(text: str) -> tuple[int, str]:
    """``(tokens, method)`` for ``text``: tokenizer count when available, else the byte heuristic.

    Examples:
        >>> count_tokens("")
        (0, 'tokenizer:o200k_base')
        >>> count_tokens("hello world")
        (2, 'tokenizer:o200k_base')
    """
    data = text.encode("utf-8", "surrogatepass")
    if not data.isascii():
        # Lone surrogates are not UTF-8 and the tokenizer refuses them: count them as replacement characters.
        text = data.decode("utf-8", "replace")
    enc = _encoding()
    if enc is None:
        return heuristic_tokens(len(data)), HEURISTIC_METHOD
    if len(data) <= MAX_TOKENIZE_BYTES:
        return len(enc.encode_ordinary(text)), TOKENIZER_METHOD
    head = data[:MAX_TOKENIZE_BYTES].decode("utf-8", "ignore")
    head_tokens = len(enc.encode_ordinary(head))
    return round(head_tokens * len(data) / MAX_TOKENIZE_BYTES), TOKENIZER_METHOD + "+extrapolated"
