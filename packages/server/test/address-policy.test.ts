/**
 * The address policy behind the web fetch SSRF guard, without HTTP: every private, loopback,
 * link-local and mapped form refused, embedded IPv4 unwrapped, one bareHost for every check, and
 * an allow-list that opens only what it names. The guard through the service:
 * test/web-fetch-ssrf.test.ts.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { AddressPolicy, embeddedIpv4, ipv6Words } from '../src/tools/web-fetch/address-policy.js';
import { bareHost } from '../src/tools/web-fetch/bare-host.js';
import { assertUrlAllowed, UrlNotAllowedError } from '../src/tools/web-fetch/guarded-agent.js';

describe('address policy', () => {
  test('the address policy refuses every private, loopback, link-local, CGNAT and mapped form', () => {
    const policy = new AddressPolicy();
    const refused = [
      '127.0.0.1',
      '127.255.255.254',
      '10.1.2.3',
      '172.16.0.1',
      '172.31.255.255',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '0.1.2.3',
      '224.0.0.1',
      '224.0.0.251',
      '255.255.255.255',
      '192.0.2.1',
      '198.18.0.1',
      '::1',
      '::',
      'fe80::1',
      'fe80::1%eth0',
      'fc00::1',
      'fd12:3456::1',
      'ff02::1',
      'ff05::fb',
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '64:ff9b::a00:1',
      '::ffff:169.254.169.254',
    ];
    // IPv6 forms that embed IPv4: IPv4-compatible ::/96, IPv4-translated ::ffff:0:0:0/96, 6to4, NAT64 (well-known and local-use), Teredo.
    const embedding = [
      '::7f00:1',
      '::127.0.0.1',
      '::a00:1',
      '::ffff:0:7f00:1',
      '::ffff:0:0',
      '2002:7f00:1::1',
      '2002:a9fe:a9fe::',
      '2002:c0a8:101::1',
      '64:ff9b::7f00:1',
      '64:ff9b::a9fe:a9fe',
      '64:ff9b:1::808:808',
      '2001::1',
      '2001:0:4136:e378:8000:63bf:3fff:fdd2',
    ];
    // The rest of the IANA special-purpose ranges that are not globally reachable.
    const special = [
      '100::1',
      '100:0:0:1::1',
      '2001:2::1',
      '2001:10::1',
      '2001:db8::1',
      '3fff::1',
      '5f00::1',
      'fec0::1',
    ];
    for (const address of [...refused, ...embedding, ...special]) assert.equal(policy.permits(address), false, address);
    for (const address of [
      '93.184.216.34',
      '8.8.8.8',
      '2606:4700:4700::1111',
      '::ffff:8.8.8.8',
      '2002:808:808::1',
      '64:ff9b::808:808',
      '64:ff9b::8.8.4.4',
    ])
      assert.equal(policy.permits(address), true, address);
    assert.equal(policy.permits('not-an-ip'), false);
  });

  test('mapped IPv6 forms unwrap to their IPv4 address', () => {
    assert.equal(embeddedIpv4('::ffff:7f00:1'), '127.0.0.1');
    assert.equal(embeddedIpv4('[::ffff:a9fe:a9fe]'), '169.254.169.254');
    assert.equal(embeddedIpv4('64:ff9b::10.0.0.1'), '10.0.0.1');
    assert.equal(embeddedIpv4('2001:db8::1'), undefined);
    assert.equal(embeddedIpv4('2002:c000:204::1'), '192.0.2.4');
    assert.equal(embeddedIpv4('::ffff:0:7f00:1'), undefined, 'IPv4-translated is refused whole, not unwrapped');
    assert.deepEqual(ipv6Words('1::ffff:1.2.3.4'), [1, 0, 0, 0, 0, 0xffff, 0x102, 0x304]);
  });

  test('one bareHost strips brackets and a zone for every check: the policy, the IPv6 words and a URL', () => {
    assert.deepEqual(['[::1]', 'fe80::1%eth0', '[FE80::1%eth0]', '127.0.0.1', 'example.com'].map(bareHost), [
      '::1',
      'fe80::1',
      'FE80::1',
      '127.0.0.1',
      'example.com',
    ]);
    const policy = new AddressPolicy(['2606:4700::/32']);
    assert.equal(policy.permits('[::ffff:127.0.0.1]'), false);
    assert.equal(policy.permits('[2606:4700::1]'), true);
    assert.deepEqual(ipv6Words('[FE80::1%eth0]'), [0xfe80, 0, 0, 0, 0, 0, 0, 1]);
    assert.throws(() => assertUrlAllowed(new URL('http://[::ffff:a9fe:a9fe]/'), policy), UrlNotAllowedError);
    assert.doesNotThrow(() => assertUrlAllowed(new URL('http://[2606:4700::1]/'), policy));
  });

  test('an explicit allow-list opens only the networks it names', () => {
    const policy = new AddressPolicy(['127.0.0.1/32']);
    assert.equal(policy.permits('127.0.0.1'), true);
    assert.equal(policy.permits('127.0.0.2'), false);
  });
});
