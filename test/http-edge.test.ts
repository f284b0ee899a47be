/**
 * The service's own HTTP layer (app.ts, http/router.ts, http/request-body.ts): what a framework
 * would otherwise decide. Methods, HEAD, bodies sent in chunks or cut off, content types,
 * query strings, encoded path segments, and requests that are not HTTP at all.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { once } from 'node:events';
import { postJson, startService, TEST_API_KEY, type RunningService } from '@model-messages/testing';

let service: RunningService;
before(async () => {
  service = await startService();
});
after(() => service.close());

const simpleRequest = { model: 'mid', max_tokens: 50, messages: [{ role: 'user', content: 'hello' }] };

async function errorOf(response: Response): Promise<{ status: number; type: string; message: string }> {
  const body = (await response.json()) as { error: { type: string; message: string }; request_id: string };
  assert.equal(body.request_id, response.headers.get('request-id'));
  return { status: response.status, type: body.error.type, message: body.error.message };
}

/** Sends `chunks` as a chunked body (no content-length), waiting a little between them. */
function postChunked(
  path: string,
  chunks: ReadonlyArray<string | Buffer>,
  headers: Record<string, string> = {},
  target: RunningService = service,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const url = new URL(path, target.baseURL);
    const outgoing = httpRequest(url, { method: 'POST', headers: { ...target.headers, ...headers } }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (text: string) => (body += text));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
    });
    outgoing.on('error', reject);
    // A service that refuses the body answers and closes while chunks are still going out: the
    // outcome is the response (or the request's 'error' above), so a write failing after it
    // (EPIPE, say) is not one, and must not surface after the test as an unhandled rejection.
    void (async () => {
      for (const chunk of chunks) {
        if (outgoing.destroyed) return;
        if (!outgoing.write(chunk)) await once(outgoing, 'drain');
        await new Promise((done) => setTimeout(done, 5));
      }
      outgoing.end();
    })().catch(() => {});
  });
}

describe('methods and routes', () => {
  test('a known path with another method is 404 naming the method and path', async () => {
    const response = await fetch(`${service.baseURL}/v1/messages`, { headers: service.headers });
    assert.deepEqual(await errorOf(response), {
      status: 404,
      type: 'not_found_error',
      message: 'GET /v1/messages is not an endpoint of this service',
    });
  });

  test('HEAD on a GET route answers its headers and no body', async () => {
    const response = await fetch(`${service.baseURL}/v1/models`, { method: 'HEAD', headers: service.headers });
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
    assert.match(response.headers.get('request-id') ?? '', /^req_/);
    assert.equal(await response.text(), '');
  });

  test('a percent-encoded model id is decoded; a malformed encoding is 400', async () => {
    const encoded = await fetch(`${service.baseURL}/v1/models/mid%2Dnewer`, { headers: service.headers });
    assert.equal(encoded.status, 200);
    assert.equal(((await encoded.json()) as { id: string }).id, 'mid-newer');
    const malformed = await fetch(`${service.baseURL}/v1/models/mid%E0%A4%A`, { headers: service.headers });
    assert.deepEqual(await errorOf(malformed), {
      status: 400,
      type: 'invalid_request_error',
      message: 'the path segment "mid%E0%A4%A" is not valid percent-encoding',
    });
  });

  test('a paging parameter given twice is 400, not one of its values picked', async () => {
    const response = await fetch(`${service.baseURL}/v1/models?limit=1&limit=2`, { headers: service.headers });
    assert.deepEqual(await errorOf(response), {
      status: 400,
      type: 'invalid_request_error',
      message: 'limit: give it once',
    });
  });

  test('an empty path segment does not match a parameter', async () => {
    const response = await fetch(`${service.baseURL}/v1/models/`, { headers: service.headers });
    assert.equal((await errorOf(response)).status, 404);
  });
});

describe('request bodies', () => {
  test('a chunked body is read whole', async () => {
    const text = JSON.stringify(simpleRequest);
    const reply = await postChunked('/v1/messages', [text.slice(0, 10), text.slice(10, 30), text.slice(30)]);
    assert.equal(reply.status, 200, reply.body);
    assert.equal((JSON.parse(reply.body) as { content: Array<{ text: string }> }).content[0]?.text, 'hello');
  });

  test('a character split across chunks arrives whole', async () => {
    const text = JSON.stringify({ ...simpleRequest, messages: [{ role: 'user', content: 'naïve ✓' }] });
    const bytes = Buffer.from(text);
    const splitInside = bytes.indexOf(Buffer.from('✓')) + 1;
    const reply = await postChunked('/v1/messages', [bytes.subarray(0, splitInside), bytes.subarray(splitInside)]);
    assert.equal(reply.status, 200, reply.body);
    assert.equal((JSON.parse(reply.body) as { content: Array<{ text: string }> }).content[0]?.text, 'naïve ✓');
  });

  test('a chunked body past 32 MB is 413, with no declared length to refuse it early', async () => {
    const chunk = 'x'.repeat(4 * 1024 * 1024);
    const reply = await postChunked('/v1/messages', [
      `{"model":"mid","max_tokens":5,"messages":[{"role":"user","content":"`,
      ...Array.from({ length: 9 }, () => chunk),
      '"}]}',
    ]);
    assert.equal(reply.status, 413);
    assert.equal((JSON.parse(reply.body) as { error: { type: string } }).error.type, 'request_too_large');
  });

  test('a content-type with a charset, in any case, is JSON', async () => {
    const response = await postJson(service, '/v1/messages', simpleRequest, {
      'content-type': 'Application/JSON; charset=utf-8',
    });
    assert.equal(response.status, 200);
  });

  test('a body with no content-type is 400 that says what is expected', async () => {
    const response = await fetch(`${service.baseURL}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': TEST_API_KEY, 'anthropic-version': '2023-06-01' },
      body: new Blob([JSON.stringify(simpleRequest)]),
    });
    assert.deepEqual(await errorOf(response), {
      status: 400,
      type: 'invalid_request_error',
      message: 'content-type: must be application/json',
    });
  });

  test('an empty or blank JSON body is 400', async () => {
    for (const body of ['', '   ']) {
      const response = await postJson(service, '/v1/messages', body);
      assert.equal((await errorOf(response)).status, 400, JSON.stringify(body));
    }
  });

  test('a client that goes away mid-body leaves the service answering others', async () => {
    const socket = connect(Number(new URL(service.baseURL).port), '127.0.0.1');
    await once(socket, 'connect');
    socket.write(
      `POST /v1/messages HTTP/1.1\r\nhost: mms\r\nx-api-key: ${TEST_API_KEY}\r\nanthropic-version: 2023-06-01\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n{"model":`,
    );
    await new Promise((done) => setTimeout(done, 20));
    socket.destroy();
    assert.equal((await postJson(service, '/v1/messages', simpleRequest)).status, 200);
  });
});

describe('requests that are not HTTP', () => {
  test('a malformed request line is answered 400 with the error envelope, and the connection closes', async () => {
    const socket = connect(Number(new URL(service.baseURL).port), '127.0.0.1');
    await once(socket, 'connect');
    socket.write('THIS IS NOT HTTP\r\n\r\n');
    let answer = '';
    socket.setEncoding('utf8');
    socket.on('data', (text: string) => (answer += text));
    await once(socket, 'close');
    assert.match(answer, /^HTTP\/1\.1 400 Bad Request\r\n/);
    assert.match(answer, /\r\nconnection: close\r\n/);
    assert.match(answer, /\r\nmms-error-code: invalid_request\r\n/);
    const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as {
      type: string;
      error: { type: string };
      request_id: string;
    };
    assert.equal(body.type, 'error');
    assert.equal(body.error.type, 'invalid_request_error');
    assert.match(answer, new RegExp(`\\r\\nrequest-id: ${body.request_id}\\r\\n`));
  });
});

describe('closing', () => {
  test('a connection still reading a refused body when its reply went out does not hold close() for the 72 s keep-alive timeout', async () => {
    const own = await startService();
    const chunk = 'x'.repeat(4 * 1024 * 1024);
    const reply = await postChunked(
      '/v1/messages',
      [
        `{"model":"mid","max_tokens":5,"messages":[{"role":"user","content":"`,
        ...Array.from({ length: 9 }, () => chunk),
        '"}]}',
      ],
      {},
      own,
    );
    assert.equal(reply.status, 413);
    const closed = own.close().then(() => 'closed');
    // A bound far from both outcomes: closing takes well under a second, the timeout 72 s.
    const waited = new Promise((resolve) => setTimeout(() => resolve('still open after 20 s'), 20_000).unref());
    assert.equal(await Promise.race([closed, waited]), 'closed');
  });
});
