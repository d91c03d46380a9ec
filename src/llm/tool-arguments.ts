/**
 * Models, especially small or local ones, emit almost-JSON tool arguments. Repairing the common
 * slips saves a round trip; anything beyond them goes back to the model as an error so it can
 * correct itself, rather than us guessing at its intent.
 */
export type ParsedArguments = { ok: true; value: Record<string, unknown>; repaired: boolean } | { ok: false; error: string };

export function parseToolArguments(raw: string): ParsedArguments {
  const trimmed = raw.trim();
  // Several models send "" for a tool without parameters.
  if (trimmed === '') return { ok: true, value: {}, repaired: false };
  const direct = tryParse(trimmed);
  if (direct.ok) return asObject(direct.value, false);
  const repaired = tryParse(repairJson(trimmed));
  if (repaired.ok) return asObject(repaired.value, true);
  return { ok: false, error: `Tool arguments are not valid JSON (${direct.error}). Send a single JSON object.` };
}

function asObject(value: unknown, repaired: boolean): ParsedArguments {
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    return { ok: true, value: value as Record<string, unknown>, repaired };
  }
  return { ok: false, error: 'Tool arguments must be a JSON object.' };
}

function tryParse(text: string): { ok: true; value: unknown } | { ok: false; error: string } {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (e) {
    return { ok: false, error: e instanceof Error ? e.message : String(e) };
  }
}

/** Fixes code fences, single-quoted strings, trailing commas and unclosed strings/brackets. */
export function repairJson(text: string): string {
  const fenced = /^```(?:json)?\s*([\s\S]*?)\s*(?:```)?$/i.exec(text);
  const src = fenced?.[1] ?? text;
  let out = '';
  const stack: string[] = [];
  let quote: '"' | "'" | null = null;
  const dropTrailingComma = () => {
    out = out.replace(/,\s*$/, '');
  };
  for (let i = 0; i < src.length; i++) {
    const ch = src[i]!;
    if (quote) {
      if (ch === '\\') {
        const next = src[i + 1];
        if (next === undefined) break;
        // \' is not a JSON escape; inside a (now double-quoted) string it is just a quote.
        out += quote === "'" && next === "'" ? "'" : ch + next;
        i++;
      } else if (ch === quote) {
        out += '"';
        quote = null;
      } else if (ch === '"') {
        out += '\\"';
      } else if (ch === '\n') {
        out += '\\n';
      } else {
        out += ch;
      }
      continue;
    }
    if (ch === '"' || ch === "'") {
      quote = ch;
      out += '"';
    } else if (ch === '{' || ch === '[') {
      stack.push(ch === '{' ? '}' : ']');
      out += ch;
    } else if (ch === '}' || ch === ']') {
      dropTrailingComma();
      stack.pop();
      out += ch;
    } else {
      out += ch;
    }
  }
  if (quote) out += '"';
  dropTrailingComma();
  // A value cut off after its key: `{"a": ` → `{"a": null`.
  if (/:\s*$/.test(out)) out += ' null';
  while (stack.length > 0) out += stack.pop();
  return out;
}

/**
 * A tool call's arguments as the client is shown them: as they were checked and run (repaired when
 * the model sent almost-JSON), else the raw text.
 */
export function toolArgumentsOf(raw: string): unknown {
  const parsed = parseToolArguments(raw);
  return parsed.ok ? parsed.value : raw;
}
