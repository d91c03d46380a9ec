/** Postings were written by one analyzer and are about to be written or queried with another. */
export class AnalyzerMismatchError extends Error {
  constructor(
    readonly stored: string,
    readonly configured: string,
    remedy = 'Re-ingest the documents (delete and add them again) to index them with the configured analyzer.',
  ) {
    super(`The BM25 index was built with analyzer "${stored}", but the configured analyzer is "${configured}". ${remedy}`);
    this.name = 'AnalyzerMismatchError';
  }
}
