import { createTestContext } from '../http/http-test-context.js';
import { LONG_CONVERSATION_ENV, longConversationSuite } from './long-conversation-suite.js';

longConversationSuite('PGlite', () => createTestContext(LONG_CONVERSATION_ENV));
