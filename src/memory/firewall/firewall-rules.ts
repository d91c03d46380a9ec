import type { QuarantineReason } from '../quarantine-reasons.js';

/**
 * The firewall's rules: what makes a memory's text read as an instruction to an assistant rather
 * than a fact about the user or the world. Each rule names its reason; a text may trip several.
 */

const OVERRIDE = [
  /\b(ignore|disregard|forget|override|bypass|skip|drop|abandon|discard)\b[^.!?\n]{0,40}\b(previous|prior|above|earlier|preceding|original|all|any|your|system|safety|existing|initial)\b[^.!?\n]{0,30}\b(instructions?|prompts?|rules|guidelines|directives|constraints|programming|guardrails|polic(y|ies)|messages?|context|restrictions)\b/i,
  /\b(new|updated|real|actual|revised)\s+(system\s+)?(instructions?|rules|directives)\s*(are|is|:|follow)/i,
  /\byou\s+are\s+(now|no\s+longer)\b/i,
  /\b(act|behave|respond)\s+as\s+(if\s+you\s+(are|were)|an?\s+(unrestricted|unfiltered|jailbroken|evil))/i,
  /\b(developer|god|jailbreak|dan|unrestricted|debug)\s+mode\b/i,
  /\b(reveal|print|show|output|repeat|leak|disclose)\b[^.!?\n]{0,30}\b(system\s+prompt|hidden\s+instructions|initial\s+instructions|your\s+instructions|your\s+prompt)\b/i,
  /\bdo\s+anything\s+now\b/i,
  // The assistant's own configuration is no fact about a user.
  /\b((your|its|the\s+assistant'?s|this\s+assistant'?s)\s+((new|full|hidden|original|initial|real|entire|whole)\s+)?system\s+prompt|your\s+(new\s+|original\s+|initial\s+)?(instructions|guidelines|rules|programming|directives))\b/i,
  // Orders kept from the user, or a memory that is to be denied.
  /\b(keep|hold)\s+(this|these|the)\s+(instructions?|rules?|orders?|memory|note)\s+(a\s+)?(secret|hidden|confidential|private)\b/i,
  /\byour\s+(usual|normal|earlier|previous|original|initial)\s+(rules|guidelines|instructions|restrictions|setup|guidance)\s+(don'?t|do\s+not|no\s+longer)\s+apply\b/i,
  /\b(your|the)\s+(earlier|previous|original|initial|usual)\s+(setup|guidance|configuration|instructions|rules)\b[^.!?\n]{0,20}\b(is|are)\s+(now\s+)?(obsolete|void|cancell?ed|outdated)\b/i,
  /\b(imagine|suppose|pretend)\b[^.!?\n]{0,30}\byou\s+(have|had)\s+no\s+(rules|restrictions|limits|guidelines|filters)\b/i,
  /\b(from\s+now\s+on|from\s+this\s+moment|from\s+this\s+point\s+on|henceforth),?\s+you\s+(are|will\s+be|act)\b/i,
  /\bfollow\s+(the\s+)?(instructions|directions|orders)\s+(at|in|on|from)\s+(the\s+|this\s+|that\s+)?(\w+\s+)?(link|url|page|site|address|file)\b/i,
  /\bpretend\s+(that\s+)?(you|there)\s+(are|have|is)\s+no\s+(rules|restrictions|limits|guidelines)/i,
  /\b(reveal|print|show|output|repeat|leak|disclose|display|dump|recite)\b[^.!?\n]{0,30}\b(developer\s+prompt|hidden\s+prompt|initial\s+prompt|your\s+(configuration|config|setup)|configuration\s+text|everything\s+(written\s+)?above|the\s+text\s+above|above\s+this)\b/i,
  /\b(real|actual|true)\s+(instructions?|rules|orders)\s+(start|begin|are\s+below|follow)/i,
  // The conversation's earlier rules declared void.
  /\b(everything|all|anything)\s+(above|before\s+this|prior|earlier)\b[^.!?\n]{0,20}\b(is|was|are|were)\s+(now\s+)?(obsolete|void|cancelled|canceled|invalid|irrelevant|a\s+test|fake)\b/i,
  /\b(earlier|previous|prior|above|original)\s+(instructions?|rules|prompts?|guidelines)\s+(were|was|are|is)\s+(only\s+|just\s+|merely\s+)?(a\s+test|fake|void|obsolete|cancelled|canceled|wrong)\b/i,
  /\b(rules|instructions|guidelines|prompt)\s+(you\s+(were|have\s+been)\s+given|given\s+to\s+you)\b[^.!?\n]{0,30}\b(no\s+longer\s+apply|(are|is)\s+(now\s+)?(void|obsolete|cancell?ed|suspended))/i,
  /\b(your|previous|prior|earlier|original|system)\s+(rules|instructions|guidelines)\s+(no\s+longer\s+apply|(are|is)\s+(now\s+)?(void|obsolete|cancell?ed|suspended))/i,
  // A model's identity or purpose rewritten.
  /\byour\s+(true|real|actual|new|secret|hidden|sole)\s+(identity|purpose|name|role|self|persona|mission|objective|goal|job)\b/i,
  /\byour\s+(priority|purpose|mission)\s+(above\s+all|is\s+to|now\s+is)\b/i,
  /\b(unfiltered|uncensored|unrestricted|jailbroken|unaligned)\s+(model|ai|assistant|mode|version|persona|chatbot)\b/i,
  /\bnever\s+refuses?\s+(anything|any\s+requests?|requests)\b/i,
  // Safety, confirmations and warnings switched off.
  /\b(safety|content|moderation)\s+(guidelines|filters?|filtering|rules|policies|restrictions|checks)\b[^.!?\n]{0,30}\b(suspended|disabled|lifted|off|removed|waived|no\s+longer\s+apply)\b/i,
  /\b(switch|turn|shut)\s+off\s+(the\s+|all\s+|any\s+|your\s+)?((content|safety)\s+(filter\w*|checks?|settings)|moderation|guardrails)\b/i,
  /\b(leave\s+out|omit|skip|suppress|drop|remove|never\s+give|stop\s+giving)\s+(any|all|the|every)?\s*(safety\s+)?(warnings?|disclaimers?|cautions?)\b/i,
  /\b(never|not|no\s+longer)\s+(to\s+)?(warn|caution|alert)\s+(users?|anyone|people|the\s+user)\s+(about|of|to|when)\b/i,
  /\bpre-?approved\s+(every|all|any)\b/i,
  /\b(no\s+longer|not|never|stop|without)\b[^.!?\n]{0,30}\b(confirmation|confirming|approval|permission)\b[^.!?\n]{0,40}\b(payments?|money|transfers?|purchases?|e-?mails|orders?|bookings?|sends|moves)\b/i,
  /\b(confirmations?|confirmation\s+prompts?|verifications?|approvals?)\s+(should|must|can|will|are\s+to)\s+be\s+(skipped|bypassed|disabled|removed|ignored)\b/i,
  // Memory claiming the authority of instructions.
  /\b(memor(y|ies)|this\s+note|notes?\s+like\s+this|stored\s+(text|notes?|facts?))\b[^.!?\n]{0,40}\b(counts?\s+as\s+an?\s+(order|command|instruction)|(takes?|have|has)\s+(priority|precedence)\s+over\s+(the\s+user|your|any|all|instructions|the\s+system)|(overrides?|supersedes?)\s+(the\s+user|your|any|all|instructions|the\s+system)|must\s+be\s+obeyed)\b/i,
  /\bobey\s+(this|the|these)\s+(memory|memories|note|notes|text)\b/i,
  // A secret asked for in a disguise.
  /\b(password|passcode|secret(\s+key)?|api\s+key|system\s+prompt)\b[^\n]{0,60}\b(backwards|reversed|in\s+reverse|first\s+letters|acrostic|one\s+letter\s+at\s+a\s+time|you\s+are\s+protecting)\b/i,
  /\b(backwards|reversed|first\s+letters|acrostic)\b[^.!?\n]{0,60}\b(password|passcode|secret|api\s+key)\b/i,
  // The same orders in the other languages people write memories in.
  /\b(oublie|oubliez|ignorez)\b[^.!?\n]{0,30}\b(règles|regles|instructions|consignes)\b/i,
  /\b(vergiss|vergessen\s+sie|ignoriere|ignorieren\s+sie)\b[^.!?\n]{0,40}\b(alles|anweisungen|regeln|vorgaben|einstellungen|datenschutz\w*)\b/i,
  /\bignore\s+(as|os)\s+(instruções|instrucoes|regras|orientações)\b/i,
  /\b(olvida|olvide|ignora)\b[^.!?\n]{0,30}\b(instrucciones|reglas|indicaciones)\b/i,
  /\b(dimentica|ignora)\b[^.!?\n]{0,30}\b(istruzioni|regole)\b/i,
  /\b(esqueça|esqueca)\b[^.!?\n]{0,30}\b(instruções|instrucoes|regras)\b/i,
  /\b(versteckten?\s+anweisungen|instructions\s+cach[ée]es|instrucciones\s+ocultas|istruzioni\s+nascoste|prompt\s+(du\s+)?syst[èe]me|systemprompt)\b/i,
];

/** Overrides that a sentence about the user may say of someone else ("her boss's orders must be obeyed"). */
const OVERRIDE_UNLESS_ABOUT_USER = [
  /\bdeny\s+(having|that\s+(it|this|you)|any\s+such)\b/i,
  /\b(must\s+be\s+obeyed|carr(y|ies)\s+(the\s+user'?s\s+)?(full\s+)?authority)\b/i,
  /\blet'?s\s+(role-?play|pretend)\b/i,
  /\b(with|has|have)\s+no\s+(content\s+polic(y|ies)|content\s+filters?|guardrails|safety\s+(rules|guidelines|filters))\b/i,
];

/** Leetspeak read as letters (`1gn0r3` as `ignore`), once with 1 as i and once as l. */
function unleet(text: string, one: 'i' | 'l'): string {
  return text.replace(/\b(?=\w*[a-z])(?=\w*[013457@$])[\w@$]+\b/gi, (word) =>
    word.replace(/[013457@$]/g, (c) => ({ '0': 'o', '1': one, '3': 'e', '4': 'a', '5': 's', '7': 't', '@': 'a', $: 's' })[c] ?? c),
  );
}

/** A directive about conversations to come, or about how to treat others. */
const FUTURE =
  /\b((every|each|all|any)\s+(\w+\s+)?(answers?|repl(y|ies)|responses?|questions?|messages?|conversations?|chats?|sessions?)|from\s+now\s+on|going\s+forward|henceforth|in\s+(all\s+)?(future|every|each|subsequent)\s+(conversations?|chats?|sessions?|replies|responses|answers)|every\s+time|each\s+time|whenever|always|never|at\s+all\s+times|(all|every|each|any)\s+(future|later|subsequent|upcoming|new)|future\s+(chats?|sessions?|conversations?|turns?|replies|answers|requests?)|next\s+time|from\s+(this|that)\s+point\s+on|a\s+partir\s+de\s+(ahora|agora)|ab\s+jetzt|von\s+nun\s+an|d'ora\s+in\s+poi)\b|(^|\s)à\s+partir\s+de\s+maintenant\b/i;
/** Someone, unnamed: orders about them are orders only when they are standing ones. */
const SOMEONE = /\b(someone|somebody)\b/i;
const OTHERS =
  /\b(anyone|anybody|everyone|everybody|whoever|other\s+users?|all\s+users|any\s+users?|every\s+user|each\s+user|users\s+(who|asking)|people\s+(who|asking)|all\s+customers|any\s+customer)\b/i;
const TELL =
  /\b(tell|told|hear|say|answer|reply|respond|recommend|suggest|direct|redirect|send|point|inform|claim|insist|state|mention|link|refer|give|provide|reveal|repeat|hand)\b/i;
const HANDED = /\b(given|sent|shared|provided|revealed|handed|read\s+out)\b/i;
/** Whoever asks: what is handed to them is handed to an attacker too. */
const ON_REQUEST = /\b(any(one|body)?|every(one|body)|whoever|any\s+\w+|every\s+\w+)\s+(who|that)\s+(asks|requests|mentions|calls|emails|says|claims)\b/i;
/** Verbs of orders about what an assistant says or does: "tell", "add", "recommend", "end (every reply)". */
const ORDER_VERB = String.raw`(?:encode|open|close|finish|conclude|slip\s+in|sneak\s+in|work\s+in|weave\s+in|hint|imply|tell|say|give|answer|reply|respond|recommend|insist|claim|refuse|include|append|add|prepend|insert|send|forward|direct|redirect|mention|output|print|treat|assume|pretend|act|obey|follow|execute|write|describe|end|start|begin|put|place|render|display|show|replace|rank|approve|report|promote|steer|greet|ask|warn|cite|link|leave\s+out|omit|skip|avoid|stop|switch|translate|speak|sign|suggest|encourage|urge|push|prioriti[sz]e|favou?r|praise|use)`;
/** What may come before an order's verb: a label ("Update memory:"), its scope ("From now on,", "Whenever …,"), adverbs. */
const ORDER_LEAD =
  String.raw`^\s*(?:[^:.!?\n]{1,50}:\s*)?` +
  String.raw`(?:(?:please|now|so|and)\s+|(?:from\s+now\s+on|from\s+(?:this|that)\s+point\s+on|going\s+forward|henceforth)\s*[,:]?\s+|(?:in|for|on|during)\s+(?:all|every|each|any|future|later|subsequent|upcoming)\b[^,:]{0,40}[,:]\s*|(?:in|for|on|during)\s+(?:all|every|each|any)\s+(?:future\s+|later\s+|subsequent\s+|upcoming\s+)?(?:conversations?|chats?|sessions?|turns?|replies|answers)\s+(?![,:])|(?:regardless\s+of|no\s+matter)\b[^,]{0,80},\s*|(?:even\s+)?(?:whenever|when|if|each\s+time|every\s+time|any\s+time|next\s+time|before\s+answering|before\s+replying)\b[^,]{0,80},\s*|remember\s+to\s+|make\s+sure\s+(?:to|you)\s+|be\s+sure\s+to\s+){0,3}` +
  String.raw`(?:(?:only|ever|also|just|quietly|silently|secretly|subtly|then|instead|always|never)\s+){0,3}(?:(?:do\s+not|don'?t)\s+)?`;
/** A sentence that starts by giving an order: to an assistant, when it speaks of answers, users or times to come. */
const IMPERATIVE_START = new RegExp(`${ORDER_LEAD}${ORDER_VERB}\\b(?!-)`, 'i');
/** Orders no fact about a user is phrased as, whatever else the sentence says. */
/** An order to drop what the assistant was told: "Forget the task you were given", "Ignore whatever question follows". */
const DROP_ORDER = new RegExp(
  `${ORDER_LEAD}(?:ignore|disregard|forget|set\\s+aside|put\\s+aside|never\\s+mind)\\b[^.!?\\n]{0,30}\\b(?:task|question|summary|request|instructions?|rules?|guidelines?|guidance|setup|prompt|above|everything|anything|told|said|given|asked|follows|earlier|previous|prior)\\b`,
  'i',
);
const MODEL_ORDER = new RegExp(
  `${ORDER_LEAD}(?:obey\\b|pretend\\s+(?:to\\s+be|you|that)|role-?play\\b|impersonate\\b|act\\s+as\\s+(?:a|an|my|the|if)\\b|play\\s+(?:my|the\\s+role|a\\s+character|the\\s+part)\\b|stop\\s+following\\b|(?:call|invoke|trigger|run)\\s+(?:the\\s+)?[\\w.-]+\\s+(?:tool|function)\\b|(?:call|invoke|trigger|run|use)\\s+[a-z]+_[a-z_]+\\b|repeat\\s+(?:everything|all|the\\s+(?:text|words|above|secret|password))|(?:answer|reply|respond)\\s+(?:only\\s+|just\\s+)?(?:with\\b|by\\b|to\\s+the\\s+next|to\\s+every|["'\u201c]))`,
  'i',
);
/** Verbs that are orders once an assistant is addressed, though a person's to-do list uses them too. */
const ADDRESSED_ORDER_VERB =
  '(?:transfer|pay|move|wire|buy|purchase|book|order|delete|grant|share|save|store|remember|invite|email|call|open|visit|click|download|install|run)';
/** Written to an assistant that reads it: "Note to AI assistants:", "Assistant, …", "for any language model". */
const AI_READER = String.raw`(?:ai\s+(?:assistants?|reviewers?|agents?|models?|systems?)|assistants?|ai|language\s+models?|llms?|chatbots?)`;
const ADDRESSED_TO_AI = [
  new RegExp(String.raw`\b(?:note|message|instructions?|directive|reminder|memo)\s+(?:to|for)\s+(?:the\s+|any\s+|all\s+|every\s+)?${AI_READER}\b`, 'i'),
  new RegExp(String.raw`\b(?:for|to|attention)\s+(?:any|all|every|whatever)\s+${AI_READER}\b[^.:,\n]{0,40}[:,]`, 'i'),
  new RegExp(String.raw`\b${AI_READER}\s+directives?\b`, 'i'),
  new RegExp(String.raw`\b(?:message|note|instructions?|directive)\b[^.:\n]{0,30}\bto\s+(?:you,?\s+)?(?:the\s+)?${AI_READER}\b`, 'i'),
  /\b(nota|mensaje|instrucciones?)\s+(para|al)\s+(el\s+)?asistente\b|\bnote\s+(pour|à)\s+l'assistant\b|\bhinweis\s+(an|für)\s+den\s+assistenten\b|\bnota\s+(para|ao)\s+o\s+assistente\b|\bnota\s+per\s+l'assistente\b/i,
  new RegExp(
    String.raw`(?:^|[(\[|#*>:!,]\s*)(?:(?:dear|hey)\s+)?${AI_READER}\b[^.:,\n]{0,40}[:,]\s*(?:\w+\s+){0,3}(?:you|your|${ORDER_VERB}|${ADDRESSED_ORDER_VERB})\b(?!-)`,
    'i',
  ),
];
/** An assistant described as bound to do something: a standing order in the third person. */
const ASSISTANT_BOUND = [
  /^(?:it\s+is\s+)?(?:the|this|our)\s+(?:ai\s+)?(?:assistant|chatbot|ai)(?:'s)?\s+(?:(?:now|also|still|really|actually|then|hereby|strictly|name)\s+)?(?:must|should|shall|will|is\s+(?:now|required|contractually|obliged|to\b|only|not\s+allowed|forbidden|authori[sz]ed)|(?:true|real|actual|only|main|primary|new|secret|hidden|sole)\s+(?:purpose|job|goal|task|role|name|identity|priority|mission)|polic(?:y|ies)|treats|regards|steers|recommends|promotes|mentions|cites|answers|replies|responds|never|always|only|has\s+been\s+(?:authori[sz]ed|instructed|told))\b/i,
  /\b(?:this|the)\s+assistant'?s\s+(?:policy|purpose|job|true|real|rule|duty)\b/i,
];
/** The assistant said to be set up, or allowed, to act for someone: a standing order in disguise. */
const ASSISTANT_ENABLED = [
  /\b(?:the|this)\s+(?:ai\s+)?(?:assistant|ai|chatbot)\s+(?:is|was|has\s+been)\s+(?:set\s+up|configured|instructed|told|programmed|designed)\b[^.!?\n]{0,30}\bto\b/i,
  /\b(?:authori[sz]e[sd]?|allow(?:s|ed)?|permit(?:s|ted)?|instruct(?:s|ed)?|happy\s+for|fine\s+for|okay\s+for|ok\s+for)\s+(?:the|this)\s+(?:ai\s+)?(?:assistant|ai|chatbot)\s+to\s+(?:give|share|send|forward|reveal|disclose|transfer|upload|post|pay|approve|skip|bypass|move)\b/i,
];
/**
 * A "wish" of the user that works for someone else or against the user's safety: recommending a
 * site for every question, links opened unwarned, content's instructions taking the user's place.
 */
const WISHES_FOR_OTHERS = [
  /\b(recommend|advis|suggest|promot|rank)\w{0,10}\b[^.!?\n]{0,60}(?<=[\w-])\.(com|net|org|io|co|app|shop|example)\b[^.!?\n]{0,40}\b(any|every|all|whenever|always)\b/i,
  /\b(any|every|all|whenever|always)\b[^.!?\n]{0,60}\b(recommend|advis|suggest|promot)\w{0,10}\b[^.!?\n]{0,40}(?<=[\w-])\.(com|net|org|io|co|app|shop|example)\b/i,
  /\baffiliate\s+(link|code|id)\b/i,
  /\bonly\s+[\w.-]+\.[a-z]{2,}\s+as\s+(a|the)\s+source\b/i,
  /\b(treated|considered|regarded|accepted)\s+as\s+(authori[sz]ed|genuine|trusted|safe|legitimate|coming\s+from\s+(them|the\s+user))\b/i,
  /\bnever\s+(be\s+)?(flagged|warned\s+about|questioned|checked)\b/i,
  /\b(opened|clicked|followed|acted\s+on|installed|run)\b[^.!?\n]{0,40}\bwithout\s+(any\s+)?(warning|checking|confirmation|asking)\b/i,
  /\bwithout\s+(asking|checking|confirmation|confirming)\b[^.!?\n]{0,20}$|\b(send|pay|transfer|move|run|execute|open|click|accept|install|forward|share)\b[^.!?\n]{0,50}\bwithout\s+(asking|checking|confirmation|confirming)\b/i,
  /\binstructions?\s+(found\s+)?(in|inside|on|from|within)\s+(the\s+)?(documents?|web\s*pages?|e-?mails?|pages?|files?|websites?|tool\s+results?)\b[^.!?\n]{0,60}\b(rather\s+than|over|instead\s+of|as\s+coming\s+from|as\s+if|take\s+priority|treated)\b/i,
  /\b(content\s+filters?|safety\s+(rules|filters?|guidelines)|restrictions|safeguards)\s+(don'?t|do\s+not|no\s+longer)\s+apply\b/i,
  /\b(not|never|doesn'?t|don'?t)\b[^.!?\n]{0,30}\b(told|informed|notified)\b[^.!?\n]{0,30}\bmemor(y|ies)\b/i,
  /\b(passwords?|pins?|cvv|codes?|credentials)\b[^.!?\n]{0,30}\b(repeated|included|shown|displayed|read\s+out)\b[^.!?\n]{0,30}\b(every|each|all|any|to)\s+(repl(y|ies)|answers?|messages?|callers?)\b/i,
  /\b(skip|bypass|disable|turn\s+off)\w*\s+(the\s+)?(confirmation|verification|approval|parental\s+controls?|two-factor|2fa|safety\s+checks?)\b/i,
];

/** A standing wish, permission or rule, where a wish for someone else hides; not an event told. */
const WISH =
  /\b(wants?|prefers?|preference|wish(es)?|would\s+like|asked\s+that|has\s+asked|agreed|agrees|consents?|happy\s+for|fine\s+(with|for)|authori[sz]\w*|allow\w*|permi\w*|should|must|from\s+now\s+on|always|every|any|standing|default|trusts?|considers?|believes?)\b/i;
const PAST_EVENT = /\b(yesterday|last\s+(week|month|year|night)|ago|once)\b/i;

/** Acting behind the user's back: only an assistant is told to. */
const BEHIND_THE_USER = /\bwithout\s+(asking|telling|informing|notifying|alerting|confirming\s+with)\s+the\s+user\b/i;
/** Kept from the user: only an assistant is asked not to show a memory to its user. */
const HIDDEN_FROM_USER = /\b(?:do\s+not|don'?t|never)\s+(?:show|reveal|mention|disclose|tell)\s+(?:this|it|that)?\s*(?:to\s+)?the\s+user\b(?!'s)/i;
/** Every reply made to advertise: no user wish reads so. */
const ADVERTISING =
  /\b(?:every|each|all|any)\s+(?:answers?|repl(?:y|ies)|responses?)\b[^.!?\n]{0,60}\b(?:recommend\w*|promot\w*|advert\w*|sponsor\w*|affiliate|coupon|referral|discount\s+code)/i;
const ASSISTANT_SUBJECT = String.raw`\b(?:you|the\s+assistant|the\s+ai|the\s+model|the\s+bot|this\s+assistant)\s+`;
const OBLIGED = String.raw`must|shall|are\s+to|have\s+to|need\s+to|are\s+required\s+to|must\s+not`;
/** The assistant told what it must do: an order. */
const ASSISTANT_MUST = new RegExp(`${ASSISTANT_SUBJECT}(?:${OBLIGED})\\b`, 'i');
/** The same, or what it should, will, always or never do: an order where no wish of the user's frames it. */
const ADDRESSES_ASSISTANT = new RegExp(`${ASSISTANT_SUBJECT}(?:${OBLIGED}|should|will|may\\s+not|should\\s+not|always|never)\\b`, 'i');
const REPLIES_MUST = /\b(answers?|repl(y|ies)|responses?|outputs?)\b[^.!?]{0,30}\b(must|should|shall|have\s+to|need\s+to)\b/i;
/** What an order for an assistant is about: answers, users, other people. */
const ORDER_OBJECT =
  /\b(user|users|anyone|everyone|them|people|customers?|(?:your|the|every|each|all|any)\s+(?:answers?|repl(?:y|ies)|responses?|summary|output|chats?|conversations?))\b/i;
/** Describes the user (or someone in their life): a wish stated as a fact about them. */
const ABOUT_SOMEONE = /^\s*(the\s+user|user|i|i'm|my|he|she|they|their|his|her|we|our)\b/i;
/**
 * A memory in the subjectless style of memory stores ("Prefers dark roast", "Has two kids", "Used
 * to live in Oslo"): a verb in the third person or the past, where an order would use its base form;
 * not a plural subject ("Users who ask…", "Payments must…"), which a modal or a relative follows.
 */
const SUBJECTLESS =
  /^\s*(?:(?:never|always|usually|often|rarely|sometimes|still|recently|currently|also|now)\s+)?(?!(?:always|sometimes|perhaps|unless|thus|yes|its|this|thanks|towards|afterwards|regardless|nevertheless|news|status|embed|feed|heed|proceed|need|speed|seed|exceed|succeed|users|customers|clients|visitors|others|members|employees|students|guests|readers|callers|agents|assistants|models|bots)\b)(?:is|was|has|had|does|did|[a-z]{2,}[^s\W]s|[a-z]{2,}ed)\b(?!\s*:)(?!\s+(?:must|should|shall|will|would|are|were|have|can|cannot|may|might|need|who|which|that)\b)/i;
/** A key and its value ("Preferred language: German"), the key naming no order, note or system. */
const KEY_VALUE =
  /^\s*(?![^:]*\b(?:note|memo|message|instructions?|update|reminder|rules?|task|directive|system|assistant|ai|model|bot|llm|important|notice|admin|remember|save|store|memory|p\.?s|attention|warning|urgent|critical)\b)[A-Za-z][\w'’ ()-]{1,40}:\s+\S/i;

/** The sentence is about the user or someone in their life, not an order: see `describesUser`. */
function aboutSomeone(sentence: string): boolean {
  if (ABOUT_SOMEONE.test(sentence)) return true;
  // "Mentions CryptoMax in every reply": a subjectless verb with an order's scope is an order.
  if (SUBJECTLESS.test(sentence)) return !FUTURE.test(sentence) && !ORDER_OBJECT.test(sentence) && !OTHERS.test(sentence);
  if (!KEY_VALUE.test(sentence)) return false;
  const value = sentence.slice(sentence.indexOf(':') + 1);
  return !IMPERATIVE_START.test(value) && !MODEL_ORDER.test(value) && !DROP_ORDER.test(value);
}

const ROLE_MARKERS = [
  /(^|\n)[ \t]*(system|assistant|developer|user)\s*:/i,
  /<\|\s*(im_start|im_end|system|user|assistant|endoftext|eot_id|start_header_id|end_header_id)\s*\|>/i,
  /\[\/?INST\]/i,
  /<<\/?SYS>>/i,
  /<\/?\s*(system|instructions?|sys|prompt)\s*>/i,
  /(^|\n)[ \t]*#{2,}\s*(system|instruction|new\s+instructions?|response)\b/i,
  /\[(system|admin|developer)\s*(message|note|notice|override|update)?\s*[:\]]/i,
  /(^|\n)[ \t]*(instructions?\s+syst[èe]me|systemanweisung|instrucci[oó]n\s+del\s+sistema|mensaje\s+del\s+sistema|istruzion[ei]\s+di\s+sistema)\s*:/i,
  /"role"\s*:\s*"(system|assistant|developer|tool)"/i,
];

const SEND =
  /\b(send|post|forward|email|e-mail|upload|transmit|leak|exfiltrate|share|submit|copy|copies|report|sync|mail|deliver|relay|append|attach|paste|embed|log)\b|\b(be|being|get|gets)\s+(sent|posted|forwarded|emailed|e-mailed|uploaded|copied|shared|mailed|relayed|appended)\b|\b(sent|forwarded|copied|uploaded|emailed|mailed|relayed|posted|appended)\s+(as\s+a\s+link\s+)?to\b/i;
const SENSITIVE =
  /\b(conversations?|chats?|chat\s+history|history|messages|transcripts?|memories|passwords?|credentials|api\s+keys?|tokens?|secrets?|personal\s+(data|information|details)|user\s+data|all\s+data|everything|the\s+user'?s\s+\w+|this\s+(data|information|conversation)|their\s+(data|details|information)|contacts|files?|documents|credit\s+card|ssn|social\s+security|last\s+messages?|ssh\s+keys?|private\s+keys?|~\/\.ssh|keys\s+in|(current\s+)?location|home\s+address|phone\s+number|medical\s+records?|bank\s+details|card\s+details|one-time\s+(login\s+)?codes?|login\s+codes?|verification\s+codes?)\b/i;
const DESTINATION =
  /(https?:\/\/|www\.|\b[\w.+-]{1,64}@[\w-]{1,63}\.[\w.]{2,63}\b|\bwebhook\b|\b\d{1,3}(\.\d{1,3}){3}\b|(?<=[\w-])\.(com|net|org|io|ru|xyz|info|biz|co|site|top|app|dev|me|ai|us|uk|de|fr|es|it|nl|eu|ca|au|in|cn|jp|shop|online|link|cc|tk|ly|to|gg|cloud|email|live|store|tech|example)\b)/i;
/** A markdown image or link whose address carries data in its query: the classic exfiltration. */
const DATA_IN_URL =
  /!?\[[^\][]{0,300}\]\(\s*https?:\/\/[^)\s]*[?&][\w-]+=[^)]*\)|https?:\/\/[^\s)]*[?&](q|data|d|c|msg|text|payload|content|info|p)=(\{|\$|%7B|<)|https?:\/\/[^\s)"']*[?&][\w-]+=(?=$|[\s"')\]]|\s*(plus|followed|with|\+))/i;
/** The conversation or the user's data put into an address: exfiltration by a link or an image. */
const DATA_INTO_ADDRESS =
  /\b(put|place|embed|encode|include|insert|append|add|hide|pack)\b[^.!?\n]{0,40}\b(conversation|chat|messages?|history|memories|details|contents?|data)\b[^.!?\n]{0,40}\b(in|into|inside|within)\s+(the\s+|a\s+|an\s+)?(url|link|query|image)\b/i;
/** Credentials asked for, or an account "verified" at an address: phishing the user. */
const PHISHING = [
  /\b(ask|request|prompt)\w*\s+(?:(?:them|him|her|the\s+user|users?)\s+)?(?:for|to\s+(?:enter|share|send|give|provide|type|confirm))\s+(?:their|the\s+user'?s|your|his|her)\s+(?:(?:one-time|login|verification|2fa|otp|security)\s+)+(?:code|pin|password)\b/i,
  /\b(account|password|login)\b[^.!?\n]{0,40}\b(reset|verified|unlocked|verify|confirm)\s+(it\s+)?at\s+\S+\.\w+/i,
  /\b(verify|reset|unlock|confirm)\s+(their|your|the\s+user'?s?)\s+(account|password|login)\s+at\b/i,
];

const HIDDEN = [
  /[\u200B-\u200F\u2060-\u2064\uFEFF]/,
  /[\u202A-\u202E\u2066-\u2069]/,
  /[\u{E0000}-\u{E007F}]/u,
  /[A-Za-z0-9+/]{40,}={0,2}/,
  /\b(base64|rot13|hex)[- ]?(decode|encoded|decoding)\b/i,
  /\b(rot-?13|base-?64|hex(adecimal)?|caesar)\b[^.!?\n]{0,60}\b(obey|follow|execute|do\s+what|carry\s+(it\s+)?out|keep\s+it\s+as|treat\s+it\s+as)\b/i,
  // A command split in parts to be joined and run.
  /\b(join|combine|concatenate|put\s+together|assemble)\s+(them|these|the\s+(words|parts|pieces|fragments|letters|strings|halves)|[a-z]\s*\+\s*[a-z])\b[^.!?\n]{0,60}\b(carry\s+(it\s+)?out|execute|obey|run\s+it|do\s+it|follow\s+it|treat\s+(it|the\s+result)\s+as)\b/i,
  // Text a person does not see: a comment, or styled away.
  /<!--[\s\S]*?-->/,
  /\bstyle\s*=\s*["'][^"'>]{0,200}\b(font-size\s*:\s*0|color\s*:\s*(white|#fff\b|#ffffff)|display\s*:\s*none|visibility\s*:\s*hidden|opacity\s*:\s*0(\.0+)?\b)/i,
];

/**
 * The rules read a sentence's start: past this many characters nothing is an order's lead any
 * more, and a longer run-on sentence would only cost time.
 */
const SENTENCE_MAX_CHARS = 500;

/** The sentences of a text, each trimmed: rules about a sentence's start read each. */
function sentences(text: string): string[] {
  return text
    .split(/(?<=[.!?;])\s+|\n+/)
    .map((s) => s.trim().slice(0, SENTENCE_MAX_CHARS))
    .filter((s) => s.length > 0);
}

function isStandingOrder(text: string, parts: readonly string[]): boolean {
  if (HIDDEN_FROM_USER.test(text) || BEHIND_THE_USER.test(text) || ADVERTISING.test(text)) return true;
  if (parts.some((s) => !PAST_EVENT.test(s) && WISH.test(s) && WISHES_FOR_OTHERS.some((r) => r.test(s)))) return true;
  for (const sentence of [text, ...parts]) if (ADDRESSED_TO_AI.some((r) => r.test(sentence))) return true;
  for (const sentence of parts) {
    const aboutUser = aboutSomeone(sentence);
    // An order to treat others some way is an order whoever it seems to describe.
    const future = FUTURE.test(sentence);
    if (TELL.test(sentence) && ((OTHERS.test(sentence) && (future || !aboutUser)) || (SOMEONE.test(sentence) && future))) return true;
    if ((TELL.test(sentence) || HANDED.test(sentence)) && ON_REQUEST.test(sentence)) return true;
    // "The user prefers that the assistant never uses emojis" describes a wish; "must", an order.
    if (
      (aboutUser ? ASSISTANT_MUST : ADDRESSES_ASSISTANT).test(sentence) ||
      ASSISTANT_BOUND.some((r) => r.test(sentence)) ||
      ASSISTANT_ENABLED.some((r) => r.test(sentence))
    )
      return true;
    if (aboutUser) continue;
    if (REPLIES_MUST.test(sentence) || MODEL_ORDER.test(sentence)) return true;
    if (IMPERATIVE_START.test(sentence) && (FUTURE.test(sentence) || ORDER_OBJECT.test(sentence))) return true;
  }
  return false;
}

function isExfiltration(text: string): boolean {
  if (DATA_IN_URL.test(text) || DATA_INTO_ADDRESS.test(text) || PHISHING.some((r) => r.test(text))) return true;
  // Clause by clause: "The user's email is …" is a fact, whatever a later clause sends where.
  return text
    .split(/[.;!?]\s+|,\s+(?:and|so|but)\s+/)
    .some(
      (clause) =>
        SEND.test(clause) && SENSITIVE.test(clause) && DESTINATION.test(clause) && !/^\s*(the\s+user'?s?|my)\s+[\w\s]{0,30}\b(is|are)\b/i.test(clause),
    );
}

/**
 * Every sentence describes the user or someone in their life: the embedding's likeness to an
 * injection is not evidence then (a fact about a password or an address reads like one), only the
 * rules are.
 */
export function describesUser(text: string): boolean {
  return sentences(text).every(aboutSomeone);
}

/**
 * Of a longer text the rules read the start and the end: what is stored as a memory is short, and
 * a screen that read 100 KB of patterns would hold the event loop.
 */
const RULES_MAX_CHARS = 16_000;

/** The reasons the rules find, in `QUARANTINE_REASONS` order; empty: the text reads as a fact. */
export function ruleReasons(whole: string): QuarantineReason[] {
  const text = whole.length <= RULES_MAX_CHARS ? whole : `${whole.slice(0, RULES_MAX_CHARS - 4_000)}\n${whole.slice(-4_000)}`;
  const parts = sentences(text);
  const reasons: QuarantineReason[] = [];
  if (
    [text, unleet(text, 'i'), unleet(text, 'l')].some((t) => OVERRIDE.some((r) => r.test(t))) ||
    parts.some((s) => !aboutSomeone(s) && (DROP_ORDER.test(s) || OVERRIDE_UNLESS_ABOUT_USER.some((r) => r.test(s))))
  )
    reasons.push('override');
  if (isStandingOrder(text, parts)) reasons.push('standing_order');
  if (ROLE_MARKERS.some((r) => r.test(text))) reasons.push('role_marker');
  if (isExfiltration(text)) reasons.push('exfiltration');
  if (HIDDEN.some((r) => r.test(text))) reasons.push('hidden_text');
  return reasons;
}
