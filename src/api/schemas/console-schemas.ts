import { z } from 'zod';

/** What the console's page needs to know before its first API call. */
export const consoleServerReplySchema = z
  .object({
    apiKeys: z.boolean().meta({ description: 'Whether `/v1` wants `Authorization: Bearer <key>` now; false on a keyless loopback server.' }),
  })
  .meta({ id: 'ConsoleServerReply' });
