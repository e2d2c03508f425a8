/**
 * The signature of an async request's callback (reference control-plane.md §5.3): the platform
 * POSTs `{status_code, response_body, response_length, timestamp, request_id}` to the trigger's
 * `callbackUrl` with
 *   X-Blaxel-Signature: sha256=<hex HMAC-SHA256(callbackSecret, raw body)>
 *   X-Blaxel-Timestamp: <unix seconds>
 * and the same values as `X-Service-Signature` / `X-Service-Timestamp` (the platform's own header
 * prefix, as `X-Service-Authorization`). The timestamp is not part of the HMAC (as the reference
 * says); it equals the body's `timestamp`, which is, so a receiver checks the signature over the
 * raw bytes first, then rejects a body whose `timestamp` is more than 300 s old (a replay).
 * `verifyCallback` is the receiver's side, exactly as README.md documents it.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_HEADERS = ['x-blaxel-signature', 'x-service-signature'] as const;
export const TIMESTAMP_HEADERS = ['x-blaxel-timestamp', 'x-service-timestamp'] as const;
/** Receivers reject older callbacks (reference §5.3: "more than 300s old"). */
export const CALLBACK_MAX_AGE_SECONDS = 300;

export function signCallback(secret: string, rawBody: string | Buffer): string {
  return `sha256=${createHmac('sha256', secret).update(rawBody).digest('hex')}`;
}

/** The receiver's check: the signature over the raw body, and a fresh timestamp. */
export function verifyCallback(
  secret: string,
  rawBody: string | Buffer,
  signature: string | undefined,
  timestamp: string | undefined,
  nowSeconds = Math.floor(Date.now() / 1000),
): boolean {
  if (!signature || !timestamp || !/^\d+$/.test(timestamp)) return false;
  const want = Buffer.from(signCallback(secret, rawBody));
  const got = Buffer.from(signature);
  if (want.length !== got.length || !timingSafeEqual(want, got)) return false;
  return Math.abs(nowSeconds - Number(timestamp)) <= CALLBACK_MAX_AGE_SECONDS;
}

/** The callback's body (reference §5.3) plus the request id the 202 answered with. */
export interface CallbackPayload {
  status_code: number;
  response_body: string;
  response_length: number;
  timestamp: number;
  request_id: string;
}
