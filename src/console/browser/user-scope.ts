const USER_STORAGE = 'memrag.userId';

/**
 * The user the console acts as, from its header's User field: undefined for none, where writes
 * and chats are the agent's shared ones. Kept in localStorage rather than the tab's session, as it
 * names no secret and a reload or a new tab should stay with the same person.
 */
export function storedUserId(): string | undefined {
  return localStorage.getItem(USER_STORAGE) || undefined;
}

export function storeUserId(userId: string | undefined): void {
  if (userId) localStorage.setItem(USER_STORAGE, userId);
  else localStorage.removeItem(USER_STORAGE);
}

/**
 * The query of a read as one user: theirs and the agent's shared memories, as their chat recalls
 * them. Without a user, the API answers with every user's memories, each row naming its user.
 */
export function readScope(userId: string | undefined): { userId?: string; includeShared?: boolean } {
  return userId ? { userId, includeShared: true } : {};
}

/** The query that addresses one memory where it lives: under its own user, or shared. */
export function memoryScope(memory: { userId: string | null }): { userId?: string } {
  return memory.userId === null ? {} : { userId: memory.userId };
}

/** Whose a memory or conversation is, as a table cell says it. */
export function ownerLabel(userId: string | null): string {
  return userId ?? 'shared';
}
