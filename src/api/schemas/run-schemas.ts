import { z } from 'zod';
import { storable } from '../../text/storable-string.js';
import { type ImageLimits, contentPartsSchema } from './content-parts-schemas.js';
import { CHAT_LIMITS } from './chat-schemas.js';

export const RUN_LIMITS = {
  answersMax: 128,
  outputMaxChars: 200_000,
  reasonMaxChars: 2_000,
} as const;

export const runIdParams = z.strictObject({ runId: z.uuid() });

/** `GET /v1/runs/:id`'s query: the model's reasoning is shown only to a reader who asks for it. */
export const getRunQuery = z.strictObject({
  includeReasoning: z
    .enum(['true', 'false'])
    .transform((v) => v === 'true')
    .pipe(z.boolean())
    .optional()
    .meta({ description: "`true`: the run's `reasoning` too (the model's, kept apart from the answer); absent otherwise." }),
});

const toolCallId = z.string().min(1).max(200);
const answerRunId = z
  .string()
  .min(1)
  .max(200)
  .optional()
  .meta({ description: "The run the call is for (its `runId` in the pause): required where a lead's and its children's calls share an id." });
const stream = z.boolean().optional().meta({ description: 'Stream the rest of the turn as Server-Sent Events, as `POST /v1/chat` does.' });

// Stored in the conversation (text) and, while the run waits again, in its state (jsonb).
const outputText = storable(z.string().max(RUN_LIMITS.outputMaxChars));

export const toolOutputsBody = z.strictObject({
  toolOutputs: z
    .array(
      z.strictObject({
        toolCallId,
        runId: answerRunId,
        output: outputText.meta({
          description: 'What the tool returned, as the model should read it (JSON text, or plain text).',
        }),
      }),
    )
    .min(1)
    .max(RUN_LIMITS.answersMax)
    .meta({ description: 'One output for every call in `requiredAction.toolCalls`.' }),
  stream,
});

/** `POST /v1/runs/{runId}/tool-outputs` over HTTP: an output may be content parts, its images sent to the model after the results. */
export function toolOutputsBodyWithImages(imageLimits: ImageLimits) {
  return toolOutputsBody.extend({
    toolOutputs: z
      .array(
        z.strictObject({
          toolCallId,
          runId: answerRunId,
          output: z.union([outputText, contentPartsSchema(imageLimits, outputText, { requireText: false })]).meta({
            description:
              'What the tool returned, as the model should read it (JSON text, or plain text), or OpenAI content parts: text and ' +
              "`image_url` parts. A tool message holds text only, so the images go to the model in a user message after the turn's tool results.",
          }),
        }),
      )
      .min(1)
      .max(RUN_LIMITS.answersMax)
      .meta({ description: 'One output for every call in `requiredAction.toolCalls`.' }),
  });
}

export const runMessageBody = z.strictObject({
  message: storable(z.string().max(CHAT_LIMITS.messageMaxChars))
    .refine((s) => s.trim() !== '', 'must not be blank')
    .meta({ description: 'Sent to the model as a user message.' }),
  mode: z.enum(['steer', 'follow_up']).meta({
    description:
      '`steer`: joins the running turn before its next model call (after the tool calls in flight). `follow_up`: starts the next turn of the ' +
      'conversation, as a run of its own, once this turn completes.',
  }),
});

export const runMessageReply = z
  .object({
    runId: z.uuid(),
    mode: z.enum(['steer', 'follow_up']),
    followUp: z
      .object({ runId: z.uuid(), message: z.string() })
      .optional()
      .meta({ description: 'With `follow_up`: the run the message will start; it exists once it starts (read it then with `GET /v1/runs/{runId}`).' }),
  })
  .meta({ id: 'RunMessageReceipt' });

export const resumeBody = z.strictObject({ stream });

export const approvalsBody = z.strictObject({
  decisions: z
    .array(
      z.strictObject({
        toolCallId,
        runId: answerRunId,
        approve: z.boolean(),
        reason: storable(z.string().max(RUN_LIMITS.reasonMaxChars)).optional().meta({ description: 'Told to the model with a denial, so that it can adapt.' }),
      }),
    )
    .min(1)
    .max(RUN_LIMITS.answersMax)
    .meta({ description: 'One decision for every call in `approvals`.' }),
  stream,
});
