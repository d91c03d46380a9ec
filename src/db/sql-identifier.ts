import { type SQL, sql } from 'drizzle-orm';

/** A SQL identifier (a table, column or index named at run time) in double quotes, its own quotes doubled. */
export const quoteIdentifier = (name: string): string => `"${name.replace(/"/g, '""')}"`;

/** `quoteIdentifier` written into a statement's text: DDL takes no bound parameters. */
export const ident = (name: string): SQL => sql.raw(quoteIdentifier(name));
