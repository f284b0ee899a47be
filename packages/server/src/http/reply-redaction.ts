/**
 * The last line between the service's configuration and its replies: every error message that
 * leaves the service (a status reply or an `event: error`, http/error-reply.ts) has the
 * configured secrets and addresses (config/configured-secrets.ts) taken out. Backends already
 * build their own messages without them (they name a backend by its model), and never relay an
 * upstream's answer to a refused key; this catches the text they do relay, an upstream's or an
 * engine's message, which may echo the key it was sent or name the address it runs at.
 *
 * The log gets the secrets taken out as well, but keeps the addresses: an operator needs them.
 * A secret shorter than 8 characters is not searched for (it would match ordinary words); the
 * service's own API keys have at least 8.
 */
import type { ConfiguredSecrets } from '../config/configured-secrets.js';

const SHORTEST_SECRET = 8;
const SECRET_MARK = '[redacted]';
const ADDRESS_MARK = '[backend address]';

export class ReplyRedaction {
  /** Longest first, so that a key that contains another is taken out whole. */
  private readonly secrets: readonly string[];
  private readonly addresses: readonly string[];

  constructor({ secrets, addresses }: ConfiguredSecrets) {
    this.secrets = longestFirst(secrets.filter((secret) => secret.length >= SHORTEST_SECRET));
    this.addresses = longestFirst(addresses.filter((address) => address.length > 0));
  }

  /** For a reply: no secret, no address. */
  forReply(text: string): string {
    return replaceAll(replaceAll(text, this.secrets, SECRET_MARK), this.addresses, ADDRESS_MARK);
  }

  /** For the log: no secret. */
  forLog(text: string): string {
    return replaceAll(text, this.secrets, SECRET_MARK);
  }
}

/** Redacts nothing: for an app built without a config's secrets (none configured). */
export const NO_REDACTION = new ReplyRedaction({ secrets: [], addresses: [] });

function longestFirst(values: readonly string[]): string[] {
  return [...new Set(values)].sort((a, b) => b.length - a.length);
}

function replaceAll(text: string, needles: readonly string[], mark: string): string {
  let result = text;
  for (const needle of needles) if (result.includes(needle)) result = result.split(needle).join(mark);
  return result;
}
