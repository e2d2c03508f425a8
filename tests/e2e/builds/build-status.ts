/**
 * A build's own outcome, whatever happened to the record since: the run plane (issue 16) deploys a
 * built agent or function at once, so the record's status moves on to DEPLOYING/DEPLOYED (or
 * FAILED, for a test image that never listens) while the build stays BUILT. The status of the last
 * `build` event says what the build did.
 */
export function buildStatus(record: { events: Array<{ type?: string; status: string }> }): string {
  return record.events.filter((e) => e.type === 'build').at(-1)?.status ?? '';
}
