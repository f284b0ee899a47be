/**
 * Prints what scripts/import-graph.ts measures (issue 33): each package's import circles, and the
 * server's loops of folders and imports that run back up its layers, with the layer order that
 * keeps them fewest. `npm run imports`; packages/server/test/layering.test.ts holds the rules.
 * (The client's top files are its core, used by its folders and using them: its folders are not
 * layers, so only the server's are measured.)
 */
import { join } from 'node:path';
import { folderLoops, importCircles, importGraph, upwardImports } from './import-graph.js';

for (const name of ['protocol', 'server', 'client']) {
  const graph = importGraph(join('packages', name, 'src'));
  const circles = importCircles(graph);
  console.log(`${name}: ${graph.size} files`);
  console.log(`  import circles: ${circles.length}`);
  for (const circle of circles) console.log(`    ${circle.join(' <-> ')}`);
  if (name !== 'server') continue;
  const loops = folderLoops(graph);
  const { orders, upward } = upwardImports(graph);
  console.log(`  loops of folders: ${loops.length}`);
  for (const order of orders) console.log(`    ${order.join(' < ')}`);
  console.log(`  imports that run back up the layers: ${upward.length}`);
  for (const { from, to } of upward) console.log(`    ${from} -> ${to}`);
}
