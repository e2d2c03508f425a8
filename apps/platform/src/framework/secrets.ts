import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { SECRET_MASK } from '@tarmac/contract';

/**
 * Encryption at rest of secret values (ARCHITECTURE.md "Security model": env values with
 * `secret: true` and connection secrets are encrypted at rest and masked in responses unless
 * `show_secrets=true` by a workspace admin). AES-256-GCM, a random 96-bit nonce per value, the key
 * lives in `TARMAC_HOME/keys/secrets.key` — so a copy of the database alone reveals no secret.
 *
 * Sealed form: `sealed:v1:<base64url(nonce ‖ ciphertext ‖ tag)>`. The optional `context` (e.g.
 * `ws/sandbox/name`) is bound as associated data, so a sealed value pasted into another resource
 * does not open.
 */
const PREFIX = 'sealed:v1:';
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

export class SecretBox {
  private readonly key: Buffer;

  constructor(key: Uint8Array) {
    if (key.length < 32) throw new Error('secret key must be at least 32 bytes');
    this.key = Buffer.from(key.subarray(0, 32));
  }

  static isSealed(value: string): boolean {
    return value.startsWith(PREFIX);
  }

  seal(plain: string, context = ''): string {
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, nonce);
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return PREFIX + Buffer.concat([nonce, body, cipher.getAuthTag()]).toString('base64url');
  }

  /** Opens a sealed value; throws when it was tampered with or sealed under another key/context. */
  open(sealed: string, context = ''): string {
    if (!SecretBox.isSealed(sealed)) throw new Error('value is not sealed');
    const raw = Buffer.from(sealed.slice(PREFIX.length), 'base64url');
    if (raw.length < NONCE_BYTES + TAG_BYTES) throw new Error('sealed value is truncated');
    const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, NONCE_BYTES));
    decipher.setAAD(Buffer.from(context, 'utf8'));
    decipher.setAuthTag(raw.subarray(raw.length - TAG_BYTES));
    return Buffer.concat([
      decipher.update(raw.subarray(NONCE_BYTES, raw.length - TAG_BYTES)),
      decipher.final(),
    ]).toString('utf8');
  }
}

/** How secret values leave the server: masked (default) or in clear (admins with show_secrets). */
export type SecretView = 'mask' | 'reveal';

export interface SecretEnv {
  name: string;
  value: string;
  secret?: boolean | undefined;
}

/**
 * Seals the values of secret envs before they are stored. A value equal to the mask keeps the
 * stored value of the same name, so a GET (masked) followed by a PUT of that body loses nothing.
 */
export function sealEnvs<E extends SecretEnv>(
  box: SecretBox,
  envs: readonly E[] | undefined,
  context: string,
  previous: readonly E[] | undefined = [],
): E[] | undefined {
  if (!envs) return undefined;
  const before = new Map((previous ?? []).filter((e) => e.secret).map((e) => [e.name, e.value]));
  return envs.map((env) => {
    if (!env.secret) return env;
    const kept = env.value === SECRET_MASK ? before.get(env.name) : undefined;
    if (kept !== undefined && SecretBox.isSealed(kept)) return { ...env, value: kept };
    return { ...env, value: box.seal(env.value, context) };
  });
}

/** The stored envs as a response shows them. */
export function viewEnvs<E extends SecretEnv>(
  box: SecretBox,
  envs: readonly E[] | undefined,
  context: string,
  view: SecretView,
): E[] | undefined {
  if (!envs) return undefined;
  return envs.map((env) => (env.secret ? { ...env, value: viewValue(box, env.value, context, view) } : env));
}

/** Seals every value of a secret map (e.g. proxy routing secrets), keeping masked ones as stored. */
export function sealMap(
  box: SecretBox,
  map: Record<string, string> | undefined,
  context: string,
  previous: Record<string, string> | undefined = {},
): Record<string, string> | undefined {
  if (!map) return undefined;
  return Object.fromEntries(
    Object.entries(map).map(([key, value]) => {
      const kept = value === SECRET_MASK ? previous?.[key] : undefined;
      return [key, kept !== undefined && SecretBox.isSealed(kept) ? kept : box.seal(value, context)];
    }),
  );
}

export function viewMap(
  box: SecretBox,
  map: Record<string, string> | undefined,
  context: string,
  view: SecretView,
): Record<string, string> | undefined {
  if (!map) return undefined;
  return Object.fromEntries(Object.entries(map).map(([k, v]) => [k, viewValue(box, v, context, view)]));
}

function viewValue(box: SecretBox, stored: string, context: string, view: SecretView): string {
  if (view === 'mask' || !SecretBox.isSealed(stored)) return view === 'mask' ? SECRET_MASK : stored;
  return box.open(stored, context);
}
