import { DEFAULT_EMBEDDED_SENTENCES } from '../../../../src/chat/extractive/extractive-answer.js';
import { answerTypeOf } from '../../../../src/chat/extractive/answer-type.js';
import { BASE_KEYS, type AnyKey, KEYS, K, COSINE, col, type Row, type Features } from './tuning-columns.js';
import { features } from './tuning-features.js';
import { scoreAt, masked, withoutCosine, best, fmt, weightsText, unit } from './tuning-scoring.js';
import { fit, fitMlp, topOf } from './tuning-fits.js';
import { type NetWeights, scorerOf, crossValidatedModel } from './tuning-models.js';

/** TUNING_EXPERIMENTS=linear,mlp,ratio,types,misses: models and features compared by cross-validated answer@1; then exits. */
export function runExperiments(): never {
  const lexicalOnly = withoutCosine(features);
  const baseKeys: AnyKey[] = ['lexical', 'rank', 'type', 'bigram', 'context', 'proximity', 'rare', 'length', 'position', 'passage'];
  const dropped = (process.env.TUNING_MLP_DROP ?? '').split(',');
  const mlpKeys: AnyKey[] = [...baseKeys, ...((process.env.TUNING_MLP_EXTRA ?? '').split(',').filter(Boolean) as AnyKey[])].filter((k) => !dropped.includes(k));
  const embedded = (n: number) => (part: Features, train: Features) => masked(n, fit(withoutCosine(train).own, baseKeys), part);
  // The sentences embedded in the experiments: the chat's count unless TUNING_N says otherwise.
  const N = Number(process.env.TUNING_N ?? DEFAULT_EMBEDDED_SENTENCES);
  const report = (label: string, r: { at1: number; at1Declining: number }) =>
    console.log(`${label.padEnd(60)} cv answer@1 ${fmt(r.at1)}, declining 80%: ${fmt(r.at1Declining)} (${((r.at1Declining - r.at1) * 100).toFixed(1)})`);
  const linear = (keys: AnyKey[]) => (rows: Row[]) => {
    const w = fit(rows, keys);
    return (r: Row, j: number) => scoreAt(r, j, w);
  };
  const which = (process.env.TUNING_EXPERIMENTS ?? '').split(',');
  const want = (name: string) => which.includes('all') || which.includes(name);
  if (want('linear')) {
    // TUNING_EXTRA: sets of features added to the base ones, ';' between sets, ',' within one.
    for (const extra of (process.env.TUNING_EXTRA ?? ';near;lexrank,lexratio;near,lexrank,lexratio').split(';')) {
      const keys = [...baseKeys, ...(extra ? (extra.split(',') as AnyKey[]) : [])];
      report(`no embedder, linear, base + ${extra}`, crossValidatedModel(lexicalOnly, linear(keys)));
      const cos = ['cosine', ...keys] as AnyKey[];
      report(`embed ${N}, linear, base + ${extra}`, crossValidatedModel(features, linear(cos), embedded(N)));
      if (process.env.TUNING_COSRANK)
        report(`embed ${N}, linear, base + ${extra} + cosrank,cosratio`, crossValidatedModel(features, linear([...cos, 'cosrank', 'cosratio']), embedded(N)));
    }
  }
  if (want('mlp')) {
    const hs = (process.env.TUNING_HIDDEN ?? '4,8').split(',').map(Number);
    const l2s = (process.env.TUNING_L2 ?? '0.001').split(',').map(Number);
    for (const h of hs)
      for (const l2 of l2s) {
        report(
          `no embedder, mlp ${h} l2 ${l2}, ${mlpKeys.length} features`,
          crossValidatedModel(lexicalOnly, (rows) => fitMlp(rows, mlpKeys, h, 300, l2).score),
        );
        report(
          `embed ${N}, mlp ${h} l2 ${l2}, ${mlpKeys.length} features`,
          crossValidatedModel(features, (rows) => fitMlp(rows, ['cosine', ...mlpKeys], h, 300, l2).score, embedded(N)),
        );
      }
  }
  if (want('ratio')) {
    // The fit with the cosine's weight held at a share of the BM25 weight (TUNING_RATIO, ',' between
    // values): how much a larger cosine weight than the free fit's costs.
    const keys: AnyKey[] = [...baseKeys, 'near'];
    const lex = col('lexical');
    const tied = (ratio: number) => (rows: Row[]) => {
      const moved = rows.map((r) => {
        const x = Float64Array.from(r.x);
        for (let j = 0; j < r.n; j++) x[j * K + lex]! += ratio * x[j * K + COSINE]!;
        return { ...r, x };
      });
      const w = fit(moved, keys);
      w[COSINE] = ratio;
      return (r: Row, j: number) => scoreAt(r, j, w);
    };
    for (const ratio of (process.env.TUNING_RATIO ?? '0.45,0.56').split(',').map(Number)) {
      report(`embed ${N}, linear, base + near, cosine ${ratio}`, crossValidatedModel(features, tied(ratio), embedded(N)));
      const set = masked(N, fit(lexicalOnly.own, keys));
      const scorer = tied(ratio)(set.own);
      const w = Float64Array.from(KEYS, (_, i) => scorer({ n: 1, x: unit(KEYS[i]!), ok: new Uint8Array(1), article: 0 }, 0));
      console.log(`  in-sample ${fmt(set.own.filter((r) => topOf(r, scorer).ok).length / set.own.length)} | ${weightsText(w)}`);
    }
  }
  if (want('types')) {
    // answer@1 by the kind of answer the question asks for (in-sample fit, no embedder / embedded), beside
    // the share where some candidate answers: where the answer-type cue could do more.
    const kinds = new Map<string, { n: number; lex: number; emb: number; some: number }>();
    const wl = fit(lexicalOnly.own, [...baseKeys, 'near']);
    const set = masked(N, wl);
    const we = fit(set.own, ['cosine', ...baseKeys, 'near']);
    set.own.forEach((r, i) => {
      const kind = answerTypeOf(r.question!);
      const k = kinds.get(kind) ?? { n: 0, lex: 0, emb: 0, some: 0 };
      k.n++;
      if (best(lexicalOnly.own[i]!, wl).ok) k.lex++;
      if (best(r, we).ok) k.emb++;
      if (r.ok.some((o) => o === 1)) k.some++;
      kinds.set(kind, k);
    });
    for (const [kind, k] of [...kinds].sort((a, b) => b[1].n - a[1].n))
      console.log(
        `${kind.padEnd(10)} ${String(k.n).padStart(5)} questions: answer@1 ${fmt(k.lex / k.n)} no embedder, ${fmt(k.emb / k.n)} embedded; some candidate answers ${fmt(k.some / k.n)}`,
      );
  }
  if (want('misses')) {
    // Misses of the in-sample fit (no embedder) where some candidate answers: what the top sentence was instead.
    const w = fit(lexicalOnly.own, [...baseKeys, 'near']);
    let shown = 0;
    for (const r of lexicalOnly.own) {
      const t = best(r, w);
      if (t.ok || !r.ok.some((o) => o === 1) || shown++ >= 30) continue;
      const g = r.ok.indexOf(1);
      const feats = (j: number) =>
        KEYS.slice(0, BASE_KEYS.length)
          .map((k, i) => `${k} ${r.x[j * K + i]!.toFixed(2)}`)
          .join(' ');
      console.log(
        `\nQ: ${r.question} | gold: ${r.gold!.join(' / ')}\n  top : ${r.texts![t.top]}\n        ${feats(t.top)}\n  gold: ${r.texts![g]}\n        ${feats(g)}`,
      );
    }
  }
  for (const spec of (process.env.TUNING_EXPORT ?? '').split(';').filter(Boolean)) {
    // The model fitted on every tuning question, written as the constants of src/chat/extractive/answer-weights.ts.
    const [h, l2, n] = spec.split(',').map(Number) as [number, number, number];
    const set = n > 0 ? masked(n, fit(withoutCosine(features).own, mlpKeys)) : lexicalOnly;
    const keys: AnyKey[] = n > 0 ? ['cosine', ...mlpKeys] : mlpKeys;
    // 0 hidden units: the linear fit itself (lexical scaled to 1).
    const linearW = h > 0 ? undefined : fit(set.own, keys);
    const model = linearW
      ? { w: linearW, a: new Float64Array(0), c: new Float64Array(0), u: new Float64Array(0), score: (r: Row, j: number) => scoreAt(r, j, linearW) }
      : fitMlp(set.own, keys, h, 300, l2);
    const named = (v: Float64Array, offset = 0) => Object.fromEntries(keys.map((k) => [k, +v[offset + KEYS.indexOf(k)]!.toFixed(3)]));
    console.log(`\nexport ${spec}:`);
    console.log(
      JSON.stringify({
        ...named(model.w),
        hidden: Array.from({ length: h }, (_, i) => ({ bias: +model.c[i]!.toFixed(3), weights: named(model.a, i * K), out: +model.u[i]!.toFixed(3) })),
      }),
    );
    const rounded = scorerOf({
      ...(named(model.w) as unknown as NetWeights),
      hidden: Array.from({ length: h }, (_, i) => ({ bias: +model.c[i]!.toFixed(3), weights: named(model.a, i * K), out: +model.u[i]!.toFixed(3) })),
    });
    console.log(
      `in-sample answer@1 ${fmt(set.own.filter((r) => topOf(r, model.score).ok).length / set.own.length)}, rounded ${fmt(set.own.filter((r) => topOf(r, rounded).ok).length / set.own.length)}`,
    );
  }
  process.exit(0);
}
