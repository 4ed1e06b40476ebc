"""`symc explain SCRIPT [--json] [--code] [args...]`: run a script, then explain every compiled function.

Every `symc.compile` made while the script runs is recorded; after it finishes (or fails), the
explanation of each is printed (or dumped as one JSON list with --json).
"""

from __future__ import annotations

import argparse
import json
import runpy
import sys

from symc.cli import subcommand


def _configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("script", help="the Python script to run")
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    parser.add_argument("--code", action="store_true",
                        help="also print each entry's generated guard check function")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="arguments for the script")


@subcommand("explain", "run SCRIPT and explain every function it compiled with symc")
def run_explain(args: argparse.Namespace) -> int:
    from symc.cache import _RECORDERS
    from symc.explain import explain

    recorded: list = []
    _RECORDERS.append(recorded)
    old_argv = sys.argv
    sys.argv = [args.script, *args.args]
    status = 0
    try:
        runpy.run_path(args.script, run_name="__main__")
    except SystemExit as exc:
        status = exc.code if isinstance(exc.code, int) else 0
    finally:
        sys.argv = old_argv
        _RECORDERS.remove(recorded)
    children = {id(c) for fn in recorded for c in fn.all_functions()[1:]}
    roots = [fn for fn in recorded if id(fn) not in children]
    explanations = [explain(fn) for fn in roots]
    if args.json:
        print(json.dumps([e.to_json() for e in explanations], indent=2))
    else:
        for e in explanations:
            print(e)
            if args.code:
                print("generated check functions:")
                print(e.check_functions())
            print()
        if not explanations:
            print("no function was compiled with symc")
    return status


run_explain.configure = _configure
