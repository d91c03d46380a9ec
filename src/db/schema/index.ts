/**
 * Every table of the database, as drizzle-kit generates migrations from them and the database
 * handle types its queries with them. Only tables are exported here: the column helpers and the
 * BM25 table factory stay behind their own modules.
 */
export * from './agents.js';
export * from './api-keys.js';
export * from './attachments.js';
export * from './audit-log.js';
export * from './blocks.js';
export * from './conversations.js';
export * from './documents.js';
export * from './jobs.js';
export * from './memories.js';
export * from './memory-history.js';
export * from './runs.js';
export * from './turns.js';
export * from './vector-filter-stats.js';
export * from './vector-spaces.js';
export * from './workflows.js';
