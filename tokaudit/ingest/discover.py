"""Finding log files: the agents' default folders, walking folders, canonical paths."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from fnmatch import translate
from functools import lru_cache
from pathlib import Path

from tokaudit.errors import NoInputError
from tokaudit.ingest import INGESTERS, file_patterns


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

    Examples:
        >>> wanted_name("rollout-2026-01-01.jsonl"), wanted_name("agent-a1.meta.json"), wanted_name("notes.txt")
        (True, False, False)
    """
    wanted, sidecar = _name_patterns()
    return bool(wanted.match(name)) and not (sidecar is not None and sidecar.match(name))


def default_paths() -> list[Path]:
    """The default log folders of every known format that exist on this machine."""
    roots = [root for module in INGESTERS.values() for root in module.default_roots()]
    return [r for r in roots if r.is_dir()]


def discover(paths: Iterable[str | os.PathLike[str]], missing: list[str]) -> list[str]:
    """Files under ``paths`` (folders walked for names some format reads; files taken as given), sorted, deduplicated.

    Paths are made canonical (symlinks resolved) so one file reached two ways
    is read once; folders are resolved once and walked without following links.
    """
    found: set[str] = set()
    for p in paths:
        p = os.path.realpath(os.path.expanduser(os.fspath(p)))
        if os.path.isfile(p):
            found.add(p)
        elif os.path.isdir(p):
            _walk(p, found)
        else:
            missing.append(p)
    return sorted(found)


def _walk(folder: str, found: set[str]) -> None:
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return  # an unreadable folder holds nothing we can read
    for entry in entries:
        if entry.is_dir(follow_symlinks=False):
            _walk(entry.path, found)
        elif wanted_name(entry.name) and entry.is_file():  # not a FIFO or device: reading one would block or never end
            found.add(os.path.realpath(entry.path) if entry.is_symlink() else entry.path)


def resolve_files(paths: Sequence[str | os.PathLike[str]] | None, missing: list[str]) -> list[str]:
    """The files to ingest for ``paths`` (default: the agents' folders); NoInputError if there is nothing."""
    if not paths:
        paths = default_paths()
        if not paths:
            searched = [str(r) for m in INGESTERS.values() for r in m.default_roots()]
            raise NoInputError(
                "no log folders found in the default locations", hint=f"pass paths to ingest; looked in: {', '.join(searched)}"
            )
    files = discover(paths, missing)
    if not files and missing:
        raise NoInputError(f"no such file or folder: {', '.join(missing)}", hint="check the paths you passed")
    return files
