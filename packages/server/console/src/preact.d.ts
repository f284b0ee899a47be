// The vendored preact (copy-console-files.mjs), typed as the package it is copied from.
export * from 'preact';
