/**
 * Task output kept after its container is gone (issue 17: `tarmac logs job J EXEC [TASK]`): one
 * stream per task index under the execution row (framework/log-archive.ts, shared with the run
 * plane's replica logs).
 */
export {
  LogArchive as TaskLogArchive,
  MAX_ATTEMPT_LOG_BYTES,
  MAX_TASK_LOG_BYTES,
} from '../../framework/log-archive.js';
