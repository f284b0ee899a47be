/** The SSE parser's own cases live with it in packages/protocol/test/sse-parser.test.ts. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SseParser as ClientSseParser } from '@mms/client';
import { SseParser } from '@mms/protocol';

test('@mms/client still exports SseParser: the shared one from @mms/protocol', () => {
  assert.equal(ClientSseParser, SseParser);
  assert.deepEqual(new ClientSseParser().push('event: ping\ndata: {}\n\n'), [{ event: 'ping', data: '{}' }]);
});
