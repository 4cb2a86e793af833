/**
 * The command table as a tree: `svc agents deploy` is the command at path
 * `agents deploy`, and `agents` a group whose summary comes from the group
 * table. Built once from the flat list, checked as it is built: two commands
 * on one path, a command that is also a group, a group without a summary or
 * a command without an example stop the CLI at once, in every test run.
 */
import type { Command, CommandTree, TreeNode } from './command.js';

const key = (path: readonly string[]): string => path.join(' ');

export function createCommandTree(commands: readonly Command[], groups: Readonly<Record<string, string>>): CommandTree {
  const nodes = new Map<string, TreeNode>();
  const order: string[] = [];
  const add = (node: TreeNode): void => {
    if (!nodes.has(key(node.path))) order.push(key(node.path));
    nodes.set(key(node.path), node);
  };
  for (const command of commands) {
    if (command.path.length === 0) throw new Error('a command needs a name');
    if (nodes.get(key(command.path))?.command !== undefined) throw new Error(`two commands named 'svc ${key(command.path)}'`);
    if (command.examples.length === 0) throw new Error(`'svc ${key(command.path)}' has no example`);
    for (let depth = 1; depth < command.path.length; depth++) {
      const prefix = command.path.slice(0, depth);
      const existing = nodes.get(key(prefix));
      if (existing?.command !== undefined) throw new Error(`'svc ${key(prefix)}' is both a command and a group`);
      const summary = groups[key(prefix)];
      if (summary === undefined) throw new Error(`the group 'svc ${key(prefix)}' has no summary in the group table`);
      if (existing === undefined) add({ path: prefix, summary });
    }
    if (nodes.has(key(command.path))) throw new Error(`'svc ${key(command.path)}' is both a command and a group`);
    add({ path: command.path, summary: command.summary, command });
  }
  const find = (path: readonly string[]): TreeNode | undefined => nodes.get(key(path));
  return {
    commands,
    find,
    children: (path) =>
      order
        .map((k) => nodes.get(k) as TreeNode)
        .filter((node) => node.path.length === path.length + 1 && path.every((word, i) => node.path[i] === word)),
    resolve(words) {
      let path: readonly string[] = [];
      let node: TreeNode | undefined;
      for (const word of words) {
        const next = find([...path, word]);
        if (next === undefined) break;
        path = next.path;
        node = next;
        if (next.command !== undefined) break;
      }
      return { node, path, rest: words.slice(path.length) };
    },
  };
}
