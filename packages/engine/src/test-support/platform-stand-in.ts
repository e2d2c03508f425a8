// A stand-in for the platform process in the restart test: creates one sandbox (and freezes it
// when asked), prints its info as one JSON line, then idles until it is killed.
// Usage: node --import tsx platform-stand-in.ts <home> <id> [freeze]
import { testEngine } from './harness.js';

const [home, id, mode] = process.argv.slice(2);
if (!home || !id) throw new Error('usage: platform-stand-in.ts <home> <id> [freeze]');
const engine = testEngine(home);
const info = await engine.createSandbox({ id, image: 'tarmac/base:latest', memoryMB: 512 });
await engine.waitReady(id, 15_000);
if (mode === 'freeze') await engine.freeze(id);
process.stdout.write(`${JSON.stringify(info)}\n`);
setInterval(() => undefined, 60_000);
