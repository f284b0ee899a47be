/** The SSE parser's own cases live with it in packages/protocol/test/sse-parser.test.ts. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SseParser as ClientSseParser } from '@model-messages/client';
import { SseParser } from '@model-messages/protocol';

test('@model-messages/client still exports SseParser: the shared one from @model-messages/protocol', () => {
  assert.equal(ClientSseParser, SseParser);
  assert.deepEqual(new ClientSseParser().push('event: ping\ndata: {}\n\n'), [{ event: 'ping', data: '{}' }]);
});
