"""The command-line vocabulary every Ghost console tool shares (docs/cli.md).

One home for the exit codes, the parser that words every usage error as one line naming the
tool, ``--version``, and the guard that turns what must never be a traceback into one line and
an exit code: a closed stdout (``| head``), Ctrl-C, an internal fault. Pure: argparse and the
standard library only, so every package's tools (the runtime's, the auditor's, PX4's, the
review's) use it without depending on each other.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from enum import IntEnum
import importlib.metadata
import os
import sys
import traceback
from typing import NoReturn, TextIO

__all__ = ['EXIT_CODES_HELP', 'ExitCode', 'guarded', 'ToolParser', 'positive', 'tool_error']


class ExitCode(IntEnum):
    """The exit codes of every Ghost tool."""

    #: Every verdict holds, or the tool did what it was asked.
    OK = 0
    #: A verdict does not hold.
    VIOLATED = 1
    #: A usage error: a bad option or value, a flag without the one it needs, an output that
    #: exists or cannot be written.
    USAGE = 2
    #: The input cannot be read or used (not a bag, truncated, another tool's format).
    BAD_INPUT = 3
    #: An internal fault (a bug: the one line says where the details went).
    FAULT = 4
    #: Interrupted (Ctrl-C), as shells report SIGINT.
    INTERRUPTED = 130


#: The exit codes, as every tool's --help prints them.
EXIT_CODES_HELP = ('exit codes: 0 holds / done; 1 a verdict does not hold; 2 usage error; '
                   '3 unreadable or unusable input; 4 internal fault; 130 interrupted')


class ToolParser(argparse.ArgumentParser):
    """An argument parser with Ghost's usage errors, exit codes and ``--version``.

    A usage error is one line, ``<tool>: error: <what> (see --help)``, and exit 2. The help
    ends with the exit codes (after `epilog`, kept as written with `raw_epilog`).
    `distribution` names the installed package whose version ``--version`` prints.
    """

    def __init__(self, prog: str, description: str, distribution: str,
                 epilog: str = '', *, raw_epilog: bool = False) -> None:
        super().__init__(prog=prog, description=description,
                         epilog=f'{epilog}\n{EXIT_CODES_HELP}' if epilog else EXIT_CODES_HELP,
                         formatter_class=(argparse.RawDescriptionHelpFormatter if raw_epilog
                                          else argparse.HelpFormatter))
        self.add_argument('--version', action='version',
                          version=f'{prog} {_version(distribution)}')

    def error(self, message: str) -> NoReturn:
        """Print one line naming the tool and exit 2."""
        self.exit(ExitCode.USAGE, f'{self.prog}: error: {message} (see --help)\n')


def _version(distribution: str) -> str:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return '(version unknown: not installed as a distribution)'


def positive(kind: type[int] | type[float]) -> Callable[[str], int | float]:
    """An argparse type: a finite number of ``kind`` that is > 0."""
    def parse(text: str) -> int | float:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f'not a {kind.__name__}: {text!r}') from None
        if not 0 < value < float('inf'):
            raise argparse.ArgumentTypeError(f'must be a finite number > 0, got {text}')
        return value
    return parse


def tool_error(prog: str, message: str, code: ExitCode) -> int:
    """Print ``<tool>: error: <message>`` (on one line) to stderr; return `code`."""
    print(f'{prog}: error: {" ".join(message.split())}', file=sys.stderr, flush=True)
    return int(code)


def guarded(prog: str, run: Callable[[], int]) -> int:
    """Run a tool's work; never let a traceback reach the user.

    A closed stdout or stderr (``tool | head``, ``tool 2>&1 | head -1``) drops the rest of
    that output, not the work: the tool goes on (its files are written) and exits with the
    work's code, whenever the reader went away. Ctrl-C exits 130 with one line. Any other
    exception is an internal fault: one line, exit 4, and the traceback in the file
    ``$GHOST_FAULT_LOG`` when set (the line says how to get it otherwise).
    """
    stdout, stderr = sys.stdout, sys.stderr
    sys.stdout = _ClosedPipeSafe(stdout)
    sys.stderr = _ClosedPipeSafe(stderr)
    try:
        return run()
    except KeyboardInterrupt:
        return tool_error(prog, 'interrupted', ExitCode.INTERRUPTED)
    except Exception as err:  # noqa: BLE001 - the one place a tool's fault becomes a line
        where = os.environ.get('GHOST_FAULT_LOG')
        if where:
            with open(where, 'a', encoding='utf-8') as log:
                traceback.print_exc(file=log)
            hint = f'the traceback is in {where}'
        else:
            hint = 'set GHOST_FAULT_LOG=PATH and rerun to keep its traceback'
        return tool_error(prog, f'internal fault ({type(err).__name__}: {err}); {hint}',
                          ExitCode.FAULT)
    finally:
        # Whatever is still buffered goes now, while a closed pipe is still dropped quietly:
        # the interpreter's own flush at exit would make a closed pipe exit 120.
        sys.stdout.flush()
        sys.stderr.flush()
        sys.stdout, sys.stderr = stdout, stderr


class _ClosedPipeSafe:
    """A standard stream that, once its reader has gone (EPIPE), drops what follows quietly."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._closed = False

    def write(self, text: str) -> int:
        if not self._closed:
            try:
                return self._stream.write(text)
            except BrokenPipeError:
                self._close()
        return len(text)

    def flush(self) -> None:
        if not self._closed:
            try:
                self._stream.flush()
            except BrokenPipeError:
                self._close()

    def _close(self) -> None:
        # Point the descriptor at /dev/null too, so the interpreter's final flush cannot fail.
        self._closed = True
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, self._stream.fileno())
        except (OSError, ValueError):
            pass
        finally:
            os.close(devnull)

    def __getattr__(self, name: str) -> object:
        return getattr(self._stream, name)
