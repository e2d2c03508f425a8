// MCP filesystem tools (reference sandbox-api.md §1.9): fsGetWorkingDirectory, fsListDirectory,
// fsReadFile, fsWriteFile, fsEditFile (oldString/newString), fsDeleteFileOrDirectory.
import { readFile, stat } from 'node:fs/promises';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { listDirectory, makeDirectory, parsePermissions, remove, toFile, writeFileAt } from '../fs/files.js';
import { resolveUserPath, type PathContext } from '../fs/paths.js';
import { badRequest, fsError } from '../http/errors.js';
import { toolResult } from './result.js';

const path = z.string().describe('Absolute, or relative to the working directory');

export function registerFsTools(server: McpServer, ctx: PathContext): void {
  const at = (p: string): string => resolveUserPath(p, ctx);

  server.registerTool('fsGetWorkingDirectory', { description: 'The daemon working directory' }, () =>
    toolResult(() => ({ workingDirectory: ctx.workingDir })),
  );

  server.registerTool('fsListDirectory', { description: 'List a directory', inputSchema: { path } }, (a) =>
    toolResult(() => listDirectory(at(a.path))),
  );

  server.registerTool('fsReadFile', { description: 'Read a text file', inputSchema: { path } }, (a) =>
    toolResult(async () => {
      const p = at(a.path);
      const st = await stat(p).catch((err: unknown) => {
        throw fsError(err, p);
      });
      if (st.isDirectory()) throw badRequest(`is a directory: ${p}`);
      return { ...toFile(p, st), content: await readFile(p, 'utf8') };
    }),
  );

  server.registerTool(
    'fsWriteFile',
    {
      description: 'Create or overwrite a file, or create a directory',
      inputSchema: {
        path,
        content: z.string().optional(),
        permissions: z.string().optional(),
        isDirectory: z.boolean().optional(),
      },
    },
    (a) =>
      toolResult(async () => {
        const p = at(a.path);
        if (a.isDirectory) await makeDirectory(p, parsePermissions(a.permissions, 0o755));
        else await writeFileAt(p, a.content ?? '', parsePermissions(a.permissions, 0o644));
        return {
          message: a.isDirectory ? 'Directory created successfully' : 'File created successfully',
          path: p,
        };
      }),
  );

  server.registerTool(
    'fsEditFile',
    {
      description: 'Replace oldString with newString in a file (exactly one occurrence unless replaceAll)',
      inputSchema: {
        path,
        oldString: z.string().min(1),
        newString: z.string(),
        replaceAll: z.boolean().optional(),
      },
    },
    (a) =>
      toolResult(async () => {
        const p = at(a.path);
        const text = await readFile(p, 'utf8').catch((err: unknown) => {
          throw fsError(err, p);
        });
        const count = text.split(a.oldString).length - 1;
        if (count === 0) throw badRequest(`oldString not found in ${p}`);
        if (count > 1 && !a.replaceAll) {
          throw badRequest(`oldString occurs ${count} times in ${p}; make it unique or set replaceAll`);
        }
        const updated = a.replaceAll
          ? text.split(a.oldString).join(a.newString)
          : text.replace(a.oldString, () => a.newString);
        const mode = (await stat(p)).mode & 0o7777;
        await writeFileAt(p, updated, mode);
        return { path: p, occurrencesReplaced: a.replaceAll ? count : 1 };
      }),
  );

  server.registerTool(
    'fsDeleteFileOrDirectory',
    {
      description: 'Delete a file or directory',
      inputSchema: { path, isDirectory: z.boolean().optional(), recursive: z.boolean().optional() },
    },
    (a) =>
      toolResult(async () => {
        const p = at(a.path);
        await remove(p, a.recursive ?? false);
        return { message: 'Deleted successfully', path: p };
      }),
  );
}
