/**
 * What places a list's member on the session policy's hash ring (issue 36): the address its kind
 * declares (`configStrings.addresses`: an engine's or an upstream's base URL), which is the same
 * in every replica's copy of the config and stays when members are added, removed or reordered,
 * so that only the conversations of a member that changed move. A member with no address (a
 * scripted or llama-cpp backend), or with the address of one before it, is placed by its place in
 * the list instead. An identity is hashed, never shown.
 */
import { configStringValues } from '../backend-kinds.js';

export function memberIdentities(configs: ReadonlyArray<{ type: string }>): string[] {
  const taken = new Set<string>();
  return configs.map((config, index) => {
    const address = configStringValues(config, 'addresses').join(' ');
    const identity = address === '' || taken.has(address) ? `${address}#${index + 1}` : address;
    taken.add(identity);
    return identity;
  });
}
