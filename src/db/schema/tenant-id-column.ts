import { text } from 'drizzle-orm/pg-core';

/**
 * The tenant owning a row (an API key's tenant; `default` without keys). Every store query
 * filters by it. The default is spelt out rather than read from src/tenancy: it is part of the
 * schema the migrations were generated from, which a change of that constant must not move.
 */
export const tenantIdColumn = () => text('tenant_id').notNull().default('default');
