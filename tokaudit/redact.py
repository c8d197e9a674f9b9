"""Redaction and bounding of text taken from untrusted logs.

Excerpts of log lines are stored (ingest problems) and shown (reports). Logs are
written by tools an attacker may control and often carry credentials, so every
excerpt is truncated and passed through :func:`redact` first.
"""

from __future__ import annotations

import re

EXCERPT_CHARS = 200

# Names under which a value is a credential whatever it looks like.
SECRET_KEYS = (
    r"api[_-]?key|access[_-]?token|auth[_-]?token|refresh[_-]?token|id[_-]?token|session[_-]?token|bearer[_-]?token"
    r"|private[_-]?key|secret|password|passwd|credentials?\b"
)
_SECRET_KEY = re.compile(f"(?i)(?:{SECRET_KEYS})")


def is_secret_key(name: str) -> bool:
    """Whether a field called ``name`` holds a credential (``api_key``, ``password`` …).

    Examples:
        >>> is_secret_key("X-Api-Key"), is_secret_key("page")
        (True, False)
    """
    return _SECRET_KEY.search(name) is not None


# Patterns for the credential shapes that show up in agent logs. Each keeps a
# short prefix so a reader can still tell what kind of secret was there. Each
# comes with the lowercase literals one of which any match must contain: a regex
# is run only when its literal is present, which keeps redaction cheap enough to
# run on every tool result at ingest.
# A credential's start: not inside a longer word, but possibly right after a JSON escape (``\\n``) or a
# URL-encoded ``=`` (``token%3Dsk-…``), where the raw text of a log puts a letter before it.
_START = r"(?:(?<![A-Za-z0-9])|(?<=\\[nrt])|(?<=%3[Dd]))"
_SECRET_PATTERNS: tuple[tuple[re.Pattern[str], str, tuple[str, ...]], ...] = (
    # The space may be URL-encoded (``Bearer%20…``, ``Bearer+…``) when a header is quoted in a URL or a form.
    (re.compile(r"(?i)\b(bearer)(?:\s+|%20|\+)[a-z0-9._~+/=-]{8,}"), r"\1 [REDACTED]", ("bearer",)),
    (re.compile(_START + r"(sk-(?:ant-|proj-)?)[A-Za-z0-9_-]{8,}"), r"\1[REDACTED]", ("sk-",)),
    (re.compile(_START + r"((?:sk|rk)_(?:live|test)_)[A-Za-z0-9]{8,}"), r"\1[REDACTED]", ("sk_live_", "sk_test_", "rk_live_", "rk_test_")),
    (re.compile(_START + r"(gh[pousr]_)[A-Za-z0-9]{8,}"), r"\1[REDACTED]", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_")),
    (re.compile(_START + r"(github_pat_)[A-Za-z0-9_]{8,}"), r"\1[REDACTED]", ("github_pat_",)),
    (re.compile(_START + r"(xox[abprs]-)[A-Za-z0-9-]{8,}"), r"\1[REDACTED]", ("xox",)),
    (re.compile(_START + r"(AKIA)[A-Z0-9]{12,}"), r"\1[REDACTED]", ("akia",)),
    (re.compile(_START + r"(AIza)[A-Za-z0-9_-]{20,}"), r"\1[REDACTED]", ("aiza",)),
    (re.compile(_START + r"(ya29\.)[A-Za-z0-9_-]{20,}"), r"\1[REDACTED]", ("ya29.",)),
    (re.compile(_START + r"(glpat-)[A-Za-z0-9_-]{16,}"), r"\1[REDACTED]", ("glpat-",)),
    (re.compile(_START + r"(hf_)[A-Za-z0-9]{30,}"), r"\1[REDACTED]", ("hf_",)),
    (re.compile(_START + r"(npm_)[A-Za-z0-9]{30,}"), r"\1[REDACTED]", ("npm_",)),
    (re.compile(_START + r"(pypi-)AgE[A-Za-z0-9_-]{30,}"), r"\1[REDACTED]", ("pypi-age",)),
    # A JSON Web Token stands alone, without "Bearer": header and payload are base64url JSON ("eyJ" = '{"').
    (re.compile(_START + r"(eyJ)[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*"), r"\1[REDACTED]", ("eyj",)),
    (re.compile(r"(hooks\.slack\.com/services/)[A-Za-z0-9/]{8,}"), r"\1[REDACTED]", ("hooks.slack.com/services/",)),
    # Basic credentials are only base64 of user:password; recognised after the word Basic in a header.
    (re.compile(r"(?i)\b(authorization\\?[\"']?\s*[:=]\s*\\?[\"']?basic)(?:\s+|%20|\+)[A-Za-z0-9+/=]{8,}"), r"\1 [REDACTED]",
     ("authorization",)),
    # A private key block, to its end or to the end of the text (an excerpt may cut it).
    (re.compile(r"(-----BEGIN [A-Z ]*PRIVATE KEY-----)(?:.(?!-----END))*.?(-----END [A-Z ]*PRIVATE KEY-----)?", re.S),
     r"\1[REDACTED]\2", ("private key-----",)),
    # The password of a URL's user (postgres://user:secret@host).
    (re.compile(r"(://[^/\s:@\\\"']+:)[^@\s/\\\"']+(@)"), r"\1[REDACTED]\2", ("://",)),
    (
        re.compile(
            # The name may run on (aws_secret_access_key) and its quotes may be escaped (JSON inside a string).
            rf"(?i)((?:\\?[\"'])?[A-Za-z0-9_-]*(?:{SECRET_KEYS})[A-Za-z0-9_-]*(?:\\?[\"'])?\s*[:=]\s*(?:\\?[\"'])?)"
            r"[^\s\"'\\,}]{4,}"
        ),
        r"\1[REDACTED]",
        ("api_key", "api-key", "apikey", "access_token", "access-token", "accesstoken", "auth_token", "auth-token",
         "authtoken", "refresh_token", "refresh-token", "refreshtoken", "id_token", "id-token", "idtoken", "session_token",
         "session-token", "sessiontoken", "bearer_token", "bearer-token", "bearertoken", "private_key", "private-key",
         "privatekey", "secret", "passw", "credential"),
    ),
)


def _trie_pattern(words: list[str]) -> str:
    """A regular expression matching any of ``words``, as a trie: ``a(?:pi_key|kia)|b…``.

    Python's ``re`` tries the branches of a flat ``w1|w2|…`` one after the other at every position; nested
    by shared prefixes, a position costs one branch per character instead (about 3× faster on a page of
    text that holds none of them).

    Examples:
        >>> _trie_pattern(["api_key", "akia", "bearer"])
        '(?:a(?:kia|pi_key)|bearer)'
    """
    trie: dict[str, dict] = {}
    for word in words:
        node = trie
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = {}

    def branch(node: dict[str, dict]) -> str:
        ends = "" in node
        alternatives = [re.escape(ch) + branch(child) for ch, child in sorted(node.items()) if ch]
        if not alternatives:
            return ""
        body = alternatives[0] if len(alternatives) == 1 else "(?:" + "|".join(alternatives) + ")"
        # A word that ends here makes the rest optional: "bearer" and "bearer_token" both match.
        return f"(?:{body})?" if ends else body

    return branch(trie)


# Every literal some pattern needs; one scan tells whether any occurs (most texts hold none).
_ALL_LITERALS = tuple(dict.fromkeys(lit for _, _, lits in _SECRET_PATTERNS for lit in lits))
_LITERALS = re.compile(_trie_pattern(list(_ALL_LITERALS)))


def may_hold_secret(text: str) -> bool:
    """Whether ``text`` holds any literal a credential pattern needs (one scan; most texts hold none).

    Examples:
        >>> may_hold_secret('{"page": 2}'), may_hold_secret('{"API_KEY": "x"}')
        (False, True)
    """
    return _LITERALS.search(text.lower()) is not None


def redact(text: str) -> str:
    """Replace credential-looking substrings with ``[REDACTED]``.

    Examples:
        >>> redact("Authorization: Bearer abcdefghijklmnop")
        'Authorization: Bearer [REDACTED]'
        >>> redact('{"api_key": "sk-ant-abcdefghijkl"}')
        '{"api_key": "[REDACTED]"}'
    """
    low = text.lower()
    if _LITERALS.search(low) is None:
        return text
    # Each literal is looked up on its own: one scan's matches would not overlap, and "bearer" found in
    # "bearer_token" would hide the key name the named-secret pattern needs.
    found = {lit for lit in _ALL_LITERALS if lit in low}
    for pattern, replacement, literals in _SECRET_PATTERNS:
        if found.intersection(literals):
            text = pattern.sub(replacement, text)
    return text


def excerpt(raw: bytes | str, limit: int = EXCERPT_CHARS) -> str:
    """A short, redacted, printable excerpt of an untrusted log line.

    Undecodable bytes are shown as ``\\xNN`` escapes rather than lost.
    """
    if isinstance(raw, bytes):
        # Decode a little more than we keep, so a multi-byte character at the
        # cut is not turned into escapes.
        raw = raw[: limit * 4].decode("utf-8", errors="backslashreplace")
    text = redact(raw)
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return text


# Characters a terminal or a CI log acts on instead of showing: C0 and C1 controls (escape sequences that
# clear the screen or retitle the window; a line break that starts a "::error::" workflow command) and the
# bidirectional overrides that reorder what is shown. Each is shown as its escape instead.
_CONTROL_CHARS = [*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0), 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)]
_PRINTABLE = {c: (f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}") for c in _CONTROL_CHARS}


def printable(text: str) -> str:
    r"""``text`` with every control character shown as its escape, for terminals and CI logs.

    Examples:
        >>> printable("model\n::error::x"), printable("\x1b]0;pwned\x07ok"), printable("plain text")
        ('model\\x0a::error::x', '\\x1b]0;pwned\\x07ok', 'plain text')
    """
    return text.translate(_PRINTABLE)
