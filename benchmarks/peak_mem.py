#!/usr/bin/env python3
"""Run a command and sample the memory of its whole process tree.

    python benchmarks/peak_mem.py [--interval-ms 10] [--json OUT] -- CMD [ARGS...]

GNU `time -v` reports ru_maxrss, the peak of the *largest single process*. A tool that
parses with several worker processes uses the sum, so this samples every process below
CMD (via /proc/<pid>/task/<tid>/children) and records the peak of the summed RSS and PSS
(PSS splits shared pages between processes, so it does not double-count fork-shared
memory). Sampling can miss peaks shorter than the interval. Linux only, stdlib only.
The command's stdout/stderr are passed through; the exit status is the command's.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

PAGE_KB = os.sysconf("SC_PAGE_SIZE") // 1024


def _children(pid: int) -> list[int]:
    out: list[int] = []
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{tid}/children") as f:
                    out.extend(int(x) for x in f.read().split())
            except OSError:
                pass
    except OSError:
        pass
    return out


def _mem_kb(pid: int) -> tuple[int, int]:
    rss = pss = 0
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Rss:"):
                    rss = int(line.split()[1])
                elif line.startswith("Pss:"):
                    pss = int(line.split()[1])
                    break
    except (OSError, ValueError):
        try:
            with open(f"/proc/{pid}/statm") as f:
                rss = int(f.read().split()[1]) * PAGE_KB
                pss = rss
        except (OSError, ValueError, IndexError):
            pass
    return rss, pss


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description="peak summed RSS/PSS of a process tree")
    ap.add_argument("--interval-ms", type=float, default=10.0)
    ap.add_argument("--json", help="write the result as JSON to this file (else to stderr)")
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    a = ap.parse_args(argv)
    cmd = a.cmd[1:] if a.cmd[:1] == ["--"] else a.cmd
    if not cmd:
        ap.error("no command")
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd)
    peak_rss = peak_pss = max_procs = samples = 0
    rc, ru = 1, None
    interval = a.interval_ms / 1000.0
    while True:
        stack, procs, rss, pss = [p.pid], 0, 0, 0
        while stack:
            pid = stack.pop()
            r, s = _mem_kb(pid)
            rss += r
            pss += s
            procs += 1
            stack.extend(_children(pid))
        samples += 1
        peak_rss, peak_pss, max_procs = max(peak_rss, rss), max(peak_pss, pss), max(max_procs, procs)
        try:
            wpid, status, ru = os.wait4(p.pid, os.WNOHANG)
        except ChildProcessError:
            break
        if wpid:
            rc = os.waitstatus_to_exitcode(status)
            break
        time.sleep(interval)
    wall = time.perf_counter() - t0
    res = {
        "cmd": cmd,
        "rc": rc,
        "wall_s": round(wall, 4),
        "samples": samples,
        "max_procs": max_procs,
        "tree_rss_peak_kb": peak_rss,
        "tree_pss_peak_kb": peak_pss,
        "ru_maxrss_kb": ru.ru_maxrss if ru else None,
        "interval_ms": a.interval_ms,
    }
    text = json.dumps(res)
    if a.json:
        with open(a.json, "w") as f:
            f.write(text + "\n")
    else:
        print(text, file=sys.stderr)
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
