// The vendored htm (copy-console-files.mjs), typed as the package it is copied from.
export { default } from 'htm';
