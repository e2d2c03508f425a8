import type { CredentialsFile } from '@tarmac/sdk';
import { CliError, EXIT } from '../errors.js';
import { table } from '../output.js';
import { action, type Register } from './run.js';

/** `login`, `workspaces`, `token`: who you are and which workspace you act in. */
export const registerAuth: Register = (program, ctx, state) => {
  program
    .command('login [workspace]')
    .description(
      'Save credentials to $TARMAC_HOME/credentials.json (API key, or service-account client credentials)',
    )
    .option('--api-key <key>', 'API key (default: $TARMAC_API_KEY, else read from stdin)')
    .option('--client-id <id>', 'service account client id (with --client-secret)')
    .option('--client-secret <secret>', 'service account client secret')
    .option('--run-url <url>', 'base URL of sandboxes and workloads (default: the API URL)')
    .action(
      action(
        state,
        (_ws?: string) => 'login',
        async (flags, workspace?: string) => {
          const saved = await ctx.readCredentials();
          const apiUrl = (flags.apiUrl as string | undefined) ?? ctx.env.TARMAC_API_URL ?? saved?.apiUrl;
          if (!apiUrl)
            throw new CliError('login', 'no API URL', 'pass --api-url http://host:8080', EXIT.usage);
          const clientId = flags.clientId as string | undefined;
          const clientSecret = flags.clientSecret as string | undefined;
          if (Boolean(clientId) !== Boolean(clientSecret)) {
            throw new CliError('login', '--client-id and --client-secret go together', undefined, EXIT.usage);
          }
          let apiKey = clientId
            ? undefined
            : ((flags.apiKey as string | undefined) ?? ctx.env.TARMAC_API_KEY);
          if (!clientId && !apiKey) {
            apiKey = (await ctx.io.readSecret('API key: ')).trim();
            if (!apiKey)
              throw new CliError(
                'login',
                'no API key given',
                'pass --api-key or pipe it on stdin',
                EXIT.usage,
              );
          }
          const settings: CredentialsFile = {
            apiUrl,
            runUrl: (flags.runUrl as string | undefined) ?? ctx.env.TARMAC_RUN_URL ?? apiUrl,
            ...(apiKey ? { apiKey } : { clientId, clientSecret }),
          };
          // Check the credentials before saving them, and learn the workspaces they can reach.
          // Oldest first: without a choice, login picks the first workspace, not the latest one made.
          const workspaces = await (
            await ctx.clientFor(settings)
          ).workspaces
            .list({ sort: 'createdAt:asc' })
            .all();
          const chosen = workspace ?? (flags.workspace as string | undefined) ?? saved?.workspace;
          const current = workspaces.find((w) => w.name === chosen) ?? workspaces[0];
          if (chosen && current?.name !== chosen) {
            throw new CliError(
              'login',
              `workspace "${chosen}" is not one of yours`,
              `yours: ${names(workspaces)}`,
              EXIT.notFound,
            );
          }
          const path = await ctx.saveCredentials({
            ...settings,
            workspace: current?.name,
            accountId: current?.accountId,
          });
          ctx.stdout.write(
            `Logged in to ${apiUrl}, workspace ${current?.name ?? '(none)'}. Saved to ${path}\n`,
          );
        },
      ),
    );

  program
    .command('workspaces [name]')
    .alias('workspace')
    .description('List your workspaces (* marks the current one), or switch to NAME')
    .option('--current', 'print only the current workspace name')
    .action(
      action(
        state,
        (name?: string) => (name ? `switch to workspace ${name}` : 'list workspaces'),
        async (flags, name?: string) => {
          const client = await ctx.client(flags);
          if (flags.current) {
            ctx.stdout.write(`${client.workspace ?? ''}\n`);
            return;
          }
          const workspaces = await client.workspaces.list().all();
          if (name) {
            const target = workspaces.find((w) => w.name === name);
            if (!target)
              throw new CliError(
                `switch to workspace ${name}`,
                'no such workspace',
                `yours: ${names(workspaces)}`,
                EXIT.notFound,
              );
            const saved = await ctx.readCredentials();
            if (!saved)
              throw new CliError(
                `switch to workspace ${name}`,
                'no credentials file',
                'run `tarmac login` first',
                EXIT.config,
              );
            await ctx.saveCredentials({ ...saved, workspace: name, accountId: target.accountId });
            ctx.stdout.write(`Switched to workspace ${name}\n`);
            return;
          }
          const rows = workspaces.map((w) => [
            w.name === client.workspace ? '*' : '',
            w.name,
            w.displayName,
            w.role,
          ]);
          ctx.stdout.write(table(['current', 'name', 'display name', 'role'], rows));
        },
      ),
    );

  program
    .command('token')
    .description('Print the bearer token in use (the API key, or a fresh JWT for client credentials)')
    .action(
      action(
        state,
        () => 'print token',
        async (flags) => {
          const token = await (await ctx.client(flags)).token();
          if (!token)
            throw new CliError('print token', 'no credentials configured', 'run `tarmac login`', EXIT.config);
          ctx.stdout.write(`${token}\n`);
        },
      ),
    );
};

const names = (list: { name: string }[]) => list.map((w) => w.name).join(', ') || 'none';
