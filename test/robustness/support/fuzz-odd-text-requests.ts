import fc from 'fast-check';
import type { BaseRequest } from './route-bases.js';
import { oddValidString } from './nasty-values.js';
import { type FuzzRequest, BODYLESS, percentEncode, clip, jsonOf } from './fuzz-request-basics.js';

/** Paths to the base body's strings (fields and list items): where odd text can go. */
function stringPathsOf(value: unknown, prefix: (string | number)[] = []): (string | number)[][] {
  if (typeof value === 'string') return [prefix];
  if (typeof value !== 'object' || value === null) return [];
  const entries: [string | number, unknown][] = Array.isArray(value) ? value.map((v, i) => [i, v]) : Object.entries(value);
  return entries.flatMap(([k, v]) => stringPathsOf(v, [...prefix, k]));
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Requests with odd text that the schemas may well accept (RTL overrides, zero-width and astral
 * characters, SQL, combining marks) in the base request's strings: body fields, query values
 * and path parameters other than ids. These reach the stores, their SQL and their indexes.
 */
export function oddTextRequests(method: string, pattern: string, base: BaseRequest): fc.Arbitrary<FuzzRequest> | undefined {
  const bodyPaths = base.body && !BODYLESS.has(method) ? stringPathsOf(base.body) : [];
  const textParams = Object.keys(base.params).filter((n) => !UUID.test(base.params[n]!));
  const queryNames = base.query.map(([n]) => n);
  const slots = [
    ...bodyPaths.map((p) => ({ where: 'body' as const, path: p })),
    ...textParams.map((n) => ({ where: 'param' as const, path: [n] })),
    ...queryNames.map((n) => ({ where: 'query' as const, path: [n] })),
  ];
  if (slots.length === 0) return undefined;
  return fc.array(fc.tuple(fc.constantFrom(...slots), oddValidString), { minLength: 1, maxLength: 4 }).map((changes) => {
    const body = base.body ? (JSON.parse(JSON.stringify(base.body)) as Record<string, unknown>) : undefined;
    const params = { ...base.params };
    const query = base.query.map(([n, v]) => [n, v] as [string, string]);
    for (const [slot, text] of changes) {
      if (slot.where === 'param') params[slot.path[0] as string] = text;
      else if (slot.where === 'query') {
        for (const pair of query) if (pair[0] === slot.path[0]) pair[1] = text;
      } else if (body) {
        let parent: unknown = body;
        for (const key of slot.path.slice(0, -1)) parent = (parent as Record<string | number, unknown>)[key];
        (parent as Record<string | number, unknown>)[slot.path.at(-1)!] = text;
      }
    }
    const mutations = changes.map(([slot, text]) => `${slot.where} ${slot.path.join('.')}=${clip(text)}`);
    const path = pattern.replace(/:(\w+)(\{[^}]*\})?\??/g, (_, name: string) => percentEncode(params[name] ?? 'x'));
    const qs = query.map(([n, v]) => `${percentEncode(n)}=${percentEncode(v)}`).join('&');
    const request: FuzzRequest = { method, url: qs ? `${path}?${qs}` : path, headers: {}, mutations };
    if (body) {
      const text = JSON.stringify(body);
      Object.assign(request, { body: text, headers: { 'content-type': 'application/json' }, json: jsonOf(text) });
    }
    return Object.assign(request, { [fc.toStringMethod]: () => `${method} ${clip(request.url, 200)} [${mutations.join('; ')}]` });
  });
}
