import { z } from 'zod';
import { envSchema, volumeAttachmentSchema } from './sandbox.js';

export { volumeAttachmentSchema };

/**
 * Building blocks shared by the workload specs (agents, functions, jobs, applications): envs,
 * memory, generation, revision configuration, volume attachments, ports and triggers.
 * Values the spec leaves "not shown" take the reference's (control-plane.md §2.1, §2.5, §2.6);
 * anything else is a 400 naming the field and the allowed values.
 */

const oneOf = (values: readonly string[]) => ({ error: `must be one of ${values.join(', ')}` });

/** Env lists reuse the sandbox's `Env` (secret values encrypted at rest, masked in responses). */
export const envsSchema = z.array(envSchema).max(256, 'at most 256 variables');

/** Memory in MB (reference §2.1: "memory (MB)"; cores = memory / 2048). */
export const memoryMbSchema = z
  .number()
  .int('must be an integer number of MB')
  .min(128, 'must be at least 128 (MB)')
  .max(65_536, 'must be at most 65536 (MB)');

export const GENERATIONS = ['mk2', 'mk3'] as const;
export const generationSchema = z.enum(GENERATIONS, oneOf(GENERATIONS));

const percentSchema = z
  .number()
  .int('must be an integer')
  .min(0, 'must be at least 0')
  .max(100, 'must be at most 100');

/** Runtime fields of every auto-scaled workload (agents, functions; reference §2.1 runtime blocks). */
export const scaledRuntimeShape = {
  envs: envsSchema.default([]),
  generation: generationSchema.default('mk3'),
  image: z.string().max(512, 'must be at most 512 characters').optional(),
  memory: memoryMbSchema.default(2048),
  minScale: z
    .number()
    .int('must be an integer')
    .min(0, 'must be at least 0')
    .max(100, 'must be at most 100')
    .default(0),
  maxScale: z
    .number()
    .int('must be an integer')
    .min(1, 'must be at least 1')
    .max(100, 'must be at most 100')
    .default(10),
};

/** minScale may not exceed maxScale, reported on `minScale`. */
export const scaleBoundsCheck: [
  (r: { minScale: number; maxScale: number }) => boolean,
  { path: string[]; message: string },
] = [(r) => r.minScale <= r.maxScale, { path: ['minScale'], message: 'must not exceed maxScale' }];

/**
 * `RevisionConfiguration` (spec "Application"/"Agent" revision; reference §2.1): which revision
 * takes the traffic (`active`, default the newest), a `canary` taking `canaryPercent` of it, and
 * `stickySessionTtl` seconds during which a client stays on the revision that first answered it
 * (planes/run ARCHITECTURE.md "Revisions and traffic"). `traffic` is kept as given (the reference
 * does not say what it splits; the canary's share is `canaryPercent`). Names of revisions are
 * checked against the record's revisions when it is written (400 naming the field).
 */
export const revisionConfigurationSchema = z.object({
  active: z.string().max(64, 'must be at most 64 characters').optional(),
  canary: z.string().max(64, 'must be at most 64 characters').optional(),
  canaryPercent: percentSchema.optional(),
  stickySessionTtl: z
    .number()
    .int('must be an integer number of seconds')
    .min(0, 'must be at least 0')
    .max(604_800, 'must be at most 604800 (7 days)')
    .optional(),
  traffic: percentSchema.optional(),
});
export type RevisionConfiguration = z.infer<typeof revisionConfigurationSchema>;

export const TRIGGER_TYPES = ['http', 'http-async', 'cron'] as const;
export type TriggerType = (typeof TRIGGER_TYPES)[number];
export const AUTHENTICATION_TYPES = ['public', 'private'] as const;

/** Five space-separated cron fields (reference §2.5 "schedule (5-field cron)"). */
const CRON_PATTERN = /^\s*(\S+\s+){4}\S+\s*$/;

/** `TriggerConfiguration` (reference §2.5). `callbackSecret` is encrypted at rest and masked afterwards. */
export const triggerConfigurationSchema = z.object({
  path: z
    .string()
    .max(256, 'must be at most 256 characters')
    .regex(/^\/[A-Za-z0-9/_.~-]*$/, 'must be a URL path starting with "/"')
    .optional(),
  authenticationType: z.enum(AUTHENTICATION_TYPES, oneOf(AUTHENTICATION_TYPES)).optional(),
  callbackUrl: z.url({ error: 'must be an absolute URL' }).optional(),
  callbackSecret: z.string().max(256, 'must be at most 256 characters').optional(),
  retry: z
    .number()
    .int('must be an integer')
    .min(0, 'must be at least 0')
    .max(10, 'must be at most 10')
    .optional(),
  timeout: z
    .number()
    .int('must be an integer number of seconds')
    .min(1, 'must be at least 1')
    .max(900, 'must be at most 900')
    .optional(),
  schedule: z.string().regex(CRON_PATTERN, 'must be a 5-field cron expression').optional(),
  tasks: z.array(z.record(z.string(), z.unknown())).max(1000, 'must have at most 1000 entries').optional(),
});

/**
 * Triggers of a workload kind: `http` for agents and functions, `http-async` for agents only,
 * `cron` for jobs only (reference §2.5 "Valid combinations").
 */
export function triggersSchema<const T extends readonly [TriggerType, ...TriggerType[]]>(allowed: T) {
  return z
    .array(
      z
        .object({
          id: z.string().max(64, 'must be at most 64 characters').optional(),
          type: z.enum(allowed, oneOf(allowed)),
          enabled: z.boolean().default(true),
          configuration: triggerConfigurationSchema.default({}),
        })
        .superRefine((trigger, ctx) => {
          if (trigger.type === 'cron' && !trigger.configuration.schedule) {
            ctx.addIssue({
              code: 'custom',
              path: ['configuration', 'schedule'],
              message: 'is required for a cron trigger',
            });
          }
          if (trigger.type !== 'http-async' && trigger.configuration.timeout !== undefined) {
            ctx.addIssue({
              code: 'custom',
              path: ['configuration', 'timeout'],
              message: 'applies to http-async triggers only',
            });
          }
        }),
    )
    .max(20, 'must have at most 20 entries');
}

/** `RevisionMetadata` returned by `GET /{kind}/{name}/revisions` (reference §1.1). */
export const revisionMetadataSchema = z
  .object({
    id: z.string(),
    active: z.boolean(),
    canary: z.boolean(),
    previousActive: z.boolean(),
    status: z.string(),
    trafficPercent: z.number().int(),
    createdAt: z.string(),
    createdBy: z.string(),
  })
  .meta({ id: 'RevisionMetadata' });
export type RevisionMetadata = z.infer<typeof revisionMetadataSchema>;

/** Policy and connection names referenced by a workload spec. */
export const referenceListSchema = z
  .array(z.string().min(1, 'must not be empty').max(49))
  .max(50, 'must have at most 50 entries');
