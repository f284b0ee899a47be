/** The console's templates: htm's tagged templates over preact's `h`, no build step of their own (issue 37). */
import htm from './htm.js';
import { h } from './preact.js';

export const html = htm.bind(h);
