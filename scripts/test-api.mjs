// node:test as the compiled tests see it: scripts/compile-tests.mjs points their `node:test`
// imports here. A compiled file run by itself (`node --test .cache/compiled/test/x.test.js`) goes
// straight to node:test. Under `npm test` every process is an entry of scripts/test-groups.mjs,
// one file or several sharing the process: what a file registers while it is imported is held,
// then registered inside one suite named after the file, so that its top-level hooks stay its
// own, as when it runs by itself: its before() runs before its tests, its after() when they end,
// its beforeEach() around its tests only. (At the top level of a shared process they were the
// process's: node ran one file's before() while another's tests ran, and once after its root
// had ended.) The suite's name is also what says which file a test is in: node:test takes the
// caller of test() for its file, which is this module.
import * as nodeTest from 'node:test';

/** The registrations of the file being imported into a group; undefined: straight through. */
let held;

function registering(real) {
  const forward = (...args) => {
    if (held === undefined) return real(...args);
    held.push(() => real(...args));
    return undefined;
  };
  for (const variant of ['skip', 'todo', 'only'])
    if (typeof real[variant] === 'function') forward[variant] = registering(real[variant]);
  return forward;
}

export const test = registering(nodeTest.test);
export const it = registering(nodeTest.it);
export const describe = registering(nodeTest.describe);
export const suite = registering(nodeTest.suite);
export const before = registering(nodeTest.before);
export const after = registering(nodeTest.after);
export const beforeEach = registering(nodeTest.beforeEach);
export const afterEach = registering(nodeTest.afterEach);
export const mock = nodeTest.mock;
export default test;

/** Imports the test file at `url` into this group's process, its tests in a suite called `name`. */
export async function importIntoGroup(url, name) {
  held = [];
  try {
    await import(url);
  } finally {
    const registrations = held;
    held = undefined;
    nodeTest.describe(name, () => {
      for (const register of registrations) register();
    });
  }
}
