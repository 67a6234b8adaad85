"""`plansight lsp | run | demo`."""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="plansight", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    lsp = commands.add_parser("lsp", help="start the language server on stdio")
    # Clients such as vscode-languageclient pass --stdio; stdio is the only transport.
    lsp.add_argument("--stdio", action="store_true", help=argparse.SUPPRESS)
    run = commands.add_parser("run", help="run the agent from the terminal")
    run.add_argument("prompt")
    run.add_argument("--workspace", default=".", help="workspace folder (default: .)")
    run.add_argument("--yes", action="store_true", help="accept every edit and command")
    run.add_argument("--model", default=None)
    run.add_argument("--new-session", action="store_true", help="forget the previous session")
    demo = commands.add_parser("demo", help="run the recorded offline demo (no API key)")
    demo.add_argument("--workspace", default=None, help="where to copy the demo project")
    demo.add_argument("--yes", action="store_true", help="accept every edit and command")
    args = parser.parse_args(argv)

    if args.command == "lsp":
        from plansight.lsp.server import serve

        serve()
        return 0
    if args.command == "run":
        from plansight.cli.run import run_cli

        return run_cli(args.prompt, args.workspace, args.yes, args.model, args.new_session)
    from plansight.cli.demo import demo_cli

    return demo_cli(args.workspace, args.yes)


if __name__ == "__main__":
    sys.exit(main())
