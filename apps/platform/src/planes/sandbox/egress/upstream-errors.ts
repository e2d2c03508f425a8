// How the proxy words a failed upstream connection: a refusal by the destination guard (403), a
// name that does not resolve (502), a timeout (504), a TLS verification failure (502, naming it).
export function describeUpstreamError(err: unknown): { status: number; message: string } {
  const e = err as NodeJS.ErrnoException;
  if (e?.code === 'EBLOCKED') return { status: 403, message: e.message };
  if (e?.code === 'ENOTFOUND' || e?.code === 'EAI_AGAIN') {
    return { status: 502, message: `cannot resolve destination: ${e.message}` };
  }
  if (e?.code === 'ETIMEDOUT') return { status: 504, message: `destination timed out: ${e.message}` };
  const tlsCodes = [
    'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
    'SELF_SIGNED_CERT_IN_CHAIN',
    'DEPTH_ZERO_SELF_SIGNED_CERT',
    'ERR_TLS_CERT_ALTNAME_INVALID',
    'CERT_HAS_EXPIRED',
    'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  ];
  if (e?.code && tlsCodes.includes(e.code)) {
    return {
      status: 502,
      message: `destination's TLS certificate failed verification (${e.code}): ${e.message}`,
    };
  }
  return { status: 502, message: `destination unreachable: ${e?.message ?? String(err)}` };
}
