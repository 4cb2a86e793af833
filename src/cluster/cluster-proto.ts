/**
 * The node-to-node schema (`proto/svc/v1/cluster.proto`), loaded once, with
 * the management schema's loader options: the grpc-js service definition
 * both the serving and the calling node use.
 */
import { loadPackageDefinition, type ServiceClientConstructor, type ServiceDefinition } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { LOADER_OPTIONS } from '../api/proto.js';

export const CLUSTER_PROTO_FILE = 'svc/v1/cluster.proto';
export const CLUSTER_SERVICE_NAME = 'svc.v1.cluster.ClusterService';

export interface DeliverOutcomeProto {
  ok: boolean;
  reason: string;
  detail: string;
}

let loaded: ServiceClientConstructor | undefined;

function constructor(): ServiceClientConstructor {
  if (loaded === undefined) {
    const grpcObject = loadPackageDefinition(loadSync(CLUSTER_PROTO_FILE, { ...LOADER_OPTIONS }));
    let node: unknown = grpcObject;
    for (const part of CLUSTER_SERVICE_NAME.split('.')) node = (node as Record<string, unknown>)[part];
    loaded = node as ServiceClientConstructor;
  }
  return loaded;
}

export function clusterServiceDefinition(): ServiceDefinition {
  return constructor().service;
}

export function clusterClientConstructor(): ServiceClientConstructor {
  return constructor();
}

/** The method path of a ClusterService RPC, as it is signed. */
export const clusterPath = (method: string): string => `/${CLUSTER_SERVICE_NAME}/${method}`;
