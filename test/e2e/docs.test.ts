import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

describe('docs/cli.md', () => {
  it('is generated from --help and up to date', async () => {
    const code = await new Promise<number>((resolve) =>
      execFile(process.execPath, ['scripts/cli-docs.mjs', '--check'], (err) => resolve(err ? ((err as any).code ?? 1) : 0)),
    );
    expect(code, 'run `npm run docs`').toBe(0);
  });

  it('gives every command a description and an example', () => {
    const sections = readFileSync('docs/cli.md', 'utf8').split(/^## /m).slice(1);
    expect(sections.length).toBeGreaterThan(20);
    for (const s of sections) {
      const name = s.split('\n')[0];
      expect(s, name).toMatch(/\nExamples:\n {2}\$ mgpt /);
      // name, blank, fence, Usage line, blank, then the description.
      expect(s.split('\n')[5]?.trim(), `${name} has a description`).toBeTruthy();
    }
  });
});
