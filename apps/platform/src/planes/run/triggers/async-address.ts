/**
 * Whether a run-URL request is asynchronous (reference control-plane.md §5.3): it came in on an
 * `http-async` trigger's path, or it names an agent's own URL with `?async=true` ("Call the agent
 * URL with ?async=true (or call an http-async trigger path)"). Agents only: `http-async` is for
 * agents (reference §2.5). The `async` parameter is not forwarded to the agent.
 */
import type { RunAddress } from '../run-address.js';

export function asyncAddress(addr: RunAddress): RunAddress | undefined {
  if (addr.kind !== 'agent') return undefined;
  if (addr.trigger) return addr.trigger.type === 'http-async' ? addr : undefined;
  const q = addr.path.indexOf('?');
  if (q < 0) return undefined;
  const params = new URLSearchParams(addr.path.slice(q + 1));
  if (params.get('async') !== 'true') return undefined;
  params.delete('async');
  const rest = params.toString();
  return { ...addr, path: `${addr.path.slice(0, q)}${rest ? `?${rest}` : ''}` };
}
