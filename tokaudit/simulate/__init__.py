"""Simulated agent sessions, benign and attacked, written in real log formats with ground-truth labels.

tokaudit's detectors need sessions to calibrate on and to be evaluated
against: benign work of many shapes (including the hard negatives that look
like attacks: pagination, polling, batch edits, retries, long coding sessions
with compaction) and economic-DoS attacks driven by malicious MCP servers
(counter loops, cursor drip-feeds, tool cycles, sponges, overthinking decoys,
rug pulls, LoopTrap cues), each at stealth levels 0–4 and in several wording
families. In a fifth of the sessions the model narrates every MCP call in an
argument of its own (``explanation``: new words each time, as some clients and
server schemas ask for). The simulator writes them as Claude Code transcripts
plus the server side of every MCP connection, and a ``labels.json`` with the
truth (see ``corpus`` for the schema).

Modules: ``text`` (pools and ids), ``model`` (token, cache and time
accounting), ``agent`` (builtin tools and benign moves), ``catalog`` (MCP
servers and tasks), ``templates`` (notice wording by stealth level),
``families`` (the families and their knobs), ``corpus`` (labels, twins,
the corpus), ``writers`` (the only I/O).

Examples:
    >>> g = generate_session(7, 0)
    >>> g.label["session_id"].startswith("claude-code:"), g.label["tokens"]["total_tokens"] > 0
    (True, True)
"""

from tokaudit.simulate.corpus import CorpusSummary, Generated, generate_session, simulate
from tokaudit.simulate.families import FAMILIES, Family
from tokaudit.simulate.templates import DIRECTIVE_LEXICON, lexicon_hits

__all__ = ["FAMILIES", "DIRECTIVE_LEXICON", "CorpusSummary", "Family", "Generated", "generate_session", "lexicon_hits", "simulate"]
