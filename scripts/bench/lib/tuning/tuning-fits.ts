import { FOLDS, type Key, BASE_KEYS, type AnyKey, KEYS, K, type Row, type Features, type Vector } from './tuning-columns.js';
import { scoreAt, best, evaluate, unit } from './tuning-scoring.js';

// Fitting: the softmax-ranked linear model, its cross-validation by article, and the small network tried beside it.
/**
 * A linear model fitted by gradient descent (Adam) on the softmax over each question's candidates,
 * the answering ones together as the target: it ranks an answering sentence first. (Coordinate
 * ascent on answer@1 from there gained in-sample, 0.789, and lost cross-validated, 0.775: it
 * overfits.) Features not in `keys` keep weight 0. Scaled so `lexical` is 1, as the constants are written.
 */
export function fit(rows: readonly Row[], keys: readonly AnyKey[], iterations = Number(process.env.TUNING_ITERATIONS ?? 400), l2 = 1e-3): Vector {
  const usable = rows.filter((r) => r.ok.some((o) => o === 1) && r.ok.some((o) => o === 0));
  const on = Float64Array.from(KEYS, (k) => (keys.includes(k) ? 1 : 0));
  const w = unit('lexical');
  const m = new Float64Array(K);
  const v = new Float64Array(K);
  const rate = 0.05;
  const s = new Float64Array(256);
  for (let t = 1; t <= iterations; t++) {
    const grad = Float64Array.from(w, (x) => l2 * x);
    for (const r of usable) {
      let max = -Infinity;
      for (let j = 0; j < r.n; j++) max = Math.max(max, (s[j] = scoreAt(r, j, w)));
      const { all, okSum } = softmaxMass(s, r, max);
      for (let j = 0; j < r.n; j++) {
        const g = (s[j]! / all - (r.ok[j] ? s[j]! / okSum : 0)) / usable.length;
        for (let i = 0; i < K; i++) grad[i]! += g * r.x[j * K + i]!;
      }
    }
    for (let i = 0; i < K; i++) {
      if (!on[i]) continue;
      m[i] = 0.9 * m[i]! + 0.1 * grad[i]!;
      v[i] = 0.999 * v[i]! + 0.001 * grad[i]! * grad[i]!;
      w[i]! -= (rate * (m[i]! / (1 - 0.9 ** t))) / (Math.sqrt(v[i]! / (1 - 0.999 ** t)) + 1e-8);
    }
  }
  const scale = w[KEYS.indexOf('lexical')]!;
  for (let i = 0; i < K; i++) w[i] = w[i]! / scale;
  return w;
}

/** answer@1 and the decline cost on articles the weights were not fitted on (five folds by article). */
export function crossValidated(set: Features, keys: readonly AnyKey[], prepare: (part: Features, train: Features) => Features = (s) => s) {
  let right = 0;
  let rightDeclining = 0;
  for (let fold = 0; fold < FOLDS; fold++) {
    const part = (rows: Row[], inFold: boolean) => rows.filter((r) => (r.article % FOLDS === fold) === inFold);
    const train: Features = { own: part(set.own, false), other: part(set.other, false) };
    const test: Features = { own: part(set.own, true), other: part(set.other, true) };
    const w = fit(prepare(train, train).own, keys);
    const threshold = evaluate(w, prepare(train, train)).threshold;
    const scored = prepare(test, train).own.map((r) => best(r, w));
    right += scored.filter((s) => s.ok).length;
    rightDeclining += scored.filter((s) => s.ok && s.score >= threshold).length;
  }
  return { at1: right / set.own.length, at1Declining: rightDeclining / set.own.length };
}

/** A scorer of one candidate of a row: what a fitted model is. */
export type Scorer = (row: Row, j: number) => number;

/**
 * A linear model plus a small hidden layer (tanh), fitted like `fit` (softmax over each question's
 * candidates, Adam): interactions between features (an answer-type cue worth more beside a strong
 * match...) that a weighted sum cannot express. Seeded initialisation, so deterministic.
 */
export function fitMlp(rows: readonly Row[], keys: readonly AnyKey[], hidden: number, iterations = 300, l2 = 1e-3, seed = 1) {
  const usable = rows.filter((r) => r.ok.some((o) => o === 1) && r.ok.some((o) => o === 0));
  const on = Float64Array.from(KEYS, (k) => (keys.includes(k) ? 1 : 0));
  const H = hidden;
  let state = seed;
  const random = () => ((state = (state * 1103515245 + 12345) % 2147483648) / 2147483648 - 0.5) * 0.2;
  const w = fit(
    rows,
    keys.filter((k) => BASE_KEYS.includes(k as Key) || true),
    300,
    l2,
  );
  const a = Float64Array.from({ length: H * K }, (_, i) => (on[i % K] ? random() : 0));
  const c = new Float64Array(H);
  const u = Float64Array.from({ length: H }, () => random());
  const params = [w, a, c, u];
  const m = params.map((p) => new Float64Array(p.length));
  const v = params.map((p) => new Float64Array(p.length));
  const rate = 0.02;
  const s = new Float64Array(512);
  const hid = new Float64Array(512 * H);
  for (let t = 1; t <= iterations; t++) {
    const grads = params.map((p) => Float64Array.from(p, (x) => l2 * x));
    const [gw, ga, gc, gu] = grads as [Float64Array, Float64Array, Float64Array, Float64Array];
    for (const r of usable) {
      let max = -Infinity;
      for (let j = 0; j < r.n; j++) {
        let z = 0;
        for (let i = 0; i < K; i++) z += r.x[j * K + i]! * w[i]!;
        for (let h = 0; h < H; h++) {
          let y = c[h]!;
          for (let i = 0; i < K; i++) y += r.x[j * K + i]! * a[h * K + i]!;
          y = Math.tanh(y);
          hid[j * H + h] = y;
          z += u[h]! * y;
        }
        s[j] = z;
        max = Math.max(max, z);
      }
      const { all, okSum } = softmaxMass(s, r, max);
      for (let j = 0; j < r.n; j++) {
        const g = (s[j]! / all - (r.ok[j] ? s[j]! / okSum : 0)) / usable.length;
        if (g === 0) continue;
        for (let i = 0; i < K; i++) gw[i]! += g * r.x[j * K + i]!;
        for (let h = 0; h < H; h++) {
          const y = hid[j * H + h]!;
          gu[h]! += g * y;
          const gy = g * u[h]! * (1 - y * y);
          gc[h]! += gy;
          for (let i = 0; i < K; i++) ga[h * K + i]! += gy * r.x[j * K + i]!;
        }
      }
    }
    params.forEach((p, pi) => {
      for (let i = 0; i < p.length; i++) {
        if (pi === 0 && !on[i]) continue;
        if (pi === 1 && !on[i % K]) continue;
        const g = grads[pi]![i]!;
        m[pi]![i] = 0.9 * m[pi]![i]! + 0.1 * g;
        v[pi]![i] = 0.999 * v[pi]![i]! + 0.001 * g * g;
        p[i]! -= (rate * (m[pi]![i]! / (1 - 0.9 ** t))) / (Math.sqrt(v[pi]![i]! / (1 - 0.999 ** t)) + 1e-8);
      }
    });
  }
  const score: Scorer = (r, j) => {
    let z = 0;
    for (let i = 0; i < K; i++) z += r.x[j * K + i]! * w[i]!;
    for (let h = 0; h < H; h++) {
      let y = c[h]!;
      for (let i = 0; i < K; i++) y += r.x[j * K + i]! * a[h * K + i]!;
      z += u[h]! * Math.tanh(y);
    }
    return z;
  };
  return { score, w, a, c, u };
}

export function topOf(row: Row, score: Scorer) {
  let top = -1;
  let topScore = -Infinity;
  for (let j = 0; j < row.n; j++) {
    const s = score(row, j);
    if (s > topScore) [top, topScore] = [j, s];
  }
  return { ok: top >= 0 && row.ok[top] === 1, score: topScore, top };
}

/** Exponentiates a question's candidate scores in place (shifted by their max); their total, and the answering ones' part of it. */
function softmaxMass(s: Float64Array, r: { n: number; ok: ArrayLike<boolean | number> }, max: number): { all: number; okSum: number } {
  let all = 0;
  let okSum = 0;
  for (let j = 0; j < r.n; j++) {
    s[j] = Math.exp(s[j]! - max);
    all += s[j]!;
    if (r.ok[j]) okSum += s[j]!;
  }
  return { all, okSum };
}
