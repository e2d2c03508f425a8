/**
 * The `kind` of every resource record the platform stores (store `resources.kind`), defined once
 * (issue 13: SANDBOX_KIND and VOLUME_KIND were defined twice). Planes name kinds through these;
 * the framework's collection, events and change feed are keyed by them.
 */
export const SANDBOX_KIND = 'sandbox';
export const VOLUME_KIND = 'volume';
export const DRIVE_KIND = 'drive';
export const PREVIEW_KIND = 'preview';
export const PREVIEW_TOKEN_KIND = 'preview-token';
export const AGENT_KIND = 'agent';
export const FUNCTION_KIND = 'function';
export const MODEL_KIND = 'model';
export const JOB_KIND = 'job';
export const JOB_EXECUTION_KIND = 'job-execution';
/** Last fired minute of a job's cron triggers (planes/jobs/cron-triggers.ts). */
export const JOB_CRON_STATE_KIND = 'job-cron-state';
export const APPLICATION_KIND = 'application';
export const IMAGE_KIND = 'image';
export const PENDING_SHARE_KIND = 'pending-image-share';
export const CONNECTION_KIND = 'integration-connection';
export const POLICY_KIND = 'policy';
export const CUSTOM_DOMAIN_KIND = 'custom-domain';
export const SANDBOX_SCHEDULE_KIND = 'sandbox-schedule';
export const SANDBOX_SCHEDULE_EXECUTION_KIND = 'sandbox-schedule-execution';
export const SANDBOX_SNAPSHOT_KIND = 'sandbox-snapshot';
