/**
 * `svc check FILE.wasm`: runs a module through the server's own admission
 * (the allowlist decoder, the memory rules, instrumentation and compilation)
 * with the configured limits, without a server. What deploy would refuse,
 * this refuses with the same code and reason.
 */
import { formatSize } from '../../config/units.js';
import { defineCommand } from '../command.js';
import { EXIT } from '../exit-codes.js';
import { readModuleFile } from '../module-file.js';
import { OUTPUT_FLAG, outputFormat, render, table } from '../output.js';
import { SERVER_CONFIG_FLAG, serverConfig } from './server-flags.js';

export const checkCommand = defineCommand({
  path: ['check'],
  summary: "Check a module against the agent ABI with the server's own admission.",
  description: `Exit 0 and a summary (imports, exports, memory) when the server would admit the module; otherwise one
line with the code and reason deploy would answer (INVALID_MODULE, PAYLOAD_TOO_LARGE) and exit 4.
The limits are the configured ones (runtime.max_memory_pages, runtime.max_module_size, ...).`,
  args: [{ name: 'FILE.wasm', description: 'The module to check.' }],
  flags: { output: OUTPUT_FLAG, config: SERVER_CONFIG_FLAG },
  settings: true,
  examples: [
    { description: 'Check a build before deploying it', command: 'svc check build/agent.wasm' },
    { description: 'Against a lower memory ceiling', command: 'svc check build/agent.wasm --runtime.max_memory_pages=64' },
  ],
  async run({ values, args: [file = ''], settings, io }) {
    const config = serverConfig(io, values.config, settings);
    const bytes = readModuleFile(file, io.cwd);
    // Loaded here, not with the command table: only this command needs the sandbox.
    const [{ createAdmission }, { sandboxLimitsFrom }] = await Promise.all([import('../../sandbox/admission.js'), import('../../sandbox/limits.js')]);
    const admitted = await createAdmission(sandboxLimitsFrom(config.runtime)).admit(bytes);
    const { info } = admitted;
    const result = { sha256: admitted.sha256, size: admitted.size, ...info };
    const memory = `${info.memory.initialPages} to ${info.memory.maximumPages} pages of 64KiB${info.memory.lowered ? ' (maximum lowered by the server)' : ''}`;
    io.out(
      render(outputFormat(values.output), result, {
        table: () =>
          table([
            ['admitted', file],
            ['sha256', admitted.sha256],
            ['size', formatSize(admitted.size)],
            ['imports', info.imports.map((name) => `wasi_snapshot_preview1.${name}`).join(', ') || '-'],
            ['exports', info.exports.join(', ')],
            ['memory', memory],
            ['start', info.startExport ?? '-'],
          ]),
      }),
    );
    return EXIT.ok;
  },
});

