/**
 * Every `svc` command, in the order `svc --help` lists them, and the
 * one-line summary of each group of subcommands. A new command is one file
 * under `commands/` exporting a `Command`, and one line here; a new group
 * also gets its summary below.
 */
import type { Command } from './command.js';
import { agentsDeployCommand } from './commands/agents-deploy.js';
import { agentsGetCommand } from './commands/agents-get.js';
import { agentsListCommand } from './commands/agents-list.js';
import { agentsRestartCommand } from './commands/agents-restart.js';
import { agentsUpdateCommand } from './commands/agents-update.js';
import { agentsUndeployCommand } from './commands/agents-undeploy.js';
import { auditCommand } from './commands/audit.js';
import { callCommand } from './commands/call.js';
import { checkCommand } from './commands/check.js';
import { clusterMembersCommand } from './commands/cluster-members.js';
import { completionCommand } from './commands/completion.js';
import { configCommand } from './commands/config.js';
import { contextCurrentCommand } from './commands/context-current.js';
import { contextDeleteCommand } from './commands/context-delete.js';
import { contextListCommand } from './commands/context-list.js';
import { contextSetCommand } from './commands/context-set.js';
import { contextUseCommand } from './commands/context-use.js';
import { healthCommand } from './commands/health.js';
import { keysCreateCommand } from './commands/keys-create.js';
import { keysListCommand } from './commands/keys-list.js';
import { keysRevokeCommand } from './commands/keys-revoke.js';
import { keysRotateCommand } from './commands/keys-rotate.js';
import { logsCommand } from './commands/logs.js';
import { messagesHistoryCommand } from './commands/messages-history.js';
import { messagesSendCommand } from './commands/messages-send.js';
import { messagesTailCommand } from './commands/messages-tail.js';
import { newAgentCommand } from './commands/new-agent.js';
import { runCommand } from './commands/run.js';
import { startCommand } from './commands/start.js';
import { versionCommand } from './commands/version.js';

export const COMMANDS: readonly Command[] = [
  startCommand,
  checkCommand,
  runCommand,
  configCommand,
  agentsDeployCommand,
  agentsListCommand,
  agentsGetCommand,
  agentsRestartCommand,
  agentsUpdateCommand,
  agentsUndeployCommand,
  callCommand,
  messagesSendCommand,
  messagesTailCommand,
  messagesHistoryCommand,
  logsCommand,
  healthCommand,
  clusterMembersCommand,
  keysCreateCommand,
  keysListCommand,
  keysRevokeCommand,
  keysRotateCommand,
  auditCommand,
  contextListCommand,
  contextCurrentCommand,
  contextUseCommand,
  contextSetCommand,
  contextDeleteCommand,
  newAgentCommand,
  completionCommand,
  versionCommand,
];

export const GROUPS: Readonly<Record<string, string>> = {
  agents: 'Deploy, list, inspect, restart and undeploy agents.',
  messages: 'Send messages to agents, follow them live, read their history.',
  cluster: 'Inspect the cluster this server is part of.',
  keys: 'Make, list, revoke and rotate API keys.',
  context: 'Manage contexts: named servers with their TLS files and credentials.',
  new: 'Create projects from templates.',
};
