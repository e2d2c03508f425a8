import { action, type Register } from './run.js';

/** The fields of the contract's ReplicaLogs this command reads. */
interface ReplicaLogs {
  replica: string | null;
  archived: string;
  text: string;
  next: number;
}

const POLL_MS = 1000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const KINDS = [
  ['agent', 'agents'],
  ['function', 'functions'],
  ['application', 'applications'],
] as const;
const ARTICLES = { agent: 'an agent', function: 'a function', application: 'an application' } as const;

/**
 * `tarmac logs agent|function|application NAME [-f]` (issue 16): the output of
 * the workload's replicas (`GET /v0/{kind}/{name}/replicas/logs`) — what replicas that ended left,
 * then the current one's; `-f` keeps polling, and starts a new replica's output from its beginning
 * when the replica changes (a restart after a crash, a new revision).
 */
export const registerWorkloadLogs: Register = (program, ctx, state) => {
  const logs =
    program.commands.find((c) => c.name() === 'logs') ??
    program.command('logs').description('Logs of a workload');
  for (const [kind, plural] of KINDS) {
    logs
      .command(`${kind} <name>`)
      .description(`The output (stdout and stderr) of ${ARTICLES[kind]}'s replicas`)
      .option('-f, --follow', 'keep printing new output until interrupted')
      .action(
        action(
          state,
          (name: string) => `logs of ${kind} ${name}`,
          async (flags, name: string) => {
            const client = await ctx.client(flags);
            const write = (s: string) => {
              if (!s) return;
              ctx.stdout.write(s.endsWith('\n') ? s : `${s}\n`);
            };
            let offset = 0;
            let replica: string | undefined;
            let archivedShown = false;
            for (;;) {
              const page = await client.call<ReplicaLogs>(
                'GET',
                `/v0/${plural}/${encodeURIComponent(name)}/replicas/logs`,
                { query: { offset, ...(replica ? { replica } : {}) } },
              );
              if (!archivedShown) write(page.archived);
              archivedShown = true;
              replica = page.replica ?? undefined;
              write(page.text);
              offset = page.next;
              if (!flags.follow) return;
              await sleep(POLL_MS);
            }
          },
        ),
      );
  }
};
