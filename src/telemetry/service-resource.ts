/**
 * The OpenTelemetry resource svc's traces and metrics share, from the
 * `observability` section.
 */
import { defaultResource, resourceFromAttributes, type Resource } from '@opentelemetry/resources';
import type { Config } from '../config/schema.js';

/** The resource of everything svc exports: `service.name`, `service.version`, `deployment.environment(.name)`. */
export function serviceResource(
  config: Pick<Config['observability'], 'service_name' | 'service_version' | 'deployment_environment'>,
  serviceVersion: string,
): Resource {
  return defaultResource().merge(
    resourceFromAttributes({
      'service.name': config.service_name,
      'service.version': config.service_version || serviceVersion,
      // Semantic conventions renamed the key in 1.27; backends read one or the other.
      'deployment.environment.name': config.deployment_environment,
      'deployment.environment': config.deployment_environment,
    }),
  );
}
