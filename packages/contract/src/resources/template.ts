import { z } from 'zod';
import { defineRoute } from '../route.js';

/** Templates: a read-only built-in catalogue (spec "Template"; reference §1.10). */
export const templateVariableSchema = z.object({
  name: z.string(),
  description: z.string(),
  integration: z.string(),
  path: z.string(),
  secret: z.boolean(),
});

export const templateSchema = z
  .object({
    name: z.string(),
    description: z.string(),
    defaultBranch: z.string(),
    url: z.string(),
    sha: z.string(),
    icon: z.string(),
    iconDark: z.string(),
    downloadCount: z.number().int(),
    forksCount: z.number().int(),
    starCount: z.number().int(),
    topics: z.array(z.string()),
    variables: z.array(templateVariableSchema),
  })
  .meta({ id: 'Template' });
export type Template = z.infer<typeof templateSchema>;

export const templateRoutes = {
  list: defineRoute({
    operationId: 'listTemplates',
    method: 'get',
    path: '/v0/templates',
    summary: 'The built-in template catalogue (a bare array: it is not a workspace collection)',
    tag: 'templates',
    auth: 'principal',
    response: z.array(templateSchema),
  }),
  get: defineRoute({
    operationId: 'getTemplate',
    method: 'get',
    path: '/v0/templates/{templateName}',
    summary: 'One template of the catalogue',
    tag: 'templates',
    auth: 'principal',
    params: z.object({ templateName: z.string() }),
    response: templateSchema,
    errors: [404],
  }),
};
