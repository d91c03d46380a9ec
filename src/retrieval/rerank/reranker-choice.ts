// The names are declared in src/config, under the features, which checks RERANKER_DEFAULT against them.
export { RERANKERS, type RerankerChoice } from '../../config/reranker-choice.js';
