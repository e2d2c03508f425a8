/**
 * Header names of our API and the public platform's aliases we accept for compatibility
 * (issue "Platform core" §4): theirs are read wherever ours are, case-insensitively.
 */
export const HEADERS = {
  authorization: ['authorization', 'x-service-authorization', 'x-blaxel-authorization'],
  workspace: ['x-service-workspace', 'x-blaxel-workspace'],
  version: ['service-version', 'blaxel-version'],
  previewToken: ['x-service-preview-token', 'x-blaxel-preview-token'],
  requestId: ['x-request-id'],
} as const;
