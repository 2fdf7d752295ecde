/**
 * The console talks only to the server it came from, with the key held in sessionStorage (gone when
 * the tab closes); the key travels only in the Authorization header, never in a URL.
 */
const KEY = 'mgpt.console.key';

export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

export const session = {
  key: (): string | null => sessionStorage.getItem(KEY),
  set: (key: string) => sessionStorage.setItem(KEY, key),
  clear: () => sessionStorage.removeItem(KEY),
};

let onSignedOut: () => void = () => {};
export function whenSignedOut(f: () => void): void {
  onSignedOut = f;
}

function headers(body?: unknown): Record<string, string> {
  const h: Record<string, string> = { Authorization: `Bearer ${session.key() ?? ''}` };
  if (body !== undefined) h['Content-Type'] = 'application/json';
  return h;
}

/** The message of any of the API's three error shapes. */
function errorOf(status: number, body: unknown): ApiError {
  const b = body as { error?: unknown; detail?: unknown } | null;
  const e = b?.error;
  const msg = typeof e === 'string' ? e : typeof (e as { message?: unknown })?.message === 'string' ? (e as { message: string }).message : typeof b?.detail === 'string' ? b.detail : `HTTP ${status}`;
  return new ApiError(msg, status);
}

async function check(res: Response): Promise<Response> {
  if (res.ok) return res;
  const body = await res.json().catch(() => null);
  if (res.status === 401) {
    session.clear();
    onSignedOut();
  }
  throw errorOf(res.status, body);
}

export async function api<T>(path: string, init: { method?: string; body?: unknown } = {}): Promise<T> {
  const res = await check(
    await fetch(path, { method: init.method ?? 'GET', headers: headers(init.body), body: init.body === undefined ? undefined : JSON.stringify(init.body) }),
  );
  // 204 (a memory block removed) has no body.
  return (res.status === 204 ? undefined : await res.json()) as T;
}

/** The `data:` frames of a server-sent event stream, parsed, until `[DONE]`. */
export async function* streamPost(path: string, body: unknown, signal?: AbortSignal): AsyncGenerator<Record<string, any>> {
  const res = await check(await fetch(path, { method: 'POST', headers: headers(body), body: JSON.stringify(body), signal }));
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buf = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buf += value;
    let cut: number;
    while ((cut = buf.indexOf('\n\n')) >= 0) {
      const frame = buf.slice(0, cut);
      buf = buf.slice(cut + 2);
      for (const line of frame.split('\n')) {
        if (!line.startsWith('data:')) continue;
        const data = line.slice(5).trim();
        if (data === '[DONE]') return;
        const obj = JSON.parse(data);
        if (obj.error) throw new ApiError(obj.error.message ?? 'the stream failed', 500);
        yield obj;
      }
    }
  }
}

/** Who the key is (GET /v1/whoami), asked once per sign-in. */
export interface Whoami {
  id: string;
  account: string;
  user: string;
  scopes: string[];
}
let me: Promise<Whoami> | undefined;
export function whoami(): Promise<Whoami> {
  me ??= api<Whoami>('/v1/whoami').catch((err) => {
    me = undefined;
    throw err;
  });
  return me;
}
export function forgetWhoami(): void {
  me = undefined;
}
