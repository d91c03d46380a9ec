import { z } from 'zod';
import { storable } from '../../text/storable-string.js';

export const RUN_LIMITS = {
  answersMax: 128,
  outputMaxChars: 200_000,
  reasonMaxChars: 2_000,
} as const;

export const runIdParams = z.strictObject({ runId: z.uuid() });

const toolCallId = z.string().min(1).max(200);
const stream = z.boolean().optional().meta({ description: 'Stream the rest of the turn as Server-Sent Events, as `POST /v1/chat` does.' });

export const toolOutputsBody = z.strictObject({
  toolOutputs: z
    .array(
      z.strictObject({
        toolCallId,
        // Stored in the conversation (text) and, while the run waits again, in its state (jsonb).
        output: storable(z.string().max(RUN_LIMITS.outputMaxChars)).meta({
          description: 'What the tool returned, as the model should read it (JSON text, or plain text).',
        }),
      }),
    )
    .min(1)
    .max(RUN_LIMITS.answersMax)
    .meta({ description: 'One output for every call in `requiredAction.toolCalls`.' }),
  stream,
});

export const approvalsBody = z.strictObject({
  decisions: z
    .array(
      z.strictObject({
        toolCallId,
        approve: z.boolean(),
        reason: storable(z.string().max(RUN_LIMITS.reasonMaxChars)).optional().meta({ description: 'Told to the model with a denial, so that it can adapt.' }),
      }),
    )
    .min(1)
    .max(RUN_LIMITS.answersMax)
    .meta({ description: 'One decision for every call in `approvals`.' }),
  stream,
});
