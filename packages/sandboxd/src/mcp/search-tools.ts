// MCP search tools that need no external provider (reference sandbox-api.md §1.9 "Codegen
// tools"): codegenFileSearch (fuzzy), codegenGrepSearch (substring), codegenListDir and
// codegenReadFileRange (at most 250 lines). The provider-backed ones (codebase search, edit,
// rerank, reapply) are not offered.
import { readFile } from 'node:fs/promises';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { listDirectory } from '../fs/files.js';
import { resolveUserPath, type PathContext } from '../fs/paths.js';
import { assertDirectory, contentSearch, fuzzySearch } from '../fs/search.js';
import { DEFAULT_EXCLUDE_DIRS } from '../fs/walk.js';
import { fsError } from '../http/errors.js';
import { toolResult } from './result.js';

export function registerSearchTools(server: McpServer, ctx: PathContext): void {
  const at = (p: string | undefined): string => resolveUserPath(p ?? '.', ctx);

  server.registerTool(
    'codegenFileSearch',
    {
      description: 'Fuzzy search for files and directories by path',
      inputSchema: {
        query: z.string().min(1),
        directory: z.string().optional(),
        maxResults: z.number().int().optional(),
      },
    },
    (a) =>
      toolResult(async () => {
        const root = at(a.directory);
        await assertDirectory(root);
        return fuzzySearch(root, {
          query: a.query,
          patterns: [],
          maxResults: Math.min(a.maxResults ?? 20, 1000),
          excludeDirs: DEFAULT_EXCLUDE_DIRS,
          excludeHidden: true,
        });
      }),
  );

  server.registerTool(
    'codegenGrepSearch',
    {
      description: 'Search file contents for a literal string',
      inputSchema: {
        query: z.string().min(1),
        directory: z.string().optional(),
        caseSensitive: z.boolean().optional(),
        filePattern: z.string().optional(),
        maxResults: z.number().int().optional(),
      },
    },
    (a) =>
      toolResult(async () => {
        const root = at(a.directory);
        await assertDirectory(root);
        return contentSearch(root, {
          query: a.query,
          caseSensitive: a.caseSensitive ?? false,
          maxResults: a.maxResults ?? 100,
          filePattern: a.filePattern,
          excludeDirs: DEFAULT_EXCLUDE_DIRS,
        });
      }),
  );

  server.registerTool(
    'codegenListDir',
    { description: 'List a directory', inputSchema: { path: z.string().optional() } },
    (a) => toolResult(() => listDirectory(at(a.path))),
  );

  server.registerTool(
    'codegenReadFileRange',
    {
      description: 'Read lines [startLine, endLine] of a file (1-based, inclusive, at most 250 lines)',
      inputSchema: {
        path: z.string(),
        startLine: z.number().int().min(1).optional(),
        endLine: z.number().int().min(1).optional(),
      },
    },
    (a) =>
      toolResult(async () => {
        const p = at(a.path);
        const lines = (
          await readFile(p, 'utf8').catch((err: unknown) => {
            throw fsError(err, p);
          })
        ).split('\n');
        const start = a.startLine ?? 1;
        const end = Math.min(a.endLine ?? start + 249, start + 249, lines.length);
        return {
          path: p,
          startLine: start,
          endLine: end,
          totalLines: lines.length,
          content: lines.slice(start - 1, end).join('\n'),
        };
      }),
  );
}
