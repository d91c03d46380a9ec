/**
 * A store as the application holds it: nothing can be read or written through it before a
 * tenant is named, so a route cannot forget the tenant (it would not compile). `forTenant`
 * returns a store whose every statement filters by that tenant.
 */
export interface TenantScoped<S> {
  forTenant(tenantId: string): S;
}

/**
 * Stores are closures over their options, so making one per request costs next to nothing and
 * nothing per tenant is kept (tenants come and go with their API keys).
 */
export function tenantScoped<S>(create: (tenantId: string) => S): TenantScoped<S> {
  return { forTenant: create };
}
