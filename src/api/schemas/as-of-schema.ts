import { z } from 'zod';

/** The moment a search is asked as of; turns and memories later than it are left out. */
export const asOfSchema = z.iso
  .datetime({ offset: true })
  .transform((text) => new Date(text))
  .meta({
    description:
      'The moment the question is asked (ISO 8601; default now): what was said after it is left out (memories are searched ' +
      'as they were then, in their wording of then), and a time the query names ' +
      '("two weeks ago", "in May", "recently") is read against it to favour what was said then (`timeWindow` in the reply).',
  });
