import { Sandbox } from '@tarmac/sdk';
import { parseFormat, render, table } from '../output.js';
import { parsePort } from '../sandbox-args.js';
import { action, type Register } from './run.js';

/** `tarmac preview create|list|delete`: URLs onto sandbox ports. */
export const registerPreview: Register = (program, ctx, state) => {
  const preview = program.command('preview').description('Public or token-protected URLs onto sandbox ports');

  preview
    .command('create <sandbox> <name>')
    .description(
      'Create a preview of PORT; private previews print a token to send as X-Service-Preview-Token',
    )
    .requiredOption('-p, --port <port>', 'port inside the sandbox')
    .option('--private', 'require a preview token')
    .option('--token-ttl <hours>', 'lifetime of the token of a private preview', '24')
    .option('-o, --output <format>', 'table, json or yaml', 'table')
    .action(
      action(
        state,
        (s: string, n: string) => `create preview ${n} of sandbox ${s}`,
        async (flags, sandboxName: string, name: string) => {
          const format = parseFormat(flags.output as string | undefined);
          const client = await ctx.client(flags);
          const sb = await Sandbox.get(sandboxName, client);
          const created = await sb.previews.create({
            name,
            port: parsePort(String(flags.port)),
            public: !flags.private,
          });
          let token: string | undefined;
          if (flags.private) {
            const expires = new Date(Date.now() + Number(flags.tokenTtl) * 3600_000);
            token = (await sb.previews.tokens(name).create(expires)).spec.token;
          }
          ctx.stdout.write(
            render(
              format,
              { ...created, ...(token ? { token } : {}) },
              () => `${created.spec.url ?? ''}\n${token ? `token: ${token}\n` : ''}`,
            ),
          );
        },
      ),
    );

  preview
    .command('list <sandbox>')
    .alias('ls')
    .option('-o, --output <format>', 'table, json or yaml', 'table')
    .action(
      action(
        state,
        (s: string) => `list previews of sandbox ${s}`,
        async (flags, sandboxName: string) => {
          const format = parseFormat(flags.output as string | undefined);
          const sb = await Sandbox.get(sandboxName, await ctx.client(flags));
          const previews = await sb.previews.list();
          ctx.stdout.write(
            render(format, previews, () =>
              table(
                ['name', 'port', 'public', 'url'],
                previews.map((p) => [
                  p.metadata.name,
                  String(p.spec.port),
                  String(p.spec.public ?? false),
                  p.spec.url ?? '',
                ]),
              ),
            ),
          );
        },
      ),
    );

  preview
    .command('delete <sandbox> <names...>')
    .alias('rm')
    .action(
      action(
        state,
        (s: string, n: string[]) => `delete preview ${n.join(' ')} of sandbox ${s}`,
        async (flags, sandboxName: string, names: string[]) => {
          const sb = await Sandbox.get(sandboxName, await ctx.client(flags));
          for (const name of names) {
            await sb.previews.delete(name);
            ctx.stdout.write(`Preview ${name} deleted\n`);
          }
        },
      ),
    );
};
