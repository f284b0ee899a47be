/** Errors the client throws rather than returns: mistakes found before any byte is sent. */

/**
 * A request that breaks a rule of the contract, caught before sending (spec: "The client rejects
 * this combination before sending"). `code` is the code the service would answer with.
 */
export class PreSendError extends Error {
  readonly code: string;

  constructor(code: string, message: string, options: { cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.name = 'PreSendError';
    this.code = code;
  }
}

/** An option that cannot work: a Client option, found when the Client is built, or a call's (model, deadline), found before it sends. */
export class ClientConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ClientConfigError';
  }
}
