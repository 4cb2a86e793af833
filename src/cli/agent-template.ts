/**
 * The files of a new AssemblyScript agent project (`svc new agent NAME`): a
 * package pinning the compiler and depending on the SDK, an asconfig.json
 * with the ABI's options, a first agent, and a test that checks the built
 * module against the ABI and the server's own admission (`svc check`).
 */
import { AGENT_ASC_OPTIONS } from './agent-build-options.js';
import { SDK_PACKAGE_NAME } from './sdk-package.js';

/** The compiler the SDK is written for and the examples are built with. */
export const ASSEMBLYSCRIPT_VERSION = '0.28.20';

/** An npm package name that is also a plain directory name: lower case, digits, `-`, `_` and `.`. */
export const PROJECT_NAME = /^[a-z0-9][a-z0-9._-]{0,63}$/;

function packageJson(name: string, sdkSpec: string): string {
  const manifest = {
    name,
    version: '0.1.0',
    private: true,
    type: 'module',
    description: `${name}: an svc agent in AssemblyScript.`,
    scripts: {
      build: 'asc --config asconfig.json',
      test: 'npm run build && node --test',
      check: `svc check build/${name}.wasm`,
      deploy: `svc agents deploy build/${name}.wasm --name ${name}`,
    },
    dependencies: { [SDK_PACKAGE_NAME]: sdkSpec },
    devDependencies: { assemblyscript: ASSEMBLYSCRIPT_VERSION },
  };
  return `${JSON.stringify(manifest, null, 2)}\n`;
}

function asconfig(name: string): string {
  return `${JSON.stringify({ entries: ['assembly/index.ts'], options: { outFile: `build/${name}.wasm`, ...AGENT_ASC_OPTIONS } }, null, 2)}\n`;
}

function agentSource(name: string): string {
  return `// ${name}: answers every request with a greeting that counts the messages it has handled.
// The SDK hides the agent ABI: register a handler, reply or send, log.
import { Message, log, onMessage, reply } from "${SDK_PACKAGE_NAME}";
// The ABI's entry point, defined by the SDK: every agent file exports it.
export { handle } from "${SDK_PACKAGE_NAME}";

// State lives in globals: kept between messages and across hibernation, lost on a crash.
let handled: u32 = 0;

onMessage((msg: Message): void => {
  handled++;
  if (msg.messageType == "request") {
    reply("inform", "hello " + msg.sender + ", ${name} here (message " + handled.toString() + "): " + msg.content);
  } else {
    log("${name}: ignored " + msg.messageType + " from " + msg.sender);
  }
});
`;
}

const ASSEMBLY_TSCONFIG = `${JSON.stringify({ extends: 'assemblyscript/std/assembly.json', include: ['./**/*.ts'] }, null, 2)}\n`;

function agentTest(name: string): string {
  return `// Checks the built agent (npm test builds it first): the imports and exports the agent ABI
// allows, the server's own admission through \`svc check\`, and one request run through it in the
// server's sandbox with \`svc run\`, with svc on the PATH.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const WASM = fileURLToPath(new URL("../build/${name}.wasm", import.meta.url));
const WASI_CALLS = ["fd_read", "fd_write", "fd_close", "clock_time_get", "random_get"];

test("imports at most the five WASI calls and exports memory, handle and _initialize", () => {
  const module = new WebAssembly.Module(readFileSync(WASM));
  for (const { module: from, name } of WebAssembly.Module.imports(module)) {
    assert.ok(from === "wasi_snapshot_preview1" && WASI_CALLS.includes(name), \`the ABI does not allow the import \${from}.\${name}\`);
  }
  const exports = WebAssembly.Module.exports(module).map((e) => e.name);
  for (const name of ["memory", "handle", "_initialize"]) assert.ok(exports.includes(name), \`no export \${name}\`);
});

test("passes the server's admission (svc check)", () => {
  const run = spawnSync("svc", ["check", WASM, "-o", "json"], { encoding: "utf8" });
  if (run.error) assert.fail(\`cannot run svc (\${run.error.code}): put it on the PATH, e.g. with npm link in the svc checkout\`);
  assert.equal(run.status, 0, run.stderr);
  const info = JSON.parse(run.stdout);
  assert.ok(info.memory.maximumPages <= 1024, "a declared maximum of at most 1024 pages");
});

test("answers a request in the server's sandbox (svc run, no server)", () => {
  const message = JSON.stringify({ message_type: "request", content: "hi" });
  const run = spawnSync("svc", ["run", WASM, "--message", message], { encoding: "utf8" });
  if (run.error) assert.fail(\`cannot run svc (\${run.error.code}): put it on the PATH, e.g. with npm link in the svc checkout\`);
  assert.equal(run.status, 0, run.stderr);
  const [reply] = run.stdout.trim().split("\\n").map((line) => JSON.parse(line));
  assert.equal(reply.message_type, "inform");
  assert.equal(reply.content, "hello client:local, ${name} here (message 1): hi");
});
`;
}

function readme(name: string): string {
  return `# ${name}

An svc agent written in AssemblyScript.

\`\`\`sh
npm install      # assemblyscript ${ASSEMBLYSCRIPT_VERSION} and the svc agent SDK
npm run build    # build/${name}.wasm
npm test         # builds, checks the module (svc check) and runs a request through it (svc run); svc on the PATH
npm run deploy   # svc agents deploy build/${name}.wasm --name ${name}
\`\`\`

The agent is \`assembly/index.ts\`. \`asconfig.json\` holds the compiler options the agent ABI needs:
\`disable: ["bulk-memory"]\`, a \`maximumMemory\` of at most 1024 pages, \`exportStart: "_initialize"\`
and the SDK's \`abort\`. The SDK's API and the ABI are described in svc's \`docs/agent-abi.md\`.
`;
}

/** Path (relative to the project) → content. */
export function agentProjectFiles(name: string, sdkSpec: string): Record<string, string> {
  return {
    'package.json': packageJson(name, sdkSpec),
    'asconfig.json': asconfig(name),
    'assembly/index.ts': agentSource(name),
    'assembly/tsconfig.json': ASSEMBLY_TSCONFIG,
    'test/agent.test.mjs': agentTest(name),
    'README.md': readme(name),
    '.gitignore': 'node_modules/\nbuild/\n',
  };
}
