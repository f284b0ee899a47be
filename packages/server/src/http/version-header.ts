import type { IncomingHttpHeaders } from 'node:http';
import { API_VERSIONS, isApiVersion, ServiceError, VERSION_HEADER, type ApiVersion } from '@model-messages/protocol';

const SUPPORTED = `the supported versions are ${API_VERSIONS.join(', ')}`;

/**
 * Spec, Versioning: the version header is required. Its values are the contract's `2023-06-01`
 * and `2026-10-21`, the official client's default from 1.0 (docs/decisions/0004); the one
 * returned goes on the request's route context.
 */
export function assertVersionHeader(headers: IncomingHttpHeaders): ApiVersion {
  const value = headers[VERSION_HEADER];
  if (value === undefined) {
    throw new ServiceError('unsupported_version', `${VERSION_HEADER}: header is required; ${SUPPORTED}`);
  }
  if (!isApiVersion(value)) {
    throw new ServiceError(
      'unsupported_version',
      `${VERSION_HEADER}: "${String(value)}" is not a supported version; ${SUPPORTED}`,
    );
  }
  return value;
}
