// The vendored preact/hooks (copy-console-files.mjs), typed as the package it is copied from.
export * from 'preact/hooks';
