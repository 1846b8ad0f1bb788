"""The ``mbstate`` command: one subcommand per module of this package.

Each command module defines ``register(subparsers)``, which adds its parser and sets ``run``, a
function of the parsed arguments returning the exit code. User errors (``MbstateError``, bad
arguments) print one line on stderr and exit with code 2, never a traceback.
Every command runs BLAS on one thread (estimator.threads), with a fixed threshold for the C heap's
memory maps (estimator.allocator). A command line naming a command imports
that command's module alone (``mbstate simulate`` loads no GTSAM: memory, start-up time); help
and unknown commands import them all. From the command line (``argv`` None), ``simulate`` and
``replay`` run in child processes that compile the kernels in stages (estimator.compile_stages).
"""

from __future__ import annotations

import argparse
import importlib
import sys

from estimator import compile_stages
from estimator.allocator import fixed_mmap_threshold
from estimator.errors import MbstateError
from estimator.threads import one_blas_thread

COMMAND_MODULES = ("demo", "run", "view", "replay", "publish", "log", "echo", "simulate", "check", "forward", "inverse",
                   "hybrid", "statics", "bench", "keys", "lab", "doctor")


class ArgumentParser(argparse.ArgumentParser):
    """argparse with one-line errors: ``mbstate forward: error: ...`` and exit code 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


def build_parser(argv: list[str] | None = None) -> ArgumentParser:
    """The top-level parser with the subcommand ``argv`` names, else (no argv, help, an unknown name)
    with every available one."""
    named = argv[0] if argv else None
    parser = ArgumentParser(prog="mbstate", description="Multibody state estimation with factor graphs.")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=ArgumentParser)
    subparsers.required = True
    for name in (named,) if named in COMMAND_MODULES else COMMAND_MODULES:
        importlib.import_module(f"estimator.cli.{name}").register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the console script; returns the exit code."""
    if argv is None and compile_stages.staged(sys.argv[1:]):
        return compile_stages.supervise(sys.argv[1:])
    argv = sys.argv[1:] if argv is None else argv
    fixed_mmap_threshold()
    args = build_parser(argv).parse_args(argv)
    one_blas_thread()
    compile_stages.restart_when_full(live=any(getattr(args, key, None) for key in compile_stages.LIVE_OPTIONS))
    try:
        return int(args.run(args) or 0)
    except MbstateError as exc:
        print(f"mbstate {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # e.g. `mbstate check --json | head`
        sys.stderr.close()
        return 0


if __name__ == "__main__":
    sys.exit(main())
