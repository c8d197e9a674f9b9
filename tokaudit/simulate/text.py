"""Text and identifiers for simulated sessions: deterministic pools, sized slices, real id shapes.

Every piece of text a simulated session holds is cut from a few pools built
once at import from a fixed seed (prose, numbered source lines as ``Read``
shows them, raw source, test-runner output, paths). Cutting is one slice per
piece, which is what keeps 3,000 sessions fast; the sessions still differ
because each cut starts at an offset drawn from the session's own RNG.

Sizes are in tokens at ``BYTES_PER_TOKEN`` (4) bytes per token, the same rule
the simulator's accounting uses (``tokens_of``).
"""

from __future__ import annotations

import base64
import random
import string
from collections.abc import Sequence
from datetime import datetime, timedelta, timezone
from functools import lru_cache
from typing import TypeVar

T = TypeVar("T")

BYTES_PER_TOKEN = 4


def ri(rng: random.Random, lo: int, hi: int) -> int:
    """A random integer in ``[lo, hi]``; ``Random.randint`` is 5× slower and this runs millions of times.

    Examples:
        >>> all(3 <= ri(random.Random(i), 3, 5) <= 5 for i in range(50))
        True
    """
    return lo + int(rng.random() * (hi - lo + 1))


def pick(rng: random.Random, seq: Sequence[T]) -> T:
    """A random element of ``seq`` (fast ``Random.choice``)."""
    return seq[int(rng.random() * len(seq))]
B62 = string.digits + string.ascii_uppercase + string.ascii_lowercase

_WORDS = (
    "the a to of and in is that for it with as on this be we can function value file test error update return "
    "config module import class data result check list user request build run path line cache token session change "
    "fix add remove parse read write query table index column schema report usage model count total time start end "
    "state handle would could will make sure first also because when where which order field type default option "
    "method helper branch commit review merge release version package client server route handler response status"
).split()

CODE_TEMPLATES = (
    'def {w}_{v}(self, {a}: int, {b}: str = "") -> dict:',
    '    """Return the {w} for {v}."""',
    "    if {a} is None or not {b}:",
    '        raise ValueError(f"bad {w}: {{{a}!r}}")',
    '    result = {{"{w}": {a}, "{v}": {b}}}',
    "    for item in self.{w}s:",
    "        total += item.{v} * {n}",
    "    return result",
    "import {w}",
    "from {w}.{v} import {a}, {b}",
    "class {W}{V}(Base):",
    "    {a} = Column(Integer, default={n})",
    "    # TODO: handle the {w} case when {v} is empty",
    '    logger.info("%s -> %s", {a}, {b})',
    "const {a} = await fetch(`/api/{w}/${{{b}}}`);",
    "    assert {w}_{v}({n}, 'x') == {{'{w}': {n}}}",
    "",
)

_EXTENSIONS = (".py", ".py", ".py", ".ts", ".tsx", ".go", ".rs", ".md", ".toml", ".json")


def _build_pools() -> tuple[str, str, str, str, tuple[str, ...]]:
    rng = random.Random(20260301)
    prose_parts: list[str] = []
    size = 0
    while size < 200_000:
        sentence = " ".join(pick(rng, _WORDS) for _ in range(ri(rng, 6, 18)))
        piece = sentence[0].upper() + sentence[1:] + pick(rng, (". ", ". ", ". ", ".\n\n", ": `x`. "))
        prose_parts.append(piece)
        size += len(piece)
    numbered: list[str] = []
    raw: list[str] = []
    size, line_no = 0, 1
    while size < 300_000:
        w, v, a, b = (pick(rng, _WORDS) for _ in range(4))
        line = pick(rng, CODE_TEMPLATES).format(w=w, v=v, a=a, b=b, W=w.capitalize(), V=v.capitalize(), n=ri(rng, 0, 999))
        numbered.append(f"{line_no:6d}\u2192{line}\n")
        raw.append(line + "\n")
        size += len(line) + 8
        line_no = line_no + 1 if rng.random() > 0.01 else 1
    test_lines: list[str] = []
    size = 0
    while size < 120_000:
        w, v = pick(rng, _WORDS), pick(rng, _WORDS)
        kind = rng.random()
        if kind < 0.8:
            line = f"tests/test_{w}.py::test_{v}_{pick(rng, _WORDS)} PASSED"
        elif kind < 0.9:
            line = f"tests/test_{w}.py::test_{v} FAILED - AssertionError: assert {ri(rng, 0, 99)} == {ri(rng, 0, 99)}"
        else:
            line = f"  {w}/{v}.py:{ri(rng, 1, 400)}: in {w}_{v}\n    result = self.{v}({w})"
        test_lines.append(line + "\n")
        size += len(line) + 1
    paths = tuple(
        "/".join(pick(rng, _WORDS) for _ in range(ri(rng, 1, 3))) + pick(rng, _EXTENSIONS) for _ in range(3000)
    )
    return "".join(prose_parts), "".join(numbered), "".join(raw), "".join(test_lines), paths


PROSE, CODE_NUMBERED, CODE_RAW, TEST_OUTPUT, REL_PATHS = _build_pools()


def tokens_of(text: str) -> int:
    """Tokens of a text by the simulator's rule: UTF-8 bytes / 4, rounded up.

    Examples:
        >>> tokens_of(""), tokens_of("abc"), tokens_of("abcd" * 10)
        (0, 1, 10)
    """
    return -(-len(text.encode("utf-8")) // BYTES_PER_TOKEN)


def cut(pool: str, rng: random.Random, tokens: int) -> str:
    """About ``tokens`` tokens of ``pool`` starting at a random offset (ASCII pools: exact).

    Examples:
        >>> len(cut(PROSE, random.Random(1), 25))
        100
    """
    n = max(0, int(tokens)) * BYTES_PER_TOKEN
    if n >= len(pool):
        return (pool * (n // len(pool) + 1))[:n]
    start = int(rng.random() * (len(pool) - n))
    return pool[start : start + n]


def sentence(rng: random.Random, tokens: int) -> str:
    """A piece of prose of about ``tokens`` tokens, trimmed to whole words."""
    text = cut(PROSE, rng, tokens + 4)
    first = text.find(" ")
    last = text.rfind(" ")
    body = text[first + 1 : last] if 0 <= first < last else text
    return body[:1].upper() + body[1:].rstrip(".:`\n ") + "."


_TO_B62 = str.maketrans("+/", "Xq")


def rand62(rng: random.Random, n: int) -> str:
    """``n`` random base62 characters (base64 of random bytes with ``+/`` mapped to letters: fast).

    Examples:
        >>> s = rand62(random.Random(0), 22); len(s), set(s) <= set(B62)
        (22, True)
    """
    return base64.b64encode(rng.randbytes(-(-n * 3 // 4))).decode("ascii")[:n].translate(_TO_B62)


def msg_id(rng: random.Random) -> str:
    """An Anthropic message id (``msg_01`` + 22 base62 characters)."""
    return "msg_01" + rand62(rng, 22)


def request_id(rng: random.Random) -> str:
    """An Anthropic request id (``req_011C`` + 20 base62 characters)."""
    return "req_011C" + rand62(rng, 20)


def tool_use_id(rng: random.Random) -> str:
    """A tool_use block id (``toolu_01`` + 22 base62 characters)."""
    return "toolu_01" + rand62(rng, 22)


def uuid4(rng: random.Random) -> str:
    """A version-4 UUID drawn from ``rng`` (deterministic, unlike ``uuid.uuid4``).

    Examples:
        >>> u = uuid4(random.Random(3)); (len(u), u[14], u[19] in "89ab")
        (36, '4', True)
    """
    h = f"{rng.getrandbits(128):032x}"
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{'89ab'[int(h[16], 16) & 3]}{h[17:20]}-{h[20:]}"


def agent_id(rng: random.Random) -> str:
    """A subagent id as Claude Code names them (``a`` + 16 hex digits)."""
    return "a" + f"{rng.getrandbits(64):016x}"


def signature(rng: random.Random, n: int = 240) -> str:
    """An opaque thinking-block signature (base64-looking)."""
    return "Eo" + base64.b64encode(rng.randbytes(-(-n * 3 // 4))).decode("ascii")[:n]


def opaque(rng: random.Random, n: int = 24) -> str:
    """An opaque cursor / receipt token."""
    return rand62(rng, n)


EPOCH_UTC = datetime(2026, 3, 2, tzinfo=timezone.utc)


def iso_ms(ms: int) -> str:
    """Milliseconds since ``EPOCH_UTC`` as Claude Code writes timestamps (``…T06:20:33.873Z``).

    Examples:
        >>> iso_ms(61_005)
        '2026-03-02T00:01:01.005Z'
    """
    day, rest = divmod(ms, 86_400_000)
    seconds, millis = divmod(rest, 1000)
    minutes, second = divmod(seconds, 60)
    hour, minute = divmod(minutes, 60)
    return f"{_date(day)}T{hour:02d}:{minute:02d}:{second:02d}.{millis:03d}Z"


@lru_cache(maxsize=4096)
def _date(day: int) -> str:
    return (EPOCH_UTC + timedelta(days=day)).strftime("%Y-%m-%d")


def slug(rng: random.Random) -> str:
    """A session slug like Claude Code's (``delegated-marinating-toast``)."""
    adjectives = ("delegated", "tidy", "wandering", "quiet", "brisk", "gentle", "curious", "steady", "amber", "lucid")
    verbs = ("marinating", "humming", "drifting", "sorting", "weaving", "folding", "sketching", "brewing", "mapping")
    nouns = ("toast", "otter", "falcon", "lantern", "meadow", "harbor", "pebble", "thistle", "comet", "maple")
    return f"{pick(rng, adjectives)}-{pick(rng, verbs)}-{pick(rng, nouns)}"
