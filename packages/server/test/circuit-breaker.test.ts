/** The circuit breaker of a fallback list's backends, on a clock the test steps by hand. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CircuitBreaker } from '../src/backends/fallback/circuit-breaker.js';

function breaker(): { circuit: CircuitBreaker; clock: { now: number } } {
  const clock = { now: 0 };
  return { circuit: new CircuitBreaker({ failureThreshold: 3, cooldownMs: 1000, now: () => clock.now }), clock };
}

test('opens after failureThreshold failures in a row, and a success in between resets the count', () => {
  const { circuit } = breaker();
  for (const outcome of ['failure', 'failure', 'success', 'failure', 'failure'] as const)
    circuit[outcome](circuit.tryAcquire()!);
  assert.equal(circuit.state, 'closed');
  circuit.failure(circuit.tryAcquire()!);
  assert.equal(circuit.state, 'open');
  assert.equal(circuit.tryAcquire(), undefined);
  assert.equal(circuit.retryInMs, 1000);
});

test('after the cool-down one probe goes through while the others still skip; its success closes the circuit', () => {
  const { circuit, clock } = breaker();
  for (let index = 0; index < 3; index += 1) circuit.failure(circuit.tryAcquire()!);
  clock.now = 999;
  assert.equal(circuit.tryAcquire(), undefined);
  clock.now = 1000;
  const probe = circuit.tryAcquire();
  assert.deepEqual(probe, { probe: true });
  assert.equal(circuit.state, 'half-open');
  assert.equal(circuit.tryAcquire(), undefined, 'one probe at a time');
  circuit.success(probe!);
  assert.equal(circuit.state, 'closed');
  assert.deepEqual(circuit.tryAcquire(), { probe: false });
});

test('a failed probe opens the circuit for another cool-down at once', () => {
  const { circuit, clock } = breaker();
  for (let index = 0; index < 3; index += 1) circuit.failure(circuit.tryAcquire()!);
  clock.now = 1500;
  circuit.failure(circuit.tryAcquire()!);
  assert.equal(circuit.state, 'open');
  assert.equal(circuit.retryInMs, 1000);
  clock.now = 2499;
  assert.equal(circuit.tryAcquire(), undefined);
});

test('a probe that ends with no verdict (the client left) lets the next request probe', () => {
  const { circuit, clock } = breaker();
  for (let index = 0; index < 3; index += 1) circuit.failure(circuit.tryAcquire()!);
  clock.now = 1000;
  circuit.release(circuit.tryAcquire()!);
  assert.equal(circuit.state, 'open');
  assert.deepEqual(circuit.tryAcquire(), { probe: true });
});
