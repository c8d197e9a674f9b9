"""Finding log files: the agents' default folders, walking folders, canonical paths."""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from fnmatch import translate
from functools import lru_cache
from pathlib import Path

from tokaudit.errors import NoInputError
from tokaudit.ingest import INGESTERS, file_patterns
from tokaudit.ingest.reader import logical_path


@lru_cache(maxsize=1)
def _name_patterns() -> tuple[re.Pattern[str], re.Pattern[str] | None]:
    """File names worth reading when walking a folder (any format's ``FILE_PATTERNS``), and names to
    pass over (``SIDECAR_PATTERNS``: metadata files a parser reads beside its log, not logs)."""
    wanted, sidecars = file_patterns()
    wanted_re = re.compile("|".join(translate(p) for p in sorted(wanted)))
    sidecar_re = re.compile("|".join(translate(p) for p in sorted(sidecars))) if sidecars else None
    return wanted_re, sidecar_re


def wanted_name(name: str) -> bool:
    """True for a file name a folder walk should pick up.

    A compressed log (``rollout-1.jsonl.gz``) is picked up as the log it holds.

    Examples:
        >>> wanted_name("rollout-2026-01-01.jsonl"), wanted_name("agent-a1.meta.json"), wanted_name("notes.txt")
        (True, False, False)
        >>> wanted_name("rollout-2026-01-01.jsonl.gz"), wanted_name("notes.txt.gz")
        (True, False)
    """
    wanted, sidecar = _name_patterns()
    name = logical_path(name)
    return bool(wanted.match(name)) and not (sidecar is not None and sidecar.match(name))


def default_paths() -> list[Path]:
    """The default log folders of every known format that exist on this machine."""
    roots = [root for module in INGESTERS.values() for root in module.default_roots()]
    return [r for r in roots if r.is_dir()]


@dataclass
class Discovery:
    """What a walk found: files to read, paths given that do not exist, and paths met but not readable."""

    files: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    unreadable: list[tuple[str, str]] = field(default_factory=list)  # (path, reason)


def discover(paths: Iterable[str | os.PathLike[str]]) -> Discovery:
    """Files under ``paths`` (folders walked for names some format reads; files taken as given), sorted, deduplicated.

    Paths are made canonical (symlinks resolved) so one file reached two ways
    is read once. Symlinked folders are walked, each real folder once, so a link
    back up the tree cannot loop. A folder that cannot be listed and a log-named
    link that leads nowhere are reported, never passed over in silence.
    """
    found = Discovery()
    names: set[str] = set()
    seen_dirs: set[str] = set()
    for p in paths:
        p = os.path.realpath(os.path.expanduser(os.fspath(p)))
        if os.path.isfile(p):
            names.add(p)
        elif os.path.isdir(p):
            _walk(p, names, seen_dirs, found)
        elif os.path.exists(p):
            found.unreadable.append((p, "not a regular file or folder"))
        else:
            found.missing.append(p)
    found.files = sorted(names)
    return found


def _walk(top: str, names: set[str], seen_dirs: set[str], found: Discovery) -> None:
    # A stack, not recursion: a folder tree any depth deep is walked.
    stack = [top]
    while stack:
        folder = stack.pop()
        if folder in seen_dirs:
            continue
        seen_dirs.add(folder)
        try:
            entries = list(os.scandir(folder))
        except OSError as exc:
            found.unreadable.append((folder, f"cannot list folder: {exc.strerror}"))
            continue
        for entry in entries:
            if entry.is_symlink():
                try:
                    target = os.stat(entry.path)
                except OSError as exc:
                    if wanted_name(entry.name):
                        found.unreadable.append((entry.path, f"link leads nowhere: {exc.strerror}"))
                    continue
                if stat.S_ISDIR(target.st_mode):
                    stack.append(os.path.realpath(entry.path))
                elif stat.S_ISREG(target.st_mode) and wanted_name(entry.name):
                    names.add(os.path.realpath(entry.path))
            elif entry.is_dir(follow_symlinks=False):
                stack.append(entry.path)
            elif wanted_name(entry.name) and entry.is_file(follow_symlinks=False):
                names.add(entry.path)  # only regular files: reading a FIFO or a device would block or never end


def resolve_files(paths: Sequence[str | os.PathLike[str]] | None) -> Discovery:
    """The files to ingest for ``paths`` (default: the agents' folders); NoInputError if there is nothing."""
    if not paths:
        paths = default_paths()
        if not paths:
            searched = [str(r) for m in INGESTERS.values() for r in m.default_roots()]
            raise NoInputError(
                "no log folders found in the default locations", hint=f"pass paths to ingest; looked in: {', '.join(searched)}"
            )
    found = discover(paths)
    if not found.files and found.missing:
        raise NoInputError(f"no such file or folder: {', '.join(found.missing)}", hint="check the paths you passed")
    return found
