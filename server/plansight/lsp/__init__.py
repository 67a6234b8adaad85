"""The language server, the LSP front door (see PROTOCOL.md): thin handlers over the session
(`server`, typed params in `params`), features that listen to the session and register
themselves (`forwarding`, `progress`, `diagnostics`), the editor's side of the engine's hooks
(`editor`), and stdio in and out (`framing`, `stdio`)."""
