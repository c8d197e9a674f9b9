"""A labelled corpus: which family each session gets, its benign twin, its ground-truth label, and the files.

``generate_session(seed, index, …)`` is pure and deterministic: session
``index`` of corpus ``seed`` always comes out the same, whatever else is
generated and in whatever order (each session seeds its own RNG streams from
``"<seed>:<index>:<family>:<stream>"``). ``simulate(out, …)`` writes a corpus and its
``labels.json``.

Label schema (one object per main session, in ``labels.json["sessions"]``):

``session_id``            ``claude-code:<sessionId>`` (``codex:<id>``, ``otel:<id>`` for a session written as Codex or
                          OTel), as tokaudit names it
``agent_format``          ``claude-code`` | ``codex`` | ``otel``: the format the agent's side was written in
``session_uuid``, ``transcript``, ``subagent_transcripts``, ``mcp_transcripts``  (paths relative to the corpus)
``index``                 position in the corpus (with the seed, reproduces the session)
``family``, ``kind``      family name; ``benign`` | ``attack``
``is_attack``, ``hard_negative``
``template_family``, ``stealth``   wording family and stealth level 0–4 (attacks; null for benign)
``onset_turn``            0-based index, among the main session's requests, of the first request of the attack
                          window: the first whose tool calls, their results or its input differ from the benign
                          twin's (the first malicious call; the call whose result carries a decoy; the first request
                          after a tool-surface change); null for benign sessions
``attack_end_turn``       index of the last request of the attack window (the terminal call, or the overthinking answer)
``attack_requests``       requests in the window (interleaved benign requests inside it included)
``attack_server``, ``attack_tool``, ``attack_tool_name``   the malicious MCP server and tool (``mcp__s__t``)
``knobs``                 every parameter the family drew (chain_length, list_length, repair_prob, …)
``info``                  what actually happened (chain_calls, repairs, cycle_tools, …)
``model``, ``thinking``, ``cache_ttl``, ``agent_version``, ``project``
``narration``             where each MCP call carries an ``explanation`` argument in new words ("first"/"last" key), or null
``n_requests``, ``n_tool_calls``, ``n_mcp_calls``, ``compactions``
``tokens``                the main session's usage: input/cache_read/cache_write_5m/cache_write_1h/output/total
``subagents``             per subagent: session_id (``claude-code:<sessionId>:agent-<id>``, or the spawned thread's
                          ``codex:<id>`` / nested conversation's ``otel:<id>``), agent_type, model,
                          n_requests, tokens
``total_tokens_with_subagents``
``twin_tokens``           the benign twin's total (main + subagents); equals the session's own for benign sessions
``excess_tokens``         total_tokens_with_subagents − twin_tokens: what the attack added (0 for benign)
``twin_usage``, ``excess_usage``   the same by kind (input/cache_read/cache_write_5m/cache_write_1h/output), to price
                          the excess (a cache read costs a tenth of an uncached input token, output five times it)
``mcp_sessions``          per MCP connection: server, session_id (``mcp-jsonrpc:<connection>``), calls, surface_changed
``success``               true: the task's final answer is delivered in every family
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from tokaudit.simulate.families import FAMILIES, Family, apply_overrides
from tokaudit.simulate.model import TTL_1H_MS, TTL_5M_MS, McpListing, SessionSpec, Sim
from tokaudit.simulate.templates import TEMPLATE_FAMILIES
from tokaudit.simulate.text import pick, ri, uuid4
from tokaudit.simulate.text import slug as make_slug
from tokaudit.simulate.writers import AGENT_FORMATS, encode_cwd, own_uuid, write_session

GENERATOR_VERSION = 1
DAY_MS = 86_400_000
CORPUS_DAYS = 28
VERSIONS = ("2.1.97", "2.1.98", "2.1.101", "2.1.104", "2.1.107", "2.1.112")
USERS = ("dev", "alex", "sam", "kim", "ana", "ravi")
PROJECTS = ("webapp", "billing-service", "data-pipeline", "mobile-api", "infra", "docs-site", "ml-experiments", "cli-tools",
            "payments", "search", "notifications", "analytics")  # fmt: skip


@dataclass
class Generated:
    sim: Sim
    slug: str
    label: dict[str, Any]
    agent_format: str = "claude-code"


class _Streams:
    """Named RNG streams of one build; a name always gives the same stream object."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.cache: dict[str, random.Random] = {}

    def __call__(self, name: str) -> random.Random:
        if name not in self.cache:
            self.cache[name] = random.Random(f"{self.base}:{name}")
        return self.cache[name]


def pick_family(rng: random.Random, families: Sequence[str] | None, attack_share: float) -> Family:
    """The family of one session: attack with probability ``attack_share`` (when both kinds are allowed), then by weight."""
    pool = [FAMILIES[f] for f in (families or FAMILIES)]
    benign = [f for f in pool if f.kind == "benign"]
    attacks = [f for f in pool if f.kind == "attack"]
    if benign and attacks:
        group = attacks if rng.random() < attack_share else benign
    else:
        group = benign or attacks
    return rng.choices(group, weights=[f.weight for f in group])[0]


# Share of sessions whose MCP calls each carry a narration argument (``SessionSpec.narration``).
NARRATED_SHARE = 0.2


def draw_spec(rng: random.Random, family: Family) -> SessionSpec:
    model = rng.choices([m for m, _ in family.models], weights=[w for _, w in family.models])[0]
    user = pick(rng, USERS)
    cwd = f"/home/{user}/{pick(rng, PROJECTS)}" if rng.random() < 0.7 else f"/Users/{user}/code/{pick(rng, PROJECTS)}"
    day = rng.randrange(CORPUS_DAYS)
    hour_ms = int(rng.triangular(6, 23, 14) * 3_600_000)
    return SessionSpec(
        session_uuid=uuid4(rng),
        cwd=cwd,
        version=pick(rng, VERSIONS),
        git_branch=pick(rng, ("main", "main", "dev", f"feat/{pick(rng, PROJECTS)}", f"fix/issue-{ri(rng, 10, 999)}")),
        model=model,
        start_ms=day * DAY_MS + hour_ms + rng.randrange(3_600_000),
        system_prefix_tokens=ri(rng, 14_000, 21_000),
        ttl_ms=TTL_1H_MS if rng.random() < 0.2 else TTL_5M_MS,
        thinking=rng.random() < family.thinking_prob,
        narration=pick(rng, ("first", "last")) if rng.random() < NARRATED_SHARE else None,
    )


def build(family: Family, spec: SessionSpec, knobs: dict[str, Any], base: str, attack: bool) -> tuple[Sim, dict[str, Any]]:
    """Build one version of a session (the attack, or its benign twin) from the same seeds."""
    sim = Sim(spec, random.Random(f"{base}:noise"))
    info = family.build(sim, _Streams(base), knobs, attack)
    sim.close()
    return sim, info


def usage_with_subagents(sim: Sim) -> dict[str, int]:
    """The session's usage by kind, its subagents included."""
    out = sim.totals().as_dict()
    for run in sim.subagents:
        for key, value in run.sim.totals().as_dict().items():
            out[key] += value
    return out


def generate_session(seed: int, index: int, *, families: Sequence[str] | None = None, attack_share: float = 0.2,
                     knob_overrides: dict[str, Any] | None = None, agent_formats: Mapping[str, float] | None = None) -> Generated:  # fmt: skip
    """Session ``index`` of corpus ``seed``: the session itself and its label (no I/O).

    ``knob_overrides`` replaces drawn knobs the session's family has (``{"stealth": 4, "chain_length": 40}``).
    ``agent_formats`` gives the share of sessions whose agent side is written in another format than
    Claude Code's (``{"codex": 0.3, "otel": 0.2}``), drawn from a stream of its own: every other draw
    stays as it was.
    """
    family = pick_family(random.Random(f"{seed}:{index}"), families, attack_share)
    # Everything after the family is seeded by it too: the same index under another family filter
    # is another session (with another session id).
    base = f"{seed}:{index}:{family.name}"
    rng = random.Random(base)
    spec = draw_spec(rng, family)
    knobs = apply_overrides(family, family.knobs(random.Random(f"{base}:knobs")), knob_overrides)
    is_attack = family.kind == "attack"
    sim, info = build(family, spec, knobs, base, is_attack)
    twin = usage_with_subagents(build(family, spec, knobs, base, False)[0]) if is_attack else usage_with_subagents(sim)
    slug = make_slug(rng)
    agent_format = draw_agent_format(random.Random(f"{base}:agent-format"), agent_formats)
    return Generated(sim, slug, make_label(index, family, knobs, info, sim, twin, agent_format), agent_format)


def check_agent_formats(agent_formats: Mapping[str, float] | None) -> None:
    """Raise ValueError unless ``agent_formats`` are shares (each in [0, 1], at most 1 in all) of known formats."""
    if not agent_formats:
        return
    unknown = sorted(set(agent_formats) - set(AGENT_FORMATS))
    shares = agent_formats.values()
    if unknown or sum(shares) > 1 + 1e-9 or not all(0 <= v <= 1 for v in shares):
        raise ValueError(f"agent formats must be shares (summing to at most 1) of {', '.join(AGENT_FORMATS)}: {dict(agent_formats)}")


def draw_agent_format(rng: random.Random, agent_formats: Mapping[str, float] | None) -> str:
    """The format a session's agent side is written in: each of ``agent_formats`` with its share, else Claude Code."""
    check_agent_formats(agent_formats)
    if not agent_formats:
        return "claude-code"
    u = rng.random()
    for name, share in agent_formats.items():
        if u < share:
            return name
        u -= share
    return "claude-code"


def make_label(index: int, family: Family, knobs: dict[str, Any], info: dict[str, Any], sim: Sim, twin: dict[str, int],
               agent_format: str = "claude-code") -> dict[str, Any]:  # fmt: skip
    spec = sim.spec
    own_ids = agent_format != "claude-code"  # Codex threads and OTel conversations: a subagent has an id of its own
    is_attack = family.kind == "attack"
    steered = [r.index for r in sim.requests if r.phase == "attack"]
    server = info.get("attack_server") if is_attack else None
    tool = info.get("attack_tool") if is_attack else None
    usage = usage_with_subagents(sim)
    total = usage["total_tokens"]
    session_id = f"{agent_format}:{spec.session_uuid}"
    return {
        "session_id": session_id,
        "agent_format": agent_format,
        "session_uuid": spec.session_uuid,
        "index": index,
        "family": family.name,
        "kind": family.kind,
        "is_attack": is_attack,
        "hard_negative": family.hard_negative,
        "template_family": knobs.get("template_family") if is_attack else None,
        "stealth": knobs.get("stealth") if is_attack else None,
        "onset_turn": steered[0] if steered else None,
        "attack_end_turn": steered[-1] if steered else None,
        "attack_requests": len(steered),
        "attack_server": server,
        "attack_tool": tool,
        "attack_tool_name": f"mcp__{server}__{tool}" if server and tool else None,
        "knobs": knobs,
        "info": {k: v for k, v in info.items() if k not in ("attack_server", "attack_tool")},
        "model": spec.model,
        "thinking": spec.thinking,
        "narration": spec.narration,
        "cache_ttl": "1h" if spec.ttl_ms == TTL_1H_MS else "5m",
        "agent_version": spec.version,
        "project": encode_cwd(spec.cwd),
        "n_requests": len(sim.requests),
        "n_tool_calls": sum(len(r.tool_uses) for r in sim.requests),
        "n_mcp_calls": sum(len(s.calls) for s in sim.servers.values()),
        "compactions": sim.compactions,
        "tokens": sim.totals().as_dict(),
        "subagents": [
            {"session_id": f"{agent_format}:{own_uuid(run.sim)}" if own_ids else f"{session_id}:agent-{run.agent_id}", "agent_type": run.agent_type, "model": run.sim.model,
             "n_requests": len(run.sim.requests), "tokens": run.sim.totals().as_dict()}
            for run in sim.subagents
        ],  # fmt: skip
        "total_tokens_with_subagents": total,
        "twin_tokens": twin["total_tokens"],
        "excess_tokens": total - twin["total_tokens"],
        "twin_usage": twin,
        "excess_usage": {key: usage[key] - twin[key] for key in usage},
        "mcp_sessions": [
            {"server": s.name, "session_id": f"mcp-jsonrpc:{s.connection}", "calls": len(s.calls),
             "surface_changed": any(isinstance(r, McpListing) and r.changed for r in s.records)}
            for s in sim.servers.values()
        ],  # fmt: skip
        "success": True,
    }


def _generate_and_write(out: str, seed: int, indices: Iterable[int], families: Sequence[str] | None, attack_share: float,
                        overrides: dict[str, Any] | None = None, agent_formats: Mapping[str, float] | None = None) -> tuple[list[dict[str, Any]], int]:  # fmt: skip
    labels, written = [], 0
    for index in indices:
        gen = generate_session(seed, index, families=families, attack_share=attack_share, knob_overrides=overrides, agent_formats=agent_formats)
        paths = write_session(Path(out), gen.sim, gen.slug, gen.agent_format)
        written += paths.pop("bytes")
        gen.label.update(transcript=paths["transcript"], subagent_transcripts=paths["subagents"], mcp_transcripts=paths["mcp"])
        labels.append(gen.label)
    return labels, written


@dataclass
class CorpusSummary:
    sessions: int
    attacks: int
    bytes_written: int
    seconds: float
    labels_path: str


def simulate(out: str | Path, sessions: int, seed: int, *, families: Sequence[str] | None = None, attack_share: float = 0.2,
             jobs: int = 1, knob_overrides: dict[str, Any] | None = None, agent_formats: Mapping[str, float] | None = None) -> CorpusSummary:  # fmt: skip
    """Write ``sessions`` simulated sessions under ``out`` (``projects/``, ``mcp/``; ``codex/``, ``otel/`` for the
    shares ``agent_formats`` gives those formats) and ``out/labels.json``.

    The output is the same for the same ``seed``, ``sessions``, ``families`` and
    ``attack_share``, whatever ``jobs`` is (sessions are independent).
    """
    unknown = [f for f in families or () if f not in FAMILIES]
    if unknown:
        raise ValueError(f"unknown families {unknown}; known: {', '.join(FAMILIES)}")
    check_agent_formats(agent_formats)  # before any work
    started = time.perf_counter()
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    indices = list(range(sessions))
    labels: list[dict[str, Any]] = []
    written = 0
    if jobs <= 1 or sessions < 50:
        labels, written = _generate_and_write(str(out), seed, indices, families, attack_share, knob_overrides, agent_formats)
    else:
        chunk = max(10, sessions // (jobs * 8))
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            futures = [pool.submit(_generate_and_write, str(out), seed, indices[i : i + chunk], families, attack_share, knob_overrides, agent_formats)
                       for i in range(0, sessions, chunk)]  # fmt: skip
            for fut in futures:
                part, n = fut.result()
                labels.extend(part)
                written += n
    doc = {
        "generator": "tokaudit.simulate",
        "generator_version": GENERATOR_VERSION,
        "seed": seed,
        "sessions_requested": sessions,
        "families": list(families) if families else None,
        "attack_share": attack_share,
        "knob_overrides": knob_overrides or None,
        "agent_formats": dict(agent_formats) if agent_formats else None,
        "token_rule": "bytes/4 of the text written (text.tokens_of)",
        "family_catalog": {
            name: {"kind": f.kind, "hard_negative": f.hard_negative, "template_families": list(TEMPLATE_FAMILIES.get(f.template_kind or "", ())),
                   "description": f.description}
            for name, f in FAMILIES.items()
        },  # fmt: skip
        "sessions": labels,
    }
    labels_path = out / "labels.json"
    labels_path.write_bytes(msgspec.json.format(msgspec.json.encode(doc), indent=1))
    return CorpusSummary(len(labels), sum(1 for lb in labels if lb["is_attack"]), written, time.perf_counter() - started, str(labels_path))
