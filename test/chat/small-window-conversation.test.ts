import { describeOnDrivers } from '../support/database-drivers.js';
import { smallWindowConversationSuite } from './small-window-conversation-suite.js';

describeOnDrivers('chat', smallWindowConversationSuite);
