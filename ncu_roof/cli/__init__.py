"""The thin CLI: parse options, call the library, write what the renderers return. Each command's
module registers it on `app`, imported only when a command line names it (`register`: `ncu-roof
predict` never loads the analysis). Every user error is an `NcuRoofError`, caught once in `main`
and printed as `error:` / `hint:` with its exit code."""

from __future__ import annotations

import atexit
import contextlib
import gc
import importlib
import os
import re
import sys
import textwrap
import threading
from collections.abc import Mapping, Sequence
from dataclasses import fields
from enum import Enum
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import typer
from typer.core import TyperCommand

from ncu_roof.base import stop
from ncu_roof.base.ncu import one_blas_thread
from ncu_roof.base.text import one_line
from ncu_roof.errors import ExitCode, NcuRoofError, UsageError
from ncu_roof.render.console import stderr_width
from ncu_roof.render.output import StdoutClosedError
from ncu_roof.version import __version__

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

Options = TypeVar("Options", bound="DataclassInstance")

GC_FIRST_THRESHOLD_OBJECTS = 200_000  # new objects between two passes of the cyclic collector (default 700)
CLOSED_PIPE = 141  # 128 + SIGPIPE: what a shell reports for a tool stopped by a closed pipe

HELP = (
    "Hierarchical roofline verdicts for Nsight Compute reports: is each kernel memory-, compute- or "
    "latency-bound, at which tier, how far below its roof, and which kernel to fix first.\n\n"
    "Start with `ncu-roof analyze --example`; `ncu-roof COMMAND -h` shows a command's options."
)

app = typer.Typer(
    name="ncu-roof",
    help=HELP,
    no_args_is_help=False,
    invoke_without_command=True,
    context_settings={"help_option_names": ["-h", "--help"]},
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


class Verbosity(Enum):  # how much the CLI says on stderr
    QUIET = "quiet"  # errors only
    NORMAL = "normal"  # plus progress (`read …`, `wrote …`) and warnings (`launches lack counters`)
    VERBOSE = "verbose"  # plus details (the full ncu command that collects missing counters)


verbosity = [Verbosity.NORMAL]  # this run's, set by the root options

COMMAND_MODULES = {  # which module registers each command, in the order the help lists them
    "analyze": "analyze",
    "gpus": "predict",
    "predict": "predict",
    "profile": "profile",
    "plot": "report",
    "diff": "report",
    "history": "history",
}


def register(args: Sequence[str]) -> None:
    """Import the module of the command `args` name (the first word not an option: root options take
    no value), or every one when they name none or ask for the root help first (`ncu-roof -h gpus`)."""
    at = next((i for i, a in enumerate(args) if not a.startswith("-")), None)
    word = args[at] if at is not None else None
    root_help = any(a in ("-h", "--help") for a in args[:at])
    names = [COMMAND_MODULES[word]] if word in COMMAND_MODULES and not root_help else COMMAND_MODULES.values()
    for name in dict.fromkeys(names):
        importlib.import_module(f"ncu_roof.cli.{name}")
    order = list(COMMAND_MODULES)  # the help's order, whichever command a process registered first
    app.registered_commands.sort(key=lambda c: order.index(c.name) if c.name in order else len(order))


_TYPE_LABEL = re.compile(r"(?<=\S) <[a-z][a-z0-9\[\], ]*>")


class ReadableHelp(TyperCommand):
    """Help without typer's type labels (`FILE... <list[str]>` → `FILE...`): the metavars say it."""

    def get_help(self, ctx: Any) -> str:  # typer's Context type is private (typer._click)
        return _TYPE_LABEL.sub("", super().get_help(ctx))


def named_alike(cls: type[Options], given: Mapping[str, Any], **more: Any) -> Options:
    """`cls` of a command's parameters (`locals()`) that its fields name alike, and of `more`
    (the fields a parameter gives in another form)."""
    return cls(**{f.name: given[f.name] for f in fields(cls) if f.name not in more}, **more)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"ncu-roof {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    ctx: typer.Context,
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version."
    ),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Only errors on stderr."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="More detail on stderr."),
) -> None:
    if quiet and verbose:
        raise UsageError("--quiet and --verbose contradict", hint="pass one of them")
    verbosity[0] = Verbosity.QUIET if quiet else Verbosity.VERBOSE if verbose else Verbosity.NORMAL
    if ctx.invoked_subcommand is None:  # bare `ncu-roof`: the help, as a normal answer
        typer.echo(ctx.get_help())
        raise typer.Exit()


def folded(message: str) -> str:
    """A message for stderr, ending in a line break: `one_line`, folded at spaces to `stderr_width` (a
    terminal's; in a pipe none), each further line two spaces deeper than the first, a path whole."""
    text = one_line(message)
    if (width := stderr_width()) is None:
        return text + "\n"
    indent = " " * (len(text) - len(text.lstrip(" ")) + 2)
    lines = textwrap.wrap(
        text, width, subsequent_indent=indent, break_long_words=False, break_on_hyphens=False
    )
    return "\n".join(lines or [text]) + "\n"


def fail(message: str, hint: str, code: int) -> NoReturn:
    sys.stderr.write(f"error: {one_line(message)}\n" + (f"hint: {one_line(hint)}\n" if hint else ""))
    sys.exit(int(code))


VERBOSITY_FLAGS = {"-q": "--quiet", "--quiet": "--quiet", "-v": "--verbose", "--verbose": "--verbose"}


def hoist_verbosity(args: list[str]) -> list[str]:
    """`ncu-roof analyze R -q` → `ncu-roof --quiet analyze R`: the flags work after the command
    too (never after `--`, where the profiled program's own arguments start)."""
    end = args.index("--") if "--" in args else len(args)
    flags = [VERBOSITY_FLAGS[a] for a in args[:end] if a in VERBOSITY_FLAGS]
    return [*dict.fromkeys(flags), *(a for a in args[:end] if a not in VERBOSITY_FLAGS), *args[end:]]


def console() -> None:
    """The `ncu-roof` console script (and `python -m ncu_roof`): `main` in a process of its own (numpy's
    OpenBLAS at one thread, `ncu_report` before numpy: each function says why). As in mypy, the cyclic
    collector runs rarely (a full pass walks every object: ~2.5 s of CPU for the 100k trace's PNG) and
    the process ends without freeing its objects (`util.hard_exit`, 0.06-0.1 s): after `main`, the
    atexit handlers, stdout and stderr flushed, `os._exit` (a failed flush, a profiler or tracer, or a
    thread of a library's own still running: the usual exit, which waits for it)."""
    one_blas_thread()
    report_reader_first(sys.argv[1:])
    gc.set_threshold(GC_FIRST_THRESHOLD_OBJECTS, *gc.get_threshold()[1:])
    try:
        main()
    except SystemExit as done:
        threads = [t for t in threading.enumerate() if not t.daemon and t is not threading.current_thread()]
        if isinstance(done.code, int) and not threads and sys.getprofile() is None and sys.gettrace() is None:
            with contextlib.suppress(OSError, ValueError):
                atexit._run_exitfuncs()  # what dependencies clean up at exit (matplotlib's temp folder)
                for stream in filter(None, (sys.stdout, sys.stderr)):  # (None: started closed)
                    stream.flush()
                os._exit(done.code)
        raise


def report_reader_first(args: list[str]) -> None:
    """Load `ncu_report` before anything loads numpy when the command may read a report (`profile`,
    a report or a folder among the arguments): ncu_report 2025.3.1 crashed the process reading a
    report once numpy 2.5 was loaded before it (seen on an H200 machine, Python 3.12), and read
    it cleanly loaded first. Nothing happens without `ncu_report`."""
    from ncu_roof.ingest import REPORT_SUFFIXES  # (neither imports numpy)
    from ncu_roof.ingest.rep import ncu_report_installed

    if "profile" in args[:1] or any(a.endswith(REPORT_SUFFIXES) or os.path.isdir(a) for a in args):
        ncu_report_installed()


def interrupted(hint: str = "run it again; no partial output was written") -> NoReturn:
    """Ctrl-C (or SIGTERM, SIGHUP): one `error:` and one `hint:` line, exit 128 + the signal."""
    words, code = stop.interruption()
    fail(words, hint, code)


def main(argv: list[str] | None = None) -> None:
    """The CLI, for `argv` (default: the process' arguments); leaves by `sys.exit` with the
    documented exit code. SIGTERM and SIGHUP act as Ctrl-C: every cleanup runs, exit 128 + N."""
    verbosity[0] = Verbosity.NORMAL
    with stop.as_interrupts():
        try:
            # without standalone mode, typer returns (not raises) the code of a `typer.Exit` and
            # turns Ctrl-C inside a command into 130
            args = hoist_verbosity(sys.argv[1:] if argv is None else list(argv))
            register(args)
            code = app(args=args, prog_name="ncu-roof", standalone_mode=False)
            if code == 130:
                interrupted()
            sys.exit(code if isinstance(code, int) else 0)
        except NcuRoofError as err:
            fail(err.message, err.hint, err.exit_code)
        except (BrokenPipeError, StdoutClosedError):  # `| head` closed the pipe: stop quietly, with
            # stdout on /dev/null so that the interpreter's last flush cannot fail too
            with contextlib.suppress(OSError, ValueError):
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            sys.exit(CLOSED_PIPE)
        except (typer.Abort, KeyboardInterrupt):
            interrupted()
        except typer.TyperException as err:  # usage errors found by the option parser
            hint = "`ncu-roof --help` (or `ncu-roof COMMAND --help`) lists the options"
            fail(err.format_message(), hint, ExitCode.USAGE)
        except Exception as err:  # a bug in ncu-roof, not the user's doing
            if os.environ.get("NCU_ROOF_DEBUG"):
                raise
            hint = "please report it with the input file; NCU_ROOF_DEBUG=1 shows the traceback"
            fail(f"internal error: {type(err).__name__}: {err}", hint, ExitCode.FAILED)
