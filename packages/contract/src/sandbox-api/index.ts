// The sandbox data plane (the API sandboxd serves inside each sandbox): request/response schemas.
export * from './common.js';
export * from './filesystem.js';
export * from './process.js';
export * from './network.js';
export * from './terminal.js';
export * from './claim.js';
