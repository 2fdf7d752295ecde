import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { errorFromResponse } from '../../src/backends/remote/errors.js';
import {
  AuthError,
  BadRequestError,
  CancelledError,
  ConflictError,
  ContextOverflowError,
  ERROR_CODES,
  fromOtherBundle,
  isBusy,
  MgptError,
  NotFoundError,
  PaymentRequiredError,
  ProviderError,
} from '../../src/core/errors.js';
import { providerErrorClass } from '../../src/engine/events.js';
import { TimeoutError } from '../../src/providers/openai/http-post.js';

// Issue 34, item 5: errors carry a stable code, and nothing is recognised by its message's words.
const sys = (code: string, message = `${code}: raw`) => Object.assign(new Error(message), { code });

describe('error codes', () => {
  it('every class has its code, and a constructor may name a more precise one', () => {
    expect(new BadRequestError('x').code).toBe('bad_request');
    expect(new AuthError('x').code).toBe('unauthorized');
    expect(new NotFoundError('x').code).toBe('not_found');
    expect(new ConflictError('x').code).toBe('busy');
    expect(new ConflictError('x', { code: 'read_only' }).code).toBe('read_only');
    expect(new PaymentRequiredError('x', { balanceUsd: 0, billedUsd: 1, missingUsd: 1 }).code).toBe('payment_required');
    expect(new ProviderError('x').code).toBe('provider_error');
    expect(new ContextOverflowError('x').code).toBe('context_overflow');
    expect(new CancelledError().code).toBe('cancelled');
    expect(new MgptError('x').code).toBe('internal');
    expect(new Set(ERROR_CODES).size).toBe(ERROR_CODES.length);
  });

  it('isBusy goes by the code: a read-only entity or a taken name is not waited for, whatever the words', () => {
    expect(isBusy(new ConflictError('entity e is answering another message'))).toBe(true);
    expect(isBusy(new ConflictError('entity e is read-only', { code: 'read_only' }))).toBe(false);
    expect(isBusy(new ConflictError('an entity named "a" already exists', { code: 'already_exists' }))).toBe(false);
    // The words alone decide nothing.
    expect(isBusy(new ConflictError('this says read-only but is another writer'))).toBe(true);
    expect(isBusy(new BadRequestError('busy'))).toBe(false);
  });

  it("an error from another bundle keeps its code", () => {
    const other = Object.assign(new Error('gone'), { status: 404, exitCode: 4, code: 'not_found' });
    expect(fromOtherBundle(other)).toMatchObject({ code: 'not_found', status: 404, exitCode: 4 });
    const unknown = Object.assign(new Error('odd'), { status: 409, exitCode: 5, code: 'no_such_code' });
    expect((fromOtherBundle(unknown) as MgptError).code).toBe('internal');
  });
});

describe('provider failures, by status, code and type', () => {
  it('an answered status decides the class', () => {
    expect(new ProviderError('x', { upstreamStatus: 500 }).failure).toBe('http_5xx');
    expect(new ProviderError('x', { upstreamStatus: 429 }).failure).toBe('http_4xx');
    expect(new ProviderError('x', { upstreamStatus: 408 }).failure).toBe('timeout');
    expect(new ProviderError('x', { upstreamStatus: 504 }).failure).toBe('timeout');
  });

  it("otherwise the transport error's code, through its causes", () => {
    expect(new ProviderError('x', { cause: sys('ECONNREFUSED') }).failure).toBe('connection');
    expect(new ProviderError('x', { cause: sys('ECONNRESET') }).failure).toBe('connection');
    expect(new ProviderError('x', { cause: new TimeoutError('no data', 'ERR_BODY_TIMEOUT') }).failure).toBe('timeout');
    expect(new ProviderError('x', { cause: new Error('wrapped', { cause: sys('ETIMEDOUT') }) }).failure).toBe('timeout');
    expect(new ProviderError('x', { cause: sys('UND_ERR_SOCKET') }).failure).toBe('connection');
  });

  it('never by the words of a message', () => {
    const words = new ProviderError('provider answered 503: timed out; cannot reach it', { cause: new Error('timeout while connecting') });
    expect(words.failure).toBe('other');
    expect(providerErrorClass(words)).toBe('other');
    expect(providerErrorClass({ name: 'ProviderError', message: 'provider answered 500' })).toBe('other');
  });

  it('providerErrorClass labels context overflows and the failure a provider error carries', () => {
    expect(providerErrorClass(new ContextOverflowError('too long'))).toBe('context');
    expect(providerErrorClass(new ProviderError('x', { upstreamStatus: 502 }))).toBe('http_5xx');
    expect(providerErrorClass(new ProviderError('x', { failure: 'connection' }))).toBe('connection');
  });
});

describe("the remote backend's error factory reads the code mgpt serve sends in its header", () => {
  it("keeps a 409's code: read-only is not busy over the wire either", () => {
    const readOnly = errorFromResponse(409, { error: 'entity e is read-only' }, undefined, 'read_only');
    expect(readOnly).toBeInstanceOf(ConflictError);
    expect([readOnly.code, isBusy(readOnly)]).toEqual(['read_only', false]);
    // A server that sends no code (or one mgpt does not know): the class's own.
    expect(errorFromResponse(409, { error: 'busy' }).code).toBe('busy');
    expect(errorFromResponse(409, { error: 'x' }, undefined, 'teapot').code).toBe('busy');
  });

  it("a 402 from mgpt states the amounts; another server's does not say", () => {
    const details = { balanceUsd: 0, billedUsd: 1, missingUsd: 1 };
    expect((errorFromResponse(402, { error: 'insufficient', ...details }, undefined, 'payment_required') as PaymentRequiredError).detailed).toBe(true);
    expect((errorFromResponse(402, { error: 'insufficient', ...details }) as PaymentRequiredError).detailed).toBe(false);
  });

  it('an upstream 408, 429 or 5xx keeps its status for the class', () => {
    expect(errorFromResponse(408, { error: 'slow' })).toMatchObject({ failure: 'timeout', upstreamStatus: 408 });
    expect(errorFromResponse(429, { detail: 'slow down' })).toMatchObject({ failure: 'http_4xx', upstreamStatus: 429 });
    expect(errorFromResponse(503, { error: 'down' })).toMatchObject({ failure: 'http_5xx', upstreamStatus: 503 });
  });
});

describe('nothing in src/ classifies an error by its message', () => {
  const ROOT = fileURLToPath(new URL('../../src', import.meta.url));
  const files = (dir: string): string[] =>
    readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? files(join(dir, e.name)) : /\.tsx?$/.test(e.name) ? [join(dir, e.name)] : [],
    );
  // A test of a message's words: `/re/.test(err.message)`, `message.includes(...)`, `String(err)` matched.
  const BY_TEXT = [
    /\.(test|exec)\(\s*(\w+\.)*message\b/,
    /\.(test|exec)\(\s*String\(\s*(err|e|error)\b/,
    /\bmessage\s*\??\.\s*(includes|startsWith|endsWith|match|search|indexOf)\(/,
  ];
  // The edge where another program's answer is read: what it sends without a code, only its words say.
  const EDGE: Record<string, string> = {
    'providers/openai/context-overflow.ts': "vLLM and Ollama name an overflow only in words (llama-server's type and OpenAI's code are read first)",
    'store/postgres/pg-db.ts': "pg's socket errors (a connection closed under a query) carry no code",
  };

  it('finds no test of message text outside the edge that reads other programs', () => {
    const found: string[] = [];
    for (const file of files('.')) {
      if (file in EDGE) continue;
      readFileSync(join(ROOT, file), 'utf8').split('\n').forEach((line, i) => {
        if (BY_TEXT.some((re) => re.test(line))) found.push(`src/${file}:${i + 1}: ${line.trim()}`);
      });
    }
    expect(found, `classify by the error's class, code, HTTP status or driver code:\n${found.join('\n')}`).toEqual([]);
  });

  it('the edge files still need their exception', () => {
    for (const file of Object.keys(EDGE)) {
      const text = readFileSync(join(ROOT, file), 'utf8');
      expect(BY_TEXT.some((re) => re.test(text)), file).toBe(true);
    }
  });
});
