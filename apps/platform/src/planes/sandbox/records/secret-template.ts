// `{{SECRET:<secret_name>}}` in `proxy.routing[].headers` and `.body` is replaced by the value of
// that name in the rule's `secrets` (spec "Sandbox" → `spec.network`). Rendering happens only in
// the platform's egress proxy, on the way out, so the value never enters the sandbox.

const TOKEN = /\{\{SECRET:([^{}]*)\}\}/g;

/** Secret names referenced by a template, in order of appearance. */
export function referencedSecrets(template: string): string[] {
  return [...template.matchAll(TOKEN)].map((m) => m[1] ?? '');
}

/**
 * Replaces every token by its secret. A name without a value is left out of the output as an
 * empty string; validation refuses such specs at create time, so this only guards a race with an
 * update that removed a secret.
 */
export function renderSecrets(template: string, secrets: Readonly<Record<string, string>>): string {
  return template.replace(TOKEN, (_, name: string) => secrets[name] ?? '');
}
