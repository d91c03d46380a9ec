/**
 * The firewall's rules: what makes a memory's text read as an instruction to an assistant rather
 * than a fact about the user or the world. Each rule names its reason; a text may trip several.
 */
export const QUARANTINE_REASONS = ['override', 'standing_order', 'role_marker', 'exfiltration', 'hidden_text', 'similar_to_injection'] as const;
export type QuarantineReason = (typeof QUARANTINE_REASONS)[number];

const OVERRIDE = [
  /\b(ignore|disregard|forget|override|bypass|skip|drop|abandon|discard)\b[^.!?\n]{0,40}\b(previous|prior|above|earlier|preceding|original|all|any|your|system|safety|existing|initial)\b[^.!?\n]{0,30}\b(instructions?|prompts?|rules|guidelines|directives|constraints|programming|guardrails|polic(y|ies)|messages?|context|restrictions)\b/i,
  /\b(new|updated|real|actual|revised)\s+(system\s+)?(instructions?|rules|directives)\s*(are|is|:|follow)/i,
  /\byou\s+are\s+(now|no\s+longer)\b/i,
  /\b(act|behave|respond)\s+as\s+(if\s+you\s+(are|were)|an?\s+(unrestricted|unfiltered|jailbroken|evil))/i,
  /\b(developer|god|jailbreak|dan|unrestricted|debug)\s+mode\b/i,
  /\b(reveal|print|show|output|repeat|leak|disclose)\b[^.!?\n]{0,30}\b(system\s+prompt|hidden\s+instructions|initial\s+instructions|your\s+instructions|your\s+prompt)\b/i,
  /\bdo\s+anything\s+now\b/i,
  // The assistant's own configuration is no fact about a user.
  /\b(system\s+prompt|your\s+(new\s+|original\s+|initial\s+)?(instructions|guidelines|rules|programming|directives))\b/i,
  /\bpretend\s+(that\s+)?(you|there)\s+(are|have|is)\s+no\s+(rules|restrictions|limits|guidelines)/i,
];

/** A directive about conversations to come, or about how to treat others. */
const FUTURE =
  /\b((every|each|all|any)\s+(\w+\s+)?(answers?|repl(y|ies)|responses?|questions?|messages?|conversations?|chats?|sessions?)|from\s+now\s+on|going\s+forward|henceforth|in\s+(all\s+)?(future|every|each|subsequent)\s+(conversations?|chats?|sessions?|replies|responses|answers)|every\s+time|whenever|always|never|at\s+all\s+times)\b/i;
const OTHERS =
  /\b(anyone|anybody|everyone|everybody|whoever|other\s+users?|all\s+users|any\s+users?|every\s+user|each\s+user|users\s+(who|asking)|people\s+(who|asking)|all\s+customers|any\s+customer)\b/i;
const TELL = /\b(tell|told|hear|say|answer|reply|respond|recommend|suggest|direct|redirect|send|point|inform|claim|insist|state|mention|link|refer)\b/i;
/** A sentence that starts by giving an order: to the assistant, not about the user. */
const IMPERATIVE_START =
  /^\s*(?:(?:assistant|ai|bot|model|chatbot|claude|gpt|chatgpt)\s*[,:]\s*)?(?:please\s+|from\s+now\s+on,?\s+|going\s+forward,?\s+|(?:in|for)\s+(?:all\s+|every\s+|each\s+)?(?:future\s+)?\w+,?\s+|(?:whenever|when|if)\b[^,]{0,80},\s*|remember\s+to\s+|make\s+sure\s+(?:to|you)\s+|be\s+sure\s+to\s+|note\s+to\s+(?:self|assistant)\s*:\s*)?(always|never|do\s+not|don'?t|ignore|tell|say|answer|reply|respond|recommend|insist|claim|refuse|include|append|add|prepend|send|forward|direct|redirect|mention|output|print|use|treat|assume|pretend|act|obey|follow|execute|run|call|write|describe)\b(?!-)/i;
const ADDRESSES_ASSISTANT =
  /\b(you|the\s+assistant|the\s+ai|the\s+model|the\s+bot|this\s+assistant)\s+(must|should|shall|will|are\s+to|have\s+to|need\s+to|are\s+required\s+to|may\s+not|must\s+not|should\s+not|cannot|can't|always|never)\b/i;
const REPLIES_MUST = /\b(answers?|repl(y|ies)|responses?|outputs?)\b[^.!?]{0,30}\b(must|should|shall|have\s+to|need\s+to)\b/i;
/** Describes the user (or someone in their life): a wish stated as a fact about them. */
const ABOUT_SOMEONE = /^\s*(the\s+user|user|i|i'm|my|he|she|they|their|his|her)\b/i;

const ROLE_MARKERS = [
  /(^|\n)\s*(system|assistant|developer|user)\s*:/i,
  /<\|\s*(im_start|im_end|system|user|assistant|endoftext|eot_id|start_header_id|end_header_id)\s*\|>/i,
  /\[\/?INST\]/i,
  /<<\/?SYS>>/i,
  /<\/?\s*(system|instructions?|sys|prompt)\s*>/i,
  /(^|\n)\s*#{2,}\s*(system|instruction|new\s+instructions?|response)\b/i,
  /\[(system|admin)\s*(message|note|override)?\]/i,
];

const SEND = /\b(send|post|forward|email|e-mail|upload|transmit|leak|exfiltrate|share|submit|copy|report|sync|mail|deliver|relay)\b/i;
const SENSITIVE =
  /\b(conversations?|chats?|chat\s+history|history|messages|transcripts?|memories|passwords?|credentials|api\s+keys?|tokens?|secrets?|personal\s+(data|information|details)|user\s+data|all\s+data|everything|the\s+user'?s?\s+\w+|this\s+(data|information|conversation)|their\s+(data|details|information)|contacts|files|documents|credit\s+card|ssn|social\s+security)\b/i;
const DESTINATION =
  /(https?:\/\/|www\.|\b[\w.+-]+@[\w-]+\.[\w.]+\b|\bwebhook\b|\b\d{1,3}(\.\d{1,3}){3}\b|\b[\w-]+\.(com|net|org|io|ru|xyz|info|biz|co|site|top)\b)/i;
/** A markdown image or link whose address carries data in its query: the classic exfiltration. */
const DATA_IN_URL = /!?\[[^\]]*\]\(\s*https?:\/\/[^)\s]*[?&][\w-]+=[^)]*\)|https?:\/\/[^\s)]*[?&](q|data|d|c|msg|text|payload|content|info|p)=(\{|\$|%7B|<)/i;

const HIDDEN = [
  /[\u200B-\u200F\u2060-\u2064\uFEFF]/,
  /[\u202A-\u202E\u2066-\u2069]/,
  /[\u{E0000}-\u{E007F}]/u,
  /[A-Za-z0-9+/]{40,}={0,2}/,
  /\b(base64|rot13|hex)[- ]?(decode|encoded|decoding)\b/i,
];

/** The sentences of a text, each trimmed: rules about a sentence's start read each. */
function sentences(text: string): string[] {
  return text
    .split(/(?<=[.!?;])\s+|\n+/)
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

function isStandingOrder(text: string): boolean {
  for (const sentence of sentences(text)) {
    const aboutSomeone = ABOUT_SOMEONE.test(sentence);
    // An order to treat others some way is an order whoever it seems to describe.
    if (OTHERS.test(sentence) && TELL.test(sentence) && (FUTURE.test(sentence) || !aboutSomeone)) return true;
    if (ADDRESSES_ASSISTANT.test(sentence)) return true;
    if (!aboutSomeone && REPLIES_MUST.test(sentence)) return true;
    if (
      !aboutSomeone &&
      IMPERATIVE_START.test(sentence) &&
      (FUTURE.test(sentence) || /\b(user|users|anyone|everyone|them|people|customers?)\b/i.test(sentence))
    )
      return true;
  }
  return false;
}

function isExfiltration(text: string): boolean {
  if (DATA_IN_URL.test(text)) return true;
  return SEND.test(text) && SENSITIVE.test(text) && DESTINATION.test(text) && !/^\s*(the\s+user'?s?|my)\s+[\w\s]{0,30}\b(is|are)\b/i.test(text);
}

/**
 * Every sentence describes the user or someone in their life: the embedding's likeness to an
 * injection is not evidence then (a fact about a password or an address reads like one), only the
 * rules are.
 */
export function describesUser(text: string): boolean {
  return sentences(text).every((s) => ABOUT_SOMEONE.test(s));
}

/** The reasons the rules find, in `QUARANTINE_REASONS` order; empty: the text reads as a fact. */
export function ruleReasons(text: string): QuarantineReason[] {
  const reasons: QuarantineReason[] = [];
  if (OVERRIDE.some((r) => r.test(text))) reasons.push('override');
  if (isStandingOrder(text)) reasons.push('standing_order');
  if (ROLE_MARKERS.some((r) => r.test(text))) reasons.push('role_marker');
  if (isExfiltration(text)) reasons.push('exfiltration');
  if (HIDDEN.some((r) => r.test(text))) reasons.push('hidden_text');
  return reasons;
}
