import { z } from 'zod';
import { userIdSchema } from './memory-schemas.js';

/** The user routes' inputs and replies. */

export const userIdParams = z.strictObject({ userId: userIdSchema.meta({ description: 'The user, as memories, conversations and chats name it.' }) });

const count = z.number().int().min(0);

export const erasedCountsSchema = z
  .object({
    memories: count,
    conversations: count,
    messages: count,
    turns: count.meta({ description: 'Rows of the turns corpus (past turns as episodic recall).' }),
    historyEvents: count.meta({ description: "Events of the user's memories' history." }),
    runs: count,
    jobs: count,
    attachments: count.meta({ description: "Images of the user's conversations no other conversation keeps, and those the user sent that none keeps." }),
    blocks: count.meta({ description: "The user's working-memory blocks (`/v1/blocks`), of every agent and their own." }),
    blockEvents: count.meta({ description: "Events of those blocks' history." }),
  })
  .meta({ id: 'ErasedCounts', description: 'What this call erased, by kind; an earlier, interrupted call counts what it erased in its own audit entry.' });

export const userErasureReplySchema = z.object({ erased: erasedCountsSchema }).meta({ id: 'UserErasure' });
