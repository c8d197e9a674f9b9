"""Wording the detectors look for in tool results (RE2- and Python-compatible patterns).

Wording is the weakest evidence there is — an attacker can phrase a notice any
way — so no verdict depends on it: continuation markers are one of two ways a
continuation loop is recognised (the other is counter-only argument changes),
and directive notices only enrich explanations.
"""

from __future__ import annotations

# Results that say "there is more": pagination fields, progress and partial-result notices.
CONTINUATION = (
    r"(?i)has_?more|next_?cursor|next_?page|page\s*\d+\s*(of|/)\s*\d+|\b\d+\s*/\s*\d+\b|progress|partial|remaining|"
    r"segment|checkpoint|not yet|continu|more results|synchroni[sz]ed"
)

# Results that tell the model to call again.
DIRECTIVES = (
    r"(?i)(call|invoke|run|query)\b[^.\n]{0,40}\b(again|once more)|re-?send|re-?submit|repeat the (call|request)|"
    r"increment\b|do not (abbreviate|summari[sz]e|skip)|before answering|you must (call|invoke|continue)|"
    r"continue (calling|with the next)|call (the )?next segment"
)
