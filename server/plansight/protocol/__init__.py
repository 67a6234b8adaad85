"""Plansight's wire protocol, engine-free so that clients load none of the engine: `names` (methods,
codes, values, event payloads), `options` (initializationOptions, read leniently), `reference`
(the generated tables of docs/protocol.md)."""
