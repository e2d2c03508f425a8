/** The port a session preview names (the SDK's `SESSION_PORT`, reference sandbox-api.md "Sessions"). */
export const SESSION_PORT = 443;
