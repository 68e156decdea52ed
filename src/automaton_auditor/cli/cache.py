"""`audit cache show` and `audit cache clear`."""

from __future__ import annotations

from typing import Annotated

import typer

cache_app = typer.Typer(help="Show or clear the caches (env AUDITOR_CACHE_DIR moves them).",
                        no_args_is_help=True)


@cache_app.command("show")
def cache_show() -> None:
    """Where the caches live, and what each file holds."""
    from rich.console import Console
    from rich.table import Table

    from automaton_auditor.storage.kv import cache_files, default_cache_dir

    root = default_cache_dir()
    table = Table("file", "holds", "entries", "size", title=str(root))
    for item in cache_files(root):
        entries = "" if item.entries is None else str(item.entries)
        table.add_row(item.name, item.what, entries, f"{item.bytes / 1e6:.1f} MB")
    Console().print(table)


@cache_app.command("clear")
def cache_clear(
    keep_runs: Annotated[bool, typer.Option(
        "--keep-runs", help="Keep run checkpoints (resume/replay still work).")] = False,
) -> None:
    """Delete the cached facts, opinions and (unless --keep-runs) run checkpoints."""
    from automaton_auditor.storage.kv import KNOWN_FILES, clear_cache, default_cache_dir

    root = default_cache_dir()
    names = [n for n in KNOWN_FILES if not (keep_runs and n == "runs.sqlite")]
    removed = clear_cache(root, names)
    typer.echo(f"removed {', '.join(removed) or 'nothing'} from {root}", err=True)
