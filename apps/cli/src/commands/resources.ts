import { NotFoundError, type Tarmac } from '@tarmac/sdk';
import { interpolate, parseDocuments } from '../apply-docs.js';
import type { CliContext, GlobalFlags } from '../context.js';
import { CliError, EXIT, explain, formatError } from '../errors.js';
import { parseFormat, render, table, type OutputFormat } from '../output.js';
import { findResourceType, knownTypes, type ResourceDocument, type ResourceType } from '../resources.js';
import { action, type Register } from './run.js';

function typeOf(word: string, what: string): ResourceType {
  const type = findResourceType(word);
  if (!type)
    throw new CliError(what, `unknown resource type "${word}"`, `known types: ${knownTypes()}`, EXIT.usage);
  return type;
}

/** A 404 on a list means the platform has no such route yet, not that the list is empty. */
function routeMissing(type: ResourceType, error: unknown): never {
  if (error instanceof NotFoundError && error.code === 'route_not_found') {
    throw new CliError(
      `get ${type.name}`,
      'this platform does not serve that resource type',
      'upgrade the platform',
      EXIT.notFound,
    );
  }
  throw error;
}

async function snapshot(client: Tarmac, type: ResourceType, name: string | undefined, format: OutputFormat) {
  if (name) {
    const item = type.get
      ? await type.get(client, name)
      : (await type.list(client).all()).find((i) => type.nameOf(i) === name);
    if (!item)
      throw new NotFoundError({
        status: 404,
        code: 'not_found',
        message: `no ${type.kind} "${name}"`,
        method: 'GET',
        url: '',
        body: undefined,
      });
    return render(format, item, () =>
      table(
        type.columns.map((c) => c[0]),
        [type.columns.map((c) => c[1](item))],
      ),
    );
  }
  const items = await type
    .list(client)
    .all()
    .catch((e: unknown) => routeMissing(type, e));
  return render(format, items, () =>
    items.length
      ? table(
          type.columns.map((c) => c[0]),
          items.map((i) => type.columns.map((c) => c[1](i))),
        )
      : `No ${type.name} found.\n`,
  );
}

/** `get TYPE [NAME]`: one snapshot, or a refresh every 2 s with --watch. */
export async function getResources(
  ctx: CliContext,
  flags: GlobalFlags & Record<string, unknown>,
  word: string,
  name: string | undefined,
): Promise<void> {
  const type = typeOf(word, `get ${word}`);
  const format = parseFormat(flags.output as string | undefined);
  const client = await ctx.client(flags);
  let last = '';
  for (;;) {
    const text = await snapshot(client, type, name, format);
    if (text !== last) {
      if (flags.watch && last && ctx.stdout.isTTY) ctx.stdout.write('\x1b[2J\x1b[H');
      ctx.stdout.write(text);
      last = text;
    }
    if (!flags.watch) return;
    await new Promise((resolve) => setTimeout(resolve, 2000));
  }
}

/** `delete TYPE NAME...`: tries every name, reports each; the exit code is the last failure's. */
export async function deleteResources(
  ctx: CliContext,
  flags: GlobalFlags,
  word: string,
  names: string[],
): Promise<number> {
  const type = typeOf(word, `delete ${word}`);
  if (!type.delete)
    throw new CliError(`delete ${type.name}`, 'this type cannot be deleted', undefined, EXIT.usage);
  const client = await ctx.client(flags);
  let failed: CliError | undefined;
  for (const name of names) {
    try {
      await type.delete(client, name);
      ctx.stdout.write(`${type.kind} ${name} deleted\n`);
    } catch (error) {
      failed = explain(`delete ${type.name} ${name}`, error);
      ctx.stderr.write(`${formatError(failed)}\n`);
    }
  }
  return failed?.exitCode ?? EXIT.ok;
}

/** `get`, `delete`, `apply`: generic over the resource table. */
export const registerResources: Register = (program, ctx, state) => {
  program
    .command('get <type> [name]')
    .description(`Show resources as a table, JSON or YAML. Types: ${knownTypes()}`)
    .option('-o, --output <format>', 'table, json or yaml', 'table')
    .option('--watch', 'refresh every 2 seconds until interrupted')
    .action(
      action(
        state,
        (type: string, name?: string) => `get ${type}${name ? ` ${name}` : ''}`,
        (flags, word: string, name?: string) => getResources(ctx, flags, word, name),
      ),
    );

  program
    .command('delete <type> <names...>')
    .description('Delete resources by name; reports each, fails if any failed')
    .action(
      action(
        state,
        (type: string, names: string[]) => `delete ${type} ${names.join(' ')}`,
        (flags, word: string, names: string[]) => deleteResources(ctx, flags, word, names),
      ),
    );

  program
    .command('apply')
    .description(
      'Create or update resources from YAML ({apiVersion, kind, metadata, spec}; several documents per file; ${VAR} and ${VAR:default} interpolated)',
    )
    .requiredOption('-f, --filename <path>', 'file, directory of .yaml/.yml/.json files, or - for stdin')
    .action(
      action(
        state,
        () => 'apply',
        async (flags) => {
          const docs = await readDocuments(ctx, flags.filename as string);
          const client = await ctx.client(flags);
          for (const doc of docs) {
            const type = findResourceType(doc.kind);
            if (!type?.apply)
              throw new CliError(
                `apply ${doc.kind} ${doc.metadata.name}`,
                `kind "${doc.kind}" cannot be applied`,
                `known types: ${knownTypes()}`,
                EXIT.usage,
              );
            try {
              const result = await type.apply(client, doc);
              ctx.stdout.write(`${type.kind} ${doc.metadata.name} ${result}\n`);
            } catch (error) {
              throw explain(`apply ${type.kind} ${doc.metadata.name}`, error);
            }
          }
        },
      ),
    );
};

async function readDocuments(ctx: CliContext, source: string): Promise<ResourceDocument[]> {
  const texts: [string, string][] = [];
  if (source === '-') texts.push(['stdin', await ctx.io.readStdin()]);
  else {
    const files = await ctx.io.listDir(source);
    const paths = files ? files.filter((f) => /\.(ya?ml|json)$/.test(f)).sort() : [source];
    for (const path of paths) texts.push([path, new TextDecoder().decode(await ctx.io.readFile(path))]);
  }
  return texts.flatMap(([name, text]) => parseDocuments(interpolate(text, ctx.env), name));
}
