import { describe, expect, it } from 'vitest';
import { toolOutput } from '../../src/ui/tool-loop.js';

describe('toolOutput: a tool answer as the object a tool result carries', () => {
  it('keeps a JSON object, wraps any other JSON value as { value }, and plain text as { text }', () => {
    expect(toolOutput('{"hp":3}\n')).toEqual({ hp: 3 });
    expect(toolOutput('6')).toEqual({ value: 6 });
    expect(toolOutput('"six"')).toEqual({ value: 'six' });
    expect(toolOutput('[1,2]')).toEqual({ value: [1, 2] });
    expect(toolOutput('null')).toEqual({ value: null });
    expect(toolOutput('  too dark\n')).toEqual({ text: 'too dark' });
    expect(toolOutput('')).toEqual({ text: '' });
  });
});
