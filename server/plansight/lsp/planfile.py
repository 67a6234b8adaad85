"""A plan file that could not be read as a plan, shown where the user saved it: a diagnostic
on its line (`source: "plansight"`, `code: "plan-file"`), cleared once a save is applied."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types

from plansight.lsp.editor import path_uri
from plansight.session.planfiles import PlanFileProblem, PlanFiles

if TYPE_CHECKING:
    from pygls.lsp.server import LanguageServer

SOURCE = "plansight"
CODE = "plan-file"


def setup(server: LanguageServer, plan_files: PlanFiles) -> None:
    def publish(path: Path, problems: list[PlanFileProblem]) -> None:
        server.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(
                uri=path_uri(path), diagnostics=[diagnostic(p) for p in problems]
            )
        )

    plan_files.problems.append(publish)


def diagnostic(problem: PlanFileProblem) -> types.Diagnostic:
    return types.Diagnostic(
        range=types.Range(types.Position(problem.line, 0), types.Position(problem.line + 1, 0)),
        message=problem.message,
        severity=types.DiagnosticSeverity.Error,
        source=SOURCE,
        code=CODE,
    )
