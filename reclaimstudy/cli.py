"""One entry point, one subcommand per step of a study: kernel, image, run, sweep, ..."""

import argparse
import sys

from rich.text import Text

from reclaimstudy.errors import StudyError
from reclaimstudy.progress import console


def cmd_kernel(args) -> int:
    from reclaimstudy import kernel

    built = kernel.build_kernel(jobs=args.jobs, force=args.force)
    print(built.directory)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="study", description="gem5 full-system study of Linux page-reclaim policies")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("kernel", help="build (or reuse) the patched guest kernel; prints its cache directory")
    p.add_argument("--jobs", "-j", type=int, help="parallel make jobs (default: all cores)")
    p.add_argument("--force", action="store_true", help="rebuild even when a cached build exists")
    p.set_defaults(func=cmd_kernel)
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except StudyError as error:
        console.print(Text.assemble(("error: ", "bold red"), str(error)))
        return 2
    except KeyboardInterrupt:
        console.print("interrupted")
        return 130


if __name__ == "__main__":
    sys.exit(main())
