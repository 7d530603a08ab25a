"""The thin CLI: parse options, call the library, write what the renderers return.

Each command lives in its own module and registers itself on `app`. Every user error is an
`NcuRoofError`, caught once in `main` and printed as `error:` / `hint:` with its exit code.
"""

from __future__ import annotations

import os
import sys

import typer

from ncu_roof import __version__
from ncu_roof.errors import ExitCode, NcuRoofError
from ncu_roof.render.output import StdoutClosedError
from ncu_roof.render.text import one_line

CLOSED_PIPE = 141  # 128 + SIGPIPE: what a shell reports for a tool stopped by a closed pipe

app = typer.Typer(
    name="ncu-roof",
    help="Hierarchical roofline verdicts for Nsight Compute reports: predict, profile, analyze, diff.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"ncu-roof {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version."
    ),
) -> None:
    """ncu-roof: is each kernel memory-bound or compute-bound, at which tier, and how far below its roof?"""


def report_error(err: NcuRoofError) -> int:
    sys.stderr.write(f"error: {one_line(err.message)}\n")
    if err.hint:
        sys.stderr.write(f"hint: {one_line(err.hint)}\n")
    return int(err.exit_code)


def _closed_pipe() -> int:
    """stdout is gone: point it at /dev/null so the interpreter's last flush cannot fail too."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    return CLOSED_PIPE


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point."""
    from ncu_roof.cli import commands  # noqa: F401  (registers the commands)

    try:
        # without standalone mode, typer returns (not raises) the code of a `typer.Exit` and
        # turns Ctrl-C inside a command into 130
        code = app(args=argv, standalone_mode=False)
        if code == 130:
            sys.stderr.write("error: interrupted\nhint: run it again; no partial output was written\n")
        sys.exit(code if isinstance(code, int) else 0)
    except NcuRoofError as err:
        sys.exit(report_error(err))
    except (BrokenPipeError, StdoutClosedError):  # `| head` closed the pipe: stop quietly
        sys.exit(_closed_pipe())
    except typer.Exit as done:
        sys.exit(done.exit_code)
    except (typer.Abort, KeyboardInterrupt):
        sys.stderr.write("error: interrupted\nhint: run it again; no partial output was written\n")
        sys.exit(130)
    except typer.TyperException as err:  # usage errors found by the option parser
        sys.stderr.write(f"error: {one_line(err.format_message())}\n")
        sys.stderr.write("hint: `ncu-roof --help` (or `ncu-roof COMMAND --help`) lists the options\n")
        sys.exit(int(ExitCode.USAGE))
    except Exception as err:  # a bug in ncu-roof, not the user's doing
        if os.environ.get("NCU_ROOF_DEBUG"):
            raise
        sys.stderr.write(f"error: internal error: {type(err).__name__}: {one_line(str(err))}\n")
        sys.stderr.write("hint: please report it with the input file; NCU_ROOF_DEBUG=1 shows the traceback\n")
        sys.exit(int(ExitCode.FAILED))
