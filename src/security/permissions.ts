/**
 * What each operation needs (DESIGN.md section 9, the operation table), for
 * both doors: a permission (`object:action`), nothing (Health), or the
 * credential it exchanges (the token and login operations authenticate from
 * their own request). Also which operations lockdown spares, and which
 * event records each change in the audit log.
 */
import type { AuditEvent } from './store/audit-store.js';

export const OPERATIONS = [
  'DeployAgent',
  'UndeployAgent',
  'ListAgents',
  'GetAgent',
  'RestartAgent',
  'UpdateAgent',
  'GetAgentLogs',
  'FollowAgentLogs',
  'RecentMessages',
  'SendMessage',
  'CallAgent',
  'SubscribeMessages',
  'Health',
  'Metrics',
  'ListMembers',
  'CreateToken',
  'RefreshToken',
  'Login',
  'LoginCallback',
  'CreateKey',
  'ListKeys',
  'RevokeKey',
  'RotateKey',
  'ListAudit',
  'GetSystemConfig',
  'SetLockdown',
] as const;

export type Operation = (typeof OPERATIONS)[number];

export const PERMISSIONS = [
  'agent:create',
  'agent:update',
  'agent:delete',
  'agent:view',
  'metrics:view',
  'message:send',
  'message:receive',
  'system:configure',
  'audit:view',
] as const;

export type Permission = (typeof PERMISSIONS)[number];

export type Access = { readonly kind: 'open' } | { readonly kind: 'exchange' } | { readonly kind: 'permission'; readonly permission: Permission };

const open: Access = { kind: 'open' };
const exchange: Access = { kind: 'exchange' };
const needs = (permission: Permission): Access => ({ kind: 'permission', permission });

export const OPERATION_ACCESS: Readonly<Record<Operation, Access>> = {
  DeployAgent: needs('agent:create'),
  UndeployAgent: needs('agent:delete'),
  ListAgents: needs('agent:view'),
  GetAgent: needs('agent:view'),
  RestartAgent: needs('agent:update'),
  UpdateAgent: needs('agent:update'),
  GetAgentLogs: needs('agent:view'),
  FollowAgentLogs: needs('agent:view'),
  RecentMessages: needs('agent:view'),
  SendMessage: needs('message:send'),
  CallAgent: needs('message:send'),
  SubscribeMessages: needs('message:receive'),
  Health: open,
  Metrics: needs('metrics:view'),
  ListMembers: needs('metrics:view'),
  CreateToken: exchange,
  RefreshToken: exchange,
  Login: exchange,
  LoginCallback: exchange,
  CreateKey: needs('system:configure'),
  ListKeys: needs('system:configure'),
  RevokeKey: needs('system:configure'),
  RotateKey: needs('system:configure'),
  ListAudit: needs('audit:view'),
  GetSystemConfig: needs('system:configure'),
  SetLockdown: needs('system:configure'),
};

/** Served in lockdown: health, metrics, audit, and lifting lockdown (still for `system:configure` only). */
export const LOCKDOWN_EXEMPT: ReadonlySet<Operation> = new Set<Operation>(['Health', 'Metrics', 'ListAudit', 'SetLockdown']);

/** The audit event of an operation that changes something; the others are audited only when refused. */
export const CHANGE_EVENTS: Readonly<Partial<Record<Operation, AuditEvent>>> = {
  DeployAgent: 'agent_creation',
  UndeployAgent: 'agent_deletion',
  RestartAgent: 'admin_action',
  UpdateAgent: 'admin_action',
  CreateKey: 'admin_action',
  RevokeKey: 'admin_action',
  RotateKey: 'admin_action',
  SetLockdown: 'configuration_change',
};

export function isOperation(name: string): name is Operation {
  return Object.hasOwn(OPERATION_ACCESS, name);
}

export function splitPermission(permission: Permission): { object: string; action: string } {
  const [object = '', action = ''] = permission.split(':');
  return { object, action };
}
