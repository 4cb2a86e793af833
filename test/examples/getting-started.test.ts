/**
 * docs/getting-started.md, followed as written: two projects from `svc new
 * agent` (the SDK installed from its packed tarball, AssemblyScript from the
 * repository's install, since the test has no registry), Alice's code taken
 * from the page, both built and checked by their own `npm test`, deployed
 * with `svc agents deploy`, and the conversation the page shows read back
 * with `svc messages history`.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { runCli } from '../../src/cli/cli.js';
import { EXIT } from '../../src/cli/exit-codes.js';
import { newAgentProject, npmRun, packSdk, svcBin } from '../cli/agent-project.js';
import { startCliServer, type CliServer } from '../cli/cli-server.js';
import { memoryIo } from '../cli/memory-io.js';

const page = readFileSync(new URL('../../docs/getting-started.md', import.meta.url), 'utf8');
const dir = mkdtempSync(join(tmpdir(), 'svc-getting-started-'));
/** Bounds the wait for the conversation: a few executions, on a busy machine. */
const CONVERSATION_MS = 30_000;

/** The code block that follows `marker` on the page. */
function blockAfter(marker: string, language: string): string {
  const at = page.indexOf(marker);
  assert.ok(at >= 0, `the page says: ${marker}`);
  const match = new RegExp(`\`\`\`${language}\\n([\\s\\S]*?)\`\`\``).exec(page.slice(at));
  assert.ok(match?.[1], `a ${language} block after: ${marker}`);
  return match[1];
}

async function svc(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const io = memoryIo({ cwd: dir });
  const code = await runCli(args, io);
  return { code, stdout: io.stdout, stderr: io.stderr };
}

describe('docs/getting-started.md', { timeout: 900_000 }, () => {
  let s: CliServer;
  before(async () => {
    s = await startCliServer();
  });
  after(async () => {
    await s.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('two agents written with svc new agent talk as the page shows', async () => {
    for (const line of ['svc new agent bob', 'svc new agent alice', '(cd alice && npm install && npm test)', 'svc messages history "$alice"']) assert.ok(page.includes(line), line);
    const tarball = await packSdk(dir);
    const bin = svcBin(dir);
    const bob = await newAgentProject(dir, 'bob', tarball);
    const alice = await newAgentProject(dir, 'alice', tarball);
    writeFileSync(join(alice, 'assembly', 'index.ts'), blockAfter('Replace `alice/assembly/index.ts` with:', 'ts'));
    const aliceTest = join(alice, 'test', 'agent.test.mjs');
    const generated = readFileSync(aliceTest, 'utf8');
    const lastTest = generated.indexOf('test("answers a request in the server\'s sandbox');
    assert.ok(lastTest > 0, 'the generated test has the case the page replaces');
    writeFileSync(aliceTest, generated.slice(0, lastTest) + blockAfter('replace the last test', 'js'));
    for (const project of [bob, alice]) {
      const test = await npmRun(project, 'test', bin);
      assert.equal(test.code, 0, `${test.stdout}\n${test.stderr}`);
      assert.match(test.stdout, /^# pass 3$/m, 'the page says npm test prints # pass 3');
    }

    const deploy = async (name: string): Promise<string> => {
      const run = await svc('agents', 'deploy', `${name}/build/${name}.wasm`, '--name', name, '--server', s.grpc);
      assert.equal(run.code, EXIT.ok, run.stderr);
      return run.stdout.trim();
    };
    const bobId = await deploy('bob');
    const aliceId = await deploy('alice');
    const sent = await svc('messages', 'send', aliceId, '--type', 'request', '--content', `introduce:${bobId}`, '--server', s.grpc);
    assert.equal(sent.code, EXIT.ok, sent.stderr);

    let lines: string[] = [];
    for (const until = Date.now() + CONVERSATION_MS; lines.length < 4; ) {
      assert.ok(Date.now() < until, `the conversation stopped at ${lines.length} messages: ${lines.join('\n')}`);
      const history = await svc('messages', 'history', aliceId, '--http-server', s.http);
      assert.equal(history.code, EXIT.ok, history.stderr);
      lines = history.stdout.trimEnd().split('\n').filter((l) => l !== '');
    }
    const greeting = `hello ${aliceId}, bob here (message 1): hello, I am alice`;
    assert.deepEqual(
      lines.map((l) => l.replace(/^\S+ {2}/, '')),
      [
        `client:anonymous -> ${aliceId}  request  "introduce:${bobId}"`,
        `${aliceId} -> ${bobId}  request  "hello, I am alice"`,
        `${bobId} -> ${aliceId}  inform  ${JSON.stringify(greeting)}`,
        `${aliceId} -> client:anonymous  inform  ${JSON.stringify(`the answer: ${greeting}`)}`,
      ],
    );
    // The page's sample output is this conversation, ids shortened.
    const sample = blockAfter('The history shows the conversation', '').trimEnd().split('\n');
    assert.equal(sample.length, lines.length);
    assert.match(sample[3] ?? '', /inform {2}"the answer: hello 01M8…A, bob here \(message 1\): hello, I am alice"$/);
  });
});
