/**
 * Why a document could not be turned into text. Upload routes map `unsupported_format` to 415 and
 * the rest to 422; `message` is written for the person who uploaded the file.
 */
export type DocumentParseErrorCode = 'unsupported_format' | 'invalid_document' | 'encrypted' | 'empty';

export class DocumentParseError extends Error {
  override readonly name = 'DocumentParseError';

  constructor(
    readonly code: DocumentParseErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
