import { z } from 'zod';

/** The time window a search read from its query, in its reply. */
export const timeWindowSchema = z
  .object({
    from: z.iso.datetime(),
    to: z.iso.datetime(),
    text: z.string().meta({ description: 'The words of the query it was read from.' }),
  })
  .nullable()
  .meta({
    id: 'TimeWindow',
    description:
      'The past span of time the query names, read against `asOf`: what was said inside it ranks higher. Null when the query names none ' +
      '(or only the present or future, or words no date could be read from).',
  });
