// An ACP editor played by the official TypeScript SDK's client (`@agentclientprotocol/sdk`):
// `node client.mjs <scenario.json>` starts the agent the scenario names, connects to it with
// `client().onRequest(...).onNotification(...).connect(ndJsonStream(...))` (the SDK checks what
// it receives), ALSO validates every message the agent sends against the JSON schema the package
// ships (schema/v1/schema.json, which the SDK's own parsing can be laxer than: it drops an
// invalid plan entry silently), runs the scenario's steps, and prints one JSON report on stdout.
// tests/test_acp_ts.py writes the scenarios and asserts on the report.
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { Readable, Writable } from "node:stream";
import { createRequire } from "node:module";

import { client, methods, ndJsonStream } from "@agentclientprotocol/sdk";
import Ajv2020 from "ajv/dist/2020.js";

const require = createRequire(import.meta.url);
const schema = require("@agentclientprotocol/sdk/schema/v1/schema.json");
const scenario = JSON.parse(readFileSync(process.argv[2], "utf8"));

const ajv = new Ajv2020({ strict: false, allErrors: true });
// The schema's numeric formats (from its Rust source), checked as the ranges they name.
const ranges = { int32: [-(2 ** 31), 2 ** 31 - 1], int64: [-(2 ** 63), 2 ** 63], uint16: [0, 2 ** 16 - 1], uint32: [0, 2 ** 32 - 1], uint64: [0, 2 ** 64] };
for (const [name, [low, high]] of Object.entries(ranges)) {
  ajv.addFormat(name, { type: "number", validate: (n) => Number.isInteger(n) && n >= low && n <= high });
}
ajv.addFormat("double", { type: "number", validate: () => true });
ajv.addFormat("uri", (text) => { try { new URL(text); return true; } catch { return false; } });
ajv.addSchema(schema, "acp");
const validator = (name) => ajv.getSchema(`acp#/$defs/${name}`);
const REQUESTS = {
  "session/request_permission": "RequestPermissionRequest",
  "fs/read_text_file": "ReadTextFileRequest",
  "fs/write_text_file": "WriteTextFileRequest",
  "elicitation/create": "CreateElicitationRequest",
};
const NOTIFICATIONS = { "session/update": "SessionNotification" };
const RESPONSES = {
  initialize: "InitializeResponse",
  "session/new": "NewSessionResponse",
  "session/load": "LoadSessionResponse",
  "session/prompt": "PromptResponse",
  "session/set_mode": "SetSessionModeResponse",
  "session/set_config_option": "SetSessionConfigOptionResponse",
  "session/close": "CloseSessionResponse",
  "session/list": "ListSessionsResponse",
  "session/resume": "ResumeSessionResponse",
};

const report = {
  results: [],
  updates: [],
  updateSessions: [], // the sessionId of each update, in step with `updates`
  permissions: [],
  reads: [],
  writes: [],
  schemaErrors: [],
  unmatched: [],
  rawReplies: [],
  errors: [], // every error object the agent sent, as it came (a null member is a defect)
  received: 0,
};
const sent = new Map(); // the client's request id → method
let waiters = [];
const changed = () => {
  for (const waiter of waiters) waiter();
};
const until = (predicate, what, ms = 60000) =>
  new Promise((resolve, reject) => {
    if (predicate()) return resolve();
    const timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), ms);
    waiters.push(() => {
      if (predicate()) {
        clearTimeout(timer);
        resolve();
      }
    });
  });

function check(name, value, message) {
  const validate = validator(name);
  if (!validate) {
    report.unmatched.push({ name, message });
    return;
  }
  if (!validate(value)) {
    report.schemaErrors.push({ name, errors: validate.errors, message });
  }
}

// Every line the agent writes, validated, then handed to the SDK unchanged.
function validateAgentMessage(message) {
  report.received += 1;
  if (message.jsonrpc !== "2.0") report.schemaErrors.push({ name: "jsonrpc", message });
  if ("method" in message && "id" in message) {
    check(REQUESTS[message.method] ?? "unknown request", message.params, message);
  } else if ("method" in message) {
    check(NOTIFICATIONS[message.method] ?? "unknown notification", message.params, message);
  } else if (message.id === null || String(message.id).startsWith("raw-")) {
    report.rawReplies.push(message);
    if ("error" in message) report.errors.push(message.error);
    check("Error", message.error, message);
  } else if ("error" in message) {
    report.errors.push(message.error);
    check("Error", message.error, message);
  } else {
    const method = sent.get(message.id);
    if (RESPONSES[method]) check(RESPONSES[method], message.result, message);
  }
}

const [command, ...args] = scenario.agent;
const agent = spawn(command, args, {
  cwd: scenario.cwd,
  env: { ...process.env, ...scenario.env },
  stdio: ["pipe", "pipe", "inherit"],
});

let pending = "";
const fromAgent = new ReadableStream({
  start(controller) {
    agent.stdout.on("data", (chunk) => {
      pending += chunk.toString("utf8");
      let newline;
      while ((newline = pending.indexOf("\n")) >= 0) {
        const line = pending.slice(0, newline);
        pending = pending.slice(newline + 1);
        if (!line.trim()) continue;
        let raw = false;
        try {
          const message = JSON.parse(line);
          validateAgentMessage(message);
          // The answer to a request the script wrote itself ("raw"): not the SDK's to match.
          raw = message.id !== undefined && String(message.id).startsWith("raw-");
        } catch (err) {
          report.schemaErrors.push({ name: "not JSON", line, error: String(err) });
        }
        if (!raw) controller.enqueue(new TextEncoder().encode(line + "\n"));
      }
      changed();
    });
    agent.stdout.on("end", () => {
      try {
        controller.close();
      } catch {
        // already closed by the SDK when the connection closed
      }
    });
  },
});
const toAgent = new WritableStream({
  write(chunk) {
    const text = new TextDecoder().decode(chunk);
    for (const line of text.split("\n")) {
      if (!line.trim()) continue;
      const message = JSON.parse(line);
      if ("method" in message && "id" in message) sent.set(message.id, message.method);
    }
    agent.stdin.write(chunk);
  },
});

const answers = [...(scenario.answers ?? [])];
const buffers = scenario.buffers ?? {};
const held = [];

const app = client({ name: "plansight-ts-test" })
  .onNotification(methods.client.session.update, ({ params }) => {
    report.updates.push(params.update);
    report.updateSessions.push(params.sessionId);
    changed();
  })
  .onRequest(methods.client.session.requestPermission, async ({ params }) => {
    report.permissions.push(params);
    changed();
    const answer = answers.shift() ?? null;
    if (answer === "!cancelled") {
      // The client's own Cancel on the permission prompt (CodeCompanion.nvim's): no option.
      return { outcome: { outcome: "cancelled" } };
    }
    if (answer === null) {
      // The user never answers: the agent must not wait for this after a cancel.
      await new Promise((resolve) => held.push(resolve));
      return { outcome: { outcome: "cancelled" } };
    }
    return { outcome: { outcome: "selected", optionId: answer } };
  })
  .onRequest(methods.client.fs.readTextFile, async ({ params }) => {
    report.reads.push(params.path);
    const content = buffers[params.path] ?? readFileSync(params.path, "utf8");
    return { content };
  })
  .onRequest(methods.client.fs.writeTextFile, async ({ params }) => {
    report.writes.push(params.path);
    mkdirSync(dirname(params.path), { recursive: true });
    writeFileSync(params.path, params.content);
    delete buffers[params.path];
    return {};
  });

const connection = app.connect(ndJsonStream(toAgent, fromAgent));
const ctx = connection.agent;
let sessionId = null;
const named = {}; // sessions by the scenario's names for them (`as`, then `session`)
const idOf = (step) => (step.session ? named[step.session] : (step.sessionId ?? sessionId));

async function attempt(step, call) {
  try {
    const value = await call();
    // updatesAt: how many updates had come when the answer came (they come in order).
    report.results.push({ do: step.do, ok: true, value, updatesAt: report.updates.length });
    return value;
  } catch (err) {
    report.results.push({ do: step.do, ok: false, code: err?.code, message: String(err?.message ?? err) });
    return null;
  }
}

const updatesOf = (kind) => report.updates.filter((u) => u.sessionUpdate === kind);

for (const step of scenario.steps) {
  const started = report.updates.length;
  if (step.do === "initialize") {
    await attempt(step, () =>
      ctx.request(methods.agent.initialize, {
        protocolVersion: 1,
        clientCapabilities: {
          fs: { readTextFile: step.fs ?? true, writeTextFile: step.fs ?? true },
          terminal: false,
        },
        clientInfo: { name: "plansight-ts-test", version: "1" },
      }),
    );
  } else if (step.do === "new") {
    const value = await attempt(step, () =>
      ctx.request(methods.agent.session.new, { cwd: step.cwd ?? scenario.cwd, mcpServers: [] }),
    );
    if (value?.sessionId) sessionId = value.sessionId;
    if (value?.sessionId && step.as) named[step.as] = value.sessionId;
  } else if (step.do === "list") {
    await attempt(step, () =>
      ctx.request(methods.agent.session.list, step.cwd === undefined ? {} : { cwd: step.cwd }),
    );
  } else if (step.do === "resume") {
    await attempt(step, () =>
      ctx.request(methods.agent.session.resume, {
        cwd: scenario.cwd,
        sessionId: idOf(step),
        mcpServers: [],
      }),
    );
    report.results.at(-1).updatesBefore = started;
  } else if (step.do === "load") {
    await attempt(step, () =>
      ctx.request(methods.agent.session.load, {
        cwd: scenario.cwd,
        sessionId: idOf(step),
        mcpServers: [],
      }),
    );
    report.results.at(-1).updatesBefore = started;
    report.results.at(-1).replayed = report.updates.length - started;
    if (step.sessionId === undefined) sessionId = sessionId ?? null;
  } else if (step.do === "config") {
    await attempt(step, () =>
      ctx.request(methods.agent.session.setConfigOption, {
        sessionId,
        configId: step.configId ?? "mode",
        value: step.value,
      }),
    );
  } else if (step.do === "close") {
    await attempt(step, () => ctx.request(methods.agent.session.close, { sessionId }));
  } else if (step.do === "settle") {
    // Wait for updates the agent sends after an answer (a config option update, say).
    await until(() => report.updates.filter((u) => u.sessionUpdate === step.kind).length >= (step.count ?? 1), step.kind);
    report.results.push({ do: "settle", ok: true });
  } else if (step.do === "mode") {
    await attempt(step, () =>
      ctx.request(methods.agent.session.setMode, { sessionId, modeId: step.mode }),
    );
  } else if (step.do === "prompt") {
    const turn = attempt(step, () =>
      ctx.request(methods.agent.session.prompt, {
        sessionId: idOf(step),
        prompt: [{ type: "text", text: step.text }],
      }),
    );
    if (step.cancelOn) {
      const running = () =>
        report.updates
          .slice(started)
          .some((u) => u.sessionUpdate === "tool_call_update" && u.status === "in_progress");
      const seen =
        step.cancelOn === "permission"
          ? () => report.permissions.length > 0
          : step.cancelOn === "running"
            ? running
            : () => report.updates.length > started && updatesOf("agent_message_chunk").length > 0;
      await until(seen, step.cancelOn);
      const at = Date.now();
      await ctx.notify(methods.agent.session.cancel, { sessionId });
      // `thenPrompt`: the next prompt goes at once, not after the cancelled one's answer, as
      // CodeCompanion.nvim sends it (its Stop ends the turn on its side with the cancel).
      const next = step.thenPrompt
        ? ctx.request(methods.agent.session.prompt, {
            sessionId,
            prompt: [{ type: "text", text: step.thenPrompt }],
          })
        : null;
      await turn;
      report.results.at(-1).cancelMs = Date.now() - at;
      for (const resolve of held.splice(0)) resolve();
      if (next) await attempt({ do: "prompt" }, () => next);
    } else if (step.concurrent) {
      const chunks = () => report.updates.slice(started).filter((u) => u.sessionUpdate === "agent_message_chunk");
      await until(() => chunks().length > 0, "the first prompt's text");
      // `concurrentSession`: the prompt goes to another session (named) of the same folder.
      await attempt({ do: "concurrent" }, () =>
        ctx.request(methods.agent.session.prompt, {
          sessionId: step.concurrentSession ? named[step.concurrentSession] : sessionId,
          prompt: [{ type: "text", text: step.concurrent }],
        }),
      );
      await turn;
    } else {
      await turn;
    }
  } else if (step.do === "touch") {
    // A sign to the test driving another client (see `waitFor`).
    writeFileSync(step.path, "");
    report.results.push({ do: "touch", ok: true });
  } else if (step.do === "waitFor") {
    // A file, not a message: looked for every 50 ms (60 s at most).
    const ticker = setInterval(changed, 50);
    try {
      await until(() => existsSync(step.path), step.path);
    } finally {
      clearInterval(ticker);
    }
    report.results.push({ do: "waitFor", ok: true });
  } else if (step.do === "raw") {
    const before = report.rawReplies.length;
    agent.stdin.write(step.line + "\n");
    await until(() => report.rawReplies.length > before, "the reply to a raw line");
    report.results.push({ do: "raw", ok: true, value: report.rawReplies.at(-1) });
  }
}

report.sessionId = sessionId;
report.named = named;
agent.stdin.end();
connection.close();
process.stdout.write(JSON.stringify(report) + "\n");
await new Promise((resolve) => {
  const timer = setTimeout(() => {
    agent.kill("SIGKILL");
    resolve();
  }, 10000);
  agent.on("exit", () => {
    clearTimeout(timer);
    resolve();
  });
});
process.exit(0);
