import type { Embedder } from '../../embeddings/embedder.js';
import type { FirewallVerdict, MemoryWriteScreen } from '../memory-write-screen.js';
import type { QuarantineReason } from '../quarantine-reasons.js';
import { readsAsEnglish } from './english-text.js';
import { describesUser, ruleReasons } from './firewall-rules.js';
import type { InjectionClassifierWeights } from './injection-classifier.js';
import { INJECTION_CLASSIFIER } from './injection-classifier-weights.js';
import { type InjectionClassifier, injectionClassifierFor } from './injection-classifiers.js';
import { concurrencyLimit } from '../../util/concurrency-limit.js';
import type { SecondOpinion, SecondOpinionVerdict } from './second-opinion.js';

/** `model`: the model's and extraction's writes are screened; `all`: the API's too; `off`: none. */
export const MEMORY_FIREWALL_MODES = ['model', 'all', 'off'] as const;
export type MemoryFirewallMode = (typeof MEMORY_FIREWALL_MODES)[number];

/**
 * The score from which a memory reads as an injection to the bundled embedder's classifier, chosen
 * with it by cross-validation on the tuning set (scripts/train-firewall-classifier.ts; figures in
 * docs/benchmarks/memory-firewall.md). Each classifier has its own (injection-classifiers.ts); an
 * embedder none was trained for leaves the rules to screen alone.
 */
export const INJECTION_THRESHOLD: number = INJECTION_CLASSIFIER.threshold;

/** How a classifier's score is read: from which score a text is an injection, and for which texts the score counts. */
export type ClassifierScope = Pick<InjectionClassifierWeights, 'threshold' | 'screensAboutUser' | 'screensOtherLanguages'>;

/** The memory store's write screen (memory-write-screen.ts), by the rules and the classifier. */
export interface MemoryFirewall extends MemoryWriteScreen {
  readonly mode: MemoryFirewallMode;
}

export interface MemoryFirewallOptions {
  mode: MemoryFirewallMode;
  /** Scores by the classifier trained on its vectors, if one was (injection-classifiers.ts); the rules alone otherwise. */
  embedder?: Embedder;
  /** Default: the threshold cross-validation chose for the embedder's classifier. */
  threshold?: number;
  /** Called once per quarantined text, with its reasons (the metrics counter). */
  onQuarantined?: (reasons: readonly QuarantineReason[]) => void;
  /** Asked about borderline texts only (`borderlineOf`): a model, when one is configured. */
  secondOpinion?: SecondOpinion;
  /** Told each second opinion asked, and its verdict (undefined: none came; the screen's stood). */
  onSecondOpinion?: (asked: 'release' | 'quarantine', verdict: SecondOpinionVerdict | undefined) => void;
}

/** Second opinions asked at once; more wait their turn (a batch of saves, a burst of extractions). */
const SECOND_OPINIONS_AT_ONCE = 4;

/** How far from the threshold a classifier's score is borderline, either side. */
export const BORDERLINE_BAND = 0.15;
/**
 * What a wish of the user that works for someone else touches: an address, money, credentials,
 * trust, confirmations. A text about the user that mentions none is borderline only by its score.
 */
const SENSITIVE_CUES =
  /(https?:\/\/|www\.|\b[\w.+-]{1,64}@[\w-]{1,63}\.[a-z]{2,}\b|(?<=[\w-])\.(com|net|org|io|co|cc|shop|app|info|biz|example)\b|\b(forward\w*|upload\w*|payments?|transfer\w*|wire|iban|password\w*|passcode|2fa|one-time|credential\w*|api\s+keys?|tokens?|trust\w*|authori[sz]\w*|approv\w*|permission\w*|consent\w*|confirmation|warnings?|secret\w*|hid(e|den)|instructions?|obey\w*|third[- ]part\w*|recommend\w*|every\s+(answer|reply|response|chat|conversation)|all\s+(answers|replies|responses|chats|conversations))\b)/i;

/**
 * Whether a second opinion could change a verdict: a quarantine by the classifier alone, its
 * score near the threshold (`release`); or a text the screen let through that the classifier
 * scored near it, or that is about the user or could not be scored, and touches what injections
 * are after (`quarantine`).
 */
export function borderlineOf(
  text: string,
  reasons: readonly QuarantineReason[],
  score: number | null,
  scope: ClassifierScope = INJECTION_CLASSIFIER,
): 'release' | 'quarantine' | undefined {
  const { threshold } = scope;
  if (reasons.length === 1 && reasons[0] === 'similar_to_injection') return score !== null && score < threshold + BORDERLINE_BAND ? 'release' : undefined;
  if (reasons.length > 0) return undefined;
  const scored = score !== null && classifierScreens(text, scope);
  if (scored && score >= threshold - BORDERLINE_BAND) return 'quarantine';
  // A wish that serves someone else reads like the user's own to rules and classifier alike.
  return (!scored || describesUser(text)) && SENSITIVE_CUES.test(text) ? 'quarantine' : undefined;
}

/**
 * Whether a classifier's score counts for a text, as cross-validation chose for it
 * (`screensAboutUser`, `screensOtherLanguages`): for one about the user (a fact about a password or
 * an address can score like an injection), and for one in another language (`readsAsEnglish`: the
 * embedders read English, and another language's vectors fall where the classifier has seen little).
 */
export function classifierScreens(text: string, scope: ClassifierScope = INJECTION_CLASSIFIER): boolean {
  return (scope.screensOtherLanguages || readsAsEnglish(text)) && (scope.screensAboutUser || !describesUser(text));
}

/** The rules' reasons, and the classifier's when its score reaches the threshold on a text it screens. */
export function screenReasons(text: string, score: number | null, scope: ClassifierScope = INJECTION_CLASSIFIER): QuarantineReason[] {
  const reasons = ruleReasons(text);
  if (score !== null && score >= scope.threshold && classifierScreens(text, scope)) reasons.push('similar_to_injection');
  return reasons;
}

/** An embedder a classifier was trained on, with that classifier. */
function scorerOf(embedder: Embedder | undefined): { embedder: Embedder; classifier: InjectionClassifier } | undefined {
  const classifier = embedder && injectionClassifierFor(embedder);
  return embedder && classifier ? { embedder, classifier } : undefined;
}

export function createMemoryFirewall(options: MemoryFirewallOptions): MemoryFirewall {
  const limited = concurrencyLimit(SECOND_OPINIONS_AT_ONCE);

  async function screen(texts: readonly string[], writer?: Embedder): Promise<FirewallVerdict[]> {
    // The writer's embedder first: the vectors it makes here are the ones its write stores.
    const scorer = scorerOf(writer) ?? scorerOf(options.embedder);
    const scope: ClassifierScope | undefined = scorer && { ...scorer.classifier, threshold: options.threshold ?? scorer.classifier.threshold };
    const scores: (number | null)[] = scorer ? await scorer.classifier.scores(scorer.embedder, texts) : texts.map(() => null);
    const verdicts = await Promise.all(
      texts.map(async (text, i): Promise<FirewallVerdict> => {
        const injectionScore = scores[i] ?? null;
        const reasons = screenReasons(text, injectionScore, scope);
        const borderline = options.secondOpinion ? borderlineOf(text, reasons, injectionScore, scope) : undefined;
        const opinion = borderline ? await limited(() => options.secondOpinion!.judge(text)) : undefined;
        if (borderline) options.onSecondOpinion?.(borderline, opinion);
        if (!opinion) return { status: reasons.length > 0 ? 'quarantined' : 'active', reasons, injectionScore };
        const final: QuarantineReason[] =
          borderline === 'quarantine' && opinion === 'injection' ? ['second_opinion'] : borderline === 'release' && opinion === 'fact' ? [] : reasons;
        return { status: final.length > 0 ? 'quarantined' : 'active', reasons: final, injectionScore, secondOpinion: opinion };
      }),
    );
    for (const verdict of verdicts) if (verdict.reasons.length > 0) options.onQuarantined?.(verdict.reasons);
    return verdicts;
  }

  return {
    mode: options.mode,
    screens: (actor, untrusted = false) => {
      if (options.mode === 'off' || actor.type === 'system') return false;
      return options.mode === 'all' || untrusted || actor.type === 'tool' || actor.type === 'extraction';
    },
    screen,
  };
}
