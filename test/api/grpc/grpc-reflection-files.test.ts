/**
 * The file descriptors reflection serves, built from a small schema on disk
 * that imports a sibling file and well-known files protobufjs bundles as
 * JSON: each file under its include-relative name, with its imports, as
 * protoc emits them.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import protobuf from 'protobufjs';
import descriptor from 'protobufjs/ext/descriptor/index.js';
import { fileDescriptorProtos } from '../../../src/api/grpc/grpc-reflection-files.js';

interface File {
  name: string;
  package: string;
  syntax: string;
  dependency: string[];
  options?: { javaPackage?: string };
  messageType: Array<{ name: string; field: Array<{ name: string; typeName?: string }>; nestedType: Array<{ name: string }> }>;
  extension: Array<{ name: string; extendee: string }>;
}

const SOURCES: Record<string, string> = {
  'demo/v1/demo.proto': `
    syntax = "proto3";
    package demo.v1;
    option java_package = "dev.demo.v1";
    import "demo/v1/other.proto";
    import "google/protobuf/timestamp.proto";
    message Holder {
      map<string, Other> agent_labels = 1;
      google.protobuf.Timestamp at = 2;
    }`,
  'demo/v1/other.proto': `
    syntax = "proto3";
    package demo.v1;
    import "google/protobuf/descriptor.proto";
    message Other { string name = 1; }
    extend google.protobuf.FieldOptions { string label = 50001; }`,
};

describe('reflection file descriptors', () => {
  let dir: string;
  let files: Map<string, File>;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'svc-reflection-'));
    for (const [name, source] of Object.entries(SOURCES)) {
      mkdirSync(dirname(join(dir, name)), { recursive: true });
      writeFileSync(join(dir, name), source);
    }
    const root = new protobuf.Root();
    root.resolvePath = (_origin, target) => join(dir, target);
    root.loadSync('demo/v1/demo.proto', { keepCase: true });
    root.resolveAll();
    const decoded = fileDescriptorProtos(root, dir).map((bytes) => descriptor.FileDescriptorProto.decode(bytes) as unknown as File);
    files = new Map(decoded.map((file) => [file.name, file]));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('names every loaded file by its path under the include directory', () => {
    assert.deepEqual([...files.keys()].sort(), [
      'demo/v1/demo.proto',
      'demo/v1/other.proto',
      'google/protobuf/descriptor.proto',
      'google/protobuf/timestamp.proto',
    ]);
    assert.deepEqual(files.get('google/protobuf/timestamp.proto')?.messageType.map((m) => m.name), ['Timestamp']);
  });

  it('keeps the files of one package apart, each with its own declarations and file options', () => {
    assert.deepEqual(files.get('demo/v1/demo.proto')?.messageType.map((m) => m.name), ['Holder']);
    assert.deepEqual(files.get('demo/v1/other.proto')?.messageType.map((m) => m.name), ['Other']);
    assert.equal(files.get('demo/v1/demo.proto')?.options?.javaPackage, 'dev.demo.v1');
    assert.equal(Object.hasOwn(files.get('demo/v1/other.proto')?.options ?? {}, 'javaPackage'), false);
  });

  it('lists a file’s imports as written', () => {
    assert.deepEqual(files.get('demo/v1/demo.proto')?.dependency, ['demo/v1/other.proto', 'google/protobuf/timestamp.proto']);
    assert.deepEqual(files.get('demo/v1/other.proto')?.dependency, ['google/protobuf/descriptor.proto']);
    assert.deepEqual(files.get('google/protobuf/timestamp.proto')?.dependency, []);
    assert.deepEqual(files.get('google/protobuf/descriptor.proto')?.dependency, []);
  });

  it('gives each file its own syntax', () => {
    assert.equal(files.get('demo/v1/demo.proto')?.syntax, 'proto3');
    assert.equal(files.get('google/protobuf/timestamp.proto')?.syntax, 'proto3');
    assert.equal(files.get('google/protobuf/descriptor.proto')?.syntax, 'proto2');
  });

  it('names a map entry as protoc does', () => {
    const holder = files.get('demo/v1/demo.proto')?.messageType[0];
    assert.equal(holder?.field.find((f) => f.name === 'agent_labels')?.typeName, 'AgentLabelsEntry');
    assert.deepEqual(holder.nestedType.map((n) => n.name), ['AgentLabelsEntry']);
  });

  it('declares an extension in its own file only, extendee as clients name it', () => {
    assert.deepEqual(files.get('demo/v1/other.proto')?.extension.map((x) => [x.name, x.extendee]), [['label', 'google.protobuf.FieldOptions']]);
    const fieldOptions = files.get('google/protobuf/descriptor.proto')?.messageType.find((m) => m.name === 'FieldOptions');
    assert.ok(fieldOptions);
    assert.deepEqual(fieldOptions.field.filter((f) => f.name.includes('label')), []);
  });
});
