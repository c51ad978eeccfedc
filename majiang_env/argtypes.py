"""``argparse`` value types for the package's command-line tools: each checks its
value when the command line is parsed, before any work, and refuses it with
``argparse.ArgumentTypeError`` (a usage error, exit status 2) naming the range."""
from __future__ import annotations

import argparse
import math
import os

__all__ = ["int_in", "number_in", "output_dir", "existing_file", "text", "seed", "agent_spec"]


def int_in(lo: int, hi: int):
    """An int in ``lo..hi`` (inclusive)."""
    def parse(s: str) -> int:
        try:
            v = int(s, 10)
        except (ValueError, TypeError):
            raise argparse.ArgumentTypeError(f"must be an integer in {lo}..{hi}, got {s[:40]!r}") from None
        if not lo <= v <= hi:
            raise argparse.ArgumentTypeError(f"must be an integer in {lo}..{hi}, got {s[:40]}")
        return v
    parse.__name__ = "integer"
    return parse


def number_in(lo: float = -math.inf, hi: float = math.inf, lo_open: bool = False):
    """A finite float in [lo, hi] (``(lo, hi]`` with ``lo_open``)."""
    span = f"{'(' if lo_open else '['}{lo:g}, {hi:g}]"

    def parse(s: str) -> float:
        try:
            v = float(s)
        except (ValueError, TypeError):
            raise argparse.ArgumentTypeError(f"must be a finite number in {span}, got {s[:40]!r}") from None
        if not math.isfinite(v) or v < lo or v > hi or (lo_open and v == lo):
            raise argparse.ArgumentTypeError(f"must be a finite number in {span}, got {s[:40]}")
        return v
    parse.__name__ = "number"
    return parse


def output_dir(s: str) -> str:
    """A folder to write to: not an existing file, its nearest existing parent writable."""
    if not s or "\0" in s:
        raise argparse.ArgumentTypeError("must be a folder path")
    if os.path.exists(s) and not os.path.isdir(s):
        raise argparse.ArgumentTypeError(f"{s!r} exists and is not a folder")
    parent = os.path.abspath(s)
    while not os.path.exists(parent):
        parent = os.path.dirname(parent)
    if not os.path.isdir(parent) or not os.access(parent, os.W_OK | os.X_OK):
        raise argparse.ArgumentTypeError(f"cannot write under {parent!r}")
    return s


def existing_file(s: str) -> str:
    """A path to a file that exists."""
    if not s or "\0" in s or not os.path.isfile(s):
        raise argparse.ArgumentTypeError(f"no such file: {s[:200]!r}")
    return s


def text(max_len: int = 80, refused=()):
    """A non-empty string of at most ``max_len`` characters, none of ``refused``."""
    def parse(s: str) -> str:
        if not s.strip() or len(s) > max_len:
            raise argparse.ArgumentTypeError(f"must be 1..{max_len} characters")
        if s in refused:
            raise argparse.ArgumentTypeError(f"must not be one of {', '.join(map(repr, refused))}")
        return s
    parse.__name__ = "text"
    return parse


def seed(s: str) -> int:
    """A seed: an integer in 0..2**64-1."""
    try:
        v = int(s, 10)
    except (ValueError, TypeError):
        v = -1
    if not 0 <= v < 2 ** 64:
        raise argparse.ArgumentTypeError(f"a seed is an integer in 0..2**64-1, got {s[:40]!r}")
    return v


def agent_spec(s: str) -> str:
    """An agent spec the registry resolves (``majiang_env.agents``; the error names the known agents)."""
    from .engine.registry import resolve
    try:
        resolve(s, "agent")
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    return s
