import { type ToolSet, generateText, stepCountIs } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { type CallOptions, promptText, textResult, toolCallResult } from './listening-memrag.js';

/**
 * Runs `generateText` with a mock model that calls the tools of `calls` in turn, one per step,
 * then answers with the last tool message it was given. Resolves to the result and the prompts.
 */
export async function runTools(tools: ToolSet, calls: [string, unknown][]) {
  const prompts: CallOptions['prompt'][] = [];
  const model = new MockLanguageModelV3({
    doGenerate: async (options) => {
      prompts.push(options.prompt);
      const next = calls[prompts.length - 1];
      if (next) return toolCallResult(next[0], next[1], `call-${prompts.length}`);
      const last = options.prompt.at(-1);
      return textResult(`I found: ${last ? promptText([last], 'tool') : 'nothing'}`);
    },
  });
  const result = await generateText({ model, tools, stopWhen: stepCountIs(calls.length + 1), prompt: 'Help me, please.' });
  return { result, prompts };
}

type Result = Awaited<ReturnType<typeof runTools>>['result'];

/** Each step's tool outcome, in order: its output, or `{ error }` with the error the tool threw. */
export function outcomes(result: Result): any[] {
  return result.steps.flatMap((step) =>
    step.content.flatMap((part) => (part.type === 'tool-result' ? [part.output] : part.type === 'tool-error' ? [{ error: part.error }] : [])),
  );
}
