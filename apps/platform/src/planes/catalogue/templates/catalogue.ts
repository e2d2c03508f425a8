import type { Template } from '@tarmac/contract';

/**
 * The built-in template catalogue (spec "Template"; reference §1.10): static data shipped with the
 * platform, not stored per workspace. Each entry names a starter repository and the variables the
 * deploy flow asks for (`integration` links a variable to an integration connection kind).
 */
const REPO = 'https://github.com/tarmac-templates';
const SHA = '0000000000000000000000000000000000000000';

function template(
  t: Omit<
    Template,
    'defaultBranch' | 'sha' | 'downloadCount' | 'forksCount' | 'starCount' | 'url' | 'icon' | 'iconDark'
  >,
): Template {
  return {
    ...t,
    url: `${REPO}/${t.name}`,
    defaultBranch: 'main',
    sha: SHA,
    icon: `${REPO}/${t.name}/raw/main/icon.svg`,
    iconDark: `${REPO}/${t.name}/raw/main/icon-dark.svg`,
    downloadCount: 0,
    forksCount: 0,
    starCount: 0,
  };
}

const openAiKey = {
  name: 'OPENAI_API_KEY',
  description: 'API key of the model provider the agent calls',
  integration: 'openai',
  path: '.env',
  secret: true,
};

export const TEMPLATES: readonly Template[] = [
  template({
    name: 'template-agent-typescript',
    description: 'An HTTP agent in TypeScript that answers {inputs} through a model gateway endpoint',
    topics: ['agent', 'typescript'],
    variables: [openAiKey],
  }),
  template({
    name: 'template-agent-python',
    description: 'An HTTP agent in Python (FastAPI) that answers {inputs} through a model gateway endpoint',
    topics: ['agent', 'python'],
    variables: [openAiKey],
  }),
  template({
    name: 'template-mcp-typescript',
    description: 'An MCP server (function) in TypeScript over the streamable HTTP transport',
    topics: ['function', 'mcp', 'typescript'],
    variables: [],
  }),
  template({
    name: 'template-job-typescript',
    description: 'A batch job in TypeScript: each task receives one entry of the execution tasks',
    topics: ['job', 'typescript'],
    variables: [],
  }),
  template({
    name: 'template-sandbox-base',
    description: 'A sandbox image with a shell, git, Node.js and Python, and the sandbox API',
    topics: ['sandbox'],
    variables: [],
  }),
];
