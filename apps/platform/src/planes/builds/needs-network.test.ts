// Which builds get no network namespace (build-network.ts needsNetwork): only Dockerfiles that
// can neither run nor fetch anything. Every doubt must come out as "needs it".
import { describe, expect, it } from 'vitest';
import { needsNetwork } from './build-network.js';

const BASE = 'tarmac/base:latest';
const generatedNode = [
  'FROM tarmac/base:latest',
  'WORKDIR /app',
  'ENV NODE_ENV=production',
  'COPY package.json ./',
  'COPY . .',
  'CMD ["node","index.js"]',
].join('\n');

describe('needsNetwork', () => {
  it('a Dockerfile of COPY/ENV/CMD steps FROM the base image needs none', () => {
    expect(needsNetwork(generatedNode, BASE)).toBe(false);
    expect(needsNetwork(`FROM docker.io/${BASE}\nCOPY . .\n`, BASE)).toBe(false);
    expect(needsNetwork(`from ${BASE} AS Build\nFROM build\nCOPY --from=build /a /b\n`, BASE)).toBe(false);
  });

  it('RUN, ADD and ONBUILD in any spelling or place need it', () => {
    for (const text of [
      `${generatedNode}\nRUN npm ci`,
      `${generatedNode}\nrun true`,
      `FROM ${BASE}\nADD https://example.com/x /x`,
      `FROM ${BASE}\nadd a.tgz /`,
      `FROM ${BASE}\nONBUILD COPY . .`,
      `FROM ${BASE}\nCOPY a \\\nb\nRUN x`,
      `FROM ${BASE}\nHEALTHCHECK CMD true\n  RUN  \\\n true`,
      `FROM ${BASE}\nRUN<<EOF\ncurl x\nEOF`,
    ])
      expect(needsNetwork(text, BASE), text).toBe(true);
  });

  it('a FROM of anything but the base image or an earlier stage needs it (its triggers)', () => {
    for (const text of [
      'FROM debian:12\nCOPY . .',
      `FROM \${IMAGE}\nCOPY . .`,
      `FROM --platform=linux/amd64 other\nCOPY . .`,
      `FROM later\nFROM ${BASE} AS later`,
      `FROM \\\n other\nCOPY . .`,
      `# escape=\`\nFROM \`\n ${BASE}`,
      'COPY . .',
    ])
      expect(needsNetwork(text, BASE), text).toBe(true);
  });

  it('an unknown base image name (not seeded yet) counts as needing it', () => {
    expect(needsNetwork(generatedNode, '')).toBe(true);
  });
});
