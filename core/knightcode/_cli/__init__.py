"""The command line: ``knightcode [OPTIONS] [MESSAGE...]`` and its subcommands.

:func:`run` is the edge where user mistakes become one line on stderr and an exit code
(0 success, 1 runtime failure, 2 usage or configuration error); nothing a user can cause ends
in a traceback.
"""

from __future__ import annotations

import sys

SUBCOMMANDS = (
    "config",
    "doctor",
    "install",
    "keys",
    "list",
    "login",
    "logout",
    "mcp",
    "remove",
    "sandbox",
    "tools",
    "trust",
    "update",
)


def _print_error(message: str) -> None:
    print(f"knightcode: {message}", file=sys.stderr)


def run(args: list[str]) -> int:
    """Run knightcode with command-line ``args`` and return the exit status."""
    import click

    from knightcode._errors import KnightcodeError, SettingsError

    try:
        if args and args[0] in SUBCOMMANDS:
            from knightcode._cli.subcommands import subcommands

            code = subcommands.main(args, prog_name="knightcode", standalone_mode=False)
            return code if isinstance(code, int) else 0
        else:
            from knightcode._cli.main_command import run_main

            return run_main(args)
        return 0
    except SettingsError as error:
        _print_error(str(error))
        return error.exit_code
    except KnightcodeError as error:
        _print_error(f"error: {error}")
        return error.exit_code
    except click.exceptions.NoArgsIsHelpError as error:
        print(error.format_message(), file=sys.stderr)
        return 2
    except click.UsageError as error:
        hint = (
            "knightcode --help"
            if not (args and args[0] in SUBCOMMANDS)
            else f"knightcode {args[0]} --help"
        )
        _print_error(f"error: {error.format_message()} (see '{hint}')")
        return 2
    except click.exceptions.Exit as done:
        return int(done.exit_code)
    except click.Abort:
        return 1
    except KeyboardInterrupt:
        _print_error("interrupted")
        return 130
