import { z } from 'zod';
import { nameSchema } from '../common.js';
import {
  deploymentStatusSchema,
  envelopeSchema,
  metadataInputSchema,
  readOnlyEnvelopeFields,
} from './envelope.js';
import { isoTimestampSchema, lifecycleDurationSchema, lifecycleSchema } from './lifecycle.js';

/**
 * A sandbox (spec "Sandbox"; values the spec leaves "not shown" from reference control-plane §2.6
 * and sandbox-api §5). Memory is in MB; port protocols are HTTP|TCP|UDP|TLS, lowercase accepted and
 * stored uppercase; extraArgs flags are iptables|nfs|tun with values enabled|disabled.
 */

export const PORT_PROTOCOLS = ['HTTP', 'TCP', 'UDP', 'TLS'] as const;
export const portSchema = z.object({
  target: z
    .number()
    .int('must be an integer')
    .min(1, 'must be at least 1')
    .max(65_535, 'must be at most 65535'),
  name: z.string().max(63, 'must be at most 63 characters').optional(),
  protocol: z
    .string()
    .transform((p) => p.toUpperCase())
    .pipe(z.enum(PORT_PROTOCOLS, { error: `must be one of ${PORT_PROTOCOLS.join(', ')} (any case)` }))
    .default('HTTP'),
});

/** Env variable; `secret: true` values are encrypted at rest and masked in responses. */
export const envSchema = z.object({
  name: z
    .string()
    .min(1, 'must not be empty')
    .max(255, 'must be at most 255 characters')
    .regex(/^[A-Za-z_][A-Za-z0-9_.-]*$/, 'must be a valid variable name ([A-Za-z_][A-Za-z0-9_.-]*)'),
  value: z.string().max(32_768, 'must be at most 32768 characters').default(''),
  secret: z.boolean().optional(),
});
export type Env = z.infer<typeof envSchema>;
/** What a masked secret value reads as in a response. */
export const SECRET_MASK = '********';

export const EXTRA_ARG_VALUES = ['enabled', 'disabled'] as const;
const extraArgValue = z.enum(EXTRA_ARG_VALUES, { error: 'must be enabled or disabled' });
export const extraArgsSchema = z.strictObject(
  { iptables: extraArgValue.optional(), nfs: extraArgValue.optional(), tun: extraArgValue.optional() },
  { error: 'unknown flag: allowed flags are iptables, nfs, tun' },
);

export const sandboxRuntimeSchema = z.object({
  image: z.string().min(1, 'must not be empty').max(512, 'must be at most 512 characters').optional(),
  memory: z
    .number()
    .int('must be an integer number of MB')
    .min(128, 'must be at least 128 (MB)')
    .max(65_536, 'must be at most 65536 (MB)')
    .optional(),
  ports: z.array(portSchema).max(32, 'at most 32 ports').optional(),
  envs: z.array(envSchema).max(256, 'at most 256 variables').optional(),
  // `null` clears (issue 14 item 5: the vendor SDK's updateTtl(null) sends `ttl: null`).
  expires: isoTimestampSchema.nullable().optional(),
  ttl: lifecycleDurationSchema.nullable().optional(),
  terminationGracePeriodSeconds: z
    .number()
    .int('must be an integer')
    .min(0, 'must be at least 0')
    .max(3600, 'must be at most 3600')
    .optional(),
  extraArgs: extraArgsSchema.optional(),
  generation: z.enum(['mk2', 'mk3'], { error: 'must be mk2 or mk3' }).optional(),
  snapshotEnabled: z.boolean().optional(),
});

export const VOLUME_ATTACHMENT_TYPES = ['persistent', 'ephemeral'] as const;
export const volumeAttachmentSchema = z
  .object({
    name: nameSchema,
    mountPath: z
      .string()
      .max(1024, 'must be at most 1024 characters')
      .regex(/^\/\S*$/, 'must be an absolute path'),
    readOnly: z.boolean().optional(),
    type: z.enum(VOLUME_ATTACHMENT_TYPES, { error: 'must be persistent or ephemeral' }).optional(),
    sizeMb: z.number().int('must be an integer').min(1, 'must be at least 1').optional(),
  })
  .refine((v) => v.type !== 'ephemeral' || v.sizeMb !== undefined, {
    path: ['sizeMb'],
    message: 'is required for an ephemeral volume',
  });

const domainList = z
  .array(z.string().min(1).max(253, 'must be at most 253 characters'))
  .max(500, 'at most 500 entries');
export const FIREWALL_RULESETS = ['default', 'proxy', 'dedicated-ip'] as const;

export const sandboxNetworkSchema = z.object({
  allowedDomains: domainList.optional(),
  forbiddenDomains: domainList.optional(),
  subnet: z.string().max(64).optional(),
  firewall: z
    .object({
      rulesets: z
        .array(z.enum(FIREWALL_RULESETS, { error: `must be one of ${FIREWALL_RULESETS.join(', ')}` }))
        .optional(),
    })
    .optional(),
  egress: z
    .object({
      gateway: z.string().max(253).optional(),
      mode: z.string().max(64).optional(),
      policies: z
        .array(
          z.object({
            name: z.string().max(63),
            mode: z.string().max(64).optional(),
            destinations: domainList.optional(),
          }),
        )
        .optional(),
    })
    .optional(),
  proxy: z
    .object({
      allowedDomains: domainList.optional(),
      forbiddenDomains: domainList.optional(),
      bypass: domainList.optional(),
      routing: z
        .array(
          z.object({
            destinations: domainList,
            headers: z.record(z.string(), z.string()).optional(),
            body: z.string().max(65_536).optional(),
            /** Values substituted for `{{SECRET:<name>}}`; encrypted at rest, masked in responses. */
            secrets: z.record(z.string(), z.string()).optional(),
          }),
        )
        .optional(),
    })
    .optional(),
});

export const sandboxSpecSchema = z.object({
  enabled: z.boolean().optional(),
  region: z.string().max(64, 'must be at most 64 characters').optional(),
  vpc: z.string().max(63, 'must be at most 63 characters').optional(),
  volumes: z.array(volumeAttachmentSchema).max(16, 'at most 16 volumes').optional(),
  // `null` clears (the vendor SDK's updateLifecycle(null) sends `lifecycle: null`).
  lifecycle: lifecycleSchema.nullable().optional(),
  runtime: sandboxRuntimeSchema.optional(),
  network: sandboxNetworkSchema.nullable().optional(),
});
export type SandboxSpec = z.infer<typeof sandboxSpecSchema>;

/** Create body: the vendor SDK may omit `metadata.name` (the server then picks one). */
export const sandboxCreateSchema = z
  .object({
    metadata: metadataInputSchema.extend({ name: nameSchema.optional() }),
    spec: sandboxSpecSchema,
    ...readOnlyEnvelopeFields,
  })
  .meta({ id: 'SandboxCreate' });
export const sandboxUpdateSchema = z
  .object({ metadata: metadataInputSchema, spec: sandboxSpecSchema, ...readOnlyEnvelopeFields })
  .meta({ id: 'SandboxUpdate' });
export type SandboxCreate = z.infer<typeof sandboxCreateSchema>;
export type SandboxUpdate = z.infer<typeof sandboxUpdateSchema>;

export const SANDBOX_STATES = ['RUNNING', 'STANDBY'] as const;
export const sandboxSchema = envelopeSchema(sandboxSpecSchema, {
  status: deploymentStatusSchema,
  state: z.enum(SANDBOX_STATES).optional(),
  expiresIn: z.number().int().optional().meta({
    description: 'Seconds until automatic deletion; present only when ttl, expires or lifecycle is set.',
  }),
  lastUsedAt: z.string().optional(),
  terminatedAt: z.string().optional(),
}).meta({ id: 'Sandbox' });
export type Sandbox = z.infer<typeof sandboxSchema>;
