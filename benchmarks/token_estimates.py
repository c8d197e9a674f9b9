"""How well do token estimates for tool traffic match exact counts? (not a test; writes a markdown report)

Exact counts come from the logs themselves: over a single-tool step (a request
asking for one tool, then the session's next request) the context grows by an
exact number of tokens, ``Δ`` (see ``tokaudit.analyze.tokens``). Each method
predicts ``Δ`` from that step's tool result and arguments:

* ``bytes/4``: (result bytes + argument bytes) / 4, the uncalibrated heuristic;
* ``calibrated``: the fit ``tokaudit calibrate`` makes (tokens per result byte,
  per argument byte, plus a constant), trained on the other steps;
* ``tokenizer``: o200k_base token counts of the result and argument texts (read
  back from the log files), plus a constant framing overhead fitted on the
  other steps (the median of Δ − counted tokens).

Because the shared samples hold few steps, errors are measured leave-one-out:
each step is predicted by a model fitted on all the others. Relative error =
|predicted − Δ| / Δ, reported per model family and content type as median and
p90.

Usage: python benchmarks/token_estimates.py LOG_FOLDER... --out benchmarks/results-token-estimates.md
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

from tokaudit.analyze.tokens import _nonneg_lstsq, single_tool_steps
from tokaudit.ingest.runner import ingest_paths
from tokaudit.ingest.tokens import count_tokens
from tokaudit.store import open_store


def texts_from_logs(paths: list[Path]) -> dict[str, dict[str, str]]:
    """tool call id -> {"args": text, "result": text} read back from Claude Code and Codex logs."""
    out: dict[str, dict[str, str]] = {}
    files = [p for root in paths for p in (sorted(root.rglob("*.jsonl")) if root.is_dir() else [root])]
    for path in files:
        for raw in path.read_bytes().splitlines():
            try:
                obj = json.loads(raw)
            except ValueError:
                continue
            if not isinstance(obj, dict):
                continue
            message = obj.get("message")
            if isinstance(message, dict) and isinstance(message.get("content"), list):
                for block in message["content"]:
                    if not isinstance(block, dict):
                        continue
                    if block.get("type") == "tool_use" and block.get("id"):
                        args = json.dumps(block.get("input"), separators=(",", ":"), ensure_ascii=False)
                        out.setdefault(block["id"], {})["args"] = args
                    elif block.get("type") == "tool_result" and block.get("tool_use_id"):
                        content = block.get("content")
                        if isinstance(content, list):
                            content = "".join(b.get("text", "") for b in content if isinstance(b, dict))
                        out.setdefault(block["tool_use_id"], {})["result"] = content if isinstance(content, str) else ""
            payload = obj.get("payload")
            if obj.get("type") == "response_item" and isinstance(payload, dict) and payload.get("call_id"):
                entry = out.setdefault(payload["call_id"], {})
                if payload.get("type") in ("function_call", "custom_tool_call"):
                    value = payload.get("arguments", payload.get("input"))
                    entry["args"] = value if isinstance(value, str) else json.dumps(value)
                elif payload.get("type") in ("function_call_output", "custom_tool_call_output"):
                    value = payload.get("output")
                    entry["result"] = value if isinstance(value, str) else json.dumps(value)
    return out


def leave_one_out(steps: list[dict], texts: dict[str, dict[str, str]]) -> dict[str, np.ndarray]:
    """Relative error of each method on each step, predicted from all the other steps."""
    delta = np.array([s["delta_tokens"] for s in steps], dtype=float)
    rbytes = np.array([s["result_bytes"] for s in steps], dtype=float)
    abytes = np.array([s["args_bytes"] for s in steps], dtype=float)
    counted = np.array(
        [count_tokens(texts.get(s["tool_call_id"], {}).get("result", ""))[0] + count_tokens(texts.get(s["tool_call_id"], {}).get("args", ""))[0] for s in steps],
        dtype=float,
    )
    x = np.column_stack([rbytes, abytes, np.ones(len(steps))])
    pred_cal, pred_tok = np.zeros(len(steps)), np.zeros(len(steps))
    for i in range(len(steps)):
        keep = np.arange(len(steps)) != i
        coef = _nonneg_lstsq(x[keep], delta[keep])
        pred_cal[i] = x[i] @ coef
        pred_tok[i] = counted[i] + np.median(delta[keep] - counted[keep])
    heuristic = (rbytes + abytes) / 4
    return {name: np.abs(p - delta) / delta for name, p in (("bytes/4", heuristic), ("calibrated", pred_cal), ("tokenizer o200k_base", pred_tok))}


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("paths", nargs="+", type=Path)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp, open_store(str(Path(tmp) / "t.duckdb")) as store:
        ingest_paths(store, args.paths, workers=1)
        steps = single_tool_steps(store)
    texts = texts_from_logs(args.paths)
    groups: dict[tuple[str, str], list[dict]] = {}
    for s in steps:
        groups.setdefault((s["model_family"], s["content_type"]), []).append(s)
    lines = [
        "# Token estimates for tool traffic vs exact context growth",
        "",
        f"Command: `python benchmarks/token_estimates.py {' '.join(str(p) for p in args.paths)}"
        + (f" --out {args.out}`" if args.out else "`"),
        "",
        "Exact count per step: Δ = context (uncached + cache read + cache write input) of the next request − that of the",
        "request that asked for the tool. Each method predicts Δ from the step's result and arguments; leave-one-out.",
        "",
        "| family | content | steps | method | median rel. error | p90 rel. error |",
        "|---|---|---:|---|---:|---:|",
    ]
    for (family, ctype), rows in sorted(groups.items()):
        if len(rows) < 3:
            continue
        for method, err in leave_one_out(rows, texts).items():
            lines.append(f"| {family} | {ctype} | {len(rows)} | {method} | {np.median(err):.0%} | {np.quantile(err, 0.9):.0%} |")
    report = "\n".join(lines) + "\n"
    if args.out:
        args.out.write_text(report, encoding="utf-8")
    print(report)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
