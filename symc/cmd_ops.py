"""`symc ops`: print the coverage table (prims by kind; torch callables with decompositions)."""

from __future__ import annotations

import argparse

from symc.cli import subcommand


@subcommand("ops", "list the prims and the torch functions symc can decompose")
def ops_command(args: argparse.Namespace) -> int:
    from prims.coverage import coverage_markdown

    print(coverage_markdown(), end="")
    return 0
