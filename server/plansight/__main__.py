"""`plansight lsp | acp | run | demo | plan | history | sessions | checkpoints | undo | restore |
mcp | eval`.

`plansight` with no command on a terminal (stdin and stdout both one) starts the interactive
session (`plansight.cli.interactive`). Anywhere else (a pipe, a script, CI) it prints the whole
help on stderr and exits 2: there it is a command line that asks for nothing, a usage error
like any other (`plansight bogus`, a missing prompt), so a script that calls it that way fails.
`plansight --help` prints the help on stdout and exits 0.
"""

from __future__ import annotations

import argparse
import sys

from plansight import __version__

DESCRIPTION = "Plansight: a coding agent that plans in the open, in your editor or terminal."
EPILOG = """\
Start with `plansight demo` (offline, no API key), then
`plansight run "Add docstrings to utils.py" --workspace path/to/project`, or `plansight`
alone in a terminal for an interactive session in the current folder.
`plansight <command> --help` describes each command.
"""
RUN_EPILOG = """\
Environment: ANTHROPIC_API_KEY (required), ANTHROPIC_BASE_URL (any server that speaks the
Messages API), PLANSIGHT_MODEL (the model when --model is not given), PLANSIGHT_API_TIMEOUT
(seconds before one model request counts as hung), PLANSIGHT_LOG_LEVEL.
Reviews: answer `a` to accept, `r` to reject, or type a reason to reject with it (the agent
reads it). With --plan the agent plans first and changes nothing until you approve its plan:
`a` approves, `e` opens the plan in $VISUAL/$EDITOR (else vi) as `[ ] #1: text` lines, other
text asks for a revision with it, `c` cancels. Questions from the agent: answer with an
option's number (several for a multi-select question), or type your own answer.
Ctrl-C cancels the run; a second Ctrl-C quits at once.
{exit_codes}
"""
# What `plansight run` exits with; docs/terminal.md says it word for word (a test holds them to it).
RUN_EXIT_CODES = (
    "Exit codes: 0 done; 1 an error, the round limit, the model's refusal, or a run that could\n"
    "not start (no such folder, no API key); 2 a wrong command line; 130 cancelled (Ctrl-C)."
)


RESTORE_EPILOG = """\
A checkpoint is taken first: `plansight restore <its id>` undoes the restore (the command says
which). With --force, files changed outside Plansight that it would delete or overwrite are
named and you are asked y/N first (--yes: not asked; without a terminal it needs --yes).
Nothing here needs an API key. Exit codes: 0 when the restore was made (whatever it left
alone) or --dry-run said what it would do, 1 when it was refused (a run in progress,
checkpoints off, no such step or id) or not confirmed.
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="plansight",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--version", action="version", version=f"plansight {__version__}", help="print the version"
    )
    commands = parser.add_subparsers(dest="command", title="commands", metavar="<command>")

    lsp = commands.add_parser(
        "lsp",
        help="start the language server on stdio (editors start it themselves)",
        description="Start the Plansight language server on stdin/stdout, for an LSP client.",
    )
    # vscode-languageclient passes --stdio; stdio is the only transport.
    lsp.add_argument(
        "--stdio", action="store_true", help="accepted for LSP clients; stdio is the only transport"
    )

    commands.add_parser(
        "acp",
        help="start the Agent Client Protocol agent on stdio (Zed, JetBrains, Neovim, Emacs)",
        description=(
            "Serve one editor in the Agent Client Protocol (version 1) on stdin/stdout, with the "
            "options of `plansight lsp` from the environment and "
            "$XDG_CONFIG_HOME/plansight/config.json."
        ),
    )

    run = commands.add_parser(
        "run",
        help="run the agent on a task from the terminal",
        description="Run the agent on one task in a workspace, reviewing each edit and command.",
        epilog=RUN_EPILOG.format(exit_codes=RUN_EXIT_CODES),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run.add_argument(
        "prompt",
        nargs="?",
        default=None,
        help="the task, in your words (quote it); - reads it from stdin",
    )
    run.add_argument(
        "--prompt-file",
        default=None,
        metavar="FILE",
        help="read the task from this file (for a long one: a shell refuses a 200 kB argument)",
    )
    run.add_argument(
        "--workspace", default=".", metavar="DIR", help="the project to work in (default: .)"
    )
    run.add_argument(
        "--yes", action="store_true", help="accept every edit and command without asking"
    )
    run.add_argument(
        "--model",
        default=None,
        metavar="MODEL",
        help="the model (default: $PLANSIGHT_MODEL, else the newest Sonnet the SDK knows)",
    )
    run.add_argument(
        "--new-session",
        action="store_true",
        help="start a new session (the previous one stays, listed by `plansight sessions`)",
    )
    run.add_argument(
        "--session",
        default=None,
        metavar="ID|last|new",
        help=(
            "run in this session of the workspace (`plansight sessions` lists them), the one "
            "used last, or a new one (default: the current session)"
        ),
    )
    run.add_argument(
        "--output-format",
        choices=("text", "json", "stream-json"),
        default="text",
        help=(
            "text (default) for people; json: one object at the end; stream-json: one object "
            "per line per event (docs/terminal.md). JSON goes to stdout, the rest to stderr"
        ),
    )
    run.add_argument(
        "--plan",
        action="store_true",
        help="plan first: the agent changes nothing until you approve its plan",
    )
    run.add_argument(
        "--step",
        default=None,
        metavar="ID",
        help="work on this item of the current plan only (its id, e.g. 3)",
    )

    demo = commands.add_parser(
        "demo",
        help="watch a recorded session refactor a small project (offline, no API key)",
        description=(
            "Replay a recorded session through the real server, tools and SDK on a fresh copy "
            "of a small project: no API key, no network."
        ),
    )
    demo.add_argument(
        "--workspace",
        default=None,
        metavar="DIR",
        help="a new or empty folder for the project (default: a new temporary folder)",
    )
    demo.add_argument(
        "--yes",
        action="store_true",
        help="accept every edit and command without asking (the default without a terminal)",
    )
    recordings = demo.add_mutually_exclusive_group()
    recordings.add_argument(
        "--plan",
        action="store_true",
        help=(
            "play plan mode: the agent plans first, the recorded user asks for a revision, then "
            "approves, and the same run carries out the approved plan"
        ),
    )
    recordings.add_argument(
        "--compaction",
        action="store_true",
        help=(
            "play a longer recorded review with a context window of a few thousand tokens, "
            "to watch the server compact the conversation and keep the plan verbatim"
        ),
    )

    showing = commands.add_parser(
        "plan",
        help="show the workspace's current plan and scratchpad (no run, no API key)",
        description=(
            "Show the plan and the scratchpad of the workspace's session, as the next run "
            "continues them, without starting a run."
        ),
    )
    showing.add_argument("--workspace", default=".", metavar="DIR", help="the project (default: .)")
    past = commands.add_parser(
        "history",
        help="list the workspace's past runs: prompt, result, edits (no run, no API key)",
        description=(
            "List the workspace's last runs, oldest first: when each started, how it ended, "
            "its edits and commands, its prompt and the first line of its answer."
        ),
    )
    past.add_argument("--workspace", default=".", metavar="DIR", help="the project (default: .)")
    past.add_argument(
        "--limit", type=int, default=20, metavar="N", help="the last N runs (default: 20)"
    )

    listed = commands.add_parser(
        "sessions",
        help="list the workspace's sessions: title, plan progress, when last used (no API key)",
        description=(
            "List the workspace's sessions, the one used last first: each one's id (for "
            "`plansight run --session ID` and `/resume ID`), when it was last used, its plan's "
            "progress, whether it runs, and its title. `*` marks the current session."
        ),
    )
    listed.add_argument("--workspace", default=".", metavar="DIR", help="the project (default: .)")

    listing = commands.add_parser(
        "checkpoints",
        help="list the workspace's checkpoints (what each plan step and command changed)",
        description=(
            "List the checkpoints Plansight took of the workspace, oldest first: as each run "
            "and plan step started, after each edit and each command that changed files."
        ),
    )
    listing.add_argument("--workspace", default=".", metavar="DIR", help="the project (default: .)")
    undo = commands.add_parser(
        "undo",
        help="undo one plan step: put back every file its edits and commands changed",
        description=(
            "Put back every file the step's edits and commands changed, as it was before the "
            "step began; the step becomes pending. Files with unsaved changes in an editor, "
            "and files someone else changed since, are left as they are (and named)."
        ),
        epilog=RESTORE_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    undo.add_argument("--step", required=True, metavar="ID", help="the plan item's id, e.g. 2")
    restore = commands.add_parser(
        "restore",
        help="put the workspace's files back as a checkpoint holds them",
        description=(
            "Put every file back as the checkpoint holds it: files made since are deleted, "
            "files deleted since come back. `plansight checkpoints` lists the ids."
        ),
        epilog=RESTORE_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    restore.add_argument("checkpoint", metavar="ID", help="the checkpoint's id, e.g. 12")
    for parser_ in (undo, restore):
        parser_.add_argument(
            "--workspace", default=".", metavar="DIR", help="the project (default: .)"
        )
        parser_.add_argument(
            "--conversation",
            action="store_true",
            help="take the conversation and the plan back to that point too",
        )
        parser_.add_argument(
            "--force",
            action="store_true",
            help="also overwrite files someone else changed since (never unsaved ones)",
        )
        parser_.add_argument(
            "--dry-run",
            action="store_true",
            help="say what would be put back, deleted and left alone, and change nothing",
        )
        parser_.add_argument(
            "--yes",
            action="store_true",
            help="with --force, do not ask before losing files changed outside Plansight",
        )
        parser_.add_argument(
            "--path",
            action="append",
            default=[],
            metavar="PATH",
            help="only this file or folder (relative to the workspace; repeat for more)",
        )

    mcp = commands.add_parser(
        "mcp",
        help="list the workspace's MCP servers: status, tools and errors",
        description=(
            "Start the workspace's MCP servers as a session would (asking here before a server "
            "named in a workspace file runs) and list each one's status, source, tools and "
            "error. Servers come from ~/.config/plansight/mcp.json, .mcp.json and "
            ".vscode/mcp.json."
        ),
    )
    mcp.add_argument("--workspace", default=".", metavar="DIR", help="the project (default: .)")
    mcp.add_argument(
        "--wait",
        type=float,
        default=35.0,
        metavar="SECONDS",
        help="how long to wait for servers still starting (default: 35)",
    )

    from plansight.eval.cli import add_eval_command

    add_eval_command(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)

    if args.command is None:
        if sys.stdin.isatty() and sys.stdout.isatty():
            from plansight.cli.interactive import interactive_cli

            return interactive_cli(".")
        parser.print_help(sys.stderr)
        return 2
    if args.command == "lsp":
        from plansight.lsp.server import serve

        serve()
        return 0
    if args.command == "acp":
        from plansight.acp.agent import serve as serve_acp

        serve_acp()
        return 0
    if args.command == "run":
        from plansight.cli.prompts import PromptError, read_prompt
        from plansight.cli.run import run_cli

        if (args.prompt is None) == (args.prompt_file is None):
            parser.error(
                'run: give the prompt once: plansight run "<prompt>", plansight run - '
                "(read from stdin) or plansight run --prompt-file FILE"
            )
        try:
            prompt = read_prompt(args.prompt, args.prompt_file)
        except PromptError as err:
            print(f"plansight: {err}", file=sys.stderr)
            return 1
        if args.session is not None and not args.session.strip():
            parser.error("run: --session needs a session's id, last or new")
        if args.new_session and args.session not in (None, "new"):
            parser.error("run: --new-session and --session ID ask for two sessions; give one")
        new_session = args.new_session or args.session == "new"
        return run_cli(
            prompt.text,
            args.workspace,
            args.yes,
            args.model,
            new_session,
            plan=args.plan,
            step=args.step.lstrip("#") if args.step else None,
            answers_from_tty=prompt.from_stdin,
            session=None if args.session in (None, "new") else args.session,
            output_format=args.output_format,
        )
    if args.command == "plan":
        from plansight.cli.show import plan_cli

        return plan_cli(args.workspace)
    if args.command == "history":
        from plansight.cli.show import history_cli

        return history_cli(args.workspace, max(1, args.limit))
    if args.command == "sessions":
        from plansight.cli.show import sessions_cli

        return sessions_cli(args.workspace)
    if args.command == "checkpoints":
        from plansight.cli.checkpoints import checkpoints_cli

        return checkpoints_cli(args.workspace)
    if args.command in ("undo", "restore"):
        from plansight.cli.checkpoints import restore_cli

        return restore_cli(
            args.workspace,
            checkpoint=args.checkpoint if args.command == "restore" else None,
            step=args.step.lstrip("#") if args.command == "undo" else None,
            paths=args.path,
            conversation=args.conversation,
            force=args.force,
            dry_run=args.dry_run,
            yes=args.yes,
        )
    if args.command == "mcp":
        from plansight.cli.mcp import mcp_cli

        return mcp_cli(args.workspace, args.wait)
    if args.command == "eval":
        from plansight.eval.cli import eval_cli

        return eval_cli(args)
    from plansight.cli.demo import demo_cli

    return demo_cli(args.workspace, args.yes, args.compaction, args.plan)


if __name__ == "__main__":
    sys.exit(main())
