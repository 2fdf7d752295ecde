/**
 * The ids of the message blocks a rotation folded, as the history stores them: block ids are
 * UUIDs, so a list of them is kept as their 16 bytes each in base64 (22 characters an id, not the
 * 39 of a JSON list); a list with any other id is kept as JSON.
 */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const PACKED = 'b64:';

export function packIds(ids: readonly string[]): string {
  if (!ids.length || !ids.every((id) => UUID.test(id))) return JSON.stringify(ids);
  return PACKED + Buffer.from(ids.map((id) => id.replace(/-/g, '')).join(''), 'hex').toString('base64');
}

export function unpackIds(stored: string): string[] {
  if (!stored.startsWith(PACKED)) return JSON.parse(stored) as string[];
  const hex = Buffer.from(stored.slice(PACKED.length), 'base64').toString('hex');
  const out: string[] = [];
  for (let i = 0; i < hex.length; i += 32) {
    const h = hex.slice(i, i + 32);
    out.push(`${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`);
  }
  return out;
}
