// Entry of the bundle lib/node-proxy.cjs (scripts/bundle-preload.mjs, CommonJS), loaded by
// NODE_OPTIONS=--require into every node process of a sandbox: the preload's only side effect,
// and the only place it reads the process's environment.
import { install } from './node-proxy.js';

try {
  install(process.env, process.versions.node, process.argv);
} catch {
  // Never break the program: without the agent, fetch is what it was (no egress).
}
