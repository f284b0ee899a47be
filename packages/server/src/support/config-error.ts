/**
 * A config the service cannot start with: a bad value, a file it cannot read, a backend that
 * cannot be built, a signing key that is missing. Its message names the field or the file; the
 * command prints it and exits 2. Kept on the low floor (issue 33) because the config check, the
 * model registry and the signing key each raise it, and none of them sits above the others.
 */
export class ConfigError extends Error {
  override name = 'ConfigError';
}
