import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { UploadTickets } from './upload-tickets.js';

// Issue 15: upload URLs are signed, short-lived and single-use; each refusal is a 403.
describe('UploadTickets', () => {
  const key = randomBytes(32);
  const target = { workspace: 'default', buildId: 'abc' };

  it('accepts a fresh ticket once, then refuses the replay', () => {
    const t = new UploadTickets(key, 60_000);
    const { token } = t.issue(target);
    expect(t.consume(token)).toEqual(target);
    expect(() => t.consume(token)).toThrow(/already used/);
  });

  it('refuses an expired ticket', () => {
    let now = 1_000;
    const t = new UploadTickets(key, 500, () => now);
    const { token } = t.issue(target);
    now = 1_501;
    expect(() => t.consume(token)).toThrow(/expired/);
  });

  it('refuses a ticket whose payload was changed (another build, another workspace)', () => {
    const t = new UploadTickets(key, 60_000);
    const { token } = t.issue(target);
    const [, mac] = token.split('.');
    const forged = Buffer.from(
      JSON.stringify({ ...target, workspace: 'other', id: 'x', exp: 9e15 }),
    ).toString('base64url');
    expect(() => t.consume(`${forged}.${mac}`)).toThrow(/not valid/);
  });

  it("refuses a ticket signed under another platform's key", () => {
    const { token } = new UploadTickets(randomBytes(32), 60_000).issue(target);
    expect(() => new UploadTickets(key, 60_000).consume(token)).toThrow(/not valid/);
  });
});
