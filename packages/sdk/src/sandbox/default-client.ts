import type { TarmacClient } from '../client.js';
import { TarmacConfigError } from '../http/errors.js';

/**
 * The client `Sandbox.create(...)` and friends use when none is passed. `@tarmac/sdk/node`
 * registers a factory that reads the environment and credentials.json on first use (never at import).
 */
let factory: (() => TarmacClient) | undefined;
let instance: TarmacClient | undefined;

export function setDefaultClient(client: TarmacClient | (() => TarmacClient)): void {
  instance = typeof client === 'function' ? undefined : client;
  factory = typeof client === 'function' ? client : undefined;
}

export function defaultClient(): TarmacClient {
  instance ??= factory?.();
  if (!instance) {
    throw new TarmacConfigError(
      'no Tarmac client: pass one, call setDefaultClient(), or import "@tarmac/sdk/node" to configure from the environment',
    );
  }
  return instance;
}
