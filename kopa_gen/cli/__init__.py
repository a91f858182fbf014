"""The `kopa-gen` command line: one surface for people and CI."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from kopa_gen.cli import build, edge, run, sandbox, task, train
from kopa_gen.cli.options import Endpoint, Parser, UsageError, json_object, json_value, positive_int
from kopa_gen.cli.run import default_run_folder
from kopa_gen.language.diagnostics import Level, SpecError, UserError

__all__ = [
    "Endpoint",
    "UsageError",
    "default_run_folder",
    "json_object",
    "json_value",
    "main",
    "parser",
    "positive_int",
]

_SUBCOMMANDS = (
    "sandbox_command",
    "edge_command",
    "train_command",
    "task_command",
    "audit_command",
    "what",
)  # `judge calibrate` says `judge`


def parser() -> Parser:
    """Every command and its flags; each command's `func` parses the flags into its one options object."""
    top = Parser(prog="kopa-gen", description=__doc__)
    top.add_argument("--root", help="project folder (default: found from the working directory)")
    sub = top.add_subparsers(dest="command", required=True)
    build.add_build(sub)
    sandbox.add_commands(sub)  # serve, sandbox serve, call, tools
    run.add_commands(sub)  # eval, report, score, judge calibrate, stats
    edge.add_commands(sub)
    train.add_commands(sub)
    task.add_commands(sub)
    build.add_new_and_demo(sub)
    return top


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    prog = " ".join(
        ["kopa-gen", args.command] + [getattr(args, a) for a in _SUBCOMMANDS if getattr(args, a, None)]
    )
    try:
        if args.root and not (Path(args.root) / "specs").is_dir():
            raise UsageError(
                f"--root {args.root} holds no specs/ folder; give the folder of a kopa-gen project"
            )
        result: int = args.func(args)
        return result
    except SpecError as exc:
        print(exc, file=sys.stderr)
        errors = sum(d.level is Level.ERROR for d in exc.diagnostics)
        print(f"{errors} problem(s) found; nothing was written.", file=sys.stderr)
        return 1
    except UserError as exc:
        print(f"{prog}: error: {exc}" + (f" ({exc.hint})" if exc.hint else ""), file=sys.stderr)
        return 2
    except (
        SystemExit
    ) as exc:  # a module that stops with a sentence (e.g. a missing input file): one line, exit 2
        if not isinstance(exc.code, str):
            raise
        print(f"{prog}: error: {exc.code}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # Ctrl-C: what was done is said by the command that knows (eval); no traceback
        print(f"\n{prog}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `kopa-gen tools | head`: the reader has what it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    raise SystemExit(main())
