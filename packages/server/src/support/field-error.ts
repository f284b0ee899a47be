/**
 * A bad value in one field of a backend's config that only building the backend finds (a
 * scripted backend's `script` file that is missing or malformed). The backend knows the field
 * but not where its config sits; the model registry, which does, puts the path in front
 * (`models.2.backend.script: ...`), so that the message names the field to fix.
 */
export class FieldError extends Error {
  override name = 'FieldError';

  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}
