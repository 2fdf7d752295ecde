import { describe, expect, it } from 'vitest';
import { complete } from '../../src/ui/completion.js';

const targets = [
  { id: '0a1b2c3d-0000-4000-8000-000000000001', name: 'ada' },
  { id: '0a1b9999-0000-4000-8000-000000000002', name: 'adele' },
  { id: 'ffee0000-0000-4000-8000-000000000003', name: '' },
];

describe('Tab completion', () => {
  it('completes a slash command, with a space after it', () => {
    expect(complete('/he')).toEqual({ text: '/help ', candidates: [] });
    expect(complete('/sw')).toEqual({ text: '/switch ', candidates: [] });
    expect(complete('/e')).toEqual({ text: '/ex', candidates: ['/exit', '/export'] });
    expect(complete('/zz')).toEqual({ text: '/zz', candidates: [] });
    expect(complete('hello')).toEqual({ text: 'hello', candidates: [] });
  });

  it('completes /switch to a name or a short id', () => {
    expect(complete('/switch ade', targets).text).toBe('/switch adele');
    expect(complete('/switch ad', targets)).toEqual({ text: '/switch ad', candidates: ['ada', 'adele'] });
    expect(complete('/switch ff', targets).text).toBe('/switch ffee0000');
    expect(complete('/switch 0a1b', targets)).toEqual({ text: '/switch 0a1b', candidates: ['0a1b2c3d', '0a1b9999'] });
    expect(complete('/switch 0a1b2', targets).text).toBe('/switch 0a1b2c3d');
  });
});
