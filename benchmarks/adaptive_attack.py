"""An adaptive attacker against the frozen detectors (not a test; writes a markdown report).

The held-out evaluation (``eval_detectors.py``) draws each attack's knobs at random. An attacker who can
try their server against the same detectors does better: they keep what slipped through and vary it. The
reference's evaluation design asks for numbers against such an attacker, with random search standing in
for the paper's tree search. Per attack family of the simulator:

1. Round 0 draws ``--population`` knob sets from the family's own distribution (chain length, wording
   family and stealth, JSON envelope, interleaved honest calls, list length, repair rate, counter form …),
   each with a task of its own (a seed: every session of the search is a new task).
2. Each candidate becomes one session (``tokaudit.simulate``), ingested beside a benign background corpus
   and audited with thresholds calibrated on that background only — the frozen detector set.
3. The attacker sees what an operator's alarm would show: flagged or not (the combined verdict at the
   cut-off that flags 1 % of the background), and what the session cost. Fitness is the session's
   amplification (its tokens over its honest twin's: the same task without the attack) when not flagged,
   nothing when flagged.
4. The next round re-draws one or two knobs of the fittest candidates (from the family's distribution, or
   a number scaled by 0.6–1.6) and tries them on new tasks (the attacker controls the server, not what users ask of it), and adds fresh
   draws (half the population each).

Per family it reports the candidates tried, the share that evaded, the largest amplification and excess
that evaded with its knobs, and the largest amplification any candidate reached, flagged or not, for scale.

Usage: python benchmarks/adaptive_attack.py --work DIR [--background 800] [--rounds 4] [--population 8] --out FILE.md
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from eval_detectors import build, cutoff, session_scores

from tokaudit.analyze.calibration import calibrate_thresholds
from tokaudit.analyze.frames import load_frames
from tokaudit.config import Config
from tokaudit.ingest.runner import ingest_paths
from tokaudit.simulate import simulate
from tokaudit.simulate.families import FAMILIES
from tokaudit.store import open_store

LOG_FOLDERS = ("projects", "mcp", "codex", "otel")


@dataclass
class Candidate:
    """One attack the attacker tries: a family, a task (``seed``) and knobs; filled in once audited."""

    family: str
    seed: int
    knobs: dict[str, Any]
    round: int
    origin: str  # "drawn" or "mutated <knob, …>"
    label: dict[str, Any] = field(default_factory=dict)
    flagged: bool = False

    @property
    def amplification(self) -> float:
        """The session's tokens over its honest twin's (the same task without the attack)."""
        return self.label["total_tokens_with_subagents"] / max(self.label["twin_tokens"], 1)

    @property
    def fitness(self) -> float:
        return 0.0 if self.flagged else self.amplification


def drawn_knobs(family: str, rng: random.Random) -> dict[str, Any]:
    """A knob set from the family's own distribution."""
    return FAMILIES[family].knobs(random.Random(rng.random()))


def mutate(parent: Candidate, rng: random.Random, round_no: int, seed: int) -> Candidate:
    """The parent's knobs with one or two of them re-drawn from the family's distribution, on a new task (``seed``):
    the attacker controls the server, not what the users ask of it, so knobs that evade must evade on any task."""
    fresh = drawn_knobs(parent.family, rng)
    keys = rng.sample(sorted(set(parent.knobs) & set(fresh)), k=min(len(fresh), rng.choice((1, 2))))
    knobs = {**parent.knobs, **{k: _varied(parent.knobs[k], fresh[k], rng) for k in keys}}
    return Candidate(parent.family, seed, knobs, round_no, "mutated " + ", ".join(keys))


def _varied(old: Any, drawn: Any, rng: random.Random) -> Any:
    """A knob's new value: the family's draw, or for a number half the time the old one scaled by 0.6–1.6 (a chain
    of 14 where the family draws 10 or 20), so the search is not confined to the values the detectors were built on."""
    if isinstance(old, bool) or not isinstance(old, (int, float)) or rng.random() < 0.5:
        return drawn
    scaled = old * rng.uniform(0.6, 1.6)
    if isinstance(old, int):
        return max(1, round(scaled))
    return min(1.0, max(0.0, scaled)) if 0.0 <= old <= 1.0 else scaled


def next_population(tried: list[Candidate], family: str, size: int, rng: random.Random, round_no: int, seeds: Iterator[int]) -> list[Candidate]:
    """Half mutations of the fittest evaders so far (knob sets already tried are not tried again), half fresh draws."""
    seen = {json.dumps(c.knobs, sort_keys=True, default=str) for c in tried}
    fittest = sorted((c for c in tried if c.family == family and c.fitness > 0), key=lambda c: -c.fitness)[: max(1, size // 4)]
    out: list[Candidate] = []
    for attempt in range(size * 20):
        if len(out) >= size // 2 or not fittest:
            break
        child = mutate(fittest[attempt % len(fittest)], rng, round_no, next(seeds))
        key = json.dumps(child.knobs, sort_keys=True, default=str)
        if key not in seen:
            seen.add(key)
            out.append(child)
    while len(out) < size:
        out.append(Candidate(family, next(seeds), drawn_knobs(family, rng), round_no, "drawn"))
    return out


def write_sessions(folder: Path, candidates: list[Candidate]) -> None:
    """Simulate each candidate as one session of its own folder and read back its label."""
    for i, c in enumerate(candidates):
        out = folder / f"c{i:03d}"
        simulate(out, 1, c.seed, families=[c.family], attack_share=1.0, knob_overrides=c.knobs)
        c.label = json.loads((out / "labels.json").read_text())["sessions"][0]


def audit_round(work: Path, background: Path, bg_labels: list[dict[str, Any]], folder: Path, candidates: list[Candidate],
                config: Config, cut: float) -> float:  # fmt: skip
    """Ingest the round's sessions into a copy of the background store, audit, and mark which were flagged."""
    db = work / f"{folder.name}.duckdb"
    for suffix in ("", ".wal", ".files"):
        if Path(f"{background}{suffix}").exists():
            shutil.copyfile(f"{background}{suffix}", f"{db}{suffix}")
    ids = [c.label["session_id"] for c in candidates]
    # Two sessions under one id would be read as one (and the background's own must stay apart).
    if len(set(ids)) != len(ids) or set(ids) & {lb["session_id"] for lb in bg_labels}:
        raise SystemExit("adaptive_attack: two simulated sessions share a session id; use another --seed")
    paths = [d / f for d in sorted(folder.iterdir()) if d.is_dir() for f in LOG_FOLDERS if (d / f).exists()]
    with open_store(str(db)) as store:
        ingest_paths(store, paths)
    started = time.perf_counter()
    scores, _ = session_scores(db, bg_labels + [c.label for c in candidates], config)
    for c in candidates:
        score = scores[c.label["session_id"]]["score"]
        c.flagged = score > cut and score > 0
    for suffix in ("", ".wal", ".files"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    return time.perf_counter() - started


def knob_text(knobs: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in knobs.items() if k not in ("scenario", "onset_requests", "post_requests"))


def report(args: argparse.Namespace, tried: list[Candidate], bg: int, cut: float, seconds: float) -> str:
    lines = [
        "# An adaptive attacker against the frozen detectors",
        "",
        f"Command: `python benchmarks/adaptive_attack.py --work {args.work} --background {args.background} --bg-seed {args.bg_seed} "
        f"--rounds {args.rounds} --population {args.population} --seed {args.seed}"
        + (f" --families {' '.join(args.families)}" if args.families else "") + (f" --out {args.out}`" if args.out else "`"),
        "",
        f"Background: {bg} benign sessions (seed {args.bg_seed}), the only data the thresholds and the verdict's cut-off "
        + (f"(suspected excess > {cut:,.0f} tokens: 1 % of the background flagged) are calibrated on. " if cut > 0 else
           "are calibrated on (fewer than 1 % of the background had any verdict, so any verdict counts as flagged). ")
        + f"{len(tried)} attack sessions tried in {args.rounds} rounds of {args.population} per family; {seconds / 60:.0f} minutes in all.",
        "",
        "Amplification: a session's tokens (input of every kind, output; subagents included) over its honest twin's — the same "
        "task, the same draws, without the attack. Excess: the difference, in tokens.",
        "",
        "| family | tried | evaded | largest amplification that evaded | its excess tokens | largest amplification tried (flagged or not) |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for family in sorted({c.family for c in tried}):
        own = [c for c in tried if c.family == family]
        evaded = [c for c in own if not c.flagged]
        best = max(evaded, key=lambda c: c.amplification, default=None)
        lines.append(
            f"| {family} | {len(own)} | {len(evaded)} ({len(evaded) / len(own):.0%}) | "
            + (f"{best.amplification:.2f}× | {best.label['excess_tokens']:,}" if best else "– | –")
            + f" | {max(c.amplification for c in own):.2f}× |"
        )
    lines += ["", "Per round, over all families (does the search find more as it goes?):", "",
              "| round | tried | evaded | evaded at ≥ 1.5× | evaded at ≥ 2× | largest amplification that evaded |", "|---:|---:|---:|---:|---:|---:|"]
    for r in range(args.rounds):
        own = [c for c in tried if c.round == r]
        evaded = [c for c in own if not c.flagged]
        top = max((c.amplification for c in evaded), default=None)
        lines.append(f"| {r} | {len(own)} | {len(evaded)} | {sum(c.amplification >= 1.5 for c in evaded)} | "
                     f"{sum(c.amplification >= 2 for c in evaded)} | {f'{top:.2f}×' if top else '–'} |")
    lines += ["", "The five largest amplifications that evaded, with their knobs:", "",
              "| family | amplification | excess tokens | attack requests | found by | knobs |", "|---|---:|---:|---:|---|---|"]
    for c in sorted((c for c in tried if not c.flagged), key=lambda c: -c.amplification)[:5]:
        lines.append(f"| {c.family} | {c.amplification:.2f}× | {c.label['excess_tokens']:,} | {c.label['attack_requests']} | "
                     f"round {c.round}, {c.origin} | {knob_text(c.knobs)} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--work", type=Path, required=True, help="a scratch folder (corpora and stores)")
    ap.add_argument("--background", type=int, default=800, help="benign sessions the detectors are calibrated on")
    ap.add_argument("--bg-seed", type=int, default=501)
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--population", type=int, default=8, help="candidates per family and round")
    ap.add_argument("--seed", type=int, default=7, help="the attacker's own random stream")
    ap.add_argument("--families", nargs="*", help="attack families (default: all)")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    started = time.perf_counter()
    args.work.mkdir(parents=True, exist_ok=True)
    background, bg_labels = build(args.work, "background", args.background, args.bg_seed, 0.0)
    with open_store(str(background)) as store:
        thresholds = calibrate_thresholds(load_frames(store), fpr=0.0025)
    config = Config(detectors=thresholds)
    bg_scores, _ = session_scores(background, bg_labels, config)
    cut = cutoff([bg_scores[lb["session_id"]]["score"] for lb in bg_labels], 0.01)
    families = args.families or [name for name, f in FAMILIES.items() if f.kind == "attack"]
    rng = random.Random(args.seed)
    seeds = iter(range(args.seed * 100_000, args.seed * 100_000 + 10**6))
    tried: list[Candidate] = []
    for round_no in range(args.rounds):
        population = [c for family in families for c in next_population(tried, family, args.population, rng, round_no, seeds)]
        folder = args.work / f"round{round_no}"
        shutil.rmtree(folder, ignore_errors=True)
        write_sessions(folder, population)
        audit_s = audit_round(args.work, background, bg_labels, folder, population, config, cut)
        tried += population
        evaded = [c for c in population if not c.flagged]
        top = max((c.amplification for c in evaded), default=0.0)
        print(f"[adaptive] round {round_no}: {len(population)} tried, {len(evaded)} evaded, largest evading amplification {top:.2f}× "
              f"(audit {audit_s:.0f} s, {time.perf_counter() - started:.0f} s so far)", flush=True)
    text = report(args, tried, len(bg_labels), cut, time.perf_counter() - started)
    (args.work / "candidates.json").write_text(json.dumps(
        [{"family": c.family, "seed": c.seed, "round": c.round, "origin": c.origin, "knobs": c.knobs, "flagged": c.flagged,
          "amplification": c.amplification, "excess_tokens": c.label["excess_tokens"], "session_id": c.label["session_id"]} for c in tried],
        indent=1, default=str))  # fmt: skip
    if args.out:
        args.out.write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
