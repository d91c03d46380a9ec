import fc from 'fast-check';
import type { BaseRequest } from './route-bases.js';
import { toJsonText } from './nasty-values.js';
import { type FuzzRequest, BODYLESS, percentEncode, clip, jsonOf } from './fuzz-request-basics.js';
import { type Segment, segment, queryStep, applyQuery, describeQueryStep } from './fuzz-path-and-query.js';
import { type BodyStep, bodyStep, applyBody, describeBodyStep, type RawBody, rawBody } from './fuzz-bodies.js';

// The route fuzz suite takes every generator from here.
export type { FuzzRequest } from './fuzz-request-basics.js';
export { multipartRequests } from './fuzz-multipart-requests.js';
export { oddTextRequests } from './fuzz-odd-text-requests.js';

const JSON_CONTENT_TYPES = ['application/json', 'application/json; charset=utf-8', 'text/plain', 'application/x-www-form-urlencoded', 'APPLICATION/JSON', ''];

type BodyChoice = { kind: 'base' } | { kind: 'none' } | { kind: 'steps'; steps: BodyStep[]; contentType: string } | { kind: 'raw'; raw: RawBody };

/**
 * Requests to one route, each the base request with one to three parts broken: path
 * parameters, query string, body (field by field, or the whole of it).
 */
export function fuzzRequests(method: string, pattern: string, base: BaseRequest): fc.Arbitrary<FuzzRequest> {
  const paramNames = Object.keys(base.params);
  const params: fc.Arbitrary<Partial<Record<string, Segment>> | null> =
    paramNames.length === 0
      ? fc.constant(null)
      : fc.option(fc.record(Object.fromEntries(paramNames.map((n) => [n, segment])), { requiredKeys: [] }), { freq: 2 });
  const query = fc.option(fc.array(queryStep(base.query.map(([n]) => n)), { minLength: 1, maxLength: 3 }), { freq: 2 });
  const baseText = base.body ? JSON.stringify(base.body) : '{}';
  const bodies: fc.Arbitrary<BodyChoice>[] = [];
  if (!BODYLESS.has(method)) {
    bodies.push(rawBody(baseText).map((raw): BodyChoice => ({ kind: 'raw', raw })));
    if (base.body) {
      bodies.push(
        fc
          .record({ steps: fc.array(bodyStep(base.body), { minLength: 1, maxLength: 3 }), contentType: fc.constantFrom(...JSON_CONTENT_TYPES) })
          .map((b): BodyChoice => ({ kind: 'steps', ...b })),
        fc.constant<BodyChoice>({ kind: 'none' }),
      );
    }
  }
  const body: fc.Arbitrary<BodyChoice> =
    bodies.length === 0
      ? fc.constant({ kind: 'base' })
      : fc.oneof({ weight: 1, arbitrary: fc.constant<BodyChoice>({ kind: 'base' }) }, { weight: 4, arbitrary: fc.oneof(...bodies) });

  return fc
    .record({ params, query, body })
    .filter((r) => r.params !== null || r.query !== null || r.body.kind !== 'base')
    .map(({ params: p, query: q, body: b }) => {
      const mutations: string[] = [];
      const path = pattern.replace(/:(\w+)(\{[^}]*\})?\??/g, (_, name: string) => {
        const mutated = p?.[name];
        if (mutated) {
          mutations.push(`param ${name}=${clip(mutated.text)}`);
          return mutated.encoded;
        }
        return percentEncode(base.params[name] ?? 'x');
      });
      const qs = applyQuery(base.query, q ?? []);
      for (const step of q ?? []) mutations.push(describeQueryStep(step));
      const request: FuzzRequest = { method, url: qs ? `${path}?${qs}` : path, headers: {}, mutations };
      if (b.kind === 'base' && base.body && !BODYLESS.has(method)) {
        request.body = baseText;
        request.headers['content-type'] = 'application/json';
        request.json = jsonOf(baseText);
      } else if (b.kind === 'steps' && base.body) {
        const text = toJsonText(applyBody(base.body, b.steps));
        request.body = text;
        if (b.contentType) request.headers['content-type'] = b.contentType;
        request.json = jsonOf(text);
        mutations.push(...b.steps.map(describeBodyStep), ...(b.contentType === 'application/json' ? [] : [`content-type ${JSON.stringify(b.contentType)}`]));
      } else if (b.kind === 'raw') {
        request.body = b.raw.body;
        if (b.raw.contentType) request.headers['content-type'] = b.raw.contentType;
        const isJson = (b.raw.contentType ?? '').startsWith('application/json') && typeof b.raw.body === 'string';
        request.json = isJson ? jsonOf(b.raw.body as string) : { ok: false };
        mutations.push(`body ${b.raw.label}`);
      } else if (b.kind === 'none') {
        mutations.push('no body');
      }
      return Object.assign(request, { [fc.toStringMethod]: () => `${method} ${clip(request.url, 200)} [${mutations.join('; ')}]` });
    });
}
