/**
 * The lingering close of a connection whose client may still be sending (http/lingering-close.ts,
 * issue 31), on a real loopback socket pair. Through the service: test/body-budget.test.ts.
 */
import { afterEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { lingerAfterLastReply } from '../src/http/lingering-close.js';

let server: Server | undefined;
afterEach(() => server?.close());

/** The service's and the client's ends of one loopback connection. */
async function socketPair(): Promise<{ serviceSide: Socket; clientSide: Socket }> {
  server = createServer();
  await new Promise<void>((listening) => server!.listen(0, '127.0.0.1', listening));
  const accepted = once(server, 'connection') as Promise<[Socket]>;
  const clientSide = connect((server.address() as { port: number }).port, '127.0.0.1');
  const [serviceSide] = await accepted;
  return { serviceSide, clientSide };
}

test("node:http's close after the last reply ends the service's side at once, reads nothing more, and destroys the socket later", async () => {
  const { serviceSide, clientSide } = await socketPair();
  clientSide.on('error', () => undefined);
  lingerAfterLastReply(serviceSide);
  const clientEnded = once(clientSide, 'end');
  serviceSide.destroySoon();
  assert.deepEqual(
    { ended: serviceSide.writableEnded, destroyed: serviceSide.destroyed, paused: serviceSide.isPaused() },
    { ended: true, destroyed: false, paused: true },
  );
  // As node:http resumes it to drop an unread body: held paused.
  serviceSide.resume();
  await new Promise((turn) => setImmediate(turn));
  assert.equal(serviceSide.isPaused(), true);
  // The client still writing sees the service's FIN, not a reset; what it writes is not delivered.
  let delivered = 0;
  serviceSide.on('data', () => (delivered += 1));
  clientSide.write('the rest of a body');
  await clientEnded;
  await once(serviceSide, 'close');
  assert.equal(delivered, 0);
});
