import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { errorReplyFor } from '../api/error-mapping.js';

/** A tool's answer: the same JSON the REST route would reply, as text, which every MCP client can show to its model. */
export function jsonResult(value: unknown): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(value) }] };
}

/**
 * A failure as a tool result rather than a JSON-RPC error: the model reads it and can correct its
 * call. The body is the REST API's error body (`{"error":{"code","message","details"}}`), mapped
 * by the same table, so internal errors stay `internal_error` here too instead of leaking their text.
 */
export function errorResult(err: unknown, onInternalError?: (err: unknown) => void): CallToolResult {
  const { status, body } = errorReplyFor(err);
  if (status === 500) onInternalError?.(err);
  return { content: [{ type: 'text', text: JSON.stringify(body) }], isError: true };
}
