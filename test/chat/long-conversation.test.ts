import { describeOnDrivers } from '../support/database-drivers.js';
import { longConversationSuite } from './long-conversation-suite.js';

describeOnDrivers('chat', longConversationSuite);
