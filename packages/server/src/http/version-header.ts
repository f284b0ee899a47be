import type { IncomingHttpHeaders } from 'node:http';
import { API_VERSION, ServiceError, VERSION_HEADER } from '@mms/protocol';

/** Spec, Versioning: the version header is required and `2023-06-01` is its one value. */
export function assertVersionHeader(headers: IncomingHttpHeaders): void {
  const value = headers[VERSION_HEADER];
  if (value === undefined) {
    throw new ServiceError(
      'unsupported_version',
      `${VERSION_HEADER}: header is required; send ${VERSION_HEADER}: ${API_VERSION}`,
    );
  }
  if (value !== API_VERSION) {
    // The official client from 1.0 on sends a newer default; say how to pin it (docs/decisions/0004).
    throw new ServiceError(
      'unsupported_version',
      `${VERSION_HEADER}: "${String(value)}" is not a supported version; the supported version is ${API_VERSION} (with the official client 1.x, pass defaultHeaders: {"${VERSION_HEADER}": "${API_VERSION}"})`,
    );
  }
}
