"""The language server: Plansight protocol v1 over LSP (see PROTOCOL.md)."""
