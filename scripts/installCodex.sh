#!/usr/bin/env bash
# Installs the OpenAI Codex CLI for test/integration/agents-codex.test.ts only, into
# test-artifacts/codex/ (git-ignored), never into the product's dependencies. Idempotent: does
# nothing when the pinned version is already there. Prints the path of the `codex` launcher.
#
# What the package is (checked on 0.171.0): `@openai/codex` holds only bin/codex.js, a Node launcher
# with no install script; the native binary (Rust, statically linked against musl) comes from an
# optional dependency on the npm registry itself, an alias per platform
# (`@openai/codex-linux-x64` = `npm:@openai/codex@0.171.0-linux-x64`, ~420 MB unpacked) holding
# vendor/<target triple>/: bin/codex, bin/codex-code-mode-host, and its own `rg` and `bwrap` (the
# sandbox). No package has an install script and nothing is downloaded from elsewhere, so
# `npm install` against the registry is enough; the launcher execs the binary with its arguments.
set -euo pipefail
cd "$(dirname "$0")/.."

version="0.171.0"
prefix="test-artifacts/codex"
installed="$prefix/node_modules/@openai/codex/package.json"

current=""
if [ -f "$installed" ]; then
  current="$(node -p 'require(process.argv[1]).version' "$PWD/$installed" 2>/dev/null || true)"
fi

if [ "$current" != "$version" ] || ! "$prefix/node_modules/.bin/codex" --version >/dev/null 2>&1; then
  mkdir -p "$prefix"
  npm install --prefix "$prefix" --no-save --no-package-lock --no-audit --no-fund \
    --include=optional "@openai/codex@$version" >&2
fi

"$prefix/node_modules/.bin/codex" --version >&2
echo "$PWD/$prefix/node_modules/.bin/codex"
