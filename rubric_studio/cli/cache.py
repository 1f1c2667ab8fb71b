"""``rubric-studio cache stats|clear``: the persistent judge-reply cache."""

from __future__ import annotations

import argparse
import sys
from argparse import Namespace


def register(parser: argparse.ArgumentParser) -> None:
    parser.description = "Inspect or clear the judge reply cache."
    parser.add_argument("action", choices=("stats", "clear"))
    parser.add_argument("--cache-path", metavar="FILE")


def run(args: Namespace) -> int:
    from rubric_studio.engine.cache import ReplyCache

    cache = ReplyCache(args.cache_path)
    try:
        if args.action == "clear":
            removed = cache.clear()
            sys.stdout.write(f"cleared {removed} cached replies from {cache.path}\n")
            return 0
        from rubric_studio.judges.userdir import secret_source

        stats = cache.stats()
        sys.stdout.write(f"cache: {stats.path}\nentries: {stats.entries}\nsize: {stats.bytes / 1024:.1f} KiB\n")
        sys.stdout.write(f"fence secret: {secret_source()}\n")
        for model, count in stats.models.items():
            sys.stdout.write(f"  {model}: {count}\n")
        return 0
    finally:
        cache.close()
