/**
 * The file descriptors server reflection serves: one per `.proto` file, named
 * by its path under the include root and listing its imports, as protoc
 * would emit them. proto-loader's own `fileDescriptorProtos` come from
 * protobufjs `Root#toDescriptor`, which makes one file per package, names it
 * after the package (`svc_v1.proto`) and lists no dependencies, so a client
 * that looks a file up by name or follows `dependency` finds nothing.
 */
import { readFileSync } from 'node:fs';
import { isAbsolute, relative, sep } from 'node:path';
import type { AnyDefinition, EnumTypeDefinition, MessageTypeDefinition, PackageDefinition } from '@grpc/proto-loader';
import { ReflectionService } from '@grpc/reflection';
import protobuf from 'protobufjs';
import descriptor, {
  type IDescriptorProto,
  type IEnumDescriptorProto,
  type IFieldDescriptorProto,
  type IFileDescriptorProto,
  type IFileOptions,
  type IServiceDescriptorProto,
} from 'protobufjs/ext/descriptor/index.js';
import { loadManagementProto, PROTO_DIR } from '../proto.js';

type Declaration = protobuf.Type | protobuf.Enum | protobuf.Service | protobuf.Field;

/** What `protobufjs/ext/descriptor` adds to the reflection classes at runtime; its typings omit it. */
interface Describable<T> {
  toDescriptor(edition?: string): T;
}

/** The management package definition `@grpc/reflection` reads, with the protoc-shaped files it carries; built on first use. */
let reflected: { definition: PackageDefinition; files: Buffer[] } | undefined;

function reflectedSchema(): { definition: PackageDefinition; files: Buffer[] } {
  if (!reflected) {
    const { packageDefinition, root } = loadManagementProto();
    const files = fileDescriptorProtos(root, PROTO_DIR);
    reflected = { definition: withFileDescriptorProtos(packageDefinition, files), files };
  }
  return reflected;
}

/** What `@grpc/reflection` 1.0.4 (pinned) keeps per implementation: each file decoded, and the bytes it serves for it. */
interface ReflectionInternals {
  files: Record<string, object>;
  fileEncodings: Map<object, Uint8Array>;
}

/**
 * Server reflection over the management schema. `@grpc/reflection` decodes
 * the files it is given and serves them encoded again by
 * `protobufjs/ext/descriptor`, which drops every option that file does not
 * declare (the methods' `google.api.http` rules): it is made to serve the
 * bytes built here instead. test/api/grpc/grpc-reflection.test.ts reads the
 * rules back through both versions of the protocol.
 */
export function managementReflectionService(others: readonly PackageDefinition[] = []): ReflectionService {
  const schema = reflectedSchema();
  // The other services the listener serves (grpc.health.v1), listed beside the management schema.
  const service = new ReflectionService(Object.assign({}, ...others, schema.definition) as PackageDefinition);
  const files = new Map(schema.files.map((bytes) => [(descriptor.FileDescriptorProto.decode(bytes) as IFileDescriptorProto).name, bytes] as const));
  const { v1, v1Alpha } = service as unknown as { v1: ReflectionInternals; v1Alpha: ReflectionInternals };
  for (const implementation of [v1, v1Alpha]) {
    if (!(implementation.fileEncodings instanceof Map) || typeof implementation.files !== 'object') {
      throw new Error('@grpc/reflection internals changed: files/fileEncodings not found');
    }
    for (const [name, decoded] of Object.entries(implementation.files)) {
      const bytes = files.get(name);
      if (bytes !== undefined) implementation.fileEncodings.set(decoded, bytes);
    }
  }
  return service;
}

/**
 * A copy of `definition` whose messages and enums carry `files`:
 * `@grpc/reflection` reads nothing else of it (services and symbols are
 * found in the files).
 */
export function withFileDescriptorProtos(definition: PackageDefinition, files: Buffer[]): PackageDefinition {
  const copy: PackageDefinition = {};
  for (const [name, entry] of Object.entries(definition)) copy[name] = isTypeDefinition(entry) ? { ...entry, fileDescriptorProtos: files } : entry;
  return copy;
}

function isTypeDefinition(entry: AnyDefinition): entry is MessageTypeDefinition<object, object> | EnumTypeDefinition {
  return typeof entry.format === 'string';
}

/** Every file `root` loaded, encoded; `root` is resolved and was loaded with `includeDir` as its include path. */
export function fileDescriptorProtos(root: protobuf.Root, includeDir: string): Buffer[] {
  const declarations = declarationsByFile(root);
  return root.files.map((file) => {
    const declared = declarations.get(file) ?? [];
    const proto = isAbsolute(file) ? describeSource(file, includeDir, declared) : describeBundled(file, declared);
    const services = declared.filter((d) => d instanceof protobuf.Service);
    return Buffer.from(withHttpRules(root, descriptor.FileDescriptorProto.encode(proto).finish(), services));
  });
}

/** A file on disk: its package, imports and file options as written, read again because the Root keeps none of them per file. */
function describeSource(file: string, includeDir: string, declared: Declaration[]): IFileDescriptorProto {
  const name = relative(includeDir, file).split(sep).join('/');
  if (name.startsWith('../')) throw new Error(`${file} is outside the include path ${includeDir}`);
  const parsed = protobuf.parse(readFileSync(file, 'utf8'), { keepCase: true });
  const weak = parsed.weakImports ?? [];
  const dependency = [...(parsed.imports ?? []), ...weak];
  const scope = parsed.package ? parsed.root.lookup(parsed.package) : parsed.root;
  return {
    ...describe(name, parsed.package ?? '', dependency, declared),
    weakDependency: weak.map((_, i) => dependency.length - weak.length + i),
    options: fileOptions(scope?.options ?? {}),
  };
}

/**
 * A well-known file protobufjs bundles as JSON (`google/protobuf/descriptor.proto`,
 * `timestamp.proto`, ...): no source to read, and none of them imports
 * another. (`type.proto` and `api.proto` do, but protobufjs inlines the types
 * they import, so they would be served declaring those types themselves.)
 */
function describeBundled(file: string, declared: Declaration[]): IFileDescriptorProto {
  return describe(file, declared[0]?.parent?.fullName.slice(1) ?? '', [], declared);
}

function describe(name: string, pkg: string, dependency: string[], declared: Declaration[]): IFileDescriptorProto {
  // protobufjs records the syntax (its "edition") on each top-level declaration only.
  const edition = (declared[0] as { _edition?: string } | undefined)?._edition ?? 'proto2';
  const of = <T>(object: Declaration): T => (object as unknown as Describable<T>).toDescriptor(edition);
  return {
    name,
    package: pkg,
    dependency,
    messageType: declared.filter((d) => d instanceof protobuf.Type).map((type) => asProtocMessage(of<IDescriptorProto>(type))),
    enumType: declared.filter((d) => d instanceof protobuf.Enum).map((type) => of<IEnumDescriptorProto>(type)),
    service: declared.filter((d) => d instanceof protobuf.Service).map((service) => of<IServiceDescriptorProto>(service)),
    extension: declared.filter((d) => d instanceof protobuf.Field).map((field) => asReflectedExtension(of<IFieldDescriptorProto>(field))),
    syntax: edition,
  };
}

/** The option as protobufjs parses it, and the extension field that carries it in a `MethodOptions`. */
const HTTP_OPTION = '(google.api.http)';
const HTTP_EXTENSION = '.google.api.http';

/** A google.api.HttpRule as parsed from the source: one additional binding is an object, several an array. */
interface ParsedHttpRule {
  additional_bindings?: ParsedHttpRule | ParsedHttpRule[];
  [key: string]: unknown;
}

interface DescribedFile {
  service: Array<{ name: string; method: Array<{ name: string; options: protobuf.Message | null }> }>;
}

/**
 * protobufjs's method descriptors keep only the options `descriptor.proto`
 * itself declares; each method's `google.api.http` rule is put back, so a
 * client reading the schema by reflection sees the REST bindings too. The
 * encoded file is decoded again with `root`'s own `FileDescriptorProto`,
 * whose `MethodOptions` knows the extension (`root` loaded annotations.proto),
 * the rules are set, and it is encoded again: decoding keeps which fields
 * were present, so nothing else changes.
 */
function withHttpRules(root: protobuf.Root, encoded: Uint8Array, services: protobuf.Service[]): Uint8Array {
  const fileType = root.lookup('google.protobuf.FileDescriptorProto');
  const optionsType = root.lookup('google.protobuf.MethodOptions');
  if (services.length === 0 || !(fileType instanceof protobuf.Type) || !(optionsType instanceof protobuf.Type) || !optionsType.fields[HTTP_EXTENSION]) return encoded;
  const file = fileType.decode(encoded) as unknown as DescribedFile;
  for (const described of file.service) {
    const service = services.find((candidate) => candidate.name === described.name);
    for (const method of described.method) {
      const parsed = service?.methods[method.name]?.parsedOptions as Array<Record<string, unknown>> | undefined;
      const rule = parsed?.find((option) => HTTP_OPTION in option)?.[HTTP_OPTION] as ParsedHttpRule | undefined;
      if (rule === undefined) continue;
      const options = method.options === null ? {} : optionsType.toObject(method.options);
      method.options = optionsType.fromObject({ ...options, [HTTP_EXTENSION]: asHttpRule(rule) });
    }
  }
  return fileType.encode(file as unknown as protobuf.Message).finish();
}

/** The rule in the shape `HttpRule.fromObject` takes: `additional_bindings` always a list. */
function asHttpRule(rule: ParsedHttpRule): ParsedHttpRule {
  const { additional_bindings: extra, ...rest } = rule;
  if (extra === undefined) return rest;
  return { ...rest, additional_bindings: (Array.isArray(extra) ? extra : [extra]).map(asHttpRule) };
}

/** Top-level messages, enums, services and extensions, by the file that declares them. */
function declarationsByFile(root: protobuf.Root): Map<string, Declaration[]> {
  const byFile = new Map<string, Declaration[]>();
  const visit = (namespace: protobuf.NamespaceBase): void => {
    for (const object of namespace.nestedArray) {
      if (object instanceof protobuf.Type || object instanceof protobuf.Enum || object instanceof protobuf.Service || object instanceof protobuf.Field) {
        const file = object.filename ?? bundledFileOf(root, object.fullName);
        byFile.set(file, [...(byFile.get(file) ?? []), object]);
      } else if (object instanceof protobuf.Namespace) {
        visit(object);
      }
    }
  };
  visit(root);
  return byFile;
}

/** protobufjs adds the declarations of a bundled file from its JSON without recording the file on them. */
function bundledFileOf(root: protobuf.Root, fullName: string): string {
  const declares = (file: string): boolean => {
    let node: protobuf.INamespace | undefined = protobuf.common.get(file) ?? undefined;
    for (const part of fullName.slice(1).split('.')) node = node?.nested?.[part] as protobuf.INamespace | undefined;
    return node !== undefined;
  };
  const file = root.files.find((candidate) => !isAbsolute(candidate) && declares(candidate));
  if (file === undefined) throw new Error(`no loaded file declares ${fullName}`);
  return file;
}

/**
 * Two corrections to protobufjs's message descriptors, recursively: a map
 * field's entry type gets protoc's name (`MetadataEntry` for `metadata`, not
 * `Metadata`), which validators such as protobuf-go's (grpcurl) insist on;
 * and the copies of extension fields protobufjs keeps inside the extended
 * type (`.google.api.http` inside `MethodOptions`) are dropped: they are
 * declared by the extension's own file.
 */
function asProtocMessage(message: IDescriptorProto): IDescriptorProto {
  const nested = message.nestedType ?? [];
  for (const field of message.field ?? []) {
    const entry = nested.find((type) => type.options?.mapEntry && type.name === field.typeName);
    if (entry && field.name) entry.name = field.typeName = mapEntryName(field.name);
  }
  message.field = (message.field ?? []).filter((field) => !field.name?.startsWith('.'));
  nested.forEach(asProtocMessage);
  return message;
}

/** protoc's rule: `agent_labels` → `AgentLabelsEntry`. */
function mapEntryName(fieldName: string): string {
  return `${fieldName.replace(/(?:^|_)(.)/g, (_, letter: string) => letter.toUpperCase())}Entry`;
}

/**
 * The extendee without protoc's leading dot (still a valid reference, the
 * scope search finds it): `@grpc/reflection` indexes extensions by the
 * extendee as written, and clients ask `file_containing_extension` with the
 * plain full name (`google.protobuf.MethodOptions`).
 */
function asReflectedExtension(extension: IFieldDescriptorProto): IFieldDescriptorProto {
  if (extension.extendee?.startsWith('.')) extension.extendee = extension.extendee.slice(1);
  return extension;
}

function fileOptions(options: Record<string, unknown>): IFileOptions {
  return descriptor.FileOptions.fromObject(Object.fromEntries(Object.entries(options).map(([key, value]) => [protobuf.util.camelCase(key), value]))) as IFileOptions;
}
